/* SPDX-License-Identifier: MIT */
/*
 * The GitHub twin: the product walkthrough over REST and over MCP (same tool, same world
 * change), response shapes octokit reads, validation and error envelopes, pagination
 * Link headers, seed validation messages.
 */
#include <stdarg.h>

#include "common/json-util.h"
#include "pods/twin/kind.h"
#include "tests/unit/check.h"
#include "tests/unit/twin-test-util.h"

#define BASE TWIN_TEST_BASE("github")

/* A REST request with the JSON content type octokit sends on every call. */
static void req(Twin *t, TwinReply *rp, const char *method, const char *path, const char *query,
                const char *body)
{
        twin_test_req(t, rp, method, path, query, "application/json", body);
}

static json_t *issue_row(Twin *t, int n)
{
        size_t i;
        json_t *x;
        json_array_foreach (jp(twin_world(t), "/repositories/0/issues"), i, x) {
                if (jpi(x, "/number") == n)
                        return x;
        }
        return NULL;
}

/* The walkthrough: read issue #1, assign alice, comment — over REST. */
static void test_walkthrough_rest(void)
{
        Twin *t = twin_test_new("github", "default");
        TwinReply rp = {};

        req(t, &rp, "GET", "/repos/acme/api/issues", NULL, NULL);
        CHECK(rp.status == 200 && json_array_size(rp.body) == 1);
        CHECK(streq(rp.tool, "list_issues") && !rp.state_mutation && !jps(rp.headers, "/Link"));

        req(t, &rp, "GET", "/repos/acme/api/issues/1", NULL, NULL);
        CHECK(rp.status == 200 && streq(rp.tool, "issue_read") && !rp.state_mutation);
        CHECK(!rp.state_delta && !rp.error && streq(rp.fidelity, "semantic"));
        json_t *b = rp.body;
        CHECK(jpi(b, "/number") == 1 && streq(jps(b, "/state"), "open"));
        CHECK(streq(jps(b, "/labels/0/name"), "bug") && streq(jps(b, "/labels/0/color"), "d73a4a"));
        CHECK(json_is_true(jp(b, "/labels/0/default")));
        CHECK(json_array_size(jp(b, "/assignees")) == 0 && json_is_null(jp(b, "/assignee")));
        CHECK(jpi(b, "/comments") == 0 && streq(jps(b, "/user/login"), "bob"));
        CHECK(streq(jps(b, "/url"), BASE "/repos/acme/api/issues/1"));
        CHECK(streq(jps(b, "/repository_url"), BASE "/repos/acme/api"));
        CHECK(streq(jps(b, "/html_url"), "https://github.com/acme/api/issues/1"));
        CHECK(streq(jps(b, "/created_at"), "2026-01-01T00:00:00Z"));
        CHECK(json_is_null(jp(b, "/closed_at")) && json_is_false(jp(b, "/locked")));
        CHECK(streq(jps(b, "/author_association"), "COLLABORATOR"));
        /* legacy node ids: base64("05:Issue<id>") */
        char raw[32];
        snprintf(raw, sizeof(raw), "05:Issue%lld", jpi(b, "/id"));
        _cleanup_free_ char *nid = twin_base64(raw, strlen(raw));
        CHECK(streq(jps(b, "/node_id"), nid));
        CHECK(jpi(b, "/user/id") > 0 && streq(jps(b, "/user/type"), "User"));

        req(t, &rp, "POST", "/repos/acme/api/issues/1/assignees", NULL,
            "{\"assignees\":[\"alice\"]}");
        CHECK(rp.status == 201 && streq(rp.tool, "add_issue_assignees") && rp.state_mutation);
        CHECK(streq(jps(rp.body, "/assignees/0/login"), "alice"));
        CHECK(streq(jps(rp.body, "/assignee/login"), "alice"));
        CHECK(json_array_size(jp(rp.state_delta, "/before/assignees")) == 0);
        CHECK(streq(jps(rp.state_delta, "/after/assignees/0"), "alice"));
        CHECK(streq(jps(rp.body, "/updated_at"), "2026-05-28T20:26:40Z"));

        req(t, &rp, "POST", "/repos/acme/api/issues/1/comments", NULL,
            "{\"body\":\"Triaged as a bug; tracking in acme/api#1.\"}");
        CHECK(rp.status == 201 && streq(rp.tool, "add_issue_comment") && rp.state_mutation);
        CHECK(streq(jps(rp.body, "/body"), "Triaged as a bug; tracking in acme/api#1."));
        CHECK(streq(jps(rp.body, "/user/login"), "pome-agent"));
        CHECK(streq(jps(rp.body, "/issue_url"), BASE "/repos/acme/api/issues/1"));
        CHECK(strncmp(jps(rp.body, "/html_url"),
                      "https://github.com/acme/api/issues/1#issuecomment-", 50) == 0);
        CHECK(json_is_null(jp(rp.state_delta, "/before")));
        CHECK(jpi(rp.state_delta, "/after/id") == jpi(rp.body, "/id"));

        /* the final state a check reads */
        json_t *row = issue_row(t, 1);
        CHECK(streq(jps(row, "/assignees/0"), "alice"));
        CHECK(strstr(jps(row, "/comments/0/body"), "acme/api#1") != NULL);
        CHECK(streq(jps(row, "/state"), "open"));

        req(t, &rp, "GET", "/repos/acme/api/issues/1/comments", NULL, NULL);
        CHECK(rp.status == 200 && json_array_size(rp.body) == 1);
        req(t, &rp, "GET", "/repos/acme/api/issues/1", NULL, NULL);
        CHECK(jpi(rp.body, "/comments") == 1);
        twin_reply_done(&rp);
        twin_free(t);
}

/* The same walkthrough over MCP: same tools stamped, same world. */
static void test_walkthrough_mcp(void)
{
        Twin *rest = twin_test_new("github", "default"), *m = twin_test_new("github", "default");
        TwinReply rp = {};

        req(rest, &rp, "POST", "/repos/acme/api/issues/1/assignees", NULL,
            "{\"assignees\":[\"alice\"]}");
        req(rest, &rp, "POST", "/repos/acme/api/issues/1/comments", NULL,
            "{\"body\":\"see acme/api#1\"}");

        twin_test_call(m, &rp, "issue_read",
                       "{\"method\":\"get\",\"owner\":\"acme\",\"repo\":\"api\","
                       "\"issue_number\":1}");
        CHECK(streq(rp.tool, "issue_read") && json_is_false(jp(rp.body, "/result/isError")));
        /* the official MinimalIssue: label names, assignee logins */
        CHECK(streq(jps(rp.body, "/result/structuredContent/labels/0"), "bug"));
        CHECK(json_array_size(jp(rp.body, "/result/structuredContent/assignees")) == 0);
        CHECK(streq(jps(rp.body, "/result/structuredContent/user/login"), "bob"));
        /* add_issue_assignees is REST-only: over MCP the official issue_write assigns */
        twin_test_call(m, &rp, "add_issue_assignees",
                       "{\"owner\":\"acme\",\"repo\":\"api\",\"issue_number\":1,"
                       "\"assignees\":[\"alice\"]}");
        CHECK(jp(rp.body, "/error/code") && !rp.state_mutation);
        twin_test_call(m, &rp, "issue_write",
                       "{\"method\":\"update\",\"owner\":\"acme\",\"repo\":\"api\","
                       "\"issue_number\":\"1\",\"assignees\":[\"alice\"]}");
        CHECK(rp.status == 200 && streq(rp.tool, "issue_write") && rp.state_mutation);
        CHECK(streq(jps(rp.body, "/result/structuredContent/url"),
                    "https://github.com/acme/api/issues/1"));
        CHECK(streq(jps(rp.state_delta, "/after/assignees/0"), "alice"));
        twin_test_call(m, &rp, "add_issue_comment",
                       "{\"owner\":\"acme\",\"repo\":\"api\",\"issue_number\":1,\"body\":\"see "
                       "acme/api#1\"}");
        CHECK(streq(rp.tool, "add_issue_comment") && rp.state_mutation);
        CHECK(strncmp(jps(rp.body, "/result/structuredContent/url"),
                      "https://github.com/acme/api/issues/1#issuecomment-", 50) == 0);

        CHECK(json_equal(twin_world(rest), twin_world(m)));

        /* a refused write over MCP: isError, no mutation, tool still stamped */
        twin_test_call(m, &rp, "add_issue_comment",
                       "{\"owner\":\"acme\",\"repo\":\"api\",\"issue_number\":1}");
        CHECK(json_is_true(jp(rp.body, "/result/isError")) && !rp.state_mutation);
        CHECK(streq(rp.tool, "add_issue_comment"));
        CHECK(streq(jps(rp.body, "/result/structuredContent/message"),
                    "at least one of body or reaction is required"));
        twin_reply_done(&rp);
        twin_free(rest);
        twin_free(m);
}

