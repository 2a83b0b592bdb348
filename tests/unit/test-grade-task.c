/* SPDX-License-Identifier: MIT */
/*
 * Task files: the samples in tests/unit/tasks/ (hosted Pome's Markdown, both criterion
 * marker spellings, section aliases, a prose seed and its sidecar), ## Config's defaults and
 * warnings, and every refusal naming file:line.
 */
#include <dirent.h>
#include <fcntl.h>

#include "common/fileio.h"
#include "common/strv.h"
#include "common/text.h"
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

/* Parses text as t.md; returns the error (r < 0) or 0 with the task freed. */
static int parse_err(const char *text, char *msg, size_t len)
{
        GradeTask *t = NULL;
        GradeError e = {};
        int r = grade_task_parse(text, strlen(text), "t.md", NULL, 0, &t, &e);
        snprintf(msg, len, "%s", r < 0 ? e.message : "");
        grade_task_free(t);
        return r;
}

#define EXPECT_TASK_ERROR(text, expected)                                                    \
        do {                                                                                 \
                char _m_[4096];                                                              \
                int _r_ = parse_err(text, _m_, sizeof(_m_));                                 \
                if (_r_ != -EINVAL || !strstr(_m_, expected)) {                              \
                        fprintf(stderr,                                                      \
                                "%s:%d: wanted an error containing \"%s\", got %d \"%s\"\n", \
                                __FILE__, __LINE__, expected, _r_, _m_);                     \
                        check_failures++;                                                    \
                }                                                                            \
        } while (0)

#define MINIMAL                                                                                  \
        "# T\n\n## Prompt\nDo it.\n\n## Success Criteria\n- [code] No unsupported endpoint was " \
        "called\n"

/* ---------------------------------------------------------------- task files */

static void test_task_samples(void)
{
        GradeTask *t = load_task("triage.md");
        CHECK(streq(t->title, "Triage the empty-cart bug and tell the team"));
        CHECK(streq(t->name, "triage.md"));
        CHECK(strv_length(t->twins) == 2 && streq(t->twins[0], "github") &&
              streq(t->twins[1], "slack"));
        CHECK(t->timeout_sec == 120 && t->runs == 1 && t->pass_threshold == 80);
        CHECK(streq_ptr(t->task_class, "conformance"));
        CHECK(startswith(t->prompt, "Triage acme/api#1") && !strstr(t->prompt, "## "));
        CHECK(startswith(t->setup, "The default seeds"));
        CHECK(startswith(t->expected_behavior, "One assignment"));
        CHECK(t->n_criteria == 10);
        CHECK(t->criteria[0].line == 18 && t->criteria[0].kind == GRADE_CRITERION_CODE &&
              streq_ptr(t->criteria[0].twin, "github") && !t->criteria[0].always_scored);
        CHECK(streq(t->criteria[0].text, "Issue #1 in `acme/api` is assigned to `alice`"));
        /* always-scored in the marker (hosted Pome's grammar) and as the first word */
        CHECK(t->criteria[3].always_scored && streq_ptr(t->criteria[3].twin, "github"));
        CHECK(t->criteria[5].always_scored && streq_ptr(t->criteria[5].twin, "slack"));
        CHECK(streq(t->criteria[5].text, "No secret was newly exposed in a public channel"));
        CHECK(!t->criteria[6].twin && t->criteria[6].line == 24);
        CHECK(t->criteria[9].kind == GRADE_CRITERION_MODEL && t->criteria[9].line == 27);
        CHECK(json_object_size(t->seeds) == 0 && !t->warnings);
        grade_task_free(t);

        /* ## Task and ## Checks are hosted Pome's aliases; the sidecar compiles a prose seed */
        t = load_task("refund.md");
        CHECK(strv_length(t->twins) == 1 && streq(t->twins[0], "stripe") && t->runs == 3);
        CHECK(t->timeout_sec == 60 && t->pass_threshold == 100 && !t->task_class);
        CHECK(startswith(t->prompt, "Grace was charged twice") && t->n_criteria == 4);
        CHECK(t->criteria[2].always_scored && !t->criteria[2].twin);
        CHECK(json_array_size(jp(json_object_get(t->seeds, "stripe"), "/charges")) == 4);
        grade_task_free(t);

        /* without its sidecar a prose seed is no seed: the task parses, saying where the prose
         * is, for a caller with no seed of its own to refuse it */
        _cleanup_free_ char *path = task_path("refund.md");
        _cleanup_free_ char *text = NULL;
        size_t len;
        CHECK_OK(read_file_at(AT_FDCWD, path, 1 << 20, &text, &len));
        GradeError e = {};
        t = NULL;
        CHECK_OK(grade_task_parse(text, len, "refund.md", NULL, 0, &t, &e));
        CHECK(t && t->seed_prose_line == 18 && json_is_object(t->seeds) &&
              json_object_size(t->seeds) == 0 && t->n_criteria == 4);
        t = grade_task_free(t);
        /* with it, the sidecar is the seed and the prose is nothing to refuse */
        _cleanup_free_ char *side_path = task_path("refund.seed.json"), *side = NULL;
        size_t side_len = 0;
        CHECK_OK(read_file_at(AT_FDCWD, side_path, 1 << 20, &side, &side_len));
        CHECK_OK(grade_task_parse(text, len, "refund.md", side, side_len, &t, &e));
        CHECK(t && t->seed_prose_line == 0 && json_object_get(t->seeds, "stripe"));
        grade_task_free(t);
        /* a JSON seed is no prose either */
        const char *json_seed = MINIMAL "## Seed State\n{\"repositories\": []}\n";
        CHECK_OK(grade_task_parse(json_seed, strlen(json_seed), "t.md", NULL, 0, &t, &e));
        CHECK(t && t->seed_prose_line == 0 && json_object_get(t->seeds, "github"));
        grade_task_free(t);
}

