/* SPDX-License-Identifier: MIT */
/*
 * Linear's checks (pods/grade/checks-linear.c) against hand-made worlds in the Linear twin's
 * world shape: each sentence binds, passes where it should and fails where it should, and
 * its evidence holds together (every pointer resolves in the final world, every event id is
 * a row of the tape). Then the same against the real twin: a hosted-format seed, changed
 * through its GraphQL and MCP, graded with the tape rows those calls leave.
 */
#include <string.h>

#include "common/json-util.h"
#include "pods/grade/check.h"
#include "pods/twin/kind.h"
#include "tests/unit/grade-test-util.h"

/* Two teams, each with its own "Done"; ENG's issues: "Checkout 500" (Todo, bug, estimate 3,
 * assigned to Ada, a seeded root comment c1), "Slow search" (Backlog, no estimate), an
 * archived "Old thing"; OPS has its own "Checkout 500" (Done). */
static const char *const seed_json =
        "{\"organization\":{\"id\":\"org1\",\"name\":\"Acme\",\"urlKey\":\"acme\"},"
        "\"viewer\":\"u1\","
        "\"users\":[{\"id\":\"u1\",\"name\":\"Ada Lovelace\",\"displayName\":\"ada\","
        "\"email\":\"ada@acme.test\",\"admin\":true,\"active\":true},"
        "{\"id\":\"u2\",\"name\":\"Bob Stone\",\"displayName\":\"bob\",\"email\":\"bob@acme.test\","
        "\"admin\":false,\"active\":true}],"
        "\"teams\":[{\"id\":\"t1\",\"key\":\"ENG\",\"name\":\"Engineering\"},"
        "{\"id\":\"t2\",\"key\":\"OPS\",\"name\":\"Operations\"}],"
        "\"states\":[{\"id\":\"s1\",\"teamId\":\"t1\",\"name\":\"Backlog\",\"type\":\"backlog\"},"
        "{\"id\":\"s2\",\"teamId\":\"t1\",\"name\":\"Todo\",\"type\":\"unstarted\"},"
        "{\"id\":\"s3\",\"teamId\":\"t1\",\"name\":\"In Progress\",\"type\":\"started\"},"
        "{\"id\":\"s4\",\"teamId\":\"t1\",\"name\":\"Done\",\"type\":\"completed\"},"
        "{\"id\":\"s5\",\"teamId\":\"t2\",\"name\":\"Done\",\"type\":\"completed\"},"
        "{\"id\":\"s6\",\"teamId\":\"t2\",\"name\":\"Todo\",\"type\":\"unstarted\"}],"
        "\"labels\":[{\"id\":\"l1\",\"name\":\"Bug\",\"teamId\":null},"
        "{\"id\":\"l2\",\"name\":\"Performance\",\"teamId\":\"t1\"}],"
        "\"projects\":[],\"cycles\":[],"
        "\"issues\":["
        "{\"id\":\"i1\",\"identifier\":\"ENG-1\",\"number\":1,\"teamId\":\"t1\",\"title\":"
        "\"Checkout 500\",\"priority\":2,\"estimate\":3,\"stateId\":\"s2\",\"assigneeId\":\"u1\","
        "\"labelIds\":[\"l1\"],\"archivedAt\":null},"
        "{\"id\":\"i2\",\"identifier\":\"ENG-2\",\"number\":2,\"teamId\":\"t1\",\"title\":"
        "\"Slow search\",\"priority\":0,\"estimate\":null,\"stateId\":\"s1\",\"assigneeId\":null,"
        "\"labelIds\":[],\"archivedAt\":null},"
        "{\"id\":\"i3\",\"identifier\":\"ENG-3\",\"number\":3,\"teamId\":\"t1\",\"title\":"
        "\"Old thing\",\"estimate\":null,\"stateId\":\"s4\",\"assigneeId\":null,"
        "\"labelIds\":[],\"archivedAt\":\"2026-01-01T00:00:00.000Z\"},"
        "{\"id\":\"i4\",\"identifier\":\"OPS-1\",\"number\":1,\"teamId\":\"t2\",\"title\":"
        "\"Checkout 500\",\"estimate\":1,\"stateId\":\"s5\",\"assigneeId\":\"u2\","
        "\"labelIds\":[],\"archivedAt\":null}],"
        "\"comments\":[{\"id\":\"c1\",\"issueId\":\"i1\",\"userId\":\"u2\",\"body\":\"Seen on "
        "mobile too?\",\"parentId\":null},"
        "{\"id\":\"c2\",\"issueId\":\"i4\",\"userId\":\"u2\",\"body\":\"ops note\","
        "\"parentId\":null}],"
        "\"next\":{}}";

