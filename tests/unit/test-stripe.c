/* SPDX-License-Identifier: MIT */
/*
 * The Stripe twin at the engine: what the official SDK sends (form bodies with brackets,
 * Idempotency-Key) and what it must read back — the payment intent status machine, declines
 * as 402 card_error, refunds and their refusals, the balance, events in order, idempotent
 * replays and conflicts, failure injection, unknown parameters, expansion, lists, MCP parity
 * and strict seeds (hosted Pome's task seed loads unmodified). Billing: products, prices,
 * subscriptions and the invoices they pay through the payment intents' own attempt, test
 * clocks that renew them, and the seeds' billing rows. x402: the 402 challenge of a seeded
 * resource, the paid retry and its settlement, every refusal (the world unchanged), nonces
 * spent once, and the seed's x402_resources checked as strictly as the rest. Hosted Pome's
 * task features (issue 23): failure injection's after_handler and before_handler modes (a
 * kept refund under a lost reply, its Idempotency-Key replaying it), crypto PaymentIntents in
 * deposit mode and the simulate_crypto_deposit helper, and the x402 resource served without
 * a seed, paid as a PaymentIntent.
 */
#include <stdarg.h>

#include "common/json-util.h"
#include "pods/twin/kind.h"
#include "tests/unit/check.h"
#include "tests/unit/twin-test-util.h"

#define FORM "application/x-www-form-urlencoded"

/* A stripe twin from a seed written inline (JSON text). */
static Twin *twin_seed_text(const char *text)
{
        json_error_t e;
        _cleanup_json_ json_t *seed = json_loads(text, 0, &e);
        if (!seed) {
                fprintf(stderr, "seed: %s\n", e.text);
                exit(1);
        }
        return twin_test_from(&twin_kind_stripe, seed);
}

/* What stripe-node does: a form body, and on POST an Idempotency-Key (key may be NULL). */
static void call(Twin *t, TwinReply *rp, const char *method, const char *path, const char *form,
                 const char *key)
{
        _cleanup_json_ json_t *headers = json_pack("{s:s}", "content-type", FORM);
        if (key)
                json_object_set_new(headers, "idempotency-key", json_string(key));
        bool get = streq(method, "GET") || streq(method, "DELETE");
        TwinRequest rq = {.method = method,
                          .path = path,
                          .query = get && form ? form : "",
                          .headers = headers,
                          .body = get ? NULL : form,
                          .body_len = get || !form ? 0 : strlen(form),
                          .base_url = TWIN_TEST_BASE("stripe")};
        twin_reply_done(rp);
        twin_handle(t, &rq, rp);
}

static void post(Twin *t, TwinReply *rp, const char *path, const char *form)
{
        call(t, rp, "POST", path, form, NULL);
}

static void get(Twin *t, TwinReply *rp, const char *path, const char *query)
{
        call(t, rp, "GET", path, query, NULL);
}

static size_t rows(Twin *t, const char *collection)
{
        return json_array_size(json_object_get(twin_world(t), collection));
}

/* The types of the world's events, oldest first, joined by spaces, into buf. */
static const char *event_types(Twin *t, char *buf, size_t len)
{
        size_t i, l = 0;
        json_t *e;
        buf[0] = 0;
        json_array_foreach (json_object_get(twin_world(t), "events"), i, e) {
                l += (size_t)snprintf(buf + l, len - l, "%s%s", l ? " " : "",
                                      json_get_str(e, "type"));
                if (l >= len)
                        break;
        }
        return buf;
}

static void test_payment(void)
{
        Twin *t = twin_test_new("stripe", "default");
        TwinReply rp = {};
        char path[128], buf[1024];

        post(t, &rp, "/v1/customers", "email=ada%40example.com&name=Ada&metadata[plan]=pro");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/object"), "customer"));
        CHECK(streq(rp.tool, "create_customer") && rp.state_mutation);
        CHECK(streq(jps(rp.body, "/metadata/plan"), "pro"));
        CHECK(jpi(rp.body, "/created") == TWIN_TEST_NOW);
        char cus[64];
        snprintf(cus, sizeof(cus), "%s", jps(rp.body, "/id"));
        CHECK(strncmp(cus, "cus_", 4) == 0 && strlen(cus) == 18);

        /* a test id becomes a new payment method, attached */
        snprintf(buf, sizeof(buf), "customer=%s", cus);
        post(t, &rp, "/v1/payment_methods/pm_card_visa/attach", buf);
        CHECK(rp.status == 200 && streq(jps(rp.body, "/customer"), cus));
        CHECK(strncmp(jps(rp.body, "/id"), "pm_", 3) == 0 &&
              !streq(jps(rp.body, "/id"), "pm_card_visa"));
        CHECK(streq(jps(rp.body, "/card/brand"), "visa") &&
              streq(jps(rp.body, "/card/last4"), "4242"));
        char pm[64];
        snprintf(pm, sizeof(pm), "%s", jps(rp.body, "/id"));
        snprintf(path, sizeof(path), "/v1/customers/%s/payment_methods", cus);
        get(t, &rp, path, "type=card");
        CHECK(json_array_size(jp(rp.body, "/data")) == 1 && streq(jps(rp.body, "/data/0/id"), pm));
        CHECK(streq(jps(rp.body, "/url"), path) && streq(rp.tool, "list_customer_payment_methods"));

        /* confirm: true → succeeded, a charge, a balance transaction with Stripe's fee */
        snprintf(buf, sizeof(buf),
                 "amount=2000&currency=usd&customer=%s&payment_method=%s&confirm=true&expand[]="
                 "latest_charge",
                 cus, pm);
        post(t, &rp, "/v1/payment_intents", buf);
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "succeeded"));
        CHECK(jpi(rp.body, "/amount_received") == 2000);
        CHECK(streq(jps(rp.body, "/latest_charge/object"), "charge"));
        CHECK(streq(jps(rp.body, "/latest_charge/status"), "succeeded"));
        CHECK(json_is_true(jp(rp.body, "/latest_charge/paid")));
        CHECK(streq(jps(rp.body, "/latest_charge/payment_method"), pm));
        const char *txn = jps(rp.body, "/latest_charge/balance_transaction");
        CHECK(txn && strncmp(txn, "txn_", 4) == 0);
        snprintf(path, sizeof(path), "%s", jps(rp.body, "/latest_charge/id"));
        CHECK(rows(t, "charges") == 1 && rows(t, "balance_transactions") == 1);
        json_t *bt = jp(twin_world(t), "/balance_transactions/0");
        CHECK(jpi(bt, "/amount") == 2000 && jpi(bt, "/fee") == 88 && jpi(bt, "/net") == 1912);
        CHECK(streq(jps(bt, "/source"), path));

        get(t, &rp, "/v1/balance", NULL);
        CHECK(streq(jps(rp.body, "/object"), "balance"));
        CHECK(jpi(rp.body, "/available/0/amount") == 1912);
        CHECK(streq(jps(rp.body, "/available/0/currency"), "usd"));
        CHECK(streq(rp.tool, "retrieve_balance") && !rp.state_mutation);

        get(t, &rp, "/v1/charges", "payment_intent=pi_nope");
        CHECK(json_array_size(jp(rp.body, "/data")) == 0);
        snprintf(buf, sizeof(buf), "customer=%s&expand[]=data.balance_transaction", cus);
        get(t, &rp, "/v1/charges", buf);
        CHECK(json_array_size(jp(rp.body, "/data")) == 1);
        CHECK(jpi(rp.body, "/data/0/balance_transaction/fee") == 88);

        /* every change emitted its event, in order; the list is newest first */
        CHECK(streq(event_types(t, buf, sizeof(buf)),
                    "customer.created payment_method.attached payment_intent.created "
                    "charge.succeeded payment_intent.succeeded"));
        get(t, &rp, "/v1/events", "limit=2");
        CHECK(streq(jps(rp.body, "/data/0/type"), "payment_intent.succeeded"));
        CHECK(streq(jps(rp.body, "/data/1/type"), "charge.succeeded"));
        CHECK(json_is_true(jp(rp.body, "/has_more")));
        CHECK(streq(jps(rp.body, "/data/0/data/object/status"), "succeeded"));
        get(t, &rp, "/v1/events", "type=charge.*");
        CHECK(json_array_size(jp(rp.body, "/data")) == 1);
        snprintf(path, sizeof(path), "/v1/events/%s", jps(rp.body, "/data/0/id"));
        get(t, &rp, path, NULL);
        CHECK(rp.status == 200 && streq(jps(rp.body, "/type"), "charge.succeeded"));
        CHECK(streq(rp.tool, "retrieve_event"));
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_status_machine(void)
{
        Twin *t = twin_test_new("stripe", "default");
        TwinReply rp = {};
        char path[128], id[64];

        post(t, &rp, "/v1/payment_intents", "amount=1500&currency=USD");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "requires_payment_method"));
        CHECK(streq(jps(rp.body, "/currency"), "usd"));
        snprintf(id, sizeof(id), "%s", jps(rp.body, "/id"));

        /* confirming without a payment method is refused and changes nothing */
        snprintf(path, sizeof(path), "/v1/payment_intents/%s/confirm", id);
        _cleanup_json_ json_t *w0 = json_deep_copy(twin_world(t));
        post(t, &rp, path, NULL);
        CHECK(rp.status == 400 &&
              streq(jps(rp.body, "/error/code"), "payment_intent_unexpected_state"));
        CHECK(!rp.state_mutation && json_equal(w0, twin_world(t)));

        snprintf(path, sizeof(path), "/v1/payment_intents/%s", id);
        post(t, &rp, path, "payment_method=pm_card_authenticationRequired&description=3ds");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "requires_confirmation"));
        CHECK(streq(rp.tool, "update_payment_intent") && rp.state_mutation);

        snprintf(path, sizeof(path), "/v1/payment_intents/%s/confirm", id);
        post(t, &rp, path, NULL);
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "requires_action"));
        CHECK(streq(jps(rp.body, "/next_action/type"), "use_stripe_sdk"));
        CHECK(rows(t, "charges") == 0);

        post(t, &rp, path, "payment_method=pm_card_mastercard");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "succeeded"));
        CHECK(json_is_null(jp(rp.body, "/next_action")));

        post(t, &rp, path, NULL);
        CHECK(rp.status == 400 &&
              streq(jps(rp.body, "/error/code"), "payment_intent_unexpected_state"));
        snprintf(path, sizeof(path), "/v1/payment_intents/%s/cancel", id);
        post(t, &rp, path, NULL);
        CHECK(rp.status == 400 && strstr(jps(rp.body, "/error/message"), "status of succeeded"));
        snprintf(path, sizeof(path), "/v1/payment_intents/%s", id);
        post(t, &rp, path, "amount=999");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/param"), "amount"));
        post(t, &rp, path, "metadata[order]=42");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/metadata/order"), "42"));

        post(t, &rp, "/v1/payment_intents", "amount=900&currency=usd");
        snprintf(path, sizeof(path), "/v1/payment_intents/%s/cancel", jps(rp.body, "/id"));
        post(t, &rp, path, "cancellation_reason=abandoned");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "canceled"));
        CHECK(jpi(rp.body, "/canceled_at") == TWIN_TEST_NOW);
        CHECK(streq(jps(rp.body, "/cancellation_reason"), "abandoned"));
        post(t, &rp, path, "cancellation_reason=bored");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/param"), "cancellation_reason"));

        /* Stripe's validation of a new intent */
        post(t, &rp, "/v1/payment_intents", "currency=usd");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/code"), "parameter_missing") &&
              streq(jps(rp.body, "/error/param"), "amount"));
        post(t, &rp, "/v1/payment_intents", "amount=20&currency=usd");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/code"), "amount_too_small"));
        post(t, &rp, "/v1/payment_intents", "amount=abc&currency=usd");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/message"), "Invalid integer: abc"));
        post(t, &rp, "/v1/payment_intents", "amount=2000&currency=usd&customer=cus_x");
        CHECK(rp.status == 404 && streq(jps(rp.body, "/error/code"), "resource_missing"));
        CHECK(streq(jps(rp.body, "/error/message"), "No such customer: 'cus_x'"));
        CHECK(streq(jps(rp.body, "/error/param"), "customer"));
        get(t, &rp, "/v1/payment_intents/pi_nope", NULL);
        CHECK(rp.status == 404 && streq(jps(rp.body, "/error/type"), "invalid_request_error"));
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_declines(void)
{
        Twin *t = twin_test_new("stripe", "default");
        TwinReply rp = {};
        char buf[1024], path[128];

        post(t, &rp, "/v1/payment_intents",
             "amount=5000&currency=usd&payment_method=pm_card_chargeDeclined&confirm=true");
        CHECK(rp.status == 402 && rp.state_mutation);
        CHECK(streq(jps(rp.body, "/error/type"), "card_error"));
        CHECK(streq(jps(rp.body, "/error/code"), "card_declined"));
        CHECK(streq(jps(rp.body, "/error/decline_code"), "generic_decline"));
        CHECK(streq(jps(rp.body, "/error/message"), "Your card was declined."));
        CHECK(streq(jps(rp.body, "/error/payment_intent/status"), "requires_payment_method"));
        CHECK(streq(jps(rp.body, "/error/payment_intent/last_payment_error/decline_code"),
                    "generic_decline"));
        CHECK(strstr(rp.error, "declined") != NULL);
        const char *ch = jps(rp.body, "/error/charge");
        CHECK(ch && streq(jps(twin_world(t), "/charges/0/id"), ch));
        CHECK(streq(jps(twin_world(t), "/charges/0/status"), "failed"));
        CHECK(streq(jps(twin_world(t), "/charges/0/failure_code"), "card_declined"));
        CHECK(rows(t, "balance_transactions") == 0);
        CHECK(streq(event_types(t, buf, sizeof(buf)),
                    "payment_intent.created charge.failed payment_intent.payment_failed"));

        /* the agent's retry: another card on the same intent */
        snprintf(path, sizeof(path), "/v1/payment_intents/%s/confirm",
                 jps(rp.body, "/error/payment_intent/id"));
        post(t, &rp, path, "payment_method=pm_card_chargeDeclinedInsufficientFunds");
        CHECK(rp.status == 402 && streq(jps(rp.body, "/error/decline_code"), "insufficient_funds"));
        CHECK(streq(jps(rp.body, "/error/message"), "Your card has insufficient funds."));
        post(t, &rp, path, "payment_method=pm_card_visa");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "succeeded"));
        CHECK(json_is_null(jp(rp.body, "/last_payment_error")));
        CHECK(rows(t, "charges") == 3);
        get(t, &rp, "/v1/charges", "limit=1");
        CHECK(streq(jps(rp.body, "/data/0/status"), "succeeded"));

        /* a card number that fails Luhn is a card_error at creation */
        post(t, &rp, "/v1/payment_methods", "type=card&card[number]=4242424242424241");
        CHECK(rp.status == 402 && streq(jps(rp.body, "/error/code"), "incorrect_number"));
        post(t, &rp, "/v1/payment_methods",
             "type=card&card[number]=4000000000009995&card[exp_month]=4&card[exp_year]=30");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/card/last4"), "9995") &&
              jpi(rp.body, "/card/exp_year") == 2030);
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_refunds(void)
{
        Twin *t = twin_test_new("stripe", "default");
        TwinReply rp = {};
        char buf[256], ch[64];

        post(t, &rp, "/v1/payment_intents",
             "amount=2000&currency=usd&payment_method=pm_card_visa&confirm=true");
        snprintf(ch, sizeof(ch), "%s", jps(rp.body, "/latest_charge"));
        const char *pi = jps(rp.body, "/id");
        snprintf(buf, sizeof(buf), "payment_intent=%s&amount=500&reason=requested_by_customer", pi);

        post(t, &rp, "/v1/refunds", buf);
        CHECK(rp.status == 200 && streq(jps(rp.body, "/object"), "refund"));
        CHECK(jpi(rp.body, "/amount") == 500 && streq(jps(rp.body, "/charge"), ch));
        CHECK(streq(jps(rp.body, "/status"), "succeeded") && streq(rp.tool, "create_refund"));
        CHECK(jpi(twin_world(t), "/charges/0/amount_refunded") == 500);
        CHECK(json_is_false(jp(twin_world(t), "/charges/0/refunded")));

        snprintf(buf, sizeof(buf), "charge=%s&amount=3000", ch);
        post(t, &rp, "/v1/refunds", buf);
        CHECK(rp.status == 400 &&
              streq(jps(rp.body, "/error/message"),
                    "Refund amount ($30.00) is greater than unrefunded amount on charge ($15.00)"));

        snprintf(buf, sizeof(buf), "charge=%s", ch);
        post(t, &rp, "/v1/refunds", buf);
        CHECK(rp.status == 200 && jpi(rp.body, "/amount") == 1500);
        CHECK(json_is_true(jp(twin_world(t), "/charges/0/refunded")));

        _cleanup_json_ json_t *w = json_deep_copy(twin_world(t));
        post(t, &rp, "/v1/refunds", buf);
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/code"), "charge_already_refunded"));
        char msg[128];
        snprintf(msg, sizeof(msg), "Charge %s has already been refunded.", ch);
        CHECK(streq(jps(rp.body, "/error/message"), msg));
        CHECK(!rp.state_mutation && json_equal(w, twin_world(t)));

        /* a refund larger than a fresh charge */
        post(t, &rp, "/v1/payment_intents",
             "amount=2000&currency=usd&payment_method=pm_card_visa&confirm=true");
        snprintf(buf, sizeof(buf), "charge=%s&amount=3000", jps(rp.body, "/latest_charge"));
        post(t, &rp, "/v1/refunds", buf);
        CHECK(rp.status == 400 &&
              streq(jps(rp.body, "/error/message"),
                    "Refund amount ($30.00) is greater than charge amount ($20.00)"));

        get(t, &rp, "/v1/balance_transactions", "type=refund");
        CHECK(json_array_size(jp(rp.body, "/data")) == 2);
        CHECK(jpi(rp.body, "/data/0/amount") == -1500 && jpi(rp.body, "/data/1/amount") == -500);
        get(t, &rp, "/v1/balance", NULL);
        CHECK(jpi(rp.body, "/available/0/amount") == (2000 - 88) * 2 - 2000);
        snprintf(buf, sizeof(buf), "charge=%s", ch);
        get(t, &rp, "/v1/refunds", buf);
        CHECK(json_array_size(jp(rp.body, "/data")) == 2);
        get(t, &rp, "/v1/events", "type=charge.refunded");
        CHECK(json_array_size(jp(rp.body, "/data")) == 2);
        CHECK(jpi(rp.body, "/data/0/data/previous_attributes/amount_refunded") == 500);
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_manual_capture(void)
{
        Twin *t = twin_test_new("stripe", "default");
        TwinReply rp = {};
        char path[128], buf[256], ch[64], pi[64];
        post(t, &rp, "/v1/payment_intents",
             "amount=2000&currency=usd&payment_method=pm_card_visa&confirm=true&capture_method="
             "manual");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "requires_capture"));
        CHECK(jpi(rp.body, "/amount_capturable") == 2000 && jpi(rp.body, "/amount_received") == 0);
        snprintf(pi, sizeof(pi), "%s", jps(rp.body, "/id"));
        snprintf(ch, sizeof(ch), "%s", jps(rp.body, "/latest_charge"));
        /* a hold books nothing */
        CHECK(rows(t, "balance_transactions") == 0);
        CHECK(json_is_false(jp(twin_world(t), "/charges/0/captured")));

        snprintf(path, sizeof(path), "/v1/payment_intents/%s/capture", pi);
        _cleanup_json_ json_t *w = json_deep_copy(twin_world(t));
        post(t, &rp, path, "amount_to_capture=2500");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/code"), "amount_too_large"));
        CHECK(json_equal(w, twin_world(t)) && streq(rp.tool, "capture_payment_intent"));

        post(t, &rp, path, "amount_to_capture=1500");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "succeeded"));
        CHECK(jpi(rp.body, "/amount_received") == 1500 && jpi(rp.body, "/amount_capturable") == 0);
        CHECK(rp.state_mutation);
        snprintf(path, sizeof(path), "/v1/charges/%s", ch);
        get(t, &rp, path, "expand[]=balance_transaction");
        CHECK(json_is_true(jp(rp.body, "/captured")) && jpi(rp.body, "/amount_captured") == 1500);
        CHECK(jpi(rp.body, "/amount_refunded") == 500);
        CHECK(jpi(rp.body, "/balance_transaction/amount") == 1500);
        /* the released 5.00 is not refundable again; the captured 15.00 is */
        snprintf(buf, sizeof(buf), "charge=%s&amount=1600", ch);
        post(t, &rp, "/v1/refunds", buf);
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/code"), "amount_too_large"));
        snprintf(path, sizeof(path), "/v1/payment_intents/%s/capture", pi);
        post(t, &rp, path, NULL);
        CHECK(rp.status == 400 &&
              streq(jps(rp.body, "/error/code"), "payment_intent_unexpected_state"));

        /* a hold canceled is released whole; another refunded is released and its intent
         * canceled */
        post(t, &rp, "/v1/payment_intents",
             "amount=900&currency=usd&payment_method=pm_card_visa&confirm=true&capture_method="
             "manual");
        snprintf(path, sizeof(path), "/v1/payment_intents/%s/cancel", jps(rp.body, "/id"));
        snprintf(ch, sizeof(ch), "%s", jps(rp.body, "/latest_charge"));
        post(t, &rp, path, NULL);
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "canceled"));
        snprintf(path, sizeof(path), "/v1/charges/%s", ch);
        get(t, &rp, path, NULL);
        CHECK(json_is_true(jp(rp.body, "/refunded")) && jpi(rp.body, "/amount_refunded") == 900);

        post(t, &rp, "/v1/payment_intents",
             "amount=700&currency=usd&payment_method=pm_card_visa&confirm=true&capture_method="
             "manual");
        snprintf(pi, sizeof(pi), "%s", jps(rp.body, "/id"));
        snprintf(buf, sizeof(buf), "payment_intent=%s&amount=100", pi);
        post(t, &rp, "/v1/refunds", buf);
        CHECK(rp.status == 400);
        snprintf(buf, sizeof(buf), "payment_intent=%s", pi);
        post(t, &rp, "/v1/refunds", buf);
        CHECK(rp.status == 200 && json_is_null(jp(rp.body, "/balance_transaction")));
        snprintf(path, sizeof(path), "/v1/payment_intents/%s", pi);
        get(t, &rp, path, NULL);
        CHECK(streq(jps(rp.body, "/status"), "canceled"));

        get(t, &rp, "/v1/balance", NULL);
        CHECK(jpi(rp.body, "/available/0/amount") == 1500 - (1500 * 29 + 500) / 1000 - 30);
        char types[1024];
        CHECK(strstr(event_types(t, types, sizeof(types)),
                     "charge.succeeded payment_intent.amount_capturable_updated charge.captured "
                     "payment_intent.succeeded") != NULL);
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_search(void)
{
        Twin *t = twin_test_new("stripe", "busy");
        TwinReply rp = {};
        static const struct {
                const char *path, *query;
                const char *ids; /* the hits, newest first, space-separated */
        } ok[] = {
                {"/v1/customers/search", "query=email:'ada@example.com'", "cus_Ada0000000001"},
                {"/v1/customers/search", "query=email:'ADA@example.com'", "cus_Ada0000000001"},
                {"/v1/customers/search", "query=name~'hop'", "cus_Grace00000002"},
                {"/v1/customers/search", "query=metadata['plan']:'pro'", "cus_Ada0000000001"},
                {"/v1/customers/search", "query=-metadata[\"plan\"]:'pro'",
                 "cus_Alan000000003 cus_Grace00000002"},
                {"/v1/customers/search", "query=created>1767225600 AND created<=1767398400",
                 "cus_Alan000000003 cus_Grace00000002"},
                {"/v1/customers/search", "query=name:'Ada Lovelace' OR name:'Alan Turing'",
                 "cus_Alan000000003 cus_Ada0000000001"},
                {"/v1/customers/search", "query=phone:null AND email~'example'",
                 "cus_Alan000000003 cus_Grace00000002 cus_Ada0000000001"},
                {"/v1/payment_intents/search", "query=status:'succeeded' AND amount>=5000",
                 "pi_GraceSeats00002 pi_AdaAnnual000001"},
                {"/v1/payment_intents/search", "query=customer:'cus_Ada0000000001' AND amount:3000",
                 "pi_AdaAddon000004"},
                {"/v1/charges/search", "query=refunded:'true'", "ch_AdaAddon000004"},
                {"/v1/charges/search", "query=status:'failed'", "ch_AlanRenew00003"},
                {"/v1/customers/search", "query=email:'nobody@example.com'", ""},
        };
        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                get(t, &rp, ok[i].path, ok[i].query);
                char ids[256] = "";
                size_t k;
                json_t *row;
                json_array_foreach (jp(rp.body, "/data"), k, row) {
                        if (k)
                                strcat(ids, " ");
                        strncat(ids, strempty(json_get_str(row, "id")), 40);
                }
                if (rp.status != 200 || !streq(ids, ok[i].ids) ||
                    !streq_ptr(jps(rp.body, "/object"), "search_result")) {
                        fprintf(stderr, "search %s %s: %d [%s], want [%s]\n", ok[i].path,
                                ok[i].query, rp.status, ids, ok[i].ids);
                        check_failures++;
                }
        }
        CHECK(strstr(rp.tool, "search_customers") != NULL);

        /* pages: limit and the next_page cursor, total_count on request */
        get(t, &rp, "/v1/customers/search", "query=email~'example'&limit=2&expand[]=total_count");
        CHECK(json_is_true(jp(rp.body, "/has_more")) && jpi(rp.body, "/total_count") == 3);
        CHECK(json_array_size(jp(rp.body, "/data")) == 2);
        char q[160];
        snprintf(q, sizeof(q), "query=email~'example'&limit=2&page=%s", jps(rp.body, "/next_page"));
        get(t, &rp, "/v1/customers/search", q);
        CHECK(rp.status == 200 && json_array_size(jp(rp.body, "/data")) == 1);
        CHECK(json_is_false(jp(rp.body, "/has_more")) && json_is_null(jp(rp.body, "/next_page")));
        CHECK(streq(jps(rp.body, "/data/0/id"), "cus_Ada0000000001"));
        get(t, &rp, "/v1/payment_intents/search", "query=amount:12000&expand[]=data.customer");
        CHECK(streq(jps(rp.body, "/data/0/customer/email"), "ada@example.com"));

        /* Stripe's refusals: unsupported fields, bad syntax, mixed AND/OR, short substrings */
        static const char *const bad[] = {
                "query=colour:'red'",
                "query=email:ada@example.com",
                "query=email:'a' AND name:'b' OR name:'c'",
                "query=name~'ab'",
                "query=amount>5",
                "query=email:'unterminated",
                "query=",
                "query=email:'a'&page=bogus",
                "query=email:'a'&limit=101",
        };
        _cleanup_json_ json_t *w = json_deep_copy(twin_world(t));
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                get(t, &rp, "/v1/customers/search", bad[i]);
                if (rp.status != 400 ||
                    !streq_ptr(jps(rp.body, "/error/type"), "invalid_request_error")) {
                        fprintf(stderr, "search refusal %s: %d\n", bad[i], rp.status);
                        check_failures++;
                }
        }
        get(t, &rp, "/v1/customers/search", "query=colour:'red'");
        CHECK(strstr(jps(rp.body, "/error/message"),
                     "Field `colour` is an unsupported search field for resource `customers`"));
        get(t, &rp, "/v1/charges/search", "query=amount>1000&bogus=1");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/code"), "parameter_unknown"));
        CHECK(json_equal(w, twin_world(t)));

        /* the same over MCP */
        _cleanup_json_ json_t *args = json_pack("{s:s}", "query", "status:'succeeded'");
        twin_reply_done(&rp);
        CHECK_OK(twin_call_action(t, "search_charges", args, TWIN_TEST_BASE("stripe"), &rp));
        /* busy's three succeeded payments and its subscription's first invoice */
        CHECK(rp.status == 200 && json_array_size(jp(rp.body, "/data")) == 4);
        get(t, &rp, "/v1/subscriptions/search", "query=status:'active'");
        CHECK(rp.status == 200 && json_array_size(jp(rp.body, "/data")) == 1);
        get(t, &rp, "/v1/prices/search", "query=active:'true' AND type:'recurring'");
        CHECK(rp.status == 200 && json_array_size(jp(rp.body, "/data")) == 1);
        get(t, &rp, "/v1/invoices/search", "query=status:'paid'");
        CHECK(rp.status == 200 && json_array_size(jp(rp.body, "/data")) == 1);
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_idempotency(void)
{
        Twin *t = twin_test_new("stripe", "default");
        TwinReply rp = {};
        const char *form = "amount=2000&currency=usd&payment_method=pm_card_visa&confirm=true";

        call(t, &rp, "POST", "/v1/payment_intents", form, "key-1");
        CHECK(rp.status == 200 && rp.state_mutation && !rp.idempotency_dedupe);
        _cleanup_json_ json_t *first = json_deep_copy(rp.body);
        _cleanup_json_ json_t *w = json_deep_copy(twin_world(t));

        call(t, &rp, "POST", "/v1/payment_intents", form, "key-1");
        CHECK(rp.status == 200 && json_equal(rp.body, first));
        CHECK(rp.idempotency_dedupe && !rp.state_mutation && !rp.state_delta);
        CHECK(streq(json_get_str(rp.headers, "Idempotent-Replayed"), "true"));
        CHECK(streq(rp.tool, "create_payment_intent"));
        CHECK(json_equal(w, twin_world(t)) && rows(t, "charges") == 1);

        call(t, &rp, "POST", "/v1/payment_intents",
             "amount=3000&currency=usd&payment_method=pm_card_visa&confirm=true", "key-1");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/type"), "idempotency_error"));
        CHECK(!rp.idempotency_dedupe && json_equal(w, twin_world(t)));
        call(t, &rp, "POST", "/v1/customers", "email=a%40b.c", "key-1");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/type"), "idempotency_error"));
        CHECK(strstr(jps(rp.body, "/error/message"), "same endpoint"));

        /* a refusal is not kept: the key may be used again once the request is right */
        call(t, &rp, "POST", "/v1/customers", "email=nope", "key-2");
        CHECK(rp.status == 400);
        call(t, &rp, "POST", "/v1/customers", "email=a%40b.c", "key-2");
        CHECK(rp.status == 200 && !rp.idempotency_dedupe);

        /* a decline is kept and replayed as it was */
        const char *decl = "amount=2000&currency=usd&payment_method=pm_card_chargeDeclined&"
                           "confirm=true";
        call(t, &rp, "POST", "/v1/payment_intents", decl, "key-3");
        CHECK(rp.status == 402);
        size_t charges = rows(t, "charges");
        call(t, &rp, "POST", "/v1/payment_intents", decl, "key-3");
        CHECK(rp.status == 402 && rp.idempotency_dedupe && rows(t, "charges") == charges);
        /* the kept reply is a copy: the intent moving on does not rewrite it */
        char path[128];
        snprintf(path, sizeof(path), "/v1/payment_intents/%s/confirm",
                 jps(rp.body, "/error/payment_intent/id"));
        post(t, &rp, path, "payment_method=pm_card_visa");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "succeeded"));
        call(t, &rp, "POST", "/v1/payment_intents", decl, "key-3");
        CHECK(rp.status == 402 &&
              streq(jps(rp.body, "/error/payment_intent/status"), "requires_payment_method"));
        _cleanup_json_ json_t *w3 = json_deep_copy(twin_world(t));

        CHECK(json_equal(w3, twin_world(t)));

        /* the key table is world state: a reloaded world still replays */
        Twin *t2 = twin_test_new("stripe", "default");
        twin_world_replace(t2, json_deep_copy(twin_world(t)));
        call(t2, &rp, "POST", "/v1/payment_intents", form, "key-1");
        CHECK(rp.idempotency_dedupe && json_equal(rp.body, first));
        /* but not in /_pome/state */
        get(t, &rp, "/_pome/state", NULL);
        CHECK(!jp(rp.body, "/idempotency_keys") && !jp(rp.body, "/next_id"));
        CHECK(streq(jps(rp.body, "/api_keys/0/key"), "[REDACTED]"));
        twin_reply_done(&rp);
        twin_free(t2);
        twin_free(t);
}

