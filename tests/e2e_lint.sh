#!/bin/sh
# e2e_lint.sh: tools/lint.sh passes on the tree (its open violations in tools/lint_allow.txt), and
# the checker itself catches what it is for, on a small planted tree built here: a function of
# 151 lines (a multi-line signature, braces in strings, characters and comments) but not one of
# 150 nor a long data table, a call cycle between two files (with the symbols that close it), an
# op-name strcmp in engine/src/sim but not a comparison of other names; the allowlist's globs
# let a violation pass and an entry that matches nothing is noted.
. tests/lib.sh
B=${BUILD:-build}
if sh tools/lint.sh "$B" >"$TMP/out" 2>"$TMP/err"; then pass; else fail "lint: $(cat "$TMP/err")"; fi
contains "$TMP/out" "lint: clean"

R=$TMP/tree
mkdir -p "$R/engine/src/core" "$R/engine/src/sim" "$R/engine/src/ops" "$R/cli" "$R/tools" \
         "$R/build/engine/src/core" "$R/build/engine/src/sim" "$R/build/cli"
cp tools/lint.sh tools/check_layers.sh "$R/tools/"
cp engine/src/ops/registry.c "$R/engine/src/ops/"
# two files that call each other
printf 'int lint_b(int x);\nint lint_a(int x);\nint lint_a(int x) { return x ? lint_b(x - 1) : 0; }\n' \
    >"$R/engine/src/core/lint_a.c"
printf 'int lint_a(int x);\nint lint_b(int x);\nint lint_b(int x) { return x ? lint_a(x - 1) : 1; }\n' \
    >"$R/engine/src/core/lint_b.c"
# body(N): a function of N lines from its two-line signature to its closing brace, with braces
# in a string, a character, a comment and a nested block; then a 200-line table
body() {
    awk -v name="$1" -v n="$2" 'BEGIN {
        print "int " name "(int x,"; print "        int y) {"
        print "    const char *s = \"}}{\"; char c = 0x7d; /* } */ (void)s; (void)c;"
        print "    if (x) {"; print "        y++;"; print "    }"
        for (i = 7; i < n; i++) print "    y += x; // }"
        print "}"
    }'
}
{
    body lint_long 151
    body lint_ok 150
    echo "static const int table[] = {"
    awk 'BEGIN { for (i = 0; i < 200; i++) print "    " i "," }'
    echo "};"
    echo "int lint_table(void) { return table[0]; }"
} >"$R/cli/cmd_lint.c"
printf '%s\n' '#include <string.h>' 'struct n { const char *op, *name; };' \
    'int lint_conv(const struct n *n);' \
    'int lint_conv(const struct n *n) {' \
    '    if (!strcmp(n->name, "model_a")) return 2;' \
    '    return !strcmp(n->op, "Conv2D");' '}' >"$R/engine/src/sim/lint_sim.c"
for f in engine/src/core/lint_a engine/src/core/lint_b engine/src/sim/lint_sim cli/cmd_lint; do
    cc -std=c11 -c "$R/$f.c" -o "$R/build/$f.o" || fail "cc $f.c"
done
: >"$R/tools/lint_allow.txt"
if (cd "$R" && sh tools/lint.sh build) >"$TMP/out" 2>"$TMP/err"; then
    fail "the planted violations passed lint"
else
    contains "$TMP/err" "lint: long cli/cmd_lint.c:lint_long: 151 lines (from line 1; at most 150)"
    contains "$TMP/err" "lint: cycle engine/src/core/lint_a.c engine/src/core/lint_b.c: engine/src/core/lint_a.c -> engine/src/core/lint_b.c (lint_b), engine/src/core/lint_b.c -> engine/src/core/lint_a.c (lint_a)"
    contains "$TMP/err" "lint: opname-strcmp engine/src/sim/lint_sim.c:6: compares"
    contains "$TMP/err" "lint: 3 violation(s) not in"
    if grep -q "lint_ok\|lint_table\|lint_sim.c:5" "$TMP/err"; then
        fail "lint flagged a function of 150 lines, a table or a name comparison: $(cat "$TMP/err")"
    else pass; fi
fi
# allowed by glob: passes, shows them as allowed, and notes an entry that matches nothing
printf '%s\n' 'long cli/cmd_lint.c:*   # a test' 'cycle engine/src/core/*' \
    'opname-strcmp engine/src/sim/*' 'long engine/src/gone.c:f  # stale' >"$R/tools/lint_allow.txt"
if (cd "$R" && sh tools/lint.sh build) >"$TMP/out" 2>"$TMP/err"; then
    contains "$TMP/out" "lint: allowed: long cli/cmd_lint.c:lint_long"
    contains "$TMP/out" "lint: note: allowlist entry \"long engine/src/gone.c:f\" matches nothing now"
    contains "$TMP/out" "lint: clean (3 allowed violation(s)"
else
    fail "allowlisted violations failed lint: $(cat "$TMP/err")"
fi
finish
