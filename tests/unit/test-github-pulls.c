/* SPDX-License-Identifier: MIT */
/*
 * The GitHub twin's pull requests, reviews, statuses and check runs: the line diff against
 * git's own output, the three-way merge, the combined-status rule, the .diff text reply
 * over REST and MCP, refusals that leave the world alone, tape deltas, merges held back by
 * required status checks (a pull request's seeded statuses, a seeded branch protection),
 * and the seed's pull request fields with their path-naming refusals.
 */
#include "common/json-util.h"
#include "pods/github/github.h"
#include "pods/twin/kind.h"
#include "tests/unit/check.h"
#include "tests/unit/twin-test-util.h"

static void req(Twin *t, TwinReply *rp, const char *method, const char *path, const char *body)
{
        twin_test_req(t, rp, method, path, NULL, "application/json", body);
}

static void diff_is(const char *old, const char *new, const char *want, size_t adds, size_t dels)
{
        _cleanup_free_ char *patch = NULL;
        size_t a = 99, d = 99;
        CHECK_OK(gh_line_diff(old, new, &patch, &a, &d));
        CHECK(patch && streq(patch, want));
        if (patch && !streq(patch, want))
                fprintf(stderr, "diff:\n%s\nwant:\n%s\n", patch, want);
        CHECK(a == adds && d == dels);
}

/* Expected outputs are `git diff` (git 2.39) on the same files. */
static void test_line_diff(void)
{
        diff_is("a\nb\n", "a\nb\n", "", 0, 0);
        diff_is(NULL, "x\ny\n", "@@ -0,0 +1,2 @@\n+x\n+y\n", 2, 0);
        diff_is("x\n", NULL, "@@ -1 +0,0 @@\n-x\n", 0, 1);
        diff_is("a\nb", "a\nc\n", "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n", 1,
                1);
        /* two changes ten lines apart: two hunks, the second headed by the function above */
        diff_is("def f():\n 1\n 2\n 3\n 4\n 5\n 6\n 7\n 8\n 9\n10\n11\n",
                "def f():\n 1\n X\n 3\n 4\n 5\n 6\n 7\n 8\n 9\n10\n Y\n",
                "@@ -1,6 +1,6 @@\n def f():\n  1\n- 2\n+ X\n  3\n  4\n  5\n"
                "@@ -9,4 +9,4 @@ def f():\n  8\n  9\n 10\n-11\n+ Y\n",
                2, 2);
}

static void test_tree_merge(void)
{
        _cleanup_json_ json_t *base = json_pack("{s:s, s:s}", "a", "1", "b", "1");
        _cleanup_json_ json_t *ours = json_pack("{s:s, s:s}", "a", "2", "b", "1");
        _cleanup_json_ json_t *theirs = json_pack("{s:s, s:s, s:s}", "a", "1", "b", "3", "c", "n");
        _cleanup_json_ json_t *out = NULL, *clash = json_pack("{s:s}", "a", "9");
        CHECK(gh_tree_merge(base, ours, theirs, &out) == 0);
        CHECK(streq_ptr(jps(out, "/a"), "2") && streq_ptr(jps(out, "/b"), "3") &&
              streq_ptr(jps(out, "/c"), "n"));
        json_t *none = NULL;
        CHECK(gh_tree_merge(base, ours, clash, &none) == 1); /* a changed on both sides */
        CHECK(!none);
}

static json_t *pull_row(Twin *t, int n)
{
        return gh_number_find(jp(twin_world(t), "/repositories/0"), "pull_requests", n, NULL);
}

