/* SPDX-License-Identifier: MIT */
/*
 * Prices (https://docs.stripe.com/api/prices): create (for a product, or one made from
 * product_data), retrieve, update, list. A price is per_unit: unit_amount in the smallest
 * currency unit, one_time or recurring (recurring[interval] day|week|month|year, every
 * interval_count of them, licensed usage); its type follows from recurring. As on Stripe a
 * price's money is immutable — update takes active, nickname, lookup_key and metadata only,
 * and anything else is parameter_unknown (the pipeline refuses it from surface.json). A
 * lookup_key names one price at a time; transfer_lookup_key moves it.
 */
#include <strings.h>

#include "common/json-util.h"
#include "pods/stripe/stripe.h"

static const char *const intervals[] = {"day", "week", "month", "year", NULL};

/* A Price (https://docs.stripe.com/api/prices/object), one_time until recurring is set. */
json_t *stripe_price_new(const char *id, int64_t created, const char *currency, int64_t amount)
{
        char dec[24];
        snprintf(dec, sizeof(dec), "%lld", (long long)amount);
        return json_pack("{s:s, s:s, s:b, s:s, s:I, s:s, s:n, s:b, s:n, s:{}, s:n, s:n, s:n, "
                         "s:s, s:n, s:n, s:s, s:I, s:s}",
                         "id", id, "object", "price", "active", true, "billing_scheme", "per_unit",
                         "created", (json_int_t)created, "currency", currency, "custom_unit_amount",
                         "livemode", false, "lookup_key", "metadata", "nickname", "product",
                         "recurring", "tax_behavior", "unspecified", "tiers_mode",
                         "transform_quantity", "type", "one_time", "unit_amount",
                         (json_int_t)amount, "unit_amount_decimal", dec);
}

/*
 * The plan a recurring price reads as where Stripe still shows its legacy twin (a
 * subscription's and a line item's "plan", https://docs.stripe.com/api/plans/object). New
 * reference; NULL on OOM.
 */
json_t *stripe_plan_of(const json_t *price)
{
        json_t *rec = json_object_get(price, "recurring");
        return json_pack(
                "{s:O?, s:s, s:O?, s:n, s:O?, s:O?, s:s, s:O?, s:O?, s:O?, s:O?, s:b, "
                "s:o, s:n, s:O?, s:O?, s:n, s:n, s:O?, s:s}",
                "id", json_object_get(price, "id"), "object", "plan", "active",
                json_object_get(price, "active"), "aggregate_usage", "amount",
                json_object_get(price, "unit_amount"), "amount_decimal",
                json_object_get(price, "unit_amount_decimal"), "billing_scheme", "per_unit",
                "created", json_object_get(price, "created"), "currency",
                json_object_get(price, "currency"), "interval", json_object_get(rec, "interval"),
                "interval_count", json_object_get(rec, "interval_count"), "livemode", false,
                "metadata", json_deep_copy(json_object_get(price, "metadata")), "meter", "nickname",
                json_object_get(price, "nickname"), "product", json_object_get(price, "product"),
                "tiers_mode", "transform_usage", "trial_period_days",
                json_object_get(rec, "trial_period_days"), "usage_type", "licensed");
}

/* The longest billing interval Stripe takes: three years of the unit. */
static int64_t max_count(const char *interval)
{
        return streq(interval, "day")     ? 1095
               : streq(interval, "week")  ? 156
               : streq(interval, "month") ? 36
                                          : 3;
}

