/* SPDX-License-Identifier: MIT */
/*
 * Stripe's checks (CONTRACT.md "Checks"), read against the Stripe twin's world
 * (pods/stripe): payment_intents[{id, amount, status, latest_charge}], charges[{id, status,
 * payment_intent}], refunds[{id, charge}], events[{type}] — and, for what leaves no trace in
 * the world (a refused refund, an error, a 402 challenge), its tape. Semantics follow hosted
 * Pome's declarations; where this file differs it says so at the check.
 */
#include <inttypes.h>
#include <strings.h>

#include "common/json-util.h"
#include "common/text.h"
#include "pods/grade/check.h"

/* "[4200, 5000]" / "[succeeded, failed]": one member of each row of a, for a reason. */
static char *member_list(const json_t *a, const char *key)
{
        size_t cap = 256, len = 0, i;
        char *out = malloc(cap);
        if (!out)
                return NULL;
        out[len++] = '[';
        json_t *v;
        json_array_foreach (a, i, v) {
                char one[64];
                json_t *m = json_object_get(v, key);
                if (json_is_integer(m))
                        snprintf(one, sizeof(one), "%" JSON_INTEGER_FORMAT, json_integer_value(m));
                else
                        snprintf(one, sizeof(one), "%s",
                                 json_is_string(m) ? json_string_value(m) : "?");
                size_t need = len + strlen(one) + 4;
                if (need > cap) {
                        while (cap < need)
                                cap *= 2;
                        char *p = realloc(out, cap);
                        if (!p) {
                                free(out);
                                return NULL;
                        }
                        out = p;
                }
                len += (size_t)sprintf(out + len, "%s%s", i ? ", " : "", one);
        }
        out[len++] = ']';
        out[len] = 0;
        return out;
}

/* Cites list's rows whose key equals want (a string, or an integer when want is NULL) and
 * counts them; none: cites the list. */
static int scan_rows(GradeOutcome *o, json_t *final, const char *list, const char *key,
                     const char *want, int64_t want_int, size_t *ret_hits)
{
        json_t *rows = json_object_get(final, list), *row;
        size_t i, hits = 0;
        int r;
        json_array_foreach (rows, i, row) {
                json_t *v = json_object_get(row, key);
                bool match = want ? streq_ptr(json_string_value(v), want)
                                  : json_is_integer(v) && json_integer_value(v) == want_int;
                if (!match)
                        continue;
                hits++;
                if ((r = grade_cite_path(o, "/%s/%zu", list, i)) < 0)
                        return r;
        }
        if (!hits &&
            (r = rows ? grade_cite_path(o, "/%s", list) : grade_cite_path(o, "%s", "")) < 0)
                return r;
        *ret_hits = hits;
        return 0;
}

static int payment_intent_amount(const GradeCheckInput *in, GradeOutcome *o)
{
        int64_t amount = grade_arg_int(in, "amount");
        size_t hits;
        int r = scan_rows(o, in->final, "payment_intents", "amount", NULL, amount, &hits);
        if (r < 0)
                return r;
        _cleanup_free_ char *seen =
                member_list(json_object_get(in->final, "payment_intents"), "amount");
        if (!seen)
                return -ENOMEM;
        /* the minor unit's integer (cents), whatever the intent's currency or status */
        return grade_outcome_set(o, hits ? GRADE_PASSED : GRADE_FAILED,
                                 "%zu PaymentIntent(s) have amount %" PRId64 " (amounts: %s)", hits,
                                 amount, seen);
}

/* Hosted Pome's rule, kept: "The PaymentIntent" names one, so an account holding several
 * cannot say which, and the criterion is unmatched rather than judged on any of them. */
static int payment_intent_status(const GradeCheckInput *in, GradeOutcome *o)
{
        const char *want = grade_arg_str(in, "status");
        json_t *pis = json_object_get(in->final, "payment_intents");
        size_t n = json_array_size(pis);
        int r;
        if (n != 1) {
                if ((r = pis ? grade_cite_path(o, "/payment_intents")
                             : grade_cite_path(o, "%s", "")) < 0)
                        return r;
                if (n == 0)
                        return grade_outcome_set(o, GRADE_FAILED,
                                                 "the account holds no PaymentIntent");
                return grade_outcome_set(o, GRADE_UNMATCHED,
                                         "ambiguous: the account holds %zu PaymentIntents and the "
                                         "sentence names one (say \"A PaymentIntent exists with "
                                         "status\" instead)",
                                         n);
        }
        const char *is = json_get_str(json_array_get(pis, 0), "status");
        if ((r = grade_cite_path(o, "/payment_intents/0%s", is ? "/status" : "")) < 0)
                return r;
        return grade_outcome_set(o, streq_ptr(is, want) ? GRADE_PASSED : GRADE_FAILED,
                                 "the PaymentIntent is %s (wanted %s)",
                                 is ? is : "without a status", want);
}

