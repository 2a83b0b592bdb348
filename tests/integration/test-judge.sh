#!/usr/bin/env bash
# Issue 23: [model] criteria judged, and a verdict that never passes what was not evaluated.
# The task is tests/tasks/slack-injection (every [code] criterion a prohibition the seed
# already satisfies, so only the judged one tells a good run from an empty one). The judge is
# a real HTTP server started here (tests/integration/scripted-judge.mjs: OpenAI's chat
# completions and Anthropic's Messages wire formats, scripted answers from the task's
# judge-rules.json) and the same script as a command judge. Each [model] path:
# - judged pass (the judgment recorded: api, model, temperature 0, prompt_sha256, verdict,
#   rationale), judged fail, an agent that does nothing (FAIL, never PASS);
# - no judge: INCOMPLETE, exit 6; --code-only: the [code] criteria decide, said so;
# - the judge unreachable, answering garbage, down, past its timeout (HTTP and command),
#   refusing the key: error, INCOMPLETE; 503s and timeouts retried with backoff;
# - the command form and the Anthropic form;
# - `pome eval` reproduces verdict.json byte for byte from the recorded judgments, asks
#   again with --rejudge, and refuses a recorded judgment made on other evidence;
# - pomed with judge: in pomed.conf grades at finalize (pome run show and GET …/verdict
#   agree), refuses a pome run --judge, and a judge down there is INCOMPLETE too.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
command -v node >/dev/null || skip "node is not installed (the scripted judge)"
cd "$TMP"

T=$SRC/tests/tasks/slack-injection
JUDGE_JS=$SRC/tests/integration/scripted-judge.mjs
RULES=$T/judge-rules.json
echo "sk-judge-test-key" >key
echo "sk-not-the-key" >wrong-key
node "$JUDGE_JS" serve --port-file port --log judge.log --key sk-judge-test-key --rules "$RULES" \
        >judge.out 2>&1 &
EXTRA_PIDS+=($!)
for _ in $(seq 1 100); do [[ -s port ]] && break; sleep 0.05; done
[[ -s port ]] || fail "the scripted judge did not start: $(cat judge.out)"
URL=http://127.0.0.1:$(cat port)
mode() { curl -fsS -X POST --data-binary "$1" "$URL/__mode" >/dev/null; }
OPENAI=(--judge "openai:$URL/v1" --judge-model scripted-1 --judge-key-file key)
MODEL='.criteria[] | select(.kind == "model")'

# run NAME AGENT [ARGS…]: pome run --local of the task into runs/, the exit status in RC,
# the verdict in V (its file) and the run directory in D.
run() {
        local name=$1 agent=$2
        shift 2
        set +e
        POME_API_URL=http://127.0.0.1:1 "$POME" run "$T/task.md" --local --out runs --json "$@" \
                -- "$agent" >"$name.json" 2>"$name.err"
        RC=$?
        set -e
        D=$(jq -r '.trials[0].run_dir // empty' "$name.json")
        [[ -n $D ]] || fail "$name: no run directory (exit $RC): $(cat "$name.err")"
        V=$D/verdict.json
}
model() { jq -r "$MODEL | $1" "$V"; }

# ---- judged pass over HTTP (OpenAI's wire format): the judgment is recorded
run pass "$T/good.sh" "${OPENAI[@]}"
assert_eq "$RC" 0 "judged pass: exit ($(cat pass.err))"
assert_eq "$(jq -r .state "$V")" pass "judged pass: state"
assert_eq "$(model .status)" passed "judged pass: the [model] criterion"
assert_eq "$(model .judgment.api)/$(model .judgment.model)/$(model .judgment.temperature)" \
        "openai/scripted-1/0" "judged pass: api, model, temperature"
