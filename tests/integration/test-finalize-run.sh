#!/usr/bin/env bash
# Finalize from inside the run (issue 23), its REST form: POST {rest_url}/_pome/finalize with
# the sandbox's own bearer (the session token, or a twin's provider credential — here Slack's,
# as a form field the way Slack clients send it) finalizes the sandbox as the control API's
# finalize does: graded against the task stored at create, verdict.json and summary.md
# written, the sandbox done, its slot released, no tape row for the finalize. Refusals come
# in each twin's own envelope (GitHub, Slack, Stripe): no task, a session_id of another
# sandbox, a body that is not a JSON object, a second finalize; a wrong bearer is the
# gateway's 404, none the twin's 401. The control API's finalize of a sandbox its agent
# already finalized is a 409 conflict (what `pome run` meets). A local twin (`pome twin
# start`) offers no finalize_run and refuses /_pome/finalize (404), its healthz tool count
# unchanged. The MCP form, through the official SDK: tests/conformance/test-finalize-run.mjs.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
start_pomed

# without its [model] criterion: what the run is graded on here does not hang on a judge
TASK=$(grep -v '^- \[model\]' "$SRC/tests/integration/tasks/triage-login.md")
[[ $TASK != *"[model]"* && $TASK == *"[code:slack]"* ]] || fail "the task lost more than its [model] line"
# create_task TWINS_JSON: a sandbox of those twins with the task; sets SID, TOKEN, CREATED.
create_task() {
        api POST /v1/sandboxes "$(jq -nc --arg t "$TASK" --argjson tw "$1" '{twins: $tw, task_markdown: $t}')"
        assert_status 201 "create with the task"
        CREATED=$BODY
        SID=$(jq -r .session_id <<<"$BODY")
        TOKEN=$(jq -r .session_token <<<"$BODY")
}
rows() { cat "$TMP/state/runs/$1/"*.tape.jsonl 2>/dev/null | wc -l; }

# ---- a sandbox without a task, every twin: refused in the twin's envelope, still open
create_sandbox github slack stripe
NOTASK=$SID
NOTASK_TOKEN=$TOKEN
GH=$(rest_url github)
SL=$(rest_url slack)
ST=$(rest_url stripe)
twin_call POST "$GH/_pome/finalize" "$TOKEN"
assert_status 409 "GitHub, no task"
assert_jq .message "Sandbox $NOTASK has no task to grade against: create it with task_markdown, or finalize it through the control API with one (POST /v1/sandboxes/$NOTASK/finalize {\"task_markdown\": …})."
assert_jq .status 409
assert_jq .documentation_url https://docs.github.com/rest
twin_call POST "$SL/_pome/finalize" "$TOKEN" '{}'
assert_status 409 "Slack, no task"
assert_jq .ok false
assert_jq .error no_task
assert_jq '.response_metadata.messages[0] | startswith("[ERROR] Sandbox '"$NOTASK"' has no task to grade against")' true
twin_call POST "$ST/_pome/finalize" "$(jq -r .provider_credentials.stripe.api_key <<<"$CREATED")"
assert_status 409 "Stripe, no task (its key)"
assert_jq .error.type invalid_request_error
assert_jq '.error.message | contains("no task to grade against")' true
api GET "/v1/sandboxes/$NOTASK"
assert_jq '.state == "ready" or .state == "running"' true "the sandbox without a task stays open"
assert_eq "$(rows "$NOTASK")" 0 "refused finalizes leave no tape row"
pass "no task: 409 in GitHub's, Slack's and Stripe's envelopes; the sandbox stays open"

