#!/usr/bin/env bash
# Exact edges: every request near a size limit — request-target, one huge header,
# many headers, body — gets an answer on both listeners: the normal reply up to the
# limit, 414/431/413 one byte past it (in the surface's envelope), and a complete
# answer (never a silent close) all the way through libmicrohttpd's own limit: the
# 60 000–70 000-byte band where requests used to be closed with no reply and a URI
# buffer leaked. pomed's log must stay free of sanitizer reports (checked at stop).
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root

MAX_BODY=65536
start_pomed "limits:" "  max_body: 64K"
GP=${GATEWAY##*:}
CP=${CONTROL##*:}
create_sandbox github
P=/github/s/$SID
export RAW_WAIT=5

MAX_TARGET=8192 MAX_BLOCK=16384 MAX_FIELDS=128
declare -A seen=() # status → count, for the summary
ours=0 mhds=0

pad() { # pad N: N bytes of 'a' in PAD (no fork: this runs hundreds of times)
        PAD=a
        while ((${#PAD} < $1)); do PAD+=$PAD; done
        PAD=${PAD:0:$1}
}

# answered WHAT EXPECTED…: the last raw_http got a complete answer with one of the
# expected statuses (empty list = any status) and the connection was closed.
answered() {
        local what=$1 s ok=0
        shift
        [[ -n $RAW_STATUS ]] || fail "$what: no answer at all (silent close)"
        [[ $RAW_CLOSED == 1 ]] || fail "$what: the connection stayed open"
        for s in "$@"; do [[ $RAW_STATUS == "$s" ]] && ok=1; done
        [[ $# -eq 0 || $ok == 1 ]] || fail "$what: expected $*, got $RAW_STATUS: ${RAW:0:300}"
        # a complete answer: as many body bytes as Content-Length says
        local cl="" body=${RAW#*$'\r\n\r\n'}
        [[ ${RAW_HEAD,,} =~ content-length:\ ([0-9]+) ]] && cl=${BASH_REMATCH[1]}
        [[ -z $cl || ${#body} -ge $cl ]] || fail "$what: body shorter than Content-Length $cl"
        seen[$RAW_STATUS]=$((${seen[$RAW_STATUS]:-0} + 1))
        if [[ $RAW_STATUS -ge 400 ]]; then
                if [[ $body == "{"* ]]; then ours=$((ours + 1)); else mhds=$((mhds + 1)); fi
        fi
}

# in_envelope WHICH: the last answer's body is the surface's envelope.
in_envelope() {
        local body
        body=$(raw_body)
        case $1 in
        github) jq -e '.message and .documentation_url' <<<"$body" >/dev/null ||
                fail "not GitHub's envelope: $body" ;;
        control) jq -e '.error.type == "validation_failed" and (.error.request_id | startswith("req_"))' \
                <<<"$body" >/dev/null || fail "not the control envelope: $body" ;;
        esac
}

# Request shapes, per listener: LINE_PREFIX (before the padding in the target),
# HEADERS (after Host), the envelope and the normal status.
g_target="$P/_pome/health?pad="
g_headers="Host: x\r\nAuthorization: Bearer $TOKEN\r\nConnection: close\r\n"
c_target="/v1/usage?pad="
c_headers="Host: x\r\nAuthorization: Bearer $API_KEY\r\nConnection: close\r\n"

# block_req LISTENER N: a GET whose header block (request line .. final CRLF) is N bytes,
# grown by one X-Pad header.
block_req() {
        local port target headers
        if [[ $1 == g ]]; then port=$GP target=$g_target headers=$g_headers; else port=$CP target=$c_target headers=$c_headers; fi
        local base
        printf -v base "GET ${target}1 HTTP/1.1\r\n${headers}X-Pad: \r\n\r\n"
        pad $(($2 - ${#base}))
        raw_http "$port" "GET ${target}1 HTTP/1.1\r\n${headers}X-Pad: $PAD\r\n\r\n"
}
# target_req LISTENER N: a GET whose request-target is N bytes.
target_req() {
        local port target headers
        if [[ $1 == g ]]; then port=$GP target=$g_target headers=$g_headers; else port=$CP target=$c_target headers=$c_headers; fi
        pad $(($2 - ${#target}))
        raw_http "$port" "GET $target$PAD HTTP/1.1\r\n$headers\r\n"
}
# fields_req LISTENER N: a GET with N header fields in all.
fields_req() {
        local port target headers extra="" i
        if [[ $1 == g ]]; then port=$GP target=$g_target headers=$g_headers; else port=$CP target=$c_target headers=$c_headers; fi
        for ((i = 3; i < $2; i++)); do extra+="X-F$i: v\r\n"; done
        raw_http "$port" "GET ${target}1 HTTP/1.1\r\n$headers$extra\r\n"
}

for l in g c; do
        env=$([[ $l == g ]] && echo github || echo control)
        port=$([[ $l == g ]] && echo "$GP" || echo "$CP")

        # the request-target: 8192 bytes served, 8193 refused
        target_req $l $MAX_TARGET
        answered "$env target $MAX_TARGET" 200
        target_req $l $((MAX_TARGET + 1))
        answered "$env target $((MAX_TARGET + 1))" 414
        in_envelope $env
        target_req $l $((MAX_TARGET - 1))
        answered "$env target $((MAX_TARGET - 1))" 200

        # the header block: 16384 bytes served, 16385 refused
        for n in $((MAX_BLOCK - 1)) $MAX_BLOCK; do
                block_req $l $n
                answered "$env header block $n" 200
        done
        block_req $l $((MAX_BLOCK + 1))
        answered "$env header block $((MAX_BLOCK + 1))" 431
        in_envelope $env

        # header fields: 128 served, 129 refused
        for n in $((MAX_FIELDS - 1)) $MAX_FIELDS; do
                fields_req $l $n
                answered "$env $n header fields" 200
        done
        fields_req $l $((MAX_FIELDS + 1))
        answered "$env $((MAX_FIELDS + 1)) header fields" 431
        in_envelope $env
        for n in 500 1000 2000 3000; do
                fields_req $l $n
                answered "$env $n header fields" 431
        done
        pass "$env: request-target, header block and field count at their limits ±1"

        # coarse up to 70 000, and fine around libmicrohttpd's own limit (its 32 KiB pool:
        # ~32 560 for a header block, ~32 740 for a request line)
        for n in $(seq 20000 500 70000) $(seq 32450 7 32850); do
                block_req $l "$n"
                answered "$env header block $n" 431
        done
        for n in $(seq 20000 1000 70000) $(seq 32450 11 32850); do
                target_req $l "$n"
                answered "$env target $n" 414 431
        done
        pass "$env: 20 000–70 000-byte requests all answered (431/414)"
done

# Bodies: max_body (64 KiB) served, one byte more refused, by Content-Length and chunked.
mcp_body() { # mcp_body N: a tools/list call of exactly N bytes in BODY_N
        local head='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{},"x":"' tail='"}'
        pad $(($1 - ${#head} - ${#tail}))
        BODY_N=$head$PAD$tail
}
for n in $((MAX_BODY - 1)) $MAX_BODY $((MAX_BODY + 1)) $((MAX_BODY + 1000)); do
        mcp_body $n
        raw_http "$GP" "POST $P/mcp HTTP/1.1\r\n${g_headers}Content-Type: application/json\r\nContent-Length: $n\r\n\r\n%s" "$BODY_N"
        if [[ $n -le $MAX_BODY ]]; then
                answered "gateway body $n" 200
        else
                answered "gateway body $n" 413
                in_envelope github
        fi
        raw_http "$GP" "POST $P/mcp HTTP/1.1\r\n${g_headers}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" "$n" "$BODY_N"
        if [[ $n -le $MAX_BODY ]]; then
                answered "gateway chunked body $n" 200
        else
                answered "gateway chunked body $n" 413
        fi
        raw_http "$CP" "POST /v1/sandboxes HTTP/1.1\r\n${c_headers}Content-Type: application/json\r\nContent-Length: $n\r\n\r\n%s" "$BODY_N"
        if [[ $n -le $MAX_BODY ]]; then
                answered "control body $n" 400 422
        else
                answered "control body $n" 413
                in_envelope control
        fi
done
# a body announced far over the limit is refused before it is sent
raw_http "$GP" "POST $P/mcp HTTP/1.1\r\n${g_headers}Content-Length: 1000000000\r\n\r\n"
answered "gateway Content-Length 1e9" 413
pass "bodies: max_body served, max_body + 1 refused with 413 (Content-Length and chunked)"

# A method that is not UTF-8 reaches the twin, and its tape row has it mended (U+FFFD):
# the row used to fail to build, which failed the sandbox (tape_error) on a caller's bytes.
raw_http "$GP" "G\xffT $P/repos/acme/api/issues/1 HTTP/1.1\r\n${g_headers}\r\n"
[[ -n $RAW_STATUS ]] || fail "no answer to a method that is not UTF-8: ${RAW:0:200}"
api GET "/v1/sandboxes/$SID"
assert_jq .state running "the sandbox after a method that is not UTF-8"
curl -s -H "Authorization: Bearer $TOKEN" "$GATEWAY$P/_pome/events" | jq -c '.[-1]' >"$TMP/row"
assert_eq "$(jq -r .method "$TMP/row")" $'G\uFFFDT' "the taped method"
pass "a method that is not UTF-8: answered $RAW_STATUS, taped mended, the sandbox runs on"

# The server is still fine, on both listeners.
twin_call GET "$GATEWAY$P/_pome/health" "$TOKEN"
assert_status 200 "gateway after the sweep"
api GET /v1/usage
assert_status 200 "control API after the sweep"
summary=$(for s in "${!seen[@]}"; do printf '%s×%s ' "$s" "${seen[$s]}"; done)
pass "sweep answers: $summary(refusals in our envelope: $ours, libmicrohttpd's own: $mhds)"
stop_pomed || fail "pomed stopped unclean (sanitizer report or exit status)"
pass "no sanitizer report in pomed's log"
