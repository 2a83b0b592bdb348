#!/usr/bin/env bash
# Hostile input to the GitHub twin (issue 7): JSON nested 100 000 deep, integers beyond 64
# bits, NUL and invalid UTF-8 in strings, forms, queries and paths, 2 MiB bodies, wrong
# types, over REST and MCP. Every one is refused in GitHub's own shape (4xx {message,
# documentation_url, status}; 422 "Validation Failed" with errors[] where GitHub validates
# a field; MCP: a parse refusal for what does not parse, a tool error otherwise), the pod
# keeps its pid, and the world (/_pome/state) is byte for byte what it was.
source "$(dirname "$0")/lib.sh"
require_root
command -v python3 >/dev/null || skip "python3 is not installed (builds the large bodies)"

start_pomed "limits:" "  max_body: 4M"
create_sandbox github
URL=$(rest_url github)
FORM=application/x-www-form-urlencoded
JSONT=application/json
mkdir -p "$TMP/b"

PID0=$(pod_pid github)
world_state "$URL" "$TMP/before"

python3 - "$TMP/b" <<'EOF'
import json, os, sys
d = sys.argv[1]
def w(name, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
deep = 100000
w("deep.json", '{"title":"x","labels":' + "[" * deep + "]" * deep + "}")
w("deep-obj.json", '{"title":' + '{"a":' * deep + "1" + "}" * deep + "}")
w("bigint.json", '{"title":"x","milestone":123456789012345678901234567890}')
w("bigint-neg.json", '{"title":"x","milestone":-123456789012345678901234567890}')
w("nul.json", '{"title":"a\\u0000b"}')
w("badutf8.json", b'{"title":"\xff\xfe"}')
w("overlong.json", b'{"title":"\xc0\xae\xc0\xae"}')
w("form", b"title=from+a+form")
w("nul-form", b"title=a%00b")
w("big-title.json", json.dumps({"title": "A" * (2 << 20)}))
w("big-body.json", json.dumps({"title": "t", "body": "\u00e9" * (1 << 20)}, ensure_ascii=False))
w("big-comment.json", json.dumps({"body": "x" * (2 << 20)}))
w("mcp-deep.json", '{"tool":"issue_write","arguments":{"method":"create","owner":"acme","repo":"api","title":' + "[" * deep + "]" * deep + "}}")
w("mcp-wrong.json", '{"tool":"issue_write","arguments":{"method":"create","owner":"acme","repo":"api","title":5}}')
w("mcp-bigint.json", '{"tool":"issue_read","arguments":{"method":"get","owner":"acme","repo":"api","issue_number":99999999999999999999999}}')
w("mcp-nul.json", '{"tool":"create_issue","arguments":{"owner":"acme","repo":"api","title":"a\\u0000b"}}')
EOF

# refuse METHOD PATH CTYPE BODYFILE STATUS MESSAGE: answered STATUS with GitHub's envelope
# whose message is MESSAGE (a regex), the pod the one it was.
refuse() {
        local method=$1 path=$2 ctype=$3 file=$4 want=$5 msg=$6
        local args=(-s -o "$TMP/resp" -w '%{http_code}' -X "$method" -H "Authorization: Bearer $TOKEN")
        [[ -n $file ]] && args+=(-H "Content-Type: $ctype" --data-binary "@$file")
        local code label="$method $path ${file:+$(basename "$file")}"
        code=$(curl "${args[@]}" "$URL$path")
        [[ $code == "$want" ]] || fail "$label: HTTP $code, want $want: $(head -c 200 "$TMP/resp")"
        jq -e --arg st "$code" '(.message | type == "string") and .status == $st and
                (.documentation_url | startswith("https://docs.github.com/"))' "$TMP/resp" >/dev/null ||
                fail "$label: not GitHub's envelope: $(head -c 200 "$TMP/resp")"
        local got
        got=$(jq -r '.message + (if .errors then " " + (.errors[0].field // "") + ":" + (.errors[0].code // "") else "" end)' "$TMP/resp")
        [[ $got =~ ^($msg)$ ]] || fail "$label: '$got', want '$msg'"
        [[ $(pod_pid github) == "$PID0" ]] || fail "$label: the pod changed ($PID0 → $(pod_pid github))"
        pass "$label → $code $got"
}

ISSUES=/repos/acme/api/issues
PJSON="Problems parsing JSON"
# ---- nesting 100 000 deep
refuse POST $ISSUES $JSONT "$TMP/b/deep.json" 400 "$PJSON"
refuse POST $ISSUES $JSONT "$TMP/b/deep-obj.json" 400 "$PJSON"
refuse PATCH $ISSUES/1 $JSONT "$TMP/b/deep.json" 400 "$PJSON"
# ---- integers beyond 64 bits: in a body they do not parse; in a path they match no issue;
# in a query they are refused or capped as GitHub's per_page is
refuse POST $ISSUES $JSONT "$TMP/b/bigint.json" 400 "$PJSON"
refuse POST $ISSUES $JSONT "$TMP/b/bigint-neg.json" 400 "$PJSON"
refuse GET $ISSUES/99999999999999999999999 "" "" 404 "Not Found"
refuse GET /repos/acme/api/pulls/18446744073709551617/files "" "" 404 "Not Found"
code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
        "$URL$ISSUES?per_page=340282366920938463463374607431768211456&page=99999999999999999999")
