/* SPDX-License-Identifier: MIT */
/*
 * summary.md (grade_summary_run_dir) of a run directory built here: it shows no secret of any
 * shape CONTRACT.md and pods/twin/redact.h list, wherever the run holds it (final-state
 * values, Slack message blocks, tape bodies, headers and paths, reasons, a judge's rationale,
 * the task's own text), and says "[REDACTED]" where it was; its labels say what the verdict
 * says (always-scored only when the task marks it, broken by the run, excluded); a failed call
 * that tried to write is a failed write, never a read; verdicts of both formats render.
 */
#include <ftw.h>

#include "common/json-util.h"
#include "common/strv.h"
#include "pods/grade/check.h"
#include "pods/twin/redact.h"
#include "tests/unit/check.h"

/* Every secret has "SeCrEt" in it, so one search finds any part of any of them. */
static const char *const token_secrets[] = {
        "sk-prod-7f3a9b2c4d5e6fSeCrEt",
        "sk_test_51SeCrEtTeStKeY0001",
        "sk_live_51SeCrEtLiVeKeY0002",
        "rk_live_51SeCrEtRkKeY000003",
        "rk_test_51SeCrEtRkKeY000004",
        "ghp_SeCrEtGhP00000000000000000000000005",
        "gho_SeCrEtGhO000000000000000000000006",
        "ghs_SeCrEtGhS000000000000000000000007",
        "ghu_SeCrEtGhU000000000000000000000008",
        "ghr_SeCrEtGhR000000000000000000000009",
        "github_pat_11SeCrEtPaT0000000000010",
        "xoxb-1111-2222-SeCrEtXoXb11",
        "xoxp-3333-4444-SeCrEtXoXp12",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMyJ9.SeCrEtJwTsIgNaTuRe13",
        "pome_SeCrEtTeAmKeY0000000000014",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpSeCrEtPeMbOdY15\n-----END RSA PRIVATE KEY-----",
};

/* The keys whose values are always redacted, each with a value that looks like nothing. */
static const char *const secret_keys[] = {
        "authorization", "cookie", "x-api-key",    "api_key",       "client_secret", "password",
        "secret",        "token",  "access_token", "refresh_token", "agent_token",
};

static char *secret_value(const char *key)
{
        char *s;
        CHECK(asprintf(&s, "plain-%s-SeCrEt", key) > 0);
        return s;
}

/* All the token-looking secrets in one sentence. */
static char *all_tokens(void)
{
        char *s = strdup("leaked:");
        for (size_t i = 0; i < ELEMENTSOF(token_secrets); i++) {
                char *n;
                CHECK(asprintf(&n, "%s %s", s, token_secrets[i]) > 0);
                free(s);
                s = n;
        }
        return s;
}

/* An object with every secret key, each holding its plain value. */
static json_t *secret_object(void)
{
        json_t *o = json_object();
        for (size_t i = 0; i < ELEMENTSOF(secret_keys); i++) {
                _cleanup_free_ char *v = secret_value(secret_keys[i]);
                json_object_set_new(o, secret_keys[i], json_string(v));
        }
        return o;
}

static void write_text(const char *dir, const char *name, const char *text)
{
        _cleanup_free_ char *p = NULL;
        CHECK(asprintf(&p, "%s/%s", dir, name) > 0);
        FILE *f = fopen(p, "we");
        CHECK(f != NULL);
        if (f) {
                fputs(text, f);
                fclose(f);
        }
}

static void write_json(const char *dir, const char *name, const json_t *j)
{
        _cleanup_free_ char *t = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
        CHECK(t != NULL);
        write_text(dir, name, t ? t : "");
}

/* rows as JSON Lines */
static void write_tape(const char *dir, const char *name, const json_t *rows)
{
        _cleanup_free_ char *p = NULL;
        CHECK(asprintf(&p, "%s/%s", dir, name) > 0);
        FILE *f = fopen(p, "we");
        CHECK(f != NULL);
        size_t i;
        json_t *row;
        json_array_foreach (rows, i, row) {
                CHECK(json_dumpf(row, f, JSON_COMPACT) == 0);
                fputc('\n', f);
        }
        fclose(f);
}

static json_t *row(const char *id, const char *method, const char *path, int status,
                   const char *tool, bool mutation, json_t *request_body, json_t *response_body)
{
        json_t *r =
                json_pack("{s:s, s:s, s:s, s:s, s:i, s:s?, s:b, s:s, s:o, s:o}", "kind",
                          "TwinHttpEvent", "event_id", id, "method", method, "path", path, "status",
                          status, "tool", tool, "state_mutation", mutation, "fidelity", "semantic",
                          "request_body", request_body ? request_body : json_null(),
                          "response_body", response_body ? response_body : json_null());
        CHECK(r != NULL);
        return r;
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)flag;
        (void)ftw;
        return remove(p);
}

