#!/usr/bin/env bash
# `pome run --trials`: with the team's quota at 3, five trials never hold more than 3
# sandboxes open (a background loop watches GET /v1/usage's sessions_used throughout and
# records the maximum), each trial gets its own sandbox and run directory, and the result
# is 5 trials with pass@1 and pass^k. Two runs sharing the quota find it full: the second
# waits for slots instead of failing, and the quota still holds.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
start_pomed "teams:" "  - id: local" "    sessions_quota: 3"
cd "$TMP"

TRIAGE=$SRC/examples/triage
# The reference agent, slowed down so that trials overlap long enough to be counted.
cat >slow-agent.sh <<EOF
#!/usr/bin/env bash
sleep 1.5
exec "$TRIAGE/good-agent.sh"
EOF
chmod +x slow-agent.sh

# watch FILE: sessions_used every 50 ms, one per line, until killed
watch_usage() {
        while :; do
                curl -s -H "Authorization: Bearer $API_KEY" "$CONTROL/v1/usage" | jq -r .sessions_used >>"$1" || true
                sleep 0.05
        done
}

watch_usage used.log &
WATCH=$!
EXTRA_PIDS+=("$WATCH")
"$POME" run "$TRIAGE/task.md" --code-only --trials 5 --out runs --json -- ./slow-agent.sh >trials.json 2>trials.err ||
        fail "pome run --trials 5 exited $?: $(cat trials.err)"
kill "$WATCH"
wait "$WATCH" 2>/dev/null || true
MAX=$(sort -n used.log | tail -1)
echo "sessions_used: max $MAX over $(wc -l <used.log) samples during --trials 5 with quota 3"
[[ $MAX -le 3 ]] || fail "$MAX sandboxes were open at once with a quota of 3"
[[ $MAX -ge 2 ]] || fail "the trials never overlapped (max $MAX open): the watch proves nothing"
assert_eq "$(jq -r .k trials.json)" 5 "k"
assert_eq "$(jq -r '.trials | length' trials.json)" 5 "trials reported"
assert_eq "$(jq -r .passed trials.json)" 5 "trials passed"
assert_eq "$(jq -r .pass_at_1 trials.json)" 1 "pass@1"
assert_eq "$(jq -r .pass_hat_k trials.json)" 1 "pass^k"
assert_eq "$(jq -r '[.trials[].session_id] | unique | length' trials.json)" 5 "distinct sandboxes"
assert_eq "$(jq -r '[.trials[].run_dir] | unique | length' trials.json)" 5 "distinct run directories"
assert_eq "$(jq -r '[.trials[].graded_by] | unique | join(",")' trials.json)" pomed "graded by"
for d in $(jq -r '.trials[].run_dir' trials.json); do
        [[ -s $d/verdict.json && -s $d/meta.json ]] || fail "$d lacks its verdict or meta"
done
grep -q '5 trials, 3 at a time' trials.err || fail "the concurrency is not said: $(cat trials.err)"
assert_eq "$(used)" 0 "sandboxes open after the trials"
pass "--trials 5, quota 3: at most $MAX open, 5 trials in 5 sandboxes, pass@1 = 1, pass^5 = 1"

# the text form says pass@1 and pass^k
"$POME" run "$TRIAGE/task.md" --code-only --trials 2 --out runs-text -- "$TRIAGE/good-agent.sh" >text.out 2>text.err ||
        fail "--trials 2 exited $?: $(cat text.err)"
grep -q '^2 trials: 2 passed, 0 did not · pass@1 = 1.00 · pass^2 = 1 (every trial passed)$' text.out ||
        fail "the trials summary line: $(cat text.out)"
assert_eq "$(grep -c '^Trial [12]/2 ses_' text.out)" 2 "one line per trial"
pass "text form: one line per trial and pass@1 / pass^k"

# a mixed result: pass^k is 0 and the exit status 1
cat >flaky-agent.sh <<EOF
#!/usr/bin/env bash
if [[ \$POME_TRIAL == 2 ]]; then exec "$TRIAGE/bad-agent.sh"; fi
exec "$TRIAGE/good-agent.sh"
EOF
chmod +x flaky-agent.sh
set +e
"$POME" run "$TRIAGE/task.md" --code-only --trials 3 --out runs-flaky --json -- ./flaky-agent.sh >flaky.json 2>flaky.err
rc=$?
set -e
assert_eq "$rc" 1 "exit status with one failed trial"
assert_eq "$(jq -r '[.passed, .pass_hat_k] | join(",")' flaky.json)" "2,0" "passed, pass^k"
assert_eq "$(jq -r .pass_at_1 flaky.json | cut -c1-6)" "0.6666" "pass@1"
assert_eq "$(jq -r '[.trials[] | .state] | join(",")' flaky.json)" "pass,fail,pass" "trial states"
pass "one of 3 trials failed: exit 1, pass@1 = 0.67, pass^3 = 0"

# two runs on one quota: the second finds it full, waits, and still never exceeds it
: >used2.log
watch_usage used2.log &
WATCH=$!
EXTRA_PIDS+=("$WATCH")
"$POME" run "$TRIAGE/task.md" --code-only --trials 3 --out runs-a --json -- ./slow-agent.sh >a.json 2>a.err &
A=$!
sleep 0.3
"$POME" run "$TRIAGE/task.md" --code-only --trials 3 --out runs-b --json -- ./slow-agent.sh >b.json 2>b.err ||
        fail "the second run exited $?: $(cat b.err)"
wait "$A" || fail "the first run exited $?: $(cat a.err)"
kill "$WATCH"
wait "$WATCH" 2>/dev/null || true
MAX2=$(sort -n used2.log | tail -1)
echo "sessions_used: max $MAX2 with two runs of 3 trials sharing quota 3"
[[ $MAX2 -le 3 ]] || fail "$MAX2 sandboxes open at once with a quota of 3"
grep -q 'waiting for a slot' a.err b.err || fail "no trial had to wait: $(cat a.err b.err)"
assert_eq "$(jq -s 'map(.passed) | add' a.json b.json)" 6 "trials passed over both runs"
assert_eq "$(used)" 0 "sandboxes open after both runs"
pass "two runs on one quota: a full quota is waited out (402 → retry), 6 of 6 trials passed, max $MAX2 open"
