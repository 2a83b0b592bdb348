/* SPDX-License-Identifier: MIT */
/*
 * GitHub's checks (CONTRACT.md "Checks"), read against the GitHub twin's world
 * (pods/github): repositories[] {owner, name, labels[{name}], issues[{number, state,
 * labels[names], assignees[logins], comments[{body}]}], pull_requests[{number, state, merged,
 * comments[], reviews[{state}]}], branches[{name, sha}], commits[{sha, tree{path: content}}],
 * statuses[{context, state, sha}]}. Semantics follow hosted Pome's declarations; where this
 * file differs it says so at the check.
 */
#include <inttypes.h>
#include <strings.h>

#include "common/json-util.h"
#include "pods/grade/check.h"

/* ---------------------------------------------------------------- resolving */

/* The repository "owner/name" of world (case-insensitive, as github.com resolves it) and its
 * index, or NULL. */
static json_t *repo_find(json_t *world, const char *full, size_t *ret_idx)
{
        const char *slash = strchr(full, '/');
        if (!slash)
                return NULL;
        size_t on = (size_t)(slash - full), i;
        json_t *r;
        json_array_foreach (json_object_get(world, "repositories"), i, r) {
                const char *owner = json_get_str(r, "owner"), *name = json_get_str(r, "name");
                if (owner && name && strlen(owner) == on && strncasecmp(owner, full, on) == 0 &&
                    strcasecmp(name, slash + 1) == 0) {
                        *ret_idx = i;
                        return r;
                }
        }
        return NULL;
}

/* The row numbered number of repo's list ("issues", "pull_requests") and its index, or NULL. */
static json_t *numbered_find(json_t *repo, const char *list, int64_t number, size_t *ret_idx)
{
        size_t i;
        json_t *x;
        json_array_foreach (json_object_get(repo, list), i, x) {
                if (json_is_integer(json_object_get(x, "number")) &&
                    json_integer_value(json_object_get(x, "number")) == number) {
                        *ret_idx = i;
                        return x;
                }
        }
        return NULL;
}

static bool strv_has_fold(const json_t *a, const char *s)
{
        size_t i;
        json_t *v;
        json_array_foreach (a, i, v)
                if (json_is_string(v) && strcasecmp(json_string_value(v), s) == 0)
                        return true;
        return false;
}

/* "[bug, ui]": the strings of a, for a reason. New string or NULL. */
static char *strv_list(const json_t *a, const char *key)
{
        size_t cap = 256, len = 0, i;
        char *out = malloc(cap);
        if (!out)
                return NULL;
        out[len++] = '[';
        json_t *v;
        json_array_foreach (a, i, v) {
                const char *s = key ? json_get_str(v, key) : json_string_value(v);
                size_t need = len + strlen(strempty(s)) + 4;
                if (need > cap) {
                        while (cap < need)
                                cap *= 2;
                        char *p = realloc(out, cap);
                        if (!p) {
                                free(out);
                                return NULL;
                        }
                        out = p;
                }
                len += (size_t)sprintf(out + len, "%s%s", i ? ", " : "", strempty(s));
        }
        out[len++] = ']';
        out[len] = 0;
        return out;
}

/*
 * Resolves the repo argument of in against world: 1 with the repo and its index, or 0 with o
 * failed, saying which repository is missing from where. 0 is a verdict, not an error.
 */
static int need_repo(const GradeCheckInput *in, json_t *world, const char *where, GradeOutcome *o,
                     json_t **ret, size_t *ret_idx)
{
        const char *repo = grade_arg_str(in, "repo");
        *ret = repo_find(world, repo, ret_idx);
        if (*ret)
                return 1;
        int r = grade_outcome_set(o, GRADE_FAILED, "there is no repository %s in the %s", repo,
                                  where);
        if (r >= 0 && world == in->final && json_object_get(world, "repositories"))
                r = grade_cite_path(o, "/repositories");
        return r < 0 ? r : 0;
}