/* The seeded PR of sandbox-images/github/seeds/pr-review.json and its CI. */
static void test_seeded_pull(void)
{
        Twin *t = twin_test_new("github", "pr-review");
        TwinReply rp = {};
        json_t *pr = pull_row(t, 2);
        CHECK(streq_ptr(jps(pr, "/user"), "dev-alice"));
        CHECK(streq_ptr(jps(pr, "/head"), "feature/refunds"));
        CHECK(jps(pr, "/head_sha") && strlen(jps(pr, "/head_sha")) == 40);
        CHECK(streq_ptr(jps(pr, "/reviews/0/state"), "CHANGES_REQUESTED"));
        /* PR 3's head branch is named by no file: it starts at main */
        json_t *repo = jp(twin_world(t), "/repositories/0");
        CHECK(streq_ptr(gh_ref_sha(repo, "docs/tweak"), gh_ref_sha(repo, "main")));

        req(t, &rp, "GET", "/repos/acme/payments/pulls/2", NULL);
        CHECK(rp.status == 200);
        CHECK(streq_ptr(jps(rp.body, "/mergeable_state"),
                        "blocked")); /* its seeded ci/lint fails */
        CHECK(jpi(rp.body, "/changed_files") == 2 && jpi(rp.body, "/additions") == 9);
        CHECK(!rp.state_mutation);

        const char *head = jps(pr, "/head_sha");
        CHECK(streq_ptr(gh_combined_state(repo, head), "failure"));
        /* no statuses at all reads as pending (GitHub's combined-status rule) */
        CHECK(streq_ptr(gh_combined_state(repo, gh_ref_sha(repo, "main")), "pending"));
        twin_reply_done(&rp);
        twin_free(t);
}

/* GET .../pulls?head=: "owner:branch" filters; a bare branch is ignored, as on github.com. */
static void test_list_head_filter(void)
{
        Twin *t = twin_test_new("github", "pr-review");
        TwinReply rp = {};
        twin_test_req(t, &rp, "GET", "/repos/acme/payments/pulls", "head=acme:feature/refunds",
                      NULL, NULL);
        CHECK(rp.status == 200 && json_array_size(rp.body) == 1 && jpi(rp.body, "/0/number") == 2);
        twin_test_req(t, &rp, "GET", "/repos/acme/payments/pulls", "head=ACME:docs/tweak", NULL,
                      NULL);
        CHECK(json_array_size(rp.body) == 1 && jpi(rp.body, "/0/number") == 3);
        twin_test_req(t, &rp, "GET", "/repos/acme/payments/pulls", "head=acm:docs/tweak", NULL,
                      NULL);
        CHECK(rp.status == 200 && json_array_size(rp.body) == 0);
        twin_test_req(t, &rp, "GET", "/repos/acme/payments/pulls", "head=docs/tweak", NULL, NULL);
        CHECK(rp.status == 200 && json_array_size(rp.body) == 2);
        twin_reply_done(&rp);
        twin_free(t);
}

