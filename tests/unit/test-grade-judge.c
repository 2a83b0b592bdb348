/* SPDX-License-Identifier: MIT */
/*
 * [model] criteria and the judge's side of grading (pods/grade/judge.h): the question built
 * from a real twin's world and tape (redacted, bounded, deterministic), the answer's one form,
 * and the verdict around a judge — judged pass and fail, a judge that cannot be asked or
 * answers garbage (error, never a pass), no judge (incomplete), --code-only, recorded
 * judgments reused byte for byte and refused for other evidence. The judge here is a
 * scripted GradeJudge (a model stands behind the real ones; tests/integration/test-judge.sh
 * drives the HTTP and command judges against a real server and script).
 */
#include "pods/gmail/mime.h"
#include "pods/grade/judge.h"
#include "tests/unit/grade-test-util.h"

typedef struct Script {
        const char *answer; /* NULL: fail with -ECONNREFUSED */
        unsigned calls;
        char *last_question;
        char last_sha[65];
} Script;

static int script_ask(void *userdata, const GradeJudgeQuestion *q, char **ret_answer, char *err,
                      size_t errlen)
{
        Script *s = userdata;
        s->calls++;
        free(s->last_question);
        s->last_question = strdup(q->question);
        snprintf(s->last_sha, sizeof(s->last_sha), "%s", q->prompt_sha256);
        CHECK(streq(q->instructions, grade_judge_instructions));
        if (!s->answer) {
                snprintf(err, errlen, "could not be reached at http://127.0.0.1:9: refused");
                return -ECONNREFUSED;
        }
        *ret_answer = strdup(s->answer);
        return 0;
}

static GradeJudge judge_of(Script *s)
{
        return (GradeJudge){.api = "openai", .model = "m-1", .ask = script_ask, .userdata = s};
}

static const char task_text[] = "# Review\n\n## Prompt\nReview PR #1 in acme/api and comment.\n\n"
                                "## Success Criteria\n"
                                "- [code:github] Issue #1 in `acme/api` is assigned to `alice`\n"
                                "- [model] The agent explained why it assigned alice\n\n"
                                "## Config\ntwins: [github]\n";

static GradeTask *task(void)
{
        GradeTask *t = NULL;
        GradeError e = {};
        CHECK_OK(grade_task_parse(task_text, strlen(task_text), "task.md", NULL, 0, &t, &e));
        if (!t) {
                fprintf(stderr, "%s\n", e.message);
                exit(1);
        }
        return t;
}

/* The agent: assign alice, and leave a secret where the judge must not see it. */
static void agent(Fx *gh)
{
        CHECK(fx_json(gh, "POST", "/repos/acme/api/issues/1/assignees",
                      "{\"assignees\":[\"alice\"]}") == 201);
        CHECK(fx_json(gh, "POST", "/repos/acme/api/issues/1/comments",
                      "{\"body\":\"assigned alice; key sk_live_abcdefghijklmnop0123\"}") == 201);
}

static json_t *grade(const GradeTask *t, Fx *gh, const GradeOptions *o)
{
        GradeTwinRun run = {"github", gh->seed, twin_world(gh->twin), gh->tape};
        json_t *v = NULL;
        GradeError e = {};
        CHECK_OK(grade_run(t, &run, 1, o, &v, &e));
        if (!v) {
                fprintf(stderr, "grade_run: %s\n", e.message);
                exit(1);
        }
        return v;
}

static char *render(const json_t *v)
{
        char *s = NULL;
        CHECK_OK(grade_verdict_render(v, &s, NULL));
        return s;
}

