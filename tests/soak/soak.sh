#!/usr/bin/env bash
# Soak: a pomed under churn for a bounded time. 4 workers loop create (GitHub + Slack)
# → 5 twin calls → discard, a killer SIGKILLs a random pod now and then, and at the end
# pomed must hold what it held at the start: fds and RSS back within a small constant,
# no pod process, no pod cgroup, no run directory past its retention, no slot taken,
# the registry in step with /v1/usage.
#
#   tests/soak/soak.sh [--seconds N | --minutes N] [--workers N]
#
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

# one_round N: one iteration; prints "ok" or "refused:<status>" per step to the worker log.
one_round() {
        local out=$TMP/w$1 created sid token gh sl code dt
        created=$(curl -s -w '\n%{http_code}' -H "Authorization: Bearer $API_KEY" \
                --data-binary '{"twins":["github","slack"]}' "$CONTROL/v1/sandboxes")
        code=${created##*$'\n'}
        created=${created%$'\n'*}
        if [[ $code != 201 ]]; then
                echo "create:$code" >>"$out.log"
                return
        fi
        sid=$(jq -r .session_id <<<"$created")
        token=$(jq -r .session_token <<<"$created")
        gh=$(jq -r .per_twin.github.rest_url <<<"$created")
        sl=$(jq -r .per_twin.slack.rest_url <<<"$created")
        echo "$sid" >>"$TMP/sids"
        for step in 1 2 3 4 5; do
                case $step in
                1) code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "$gh/repos/acme/api/issues/1") ;;
                2) code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" -H 'Content-Type: application/json' --data-binary '{"body":"soak"}' "$gh/repos/acme/api/issues/1/comments") ;;
                3) code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" --data-urlencode 'channel=C_GENERAL' --data-urlencode 'text=soak acme/api#1' "$sl/chat.postMessage") ;;
                4) code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "$gh/_pome/events?limit=2") ;;
                5) code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" -H 'Content-Type: application/json' --data-binary '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' "$sl/mcp") ;;
                esac
                # 410 and 502 are what a call meets when the killer took the sandbox's pod
                case $code in 200 | 201 | 410 | 502) ;; *) echo "call$step:$code" >>"$out.log" ;; esac
        done
        dt=$(curl -s -X DELETE -H "Authorization: Bearer $API_KEY" "$CONTROL/v1/sandboxes/$sid" |
                jq -r '.error.details.discard_token // empty')
        code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "Authorization: Bearer $API_KEY" \
                "$CONTROL/v1/sandboxes/$sid?confirm_discard=$dt")
        case $code in 204) ;; *) echo "discard:$code" >>"$out.log" ;; esac
        echo x >>"$out.count"
}

one_round warmup
rm -f "$TMP"/wwarmup.*
fds0=$(fds) rss0=$(rss)
deadline=$((SECONDS + seconds))
for w in $(seq "$workers"); do
        (while ((SECONDS < deadline)); do one_round "$w"; done) &
        EXTRA_PIDS+=($!)
done
# The killer: a random live pod gets SIGKILL every second or so.
(
        while ((SECONDS < deadline)); do
                sleep "0.$((RANDOM % 9 + 5))"
                pid=$(curl -s -H "Authorization: Bearer $API_KEY" "$CONTROL/v1/sandboxes?state=running" |
                        jq -r '[.data[].per_twin[].pod.pid // empty] | .[]' | shuf -n1 2>/dev/null)
                [[ -n $pid ]] && kill -9 "$pid" 2>/dev/null && echo x >>"$TMP/kills"
        done
) &
EXTRA_PIDS+=($!)
wait "${EXTRA_PIDS[@]}"
EXTRA_PIDS=()

iterations=$(cat "$TMP"/w*.count 2>/dev/null | wc -l)
kills=$(cat "$TMP/kills" 2>/dev/null | wc -l)
if cat "$TMP"/w*.log >/dev/null 2>&1; then
        fail "unexpected answers during the churn: $(cat "$TMP"/w*.log | sort | uniq -c | tr '\n' ' ')"
fi
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
left=$(ls "$TMP/state/runs" | wc -l)
assert_eq "$left" 0 "run directories past their retention"
api GET "/v1/sandboxes?state=all&limit=1000"
assert_jq '.data | length' 0 "records past their retention"
if [[ -n $tree && -d $tree ]]; then
        n=$(find "$tree" -mindepth 1 -type d | wc -l)
        assert_eq "$n" 0 "pod cgroups left below $tree"
fi
for sid in $(sort -u "$TMP/sids"); do
        if pgrep -f "pome-pod" >/dev/null && grep -ls "$sid" /proc/[0-9]*/cgroup >/dev/null 2>&1; then
                fail "a pod process of $sid is still alive"
        fi
done
fds1=$(fds) rss1=$(rss)
((fds1 <= fds0 + 4)) || fail "pomed's fds grew from $fds0 to $fds1"
((rss1 <= rss0 + 65536)) || fail "pomed's RSS grew from $rss0 kB to $rss1 kB"
rate=$(awk -v n="$iterations" -v s="$seconds" 'BEGIN { printf "%.1f", n / s }')
pass "soak: $iterations iterations in ${seconds}s ($rate/s, $workers workers, $kills pods killed); fds $fds0 → $fds1, RSS $((rss0 / 1024)) → $((rss1 / 1024)) MiB"
