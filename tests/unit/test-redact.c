/* SPDX-License-Identifier: MIT */
/*
 * The secret scanner of /_pome/state and tape rows (pods/twin/redact.c): a table of every
 * pattern, found where a word starts and nowhere else; values under secret keys; object
 * keys; strings holding NULs; no allocation when nothing matches; and the two views it
 * guards — a Slack seed's "sk-prod-…" is [REDACTED] in /_pome/state and on a tape row while
 * conversations.history still shows it as Slack would.
 */
#include <time.h>

#include "common/json-util.h"
#include "common/util.h"
#include "pods/front/front.h"
#include "pods/twin/kind.h"
#include "pods/twin/redact.h"
#include "tests/unit/check.h"
#include "tests/unit/twin-test-util.h"

#define KEY32   \
        "pome_" \
        "Ab3dEf6hIj9lMn2pQr5tUv8xYz1bCd4f" /* statedir's shape: pome_ + 32 base62 */
#define JWT                                                                                  \
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzaWQiOiJzZXNfMSIsImV4cCI6MX0.dBjftJeZ4CVP-" \
        "mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
#define OPENAI "sk-prod-7f3a9b2c4d5e6f81"

/* s scrubbed, a new string ("" stays ""), or NULL on OOM. */
static char *scrub(const char *s)
{
        char *c;
        size_t l;
        int r = twin_redact_string(s, strlen(s), &c, &l);
        if (r < 0)
                return NULL;
        return r > 0 ? c : strdup(s);
}

