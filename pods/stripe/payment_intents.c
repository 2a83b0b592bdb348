/* SPDX-License-Identifier: MIT */
/*
 * Payment intents (https://docs.stripe.com/api/payment_intents) and Stripe's status machine
 * (https://docs.stripe.com/payments/paymentintents/lifecycle): requires_payment_method →
 * requires_confirmation (a payment method given) → requires_action (a card asking for 3-D
 * Secure) → succeeded (a charge and its balance transaction booked), or canceled. Cards
 * settle at once, so "processing" is never seen. With capture_method=manual a confirm only
 * authorizes (https://docs.stripe.com/payments/place-a-hold-on-a-payment-method): status
 * requires_capture, amount_capturable, an uncaptured charge and no money booked until
 * capture (all or part of it; the rest is released) or cancel (all released).
 *
 * A decline (pm_card_chargeDeclined…) is Stripe's: HTTP 402 card_error with code,
 * decline_code, the charge and the payment intent as it now is; the failed charge is
 * recorded, the intent goes back to requires_payment_method with last_payment_error and
 * charge.failed, payment_intent.payment_failed are emitted. Unlike other refusals this one
 * changes the world, as on Stripe.
 *
 * A crypto intent (payment_method_types[]=crypto, deposit mode) takes the other road,
 * requires_action → processing → succeeded through its deposit (crypto.c).
 *
 * An invoice pays through the same attempt (stripe_pi_attempt): its intent carries
 * "invoice", and whichever call makes the attempt — a subscription's first invoice, a
 * renewal, or the agent confirming the intent itself — the invoice and its subscription
 * follow the outcome (invoices.c).
 */
#include "common/json-util.h"
#include "pods/stripe/stripe.h"

static const char *const open_states =
        "requires_payment_method, requires_confirmation, requires_action";

static bool status_is(json_t *pi, const char *status)
{
        return streq_ptr(json_get_str(pi, "status"), status);
}

static bool status_open(json_t *pi)
{
        return status_is(pi, "requires_payment_method") || status_is(pi, "requires_confirmation") ||
               status_is(pi, "requires_action");
}

/* The payment intent args.id names: 1 (*ret, *ret_idx), 0 with 404 in rp, -ENOMEM. */
static int arg_pi(TwinCall *c, TwinReply *rp, json_t **ret, size_t *ret_idx)
{
        const char *id;
        int r = stripe_arg_id(c, rp, "id", &id);
        if (r <= 0)
                return r;
        json_t *pi = stripe_find(c->world, "payment_intents", id, ret_idx);
        if (!pi) {
                r = stripe_missing(rp, "payment_intents", id, "id");
                return r < 0 ? r : 0;
        }
        *ret = pi;
        return 1;
}

/*
 * Whether the payment method ref may pay for an intent of customer cus (NULL: none): it
 * exists (or is a test id) and is not saved to another customer. 1, 0 with the refusal in
 * rp, -ENOMEM. Nothing is created here.
 */
static int check_pm(TwinCall *c, TwinReply *rp, const char *cus, const char *ref)
{
        json_t *pm = stripe_find(c->world, "payment_methods", ref, NULL);
        int r;
        if (!pm) {
                if (stripe_pm_test_id(ref))
                        return 1; /* stripe_pm_resolve makes it */
                r = stripe_missing(rp, "payment_methods", ref, "payment_method");
                return r < 0 ? r : 0;
        }
        const char *owner = json_get_str(pm, "customer");
        if (owner && !streq_ptr(owner, cus)) {
                r = cus ? stripe_invalid(rp, NULL, "payment_method",
                                         "The provided PaymentMethod belongs to another "
                                         "Customer (%s) than this PaymentIntent's (%s).",
                                         owner, cus)
                        : stripe_invalid(rp, NULL, "payment_method",
                                         "The provided PaymentMethod is attached to a Customer "
                                         "(%s). Provide that Customer's ID in the customer "
                                         "parameter to use it.",
                                         owner);
                return r < 0 ? r : 0;
        }
        return 1;
}

/*
 * Applies the fields create and update share onto pi (a working copy): amount, currency,
 * customer, description, metadata, receipt_email, setup_future_usage,
 * statement_descriptor, capture_method, payment_method_types. 1, 0 with a 400 in rp,
 * -ENOMEM.
 */
