#!/usr/bin/env bash
# The passing agent of stripe-x402/task.md: asks for the report, reads the 402's "exact"
# requirement, builds an X-PAYMENT for exactly it (bash, jq, base64), retries, reads the
# recommended price from the report and charges Ada's saved card that amount.
# shellcheck source=tests/tasks/agent-lib.sh
source "$(dirname "$0")/../agent-lib.sh"
: "${POME_STRIPE_REST_URL:?run me with pome run}" "${POME_AUTH_TOKEN:?}" "${POME_STRIPE_API_KEY:?}"

WALLET=0x4167656e74000000000000000000000000000001
challenge=$(x402 pricing/team-plan)
[[ $(x402_status) == 402 ]] || { echo "expected a 402, got $(x402_status): $challenge" >&2; exit 1; }
req=$(jq -ce '[.accepts[] | select(.scheme == "exact")][0] // error("no exact requirement")' <<<"$challenge")
echo "402: $(jq -r '"\(.maxAmountRequired) of \(.asset) on \(.network) to \(.payTo)"' <<<"$req")"

# an EIP-3009 authorization for exactly the requirement, valid for its maxTimeoutSeconds
now=$(date +%s)
nonce=0x$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
payment=$(jq -nc --argjson r "$req" --arg from "$WALLET" --arg nonce "$nonce" \
        --arg after "$((now - 60))" --arg before "$((now + $(jq -r .maxTimeoutSeconds <<<"$req")))" \
        '{x402Version: 1, scheme: $r.scheme, network: $r.network,
          payload: {signature: ("0x" + ("00" * 65)),
                    authorization: {from: $from, to: $r.payTo, value: $r.maxAmountRequired,
                                    validAfter: $after, validBefore: $before, nonce: $nonce}}}')
report=$(x402 pricing/team-plan "$(printf '%s' "$payment" | base64 -w0)")
[[ $(x402_status) == 200 ]] || { echo "the paid retry: $(x402_status) $report" >&2; exit 1; }
receipt=$(x402_header X-PAYMENT-RESPONSE | base64 -d)
echo "paid: transaction $(jq -r .transaction <<<"$receipt")"

amount=$(jq -er '.recommended_price | select(.currency == "usd") | .amount' <<<"$report")
ada=$(stripe GET /v1/customers email=ada@example.com | jq -er '.data[0].id')
pm=$(stripe GET "/v1/customers/$ada/payment_methods" type=card | jq -er '.data[0].id')
pi=$(STRIPE_IDEMPOTENCY_KEY="team-plan-$ada-$amount" stripe POST /v1/payment_intents "amount=$amount" \
        currency=usd "customer=$ada" "payment_method=$pm" confirm=true off_session=true)
[[ $(stripe_status) == 200 && $(jq -r .status <<<"$pi") == succeeded ]] || { echo "charge: $pi" >&2; exit 1; }
echo "charged Ada $amount: $(jq -r .id <<<"$pi"), charge $(jq -r .latest_charge <<<"$pi")"