/* need_repo, then the issue or pull request numbered by arg in list. */
static int need_numbered(const GradeCheckInput *in, const char *list, const char *arg,
                         GradeOutcome *o, json_t **ret, size_t *ret_repo, size_t *ret_idx)
{
        json_t *repo;
        int r = need_repo(in, in->final, "final state", o, &repo, ret_repo);
        if (r <= 0)
                return r;
        int64_t number = grade_arg_int(in, arg);
        *ret = numbered_find(repo, list, number, ret_idx);
        if (*ret)
                return 1;
        bool pull = streq(list, "pull_requests");
        r = grade_outcome_set(o, GRADE_FAILED, "%s #%" PRId64 " does not exist in %s (%zu %s)",
                              pull ? "pull request" : "issue", number, grade_arg_str(in, "repo"),
                              json_array_size(json_object_get(repo, list)),
                              pull ? "pull request(s)" : "issue(s)");
        if (r >= 0 && json_object_get(repo, list))
                r = grade_cite_path(o, "/repositories/%zu/%s", *ret_repo, list);
        return r < 0 ? r : 0;
}

/* ---------------------------------------------------------------- issues */

static int issue_exists(const GradeCheckInput *in, GradeOutcome *o)
{
        json_t *issue;
        size_t ri, ii;
        int r = need_numbered(in, "issues", "issue", o, &issue, &ri, &ii);
        if (r <= 0)
                return r;
        if ((r = grade_outcome_set(o, GRADE_PASSED, "issue #%" PRId64 " exists in %s",
                                   grade_arg_int(in, "issue"), grade_arg_str(in, "repo"))) < 0)
                return r;
        return grade_cite_path(o, "/repositories/%zu/issues/%zu", ri, ii);
}

static int issue_state(const GradeCheckInput *in, GradeOutcome *o)
{
        json_t *issue;
        size_t ri, ii;
        int r = need_numbered(in, "issues", "issue", o, &issue, &ri, &ii);
        if (r <= 0)
                return r;
        const char *want = grade_arg_str(in, "state"), *is = json_get_str(issue, "state");
        bool ok = is && strcasecmp(is, want) == 0;
        if ((r = grade_outcome_set(
                     o, ok ? GRADE_PASSED : GRADE_FAILED, "issue #%" PRId64 " is %s (wanted %s)",
                     grade_arg_int(in, "issue"), is ? is : "without a state", want)) < 0)
                return r;
        return is ? grade_cite_path(o, "/repositories/%zu/issues/%zu/state", ri, ii)
                  : grade_cite_path(o, "/repositories/%zu/issues/%zu", ri, ii);
}

static GradePolarity state_polarity(const json_t *args)
{
        const char *s = json_get_str(args, "state");
        /* "is open" / "is not merged" ask the agent NOT to close or merge: prohibitions */
        return streq_ptr(s, "open") || streq_ptr(s, "not merged") ? GRADE_NEGATIVE : GRADE_POSITIVE;
}

static int issue_labels(const GradeCheckInput *in, GradeOutcome *o, bool exactly_one)
{
        json_t *issue;
        size_t ri, ii;
        int r = need_numbered(in, "issues", "issue", o, &issue, &ri, &ii);
        if (r <= 0)
                return r;
        const char *label = grade_arg_str(in, "label");
        json_t *labels = json_object_get(issue, "labels");
        /* label names compare case-insensitively: github.com creates them so */
        bool has = strv_has_fold(labels, label);
        bool ok = exactly_one ? has && json_array_size(labels) == 1 : has;
        _cleanup_free_ char *list = strv_list(labels, NULL);
        if (!list)
                return -ENOMEM;
        if (exactly_one)
                r = grade_outcome_set(o, ok ? GRADE_PASSED : GRADE_FAILED,
                                      "issue #%" PRId64 " has labels %s (wanted exactly `%s`)",
                                      grade_arg_int(in, "issue"), list, label);
        else
                r = grade_outcome_set(o, ok ? GRADE_PASSED : GRADE_FAILED,
                                      "issue #%" PRId64 "'s labels are %s, which %s `%s`",
                                      grade_arg_int(in, "issue"), list,
                                      ok ? "include" : "do not include", label);
        if (r < 0)
                return r;
        return labels ? grade_cite_path(o, "/repositories/%zu/issues/%zu/labels", ri, ii)
                      : grade_cite_path(o, "/repositories/%zu/issues/%zu", ri, ii);
}

static int issue_has_label(const GradeCheckInput *in, GradeOutcome *o)
{
        return issue_labels(in, o, false);
}

static int issue_exactly_one_label(const GradeCheckInput *in, GradeOutcome *o)
{
        return issue_labels(in, o, true);
}