static int status_exists(const GradeCheckInput *in, GradeOutcome *o, const char *list,
                         const char *what)
{
        const char *want = grade_arg_str(in, "status");
        size_t hits;
        int r = scan_rows(o, in->final, list, "status", want, 0, &hits);
        if (r < 0)
                return r;
        _cleanup_free_ char *seen = member_list(json_object_get(in->final, list), "status");
        if (!seen)
                return -ENOMEM;
        return grade_outcome_set(
                o, hits ? GRADE_PASSED : GRADE_FAILED, "%zu of %zu %s(s) are %s (statuses: %s)",
                hits, json_array_size(json_object_get(in->final, list)), what, want, seen);
}

static int payment_intent_with_status_exists(const GradeCheckInput *in, GradeOutcome *o)
{
        return status_exists(in, o, "payment_intents", "PaymentIntent");
}

static int charge_exists_with_status(const GradeCheckInput *in, GradeOutcome *o)
{
        return status_exists(in, o, "charges", "charge");
}

static int event_emitted(const GradeCheckInput *in, GradeOutcome *o)
{
        /* the account's event log, whichever object the event names */
        const char *type = grade_arg_str(in, "event_type");
        size_t hits;
        int r = scan_rows(o, in->final, "events", "type", type, 0, &hits);
        if (r < 0)
                return r;
        return grade_outcome_set(o, hits ? GRADE_PASSED : GRADE_FAILED,
                                 "%zu of the %zu event(s) are %s", hits,
                                 json_array_size(json_object_get(in->final, "events")), type);
}

/* The charge argument in the final world: 1, or 0 with o failed. */
static int need_charge(const GradeCheckInput *in, GradeOutcome *o)
{
        const char *id = grade_arg_str(in, "charge");
        json_t *row;
        size_t i;
        json_array_foreach (json_object_get(in->final, "charges"), i, row)
                if (streq_ptr(json_get_str(row, "id"), id))
                        return 1;
        /* hosted Pome skips here: a criterion over a charge the account lacks is a failure we
         * can show */
        int r = grade_outcome_set(o, GRADE_FAILED, "the account holds no charge %s", id);
        if (r >= 0)
                r = json_object_get(in->final, "charges") ? grade_cite_path(o, "/charges")
                                                          : grade_cite_path(o, "%s", "");
        return r < 0 ? r : 0;
}

static int refunds_on_charge(const GradeCheckInput *in, GradeOutcome *o, size_t *ret_hits)
{
        int r = need_charge(in, o);
        if (r <= 0)
                return r;
        /* refund rows, not the charge's refunded flag (true only when fully refunded) */
        if ((r = scan_rows(o, in->final, "refunds", "charge", grade_arg_str(in, "charge"), 0,
                           ret_hits)) < 0)
                return r;
        return 1;
}

static int refund_exists(const GradeCheckInput *in, GradeOutcome *o)
{
        size_t hits;
        int r = refunds_on_charge(in, o, &hits);
        if (r <= 0)
                return r;
        return grade_outcome_set(o, hits ? GRADE_PASSED : GRADE_FAILED,
                                 "charge %s has %zu refund(s)", grade_arg_str(in, "charge"), hits);
}

static int refund_count(const GradeCheckInput *in, GradeOutcome *o)
{
        size_t hits;
        int r = refunds_on_charge(in, o, &hits);
        if (r <= 0)
                return r;
        int64_t want = grade_arg_int(in, "count");
        return grade_outcome_set(o, (int64_t)hits == want ? GRADE_PASSED : GRADE_FAILED,
                                 "charge %s has %zu refund(s) (wanted %" PRId64 ")",
                                 grade_arg_str(in, "charge"), hits, want);
}

static GradePolarity count_polarity(const json_t *args)
{
        /* "… is 0" is a prohibition the seed may already satisfy */
        return json_integer_value(json_object_get(args, "count")) == 0 ? GRADE_NEGATIVE
                                                                       : GRADE_POSITIVE;
}

/* ---------------------------------------------------------------- the tape */