static void test_patterns(void)
{
        static const struct {
                const char *in;
                const char *want;
        } cases[] = {
                /* team API keys */
                {KEY32, "[REDACTED]"},
                {"my key is " KEY32 ".", "my key is [REDACTED]."},
                {"api_key=" KEY32 "&x=1", "api_key=[REDACTED]&x=1"},
                {"q=key%20" KEY32, "q=key%20[REDACTED]"}, /* after an escape */
                {"q=key%3D" KEY32 "%26", "q=key%3D[REDACTED]%26"},
                {"\"" KEY32 "\"", "\"[REDACTED]\""},
                {"pome_"
                 "abcdefghij0123456789",
                 "[REDACTED]"}, /* 20 base62: enough */
                {"pome_"
                 "abcdefghij012345678",
                 "pome_abcdefghij012345678"}, /* 19: not a key */
                {"pome_tape_rows_are_not_keys_at_all", "pome_tape_rows_are_not_keys_at_all"},
                {"x" KEY32, "x" KEY32}, /* inside a word */
                {"9" KEY32, "9" KEY32},
                {KEY32 "_tail", "[REDACTED]"}, /* the rest of the word goes too */
                {"pome_", "pome_"},
                {"pome", "pome"},
                /* sk-… (OpenAI style): at least 8 characters after the dash */
                {OPENAI, "[REDACTED]"},
                {"deploy with " OPENAI " today", "deploy with [REDACTED] today"},
                {"sk-proj-AbCdEf012345_xyz", "[REDACTED]"},
                {"sk-1234567", "sk-1234567"}, /* 7: prose, not a key */
                {"sk-12345678", "[REDACTED]"},
                {"task-12345678 desk-12345678", "task-12345678 desk-12345678"},
                {"sk-", "sk-"},
                /* Stripe */
                {"sk_test_abc sk_live_def rk_test_g rk_live_h",
                 "[REDACTED] [REDACTED] [REDACTED] [REDACTED]"},
                {"sk_test_51HxYz.rest", "[REDACTED].rest"},
                /* GitHub */
                {"ghp_a gho_b ghs_c ghu_d ghr_e github_pat_f",
                 "[REDACTED] [REDACTED] [REDACTED] [REDACTED] [REDACTED] [REDACTED]"},
                {"ghx_a gh_a sk_test_ sk_tes", "ghx_a gh_a sk_test_ sk_tes"},
                {"(ghp_16C7e42F292c6912E7710c838347Ae178B4a)", "([REDACTED])"},
                /* Slack: xox?- */
                {"xoxb-1-2 xoxp-x xox-no xoxbb-no", "[REDACTED] [REDACTED] xox-no xoxbb-no"},
                {"xoxa-2-abc xoxs-9 xoxe-1-Z xox1-no", "[REDACTED] [REDACTED] [REDACTED] xox1-no"},
                /* Google OAuth access tokens (ya29.) and Linear API keys (lin_api_, lin_oauth_):
                 * the Gmail and Linear twins' provider credentials */
                {"Bearer ya29.pome-c2VzX2Fi_1796584499_cYkksT-HifXykZl8iFUjvb x",
                 "Bearer [REDACTED] x"},
                {"lin_api_pome_c2VzX2Fi_bNBa5il6kbH lin_oauth_abcdefgh1", "[REDACTED] [REDACTED]"},
                {"ya29.short lin_api_x ya29 lin_apix", "ya29.short lin_api_x ya29 lin_apix"},
                /* JWT: three parts, the first starting eyJ */
                {"t=eyJhbGciOiJIUzI1NiJ9.eyJzIjoxfQ.c2ln!", "t=[REDACTED]!"},
                {"Bearer " JWT, "Bearer [REDACTED]"},
                {"eyJhbGciOiJIUzI1NiJ9.only", "eyJhbGciOiJIUzI1NiJ9.only"},
                {"eyJ", "eyJ"},
                {"eyJa.b eyJc.d.e", "eyJa.b [REDACTED]"},
                {"eyJa-eyJb.c.d!", "[REDACTED]!"},
                {"eyJa-eyJb.c eyJx.y.z", "eyJa-eyJb.c [REDACTED]"},
                /* PEM */
                {"a -----BEGIN KEY-----\nMIIB\n-----END KEY----- b", "a [REDACTED] b"},
                {"k=-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n",
                 "k=[REDACTED]\n"},
                {"a -----BEGIN KEY-----\nMIIB", "a [REDACTED]"},
                {"-----BEGIN", "-----BEGIN"},
                /* several */
                {"two " KEY32 " and ghp_x", "two [REDACTED] and [REDACTED]"},
                {"ghp_a,xoxb-b;" OPENAI, "[REDACTED],[REDACTED];[REDACTED]"},
                /* nothing */
                {"", ""},
                {"g", "g"},
                {"gh", "gh"},
                {"e", "e"},
                {"s", "s"},
                {"x", "x"},
                {"-", "-"},
                {"nothing here at all, see gh-pages", "nothing here at all, see gh-pages"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *out = scrub(cases[i].in);
                if (!out || !streq(out, cases[i].want)) {
                        fprintf(stderr, "redact case %zu \"%s\": got \"%s\", want \"%s\"\n", i,
                                cases[i].in, out ? out : "(null)", cases[i].want);
                        check_failures++;
                }
        }
}

/* Nothing matched: 0, *ret untouched (nothing allocated); the find says n. */
static void test_no_match(void)
{
        static const char text[] = "plain prose, gh-pages, sk-1, eyJ.x, pome_short, -----";
        char *out = (char *)"untouched";
        size_t l = 7;
        CHECK(twin_redact_string(text, sizeof(text) - 1, &out, &l) == 0);
        CHECK(streq(out, "untouched") && l == 7);
        CHECK(twin_redact_find(text, sizeof(text) - 1, 0, &l) == sizeof(text) - 1 && l == 7);
        /* find from an offset, and the length it reports */
        static const char two[] = "a ghp_x b xoxb-y";
        CHECK(twin_redact_find(two, sizeof(two) - 1, 0, &l) == 2 && l == 5);
        CHECK(twin_redact_find(two, sizeof(two) - 1, 3, &l) == 10 && l == 6);
        /* a NUL is a word boundary like any other non-word byte */
        static const char nul[] = "a\0ghp_x";
        CHECK(twin_redact_find(nul, sizeof(nul) - 1, 0, &l) == 2 && l == 5);
}

/* Milliseconds spent scrubbing n bytes of the pattern pat repeated. */
static double scrub_ms(const char *pat, size_t n)
{
        size_t pl = strlen(pat);
        _cleanup_free_ char *buf = malloc(n + 1);
        CHECK(buf);
        if (!buf)
                return 0;
        for (size_t i = 0; i < n; i++)
                buf[i] = pat[i % pl];
        buf[n] = 0;
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        _cleanup_free_ char *out = NULL;
        size_t l;
        CHECK(twin_redact_string(buf, n, &out, &l) >= 0);
        clock_gettime(CLOCK_MONOTONIC, &b);
        return (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
}

/*
 * A request body is up to 1 MiB and every tape row is scanned in pomed's loop: no input may
 * cost the square of its length. (Before the JWT skip, "eyJ-" × 256 Ki took minutes.)
 */
static void test_linear(void)
{
        static const char *const hostile[] = {
                "eyJ-",
                "eyJa.",
                "eyJ-eyJ.x-",
                "pome_abc-",
                "sk-a ",
                "-----BEGIN ",
                "-----BEGIN x-----END ",
                "xox-",
                "gh_",
                "sk_test",
                "%41ghp",
                "e",
        };
        for (size_t i = 0; i < ELEMENTSOF(hostile); i++) {
                double ms = scrub_ms(hostile[i], 1u << 20);
                if (ms > 2000) {
                        fprintf(stderr, "redact: 1 MiB of \"%s\" took %.0f ms\n", hostile[i], ms);
                        check_failures++;
                }
        }
}

static void test_keys(void)
{
        CHECK(twin_redact_key("authorization") && twin_redact_key("Authorization"));
        CHECK(twin_redact_key("x-api-key") && twin_redact_key("agent_token"));
        CHECK(twin_redact_key("TOKEN") && twin_redact_key("client_secret"));
        CHECK(!twin_redact_key("") && !twin_redact_key("tokens") && !twin_redact_key("text"));
        CHECK(!twin_redact_key("author") && !twin_redact_key("x-api"));
}

static void test_json(void)
{
        _cleanup_json_ json_t *j = json_pack(
                "{s:s, s:s, s:s, s:[s, {s:s}], s:{s:s}, s:n, s:i, s:[i, b, n]}", "note",
                "key " KEY32, "X-Api-Key", "anything", "password", "hunter2", "list", KEY32, "in",
                "ghp_abc", "nested", "Token", "plain", "secret", KEY32, 1, "scalars", 1, true);
        CHECK(j);
        /* a string that holds a NUL before the key: scrubbed past it, the NUL kept */
        json_object_set_new(j, "bytes", json_stringn("a\0 " KEY32, 3 + strlen(KEY32)));
        json_object_set_new(j, "pem",
                            json_string("-----BEGIN PRIVATE KEY-----\nAAA\n"
                                        "-----END PRIVATE KEY-----"));
        CHECK_OK(twin_redact_json(j));
        _cleanup_free_ char *dump = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
        CHECK(dump && !strstr(dump, KEY32) && !strstr(dump, "ghp_abc") && !strstr(dump, "hunter2"));
        CHECK(streq(json_get_str(j, "note"), "key [REDACTED]"));
        CHECK(streq(json_get_str(j, "X-Api-Key"), "[REDACTED]"));
        CHECK(streq(json_get_str(j, "password"), "[REDACTED]"));
        CHECK(streq(json_get_str(j, "pem"), "[REDACTED]"));
        CHECK(json_is_null(json_object_get(j, "secret"))); /* null stays null */
        CHECK(streq(json_string_value(json_array_get(json_object_get(j, "list"), 0)),
                    "[REDACTED]"));
        CHECK(streq(json_get_str(json_array_get(json_object_get(j, "list"), 1), "in"),
                    "[REDACTED]"));
        CHECK(streq(json_get_str(json_object_get(j, "nested"), "Token"), "[REDACTED]"));
        CHECK(json_integer_value(json_object_get(j, "[REDACTED]")) == 1); /* a key in a key */
        CHECK(json_array_size(json_object_get(j, "scalars")) == 3);
        json_t *b = json_object_get(j, "bytes");
        CHECK(json_string_length(b) == 13 &&
              memcmp(json_string_value(b), "a\0 [REDACTED]", 13) == 0);

        /* a document without secrets is the same document (and the same strings) */
        _cleanup_json_ json_t *clean = json_pack("{s:s, s:[s]}", "a", "hello", "b", "world");
        json_t *hello = json_object_get(clean, "a");
        CHECK_OK(twin_redact_json(clean));
        CHECK(json_object_get(clean, "a") == hello && streq(json_string_value(hello), "hello"));
        CHECK_OK(twin_redact_json(NULL));
        _cleanup_json_ json_t *str = json_string(KEY32);
        CHECK_OK(twin_redact_json(str)); /* a bare string has no parent to replace it in */
}

/*
 * The world keeps the secret (the agent reads it through the vendor's API); /_pome/state and
 * the tape row show [REDACTED].
 */
static void test_slack_views(void)
{
        _cleanup_json_ json_t *seed = twin_test_seed("slack", "default");
        json_t *msg = jp(seed, "/channels/0/messages/0");
        CHECK(msg);
        json_object_set_new(msg, "text", json_string("rotate the deploy key " OPENAI " today"));
        Twin *t = twin_test_from(&twin_kind_slack, seed);
        TwinReply rp = {};

        twin_test_req(t, &rp, "GET", "/_pome/state", NULL, NULL, NULL);
        CHECK(rp.status == 200);
        CHECK(streq(jps(rp.body, "/channels/0/messages/0/text"),
                    "rotate the deploy key [REDACTED] today"));
        _cleanup_free_ char *state = json_dumps(rp.body, JSON_COMPACT);
        CHECK(state && !strstr(state, "7f3a9b2c4d5e6f81"));

        twin_test_req(t, &rp, "POST", "/conversations.history", NULL,
                      "application/x-www-form-urlencoded", "channel=C_GENERAL");
        CHECK(rp.status == 200 && json_is_true(jp(rp.body, "/ok")));
        CHECK(streq(jps(rp.body, "/messages/1/text"), "rotate the deploy key " OPENAI " today"));

        /* the same reply as a tape row */
        _cleanup_json_ json_t *h =
                json_pack("{s:s}", "content-type", "application/x-www-form-urlencoded");
        FrontCall fc = {
                .twin = "slack",
                .run_id = "ses_test",
                .request_id = "req_0123456789abcdefghij",
                .method = "POST",
                .path = "/slack/s/ses_test/conversations.history",
                .query = "",
                .headers = h,
                .body = "channel=C_GENERAL",
                .body_len = 17,
                .ts_usec = INT64_C(1780000000) * 1000000,
        };
        _cleanup_json_ json_t *row = front_tape_row(&fc, &rp);
        CHECK(row);
        CHECK(streq(jps(row, "/response_body/messages/1/text"),
                    "rotate the deploy key [REDACTED] today"));
        _cleanup_free_ char *dump = json_dumps(row, JSON_COMPACT);
        CHECK(dump && !strstr(dump, "7f3a9b2c4d5e6f81"));
        /* the reply itself, which goes to the agent, is untouched */
        CHECK(streq(jps(rp.body, "/messages/1/text"), "rotate the deploy key " OPENAI " today"));
        twin_reply_done(&rp);
        twin_free(t);
}

int main(void)
{
        test_patterns();
        test_no_match();
        test_linear();
        test_keys();
        test_json();
        test_slack_views();
        return check_finish();
}
