/* SPDX-License-Identifier: MIT */
/*
 * Products (https://docs.stripe.com/api/products): create (with default_price_data making its
 * default price at once), retrieve, update, delete, list (active, ids[]). As on Stripe, a
 * product that has prices cannot be deleted ("This product cannot be deleted because it has
 * one or more user-created prices."): archive it (active=false) instead. A deleted product is
 * gone: retrieving it is resource_missing.
 */
#include "common/json-util.h"
#include "pods/stripe/stripe.h"

static const char *const product_strings[] = {"description", "statement_descriptor", "unit_label",
                                              "url", NULL};

/* A Product (https://docs.stripe.com/api/products/object) with Stripe's defaults. */
json_t *stripe_product_new(const char *id, int64_t created, const char *name)
{
        return json_pack("{s:s, s:s, s:b, s:I, s:n, s:n, s:[], s:[], s:b, s:{}, s:s, s:n, s:n, "
                         "s:n, s:n, s:s, s:n, s:I, s:n}",
                         "id", id, "object", "product", "active", true, "created",
                         (json_int_t)created, "default_price", "description", "images",
                         "marketing_features", "livemode", false, "metadata", "name", name,
                         "package_dimensions", "shippable", "statement_descriptor", "tax_code",
                         "type", "service", "unit_label", "updated", (json_int_t)created, "url");
}

/* The product args[key] names (param for the error): 1 (*ret, *ret_idx), 0 with 404 in rp. */
static int arg_product(TwinCall *c, TwinReply *rp, json_t **ret, size_t *ret_idx)
{
        const char *id;
        int r = stripe_arg_id(c, rp, "id", &id);
        if (r <= 0)
                return r;
        json_t *row = stripe_find(c->world, "products", id, ret_idx);
        if (!row) {
                r = stripe_missing(rp, "products", id, "id");
                return r < 0 ? r : 0;
        }
        *ret = row;
        return 1;
}

/*
 * The members create, update and a price's product_data share, read from obj (prefix names
 * it in refusals: "" or "product_data") onto row: name, active, description, metadata,
 * images (up to 8 URLs), shippable, statement_descriptor (at most 22 characters), unit_label,
 * url. 1, 0 with a 400 in rp, -ENOMEM.
 */
/* "name", or "product_data[name]" below prefix "product_data": into buf (64 bytes). */
static const char *pname(char buf[static 64], const char *prefix, const char *key)
{
        if (prefix[0])
                snprintf(buf, 64, "%s[%s]", prefix, key);
        else
                snprintf(buf, 64, "%s", key);
        return buf;
}

int stripe_product_fields(TwinReply *rp, const json_t *obj, const char *prefix, json_t *row)
{
        char param[64];
        const char *name;
        bool b;
        int r;
#define PARAM(k) pname(param, prefix, k)
        if ((r = stripe_param_str(rp, obj, "name", PARAM("name"), false, &name)) <= 0)
                return r;
        if (name && !name[0])
                return stripe_invalid(rp, NULL, param,
                                      "You passed an empty string for '%s'. We assume empty "
                                      "values are an attempt to unset a parameter; however '%s' "
                                      "cannot be unset. You should remove '%s' from your request "
                                      "or supply a non-empty value.",
                                      param, param, param);
        if (name && json_object_set_new(row, "name", json_string(name)) < 0)
                return -ENOMEM;
        if (json_object_get(obj, "active")) {
                b = true;
                if ((r = stripe_param_bool(rp, obj, "active", PARAM("active"), &b)) <= 0)
                        return r;
                if (json_object_set_new(row, "active", json_boolean(b)) < 0)
                        return -ENOMEM;
        }
        if (json_object_get(obj, "shippable")) {
                b = false;
                if ((r = stripe_param_bool(rp, obj, "shippable", PARAM("shippable"), &b)) <= 0)
                        return r;
                if (json_object_set_new(row, "shippable", json_boolean(b)) < 0)
                        return -ENOMEM;
        }
        if ((r = stripe_param_strings(rp, obj, prefix, row, product_strings)) <= 0)
                return r;
        const char *sd = json_get_str(row, "statement_descriptor");
        if (sd && strlen(sd) > 22)
                return stripe_invalid(rp, NULL, PARAM("statement_descriptor"),
                                      "Statement descriptors can be at most 22 characters long.");
        json_t *images = json_object_get(obj, "images");
        if (images && !(json_is_string(images) && json_string_length(images) == 0)) {
                size_t i;
                json_t *u;
                if (!json_is_array(images))
                        return stripe_invalid(rp, NULL, PARAM("images"), "Invalid array");
                if (json_array_size(images) > 8)
                        return stripe_invalid(rp, NULL, PARAM("images"),
                                              "You may only specify up to 8 images.");
                json_array_foreach (images, i, u) {
                        if (!json_is_string(u))
                                return stripe_invalid(rp, NULL, PARAM("images"),
                                                      "Invalid array: images must be URLs");
                }
                if (json_object_set(row, "images", images) < 0)
                        return -ENOMEM;
        } else if (images && json_object_set_new(row, "images", json_array()) < 0)
                return -ENOMEM;
#undef PARAM
        return stripe_param_metadata(rp, obj, prefix[0] ? "product_data[metadata]" : "metadata",
                                     row);
}

