#!/usr/bin/env bash
# Runs every test: formatting, unit, integration (real pomed, real pods, a private
# dbus-daemon), conformance (the vendors' official SDK clients) and brief fuzzing.
# The dev preset: -Werror, ASan + UBSan everywhere but in the pod.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh dev

echo "== clang-format"
if ! git ls-files '*.c' '*.h' | xargs clang-format --dry-run --Werror; then
        echo "clang-format: run 'clang-format -i' on the files above" >&2
        exit 1
fi

echo "== npm ci (conformance clients)"
(cd tests/conformance && npm ci --no-audit --no-fund --loglevel=error)

echo "== ctest"
ctest --preset dev -j"$(nproc)" "$@"

echo "== fuzz (briefly)"
scripts/fuzz.sh 10