# ---- a sandbox with the task: refusals that finalize nothing
create_task '["github", "slack"]'
GOOD=$SID
GH=$(rest_url github)
SL=$(rest_url slack)
twin_call POST "$GH/_pome/finalize" "$TOKEN" "{\"session_id\":\"$NOTASK\"}"
assert_status 400 "session_id of another sandbox"
assert_jq .message "session_id does not name this sandbox: this URL and credential are for $GOOD. Leave session_id out, or pass $GOOD."
[[ $BODY != *"$NOTASK"* ]] || fail "the refusal repeats the other sandbox's id: $BODY"
twin_call POST "$GH/_pome/finalize" "$TOKEN" '{"task_markdown":"# Mine"}'
assert_status 400 "a task brought by the caller"
assert_jq '.message | startswith("A run cannot set the task it is graded against")' true
twin_call POST "$GH/_pome/finalize" "$TOKEN" '{"session_id":'
assert_status 400 "a body that is not JSON"
assert_jq .message "Problems parsing JSON"
twin_call POST "$SL/_pome/finalize" "$TOKEN" '[1]'
assert_status 400 "a body that is not an object"
assert_jq .error invalid_arguments
twin_call GET "$GH/_pome/finalize" "$TOKEN"
assert_status 405 "GET"
twin_call POST "$GH/_pome/finalize" "$NOTASK_TOKEN"
assert_status 404 "another sandbox's token"
assert_jq .error.message "No twin pod for this session."
twin_call POST "$GH/_pome/finalize" "ghp_pome_not_a_token"
assert_status 404 "a bad token"
assert_jq .error.message "No twin pod for this session."
twin_call POST "$GH/_pome/finalize" ""
assert_status 401 "no token"
assert_jq .message "Requires authentication"
api GET "/v1/sandboxes/$GOOD"
assert_jq .state ready "refusals leave the sandbox as it was"
pass "refusals: another sandbox's session_id (not repeated), a task, bad bodies, GET, wrong or no bearer"

# ---- the agent's work (REST), then its finalize through Slack's provider token, as a form
twin_call POST "$GH/repos/acme/web/issues/7/assignees" "$TOKEN" '{"assignees":["alice"]}'
assert_status 201 "assign alice"
twin_call POST "$GH/repos/acme/web/issues/7/labels" "$TOKEN" '{"labels":["bug"]}'
assert_status 200 "label bug"
twin_call POST "$GH/repos/acme/web/issues/7/comments" "$TOKEN" '{"body":"The root cause: the SSO callback drops the state cookie."}'
assert_status 201 "comment"
twin_call POST "$SL/chat.postMessage" "$TOKEN" '{"channel":"C_ENG","text":"acme/web#7 is being handled by alice."}'
assert_jq .ok true "post to #eng"
tape_before=$(rows "$GOOD")
XOXB=$(jq -r .provider_credentials.slack.token <<<"$CREATED")
STATUS=$(curl -s -o "$TMP/body" -w '%{http_code}' --data-urlencode "token=$XOXB" \
        --data-urlencode "session_id=$GOOD" "$SL/_pome/finalize")
