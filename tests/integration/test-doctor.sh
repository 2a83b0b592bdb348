#!/usr/bin/env bash
# pome doctor against a real pomed: every isolation layer named with what the kernel
# offers and what pomed uses, the listeners, the key and the state directory; a problem
# is reported with its fix and makes the exit status 1.
source "$(dirname "$0")/lib.sh"
require_root

start_pomed
chmod 0750 "$TMP/state" # lib.sh makes it with the test's umask
status=0
"$POME" doctor >"$TMP/doctor" 2>&1 || status=$?
cat "$TMP/doctor"
for line in "control API" "twin gateway" "API key" cgroups seccomp "namespace net" "namespace ipc" \
        "namespace uts" "namespace pid" "namespace mount" "pod user" D-Bus "state dir"; do
        grep -qE "^(ok|warn|missing) +$line " "$TMP/doctor" || fail "doctor has no '$line' line"
done
grep -qE "^ok +namespace pid +each pod its own" "$TMP/doctor" || fail "pid namespace not ok as root"
grep -qE "^ok +control API +$CONTROL answers" "$TMP/doctor" || fail "control API line"
if [[ $(jq -r .isolation.cgroups.active <(curl -s "$CONTROL/healthz")) == true ]]; then
        grep -qE "^ok +cgroups" "$TMP/doctor" || fail "cgroups active in pomed, not ok in doctor"
        assert_eq "$status" 0 "doctor's exit status with nothing missing"
fi
! grep -q $'\033' "$TMP/doctor" || fail "colours in output that is not a terminal"
pass "pome doctor names every layer, the listeners, the key and the state dir (exit $status)"

# A state directory every user may enter is a problem, with its fix.
chmod 0755 "$TMP/state"
status=0
"$POME" doctor >"$TMP/doctor" 2>&1 || status=$?
assert_eq "$status" 1 "doctor's exit status with an open state dir"
grep -qE "^missing +state dir +$TMP/state is mode 0755" "$TMP/doctor" || fail "state dir: $(grep 'state dir' "$TMP/doctor")"
grep -q "fix: chmod o-rwx $TMP/state" "$TMP/doctor" || fail "no fix for the state dir"
chmod 0750 "$TMP/state"
pass "an open state directory: missing, with 'chmod o-rwx' as the fix"

# No pomed: the control API is missing, with how to start it; the host's layers still shown.
stop_pomed
status=0
"$POME" doctor >"$TMP/doctor" 2>&1 || status=$?
assert_eq "$status" 1 "doctor's exit status without pomed"
grep -qE "^missing +control API" "$TMP/doctor" || fail "no missing control API line"
grep -q "fix: start pomed: systemctl start pomed" "$TMP/doctor" || fail "no fix for a stopped pomed"
grep -qE "^ok +seccomp" "$TMP/doctor" || fail "the host's layers are not shown without pomed"
pass "no pomed: control API missing, with how to start it; the host's own layers still checked"
