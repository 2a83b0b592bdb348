/* SPDX-License-Identifier: MIT */
/*
 * The Stripe twin (kind "stripe"): Stripe's REST API under /v1 (https://docs.stripe.com/api)
 * for customers, payment methods, payment intents (cards, and crypto in deposit mode:
 * crypto.c), charges, refunds, the balance, events, and billing (products, prices,
 * subscriptions, invoices, test clocks), and x402 resources (x402.c: HTTP 402 payments, not
 * Stripe's API: the seed's, and hosted Pome's default one), with form bodies in
 * Stripe's bracket convention (nested parameters checked as the top level is), JSON
 * replies, Stripe's error envelope {error:{type, code?, message, param?, doc_url?}},
 * Idempotency-Key replays and the failure injection a task seed asks for. This file holds
 * the world, the seed, the shared helpers, the request pipeline every action goes through
 * (stripe_serve) and the handler table; the resources live in one file per family
 * (stripe.h).
 *
 * The world is the normalised seed, every row stored in the shape Stripe returns it:
 *   customers[], payment_methods[], payment_intents[], charges[], refunds[],
 *   balance_transactions[], events[], products[], prices[], subscriptions[] (their items
 *   inside, as Stripe embeds them), invoices[] (their lines inside), test_clocks[]
 *                       rows in creation order (lists answer newest first)
 *   api_keys[]          the seed's keys, kept verbatim (redacted in /_pome/state); the front
 *                       authenticates minted sk_test_pome_… keys, not these
 *   x402_resources[], x402_payments[]
 *                       the seed's paid resources and the payments settled for them (x402.c);
 *                       both absent unless the seed declares x402_resources, the second
 *                       made too when the default resource (/x402/protected-resource) is paid
 *   failure_injection[] {method, path, attempt, mode, status, body}: the attempt-th call of
 *                       method + path answers status/body; mode before_handler changes
 *                       nothing else, after_handler (the default, as hosted Pome's) runs
 *                       the action first and keeps its change (stripe_serve)
 *   attempts            {"POST /v1/payment_intents": n}: calls counted for failure injection
 *   idempotency_keys    {key: {endpoint, params, status, body}}: first replies to replay
 *   next_id             counter behind the generated ids (deterministic per seed)
 * A customer's row keeps "deleted": true once deleted (retrieve answers Stripe's stub).
 * A card's behaviour (decline, 3-D Secure) follows its last4, as Stripe's test cards do.
 */
#include <ctype.h>
#include <stdarg.h>
#include <strings.h>

#include "common/json-util.h"
#include "common/text.h"
#include "pods/stripe/stripe.h"

#define SEED_CREATED 1700000000 /* created of a seeded row that names none */

/* ------------------------------------------------------------------ world helpers */

/* The world's array called collection, created when absent. Borrowed; NULL on OOM. */
json_t *stripe_rows(json_t *w, const char *collection)
{
        json_t *a = json_object_get(w, collection);
        if (!json_is_array(a)) {
                a = json_array();
                if (json_object_set_new(w, collection, a) < 0)
                        return NULL;
        }
        return a;
}

/* The row of collection whose id is id (borrowed), its index in *ret_idx; NULL when none. */
json_t *stripe_find(json_t *w, const char *collection, const char *id, size_t *ret_idx)
{
        size_t i;
        json_t *x;
        if (!id)
                return NULL;
        json_array_foreach (json_object_get(w, collection), i, x) {
                if (streq_ptr(json_get_str(x, "id"), id)) {
                        if (ret_idx)
                                *ret_idx = i;
                        return x;
                }
        }
        return NULL;
}

/*
 * What an id's prefix names: the world's collection and the noun Stripe's "No such …"
 * messages use. A nested kind (subscription items, invoice line items) lives inside the
 * rows of its collection, in <row>.<nested>.data[], as Stripe embeds it.
 */
static const struct {
        const char *prefix, *collection, *noun, *nested;
} id_kinds[] = {
        {"cus_", "customers", "customer", NULL},
        {"pm_", "payment_methods", "PaymentMethod", NULL},
        {"pi_", "payment_intents", "payment_intent", NULL},
        {"ch_", "charges", "charge", NULL},
        {"py_", "charges", "charge", NULL},
        {"re_", "refunds", "refund", NULL},
        {"txn_", "balance_transactions", "balance transaction", NULL},
        {"evt_", "events", "event", NULL},
        {"prod_", "products", "product", NULL},
        {"price_", "prices", "price", NULL},
        {"sub_", "subscriptions", "subscription", NULL},
        {"si_", "subscriptions", "subscription item", "items"},
        {"in_", "invoices", "invoice", NULL},
        {"il_", "invoices", "invoice line item", "lines"},
        {"clock_", "test_clocks", "test_clock", NULL},
};

/*
 * Any row by id, its collection told by the id's prefix (cus_, pm_, pi_, ch_, re_, txn_,
 * evt_, prod_, price_, sub_, in_, clock_; si_ and il_ are found inside their subscription or
 * invoice). Borrowed; NULL when none.
 */
json_t *stripe_find_any(json_t *w, const char *id)
{
        for (size_t i = 0; id && i < ELEMENTSOF(id_kinds); i++) {
                if (!startswith(id, id_kinds[i].prefix))
                        continue;
                if (!id_kinds[i].nested)
                        return stripe_find(w, id_kinds[i].collection, id, NULL);
                size_t k, j;
                json_t *row, *x;
                json_array_foreach (json_object_get(w, id_kinds[i].collection), k, row) {
                        json_t *data =
                                json_object_get(json_object_get(row, id_kinds[i].nested), "data");
                        json_array_foreach (data, j, x) {
                                if (streq_ptr(json_get_str(x, "id"), id))
                                        return x;
                        }
                }
                return NULL;
        }
        return NULL;
}

/*
 * A new id "<prefix>_Pm<12 characters>" into ret, unique in the world. The characters are the
 * world's counter n mapped by n·a + b mod 62^12 (a is odd and prime to 31, so the map is a
 * bijection) and written in base 62: ids look like Stripe's and stay deterministic per seed.
 * 0 or -ENOMEM.
 */
int stripe_new_id(json_t *w, const char *prefix, char ret[static 40])
{
        static const char b62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        unsigned __int128 m = 1;
        for (int i = 0; i < 12; i++)
                m *= 62;
        const unsigned __int128 a = (unsigned __int128)0x6c << 64 | 0x1782d9bcb6240001ULL;
        for (;;) {
                json_int_t n = json_integer_value(json_object_get(w, "next_id"));
                if (n < 1)
                        n = 1;
                if (json_object_set_new(w, "next_id", json_integer(n + 1)) < 0)
                        return -ENOMEM;
                unsigned __int128 v = ((unsigned __int128)n * a + 0x2545F491ULL) % m;
                char tail[13];
                for (int i = 11; i >= 0; i--) {
                        tail[i] = b62[(unsigned)(v % 62)];
                        v /= 62;
                }
                tail[12] = 0;
                snprintf(ret, 40, "%s_Pm%s", prefix, tail);
                if (!stripe_find_any(w, ret))
                        return 0;
        }
}

/* Appends row (a new reference, stolen) to the world's collection. 0 or -ENOMEM. */
int stripe_row_add(json_t *w, const char *collection, json_t *row)
{
        json_t *a = stripe_rows(w, collection);
        if (!row || !a || json_array_append_new(a, row) < 0)
                return -ENOMEM;
        return 0;
}

/* Replaces the collection's row at idx by row (a new reference, stolen). 0 or -ENOMEM. */
int stripe_row_replace(json_t *w, const char *collection, size_t idx, json_t *row)
{
        json_t *a = json_object_get(w, collection);
        if (!row || json_array_set_new(a, idx, row) < 0)
                return -ENOMEM;
        return 0;
}

/*
 * Stripe's standard card pricing, in the currency's smallest unit: 2.9% + 30 (US pricing,
 * https://stripe.com/pricing), rounded half up. Applied to every currency alike.
 */
int64_t stripe_fee(const char *currency _unused_, int64_t amount)
{
        return (amount * 29 + 500) / 1000 + 30;
}

/*
 * Books a balance transaction (https://docs.stripe.com/api/balance_transactions/object) of
 * type "charge" or "refund" for source (ch_…, re_…): amount and fee in the smallest unit,
 * net = amount − fee, available at once (the twin has no payout float). Its id into ret_id.
 * 0 or -ENOMEM.
 */
int stripe_txn_add(TwinCall *c, const char *type, const char *source, int64_t amount, int64_t fee,
                   const char *currency, const char *description, char ret_id[static 40])
{
        int r = stripe_new_id(c->world, "txn", ret_id);
        if (r < 0)
                return r;
        json_t *fees = fee ? json_pack("[{s:I, s:n, s:s, s:s, s:s}]", "amount", (json_int_t)fee,
                                       "application", "currency", currency, "description",
                                       "Stripe processing fees", "type", "stripe_fee")
                           : json_array();
        json_t *row = json_pack(
                "{s:s, s:s, s:I, s:I, s:I, s:s, s:s*, s:I, s:o, s:I, s:s, s:s, s:s, s:s, "
                "s:n}",
                "id", ret_id, "object", "balance_transaction", "amount", (json_int_t)amount,
                "available_on", (json_int_t)c->now, "created", (json_int_t)c->now, "currency",
                currency, "description", description, "fee", (json_int_t)fee, "fee_details",
                fees ? fees : json_null(), "net", (json_int_t)(amount - fee), "reporting_category",
                type, "source", source, "status", "available", "type", type, "exchange_rate");
        return stripe_row_add(c->world, "balance_transactions", row);
}

/* ------------------------------------------------------------------ replies */

/* doc_url of an error code: https://stripe.com/docs/error-codes/<code with '-' for '_'>. */
static json_t *doc_url(const char *code)
{
        char buf[160];
        int n = snprintf(buf, sizeof(buf), "https://stripe.com/docs/error-codes/%s", code);
        for (int i = n - (int)strlen(code); i < n && i < (int)sizeof(buf); i++)
                if (buf[i] == '_')
                        buf[i] = '-';
        return json_string(buf);
}

_printf_(6, 0) static int fail_v(TwinReply *rp, int status, const char *type, const char *code,
                                 const char *param, const char *fmt, va_list ap)
{
        _cleanup_free_ char *msg = NULL;
        if (vasprintf(&msg, fmt, ap) < 0)
                return -ENOMEM;
        json_t *e = json_pack("{s:s, s:s}", "type", type, "message", msg);
        if (!e)
                return -ENOMEM;
        if ((code && (json_object_set_new(e, "code", json_string(code)) < 0 ||
                      json_object_set_new(e, "doc_url", doc_url(code)) < 0)) ||
            (param && json_object_set_new(e, "param", json_string(param)) < 0)) {
                json_decref(e);
                return -ENOMEM;
        }
        return twin_reply_body(rp, status, json_pack("{s:o}", "error", e));
}

/*
 * Fills rp with Stripe's error envelope (https://docs.stripe.com/api/errors): status, type
 * (invalid_request_error, card_error, idempotency_error, api_error), code and param when not
 * NULL (code adds its doc_url), the printf-style message. Returns 0 (the action's answer is
 * the refusal) or -ENOMEM.
 */
int stripe_fail(TwinReply *rp, int status, const char *type, const char *code, const char *param,
                const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = fail_v(rp, status, type, code, param, fmt, ap);
        va_end(ap);
        return r;
}

/* stripe_fail with 400 invalid_request_error. */
int stripe_invalid(TwinReply *rp, const char *code, const char *param, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = fail_v(rp, 400, "invalid_request_error", code, param, fmt, ap);
        va_end(ap);
        return r;
}

/* 404 resource_missing "No such customer: 'cus_x'" for id of collection, naming param. */
int stripe_missing(TwinReply *rp, const char *collection, const char *id, const char *param)
{
        const char *noun = NULL;
        /* the kind the id's prefix names in that collection (a subscription item), else the
         * collection's own */
        for (size_t i = 0; i < ELEMENTSOF(id_kinds) && !noun; i++)
                if (streq(id_kinds[i].collection, collection) &&
                    startswith(strempty(id), id_kinds[i].prefix))
                        noun = id_kinds[i].noun;
        for (size_t i = 0; i < ELEMENTSOF(id_kinds) && !noun; i++)
                if (streq(id_kinds[i].collection, collection))
                        noun = id_kinds[i].noun;
        return stripe_fail(rp, 404, "invalid_request_error", "resource_missing", param,
                           "No such %s: '%s'", noun ?: "object", id);
}

/*
 * Answers a copy of obj (borrowed) with the caller's expand[] applied (stripe_expand).
 * Returns 0 or -ENOMEM.
 */
int stripe_reply_object(TwinCall *c, TwinReply *rp, int status, json_t *obj)
{
        _cleanup_json_ json_t *copy = json_deep_copy(obj);
        if (!copy)
                return -ENOMEM;
        int r = stripe_expand(c, rp, copy, json_object_get(c->args, "expand"));
        if (r <= 0)
                return r;
        return twin_reply_body(rp, status, TAKE_PTR(copy));
}

/* Records that the call changed the world (tape state_delta {before, after}). */
int stripe_mutated(TwinReply *rp, const json_t *before, const json_t *after)
{
        return twin_reply_mutation(rp, before, after);
}

/* ------------------------------------------------------------------ arguments */

