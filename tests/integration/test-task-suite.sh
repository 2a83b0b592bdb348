#!/usr/bin/env bash
# Issues 9 and 23: task files in hosted Pome's format (tests/tasks/<name>/task.md) that
# together use every check of every twin parse, bind every [code] criterion, and grade
# scripted agents correctly — their [model] criteria judged by a real HTTP judge
# (tests/integration/scripted-judge.mjs, the rules of each folder's judge-rules.json), which
# pomed is configured with (judge: in pomed.conf) and --local runs are given (--judge).
# Against a real pomed, for each task folder:
# - `pome run task.md --json -- good.sh` passes, every criterion passed ([code] ones bound to
#   a check, none unmatched or skipped; [model] ones judged), graded by pomed's finalize, and
#   `pome run show ID`, GET /v1/sandboxes/ID/verdict and the run directory's verdict.json
#   agree;
# - `pome run task.md --json -- bad.sh` fails, and the [code] criteria that fail are exactly
#   those listed in the folder's expect-bad-fail (one criterion sentence a line); every other
#   [code] criterion passed;
# - an agent that does nothing (/bin/true) does not pass;
# - with --local: good.sh gives the same status for every criterion, bad.sh fails, and an
#   agent that does nothing does not pass.
# Then: the check ids bound over the suite are exactly `pome checks --format json`'s ids
# minus tests/tasks/coverage-exceptions (so a new check without a task fails here, and so
# does an exception a task has come to use).
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
command -v node >/dev/null || skip "node is not installed (the scripted judge)"
SUITE=$SRC/tests/tasks
cd "$TMP"
rules=()
for f in "$SUITE"/*/judge-rules.json; do rules+=(--rules "$f"); done
node "$SRC/tests/integration/scripted-judge.mjs" serve --port-file judge-port --log judge.log "${rules[@]}" \
        >judge.out 2>&1 &
EXTRA_PIDS+=($!)
for _ in $(seq 1 100); do [[ -s judge-port ]] && break; sleep 0.05; done
[[ -s judge-port ]] || fail "the scripted judge did not start: $(cat judge.out)"
JUDGE_URL=http://127.0.0.1:$(cat judge-port)/v1
LOCAL_JUDGE=(--judge "openai:$JUDGE_URL" --judge-model scripted)
start_pomed "judge:" "  api: openai" "  url: $JUDGE_URL" "  model: scripted"
# statuses VERDICT_JSON: one line per criterion, "line status scored already_true_in_seed"
statuses() { jq -r '.criteria[] | "\(.line) \(.status) \(.scored) \(.already_true_in_seed)"' "$1"; }

POME_API_URL=http://127.0.0.1:1 "$POME" checks --format json >checks.json || fail "pome checks --format json"
jq -r '.checks[].id' checks.json | sort >all-ids
# (awk, not grep -v: a file of comments alone is no error)
awk '!/^#/ && NF {print $1}' "$SUITE/coverage-exceptions" | sort >exceptions
[[ -s all-ids ]] || fail "pome checks lists no check"
missing=$(comm -13 all-ids exceptions)
[[ -z $missing ]] || fail "coverage-exceptions names ids pome checks does not list: $missing"
: >bound-ids

n=0
for dir in "$SUITE"/*/; do
        name=$(basename "$dir")
        task=$dir/task.md
        [[ -f $task ]] || continue
        for f in good.sh bad.sh; do [[ -x $dir/$f ]] || fail "$name: $f is missing or not executable"; done
        [[ -s $dir/expect-bad-fail ]] || fail "$name: no expect-bad-fail (the criteria bad.sh must fail)"
        # every [model] criterion has its scripted judgment
        while IFS= read -r c; do
                jq -e --arg c "$c" 'map(select(.criterion == $c)) | length == 1' "$dir/judge-rules.json" >/dev/null 2>&1 ||
                        fail "$name: judge-rules.json has no rule for the [model] criterion: $c"
        done < <(sed -n 's/^- \[model[^]]*\] //p' "$task")
        n=$((n + 1))

        # ---- the passing agent
        "$POME" run "$task" --out "runs-$name" --json -- "$dir/good.sh" >"$name-good.json" 2>"$name-good.err" ||
                fail "$name: good.sh's run exited $?: $(tail -5 "$name-good.err"; jq -c '.trials[0].verdict.criteria[]? | select(.status != "passed") | {line, status, reason}' "$name-good.json" 2>/dev/null)"
        G=$(jq -r '.trials[0].run_dir' "$name-good.json")
        assert_eq "$(jq -r .result "$name-good.json")" pass "$name: the good run's result"
        assert_eq "$(jq -r .trials[0].graded_by "$name-good.json")" pomed "$name: who graded the good run"
        code=$(jq '[.criteria[] | select(.kind == "code")] | length' "$G/verdict.json")
        [[ $code -gt 0 ]] || fail "$name: the task has no [code] criterion"
        unbound=$(jq -c '[.criteria[] | select(.kind == "code" and (.check == null or .status == "unmatched" or .status == "skipped")) | {line, status, text}]' "$G/verdict.json")
        assert_eq "$unbound" "[]" "$name: [code] criteria unbound, unmatched or skipped in the good run"
        notpassed=$(jq -c '[.criteria[] | select(.status != "passed") | {line, kind, status, reason}]' "$G/verdict.json")
        assert_eq "$notpassed" "[]" "$name: criteria the good agent did not pass"
        # every surface tells the same verdict: the record, pome run show, GET …/verdict
        SID=$(jq -r '.trials[0].session_id' "$name-good.json")
        api GET "/v1/sandboxes/$SID/verdict"
        assert_status 200 "$name: GET …/verdict"
        cmp -s <(printf '%s\n' "$BODY") "$G/verdict.json" || fail "$name: GET …/verdict is not verdict.json, byte for byte"
        "$POME" run show "$SID" --json >"$name-show.json" || fail "$name: pome run show $SID"
        cmp -s <(jq -S .verdict "$name-show.json") <(jq -S . "$G/verdict.json") ||
                fail "$name: pome run show's verdict differs from verdict.json"
        assert_eq "$(jq -r .sandbox.verdict.state "$name-show.json")" pass "$name: the record's verdict (pome run show)"
        jq -e '[.criteria[] | select(.kind == "code" and .always_scored)] | length > 0' "$G/verdict.json" >/dev/null ||
                fail "$name: no [code] criterion is always-scored"
        jq -r '.criteria[] | select(.kind == "code") | .check.id' "$G/verdict.json" >>bound-ids

        # ---- the failing agent: exactly the declared criteria fail, every other one passes
        set +e
        "$POME" run "$task" --out "runs-$name" --json -- "$dir/bad.sh" >"$name-bad.json" 2>"$name-bad.err"
        rc=$?
        set -e
        assert_eq "$rc" 1 "$name: bad.sh's run exit status ($(tail -3 "$name-bad.err"))"
        B=$(jq -r '.trials[0].run_dir' "$name-bad.json")
        assert_eq "$(jq -r .result "$name-bad.json")" fail "$name: the bad run's result"
        assert_eq "$(jq -r .trials[0].graded_by "$name-bad.json")" pomed "$name: who graded the bad run"
        assert_eq "$(jq -r .agent.exit_code "$B/meta.json")" 0 "$name: bad.sh's own exit status (a mistake, not a crash)"
        unbound=$(jq -c '[.criteria[] | select(.kind == "code" and (.check == null or .status == "unmatched" or .status == "skipped")) | .line]' "$B/verdict.json")
        assert_eq "$unbound" "[]" "$name: [code] criteria unbound, unmatched or skipped in the bad run"
        grep -v '^[[:space:]]*$' "$dir/expect-bad-fail" | sort >"$name-expected"
        while IFS= read -r sentence; do
                jq -e --arg s "$sentence" '[.criteria[] | select(.kind == "code" and .text == $s)] | length == 1' \
                        "$B/verdict.json" >/dev/null || fail "$name: expect-bad-fail names no criterion of the task: $sentence"
        done <"$name-expected"
        jq -r '.criteria[] | select(.kind == "code" and .scored and .status == "failed") | .text' "$B/verdict.json" |
                sort >"$name-failed"
        diff "$name-expected" "$name-failed" >"$name-diff" ||
                fail "$name: the bad run's failed criteria are not expect-bad-fail's (< expected, > failed): $(cat "$name-diff")"
        others=$(jq -c --rawfile want "$name-expected" '($want | split("\n")) as $w
                | [.criteria[] | select(.kind == "code" and (.text as $t | $w | index($t) | not) and .status != "passed")
                | {line, status, reason}]' "$B/verdict.json")
        assert_eq "$others" "[]" "$name: criteria the bad run should pass"
        jq -r '.criteria[] | select(.kind == "code") | .check.id' "$B/verdict.json" >>bound-ids

        # ---- an agent that does nothing: never a pass, whatever its prohibitions say
        set +e
        "$POME" run "$task" --out "runs-$name" --json -- /bin/true >"$name-idle.json" 2>"$name-idle.err"
        rc=$?
        set -e
        [[ $rc -ne 0 && $(jq -r .result "$name-idle.json") != pass ]] ||
                fail "$name: an agent that does nothing passed (exit $rc)"

        # ---- with --local: the same statuses, no pomed involved; the defect and doing nothing fail
        POME_API_URL=http://127.0.0.1:1 "$POME" run "$task" --local --out "local-$name" --json "${LOCAL_JUDGE[@]}" \
                -- "$dir/good.sh" >"$name-local.json" 2>"$name-local.err" ||
                fail "$name: --local good.sh exited $?: $(tail -5 "$name-local.err")"
        L=$(jq -r '.trials[0].run_dir' "$name-local.json")
        assert_eq "$(jq -r .graded_by "$L/meta.json")" pome "$name: who graded the --local run"
        assert_eq "$(statuses "$L/verdict.json")" "$(statuses "$G/verdict.json")" "$name: --local vs sandbox criteria"
        for agent in "$dir/bad.sh" /bin/true; do
                set +e
                POME_API_URL=http://127.0.0.1:1 "$POME" run "$task" --local --out "local-$name" --json "${LOCAL_JUDGE[@]}" \
                        -- "$agent" >"$name-local-other.json" 2>/dev/null
                rc=$?
                set -e
                [[ $rc -ne 0 && $(jq -r .result "$name-local-other.json") != pass ]] ||
                        fail "$name: --local $(basename "$agent") passed (exit $rc)"
                [[ $agent == /bin/true ]] && continue
                # the defect fails the same criteria with --local as through pomed
                LB=$(jq -r '.trials[0].run_dir' "$name-local-other.json")
                assert_eq "$(statuses "$LB/verdict.json")" "$(statuses "$B/verdict.json")" "$name: --local vs sandbox criteria of bad.sh"
        done

        pass "$name: good.sh passes ($code [code] criteria bound, $(jq '[.criteria[] | select(.kind == "model")] | length' "$G/verdict.json") judged), bad.sh fails exactly $(wc -l <"$name-expected") of them, doing nothing does not pass, --local agrees"
done
[[ $n -ge 6 ]] || fail "only $n task folders under tests/tasks"
assert_eq "$(used)" 0 "sandboxes open after the suite"

# ---- coverage: every check of every twin is bound by some task, the exceptions excepted
sort -u bound-ids >bound
unused=$(comm -23 all-ids bound | comm -23 - exceptions | xargs)
assert_eq "$unused" "" "check ids no task binds (write a task, or list the id in tests/tasks/coverage-exceptions with why)"
stale=$(comm -12 bound exceptions | xargs)
assert_eq "$stale" "" "ids in coverage-exceptions that a task binds after all"
unknown=$(comm -13 all-ids bound | xargs)
assert_eq "$unknown" "" "bound ids pome checks does not list"
exceptions_named=$(xargs <exceptions)
pass "coverage: $(wc -l <bound) of $(wc -l <all-ids) check ids bound by the $n tasks; $(wc -l <exceptions) excepted${exceptions_named:+ ($exceptions_named)}"
