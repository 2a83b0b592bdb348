/* SPDX-License-Identifier: MIT */
/*
 * Payment methods (https://docs.stripe.com/api/payment_methods): card payment methods made
 * from a test card number or token, retrieved, attached to and detached from customers.
 * Stripe's test ids (pm_card_visa, pm_card_chargeDeclined, …,
 * https://docs.stripe.com/testing#cards) are accepted wherever a payment method is named
 * and, as on Stripe, each use makes a new pm_… of that card. A card behaves as its test
 * number does (declines, 3-D Secure), told by its last4.
 */
#include <strings.h>

#include "common/json-util.h"
#include "pods/stripe/stripe.h"

typedef struct TestCard {
        const char *pm, *token, *number, *brand, *last4;
        const char *decline_code; /* NULL: the charge succeeds */
        const char *code;         /* the error's code (card_declined unless the card says) */
        const char *message;
        bool action; /* requires 3-D Secure: the payment intent goes to requires_action */
} TestCard;

static const TestCard test_cards[] = {
        {"pm_card_visa", "tok_visa", "4242424242424242", "visa", "4242"},
        {"pm_card_visa_debit", "tok_visa_debit", "4000056655665556", "visa", "5556"},
        {"pm_card_mastercard", "tok_mastercard", "5555555555554444", "mastercard", "4444"},
        {"pm_card_amex", "tok_amex", "378282246310005", "amex", "0005"},
        {"pm_card_discover", "tok_discover", "6011111111111117", "discover", "1117"},
        {"pm_card_chargeDeclined", "tok_chargeDeclined", "4000000000000002", "visa", "0002",
         "generic_decline", "card_declined", "Your card was declined."},
        /* attaches, then declines every charge: a renewal that fails after a good start */
        {"pm_card_chargeCustomerFail", "tok_chargeCustomerFail", "4000000000000341", "visa", "0341",
         "generic_decline", "card_declined", "Your card was declined."},
        {"pm_card_chargeDeclinedInsufficientFunds", "tok_chargeDeclinedInsufficientFunds",
         "4000000000009995", "visa", "9995", "insufficient_funds", "card_declined",
         "Your card has insufficient funds."},
        {"pm_card_chargeDeclinedLostCard", "tok_chargeDeclinedLostCard", "4000000000009987", "visa",
         "9987", "lost_card", "card_declined", "Your card was declined."},
        {"pm_card_chargeDeclinedStolenCard", "tok_chargeDeclinedStolenCard", "4000000000009979",
         "visa", "9979", "stolen_card", "card_declined", "Your card was declined."},
        {"pm_card_chargeDeclinedFraudulent", "tok_chargeDeclinedFraudulent", "4100000000000019",
         "visa", "0019", "fraudulent", "card_declined", "Your card was declined."},
        {"pm_card_chargeDeclinedExpiredCard", "tok_chargeDeclinedExpiredCard", "4000000000000069",
         "visa", "0069", "expired_card", "expired_card", "Your card has expired."},
        {"pm_card_chargeDeclinedIncorrectCvc", "tok_chargeDeclinedIncorrectCvc", "4000000000000127",
         "visa", "0127", "incorrect_cvc", "incorrect_cvc",
         "Your card's security code is incorrect."},
        {"pm_card_chargeDeclinedProcessingError", "tok_chargeDeclinedProcessingError",
         "4000000000000119", "visa", "0119", "processing_error", "processing_error",
         "An error occurred while processing your card. Try again in a little bit."},
        {"pm_card_authenticationRequired", "tok_authenticationRequired", "4000002760003184", "visa",
         "3184", .action = true},
        {"pm_card_threeDSecure2Required", "tok_threeDSecure2Required", "4000000000003220", "visa",
         "3220", .action = true},
};