assert_eq "$(model .judgment.verdict)" pass "judged pass: the recorded verdict"
[[ $(model .judgment.prompt_sha256) =~ ^[0-9a-f]{64}$ ]] || fail "judged pass: no prompt_sha256"
[[ -n $(model .judgment.rationale) && -n $(model .judgment.answer) ]] || fail "judged pass: no rationale or answer"
last=$(tail -1 judge.log)
assert_eq "$(jq -r '"\(.api) \(.model) \(.temperature)"' <<<"$last")" "openai scripted-1 0" "the request the judge got"
jq -e '.system_len > 100 and (.user | contains("The criterion to judge")) and (.user | contains("4.2 release"))' \
        <<<"$last" >/dev/null || fail "the judge's request lacks the instructions or the evidence: $last"
# the question's hash is what was asked: the same bytes hash to it
[[ -s $D/agent-reply.txt ]] || fail "judged pass: no agent-reply.txt in the run directory"
grep -q "prompt injection" "$D/agent-reply.txt" || fail "agent-reply.txt is not the agent's reply"
# pome eval: the recorded judgment stands, with no judge at all, byte for byte
"$POME" eval "$D" >eval.out || fail "pome eval of the judged run: exit $? ($(cat eval.out))"
grep -q "identical (byte for byte)" eval.out || fail "pome eval did not reproduce verdict.json: $(cat eval.out)"
"$POME" eval "$D" --json | cmp - "$V" || fail "pome eval --json differs from verdict.json"
asked=$(wc -l <judge.log)
"$POME" eval "$D" "${OPENAI[@]}" --json | cmp - "$V" || fail "pome eval with a judge differs"
assert_eq "$(wc -l <judge.log)" "$asked" "a recorded judgment asked again"
GOOD=$D
pass "judged pass over HTTP: recorded, and pome eval reproduces it byte for byte without asking"

# ---- judged fail, and an agent that does nothing: FAIL, never PASS
run fail "$T/bad.sh" "${OPENAI[@]}"
assert_eq "$RC" 1 "judged fail: exit"
assert_eq "$(jq -r .state "$V")/$(model .status)" fail/failed "judged fail: state and criterion"
run idle /bin/true "${OPENAI[@]}"
assert_eq "$RC" 1 "a do-nothing agent: exit"
assert_eq "$(jq -r .state "$V")/$(model .status)" fail/failed "a do-nothing agent: state and criterion"
assert_eq "$(jq -r '[.criteria[] | select(.kind == "code" and .status == "passed")] | length' "$V")" 2 \
        "a do-nothing agent passes both prohibitions"
pass "judged fail: the defect fails; doing nothing fails (its [code] prohibitions pass, the judge does not)"

# ---- no judge: INCOMPLETE, its own exit status; doing nothing is not a pass either
run nojudge "$T/good.sh"
assert_eq "$RC" 6 "no judge: exit"
assert_eq "$(jq -r .state "$V")/$(jq -r .passed "$V")" incomplete/false "no judge: state"
assert_eq "$(model .status)" skipped "no judge: the [model] criterion"
grep -q "no judge is configured" <<<"$(model .reason)" || fail "no judge: reason $(model .reason)"
assert_eq "$(jq -r .counts.not_evaluated "$V")" 1 "no judge: not evaluated"
assert_eq "$(jq -r .result nojudge.json)" incomplete "no judge: pome run's result"
POME_API_URL=http://127.0.0.1:1 "$POME" run "$T/task.md" --local --out runs -- /bin/true >idle-text.out 2>&1 &&
        fail "a do-nothing agent without a judge exited 0"
grep -q "Verdict: INCOMPLETE" idle-text.out || fail "the table does not say INCOMPLETE: $(cat idle-text.out)"
# eval of the good run with its judgment gone from the record: INCOMPLETE too, exit 6
mkdir unjudged && cp -r "$GOOD"/. unjudged/ && rm unjudged/verdict.json
set +e
"$POME" eval unjudged >unjudged.out
rc=$?
set -e
assert_eq "$rc" 6 "pome eval with nothing recorded and no judge: exit"
pass "no judge: INCOMPLETE (exit 6), for pome run and pome eval; a do-nothing agent is not passed"

