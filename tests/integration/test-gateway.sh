#!/usr/bin/env bash
# The twin gateway's refusals and its tape: a wrong token and a right token on
# another sandbox's URL get the same 404 body; no token gets the twin's own 401
# envelope; /_pome reads add no row; authorization never reaches a tape
# unredacted; unsupported routes are a loud 501.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
start_pomed

create_sandbox github slack
A=$SID A_TOKEN=$TOKEN A_GH=$(rest_url github) A_SL=$(rest_url slack) CREATED_A=$CREATED
A_GHP=$(jq -r .provider_credentials.github.token <<<"$CREATED")
A_XOXB=$(jq -r .provider_credentials.slack.token <<<"$CREATED")
create_sandbox github
B=$SID B_TOKEN=$TOKEN B_GH=$(rest_url github)

twin_call GET "$B_GH/repos/acme/api/issues/1" "$A_TOKEN"
assert_status 404 "A's token on B's URL"
other=$BODY
twin_call GET "$B_GH/repos/acme/api/issues/1" "not-a-token"
assert_status 404 "a wrong token"
assert_eq "$BODY" "$other" "the two 404 bodies"
assert_jq .error.message "No twin pod for this session."
twin_call GET "$B_GH/repos/acme/api/issues/1" "$A_GHP"
assert_status 404 "A's ghp_ token on B's URL"
assert_eq "$BODY" "$other" "the provider-token 404 body"
twin_call GET "$A_SL/auth.test" "$A_GHP"
assert_status 404 "a GitHub token on the Slack twin"
twin_call GET "${A_GH/github/stripe}/v1/customers" "$A_TOKEN"
assert_status 404 "a twin the sandbox does not hold"
twin_call GET "${A_GH/$A/ses_doesnotexist}/repos/acme/api" "$A_TOKEN"
assert_status 404 "an unknown sandbox id"
assert_eq "$BODY" "$other" "unknown sandbox 404 body"
pass "wrong token, other sandbox's URL, unknown sandbox: one opaque 404"

twin_call GET "$A_GH/repos/acme/api/issues/1" ""
assert_status 401 "GitHub without a token"
assert_jq .message "Requires authentication"
assert_jq .status 401
open_body=$BODY
# No oracle: without a credential an unknown or an ended sandbox answers exactly the same.
twin_call GET "${A_GH/$A/ses_doesnotexist}/repos/acme/api/issues/1" ""
assert_status 401 "an unknown sandbox without a token"
assert_eq "$BODY" "$open_body" "no-token body for an unknown sandbox"
create_sandbox github
ENDED=$SID ENDED_GH=$(rest_url github)
discard "$ENDED"
twin_call GET "$ENDED_GH/repos/acme/api/issues/1" ""
assert_status 401 "an ended sandbox without a token"
assert_eq "$BODY" "$open_body" "no-token body for an ended sandbox"
twin_call POST "$A_SL/auth.test" ""
assert_status 401 "Slack without a token"
assert_jq .ok false
assert_jq .error not_authed
pass "no token: each twin's own 401 envelope"

# Auth forms the official SDKs use: any-case scheme, "token", provider tokens, ?token=.
STATUS=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: token $A_GHP" "$A_GH/repos/acme/api")
assert_eq "$STATUS" 200 "Authorization: token ghp_pome_…"
STATUS=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: BEARER $A_TOKEN" "$A_GH/repos/acme/api")
assert_eq "$STATUS" 200 "Authorization: BEARER (any case)"
twin_call POST "$A_SL/api/auth.test?token=$A_XOXB" ""
assert_status 200 "Slack ?token= at /api/auth.test"
assert_jq .ok true
twin_call POST "$A_SL/auth.test" "" "token=$A_XOXB" application/x-www-form-urlencoded
assert_jq .ok true "Slack token as a form field"
pass "bearer, token scheme, provider tokens, Slack token parameter"

twin_call GET "$A_GH/_pome/events" "$A_TOKEN"
n=$(jq length <<<"$BODY")
twin_call GET "$A_GH/_pome/health" "$A_TOKEN"
assert_jq .ok true
twin_call GET "$A_GH/_pome/state" "$A_TOKEN"
assert_status 200 "/_pome/state"
twin_call GET "$A_GH/_pome/events" "$A_TOKEN"
assert_eq "$(jq length <<<"$BODY")" "$n" "rows after reading /_pome/*"
pass "/_pome/health, state and events add no row"

twin_call GET "$(jq -r .per_twin.github.openapi_url <<<"$CREATED_A")" "$A_TOKEN"
assert_status 200 "the GitHub twin's openapi_url"
assert_jq .openapi 3.1.0
assert_jq '.servers[0].url' "$A_GH" "OpenAPI server URL"
assert_jq '.paths["/repos/{owner}/{repo}/issues/{issue_number}/assignees"].post.operationId' \
        add_issue_assignees
twin_call GET "$(jq -r .per_twin.slack.openapi_url <<<"$CREATED_A")" "$A_TOKEN"
assert_jq '.paths["/chat.postMessage"].post.operationId' slack_send_message
pass "openapi_url documents the routes each twin serves"

twin_call GET "$A_GH/repos/acme/api/no/such/route" "$A_TOKEN"
assert_status 501 "an unsupported route"
assert_jq .fidelity unsupported
twin_call GET "$A_GH/_pome/events" "$A_TOKEN"
assert_jq '.[-1].fidelity' unsupported "the 501 is on the tape"
assert_jq '.[-1].status' 501
pass "unsupported route: loud 501, recorded"

curl -s -o /dev/null -H "Authorization: Bearer $A_TOKEN" -H "Cookie: session=hunter2" \
        -H "Content-Type: application/json" \
        -d "{\"body\":\"my key is $A_GHP and the password field\",\"password\":\"hunter2\"}" \
        "$A_GH/repos/acme/api/issues/1/comments"
tape=$TMP/state/runs/$A/github.tape.jsonl
for secret in "$A_TOKEN" "$A_GHP" hunter2; do
        grep -qF "$secret" "$tape" && fail "a secret reached the tape file: ${secret:0:12}…"
done
row=$(tail -1 "$tape")
assert_eq "$(jq -r .request_headers.authorization <<<"$row")" "[REDACTED]" "authorization header"
assert_eq "$(jq -r .request_headers.cookie <<<"$row")" "[REDACTED]" "cookie header"
assert_eq "$(jq -r .request_body.password <<<"$row")" "[REDACTED]" "password field"
[[ $(jq -r .request_body.body <<<"$row") == "my key is [REDACTED] and the password field" ]] ||
        fail "token-looking string not scrubbed: $(jq -r .request_body.body <<<"$row")"
pass "authorization, cookie, secret fields and token-looking strings are redacted on the tape"

discard "$A"
twin_call GET "$A_GH/repos/acme/api/issues/1" "$A_TOKEN"
assert_status 410 "a call to an ended sandbox"
assert_jq .error.type session_expired
discard "$B"