static void test_answer(void)
{
        bool pass = false;
        char *why = NULL, err[256];
        CHECK_OK(grade_judge_parse_answer("{\"verdict\":\"pass\",\"rationale\":\"ok\"}", &pass,
                                          &why, err, sizeof(err)));
        CHECK(pass && streq_ptr(why, "ok"));
        free(why);
        /* a fence and words around it, another case */
        CHECK_OK(grade_judge_parse_answer(
                "Here:\n```json\n{\"verdict\": \"FAIL\", \"rationale\": \"no\"}\n```\n", &pass,
                &why, err, sizeof(err)));
        CHECK(!pass && streq_ptr(why, "no"));
        free(why);
        CHECK(grade_judge_parse_answer("I think it passes.", &pass, &why, err, sizeof(err)) ==
              -EBADMSG);
        CHECK(strstr(err, "holds no JSON object"));
        CHECK(grade_judge_parse_answer("{\"verdict\":\"maybe\",\"rationale\":\"x\"}", &pass, &why,
                                       err, sizeof(err)) == -EBADMSG);
        CHECK(strstr(err, "\"pass\" or \"fail\""));
        CHECK(grade_judge_parse_answer("{\"verdict\":\"pass\"}", &pass, &why, err, sizeof(err)) ==
              -EBADMSG);
        CHECK(strstr(err, "rationale"));
        CHECK(grade_judge_parse_answer("{\"verdict\":", &pass, &why, err, sizeof(err)) == -EBADMSG);
}

static void test_question(void)
{
        Fx gh;
        fx_open(&gh, "github", "default");
        agent(&gh);
        GradeJudgeTwin tw = {"github", gh.seed ? twin_world(gh.twin) : NULL, twin_world(gh.twin),
                             gh.tape};
        /* the seed world: a fresh twin from the same seed */
        Twin *seed = twin_test_from(twin_kind_find("github"), gh.seed);
        tw.seed_world = twin_world(seed);
        char reply[GRADE_JUDGE_REPLY_MAX + 100];
        memset(reply, 'x', sizeof(reply));
        memcpy(reply, "START", 5);
        memcpy(reply + sizeof(reply) - 12, "ghp_0123456789abcdefghijklmnopqrstuv", 12);
        char *q = NULL, *q2 = NULL;
        CHECK_OK(grade_judge_question("Do it.", "It was done", &tw, 1, reply, sizeof(reply), &q));
        CHECK_OK(grade_judge_question("Do it.", "It was done", &tw, 1, reply, sizeof(reply), &q2));
        CHECK(q && q2 && streq(q, q2)); /* deterministic */
        if (q) {
                CHECK(strstr(q, "Do it.") && strstr(q, "It was done"));
                /* the reply's end only, and the cut said */
                CHECK(strstr(q, "[cut: only the end is shown]") && !strstr(q, "START"));
                /* the calls, below the sandbox's mount, with their bodies */
                CHECK(strstr(q, "1. POST /repos/acme/api/issues/1/assignees -> 201"));
                CHECK(strstr(q, "[changed the state]"));
                /* what changed: the assignee, the comment */
                CHECK(strstr(q, "## github: what changed from the start"));
                CHECK(strstr(q, "alice"));
                /* no secret reaches the judge */
                CHECK(!strstr(q, "sk_live_abcdefghijklmnop0123"));
                CHECK(strstr(q, "[REDACTED]"));
        }
        /* no reply recorded, an empty one */
        free(q);
        CHECK_OK(grade_judge_question("Do it.", "c", &tw, 1, NULL, 0, &q));
        CHECK(q && strstr(q, "Not recorded."));
        free(q);
        CHECK_OK(grade_judge_question("Do it.", "c", &tw, 1, "", 0, &q));
        CHECK(q && strstr(q, "the agent printed nothing"));
        /* the hash names the question */
        char a[65], b[65];
        grade_judge_prompt_sha256(grade_judge_instructions, q, a);
        grade_judge_prompt_sha256(grade_judge_instructions, q2, b);
        CHECK(strlen(a) == 64 && !streq(a, b));
        free(q);
        free(q2);
        twin_free(seed);
        fx_close(&gh);
}

/* A Gmail message reaches the judge as its text, not as the base64url the wire carries: a
 * criterion about what a draft says is judged alike for googleapis, MCP and curl agents. */