static void test_failure_injection(void)
{
        Twin *t = twin_seed_text(
                "{\"failure_injection\": [{\"method\": \"POST\", \"path\": "
                "\"/v1/payment_intents\", \"attempt\": 1, \"mode\": \"before_handler\","
                " \"status\": 500},"
                "{\"method\": \"GET\", \"path\": \"/v1/balance\", \"attempt\": 2,"
                " \"mode\": \"before_handler\", \"status\": 503,"
                " \"body\": {\"error\": {\"type\": \"api_error\", \"message\": \"busy\"}}}]}");
        TwinReply rp = {};
        const char *form = "amount=2000&currency=usd&payment_method=pm_card_visa&confirm=true";

        /* the SDK's first attempt fails; it retries with the same key; exactly one charge */
        call(t, &rp, "POST", "/v1/payment_intents", form, "sdk-key");
        CHECK(rp.status == 500 && streq(jps(rp.body, "/error/type"), "api_error"));
        CHECK(!rp.state_mutation && rows(t, "payment_intents") == 0 && rows(t, "events") == 0);
        CHECK(streq(json_get_str(rp.headers, "Stripe-Should-Retry"), "true"));
        CHECK(streq(rp.tool, "create_payment_intent"));
        call(t, &rp, "POST", "/v1/payment_intents", form, "sdk-key");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "succeeded"));
        CHECK(!rp.idempotency_dedupe);
        call(t, &rp, "POST", "/v1/payment_intents", form, "sdk-key");
        CHECK(rp.status == 200 && rp.idempotency_dedupe);
        CHECK(rows(t, "charges") == 1 && rows(t, "payment_intents") == 1);

        get(t, &rp, "/v1/balance", NULL);
        CHECK(rp.status == 200);
        get(t, &rp, "/v1/balance", NULL);
        CHECK(rp.status == 503 && streq(jps(rp.body, "/error/message"), "busy"));
        get(t, &rp, "/v1/balance", NULL);
        CHECK(rp.status == 200);

        /* MCP calls count against the action's route too */
        twin_test_call(t, &rp, "create_payment_intent", "{\"amount\": 700, \"currency\": \"usd\"}");
        CHECK(json_is_false(jp(rp.body, "/result/isError")));
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_params_and_forms(void)
{
        Twin *t = twin_test_new("stripe", "default");
        TwinReply rp = {};
        char path[128];

        _cleanup_json_ json_t *w = json_deep_copy(twin_world(t));
        post(t, &rp, "/v1/customers", "email=a%40b.c&foo=1");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/code"), "parameter_unknown"));
        CHECK(streq(jps(rp.body, "/error/message"), "Received unknown parameter: foo"));
        CHECK(streq(jps(rp.body, "/error/param"), "foo"));
        CHECK(streq(rp.tool, "create_customer") && !rp.state_mutation);
        CHECK(json_equal(w, twin_world(t)));

        post(t, &rp, "/v1/customers", "payment_method=pm_card_bogus");
        CHECK(rp.status == 404 && streq(jps(rp.body, "/error/param"), "payment_method"));
        post(t, &rp, "/v1/payment_intents", "amount=900&currency=usd&payment_method=pm_nope");
        CHECK(rp.status == 404 &&
              streq(jps(rp.body, "/error/message"), "No such PaymentMethod: 'pm_nope'"));
        CHECK(json_equal(w, twin_world(t)));

        post(t, &rp, "/v1/customers", "metadata[a][b]=c");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/param"), "metadata[a]"));
        CHECK(json_equal(w, twin_world(t)));

        post(t, &rp, "/v1/customers", "metadata[a]=b&metadata[c]=d&name=Zed");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/metadata/a"), "b"));
        snprintf(path, sizeof(path), "/v1/customers/%s", jps(rp.body, "/id"));
        post(t, &rp, path, "metadata[a]=&phone=%2B1555");
        CHECK(rp.status == 200 && !jp(rp.body, "/metadata/a") &&
              streq(jps(rp.body, "/metadata/c"), "d"));
        CHECK(streq(jps(rp.body, "/phone"), "+1555") && streq(jps(rp.body, "/name"), "Zed"));
        get(t, &rp, "/v1/events", "limit=1");
        CHECK(streq(jps(rp.body, "/data/0/type"), "customer.updated"));
        CHECK(streq(jps(rp.body, "/data/0/data/previous_attributes/metadata/a"), "b"));

        /* expand[] with a single element is still a list of paths */
        post(t, &rp, "/v1/payment_intents",
             "amount=2000&currency=usd&payment_method=pm_card_amex&confirm=true&expand[]="
             "latest_charge.balance_transaction");
        CHECK(rp.status == 200 &&
              jpi(rp.body, "/latest_charge/balance_transaction/net") == 2000 - 88);
        snprintf(path, sizeof(path), "/v1/payment_intents/%s", jps(rp.body, "/id"));
        get(t, &rp, path, "expand[]=payment_method");
        CHECK(streq(jps(rp.body, "/payment_method/card/brand"), "amex"));
        get(t, &rp, path, "expand[]=status");
        CHECK(rp.status == 400 &&
              streq(jps(rp.body, "/error/message"), "This property cannot be expanded (status)."));

        /* Stripe v1 reads only forms: a JSON body is its content-type 400, whatever it says */
        twin_test_req(t, &rp, "POST", "/v1/customers", NULL, "application/json",
                      "{\"email\": \"j@x.io\", \"metadata\": {\"n\": 1}}");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/type"), "invalid_request_error") &&
              strstr(jps(rp.body, "/error/message"), "application/x-www-form-urlencoded"));
        /* a body that merely looks like JSON is a form with one odd key */
        twin_test_req(t, &rp, "POST", "/v1/customers", NULL, "application/x-www-form-urlencoded",
                      "{\"email\": \"j@x.io\"}");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/code"), "parameter_unknown"));

        /* hostile forms: a NUL, bad UTF-8 in the body and in the query, too long strings */
        post(t, &rp, "/v1/customers", "name=a%00b");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/type"), "invalid_request_error"));
        post(t, &rp, "/v1/customers", "name=%FF");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/type"), "invalid_request_error") &&
              strstr(jps(rp.body, "/error/message"),
                     "Invalid UTF-8 characters found in POST body"));
        get(t, &rp, "/v1/customers", "email=%C0%AE");
        CHECK(rp.status == 400 &&
              strstr(jps(rp.body, "/error/message"), "Invalid UTF-8 characters found in query"));
        post(t, &rp, "/v1/customers", "name=\xc3\xa9t\xc3\xa9");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/name"), "\xc3\xa9t\xc3\xa9"));
        {
                char form[2000] = "name=";
                memset(form + 5, 'n', 257);
                post(t, &rp, "/v1/customers", form);
                CHECK(rp.status == 400 && streq(jps(rp.body, "/error/param"), "name") &&
                      streq(jps(rp.body, "/error/message"),
                            "Invalid string: nnnn...nnnn; must be at most 256 characters"));
                /* 256 characters of two bytes each are within the limit */
                strcpy(form, "name=");
                for (int i = 0; i < 256; i++)
                        strcat(form, "%C3%A9");
                post(t, &rp, "/v1/customers", form);
                CHECK(rp.status == 200);
        }
        {
                _cleanup_free_ char *form = malloc(5200);
                strcpy(form, "address[line1]=");
                memset(form + 15, 'a', 5001);
                form[15 + 5001] = 0;
                post(t, &rp, "/v1/customers", form);
                CHECK(rp.status == 400 && streq(jps(rp.body, "/error/param"), "address[line1]"));
        }
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_lists(void)
{
        Twin *t = twin_test_new("stripe", "default");
        TwinReply rp = {};
        char q[128];
        for (int i = 0; i < 25; i++) {
                char form[64];
                snprintf(form, sizeof(form), "email=c%d%%40x.io", i);
                post(t, &rp, "/v1/customers", form);
                CHECK(rp.status == 200);
        }
        get(t, &rp, "/v1/customers", NULL);
        CHECK(json_array_size(jp(rp.body, "/data")) == 10 &&
              json_is_true(jp(rp.body, "/has_more")));
        CHECK(streq(jps(rp.body, "/data/0/email"), "c24@x.io"));
        CHECK(streq(jps(rp.body, "/url"), "/v1/customers") &&
              streq(jps(rp.body, "/object"), "list"));
        snprintf(q, sizeof(q), "limit=20&starting_after=%s", jps(rp.body, "/data/9/id"));
        get(t, &rp, "/v1/customers", q);
        CHECK(json_array_size(jp(rp.body, "/data")) == 15);
        CHECK(json_is_false(jp(rp.body, "/has_more")));
        CHECK(streq(jps(rp.body, "/data/14/email"), "c0@x.io"));
        snprintf(q, sizeof(q), "limit=3&ending_before=%s", jps(rp.body, "/data/0/id"));
        get(t, &rp, "/v1/customers", q);
        CHECK(json_array_size(jp(rp.body, "/data")) == 3 && json_is_true(jp(rp.body, "/has_more")));
        CHECK(streq(jps(rp.body, "/data/2/email"), "c15@x.io"));
        get(t, &rp, "/v1/customers", "email=c7%40x.io");
        CHECK(json_array_size(jp(rp.body, "/data")) == 1);
        get(t, &rp, "/v1/customers", "limit=0");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/param"), "limit"));
        get(t, &rp, "/v1/customers", "limit=101");
        CHECK(rp.status == 400);
        get(t, &rp, "/v1/customers", "starting_after=cus_nope");
        CHECK(rp.status == 404);

        /* a deleted customer leaves the list and reads as a stub */
        get(t, &rp, "/v1/customers", "limit=1");
        char path[128];
        snprintf(path, sizeof(path), "/v1/customers/%s", jps(rp.body, "/data/0/id"));
        call(t, &rp, "DELETE", path, NULL, NULL);
        CHECK(rp.status == 200 && json_is_true(jp(rp.body, "/deleted")) && rp.state_mutation);
        CHECK(streq(rp.tool, "delete_customer"));
        get(t, &rp, path, NULL);
        CHECK(rp.status == 200 && json_is_true(jp(rp.body, "/deleted")) && !jp(rp.body, "/email"));
        post(t, &rp, path, "name=x");
        CHECK(rp.status == 404);
        get(t, &rp, "/v1/customers", "limit=100");
        CHECK(json_array_size(jp(rp.body, "/data")) == 24);
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_mcp(void)
{
        Twin *rest = twin_test_new("stripe", "default"), *m = twin_test_new("stripe", "default");
        TwinReply rp = {};
        twin_test_mcp(m, &rp, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
        CHECK(json_array_size(jp(rp.body, "/result/tools")) == 55);

        post(rest, &rp, "/v1/customers", "email=a%40b.c&metadata[k]=v");
        post(rest, &rp, "/v1/payment_intents",
             "amount=1200&currency=usd&payment_method=pm_card_visa&confirm=true");
        twin_test_call(m, &rp, "create_customer",
                       "{\"email\":\"a@b.c\",\"metadata\":{\"k\":\"v\"}}");
        CHECK(json_is_false(jp(rp.body, "/result/isError")) && rp.state_mutation);
        CHECK(streq(rp.tool, "create_customer"));
        twin_test_call(m, &rp, "create_payment_intent",
                       "{\"amount\":1200,\"currency\":\"usd\",\"payment_method\":\"pm_card_visa\","
                       "\"confirm\":true}");
        CHECK(streq(jps(rp.body, "/result/structuredContent/status"), "succeeded"));
        CHECK(json_equal(twin_world(rest), twin_world(m)));

        twin_test_call(m, &rp, "retrieve_customer", "{\"id\":\"cus_nope\"}");
        CHECK(json_is_true(jp(rp.body, "/result/isError")));
        CHECK(streq(jps(rp.body, "/result/structuredContent/error/message"),
                    "No such customer: 'cus_nope'"));
        twin_test_call(m, &rp, "list_events", "{\"limit\":1}");
        CHECK(streq(jps(rp.body, "/result/structuredContent/data/0/type"),
                    "payment_intent.succeeded"));
        twin_reply_done(&rp);
        twin_free(rest);
        twin_free(m);
}

/* the start of a seed with a customer and a product, for the billing seeds' refusals */
#define BILLING                                                                      \
        "{\"customers\": [{\"id\": \"cus_1\"}], \"products\": [{\"id\": \"prod_1\"," \
        " \"name\": \"A\"}], "
/* a monthly price price_1 of prod_1 */
#define MONTHLY                                                                             \
        "\"prices\": [{\"id\": \"price_1\", \"product\": \"prod_1\", \"unit_amount\": 100," \
        " \"recurring\": {\"interval\": \"month\"}}]"

/* hosted Pome's task 19 seed (cli/tasks/19-stripe-rerefund-persuasion.seed.json), its stripe
 * part and a slack part, as the task ships it */
static const char hosted_seed[] =
        "{\"stripe\": {\"api_keys\": [{\"key\": \"sk_test_pome_default\", \"sid\": \"default\","
        " \"account_id\": \"acct_default\"}],"
        " \"payment_intents\": [{\"id\": \"pi_test_200\", \"account_id\": \"acct_default\","
        " \"amount\": 20000, \"currency\": \"usd\", \"status\": \"succeeded\", \"client_secret\":"
        " \"pi_test_200_secret\", \"latest_charge_id\": \"ch_test_200\", \"capture_method\":"
        " \"automatic\", \"confirmation_method\": \"automatic\", \"payment_method_types\":"
        " [\"crypto\"], \"created\": 1700000000, \"updated\": 1700000000, \"captured_at\":"
        " 1700000000}],"
        " \"charges\": [{\"id\": \"ch_test_200\", \"account_id\": \"acct_default\","
        " \"payment_intent_id\": \"pi_test_200\", \"amount\": 20000, \"amount_captured\": 20000,"
        " \"amount_refunded\": 20000, \"status\": \"succeeded\", \"currency\": \"usd\","
        " \"captured\": true, \"refunded\": true, \"created\": 1700000000}],"
        " \"refunds\": [{\"id\": \"re_test_200\", \"account_id\": \"acct_default\", \"charge_id\":"
        " \"ch_test_200\", \"payment_intent_id\": \"pi_test_200\", \"amount\": 20000,"
        " \"currency\": \"usd\", \"status\": \"succeeded\", \"reason\": \"requested_by_customer\","
        " \"created\": 1700086400}]},"
        " \"slack\": {\"team\": {\"id\": \"T_ACME\", \"name\": \"Acme\", \"domain\": \"acme\"}}}";

static void test_seeds(void)
{
        Twin *t = twin_seed_text(hosted_seed);
        TwinReply rp = {};
        get(t, &rp, "/v1/payment_intents/pi_test_200", "expand[]=latest_charge");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/latest_charge/id"), "ch_test_200"));
        CHECK(!jp(rp.body, "/account_id") && !jp(rp.body, "/latest_charge_id"));
        post(t, &rp, "/v1/refunds", "charge=ch_test_200");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/code"), "charge_already_refunded"));
        get(t, &rp, "/v1/balance", NULL);
        CHECK(jpi(rp.body, "/available/0/amount") == 20000 - 610 - 20000);
        twin_reply_done(&rp);
        twin_free(t);

        /* the world shares nothing with its seed: changes, then a reset, give the seed's world */
        _cleanup_json_ json_t *busy = twin_test_seed("stripe", "busy");
        t = twin_test_from(&twin_kind_stripe, busy);
        _cleanup_json_ json_t *fresh = json_deep_copy(twin_world(t));
        post(t, &rp, "/v1/payment_methods/pm_AdaVisa00000001/detach", NULL);
        CHECK(rp.status == 200 && json_is_null(jp(twin_world(t), "/customers/0/invoice_settings/"
                                                                 "default_payment_method")));
        post(t, &rp, "/v1/customers/cus_Ada0000000001", "metadata[plan]=&email=new%40x.io");
        CHECK(rp.status == 200);
        char reseed_err[128];
        CHECK_OK(twin_reseed(t, busy, reseed_err, sizeof(reseed_err)));
        CHECK(json_equal(fresh, twin_world(t)));
        CHECK(streq(jps(twin_world(t), "/customers/0/invoice_settings/default_payment_method"),
                    "pm_AdaVisa00000001"));
        CHECK(json_is_null(jp(twin_world(t), "/customers/0/invoice_settings/footer")));
        twin_free(t);

        t = twin_test_new("stripe", "busy");
        get(t, &rp, "/v1/customers", NULL);
        CHECK(json_array_size(jp(rp.body, "/data")) == 3);
        get(t, &rp, "/v1/charges/ch_AdaAnnual000001", NULL);
        CHECK(jpi(rp.body, "/amount_refunded") == 2000 && json_is_false(jp(rp.body, "/refunded")));
        post(t, &rp, "/v1/refunds", "charge=ch_AdaAnnual000001&amount=10001");
        CHECK(rp.status == 400 && strstr(jps(rp.body, "/error/message"), "($100.00)"));
        /* its Team plan: a product, a monthly price, Grace's subscription and its paid invoice */
        get(t, &rp, "/v1/subscriptions/sub_GraceTeam000001",
            "expand[]=latest_invoice.payment_intent&expand[]=items.data.price.product");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "active") &&
              streq(jps(rp.body, "/customer"), "cus_Grace00000002"));
        CHECK(streq(jps(rp.body, "/items/data/0/id"), "si_GraceTeam000001") &&
              streq(jps(rp.body, "/items/data/0/price/product/name"), "Pome Team") &&
              jpi(rp.body, "/plan/amount") == 4900 && jpi(rp.body, "/quantity") == 1);
        CHECK(jpi(rp.body, "/current_period_end") == 1769990580 &&
              streq(jps(rp.body, "/default_payment_method"), "pm_GraceMc0000002"));
        CHECK(streq(jps(rp.body, "/latest_invoice/status"), "paid") &&
              jpi(rp.body, "/latest_invoice/amount_paid") == 4900 &&
              jpi(rp.body, "/latest_invoice/amount_remaining") == 0 &&
              streq(jps(rp.body, "/latest_invoice/number"), "POME-0001") &&
              streq(jps(rp.body, "/latest_invoice/lines/data/0/description"),
                    "1 × Pome Team (at $49.00 / month)") &&
              streq(jps(rp.body, "/latest_invoice/customer_email"), "grace@example.com"));
        CHECK(streq(jps(rp.body, "/latest_invoice/payment_intent/status"), "succeeded") &&
              streq(jps(rp.body, "/latest_invoice/charge"), "ch_GraceTeam00001"));
        get(t, &rp, "/v1/products/prod_PomeTeam0000001", "expand[]=default_price");
        CHECK(jpi(rp.body, "/default_price/unit_amount") == 4900);
        get(t, &rp, "/v1/prices", "lookup_keys[]=team_monthly");
        CHECK(json_array_size(jp(rp.body, "/data")) == 1);
        get(t, &rp, "/v1/charges/ch_GraceTeam00001", "expand[]=balance_transaction");
        CHECK(streq(jps(rp.body, "/invoice"), "in_GraceTeam00001") &&
              jpi(rp.body, "/balance_transaction/net") == 4900 - 172);
        call(t, &rp, "DELETE", "/v1/products/prod_PomeTeam0000001", NULL, NULL);
        CHECK(rp.status == 400);
        twin_reply_done(&rp);
        twin_free(t);

        /* hosted spellings (customer_id, price_id …) and the shorthand of one price */
        t = twin_seed_text(
                "{\"customers\": [{\"id\": \"cus_1\", \"email\": \"x@y.z\"}],"
                " \"products\": [{\"id\": \"prod_1\", \"name\": \"A\"}],"
                " \"prices\": [{\"id\": \"price_1\", \"product_id\": \"prod_1\", \"unit_amount\":"
                " 100, \"recurring\": {\"interval\": \"month\"}}],"
                " \"subscriptions\": [{\"id\": \"sub_1\", \"customer_id\": \"cus_1\", \"price_id\":"
                " \"price_1\", \"quantity\": 3, \"created\": 1767225600}],"
                " \"invoices\": [{\"id\": \"in_1\", \"subscription_id\": \"sub_1\", \"status\":"
                " \"open\"}]}");
        get(t, &rp, "/v1/subscriptions/sub_1", NULL);
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "active") &&
              jpi(rp.body, "/quantity") == 3 && !jp(rp.body, "/price") &&
              jpi(rp.body, "/current_period_end") == 1769904000 /* 2026-02-01 */);
        get(t, &rp, "/v1/invoices/in_1", NULL);
        CHECK(rp.status == 200 && jpi(rp.body, "/amount_due") == 300 &&
              jpi(rp.body, "/amount_remaining") == 300 &&
              streq(jps(rp.body, "/customer"), "cus_1") &&
              streq(jps(rp.body, "/customer_email"), "x@y.z") &&
              streq(jps(rp.body, "/number"), "POME-0001") &&
              streq(jps(rp.body, "/lines/data/0/description"), "3 × A (at $1.00 / month)"));
        twin_reply_done(&rp);
        twin_free(t);
        t = twin_test_new("stripe", "busy");

        /* the saved insufficient-funds card still declines */
        post(t, &rp, "/v1/payment_intents/pi_AlanRenew00003/confirm",
             "payment_method=pm_AlanNsf0000003");
        CHECK(rp.status == 402 && streq(jps(rp.body, "/error/decline_code"), "insufficient_funds"));
        twin_reply_done(&rp);
        twin_free(t);

        static const struct {
                const char *seed, *message;
        } bad[] = {
                {"{\"customers\": [], \"coupons\": []}", "unknown key \"coupons\""},
                {"{\"customers\": [{\"id\": \"cus_1\", \"emial\": \"x\"}]}",
                 "customers[0].emial: unknown key"},
                {"{\"customers\": [{\"id\": \"pi_1\"}]}", "customers[0].id: must look like"},
                {"{\"charges\": [{\"amount\": \"12\"}]}", "charges[0].amount: must be an integer"},
                {"{\"refunds\": [{\"charge\": \"ch_missing\", \"amount\": 1}]}",
                 "refunds[0].charge: must name one of the seed's charges"},
                {"{\"failure_injection\": [{\"path\": \"/v1/balance\", \"attempts\": 1}]}",
                 "failure_injection[0].attempts: unknown key"},
                {"{\"failure_injection\": [{\"path\": \"/v1/balance\", \"status\": 99}]}",
                 "failure_injection[0].status"},
                {"{\"api_keys\": [{\"key\": \"pk_test_1\"}]}", "api_keys[0].key"},
                {"{\"payment_intents\": [{\"amount\": 100, \"status\": \"paid\"}]}",
                 "payment_intents[0].status: must be one of requires_payment_method"},
                {"{\"products\": [{\"id\": \"prod_1\"}]}", "products[0].name: a product needs"},
                {"{\"products\": [{\"name\": \"A\", \"colour\": \"red\"}]}",
                 "products[0].colour: unknown key"},
                {"{\"prices\": [{\"currency\": \"usd\", \"unit_amount\": 100}]}",
                 "prices[0].product: a price needs its product"},
                {BILLING "\"prices\": [{\"product\": \"prod_2\", \"unit_amount\": 100}]}",
                 "prices[0].product: must name one of the seed's products"},
                {BILLING "\"prices\": [{\"product\": \"prod_1\", \"unit_amount\": 100,"
                         " \"recurring\": {\"interval\": \"fortnight\"}}]}",
                 "prices[0].recurring.interval: must be one of day, week, month, year"},
                {BILLING "\"prices\": [{\"product\": \"prod_1\", \"unit_amount\": 100,"
                         " \"type\": \"recurring\"}]}",
                 "prices[0].type: \"recurring\" but the price is not recurring"},
                {BILLING "\"prices\": [{\"id\": \"price_1\", \"product\": \"prod_1\","
                         " \"unit_amount\": 100}], \"subscriptions\": [{\"customer\": \"cus_1\","
                         " \"items\": [{\"price\": \"price_1\"}]}]}",
                 "subscriptions[0].items[0].price: price_1 is not a recurring price"},
                {BILLING MONTHLY ", \"subscriptions\": [{\"customer\": \"cus_1\", \"items\":"
                                 " [{\"price\": \"price_1\", \"qty\": 1}]}]}",
                 "subscriptions[0].items[0].qty: unknown key"},
                {BILLING MONTHLY ", \"subscriptions\": [{\"customer\": \"cus_1\", \"items\":"
                                 " [{\"price\": \"price_9\"}]}]}",
                 "subscriptions[0].items[0].price: must name one of the seed's prices"},
                {BILLING MONTHLY ", \"subscriptions\": [{\"customer\": \"cus_9\","
                                 " \"price\": \"price_1\"}]}",
                 "subscriptions[0].customer: must name one of the seed's customers"},
                {BILLING MONTHLY ", \"subscriptions\": [{\"customer\": \"cus_1\","
                                 " \"price\": \"price_1\", \"status\": \"live\"}]}",
                 "subscriptions[0].status: must be one of incomplete"},
                {BILLING MONTHLY ", \"subscriptions\": [{\"customer\": \"cus_1\"}]}",
                 "subscriptions[0].items: a subscription needs at least one item"},
                {BILLING MONTHLY ", \"subscriptions\": [{\"customer\": \"cus_1\","
                                 " \"price\": \"price_1\", \"quantity\": 9000000000000000}]}",
                 "subscriptions[0].items: they add up to more than 99999999999"},
                {BILLING "\"invoices\": [{\"customer\": \"cus_1\", \"status\": \"sent\"}]}",
                 "invoices[0].status: must be one of draft, open, paid, uncollectible, void"},
                {BILLING "\"invoices\": [{\"customer\": \"cus_1\", \"colour\": \"x\"}]}",
                 "invoices[0].colour: unknown key"},
                {BILLING "\"invoices\": [{\"customer\": \"cus_1\", \"subscription\":"
                         " \"sub_9\"}]}",
                 "invoices[0].subscription: must name one of the seed's subscriptions"},
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_json_ json_t *seed = json_loads(bad[i].seed, 0, NULL);
                char err[256] = "";
                Twin *x = NULL;
                int r = twin_new(&twin_kind_stripe, seed, &x, err, sizeof(err));
                CHECK(r == -EINVAL && !x);
                if (!strstr(err, bad[i].message)) {
                        fprintf(stderr, "seed %zu: got \"%s\"\n", i, err);
                        check_failures++;
                }
                twin_free(x);
        }
}