static const TestCard *card_by(const char *pm, const char *token, const char *number)
{
        for (size_t i = 0; i < ELEMENTSOF(test_cards); i++) {
                const TestCard *t = &test_cards[i];
                if ((pm && streq(pm, t->pm)) || (token && streq(token, t->token)) ||
                    (number && streq(number, t->number)))
                        return t;
        }
        return NULL;
}

static const TestCard *card_of(const json_t *pm)
{
        const char *last4 = json_get_str(json_object_get(pm, "card"), "last4");
        for (size_t i = 0; last4 && i < ELEMENTSOF(test_cards); i++)
                if (streq(last4, test_cards[i].last4))
                        return &test_cards[i];
        return NULL;
}

/*
 * How a charge on pm ends: NULL when it succeeds, else the decline_code ("generic_decline",
 * "insufficient_funds"…) with Stripe's error code and message in *ret_code, *ret_message.
 */
const char *stripe_pm_decline(const json_t *pm, const char **ret_code, const char **ret_message)
{
        const TestCard *t = card_of(pm);
        if (!t || !t->decline_code)
                return NULL;
        *ret_code = t->code;
        *ret_message = t->message;
        return t->decline_code;
}

/* Whether a payment on pm asks for 3-D Secure first (pm_card_authenticationRequired). */
bool stripe_pm_needs_action(const json_t *pm)
{
        const TestCard *t = card_of(pm);
        return t && t->action;
}

/* Makes and stores a new card payment method (borrowed into *ret). 0 or -ENOMEM. */
static int pm_add(TwinCall *c, const char *brand, const char *last4, json_t **ret)
{
        char id[40];
        int r = stripe_new_id(c->world, "pm", id);
        if (r < 0)
                return r;
        json_t *pm = stripe_pm_new(id, c->now, brand, last4);
        if ((r = stripe_row_add(c->world, "payment_methods", pm)) < 0)
                return r;
        *ret = pm;
        return 0;
}

/* Whether ref is one of Stripe's test payment method ids (pm_card_visa …). */
bool stripe_pm_test_id(const char *ref)
{
        return card_by(ref, NULL, NULL) != NULL;
}

/*
 * The payment method ref names (param for the error): a stored pm_…, or a Stripe test id
 * (pm_card_visa …) which becomes a new stored payment method. 1 with *ret (borrowed), 0 with
 * 404 resource_missing in rp, -ENOMEM. A new one is a world change the caller records.
 */
int stripe_pm_resolve(TwinCall *c, TwinReply *rp, const char *ref, const char *param, json_t **ret)
{
        json_t *pm = stripe_find(c->world, "payment_methods", ref, NULL);
        if (pm) {
                *ret = pm;
                return 1;
        }
        const TestCard *t = card_by(ref, NULL, NULL);
        if (!t) {
                int r = stripe_missing(rp, "payment_methods", ref, param);
                return r < 0 ? r : 0;
        }
        int r = pm_add(c, t->brand, t->last4, ret);
        return r < 0 ? r : 1;
}

static bool luhn(const char *s)
{
        int sum = 0;
        size_t n = strlen(s);
        for (size_t i = 0; i < n; i++) {
                int d = s[n - 1 - i] - '0';
                if (i % 2) {
                        d *= 2;
                        if (d > 9)
                                d -= 9;
                }
                sum += d;
        }
        return n >= 12 && n <= 19 && strspn(s, "0123456789") == n && sum % 10 == 0;
}

