#!/usr/bin/env bash
# Fair connections: 1 100 slow clients from 127.0.0.1 trickling headers (more than
# the gateway's connection limit) do not starve a client from 127.0.0.2 — every call
# it makes is answered promptly — because one address holds at most
# max_connections_per_client connections and the header deadline (header_timeout,
# whatever trickles in) then closes the slow ones: afterwards none is left (ss).
# A body that stalls is cut at body_timeout the same way.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
command -v node >/dev/null || skip "node is not installed"
command -v ss >/dev/null || skip "ss (iproute2) is not installed"
ip -4 addr show lo | grep -q '127.0.0.1/8' || skip "lo has no 127.0.0.0/8 (need 127.0.0.2)"

PER_CLIENT=64
start_pomed "limits:" "  header_timeout: 5s" "  body_timeout: 2s" \
        "  max_connections: 1000" "  max_connections_per_client: $PER_CLIENT"
GP=${GATEWAY##*:}
create_sandbox github
P=/github/s/$SID
ulimit -n 8192 2>/dev/null || true

# established server-side connections of the gateway
held() { ss -Htn state established "( sport = :$GP )" | wc -l; }

node "$SRC/tests/integration/slow-clients.mjs" "$GP" 1100 "$P/_pome/health" 500 20 \
        >"$TMP/slow.log" 2>&1 &
SLOW=$!
EXTRA_PIDS+=("$SLOW")
for _ in $(seq 40); do
        last=$(tail -1 "$TMP/slow.log" 2>/dev/null || true)
        [[ $last == "{"* ]] && (($(jq '.opened + .errors' <<<"$last") >= 1100)) && break
        sleep 0.25
done
sleep 0.5
last=$(tail -1 "$TMP/slow.log")
n=$(held)
((n <= PER_CLIENT)) || fail "the gateway holds $n connections from one address (limit $PER_CLIENT): $last"
((n >= PER_CLIENT / 2)) || fail "only $n slow connections held: the attack did not happen? $last"
pass "1 100 slow connections from 127.0.0.1: the gateway holds $n ($last)"

# A new connection from the slow clients' own address is refused (checked first, while
# they are surely held: header_timeout frees their places a few seconds on): one HTTP
# answer, 503 with Retry-After (no bare reset); at accept no path is known yet, so the
# body is the gateway's own error envelope.
code=$(curl -s -m 2 -D "$TMP/h" -o "$TMP/body" -w '%{http_code}' "$GATEWAY$P/_pome/health" \
        -H "Authorization: Bearer $TOKEN") || true
assert_eq "$code" 503 "a $((PER_CLIENT + 1))th connection from 127.0.0.1"
grep -qi '^retry-after:' "$TMP/h" || fail "the 503 has no Retry-After: $(cat "$TMP/h")"
assert_eq "$(jq -r .error.details.reason "$TMP/body")" too_many_connections "the 503's reason"
pass "the $((PER_CLIENT + 1))th connection from 127.0.0.1: 503 too_many_connections, Retry-After"

# Meanwhile another client is served at once, on both listeners.
for i in $(seq 10); do
        out=$(curl -s --interface 127.0.0.2 -m 2 -o "$TMP/body" -w '%{http_code} %{time_total}' \
                -H "Authorization: Bearer $TOKEN" "$GATEWAY$P/repos/acme/api/issues/1") ||
                fail "call $i from 127.0.0.2 got no answer within 2 s"
        read -r code secs <<<"$out"
        [[ $code == 200 ]] || fail "call $i from 127.0.0.2 answered $code: $(cat "$TMP/body")"
        awk -v s="$secs" 'BEGIN { exit !(s < 1.0) }' || fail "call $i from 127.0.0.2 took ${secs}s"
done
code=$(curl -s --interface 127.0.0.2 -m 2 -o /dev/null -w '%{http_code}' \
        -H "Authorization: Bearer $API_KEY" "$CONTROL/v1/usage") || fail "control API from 127.0.0.2: no answer"
assert_eq "$code" 200 "control API from 127.0.0.2"
pass "10 gateway calls from 127.0.0.2 answered 200 in < 1 s each during the attack"

# The header deadline closes the slow ones although they keep trickling.
for _ in $(seq 40); do
        (($(held) == 0)) && break
        sleep 0.25
done
n=$(held)
((n == 0)) || fail "$n slow connections still open after header_timeout: $(tail -1 "$TMP/slow.log")"
wait "$SLOW" || true
last=$(tail -1 "$TMP/slow.log")
(($(jq .answered408 <<<"$last") >= PER_CLIENT / 2)) || fail "the held ones were not answered 408: $last"
(($(jq '.open' <<<"$last") == 0)) || fail "slow clients still open: $last"
pass "after header_timeout no slow connection is left; they got 408 ($last)"

twin_call GET "$GATEWAY$P/_pome/health" "$TOKEN"
assert_status 200 "127.0.0.1 is served again"

# A body that stalls: 408 at body_timeout.
start=$(date +%s%N)
RAW_WAIT=8 raw_http "$GP" "POST $P/repos/acme/api/issues HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer $TOKEN\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"title\":"
ms=$((($(date +%s%N) - start) / 1000000))
[[ $RAW_STATUS == 408 && $RAW_CLOSED == 1 ]] || fail "a stalled body got '${RAW:0:100}' (closed=$RAW_CLOSED)"
((ms >= 1800 && ms < 6000)) || fail "a stalled body was cut after ${ms} ms (body_timeout 2 s)"
jq -e .message <<<"$(raw_body)" >/dev/null || fail "the 408 is not in GitHub's envelope: $(raw_body)"
pass "a stalled body is answered 408 after ${ms} ms"