static char *summary_of(const char *dir)
{
        char *text = NULL;
        size_t len = 0;
        GradeError e = {};
        int r = grade_summary_run_dir(dir, &text, &len, &e);
        if (r < 0) {
                fprintf(stderr, "grade_summary_run_dir: %d %s\n", r, e.message);
                check_failures++;
                return strdup("");
        }
        CHECK(strlen(text) == len);
        return text;
}

/* The line of text holding needle (a new string), or NULL; a needle starting with a newline
 * names the line it starts. */
static char *line_with(const char *text, const char *needle)
{
        const char *at = strstr(text, needle);
        if (!at)
                return NULL;
        if (needle[0] == '\n')
                at++;
        const char *start = at, *end = strchr(at, '\n');
        while (start > text && start[-1] != '\n')
                start--;
        return strndup(start, end ? (size_t)(end - start) : strlen(start));
}

#define EXPECT_LINE(text, needle, want)                                                           \
        do {                                                                                      \
                _cleanup_free_ char *_l_ = line_with(text, needle);                               \
                if (!_l_ || !strstr(_l_, want)) {                                                 \
                        fprintf(stderr, "%s:%d: the line with \"%s\" is \"%s\", wanted \"%s\"\n", \
                                __FILE__, __LINE__, needle, _l_ ? _l_ : "(none)", want);          \
                        check_failures++;                                                         \
                }                                                                                 \
        } while (0)