int stripe_act_create_payment_method(TwinCall *c, TwinReply *rp)
{
        static const char *const types[] = {"card", NULL};
        const char *type;
        int r = stripe_arg_enum(c, rp, "type", types, &type);
        if (r <= 0)
                return r;
        json_t *card = json_object_get(c->args, "card");
        if (!type && !card)
                return stripe_invalid(rp, "parameter_missing", "type",
                                      "Missing required param: type.");
        if (!json_is_object(card))
                return stripe_invalid(rp, "parameter_missing", "card",
                                      "Missing required param: card.");
        const char *number = json_get_str(card, "number"), *token = json_get_str(card, "token");
        const char *brand, *last4;
        char l4[5];
        const TestCard *t = card_by(NULL, token, number);
        if (t) {
                brand = t->brand;
                last4 = t->last4;
        } else if (token) {
                return stripe_fail(rp, 404, "invalid_request_error", "resource_missing",
                                   "card[token]", "No such token: '%s'", token);
        } else if (number) {
                if (!luhn(number))
                        return stripe_fail(rp, 402, "card_error", "incorrect_number",
                                           "card[number]", "Your card number is incorrect.");
                brand = number[0] == '4'   ? "visa"
                        : number[0] == '5' ? "mastercard"
                        : number[0] == '3' ? "amex"
                        : number[0] == '6' ? "discover"
                                           : "unknown";
                snprintf(l4, sizeof(l4), "%s", number + strlen(number) - 4);
                last4 = l4;
        } else
                return stripe_invalid(rp, "parameter_missing", "card[number]",
                                      "Missing required param: card[number].");
        int64_t month = 12, year = 2034;
        if (json_object_get(card, "exp_month") &&
            twin_arg_int(card, "exp_month", 1, 12, &month) < 0)
                return stripe_fail(rp, 402, "card_error", "invalid_expiry_month", "card[exp_month]",
                                   "Your card's expiration month is invalid.");
        if (json_object_get(card, "exp_year")) {
                /* two digits mean this century; a year already over is refused */
                bool ok = twin_arg_int(card, "exp_year", 0, 9999, &year) == 0;
                if (ok && year < 100)
                        year += 2000;
                if (!ok || year < 1970 + c->now / 31556952)
                        return stripe_fail(rp, 402, "card_error", "invalid_expiry_year",
                                           "card[exp_year]",
                                           "Your card's expiration year is invalid.");
        }
        json_t *billing = json_object_get(c->args, "billing_details");
        if (billing && !json_is_object(billing))
                return stripe_invalid(rp, NULL, "billing_details", "Invalid object");
        _cleanup_json_ json_t *probe = json_object();
        if (!probe)
                return -ENOMEM;
        if ((r = stripe_apply_metadata(c, rp, probe)) <= 0)
                return r;

        json_t *pm;
        if ((r = pm_add(c, brand, last4, &pm)) < 0)
                return r;
        json_t *cd = json_object_get(pm, "card");
        if (json_object_set_new(cd, "exp_month", json_integer(month)) < 0 ||
            json_object_set_new(cd, "exp_year", json_integer(year)) < 0 ||
            (json_object_get(probe, "metadata") &&
             json_object_set(pm, "metadata", json_object_get(probe, "metadata")) < 0))
                return -ENOMEM;
        if (billing) {
                json_t *bd = json_object_get(pm, "billing_details");
                const char *k;
                json_t *v;
                json_object_foreach (billing, k, v) {
                        if (json_object_get(bd, k) && json_object_set(bd, k, v) < 0)
                                return -ENOMEM;
                }
        }
        if ((r = stripe_mutated(rp, NULL, pm)) < 0)
                return r;
        return stripe_reply_object(c, rp, 200, pm);
}

int stripe_act_retrieve_payment_method(TwinCall *c, TwinReply *rp)
{
        const char *id;
        json_t *pm;
        int r = stripe_arg_id(c, rp, "id", &id);
        if (r <= 0)
                return r;
        bool made = !stripe_find(c->world, "payment_methods", id, NULL);
        if ((r = stripe_pm_resolve(c, rp, id, "id", &pm)) <= 0)
                return r;
        if (made && (r = stripe_mutated(rp, NULL, pm)) < 0)
                return r;
        return stripe_reply_object(c, rp, 200, pm);
}

