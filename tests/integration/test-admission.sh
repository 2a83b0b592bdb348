#!/usr/bin/env bash
# Admission: a burst of creates larger than what may start at once (limits.max_starting) and
# wait (limits.max_queued_creates). pomed is stopped while the burst arrives, so every
# request is read before any pod is up: two start, six wait in order, the rest get 503 busy
# with Retry-After before a slot is spent. Every admitted create ends ready (none misses its
# start clock, which runs from its start, not from its wait), the slots in use are exactly
# the 201s, and /metrics shows the queue while it is there and empty after.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
start_pomed "limits:" "  max_starting: 2" "  max_queued_creates: 6" "  start_timeout: 5s"

N=20
kill -STOP "$POMED_PID"
for i in $(seq "$N"); do
        curl -s -D "$TMP/h.$i" -o "$TMP/b.$i" -w '%{http_code}' -X POST \
                -H "Authorization: Bearer $API_KEY" -H 'Content-Type: application/json' \
                -d '{"twins":["github"]}' "$CONTROL/v1/sandboxes" >"$TMP/s.$i" &
        EXTRA_PIDS+=($!)
done
sleep 1 # every request connected and sent, pomed stopped
kill -CONT "$POMED_PID"
# the queue, seen while it drains (pods take a few ms each: best effort, not required)
curl -s -H "Authorization: Bearer $API_KEY" "$CONTROL/metrics" >"$TMP/metrics.during" || true
for p in "${EXTRA_PIDS[@]}"; do wait "$p" || true; done

created=0 busy=0 quota=0
for i in $(seq "$N"); do
        s=$(cat "$TMP/s.$i")
        case $s in
        201)
                created=$((created + 1))
                [[ $(jq -r .state "$TMP/b.$i") == ready ]] || fail "create $i: 201 but $(cat "$TMP/b.$i")"
                ;;
        503)
                busy=$((busy + 1))
                [[ $(jq -r .error.type "$TMP/b.$i") == busy ]] ||
                        fail "create $i: 503 that is not busy (a missed start clock?): $(cat "$TMP/b.$i")"
                grep -qi '^Retry-After: 1' "$TMP/h.$i" || fail "create $i: busy without Retry-After"
                ;;
        402) quota=$((quota + 1)) ;;
        *) fail "create $i answered $s: $(cat "$TMP/b.$i")" ;;
        esac
done
echo "burst of $N: $created created, $busy busy, $quota over quota"
((created >= 2)) || fail "only $created creates were admitted"
((busy >= 1)) || fail "no create was refused busy: the queue is not bounded"
assert_eq "$(used)" "$created" "slots in use: exactly the creates answered 201"
grep -q '"busy"' "$TMP/pomed.log" && fail "busy refusals were logged one by one"
curl -s -H "Authorization: Bearer $API_KEY" "$CONTROL/metrics" >"$TMP/metrics.after"
grep -qx 'pome_creates_starting 0' "$TMP/metrics.after" || fail "starting after the burst: $(grep creates_ "$TMP/metrics.after")"
grep -qx 'pome_creates_queued 0' "$TMP/metrics.after" || fail "queued after the burst: $(grep creates_ "$TMP/metrics.after")"
grep -q '^pome_creates_queued [0-9]' "$TMP/metrics.during" || fail "/metrics lacks the queue"
pass "a burst: $created admitted and started in order (none missed its start clock), $busy refused busy with Retry-After before a slot was spent"

# the slots the burst took are the team's: the queue never admits past the quota
api GET /v1/sandboxes?state=running\&limit=100
assert_eq "$(jq '.data | length' <<<"$BODY")" "$created" "running sandboxes after the burst"
pass "every admitted sandbox is running, and only those"