/* A product id a caller chose (create's id): Stripe's id alphabet, not taken. 1, 0, -ENOMEM. */
static int check_custom_id(TwinCall *c, TwinReply *rp, const char *id, const char *param)
{
        size_t n = strlen(id);
        if (n == 0 || n > 255 ||
            strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") != n) {
                int r = stripe_invalid(rp, NULL, param, "Invalid id: %s", id);
                return r < 0 ? r : 0;
        }
        if (stripe_find_any(c->world, id) || stripe_find(c->world, "products", id, NULL)) {
                int r = stripe_invalid(rp, "resource_already_exists", param,
                                       "Product already exists.");
                return r < 0 ? r : 0;
        }
        return 1;
}

/*
 * Makes a product from obj (the create arguments, or a price's product_data; prefix as in
 * stripe_product_fields), validated and stored, product.created emitted; borrowed into *ret.
 * 1, 0 with a 400 in rp (nothing changed), -ENOMEM.
 */
int stripe_product_make(TwinCall *c, TwinReply *rp, const json_t *obj, const char *prefix,
                        json_t **ret)
{
        const char *name, *want_id;
        char param[64], id[40];
        int r;
        if ((r = stripe_param_str(rp, obj, "name", pname(param, prefix, "name"), true, &name)) <=
                    0 ||
            (r = stripe_param_str(rp, obj, "id", pname(param, prefix, "id"), false, &want_id)) <= 0)
                return r;
        if (want_id && (r = check_custom_id(c, rp, want_id, param)) <= 0)
                return r;
        _cleanup_json_ json_t *row = stripe_product_new("", c->now, name);
        if (!row)
                return -ENOMEM;
        if ((r = stripe_product_fields(rp, obj, prefix, row)) <= 0)
                return r;
        if (!want_id) {
                if ((r = stripe_new_id(c->world, "prod", id)) < 0)
                        return r;
                want_id = id;
        }
        if (json_object_set_new(row, "id", json_string(want_id)) < 0)
                return -ENOMEM;
        *ret = row;
        return stripe_row_add(c->world, "products", TAKE_PTR(row)) < 0 ? -ENOMEM : 1;
}

int stripe_act_create_product(TwinCall *c, TwinReply *rp)
{
        static const char *const dpd_keys[] = {"currency", "unit_amount",  "recurring",
                                               "metadata", "tax_behavior", NULL};
        json_t *dpd, *product, *price = NULL;
        int r;
        if ((r = stripe_param_object(rp, c->args, "default_price_data", "default_price_data",
                                     &dpd)) <= 0)
                return r;
        if (dpd && (r = stripe_param_known(rp, dpd, "default_price_data", dpd_keys)) <= 0)
                return r;
        /* the price is checked first, so a refused one leaves no product behind */
        _cleanup_json_ json_t *draft = NULL;
        if (dpd && (r = stripe_price_build(c, rp, dpd, "default_price_data", &draft)) <= 0)
                return r;
        if ((r = stripe_product_make(c, rp, c->args, "", &product)) <= 0)
                return r;
        if (draft) {
                if ((r = stripe_price_store(c, TAKE_PTR(draft), json_get_str(product, "id"),
                                            &price)) < 0 ||
                    json_object_set(product, "default_price", json_object_get(price, "id")) < 0)
                        return -ENOMEM;
        }
        if ((r = stripe_event(c, "product.created", product, NULL)) < 0 ||
            (price && (r = stripe_event(c, "price.created", price, NULL)) < 0) ||
            (r = stripe_mutated(rp, NULL, product)) < 0)
                return r;
        return stripe_reply_object(c, rp, 200, product);
}

int stripe_act_retrieve_product(TwinCall *c, TwinReply *rp)
{
        json_t *row;
        int r = arg_product(c, rp, &row, NULL);
        if (r <= 0)
                return r;
        return stripe_reply_object(c, rp, 200, row);
}