static void test_question_gmail(void)
{
        Fx gm;
        fx_open(&gm, "gmail", "inbox-triage");
        Twin *seed = twin_test_from(twin_kind_find("gmail"), gm.seed);
        static const char msg[] = "To: alice@example.com\r\nSubject: Re: Production export is "
                                  "stuck\r\n\r\nThe issue is being investigated.\r\n";
        _cleanup_free_ char *raw = gmail_base64url(msg, strlen(msg)), *body = NULL;
        CHECK(raw && asprintf(&body, "{\"message\":{\"raw\":\"%s\"}}", raw) > 0);
        CHECK(fx_json(&gm, "POST", "/gmail/v1/users/me/drafts", body) == 200);
        CHECK(!strstr(msg, raw)); /* the wire's form is not the text */
        GradeJudgeTwin tw = {"gmail", twin_world(seed), twin_world(gm.twin), gm.tape};
        char *q = NULL;
        CHECK_OK(grade_judge_question("Draft a reply.",
                                      "The draft says the issue is being "
                                      "investigated",
                                      &tw, 1, NULL, 0, &q));
        if (q) {
                /* in the call's request, and in what changed (the stored draft's text part) */
                const char *call = strstr(q, "## gmail: the calls the agent made");
                const char *changes = strstr(q, "## gmail: what changed from the start");
                CHECK(call && changes && changes > call);
                const char *said = call ? strstr(call, "being investigated") : NULL;
                CHECK(said && said < changes);
                CHECK(changes && strstr(changes, "being investigated"));
                CHECK(!strstr(q, raw));
        }
        free(q);
        twin_free(seed);
        fx_close(&gm);
}

