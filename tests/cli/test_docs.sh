#!/usr/bin/env bash
# test_docs.sh — the README and doc/ pages hold together, without a GPU (CI): every relative link in README.md and
# doc/*.md names a file in the checkout (and, with #anchor, a heading of that page), no paragraph is over 120 words,
# every CSV column of RESULTS_SCHEMA (study/schema.h) is in doc/csv.md and every option of the command's option
# table (its --help) in doc/cli.md. A negative control of each kind must be caught.
set -u
bin=$1
ROOT=$(cd "$2" && pwd)
source "$(dirname "$0")/lib.sh"

# Pages other work adds beside this one: links to them are allowed before they exist.
ALLOWED_MISSING="doc/files.md doc/faults.md doc/report.md"

# scan FILE: one line per fact, outside fenced code blocks:
#   LINK <line> <target>      every [text](target) and ![alt](target) that is not a URL
#   HEAD <slug>               every heading, as GitHub makes its anchor
#   PARA <line> <words>       every paragraph (a list item or a run of text lines; tables and headings apart)
scan() {
    awk '
    function flush() { if (words > 0) print "PARA", start, words; words = 0 }
    /^[ \t]*```/ { flush(); fenced = !fenced; next }
    fenced { next }
    /^[ \t]*$/ { flush(); next }
    /^#+ / {
        flush()
        h = $0; sub(/^#+ +/, "", h); h = tolower(h)
        gsub(/[^a-z0-9 _-]/, "", h); gsub(/ /, "-", h)
        print "HEAD", h
        next
    }
    /^[ \t]*\|/ { flush() }
    /^[ \t]*([-*]|[0-9]+\.) / { flush() }
    {
        if (!/^[ \t]*\|/) { if (words == 0) start = NR; words += NF - (/^[ \t]*([-*]|[0-9]+\.) / ? 1 : 0) }
        s = $0
        while (match(s, /\]\([^) \t]+\)/)) {
            t = substr(s, RSTART + 2, RLENGTH - 3)
            s = substr(s, RSTART + RLENGTH)
            if (t !~ /^(https?:|mailto:)/) print "LINK", NR, t
        }
    }
    END { flush() }' "$1"
}

# check_tree DIR: every problem of DIR/README.md and DIR/doc/*.md on stdout, one line each.
check_tree() {
    local dir=$1 page target path anchor
    for page in "$dir/README.md" "$dir"/doc/*.md; do
        [ -f "$page" ] || continue
        local rel=${page#"$dir"/}
        scan "$page" >"$tmp/scan"
        awk -v f="$rel" '$1 == "PARA" && $3 > 120 { print f ":" $2 ": paragraph of " $3 " words (at most 120)" }' \
            "$tmp/scan"
        while read -r _ line target; do
            path=${target%%#*}; anchor=
            [ "$path" != "$target" ] && anchor=${target#*#}
            if [ -z "$path" ]; then
                path=$rel
            else
                path=$(realpath -m --relative-to="$dir" "$(dirname "$page")/$path")
            fi
            if [ ! -e "$dir/$path" ]; then
                case " $ALLOWED_MISSING " in *" $path "*) continue ;; esac
                echo "$rel:$line: link to $target: no file $path"
            elif [ -n "$anchor" ] && [ "${path##*.}" = md ] &&
                 ! scan "$dir/$path" | awk -v a="$anchor" '$1 == "HEAD" && $2 == a { found = 1 } END { exit !found }'; then
                echo "$rel:$line: link to $target: no heading #$anchor in $path"
            fi
        done < <(grep '^LINK ' "$tmp/scan")
    done
}

# ---- the checkout itself
check_tree "$ROOT" >"$tmp/problems"
cat "$tmp/problems"
check "README.md and doc/*.md: every link resolves, no paragraph over 120 words" $([ ! -s "$tmp/problems" ]; echo $?)
check "README.md is at most 150 lines ($(wc -l <"$ROOT/README.md"))" $([ "$(wc -l <"$ROOT/README.md")" -le 150 ]; echo $?)
n=$(grep -c '](' "$ROOT/README.md")
check "README.md has links to check ($n)" $([ "$n" -ge 10 ]; echo $?)

# ---- negative controls: a tree with one fault of each kind, and the same tree mended
neg=$tmp/neg; mkdir -p "$neg/doc" "$neg/results/x"
touch "$neg/results/x/fig.png"
long=$(for i in $(seq 121); do printf 'word '; done)
cat >"$neg/README.md" <<EOF
# Title

![a figure](results/x/fig.png) and [a page](doc/a.md#the-options-list) and [later](doc/faults.md).
See [gone](doc/gone.md), [a heading](doc/a.md#no-such-heading) and [http](https://example.com/x.md).

\`\`\`sh
[not a link](inside/a/code/block.md)
\`\`\`
EOF
cat >"$neg/doc/a.md" <<EOF
# Page a

## The \`options\` list

- $long
- short item, [back](../README.md#title)
EOF
check_tree "$neg" >"$tmp/neg_problems"
grep -q 'README.md:4: link to doc/gone.md: no file doc/gone.md' "$tmp/neg_problems"
check "a link to a missing file is caught" $?
grep -q 'README.md:4: link to doc/a.md#no-such-heading: no heading #no-such-heading in doc/a.md' "$tmp/neg_problems"
check "a link to a missing heading is caught" $?
grep -q 'doc/a.md:5: paragraph of 121 words' "$tmp/neg_problems"
check "a paragraph of 121 words is caught" $?
check "nothing else is reported (got $(wc -l <"$tmp/neg_problems") lines)" $([ "$(wc -l <"$tmp/neg_problems")" -eq 3 ]; echo $?)
sed -i 's|\[gone\](doc/gone.md), \[a heading\](doc/a.md#no-such-heading)|[a heading](doc/a.md#page-a)|' "$neg/README.md"
sed -i "s/^- $long/- $(for i in $(seq 120); do printf 'word '; done)/" "$neg/doc/a.md"
check_tree "$neg" >"$tmp/neg_problems"
cat "$tmp/neg_problems"
check "the mended tree passes (120 words is allowed)" $([ ! -s "$tmp/neg_problems" ]; echo $?)

# ---- the reference names every column and every option
columns() { sed -n 's/^[[:space:]]*X(\([a-z0-9_]*\),.*/\1/p' "$1"; }     # RESULTS_SCHEMA's names, in order
options() { "$bin" --help | sed -n 's/^ *\(-[a-zA-Z], \)\{0,1\}\(--[a-z0-9-]*\).*/\2/p'; }   # the table's
undocumented() {   # undocumented PAGE < NAMES: each name the page never writes in backquotes (`name` or `--opt ARG`)
    while read -r n; do grep -qE "\`$n(\`| |=)" "$1" || echo "$n"; done
}
columns "$ROOT/study/schema.h" >"$tmp/columns"
options >"$tmp/options"
check "RESULTS_SCHEMA has columns to check ($(wc -l <"$tmp/columns"))" $([ "$(wc -l <"$tmp/columns")" -ge 50 ]; echo $?)
check "the option table has options to check ($(wc -l <"$tmp/options"))" $([ "$(wc -l <"$tmp/options")" -ge 30 ]; echo $?)
undocumented "$ROOT/doc/csv.md" <"$tmp/columns" >"$tmp/missing"
sed 's/^/doc\/csv.md lacks the column /' "$tmp/missing"
check "doc/csv.md names every CSV column" $([ ! -s "$tmp/missing" ]; echo $?)
undocumented "$ROOT/doc/cli.md" <"$tmp/options" >"$tmp/missing"
sed 's/^/doc\/cli.md lacks the option /' "$tmp/missing"
check "doc/cli.md names every option" $([ ! -s "$tmp/missing" ]; echo $?)
# Negative controls: a page with one column's and one option's mentions taken out, and a name no page has.
grep -v '`timeout_s`' "$ROOT/doc/csv.md" >"$tmp/csv.md"
check "a column missing from doc/csv.md is caught" \
    $([ "$(undocumented "$tmp/csv.md" <"$tmp/columns")" = timeout_s ]; echo $?)
grep -v '`--retry-failed' "$ROOT/doc/cli.md" >"$tmp/cli.md"
check "an option missing from doc/cli.md is caught" \
    $([ "$(undocumented "$tmp/cli.md" <"$tmp/options")" = --retry-failed ]; echo $?)
check "a prefix is not a mention (--retry for --retry-failed, time for timeout_s)" \
    $([ "$(printf -- '--retry\ntime\n' | undocumented "$ROOT/doc/cli.md")" = "$(printf -- '--retry\ntime')" ]; echo $?)

# ---- doc/cli.md's table of environment variables names every variable the code reads
envvars() {     # every SCALING_*, NCCL_*, launcher and CUDA variable named in a C string of the product's code
    grep -rohE '"(SCALING|NCCL|OMPI|SLURM|PMIX?|MPI|CUDA)_[A-Z0-9_]+"' "$ROOT"/{bench,engine,strategies,study,report} \
        --include=*.c --include=*.h --include=*.cu | tr -d '"' | sort -u
}
env_table() { awk '/^## / { on = ($0 == "## Environment variables") } on' "$1"; }
envvars >"$tmp/envvars"
env_table "$ROOT/doc/cli.md" >"$tmp/env.md"
check "the code reads variables to check ($(wc -l <"$tmp/envvars"))" $([ "$(wc -l <"$tmp/envvars")" -ge 20 ]; echo $?)
undocumented "$tmp/env.md" <"$tmp/envvars" >"$tmp/missing"
sed 's/^/doc\/cli.md'"'"'s environment table lacks /' "$tmp/missing"
check "doc/cli.md's environment table names every variable the code reads" $([ ! -s "$tmp/missing" ]; echo $?)
grep -v '`SCALING_NODE_ID`' "$tmp/env.md" >"$tmp/env2.md"
check "a variable missing from the table is caught" \
    $([ "$(undocumented "$tmp/env2.md" <"$tmp/envvars")" = SCALING_NODE_ID ]; echo $?)

# ---- doc/csv.md's table of statuses is study_status_names, no more and no fewer
statuses() {   # the quoted names of study_status_names' initializer
    awk '/study_status_names\[RUN_STATUSES \+ 1\] = \{/ { on = 1 } on { print } on && /};/ { exit }' "$1" |
        grep -o '"[a-z-]*"' | tr -d '"' | sort
}
doc_statuses() {   # the first cell of each row of the table under "## Statuses"
    awk '/^## / { on = ($0 == "## Statuses") } on && /^\| `[a-z-]*` \|/ { print }' "$1" |
        sed 's/^| `\([a-z-]*\)`.*/\1/' | sort
}
statuses "$ROOT/study/schema.c" >"$tmp/statuses"
check "study_status_names has statuses to check ($(wc -l <"$tmp/statuses"))" $([ "$(wc -l <"$tmp/statuses")" -ge 7 ]; echo $?)
doc_statuses "$ROOT/doc/csv.md" >"$tmp/doc_statuses"
diff "$tmp/statuses" "$tmp/doc_statuses" | sed -n 's/^< /doc\/csv.md lacks the status /p; s/^> /doc\/csv.md has a status the code lacks: /p'
check "doc/csv.md's table of statuses is study_status_names" $(cmp -s "$tmp/statuses" "$tmp/doc_statuses"; echo $?)
# Negative controls: a status taken out of the table, and one the code does not have added to it.
grep -v '^| `timeout` |' "$ROOT/doc/csv.md" >"$tmp/csv.md"
check "a status missing from doc/csv.md is caught" \
    $([ "$(diff "$tmp/statuses" <(doc_statuses "$tmp/csv.md") | grep -c '^[<>]')" -eq 1 ]; echo $?)
sed 's/^| `ok` |/| `ok` | x |\n| `paused` |/' "$ROOT/doc/csv.md" >"$tmp/csv.md"
check "a status the code lacks is caught" \
    $(diff "$tmp/statuses" <(doc_statuses "$tmp/csv.md") | grep -qx '> paused'; echo $?)

summary
