#!/usr/bin/env bash
# Hostile input to the Slack twin (issue 7): JSON nested 100 000 deep, integers beyond 64
# bits, NUL and invalid UTF-8 in strings and forms, a 2 MiB body, wrong types, malformed
# multipart framing, over the Web API (form, JSON, multipart, GET + query) and MCP. Every one is refused in Slack's own shape (HTTP
# 200 {ok:false, error:"…"}; MCP: a parse refusal for what does not parse, a tool error
# otherwise), the pod keeps its pid, and the world (/_pome/state) is byte for
# byte what it was.
source "$(dirname "$0")/lib.sh"
require_root
command -v python3 >/dev/null || skip "python3 is not installed (builds the large bodies)"

start_pomed "limits:" "  max_body: 4M"
create_sandbox slack
URL=$(rest_url slack)
FORM=application/x-www-form-urlencoded
JSONT=application/json
mkdir -p "$TMP/b"

PID0=$(pod_pid slack)
world_state "$URL" "$TMP/before"

python3 - "$TMP/b" <<'EOF'
import json, os, sys
d = sys.argv[1]
def w(name, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
deep = 100000
w("deep.json", '{"channel":"C_GENERAL","text":"x","blocks":' + "[" * deep + "]" * deep + "}")
w("deep-obj.json", '{"channel":"C_GENERAL","text":' + '{"a":' * deep + "1" + "}" * deep + "}")
w("bigint.json", '{"channel":"C_GENERAL","limit":123456789012345678901234567890}')
w("bigint-post.json", '{"channel":"C_GENERAL","text":"later","post_at":18446744073709551617}')
w("nul.json", '{"channel":"C_GENERAL","text":"a\\u0000b"}')
w("badutf8.json", b'{"channel":"C_GENERAL","text":"\xff\xfe"}')
w("nul-form", b"channel=C_GENERAL&text=a%00b")
w("rawnul-form", b"channel=C_GENERAL&text=a\x00b")
w("utf8-form", b"name=%FF%FEroom")
w("utf8-chan", b"channel=%C0%AE%FF&text=hello")
w("big-form", b"channel=C_GENERAL&text=" + b"A" * (2 << 20))
w("big.json", json.dumps({"channel": "C_GENERAL", "text": "\u00e9" * (1 << 20)}, ensure_ascii=False))
w("big-name", b"name=" + b"a" * (2 << 20))
w("mcp-deep.json", '{"tool":"slack_send_message","arguments":{"channel_id":"C_GENERAL","message":' + "[" * deep + "]" * deep + "}}")
w("mcp-wrong.json", '{"tool":"slack_send_message","arguments":{"channel_id":5,"message":"x"}}')
w("mcp-bigint.json", '{"tool":"slack_read_channel","arguments":{"channel_id":"C_GENERAL","limit":99999999999999999999999}}')
def part(name, data, filename=None, extra=b""):
    disp = b'Content-Disposition: form-data; name="' + name + b'"'
    if filename is not None:
        disp += b'; filename="' + filename + b'"'
    return b"--XyZ\r\n" + disp + b"\r\n" + extra + b"\r\n" + data + b"\r\n"
end = b"--XyZ--\r\n"
w("mp-barelf", b'--XyZ\r\nContent-Disposition: form-data; name="content"\n\nx\r\n' + end)
w("mp-nul", part(b"channels", b"C_GENERAL") + part(b"content", b"a\x00b") + end)
w("mp-parts", b"".join(part(b"p%d" % i, b"x") for i in range(65)) + end)
w("mp-badname", part(b"\xff\xfe", b"x") + end)
w("mp-unclosed", part(b"content", b"x"))
w("mp-longer", part(b"content", b"x\r\n--XyZW") + end)
w("mp-big", part(b"channels", b"C_GENERAL") + part(b"file", b"\x00" * (2 << 20), b"big.bin") + end)
w("mp-deep", part(b"channel", b"C_GENERAL") + part(b"blocks", b"[" * deep + b"]" * deep) + end)
w("mcp-nul.json", '{"tool":"slack_create_canvas","arguments":{"title":"a\\u0000b"}}')
EOF

# refuse METHOD-PATH CTYPE BODYFILE ERROR [LABEL]: POSTed, answered HTTP 200 ok:false ERROR.
refuse() {
        local path=$1 ctype=$2 file=$3 want=$4
        local code
        code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
                -H "Content-Type: $ctype" --data-binary "@$file" "$URL$path")
        [[ $code == 200 ]] || fail "$path $(basename "$file"): HTTP $code: $(head -c 200 "$TMP/resp")"
        local got
        got=$(jq -r 'if .ok == false then .error else "ok:\(.ok)" end' "$TMP/resp" 2>/dev/null) ||
                fail "$path $(basename "$file"): not JSON: $(head -c 200 "$TMP/resp")"
        [[ $got == "$want" ]] || fail "$path $(basename "$file"): error '$got', want '$want'"
        [[ $(pod_pid slack) == "$PID0" ]] || fail "$path $(basename "$file"): the pod changed ($PID0 → $(pod_pid slack))"
        pass "$path $(basename "$file") → $want"
}