static json_t *world(void)
{
        json_error_t e;
        json_t *w = json_loads(seed_json, 0, &e);
        if (!w) {
                fprintf(stderr, "bad test world: %s (line %d)\n", e.text, e.line);
                exit(1);
        }
        return w;
}

static bool tape_has(const json_t *tape, const char *id)
{
        size_t i;
        json_t *row;
        json_array_foreach (tape, i, row)
                if (streq_ptr(json_get_str(row, "event_id"), id))
                        return true;
        return false;
}

/* Binds sentence to a Linear check (it must bind), grades it over seed/final/tape and checks
 * the status is want and the evidence resolves. Returns the outcome (caller releases). */
static GradeOutcome grade_at(const char *sentence, json_t *seed, json_t *final, const json_t *tape,
                             GradeStatus want, const char *want_id, int line)
{
        const GradeCheck *c = NULL;
        json_t *args = NULL;
        char *why = NULL;
        GradeOutcome o = {};
        if (grade_bind(sentence, "linear", &c, &args, &why) != 1) {
                fprintf(stderr, "%s:%d: \"%s\" did not bind: %s\n", __FILE__, line, sentence,
                        strempty(why));
                check_failures++;
                free(why);
                return o;
        }
        if (want_id && !streq(c->id, want_id)) {
                fprintf(stderr, "%s:%d: \"%s\" bound %s, wanted %s\n", __FILE__, line, sentence,
                        c->id, want_id);
                check_failures++;
        }
        CHECK_OK(grade_check_eval(c, args, seed, final, tape, &o));
        if (o.status != want) {
                fprintf(stderr, "%s:%d: \"%s\" (%s): %s, wanted %s: %s\n", __FILE__, line, sentence,
                        c->id, grade_status_to_string(o.status), grade_status_to_string(want),
                        strempty(o.reason));
                check_failures++;
        }
        CHECK(o.reason && *o.reason);
        if (c->substrate != GRADE_SUBSTRATE_TAPE && final && json_array_size(o.state_paths) == 0) {
                fprintf(stderr, "%s:%d: %s cites no state path\n", __FILE__, line, c->id);
                check_failures++;
        }
        size_t i;
        json_t *v;
        json_array_foreach (o.state_paths, i, v)
                if (!final || !grade_pointer_get(final, json_string_value(v))) {
                        fprintf(stderr, "%s:%d: %s: pointer %s does not resolve\n", __FILE__, line,
                                c->id, json_string_value(v));
                        check_failures++;
                }
        json_array_foreach (o.event_ids, i, v)
                if (!tape_has(tape, json_string_value(v))) {
                        fprintf(stderr, "%s:%d: %s: event %s is not on the tape\n", __FILE__, line,
                                c->id, json_string_value(v));
                        check_failures++;
                }
        json_decref(args);
        return o;
}

#define LEXPECT(sentence, seed, final, tape, want, id)                                        \
        do {                                                                                  \
                GradeOutcome _o_ = grade_at(sentence, seed, final, tape, want, id, __LINE__); \
                grade_outcome_done(&_o_);                                                     \
        } while (0)

