#!/usr/bin/env bash
# `pome twin start` keeps the process/wire contract of hosted Pome's local twins
# (CONTRACT.md "Tokens", "A local twin as a process"; where it and hosted Pome's contract
# suite in ../shared/contract-suite differ, the suite's frozen per-twin shapes, checked here too):
# - TWIN_AUTH_SECRET is the HMAC key byte for byte: tokens minted here with openssl from
#   the contract's text verify (a JWT and provider tokens), a token signed with a hash of
#   the secret does not; an empty TWIN_AUTH_SECRET is unset (the dev secret on loopback);
# - a credential without an auth scheme is refused (GitHub, Slack), Slack's ?token= is not;
#   expired → GitHub 401 Bad credentials / Slack 401 token_expired; a good token of another
#   session → GitHub 401 Forbidden / Slack 401 invalid_auth / Stripe 403 forbidden;
# - GET /healthz (tools = the MCP tool count, runtime.{package, version, git_sha,
#   build_time}, and each twin's extras), GET /s/{sid}/healthz (Stripe: its 501),
#   /s/{sid}/_pome/health's key set per twin; admin routes each leave a tape row (but
#   Stripe's /admin/seed), /admin/seed keeps the tape; admin (the gate's 403 word for word),
#   /admin/seed and /mcp/call body corners, and unknown-route errors in the vendor's envelope;
# - Gmail and Linear: the suite's PER_TWIN.gmail/.linear cases (Google's {error:{status}} and
#   Linear's errors[].extensions.code per case) and AUTH_ENVELOPE's admin 403 bodies, with no
#   documentation_url on any of their auth refusals;
# - MCP: a bad MCP-Protocol-Version is 400, POST /mcp/tools/{name} runs the tool;
# - secret-looking values are [REDACTED] in /_pome/state and on the tape, never in what the
#   vendor's API answers;
# - a non-loopback twin without a secret generates one (0600, printed once, reused), and
#   refuses to start when it cannot.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
command -v openssl >/dev/null || skip "openssl is not installed"

SECRET='contract-suite-secret-0123456789abcdef'
FUTURE=4102444800 # 2100-01-01
PAST=$(($(date +%s) - 60))