/* recurring (param names it: "recurring", "default_price_data[recurring]") onto price. */
static int apply_recurring(TwinReply *rp, const json_t *rec, const char *param, json_t *price)
{
        static const char *const keys[] = {"interval", "interval_count", "usage_type",
                                           "trial_period_days", NULL};
        static const char *const usages[] = {"licensed", "metered", NULL};
        char p[128]; /* param (< 96 bytes, the caller's buffer) + "[trial_period_days]" */
        const char *interval, *usage;
        int64_t count = 1, trial = -1;
        int r;
        if ((r = stripe_param_known(rp, rec, param, keys)) <= 0)
                return r;
        snprintf(p, sizeof(p), "%s[interval]", param);
        if ((r = stripe_param_enum(rp, rec, "interval", p, intervals, &interval)) <= 0)
                return r;
        if (!interval)
                return stripe_invalid(rp, "parameter_missing", p, "Missing required param: %s.", p);
        snprintf(p, sizeof(p), "%s[interval_count]", param);
        if ((r = stripe_param_int(rp, rec, "interval_count", p, 1, INT64_MAX, false, &count)) <= 0)
                return r;
        if (count > max_count(interval))
                return stripe_invalid(rp, NULL, p,
                                      "The maximum billing interval is 3 years (3 years, 36 "
                                      "months, 156 weeks or 1095 days); %lld %ss is longer.",
                                      (long long)count, interval);
        snprintf(p, sizeof(p), "%s[usage_type]", param);
        if ((r = stripe_param_enum(rp, rec, "usage_type", p, usages, &usage)) <= 0)
                return r;
        if (streq_ptr(usage, "metered"))
                return stripe_invalid(rp, NULL, p,
                                      "usage_type=metered (usage-based billing with meters) is "
                                      "not supported by the pome Stripe twin.");
        snprintf(p, sizeof(p), "%s[trial_period_days]", param);
        if ((r = stripe_param_int(rp, rec, "trial_period_days", p, 0, 730, false, &trial)) <= 0)
                return r;
        json_t *o =
                json_pack("{s:n, s:s, s:I, s:n, s:o, s:s}", "aggregate_usage", "interval", interval,
                          "interval_count", (json_int_t)count, "meter", "trial_period_days",
                          trial >= 0 ? json_integer(trial) : json_null(), "usage_type", "licensed");
        if (!o || json_object_set_new(price, "recurring", o) < 0 ||
            json_object_set_new(price, "type", json_string("recurring")) < 0)
                return -ENOMEM;
        return 1;
}

/*
 * The price's own members from obj (create's arguments, or a product's default_price_data;
 * prefix names it in refusals, "" for the arguments): currency, unit_amount, recurring,
 * nickname, lookup_key, active, metadata, tax_behavior. A draft without id or product, new
 * in *ret: 1, 0 with a 400 in rp, -ENOMEM. Nothing in the world changes.
 */
int stripe_price_build(TwinCall *c, TwinReply *rp, const json_t *obj, const char *prefix,
                       json_t **ret)
{
        static const char *const taxes[] = {"exclusive", "inclusive", "unspecified", NULL};
        char p[96];
        const char *currency, *tax;
        int64_t amount = -1;
        json_t *rec;
        int r;
#define P(k) (prefix[0] ? (snprintf(p, sizeof(p), "%s[%s]", prefix, k), p) : k)
        if ((r = stripe_param_currency(rp, obj, P("currency"), true, &currency)) <= 0 ||
            (r = stripe_param_amount(rp, obj, "unit_amount", P("unit_amount"), true, &amount)) <=
                    0 ||
            (r = stripe_param_object(rp, obj, "recurring", P("recurring"), &rec)) <= 0 ||
            (r = stripe_param_enum(rp, obj, "tax_behavior", P("tax_behavior"), taxes, &tax)) <= 0)
                return r;
        _cleanup_json_ json_t *price = stripe_price_new("", c->now, currency, amount);
        if (!price)
                return -ENOMEM;
        if (rec && (r = apply_recurring(rp, rec, P("recurring"), price)) <= 0)
                return r;
        if (tax && json_object_set_new(price, "tax_behavior", json_string(tax)) < 0)
                return -ENOMEM;
        if (json_object_get(obj, "active")) {
                bool b = true;
                if ((r = stripe_param_bool(rp, obj, "active", P("active"), &b)) <= 0)
                        return r;
                if (json_object_set_new(price, "active", json_boolean(b)) < 0)
                        return -ENOMEM;
        }
        static const char *const strings[] = {"nickname", "lookup_key", NULL};
        if ((r = stripe_param_strings(rp, obj, prefix, price, strings)) <= 0 ||
            (r = stripe_param_metadata(rp, obj, P("metadata"), price)) <= 0)
                return r;
#undef P
        *ret = TAKE_PTR(price);
        return 1;
}

