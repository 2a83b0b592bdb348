#!/usr/bin/env bash
# Soak: a pomed under churn for a bounded time. 4 workers loop create (GitHub + Slack)
# → 5 twin calls → discard, a killer SIGKILLs a random pod now and then, and at the end
# pomed must hold what it held at the start: fds and RSS back within a small constant,
# no pod process, no pod cgroup, no run directory past its retention, no slot taken,
# the registry in step with /v1/usage.
#
#   tests/soak/soak.sh [--seconds N | --minutes N] [--workers N]
#
# The load comes from tests/soak/churn.mjs (Node's fetch, keep-alive connections).
# ctest runs a short form (20 s) against the dev (ASan) build; a long one is
# `POME_BUILD_DIR=build/release tests/soak/soak.sh --minutes 30`. The last line is a
# summary: iterations, iterations/s, fds and RSS at the start and at the end.
POME_SOURCE_DIR=${POME_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
POME_BUILD_DIR=${POME_BUILD_DIR:-$POME_SOURCE_DIR/build/dev}
export POME_SOURCE_DIR POME_BUILD_DIR
seconds=20 workers=4
while (($#)); do
        case $1 in
        --seconds) seconds=$2; shift 2 ;;
        --minutes) seconds=$(($2 * 60)); shift 2 ;;
        --workers) workers=$2; shift 2 ;;
        -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
        *) echo "soak: unknown argument $1 (try --help)" >&2; exit 2 ;;
        esac
done
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
# ASan keeps freed memory in a quarantine (256 MB by default): bound it so RSS says
# something about pomed, not about the sanitizer.
export ASAN_OPTIONS=$ASAN_OPTIONS:quarantine_size_mb=16:malloc_context_size=5
RETENTION=3
start_pomed "limits:" "  retention: ${RETENTION}s" "  idle_timeout: 30s" "teams:" \
        "  - id: local" "    sessions_quota: $((workers * 2))" "    plan_tier: self-hosted"

fds() { ls "/proc/$POMED_PID/fd" | wc -l; }
rss() { awk '/VmRSS/ {print $2}' "/proc/$POMED_PID/status"; }

command -v node >/dev/null || skip "node is not installed (the churn client is Node 20)"
# One warm-up round, then the churn: start figures are taken once pomed has served once.
node "$SRC/tests/soak/churn.mjs" "$CONTROL" "$API_KEY" 1 1 >"$TMP/warmup.json"
# the warm pool (pool_size per twin) full at both ends, so its pods' fds count in both
pooled() { curl -s "$CONTROL/healthz" | jq '[.isolation.pool[] | .idle] | add // 0'; }
wanted=$(curl -s "$CONTROL/healthz" | jq '[.isolation.pool[] | .size] | add // 0')
wait_pool() {
        for _ in $(seq 100); do
                (($(pooled) == wanted)) && return 0
                sleep 0.1
        done
}
wait_pool
fds0=$(fds) rss0=$(rss)
node "$SRC/tests/soak/churn.mjs" "$CONTROL" "$API_KEY" "$seconds" "$workers" >"$TMP/churn.json" ||
        fail "the churn client failed"
iterations=$(jq .iterations "$TMP/churn.json")
kills=$(jq .kills "$TMP/churn.json")
[[ $(jq '.unexpected | length' "$TMP/churn.json") == 0 ]] ||
        fail "unexpected answers during the churn: $(jq -c .unexpected "$TMP/churn.json")"
((iterations > 0)) || fail "no iteration completed"

# Everything ended must be released now, and collected after its retention.
for _ in $(seq 100); do
        [[ $(used) == 0 ]] && break
        sleep 0.1
done
assert_eq "$(used)" 0 "slots taken after the churn"
api GET "/v1/sandboxes?state=running"
assert_jq '.data | length' 0 "the registry's open sandboxes agree with /v1/usage"
tree=$(grep -o 'pods under [^ ]*' "$TMP/pomed.log" | head -1 | cut -d' ' -f3)
sleep $((RETENTION + 3))
assert_eq "$(ls "$TMP/state/runs" | wc -l)" 0 "run directories past their retention"
api GET "/v1/sandboxes?state=all&limit=1000"
assert_jq '.data | length' 0 "records past their retention"
# What is left is the warm pool's (pool_size per twin, waiting for a seed), refilled:
# as many pods and pod cgroups as it holds, and nothing else.
wait_pool
assert_eq "$(pooled)" "$wanted" "idle pods in the pool after the churn"
if [[ -n $tree && -d $tree ]]; then
        assert_eq "$(find "$tree" -mindepth 1 -type d | wc -l)" "$wanted" "pod cgroups left below $tree"
fi
pods=$( (pgrep -x pome-pod -P "$POMED_PID" || true) | wc -l)
assert_eq "$pods" "$wanted" "pod processes left (the pool's)"
fds1=$(fds) rss1=$(rss)
((fds1 <= fds0 + 4)) || fail "pomed's fds grew from $fds0 to $fds1"
((rss1 <= rss0 + 65536)) || fail "pomed's RSS grew from $rss0 kB to $rss1 kB"
rate=$(awk -v n="$iterations" -v s="$seconds" 'BEGIN { printf "%.1f", n / s }')
pass "soak: $iterations iterations in ${seconds}s ($rate/s, $workers workers, $kills pods killed); fds $fds0 → $fds1, RSS $((rss0 / 1024)) → $((rss1 / 1024)) MiB"