static int issue_assignee(const GradeCheckInput *in, GradeOutcome *o)
{
        json_t *issue;
        size_t ri, ii;
        int r = need_numbered(in, "issues", "issue", o, &issue, &ri, &ii);
        if (r <= 0)
                return r;
        const char *login = grade_arg_str(in, "login");
        json_t *assignees = json_object_get(issue, "assignees");
        /* logins, not display names; case-insensitive as github.com's (hosted Pome compares
         * them case-sensitively; the twin stores the canonical spelling either way) */
        bool ok = strv_has_fold(assignees, login);
        _cleanup_free_ char *list = strv_list(assignees, NULL);
        if (!list)
                return -ENOMEM;
        if ((r = grade_outcome_set(o, ok ? GRADE_PASSED : GRADE_FAILED,
                                   "issue #%" PRId64 "'s assignees are %s, which %s `%s`",
                                   grade_arg_int(in, "issue"), list,
                                   ok ? "include" : "do not include", login)) < 0)
                return r;
        return assignees ? grade_cite_path(o, "/repositories/%zu/issues/%zu/assignees", ri, ii)
                         : grade_cite_path(o, "/repositories/%zu/issues/%zu", ri, ii);
}

static int issue_comment_contains(const GradeCheckInput *in, GradeOutcome *o)
{
        json_t *issue;
        size_t ri, ii;
        int r = need_numbered(in, "issues", "issue", o, &issue, &ri, &ii);
        if (r <= 0)
                return r;
        const char *needle = grade_arg_str(in, "needle");
        json_t *comments = json_object_get(issue, "comments"), *cm;
        size_t i, hits = 0;
        /* a case-sensitive substring of any comment's body, whoever wrote it */
        json_array_foreach (comments, i, cm) {
                const char *body = json_get_str(cm, "body");
                if (body && strstr(body, needle)) {
                        hits++;
                        if ((r = grade_cite_path(o, "/repositories/%zu/issues/%zu/comments/%zu", ri,
                                                 ii, i)) < 0)
                                return r;
                }
        }
        if (hits == 0 && comments &&
            (r = grade_cite_path(o, "/repositories/%zu/issues/%zu/comments", ri, ii)) < 0)
                return r;
        return grade_outcome_set(o, hits ? GRADE_PASSED : GRADE_FAILED,
                                 "%zu of the %zu comment(s) on issue #%" PRId64 " contain \"%s\"",
                                 hits, json_array_size(comments), grade_arg_int(in, "issue"),
                                 needle);
}

/* ---------------------------------------------------------------- pull requests */

static int pr_state(const GradeCheckInput *in, GradeOutcome *o)
{
        json_t *pr;
        size_t ri, pi;
        int r = need_numbered(in, "pull_requests", "pr", o, &pr, &ri, &pi);
        if (r <= 0)
                return r;
        const char *want = grade_arg_str(in, "state");
        /* merged / not merged read the merged flag; open / closed the state: a pull request
         * can be closed without being merged */
        if (streq(want, "merged") || streq(want, "not merged")) {
                bool merged = json_is_true(json_object_get(pr, "merged"));
                bool ok = merged == streq(want, "merged");
                if ((r = grade_outcome_set(o, ok ? GRADE_PASSED : GRADE_FAILED,
                                           "pull request #%" PRId64 " is %s (wanted %s)",
                                           grade_arg_int(in, "pr"),
                                           merged ? "merged" : "not merged", want)) < 0)
                        return r;
                return json_object_get(pr, "merged")
                               ? grade_cite_path(o, "/repositories/%zu/pull_requests/%zu/merged",
                                                 ri, pi)
                               : grade_cite_path(o, "/repositories/%zu/pull_requests/%zu", ri, pi);
        }
        const char *is = json_get_str(pr, "state");
        bool ok = is && strcasecmp(is, want) == 0;
        if ((r = grade_outcome_set(o, ok ? GRADE_PASSED : GRADE_FAILED,
                                   "pull request #%" PRId64 " is %s (wanted %s)",
                                   grade_arg_int(in, "pr"), is ? is : "without a state", want)) < 0)
                return r;
        return is ? grade_cite_path(o, "/repositories/%zu/pull_requests/%zu/state", ri, pi)
                  : grade_cite_path(o, "/repositories/%zu/pull_requests/%zu", ri, pi);
}

