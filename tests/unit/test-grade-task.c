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
        int r = grade_task_parse(text, strlen(text), "t.md", NULL, &t, &e);
        snprintf(msg, len, "%s", r < 0 ? e.message : "");
        grade_task_free(t);
        return r;
}

#define EXPECT_TASK_ERROR(text, expected)                                                    \
        do {                                                                                 \
                char _m_[600];                                                               \
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

        /* without its sidecar a prose seed is refused, naming the sidecar */
        _cleanup_free_ char *path = task_path("refund.md");
        _cleanup_free_ char *text = NULL;
        size_t len;
        CHECK_OK(read_file_at(AT_FDCWD, path, 1 << 20, &text, &len));
        GradeError e = {};
        CHECK(grade_task_parse(text, len, "refund.md", NULL, &t, &e) == -EINVAL);
        CHECK(streq(e.message, "refund.md:18: ## Seed State is prose and there is no "
                               "refund.seed.json sidecar compiled from it"));
}

static void test_task_config(void)
{
        GradeTask *t = NULL;
        GradeError e = {};
        /* no ## Config: hosted Pome's defaults */
        CHECK_OK(grade_task_parse(MINIMAL, strlen(MINIMAL), "t.md", NULL, &t, &e));
        CHECK(t && strv_length(t->twins) == 1 && streq(t->twins[0], "github"));
        CHECK(t && t->timeout_sec == 60 && t->runs == 1 && t->pass_threshold == 100);
        CHECK(t && streq(t->title, "T"));
        t = grade_task_free(t);

        /* plain YAML (no fence), CRLF line ends, an unknown key kept as a warning */
        const char *crlf = "## Prompt\r\nGo.\r\n## Success Criteria\r\n- [code] No unsupported "
                           "endpoint was called\r\n## Config\r\ntwins: [stripe]\r\nmodel: opus\r\n"
                           "passThreshold: 50.5\r\n";
        CHECK_OK(grade_task_parse(crlf, strlen(crlf), "t.md", NULL, &t, &e));
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
        CHECK_OK(grade_task_parse(ok, strlen(ok), "t.md", NULL, &t, &e));
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
        CHECK_OK(grade_task_parse(flat, strlen(flat), "t.md", NULL, &t, &e));
        CHECK(t &&
              streq_ptr(jps(json_object_get(t->seeds, "github"), "/repositories/0/owner"), "o"));
        t = grade_task_free(t);

        const char *multi = "## Prompt\nGo.\n## Success Criteria\n- [code] a\n## Config\n"
                            "twins: [github, slack]\n## Seed State\n{\"slack\": {\"channels\": "
                            "[{\"name\": \"general\"}]}}\n";
        CHECK_OK(grade_task_parse(multi, strlen(multi), "t.md", NULL, &t, &e));
        CHECK(t && json_object_size(t->seeds) == 1 && json_object_get(t->seeds, "slack"));
        t = grade_task_free(t);

        /* the sidecar wins over the inline seed */
        _cleanup_json_ json_t *side =
                json_pack("{s:[{s:s, s:s}]}", "repositories", "owner", "s", "name", "x");
        CHECK_OK(grade_task_parse(flat, strlen(flat), "t.md", side, &t, &e));
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

int main(void)
{
        test_task_samples();
        test_task_config();
        test_task_criteria();
        test_task_seeds();
        test_task_shipped();
        return check_finish();
}