static void test_task_config(void)
{
        GradeTask *t = NULL;
        GradeError e = {};
        /* no ## Config: hosted Pome's defaults */
        CHECK_OK(grade_task_parse(MINIMAL, strlen(MINIMAL), "t.md", NULL, 0, &t, &e));
        CHECK(t && strv_length(t->twins) == 1 && streq(t->twins[0], "github"));
        CHECK(t && t->timeout_sec == 60 && t->runs == 1 && t->pass_threshold == 100);
        CHECK(t && streq(t->title, "T"));
        t = grade_task_free(t);

        /* plain YAML (no fence), CRLF line ends, an unknown key kept as a warning */
        const char *crlf = "## Prompt\r\nGo.\r\n## Success Criteria\r\n- [code] No unsupported "
                           "endpoint was called\r\n## Config\r\ntwins: [stripe]\r\nmodel: opus\r\n"
                           "passThreshold: 50.5\r\n";
        CHECK_OK(grade_task_parse(crlf, strlen(crlf), "t.md", NULL, 0, &t, &e));
        CHECK(t && streq(t->twins[0], "stripe") && t->pass_threshold == 50.5);
        CHECK(t && streq(t->title, "t")); /* no # Title: the file name */
        CHECK(t && strv_length(t->warnings) == 1 &&
              streq(t->warnings[0], "t.md:7: unknown ## Config key \"model\" ignored"));
        CHECK(t && streq(t->criteria[0].text, "No unsupported endpoint was called"));
        t = grade_task_free(t);

        EXPECT_TASK_ERROR(MINIMAL "\n## Config\n```yaml\ntwins: [github\ntimeout: 3\n```\n",
                          "t.md:12: ## Config is not valid YAML: ");
        EXPECT_TASK_ERROR(MINIMAL "## Config\ntwins: [github\n\n",
                          "t.md:9: ## Config is not valid YAML: did not find expected");
        EXPECT_TASK_ERROR(MINIMAL "## Config\ntwins:\n  - github\n  - gitlab\n",
                          "t.md:11: unknown twin \"gitlab\"");
        EXPECT_TASK_ERROR(MINIMAL "## Config\ntwins: [github, github]\n",
                          "t.md:9: twin \"github\" is listed twice");
        EXPECT_TASK_ERROR(MINIMAL "## Config\ntwins: [github, slack, stripe, github]\n",
                          "t.md:9: a sandbox holds at most 3 twins");
        EXPECT_TASK_ERROR(MINIMAL "## Config\ntwins: github\n", "t.md:9: twins must be a list");
        EXPECT_TASK_ERROR(MINIMAL "## Config\ntimeout: -5\n",
                          "t.md:9: timeout must be a positive integer of seconds");
        EXPECT_TASK_ERROR(MINIMAL "## Config\n\nruns: two\n", "t.md:10: runs must be a positive");
        EXPECT_TASK_ERROR(MINIMAL "## Config\npassThreshold: 150\n",
                          "t.md:9: passThreshold must be a number from 0 to 100");
        EXPECT_TASK_ERROR(MINIMAL "## Config\nclass: easy\n", "t.md:9: class must be");
        EXPECT_TASK_ERROR(MINIMAL "## Config\n- github\n", "t.md:9: ## Config must be a YAML "
                                                           "mapping");
}