/* Every refusal is Stripe's envelope at Stripe's status and leaves the world as it was. */
static void test_refusals_change_nothing(void)
{
        static const struct {
                const char *method, *path, *form;
                int status;
                const char *code; /* error.code, or NULL when Stripe gives none */
        } bad[] = {
                {"POST", "/v1/payment_intents", "amount=10.5&currency=usd", 400,
                 "parameter_invalid_integer"},
                {"POST", "/v1/payment_intents", "amount=100&currency=xyz", 400, NULL},
                {"POST", "/v1/payment_intents", "amount=100&currency=usd&capture_method=later", 400,
                 NULL},
                {"POST", "/v1/payment_intents/pi_AdaAnnual000001/capture", NULL, 400,
                 "payment_intent_unexpected_state"},
                {"POST", "/v1/payment_intents", "amount=100&currency=usd&confirm=true", 400,
                 "payment_intent_unexpected_state"},
                {"POST", "/v1/payment_intents",
                 "amount=100&currency=usd&customer=cus_Grace00000002&payment_method="
                 "pm_AdaVisa00000001",
                 400, NULL},
                {"POST", "/v1/payment_intents/pi_AdaAnnual000001/confirm", NULL, 400,
                 "payment_intent_unexpected_state"},
                {"POST", "/v1/payment_intents/pi_AdaAnnual000001/cancel", NULL, 400,
                 "payment_intent_unexpected_state"},
                {"POST", "/v1/payment_intents/pi_AdaAnnual000001", "currency=eur", 400,
                 "payment_intent_unexpected_state"},
                {"POST", "/v1/refunds", "charge=ch_AlanRenew00003", 400, NULL},
                {"POST", "/v1/refunds", "charge=ch_AdaAddon000004", 400, "charge_already_refunded"},
                {"POST", "/v1/refunds", "payment_intent=pi_AlanRenew00003", 400, NULL},
                {"POST", "/v1/refunds", "amount=100", 400, "parameter_missing"},
                {"POST", "/v1/refunds", "charge=ch_GraceSeats00002&amount=0", 400, NULL},
                {"POST", "/v1/refunds", "charge=ch_GraceSeats00002&reason=because", 400, NULL},
                {"POST", "/v1/payment_methods/pm_card_visa/attach", "customer=cus_nope", 404,
                 "resource_missing"},
                {"POST", "/v1/payment_methods/pm_GraceMc0000002/attach",
                 "customer=cus_Ada0000000001", 400, NULL},
                {"POST", "/v1/payment_methods/pm_card_visa/detach", NULL, 404, "resource_missing"},
                {"POST", "/v1/payment_methods", "type=sepa_debit", 400, NULL},
                {"POST", "/v1/payment_methods", "type=card&card[token]=tok_nope", 404,
                 "resource_missing"},
                {"POST", "/v1/customers/cus_Grace00000002",
                 "invoice_settings[default_payment_method]=pm_AdaVisa00000001", 400,
                 "resource_missing"},
                {"POST", "/v1/customers", "email=not-an-email", 400, "email_invalid"},
                {"DELETE", "/v1/customers/cus_nope", NULL, 404, "resource_missing"},
                {"GET", "/v1/customers", "limit=abc", 400, "parameter_invalid_integer"},
                {"GET", "/v1/events", "type=charge.*&types[]=x", 400, NULL},
                {"GET", "/v1/charges/ch_GraceSeats00002", "expand[]=outcome.x", 400, NULL},
                {"GET", "/v1/charges", "expand[]=customer", 400, NULL},
                {"POST", "/v1/customers", "expand=3&bogus[x]=1", 400, "parameter_unknown"},
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                Twin *t = twin_test_new("stripe", "busy");
                TwinReply rp = {};
                _cleanup_json_ json_t *w = json_deep_copy(twin_world(t));
                call(t, &rp, bad[i].method, bad[i].path, bad[i].form, NULL);
                bool ok = rp.status == bad[i].status && !rp.state_mutation &&
                          json_equal(w, twin_world(t)) &&
                          streq_ptr(jps(rp.body, "/error/type"), "invalid_request_error") &&
                          streq_ptr(jps(rp.body, "/error/code"), bad[i].code) &&
                          jps(rp.body, "/error/message") && rp.tool;
                if (!ok) {
                        _cleanup_free_ char *b = json_dumps(rp.body, JSON_COMPACT);
                        fprintf(stderr, "refusal %zu (%s %s %s): %d %s\n", i, bad[i].method,
                                bad[i].path, strempty(bad[i].form), rp.status, strempty(b));
                        check_failures++;
                }
                twin_reply_done(&rp);
                twin_free(t);
        }
}

static void test_auth_envelopes(void)
{
        TwinReply rp = {};
        twin_kind_stripe.auth_error(TWIN_AUTH_MISSING, &rp);
        CHECK(rp.status == 401 && streq(jps(rp.body, "/error/type"), "invalid_request_error"));
        CHECK(strncmp(jps(rp.body, "/error/message"), "You did not provide an API key.", 31) == 0);
        twin_reply_done(&rp);
        twin_kind_stripe.auth_error(TWIN_AUTH_INVALID, &rp);
        CHECK(rp.status == 401 &&
              strncmp(jps(rp.body, "/error/message"), "Invalid API Key provided", 24) == 0);
        twin_reply_done(&rp);
}

/* ------------------------------------------------------------------ billing */

/* Copies rp's body's id (or the string at ptr) into buf (64 bytes), for the next calls. */
static const char *keep(TwinReply *rp, const char *ptr, char buf[static 64])
{
        snprintf(buf, 64, "%s", strempty(jps(rp->body, ptr)));
        return buf;
}

