#!/usr/bin/env bash
# The failing agent of stripe-retry/task.md. Its mistake: it takes the second decline on the
# card on file as final and stops, never trying the backup card. It does retry the 500
# with the same Idempotency-Key, so the decline itself is on the tape.
#
# Must fail (expect-bad-fail):
#   The PaymentIntent status is succeeded
#   A PaymentIntent exists with status "succeeded"
#   A charge exists with status "succeeded"
#   payment_intent.succeeded is emitted
# shellcheck source=tests/tasks/agent-lib.sh
source "$(dirname "$0")/../agent-lib.sh"
: "${POME_STRIPE_API_BASE:?run me with pome run}" "${POME_STRIPE_API_KEY:?}"

PI=pi_AlanRenew00003
for _ in 1 2 3; do
        out=$(STRIPE_IDEMPOTENCY_KEY=renew-alan-onfile stripe POST "/v1/payment_intents/$PI/confirm" \
                payment_method=pm_AlanNsf0000003 off_session=true)
        [[ $(stripe_status) == 5* ]] || break
done
echo "card on file: $(stripe_status) $(jq -r '.error.decline_code // .status' <<<"$out"); giving up"
