#!/usr/bin/env bash
# GET /metrics on the control port: behind the team key, Prometheus' text format as
# promtool reads it, and numbers that agree with /v1/usage, the tapes and the pods.
source "$(dirname "$0")/lib.sh"
command -v promtool >/dev/null || skip "promtool is not installed (Debian: prometheus)"

start_pomed
metrics() { curl -s -H "Authorization: Bearer $API_KEY" "$CONTROL/metrics"; }
value() { # value NAME{LABELS} → the sample's value, or "absent"
        awk -v k="$1" '$1 == k { print $2; found = 1 } END { if (!found) print "absent" }' <<<"$M"
}

STATUS=$(curl -s -o /dev/null -w '%{http_code}' "$CONTROL/metrics")
assert_eq "$STATUS" 401 "/metrics without a key"
pass "/metrics needs a team key"

create_sandbox github slack
URL=$(rest_url github)
twin_call GET "$URL/repos/acme/api/issues/1" "$TOKEN"
assert_status 200 "a GitHub call"
twin_call GET "$URL/repos/acme/api/issues/1" "nope"
assert_status 404 "a call with a bad token"
twin_call GET "$(rest_url slack)/auth.test" "$TOKEN"
assert_status 200 "a Slack call"

M=$(metrics)
promtool check metrics <<<"$M" >"$TMP/promtool" 2>&1 || fail "promtool: $(cat "$TMP/promtool")"
api GET /v1/usage
assert_eq "$(value 'pome_slots_used{team="local"}')" "$(jq .sessions_used <<<"$BODY")" "slots used vs /v1/usage"
assert_eq "$(value 'pome_slots_quota{team="local"}')" "$(jq .sessions_quota <<<"$BODY")" "quota vs /v1/usage"
assert_eq "$(value 'pome_sandboxes{team="local",state="running"}')" 1 "running sandboxes"
assert_eq "$(value 'pome_gateway_requests_total{twin="github",code="200"}')" 1 "GitHub 200s"
assert_eq "$(value 'pome_gateway_requests_total{twin="github",code="404"}')" 1 "GitHub 404s"
assert_eq "$(value 'pome_gateway_requests_total{twin="slack",code="200"}')" 1 "Slack 200s"
rows=$(wc -l <"$TMP/state/runs/$SID/github.tape.jsonl")
bytes=$(stat -c %s "$TMP/state/runs/$SID/github.tape.jsonl")
assert_eq "$(value 'pome_tape_rows_total{twin="github"}')" "$rows" "GitHub tape rows vs the file"
assert_eq "$(value 'pome_tape_bytes_total{twin="github"}')" "$bytes" "GitHub tape bytes vs the file"
assert_eq "$(value 'pome_pod_ready_duration_seconds_count{twin="github"}')" 1 "pod ready observations"
assert_eq "$(value 'pome_sandbox_create_duration_seconds_count')" 1 "create observations"
assert_eq "$(value 'pome_sandbox_create_duration_seconds_bucket{le="+Inf"}')" 1 "create +Inf bucket"
pass "promtool accepts /metrics; slots = /v1/usage, gateway answers by twin and status, tape rows and bytes = the tape file"

# A pod killed from outside: one exit by its reason; the sandbox ends failed.
pid=$(pod_pid github)
kill -KILL "$pid"
for _ in $(seq 1 100); do [[ $(pod_pid github) == closed ]] && break; sleep 0.05; done
discard "$(create_sandbox github && echo "$SID")" >/dev/null
M=$(metrics)
assert_eq "$(value 'pome_pod_exits_total{twin="github",reason="signal:SIGKILL"}')" 1 "the killed pod's exit"
assert_eq "$(value 'pome_pod_exits_total{twin="slack",reason="killed"}')" 1 "its sibling torn down by pomed"
assert_eq "$(value 'pome_sandboxes_ended_total{team="local",state="failed"}')" 1 "failed sandboxes"
assert_eq "$(value 'pome_sandboxes_ended_total{team="local",state="stopped"}')" 1 "discarded sandboxes"
assert_eq "$(value 'pome_slots_used{team="local"}')" 0 "slots after both ended"
promtool check metrics <<<"$M" >"$TMP/promtool" 2>&1 || fail "promtool: $(cat "$TMP/promtool")"
pass "pod exits by twin and reason, ended sandboxes by state, slots back to 0"
