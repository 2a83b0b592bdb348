#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/fuzz-*.c) with clang and runs each for
# SECONDS (default 10). A crash fails the script and leaves crash-* in build/fuzz.
set -euo pipefail
# --help: the comment above, as usage
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
        awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
        exit 0
fi
if [[ -n ${1:-} && ! $1 =~ ^[0-9]+$ ]]; then
        echo "fuzz.sh: SECONDS must be a number, got '$1' (usage: scripts/fuzz.sh [SECONDS]; --help)" >&2
        exit 2
fi
cd "$(dirname "$0")/.."
seconds=${1:-10}
CC=clang cmake -S . -B build/fuzz -DCMAKE_BUILD_TYPE=Debug -DPOME_SANITIZE=ON \
        -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link >/dev/null
targets=$(cd tests/fuzz && ls fuzz-*.c 2>/dev/null | sed 's/\.c$//' || true)
[[ -n $targets ]] || { echo "fuzz: no targets"; exit 0; }
cmake --build build/fuzz -j"$(nproc)" --target $targets >/dev/null
# leaks inside the libraries we call, not ours (each explained there)
export LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0
for t in $targets; do
        corpus=build/fuzz/corpus-$t
        mkdir -p "$corpus"
        [[ -d tests/fuzz/corpus/$t ]] && cp -n tests/fuzz/corpus/$t/* "$corpus"/ 2>/dev/null || true
        echo "fuzz: $t for ${seconds}s"
        (cd build/fuzz && ./tests/$t -max_total_time="$seconds" -max_len=65536 \
                -print_final_stats=0 "corpus-$t" >"$t.log" 2>&1) || {
                tail -40 "build/fuzz/$t.log" >&2
                exit 1
        }
done
