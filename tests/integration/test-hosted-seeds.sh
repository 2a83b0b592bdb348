#!/usr/bin/env bash
# A task seed in hosted Pome's format (their "_meta" block, one file for several twins,
# ids like T_ACME/U_PRIMARY/C_GENERAL, a pull request without a number, its "statuses", a
# file's "branch") loads through `pome twin start --seed FILE` for each twin, and an
# agent's flow over it works over REST and MCP: the PR, its failing CI on a branch whose
# name has a slash, the diff, a review; the Slack bot is U_PRIMARY and posts as itself.
# The same file loads as a sandbox's inline seeds; a seed the twin refuses is a 422.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
command -v jq >/dev/null || skip "jq is not installed"
SEED=$SRC/tests/integration/seeds/release-gate.seed.json

# start_twin TWIN: runs `pome twin start TWIN --seed $SEED`; sets REST and TOK.
start_twin() {
        "$POME" twin start "$1" --port 0 --seed "$SEED" >"$TMP/$1.out" 2>"$TMP/$1.err" &
        EXTRA_PIDS+=("$!")
        for _ in $(seq 100); do grep -q rest_url "$TMP/$1.out" 2>/dev/null && break; sleep 0.05; done
        grep -q rest_url "$TMP/$1.out" || fail "pome twin start $1 --seed: $(cat "$TMP/$1.err")"
        REST=$(awk '$1 == "rest_url" { print $2 }' "$TMP/$1.out")
        TOK=$(awk '$1 == "token" { print $2 }' "$TMP/$1.out")
}

# mcp TOOL ARGS-JSON: tools/call on the twin's MCP endpoint; BODY holds the result.
mcp() {
        twin_call POST "$REST/mcp" "$TOK" \
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$1\",\"arguments\":$2}}"
        assert_status 200 "MCP $1"
        assert_jq .result.isError false "MCP $1: $BODY"
}

# ---- GitHub
start_twin github
twin_call GET "$REST/repos/acme/api/pulls" "$TOK"
assert_status 200 "list pulls"
assert_jq length 1
assert_jq '.[0].number' 1 "a seeded PR without a number gets the repository's next one"
assert_jq '.[0].user.login' dave
assert_jq '.[0].head.ref' release/bulk-discount
head_sha=$(jq -r '.[0].head.sha' <<<"$BODY")

twin_call GET "$REST/repos/acme/api/commits/release%2Fbulk-discount/status" "$TOK"
assert_status 200 "combined status by a branch name with a slash"
assert_jq .state failure "the seed's statuses sit on the head commit"
assert_jq .sha "$head_sha"
assert_jq '.statuses[0].context' ci/test

curl -s -H "Authorization: Bearer $TOK" -H "Accept: application/vnd.github.raw" \
        "$REST/repos/acme/api/contents/src/cart.ts?ref=release/bulk-discount" >"$TMP/cart.ts"
grep -q "subtotal - discount - discount" "$TMP/cart.ts" || fail "the branch's file: $(cat "$TMP/cart.ts")"
twin_call GET "$REST/repos/acme/api/contents/src/cart.ts" "$TOK"
[[ $(jq -r .content <<<"$BODY" | base64 -d) != *discount* ]] || fail "main holds the branch's file"
pass "GitHub REST: hosted-format PR, statuses and branch files"

mcp pull_request_read '{"method":"get_diff","owner":"acme","repo":"api","pullNumber":1}'
jq -r '.result.content[0].text' <<<"$BODY" | grep -q '^+  return subtotal - discount - discount;' ||
        fail "MCP diff: $BODY"
mcp create_pull_request_review \
        '{"owner":"acme","repo":"api","pullNumber":1,"event":"REQUEST_CHANGES","body":"ci/test is red: the discount is applied twice."}'
twin_call GET "$REST/repos/acme/api/pulls/1/reviews" "$TOK"
assert_jq length 1 "the MCP review is on REST"
assert_jq '.[0].state' CHANGES_REQUESTED
twin_call GET "$REST/repos/acme/api/pulls/1" "$TOK"
assert_jq .merged false
twin_call GET "$REST/_pome/events" "$TOK"
assert_jq '[.[].tool] | index("create_pull_request_review") != null' true "the review's tape row"
assert_jq '[.[] | select(.state_mutation)] | length' 1 "one world change: the review"
pass "GitHub MCP over the same seed: diff, review, tape"

