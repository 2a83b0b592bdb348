#!/usr/bin/env bash
# Benchmarks (not tests), with one command: builds the release preset and the baselines
# (bench/floor.c and bench/floor-server.c: the same isolation as a pod around a tiny
# static server; bench/responder.c: a minimal libmicrohttpd server), then bench/harness.py
# runs every figure beside its baseline, interleaved, and rewrites the measured part of
# BENCHMARKS.md (between its bench:begin/end markers; the prose around it is kept).
#
#   bench/run.sh [RUNS] [harness options…]     (default 5 runs; as root)
#   bench/run.sh 3 --only start,gateway        (some areas: start churn gateway density tape
#                                              agentpod)
#
# Needs root (cgroups, namespaces), wrk, bubblewrap and perf (installed here when missing).
# Takes about 8 minutes at 5 runs on a 2-core host. Exits 1 when any figure met an error
# (every error is also listed in BENCHMARKS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=5
if [[ ${1:-} =~ ^[0-9]+$ ]]; then
        RUNS=$1
        shift
fi
[[ $(id -u) -eq 0 ]] || { echo "bench: run as root (pods need cgroups and namespaces)" >&2; exit 1; }
need=()
command -v wrk >/dev/null || need+=(wrk)
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v perf >/dev/null || need+=(linux-perf)
dpkg-query -W -f='${Status}' libc6-dev 2>/dev/null | grep -q "ok installed" || need+=(libc6-dev)
if ((${#need[@]})); then
        echo "bench: installing ${need[*]}" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null ||
                { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null; }
fi
echo "bench: building the release preset" >&2
scripts/setup.sh release >/dev/null
T=build/bench
mkdir -p "$T"
CFLAGS=(-O2 -Wall -Wextra -Werror)
cc "${CFLAGS[@]}" -static -o "$T/floor-server" bench/floor-server.c
cc "${CFLAGS[@]}" -o "$T/floor" bench/floor.c
cc "${CFLAGS[@]}" -o "$T/responder" bench/responder.c -lmicrohttpd
echo "bench: $RUNS runs of every figure (progress below; results in BENCHMARKS.md)" >&2
exec python3 bench/harness.py --bin build/release --tools "$T" --runs "$RUNS" \
        --json "$T/results.json" "$@"