# ---- nesting 100 000 deep
refuse /chat.postMessage $JSONT "$TMP/b/deep.json" invalid_json
refuse /api/chat.postMessage $JSONT "$TMP/b/deep-obj.json" invalid_json
# ---- integers beyond 64 bits
refuse /conversations.history $JSONT "$TMP/b/bigint.json" invalid_json
refuse /chat.scheduleMessage $JSONT "$TMP/b/bigint-post.json" invalid_json
refuse /conversations.history $FORM "$(inline_body 'channel=C_GENERAL&limit=123456789012345678901234567890')" invalid_limit
refuse /chat.scheduleMessage $FORM "$(inline_body 'channel=C_GENERAL&text=x&post_at=18446744073709551617')" invalid_time
refuse /reactions.add $FORM "$(inline_body 'channel=C_GENERAL&timestamp=99999999999999999999999.000100&name=tada')" bad_timestamp
refuse /conversations.history $FORM "$(inline_body 'channel=C_GENERAL&oldest=1e400')" invalid_ts_oldest
# ---- NUL and invalid UTF-8
refuse /chat.postMessage $JSONT "$TMP/b/nul.json" invalid_json
refuse /chat.postMessage $JSONT "$TMP/b/badutf8.json" invalid_json
refuse /chat.postMessage $FORM "$TMP/b/nul-form" invalid_form_data
refuse /conversations.create $FORM "$TMP/b/utf8-form" invalid_name_specials
refuse /chat.postMessage $FORM "$TMP/b/utf8-chan" channel_not_found
# raw NUL in a form: cut there or refused, never stored
code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
        -H "Content-Type: $FORM" --data-binary "@$TMP/b/rawnul-form" "$URL/conversations.info")
[[ $code == 200 ]] && jq -e '.ok == true or (.error | type == "string")' "$TMP/resp" >/dev/null ||
        fail "raw NUL in a form: HTTP $code $(head -c 200 "$TMP/resp")"
# ---- 2 MiB bodies
refuse /chat.postMessage $FORM "$TMP/b/big-form" msg_too_long
refuse /api/chat.postMessage $JSONT "$TMP/b/big.json" msg_too_long
refuse /conversations.create $FORM "$TMP/b/big-name" invalid_name_maxlength
# ---- wrong types
refuse /chat.postMessage $JSONT "$(inline_body '{"channel":123,"text":"x"}')" invalid_arguments
refuse /chat.postMessage $JSONT "$(inline_body '{"channel":"C_GENERAL","text":["a"]}')" invalid_arguments
refuse /chat.postMessage $JSONT "$(inline_body '{"channel":"C_GENERAL","text":"x","thread_ts":{}}')" thread_not_found
refuse /chat.postMessage $JSONT "$(inline_body '{"channel":"C_GENERAL","text":"x","reply_broadcast":"maybe"}')" invalid_arguments
refuse /chat.postMessage $JSONT "$(inline_body '{"channel":"C_GENERAL","blocks":{"type":"divider"}}')" invalid_blocks
refuse /reactions.add $JSONT "$(inline_body '{"channel":"C_GENERAL","timestamp":true,"name":"x"}')" bad_timestamp
refuse /reactions.add $JSONT "$(inline_body '{"channel":"C_GENERAL","timestamp":"1700000000.000100","name":7}')" invalid_arguments
refuse /conversations.list $JSONT "$(inline_body '{"limit":"lots"}')" invalid_limit
refuse /conversations.list $JSONT "$(inline_body '{"types":7}')" invalid_types
refuse /conversations.invite $JSONT "$(inline_body '{"channel":"C_GENERAL","users":{"id":"U_BOB"}}')" invalid_arguments
refuse /users.profile.set $JSONT "$(inline_body '{"profile":[1]}')" invalid_profile
refuse /users.profile.set $JSONT "$(inline_body '{"profile":{"title":5}}')" invalid_profile
refuse /canvases.edit $JSONT "$(inline_body '{"canvas_id":5}')" invalid_arguments
refuse /files.upload $JSONT "$(inline_body '{"content":{"x":1}}')" invalid_arguments
refuse /bookmarks.add $JSONT "$(inline_body '{"channel_id":"C_GENERAL","title":9,"type":"link","link":"https://x"}')" invalid_arguments
refuse /chat.scheduleMessage $JSONT "$(inline_body '{"channel":"C_GENERAL","text":"x","post_at":"soon"}')" invalid_time
refuse /search.messages $JSONT "$(inline_body '{"query":["in:#general"]}')" invalid_arguments
refuse /conversations.setTopic $JSONT "$(inline_body '{"channel":"C_GENERAL","topic":false}')" invalid_arguments

