/* SPDX-License-Identifier: MIT */
/*
 * Test clocks (https://docs.stripe.com/api/test_clocks): create, retrieve, list, delete,
 * advance. A customer created with test_clock lives at the clock's frozen_time, and so do its
 * subscriptions, invoices and payments; advancing the clock runs, in time order, what comes
 * due on its subscriptions until the new frozen_time (subscriptions.c: renewals paid the way
 * the first invoice was, or past_due on a decline; trials ending; cancellations at period
 * end), each at its own instant. As on Stripe, frozen_time must move forward, and by at most
 * two periods of the clock's shortest subscription (two years without one). The twin has no
 * background work: the advance is done when the call returns. Its reply is the clock as
 * Stripe answers it (status "advancing"); read back, the clock is "ready". Deleting a clock
 * deletes its customers, their subscriptions and invoices, as Stripe does.
 */
#include "common/json-util.h"
#include "pods/stripe/stripe.h"

#define TWO_YEARS_MONTHS 24

/*
 * The time objects of the test clock clock_id (NULL: none) live at: its frozen_time, else the
 * call's own c->now. Seconds since the epoch.
 */
int64_t stripe_clock_time(TwinCall *c, const char *clock_id)
{
        json_t *clock = clock_id ? stripe_find(c->world, "test_clocks", clock_id, NULL) : NULL;
        return clock ? json_integer_value(json_object_get(clock, "frozen_time")) : c->now;
}

/* The clock args.id names: 1 (*ret, *ret_idx), 0 with 404 in rp. */
static int arg_clock(TwinCall *c, TwinReply *rp, json_t **ret, size_t *ret_idx)
{
        const char *id;
        int r = stripe_arg_id(c, rp, "id", &id);
        if (r <= 0)
                return r;
        json_t *clock = stripe_find(c->world, "test_clocks", id, ret_idx);
        if (!clock) {
                r = stripe_missing(rp, "test_clocks", id, "id");
                return r < 0 ? r : 0;
        }
        *ret = clock;
        return 1;
}

/* frozen_time: a timestamp (seconds; up to the year 9999). */
static int arg_time(TwinCall *c, TwinReply *rp, int64_t *ret)
{
        return stripe_param_int(rp, c->args, "frozen_time", "frozen_time", 0, INT64_C(253402300799),
                                true, ret);
}

int stripe_act_create_test_clock(TwinCall *c, TwinReply *rp)
{
        int64_t frozen = 0;
        const char *name;
        char id[40];
        int r;
        if ((r = arg_time(c, rp, &frozen)) <= 0 ||
            (r = stripe_arg_str(c, rp, "name", false, &name)) <= 0)
                return r;
        if (name && strlen(name) > 300)
                return stripe_invalid(rp, NULL, "name",
                                      "A test clock's name can be at most 300 characters long.");
        if ((r = stripe_new_id(c->world, "clock", id)) < 0)
                return r;
        /* Stripe removes a test clock seven days after its creation */
        json_t *clock = json_pack(
                "{s:s, s:s, s:I, s:I, s:I, s:b, s:o, s:s, s:{}}", "id", id, "object",
                "test_helpers.test_clock", "created", (json_int_t)c->now, "deletes_after",
                (json_int_t)(c->now + 7 * 86400), "frozen_time", (json_int_t)frozen, "livemode",
                false, "name", json_string_or_null(name && name[0] ? name : NULL), "status",
                "ready", "status_details");
        if (!clock || (r = stripe_row_add(c->world, "test_clocks", clock)) < 0 ||
            (r = stripe_event(c, "test_helpers.test_clock.created", clock, NULL)) < 0 ||
            (r = stripe_mutated(rp, NULL, clock)) < 0)
                return r < 0 ? r : -ENOMEM;
        return stripe_reply_object(c, rp, 200, clock);
}

int stripe_act_retrieve_test_clock(TwinCall *c, TwinReply *rp)
{
        json_t *clock;
        int r = arg_clock(c, rp, &clock, NULL);
        if (r <= 0)
                return r;
        return stripe_reply_object(c, rp, 200, clock);
}

int stripe_act_list_test_clocks(TwinCall *c, TwinReply *rp)
{
        return stripe_list(c, rp, "test_clocks", "/v1/test_helpers/test_clocks", NULL);
}

/* Removes the rows of collection whose test_clock is id. 0 or -ENOMEM. */
static int drop_clocked(TwinCall *c, const char *collection, const char *id)
{
        json_t *rows = json_object_get(c->world, collection);
        for (size_t i = json_array_size(rows); i-- > 0;)
                if (streq_ptr(json_get_str(json_array_get(rows, i), "test_clock"), id) &&
                    json_array_remove(rows, i) < 0)
                        return -ENOMEM;
        return 0;
}