# ---- --code-only: chosen, and said
run codeonly "$T/good.sh" --code-only
assert_eq "$RC" 0 "--code-only: exit"
assert_eq "$(jq -r .code_only "$V")/$(jq -r .state "$V")/$(model .status)" true/pass/skipped "--code-only"
grep -q -- "--code-only" <<<"$(model .reason)" || fail "--code-only: reason $(model .reason)"
"$POME" eval "$D" --json | cmp - "$V" || fail "pome eval of a --code-only run differs"
set +e
POME_API_URL=http://127.0.0.1:1 "$POME" run "$T/task.md" --local --code-only "${OPENAI[@]}" -- /bin/true 2>both.err
rc=$?
set -e
assert_eq "$rc" 2 "--code-only with --judge: a usage error"
pass "--code-only: the [code] criteria decide, the verdict says code_only, pome eval keeps it"

# ---- a judge that cannot be asked: error, INCOMPLETE — never a pass
run unreachable "$T/good.sh" --judge openai:http://127.0.0.1:1/v1 --judge-model scripted-1
assert_eq "$RC/$(jq -r .state "$V")/$(model .status)" 6/incomplete/error "unreachable judge"
grep -q "could not be reached" <<<"$(model .reason)" || fail "unreachable judge: reason $(model .reason)"
grep -q "could not be reached" <<<"$(model .judgment.error)" || fail "unreachable judge: no judgment.error"
mode garbage
run garbage "$T/good.sh" "${OPENAI[@]}"
assert_eq "$RC/$(jq -r .state "$V")/$(model .status)" 6/incomplete/error "a judge answering garbage"
grep -q "holds no JSON object" <<<"$(model .reason)" || fail "garbage: reason $(model .reason)"
mode down
before=$(wc -l <judge.log)
run down "$T/good.sh" "${OPENAI[@]}"
assert_eq "$RC/$(model .status)" 6/error "a judge answering 503"
grep -q "answered HTTP 503" <<<"$(model .reason)" || fail "down: reason $(model .reason)"
grep -q "after 3 attempts" <<<"$(model .reason)" || fail "down: not retried: $(model .reason)"
mode "flaky:2"
run flaky "$T/good.sh" "${OPENAI[@]}"
assert_eq "$RC/$(model .status)" 0/passed "a judge that answers 503 twice, then well (retried)"
mode "slow:2500"
run slow "$T/good.sh" "${OPENAI[@]}" --judge-timeout 1
assert_eq "$RC/$(model .status)" 6/error "a judge slower than its timeout"
grep -q "Timeout was reached\|timed out" <<<"$(model .reason)" || fail "slow: reason $(model .reason)"
grep -q "after 3 attempts" <<<"$(model .reason)" || fail "slow: not retried: $(model .reason)"
mode rules
run hang "$T/good.sh" --judge "command:sleep 30" --judge-timeout 1
assert_eq "$RC/$(model .status)" 6/error "a command judge past its timeout"
grep -q "gave no answer within 1 s and was killed" <<<"$(model .reason)" || fail "hang: reason $(model .reason)"
run wrongkey "$T/good.sh" --judge "openai:$URL/v1" --judge-model scripted-1 --judge-key-file wrong-key
assert_eq "$RC/$(model .status)" 6/error "a judge refusing the key"
grep -q "HTTP 401" <<<"$(model .reason)" || fail "wrong key: reason $(model .reason)"
grep -q "sk-not-the-key" "$V" && fail "the key reached the verdict"
mode echo-secret
run secret "$T/good.sh" "${OPENAI[@]}"
grep -q "ghp_abcdefghij" "$V" && fail "a token the judge repeated reached verdict.json"
grep -q "REDACTED" <<<"$(model .judgment.rationale)" || fail "the judge's token was not redacted: $(model .judgment.rationale)"
mode rules
pass "the judge unreachable, garbage, down, too slow, refusing the key: error and INCOMPLETE; 503s and timeouts retried; its words redacted"

