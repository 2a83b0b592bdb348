#!/usr/bin/env bash
# The state directory turns read-only under a running pomed (EROFS: ext4 remounts itself
# read-only after an error, errors=remount-ro, here on a loop device with its
# trigger_fs_error): the write that finds it is held, then answered 507 (carried out, its
# row kept); later writes and creates answer 507 without being carried out; /healthz names
# the error; no sandbox ends. Such a filesystem needs an fsck before it is writable again:
# pomed stopped meanwhile says how many rows and records it could not write.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 is not installed (e2fsprogs)"

truncate -s 64M "$TMP/state.img"
mkfs.ext4 -q -F "$TMP/state.img"
mkdir -p "$TMP/state"
mount -o loop,errors=remount-ro "$TMP/state.img" "$TMP/state" || skip "cannot mount a loop device here"
trap 'rc=$?; umount -l "$TMP/state" 2>/dev/null || true; cleanup $rc' EXIT
dev=$(basename "$(findmnt -n -o SOURCE "$TMP/state")")
[[ -w /sys/fs/ext4/$dev/trigger_fs_error ]] || skip "this kernel's ext4 has no trigger_fs_error"
start_pomed "limits:" "  request_timeout: 2s"
create_sandbox github
GH=$(rest_url github)
comment() { twin_call POST "$GH/repos/acme/api/issues/1/comments" "$TOKEN" "{\"body\":\"$1\"}"; }
comment "before"
assert_status 201 "a write on a writable state directory"

echo 1 >"/sys/fs/ext4/$dev/trigger_fs_error" # the filesystem goes read-only, as on an I/O error
comment "the one that finds it read-only"
assert_status 507 "the write whose row meets a read-only state directory"
jq -e '.message | test("was carried out, but")' <<<"$BODY" >/dev/null ||
        fail "the 507 does not say the call was carried out: $BODY"
comment "refused"
assert_status 507 "a write while the state directory is read-only"
jq -e '.message | test("not carried out")' <<<"$BODY" >/dev/null || fail "not said: $BODY"
api POST /v1/sandboxes '{"twins":["github"]}'
assert_status 507 "a create while the state directory is read-only"
assert_jq .error.type insufficient_storage
curl -s "$CONTROL/healthz" >"$TMP/healthz"
assert_eq "$(jq -c '.state_dir | [.full, .error]' "$TMP/healthz")" '[true,"Read-only file system"]' \
        "/healthz while read-only"
api GET "/v1/sandboxes/$SID"
assert_jq .state running "the sandbox while its state directory is read-only"
pass "read-only: the write that found it answered 507 (carried out), later ones and creates refused; /healthz says why"

stop_pomed
grep -qE "exiting with 1 tape rows and [0-9]+ records that the state directory never took" "$TMP/pomed.log" ||
        fail "pomed's exit does not say what it could not write: $(tail -3 "$TMP/pomed.log")"
pass "stopped while read-only, pomed says what it could not write"