static void test_reads(void)
{
        Twin *t = twin_test_new("github", "default");
        TwinReply rp = {};

        req(t, &rp, "GET", "/user", NULL, NULL);
        CHECK(rp.status == 200 && streq(rp.tool, "get_me"));
        CHECK(streq(jps(rp.body, "/login"), "pome-agent") &&
              streq(jps(rp.body, "/name"), "Pome Agent"));
        CHECK(streq(jps(rp.body, "/url"), BASE "/users/pome-agent"));

        req(t, &rp, "GET", "/repos/acme/api", NULL, NULL);
        CHECK(rp.status == 200 && streq(rp.tool, "get_repository"));
        CHECK(streq(jps(rp.body, "/full_name"), "acme/api"));
        CHECK(streq(jps(rp.body, "/owner/type"), "Organization"));
        CHECK(jpi(rp.body, "/open_issues_count") == 1 && json_is_false(jp(rp.body, "/private")));
        CHECK(streq(jps(rp.body, "/default_branch"), "main"));
        CHECK(json_is_true(jp(rp.body, "/permissions/push")));
        CHECK(json_is_false(jp(rp.body, "/permissions/admin")));

        /* logins and repository names are case-insensitive on GitHub */
        req(t, &rp, "GET", "/repos/ACME/Api/issues/1", NULL, NULL);
        CHECK(rp.status == 200);

        req(t, &rp, "GET", "/repos/acme/nope", NULL, NULL);
        CHECK(rp.status == 404 && streq(jps(rp.body, "/message"), "Not Found"));
        CHECK(streq(jps(rp.body, "/status"), "404"));
        CHECK(streq(jps(rp.body, "/documentation_url"), "https://docs.github.com/rest"));
        CHECK(streq(rp.error, "Not Found") && streq(rp.tool, "get_repository"));
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_bad_inputs(void)
{
        Twin *t = twin_test_new("github", "default");
        TwinReply rp = {};
        _cleanup_json_ json_t *before = json_deep_copy(twin_world(t));

        /* issue numbers: huge, negative, junk → 404 like GitHub's router */
        const char *numbers[] = {
                "99999999999999999999999", "9223372036854775807", "0", "-1", "abc", "1e3", "2"};
        for (size_t i = 0; i < ELEMENTSOF(numbers); i++) {
                char path[128];
                snprintf(path, sizeof(path), "/repos/acme/api/issues/%s", numbers[i]);
                req(t, &rp, "GET", path, NULL, NULL);
                CHECK(rp.status == 404 && streq(rp.tool, "issue_read"));
        }

        static const struct {
                const char *method, *path, *body;
                int status;
                const char *field, *code;
        } cases[] = {
                {"POST", "/repos/acme/api/issues", "{}", 422, "title", "missing_field"},
                {"POST", "/repos/acme/api/issues", "{\"title\":\"\"}", 422, "title",
                 "missing_field"},
                {"POST", "/repos/acme/api/issues", "{\"title\":42}", 422, "title", "invalid"},
                {"POST", "/repos/acme/api/issues", "{\"title\":\"x\",\"body\":[]}", 422, "body",
                 "invalid"},
                {"POST", "/repos/acme/api/issues", "{\"title\":\"x\",\"labels\":[1]}", 422,
                 "labels", "invalid"},
                {"POST", "/repos/acme/api/issues",
                 "{\"title\":\"x\",\"labels\":[\"fresh\"],\"assignees\":{}}", 422, "assignees",
                 "invalid"},
                {"POST", "/repos/acme/api/issues", "{\"title\":\"x\",\"milestone\":7}", 422,
                 "milestone", "invalid"},
                {"PATCH", "/repos/acme/api/issues/1", "{\"state\":\"done\",\"labels\":[\"fresh\"]}",
                 422, "state", "invalid"},
                {"PATCH", "/repos/acme/api/issues/1", "{\"state_reason\":\"bored\"}", 422,
                 "state_reason", "invalid"},
                {"PATCH", "/repos/acme/api/issues/1", "{\"title\":null}", 0, NULL, NULL},
                {"POST", "/repos/acme/api/issues/1/comments", "{}", 422, "body", "missing_field"},
                {"POST", "/repos/acme/api/issues/1/comments", "{\"body\":{\"a\":1}}", 422, "body",
                 "invalid"},
                {"POST", "/repos/acme/api/issues/1/labels", "{}", 422, "labels", "missing_field"},
                {"POST", "/repos/acme/api/issues/1/assignees", "{\"assignees\":7}", 422,
                 "assignees", "invalid"},
                {"GET", "/repos/acme/api/issues", NULL, 0, NULL, NULL},
                {"POST", "/repos/acme/api/issues", "{\"title\":", 400, NULL, NULL},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                req(t, &rp, cases[i].method, cases[i].path, NULL, cases[i].body);
                if (cases[i].status == 0) {
                        CHECK(rp.status == 200);
                        continue;
                }
                if (rp.status != cases[i].status)
                        fprintf(stderr, "case %zu: %d\n", i, rp.status);
                CHECK(rp.status == cases[i].status && !rp.state_mutation && rp.error);
                if (cases[i].field) {
                        CHECK(streq(jps(rp.body, "/message"), "Validation Failed"));
                        CHECK(streq(jps(rp.body, "/status"), "422"));
                        CHECK(streq(jps(rp.body, "/errors/0/field"), cases[i].field));
                        CHECK(streq(jps(rp.body, "/errors/0/code"), cases[i].code));
                        CHECK(jps(rp.body, "/errors/0/resource") != NULL);
                } else
                        CHECK(streq(jps(rp.body, "/message"), "Problems parsing JSON"));
        }
        /* none of the refused writes touched the world (not even label creation) */
        CHECK(json_equal(before, twin_world(t)));

        /* wrong types over MCP */
        twin_test_call(t, &rp, "issue_read",
                       "{\"method\":\"get\",\"owner\":1,\"repo\":\"api\",\"issue_number\":1}");
        CHECK(json_is_true(jp(rp.body, "/result/isError")));
        CHECK(streq(jps(rp.body, "/result/structuredContent/errors/0/field"), "owner"));
        twin_test_call(t, &rp, "issue_read",
                       "{\"method\":\"get\",\"owner\":\"acme\",\"repo\":\"api\"}");
        CHECK(streq(jps(rp.body, "/result/structuredContent/errors/0/code"), "missing_field"));
        twin_test_call(t, &rp, "issue_read",
                       "{\"method\":\"get\",\"owner\":\"acme\",\"repo\":\"api\","
                       "\"issue_number\":1e300}");
        CHECK(streq(jps(rp.body, "/result/structuredContent/message"), "Not Found"));
        twin_test_call(t, &rp, "issue_read",
                       "{\"method\":\"get\",\"owner\":\"acme\",\"repo\":\"api\","
                       "\"issue_number\":{}}");
        CHECK(streq(jps(rp.body, "/result/structuredContent/message"), "Not Found"));
        twin_test_call(t, &rp, "issue_read",
                       "{\"method\":\"explode\",\"owner\":\"acme\",\"repo\":\"api\","
                       "\"issue_number\":1}");
        CHECK(json_is_true(jp(rp.body, "/result/isError")));
        CHECK(streq(jps(rp.body, "/result/structuredContent/message"), "unknown method: explode"));
        /* list_issues as the official server: an unknown state lists both */
        twin_test_call(t, &rp, "list_issues",
                       "{\"owner\":\"acme\",\"repo\":\"api\",\"state\":\"weird\"}");
        CHECK(jpi(rp.body, "/result/structuredContent/totalCount") == 1);
        twin_test_call(t, &rp, "list_issues", "{\"owner\":\"acme\",\"repo\":\"api\",\"page\":2}");
        CHECK(json_is_true(jp(rp.body, "/result/isError")));
        twin_test_call(t, &rp, "list_issues",
                       "{\"owner\":\"acme\",\"repo\":\"api\",\"after\":\"bm9wZQ==\"}");
        CHECK(json_is_true(jp(rp.body, "/result/isError")));
        CHECK(json_equal(before, twin_world(t)));
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_writes(void)
{
        Twin *t = twin_test_new("github", "default");
        TwinReply rp = {};

        /* a login that cannot be assigned fails the create, naming it (github.com's 422) */
        req(t, &rp, "POST", "/repos/acme/api/issues", NULL,
            "{\"title\":\"Docs are stale\",\"assignees\":[\"alice\",\"mallory\"]}");
        CHECK(rp.status == 422 && !rp.state_mutation);
        CHECK(streq(jps(rp.body, "/errors/0/value"), "mallory") &&
              streq(jps(rp.body, "/errors/0/field"), "assignees") &&
              streq(jps(rp.body, "/errors/0/code"), "invalid"));
        req(t, &rp, "POST", "/repos/acme/api/issues", NULL,
            "{\"title\":\"Docs are stale\",\"assignee\":\"acme\"}");
        CHECK(rp.status == 422 && streq(jps(rp.body, "/errors/0/field"), "assignee"));
        req(t, &rp, "POST", "/repos/acme/api/issues", NULL,
            "{\"title\":\"Docs are stale\",\"body\":\"see README\",\"labels\":[\"documentation\","
            "\"needs-triage\"],\"assignees\":[\"alice\",\"Alice\"]}");
        CHECK(rp.status == 201 && streq(rp.tool, "create_issue") && rp.state_mutation);
        CHECK(jpi(rp.body, "/number") == 2 && streq(jps(rp.body, "/state"), "open"));
        CHECK(json_array_size(jp(rp.body, "/assignees")) == 1); /* one login, any case */
        CHECK(streq(jps(rp.body, "/labels/1/name"), "needs-triage"));
        CHECK(streq(jps(rp.body, "/labels/1/color"), "ededed"));
        CHECK(json_is_null(jp(rp.state_delta, "/before")));
        CHECK(streq(jps(rp.state_delta, "/after/title"), "Docs are stale"));
        CHECK(streq(jps(rp.body, "/created_at"), "2026-05-28T20:26:40Z"));
        /* GitHub creates labels named on an issue */
        CHECK(json_array_size(jp(twin_world(t), "/repositories/0/labels")) == 7);

        /* close, then a no-op patch, then reopen */
        req(t, &rp, "PATCH", "/repos/acme/api/issues/2", NULL, "{\"state\":\"closed\"}");
        CHECK(rp.status == 200 && streq(rp.tool, "issue_write") && rp.state_mutation);
        CHECK(streq(jps(rp.body, "/state"), "closed"));
        CHECK(streq(jps(rp.body, "/state_reason"), "completed"));
        CHECK(streq(jps(rp.body, "/closed_at"), "2026-05-28T20:26:40Z"));
        CHECK(streq(jps(rp.state_delta, "/before/state"), "open"));
        /* a single issue names who closed it; a list does not carry closed_by */
        CHECK(streq(jps(rp.body, "/closed_by/login"), "pome-agent"));
        CHECK(streq(jps(rp.state_delta, "/after/closed_by"), "pome-agent"));
        req(t, &rp, "GET", "/repos/acme/api/issues/2", NULL, NULL);
        CHECK(streq(jps(rp.body, "/closed_by/login"), "pome-agent"));
        req(t, &rp, "GET", "/repos/acme/api/issues", "state=closed", NULL);
        CHECK(json_array_size(rp.body) == 1 && !jp(rp.body, "/0/closed_by"));
        req(t, &rp, "PATCH", "/repos/acme/api/issues/2", NULL, "{\"title\":\"Docs are stale\"}");
        CHECK(rp.status == 200 && !rp.state_mutation && !rp.state_delta);
        req(t, &rp, "PATCH", "/repos/acme/api/issues/2", NULL,
            "{\"state\":\"open\",\"assignee\":null,\"labels\":[]}");
        CHECK(rp.state_mutation && streq(jps(rp.body, "/state_reason"), "reopened"));
        CHECK(json_is_null(jp(rp.body, "/closed_at")) && json_is_null(jp(rp.body, "/closed_by")));
        CHECK(json_array_size(jp(rp.body, "/assignees")) == 0);
        CHECK(json_array_size(jp(rp.body, "/labels")) == 0);
        req(t, &rp, "PATCH", "/repos/acme/api/issues/1", NULL,
            "{\"state\":\"closed\",\"state_reason\":\"not_planned\"}");
        CHECK(streq(jps(rp.body, "/state_reason"), "not_planned"));

        /* assignees: unknown users are ignored like on GitHub, so nothing changes */
        req(t, &rp, "POST", "/repos/acme/api/issues/1/assignees", NULL,
            "{\"assignees\":[\"mallory\"]}");
        CHECK(rp.status == 201 && !rp.state_mutation);
        req(t, &rp, "POST", "/repos/acme/api/issues/1/assignees", NULL,
            "{\"assignees\":[\"alice\",\"BOB\"]}");
        CHECK(rp.state_mutation && streq(jps(rp.body, "/assignees/1/login"), "bob"));
        req(t, &rp, "DELETE", "/repos/acme/api/issues/1/assignees", NULL,
            "{\"assignees\":[\"Alice\"]}");
        CHECK(rp.status == 200 && streq(rp.tool, "remove_issue_assignees") && rp.state_mutation);
        CHECK(json_array_size(jp(rp.body, "/assignees")) == 1);

        /* labels: add (creating), add again (no change), remove */
        req(t, &rp, "POST", "/repos/acme/api/issues/1/labels", NULL,
            "{\"labels\":[\"enhancement\",{\"name\":\"p1\"}]}");
        CHECK(rp.status == 200 && streq(rp.tool, "add_issue_labels") && rp.state_mutation);
        CHECK(json_array_size(rp.body) == 3 && streq(jps(rp.body, "/2/name"), "p1"));
        req(t, &rp, "POST", "/repos/acme/api/issues/1/labels", NULL, "{\"labels\":[\"BUG\"]}");
        CHECK(rp.status == 200 && !rp.state_mutation && json_array_size(rp.body) == 3);
        req(t, &rp, "DELETE", "/repos/acme/api/issues/1/labels/p1", NULL, NULL);
        CHECK(rp.status == 200 && streq(rp.tool, "remove_issue_label") && rp.state_mutation);
        CHECK(json_array_size(rp.body) == 2);
        req(t, &rp, "DELETE", "/repos/acme/api/issues/1/labels/p1", NULL, NULL);
        CHECK(rp.status == 404 && !rp.state_mutation);
        /* the body may be the list itself, as PyGithub and octokit.rb send it (GitHub's
         * "Add labels to an issue" and "Set labels for an issue" take an array) */
        req(t, &rp, "POST", "/repos/acme/api/issues/1/labels", NULL, "[\"ui\",{\"name\":\"p2\"}]");
        CHECK(rp.status == 200 && streq(rp.tool, "add_issue_labels") && rp.state_mutation);
        CHECK(json_array_size(rp.body) == 4 && streq(jps(rp.body, "/3/name"), "p2"));
        CHECK(streq_ptr(jps(rp.request_body, "/labels/0"), "ui"));
        req(t, &rp, "PUT", "/repos/acme/api/issues/1/labels", NULL, "[\"bug\"]");
        CHECK(rp.status == 200 && streq(rp.tool, "set_issue_labels") &&
              json_array_size(rp.body) == 1);
        /* elsewhere a list is not a body */
        req(t, &rp, "POST", "/repos/acme/api/issues", NULL, "[\"bug\"]");
        CHECK(rp.status == 400 && streq(jps(rp.body, "/message"), "Problems parsing JSON"));
        twin_reply_done(&rp);
        twin_free(t);
}

static bool link_has(const TwinReply *rp, const char *needle)
{
        const char *l = jps(rp->headers, "/Link");
        return l && strstr(l, needle);
}

static void test_pagination(void)
{
        Twin *t = twin_test_new("github", "default");
        TwinReply rp = {};
        for (int i = 0; i < 4; i++)
                req(t, &rp, "POST", "/repos/acme/api/issues", NULL, "{\"title\":\"more\"}");

        req(t, &rp, "GET", "/repos/acme/api/issues", "per_page=2&state=open", NULL);
        CHECK(rp.status == 200 && json_array_size(rp.body) == 2);
        /* newest first */
        CHECK(jpi(rp.body, "/0/number") == 5 && jpi(rp.body, "/1/number") == 4);
        CHECK(link_has(&rp, "<" BASE "/repos/acme/api/issues?per_page=2&state=open&page=2>; "
                            "rel=\"next\""));
        CHECK(link_has(&rp, "<" BASE "/repos/acme/api/issues?per_page=2&state=open&page=3>; "
                            "rel=\"last\""));
        CHECK(!link_has(&rp, "rel=\"prev\""));

        req(t, &rp, "GET", "/repos/acme/api/issues", "page=3&per_page=2", NULL);
        CHECK(json_array_size(rp.body) == 1 && jpi(rp.body, "/0/number") == 1);
        CHECK(link_has(&rp, "per_page=2&page=2>; rel=\"prev\""));
        CHECK(link_has(&rp, "per_page=2&page=1>; rel=\"first\""));
        CHECK(!link_has(&rp, "rel=\"next\""));

        req(t, &rp, "GET", "/repos/acme/api/issues", "page=99999999999999999999&per_page=2", NULL);
        CHECK(rp.status == 200 && json_array_size(rp.body) == 2); /* junk page: page 1 */
        req(t, &rp, "GET", "/repos/acme/api/issues", "page=9223372036854775807&per_page=2", NULL);
        CHECK(rp.status == 200 && json_array_size(rp.body) == 0);
        CHECK(link_has(&rp, "page=3>; rel=\"prev\""));

        req(t, &rp, "GET", "/repos/acme/api/issues", "per_page=500", NULL);
        CHECK(json_array_size(rp.body) == 5 && !jps(rp.headers, "/Link"));

        /* filters and sort */
        req(t, &rp, "GET", "/repos/acme/api/issues", "labels=bug", NULL);
        CHECK(json_array_size(rp.body) == 1 && jpi(rp.body, "/0/number") == 1);
        req(t, &rp, "GET", "/repos/acme/api/issues", "direction=asc&per_page=1", NULL);
        CHECK(jpi(rp.body, "/0/number") == 1);
        req(t, &rp, "PATCH", "/repos/acme/api/issues/3", NULL, "{\"state\":\"closed\"}");
        req(t, &rp, "GET", "/repos/acme/api/issues", "state=closed", NULL);
        CHECK(json_array_size(rp.body) == 1 && jpi(rp.body, "/0/number") == 3);
        req(t, &rp, "GET", "/repos/acme/api/issues", "state=all", NULL);
        CHECK(json_array_size(rp.body) == 5);
        req(t, &rp, "POST", "/repos/acme/api/issues/1/assignees", NULL,
            "{\"assignees\":[\"alice\"]}");
        req(t, &rp, "GET", "/repos/acme/api/issues", "assignee=alice", NULL);
        CHECK(json_array_size(rp.body) == 1);
        req(t, &rp, "GET", "/repos/acme/api/issues", "assignee=none", NULL);
        CHECK(json_array_size(rp.body) == 3);

        for (int i = 0; i < 3; i++)
                req(t, &rp, "POST", "/repos/acme/api/issues/1/comments", NULL, "{\"body\":\"c\"}");
        req(t, &rp, "GET", "/repos/acme/api/issues/1/comments", "per_page=2", NULL);
        CHECK(rp.status == 200 && json_array_size(rp.body) == 2);
        CHECK(link_has(&rp, "<" BASE "/repos/acme/api/issues/1/comments?per_page=2&page=2>; "
                            "rel=\"next\""));

        /* over MCP list_issues pages by cursor (GraphQL, as the official server), no Link */
        twin_test_call(t, &rp, "list_issues",
                       "{\"owner\":\"acme\",\"repo\":\"api\",\"perPage\":2}");
        CHECK(!rp.headers);
        json_t *sc = jp(rp.body, "/result/structuredContent");
        CHECK(jpi(sc, "/totalCount") == 5 && json_array_size(jp(sc, "/issues")) == 2);
        CHECK(json_is_true(jp(sc, "/pageInfo/hasNextPage")) &&
              json_is_false(jp(sc, "/pageInfo/hasPreviousPage")));
        CHECK(jpi(sc, "/issues/0/number") == 5 && streq(jps(sc, "/issues/0/state"), "OPEN"));
        size_t seen = 2;
        for (int guard = 0; guard < 5 && json_is_true(jp(sc, "/pageInfo/hasNextPage")); guard++) {
                _cleanup_free_ char *args = NULL;
                CHECK(asprintf(&args,
                               "{\"owner\":\"acme\",\"repo\":\"api\",\"perPage\":2,"
                               "\"after\":\"%s\"}",
                               jps(sc, "/pageInfo/endCursor")) > 0);
                twin_test_call(t, &rp, "list_issues", args);
                sc = jp(rp.body, "/result/structuredContent");
                seen += json_array_size(jp(sc, "/issues"));
                CHECK(json_is_true(jp(sc, "/pageInfo/hasPreviousPage")));
        }
        CHECK(seen == 5);
        twin_test_call(t, &rp, "list_issues",
                       "{\"owner\":\"acme\",\"repo\":\"api\",\"state\":\"CLOSED\"}");
        sc = jp(rp.body, "/result/structuredContent");
        CHECK(jpi(sc, "/totalCount") == 1 && streq(jps(sc, "/issues/0/state"), "CLOSED"));
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_errors_and_auth(void)
{
        TwinReply rp = {};
        twin_kind_github.auth_error(TWIN_AUTH_MISSING, &rp);
        CHECK(rp.status == 401 && streq(jps(rp.body, "/message"), "Requires authentication"));
        CHECK(streq(jps(rp.body, "/status"), "401"));
        CHECK(streq(jps(rp.body, "/documentation_url"), "https://docs.github.com/rest"));
        twin_reply_done(&rp);
        twin_kind_github.auth_error(TWIN_AUTH_INVALID, &rp);
        CHECK(rp.status == 401 && streq(jps(rp.body, "/message"), "Bad credentials"));
        twin_reply_done(&rp);
        twin_kind_github.error(400, "invalid_json", "whatever", &rp);
        CHECK(rp.status == 400 && streq(jps(rp.body, "/message"), "Problems parsing JSON"));
        twin_reply_done(&rp);
        twin_kind_github.error(500, "internal_error", "boom", &rp);
        CHECK(rp.status == 500 && streq(jps(rp.body, "/status"), "500"));
        twin_reply_done(&rp);
}

static void test_private_repo(void)
{
        _cleanup_json_ json_t *seed = json_loads(
                "{\"viewer\":\"outsider\",\"repositories\":[{\"full_name\":\"acme/secret\","
                "\"private\":true,\"collaborators\":[\"alice\"]},{\"owner\":\"outsider\",\"name\":"
                "\"mine\",\"private\":true}]}",
                0, NULL);
        Twin *t = NULL;
        char err[256];
        CHECK_OK(twin_new(&twin_kind_github, seed, &t, err, sizeof(err)));
        TwinReply rp = {};
        req(t, &rp, "GET", "/repos/acme/secret", NULL, NULL);
        CHECK(rp.status == 404);
        req(t, &rp, "GET", "/repos/outsider/mine", NULL, NULL);
        CHECK(rp.status == 200 && json_is_true(jp(rp.body, "/permissions/admin")));
        CHECK(streq(jps(rp.body, "/visibility"), "private"));
        req(t, &rp, "GET", "/user", NULL, NULL);
        CHECK(streq(jps(rp.body, "/login"), "outsider") && jpi(rp.body, "/public_repos") == 0 &&
              jpi(rp.body, "/owned_private_repos") == 1 &&
              jpi(rp.body, "/total_private_repos") == 1);
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_seeds(void)
{
        /* the default seed is the walkthrough's world */
        Twin *t = twin_test_new("github", "default");
        json_t *w = twin_world(t);
        CHECK(json_array_size(jp(w, "/repositories")) == 3); /* acme/api, acme/web, acme/infra */
        CHECK(streq(jps(w, "/repositories/0/owner"), "acme") &&
              streq(jps(w, "/repositories/0/name"), "api"));
        CHECK(json_array_size(jp(w, "/repositories/0/issues")) == 1);
        json_t *i1 = issue_row(t, 1);
        CHECK(streq(jps(i1, "/state"), "open") && streq(jps(i1, "/labels/0"), "bug"));
        CHECK(json_array_size(jp(i1, "/assignees")) == 0 &&
              json_array_size(jp(i1, "/comments")) == 0);
        const char *labels[] = {"bug", "feature", "question", "enhancement"};
        for (size_t i = 0; i < ELEMENTSOF(labels); i++) {
                char ptr[64];
                snprintf(ptr, sizeof(ptr), "/repositories/0/labels/%zu/name", i);
                CHECK(streq(jps(w, ptr), labels[i]));
        }
        twin_free(t);

        _cleanup_json_ json_t *broken = twin_test_seed("github", "broken");
        char err[256] = "";
        Twin *b = NULL;
        CHECK(twin_new(&twin_kind_github, broken, &b, err, sizeof(err)) == -EINVAL && !b);
        CHECK(strstr(err, "repositories[0].issues[1].number: must be a positive integer") != NULL);

        static const struct {
                const char *seed, *msg;
        } cases[] = {
                {"{\"repos\":[]}", "unknown key \"repos\""},
                {"{\"users\":{}}", "users: must be an array"},
                {"{\"users\":[\"alice\",\"Alice\"]}", "users[1]: duplicate login \"Alice\""},
                {"{\"users\":[{\"login\":\"bad login\"}]}", "users[0]: needs a login"},
                {"{\"users\":[{\"login\":\"x\",\"type\":\"Robot\"}]}", "users[0].type"},
                {"{\"repositories\":[{\"name\":\"api\"}]}", "repositories[0].owner"},
                {"{\"repositories\":[{\"owner\":\"a\",\"name\":\"b c\"}]}", "repositories[0].name"},
                {"{\"repositories\":[{\"owner\":\"a\",\"name\":\"b\"},{\"full_name\":\"A/B\"}]}",
                 "repositories[1]: duplicate repository"},
                {"{\"repositories\":[{\"owner\":\"a\",\"name\":\"b\",\"private\":\"yes\"}]}",
                 "repositories[0].private: must be true or false"},
                {"{\"repositories\":[{\"owner\":\"a\",\"name\":\"b\",\"labels\":[{\"name\":\"x\","
                 "\"color\":\"red\"}]}]}",
                 "repositories[0].labels[0].color"},
                {"{\"repositories\":[{\"owner\":\"a\",\"name\":\"b\",\"labels\":[\"x\",\"X\"]}]}",
                 "repositories[0].labels[1]: duplicate label"},
                {"{\"repositories\":[{\"owner\":\"a\",\"name\":\"b\",\"issues\":[{\"title\":\"t\","
                 "\"milestone\":3}]}]}",
                 "repositories[0].issues[0].milestone"},
                {"{\"repositories\":[{\"owner\":\"a\",\"name\":\"b\",\"issues\":[{\"number\":2,"
                 "\"title\":\"t\"}],\"pull_requests\":[{\"number\":2,\"title\":\"p\"}]}]}",
                 "repositories[0].pull_requests[0].number: 2 is already used"},
                {"{\"repositories\":[{\"owner\":\"a\",\"name\":\"b\",\"issues\":[{}]}]}",
                 "repositories[0].issues[0]: needs a title"},
                {"{\"repositories\":[{\"owner\":\"a\",\"name\":\"b\",\"issues\":[{\"title\":\"t\","
                 "\"state\":\"done\"}]}]}",
                 "repositories[0].issues[0].state"},
                {"{\"repositories\":[{\"owner\":\"a\",\"name\":\"b\",\"issues\":[{\"title\":\"t\","
                 "\"assignees\":[\"ok\",\"not ok\"]}]}]}",
                 "repositories[0].issues[0].assignees[1]"},
                {"{\"repositories\":[{\"owner\":\"a\",\"name\":\"b\",\"issues\":[{\"title\":\"t\","
                 "\"comments\":[{\"user\":\"x\"}]}]}]}",
                 "repositories[0].issues[0].comments[0]: needs a body"},
                {"{\"repositories\":[{\"owner\":\"a\",\"name\":\"b\",\"issues\":[{\"title\":\"t\","
                 "\"created_at\":\"yesterday\"}]}]}",
                 "repositories[0].issues[0].created_at"},
                {"{\"repositories\":[{\"owner\":\"a\",\"name\":\"b\",\"files\":[{\"path\":\"/etc/"
                 "passwd\"}]}]}",
                 "repositories[0].files[0].path"},
                {"{\"viewer\":5}", "viewer: must be a GitHub login"},
                /* unknown keys at any depth are refused by their JSON path, never dropped */
                {"{\"repositories\":[{\"owner\":\"a\",\"name\":\"b\",\"topics\":[]}]}",
                 "repositories[0].topics: unknown key (a repository has owner"},
                {"{\"users\":[{\"login\":\"x\",\"avatar\":\"y\"}]}",
                 "users[0].avatar: unknown key (a user has login, type, name, email)"},
                {"{\"repositories\":[{\"owner\":\"a\",\"name\":\"b\",\"issues\":[{\"title\":\"t\","
                 "\"asignee\":\"x\"}]}]}",
                 "repositories[0].issues[0].asignee: unknown key (an issue has number"},
                {"{\"repositories\":[{\"owner\":\"a\",\"name\":\"b\",\"issues\":[{\"title\":\"t\","
                 "\"comments\":[{\"body\":\"c\",\"author\":\"x\"}]}]}]}",
                 "repositories[0].issues[0].comments[0].author: unknown key (a comment has body"},
                {"{\"repositories\":[{\"owner\":\"a\",\"name\":\"b\",\"labels\":[{\"name\":\"x\","
                 "\"colour\":\"ffffff\"}]}]}",
                 "repositories[0].labels[0].colour: unknown key (a label has name"},
                {"{\"repositories\":[{\"owner\":\"a\",\"name\":\"b\",\"milestones\":[{\"title\":"
                 "\"m\","
                 "\"due\":\"soon\"}]}]}",
                 "repositories[0].milestones[0].due: unknown key (a milestone has number"},
                {"{\"repositories\":[{\"owner\":\"a\",\"name\":\"b\",\"collaborators\":[{\"login\":"
                 "\"x\",\"role\":\"admin\"}]}]}",
                 "repositories[0].collaborators[0].role: unknown key (a collaborator has login, "
                 "permission)"},
                /* a task seed for several twins: this twin's part, which must be there */
                {"{\"slack\":{},\"stripe\":{}}", "for several twins and has no \"github\" object"},
                {"{\"github\":{\"repos\":[]},\"slack\":{}}", "unknown key \"repos\""},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_json_ json_t *s = json_loads(cases[i].seed, 0, NULL);
                err[0] = 0;
                CHECK(s && twin_new(&twin_kind_github, s, &b, err, sizeof(err)) == -EINVAL);
                if (!strstr(err, cases[i].msg)) {
                        fprintf(stderr, "seed case %zu: got \"%s\", want \"%s\"\n", i, err,
                                cases[i].msg);
                        check_failures++;
                }
        }

        /* a rich seed normalises: implicit numbers, users from references, PR states */
        _cleanup_json_ json_t *rich = json_loads(
                "{\"users\":[\"zed\"],\"repositories\":[{\"owner\":\"org\",\"name\":\"r\","
                "\"milestones\":[{\"title\":\"v1\"}],\"issues\":[{\"title\":\"a\",\"state\":"
                "\"closed\",\"milestone\":1,\"comments\":[\"plain\"]},{\"title\":\"b\",\"user\":"
                "\"newbie\",\"assignee\":\"zed\"}],\"pull_requests\":[{\"title\":\"fix\","
                "\"state\":\"merged\"}]}]}",
                0, NULL);
        Twin *r = NULL;
        CHECK_OK(twin_new(&twin_kind_github, rich, &r, err, sizeof(err)));
        if (r) {
                json_t *rw = twin_world(r);
                CHECK(streq(jps(rw, "/viewer"), "zed"));
                CHECK(jpi(rw, "/repositories/0/issues/0/number") == 1);
                CHECK(streq(jps(rw, "/repositories/0/issues/0/state_reason"), "completed"));
                CHECK(streq(jps(rw, "/repositories/0/issues/0/comments/0/user"), "zed"));
                CHECK(jpi(rw, "/repositories/0/issues/1/number") == 2);
                CHECK(streq(jps(rw, "/repositories/0/issues/1/assignees/0"), "zed"));
                CHECK(jpi(rw, "/repositories/0/pull_requests/0/number") == 3);
                CHECK(json_is_true(jp(rw, "/repositories/0/pull_requests/0/merged")));
                CHECK(streq(jps(rw, "/repositories/0/pull_requests/0/state"), "closed"));
                CHECK(streq(jps(rw, "/users/0/login"), "zed"));
                CHECK(streq(jps(rw, "/users/1/login"), "org") &&
                      streq(jps(rw, "/users/1/type"), "User"));
                CHECK(streq(jps(rw, "/users/2/login"), "newbie"));
                TwinReply rp = {};
                req(r, &rp, "GET", "/repos/org/r/issues/1", NULL, NULL);
                CHECK(streq(jps(rp.body, "/milestone/title"), "v1"));
                req(r, &rp, "POST", "/repos/org/r/issues", NULL, "{\"title\":\"c\"}");
                CHECK(jpi(rp.body, "/number") == 4); /* after the pull request */
                twin_reply_done(&rp);
        }
        twin_free(r);
}

/* The numbers of the items of a list reply, as "1,2,3". */
static const char *numbers_of(json_t *a, char *buf, size_t len)
{
        size_t i, o = 0;
        json_t *x;
        buf[0] = 0;
        json_array_foreach (a, i, x) {
                o += (size_t)snprintf(buf + o, len - o, "%s%lld", i ? "," : "", jpi(x, "/number"));
                if (o >= len)
                        break;
        }
        return buf;
}

/* triage-backlog: the issues list with pull requests in it, and every filter it has. */
static void test_issue_filters(void)
{
        Twin *t = twin_test_new("github", "triage-backlog");
        TwinReply rp = {};
        char b[512];
        const char *L = "/repos/acme/webapp/issues";

        req(t, &rp, "GET", L, NULL, NULL);
        CHECK(rp.status == 200 && json_array_size(rp.body) == 30 && link_has(&rp, "rel=\"last\""));
        req(t, &rp, "GET", L, "state=all&per_page=100", NULL);
        CHECK(json_array_size(rp.body) == 48 && !jps(rp.headers, "/Link"));
        req(t, &rp, "GET", L, "state=open&per_page=100", NULL);
        CHECK(json_array_size(rp.body) == 39);
        /* newest first: #48 then the pull request #47, which carries pull_request */
        CHECK(jpi(rp.body, "/0/number") == 48 && jpi(rp.body, "/1/number") == 47);
        json_t *pr = jp(rp.body, "/1");
        CHECK(streq(jps(pr, "/pull_request/url"), BASE "/repos/acme/webapp/pulls/47"));
        CHECK(streq(jps(pr, "/pull_request/html_url"), "https://github.com/acme/webapp/pull/47"));
        CHECK(streq(jps(pr, "/pull_request/diff_url"),
                    "https://github.com/acme/webapp/pull/47.diff"));
        CHECK(json_is_null(jp(pr, "/pull_request/merged_at")) && json_is_false(jp(pr, "/draft")));
        CHECK(streq(jps(pr, "/html_url"), "https://github.com/acme/webapp/pull/47"));
        CHECK(!jp(rp.body, "/0/pull_request"));

        static const struct {
                const char *query, *numbers;
        } filters[] = {
                {"assignee=alice", "2"},
                {"milestone=2&direction=asc", "5,10,12,20,30,35,45,47"},
                {"milestone=1&state=closed&per_page=3", "44,40,33"},
                {"mentioned=carol&sort=created&direction=asc", "6,18,24,25,30,36,42,48"},
                {"labels=area:ui,bug&state=all&direction=asc", "2,22,32,42"},
                {"creator=erin&labels=area:auth&state=all", "41,34,21,19,14"},
                {"sort=comments&per_page=3&state=all", "45,41,33"},
                {"since=2026-02-28T00:00:00Z&direction=asc&per_page=4", "24,28,29,30"},
                {"since=2026-03-20&assignee=*&per_page=100", "48"},
        };
        for (size_t i = 0; i < ELEMENTSOF(filters); i++) {
                req(t, &rp, "GET", L, filters[i].query, NULL);
                const char *got = numbers_of(rp.body, b, sizeof(b));
                if (!streq(got, filters[i].numbers))
                        fprintf(stderr, "%s: got %s\n", filters[i].query, got);
                CHECK(rp.status == 200 && streq(got, filters[i].numbers));
        }
        req(t, &rp, "GET", L, "assignee=none&per_page=100", NULL);
        CHECK(json_array_size(rp.body) == 28);
        req(t, &rp, "GET", L, "milestone=none&per_page=100", NULL);
        CHECK(json_array_size(rp.body) == 27);
        req(t, &rp, "GET", L, "milestone=*&per_page=100", NULL);
        CHECK(json_array_size(rp.body) == 12);
        req(t, &rp, "GET", L, "milestone=99", NULL);
        CHECK(rp.status == 422 && streq(jps(rp.body, "/errors/0/value"), "99"));
        CHECK(streq(jps(rp.body, "/errors/0/code"), "invalid"));
        req(t, &rp, "GET", L, "milestone=soon", NULL);
        CHECK(rp.status == 422 && streq(jps(rp.body, "/errors/0/field"), "milestone"));
        static const char *const bad_times[] = {"since=yesterday",
                                                "since=+2026-01-01",
                                                "since=%202026-01-01",
                                                "since=2026-13-01",
                                                "since=2026-01-01T25:00:00Z",
                                                "since=2026-01-01T10:00:00",
                                                "since=2026-1-01",
                                                "since=2026-01-01T10:00:00Zjunk"};
        for (size_t i = 0; i < ELEMENTSOF(bad_times); i++) {
                req(t, &rp, "GET", L, bad_times[i], NULL);
                CHECK(rp.status == 422 && streq(jps(rp.body, "/errors/0/field"), "since"));
        }
        req(t, &rp, "GET", L, "since=2026-03-20T00:00:00.123Z&assignee=*", NULL);
        CHECK(rp.status == 200 && json_array_size(rp.body) == 1);
        /* a time with an offset is the same instant in UTC */
        req(t, &rp, "GET", L, "since=2026-03-20T02:00:00%2B02:00&assignee=*", NULL);
        CHECK(streq(numbers_of(rp.body, b, sizeof(b)), "48"));

        /* MCP list_issues is GraphQL's: issues only, labels any-of, state upper case */
        twin_test_call(
                t, &rp, "list_issues",
                "{\"owner\":\"acme\",\"repo\":\"webapp\",\"state\":\"OPEN\",\"perPage\":100}");
        json_t *sc = jp(rp.body, "/result/structuredContent");
        CHECK(jpi(sc, "/totalCount") == 36 && json_array_size(jp(sc, "/issues")) == 36);
        twin_test_call(t, &rp, "list_issues",
                       "{\"owner\":\"acme\",\"repo\":\"webapp\",\"labels\":[\"question\","
                       "\"documentation\"],\"orderBy\":\"CREATED_AT\",\"direction\":\"ASC\","
                       "\"fields\":[\"number\",\"labels\"]}");
        sc = jp(rp.body, "/result/structuredContent");
        CHECK(jpi(sc, "/issues/0/number") == 3 && jpi(sc, "/issues/1/number") == 7);
        CHECK(json_object_size(jp(sc, "/issues/0")) == 2);
        twin_test_call(t, &rp, "list_issues",
                       "{\"owner\":\"acme\",\"repo\":\"webapp\",\"since\":\"not a time\"}");
        CHECK(json_is_true(jp(rp.body, "/result/isError")));
        twin_reply_done(&rp);
        twin_free(t);
}

/* Pull requests through the issues routes: read, edit, close, comment, label. */
static void test_issue_routes_on_pulls(void)
{
        Twin *t = twin_test_new("github", "triage-backlog");
        TwinReply rp = {};
        req(t, &rp, "GET", "/repos/acme/webapp/issues/12", NULL, NULL);
        CHECK(rp.status == 200 && streq(rp.tool, "issue_read"));
        CHECK(streq(jps(rp.body, "/title"), "Set SameSite=Lax on the session cookie"));
        CHECK(jp(rp.body, "/pull_request") && streq(jps(rp.body, "/milestone/title"), "v1.4"));
        CHECK(streq(jps(rp.body, "/timeline_url"), BASE "/repos/acme/webapp/issues/12/timeline"));
        CHECK(jpi(rp.body, "/reactions/total_count") == 0 && jp(rp.body, "/reactions/+1"));
        twin_test_call(t, &rp, "add_issue_comment",
                       "{\"owner\":\"acme\",\"repo\":\"webapp\",\"issue_number\":12,"
                       "\"reaction\":\"rocket\"}");
        CHECK(rp.state_mutation && streq(jps(rp.state_delta, "/after/content"), "rocket"));
        twin_test_call(t, &rp, "add_issue_comment",
                       "{\"owner\":\"acme\",\"repo\":\"webapp\",\"issue_number\":12,"
                       "\"reaction\":\"party\"}");
        CHECK(json_is_true(jp(rp.body, "/result/isError")) && !rp.state_mutation);
        req(t, &rp, "GET", "/repos/acme/webapp/issues/12", NULL, NULL);
        CHECK(jpi(rp.body, "/reactions/total_count") == 1 &&
              jpi(rp.body, "/reactions/rocket") == 1);
        req(t, &rp, "GET", "/repos/acme/webapp/issues/47/comments", NULL, NULL);
        CHECK(rp.status == 200 && json_array_size(rp.body) == 1);
        CHECK(streq(jps(rp.body, "/0/user/login"), "carol"));
        req(t, &rp, "POST", "/repos/acme/webapp/issues/47/comments", NULL,
            "{\"body\":\"Confirmed, ship it.\"}");
        CHECK(rp.status == 201 && rp.state_mutation);
        req(t, &rp, "GET", "/repos/acme/webapp/pulls/47", NULL, NULL);
        CHECK(jpi(rp.body, "/comments") == 2);

        /* closing the pull request through PATCH /issues pins its tips */
        req(t, &rp, "GET", "/repos/acme/webapp/pulls/12", NULL, NULL);
        _cleanup_free_ char *head = strdup(jps(rp.body, "/head/sha"));
        req(t, &rp, "PATCH", "/repos/acme/webapp/issues/12", NULL,
            "{\"state\":\"closed\",\"labels\":[\"bug\"]}");
        CHECK(rp.status == 200 && streq(rp.tool, "issue_write") && rp.state_mutation);
        CHECK(streq(jps(rp.body, "/state"), "closed") &&
              json_is_null(jp(rp.body, "/state_reason")));
        CHECK(streq(jps(rp.state_delta, "/after/head_sha"), head));
        req(t, &rp, "GET", "/repos/acme/webapp/pulls/12", NULL, NULL);
        CHECK(streq(jps(rp.body, "/state"), "closed") && streq(jps(rp.body, "/head/sha"), head));
        CHECK(json_array_size(jp(rp.body, "/labels")) == 1);
        req(t, &rp, "GET", "/repos/acme/webapp/issues", "state=closed&per_page=100", NULL);
        CHECK(json_array_size(rp.body) == 10);
        /* a merged pull request stays closed */
        req(t, &rp, "PATCH", "/repos/acme/webapp/issues/38", NULL, "{\"state\":\"open\"}");
        CHECK(rp.status == 422 && !rp.state_mutation);
        req(t, &rp, "GET", "/repos/acme/webapp/issues/38", NULL, NULL);
        CHECK(json_is_string(jp(rp.body, "/pull_request/merged_at")));
        req(t, &rp, "PUT", "/repos/acme/webapp/issues/25/labels", NULL,
            "{\"labels\":[\"area:ui\",\"priority:low\"]}");
        CHECK(rp.status == 200 && streq(rp.tool, "set_issue_labels") &&
              json_array_size(rp.body) == 2);
        req(t, &rp, "DELETE", "/repos/acme/webapp/issues/25/labels", NULL, NULL);
        CHECK(rp.status == 204 && !rp.body && rp.state_mutation);
        req(t, &rp, "GET", "/repos/acme/webapp/issues/25/labels", NULL, NULL);
        CHECK(rp.status == 200 && json_array_size(rp.body) == 0);
        twin_reply_done(&rp);
        twin_free(t);
}

/* Labels, milestones, repository comments and assignees. */
static void test_labels_milestones(void)
{
        Twin *t = twin_test_new("github", "triage-backlog");
        TwinReply rp = {};
        char b[512];

        req(t, &rp, "GET", "/repos/acme/webapp/labels", "per_page=5", NULL);
        CHECK(rp.status == 200 && json_array_size(rp.body) == 5 && link_has(&rp, "page=3"));
        req(t, &rp, "POST", "/repos/acme/webapp/labels", NULL, "{\"name\":\"BUG\"}");
        CHECK(rp.status == 422 && streq(jps(rp.body, "/errors/0/code"), "already_exists"));
        CHECK(streq(jps(rp.body, "/errors/0/field"), "name") && !rp.state_mutation);
        req(t, &rp, "POST", "/repos/acme/webapp/labels", NULL,
            "{\"name\":\"regression\",\"color\":\"zzzzzz\"}");
        CHECK(rp.status == 422 && streq(jps(rp.body, "/errors/0/field"), "color"));
        req(t, &rp, "POST", "/repos/acme/webapp/labels", NULL,
            "{\"name\":\"regression\",\"color\":\"e11d21\",\"description\":\"Worked before\"}");
        CHECK(rp.status == 201 && rp.state_mutation && streq(rp.tool, "create_label"));
        CHECK(streq(jps(rp.body, "/url"), BASE "/repos/acme/webapp/labels/regression"));
        req(t, &rp, "GET", "/repos/acme/webapp/labels/area:ui", NULL, NULL);
        CHECK(rp.status == 200 && streq(jps(rp.body, "/color"), "5319e7"));
        req(t, &rp, "PATCH", "/repos/acme/webapp/labels/area:ui", NULL,
            "{\"new_name\":\"area:frontend\"}");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/name"), "area:frontend"));
        req(t, &rp, "GET", "/repos/acme/webapp/issues", "labels=area:frontend&state=all", NULL);
        CHECK(json_array_size(rp.body) == 12);
        req(t, &rp, "PATCH", "/repos/acme/webapp/labels/area:frontend", NULL,
            "{\"new_name\":\"bug\"}");
        CHECK(rp.status == 422 && streq(jps(rp.body, "/errors/0/code"), "already_exists"));
        req(t, &rp, "DELETE", "/repos/acme/webapp/labels/needs-triage", NULL, NULL);
        CHECK(rp.status == 204 && rp.state_mutation);
        req(t, &rp, "GET", "/repos/acme/webapp/issues", "labels=needs-triage", NULL);
        CHECK(rp.status == 200 && json_array_size(rp.body) == 0);
        req(t, &rp, "GET", "/repos/acme/webapp/labels/needs-triage", NULL, NULL);
        CHECK(rp.status == 404);

        /* milestones: open ones by due date, with issue counts (pull requests included) */
        req(t, &rp, "GET", "/repos/acme/webapp/milestones", NULL, NULL);
        CHECK(json_array_size(rp.body) == 2 && streq(jps(rp.body, "/0/title"), "v1.4"));
        CHECK(jpi(rp.body, "/0/open_issues") == 8 && jpi(rp.body, "/0/closed_issues") == 0);
        CHECK(streq(jps(rp.body, "/0/creator/login"), "acme"));
        CHECK(streq(jps(rp.body, "/0/html_url"), "https://github.com/acme/webapp/milestone/2"));
        req(t, &rp, "GET", "/repos/acme/webapp/milestones",
            "state=all&sort=completeness&direction=desc", NULL);
        CHECK(streq(jps(rp.body, "/0/title"), "v1.3") && jpi(rp.body, "/0/closed_issues") == 8);
        req(t, &rp, "POST", "/repos/acme/webapp/milestones", NULL, "{\"title\":\"V1.5\"}");
        CHECK(rp.status == 422 && streq(jps(rp.body, "/errors/0/code"), "already_exists"));
        req(t, &rp, "POST", "/repos/acme/webapp/milestones", NULL,
            "{\"title\":\"v2.0\",\"due_on\":\"2026-12-01T00:00:00Z\",\"description\":\"API v2\"}");
        CHECK(rp.status == 201 && jpi(rp.body, "/number") == 4 && rp.state_mutation);
        CHECK(streq(jps(rp.body, "/creator/login"), "pome-agent"));
        req(t, &rp, "PATCH", "/repos/acme/webapp/issues/7", NULL, "{\"milestone\":4}");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/milestone/title"), "v2.0"));
        CHECK(jpi(rp.body, "/milestone/open_issues") == 1);
        req(t, &rp, "PATCH", "/repos/acme/webapp/milestones/4", NULL, "{\"state\":\"closed\"}");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/state"), "closed"));
        CHECK(json_is_string(jp(rp.body, "/closed_at")));
        req(t, &rp, "DELETE", "/repos/acme/webapp/milestones/4", NULL, NULL);
        CHECK(rp.status == 204 && rp.state_mutation);
        req(t, &rp, "GET", "/repos/acme/webapp/issues/7", NULL, NULL);
        CHECK(json_is_null(jp(rp.body, "/milestone")));
        req(t, &rp, "GET", "/repos/acme/webapp/milestones/4", NULL, NULL);
        CHECK(rp.status == 404);

        /* repository comments, oldest first, one comment read, edited, deleted */
        req(t, &rp, "GET", "/repos/acme/webapp/issues/comments", "per_page=100", NULL);
        CHECK(rp.status == 200 && json_array_size(rp.body) == 19);
        CHECK(jpi(rp.body, "/0/id") < jpi(rp.body, "/1/id"));
        req(t, &rp, "GET", "/repos/acme/webapp/issues/comments", "sort=created&per_page=1", NULL);
        CHECK(strstr(jps(rp.body, "/0/issue_url"), "/issues/47") != NULL);
        long long id = jpi(rp.body, "/0/id");
        snprintf(b, sizeof(b), "/repos/acme/webapp/issues/comments/%lld", id);
        req(t, &rp, "GET", b, NULL, NULL);
        CHECK(rp.status == 200 && streq(rp.tool, "get_issue_comment"));
        req(t, &rp, "PATCH", b, NULL, "{\"body\":\"edited\"}");
        CHECK(rp.status == 200 && streq(jps(rp.body, "/body"), "edited") && rp.state_mutation);
        req(t, &rp, "PATCH", b, NULL, "{}");
        CHECK(rp.status == 422 && streq(jps(rp.body, "/errors/0/code"), "missing_field"));
        req(t, &rp, "DELETE", b, NULL, NULL);
        CHECK(rp.status == 204 && rp.state_mutation && json_is_null(jp(rp.state_delta, "/after")));
        req(t, &rp, "GET", b, NULL, NULL);
        CHECK(rp.status == 404);

        /* assignees: owner (an org) no, collaborators yes, an outsider silently dropped */
        req(t, &rp, "GET", "/repos/acme/webapp/assignees", NULL, NULL);
        CHECK(json_array_size(rp.body) == 5 && streq(jps(rp.body, "/0/login"), "alice"));
        req(t, &rp, "GET", "/repos/acme/webapp/assignees/carol", NULL, NULL);
        CHECK(rp.status == 204 && !rp.body);
        req(t, &rp, "GET", "/repos/acme/webapp/assignees/erin", NULL, NULL);
        CHECK(rp.status == 404);
        req(t, &rp, "POST", "/repos/acme/webapp/issues/8/assignees", NULL,
            "{\"assignees\":[\"erin\",\"dave\"]}");
        CHECK(rp.status == 201 && json_array_size(jp(rp.body, "/assignees")) == 1);
        CHECK(streq(jps(rp.body, "/assignee/login"), "dave"));
        twin_reply_done(&rp);
        twin_free(t);
}

/* GET /search/issues and MCP search_issues. */
static void test_search_issues(void)
{
        Twin *t = twin_test_new("github", "triage-backlog");
        TwinReply rp = {};
        char b[512];
        static const struct {
                const char *q;
                long long total;
                const char *first;
        } cases[] = {
                {"q=repo:acme/webapp+is:pr+is:open&sort=created&order=asc", 3, "12,25,47"},
                {"q=repo:acme/webapp+is:issue+is:open+label:bug+-label:area:auth", 9, NULL},
                {"q=repo:acme/webapp+is:issue+is:open+no:assignee", 26, NULL},
                {"q=password+in:title,body&sort=created&order=asc", 6, "1,11,21,31,41,47"},
                {"q=repo:acme/webapp+mentions:dave+is:open&order=asc&sort=created", 4,
                 "1,17,41,45"},
                {"q=user:acme+milestone:v1.4+is:pr", 2, NULL},
                {"q=%22blocks+us%22+in:comments", 7, NULL},
                {"q=author:erin+state:closed&per_page=2", 4, NULL},
                {"q=repo:acme/docs+involves:dave", 1, "1"},
                {"q=label:%22good+first+issue%22+repo:acme/webapp&order=asc", 4, "8,18,28,48"},
                {"q=milestone:%22v1.3%22+is:closed+is:issue", 8, NULL},
                /* a comma is OR (either label), two label: qualifiers are AND */
                {"q=repo:acme/webapp+label:bug,%22good+first+issue%22", 29, NULL},
                {"q=repo:acme/webapp+label:bug+label:%22good+first+issue%22", 0, NULL},
                {"q=repo:acme/webapp+-label:bug,%22good+first+issue%22", 19, NULL},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *q = cases[i].q;
                TwinReply x = {};
                twin_test_req(t, &x, "GET", "/search/issues", q, NULL, NULL);
                const char *got = numbers_of(jp(x.body, "/items"), b, sizeof(b));
                if (jpi(x.body, "/total_count") != cases[i].total)
                        fprintf(stderr, "%s: total %lld (%s)\n", q, jpi(x.body, "/total_count"),
                                got);
                CHECK(x.status == 200 && streq(x.tool, "search_issues"));
                CHECK(jpi(x.body, "/total_count") == cases[i].total);
                CHECK(json_is_false(jp(x.body, "/incomplete_results")));
                if (cases[i].first && !streq(got, cases[i].first))
                        fprintf(stderr, "%s: %s\n", q, got);
                CHECK(!cases[i].first || streq(got, cases[i].first));
                twin_reply_done(&x);
        }
        req(t, &rp, "GET", "/search/issues", "q=is:pr+repo:acme/webapp&per_page=2", NULL);
        CHECK(json_array_size(jp(rp.body, "/items")) == 2 && link_has(&rp, "rel=\"next\""));
        CHECK(jp(rp.body, "/items/0/pull_request") && json_is_real(jp(rp.body, "/items/0/score")));
        req(t, &rp, "GET", "/search/issues", NULL, NULL);
        CHECK(rp.status == 422 && streq(jps(rp.body, "/errors/0/field"), "q"));
        /* MCP: scoped to is:issue, and to repo:owner/repo when both are given */
        twin_test_call(t, &rp, "search_issues",
                       "{\"query\":\"login\",\"owner\":\"acme\",\"repo\":\"webapp\"}");
        json_t *sc = jp(rp.body, "/result/structuredContent");
        CHECK(jpi(sc, "/total_count") == 5 && !jp(sc, "/items/0/pull_request"));
        CHECK(!jp(sc, "/items/0/score"));
        twin_test_call(t, &rp, "search_issues", "{\"query\":\"is:pr login\"}");
        CHECK(jpi(rp.body, "/result/structuredContent/total_count") == 1);

        /* a repo:, user: or org: naming nothing is github.com's 422, not zero items */
        static const char *const unsearchable[][2] = {
                {"/search/issues", "q=repo:acme/nope+bug"},
                {"/search/issues", "q=bug+user:nobody-at-all"},
                {"/search/code", "q=login+repo:acme/nope"},
                {"/search/commits", "q=fix+org:nobody-at-all"},
                {"/search/repositories", "q=web+user:nobody-at-all"},
        };
        for (size_t i = 0; i < ELEMENTSOF(unsearchable); i++) {
                req(t, &rp, "GET", unsearchable[i][0], unsearchable[i][1], NULL);
                CHECK(rp.status == 422 && streq(jps(rp.body, "/message"), "Validation Failed"));
                CHECK(streq(jps(rp.body, "/errors/0/resource"), "Search"));
                CHECK(streq(jps(rp.body, "/errors/0/field"), "q"));
                CHECK(streq(jps(rp.body, "/errors/0/code"), "invalid"));
                CHECK(strstr(jps(rp.body, "/errors/0/message"), "cannot be searched"));
        }
        /* one of several scopes that resolves is enough; an organisation is a user: too */
        req(t, &rp, "GET", "/search/issues", "q=repo:acme/nope+repo:acme/webapp+is:pr", NULL);
        CHECK(rp.status == 200 && jpi(rp.body, "/total_count") > 0);
        req(t, &rp, "GET", "/search/issues", "q=user:acme+is:pr", NULL);
        CHECK(rp.status == 200 && jpi(rp.body, "/total_count") > 0);
        twin_test_call(t, &rp, "search_issues",
                       "{\"query\":\"login\",\"owner\":\"acme\",\"repo\":\"nope\"}");
        CHECK(json_is_true(jp(rp.body, "/result/isError")));
        twin_reply_done(&rp);
        twin_free(t);
}

/* Bad input on the new issue routes: GitHub's 4xx envelope, the world unchanged. */
static void test_issue_routes_refuse(void)
{
        Twin *t = twin_test_new("github", "triage-backlog");
        TwinReply rp = {};
        _cleanup_json_ json_t *before = json_deep_copy(twin_world(t));
        static const struct {
                const char *method, *path, *query, *body;
                int status;
        } cases[] = {
                {"POST", "/repos/acme/webapp/labels", NULL, "{}", 422},
                {"POST", "/repos/acme/webapp/labels", NULL, "{\"name\":[\"x\"]}", 422},
                {"POST", "/repos/acme/webapp/labels", NULL,
                 "{\"name\":\"x\",\"color\":\"#ededed\"}", 422},
                {"PATCH", "/repos/acme/webapp/labels/nope", NULL, "{\"new_name\":\"y\"}", 404},
                {"PATCH", "/repos/acme/webapp/labels/bug", NULL, "{\"new_name\":\"\"}", 422},
                {"PATCH", "/repos/acme/webapp/labels/bug", NULL, "{\"color\":12}", 422},
                {"DELETE", "/repos/acme/webapp/labels/nope", NULL, NULL, 404},
                {"PUT", "/repos/acme/webapp/issues/1/labels", NULL, "{\"labels\":[{\"a\":1}]}",
                 422},
                {"PUT", "/repos/acme/webapp/issues/999/labels", NULL, "{\"labels\":[]}", 404},
                {"DELETE", "/repos/acme/webapp/issues/999/labels", NULL, NULL, 404},
                {"POST", "/repos/acme/webapp/milestones", NULL, "{}", 422},
                {"POST", "/repos/acme/webapp/milestones", NULL,
                 "{\"title\":\"x\",\"due_on\":\"next week\"}", 422},
                {"POST", "/repos/acme/webapp/milestones", NULL,
                 "{\"title\":\"x\",\"state\":\"done\"}", 422},
                {"PATCH", "/repos/acme/webapp/milestones/1", NULL, "{\"title\":\"\"}", 422},
                {"PATCH", "/repos/acme/webapp/milestones/abc", NULL, "{\"title\":\"x\"}", 404},
                {"DELETE", "/repos/acme/webapp/milestones/99999999999999999999", NULL, NULL, 404},
                {"GET", "/repos/acme/webapp/milestones", "sort=title", NULL, 422},
                {"GET", "/repos/acme/webapp/issues/comments/0", NULL, NULL, 404},
                {"PATCH", "/repos/acme/webapp/issues/comments/-5", NULL, "{\"body\":\"x\"}", 404},
                {"DELETE", "/repos/acme/webapp/issues/comments/abc", NULL, NULL, 404},
                {"GET", "/repos/acme/webapp/issues/comments", "sort=likes", NULL, 422},
                {"GET", "/repos/acme/webapp/issues/comments", "since=soon", NULL, 422},
                {"GET", "/repos/acme/webapp/assignees/acme", NULL, NULL, 404},
                {"GET", "/repos/acme/nope/assignees", NULL, NULL, 404},
                {"GET", "/search/issues", "q=bug&order=sideways", NULL, 422},
                {"PATCH", "/repos/acme/webapp/issues/1", NULL, "{\"milestone\":\"v1.4\"}", 422},
                {"PATCH", "/repos/acme/webapp/issues/1", NULL, "{\"state_reason\":7}", 422},
                {"POST", "/repos/acme/webapp/issues/1/comments", NULL, "{\"body\":\"\"}", 422},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                twin_test_req(t, &rp, cases[i].method, cases[i].path, cases[i].query,
                              "application/json", cases[i].body);
                if (rp.status != cases[i].status)
                        fprintf(stderr, "case %zu (%s %s): %d\n", i, cases[i].method, cases[i].path,
                                rp.status);
                CHECK(rp.status == cases[i].status && !rp.state_mutation && rp.error);
                CHECK(jps(rp.body, "/message") &&
                      streq(jps(rp.body, "/documentation_url"), "https://docs.github.com/rest"));
        }
        /* a 100 000-character query and a 10 000-word one: answered, nothing found */
        size_t n = 100000;
        _cleanup_free_ char *q = malloc(n + 3);
        CHECK(q);
        memcpy(q, "q=", 2);
        for (size_t i = 0; i < n; i++)
                q[2 + i] = i % 10 == 9 ? '+' : 'a' + (char)(i % 7);
        q[n + 2] = 0;
        req(t, &rp, "GET", "/search/issues", q, NULL);
        CHECK(rp.status == 200 && jpi(rp.body, "/total_count") == 0);
        CHECK(json_equal(before, twin_world(t)));
        twin_reply_done(&rp);
        twin_free(t);
}

/* GET with request headers (name, value pairs, NULL-terminated) */
static void get_h(Twin *t, TwinReply *rp, const char *path, ...)
{
        _cleanup_json_ json_t *headers = json_object();
        va_list ap;
        va_start(ap, path);
        for (const char *k; (k = va_arg(ap, const char *));)
                json_object_set_new(headers, k, json_string(va_arg(ap, const char *)));
        va_end(ap);
        TwinRequest rq = {.method = "GET",
                          .path = path,
                          .query = "",
                          .headers = headers,
                          .base_url = TWIN_TEST_BASE("github")};
        twin_reply_done(rp);
        twin_handle(t, &rq, rp);
}

/* The objects clients load lazily (PyGithub's issue.user.name, get_user, repo.owner), the
 * rate limit, and the headers of every reply: X-RateLimit-*, ETag and a conditional read */
static void test_users_orgs_rate_limit(void)
{
        Twin *t = twin_test_new("github", "default");
        TwinReply rp = {};
        req(t, &rp, "GET", "/users/alice", NULL, NULL);
        CHECK(rp.status == 200 && streq(rp.tool, "get_user"));
        CHECK(streq(jps(rp.body, "/login"), "alice") && streq(jps(rp.body, "/name"), "Alice"));
        CHECK(streq(jps(rp.body, "/type"), "User") &&
              json_is_integer(jp(rp.body, "/public_repos")));
        CHECK(streq(jps(rp.body, "/repos_url"), TWIN_TEST_BASE("github") "/users/alice/repos"));
        CHECK(json_object_get(rp.body, "followers_url") && json_object_get(rp.body, "hireable"));
        req(t, &rp, "GET", "/users/ALICE", NULL, NULL);
        CHECK(rp.status == 200 && streq(jps(rp.body, "/login"), "alice"));
        req(t, &rp, "GET", "/users/nobody-here", NULL, NULL);
        CHECK(rp.status == 404 && streq(jps(rp.body, "/message"), "Not Found"));
        req(t, &rp, "GET", "/orgs/acme", NULL, NULL);
        CHECK(rp.status == 200 && streq(rp.tool, "get_org") &&
              streq(jps(rp.body, "/type"), "Organization") && streq(jps(rp.body, "/name"), "Acme"));
        CHECK(streq(jps(rp.body, "/repos_url"), TWIN_TEST_BASE("github") "/orgs/acme/repos"));
        CHECK(jpi(rp.body, "/public_repos") >= 1);
        req(t, &rp, "GET", "/orgs/alice", NULL, NULL); /* a user is not an organisation */
        CHECK(rp.status == 404);

        req(t, &rp, "GET", "/rate_limit", NULL, NULL);
        CHECK(rp.status == 200 && jpi(rp.body, "/resources/core/limit") == 5000 &&
              jpi(rp.body, "/rate/remaining") == 5000 &&
              jpi(rp.body, "/resources/search/limit") == 30);
        CHECK(streq(jps(rp.headers, "/X-RateLimit-Limit"), "5000") &&
              streq(jps(rp.headers, "/X-RateLimit-Resource"), "core"));
        req(t, &rp, "GET", "/search/issues", "q=repo:acme/api", NULL);
        CHECK(streq(jps(rp.headers, "/X-RateLimit-Limit"), "30") &&
              streq(jps(rp.headers, "/X-RateLimit-Resource"), "search"));

        /* ETag: the same representation the same tag; If-None-Match of it is 304, no body */
        req(t, &rp, "GET", "/repos/acme/api/issues/1", NULL, NULL);
        char etag[64];
        snprintf(etag, sizeof(etag), "%s", strempty(jps(rp.headers, "/ETag")));
        CHECK(startswith(etag, "W/\"") && strlen(etag) == 44);
        get_h(t, &rp, "/repos/acme/api/issues/1", "if-none-match", etag, NULL);
        CHECK(rp.status == 304 && !rp.body && streq(jps(rp.headers, "/ETag"), etag));
        get_h(t, &rp, "/repos/acme/api/issues/1", "if-none-match", "\"other\", W/\"x\"", NULL);
        CHECK(rp.status == 200 && rp.body);
        req(t, &rp, "POST", "/repos/acme/api/issues/1/comments", NULL, "{\"body\":\"changed\"}");
        CHECK(rp.status == 201 && !jps(rp.headers, "/ETag")); /* a write has no ETag */
        get_h(t, &rp, "/repos/acme/api/issues/1", "if-none-match", etag, NULL);
        CHECK(rp.status == 200 && !streq(jps(rp.headers, "/ETag"), etag)); /* comments: 1 */
        twin_reply_done(&rp);
        twin_free(t);
}

int main(void)
{
        test_users_orgs_rate_limit();
        test_walkthrough_rest();
        test_walkthrough_mcp();
        test_reads();
        test_bad_inputs();
        test_writes();
        test_pagination();
        test_errors_and_auth();
        test_private_repo();
        test_seeds();
        test_issue_filters();
        test_issue_routes_on_pulls();
        test_labels_milestones();
        test_search_issues();
        test_issue_routes_refuse();
        return check_finish();
}
