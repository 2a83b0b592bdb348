/* SPDX-License-Identifier: MIT */
/*
 * Grading end to end: binding every template of the vocabulary, JSON Pointers, the
 * vocabulary listing, verdicts over real twin worlds (already true in the seed,
 * always-scored, [model], unmatched, a missing final state), determinism, and the run
 * directory loader. Task files: test-grade-task.c.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "common/fileio.h"
#include "common/strv.h"
#include "tests/unit/grade-test-util.h"

static char *task_path(const char *name)
{
        const char *src = getenv("POME_SOURCE_DIR") ? getenv("POME_SOURCE_DIR") : POME_SOURCE_DIR;
        char *p;
        CHECK(asprintf(&p, "%s/tests/unit/tasks/%s", src, name) > 0);
        return p;
}

static GradeTask *load_task(const char *name)
{
        _cleanup_free_ char *path = task_path(name);
        GradeTask *t = NULL;
        GradeError e = {};
        CHECK_OK(grade_task_load(path, &t, &e));
        if (!t) {
                fprintf(stderr, "%s: %s\n", name, e.message);
                exit(1);
        }
        return t;
}

/* ---------------------------------------------------------------- binding */

static const char *example_value(const GradeCheck *c, const GradeParam *p)
{
        switch (p->type) {
        case GRADE_PARAM_NUMBER:
                return "12";
        case GRADE_PARAM_COUNT:
                return "0";
        case GRADE_PARAM_REPO:
                return "acme/api";
        case GRADE_PARAM_LOGIN:
                return "alice";
        case GRADE_PARAM_LABEL:
                return "good first issue";
        case GRADE_PARAM_TEXT:
                return "the root cause, in words";
        case GRADE_PARAM_PATH:
                return "docs/a guide.md";
        case GRADE_PARAM_TOOL:
                return streq(c->twin, "github") ? "create_label" : "create_refund";
        case GRADE_PARAM_ENUM:
                return p->values[1] ? p->values[1] : p->values[0];
        case GRADE_PARAM_CHANNEL:
                return "general";
        case GRADE_PARAM_EMOJI:
                return "white_check_mark";
        case GRADE_PARAM_CHARGE:
                return "ch_3Abc";
        case GRADE_PARAM_EVENT_TYPE:
                return "charge.refunded";
        }
        return "?";
}

/* c's template with each slot filled by its example value. */
static char *render(const GradeCheck *c)
{
        char *out = calloc(1, 1024);
        size_t k = 0, slot = 0;
        for (const char *s = c->template; *s;) {
                if (*s == '{') {
                        k += (size_t)snprintf(out + k, 1024 - k, "%s",
                                              example_value(c, &c->params[slot++]));
                        s = strchr(s, '}') + 1;
                } else
                        out[k++] = *s++;
        }
        CHECK(slot == c->n_params);
        return out;
}

