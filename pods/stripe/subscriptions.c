/* SPDX-License-Identifier: MIT */
/*
 * Subscriptions (https://docs.stripe.com/api/subscriptions): create, retrieve, update, cancel
 * (DELETE), list; and, for test clocks (test_clocks.c), what a subscription does when its
 * time comes — a renewal, a trial's end, the cancellation it was told to make at period end.
 *
 * Creating one bills its first period at once, as Stripe does: the subscription
 * (customer.subscription.created, status incomplete or trialing), its invoice drafted
 * (invoice.created), finalized (invoice.finalized) and paid with a PaymentIntent through the
 * payment intents' own attempt, with the subscription's default_payment_method or the
 * customer's invoice_settings.default_payment_method (invoices.c). payment_behavior says what
 * an unpaid first invoice means: allow_incomplete (the default) keeps an incomplete
 * subscription with its open invoice; error_if_incomplete answers the card's 402 and leaves
 * nothing behind; default_incomplete does not attempt the payment at all (the caller confirms
 * the invoice's PaymentIntent). A trial bills $0 and starts trialing. Periods follow the
 * price's interval from billing_cycle_anchor in UTC calendar terms (a month from Jan 31 is
 * Feb 28/29, then Mar 31). Shapes are API version 2024-06-20's (current_period_start/end on
 * the subscription). Proration is accepted and not computed: a changed price bills from the
 * next period.
 */
#include "common/json-util.h"
#include "pods/stripe/stripe.h"

/* ------------------------------------------------------------------ calendar */

/* Days since 1970-01-01 of the proleptic Gregorian date y-m-d (H. Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
        y -= m <= 2;
        int64_t era = (y >= 0 ? y : y - 399) / 400;
        int64_t yoe = y - era * 400;
        int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
        int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *ret_y, int64_t *ret_m, int64_t *ret_d)
{
        z += 719468;
        int64_t era = (z >= 0 ? z : z - 146096) / 146097;
        int64_t doe = z - era * 146097;
        int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        int64_t mp = (5 * doy + 2) / 153;
        *ret_d = doy - (153 * mp + 2) / 5 + 1;
        *ret_m = mp < 10 ? mp + 3 : mp - 9;
        *ret_y = yoe + era * 400 + (*ret_m <= 2);
}

/*
 * t (seconds since the epoch) plus n intervals (day, week, month, year) in UTC: months and
 * years keep the day of the month, clamped to the month's last day, as Stripe bills. A
 * timestamp.
 */
int64_t stripe_interval_add(int64_t t, const char *interval, int64_t n)
{
        int64_t days = t >= 0 ? t / 86400 : -((-t + 86399) / 86400);
        int64_t secs = t - days * 86400;
        if (streq_ptr(interval, "day"))
                return t + n * 86400;
        if (streq_ptr(interval, "week"))
                return t + n * 7 * 86400;
        int64_t y, m, d;
        civil_from_days(days, &y, &m, &d);
        int64_t months = y * 12 + (m - 1) + (streq_ptr(interval, "year") ? 12 * n : n);
        int64_t ny = months >= 0 ? months / 12 : -((-months + 11) / 12);
        int64_t nm = months - ny * 12 + 1;
        int64_t last = days_from_civil(nm == 12 ? ny + 1 : ny, nm == 12 ? 1 : nm + 1, 1) -
                       days_from_civil(ny, nm, 1);
        return (days_from_civil(ny, nm, d < last ? d : last)) * 86400 + secs;
}

/* The interval and interval_count of sub's prices (all items share them). */
static void sub_interval(const json_t *sub, const char **ret_interval, int64_t *ret_count)
{
        json_t *item = json_array_get(json_object_get(json_object_get(sub, "items"), "data"), 0);
        json_t *rec = json_object_get(json_object_get(item, "price"), "recurring");
        *ret_interval = json_get_str(rec, "interval") ?: "month";
        *ret_count = json_integer_value(json_object_get(rec, "interval_count")) ?: 1;
}

/* The end of the period of sub that starts at start: the next billing date after it. */
static int64_t next_period_end(const json_t *sub, int64_t start)
{
        const char *interval;
        int64_t count;
        sub_interval(sub, &interval, &count);
        int64_t anchor = json_integer_value(json_object_get(sub, "billing_cycle_anchor"));
        if (anchor > start)
                return anchor;
        /* counted from the anchor, so a Jan 31 anchor bills Feb 28 and then Mar 31 */
        for (int64_t k = 1;; k++) {
                int64_t end = stripe_interval_add(anchor, interval, k * count);
                if (end > start)
                        return end;
        }
}

/* ------------------------------------------------------------------ rows */

/* The Subscription object (https://docs.stripe.com/api/subscriptions/object) before its own
 * fields */
static const char sub_template[] =
        "{\"object\": \"subscription\", \"application\": null, \"application_fee_percent\": null,"
        " \"automatic_tax\": {\"enabled\": false, \"liability\": null},"
        " \"billing_cycle_anchor_config\": null, \"billing_thresholds\": null,"
        " \"cancel_at\": null, \"cancel_at_period_end\": false, \"canceled_at\": null,"
        " \"cancellation_details\": {\"comment\": null, \"feedback\": null, \"reason\": null},"
        " \"collection_method\": \"charge_automatically\", \"customer\": null,"
        " \"days_until_due\": null, \"default_payment_method\": null, \"default_source\": null,"
        " \"default_tax_rates\": [], \"description\": null, \"discount\": null,"
        " \"discounts\": [], \"ended_at\": null, \"invoice_settings\": {\"account_tax_ids\": null,"
        " \"issuer\": {\"type\": \"self\"}}, \"items\": {\"object\": \"list\", \"data\": [],"
        " \"has_more\": false, \"total_count\": 0, \"url\": null}, \"latest_invoice\": null,"
        " \"livemode\": false, \"metadata\": {}, \"next_pending_invoice_item_invoice\": null,"
        " \"on_behalf_of\": null, \"pause_collection\": null, \"payment_settings\":"
        " {\"payment_method_options\": null, \"payment_method_types\": null,"
        " \"save_default_payment_method\": \"off\"}, \"pending_invoice_item_interval\": null,"
        " \"pending_setup_intent\": null, \"pending_update\": null, \"plan\": null,"
        " \"quantity\": null, \"schedule\": null, \"status\": \"incomplete\","
        " \"test_clock\": null, \"transfer_data\": null, \"trial_end\": null,"
        " \"trial_settings\": {\"end_behavior\": {\"missing_payment_method\":"
        " \"create_invoice\"}}, \"trial_start\": null}";