[[ $code == 200 ]] && jq -e 'type == "array"' "$TMP/resp" >/dev/null ||
        fail "a 129-bit per_page: HTTP $code $(head -c 200 "$TMP/resp")"
pass "a 129-bit per_page and page: a list, as GitHub answers"
# ---- NUL and invalid UTF-8: in JSON, forms, queries and paths
refuse POST $ISSUES $JSONT "$TMP/b/nul.json" 400 "$PJSON"
refuse POST $ISSUES $JSONT "$TMP/b/badutf8.json" 400 "$PJSON"
refuse POST $ISSUES $JSONT "$TMP/b/overlong.json" 400 "$PJSON"
refuse POST $ISSUES $FORM "$TMP/b/form" 400 "$PJSON"
refuse POST $ISSUES $FORM "$TMP/b/nul-form" 400 "$PJSON"
refuse POST $ISSUES/1/comments text/plain "$TMP/b/nul-form" 400 "$PJSON"
refuse GET "$ISSUES?state=a%00b" "" "" 400 ".*NUL.*"
code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
        "$URL/search/issues?q=repo:acme/api%20%FF%FE")
[[ $code == 200 ]] && jq -e '.total_count == 0' "$TMP/resp" >/dev/null ||
        fail "invalid UTF-8 in a search query: HTTP $code $(head -c 200 "$TMP/resp")"
code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
        "$URL/repos/acme/api%00/issues")
[[ $code == 400 || $code == 404 ]] && [[ $(pod_pid github) == "$PID0" ]] ||
        fail "a %00 in the path: HTTP $code $(head -c 200 "$TMP/resp")"
code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
        "$URL/repos/acme/%FF%FE/issues")
[[ $code == 400 || $code == 404 ]] && [[ $(pod_pid github) == "$PID0" ]] ||
        fail "invalid UTF-8 in the path: HTTP $code $(head -c 200 "$TMP/resp")"