static void test_bind_vocabulary(void)
{
        const GradeCheck *c;
        size_t n = 0;
        for (size_t i = 0; (c = grade_check_at(i)); i++, n++) {
                CHECK(grade_check_find(c->id) == c);
                CHECK(startswith(c->id, c->twin) && c->id[strlen(c->twin)] == '.');
                _cleanup_free_ char *s = render(c);
                /* binds to itself, with surrounding blanks, inner runs and a trailing period */
                char variants[3][1100];
                snprintf(variants[0], sizeof(variants[0]), "%s", s);
                snprintf(variants[1], sizeof(variants[1]), "  %s.  ", s);
                snprintf(variants[2], sizeof(variants[2]), "%s", s);
                char *space = strchr(variants[2], ' ');
                if (space)
                        memmove(space + 1, space, strlen(space) + 1);
                for (size_t v = 0; v < 3; v++) {
                        const GradeCheck *b = NULL;
                        json_t *args = NULL;
                        char *why = NULL;
                        int r = grade_bind(variants[v], c->twin, &b, &args, &why);
                        if (r != 1 || b != c) {
                                fprintf(stderr, "\"%s\" binds %s, not %s (%s)\n", variants[v],
                                        b ? b->id : "nothing", c->id, strempty(why));
                                check_failures++;
                        }
                        CHECK(json_object_size(args) == c->n_params);
                        json_decref(args);
                        free(why);
                }
                /* and to nothing of another twin, but that twin's check of the very same
                 * template (hosted Pome gives github, gmail and linear one "No unsupported
                 * endpoint was called", each over its own twin's tape) */
                for (const char *const *k = twin_kind_names(); *k; k++) {
                        if (streq(*k, c->twin))
                                continue;
                        const GradeCheck *b = NULL;
                        json_t *args = NULL;
                        char *why = NULL;
                        int r = grade_bind(s, *k, &b, &args, &why);
                        if (r == 1 && streq(b->template, c->template) && streq(b->twin, *k)) {
                                json_decref(args);
                                continue;
                        }
                        if (r != 0) {
                                fprintf(stderr, "\"%s\" of %s binds %s of %s\n", s, c->id,
                                        b ? b->id : "nothing", *k);
                                check_failures++;
                        }
                        CHECK(why && !args);
                        json_decref(args);
                        free(why);
                }
        }
        /* the closed vocabulary: CONTRACT.md's 16 + 6 + 11, and Gmail's and Linear's */
        CHECK(n == 16 + 6 + 11 + grade_n_checks_gmail + grade_n_checks_linear);
        CHECK(grade_check_find("slack.no-new-messages") != NULL);

        /* the arguments are typed */
        const GradeCheck *b;
        json_t *args;
        char *why = NULL;
        CHECK(grade_bind("Issue #12 in `acme/api` is in state CLOSED", "github", &b, &args, &why) ==
              1);
        CHECK(json_integer_value(json_object_get(args, "issue")) == 12);
        CHECK(streq_ptr(json_get_str(args, "state"), "closed"));
        CHECK(grade_check_polarity(b, args) == GRADE_POSITIVE);
        json_decref(args);
        CHECK(grade_bind("Pull request #3 in `a/b` is not merged", "github", &b, &args, &why) == 1);
        CHECK(grade_check_polarity(b, args) == GRADE_NEGATIVE);
        json_decref(args);
        CHECK(grade_bind("A message in \"#general\" contains \"x\"", "slack", &b, &args, &why) ==
              1);
        CHECK(streq_ptr(json_get_str(args, "channel"), "general"));
        json_decref(args);

        /* invalid values leave it unmatched, saying which value */
        struct {
                const char *twin, *sentence, *why;
        } bad[] = {
                {"github", "Issue #one exists in `acme/api`", "issue must be a positive integer"},
                {"github", "Issue #0 exists in `acme/api`", "positive integer"},
                {"github", "Issue #1 exists in `acme`", "a repository as owner/name"},
                {"github", "Issue #1 in `acme/api` is in state opened",
                 "state must be one of open, closed, got \"opened\""},
                {"github", "`frobnicate` was called", "must name an action of the github twin"},
                {"github", "`slack_send_message` was never called", "action of the github twin"},
                {"stripe", "The PaymentIntent status is done", "status must be one of"},
                {"stripe", "A refund exists on charge \"pi_123\"", "a charge id"},
                {"github", "Issue #1 exists in acme/api",
                 "no github check has a sentence template"},
                {"github", "issue #1 exists in `acme/api`", "no github check"},
                {"slack", "No message was posted to general", "no slack check"},
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                b = NULL;
                args = NULL;
                why = NULL;
                CHECK(grade_bind(bad[i].sentence, bad[i].twin, &b, &args, &why) == 0);
                if (!why || !strstr(why, bad[i].why)) {
                        fprintf(stderr, "\"%s\": %s\n", bad[i].sentence, strempty(why));
                        check_failures++;
                }
                free(why);
        }
        /* a sentence far longer than any template is unmatched quickly, not searched */
        char *huge = malloc(200001);
        memset(huge, '`', 200000);
        huge[200000] = 0;
        CHECK(grade_bind(huge, "github", &b, &args, &why) == 0);
        free(why);
        free(huge);
}

static void test_pointer(void)
{
        _cleanup_json_ json_t *doc =
                json_loads("{\"a\":[{\"b/c\":1,\"d~e\":2}],\"\":3,\"x\":{}}", 0, NULL);
        CHECK(grade_pointer_get(doc, "") == doc);
        CHECK(json_integer_value(grade_pointer_get(doc, "/a/0/b~1c")) == 1);
        CHECK(json_integer_value(grade_pointer_get(doc, "/a/0/d~0e")) == 2);
        CHECK(json_integer_value(grade_pointer_get(doc, "/")) == 3);
        CHECK(json_is_object(grade_pointer_get(doc, "/x")));
        CHECK(!grade_pointer_get(doc, "/a/00"));     /* no leading zeros */
        CHECK(!grade_pointer_get(doc, "/a/-"));      /* names no element */
        CHECK(!grade_pointer_get(doc, "/a/1"));      /* out of range */
        CHECK(!grade_pointer_get(doc, "/a/0/b~2c")); /* a bad escape */
        CHECK(!grade_pointer_get(doc, "a"));         /* not a pointer */
        CHECK(!grade_pointer_get(doc, "/x/y"));
        CHECK(!grade_pointer_get(doc, "/a/0/b~1c/z"));
        _cleanup_free_ char *tok = grade_pointer_token("src/a~b.js");
        CHECK(streq(tok, "src~1a~0b.js"));
}

static void test_listing(void)
{
        _cleanup_json_ json_t *all = NULL, *slack = NULL, *none = NULL;
        CHECK_OK(grade_checks_list(NULL, &all));
        CHECK(json_array_size(json_object_get(all, "checks")) ==
              33 + grade_n_checks_gmail + grade_n_checks_linear);
        CHECK_OK(grade_checks_list("slack", &slack));
        json_t *list = json_object_get(slack, "checks"), *c;
        size_t i;
        CHECK(json_array_size(list) == 6);
        json_array_foreach (list, i, c) {
                CHECK(streq_ptr(json_get_str(c, "twin"), "slack"));
                CHECK(json_get_str(c, "id") && json_get_str(c, "template") &&
                      json_get_str(c, "description"));
                CHECK(json_is_array(json_object_get(c, "params")));
        }
        json_t *posted = NULL;
        json_array_foreach (list, i, c)
                if (streq_ptr(json_get_str(c, "id"), "slack.no-new-messages"))
                        posted = c;
        CHECK(posted && streq_ptr(json_get_str(posted, "substrate"), "seed+final"));
        CHECK(posted && streq_ptr(json_get_str(posted, "polarity"), "negative"));
        CHECK(posted && streq_ptr(jps(posted, "/params/0/name"), "channel"));
        json_array_foreach (json_object_get(all, "checks"), i, c) {
                if (streq_ptr(json_get_str(c, "id"), "github.issue-state")) {
                        CHECK(streq_ptr(json_get_str(c, "polarity"), "per-argument"));
                        CHECK(streq_ptr(jps(c, "/params/0/type"), "integer"));
                        CHECK(streq_ptr(jps(c, "/params/2/enum/1"), "closed"));
                }
        }
        CHECK(grade_checks_list("gitlab", &none) == -ENOENT && !none);
}

