/* SPDX-License-Identifier: MIT */
/*
 * Test clocks (https://docs.stripe.com/api/test_clocks): the time a clocked customer's
 * objects live at. The clocks themselves (create, advance …) are not served yet: without one,
 * a subscription lives at the call's own time.
 */
#include "common/json-util.h"
#include "pods/stripe/stripe.h"

/*
 * The time objects of the test clock clock_id (NULL: none) live at: its frozen_time, else the
 * call's own c->now. Seconds since the epoch.
 */
int64_t stripe_clock_time(TwinCall *c, const char *clock_id)
{
        json_t *clock = clock_id ? stripe_find(c->world, "test_clocks", clock_id, NULL) : NULL;
        return clock ? json_integer_value(json_object_get(clock, "frozen_time")) : c->now;
}
