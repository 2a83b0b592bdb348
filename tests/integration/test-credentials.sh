#!/usr/bin/env bash
# A credential is exactly its bytes, team API keys never reach a tape, and a request
# target a twin cannot serve is a 400 — against a real pomed with real pods:
# - a valid token with %00junk appended (?token=, Slack form field), a JWT whose last
#   character differs only in unused bits, a provider token whose base64url(sid) does,
#   are refused exactly like a wrong token (the gateway's one 404 body), and so is a
#   credential without an auth scheme; a token minted with openssl from pomed's
#   twin-secret file (the key as given) verifies;
# - the team's pome_… key sent in a body, a query and headers is on no tape row
#   (/_pome/events) and nowhere in the run directory's <twin>.tape.jsonl;
# - %FF, %C0%AE and a raw 0xff in a path, a raw 0xff in a query answer 400, and the
#   sandbox keeps running with the same pods; `pome twin start` answers them 400 too.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
start_pomed

create_sandbox github slack
GH=$(rest_url github) SL=$(rest_url slack)
GHP=$(jq -r .provider_credentials.github.token <<<"$CREATED")
XOXB=$(jq -r .provider_credentials.slack.token <<<"$CREATED")
PIDS=$(jq -c '[.per_twin[].pod.pid]' <<<"$CREATED")
[[ $PIDS != *null* ]] || fail "no pod pids in the create response: $CREATED"

