#!/bin/sh
# e2e_help.sh: help where people look for it. Every command and sub-command answers --help and -h
# with every option of the table its parser reads (the table dumped by `driple --options-dump`),
# and no option in its help that the table lacks; `driple help X` is `driple X --help`; every row
# of a table is read by its command (DRIPLE_CHECK_OPTS); unknown options name the near ones;
# --version, the man page, the bash completion and `make install` into a temporary prefix.
. tests/lib.sh
BUILD=${BUILD:-build}
ok "$DRIPLE" --options-dump
cp "$TMP/out" "$TMP/dump"
cut -f1 "$TMP/dump" | uniq >"$TMP/ways"
n_ways=$(wc -l <"$TMP/ways")
[ "$n_ways" -ge 30 ] && pass || fail "only $n_ways commands in the dump"
while read -r words; do
    # shellcheck disable=SC2086 # the words are split on purpose
    set -- $words
    "$DRIPLE" "$@" --help >"$TMP/help" 2>"$TMP/err"
    rc=$?
    [ $rc -eq 0 ] && pass || fail "driple $words --help: exit $rc :: $(head -c 300 "$TMP/err")"
    "$DRIPLE" "$@" -h >"$TMP/h" 2>&1
    cmp -s "$TMP/help" "$TMP/h" && pass || fail "driple $words -h differs from --help"
    contains "$TMP/help" "exit status: 0 ok, 1 a runtime failure"
    # each row of the table, with its value's name, in the help
    awk -F'\t' -v w="$words" '$1 == w && $2 != "" { print $2 ($3 != "" ? " " $3 : "") }' \
        "$TMP/dump" >"$TMP/rows"
    while read -r row; do
        grep -qF -- "  $row " "$TMP/help" && pass || fail "driple $words --help lacks '$row'"
    done <"$TMP/rows"
    # and no option in the help's option list that the table lacks
    sed -n '/^options:/,/^$/p' "$TMP/help" | grep -E '^  -' | awk '{print $1}' |
        grep -v -e '^-h,$' >"$TMP/listed"
    awk -F'\t' -v w="$words" '$1 == w && $2 != "" { print $2 }' "$TMP/dump" | sort >"$TMP/names"
    sort "$TMP/listed" | cmp -s - "$TMP/names" && pass ||
        fail "driple $words --help lists other options than its table"
    # a table's names are unique
    [ -z "$(uniq -d "$TMP/names")" ] && pass || fail "driple $words: $(uniq -d "$TMP/names") twice"
    # `driple help X [SUB]` is `driple X [SUB] --help` (variants an option selects excepted)
    case "$2" in
    -*) ;;
    *)
        "$DRIPLE" help "$@" >"$TMP/h" 2>&1
        cmp -s "$TMP/help" "$TMP/h" && pass || fail "driple help $words differs from --help" ;;
    esac
    # every row is read by the command (two arguments that are not files stop it early); the
    # explorer is left out: without arguments it is the terminal UI
    [ "$1" = explore ] && continue
    DRIPLE_CHECK_OPTS=1 timeout 60 "$DRIPLE" "$@" /nonexistent/a.json /nonexistent/b.json \
        </dev/null >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if grep -q "internal error" "$TMP/err" || [ $rc -ge 124 ]; then
        fail "driple $words (DRIPLE_CHECK_OPTS): exit $rc :: $(grep 'internal' "$TMP/err" | head -3)"
    else pass; fi