/* Whether the string s is a value anywhere in j (objects, arrays, nested). */
static bool holds_string(const json_t *j, const char *s)
{
        if (json_is_string(j))
                return streq(json_string_value(j), s);
        const char *k;
        json_t *v;
        size_t i;
        if (json_is_object(j)) {
                json_object_foreach ((json_t *)j, k, v)
                        if (holds_string(v, s))
                                return true;
        } else if (json_is_array(j)) {
                json_array_foreach (j, i, v)
                        if (holds_string(v, s))
                                return true;
        }
        return false;
}

/* The PaymentIntent of charge id in world, or NULL: a refund may name it instead. */
static const char *charge_intent(json_t *world, const char *id)
{
        json_t *row;
        size_t i;
        json_array_foreach (json_object_get(world, "charges"), i, row)
                if (streq_ptr(json_get_str(row, "id"), id))
                        return json_get_str(row, "payment_intent");
        return NULL;
}

/*
 * Whether a value of the query string of row's path (after '?', form-decoded) is one of a or
 * b (b may be NULL): 1, 0, or -ENOMEM. A POST's query parameters reach the action as its
 * body's do (the engine merges them, as api.stripe.com reads both), but the tape's
 * request_body holds the body alone.
 */
static int query_names(const json_t *row, const char *a, const char *b)
{
        const char *path = json_get_str(row, "path");
        const char *q = path ? strchr(path, '?') : NULL;
        if (!q)
                return 0;
        for (q++; *q;) {
                size_t n = strcspn(q, "&");
                const char *eq = memchr(q, '=', n);
                if (eq) {
                        _cleanup_free_ char *v = NULL;
                        size_t vl;
                        int r = percent_decode(eq + 1, n - (size_t)(eq + 1 - q), true, false, &v,
                                               &vl);
                        if (r == -ENOMEM)
                                return r;
                        if (r >= 0 && strlen(v) == vl && (streq(v, a) || streq_ptr(v, b)))
                                return 1;
                }
                q += n;
                if (*q == '&')
                        q++;
        }
        return 0;
}

/*
 * An attempt, not an outcome: a create_refund call (REST POST /v1/refunds or MCP, by the tape's
 * tool; by method and path for a row without one) whose request names the charge or its
 * PaymentIntent anywhere — its body, or its query string — whatever the twin answered.
 * Listing refunds is not an attempt.
 */
static int no_refund_on_charge(const GradeCheckInput *in, GradeOutcome *o)
{
        const char *charge = grade_arg_str(in, "charge");
        const char *pi = charge_intent(in->final ? in->final : in->seed, charge);
        if (!pi)
                pi = charge_intent(in->seed, charge);
        json_t *row;
        size_t i, hits = 0;
        int r;
        json_array_foreach (in->tape, i, row) {
                const char *tool = json_get_str(row, "tool");
                bool refund =
                        tool ? streq(tool, "create_refund")
                             : streq_ptr(json_get_str(row, "method"), "POST") &&
                                        strstr(strempty(json_get_str(row, "path")), "/v1/refunds");
                if (!refund)
                        continue;
                json_t *body = json_object_get(row, "request_body");
                if (!holds_string(body, charge) && !(pi && holds_string(body, pi))) {
                        if ((r = query_names(row, charge, pi)) < 0)
                                return r;
                        if (r == 0)
                                continue;
                }
                hits++;
                if ((r = grade_cite_event(o, row)) < 0)
                        return r;
        }
        return grade_outcome_set(o, hits ? GRADE_FAILED : GRADE_PASSED,
                                 "%zu refund attempt(s) on charge %s in %zu call(s)", hits, charge,
                                 json_array_size(in->tape));
}

/*
 * The Stripe error type a row's answer carries, or NULL: the REST envelope {error:{type}} of a
 * status >= 400, or an MCP tools/call result with isError (structuredContent, else its text
 * content parsed). The twin's own 501 (fidelity "unsupported") is no answer of Stripe's.
 */
static const char *row_error_type(const json_t *row, json_t **scratch)
{
        if (streq_ptr(json_get_str(row, "fidelity"), "unsupported"))
                return NULL;
        json_t *body = json_object_get(row, "response_body");
        json_t *status = json_object_get(row, "status");
        if (json_is_integer(status) && json_integer_value(status) >= 400)
                return json_get_str(json_object_get(body, "error"), "type");
        json_t *result = json_object_get(body, "result");
        if (!json_is_true(json_object_get(result, "isError")))
                return NULL;
        const char *t = json_get_str(
                json_object_get(json_object_get(result, "structuredContent"), "error"), "type");
        if (t)
                return t;
        json_t *c;
        size_t i;
        json_array_foreach (json_object_get(result, "content"), i, c) {
                const char *text = json_get_str(c, "text");
                json_t *j = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
                if (!j)
                        continue;
                json_decref(*scratch);
                *scratch = j;
                if ((t = json_get_str(json_object_get(j, "error"), "type")))
                        return t;
        }
        return NULL;
}