/* A JSON value as Stripe's messages quote it: the string itself, else compact JSON. */
static char *value_text(const json_t *v)
{
        if (json_is_string(v))
                return strdup(json_string_value(v));
        return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

/*
 * The id argument (path parameter {id}, or MCP "id"): 1 with *ret, 0 with 400
 * parameter_missing in rp, -ENOMEM.
 */
int stripe_arg_id(TwinCall *c, TwinReply *rp, const char *key, const char **ret)
{
        const char *s = json_get_str(c->args, key);
        if (!s || !s[0]) {
                int r = stripe_invalid(rp, "parameter_missing", key, "Missing required param: %s.",
                                       key);
                return r < 0 ? r : 0;
        }
        *ret = s;
        return 1;
}

/*
 * The readers below come in two spellings: stripe_param_*(rp, obj, key, param, …) read the
 * member key of obj (the arguments, or a nested parameter such as recurring or items[0]) and
 * name param in their refusals ("recurring[interval]"); stripe_arg_*(c, rp, key, …) read
 * c->args[key]. Each returns 1 with *ret, 0 with Stripe's 400 in rp, or -ENOMEM.
 */

/*
 * A string: *ret NULL when absent and not required; parameter_missing when required, "Invalid
 * string" for an object, array, number or boolean.
 */
int stripe_param_str(TwinReply *rp, const json_t *obj, const char *key, const char *param,
                     bool required, const char **ret)
{
        json_t *v = json_object_get(obj, key);
        int r;
        if (!v || json_is_null(v)) {
                if (!required) {
                        *ret = NULL;
                        return 1;
                }
                r = stripe_invalid(rp, "parameter_missing", param, "Missing required param: %s.",
                                   param);
                return r < 0 ? r : 0;
        }
        if (!json_is_string(v)) {
                _cleanup_free_ char *t = value_text(v);
                r = stripe_invalid(rp, "parameter_invalid_string", param,
                                   "Invalid string: %s; must be a string", t ? t : "?");
                return r < 0 ? r : 0;
        }
        *ret = json_string_value(v);
        return 1;
}

int stripe_arg_str(TwinCall *c, TwinReply *rp, const char *key, bool required, const char **ret)
{
        return stripe_param_str(rp, c->args, key, key, required, ret);
}

/*
 * An integer in [min, max] (a JSON integer or a decimal string): *ret untouched when absent
 * and not required; "Invalid integer" when it is none, Stripe's range message when outside.
 */
int stripe_param_int(TwinReply *rp, const json_t *obj, const char *key, const char *param,
                     int64_t min, int64_t max, bool required, int64_t *ret)
{
        int64_t x;
        int r = twin_arg_int(obj, key, INT64_MIN, INT64_MAX, &x);
        if (r == -ENOENT && !required)
                return 1;
        if (r == -ENOENT) {
                r = stripe_invalid(rp, "parameter_missing", param, "Missing required param: %s.",
                                   param);
                return r < 0 ? r : 0;
        }
        if (r < 0) {
                _cleanup_free_ char *t = value_text(json_object_get(obj, key));
                r = stripe_invalid(rp, "parameter_invalid_integer", param, "Invalid integer: %s",
                                   t ? t : "?");
                return r < 0 ? r : 0;
        }
        if (x < min || x > max) {
                r = x < min ? stripe_invalid(rp, NULL, param,
                                             "This value must be greater than or equal to %lld.",
                                             (long long)min)
                            : stripe_invalid(rp, NULL, param,
                                             "This value must be less than or equal to %lld.",
                                             (long long)max);
                return r < 0 ? r : 0;
        }
        *ret = x;
        return 1;
}

/* A non-negative amount in the smallest currency unit: anything else is "Invalid integer". */
int stripe_param_amount(TwinReply *rp, const json_t *obj, const char *key, const char *param,
                        bool required, int64_t *ret)
{
        int64_t x;
        int r = twin_arg_int(obj, key, 0, STRIPE_MAX_AMOUNT, &x);
        if (r == -ENOENT && !required)
                return 1;
        if (r == -ENOENT) {
                r = stripe_invalid(rp, "parameter_missing", param, "Missing required param: %s.",
                                   param);
                return r < 0 ? r : 0;
        }
        if (r < 0) {
                _cleanup_free_ char *t = value_text(json_object_get(obj, key));
                r = stripe_invalid(rp, "parameter_invalid_integer", param, "Invalid integer: %s",
                                   t ? t : "?");
                return r < 0 ? r : 0;
        }
        *ret = x;
        return 1;
}

/* A non-negative integer in the smallest currency unit (or any count): as stripe_arg_str. */
int stripe_arg_amount(TwinCall *c, TwinReply *rp, const char *key, bool required, int64_t *ret)
{
        return stripe_param_amount(rp, c->args, key, key, required, ret);
}

int stripe_bool(const json_t *obj, const char *key, bool *ret)
{
        json_t *v = json_object_get(obj, key);
        if (!v || json_is_null(v))
                return -ENOENT;
        if (json_is_boolean(v)) { /* MCP callers send typed JSON */
                *ret = json_is_true(v);
                return 0;
        }
        /* api.stripe.com takes "true"/"false" in any case (stripe-python sends "True", as
         * Python prints its booleans) and refuses anything else, "1" and "0" included
         * (https://docs.stripe.com/api: boolean parameters) */
        const char *s = json_string_value(v);
        if (s && strcasecmp(s, "true") == 0)
                *ret = true;
        else if (s && strcasecmp(s, "false") == 0)
                *ret = false;
        else
                return -EINVAL;
        return 0;
}

/* A boolean (stripe_bool): *ret untouched when absent. */
int stripe_param_bool(TwinReply *rp, const json_t *obj, const char *key, const char *param,
                      bool *ret)
{
        int r = stripe_bool(obj, key, ret);
        if (r == -ENOENT)
                return 1;
        if (r < 0) {
                _cleanup_free_ char *t = value_text(json_object_get(obj, key));
                r = stripe_invalid(rp, "parameter_invalid_boolean", param, "Invalid boolean: %s",
                                   t ? t : "?");
                return r < 0 ? r : 0;
        }
        return 1;
}

int stripe_arg_bool(TwinCall *c, TwinReply *rp, const char *key, bool *ret)
{
        return stripe_param_bool(rp, c->args, key, key, ret);
}

/* A string out of values (NULL-terminated): *ret NULL when absent. */
int stripe_param_enum(TwinReply *rp, const json_t *obj, const char *key, const char *param,
                      const char *const *values, const char **ret)
{
        const char *s;
        int r = stripe_param_str(rp, obj, key, param, false, &s);
        if (r <= 0 || !s) {
                *ret = NULL;
                return r;
        }
        char list[512] = "";
        size_t l = 0, n = 0;
        while (values[n])
                n++;
        for (size_t i = 0; i < n; i++) {
                if (streq(values[i], s)) {
                        *ret = values[i];
                        return 1;
                }
                l += (size_t)snprintf(list + l, sizeof(list) - l, "%s%s%s", i ? ", " : "",
                                      i + 1 == n && n > 1 ? "or " : "", values[i]);
                if (l >= sizeof(list))
                        l = sizeof(list) - 1;
        }
        r = stripe_invalid(rp, NULL, param, "Invalid %s: must be one of %s", param, list);
        return r < 0 ? r : 0;
}

int stripe_arg_enum(TwinCall *c, TwinReply *rp, const char *key, const char *const *values,
                    const char **ret)
{
        return stripe_param_enum(rp, c->args, key, key, values, ret);
}

/* A three-letter ISO currency code, stored lower-case as Stripe does: as stripe_param_str. */
int stripe_param_currency(TwinReply *rp, const json_t *obj, const char *param, bool required,
                          const char **ret)
{
        const char *s;
        int r = stripe_param_str(rp, obj, "currency", param, required, &s);
        if (r <= 0 || !s) {
                *ret = NULL;
                return r;
        }
        static const char *const known[] = {"usd", "eur", "gbp", "cad", "aud", "jpy",
                                            "chf", "sek", "nok", "dkk", "nzd", "sgd",
                                            "hkd", "mxn", "brl", "inr", "pln", "czk"};
        for (size_t i = 0; i < ELEMENTSOF(known); i++)
                if (strcasecmp(known[i], s) == 0) {
                        *ret = known[i];
                        return 1;
                }
        r = stripe_invalid(rp, NULL, param, "Invalid currency: %s.", s);
        return r < 0 ? r : 0;
}

int stripe_arg_currency(TwinCall *c, TwinReply *rp, bool required, const char **ret)
{
        return stripe_param_currency(rp, c->args, "currency", required, ret);
}

/*
 * A nested parameter that must be an object (recurring, product_data, items[0]): *ret NULL
 * when absent; "Invalid object" for anything else. Its members are checked with
 * stripe_param_known.
 */
int stripe_param_object(TwinReply *rp, const json_t *obj, const char *key, const char *param,
                        json_t **ret)
{
        json_t *v = json_object_get(obj, key);
        *ret = NULL;
        if (!v || json_is_null(v))
                return 1;
        if (!json_is_object(v)) {
                int r = stripe_invalid(rp, NULL, param, "Invalid object");
                return r < 0 ? r : 0;
        }
        *ret = v;
        return 1;
}

/*
 * Refuses a member of the nested parameter obj (called param: "recurring", "items[0]") that
 * keys (NULL-terminated) does not name, as Stripe refuses an unknown top-level one: 400
 * parameter_unknown "Received unknown parameter: recurring[foo]". The pipeline checks the
 * top level against surface.json; nested members are the action's to check. 1, 0, -ENOMEM.
 */
int stripe_param_known(TwinReply *rp, const json_t *obj, const char *param, const char *const *keys)
{
        const char *k;
        json_t *v;
        json_object_foreach ((json_t *)obj, k, v) {
                bool known = false;
                for (size_t i = 0; keys[i] && !known; i++)
                        known = streq(k, keys[i]);
                if (known)
                        continue;
                char name[160];
                snprintf(name, sizeof(name), "%s[%.80s]", param, k);
                int r = stripe_invalid(rp, "parameter_unknown", name,
                                       "Received unknown parameter: %s", name);
                return r < 0 ? r : 0;
        }
        return 1;
}

/*
 * Applies the metadata member of obj (param names it in refusals: "metadata",
 * "product_data[metadata]") to row's metadata as Stripe does
 * (https://docs.stripe.com/api/metadata): each key set to its string value, a key set to ""
 * removed, metadata="" clearing them all. 1, 0 with a 400 in rp (a value that is not a
 * string, more than 50 keys, a key over 40 or a value over 500 characters), -ENOMEM.
 */
int stripe_param_metadata(TwinReply *rp, const json_t *obj, const char *param, json_t *row)
{
        json_t *m = json_object_get(obj, "metadata");
        json_t *cur = json_object_get(row, "metadata");
        int r;
        if (!m || json_is_null(m))
                return 1;
        if (!json_is_object(cur)) {
                cur = json_object();
                if (json_object_set_new(row, "metadata", cur) < 0)
                        return -ENOMEM;
        }
        if (json_is_string(m) && json_string_length(m) == 0)
                return json_object_clear(cur) < 0 ? -ENOMEM : 1;
        if (!json_is_object(m)) {
                r = stripe_invalid(rp, NULL, param, "Invalid object: %s must be a hash of strings",
                                   param);
                return r < 0 ? r : 0;
        }
        const char *k;
        json_t *v;
        json_object_foreach (m, k, v) {
                char name[160];
                snprintf(name, sizeof(name), "%s[%.60s]", param, k);
                if (json_is_integer(v) || json_is_real(v) || json_is_boolean(v)) {
                        /* MCP callers send typed JSON; Stripe stores strings */
                        _cleanup_free_ char *t = value_text(v);
                        if (!t || json_object_set_new(cur, k, json_string(t)) < 0)
                                return -ENOMEM;
                        continue;
                }
                if (!json_is_string(v) && !json_is_null(v)) {
                        r = stripe_invalid(rp, NULL, name,
                                           "Invalid value for %s: metadata values must be "
                                           "strings, not nested objects",
                                           name);
                        return r < 0 ? r : 0;
                }
                if (strlen(k) > 40 || json_string_length(v) > 500) {
                        r = stripe_invalid(rp, NULL, name,
                                           "Metadata keys can have up to 40 characters and values "
                                           "up to 500 characters.");
                        return r < 0 ? r : 0;
                }
                if (json_is_null(v) || json_string_length(v) == 0)
                        json_object_del(cur, k);
                else if (json_object_set(cur, k, v) < 0)
                        return -ENOMEM;
        }
        if (json_object_size(cur) > 50) {
                r = stripe_invalid(rp, NULL, param,
                                   "You can have up to 50 metadata keys (you had %zu).",
                                   json_object_size(cur));
                return r < 0 ? r : 0;
        }
        return 1;
}

/* stripe_param_metadata of the call's own metadata argument. */
int stripe_apply_metadata(TwinCall *c, TwinReply *rp, json_t *row)
{
        return stripe_param_metadata(rp, c->args, "metadata", row);
}

/*
 * Copies each string member of obj named in keys (NULL-terminated) onto row; "" sets null, as
 * Stripe unsets a field given an empty value. prefix names obj in refusals ("" for the
 * arguments themselves, "product_data" for a nested one). 1, 0 with a 400 in rp, -ENOMEM.
 */
int stripe_param_strings(TwinReply *rp, const json_t *obj, const char *prefix, json_t *row,
                         const char *const *keys)
{
        for (size_t i = 0; keys[i]; i++) {
                const char *s;
                char name[160];
                if (prefix[0])
                        snprintf(name, sizeof(name), "%s[%s]", prefix, keys[i]);
                else
                        snprintf(name, sizeof(name), "%s", keys[i]);
                int r = stripe_param_str(rp, obj, keys[i], name, false, &s);
                if (r <= 0)
                        return r;
                if (s && json_object_set_new(row, keys[i], s[0] ? json_string(s) : json_null()) < 0)
                        return -ENOMEM;
        }
        return 1;
}

int stripe_set_strings(TwinCall *c, TwinReply *rp, json_t *row, const char *const *keys)
{
        return stripe_param_strings(rp, c->args, "", row, keys);
}

/*
 * An amount of money as Stripe's messages and invoice line descriptions show it: "$12.34",
 * "€9.00", "£1.50", "¥500" (zero-decimal), else "12.34 CHF". Into buf (32 bytes).
 */
void stripe_money(const char *currency, int64_t amount, char buf[static 32])
{
        static const struct {
                const char *currency, *symbol;
        } symbols[] = {{"usd", "$"}, {"eur", "€"}, {"gbp", "£"}, {"jpy", "¥"}};
        const char *sym = NULL;
        for (size_t i = 0; i < ELEMENTSOF(symbols); i++)
                if (streq_ptr(currency, symbols[i].currency))
                        sym = symbols[i].symbol;
        const char *sign = amount < 0 ? "-" : "";
        long long a = llabs((long long)amount);
        if (streq_ptr(currency, "jpy"))
                snprintf(buf, 32, "%s¥%lld", sign, a);
        else if (sym)
                snprintf(buf, 32, "%s%s%lld.%02lld", sign, sym, a / 100, a % 100);
        else {
                char up[4] = "";
                for (int i = 0; currency && i < 3 && currency[i]; i++)
                        up[i] = (char)toupper((unsigned char)currency[i]);
                snprintf(buf, 32, "%s%lld.%02lld %s", sign, a / 100, a % 100, up);
        }
}

/* ------------------------------------------------------------------ expansion */

/* What a deleted object reads as everywhere: Stripe's stub {id, object, deleted: true}.
 * New reference, NULL on OOM. */
json_t *stripe_deleted_stub(const json_t *row)
{
        return json_pack("{s:s, s:s, s:b}", "id", json_get_str(row, "id"), "object",
                         json_get_str(row, "object"), "deleted", true);
}

/* The fields that hold an id Stripe expands into its object (null stays null). */
static bool expandable(const char *field)
{
        static const char *const fields[] = {
                "customer",       "payment_method", "payment_intent",      "latest_charge",
                "charge",         "source",         "balance_transaction", "default_payment_method",
                "default_price",  "product",        "subscription",        "invoice",
                "latest_invoice", "test_clock",     "default_source"};
        for (size_t i = 0; i < ELEMENTSOF(fields); i++)
                if (streq(field, fields[i]))
                        return true;
        return false;
}

/*
 * Expands one dotted path ("latest_charge.balance_transaction",
 * "invoice_settings.default_payment_method", "items.data.price.product") in obj: an id field
 * becomes a copy of that row; a plain object field may only be walked through, and a list's
 * "data" walks through each of its rows. 1 done, 0 when path names nothing expandable,
 * -ENOMEM.
 */
static int expand_path(TwinCall *c, json_t *obj, const char *path, int depth)
{
        const char *dot = strchr(path, '.');
        char field[64];
        size_t l = dot ? (size_t)(dot - path) : strlen(path);
        if (l == 0 || l >= sizeof(field) || depth > 4)
                return 0;
        memcpy(field, path, l);
        field[l] = 0;
        json_t *v = json_object_get(obj, field);
        if (!v)
                return 0;
        if (streq(field, "data") && json_is_array(v) && dot) {
                /* a list embedded in its parent (subscription items, invoice lines): every row */
                size_t i;
                json_t *x;
                json_array_foreach (v, i, x) {
                        int r = json_is_object(x) ? expand_path(c, x, dot + 1, depth + 1) : 0;
                        if (r <= 0)
                                return r;
                }
                return 1;
        }
        if (expandable(field)) {
                if (json_is_null(v))
                        return 1;
                if (json_is_string(v)) {
                        json_t *row = stripe_find_any(c->world, json_string_value(v));
                        if (!row)
                                return 1; /* an id the world does not hold stays an id */
                        json_t *copy = json_is_true(json_object_get(row, "deleted"))
                                               ? stripe_deleted_stub(row)
                                               : json_deep_copy(row);
                        if (!copy || json_object_set_new(obj, field, copy) < 0)
                                return -ENOMEM;
                        v = copy;
                }
                if (!dot)
                        return 1;
        } else if (!dot)
                return 0;
        return json_is_object(v) ? expand_path(c, v, dot + 1, depth + 1) : 0;
}

/*
 * Applies expand (https://docs.stripe.com/api/expanding_objects: an array of dotted paths,
 * or one path as a string) to obj (modified in place). 1 done; 0 with Stripe's 400 "This
 * property cannot be expanded (x)." in rp; -ENOMEM.
 */
int stripe_expand(TwinCall *c, TwinReply *rp, json_t *obj, json_t *expand)
{
        _cleanup_json_ json_t *one = NULL;
        if (!expand || json_is_null(expand) ||
            (json_is_string(expand) && json_string_length(expand) == 0))
                return 1;
        if (json_is_string(expand)) {
                one = json_pack("[O]", expand);
                if (!one)
                        return -ENOMEM;
                expand = one;
        }
        int r;
        if (!json_is_array(expand)) {
                r = stripe_invalid(rp, NULL, "expand",
                                   "Invalid array: expand must be an array of strings");
                return r < 0 ? r : 0;
        }
        size_t i;
        json_t *p;
        json_array_foreach (expand, i, p) {
                const char *path = json_string_value(p);
                r = path ? expand_path(c, obj, path, 0) : 0;
                if (r < 0)
                        return r;
                if (r == 0) {
                        _cleanup_free_ char *t = value_text(p);
                        r = stripe_invalid(rp, NULL, "expand",
                                           "This property cannot be expanded (%s).", t ? t : "?");
                        return r < 0 ? r : 0;
                }
        }
        return 1;
}

/* ------------------------------------------------------------------ lists */

typedef struct ListEntry {
        int64_t created;
        size_t idx;
} ListEntry;

/* Newest first; rows of one second in reverse creation order, as Stripe lists them. */
static int cmp_newest(const void *a, const void *b)
{
        const ListEntry *x = a, *y = b;
        if (x->created != y->created)
                return x->created < y->created ? 1 : -1;
        return x->idx < y->idx ? 1 : -1;
}

/*
 * The expand argument of a list or search answer: each "data.x" path becomes "x", to expand
 * in every row (a new array in *ret_paths); "total_count" sets *ret_total where the answer
 * has one (ret_total not NULL), anything else is Stripe's 400 "This property cannot be
 * expanded (x)." in rp. 1, 0 refused, -ENOMEM.
 */
int stripe_list_expansions(TwinCall *c, TwinReply *rp, bool *ret_total, json_t **ret_paths)
{
        _cleanup_json_ json_t *paths = json_array(), *one = NULL;
        if (!paths)
                return -ENOMEM;
        json_t *ex = json_object_get(c->args, "expand");
        if (json_is_string(ex) && json_string_length(ex) > 0) {
                if (!(one = json_pack("[O]", ex)))
                        return -ENOMEM;
                ex = one;
        }
        size_t i;
        json_t *p;
        json_array_foreach (ex, i, p) {
                const char *s = json_string_value(p);
                const char *rest = s ? startswith(s, "data.") : NULL;
                if (ret_total && streq_ptr(s, "total_count")) {
                        *ret_total = true;
                        continue;
                }
                if (!rest) {
                        int r = stripe_invalid(rp, NULL, "expand",
                                               "This property cannot be expanded (%s).",
                                               s ? s : "?");
                        return r < 0 ? r : 0;
                }
                if (json_array_append_new(paths, json_string(rest)) < 0)
                        return -ENOMEM;
        }
        *ret_paths = TAKE_PTR(paths);
        return 1;
}

/*
 * Answers a page of collection as Stripe's list object {object:"list", data, has_more, url}
 * (https://docs.stripe.com/api/pagination): the rows keep(c, row) accepts (all when NULL),
 * newest first, limit 1–100 (default 10), starting_after / ending_before an id of the list;
 * expand paths "data.x" apply to every row. 0 or -ENOMEM.
 */
int stripe_list(TwinCall *c, TwinReply *rp, const char *collection, const char *url,
                StripeFilter keep)
{
        int64_t limit = 10;
        int r;
        json_t *lv = json_object_get(c->args, "limit");
        if (lv && !json_is_null(lv) && twin_arg_int(c->args, "limit", 1, 100, &limit) < 0) {
                _cleanup_free_ char *t = value_text(lv);
                int64_t x;
                if (twin_arg_int(c->args, "limit", INT64_MIN, INT64_MAX, &x) < 0)
                        return stripe_invalid(rp, "parameter_invalid_integer", "limit",
                                              "Invalid integer: %s", t ? t : "?");
                return stripe_invalid(rp, NULL, "limit",
                                      "This value must be greater than or equal to 1 and less "
                                      "than or equal to 100 (it currently is %s).",
                                      t ? t : "?");
        }
        const char *after, *before;
        if ((r = stripe_arg_str(c, rp, "starting_after", false, &after)) <= 0 ||
            (r = stripe_arg_str(c, rp, "ending_before", false, &before)) <= 0)
                return r;
        if (after && before)
                return stripe_invalid(rp, NULL, "ending_before",
                                      "You may only specify one of these parameters: "
                                      "ending_before, starting_after.");

        json_t *rows = json_object_get(c->world, collection);
        size_t n = 0, total = json_array_size(rows);
        _cleanup_free_ ListEntry *e = calloc(total + 1, sizeof(ListEntry));
        if (!e)
                return -ENOMEM;
        for (size_t i = 0; i < total; i++) {
                json_t *row = json_array_get(rows, i);
                if (keep && !keep(c, row))
                        continue;
                e[n].created = json_integer_value(json_object_get(row, "created"));
                e[n++].idx = i;
        }
        qsort(e, n, sizeof(ListEntry), cmp_newest);

        const char *cursor = after ? after : before;
        size_t from = 0, to = n; /* the window [from, to) before the limit */
        if (cursor) {
                size_t at = n;
                for (size_t i = 0; i < n && at == n; i++)
                        if (streq_ptr(json_get_str(json_array_get(rows, e[i].idx), "id"), cursor))
                                at = i;
                if (at == n)
                        return stripe_missing(rp, collection, cursor,
                                              after ? "starting_after" : "ending_before");
                if (after)
                        from = at + 1;
                else
                        to = at;
        }
        bool has_more = to - from > (size_t)limit;
        if (has_more) {
                if (before)
                        from = to - (size_t)limit; /* the page just before the cursor */
                else
                        to = from + (size_t)limit;
        }

        /* "data.x" expands x in every row */
        _cleanup_json_ json_t *expand = NULL;
        if ((r = stripe_list_expansions(c, rp, NULL, &expand)) <= 0)
                return r;

        _cleanup_json_ json_t *data = json_array();
        if (!data)
                return -ENOMEM;
        for (size_t k = from; k < to; k++) {
                json_t *copy = json_deep_copy(json_array_get(rows, e[k].idx));
                if (!copy || json_array_append_new(data, copy) < 0)
                        return -ENOMEM;
                r = stripe_expand(c, rp, copy, expand);
                if (r <= 0)
                        return r;
        }
        return twin_reply_body(rp, 200,
                               json_pack("{s:s, s:O, s:b, s:s}", "object", "list", "data", data,
                                         "has_more", has_more, "url", url));
}

/* ------------------------------------------------------------------ the request pipeline */

/* The action's REST route (the first one naming tool), for an MCP call's endpoint. */
static const TwinRoute *route_of(const TwinSurface *s, const char *tool)
{
        for (size_t i = 0; s && i < s->n_routes; i++)
                if (streq(s->routes[i].tool, tool))
                        return &s->routes[i];
        return NULL;
}

/*
 * "METHOD /path" the call addresses, into buf: the HTTP request's, or over MCP the action's
 * route with {id} filled from the arguments, so failure injection sees both alike.
 */
static void endpoint_of(TwinCall *c, const char *tool, char *buf, size_t len)
{
        if (c->request) {
                snprintf(buf, len, "%s %s", c->request->method, c->request->path);
                return;
        }
        const TwinRoute *rt = route_of(twin_kind_surface(twin_kind(c->twin)), tool);
        if (!rt) {
                snprintf(buf, len, "POST /mcp/%s", tool);
                return;
        }
        const char *id = strempty(json_get_str(c->args, "id"));
        const char *at = strstr(rt->pattern, "{id}");
        if (at)
                snprintf(buf, len, "%s %.*s%s%s", rt->method, (int)(at - rt->pattern), rt->pattern,
                         id, at + 4);
        else
                snprintf(buf, len, "%s %s", rt->method, rt->pattern);
}

/* Whether a failure_injection rule's method and path name the endpoint "METHOD /path". */
static bool rule_matches(json_t *rule, const char *endpoint)
{
        const char *m = strempty(json_get_str(rule, "method"));
        const char *p = strempty(json_get_str(rule, "path"));
        const char *sp = strchr(endpoint, ' ');
        if (!sp)
                return false;
        if (!streq(m, "*") && (strlen(m) != (size_t)(sp - endpoint) ||
                               strncasecmp(m, endpoint, (size_t)(sp - endpoint)) != 0))
                return false;
        const char *path = sp + 1;
        size_t pl = strlen(p);
        if (pl > 0 && p[pl - 1] == '*')
                return strncmp(path, p, pl - 1) == 0;
        return streq(path, p);
}

/*
 * The injected answer of rule (the n-th call of endpoint) into rp: its status and body
 * (default: Stripe's 500 api_error), with Stripe-Should-Retry on a 5xx or 409 as Stripe's
 * SDKs read it. Whatever rp held before (an after_handler action's real answer, with its
 * headers) is replaced; its state_mutation and state_delta are kept. 0 or -ENOMEM.
 */
static int injected_reply(TwinReply *rp, json_t *rule, json_int_t n, const char *endpoint)
{
        json_int_t status = json_integer_value(json_object_get(rule, "status"));
        json_t *body = json_object_get(rule, "body");
        if (status < 100 || status > 599)
                status = 500;
        json_decref(rp->headers);
        rp->headers = NULL;
        free(rp->error);
        rp->error = NULL;
        if (json_is_object(body)) {
                twin_reply_json(rp, (int)status, json_deep_copy(body));
                if (!rp->body)
                        return -ENOMEM;
        } else {
                int r = stripe_fail(rp, (int)status,
                                    status >= 500 ? "api_error" : "invalid_request_error", NULL,
                                    NULL,
                                    "An unknown error occurred (injected by the task's seed: "
                                    "attempt %lld of %s).",
                                    (long long)n, endpoint);
                if (r < 0)
                        return r;
        }
        /* what Stripe's SDKs read to decide on a retry */
        if (status >= 500 || status == 409) {
                rp->headers = json_pack("{s:s}", "Stripe-Should-Retry", "true");
                if (!rp->headers)
                        return -ENOMEM;
        }
        return 0;
}

/*
 * An injected failure the action runs under (hosted Pome's after_handler mode): the rule
 * and which attempt it fired on. rule NULL: none.
 */
typedef struct StripeOverride {
        json_t *rule; /* a reference of its own: the world may be replaced meanwhile */
        json_int_t attempt;
} StripeOverride;

static void override_done(StripeOverride *o)
{
        json_decref(o->rule);
        o->rule = NULL;
}

/*
 * Failure injection (hosted Pome's FDRS-339, packages/sdk/src/failure-injection.ts): when
 * a rule names endpoint, counts this attempt (in the world, so the count survives
 * snapshots); when a rule names this attempt, by its mode:
 * - before_handler: its status and body answer in rp and nothing else changes (1);
 * - after_handler: the action still runs and keeps its change; *ret_override says which rule
 *   replaces the answer the caller gets (0), see stripe_serve.
 * 0 when no rule fires, -ENOMEM.
 */
static int inject(TwinCall *c, TwinReply *rp, const char *endpoint, StripeOverride *ret_override)
{
        json_t *rules = json_object_get(c->world, "failure_injection");
        size_t i;
        json_t *rule;
        bool named = false;
        *ret_override = (StripeOverride){};
        json_array_foreach (rules, i, rule) {
                named = named || rule_matches(rule, endpoint);
        }
        if (!named)
                return 0;
        json_t *attempts = json_object_get(c->world, "attempts");
        if (!json_is_object(attempts)) {
                attempts = json_object();
                if (json_object_set_new(c->world, "attempts", attempts) < 0)
                        return -ENOMEM;
        }
        json_int_t n = json_integer_value(json_object_get(attempts, endpoint)) + 1;
        if (json_object_set_new(attempts, endpoint, json_integer(n)) < 0)
                return -ENOMEM;
        json_array_foreach (rules, i, rule) {
                if (!rule_matches(rule, endpoint) ||
                    json_integer_value(json_object_get(rule, "attempt")) != n)
                        continue;
                if (streq_ptr(json_get_str(rule, "mode"), "after_handler")) {
                        *ret_override = (StripeOverride){.rule = json_incref(rule), .attempt = n};
                        return 0;
                }
                int r = injected_reply(rp, rule, n, endpoint);
                return r < 0 ? r : 1;
        }
        return 0;
}

#define STRIPE_STRING_MAX 5000 /* characters of a string Stripe's schema gives no other limit */

/* Characters (code points) of a valid UTF-8 string. */
static size_t utf8_chars(const char *s, size_t n)
{
        size_t chars = 0;
        for (size_t i = 0; i < n; chars++) {
                size_t l = utf8_char_len(s + i, n - i);
                i += l ? l : 1;
        }
        return chars;
}

/*
 * Refuses a string longer than max characters at param, or any string nested in v over
 * STRIPE_STRING_MAX (address[line1]…), as api.stripe.com does: 400 "Invalid string:
 * abcd...wxyz; must be at most 5000 characters" (its first and last four characters).
 * Metadata has its own limits (stripe_apply_metadata). 1, 0 refused, -ENOMEM.
 */
static int check_length(TwinReply *rp, const char *param, const json_t *v, size_t max, int depth)
{
        if (json_is_string(v)) {
                const char *str = json_string_value(v);
                size_t n = json_string_length(v);
                if (utf8_chars(str, n) <= max)
                        return 1;
                size_t head = 0, tail = n;
                for (int i = 0; i < 4; i++) {
                        head += utf8_char_len(str + head, n - head) ?: 1;
                        do
                                tail--;
                        while (tail > head && ((unsigned char)str[tail] & 0xc0) == 0x80);
                }
                int r = stripe_invalid(rp, NULL, param,
                                       "Invalid string: %.*s...%s; must be at most %zu characters",
                                       (int)head, str, str + tail, max);
                return r < 0 ? r : 0;
        }
        if (depth > 8 || (!json_is_object(v) && !json_is_array(v)))
                return 1;
        const char *k;
        json_t *x;
        size_t i;
        char sub[160];
        if (json_is_array(v)) {
                json_array_foreach ((json_t *)v, i, x) {
                        snprintf(sub, sizeof(sub), "%s[%zu]", param, i);
                        int r = check_length(rp, sub, x, STRIPE_STRING_MAX, depth + 1);
                        if (r <= 0)
                                return r;
                }
                return 1;
        }
        json_object_foreach ((json_t *)v, k, x) {
                snprintf(sub, sizeof(sub), "%s[%.60s]", param, k);
                int r = check_length(rp, sub, x, STRIPE_STRING_MAX, depth + 1);
                if (r <= 0)
                        return r;
        }
        return 1;
}

/*
 * Refuses an argument the action's input schema (surface.json) does not name, as Stripe
 * does: 400 parameter_unknown "Received unknown parameter: foo" (expand is known to all),
 * and a string past its schema's maxLength (default 5000 characters, check_length).
 * 1 all good, 0 refused (rp filled), -ENOMEM.
 */
static int check_params(TwinCall *c, TwinReply *rp, const char *tool)
{
        const TwinKind *kind = twin_kind(c->twin);
        const TwinAction *a = twin_kind_action(kind, tool);
        const json_t *schema = a ? twin_action_input_schema(kind, a) : NULL;
        if (a && !schema)
                return -ENOMEM;
        json_t *props = json_object_get(schema, "properties");
        const char *k;
        json_t *v;
        json_object_foreach (c->args, k, v) {
                if (streq(k, "expand") || json_object_get(props, k))
                        continue;
                int r = stripe_invalid(rp, "parameter_unknown", k, "Received unknown parameter: %s",
                                       k);
                return r < 0 ? r : 0;
        }
        json_object_foreach (c->args, k, v) {
                if (streq(k, "metadata"))
                        continue;
                json_int_t max =
                        json_integer_value(json_object_get(json_object_get(props, k), "maxLength"));
                int r = check_length(rp, k, v, max > 0 ? (size_t)max : STRIPE_STRING_MAX, 0);
                if (r <= 0)
                        return r;
        }
        return 1;
}

/* The request's Idempotency-Key (POST only, https://docs.stripe.com/api/idempotent_requests). */
static const char *idempotency_key(TwinCall *c)
{
        if (!c->request || !streq_ptr(c->request->method, "POST"))
                return NULL;
        const char *k = json_get_str(c->request->headers, "idempotency-key");
        return k && k[0] ? k : NULL;
}

/*
 * Replays or refuses a reused Idempotency-Key: same endpoint and parameters → the first
 * reply again (status, body), marked idempotency_dedupe and with Idempotent-Replayed: true,
 * the world untouched; another endpoint or other parameters → 400 idempotency_error. 1
 * answered, 0 a new key, -ENOMEM.
 */
static int idempotency_replay(TwinCall *c, TwinReply *rp, const char *key, const char *endpoint)
{
        json_t *saved = json_object_get(json_object_get(c->world, "idempotency_keys"), key);
        if (!saved)
                return 0;
        const char *was = strempty(json_get_str(saved, "endpoint"));
        int r;
        if (!streq(was, endpoint))
                r = stripe_fail(rp, 400, "idempotency_error", NULL, NULL,
                                "Keys for idempotent requests can only be used for the same "
                                "endpoint they were first used for ('%s' vs '%s'). Try using a "
                                "key other than '%s' if you meant to execute a different "
                                "request.",
                                was, endpoint, key);
        else if (!json_equal(json_object_get(saved, "params"), c->args))
                r = stripe_fail(rp, 400, "idempotency_error", NULL, NULL,
                                "Keys for idempotent requests can only be used with the same "
                                "parameters they were first used with. Try using a key other "
                                "than '%s' if you meant to execute a different request.",
                                key);
        else {
                twin_reply_json(rp, (int)json_integer_value(json_object_get(saved, "status")),
                                json_deep_copy(json_object_get(saved, "body")));
                rp->headers = json_pack("{s:s}", "Idempotent-Replayed", "true");
                if (!rp->body || !rp->headers)
                        return -ENOMEM;
                rp->idempotency_dedupe = true;
                return 1;
        }
        return r < 0 ? r : 1;
}

/*
 * Keeps the reply to a new Idempotency-Key for replays. As Stripe, only a request that ran
 * is kept: a success, or a card decline (whose charge and events exist); a refused request
 * (400, 404) may be retried with the same key. 0 or -ENOMEM.
 */
static int idempotency_save(TwinCall *c, TwinReply *rp, const char *key, const char *endpoint)
{
        if (!(rp->status < 400 || rp->status == 402) || !rp->body)
                return 0;
        json_t *keys = json_object_get(c->world, "idempotency_keys");
        if (!json_is_object(keys)) {
                keys = json_object();
                if (json_object_set_new(c->world, "idempotency_keys", keys) < 0)
                        return -ENOMEM;
        }
        json_t *rec = json_pack("{s:s, s:o, s:i, s:o, s:I}", "endpoint", endpoint, "params",
                                json_deep_copy(c->args), "status", rp->status, "body",
                                json_deep_copy(rp->body), "created", (json_int_t)c->now);
        return !rec || json_object_set_new(keys, key, rec) < 0 ? -ENOMEM : 0;
}

/*
 * Every action's pipeline: failure injection (before_handler: the seed's attempt-th call
 * answers its status/body and changes nothing), Idempotency-Key replay or refusal,
 * unknown-parameter refusal, the action, keeping its reply under the key, and last an
 * after_handler injection replacing what the caller gets. That last one models "the server
 * did it but the reply was lost" (hosted Pome's FDRS-339 and F-1138,
 * packages/twin-stripe/src/idempotency.ts): the change stays and is on the tape
 * (state_mutation, state_delta), and the key keeps the action's real reply — as Stripe
 * writes its idempotency record server-side whatever reached the client — so a retry under
 * the same key replays the real result instead of doing it again. A replayed or refused key
 * runs no action and gets no override. 0 or -ENOMEM.
 */
static int stripe_serve(TwinCall *c, TwinReply *rp, const char *tool, TwinActionFn fn)
{
        char endpoint[512];
        _cleanup_(override_done) StripeOverride over = {};
        endpoint_of(c, tool, endpoint, sizeof(endpoint));
        int r = inject(c, rp, endpoint, &over);
        if (r != 0)
                return r < 0 ? r : 0;
        const char *key = idempotency_key(c);
        if (key) {
                r = idempotency_replay(c, rp, key, endpoint);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        r = check_params(c, rp, tool);
        if (r < 0)
                return r;
        if (r > 0) {
                /* expand is applied to the reply, after the change: an expansion Stripe
                 * refuses (a 400) must not leave the change behind, so a call that asks for
                 * one can be undone */
                _cleanup_json_ json_t *before =
                        json_object_get(c->args, "expand") ? json_deep_copy(c->world) : NULL;
                r = fn(c, rp);
                if (r < 0)
                        return r;
                if (before && rp->status >= 400 && rp->status != 402) {
                        twin_world_replace(c->twin, TAKE_PTR(before));
                        c->world = twin_world(c->twin);
                        rp->state_mutation = false;
                        json_decref(rp->state_delta);
                        rp->state_delta = NULL;
                }
                if (key && (r = idempotency_save(c, rp, key, endpoint)) < 0)
                        return r;
        }
        return over.rule ? injected_reply(rp, over.rule, over.attempt, endpoint) : 0;
}

/* ------------------------------------------------------------------ rows */

/* A customer (https://docs.stripe.com/api/customers/object) with Stripe's defaults. */
json_t *stripe_customer_new(const char *id, int64_t created)
{
        return json_pack("{s:s, s:s, s:n, s:I, s:I, s:n, s:n, s:b, s:n, s:n, s:n, s:s, s:{s:n, "
                         "s:n, s:n, s:n}, s:b, s:{}, s:n, s:I, s:n, s:[], s:n, s:s, s:n}",
                         "id", id, "object", "customer", "address", "balance", (json_int_t)0,
                         "created", (json_int_t)created, "currency", "default_source", "delinquent",
                         false, "description", "discount", "email", "invoice_prefix", "POME",
                         "invoice_settings", "custom_fields", "default_payment_method", "footer",
                         "rendering_options", "livemode", false, "metadata", "name",
                         "next_invoice_sequence", (json_int_t)1, "phone", "preferred_locales",
                         "shipping", "tax_exempt", "none", "test_clock");
}

/* A card PaymentMethod (https://docs.stripe.com/api/payment_methods/object). */
json_t *stripe_pm_new(const char *id, int64_t created, const char *brand, const char *last4)
{
        char fp[17];
        unsigned h = 2166136261u;
        for (const char *p = last4; *p; p++)
                h = (h ^ (unsigned char)*p) * 16777619u;
        for (const char *p = brand; *p; p++)
                h = (h ^ (unsigned char)*p) * 16777619u;
        snprintf(fp, sizeof(fp), "Pm%08x%04x", h, h >> 16 & 0xffff);
        return json_pack(
                "{s:s, s:s, s:s, s:{s:{s:n, s:n, s:n, s:n, s:n, s:n}, s:n, s:n, s:n}, "
                "s:{s:s, s:{s:n, s:n, s:s}, s:s, s:s, s:i, s:i, s:s, s:s, s:n, s:s, "
                "s:{s:[s], s:n}, s:{s:b}, s:n}, s:I, s:n, s:b, s:{}, s:s}",
                "id", id, "object", "payment_method", "allow_redisplay", "unspecified",
                "billing_details", "address", "city", "country", "line1", "line2", "postal_code",
                "state", "email", "name", "phone", "card", "brand", brand, "checks",
                "address_line1_check", "address_postal_code_check", "cvc_check", "pass", "country",
                "US", "display_brand", brand, "exp_month", 12, "exp_year", 2034, "fingerprint", fp,
                "funding", "credit", "generated_from", "last4", last4, "networks", "available",
                brand, "preferred", "three_d_secure_usage", "supported", true, "wallet", "created",
                (json_int_t)created, "customer", "livemode", false, "metadata", "type", "card");
}

/* o (taken) with each of keys set to null: the members of a Stripe object that are always
 * present and that nothing in the twin sets (Connect's, Radar's, transfers'). NULL on OOM. */
static json_t *with_nulls(json_t *o, const char *const *keys, size_t n)
{
        for (size_t i = 0; o && i < n; i++)
                if (json_object_set_new(o, keys[i], json_null()) < 0) {
                        json_decref(o);
                        return NULL;
                }
        return o;
}

/* A PaymentIntent (https://docs.stripe.com/api/payment_intents/object), status
 * requires_payment_method. */
json_t *stripe_pi_new(const char *id, int64_t created, int64_t amount, const char *currency)
{
        char secret[96];
        snprintf(secret, sizeof(secret), "%s_secret_pome%lld", id, (long long)created);
        static const char *const nulls[] = {"application_fee_amount",
                                            "payment_method_configuration_details",
                                            "review",
                                            "source",
                                            "statement_descriptor_suffix",
                                            "transfer_group"};
        return with_nulls(
                json_pack(
                        "{s:s, s:s, s:I, s:i, s:i, s:n, s:{s:b, s:s}, s:n, s:n, s:s, s:s, s:s, "
                        "s:I, s:s, s:n, s:n, s:n, s:n, s:n, s:b, s:{}, s:n, s:n, s:n, s:{}, s:[s], "
                        "s:n, s:n, s:n, s:n, s:n, s:n, s:s}",
                        "id", id, "object", "payment_intent", "amount", (json_int_t)amount,
                        "amount_capturable", 0, "amount_received", 0, "application",
                        "automatic_payment_methods", "enabled", true, "allow_redirects", "never",
                        "canceled_at", "cancellation_reason", "capture_method", "automatic",
                        "client_secret", secret, "confirmation_method", "automatic", "created",
                        (json_int_t)created, "currency", currency, "customer", "description",
                        "invoice", "last_payment_error", "latest_charge", "livemode", false,
                        "metadata", "next_action", "on_behalf_of", "payment_method",
                        "payment_method_options", "payment_method_types", "card", "processing",
                        "receipt_email", "setup_future_usage", "shipping", "statement_descriptor",
                        "transfer_data", "status", "requires_payment_method"),
                nulls, ELEMENTSOF(nulls));
}

/* A Charge (https://docs.stripe.com/api/charges/object), status succeeded until told. */
json_t *stripe_charge_new(const char *id, int64_t created, int64_t amount, const char *currency)
{
        static const char *const nulls[] = {"application",
                                            "application_fee",
                                            "application_fee_amount",
                                            "calculated_statement_descriptor",
                                            "failure_balance_transaction",
                                            "on_behalf_of",
                                            "receipt_number",
                                            "review",
                                            "shipping",
                                            "source",
                                            "source_transfer",
                                            "statement_descriptor_suffix",
                                            "transfer_data",
                                            "transfer_group"};
        return with_nulls(
                json_pack("{s:s, s:s, s:I, s:I, s:i, s:n, s:{s:{s:n, s:n, s:n, s:n, s:n, s:n}, "
                          "s:n, s:n, "
                          "s:n}, s:b, s:I, s:s, s:n, s:n, s:b, s:n, s:n, s:n, s:b, s:{}, s:n, s:b, "
                          "s:n, "
                          "s:n, s:n, s:n, s:n, s:b, s:n, s:s, s:{}}",
                          "id", id, "object", "charge", "amount", (json_int_t)amount,
                          "amount_captured", (json_int_t)amount, "amount_refunded", 0,
                          "balance_transaction", "billing_details", "address", "city", "country",
                          "line1", "line2", "postal_code", "state", "email", "name", "phone",
                          "captured", true, "created", (json_int_t)created, "currency", currency,
                          "customer", "description", "disputed", false, "failure_code",
                          "failure_message", "invoice", "livemode", false, "metadata", "outcome",
                          "paid", true, "payment_intent", "payment_method",
                          "payment_method_details", "receipt_email", "receipt_url", "refunded",
                          false, "statement_descriptor", "status", "succeeded", "fraud_details"),
                nulls, ELEMENTSOF(nulls));
}

/* A Refund (https://docs.stripe.com/api/refunds/object), status succeeded. */
json_t *stripe_refund_new(const char *id, int64_t created, int64_t amount, const char *currency)
{
        return json_pack("{s:s, s:s, s:I, s:n, s:n, s:I, s:s, s:n, s:{}, s:n, s:n, s:n, s:s, s:n, "
                         "s:n}",
                         "id", id, "object", "refund", "amount", (json_int_t)amount,
                         "balance_transaction", "charge", "created", (json_int_t)created,
                         "currency", currency, "description", "metadata", "payment_intent",
                         "reason", "receipt_number", "status", "succeeded",
                         "source_transfer_reversal", "transfer_reversal");
}

/* ------------------------------------------------------------------ seed */

/* hosted Pome's seed spellings of references → Stripe's field names */
static const char *const seed_aliases[][2] = {
        {"customer_id", "customer"},
        {"payment_method_id", "payment_method"},
        {"payment_intent_id", "payment_intent"},
        {"latest_charge_id", "latest_charge"},
        {"charge_id", "charge"},
        {"balance_transaction_id", "balance_transaction"},
        {"source_id", "source"},
        {"product_id", "product"},
        {"price_id", "price"},
        {"default_price_id", "default_price"},
        {"subscription_id", "subscription"},
        {"invoice_id", "invoice"},
        {"latest_invoice_id", "latest_invoice"},
        {"default_payment_method_id", "default_payment_method"},
};

/* members a seed row may carry that are not world state (provenance, hosted bookkeeping) */
static const char *const seed_ignored[] = {"object", "account_id", "updated", "captured_at",
                                           "livemode"};

/* members holding an integer */
static const char *const seed_integers[] = {"created",
                                            "amount",
                                            "amount_captured",
                                            "amount_refunded",
                                            "amount_received",
                                            "amount_capturable",
                                            "fee",
                                            "net",
                                            "available_on",
                                            "canceled_at",
                                            "balance",
                                            "unit_amount",
                                            "current_period_start",
                                            "current_period_end",
                                            "billing_cycle_anchor",
                                            "start_date",
                                            "trial_start",
                                            "trial_end",
                                            "ended_at",
                                            "cancel_at",
                                            "period_start",
                                            "period_end",
                                            "amount_due",
                                            "amount_paid",
                                            "amount_remaining",
                                            "subtotal",
                                            "total",
                                            "quantity",
                                            "attempt_count"};

typedef struct SeedEntity {
        const char *key;    /* seed member and world collection */
        const char *what;   /* for messages: "customer" */
        const char *prefix; /* id prefix with its '_' */
        const char *const *fields;
        size_t n_fields;
} SeedEntity;

#define FIELDS(...)                         \
        (const char *const[]){__VA_ARGS__}, \
                sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *)

#define COMMON "id", "object", "created", "updated", "account_id", "livemode", "metadata"

/* In load order: a row may name rows of the entities before it (prices their products,
 * subscriptions their prices) when the billing pass (seed_billing) completes them. */
static const SeedEntity seed_entities[] = {
        {"customers", "customer", "cus_",
         FIELDS(COMMON, "email", "name", "description", "phone", "address", "shipping", "balance",
                "currency", "deleted", "invoice_settings", "invoice_prefix", "preferred_locales",
                "tax_exempt", "delinquent")},
        {"payment_methods", "payment method", "pm_",
         FIELDS(COMMON, "type", "card", "billing_details", "customer", "customer_id",
                "allow_redisplay")},
        {"products", "product", "prod_",
         FIELDS(COMMON, "name", "active", "description", "default_price", "default_price_id",
                "images", "shippable", "statement_descriptor", "unit_label", "url")},
        {"prices", "price", "price_",
         FIELDS(COMMON, "product", "product_id", "currency", "unit_amount", "recurring", "type",
                "active", "nickname", "lookup_key", "tax_behavior")},
        {"subscriptions", "subscription", "sub_",
         FIELDS(COMMON, "customer", "customer_id", "status", "items", "price", "price_id",
                "quantity", "default_payment_method", "default_payment_method_id", "latest_invoice",
                "latest_invoice_id", "current_period_start", "current_period_end",
                "billing_cycle_anchor", "start_date", "cancel_at_period_end", "cancel_at",
                "canceled_at", "ended_at", "trial_start", "trial_end", "description")},
        {"invoices", "invoice", "in_",
         FIELDS(COMMON, "customer", "customer_id", "subscription", "subscription_id", "status",
                "currency", "lines", "amount_due", "amount_paid", "amount_remaining",
                "payment_intent", "payment_intent_id", "charge", "charge_id", "billing_reason",
                "number", "period_start", "period_end", "description", "attempt_count")},
        {"payment_intents", "payment intent", "pi_",
         FIELDS(COMMON, "amount", "currency", "status", "customer", "customer_id", "payment_method",
                "payment_method_id", "latest_charge", "latest_charge_id", "client_secret",
                "capture_method", "confirmation_method", "payment_method_types", "description",
                "last_payment_error", "canceled_at", "cancellation_reason", "amount_received",
                "amount_capturable", "receipt_email", "setup_future_usage", "statement_descriptor",
                "next_action", "shipping", "captured_at", "invoice", "invoice_id")},
        {"charges", "charge", "ch_",
         FIELDS(COMMON, "amount", "amount_captured", "amount_refunded", "currency", "status",
                "captured", "refunded", "paid", "customer", "customer_id", "payment_intent",
                "payment_intent_id", "payment_method", "payment_method_id", "balance_transaction",
                "balance_transaction_id", "description", "failure_code", "failure_message",
                "outcome", "payment_method_details", "receipt_email", "receipt_url",
                "billing_details", "disputed", "statement_descriptor", "invoice", "invoice_id")},
        {"refunds", "refund", "re_",
         FIELDS(COMMON, "amount", "currency", "status", "charge", "charge_id", "payment_intent",
                "payment_intent_id", "reason", "balance_transaction", "balance_transaction_id",
                "description", "receipt_number")},
        {"balance_transactions", "balance transaction", "txn_",
         FIELDS(COMMON, "amount", "currency", "fee", "net", "type", "source", "source_id", "status",
                "available_on", "description", "reporting_category", "fee_details",
                "exchange_rate")},
};

static bool in_list(const char *s, const char *const *list, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (streq(s, list[i]))
                        return true;
        return false;
}

/* The default row of an entity, before the seed's members are laid over it. */
static json_t *seed_default(const SeedEntity *e, const char *id, int64_t created, json_t *v)
{
        json_int_t amount = json_integer_value(json_object_get(v, "amount"));
        const char *currency = json_get_str(v, "currency") ?: "usd";
        if (streq(e->key, "customers"))
                return stripe_customer_new(id, created);
        if (streq(e->key, "payment_methods")) {
                json_t *card = json_object_get(v, "card");
                return stripe_pm_new(id, created, json_get_str(card, "brand") ?: "visa",
                                     json_get_str(card, "last4") ?: "4242");
        }
        if (streq(e->key, "payment_intents"))
                return stripe_pi_new(id, created, amount, currency);
        if (streq(e->key, "charges"))
                return stripe_charge_new(id, created, amount, currency);
        if (streq(e->key, "refunds"))
                return stripe_refund_new(id, created, amount, currency);
        if (streq(e->key, "products"))
                return stripe_product_new(id, created, json_get_str(v, "name") ?: "");
        if (streq(e->key, "prices"))
                return stripe_price_new(id, created, currency,
                                        json_integer_value(json_object_get(v, "unit_amount")));
        if (streq(e->key, "subscriptions") || streq(e->key, "invoices"))
                /* completed by seed_billing, which knows the rows they name */
                return json_pack("{s:s, s:s, s:I, s:{}}", "id", id, "object",
                                 streq(e->key, "invoices") ? "invoice" : "subscription", "created",
                                 (json_int_t)created, "metadata");
        return json_pack("{s:s, s:s, s:I, s:I, s:I, s:s, s:n, s:I, s:[], s:I, s:s, s:n, s:s, "
                         "s:s, s:n}",
                         "id", id, "object", "balance_transaction", "amount", amount,
                         "available_on", (json_int_t)created, "created", (json_int_t)created,
                         "currency", currency, "description", "fee", (json_int_t)0, "fee_details",
                         "net", amount, "reporting_category", "charge", "source", "status",
                         "available", "type", "charge", "exchange_rate");
}

/* The statuses Stripe gives each object (its API reference's enums), "" ends a list. */
static const char *const seed_statuses[][10] = {
        {"payment_intents", "requires_payment_method", "requires_confirmation", "requires_action",
         "processing", "requires_capture", "canceled", "succeeded", ""},
        {"charges", "succeeded", "pending", "failed", ""},
        {"refunds", "succeeded", "pending", "failed", "canceled", "requires_action", ""},
        {"balance_transactions", "available", "pending", ""},
        {"subscriptions", "incomplete", "incomplete_expired", "trialing", "active", "past_due",
         "canceled", "unpaid", "paused", ""},
        {"invoices", "draft", "open", "paid", "uncollectible", "void", ""},
};

/* 0 when the row's status (if any) is one Stripe gives entity e, else -EINVAL in s->err. */
static int seed_status(TwinSeed *s, const SeedEntity *e, json_t *v, const char *path)
{
        json_t *st = json_object_get(v, "status");
        if (!st)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(seed_statuses); i++) {
                if (!streq(seed_statuses[i][0], e->key))
                        continue;
                char list[256] = "";
                size_t l = 0;
                for (size_t k = 1; seed_statuses[i][k][0]; k++) {
                        if (streq_ptr(json_string_value(st), seed_statuses[i][k]))
                                return 0;
                        l += (size_t)snprintf(list + l, sizeof(list) - l, "%s%s", k > 1 ? ", " : "",
                                              seed_statuses[i][k]);
                }
                return twin_seed_error(s->err, s->errlen, "%s.status: must be one of %s", path,
                                       list);
        }
        return twin_seed_error(s->err, s->errlen, "%s.status: unknown key (a %s has no status)",
                               path, e->what);
}

