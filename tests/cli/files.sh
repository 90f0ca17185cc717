#!/usr/bin/env bash
# files.sh — no file is ever clobbered (doc/files.md): --out, --trace, --conv-cache and SCALING_DUMP_PARAMS naming one
# file through each pair (directly, through a symlink, or as a new file spelt two ways), a FIFO, a directory, /dev/full,
# a read-only place and over-long paths and list items are each one line, exit 2, before anything is read or written
# (and never a hang); traces and parameter dumps replace their target by rename, never writing through a symlink.
# Runs on CI (no GPU): refusals through the command, the runs that must succeed through scaling_fake (the same driver
# with a test strategy that needs no GPU).
set -u
bin=$(realpath "$1"); root=$2; fake=$(realpath "$3")
source "$(dirname "$0")/lib.sh"
run=(--model lenet --dataset synthetic --epochs 1)
ok() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2"; fi; }
io=$(mktemp -d); trap 'rm -rf "$tmp" "$io"' EXIT    # the command's output and the snapshots, outside $tmp
snap() { (cd "$tmp" && find . -print0 | sort -z | xargs -0 ls -ld --time-style=+%s.%N 2>/dev/null;
          find . -type f -print0 | sort -z | xargs -0 -r md5sum) > "$io/snap.$1"; }
# refused "<message>" [VAR=value] args...: exit 2 within 20 s, one stderr line with the message, nothing in $tmp changed
refused() {
    local want=$1; shift
    local envs=()
    while [[ ${1:-} == *=* && ${1:-} != -* ]]; do envs+=("$1"); shift; done
    snap before
    env "${envs[@]}" timeout 20 "$bin" "$@" >"$io/stdout" 2>"$io/stderr"; local rc=$?
    snap after
    local lines; lines=$(wc -l <"$io/stderr")
    if [ $rc -eq 2 ] && [ "$lines" -eq 1 ] && grep -qF -- "$want" "$io/stderr" && cmp -s "$io/snap.before" "$io/snap.after"
    then pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: ${envs[*]} scaling $* -> rc=$rc, $lines stderr line(s), files $(cmp -s "$io/snap.before" \
             "$io/snap.after" && echo unchanged || echo CHANGED); wanted '$want'; got:"
        head -c 300 "$io/stderr"; echo
    fi
}

mkdir -p "$tmp/d"
printf 'precious\n' > "$tmp/d/precious.csv"
a=$tmp/d/precious.csv

# The same file through each pair of options, each way round; existing, through a symlink, and new (spelt two ways).
ln -s precious.csv "$tmp/d/link.csv"
same='are the same file'
refused "$same" "${run[@]}" --out "$a" --trace "$a"
refused "$same" "${run[@]}" --out "$a" --conv-cache "$a"
refused "$same" "${run[@]}" --trace "$a" --conv-cache "$a" --out "$tmp/d/new.csv"
refused "$same" SCALING_DUMP_PARAMS="$a" "${run[@]}" --out "$a"
refused "$same" SCALING_DUMP_PARAMS="$a" "${run[@]}" --out "$tmp/d/new.csv" --trace "$a"
refused "$same" SCALING_DUMP_PARAMS="$a" "${run[@]}" --out "$tmp/d/new.csv" --conv-cache "$a"
refused "$same" "${run[@]}" --out "$tmp/d/link.csv" --conv-cache "$a"
refused "$same" "${run[@]}" --out "$a" --trace "$tmp/d/link.csv"
refused "$same" "${run[@]}" --out "$tmp/d/new.csv" --trace "$tmp/d/../d/./new.csv"
refused "$same" "${run[@]}" --out "$tmp/d/sub/new.csv" --conv-cache "$tmp/d//sub/new.csv"
# a new path whose missing part spells a folder two ways (., .., //) below its nearest existing folder
refused "$same" "${run[@]}" --out "$tmp/d/sub2/x.csv" --trace "$tmp/d/sub2/../sub2/x.csv"
refused "$same" "${run[@]}" --out "$tmp/d/sub3/a/x.csv" --conv-cache "$tmp/d/sub3/./a//b/../x.csv"
refused "$same" "${run[@]}" --out "$tmp/d/sub4/x.csv" --trace "$tmp/d/sub4/y/../../sub4/x.csv"
pushd "$tmp/d" >/dev/null; refused "$same" "${run[@]}" --out new.csv --trace "$tmp/d/new.csv"; popd >/dev/null
# several runs: each run's trace file is checked
refused "$same" "${run[@]}" --lr 0.1,0.2 --out "$tmp/d/t-run2.json" --trace "$tmp/d/t.json"