static int apply_fields(TwinCall *c, TwinReply *rp, json_t *pi)
{
        static const char *const strings[] = {"description", "receipt_email",
                                              "statement_descriptor", NULL};
        static const char *const futures[] = {"on_session", "off_session", NULL};
        static const char *const captures[] = {"automatic", "automatic_async", "manual", NULL};
        int64_t amount = -1;
        const char *currency, *cus, *future, *capture;
        int r;
        if ((r = stripe_arg_amount(c, rp, "amount", false, &amount)) <= 0 ||
            (r = stripe_arg_currency(c, rp, false, &currency)) <= 0 ||
            (r = stripe_arg_str(c, rp, "customer", false, &cus)) <= 0 ||
            (r = stripe_arg_enum(c, rp, "setup_future_usage", futures, &future)) <= 0)
                return r;
        if ((r = stripe_arg_enum(c, rp, "capture_method", captures, &capture)) <= 0)
                return r;
        json_t *types = json_object_get(c->args, "payment_method_types");
        if (types) {
                if (!json_is_array(types) || json_array_size(types) == 0)
                        return stripe_invalid(rp, NULL, "payment_method_types", "Invalid array");
                size_t i, cards = 0;
                json_t *t;
                json_array_foreach (types, i, t) {
                        const char *ty = json_string_value(t);
                        if (!streq_ptr(ty, "card") && !streq_ptr(ty, "crypto"))
                                return stripe_invalid(
                                        rp, "payment_intent_invalid_parameter",
                                        "payment_method_types",
                                        "The payment method type \"%s\" is invalid or not "
                                        "supported by the pome Stripe twin (card, or crypto in "
                                        "deposit mode).",
                                        strempty(ty));
                        cards += streq(ty, "card");
                }
                if (cards && cards != json_array_size(types))
                        return stripe_invalid(rp, "payment_intent_invalid_parameter",
                                              "payment_method_types",
                                              "The pome Stripe twin takes card or crypto in "
                                              "payment_method_types, not both: a crypto "
                                              "PaymentIntent is paid to deposit addresses.");
                if (json_object_set(pi, "payment_method_types", types) < 0 ||
                    json_object_set_new(pi, "automatic_payment_methods", json_null()) < 0)
                        return -ENOMEM;
        }
        if (amount >= 0 && json_object_set_new(pi, "amount", json_integer(amount)) < 0)
                return -ENOMEM;
        if (currency && json_object_set_new(pi, "currency", json_string(currency)) < 0)
                return -ENOMEM;
        /* Stripe's minimum charge amounts: $0.50 and its like for a card; a stablecoin
         * payment may be a cent (Stripe's x402 guide charges $0.01 a request) */
        int64_t a = json_integer_value(json_object_get(pi, "amount"));
        const char *cur = json_get_str(pi, "currency");
        if (streq_ptr(cur, "usd") && a < 50 && !stripe_pi_is_crypto(pi))
                return stripe_invalid(rp, "amount_too_small", "amount",
                                      "Amount must be at least $0.50 usd");
        if (a < 1)
                return stripe_invalid(rp, "amount_too_small", "amount",
                                      "Amount must be at least 1 %s", strempty(cur));
        if (cus) {
                json_t *row = cus[0] ? stripe_find(c->world, "customers", cus, NULL) : NULL;
                if (cus[0] && (!row || json_is_true(json_object_get(row, "deleted"))))
                        return stripe_missing(rp, "customers", cus, "customer");
                if (json_object_set_new(pi, "customer", cus[0] ? json_string(cus) : json_null()) <
                    0)
                        return -ENOMEM;
        }
        if (future && json_object_set_new(pi, "setup_future_usage", json_string(future)) < 0)
                return -ENOMEM;
        if (capture && json_object_set_new(pi, "capture_method", json_string(capture)) < 0)
                return -ENOMEM;
        if ((r = stripe_set_strings(c, rp, pi, strings)) <= 0)
                return r;
        return stripe_apply_metadata(c, rp, pi);
}

/* payment_method_details of a charge on pm (https://docs.stripe.com/api/charges/object). */
static json_t *pm_details(json_t *pm)
{
        json_t *card = json_object_get(pm, "card");
        return json_pack(
                "{s:{s:O?, s:o?, s:O?, s:O?, s:O?, s:O?, s:O?, s:s, s:n}, s:s}", "card", "brand",
                json_object_get(card, "brand"), "checks",
                json_deep_copy(json_object_get(card, "checks")), "country",
                json_object_get(card, "country"), "exp_month", json_object_get(card, "exp_month"),
                "exp_year", json_object_get(card, "exp_year"), "fingerprint",
                json_object_get(card, "fingerprint"), "last4", json_object_get(card, "last4"),
                "network", strempty(json_get_str(card, "brand")), "three_d_secure", "type", "card");
}