/* One seeded row of entity e at path: validated, normalised, appended to the world. */
static int seed_row(TwinSeed *s, const SeedEntity *e, json_t *v, const char *path)
{
        int r;
        if (!json_is_object(v))
                return twin_seed_error(s->err, s->errlen, "%s: must be an object", path);
        if ((r = twin_seed_known(s, v, path, e->what, e->fields, e->n_fields)) < 0 ||
            (r = seed_status(s, e, v, path)) < 0)
                return r;
        const char *id;
        char gen[40];
        if ((r = twin_seed_str(s, v, "id", path, NULL, TWIN_NULL_ABSENT, &id)) < 0)
                return r;
        if (id && (!startswith(id, e->prefix) || strlen(id) > 255 ||
                   strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") !=
                           strlen(id)))
                return twin_seed_error(s->err, s->errlen,
                                       "%s.id: must look like \"%sXXXXXXXX\" (letters, digits, "
                                       "'_')",
                                       path, e->prefix);
        if (id && stripe_find_any(s->world, id))
                return twin_seed_error(s->err, s->errlen, "%s.id: duplicate id \"%s\"", path, id);
        if (!id) {
                char prefix[8];
                snprintf(prefix, sizeof(prefix), "%.*s", (int)strlen(e->prefix) - 1, e->prefix);
                if ((r = stripe_new_id(s->world, prefix, gen)) < 0)
                        return r;
                id = gen;
        }
        const char *k;
        json_t *x;
        json_object_foreach (v, k, x) {
                if (in_list(k, seed_integers, ELEMENTSOF(seed_integers)) && !json_is_integer(x) &&
                    !json_is_null(x))
                        return twin_seed_error(s->err, s->errlen, "%s.%s: must be an integer", path,
                                               k);
                if (streq(k, "metadata") && !json_is_object(x) && !json_is_null(x))
                        return twin_seed_error(s->err, s->errlen, "%s.metadata: must be an object",
                                               path);
                if (streq(k, "currency") && (!json_is_string(x) || json_string_length(x) != 3))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.currency: must be a three-letter ISO code",
                                               path);
        }
        json_t *cv = json_object_get(v, "created");
        int64_t created = json_is_integer(cv) ? json_integer_value(cv) : SEED_CREATED;
        _cleanup_json_ json_t *row = seed_default(e, id, created, v);
        if (!row)
                return -ENOMEM;
        json_object_foreach (v, k, x) {
                const char *field = k;
                if (in_list(k, seed_ignored, ELEMENTSOF(seed_ignored)) || streq(k, "id"))
                        continue;
                for (size_t i = 0; i < ELEMENTSOF(seed_aliases); i++)
                        if (streq(k, seed_aliases[i][0]))
                                field = seed_aliases[i][1];
                /* the world owns its rows: nothing is shared with the seed, which stays as
                 * it was for /admin/reset */
                _cleanup_json_ json_t *own = json_deep_copy(x);
                if (!own)
                        return -ENOMEM;
                json_t *def = json_object_get(row, field);
                if (json_is_object(own) && json_is_object(def) &&
                    (streq(field, "card") || streq(field, "billing_details") ||
                     streq(field, "invoice_settings"))) {
                        /* a partial object keeps the defaults it does not name */
                        if (json_object_update(def, own) < 0)
                                return -ENOMEM;
                        continue;
                }
                if (streq(field, "currency")) {
                        char lc[4];
                        for (int i = 0; i < 3; i++)
                                lc[i] = (char)tolower((unsigned char)json_string_value(x)[i]);
                        lc[3] = 0;
                        if (json_object_set_new(row, field, json_string(lc)) < 0)
                                return -ENOMEM;
                        continue;
                }
                if (json_object_set(row, field, own) < 0)
                        return -ENOMEM;
        }
        return stripe_row_add(s->world, e->key, TAKE_PTR(row));
}

