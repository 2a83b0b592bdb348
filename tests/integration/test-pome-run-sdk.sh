#!/usr/bin/env bash
# The triage example's SDK agent, examples/triage/good-agent.mjs: @octokit/rest and
# @slack/web-api, unmodified, loaded from tests/conformance/node_modules, against a real
# pomed through `pome run` (and --local): it passes, graded by pomed, with the same
# verdict as the shell reference agent's.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
command -v node >/dev/null || skip "node is not installed"
[[ -d $SRC/tests/conformance/node_modules/@octokit/rest && -d $SRC/tests/conformance/node_modules/@slack/web-api ]] ||
        skip "SDK clients not installed: run 'npm ci' in tests/conformance (scripts/test.sh does)"
start_pomed
cd "$TMP"

TRIAGE=$SRC/examples/triage
"$POME" run "$TRIAGE/task.md" --code-only --out runs --json -- node "$TRIAGE/good-agent.mjs" >sdk.json 2>sdk.err ||
        fail "the SDK agent's run exited $?: $(cat sdk.err) $(cat runs/*/stderr.txt 2>/dev/null)"
D=$(jq -r '.trials[0].run_dir' sdk.json)
assert_eq "$(jq -r .result sdk.json)" pass "the SDK agent's result"
assert_eq "$(jq -r .trials[0].graded_by sdk.json)" pomed "who graded it"
grep -q '^told #general: acme/api#1 was triaged and assigned to alice.$' "$D/stdout.txt" ||
        fail "the SDK agent's output: $(cat "$D/stdout.txt" "$D/stderr.txt")"
# the vendors' clients announce themselves on the tape
jq -e 'select(.request_headers["user-agent"] | test("octokit"; "i"))' "$D/github.tape.jsonl" >/dev/null ||
        fail "no Octokit user agent on the GitHub tape"
jq -e 'select(.request_headers["user-agent"] | test("slack"; "i"))' "$D/slack.tape.jsonl" >/dev/null ||
        fail "no @slack/web-api user agent on the Slack tape"
"$POME" run "$TRIAGE/task.md" --code-only --out runs-sh --json -- "$TRIAGE/good-agent.sh" >sh.json 2>sh.err ||
        fail "the shell agent's run exited $?"
assert_eq "$(jq -c '[.criteria[] | {line, status}]' "$D/verdict.json")" \
        "$(jq -c '[.criteria[] | {line, status}]' "$(jq -r '.trials[0].run_dir' sh.json)/verdict.json")" \
        "SDK vs shell agent verdicts"
pass "good-agent.mjs (official SDKs) passes in a sandbox, graded by pomed, as the shell agent does"

"$POME" run "$TRIAGE/task.md" --code-only --local --out runs-local --quiet -- node "$TRIAGE/good-agent.mjs" >local.out 2>local.err ||
        fail "the SDK agent's --local run exited $?: $(cat local.err)"
grep -q '^pass: ' local.out || fail "--local SDK run: $(cat local.out)"
pass "good-agent.mjs passes with --local too"