B64URL=ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_
# flip_low_bit TOKEN INDEX: TOKEN with the base64url character at INDEX changed to the one
# whose 6-bit value differs in the lowest bit (an unused bit when INDEX ends a part).
flip_low_bit() {
        local t=$1 i=$2 c v
        c=${t:i:1}
        v=${B64URL%%"$c"*}
        v=${#v}
        ((v < 64)) || fail "'$c' is not base64url"
        echo "${t:0:i}${B64URL:v ^ 1:1}${t:i+1}"
}

# The gateway's answer to a wrong token, for comparison.
twin_call GET "$GH/repos/acme/api/issues/1" "not-a-token"
assert_status 404 "a wrong token"
WRONG=$BODY
assert_jq .error.message "No twin pod for this session."
refused_like_wrong() { # refused_like_wrong WHAT: STATUS/BODY are the wrong-token 404
        assert_status 404 "$1"
        assert_eq "$BODY" "$WRONG" "$1: body"
}

# Controls: the unmodified credentials authenticate in each form tried below.
twin_call POST "$SL/auth.test?token=$XOXB" ""
assert_status 200 "Slack ?token= (control)"
assert_jq .ok true
twin_call POST "$SL/auth.test" "" "token=$XOXB" application/x-www-form-urlencoded
assert_jq .ok true "Slack form token (control)"
twin_call GET "$GH/repos/acme/api/issues/1" "$TOKEN"
assert_status 200 "session JWT (control)"
twin_call GET "$GH/repos/acme/api/issues/1" "$GHP"
assert_status 200 "ghp_ token (control)"

twin_call POST "$SL/auth.test?token=$XOXB%00junk" ""
refused_like_wrong "?token=<valid>%00junk"
twin_call POST "$SL/auth.test?token=$TOKEN%00junk" ""
refused_like_wrong "?token=<valid JWT>%00junk"
twin_call POST "$SL/auth.test" "" "token=$XOXB%00junk" application/x-www-form-urlencoded
refused_like_wrong "form token=<valid>%00junk"
twin_call POST "$SL/auth.test" "" "token=$XOXB%00" application/x-www-form-urlencoded
refused_like_wrong "form token=<valid>%00"
pass "a token followed by a NUL and anything is refused like a wrong token"

# The JWT's signature is 43 characters for 32 bytes: two unused bits in the last one.
jwt_sig=${TOKEN##*.}
assert_eq "${#jwt_sig}" 43 "JWT signature length"
twin_call GET "$GH/repos/acme/api/issues/1" "$(flip_low_bit "$TOKEN" $((${#TOKEN} - 1)))"
refused_like_wrong "JWT with an unused bit of its last character set"
# A provider token: prefix, base64url(sid) (20 bytes → 27 characters, two unused bits), _sig.
assert_eq "${#SID}" 20 "sandbox id length"
for cred in "ghp_pome_:$GHP" "xoxb-pome-:$XOXB"; do
        prefix=${cred%%:*} tok=${cred#*:}
        [[ $tok == "$prefix"* ]] || fail "$tok does not start with $prefix"
        bad=$(flip_low_bit "$tok" $((${#prefix} + 26)))
        [[ $bad != "$tok" ]] || fail "flip_low_bit changed nothing"
        if [[ $prefix == ghp_* ]]; then
                twin_call GET "$GH/repos/acme/api/issues/1" "$bad"
        else
                twin_call POST "$SL/auth.test?token=$bad" ""
        fi
        refused_like_wrong "$prefix token with an unused bit of base64url(sid) set"
done
pass "non-canonical base64url (JWT signature, provider sid) is refused like a wrong token"

# ---- the deployment secret is the HMAC key as given; a credential needs an auth scheme ----
b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
if command -v openssl >/dev/null; then
        # pomed's twin-secret file, byte for byte, is the key: mint with openssl from it
        KEYHEX=$(od -An -tx1 "$TMP/state/twin-secret" | tr -d ' \n')
        assert_eq "${#KEYHEX}" 64 "twin-secret size (hex digits)"
        sig=$(printf '%s' "github:$SID" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$KEYHEX" -binary | b64url)
        MINTED="ghp_pome_$(printf '%s' "$SID" | b64url)_${sig:0:22}"
        twin_call GET "$GH/repos/acme/api/issues/1" "$MINTED"
        assert_status 200 "a ghp_ token minted with openssl from pomed's twin-secret"
        pass "pomed: a token minted from the twin-secret file's bytes verifies"
fi
for cred in "$GHP" "$TOKEN"; do
        STATUS=$(curl -s -o "$TMP/body" -w '%{http_code}' -H "Authorization: $cred" "$GH/repos/acme/api/issues/1")
        BODY=$(cat "$TMP/body")
        refused_like_wrong "GitHub: a credential without an auth scheme (${cred:0:12}…)"
done
STATUS=$(curl -s -o "$TMP/body" -w '%{http_code}' -X POST -H "Authorization: $XOXB" "$SL/auth.test")
BODY=$(cat "$TMP/body")
refused_like_wrong "Slack: a credential without an auth scheme"
pass "a credential without an auth scheme is refused at the gateway like a wrong one"

# ---- team API keys on the tape ----
[[ $API_KEY =~ ^pome_[0-9A-Za-z]{32}$ ]] || fail "unexpected API key shape: ${API_KEY:0:8}…"
STATUS=$(curl -s -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
        -H "X-Api-Key: $API_KEY" -H "X-Forwarded-Key: $API_KEY" -H "X-Note: key=$API_KEY" \
        -H 'Content-Type: application/json' \
        --data-binary "{\"body\":\"our key is $API_KEY, keep it\",\"$API_KEY\":1}" \
        "$GH/repos/acme/api/issues/1/comments?api_key=$API_KEY&q=key%20$API_KEY")
assert_eq "$STATUS" 201 "a comment carrying the team key"
twin_call POST "$SL/chat.postMessage" "$TOKEN" \
        "channel=general&text=the+key+is+$API_KEY&api_key=$API_KEY" application/x-www-form-urlencoded
assert_jq .ok true "a Slack message carrying the team key"
twin_call GET "$GH/repos/acme/api/issues?state=$API_KEY" "$TOKEN"
for twin in github slack; do
        url=$(rest_url $twin)
        twin_call GET "$url/_pome/events" "$TOKEN"
        assert_status 200 "$twin /_pome/events"
        grep -qF "$API_KEY" <<<"$BODY" && fail "the team key is on $twin's /_pome/events"
        grep -qF "${API_KEY:5}" <<<"$BODY" && fail "the team key's body is on $twin's /_pome/events"
        tape=$TMP/state/runs/$SID/$twin.tape.jsonl
        [[ -s $tape ]] || fail "no tape file $tape"
        grep -qF "${API_KEY:5}" "$tape" && fail "the team key is in $tape"
done
# the rows are there, redacted (so the greps above looked at something)
twin_call GET "$SL/_pome/events" "$TOKEN"
assert_jq '[.[] | select(.request_body.text? == "the key is [REDACTED]")] | length' 1 \
        "the Slack row with the key"
assert_jq '[.[] | select(.request_body.api_key? == "[REDACTED]")] | length' 1 \
        "the Slack api_key field"
grep -rqF "${API_KEY:5}" "$TMP/state/runs/$SID/"*.tape.jsonl && fail "the team key is in a tape file"
twin_call GET "$GH/_pome/events" "$TOKEN"
row=$(jq -c '[.[] | select(.tool == "add_issue_comment")][-1]' <<<"$BODY")
assert_eq "$(jq -r '.request_headers["x-api-key"]' <<<"$row")" "[REDACTED]" "x-api-key header"
assert_eq "$(jq -r '.request_headers["x-forwarded-key"]' <<<"$row")" "[REDACTED]" "another header"
assert_eq "$(jq -r '.request_headers["x-note"]' <<<"$row")" "key=[REDACTED]" "a header holding the key"
assert_eq "$(jq -r '.request_body.body' <<<"$row")" "our key is [REDACTED], keep it" "body text"
assert_eq "$(jq -r '.request_body["[REDACTED]"]' <<<"$row")" 1 "the key as a body field name"
[[ $(jq -r .path <<<"$row") == *"?api_key=[REDACTED]&q=key%20[REDACTED]" ]] ||
        fail "query not redacted: $(jq -r .path <<<"$row")"
pass "the team API key is redacted in bodies, queries, headers and field names, on both tapes"

# ---- request targets a twin cannot serve ----
P=${GH#http://*/} # github/s/<sid>
PORT=${GATEWAY##*:}
# raw_status PORT TARGET: the status code of "GET TARGET" sent byte for byte.
raw_status() {
        local out
        out=$(
                exec 3<>"/dev/tcp/127.0.0.1/$1"
                printf 'GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n' \
                        "$2" "$3" >&3
                timeout 5 cat <&3
        ) || true
        out=${out%%$'\r'*}
        echo "${out#HTTP/1.1 }" | cut -d' ' -f1
}
for target in "/$P/repos/acme/api/%FF" "/$P/repos/acme/api/%C0%AE" "/$P/repos/acme/%C0%AE%C0%AE/x" \
        "/$P/repos/acme/api/"$'\xff' "/$P/repos/acme/api/issues?state="$'\xff' \
        "/$P/repos/acme/api/%ED%A0%80" "/$P/repos/acme/api/%E2%82"; do
        status=$(raw_status "$PORT" "$target" "$TOKEN")
        assert_eq "$status" 400 "GET $(printf '%q' "$target")"
done
api GET "/v1/sandboxes/$SID"
assert_status 200 "the sandbox after the bad targets"
assert_jq .state running
assert_eq "$(jq -c '[.per_twin[].pod.pid]' <<<"$BODY")" "$PIDS" "pod pids"
for pid in $(jq -r '.[]' <<<"$PIDS"); do
        kill -0 "$pid" 2>/dev/null || fail "pod $pid is gone"
done
twin_call GET "$GH/repos/acme/api/issues/1" "$TOKEN"
assert_status 200 "a good call after the bad targets"
pass "%FF, %C0%AE, surrogates, truncated UTF-8, raw 0xff in path and query: 400, pods untouched"

discard "$SID"

# The local twin (`pome twin start`) serves through the same front.
"$POME" twin start github --port 0 >"$TMP/twin.out" 2>"$TMP/twin.err" &
TWIN_PID=$!
EXTRA_PIDS+=("$TWIN_PID")
for _ in $(seq 100); do grep -q "rest_url" "$TMP/twin.out" 2>/dev/null && break; sleep 0.05; done
grep -q rest_url "$TMP/twin.out" || fail "pome twin start printed nothing: $(cat "$TMP/twin.err")"
REST=$(awk '$1 == "rest_url" { print $2 }' "$TMP/twin.out")
TOK=$(awk '$1 == "token" { print $2 }' "$TMP/twin.out")
LPORT=${REST#http://*:}
LPORT=${LPORT%%/*}
LP=${REST#http://*/}
assert_eq "$(raw_status "$LPORT" "/$LP/repos/acme/api" "$TOK")" 200 "local twin (control)"
for target in "/$LP/repos/acme/api/%C0%AE" "/$LP/repos/acme/api/"$'\xff' \
        "/$LP/repos/acme/api/issues?state="$'\xff'; do
        assert_eq "$(raw_status "$LPORT" "$target" "$TOK")" 400 "local twin: $(printf '%q' "$target")"
done
assert_eq "$(raw_status "$LPORT" "/$LP/repos/acme/api?token=x" "${TOK}junk")" 401 "local twin: token + junk"
kill -0 "$TWIN_PID" || fail "the local twin died"
pass "pome twin start: the same 400s"
