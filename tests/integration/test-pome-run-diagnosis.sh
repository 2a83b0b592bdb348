#!/usr/bin/env bash
# Issue 23, "Diagnosis": what a user needs when a run goes wrong.
# - an agent that fails: pome run prints the last lines of its stderr and names the file
#   that holds all of it (and says when it wrote nothing);
# - a task file with several mistakes: every one is reported, each with file and line;
# - a sentence that binds no check: the nearest template, the difference marked;
# - pome eval refuses a run directory without the seeds its criteria compare with;
# - a prose ## Seed State: pome run refuses it without its sidecar (naming the line);
#   pomed refuses a create that gives no seed for it, and takes one whose seeds cover
#   every twin, and grades it.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
cd "$TMP"
TRIAGE=$SRC/examples/triage
export POME_API_URL=http://127.0.0.1:1

# ---- an agent that crashes: its stderr's end, and where the rest is
cat >crash.sh <<'EOF'
#!/usr/bin/env bash
cat >/dev/null
for i in $(seq 1 15); do echo "trace line $i" >&2; done
echo "Traceback: KeyError 'POME_MISSING'" >&2
exit 2
EOF
chmod +x crash.sh
set +e
"$POME" run "$TRIAGE/task.md" --local --code-only --out runs -- ./crash.sh >crash.out 2>crash.err
rc=$?
set -e
[[ $rc -ne 0 ]] || fail "a crashing agent's run passed"
grep -q "the agent exited with status 2" crash.out || fail "the exit status is not said: $(cat crash.out)"
grep -q "^pome run: the agent's stderr ends with:$" crash.err || fail "no stderr tail: $(cat crash.err)"
grep -q "^  | Traceback: KeyError 'POME_MISSING'$" crash.err || fail "the tail lacks the last line: $(cat crash.err)"
grep -q "^  | trace line 7$" crash.err || fail "the tail lacks the 10th line from the end"
grep -q "trace line 6$" crash.err && fail "the tail is longer than 10 lines"
D=$(ls -d runs/ses_*)
grep -qx "pome run: all of it is in $TMP/$D/stderr.txt" crash.err || fail "the file is not named: $(cat crash.err)"
[[ $(wc -l <"$D/stderr.txt") -eq 16 ]] || fail "stderr.txt does not hold all of it"
cat >quiet.sh <<'EOF'
#!/usr/bin/env bash
exit 3
EOF
chmod +x quiet.sh
"$POME" run "$TRIAGE/task.md" --local --code-only --out runs-quiet -- ./quiet.sh >/dev/null 2>quiet.err || true
grep -q "the agent wrote nothing on its stderr" quiet.err || fail "an agent silent on stderr: $(cat quiet.err)"
"$POME" run "$TRIAGE/task.md" --local --code-only --out runs-ok -- "$TRIAGE/good-agent.sh" >/dev/null 2>ok.err ||
        fail "the good agent: $(cat ok.err)"
grep -q "stderr ends with" ok.err && fail "a tail printed for an agent that exited 0"
pass "a failing agent: the last 10 lines of its stderr and the file with all of it; nothing for one that succeeded"

# ---- every mistake of a task file, each with its line
cat >many.md <<'EOF'
# Many mistakes

## Prompt
Do it.

## Success Criteria
- [Code:github] Issue #1 in `acme/api` is assigned to `alice`
- [code:gitlab] Issue #1 in `acme/api` is assigned to `alice`
- [model always-scored] It is done.
- [code:github] Issue #1 in `acme/api` is assigned to `alice`

## Config
```yaml
twins: [github]
timeout: 0
```
EOF
set +e
"$POME" run many.md --local -- ./quiet.sh >/dev/null 2>many.err
rc=$?
set -e
assert_eq "$rc" 2 "a task with several mistakes"
for l in 7 8 9 15; do
        grep -q "^pome run: many.md:$l: " many.err || fail "the mistake on line $l is not reported: $(cat many.err)"
done
pass "a task file with four mistakes: all four reported, each with file:line"

