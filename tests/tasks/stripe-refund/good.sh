#!/usr/bin/env bash
# The passing agent of stripe-refund/task.md: finds Grace's two January charges, refunds the
# later one (with an Idempotency-Key, as Stripe's SDKs send), reads Ada's refunds without
# refunding, and reports in #billing.
# shellcheck source=tests/tasks/agent-lib.sh
source "$(dirname "$0")/../agent-lib.sh"
: "${POME_STRIPE_API_BASE:?run me with pome run}" "${POME_STRIPE_API_KEY:?}" "${POME_SLACK_REST_URL:?}"

grace=$(stripe GET /v1/customers email=grace@example.com | jq -er '.data[0].id')
charges=$(stripe GET /v1/charges "customer=$grace")
dup=$(jq -er '[.data[] | select(.amount == 4900 and .status == "succeeded" and .refunded == false)]
        | sort_by(.created) | if length == 2 then .[1].id else error("not two charges") end' <<<"$charges")
refund=$(STRIPE_IDEMPOTENCY_KEY="refund-$dup" stripe POST /v1/refunds "charge=$dup" reason=duplicate)
[[ $(stripe_status) == 200 ]] || { echo "refund: $refund" >&2; exit 1; }
re=$(jq -r .id <<<"$refund")

ada=$(stripe GET /v1/customers email=ada@example.com | jq -er '.data[0].id')
addon=$(stripe GET /v1/charges "customer=$ada" | jq -c '.data[] | select(.amount == 3000)')
if [[ $(jq -r .refunded <<<"$addon") == true ]]; then
        echo "Ada's add-on $(jq -r .id <<<"$addon") was refunded already: $(stripe GET /v1/refunds "charge=$(jq -r .id <<<"$addon")" | jq -r '[.data[].id] | join(",")')"
fi

billing=$(slack_channel billing)
slack chat.postMessage "channel=$billing" \
        "text=Refunded Grace Hopper's duplicate Team plan charge $dup (\$49.00): refund $re. Ada's add-on was already refunded." >/dev/null
echo "refunded $dup with $re"
