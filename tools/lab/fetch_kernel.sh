#!/usr/bin/env bash
# The kernel lab's guest kernel (docs/lab.md): downloads Debian's cloud kernel package with
# `apt-get download` (never at record time) and unpacks its vmlinuz into the lab directory,
# $PTPROF_LAB_DIR (default ~/.cache/ptprof/lab), as `vmlinuz`, with its version in
# `kernel-version` and its config in `config`. Idempotent. Called by tools/setup.sh.
#
# The pinned package is the one the lab's traces and documented numbers come from; when apt no
# longer offers it, the newest linux-image-6.1.0-*-cloud-amd64-unsigned is taken instead (and its
# version recorded).
# Usage: tools/lab/fetch_kernel.sh
set -euo pipefail
lab_dir=${PTPROF_LAB_DIR:-$HOME/.cache/ptprof/lab}
pinned=linux-image-6.1.0-56-cloud-amd64-unsigned
mkdir -p "$lab_dir"
if [ -s "$lab_dir/vmlinuz" ] && [ -s "$lab_dir/kernel-version" ]; then
  echo "lab: kernel $(cat "$lab_dir/kernel-version") already in $lab_dir" >&2
  exit 0
fi
package=$pinned
if ! apt-cache show "$package" > /dev/null 2>&1; then
  package=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-cloud-amd64-unsigned$' |
            awk '{print $1}' | sort -V | tail -1)
  [ -n "$package" ] || { echo "lab: apt offers no linux-image-6.1.0-*-cloud-amd64-unsigned" >&2; exit 1; }
  echo "lab: $pinned is not available; using $package" >&2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download "$package" > /dev/null 2>&1) ||
  { echo "lab: apt-get download $package failed" >&2; exit 1; }
deb=$(ls "$work"/*.deb)
version=$(dpkg-deb -f "$deb" Version)
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work" ./boot
release=${package#linux-image-}
release=${release%-unsigned}
cp "$work/boot/vmlinuz-$release" "$lab_dir/vmlinuz"
cp "$work/boot/config-$release" "$lab_dir/config"
echo "$package $version ($release)" > "$lab_dir/kernel-version"
echo "lab: kernel $(cat "$lab_dir/kernel-version") in $lab_dir/vmlinuz" >&2
