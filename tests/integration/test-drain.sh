#!/usr/bin/env bash
# SIGTERM drains: creates get 503 shutting_down (never a reset), a call in flight
# finishes and is taped, new twin calls get 503, then every open sandbox ends
# (failed, supervisor_stopped) with its pods and cgroups gone, and pomed exits 0.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
# A slow-loading Slack seed keeps the creates of this test provisioning for a while.
imgs=$TMP/images
cp -r "$SRC/sandbox-images" "$imgs"
jq -n '{users: [{id: "U001", name: "ana"}], channels: [{id: "C001", name: "general", messages: [range(25000) |
        {ts: "1700000000.\(1000000 + . | tostring | .[1:])", user: "U001", text: ("x" * 200)}]}]}' \
        >"$imgs/slack/seeds/slow.json"
start_pomed "images_dir: $imgs" "limits:" "  drain_timeout: 5s"

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
sleep 0.3 # it is in flight now
# Creates racing the signal: each gets an answer (201, or 503 shutting_down), never a
# reset; some are still provisioning when the signal comes.
for i in 1 2 3 4 5 6 7 8; do
        (curl -s -o "$TMP/create$i.body" -w '%{http_code}' -H "Authorization: Bearer $API_KEY" \
                --data-binary '{"twins":["github","slack"],"seeds":{"slack":"slow"}}' \
                "$CONTROL/v1/sandboxes" \
                >"$TMP/create$i.status"; echo "curl:$?" >>"$TMP/create$i.status") &
        EXTRA_PIDS+=($!)
done
sleep 0.1
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
for i in 1 2 3 4 5 6 7 8; do
        grep -qE '^(201|503)curl:0$' <(tr -d '\n' <"$TMP/create$i.status") ||
                fail "create $i during SIGTERM: $(cat "$TMP/create$i.status")"
        if grep -q '^503' "$TMP/create$i.status"; then
                assert_eq "$(jq -r .error.type "$TMP/create$i.body")" shutting_down "create $i's 503"
                refused=$((${refused:-0} + 1))
        fi
done
((${refused:-0} > 0)) || fail "no create was still provisioning at SIGTERM (the test proves nothing)"
pass "during the drain: creates 503 shutting_down, new calls 503, the call in flight 201"

status=0
wait "$POMED_PID" || status=$?
POMED_PID=
assert_eq "$status" 0 "pomed's exit status after the drain"
if grep -qE "AddressSanitizer|LeakSanitizer|runtime error:" "$TMP/pomed.log"; then
        fail "sanitizer report: $(grep -A12 -E "AddressSanitizer|LeakSanitizer" "$TMP/pomed.log" | head -20)"
fi
grep -q "in flight" "$TMP/state/runs/$A/github.tape.jsonl" || fail "the call in flight is not taped"
assert_eq "$(jq -r .state "$TMP/state/runs/$A/sandbox.json")" failed "the run's state"
assert_eq "$(jq -r .reason "$TMP/state/runs/$A/sandbox.json")" supervisor_stopped "the run's reason"
for p in $(jq -r '.per_twin[].pod.pid' <<<"$CREATED_A"); do
        [[ ! -d /proc/$p ]] || fail "pod $p outlived the drain"
done
for c in $cgs; do [[ ! -d $c ]] || fail "cgroup $c outlived the drain"; done
grep -q "drained: no sandbox left" "$TMP/pomed.log" || fail "no drain line in the log"
pass "drained: sandbox failed (supervisor_stopped), pods and cgroups gone, exit 0"
