#!/usr/bin/env bash
# Hostile input to the Linear twin (issue 28), over Linear's GraphQL API (POST /graphql) the
# way @linear/sdk and plain clients send it: bodies that are no JSON or no GraphQL request,
# a query that is no string, a selection nested 100 000 deep, a query of aliases filling
# pomed's limits.max_body (1M by default: README "Limits") and one byte past it, fragments
# that spread each other, unknown fields, arguments and types, variables of the wrong type,
# mutations without their required input, first: -1 / 100000, a garbage `after` cursor, an
# issueUpdate of an id that names nothing (and of one that exists with one part it cannot
# take: refused whole), batched array bodies, an operationName that names
# no operation, and introspection. Every refusal is Linear's GraphQL error shape
# ({errors:[{message, extensions:{code, …}}]}, no data or data null) with a status Linear
# gives (400; 200 where a resolver refuses, as GraphQL over HTTP allows), the pod keeps its
# pid, and the world (/_pome/state) is byte for byte what it was.
source "$(dirname "$0")/lib.sh"
require_root
command -v python3 >/dev/null || skip "python3 is not installed (builds the large bodies)"

start_pomed # limits.max_body is its default, 1M
create_sandbox linear
URL=$(rest_url linear)
GQL=$URL/graphql
JSONT=application/json
mkdir -p "$TMP/b"
PID0=$(pod_pid linear)
[[ $PID0 =~ ^[0-9]+$ ]] || fail "no Linear pod pid: $PID0"

# the twin answers a plain query first (else every refusal below would prove nothing)
code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" -H "Content-Type: $JSONT" \
        --data-binary '{"query":"{ viewer { id } teams { nodes { id key } } }"}' "$GQL")
[[ $code == 200 ]] && jq -e '(.data.viewer.id | type == "string") and (.errors | not)' "$TMP/resp" >/dev/null ||
        fail "{ viewer { id } }: HTTP $code $(head -c 300 "$TMP/resp")"
ISSUE=$(curl -s -H "Authorization: Bearer $TOKEN" -H "Content-Type: $JSONT" \
        --data-binary '{"query":"{ issues(first: 1) { nodes { id } } }"}' "$GQL" | jq -r '.data.issues.nodes[0].id // empty')
[[ -n $ISSUE ]] || fail "the default world has no issue to name"
world_state "$URL" "$TMP/before"
jq -e 'type == "object"' "$TMP/before" >/dev/null || fail "no /_pome/state: $(head -c 200 "$TMP/before")"

