#!/usr/bin/env bash
# The failing agent of stripe-gmail-receipt/task.md. Its mistake: it passes Stripe the amount
# in dollars, not in cents ("$480.00" → amount=480, a $4.80 charge, and 120 for Alan's), while
# its receipts still say $480.00 and $120.00; everything else is good.sh's.
#
# Must fail (expect-bad-fail):
#   A PaymentIntent exists with amount 48000
#   A PaymentIntent exists with amount 12000
# shellcheck source=tests/tasks/agent-lib.sh
source "$(dirname "$0")/../agent-lib.sh"
: "${POME_STRIPE_API_BASE:?run me with pome run}" "${POME_STRIPE_API_KEY:?}" "${POME_GMAIL_REST_URL:?}" "${POME_GMAIL_MCP_URL:?}"

me=$(gm GET /profile | jq -er .emailAddress)
receipts=$(gm GET /labels | jq -er '.labels[] | select(.name == "Receipts") | .id')
header() { jq -r --arg h "$2" '.payload.headers[] | select(.name | ascii_downcase == ($h | ascii_downcase)) | .value' <<<"$1" | head -1; }

# CENTS: what the request asks for, read as whole dollars ("$480.00" → 480)
cents() { grep -oE '\$[0-9,]+\.[0-9]{2}' | head -1 | tr -d '$,' | cut -d. -f1; }

charge_and_reply() { # FROM
        local id msg body amount customer pm pi dollars raw sent out
        id=$(gm GET "/messages?q=$(jq -rn --arg q "is:unread from:$1" '$q | @uri')" | jq -er '.messages[0].id')
        msg=$(gm GET "/messages/$id?format=full")
        body=$(jq -r '.payload | (.body.data // (.parts[]? | select(.mimeType == "text/plain") | .body.data) // "")' <<<"$msg" | b64url_decode)
        amount=$(cents <<<"$body")
        [[ -n $amount ]] || { echo "no amount in $id: $body" >&2; return 1; }
        customer=$(stripe GET /v1/customers "email=$1")
        pm=$(jq -er '.data[0].invoice_settings.default_payment_method' <<<"$customer")
        pi=$(STRIPE_IDEMPOTENCY_KEY="receipt-$id" stripe POST /v1/payment_intents "amount=$amount" currency=usd \
                "customer=$(jq -r '.data[0].id' <<<"$customer")" "payment_method=$pm" confirm=true off_session=true \
                "description=$(header "$msg" Subject)")
        [[ $(stripe_status) == 200 && $(jq -r .status <<<"$pi") == succeeded ]] || { echo "charge: $pi" >&2; return 1; }
        dollars=$(printf '$%d.%02d' "$amount" 0)
        raw=$(gm_raw "$me" "$1" "Re: $(header "$msg" Subject)" \
                "$(printf 'Hello,\n\nReceipt: we charged %s (USD) to your card on file.\nPayment: %s\n\nThank you,\nAcme Billing' \
                        "$dollars" "$(jq -r .id <<<"$pi")")" \
                "$(header "$msg" Message-ID)")
        sent=$(gm POST /messages/send "$(jq -nc --arg r "$raw" --arg t "$(jq -r .threadId <<<"$msg")" '{raw: $r, threadId: $t}')")
        out=$(mcp "$POME_GMAIL_MCP_URL" label_message "$(jq -nc --arg m "$(jq -r .id <<<"$sent")" --arg l "$receipts" '{messageId: $m, labelIds: [$l]}')")
        [[ $(jq -r '.isError // false' <<<"$out") == false ]] || { echo "label_message: $out" >&2; return 1; }
        gm POST "/messages/$id/modify" '{"removeLabelIds":["UNREAD"]}' >/dev/null
        echo "$1: receipt $(jq -r .id <<<"$sent") sent in thread $(jq -r .threadId <<<"$sent"): charged $dollars, payment $(jq -r .id <<<"$pi") (amount=$amount)"
}

charge_and_reply grace@example.com
charge_and_reply alan@example.com
