#!/usr/bin/env bash
# A finalize grades in a child process, off pomed's loop: while a big run is being graded
# another sandbox is served, the finalizing sandbox's twins take no more calls (410
# "finalizing": its worlds and tapes are what the run ends with), a second finalize is
# refused, and the verdict still lands in the record.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
command -v python3 >/dev/null || skip "python3 is not installed (builds the big seed)"
start_pomed "limits:" "  max_body: 16M" "  start_timeout: 30s"

# a big world: grading loads it twice (seed and final) and walks it per criterion
python3 - "$TMP/big.json" <<'PY'
import json, sys
issues = [{"number": i, "title": "issue %d" % i, "body": "x" * 600, "labels": ["bug"]}
          for i in range(1, 3001)]
seed = {"users": [{"login": "alice"}],
        "repositories": [{"owner": "acme", "name": "big", "collaborators": ["alice"],
                          "issues": issues}]}
json.dump(seed, open(sys.argv[1], "w"))
PY
TASK=$(cat <<'EOF'
# Label the big repository

## Prompt
Assign issue #1 of acme/big to alice.

## Success Criteria
- [code:github] Issue #1 in `acme/big` is assigned to `alice`
- [code:github always-scored] No new issues were created in `acme/big`
- [code:github] No new labels were created in `acme/big`

## Config
```yaml
twins: [github]
```
EOF
)
jq -n --rawfile task <(printf '%s' "$TASK") --slurpfile seed "$TMP/big.json" \
        '{twins: ["github"], task_markdown: $task, seeds: {github: $seed[0]}}' >"$TMP/create.json"
api POST /v1/sandboxes "@$TMP/create.json"
assert_status 201 "create the big sandbox"
A=$(jq -r .session_id <<<"$BODY")
A_TOKEN=$(jq -r .session_token <<<"$BODY")
A_GH=$(jq -r .per_twin.github.rest_url <<<"$BODY")
twin_call POST "$A_GH/repos/acme/big/issues/1/assignees" "$A_TOKEN" '{"assignees":["alice"]}'
assert_status 201 "assign in the big sandbox"

create_sandbox slack
B_SL=$(rest_url slack)

# finalize A in the background; meanwhile B is served and A refuses calls
curl -s -o "$TMP/fin.json" -w '%{http_code}' -X POST -H "Authorization: Bearer $API_KEY" \
        "$CONTROL/v1/sandboxes/$A/finalize" >"$TMP/fin.code" &
FIN=$!
served=0 refused=0 twice=0
for _ in $(seq 400); do
        kill -0 "$FIN" 2>/dev/null || break
        twin_call POST "$B_SL/auth.test" "$TOKEN"
        [[ $STATUS == 200 ]] && served=$((served + 1))
        twin_call GET "$A_GH/repos/acme/big/issues/1" "$A_TOKEN"
        if [[ $STATUS == 410 ]] && [[ $(jq -r .error.details.reason <<<"$BODY") =~ ^(finalizing|finalized)$ ]]; then
                refused=$((refused + 1))
        fi
        api POST "/v1/sandboxes/$A/finalize"
        [[ $STATUS == 409 ]] && twice=$((twice + 1))
done
wait "$FIN"
assert_eq "$(cat "$TMP/fin.code")" 200 "the finalize of the big sandbox"
((served > 0)) || fail "no call of the other sandbox was served while the big one was being finalized"
((refused > 0)) || fail "the finalizing sandbox never refused a call with 410"
((twice > 0)) || fail "a second finalize was never refused while the first ran"
assert_eq "$(jq -r .state "$TMP/fin.json")" done "state after finalize"
assert_eq "$(jq -r .verdict.state "$TMP/fin.json")" pass "the verdict in the finalize answer"
[[ -s $TMP/state/runs/$A/verdict.json && -s $TMP/state/runs/$A/summary.md ]] ||
        fail "verdict.json or summary.md is missing"
grep -q "graded: pass (task \"Label the big repository\", [0-9]* ms in a child" "$TMP/pomed.log" ||
        fail "the log does not say the grading ran in a child: $(grep graded "$TMP/pomed.log")"
pass "a big run graded in a child: the other sandbox served $served calls meanwhile; the finalizing one refused $refused; a second finalize refused $twice times"

# the grading child is gone (reaped), and so is every pod of A
[[ -z $(pgrep -P "$POMED_PID" -f pomed 2>/dev/null || true) ]] || fail "a grading child of pomed is left"
pass "no grading child is left"
