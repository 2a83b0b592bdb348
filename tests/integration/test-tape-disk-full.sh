#!/usr/bin/env bash
# A tape write the disk refuses (ENOSPC): the sandbox ends failed (tape_error:<twin>), the
# failure is logged once, not again by every later flush, and pomed serves on.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root

mkdir -p "$TMP/state/runs"
mount -t tmpfs -o size=512k tmpfs "$TMP/state/runs" || skip "cannot mount a tmpfs (needs CAP_SYS_ADMIN)"
trap 'umount -l "$TMP/state/runs" 2>/dev/null; cleanup' EXIT
start_pomed
create_sandbox github slack
gh_url=$(rest_url github)
# leave the run directory a few KiB
avail=$(df --output=avail -k "$TMP/state/runs" | tail -1)
fallocate -l "$(( (avail - 8) * 1024 ))" "$TMP/state/runs/filler" || dd if=/dev/zero of="$TMP/state/runs/filler" bs=1k count=$((avail - 8)) 2>/dev/null || true
body=$(printf '{"body":"%s"}' "$(head -c 3000 /dev/zero | tr '\0' x)")
for i in $(seq 40); do
        twin_call POST "$gh_url/repos/acme/api/issues/1/comments" "$TOKEN" "$body"
        [[ $STATUS == 201 ]] || break
done
api GET "/v1/sandboxes/$SID"
assert_jq .state failed "the sandbox after its tape hit a full disk"
assert_jq .reason "tape_error:github"
n=$(grep -c "cannot \(append to\|write\) the github tape" "$TMP/pomed.log" || true)
assert_eq "$n" 1 "log lines for the github tape's failure"
rm -f "$TMP/state/runs/filler"
create_sandbox github
twin_call GET "$(rest_url github)/repos/acme/api/issues/1" "$TOKEN"
assert_status 200 "a new sandbox once the disk has room again"
pass "a tape the disk refuses fails its sandbox, is said once, and pomed serves on"
