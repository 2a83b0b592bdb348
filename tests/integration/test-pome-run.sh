#!/usr/bin/env bash
# `pome run` end to end against a real pomed, real pods and real agents as processes: the
# triage example's reference agent passes; its committed defect fails with the Slack
# criterion as the only failure and an evidence pointer that resolves in the run
# directory's final state; `pome eval` reproduces both verdict.json files byte for byte
# (and pomed's own); --local gives the same statuses; a malformed task is exit 2 naming
# file:line before anything starts; --keep leaves the sandbox open; `pome run show`;
# `pome checks` lists slack.no-new-messages.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
start_pomed

TRIAGE=$SRC/examples/triage
cd "$TMP"

# pointer_get FILE POINTER: the value an RFC 6901 JSON Pointer names in FILE (null if none)
pointer_get() {
        jq --arg p "$2" 'getpath($p | if . == "" then [] else
                (ltrimstr("/") | split("/") | map(gsub("~1"; "/") | gsub("~0"; "~") | (tonumber? // .))) end)' "$1"
}
# statuses VERDICT: one line per criterion, "line status scored"
statuses() { jq -r '.criteria[] | "\(.line) \(.status) \(.scored)"' "$1"; }

# ---- pome checks: the linked vocabulary, no pomed needed
POME_API_URL=http://127.0.0.1:1 "$POME" checks --twin slack --format json >checks.json ||
        fail "pome checks --twin slack --format json"
jq -e '.checks | map(.id) | index("slack.no-new-messages")' checks.json >/dev/null ||
        fail "slack.no-new-messages is not listed: $(jq -c '[.checks[].id]' checks.json)"
assert_eq "$(jq -r '[.checks[].twin] | unique | join(",")' checks.json)" slack "twins listed for --twin slack"
assert_eq "$(jq -r '.checks[] | select(.id == "slack.no-new-messages") | .substrate' checks.json)" "seed+final" "its substrate"
"$POME" checks --twin github | grep -qF 'Issue #{issue} in `{repo}` is assigned to `{login}`' ||
        fail "the text listing lacks github.issue-assignee's template"
set +e
"$POME" checks --twin gitlab >/dev/null 2>&1
rc=$?
set -e
assert_eq "$rc" 2 "pome checks for an unknown twin"
pass "pome checks: slack.no-new-messages listed, templates shown, unknown twin exit 2"

# ---- a malformed task: exit 2, file:line, nothing started
mkdir bad
cat >bad/task.md <<'EOF'
# Broken

## Prompt
Do it.

## Success Criteria
- [code:github] Issue #1 in `acme/api` is assigned to `alice`

## Config
```yaml
twins: [github, gitlab]
```
EOF
set +e
"$POME" run bad/task.md --out runs-bad -- "$TRIAGE/good-agent.sh" >bad.out 2>bad.err
rc=$?
set -e
assert_eq "$rc" 2 "exit status of a malformed task"
grep -qE '^pome run: bad/task\.md:[0-9]+: .*gitlab' bad.err || fail "the refusal does not name file:line: $(cat bad.err)"
[[ ! -e runs-bad ]] || fail "a run directory was made for a task that does not parse"
assert_eq "$(used)" 0 "sandboxes open after a refused task"
set +e
"$POME" run "$TRIAGE/task.md" --code-only >/dev/null 2>usage.err
rc=$?
set -e
assert_eq "$rc" 2 "pome run without an agent command"
grep -q 'after --\|AGENT_CMD' usage.err || fail "no hint about the agent command: $(cat usage.err)"
pass "malformed task: exit 2 with $(cut -d: -f2-3 bad.err | head -1 | tr -d ' '), no sandbox, no run directory"

# ---- the reference agent passes
"$POME" run "$TRIAGE/task.md" --code-only --out runs --json -- "$TRIAGE/good-agent.sh" >good.json 2>good.err ||
        fail "the good agent's run exited $?: $(cat good.err)"
GOOD=$(jq -r '.trials[0].run_dir' good.json)
GOOD_SID=$(jq -r '.trials[0].session_id' good.json)
assert_eq "$(jq -r .result good.json)" pass "the good run's result"
assert_eq "$(jq -r .trials[0].graded_by good.json)" pomed "who graded the good run"
for f in task.md github.seed.json slack.seed.json github.tape.jsonl slack.tape.jsonl \
        github.final.json slack.final.json verdict.json summary.md stdout.txt stderr.txt meta.json; do
        [[ -s $GOOD/$f || $f == stderr.txt ]] || fail "the run directory lacks $f"
done
cmp "$TRIAGE/task.md" "$GOOD/task.md" || fail "task.md is not the task file"
grep -q '^prompt: Triage the open bug acme/api#1' "$GOOD/stdout.txt" || fail "the agent did not get the prompt on stdin: $(cat "$GOOD/stdout.txt")"
assert_eq "$(jq -r .agent.exit_code "$GOOD/meta.json")" 0 "the agent's exit status in meta.json"
assert_eq "$(jq -r .session_id "$GOOD/meta.json")" "$GOOD_SID" "meta.json's session id"
assert_eq "$(jq -r '.agent.argv[0]' "$GOOD/meta.json")" "$TRIAGE/good-agent.sh" "meta.json's agent command"
assert_eq "$(wc -l <"$GOOD/github.tape.jsonl")" 3 "GitHub tape rows (read, assign, comment)"
assert_eq "$(jq -s '[.[].tool] | join(",")' -r "$GOOD/slack.tape.jsonl")" "slack_list_conversations,slack_send_message" "Slack tape"
api GET "/v1/sandboxes/$GOOD_SID"
assert_jq .state done "the good run's sandbox"
assert_eq "$(used)" 0 "sandboxes open after the run"
pass "good agent: exit 0, graded by pomed, the run directory complete, slot released"

# the agent's environment: the secrets file's variables, never the team key
cat >env-agent.sh <<'EOF'
#!/usr/bin/env bash
env | grep '^POME_' | cut -d= -f1 | sort | sed 's/^/name /'
printf 'url %s\n' "$POME_GITHUB_REST_URL"
cat >/dev/null
EOF
chmod +x env-agent.sh
POME_GITHUB_REST_URL=http://stale.invalid POME_RUN_DIR=/stale "$POME" run "$TRIAGE/task.md" --code-only --out runs-env --quiet -- ./env-agent.sh >/dev/null || true
ENVDIR=$(ls -d runs-env/*)
expected="POME_AGENT_TMP POME_AUTH_TOKEN POME_GITHUB_MCP_URL POME_GITHUB_REST_URL POME_GITHUB_TOKEN POME_SESSION_ID POME_SLACK_MCP_URL POME_SLACK_REST_URL POME_SLACK_TOKEN POME_SLACK_USER_TOKEN POME_TASK POME_TRIAL POME_TWIN_NAMES POME_TWIN_URL"
got=$(sed -n 's/^name //p' "$ENVDIR/stdout.txt" | grep -E '^POME_(API_KEY|AUTH_TOKEN|SESSION_ID|TWIN_|GITHUB_|SLACK_|STRIPE_|TASK|RUN_DIR|TRIAL|AGENT_TMP)' | xargs)
assert_eq "$got" "$(tr ' ' '\n' <<<"$expected" | sort | xargs)" "the agent's sandbox variables"
[[ $(sed -n 's/^url //p' "$ENVDIR/stdout.txt") == "$GATEWAY/github/s/$(basename "$ENVDIR")" ]] ||
        fail "POME_GITHUB_REST_URL is $(sed -n 's/^url //p' "$ENVDIR/stdout.txt"), not the sandbox's"
pass "agent environment: the secrets file's variables, POME_TASK/AGENT_TMP/TRIAL, no POME_API_KEY or POME_RUN_DIR"

# ---- the committed defect fails the Slack criterion, and only it
set +e
"$POME" run "$TRIAGE/task.md" --code-only --out runs --json -- "$TRIAGE/bad-agent.sh" >bad-agent.json 2>bad-agent.err
rc=$?
set -e
assert_eq "$rc" 1 "the bad agent's exit status"
BAD=$(jq -r '.trials[0].run_dir' bad-agent.json)
BAD_SID=$(jq -r '.trials[0].session_id' bad-agent.json)
assert_eq "$(jq -r .result bad-agent.json)" fail "the bad run's result"
failures=$(jq -c '[.criteria[] | select(.scored and .status != "passed") | {twin, check: .check.id, status}]' "$BAD/verdict.json")
assert_eq "$failures" '[{"twin":"slack","check":"slack.message-contains","status":"failed"}]' "the bad run's failures"
assert_eq "$(jq -r '[.criteria[] | select(.twin == "github" and .scored) | .status] | unique | join(",")' "$BAD/verdict.json")" passed "GitHub criteria of the bad run"
ptr=$(jq -r '.criteria[] | select(.check.id == "slack.message-contains") | .evidence_state_paths[0]' "$BAD/verdict.json")
[[ -n $ptr && $ptr != null ]] || fail "the failed criterion has no evidence pointer"
got=$(pointer_get "$BAD/slack.final.json" "$ptr")
[[ $got != null ]] || fail "evidence pointer $ptr does not resolve in slack.final.json"
assert_eq "$(jq -r '[.[].text] | join("|")' <<<"$got")" "morning team|morning :wave:" "what the pointer shows: #general holds only the greetings"
"$POME" run show "$BAD" >show-dir.txt || fail "pome run show RUN_DIR"
grep -q "slack.final.json#$ptr" show-dir.txt || fail "run show does not print the evidence pointer: $(cat show-dir.txt)"
pass "bad agent: exit 1, only slack.message-contains failed, evidence $ptr resolves to #general's messages"

# ---- pome eval reproduces verdict.json byte for byte, and pomed's own file
for d in "$GOOD" "$BAD"; do
        sid=$(basename "$d")
        "$POME" eval "$d" --json >"$TMP/eval.json" || [[ $d == "$BAD" ]] || fail "pome eval $d"
        cmp "$TMP/eval.json" "$d/verdict.json" || fail "pome eval of $sid differs from its verdict.json"
        cmp "$d/verdict.json" "$TMP/state/runs/$sid/verdict.json" || fail "$sid: verdict.json is not pomed's bytes"
        "$POME" eval "$d" >"$TMP/eval.txt" || true
        grep -q '^verdict.json: identical (byte for byte)$' "$TMP/eval.txt" || fail "pome eval $sid does not say identical: $(cat "$TMP/eval.txt")"
done
cp -r "$BAD" tampered
jq -c '.channels[0].messages += [{"ts":"1700009999.000100","user":"U_PRIMARY","text":"acme/api#1 triaged"}]' \
        "$BAD/slack.final.json" >tampered/slack.final.json
set +e
"$POME" eval tampered >tampered.txt
rc=$?
set -e
assert_eq "$rc" 0 "eval of a run whose final state now holds the message"
grep -q '^verdict.json: differs' tampered.txt || fail "eval does not report the difference: $(cat tampered.txt)"
grep -q '/criteria/3/status: "failed" → "passed"' tampered.txt || fail "the difference is not named: $(cat tampered.txt)"
pass "pome eval: both verdicts reproduced byte for byte (= pomed's files), a changed final state is named"

# ---- --local: the same verdict as the sandbox runs, no pomed needed
for agent in good bad; do
        set +e
        POME_API_URL=http://127.0.0.1:1 "$POME" run "$TRIAGE/task.md" --code-only --local --out local --json -- \
                "$TRIAGE/$agent-agent.sh" >"local-$agent.json" 2>"local-$agent.err"
        rc=$?
        set -e
        [[ $agent == good ]] && want=0 || want=1
        assert_eq "$rc" "$want" "exit status of the --local $agent agent"
        L=$(jq -r '.trials[0].run_dir' "local-$agent.json")
        [[ $agent == good ]] && S=$GOOD || S=$BAD
        assert_eq "$(statuses "$L/verdict.json")" "$(statuses "$S/verdict.json")" "--local vs sandbox criteria ($agent agent)"
        assert_eq "$(jq -r .graded_by "$L/meta.json")" pome "who graded the --local run"
        assert_eq "$(jq -r .mode "$L/meta.json")" local "meta.json mode"
        "$POME" eval "$L" --json >"$TMP/eval.json" || true
        cmp "$TMP/eval.json" "$L/verdict.json" || fail "pome eval of the --local $agent run"
        # Byte for byte too: a verdict holds statuses, reasons (counts, not ids or times),
        # pointers into worlds built by the same calls from the same seed, and tape row
        # counts; it would differ only by tape event ids (req_…, random), which a verdict
        # cites for tape checks alone, and this task has none.
        cmp "$L/verdict.json" "$S/verdict.json" ||
                fail "--local and sandbox verdict.json of the $agent agent differ: $(diff "$S/verdict.json" "$L/verdict.json" | head)"
done
POME_API_URL=http://127.0.0.1:1 "$POME" run "$TRIAGE/task.md" --code-only --local --trials 3 --out local-trials --json -- \
        "$TRIAGE/good-agent.sh" >local-trials.json 2>local-trials.err || fail "--local --trials 3: $(cat local-trials.err)"
assert_eq "$(jq -r '[.k, .passed, .pass_hat_k, (.trials | map(.session_id) | unique | length)] | join(",")' local-trials.json)" \
        "3,3,1,3" "--local --trials 3: k, passed, pass^k, distinct runs"
pass "--local: the same verdict as the sandbox runs (statuses, and byte for byte), for both agents; 3 local trials"

# ---- --keep: no verdict, the sandbox stays open, finalize later, collect, eval
"$POME" run "$TRIAGE/task.md" --code-only --keep --out kept -- "$TRIAGE/good-agent.sh" >keep.out 2>keep.err ||
        fail "--keep exited $?: $(cat keep.err)"
KEPT=$(ls -d kept/*)
KSID=$(basename "$KEPT")
grep -q "pome sandbox finalize $KSID" keep.out || fail "--keep does not say how to finalize: $(cat keep.out)"
grep -q "pome run collect $KSID $TMP/$KEPT" keep.out || fail "--keep does not say how to collect: $(cat keep.out)"
grep -q "No verdict" keep.out || fail "--keep does not say there is no verdict"
[[ ! -e $KEPT/verdict.json ]] || fail "--keep wrote a verdict"
assert_eq "$(jq -r .outcome "$KEPT/meta.json")" kept_open "meta.json outcome"
assert_eq "$(used)" 1 "sandboxes open after --keep"
api GET "/v1/sandboxes/$KSID"
assert_jq .state running "the kept sandbox"
set +e
"$POME" run collect "$KSID" "$KEPT" >collect-open.out 2>collect-open.err
rc=$?
set -e
assert_eq "$rc" 1 "collect of a sandbox still open"
grep -q "still open.*pome sandbox finalize $KSID" <(tr '\n' ' ' <collect-open.err) || fail "collect of an open sandbox: $(cat collect-open.err)"
"$POME" sandbox finalize "$KSID" --code-only >/dev/null || fail "finalize the kept sandbox"
# finalized but not collected: eval refuses rather than fail every criterion
set +e
"$POME" eval "$KEPT" >eval-kept.out 2>eval-kept.err
rc=$?
set -e
assert_eq "$rc" 2 "pome eval of a kept run not yet collected"
grep -q "left open by pome run --keep" eval-kept.err || fail "eval of a kept run: $(cat eval-kept.err)"
grep -q "pome run collect $KSID $KEPT" eval-kept.err || fail "eval does not say how to collect: $(cat eval-kept.err)"
[[ ! -s eval-kept.out ]] || fail "eval of a kept run printed a verdict: $(cat eval-kept.out)"
"$POME" run collect "$KSID" "$KEPT" >collect.out 2>collect.err || fail "pome run collect: $(cat collect.err)"
grep -q "Collected $KSID into $KEPT: 2 tapes, 2 final states, verdict.json (pass), summary.md" collect.out ||
        fail "collect's report: $(cat collect.out)"
for f in github.final.json slack.final.json verdict.json summary.md github.tape.jsonl slack.tape.jsonl; do
        [[ -s $KEPT/$f ]] || fail "collect left $f out"
done
assert_eq "$(jq -r '[.outcome, .graded_by, .verdict.state, .trial] | join(",")' "$KEPT/meta.json")" \
        "graded,pomed,pass,1" "meta.json after collect (the run's own fields kept)"
cmp "$KEPT/verdict.json" "$TMP/state/runs/$KSID/verdict.json" || fail "the collected verdict.json is not pomed's"
"$POME" eval "$KEPT" --json >eval-collected.json || fail "pome eval of the collected run: exit $?"
cmp eval-collected.json "$KEPT/verdict.json" || fail "pome eval of the collected run differs from pomed's verdict"
# into a new directory: what the API has; and never into another sandbox's run
"$POME" run collect "$KSID" fresh >fresh.out || fail "collect into a new directory"
grep -q "no task.md and no seeds" fresh.out || fail "collect into a new directory does not say what it lacks: $(cat fresh.out)"
cmp fresh/verdict.json "$KEPT/verdict.json" || fail "the fresh directory's verdict"
cmp fresh/slack.final.json "$KEPT/slack.final.json" || fail "the fresh directory's final state"
set +e
"$POME" run collect "$KSID" "$GOOD" >/dev/null 2>collect-other.err
rc=$?
set -e
assert_eq "$rc" 2 "collect into another sandbox's run directory"
grep -q "is the run directory of $GOOD_SID" collect-other.err || fail "collect into another run: $(cat collect-other.err)"
"$POME" run show "$KSID" >show-id.txt || fail "pome run show $KSID"
grep -q "Verdict: PASS" show-id.txt || fail "run show ID lacks the verdict: $(cat show-id.txt)"
grep -q "Summary:" show-id.txt || fail "run show ID lacks the summary"
"$POME" run show "$KSID" --json | jq -e '.verdict.passed == true and (.summary | length > 0)' >/dev/null ||
        fail "run show --json"
assert_eq "$(used)" 0 "sandboxes open after finalizing it"
pass "--keep: left open, no verdict; eval refuses it until pome run collect completes it, then reproduces pomed's bytes"