/* A subscription item (https://docs.stripe.com/api/subscription_items/object) of price. */
static json_t *item_new(int64_t created, const json_t *price, int64_t quantity)
{
        return json_pack("{s:s, s:s, s:n, s:I, s:[], s:{}, s:o, s:o, s:I, s:n, s:[]}", "id", "",
                         "object", "subscription_item", "billing_thresholds", "created",
                         (json_int_t)created, "discounts", "metadata", "plan",
                         stripe_plan_of(price), "price", json_deep_copy(price), "quantity",
                         (json_int_t)quantity, "subscription", "tax_rates");
}

/* sub's legacy single-item fields: plan and quantity name its one item, null with several. */
static int sync_items(json_t *sub)
{
        json_t *items = json_object_get(sub, "items");
        json_t *data = json_object_get(items, "data");
        json_t *one = json_array_size(data) == 1 ? json_array_get(data, 0) : NULL;
        if (json_object_set_new(items, "total_count", json_integer(json_array_size(data))) < 0 ||
            json_object_set_new(sub, "plan",
                                one ? json_deep_copy(json_object_get(one, "plan")) : json_null()) <
                    0 ||
            json_object_set_new(sub, "quantity",
                                one ? json_deep_copy(json_object_get(one, "quantity"))
                                    : json_null()) < 0)
                return -ENOMEM;
        return 0;
}

/* ------------------------------------------------------------------ arguments */

/*
 * The payment method id names for a subscription of customer cus: one attached to it
 * (Stripe's rule for a subscription's default_payment_method). 1, 0 with the 400 in rp.
 */
static int check_dpm(TwinCall *c, TwinReply *rp, const json_t *cus, const char *id)
{
        json_t *pm = stripe_find(c->world, "payment_methods", id, NULL);
        if (pm && streq_ptr(json_get_str(pm, "customer"), json_get_str(cus, "id")))
                return 1;
        int r = stripe_invalid(rp, "resource_missing", "default_payment_method",
                               "The customer does not have a payment method with the ID %s. The "
                               "payment method must be attached to the customer.",
                               id);
        return r < 0 ? r : 0;
}

/*
 * One entry of items (items[i], a caller's object) as a price and a quantity: the price must
 * exist, be active and recurring. with_id: update's form (id, deleted allowed). 1 with *ret_price
 * (borrowed; NULL when the entry names none) and *ret_quantity (-1 when absent), 0, -ENOMEM.
 */
static int item_arg(TwinCall *c, TwinReply *rp, const json_t *entry, size_t i, bool with_id,
                    json_t **ret_price, int64_t *ret_quantity)
{
        static const char *const create_keys[] = {"price", "quantity", "metadata", NULL};
        static const char *const update_keys[] = {"id",       "price",   "quantity",
                                                  "metadata", "deleted", NULL};
        char param[48], p[80];
        const char *price_id;
        int r;
        snprintf(param, sizeof(param), "items[%zu]", i);
        if (!json_is_object(entry))
                return stripe_invalid(rp, NULL, param, "Invalid object");
        if ((r = stripe_param_known(rp, entry, param, with_id ? update_keys : create_keys)) <= 0)
                return r;
        snprintf(p, sizeof(p), "%s[price]", param);
        if ((r = stripe_param_str(rp, entry, "price", p, !with_id, &price_id)) <= 0)
                return r;
        *ret_price = NULL;
        if (price_id) {
                json_t *price = stripe_find(c->world, "prices", price_id, NULL);
                if (!price)
                        return stripe_missing(rp, "prices", price_id, p);
                if (json_is_false(json_object_get(price, "active")))
                        return stripe_invalid(rp, NULL, p,
                                              "The price specified is inactive. This field only "
                                              "accepts active prices.");
                if (!streq_ptr(json_get_str(price, "type"), "recurring"))
                        return stripe_invalid(rp, NULL, p,
                                              "The price specified is set to `type=one_time` but "
                                              "this field only accepts prices with "
                                              "`type=recurring`.");
                *ret_price = price;
        }
        *ret_quantity = -1;
        snprintf(p, sizeof(p), "%s[quantity]", param);
        return stripe_param_int(rp, entry, "quantity", p, 0, 999999999, false, ret_quantity);
}

/* Refuses a price that does not bill like the others of data (currency and interval). */
static int check_alike(TwinReply *rp, const json_t *data, const json_t *price)
{
        json_t *first = json_object_get(json_array_get(data, 0), "price");
        if (!first)
                return 1;
        json_t *a = json_object_get(first, "recurring"), *b = json_object_get(price, "recurring");
        const char *field =
                !streq_ptr(json_get_str(first, "currency"), json_get_str(price, "currency"))
                        ? "currency"
                : !streq_ptr(json_get_str(a, "interval"), json_get_str(b, "interval")) ||
                                !json_equal(json_object_get(a, "interval_count"),
                                            json_object_get(b, "interval_count"))
                        ? "interval"
                        : NULL;
        if (!field)
                return 1;
        int r = stripe_invalid(rp, NULL, "items",
                               "Currency and interval fields must match across all prices on "
                               "the subscription. Found mismatch in %s field.",
                               field);
        return r < 0 ? r : 0;
}