/* The path of the first cited pointer of sentence's outcome, compared with want. */
#define EXPECT_CITES(sentence, seed, final, want)                                            \
        do {                                                                                 \
                GradeOutcome _o_ =                                                           \
                        grade_at(sentence, seed, final, NULL, GRADE_PASSED, NULL, __LINE__); \
                json_t *_p_ = json_array_get(_o_.state_paths, 0);                            \
                if (!streq_ptr(json_string_value(_p_), want)) {                              \
                        fprintf(stderr, "%s:%d: cites %s, wanted %s\n", __FILE__, __LINE__,  \
                                json_string_value(_p_) ?: "nothing", want);                  \
                        check_failures++;                                                    \
                }                                                                            \
                grade_outcome_done(&_o_);                                                    \
        } while (0)

/* A new comment row on issue, parent (NULL for a root). */
static void add_comment(json_t *w, const char *id, const char *issue, const char *parent,
                        const char *body)
{
        json_array_append_new(json_object_get(w, "comments"),
                              json_pack("{s:s, s:s, s:s, s:s, s:o}", "id", id, "issueId", issue,
                                        "userId", "u1", "body", body, "parentId",
                                        parent ? json_string(parent) : json_null()));
}

static json_t *issue_row(json_t *w, size_t i)
{
        return json_array_get(json_object_get(w, "issues"), i);
}

static void test_issue_exists(void)
{
        _cleanup_json_ json_t *seed = world(), *final = world();
        const char *id = "linear.issue-exists";
        LEXPECT("An issue titled \"Checkout 500\" exists in `ENG`", seed, final, NULL, GRADE_PASSED,
                id);
        EXPECT_CITES("An issue titled \"Checkout 500\" exists in `ENG`", seed, final, "/issues/0");
        EXPECT_CITES("An issue titled \"Checkout 500\" exists in `OPS`", seed, final, "/issues/3");
        /* exact title, exact team key; archived is gone */
        LEXPECT("An issue titled \"checkout 500\" exists in `ENG`", seed, final, NULL, GRADE_FAILED,
                id);
        LEXPECT("An issue titled \"Checkout 500\" exists in `DES`", seed, final, NULL, GRADE_FAILED,
                id);
        LEXPECT("An issue titled \"Old thing\" exists in `ENG`", seed, final, NULL, GRADE_FAILED,
                id);
        LEXPECT("An issue titled \"Slow search\" exists in `OPS`", seed, final, NULL, GRADE_FAILED,
                id);
        /* a duplicate title makes the sentence name no single issue */
        json_array_append(json_object_get(final, "issues"), issue_row(final, 1));
        LEXPECT("An issue titled \"Slow search\" exists in `ENG`", seed, final, NULL, GRADE_FAILED,
                id);
}

static void test_issue_state(void)
{
        _cleanup_json_ json_t *seed = world(), *final = world();
        const char *id = "linear.issue-state";
        LEXPECT("Issue \"Checkout 500\" in `ENG` is in state \"Todo\"", seed, final, NULL,
                GRADE_PASSED, id);
        LEXPECT("Issue \"Checkout 500\" in `ENG` is in state \"todo\"", seed, final, NULL,
                GRADE_PASSED, id);
        LEXPECT("Issue \"Checkout 500\" in `ENG` is in state \"Done\"", seed, final, NULL,
                GRADE_FAILED, id);
        LEXPECT("Issue \"Checkout 500\" in `OPS` is in state \"Done\"", seed, final, NULL,
                GRADE_PASSED, id);
        LEXPECT("Issue \"Missing\" in `ENG` is in state \"Done\"", seed, final, NULL, GRADE_FAILED,
                id);
        /* moved to Done: both ends of the join are cited */
        json_object_set_new(issue_row(final, 0), "stateId", json_string("s4"));
        EXPECT_CITES("Issue \"Checkout 500\" in `ENG` is in state \"Done\"", seed, final,
                     "/issues/0/stateId");
        GradeOutcome o = grade_at("Issue \"Checkout 500\" in `ENG` is in state \"Done\"", seed,
                                  final, NULL, GRADE_PASSED, id, __LINE__);
        CHECK(json_array_size(o.state_paths) == 2);
        CHECK(streq_ptr(json_string_value(json_array_get(o.state_paths, 1)), "/states/3/name"));
        grade_outcome_done(&o);
        /* another team's "Done" is no state of ENG's issue */
        json_object_set_new(issue_row(final, 0), "stateId", json_string("s5"));
        LEXPECT("Issue \"Checkout 500\" in `ENG` is in state \"Done\"", seed, final, NULL,
                GRADE_FAILED, id);
        /* a row without stateId cites the row */
        json_object_del(issue_row(final, 0), "stateId");
        LEXPECT("Issue \"Checkout 500\" in `ENG` is in state \"Todo\"", seed, final, NULL,
                GRADE_FAILED, id);
}

