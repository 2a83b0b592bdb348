/* SPDX-License-Identifier: MIT */
/*
 * Invoices (https://docs.stripe.com/api/invoices): the ones subscriptions make, read back here
 * (retrieve; list by customer, subscription, status). A subscription's invoice is drafted
 * (invoice.created), finalized (a number, status open, invoice.finalized) and paid with a
 * PaymentIntent that goes through the payment intents' own attempt (stripe_pi_attempt): a
 * charge, a balance transaction, the test card's decline. Whichever call makes that attempt —
 * the subscription's creation, a renewal at a test clock's advance, or the agent confirming
 * the intent itself — stripe_invoice_payment_attempted brings the invoice (paid, or still open
 * with invoice.payment_failed / invoice.payment_action_required) and its subscription
 * (incomplete or past_due → active) along. An invoice of nothing to pay (a trial) is paid at
 * finalization, without an intent. Shapes are API version 2024-06-20's (the invoice names its
 * payment_intent and charge); hosted_invoice_url and invoice_pdf are null: the twin hosts no
 * pages.
 */
#include "common/json-util.h"
#include "pods/stripe/stripe.h"

/* Stripe's invoice object (https://docs.stripe.com/api/invoices/object) before its own fields */
static const char invoice_template[] =
        "{\"object\": \"invoice\", \"account_country\": \"US\", \"account_name\": null,"
        " \"account_tax_ids\": null, \"amount_due\": 0, \"amount_paid\": 0,"
        " \"amount_remaining\": 0, \"amount_shipping\": 0, \"application\": null,"
        " \"application_fee_amount\": null, \"attempt_count\": 0, \"attempted\": false,"
        " \"auto_advance\": true, \"automatically_finalizes_at\": null,"
        " \"automatic_tax\": {\"enabled\": false, \"liability\": null,"
        " \"status\": null}, \"billing_reason\": \"manual\", \"charge\": null,"
        " \"collection_method\": \"charge_automatically\", \"custom_fields\": null,"
        " \"customer\": null, \"customer_address\": null, \"customer_email\": null,"
        " \"customer_name\": null, \"customer_phone\": null, \"customer_shipping\": null,"
        " \"customer_tax_exempt\": \"none\", \"customer_tax_ids\": [],"
        " \"default_payment_method\": null, \"default_source\": null, \"default_tax_rates\": [],"
        " \"description\": null, \"discount\": null, \"discounts\": [], \"due_date\": null,"
        " \"effective_at\": null, \"ending_balance\": null, \"footer\": null,"
        " \"from_invoice\": null, \"hosted_invoice_url\": null, \"invoice_pdf\": null,"
        " \"issuer\": {\"type\": \"self\"}, \"last_finalization_error\": null,"
        " \"latest_revision\": null, \"lines\": {\"object\": \"list\", \"data\": [],"
        " \"has_more\": false, \"total_count\": 0, \"url\": null}, \"livemode\": false,"
        " \"metadata\": {}, \"next_payment_attempt\": null, \"number\": null,"
        " \"on_behalf_of\": null, \"paid\": false, \"paid_out_of_band\": false,"
        " \"payment_intent\": null, \"payment_settings\": {\"default_mandate\": null,"
        " \"payment_method_options\": null, \"payment_method_types\": null},"
        " \"period_end\": 0, \"period_start\": 0, \"post_payment_credit_notes_amount\": 0,"
        " \"pre_payment_credit_notes_amount\": 0, \"quote\": null, \"receipt_number\": null,"
        " \"rendering\": null, \"shipping_cost\": null, \"shipping_details\": null,"
        " \"starting_balance\": 0, \"statement_descriptor\": null, \"status\": \"draft\","
        " \"status_transitions\": {\"finalized_at\": null, \"marked_uncollectible_at\": null,"
        " \"paid_at\": null, \"voided_at\": null}, \"subscription\": null,"
        " \"subscription_details\": {\"metadata\": null}, \"subtotal\": 0,"
        " \"subtotal_excluding_tax\": 0, \"tax\": null, \"test_clock\": null, \"total\": 0,"
        " \"total_discount_amounts\": [], \"total_excluding_tax\": 0,"
        " \"total_pretax_credit_amounts\": [], \"total_tax_amounts\": [],"
        " \"transfer_data\": null, \"webhooks_delivered_at\": null}";

