#!/usr/bin/env bash
# Installs what ptprof needs on Debian 12 (bookworm) and configures + builds it in ./build.
# Idempotent: packages already present are left alone, an existing build directory is reused.
# Usage: tools/setup.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}

packages=(
  # build
  g++ meson ninja-build pkg-config python3 xz-utils
  # libraries
  libipt-dev libelf-dev libzstd-dev libfmt-dev catch2 libcli11-dev nlohmann-json3-dev
  libexpected-dev libzydis-dev libopencsd-dev libcapstone-dev
  # independent decoders used as oracles by the tests (skipped when absent)
  linux-perf libopencsd-bin
  # the emulated PT recorder (ptprof record --backend qemu); valgrind for its independent count
  qemu-user valgrind
  # the kernel lab (ptprof record --backend qemu-system, docs/lab.md): the emulator, the guest's
  # busybox; its kernel comes from tools/lab/fetch_kernel.sh below; zstd reads archive members
  qemu-system-x86 busybox-static zstd
  # SVG plots (ptprof delta --svg) rendered to PNG to look at them
  librsvg2-bin
  # the sunburst HTML of ptprof stacks loaded headless by its golden test
  chromium
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# The lab's guest kernel (Debian's cloud kernel, unpacked into ~/.cache/ptprof/lab): downloaded
# here, never at record time.
tools/lab/fetch_kernel.sh || echo "setup: the kernel lab's kernel is not available (lab tests skip)" >&2

if [ ! -f "$build_dir/build.ninja" ]; then
  meson setup "$build_dir" >&2
fi
ninja -C "$build_dir" >&2
