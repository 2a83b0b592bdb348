#!/usr/bin/env bash
# Builds the Debian package from this tree: scripts/build-deb.sh [OUT_DIR]
# (default build/deb). The tree's files (tracked, and new ones not ignored) are copied to
# OUT_DIR/src/pome-VERSION with packaging/debian as its debian/, then
# `dpkg-buildpackage -us -uc -b` runs there; the .deb lands in OUT_DIR. Needs the
# Build-Depends of packaging/debian/control (scripts/setup.sh installs them).
set -euo pipefail
# --help: the comment above, as usage
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
        awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
        exit 0
fi
if [[ ${1:-} == -* ]]; then
        echo "build-deb.sh: unknown option $1 (usage: scripts/build-deb.sh [OUT_DIR]; --help)" >&2
        exit 2
fi
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-build/deb}")
version=$(sed -n '1s/^pome (\([^)]*\)).*/\1/p' packaging/debian/changelog)
src=$out/src/pome-$version
rm -rf "$out/src"
mkdir -p "$src"
git ls-files -z --cached --others --exclude-standard |
        while IFS= read -r -d '' f; do [[ -e $f ]] && printf '%s\0' "$f"; done |
        cpio --null -pdm --quiet "$src"
# a link, so that debian/ links such as pome.sysusers reach packaging/
ln -s packaging/debian "$src/debian"
echo "build-deb: dpkg-buildpackage in $src"
(cd "$src" && DEB_BUILD_OPTIONS="parallel=$(nproc) ${DEB_BUILD_OPTIONS:-}" \
        dpkg-buildpackage -us -uc -b >"$out/build.log" 2>&1) || {
        tail -40 "$out/build.log" >&2
        echo "build-deb: dpkg-buildpackage failed (log: $out/build.log)" >&2
        exit 1
}
mv "$out/src/"pome_"$version"_*.deb "$out/"
rm -f "$out/src/"pome_"$version"_*.{buildinfo,changes} "$out/src/"pome-dbgsym_*.deb
ls "$out"/pome_"$version"_*.deb
