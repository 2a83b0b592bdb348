#!/usr/bin/env bash
# Run by every build (CMake target check-includes): each quoted include in the modules
# is path-qualified from the source root ("supervisor/cgroup.h"), so it resolves only
# through the include trees of the modules a target links (DESIGN.md "Modules and
# layering") and never through the including file's own directory.
set -euo pipefail
# --help: the comment above, as usage
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
        awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
        exit 0
fi
cd "$(dirname "$0")/.."
bad=$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[^/"]+"' common pods supervisor cli \
        --include='*.c' --include='*.h' || true)
if [[ -n $bad ]]; then
        echo "check-includes: quoted includes must name the header's path from the source root:" >&2
        echo "$bad" >&2
        exit 1
fi
