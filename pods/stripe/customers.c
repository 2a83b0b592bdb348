/* SPDX-License-Identifier: MIT */
/*
 * Customers (https://docs.stripe.com/api/customers): create (test_clock puts it on a test
 * clock, test_clocks.c), retrieve, update, delete, list (email filter, deleted ones left out)
 * and the customer's saved payment methods. A deleted customer keeps its row with "deleted":
 * true and reads as Stripe's stub {id, object, deleted: true}; updating it is
 * resource_missing; its subscriptions are canceled with it.
 */
#include "common/json-util.h"
#include "pods/stripe/stripe.h"

static const char *const customer_strings[] = {"email", "name", "description", "phone", NULL};

static bool deleted(json_t *row)
{
        return json_is_true(json_object_get(row, "deleted"));
}

/* The customer named by args[key] that is not deleted: 1 (*ret, *ret_idx), 0 (404 in rp). */
static int arg_customer(TwinCall *c, TwinReply *rp, const char *key, json_t **ret, size_t *ret_idx)
{
        const char *id;
        int r = stripe_arg_id(c, rp, key, &id);
        if (r <= 0)
                return r;
        json_t *cus = stripe_find(c->world, "customers", id, ret_idx);
        if (!cus || deleted(cus)) {
                r = stripe_missing(rp, "customers", id, streq(key, "id") ? "id" : key);
                return r < 0 ? r : 0;
        }
        *ret = cus;
        return 1;
}

/*
 * The fields create and update share, applied to row (a working copy): strings, metadata,
 * address, shipping and invoice_settings[default_payment_method] (a payment method attached
 * to this customer, or attaching, the one create attaches). 1, 0 with a 400 in rp, -ENOMEM.
 */
static int apply_fields(TwinCall *c, TwinReply *rp, json_t *row, const char *attaching)
{
        int r = stripe_set_strings(c, rp, row, customer_strings);
        if (r <= 0)
                return r;
        const char *email = json_get_str(row, "email");
        if (json_object_get(c->args, "email") && email && !strchr(email, '@'))
                return stripe_invalid(rp, "email_invalid", "email", "Invalid email address: %s",
                                      email);
        if ((r = stripe_apply_metadata(c, rp, row)) <= 0)
                return r;
        static const char *const objects[] = {"address", "shipping"};
        for (size_t i = 0; i < ELEMENTSOF(objects); i++) {
                json_t *v = json_object_get(c->args, objects[i]);
                if (!v)
                        continue;
                if (json_is_string(v) && json_string_length(v) == 0)
                        v = json_null();
                else if (!json_is_object(v) && !json_is_null(v))
                        return stripe_invalid(rp, NULL, objects[i], "Invalid object");
                if (json_object_set(row, objects[i], v) < 0)
                        return -ENOMEM;
        }
        json_t *inv = json_object_get(c->args, "invoice_settings");
        if (inv) {
                if (!json_is_object(inv))
                        return stripe_invalid(rp, NULL, "invoice_settings", "Invalid object");
                json_t *dpm = json_object_get(inv, "default_payment_method");
                const char *pm_id = json_string_value(dpm);
                if (pm_id && pm_id[0] && !streq_ptr(pm_id, attaching)) {
                        json_t *pm = stripe_find(c->world, "payment_methods", pm_id, NULL);
                        if (!pm ||
                            !streq_ptr(json_get_str(pm, "customer"), json_get_str(row, "id")))
                                return stripe_invalid(
                                        rp, "resource_missing",
                                        "invoice_settings[default_payment_method]",
                                        "No such PaymentMethod: '%s'; the payment method must be "
                                        "attached to the customer first.",
                                        pm_id);
                }
                json_t *settings = json_object_get(row, "invoice_settings");
                if (dpm &&
                    json_object_set_new(settings, "default_payment_method",
                                        pm_id && pm_id[0] ? json_string(pm_id) : json_null()) < 0)
                        return -ENOMEM;
        }
        return 1;
}

int stripe_act_create_customer(TwinCall *c, TwinReply *rp)
{
        char id[40];
        int r;
        /* the id is drawn once the request is known good: a refusal changes nothing */
        _cleanup_json_ json_t *row = stripe_customer_new("", c->now);
        if (!row)
                return -ENOMEM;
        const char *pm_ref, *clock_id;
        if ((r = stripe_arg_str(c, rp, "payment_method", false, &pm_ref)) <= 0 ||
            (r = stripe_arg_str(c, rp, "test_clock", false, &clock_id)) <= 0)
                return r;
        /* a customer of a test clock lives at its frozen time, from its creation on */
        if (clock_id && !stripe_find(c->world, "test_clocks", clock_id, NULL))
                return stripe_missing(rp, "test_clocks", clock_id, "test_clock");
        if (clock_id &&
            (json_object_set_new(row, "test_clock", json_string(clock_id)) < 0 ||
             json_object_set_new(row, "created", json_integer(stripe_clock_time(c, clock_id))) < 0))
                return -ENOMEM;
        json_t *pm = pm_ref ? stripe_find(c->world, "payment_methods", pm_ref, NULL) : NULL;
        if (pm_ref && !pm && !stripe_pm_test_id(pm_ref))
                return stripe_missing(rp, "payment_methods", pm_ref, "payment_method");
        if (pm && json_is_string(json_object_get(pm, "customer")))
                return stripe_invalid(rp, NULL, "payment_method",
                                      "The payment method you provided has already been "
                                      "attached to a customer.");
        if ((r = apply_fields(c, rp, row, pm_ref)) <= 0)
                return r;
        if ((r = stripe_new_id(c->world, "cus", id)) < 0 ||
            json_object_set_new(row, "id", json_string(id)) < 0)
                return -ENOMEM;
        /* last, as it may make a payment method of a test id: a refusal changes nothing */
        if (pm_ref) {
                if ((r = stripe_pm_resolve(c, rp, pm_ref, "payment_method", &pm)) <= 0)
                        return r;
                json_t *settings = json_object_get(row, "invoice_settings");
                if (json_object_set_new(pm, "customer", json_string(id)) < 0 ||
                    (streq_ptr(json_get_str(settings, "default_payment_method"), pm_ref) &&
                     json_object_set(settings, "default_payment_method",
                                     json_object_get(pm, "id")) < 0))
                        return -ENOMEM;
        }
        if ((r = stripe_row_add(c->world, "customers", json_incref(row))) < 0 ||
            (r = stripe_event(c, "customer.created", row, NULL)) < 0)
                return r;
        if (pm && (r = stripe_event(c, "payment_method.attached", pm, NULL)) < 0)
                return r;
        if ((r = stripe_mutated(rp, NULL, row)) < 0)
                return r;
        return stripe_reply_object(c, rp, 200, row);
}