/* Refuses a second item of one price. */
static int check_unique(TwinReply *rp, const json_t *data, const json_t *price)
{
        size_t i;
        json_t *x;
        json_array_foreach (data, i, x) {
                if (streq_ptr(json_get_str(json_object_get(x, "price"), "id"),
                              json_get_str(price, "id"))) {
                        int r = stripe_invalid(rp, NULL, "items",
                                               "Cannot add multiple subscription items with the "
                                               "same price: %s",
                                               json_get_str(price, "id"));
                        return r < 0 ? r : 0;
                }
        }
        return 1;
}

/*
 * Applies the items argument to data (the subscription's items.data, a working copy; new
 * items get id "" and created now): create's form adds each; update's changes the item its id
 * names (price, quantity, metadata, deleted) or adds one without id. At most 20 items, at
 * least one, all of one currency and interval. 1, 0 with the 400 in rp, -ENOMEM.
 */
static int apply_items(TwinCall *c, TwinReply *rp, json_t *data, const char *currency, bool update,
                       int64_t now)
{
        json_t *items = json_object_get(c->args, "items");
        size_t i;
        json_t *entry;
        int r;
        if (!json_is_array(items) || (!update && json_array_size(items) == 0))
                return !update || items ? stripe_invalid(rp, "parameter_missing", "items",
                                                         "Missing required param: items.")
                                        : 1;
        /* before any work: each entry is checked against the others */
        if (json_array_size(items) > 20)
                return stripe_invalid(rp, NULL, "items",
                                      "A subscription can have at most 20 items.");
        json_array_foreach (items, i, entry) {
                json_t *price = NULL;
                int64_t quantity;
                char param[48];
                if ((r = item_arg(c, rp, entry, i, update, &price, &quantity)) <= 0)
                        return r;
                if (price && currency && !streq_ptr(json_get_str(price, "currency"), currency)) {
                        snprintf(param, sizeof(param), "items[%zu][price]", i);
                        return stripe_invalid(rp, NULL, param,
                                              "The price specified is in %s, but this "
                                              "subscription is billed in %s: a subscription's "
                                              "currency cannot change.",
                                              strempty(json_get_str(price, "currency")), currency);
                }
                const char *id = json_get_str(entry, "id");
                json_t *item = NULL;
                size_t at = 0, k;
                json_t *x;
                json_array_foreach (data, k, x) {
                        if (id && streq_ptr(json_get_str(x, "id"), id)) {
                                item = x;
                                at = k;
                        }
                }
                snprintf(param, sizeof(param), "items[%zu][id]", i);
                if (id && !item)
                        return stripe_missing(rp, "subscriptions", id, param);
                bool gone = false;
                if ((r = stripe_param_bool(rp, entry, "deleted", param, &gone)) <= 0)
                        return r;
                if (item && gone) {
                        if (json_array_remove(data, at) < 0)
                                return -ENOMEM;
                        continue;
                }
                if (!item) {
                        if (!price) {
                                snprintf(param, sizeof(param), "items[%zu][price]", i);
                                return stripe_invalid(rp, "parameter_missing", param,
                                                      "Missing required param: %s.", param);
                        }
                        if ((r = check_unique(rp, data, price)) <= 0 ||
                            (r = check_alike(rp, data, price)) <= 0)
                                return r;
                        item = item_new(now, price, quantity >= 0 ? quantity : 1);
                        if (!item || json_array_append_new(data, item) < 0)
                                return -ENOMEM;
                } else {
                        if (price &&
                            !streq_ptr(json_get_str(price, "id"),
                                       json_get_str(json_object_get(item, "price"), "id"))) {
                                if ((r = check_unique(rp, data, price)) <= 0)
                                        return r;
                                if (json_array_size(data) > 1) {
                                        /* alike the others, the item itself left out */
                                        json_t *first = json_array_get(data, at == 0 ? 1 : 0);
                                        _cleanup_json_ json_t *others = json_pack("[O]", first);
                                        if (!others)
                                                return -ENOMEM;
                                        if ((r = check_alike(rp, others, price)) <= 0)
                                                return r;
                                }
                                if (json_object_set_new(item, "price", json_deep_copy(price)) < 0 ||
                                    json_object_set_new(item, "plan", stripe_plan_of(price)) < 0)
                                        return -ENOMEM;
                        }
                        if (quantity >= 0 &&
                            json_object_set_new(item, "quantity", json_integer(quantity)) < 0)
                                return -ENOMEM;
                }
                snprintf(param, sizeof(param), "items[%zu][metadata]", i);
                if ((r = stripe_param_metadata(rp, entry, param, item)) <= 0)
                        return r;
        }
        if (json_array_size(data) == 0)
                return stripe_invalid(rp, NULL, "items",
                                      "A subscription must have at least one item.");
        if (json_array_size(data) > 20)
                return stripe_invalid(rp, NULL, "items",
                                      "A subscription can have at most 20 items.");
        int64_t total;
        if (stripe_items_total(data, &total) < 0)
                return stripe_invalid(rp, "amount_too_large", "items",
                                      "The subscription's items add up to more than the largest "
                                      "amount Stripe bills (%lld in the currency's smallest "
                                      "unit).",
                                      (long long)STRIPE_MAX_AMOUNT);
        return 1;
}