pass "NUL and invalid UTF-8 in paths: refused, the pod serving"
# ---- 2 MiB bodies: GitHub's field limits (a title is at most 256 characters, a body 65 536)
refuse POST $ISSUES $JSONT "$TMP/b/big-title.json" 422 "Validation Failed title:custom"
refuse POST $ISSUES $JSONT "$TMP/b/big-body.json" 422 "Validation Failed body:custom"
refuse POST $ISSUES/1/comments $JSONT "$TMP/b/big-comment.json" 422 "Validation Failed body:custom"
refuse PATCH $ISSUES/1 $JSONT "$TMP/b/big-title.json" 422 "Validation Failed title:custom"
# ---- wrong types
VF="Validation Failed"
refuse POST $ISSUES $JSONT "$(inline_body '{"title":123}')" 422 "$VF title:invalid"
refuse POST $ISSUES $JSONT "$(inline_body '{"body":"no title"}')" 422 "$VF title:missing_field"
refuse POST $ISSUES $JSONT "$(inline_body '{"title":"x","labels":"bug"}')" 422 "$VF labels:invalid"
refuse POST $ISSUES $JSONT "$(inline_body '{"title":"x","labels":[{"color":"f00"}]}')" 422 "$VF labels:invalid"
refuse POST $ISSUES $JSONT "$(inline_body '{"title":"x","assignees":{}}')" 422 "$VF assignees:invalid"
refuse POST $ISSUES $JSONT "$(inline_body '{"title":"x","milestone":"abc"}')" 422 "$VF milestone:invalid"
refuse POST $ISSUES $JSONT "$(inline_body '[{"title":"x"}]')" 400 "$PJSON"
refuse POST $ISSUES $JSONT "$(inline_body '"title"')" 400 "$PJSON"
refuse PATCH $ISSUES/1 $JSONT "$(inline_body '{"state":"weird"}')" 422 "$VF state:invalid"
refuse PATCH $ISSUES/1 $JSONT "$(inline_body '{"state":5}')" 422 "$VF state:invalid"
refuse POST $ISSUES/1/comments $JSONT "$(inline_body '{"body":["a"]}')" 422 "$VF body:invalid"
refuse POST $ISSUES/1/labels $JSONT "$(inline_body '{"labels":[1,2]}')" 422 "$VF labels:invalid"
refuse POST /repos/acme/api/labels $JSONT "$(inline_body '{"name":"x","color":"zzzzzz"}')" 422 "$VF color:invalid"
refuse POST /repos/acme/api/pulls $JSONT "$(inline_body '{"title":"x","head":5,"base":"main"}')" 422 "$VF head:invalid"
refuse PUT /repos/acme/api/contents/x.txt $JSONT "$(inline_body '{"message":"m","content":"!!!notbase64"}')" 422 ".*Base64.*"
refuse PUT /repos/acme/api/contents/x.txt $JSONT "$(inline_body '{"message":7,"content":"aGk="}')" 422 "$VF message:invalid"

# ---- MCP: unparsable calls get a parse refusal (the JSON-RPC -32700, or GitHub's
# "Problems parsing JSON" where /mcp/call answers in the twin's envelope), wrong types the
# action's own refusal (/mcp/call answers what the action answers, as hosted Pome's)
mcp_refuse() {
        local file=$1 want=$2
        local code
        code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
                -H "Content-Type: $JSONT" --data-binary "@$file" "$URL/mcp/call")
        local got
        got=$(jq -r 'if .isError == true or .result.isError == true then "tool_error"
                else (.error | objects | .code) // .message // empty end' "$TMP/resp" 2>/dev/null) ||
                fail "mcp $(basename "$file"): not JSON: $(head -c 200 "$TMP/resp")"
        [[ $code -lt 500 ]] || fail "mcp $(basename "$file"): HTTP $code"
        [[ $got =~ ^($want)$ ]] || fail "mcp $(basename "$file"): '$got' (HTTP $code), want '$want': $(head -c 200 "$TMP/resp")"
        [[ $(pod_pid github) == "$PID0" ]] || fail "mcp $(basename "$file"): the pod changed"
        pass "mcp $(basename "$file") → $got"
}
mcp_refuse "$TMP/b/mcp-deep.json" "-32700|$PJSON"
mcp_refuse "$TMP/b/mcp-wrong.json" "missing required parameter: .*"
mcp_refuse "$TMP/b/mcp-bigint.json" "-32700|$PJSON"
mcp_refuse "$TMP/b/mcp-nul.json" "-32700|$PJSON"

# ---- the world is exactly what it was, the pod the one it was
world_state "$URL" "$TMP/after"
cmp -s "$TMP/before" "$TMP/after" || fail "the world changed: $(diff "$TMP/before" "$TMP/after" | head -10)"
[[ $(pod_pid github) == "$PID0" ]] || fail "the pod changed"
pass "world unchanged, pod $PID0 still serving"
