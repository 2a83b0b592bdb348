#!/usr/bin/env bash
# The two clocks, shortened to seconds: a busy sandbox ends at its lifetime, an
# idle one at its idle timeout; afterwards every twin call and every action on them
# answers 410 with the reason (the record stays readable), and no pod or cgroup of
# either remains.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
start_pomed "limits:" "  lifetime: 4s" "  idle_timeout: 2s" "  retention: 5s"

create_sandbox github
BUSY=$SID BUSY_TOKEN=$TOKEN BUSY_URL=$(rest_url github) BUSY_CREATED=$CREATED
create_sandbox github
IDLE=$SID IDLE_TOKEN=$TOKEN IDLE_URL=$(rest_url github) IDLE_CREATED=$CREATED
assert_eq "$(jq -r .idle_timeout_seconds <<<"$IDLE_CREATED")" 2 "idle timeout in the create response"

# Keep BUSY busy (a routed call every 0.5 s) until it ends; IDLE gets no call.
for _ in $(seq 40); do
        twin_call GET "$BUSY_URL/repos/acme/api/issues/1" "$BUSY_TOKEN"
        [[ $STATUS == 410 ]] && break
        [[ $STATUS == 200 ]] || fail "busy call answered $STATUS: $BODY"
        sleep 0.5
done
assert_status 410 "the busy sandbox after its lifetime"
assert_jq .error.details.reason lifetime "busy sandbox's reason"

# its record stays readable (issue 9: runs persist); acting on it is 410
api GET "/v1/sandboxes/$BUSY"
assert_status 200 "control API GET of the busy sandbox"
assert_jq .state expired
assert_jq .reason lifetime
api DELETE "/v1/sandboxes/$BUSY"
assert_status 410 "control API DELETE of the busy sandbox"
assert_jq .error.details.reason lifetime
doc=$(cat "$TMP/state/runs/$BUSY/sandbox.json")
created=$(date -d "$(jq -r .created_at <<<"$doc")" +%s)
ended=$(date -d "$(jq -r .ended_at <<<"$doc")" +%s)
expires=$(date -d "$(jq -r .expires_at <<<"$doc")" +%s)
((ended >= expires)) || fail "the busy sandbox ended at $ended, before expires_at $expires"
pass "busy sandbox: expired at its lifetime (created $created, expires $expires, ended $ended)"

twin_call GET "$IDLE_URL/repos/acme/api/issues/1" "$IDLE_TOKEN"
assert_status 410 "the idle sandbox"
assert_jq .error.details.reason idle "idle sandbox's reason"
api GET "/v1/sandboxes/$IDLE"
assert_status 200 "control API GET of the idle sandbox"
assert_jq .reason idle
doc=$(cat "$TMP/state/runs/$IDLE/sandbox.json")
ended=$(date -d "$(jq -r .ended_at <<<"$doc")" +%s)
expires=$(date -d "$(jq -r .expires_at <<<"$doc")" +%s)
((ended < expires)) || fail "the idle sandbox ended at $ended, not before its lifetime ($expires)"
pass "idle sandbox: expired at its idle timeout, before its lifetime"

for c in "$BUSY_CREATED" "$IDLE_CREATED"; do
        pid=$(jq -r .per_twin.github.pod.pid <<<"$c")
        cg=$(jq -r .per_twin.github.pod.cgroup <<<"$c")
        [[ ! -d /proc/$pid ]] || fail "pod $pid still runs"
        [[ ! -d $cg ]] || fail "cgroup $cg remains"
done
assert_eq "$(used)" 0 "usage after both expired"
api GET "/v1/sandboxes?state=expired"
assert_jq '.data | length' 2 "list --state expired"
pass "no pod or cgroup remains; slots released; both listed as expired"

# A request may shorten the idle clock (never lengthen it) or turn it off.
api POST /v1/sandboxes '{"twins":["github"],"idle_timeout_seconds":1}'
assert_status 201
assert_jq .idle_timeout_seconds 1 "a shortened idle clock"
SHORT=$(jq -r .session_id <<<"$BODY")
api POST /v1/sandboxes '{"twins":["github"],"idle_timeout_seconds":600}'
assert_jq .idle_timeout_seconds 2 "an idle clock cannot be lengthened past the deployment's"
api POST /v1/sandboxes '{"twins":["github"],"idle_timeout_seconds":0,"ttl_seconds":3}'
assert_jq .idle_timeout_seconds 0 "the idle clock turned off"
OFF=$(jq -r .session_id <<<"$BODY")
for _ in $(seq 40); do
        api GET "/v1/sandboxes/$OFF"
        [[ $(jq -r .state <<<"$BODY") == expired ]] && break
        sleep 0.25
done
assert_jq .reason lifetime "with the idle clock off, the lifetime ends it"
api GET "/v1/sandboxes/$SHORT"
assert_status 200 "the 1 s idle sandbox's record"
assert_jq .reason idle
pass "per-request idle clock: shortened, capped, off"

# Past the retention period an ended sandbox is forgotten: its record, its run directory
# and its 410 answers all go (limits.retention), so nothing grows with the sandboxes a
# deployment has ever run.
for _ in $(seq 80); do
        api GET "/v1/sandboxes/$IDLE"
        [[ $STATUS == 404 ]] && break
        sleep 0.25
done
assert_status 404 "the record after retention"
[[ ! -e $TMP/state/runs/$IDLE ]] || fail "the run directory of $IDLE outlived its retention"
api GET "/v1/sandboxes?state=all"
assert_jq "[.data[] | select(.session_id == \"$IDLE\")] | length" 0 "listed after retention"
pass "records and runs are collected after the retention period"