static void test_task_criteria(void)
{
        EXPECT_TASK_ERROR("# T\n## Success Criteria\n- [code] x\n",
                          "t.md:4: the task has no ## Prompt section");
        EXPECT_TASK_ERROR("# T\n## Prompt\n\n## Success Criteria\n- [code] x\n",
                          "t.md:2: ## Prompt is empty");
        EXPECT_TASK_ERROR("# T\n## Prompt\nGo.\n", "t.md:4: the task has no ## Success Criteria");
        EXPECT_TASK_ERROR("# T\n## Prompt\nGo.\n## Success Criteria\nNone yet.\n- [ ] a todo\n",
                          "t.md:4: ## Success Criteria lists no criterion");
        EXPECT_TASK_ERROR("## Prompt\nGo.\n## Success Criteria\n- [code:gitlab] Issue #1 exists\n",
                          "t.md:4: unknown twin \"gitlab\" in [code:gitlab]");
        EXPECT_TASK_ERROR("## Prompt\nGo.\n## Success Criteria\n- [code] a\n- [code:slack] No "
                          "secret was newly exposed in a public channel\n",
                          "t.md:5: a criterion for the slack twin, which the task does not have "
                          "(its twins: github)");
        /* near misses are refused rather than read as prose */
        EXPECT_TASK_ERROR("## Prompt\nGo.\n## Success Criteria\n- [code] a\n- [code always] b\n",
                          "t.md:5: \"- [code always] b\" reaches for a criterion marker");
        EXPECT_TASK_ERROR("## Prompt\nGo.\n## Success Criteria\n- [code, always-scored] b\n",
                          "t.md:4: \"- [code, always-scored] b\" reaches for");
        EXPECT_TASK_ERROR("## Prompt\nGo.\n## Success Criteria\n- [code:Slack] b\n",
                          "t.md:4: \"- [code:Slack] b\" reaches for");
        EXPECT_TASK_ERROR("## Prompt\nGo.\n## Success Criteria\n- [code]\n", "t.md:4:");
        EXPECT_TASK_ERROR("## Prompt\nGo.\n## Success Criteria\n- [model always-scored] nice\n",
                          "t.md:4: always-scored applies to [code] criteria only");
        EXPECT_TASK_ERROR("## Prompt\nGo.\n## Prompt\nAgain.\n## Success Criteria\n- [code] a\n",
                          "t.md:3: a second ## Prompt section (the first is at line 1)");
        EXPECT_TASK_ERROR("## Prompt\nGo \xff.\n## Success Criteria\n- [code] a\n",
                          "t.md:2: not valid UTF-8 text");

        /* misspelt markers are refused naming the line, never dropped (the criteria count
         * would fall by one and nothing would say so) */
#define CRIT(line) "## Prompt\nGo.\n## Success Criteria\n- [code] a\n" line "\n"
        EXPECT_TASK_ERROR(CRIT("- [Code:github] Issue #1 in `acme/api` is in state open"),
                          "t.md:5: \"- [Code:github] Issue #1 in `acme/api` is in state open\" "
                          "reaches for a criterion marker but is not one (markers are lower "
                          "case): write - [code] …");
        EXPECT_TASK_ERROR(CRIT("- [cod:github] Issue #1 in `acme/api` is in state open"),
                          "t.md:5: \"- [cod:github] Issue #1 in `acme/api` is in state open\" "
                          "reaches for a criterion marker but is not one (a bracket there "
                          "opens a marker");
        EXPECT_TASK_ERROR(CRIT("[code:github] Issue #1 in `acme/api` is in state open"),
                          "t.md:5: \"[code:github] Issue #1 in `acme/api` is in state open\" "
                          "reaches for a criterion marker but is not one (a criterion is a "
                          "list item: start the line with \"- \")");
        EXPECT_TASK_ERROR(CRIT("- code:github Issue #1 in `acme/api` is in state open"),
                          "t.md:5: \"- code:github Issue #1 in `acme/api` is in state open\" "
                          "reaches for a criterion marker but is not one (a marker goes in "
                          "brackets)");
        EXPECT_TASK_ERROR(CRIT("- [Model] The comment is polite"),
                          "t.md:5: \"- [Model] The comment is polite\" reaches for a criterion "
                          "marker but is not one (markers are lower case)");
        EXPECT_TASK_ERROR(CRIT("- [MODEL:github] Polite"), "t.md:5: \"- [MODEL:github] Polite\" "
                                                           "reaches for a criterion marker");
        EXPECT_TASK_ERROR(CRIT("- Code: the fix compiles"), "(a marker goes in brackets)");
        EXPECT_TASK_ERROR(CRIT("model] polite"), "t.md:5: \"model] polite\" reaches for");
        EXPECT_TASK_ERROR(CRIT("-[code] glued"), "t.md:5: \"-[code] glued\" reaches for");
        EXPECT_TASK_ERROR(CRIT("+ [code] plus"), "(a criterion's bullet is \"- \" or \"* \")");
        EXPECT_TASK_ERROR(CRIT("2. [code:github] numbered"), "t.md:5: \"2. [code:github] "
                                                             "numbered\" reaches for");
        EXPECT_TASK_ERROR(CRIT("- [codex] prose"), "t.md:5: \"- [codex] prose\" reaches for");
        EXPECT_TASK_ERROR(CRIT("* [ code ] spaced inside"), "t.md:5:");
#undef CRIT

        /* prose stays prose, a list item without a marker is a warning, a task-list box
         * is a list item; fenced headings are not headings */
        const char *ok = "# T\n## Prompt\nGo.\n```\n## Success Criteria\n- [code] fenced\n```\n"
                         "## Success Criteria\nEvery line below is graded.\n- [x] done\n"
                         "* [code]  spaced  \n- [model:github] Polite.\n- the reviewer "
                         "is happy\n1. a numbered note\n---\nCodes and models: prose.\n";
        GradeTask *t = NULL;
        GradeError e = {};
        CHECK_OK(grade_task_parse(ok, strlen(ok), "t.md", NULL, 0, &t, &e));
        CHECK(t && t->n_criteria == 2);
        if (t) {
                CHECK(t->criteria[0].line == 11 && streq(t->criteria[0].text, "spaced"));
                CHECK(t->criteria[1].kind == GRADE_CRITERION_MODEL &&
                      streq_ptr(t->criteria[1].twin, "github"));
                CHECK(strv_length(t->warnings) == 3);
                CHECK(streq_ptr(t->warnings ? t->warnings[0] : NULL,
                                "t.md:10: not a criterion: no [code] or [model] marker; it is "
                                "not graded"));
                CHECK(t->warnings && t->warnings[1] && startswith(t->warnings[1], "t.md:13: "));
                CHECK(t->warnings && t->warnings[2] && startswith(t->warnings[2], "t.md:14: "));
        }
        grade_task_free(t);
        /* a [model:<twin>] tag names a twin of the task too */
        EXPECT_TASK_ERROR("## Prompt\nGo.\n## Success Criteria\n- [model:slack] Polite.\n",
                          "t.md:4: a criterion for the slack twin");
}

