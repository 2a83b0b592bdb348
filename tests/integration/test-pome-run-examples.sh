#!/usr/bin/env bash
# The Stripe + Slack example, examples/payment-receipt: the reference agent passes in a
# sandbox (seeded inline from the task's ## Seed State) and with --local; the committed
# defect fails exactly the criterion asking for the charge id, and eval reproduces both.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
start_pomed
cd "$TMP"

EX=$SRC/examples/payment-receipt
for mode in sandbox local; do
        flags=(--out "runs-$mode" --json --code-only)
        [[ $mode == local ]] && flags+=(--local)
        "$POME" run "$EX/task.md" "${flags[@]}" -- "$EX/good-agent.sh" >"good-$mode.json" 2>"good-$mode.err" ||
                fail "$mode: the good agent's run exited $?: $(cat "good-$mode.err")"
        G=$(jq -r '.trials[0].run_dir' "good-$mode.json")
        assert_eq "$(jq -r .result "good-$mode.json")" pass "$mode: the good run"
        # the seed the Stripe twin booted from is the task's: Ada and her card
        assert_eq "$(jq -r '.customers[0].email' "$G/stripe.seed.json")" ada@example.com "$mode: stripe.seed.json"
        charge=$(jq -r '.charges[0].id' "$G/stripe.final.json")
        [[ $charge == ch_* ]] || fail "$mode: no charge in the final state"
        assert_eq "$(jq -r '.charges[0].customer' "$G/stripe.final.json")" cus_Ada0000000001 "$mode: the charge's customer"
        jq -e --arg c "$charge" '.channels[] | select(.name == "general") | .messages[] | select(.text | contains($c))' \
                "$G/slack.final.json" >/dev/null || fail "$mode: #general lacks the charge id $charge"

        set +e
        "$POME" run "$EX/task.md" "${flags[@]}" -- "$EX/bad-agent.sh" >"bad-$mode.json" 2>"bad-$mode.err"
        rc=$?
        set -e
        assert_eq "$rc" 1 "$mode: the bad agent's exit status"
        B=$(jq -r '.trials[0].run_dir' "bad-$mode.json")
        assert_eq "$(jq -c '[.criteria[] | select(.scored and .status != "passed") | .text]' "$B/verdict.json")" \
                '["A message in \"general\" contains \"ch_\""]' "$mode: the bad run's failures"
        for d in "$G" "$B"; do
                "$POME" eval "$d" --json >eval.json || true
                cmp eval.json "$d/verdict.json" || fail "$mode: pome eval of $d"
        done
        pass "$mode: payment-receipt good agent passes ($charge in #general), bad agent fails only the ch_ criterion"
done
for a in good bad; do
        assert_eq "$(jq -r '[.trials[0].verdict.criteria[] | .status] | join(",")' "$a-local.json")" \
                "$(jq -r '[.trials[0].verdict.criteria[] | .status] | join(",")' "$a-sandbox.json")" \
                "--local vs sandbox statuses ($a agent)"
done
assert_eq "$(used)" 0 "sandboxes open after the examples"
pass "payment-receipt: --local and sandbox verdicts agree for both agents"