/* The members create and update share: metadata, description, default_payment_method,
 * payment_settings, proration_behavior (accepted), cancel_at_period_end. */
static int apply_fields(TwinCall *c, TwinReply *rp, json_t *sub, const json_t *cus, int64_t now)
{
        static const char *const prorations[] = {"always_invoice", "create_prorations", "none",
                                                 NULL};
        static const char *const saves[] = {"off", "on_subscription", NULL};
        static const char *const ps_keys[] = {"save_default_payment_method", NULL};
        static const char *const strings[] = {"description", NULL};
        const char *dpm, *proration, *save;
        json_t *ps;
        int r;
        if ((r = stripe_apply_metadata(c, rp, sub)) <= 0 ||
            (r = stripe_set_strings(c, rp, sub, strings)) <= 0 ||
            (r = stripe_arg_str(c, rp, "default_payment_method", false, &dpm)) <= 0 ||
            (r = stripe_arg_enum(c, rp, "proration_behavior", prorations, &proration)) <= 0 ||
            (r = stripe_param_object(rp, c->args, "payment_settings", "payment_settings", &ps)) <=
                    0)
                return r;
        if (ps && ((r = stripe_param_known(rp, ps, "payment_settings", ps_keys)) <= 0 ||
                   (r = stripe_param_enum(rp, ps, "save_default_payment_method",
                                          "payment_settings[save_default_payment_method]", saves,
                                          &save)) <= 0))
                return r;
        if (ps && save &&
            json_object_set_new(json_object_get(sub, "payment_settings"),
                                "save_default_payment_method", json_string(save)) < 0)
                return -ENOMEM;
        if (dpm && dpm[0] && (r = check_dpm(c, rp, cus, dpm)) <= 0)
                return r;
        if (dpm && json_object_set_new(sub, "default_payment_method",
                                       dpm[0] ? json_string(dpm) : json_null()) < 0)
                return -ENOMEM;
        if (json_object_get(c->args, "cancel_at_period_end")) {
                bool cape = false;
                if ((r = stripe_arg_bool(c, rp, "cancel_at_period_end", &cape)) <= 0)
                        return r;
                bool was = json_is_true(json_object_get(sub, "cancel_at_period_end"));
                json_t *cd = json_object_get(sub, "cancellation_details");
                if (cape != was &&
                    (json_object_set_new(sub, "cancel_at_period_end", json_boolean(cape)) < 0 ||
                     json_object_set(sub, "cancel_at",
                                     cape ? json_object_get(sub, "current_period_end")
                                          : json_null()) < 0 ||
                     json_object_set_new(sub, "canceled_at",
                                         cape ? json_integer(now) : json_null()) < 0 ||
                     json_object_set_new(cd, "reason",
                                         cape ? json_string("cancellation_requested")
                                              : json_null()) < 0))
                        return -ENOMEM;
        }
        return 1;
}

/* The customer args[key] names, not deleted: 1 (*ret), 0 with the 404 in rp. */
static int arg_customer(TwinCall *c, TwinReply *rp, json_t **ret)
{
        const char *id;
        int r = stripe_arg_str(c, rp, "customer", true, &id);
        if (r <= 0)
                return r;
        json_t *cus = stripe_find(c->world, "customers", id, NULL);
        if (!cus || json_is_true(json_object_get(cus, "deleted"))) {
                r = stripe_missing(rp, "customers", id, "customer");
                return r < 0 ? r : 0;
        }
        *ret = cus;
        return 1;
}

/* The payment method an invoice of sub is paid with: its own default, else its customer's. */
static const char *payment_method_of(TwinCall *c, const json_t *sub)
{
        const char *pm = json_get_str(sub, "default_payment_method");
        if (pm)
                return pm;
        json_t *cus = stripe_find(c->world, "customers", json_get_str(sub, "customer"), NULL);
        return json_get_str(json_object_get(cus, "invoice_settings"), "default_payment_method");
}

/*
 * The sum of the subscription items data (an array), each price's unit_amount × quantity, in
 * the smallest currency unit, into *ret: 0, or -ERANGE when it is more than
 * STRIPE_MAX_AMOUNT (the largest amount the twin takes anywhere; no overflow on the way).
 */
int stripe_items_total(const json_t *data, int64_t *ret)
{
        int64_t sum = 0;
        size_t i;
        json_t *item;
        json_array_foreach ((json_t *)data, i, item) {
                int64_t line;
                if (__builtin_mul_overflow(json_integer_value(json_object_get(
                                                   json_object_get(item, "price"), "unit_amount")),
                                           json_integer_value(json_object_get(item, "quantity")),
                                           &line) ||
                    __builtin_add_overflow(sum, line, &sum) || sum > STRIPE_MAX_AMOUNT)
                        return -ERANGE;
        }
        *ret = sum;
        return 0;
}

/* The sum of sub's items (checked by apply_items: stripe_items_total cannot fail here). */
static int64_t amount_of(const json_t *sub)
{
        int64_t sum = 0;
        (void)stripe_items_total(json_object_get(json_object_get(sub, "items"), "data"), &sum);
        return sum;
}

/*
 * Drafts sub's invoice id (the world's row sub; reason subscription_create or
 * subscription_cycle) for the period [start, end] of its items — $0 when trial — with the
 * invoice's own period [inv_start, inv_end] (what the invoice accrued: the creation instant,
 * or the period that just ended), stores it as sub's latest_invoice (invoice.created) and
 * borrows it into *ret. 0 or -ENOMEM.
 */
