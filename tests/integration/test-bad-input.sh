#!/usr/bin/env bash
# Bad input on both ports gets a clear error in that surface's envelope, never a
# crash or a hang, and pomed keeps serving.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
start_pomed

envelope() { # envelope STATUS TYPE: the control API's one error envelope
        assert_status "$1" "$3"
        assert_jq .error.type "$2" "$3: type"
        [[ $(jq -r .error.message <<<"$BODY") != null ]] || fail "$3: no message"
        [[ $(jq -r .error.request_id <<<"$BODY") == req_* ]] || fail "$3: no request_id"
}

api POST /v1/sandboxes '{"twins": ["github",'
envelope 400 validation_failed "malformed JSON"
api POST /v1/sandboxes '["github"]'
envelope 400 validation_failed "a JSON array body"
api POST /v1/sandboxes '{"twins":["gitlab"]}'
envelope 422 validation_failed "unknown twin"
assert_jq .error.details.twin gitlab
api POST /v1/sandboxes '{"twins":["github","slack","stripe","github"]}'
envelope 422 validation_failed "four twins"
api POST /v1/sandboxes '{"twins":["github","github"]}'
envelope 422 validation_failed "a twin twice"
api POST /v1/sandboxes '{"twins":["github"],"seeds":{"github":"../../etc/passwd"}}'
envelope 422 validation_failed "a seed name with a path"
api POST /v1/sandboxes '{"twins":["github"],"ttl_seconds":"soon"}'
envelope 422 validation_failed "ttl_seconds of the wrong type"
api POST /v1/sandboxes '{"twins":["github"],"ttl":5}'
envelope 422 validation_failed "a misspelt field"
assert_jq .error.details.field ttl
head -c $((2 << 20)) /dev/zero | tr '\0' 'a' >"$TMP/big"
STATUS=$(curl -s -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer $API_KEY" \
        -H 'Content-Type: application/json' --data-binary @"$TMP/big" "$CONTROL/v1/sandboxes")
BODY=$(cat "$TMP/body")
envelope 413 validation_failed "a 2 MiB body"
api GET /v1/sandboxes/../usage
[[ $STATUS == 404 || $STATUS == 200 ]] || fail "'..' in a control path answered $STATUS"
STATUS=$(curl -s --path-as-is -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer $API_KEY" \
        "$CONTROL/v1/sandboxes/../../etc/passwd")
BODY=$(cat "$TMP/body")
envelope 404 not_found "'..' in a control path"
api DELETE /v1/usage
envelope 405 validation_failed "a wrong method"
STATUS=$(curl -s -o "$TMP/body" -w '%{http_code}' "$CONTROL/v1/usage")
BODY=$(cat "$TMP/body")
envelope 401 invalid_auth "no API key"
STATUS=$(curl -s -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer pome_wrong" "$CONTROL/v1/usage")
BODY=$(cat "$TMP/body")
envelope 401 invalid_auth "a wrong API key"
api GET /v1/sandboxes/ses_nope
envelope 404 not_found "an unknown sandbox"
pass "control API: malformed JSON, unknown twin, four twins, 2 MiB, '..', auth — one envelope"

create_sandbox github slack
GH=$(rest_url github) SL=$(rest_url slack)
STATUS=$(curl -s -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
        -H 'Content-Type: application/json' --data-binary @"$TMP/big" "$GH/repos/acme/api/issues")
BODY=$(cat "$TMP/body")
assert_status 413 "a 2 MiB body to the GitHub twin"
[[ $(jq -r .message <<<"$BODY") != null ]] || fail "413 is not in GitHub's envelope: $BODY"
twin_call POST "$GH/repos/acme/api/issues" "$TOKEN" '{"title": '
assert_status 400 "malformed JSON to GitHub"
assert_jq .message "Problems parsing JSON"
twin_call POST "$SL/chat.postMessage" "$TOKEN" '{"channel": ' application/json
assert_jq .ok false "malformed JSON to Slack"
for p in "/../../../etc/passwd" "/repos/acme/%2e%2e/%2e%2e/x" "/repos/%zz" "/repos/acme/api%00"; do
        STATUS=$(curl -s --path-as-is -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$GH$p")
        [[ $STATUS == 400 || $STATUS == 404 ]] || fail "gateway path $p answered $STATUS"
done
STATUS=$(curl -s --path-as-is -o /dev/null -w '%{http_code}' "$GATEWAY/../../etc/passwd")
assert_eq "$STATUS" 404 "'..' above the mount"
twin_call GET "$GATEWAY/gitlab/s/$SID/x" "$TOKEN"
assert_status 404 "an unknown twin"
twin_call GET "$GATEWAY/" ""
assert_status 404 "the gateway root"
twin_call GET "$GH/repos/acme/api/issues/99999999999999999999" "$TOKEN"
[[ $STATUS == 404 || $STATUS == 422 ]] || fail "a huge issue number answered $STATUS"
pass "gateway: 2 MiB, malformed JSON, '..', unknown twin, huge numbers — in the twin's envelope"

# Slow and half-sent requests do not block anyone else.
(exec 3<>"/dev/tcp/127.0.0.1/${GATEWAY##*:}"; printf 'POST /github/s/%s/x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc' "$SID" >&3; sleep 5) &
EXTRA_PIDS+=($!)
twin_call GET "$GH/repos/acme/api/issues/1" "$TOKEN"
assert_status 200 "a call while another connection stalls"
api GET /v1/usage
assert_status 200 "control API still serves"
kill -0 "$POMED_PID" || fail "pomed died"
discard "$SID"
pass "pomed keeps serving"

# A query parameter that is not text (a NUL) is refused, never read as absent.
api GET "/v1/sandboxes?limit=1%00x"
assert_status 422 "?limit=1%00x"
api GET "/v1/sandboxes?state=all%00x"
assert_status 422 "?state=all%00x"
pass "NUL in query parameters: 422, not silently dropped"