# ---- a typo: the nearest template, the difference marked
sed 's/is assigned to `alice`/is assinged to `alice`/' "$TRIAGE/task.md" >typo.md
set +e
"$POME" run typo.md --local -- ./quiet.sh >/dev/null 2>typo.err
rc=$?
set -e
assert_eq "$rc" 2 "a task whose sentence has a typo"
grep -q 'did you mean: `Issue #{issue} in `{repo}` is assigned to `{login}``' typo.err ||
        fail "no nearest template: $(cat typo.err)"
grep -q '«assinged→assigned»' typo.err || fail "the difference is not marked: $(cat typo.err)"
pass "a typo in a sentence: did you mean the template, with «assinged→assigned»"

# ---- pome eval refuses a run directory without the seeds its criteria need
G=$(ls -d runs-ok/ses_*)
cp -r "$G" noseeds
rm noseeds/github.seed.json
set +e
"$POME" eval noseeds >noseeds.out 2>noseeds.err
rc=$?
set -e
assert_eq "$rc" 2 "pome eval of a run directory without github.seed.json"
grep -q "compares with its twin's seed, and no seed is known for it" noseeds.err ||
        fail "the refusal does not say why: $(cat noseeds.err)"
[[ ! -s noseeds.out ]] || fail "a verdict was printed for a run it cannot grade"
pass "pome eval refuses a run directory without the seed a criterion compares with (exit 2)"

# ---- a prose ## Seed State: refused without its sidecar, taken with it
cat >prose.md <<'EOF'
# Assign the bug

## Prompt
Assign acme/shop#4 to bob.

## Success Criteria
- [code:github] Issue #4 in `acme/shop` is assigned to `bob`

## Seed State
One repository, acme/shop, with an open issue #4 "Checkout is slow", unassigned. Users
alice and bob are its collaborators.
EOF
set +e
"$POME" run prose.md --local -- ./quiet.sh >/dev/null 2>prose.err
rc=$?
set -e
assert_eq "$rc" 2 "a prose seed without its sidecar"
grep -q "prose.md:9: ## Seed State is prose and there is no prose.seed.json" prose.err ||
        fail "the refusal does not name the line and the sidecar: $(cat prose.err)"
cat >prose.seed.json <<'EOF'
{"users": [{"login": "alice"}, {"login": "bob"}],
 "repositories": [{"owner": "acme", "name": "shop", "collaborators": ["alice", "bob"],
   "issues": [{"number": 4, "title": "Checkout is slow", "state": "open"}]}]}
EOF
cat >assign.sh <<'EOF'
#!/usr/bin/env bash
curl -fsS -X POST -H "Authorization: Bearer $POME_AUTH_TOKEN" -H 'Content-Type: application/json' \
        --data-binary '{"assignees":["bob"]}' "$POME_GITHUB_REST_URL/repos/acme/shop/issues/4/assignees" >/dev/null
EOF
chmod +x assign.sh
"$POME" run prose.md --local --out runs-prose -- ./assign.sh >/dev/null 2>prose-ok.err ||
        fail "a prose task with its sidecar: $(cat prose-ok.err)"
pass "a prose ## Seed State: refused without its sidecar (file:line), run with it"

[[ $(id -u) -eq 0 ]] || { pass "(pomed part skipped: needs root)"; exit 0; }
unset POME_API_URL
start_pomed
api POST /v1/sandboxes "$(jq -nc --rawfile t prose.md '{twins: ["github"], task_markdown: $t}')"
assert_status 422 "a prose task and no seed"
assert_jq .error.details.line 9 "the refusal's line"
[[ $(jq -r .error.message <<<"$BODY") == "task.md:9: ## Seed State is prose"* ]] || fail "the refusal: $BODY"
assert_eq "$(used)" 0 "slots after the refusal"
"$POME" run prose.md --out runs-pomed --json -- ./assign.sh >pomed.json 2>pomed.err ||
        fail "pome run of the prose task on pomed: $(cat pomed.err)"
assert_eq "$(jq -r '.trials[0].graded_by + " " + .result' pomed.json)" "pomed pass" "graded by pomed"
SID=$(jq -r .trials[0].session_id pomed.json)
"$POME" sandbox list --state all >list.txt
grep -E "^$SID .*pass 100%" list.txt >/dev/null || fail "pome sandbox list does not show the verdict: $(cat list.txt)"
pass "pomed: a prose task is refused without seeds (422, line 9), graded by pomed with the sidecar's"