/* ------------------------------------------------------------------ seed: billing rows */

/* A seeded price's recurring and type, as the API makes them (prices.c). */
static int seed_price(TwinSeed *s, json_t *price, const json_t *given, size_t i)
{
        static const char *const intervals[] = {"day", "week", "month", "year"};
        char p[64];
        snprintf(p, sizeof(p), "prices[%zu]", i);
        if (!json_is_integer(json_object_get(price, "unit_amount")) ||
            json_integer_value(json_object_get(price, "unit_amount")) < 0)
                return twin_seed_error(s->err, s->errlen,
                                       "%s.unit_amount: a price needs its amount (an integer in "
                                       "the currency's smallest unit)",
                                       p);
        if (!json_is_string(json_object_get(price, "product")))
                return twin_seed_error(s->err, s->errlen,
                                       "%s.product: a price needs its product (a seeded prod_…)",
                                       p);
        json_t *rec = json_object_get(price, "recurring");
        const char *type = "one_time";
        if (rec && !json_is_null(rec)) {
                char rp[80];
                const char *interval;
                int r;
                snprintf(rp, sizeof(rp), "%s.recurring", p);
                if (!json_is_object(rec))
                        return twin_seed_error(s->err, s->errlen, "%s: must be an object", rp);
                if ((r = TWIN_SEED_KNOWN(s, rec, rp, "recurring price", "interval",
                                         "interval_count", "usage_type", "trial_period_days",
                                         "aggregate_usage", "meter")) < 0 ||
                    (r = twin_seed_str(s, rec, "interval", rp, NULL, TWIN_NULL_REFUSED,
                                       &interval)) < 0)
                        return r;
                bool ok = false;
                for (size_t k = 0; interval && k < ELEMENTSOF(intervals); k++)
                        ok = ok || streq(interval, intervals[k]);
                json_t *count = json_object_get(rec, "interval_count");
                if (!ok)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.interval: must be one of day, week, month, "
                                               "year",
                                               rp);
                if (count && (!json_is_integer(count) || json_integer_value(count) < 1))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.interval_count: must be a positive integer", rp);
                json_t *trial = json_object_get(rec, "trial_period_days");
                json_t *o = json_pack("{s:n, s:s, s:I, s:n, s:O?, s:s}", "aggregate_usage",
                                      "interval", interval, "interval_count",
                                      count ? json_integer_value(count) : (json_int_t)1, "meter",
                                      "trial_period_days", json_is_integer(trial) ? trial : NULL,
                                      "usage_type", "licensed");
                if (!o || json_object_set_new(price, "recurring", o) < 0)
                        return -ENOMEM;
                type = "recurring";
        } else if (json_object_set_new(price, "recurring", json_null()) < 0)
                return -ENOMEM;
        const char *said = json_get_str(given, "type");
        if (said && !streq(said, type))
                return twin_seed_error(s->err, s->errlen,
                                       "%s.type: \"%s\" but the price %s recurring", p, said,
                                       streq(type, "recurring") ? "is" : "is not");
        char dec[24];
        snprintf(dec, sizeof(dec), "%lld",
                 (long long)json_integer_value(json_object_get(price, "unit_amount")));
        if (json_object_set_new(price, "type", json_string(type)) < 0 ||
            json_object_set_new(price, "unit_amount_decimal", json_string(dec)) < 0)
                return -ENOMEM;
        return 0;
}