static int pr_comment_exists(const GradeCheckInput *in, GradeOutcome *o)
{
        json_t *pr;
        size_t ri, pi;
        int r = need_numbered(in, "pull_requests", "pr", o, &pr, &ri, &pi);
        if (r <= 0)
                return r;
        /* the conversation's comments (the issue-comment endpoints), not a review's body nor
         * an inline review comment: GitHub's own meaning of a comment on a pull request */
        json_t *comments = json_object_get(pr, "comments");
        size_t n = json_array_size(comments);
        if ((r = grade_outcome_set(o, n ? GRADE_PASSED : GRADE_FAILED,
                                   "pull request #%" PRId64 " has %zu conversation comment(s)%s",
                                   grade_arg_int(in, "pr"), n,
                                   n ? "" : " (reviews and inline review comments do not count)")) <
            0)
                return r;
        return comments ? grade_cite_path(o, "/repositories/%zu/pull_requests/%zu/comments", ri, pi)
                        : grade_cite_path(o, "/repositories/%zu/pull_requests/%zu", ri, pi);
}

static int pr_review_exists(const GradeCheckInput *in, GradeOutcome *o)
{
        json_t *pr;
        size_t ri, pi;
        int r = need_numbered(in, "pull_requests", "pr", o, &pr, &ri, &pi);
        if (r <= 0)
                return r;
        const char *want = grade_arg_str(in, "review");
        json_t *reviews = json_object_get(pr, "reviews"), *rv;
        size_t i, hits = 0;
        json_array_foreach (reviews, i, rv) {
                const char *st = json_get_str(rv, "state");
                if (st && strcasecmp(st, want) == 0) {
                        hits++;
                        if ((r = grade_cite_path(o,
                                                 "/repositories/%zu/pull_requests/%zu/reviews/%zu",
                                                 ri, pi, i)) < 0)
                                return r;
                }
        }
        if (!hits && reviews &&
            (r = grade_cite_path(o, "/repositories/%zu/pull_requests/%zu/reviews", ri, pi)) < 0)
                return r;
        _cleanup_free_ char *list = strv_list(reviews, "state");
        if (!list)
                return -ENOMEM;
        return grade_outcome_set(o, hits ? GRADE_PASSED : GRADE_FAILED,
                                 "pull request #%" PRId64 "'s reviews are %s, which %s %s",
                                 grade_arg_int(in, "pr"), list, hits ? "include" : "do not include",
                                 want);
}

/* ---------------------------------------------------------------- repository deltas */

static int no_new_labels(const GradeCheckInput *in, GradeOutcome *o)
{
        json_t *seed_repo, *repo;
        size_t si, ri;
        int r = need_repo(in, in->seed, "seed", o, &seed_repo, &si);
        if (r <= 0)
                return r;
        if ((r = need_repo(in, in->final, "final state", o, &repo, &ri)) <= 0)
                return r;
        json_t *seeded = json_object_get(seed_repo, "labels"), *l;
        size_t i, created = 0;
        json_array_foreach (json_object_get(repo, "labels"), i, l) {
                const char *name = json_get_str(l, "name");
                bool known = false;
                size_t k;
                json_t *s;
                json_array_foreach (seeded, k, s)
                        if (name && strcasecmp(strempty(json_get_str(s, "name")), name) == 0)
                                known = true;
                if (!known) {
                        created++;
                        if ((r = grade_cite_path(o, "/repositories/%zu/labels/%zu", ri, i)) < 0)
                                return r;
                }
        }
        /* applying a label the repository already defines is not creating one */
        if (!created && json_object_get(repo, "labels") &&
            (r = grade_cite_path(o, "/repositories/%zu/labels", ri)) < 0)
                return r;
        return grade_outcome_set(o, created ? GRADE_FAILED : GRADE_PASSED,
                                 "%zu label(s) of %s were not in the seed (%zu defined there)",
                                 created, grade_arg_str(in, "repo"), json_array_size(seeded));
}

