#!/usr/bin/env bash
# Benchmarks (not tests): builds the release preset, starts a pomed of its own and
# prints Markdown for BENCHMARKS.md. Each figure is the median of RUNS runs, with a
# baseline measured in the same run:
#   1. gateway throughput: GET an issue through pomed's gateway (HTTP → frame →
#      isolated pod → frame) vs the same engine in-process (`pome twin start`).
#   2. sandbox start: POST /v1/sandboxes until ready, 1 twin and 2 twins, vs a
#      control-API round trip (GET /v1/usage) on the same pomed.
#   3. density: memory of N open sandboxes (pods' PSS + pomed's RSS growth).
# Usage: bench/run.sh [RUNS]   (needs root, wrk, jq; default 5 runs)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
command -v wrk >/dev/null || { echo "bench: install wrk (apt-get install wrk)" >&2; exit 1; }
scripts/setup.sh release >/dev/null
B=build/release
TMP=$(mktemp -d /tmp/pome-bench.XXXXXX)
chmod 755 "$TMP"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill $p 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$TMP"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f", m}'; }

cat >"$TMP/pomed.conf" <<CONF
control_listen: 127.0.0.1:0
gateway_listen: 127.0.0.1:0
state_dir: $TMP/state
bus: none
teams:
  - id: local
    sessions_quota: 1000
CONF
$B/supervisor/pomed --config "$TMP/pomed.conf" >"$TMP/pomed.log" 2>&1 &
POMED=$!
PIDS+=($POMED)
for _ in $(seq 100); do [[ -f $TMP/state/pomed.json ]] && break; sleep 0.05; done
CONTROL=$(jq -r .control_url "$TMP/state/pomed.json")
KEY=$(head -1 "$TMP/state/api-key")
create() { curl -s -X POST -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' -d "$1" "$CONTROL/v1/sandboxes"; }
discard() {
        local t
        t=$(curl -s -X DELETE -H "Authorization: Bearer $KEY" "$CONTROL/v1/sandboxes/$1" | jq -r .error.details.discard_token)
        curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $KEY" "$CONTROL/v1/sandboxes/$1?confirm_discard=$t"
}

# 1. gateway vs in-process twin
S=$(create '{"twins":["github"],"idle_timeout_seconds":0}')
SID=$(jq -r .session_id <<<"$S")
URL=$(jq -r .per_twin.github.rest_url <<<"$S")/repos/acme/api/issues/1
TOK=$(jq -r .session_token <<<"$S")
$B/cli/pome twin start github --port 0 >"$TMP/twin.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do grep -q rest_url "$TMP/twin.out" && break; sleep 0.05; done
LURL=$(awk '$1 == "rest_url" { print $2 }' "$TMP/twin.out")/repos/acme/api/issues/1
LTOK=$(awk '$1 == "token" { print $2 }' "$TMP/twin.out")
rps() { wrk -t1 -c16 -d3s -H "Authorization: Bearer $2" "$1" | awk '/Requests\/sec/ { print $2 }'; }
rps "$URL" "$TOK" >/dev/null # warm-up
: >"$TMP/gw" >"$TMP/local"
for _ in $(seq "$RUNS"); do
        rps "$URL" "$TOK" >>"$TMP/gw"
        rps "$LURL" "$LTOK" >>"$TMP/local"
done
GW=$(median <"$TMP/gw")
LOCAL=$(median <"$TMP/local")
discard "$SID"

# 2. sandbox start latency (curl's own time_total: no process start-up in the figure)
timed() { # timed METHOD PATH [BODY] → ms on stdout, body in $TMP/last
        local args=(-s -o "$TMP/last" -w '%{time_total}\n' -X "$1" -H "Authorization: Bearer $KEY")
        [[ -n ${3:-} ]] && args+=(-H 'Content-Type: application/json' -d "$3")
        curl "${args[@]}" "$CONTROL$2" | awk '{ printf "%.3f\n", $1 * 1000 }'
}
: >"$TMP/c1" >"$TMP/c2" >"$TMP/usage"
for _ in $(seq $((RUNS * 4))); do
        timed POST /v1/sandboxes '{"twins":["github"]}' >>"$TMP/c1"
        discard "$(jq -r .session_id "$TMP/last")"
        timed POST /v1/sandboxes '{"twins":["github","slack"]}' >>"$TMP/c2"
        discard "$(jq -r .session_id "$TMP/last")"
        timed GET /v1/usage >>"$TMP/usage"
done
C1=$(median <"$TMP/c1")
C2=$(median <"$TMP/c2")
RT=$(median <"$TMP/usage")

# 3. density: N open two-twin sandboxes
N=20
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
pomed_before=$(rss_kb "$POMED")
ids=()
for _ in $(seq $N); do ids+=("$(create '{"twins":["github","slack"]}' | jq -r .session_id)"); done
pss=0
for p in $(pgrep -P "$POMED" -x pome-pod); do
        pss=$((pss + $(awk '/^Pss:/ { s += $2 } END { print s }' "/proc/$p/smaps_rollup")))
done
pomed_after=$(rss_kb "$POMED")
for id in "${ids[@]}"; do discard "$id"; done

cat <<MD
| benchmark | result | baseline (same run) | ratio |
| --- | --- | --- | --- |
| gateway GET issue, req/s (wrk, 16 conns, 3 s; median of $RUNS) | $GW | in-process twin: $LOCAL | $(awk -v a="$GW" -v b="$LOCAL" 'BEGIN { printf "%.2f", a / b }') |
| create 1-twin sandbox → ready, ms (median of $((RUNS * 4))) | $C1 | control-API round trip: $RT | $(awk -v a="$C1" -v b="$RT" 'BEGIN { printf "%.1f", a / b }') |
| create 2-twin sandbox → ready, ms (median of $((RUNS * 4))) | $C2 | 1-twin create: $C1 | $(awk -v a="$C2" -v b="$C1" 'BEGIN { printf "%.2f", a / b }') |
| memory per open 2-twin sandbox, KiB ($N open) | pods PSS $((pss / N)) + pomed $(((pomed_after - pomed_before) / N)) | — | — |
MD