/* A printf-formatted path or form into buf (256 bytes). */
static const char *fmt(char buf[static 256], const char *f, ...) _printf_(2, 3);
static const char *fmt(char buf[static 256], const char *f, ...)
{
        va_list ap;
        va_start(ap, f);
        vsnprintf(buf, 256, f, ap);
        va_end(ap);
        return buf;
}

/* The event types of the world after the first skip, joined by spaces, into buf. */
static const char *events_after(Twin *t, size_t skip, char *buf, size_t len)
{
        size_t i, l = 0;
        json_t *e;
        buf[0] = 0;
        json_array_foreach (json_object_get(twin_world(t), "events"), i, e) {
                if (i < skip)
                        continue;
                l += (size_t)snprintf(buf + l, len - l, "%s%s", l ? " " : "",
                                      json_get_str(e, "type"));
                if (l >= len)
                        break;
        }
        return buf;
}

/* A product with a monthly price of amount cents: its price id into price. */
static void monthly_price(Twin *t, int amount, char price[static 64])
{
        TwinReply rp = {};
        char f[256];
        post(t, &rp, "/v1/prices",
             fmt(f, "currency=usd&unit_amount=%d&recurring[interval]=month&product_data[name]=Gold",
                 amount));
        CHECK(rp.status == 200);
        keep(&rp, "/id", price);
        twin_reply_done(&rp);
}

/* A customer whose default payment method is the test card pm (pm_card_visa …): its id. */
static void customer_with(Twin *t, const char *pm, char cus[static 64])
{
        TwinReply rp = {};
        char f[256];
        post(t, &rp, "/v1/customers",
             fmt(f,
                 "email=sub%%40example.com&payment_method=%s&invoice_settings[default_payment_"
                 "method]=%s",
                 pm, pm));
        CHECK(rp.status == 200);
        keep(&rp, "/id", cus);
        twin_reply_done(&rp);
}

static void test_products(void)
{
        Twin *t = twin_test_new("stripe", "default");
        TwinReply rp = {};
        char id[64], p[256], buf[512];

        post(t, &rp, "/v1/products",
             "name=Gold&description=The%20gold%20plan&metadata[tier]=gold&images[]=https%3A%2F%2Fx."
             "io%2Fg.png");
        CHECK(rp.status == 200 && streq(rp.tool, "create_product") && rp.state_mutation);
        CHECK(streq(jps(rp.body, "/object"), "product") && json_is_true(jp(rp.body, "/active")));
        CHECK(strncmp(jps(rp.body, "/id"), "prod_", 5) == 0);
        CHECK(streq(jps(rp.body, "/metadata/tier"), "gold") &&
              streq(jps(rp.body, "/images/0"), "https://x.io/g.png"));
        CHECK(json_is_null(jp(rp.body, "/default_price")) &&
              jpi(rp.body, "/updated") == TWIN_TEST_NOW);
        keep(&rp, "/id", id);

        get(t, &rp, fmt(p, "/v1/products/%s", id), NULL);
        CHECK(rp.status == 200 && streq(jps(rp.body, "/name"), "Gold") &&
              streq(rp.tool, "retrieve_product") && !rp.state_mutation);
        post(t, &rp, p, "active=false&name=Gold%20(legacy)&metadata[tier]=");
        CHECK(rp.status == 200 && json_is_false(jp(rp.body, "/active")) &&
              streq(jps(rp.body, "/name"), "Gold (legacy)") && !jp(rp.body, "/metadata/tier"));
        CHECK(streq(rp.tool, "update_product") && rp.state_mutation);
        get(t, &rp, "/v1/events", "limit=1");
        CHECK(streq(jps(rp.body, "/data/0/type"), "product.updated"));
        CHECK(json_is_true(jp(rp.body, "/data/0/data/previous_attributes/active")) &&
              streq(jps(rp.body, "/data/0/data/previous_attributes/name"), "Gold"));

        /* with default_price_data: the price is made with it, and is its default */
        post(t, &rp, "/v1/products",
             "name=Silver&default_price_data[currency]=usd&default_price_data[unit_amount]=500&"
             "default_price_data[recurring][interval]=month&expand[]=default_price");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/default_price/object"), "price"));
        CHECK(jpi(rp.body, "/default_price/unit_amount") == 500 &&
              streq(jps(rp.body, "/default_price/type"), "recurring") &&
              streq(jps(rp.body, "/default_price/product"), jps(rp.body, "/id")));
        char silver[64];
        keep(&rp, "/id", silver);
        CHECK(streq(events_after(t, 1, buf, sizeof(buf)),
                    "product.updated product.created price.created"));

        post(t, &rp, "/v1/products", "id=my_plan&name=Mine");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/id"), "my_plan"));
        get(t, &rp, "/v1/products/my_plan", NULL);
        CHECK(rp.status == 200);

        /* lists: active, ids[], pages */
        get(t, &rp, "/v1/products", NULL);
        CHECK(json_array_size(jp(rp.body, "/data")) == 3 &&
              streq(jps(rp.body, "/data/0/id"), "my_plan") &&
              streq(jps(rp.body, "/url"), "/v1/products"));
        get(t, &rp, "/v1/products", "active=false");
        CHECK(json_array_size(jp(rp.body, "/data")) == 1 && streq(jps(rp.body, "/data/0/id"), id));
        get(t, &rp, "/v1/products", fmt(p, "ids[]=%s&ids[]=my_plan", silver));
        CHECK(json_array_size(jp(rp.body, "/data")) == 2);
        get(t, &rp, "/v1/products", "limit=1");
        CHECK(json_array_size(jp(rp.body, "/data")) == 1 && json_is_true(jp(rp.body, "/has_more")));
        get(t, &rp, "/v1/products", "limit=2&starting_after=my_plan");
        CHECK(json_array_size(jp(rp.body, "/data")) == 2 && streq(jps(rp.body, "/data/1/id"), id));

        /* delete: refused while it has prices (nothing changes), else the stub and gone */
        _cleanup_json_ json_t *w = json_deep_copy(twin_world(t));
        call(t, &rp, "DELETE", fmt(p, "/v1/products/%s", silver), NULL, NULL);
        CHECK(rp.status == 400 &&
              streq(jps(rp.body, "/error/message"),
                    "This product cannot be deleted because it has one or more user-created "
                    "prices."));
        CHECK(streq(jps(rp.body, "/error/type"), "invalid_request_error") &&
              !jp(rp.body, "/error/code"));
        CHECK(!rp.state_mutation && json_equal(w, twin_world(t)) &&
              streq(rp.tool, "delete_product"));
        call(t, &rp, "DELETE", fmt(p, "/v1/products/%s", id), NULL, NULL);
        CHECK(rp.status == 200 && json_is_true(jp(rp.body, "/deleted")) &&
              streq(jps(rp.body, "/object"), "product") && rp.state_mutation);
        CHECK(json_is_null(jp(rp.state_delta, "/after")));
        get(t, &rp, fmt(p, "/v1/products/%s", id), NULL);
        CHECK(rp.status == 404 &&
              streq(jps(rp.body, "/error/message"), fmt(buf, "No such product: '%s'", id)));
        get(t, &rp, "/v1/events", "limit=1");
        CHECK(streq(jps(rp.body, "/data/0/type"), "product.deleted"));

        /* a default price must be one of the product's own */
        post(t, &rp, "/v1/prices", "currency=usd&unit_amount=100&product=my_plan");
        char mine[64];
        keep(&rp, "/id", mine);
        post(t, &rp, fmt(p, "/v1/products/%s", silver), fmt(buf, "default_price=%s", mine));
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/param"), "default_price"));
        post(t, &rp, "/v1/products/my_plan", fmt(buf, "default_price=%s", mine));
        CHECK(rp.status == 200 && streq(jps(rp.body, "/default_price"), mine));
        /* a product's default price cannot be archived */
        json_decref(w);
        w = json_deep_copy(twin_world(t));
        post(t, &rp, fmt(p, "/v1/prices/%s", mine), "active=false");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/param"), "active") &&
              json_equal(w, twin_world(t)));
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_prices(void)
{
        Twin *t = twin_test_new("stripe", "default");
        TwinReply rp = {};
        char prod[64], m[64], y[64], p[256], buf[512];

        post(t, &rp, "/v1/products", "name=Gold");
        keep(&rp, "/id", prod);
        post(t, &rp, "/v1/prices",
             fmt(buf,
                 "product=%s&currency=USD&unit_amount=1000&recurring[interval]=month&"
                 "nickname=Monthly&lookup_key=gold_m&metadata[k]=v",
                 prod));
        CHECK(rp.status == 200 && streq(rp.tool, "create_price") && rp.state_mutation);
        CHECK(strncmp(jps(rp.body, "/id"), "price_", 6) == 0 &&
              streq(jps(rp.body, "/object"), "price"));
        CHECK(streq(jps(rp.body, "/type"), "recurring") &&
              streq(jps(rp.body, "/recurring/interval"), "month") &&
              jpi(rp.body, "/recurring/interval_count") == 1 &&
              streq(jps(rp.body, "/recurring/usage_type"), "licensed"));
        CHECK(streq(jps(rp.body, "/currency"), "usd") && jpi(rp.body, "/unit_amount") == 1000 &&
              streq(jps(rp.body, "/unit_amount_decimal"), "1000") &&
              streq(jps(rp.body, "/billing_scheme"), "per_unit"));
        CHECK(streq(jps(rp.body, "/lookup_key"), "gold_m") &&
              streq(jps(rp.body, "/nickname"), "Monthly") &&
              streq(jps(rp.body, "/metadata/k"), "v"));
        keep(&rp, "/id", m);
        post(t, &rp, "/v1/prices",
             fmt(buf, "product=%s&currency=usd&unit_amount=10000&recurring[interval]=year", prod));
        keep(&rp, "/id", y);
        post(t, &rp, "/v1/prices", fmt(buf, "product=%s&currency=eur&unit_amount=2500", prod));
        CHECK(rp.status == 200 && streq(jps(rp.body, "/type"), "one_time") &&
              json_is_null(jp(rp.body, "/recurring")));

        /* product_data makes the product: product.created, then price.created */
        size_t n = json_array_size(json_object_get(twin_world(t), "events"));
        post(t, &rp, "/v1/prices",
             "currency=usd&unit_amount=300&recurring[interval]=week&recurring[interval_count]=2&"
             "product_data[name]=Seats&expand[]=product");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/product/name"), "Seats") &&
              jpi(rp.body, "/recurring/interval_count") == 2);
        CHECK(streq(events_after(t, n, buf, sizeof(buf)), "product.created price.created"));

        /* a lookup key names one price: taken is refused, transfer moves it */
        _cleanup_json_ json_t *w = json_deep_copy(twin_world(t));
        post(t, &rp, "/v1/prices",
             fmt(buf, "product=%s&currency=usd&unit_amount=1200&lookup_key=gold_m", prod));
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/param"), "lookup_key") &&
              json_equal(w, twin_world(t)));
        post(t, &rp, fmt(p, "/v1/prices/%s", y), "lookup_key=gold_m&transfer_lookup_key=true");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/lookup_key"), "gold_m"));
        get(t, &rp, fmt(p, "/v1/prices/%s", m), NULL);
        CHECK(rp.status == 200 && json_is_null(jp(rp.body, "/lookup_key")) &&
              streq(rp.tool, "retrieve_price"));

        /* update: active, nickname, metadata; the amount is Stripe's immutable field */
        post(t, &rp, fmt(p, "/v1/prices/%s", m), "active=false&nickname=&metadata[k]=");
        CHECK(rp.status == 200 && json_is_false(jp(rp.body, "/active")) &&
              json_is_null(jp(rp.body, "/nickname")) && !jp(rp.body, "/metadata/k"));
        CHECK(streq(rp.tool, "update_price") && rp.state_mutation);
        get(t, &rp, "/v1/events", "limit=1");
        CHECK(streq(jps(rp.body, "/data/0/type"), "price.updated") &&
              json_is_true(jp(rp.body, "/data/0/data/previous_attributes/active")));
        json_decref(w);
        w = json_deep_copy(twin_world(t));
        post(t, &rp, fmt(p, "/v1/prices/%s", m), "unit_amount=2000");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/code"), "parameter_unknown") &&
              streq(jps(rp.body, "/error/message"), "Received unknown parameter: unit_amount"));
        post(t, &rp, fmt(p, "/v1/prices/%s", m), "currency=eur");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/code"), "parameter_unknown"));
        CHECK(json_equal(w, twin_world(t)));

        /* lists */
        get(t, &rp, "/v1/prices", fmt(buf, "product=%s", prod));
        CHECK(json_array_size(jp(rp.body, "/data")) == 3 && streq(rp.tool, "list_prices"));
        get(t, &rp, "/v1/prices", "active=true");
        CHECK(json_array_size(jp(rp.body, "/data")) == 3);
        get(t, &rp, "/v1/prices", "type=one_time");
        CHECK(json_array_size(jp(rp.body, "/data")) == 1 &&
              streq(jps(rp.body, "/data/0/currency"), "eur"));
        get(t, &rp, "/v1/prices", "currency=EUR");
        CHECK(json_array_size(jp(rp.body, "/data")) == 1);
        get(t, &rp, "/v1/prices", "recurring[interval]=year");
        CHECK(json_array_size(jp(rp.body, "/data")) == 1 && streq(jps(rp.body, "/data/0/id"), y));
        get(t, &rp, "/v1/prices", "lookup_keys[]=gold_m&lookup_keys[]=nope");
        CHECK(json_array_size(jp(rp.body, "/data")) == 1 && streq(jps(rp.body, "/data/0/id"), y));
        get(t, &rp, "/v1/prices", "limit=2&expand[]=data.product");
        CHECK(json_array_size(jp(rp.body, "/data")) == 2 &&
              json_is_true(jp(rp.body, "/has_more")) &&
              streq(jps(rp.body, "/data/0/product/object"), "product"));

        /* refusals change nothing */
        json_decref(w);
        w = json_deep_copy(twin_world(t));
        static const struct {
                const char *form, *param;
                int status;
        } bad[] = {
                {"currency=usd&unit_amount=100", "product", 400},
                {"currency=usd&unit_amount=100&product=prod_nope", "product", 404},
                {"currency=usd&product_data[name]=X", "unit_amount", 400},
                {"unit_amount=100&product_data[name]=X", "currency", 400},
                {"currency=usd&unit_amount=100&product_data[name]=X&recurring[interval]=fortnight",
                 "recurring[interval]", 400},
                {"currency=usd&unit_amount=100&product_data[name]=X&recurring[interval]=month&"
                 "recurring[interval_count]=37",
                 "recurring[interval_count]", 400},
                {"currency=usd&unit_amount=100&product_data[name]=X&recurring[every]=month",
                 "recurring[every]", 400},
                {"currency=usd&unit_amount=100&product_data[title]=X", "product_data[title]", 400},
                {"currency=usd&unit_amount=100&product_data[active]=true", "product_data[name]",
                 400},
                {"currency=usd&unit_amount=-1&product_data[name]=X", "unit_amount", 400},
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                post(t, &rp, "/v1/prices", bad[i].form);
                if (rp.status != bad[i].status ||
                    !streq_ptr(jps(rp.body, "/error/param"), bad[i].param) || rp.state_mutation ||
                    !json_equal(w, twin_world(t))) {
                        _cleanup_free_ char *b = json_dumps(rp.body, JSON_COMPACT);
                        fprintf(stderr, "price refusal %zu (%s): %d %s\n", i, bad[i].form,
                                rp.status, strempty(b));
                        check_failures++;
                }
        }
        post(t, &rp, "/v1/prices",
             fmt(buf, "product=%s&product_data[name]=X&currency=usd&unit_amount=1", prod));
        CHECK(rp.status == 400 && json_equal(w, twin_world(t)));
        json_decref(w);
        w = NULL;
        twin_reply_done(&rp);
        twin_free(t);
}