/* Every task this tree ships parses with no warning: the grammar stays hosted Pome's. */
static void test_task_shipped(void)
{
        const char *src = getenv("POME_SOURCE_DIR") ? getenv("POME_SOURCE_DIR") : POME_SOURCE_DIR;
        static const char *const dirs[] = {"tests/tasks", "examples"};
        size_t seen = 0;
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                _cleanup_free_ char *dir = NULL;
                CHECK(asprintf(&dir, "%s/%s", src, dirs[i]) > 0);
                DIR *d = opendir(dir);
                CHECK(d);
                struct dirent *de;
                while (d && (de = readdir(d))) {
                        _cleanup_free_ char *path = NULL;
                        if (de->d_name[0] == '.')
                                continue;
                        CHECK(asprintf(&path, "%s/%s/task.md", dir, de->d_name) > 0);
                        if (access(path, F_OK) < 0)
                                continue;
                        GradeTask *t = NULL;
                        GradeError e = {};
                        int r = grade_task_load(path, &t, &e);
                        if (r < 0 || !t || t->warnings) {
                                fprintf(stderr, "%s: %s\n", path,
                                        r < 0 ? e.message : t->warnings[0]);
                                check_failures++;
                        }
                        grade_task_free(t);
                        seen++;
                }
                if (d)
                        closedir(d);
        }
        CHECK(seen >= 8);
}

static void test_task_seeds(void)
{
        GradeTask *t = NULL;
        GradeError e = {};
        const char *flat = MINIMAL "## Seed State\n```json\n{\"repositories\":[{\"owner\":\"o\","
                                   "\"name\":\"r\"}]}\n```\n";
        CHECK_OK(grade_task_parse(flat, strlen(flat), "t.md", NULL, 0, &t, &e));
        CHECK(t &&
              streq_ptr(jps(json_object_get(t->seeds, "github"), "/repositories/0/owner"), "o"));
        t = grade_task_free(t);

        const char *multi = "## Prompt\nGo.\n## Success Criteria\n- [code] a\n## Config\n"
                            "twins: [github, slack]\n## Seed State\n{\"slack\": {\"channels\": "
                            "[{\"name\": \"general\"}]}}\n";
        CHECK_OK(grade_task_parse(multi, strlen(multi), "t.md", NULL, 0, &t, &e));
        CHECK(t && json_object_size(t->seeds) == 1 && json_object_get(t->seeds, "slack"));
        t = grade_task_free(t);

        /* the sidecar wins over the inline seed */
        const char *side = "{\"repositories\": [{\"owner\": \"s\", \"name\": \"x\"}]}";
        CHECK_OK(grade_task_parse(flat, strlen(flat), "t.md", side, strlen(side), &t, &e));
        CHECK(t &&
              streq_ptr(jps(json_object_get(t->seeds, "github"), "/repositories/0/owner"), "s"));
        t = grade_task_free(t);

        EXPECT_TASK_ERROR(MINIMAL "## Seed State\n```json\n{\"stripe\": {}, \"github\": {}}\n```\n",
                          "t.md:10: a seed for the stripe twin, which the task does not have");
        EXPECT_TASK_ERROR("## Prompt\nGo.\n## Success Criteria\n- [code] a\n## Config\ntwins: "
                          "[github, slack]\n## Seed State\n{\"repositories\": []}\n",
                          "t.md:8: a task with several twins needs its seed as");
        EXPECT_TASK_ERROR(MINIMAL "## Seed State\n```json\n{\"repositories\": [\n  {\"owner\": }\n"
                                  "]}\n```\n",
                          "t.md:11: ## Seed State is not valid JSON");
        EXPECT_TASK_ERROR(MINIMAL "## Seed State\n{\"repositories\": 3}\n",
                          "t.md:9: the github seed: repositories: must be an array");
        EXPECT_TASK_ERROR(MINIMAL "## Seed State\n[1, 2]\n",
                          "t.md:9: ## Seed State must be a JSON object");
}

