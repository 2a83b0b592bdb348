#!/usr/bin/env bash
# The main job through the real CLI and plain HTTP: a GitHub + Slack sandbox with
# a secrets file, the triage + carry, both tapes, a second untouched sandbox, the
# refused stop, two discards and usage back to zero.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
start_pomed

"$POME" sandbox create --twin github --twin slack --secrets-file "$TMP/a.env" >"$TMP/create.txt" ||
        fail "pome sandbox create failed: $(cat "$TMP/create.txt")"
assert_eq "$(stat -c %a "$TMP/a.env")" 600 "secrets file mode"
assert_eq "$(grep -c '^export ' "$TMP/a.env")" 11 "variables in a GitHub + Slack secrets file"
! grep -qE "eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}\." "$TMP/create.txt" || fail "create printed a token without --show-secrets"
source "$TMP/a.env"
[[ $POME_TWIN_NAMES == github,slack ]] || fail "POME_TWIN_NAMES=$POME_TWIN_NAMES"
A=$POME_SESSION_ID
pass "sandbox $A created with a 0600 secrets file of 10 variables"

gh() { twin_call "$1" "$POME_GITHUB_REST_URL$2" "$POME_AUTH_TOKEN" "${3:-}"; }
sl() { twin_call POST "$POME_SLACK_REST_URL/$1" "$POME_AUTH_TOKEN" "$2" application/x-www-form-urlencoded; }

gh GET /repos/acme/api/issues/1
assert_status 200 "read acme/api#1"
assert_jq '.state' open
assert_jq '.assignees | length' 0
assert_jq '.comments' 0
gh POST /repos/acme/api/issues/1/assignees '{"assignees":["alice"]}'
assert_status 201 "assign alice"
assert_jq '[.assignees[].login] | join(",")' alice
gh POST /repos/acme/api/issues/1/comments '{"body":"Triaged, assigned to @alice."}'
assert_status 201 "comment"
sl conversations.list ""
GENERAL=$(jq -r '.channels[] | select(.name=="general") | .id' <<<"$BODY")
[[ -n $GENERAL ]] || fail "no #general in $BODY"
sl chat.postMessage "channel=$GENERAL&text=acme%2Fapi%231+triaged%2C+assigned+to+alice"
assert_status 200 "chat.postMessage"
assert_jq .ok true
assert_jq .message.text "acme/api#1 triaged, assigned to alice"
pass "triaged acme/api#1 and told #general"

twin_call GET "$POME_GITHUB_REST_URL/_pome/events" "$POME_AUTH_TOKEN"
GH_TAPE=$BODY
twin_call GET "$POME_SLACK_REST_URL/_pome/events" "$POME_AUTH_TOKEN"
SL_TAPE=$BODY
assert_eq "$(jq length <<<"$GH_TAPE")" 3 "github tape rows (read, assign, comment)"
assert_eq "$(jq length <<<"$SL_TAPE")" 2 "slack tape rows (list, post)"
assert_eq "$(jq -s "add | map(select(.path | contains(\"/s/$A/\") | not)) | length" <<<"$GH_TAPE $SL_TAPE")" 0 "rows whose path lacks the session id"
assert_eq "$(jq -r '[.[].tool] | join(",")' <<<"$GH_TAPE")" "issue_read,add_issue_assignees,add_issue_comment" "github tools"
assert_eq "$(jq -r '[.[].state_mutation] | join(",")' <<<"$GH_TAPE")" "false,true,true" "github state_mutation"
assert_eq "$(jq -r '[.[].tool] | join(",")' <<<"$SL_TAPE")" "slack_list_conversations,slack_send_message" "slack tools"
assert_eq "$(jq -r '[.[].state_mutation] | join(",")' <<<"$SL_TAPE")" "false,true" "slack state_mutation"
assert_eq "$(jq -r '[.[].twin] | unique | join(",")' <<<"$GH_TAPE")" github "github tape holds github rows only"
grep -q chat.postMessage <<<"$GH_TAPE" && fail "Slack's write is on GitHub's tape"
grep -q "$POME_AUTH_TOKEN" <<<"$GH_TAPE$SL_TAPE" && fail "the bearer token reached a tape"
assert_eq "$(jq -r '.[0].request_headers.authorization' <<<"$GH_TAPE")" "[REDACTED]" "authorization redacted"
twin_call GET "$POME_GITHUB_REST_URL/_pome/events" "$POME_AUTH_TOKEN"
assert_eq "$(jq length <<<"$BODY")" 3 "reading the tape adds no row"
assert_eq "$(wc -l <"$TMP/state/runs/$A/github.tape.jsonl")" 3 "tape file rows"
pass "two disjoint tapes, session id in every path, tool and state_mutation on each row"

"$POME" sandbox create --twin github --twin slack --secrets-file "$TMP/b.env" >/dev/null
B=$(. "$TMP/b.env"; echo "$POME_SESSION_ID")
B_GH=$(. "$TMP/b.env"; echo "$POME_GITHUB_REST_URL")
B_SL=$(. "$TMP/b.env"; echo "$POME_SLACK_REST_URL")
B_TOKEN=$(. "$TMP/b.env"; echo "$POME_AUTH_TOKEN")
twin_call GET "$B_GH/repos/acme/api/issues/1" "$B_TOKEN"
assert_jq '.assignees | length' 0 "sandbox B issue #1 assignees"
assert_jq '.comments' 0 "sandbox B issue #1 comments"
twin_call GET "$B_SL/conversations.history?channel=$GENERAL" "$B_TOKEN"
assert_jq '.messages | length' 2 "sandbox B #general holds only the greetings"
gh GET /repos/acme/api/issues/1
assert_jq '.comments' 1 "sandbox A kept its comment"
pass "a second sandbox opened meanwhile has the untouched world"

assert_eq "$("$POME" usage --format json | jq .sessions_used)" 2 "usage with two sandboxes"
set +e
"$POME" sandbox stop "$A" >"$TMP/stop.out" 2>"$TMP/stop.err"
rc=$?
set -e
assert_eq "$rc" 5 "exit status of a refused stop"
grep -q "Refused to stop $A: it is still open (running)" "$TMP/stop.err" || fail "refusal text: $(cat "$TMP/stop.err")"
grep -q "Open for" "$TMP/stop.err" || fail "refusal lacks how long it has been open"
grep -q "pome sandbox stop $A --discard" "$TMP/stop.err" || fail "refusal lacks the discard command"
"$POME" sandbox stop "$A" --discard >/dev/null || fail "stop --discard A"
"$POME" sandbox kill "$B" --discard >/dev/null || fail "kill --discard B"
assert_eq "$("$POME" usage --format json | jq .sessions_used)" 0 "usage after both stops"
[[ -e $TMP/state/runs/$A ]] && fail "a discarded run directory remains"
twin_call GET "$POME_GITHUB_REST_URL/repos/acme/api/issues/1" "$POME_AUTH_TOKEN"
assert_status 410 "a call to a stopped sandbox"
pass "refused stop, two discards, usage back to 0"