/*
 * Confirms pi (the world's row, changed in place) with the payment method ref (NULL: the
 * one it holds): the attempt Stripe makes, for a confirm call and for an invoice's payment
 * alike (invoices.c). Success: a succeeded charge, its balance transaction, status
 * succeeded. A card asking for authentication: requires_action (or a decline when off (the
 * customer is not present) or error_on_action). A decline: a failed charge, status
 * requires_payment_method, last_payment_error, and rp holds the 402 (*ret_declined). The
 * intent of an invoice then tells its invoice (stripe_invoice_payment_attempted). 1 done, 0
 * refused before anything changed (rp holds the 400), -ENOMEM.
 */
int stripe_pi_attempt(TwinCall *c, TwinReply *rp, json_t *pi, const char *ref, bool off,
                      bool error_on_action, bool *ret_declined)
{
        int r;
        *ret_declined = false;
        if (!status_open(pi)) {
                const char *st = strempty(json_get_str(pi, "status"));
                r = status_is(pi, "succeeded")
                            ? stripe_invalid(rp, "payment_intent_unexpected_state", NULL,
                                             "You cannot confirm this PaymentIntent because it "
                                             "has already succeeded after being previously "
                                             "confirmed.")
                            : stripe_invalid(rp, "payment_intent_unexpected_state", NULL,
                                             "You cannot confirm this PaymentIntent because it "
                                             "has a status of %s. Only a PaymentIntent with one "
                                             "of the following statuses may be confirmed: %s.",
                                             st, open_states);
                return r < 0 ? r : 0;
        }
        if (!ref)
                ref = json_get_str(pi, "payment_method");
        if (!ref) {
                r = stripe_invalid(rp, "payment_intent_unexpected_state", "payment_method",
                                   "You cannot confirm this PaymentIntent because it's missing "
                                   "a payment method. You can either update the PaymentIntent "
                                   "with a payment method and then confirm it again, or confirm "
                                   "it again directly with a payment method.");
                return r < 0 ? r : 0;
        }
        const char *cus = json_get_str(pi, "customer");
        json_t *pm;
        if ((r = check_pm(c, rp, cus, ref)) <= 0 ||
            (r = stripe_pm_resolve(c, rp, ref, "payment_method", &pm)) <= 0)
                return r;
        if (json_object_set(pi, "payment_method", json_object_get(pm, "id")) < 0)
                return -ENOMEM;
        const char *code = NULL, *message = NULL;
        const char *decline = stripe_pm_decline(pm, &code, &message);
        if (stripe_pm_needs_action(pm)) {
                if (off || error_on_action) {
                        decline = code = "authentication_required";
                        message = "Your card was declined. This transaction requires "
                                  "authentication.";
                } else {
                        json_t *na = json_pack("{s:s, s:{s:s, s:s}}", "type", "use_stripe_sdk",
                                               "use_stripe_sdk", "type", "three_d_secure_redirect",
                                               "stripe_js",
                                               "https://hooks.stripe.com/3d_secure_2/hosted");
                        if (json_object_set_new(pi, "next_action", na) < 0 ||
                            json_object_set_new(pi, "status", json_string("requires_action")) < 0 ||
                            json_object_set_new(pi, "last_payment_error", json_null()) < 0)
                                return -ENOMEM;
                        if ((r = stripe_event(c, "payment_intent.requires_action", pi, NULL)) < 0 ||
                            (r = stripe_invoice_payment_attempted(c, pi)) < 0)
                                return r;
                        return 1;
                }
        }

        char ch_id[40];
        if ((r = stripe_new_id(c->world, "ch", ch_id)) < 0)
                return r;
        int64_t amount = json_integer_value(json_object_get(pi, "amount"));
        const char *currency = strempty(json_get_str(pi, "currency"));
        _cleanup_json_ json_t *ch = stripe_charge_new(ch_id, c->now, amount, currency);
        if (!ch || json_object_set(ch, "customer", json_object_get(pi, "customer")) < 0 ||
            json_object_set(ch, "description", json_object_get(pi, "description")) < 0 ||
            json_object_set(ch, "payment_intent", json_object_get(pi, "id")) < 0 ||
            json_object_set(ch, "invoice", json_object_get(pi, "invoice")) < 0 ||
            json_object_set(ch, "payment_method", json_object_get(pm, "id")) < 0 ||
            json_object_set(ch, "receipt_email", json_object_get(pi, "receipt_email")) < 0 ||
            json_object_set(ch, "billing_details", json_object_get(pm, "billing_details")) < 0 ||
            json_object_set_new(ch, "payment_method_details", pm_details(pm)) < 0)
                return -ENOMEM;

        if (decline) {
                json_t *outcome =
                        json_pack("{s:s, s:s, s:s, s:i, s:s, s:s}", "network_status",
                                  "declined_by_network", "reason", decline, "risk_level", "normal",
                                  "risk_score", 32, "seller_message",
                                  "The bank did not return any further details with this decline.",
                                  "type", "issuer_declined");
                if (json_object_set_new(ch, "status", json_string("failed")) < 0 ||
                    json_object_set_new(ch, "paid", json_false()) < 0 ||
                    json_object_set_new(ch, "captured", json_false()) < 0 ||
                    json_object_set_new(ch, "amount_captured", json_integer(0)) < 0 ||
                    json_object_set_new(ch, "failure_code", json_string(code)) < 0 ||
                    json_object_set_new(ch, "failure_message", json_string(message)) < 0 ||
                    json_object_set_new(ch, "outcome", outcome) < 0)
                        return -ENOMEM;
                char doc[128];
                snprintf(doc, sizeof(doc), "https://stripe.com/docs/error-codes/%s", code);
                for (char *p = doc + strlen("https://stripe.com/docs/error-codes/"); *p; p++)
                        if (*p == '_')
                                *p = '-';
                json_t *lpe =
                        json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:s}", "charge", ch_id, "code",
                                  code, "decline_code", decline, "doc_url", doc, "message", message,
                                  "payment_method", json_deep_copy(pm), "type", "card_error");
                if (stripe_row_add(c->world, "charges", json_incref(ch)) < 0 ||
                    json_object_set_new(pi, "last_payment_error", lpe) < 0 ||
                    json_object_set_new(pi, "latest_charge", json_string(ch_id)) < 0 ||
                    json_object_set_new(pi, "payment_method", json_null()) < 0 ||
                    json_object_set_new(pi, "next_action", json_null()) < 0 ||
                    json_object_set_new(pi, "status", json_string("requires_payment_method")) < 0)
                        return -ENOMEM;
                if ((r = stripe_event(c, "charge.failed", ch, NULL)) < 0 ||
                    (r = stripe_event(c, "payment_intent.payment_failed", pi, NULL)) < 0 ||
                    (r = stripe_invoice_payment_attempted(c, pi)) < 0)
                        return r;
                /* the 402 Stripe answers: the error with the intent as it now is (copies: the
                 * reply may be kept for replays while the world moves on) */
                json_t *err =
                        json_pack("{s:{s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:s}}", "error", "type",
                                  "card_error", "code", code, "decline_code", decline, "message",
                                  message, "charge", ch_id, "payment_intent", json_deep_copy(pi),
                                  "payment_method", json_deep_copy(pm), "doc_url", doc);
                if ((r = twin_reply_body(rp, 402, err)) < 0)
                        return r;
                *ret_declined = true;
                return 1;
        }

        char txn[40];
        bool manual = streq_ptr(json_get_str(pi, "capture_method"), "manual");
        json_t *outcome =
                json_pack("{s:s, s:n, s:s, s:i, s:s, s:s}", "network_status", "approved_by_network",
                          "reason", "risk_level", "normal", "risk_score", 32, "seller_message",
                          "Payment complete.", "type", "authorized");
        char receipt[128];
        snprintf(receipt, sizeof(receipt), "https://pay.stripe.com/receipts/payment/%s", ch_id);
        if (manual) {
                /* authorized only: nothing is booked until the capture */
                if (json_object_set_new(ch, "captured", json_false()) < 0 ||
                    json_object_set_new(ch, "amount_captured", json_integer(0)) < 0)
                        return -ENOMEM;
        } else {
                if ((r = stripe_txn_add(c, "charge", ch_id, amount, stripe_fee(currency, amount),
                                        currency, json_get_str(pi, "description"), txn)) < 0)
                        return r;
                if (json_object_set_new(ch, "balance_transaction", json_string(txn)) < 0)
                        return -ENOMEM;
        }
        if (json_object_set_new(ch, "outcome", outcome) < 0 ||
            json_object_set_new(ch, "receipt_url", json_string(receipt)) < 0 ||
            stripe_row_add(c->world, "charges", json_incref(ch)) < 0 ||
            json_object_set_new(pi, "status",
                                json_string(manual ? "requires_capture" : "succeeded")) < 0 ||
            json_object_set_new(pi, manual ? "amount_capturable" : "amount_received",
                                json_integer(amount)) < 0 ||
            json_object_set_new(pi, "latest_charge", json_string(ch_id)) < 0 ||
            json_object_set_new(pi, "last_payment_error", json_null()) < 0 ||
            json_object_set_new(pi, "next_action", json_null()) < 0)
                return -ENOMEM;
        /* setup_future_usage saves the card to the intent's customer */
        if (cus && json_get_str(pi, "setup_future_usage") &&
            json_is_null(json_object_get(pm, "customer"))) {
                if (json_object_set_new(pm, "customer", json_string(cus)) < 0 ||
                    (r = stripe_event(c, "payment_method.attached", pm, NULL)) < 0)
                        return -ENOMEM;
        }
        if ((r = stripe_event(c, "charge.succeeded", ch, NULL)) < 0 ||
            (r = stripe_event(c,
                              manual ? "payment_intent.amount_capturable_updated"
                                     : "payment_intent.succeeded",
                              pi, NULL)) < 0 ||
            (!manual && (r = stripe_invoice_payment_attempted(c, pi)) < 0))
                return r;
        return 1;
}