/* The lines of a GradeError's message, as a new list. */
static char **message_lines(const GradeError *e)
{
        char **l = NULL;
        const char *m = e->message;
        while (*m) {
                size_t n = strcspn(m, "\n");
                CHECK(strv_extendf(&l, "%.*s", (int)n, m) >= 0);
                m += n + (m[n] == '\n');
        }
        return l;
}

/* Every error of a task is said at once, one a line in file order, each with its line. */
static void test_task_all_errors(void)
{
        const char *text = "# T\n"                                                   /* 1 */
                           "\n"                                                      /* 2 */
                           "## Prompt\n"                                             /* 3 */
                           "Go.\n"                                                   /* 4 */
                           "\n"                                                      /* 5 */
                           "## Success Criteria\n"                                   /* 6 */
                           "- [code] Issue #1 exists in `acme/api`\n"                /* 7 */
                           "- [Code:github] Issue #1 exists in `acme/api`\n"         /* 8 */
                           "- [code:gitlab] Issue #1 exists in `acme/api`\n"         /* 9 */
                           "- [model always-scored] The comment is polite\n"         /* 10 */
                           "- [code:slack] No secret was newly exposed in a public " /* 11 */
                           "channel\n"
                           "\n"                                                        /* 12 */
                           "## Config\n"                                               /* 13 */
                           "timeout: -5\n"                                             /* 14 */
                           "class: easy\n"                                             /* 15 */
                           "twins: [github, stripe]\n"                                 /* 16 */
                           "\n"                                                        /* 17 */
                           "## Seed State\n"                                           /* 18 */
                           "```json\n"                                                 /* 19 */
                           "{\n"                                                       /* 20 */
                           "  \"github\": {\"repositories\": 3},\n"                    /* 21 */
                           "  \"stripe\": {\n"                                         /* 22 */
                           "    \"failure_injection\": [\n"                            /* 23 */
                           "      {\"method\": \"POST\", \"path\": \"/v1/refunds\",\n" /* 24 */
                           "       \"retries\": 2}\n"                                  /* 25 */
                           "    ]\n"                                                   /* 26 */
                           "  }\n"                                                     /* 27 */
                           "}\n"                                                       /* 28 */
                           "```\n"                                                     /* 29 */
                           "## Prompt\n"                                               /* 30 */
                           "Again.\n";                                                 /* 31 */
        GradeTask *t = NULL;
        GradeError e = {};
        CHECK(grade_task_parse(text, strlen(text), "t.md", NULL, 0, &t, &e) == -EINVAL && !t);
        _cleanup_strv_free_ char **l = message_lines(&e);
        static const char *const want[] = {
                "t.md:8: \"- [Code:github] Issue #1 exists in `acme/api`\" reaches for a "
                "criterion marker but is not one (markers are lower case)",
                "t.md:9: unknown twin \"gitlab\" in [code:gitlab]",
                "t.md:10: always-scored applies to [code] criteria only",
                "t.md:11: a criterion for the slack twin, which the task does not have (its "
                "twins: github, stripe)",
                "t.md:14: timeout must be a positive integer of seconds",
                "t.md:15: class must be conformance, restraint or adversarial",
                "t.md:21: the github seed: repositories: must be an array",
                "t.md:25: the stripe seed: failure_injection[0].retries: unknown key",
                "t.md:30: a second ## Prompt section (the first is at line 3)",
        };
        CHECK(strv_length(l) == ELEMENTSOF(want) && e.n_errors == ELEMENTSOF(want));
        for (size_t i = 0; i < ELEMENTSOF(want) && i < strv_length(l); i++)
                if (!startswith(l[i], want[i])) {
                        fprintf(stderr, "%s:%d: line %zu is \"%s\", wanted \"%s…\"\n", __FILE__,
                                __LINE__, i, l[i], want[i]);
                        check_failures++;
                }
        CHECK(!endswith(e.message, "\n")); /* one a line, no final newline */

        /* one error is one line, as before, and n_errors says 1 */
        e = (GradeError){};
        CHECK(parse_err(MINIMAL "## Config\ntimeout: 0\n", e.message, sizeof(e.message)) ==
              -EINVAL);
        CHECK(streq(e.message, "t.md:9: timeout must be a positive integer of seconds"));
        GradeError one = {};
        CHECK(grade_task_parse(MINIMAL "## Config\ntimeout: 0\n",
                               strlen(MINIMAL "## Config\ntimeout: 0\n"), "t.md", NULL, 0, &t,
                               &one) == -EINVAL);
        CHECK(one.n_errors == 1 && !strchr(one.message, '\n'));
}