/* GET .../pulls/{n} with Accept: application/vnd.github.diff, and pull_request_read get_diff. */
static void test_diff_reply(void)
{
        Twin *t = twin_test_new("github", "pr-review");
        TwinReply rp = {};
        char base[128];
        snprintf(base, sizeof(base), TWIN_TEST_BASE("github"));
        _cleanup_json_ json_t *headers =
                json_pack("{s:s}", "accept", "application/vnd.github.v3.diff");
        TwinRequest rq = {.method = "GET",
                          .path = "/repos/acme/payments/pulls/2",
                          .query = "",
                          .headers = headers,
                          .base_url = base};
        twin_handle(t, &rq, &rp);
        CHECK(rp.status == 200);
        const char *text = twin_reply_text(rp.headers, rp.body);
        CHECK(text && startswith(text, "diff --git a/src/charge.py b/src/charge.py\nindex "));
        CHECK(text && strstr(text, "+++ b/tests/test_refund.py\n@@ -0,0 +1,5 @@\n"));
        CHECK(streq_ptr(rp.tool, "pull_request_read"));
        _cleanup_free_ char *rest = text ? strdup(text) : NULL;

        /* Accept: application/vnd.github.patch: git format-patch of each commit */
        json_object_set_new(headers, "accept", json_string("application/vnd.github.patch"));
        twin_reply_done(&rp);
        twin_handle(t, &rq, &rp);
        const char *patch = twin_reply_text(rp.headers, rp.body);
        CHECK(rp.status == 200 && patch && startswith(patch, "From "));
        CHECK(patch && strstr(patch, " Mon Sep 17 00:00:00 2001\nFrom: "));
        CHECK(patch && strstr(patch, "\n---\n src/charge.py        | 4 ++++\n"
                                     " tests/test_refund.py | 5 +++++\n"
                                     " 2 files changed, 9 insertions(+)\n"
                                     " create mode 100644 tests/test_refund.py\n\n"
                                     "diff --git a/src/charge.py b/src/charge.py\n"));

        /* a comparison and a commit honour the same media types as github.com */
        json_object_set_new(headers, "accept", json_string("application/vnd.github.diff"));
        rq.path = "/repos/acme/payments/compare/main...feature/refunds";
        twin_reply_done(&rp);
        twin_handle(t, &rq, &rp);
        CHECK(rp.status == 200 && streq_ptr(rp.tool, "compare_commits"));
        CHECK(streq_ptr(jps(rp.headers, "/Content-Type"),
                        "application/vnd.github.diff; charset=utf-8"));
        CHECK(streq_ptr(twin_reply_text(rp.headers, rp.body), rest));
        json_object_set_new(headers, "accept", json_string("application/vnd.github.v3.patch"));
        twin_reply_done(&rp);
        twin_handle(t, &rq, &rp);
        const char *cpatch = twin_reply_text(rp.headers, rp.body);
        CHECK(rp.status == 200 && cpatch && startswith(cpatch, "From "));
        CHECK(cpatch && strstr(cpatch, "\ndiff --git a/src/charge.py b/src/charge.py\n"));
        rq.path = "/repos/acme/payments/commits/feature/refunds";
        twin_reply_done(&rp);
        twin_handle(t, &rq, &rp);
        const char *one = twin_reply_text(rp.headers, rp.body);
        CHECK(rp.status == 200 && streq_ptr(rp.tool, "get_commit"));
        CHECK(one && startswith(one, "From ") && strstr(one, "Subject: [PATCH] "));
        json_object_set_new(headers, "accept", json_string("application/vnd.github.diff"));
        twin_reply_done(&rp);
        twin_handle(t, &rq, &rp);
        one = twin_reply_text(rp.headers, rp.body);
        CHECK(rp.status == 200 && one && startswith(one, "diff --git a/"));
        CHECK(streq_ptr(jps(rp.headers, "/Content-Type"),
                        "application/vnd.github.diff; charset=utf-8"));

        twin_test_call(t, &rp, "pull_request_read",
                       "{\"method\":\"get_diff\",\"owner\":\"acme\",\"repo\":\"payments\","
                       "\"pullNumber\":2}");
        CHECK(rp.status == 200);
        CHECK(streq_ptr(jps(rp.body, "/result/content/0/text"), rest));
        CHECK(!jp(rp.body, "/result/isError") || !json_is_true(jp(rp.body, "/result/isError")));
        twin_reply_done(&rp);
        twin_free(t);
}