static void test_issue_labels(void)
{
        _cleanup_json_ json_t *seed = world(), *final = world();
        const char *id = "linear.issue-has-label";
        LEXPECT("Issue \"Checkout 500\" in `ENG` has label \"Bug\"", seed, final, NULL,
                GRADE_PASSED, id);
        LEXPECT("Issue \"Checkout 500\" in `ENG` has label \"bug\"", seed, final, NULL,
                GRADE_PASSED, id);
        LEXPECT("Issue \"Checkout 500\" in `ENG` has label \"Performance\"", seed, final, NULL,
                GRADE_FAILED, id);
        LEXPECT("Issue \"Slow search\" in `ENG` has label \"Performance\"", seed, final, NULL,
                GRADE_FAILED, id);
        json_array_append_new(json_object_get(issue_row(final, 1), "labelIds"), json_string("l2"));
        GradeOutcome o = grade_at("Issue \"Slow search\" in `ENG` has label \"Performance\"", seed,
                                  final, NULL, GRADE_PASSED, id, __LINE__);
        CHECK(streq_ptr(json_string_value(json_array_get(o.state_paths, 0)), "/issues/1/labelIds"));
        CHECK(streq_ptr(json_string_value(json_array_get(o.state_paths, 1)), "/labels/1"));
        grade_outcome_done(&o);
        /* a dangling label id is no label */
        json_array_append_new(json_object_get(issue_row(final, 1), "labelIds"), json_string("l9"));
        LEXPECT("Issue \"Slow search\" in `ENG` has label \"Bug\"", seed, final, NULL, GRADE_FAILED,
                id);
}

static void test_issue_estimate_assignee(void)
{
        _cleanup_json_ json_t *seed = world(), *final = world();
        const char *id = "linear.issue-estimate";
        LEXPECT("Issue \"Checkout 500\" in `ENG` has estimate 3", seed, final, NULL, GRADE_PASSED,
                id);
        LEXPECT("Issue \"Checkout 500\" in `ENG` has estimate 2", seed, final, NULL, GRADE_FAILED,
                id);
        LEXPECT("Issue \"Slow search\" in `ENG` has estimate 0", seed, final, NULL, GRADE_FAILED,
                id);
        json_object_set_new(issue_row(final, 1), "estimate", json_real(5.0));
        LEXPECT("Issue \"Slow search\" in `ENG` has estimate 5", seed, final, NULL, GRADE_PASSED,
                id);
        json_object_set_new(issue_row(final, 1), "estimate", json_integer(0));
        LEXPECT("Issue \"Slow search\" in `ENG` has estimate 0", seed, final, NULL, GRADE_PASSED,
                id);
        json_object_del(issue_row(final, 1), "estimate");
        EXPECT_CITES("Issue \"Checkout 500\" in `ENG` has estimate 3", seed, final,
                     "/issues/0/estimate");
        LEXPECT("Issue \"Slow search\" in `ENG` has estimate 0", seed, final, NULL, GRADE_FAILED,
                id);

        id = "linear.issue-assignee";
        LEXPECT("Issue \"Checkout 500\" in `ENG` is assigned to `ada@acme.test`", seed, final, NULL,
                GRADE_PASSED, id);
        LEXPECT("Issue \"Checkout 500\" in `ENG` is assigned to `Ada Lovelace`", seed, final, NULL,
                GRADE_PASSED, id);
        LEXPECT("Issue \"Checkout 500\" in `ENG` is assigned to `ADA`", seed, final, NULL,
                GRADE_PASSED, id);
        LEXPECT("Issue \"Checkout 500\" in `ENG` is assigned to `bob`", seed, final, NULL,
                GRADE_FAILED, id);
        LEXPECT("Issue \"Checkout 500\" in `OPS` is assigned to `bob`", seed, final, NULL,
                GRADE_PASSED, id);
        LEXPECT("Issue \"Slow search\" in `ENG` is assigned to `ada`", seed, final, NULL,
                GRADE_FAILED, id);
        json_object_set_new(issue_row(final, 1), "assigneeId", json_string("u2"));
        GradeOutcome o = grade_at("Issue \"Slow search\" in `ENG` is assigned to `bob@acme.test`",
                                  seed, final, NULL, GRADE_PASSED, id, __LINE__);
        CHECK(streq_ptr(json_string_value(json_array_get(o.state_paths, 0)),
                        "/issues/1/assigneeId"));
        CHECK(streq_ptr(json_string_value(json_array_get(o.state_paths, 1)), "/users/1"));
        grade_outcome_done(&o);
}

