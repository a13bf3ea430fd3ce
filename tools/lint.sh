#!/bin/sh
# lint.sh: the structure rules of driple's sources, checked by `make lint` (part of `make test`);
# by hand: sh tools/lint.sh [BUILD]   (BUILD: the build directory whose objects it reads)
# (a) no function over 150 lines in engine/, cli/, tui/ (from the line its definition starts,
#     a multi-line signature included, to its closing brace, braces matched outside comments,
#     strings and character literals; data tables are not functions and are not counted);
# (b) no cycle between source files, within a subsystem or between subsystems: the file-level
#     graph of which object uses a symbol another defines (nm on BUILD's objects), its strongly
#     connected components reported with one symbol per edge;
# (c) no op-name comparison (strcmp, strncmp, strstr on an op type) in engine/src/sim or
#     engine/src/tfgraph: they ask the op registry (dp/ops.h);
# (d) tools/check_layers.sh's layer rules.
# Each violation prints one line "lint: KEY: details"; KEYs that match a pattern (shell glob) of
# tools/lint_allow.txt are shown as "allowed" and do not fail (each entry names the issue and the
# owner who removes it; the goal is an empty list). Exits 1 when a violation is not allowed.
# LINT_ROOT (default .) is the tree checked, LINT_ALLOW the allowlist (tests plant violations in
# a copy).
BUILD=${1:-${BUILD:-build}}
ROOT=${LINT_ROOT:-.}
ALLOW=${LINT_ALLOW:-$ROOT/tools/lint_allow.txt}
MAX_LINES=150
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
: >"$T/found"