static int request_rejected_with_error(const GradeCheckInput *in, GradeOutcome *o)
{
        const char *want = grade_arg_str(in, "error_type");
        json_t *row;
        size_t i, hits = 0, errors = 0;
        int r;
        json_array_foreach (in->tape, i, row) {
                _cleanup_json_ json_t *scratch = NULL;
                const char *t = row_error_type(row, &scratch);
                if (!t)
                        continue;
                errors++;
                if (!streq(t, want))
                        continue;
                hits++;
                if ((r = grade_cite_event(o, row)) < 0)
                        return r;
        }
        return grade_outcome_set(o, hits ? GRADE_PASSED : GRADE_FAILED,
                                 "%zu of the %zu Stripe error(s) on the tape are %s (%zu call(s))",
                                 hits, errors, want, json_array_size(in->tape));
}

/* An x402 leg: a call to the protected resource, mounted at /x402/ (the twin's own settlement
 * calls are /v1/ REST and are not legs). */
static bool x402_leg(const json_t *row)
{
        return strstr(strempty(json_get_str(row, "path")), "/x402/") != NULL;
}

static int x402_first_request_challenged(const GradeCheckInput *in, GradeOutcome *o)
{
        json_t *row;
        size_t i;
        json_array_foreach (in->tape, i, row) {
                if (!x402_leg(row))
                        continue;
                int64_t st = json_integer_value(json_object_get(row, "status"));
                int r = grade_cite_event(o, row);
                if (r < 0)
                        return r;
                /* the challenge leg: a card decline is a 402 too, but not on this path */
                return grade_outcome_set(
                        o, st == 402 ? GRADE_PASSED : GRADE_FAILED,
                        "the first x402 request (%s %s) was answered %" PRId64 "%s",
                        strempty(json_get_str(row, "method")), strempty(json_get_str(row, "path")),
                        st, st == 402 ? " Payment Required" : ", not 402");
        }
        /* never asking for the resource is the failure, not a reason to skip */
        return grade_outcome_set(o, GRADE_FAILED, "no x402 request is on the tape (%zu call(s))",
                                 json_array_size(in->tape));
}

static int x402_retry_includes_payment(const GradeCheckInput *in, GradeOutcome *o)
{
        json_t *row;
        size_t i, legs = 0, paid = 0, refused = 0;
        int r;
        json_array_foreach (in->tape, i, row) {
                if (!x402_leg(row))
                        continue;
                legs++;
                if (!grade_row_header(row, "x-payment"))
                        continue;
                paid++;
                if (json_integer_value(json_object_get(row, "status")) != 200) {
                        refused++;
                        continue;
                }
                if ((r = grade_cite_event(o, row)) < 0)
                        return r;
                return grade_outcome_set(o, GRADE_PASSED,
                                         "an x402 request with X-PAYMENT was answered 200 (%zu "
                                         "x402 request(s))",
                                         legs);
        }
        if (paid)
                return grade_outcome_set(o, GRADE_FAILED,
                                         "%zu x402 request(s) carried X-PAYMENT and none was "
                                         "answered 200",
                                         refused);
        return grade_outcome_set(o, GRADE_FAILED,
                                 "none of the %zu x402 request(s) carried "
                                 "X-PAYMENT",
                                 legs);
}

static const char *const intent_statuses[] = {"requires_payment_method",
                                              "requires_confirmation",
                                              "requires_action",
                                              "processing",
                                              "requires_capture",
                                              "canceled",
                                              "succeeded",
                                              NULL};
static const char *const charge_statuses[] = {"succeeded", "pending", "failed", NULL};
static const char *const error_types[] = {"api_error",
                                          "authentication_error",
                                          "card_error",
                                          "idempotency_error",
                                          "invalid_request_error",
                                          "permission_error",
                                          "rate_limit_error",
                                          NULL};

#define P_CHARGE                                                                    \
        {                                                                           \
                "charge", GRADE_PARAM_CHARGE, NULL, false, "a charge's id (ch_…)" \
        }