/* One seeded subscription item (entry at path) of subscription sub, as the API makes it. */
static json_t *seed_item(TwinSeed *s, json_t *sub, json_t *entry, const char *path, int *ret_r)
{
        const char *price_id, *id;
        char gen[40];
        *ret_r = -EINVAL;
        if (!json_is_object(entry)) {
                twin_seed_error(s->err, s->errlen, "%s: must be an object", path);
                return NULL;
        }
        if ((*ret_r = TWIN_SEED_KNOWN(s, entry, path, "subscription item", "id", "object", "price",
                                      "price_id", "quantity", "metadata", "created")) < 0 ||
            (*ret_r = twin_seed_str(s, entry, "id", path, NULL, TWIN_NULL_ABSENT, &id)) < 0)
                return NULL;
        json_t *pv = json_object_get(entry, "price") ?: json_object_get(entry, "price_id");
        /* a price as an id, or as Stripe's object (an exported world) */
        price_id = json_is_object(pv) ? json_get_str(pv, "id") : json_string_value(pv);
        json_t *price = stripe_find(s->world, "prices", price_id, NULL);
        *ret_r = -EINVAL;
        if (!price) {
                twin_seed_error(s->err, s->errlen, "%s.price: must name one of the seed's prices",
                                path);
                return NULL;
        }
        if (!streq_ptr(json_get_str(price, "type"), "recurring")) {
                twin_seed_error(s->err, s->errlen,
                                "%s.price: %s is not a recurring price (a subscription bills "
                                "recurring prices)",
                                path, price_id);
                return NULL;
        }
        json_t *q = json_object_get(entry, "quantity"), *m = json_object_get(entry, "metadata");
        if ((q && (!json_is_integer(q) || json_integer_value(q) < 0)) ||
            (m && !json_is_object(m))) {
                twin_seed_error(s->err, s->errlen, "%s.%s: must be %s", path,
                                q && (!json_is_integer(q) || json_integer_value(q) < 0)
                                        ? "quantity"
                                        : "metadata",
                                q && (!json_is_integer(q) || json_integer_value(q) < 0)
                                        ? "a non-negative integer"
                                        : "an object");
                return NULL;
        }
        if (id && (!startswith(id, "si_") || stripe_find_any(s->world, id))) {
                twin_seed_error(s->err, s->errlen, "%s.id: must be a new \"si_…\" id", path);
                return NULL;
        }
        if (!id) {
                if ((*ret_r = stripe_new_id(s->world, "si", gen)) < 0)
                        return NULL;
                id = gen;
        }
        json_t *cv = json_object_get(entry, "created");
        json_t *item = json_pack("{s:s, s:s, s:n, s:O, s:[], s:o, s:o, s:o, s:I, s:O, s:[]}", "id",
                                 id, "object", "subscription_item", "billing_thresholds", "created",
                                 json_is_integer(cv) ? cv : json_object_get(sub, "created"),
                                 "discounts", "metadata", m ? json_deep_copy(m) : json_object(),
                                 "plan", stripe_plan_of(price), "price", json_deep_copy(price),
                                 "quantity", q ? json_integer_value(q) : (json_int_t)1,
                                 "subscription", json_object_get(sub, "id"), "tax_rates");
        *ret_r = item ? 0 : -ENOMEM;
        return item;
}

