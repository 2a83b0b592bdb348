/* SPDX-License-Identifier: MIT */
/*
 * Why a sentence binds no check (grade_bind's reason): the nearest templates of its twin
 * ("did you mean"), closest first and at most three, with the differences of the sentence
 * marked «what it says→what the template says»; the number of errors when there are several;
 * nothing suggested for a sentence near no template; the same bytes every time.
 */
#include "common/text.h"
#include "pods/grade/check.h"
#include "tests/unit/check.h"

/* grade_bind's reason for a sentence that must not bind (a new string). */
static char *reason_at(const char *sentence, const char *twin, const char *file, int line)
{
        const GradeCheck *c = NULL;
        json_t *args = NULL;
        char *why = NULL;
        int r = grade_bind(sentence, twin, &c, &args, &why);
        if (r != 0) {
                fprintf(stderr, "%s:%d: \"%s\" gave %d (%s)\n", file, line, sentence, r,
                        r > 0 ? c->id : "error");
                check_failures++;
                json_decref(args);
                return strdup("");
        }
        CHECK(why && utf8_valid(why, strlen(why)));
        /* deterministic: the verdict holding it is compared byte for byte */
        char *again = NULL;
        CHECK(grade_bind(sentence, twin, &c, &args, &again) == 0);
        CHECK(streq_ptr(why, again));
        free(again);
        return why;
}

#define EXPECT_REASON(sentence, twin, want)                                                     \
        do {                                                                                    \
                _cleanup_free_ char *_w_ = reason_at(sentence, twin, __FILE__, __LINE__);       \
                if (!streq(_w_, want)) {                                                        \
                        fprintf(stderr, "%s:%d: \"%s\":\n  got    %s\n  wanted %s\n", __FILE__, \
                                __LINE__, sentence, _w_, want);                                 \
                        check_failures++;                                                       \
                }                                                                               \
        } while (0)

static void test_did_you_mean(void)
{
        /* one misspelt word, widened to the whole word */
        EXPECT_REASON("Issue #1 in `acme/api` is assinged to `alice`", "github",
                      "no github check has a sentence template this matches; did you mean: "
                      "`Issue #{issue} in `{repo}` is assigned to `{login}`` (the sentence "
                      "differs: Issue #1 in `acme/api` is «assinged→assigned» to `alice`)");
        /* several errors are counted, each marked; a missing character is «→x» */
        EXPECT_REASON("Issue #1 in acme/api is assigned to alice", "github",
                      "no github check has a sentence template this matches; did you mean: "
                      "`Issue #{issue} in `{repo}` is assigned to `{login}`` (the sentence has 4 "
                      "errors: Issue #1 in «→`»acme/api«→`» is assigned to «→`»alice«→`»)");
        /* a value the template's slot cannot hold is one of the errors */
        EXPECT_REASON("Issue #x in `acme/api` is asigned to `alice`", "github",
                      "no github check has a sentence template this matches; did you mean: "
                      "`Issue #{issue} in `{repo}` is assigned to `{login}`` (the sentence has 2 "
                      "errors: Issue «#x→#{issue}» in `acme/api` is «asigned→assigned» to "
                      "`alice`)");
        /* a misspelt word that a slot's value could not be taken into the difference */
        EXPECT_REASON("Issue #1 in `acme/api` is closed", "github",
                      "no github check has a sentence template this matches; did you mean: "
                      "`Issue #{issue} in `{repo}` is in state {state}` (the sentence differs: "
                      "Issue #1 in `acme/api` is «closed→in state {state}»)");
        /* text after the template is extra; the value stops where its type must */
        EXPECT_REASON("Issue #1 in `acme/api` is assigned to `alice` now", "github",
                      "no github check has a sentence template this matches; did you mean: "
                      "`Issue #{issue} in `{repo}` is assigned to `{login}`` (the sentence "
                      "differs: Issue #1 in `acme/api` is assigned to `alice«` now→`»)");
        /* several near templates: closest first, at most three */
        EXPECT_REASON("No message was posted in the \"random\" channel", "slack",
                      "no slack check has a sentence template this matches; did you mean: `No "
                      "message was posted to the \"{channel}\" channel` (the sentence differs: No "
                      "message was posted «in→to» the \"random\" channel), `No new message was "
                      "posted to the \"{channel}\" channel` or `No \"{reaction}\" reaction was "
                      "added in the \"{channel}\" channel`");
        EXPECT_REASON("`create_issue` was not called", "github",
                      "no github check has a sentence template this matches; did you mean: "
                      "``{tool}` was never called` (the sentence differs: `create_issue` was "
                      "«not→never» called) or ``{tool}` was called`");
        EXPECT_REASON("A refund exists on charge ch_test_200", "stripe",
                      "no stripe check has a sentence template this matches; did you mean: `A "
                      "refund exists on charge \"{charge}\"` (the sentence has 2 errors: A refund "
                      "exists on charge «→\"»ch_test_200«→\"»)");
        EXPECT_REASON("The number of refunds on charge \"ch_test_200\" equals 1", "stripe",
                      "no stripe check has a sentence template this matches; did you mean: `The "
                      "number of refunds on charge \"{charge}\" is {count}` (the sentence differs: "
                      "The number of refunds on charge \"ch_test_200\" «equals→is» 1)");
        /* case counts: binding is exact */
        EXPECT_REASON("issue #1 in `acme/api` is in state open", "github",
                      "no github check has a sentence template this matches; did you mean: "
                      "`Issue #{issue} in `{repo}` is in state {state}` (the sentence differs: "
                      "«issue→Issue» #1 in `acme/api` is in state open)");
        /* a slot left empty is named */
        EXPECT_REASON("Issue in `acme/api` is assigned to `alice`", "github",
                      "no github check has a sentence template this matches; did you mean: "
                      "`Issue #{issue} in `{repo}` is assigned to `{login}`` (the sentence "
                      "differs: «Issue→Issue #{issue}» in `acme/api` is assigned to `alice`)");
}