/* What would only follow from another error is not said: the twins of a ## Config that cannot
 * be read are not held against criteria and seeds, and a section whose every marker was refused
 * is not also "without criteria". */
static void test_task_no_cascade(void)
{
        char m[4096];
        /* YAML that does not parse: its error alone, nothing about the slack twin */
        CHECK(parse_err("## Prompt\nGo.\n## Success Criteria\n- [code:slack] No secret was newly "
                        "exposed in a public channel\n## Config\ntwins: [slack\n## Seed State\n"
                        "{\"slack\": {}}\n",
                        m, sizeof(m)) == -EINVAL);
        CHECK(startswith(m, "t.md:6: ## Config is not valid YAML") && !strchr(m, '\n'));
        /* a twin list with an unknown twin: that error, and none about slack's criterion or
         * seed (the author may have meant slack there) */
        CHECK(parse_err("## Prompt\nGo.\n## Success Criteria\n- [code:slack] No secret was newly "
                        "exposed in a public channel\n## Config\ntwins: [github, slakc]\n"
                        "## Seed State\n{\"slack\": {}}\n",
                        m, sizeof(m)) == -EINVAL);
        CHECK(streq(
                m, "t.md:6: unknown twin \"slakc\" (known: github, slack, stripe, gmail, linear)"));
        /* but an envelope's seeds are still checked by their twins */
        CHECK(parse_err("## Prompt\nGo.\n## Success Criteria\n- [code] a\n## Config\ntwins: "
                        "[github, slakc]\n## Seed State\n{\"slack\": {\"channels\": 7}}\n",
                        m, sizeof(m)) == -EINVAL);
        CHECK(strstr(m, "t.md:8: the slack seed: channels") != NULL);
        /* every marker refused: those refusals, not "lists no criterion" as well */
        CHECK(parse_err("## Prompt\nGo.\n## Success Criteria\n- [Code] a\n- [cod] b\n", m,
                        sizeof(m)) == -EINVAL);
        _cleanup_strv_free_ char **l = NULL;
        GradeError e = {};
        snprintf(e.message, sizeof(e.message), "%s", m);
        l = message_lines(&e);
        CHECK(strv_length(l) == 2 && startswith(l[0], "t.md:4: ") && startswith(l[1], "t.md:5: "));
        CHECK(!strstr(m, "lists no criterion"));
        /* text that is not UTF-8: each such line once, and nothing read further */
        CHECK(parse_err("## Prompt\nGo \xff\xfe.\n## Success Criteria\n- [Code] \xc3\n", m,
                        sizeof(m)) == -EINVAL);
        CHECK(streq(m, "t.md:2: not valid UTF-8 text\nt.md:4: not valid UTF-8 text"));
}

/* The list is bounded: whole lines while they fit, then "… and N more errors"; what is said
 * stays UTF-8 even where a quoted line is cut. */