# ---- the Anthropic Messages API, and the command form
run anthropic "$T/good.sh" --judge "anthropic:$URL" --judge-model claude-scripted --judge-key-file key
assert_eq "$RC/$(model .judgment.api)/$(model .status)" 0/anthropic/passed "the Anthropic form"
assert_eq "$(tail -1 judge.log | jq -r '"\(.api) \(.url)"')" "anthropic /v1/messages" "the Anthropic request"
CMD="command:node $JUDGE_JS command --rules $RULES"
run command "$T/good.sh" --judge "$CMD" --judge-model cmd-1
assert_eq "$RC/$(model .judgment.api)/$(model .judgment.model)/$(model .status)" 0/command/cmd-1/passed \
        "the command form: judged pass"
run command-bad "$T/bad.sh" --judge "$CMD"
assert_eq "$RC/$(model .status)" 1/failed "the command form: judged fail"
run command-down "$T/good.sh" --judge "command:node $JUDGE_JS command --rules $RULES --mode down"
assert_eq "$RC/$(model .status)" 6/error "the command form, down"
grep -q "exited with status 4" <<<"$(model .reason)" || fail "command down: reason $(model .reason)"
run command-garbage "$T/good.sh" --judge "command:node $JUDGE_JS command --mode garbage"
assert_eq "$RC/$(model .status)" 6/error "the command form, garbage"
pass "the Anthropic form and the command form judge the same way"

# ---- pome eval: --rejudge asks again; other evidence is not what was judged
cp -r "$GOOD" rejudge
mode garbage
set +e
"$POME" eval rejudge --rejudge "${OPENAI[@]}" >rejudge.out
rc=$?
set -e
mode rules
assert_eq "$rc" 6 "pome eval --rejudge with a judge answering garbage"
grep -q "differs" rejudge.out || fail "--rejudge did not ask again: $(cat rejudge.out)"
cp -r "$GOOD" moved
printf 'Nothing to report.\n' >moved/agent-reply.txt
set +e
"$POME" eval moved --json >moved.json
rc=$?
set -e
assert_eq "$rc" 6 "pome eval of other evidence, no judge"
jq -e "$MODEL | select(.status == \"skipped\" and (.reason | contains(\"other evidence\")))" moved.json >/dev/null ||
        fail "other evidence: $(jq -c "$MODEL" moved.json)"
"$POME" eval moved --json "${OPENAI[@]}" >moved2.json && fail "the changed reply was judged a pass"
jq -e "$MODEL | select(.status == \"failed\")" moved2.json >/dev/null || fail "other evidence, rejudged"
pass "pome eval: --rejudge asks again; a judgment is reused only for the question it answered"

# ---- pomed with a judge in pomed.conf: graded at finalize, every surface agrees
[[ $(id -u) -eq 0 ]] || { pass "(pomed part skipped: needs root)"; exit 0; }
start_pomed "judge:" "  api: openai" "  url: $URL/v1" "  model: scripted-pomed" "  key_file: $TMP/key" \
        "  timeout: 10" "  attempts: 2"
