#!/usr/bin/env bash
# Issue 29's benchmark, one command, as root: creates per second through an HAProxy front
# with 1, 2 and 3 pomeds on one etcd, beside one pomed with the local ledger (direct and
# through the same front); what etcd is asked per create; one etcd transaction's latency;
# and what open slots cost etcd (db, RSS, keep-alives). Builds the release preset, then
# bench/fleet.py does the rest (read its header) and rewrites the part of BENCHMARKS.md
# between the bench-fleet:begin/end markers. All on 127.0.0.1 (no namespaces); etcd's data
# directory on /var/tmp (the disk: etcd fsyncs its WAL on every write) unless ETCD_DIR says.
#
#   bench/fleet.sh [RUNS] [fleet.py options…]      (default 5 runs, ~6 minutes on 2 cores)
#   bench/fleet.sh 7 --tmpfs-too                   (what BENCHMARKS.md shows; ~7 minutes)
#   bench/fleet.sh 3 --only local-direct,local-front --capacity 0
#   ETCD_DIR=/dev/shm bench/fleet.sh 3              (etcd on tmpfs: no fsync cost, to compare)
#
# Needs etcd and haproxy (Debian 12: etcd-server, haproxy; installed here when missing).
# Exits 1 when any figure met an error (every error is also listed in BENCHMARKS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=5
if [[ ${1:-} =~ ^[0-9]+$ ]]; then
        RUNS=$1
        shift
fi
[[ $(id -u) -eq 0 ]] || { echo "fleet: run as root (pods need cgroups and namespaces)" >&2; exit 1; }
need=()
command -v etcd >/dev/null || need+=(etcd-server)
command -v haproxy >/dev/null || need+=(haproxy)
if ((${#need[@]})); then
        echo "fleet: installing ${need[*]}" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null ||
                { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null; }
fi
echo "fleet: building the release preset" >&2
scripts/setup.sh release >/dev/null
mkdir -p build/bench
echo "fleet: $RUNS runs (progress below; results in BENCHMARKS.md)" >&2
exec python3 bench/fleet.py --bin build/release --runs "$RUNS" --etcd-dir "${ETCD_DIR:-/var/tmp}" \
        --json build/bench/fleet.json "$@"