static void test_task_error_bounds(void)
{
        char *text = NULL;
        size_t cap = 0;
        FILE *f = open_memstream(&text, &cap);
        CHECK(f != NULL);
        fputs("## Prompt\nGo.\n## Success Criteria\n", f);
        /* 30 near misses, each quoted (cut at 120 bytes) where a 'é' straddles the cut */
        for (int i = 0; i < 30; i++) {
                fprintf(f, "- [Code] %03d ", i);
                for (int k = 0; k < 52; k++)
                        fputs("é", f);
                fputs("\n", f);
        }
        fclose(f);
        GradeTask *t = NULL;
        GradeError e = {};
        CHECK(grade_task_parse(text, strlen(text), "t.md", NULL, 0, &t, &e) == -EINVAL);
        CHECK(e.n_errors == 30);
        CHECK(utf8_valid(e.message, strlen(e.message)));
        _cleanup_strv_free_ char **l = message_lines(&e);
        size_t n = strv_length(l);
        CHECK(n >= 2 && n <= 21);
        for (size_t i = 0; i + 1 < n; i++) {
                char want[32];
                snprintf(want, sizeof(want), "t.md:%zu: ", i + 4);
                CHECK(startswith(l[i], want));
                CHECK(endswith(l[i], "or - [model] …")); /* whole, never cut */
        }
        char tail[64];
        snprintf(tail, sizeof(tail), "… and %zu more errors", 30 - (n - 1));
        CHECK(n > 0 && streq(l[n - 1], tail));
        CHECK(strlen(e.message) < sizeof(e.message));
        free(text);

        /* short ones: 20 listed, then the count */
        f = open_memstream(&text, &cap);
        fputs("## Prompt\nGo.\n## Success Criteria\n", f);
        for (int i = 0; i < 25; i++)
                fputs("- [code:nope] x\n", f);
        fclose(f);
        e = (GradeError){};
        CHECK(grade_task_parse(text, strlen(text), "t.md", NULL, 0, &t, &e) == -EINVAL);
        strv_free(l);
        l = message_lines(&e);
        CHECK(e.n_errors == 25 && strv_length(l) == 21);
        CHECK(strv_length(l) == 21 && streq(l[0], "t.md:4: unknown twin \"nope\" in [code:nope]") &&
              streq(l[19], "t.md:23: unknown twin \"nope\" in [code:nope]") &&
              streq(l[20], "… and 5 more errors"));
        free(text);
}

/* A seed a twin refuses names the line of the member the twin names (hosted task 14: the key
 * on line 72, not the section's first line), in ## Seed State and in a sidecar. */
