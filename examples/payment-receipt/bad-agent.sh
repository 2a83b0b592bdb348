#!/usr/bin/env bash
# The committed defect of examples/payment-receipt/task.md: the payment is right, the
# receipt is not — it carries the PaymentIntent's id (pi_…) where the charge's belongs, so
# exactly one criterion fails: A message in "general" contains "ch_".
#
#   pome run examples/payment-receipt/task.md -- examples/payment-receipt/bad-agent.sh  # exit 1
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
card=$(stripe GET "/v1/customers/$customer/payment_methods" type=card | jq -r '.data[0].id')
intent=$(stripe POST /v1/payment_intents amount=2000 currency=usd "customer=$customer" \
        "payment_method=$card" confirm=true "description=March invoice" \
        "automatic_payment_methods[enabled]=true" "automatic_payment_methods[allow_redirects]=never")
id=$(jq -r .id <<<"$intent") # the defect: the intent's id, not latest_charge

general=$(slack conversations.list types=public_channel | jq -r '.channels[] | select(.name == "general") | .id')
slack chat.postMessage "channel=$general" \
        "text=Receipt: \$20.00 from Ada Lovelace for her March invoice, payment $id." | jq -e .ok >/dev/null
echo "posted the receipt (with the wrong id)"
