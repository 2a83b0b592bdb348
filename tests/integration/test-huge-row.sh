#!/usr/bin/env bash
# A small write to a row an agent made huge, under the default pod memory limit (64M): an
# issue holding 190 comments of 60 000 characters (11 MB) gets a new title. The call
# stands (200), the pod lives on (same pid), and its tape row leaves the row out. The
# state_delta shares the row's strings instead of copying them twice (pods/twin/reply.c);
# with two deep copies the pod was OOM-killed here.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
command -v python3 >/dev/null || skip "python3 is not installed (builds the large bodies)"

start_pomed
create_sandbox github
url=$(rest_url github)
pid=$(pod_pid github)
python3 -c 'import json; print(json.dumps({"body": "c" * 60000}))' >"$TMP/comment"
for i in $(seq 190); do
        code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
                -H 'Content-Type: application/json' --data-binary "@$TMP/comment" \
                "$url/repos/acme/api/issues/1/comments")
        [[ $code == 201 ]] || fail "comment $i on the large issue: $code"
done
twin_call PATCH "$url/repos/acme/api/issues/1" "$TOKEN" '{"title":"renamed on an 11 MB row"}'
assert_status 200 "a title on an 11 MB row under the default 64M pod limit"
assert_eq "$(pod_pid github)" "$pid" "the github pod after the write (same process)"
assert_jq .title "renamed on an 11 MB row"
curl -s -H "Authorization: Bearer $TOKEN" "$url/_pome/events" | jq -c '.[-1]' >"$TMP/row"
assert_eq "$(jq -r .tool "$TMP/row")" issue_write "the last tape row's tool"
jq -e '.state_delta.omitted | type == "string"' "$TMP/row" >/dev/null ||
        fail "the tape row does not say its state_delta was left out: $(jq -c .state_delta "$TMP/row" | head -c 300)"
! grep -q "oom_killed" "$TMP/pomed.log" || fail "a pod was OOM-killed: $(grep oom_killed "$TMP/pomed.log")"
pass "a small write to an 11 MB row: 200, the same pod, the row left out of the tape"