python3 - "$TMP/b" <<'EOF'
import json, os, sys
d = sys.argv[1]
LIMIT = 1 << 20  # pomed's default limits.max_body
def w(name, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
def q(name, query, **extra):
    w(name, json.dumps(dict(query=query, **extra)))
deep = 100000
q("deep-sel.json", "{ viewer {" + "a{" * deep + "id" + "}" * deep + "} }")
q("deep-braces.json", "{" * deep + "}" * deep)
w("deep-json.json", '{"query":"{ viewer { id } }","variables":' + '{"a":' * deep + "1" + "}" * deep + "}")
# aliases of viewer up to one byte under the body limit, and one byte past it
def aliases(total):
    pre, post = '{"query":"{', '}"}'
    body, i = [], 0
    size = len(pre) + len(post)
    while True:
        a = " a%d: viewer { id }" % i
        if size + len(a) > total:
            break
        body.append(a)
        size += len(a)
        i += 1
    s = pre + "".join(body) + " " * (total - size) + post
    assert len(s) == total
    return s
w("aliases-near.json", aliases(LIMIT))
# 12 400 aliases of viewer { id }: ~13 600 points (an object 1, a field 0.1), past the 10 000
# Linear takes in one query
w("aliases-complex.json", aliases(256 << 10))
w("aliases-over.json", aliases(LIMIT + 1))
q("cycle.json", "query { viewer { ...A } } fragment A on User { id ...B } fragment B on User { name ...A }")
q("self.json", "query { viewer { ...A } } fragment A on User { ...A }")
# 10 000 fragments spreading the next: a chain, no cycle, under the limit
n = 10000
q("chain.json", "query { viewer { ...F0 } } " + " ".join("fragment F%d on User { id ...F%d }" % (i, i + 1) for i in range(n - 1)) + " fragment F%d on User { id }" % (n - 1))
q("ors.json", "{ issues(filter: { or: [" + ", ".join('{ title: { eq: "t%d" } }' % i for i in range(10000)) + "] }) { nodes { id } } }")
EOF

# refuse BODYFILE STATUS CODE [CTYPE] [CURL-ARG…]: POSTed to /graphql; answered an HTTP status
# matching STATUS (a regex) with Linear's error shape: errors[] of {message, extensions:{code}}
# whose first code matches CODE (a regex), and no data (absent, null, or only nulls). The pod
# keeps its pid.
refuse() {
        local file=$1 want=$2 wcode=$3 ctype=${4:-$JSONT}
        shift $(($# < 4 ? $# : 4))
        local label
        label="$(basename "$file") $(head -c 70 "$file" | tr -d '\n')"
        local code
        code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
                -H "Content-Type: $ctype" --data-binary "@$file" "$@" "$GQL") || code=000
        [[ $code =~ ^($want)$ ]] || fail "$label: HTTP $code, want $want: $(head -c 300 "$TMP/resp")"
        jq -e '(.errors | type == "array" and length > 0) and
                all(.errors[]; (.message | type == "string" and length > 0) and
                        (.extensions | type == "object") and (.extensions.code | type == "string")) and
                ((.data // null) == null or (.data | type == "object" and all(.[]; . == null)))' \
                "$TMP/resp" >/dev/null 2>&1 || fail "$label: HTTP $code, not Linear's error shape: $(head -c 300 "$TMP/resp")"
        local got
        got=$(jq -r '.errors[0].extensions.code' "$TMP/resp")
        [[ $got =~ ^($wcode)$ ]] || fail "$label: extensions.code $got, want $wcode: $(head -c 300 "$TMP/resp")"
        local pid
        pid=$(pod_pid linear)
        [[ $pid == "$PID0" ]] || fail "$label: the pod changed ($PID0 → $pid)"
        pass "${label:0:80} → $code $got $(jq -r '.errors[0].message' "$TMP/resp" | head -c 60)"
}
# the families of codes Linear answers with (GraphQL's own, as Apollo names them, and Linear's)
PARSE="GRAPHQL_PARSE_FAILED|GRAPHQL_VALIDATION_FAILED|BAD_REQUEST|BAD_USER_INPUT"
VALID="GRAPHQL_VALIDATION_FAILED|BAD_USER_INPUT"
INPUT="INVALID_INPUT|BAD_USER_INPUT|GRAPHQL_VALIDATION_FAILED"
ANY="[A-Z_]+"

# ---- bodies that are no GraphQL request
refuse "$(inline_body '{oops')" 400 "$PARSE"
refuse "$(inline_body '{ viewer { id } }')" 400 "$PARSE" text/plain
refuse "$(inline_body 'query=%7B+viewer+%7B+id+%7D+%7D%00')" 400 "$PARSE|$VALID" application/x-www-form-urlencoded
refuse "$(inline_body '"{ viewer { id } }"')" 400 "$PARSE"
refuse "$(inline_body '{}')" 400 "$PARSE"
refuse "$(inline_body '{"query":5}')" 400 "$PARSE"
refuse "$(inline_body '{"query":["{ viewer { id } }"]}')" 400 "$PARSE"
refuse "$(inline_body '{"query":{"viewer":"id"}}')" 400 "$PARSE"
refuse "$(inline_body '{"query":null}')" 400 "$PARSE"
refuse "$(inline_body '{"query":"{ viewer { id } }","variables":"x"}')" 400 "$PARSE"
refuse "$(inline_body '{"query":"{ viewer { id } }","variables":[1]}')" 400 "$PARSE"
refuse "$(inline_body '{"query":"{ viewer { id } }","operationName":7}')" 400 "$PARSE"
refuse "$TMP/b/deep-json.json" 400 "$PARSE"
refuse "$(printf '{"query":"{ viewer { id \xff\xfe } }"}' >"$TMP/b/badutf8.json" && echo "$TMP/b/badutf8.json")" 400 "$PARSE"
refuse "$(inline_body '{"query":"{ viewer { id } \u0000 }"}')" 400 "$PARSE"
# ---- what does not parse as GraphQL
refuse "$(inline_body '{"query":"{ viewer { id }"}')" 400 "$PARSE"
refuse "$(inline_body '{"query":"query {"}')" 400 "$PARSE"
refuse "$(inline_body '{"query":"{ viewer(id: \"unterminated) { id } }"}')" 400 "$PARSE"
refuse "$(inline_body '{"query":"   "}')" 400 "$PARSE"
refuse "$TMP/b/deep-braces.json" 400 "$PARSE|$VALID"
# ---- a selection nested 100 000 deep, a query of aliases up to the body limit and past it
refuse "$TMP/b/deep-sel.json" 400 "$PARSE|$VALID|$ANY"
# a query past Linear's complexity limit (10 000 points a query) is refused whole: 12 400
# aliases of `viewer { id }` (a 256 KiB body); and one of ~55 000 (the body limit exactly,
# 1 048 576 bytes), whose parse tree alone would pass the pod's memory limit, is refused
# before it is built
refuse "$TMP/b/aliases-complex.json" 400 "$ANY"
refuse "$TMP/b/aliases-near.json" 400 "$ANY"
refuse "$TMP/b/aliases-over.json" 413 "$ANY"
# ---- fragments: a cycle, one spreading itself, and a 10 000-long chain
refuse "$TMP/b/cycle.json" 400 "$VALID"
refuse "$TMP/b/self.json" 400 "$VALID"
code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
        -H "Content-Type: $JSONT" --data-binary "@$TMP/b/chain.json" "$GQL")
if [[ $code == 200 ]]; then
        jq -e '.data.viewer.id | type == "string"' "$TMP/resp" >/dev/null || fail "a 10 000-fragment chain: $(head -c 200 "$TMP/resp")"
        pass "a 10 000-fragment chain → 200 (answered)"
else
        refuse "$TMP/b/chain.json" 400 "$ANY"
fi
# ---- unknown fields, arguments and types; wrong variables
refuse "$(inline_body '{"query":"{ definitelyNotAField }"}')" 400 "$VALID"
refuse "$(inline_body '{"query":"{ viewer { id definitelyNot } }"}')" 400 "$VALID"
refuse "$(inline_body '{"query":"{ issues(definitelyNot: 1) { nodes { id } } }"}')" 400 "$VALID"
refuse "$(inline_body '{"query":"query($x: NoSuchType) { viewer { id } }","variables":{"x":1}}')" 400 "$VALID"
refuse "$(inline_body '{"query":"{ viewer }"}')" 400 "$VALID"
refuse "$(inline_body '{"query":"{ viewer { id(x: 1) } }"}')" 400 "$VALID"
refuse "$(inline_body '{"query":"{ issues(first: \"ten\") { nodes { id } } }"}')" 400 "$VALID"
refuse "$(inline_body '{"query":"query($n: Int) { issues(first: $n) { nodes { id } } }","variables":{"n":"abc"}}')" 400 "$VALID|$INPUT"
refuse "$(inline_body '{"query":"query($n: Int) { issues(first: $n) { nodes { id } } }","variables":{"n":99999999999999999999}}')" 400 "$VALID|$INPUT"
refuse "$(inline_body '{"query":"query($id: String!) { issue(id: $id) { id } }","variables":{}}')" 400 "$VALID|$INPUT"
refuse "$(inline_body '{"query":"query($id: String!) { issue(id: $id) { id } }","variables":{"id":{"a":1}}}')" 400 "$VALID|$INPUT"
refuse "$(inline_body '{"query":"{ viewer { id } } { viewer { name } }"}')" 400 "$VALID"
refuse "$(inline_body '{"query":"query A { viewer { id } } query B { viewer { name } }"}')" 400 "$VALID|$ANY"
refuse "$(inline_body '{"query":"query A { viewer { id } }","operationName":"NoSuchOperation"}')" 400 "$VALID|$ANY"
refuse "$(inline_body '{"query":"subscription { issueUpdates { id } }"}')" 400 "$VALID|$ANY"
# ---- mutations without their required input
refuse "$(inline_body '{"query":"mutation { issueCreate(input: {}) { success } }"}')" 400 "$VALID|$INPUT"
refuse "$(inline_body '{"query":"mutation { issueCreate { success } }"}')" 400 "$VALID"
refuse "$(inline_body '{"query":"mutation { issueUpdate(input: {title: \"x\"}) { success } }"}')" 400 "$VALID"
refuse "$(inline_body '{"query":"mutation { commentCreate(input: {body: \"x\"}) { success } }"}')" "400|200" "$VALID|$INPUT"
refuse "$(inline_body '{"query":"mutation($i: IssueCreateInput!) { issueCreate(input: $i) { success } }","variables":{"i":{"title":5}}}')" 400 "$VALID|$INPUT"
# ---- a mutation of an id that names nothing, with ids that are no ids
for id in 00000000-0000-0000-0000-000000000000 ../../teams "ENG-999999999999" "$(head -c 5000 /dev/zero | tr '\0' a)"; do
        jq -n --arg id "$id" '{query: "mutation($id: String!) { issueUpdate(id: $id, input: {title: \"hijacked\"}) { success issue { id } } }", variables: {id: $id}}' >"$TMP/b/upd.json"
        refuse "$TMP/b/upd.json" "400|200" "$INPUT|NOT_FOUND|ENTITY_NOT_FOUND"
done
refuse "$(inline_body '{"query":"mutation { issueDelete(id: \"00000000-0000-0000-0000-000000000000\") { success } }"}')" "400|200" "$INPUT|NOT_FOUND|ENTITY_NOT_FOUND"
refuse "$(inline_body '{"query":"mutation { commentCreate(input: {issueId: \"00000000-0000-0000-0000-000000000000\", body: \"x\"}) { success } }"}')" "400|200" "$INPUT|NOT_FOUND|ENTITY_NOT_FOUND"
refuse "$(inline_body '{"query":"{ issue(id: \"00000000-0000-0000-0000-000000000000\") { id } }"}')" "400|200" "$INPUT|NOT_FOUND|ENTITY_NOT_FOUND"
# ---- a mutation of an issue that exists, with one part it cannot take: refused whole (the
# title that came with it is not written either)
for input in '{title: "changed", stateId: "no-such-state"}' '{title: "changed", labelIds: ["no-such-label"]}' \
        '{title: "changed", assigneeId: "no-such-user"}' '{title: "changed", priority: 99}' '{title: ""}' \
        '{title: "changed", teamId: "no-such-team"}'; do
        jq -n --arg q "mutation { issueUpdate(id: \"$ISSUE\", input: $input) { success } }" '{query: $q}' >"$TMP/b/part.json"
        refuse "$TMP/b/part.json" "400|200" "$INPUT|NOT_FOUND|ENTITY_NOT_FOUND"
done
refuse "$(inline_body '{"query":"mutation { issueCreate(input: {teamId: \"no-such-team\", title: \"x\"}) { success } }"}')" "400|200" "$INPUT|NOT_FOUND|ENTITY_NOT_FOUND"
refuse "$(inline_body '{"query":"mutation { issueLabelCreate(input: {name: \"\"}) { success } }"}')" "400|200" "$INPUT"
# ---- pagination out of its domain: first: -1 is refused; first: 100000 and a garbage
# cursor are refused or answered (Linear caps first at 250; a cursor it cannot read either
# is its INVALID_INPUT or reads as the start)
# first: -1 is refused (the Relay connection spec Linear's pagination follows: "If first is
# less than 0: throw an error")
refuse "$(inline_body '{"query":"{ issues(first: -1) { nodes { id } } }"}')" "400|200" "$INPUT|$ANY"
refuse "$(inline_body '{"query":"{ issues(last: -5) { nodes { id } } }"}')" "400|200" "$INPUT|$ANY"
for q in '{ issues(first: 1, last: 1) { nodes { id } } }' '{ issues(first: 100000) { nodes { id } } }' '{ issues(after: "garbage\u0000\uffff") { nodes { id } } }' \
        '{ issues(first: 5, after: "!!!not-a-cursor!!!") { nodes { id } pageInfo { hasNextPage endCursor } } }'; do
        jq -n --arg q "$q" '{query: $q}' >"$TMP/b/page.json"
        code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
                -H "Content-Type: $JSONT" --data-binary "@$TMP/b/page.json" "$GQL")
        if [[ $code == 200 ]] && jq -e '(.errors | not) and (.data.issues.nodes | type == "array" and length <= 250)' "$TMP/resp" >/dev/null; then
                pass "$q → 200, $(jq '.data.issues.nodes | length' "$TMP/resp") nodes"
        else
                refuse "$TMP/b/page.json" "400|200" "$INPUT|$ANY"
        fi
done
# ---- 10 000 ORs in a filter: answered (no issue has those titles) or refused
code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
        -H "Content-Type: $JSONT" --data-binary "@$TMP/b/ors.json" "$GQL")
if [[ $code == 200 ]] && jq -e '(.errors | not) and .data.issues.nodes == []' "$TMP/resp" >/dev/null; then
        pass "a filter of 10 000 ORs → 200, no issue"
else
        refuse "$TMP/b/ors.json" "400|200" "$ANY"
fi
# ---- batched bodies: Linear takes one operation per request (an array is its 400)
refuse "$(inline_body '[{"query":"{ viewer { id } }"},{"query":"{ viewer { name } }"}]')" 400 "$PARSE|$ANY"
refuse "$(inline_body '[]')" 400 "$PARSE|$ANY"
refuse "$(inline_body '[{"query":"mutation { issueDelete(id: \"x\") { success } }"}]')" 400 "$PARSE|$ANY"
# ---- a mutation over GET is never run
code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -G -H "Authorization: Bearer $TOKEN" \
        --data-urlencode 'query=mutation { issueCreate(input: {title: "via GET", teamId: "x"}) { success } }' "$GQL")
[[ $code =~ ^(400|404|405|501)$ ]] && jq -e '.errors[0].extensions.code | type == "string"' "$TMP/resp" >/dev/null ||
        fail "a mutation over GET: HTTP $code $(head -c 300 "$TMP/resp")"
[[ $(pod_pid linear) == "$PID0" ]] || fail "a mutation over GET: the pod changed"
pass "a mutation over GET → $code $(jq -r '.errors[0].extensions.code' "$TMP/resp")"
# ---- introspection: Linear serves its schema (its SDK is generated from it)
code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" -H "Content-Type: $JSONT" \
        --data-binary '{"query":"{ __schema { queryType { name } mutationType { name } types { name } } }"}' "$GQL")
[[ $code == 200 ]] && jq -e '.data.__schema.queryType.name == "Query" and .data.__schema.mutationType.name == "Mutation" and
        ([.data.__schema.types[].name] | index("Issue") != null)' "$TMP/resp" >/dev/null ||
        fail "introspection: HTTP $code $(head -c 300 "$TMP/resp")"
pass "introspection → 200, $(jq '.data.__schema.types | length' "$TMP/resp") types"
# an introspection nested far past any schema's depth
python3 -c '
import json; d = 5000
print(json.dumps({"query": "{ __schema { types { " + "fields { type { " * d + "name" + " } }" * d + " } } }"}))' >"$TMP/b/deep-intro.json"
refuse "$TMP/b/deep-intro.json" 400 "$PARSE|$VALID|$ANY"

# ---- MCP's /mcp/call: what does not parse (Linear's BAD_USER_INPUT, hosted Pome's pin)
code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
        -H "Content-Type: $JSONT" --data-binary "@$TMP/b/deep-json.json" "$URL/mcp/call")
[[ $code == 400 ]] && jq -e '.errors[0].extensions.code == "BAD_USER_INPUT"' "$TMP/resp" >/dev/null ||
        fail "/mcp/call with JSON nested 100 000 deep: HTTP $code $(head -c 300 "$TMP/resp")"
pass "/mcp/call with JSON nested 100 000 deep → 400 BAD_USER_INPUT"

# ... and Linear's MCP tools through /mcp/call, with arguments they cannot take: Linear's shape
mcp_refuse() {
        local body=$1 want=$2 wcode=$3
        code=$(curl -s -o "$TMP/resp" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
                -H "Content-Type: $JSONT" --data-binary "$body" "$URL/mcp/call")
        [[ $code =~ ^($want)$ ]] &&
                jq -e '.errors[0].message | type == "string"' "$TMP/resp" >/dev/null &&
                [[ $(jq -r '.errors[0].extensions.code' "$TMP/resp") =~ ^($wcode)$ ]] ||
                fail "/mcp/call $body: HTTP $code $(head -c 300 "$TMP/resp")"
        [[ $(pod_pid linear) == "$PID0" ]] || fail "/mcp/call $body: the pod changed"
        pass "/mcp/call ${body:0:70} → $code $(jq -r '.errors[0].extensions.code' "$TMP/resp")"
}
mcp_refuse '{"tool":"get_issue","arguments":{"id":"../../_pome/state"}}' "404|400" "NOT_FOUND|$INPUT"
mcp_refuse '{"tool":"list_issues","arguments":{"limit":-1}}' 400 "$INPUT"
mcp_refuse '{"tool":"list_issues","arguments":{"limit":"abc"}}' 400 "$INPUT"
mcp_refuse '{"tool":"list_issues","arguments":{"query":5}}' 400 "$INPUT"
mcp_refuse '{"tool":"save_issue","arguments":{"id":"no-such-issue","title":"hijacked"}}' "404|400" "NOT_FOUND|$INPUT"
mcp_refuse "{\"tool\":\"save_issue\",\"arguments\":{\"id\":\"$ISSUE\",\"title\":\"changed\",\"state\":\"no-such-state\"}}" "404|400" "NOT_FOUND|$INPUT"

# ---- the world is exactly what it was, the pod the one it was
world_state "$URL" "$TMP/after"
cmp -s "$TMP/before" "$TMP/after" || fail "the world changed: $(diff "$TMP/before" "$TMP/after" | head -20)"
[[ $(pod_pid linear) == "$PID0" ]] || fail "the pod changed"
pass "world unchanged, pod $PID0 still serving"
