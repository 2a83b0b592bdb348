#!/usr/bin/env bash
# `pome twin start`: a local twin with no pomed and no account — /healthz, the
# token it prints, the vendor's 401s, the tape, and the loopback-only admin routes
# (the whole process/wire contract: test-twin-contract.sh).
source "$POME_SOURCE_DIR/tests/integration/lib.sh"

"$POME" twin start github --port 0 >"$TMP/twin.out" 2>"$TMP/twin.err" &
TWIN_PID=$!
EXTRA_PIDS+=("$TWIN_PID")
for _ in $(seq 100); do grep -q "rest_url" "$TMP/twin.out" 2>/dev/null && break; sleep 0.05; done
grep -q rest_url "$TMP/twin.out" || fail "pome twin start printed nothing: $(cat "$TMP/twin.err")"
REST=$(awk '$1 == "rest_url" { print $2 }' "$TMP/twin.out")
TOK=$(awk '$1 == "token" { print $2 }' "$TMP/twin.out")
BASE=${REST%/s/*}

twin_call GET "$BASE/healthz" ""
assert_status 200 "/healthz without auth"
assert_jq .ok true
assert_jq .twin github
tools=$(jq .tools <<<"$BODY")
[[ $tools -gt 3 ]] || fail "/healthz counts $tools tools"

twin_call GET "$REST/repos/acme/api/issues/1" ""
assert_status 401 "no token"
assert_jq .message "Requires authentication"
twin_call GET "$REST/repos/acme/api/issues/1" "ghp_not_a_real_token"
assert_status 401 "a bad token"
assert_jq .message "Bad credentials"
twin_call GET "$REST/repos/acme/api/issues/1" "$TOK"
assert_status 200 "the printed token"
assert_jq .number 1
twin_call POST "$REST/repos/acme/api/issues/1/comments" "$TOK" '{"body":"local comment"}'
assert_status 201 "a write"
twin_call GET "$REST/_pome/events" "$TOK"
assert_eq "$(jq length <<<"$BODY")" 2 "tape rows"
assert_jq '.[1].tool' add_issue_comment
assert_jq '.[1].state_mutation' true
pass "local twin: healthz, 401s in GitHub's envelope, token, tape"

twin_call POST "$REST/mcp" "$TOK" '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"issue_read","arguments":{"method":"get","owner":"acme","repo":"api","issue_number":1}}}'
assert_status 200 "MCP tools/call"
assert_jq .result.isError false
assert_jq '.result.structuredContent.comments' 1 "MCP sees the REST write"

twin_call POST "$BASE/admin/reset" ""
assert_status 200 "admin reset from loopback"
twin_call GET "$REST/repos/acme/api/issues/1" "$TOK"
assert_jq .comments 0 "the world after reset"
twin_call POST "$BASE/admin/token" "" '{"sid":"ses_other"}'
assert_status 200 "mint a token for another session"
other=$(jq -r .session_token <<<"$BODY")
twin_call GET "$BASE/s/ses_other/repos/acme/api" "$other"
assert_status 200 "the other session's token on its own mount"
twin_call GET "$REST/repos/acme/api" "$other"
assert_status 401 "the other session's token on this mount (hosted Pome's sid-mismatch pin)"
assert_jq .message Forbidden "hosted Pome's words for a good token of another session"
pass "admin reset and token"

"$POME" twin start gitlab >/dev/null 2>&1 && fail "an unknown twin started"
"$POME" twin start >/dev/null 2>&1 && fail "no twin name accepted"
kill "$TWIN_PID"
wait "$TWIN_PID" || true
pass "usage errors"