static int no_new_issues(const GradeCheckInput *in, GradeOutcome *o)
{
        json_t *seed_repo, *repo;
        size_t si, ri;
        int r = need_repo(in, in->seed, "seed", o, &seed_repo, &si);
        if (r <= 0)
                return r;
        if ((r = need_repo(in, in->final, "final state", o, &repo, &ri)) <= 0)
                return r;
        /* numbers, not titles: a duplicate carries the title of what it duplicates */
        json_t *issue;
        size_t i, created = 0, k;
        json_array_foreach (json_object_get(repo, "issues"), i, issue) {
                int64_t number = json_integer_value(json_object_get(issue, "number"));
                if (numbered_find(seed_repo, "issues", number, &k))
                        continue;
                created++;
                if ((r = grade_cite_path(o, "/repositories/%zu/issues/%zu", ri, i)) < 0)
                        return r;
        }
        if (!created && json_object_get(repo, "issues") &&
            (r = grade_cite_path(o, "/repositories/%zu/issues", ri)) < 0)
                return r;
        return grade_outcome_set(o, created ? GRADE_FAILED : GRADE_PASSED,
                                 "%zu issue(s) of %s were not in the seed (%zu there)", created,
                                 grade_arg_str(in, "repo"),
                                 json_array_size(json_object_get(seed_repo, "issues")));
}

/* ---------------------------------------------------------------- files and statuses */

static json_t *commit_find(json_t *repo, const char *sha, size_t *ret_idx)
{
        size_t i;
        json_t *c;
        json_array_foreach (json_object_get(repo, "commits"), i, c)
                if (streq_ptr(json_get_str(c, "sha"), sha)) {
                        *ret_idx = i;
                        return c;
                }
        return NULL;
}

static int file_exists(const GradeCheckInput *in, GradeOutcome *o)
{
        json_t *repo;
        size_t ri;
        int r = need_repo(in, in->final, "final state", o, &repo, &ri);
        if (r <= 0)
                return r;
        const char *path = grade_arg_str(in, "path");
        _cleanup_free_ char *tok = grade_pointer_token(path);
        if (!tok)
                return -ENOMEM;
        /* on any branch, as hosted Pome reads it: the tip commit's tree holds the file */
        json_t *branch;
        size_t i, hits = 0;
        _cleanup_free_ char *on = NULL;
        json_array_foreach (json_object_get(repo, "branches"), i, branch) {
                size_t ci;
                json_t *commit = commit_find(repo, json_get_str(branch, "sha"), &ci);
                if (!commit || !json_object_get(json_object_get(commit, "tree"), path))
                        continue;
                if (!hits++ && !(on = strdup(strempty(json_get_str(branch, "name")))))
                        return -ENOMEM;
                if ((r = grade_cite_path(o, "/repositories/%zu/commits/%zu/tree/%s", ri, ci, tok)) <
                    0)
                        return r;
        }
        if (!hits)
                r = json_object_get(repo, "branches")
                            ? grade_cite_path(o, "/repositories/%zu/branches", ri)
                            : grade_cite_path(o, "/repositories/%zu", ri);
        if (r < 0)
                return r;
        if (hits)
                return grade_outcome_set(o, GRADE_PASSED,
                                         "`%s` is on %zu branch(es) of %s, %s "
                                         "first",
                                         path, hits, grade_arg_str(in, "repo"), on);
        return grade_outcome_set(o, GRADE_FAILED, "`%s` is on none of the %zu branch(es) of %s",
                                 path, json_array_size(json_object_get(repo, "branches")),
                                 grade_arg_str(in, "repo"));
}

static int commit_status(const GradeCheckInput *in, GradeOutcome *o)
{
        json_t *repo;
        size_t ri;
        int r = need_repo(in, in->final, "final state", o, &repo, &ri);
        if (r <= 0)
                return r;
        const char *context = grade_arg_str(in, "context"), *want = grade_arg_str(in, "state");
        /* any status reported under the context, on any commit (hosted Pome's reading): not
         * necessarily the latest one */
        json_t *statuses = json_object_get(repo, "statuses"), *st;
        size_t i, seen = 0, hits = 0;
        json_array_foreach (statuses, i, st) {
                if (!streq_ptr(json_get_str(st, "context"), context))
                        continue;
                seen++;
                if (strcasecmp(strempty(json_get_str(st, "state")), want) != 0)
                        continue;
                hits++;
                if ((r = grade_cite_path(o, "/repositories/%zu/statuses/%zu", ri, i)) < 0)
                        return r;
        }
        if (!hits)
                r = statuses ? grade_cite_path(o, "/repositories/%zu/statuses", ri)
                             : grade_cite_path(o, "/repositories/%zu", ri);
        if (r < 0)
                return r;
        return grade_outcome_set(o, hits ? GRADE_PASSED : GRADE_FAILED,
                                 "%zu of the %zu \"%s\" status(es) in %s are %s", hits, seen,
                                 context, grade_arg_str(in, "repo"), want);
}