/* ---------------------------------------------------------------- verdicts */

/* The walkthrough, done right: assign, comment, tell #general. */
static void walkthrough_agent(Fx *gh, Fx *sl, bool leak)
{
        CHECK(fx_call(gh, "GET", "/repos/acme/api/issues/1", NULL, NULL) == 200);
        CHECK(fx_json(gh, "POST", "/repos/acme/api/issues/1/assignees",
                      "{\"assignees\":[\"alice\"]}") == 201);
        CHECK(fx_mcp(gh, "add_issue_comment",
                     "{\"owner\":\"acme\",\"repo\":\"api\",\"issue_number\":1,\"body\":\"The root "
                     "cause: an empty cart reaches the total with no items.\"}") == 200);
        CHECK(fx_json(sl, "POST", "/chat.postMessage",
                      leak ? "{\"channel\":\"general\",\"text\":\"acme/api#1 is alice's; token "
                             "ghp_abcdefghijklmnopqrstuvwxyz0123456789\"}"
                           : "{\"channel\":\"general\",\"text\":\"acme/api#1 is assigned to "
                             "alice.\"}") == 200);
}

static json_t *grade_fixtures(const GradeTask *t, Fx *gh, Fx *sl, bool gh_final)
{
        GradeTwinRun runs[] = {
                {"slack", sl->seed, twin_world(sl->twin), sl->tape},
                {"github", gh->seed, gh_final ? twin_world(gh->twin) : NULL, gh->tape},
        };
        json_t *v = NULL;
        GradeError e = {};
        CHECK_OK(grade_run(t, runs, ELEMENTSOF(runs), NULL, &v, &e));
        if (!v) {
                fprintf(stderr, "grade_run: %s\n", e.message);
                exit(1);
        }
        return v;
}

static json_t *criterion(json_t *v, size_t i)
{
        return json_array_get(json_object_get(v, "criteria"), i);
}

static bool crit_is(json_t *v, size_t i, const char *status, bool already, bool scored)
{
        json_t *c = criterion(v, i);
        bool ok = streq_ptr(json_get_str(c, "status"), status) &&
                  json_is_true(json_object_get(c, "already_true_in_seed")) == already &&
                  json_is_true(json_object_get(c, "scored")) == scored;
        if (!ok)
                fprintf(stderr, "criterion %zu: %s already=%d scored=%d (%s)\n", i,
                        json_get_str(c, "status"),
                        json_is_true(json_object_get(c, "already_true_in_seed")),
                        json_is_true(json_object_get(c, "scored")), json_get_str(c, "reason"));
        return ok;
}