/*
 * Gives the draft (stolen) an id and product, stores it; borrowed into *ret. The caller has
 * checked the draft's lookup_key. 0 or -ENOMEM.
 */
int stripe_price_store(TwinCall *c, json_t *draft, const char *product, json_t **ret)
{
        _cleanup_json_ json_t *price = draft;
        char id[40];
        int r = stripe_new_id(c->world, "price", id);
        if (r < 0)
                return r;
        if (json_object_set_new(price, "id", json_string(id)) < 0 ||
            json_object_set_new(price, "product", json_string(product)) < 0)
                return -ENOMEM;
        *ret = price;
        return stripe_row_add(c->world, "prices", TAKE_PTR(price));
}

/* The price holding lookup_key other than self (may be NULL), or NULL. Borrowed. */
static json_t *lookup_owner(TwinCall *c, const char *key, const char *self, size_t *ret_idx)
{
        size_t i;
        json_t *p;
        json_array_foreach (json_object_get(c->world, "prices"), i, p) {
                if (streq_ptr(json_get_str(p, "lookup_key"), key) &&
                    !streq_ptr(json_get_str(p, "id"), self)) {
                        *ret_idx = i;
                        return p;
                }
        }
        return NULL;
}

/*
 * Whether price (a working copy; its id, NULL for a new one) may take its lookup_key: free, or
 * held by another price and transfer_lookup_key=true (*ret_from: the price to take it from). 1,
 * 0 with the 400 in rp, -ENOMEM.
 */
static int check_lookup_key(TwinCall *c, TwinReply *rp, json_t *price, json_t **ret_from,
                            size_t *ret_from_idx)
{
        bool transfer = false;
        int r = stripe_arg_bool(c, rp, "transfer_lookup_key", &transfer);
        *ret_from = NULL;
        if (r <= 0)
                return r;
        const char *key = json_get_str(price, "lookup_key");
        if (!key)
                return 1;
        if (strlen(key) > 200)
                return stripe_invalid(rp, NULL, "lookup_key",
                                      "A lookup key can be at most 200 characters long.");
        json_t *owner = lookup_owner(c, key, json_get_str(price, "id"), ret_from_idx);
        if (owner && !transfer)
                return stripe_invalid(rp, NULL, "lookup_key",
                                      "A price (`%s`) already uses the lookup key `%s`. Pass "
                                      "transfer_lookup_key=true to move it to this price.",
                                      json_get_str(owner, "id"), key);
        *ret_from = owner;
        return 1;
}

/* Takes the lookup key off from (the world's row at idx): price.updated is emitted for it. */
static int take_lookup_key(TwinCall *c, json_t *from, size_t idx)
{
        if (!from)
                return 0;
        _cleanup_json_ json_t *next = json_deep_copy(from);
        _cleanup_json_ json_t *prev =
                json_pack("{s:O}", "lookup_key", json_object_get(from, "lookup_key"));
        if (!next || !prev || json_object_set_new(next, "lookup_key", json_null()) < 0)
                return -ENOMEM;
        int r = stripe_row_replace(c->world, "prices", idx, json_incref(next));
        return r < 0 ? r : stripe_event(c, "price.updated", next, prev);
}

