#!/usr/bin/env bash
# kill -9 of pomed: its pods die with it (PR_SET_PDEATHSIG), and the restarted
# pomed cleans their cgroups and lists every earlier sandbox with a true state. A tape
# left with a tail that is no whole row (what a power cut leaves: zeroes past the data, a
# torn row) is cut back to its whole rows at the restart.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
start_pomed

create_sandbox github slack
OPEN=$SID OPEN_TOKEN=$TOKEN OPEN_CREATED=$CREATED
create_sandbox github
STOPPED=$SID
discard "$STOPPED"
for i in 1 2; do
        twin_call POST "$(jq -r .per_twin.github.rest_url <<<"$OPEN_CREATED")/repos/acme/api/issues/1/comments" \
                "$OPEN_TOKEN" "{\"body\":\"before the crash $i\"}"
        assert_status 201 "a write before the crash"
done
pids=$(jq -r '.per_twin[].pod.pid' <<<"$OPEN_CREATED")
cgs=$(jq -r '.per_twin[].pod.cgroup' <<<"$OPEN_CREATED")

kill -9 "$POMED_PID"
wait "$POMED_PID" 2>/dev/null || true
POMED_PID=
for _ in $(seq 100); do
        alive=0
        for p in $pids; do [[ -d /proc/$p ]] && alive=1; done
        ((alive)) || break
        sleep 0.05
done
((alive == 0)) || fail "pods outlived a killed pomed"
pass "pods died with pomed"
tape=$TMP/state/runs/$OPEN/github.tape.jsonl
whole=$(stat -c %s "$tape")
{ head -c 4096 /dev/zero; printf '{"kind":"TwinHttpEvent","event_id":"req_torn'; } >>"$tape"

start_pomed
for c in $cgs; do
        [[ ! -d $c ]] || fail "cgroup $c of the killed pomed remains after the restart"
done
api GET "/v1/sandboxes?state=all"
assert_jq "[.data[] | select(.session_id == \"$OPEN\") | .state] | .[0]" failed "the open sandbox"
assert_jq "[.data[] | select(.session_id == \"$OPEN\") | .reason] | .[0]" supervisor_restarted
assert_jq "[.data[] | select(.session_id == \"$STOPPED\") | .state] | .[0]" stopped "the stopped sandbox"
assert_eq "$(used)" 0 "usage after the restart"
assert_eq "$(jq -r .state "$TMP/state/runs/$OPEN/sandbox.json")" failed "the run's sandbox.json"
"$POME" sandbox list --state failed >"$TMP/list.txt"
grep -q "$OPEN" "$TMP/list.txt" || fail "pome sandbox list --state failed: $(cat "$TMP/list.txt")"
# the gateway port is new after a restart (port 0); the token is not
twin_call GET "$GATEWAY/github/s/$OPEN/repos/acme/api/issues/1" "$OPEN_TOKEN"
assert_status 410 "a call to a sandbox of the killed pomed"
assert_jq .error.details.reason supervisor_restarted
pass "the registry lists every earlier sandbox with a true state; calls answer 410"
assert_eq "$(stat -c %s "$tape")" "$whole" "the tape's size after the restart (its whole rows)"
grep -q "$OPEN: its github tape ended in .* bytes that are no whole row" "$TMP/pomed.log" ||
        fail "the cut is not said in the journal"
api GET "/v1/sandboxes/$OPEN/events?twin=github"
assert_status 200 "the repaired tape"
assert_jq '[.[] | select(.method == "POST")] | length' 2 "the writes before the crash, read back"
pass "a tape's torn, zeroed tail is cut back to its whole rows at the restart, and said"

create_sandbox github
discard "$SID"
pass "the restarted pomed serves"