/* Far from every template: no guess, the reason as before. */
static void test_near_nothing(void)
{
        EXPECT_REASON("The moon is made of cheese", "github",
                      "no github check has a sentence template this matches");
        EXPECT_REASON("The channel agrees with GitHub", "slack",
                      "no slack check has a sentence template this matches");
        EXPECT_REASON("The refund was issued exactly once", "stripe",
                      "no stripe check has a sentence template this matches");
        /* the right words with a bad value keep their precise reason */
        EXPECT_REASON("Issue #1 in `acme/api` is in state opened", "github",
                      "the sentence has the shape of github.issue-state (\"Issue #{issue} in "
                      "`{repo}` is in state {state}\") but parameter state must be one of open, "
                      "closed, got \"opened\"");
        /* a sentence past the binder's limit is not compared at all */
        char *big = malloc(3000);
        memset(big, 'x', 2999);
        big[2999] = 0;
        EXPECT_REASON(big, "github", "the sentence is longer than any check's template allows");
        free(big);
}

/* A long sentence is shown cut around its differences. */
static void test_long_sentence(void)
{
        char sentence[1500];
        size_t n = (size_t)snprintf(sentence, sizeof(sentence), "A comment containing \"");
        for (int i = 0; i < 150; i++)
                n += (size_t)snprintf(sentence + n, sizeof(sentence) - n, "é");
        n += (size_t)snprintf(sentence + n, sizeof(sentence) - n, " root cause ");
        for (int i = 0; i < 200; i++)
                sentence[n++] = 'x';
        snprintf(sentence + n, sizeof(sentence) - n, "\" exist on issue #1 in `acme/api`");
        _cleanup_free_ char *why = reason_at(sentence, "github", __FILE__, __LINE__);
        CHECK(strstr(why, "did you mean: `A comment containing \"{needle}\" exists on issue "
                          "#{issue} in `{repo}``"));
        CHECK(strstr(why, "(the sentence differs: …xxxxxxxxxxxxxxxxxxxxxx\" «exist→exists» on "
                          "issue #1 in `acme/api`)"));
        CHECK(strlen(why) < 400 && !strstr(why, "é"));
}

/* A count is digits or a number word up to twenty, as hosted Pome's tasks write it ("At least
 * two drafts exist"), whatever twin's check takes it; any other word is no count. */
static void test_count_words(void)
{
        static const struct {
                const char *sentence, *twin;
                int64_t count; /* -1: binds nothing */
        } cases[] = {
                {"At least two drafts exist", "gmail", 2},
                {"At least Twenty drafts exist", "gmail", 20},
                {"At least 21 drafts exist", "gmail", 21},
                {"At least some drafts exist", "gmail", -1},
                {"At least twentyone drafts exist", "gmail", -1},
                {"The number of refunds on charge \"ch_1\" is zero", "stripe", 0},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const GradeCheck *c = NULL;
                json_t *args = NULL;
                char *why = NULL;
                int r = grade_bind(cases[i].sentence, cases[i].twin, &c, &args, &why);
                if (cases[i].count < 0)
                        CHECK(r == 0 && why);
                else
                        CHECK(r == 1 &&
                              json_integer_value(json_object_get(args, "count")) == cases[i].count);
                json_decref(args);
                free(why);
        }
}

int main(void)
{
        test_count_words();
        test_did_you_mean();
        test_near_nothing();
        test_long_sentence();
        return check_finish();
}