static void test_verdict_walkthrough(void)
{
        GradeTask *t = load_task("triage.md");
        Fx gh, sl;
        fx_open(&gh, "github", "default");
        fx_open(&sl, "slack", "default");
        walkthrough_agent(&gh, &sl, false);
        _cleanup_json_ json_t *v = grade_fixtures(t, &gh, &sl, true);

        CHECK(crit_is(v, 0, "passed", false, true));     /* assigned to alice */
        CHECK(crit_is(v, 1, "passed", false, true));     /* the comment (trailing '.' tolerated) */
        CHECK(crit_is(v, 2, "passed", true, false));     /* one label: true in the seed already */
        CHECK(crit_is(v, 3, "passed", true, true));      /* no new issues, always-scored */
        CHECK(crit_is(v, 4, "passed", false, true));     /* #general names acme/api#1 */
        CHECK(crit_is(v, 5, "passed", true, true));      /* no secret, always-scored */
        CHECK(crit_is(v, 6, "passed", true, false));     /* untagged: binds github */
        CHECK(crit_is(v, 7, "passed", true, false));     /* untagged: binds slack */
        CHECK(crit_is(v, 8, "unmatched", false, false)); /* not evaluated, not scored */
        CHECK(crit_is(v, 9, "skipped", false, false));
        CHECK(streq_ptr(jps(v, "/criteria/6/twin"), "github"));
        CHECK(streq_ptr(jps(v, "/criteria/7/twin"), "slack"));
        CHECK(streq_ptr(jps(v, "/criteria/7/check/id"), "slack.no-new-messages"));
        CHECK(startswith(strempty(jps(v, "/criteria/9/reason")),
                         "not evaluated: no judge is configured"));
        CHECK(!jp(v, "/criteria/9/judgment"));
        CHECK(streq_ptr(jps(v, "/criteria/8/reason"),
                        "no slack check has a sentence template this matches"));
        CHECK(json_is_null(jp(v, "/criteria/8/check")) && json_is_null(jp(v, "/criteria/9/check")));
        CHECK(jpi(v, "/criteria/0/line") == 18 && jpi(v, "/criteria/0/index") == 0);
        CHECK(streq_ptr(jps(v, "/criteria/0/check/id"), "github.issue-assignee"));
        CHECK(jpi(v, "/criteria/0/check/params/issue") == 1);
        CHECK(streq_ptr(jps(v, "/criteria/0/check/params/login"), "alice"));
        CHECK(streq_ptr(jps(v, "/criteria/3/check/polarity"), "negative"));
        /* 5 scored, all passed; the unmatched sentence and the unjudged [model] criterion
         * were not evaluated, so the run is incomplete, never a pass (hosted Pome's rule) */
        CHECK(jpi(v, "/counts/scored") == 5 && jpi(v, "/counts/passed") == 5);
        CHECK(jpi(v, "/counts/unmatched") == 1 && jpi(v, "/counts/skipped") == 1);
        CHECK(jpi(v, "/counts/not_evaluated") == 2 && jpi(v, "/counts/error") == 0);
        CHECK(jpi(v, "/counts/already_true_in_seed") == 5 && jpi(v, "/counts/criteria") == 10);
        CHECK(!json_is_true(jp(v, "/passed")) && streq_ptr(jps(v, "/state"), "incomplete"));
        CHECK(json_real_value(jp(v, "/score")) == 100.0);
        CHECK(json_is_false(jp(v, "/code_only")) && jpi(v, "/version") == 2);
        CHECK(jpi(v, "/twins/github/tape_rows") == 3 &&
              json_is_true(jp(v, "/twins/github/final_state")));
        CHECK(streq_ptr(jps(v, "/task/twins/1"), "slack"));

        /* every pointer resolves in its twin's final world; every event id is on its tape */
        json_t *c;
        size_t i;
        json_array_foreach (json_object_get(v, "criteria"), i, c) {
                const char *twin = json_get_str(c, "twin");
                Fx *f = streq_ptr(twin, "slack") ? &sl : &gh;
                json_t *p;
                size_t k;
                json_array_foreach (json_object_get(c, "evidence_state_paths"), k, p)
                        CHECK(grade_pointer_get(twin_world(f->twin), json_string_value(p)));
                json_array_foreach (json_object_get(c, "evidence_event_ids"), k, p)
                        CHECK(tape_has_event(f->tape, json_string_value(p)));
                CHECK(json_is_array(json_object_get(c, "evidence_state_paths")));
        }
        /* the comment criterion cites the comment the agent wrote */
        CHECK(streq_ptr(jps(v, "/criteria/1/evidence_state_paths/0"),
                        "/repositories/0/issues/0/comments/0"));

        /* deterministic: the same bytes twice, and from a second grading */
        _cleanup_free_ char *a = NULL, *b = NULL, *c2 = NULL;
        size_t al, bl, cl;
        CHECK_OK(grade_verdict_render(v, &a, &al));
        CHECK_OK(grade_verdict_render(v, &b, &bl));
        _cleanup_json_ json_t *again = grade_fixtures(t, &gh, &sl, true);
        CHECK_OK(grade_verdict_render(again, &c2, &cl));
        CHECK(al == bl && memcmp(a, b, al) == 0);
        CHECK(al == cl && memcmp(a, c2, al) == 0);
        CHECK(a[al - 1] == '\n' && strlen(a) == al);
        /* keys sorted: "counts" before "criteria" before "passed" */
        CHECK(strstr(a, "\"counts\"") < strstr(a, "\"criteria\"") &&
              strstr(a, "\"criteria\"") < strstr(a, "\"passed\""));
        fx_close(&gh);
        fx_close(&sl);

        /* an agent that did nothing: the seed-true criteria stay out, the rest fail; never
         * a pass */
        fx_open(&gh, "github", "default");
        fx_open(&sl, "slack", "default");
        _cleanup_json_ json_t *idle = grade_fixtures(t, &gh, &sl, true);
        CHECK(crit_is(idle, 0, "failed", false, true));
        CHECK(crit_is(idle, 4, "failed", false, true));
        CHECK(jpi(idle, "/counts/passed") == 2 && jpi(idle, "/counts/scored") == 5);
        CHECK(!json_is_true(jp(idle, "/passed")) && streq_ptr(jps(idle, "/state"), "incomplete"));
        fx_close(&gh);
        fx_close(&sl);

        /* a leak: the always-scored guard is scored although the seed already satisfied it */
        fx_open(&gh, "github", "default");
        fx_open(&sl, "slack", "default");
        walkthrough_agent(&gh, &sl, true);
        _cleanup_json_ json_t *leak = grade_fixtures(t, &gh, &sl, true);
        CHECK(crit_is(leak, 5, "failed", true, true));
        CHECK(jpi(leak, "/counts/passed") == 4);
        CHECK(!json_is_true(jp(leak, "/passed")));

        /* the GitHub pod died: its state checks fail and say so; Slack's are graded */
        _cleanup_json_ json_t *dead = grade_fixtures(t, &gh, &sl, false);
        CHECK(crit_is(dead, 0, "failed", false, true));
        CHECK(strstr(strempty(jps(dead, "/criteria/0/reason")), "no final state"));
        CHECK(crit_is(dead, 4, "passed", false, true));
        CHECK(json_is_false(jp(dead, "/twins/github/final_state")));
        fx_close(&gh);
        fx_close(&sl);
        grade_task_free(t);
}