/* A line item (https://docs.stripe.com/api/invoices/line_item) before its own fields */
static const char line_template[] =
        "{\"object\": \"line_item\", \"discount_amounts\": [], \"discountable\": true,"
        " \"discounts\": [], \"invoice_item\": null, \"livemode\": false, \"metadata\": {},"
        " \"proration\": false, \"proration_details\": {\"credited_items\": null},"
        " \"tax_amounts\": [], \"tax_rates\": [], \"type\": \"subscription\"}";

static json_t *from_template(const char *text)
{
        return json_loads(text, 0, NULL);
}

/*
 * A draft invoice of customer cus (borrowed row) in currency, created c->now, with Stripe's
 * defaults and the customer's details copied as Stripe copies them. New reference.
 */
json_t *stripe_invoice_new(TwinCall *c, const char *id, const json_t *cus, const char *currency)
{
        _cleanup_json_ json_t *inv = from_template(invoice_template);
        char url[96];
        snprintf(url, sizeof(url), "/v1/invoices/%s/lines", id);
        if (!inv || json_object_set_new(inv, "id", json_string(id)) < 0 ||
            json_object_set_new(inv, "created", json_integer(c->now)) < 0 ||
            json_object_set_new(inv, "currency", json_string(currency)) < 0 ||
            json_object_set_new(inv, "period_start", json_integer(c->now)) < 0 ||
            json_object_set_new(inv, "period_end", json_integer(c->now)) < 0 ||
            json_object_set_new(inv, "webhooks_delivered_at", json_integer(c->now)) < 0 ||
            json_object_set_new(json_object_get(inv, "lines"), "url", json_string(url)) < 0)
                return NULL;
        static const char *const copied[][2] = {
                {"id", "customer"},
                {"address", "customer_address"},
                {"email", "customer_email"},
                {"name", "customer_name"},
                {"phone", "customer_phone"},
                {"shipping", "customer_shipping"},
                {"tax_exempt", "customer_tax_exempt"},
                {"test_clock", "test_clock"},
        };
        for (size_t i = 0; cus && i < ELEMENTSOF(copied); i++) {
                json_t *v = json_object_get(cus, copied[i][0]);
                if (v && json_object_set_new(inv, copied[i][1], json_deep_copy(v)) < 0)
                        return NULL;
        }
        return TAKE_PTR(inv);
}

/*
 * "1 × Gold (at $10.00 / month)", "3 × Seats (at $5.00 / every 3 months)" — how Stripe words
 * a subscription line — or "Trial period for Gold". Into buf (len bytes).
 */
static void line_description(const json_t *price, const char *product_name, int64_t quantity,
                             bool trial, char *buf, size_t len)
{
        if (trial) {
                snprintf(buf, len, "Trial period for %s", product_name);
                return;
        }
        json_t *rec = json_object_get(price, "recurring");
        const char *interval = strempty(json_get_str(rec, "interval"));
        json_int_t count = json_integer_value(json_object_get(rec, "interval_count"));
        char money[32];
        stripe_money(json_get_str(price, "currency"),
                     json_integer_value(json_object_get(price, "unit_amount")), money);
        if (count > 1)
                snprintf(buf, len, "%lld × %s (at %s / every %lld %ss)", (long long)quantity,
                         product_name, money, (long long)count, interval);
        else
                snprintf(buf, len, "%lld × %s (at %s / %s)", (long long)quantity, product_name,
                         money, interval);
}

/*
 * Appends to inv (a working copy) the line of one subscription item (borrowed) for the period
 * [start, end], $0 during a trial, and adds it to the invoice's totals. 0 or -ENOMEM.
 */