static int draft_invoice(TwinCall *c, json_t *sub, const char *id, const char *reason,
                         int64_t start, int64_t end, int64_t inv_start, int64_t inv_end, bool trial,
                         json_t **ret)
{
        json_t *cus = stripe_find(c->world, "customers", json_get_str(sub, "customer"), NULL);
        int r;
        _cleanup_json_ json_t *inv =
                stripe_invoice_new(c, id, cus, strempty(json_get_str(sub, "currency")));
        if (!inv || json_object_set_new(inv, "billing_reason", json_string(reason)) < 0 ||
            json_object_set(inv, "subscription", json_object_get(sub, "id")) < 0 ||
            json_object_set(inv, "test_clock", json_object_get(sub, "test_clock")) < 0 ||
            json_object_set_new(json_object_get(inv, "subscription_details"), "metadata",
                                json_deep_copy(json_object_get(sub, "metadata"))) < 0 ||
            json_object_set_new(inv, "period_start", json_integer(inv_start)) < 0 ||
            json_object_set_new(inv, "period_end", json_integer(inv_end)) < 0)
                return -ENOMEM;
        size_t i;
        json_t *item;
        json_array_foreach (json_object_get(json_object_get(sub, "items"), "data"), i, item) {
                if ((r = stripe_invoice_add_line(c, inv, item, start, end, trial)) < 0)
                        return r;
        }
        if (json_object_set_new(sub, "latest_invoice", json_string(id)) < 0 ||
            stripe_row_add(c->world, "invoices", json_incref(inv)) < 0)
                return -ENOMEM;
        *ret = inv;
        return stripe_event(c, "invoice.created", inv, NULL);
}

/* ------------------------------------------------------------------ actions */

/* The 402 of error_if_incomplete for pi's failed attempt (pi borrowed; copied). */
static json_t *incomplete_error(const json_t *pi)
{
        json_t *lpe = json_object_get(pi, "last_payment_error");
        const char *code = json_get_str(lpe, "code") ?: "authentication_required";
        const char *decline = json_get_str(lpe, "decline_code") ?: "authentication_required";
        const char *message = json_get_str(lpe, "message")
                                      ?: "Your card was declined. This transaction requires "
                                         "authentication.";
        char doc[128];
        snprintf(doc, sizeof(doc), "https://stripe.com/docs/error-codes/%s", code);
        for (char *p = doc + strlen("https://stripe.com/docs/error-codes/"); *p; p++)
                if (*p == '_')
                        *p = '-';
        return json_pack("{s:{s:s, s:s, s:s, s:s, s:s}}", "error", "type", "card_error", "code",
                         code, "decline_code", decline, "message", message, "doc_url", doc);
}

int stripe_act_create_subscription(TwinCall *c, TwinReply *rp)
{
        static const char *const behaviors[] = {"allow_incomplete", "default_incomplete",
                                                "error_if_incomplete", NULL};
        json_t *cus;
        const char *behavior;
        int64_t trial_days = 0;
        int r;
        if ((r = arg_customer(c, rp, &cus)) <= 0 ||
            (r = stripe_arg_enum(c, rp, "payment_behavior", behaviors, &behavior)) <= 0 ||
            (r = stripe_param_int(rp, c->args, "trial_period_days", "trial_period_days", 0, 730,
                                  false, &trial_days)) <= 0)
                return r;
        behavior = behavior ?: "allow_incomplete";
        /* the subscription's time: its customer's test clock, if any */
        TwinCall sc = *c;
        sc.now = stripe_clock_time(c, json_get_str(cus, "test_clock"));
        _cleanup_json_ json_t *sub = json_loads(sub_template, 0, NULL);
        if (!sub)
                return -ENOMEM;
        json_t *data = json_object_get(json_object_get(sub, "items"), "data");
        if ((r = apply_items(c, rp, data, NULL, false, sc.now)) <= 0 ||
            (r = apply_fields(c, rp, sub, cus, sc.now)) <= 0)
                return r;
        bool trial = trial_days > 0;
        int64_t amount = trial ? 0 : amount_of(sub);
        if (json_object_set(sub, "customer", json_object_get(cus, "id")) < 0)
                return -ENOMEM;
        const char *pm = payment_method_of(c, sub);
        if (amount > 0 && !pm && !streq(behavior, "default_incomplete"))
                return stripe_invalid(rp, "resource_missing", NULL,
                                      "This customer has no attached payment source or default "
                                      "payment method. Please consider adding a default payment "
                                      "method. For more information, visit "
                                      "https://stripe.com/docs/billing/subscriptions/"
                                      "payment-methods-setting#payment-method-priority.");

        /* validated: from here on the world changes (error_if_incomplete may take it back) */
        _cleanup_json_ json_t *snapshot =
                streq(behavior, "error_if_incomplete") ? json_deep_copy(c->world) : NULL;
        if (streq(behavior, "error_if_incomplete") && !snapshot)
                return -ENOMEM;
        char id[40], in_id[40], url[96];
        if ((r = stripe_new_id(c->world, "sub", id)) < 0)
                return r;
        snprintf(url, sizeof(url), "/v1/subscription_items?subscription=%s", id);
        size_t i;
        json_t *item;
        json_array_foreach (data, i, item) {
                char si[40];
                if ((r = stripe_new_id(c->world, "si", si)) < 0 ||
                    json_object_set_new(item, "id", json_string(si)) < 0 ||
                    json_object_set_new(item, "subscription", json_string(id)) < 0)
                        return -ENOMEM;
        }
        json_t *first = json_object_get(json_array_get(data, 0), "price");
        int64_t start = sc.now;
        int64_t anchor = trial ? start + trial_days * 86400 : start;
        if (json_object_set_new(sub, "id", json_string(id)) < 0 ||
            json_object_set_new(json_object_get(sub, "items"), "url", json_string(url)) < 0 ||
            json_object_set_new(sub, "created", json_integer(start)) < 0 ||
            json_object_set_new(sub, "start_date", json_integer(start)) < 0 ||
            json_object_set_new(sub, "billing_cycle_anchor", json_integer(anchor)) < 0 ||
            json_object_set_new(sub, "current_period_start", json_integer(start)) < 0 ||
            json_object_set(sub, "currency", json_object_get(first, "currency")) < 0 ||
            json_object_set(sub, "test_clock", json_object_get(cus, "test_clock")) < 0 ||
            json_object_set_new(sub, "status", json_string(trial ? "trialing" : "incomplete")) <
                    0 ||
            sync_items(sub) < 0)
                return -ENOMEM;
        int64_t end = next_period_end(sub, start);
        if (json_object_set_new(sub, "current_period_end", json_integer(end)) < 0 ||
            (trial && (json_object_set_new(sub, "trial_start", json_integer(start)) < 0 ||
                       json_object_set_new(sub, "trial_end", json_integer(anchor)) < 0)))
                return -ENOMEM;
        if (json_is_true(json_object_get(sub, "cancel_at_period_end")) &&
            json_object_set_new(sub, "cancel_at", json_integer(end)) < 0)
                return -ENOMEM;
        json_t *row = sub; /* the world's, from here on */
        json_t *inv;
        /* the subscription is created naming the invoice that bills its first period */
        if ((r = stripe_new_id(c->world, "in", in_id)) < 0 ||
            json_object_set_new(sub, "latest_invoice", json_string(in_id)) < 0 ||
            stripe_row_add(c->world, "subscriptions", TAKE_PTR(sub)) < 0 ||
            (r = stripe_event(&sc, "customer.subscription.created", row, NULL)) < 0 ||
            (r = draft_invoice(&sc, row, in_id, "subscription_create", start, end, start, start,
                               trial, &inv)) < 0 ||
            (r = stripe_invoice_finalize(&sc, inv, pm, !streq(behavior, "default_incomplete"),
                                         false)) < 0)
                return r < 0 ? r : -ENOMEM;
        if (snapshot && !streq_ptr(json_get_str(inv, "status"), "paid")) {
                /* Stripe's error_if_incomplete: the card's 402, and no subscription */
                json_t *pi = stripe_find(c->world, "payment_intents",
                                         json_get_str(inv, "payment_intent"), NULL);
                json_t *err = incomplete_error(pi);
                twin_world_replace(c->twin, TAKE_PTR(snapshot));
                c->world = twin_world(c->twin);
                return twin_reply_body(rp, 402, err);
        }
        if ((r = stripe_mutated(rp, NULL, row)) < 0)
                return r;
        return stripe_reply_object(c, rp, 200, row);
}