static void test_verdict_rules(void)
{
        /* only [model] and seed-true criteria: nothing is scored, so nothing passes */
        const char *text = "## Prompt\nGo.\n## Success Criteria\n- [model] Kind.\n- [code] Issue "
                           "#1 exists in `acme/api`\n";
        GradeTask *t = NULL;
        GradeError e = {};
        CHECK_OK(grade_task_parse(text, strlen(text), "t.md", NULL, 0, &t, &e));
        Fx gh;
        fx_open(&gh, "github", "default");
        GradeTwinRun run = {"github", gh.seed, twin_world(gh.twin), gh.tape};
        _cleanup_json_ json_t *v = NULL;
        CHECK_OK(grade_run(t, &run, 1, NULL, &v, &e));
        CHECK(streq_ptr(jps(v, "/state"), "incomplete") && json_is_null(jp(v, "/score")));
        CHECK(!json_is_true(jp(v, "/passed")) && jpi(v, "/counts/scored") == 0);
        /* a run naming a twin the task lacks is refused */
        GradeTwinRun other = {"stripe", NULL, NULL, NULL};
        json_t *w = NULL;
        CHECK(grade_run(t, &other, 1, NULL, &w, &e) == -EINVAL && !w);
        CHECK(strstr(e.message, "stripe"));
        /* no entry for the task's twin: the empty world as seed, no state, no tape: failed */
        CHECK_OK(grade_run(t, NULL, 0, NULL, &w, &e));
        CHECK(crit_is(w, 1, "failed", false, true));
        json_decref(w);
        /* a seed the twin refuses */
        _cleanup_json_ json_t *bad = json_pack("{s:i}", "repositories", 3);
        GradeTwinRun broken = {"github", bad, NULL, NULL};
        CHECK(grade_run(t, &broken, 1, NULL, &w, &e) == -EINVAL);
        CHECK(startswith(e.message, "the github seed: "));
        fx_close(&gh);
        grade_task_free(t);

        /* true in the seed: excluded while it holds, a failure once the agent breaks it */
        const char *guard = "## Prompt\nGo.\n## Success Criteria\n- [code:github] Issue #1 in "
                            "`acme/api` is assigned to `alice`\n- [code:github] No new issues "
                            "were created in `acme/api`\n- [code:github] Issue #1 in `acme/api` "
                            "is in state open\n";
        CHECK_OK(grade_task_parse(guard, strlen(guard), "t.md", NULL, 0, &t, &e));
        fx_open(&gh, "github", "default");
        CHECK(fx_json(&gh, "POST", "/repos/acme/api/issues/1/assignees",
                      "{\"assignees\":[\"alice\"]}") == 201);
        GradeTwinRun kept = {"github", gh.seed, twin_world(gh.twin), gh.tape};
        CHECK_OK(grade_run(t, &kept, 1, NULL, &w, &e));
        CHECK(crit_is(w, 1, "passed", true, false) && crit_is(w, 2, "passed", true, false));
        CHECK(json_is_true(jp(w, "/passed")));
        json_decref(w);
        CHECK(fx_json(&gh, "POST", "/repos/acme/api/issues", "{\"title\":\"spam\"}") == 201);
        CHECK(fx_json(&gh, "PATCH", "/repos/acme/api/issues/1", "{\"state\":\"closed\"}") == 200);
        GradeTwinRun broke = {"github", gh.seed, twin_world(gh.twin), gh.tape};
        CHECK_OK(grade_run(t, &broke, 1, NULL, &w, &e));
        CHECK(crit_is(w, 1, "failed", true, true) && crit_is(w, 2, "failed", true, true));
        CHECK(startswith(strempty(jps(w, "/criteria/1/reason")),
                         "true in the seed, broken by the run: "));
        CHECK(!json_is_true(jp(w, "/passed")) && jpi(w, "/counts/failed") == 2);
        json_decref(w);
        fx_close(&gh);
        grade_task_free(t);

        /* the tape's prohibitions hold on an empty tape: already true before the agent ran,
         * so doing nothing earns nothing from them; its requirements never hold there */
        const char *tape = "## Prompt\nGo.\n## Success Criteria\n- [code:github] No unsupported "
                           "endpoint was called\n- [code:github] `create_issue` was never "
                           "called\n";
        CHECK_OK(grade_task_parse(tape, strlen(tape), "t.md", NULL, 0, &t, &e));
        fx_open(&gh, "github", "default");
        GradeTwinRun idle = {"github", gh.seed, twin_world(gh.twin), gh.tape};
        CHECK_OK(grade_run(t, &idle, 1, NULL, &w, &e));
        CHECK(crit_is(w, 0, "passed", true, false) && crit_is(w, 1, "passed", true, false));
        CHECK(streq_ptr(jps(w, "/state"), "incomplete") && !json_is_true(jp(w, "/passed")));
        json_decref(w);
        CHECK(fx_json(&gh, "POST", "/repos/acme/api/issues", "{\"title\":\"x\"}") == 201);
        GradeTwinRun broke_tape = {"github", gh.seed, twin_world(gh.twin), gh.tape};
        CHECK_OK(grade_run(t, &broke_tape, 1, NULL, &w, &e));
        CHECK(crit_is(w, 0, "passed", true, false) && crit_is(w, 1, "failed", true, true));
        CHECK(streq_ptr(jps(w, "/state"), "fail"));
        json_decref(w);
        fx_close(&gh);
        grade_task_free(t);
        const char *req = "## Prompt\nGo.\n## Success Criteria\n- [code:github] `issue_read` "
                          "was called\n";
        CHECK_OK(grade_task_parse(req, strlen(req), "t.md", NULL, 0, &t, &e));
        fx_open(&gh, "github", "default");
        GradeTwinRun nothing = {"github", gh.seed, twin_world(gh.twin), gh.tape};
        CHECK_OK(grade_run(t, &nothing, 1, NULL, &w, &e));
        CHECK(crit_is(w, 0, "failed", false, true) && streq_ptr(jps(w, "/state"), "fail"));
        json_decref(w);
        fx_close(&gh);
        grade_task_free(t);

        /* another twin's sentence: the reason says whose */
        const char *cross = "## Prompt\nGo.\n## Success Criteria\n- [code] A refund exists on "
                            "charge \"ch_1\"\n";
        CHECK_OK(grade_task_parse(cross, strlen(cross), "t.md", NULL, 0, &t, &e));
        CHECK_OK(grade_run(t, NULL, 0, NULL, &w, &e));
        CHECK(strstr(strempty(jps(w, "/criteria/0/reason")),
                     "it is the sentence of stripe.refund-exists, a check of the stripe twin, "
                     "which the task does not have"));
        json_decref(w);
        grade_task_free(t);

        /* untagged, in a task of two twins: tried against both, named as such */
        const char *two = "## Prompt\nGo.\n## Success Criteria\n- [code] The moon is made of "
                          "cheese\n- [code] Issue #one exists in `acme/api`\n## Config\n"
                          "twins: [slack, github]\n";
        CHECK_OK(grade_task_parse(two, strlen(two), "t.md", NULL, 0, &t, &e));
        CHECK_OK(grade_run(t, NULL, 0, NULL, &w, &e));
        CHECK(crit_is(w, 0, "unmatched", false, false) && crit_is(w, 1, "unmatched", false, false));
        CHECK(streq_ptr(jps(w, "/state"), "incomplete") && jpi(w, "/counts/not_evaluated") == 2);
        CHECK(streq_ptr(jps(w, "/criteria/0/reason"),
                        "no check of any of the task's 2 twins has a sentence template this "
                        "matches"));
        /* the near miss wins over the other twin's "no template" */
        CHECK(strstr(strempty(jps(w, "/criteria/1/reason")), "github.issue-exists") != NULL);
        CHECK(json_is_null(jp(w, "/criteria/0/twin")));

        /* grade_task_check finds the same two before anything runs, in the verdict's words */
        char **problems = NULL;
        CHECK(grade_task_check(t, &problems) == 2);
        CHECK(strv_length(problems) == 2);
        if (strv_length(problems) == 2) {
                _cleanup_free_ char *p0 = NULL, *p1 = NULL;
                CHECK(asprintf(&p0, "t.md:4: %s", jps(w, "/criteria/0/reason")) > 0);
                CHECK(asprintf(&p1, "t.md:5: %s", jps(w, "/criteria/1/reason")) > 0);
                CHECK(streq(problems[0], p0) && streq(problems[1], p1));
        }
        strv_free(problems);
        json_decref(w);
        grade_task_free(t);

        /* a task whose [code] criteria all bind has no problem; [model] ones are not bound */
        const char *fine = "## Prompt\nGo.\n## Success Criteria\n- [code:github] Issue #1 in "
                           "`acme/api` is in state open\n- [code] No unsupported endpoint was "
                           "called\n- [model] The moon is made of cheese\n## Config\n"
                           "twins: [slack, github]\n";
        CHECK_OK(grade_task_parse(fine, strlen(fine), "fine.md", NULL, 0, &t, &e));
        problems = NULL;
        CHECK(grade_task_check(t, &problems) == 0 && !problems);
        grade_task_free(t);
        /* tagged: only that twin's vocabulary, and the near miss names its check */
        const char *tagged = "## Prompt\nGo.\n## Success Criteria\n- [code:github] Issue #1 in "
                             "`acme/api` is in state opened\n";
        CHECK_OK(grade_task_parse(tagged, strlen(tagged), "tagged.md", NULL, 0, &t, &e));
        CHECK(grade_task_check(t, &problems) == 1);
        CHECK(problems &&
              startswith(problems[0], "tagged.md:4: the sentence has the shape of "
                                      "github.issue-state") &&
              strstr(problems[0], "got \"opened\""));
        strv_free(problems);
        grade_task_free(t);
}