done <"$TMP/ways"
# a command with sub-commands lists them
ok "$DRIPLE" graph --help
for s in info import coarsen weights; do contains "$TMP/out" "  $s "; done
"$DRIPLE" help graph >"$TMP/h" 2>&1
cmp -s "$TMP/out" "$TMP/h" && pass || fail "driple help graph differs from driple graph --help"
ok "$DRIPLE" help
contains "$TMP/out" "  predict "
fails 2 "help: unknown command 'nosuch'" "$DRIPLE" help nosuch
# an unknown option is a usage error naming the near ones, before any work
fails 2 "unknown option '--bach' (did you mean --batch?" "$DRIPLE" predict g.json --bach 3
fails 2 "unknown option '--workrs' (did you mean --workers?" "$DRIPLE" simulate zoo:resnet50 --workrs 2
fails 2 "unknown option '--frobnicate' (see 'driple graph info --help')" "$DRIPLE" graph info --frobnicate
fails 2 "unknown option '--no-colour' (did you mean --no-color?" "$DRIPLE" explore --no-colour
# a value that looks like an option is still the value
fails 1 "/nonexistent/t.csv" "$DRIPLE" trace extract /nonexistent/t.csv --gpu -1
# the defaults and ranges the help states are the parser's: --workers [1, 64]
ok "$DRIPLE" predict --help
contains "$TMP/out" "--workers N"
contains "$TMP/out" "(1 .. 64)"
contains "$TMP/out" "--groups K"
contains "$TMP/out" "(default 100; 1 .. 100000)"
fails 2 "--workers '4097': expected an integer in [1, 4096]" "$DRIPLE" predict g.json --gpu V100-PCIe-16GB --workers 4097 --ps 1 --network PCIe
# --version: the VERSION file's
ok "$DRIPLE" --version
contains "$TMP/out" "driple $(cat VERSION)"
# the man page: every command, roff that groff reads without warnings
ok "$DRIPLE" --man
cp "$TMP/out" "$TMP/driple.1"
for c in predict compare "graph info" "dataset build" "bench coarsen" "EXIT STATUS"; do
    contains "$TMP/driple.1" "$c"
done
if command -v groff >/dev/null 2>&1; then
    groff -man -Tutf8 -ww -z "$TMP/driple.1" 2>"$TMP/groff" && [ ! -s "$TMP/groff" ] && pass ||
        fail "groff warns on driple.1: $(head -c 300 "$TMP/groff")"
fi
# the completion: valid bash that completes options and sub-commands
ok "$DRIPLE" --completion bash
cp "$TMP/out" "$TMP/driple.bash"
bash -n "$TMP/driple.bash" && pass || fail "the completion script is not valid bash"
cat >"$TMP/complete.sh" <<'EOS'
. "$1"
COMP_WORDS=(driple predict --ba); COMP_CWORD=2; _driple; echo "${COMPREPLY[*]}"
COMP_WORDS=(driple graph i); COMP_CWORD=2; _driple; echo "${COMPREPLY[*]}"
COMP_WORDS=(driple graph coarsen --gr); COMP_CWORD=3; _driple; echo "${COMPREPLY[*]}"
COMP_WORDS=(driple sim); COMP_CWORD=1; _driple; echo "${COMPREPLY[*]}"
EOS
bash "$TMP/complete.sh" "$TMP/driple.bash" >"$TMP/completed" 2>&1
contains "$TMP/completed" "--batch"
contains "$TMP/completed" "info import"
contains "$TMP/completed" "--groups"
contains "$TMP/completed" "simulate"
fails 2 "--completion: expected 'bash'" "$DRIPLE" --completion zsh
# docs/cli.md's option lists are the tables' (tools/cli_doc.sh regenerates them)
sh tools/cli_doc.sh "$DRIPLE" docs/cli.md >"$TMP/cli.md"
cmp -s "$TMP/cli.md" docs/cli.md && pass ||
    fail "docs/cli.md is not current: sh tools/cli_doc.sh $DRIPLE >docs/cli.md.new && mv docs/cli.md.new docs/cli.md"
# make install PREFIX=...: the binary, the man page, the completion, and the files it ships,
# found from another directory
if command -v make >/dev/null 2>&1 && [ -f "$BUILD/driple" ]; then
    ok make -s BUILD="$BUILD" install PREFIX="$TMP/prefix"
    for f in bin/driple share/man/man1/driple.1 share/bash-completion/completions/driple \
        share/driple/assets/gpus.json share/driple/samples/graphs/resnet50.json; do
        [ -f "$TMP/prefix/$f" ] && pass || fail "make install left out $f"
    done
    (cd "$TMP" && env -u DRIPLE_ASSETS -u DRIPLE_HOME "$TMP/prefix/bin/driple" predict \
        "$TMP/prefix/share/driple/samples/graphs/resnet50.json" --setting V100-P1w2ho-PCIe \
        --json >"$TMP/installed" 2>"$TMP/err") && pass ||
        fail "the installed driple: $(head -c 300 "$TMP/err")"
    contains "$TMP/installed" '"metrics"'
fi
finish
