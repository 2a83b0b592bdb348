#!/usr/bin/env bash
# The create burst of issue 26 (Admission), one command, as root: a fresh release pomed
# (quota 2000, the default admission limits, room for the burst's connections) in a
# temporary state directory, then bench/burst.mjs. Prints the one-at-a-time create rate,
# how the burst was answered and its goodput. Takes a few minutes on 2 cores.
#
#   bench/burst.sh [BURST=5000] [SEQ=40]
#   MAX_STARTING=100000 bench/burst.sh     (admission off, the baseline: every create starts
#                                           its pods at once)
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $(id -u) -eq 0 ]] || { echo "bench: run as root (pods need cgroups and namespaces)" >&2; exit 1; }
[[ -x build/release/supervisor/pomed ]] || scripts/setup.sh release >/dev/null
T=$(mktemp -d /var/tmp/pome-burst.XXXXXX)
chmod 755 "$T"
cat >"$T/pomed.conf" <<EOF
control_listen: 127.0.0.1:0
gateway_listen: 127.0.0.1:0
state_dir: $T/state
bus: none
limits:
  max_starting: ${MAX_STARTING:-128}
  max_connections: 10000
  max_connections_per_client: 10000
teams:
  - id: local
    sessions_quota: 2000
EOF
build/release/supervisor/pomed --config "$T/pomed.conf" >"$T/pomed.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 100); do [[ -f $T/state/pomed.json ]] && break; sleep 0.1; done
control=$(jq -r .control_url "$T/state/pomed.json")
node bench/burst.mjs "$control" "$(head -1 "$T/state/api-key")" "${1:-5000}" "${2:-40}"
