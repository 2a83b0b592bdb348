#!/usr/bin/env bash
# `pome run` holds the agent to the task's timeout: an agent that hangs (and a child it
# spawned) is ended by SIGTERM to its whole process group at the timeout; one that ignores
# SIGTERM gets SIGKILL after the grace period. Either way the run is still graded and the
# verdict's report says the agent timed out. Also: leftovers of an agent that exited are
# killed before grading, and an agent command that cannot run is a usage error.
# All of it unsealed (--no-seal: the agent is a process group on the host, which these pid
# files watch); test-sealed-agent.sh holds a sealed agent to the same.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
start_pomed
cd "$TMP"

# [code] criteria only: the verdict is the agent's (no judge here to make it incomplete)
sed 's/^timeout: 60$/timeout: 3/; /^- \[model\]/d' "$SRC/examples/triage/task.md" >task.md
grep -q '^timeout: 3$' task.md || fail "could not make a 3 s task"

# alive PIDFILE: whether the process whose pid is in PIDFILE still exists (a zombie is not)
alive() {
        local pid
        pid=$(cat "$1")
        [[ -d /proc/$pid ]] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null
}

# ---- a hanging agent with a child: SIGTERM to the group at 3 s
cat >hang-agent.sh <<EOF
#!/usr/bin/env bash
sleep 1000 &
echo \$! >$TMP/child.pid
echo \$\$ >$TMP/agent.pid
sleep 1000
EOF
chmod +x hang-agent.sh
start=$(date +%s.%N)
set +e
"$POME" run task.md --no-seal --out runs --json -- ./hang-agent.sh >hang.json 2>hang.err
rc=$?
set -e
took=$(echo "$(date +%s.%N) - $start" | bc)
assert_eq "$rc" 1 "exit status of a timed-out run (graded: fail)"
D=$(jq -r '.trials[0].run_dir' hang.json)
echo "the hanging agent's run took ${took}s"
(($(echo "$took >= 3 && $took < 8" | bc))) || fail "the run took ${took}s with a 3 s timeout"
assert_eq "$(jq -r '.agent | "\(.timed_out) \(.killed) \(.signal) \(.exit_code)"' "$D/meta.json")" \
        "true false SIGTERM null" "meta.json agent (timed out, SIGTERM ended it)"
alive "$TMP/agent.pid" && fail "the agent survived its timeout"
alive "$TMP/child.pid" && fail "the agent's child survived: the process group was not signalled"
[[ -s $D/verdict.json ]] || fail "the timed-out run has no verdict"
assert_eq "$(jq -r .trials[0].graded_by hang.json)" pomed "who graded the timed-out run"
assert_eq "$(jq -r '[.criteria[] | select(.scored) | "\(.check.id)=\(.status)"] | join(" ")' "$D/verdict.json")" \
        "github.issue-assignee=failed github.issue-comment-contains=failed github.no-new-issues=passed slack.message-contains=failed" \
        "criteria of an agent that did nothing"
"$POME" eval "$D" --json >eval.json || true
cmp eval.json "$D/verdict.json" || fail "pome eval of the timed-out run"
"$POME" run task.md --no-seal --out runs-text -- ./hang-agent.sh >hang.txt 2>&1 || true
grep -q 'the agent timed out after 3s (its process group got SIGTERM); graded as it stood' hang.txt ||
        fail "the report does not say the agent timed out: $(cat hang.txt)"
grep -q '^Verdict: FAIL' hang.txt || fail "no verdict table after a timeout: $(cat hang.txt)"
assert_eq "$(used)" 0 "sandboxes open after the timeouts"
pass "hang (sleep 1000 + a child) with timeout 3 s: group SIGTERMed at 3 s, both dead, graded (took ${took}s)"

# ---- one that ignores SIGTERM: SIGKILL after the 5 s grace, in --local mode
cat >stubborn-agent.sh <<EOF
#!/usr/bin/env bash
trap '' TERM
sleep 1000 &
echo \$! >$TMP/child2.pid
sleep 1000
EOF
chmod +x stubborn-agent.sh
start=$(date +%s.%N)
set +e
"$POME" run task.md --no-seal --local --out runs --json -- ./stubborn-agent.sh >stubborn.json 2>stubborn.err
rc=$?
set -e
took=$(echo "$(date +%s.%N) - $start" | bc)
assert_eq "$rc" 1 "exit status of the stubborn agent's run"
D=$(jq -r '.trials[0].run_dir' stubborn.json)
(($(echo "$took >= 8 && $took < 13" | bc))) || fail "the stubborn run took ${took}s (3 s timeout + 5 s grace)"
assert_eq "$(jq -r '.agent | "\(.timed_out) \(.killed) \(.signal)"' "$D/meta.json")" "true true SIGKILL" "meta.json agent"
alive "$TMP/child2.pid" && fail "the stubborn agent's child survived SIGKILL to the group"
[[ -s $D/verdict.json ]] || fail "the stubborn run has no verdict"
pass "an agent ignoring SIGTERM: SIGKILL to its group after the grace period, graded (took ${took}s)"

# ---- leftovers of an agent that exited are killed before grading
cat >leaver-agent.sh <<EOF
#!/usr/bin/env bash
(sleep 1000 & echo \$! >$TMP/leftover.pid; wait) &
sleep 0.2
exit 0
EOF
chmod +x leaver-agent.sh
set +e
"$POME" run task.md --no-seal --local --out runs --quiet -- ./leaver-agent.sh >/dev/null 2>&1
set -e
alive "$TMP/leftover.pid" && fail "a process the agent left behind outlived the run"
pass "what an exited agent left in its process group is killed"

# ---- an agent command that cannot run: usage error, no sandbox left open
set +e
"$POME" run task.md --out runs -- ./no-such-agent >nope.out 2>nope.err
rc=$?
set -e
assert_eq "$rc" 2 "exit status for an agent that cannot run"
grep -q 'no-such-agent' nope.err || fail "the error does not name the command: $(cat nope.err)"
assert_eq "$(used)" 0 "sandboxes open after an agent that could not start"
pass "an agent command that cannot run: exit 2, its sandbox discarded"

# ---- interrupted: the agents are killed, their sandboxes discarded, exit 130
rm -f "$TMP/agent.pid" "$TMP/child.pid"
"$POME" run task.md --no-seal --out runs-int -- ./hang-agent.sh >int.out 2>int.err &
P=$!
for _ in $(seq 200); do
        [[ -s $TMP/child.pid && $(used) == 1 ]] && break
        sleep 0.05
done
[[ -s $TMP/child.pid ]] || fail "the agent to interrupt did not start"
kill -INT "$P"
set +e
wait "$P"
rc=$?
set -e
assert_eq "$rc" 130 "exit status of an interrupted run"
alive "$TMP/agent.pid" && fail "the agent survived the interrupt"
alive "$TMP/child.pid" && fail "the agent's child survived the interrupt"
assert_eq "$(used)" 0 "sandboxes open after the interrupt"
ISID=$(basename "$(ls -d runs-int/*)")
api GET "/v1/sandboxes/$ISID"
assert_jq .state stopped "the interrupted run's sandbox"
assert_eq "$(jq -r .outcome "runs-int/$ISID/meta.json")" interrupted "meta.json outcome"
grep -q 'interrupted: stopping the agents' int.err || fail "the interrupt is not said: $(cat int.err)"
pass "SIGINT: agent group killed, sandbox discarded (stopped), exit 130"