/* The subscription args.id names: 1 (*ret, *ret_idx), 0 with 404 in rp. */
static int arg_sub(TwinCall *c, TwinReply *rp, json_t **ret, size_t *ret_idx)
{
        const char *id;
        int r = stripe_arg_id(c, rp, "id", &id);
        if (r <= 0)
                return r;
        json_t *sub = stripe_find(c->world, "subscriptions", id, ret_idx);
        if (!sub) {
                r = stripe_missing(rp, "subscriptions", id, "id");
                return r < 0 ? r : 0;
        }
        *ret = sub;
        return 1;
}

int stripe_act_retrieve_subscription(TwinCall *c, TwinReply *rp)
{
        json_t *sub;
        int r = arg_sub(c, rp, &sub, NULL);
        if (r <= 0)
                return r;
        return stripe_reply_object(c, rp, 200, sub);
}

/* Applies cancellation_details[comment, feedback] onto sub. 1, 0, -ENOMEM. */
static int apply_cancellation_details(TwinCall *c, TwinReply *rp, json_t *sub)
{
        static const char *const keys[] = {"comment", "feedback", NULL};
        static const char *const feedbacks[] = {"customer_service",
                                                "low_quality",
                                                "missing_features",
                                                "other",
                                                "switched_service",
                                                "too_complex",
                                                "too_expensive",
                                                "unused",
                                                NULL};
        json_t *cd;
        const char *comment, *feedback;
        int r;
        if ((r = stripe_param_object(rp, c->args, "cancellation_details", "cancellation_details",
                                     &cd)) <= 0 ||
            !cd)
                return r;
        if ((r = stripe_param_known(rp, cd, "cancellation_details", keys)) <= 0 ||
            (r = stripe_param_str(rp, cd, "comment", "cancellation_details[comment]", false,
                                  &comment)) <= 0 ||
            (r = stripe_param_enum(rp, cd, "feedback", "cancellation_details[feedback]", feedbacks,
                                   &feedback)) <= 0)
                return r;
        json_t *mine = json_object_get(sub, "cancellation_details");
        if ((comment && json_object_set_new(mine, "comment",
                                            comment[0] ? json_string(comment) : json_null()) < 0) ||
            (feedback && json_object_set_new(mine, "feedback", json_string(feedback)) < 0))
                return -ENOMEM;
        return 1;
}

/* previous_attributes of an update: the members of before that after changed, as they were. */
static json_t *changed(const json_t *before, const json_t *after)
{
        json_t *prev = json_object();
        const char *k;
        json_t *v;
        json_object_foreach ((json_t *)before, k, v) {
                if (prev && !json_equal(v, json_object_get(after, k)) &&
                    json_object_set(prev, k, v) < 0) {
                        json_decref(prev);
                        return NULL;
                }
        }
        return prev;
}

