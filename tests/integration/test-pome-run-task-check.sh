#!/usr/bin/env bash
# A [code] criterion that binds no check is found before the agent runs: `pome run` refuses
# the task (exit 2, every such criterion named file:line with the binder's reason, near
# misses included) before it creates anything, unless --allow-unmatched, which warns and
# runs it, graded unmatched. `pome eval` and pomed keep grading such a task unmatched.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
cd "$TMP"

cat >t.md <<'EOF'
# Two sentences no check has

## Prompt
Triage acme/api#1.

## Success Criteria
- [code:github] Issue #1 in `acme/api` is assigned to `alice`
- [code:github] Issue #1 in `acme/api` is in state opened
- [model] The comment is polite.
- [code] The moon is made of cheese

## Config
```yaml
twins: [github, slack]
timeout: 20
```
EOF
cat >agent.sh <<'EOF'
#!/usr/bin/env bash
cat >/dev/null
echo ran >>"$AGENT_MARK"
EOF
chmod +x agent.sh
# the mark lands in the working directory itself (--workdir-rw): the host sees it
export AGENT_MARK=$TMP/agent-ran

# refused: nothing started (no pomed is even asked: the URL below answers nothing)
set +e
POME_API_URL=http://127.0.0.1:1 "$POME" run t.md --workdir-rw --out runs -- ./agent.sh >out.txt 2>err.txt
rc=$?
set -e
assert_eq "$rc" 2 "exit status of a task with unbindable criteria"
grep -qx 'pome run: t.md:8: the sentence has the shape of github.issue-state .* but parameter state must be one of open, closed, got "opened"' err.txt ||
        fail "the near miss is not named with its line and reason: $(cat err.txt)"
grep -qx "pome run: t.md:10: no check of any of the task's 2 twins has a sentence template this matches" err.txt ||
        fail "the untagged sentence is not named: $(cat err.txt)"
grep -q -- '--allow-unmatched' err.txt || fail "the refusal does not say how to run anyway: $(cat err.txt)"
assert_eq "$(grep -c '^pome run: t.md:' err.txt)" 2 "problems listed"
[[ ! -e runs && ! -e $AGENT_MARK ]] || fail "something ran or a run directory was made for a refused task"
POME_API_URL=http://127.0.0.1:1 "$POME" run t.md --local --workdir-rw --out runs -- ./agent.sh >/dev/null 2>&1 &&
        fail "--local ran a task with unbindable criteria"
[[ ! -e runs && ! -e $AGENT_MARK ]] || fail "--local ran the refused task"
pass "unbindable criteria: exit 2 before anything starts, both named file:line with the binder's reason"

# --allow-unmatched: warned, run, graded unmatched; pome eval regrades it the same
set +e
POME_API_URL=http://127.0.0.1:1 "$POME" run t.md --local --workdir-rw --allow-unmatched --out runs --json -- ./agent.sh \
        >allow.json 2>allow.err
rc=$?
set -e
assert_eq "$rc" 6 "exit status of the --allow-unmatched run (unmatched criteria: INCOMPLETE)"
[[ -e $AGENT_MARK ]] || fail "the agent did not run with --allow-unmatched"
assert_eq "$(grep -c '^pome run: warning: t.md:\(8\|10\): .*(graded unmatched: the verdict will be INCOMPLETE)$' allow.err)" 2 \
        "warnings of --allow-unmatched: $(cat allow.err)"
RUN=$(jq -r '.trials[0].run_dir' allow.json)
assert_eq "$(jq -r '[.criteria[] | select(.status == "unmatched") | .line] | join(",")' "$RUN/verdict.json")" \
        "8,10" "unmatched criteria in the verdict"
set +e
"$POME" eval "$RUN" --json >eval.json
rc=$?
set -e
assert_eq "$rc" 6 "pome eval of a run with unmatched criteria grades it (INCOMPLETE), no refusal"
cmp eval.json "$RUN/verdict.json" || fail "pome eval differs from the run's verdict.json"
pass "--allow-unmatched: warned, ran, graded unmatched; pome eval regrades it, byte for byte"

# pomed takes such a task at create and grades it unmatched at finalize
if [[ $(id -u) -eq 0 ]]; then
        start_pomed
        api POST /v1/sandboxes "$(jq -n --rawfile t t.md '{twins: ["github", "slack"], task_markdown: $t}')"
        assert_status 201 "create with a task whose criteria bind nothing"
        SID=$(jq -r .session_id <<<"$BODY")
        api POST "/v1/sandboxes/$SID/finalize"
        assert_status 200 "finalize"
        api GET "/v1/sandboxes/$SID/verdict"
        assert_jq '[.criteria[] | select(.status == "unmatched") | .line] | join(",")' "8,10" "pomed's verdict"
        pass "pomed: no refusal at create, the criteria graded unmatched at finalize"
fi

# a task's own warnings are said once, naming the user's file, not again as the run
# directory's task.md (the verdict still carries them, as pomed's does)
cat >w.md <<'EOF2'
# A task with a key pome does not know

## Prompt
Assign acme/api#1 to alice.

## Success Criteria
- [code:github] Issue #1 in `acme/api` is assigned to `alice`
- a note, not a criterion

## Config
```yaml
twins: [github]
model: opus
```
EOF2
set +e
POME_API_URL=http://127.0.0.1:1 "$POME" run w.md --local --workdir-rw --out runs-w -- ./agent.sh >w.out 2>w.err
set -e
for what in 'unknown ## Config key "model" ignored' 'not a criterion: no \[code\] or \[model\] marker'; do
        assert_eq "$(cat w.out w.err | grep -c "$what")" 1 "times the warning '$what' is printed"
done
grep -qx 'pome run: warning: w.md:13: unknown ## Config key "model" ignored' w.err ||
        fail "the warning does not name the user's file: $(cat w.out w.err)"
grep -qx 'pome run: warning: w.md:8: not a criterion: no \[code\] or \[model\] marker; it is not graded' w.err ||
        fail "the list item's warning does not name the user's file: $(cat w.err)"
W=$(ls -d runs-w/ses_*)
assert_eq "$(jq -r '.warnings | join("|")' "$W/verdict.json")" \
        'task.md:13: unknown ## Config key "model" ignored|task.md:8: not a criterion: no [code] or [model] marker; it is not graded' \
        "the verdict's warnings"
pass "task warnings: printed once, naming w.md, kept in verdict.json"