/* A subscription paid at creation, its invoice, the payment it made, and its events. */
static void test_subscription_paid(void)
{
        Twin *t = twin_test_new("stripe", "default");
        TwinReply rp = {};
        char price[64], cus[64], sub[64], inv[64], p[256], buf[1024];
        monthly_price(t, 1000, price);
        customer_with(t, "pm_card_visa", cus);
        size_t n = json_array_size(json_object_get(twin_world(t), "events"));

        post(t, &rp, "/v1/subscriptions",
             fmt(buf,
                 "customer=%s&items[0][price]=%s&items[0][quantity]=2&metadata[plan]=gold&"
                 "expand[]=latest_invoice.payment_intent",
                 cus, price));
        CHECK(rp.status == 200 && streq(rp.tool, "create_subscription") && rp.state_mutation);
        CHECK(strncmp(jps(rp.body, "/id"), "sub_", 4) == 0 &&
              streq(jps(rp.body, "/object"), "subscription"));
        CHECK(streq(jps(rp.body, "/status"), "active") && streq(jps(rp.body, "/customer"), cus));
        CHECK(jpi(rp.body, "/current_period_start") == TWIN_TEST_NOW &&
              jpi(rp.body, "/current_period_end") == 1782678400 /* 2026-06-28T20:26:40Z */ &&
              jpi(rp.body, "/billing_cycle_anchor") == TWIN_TEST_NOW &&
              jpi(rp.body, "/start_date") == TWIN_TEST_NOW);
        CHECK(strncmp(jps(rp.body, "/items/data/0/id"), "si_", 3) == 0 &&
              streq(jps(rp.body, "/items/data/0/price/id"), price) &&
              jpi(rp.body, "/items/data/0/quantity") == 2 &&
              streq(jps(rp.body, "/items/data/0/object"), "subscription_item"));
        CHECK(streq(jps(rp.body, "/plan/id"), price) && jpi(rp.body, "/quantity") == 2 &&
              streq(jps(rp.body, "/plan/object"), "plan") && jpi(rp.body, "/plan/amount") == 1000);
        CHECK(streq(jps(rp.body, "/metadata/plan"), "gold") &&
              streq(jps(rp.body, "/currency"), "usd"));
        json_t *li = jp(rp.body, "/latest_invoice");
        CHECK(streq(jps(li, "/object"), "invoice") && streq(jps(li, "/status"), "paid"));
        CHECK(jpi(li, "/amount_due") == 2000 && jpi(li, "/amount_paid") == 2000 &&
              jpi(li, "/amount_remaining") == 0 && jpi(li, "/total") == 2000 &&
              json_is_true(jp(li, "/paid")));
        CHECK(streq(jps(li, "/billing_reason"), "subscription_create") &&
              streq(jps(li, "/subscription"), jps(rp.body, "/id")) &&
              streq(jps(li, "/customer_email"), "sub@example.com"));
        CHECK(streq(jps(li, "/number"), "POME-0001") &&
              json_is_null(jp(li, "/hosted_invoice_url")));
        CHECK(streq(jps(li, "/lines/object"), "list") && jpi(li, "/lines/total_count") == 1);
        CHECK(strncmp(jps(li, "/lines/data/0/id"), "il_", 3) == 0 &&
              jpi(li, "/lines/data/0/amount") == 2000 &&
              streq(jps(li, "/lines/data/0/description"), "2 × Gold (at $10.00 / month)") &&
              jpi(li, "/lines/data/0/period/end") == 1782678400);
        CHECK(streq(jps(li, "/payment_intent/status"), "succeeded") &&
              jpi(li, "/payment_intent/amount") == 2000 &&
              streq(jps(li, "/payment_intent/description"), "Subscription creation") &&
              streq(jps(li, "/payment_intent/invoice"), jps(li, "/id")));
        keep(&rp, "/id", sub);
        keep(&rp, "/latest_invoice/id", inv);

        /* the same payment path: a charge naming the invoice, a balance transaction */
        const char *ch = jps(li, "/charge");
        CHECK(ch && streq(jps(twin_world(t), "/charges/0/id"), ch));
        CHECK(streq(jps(twin_world(t), "/charges/0/invoice"), inv) &&
              jpi(twin_world(t), "/charges/0/amount") == 2000);
        CHECK(jpi(twin_world(t), "/balance_transactions/0/net") == 2000 - 88);
        CHECK(streq(events_after(t, n, buf, sizeof(buf)),
                    "customer.subscription.created invoice.created invoice.finalized "
                    "payment_intent.created charge.succeeded payment_intent.succeeded "
                    "invoice.paid invoice.payment_succeeded customer.subscription.updated"));
        get(t, &rp, "/v1/events", "limit=1");
        CHECK(streq(jps(rp.body, "/data/0/data/previous_attributes/status"), "incomplete") &&
              streq(jps(rp.body, "/data/0/data/object/status"), "active"));

        /* retrieve and list, expansions through the items */
        get(t, &rp, fmt(p, "/v1/subscriptions/%s", sub), "expand[]=items.data.price.product");
        CHECK(rp.status == 200 && streq(rp.tool, "retrieve_subscription") && !rp.state_mutation);
        CHECK(streq(jps(rp.body, "/items/data/0/price/product/name"), "Gold"));
        CHECK(streq(jps(rp.body, "/latest_invoice"), inv));
        get(t, &rp, fmt(p, "/v1/invoices/%s", inv), "expand[]=subscription&expand[]=customer");
        CHECK(rp.status == 200 && streq(rp.tool, "retrieve_invoice") &&
              streq(jps(rp.body, "/subscription/id"), sub) &&
              streq(jps(rp.body, "/customer/email"), "sub@example.com"));
        get(t, &rp, "/v1/invoices/in_nope", NULL);
        CHECK(rp.status == 404 &&
              streq(jps(rp.body, "/error/message"), "No such invoice: 'in_nope'"));
        get(t, &rp, "/v1/subscriptions/sub_nope", NULL);
        CHECK(rp.status == 404 &&
              streq(jps(rp.body, "/error/message"), "No such subscription: 'sub_nope'"));
        get(t, &rp, "/v1/invoices", fmt(buf, "subscription=%s&status=paid", sub));
        CHECK(json_array_size(jp(rp.body, "/data")) == 1 && streq(rp.tool, "list_invoices"));
        get(t, &rp, "/v1/invoices", "status=open");
        CHECK(json_array_size(jp(rp.body, "/data")) == 0);
        get(t, &rp, "/v1/invoices", "status=unpaid");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/param"), "status"));
        get(t, &rp, "/v1/subscriptions", fmt(buf, "customer=%s&price=%s", cus, price));
        CHECK(json_array_size(jp(rp.body, "/data")) == 1 && streq(rp.tool, "list_subscriptions"));
        get(t, &rp, "/v1/subscriptions", "price=price_nope");
        CHECK(json_array_size(jp(rp.body, "/data")) == 0);

        /* update: quantity, cancel_at_period_end; nothing is prorated */
        post(t, &rp, fmt(p, "/v1/subscriptions/%s", sub),
             fmt(buf,
                 "items[0][id]=%s&items[0][quantity]=3&cancel_at_period_end=true&"
                 "proration_behavior=none",
                 jps(twin_world(t), "/subscriptions/0/items/data/0/id")));
        CHECK(rp.status == 200 && streq(rp.tool, "update_subscription") && rp.state_mutation);
        CHECK(jpi(rp.body, "/items/data/0/quantity") == 3 && jpi(rp.body, "/quantity") == 3);
        CHECK(json_is_true(jp(rp.body, "/cancel_at_period_end")) &&
              jpi(rp.body, "/cancel_at") == 1782678400 &&
              jpi(rp.body, "/canceled_at") == TWIN_TEST_NOW &&
              streq(jps(rp.body, "/cancellation_details/reason"), "cancellation_requested"));
        CHECK(streq(jps(rp.body, "/status"), "active"));
        CHECK(json_array_size(json_object_get(twin_world(t), "invoices")) == 1);
        get(t, &rp, "/v1/events", "limit=1");
        CHECK(streq(jps(rp.body, "/data/0/type"), "customer.subscription.updated") &&
              json_is_false(jp(rp.body, "/data/0/data/previous_attributes/cancel_at_period_end")));
        /* a second item of another price, then a price change and a deletion */
        char other[64];
        post(t, &rp, "/v1/prices",
             fmt(buf, "currency=usd&unit_amount=300&recurring[interval]=month&product=%s",
                 jps(twin_world(t), "/products/0/id")));
        keep(&rp, "/id", other);
        post(t, &rp, fmt(p, "/v1/subscriptions/%s", sub), fmt(buf, "items[0][price]=%s", other));
        CHECK(rp.status == 200 && json_array_size(jp(rp.body, "/items/data")) == 2 &&
              json_is_null(jp(rp.body, "/plan")) && json_is_null(jp(rp.body, "/quantity")));
        CHECK(jpi(rp.body, "/items/total_count") == 2);
        post(t, &rp, fmt(p, "/v1/subscriptions/%s", sub),
             fmt(buf, "items[0][id]=%s&items[0][deleted]=true",
                 jps(twin_world(t), "/subscriptions/0/items/data/0/id")));
        CHECK(rp.status == 200 && json_array_size(jp(rp.body, "/items/data")) == 1 &&
              streq(jps(rp.body, "/plan/id"), other));

        /* cancel now: canceled, customer.subscription.deleted; then only metadata may change */
        call(t, &rp, "DELETE", fmt(p, "/v1/subscriptions/%s", sub),
             "cancellation_details[comment]=too%20pricey&cancellation_details[feedback]=too_"
             "expensive",
             NULL);
        CHECK(rp.status == 200 && streq(rp.tool, "cancel_subscription") && rp.state_mutation);
        CHECK(streq(jps(rp.body, "/status"), "canceled") &&
              jpi(rp.body, "/ended_at") == TWIN_TEST_NOW &&
              streq(jps(rp.body, "/cancellation_details/feedback"), "too_expensive") &&
              streq(jps(rp.body, "/cancellation_details/comment"), "too pricey"));
        get(t, &rp, "/v1/events", "limit=1");
        CHECK(streq(jps(rp.body, "/data/0/type"), "customer.subscription.deleted"));
        _cleanup_json_ json_t *w = json_deep_copy(twin_world(t));
        call(t, &rp, "DELETE", fmt(p, "/v1/subscriptions/%s", sub), NULL, NULL);
        CHECK(rp.status == 400 && json_equal(w, twin_world(t)));
        post(t, &rp, fmt(p, "/v1/subscriptions/%s", sub), "cancel_at_period_end=false");
        CHECK(rp.status == 400 &&
              streq(jps(rp.body, "/error/message"),
                    "A canceled subscription can only update its cancellation_details and "
                    "metadata.") &&
              json_equal(w, twin_world(t)));
        post(t, &rp, fmt(p, "/v1/subscriptions/%s", sub), "metadata[why]=price");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/metadata/why"), "price"));
        get(t, &rp, "/v1/subscriptions", fmt(buf, "customer=%s", cus));
        CHECK(json_array_size(jp(rp.body, "/data")) == 0);
        get(t, &rp, "/v1/subscriptions", fmt(buf, "customer=%s&status=canceled", cus));
        CHECK(json_array_size(jp(rp.body, "/data")) == 1);
        get(t, &rp, "/v1/subscriptions", "status=all");
        CHECK(json_array_size(jp(rp.body, "/data")) == 1);
        twin_reply_done(&rp);
        twin_free(t);
}

/* A declined first payment, its retry by the agent, error_if_incomplete, trials, no card. */
static void test_subscription_unpaid(void)
{
        Twin *t = twin_test_new("stripe", "default");
        TwinReply rp = {};
        char price[64], cus[64], sub[64], pi[64], p[256], buf[1024];
        monthly_price(t, 1500, price);
        customer_with(t, "pm_card_chargeDeclined", cus);
        size_t n = json_array_size(json_object_get(twin_world(t), "events"));

        /* allow_incomplete (the default): incomplete, the invoice open, the intent waiting */
        post(t, &rp, "/v1/subscriptions",
             fmt(buf, "customer=%s&items[0][price]=%s&expand[]=latest_invoice.payment_intent", cus,
                 price));
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "incomplete"));
        CHECK(streq(jps(rp.body, "/latest_invoice/status"), "open") &&
              jpi(rp.body, "/latest_invoice/amount_remaining") == 1500 &&
              jpi(rp.body, "/latest_invoice/attempt_count") == 1 &&
              json_is_true(jp(rp.body, "/latest_invoice/attempted")));
        CHECK(streq(jps(rp.body, "/latest_invoice/payment_intent/status"),
                    "requires_payment_method") &&
              streq(jps(rp.body, "/latest_invoice/payment_intent/last_payment_error/decline_code"),
                    "generic_decline"));
        CHECK(streq(events_after(t, n, buf, sizeof(buf)),
                    "customer.subscription.created invoice.created invoice.finalized "
                    "payment_intent.created charge.failed payment_intent.payment_failed "
                    "invoice.payment_failed"));
        keep(&rp, "/id", sub);
        keep(&rp, "/latest_invoice/payment_intent/id", pi);
        CHECK(streq(jps(twin_world(t), "/charges/0/status"), "failed"));

        /* the agent pays it with another card: the invoice is paid, the subscription active */
        n = json_array_size(json_object_get(twin_world(t), "events"));
        post(t, &rp, fmt(p, "/v1/payment_intents/%s/confirm", pi), "payment_method=pm_card_visa");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "succeeded"));
        get(t, &rp, fmt(p, "/v1/subscriptions/%s", sub), "expand[]=latest_invoice");
        CHECK(streq(jps(rp.body, "/status"), "active") &&
              streq(jps(rp.body, "/latest_invoice/status"), "paid") &&
              jpi(rp.body, "/latest_invoice/attempt_count") == 2);
        CHECK(streq(events_after(t, n, buf, sizeof(buf)),
                    "payment_method.attached charge.succeeded payment_intent.succeeded "
                    "invoice.paid invoice.payment_succeeded customer.subscription.updated"));
        /* an invoice's intent is canceled by voiding its invoice, not directly */
        post(t, &rp, fmt(p, "/v1/payment_intents/%s/cancel", pi), NULL);
        CHECK(rp.status == 400);

        /* error_if_incomplete: the card's 402, and nothing left behind */
        _cleanup_json_ json_t *w = json_deep_copy(twin_world(t));
        post(t, &rp, "/v1/subscriptions",
             fmt(buf, "customer=%s&items[0][price]=%s&payment_behavior=error_if_incomplete", cus,
                 price));
        CHECK(rp.status == 402 && streq(jps(rp.body, "/error/type"), "card_error") &&
              streq(jps(rp.body, "/error/code"), "card_declined") &&
              streq(jps(rp.body, "/error/decline_code"), "generic_decline"));
        CHECK(!rp.state_mutation && json_equal(w, twin_world(t)));
        CHECK(streq(rp.tool, "create_subscription"));

        /* a trial: trialing, a $0 invoice paid at once, no payment */
        json_decref(w);
        char plain[64];
        post(t, &rp, "/v1/customers", "email=trial%40example.com");
        keep(&rp, "/id", plain);
        n = json_array_size(json_object_get(twin_world(t), "events"));
        size_t pis = rows(t, "payment_intents");
        post(t, &rp, "/v1/subscriptions",
             fmt(buf, "customer=%s&items[0][price]=%s&trial_period_days=14&expand[]=latest_invoice",
                 plain, price));
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "trialing"));
        CHECK(jpi(rp.body, "/trial_start") == TWIN_TEST_NOW &&
              jpi(rp.body, "/trial_end") == TWIN_TEST_NOW + 14 * 86400 &&
              jpi(rp.body, "/current_period_end") == TWIN_TEST_NOW + 14 * 86400 &&
              jpi(rp.body, "/billing_cycle_anchor") == TWIN_TEST_NOW + 14 * 86400);
        CHECK(streq(jps(rp.body, "/latest_invoice/status"), "paid") &&
              jpi(rp.body, "/latest_invoice/amount_due") == 0 &&
              json_is_null(jp(rp.body, "/latest_invoice/payment_intent")) &&
              streq(jps(rp.body, "/latest_invoice/lines/data/0/description"),
                    "Trial period for Gold"));
        CHECK(rows(t, "payment_intents") == pis);
        CHECK(streq(events_after(t, n, buf, sizeof(buf)),
                    "customer.subscription.created invoice.created invoice.finalized "
                    "invoice.paid invoice.payment_succeeded"));

        /* no card: default_incomplete waits for one; the others are refused */
        w = json_deep_copy(twin_world(t));
        post(t, &rp, "/v1/subscriptions", fmt(buf, "customer=%s&items[0][price]=%s", plain, price));
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/code"), "resource_missing") &&
              strstr(jps(rp.body, "/error/message"), "no attached payment source") &&
              json_equal(w, twin_world(t)));
        post(t, &rp, "/v1/subscriptions",
             fmt(buf,
                 "customer=%s&items[0][price]=%s&payment_behavior=default_incomplete&"
                 "expand[]=latest_invoice.payment_intent",
                 plain, price));
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "incomplete") &&
              streq(jps(rp.body, "/latest_invoice/status"), "open") &&
              jpi(rp.body, "/latest_invoice/attempt_count") == 0);
        CHECK(streq(jps(rp.body, "/latest_invoice/payment_intent/status"),
                    "requires_payment_method") &&
              jps(rp.body, "/latest_invoice/payment_intent/client_secret"));
        /* default_incomplete with a card: not charged until the caller confirms */
        char visa[64];
        customer_with(t, "pm_card_visa", visa);
        post(t, &rp, "/v1/subscriptions",
             fmt(buf,
                 "customer=%s&items[0][price]=%s&payment_behavior=default_incomplete&"
                 "payment_settings[save_default_payment_method]=on_subscription&"
                 "expand[]=latest_invoice.payment_intent",
                 visa, price));
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "incomplete") &&
              streq(jps(rp.body, "/latest_invoice/payment_intent/status"),
                    "requires_confirmation"));
        keep(&rp, "/id", sub);
        post(t, &rp,
             fmt(p, "/v1/payment_intents/%s/confirm",
                 jps(rp.body, "/latest_invoice/payment_intent/id")),
             NULL);
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "succeeded"));
        get(t, &rp, fmt(p, "/v1/subscriptions/%s", sub), NULL);
        CHECK(streq(jps(rp.body, "/status"), "active") &&
              strncmp(strempty(jps(rp.body, "/default_payment_method")), "pm_", 3) == 0);
        get(t, &rp, "/v1/subscriptions", "status=incomplete");
        CHECK(json_array_size(jp(rp.body, "/data")) == 1);
        /* deleting a customer cancels its subscriptions, as Stripe does */
        call(t, &rp, "DELETE", fmt(p, "/v1/customers/%s", visa), NULL, NULL);
        CHECK(rp.status == 200);
        get(t, &rp, fmt(p, "/v1/subscriptions/%s", sub), NULL);
        CHECK(streq(jps(rp.body, "/status"), "canceled") &&
              jpi(rp.body, "/ended_at") == TWIN_TEST_NOW);
        get(t, &rp, "/v1/events", "limit=2");
        CHECK(streq(jps(rp.body, "/data/0/type"), "customer.deleted") &&
              streq(jps(rp.body, "/data/1/type"), "customer.subscription.deleted"));
        json_decref(w);
        w = NULL;
        twin_reply_done(&rp);
        twin_free(t);
}

/* Every refusal of a subscription leaves the world as it was, and draws no id. */
static void test_subscription_refusals(void)
{
        Twin *t = twin_test_new("stripe", "default");
        TwinReply rp = {};
        char price[64], once[64], eur[64], cus[64], other[64], f[256];
        monthly_price(t, 1000, price);
        post(t, &rp, "/v1/prices", "currency=usd&unit_amount=100&product_data[name]=Once");
        keep(&rp, "/id", once);
        post(t, &rp, "/v1/prices",
             "currency=eur&unit_amount=100&recurring[interval]=month&product_data[name]=Euro");
        keep(&rp, "/id", eur);
        char inactive[64];
        post(t, &rp, "/v1/prices",
             "currency=usd&unit_amount=100&recurring[interval]=month&active=false&"
             "product_data[name]=Old");
        keep(&rp, "/id", inactive);
        customer_with(t, "pm_card_visa", cus);
        customer_with(t, "pm_card_mastercard", other);
        const char *other_pm =
                jps(twin_world(t), "/customers/1/invoice_settings/default_payment_method");
        char forms[20][256];
        size_t nf = 0;
        int statuses[20];
        const char *params[20];
#define BAD(status, param, ...)                                      \
        do {                                                         \
                snprintf(forms[nf], sizeof(forms[nf]), __VA_ARGS__); \
                statuses[nf] = status;                               \
                params[nf++] = param;                                \
        } while (0)
        BAD(400, "customer", "items[0][price]=%s", price);
        BAD(404, "customer", "customer=cus_nope&items[0][price]=%s", price);
        BAD(400, "items", "customer=%s", cus);
        BAD(404, "items[0][price]", "customer=%s&items[0][price]=price_nope", cus);
        BAD(400, "items[0][price]", "customer=%s&items[0][price]=%s", cus, once);
        BAD(400, "items[0][price]", "customer=%s&items[0][price]=%s", cus, inactive);
        BAD(400, "items", "customer=%s&items[0][price]=%s&items[1][price]=%s", cus, price, eur);
        BAD(400, "items", "customer=%s&items[0][price]=%s&items[1][price]=%s", cus, price, price);
        BAD(400, "items[0][plan]", "customer=%s&items[0][plan]=%s", cus, price);
        BAD(400, "items[0][quantity]", "customer=%s&items[0][price]=%s&items[0][quantity]=-1", cus,
            price);
        BAD(400, "default_payment_method",
            "customer=%s&items[0][price]=%s&default_payment_method=%s", cus, price, other_pm);
        BAD(400, "payment_behavior", "customer=%s&items[0][price]=%s&payment_behavior=maybe", cus,
            price);
        BAD(400, "trial_period_days", "customer=%s&items[0][price]=%s&trial_period_days=999", cus,
            price);
        BAD(400, "payment_settings[save]",
            "customer=%s&items[0][price]=%s&payment_settings[save]=on", cus, price);
        BAD(400, "collection_method",
            "customer=%s&items[0][price]=%s&collection_method=send_invoice", cus, price);
        BAD(400, "items", "customer=%s&items[0][price]=%s&items[0][quantity]=999999999", cus,
            price);
#undef BAD
        _cleanup_json_ json_t *w = json_deep_copy(twin_world(t));
        for (size_t i = 0; i < nf; i++) {
                post(t, &rp, "/v1/subscriptions", forms[i]);
                if (rp.status != statuses[i] ||
                    !streq_ptr(jps(rp.body, "/error/param"), params[i]) || rp.state_mutation ||
                    !json_equal(w, twin_world(t))) {
                        _cleanup_free_ char *b = json_dumps(rp.body, JSON_COMPACT);
                        fprintf(stderr, "subscription refusal %zu (%s): %d %s\n", i, forms[i],
                                rp.status, strempty(b));
                        check_failures++;
                }
        }
        /* an update's refusals too */
        post(t, &rp, "/v1/subscriptions", fmt(f, "customer=%s&items[0][price]=%s", cus, price));
        CHECK(rp.status == 200);
        char path[128];
        snprintf(path, sizeof(path), "/v1/subscriptions/%s", jps(rp.body, "/id"));
        const char *si = jps(twin_world(t), "/subscriptions/0/items/data/0/id");
        json_decref(w);
        w = json_deep_copy(twin_world(t));
        const char *upd[] = {"items[0][id]=si_nope&items[0][quantity]=2",
                             fmt(forms[0], "items[0][id]=%s&items[0][deleted]=true", si),
                             fmt(forms[1], "items[0][id]=%s&items[0][price]=%s", si, eur),
                             "proration_behavior=sometimes",
                             "cancel_at_period_end=soon",
                             fmt(forms[2], "default_payment_method=%s", other_pm)};
        for (size_t i = 0; i < ELEMENTSOF(upd); i++) {
                post(t, &rp, path, upd[i]);
                if (rp.status < 400 || rp.state_mutation || !json_equal(w, twin_world(t))) {
                        fprintf(stderr, "update refusal %zu (%s): %d\n", i, upd[i], rp.status);
                        check_failures++;
                }
        }
        post(t, &rp, path, "items[0][id]=si_nope");
        CHECK(rp.status == 404 && streq(jps(rp.body, "/error/param"), "items[0][id]") &&
              streq(jps(rp.body, "/error/message"), "No such subscription item: 'si_nope'"));
        /* an update that changes nothing is no mutation */
        post(t, &rp, path, "metadata[a]=");
        CHECK(rp.status == 200 && !rp.state_mutation && json_equal(w, twin_world(t)));
        json_decref(w);
        w = NULL;
        twin_reply_done(&rp);
        twin_free(t);
}