/* The defaults of a seeded subscription that the API would have set (subscriptions.c). */
static const char seed_sub_template[] =
        "{\"application\": null, \"application_fee_percent\": null,"
        " \"automatic_tax\": {\"enabled\": false, \"liability\": null},"
        " \"billing_cycle_anchor_config\": null, \"billing_thresholds\": null,"
        " \"cancel_at\": null, \"cancel_at_period_end\": false, \"canceled_at\": null,"
        " \"cancellation_details\": {\"comment\": null, \"feedback\": null, \"reason\": null},"
        " \"collection_method\": \"charge_automatically\", \"days_until_due\": null,"
        " \"default_payment_method\": null, \"default_source\": null, \"default_tax_rates\": [],"
        " \"description\": null, \"discount\": null, \"discounts\": [], \"ended_at\": null,"
        " \"invoice_settings\": {\"account_tax_ids\": null, \"issuer\": {\"type\": \"self\"}},"
        " \"latest_invoice\": null, \"livemode\": false, \"next_pending_invoice_item_invoice\":"
        " null, \"on_behalf_of\": null, \"pause_collection\": null, \"payment_settings\":"
        " {\"payment_method_options\": null, \"payment_method_types\": null,"
        " \"save_default_payment_method\": \"off\"}, \"pending_invoice_item_interval\": null,"
        " \"pending_setup_intent\": null, \"pending_update\": null, \"schedule\": null,"
        " \"status\": \"active\", \"test_clock\": null, \"transfer_data\": null,"
        " \"trial_end\": null, \"trial_settings\": {\"end_behavior\": {\"missing_payment_method\":"
        " \"create_invoice\"}}, \"trial_start\": null}";

/* Sets key on o to v (an integer) unless o already has an integer there. */
static int default_int(json_t *o, const char *key, int64_t v)
{
        if (json_is_integer(json_object_get(o, key)))
                return 0;
        return json_object_set_new(o, key, json_integer(v)) < 0 ? -ENOMEM : 0;
}

/* A seeded subscription completed: its items (items[], or one price and quantity), periods,
 * currency and Stripe's defaults for everything the seed leaves out. */
