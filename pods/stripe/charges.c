/* SPDX-License-Identifier: MIT */
/*
 * Charges (https://docs.stripe.com/api/charges): made by confirming payment intents
 * (payment_intents.c), read here: retrieve, and list filtered by customer or
 * payment_intent. amount_refunded and refunded follow the refunds (refunds.c).
 */
#include "common/json-util.h"
#include "pods/stripe/stripe.h"

int stripe_act_retrieve_charge(TwinCall *c, TwinReply *rp)
{
        const char *id;
        int r = stripe_arg_id(c, rp, "id", &id);
        if (r <= 0)
                return r;
        json_t *ch = stripe_find(c->world, "charges", id, NULL);
        if (!ch)
                return stripe_missing(rp, "charges", id, "id");
        return stripe_reply_object(c, rp, 200, ch);
}

static bool keep_charge(TwinCall *c, json_t *row)
{
        const char *cus = json_get_str(c->args, "customer");
        const char *pi = json_get_str(c->args, "payment_intent");
        return (!cus || streq_ptr(json_get_str(row, "customer"), cus)) &&
               (!pi || streq_ptr(json_get_str(row, "payment_intent"), pi));
}

int stripe_act_list_charges(TwinCall *c, TwinReply *rp)
{
        const char *s;
        int r;
        if ((r = stripe_arg_str(c, rp, "customer", false, &s)) <= 0 ||
            (r = stripe_arg_str(c, rp, "payment_intent", false, &s)) <= 0)
                return r;
        return stripe_list(c, rp, "charges", "/v1/charges", keep_charge);
}