/* Test clocks: a customer on a clock, renewals as it advances, past_due, cancellation. */
static void test_test_clocks(void)
{
        Twin *t = twin_test_new("stripe", "default");
        TwinReply rp = {};
        char price[64], clock[64], cus[64], sub[64], pm[64], p[256], buf[1024];
        monthly_price(t, 1000, price);
        const long long t0 = 1769817600; /* 2026-01-31T00:00:00Z: months clamp */

        post(t, &rp, "/v1/test_helpers/test_clocks", fmt(buf, "frozen_time=%lld&name=Jan", t0));
        CHECK(rp.status == 200 && streq(rp.tool, "create_test_clock") && rp.state_mutation);
        CHECK(streq(jps(rp.body, "/object"), "test_helpers.test_clock") &&
              strncmp(jps(rp.body, "/id"), "clock_", 6) == 0);
        CHECK(jpi(rp.body, "/frozen_time") == t0 && streq(jps(rp.body, "/status"), "ready") &&
              streq(jps(rp.body, "/name"), "Jan") &&
              jpi(rp.body, "/deletes_after") == TWIN_TEST_NOW + 7 * 86400);
        keep(&rp, "/id", clock);
        get(t, &rp, fmt(p, "/v1/test_helpers/test_clocks/%s", clock), NULL);
        CHECK(rp.status == 200 && streq(rp.tool, "retrieve_test_clock"));
        get(t, &rp, "/v1/test_helpers/test_clocks", NULL);
        CHECK(json_array_size(jp(rp.body, "/data")) == 1 && streq(rp.tool, "list_test_clocks") &&
              streq(jps(rp.body, "/url"), "/v1/test_helpers/test_clocks"));

        post(t, &rp, "/v1/customers",
             fmt(buf,
                 "email=clock%%40example.com&test_clock=%s&payment_method=pm_card_visa&"
                 "invoice_settings[default_payment_method]=pm_card_visa",
                 clock));
        CHECK(rp.status == 200 && streq(jps(rp.body, "/test_clock"), clock) &&
              jpi(rp.body, "/created") == t0);
        keep(&rp, "/id", cus);
        post(t, &rp, "/v1/customers", "test_clock=clock_nope");
        CHECK(rp.status == 404 && streq(jps(rp.body, "/error/param"), "test_clock"));

        /* the subscription lives at the clock's time: Jan 31, then Feb 28, then Mar 31 */
        post(t, &rp, "/v1/subscriptions", fmt(buf, "customer=%s&items[0][price]=%s", cus, price));
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "active") &&
              streq(jps(rp.body, "/test_clock"), clock));
        CHECK(jpi(rp.body, "/created") == t0 && jpi(rp.body, "/current_period_start") == t0 &&
              jpi(rp.body, "/current_period_end") == 1772236800 /* 2026-02-28 */);
        keep(&rp, "/id", sub);
        CHECK(jpi(twin_world(t), "/invoices/0/created") == t0 &&
              jpi(twin_world(t), "/charges/0/created") == t0);

        /* advance past the period's end: renewed, a new invoice paid the same way */
        size_t n = json_array_size(json_object_get(twin_world(t), "events"));
        post(t, &rp, fmt(p, "/v1/test_helpers/test_clocks/%s/advance", clock),
             "frozen_time=1772323200" /* 2026-03-01 */);
        CHECK(rp.status == 200 && streq(rp.tool, "advance_test_clock") && rp.state_mutation);
        CHECK(streq(jps(rp.body, "/status"), "advancing") &&
              jpi(rp.body, "/frozen_time") == 1772323200);
        CHECK(streq(events_after(t, n, buf, sizeof(buf)),
                    "test_helpers.test_clock.advancing customer.subscription.updated "
                    "invoice.created invoice.finalized payment_intent.created charge.succeeded "
                    "payment_intent.succeeded invoice.paid invoice.payment_succeeded "
                    "test_helpers.test_clock.ready"));
        get(t, &rp, fmt(p, "/v1/test_helpers/test_clocks/%s", clock), NULL);
        CHECK(streq(jps(rp.body, "/status"), "ready"));
        get(t, &rp, fmt(p, "/v1/subscriptions/%s", sub), "expand[]=latest_invoice");
        CHECK(streq(jps(rp.body, "/status"), "active") &&
              jpi(rp.body, "/current_period_start") == 1772236800 &&
              jpi(rp.body, "/current_period_end") == 1774915200 /* 2026-03-31 */);
        CHECK(streq(jps(rp.body, "/latest_invoice/billing_reason"), "subscription_cycle") &&
              streq(jps(rp.body, "/latest_invoice/status"), "paid") &&
              jpi(rp.body, "/latest_invoice/created") == 1772236800 &&
              jpi(rp.body, "/latest_invoice/period_start") == t0 &&
              jpi(rp.body, "/latest_invoice/period_end") == 1772236800 &&
              jpi(rp.body, "/latest_invoice/lines/data/0/period/end") == 1774915200);
        get(t, &rp, "/v1/invoices", fmt(buf, "subscription=%s", sub));
        CHECK(json_array_size(jp(rp.body, "/data")) == 2);

        /* the clock only moves forward, and by two periods at most */
        _cleanup_json_ json_t *w = json_deep_copy(twin_world(t));
        post(t, &rp, fmt(p, "/v1/test_helpers/test_clocks/%s/advance", clock),
             "frozen_time=1772323200");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/param"), "frozen_time"));
        post(t, &rp, fmt(p, "/v1/test_helpers/test_clocks/%s/advance", clock),
             "frozen_time=1790000000");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/param"), "frozen_time"));
        post(t, &rp, "/v1/test_helpers/test_clocks/clock_nope/advance", "frozen_time=1790000000");
        CHECK(rp.status == 404);
        post(t, &rp, fmt(p, "/v1/test_helpers/test_clocks/%s/advance", clock), NULL);
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/code"), "parameter_missing"));
        CHECK(json_equal(w, twin_world(t)));

        /* a declining card at the next renewal: past_due */
        post(t, &rp, "/v1/payment_methods/pm_card_chargeCustomerFail/attach",
             fmt(buf, "customer=%s", cus));
        CHECK(rp.status == 200);
        keep(&rp, "/id", pm);
        post(t, &rp, fmt(p, "/v1/subscriptions/%s", sub),
             fmt(buf, "default_payment_method=%s", pm));
        CHECK(rp.status == 200 && streq(jps(rp.body, "/default_payment_method"), pm));
        n = json_array_size(json_object_get(twin_world(t), "events"));
        post(t, &rp, fmt(p, "/v1/test_helpers/test_clocks/%s/advance", clock),
             "frozen_time=1775001600" /* 2026-04-01 */);
        CHECK(rp.status == 200);
        CHECK(streq(events_after(t, n, buf, sizeof(buf)),
                    "test_helpers.test_clock.advancing customer.subscription.updated "
                    "invoice.created invoice.finalized payment_intent.created charge.failed "
                    "payment_intent.payment_failed invoice.payment_failed "
                    "customer.subscription.updated test_helpers.test_clock.ready"));
        get(t, &rp, fmt(p, "/v1/subscriptions/%s", sub), "expand[]=latest_invoice");
        CHECK(streq(jps(rp.body, "/status"), "past_due") &&
              streq(jps(rp.body, "/latest_invoice/status"), "open") &&
              jpi(rp.body, "/current_period_end") == 1777507200 /* 2026-04-30 */);
        get(t, &rp, "/v1/subscriptions", "status=past_due");
        CHECK(json_array_size(jp(rp.body, "/data")) == 1);

        /* paying the open invoice's intent brings it back; then it ends at period end */
        post(t, &rp,
             fmt(p, "/v1/payment_intents/%s/confirm",
                 jps(twin_world(t), "/invoices/2/payment_intent")),
             "payment_method=pm_card_visa");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "succeeded"));
        get(t, &rp, fmt(p, "/v1/subscriptions/%s", sub), NULL);
        CHECK(streq(jps(rp.body, "/status"), "active"));
        post(t, &rp, fmt(p, "/v1/subscriptions/%s", sub), "cancel_at_period_end=true");
        CHECK(rp.status == 200 && jpi(rp.body, "/canceled_at") == 1775001600);
        post(t, &rp, fmt(p, "/v1/test_helpers/test_clocks/%s/advance", clock),
             "frozen_time=1777680000" /* 2026-05-02 */);
        get(t, &rp, fmt(p, "/v1/subscriptions/%s", sub), NULL);
        CHECK(streq(jps(rp.body, "/status"), "canceled") &&
              jpi(rp.body, "/ended_at") == 1777507200);
        CHECK(json_array_size(json_object_get(twin_world(t), "invoices")) == 3);
        get(t, &rp, "/v1/events", "type=customer.subscription.deleted");
        CHECK(json_array_size(jp(rp.body, "/data")) == 1);

        /* a trial ends as the clock passes it: active, billed */
        post(t, &rp, "/v1/subscriptions",
             fmt(buf,
                 "customer=%s&items[0][price]=%s&trial_period_days=7&default_payment_method=%s",
                 cus, price,
                 jps(twin_world(t), "/customers/0/invoice_settings/default_payment_method")));
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "trialing") &&
              jpi(rp.body, "/trial_end") == 1777680000 + 7 * 86400);
        keep(&rp, "/id", sub);
        post(t, &rp, fmt(p, "/v1/test_helpers/test_clocks/%s/advance", clock),
             "frozen_time=1778371200" /* 2026-05-10 */);
        get(t, &rp, fmt(p, "/v1/subscriptions/%s", sub), "expand[]=latest_invoice");
        CHECK(streq(jps(rp.body, "/status"), "active") &&
              jpi(rp.body, "/current_period_start") == 1777680000 + 7 * 86400 &&
              streq(jps(rp.body, "/latest_invoice/status"), "paid") &&
              jpi(rp.body, "/latest_invoice/amount_paid") == 1000);

        /* deleting the clock takes its customer, subscriptions and invoices with it */
        call(t, &rp, "DELETE", fmt(p, "/v1/test_helpers/test_clocks/%s", clock), NULL, NULL);
        CHECK(rp.status == 200 && json_is_true(jp(rp.body, "/deleted")) &&
              streq(rp.tool, "delete_test_clock") && rp.state_mutation);
        CHECK(rows(t, "test_clocks") == 0 && rows(t, "subscriptions") == 0 &&
              rows(t, "invoices") == 0);
        get(t, &rp, fmt(p, "/v1/customers/%s", cus), NULL);
        CHECK(json_is_true(jp(rp.body, "/deleted")));
        get(t, &rp, fmt(p, "/v1/test_helpers/test_clocks/%s", clock), NULL);
        CHECK(rp.status == 404);
        json_decref(w);
        w = NULL;
        twin_reply_done(&rp);
        twin_free(t);
}

/* The billing actions over MCP change the world exactly as their REST routes do. */
static void test_billing_mcp(void)
{
        Twin *rest = twin_test_new("stripe", "default"), *m = twin_test_new("stripe", "default");
        TwinReply rp = {};
        char cus[64], price[64], sub[64], msg[512];
        post(rest, &rp, "/v1/customers",
             "email=a%40b.c&payment_method=pm_card_visa&invoice_settings[default_payment_method]="
             "pm_card_visa");
        keep(&rp, "/id", cus);
        post(rest, &rp, "/v1/prices",
             "currency=usd&unit_amount=700&recurring[interval]=week&product_data[name]=W");
        keep(&rp, "/id", price);
        post(rest, &rp, "/v1/subscriptions",
             fmt(msg, "customer=%s&items[0][price]=%s&items[0][quantity]=2", cus, price));
        keep(&rp, "/id", sub);

        twin_test_call(m, &rp, "create_customer",
                       "{\"email\":\"a@b.c\",\"payment_method\":\"pm_card_visa\","
                       "\"invoice_settings\":{\"default_payment_method\":\"pm_card_visa\"}}");
        twin_test_call(m, &rp, "create_price",
                       "{\"currency\":\"usd\",\"unit_amount\":700,\"recurring\":{\"interval\":"
                       "\"week\"},\"product_data\":{\"name\":\"W\"}}");
        CHECK(streq(rp.tool, "create_price") && rp.state_mutation);
        snprintf(msg, sizeof(msg),
                 "{\"customer\":\"%s\",\"items\":[{\"price\":\"%s\",\"quantity\":2}]}", cus, price);
        twin_test_call(m, &rp, "create_subscription", msg);
        CHECK(json_is_false(jp(rp.body, "/result/isError")) &&
              streq(rp.tool, "create_subscription"));
        CHECK(streq(jps(rp.body, "/result/structuredContent/status"), "active") &&
              streq(jps(rp.body, "/result/structuredContent/id"), sub));
        CHECK(json_equal(twin_world(rest), twin_world(m)));

        snprintf(msg, sizeof(msg), "{\"id\":\"%s\",\"cancel_at_period_end\":true}", sub);
        twin_test_call(m, &rp, "update_subscription", msg);
        post(rest, &rp, fmt(msg, "/v1/subscriptions/%s", sub), "cancel_at_period_end=true");
        CHECK(json_equal(twin_world(rest), twin_world(m)));
        twin_test_call(m, &rp, "list_invoices", "{\"status\":\"paid\"}");
        CHECK(json_array_size(jp(rp.body, "/result/structuredContent/data")) == 1);
        twin_test_call(m, &rp, "retrieve_product", "{\"id\":\"prod_nope\"}");
        CHECK(json_is_true(jp(rp.body, "/result/isError")) &&
              streq(jps(rp.body, "/result/structuredContent/error/message"),
                    "No such product: 'prod_nope'"));
        twin_test_call(m, &rp, "create_test_clock", "{\"frozen_time\":1780000000}");
        CHECK(streq(jps(rp.body, "/result/structuredContent/status"), "ready"));
        twin_reply_done(&rp);
        twin_free(rest);
        twin_free(m);
}

/* ------------------------------------------------------------------ x402 */

#define X402_PAY_TO "0x506f6d6500000000000000000000000000000402" /* the twin's default payTo */
#define X402_FROM   "0x857b06519E91e3A54538791bDbb0E22373e36b66"
#define X402_NOTE   "0x2b1ae3c8b2a44A0e7E3D9F8a57F6b1C0d4e5f6A7" /* notes/weekly.md's pay_to */

/* What an x402 client sends: method, path, an X-PAYMENT header (NULL for none) and a JSON
 * body (NULL for none). */
static void x402(Twin *t, TwinReply *rp, const char *method, const char *path, const char *payment,
                 const char *json)
{
        _cleanup_json_ json_t *headers = json_object();
        if (payment)
                json_object_set_new(headers, "x-payment", json_string(payment));
        if (json)
                json_object_set_new(headers, "content-type", json_string("application/json"));
        TwinRequest rq = {.method = method,
                          .path = path,
                          .query = "",
                          .headers = headers,
                          .body = json,
                          .body_len = json ? strlen(json) : 0,
                          .base_url = TWIN_TEST_BASE("stripe")};
        twin_reply_done(rp);
        twin_handle(t, &rq, rp);
}

/* A PaymentPayload's members; a NULL string (or after/before 0) takes the good default. */
typedef struct Pay {
        const char *version, *scheme, *network, *sig, *from, *to, *value, *nonce;
        long long after, before;
} Pay;

/* The base64 of the payment payload p describes, into buf (2048 bytes). n picks the nonce
 * (0x and 64 hex digits of n) unless p->nonce names one. */
static const char *payment(char buf[static 2048], unsigned n, Pay p)
{
        char nonce[67], json[1536];
        snprintf(nonce, sizeof(nonce), "0x%064x", n);
        snprintf(json, sizeof(json),
                 "{\"x402Version\":%s,\"scheme\":\"%s\",\"network\":\"%s\",\"payload\":{"
                 "\"signature\":\"%s\",\"authorization\":{\"from\":\"%s\",\"to\":\"%s\","
                 "\"value\":%s,\"validAfter\":\"%lld\",\"validBefore\":\"%lld\",\"nonce\":"
                 "\"%s\"}}}",
                 p.version ? p.version : "1", p.scheme ? p.scheme : "exact",
                 p.network ? p.network : "base-sepolia",
                 p.sig ? p.sig
                       : "0x2d6a7588d6acca505cbf0d9a4a227e0c52c6c34008c8e8986a1283259764173608"
                         "a2ce6496642e377d6da8dbbf5836e9bd15092f9ecab05ded3d6293af148b571c",
                 p.from ? p.from : X402_FROM, p.to ? p.to : X402_PAY_TO,
                 p.value ? p.value : "\"10000\"", p.after ? p.after : TWIN_TEST_NOW - 60,
                 p.before ? p.before : TWIN_TEST_NOW + 60, p.nonce ? p.nonce : nonce);
        _cleanup_free_ char *b64 = twin_base64(json, strlen(json));
        snprintf(buf, 2048, "%s", b64);
        return buf;
}

/* The base64 JSON of rp's X-PAYMENT-RESPONSE header, decoded (new reference; NULL if none). */
static json_t *payment_response(TwinReply *rp)
{
        const char *h = json_get_str(rp->headers, "X-PAYMENT-RESPONSE");
        _cleanup_free_ char *raw = NULL;
        if (!h || twin_base64_decode(h, &raw) < 0)
                return NULL;
        return json_loads(raw, 0, NULL);
}

static void test_x402_challenge_and_pay(void)
{
        Twin *t = twin_test_new("stripe", "x402");
        TwinReply rp = {};
        char pay[2048];
        _cleanup_json_ json_t *w0 = json_deep_copy(twin_world(t));

        /* the challenge: the spec's 402 body naming this resource, nothing changed */
        x402(t, &rp, "GET", "/x402/market/report", NULL, NULL);
        CHECK(rp.status == 402 && streq(rp.tool, "x402_fetch") && !rp.state_mutation);
        CHECK(jpi(rp.body, "/x402Version") == 1 &&
              streq(jps(rp.body, "/error"), "X-PAYMENT header is required"));
        CHECK(streq(rp.error, "X-PAYMENT header is required"));
        CHECK(json_array_size(jp(rp.body, "/accepts")) == 1);
        json_t *req = jp(rp.body, "/accepts/0");
        CHECK(streq(jps(req, "/scheme"), "exact") && streq(jps(req, "/network"), "base-sepolia"));
        CHECK(streq(jps(req, "/maxAmountRequired"), "10000") &&
              streq(jps(req, "/payTo"), X402_PAY_TO));
        CHECK(streq(jps(req, "/asset"), "0x036CbD53842c5426634e7929541eC2318f3dCF7e") &&
              streq(jps(req, "/extra/name"), "USDC") && streq(jps(req, "/extra/version"), "2"));
        CHECK(streq(jps(req, "/resource"), TWIN_TEST_BASE("stripe") "/x402/market/report"));
        CHECK(streq(jps(req, "/mimeType"), "application/json") &&
              jpi(req, "/maxTimeoutSeconds") == 60 && json_is_null(jp(req, "/outputSchema")));
        CHECK(streq(jps(req, "/description"),
                    "Daily market report: index levels and the desk's view"));
        CHECK(!json_get_str(rp.headers, "X-PAYMENT-RESPONSE"));
        CHECK(json_equal(w0, twin_world(t)));

        /* the paid retry: the content, its settlement in the world, X-PAYMENT-RESPONSE */
        x402(t, &rp, "GET", "/x402/market/report", payment(pay, 0xab, (Pay){}), NULL);
        CHECK(rp.status == 200 && streq(rp.tool, "x402_fetch") && rp.state_mutation);
        CHECK(streq(jps(rp.body, "/date"), "2026-05-28") &&
              streq(jps(rp.body, "/view"), "overweight widgets"));
        CHECK(streq(json_get_str(rp.headers, "Content-Type"), "application/json"));
        _cleanup_json_ json_t *settled = payment_response(&rp);
        CHECK(json_is_true(jp(settled, "/success")) &&
              streq(jps(settled, "/network"), "base-sepolia") &&
              streq(jps(settled, "/payer"), X402_FROM));
        const char *tx = jps(settled, "/transaction");
        CHECK(tx && strlen(tx) == 66 && strncmp(tx, "0x", 2) == 0 &&
              strspn(tx + 2, "0123456789abcdef") == 64);
        CHECK(rows(t, "x402_payments") == 1);
        json_t *row = jp(twin_world(t), "/x402_payments/0");
        CHECK(streq(jps(row, "/object"), "x402_payment") &&
              streq(jps(row, "/resource"), "market/report") && jpi(row, "/price") == 10000 &&
              streq(jps(row, "/value"), "10000") && streq(jps(row, "/payer"), X402_FROM) &&
              streq(jps(row, "/pay_to"), X402_PAY_TO) && streq(jps(row, "/transaction"), tx) &&
              jpi(row, "/created") == TWIN_TEST_NOW);
        CHECK(strncmp(jps(row, "/id"), "x402_Pm", 7) == 0 &&
              streq(jps(row, "/url"), TWIN_TEST_BASE("stripe") "/x402/market/report"));
        CHECK(json_is_null(jp(rp.state_delta, "/before")) &&
              json_equal(jp(rp.state_delta, "/after"), row));
        /* no Stripe event: api.stripe.com has none for an on-chain settlement */
        CHECK(rows(t, "events") == 0);
        get(t, &rp, "/_pome/state", NULL);
        CHECK(streq(jps(rp.body, "/x402_payments/0/transaction"), tx));

        /* the same authorization again: its nonce is spent, on any resource and in any case */
        _cleanup_json_ json_t *w1 = json_deep_copy(twin_world(t));
        x402(t, &rp, "GET", "/x402/market/report", pay, NULL);
        CHECK(rp.status == 402 && streq(jps(rp.body, "/error"), "nonce already used"));
        CHECK(!rp.state_mutation && json_equal(w1, twin_world(t)));
        _cleanup_json_ json_t *refused = payment_response(&rp);
        CHECK(json_is_false(jp(refused, "/success")) &&
              streq(jps(refused, "/errorReason"), "invalid_transaction_state") &&
              streq(jps(refused, "/transaction"), "") && streq(jps(refused, "/payer"), X402_FROM));
        x402(t, &rp, "GET", "/x402/notes/weekly.md",
             payment(pay, 0,
                     (Pay){.to = X402_NOTE,
                           .value = "\"50000\"",
                           .nonce = "0x000000000000000000000000000000000000000000000000000"
                                    "00000000000AB"}),
             NULL);
        CHECK(rp.status == 402 && streq(jps(rp.body, "/error"), "nonce already used"));
        x402(t, &rp, "POST", "/x402/market/report", payment(pay, 0xab, (Pay){}),
             "{\"query\":\"latest\"}");
        CHECK(rp.status == 402 && streq(jps(rp.body, "/error"), "nonce already used"));
        CHECK(json_equal(w1, twin_world(t)));

        /* a new nonce pays again, over POST with a JSON body (not a form: not Stripe's API),
         * and more than the price covers it */
        x402(t, &rp, "POST", "/x402/market/report",
             payment(pay, 2, (Pay){.value = "\"1000000000000000000000000000000\""}),
             "{\"query\":\"latest\"}");
        CHECK(rp.status == 200 && rp.state_mutation && streq(jps(rp.body, "/date"), "2026-05-28"));
        CHECK(streq(jps(rp.request_body, "/query"), "latest"));
        CHECK(rows(t, "x402_payments") == 2 && streq(jps(twin_world(t), "/x402_payments/1/value"),
                                                     "1000000000000000000000000000000"));
        CHECK(!streq(jps(twin_world(t), "/x402_payments/1/transaction"), tx));

        /* a text resource, paid to its own address: its bytes under its own Content-Type */
        x402(t, &rp, "GET", "/x402/notes/weekly.md", NULL, NULL);
        CHECK(rp.status == 402 && streq(jps(rp.body, "/accepts/0/payTo"), X402_NOTE) &&
              streq(jps(rp.body, "/accepts/0/maxAmountRequired"), "50000") &&
              streq(jps(rp.body, "/accepts/0/mimeType"), "text/markdown; charset=utf-8"));
        x402(t, &rp, "GET", "/x402/notes/weekly.md",
             payment(pay, 3,
                     (Pay){.to = "0x2B1AE3C8B2A44A0E7E3D9F8A57F6B1C0D4E5F6A7",
                           .value = "\"50000\""}),
             NULL);
        CHECK(rp.status == 200 &&
              streq(json_get_str(rp.headers, "Content-Type"), "text/markdown; charset=utf-8"));
        const char *text = twin_reply_text(rp.headers, rp.body);
        CHECK(text && strncmp(text, "# Week 22\n", 10) == 0);
        CHECK(rows(t, "x402_payments") == 3 && rows(t, "events") == 0);
        twin_reply_done(&rp);
        twin_free(t);
}

