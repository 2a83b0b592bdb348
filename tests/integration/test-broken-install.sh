#!/usr/bin/env bash
# A pod program the pod user cannot execute fails at start, not at the first sandbox: pomed
# exits non-zero naming the path, the user and the fix. A pod program in a 0700 directory
# (a clone in root's home) is no such case: pods are started from a file descriptor pomed
# opened, so the pod user needs no search permission on the path; nor does it read the
# images (pomed hands over what a pod needs).
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root

# try_start KEY VALUE [SECONDS]: runs pomed with one extra setting for at most SECONDS
# (default 20); sets RC (124: still running then) and LOG.
try_start() {
        mkdir -p "$TMP/state"
        {
                echo "control_listen: 127.0.0.1:0"
                echo "gateway_listen: 127.0.0.1:0"
                echo "state_dir: $TMP/state"
                echo "bus: none"
                echo "$1: $2"
        } >"$TMP/broken.conf"
        RC=0
        LOG=$(timeout "${3:-20}" "$POMED" --config "$TMP/broken.conf" 2>&1) || RC=$?
}

mkdir -m 0700 "$TMP/private"
cp "$POD" "$TMP/private/pome-pod"
chmod 0700 "$TMP/private/pome-pod"
try_start pod_exec "$TMP/private/pome-pod"
[[ $RC -ne 0 && $RC -ne 124 ]] || fail "pomed started (or hung) with a pod program the pod user cannot execute: rc=$RC"
grep -q "broken install" <<<"$LOG" || fail "no 'broken install' in: $LOG"
grep -q "pod_user nobody" <<<"$LOG" || fail "the message does not name the user: $LOG"
grep -q "cannot execute $TMP/private/pome-pod" <<<"$LOG" || fail "the message does not name the program: $LOG"
grep -q "chmod o+x $TMP/private/pome-pod" <<<"$LOG" || fail "the message does not say the fix: $LOG"
pass "a pod program the pod user cannot execute: $(grep -o 'broken install[^.]*' <<<"$LOG" | head -1)"

# What no permission check sees: a dynamically linked program as pod_exec (the pod's
# filters leave its loader no open(2)). The trial pod at start finds it.
try_start pod_exec /bin/true
[[ $RC -ne 0 && $RC -ne 124 ]] || fail "pomed started with a dynamically linked pod program"
grep -q "broken install: a trial github pod" <<<"$LOG" || fail "no trial-pod refusal: $LOG"
pass "a pod program that cannot start under the isolation: $(grep -o 'did not start: [^.]*' <<<"$LOG" | head -1)"

# the program executable by others, still in the 0700 directory: pomed starts and serves
chmod 0755 "$TMP/private/pome-pod"
cp -r "$SRC/sandbox-images" "$TMP/images"
chmod -R go-rwx "$TMP/images"
{
        echo "control_listen: 127.0.0.1:0"
        echo "gateway_listen: 127.0.0.1:0"
        echo "state_dir: $TMP/state"
        echo "bus: none"
        echo "pod_exec: $TMP/private/pome-pod"
        echo "images_dir: $TMP/images"
} >"$TMP/private.conf"
rm -f "$TMP/state/pomed.json"
"$POMED" --config "$TMP/private.conf" >>"$TMP/pomed.log" 2>&1 &
POMED_PID=$!
for _ in $(seq 200); do [[ -f $TMP/state/pomed.json ]] && break; sleep 0.05; done
[[ -f $TMP/state/pomed.json ]] || fail "pomed did not start with its pod program in a 0700 directory"
CONTROL=$(jq -r .control_url "$TMP/state/pomed.json")
API_KEY=$(head -1 "$TMP/state/api-key")
create_sandbox github slack
twin_call GET "$(rest_url github)/repos/acme/api/issues/1" "$TOKEN"
assert_status 200 "a twin call to a pod started from a 0700 directory"
discard "$SID"
pass "pome-pod and the images in 0700 directories (a clone in root's home): pods start and serve"