/* The uncaptured charge of a requires_capture intent (borrowed), or NULL. */
static json_t *held_charge(TwinCall *c, json_t *pi)
{
        json_t *ch = stripe_find(c->world, "charges", json_get_str(pi, "latest_charge"), NULL);
        return ch && json_is_false(json_object_get(ch, "captured")) ? ch : NULL;
}

/* The flags a confirm call sets on its attempt: off_session, error_on_requires_action. */
static void attempt_flags(TwinCall *c, bool *ret_off, bool *ret_error_on_action)
{
        *ret_off = *ret_error_on_action = false;
        (void)stripe_bool(c->args, "off_session", ret_off);
        (void)stripe_bool(c->args, "error_on_requires_action", ret_error_on_action);
}

/*
 * A card intent's create takes neither of the crypto parameters: payment_method_options
 * (crypto's, or any other method's the twin does not model: Stripe's unknown-parameter
 * refusal, naming the member) and payment_method_data. 1, 0 with the 400 in rp, -ENOMEM.
 */
static int card_only(TwinCall *c, TwinReply *rp)
{
        json_t *opts = json_object_get(c->args, "payment_method_options");
        const char *k;
        json_t *v;
        int r;
        json_object_foreach (opts, k, v) {
                if (streq(k, "crypto"))
                        return stripe_invalid(rp, NULL, "payment_method_options[crypto]",
                                              "payment_method_options[crypto] is only valid with "
                                              "payment_method_types[]=crypto.");
                char name[96];
                snprintf(name, sizeof(name), "payment_method_options[%.60s]", k);
                r = stripe_invalid(rp, "parameter_unknown", name, "Received unknown parameter: %s",
                                   name);
                return r < 0 ? r : 0;
        }
        if (opts && !json_is_object(opts))
                return stripe_invalid(rp, NULL, "payment_method_options", "Invalid object");
        if (json_object_get(c->args, "payment_method_data"))
                return stripe_invalid(rp, NULL, "payment_method_data",
                                      "The pome Stripe twin takes payment_method_data only for a "
                                      "crypto PaymentIntent ({type: crypto}); name a card with "
                                      "payment_method (pm_card_visa, a pm_… id).");
        return 1;
}

