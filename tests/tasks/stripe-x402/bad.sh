#!/usr/bin/env bash
# The failing agent of stripe-x402/task.md. Its mistake: it converts the price itself,
# reading USDC as a two-decimal currency like USD, so "0.01 USDC" becomes value 1 (atomic
# units) instead of the 402's maxAmountRequired, 10000. The retry is refused (402), and
# without the report it charges Ada last month's list price, $49.00.
#
# Must fail (expect-bad-fail):
#   The retry includes X-PAYMENT and returns 200
#   A PaymentIntent exists with amount 4200
# shellcheck source=tests/tasks/agent-lib.sh
source "$(dirname "$0")/../agent-lib.sh"
: "${POME_STRIPE_REST_URL:?run me with pome run}" "${POME_AUTH_TOKEN:?}" "${POME_STRIPE_API_KEY:?}"

WALLET=0x4167656e74000000000000000000000000000001
challenge=$(x402 pricing/team-plan)
req=$(jq -ce '.accepts[0]' <<<"$challenge")
now=$(date +%s)
nonce=0x$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
value=$(awk 'BEGIN { printf "%d", 0.01 * 10^2 }') # 0.01 USDC "in cents": USDC has 6 decimals
payment=$(jq -nc --argjson r "$req" --arg from "$WALLET" --arg nonce "$nonce" \
        --arg after "$((now - 60))" --arg before "$((now + 60))" --arg value "$value" \
        '{x402Version: 1, scheme: $r.scheme, network: $r.network,
          payload: {signature: ("0x" + ("00" * 65)),
                    authorization: {from: $from, to: $r.payTo, value: $value,
                                    validAfter: $after, validBefore: $before, nonce: $nonce}}}')
report=$(x402 pricing/team-plan "$(printf '%s' "$payment" | base64 -w0)")
echo "the paid retry: $(x402_status) $(jq -r .error <<<"$report")"
amount=$(jq -r '.recommended_price.amount // 4900' <<<"$report")

ada=$(stripe GET /v1/customers email=ada@example.com | jq -er '.data[0].id')
pm=$(stripe GET "/v1/customers/$ada/payment_methods" type=card | jq -er '.data[0].id')
pi=$(stripe POST /v1/payment_intents "amount=$amount" currency=usd "customer=$ada" "payment_method=$pm" \
        confirm=true off_session=true)
echo "charged Ada $amount: $(stripe_status) $(jq -r .status <<<"$pi")"