static void test_comments(void)
{
        _cleanup_json_ json_t *seed = world(), *final = world();
        const char *id = "linear.issue-comment-contains";
        LEXPECT("A comment on issue \"Checkout 500\" in `ENG` contains \"mobile\"", seed, final,
                NULL, GRADE_PASSED, id);
        LEXPECT("A comment on issue \"Checkout 500\" in `ENG` contains \"Mobile\"", seed, final,
                NULL, GRADE_FAILED, id);
        /* another team's issue of the same title keeps its comments */
        LEXPECT("A comment on issue \"Checkout 500\" in `ENG` contains \"ops note\"", seed, final,
                NULL, GRADE_FAILED, id);
        LEXPECT("A comment on issue \"Slow search\" in `ENG` contains \"GH-12\"", seed, final, NULL,
                GRADE_FAILED, id);
        add_comment(final, "c3", "i2", NULL, "Tracked from acme/api#12 (GH-12)");
        EXPECT_CITES("A comment on issue \"Slow search\" in `ENG` contains \"GH-12\"", seed, final,
                     "/comments/2");

        id = "linear.issue-threaded-reply";
        const char *reply = "A threaded reply to a seeded comment exists on issue \"Checkout 500\" "
                            "in `ENG`";
        LEXPECT(reply, seed, seed, NULL, GRADE_FAILED, id);
        /* a new root comment, then a reply to it: not in the seeded thread */
        add_comment(final, "c4", "i1", NULL, "Looking into it");
        add_comment(final, "c5", "i1", "c4", "Update: reproduced");
        LEXPECT(reply, seed, final, NULL, GRADE_FAILED, id);
        /* a reply to another issue's seeded comment is not one on this issue */
        add_comment(final, "c6", "i4", "c2", "ack");
        LEXPECT(reply, seed, final, NULL, GRADE_FAILED, id);
        /* a reply to the seeded root */
        add_comment(final, "c7", "i1", "c1", "Yes, iOS and Android");
        GradeOutcome o = grade_at(reply, seed, final, NULL, GRADE_PASSED, id, __LINE__);
        CHECK(json_array_size(o.state_paths) == 1);
        CHECK(streq_ptr(json_string_value(json_array_get(o.state_paths, 0)), "/comments/6"));
        grade_outcome_done(&o);
        /* a seed that already holds the reply does not pass a world left as it was */
        LEXPECT(reply, final, final, NULL, GRADE_FAILED, id);
        /* an issue the seed did not have has no seeded comment */
        LEXPECT("A threaded reply to a seeded comment exists on issue \"Nope\" in `ENG`", seed,
                final, NULL, GRADE_FAILED, id);
}

