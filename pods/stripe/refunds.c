/* SPDX-License-Identifier: MIT */
/*
 * Refunds (https://docs.stripe.com/api/refunds): partial and full refunds of a succeeded
 * charge (named directly or by its payment intent), each a negative balance transaction,
 * the charge's amount_refunded / refunded kept up to date, refund.created and
 * charge.refunded emitted. Stripe's refusals: more than what is left ("Refund amount ($X)
 * is greater than charge amount ($Y)"), a charge already refunded in full
 * (charge_already_refunded), a charge that did not succeed. Refunding an uncaptured charge
 * (a manual-capture hold) releases it whole: no balance transaction, its intent canceled.
 */
#include "common/json-util.h"
#include "pods/stripe/stripe.h"

/* "$12.34" for an amount in cents (the way Stripe's refund messages show money). */
static void dollars(int64_t cents, char buf[static 32])
{
        snprintf(buf, 32, "$%lld.%02lld", (long long)(cents / 100), (long long)(cents % 100));
}

int stripe_act_create_refund(TwinCall *c, TwinReply *rp)
{
        static const char *const reasons[] = {"duplicate", "fraudulent", "requested_by_customer",
                                              NULL};
        const char *ch_id, *pi_id, *reason;
        int64_t amount = -1;
        int r;
        if ((r = stripe_arg_str(c, rp, "charge", false, &ch_id)) <= 0 ||
            (r = stripe_arg_str(c, rp, "payment_intent", false, &pi_id)) <= 0 ||
            (r = stripe_arg_enum(c, rp, "reason", reasons, &reason)) <= 0 ||
            (r = stripe_arg_amount(c, rp, "amount", false, &amount)) <= 0)
                return r;
        if (!ch_id && !pi_id)
                return stripe_invalid(rp, "parameter_missing", NULL,
                                      "One of the following params should be provided for this "
                                      "request: payment_intent or charge.");
        if (ch_id && pi_id)
                return stripe_invalid(rp, NULL, "payment_intent",
                                      "You may only specify one of these parameters: charge, "
                                      "payment_intent.");
        if (amount == 0)
                return stripe_invalid(rp, NULL, "amount",
                                      "This value must be greater than or equal to 1.");
        if (pi_id) {
                json_t *pi = stripe_find(c->world, "payment_intents", pi_id, NULL);
                if (!pi)
                        return stripe_missing(rp, "payment_intents", pi_id, "payment_intent");
                ch_id = json_get_str(pi, "latest_charge");
                if (!(streq_ptr(json_get_str(pi, "status"), "succeeded") ||
                      streq_ptr(json_get_str(pi, "status"), "requires_capture")) ||
                    !ch_id)
                        return stripe_invalid(rp, NULL, "payment_intent",
                                              "This PaymentIntent (%s) does not have a successful "
                                              "charge to refund.",
                                              pi_id);
        }
        size_t idx;
        json_t *ch = stripe_find(c->world, "charges", ch_id, &idx);
        if (!ch)
                return stripe_missing(rp, "charges", ch_id, "charge");
        if (!streq_ptr(json_get_str(ch, "status"), "succeeded"))
                return stripe_invalid(rp, NULL, "charge",
                                      "Charge %s has a status of %s and cannot be refunded.", ch_id,
                                      strempty(json_get_str(ch, "status")));
        int64_t total = json_integer_value(json_object_get(ch, "amount"));
        int64_t refunded = json_integer_value(json_object_get(ch, "amount_refunded"));
        if (json_is_true(json_object_get(ch, "refunded")) || refunded >= total)
                return stripe_invalid(rp, "charge_already_refunded", NULL,
                                      "Charge %s has already been refunded.", ch_id);
        /* an uncaptured charge (a hold) is released whole: no money moves, its intent is
         * canceled, as Stripe does */
        bool held = json_is_false(json_object_get(ch, "captured"));
        if (held && amount >= 0 && amount != total)
                return stripe_invalid(rp, NULL, "amount",
                                      "Charge %s has not been captured: only its full amount can "
                                      "be refunded (which releases it).",
                                      ch_id);
        if (amount < 0)
                amount = total - refunded;
        if (amount > total - refunded) {
                char want[32], left[32];
                dollars(amount, want);
                dollars(total - refunded, left);
                return refunded > 0 ? stripe_invalid(rp, "amount_too_large", "amount",
                                                     "Refund amount (%s) is greater than "
                                                     "unrefunded amount on charge (%s)",
                                                     want, left)
                                    : stripe_invalid(rp, "amount_too_large", "amount",
                                                     "Refund amount (%s) is greater than charge "
                                                     "amount (%s)",
                                                     want, left);
        }

        char id[40], txn[40];
        const char *currency = strempty(json_get_str(ch, "currency"));
        _cleanup_json_ json_t *re = stripe_refund_new("", c->now, amount, currency);
        if (!re)
                return -ENOMEM;
        if ((r = stripe_apply_metadata(c, rp, re)) <= 0)
                return r;
        if ((r = stripe_new_id(c->world, "re", id)) < 0 ||
            json_object_set_new(re, "id", json_string(id)) < 0)
                return -ENOMEM;
        if (!held && (r = stripe_txn_add(c, "refund", id, -amount, 0, currency, "REFUND FOR CHARGE",
                                         txn)) < 0)
                return r;
        _cleanup_json_ json_t *prev =
                json_pack("{s:O, s:O}", "amount_refunded", json_object_get(ch, "amount_refunded"),
                          "refunded", json_object_get(ch, "refunded"));
        if (!prev ||
            json_object_set_new(re, "balance_transaction", held ? json_null() : json_string(txn)) <
                    0 ||
            json_object_set_new(re, "charge", json_string(ch_id)) < 0 ||
            json_object_set(re, "payment_intent", json_object_get(ch, "payment_intent")) < 0 ||
            json_object_set_new(re, "reason", json_string_or_null(reason)) < 0 ||
            json_object_set_new(ch, "amount_refunded", json_integer(refunded + amount)) < 0 ||
            json_object_set_new(ch, "refunded", json_boolean(refunded + amount >= total)) < 0)
                return -ENOMEM;
        if ((r = stripe_row_add(c->world, "refunds", json_incref(re))) < 0 ||
            (r = stripe_mutated(rp, NULL, re)) < 0 ||
            (r = stripe_event(c, "refund.created", re, NULL)) < 0 ||
            (r = stripe_event(c, "charge.refunded", ch, prev)) < 0)
                return r;
        json_t *pi = held ? stripe_find(c->world, "payment_intents",
                                        json_get_str(ch, "payment_intent"), NULL)
                          : NULL;
        if (pi && streq_ptr(json_get_str(pi, "status"), "requires_capture")) {
                if (json_object_set_new(pi, "status", json_string("canceled")) < 0 ||
                    json_object_set_new(pi, "amount_capturable", json_integer(0)) < 0 ||
                    json_object_set_new(pi, "canceled_at", json_integer(c->now)) < 0 ||
                    (r = stripe_event(c, "payment_intent.canceled", pi, NULL)) < 0)
                        return -ENOMEM;
        }
        return stripe_reply_object(c, rp, 200, re);
}

int stripe_act_retrieve_refund(TwinCall *c, TwinReply *rp)
{
        const char *id;
        int r = stripe_arg_id(c, rp, "id", &id);
        if (r <= 0)
                return r;
        json_t *re = stripe_find(c->world, "refunds", id, NULL);
        if (!re)
                return stripe_missing(rp, "refunds", id, "id");
        return stripe_reply_object(c, rp, 200, re);
}

static bool keep_refund(TwinCall *c, json_t *row)
{
        const char *ch = json_get_str(c->args, "charge");
        const char *pi = json_get_str(c->args, "payment_intent");
        return (!ch || streq_ptr(json_get_str(row, "charge"), ch)) &&
               (!pi || streq_ptr(json_get_str(row, "payment_intent"), pi));
}

int stripe_act_list_refunds(TwinCall *c, TwinReply *rp)
{
        const char *s;
        int r;
        if ((r = stripe_arg_str(c, rp, "charge", false, &s)) <= 0 ||
            (r = stripe_arg_str(c, rp, "payment_intent", false, &s)) <= 0)
                return r;
        return stripe_list(c, rp, "refunds", "/v1/refunds", keep_refund);
}