int stripe_act_update_subscription(TwinCall *c, TwinReply *rp)
{
        json_t *sub;
        size_t idx;
        int r = arg_sub(c, rp, &sub, &idx);
        if (r <= 0)
                return r;
        if (streq_ptr(json_get_str(sub, "status"), "canceled")) {
                const char *k;
                json_t *v;
                json_object_foreach (c->args, k, v) {
                        if (!streq(k, "id") && !streq(k, "metadata") && !streq(k, "expand") &&
                            !streq(k, "cancellation_details"))
                                return stripe_invalid(rp, NULL, k,
                                                      "A canceled subscription can only update "
                                                      "its cancellation_details and metadata.");
                }
        }
        json_t *cus = stripe_find(c->world, "customers", json_get_str(sub, "customer"), NULL);
        int64_t now = stripe_clock_time(c, json_get_str(sub, "test_clock"));
        _cleanup_json_ json_t *next = json_deep_copy(sub);
        if (!next)
                return -ENOMEM;
        json_t *data = json_object_get(json_object_get(next, "items"), "data");
        if ((r = apply_items(c, rp, data, json_get_str(sub, "currency"), true, now)) <= 0 ||
            (r = apply_fields(c, rp, next, cus, now)) <= 0 ||
            (r = apply_cancellation_details(c, rp, next)) <= 0)
                return r;
        if (json_equal(next, sub))
                return stripe_reply_object(c, rp, 200, sub);
        /* new items get their ids only now: a refusal above drew none */
        size_t i;
        json_t *item;
        json_array_foreach (data, i, item) {
                char si[40];
                if (json_get_str(item, "id")[0])
                        continue;
                if ((r = stripe_new_id(c->world, "si", si)) < 0 ||
                    json_object_set_new(item, "id", json_string(si)) < 0 ||
                    json_object_set(item, "subscription", json_object_get(next, "id")) < 0)
                        return -ENOMEM;
        }
        if (sync_items(next) < 0)
                return -ENOMEM;
        _cleanup_json_ json_t *prev = changed(sub, next);
        TwinCall sc = *c;
        sc.now = now;
        if (!prev || (r = stripe_mutated(rp, sub, next)) < 0 ||
            (r = stripe_row_replace(c->world, "subscriptions", idx, json_incref(next))) < 0 ||
            (r = stripe_event(&sc, "customer.subscription.updated", next, prev)) < 0)
                return r < 0 ? r : -ENOMEM;
        return stripe_reply_object(c, rp, 200, next);
}

/*
 * Ends sub (the world's row) at when: status canceled, ended_at (and canceled_at unless an
 * earlier request set it), customer.subscription.deleted. 0 or -ENOMEM.
 */
static int end_subscription(TwinCall *c, json_t *sub, int64_t when)
{
        json_t *cd = json_object_get(sub, "cancellation_details");
        if (json_object_set_new(sub, "status", json_string("canceled")) < 0 ||
            json_object_set_new(sub, "ended_at", json_integer(when)) < 0 ||
            (json_is_null(json_object_get(sub, "canceled_at")) &&
             json_object_set_new(sub, "canceled_at", json_integer(when)) < 0) ||
            (json_is_null(json_object_get(cd, "reason")) &&
             json_object_set_new(cd, "reason", json_string("cancellation_requested")) < 0))
                return -ENOMEM;
        TwinCall sc = *c;
        sc.now = when;
        return stripe_event(&sc, "customer.subscription.deleted", sub, NULL);
}

int stripe_act_cancel_subscription(TwinCall *c, TwinReply *rp)
{
        json_t *sub;
        size_t idx;
        bool b;
        int r = arg_sub(c, rp, &sub, &idx);
        if (r <= 0 || (r = stripe_arg_bool(c, rp, "invoice_now", &b)) <= 0 ||
            (r = stripe_arg_bool(c, rp, "prorate", &b)) <= 0)
                return r;
        if (streq_ptr(json_get_str(sub, "status"), "canceled"))
                return stripe_invalid(rp, NULL, NULL,
                                      "A canceled subscription can only update its "
                                      "cancellation_details and metadata.");
        _cleanup_json_ json_t *next = json_deep_copy(sub);
        if (!next)
                return -ENOMEM;
        if ((r = apply_cancellation_details(c, rp, next)) <= 0)
                return r;
        int64_t now = stripe_clock_time(c, json_get_str(sub, "test_clock"));
        json_t *cd = json_object_get(next, "cancellation_details");
        if (json_object_set_new(next, "canceled_at", json_integer(now)) < 0 ||
            json_object_set_new(cd, "reason", json_string("cancellation_requested")) < 0)
                return -ENOMEM;
        if ((r = end_subscription(c, next, now)) < 0 || (r = stripe_mutated(rp, sub, next)) < 0 ||
            (r = stripe_row_replace(c->world, "subscriptions", idx, json_incref(next))) < 0)
                return r;
        return stripe_reply_object(c, rp, 200, next);
}

/*
 * Cancels every subscription of customer id that has not ended, as Stripe does when the
 * customer is deleted. 0 or -ENOMEM.
 */
int stripe_subscriptions_end_for(TwinCall *c, const char *customer)
{
        size_t i;
        json_t *sub;
        json_array_foreach (json_object_get(c->world, "subscriptions"), i, sub) {
                const char *st = json_get_str(sub, "status");
                if (!streq_ptr(json_get_str(sub, "customer"), customer) ||
                    streq_ptr(st, "canceled") || streq_ptr(st, "incomplete_expired"))
                        continue;
                int r = end_subscription(c, sub,
                                         stripe_clock_time(c, json_get_str(sub, "test_clock")));
                if (r < 0)
                        return r;
        }
        return 0;
}

