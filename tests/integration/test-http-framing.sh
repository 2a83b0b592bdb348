#!/usr/bin/env bash
# Strict HTTP framing (RFC 9112 §6.1–6.3, §5, §3.2; RFC 9110 §5.5) on both listeners:
# every ambiguous or malformed request is answered 400 with Connection: close and
# the connection closed, before anything is routed, authenticated or taped — also
# when it follows a good request on a kept-alive connection, and the bytes smuggled
# behind it never become a request. A valid token followed by a NUL is not a token.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root

start_pomed
GP=${GATEWAY##*:}
CP=${CONTROL##*:}
create_sandbox github
P=/github/s/$SID
H="Host: x\r\nAuthorization: Bearer $TOKEN\r\n"

issues() {
        twin_call GET "$GATEWAY$P/_pome/state" "$TOKEN"
        jq '[.repositories[].issues | length] | add' <<<"$BODY"
}
tape_rows() {
        twin_call GET "$GATEWAY$P/_pome/events" "$TOKEN"
        jq length <<<"$BODY"
}
issues0=$(issues)
rows0=$(tape_rows)

# A create-issue call: taped and changes the world if it is ever served.
json='{"title":"smuggled"}'
len=${#json}
post="POST $P/repos/acme/api/issues HTTP/1.1\r\n$H"
smuggled="POST $P/repos/acme/api/issues HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: $len\r\n\r\n$json"

# expect_400 WHAT [OURS=1]: the last raw_http answer is a 400 that closed the connection.
expect_400() {
        [[ $RAW_STATUS == 400 ]] || fail "$1: expected 400, got '${RAW:0:200}'"
        [[ $RAW_CLOSED == 1 ]] || fail "$1: the connection stayed open"
        grep -qi $'^Connection: close\r$' <<<"$RAW_HEAD" || fail "$1: no Connection: close"
        if [[ ${2:-1} == 1 ]]; then
                # the GitHub twin's own envelope (the path names the twin)
                jq -e '.message and .documentation_url and .status == "400"' <<<"$(raw_body)" \
                        >/dev/null || fail "$1: not GitHub's envelope: $(raw_body)"
        fi
}

# Each case: method line + headers (the auth of a valid sandbox) + body.
cases=(
        "two equal Content-Lengths|${post}Content-Type: application/json\r\nContent-Length: $len\r\nContent-Length: $len\r\n\r\n$json"
        "two different Content-Lengths|${post}Content-Type: application/json\r\nContent-Length: $len\r\nContent-Length: 2\r\n\r\n$json"
        "Content-Length with Transfer-Encoding|${post}Content-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n$smuggled"
        "Transfer-Encoding with Content-Length|${post}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n$smuggled"
        "Transfer-Encoding gzip|${post}Transfer-Encoding: gzip\r\n\r\n$json"
        "Transfer-Encoding chunked, gzip|${post}Transfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n"
        "two Transfer-Encodings|${post}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
        "Transfer-Encoding on HTTP/1.0|POST $P/repos/acme/api/issues HTTP/1.0\r\n${H}Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
        "a control byte in a header name|${post}X-A\x01B: 1\r\nContent-Length: 0\r\n\r\n"
        "a space in a header name|${post}X A: 1\r\nContent-Length: 0\r\n\r\n"
        "a space before the colon|${post}Content-Length : $len\r\n\r\n$json"
        "a NUL in a header value|${post}X-A: 1\x00\r\nContent-Length: 0\r\n\r\n"
        "a bare CR in a header value|${post}X-A: 1\rX-B: 2\r\nContent-Length: 0\r\n\r\n"
        "a bare LF ending a header line|${post}X-A: 1\nContent-Length: 0\r\n\r\n"
        "an obs-fold continuation|${post}X-A: 1\r\n 2\r\nContent-Length: 0\r\n\r\n"
        "a raw 0xff in the request-target|GET $P/repos/acme/\xff HTTP/1.1\r\n$H\r\n"
        "a space in the request-target|GET $P/repos/acme/a b HTTP/1.1\r\n$H\r\n"
        "a tab in the request-target|GET $P/repos/acme/a\tb HTTP/1.1\r\n$H\r\n"
        "a NUL in the request-target|GET $P/repos/acme/api\x00/x HTTP/1.1\r\n$H\r\n"
        "two spaces after the method|GET  $P/repos/acme/api HTTP/1.1\r\n$H\r\n"
        "no Host on HTTP/1.1|GET $P/repos/acme/api HTTP/1.1\r\nAuthorization: Bearer $TOKEN\r\n\r\n"
        "two Hosts|GET $P/repos/acme/api HTTP/1.1\r\n${H}Host: y\r\n\r\n"
        "two Authorizations|GET $P/repos/acme/api HTTP/1.1\r\n${H}Authorization: Bearer x\r\n\r\n"
)
for c in "${cases[@]}"; do
        what=${c%%|*}
        raw_http "$GP" "${c#*|}"
        expect_400 "$what"
done
pass "${#cases[@]} framing cases: 400 in GitHub's envelope, Connection: close, closed"

# MHD refuses a malformed single Content-Length itself, before our code sees the
# request: right status, closed, but its own HTML body (see common/httpd.c).
for cl in "+3" "3, 3" "3 3" "0x3" "-1" "3a"; do
        raw_http "$GP" "${post}Content-Length: $cl\r\n\r\nabc"
        expect_400 "Content-Length '$cl'" 0
done
pass "malformed single Content-Length: 400, closed (libmicrohttpd's own body)"

# A valid token followed by a NUL and anything: not a credential (400 before auth).
raw_http "$GP" "GET $P/repos/acme/api HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer $TOKEN\x00junk\r\n\r\n"
expect_400 "token + NUL"
pass "a token followed by a NUL does not authenticate"

# Kept alive: a good request, then a smuggling one on the same connection.
for second in \
        "${post}Content-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n$smuggled" \
        "${post}Content-Type: application/json\r\nContent-Length: 0\r\nContent-Length: $((len + 4 + ${#smuggled}))\r\n\r\n$smuggled" \
        "${post}Transfer-Encoding: identity\r\nContent-Length: 0\r\n\r\n$smuggled"; do
        raw_http "$GP" "GET $P/_pome/health HTTP/1.1\r\n$H\r\n$second"
        [[ $RAW_STATUS == 200 ]] || fail "kept-alive: the first (valid) request got '${RAW:0:100}'"
        answers=$(grep -oE 'HTTP/1\.1 [0-9]{3} ' <<<"$RAW" | tr '\n' ,)
        [[ $answers == "HTTP/1.1 200 ,HTTP/1.1 400 ," ]] ||
                fail "kept-alive: expected a 200 then a 400, got '$answers': $RAW"
        [[ $RAW_CLOSED == 1 ]] || fail "kept-alive: the connection stayed open after the 400"
done
pass "kept-alive connection: valid request served, smuggling one 400 + close, smuggled bytes never served"

# The same on the control API: its envelope, and no sandbox is created.
used0=$(used)
body='{"twins":["github"]}'
raw_http "$CP" "POST /v1/sandboxes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer $API_KEY\r\nContent-Type: application/json\r\nContent-Length: ${#body}\r\nContent-Length: ${#body}\r\n\r\n$body"
expect_400 "control API: two Content-Lengths" 0
BODY=$(raw_body)
assert_jq .error.type validation_failed "control envelope"
assert_jq .error.details.reason bad_request "control envelope"
[[ $(jq -r .error.request_id <<<"$BODY") == req_* ]] || fail "control envelope without request_id: $BODY"
raw_http "$CP" "POST /v1/sandboxes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer $API_KEY\r\nContent-Length: ${#body}\r\nTransfer-Encoding: chunked\r\n\r\n$body"
expect_400 "control API: CL + TE" 0
assert_eq "$(used)" "$used0" "sandboxes in use after refused creates"
pass "control API: 400 in its envelope, nothing created"

# Nothing was served: no tape row, no issue.
assert_eq "$(tape_rows)" "$rows0" "tape rows after the framing cases"
assert_eq "$(issues)" "$issues0" "issues after the framing cases"
# And the normal path still works, with the same connection-level checks.
twin_call POST "$GATEWAY$P/repos/acme/api/issues" "$TOKEN" '{"title":"real"}'
assert_status 201 "a real create after all that"
assert_eq "$(issues)" "$((issues0 + 1))" "issues after a real create"
assert_eq "$(tape_rows)" "$((rows0 + 1))" "tape rows after a real create"
pass "nothing routed, authenticated or taped; valid requests still served"

# A local twin (pome twin start) refuses the same way, in the twin's envelope.
"$POME" twin start github --port 0 >"$TMP/twin.out" 2>"$TMP/twin.err" &
EXTRA_PIDS+=("$!")
for _ in $(seq 100); do grep -q "rest_url" "$TMP/twin.out" 2>/dev/null && break; sleep 0.05; done
REST=$(awk '$1 == "rest_url" { print $2 }' "$TMP/twin.out")
[[ -n $REST ]] || fail "pome twin start printed nothing: $(cat "$TMP/twin.err")"
LP=$(sed -E 's|^http://[^:]+:([0-9]+)/.*|\1|' <<<"$REST")
raw_http "$LP" "POST /s/ses_local/repos/acme/api/issues HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
expect_400 "local twin: CL + TE"
pass "local twin: 400 in GitHub's envelope"

# A credential's trailing whitespace is not part of it (RFC 9112 §5: OWS around a value).
raw_http "$GP" "GET $P/repos/acme/api HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer $TOKEN  \r\nConnection: close\r\n\r\n"
grep -q "^HTTP/1.1 200 " "$TMP/raw" || fail "a token followed by spaces: $(head -1 "$TMP/raw")"
pass "trailing whitespace after a credential is not part of it"
