#!/usr/bin/env bash
# A lifetime or idle timeout above the deployment's cap is granted at the cap and said so
# (the create answer's warnings, printed by pome, naming the cap in seconds), never cut
# silently and never refused; only what is no number of seconds is (0 turns the idle clock
# off), and the refusal names the cap too.
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

# the idle timeout as the lifetime: far above the cap is granted at it, not refused
"$POME" sandbox create --twin github --idle-timeout 99999 --format json >"$TMP/out" 2>"$TMP/err" ||
        fail "--idle-timeout 99999 was refused: $(cat "$TMP/err")"
grep -q "pome: warning: idle_timeout_seconds 99999 is above this deployment's cap of 300 s (limits.idle_timeout)" "$TMP/err" ||
        fail "pome does not print the idle timeout's warning naming the cap: $(cat "$TMP/err")"
assert_eq "$(jq -r .idle_timeout_seconds "$TMP/out")" 300 "the idle timeout granted"
assert_eq "$(jq -r '.warnings[0].asked, .warnings[0].granted' "$TMP/out" | xargs)" "99999 300" "asked and granted"
discard "$(jq -r .session_id "$TMP/out")"
api POST /v1/sandboxes '{"twins":["github"],"idle_timeout_seconds":9223372036854775807}'
assert_status 201 "the largest integer as an idle timeout"
assert_jq .idle_timeout_seconds 300 "granted at the cap"
discard "$(jq -r .session_id <<<"$BODY")"
api POST /v1/sandboxes '{"twins":["github"],"idle_timeout_seconds":0}'
assert_status 201 "0 turns the idle clock off"
assert_jq .idle_timeout_seconds 0 "the idle clock off"
assert_jq '.warnings' null "no warning for 0"
discard "$(jq -r .session_id <<<"$BODY")"
for bad in -1 1.5 '"600"'; do
        api POST /v1/sandboxes "{\"twins\":[\"github\"],\"idle_timeout_seconds\":$bad}"
        assert_status 422 "idle_timeout_seconds $bad"
        assert_jq .error.message "idle_timeout_seconds must be a whole number of seconds, 0 to turn the idle clock off (above this deployment's cap of 300 s it is granted at the cap)." "the refusal of $bad"
done
api POST /v1/sandboxes '{"twins":["github"],"ttl_seconds":-5}'
assert_status 422 "ttl_seconds -5"
assert_jq .error.message "ttl_seconds must be a positive whole number of seconds (above this deployment's cap of 1200 s it is granted at the cap)." "the ttl refusal"
assert_eq "$(used)" 1 "sandboxes open (the --ttl 3600 one above)"
pass "idle timeout: 99999 granted at the 300 s cap with a warning naming it, 0 off, -1/1.5/\"600\" refused naming the cap"