int stripe_act_create_payment_intent(TwinCall *c, TwinReply *rp)
{
        int64_t amount;
        const char *currency, *ref, *cus;
        bool do_confirm = false;
        int r;
        if ((r = stripe_arg_amount(c, rp, "amount", true, &amount)) <= 0 ||
            (r = stripe_arg_currency(c, rp, true, &currency)) <= 0 ||
            (r = stripe_arg_str(c, rp, "payment_method", false, &ref)) <= 0 ||
            (r = stripe_arg_bool(c, rp, "confirm", &do_confirm)) <= 0)
                return r;
        _cleanup_json_ json_t *pi = stripe_pi_new("", c->now, amount, currency);
        if (!pi)
                return -ENOMEM;
        if ((r = apply_fields(c, rp, pi)) <= 0)
                return r;
        bool crypto = stripe_pi_is_crypto(pi);
        if (crypto && (r = stripe_crypto_prepare(c, rp, pi)) <= 0)
                return r;
        if (!crypto && (r = card_only(c, rp)) <= 0)
                return r;
        cus = json_get_str(pi, "customer");
        if (ref && (r = check_pm(c, rp, cus, ref)) <= 0)
                return r;
        if (do_confirm && !ref && !crypto)
                return stripe_invalid(rp, "payment_intent_unexpected_state", "payment_method",
                                      "You cannot confirm this PaymentIntent because it's "
                                      "missing a payment method. You can either update the "
                                      "PaymentIntent with a payment method and then confirm it "
                                      "again, or confirm it again directly with a payment "
                                      "method.");
        /* validated: from here on the world changes */
        char id[40], secret[96];
        if ((r = stripe_new_id(c->world, "pi", id)) < 0)
                return r;
        snprintf(secret, sizeof(secret), "%s_secret_pome%lld", id, (long long)c->now);
        if (json_object_set_new(pi, "id", json_string(id)) < 0 ||
            json_object_set_new(pi, "client_secret", json_string(secret)) < 0)
                return -ENOMEM;
        if (ref) {
                json_t *pm;
                if ((r = stripe_pm_resolve(c, rp, ref, "payment_method", &pm)) <= 0)
                        return r;
                if (json_object_set(pi, "payment_method", json_object_get(pm, "id")) < 0 ||
                    json_object_set_new(pi, "status", json_string("requires_confirmation")) < 0)
                        return -ENOMEM;
        }
        if ((r = stripe_row_add(c->world, "payment_intents", json_incref(pi))) < 0 ||
            (r = stripe_event(c, "payment_intent.created", pi, NULL)) < 0)
                return r;
        /* a crypto intent awaits its deposit whether confirmed or not (crypto.c) */
        if (crypto && (r = stripe_crypto_open(c, pi)) < 0)
                return r;
        bool declined = false, off, error_on_action;
        attempt_flags(c, &off, &error_on_action);
        if (do_confirm && !crypto &&
            (r = stripe_pi_attempt(c, rp, pi, NULL, off, error_on_action, &declined)) < 0)
                return r;
        if ((r = stripe_mutated(rp, NULL, pi)) < 0)
                return r;
        return declined ? 0 : stripe_reply_object(c, rp, 200, pi);
}

