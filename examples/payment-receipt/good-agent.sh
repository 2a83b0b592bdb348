#!/usr/bin/env bash
# The reference agent of examples/payment-receipt/task.md, in shell: Stripe's REST API with
# the sandbox's Stripe key (form bodies, as Stripe's SDKs send them), then Slack's.
#
#   pome run examples/payment-receipt/task.md -- examples/payment-receipt/good-agent.sh
set -euo pipefail
: "${POME_STRIPE_API_BASE:?run me with pome run}" "${POME_STRIPE_API_KEY:?}" "${POME_SLACK_REST_URL:?}"

stripe() { # stripe METHOD PATH [NAME=VALUE…]
        local method=$1 path=$2 args=()
        shift 2
        for kv in "$@"; do args+=(--data-urlencode "$kv"); done
        if [[ $method == GET ]]; then args=(-G "${args[@]}"); fi
        curl -fsS -u "$POME_STRIPE_API_KEY:" "${args[@]}" "$POME_STRIPE_API_BASE$path"
}
slack() { # slack METHOD [NAME=VALUE…]
        local method=$1 args=()
        shift
        for kv in "$@"; do args+=(--data-urlencode "$kv"); done
        curl -fsS -H "Authorization: Bearer ${POME_SLACK_TOKEN:-$POME_AUTH_TOKEN}" "${args[@]}" \
                "$POME_SLACK_REST_URL/$method"
}

customer=$(stripe GET /v1/customers email=ada@example.com | jq -r '.data[0].id')
[[ $customer == cus_* ]] || { echo "no customer ada@example.com" >&2; exit 1; }
card=$(stripe GET "/v1/customers/$customer/payment_methods" type=card | jq -r '.data[0].id')
intent=$(stripe POST /v1/payment_intents amount=2000 currency=usd "customer=$customer" \
        "payment_method=$card" confirm=true "description=March invoice" \
        "automatic_payment_methods[enabled]=true" "automatic_payment_methods[allow_redirects]=never")
status=$(jq -r .status <<<"$intent")
charge=$(jq -r .latest_charge <<<"$intent")
[[ $status == succeeded && $charge == ch_* ]] || { echo "payment: $intent" >&2; exit 1; }
echo "charged $customer: $charge"

general=$(slack conversations.list types=public_channel | jq -r '.channels[] | select(.name == "general") | .id')
slack chat.postMessage "channel=$general" \
        "text=Receipt: \$20.00 from Ada Lovelace for her March invoice, charge $charge." | jq -e .ok >/dev/null
echo "posted the receipt"
