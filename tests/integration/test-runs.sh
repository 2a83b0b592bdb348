#!/usr/bin/env bash
# Runs persist and stay readable (issue 9): once a sandbox has ended its twins answer 410,
# but its record, tapes (paged from disk) and final states are read through the control
# API for as long as the run is kept — finalized, expired or failed alike; a discarded
# one says its run was thrown away. pome sandbox get shows an ended sandbox too.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
start_pomed

# 1. finalized: record, tapes of both twins page by page, final states
create_sandbox github slack
GH=$(rest_url github)
SL=$(rest_url slack)
for n in 1 2 3; do
        twin_call POST "$GH/repos/acme/api/issues/1/comments" "$TOKEN" "{\"body\":\"note $n\"}"
        assert_status 201 "comment $n"
done
twin_call POST "$SL/chat.postMessage" "$TOKEN" '{"channel":"C_GENERAL","text":"triaged"}'
assert_status 200 "post to slack"
api GET "/v1/sandboxes/$SID/events?twin=github"
assert_status 200 "the live tape through the control API"
assert_eq "$(jq length <<<"$BODY")" 3 "live github rows"
api GET "/v1/sandboxes/$SID/verdict"
assert_status 404 "no verdict while open"
api POST "/v1/sandboxes/$SID/finalize"
assert_status 200 "finalize"
FIN=$SID

twin_call GET "$GH/repos/acme/api/issues/1" "$TOKEN"
assert_status 410 "a twin call after finalize"
api GET "/v1/sandboxes/$FIN"
assert_status 200 "the record of a finalized sandbox"
assert_jq .state done
assert_jq .reason finalized
curl -s -D "$TMP/h" -o "$TMP/page" -H "Authorization: Bearer $API_KEY" \
        "$CONTROL/v1/sandboxes/$FIN/events?twin=github&limit=2"
grep -qi '^x-pome-total-events: 3' "$TMP/h" || fail "no total: $(cat "$TMP/h")"
assert_eq "$(jq length "$TMP/page")" 2 "first page from disk"
next=$(grep -i '^x-pome-next-after:' "$TMP/h" | tr -d '\r' | awk '{print $2}')
[[ $next == "$(jq -r '.[1].event_id' "$TMP/page")" ]] || fail "next-after is not the page's last row: $next"
grep -qi "^link: </v1/sandboxes/$FIN/events?twin=github&after=$next&limit=2>; rel=\"next\"" "$TMP/h" ||
        fail "no Link to the next page: $(cat "$TMP/h")"
api GET "/v1/sandboxes/$FIN/events?twin=github&after=$next&limit=2"
assert_status 200 "second page"
assert_eq "$(jq -r '.[0].request_body.body' <<<"$BODY")" "note 3" "the last row"
api GET "/v1/sandboxes/$FIN/events?twin=slack"
assert_eq "$(jq -r '.[0].path' <<<"$BODY")" "/slack/s/$FIN/chat.postMessage" "slack's tape"
api GET "/v1/sandboxes/$FIN/events"
assert_eq "$(jq length <<<"$BODY")" 3 "no twin named: the first one"
api GET "/v1/sandboxes/$FIN/events?twin=stripe"
assert_status 422 "a twin the sandbox lacks"
api GET "/v1/sandboxes/$FIN/events?twin=github&after=req_nope"
assert_status 422 "an unknown cursor"
api GET "/v1/sandboxes/$FIN/events?twin=github&limit=0"
assert_status 422 "limit 0"
# a jump by row number (the dashboard's virtualised list): the page from there, and where it is
curl -s -D "$TMP/h" -o "$TMP/page" -H "Authorization: Bearer $API_KEY" \
        "$CONTROL/v1/sandboxes/$FIN/events?twin=github&offset=2&limit=5"
grep -qi '^x-pome-offset: 2' "$TMP/h" || fail "no X-Pome-Offset: 2: $(cat "$TMP/h")"
assert_eq "$(jq -r 'length, .[0].request_body.body' "$TMP/page" | paste -sd' ')" "1 note 3" "offset=2: the third row"
curl -s -D "$TMP/h" -o "$TMP/page" -H "Authorization: Bearer $API_KEY" \
        "$CONTROL/v1/sandboxes/$FIN/events?twin=github&after=$next"