int stripe_act_retrieve_payment_intent(TwinCall *c, TwinReply *rp)
{
        json_t *pi;
        int r = arg_pi(c, rp, &pi, NULL);
        if (r <= 0)
                return r;
        return stripe_reply_object(c, rp, 200, pi);
}

int stripe_act_update_payment_intent(TwinCall *c, TwinReply *rp)
{
        json_t *pi;
        size_t idx;
        int r = arg_pi(c, rp, &pi, &idx);
        if (r <= 0)
                return r;
        if (!status_open(pi) || stripe_pi_is_crypto(pi)) {
                /* a settled intent keeps its money fields (Stripe's rule), and so does a
                 * crypto one: its deposit addresses were handed out for its amount */
                static const char *const settled_ok[] = {"id",       "description",
                                                         "metadata", "receipt_email",
                                                         "expand",   "statement_descriptor"};
                const char *k;
                json_t *v;
                json_object_foreach (c->args, k, v) {
                        bool ok = false;
                        for (size_t i = 0; i < ELEMENTSOF(settled_ok) && !ok; i++)
                                ok = streq(k, settled_ok[i]);
                        if (!ok && stripe_pi_is_crypto(pi))
                                return stripe_invalid(
                                        rp, "payment_intent_unexpected_state", k,
                                        "This PaymentIntent's %s could not be updated: a crypto "
                                        "PaymentIntent in deposit mode may only have its "
                                        "description, metadata, receipt_email or "
                                        "statement_descriptor updated.",
                                        k);
                        if (!ok)
                                return stripe_invalid(
                                        rp, "payment_intent_unexpected_state", k,
                                        "This PaymentIntent's %s could not be updated because it "
                                        "has a status of %s. You may only update the %s of a "
                                        "PaymentIntent with one of the following statuses: %s.",
                                        k, strempty(json_get_str(pi, "status")), k, open_states);
                }
        }
        _cleanup_json_ json_t *next = json_deep_copy(pi);
        if (!next)
                return -ENOMEM;
        if ((r = apply_fields(c, rp, next)) <= 0)
                return r;
        if (stripe_pi_is_crypto(next) && !stripe_pi_is_crypto(pi))
                return stripe_invalid(rp, "payment_intent_invalid_parameter",
                                      "payment_method_types",
                                      "A PaymentIntent is made a crypto one at its creation "
                                      "(with payment_method_options[crypto]), not by an update.");
        const char *ref;
        if ((r = stripe_arg_str(c, rp, "payment_method", false, &ref)) <= 0)
                return r;
        if (ref && ref[0] && (r = check_pm(c, rp, json_get_str(next, "customer"), ref)) <= 0)
                return r;
        if (ref && ref[0]) {
                json_t *pm;
                if ((r = stripe_pm_resolve(c, rp, ref, "payment_method", &pm)) <= 0)
                        return r;
                if (json_object_set(next, "payment_method", json_object_get(pm, "id")) < 0 ||
                    json_object_set_new(next, "status", json_string("requires_confirmation")) < 0)
                        return -ENOMEM;
        } else if (ref && (json_object_set_new(next, "payment_method", json_null()) < 0 ||
                           json_object_set_new(next, "status",
                                               json_string("requires_payment_method")) < 0))
                return -ENOMEM;
        if (json_equal(next, pi))
                return stripe_reply_object(c, rp, 200, pi);
        if ((r = stripe_mutated(rp, pi, next)) < 0 ||
            (r = stripe_row_replace(c->world, "payment_intents", idx, json_incref(next))) < 0)
                return r;
        return stripe_reply_object(c, rp, 200, next);
}

