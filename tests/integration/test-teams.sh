#!/usr/bin/env bash
# Teams from the configuration file: keys by SHA-256, each team sees only its own
# sandboxes and slots, and SIGHUP reloads teams without touching open sandboxes.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
CI_KEY=pome_ci0000000000000000000000000000001
QA_KEY=pome_qa0000000000000000000000000000001
hash() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
start_pomed "teams:" \
        "  - id: local" "    sessions_quota: 1" \
        "  - id: ci" "    sessions_quota: 2" "    plan_tier: ci" "    api_keys_sha256: [$(hash $CI_KEY)]"
LOCAL_KEY=$API_KEY

as() { # as KEY METHOD PATH [BODY]
        local key=$1
        shift
        API_KEY=$key api "$@"
}
as "$CI_KEY" GET /v1/usage
assert_status 200 "the ci key"
assert_jq .team_id ci
assert_jq .sessions_quota 2
assert_jq .plan_tier ci
as "$CI_KEY" POST /v1/sandboxes '{"twins":["github"]}'
assert_status 201 "a ci sandbox"
CI_SID=$(jq -r .session_id <<<"$BODY") CI_TOKEN=$(jq -r .session_token <<<"$BODY")
CI_URL=$(jq -r .per_twin.github.rest_url <<<"$BODY")
as "$LOCAL_KEY" GET /v1/usage
assert_jq .sessions_used 0 "local's slots are its own"
as "$LOCAL_KEY" GET "/v1/sandboxes/$CI_SID"
assert_status 404 "another team's sandbox"
as "$LOCAL_KEY" DELETE "/v1/sandboxes/$CI_SID?confirm_discard=x"
assert_status 404 "stopping another team's sandbox"
as "$LOCAL_KEY" GET "/v1/sandboxes?state=all"
assert_jq '.data | length' 0 "local lists none of ci's sandboxes"
as "$LOCAL_KEY" POST /v1/sandboxes '{"twins":["github"]}'
assert_status 201 "local's one slot"
as "$LOCAL_KEY" POST /v1/sandboxes '{"twins":["github"]}'
assert_status 402 "local's quota of 1"
as "$QA_KEY" GET /v1/usage
assert_status 401 "a key no team has"
assert_jq .error.type invalid_auth
pass "two teams: keys by hash, separate slots and sandboxes"

# Reload: ci gets 3 slots, local goes away, qa appears; open sandboxes are untouched.
{
        sed '/^teams:/,$d' "$TMP/pomed.conf"
        echo "teams:"
        echo "  - id: ci"
        echo "    sessions_quota: 3"
        echo "    api_keys_sha256: [$(hash $CI_KEY)]"
        echo "  - id: qa"
        echo "    sessions_quota: 1"
        echo "    api_keys_sha256: [$(hash $QA_KEY)]"
} >"$TMP/pomed.conf.new"
mv "$TMP/pomed.conf.new" "$TMP/pomed.conf"
# pomed --reload (the unit's ExecReload): SIGHUP, then returns once the reload is done
"$POMED" --config "$TMP/pomed.conf" --reload >"$TMP/reload.out" 2>&1 ||
        fail "pomed --reload failed: $(cat "$TMP/reload.out")"
grep -q "2 teams from $TMP/pomed.conf applied" "$TMP/reload.out" ||
        fail "pomed --reload does not say what it applied: $(cat "$TMP/reload.out")"
as "$CI_KEY" GET /v1/usage
assert_jq .sessions_quota 3 "ci's quota as soon as pomed --reload returned"
assert_jq .sessions_used 1 "ci's open sandbox still counts"
twin_call GET "$CI_URL/repos/acme/api/issues/1" "$CI_TOKEN"
assert_status 200 "ci's open sandbox after the reload"
as "$QA_KEY" GET /v1/usage
assert_status 200 "the new qa team"
as "$LOCAL_KEY" GET /v1/usage
assert_status 401 "the removed local team's key"
grep -q "reload: 2 teams" "$TMP/pomed.log" || fail "no reload line in the log"
pass "pomed --reload (SIGHUP, waits): quota raised, team added, team removed, open sandboxes untouched"

echo "teams: [" >>"$TMP/pomed.conf"
if "$POMED" --config "$TMP/pomed.conf" --reload >"$TMP/reload.out" 2>&1; then
        fail "pomed --reload succeeded with a broken configuration"
fi
grep -q "configuration invalid: .*the running pomed keeps its configuration" "$TMP/reload.out" ||
        fail "pomed --reload does not say why: $(cat "$TMP/reload.out")"
kill -HUP "$POMED_PID"
for _ in $(seq 100); do grep -q "keeping the running configuration" "$TMP/pomed.log" && break; sleep 0.05; done
grep -q "reload: .*keeping the running configuration" "$TMP/pomed.log" || fail "a broken reload was not refused"
as "$CI_KEY" GET /v1/usage
assert_jq .sessions_quota 3 "teams after a refused reload"
API_KEY=$CI_KEY discard "$CI_SID"
pass "a broken configuration is refused on reload; the running one stays"

# A listing is newest first, and a record written again (at its end) keeps its place:
# two ci sandboxes created within the same second, the older one ended first. (The
# registry's INSERT OR REPLACE gave a rewritten row a new rowid, the tie-breaker.)
for _ in $(seq 5); do
        as "$CI_KEY" POST /v1/sandboxes '{"twins":["stripe"]}'
        assert_status 201 "ci's first sandbox of a pair"
        OLDER=$(jq -r .session_id <<<"$BODY") OLDER_AT=$(jq -r .created_at <<<"$BODY")
        as "$CI_KEY" POST /v1/sandboxes '{"twins":["stripe"]}'
        assert_status 201 "ci's second sandbox of a pair"
        NEWER=$(jq -r .session_id <<<"$BODY") NEWER_AT=$(jq -r .created_at <<<"$BODY")
        [[ $OLDER_AT == "$NEWER_AT" ]] && break
        API_KEY=$CI_KEY discard "$OLDER"
        API_KEY=$CI_KEY discard "$NEWER"
done
[[ $OLDER_AT == "$NEWER_AT" ]] || skip "no two sandboxes created within one second in 5 tries"
API_KEY=$CI_KEY discard "$OLDER"
as "$CI_KEY" GET "/v1/sandboxes?state=all"
assert_status 200 "ci's listing"
order=$(jq -r --arg a "$OLDER" --arg b "$NEWER" \
        '[.data[].session_id | select(. == $a or . == $b)] | join(" ")' <<<"$BODY")
assert_eq "$order" "$NEWER $OLDER" "newest first, the ended one in its place"
pass "a rewritten record keeps its place in the listing"