static bool keep_sub(TwinCall *c, json_t *row)
{
        const char *cus = json_get_str(c->args, "customer");
        const char *price = json_get_str(c->args, "price");
        const char *clock = json_get_str(c->args, "test_clock");
        const char *want = json_get_str(c->args, "status");
        const char *status = json_get_str(row, "status");
        if ((cus && !streq_ptr(json_get_str(row, "customer"), cus)) ||
            (clock && !streq_ptr(json_get_str(row, "test_clock"), clock)))
                return false;
        if (price) {
                bool found = false;
                size_t i;
                json_t *item;
                json_array_foreach (json_object_get(json_object_get(row, "items"), "data"), i,
                                    item) {
                        found = found ||
                                streq_ptr(json_get_str(json_object_get(item, "price"), "id"),
                                          price);
                }
                if (!found)
                        return false;
        }
        /* without status, Stripe lists the subscriptions that are not canceled */
        if (!want)
                return !streq_ptr(status, "canceled");
        if (streq(want, "all"))
                return true;
        if (streq(want, "ended"))
                return streq_ptr(status, "canceled") || streq_ptr(status, "incomplete_expired");
        return streq_ptr(status, want);
}

int stripe_act_list_subscriptions(TwinCall *c, TwinReply *rp)
{
        static const char *const statuses[] = {
                "active",   "all",    "canceled", "ended",  "incomplete", "incomplete_expired",
                "past_due", "paused", "trialing", "unpaid", NULL};
        const char *s;
        int r;
        if ((r = stripe_arg_str(c, rp, "customer", false, &s)) <= 0 ||
            (r = stripe_arg_str(c, rp, "price", false, &s)) <= 0 ||
            (r = stripe_arg_str(c, rp, "test_clock", false, &s)) <= 0 ||
            (r = stripe_arg_enum(c, rp, "status", statuses, &s)) <= 0)
                return r;
        return stripe_list(c, rp, "subscriptions", "/v1/subscriptions", keep_sub);
}

/* ------------------------------------------------------------------ time passing */

/*
 * When sub (borrowed) next changes by itself: the end of its current period (a renewal, the
 * end of its trial, or its cancellation at period end) for a subscription that bills
 * (trialing, active, past_due, unpaid); INT64_MAX for one that does not.
 */
int64_t stripe_subscription_due(const json_t *sub)
{
        const char *st = json_get_str(sub, "status");
        if (!(streq_ptr(st, "trialing") || streq_ptr(st, "active") || streq_ptr(st, "past_due") ||
              streq_ptr(st, "unpaid")))
                return INT64_MAX;
        return json_integer_value(json_object_get(sub, "current_period_end"));
}

/*
 * t plus two billing periods of sub (a timestamp): how far a test clock may advance from t
 * while sub is on it, as Stripe bounds an advance.
 */
int64_t stripe_subscription_two_periods(const json_t *sub, int64_t t)
{
        const char *interval;
        int64_t count;
        sub_interval(sub, &interval, &count);
        return stripe_interval_add(t, interval, 2 * count);
}

/*
 * Applies the change due at stripe_subscription_due(sub) (sub: the world's row), at that
 * instant: the cancellation asked for at period end (customer.subscription.deleted); else the
 * next period (customer.subscription.updated, a trial becoming active) and its invoice, paid
 * off-session as the first one was — a renewal that cannot be paid makes the subscription
 * past_due (customer.subscription.updated). 0 or -ENOMEM.
 */
int stripe_subscription_renew(TwinCall *c, json_t *sub)
{
        int64_t at = stripe_subscription_due(sub);
        TwinCall sc = *c;
        sc.now = at;
        json_t *cancel_at = json_object_get(sub, "cancel_at");
        if (json_is_true(json_object_get(sub, "cancel_at_period_end")) ||
            (json_is_integer(cancel_at) && json_integer_value(cancel_at) <= at))
                return end_subscription(c, sub, at);
        int64_t start = json_integer_value(json_object_get(sub, "current_period_start"));
        int64_t end = next_period_end(sub, at);
        _cleanup_json_ json_t *before = json_deep_copy(sub);
        if (!before || json_object_set_new(sub, "current_period_start", json_integer(at)) < 0 ||
            json_object_set_new(sub, "current_period_end", json_integer(end)) < 0 ||
            (streq_ptr(json_get_str(sub, "status"), "trialing") &&
             json_object_set_new(sub, "status", json_string("active")) < 0))
                return -ENOMEM;
        char next_id[40];
        int r = stripe_new_id(c->world, "in", next_id);
        if (r < 0)
                return r;
        /* the updated event names the invoice the renewal makes, as Stripe's does */
        if (json_object_set_new(sub, "latest_invoice", json_string(next_id)) < 0)
                return -ENOMEM;
        _cleanup_json_ json_t *prev = changed(before, sub);
        if (!prev || (r = stripe_event(&sc, "customer.subscription.updated", sub, prev)) < 0)
                return r < 0 ? r : -ENOMEM;
        json_t *inv;
        if ((r = draft_invoice(&sc, sub, next_id, "subscription_cycle", at, end, start, at, false,
                               &inv)) < 0)
                return r;
        if ((r = stripe_invoice_finalize(&sc, inv, payment_method_of(c, sub), true, true)) < 0)
                return r;
        if (streq_ptr(json_get_str(inv, "status"), "paid") ||
            !streq_ptr(json_get_str(sub, "status"), "active"))
                return 0;
        _cleanup_json_ json_t *was = json_pack("{s:s}", "status", "active");
        if (!was || json_object_set_new(sub, "status", json_string("past_due")) < 0)
                return -ENOMEM;
        return stripe_event(&sc, "customer.subscription.updated", sub, was);
}