set +e
"$POME" run "$T/task.md" --out sandbox --json -- "$T/good.sh" >pomed-good.json 2>pomed-good.err
rc=$?
set -e
assert_eq "$rc" 0 "pomed's judge: the good run ($(tail -3 pomed-good.err))"
SID=$(jq -r .trials[0].session_id pomed-good.json)
D=$(jq -r .trials[0].run_dir pomed-good.json)
assert_eq "$(jq -r .trials[0].graded_by pomed-good.json)" pomed "who graded it"
assert_eq "$(jq -r "$MODEL | .judgment.model" "$D/verdict.json")" scripted-pomed "pomed's judge's model"
api GET "/v1/sandboxes/$SID/verdict"
assert_status 200 "GET …/verdict"
cmp <(jq -S . <<<"$BODY") <(jq -S . "$D/verdict.json") || fail "GET …/verdict differs from the run directory's"
api GET "/v1/sandboxes/$SID"
assert_jq .verdict.state pass "the record's verdict"
"$POME" run show "$SID" --json >show.json
assert_eq "$(jq -r .verdict.state show.json)" pass "pome run show"
"$POME" eval "$D" >pomed-eval.out || fail "pome eval of pomed's run: $(cat pomed-eval.out)"
grep -q "identical (byte for byte)" pomed-eval.out || fail "pome eval of pomed's run: $(cat pomed-eval.out)"
cmp "$D/agent-reply.txt" "$TMP/state/runs/$SID/agent-reply.txt" || fail "pomed's agent-reply.txt differs from pome's"
# an agent that finalizes its own run (finalize_run over MCP) and gives its reply there: the
# judge sees that reply, pome run collects the verdict and the reply pomed graded with
cat >self-finalize.sh <<EOF
#!/usr/bin/env bash
set -euo pipefail
reply=\$("$T/good.sh")
printf '%s\n' "\$reply"
jq -nc --arg r "\$reply" '{jsonrpc: "2.0", id: 1, method: "tools/call",
        params: {name: "finalize_run", arguments: {agent_reply: \$r}}}' |
        curl -fsS -H "Authorization: Bearer \$POME_AUTH_TOKEN" -H 'Content-Type: application/json' \\
                -H 'Accept: application/json, text/event-stream' --data-binary @- "\$POME_SLACK_MCP_URL" >&2
EOF
chmod +x self-finalize.sh
"$POME" run "$T/task.md" --out sandbox --json -- ./self-finalize.sh >self.json 2>self.err ||
        fail "an agent that finalized itself: $(cat self.err)"
D=$(jq -r .trials[0].run_dir self.json)
# the answer went to its stderr: the run directory's stderr.txt (a sealed agent writes nothing
# on the host)
assert_eq "$(jq -r .result.structuredContent.verdict.state "$D/stderr.txt")" pass "finalize_run's answer"
assert_eq "$(jq -r .state "$D/verdict.json")/$(jq -r "$MODEL | .status" "$D/verdict.json")" pass/passed \
        "the self-finalized run, judged on the reply it gave finalize_run"
grep -q "prompt injection" "$D/agent-reply.txt" || fail "the collected agent-reply.txt is not the one given"
"$POME" eval "$D" --json | cmp - "$D/verdict.json" || fail "pome eval of the self-finalized run"
grep -q "finalized the sandbox itself" self.err || fail "pome run does not say the agent finalized: $(cat self.err)"
set +e
"$POME" run "$T/task.md" --out sandbox "${OPENAI[@]}" -- "$T/good.sh" >/dev/null 2>judge-flag.err
rc=$?
set -e
assert_eq "$rc" 2 "pome run --judge against pomed"
grep -q "pomed's own judge" judge-flag.err || fail "the refusal does not say why: $(cat judge-flag.err)"
set +e
"$POME" run "$T/task.md" --out sandbox --json -- /bin/true >pomed-idle.json 2>/dev/null
rc=$?
set -e
assert_eq "$rc/$(jq -r .result pomed-idle.json)" 1/fail "pomed: a do-nothing agent"
set +e
"$POME" run "$T/task.md" --out sandbox --json --code-only -- "$T/good.sh" >pomed-code.json 2>/dev/null
rc=$?
set -e
D=$(jq -r .trials[0].run_dir pomed-code.json)
assert_eq "$rc/$(jq -r .code_only "$D/verdict.json")" 0/true "pomed: --code-only"
mode down
set +e
"$POME" run "$T/task.md" --out sandbox --json -- "$T/good.sh" >pomed-down.json 2>/dev/null
rc=$?
set -e
mode rules
D=$(jq -r .trials[0].run_dir pomed-down.json)
assert_eq "$rc/$(jq -r .state "$D/verdict.json")/$(jq -r "$MODEL | .status" "$D/verdict.json")" 6/incomplete/error \
        "pomed: its judge down"
assert_eq "$(used)" 0 "sandboxes open after the runs"
pass "pomed's judge grades at finalize; GET …/verdict, pome run show and pome eval agree; --judge is refused there"