/* Refusals change nothing: same world after each. */
static void test_refusals(void)
{
        Twin *t = twin_test_new("github", "pr-review");
        TwinReply rp = {};
        _cleanup_json_ json_t *w0 = json_deep_copy(twin_world(t));
        static const struct {
                const char *method, *path, *body;
                int status;
        } cases[] = {
                {"GET", "/repos/acme/payments/pulls/abc", NULL, 404},
                {"GET", "/repos/acme/payments/pulls/99", NULL, 404},
                {"PUT", "/repos/acme/payments/pulls/2/merge",
                 "{\"sha\":\"0000000000000000000000000000000000000000\"}", 409},
                {"PUT", "/repos/acme/payments/pulls/2/merge", "{\"merge_method\":\"octopus\"}",
                 422},
                {"POST", "/repos/acme/payments/pulls/2/reviews", "{\"event\":\"LGTM\"}", 422},
                {"POST", "/repos/acme/payments/pulls/2/reviews", "{\"event\":\"COMMENT\"}", 422},
                {"POST", "/repos/acme/payments/pulls",
                 "{\"title\":\"t\",\"head\":\"feature/refunds\",\"base\":\"main\"}", 422},
                {"POST", "/repos/acme/payments/pulls",
                 "{\"title\":\"t\",\"head\":\"docs/tweak\",\"base\":\"nope\"}", 422},
                {"POST", "/repos/acme/payments/pulls", "{\"head\":\"docs/tweak\"}", 422},
                {"PATCH", "/repos/acme/payments/pulls/2", "{\"state\":\"merged\"}", 422},
                {"POST", "/repos/acme/payments/statuses/main", "{\"state\":\"ok\"}", 422},
                {"POST", "/repos/acme/payments/statuses/0123456789abcdef",
                 "{\"state\":\"success\"}", 422},
                {"POST", "/repos/acme/payments/check-runs",
                 "{\"name\":\"x\",\"head_sha\":\"main\",\"status\":\"completed\"}", 422},
                {"PATCH", "/repos/acme/payments/check-runs/999999", "{}", 404},
                {"POST", "/repos/acme/payments/pulls/2/comments",
                 "{\"body\":\"b\",\"path\":\"src/charge.py\",\"line\":1}", 422},
                {"POST", "/repos/acme/payments/pulls/2/requested_reviewers",
                 "{\"reviewers\":[\"dev-alice\"]}", 422},
                {"POST", "/repos/acme/payments/pulls/2/requested_reviewers",
                 "{\"reviewers\":[\"stranger\"]}", 422},
                {"PUT", "/repos/acme/payments/pulls/2/update-branch",
                 "{\"expected_head_sha\":\"abc\"}", 422},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                req(t, &rp, cases[i].method, cases[i].path, cases[i].body);
                CHECK(rp.status == cases[i].status);
                if (rp.status != cases[i].status)
                        fprintf(stderr, "case %zu: %s %s → %d\n", i, cases[i].method, cases[i].path,
                                rp.status);
                CHECK(!rp.state_mutation);
                CHECK(jps(rp.body, "/message") != NULL);
                CHECK(json_equal(w0, twin_world(t)));
                if (!json_equal(w0, twin_world(t)))
                        fprintf(stderr, "case %zu changed the world\n", i);
        }
        /* GitHub's length limits: a 257-character title, a 141-character status description */
        char body[512];
        snprintf(body, sizeof(body), "{\"title\":\"%0257d\"}", 0);
        req(t, &rp, "PATCH", "/repos/acme/payments/pulls/2", body);
        CHECK(rp.status == 422 && !rp.state_mutation);
        CHECK(streq_ptr(jps(rp.body, "/errors/0/message"),
                        "title is too long (maximum is 256 characters)"));
        snprintf(body, sizeof(body), "{\"state\":\"success\",\"description\":\"%0141d\"}", 0);
        req(t, &rp, "POST", "/repos/acme/payments/statuses/main", body);
        CHECK(rp.status == 422);
        CHECK(json_equal(w0, twin_world(t)));
        twin_reply_done(&rp);
        twin_free(t);
}

