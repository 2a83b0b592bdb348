#!/usr/bin/env bash
# A lifetime or idle timeout above the deployment's cap is granted at the cap and said so
# (the create answer's warnings, printed by pome), never cut silently.
source "$(dirname "$0")/lib.sh"

start_pomed "limits:" "  lifetime: 20m" "  idle_timeout: 5m"
api POST /v1/sandboxes '{"twins":["github"],"ttl_seconds":3600,"idle_timeout_seconds":7200}'
assert_status 201 "a create asking for more than the caps"
assert_jq '.warnings | length' 2 "two warnings"
assert_jq '.warnings[0].field + " " + (.warnings[0].granted|tostring)' "ttl_seconds 1200" "the lifetime granted"
assert_jq '.warnings[1].field + " " + (.warnings[1].granted|tostring)' "idle_timeout_seconds 300" "the idle timeout granted"
lifetime=$(( $(date -d "$(jq -r .expires_at <<<"$BODY")" +%s) - $(date -d "$(jq -r .created_at <<<"$BODY")" +%s) ))
assert_eq "$lifetime" 1200 "expires_at - created_at"
discard "$(jq -r .session_id <<<"$BODY")"

api POST /v1/sandboxes '{"twins":["github"],"ttl_seconds":60,"idle_timeout_seconds":30}'
assert_status 201 "a create within the caps"
assert_jq '.warnings' null "no warnings within the caps"
discard "$(jq -r .session_id <<<"$BODY")"
pass "asked above the caps: granted at the caps, with one warning each naming asked and granted"

"$POME" sandbox create --twin github --ttl 3600 >"$TMP/out" 2>"$TMP/err"
grep -q "pome: warning: ttl_seconds 3600 is above this deployment's cap of 1200 s" "$TMP/err" ||
        fail "pome does not print the warning: $(cat "$TMP/err")"
pass "pome sandbox create prints the warning on stderr"
