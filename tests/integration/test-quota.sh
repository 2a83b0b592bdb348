#!/usr/bin/env bash
# Concurrency slots: 50 parallel creates against a quota of 3 give exactly 3
# sandboxes and 47 × 402; stopping one frees exactly one slot; a create whose pod
# fails releases its slot at once; more than three twins is 422 whatever the quota.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
start_pomed "teams:" "  - id: local" "    sessions_quota: 3" "images_dir: $(test_images_dir)"

mkdir "$TMP/par"
for i in $(seq 50); do
        curl -s -o "$TMP/par/$i.json" -w '%{http_code}\n' -X POST -H "Authorization: Bearer $API_KEY" \
                -H 'Content-Type: application/json' -d '{"twins":["github"]}' \
                "$CONTROL/v1/sandboxes" >"$TMP/par/$i.status" &
done
wait $(jobs -p | grep -vx "$POMED_PID")
assert_eq "$(cat "$TMP"/par/*.status | grep -c '^201$')" 3 "creates that got a slot"
assert_eq "$(cat "$TMP"/par/*.status | grep -c '^402$')" 47 "creates refused with 402"
for f in "$TMP"/par/*.status; do
        [[ $(cat "$f") == 402 ]] || continue
        BODY=$(cat "${f%.status}.json")
        assert_jq .error.type quota_exceeded
        assert_jq .error.details.sessions_used 3
        assert_jq .error.details.sessions_quota 3
done
assert_eq "$(used)" 3 "sessions_used"
api GET /v1/usage
assert_jq .sessions_remaining 0
pass "50 parallel creates, quota 3: 3 × 201, 47 × 402"

first=$(cat "$TMP"/par/*.json | jq -r 'select(.session_id) | .session_id' | head -1)
discard "$first"
api POST /v1/sandboxes '{"twins":["github"]}'
assert_status 201 "the create after a stop"
OPEN=$(jq -r .session_id <<<"$BODY")
api POST /v1/sandboxes '{"twins":["github"]}'
assert_status 402 "the create after that"
pass "stopping one frees exactly one slot"

api POST /v1/sandboxes '{"twins":["github","slack","github","slack"]}'
assert_status 422 "four twins with a full quota"
pass "four twins: 422 even with no slot left (depth is not width)"

discard "$OPEN"
assert_eq "$(used)" 2 "usage with one slot free"
api POST /v1/sandboxes '{"twins":["github","slack"],"seeds":{"slack":"broken"}}'
assert_status 503 "a create whose pod fails"
assert_eq "$(used)" 2 "usage right after a failed create"
api POST /v1/sandboxes '{"twins":["github"]}'
assert_status 201 "the slot of the failed create is free again"
pass "a failed start releases its slot at once"

set +e
"$POME" sandbox create --twin github >/dev/null 2>"$TMP/err"
rc=$?
set -e
assert_eq "$rc" 4 "pome exit status over quota"
grep -q "quota_exceeded" "$TMP/err" || fail "pome did not name quota_exceeded: $(cat "$TMP/err")"
set +e
POME_API_KEY=pome_notavalidkey00000000000000000 "$POME" usage >/dev/null 2>&1
rc=$?
set -e
assert_eq "$rc" 3 "pome exit status with a wrong key"
pass "CLI: quota → exit 4, auth → exit 3"