/* A merge moves main, closes the PR and tapes the row before and after. */
static void test_merge_tape(void)
{
        Twin *t = twin_test_new("github", "pr-review");
        TwinReply rp = {};
        json_t *repo = jp(twin_world(t), "/repositories/0");
        _cleanup_free_ char *head = strdup(jps(pull_row(t, 2), "/head_sha"));
        _cleanup_free_ char *main0 = strdup(gh_ref_sha(repo, "main"));
        char body[128], path[160];
        snprintf(body, sizeof(body), "{\"sha\":\"%s\"}", head);
        /* its seeded ci/lint fails on the head: the merge is held back, nothing changes */
        _cleanup_json_ json_t *w0 = json_deep_copy(twin_world(t));
        req(t, &rp, "PUT", "/repos/acme/payments/pulls/2/merge", body);
        CHECK(rp.status == 405 && !rp.state_mutation && streq(rp.tool, "merge_pull_request"));
        CHECK(streq_ptr(jps(rp.body, "/message"), "Required status check \"ci/lint\" is failing."));
        CHECK(json_equal(w0, twin_world(t)));
        /* ci/lint fixed and reported green on the same head: the merge goes through */
        snprintf(path, sizeof(path), "/repos/acme/payments/statuses/%s", head);
        req(t, &rp, "POST", path, "{\"state\":\"success\",\"context\":\"ci/lint\"}");
        CHECK(rp.status == 201);
        req(t, &rp, "PUT", "/repos/acme/payments/pulls/2/merge", body);
        CHECK(rp.status == 200 && json_is_true(jp(rp.body, "/merged")));
        CHECK(rp.state_mutation);
        CHECK(json_is_false(jp(rp.state_delta, "/before/merged")));
        CHECK(json_is_true(jp(rp.state_delta, "/after/merged")));
        CHECK(streq_ptr(jps(rp.state_delta, "/after/state"), "closed"));
        const char *merge = jps(rp.body, "/sha");
        CHECK(streq_ptr(gh_ref_sha(repo, "main"), merge));
        json_t *cm = gh_commit_find(repo, merge);
        CHECK(json_array_size(json_object_get(cm, "parents")) == 2);
        CHECK(streq_ptr(jps(cm, "/parents/0"), main0) && streq_ptr(jps(cm, "/parents/1"), head));
        CHECK(json_object_get(json_object_get(cm, "tree"), "tests/test_refund.py"));
        /* merged: a second merge is 405, the PR reads merged */
        req(t, &rp, "PUT", "/repos/acme/payments/pulls/2/merge", "{}");
        CHECK(rp.status == 405 && !rp.state_mutation);
        req(t, &rp, "GET", "/repos/acme/payments/pulls/2", NULL);
        CHECK(json_is_true(jp(rp.body, "/merged")) &&
              streq_ptr(jps(rp.body, "/merged_by/login"), "pome-agent"));
        twin_reply_done(&rp);
        twin_free(t);
}

static void seed_refused(const char *pr_json, const char *want)
{
        char text[2048];
        snprintf(text, sizeof(text),
                 "{\"_meta\":{\"x\":1},\"repositories\":[{\"owner\":\"acme\",\"name\":\"r\","
                 "\"files\":[{\"path\":\"a\",\"content\":\"1\\n\"},{\"path\":\"a\",\"content\":"
                 "\"2\\n\",\"branch\":\"f\"}],\"pull_requests\":[%s]}]}",
                 pr_json);
        json_error_t e;
        _cleanup_json_ json_t *seed = json_loads(text, 0, &e);
        CHECK(seed);
        char err[256] = "";
        Twin *t = NULL;
        int r = twin_new(&twin_kind_github, seed, &t, err, sizeof(err));
        if (!want) {
                CHECK_OK(r);
                twin_free(t);
                return;
        }
        CHECK(r == -EINVAL && strstr(err, want));
        if (!strstr(err, want))
                fprintf(stderr, "seed error: %s (want %s)\n", err, want);
}

/* A seeded merged pull request has its merge commit on base, as on github.com. */
static void test_seed_merged(void)
{
        _cleanup_json_ json_t *seed = json_loads(
                "{\"repositories\":[{\"owner\":\"acme\",\"name\":\"r\",\"files\":["
                "{\"path\":\"a\",\"content\":\"1\\n\"},{\"path\":\"b\",\"content\":"
                "\"new\\n\",\"branch\":\"f\"}],\"pull_requests\":[{\"title\":\"t\","
                "\"head\":\"f\",\"state\":\"merged\",\"merged_at\":\"2026-02-01T10:00:00Z\"}]}]}",
                0, NULL);
        CHECK(seed);
        Twin *t = twin_test_from(&twin_kind_github, seed);
        json_t *repo = jp(twin_world(t), "/repositories/0");
        json_t *pr = pull_row(t, 1);
        CHECK(json_is_true(jp(pr, "/merged")) && streq_ptr(jps(pr, "/state"), "closed"));
        const char *mc = jps(pr, "/merge_commit_sha");
        CHECK(mc && streq_ptr(gh_ref_sha(repo, "main"), mc));
        CHECK(streq_ptr(json_string_value(json_object_get(gh_tree_at(repo, "main"), "b")),
                        "new\n"));
        CHECK(streq_ptr(jps(gh_commit_find(repo, mc), "/author/date"), "2026-02-01T10:00:00Z"));
        twin_free(t);
}