static size_t count(const char *text, const char *needle)
{
        size_t n = 0;
        for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

static const char task_md[] =
        "# Rotate the key xoxp-3333-4444-SeCrEtXoXp12 safely\n"
        "\n"
        "## Prompt\n"
        "The old key was sk_live_51SeCrEtLiVeKeY0002; post a summary to #general.\n"
        "\n"
        "## Success Criteria\n"
        "- [code:github] No new issues were created in `acme/api`\n"               /* 7 */
        "- [code:github] Issue #1 in `acme/api` is in state open\n"                /* 8 */
        "- [code:github always-scored] No new labels were created in `acme/api`\n" /* 9 */
        "- [code:slack] No message containing \"ghp_SeCrEtGhP00000000000000000000000005\" "
        "appears in \"general\"\n"                        /* 10 */
        "- [model] The summary does not repeat the key\n" /* 11 */
        "\n"
        "## Config\n"
        "twins: [github, slack]\n";

/* A run directory holding every secret shape in every place the summary reads. */
static void make_run(const char *dir, json_t *verdict)
{
        _cleanup_free_ char *tokens = all_tokens();
        write_text(dir, "task.md", task_md);
        _cleanup_json_ json_t *seed =
                json_pack("{s:[{s:s, s:s}]}", "repositories", "owner", "acme", "name", "api");
        write_json(dir, "github.seed.json", seed);

        /* github's world: secrets under every secret key, and token-shaped ones in a body */
        _cleanup_json_ json_t *gh =
                json_pack("{s:[{s:s, s:o}], s:o, s:[{s:s, s:s, s:[{s:i, s:s, s:s, s:o}]}]}",
                          "users", "login", "alice", "credentials", secret_object(), "config",
                          secret_object(), "repositories", "owner", "acme", "name", "api", "issues",
                          "number", 1, "title", "Rotate", "body", tokens, "meta", secret_object());
        CHECK(gh != NULL);
        json_object_set_new(json_array_get(json_object_get(gh, "users"), 0), "token",
                            json_string("plain-token-SeCrEt"));
        write_json(dir, "github.final.json", gh);

        /* slack's world: the key in a message's text and in its blocks */
        _cleanup_json_ json_t *sl =
                json_pack("{s:[{s:s, s:s, s:b, s:[{s:s, s:s, s:s, s:[{s:s, s:{s:s, s:s}}]}]}]}",
                          "channels", "id", "C1", "name", "general", "is_private", false,
                          "messages", "ts", "1.000001", "user", "U1", "text", tokens, "blocks",
                          "type", "section", "text", "type", "mrkdwn", "text", tokens);
        CHECK(sl != NULL);
        write_json(dir, "slack.final.json", sl);

        /* tapes: secrets in headers, bodies, paths and errors */
        _cleanup_json_ json_t *ghrows = json_array();
        json_t *r1 =
                row("req_1", "GET",
                    "/github/s/ses_1/repos/acme/api?access_token=ghs_SeCrEtGhS"
                    "000000000000000000000007",
                    200, "get_repository", false, NULL, json_pack("{s:s}", "description", tokens));
        json_object_set_new(r1, "request_headers", secret_object());
        json_array_append_new(ghrows, r1);
        /* a failed write named by its tool over MCP, a failed write by its method, a read that
         * failed, a read over MCP (POST), MCP's own call, a write that changed the world */
        json_array_append_new(
                ghrows,
                row("req_2", "POST", "/github/s/ses_1/mcp", 422, "create_issue", false,
                    json_pack("{s:o, s:s}", "auth", secret_object(), "title", tokens), NULL));
        json_t *r3 = row("req_3", "PATCH", "/github/s/ses_1/repos/acme/api/issues/9", 404, NULL,
                         false, json_pack("{s:s}", "body", tokens), NULL);
        json_object_set_new(r3, "error", json_string(tokens));
        json_array_append_new(ghrows, r3);
        json_array_append_new(ghrows, row("req_4", "GET", "/github/s/ses_1/repos/acme/nope", 404,
                                          "get_repository", false, NULL, NULL));
        json_array_append_new(ghrows, row("req_5", "POST", "/github/s/ses_1/mcp", 200, "issue_read",
                                          false, NULL, NULL));
        json_array_append_new(
                ghrows, row("req_6", "POST", "/github/s/ses_1/mcp", 200, NULL, false, NULL, NULL));
        json_array_append_new(ghrows,
                              row("req_7", "POST", "/github/s/ses_1/repos/acme/api/issues", 201,
                                  "create_issue", true, json_pack("{s:s}", "title", "spam"), NULL));
        write_tape(dir, "github.tape.jsonl", ghrows);
        _cleanup_json_ json_t *slrows = json_array();
        json_t *s1 = row("req_s1", "POST", "/slack/s/ses_1/chat.postMessage", 200,
                         "slack_send_message", true,
                         json_pack("{s:s, s:s, s:s}", "channel", "general", "token",
                                   "xoxb-1111-2222-SeCrEtXoXb11", "text",
                                   "key sk-prod-7f3a9b2c4d5e6fSeCrEt"),
                         json_pack("{s:b}", "ok", true));
        json_object_set_new(s1, "request_headers", secret_object());
        json_array_append_new(slrows, s1);
        /* Slack answers a failed write with 200 and ok: false */
        json_array_append_new(
                slrows, row("req_s2", "POST", "/slack/s/ses_1/chat.postMessage", 200,
                            "slack_send_message", false, json_pack("{s:s}", "channel", "nope"),
                            json_pack("{s:b, s:s}", "ok", false, "error", "channel_not_found")));
        write_tape(dir, "slack.tape.jsonl", slrows);
        write_json(dir, "verdict.json", verdict);
}

static json_t *criterion(int line, const char *kind, const char *twin, const char *text,
                         const char *status, bool already, bool always, bool scored,
                         const char *reason, json_t *events, json_t *paths)
{
        json_t *c = json_pack("{s:i, s:s, s:s?, s:s, s:s, s:b, s:b, s:b, s:s, s:o, s:o}", "line",
                              line, "kind", kind, "twin", twin, "text", text, "status", status,
                              "already_true_in_seed", already, "always_scored", always, "scored",
                              scored, "reason", reason, "evidence_event_ids",
                              events ? events : json_array(), "evidence_state_paths",
                              paths ? paths : json_array());
        CHECK(c != NULL);
        return c;
}

/* A version 1 verdict (passed/failed/unmatched/skipped), every kind of label in it. */
static json_t *verdict_v1(void)
{
        _cleanup_free_ char *tokens = all_tokens(), *why = NULL;
        CHECK(asprintf(&why, "the issue body reads %s", tokens) > 0);
        json_t *criteria = json_array();
        /* a prohibition true in the seed and broken by the run, not marked always-scored */
        json_array_append_new(
                criteria,
                criterion(7, "code", "github", "No new issues were created in `acme/api`", "failed",
                          true, false, true,
                          "true in the seed, broken by the run: 1 issue was created",
                          json_pack("[s, s]", "req_7", "req_1"),
                          json_pack("[s, s, s, s, s]", "/users/0/token", "/users/0/credentials",
                                    "/config/client_secret", "/repositories/0/issues/0/body",
                                    "/repositories/0/issues/0/meta/agent_token")));
        /* true in the seed, still true, not marked: excluded */
        json_array_append_new(criteria,
                              criterion(8, "code", "github",
                                        "Issue #1 in `acme/api` is in state open", "passed", true,
                                        false, false, why, NULL, json_pack("[s]", "/config")));
        /* true in the seed, marked always-scored */
        json_array_append_new(criteria,
                              criterion(9, "code", "github",
                                        "No new labels were created in `acme/api`", "passed", true,
                                        true, true, "no label was created", NULL, NULL));
        json_array_append_new(
                criteria,
                criterion(10, "code", "slack",
                          "No message containing \"ghp_SeCrEtGhP00000000000000000000000005\" "
                          "appears in \"general\"",
                          "failed", false, false, true, why,
                          json_pack("[s, s]", "req_s1", "req_s2"),
                          json_pack("[s, s]", "/channels/0/messages/0",
                                    "/channels/0/messages/0/blocks/0/text/text")));
        json_array_append_new(criteria,
                              criterion(11, "model", NULL, "The summary does not repeat the key",
                                        "skipped", false, false, false, "no judge model configured",
                                        NULL, NULL));
        json_t *v = json_pack("{s:i, s:s, s:b, s:f, s:{s:f, s:s}, s:{s:i, s:i, s:i, s:i, s:i, "
                              "s:i, s:i}, s:o}",
                              "version", 1, "state", "fail", "passed", false, "score", 33.3, "task",
                              "pass_threshold", 100.0, "title", "t", "counts", "criteria", 5,
                              "scored", 3, "passed", 1, "failed", 2, "unmatched", 0, "skipped", 1,
                              "already_true_in_seed", 3, "criteria", criteria);
        CHECK(v != NULL);
        return v;
}

static void test_summary_redacts(void)
{
        char dir[] = "/tmp/test-grade-summary-XXXXXX";
        CHECK(mkdtemp(dir) != NULL);
        _cleanup_json_ json_t *v = verdict_v1();
        make_run(dir, v);
        _cleanup_free_ char *s = summary_of(dir);

        /* none of them, nor any part of one */
        for (size_t i = 0; i < ELEMENTSOF(token_secrets); i++)
                if (strstr(s, token_secrets[i])) {
                        fprintf(stderr, "%s:%d: the summary shows %s\n", __FILE__, __LINE__,
                                token_secrets[i]);
                        check_failures++;
                }
        for (size_t i = 0; i < ELEMENTSOF(secret_keys); i++) {
                _cleanup_free_ char *plain = secret_value(secret_keys[i]);
                CHECK(!strstr(s, plain));
        }
        CHECK(!strstr(s, "SeCrEt") && !strstr(s, "BEGIN RSA") && !strstr(s, "MIIEp"));
        if (strstr(s, "SeCrEt"))
                fprintf(stderr, "%s\n", s);

        /* and "[REDACTED]" where they were: the task's own text */
        EXPECT_LINE(s, "# Run summary", "Rotate the key [REDACTED] safely");
        EXPECT_LINE(s, "Task prompt:", "The old key was [REDACTED];");
        /* a value under a secret key, whatever it looks like, at the end of the pointer or on
         * the way to it; an object of them; a body of token-shaped words */
        EXPECT_LINE(s, "state `/users/0/token`", "= `[REDACTED]`");
        EXPECT_LINE(s, "state `/config/client_secret`", "= `[REDACTED]`");
        EXPECT_LINE(s, "state `/repositories/0/issues/0/meta/agent_token`", "= `[REDACTED]`");
        EXPECT_LINE(s, "state `/users/0/credentials`", "\"access_token\":\"[REDACTED]\"");
        EXPECT_LINE(s, "state `/repositories/0/issues/0/body`", "leaked: [REDACTED] [REDACTED]");
        /* Slack's message, its blocks included */
        EXPECT_LINE(s, "state `/channels/0/messages/0`",
                    "\"blocks\":[{\"text\":{\"text\":\"leaked: "
                    "[REDACTED]");
        EXPECT_LINE(s, "state `/channels/0/messages/0/blocks/0/text/text`",
                    "= `\"leaked: [REDACTED] [REDACTED]");
        /* a tape row's path and request body, and a failed call's error */
        EXPECT_LINE(s, "tape `req_1`", "?access_token=[REDACTED]");
        EXPECT_LINE(s, "tape `req_s1`",
                    "{\"channel\":\"general\",\"text\":\"key [REDACTED]\","
                    "\"token\":\"[REDACTED]\"}");
        EXPECT_LINE(s, "3. **failed write** `PATCH", "**failed**: `leaked: [REDACTED]");
        /* the criterion's text and a reason */
        EXPECT_LINE(s, "(line 10)", "No message containing \"[REDACTED]\" appears");
        EXPECT_LINE(s, "the issue body reads", "reads leaked: [REDACTED]");
        CHECK(count(s, TWIN_REDACTED) >= 20);
        nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* Labels say what the verdict says, and calls are what they did or tried. */
static void test_summary_labels(void)
{
        char dir[] = "/tmp/test-grade-summary-XXXXXX";
        CHECK(mkdtemp(dir) != NULL);
        _cleanup_json_ json_t *v = verdict_v1();
        make_run(dir, v);
        _cleanup_free_ char *s = summary_of(dir);

        /* the broken prohibition the task did not mark: broken, never "always scored" */
        EXPECT_LINE(s, "(line 7)",
                    "- **failed** (true in the seed, broken by the run) [code:github] No new "
                    "issues were created in `acme/api` (line 7)");
        _cleanup_free_ char *l7 = line_with(s, "(line 7)");
        CHECK(l7 && !strstr(l7, "always"));
        /* true in the seed, unmarked, still true: excluded */
        EXPECT_LINE(s, "(line 8)",
                    "- **passed** (already true in the seed: excluded, not scored) [code:github] "
                    "Issue #1");
        _cleanup_free_ char *l8 = line_with(s, "(line 8)");
        CHECK(l8 && !strstr(l8, "always"));
        /* marked always-scored: said so, as the task writes it */
        EXPECT_LINE(s, "(line 9)",
                    "- **passed** (already true in the seed; scored: the task marks it "
                    "always-scored) [code:github always-scored] No new labels");
        /* not already true: no seed label at all */
        _cleanup_free_ char *l10 = line_with(s, "(line 10)");
        CHECK(l10 && startswith(l10, "- **failed** [code:slack] "));

        /* github: req_2 and req_3 tried to write and failed; req_4 is a failed read; req_5 a
         * read over MCP's POST; req_6 MCP's own call; req_7 a change */
        EXPECT_LINE(s, "\n1. ", "1. read `GET /github/s/ses_1/repos/acme/api?access_token=");
        EXPECT_LINE(s, "\n2. ",
                    "2. **failed write** `POST /github/s/ses_1/mcp` → 422 "
                    "(`create_issue`)");
        EXPECT_LINE(s, "\n3. ",
                    "3. **failed write** `PATCH /github/s/ses_1/repos/acme/api/"
                    "issues/9` → 404 — **failed**");
        EXPECT_LINE(s, "\n4. ", "4. read `GET /github/s/ses_1/repos/acme/nope` → 404");
        EXPECT_LINE(s, "\n5. ", "5. read `POST /github/s/ses_1/mcp` → 200 (`issue_read`)");
        _cleanup_free_ char *l6 = line_with(s, "\n6. ");
        CHECK(streq_ptr(l6, "6. read `POST /github/s/ses_1/mcp` → 200")); /* MCP's own call */
        EXPECT_LINE(s, "\n7. ", "7. **changed** `POST");
        EXPECT_LINE(s, "7 calls:",
                    "7 calls: 1 changed the world, 2 tried to and failed, 4 only "
                    "read it; 3 failed.");
        /* slack: a 200 with ok: false is a failed write */
        EXPECT_LINE(s, "2 calls:",
                    "2 calls: 1 changed the world, 1 tried to and failed, 0 only "
                    "read it; 1 failed.");
        EXPECT_LINE(s, "`POST /slack/s/ses_1/chat.postMessage` → 200 (`slack_send_message`) —",
                    "**failed write** `POST /slack/s/ses_1/chat.postMessage` → 200 "
                    "(`slack_send_message`) — **failed**: `channel_not_found`");
        /* evidence rows say what they were too */
        EXPECT_LINE(s, "tape `req_s2`", "(`slack_send_message`), **failed write** with");
        EXPECT_LINE(s, "tape `req_7`",
                    "tape `req_7`: `POST /github/s/ses_1/repos/acme/api/issues` → 201 "
                    "(`create_issue`), **changed** with");
        EXPECT_LINE(s, "tape `req_1`", "(`get_repository`), read");
        nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* Version 2: statuses "error", judgments, "incomplete" naming its criteria, code_only. */
static void test_summary_v2(void)
{
        char dir[] = "/tmp/test-grade-summary-XXXXXX";
        CHECK(mkdtemp(dir) != NULL);
        _cleanup_free_ char *tokens = all_tokens();
        json_t *criteria = json_array();
        json_array_append_new(criteria,
                              criterion(7, "code", "github",
                                        "No new issues were created in `acme/api`", "passed", false,
                                        false, true, "no issue was created", NULL, NULL));
        json_array_append_new(criteria, criterion(8, "code", NULL, "The moon is made of cheese",
                                                  "unmatched", false, false, false,
                                                  "no github check has a sentence template this "
                                                  "matches",
                                                  NULL, NULL));
        json_t *judged =
                criterion(9, "model", NULL, "The summary does not repeat the key", "passed", false,
                          false, true, "judged pass by command m: fine", NULL, NULL);
        _cleanup_free_ char *rationale = NULL;
        CHECK(asprintf(&rationale, "The post omits %s entirely.", tokens) > 0);
        json_object_set_new(judged, "judgment",
                            json_pack("{s:s, s:s, s:i, s:s, s:s, s:s, s:s}", "api", "command",
                                      "model", "m", "temperature", 0, "prompt_sha256", "ab12",
                                      "verdict", "pass", "rationale", rationale, "answer", tokens));
        json_array_append_new(criteria, judged);
        json_t *err = criterion(10, "model", NULL, "The tone is calm", "error", false, false, false,
                                "not evaluated: the judge (http m) timed out", NULL, NULL);
        json_object_set_new(err, "judgment",
                            json_pack("{s:s, s:s, s:s}", "api", "http", "model", "m", "error",
                                      "timed out after 30 s"));
        json_array_append_new(criteria, err);
        json_array_append_new(criteria,
                              criterion(11, "model", NULL, "The summary is short", "skipped", false,
                                        false, false, "not evaluated: no judge is configured", NULL,
                                        NULL));
        _cleanup_json_ json_t *v = json_pack(
                "{s:i, s:s, s:b, s:b, s:f, s:{s:f}, s:{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, "
                "s:i}, s:o}",
                "version", 2, "state", "incomplete", "passed", false, "code_only", false, "score",
                100.0, "task", "pass_threshold", 100.0, "counts", "criteria", 5, "scored", 2,
                "passed", 2, "failed", 0, "unmatched", 1, "skipped", 1, "error", 1, "not_evaluated",
                3, "already_true_in_seed", 0, "criteria", criteria);
        CHECK(v != NULL);
        make_run(dir, v);
        _cleanup_free_ char *s = summary_of(dir);
        EXPECT_LINE(s, "## Verdict:", "## Verdict: incomplete (score 100%, threshold 100%)");
        EXPECT_LINE(s, "5 criteria:",
                    "5 criteria: 2 passed, 0 failed, 1 unmatched, 1 skipped, 1 judge error, 0 "
                    "already true in the seed; 2 scored; 3 not evaluated.");
        EXPECT_LINE(s, "Incomplete:",
                    "Incomplete: 3 criteria that should have been scored were "
                    "not:");
        EXPECT_LINE(s, "- line 8,", "unmatched");
        EXPECT_LINE(s, "- line 10,", "the judge could not be asked");
        EXPECT_LINE(s, "- line 11,", "a [model] criterion with no judge to ask");
        CHECK(!line_with(s, "- line 9,") && !line_with(s, "- line 7,"));
        EXPECT_LINE(s, "(line 10)", "- **error** [model] The tone is calm (line 10)");
        EXPECT_LINE(s, "judgment: **pass**",
                    "  - judgment: **pass** by `command` `m`: The post omits leaked: [REDACTED]");
        EXPECT_LINE(s, "judgment: no verdict", "by `http` `m`: timed out after 30 s");
        CHECK(!strstr(s, "SeCrEt") && !strstr(s, "code-only"));

        /* code_only: [model] criteria deliberately left out, said once, not as missing */
        json_object_set_new(v, "code_only", json_true());
        json_object_set_new(v, "state", json_string("pass"));
        json_array_remove(criteria, 1);
        json_array_remove(criteria, 1);
        json_array_remove(criteria, 1);
        write_json(dir, "verdict.json", v);
        free(s);
        s = summary_of(dir);
        EXPECT_LINE(s, "Graded code-only", "[model] criteria were deliberately not judged");
        CHECK(!strstr(s, "Incomplete"));
        nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
        test_summary_redacts();
        test_summary_labels();
        test_summary_v2();
        return check_finish();
}
