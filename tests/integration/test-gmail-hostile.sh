#!/usr/bin/env bash
# Hostile input to the Gmail twin (issue 28), over the Gmail API v1 the way googleapis calls
# it (/gmail/v1/users/{userId}/…): malformed JSON and bodies that are no JSON object, bodies
# one byte under and one byte over pomed's limits.max_body (1M by default: README "Limits"),
# a `raw` that is not base64url, pathological RFC 822 messages, hostile `q` strings,
# maxResults/pageToken/format/labelIds out of their domain, ids with ../, %2F and 5 000
# bytes, a userId that is not the mailbox, labels/batches/filters past Gmail's limits, and the
# same through MCP (/mcp/call and JSON-RPC tools/call). Every refusal is Google's error envelope
# ({error:{code, message, errors:[{message, domain, reason}], status}}) with the HTTP
# status Gmail gives and error.code equal to it, the pod keeps its pid, and the world
# (/_pome/state) is byte for byte what it was.
# Messages Gmail takes as they are (users.messages.insert stores any RFC 822 bytes, "similar
# to IMAP APPEND") are accepted whole instead: format=raw gives back the very bytes, the pod
# keeps its pid, and nothing else in the mailbox changes (every other message, the labels).
source "$(dirname "$0")/lib.sh"
require_root
command -v python3 >/dev/null || skip "python3 is not installed (builds the large bodies)"

start_pomed # limits.max_body is its default, 1M
create_sandbox gmail
URL=$(rest_url gmail)
G=$URL/gmail/v1/users/me
JSONT=application/json
mkdir -p "$TMP/b"
PID0=$(pod_pid gmail)
[[ $PID0 =~ ^[0-9]+$ ]] || fail "no Gmail pod pid: $PID0"

b64url() { base64 -w0 | tr '+/' '-_' | tr -d '='; }

# A message of our own to name: users.messages.insert, as IMAP APPEND does.
RAW0=$(printf 'From: alice@example.com\r\nTo: pome-agent@pome-twin.test\r\nSubject: hostile base\r\nMessage-ID: <base@example.com>\r\n\r\nhello\r\n' | b64url)
code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" -H "Content-Type: $JSONT" \
        --data-binary "{\"raw\":\"$RAW0\",\"labelIds\":[\"INBOX\",\"UNREAD\"]}" "$G/messages")
[[ $code == 200 ]] || fail "messages.insert of a plain message: HTTP $code $(head -c 300 "$TMP/resp")"
MID=$(jq -r .id "$TMP/resp")
[[ $MID =~ ^[A-Za-z0-9_-]+$ ]] || fail "messages.insert: no id: $(head -c 300 "$TMP/resp")"
world_state "$URL" "$TMP/before"
jq -e 'type == "object"' "$TMP/before" >/dev/null || fail "no /_pome/state: $(head -c 200 "$TMP/before")"