# Not a regular file: a FIFO (which would block an open), a directory, a device; a symlink to nothing.
mkfifo "$tmp/fifo"
refused 'a FIFO, not a regular file' "${run[@]}" --out "$tmp/fifo"
refused 'a FIFO, not a regular file' "${run[@]}" --conv-cache "$tmp/fifo" --out "$tmp/d/new.csv"
refused 'a FIFO, not a regular file' "${run[@]}" --trace "$tmp/fifo" --out "$tmp/d/new.csv"
refused 'a FIFO, not a regular file' SCALING_DUMP_PARAMS="$tmp/fifo" "${run[@]}" --out "$tmp/d/new.csv"
refused 'a directory, not a regular file' "${run[@]}" --out "$tmp/d"
refused 'a directory, not a regular file' "${run[@]}" --trace "$tmp/d" --out "$tmp/d/new.csv"
refused 'a directory, not a regular file' "${run[@]}" --conv-cache "$tmp/d" --out "$tmp/d/new.csv"
refused 'a character device, not a regular file' "${run[@]}" --out /dev/full
refused 'a character device, not a regular file' "${run[@]}" --conv-cache /dev/full --out "$tmp/d/new.csv"
refused 'a character device, not a regular file' "${run[@]}" --trace /dev/null --out "$tmp/d/new.csv"
ln -s nowhere "$tmp/d/dangling"
refused 'a symbolic link to a missing file' "${run[@]}" --out "$tmp/d/dangling"
# A folder on the way that is a symbolic link to nothing yet: --out's folders are made before a trace or a dump is
# written, so lnk -> newdir would make lnk/x.csv the study CSV then (read lexically, the two names differed).
ln -s newdir "$tmp/d/lnk"
to_nothing='lnk is a symbolic link to a missing folder'
refused "$to_nothing" "${run[@]}" --out "$tmp/d/newdir/x.csv" --trace "$tmp/d/lnk/x.csv"
refused "$to_nothing" SCALING_DUMP_PARAMS="$tmp/d/lnk/x.csv" "${run[@]}" --out "$tmp/d/newdir/x.csv"
refused "$to_nothing" "${run[@]}" --out "$tmp/d/gone/../newdir/x.csv" --trace "$tmp/d/gone/../lnk/x.csv"
refused "$to_nothing" "${run[@]}" --out "$tmp/d/lnk/x.csv"
# ... and a '..' after a missing name that steps past a link to a folder (--out's own gone/ is made first)
mkdir "$tmp/d/realdir"; ln -s realdir "$tmp/d/linkdir"
refused "$same" "${run[@]}" --out "$tmp/d/gone/../realdir/x.csv" --trace "$tmp/d/gone/../linkdir/x.csv"
refused "$same" SCALING_DUMP_PARAMS="$tmp/d/gone/../linkdir/x.csv" "${run[@]}" --out "$tmp/d/realdir/x.csv"
refused 'Not a directory' "${run[@]}" --out "$a/x.csv"
refused 'a FIFO, not a regular file' --bench allreduce --out "$tmp/fifo"

# Over-long paths and list items: an error, never a cut.
long=$(printf 'x%.0s' $(seq 1 4200))
refused 'longer than the limit' "${run[@]}" --out "$tmp/$long.csv"
long600=$tmp/$(printf 'y%.0s' $(seq 1 200))/$(printf 'z%.0s' $(seq 1 200))/$(printf 'w%.0s' $(seq 1 200)).json
refused 'longer than the limit' "${run[@]}" --out "$tmp/d/new.csv" --trace "$tmp/$long.json"
ok '[ ${#long600} -gt 599 ]' "a trace path over 599 characters"
lr="1$(printf '0%.0s' $(seq 1 200))"
refused '--lr: item "100000000000000000000000..." is longer than 127 characters' "${run[@]}" --lr "$lr"
refused 'is longer than 127 characters' "${run[@]}" --batch "2,$lr"

