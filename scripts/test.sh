#!/usr/bin/env bash
# Runs every test: formatting, unit, integration (real pomed, real pods, a private
# dbus-daemon), conformance (the vendors' official SDK clients) and brief fuzzing.
# The dev preset: -Werror, ASan + UBSan everywhere but in the pod.
set -euo pipefail
# --help: the comment above, as usage
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
        awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
        exit 0
fi
cd "$(dirname "$0")/.."

# The sealed agent's pod masks /root and /home (an operator's files are not the agent's):
# the tests that run agents from this tree cannot from a clone there. As root such a tree is
# tested through a bind mount of it at /var/tmp/pome-src-<hash of its path> (its build
# directories are configured for that path), unmounted at the end.
src=$(pwd -P)
if [[ -z ${POME_TEST_RELOCATED:-} && $(id -u) -eq 0 && ($src == /root/* || $src == /home/*) ]]; then
        dst=/var/tmp/pome-src-$(printf %s "$src" | sha256sum | cut -c1-12)
        mkdir -p "$dst"
        mountpoint -q "$dst" || mount --bind "$src" "$dst"
        echo "scripts/test.sh: $src is under /root or /home, which a sealed agent's pod masks;" \
                "testing it through a bind mount at $dst"
        rc=0
        POME_TEST_RELOCATED=1 "$dst/scripts/test.sh" "$@" || rc=$?
        # a test's helper processes (chromium's) may still be exiting: wait for them a while,
        # then detach the mount lazily (it goes once they have)
        for _ in $(seq 20); do
                umount "$dst" 2>/dev/null && break
                sleep 0.5
        done
        if mountpoint -q "$dst"; then
                echo "scripts/test.sh: $dst still busy after 10 s:" \
                        "$(fuser -vm "$dst" 2>&1 | tr -s ' \n' ' ' | cut -c1-300); detached lazily" >&2
                umount -l "$dst"
        fi
        rmdir "$dst" 2>/dev/null || true
        exit "$rc"
fi

step=setup
trap 'echo; echo "scripts/test.sh: FAILED at step: $step" >&2' ERR

scripts/setup.sh dev

step=clang-format
echo "== clang-format"
if ! git ls-files '*.c' '*.h' | xargs clang-format --dry-run --Werror; then
        echo "clang-format: run 'clang-format -i' on the files above" >&2
        false
fi

step="release build (-O2 -Werror: what the main-job command builds)"
echo "== $step"
scripts/setup.sh release >/dev/null

step="npm ci (conformance clients)"
echo "== $step"
(cd tests/conformance && npm ci --no-audit --no-fund --loglevel=error)

step=ctest
echo "== ctest"
ctest --preset dev -j"$(nproc)" "$@"

step="fuzz (clang build, 10 s per target)"
echo "== $step"
scripts/fuzz.sh 10

echo
echo "scripts/test.sh: all tests passed."
