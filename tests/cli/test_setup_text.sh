#!/usr/bin/env bash
# test_setup_text.sh — setup.sh --offline's text path on a GPU node (scripts/setup.sh, sourced: install_text,
# text_present, verify_data) with a bundle made here: the gzipped token files are unpacked and checked against the sums
# without node or npm (both replaced by fakes that leave a mark), and a cut gzip, a bundle from before the text and a
# changed token file each stop setup with one line naming the file. No network.
set -u
root=$2
source "$(dirname "$0")/lib.sh"

# node and npm that must not run: each leaves a mark and fails.
mkdir -p "$tmp/fake"
for t in node npm; do
    printf '#!/bin/sh\ntouch "%s/ran-%s"\nexit 99\n' "$tmp" "$t" >"$tmp/fake/$t"
    chmod +x "$tmp/fake/$t"
done
# setup.sh's functions in a subshell (die exits it), with the sums of this test's files and node/npm faked.
setup_fn() {   # setup_fn SUMS COMMAND...
    local sums=$1; shift
    (PATH="$tmp/fake:$PATH"; source "$root/scripts/setup.sh"; SUMS=$sums; "$@")
}

# A bundle: two small files standing in for the token files (setup checks bytes, not the format).
mkdir -p "$tmp/bundle/sotu" "$tmp/raw"
printf 'SCTOKENS train \001\002\003' >"$tmp/raw/train.bin"
printf 'SCTOKENS val \004\005' >"$tmp/raw/val.bin"
for f in train.bin val.bin; do gzip -9n -c "$tmp/raw/$f" >"$tmp/bundle/sotu/$f.gz"; done
for f in train.bin val.bin; do echo "$(sha256sum <"$tmp/raw/$f" | cut -d' ' -f1)  sotu/$f"; done >"$tmp/sums"

setup_fn "$tmp/sums" text_present "$tmp/bundle"
check "text_present sees the gzipped files" $?
setup_fn "$tmp/sums" text_present "$tmp/raw"
check "text_present: a folder without sotu/ has no text" "$( [ $? -ne 0 ]; echo $?)"

setup_fn "$tmp/sums" install_text "$tmp/bundle/sotu" "$tmp/data/sotu" 2>"$tmp/err" &&
    setup_fn "$tmp/sums" verify_data "$tmp/data" 2>>"$tmp/err"
rc=$?
check "the bundle's token files install and verify: $(cat "$tmp/err")" $rc
check "installed raw, byte for byte" "$(cmp -s "$tmp/raw/train.bin" "$tmp/data/sotu/train.bin" &&
    cmp -s "$tmp/raw/val.bin" "$tmp/data/sotu/val.bin"; echo $?)"
check "node and npm never ran" "$( [ ! -e "$tmp/ran-node" ] && [ ! -e "$tmp/ran-npm" ]; echo $?)"
# control: the fakes do leave their mark when run
setup_fn "$tmp/sums" node --version 2>/dev/null
check "control: a fake node that runs is seen" "$( [ -e "$tmp/ran-node" ]; echo $?)"
rm -f "$tmp/ran-node"

# expect_setup_error "<what>" "<text>" COMMAND...: exit 1, one stderr line, "setup: error:" and the text.
expect_setup_error() {
    local what=$1 want=$2; shift 2
    setup_fn "$tmp/sums" "$@" >/dev/null 2>"$tmp/err"; local rc=$?
    [ $rc -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q '^setup: error: ' "$tmp/err" &&
        grep -qF -- "$want" "$tmp/err"
    local ok=$?
    check "$what: rc $rc, wanted one line with '$want', got: $(cat "$tmp/err")" $ok
}

# A cut gzip: refused, and the installed file stays as it was (no .tmp left behind).
cp -r "$tmp/bundle" "$tmp/cut"
head -c 20 "$tmp/bundle/sotu/val.bin.gz" >"$tmp/cut/sotu/val.bin.gz"
expect_setup_error "a cut gzip" "$tmp/cut/sotu/val.bin.gz: not a valid gzip file" \
    install_text "$tmp/cut/sotu" "$tmp/data/sotu"
check "a cut gzip leaves the installed file as it was" "$(cmp -s "$tmp/raw/val.bin" "$tmp/data/sotu/val.bin" &&
    [ ! -e "$tmp/data/sotu/val.bin.tmp" ]; echo $?)"

# A bundle from before the text corpus.
mkdir -p "$tmp/old/sotu"
expect_setup_error "a bundle without the text" "run scripts/prepare-offline.sh again" \
    install_text "$tmp/old/sotu" "$tmp/data/sotu"

# A token file changed after install: verify_data names it.
printf 'X' >>"$tmp/data/sotu/val.bin"
expect_setup_error "a changed token file" "$tmp/data/sotu/val.bin: checksum mismatch" verify_data "$tmp/data"

# The sums setup checks include the token files.
check "scripts/data.sha256 lists sotu/train.bin and sotu/val.bin" "$(grep -q ' sotu/train.bin$' \
    "$root/scripts/data.sha256" && grep -q ' sotu/val.bin$' "$root/scripts/data.sha256"; echo $?)"
summary