static int seed_subscription(TwinSeed *s, json_t *sub, const json_t *given, size_t i)
{
        char p[64];
        int r;
        snprintf(p, sizeof(p), "subscriptions[%zu]", i);
        if (!json_is_string(json_object_get(sub, "customer")))
                return twin_seed_error(s->err, s->errlen,
                                       "%s.customer: a subscription needs its customer", p);
        _cleanup_json_ json_t *base = json_loads(seed_sub_template, 0, NULL);
        if (!base)
                return -ENOMEM;
        const char *k;
        json_t *v;
        json_object_foreach (base, k, v) {
                if (!json_object_get(sub, k) && json_object_set(sub, k, v) < 0)
                        return -ENOMEM;
        }
        /* items: Stripe's list object, an array of items, or one price (and quantity) */
        json_t *items = json_object_get(given, "items");
        json_t *one = json_object_get(given, "price") ?: json_object_get(given, "price_id");
        _cleanup_json_ json_t *entries = NULL;
        if (items && one)
                return twin_seed_error(s->err, s->errlen,
                                       "%s: give either items or price, not both", p);
        if (json_is_object(items))
                items = json_object_get(items, "data");
        if (one) {
                json_t *q = json_object_get(given, "quantity");
                entries = json_pack("[{s:O}]", "price", one);
                if (!entries ||
                    (q && json_object_set(json_array_get(entries, 0), "quantity", q) < 0))
                        return -ENOMEM;
                items = entries;
        }
        if (!json_is_array(items) || json_array_size(items) == 0)
                return twin_seed_error(s->err, s->errlen,
                                       "%s.items: a subscription needs at least one item "
                                       "(items: [{price, quantity}])",
                                       p);
        _cleanup_json_ json_t *data = json_array();
        if (!data)
                return -ENOMEM;
        size_t j;
        json_t *entry;
        json_array_foreach (items, j, entry) {
                char ip[96];
                snprintf(ip, sizeof(ip), "%s.items[%zu]", p, j);
                json_t *item = seed_item(s, sub, entry, ip, &r);
                if (!item || json_array_append_new(data, item) < 0)
                        return item ? -ENOMEM : r;
        }
        int64_t total;
        if (stripe_items_total(data, &total) < 0)
                return twin_seed_error(s->err, s->errlen,
                                       "%s.items: they add up to more than %lld (the largest "
                                       "amount the twin takes)",
                                       p, (long long)STRIPE_MAX_AMOUNT);
        json_t *price = json_object_get(json_array_get(data, 0), "price");
        json_t *rec = json_object_get(price, "recurring");
        char url[96];
        snprintf(url, sizeof(url), "/v1/subscription_items?subscription=%s",
                 json_get_str(sub, "id"));
        json_t *list =
                json_pack("{s:s, s:O, s:b, s:I, s:s}", "object", "list", "data", data, "has_more",
                          false, "total_count", (json_int_t)json_array_size(data), "url", url);
        json_t *only = json_array_size(data) == 1 ? json_array_get(data, 0) : NULL;
        json_object_del(sub, "price");
        if (!list || json_object_set_new(sub, "items", list) < 0 ||
            json_object_set(sub, "currency", json_object_get(price, "currency")) < 0 ||
            json_object_set_new(sub, "plan",
                                only ? json_deep_copy(json_object_get(only, "plan"))
                                     : json_null()) < 0 ||
            json_object_set_new(sub, "quantity",
                                only ? json_deep_copy(json_object_get(only, "quantity"))
                                     : json_null()) < 0)
                return -ENOMEM;
        int64_t created = json_integer_value(json_object_get(sub, "created"));
        if ((r = default_int(sub, "start_date", created)) < 0 ||
            (r = default_int(sub, "current_period_start",
                             json_integer_value(json_object_get(sub, "start_date")))) < 0 ||
            (r = default_int(sub, "billing_cycle_anchor",
                             json_integer_value(json_object_get(sub, "current_period_start")))) < 0)
                return r;
        int64_t start = json_integer_value(json_object_get(sub, "current_period_start"));
        int64_t count = json_integer_value(json_object_get(rec, "interval_count")) ?: 1;
        if ((r = default_int(sub, "current_period_end",
                             stripe_interval_add(start, json_get_str(rec, "interval"), count))) < 0)
                return r;
        if (json_integer_value(json_object_get(sub, "current_period_end")) <= start)
                return twin_seed_error(s->err, s->errlen,
                                       "%s.current_period_end: must be after current_period_start",
                                       p);
        return 0;
}

/* A seeded invoice completed: its lines (lines[], else its subscription's items), totals,
 * the customer's details and Stripe's defaults. */