int stripe_act_retrieve_customer(TwinCall *c, TwinReply *rp)
{
        const char *id;
        int r = stripe_arg_id(c, rp, "id", &id);
        if (r <= 0)
                return r;
        json_t *cus = stripe_find(c->world, "customers", id, NULL);
        if (!cus)
                return stripe_missing(rp, "customers", id, "id");
        if (deleted(cus))
                return twin_reply_body(rp, 200, stripe_deleted_stub(cus));
        return stripe_reply_object(c, rp, 200, cus);
}

int stripe_act_update_customer(TwinCall *c, TwinReply *rp)
{
        json_t *cus;
        size_t idx;
        int r = arg_customer(c, rp, "id", &cus, &idx);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *next = json_deep_copy(cus);
        if (!next)
                return -ENOMEM;
        if ((r = apply_fields(c, rp, next, NULL)) <= 0)
                return r;
        if (json_equal(next, cus))
                return stripe_reply_object(c, rp, 200, cus);
        /* previous_attributes: the members the update changed, as they were */
        _cleanup_json_ json_t *prev = json_object();
        const char *k;
        json_t *v;
        if (!prev)
                return -ENOMEM;
        json_object_foreach (cus, k, v) {
                if (!json_equal(v, json_object_get(next, k)) && json_object_set(prev, k, v) < 0)
                        return -ENOMEM;
        }
        if ((r = stripe_mutated(rp, cus, next)) < 0 ||
            (r = stripe_row_replace(c->world, "customers", idx, json_incref(next))) < 0 ||
            (r = stripe_event(c, "customer.updated", next, prev)) < 0)
                return r;
        return stripe_reply_object(c, rp, 200, next);
}

int stripe_act_delete_customer(TwinCall *c, TwinReply *rp)
{
        json_t *cus;
        size_t idx;
        int r = arg_customer(c, rp, "id", &cus, &idx);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *next = json_deep_copy(cus);
        if (!next || json_object_set_new(next, "deleted", json_true()) < 0)
                return -ENOMEM;
        if ((r = stripe_mutated(rp, cus, next)) < 0)
                return r;
        const char *id = json_get_str(next, "id");
        /* its saved payment methods are detached with it */
        size_t i;
        json_t *pm;
        json_array_foreach (json_object_get(c->world, "payment_methods"), i, pm) {
                if (!streq_ptr(json_get_str(pm, "customer"), id))
                        continue;
                if (json_object_set_new(pm, "customer", json_null()) < 0 ||
                    (r = stripe_event(c, "payment_method.detached", pm, NULL)) < 0)
                        return -ENOMEM;
        }
        /* and its subscriptions end, as Stripe cancels them with the customer */
        if ((r = stripe_subscriptions_end_for(c, id)) < 0 ||
            (r = stripe_event(c, "customer.deleted", cus, NULL)) < 0 ||
            (r = stripe_row_replace(c->world, "customers", idx, json_incref(next))) < 0)
                return r;
        return twin_reply_body(rp, 200, stripe_deleted_stub(next));
}

static bool keep_customer(TwinCall *c, json_t *row)
{
        const char *email = json_get_str(c->args, "email");
        return !deleted(row) && (!email || streq_ptr(json_get_str(row, "email"), email));
}

int stripe_act_list_customers(TwinCall *c, TwinReply *rp)
{
        const char *email;
        int r = stripe_arg_str(c, rp, "email", false, &email);
        if (r <= 0)
                return r;
        return stripe_list(c, rp, "customers", "/v1/customers", keep_customer);
}

/* The customer list_customer_payment_methods names: id (the REST path's), or over MCP
 * customer, as hosted Pome's tool of that name takes it. */
static const char *pm_customer_key(TwinCall *c)
{
        return !json_object_get(c->args, "id") && json_object_get(c->args, "customer") ? "customer"
                                                                                       : "id";
}

static bool keep_customer_pm(TwinCall *c, json_t *row)
{
        const char *type = json_get_str(c->args, "type");
        return streq_ptr(json_get_str(row, "customer"),
                         json_get_str(c->args, pm_customer_key(c))) &&
               (!type || streq_ptr(json_get_str(row, "type"), type));
}

int stripe_act_list_customer_payment_methods(TwinCall *c, TwinReply *rp)
{
        json_t *cus;
        const char *type;
        int r = arg_customer(c, rp, pm_customer_key(c), &cus, NULL);
        if (r <= 0 || (r = stripe_arg_str(c, rp, "type", false, &type)) <= 0)
                return r;
        char url[128];
        snprintf(url, sizeof(url), "/v1/customers/%s/payment_methods", json_get_str(cus, "id"));
        return stripe_list(c, rp, "payment_methods", url, keep_customer_pm);
}