static void test_seed(void)
{
        seed_refused("{\"title\":\"t\",\"head\":\"f\",\"statuses\":[{\"context\":\"ci\","
                     "\"state\":\"success\"}],\"check_runs\":[{\"name\":\"b\",\"conclusion\":"
                     "\"success\"}],\"reviews\":[{\"user\":\"bob\",\"state\":\"APPROVE\"}]}",
                     NULL);
        seed_refused("{\"title\":\"t\",\"head\":\"f\",\"statusez\":[]}",
                     "repositories[0].pull_requests[0].statusez: unknown key");
        seed_refused("{\"title\":\"t\",\"head\":\"f\",\"statuses\":[{\"state\":\"success\","
                     "\"colour\":1}]}",
                     "repositories[0].pull_requests[0].statuses[0].colour: unknown key");
        seed_refused("{\"title\":\"t\",\"head\":\"f\",\"statuses\":[{\"state\":\"green\"}]}",
                     "repositories[0].pull_requests[0].statuses[0].state: must be");
        seed_refused("{\"title\":\"t\",\"head\":\"f\",\"check_runs\":[{\"name\":\"b\","
                     "\"status\":\"completed\"}]}",
                     "repositories[0].pull_requests[0].check_runs[0]: a completed run needs");
        seed_refused("{\"title\":\"t\",\"head\":\"f\",\"check_runs\":[{\"name\":\"b\","
                     "\"output\":{\"title\":\"x\",\"sumary\":\"y\"}}]}",
                     "repositories[0].pull_requests[0].check_runs[0].output.sumary: unknown key");
        seed_refused("{\"title\":\"t\",\"head\":\"f\",\"base\":\"develop\"}",
                     "repositories[0].pull_requests[0].base: no branch \"develop\"");
        seed_refused("{\"title\":\"t\",\"head\":\"f\",\"reviews\":[{\"user\":\"bob\","
                     "\"state\":\"LOVED\"}]}",
                     "repositories[0].pull_requests[0].reviews[0].state: must be");
        seed_refused("{\"title\":\"t\",\"head\":\"main\"}",
                     "repositories[0].pull_requests[0].head: must differ from base");
}

/* A seed of acme/api: src/cart.ts on main and on branch fix, the pull request pr (JSON) from
 * fix, and main's entry in branches[] (JSON, "" for none). */
static Twin *gated_twin(const char *pr, const char *main_branch)
{
        char text[2048];
        snprintf(text, sizeof(text),
                 "{\"users\":[{\"login\":\"alice\",\"type\":\"User\"}],\"repositories\":[{"
                 "\"owner\":\"acme\",\"name\":\"api\",\"collaborators\":[\"alice\"],\"files\":["
                 "{\"path\":\"src/cart.ts\",\"content\":\"1\\n\"},{\"path\":\"src/cart.ts\","
                 "\"content\":\"2\\n\",\"branch\":\"fix\"}],\"branches\":[%s],"
                 "\"pull_requests\":[%s]}]}",
                 main_branch, pr);
        json_error_t e;
        _cleanup_json_ json_t *seed = json_loads(text, 0, &e);
        if (!seed) {
                fprintf(stderr, "gated seed: %s\n", e.text);
                exit(1);
        }
        return twin_test_from(&twin_kind_github, seed);
}

