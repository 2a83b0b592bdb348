#!/usr/bin/env bash
# The passing agent of stripe-retry/task.md: confirms the renewal on the card on file,
# retrying the injected 500 with the same Idempotency-Key; on the decline, confirms the same
# PaymentIntent with the backup card.
# shellcheck source=tests/tasks/agent-lib.sh
source "$(dirname "$0")/../agent-lib.sh"
: "${POME_STRIPE_API_BASE:?run me with pome run}" "${POME_STRIPE_API_KEY:?}"

PI=pi_AlanRenew00003
# confirm PM KEY: POST …/confirm, retrying a 5xx with the same key (at most 3 times)
confirm() {
        local out
        for _ in 1 2 3; do
                out=$(STRIPE_IDEMPOTENCY_KEY=$2 stripe POST "/v1/payment_intents/$PI/confirm" "payment_method=$1" \
                        off_session=true)
                [[ $(stripe_status) == 5* ]] || break
                echo "confirm with $1: $(stripe_status) $(jq -r .error.type <<<"$out"), retrying" >&2
        done
        printf '%s' "$out"
}

first=$(confirm pm_AlanNsf0000003 renew-alan-onfile)
echo "card on file: $(stripe_status) $(jq -r '.error.decline_code // .status' <<<"$first")"
if [[ $(stripe_status) == 402 ]]; then
        second=$(confirm pm_AlanBackup00004 renew-alan-backup)
        [[ $(stripe_status) == 200 && $(jq -r .status <<<"$second") == succeeded ]] ||
                { echo "backup card: $second" >&2; exit 1; }
        echo "backup card: succeeded, charge $(jq -r .latest_charge <<<"$second")"
fi