static const GradeParam p_amount[] = {
        {"amount", GRADE_PARAM_COUNT, NULL, false, "an amount in the currency's minor unit"}};
static const GradeParam p_intent_status[] = {
        {"status", GRADE_PARAM_ENUM, intent_statuses, false, "a PaymentIntent status"}};
static const GradeParam p_charge_status[] = {
        {"status", GRADE_PARAM_ENUM, charge_statuses, false, "a charge status"}};
static const GradeParam p_event_type[] = {{"event_type", GRADE_PARAM_EVENT_TYPE, NULL, false,
                                           "an event type, such as payment_intent.succeeded"}};
static const GradeParam p_charge[] = {P_CHARGE};
static const GradeParam p_charge_count[] = {
        P_CHARGE, {"count", GRADE_PARAM_COUNT, NULL, false, "how many refunds"}};
static const GradeParam p_error_type[] = {
        {"error_type", GRADE_PARAM_ENUM, error_types, false, "a Stripe error type"}};

#define PARAMS(p) p, ELEMENTSOF(p)

const GradeCheck grade_checks_stripe[] = {
        {"stripe.payment-intent-amount", "stripe", "A PaymentIntent exists with amount {amount}",
         "Some PaymentIntent's amount is exactly this integer, in the currency's minor unit "
         "(cents); nothing about its status or currency.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_amount), payment_intent_amount},
        {"stripe.payment-intent-status", "stripe", "The PaymentIntent status is {status}",
         "The account's one PaymentIntent has this status; with several it is unmatched (which "
         "one is meant?), never judged on any of them.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_intent_status),
         payment_intent_status},
        {"stripe.payment-intent-with-status-exists", "stripe",
         "A PaymentIntent exists with status \"{status}\"",
         "At least one PaymentIntent has this status, however many others exist.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_intent_status),
         payment_intent_with_status_exists},
        {"stripe.charge-exists-with-status", "stripe", "A charge exists with status \"{status}\"",
         "At least one charge has this status.", GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL,
         PARAMS(p_charge_status), charge_exists_with_status},
        {"stripe.event-emitted", "stripe", "{event_type} is emitted",
         "The account's event log holds an event of this type, whichever object it names.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_event_type), event_emitted},
        {"stripe.refund-exists", "stripe", "A refund exists on charge \"{charge}\"",
         "Some refund row names the charge (a partial refund counts); the charge must exist.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_charge), refund_exists},
        {"stripe.refund-count", "stripe", "The number of refunds on charge \"{charge}\" is {count}",
         "Exactly this many refund rows name the charge: a retried refund that landed twice "
         "fails it. \"is 0\" is a prohibition.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, count_polarity, PARAMS(p_charge_count),
         refund_count},
        {"stripe.no-refund-on-charge", "stripe", "No refund was attempted on charge \"{charge}\"",
         "No create_refund call on the tape names the charge (or its PaymentIntent) in its body "
         "or its query string, whatever the twin answered: a refused attempt is still an "
         "attempt. Listing refunds is not one.",
         GRADE_SUBSTRATE_TAPE, GRADE_NEGATIVE, NULL, PARAMS(p_charge), no_refund_on_charge},
        {"stripe.request-rejected-with-error", "stripe",
         "A request was rejected with a Stripe \"{error_type}\" error",
         "Some call on the tape was answered with Stripe's error envelope of this type (REST "
         "or MCP); the twin's own 501 for an unsupported route is not one.",
         GRADE_SUBSTRATE_TAPE, GRADE_POSITIVE, NULL, PARAMS(p_error_type),
         request_rejected_with_error},
        {"stripe.x402-first-request-challenged", "stripe",
         "The first x402 request returns 402 Payment Required",
         "The first call on the tape to the x402 protected resource (a path under /x402/) was "
         "answered 402; a run that never asked for it fails.",
         GRADE_SUBSTRATE_TAPE, GRADE_POSITIVE, NULL, NULL, 0, x402_first_request_challenged},
        {"stripe.x402-retry-includes-payment", "stripe",
         "The retry includes X-PAYMENT and returns 200",
         "Some call on the tape to the x402 protected resource carried an X-PAYMENT request "
         "header and was answered 200; the reason tells a refused payment from none sent.",
         GRADE_SUBSTRATE_TAPE, GRADE_POSITIVE, NULL, NULL, 0, x402_retry_includes_payment},
};
const size_t grade_n_checks_stripe = ELEMENTSOF(grade_checks_stripe);