/* Sets context to state on pull request 1's head. */
static void set_status(Twin *t, TwinReply *rp, const char *context, const char *state)
{
        char path[160], body[160];
        snprintf(path, sizeof(path), "/repos/acme/api/statuses/%s",
                 jps(pull_row(t, 1), "/head_sha"));
        snprintf(body, sizeof(body), "{\"state\":\"%s\",\"context\":\"%s\"}", state, context);
        req(t, rp, "POST", path, body);
        CHECK(rp->status == 201);
}

/* A refused merge: 405 with GitHub's message, the tape's row changing nothing. */
static void merge_refused(Twin *t, TwinReply *rp, const char *message)
{
        _cleanup_json_ json_t *w = json_deep_copy(twin_world(t));
        req(t, rp, "PUT", "/repos/acme/api/pulls/1/merge", "{}");
        CHECK(rp->status == 405 && !rp->state_mutation && !rp->state_delta);
        if (!streq_ptr(jps(rp->body, "/message"), message)) {
                fprintf(stderr, "merge refused with \"%s\", wanted \"%s\"\n",
                        strempty(jps(rp->body, "/message")), message);
                check_failures++;
        }
        CHECK(streq_ptr(jps(rp->body, "/documentation_url"),
                        "https://docs.github.com/articles/about-protected-branches"));
        CHECK(json_equal(w, twin_world(t)));
}

/* Merges gated by required status checks: the contexts a seed's pull request statuses name
 * (hosted Pome's task 18), and a seeded base branch protection (GitHub's rule). */