# ---- (a) function lengths ----
# One awk pass per file: blanks out comments, strings and character literals (keeping newlines),
# skips preprocessor lines (with their continuations), and at brace depth 0 takes a '{' after a
# text that ends in ')' with no '=' outside parentheses as a function body (an initializer or a
# struct, enum or union body is not). Prints "FILE LINES NAME START" per function.
func_lengths() {
    awk '
    FNR == 1 { file = FILENAME; depth = 0; text = ""; start = 0; in_c = 0; pp = 0 }
    {
        line = $0
        if (!in_c && (pp || line ~ /^[ \t]*#/)) { pp = (line ~ /\\$/); next }
        out = ""; n = length(line); i = 1
        while (i <= n) {
            c = substr(line, i, 1); c2 = substr(line, i, 2)
            if (in_c) { if (c2 == "*/") { in_c = 0; i += 2 } else i++; continue }
            if (c2 == "/*") { in_c = 1; i += 2; out = out " "; continue }
            if (c2 == "//") break
            if (c == "\"" || c == "\047") {
                q = c; i++
                while (i <= n) { d = substr(line, i, 1); if (d == "\\") { i += 2; continue }
                                 i++; if (d == q) break }
                out = out q q; continue
            }
            out = out c; i++
        }
        n = length(out)
        for (i = 1; i <= n; i++) {
            c = substr(out, i, 1)
            if (depth == 0) {
                if (c == "{") {
                    t = text; gsub(/[ \t]+$/, "", t)
                    fn = ""
                    if (t ~ /\)$/) {
                        flat = t; pd = 0; eq = 0
                        for (k = 1; k <= length(flat); k++) {
                            e = substr(flat, k, 1)
                            if (e == "(") pd++; else if (e == ")") pd--
                            else if (e == "=" && pd == 0) eq = 1
                        }
                        if (!eq && match(t, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)) {
                            fn = substr(t, RSTART, RLENGTH); sub(/[ \t]*\($/, "", fn)
                        }
                    }
                    fname = fn; fstart = start ? start : FNR; depth = 1; text = ""; start = 0
                    continue
                }
                if (c == ";" || c == "}") { text = ""; start = 0; continue }
                if (c !~ /[ \t]/ && !start) start = FNR
                text = text c
            } else if (c == "{") depth++
            else if (c == "}") {
                if (--depth == 0 && fname != "") print file, FNR - fstart + 1, fname, fstart
                if (depth == 0) fname = ""
            }
        }
        if (depth == 0 && start) text = text " "
    }' "$@"
}

files=$(cd "$ROOT" && ls engine/src/*/*.c cli/*.c tui/*.c tui/views/*.c 2>/dev/null)
(cd "$ROOT" && func_lengths $files) >"$T/lengths"
awk -v max=$MAX_LINES '$2 > max { printf "long %s:%s: %d lines (from line %d; at most %d)\n", $1, $3, $2, $4, max }' \
    "$T/lengths" >>"$T/found"

# ---- (b) cycles between source files ----
# Objects whose source exists (a build directory keeps those of removed files); "FILE.c" nodes.
objs=$(for o in "$BUILD"/engine/src/*/*.o "$BUILD"/cli/*.o "$BUILD"/tui/*.o "$BUILD"/tui/views/*.o; do
    s=${o#"$BUILD"/}; [ -f "$ROOT/${s%.o}.c" ] && echo "$o"
done 2>/dev/null)
if [ -z "$objs" ]; then
    echo "lint: no objects under $BUILD (build first)" >&2
    exit 1
fi
nm -A -P $objs 2>/dev/null | awk -v build="$BUILD/" '
    { file = $1; sub(/:$/, "", file); sub(/\.o$/, ".c", file)
      if (index(file, build) == 1) file = substr(file, length(build) + 1)
      sym = $2; type = $3 }
    type ~ /^[TDBRCVGS]$/ { def[sym] = file }
    type == "U" { use[++nu] = file " " sym }
    END {
        for (i = 1; i <= nu; i++) {
            split(use[i], u, " ")
            d = def[u[2]]
            if (d != "" && d != u[1] && !((u[1] " " d) in seen)) { seen[u[1] " " d] = 1; print u[1], d, u[2] }
        }
    }' | sort >"$T/edges"
# Tarjan over "from to via" edges: the strongly connected components of more than one node are
# the cycles, each printed as "<label> <nodes, sorted>: <its edges>" (files=1: each edge as
# "a -> b (symbol)", else the edge's via alone).
tarjan='
    { if (!($1 in k0)) { k0[$1] = 1; node[++nn] = $1 }
      if (!($2 in k0)) { k0[$2] = 1; node[++nn] = $2 }
      adj[$1] = adj[$1] " " $2; via[$1 " " $2] = $3 }
    function strong(v,    k, w, m, a, comp, cnt, j, key, det, e) {
        index_[v] = low[v] = ++counter; stack[++sp] = v; on[v] = 1
        m = split(adj[v], a, " ")
        for (k = 1; k <= m; k++) {
            w = a[k]
            if (!(w in index_)) { strong(w); if (low[w] < low[v]) low[v] = low[w] }
            else if (on[w] && index_[w] < low[v]) low[v] = index_[w]
        }
        if (low[v] == index_[v]) {
            cnt = 0
            do { w = stack[sp--]; on[w] = 0; comp[++cnt] = w } while (w != v)
            if (cnt > 1) {
                for (j = 2; j <= cnt; j++) { key = comp[j]; for (k = j - 1; k >= 1 && comp[k] > key; k--) comp[k + 1] = comp[k]; comp[k + 1] = key }
                key = comp[1]; for (j = 2; j <= cnt; j++) key = key " " comp[j]
                det = ""
                for (j = 1; j <= cnt; j++) for (k = 1; k <= cnt; k++)
                    if ((comp[j] " " comp[k]) in via) {
                        e = via[comp[j] " " comp[k]]
                        if (files) e = comp[j] " -> " comp[k] " (" e ")"
                        det = det (det == "" ? "" : ", ") e
                    }
                print label " " key ": " det
            }
        }
    }
    END { for (i = 1; i <= nn; i++) if (!(node[i] in index_)) strong(node[i]) }'
awk -v label=cycle -v files=1 "$tarjan" "$T/edges" >>"$T/found"
# The same between subsystems (engine/src/<sub>, cli, tui): a cycle of directories.
awk '
    function sub_(f) { if (f ~ /^engine\/src\//) { split(f, p, "/"); return "engine/src/" p[3] }
                       if (f ~ /^tui\//) return "tui"; return "cli" }
    { a = sub_($1); b = sub_($2); if (a != b && !((a " " b) in seen)) { seen[a " " b] = 1; print a, b, $1 "->" $2 } }' \
    "$T/edges" >"$T/subedges"
awk -v label=subsystem-cycle -v files=0 "$tarjan" "$T/subedges" >>"$T/found"

# ---- (c) op-name comparisons in the simulator and the graph builder ----
# A strcmp / strncmp / strstr whose operand is an op type: an identifier `op` (x->op, .op, op)
# or a literal the registry lists or shaped like a TensorFlow op type (CamelCase).
grep -o '[A-Z_]*("[A-Za-z0-9_]*"' "$ROOT/engine/src/ops/registry.c" | sed 's/.*("\(.*\)"/\1/' >"$T/opnames"
for f in $(cd "$ROOT" && ls engine/src/sim/*.c engine/src/tfgraph/*.c 2>/dev/null); do
    awk -v file="$f" -v names="$T/opnames" '
        BEGIN { while ((getline n < names) > 0) op[n] = 1 }
        /str(n?cmp|str)[ \t]*\(/ {
            s = $0; hit = ""
            while (match(s, /str(n?cmp|str)[ \t]*\([^;]*/)) {
                call = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
                if (call ~ /(^|[^A-Za-z0-9_])op([^A-Za-z0-9_]|$)/) hit = "compares op"
                t = call
                while (match(t, /"[^"]*"/)) {
                    lit = substr(t, RSTART + 1, RLENGTH - 2); t = substr(t, RSTART + RLENGTH)
                    if ((lit in op) || lit ~ /^[A-Z][a-z][A-Za-z0-9]*$/) hit = "compares \"" lit "\""
                }
            }
            if (hit != "") printf "opname-strcmp %s:%d: %s (ask the op registry, dp/ops.h)\n", file, FNR, hit
        }' "$ROOT/$f" >>"$T/found"
done

# ---- (d) the layers ----
(cd "$ROOT" && sh tools/check_layers.sh "$BUILD") >/dev/null 2>"$T/layers" ||
    sed 's/^check_layers: /layers /' "$T/layers" | sed 's/^\([^ ]* [^:]*\)$/\1: (check_layers.sh)/' >>"$T/found"

# ---- report, against the allowlist ----
sed -n 's/[ \t]*#.*$//; s/[ \t]*$//; /[^ \t]/p' "$ALLOW" 2>/dev/null >"$T/pats"
bad=0
: >"$T/used"
while IFS= read -r v; do
    key=${v%%: *}
    allowed=""
    while IFS= read -r p; do
        case "$key" in $p) allowed=$p; break ;; esac
    done <"$T/pats"
    if [ -n "$allowed" ]; then
        echo "lint: allowed: $v"
        echo "$allowed" >>"$T/used"
    else
        echo "lint: $v" >&2
        bad=$((bad + 1))
    fi
done <"$T/found"
while IFS= read -r p; do
    grep -qxF -- "$p" "$T/used" ||
        echo "lint: note: allowlist entry \"$p\" matches nothing now: remove it from $ALLOW"
done <"$T/pats"
n=$(wc -l <"$T/found")
if [ "$bad" -gt 0 ]; then
    echo "lint: $bad violation(s) not in $ALLOW ($n found)" >&2
    exit 1
fi
echo "lint: clean ($n allowed violation(s) in $ALLOW)"