BODY=$(cat "$TMP/body")
assert_status 200 "finalize with Slack's token as a form field"
assert_jq .ok true
assert_jq .session_id "$GOOD"
assert_jq .run_id "$GOOD"
assert_jq .state done
assert_jq .verdict.state pass
assert_jq .passed true
assert_jq .score 100
assert_jq .verdict.counts.scored 6
assert_jq .read.verdict "/v1/sandboxes/$GOOD/verdict"
assert_jq .message "Sandbox $GOOD is finalized and graded: pass, score 100 (6 of 6 scored criteria passed). The whole verdict: GET /v1/sandboxes/$GOOD/verdict on the control API (with the team's key); the run in words: GET /v1/sandboxes/$GOOD/summary."
ANSWER=$BODY
api GET "/v1/sandboxes/$GOOD"
assert_jq .state done
assert_jq .reason finalized
assert_eq "$(jq -c .verdict <<<"$BODY")" "$(jq -c .verdict <<<"$ANSWER")" "the record's verdict is the answer's"
api GET "/v1/sandboxes/$GOOD/verdict"
assert_status 200 "GET verdict"
assert_eq "$(jq -c '{state, passed, score, counts}' <<<"$BODY")" "$(jq -c .verdict <<<"$ANSWER")" "verdict.json"
RUN=$TMP/state/runs/$GOOD
[[ -s $RUN/summary.md && -s $RUN/verdict.json && -s $RUN/github.final.json ]] || fail "the run is not kept whole: $(ls "$RUN")"
assert_eq "$(rows "$GOOD")" "$tape_before" "the finalize added a tape row"
! grep -q finalize "$RUN"/*.tape.jsonl || fail "a tape names the finalize"
"$POME" eval "$RUN" --json | cmp - "$RUN/verdict.json" || fail "pome eval does not give pomed's verdict"
assert_eq "$(used)" 1 "slots after the agent's finalize (the sandbox without a task holds the other)"
grep -q "$GOOD: finalize asked from inside the run (POST /_pome/finalize of the slack twin)" "$TMP/pomed.log" ||
        fail "the finalize is not logged"
pass "POST …/_pome/finalize graded the run (pass, 100), the record and verdict.json agree, no tape row, pome eval agrees"

# ---- after it: a second finalize (twin, control API), twin calls
twin_call POST "$GH/_pome/finalize" "$TOKEN"
assert_status 409 "a second finalize"
assert_jq .message "Sandbox $GOOD has been finalized already: a run is graded once. Its verdict: GET /v1/sandboxes/$GOOD/verdict on the control API (its summary is in these details)."
twin_call POST "$SL/_pome/finalize" "$TOKEN"
assert_status 409 "a second finalize, Slack"
assert_jq .error already_finalized
twin_call GET "$GH/repos/acme/web/issues/7" "$TOKEN"
assert_status 410 "a twin call after the finalize"
api POST "/v1/sandboxes/$GOOD/finalize"
assert_status 409 "the control API's finalize after the agent's"
assert_jq .error.type conflict
assert_jq .error.message "Sandbox $GOOD has ended (done: finalized)."
assert_jq .error.details.state done
assert_jq .error.details.reason finalized
echo "control API finalize after the agent's: $STATUS $BODY"
set +e
"$POME" sandbox finalize "$GOOD" >"$TMP/fin.out" 2>"$TMP/fin.err"
rc=$?
set -e
echo "pome sandbox finalize after the agent's: exit $rc: $(cat "$TMP/fin.err")"
pass "a second finalize: 409 already_finalized (twins), 409 conflict (control API); the twins answer 410"

# ---- a local twin: no supervisor, no task, nothing to finalize
"$POME" twin start github --port 0 >"$TMP/twin.out" 2>"$TMP/twin.err" &
EXTRA_PIDS+=("$!")
for _ in $(seq 100); do grep -q "rest_url" "$TMP/twin.out" 2>/dev/null && break; sleep 0.05; done
grep -q rest_url "$TMP/twin.out" || fail "pome twin start printed nothing: $(cat "$TMP/twin.err")"
REST=$(awk '$1 == "rest_url" { print $2 }' "$TMP/twin.out")
TOK=$(awk '$1 == "token" { print $2 }' "$TMP/twin.out")
twin_call GET "${REST%/s/*}/healthz" ""
tools=$(jq .tools <<<"$BODY")
twin_call GET "$REST/mcp/tools" "$TOK"
assert_eq "$(jq '.tools | length' <<<"$BODY")" "$tools" "healthz.tools = the MCP tool count"
assert_jq '[.tools[].name] | index("finalize_run")' null "a local twin lists no finalize_run"
twin_call POST "$REST/mcp" "$TOK" '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"finalize_run","arguments":{}}}'
assert_status 200 "finalize_run on a local twin"
assert_jq .error.code -32602
assert_jq .error.message "Unknown tool: finalize_run"
twin_call POST "$REST/_pome/finalize" "$TOK"
assert_status 404 "/_pome/finalize on a local twin"
assert_jq '.message | startswith("This twin runs alone (pome twin start): there is no sandbox run to finalize or grade.")' true
pass "a local twin: finalize_run not offered (healthz.tools unchanged), /_pome/finalize 404"