# ---- multipart/form-data: ambiguous framing, NUL in a field, too many parts, 2 MiB files
MP="multipart/form-data; boundary=XyZ"
refuse /files.upload "$MP" "$TMP/b/mp-barelf" invalid_form_data
refuse /files.upload "$MP" "$TMP/b/mp-nul" invalid_form_data
refuse /files.upload "$MP" "$TMP/b/mp-parts" invalid_form_data
refuse /files.upload "$MP" "$TMP/b/mp-badname" invalid_form_data
refuse /files.upload "$MP" "$TMP/b/mp-unclosed" invalid_form_data
refuse /files.upload "$MP" "$TMP/b/mp-longer" invalid_form_data
refuse /files.upload "multipart/form-data" "$TMP/b/mp-nul" invalid_form_data
refuse /files.upload "multipart/form-data; boundary=a; boundary=b" "$TMP/b/mp-nul" invalid_form_data
refuse /files.upload "$MP" "$TMP/b/mp-big" file_too_large
refuse /chat.postMessage "$MP" "$TMP/b/mp-deep" invalid_blocks

# ---- GET + query with the same hostile values
code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
        "$URL/chat.postMessage?channel=C_GENERAL&text=a%00b")
[[ $code == 200 && $(jq -r .error "$TMP/resp") == invalid_form_data ]] ||
        fail "GET with %00: $code $(head -c 200 "$TMP/resp")"
code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
        "$URL/conversations.history?channel=C_GENERAL&limit=340282366920938463463374607431768211456")
[[ $code == 200 && $(jq -r .error "$TMP/resp") == invalid_limit ]] ||
        fail "GET with a 129-bit limit: $code $(head -c 200 "$TMP/resp")"
pass "GET + query refusals"

# ---- MCP: unparsable calls get a parse refusal (the JSON-RPC -32700, or Slack's invalid_json
# where /mcp/call answers in the twin's envelope), wrong types a tool error
mcp_refuse() {
        local file=$1 want=$2
        local code
        code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
                -H "Content-Type: $JSONT" --data-binary "@$file" "$URL/mcp/call")
        local got
        got=$(jq -r '.result.structuredContent.error // .structuredContent.error // (.error | objects | .code) // .error // empty' "$TMP/resp" 2>/dev/null) ||
                fail "mcp $(basename "$file"): not JSON: $(head -c 200 "$TMP/resp")"
        [[ $code -lt 500 ]] || fail "mcp $(basename "$file"): HTTP $code"
        [[ $got =~ ^($want)$ ]] || fail "mcp $(basename "$file"): '$got' (HTTP $code), want '$want': $(head -c 200 "$TMP/resp")"
        [[ $(pod_pid slack) == "$PID0" ]] || fail "mcp $(basename "$file"): the pod changed"
        pass "mcp $(basename "$file") → $got"
}
# /mcp/call reads as hosted Pome's Slack twin does: a body it cannot parse is {}, which names
# no tool (400 invalid_arguments)
mcp_refuse "$TMP/b/mcp-deep.json" '-32700|invalid_json|invalid_arguments'
mcp_refuse "$TMP/b/mcp-wrong.json" invalid_arguments
mcp_refuse "$TMP/b/mcp-bigint.json" '-32700|invalid_json|invalid_arguments'
mcp_refuse "$TMP/b/mcp-nul.json" '-32700|invalid_json|invalid_arguments'

# ---- the world is exactly what it was, the pod the one it was
world_state "$URL" "$TMP/after"
cmp -s "$TMP/before" "$TMP/after" || fail "the world changed: $(diff "$TMP/before" "$TMP/after" | head -10)"
[[ $(pod_pid slack) == "$PID0" ]] || fail "the pod changed"
pass "world unchanged, pod $PID0 still serving"