b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
# hmac KEY-HEX MESSAGE: base64url(HMAC-SHA256(key, message)), the key given in hex so any
# bytes (pomed's binary secret too) pass through unchanged.
hmac() { printf '%s' "$2" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$1" -binary | b64url; }
# mint_provider KEY-HEX PREFIX PROVIDER SID [EXP]: <prefix><b64url(sid)>[_<exp>]_<sig22>
mint_provider() {
        local sig
        sig=$(hmac "$1" "$3:$4${5:+:$5}")
        echo "$2$(printf '%s' "$4" | b64url)${5:+_$5}_${sig:0:22}"
}
# mint_jwt KEY-HEX SID EXP: HS256 JWT with claims sid, team_id, exp
mint_jwt() {
        local h p
        h=$(printf '{"alg":"HS256","typ":"JWT"}' | b64url)
        p=$(printf '{"sid":"%s","team_id":"tm_contract","exp":%s}' "$2" "$3" | b64url)
        echo "$h.$p.$(hmac "$1" "$h.$p")"
}

# call METHOD URL [AUTHORIZATION-VALUE] [BODY] [CONTENT-TYPE] [HEADER…]: sets STATUS, BODY.
call() {
        local method=$1 url=$2 auth=${3:-} data=${4:-} ctype=${5:-application/json}
        local args=(-s -o "$TMP/body" -w '%{http_code}' -X "$method")
        shift $(($# < 5 ? $# : 5))
        [[ -n $auth ]] && args+=(-H "Authorization: $auth")
        [[ -n $data ]] && args+=(-H "Content-Type: $ctype" --data-binary "$data")
        for h in "$@"; do args+=(-H "$h"); done
        STATUS=$(curl "${args[@]}" "$url")
        BODY=$(cat "$TMP/body")
}

# start_twin NAME TWIN [VAR=VALUE…] [-- ARG…]: `pome twin start TWIN --port 0` with the
# environment given; waits for it to listen, sets BASE (loopback URL) and <NAME>_PID.
start_twin() {
        local name=$1 twin=$2 envs=() args=()
        shift 2
        while [[ $# -gt 0 && $1 != -- ]]; do envs+=("$1") && shift; done
        [[ ${1:-} == -- ]] && shift && args=("$@")
        env "${envs[@]}" "$POME" twin start "$twin" --port 0 "${args[@]}" \
                >"$TMP/$name.out" 2>"$TMP/$name.err" &
        local pid=$!
        EXTRA_PIDS+=("$pid")
        printf -v "${name}_PID" %s "$pid"
        for _ in $(seq 100); do grep -q "rest_url" "$TMP/$name.out" 2>/dev/null && break; sleep 0.05; done
        grep -q rest_url "$TMP/$name.out" || fail "$name did not start: $(cat "$TMP/$name.err")"
        BASE=$(sed -n 's/.* listening on \(http:[^ ]*\).*/\1/p' "$TMP/$name.out")
        BASE=${BASE/0.0.0.0/127.0.0.1}
}
# stop_twin NAME: SIGTERM, exit 0, no sanitizer report.
stop_twin() {
        local pid_var=${1}_PID status=0
        kill "${!pid_var}"
        wait "${!pid_var}" || status=$?
        ! grep -qE "AddressSanitizer|LeakSanitizer|runtime error:" "$TMP/$1.err" ||
                fail "$1: sanitizer report: $(cat "$TMP/$1.err")"
        assert_eq "$status" 0 "$1 exit status"
}

KEY=$(hex "$SECRET")
start_twin gh github "TWIN_AUTH_SECRET=$SECRET"
GH=$BASE
S=ses_kat

# ---- tokens: the secret as given ----
JWT=$(mint_jwt "$KEY" $S $FUTURE)
GHP=$(mint_provider "$KEY" ghp_pome_ github $S $FUTURE)
GHP_NOEXP=$(mint_provider "$KEY" ghp_pome_ github $S)
for cred in "Bearer $JWT" "bearer $JWT" "token $GHP" "Bearer $GHP_NOEXP"; do
        call GET "$GH/s/$S/repos/acme/api/issues/1" "$cred"
        assert_status 200 "a token minted with openssl from the secret as given (${cred:0:16}…)"
        assert_jq .number 1
done
# what we did before: HMAC key = SHA-256 of the secret
HASHED=$(printf '%s' "$SECRET" | openssl dgst -sha256 -binary | od -An -tx1 | tr -d ' \n')
call GET "$GH/s/$S/repos/acme/api" "Bearer $(mint_jwt "$HASHED" $S $FUTURE)"
assert_status 401 "a token signed with a hash of the secret"
assert_jq .message "Bad credentials"
pass "TWIN_AUTH_SECRET is the HMAC key byte for byte (JWT, ghp_ with and without exp)"

# an empty TWIN_AUTH_SECRET is unset (hosted Pome's contract): the loopback dev secret, never
# an empty HMAC key
start_twin empty github "TWIN_AUTH_SECRET="
DEV=$(hex pome-local-twin-dev-secret-32byt)
call GET "$BASE/s/$S/repos/acme/api" "Bearer $(mint_jwt "$DEV" $S $FUTURE)"
assert_status 200 "a token of the dev secret, TWIN_AUTH_SECRET empty"
call GET "$BASE/s/$S/repos/acme/api" "Bearer $(mint_jwt "" $S $FUTURE)"
assert_status 401 "a token of an empty key"
stop_twin empty
pass "an empty TWIN_AUTH_SECRET is unset: the dev secret on loopback"

# ---- auth words ----
call GET "$GH/s/$S/repos/acme/api" "$GHP"
assert_status 401 "GitHub: a token without an auth scheme"
assert_jq .message "Bad credentials"
call GET "$GH/s/$S/repos/acme/api" "$JWT"
assert_status 401 "GitHub: a JWT without an auth scheme"
call GET "$GH/s/$S/repos/acme/api" "token $(mint_provider "$KEY" ghp_pome_ github $S $PAST)"
assert_status 401 "GitHub: an expired token"
assert_jq .message "Bad credentials"
call GET "$GH/s/$S/repos/acme/api" "Bearer $(mint_jwt "$KEY" $S $PAST)"
assert_status 401 "GitHub: an expired JWT"
call GET "$GH/s/ses_other/repos/acme/api" "token $GHP"
assert_status 401 "GitHub: a good token for another session (hosted Pome's sid-mismatch pin)"
assert_jq .message Forbidden
assert_jq .status 401
assert_jq .documentation_url https://docs.github.com/rest
call GET "$GH/s/$S/repos/acme/api" "token $(mint_provider "$KEY" xoxb-pome- slack $S)"
assert_status 401 "GitHub: Slack's token for this session"
assert_jq .message "Bad credentials"
pass "GitHub: no scheme / expired → 401 Bad credentials, another session → 401 Forbidden"

# ---- /healthz, /s/{sid}/healthz ----
call GET "$GH/healthz"
assert_status 200 "/healthz"
assert_jq .ok true
assert_jq .twin github
assert_jq .implementation pome-github
assert_jq .fidelity semantic
assert_jq '.access_control | type' object
assert_jq .runtime.package pome
assert_jq '.runtime.version | type' string
[[ $(jq -r .runtime.git_sha <<<"$BODY") =~ ^([0-9a-f]{40}|unknown)$ ]] || fail "git_sha: $BODY"
[[ $(jq -r .runtime.build_time <<<"$BODY") =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$ ]] ||
        fail "build_time: $BODY"
if git -C "$SRC" rev-parse --verify -q HEAD >/dev/null 2>&1; then
        # baked in at build time: the commit of the tree the binary was built from
        git -C "$SRC" cat-file -e "$(jq -r .runtime.git_sha <<<"$BODY")^{commit}" ||
                fail "git_sha is no commit of this checkout: $BODY"
fi
tools=$(jq .tools <<<"$BODY")
call GET "$GH/s/$S/mcp/tools" "Bearer $JWT"
assert_eq "$(jq '.tools | length' <<<"$BODY")" "$tools" "healthz.tools = the MCP tool count"
call GET "$GH/s/$S/healthz" "Bearer $JWT"
assert_status 200 "/s/{sid}/healthz"
assert_jq .ok true
assert_jq .sid $S
call GET "$GH/s/$S/healthz"
assert_status 401 "/s/{sid}/healthz without a token"
call GET "$GH/s/$S/_pome/health" "Bearer $JWT"
assert_jq 'keys | join(",")' fidelity,implementation,ok,runtime,twin "GitHub's /_pome/health keys"
assert_jq .runtime.git_sha "$(curl -s "$GH/healthz" | jq -r .runtime.git_sha)"
call GET "$GH/definitely-not-a-route"
assert_status 404 "an unknown root route"
assert_jq .status 404 "…in GitHub's envelope"
assert_jq '.message | length > 0' true
call GET "$GH/s/$S/definitely/not/a/route" "Bearer $JWT"
assert_status 501 "an unknown route under the mount"
assert_jq .fidelity unsupported
assert_jq ._twin.fidelity unsupported
assert_jq .status 501
assert_jq '.supported | length > 0' true
pass "/healthz (fidelity, tools, runtime), /s/{sid}/healthz, unknown routes in GitHub's envelope"

# ---- MCP strictness ----
LIST='{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
for v in 2024-11-05 2025-03-26 2025-06-18; do
        call POST "$GH/s/$S/mcp" "Bearer $JWT" "$LIST" application/json "MCP-Protocol-Version: $v"
        assert_status 200 "MCP-Protocol-Version $v"
done
call POST "$GH/s/$S/mcp" "Bearer $JWT" "$LIST"
assert_status 200 "no MCP-Protocol-Version header"
for v in 2099-01-01 garbage 2025-06-18x; do
        call POST "$GH/s/$S/mcp" "Bearer $JWT" "$LIST" application/json "MCP-Protocol-Version: $v"
        assert_status 400 "MCP-Protocol-Version $v"
        assert_jq .error.code -32000
        assert_jq .id null
done
call POST "$GH/s/$S/mcp" "Bearer $JWT" \
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}' \
        application/json "MCP-Protocol-Version: 2099-01-01"
assert_status 200 "initialize negotiates in its body: the header does not stop it"
call POST "$GH/s/$S/mcp/tools/issue_read" "Bearer $JWT" '{"method":"get","owner":"acme","repo":"api","issue_number":1}'
assert_status 200 "POST /mcp/tools/{name}"
assert_jq .isError false
assert_jq .structuredContent.number 1
call POST "$GH/s/$S/mcp/tools/definitely_not_a_tool" "Bearer $JWT" '{}'
assert_status 404 "POST /mcp/tools/{unknown}"
assert_jq .status 404
# hosted Pome's legacy /mcp/call: the tool's own answer, GitHub's 422 for a tool it cannot run
call POST "$GH/s/$S/mcp/call" "Bearer $JWT" '{"tool":"get_me","arguments":{}}'
assert_status 200 "/mcp/call"
assert_jq .login pome-agent "…answers what the tool answers"
call POST "$GH/s/$S/mcp/call" "Bearer $JWT" '{"tool":"definitely_not_a_tool","arguments":{}}'
assert_status 422 "/mcp/call with an unknown tool"
assert_jq .message "Validation Failed"
assert_jq .errors[0].value definitely_not_a_tool
assert_jq .status 422
call POST "$GH/s/$S/mcp/call" "Bearer $JWT" '{oops'
assert_status 400 "/mcp/call with malformed JSON"
assert_jq .message "Problems parsing JSON"
call POST "$GH/s/$S/mcp/call" "Bearer $JWT" 'tool=get_me' application/x-www-form-urlencoded
assert_status 400 "/mcp/call with a form"
assert_jq .message "Problems parsing JSON"
call POST "$GH/s/$S/mcp/call" "Bearer $JWT" '{"arguments":{}}'
assert_status 422 "/mcp/call without a tool"
assert_jq .errors[0].field tool
call POST "$GH/s/$S/mcp/call" "Bearer $JWT" '{"name":"list_repos","params":{}}'
assert_status 422 "/mcp/call {name, params}: GitHub takes no aliases"
assert_jq .errors[0].field tool
pass "MCP: protocol-version header checked, /mcp/tools/{name} served, /mcp/call errors in GitHub's envelope"

# ---- admin routes on the tape ----
call GET "$GH/s/$S/_pome/events" "Bearer $JWT"
rows=$(jq length <<<"$BODY")
[[ $rows -gt 5 ]] || fail "too few rows before the admin calls: $rows"
call POST "$GH/admin/seed" "" '{oops'
assert_status 400 "/admin/seed with malformed JSON"
assert_jq .message "Problems parsing JSON"
call POST "$GH/admin/seed" "" '{"definitely":"not-a-seed"}'
assert_status 422 "/admin/seed with a seed the twin refuses"
assert_jq .status 422
assert_jq .message "Validation Failed"
assert_jq '.errors[0].message | contains("definitely")' true
call POST "$GH/admin/seed" "" '{"repositories":[{"owner":"acme","name":"api","issues":[{"number":1,"title":"Seeded again"}]}]}'
assert_status 200 "/admin/seed"
assert_jq .ok true
call POST "$GH/admin/token" "" '{"sid":"ses_admin"}'
assert_status 200 "/admin/token"
call GET "$GH/s/$S/_pome/events" "Bearer $JWT"
assert_eq "$(jq length <<<"$BODY")" $((rows + 4)) "the tape after three seeds and a token: kept, 4 rows more"
assert_jq "[.[] | select(.path == \"/admin/seed\")] | length" 3
assert_jq '[.[] | select(.path == "/admin/seed")][-1] | [.status, .state_mutation, .state_delta, .run_id] | @csv' \
        '200,true,,"local"'
assert_jq '[.[] | select(.path == "/admin/seed")][0].status' 400
assert_jq '[.[] | select(.path == "/admin/token")][0].response_body.session_token' "[REDACTED]"
grep -q "eyJ" <<<"$(jq -c '[.[] | select(.path == "/admin/token")]' <<<"$BODY")" &&
        fail "a minted token is on the tape"
call GET "$GH/s/$S/repos/acme/api/issues/1" "Bearer $JWT"
assert_jq .title "Seeded again" "the seeded world"
call POST "$GH/admin/reset" ""
assert_status 200 "/admin/reset"
call GET "$GH/s/$S/_pome/events" "Bearer $JWT"
assert_eq "$(jq -c '[.[] | .path]' <<<"$BODY")" '["/admin/reset"]' "a reset empties the tape and leaves its own row"
call GET "$GH/admin/reset" ""
assert_status 405 "GET /admin/reset"
assert_jq .status 405
stop_twin gh

start_twin adm github "TWIN_ADMIN_TOKEN=let-me-in" "TWIN_AUTH_SECRET=$SECRET"
call POST "$BASE/admin/reset" ""
assert_status 403 "admin without X-Admin-Token"
assert_eq "$(jq -c . <<<"$BODY")" \
        '{"message":"Forbidden","documentation_url":"https://docs.github.com/rest","status":"403"}' \
        "…hosted Pome's GitHub admin 403, word for word"
call POST "$BASE/admin/reset" "" "" application/json "X-Admin-Token: nope"
assert_status 403 "admin with a wrong X-Admin-Token"
call POST "$BASE/admin/reset" "" "" application/json "X-Admin-Token: let-me-in"
assert_status 200 "admin with the X-Admin-Token"
call GET "$BASE/s/$S/_pome/events" "Bearer $JWT"
assert_eq "$(jq -c '[.[] | [.path, .status]]' <<<"$BODY")" '[["/admin/reset",200]]' \
        "refused admin calls write no row"
stop_twin adm
pass "admin routes: a row each, /admin/seed keeps the tape, errors in GitHub's envelope"

# ---- Slack: auth words, redaction ----
SEED=$(jq -c '.channels[0].messages[0].text = "rotate the deploy key sk-prod-7f3a9b2c4d5e6f81 today"' \
        "$SRC/sandbox-images/slack/seeds/default.json")
start_twin sl slack "TWIN_AUTH_SECRET=$SECRET" "POME_SEED_JSON=$SEED"
SL=$BASE/s/$S
XOXB=$(mint_provider "$KEY" xoxb-pome- slack $S $FUTURE)
call POST "$SL/auth.test" "Bearer $XOXB"
assert_status 200 "Slack: the minted xoxb- token"
assert_jq .ok true
call POST "$SL/auth.test?token=$XOXB" ""
assert_jq .ok true "Slack: ?token= still accepted"
call POST "$SL/auth.test" "" "token=$XOXB" application/x-www-form-urlencoded
assert_jq .ok true "Slack: form token still accepted"
call POST "$SL/auth.test" "$XOXB"
assert_status 401 "Slack: a token without an auth scheme"
assert_jq .error invalid_auth
call POST "$SL/auth.test" ""
assert_status 401 "Slack: no token"
assert_jq .error not_authed
call POST "$SL/auth.test" "Bearer $(mint_provider "$KEY" xoxb-pome- slack $S $PAST)"
assert_status 401 "Slack: an expired token"
assert_jq .error token_expired
assert_jq .ok false
call POST "$SL/auth.test?token=$(mint_jwt "$KEY" $S $PAST)" ""
assert_status 401 "Slack: an expired JWT as ?token="
assert_jq .error token_expired
call POST "$BASE/s/ses_other/auth.test" "Bearer $XOXB"
assert_status 401 "Slack: a good token for another session"
assert_jq .error invalid_auth
call POST "$SL/mcp/call" "Bearer $XOXB" '{"tool":"definitely_not_a_tool"}'
assert_status 404 "Slack: /mcp/call with an unknown tool"
assert_jq .error unknown_tool
assert_jq .ok false
# hosted Pome's Slack: {name, params} aliases, forms, malformed JSON read as {}
call POST "$SL/mcp/call" "Bearer $XOXB" '{"name":"slack_read_user_profile","params":{}}'
assert_status 200 "Slack: /mcp/call {name, params}"
assert_jq .ok true
assert_jq .user_id U_PRIMARY
call POST "$SL/mcp/call" "Bearer $XOXB" 'tool=slack_read_user_profile' application/x-www-form-urlencoded
assert_status 200 "Slack: /mcp/call with a form"
assert_jq .ok true
call POST "$SL/mcp/call" "Bearer $XOXB" '{oops'
assert_status 400 "Slack: /mcp/call with malformed JSON"
assert_jq .error invalid_arguments
call GET "$SL/_pome/health" "Bearer $XOXB"
assert_jq 'keys | join(",")' ok,twin "Slack's /_pome/health keys"
call GET "$BASE/healthz"
assert_jq 'has("fidelity")' false "Slack's /healthz has no fidelity"
# hosted Pome's Slack /admin/seed: any body; a form's seed field must be one
call POST "$BASE/admin/seed" "" '{"definitely":"not-a-seed"}'
assert_status 200 "Slack: /admin/seed with members no seed has"
assert_jq .ok true
assert_jq .ignored[0] definitely
call POST "$BASE/admin/seed" "" 'seed=whatever' application/x-www-form-urlencoded
assert_status 500 "Slack: /admin/seed with a form whose seed is no seed"
assert_jq .error internal_error
assert_jq '.warning | length > 0' true
call POST "$BASE/admin/seed" "" '{oops'
assert_status 200 "Slack: /admin/seed with malformed JSON (read as {})"
assert_jq .ok true
call POST "$BASE/admin/seed" "" "{\"seed\":$SEED}"
assert_status 200 "Slack: /admin/seed {seed: …}"
call GET "$SL/_pome/events" "Bearer $XOXB"
assert_jq '[.[] | select(.path == "/admin/seed")] | length' 4 "Slack's /admin/seed on the tape"
assert_jq '[.[] | select(.path == "/admin/seed")][1].state_delta' null
call GET "$SL/nope" "Bearer $XOXB"
assert_status 501 "Slack: an unknown method"
assert_jq .error unsupported_endpoint
assert_jq ._twin.fidelity unsupported
pass "Slack: no scheme → invalid_auth, expired → token_expired, ?token=/form kept, envelopes"

call GET "$SL/_pome/state" "Bearer $XOXB"
assert_jq .channels[0].messages[0].text "rotate the deploy key [REDACTED] today" "/_pome/state"
grep -q 7f3a9b2c4d5e6f81 <<<"$BODY" && fail "the secret is in /_pome/state"
call POST "$SL/conversations.history" "Bearer $XOXB" "channel=C_GENERAL" application/x-www-form-urlencoded
assert_jq .messages[1].text "rotate the deploy key sk-prod-7f3a9b2c4d5e6f81 today" \
        "conversations.history shows the message as Slack would"
call GET "$SL/_pome/events" "Bearer $XOXB"
assert_jq '[.[] | select(.tool == "slack_read_channel")][-1].response_body.messages[1].text' \
        "rotate the deploy key [REDACTED] today" "the tape row"
grep -q 7f3a9b2c4d5e6f81 <<<"$BODY" && fail "the secret is on the tape"
grep -qF "$XOXB" <<<"$BODY" && fail "the caller's token is on the tape"
stop_twin sl
pass "sk-prod-… [REDACTED] in /_pome/state and on the tape, verbatim over the Web API"

# ---- Stripe: hosted Pome's frozen shapes ----
start_twin st stripe "TWIN_AUTH_SECRET=$SECRET" "TWIN_ADMIN_TOKEN=let-me-in"
ST=$BASE/s/$S
SK=$(mint_provider "$KEY" sk_test_pome_ stripe $S $FUTURE)
call GET "$BASE/healthz"
assert_jq .fidelity semantic
assert_jq '.tthw_seconds | type' number
call GET "$ST/_pome/health" "Bearer $JWT"
assert_jq 'keys | join(",")' fidelity,implementation,ok,recorder,runtime,tthw_seconds,twin \
        "Stripe's /_pome/health keys"
call GET "$ST/healthz" "Bearer $JWT"
assert_status 501 "Stripe: no session healthz"
call GET "$ST/_pome/state"
assert_status 401 "Stripe: no key"
assert_jq .error.code unauthorized
call GET "$ST/_pome/state" "Bearer sk_test_pome_nonexistent"
assert_status 401 "Stripe: a key that resolves nowhere"
assert_jq .error.code unauthorized
assert_jq .error.message "Invalid API Key provided." "…hosted Pome's words"
call GET "$BASE/s/ses_other/_pome/state" "Bearer $SK"
assert_status 403 "Stripe: a good key of another session"
assert_jq .error.code forbidden
call GET "$ST/_pome/state" "$JWT"
assert_status 200 "Stripe: a raw JWT without a scheme"
call GET "$ST/definitely/not/a/route" "Bearer $SK"
assert_status 501 "Stripe: an unknown session route"
assert_jq .error.code endpoint_not_supported
assert_jq .error.fidelity unsupported
call GET "$BASE/definitely-not-a-route"
assert_status 401 "Stripe: an unknown root route meets its key wall first"
call POST "$ST/mcp/call" "Bearer $SK" '{"tool":"definitely_not_a_tool","arguments":{}}'
assert_status 400 "Stripe: /mcp/call with an unknown tool"
assert_jq .error.code tool_unknown
call POST "$ST/mcp/call" "Bearer $SK" '{"name":"retrieve_balance","params":{}}'
assert_status 400 "Stripe: /mcp/call {name, params}"
assert_jq .error.param tool
call POST "$ST/mcp/call" "Bearer $SK" 'tool=retrieve_balance' application/x-www-form-urlencoded
assert_status 200 "Stripe: /mcp/call with a form"
assert_jq .object balance
call POST "$ST/mcp/call" "Bearer $SK" '{oops'
assert_status 400 "Stripe: /mcp/call with malformed JSON"
assert_jq .error.code parameter_invalid
call POST "$BASE/admin/reset" ""
assert_status 403 "Stripe: admin without X-Admin-Token"
assert_eq "$(jq -c . <<<"$BODY")" \
        '{"error":{"type":"invalid_request_error","code":"forbidden","message":"Forbidden"}}' \
        "…hosted Pome's Stripe admin 403, word for word"
A="X-Admin-Token: let-me-in"
for body in '{"definitely":"not-a-seed"}' '{oops'; do
        call POST "$BASE/admin/seed" "" "$body" application/json "$A"
        assert_status 200 "Stripe: /admin/seed $body"
        assert_jq .ok true
done
call POST "$BASE/admin/seed" "" 'seed=whatever' application/x-www-form-urlencoded "$A"
assert_status 200 "Stripe: /admin/seed with a form"
assert_jq .ignored[0] seed
call POST "$BASE/admin/seed" "" '{"customers":"nope"}' application/json "$A"
assert_status 400 "Stripe: /admin/seed with a seed it refuses"
assert_jq .error.code parameter_invalid
call GET "$ST/_pome/events" "Bearer $SK"
assert_jq '[.[] | select(.path == "/admin/seed")] | length' 0 "Stripe's /admin/seed is not on the tape"
stop_twin st
pass "Stripe: health shapes, auth words, 501s and the key wall, /mcp/call and /admin corners"

# ---- Gmail and Linear: hosted Pome's frozen shapes (suite.mjs PER_TWIN.gmail/.linear and
# AUTH_ENVELOPE) ----
# no_docs_url: no documentation_url anywhere in BODY (GitHub's key; Google and Linear send none)
no_docs_url() {
        [[ $(jq '[.. | objects | select(has("documentation_url"))] | length' <<<"$BODY") == 0 ]] ||
                fail "$1: a documentation_url on a twin whose vendor sends none: $BODY"
}
# frozen TWIN CASE FILTER: BODY passes the twin's check of a suite case (a jq filter)
frozen() { jq -e "$3" <<<"$BODY" >/dev/null 2>&1 || fail "$1 $2: got HTTP $STATUS $BODY"; }
GOOGLE_403='{"error":{"code":403,"message":"Forbidden","errors":[{"message":"Forbidden","domain":"global","reason":"forbidden"}],"status":"PERMISSION_DENIED"}}'
LINEAR_403='{"errors":[{"message":"Forbidden","extensions":{"code":"FORBIDDEN","http":{"status":403}}}]}'
for twin in gmail linear; do
        if [[ $twin == gmail ]]; then
                BAD='.error.status == "INVALID_ARGUMENT"' UNAUTH='.error.status == "UNAUTHENTICATED"'
                NOTFOUND='.error.status == "NOT_FOUND"' UNSUP='.error.status == "UNIMPLEMENTED"'
                ALIAS=list_labels RAW_STATUS=401 ROOT_STATUS=404 SEED_TAPE=null FORBIDDEN=$GOOGLE_403
        else
                BAD='.errors[0].extensions.code == "BAD_USER_INPUT"' UNAUTH='.errors[0].extensions.code == "AUTHENTICATION_ERROR"'
                NOTFOUND='.errors[0].extensions.code == "NOT_FOUND"' UNSUP='.fidelity == "unsupported"'
                ALIAS=list_issues RAW_STATUS=200 ROOT_STATUS=401 SEED_TAPE=object FORBIDDEN=$LINEAR_403
        fi
        start_twin "$twin" "$twin" "TWIN_AUTH_SECRET=$SECRET"
        TB=$BASE/s/$S
        call GET "$BASE/healthz"
        assert_status 200 "$twin: /healthz"
        assert_jq .ok true
        assert_jq .twin "$twin"
        assert_jq .fidelity semantic
        assert_jq '.implementation | type' string
        assert_jq '[.runtime.package, .runtime.version, .runtime.git_sha, .runtime.build_time] | map(type) | unique | join(",")' string
        tools=$(jq .tools <<<"$BODY")
        [[ $tools =~ ^[1-9][0-9]*$ ]] || fail "$twin: /healthz tools: $BODY"
        call GET "$TB/mcp/tools" "Bearer $JWT"
        assert_status 200 "$twin: /mcp/tools"
        assert_eq "$(jq '.tools | length' <<<"$BODY")" "$tools" "$twin: healthz.tools = the MCP tool count"
        call GET "$TB/healthz" "Bearer $JWT"
        assert_status 200 "$twin: /s/{sid}/healthz"
        assert_jq .ok true
        assert_jq .sid $S
        call GET "$TB/_pome/health" "Bearer $JWT"
        assert_status 200 "$twin: /_pome/health"
        assert_jq 'keys | join(",")' fidelity,ok,twin,version "$twin's /_pome/health keys"
        assert_jq .twin "$twin"
        call GET "$TB/_pome/state" "Bearer $JWT"
        assert_status 200 "$twin: /_pome/state"
        assert_jq 'type' object
        call GET "$TB/_pome/events" "Bearer $JWT"
        assert_status 200 "$twin: /_pome/events"
        assert_jq 'type' array
        pass "$twin: /healthz (fidelity semantic, tools, runtime), /s/{sid}/healthz, /_pome/health keys"

        # auth: no token, garbage, another session's, expired → 401 in the vendor's envelope,
        # no documentation_url; a raw prefix-less JWT: 401 Gmail, 200 Linear
        call GET "$TB/_pome/state"
        assert_status 401 "$twin: no token"
        frozen "$twin" noAuth "$UNAUTH"
        no_docs_url "$twin: no token"
        call GET "$TB/_pome/state" "Bearer garbage"
        assert_status 401 "$twin: a garbage bearer"
        no_docs_url "$twin: a garbage bearer"
        call GET "$TB/_pome/state" "Bearer $(mint_jwt "$KEY" other-sid $FUTURE)"
        assert_status 401 "$twin: a JWT of another session"
        frozen "$twin" wrongSid "$UNAUTH"
        no_docs_url "$twin: another session"
        call GET "$TB/_pome/state" "Bearer $(mint_jwt "$KEY" $S $PAST)"
        assert_status 401 "$twin: an expired JWT"
        frozen "$twin" expired "$UNAUTH"
        no_docs_url "$twin: expired"
        call GET "$TB/_pome/state" "$JWT"
        assert_status "$RAW_STATUS" "$twin: a raw JWT without a scheme"
        pass "$twin: auth refusals 401 in the vendor's envelope, no documentation_url; raw JWT $RAW_STATUS"

        # MCP: initialize answers plain JSON, GET /mcp is 405; /mcp/call's corners
        call POST "$TB/mcp" "Bearer $JWT" \
                '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"contract-suite","version":"0"}}}' \
                application/json "Accept: application/json, text/event-stream"
        assert_status 200 "$twin: MCP initialize"
        assert_jq .jsonrpc 2.0
        assert_jq '.result.serverInfo.name | type' string
        call GET "$TB/mcp" "Bearer $JWT"
        assert_status 405 "$twin: GET /mcp"
        call POST "$TB/mcp/call" "Bearer $JWT" '{"tool":"definitely_not_a_tool","arguments":{}}'
        assert_status 404 "$twin: /mcp/call with an unknown tool"
        frozen "$twin" mcpCallUnknown "$NOTFOUND"
        call POST "$TB/mcp/call" "Bearer $JWT" "{\"name\":\"$ALIAS\",\"params\":{}}"
        assert_status 400 "$twin: /mcp/call {name, params}"
        frozen "$twin" mcpCallAlias "$BAD"
        call POST "$TB/mcp/call" "Bearer $JWT" "tool=$ALIAS" application/x-www-form-urlencoded
        assert_status 400 "$twin: /mcp/call with a form"
        frozen "$twin" mcpCallForm "$BAD"
        call POST "$TB/mcp/call" "Bearer $JWT" '{oops'
        assert_status 400 "$twin: /mcp/call with malformed JSON"
        frozen "$twin" mcpCallMalformed "$BAD"
        pass "$twin: MCP initialize 200, GET /mcp 405, /mcp/call unknown 404, alias/form/malformed 400"

        # admin: reset, seed corners, the tape
        call POST "$BASE/admin/reset" ""
        assert_status 200 "$twin: /admin/reset"
        assert_jq .ok true
        call POST "$BASE/admin/seed" "" '{"definitely":"not-a-seed"}'
        assert_status 400 "$twin: /admin/seed with a garbage seed"
        frozen "$twin" adminSeedGarbage "$BAD"
        call POST "$BASE/admin/seed" "" 'seed=whatever' application/x-www-form-urlencoded
        assert_status 400 "$twin: /admin/seed with a form"
        frozen "$twin" adminSeedForm "$BAD"
        call POST "$BASE/admin/seed" "" '{oops'
        assert_status 400 "$twin: /admin/seed with malformed JSON"
        frozen "$twin" adminSeedMalformed "$BAD"
        call GET "$TB/_pome/state" "Bearer $JWT"
        call POST "$BASE/admin/seed" "" '{}'
        call GET "$TB/_pome/events" "Bearer $JWT"
        assert_status 200 "$twin: /_pome/events"
        assert_jq '[.[] | (.request_path // .path // "") | select(contains("_pome/state"))] | length' 0 \
                "$twin: /_pome/state is never on the tape"
        assert_jq '[.[] | select((.request_path // .path // "") | contains("admin/seed"))] | length > 0' true \
                "$twin: /admin/seed is on the tape"
        assert_jq '[.[] | select((.request_path // .path // "") | contains("admin/seed"))][-1].state_delta | type' \
                "$SEED_TAPE" "$twin: the last /admin/seed row's state_delta (null: {} is no Gmail seed; object: {} is a Linear one)"
        call GET "$TB/definitely/not/a/route" "Bearer $JWT"
        assert_status 501 "$twin: an unknown session route"
        frozen "$twin" unknownSession "$UNSUP"
        call GET "$BASE/definitely-not-a-route"
        assert_status "$ROOT_STATUS" "$twin: an unknown root route"
        stop_twin "$twin"
        pass "$twin: /admin/reset, /admin/seed corners 400, the tape, unknown routes 501/$ROOT_STATUS"

        # the admin gate's 403: the vendor's envelope, word for word
        start_twin "${twin}adm" "$twin" "TWIN_ADMIN_TOKEN=let-me-in" "TWIN_AUTH_SECRET=$SECRET"
        call POST "$BASE/admin/reset" ""
        assert_status 403 "$twin: admin without X-Admin-Token"
        assert_eq "$(jq -cS . <<<"$BODY")" "$(jq -cS . <<<"$FORBIDDEN")" "$twin: hosted Pome's admin 403, word for word"
        call POST "$BASE/admin/reset" "" "" application/json "X-Admin-Token: nope"
        assert_status 403 "$twin: admin with a wrong X-Admin-Token"
        assert_eq "$(jq -cS . <<<"$BODY")" "$(jq -cS . <<<"$FORBIDDEN")" "$twin: the 403 to a wrong token"
        no_docs_url "$twin: admin 403"
        call POST "$BASE/admin/reset" "" "" application/json "X-Admin-Token: let-me-in"
        assert_status 200 "$twin: admin with the X-Admin-Token"
        assert_jq .ok true
        stop_twin "${twin}adm"
        pass "$twin: the admin gate's 403 in the vendor's envelope, word for word"
done

# ---- a non-loopback twin without a secret ----
DATA=$TMP/data
start_twin pub github -u TWIN_AUTH_SECRET "GITHUB_CLONE_HOST=0.0.0.0" "POME_TWIN_DATA_DIR=$DATA"
[[ -f $DATA/secret ]] || fail "no secret persisted in $DATA"
assert_eq "$(stat -c %a "$DATA/secret")" 600 "the secret file's mode"
GEN=$(tr -d '\n' <"$DATA/secret")
[[ $GEN =~ ^[0-9a-f]{64}$ ]] || fail "the persisted secret is not 32 bytes of hex: $GEN"
grep -qF "$GEN" "$TMP/pub.out" || fail "the generated secret was not printed"
call GET "$BASE/s/$S/repos/acme/api" "Bearer $(mint_jwt "$(hex "$GEN")" $S $FUTURE)"
assert_status 200 "a token minted with the generated secret"
stop_twin pub
# empty is unset here too (hosted Pome's contract suite boots it so)
start_twin pub2 github "TWIN_AUTH_SECRET=" "GITHUB_CLONE_HOST=0.0.0.0" "POME_TWIN_DATA_DIR=$DATA"
assert_eq "$(tr -d '\n' <"$DATA/secret")" "$GEN" "the secret after a restart"
grep -qF "$GEN" "$TMP/pub2.out" && fail "the reused secret was printed again"
call GET "$BASE/s/$S/repos/acme/api" "Bearer $(mint_jwt "$(hex "$GEN")" $S $FUTURE)"
assert_status 200 "the reused secret"
stop_twin pub2
# TWIN_AUTH_SECRET always wins over the file
start_twin pub3 github "GITHUB_CLONE_HOST=0.0.0.0" "POME_TWIN_DATA_DIR=$DATA" "TWIN_AUTH_SECRET=$SECRET"
call GET "$BASE/s/$S/repos/acme/api" "Bearer $(mint_jwt "$(hex "$GEN")" $S $FUTURE)"
assert_status 401 "the persisted secret while TWIN_AUTH_SECRET is set"
stop_twin pub3
: >"$TMP/not-a-dir"
status=0
env TWIN_AUTH_SECRET= GITHUB_CLONE_HOST=0.0.0.0 POME_TWIN_DATA_DIR="$TMP/not-a-dir/nested" \
        "$POME" twin start github --port 0 >"$TMP/nodir.out" 2>"$TMP/nodir.err" || status=$?
[[ $status -ne 0 ]] || fail "a twin without a secret it could keep started"
grep -q TWIN_AUTH_SECRET "$TMP/nodir.err" || fail "the refusal does not name TWIN_AUTH_SECRET: $(cat "$TMP/nodir.err")"
grep -q rest_url "$TMP/nodir.out" && fail "it listened"
pass "non-loopback: a secret generated (0600, printed once), reused, overridden by the env; no place to keep one → exit $status"