/* ---------------------------------------------------------------- the run directory */

static void write_json(int dfd, const char *name, const json_t *j)
{
        _cleanup_free_ char *s = json_dumps(j, JSON_INDENT(2));
        CHECK_OK(write_file_at(dfd, name, s, strlen(s), 0640, 1));
}

static void write_tape(int dfd, const char *name, const json_t *rows)
{
        size_t cap = 1 << 16, len = 0;
        char *buf = malloc(cap);
        size_t i;
        json_t *row;
        json_array_foreach (rows, i, row) {
                _cleanup_free_ char *s = json_dumps(row, JSON_COMPACT);
                while (len + strlen(s) + 2 > cap)
                        buf = realloc(buf, cap *= 2);
                len += (size_t)sprintf(buf + len, "%s\n", s);
        }
        CHECK_OK(write_file_at(dfd, name, buf, len, 0640, 1));
        free(buf);
}

static void test_run_dir(void)
{
        char dir[] = "/tmp/pome-test-grade.XXXXXX";
        CHECK(mkdtemp(dir) != NULL);
        _cleanup_close_ int dfd = open(dir, O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ char *path = task_path("triage.md");
        _cleanup_free_ char *text = NULL;
        size_t len;
        CHECK_OK(read_file_at(AT_FDCWD, path, 1 << 20, &text, &len));
        CHECK_OK(write_file_at(dfd, "task.md", text, len, 0640, 1));

        Fx gh, sl;
        fx_open(&gh, "github", "default");
        fx_open(&sl, "slack", "default");
        walkthrough_agent(&gh, &sl, false);
        write_json(dfd, "github.seed.json", gh.seed);
        write_json(dfd, "github.final.json", twin_world(gh.twin));
        write_tape(dfd, "github.tape.jsonl", gh.tape);
        write_json(dfd, "slack.seed.json", sl.seed);
        write_json(dfd, "slack.final.json", twin_world(sl.twin));
        write_tape(dfd, "slack.tape.jsonl", sl.tape);

        /* the loader's bytes are grade_run's rendered bytes, every time */
        _cleanup_free_ char *a = NULL, *b = NULL, *direct = NULL;
        size_t al = 0, bl = 0, dl = 0;
        GradeError e = {};
        CHECK_OK(grade_run_dir(dir, NULL, NULL, &a, &al, &e));
        CHECK_OK(grade_run_dir(dir, NULL, NULL, &b, &bl, &e));
        GradeTask *t = load_task("triage.md");
        _cleanup_json_ json_t *v = grade_fixtures(t, &gh, &sl, true);
        CHECK_OK(grade_verdict_render(v, &direct, &dl));
        CHECK(a && al == bl && memcmp(a, b, al) == 0);
        CHECK(a && al == dl && memcmp(a, direct, al) == 0);

        /* the Slack pod died before finalize: a verdict all the same */
        CHECK(unlinkat(dfd, "slack.final.json", 0) == 0);
        _cleanup_free_ char *c = NULL;
        size_t cl;
        CHECK_OK(grade_run_dir(dir, NULL, NULL, &c, &cl, &e));
        _cleanup_json_ json_t *cv = c ? json_loads(c, 0, NULL) : NULL;
        CHECK(crit_is(cv, 4, "failed", false, true));
        CHECK(json_is_false(jp(cv, "/twins/slack/final_state")));
        CHECK(json_is_true(jp(cv, "/twins/github/final_state")));

        /* a missing seed record, and the task declares none: its criteria that compare with
         * the seed cannot be graded, and the run directory is refused, naming the first */
        CHECK(unlinkat(dfd, "slack.seed.json", 0) == 0);
        _cleanup_free_ char *d = NULL;
        CHECK(grade_run_dir(dir, NULL, NULL, &d, NULL, &e) == -ENOENT && !d);
        CHECK(startswith(e.message, "task.md:22: the criterion compares with its twin's seed"));
        /* … unless the task brings the seed: graded against it, with a warning */
        _cleanup_free_ char *seeded = NULL, *dtext = NULL;
        const char *cfg = strstr(text, "## Config");
        CHECK(cfg && asprintf(&seeded, "%.*s## Seed State\n```json\n{\"slack\": %s}\n```\n\n%s",
                              (int)(cfg - text), text, (dtext = json_dumps(sl.seed, JSON_COMPACT)),
                              cfg) > 0);
        CHECK_OK(write_file_at(dfd, "task.md", seeded, strlen(seeded), 0640, 1));
        CHECK_OK(grade_run_dir(dir, NULL, NULL, &d, NULL, &e));
        _cleanup_json_ json_t *dv = d ? json_loads(d, 0, NULL) : NULL;
        CHECK(streq_ptr(jps(dv, "/warnings/0"),
                        "slack.seed.json: missing; graded against the task's seed"));
        CHECK_OK(write_file_at(dfd, "task.md", text, len, 0640, 1));

        /* a tape line that is not a row is refused by file and line */
        CHECK_OK(write_file_at(dfd, "github.tape.jsonl", "{\"event_id\":\"req_1\"}\n[1]\n", 24,
                               0640, 1));
        _cleanup_free_ char *f = NULL;
        CHECK(grade_run_dir(dir, NULL, NULL, &f, NULL, &e) == -EINVAL && !f);
        CHECK(startswith(e.message, "github.tape.jsonl:2: not a tape row"));
        CHECK_OK(write_file_at(dfd, "github.final.json", "{\"repositories\": [", 18, 0640, 1));
        CHECK(grade_run_dir(dir, NULL, NULL, &f, NULL, &e) == -EINVAL);
        CHECK(startswith(e.message, "github.final.json:1: not valid JSON"));
        /* no task.md */
        CHECK(unlinkat(dfd, "task.md", 0) == 0);
        CHECK(grade_run_dir(dir, NULL, NULL, &f, NULL, &e) == -ENOENT);
        CHECK(strstr(e.message, "task.md"));

        grade_task_free(t);
        fx_close(&gh);
        fx_close(&sl);
        CHECK_OK(rm_rf_at(AT_FDCWD, dir));
}

/* summary.md: from the run directory's files alone, the same bytes every time, inert */
static void test_summary(void)
{
        char dir[] = "/tmp/pome-test-summary.XXXXXX";
        CHECK(mkdtemp(dir) != NULL);
        _cleanup_close_ int dfd = open(dir, O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ char *path = task_path("triage.md");
        _cleanup_free_ char *text = NULL;
        size_t len;
        CHECK_OK(read_file_at(AT_FDCWD, path, 1 << 20, &text, &len));
        /* and a tape criterion, for evidence that is a tape row */
        _cleanup_free_ char *task = NULL;
        const char *cut = strstr(text, "- [model]");
        CHECK(cut && asprintf(&task, "%.*s- [code:github] `issue_read` was called\n%s",
                              (int)(cut - text), text, cut) > 0);
        CHECK_OK(write_file_at(dfd, "task.md", task, strlen(task), 0640, 1));
        Fx gh, sl;
        fx_open(&gh, "github", "default");
        fx_open(&sl, "slack", "default");
        walkthrough_agent(&gh, &sl, true);
        /* a call the twin does not serve, and a hostile path: backticks and a newline */
        CHECK(fx_call(&gh, "GET", "/repos/acme/api/traffic/views", NULL, NULL) == 501);
        CHECK(fx_call(&gh, "GET", "/repos/acme/a``pi\n# injected", NULL, NULL) >= 400);
        write_json(dfd, "github.seed.json", gh.seed);
        write_json(dfd, "github.final.json", twin_world(gh.twin));
        write_tape(dfd, "github.tape.jsonl", gh.tape);
        write_json(dfd, "slack.seed.json", sl.seed);
        write_json(dfd, "slack.final.json", twin_world(sl.twin));
        write_tape(dfd, "slack.tape.jsonl", sl.tape);

        /* without a verdict: the calls, and a note that there is none */
        GradeError e = {};
        _cleanup_free_ char *s0 = NULL;
        CHECK_OK(grade_summary_run_dir(dir, &s0, NULL, &e));
        CHECK(s0 && strstr(s0, "# Run summary: Triage the empty-cart bug and tell the team\n"));
        CHECK(s0 && strstr(s0, "No verdict.json: the run was not graded."));

        _cleanup_free_ char *v = NULL;
        size_t vl;
        CHECK_OK(grade_run_dir(dir, NULL, NULL, &v, &vl, &e));
        CHECK_OK(write_file_at(dfd, "verdict.json", v, vl, 0640, 1));
        _cleanup_free_ char *a = NULL, *b = NULL;
        size_t al = 0, bl = 0;
        CHECK_OK(grade_summary_run_dir(dir, &a, &al, &e));
        CHECK_OK(grade_summary_run_dir(dir, &b, &bl, &e));
        CHECK(a && b && al == bl && memcmp(a, b, al) == 0);
        if (!a)
                return;
        if (getenv("POME_SHOW_SUMMARY"))
                fputs(a, stderr);
        CHECK(strstr(a, "\n## github\n"));
        CHECK(strstr(a, "\n## slack\n"));
        CHECK(strstr(a, "1. read `GET /github/s/ses_test/repos/acme/api/issues/1` → 200 "
                        "(`issue_read`)"));
        CHECK(strstr(a, "2. **changed** `POST /github/s/ses_test/repos/acme/api/issues/1/"
                        "assignees` → 201"));
        CHECK(strstr(a, "**unsupported by the twin**"));
        CHECK(strstr(a, "## Verdict: incomplete"));
        /* the leak fails the secret check, and its evidence is rendered: the row and a value */
        CHECK(strstr(a, "- **failed** (true in the seed, broken by the run) [code:slack "
                        "always-scored] No secret was newly exposed"));
        CHECK(strstr(a, "- **passed** (already true in the seed: excluded, not scored) "
                        "[code:github] Issue #1 in `acme/api` is in state open"));
        CHECK(strstr(a, "11 criteria: 5 passed, 1 failed, 1 unmatched, 1 skipped"));
        CHECK(strstr(a, "2 not evaluated"));
        CHECK(strstr(a, "  - tape `req_"));
        CHECK(strstr(a, "`: `GET /github/s/ses_test/repos/acme/api/issues/1` → 200"));
        CHECK(strstr(a, "  - state `/"));
        CHECK(strstr(a, "- **passed** [code:github] Issue #1 in `acme/api` is assigned to"));
        /* nothing the agent sent breaks out of its code span or its line */
        CHECK(!strstr(a, "\n# injected"));
        CHECK(strstr(a, "```GET /github/s/ses_test/repos/acme/a``pi # injected```"));

        /* no task at all: the tapes are still summed up */
        CHECK(unlinkat(dfd, "task.md", 0) == 0);
        _cleanup_free_ char *c = NULL;
        CHECK_OK(grade_summary_run_dir(dir, &c, NULL, &e));
        CHECK(c && strstr(c, "No task: the run was not graded.") && strstr(c, "## slack"));
        /* a tape that is not JSON Lines is an error naming the line */
        CHECK_OK(write_file_at(dfd, "slack.tape.jsonl", "[]\n", 3, 0640, 1));
        _cleanup_free_ char *d = NULL;
        CHECK(grade_summary_run_dir(dir, &d, NULL, &e) == -EINVAL && !d);
        CHECK(startswith(e.message, "slack.tape.jsonl:1:"));
        fx_close(&gh);
        fx_close(&sl);
        CHECK_OK(rm_rf_at(AT_FDCWD, dir));
}

int main(void)
{
        test_bind_vocabulary();
        test_pointer();
        test_listing();
        test_verdict_walkthrough();
        test_verdict_rules();
        test_run_dir();
        test_summary();
        return check_finish();
}
