#!/usr/bin/env bash
# A build the pod user cannot reach fails at start, not at the first sandbox: pomed exits
# non-zero naming the path, the user and the fix (a pod program in a 0700 directory, a
# sandbox-images copy nobody may read).
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
try_start pod_exec "$TMP/private/pome-pod"
[[ $RC -ne 0 && $RC -ne 124 ]] || fail "pomed started (or hung) with an unreachable pod program: rc=$RC"
grep -q "broken install" <<<"$LOG" || fail "no 'broken install' in: $LOG"
grep -q "pod_user nobody" <<<"$LOG" || fail "the message does not name the user: $LOG"
grep -q "$TMP/private" <<<"$LOG" || fail "the message does not name the directory: $LOG"
grep -q "chmod o+rx $TMP/private" <<<"$LOG" || fail "the message does not say the fix: $LOG"
pass "pod program in a 0700 directory: $(grep -o 'broken install[^.]*' <<<"$LOG" | head -1)"

cp -r "$SRC/sandbox-images" "$TMP/images"
chmod 0700 "$TMP/images/github"
try_start images_dir "$TMP/images"
[[ $RC -ne 0 && $RC -ne 124 ]] || fail "pomed started with images the pod user cannot read"
grep -q "broken install" <<<"$LOG" && grep -q "$TMP/images/github" <<<"$LOG" ||
        fail "the message does not name the unreadable image directory: $LOG"
pass "unreadable images are refused at start"

# What no permission check sees: a dynamically linked program as pod_exec (the pod's
# filters leave its loader no open(2)). The trial pod at start finds it.
try_start pod_exec /bin/true
[[ $RC -ne 0 && $RC -ne 124 ]] || fail "pomed started with a dynamically linked pod program"
grep -q "broken install: a trial github pod" <<<"$LOG" || fail "no trial-pod refusal: $LOG"
pass "a pod program that cannot start under the isolation: $(grep -o 'did not start: [^.]*' <<<"$LOG" | head -1)"

chmod 0755 "$TMP/private" "$TMP/images/github"
try_start pod_exec "$TMP/private/pome-pod" 3
[[ $RC -eq 124 ]] || fail "pomed did not serve once the install was fixed: rc=$RC: $LOG"
pass "a fixed install starts"
