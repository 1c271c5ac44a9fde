#!/usr/bin/env bash
# One folder per IREE release under $1 (e.g. /work/cache/releases): its compiler and runtime wheels
# (pip install --no-deps --target), for derive.py beside this script. Outside the repository:
# about 400 MB a release.  Usage: install.sh DIR VERSION...
dir=$1; shift
mkdir -p "$dir" && cd "$dir" || exit 1
for v in "$@"; do
  [ -f "$v/.done" ] && continue
  pip install -q --no-deps --target "$v" "iree-base-compiler==$v" "iree-base-runtime==$v" > "$v.log" 2>&1 \
    && touch "$v/.done" || echo "$v: failed (see $dir/$v.log)"
done