# ---- Slack
start_twin slack
twin_call POST "$REST/auth.test" "$TOK"
assert_jq .ok true
assert_jq .user_id U_PRIMARY "the agent is the seed's U_PRIMARY"
assert_jq .team_id T_ACME
twin_call GET "$REST/conversations.history?channel=C_GENERAL" "$TOK"
assert_jq .ok true
assert_jq '.messages | length' 1
assert_jq '.messages[0].user' U_ALICE
ask_ts=$(jq -r '.messages[0].ts' <<<"$BODY")
twin_call POST "$REST/chat.postMessage" "$TOK" \
        "{\"channel\":\"C_GENERAL\",\"thread_ts\":\"$ask_ts\",\"text\":\"Not yet: ci/test is failing on the PR.\"}"
assert_jq .ok true "post in the thread: $BODY"
assert_jq .message.user U_PRIMARY
mcp slack_read_thread "{\"channel_id\":\"C_GENERAL\",\"message_ts\":\"$ask_ts\"}"
[[ $(jq -r '.result.content[0].text' <<<"$BODY") == *"ci/test is failing"* ]] ||
        fail "MCP sees the REST reply: $BODY"
mcp slack_send_message '{"channel_id":"C_GENERAL","message":"Review left on acme/api#1."}'
twin_call GET "$REST/conversations.history?channel=C_GENERAL" "$TOK"
assert_jq '.messages | length' 2 "the thread reply stays in its thread; the MCP post is top level"
assert_jq '.messages[0].user' U_PRIMARY
pass "Slack over the same seed: U_PRIMARY, C_GENERAL, threads, REST and MCP"

# ---- the same file as a sandbox's inline seeds (pome sandbox create --seed TWIN=FILE)
[[ $(id -u) -eq 0 ]] || skip "the sandbox part needs root (pods)"
start_pomed
"$POME" sandbox create --twin github --twin slack --seed "github=$SEED" --seed "slack=$SEED" \
        --secrets-file "$TMP/sb.env" >"$TMP/create.out" 2>&1 || fail "create with inline seeds: $(cat "$TMP/create.out")"
# shellcheck disable=SC1091
source "$TMP/sb.env"
twin_call GET "$POME_GITHUB_REST_URL/repos/acme/api/pulls" "$POME_AUTH_TOKEN"
assert_jq '.[0].head.ref' release/bulk-discount "the inline seed's PR in a sandbox"
twin_call POST "$POME_SLACK_REST_URL/auth.test" "$POME_AUTH_TOKEN"
assert_jq .user_id U_PRIMARY "the inline seed's bot in a sandbox"
api GET "/v1/sandboxes/$POME_SESSION_ID"
assert_jq .per_twin.github.seed inline
# the run keeps its seeds once it is kept (finalize writes them next to the finals)
api POST "/v1/sandboxes/$POME_SESSION_ID/finalize"
assert_status 200 "finalize the inline-seeded sandbox"
cmp -s <(jq -S . "$SEED") <(jq -S . "$TMP/state/runs/$POME_SESSION_ID/github.seed.json") ||
        fail "the run does not keep the inline seed as it was sent"
before=$(used)
api POST /v1/sandboxes '{"twins":["github"],"seeds":{"github":{"repositories":[{"owner":"o","name":"r","issues":[{"number":0}]}]}}}'
assert_status 422 "an inline seed the twin refuses"
assert_jq .error.details.field seeds
[[ $(jq -r .error.details.seed_error <<<"$BODY") == *"repositories[0]"* ]] || fail "the refusal does not say where: $BODY"
assert_eq "$(used)" "$before" "a refused seed holds no slot"
api POST /v1/sandboxes '{"twins":["github"],"seeds":{"github":[1]}}'
assert_status 422 "a seed that is neither a name nor an object"
pass "hosted seeds load inline in a sandbox; a bad inline seed is a 422 that holds no slot"