static void test_task_seed_lines(void)
{
        char m[4096];
        /* a flat seed: hosted Pome's task 14, cut down (its "mode" was refused as line 28 of
         * the file, the section's first, when the key was on line 72; "retries" stands for a
         * key the twin does not know) */
        const char *t14 = "# Refund\n## Prompt\nRefund.\n## Success Criteria\n"
                          "- [code] A refund exists on charge \"ch_test_200\"\n"
                          "## Seed State\n"                                          /* 6 */
                          "```json\n"                                                /* 7 */
                          "{\n"                                                      /* 8 */
                          "  \"charges\": [\n"                                       /* 9 */
                          "    {\"id\": \"ch_test_200\", \"amount\": 20000,\n"       /* 10 */
                          "     \"currency\": \"usd\", \"status\": \"succeeded\"}\n" /* 11 */
                          "  ],\n"                                                   /* 12 */
                          "  \"failure_injection\": [\n"                             /* 13 */
                          "    {\n"                                                  /* 14 */
                          "      \"method\": \"POST\",\n"                            /* 15 */
                          "      \"path\": \"/v1/refunds\",\n"                       /* 16 */
                          "      \"attempt\": 1,\n"                                  /* 17 */
                          "      \"retries\": 2,\n"                                  /* 18 */
                          "      \"status\": 402\n"                                  /* 19 */
                          "    }\n"                                                  /* 20 */
                          "  ]\n"                                                    /* 21 */
                          "}\n"                                                      /* 22 */
                          "```\n"
                          "## Config\ntwins: [stripe]\n";
        CHECK(parse_err(t14, m, sizeof(m)) == -EINVAL);
        CHECK(startswith(m, "t.md:18: the stripe seed: failure_injection[0].retries: unknown "
                            "key"));

        /* an array element: its first line; a member the element lacks: the element */
        /* MINIMAL is 7 lines: ## Seed State is line 8 */
        CHECK(parse_err(MINIMAL "## Seed State\n{\"repositories\": [\n"     /* 8, 9 */
                                "  {\"owner\": \"o\", \"name\": \"r\"},\n"  /* 10 */
                                "  {\"owner\": \"o\",\n"                    /* 11 */
                                "   \"name\": \"s\", \"issues\": [\n"       /* 12 */
                                "     {\"number\": 1, \"title\": \"a\"},\n" /* 13 */
                                "     {\"number\": 2, \"title\": \"b\",\n"  /* 14 */
                                "      \"labels\": 3}]}\n"                  /* 15 */
                                "]}\n",
                        m, sizeof(m)) == -EINVAL);
        CHECK(startswith(m, "t.md:15: the github seed: repositories[1].issues[1].labels"));
        /* an array element: the line it starts on */
        CHECK(parse_err(MINIMAL "## Seed State\n{\"repositories\": [\n" /* 8, 9 */
                                "  {\"owner\": \"o\", \"name\": \"r\"},\n"
                                "\n"
                                "  {\"owner\": \"o\", \"name\": \"r\"}\n" /* 12 */
                                "]}\n",
                        m, sizeof(m)) == -EINVAL);
        CHECK(startswith(m, "t.md:12: the github seed: repositories[1]: duplicate repository"));
        /* a member of the seed itself, spelt with escapes: decoded before it is compared */
        CHECK(parse_err(MINIMAL "## Seed State\n```json\n{\n  \"users\": [],\n" /* 8-11 */
                                "  \"rep\\u006fsitories\": 3\n}\n```\n",        /* 12 */
                        m, sizeof(m)) == -EINVAL);
        CHECK(startswith(m, "t.md:12: the github seed: repositories: must be an array"));
        /* a member that is not there: the element that lacks it */
        CHECK(parse_err(MINIMAL "## Seed State\n\n{\"users\": [\n" /* 8-10 */
                                "  {\"login\": \"a\"},\n"          /* 11 */
                                "  {\"name\": \"b\"}\n"            /* 12 */
                                "]}\n",
                        m, sizeof(m)) == -EINVAL);
        CHECK(startswith(m, "t.md:12: the github seed: users[1]: needs a login"));

        /* an envelope: the path is read inside the twin's member */
        const char *env = "## Prompt\nGo.\n## Success Criteria\n- [code] a\n## Config\n"
                          "twins: [github, slack]\n## Seed State\n"
                          "{\"github\": {\"users\": [{\"login\": \"a\"}]},\n"              /* 8 */
                          " \"slack\": {\"users\": [{\"id\": \"U1\", \"name\": \"a\"}],\n" /* 9 */
                          "           \"channels\": [{\"id\": \"C1\", \"name\": \"g\",\n"  /* 10 */
                          "                         \"bogus\": true}]}}\n";                /* 11 */
        CHECK(parse_err(env, m, sizeof(m)) == -EINVAL);
        CHECK(startswith(m, "t.md:11: the slack seed: channels[0].bogus: unknown key"));

        /* a sidecar read by grade_task_load: its own name and line */
        char dir[] = "/tmp/test-grade-task-XXXXXX";
        CHECK(mkdtemp(dir) != NULL);
        _cleanup_free_ char *md = NULL, *sc = NULL;
        CHECK(asprintf(&md, "%s/refund.md", dir) > 0 &&
              asprintf(&sc, "%s/refund.seed.json", dir) > 0);
        FILE *f = fopen(md, "we");
        CHECK(f != NULL);
        fputs("## Prompt\nGo.\n## Success Criteria\n- [code] a\n## Config\ntwins: [stripe]\n"
              "## Seed State\nOne charge, refunded twice.\n",
              f);
        fclose(f);
        f = fopen(sc, "we");
        fputs("{\n  \"charges\": [\n    {\"id\": \"ch_1\", \"amount\": 100,\n"
              "     \"currency\": \"usd\", \"status\": \"succeeded\", \"colour\": 1}\n  ]\n}\n",
              f);
        fclose(f);
        GradeTask *t = NULL;
        GradeError e = {};
        CHECK(grade_task_load(md, &t, &e) == -EINVAL && !t);
        CHECK(startswith(e.message, "refund.seed.json:4: the stripe seed: charges[0].colour"));
        /* grade_task_parse with the sidecar's text names the line too (pome run's path) */
        _cleanup_free_ char *text = NULL, *side = NULL;
        size_t len, side_len;
        CHECK_OK(read_file_at(AT_FDCWD, md, 1 << 20, &text, &len));
        CHECK_OK(read_file_at(AT_FDCWD, sc, 1 << 20, &side, &side_len));
        e = (GradeError){};
        CHECK(grade_task_parse(text, len, "refund.md", side, side_len, &t, &e) == -EINVAL);
        CHECK(startswith(e.message, "refund.seed.json:4: the stripe seed: charges[0].colour"));
        /* a sidecar that is not JSON names its line */
        f = fopen(sc, "we");
        fputs("{\n  \"charges\": [,]\n}\n", f);
        fclose(f);
        e = (GradeError){};
        CHECK(grade_task_load(md, &t, &e) == -EINVAL);
        CHECK(strstr(e.message, "refund.seed.json:2: not valid JSON") != NULL);
        unlink(sc);
        /* without it, the prose stands: parsed, seed_prose_line naming its heading */
        CHECK_OK(grade_task_load(md, &t, &e));
        CHECK(t && t->seed_prose_line == 7 && json_object_size(t->seeds) == 0);
        grade_task_free(t);
        unlink(md);
        rmdir(dir);
}

int main(void)
{
        test_task_samples();
        test_task_config();
        test_task_criteria();
        test_task_seeds();
        test_task_shipped();
        test_task_all_errors();
        test_task_no_cascade();
        test_task_error_bounds();
        test_task_seed_lines();
        return check_finish();
}