static void test_tape(void)
{
        _cleanup_json_ json_t *seed = world();
        const char *id = "linear.no-unsupported-endpoint";
        const char *s = "No unsupported endpoint was called";
        _cleanup_json_ json_t *tape = json_array();
        LEXPECT(s, seed, NULL, tape, GRADE_PASSED, id);
        json_array_append_new(tape, json_pack("{s:s, s:s, s:s, s:i, s:s, s:s}", "event_id", "evt_1",
                                              "method", "POST", "path", "/graphql", "status", 200,
                                              "fidelity", "semantic", "tool", "save_issue"));
        LEXPECT(s, seed, NULL, tape, GRADE_PASSED, id);
        json_array_append_new(tape, json_pack("{s:s, s:s, s:s, s:i, s:s}", "event_id", "evt_2",
                                              "method", "POST", "path", "/graphql", "status", 501,
                                              "fidelity", "unsupported"));
        GradeOutcome o = grade_at(s, seed, NULL, tape, GRADE_FAILED, id, __LINE__);
        CHECK(json_array_size(o.event_ids) == 1);
        CHECK(streq_ptr(json_string_value(json_array_get(o.event_ids, 0)), "evt_2"));
        grade_outcome_done(&o);
        /* no tape at all is not a clean bill */
        LEXPECT(s, seed, NULL, NULL, GRADE_FAILED, id);
}

static void test_binding(void)
{
        const GradeCheck *c;
        json_t *args = NULL;
        char *why = NULL;
        /* values as typed: the estimate an integer, the team a key */
        CHECK(grade_bind("Issue \"A b\" in `ENG` has estimate 8.", "linear", &c, &args, &why) == 1);
        CHECK(streq(c->id, "linear.issue-estimate"));
        CHECK(json_integer_value(json_object_get(args, "estimate")) == 8);
        CHECK(streq_ptr(json_get_str(args, "team"), "ENG"));
        json_decref(args);
        args = NULL;
        /* a quote cannot be inside a quoted slot; a space cannot be in a team key */
        CHECK(grade_bind("Issue \"A \"b\" in `ENG` has label \"x\"", "linear", &c, &args, &why) ==
              0);
        free(why);
        why = NULL;
        CHECK(grade_bind("Issue \"A\" in `EN G` is in state \"Done\"", "linear", &c, &args, &why) ==
              0);
        free(why);
        why = NULL;
        /* the state slot is quoted (hosted Pome's wording), not bare as GitHub's */
        CHECK(grade_bind("Issue \"A\" in `ENG` is in state Done", "linear", &c, &args, &why) == 0);
        CHECK(why && strstr(why, "did you mean"));
        free(why);
        why = NULL;
        /* every check lists under the linear twin */
        size_t n = 0;
        for (size_t i = 0; (c = grade_check_at(i)); i++)
                n += streq(c->twin, "linear");
        CHECK(n == 8);
}

/* ---------------------------------------------------------------- the real twin */

static const char *const twin_seed =
        "{\"organization\":{\"id\":\"org_acme\",\"name\":\"Acme\",\"urlKey\":\"acme\"},"
        "\"users\":[{\"id\":\"user_agent\",\"email\":\"agent@acme.test\",\"name\":\"Pome "
        "Agent\",\"admin\":true},{\"id\":\"user_priya\",\"email\":\"priya@acme.test\","
        "\"name\":\"Priya Shah\",\"displayName\":\"priya\"}],"
        "\"teams\":[{\"id\":\"team_eng\",\"key\":\"ENG\",\"name\":\"Engineering\","
        "\"states\":[{\"id\":\"eng_backlog\",\"name\":\"Backlog\",\"type\":\"backlog\"},"
        "{\"id\":\"eng_todo\",\"name\":\"Todo\",\"type\":\"unstarted\"}]}],"
        "\"labels\":[{\"id\":\"label_bug\",\"name\":\"Bug\"}],"
        "\"issues\":[{\"id\":\"issue_1\",\"team\":\"ENG\",\"title\":\"Checkout 500\","
        "\"state\":\"Backlog\"}],"
        "\"comments\":[{\"id\":\"comment_root\",\"issue\":\"Checkout 500\",\"user\":"
        "\"priya@acme.test\",\"body\":\"Which cards?\"}]}";