static void test_required_checks(void)
{
        TwinReply rp = {};
        /* hosted Pome's task 18: ci/test failing on the head holds the merge back */
        Twin *t = gated_twin("{\"number\":1,\"title\":\"Add bulk-order discount\",\"head\":\"fix\","
                             "\"base\":\"main\",\"author\":\"alice\",\"statuses\":[{\"context\":"
                             "\"ci/test\",\"state\":\"failure\",\"description\":\"1 test "
                             "failing\"}]}",
                             "");
        merge_refused(t, &rp, "Required status check \"ci/test\" is failing.");
        req(t, &rp, "GET", "/repos/acme/api/pulls/1", NULL);
        CHECK(streq_ptr(jps(rp.body, "/mergeable_state"), "blocked"));
        /* the MCP tool: the same action, the same refusal */
        twin_test_call(t, &rp, "merge_pull_request",
                       "{\"owner\":\"acme\",\"repo\":\"api\",\"pullNumber\":1}");
        CHECK(json_is_true(jp(rp.body, "/result/isError")) && !rp.state_mutation &&
              strstr(jps(rp.body, "/result/content/0/text"), "Required status check"));
        /* an error is failing too; a pending one (CI running again) does not hold it */
        set_status(t, &rp, "ci/test", "error");
        merge_refused(t, &rp, "Required status check \"ci/test\" is failing.");
        /* another context the seed never named does not gate */
        set_status(t, &rp, "ci/test", "success");
        set_status(t, &rp, "lint", "failure");
        req(t, &rp, "PUT", "/repos/acme/api/pulls/1/merge", "{}");
        CHECK(rp.status == 200 && json_is_true(jp(rp.body, "/merged")) && rp.state_mutation);
        CHECK(json_is_true(jp(pull_row(t, 1), "/merged")));
        twin_free(t);

        t = gated_twin("{\"number\":1,\"title\":\"t\",\"head\":\"fix\",\"statuses\":["
                       "{\"context\":\"ci/test\",\"state\":\"failure\"}]}",
                       "");
        set_status(t, &rp, "ci/test", "pending");
        req(t, &rp, "PUT", "/repos/acme/api/pulls/1/merge", "{}");
        CHECK(rp.status == 200);
        twin_free(t);

        /* a seed that marks nothing stays ungated */
        t = gated_twin("{\"number\":1,\"title\":\"t\",\"head\":\"fix\"}", "");
        CHECK(!jp(pull_row(t, 1), "/required_contexts"));
        req(t, &rp, "PUT", "/repos/acme/api/pulls/1/merge", "{}");
        CHECK(rp.status == 200);
        twin_free(t);

        /* main's protection in the seed: GitHub's rule, the check must be success */
        t = gated_twin("{\"number\":1,\"title\":\"t\",\"head\":\"fix\"}",
                       "{\"name\":\"main\",\"protection\":{\"required_status_checks\":{\"strict\":"
                       "false,\"contexts\":[\"ci/build\"]},\"enforce_admins\":true,"
                       "\"required_pull_request_reviews\":null}}");
        req(t, &rp, "GET", "/repos/acme/api/branches/main/protection", NULL);
        CHECK(rp.status == 200 &&
              streq_ptr(jps(rp.body, "/required_status_checks/contexts/0"), "ci/build") &&
              json_is_true(jp(rp.body, "/enforce_admins/enabled")));
        merge_refused(t, &rp, "Required status check \"ci/build\" is expected.");
        set_status(t, &rp, "ci/build", "pending");
        merge_refused(t, &rp, "Required status check \"ci/build\" is expected.");
        set_status(t, &rp, "ci/build", "failure");
        merge_refused(t, &rp, "Required status check \"ci/build\" is failing.");
        set_status(t, &rp, "ci/build", "success");
        req(t, &rp, "PUT", "/repos/acme/api/pulls/1/merge", "{}");
        CHECK(rp.status == 200 && json_is_true(jp(rp.body, "/merged")));
        twin_free(t);

        /* the newer checks[] form, and an admin passes when enforce_admins is off */
        t = gated_twin("{\"number\":1,\"title\":\"t\",\"head\":\"fix\"}",
                       "{\"name\":\"main\",\"protected\":true,\"protection\":{"
                       "\"required_status_checks\":{\"checks\":[{\"context\":\"ci/e2e\"}]}}}");
        merge_refused(t, &rp, "Required status check \"ci/e2e\" is expected.");
        json_object_set_new(twin_world(t), "viewer", json_string("acme"));
        req(t, &rp, "PUT", "/repos/acme/api/pulls/1/merge", "{}");
        CHECK(rp.status == 200);
        twin_free(t);
        twin_reply_done(&rp);

        /* the seed's protection is checked as strictly as the rest */
        static const struct {
                const char *branch, *want;
        } bad[] = {
                {"{\"name\":\"main\",\"protection\":true}",
                 "repositories[0].branches[0].protection: must be an object"},
                {"{\"name\":\"main\",\"protected\":false,\"protection\":{}}",
                 "repositories[0].branches[0].protected: a branch with a protection is protected"},
                {"{\"name\":\"main\",\"protection\":{\"required_status_checks\":{\"contexts\":"
                 "[1]}}}",
                 "repositories[0].branches[0].protection.required_status_checks.contexts[0]"},
                {"{\"name\":\"main\",\"protection\":{\"required_checks\":{}}}",
                 "repositories[0].branches[0].protection.required_checks: unknown key"},
                {"{\"name\":\"main\",\"protection\":{\"required_pull_request_reviews\":{"
                 "\"required_approving_review_count\":9}}}",
                 "repositories[0].branches[0].protection.required_pull_request_reviews: must be"},
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char text[1024], err[256] = "";
                snprintf(text, sizeof(text),
                         "{\"repositories\":[{\"owner\":\"acme\",\"name\":\"api\",\"branches\":"
                         "[%s]}]}",
                         bad[i].branch);
                _cleanup_json_ json_t *seed = json_loads(text, 0, NULL);
                Twin *x = NULL;
                CHECK(seed && twin_new(&twin_kind_github, seed, &x, err, sizeof(err)) == -EINVAL);
                if (!strstr(err, bad[i].want)) {
                        fprintf(stderr, "protection seed %zu: \"%s\" (want %s)\n", i, err,
                                bad[i].want);
                        check_failures++;
                }
                twin_free(x);
        }
}

int main(void)
{
        test_line_diff();
        test_tree_merge();
        test_seeded_pull();
        test_diff_reply();
        test_list_head_filter();
        test_refusals();
        test_merge_tape();
        test_seed();
        test_seed_merged();
        test_required_checks();
        return check_finish();
}