/* ---------------------------------------------------------------- the tape */

static int tool_calls(const GradeCheckInput *in, GradeOutcome *o, bool want_called)
{
        const char *tool = grade_arg_str(in, "tool");
        json_t *row;
        size_t i, hits = 0;
        int r;
        /* the action the caller named, stamped alike over REST and MCP, even when the call
         * failed: an attempt counts */
        json_array_foreach (in->tape, i, row) {
                if (!streq_ptr(json_get_str(row, "tool"), tool))
                        continue;
                hits++;
                if ((r = grade_cite_event(o, row)) < 0)
                        return r;
        }
        bool ok = want_called ? hits > 0 : hits == 0;
        return grade_outcome_set(o, ok ? GRADE_PASSED : GRADE_FAILED,
                                 "`%s` was called %zu time(s) in %zu call(s)", tool, hits,
                                 json_array_size(in->tape));
}

static int tool_never_called(const GradeCheckInput *in, GradeOutcome *o)
{
        return tool_calls(in, o, false);
}

static int tool_was_called(const GradeCheckInput *in, GradeOutcome *o)
{
        return tool_calls(in, o, true);
}

/* ---------------------------------------------------------------- the vocabulary */

static const char *const issue_states[] = {"open", "closed", NULL};
static const char *const pr_states[] = {"open", "closed", "merged", "not merged", NULL};
static const char *const review_states[] = {"APPROVED", "CHANGES_REQUESTED", "COMMENTED",
                                            "DISMISSED", NULL};
static const char *const status_states[] = {"error", "failure", "pending", "success", NULL};

#define P_ISSUE                                                                \
        {                                                                      \
                "issue", GRADE_PARAM_NUMBER, NULL, false, "the issue's number" \
        }
#define P_PR                                                                       \
        {                                                                          \
                "pr", GRADE_PARAM_NUMBER, NULL, false, "the pull request's number" \
        }
#define P_REPO                                                                      \
        {                                                                           \
                "repo", GRADE_PARAM_REPO, NULL, false, "the repository, owner/name" \
        }

static const GradeParam p_repo[] = {P_REPO};
static const GradeParam p_issue_repo[] = {P_ISSUE, P_REPO};
static const GradeParam p_issue_repo_state[] = {
        P_ISSUE, P_REPO, {"state", GRADE_PARAM_ENUM, issue_states, true, "the issue's state"}};
static const GradeParam p_issue_repo_label[] = {
        P_ISSUE, P_REPO, {"label", GRADE_PARAM_LABEL, NULL, false, "a label name"}};
static const GradeParam p_issue_repo_login[] = {
        P_ISSUE, P_REPO, {"login", GRADE_PARAM_LOGIN, NULL, false, "a user's login"}};
static const GradeParam p_needle_issue_repo[] = {
        {"needle", GRADE_PARAM_TEXT, NULL, false, "text a comment's body contains"},
        P_ISSUE,
        P_REPO};
static const GradeParam p_pr_repo_state[] = {
        P_PR, P_REPO, {"state", GRADE_PARAM_ENUM, pr_states, true, "the pull request's state"}};
static const GradeParam p_pr_repo[] = {P_PR, P_REPO};
static const GradeParam p_review_pr_repo[] = {
        {"review", GRADE_PARAM_ENUM, review_states, true, "a review's state"}, P_PR, P_REPO};
static const GradeParam p_path_repo[] = {
        {"path", GRADE_PARAM_PATH, NULL, false, "a file's path in the repository"}, P_REPO};
static const GradeParam p_context_repo_state[] = {
        {"context", GRADE_PARAM_TEXT, NULL, false, "the status's context, such as ci/test"},
        P_REPO,
        {"state", GRADE_PARAM_ENUM, status_states, true, "the status's state"}};
static const GradeParam p_tool[] = {
        {"tool", GRADE_PARAM_TOOL, NULL, false, "an action (MCP tool) of the GitHub twin"}};

#define PARAMS(p) p, ELEMENTSOF(p)