int stripe_act_confirm_payment_intent(TwinCall *c, TwinReply *rp)
{
        json_t *pi;
        const char *ref, *email, *url, *future;
        static const char *const futures[] = {"on_session", "off_session", NULL};
        bool b;
        int r = arg_pi(c, rp, &pi, NULL);
        if (r <= 0 || (r = stripe_arg_str(c, rp, "payment_method", false, &ref)) <= 0 ||
            (r = stripe_arg_str(c, rp, "receipt_email", false, &email)) <= 0 ||
            (r = stripe_arg_str(c, rp, "return_url", false, &url)) <= 0 ||
            (r = stripe_arg_enum(c, rp, "setup_future_usage", futures, &future)) <= 0 ||
            (r = stripe_arg_bool(c, rp, "off_session", &b)) <= 0 ||
            (r = stripe_arg_bool(c, rp, "error_on_requires_action", &b)) <= 0)
                return r;
        if (stripe_pi_is_crypto(pi)) {
                /* deposit mode: the intent awaits (or had) its deposit; confirming it again
                 * changes nothing (hosted Pome's rule), unless it is over */
                if (status_is(pi, "canceled"))
                        return stripe_invalid(rp, "payment_intent_unexpected_state", NULL,
                                              "You cannot confirm this PaymentIntent because it "
                                              "has a status of canceled.");
                return stripe_reply_object(c, rp, 200, pi);
        }
        _cleanup_json_ json_t *before = json_deep_copy(pi);
        if (!before)
                return -ENOMEM;
        if (status_open(pi)) {
                /* only a confirm that may run sets these (else the 400 changes nothing) */
                if (email && json_object_set_new(pi, "receipt_email", json_string(email)) < 0)
                        return -ENOMEM;
                if (future &&
                    json_object_set_new(pi, "setup_future_usage", json_string(future)) < 0)
                        return -ENOMEM;
        }
        bool declined, off, error_on_action;
        attempt_flags(c, &off, &error_on_action);
        r = stripe_pi_attempt(c, rp, pi, ref, off, error_on_action, &declined);
        if (r <= 0) {
                /* refused before the attempt: put back what was set above */
                if (!json_equal(before, pi) && json_object_update(pi, before) < 0)
                        return -ENOMEM;
                return r;
        }
        if ((r = stripe_mutated(rp, before, pi)) < 0)
                return r;
        return declined ? 0 : stripe_reply_object(c, rp, 200, pi);
}

int stripe_act_cancel_payment_intent(TwinCall *c, TwinReply *rp)
{
        static const char *const reasons[] = {"duplicate", "fraudulent", "requested_by_customer",
                                              "abandoned", NULL};
        json_t *pi;
        const char *reason;
        int r = arg_pi(c, rp, &pi, NULL);
        if (r <= 0 || (r = stripe_arg_enum(c, rp, "cancellation_reason", reasons, &reason)) <= 0)
                return r;
        if (json_get_str(pi, "invoice"))
                /* the invoice owns its intent: voiding the invoice is what cancels it */
                return stripe_invalid(rp, "payment_intent_unexpected_state", NULL,
                                      "You cannot cancel this PaymentIntent because it was "
                                      "created by an invoice (%s). Void the invoice instead.",
                                      json_get_str(pi, "invoice"));
        if (!status_open(pi) && !status_is(pi, "processing") && !status_is(pi, "requires_capture"))
                return stripe_invalid(rp, "payment_intent_unexpected_state", NULL,
                                      "You cannot cancel this PaymentIntent because it has a "
                                      "status of %s. Only a PaymentIntent with one of the "
                                      "following statuses may be canceled: "
                                      "requires_payment_method, requires_capture, "
                                      "requires_confirmation, requires_action, processing.",
                                      strempty(json_get_str(pi, "status")));
        _cleanup_json_ json_t *before = json_deep_copy(pi);
        if (!before)
                return -ENOMEM;
        /* a hold is released: its charge reads as refunded in full, nothing was booked */
        json_t *held = status_is(pi, "requires_capture") ? held_charge(c, pi) : NULL;
        if (held) {
                if (json_object_set(held, "amount_refunded", json_object_get(held, "amount")) < 0 ||
                    json_object_set_new(held, "refunded", json_true()) < 0 ||
                    json_object_set_new(pi, "amount_capturable", json_integer(0)) < 0 ||
                    (r = stripe_event(c, "charge.refunded", held, NULL)) < 0)
                        return -ENOMEM;
        }
        if (json_object_set_new(pi, "status", json_string("canceled")) < 0 ||
            json_object_set_new(pi, "canceled_at", json_integer(c->now)) < 0 ||
            json_object_set_new(pi, "cancellation_reason", json_string_or_null(reason)) < 0 ||
            json_object_set_new(pi, "next_action", json_null()) < 0)
                return -ENOMEM;
        if ((r = stripe_mutated(rp, before, pi)) < 0 ||
            (r = stripe_event(c, "payment_intent.canceled", pi, NULL)) < 0)
                return r;
        return stripe_reply_object(c, rp, 200, pi);
}