# A read-only place (as a user other than root where the test runs as root: root writes through any mode bits).
mkdir -p "$tmp/ro"; printf 'old\n' > "$tmp/ro/old.csv"; chmod 555 "$tmp/ro"; chmod 444 "$tmp/ro/old.csv"
as=(); if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then as=(setpriv --reuid=65534 --regid=65534 --clear-groups); fi
chmod 755 "$tmp" "$io"
if [ "$(id -u)" -ne 0 ] || [ ${#as[@]} -gt 0 ]; then
    mkdir -p "$tmp/w"; chmod 777 "$tmp/w"
    for args in "--out $tmp/ro/new.csv" "--out $tmp/ro/sub/new.csv" "--out $tmp/ro/old.csv" \
                "--out $tmp/w/new.csv --conv-cache $tmp/ro/algos.tsv" "--out $tmp/w/new.csv --trace $tmp/ro/t.json" \
                "--out $tmp/w/new.csv --trace $tmp/ro/old.csv"; do
        named=$(awk '{ print $(NF - 1) }' <<<"$args")     # the last option given is the one refused
        "${as[@]}" timeout 20 "$bin" "${run[@]}" $args >/dev/null 2>"$io/stderr"; rc=$?
        ok '[ $rc -eq 2 ] && [ "$(wc -l <"$io/stderr")" -eq 1 ] && grep -qE "^scaling: error: $named .*(cannot write|Permission denied)" "$io/stderr"' \
           "read-only: $args -> rc $rc: $(cat "$io/stderr")"
    done
    ok '[ -z "$(ls -A "$tmp/w")" ]' "nothing written beside: $(ls -A "$tmp/w")"
    ok '[ ! -e "$tmp/ro/new.csv" ] && [ "$(cat "$tmp/ro/old.csv")" = old ]' "read-only place untouched"
else
    echo "note: running as root without setpriv: the read-only cases are not run"
fi
chmod 755 "$tmp/ro"

# What must work: distinct files run (scaling_fake, no GPU); a trace and a parameter dump replace a symlink at their
# path instead of writing through it, and leave no temporary file.
printf 'victim\n' > "$tmp/d/victim"; printf 'victim\n' > "$tmp/d/victim2"
ln -s victim "$tmp/d/t.json"; ln -s victim2 "$tmp/d/p.bin"
SCALING_DUMP_PARAMS=$tmp/d/p.bin "$fake" --strategy fake "${run[@]}" --epochs 1 --out "$tmp/d/ok.csv" \
    --trace "$tmp/d/t.json" --conv-cache "$tmp/d/algos.tsv" >"$io/stdout" 2>"$io/stderr"; rc=$?
ok '[ $rc -eq 0 ]' "distinct files run: rc $rc: $(cat "$io/stderr")"
ok '[ "$(cat "$tmp/d/victim")" = victim ] && [ "$(cat "$tmp/d/victim2")" = victim ]' "the symlinks' targets are untouched"
ok '[ -f "$tmp/d/t.json" ] && [ ! -L "$tmp/d/t.json" ] && grep -q traceEvents "$tmp/d/t.json"' "the trace replaced its symlink"
ok '[ -f "$tmp/d/p.bin" ] && [ ! -L "$tmp/d/p.bin" ] && [ "$(stat -c %s "$tmp/d/p.bin")" -eq 32 ]' \
   "the dump replaced its symlink (8 floats)"
ok '[ -z "$(find "$tmp/d" -name "*.tmp-*")" ]' "no temporary file left"
# a second run replaces the dump whole (never truncates it in place: a reader holding it keeps the old one)
exec 3<"$tmp/d/p.bin"
SCALING_DUMP_PARAMS=$tmp/d/p.bin "$fake" --strategy fake "${run[@]}" --gpus 2 --out "$tmp/d/ok.csv" >/dev/null 2>&1
ok '[ "$(od -An -tf4 -N4 <&3 | tr -d " ")" = 1010 ] && [ "$(od -An -tf4 -N4 "$tmp/d/p.bin" | tr -d " ")" = 2010 ]' \
   "the old dump, still open, kept its bytes; the path has the new one"
exec 3<&-

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