int stripe_act_create_price(TwinCall *c, TwinReply *rp)
{
        static const char *const pd_keys[] = {
                "name", "active", "metadata", "statement_descriptor", "unit_label", "id", NULL};
        const char *product_id;
        json_t *pd, *from, *made = NULL, *price;
        size_t from_idx = 0;
        int r;
        if ((r = stripe_arg_str(c, rp, "product", false, &product_id)) <= 0 ||
            (r = stripe_param_object(rp, c->args, "product_data", "product_data", &pd)) <= 0)
                return r;
        if (product_id && pd)
                return stripe_invalid(rp, NULL, "product_data",
                                      "You may only specify one of these parameters: product, "
                                      "product_data.");
        if (!product_id && !pd)
                return stripe_invalid(rp, "parameter_missing", "product",
                                      "Missing required param: product.");
        if (pd && (r = stripe_param_known(rp, pd, "product_data", pd_keys)) <= 0)
                return r;
        if (product_id && !stripe_find(c->world, "products", product_id, NULL))
                return stripe_missing(rp, "products", product_id, "product");
        _cleanup_json_ json_t *draft = NULL;
        if ((r = stripe_price_build(c, rp, c->args, "", &draft)) <= 0 ||
            (r = check_lookup_key(c, rp, draft, &from, &from_idx)) <= 0)
                return r;
        /* the product is made last: it checks everything before it draws its id */
        if (pd) {
                if ((r = stripe_product_make(c, rp, pd, "product_data", &made)) <= 0)
                        return r;
                product_id = json_get_str(made, "id");
        }
        if ((r = take_lookup_key(c, from, from_idx)) < 0 ||
            (r = stripe_price_store(c, TAKE_PTR(draft), product_id, &price)) < 0)
                return r;
        if ((made && (r = stripe_event(c, "product.created", made, NULL)) < 0) ||
            (r = stripe_event(c, "price.created", price, NULL)) < 0 ||
            (r = stripe_mutated(rp, NULL, price)) < 0)
                return r;
        return stripe_reply_object(c, rp, 200, price);
}

/* The price args.id names: 1 (*ret, *ret_idx), 0 with 404 in rp, -ENOMEM. */
static int arg_price(TwinCall *c, TwinReply *rp, json_t **ret, size_t *ret_idx)
{
        const char *id;
        int r = stripe_arg_id(c, rp, "id", &id);
        if (r <= 0)
                return r;
        json_t *p = stripe_find(c->world, "prices", id, ret_idx);
        if (!p) {
                r = stripe_missing(rp, "prices", id, "id");
                return r < 0 ? r : 0;
        }
        *ret = p;
        return 1;
}

int stripe_act_retrieve_price(TwinCall *c, TwinReply *rp)
{
        json_t *p;
        int r = arg_price(c, rp, &p, NULL);
        if (r <= 0)
                return r;
        return stripe_reply_object(c, rp, 200, p);
}

/*
 * The subscriptions' copies of price (in items[].price and .plan) follow it, as Stripe shows
 * a subscription's prices as they are now. 0 or -ENOMEM.
 */
