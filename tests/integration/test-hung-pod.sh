#!/usr/bin/env bash
# A hung pod (SIGSTOP) is noticed: callers beyond the per-pod queue get 503 busy before
# their call reaches the pod, the first call to miss request_timeout gets 504 and the
# sandbox fails (pod_hung:<twin>) with the pod killed, so when the pod would resume
# nothing those callers sent is applied: no world change, no tape row, no late write.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
start_pomed "limits:" "  request_timeout: 2s" "  max_pending_calls: 8"

create_sandbox github slack
GH=$(rest_url github)
pid=$(jq -r .per_twin.github.pod.pid <<<"$CREATED")
twin_call POST "$GH/repos/acme/api/issues/1/comments" "$TOKEN" '{"body":"before the hang"}'
assert_status 201 "a comment before the hang"

kill -STOP "$pid"
# Eight calls fill the pod's queue; they wait on the stopped pod (and time out together:
# the first deadline kills the pod, the others must cope with a pod that is gone).
for i in 1 2 3 4 5 6 7 8; do
        curl -s -o "$TMP/late$i" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
                -H 'Content-Type: application/json' --data-binary "{\"body\":\"late $i\"}" \
                "$GH/repos/acme/api/issues/1/comments" >"$TMP/late$i.status" &
        EXTRA_PIDS+=($!)
done
sleep 0.5
# The fifth is refused at once, before it reaches the pod; so are big ones.
for i in 1 2 3; do
        { printf '{"body":"busy %d ' "$i"; head -c 900000 /dev/zero | tr '\0' a; printf '"}'; } >"$TMP/big.json"
        twin_call POST "$GH/repos/acme/api/issues/1/comments" "$TOKEN" "@$TMP/big.json"
        assert_status 503 "call $i beyond the pod's queue"
done
assert_jq .status 503 "the busy refusal is in GitHub's envelope"
rss_kb=$(awk '/VmRSS/ {print $2}' "/proc/$POMED_PID/status")
wait "${EXTRA_PIDS[@]}"
EXTRA_PIDS=()
statuses=$(for f in "$TMP"/late?.status; do cat "$f"; echo; done | sort | tr "\n" " ")
# each queued call either missed its deadline (504) or lost its pod to the kill (502)
[[ $statuses =~ ^(502 )*(504 )+$ ]] || fail "the queued calls answered '$statuses', not 504 (and 502)"
pass "bounded queue (503 busy) and the 504 of a hung pod"

api GET "/v1/sandboxes/$SID"
assert_jq .state failed
assert_jq .reason pod_hung:github
assert_jq .per_twin.github.pod.state pod_hung
kill -CONT "$pid" 2>/dev/null || true
for _ in $(seq 40); do [[ -d /proc/$pid ]] || break; sleep 0.05; done
[[ ! -d /proc/$pid ]] || fail "the hung pod $pid is still alive"
grep -q "github pod (pid $pid) pod_hung" "$TMP/pomed.log" || fail "no log line for the hung pod"
tape=$TMP/state/runs/$SID/github.tape.jsonl
grep -q "before the hang" "$tape" || fail "the comment before the hang is not on the tape"
if grep -qE '"(late|busy) [0-9]' "$tape"; then fail "a call whose caller got an error is on the tape"; fi
assert_eq "$(wc -l <"$tape")" 1 "rows on the tape"
twin_call GET "$GH/repos/acme/api/issues/1/comments" "$TOKEN"
assert_status 410 "a call after the hang"
assert_jq .error.details.reason pod_hung:github
((rss_kb < 200000)) || fail "pomed grew to $rss_kb kB RSS while the pod was stopped"
pass "the sandbox failed (pod_hung:github), the pod is gone, no late write"

# Again with Slack and five calls sent at once, whose deadlines fall in successive loop
# iterations: a later deadline may find the pod already gone (its socket closed) before
# its exit is reaped, and must not touch the call that finding freed.
for round in 1 2 3; do
        create_sandbox slack
        SL=$(rest_url slack)
        pid=$(jq -r .per_twin.slack.pod.pid <<<"$CREATED")
        kill -STOP "$pid"
        # one curl, five connections at once (-Z): the deadlines fall within a millisecond
        urls=()
        for i in 1 2 3 4 5; do urls+=("$SL/api/chat.postMessage"); done
        curl -s -Z --parallel-immediate --parallel-max 5 -o /dev/null -o /dev/null -o /dev/null \
                -o /dev/null -o /dev/null -w '%{http_code}\n' -H "Authorization: Bearer $TOKEN" \
                --data "channel=C_GENERAL&text=late-$round" "${urls[@]}" >"$TMP/sl.status"
        api GET "/v1/sandboxes/$SID"
        assert_jq .reason pod_hung:slack "round $round"
        kill -0 "$POMED_PID" || fail "pomed died in round $round"
done
pass "hung pods with calls whose deadlines fall apart: pomed survives (no use after free)"