static void test_verdicts(void)
{
        GradeTask *t = task();
        Fx gh;
        fx_open(&gh, "github", "default");
        agent(&gh);

        /* judged pass: the judgment is recorded, the run passes */
        Script pass = {.answer = "{\"verdict\":\"pass\",\"rationale\":\"It said why.\"}"};
        GradeJudge jp_ = judge_of(&pass);
        GradeOptions o = {.judge = &jp_,
                          .agent_reply = "I assigned alice: she owns it.",
                          .agent_reply_len = 30};
        _cleanup_json_ json_t *v = grade(t, &gh, &o);
        CHECK(pass.calls == 1);
        CHECK(streq_ptr(jps(v, "/criteria/1/status"), "passed"));
        CHECK(json_is_true(jp(v, "/criteria/1/scored")));
        CHECK(streq_ptr(jps(v, "/criteria/1/judgment/verdict"), "pass"));
        CHECK(streq_ptr(jps(v, "/criteria/1/judgment/model"), "m-1"));
        CHECK(streq_ptr(jps(v, "/criteria/1/judgment/api"), "openai"));
        CHECK(jpi(v, "/criteria/1/judgment/temperature") == 0);
        CHECK(streq_ptr(jps(v, "/criteria/1/judgment/prompt_sha256"), pass.last_sha));
        CHECK(streq_ptr(jps(v, "/criteria/1/judgment/rationale"), "It said why."));
        CHECK(strstr(strempty(jps(v, "/criteria/1/reason")), "It said why."));
        CHECK(pass.last_question && strstr(pass.last_question, "she owns it"));
        CHECK(streq_ptr(jps(v, "/state"), "pass") && json_is_true(jp(v, "/passed")));
        CHECK(jpi(v, "/counts/scored") == 2 && jpi(v, "/counts/not_evaluated") == 0);

        /* regraded from the recorded judgment, with no judge: the same bytes */
        _cleanup_free_ char *a = render(v), *b = NULL, *c = NULL;
        GradeOptions again = {.recorded = v, .agent_reply = o.agent_reply, .agent_reply_len = 30};
        _cleanup_json_ json_t *v2 = grade(t, &gh, &again);
        b = render(v2);
        CHECK(a && b && streq(a, b));
        /* … and a judge that would answer otherwise is not asked while the record stands */
        Script other = {.answer = "{\"verdict\":\"fail\",\"rationale\":\"No.\"}"};
        GradeJudge jo = judge_of(&other);
        again.judge = &jo;
        _cleanup_json_ json_t *v3 = grade(t, &gh, &again);
        c = render(v3);
        CHECK(other.calls == 0 && c && streq(a, c));
        /* --rejudge: no record, the judge is asked: judged fail, the run fails */
        GradeOptions re = {.judge = &jo, .agent_reply = o.agent_reply, .agent_reply_len = 30};
        _cleanup_json_ json_t *v4 = grade(t, &gh, &re);
        CHECK(other.calls == 1 && streq_ptr(jps(v4, "/criteria/1/status"), "failed"));
        CHECK(streq_ptr(jps(v4, "/state"), "fail") && !json_is_true(jp(v4, "/passed")));

        /* other evidence (another reply): the record does not apply; without a judge the
         * criterion is not evaluated, and says why */
        GradeOptions moved = {
                .recorded = v, .agent_reply = "something else", .agent_reply_len = 14};
        _cleanup_json_ json_t *v5 = grade(t, &gh, &moved);
        CHECK(streq_ptr(jps(v5, "/criteria/1/status"), "skipped"));
        CHECK(strstr(strempty(jps(v5, "/criteria/1/reason")), "other evidence"));
        CHECK(streq_ptr(jps(v5, "/state"), "incomplete"));

        /* a judge that cannot be reached: error, not evaluated, incomplete — never a pass */
        Script down = {.answer = NULL};
        GradeJudge jd = judge_of(&down);
        GradeOptions od = {.judge = &jd};
        _cleanup_json_ json_t *v6 = grade(t, &gh, &od);
        CHECK(streq_ptr(jps(v6, "/criteria/1/status"), "error"));
        CHECK(strstr(strempty(jps(v6, "/criteria/1/reason")), "could not be reached"));
        CHECK(strstr(strempty(jps(v6, "/criteria/1/judgment/error")), "could not be reached"));
        CHECK(!jp(v6, "/criteria/1/judgment/verdict"));
        CHECK(jpi(v6, "/counts/error") == 1 && jpi(v6, "/counts/not_evaluated") == 1);
        CHECK(streq_ptr(jps(v6, "/state"), "incomplete") && !json_is_true(jp(v6, "/passed")));
        /* an error is no judgment: a regrade from it asks again */
        Script later = {.answer = "{\"verdict\":\"pass\",\"rationale\":\"fine\"}"};
        GradeJudge jl = judge_of(&later);
        GradeOptions ol = {.judge = &jl, .recorded = v6};
        _cleanup_json_ json_t *v7 = grade(t, &gh, &ol);
        CHECK(later.calls == 1 && streq_ptr(jps(v7, "/state"), "pass"));

        /* garbage: error, with what the judge said (redacted, bounded) */
        Script junk = {.answer = "Sure! The agent did great. token=ghp_0123456789abcdefghijklmnop"};
        GradeJudge jj = judge_of(&junk);
        GradeOptions oj = {.judge = &jj};
        _cleanup_json_ json_t *v8 = grade(t, &gh, &oj);
        CHECK(streq_ptr(jps(v8, "/criteria/1/status"), "error"));
        CHECK(strstr(strempty(jps(v8, "/criteria/1/reason")), "holds no JSON object"));
        CHECK(!strstr(strempty(jps(v8, "/criteria/1/reason")), "ghp_0123456789"));
        CHECK(streq_ptr(jps(v8, "/state"), "incomplete"));

        /* no judge: skipped, not evaluated, incomplete */
        _cleanup_json_ json_t *v9 = grade(t, &gh, NULL);
        CHECK(streq_ptr(jps(v9, "/criteria/1/status"), "skipped"));
        CHECK(streq_ptr(jps(v9, "/state"), "incomplete") && jpi(v9, "/counts/not_evaluated") == 1);

        /* --code-only: skipped on purpose, said in the verdict; the [code] ones decide */
        GradeOptions oc = {.code_only = true, .judge = &jp_};
        unsigned before = pass.calls;
        _cleanup_json_ json_t *v10 = grade(t, &gh, &oc);
        CHECK(pass.calls == before);
        CHECK(streq_ptr(jps(v10, "/criteria/1/status"), "skipped"));
        CHECK(strstr(strempty(jps(v10, "/criteria/1/reason")), "--code-only"));
        CHECK(json_is_true(jp(v10, "/code_only")) && jpi(v10, "/counts/not_evaluated") == 0);
        CHECK(streq_ptr(jps(v10, "/state"), "pass"));

        free(pass.last_question);
        free(other.last_question);
        free(down.last_question);
        free(later.last_question);
        free(junk.last_question);
        fx_close(&gh);
        grade_task_free(t);
}

int main(void)
{
        test_answer();
        test_question();
        test_question_gmail();
        test_verdicts();
        return check_finish();
}