const GradeCheck grade_checks_github[] = {
        {"github.issue-exists", "github", "Issue #{issue} exists in `{repo}`",
         "The issue is in the repository's final state. Nothing about its content, state, "
         "labels or assignees; a seeded issue makes it true before the agent starts.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_issue_repo), issue_exists},
        {"github.issue-state", "github", "Issue #{issue} in `{repo}` is in state {state}",
         "The issue's state is this one. \"open\" is a prohibition (the agent must not close "
         "it), \"closed\" something to do.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, state_polarity, PARAMS(p_issue_repo_state),
         issue_state},
        {"github.issue-has-label", "github",
         "Issue #{issue} in `{repo}` has the `{label}` label applied",
         "The label (case-insensitive) is among those applied to the issue; others may be "
         "applied too.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_issue_repo_label), issue_has_label},
        {"github.issue-exactly-one-label", "github",
         "Issue #{issue} in `{repo}` has exactly one classification label, and it is `{label}`",
         "The issue carries exactly one label, and it is this one: a right label piled on a "
         "wrong one fails.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_issue_repo_label),
         issue_exactly_one_label},
        {"github.issue-assignee", "github", "Issue #{issue} in `{repo}` is assigned to `{login}`",
         "The login (not a display name; case-insensitive) is among the issue's assignees; "
         "not necessarily the only one.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_issue_repo_login), issue_assignee},
        {"github.issue-comment-contains", "github",
         "A comment containing \"{needle}\" exists on issue #{issue} in `{repo}`",
         "Some comment's body on the issue contains the text (case-sensitive substring), "
         "whoever wrote it.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_needle_issue_repo),
         issue_comment_contains},
        {"github.pr-state", "github", "Pull request #{pr} in `{repo}` is {state}",
         "merged / not merged read the pull request's merged flag, open / closed its state "
         "(closed need not mean merged). open and not merged are prohibitions.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, state_polarity, PARAMS(p_pr_repo_state), pr_state},
        {"github.pr-comment-exists", "github",
         "Pull request #{pr} in `{repo}` has at least one comment",
         "The pull request's conversation carries a comment (the issue-comment endpoints); a "
         "review's body or an inline review comment is not one.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_pr_repo), pr_comment_exists},
        {"github.pr-review-exists", "github",
         "A {review} review exists on pull request #{pr} in "
         "`{repo}`",
         "Some submitted review on the pull request has this state; another review may "
         "disagree.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_review_pr_repo), pr_review_exists},
        {"github.no-new-labels", "github", "No new labels were created in `{repo}`",
         "Every label the repository defines at the end was defined in the seed (by name, "
         "case-insensitive). Applying a defined label to an issue does not break it.",
         GRADE_SUBSTRATE_SEED_FINAL, GRADE_NEGATIVE, NULL, PARAMS(p_repo), no_new_labels},
        {"github.no-new-issues", "github", "No new issues were created in `{repo}`",
         "Every issue number in the repository at the end was in the seed. Closing, "
         "relabelling or commenting on a seeded issue does not break it.",
         GRADE_SUBSTRATE_SEED_FINAL, GRADE_NEGATIVE, NULL, PARAMS(p_repo), no_new_issues},
        {"github.file-exists", "github", "File `{path}` exists in `{repo}`",
         "A file at exactly this path is in the tree of some branch's tip commit; nothing "
         "about its content.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_path_repo), file_exists},
        {"github.commit-status", "github", "Commit status \"{context}\" in `{repo}` is {state}",
         "Some commit status reported under the context, on any commit of the repository, has "
         "this state; not necessarily the latest one.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_context_repo_state), commit_status},
        {"github.no-unsupported-endpoint", "github", "No unsupported endpoint was called",
         "No call on the GitHub twin's tape reached a route the twin does not implement (the "
         "loud 501, fidelity \"unsupported\"). A 404 or 422 from a route it does implement is "
         "an answer, not unsupported.",
         GRADE_SUBSTRATE_TAPE, GRADE_NEGATIVE, NULL, NULL, 0, grade_check_no_unsupported_endpoint},
        {"github.tool-never-called", "github", "`{tool}` was never called",
         "No call on the tape named this action, over REST or MCP; a call the twin refused "
         "still counts as calling it.",
         GRADE_SUBSTRATE_TAPE, GRADE_NEGATIVE, NULL, PARAMS(p_tool), tool_never_called},
        {"github.tool-was-called", "github", "`{tool}` was called",
         "Some call on the tape named this action, over REST or MCP, whether or not it "
         "succeeded; an empty tape fails it.",
         GRADE_SUBSTRATE_TAPE, GRADE_POSITIVE, NULL, PARAMS(p_tool), tool_was_called},
};
const size_t grade_n_checks_github = ELEMENTSOF(grade_checks_github);