python3 - "$TMP/b" <<'EOF'
import base64, json, os, sys
d = sys.argv[1]
LIMIT = 1 << 20  # pomed's default limits.max_body
def w(name, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
def b64u(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()
head = b"From: mallory@example.com\r\nTo: pome-agent@pome-twin.test\r\nSubject: hostile\r\n"
deep = 100000
w("deep.json", '{"raw":' + "[" * deep + "]" * deep + "}")
w("deep-obj.json", '{"addLabelIds":' + '{"a":' * deep + "1" + "}" * deep + "}")
# 10 000 ORs: past the 8 KiB request-target in a query, within the body limit as an MCP call
w("ors", "+OR+".join("x" for i in range(10001)))
w("ors2000", "+OR+".join("x" for i in range(2001)))
w("mcp-ors.json", json.dumps({"tool": "search_threads", "arguments": {"query": " OR ".join("from:u%d" % i for i in range(10000))}}))
w("ors800", "+OR+".join("a%d" % i for i in range(800)))
# one byte under and one over the gateway's body limit: a raw that is no base64url
pre, post = b'{"raw":"', b'"}'
w("near.json", pre + b"!" * (LIMIT - len(pre) - len(post)) + post)
w("over.json", pre + b"!" * (LIMIT + 1 - len(pre) - len(post)) + post)
# a valid message that fills the limit: Gmail takes 35 MB, so it is accepted whole
body = b"\r\n"
msg = head + b"\r\n"
n = (LIMIT - len(b'{"raw":""}')) * 3 // 4 - len(msg) - 8
msg += (b"x" * 76 + b"\r\n") * (n // 78)
w("near-ok.raw", msg)
w("near-ok.json", json.dumps({"raw": b64u(msg)}))
# pathological RFC 822 messages, each as raw bytes and as an insert body
def both(name, raw):
    w(name + ".raw", raw)
    w(name + ".json", json.dumps({"raw": b64u(raw), "labelIds": ["INBOX"]}))
n = 10000
nest = b"".join(b"Content-Type: multipart/mixed; boundary=b%d\r\n\r\n--b%d\r\n" % (i, i) for i in range(n))
nest = head + b"MIME-Version: 1.0\r\n" + nest + b"Content-Type: text/plain\r\n\r\ninnermost\r\n" + \
    b"".join(b"--b%d--\r\n" % i for i in reversed(range(n)))
both("nested", nest)
both("unclosed", head + b'MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="never"\r\n\r\n'
     b"--never\r\nContent-Type: text/plain\r\n\r\nthe close-delimiter never comes\r\n")
both("headers", head + b"".join(b"X:%d\r\n" % (i % 10) for i in range(100000)) + b"\r\nbody\r\n")
both("nul", head + b"X-Nul: a\x00b\r\n\r\nbody with a \x00 NUL\r\n")
both("badutf8", head.replace(b"hostile", b"\xff\xfe \xc0\xae") + b"\r\nbody \xff\xfe\xc0\xae\r\n")
both("charset", b"From: =?x-no-such-charset?B?bWFsbG9yeQ==?= <mallory@example.com>\r\n"
     b"To: pome-agent@pome-twin.test\r\nSubject: =?bogus-8?Q?caf=E9?= =?utf-8?X?nope?=\r\n\r\nbody\r\n")
EOF

ST=$TMP/st
# expect METHOD PATH WANT [BODYFILE] [CTYPE] [CURL-ARG…]: PATH under $URL (or a full URL);
# the answer is "HTTP:status" matching WANT, a regex: 400:INVALID_ARGUMENT, 200:OK… A non-2xx
# answer is Google's envelope with error.code the HTTP status; a 200 is a JSON object with
# no error. The pod keeps its pid.
expect() {
        local method=$1 path=$2 want=$3 file=${4:-} ctype=${5:-$JSONT}
        shift $(($# < 5 ? $# : 5))
        local args=(-s -o "$TMP/resp" -w '%{http_code}' -X "$method" -H "Authorization: Bearer $TOKEN")
        [[ -n $file ]] && args+=(-H "Content-Type: $ctype" --data-binary "@$file")
        [[ $path == http* ]] || path=$URL$path
        local code label="$method ${path#"$URL"} ${file:+$(basename "$file")}${1:+ ${*: -1}}"
        label=${label:0:120}
        code=$(curl "${args[@]}" "$@" "$path") || code=000
        local got
        if [[ $code == 2* ]]; then
                jq -e 'type == "object" and (has("error") | not)' "$TMP/resp" >/dev/null ||
                        fail "$label: HTTP $code but no Gmail resource: $(head -c 300 "$TMP/resp")"
                got="$code:OK"
        else
                jq -e --argjson c "${code#0}" '(.error | type == "object") and .error.code == $c and
                        (.error.message | type == "string" and length > 0) and
                        (.error.status | type == "string" and test("^[A-Z_]+$")) and
                        (.error.errors | type == "array" and length > 0) and
                        all(.error.errors[]; (.message | type == "string") and
                                (.domain | type == "string") and (.reason | type == "string"))' \
                        "$TMP/resp" >/dev/null 2>&1 ||
                        fail "$label: HTTP $code, not Google's error envelope: $(head -c 300 "$TMP/resp")"
                got="$code:$(jq -r .error.status "$TMP/resp")"
        fi
        [[ $got =~ ^($want)$ ]] || fail "$label: $got, want $want: $(head -c 300 "$TMP/resp")"
        local pid
        pid=$(pod_pid gmail)
        [[ $pid == "$PID0" ]] || fail "$label: the pod changed ($PID0 → $pid)"
        pass "$label → $got $(jq -r '.error.message // empty' "$TMP/resp" | head -c 70)"
}
BAD="400:INVALID_ARGUMENT"

# ---- bodies that are no JSON object: Google's "Invalid JSON payload received" (400)
expect POST /gmail/v1/users/me/messages/send "$BAD" "$(inline_body '{oops')"
expect POST /gmail/v1/users/me/messages/send "$BAD" "$(inline_body '{"raw":"aGk"')"
expect POST /gmail/v1/users/me/messages/send "$BAD" "$(inline_body '[{"raw":"aGk"}]')"
expect POST /gmail/v1/users/me/messages/send "$BAD" "$(inline_body '"raw"')"
expect POST /gmail/v1/users/me/messages "$BAD" "$(inline_body '[]')"
expect POST /gmail/v1/users/me/labels "$BAD" "$(inline_body '{"name":"x",}')"
expect POST "/gmail/v1/users/me/messages/$MID/modify" "$BAD" "$(inline_body '["INBOX"]')"
expect POST "/gmail/v1/users/me/messages/$MID/modify" "$BAD" "$TMP/b/deep-obj.json"
expect POST /gmail/v1/users/me/messages/send "$BAD" "$TMP/b/deep.json"
expect POST /gmail/v1/users/me/drafts "$BAD" "$(inline_body '{"message":"not an object"}')"
# ---- wrong types and missing fields
expect POST /gmail/v1/users/me/messages/send "$BAD" "$(inline_body '{"raw":5}')"
expect POST /gmail/v1/users/me/messages/send "$BAD" "$(inline_body '{}')"
expect POST "/gmail/v1/users/me/messages/$MID/modify" "$BAD" "$(inline_body '{"addLabelIds":{"STARRED":true}}')"
expect POST "/gmail/v1/users/me/messages/$MID/modify" "$BAD" "$(inline_body '{"removeLabelIds":[["UNREAD"]]}')"
expect POST /gmail/v1/users/me/labels "$BAD" "$(inline_body '{"name":7}')"
# ---- raw that is not base64url, and one that decodes to no message Gmail can send
expect POST /gmail/v1/users/me/messages/send "$BAD" "$(inline_body '{"raw":"!!!not base64url!!!"}')"
expect POST /gmail/v1/users/me/messages "$BAD" "$(inline_body '{"raw":"a\u0000b"}')"
expect POST /gmail/v1/users/me/messages/send "$BAD" "$(inline_body "{\"raw\":\"$(printf 'Subject: no recipient\r\n\r\nx' | b64url)\"}")"
# ---- one byte under pomed's body limit (the twin refuses the raw), one byte over (pomed's 413,
# in Google's envelope: Google answers a body past its limit with its envelope too)
expect POST /gmail/v1/users/me/messages/send "$BAD" "$TMP/b/near.json"
expect POST /gmail/v1/users/me/messages/send "413:[A-Z_]+" "$TMP/b/over.json"
# ---- q: unbalanced parentheses, quotes and braces, 800 ORs, 10 000 ORs. Gmail documents
# no grammar error for q: a list (perhaps empty) or a 400 INVALID_ARGUMENT are both its own.
Q="200:OK|$BAD"
for q in '(from:alice' 'from:alice)' '"unclosed' '{from:a from:b' 'from:a}' '((((((((((' \
        '-' 'OR' 'label:' 'subject:"' '\' 'in:nowhere' 'newer_than:abc' 'after:9999999999999999999999'; do
        expect GET "/gmail/v1/users/me/messages" "$Q" "" "" -G --data-urlencode "q=$q"
        expect GET "/gmail/v1/users/me/threads" "$Q" "" "" -G --data-urlencode "q=$q"
done
expect GET "/gmail/v1/users/me/messages?q=$(cat "$TMP/b/ors800")" "$Q"
# past pomed's 8 KiB request-target: its 414, in Google's envelope (2 000 ORs, 10 KB); 10 000
# ORs (50 KB) pass libmicrohttpd's 32 KiB request pool, whose own 414 answers first (as
# test-http-edges has it): refused before any pod, the pod serving
expect GET "/gmail/v1/users/me/messages?q=$(cat "$TMP/b/ors2000")" "414:[A-Z_]+"
code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$G/messages?q=$(cat "$TMP/b/ors")")
[[ $code =~ ^(414|431)$ && $(pod_pid gmail) == "$PID0" ]] || fail "10 000 ORs in q: HTTP $code"
pass "GET messages?q=<10 000 ORs> → $code before any pod"
# ---- maxResults (uint32, at most 500: a larger one is capped), pageToken, format, labelIds
expect GET "/gmail/v1/users/me/messages?maxResults=-1" "$BAD"
expect GET "/gmail/v1/users/me/messages?maxResults=abc" "$BAD"
expect GET "/gmail/v1/users/me/messages?maxResults=99999999999999999999999" "$BAD"
expect GET "/gmail/v1/users/me/messages?maxResults=0" "200:OK|$BAD"
# past the documented maximum (500): Gmail answers at most 500; a refusal is hosted Pome's reading
expect GET "/gmail/v1/users/me/messages?maxResults=100000" "200:OK|$BAD"
jq -e '(.messages // []) | length <= 500' "$TMP/resp" >/dev/null || fail "maxResults=100000 is not capped at 500"
expect GET "/gmail/v1/users/me/threads?maxResults=-5" "$BAD"
expect GET "/gmail/v1/users/me/messages?pageToken=garbage" "$BAD"
expect GET "/gmail/v1/users/me/messages?pageToken=%00%FF%FE" "$BAD"
expect GET "/gmail/v1/users/me/threads?pageToken=$(head -c 3000 /dev/zero | tr '\0' A)" "$BAD"
expect GET "/gmail/v1/users/me/history?startHistoryId=abc" "$BAD"
expect GET "/gmail/v1/users/me/messages/$MID?format=bogus" "$BAD"
expect GET "/gmail/v1/users/me/messages/$MID?format=" "200:OK|$BAD"
# ---- labels that do not exist: Gmail's 400 "Invalid label: …" (a list filtered by one, a
# modify adding one: nothing of the modify is applied), and 404 for a label read
expect GET "/gmail/v1/users/me/threads?labelIds=Label_does_not_exist" "$BAD"
expect GET "/gmail/v1/users/me/messages?labelIds=INBOX&labelIds=Label_nope" "$BAD"
expect POST "/gmail/v1/users/me/messages/$MID/modify" "$BAD" "$(inline_body '{"addLabelIds":["Label_does_not_exist"]}')"
expect POST "/gmail/v1/users/me/messages/$MID/modify" "$BAD" "$(inline_body '{"addLabelIds":["STARRED","Label_nope"],"removeLabelIds":["UNREAD"]}')"
expect POST /gmail/v1/users/me/messages/batchModify "$BAD" "$(inline_body "{\"ids\":[\"$MID\"],\"addLabelIds\":[\"Label_nope\"]}")"
expect GET /gmail/v1/users/me/labels/Label_does_not_exist "404:NOT_FOUND"
expect DELETE /gmail/v1/users/me/labels/INBOX "$BAD|403:PERMISSION_DENIED"
# ---- labels, batches and filters past what Gmail takes: a system label's name (409 "Label name
# exists or conflicts", or 400), a 10 000-character name, a system label renamed, 1 001 ids in
# a batch (Gmail's limit is 1 000), a filter without criteria or adding a label that does not exist
expect POST /gmail/v1/users/me/labels "409:ALREADY_EXISTS|$BAD" "$(inline_body '{"name":"INBOX"}')"
expect POST /gmail/v1/users/me/labels "$BAD" "$(inline_body "{\"name\":\"$(head -c 10000 /dev/zero | tr '\0' n)\"}")"
expect PATCH /gmail/v1/users/me/labels/INBOX "$BAD|403:PERMISSION_DENIED" "$(inline_body '{"name":"Renamed"}')"
expect POST /gmail/v1/users/me/messages/batchDelete "$BAD" "$(inline_body "$(jq -cn --arg m "$MID" '{ids: ([range(1000) | "m\(.)"] + [$m])}')")"
expect POST /gmail/v1/users/me/messages/batchModify "$BAD" "$(inline_body "$(jq -cn --arg m "$MID" '{ids: ([range(1000) | "m\(.)"] + [$m]), addLabelIds: ["STARRED"]}')")"
expect POST /gmail/v1/users/me/settings/filters "$BAD" "$(inline_body '{"criteria":{},"action":{"addLabelIds":["STARRED"]}}')"
expect POST /gmail/v1/users/me/settings/filters "$BAD" "$(inline_body '{"criteria":{"from":"a@example.com"},"action":{"addLabelIds":["Label_nope"]}}')"
# ---- ids: ../, %2F, NUL, 5 000 bytes, unknown (400 "Invalid id value" or 404, never another resource)
ID="$BAD|404:NOT_FOUND"
# a literal ../ (sent as it is): refused, or resolved as RFC 3986 resolves dot-segments, to
# this mailbox's own profile
expect GET "/gmail/v1/users/me/messages/../../me/profile" "$ID|200:OK" "" "" --path-as-is
[[ $(jq -r '.error.code // .emailAddress' "$TMP/resp") != null ]] || fail "../: $(head -c 200 "$TMP/resp")"
expect GET "/gmail/v1/users/me/messages/..%2F..%2Fprofile" "$ID"
expect GET "/gmail/v1/users/me/messages/$MID%2F..%2F$MID" "$ID"
expect GET "/gmail/v1/users/me/messages/%2E%2E" "$ID"
expect GET "/gmail/v1/users/me/messages/a%00b" "$ID"
expect GET "/gmail/v1/users/me/messages/%FF%FE" "$ID"
expect GET "/gmail/v1/users/me/messages/$(head -c 5000 /dev/zero | tr '\0' f)" "$ID"
expect GET "/gmail/v1/users/me/messages/ffffffffffffffff" "404:NOT_FOUND"
expect POST "/gmail/v1/users/me/messages/ffffffffffffffff/modify" "404:NOT_FOUND" "$(inline_body '{"addLabelIds":["STARRED"]}')"
expect POST "/gmail/v1/users/me/messages/..%2F$MID/trash" "$ID"
expect DELETE "/gmail/v1/users/me/threads/$(head -c 5000 /dev/zero | tr '\0' 0)" "$ID"
# ---- userId that is not the mailbox: Gmail's 403 "Delegation denied" (or 404)
WHO="403:PERMISSION_DENIED|404:NOT_FOUND"
expect GET "/gmail/v1/users/someone-else@example.com/profile" "$WHO"
expect GET "/gmail/v1/users/someone-else@example.com/messages" "$WHO"
expect GET "/gmail/v1/users/..%2Fme/messages" "$WHO|$BAD"
expect POST "/gmail/v1/users/other@example.com/messages/$MID/modify" "$WHO" "$(inline_body '{"addLabelIds":["STARRED"]}')"
expect GET "/gmail/v1/users/$(head -c 3000 /dev/zero | tr '\0' u)/profile" "$WHO|$BAD"

# ---- MCP's /mcp/call: what does not parse, and a 10 000-OR search (within the body limit)
expect POST /mcp/call "$BAD" "$(inline_body '{oops')"
expect POST /mcp/call "$BAD" "$TMP/b/deep.json"
expect POST /mcp/call "$BAD|200:OK" "$TMP/b/mcp-ors.json"
expect POST /mcp/call "$BAD" "$(inline_body "{\"tool\":\"label_message\",\"arguments\":{\"messageId\":\"$MID\",\"labelIds\":[\"Label_nope\"]}}")"
expect POST /mcp/call "$BAD" "$(inline_body '{"tool":"search_threads","arguments":{"pageSize":-1}}')"
expect POST /mcp/call "$ID" "$(inline_body '{"tool":"get_message","arguments":{"messageId":"../../_pome/state"}}')"
expect POST /mcp/call "$ID" "$(inline_body '{"tool":"get_thread","arguments":{"threadId":5}}')"
# ... and over JSON-RPC (POST /mcp tools/call): a tool error (result.isError) carrying Google's envelope
rpc() {
        local args=$1 want=$2
        code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" -H "Content-Type: $JSONT" \
                --data-binary "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":$args}" "$URL/mcp")
        local got
        got=$(jq -r 'select(.id == 7 and .result.isError == true) | .result.content[0].text | fromjson |
                "\(.error.code):\(.error.status)"' "$TMP/resp" 2>/dev/null) || got=
        [[ $code == 200 && $got =~ ^($want)$ ]] || fail "tools/call $args: HTTP $code: $(head -c 300 "$TMP/resp")"
        [[ $(pod_pid gmail) == "$PID0" ]] || fail "tools/call $args: the pod changed"
        pass "tools/call ${args:0:70} → isError, $got"
}
rpc '{"name":"get_message","arguments":{"messageId":"../../x"}}' "$ID"
rpc '{"name":"search_threads","arguments":{"query":"(((("}}' "$BAD"
rpc "{\"name\":\"label_message\",\"arguments\":{\"messageId\":\"$MID\",\"labelIds\":[\"Label_nope\"]}}" "$BAD"
rpc '{"name":"create_draft","arguments":{"to":[5]}}' "$BAD"

# ---- the world is exactly what it was, the pod the one it was
world_state "$URL" "$TMP/after"
cmp -s "$TMP/before" "$TMP/after" || fail "the world changed: $(diff "$TMP/before" "$TMP/after" | head -20)"
[[ $(pod_pid gmail) == "$PID0" ]] || fail "the pod changed"
pass "refusals: world unchanged, pod $PID0 still serving"

# ---- messages Gmail takes as they are. users.messages.insert stores the RFC 822 bytes it is
# given (Gmail documents only a size limit, 35 MB for send / 150 MB for insert): NUL bytes, 8-bit
# headers that are no UTF-8, an encoded word in a charset that does not exist (RFC 2047 6.2:
# shown as it is), a multipart whose close-delimiter never comes (RFC 2046 5.1.1: Gmail reads
# to the end) and a message filling pomed's body limit are each accepted and come back byte
# for byte as format=raw. Gmail documents no limit on MIME nesting or on the number of
# header fields; hosted Pome refuses past 20 levels and 1 000 fields with 400
# invalidArgument. For those two either is Gmail-shaped: accepted whole, or that 400 with
# the world unchanged.
# view FILE: the mailbox through the API: labels, every message (format=raw) but the new one.
view() {
        local out=$1 skip=${2:-} id
        {
                curl -s -H "Authorization: Bearer $TOKEN" "$G/labels" | jq -S '[.labels[] | {id, name, type}] | sort_by(.id)'
                curl -s -H "Authorization: Bearer $TOKEN" "$G/messages?includeSpamTrash=true&maxResults=500" |
                        jq -r '(.messages // [])[].id' | sort >"$TMP/ids"
                while read -r id; do
                        [[ $id == "$skip" ]] && continue
                        curl -s -H "Authorization: Bearer $TOKEN" "$G/messages/$id?format=raw" | jq -S 'del(.historyId)'
                done <"$TMP/ids"
        } >"$out"
}
accept() {
        local name=$1 may_refuse=${2:-}
        view "$TMP/view0"
        local n0
        n0=$(wc -l <"$TMP/ids")
        world_state "$URL" "$TMP/w0"
        expect POST /gmail/v1/users/me/messages "200:OK${may_refuse:+|$BAD}" "$TMP/b/$name.json"
        local pid
        pid=$(pod_pid gmail)
        [[ $pid == "$PID0" ]] || fail "$name: the pod changed"
        if [[ $(jq -r '.error.code // empty' "$TMP/resp") == 400 ]]; then
                world_state "$URL" "$TMP/w1"
                cmp -s "$TMP/w0" "$TMP/w1" || fail "$name: refused, yet the world changed: $(diff "$TMP/w0" "$TMP/w1" | head)"
                pass "$name: refused in Google's envelope, the world unchanged"
                return
        fi
        local id
        id=$(jq -r .id "$TMP/resp")
        [[ $id =~ ^[A-Za-z0-9_-]+$ ]] || fail "$name: no id: $(head -c 200 "$TMP/resp")"
        code=$(curl -s -o "$TMP/got" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$G/messages/$id?format=raw")
        [[ $code == 200 ]] || fail "$name: format=raw answered $code: $(head -c 200 "$TMP/got")"
        jq -r .raw "$TMP/got" | tr -- '-_' '+/' | python3 -c '
import base64, sys
s = sys.stdin.read().strip()
sys.stdout.buffer.write(base64.b64decode(s + "=" * (-len(s) % 4)))' >"$TMP/got.raw"
        cmp -s "$TMP/got.raw" "$TMP/b/$name.raw" ||
                fail "$name: the message came back changed ($(stat -c %s "$TMP/got.raw") bytes, sent $(stat -c %s "$TMP/b/$name.raw")): $(cmp "$TMP/got.raw" "$TMP/b/$name.raw" | head -1)"
        code=$(curl -s -o "$TMP/got" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$G/messages/$id?format=full")
        [[ $code == 200 ]] && jq -e --arg id "$id" '.id == $id and (.payload | type == "object")' "$TMP/got" >/dev/null ||
                fail "$name: format=full answered $code: $(head -c 200 "$TMP/got")"
        view "$TMP/view1" "$id"
        assert_eq "$(wc -l <"$TMP/ids")" $((n0 + 1)) "$name: messages in the mailbox"
        cmp -s "$TMP/view0" "$TMP/view1" || fail "$name: another message or a label changed: $(diff "$TMP/view0" "$TMP/view1" | head)"
        [[ $(pod_pid gmail) == "$PID0" ]] || fail "$name: the pod changed"
        pass "$name: accepted whole ($(stat -c %s "$TMP/b/$name.raw") bytes back byte for byte), nothing else changed"
}
accept nul
accept badutf8
accept charset
accept unclosed
accept near-ok
accept nested may-refuse
accept headers may-refuse
[[ $(pod_pid gmail) == "$PID0" ]] || fail "the pod changed"
pass "pod $PID0 still serving"
