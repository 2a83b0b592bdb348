#!/usr/bin/env bash
# The vendors' own names (issue 24), the gateway's and a local twin's part: a request whose
# Host is api.github.com, github.com, slack.com (or below it), api.stripe.com,
# gmail.googleapis.com or api.linear.app — what pome's
# TLS forwards from a sealed agent's pod — goes to that vendor's twin of the sandbox its
# credential names, the whole path below the twin: the vendor's own paths and credentials,
# the tape recording every call, the URLs the twin writes at the vendor's origin. Another
# sandbox's credential reaches only its own sandbox; a bad one gets the vendor's 401, none
# the vendor's 401, an ended sandbox's 410; a host no vendor's is the gateway's 404. The
# mounts and Stripe's /v1 on the gateway's own host answer as before. Then `pome twin start`.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
start_pomed
PORT=${GATEWAY##*:}

# vcall HOST METHOD PATH AUTH [BODY] [CONTENT-TYPE]: a call to the gateway (or to $VBASE when
# set) under Host HOST with Authorization AUTH (none when empty); sets STATUS, BODY and the
# response head in $TMP/head.
vcall() {
        local host=$1 method=$2 path=$3 auth=$4 data=${5:-} ctype=${6:-application/json}
        local args=(-s -o "$TMP/body" -D "$TMP/head" -w '%{http_code}' -X "$method" -H "Host: $host")
        [[ -n $auth ]] && args+=(-H "Authorization: $auth")
        [[ -n $data ]] && args+=(-H "Content-Type: $ctype" --data-binary "$data")
        STATUS=$(curl "${args[@]}" "${VBASE:-$GATEWAY}$path")
        BODY=$(cat "$TMP/body")
}

# stop_twin: ends the local twin $TWIN_PID, which must leave no sanitizer report.
stop_twin() {
        kill "$TWIN_PID"
        wait "$TWIN_PID" || true
        if grep -qE "AddressSanitizer|LeakSanitizer|runtime error:" "$TMP/twin.err"; then
                fail "sanitizer report from pome twin start: $(head -30 "$TMP/twin.err")"
        fi
}

# tape SID TWIN: the twin's tape rows in sandbox SID, through the control API, into BODY.
tape() {
        api GET "/v1/sandboxes/$1/events?twin=$2"
        assert_status 200 "the $2 tape of $1"
}

create_sandbox github slack stripe
A=$SID A_JWT=$TOKEN A_GH=$(rest_url github)
A_GHP=$(jq -r .provider_credentials.github.token <<<"$CREATED")
A_XOXB=$(jq -r .provider_credentials.slack.token <<<"$CREATED")
A_SK=$(jq -r .provider_credentials.stripe.api_key <<<"$CREATED")
create_sandbox github slack stripe
B=$SID
B_GHP=$(jq -r .provider_credentials.github.token <<<"$CREATED")
B_XOXB=$(jq -r .provider_credentials.slack.token <<<"$CREATED")
B_SK=$(jq -r .provider_credentials.stripe.api_key <<<"$CREATED")

# ---- GitHub at api.github.com
vcall api.github.com GET /repos/acme/api/issues/1 "token $A_GHP"
assert_status 200 "GET /repos/acme/api/issues/1 at api.github.com"
assert_jq .number 1
assert_jq .url https://api.github.com/repos/acme/api/issues/1 "the issue's url at the vendor's origin"
assert_jq .html_url https://github.com/acme/api/issues/1
assert_jq .repository_url https://api.github.com/repos/acme/api
vcall api.github.com POST /repos/acme/api/issues/1/comments "Bearer $A_GHP" '{"body":"by name"}'
assert_status 201 "a comment at api.github.com"
assert_jq .body "by name"
[[ $(jq -r .url <<<"$BODY") == https://api.github.com/repos/acme/api/issues/comments/* ]] ||
        fail "the comment's url: $(jq -r .url <<<"$BODY")"
vcall api.github.com GET "/orgs/acme/repos?per_page=1" "Bearer $A_GHP"
assert_status 200 "a paginated list"
grep -qiF '<https://api.github.com/orgs/acme/repos?per_page=1&page=2>; rel="next"' "$TMP/head" ||
        fail "the Link header does not lead back by name: $(grep -i '^link' "$TMP/head")"
# the session JWT serves every twin; any case, a port, a trailing dot; curl's own Host
vcall API.GitHub.COM:443 GET /repos/acme/api "Bearer $A_JWT"
assert_status 200 "the session token, Host in capitals with a port"
assert_jq .full_name acme/api
vcall api.github.com. GET /repos/acme/api "token $A_GHP"
assert_status 200 "Host with a trailing dot"
code=$(curl -s -o "$TMP/body" -w '%{http_code}' -H "Authorization: token $A_GHP" \
        --resolve "api.github.com:$PORT:127.0.0.1" "http://api.github.com:$PORT/repos/acme/api/issues/1")
assert_eq "$code" 200 "curl --resolve api.github.com"
# /_pome and MCP are the twin's too, and what they write is at the vendor's origin
vcall api.github.com GET /_pome/health "token $A_GHP"
assert_status 200 "/_pome/health by name"
assert_jq .twin github
vcall api.github.com POST /mcp "Bearer $A_GHP" \
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"issue_read","arguments":{"method":"get","owner":"acme","repo":"api","issue_number":1}}}'
assert_status 200 "MCP by name"
assert_jq .result.structuredContent.comments 1 "MCP sees the comment made by name"
vcall api.github.com POST /_pome/finalize "token $A_GHP" '{}'
assert_status 409 "a finalize by name, of a sandbox without a task"
[[ $BODY == *"has no task to grade against"* ]] || fail "not the gateway's finalize: $BODY"
# github.com is the web site and git: what the twin does not serve is its loud 501
vcall github.com GET /acme/api "token $A_GHP"
assert_status 501 "github.com/acme/api"
assert_jq .fidelity unsupported
vcall github.com GET /repos/acme/api/issues/1 "token $A_GHP"
assert_status 200 "github.com routes to the GitHub twin"
pass "GitHub by name: vendor paths, provider token and session token, urls and Link at https://api.github.com"

# ---- Slack at slack.com and its subdomains
vcall slack.com POST /api/chat.postMessage "Bearer $A_XOXB" 'channel=general&text=by%20name' \
        application/x-www-form-urlencoded
assert_status 200 "chat.postMessage at slack.com/api"
assert_jq .ok true
assert_jq .message.text "by name"
vcall slack.com POST /api/auth.test "" "token=$A_XOXB" application/x-www-form-urlencoded
assert_jq .ok true "Slack's token as a form field, by name"
vcall files.slack.com GET "/api/auth.test?token=$A_XOXB" ""
assert_jq .ok true "?token= at files.slack.com"
vcall Slack.COM POST /api/conversations.history "Bearer $A_XOXB" '{"channel":"general"}'
assert_jq .ok true "a JSON body, by name"
assert_jq '.messages[0].text' "by name" "the message posted by name"
# files.getUploadURLExternal by name: its upload_url leads back to slack.com, pre-signed, so
# the bytes go with no credential (the keyed route finds the sandbox by the URL's token)
vcall slack.com POST /api/files.getUploadURLExternal "Bearer $A_XOXB" 'filename=n.txt&length=3' \
        application/x-www-form-urlencoded
assert_jq .ok true "files.getUploadURLExternal by name"
up=$(jq -r .upload_url <<<"$BODY")
fid=$(jq -r .file_id <<<"$BODY")
[[ $up == https://slack.com/_upload/"$fid"'?token=xoxu-pome-'* ]] || fail "the upload_url by name: $up"
vcall slack.com POST "${up#https://slack.com}" "" 'hi\n' application/octet-stream
assert_status 200 "the bytes to the pre-signed upload_url, no credential"
assert_jq .ok true
vcall slack.com POST "/api/files.completeUploadExternal" "Bearer $A_XOXB" \
        "files=%5B%7B%22id%22%3A%22$fid%22%7D%5D" application/x-www-form-urlencoded
assert_jq .ok true "files.completeUploadExternal by name"
vcall slack.com POST "/api/chat.postMessage?${up#*\?}" "" 'channel=general&text=x' \
        application/x-www-form-urlencoded
assert_status 401 "the upload token by name posts no message"
assert_jq .error invalid_auth "the upload token by name is Slack's invalid_auth elsewhere"
pass "Slack by name: /api/{method} at slack.com and below it, bearer, form field, ?token=, a pre-signed upload_url"

# ---- Stripe at api.stripe.com
code=$(curl -s -o "$TMP/body" -w '%{http_code}' -H "Host: api.stripe.com" -u "$A_SK:" \
        -d email=byname@example.com "$GATEWAY/v1/customers")
assert_eq "$code" 200 "POST /v1/customers at api.stripe.com (Basic)"
CUS=$(jq -r .id "$TMP/body")
[[ $CUS == cus_* ]] || fail "no customer: $(cat "$TMP/body")"
vcall api.stripe.com GET /v1/customers "$A_SK"
assert_status 200 "the raw key, by name"
assert_jq .object list
assert_jq '.data[0].id' "$CUS"
vcall api.stripe.com:443 GET "/v1/customers/$CUS" "Bearer $A_SK"
assert_jq .email byname@example.com
pass "Stripe by name: /v1 at api.stripe.com, Basic, raw key and bearer"

# ---- the tapes record every call made by name
tape "$A" github
assert_jq '[.[] | select(.tool == "add_issue_comment")] | length' 1 "the comment on A's GitHub tape"
assert_jq '[.[] | select(.tool == "add_issue_comment")][0].path' /repos/acme/api/issues/1/comments
assert_jq '[.[] | select(.tool == "add_issue_comment")][0].state_mutation' true
assert_jq '[.[] | select(.path == "/acme/api")][0].fidelity' unsupported "the 501 on the tape"
grep -qF "$A_GHP" "$TMP/state/runs/$A/github.tape.jsonl" && fail "a credential reached the tape"
tape "$A" slack
assert_jq '[.[] | select(.path == "/api/chat.postMessage")][0].status' 200 "chat.postMessage on A's tape"
assert_jq '[.[] | select(.path == "/api/chat.postMessage")][0].state_mutation' true
tape "$A" stripe
assert_jq '[.[] | select(.tool == "create_customer")] | length' 1 "the customer on A's Stripe tape"
pass "A's tapes hold the calls made by name"

# ---- another sandbox's credential reaches only its own sandbox
for t in github slack stripe; do
        tape "$B" "$t"
        assert_eq "$(jq length <<<"$BODY")" 0 "B's $t tape before any call"
done
vcall api.github.com GET /repos/acme/api/issues/1 "token $B_GHP"
assert_status 200 "B's token by name"
assert_jq .comments 0 "B's world has no comment from A"
vcall slack.com POST /api/conversations.history "Bearer $B_XOXB" '{"channel":"general"}'
[[ $(jq -r '[.messages[] | select(.text == "by name")] | length' <<<"$BODY") == 0 ]] ||
        fail "A's message is in B's channel: $BODY"
vcall api.stripe.com GET /v1/customers "Bearer $B_SK"
assert_jq '.data | length' 0 "B's Stripe has no customer of A's"
tape "$B" github
assert_eq "$(jq length <<<"$BODY")" 1 "B's GitHub tape: its own call"
tape "$A" github
a_rows=$(jq length <<<"$BODY")
vcall api.github.com GET /repos/acme/api/issues/1 "token $B_GHP"
tape "$A" github
assert_eq "$(jq length <<<"$BODY")" "$a_rows" "A's tape after B's call"
pass "B's credentials by name reach B's twins only"

# ---- refusals in the vendor's words
vcall api.github.com GET /repos/acme/api/issues/1 ""
assert_status 401 "GitHub by name without a credential"
assert_jq .message "Requires authentication"
vcall api.github.com GET /repos/acme/api/issues/1 "token ghp_pome_bogus"
assert_status 401 "GitHub by name with a bad token"
assert_jq .message "Bad credentials"
vcall api.github.com GET /repos/acme/api/issues/1 "Bearer $A_XOXB"
assert_status 401 "a Slack token at api.github.com"
assert_jq .message "Bad credentials"
vcall api.github.com GET /repos/acme/api/issues/1 "Digest x"
assert_status 401 "an unknown scheme at api.github.com"
assert_jq .message "Bad credentials"
vcall slack.com POST /api/auth.test ""
assert_status 401 "Slack by name without a token"
assert_jq .error not_authed
vcall slack.com POST /api/auth.test "Bearer xoxb-pome-bogus"
assert_status 401 "Slack by name with a bad token"
assert_jq .error invalid_auth
vcall api.stripe.com GET /v1/customers ""
assert_status 401 "Stripe by name without a key"
assert_jq .error.type invalid_request_error
vcall api.stripe.com GET /v1/customers "Bearer sk_test_pome_bogus"
assert_status 401 "Stripe by name with a bad key"
assert_jq .error.type invalid_request_error
# the HTTP layer's own refusals are in the vendor's envelope too
code=$(curl -s -o "$TMP/body" -w '%{http_code}' -H "Host: api.github.com" -H "Authorization: token a" \
        -H "Authorization: token b" "$GATEWAY/repos/acme/api")
assert_eq "$code" 400 "two Authorization headers"
jq -e '.message and .documentation_url' "$TMP/body" >/dev/null ||
        fail "the layer's 400 by name is not GitHub's envelope: $(cat "$TMP/body")"
# a twin the sandbox lacks
create_sandbox github
ONLY_GH=$SID ONLY_JWT=$TOKEN
vcall slack.com POST /api/auth.test "Bearer $ONLY_JWT"
assert_status 404 "slack.com for a sandbox without Slack"
assert_jq .error.message "No twin pod for this session."
discard "$ONLY_GH"
pass "no, bad or another twin's credential: the vendor's 401; a twin the sandbox lacks: 404"

# ---- an ended sandbox's credential
create_sandbox github slack stripe
C=$SID
C_GHP=$(jq -r .provider_credentials.github.token <<<"$CREATED")
C_XOXB=$(jq -r .provider_credentials.slack.token <<<"$CREATED")
C_SK=$(jq -r .provider_credentials.stripe.api_key <<<"$CREATED")
discard "$C"
vcall api.github.com GET /repos/acme/api/issues/1 "token $C_GHP"
assert_status 410 "an ended sandbox at api.github.com"
assert_jq .error.type session_expired
assert_jq .error.details.session_id "$C"
vcall slack.com POST /api/auth.test "Bearer $C_XOXB"
assert_status 410 "an ended sandbox at slack.com"
vcall api.stripe.com GET /v1/customers "$C_SK"
assert_status 410 "an ended sandbox at api.stripe.com"
pass "an ended sandbox by name: 410"

# ---- not a vendor's name: the gateway's own routes, as before
vcall evil.example GET /repos/acme/api/issues/1 "token $A_GHP"
assert_status 404 "Host: evil.example"
assert_jq .error.type not_found
[[ $(jq -r .error.message <<<"$BODY") == "Twin URLs look like /{twin}/s/{session_id}/"* ]] ||
        fail "not the gateway's 404: $BODY"
vcall www.github.com GET /repos/acme/api/issues/1 "token $A_GHP"
assert_status 404 "Host: www.github.com"
vcall api.github.com.evil.example GET /repos/acme/api "token $A_GHP"
assert_status 404 "a vendor's name inside another"
twin_call GET "$A_GH/repos/acme/api/issues/1" "$A_GHP"
assert_status 200 "the mount on the gateway's own host"
assert_jq .comments 1
assert_jq .url "$A_GH/repos/acme/api/issues/1" "urls at the mount on the gateway's own host"
code=$(curl -s -o "$TMP/body" -w '%{http_code}' -u "$A_SK:" "$GATEWAY/v1/customers")
assert_eq "$code" 200 "Stripe's /v1 keyed on the gateway's own host"
jq -e --arg c "$CUS" '.data[0].id == $c' "$TMP/body" >/dev/null || fail "keyed /v1: $(cat "$TMP/body")"
code=$(curl -s -o "$TMP/body" -w '%{http_code}' -u "sk_test_pome_bogus:" "$GATEWAY/v1/customers")
assert_eq "$code" 401 "keyed /v1 with a bad key"
pass "Host: evil.example and the like: the gateway's 404; mounts and keyed /v1 unchanged"

# ---- the counters name the twin a request by name was for
metrics=$(curl -s -H "Authorization: Bearer $API_KEY" "$CONTROL/metrics")
grep -qE '^pome_gateway_requests_total\{twin="github",code="400"\} [1-9]' <<<"$metrics" ||
        fail "the layer's 400 by name is not counted for github: $(grep gateway_requests <<<"$metrics")"
grep -qE '^pome_gateway_requests_total\{twin="slack",code="200"\} [1-9]' <<<"$metrics" ||
        fail "Slack by name is not counted: $(grep gateway_requests <<<"$metrics")"
pass "/metrics counts requests by name under their twin"
discard "$A"
discard "$B"

# ---- Gmail at gmail.googleapis.com and Linear at api.linear.app, as their SDKs call them:
#      googleapis' Bearer ya29.… token, @linear/sdk's API key with no scheme; each keyed
#      path also on the gateway's own host (googleapis drops a rootUrl's path, @linear/sdk
#      may post to /graphql at the root)
create_sandbox gmail linear
C=$SID
C_YA=$(jq -r .provider_credentials.gmail.token <<<"$CREATED")
C_LIN=$(jq -r .provider_credentials.linear.token <<<"$CREATED")
create_sandbox gmail linear
D=$SID D_YA=$(jq -r .provider_credentials.gmail.token <<<"$CREATED")
[[ $C_YA == ya29.pome-* && $C_LIN == lin_api_pome_* ]] || fail "credentials: '$C_YA', '$C_LIN'"
vcall gmail.googleapis.com GET /gmail/v1/users/me/profile "Bearer $C_YA"
assert_status 200 "users.getProfile at gmail.googleapis.com"
assert_jq .emailAddress pome-agent@pome-twin.test
vcall gmail.googleapis.com POST /gmail/v1/users/me/labels "Bearer $C_YA" '{"name":"By name"}'
assert_status 200 "labels.create at gmail.googleapis.com"
vcall "127.0.0.1:$PORT" GET /gmail/v1/users/me/labels "Bearer $C_YA"
assert_status 200 "labels.list at the gateway's root /gmail/v1"
[[ $(jq '[.labels[] | select(.name == "By name")] | length' <<<"$BODY") == 1 ]] ||
        fail "C's label is not in C's mailbox by the root path: $BODY"
vcall gmail.googleapis.com GET /gmail/v1/users/me/labels "Bearer $D_YA"
[[ $(jq '[.labels[] | select(.name == "By name")] | length' <<<"$BODY") == 0 ]] ||
        fail "D's token by name sees C's label: $BODY"
vcall gmail.googleapis.com GET /gmail/v1/users/me/profile "Bearer ya29.pome-nope"
assert_status 401 "a bad token at gmail.googleapis.com"
assert_jq .error.status UNAUTHENTICATED
vcall gmail.googleapis.com GET /gmail/v1/users/me/profile ""
assert_status 401 "no token at gmail.googleapis.com"
vcall api.linear.app POST /graphql "$C_LIN" '{"query":"{ viewer { email } teams { nodes { key } } }"}'
assert_status 200 "a GraphQL query at api.linear.app with the bare API key"
assert_jq .data.viewer.email admin@pome-twin.test
assert_jq '.data.teams.nodes[0].key' ENG
vcall "127.0.0.1:$PORT" POST /graphql "Bearer $C_LIN" \
        '{"query":"mutation { issueLabelCreate(input: {name: \"Routed\", teamId: \"team_eng\"}) { success } }"}'
assert_status 200 "a GraphQL mutation at the gateway's root /graphql"
assert_jq .data.issueLabelCreate.success true
vcall mcp.linear.app POST /mcp "Bearer $C_LIN" \
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_teams","arguments":{}}}'
assert_status 200 "list_teams at mcp.linear.app/mcp, Linear's MCP server's address"
[[ $(jq -r '.result.content[0].text | fromjson | .teams[0].key' <<<"$BODY") == ENG ]] ||
        fail "list_teams by name: $(head -c 300 <<<"$BODY")"
vcall api.linear.app POST /graphql "lin_api_pome_nope" '{"query":"{ viewer { id } }"}'
assert_status 401 "a bad key at api.linear.app"
assert_jq '.errors[0].extensions.code' AUTHENTICATION_ERROR
tape "$C" gmail
[[ $(jq '[.[] | select(.tool == "create_label")] | length' <<<"$BODY") == 1 ]] ||
        fail "C's gmail tape lacks the label made by name: $(head -c 300 <<<"$BODY")"
tape "$C" linear
[[ $(jq '[.[] | select(.tool == "create_issue_label")] | length' <<<"$BODY") == 1 ]] ||
        fail "C's linear tape lacks the label made at the root: $(head -c 300 <<<"$BODY")"
for f in gmail linear; do
        [[ -s $TMP/state/runs/$C/$f.tape.jsonl ]] || fail "C has no $f tape file"
        grep -qE "ya29\.pome-|lin_api_pome_" "$TMP/state/runs/$C/$f.tape.jsonl" &&
                fail "a Gmail or Linear credential reached C's $f tape"
done
pass "Gmail and Linear by name and by keyed root path: their SDKs' credentials, their sandbox only, their 401s, on the tape"
discard "$C"
discard "$D"
stop_pomed || fail "pomed did not stop cleanly"

# ---- a local twin (`pome twin start`): its own vendor's names, keyed by its tokens
"$POME" twin start slack --port 0 >"$TMP/twin.out" 2>"$TMP/twin.err" &
TWIN_PID=$!
EXTRA_PIDS+=("$TWIN_PID")
for _ in $(seq 100); do grep -q "rest_url" "$TMP/twin.out" 2>/dev/null && break; sleep 0.05; done
grep -q rest_url "$TMP/twin.out" || fail "pome twin start printed nothing: $(cat "$TMP/twin.err")"
REST=$(awk '$1 == "rest_url" { print $2 }' "$TMP/twin.out")
TOK=$(awk '$1 == "token" { print $2 }' "$TMP/twin.out")
VBASE=${REST%/s/*}
twin_call POST "$VBASE/admin/token" "" '{"sid":"ses_other"}'
assert_status 200 "a token for another session"
OTHER=$(jq -r .provider_token <<<"$BODY")
[[ $OTHER == xoxb-pome-* ]] || fail "no provider token for ses_other: $BODY"

vcall slack.com POST /api/chat.postMessage "Bearer $TOK" 'channel=general&text=local%20by%20name' \
        application/x-www-form-urlencoded
assert_status 200 "chat.postMessage at slack.com, local"
assert_jq .ok true
vcall hooks.slack.com:443 POST /api/auth.test "Bearer $OTHER"
assert_jq .ok true "another session's token by name"
vcall slack.com POST /api/auth.test ""
assert_status 401 "no token by name, local"
assert_jq .error not_authed
vcall slack.com POST /api/auth.test "Bearer xoxb-pome-bogus"
assert_status 401 "a bad token by name, local"
assert_jq .error invalid_auth
# by name the whole path is the twin's: no /healthz, no /admin of ours
vcall slack.com GET /healthz ""
assert_status 401 "/healthz by name is the twin's, behind its auth"
vcall slack.com POST /admin/reset "Bearer $TOK"
assert_status 501 "/admin/reset by name is the twin's: not served"
vcall slack.com GET /_pome/events "Bearer $TOK"
assert_status 200 "the tape by name"
assert_jq '[.[] | select(.path == "/api/chat.postMessage")][0].tool' slack_send_message
assert_jq '[.[] | select(.path == "/api/chat.postMessage")][0].run_id' "${REST##*/s/}"
assert_jq '[.[] | select(.path == "/api/auth.test" and .status == 200)] | length' 1 \
        "the other session's call is on the tape"
# another vendor's name, or none: today's answers
vcall api.github.com GET /repos/acme/api/issues/1 "Bearer $TOK"
assert_status 404 "another vendor's name at the Slack twin"
assert_jq .error unknown_method
unknown=$BODY
vcall 127.0.0.1 GET /repos/acme/api/issues/1 "Bearer $TOK"
assert_status 404 "an unknown route"
assert_eq "$BODY" "$unknown" "another vendor's name answers as an unknown route"
vcall evil.example GET /healthz ""
assert_status 200 "/healthz under another name"
twin_call POST "$REST/auth.test" "$TOK"
assert_jq .ok true "the mount, as before"
stop_twin
pass "local twin: its vendor's names keyed by token; another vendor's name is no route"

# Stripe locally: api.stripe.com, and /v1 on its own host as before
"$POME" twin start stripe --port 0 >"$TMP/twin.out" 2>"$TMP/twin.err" &
TWIN_PID=$!
EXTRA_PIDS+=("$TWIN_PID")
for _ in $(seq 100); do grep -q "rest_url" "$TMP/twin.out" 2>/dev/null && break; sleep 0.05; done
REST=$(awk '$1 == "rest_url" { print $2 }' "$TMP/twin.out")
SK=$(awk '$1 == "stripe" && $2 == "token" { print $3 }' "$TMP/twin.out")
[[ $SK == sk_test_* ]] || fail "no Stripe key printed: $(cat "$TMP/twin.out")"
VBASE=${REST%/s/*}
vcall api.stripe.com POST /v1/customers "$SK" email=local@example.com application/x-www-form-urlencoded
assert_status 200 "POST /v1/customers at api.stripe.com, local"
vcall 127.0.0.1 GET /v1/customers "Bearer $SK"
assert_status 200 "/v1 keyed on the twin's own host"
assert_jq '.data[0].email' local@example.com
vcall api.stripe.com GET /v1/customers "Bearer sk_test_pome_bogus"
assert_status 401 "a bad key by name, local"
assert_jq .error.type invalid_request_error
vcall slack.com GET /v1/customers "Bearer $SK"
assert_status 404 "slack.com at the Stripe twin"
stop_twin
pass "local Stripe twin: api.stripe.com and /v1 keyed"