int stripe_act_attach_payment_method(TwinCall *c, TwinReply *rp)
{
        const char *id, *cus_id;
        int r = stripe_arg_id(c, rp, "id", &id);
        if (r <= 0 || (r = stripe_arg_str(c, rp, "customer", true, &cus_id)) <= 0)
                return r;
        json_t *cus = stripe_find(c->world, "customers", cus_id, NULL);
        if (!cus || json_is_true(json_object_get(cus, "deleted")))
                return stripe_missing(rp, "customers", cus_id, "customer");
        json_t *pm = stripe_find(c->world, "payment_methods", id, NULL);
        const char *owner = json_get_str(pm, "customer");
        if (owner && streq(owner, cus_id))
                return stripe_reply_object(c, rp, 200, pm);
        if (owner)
                return stripe_invalid(rp, NULL, NULL,
                                      "The payment method you provided has already been attached "
                                      "to a customer.");
        if ((r = stripe_pm_resolve(c, rp, id, "id", &pm)) <= 0)
                return r;
        _cleanup_json_ json_t *before = json_deep_copy(pm);
        if (!before || json_object_set_new(pm, "customer", json_string(cus_id)) < 0)
                return -ENOMEM;
        if ((r = stripe_mutated(rp, json_equal(before, pm) ? NULL : before, pm)) < 0 ||
            (r = stripe_event(c, "payment_method.attached", pm, NULL)) < 0)
                return r;
        return stripe_reply_object(c, rp, 200, pm);
}

int stripe_act_detach_payment_method(TwinCall *c, TwinReply *rp)
{
        const char *id;
        int r = stripe_arg_id(c, rp, "id", &id);
        if (r <= 0)
                return r;
        json_t *pm = stripe_find(c->world, "payment_methods", id, NULL);
        if (!pm)
                return stripe_missing(rp, "payment_methods", id, "id");
        const char *owner = json_get_str(pm, "customer");
        if (!owner)
                return stripe_invalid(rp, NULL, NULL,
                                      "The payment method you provided is not attached to a "
                                      "customer so detachment is impossible.");
        /* the customer's default stops pointing at it */
        json_t *cus = stripe_find(c->world, "customers", owner, NULL);
        json_t *settings = json_object_get(cus, "invoice_settings");
        if (streq_ptr(json_get_str(settings, "default_payment_method"), id) &&
            json_object_set_new(settings, "default_payment_method", json_null()) < 0)
                return -ENOMEM;
        _cleanup_json_ json_t *before = json_deep_copy(pm);
        if (!before || json_object_set_new(pm, "customer", json_null()) < 0)
                return -ENOMEM;
        if ((r = stripe_mutated(rp, before, pm)) < 0 ||
            (r = stripe_event(c, "payment_method.detached", pm, NULL)) < 0)
                return r;
        return stripe_reply_object(c, rp, 200, pm);
}

static bool keep_pm(TwinCall *c, json_t *row)
{
        const char *cus = json_get_str(c->args, "customer"), *type = json_get_str(c->args, "type");
        return (!cus || streq_ptr(json_get_str(row, "customer"), cus)) &&
               (!type || streq_ptr(json_get_str(row, "type"), type));
}

/*
 * GET /v1/payment_methods (https://docs.stripe.com/api/payment_methods/list): the payment
 * methods, of a customer (customer) and of a type (type) when given, newest first, as
 * stripe-python's PaymentMethod.list(customer=…, type=…) asks; an unknown customer is 404
 * resource_missing.
 */
int stripe_act_list_payment_methods(TwinCall *c, TwinReply *rp)
{
        const char *cus, *type;
        int r = stripe_arg_str(c, rp, "customer", false, &cus);
        if (r <= 0 || (r = stripe_arg_str(c, rp, "type", false, &type)) <= 0)
                return r;
        if (cus && !stripe_find(c->world, "customers", cus, NULL))
                return stripe_missing(rp, "customers", cus, "customer");
        return stripe_list(c, rp, "payment_methods", "/v1/payment_methods", keep_pm);
}
