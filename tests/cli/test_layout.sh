#!/usr/bin/env bash
# test_layout.sh — no arrow runs back up: each folder of the code includes only the floors below it (README.md's
# "Layout"; each folder's README.md says what it may include). Floors, lowest first: engine, strategies, study,
# report, bench, tools. Every #include "..." of a .c/.h/.cu/.cuh file is resolved as the compiler does (beside the
# file, then from the repository root) and its floor compared with the file's. Negative controls: a copy of the tree
# with one bad include planted per rule must be refused, naming the file and the include.
set -u
ROOT=$(cd "$2" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
check() {   # check "<what>" <condition exit status>
    if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi
}

FLOORS="engine strategies study report bench tools"

# violations DIR: one line `FILE: #include "X" (floor A includes floor B)` per arrow that runs up in the tree at DIR.
# An include is resolved beside the file, then from the root, among the floors' files; one found in neither
# (generated, like git_version.h, or a system header in quotes) is not checked.
violations() {
    (cd "$1" && find $FLOORS -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) 2>/dev/null |
        sort | awk -v floors="$FLOORS" '
        function norm(p,    n, i, k, part, out) {
            n = split(p, part, "/"); k = 0
            for (i = 1; i <= n; i++) {
                if (part[i] == "." || part[i] == "") continue
                if (part[i] == "..") { if (k > 0) k--; else return "" ; continue }
                out[++k] = part[i]
            }
            p = ""
            for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
            return p
        }
        function floor_of(p,    top) { top = p; sub(/\/.*/, "", top); return (top in rank) ? rank[top] : -1 }
        BEGIN { n = split(floors, name, " "); for (i = 1; i <= n; i++) rank[name[i]] = i }
        { files[++nf] = $0; have[$0] = 1 }
        END {
            for (i = 1; i <= nf; i++) {
                f = files[i]; dir = f; sub(/\/[^\/]*$/, "", dir); ff = floor_of(f)
                while ((getline line < f) > 0) {
                    if (line !~ /^[ \t]*#[ \t]*include[ \t]*"/) continue
                    inc = line; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
                    t = norm(dir "/" inc)
                    if (!(t in have)) t = norm(inc)
                    if (!(t in have)) continue
                    tf = floor_of(t)
                    if (tf > ff) printf "%s: #include \"%s\" (%s includes %s)\n", f, inc, name[ff], name[tf]
                }
                close(f)
            }
        }')
}

# The tree as it is.
violations "$ROOT" >"$tmp/found"
[ -s "$tmp/found" ] && cat "$tmp/found"
check "no arrow runs back up in the checkout" "$( [ ! -s "$tmp/found" ]; echo $?)"
# Every floor is there: a renamed folder would make the check vacuous.
for f in $FLOORS; do check "floor $f exists" "$( [ -d "$ROOT/$f" ]; echo $?)"; done

# Negative controls: one planted include per rule, in a copy of the code.
copy=$tmp/tree
mkdir -p "$copy"
for f in $FLOORS; do cp -r "$ROOT/$f" "$copy/"; done
plant() {   # plant FILE INCLUDE: FILE (in the copy) gains the include; the check must name exactly it
    local file=$1 inc=$2
    cp "$copy/$file" "$tmp/saved"
    printf '#include "%s"\n' "$inc" >>"$copy/$file"
    violations "$copy" >"$tmp/planted"
    check "planted $file -> $inc is caught" "$(grep -qF "$file: #include \"$inc\"" "$tmp/planted" &&
        [ "$(wc -l <"$tmp/planted")" -eq 1 ]; echo $?)"
    cp "$tmp/saved" "$copy/$file"
}
plant engine/model.c ../strategies/strategy.h           # engine -> strategies
plant engine/errmsg.h ../study/schema.h                  # engine -> study
plant engine/layers/conv.cu ../../bench/options.h        # engine (a subfolder) -> bench
plant engine/idx.c report/report.h                       # engine -> report, from the root
plant strategies/dp.c ../study/schema.h                  # strategies -> study
plant study/schema.c ../bench/options.h                  # study -> bench
plant study/runs.h ../report/answer.h                    # study -> report
plant study/table.h ../report/report.h                  # the loaded study's run table -> report
plant study/mem.c ../bench/run.h                          # study's memory -> bench
plant report/report.c ../bench/run.h                     # report -> bench
plant bench/options.c ../tools/probe_conv.c              # the product -> a tool
# A planted include of a floor below is no violation.
printf '#include "%s"\n' ../engine/errmsg.h >>"$copy/report/report.c"
violations "$copy" >"$tmp/planted"
check "report -> engine is allowed" "$( [ ! -s "$tmp/planted" ]; echo $?)"

# A name list that has its table is written nowhere else: a second copy of its names (two of them in a row, as a
# list or a header is written) in the code outside the table's file is refused. Each line: the table's file, then
# the pattern (grep -E) a copy would match.
LISTS='engine/model_info.h "lenet",[[:space:]]*"resnet18"
engine/dtype.h "fp32",[[:space:]]*"bf16",[[:space:]]*"fp16"
strategies/pipeline/pipe_schedule.h "gpipe",[[:space:]]*"1f1b"
study/allreduce.h strategy,gpus,algo,size_bytes
study/key.h "strategy",[[:space:]]*"model",[[:space:]]*"dataset",[[:space:]]*"seed"'
copies() {   # copies DIR: "FILE: TABLE" for each list copy found in DIR's code outside its table's file
    local dir=$1 table pat
    while read -r table pat; do
        (cd "$dir" && grep -rlE --include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' -- "$pat" \
            $FLOORS 2>/dev/null) | grep -vxF "$table" | sed "s|\$|: $table|"
    done <<<"$LISTS"
}
copies "$ROOT" >"$tmp/copies"
check "no name list written twice (each one's table: $(cut -d' ' -f1 <<<"$LISTS" | tr '\n' ' '))" \
    "$( [ ! -s "$tmp/copies" ]; echo $?)"
[ -s "$tmp/copies" ] && cat "$tmp/copies" >&2
# Negative control: a copy of the model names planted in bench/ is caught.
printf 'static const char *const m[] = {"lenet", "resnet18", NULL};\n' >>"$copy/bench/options.c"
copies "$copy" >"$tmp/planted"
check "a planted copy of the model names is caught" "$(grep -qxF "bench/options.c: engine/model_info.h" \
    "$tmp/planted"; echo $?)"

echo "test_layout: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
