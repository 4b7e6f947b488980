#!/usr/bin/env bash
# Build KenLM's lmplz and build_binary into a bin directory (default .venv/bin).
# No wheel ships them; the kenlm 0.3.0 source distribution on PyPI contains lm/builder.
# Skipped when both are already on PATH or in the target directory.
set -euo pipefail
dest=${1:-.venv/bin}
if [ -x "$dest/lmplz" ] && [ -x "$dest/build_binary" ]; then exit 0; fi
if command -v lmplz >/dev/null && command -v build_binary >/dev/null; then
  mkdir -p "$dest"  # make runs this beside the venv's creation: the directory may not be there yet
  ln -sf "$(command -v lmplz)" "$dest/lmplz"; ln -sf "$(command -v build_binary)" "$dest/build_binary"; exit 0
fi
echo "building KenLM lmplz/build_binary (about 2 minutes)..." >&2
pkgs="libboost-program-options-dev libboost-system-dev libboost-thread-dev libboost-test-dev zlib1g-dev libbz2-dev liblzma-dev cmake g++"
"$(dirname "$0")/apt-install.sh" $pkgs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download -q --no-deps --no-binary kenlm kenlm==0.3.0 -d "$work"
tar -xzf "$work"/kenlm-0.3.0.tar.gz -C "$work"
cmake -S "$work/kenlm-0.3.0" -B "$work/build" -DCMAKE_BUILD_TYPE=Release >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
cmake --build "$work/build" -j"$(nproc)" --target lmplz build_binary >>"$work/build.log" 2>&1 || { tail -50 "$work/build.log"; exit 1; }
mkdir -p "$dest"
install -m 755 "$work/build/bin/lmplz" "$work/build/bin/build_binary" "$dest/"
echo "installed lmplz and build_binary into $dest" >&2
