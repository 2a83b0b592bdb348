#!/usr/bin/env bash
# Issue 30's benchmark, one command, as root: how fast the dashboard's run page shows a
# 100 000-row tape, against a page that would read the tape whole first (the baseline,
# measured in the same browser, on the same tape, interleaved). A fresh release pomed with
# the dashboard and a 512M tape limit, then bench/ui.mjs (which fills one GitHub sandbox's
# tape with GET /rate_limit) in Debian's chromium (puppeteer-core from
# tests/conformance/node_modules: run `npm ci` there first, as scripts/test.sh does).
#
#   bench/ui.sh [RUNS=7] [ROWS=100000]
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $(id -u) -eq 0 ]] || { echo "bench: run as root (pods need cgroups and namespaces)" >&2; exit 1; }
[[ -x build/release/supervisor/pomed ]] || scripts/setup.sh release >/dev/null
[[ -d tests/conformance/node_modules/puppeteer-core ]] || { echo "bench: run 'npm ci' in tests/conformance first" >&2; exit 1; }
T=$(mktemp -d /var/tmp/pome-ui.XXXXXX)
chmod 755 "$T"
cat >"$T/pomed.conf" <<CONF
control_listen: 127.0.0.1:0
gateway_listen: 127.0.0.1:0
state_dir: $T/state
bus: none
ui_dir: $PWD/ui
limits:
  max_tape: 512M
CONF
build/release/supervisor/pomed --config "$T/pomed.conf" >"$T/pomed.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 100); do [[ -f $T/state/pomed.json ]] && break; sleep 0.1; done
control=$(jq -r .control_url "$T/state/pomed.json")
POME_SOURCE_DIR=$PWD node bench/ui.mjs "$control" "$(head -1 "$T/state/api-key")" "${1:-7}" "${2:-100000}"