/*
 * Captures a requires_capture intent (https://docs.stripe.com/api/payment_intents/capture):
 * amount_to_capture (default: all of amount_capturable) is booked as the charge's balance
 * transaction, the rest released (the charge's amount_refunded), the intent succeeded.
 * Refusals change nothing: another status, more than is capturable.
 */
int stripe_act_capture_payment_intent(TwinCall *c, TwinReply *rp)
{
        json_t *pi;
        int64_t amount = -1;
        int r = arg_pi(c, rp, &pi, NULL);
        if (r <= 0 || (r = stripe_arg_amount(c, rp, "amount_to_capture", false, &amount)) <= 0)
                return r;
        json_t *ch = held_charge(c, pi);
        if (!status_is(pi, "requires_capture") || !ch)
                return stripe_invalid(rp, "payment_intent_unexpected_state", NULL,
                                      "This PaymentIntent could not be captured because it has a "
                                      "status of %s. Only a PaymentIntent with one of the "
                                      "following statuses may be captured: requires_capture.",
                                      strempty(json_get_str(pi, "status")));
        int64_t capturable = json_integer_value(json_object_get(pi, "amount_capturable"));
        if (amount < 0)
                amount = capturable;
        if (amount > capturable)
                return stripe_invalid(rp, "amount_too_large", "amount_to_capture",
                                      "The amount to capture (%lld) must be less than or equal "
                                      "to the PaymentIntent's amount_capturable (%lld).",
                                      (long long)amount, (long long)capturable);
        const char *cur = strempty(json_get_str(pi, "currency"));
        if (amount < (streq(cur, "usd") ? 50 : 1))
                return stripe_invalid(rp, "amount_too_small", "amount_to_capture",
                                      "Amount must be at least %s",
                                      streq(cur, "usd") ? "$0.50 usd" : "1");
        if ((r = stripe_apply_metadata(c, rp, pi)) <= 0)
                return r;
        _cleanup_json_ json_t *before = json_deep_copy(pi);
        char txn[40];
        if (!before || (r = stripe_txn_add(c, "charge", json_get_str(ch, "id"), amount,
                                           stripe_fee(cur, amount), cur,
                                           json_get_str(pi, "description"), txn)) < 0)
                return -ENOMEM;
        int64_t total = json_integer_value(json_object_get(ch, "amount"));
        if (json_object_set_new(ch, "captured", json_true()) < 0 ||
            json_object_set_new(ch, "amount_captured", json_integer(amount)) < 0 ||
            json_object_set_new(ch, "amount_refunded", json_integer(total - amount)) < 0 ||
            json_object_set_new(ch, "balance_transaction", json_string(txn)) < 0 ||
            json_object_set_new(pi, "status", json_string("succeeded")) < 0 ||
            json_object_set_new(pi, "amount_capturable", json_integer(0)) < 0 ||
            json_object_set_new(pi, "amount_received", json_integer(amount)) < 0)
                return -ENOMEM;
        if ((r = stripe_mutated(rp, before, pi)) < 0 ||
            (r = stripe_event(c, "charge.captured", ch, NULL)) < 0 ||
            (r = stripe_event(c, "payment_intent.succeeded", pi, NULL)) < 0)
                return r;
        return stripe_reply_object(c, rp, 200, pi);
}

static bool keep_pi(TwinCall *c, json_t *row)
{
        const char *cus = json_get_str(c->args, "customer");
        return !cus || streq_ptr(json_get_str(row, "customer"), cus);
}

int stripe_act_list_payment_intents(TwinCall *c, TwinReply *rp)
{
        const char *cus;
        int r = stripe_arg_str(c, rp, "customer", false, &cus);
        if (r <= 0)
                return r;
        return stripe_list(c, rp, "payment_intents", "/v1/payment_intents", keep_pi);
}