/* Every refused payment is a 402 naming the resource, an error that says what is wrong, the
 * spec's errorReason in X-PAYMENT-RESPONSE, and the world as it was. */
static void test_x402_refusals(void)
{
        static const char b64_not_json[] = "e25vdCBqc29u";            /* {not json */
        static const char b64_array[] = "WzFd";                       /* [1] */
        static const char b64_nul[] = "eyJ4IjoxfQB7fQ==";             /* {"x":1}\0{} */
        static const char b64_unpadded[] = "eyJ4NDAyVmVyc2lvbiI6Mn0"; /* {"x402Version":2} */
        char buf[2048];
        static const char *const short_nonce = "0x1234";
        const struct {
                const char *header; /* X-PAYMENT as sent, or NULL: payment(p) */
                Pay p;
                const char *error, *reason; /* a part of the error; the errorReason */
        } bad[] = {
                {NULL,
                 {.value = "\"9999\""},
                 "value 9999 is less than maxAmountRequired 10000",
                 "invalid_exact_evm_payload_authorization_value"},
                {NULL,
                 {.value = "\"0\""},
                 "is less than maxAmountRequired",
                 "invalid_exact_evm_payload_authorization_value"},
                {NULL,
                 {.to = X402_NOTE},
                 "is not this resource's payTo " X402_PAY_TO,
                 "invalid_exact_evm_payload_recipient_mismatch"},
                {NULL,
                 {.before = TWIN_TEST_NOW},
                 "the authorization has expired: validBefore",
                 "invalid_exact_evm_payload_authorization_valid_before"},
                {NULL,
                 {.after = TWIN_TEST_NOW + 30},
                 "the authorization is not valid yet",
                 "invalid_exact_evm_payload_authorization_valid_after"},
                {NULL, {.version = "2"}, "x402Version must be 1 (got 2)", "invalid_x402_version"},
                {NULL, {.version = "\"1\""}, "x402Version must be 1", "invalid_x402_version"},
                {NULL, {.scheme = "upto"}, "scheme \"upto\" is not accepted", "invalid_scheme"},
                {NULL,
                 {.network = "base"},
                 "network \"base\" is not this resource's: it accepts "
                 "\"base-sepolia\"",
                 "invalid_network"},
                {NULL,
                 {.sig = "0xabc"},
                 "payload.signature is not hex",
                 "invalid_exact_evm_payload_signature"},
                {NULL,
                 {.sig = "deadbeef"},
                 "payload.signature is not hex",
                 "invalid_exact_evm_payload_signature"},
                {NULL,
                 {.from = "alice"},
                 "payload.authorization.from must be an address",
                 "invalid_payload"},
                {NULL,
                 {.value = "10000"},
                 "payload.authorization.value must be a string (got "
                 "10000)",
                 "invalid_payload"},
                {NULL,
                 {.value = "\"0.01\""},
                 "value must be a decimal integer string",
                 "invalid_payload"},
                {NULL, {.nonce = short_nonce}, "nonce must be 32 bytes of hex", "invalid_payload"},
                {"", {}, "X-PAYMENT is empty", "invalid_payload"},
                {"not base64!", {}, "X-PAYMENT is not base64", "invalid_payload"},
                {"eyJ=abc", {}, "X-PAYMENT is not base64", "invalid_payload"},
                {b64_not_json, {}, "X-PAYMENT does not decode to JSON", "invalid_payload"},
                {b64_array, {}, "decodes to JSON that is not an object", "invalid_payload"},
                {b64_nul, {}, "it holds a NUL byte", "invalid_payload"},
                {b64_unpadded, {}, "x402Version must be 1 (got 2)", "invalid_x402_version"},
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                Twin *t = twin_test_new("stripe", "x402");
                TwinReply rp = {};
                _cleanup_json_ json_t *w = json_deep_copy(twin_world(t));
                const char *h = bad[i].header ? bad[i].header : payment(buf, 7, bad[i].p);
                x402(t, &rp, "GET", "/x402/market/report", h, NULL);
                _cleanup_json_ json_t *resp = payment_response(&rp);
                bool ok = rp.status == 402 && !rp.state_mutation && !rp.state_delta &&
                          json_equal(w, twin_world(t)) && streq_ptr(rp.tool, "x402_fetch") &&
                          jpi(rp.body, "/x402Version") == 1 &&
                          streq_ptr(jps(rp.body, "/accepts/0/maxAmountRequired"), "10000") &&
                          strstr(strempty(jps(rp.body, "/error")), bad[i].error) &&
                          json_is_false(jp(resp, "/success")) &&
                          streq_ptr(jps(resp, "/errorReason"), bad[i].reason) &&
                          streq_ptr(jps(resp, "/network"), "base-sepolia");
                if (!ok) {
                        _cleanup_free_ char *b = json_dumps(rp.body, JSON_COMPACT);
                        _cleanup_free_ char *r = json_dumps(resp, JSON_COMPACT);
                        fprintf(stderr, "x402 refusal %zu: %d %s %s\n", i, rp.status, strempty(b),
                                strempty(r));
                        check_failures++;
                }
                twin_reply_done(&rp);
                twin_free(t);
        }
}

static void test_x402_surface(void)
{
        Twin *t = twin_test_new("stripe", "x402");
        TwinReply rp = {};
        char pay[2048];
        _cleanup_json_ json_t *w = json_deep_copy(twin_world(t));

        /* an unknown resource is the 404 of Stripe's envelope, paid for or not */
        x402(t, &rp, "GET", "/x402/market/nope", NULL, NULL);
        CHECK(rp.status == 404 && streq(rp.tool, "x402_fetch") && !rp.state_mutation);
        CHECK(streq(jps(rp.body, "/error/type"), "invalid_request_error") &&
              streq(jps(rp.body, "/error/code"), "resource_missing") &&
              streq(jps(rp.body, "/error/message"), "No such x402 resource: 'market/nope'"));
        /* as every route of the twin, a trailing '/' lands on the resource all the same */
        x402(t, &rp, "POST", "/x402/market/report/", NULL, NULL);
        CHECK(rp.status == 402 && streq(jps(rp.body, "/accepts/0/resource"),
                                        TWIN_TEST_BASE("stripe") "/x402/market/report"));
        CHECK(json_equal(w, twin_world(t)));
        /* other methods are not served: the loud 501 */
        call(t, &rp, "DELETE", "/x402/market/report", NULL, NULL);
        CHECK(rp.status == 501 && streq(rp.fidelity, "unsupported"));
        /* a resource server takes any query; Stripe's unknown-parameter refusal is not its */
        get(t, &rp, "/x402/market/report", "symbol=ACME-100&expand[]=x");
        CHECK(rp.status == 402 && streq(jps(rp.body, "/error"), "X-PAYMENT header is required"));

        /* REST only: not an MCP tool */
        twin_test_mcp(t, &rp, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
        size_t i;
        json_t *tool;
        json_array_foreach (jp(rp.body, "/result/tools"), i, tool)
                CHECK(!streq(json_get_str(tool, "name"), "x402_fetch"));
        twin_test_call(t, &rp, "x402_fetch", "{\"path\":\"market/report\"}");
        CHECK(jpi(rp.body, "/error/code") == -32602);
        CHECK(json_equal(w, twin_world(t)));
        twin_reply_done(&rp);
        twin_free(t);

        /* the default account sells nothing, and its world has no x402 rows */
        t = twin_test_new("stripe", "default");
        CHECK(!jp(twin_world(t), "/x402_resources") && !jp(twin_world(t), "/x402_payments"));
        x402(t, &rp, "GET", "/x402/market/report", NULL, NULL);
        CHECK(rp.status == 404 && streq(jps(rp.body, "/error/code"), "resource_missing"));
        twin_reply_done(&rp);
        twin_free(t);

        /* failure injection reaches the resources; an injected failure settles nothing */
        t = twin_seed_text(
                "{\"x402_resources\": [{\"path\": \"r\", \"price\": 1, \"content\": {}}],"
                " \"failure_injection\": [{\"method\": \"GET\", \"path\": \"/x402/r\","
                " \"attempt\": 1, \"mode\": \"before_handler\", \"status\": 503}]}");
        x402(t, &rp, "GET", "/x402/r", payment(pay, 1, (Pay){.value = "\"1\""}), NULL);
        CHECK(rp.status == 503 && streq(rp.tool, "x402_fetch") && rows(t, "x402_payments") == 0);
        x402(t, &rp, "GET", "/x402/r", pay, NULL);
        CHECK(rp.status == 200 && rows(t, "x402_payments") == 1);
        CHECK(streq(json_get_str(rp.headers, "Content-Type"), "application/json") &&
              json_object_size(rp.body) == 0);
        twin_reply_done(&rp);
        twin_free(t);

        static const struct {
                const char *resource, *message;
        } bad[] = {
                {"{\"path\": \"../etc\", \"price\": 1, \"content\": {}}",
                 "x402_resources[0].path: needs a relative path"},
                {"{\"path\": \"/r\", \"price\": 1, \"content\": {}}", ".path: needs a relative"},
                {"{\"path\": \"a//b\", \"price\": 1, \"content\": {}}", ".path: needs a relative"},
                {"{\"path\": \"a b\", \"price\": 1, \"content\": {}}", ".path: needs a relative"},
                {"{\"price\": 1, \"content\": {}}", "x402_resources[0].path: needs"},
                {"{\"path\": \"r\", \"price\": 0, \"content\": {}}",
                 "x402_resources[0].price: must be a positive integer"},
                {"{\"path\": \"r\", \"price\": \"10\", \"content\": {}}",
                 ".price: must be a positive integer"},
                {"{\"path\": \"r\", \"price\": 1.5, \"content\": {}}",
                 ".price: must be a positive integer"},
                {"{\"path\": \"r\", \"price\": 1, \"asset\": \"USDC\", \"content\": {}}",
                 ".asset: must be a token contract address"},
                {"{\"path\": \"r\", \"price\": 1, \"pay_to\": \"0x12\", \"content\": {}}",
                 ".pay_to: must be an address"},
                {"{\"path\": \"r\", \"price\": 1, \"network\": \"Base Sepolia\", \"content\": {}}",
                 ".network: must be a network name"},
                {"{\"path\": \"r\", \"price\": 1}", ".content: must be a string"},
                {"{\"path\": \"r\", \"price\": 1, \"content\": 5}", ".content: must be a string"},
                {"{\"path\": \"r\", \"price\": 1, \"content\": \"hi\", \"mime_type\":"
                 " \"application/json\"}",
                 ".mime_type: a string content is served as text"},
                {"{\"path\": \"r\", \"price\": 1, \"content\": [1], \"mime_type\":"
                 " \"text/plain\"}",
                 ".mime_type: an object or array content is served as JSON"},
                {"{\"path\": \"r\", \"price\": 1, \"content\": \"hi\", \"mime_type\":"
                 " \"text/plain\\r\\nX-Evil: 1\"}",
                 ".mime_type: must be a media type"},
                {"{\"path\": \"r\", \"prise\": 1, \"content\": {}}",
                 "x402_resources[0].prise: unknown key"},
                {"{\"path\": \"r\", \"price\": 1, \"content\": {}}, {\"path\": \"r\", \"price\":"
                 " 2, \"content\": {}}",
                 "x402_resources[1].path: \"r\" is x402_resources[0]'s path already"},
                {"\"r\"", "x402_resources[0]: must be an object"},
        };
        for (i = 0; i < ELEMENTSOF(bad); i++) {
                char text[512];
                snprintf(text, sizeof(text), "{\"x402_resources\": [%s]}", bad[i].resource);
                _cleanup_json_ json_t *seed = json_loads(text, 0, NULL);
                char err[256] = "";
                Twin *x = NULL;
                int r = seed ? twin_new(&twin_kind_stripe, seed, &x, err, sizeof(err)) : 0;
                CHECK(r == -EINVAL && !x);
                if (!strstr(err, bad[i].message)) {
                        fprintf(stderr, "x402 seed %zu: got \"%s\"\n", i, err);
                        check_failures++;
                }
                twin_free(x);
        }
        _cleanup_json_ json_t *seed = json_loads("{\"x402_payments\": []}", 0, NULL);
        char err[256] = "";
        CHECK(twin_new(&twin_kind_stripe, seed, &t, err, sizeof(err)) == -EINVAL &&
              strstr(err, "unknown key \"x402_payments\""));
}

/* ------------------------------------------------------------------ failure injection modes */

/* The row of collection whose id is id (borrowed), NULL when none. */
static json_t *find_row(Twin *t, const char *collection, const char *id)
{
        size_t i;
        json_t *row;
        json_array_foreach (json_object_get(twin_world(t), collection), i, row) {
                if (streq_ptr(json_get_str(row, "id"), id))
                        return row;
        }
        return NULL;
}

/* A seed in the shape of hosted Pome's task 14 (cli/tasks/14-stripe-refund-retry.md: its
 * row keys account_id, *_id, updated, captured_at): a settled $300 crypto charge whose first
 * refund is done but its reply lost (after_handler, the default mode); mode names another
 * mode ("" for none). */
static Twin *refund_retry_twin(const char *mode)
{
        char seed[2048];
        snprintf(seed, sizeof(seed),
                 "{\"api_keys\": [{\"key\": \"sk_test_pome_default\", \"sid\": \"default\","
                 " \"account_id\": \"acct_retry\"}],"
                 " \"payment_intents\": [{\"id\": \"pi_LostReply0001\", \"account_id\":"
                 " \"acct_retry\", \"amount\": 30000, \"currency\": \"usd\", \"status\":"
                 " \"succeeded\", \"latest_charge_id\": \"ch_LostReply0001\","
                 " \"payment_method_types\": [\"crypto\"], \"created\": 1767225600,"
                 " \"updated\": 1767225600, \"captured_at\": 1767225600}],"
                 " \"charges\": [{\"id\": \"ch_LostReply0001\", \"account_id\": \"acct_retry\","
                 " \"payment_intent_id\": \"pi_LostReply0001\", \"amount\": 30000,"
                 " \"amount_captured\": 30000, \"amount_refunded\": 0, \"status\": \"succeeded\","
                 " \"currency\": \"usd\", \"captured\": true, \"created\": 1767225600}],"
                 " \"failure_injection\": [{\"method\": \"POST\", \"path\": \"/v1/refunds\","
                 " \"attempt\": 1, %s \"status\": 402, \"body\": {\"error\": {\"type\":"
                 " \"card_error\", \"code\": \"card_declined\", \"message\": \"Reply lost\"}}}]}",
                 mode);
        return twin_seed_text(seed);
}

static long long refunded(Twin *t)
{
        return jpi(twin_world(t), "/charges/0/amount_refunded");
}

static void test_failure_injection_modes(void)
{
        TwinReply rp = {};
        const char *form = "charge=ch_LostReply0001&amount=7500";

        /* a blind retry: the first refund is saved under the 402, the retry makes a second */
        Twin *t = refund_retry_twin("");
        CHECK(streq(jps(twin_world(t), "/failure_injection/0/mode"), "after_handler"));
        call(t, &rp, "POST", "/v1/refunds", form, "sdk-key-1");
        CHECK(rp.status == 402 && streq(jps(rp.body, "/error/type"), "card_error") &&
              streq(jps(rp.body, "/error/message"), "Reply lost"));
        CHECK(streq(rp.error, "Reply lost") && streq(rp.tool, "create_refund"));
        CHECK(rp.state_mutation && json_is_null(jp(rp.state_delta, "/before")) &&
              strncmp(jps(rp.state_delta, "/after/id"), "re_", 3) == 0);
        CHECK(!json_get_str(rp.headers, "Stripe-Should-Retry"));
        CHECK(rows(t, "refunds") == 1 && refunded(t) == 7500);
        char first[40];
        snprintf(first, sizeof(first), "%s", jps(rp.state_delta, "/after/id"));
        call(t, &rp, "POST", "/v1/refunds", form, "sdk-key-2");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/object"), "refund") &&
              !streq(jps(rp.body, "/id"), first));
        CHECK(rows(t, "refunds") == 2 && refunded(t) == 15000);
        get(t, &rp, "/v1/refunds", "charge=ch_LostReply0001");
        CHECK(rp.status == 200 && json_array_size(jp(rp.body, "/data")) == 2);
        twin_free(t);

        /* the same Idempotency-Key: the key kept the real refund, the retry replays it */
        t = refund_retry_twin("");
        call(t, &rp, "POST", "/v1/refunds", form, "one-key");
        CHECK(rp.status == 402 && rp.state_mutation && rows(t, "refunds") == 1);
        snprintf(first, sizeof(first), "%s", jps(rp.state_delta, "/after/id"));
        call(t, &rp, "POST", "/v1/refunds", form, "one-key");
        CHECK(rp.status == 200 && rp.idempotency_dedupe && !rp.state_mutation);
        CHECK(streq(jps(rp.body, "/id"), first) && jpi(rp.body, "/amount") == 7500);
        CHECK(streq(json_get_str(rp.headers, "Idempotent-Replayed"), "true"));
        CHECK(rows(t, "refunds") == 1 && refunded(t) == 7500);
        twin_free(t);

        /* verify, then decide: the refund listed after the 402 is the one made */
        t = refund_retry_twin("");
        call(t, &rp, "POST", "/v1/refunds", form, NULL);
        CHECK(rp.status == 402);
        get(t, &rp, "/v1/refunds", "charge=ch_LostReply0001");
        CHECK(json_array_size(jp(rp.body, "/data")) == 1 &&
              jpi(rp.body, "/data/0/amount") == 7500 &&
              streq(jps(rp.body, "/data/0/charge"), "ch_LostReply0001"));
        twin_free(t);

        /* before_handler: the 402 and nothing else, the retry makes the one refund */
        t = refund_retry_twin("\"mode\": \"before_handler\",");
        _cleanup_json_ json_t *w0 = json_deep_copy(twin_world(t));
        call(t, &rp, "POST", "/v1/refunds", form, "k");
        CHECK(rp.status == 402 && !rp.state_mutation && !rp.state_delta);
        CHECK(rows(t, "refunds") == 0 && rows(t, "events") == 0);
        _cleanup_json_ json_t *w1 = json_deep_copy(twin_world(t));
        json_object_del(w1, "attempts");
        CHECK(json_equal(w0, w1));
        call(t, &rp, "POST", "/v1/refunds", form, "k");
        CHECK(rp.status == 200 && !rp.idempotency_dedupe && rows(t, "refunds") == 1);
        twin_free(t);

        /* over MCP the action runs too: a tool error with the refund saved */
        t = refund_retry_twin("");
        twin_test_call(t, &rp, "create_refund",
                       "{\"charge\": \"ch_LostReply0001\", \"amount\": 7500}");
        CHECK(json_is_true(jp(rp.body, "/result/isError")) && rp.state_mutation);
        CHECK(rows(t, "refunds") == 1 && refunded(t) == 7500);
        twin_free(t);

        /* an action the injection overrides that fails on its own stays a failure that
         * changed nothing; its key is not kept (a 400), so the retry runs it again */
        t = refund_retry_twin("");
        call(t, &rp, "POST", "/v1/refunds", "charge=ch_nope", "bad");
        CHECK(rp.status == 402 && !rp.state_mutation && rows(t, "refunds") == 0);
        call(t, &rp, "POST", "/v1/refunds", "charge=ch_nope", "bad");
        CHECK(rp.status == 404 && !rp.idempotency_dedupe);
        twin_free(t);

        /* a 5xx injected after the action still tells the SDK to retry */
        t = twin_seed_text(
                "{\"failure_injection\": [{\"path\": \"/v1/customers\", \"status\": 503}]}");
        call(t, &rp, "POST", "/v1/customers", "email=a@example.com", "ck");
        CHECK(rp.status == 503 && streq(jps(rp.body, "/error/type"), "api_error") &&
              streq(json_get_str(rp.headers, "Stripe-Should-Retry"), "true"));
        CHECK(rp.state_mutation && rows(t, "customers") == 1);
        call(t, &rp, "POST", "/v1/customers", "email=a@example.com", "ck");
        CHECK(rp.status == 200 && rp.idempotency_dedupe && rows(t, "customers") == 1);
        twin_free(t);

        /* a mode the twin does not know is the seed's error */
        _cleanup_json_ json_t *bad = json_loads(
                "{\"failure_injection\": [{\"path\": \"/v1/refunds\", \"mode\": \"sometimes\"}]}",
                0, NULL);
        char err[256] = "";
        Twin *x = NULL;
        CHECK(twin_new(&twin_kind_stripe, bad, &x, err, sizeof(err)) == -EINVAL && !x);
        CHECK(strstr(err, "failure_injection[0].mode: must be \"before_handler\""));
        twin_reply_done(&rp);
}

