#!/usr/bin/env bash
# Credentials masked at create are not a dead end: `pome sandbox env ID` and
# `pome sandbox get ID --show-secrets` give them again to the sandbox's team (not to
# another team, not once it has ended); stopping an ended sandbox says so.
source "$(dirname "$0")/lib.sh"

OTHER_KEY=pome_otherteamkey0123456789abcdefghij
start_pomed "teams:" "  - id: local" "    sessions_quota: 5" "  - id: other" "    sessions_quota: 5" \
        "    api_keys_sha256: [$(printf %s "$OTHER_KEY" | sha256sum | cut -d' ' -f1)]"

"$POME" sandbox create --twin github --twin stripe --format json >"$TMP/masked.json" 2>"$TMP/masked.err"
SID=$(jq -r .session_id "$TMP/masked.json")
[[ $(jq -r .session_token "$TMP/masked.json") == *"(hidden)" ]] || fail "create --format json did not mask the token"
"$POME" sandbox create --twin github >"$TMP/text.out"
grep -q "later: pome sandbox env ses_" "$TMP/text.out" || fail "create does not say how to get the secrets later: $(cat "$TMP/text.out")"
"$POME" sandbox stop "$(sed -n 's/.*pome sandbox env \(ses_[A-Za-z0-9]*\).*/\1/p' "$TMP/text.out")" --discard >/dev/null

"$POME" sandbox env "$SID" >"$TMP/env" || fail "pome sandbox env: $(cat "$TMP/env")"
# shellcheck disable=SC1091
(. "$TMP/env" && echo "$POME_AUTH_TOKEN $POME_GITHUB_REST_URL $POME_STRIPE_API_KEY") >"$TMP/vars"
read -r token url stripe_key <"$TMP/vars"
twin_call GET "$url/repos/acme/api/issues/1" "$token"
assert_status 200 "a twin call with the token pome sandbox env gave"
[[ $stripe_key == sk_test_pome_* ]] || fail "POME_STRIPE_API_KEY: $stripe_key"
"$POME" sandbox get "$SID" --show-secrets --format json >"$TMP/shown.json"
assert_eq "$(jq -r .session_token "$TMP/shown.json")" "$token" "get --show-secrets vs env"
assert_eq "$(jq -r .provider_credentials.stripe.api_key "$TMP/shown.json")" "$stripe_key" "the Stripe key"
"$POME" sandbox get "$SID" >"$TMP/get.txt"
! grep -qF "$token" "$TMP/get.txt" || fail "get without --show-secrets prints the token"
"$POME" sandbox env "$SID" --secrets-file "$TMP/again.env" >/dev/null
assert_eq "$(stat -c %a "$TMP/again.env")" 600 "the secrets file's mode"
grep -qF "$token" "$TMP/again.env" || fail "the secrets file lacks the token"
pass "pome sandbox env / get --show-secrets: the masked credentials again, and they work"

status=0
POME_API_KEY=$OTHER_KEY "$POME" sandbox env "$SID" >"$TMP/other" 2>&1 || status=$?
assert_eq "$status" 1 "another team's env exit status"
grep -q "not_found" "$TMP/other" || fail "another team: $(cat "$TMP/other")"
pass "another team gets not_found"

"$POME" sandbox stop "$SID" --discard >/dev/null
status=0
"$POME" sandbox env "$SID" >"$TMP/ended" 2>&1 || status=$?
[[ $status -ne 0 ]] || fail "env of an ended sandbox succeeded"
grep -q "has ended" "$TMP/ended" || fail "env of an ended sandbox: $(cat "$TMP/ended")"
out=$("$POME" sandbox stop "$SID")
assert_eq "$out" "Sandbox $SID had already ended (stopped: discarded); nothing to stop." "stop again"
pass "an ended sandbox: no credentials ('has ended'), and stopping it again says it had ended"

# pome --help lists every command; pome sandbox --help every subcommand.
help=$("$POME" --help)
for cmd in "sandbox create" "sandbox list" "sandbox get" "sandbox env" "sandbox finalize" \
        "sandbox stop" usage doctor "twin start" help; do
        grep -qE "^  $cmd( |$)" <<<"$help" || fail "pome --help does not list '$cmd'"
done
help=$("$POME" sandbox --help)
for cmd in create list get env finalize stop kill; do
        grep -qE "^  $cmd( |$)" <<<"$help" || fail "pome sandbox --help does not list '$cmd'"
done
pass "pome --help and pome sandbox --help list every command"
