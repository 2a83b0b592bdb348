#!/usr/bin/env bash
# SIGTERM drains: creates get 503 shutting_down (never a reset), a call in flight
# finishes and is taped, new twin calls get 503, then every open sandbox ends
# (failed, supervisor_stopped) with its pods and cgroups gone, and pomed exits 0.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
start_pomed "limits:" "  drain_timeout: 5s"

create_sandbox github slack
A=$SID A_TOKEN=$TOKEN GH=$(rest_url github) CREATED_A=$CREATED
pid=$(jq -r .per_twin.github.pod.pid <<<"$CREATED")
cgs=$(jq -r '.per_twin[].pod.cgroup // empty' <<<"$CREATED")

# A call in flight: the pod is stopped while it is sent, and resumed during the drain.
kill -STOP "$pid"
curl -s -o "$TMP/inflight" -w '%{http_code}' -H "Authorization: Bearer $A_TOKEN" \
        -H 'Content-Type: application/json' --data-binary '{"body":"in flight"}' \
        "$GH/repos/acme/api/issues/1/comments" >"$TMP/inflight.status" &
inflight=$!
# Creates racing the signal: each gets an answer (201 or 503), never a reset.
for i in 1 2 3 4 5 6; do
        (curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $API_KEY" \
                --data-binary '{"twins":["github"]}' "$CONTROL/v1/sandboxes" \
                >"$TMP/create$i.status"; echo "curl:$?" >>"$TMP/create$i.status") &
        EXTRA_PIDS+=($!)
done
sleep 0.3
kill -TERM "$POMED_PID"
sleep 0.3
api POST /v1/sandboxes '{"twins":["github"]}'
assert_status 503 "a create during the drain"
assert_jq .error.type shutting_down
twin_call GET "$GH/repos/acme/api/issues/1" "$A_TOKEN"
assert_status 503 "a new twin call during the drain"
kill -CONT "$pid"
wait "$inflight"
assert_eq "$(cat "$TMP/inflight.status")" 201 "the call in flight finished"
wait "${EXTRA_PIDS[@]}"
EXTRA_PIDS=()
for i in 1 2 3 4 5 6; do
        grep -qE '^(201|503)curl:0$' <(tr -d '\n' <"$TMP/create$i.status") ||
                fail "create $i during SIGTERM: $(cat "$TMP/create$i.status")"
done
pass "during the drain: creates 503 shutting_down, new calls 503, the call in flight 201"

status=0
wait "$POMED_PID" || status=$?
POMED_PID=
assert_eq "$status" 0 "pomed's exit status after the drain"
grep -q "in flight" "$TMP/state/runs/$A/github.tape.jsonl" || fail "the call in flight is not taped"
assert_eq "$(jq -r .state "$TMP/state/runs/$A/sandbox.json")" failed "the run's state"
assert_eq "$(jq -r .reason "$TMP/state/runs/$A/sandbox.json")" supervisor_stopped "the run's reason"
for p in $(jq -r '.per_twin[].pod.pid' <<<"$CREATED_A"); do
        [[ ! -d /proc/$p ]] || fail "pod $p outlived the drain"
done
for c in $cgs; do [[ ! -d $c ]] || fail "cgroup $c outlived the drain"; done
grep -q "drained: no sandbox left" "$TMP/pomed.log" || fail "no drain line in the log"
pass "drained: sandbox failed (supervisor_stopped), pods and cgroups gone, exit 0"
