#!/usr/bin/env bash
# Finalize keeps the run: every twin's final state lands next to its tape, the
# sandbox is done (finalized), its slot is released and later calls answer 410.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
start_pomed

create_sandbox github slack
GH=$(rest_url github)
twin_call POST "$GH/repos/acme/api/issues/1/assignees" "$TOKEN" '{"assignees":["alice"]}'
assert_status 201 "assign alice"
"$POME" sandbox finalize "$SID" >"$TMP/fin.txt" || fail "pome sandbox finalize: $(cat "$TMP/fin.txt")"
grep -q "done" "$TMP/fin.txt" || fail "finalize output does not say done: $(cat "$TMP/fin.txt")"
run=$TMP/state/runs/$SID
for f in github.final.json slack.final.json github.tape.jsonl github.seed.json sandbox.json; do
        [[ -s $run/$f ]] || fail "$f is missing from the kept run"
done
assigned=$(jq -r '[.. | objects | select(.number? == 1) | .assignees[]?] | flatten | map(if type == "object" then .login else . end) | unique | join(",")' "$run/github.final.json")
[[ $assigned == *alice* ]] || fail "github.final.json does not hold the assignment: $assigned"
assert_eq "$(jq -r .state "$run/sandbox.json")" done "the run's state"
assert_eq "$(jq -r .reason "$run/sandbox.json")" finalized "the run's reason"
assert_eq "$(used)" 0 "usage after finalize"
twin_call GET "$GH/repos/acme/api/issues/1" "$TOKEN"
assert_status 410 "a call after finalize"
assert_jq .error.details.reason finalized
api POST "/v1/sandboxes/$SID/finalize"
assert_status 409 "finalizing twice"
api DELETE "/v1/sandboxes/$SID"
assert_status 204 "stopping a finalized sandbox (nothing to refuse)"
[[ -d $run ]] || fail "stopping a finalized sandbox threw its run away"
pass "finalize keeps the run (final states, tapes), ends the sandbox, frees its slot"

set +e
"$POME" sandbox create --twin github >/dev/null
"$POME" sandbox stop "$(API_KEY=$API_KEY api GET '/v1/sandboxes?state=running'; jq -r '.data[0].session_id' <<<"$BODY")" 2>"$TMP/stop.err"
rc=$?
set -e
assert_eq "$rc" 5 "a refused stop"
grep -q "pome sandbox finalize ses_" "$TMP/stop.err" || fail "the refusal does not say how to finalize: $(cat "$TMP/stop.err")"
pass "the refused stop names the finalize command"