static int seed_invoice(TwinSeed *s, json_t *inv, const json_t *given, size_t i)
{
        char p[64];
        int r;
        snprintf(p, sizeof(p), "invoices[%zu]", i);
        json_t *sub =
                stripe_find(s->world, "subscriptions", json_get_str(inv, "subscription"), NULL);
        if (!json_object_get(inv, "customer") && sub &&
            json_object_set(inv, "customer", json_object_get(sub, "customer")) < 0)
                return -ENOMEM;
        json_t *cus = stripe_find(s->world, "customers", json_get_str(inv, "customer"), NULL);
        if (!cus)
                return twin_seed_error(s->err, s->errlen,
                                       "%s.customer: must name one of the seed's customers", p);
        int64_t created = json_integer_value(json_object_get(inv, "created"));
        TwinCall c = {.world = s->world, .now = created};
        const char *currency = json_get_str(inv, "currency") ?: json_get_str(sub, "currency");
        _cleanup_json_ json_t *base =
                stripe_invoice_new(&c, json_get_str(inv, "id"), cus, currency ?: "usd");
        if (!base)
                return -ENOMEM;
        const char *k;
        json_t *v;
        json_object_foreach (base, k, v) {
                if (!json_object_get(inv, k) && json_object_set(inv, k, v) < 0)
                        return -ENOMEM;
        }
        if (json_object_set(inv, "lines", json_object_get(base, "lines")) < 0 ||
            json_object_set_new(inv, "billing_reason",
                                json_string(json_get_str(given, "billing_reason")
                                                    ?: (sub ? "subscription_create" : "manual"))) <
                    0)
                return -ENOMEM;
        if (sub && json_object_set_new(json_object_get(inv, "subscription_details"), "metadata",
                                       json_deep_copy(json_object_get(sub, "metadata"))) < 0)
                return -ENOMEM;
        /* lines: the seed's ({price, quantity}), else what the subscription bills */
        json_t *lines = json_object_get(given, "lines");
        if (lines && !json_is_array(lines))
                return twin_seed_error(s->err, s->errlen, "%s.lines: must be an array", p);
        int64_t start = json_integer_value(json_object_get(sub, "current_period_start"));
        int64_t end = json_integer_value(json_object_get(sub, "current_period_end"));
        if (!lines) {
                size_t j;
                json_t *item;
                json_array_foreach (json_object_get(json_object_get(sub, "items"), "data"), j,
                                    item) {
                        if ((r = stripe_invoice_add_line(&c, inv, item, start, end, false)) < 0)
                                return r;
                }
        } else {
                size_t j;
                json_t *entry;
                json_array_foreach (lines, j, entry) {
                        char lp[96];
                        snprintf(lp, sizeof(lp), "%s.lines[%zu]", p, j);
                        if (!json_is_object(entry))
                                return twin_seed_error(s->err, s->errlen, "%s: must be an object",
                                                       lp);
                        if ((r = TWIN_SEED_KNOWN(s, entry, lp, "invoice line", "price", "price_id",
                                                 "quantity")) < 0)
                                return r;
                        json_t *pv = json_object_get(entry, "price")
                                             ?: json_object_get(entry, "price_id");
                        json_t *price =
                                stripe_find(s->world, "prices", json_string_value(pv), NULL);
                        json_t *q = json_object_get(entry, "quantity");
                        if (!price)
                                return twin_seed_error(s->err, s->errlen,
                                                       "%s.price: must name one of the seed's "
                                                       "prices",
                                                       lp);
                        if (q && (!json_is_integer(q) || json_integer_value(q) < 0))
                                return twin_seed_error(s->err, s->errlen,
                                                       "%s.quantity: must be a non-negative "
                                                       "integer",
                                                       lp);
                        _cleanup_json_ json_t *item =
                                json_pack("{s:n, s:o, s:O, s:I, s:O?}", "id", "plan",
                                          stripe_plan_of(price), "price", price, "quantity",
                                          q ? json_integer_value(q) : (json_int_t)1, "subscription",
                                          json_object_get(inv, "subscription"));
                        int64_t amount, sum;
                        _cleanup_json_ json_t *one = item ? json_pack("[O]", item) : NULL;
                        if (!one)
                                return -ENOMEM;
                        if (stripe_items_total(one, &amount) < 0 ||
                            __builtin_add_overflow(
                                    amount, json_integer_value(json_object_get(inv, "amount_due")),
                                    &sum) ||
                            sum > STRIPE_MAX_AMOUNT)
                                return twin_seed_error(s->err, s->errlen,
                                                       "%s: the lines add up to more than %lld "
                                                       "(the largest amount the twin takes)",
                                                       lp, (long long)STRIPE_MAX_AMOUNT);
                        if ((r = stripe_invoice_add_line(&c, inv, item, created, created, false)) <
                            0)
                                return r;
                }
        }
        /* the seed's own totals win over the lines' */
        static const char *const totals[] = {"amount_due", "amount_paid", "amount_remaining"};
        for (size_t t = 0; t < ELEMENTSOF(totals); t++) {
                json_t *gv = json_object_get(given, totals[t]);
                if (gv && json_object_set(inv, totals[t], gv) < 0)
                        return -ENOMEM;
        }
        char status[24]; /* a copy: the row's own string is replaced below */
        snprintf(status, sizeof(status), "%s", json_get_str(inv, "status") ?: "draft");
        bool paid = streq(status, "paid");
        int64_t due = json_integer_value(json_object_get(inv, "amount_due"));
        if (!json_object_get(given, "amount_paid") &&
            json_object_set_new(inv, "amount_paid", json_integer(paid ? due : 0)) < 0)
                return -ENOMEM;
        int64_t paid_amount = json_integer_value(json_object_get(inv, "amount_paid"));
        if (!json_object_get(given, "amount_remaining") &&
            json_object_set_new(inv, "amount_remaining",
                                json_integer(streq(status, "void") ? 0 : due - paid_amount)) < 0)
                return -ENOMEM;
        json_t *st = json_object_get(inv, "status_transitions");
        if (json_object_set_new(inv, "status", json_string(status)) < 0 ||
            json_object_set_new(inv, "paid", json_boolean(paid)) < 0 ||
            (!streq(status, "draft") &&
             (json_object_set_new(st, "finalized_at", json_integer(created)) < 0 ||
              json_object_set_new(inv, "effective_at", json_integer(created)) < 0 ||
              json_object_set_new(inv, "ending_balance", json_integer(0)) < 0)) ||
            (paid && (json_object_set_new(st, "paid_at", json_integer(created)) < 0 ||
                      json_object_set_new(inv, "attempted", json_true()) < 0 ||
                      json_object_set_new(inv, "auto_advance", json_false()) < 0 ||
                      default_int(inv, "attempt_count", 1) < 0)) ||
            (streq(status, "void") &&
             json_object_set_new(st, "voided_at", json_integer(created)) < 0))
                return -ENOMEM;
        if (!streq(status, "draft") && !json_is_string(json_object_get(inv, "number"))) {
                char number[64];
                snprintf(number, sizeof(number), "%s-%04zu",
                         json_get_str(cus, "invoice_prefix") ?: "POME", i + 1);
                if (json_object_set_new(inv, "number", json_string(number)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/*
 * Completes the seeded billing rows, which the generic loader (seed_row) only overlays:
 * products need a name, prices their recurring/type, subscriptions their items and periods,
 * invoices their lines and totals. seed is the seed itself (each row's own members).
 */
static int seed_billing(TwinSeed *s, const json_t *seed)
{
        size_t i;
        json_t *row;
        int r;
        json_array_foreach (json_object_get(s->world, "products"), i, row) {
                if (!json_get_str(row, "name") || !json_get_str(row, "name")[0])
                        return twin_seed_error(s->err, s->errlen,
                                               "products[%zu].name: a product needs its name", i);
        }
        json_array_foreach (json_object_get(s->world, "prices"), i, row) {
                if ((r = seed_price(s, row, json_array_get(json_object_get(seed, "prices"), i),
                                    i)) < 0)
                        return r;
        }
        json_array_foreach (json_object_get(s->world, "products"), i, row) {
                json_t *dp =
                        stripe_find(s->world, "prices", json_get_str(row, "default_price"), NULL);
                if (dp && !streq_ptr(json_get_str(dp, "product"), json_get_str(row, "id")))
                        return twin_seed_error(s->err, s->errlen,
                                               "products[%zu].default_price: must be one of the "
                                               "product's own prices",
                                               i);
        }
        json_array_foreach (json_object_get(s->world, "subscriptions"), i, row) {
                if ((r = seed_subscription(
                             s, row, json_array_get(json_object_get(seed, "subscriptions"), i),
                             i)) < 0)
                        return r;
        }
        json_array_foreach (json_object_get(s->world, "invoices"), i, row) {
                if ((r = seed_invoice(s, row, json_array_get(json_object_get(seed, "invoices"), i),
                                      i)) < 0)
                        return r;
        }
        return 0;
}

/* References between seeded rows must resolve, so no list or expansion meets a stranger. */
static int seed_refs(TwinSeed *s)
{
        static const struct {
                const char *collection, *field, *target;
        } refs[] = {
                {"payment_methods", "customer", "customers"},
                {"payment_intents", "customer", "customers"},
                {"payment_intents", "payment_method", "payment_methods"},
                {"payment_intents", "latest_charge", "charges"},
                {"charges", "customer", "customers"},
                {"charges", "payment_intent", "payment_intents"},
                {"charges", "payment_method", "payment_methods"},
                {"charges", "balance_transaction", "balance_transactions"},
                {"refunds", "charge", "charges"},
                {"refunds", "payment_intent", "payment_intents"},
                {"refunds", "balance_transaction", "balance_transactions"},
                {"payment_intents", "invoice", "invoices"},
                {"charges", "invoice", "invoices"},
                {"products", "default_price", "prices"},
                {"prices", "product", "products"},
                {"subscriptions", "customer", "customers"},
                {"subscriptions", "default_payment_method", "payment_methods"},
                {"subscriptions", "latest_invoice", "invoices"},
                {"invoices", "customer", "customers"},
                {"invoices", "subscription", "subscriptions"},
                {"invoices", "payment_intent", "payment_intents"},
                {"invoices", "charge", "charges"},
        };
        for (size_t k = 0; k < ELEMENTSOF(refs); k++) {
                size_t i;
                json_t *row;
                json_array_foreach (json_object_get(s->world, refs[k].collection), i, row) {
                        json_t *v = json_object_get(row, refs[k].field);
                        if (!v || json_is_null(v))
                                continue;
                        if (!json_is_string(v) ||
                            !stripe_find(s->world, refs[k].target, json_string_value(v), NULL))
                                return twin_seed_error(s->err, s->errlen,
                                                       "%s[%zu].%s: must name one of the seed's %s",
                                                       refs[k].collection, i, refs[k].field,
                                                       refs[k].target);
                }
        }
        return 0;
}

/*
 * Seeded money that names no balance transaction gets one, so the balance is the sum of
 * the ledger: a succeeded captured charge (amount, Stripe's fee) and a succeeded refund
 * (−amount).
 */
static int seed_ledger(TwinSeed *s)
{
        static const char *const colls[] = {"charges", "refunds"};
        for (size_t k = 0; k < ELEMENTSOF(colls); k++) {
                size_t i;
                json_t *row;
                json_array_foreach (json_object_get(s->world, colls[k]), i, row) {
                        if (!streq_ptr(json_get_str(row, "status"), "succeeded") ||
                            json_is_string(json_object_get(row, "balance_transaction")) ||
                            json_is_false(json_object_get(row, "captured")))
                                continue;
                        bool charge = k == 0;
                        int64_t amount = json_integer_value(json_object_get(row, "amount"));
                        const char *cur = json_get_str(row, "currency") ?: "usd";
                        TwinCall c = {.world = s->world,
                                      .now = json_integer_value(json_object_get(row, "created"))};
                        char id[40];
                        int r = stripe_txn_add(&c, charge ? "charge" : "refund",
                                               json_get_str(row, "id"), charge ? amount : -amount,
                                               charge ? stripe_fee(cur, amount) : 0, cur,
                                               charge ? "Payment" : "REFUND FOR CHARGE", id);
                        if (r < 0 ||
                            json_object_set_new(row, "balance_transaction", json_string(id)) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

/* The seed's failure_injection rules (twin_seed_failure_injection) into the world's. */
static int seed_failures(TwinSeed *s, const json_t *seed)
{
        json_t *rules = stripe_rows(s->world, "failure_injection");
        if (!rules)
                return -ENOMEM;
        return twin_seed_failure_injection(s, seed, rules, true, "\"/v1/payment_intents\"");
}

static int seed_api_keys(TwinSeed *s, const json_t *seed)
{
        json_t *a, *v;
        size_t i;
        int r = twin_seed_array(s, seed, "api_keys", "", &a);
        if (r < 0)
                return r;
        json_t *keys = stripe_rows(s->world, "api_keys");
        if (!keys)
                return -ENOMEM;
        json_array_foreach (a, i, v) {
                char p[64];
                const char *key;
                snprintf(p, sizeof(p), "api_keys[%zu]", i);
                if (!json_is_object(v))
                        return twin_seed_error(s->err, s->errlen, "%s: must be an object", p);
                if ((r = TWIN_SEED_KNOWN(s, v, p, "API key", "key", "sid", "account_id", "livemode",
                                         "name")) < 0 ||
                    (r = twin_seed_str(s, v, "key", p, NULL, TWIN_NULL_REFUSED, &key)) < 0)
                        return r;
                if (!key || !startswith(key, "sk_"))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.key: needs a secret key (\"sk_test_…\")", p);
                if (json_array_append(keys, v) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static const char *const seed_keys[] = {"api_keys",
                                        "customers",
                                        "payment_methods",
                                        "payment_intents",
                                        "charges",
                                        "refunds",
                                        "balance_transactions",
                                        "products",
                                        "prices",
                                        "subscriptions",
                                        "invoices",
                                        "failure_injection",
                                        "x402_resources",
                                        NULL};

static int stripe_load_seed(const json_t *seed, json_t **ret_world, char *err, size_t errlen)
{
        _cleanup_json_ json_t *w = json_object();
        if (!w)
                return -ENOMEM;
        TwinSeed s = {.world = w, .err = err, .errlen = errlen};
        int r = twin_seed_known(&s, seed, "", "Stripe seed", seed_keys, ELEMENTSOF(seed_keys) - 1);
        if (r < 0)
                return r;
        static const char *const colls[] = {
                "api_keys",    "customers",        "payment_methods",      "payment_intents",
                "charges",     "refunds",          "balance_transactions", "events",
                "products",    "prices",           "subscriptions",        "invoices",
                "test_clocks", "failure_injection"};
        for (size_t i = 0; i < ELEMENTSOF(colls); i++)
                if (!stripe_rows(w, colls[i]))
                        return -ENOMEM;
        if (json_object_set_new(w, "next_id", json_integer(1)) < 0)
                return -ENOMEM;
        if ((r = seed_api_keys(&s, seed)) < 0)
                return r;
        for (size_t k = 0; k < ELEMENTSOF(seed_entities); k++) {
                const SeedEntity *e = &seed_entities[k];
                json_t *a, *v;
                size_t i;
                if ((r = twin_seed_array(&s, seed, e->key, "", &a)) < 0)
                        return r;
                json_array_foreach (a, i, v) {
                        char p[64];
                        snprintf(p, sizeof(p), "%s[%zu]", e->key, i);
                        if ((r = seed_row(&s, e, v, p)) < 0)
                                return r;
                }
        }
        if ((r = seed_billing(&s, seed)) < 0 || (r = seed_refs(&s)) < 0 ||
            (r = seed_ledger(&s)) < 0 || (r = seed_failures(&s, seed)) < 0 ||
            (r = stripe_x402_seed(&s, seed)) < 0)
                return r;
        *ret_world = TAKE_PTR(w);
        return 0;
}

/* ------------------------------------------------------------------ kind callbacks */

static json_t *stripe_public_state(const json_t *world)
{
        _cleanup_json_ json_t *s = json_deep_copy(world);
        if (!s)
                return NULL;
        /* bookkeeping, not state: counters and the replay table */
        json_object_del(s, "next_id");
        json_object_del(s, "attempts");
        json_object_del(s, "idempotency_keys");
        size_t i;
        json_t *k;
        json_array_foreach (json_object_get(s, "api_keys"), i, k) {
                if (json_object_get(k, "key") &&
                    json_object_set_new(k, "key", json_string("[REDACTED]")) < 0)
                        return NULL;
        }
        return TAKE_PTR(s);
}

/*
 * Refusals of a caller as hosted Pome's Stripe twin answers them (its contract suite): 401
 * with code "unauthorized" (api.stripe.com words: https://docs.stripe.com/api/authentication),
 * "Invalid API Key provided." for a key that resolves nowhere, and 403 "forbidden" for a good
 * credential of another session.
 */
static void stripe_auth_error(TwinAuthFailure why, TwinReply *rp)
{
        switch (why) {
        case TWIN_AUTH_MISSING:
                (void)stripe_fail(rp, 401, "invalid_request_error", "unauthorized", NULL,
                                  "You did not provide an API key. You need to provide your API "
                                  "key in the Authorization header, using Bearer auth (e.g. "
                                  "'Authorization: Bearer YOUR_SECRET_KEY'). See "
                                  "https://stripe.com/docs/api#authentication for details, or we "
                                  "can help at https://support.stripe.com/.");
                return;
        case TWIN_AUTH_EXPIRED:
                (void)stripe_fail(rp, 401, "invalid_request_error", "unauthorized", NULL,
                                  "Expired API Key provided.");
                return;
        case TWIN_AUTH_WRONG_SESSION:
                (void)stripe_fail(rp, 403, "invalid_request_error", "forbidden", NULL,
                                  "This key belongs to another sandbox.");
                return;
        case TWIN_AUTH_INVALID:
                break;
        }
        (void)stripe_fail(rp, 401, "invalid_request_error", "unauthorized", NULL,
                          "Invalid API Key provided.");
}

/*
 * The control surfaces as hosted Pome's Stripe twin answers them: its admin gate 403
 * {type, code: "forbidden", message: "Forbidden"} exactly, a refused seed 400
 * parameter_invalid, /mcp/call 400 tool_unknown and 400 parameter_invalid (param "tool").
 */
static void stripe_control_error(TwinControlError what, const char *detail, TwinReply *rp)
{
        switch (what) {
        case TWIN_CONTROL_FORBIDDEN:
                twin_reply_json(rp, 403,
                                json_pack("{s:{s:s, s:s, s:s}}", "error", "type",
                                          "invalid_request_error", "code", "forbidden", "message",
                                          "Forbidden"));
                return;
        case TWIN_CONTROL_BAD_BODY:
        case TWIN_CONTROL_BAD_SEED:
                (void)stripe_invalid(rp, "parameter_invalid", NULL, "%s",
                                     detail ? detail : "The body is not a seed.");
                return;
        case TWIN_CONTROL_UNKNOWN_TOOL:
                (void)stripe_invalid(rp, "tool_unknown", "tool", "Unknown tool: %s",
                                     strempty(detail));
                return;
        case TWIN_CONTROL_NO_TOOL:
                (void)stripe_invalid(rp, "parameter_invalid", "tool",
                                     "tool is required: {\"tool\": NAME, \"arguments\": {…}}.");
                return;
        }
}

/* hosted Pome's Stripe health shapes: fidelity and tthw_seconds in /healthz; implementation,
 * fidelity, runtime, tthw_seconds and recorder in /_pome/health. tthw_seconds: the twin's
 * time up (hosted Pome's "time since process start"). */
static int stripe_health_extras(const Twin *t, json_t *body, bool health)
{
        if (json_object_set_new(body, "fidelity", json_string("semantic")) < 0 ||
            json_object_set_new(body, "tthw_seconds", json_real(twin_uptime(t))) < 0)
                return -ENOMEM;
        if (health && (json_object_set_new(body, "implementation",
                                           json_string(twin_kind_stripe.implementation)) < 0 ||
                       json_object_set_new(body, "runtime", twin_runtime()) < 0 ||
                       json_object_set_new(body, "recorder",
                                           json_pack("{s:s, s:b}", "events", "/_pome/events",
                                                     "redacted", true)) < 0))
                return -ENOMEM;
        return 0;
}

/* The engine's own refusals (malformed form or JSON, unknown route, 500) in Stripe's envelope. */
static void stripe_error(int status, const char *code, const char *message, TwinReply *rp)
{
        const char *type = status >= 500 ? "api_error" : "invalid_request_error";
        if (streq_ptr(code, "unsupported_endpoint")) {
                /* hosted Pome's Stripe twin says fidelity inside its error object too */
                (void)stripe_fail(rp, status, type, "endpoint_not_supported", NULL, "%s", message);
                json_t *e = json_object_get(rp->body, "error");
                if (json_is_object(e))
                        (void)json_object_set_new(e, "fidelity", json_string("unsupported"));
        } else if (streq_ptr(code, "invalid_content_type") || streq_ptr(code, "invalid_utf8"))
                (void)stripe_fail(rp, status, type, NULL, NULL,
                                  "%s If you have any questions, we can help at "
                                  "https://support.stripe.com/.",
                                  message);
        else
                (void)stripe_fail(rp, status, type, NULL, NULL, "%s", message);
}

/* ------------------------------------------------------------------ the handler table */

#define STRIPE_ACTIONS(X)                \
        X(create_customer)               \
        X(retrieve_customer)             \
        X(update_customer)               \
        X(delete_customer)               \
        X(list_customers)                \
        X(list_customer_payment_methods) \
        X(create_payment_method)         \
        X(list_payment_methods)          \
        X(retrieve_payment_method)       \
        X(attach_payment_method)         \
        X(detach_payment_method)         \
        X(create_payment_intent)         \
        X(retrieve_payment_intent)       \
        X(update_payment_intent)         \
        X(confirm_payment_intent)        \
        X(cancel_payment_intent)         \
        X(capture_payment_intent)        \
        X(simulate_crypto_deposit)       \
        X(list_payment_intents)          \
        X(retrieve_charge)               \
        X(list_charges)                  \
        X(create_refund)                 \
        X(retrieve_refund)               \
        X(list_refunds)                  \
        X(retrieve_balance)              \
        X(list_balance_transactions)     \
        X(retrieve_event)                \
        X(list_events)                   \
        X(search_customers)              \
        X(search_payment_intents)        \
        X(search_charges)                \
        X(search_invoices)               \
        X(search_prices)                 \
        X(search_products)               \
        X(search_subscriptions)          \
        X(create_product)                \
        X(retrieve_product)              \
        X(update_product)                \
        X(delete_product)                \
        X(list_products)                 \
        X(create_price)                  \
        X(retrieve_price)                \
        X(update_price)                  \
        X(list_prices)                   \
        X(create_subscription)           \
        X(retrieve_subscription)         \
        X(update_subscription)           \
        X(cancel_subscription)           \
        X(list_subscriptions)            \
        X(retrieve_invoice)              \
        X(list_invoices)                 \
        X(create_test_clock)             \
        X(retrieve_test_clock)           \
        X(list_test_clocks)              \
        X(delete_test_clock)             \
        X(advance_test_clock)

#define SERVE(name)                                                   \
        static int serve_##name(TwinCall *c, TwinReply *rp)           \
        {                                                             \
                return stripe_serve(c, rp, #name, stripe_act_##name); \
        }
STRIPE_ACTIONS(SERVE)
#undef SERVE

/*
 * The x402 resources' pipeline: the seed's failure injection (either mode), around the
 * action. They are not Stripe's API, so neither of its other steps applies: a payment's
 * nonce is its own replay guard (no Idempotency-Key), and a resource server takes whatever
 * query or body its client sends (no unknown-parameter refusal).
 */
static int serve_x402_fetch(TwinCall *c, TwinReply *rp)
{
        char endpoint[512];
        _cleanup_(override_done) StripeOverride over = {};
        endpoint_of(c, "x402_fetch", endpoint, sizeof(endpoint));
        int r = inject(c, rp, endpoint, &over);
        if (r != 0)
                return r < 0 ? r : 0;
        if ((r = stripe_act_x402_fetch(c, rp)) < 0)
                return r;
        return over.rule ? injected_reply(rp, over.rule, over.attempt, endpoint) : 0;
}

#define ENTRY(name) {#name, serve_##name},
static const TwinHandler stripe_handlers[] = {STRIPE_ACTIONS(ENTRY) ENTRY(x402_fetch)};
#undef ENTRY

const TwinKind twin_kind_stripe = {
        .name = "stripe",
        .implementation = "pome-stripe",
        .flags = TWIN_KIND_RAW_KEY | TWIN_KIND_FORM_BODY | TWIN_KIND_TOLERANT_CONTROL |
                 TWIN_KIND_NO_SESSION_HEALTHZ | TWIN_KIND_SEED_UNTAPED,
        .surface = &twin_surface_stripe,
        .handlers = stripe_handlers,
        .n_handlers = ELEMENTSOF(stripe_handlers),
        /* the API's base URL https://api.stripe.com (docs.stripe.com/api); its SDKs are
         * given a host alone (api_base) and put "/v1/…" below it */
        .vendor_hosts = (const char *const[]){"api.stripe.com", NULL},
        .keyed_prefix = "/v1",
        .load_seed = stripe_load_seed,
        .seed_keys = seed_keys,
        .public_state = stripe_public_state,
        .auth_error = stripe_auth_error,
        .error = stripe_error,
        .control_error = stripe_control_error,
        .health_extras = stripe_health_extras,
        /* docs.stripe.com/api/request_ids: "Each API request has an associated request
         * identifier ... in the response headers, under Request-Id" */
        .request_id_header = "Request-Id",
};