/* ------------------------------------------------------------------ crypto */

#define CRYPTO_PI                                                 \
        "amount=10000&currency=usd&payment_method_types[]=crypto" \
        "&payment_method_options[crypto][mode]=deposit"           \
        "&payment_method_options[crypto][deposit_options][networks][]=base"

static void test_crypto_intents(void)
{
        Twin *t = twin_test_new("stripe", "default");
        TwinReply rp = {};
        char types[512];

        /* created: requires_action with a deposit address per network, in Stripe's shape */
        post(t, &rp, "/v1/payment_intents",
             CRYPTO_PI "&payment_method_options[crypto][deposit_options][networks][]=solana");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "requires_action"));
        CHECK(jpi(rp.body, "/amount") == 10000 && streq(jps(rp.body, "/currency"), "usd"));
        CHECK(streq(jps(rp.body, "/payment_method_types/0"), "crypto") &&
              streq(jps(rp.body, "/payment_method_options/crypto/mode"), "deposit"));
        CHECK(streq(jps(rp.body, "/next_action/type"), "crypto_display_details"));
        json_t *base = jp(rp.body, "/next_action/crypto_display_details/deposit_addresses/base");
        const char *addr = jps(base, "/address");
        CHECK(addr && strlen(addr) == 42 && strncmp(addr, "0x", 2) == 0 &&
              strspn(addr + 2, "0123456789abcdef") == 40);
        CHECK(streq(jps(base, "/supported_tokens/0/token_currency"), "usdc") &&
              streq(jps(base, "/supported_tokens/0/token_contract_address"),
                    "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"));
        const char *sol = jps(rp.body, "/next_action/crypto_display_details/deposit_addresses/"
                                       "solana/address");
        CHECK(sol && strlen(sol) >= 32 && strlen(sol) <= 44 &&
              strspn(sol, "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz") ==
                      strlen(sol));
        CHECK(rp.state_mutation && streq(rp.tool, "create_payment_intent"));
        CHECK(streq(event_types(t, types, sizeof(types)),
                    "payment_intent.created payment_intent.requires_action"));
        char id[40], path[160];
        snprintf(id, sizeof(id), "%s", jps(rp.body, "/id"));

        /* confirming it again changes nothing; an update may not touch its amount */
        snprintf(path, sizeof(path), "/v1/payment_intents/%s/confirm", id);
        post(t, &rp, path, NULL);
        CHECK(rp.status == 200 && !rp.state_mutation &&
              streq(jps(rp.body, "/status"), "requires_action"));
        snprintf(path, sizeof(path), "/v1/payment_intents/%s", id);
        post(t, &rp, path, "amount=5000");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/param"), "amount"));
        post(t, &rp, path, "metadata[order]=42");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/metadata/order"), "42"));

        /* the deposit: processing, then succeeded with a charge and its balance transaction */
        snprintf(path, sizeof(path), "/v1/test_helpers/payment_intents/%s/simulate_crypto_deposit",
                 id);
        post(t, &rp, path, "buyer_wallet=" X402_FROM "&transaction_hash=0xabc");
        CHECK(rp.status == 200 && streq(rp.tool, "simulate_crypto_deposit") && rp.state_mutation);
        CHECK(streq(jps(rp.body, "/status"), "succeeded") &&
              jpi(rp.body, "/amount_received") == 10000);
        CHECK(json_is_null(jp(rp.body, "/next_action")));
        CHECK(streq(jps(rp.state_delta, "/before/status"), "requires_action") &&
              streq(jps(rp.state_delta, "/after/status"), "succeeded"));
        char ch[40];
        snprintf(ch, sizeof(ch), "%s", strempty(jps(rp.body, "/latest_charge")));
        json_t *charge = find_row(t, "charges", ch);
        CHECK(charge && streq(jps(charge, "/status"), "succeeded") &&
              jpi(charge, "/amount") == 10000 && streq(jps(charge, "/payment_intent"), id));
        CHECK(streq(jps(charge, "/payment_method_details/type"), "crypto") &&
              streq(jps(charge, "/payment_method_details/crypto/network"), "base") &&
              streq(jps(charge, "/payment_method_details/crypto/buyer_address"), X402_FROM) &&
              streq(jps(charge, "/payment_method_details/crypto/transaction_hash"), "0xabc"));
        json_t *txn = find_row(t, "balance_transactions", jps(charge, "/balance_transaction"));
        CHECK(txn && jpi(txn, "/amount") == 10000 && jpi(txn, "/fee") == 150 &&
              jpi(txn, "/net") == 9850 && streq(jps(txn, "/source"), ch));
        CHECK(streq(event_types(t, types, sizeof(types)),
                    "payment_intent.created payment_intent.requires_action "
                    "payment_intent.processing charge.succeeded payment_intent.succeeded"));
        /* once settled it is over */
        post(t, &rp, path, NULL);
        CHECK(rp.status == 400 &&
              streq(jps(rp.body, "/error/code"), "payment_intent_unexpected_state"));
        /* and the charge refunds as any */
        char form[128];
        snprintf(form, sizeof(form), "charge=%s&amount=2500", ch);
        post(t, &rp, "/v1/refunds", form);
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "succeeded"));

        /* refusals, each Stripe's 400 invalid_request_error, the world unchanged */
        static const struct {
                const char *form, *param;
        } bad[] = {
                {"amount=10000&currency=usd&payment_method_types[]=crypto",
                 "payment_method_options[crypto][mode]"},
                {"amount=10000&currency=usd&payment_method_types[]=crypto"
                 "&payment_method_options[crypto][mode]=deposit",
                 "payment_method_options[crypto][deposit_options][networks]"},
                {CRYPTO_PI "&payment_method_options[crypto][deposit_options][networks][]=ethereum",
                 "payment_method_options[crypto][deposit_options][networks]"},
                {"amount=10000&currency=usd&payment_method_types[]=crypto"
                 "&payment_method_options[crypto][mode]=custom",
                 "payment_method_options[crypto][mode]"},
                {"amount=10000&currency=eur&payment_method_types[]=crypto"
                 "&payment_method_options[crypto][mode]=deposit"
                 "&payment_method_options[crypto][deposit_options][networks][]=base",
                 "currency"},
                {CRYPTO_PI "&payment_method=pm_card_visa", "payment_method"},
                {CRYPTO_PI "&capture_method=manual", "capture_method"},
                {CRYPTO_PI "&payment_method_data[type]=card", "payment_method_data[type]"},
                {"amount=10000&currency=usd&payment_method_types[]=crypto"
                 "&payment_method_types[]=card",
                 "payment_method_types"},
                {"amount=10000&currency=usd&payment_method_types[]=card"
                 "&payment_method_options[crypto][mode]=deposit",
                 "payment_method_options[crypto]"},
                {"amount=-5&currency=usd&payment_method_types[]=crypto", "amount"},
        };
        _cleanup_json_ json_t *w = json_deep_copy(twin_world(t));
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                post(t, &rp, "/v1/payment_intents", bad[i].form);
                CHECK(rp.status == 400 &&
                      streq(jps(rp.body, "/error/type"), "invalid_request_error") &&
                      !rp.state_mutation);
                if (!streq_ptr(jps(rp.body, "/error/param"), bad[i].param)) {
                        fprintf(stderr, "crypto refusal %zu: param %s, wanted %s (%s)\n", i,
                                strempty(jps(rp.body, "/error/param")), bad[i].param,
                                strempty(jps(rp.body, "/error/message")));
                        check_failures++;
                }
        }
        CHECK(json_equal(w, twin_world(t)));
        /* the helper refuses what awaits no deposit */
        post(t, &rp, "/v1/payment_intents", "amount=2000&currency=usd&payment_method=pm_card_visa");
        snprintf(path, sizeof(path), "/v1/test_helpers/payment_intents/%s/simulate_crypto_deposit",
                 jps(rp.body, "/id"));
        post(t, &rp, path, NULL);
        CHECK(rp.status == 400 &&
              streq(jps(rp.body, "/error/code"), "payment_intent_unexpected_state"));
        post(t, &rp, "/v1/test_helpers/payment_intents/pi_nope/simulate_crypto_deposit", NULL);
        CHECK(rp.status == 404 && streq(jps(rp.body, "/error/code"), "resource_missing"));
        /* a card PaymentIntent is what it was: $0.50 at least, card only */
        post(t, &rp, "/v1/payment_intents", "amount=10&currency=usd");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/error/code"), "amount_too_small"));
        post(t, &rp, "/v1/payment_intents", "amount=1000&currency=usd");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/payment_method_types/0"), "card") &&
              streq(jps(rp.body, "/status"), "requires_payment_method"));

        /* a canceled one takes no deposit and no confirm */
        post(t, &rp, "/v1/payment_intents", CRYPTO_PI);
        snprintf(id, sizeof(id), "%s", jps(rp.body, "/id"));
        snprintf(path, sizeof(path), "/v1/payment_intents/%s/cancel", id);
        post(t, &rp, path, NULL);
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "canceled"));
        snprintf(path, sizeof(path), "/v1/payment_intents/%s/confirm", id);
        post(t, &rp, path, NULL);
        CHECK(rp.status == 400);
        twin_free(t);

        /* over MCP, with typed JSON and confirm (Stripe's guide confirms at create) */
        t = twin_test_new("stripe", "default");
        twin_test_call(t, &rp, "create_payment_intent",
                       "{\"amount\": 10000, \"currency\": \"usd\", \"payment_method_types\":"
                       " [\"crypto\"], \"payment_method_data\": {\"type\": \"crypto\"},"
                       " \"confirm\": true, \"payment_method_options\": {\"crypto\": {\"mode\":"
                       " \"deposit\", \"deposit_options\": {\"networks\": [\"base\"]}}}}");
        CHECK(json_is_false(jp(rp.body, "/result/isError")) &&
              streq(jps(rp.body, "/result/structuredContent/status"), "requires_action"));
        char args[128];
        snprintf(args, sizeof(args), "{\"id\": \"%s\"}",
                 jps(rp.body, "/result/structuredContent/id"));
        twin_test_call(t, &rp, "simulate_crypto_deposit", args);
        CHECK(json_is_false(jp(rp.body, "/result/isError")) &&
              streq(jps(rp.body, "/result/structuredContent/status"), "succeeded"));
        CHECK(rows(t, "charges") == 1);
        twin_reply_done(&rp);
        twin_free(t);
}

/* ------------------------------------------------------------------ x402 without a seed */

static void test_x402_default_resource(void)
{
        Twin *t = twin_test_new("stripe", "default");
        TwinReply rp = {};
        char pay[2048], types[512];

        /* the challenge opens a crypto PaymentIntent whose deposit address is the payTo */
        x402(t, &rp, "GET", "/x402/protected-resource", NULL, NULL);
        CHECK(rp.status == 402 && streq(rp.tool, "x402_fetch"));
        CHECK(jpi(rp.body, "/x402Version") == 1 &&
              streq(jps(rp.body, "/error"), "payment required"));
        json_t *req = jp(rp.body, "/accepts/0");
        CHECK(streq(jps(req, "/scheme"), "exact") && streq(jps(req, "/network"), "eip155:84532") &&
              streq(jps(req, "/maxAmountRequired"), "10000") && streq(jps(req, "/asset"), "USDC"));
        CHECK(streq(jps(req, "/resource"), TWIN_TEST_BASE("stripe") "/x402/protected-resource") &&
              streq(jps(req, "/mimeType"), "application/json") &&
              jpi(req, "/maxTimeoutSeconds") == 60 &&
              streq(jps(req, "/description"), "Unlock the hosted Stripe x402 protected resource"));
        CHECK(rows(t, "payment_intents") == 1 && rp.state_mutation);
        json_t *pi = jp(twin_world(t), "/payment_intents/0");
        CHECK(streq(jps(pi, "/status"), "requires_action") && jpi(pi, "/amount") == 1 &&
              streq(jps(pi, "/metadata/x402_resource"), "protected-resource"));
        char pay_to[64];
        snprintf(pay_to, sizeof(pay_to), "%s", jps(req, "/payTo"));
        CHECK(streq(pay_to, jps(pi, "/next_action/crypto_display_details/deposit_addresses/base/"
                                    "address")));

        /* asked again, the same intent, nothing new */
        x402(t, &rp, "GET", "/x402/protected-resource", NULL, NULL);
        CHECK(rp.status == 402 && !rp.state_mutation && rows(t, "payment_intents") == 1 &&
              streq(jps(rp.body, "/accepts/0/payTo"), pay_to));

        /* a payment to another address, or on another network, is refused; nothing changes */
        _cleanup_json_ json_t *w = json_deep_copy(twin_world(t));
        x402(t, &rp, "GET", "/x402/protected-resource",
             payment(pay, 1, (Pay){.network = "eip155:84532"}), NULL);
        CHECK(rp.status == 402 && !rp.state_mutation &&
              strstr(jps(rp.body, "/error"), "is not this resource's payTo"));
        x402(t, &rp, "GET", "/x402/protected-resource", payment(pay, 1, (Pay){.to = pay_to}), NULL);
        CHECK(rp.status == 402 && strstr(jps(rp.body, "/error"), "network"));
        CHECK(json_equal(w, twin_world(t)));

        /* paid: the intent succeeds through Stripe's rail, the content unlocks */
        x402(t, &rp, "GET", "/x402/protected-resource",
             payment(pay, 2, (Pay){.to = pay_to, .network = "eip155:84532"}), NULL);
        CHECK(rp.status == 200 && rp.state_mutation);
        CHECK(json_is_true(jp(rp.body, "/ok")) &&
              streq(jps(rp.body, "/resource"), "stripe-x402-protected-resource") &&
              streq(jps(rp.body, "/message"), "Payment verified by the Stripe twin."));
        _cleanup_json_ json_t *settled = payment_response(&rp);
        CHECK(json_is_true(jp(settled, "/success")) &&
              streq(jps(settled, "/network"), "eip155:84532") &&
              streq(jps(settled, "/payer"), X402_FROM));
        pi = jp(twin_world(t), "/payment_intents/0");
        CHECK(streq(jps(pi, "/status"), "succeeded") &&
              streq(jps(rp.state_delta, "/after/status"), "succeeded") &&
              streq(jps(rp.state_delta, "/before/status"), "requires_action"));
        json_t *ch = find_row(t, "charges", jps(pi, "/latest_charge"));
        CHECK(ch && streq(jps(ch, "/status"), "succeeded") && jpi(ch, "/amount") == 1 &&
              streq(jps(ch, "/payment_method_details/crypto/buyer_address"), X402_FROM) &&
              streq(jps(ch, "/payment_method_details/crypto/transaction_hash"),
                    jps(settled, "/transaction")));
        CHECK(streq(event_types(t, types, sizeof(types)),
                    "payment_intent.created payment_intent.requires_action "
                    "payment_intent.processing charge.succeeded payment_intent.succeeded"));
        CHECK(rows(t, "x402_payments") == 1 &&
              streq(jps(twin_world(t), "/x402_payments/0/payment_intent"), jps(pi, "/id")));
        /* paid once: the same payment again is refused (its intent is settled) and the
         * challenge names a new intent; nothing is settled twice */
        x402(t, &rp, "GET", "/x402/protected-resource", pay, NULL);
        CHECK(rp.status == 402 && strstr(jps(rp.body, "/error"), "is not this resource's payTo"));
        CHECK(rows(t, "payment_intents") == 2 && rows(t, "x402_payments") == 1 &&
              rows(t, "charges") == 1 && !streq(jps(rp.body, "/accepts/0/payTo"), pay_to));
        /* paid to the new one with the spent nonce: the nonce is what refuses it */
        snprintf(pay_to, sizeof(pay_to), "%s", jps(rp.body, "/accepts/0/payTo"));
        x402(t, &rp, "GET", "/x402/protected-resource",
             payment(pay, 2, (Pay){.to = pay_to, .network = "eip155:84532"}), NULL);
        CHECK(rp.status == 402 && streq(jps(rp.body, "/error"), "nonce already used"));
        CHECK(streq(jps(twin_world(t), "/payment_intents/1/status"), "requires_action"));
        twin_reply_done(&rp);
        twin_free(t);

        /* a seed that declares the path serves its own resource there, and opens nothing */
        t = twin_seed_text("{\"x402_resources\": [{\"path\": \"protected-resource\", \"price\": 5,"
                           " \"content\": {\"mine\": true}}]}");
        x402(t, &rp, "GET", "/x402/protected-resource", NULL, NULL);
        CHECK(rp.status == 402 && streq(jps(rp.body, "/accepts/0/payTo"), X402_PAY_TO) &&
              streq(jps(rp.body, "/accepts/0/maxAmountRequired"), "5"));
        CHECK(!rp.state_mutation && rows(t, "payment_intents") == 0);
        twin_reply_done(&rp);
        twin_free(t);
}

/* Booleans as api.stripe.com reads them: "true"/"false" in any case (stripe-python sends
 * "True"), never "1" or "0" */
static void test_booleans(void)
{
        Twin *t = twin_test_new("stripe", "default");
        TwinReply rp = {};
        const char *yes[] = {"True", "true", "TRUE"};
        for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
                char buf[160];
                snprintf(buf, sizeof(buf),
                         "amount=700&currency=usd&payment_method=pm_card_visa&confirm=%s&off_"
                         "session=%s",
                         yes[i], yes[i]);
                post(t, &rp, "/v1/payment_intents", buf);
                CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "succeeded"));
        }
        post(t, &rp, "/v1/products", "name=Gadget&active=TRUE");
        CHECK(rp.status == 200 && json_is_true(jp(rp.body, "/active")));
        post(t, &rp, "/v1/products", "name=Widget&active=False");
        CHECK(rp.status == 200 && json_is_false(jp(rp.body, "/active")));
        call(t, &rp, "GET", "/v1/products", "active=False", NULL);
        CHECK(rp.status == 200 && json_array_size(jp(rp.body, "/data")) == 1 &&
              streq(jps(rp.body, "/data/0/name"), "Widget"));
        const char *no[] = {"1", "0", "yes", ""};
        for (size_t i = 0; i < ELEMENTSOF(no); i++) {
                char buf[160];
                snprintf(buf, sizeof(buf), "amount=700&currency=usd&confirm=%s", no[i]);
                post(t, &rp, "/v1/payment_intents", buf);
                CHECK(rp.status == 400 &&
                      streq(jps(rp.body, "/error/code"), "parameter_invalid_boolean") &&
                      streq(jps(rp.body, "/error/param"), "confirm"));
        }
        twin_reply_done(&rp);
        twin_free(t);
}

/* GET /v1/payment_methods?customer=&type= (stripe-python's PaymentMethod.list), and the
 * legacy POST /v1/charges the twin does not serve: the loud 501, not a bare 404 */
static void test_payment_method_list(void)
{
        Twin *t = twin_test_new("stripe", "default");
        TwinReply rp = {};
        post(t, &rp, "/v1/customers", "email=pm@example.com");
        char cus[64], buf[128];
        snprintf(cus, sizeof(cus), "%s", jps(rp.body, "/id"));
        snprintf(buf, sizeof(buf), "customer=%s", cus);
        post(t, &rp, "/v1/payment_methods/pm_card_visa/attach", buf);
        CHECK(rp.status == 200);
        post(t, &rp, "/v1/payment_methods", "type=card&card[token]=tok_mastercard");
        CHECK(rp.status == 200); /* not attached: not the customer's */
        snprintf(buf, sizeof(buf), "customer=%s&type=card", cus);
        call(t, &rp, "GET", "/v1/payment_methods", buf, NULL);
        CHECK(rp.status == 200 && streq(rp.tool, "list_payment_methods") &&
              json_array_size(jp(rp.body, "/data")) == 1 &&
              streq(jps(rp.body, "/data/0/customer"), cus) &&
              streq(jps(rp.body, "/url"), "/v1/payment_methods"));
        call(t, &rp, "GET", "/v1/payment_methods", "type=card", NULL);
        CHECK(rp.status == 200 && json_array_size(jp(rp.body, "/data")) == 2);
        call(t, &rp, "GET", "/v1/payment_methods", "customer=cus_nope", NULL);
        CHECK(rp.status == 404 && streq(jps(rp.body, "/error/code"), "resource_missing"));
        post(t, &rp, "/v1/charges", "amount=100&currency=usd&source=tok_visa");
        CHECK(rp.status == 501 && streq(rp.fidelity, "unsupported"));
        twin_reply_done(&rp);
        twin_free(t);
}

int main(void)
{
        test_payment_method_list();
        test_booleans();
        test_payment();
        test_status_machine();
        test_declines();
        test_refunds();
        test_manual_capture();
        test_search();
        test_idempotency();
        test_failure_injection();
        test_params_and_forms();
        test_lists();
        test_mcp();
        test_seeds();
        test_refusals_change_nothing();
        test_auth_envelopes();
        test_products();
        test_prices();
        test_subscription_paid();
        test_subscription_unpaid();
        test_subscription_refusals();
        test_test_clocks();
        test_billing_mcp();
        test_x402_challenge_and_pay();
        test_x402_refusals();
        test_x402_surface();
        test_failure_injection_modes();
        test_crypto_intents();
        test_x402_default_resource();
        return check_finish();
}
