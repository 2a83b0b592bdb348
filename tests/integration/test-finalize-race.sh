#!/usr/bin/env bash
# A finalize under way (a judge that takes 3 s) meets a discard and the sandbox's clocks: the
# discard is refused (409, reason finalizing) instead of throwing the run away under the
# grader, the idle clock (1 s) and the lifetime (5 s) wait for it, and the finalize answers
# with its verdict; the run is kept, done.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
cat >"$TMP/judge.sh" <<'JUDGE'
#!/bin/sh
cat >/dev/null
sleep 3
echo '{"verdict": "pass", "rationale": "slow but sure"}'
JUDGE
chmod +x "$TMP/judge.sh"
start_pomed "limits:" "  lifetime: 5s" "  idle_timeout: 1s" \
        "judge:" "  api: command" "  command: $TMP/judge.sh" "  timeout: 20"

TASK_FILE=$SRC/tests/integration/tasks/triage-login.md
SEEDS=$(awk '/^## Seed State/{s=1; next} s && /^```json/{j=1; next} j && /^```/{exit} j' "$TASK_FILE")
api POST /v1/sandboxes "$(jq -nc --rawfile task "$TASK_FILE" --argjson seeds "$SEEDS" \
        '{twins: ["github", "slack"], task_markdown: $task, seeds: $seeds}')"
assert_status 201 "create with a task that has a [model] criterion"
SID=$(jq -r .session_id <<<"$BODY")
api DELETE "/v1/sandboxes/$SID"
assert_status 409 "a stop of an open run, unconfirmed"
DISCARD=$(jq -r .error.details.discard_token <<<"$BODY")

# the finalize, in the background: it waits for the judge
curl -s -o "$TMP/final.json" -w '%{http_code}' -X POST -H "Authorization: Bearer $API_KEY" \
        "$CONTROL/v1/sandboxes/$SID/finalize" >"$TMP/final.status" &
fin=$!
EXTRA_PIDS+=("$fin")
sleep 1
api DELETE "/v1/sandboxes/$SID?confirm_discard=$DISCARD"
assert_status 409 "a confirmed discard while the finalize grades"
assert_jq .error.details.reason finalizing
wait "$fin" || fail "the finalize request failed"
assert_eq "$(cat "$TMP/final.status")" 200 "the finalize, past the idle clock: $(cat "$TMP/final.json")"
assert_eq "$(jq -r '.state + "/" + (.reason // "")' "$TMP/final.json")" "done/finalized" "the finalize's answer"
[[ $(jq -r .verdict.state "$TMP/final.json") =~ ^(pass|fail|incomplete)$ ]] ||
        fail "no verdict in the finalize's answer: $(cat "$TMP/final.json")"
[[ -f $TMP/state/runs/$SID/verdict.json ]] || fail "the run was not kept"
pass "a discard during a finalize is refused, the idle clock waits, and the finalize answers with its verdict"

# the lifetime waits for a finalize too
api POST /v1/sandboxes "$(jq -nc --rawfile task "$TASK_FILE" --argjson seeds "$SEEDS" \
        '{twins: ["github", "slack"], task_markdown: $task, seeds: $seeds, idle_timeout_seconds: 0}')"
assert_status 201 "a second sandbox"
SID=$(jq -r .session_id <<<"$BODY")
sleep 3 # its 5 s lifetime ends while the 3 s judge is asked
api POST "/v1/sandboxes/$SID/finalize"
assert_status 200 "a finalize across the lifetime's end"
assert_jq '.state + "/" + .reason' "done/finalized"
pass "the lifetime's end during a finalize leaves it to the finalize"