int stripe_act_update_product(TwinCall *c, TwinReply *rp)
{
        json_t *row;
        size_t idx;
        int r = arg_product(c, rp, &row, &idx);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *next = json_deep_copy(row);
        if (!next)
                return -ENOMEM;
        if ((r = stripe_product_fields(rp, c->args, "", next)) <= 0)
                return r;
        const char *dp;
        if ((r = stripe_arg_str(c, rp, "default_price", false, &dp)) <= 0)
                return r;
        if (dp && dp[0]) {
                json_t *price = stripe_find(c->world, "prices", dp, NULL);
                if (!price)
                        return stripe_missing(rp, "prices", dp, "default_price");
                if (!streq_ptr(json_get_str(price, "product"), json_get_str(row, "id")))
                        return stripe_invalid(rp, NULL, "default_price",
                                              "The price `%s` is not a price of the product "
                                              "`%s`: a product's default price must be one of "
                                              "its own prices.",
                                              dp, json_get_str(row, "id"));
                if (json_is_false(json_object_get(price, "active")))
                        return stripe_invalid(rp, NULL, "default_price",
                                              "The price `%s` is inactive: a product's default "
                                              "price must be active.",
                                              dp);
        }
        if (dp &&
            json_object_set_new(next, "default_price", dp[0] ? json_string(dp) : json_null()) < 0)
                return -ENOMEM;
        if (json_equal(next, row))
                return stripe_reply_object(c, rp, 200, row);
        if (json_object_set_new(next, "updated", json_integer(c->now)) < 0)
                return -ENOMEM;
        _cleanup_json_ json_t *prev = json_object();
        const char *k;
        json_t *v;
        if (!prev)
                return -ENOMEM;
        json_object_foreach (row, k, v) {
                if (!json_equal(v, json_object_get(next, k)) && json_object_set(prev, k, v) < 0)
                        return -ENOMEM;
        }
        if ((r = stripe_mutated(rp, row, next)) < 0 ||
            (r = stripe_row_replace(c->world, "products", idx, json_incref(next))) < 0 ||
            (r = stripe_event(c, "product.updated", next, prev)) < 0)
                return r;
        return stripe_reply_object(c, rp, 200, next);
}

int stripe_act_delete_product(TwinCall *c, TwinReply *rp)
{
        json_t *row;
        size_t idx, i;
        int r = arg_product(c, rp, &row, &idx);
        if (r <= 0)
                return r;
        json_t *price;
        json_array_foreach (json_object_get(c->world, "prices"), i, price) {
                if (streq_ptr(json_get_str(price, "product"), json_get_str(row, "id")))
                        return stripe_invalid(rp, NULL, NULL,
                                              "This product cannot be deleted because it has one "
                                              "or more user-created prices.");
        }
        _cleanup_json_ json_t *gone = json_incref(row);
        _cleanup_json_ json_t *stub = stripe_deleted_stub(gone);
        if (!stub)
                return -ENOMEM;
        if ((r = stripe_mutated(rp, gone, NULL)) < 0 ||
            json_array_remove(json_object_get(c->world, "products"), idx) < 0 ||
            (r = stripe_event(c, "product.deleted", gone, NULL)) < 0)
                return r < 0 ? r : -ENOMEM;
        return twin_reply_body(rp, 200, TAKE_PTR(stub));
}

static bool keep_product(TwinCall *c, json_t *row)
{
        bool active;
        if (stripe_bool(c->args, "active", &active) == 0 &&
            json_is_true(json_object_get(row, "active")) != active)
                return false;
        json_t *ids = json_object_get(c->args, "ids");
        if (json_is_array(ids)) {
                size_t i;
                json_t *x;
                json_array_foreach (ids, i, x) {
                        if (streq_ptr(json_string_value(x), json_get_str(row, "id")))
                                return true;
                }
                return false;
        }
        return true;
}

int stripe_act_list_products(TwinCall *c, TwinReply *rp)
{
        bool b;
        int r = stripe_arg_bool(c, rp, "active", &b);
        if (r <= 0)
                return r;
        json_t *ids = json_object_get(c->args, "ids");
        if (ids && !json_is_null(ids)) {
                size_t i;
                json_t *x;
                if (!json_is_array(ids))
                        return stripe_invalid(rp, NULL, "ids", "Invalid array");
                json_array_foreach (ids, i, x) {
                        if (!json_is_string(x))
                                return stripe_invalid(rp, NULL, "ids",
                                                      "Invalid array: ids must be strings");
                }
        }
        return stripe_list(c, rp, "products", "/v1/products", keep_product);
}
