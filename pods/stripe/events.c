/* SPDX-License-Identifier: MIT */
/*
 * Events (https://docs.stripe.com/api/events): every world change appends the event Stripe
 * would emit, in order; GET /v1/events lists them newest first, filtered by type (a
 * trailing ".*" matches a family, as Stripe's "charge.*") or types[].
 */
#include "common/json-util.h"
#include "pods/stripe/stripe.h"

#define STRIPE_API_VERSION "2024-06-20"

/*
 * Appends the event type ("charge.succeeded") about object (borrowed, copied as the event's
 * data.object) with previous_attributes when previous is not NULL, created now, carrying the
 * request's Idempotency-Key as Stripe does. 0 or -ENOMEM.
 */
int stripe_event(TwinCall *c, const char *type, const json_t *object, const json_t *previous)
{
        char id[40];
        int r = stripe_new_id(c->world, "evt", id);
        if (r < 0)
                return r;
        const char *key = c->request ? json_get_str(c->request->headers, "idempotency-key") : NULL;
        json_t *data = json_pack("{s:o}", "object", json_deep_copy(object));
        if (!data || (previous && json_object_set_new(data, "previous_attributes",
                                                      json_deep_copy(previous)) < 0)) {
                json_decref(data);
                return -ENOMEM;
        }
        json_t *ev =
                json_pack("{s:s, s:s, s:s, s:I, s:o, s:b, s:i, s:{s:n, s:s?}, s:s}", "id", id,
                          "object", "event", "api_version", STRIPE_API_VERSION, "created",
                          (json_int_t)c->now, "data", data, "livemode", false, "pending_webhooks",
                          0, "request", "id", "idempotency_key", key, "type", type);
        return stripe_row_add(c->world, "events", ev);
}

int stripe_act_retrieve_event(TwinCall *c, TwinReply *rp)
{
        const char *id;
        int r = stripe_arg_id(c, rp, "id", &id);
        if (r <= 0)
                return r;
        json_t *ev = stripe_find(c->world, "events", id, NULL);
        if (!ev)
                return stripe_missing(rp, "events", id, "id");
        return stripe_reply_object(c, rp, 200, ev);
}

static bool type_matches(const char *pattern, const char *type)
{
        size_t l = strlen(pattern);
        if (l >= 2 && streq(pattern + l - 2, ".*"))
                return strncmp(type, pattern, l - 1) == 0;
        return streq(pattern, type);
}

static bool keep_event(TwinCall *c, json_t *ev)
{
        const char *type = strempty(json_get_str(ev, "type"));
        const char *want = json_get_str(c->args, "type");
        json_t *types = json_object_get(c->args, "types");
        if (want && !type_matches(want, type))
                return false;
        if (json_is_array(types) && json_array_size(types) > 0) {
                size_t i;
                json_t *t;
                json_array_foreach (types, i, t) {
                        if (json_is_string(t) && type_matches(json_string_value(t), type))
                                return true;
                }
                return false;
        }
        return true;
}

int stripe_act_list_events(TwinCall *c, TwinReply *rp)
{
        const char *type;
        int r = stripe_arg_str(c, rp, "type", false, &type);
        if (r <= 0)
                return r;
        json_t *types = json_object_get(c->args, "types");
        if (types && !json_is_array(types) && !json_is_null(types))
                return stripe_invalid(rp, NULL, "types", "Invalid array");
        if (type && json_is_array(types))
                return stripe_invalid(rp, NULL, "types",
                                      "You may only specify one of these parameters: type, types.");
        return stripe_list(c, rp, "events", "/v1/events", keep_event);
}
