#!/usr/bin/env bash
# prepare-offline.sh — on a machine with package access, builds the folder that `scripts/setup.sh --offline DIR`
# uses on GPU nodes without it: debs/ (libcsv3, libcsv-dev, zlib1g, zlib1g-dev), fashion-mnist/*.gz, mnist/*.gz and
# sotu/*.bin.gz (the text corpus tokenised here, with node: the GPU node needs neither node nor npm). 46 MB in all.
#
#   scripts/prepare-offline.sh DIR
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

DEBS=(libcsv3 libcsv-dev zlib1g zlib1g-dev)

# apt-get download needs package lists; fetch them only when the first try finds none.
download_debs() {
  local dest=$1
  rm -f "$dest"/libcsv3_*.deb "$dest"/libcsv-dev_*.deb "$dest"/zlib1g_*.deb "$dest"/zlib1g-dev_*.deb
  if ! (cd "$dest" && apt-get download -q "${DEBS[@]}"); then
    log "apt-get download failed; updating the package lists and retrying"
    apt_get update -q
    (cd "$dest" && apt-get download -q "${DEBS[@]}")
  fi
}

prepare() {
  (($# == 1)) || { echo "usage: scripts/prepare-offline.sh DIR" >&2; exit 2; }
  local dir=$1 f
  mkdir -p "$dir/debs" "$dir/fashion-mnist" "$dir/mnist" "$dir/sotu"
  dir=$(cd "$dir" && pwd)
  command -v apt-get >/dev/null || die "apt-get not found: run this on a Debian/Ubuntu machine with package access"
  download_debs "$dir/debs"
  apt_ensure dataset-fashion-mnist
  for f in "${MNIST_FILES[@]}"; do
    copy_if_changed "$FASHION_SYSTEM_DIR/$f.gz" "$dir/fashion-mnist/$f.gz"
  done
  # gzipped to cut the transfer to a quarter; setup.sh verifies the decompressed bytes.
  mnist_present "$dir" || fetch_mnist "$dir/mnist" gzip
  text_present "$dir" || fetch_text "$dir/sotu" gzip
  verify_data "$dir"
  log "done: copy $dir to the GPU node and run: scripts/setup.sh --offline $dir"
}

prepare "$@"
