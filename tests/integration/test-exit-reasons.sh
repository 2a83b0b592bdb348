#!/usr/bin/env bash
# How a pod ended is named, not guessed: a SIGKILL from outside pomed is signal:SIGKILL
# (not pomed's own "killed"), pomed's teardown is killed, a pod program that cannot be
# executed is exec_failed:<ERRNO> (found by the trial pod at start), and a pod user over
# its RLIMIT_NPROC is
# exec_failed:EAGAIN with a detail that says what to do. One log line per pod death.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
start_pomed

# 1. kill -9 from outside.
create_sandbox github slack
pid=$(jq -r .per_twin.slack.pod.pid <<<"$CREATED")
kill -9 "$pid"
for _ in $(seq 100); do
        api GET "/v1/sandboxes/$SID"
        [[ $(jq -r .state <<<"$BODY") == failed ]] && break
        sleep 0.05
done
assert_jq .reason pod_exited:slack:signal:SIGKILL "a pod killed from outside"
assert_jq .per_twin.slack.pod.state signal:SIGKILL
detail=$(jq -r .per_twin.slack.pod.detail <<<"$BODY")
[[ $detail == *"outside pomed"* ]] || fail "the detail does not say the signal came from outside: $detail"
# the other pod was pomed's teardown
for _ in $(seq 100); do
        grep -q "$SID: github pod (pid [0-9]*) killed" "$TMP/pomed.log" && break
        sleep 0.05
done
grep -q "$SID: slack pod (pid $pid) signal:SIGKILL" "$TMP/pomed.log" || fail "no log line for the killed pod"
grep -q "$SID: github pod (pid [0-9]*) killed" "$TMP/pomed.log" || fail "no log line for the torn-down pod"
pass "kill -9 from outside: signal:SIGKILL ($detail); the teardown's pod: killed"

# 2. A pod program that cannot be executed (an interpreter that does not exist): the trial
#    pod at start finds it, and pomed refuses to start with the reason.
printf '#!/nonexistent/interpreter\n' >"$TMP/bad-pod"
chmod 0755 "$TMP/bad-pod"
stop_pomed
sed -i '/^pod_exec:/d' "$TMP/pomed.conf"
echo "pod_exec: $TMP/bad-pod" >>"$TMP/pomed.conf"
rc=0
out=$(timeout 20 "$POMED" --config "$TMP/pomed.conf" 2>&1) || rc=$?
[[ $rc -ne 0 && $rc -ne 124 ]] || fail "pomed started with an unrunnable pod program (rc $rc)"
grep -q "exec_failed:ENOENT" <<<"$out" || fail "the refusal does not say exec_failed:ENOENT: $out"
pass "a pod program that cannot be executed: pomed refuses to start (exec_failed:ENOENT)"

# 3. The pod user at its process limit: execve fails with EAGAIN (RLIMIT_NPROC is
#    checked at execve after the uid change, and pods inherit pomed's soft limit). pomed
#    starts under a limit of 64 (its trial pod passes, whatever other pods run), then
#    processes of the pod user
#    go over it, and the next pod cannot start.
command -v prlimit >/dev/null || skip "prlimit (util-linux) is not installed"
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
sed -i '/^pod_exec:/d' "$TMP/pomed.conf"
POMED_REAL=$POMED
printf '#!/usr/bin/env bash\nexec prlimit --nproc=64: "%s" "$@"\n' "$POMED_REAL" >"$TMP/pomed-nproc"
chmod +x "$TMP/pomed-nproc"
POMED=$TMP/pomed-nproc
# no warm pool: the pod must be spawned at the create, once the uid is at its limit
start_pomed "pool_size: 0"
POMED=$POMED_REAL
uid=$(id -u nobody)
# (the kernel refuses when the uid already has more processes than the limit)
for i in $(seq 66); do
        setpriv --reuid="$uid" --regid="$(id -g nobody)" --clear-groups sleep 60 &
        EXTRA_PIDS+=($!)
done
for _ in $(seq 100); do
        (($(pgrep -c -u "$uid" -x sleep || true) >= 66)) && break
        sleep 0.05
done
api POST /v1/sandboxes '{"twins":["github"]}'
assert_status 503 "a create whose pod user is at RLIMIT_NPROC"
assert_jq .error.details.reason exec_failed:EAGAIN
detail=$(jq -r .error.details.detail <<<"$BODY")
[[ $detail == *RLIMIT_NPROC* ]] || fail "the detail does not name RLIMIT_NPROC: $detail"
pass "RLIMIT_NPROC: exec_failed:EAGAIN ($detail)"