static int refresh_copies(TwinCall *c, const json_t *price)
{
        size_t i, k;
        json_t *sub, *item;
        const char *id = json_get_str(price, "id");
        json_array_foreach (json_object_get(c->world, "subscriptions"), i, sub) {
                json_array_foreach (json_object_get(json_object_get(sub, "items"), "data"), k,
                                    item) {
                        if (!streq_ptr(json_get_str(json_object_get(item, "price"), "id"), id))
                                continue;
                        if (json_object_set_new(item, "price", json_deep_copy(price)) < 0 ||
                            json_object_set_new(item, "plan", stripe_plan_of(price)) < 0)
                                return -ENOMEM;
                }
                json_t *plan = json_object_get(sub, "plan");
                if (streq_ptr(json_get_str(plan, "id"), id) &&
                    json_object_set_new(sub, "plan", stripe_plan_of(price)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int stripe_act_update_price(TwinCall *c, TwinReply *rp)
{
        json_t *p, *from;
        size_t idx, from_idx = 0;
        int r = arg_price(c, rp, &p, &idx);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *next = json_deep_copy(p);
        if (!next)
                return -ENOMEM;
        static const char *const strings[] = {"nickname", "lookup_key", NULL};
        if (json_object_get(c->args, "active")) {
                bool b = true;
                if ((r = stripe_arg_bool(c, rp, "active", &b)) <= 0)
                        return r;
                json_t *prod = stripe_find(c->world, "products", json_get_str(p, "product"), NULL);
                if (!b && streq_ptr(json_get_str(prod, "default_price"), json_get_str(p, "id")))
                        return stripe_invalid(rp, NULL, "active",
                                              "This price cannot be archived because it is the "
                                              "default price of its product.");
                if (json_object_set_new(next, "active", json_boolean(b)) < 0)
                        return -ENOMEM;
        }
        if ((r = stripe_set_strings(c, rp, next, strings)) <= 0 ||
            (r = stripe_apply_metadata(c, rp, next)) <= 0 ||
            (r = check_lookup_key(c, rp, next, &from, &from_idx)) <= 0)
                return r;
        if (json_equal(next, p))
                return stripe_reply_object(c, rp, 200, p);
        _cleanup_json_ json_t *prev = json_object();
        const char *k;
        json_t *v;
        if (!prev)
                return -ENOMEM;
        json_object_foreach (p, k, v) {
                if (!json_equal(v, json_object_get(next, k)) && json_object_set(prev, k, v) < 0)
                        return -ENOMEM;
        }
        if ((r = stripe_mutated(rp, p, next)) < 0 || (r = take_lookup_key(c, from, from_idx)) < 0 ||
            (r = stripe_row_replace(c->world, "prices", idx, json_incref(next))) < 0 ||
            (r = refresh_copies(c, next)) < 0 ||
            (r = stripe_event(c, "price.updated", next, prev)) < 0)
                return r;
        return stripe_reply_object(c, rp, 200, next);
}

static bool keep_price(TwinCall *c, json_t *row)
{
        static const char *const fields[] = {"product", "type"};
        for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
                const char *want = json_get_str(c->args, fields[i]);
                if (want && !streq_ptr(json_get_str(row, fields[i]), want))
                        return false;
        }
        const char *currency = json_get_str(c->args, "currency");
        if (currency && strcasecmp(currency, strempty(json_get_str(row, "currency"))) != 0)
                return false;
        bool active;
        if (stripe_bool(c->args, "active", &active) == 0 &&
            json_is_true(json_object_get(row, "active")) != active)
                return false;
        const char *interval = json_get_str(json_object_get(c->args, "recurring"), "interval");
        if (interval &&
            !streq_ptr(json_get_str(json_object_get(row, "recurring"), "interval"), interval))
                return false;
        json_t *keys = json_object_get(c->args, "lookup_keys");
        if (json_is_array(keys)) {
                size_t i;
                json_t *k;
                json_array_foreach (keys, i, k) {
                        if (streq_ptr(json_string_value(k), json_get_str(row, "lookup_key")))
                                return true;
                }
                return false;
        }
        return true;
}

int stripe_act_list_prices(TwinCall *c, TwinReply *rp)
{
        static const char *const types[] = {"one_time", "recurring", NULL};
        static const char *const rec_keys[] = {"interval", "usage_type", "meter", NULL};
        const char *s;
        bool b;
        json_t *rec;
        int r;
        if ((r = stripe_arg_str(c, rp, "product", false, &s)) <= 0 ||
            (r = stripe_arg_bool(c, rp, "active", &b)) <= 0 ||
            (r = stripe_arg_enum(c, rp, "type", types, &s)) <= 0 ||
            (r = stripe_arg_currency(c, rp, false, &s)) <= 0 ||
            (r = stripe_param_object(rp, c->args, "recurring", "recurring", &rec)) <= 0)
                return r;
        if (rec && ((r = stripe_param_known(rp, rec, "recurring", rec_keys)) <= 0 ||
                    (r = stripe_param_enum(rp, rec, "interval", "recurring[interval]", intervals,
                                           &s)) <= 0))
                return r;
        json_t *keys = json_object_get(c->args, "lookup_keys");
        if (keys && !json_is_null(keys)) {
                size_t i;
                json_t *k;
                if (!json_is_array(keys))
                        return stripe_invalid(rp, NULL, "lookup_keys", "Invalid array");
                if (json_array_size(keys) > 10)
                        return stripe_invalid(rp, NULL, "lookup_keys",
                                              "You may only specify up to 10 lookup keys.");
                json_array_foreach (keys, i, k) {
                        if (!json_is_string(k))
                                return stripe_invalid(rp, NULL, "lookup_keys",
                                                      "Invalid array: lookup_keys must be "
                                                      "strings");
                }
        }
        return stripe_list(c, rp, "prices", "/v1/prices", keep_price);
}
