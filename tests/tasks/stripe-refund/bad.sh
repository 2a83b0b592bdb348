#!/usr/bin/env bash
# The failing agent of stripe-refund/task.md. Its mistake: of Grace's two identical charges
# it refunds the earlier one — the real payment — instead of the later duplicate. It leaves
# Ada alone and reports in #billing, naming the charge it refunded.
#
# Must fail (expect-bad-fail):
#   A refund exists on charge "ch_GraceJanDup0002"
#   The number of refunds on charge "ch_GraceJanDup0002" is 1
#   The number of refunds on charge "ch_GraceJan00000001" is 0
#   No refund was attempted on charge "ch_GraceJan00000001"
#   A message in "billing" contains "ch_GraceJanDup0002"
# shellcheck source=tests/tasks/agent-lib.sh
source "$(dirname "$0")/../agent-lib.sh"
: "${POME_STRIPE_API_BASE:?run me with pome run}" "${POME_STRIPE_API_KEY:?}" "${POME_SLACK_REST_URL:?}"

grace=$(stripe GET /v1/customers email=grace@example.com | jq -er '.data[0].id')
first=$(stripe GET /v1/charges "customer=$grace" | jq -er '.data | sort_by(.created) | .[0].id')
refund=$(STRIPE_IDEMPOTENCY_KEY="refund-$first" stripe POST /v1/refunds "charge=$first" reason=duplicate)
re=$(jq -r .id <<<"$refund")
billing=$(slack_channel billing)
slack chat.postMessage "channel=$billing" "text=Refunded Grace Hopper's charge $first (\$49.00): refund $re." >/dev/null
echo "refunded $first with $re"
