#!/usr/bin/env bash
# pod_uid_range: every pod its own uid and gid, so that one pod cannot signal or read
# another even without seccomp (the kernel's own rule, checked here with kill(2) and
# /proc as those uids); uids return to the range when pods end; a range that holds an
# account's id is refused at start.
source "$(dirname "$0")/lib.sh"
require_root
command -v setpriv >/dev/null || skip "setpriv is not installed (Debian: util-linux)"

FIRST=2147000000
start_pomed "pod_uid_range: $FIRST-$((FIRST + 2))"
create_sandbox github slack
A=$SID
create_sandbox github
B=$SID
uid_of() { awk '/^Uid:/ {print $2}' "/proc/$1/status"; }
gid_of() { awk '/^Gid:/ {print $2}' "/proc/$1/status"; }
SID=$A
pa=$(pod_pid github) pa2=$(pod_pid slack)
SID=$B
pb=$(pod_pid github)
ua=$(uid_of "$pa") ua2=$(uid_of "$pa2") ub=$(uid_of "$pb")
for u in "$ua" "$ua2" "$ub"; do
        ((u >= FIRST && u <= FIRST + 2)) || fail "pod uid $u outside the range"
done
[[ $ua != "$ua2" && $ua != "$ub" && $ua2 != "$ub" ]] || fail "two pods share a uid: $ua $ua2 $ub"
assert_eq "$(gid_of "$pa")" "$ua" "a pod's gid is its uid"
api GET "/v1/sandboxes/$B"
assert_jq .per_twin.github.pod.uid "$ub" "the API's pod uid"
pass "three pods, three uids of the range ($ua, $ua2, $ub), gid = uid, shown by the API"

# The kernel's answer, as one pod's uid: no signal to another pod, not even its own
# sandbox's; /proc/<pid>/environ of another pod unreadable.
out=$(setpriv --reuid="$ua" --regid="$ua" --clear-groups kill -0 "$pb" 2>&1) &&
        fail "uid $ua may signal pod $pb (uid $ub)"
grep -qi "not permitted" <<<"$out" || fail "kill as $ua: $out"
setpriv --reuid="$ua" --regid="$ua" --clear-groups kill -0 "$pa2" 2>/dev/null &&
        fail "uid $ua may signal its sibling pod $pa2 (uid $ua2)"
setpriv --reuid="$ua" --regid="$ua" --clear-groups cat "/proc/$pb/environ" >/dev/null 2>&1 &&
        fail "uid $ua reads /proc/$pb/environ"
setpriv --reuid="$ub" --regid="$ub" --clear-groups kill -0 "$pb" ||
        fail "the pod's own uid cannot signal it (the check above proves nothing)"
pass "as pod uid $ua: kill(2) of the other pods and their /proc/<pid>/environ are refused by the kernel"

# The range is full: a fourth pod is refused, and the create is all-or-nothing.
api POST /v1/sandboxes '{"twins":["stripe"]}'
assert_status 503 "a pod beyond the range"
grep -q "no free uid in pod_uid_range" <<<"$BODY" || fail "the refusal does not say why: $BODY"
discard "$B"
create_sandbox stripe
SID_C=$SID
pc=$(pod_pid stripe)
assert_eq "$(uid_of "$pc")" "$ub" "the freed uid is reused"
discard "$SID_C"
discard "$A"
pass "a full range refuses the next pod (503, named); an ended pod's uid goes back to the range"
stop_pomed

# A range that holds an account's uid is refused at start, naming it.
nobody_range="65530-65535"
echo "pod_uid_range: $nobody_range" >"$TMP/bad.conf"
"$POMED" --config "$TMP/bad.conf" --check-config >"$TMP/check" 2>&1 && fail "--check-config accepted $nobody_range"
grep -q "pod_uid_range" "$TMP/check" || fail "--check-config: $(cat "$TMP/check")"
used=$(awk -F: '$3 >= 1000 && $3 < 60000 {print $3; exit}' /etc/passwd)
if [[ -n $used ]]; then
        start_args="pod_uid_range: $used-$((used + 5))"
        mkdir -p "$TMP/state2"
        printf 'control_listen: 127.0.0.1:0\ngateway_listen: 127.0.0.1:0\nstate_dir: %s\nbus: none\n%s\n' \
                "$TMP/state2" "$start_args" >"$TMP/clash.conf"
        "$POMED" --config "$TMP/clash.conf" >"$TMP/clash.log" 2>&1 && fail "pomed started with a range holding uid $used"
        grep -q "holds $used" "$TMP/clash.log" || fail "the start error does not name uid $used: $(cat "$TMP/clash.log")"
        pass "a range holding uid $used (an account) stops pomed at start, naming it; 65534 is refused by the parser"
else
        pass "65534 in the range is refused by the parser (no account ≥ 1000 here to clash with)"
fi