int stripe_invoice_add_line(TwinCall *c, json_t *inv, const json_t *item, int64_t start,
                            int64_t end, bool trial)
{
        json_t *price = json_object_get(item, "price");
        json_t *product = stripe_find(c->world, "products", json_get_str(price, "product"), NULL);
        int64_t quantity = json_integer_value(json_object_get(item, "quantity"));
        int64_t unit = trial ? 0 : json_integer_value(json_object_get(price, "unit_amount"));
        int64_t amount = unit * quantity;
        char id[40], desc[512], ua[24];
        int r = stripe_new_id(c->world, "il", id);
        if (r < 0)
                return r;
        line_description(price, json_get_str(product, "name") ?: "product", quantity, trial, desc,
                         sizeof(desc));
        snprintf(ua, sizeof(ua), "%lld", (long long)unit);
        _cleanup_json_ json_t *line = from_template(line_template);
        if (!line || json_object_set_new(line, "id", json_string(id)) < 0 ||
            json_object_set_new(line, "amount", json_integer(amount)) < 0 ||
            json_object_set_new(line, "amount_excluding_tax", json_integer(amount)) < 0 ||
            json_object_set(line, "currency", json_object_get(price, "currency")) < 0 ||
            json_object_set_new(line, "description", json_string(desc)) < 0 ||
            json_object_set(line, "invoice", json_object_get(inv, "id")) < 0 ||
            json_object_set_new(line, "period",
                                json_pack("{s:I, s:I}", "end", (json_int_t)end, "start",
                                          (json_int_t)start)) < 0 ||
            json_object_set_new(line, "plan", json_deep_copy(json_object_get(item, "plan"))) < 0 ||
            json_object_set_new(line, "price", json_deep_copy(price)) < 0 ||
            json_object_set_new(line, "quantity", json_integer(quantity)) < 0 ||
            json_object_set(line, "subscription", json_object_get(item, "subscription")) < 0 ||
            json_object_set(line, "subscription_item", json_object_get(item, "id")) < 0 ||
            json_object_set_new(line, "unit_amount_excluding_tax", json_string(ua)) < 0)
                return -ENOMEM;
        json_t *lines = json_object_get(inv, "lines");
        json_t *data = json_object_get(lines, "data");
        if (json_array_append_new(data, TAKE_PTR(line)) < 0 ||
            json_object_set_new(lines, "total_count", json_integer(json_array_size(data))) < 0)
                return -ENOMEM;
        static const char *const totals[] = {"subtotal",   "subtotal_excluding_tax",
                                             "total",      "total_excluding_tax",
                                             "amount_due", "amount_remaining"};
        for (size_t i = 0; i < ELEMENTSOF(totals); i++) {
                json_int_t v = json_integer_value(json_object_get(inv, totals[i])) + amount;
                if (json_object_set_new(inv, totals[i], json_integer(v)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Marks inv (the world's row) paid now by charge (NULL for nothing to pay), with its events. */
static int mark_paid(TwinCall *c, json_t *inv, const char *charge)
{
        json_int_t due = json_integer_value(json_object_get(inv, "amount_due"));
        json_t *st = json_object_get(inv, "status_transitions");
        if (json_object_set_new(inv, "status", json_string("paid")) < 0 ||
            json_object_set_new(inv, "paid", json_true()) < 0 ||
            json_object_set_new(inv, "amount_paid", json_integer(due)) < 0 ||
            json_object_set_new(inv, "amount_remaining", json_integer(0)) < 0 ||
            json_object_set_new(inv, "auto_advance", json_false()) < 0 ||
            json_object_set_new(inv, "next_payment_attempt", json_null()) < 0 ||
            json_object_set_new(inv, "charge", json_string_or_null(charge)) < 0 ||
            json_object_set_new(st, "paid_at", json_integer(c->now)) < 0)
                return -ENOMEM;
        int r;
        if ((r = stripe_event(c, "invoice.paid", inv, NULL)) < 0 ||
            (r = stripe_event(c, "invoice.payment_succeeded", inv, NULL)) < 0)
                return r;
        return 0;
}

/*
 * The subscription of inv (borrowed row), once inv is paid: an incomplete or past_due one whose
 * latest invoice it is becomes active (customer.subscription.updated), and with
 * payment_settings.save_default_payment_method=on_subscription keeps the card that paid it.
 * 0 or -ENOMEM.
 */
static int subscription_paid(TwinCall *c, const json_t *inv, const char *pm)
{
        json_t *sub =
                stripe_find(c->world, "subscriptions", json_get_str(inv, "subscription"), NULL);
        const char *status = json_get_str(sub, "status");
        if (!sub || !streq_ptr(json_get_str(sub, "latest_invoice"), json_get_str(inv, "id")) ||
            !(streq_ptr(status, "incomplete") || streq_ptr(status, "past_due") ||
              streq_ptr(status, "unpaid")))
                return 0;
        _cleanup_json_ json_t *prev = json_pack("{s:s}", "status", status);
        if (!prev || json_object_set_new(sub, "status", json_string("active")) < 0)
                return -ENOMEM;
        json_t *ps = json_object_get(sub, "payment_settings");
        if (pm && streq_ptr(json_get_str(ps, "save_default_payment_method"), "on_subscription") &&
            !json_get_str(sub, "default_payment_method")) {
                if (json_object_set_new(prev, "default_payment_method", json_null()) < 0 ||
                    json_object_set_new(sub, "default_payment_method", json_string(pm)) < 0)
                        return -ENOMEM;
        }
        return stripe_event(c, "customer.subscription.updated", sub, prev);
}

/*
 * After an attempt on pi (the world's row; stripe_pi_attempt calls this for every intent):
 * when pi pays an invoice, the invoice counts the attempt and follows its outcome — paid
 * (invoice.paid, invoice.payment_succeeded; its subscription made active), declined
 * (invoice.payment_failed) or waiting for 3-D Secure (invoice.payment_action_required). A
 * past_due status for a failed renewal is the renewal's (subscriptions.c). 0 or -ENOMEM.
 */
int stripe_invoice_payment_attempted(TwinCall *c, json_t *pi)
{
        json_t *inv = stripe_find(c->world, "invoices", json_get_str(pi, "invoice"), NULL);
        if (!inv || !streq_ptr(json_get_str(inv, "status"), "open"))
                return 0;
        json_int_t n = json_integer_value(json_object_get(inv, "attempt_count")) + 1;
        if (json_object_set_new(inv, "attempt_count", json_integer(n)) < 0 ||
            json_object_set_new(inv, "attempted", json_true()) < 0)
                return -ENOMEM;
        const char *status = json_get_str(pi, "status");
        int r;
        if (streq_ptr(status, "succeeded")) {
                if ((r = mark_paid(c, inv, json_get_str(pi, "latest_charge"))) < 0)
                        return r;
                return subscription_paid(c, inv, json_get_str(pi, "payment_method"));
        }
        if (streq_ptr(status, "requires_action"))
                return stripe_event(c, "invoice.payment_action_required", inv, NULL);
        return stripe_event(c, "invoice.payment_failed", inv, NULL);
}

/*
 * Finalizes the draft inv (the world's row) now and asks for its money: a number (the
 * customer's invoice_prefix and the account's sequence), status open (invoice.finalized), and
 * when amount_due > 0 a PaymentIntent for it (payment_intent.created) holding pm when not
 * NULL (status requires_confirmation), with description "Subscription creation" or
 * "Subscription update" (a renewal). Nothing to pay: paid at once. When attempt and pm, the
 * intent is confirmed at once through stripe_pi_attempt (off: the customer is not present, a
 * renewal), which settles the invoice. 0 or -ENOMEM.
 */
int stripe_invoice_finalize(TwinCall *c, json_t *inv, const char *pm, bool attempt, bool off)
{
        json_t *cus = stripe_find(c->world, "customers", json_get_str(inv, "customer"), NULL);
        size_t i, seq = 1;
        json_t *x;
        json_array_foreach (json_object_get(c->world, "invoices"), i, x) {
                seq += json_is_string(json_object_get(x, "number"));
        }
        char number[64];
        snprintf(number, sizeof(number), "%s-%04zu", json_get_str(cus, "invoice_prefix") ?: "POME",
                 seq);
        json_t *st = json_object_get(inv, "status_transitions");
        if (json_object_set_new(inv, "number", json_string(number)) < 0 ||
            json_object_set_new(inv, "status", json_string("open")) < 0 ||
            json_object_set_new(inv, "effective_at", json_integer(c->now)) < 0 ||
            json_object_set_new(inv, "ending_balance", json_integer(0)) < 0 ||
            json_object_set_new(st, "finalized_at", json_integer(c->now)) < 0)
                return -ENOMEM;
        int64_t due = json_integer_value(json_object_get(inv, "amount_due"));
        int r;
        if (due == 0) {
                if ((r = stripe_event(c, "invoice.finalized", inv, NULL)) < 0 ||
                    (r = mark_paid(c, inv, NULL)) < 0)
                        return r;
                return subscription_paid(c, inv, NULL);
        }
        char pi_id[40], secret[96];
        if ((r = stripe_new_id(c->world, "pi", pi_id)) < 0)
                return r;
        snprintf(secret, sizeof(secret), "%s_secret_pome%lld", pi_id, (long long)c->now);
        const char *reason = json_get_str(inv, "billing_reason");
        _cleanup_json_ json_t *pi =
                stripe_pi_new(pi_id, c->now, due, strempty(json_get_str(inv, "currency")));
        if (!pi || json_object_set_new(pi, "client_secret", json_string(secret)) < 0 ||
            json_object_set(pi, "customer", json_object_get(inv, "customer")) < 0 ||
            json_object_set_new(pi, "description",
                                json_string(streq_ptr(reason, "subscription_create")
                                                    ? "Subscription creation"
                                                    : "Subscription update")) < 0 ||
            json_object_set(pi, "invoice", json_object_get(inv, "id")) < 0 ||
            json_object_set_new(pi, "setup_future_usage", json_string("off_session")) < 0 ||
            json_object_set_new(inv, "payment_intent", json_string(pi_id)) < 0)
                return -ENOMEM;
        json_t *pm_row = pm ? stripe_find(c->world, "payment_methods", pm, NULL) : NULL;
        if (pm_row && (json_object_set(pi, "payment_method", json_object_get(pm_row, "id")) < 0 ||
                       json_object_set_new(pi, "status", json_string("requires_confirmation")) < 0))
                return -ENOMEM;
        if ((r = stripe_event(c, "invoice.finalized", inv, NULL)) < 0 ||
            (r = stripe_row_add(c->world, "payment_intents", json_incref(pi))) < 0 ||
            (r = stripe_event(c, "payment_intent.created", pi, NULL)) < 0)
                return r;
        if (!attempt)
                return 0;
        if (!pm_row) {
                /* an attempt without a card to charge fails as such (a renewal's) */
                json_int_t n = json_integer_value(json_object_get(inv, "attempt_count")) + 1;
                if (json_object_set_new(inv, "attempt_count", json_integer(n)) < 0 ||
                    json_object_set_new(inv, "attempted", json_true()) < 0)
                        return -ENOMEM;
                return stripe_event(c, "invoice.payment_failed", inv, NULL);
        }
        /* the 402 a decline writes is the payment intent's answer, not this call's */
        TwinReply scratch = {};
        bool declined;
        r = stripe_pi_attempt(c, &scratch, pi, NULL, off, false, &declined);
        twin_reply_done(&scratch);
        return r < 0 ? r : 0;
}

int stripe_act_retrieve_invoice(TwinCall *c, TwinReply *rp)
{
        const char *id;
        int r = stripe_arg_id(c, rp, "id", &id);
        if (r <= 0)
                return r;
        json_t *inv = stripe_find(c->world, "invoices", id, NULL);
        if (!inv)
                return stripe_missing(rp, "invoices", id, "id");
        return stripe_reply_object(c, rp, 200, inv);
}

static bool keep_invoice(TwinCall *c, json_t *row)
{
        static const char *const fields[] = {"customer", "subscription", "status"};
        for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
                const char *want = json_get_str(c->args, fields[i]);
                if (want && !streq_ptr(json_get_str(row, fields[i]), want))
                        return false;
        }
        return true;
}

int stripe_act_list_invoices(TwinCall *c, TwinReply *rp)
{
        static const char *const statuses[] = {"draft",         "open", "paid",
                                               "uncollectible", "void", NULL};
        const char *s;
        int r;
        if ((r = stripe_arg_str(c, rp, "customer", false, &s)) <= 0 ||
            (r = stripe_arg_str(c, rp, "subscription", false, &s)) <= 0 ||
            (r = stripe_arg_enum(c, rp, "status", statuses, &s)) <= 0)
                return r;
        return stripe_list(c, rp, "invoices", "/v1/invoices", keep_invoice);
}
