#!/usr/bin/env bash
# A burst of 5 000 three-twin creates at once to a team with a quota of 2 000 (issue 26): every
# create is answered 201 ready, 402 over quota, or 503 busy with Retry-After before a slot
# is spent; none misses its start clock (no start_timeout), no connection is dropped, the
# slots in use afterwards are exactly the 201s, and pomed serves again. The client is
# bench/burst.mjs (one-at-a-time rate first, then the burst); its goodput beside the
# one-at-a-time rate is printed and must be at least half of it, a ratio measured in the
# same run (BENCHMARKS.md "Create bursts" has the release numbers).
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
command -v node >/dev/null || skip "node is not installed"

BURST=${BURST:-5000}
QUOTA=2000
start_pomed "limits:" "  max_connections: 10000" "  max_connections_per_client: 10000" \
        "teams:" "  - id: local" "    sessions_quota: $QUOTA"

TWINS=github,slack,stripe node "$SRC/bench/burst.mjs" "$CONTROL" "$API_KEY" "$BURST" 40 >"$TMP/burst.json" ||
        fail "bench/burst.mjs failed: $(cat "$TMP/burst.json")"
cat "$TMP/burst.json"
b() { jq -r ".burst.$1" "$TMP/burst.json"; }

# every answer is one of the three kinds, and each kind is what it says
bad=$(jq -r '.burst.answers | to_entries[]
        | select(.key != "201 ready" and .key != "402 quota_exceeded" and .key != "503 busy")
        | "\(.value) × \(.key)"' "$TMP/burst.json")
[[ -z $bad ]] || fail "creates answered other than 201 ready / 402 quota_exceeded / 503 busy: $bad" \
        "($(grep -E 'POST /v1/sandboxes → (5|4)[0-9][0-9] (internal_error|[a-z_]+):' "$TMP/pomed.log" |
                grep -vE 'quota_exceeded|→ 503 busy' | head -3))"
assert_eq "$(b start_timeouts)" 0 "creates that missed their start clock"
assert_eq "$(b busy_without_retry_after)" 0 "busy refusals without Retry-After"
ready=$(b ready)
over=$(jq -r '.burst.answers["402 quota_exceeded"] // 0' "$TMP/burst.json")
busy=$(jq -r '.burst.answers["503 busy"] // 0' "$TMP/burst.json")
assert_eq $((ready + over + busy)) "$BURST" "answers"
((ready <= QUOTA)) || fail "$ready sandboxes ready: more than the quota of $QUOTA"
# what was not admitted was refused for the quota, never for a slot it then lost
((ready + busy >= QUOTA)) || fail "only $ready ready and $busy busy: creates were refused while slots were free"
pass "a burst of $BURST: $ready ready, $over over quota, $busy busy with Retry-After; none missed its start clock"

# burst.mjs discarded what it made: the slots come back, and the same pomed serves again
assert_eq "$(used)" 0 "slots in use after the burst's sandboxes were discarded"
create_sandbox github
[[ $(jq -r .state <<<"$CREATED") == ready ]] || fail "a create after the burst: $CREATED"
pass "after the burst every slot came back and a new sandbox starts"

ratio=$(b goodput_vs_one_at_a_time)
echo "goodput $(b goodput_per_second)/s, one at a time $(jq -r .one_at_a_time.per_second "$TMP/burst.json")/s: ratio $ratio"
jq -e ".burst.goodput_vs_one_at_a_time >= 0.5" "$TMP/burst.json" >/dev/null ||
        fail "the burst's goodput is $ratio of the one-at-a-time create rate (at least 0.5 expected)"
pass "the burst's goodput is $ratio × the one-at-a-time create rate"