grep -qi '^x-pome-offset: 2' "$TMP/h" || fail "after= pages say their offset too: $(cat "$TMP/h")"
api GET "/v1/sandboxes/$FIN/events?twin=github&offset=7"
assert_status 200 "an offset past the end"
assert_eq "$BODY" "[]" "an offset past the end: no row"
for q in "offset=-1" "offset=x" "offset=99999999999999999999999" "offset=%00" "offset=1e3" "offset="; do
        api GET "/v1/sandboxes/$FIN/events?twin=github&$q"
        assert_status 422 "?$q"
        assert_jq .error.details.field offset "?$q"
done
api GET "/v1/sandboxes/$FIN/events?twin=github&offset=1&after=$next"
assert_status 422 "both after and offset"
assert_jq .error.message "after and offset exclude each other: page on with after, or jump to a row number with offset." "both after and offset"
api GET "/v1/sandboxes/$FIN/state?twin=github"
assert_status 200 "the final state"
[[ $(jq '[.. | objects | select(.body? == "note 2")] | length' <<<"$BODY") -ge 1 ]] ||
        fail "the final state lacks the comments"
api GET "/v1/sandboxes/$FIN/verdict"
assert_status 404 "a run finalized without a task has no verdict"
pass "a finalized run: record, tapes paged from disk, final states"

# 2. expired: readable too, while the twin answers 410
api POST /v1/sandboxes '{"twins":["slack"],"ttl_seconds":3}'
assert_status 201 "a 3 s sandbox"
EXP=$(jq -r .session_id <<<"$BODY")
EXP_TOKEN=$(jq -r .session_token <<<"$BODY")
EXP_SL=$(jq -r .per_twin.slack.rest_url <<<"$BODY")
twin_call POST "$EXP_SL/chat.postMessage" "$EXP_TOKEN" '{"channel":"C_GENERAL","text":"hi"}'
assert_status 200 "a call before expiry"
for _ in $(seq 60); do
        api GET "/v1/sandboxes/$EXP"
        [[ $(jq -r .state <<<"$BODY") == expired ]] && break
        sleep 0.25
done
twin_call POST "$EXP_SL/chat.postMessage" "$EXP_TOKEN" '{"channel":"C_GENERAL","text":"late"}'
assert_status 410 "a call after expiry"
api GET "/v1/sandboxes/$EXP"
assert_status 200 "the record of an expired sandbox"
assert_jq .state expired
assert_jq .reason lifetime
api GET "/v1/sandboxes/$EXP/events?twin=slack"
assert_status 200 "an expired sandbox's tape"
assert_eq "$(jq length <<<"$BODY")" 1 "its one row"
"$POME" sandbox get "$EXP" >"$TMP/get.txt" 2>&1 || fail "pome sandbox get of an expired sandbox: $(cat "$TMP/get.txt")"
grep -q expired "$TMP/get.txt" || fail "pome sandbox get does not say expired: $(cat "$TMP/get.txt")"
pass "an expired run is readable; its twin answers 410"

# 3. discarded: the run was thrown away, and the answer says so
create_sandbox github
discard "$SID"
api GET "/v1/sandboxes/$SID"
assert_status 200 "the record of a discarded sandbox"
assert_jq .state stopped
api GET "/v1/sandboxes/$SID/events?twin=github"
assert_status 404 "a discarded run's tape"
assert_jq .error.details.reason discarded
pass "a discarded run says it was thrown away"
[[ -e $TMP/state/runs/$SID ]] && fail "a discarded run left its directory"

# 3b. a twin that served no call: no tape file, an empty tape; the kept run has its seeds
create_sandbox github slack
api POST "/v1/sandboxes/$SID/finalize"
assert_status 200 "finalize without a call"
[[ -e $TMP/state/runs/$SID/slack.tape.jsonl ]] && fail "a tape file without a row"
api GET "/v1/sandboxes/$SID/events?twin=slack"
assert_status 200 "the tape of a twin that served no call"
assert_eq "$BODY" "[]" "its rows"
for twin in github slack; do
        cmp -s "$TMP/state/runs/$SID/$twin.seed.json" "$SRC/sandbox-images/$twin/seeds/default.json" ||
                fail "the kept run's $twin.seed.json is not the seed it started from"
done
pass "no call, no tape file; a kept run keeps its seeds"

# 4. another team's sandbox is not found, with the same body as an unknown id
api GET "/v1/sandboxes/ses_doesnotexist/events"
assert_status 404 "an unknown sandbox"
pass "unknown sandboxes are 404"