static void test_real_twin(void)
{
        Fx f;
        fx_open_json(&f, "linear", twin_seed);
        EXPECT(&f, "An issue titled \"Checkout 500\" exists in `ENG`", GRADE_PASSED);
        EXPECT(&f, "Issue \"Checkout 500\" in `ENG` is in state \"Backlog\"", GRADE_PASSED);
        EXPECT(&f, "Issue \"Checkout 500\" in `ENG` is in state \"Todo\"", GRADE_FAILED);
        EXPECT(&f, "Issue \"Checkout 500\" in `ENG` has label \"Bug\"", GRADE_FAILED);
        EXPECT(&f, "Issue \"Checkout 500\" in `ENG` has estimate 2", GRADE_FAILED);
        EXPECT(&f, "Issue \"Checkout 500\" in `ENG` is assigned to `priya`", GRADE_FAILED);
        EXPECT(&f, "A comment on issue \"Checkout 500\" in `ENG` contains \"expired\"",
               GRADE_FAILED);
        EXPECT(&f, "A threaded reply to a seeded comment exists on issue \"Checkout 500\" in `ENG`",
               GRADE_FAILED);
        EXPECT(&f, "No unsupported endpoint was called", GRADE_PASSED);

        /* GraphQL as @linear/sdk sends it, then a reply in the seeded thread over MCP */
        CHECK(fx_json(&f, "POST", "/graphql",
                      "{\"query\":\"mutation($id: String!, $input: IssueUpdateInput!) { "
                      "issueUpdate(id: $id, input: $input) { success } }\",\"variables\":{"
                      "\"id\":\"issue_1\",\"input\":{\"stateId\":\"eng_todo\",\"labelIds\":["
                      "\"label_bug\"],\"estimate\":2,\"assigneeId\":\"user_priya\"}}}") == 200);
        CHECK(fx_mcp(&f, "save_comment",
                     "{\"issueId\":\"issue_1\",\"parentId\":\"comment_root\",\"body\":\"Only "
                     "expired ones.\"}") == 200);
        EXPECT(&f, "Issue \"Checkout 500\" in `ENG` is in state \"Todo\"", GRADE_PASSED);
        EXPECT(&f, "Issue \"Checkout 500\" in `ENG` has label \"Bug\"", GRADE_PASSED);
        EXPECT(&f, "Issue \"Checkout 500\" in `ENG` has estimate 2", GRADE_PASSED);
        EXPECT(&f, "Issue \"Checkout 500\" in `ENG` is assigned to `priya`", GRADE_PASSED);
        EXPECT(&f, "A comment on issue \"Checkout 500\" in `ENG` contains \"expired\"",
               GRADE_PASSED);
        EXPECT(&f, "A threaded reply to a seeded comment exists on issue \"Checkout 500\" in `ENG`",
               GRADE_PASSED);
        EXPECT(&f, "No unsupported endpoint was called", GRADE_PASSED);

        /* a route the twin does not serve: the loud 501 on the tape, cited by its event id */
        CHECK(fx_json(&f, "GET", "/rest/issues", NULL) == 501);
        GradeOutcome o = fx_grade(&f, "No unsupported endpoint was called", GRADE_FAILED);
        CHECK(json_array_size(o.event_ids) == 1);
        grade_outcome_done(&o);
        fx_close(&f);
}

int main(void)
{
        test_issue_exists();
        test_issue_state();
        test_issue_labels();
        test_issue_estimate_assignee();
        test_comments();
        test_tape();
        test_binding();
        test_real_twin();
        return check_finish();
}