int stripe_act_delete_test_clock(TwinCall *c, TwinReply *rp)
{
        json_t *clock;
        size_t idx, i;
        int r = arg_clock(c, rp, &clock, &idx);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *gone = json_incref(clock);
        _cleanup_json_ json_t *stub = stripe_deleted_stub(gone);
        if (!stub)
                return -ENOMEM;
        const char *id = json_get_str(gone, "id");
        /* the objects of the clock go with it: its customers (read as deleted), their
         * subscriptions and invoices */
        json_t *cus;
        json_array_foreach (json_object_get(c->world, "customers"), i, cus) {
                if (streq_ptr(json_get_str(cus, "test_clock"), id) &&
                    json_object_set_new(cus, "deleted", json_true()) < 0)
                        return -ENOMEM;
        }
        if ((r = drop_clocked(c, "subscriptions", id)) < 0 ||
            (r = drop_clocked(c, "invoices", id)) < 0 || (r = stripe_mutated(rp, gone, NULL)) < 0 ||
            json_array_remove(json_object_get(c->world, "test_clocks"), idx) < 0 ||
            (r = stripe_event(c, "test_helpers.test_clock.deleted", gone, NULL)) < 0)
                return r < 0 ? r : -ENOMEM;
        return twin_reply_body(rp, 200, TAKE_PTR(stub));
}

/* The subscription of clock id whose change comes first, by until at the latest (borrowed), or
 * NULL when none is due. */
static json_t *next_due(TwinCall *c, const char *id, int64_t until)
{
        json_t *best = NULL, *sub;
        int64_t when = INT64_MAX;
        size_t i;
        json_array_foreach (json_object_get(c->world, "subscriptions"), i, sub) {
                int64_t due = stripe_subscription_due(sub);
                if (streq_ptr(json_get_str(sub, "test_clock"), id) && due <= until && due < when) {
                        best = sub;
                        when = due;
                }
        }
        return best;
}

int stripe_act_advance_test_clock(TwinCall *c, TwinReply *rp)
{
        json_t *clock;
        size_t i;
        int64_t frozen = 0;
        int r = arg_clock(c, rp, &clock, NULL);
        if (r <= 0 || (r = arg_time(c, rp, &frozen)) <= 0)
                return r;
        const char *id = json_get_str(clock, "id");
        int64_t now = json_integer_value(json_object_get(clock, "frozen_time"));
        if (frozen <= now)
                return stripe_invalid(rp, NULL, "frozen_time",
                                      "The test clock's frozen_time can only move forward: %lld "
                                      "is not after its current frozen_time %lld.",
                                      (long long)frozen, (long long)now);
        /* Stripe's bound: two periods of the shortest subscription, else two years */
        int64_t limit = stripe_interval_add(now, "month", TWO_YEARS_MONTHS);
        bool any = false;
        json_t *sub;
        json_array_foreach (json_object_get(c->world, "subscriptions"), i, sub) {
                if (!streq_ptr(json_get_str(sub, "test_clock"), id) ||
                    stripe_subscription_due(sub) == INT64_MAX)
                        continue;
                int64_t l = stripe_subscription_two_periods(sub, now);
                limit = any && limit < l ? limit : l;
                any = true;
        }
        if (frozen > limit)
                return stripe_invalid(rp, NULL, "frozen_time",
                                      "Cannot advance the test clock more than two intervals of "
                                      "its shortest subscription (or two years when it has "
                                      "none) at once: %lld is after %lld.",
                                      (long long)frozen, (long long)limit);

        _cleanup_json_ json_t *before = json_deep_copy(clock);
        if (!before || json_object_set_new(clock, "status", json_string("advancing")) < 0 ||
            json_object_set_new(clock, "frozen_time", json_integer(frozen)) < 0 ||
            (r = stripe_event(c, "test_helpers.test_clock.advancing", clock, NULL)) < 0)
                return r < 0 ? r : -ENOMEM;
        _cleanup_json_ json_t *reply = json_deep_copy(clock);
        if (!reply)
                return -ENOMEM;
        /* what comes due, in time order across the clock's subscriptions */
        while ((sub = next_due(c, id, frozen)))
                if ((r = stripe_subscription_renew(c, sub)) < 0)
                        return r;
        /* the renewals may have moved the rows: find the clock again */
        clock = stripe_find(c->world, "test_clocks", id, NULL);
        if (!clock || json_object_set_new(clock, "status", json_string("ready")) < 0 ||
            (r = stripe_event(c, "test_helpers.test_clock.ready", clock, NULL)) < 0 ||
            (r = stripe_mutated(rp, before, clock)) < 0)
                return r < 0 ? r : -ENOMEM;
        return stripe_reply_object(c, rp, 200, reply);
}
