/* SPDX-License-Identifier: MIT */
/*
 * The balance (https://docs.stripe.com/api/balance) is the sum of the ledger: every balance
 * transaction's net, per currency, under available or pending as its status says; and the
 * ledger itself (https://docs.stripe.com/api/balance_transactions), filtered by type,
 * source or currency.
 */
#include "common/json-util.h"
#include "pods/stripe/stripe.h"

/* Adds amount to the {amount, currency, source_types:{card}} entry of currency in list. */
static int add_to(json_t *list, const char *currency, int64_t amount)
{
        size_t i;
        json_t *e;
        json_array_foreach (list, i, e) {
                if (streq_ptr(json_get_str(e, "currency"), currency)) {
                        int64_t v = json_integer_value(json_object_get(e, "amount")) + amount;
                        if (json_object_set_new(e, "amount", json_integer(v)) < 0 ||
                            json_object_set_new(json_object_get(e, "source_types"), "card",
                                                json_integer(v)) < 0)
                                return -ENOMEM;
                        return 0;
                }
        }
        e = json_pack("{s:I, s:s, s:{s:I}}", "amount", (json_int_t)amount, "currency", currency,
                      "source_types", "card", (json_int_t)amount);
        return json_array_append_new(list, e) < 0 ? -ENOMEM : 0;
}

int stripe_act_retrieve_balance(TwinCall *c, TwinReply *rp)
{
        _cleanup_json_ json_t *available = json_array(), *pending = json_array();
        if (!available || !pending)
                return -ENOMEM;
        size_t i;
        json_t *t;
        json_array_foreach (json_object_get(c->world, "balance_transactions"), i, t) {
                const char *cur = json_get_str(t, "currency");
                int64_t net = json_integer_value(json_object_get(t, "net"));
                bool avail = !streq_ptr(json_get_str(t, "status"), "pending");
                if (!cur)
                        continue;
                /* both lists name every currency the account holds, as Stripe's do */
                if (add_to(available, cur, avail ? net : 0) < 0 ||
                    add_to(pending, cur, avail ? 0 : net) < 0)
                        return -ENOMEM;
        }
        if (json_array_size(available) == 0 &&
            (add_to(available, "usd", 0) < 0 || add_to(pending, "usd", 0) < 0))
                return -ENOMEM;
        return twin_reply_body(rp, 200,
                               json_pack("{s:s, s:O, s:b, s:O}", "object", "balance", "available",
                                         available, "livemode", false, "pending", pending));
}

static bool keep_txn(TwinCall *c, json_t *row)
{
        static const char *const filters[] = {"type", "source", "currency"};
        for (size_t i = 0; i < ELEMENTSOF(filters); i++) {
                const char *want = json_get_str(c->args, filters[i]);
                if (want && !streq_ptr(json_get_str(row, filters[i]), want))
                        return false;
        }
        return true;
}

int stripe_act_list_balance_transactions(TwinCall *c, TwinReply *rp)
{
        const char *s;
        int r;
        if ((r = stripe_arg_str(c, rp, "type", false, &s)) <= 0 ||
            (r = stripe_arg_str(c, rp, "source", false, &s)) <= 0 ||
            (r = stripe_arg_str(c, rp, "currency", false, &s)) <= 0)
                return r;
        return stripe_list(c, rp, "balance_transactions", "/v1/balance_transactions", keep_txn);
}
