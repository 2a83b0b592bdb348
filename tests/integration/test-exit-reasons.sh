#!/usr/bin/env bash
# How a pod ended is named, not guessed: a SIGKILL from outside pomed is signal:SIGKILL
# (not pomed's own "killed"), pomed's teardown is killed, a pod program that cannot be
# executed is exec_failed:<ERRNO>, and a pod user over its RLIMIT_NPROC is
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

# 2. A pod program that cannot be executed (an interpreter that does not exist).
printf '#!/nonexistent/interpreter\n' >"$TMP/bad-pod"
chmod 0755 "$TMP/bad-pod"
stop_pomed
start_pomed "pod_exec: $TMP/bad-pod"
api POST /v1/sandboxes '{"twins":["github"]}'
assert_status 503 "a create whose pod program cannot run"
assert_jq .error.details.reason exec_failed:ENOENT
pass "a pod program that cannot be executed: exec_failed:ENOENT"

# 3. The pod user at its process limit: execve fails with EAGAIN (RLIMIT_NPROC is
#    checked at execve after the uid change, and pods inherit pomed's soft limit).
command -v prlimit >/dev/null || skip "prlimit (util-linux) is not installed"
stop_pomed
POMED_REAL=$POMED
printf '#!/usr/bin/env bash\nexec prlimit --nproc=1: "%s" "$@"\n' "$POMED_REAL" >"$TMP/pomed-nproc"
chmod +x "$TMP/pomed-nproc"
POMED=$TMP/pomed-nproc
start_pomed
POMED=$POMED_REAL
api POST /v1/sandboxes '{"twins":["github"]}'
assert_status 503 "a create whose pod user is at RLIMIT_NPROC"
assert_jq .error.details.reason exec_failed:EAGAIN
detail=$(jq -r .error.details.detail <<<"$BODY")
[[ $detail == *RLIMIT_NPROC* ]] || fail "the detail does not name RLIMIT_NPROC: $detail"
pass "RLIMIT_NPROC: exec_failed:EAGAIN ($detail)"
