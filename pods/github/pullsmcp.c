/* SPDX-License-Identifier: MIT */
/*
 * What the pull request MCP tools answer: github/github-mcp-server does not hand an agent
 * the REST objects but trimmed ones (pkg/github/minimal_types.go: MinimalPullRequest,
 * MinimalCombinedStatus, MinimalPullRequestReview, MinimalReviewThreadsResponse, ...), a
 * MinimalResponse {id, url} for writes, and plain sentences for review writes. An agent
 * built against that server reads the same here. Each projection takes the REST body the
 * action rendered (borrowed) and returns a new one; REST callers never see these.
 */
#include "common/json-util.h"
#include "pods/github/github.h"

/* Go's encoding/json omitempty: "", 0, false, null, empty arrays and objects are left out. */
static int set_omitempty(json_t *o, const char *key, json_t *v)
{
        if (!v)
                return -ENOMEM;
        bool empty = json_is_null(v) || json_is_false(v) ||
                     (json_is_string(v) && json_string_length(v) == 0) ||
                     (json_is_integer(v) && json_integer_value(v) == 0) ||
                     (json_is_array(v) && json_array_size(v) == 0) ||
                     (json_is_object(v) && json_object_size(v) == 0);
        if (empty) {
                json_decref(v);
                return 0;
        }
        return json_object_set_new(o, key, v) < 0 ? -ENOMEM : 0;
}

static json_t *get_or_null(const json_t *o, const char *key)
{
        json_t *v = json_object_get(o, key);
        return json_incref(v ? v : json_null());
}

/* Copies the named members of from into a new object, omitempty. NULL on OOM. */
static json_t *pick(const json_t *from, const char *const *keys, size_t n)
{
        _cleanup_json_ json_t *o = json_object();
        if (!o)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (set_omitempty(o, keys[i], get_or_null(from, keys[i])) < 0)
                        return NULL;
        return TAKE_PTR(o);
}

/* MinimalUser {login, id, profile_url, avatar_url} of a rendered user. */
static json_t *min_user(const json_t *u)
{
        if (!json_is_object(u))
                return json_null();
        _cleanup_json_ json_t *o = json_pack("{s:O}", "login", json_object_get(u, "login"));
        if (!o || set_omitempty(o, "id", get_or_null(u, "id")) < 0 ||
            set_omitempty(o, "profile_url", get_or_null(u, "html_url")) < 0 ||
            set_omitempty(o, "avatar_url", get_or_null(u, "avatar_url")) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* An array of one member (login, name, ...) of each object of a rendered array. */
static json_t *names_of(const json_t *a, const char *key)
{
        _cleanup_json_ json_t *out = json_array();
        size_t i;
        json_t *v;
        if (!out)
                return NULL;
        json_array_foreach (a, i, v) {
                if (json_is_string(json_object_get(v, key)) &&
                    json_array_append(out, json_object_get(v, key)) < 0)
                        return NULL;
        }
        return TAKE_PTR(out);
}

static json_t *min_branch(const json_t *b)
{
        json_t *repo = json_object_get(b, "repo");
        _cleanup_json_ json_t *o =
                json_pack("{s:O, s:O}", "ref", json_object_get(b, "ref") ?: json_null(), "sha",
                          json_object_get(b, "sha") ?: json_null());
        if (!o)
                return NULL;
        if (json_is_object(repo)) {
                _cleanup_json_ json_t *r =
                        json_pack("{s:O}", "full_name", json_object_get(repo, "full_name"));
                if (!r || set_omitempty(r, "description", get_or_null(repo, "description")) < 0 ||
                    json_object_set(o, "repo", r) < 0)
                        return NULL;
        }
        return TAKE_PTR(o);
}

json_t *gh_mcp_pull(const json_t *pr)
{
        _cleanup_json_ json_t *o = json_pack(
                "{s:O, s:O, s:O, s:b, s:b, s:O}", "number", json_object_get(pr, "number"), "title",
                json_object_get(pr, "title"), "state", json_object_get(pr, "state"), "draft",
                json_is_true(json_object_get(pr, "draft")), "merged",
                json_is_true(json_object_get(pr, "merged")) ||
                        json_is_string(json_object_get(pr, "merged_at")),
                "html_url", json_object_get(pr, "html_url"));
        json_t *ms = json_object_get(pr, "milestone"), *mb = json_object_get(pr, "merged_by");
        static const char *const counts[] = {"additions",  "deletions", "changed_files",
                                             "commits",    "comments",  "created_at",
                                             "updated_at", "closed_at", "merged_at"};
        if (!o || set_omitempty(o, "body", get_or_null(pr, "body")) < 0 ||
            set_omitempty(o, "mergeable_state", get_or_null(pr, "mergeable_state")) < 0 ||
            set_omitempty(o, "user", min_user(json_object_get(pr, "user"))) < 0 ||
            set_omitempty(o, "labels", names_of(json_object_get(pr, "labels"), "name")) < 0 ||
            set_omitempty(o, "assignees", names_of(json_object_get(pr, "assignees"), "login")) <
                    0 ||
            set_omitempty(o, "requested_reviewers",
                          names_of(json_object_get(pr, "requested_reviewers"), "login")) < 0 ||
            set_omitempty(o, "merged_by",
                          json_incref(json_object_get(mb, "login") ?: json_null())) < 0 ||
            set_omitempty(o, "head", min_branch(json_object_get(pr, "head"))) < 0 ||
            set_omitempty(o, "base", min_branch(json_object_get(pr, "base"))) < 0 ||
            set_omitempty(o, "milestone",
                          json_incref(json_object_get(ms, "title") ?: json_null())) < 0)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(counts); i++)
                if (set_omitempty(o, counts[i], get_or_null(pr, counts[i])) < 0)
                        return NULL;
        return TAKE_PTR(o);
}

json_t *gh_mcp_pulls(const json_t *prs)
{
        _cleanup_json_ json_t *out = json_array();
        size_t i;
        json_t *pr;
        if (!out)
                return NULL;
        json_array_foreach (prs, i, pr) {
                if (json_array_append_new(out, gh_mcp_pull(pr)) < 0)
                        return NULL;
        }
        return TAKE_PTR(out);
}

json_t *gh_mcp_combined_status(const json_t *cs)
{
        static const char *const keys[] = {"state",      "context",    "description",
                                           "target_url", "created_at", "updated_at"};
        _cleanup_json_ json_t *statuses = json_array();
        size_t i;
        json_t *s;
        if (!statuses)
                return NULL;
        json_array_foreach (json_object_get(cs, "statuses"), i, s) {
                if (json_array_append_new(statuses, pick(s, keys, ELEMENTSOF(keys))) < 0)
                        return NULL;
        }
        return json_pack("{s:O, s:O, s:O, s:O}", "state", json_object_get(cs, "state"), "sha",
                         json_object_get(cs, "sha"), "total_count",
                         json_object_get(cs, "total_count"), "statuses", statuses);
}

json_t *gh_mcp_reviews(const json_t *reviews)
{
        _cleanup_json_ json_t *out = json_array();
        size_t i;
        json_t *rv;
        if (!out)
                return NULL;
        json_array_foreach (reviews, i, rv) {
                _cleanup_json_ json_t *o = json_pack("{s:O, s:O}", "id", json_object_get(rv, "id"),
                                                     "state", json_object_get(rv, "state"));
                if (!o || set_omitempty(o, "body", get_or_null(rv, "body")) < 0 ||
                    json_object_set(o, "html_url", json_object_get(rv, "html_url")) < 0 ||
                    set_omitempty(o, "user", min_user(json_object_get(rv, "user"))) < 0 ||
                    set_omitempty(o, "commit_id", get_or_null(rv, "commit_id")) < 0 ||
                    set_omitempty(o, "submitted_at", get_or_null(rv, "submitted_at")) < 0 ||
                    set_omitempty(o, "author_association", get_or_null(rv, "author_association")) <
                            0 ||
                    json_array_append(out, o) < 0)
                        return NULL;
        }
        return TAKE_PTR(out);
}

json_t *gh_mcp_files(const json_t *files)
{
        static const char *const keys[] = {"filename",  "status",  "additions",
                                           "deletions", "changes", "patch"};
        _cleanup_json_ json_t *out = json_array();
        size_t i;
        json_t *f;
        if (!out)
                return NULL;
        json_array_foreach (files, i, f) {
                if (json_array_append_new(out, pick(f, keys, ELEMENTSOF(keys))) < 0)
                        return NULL;
        }
        return TAKE_PTR(out);
}

json_t *gh_mcp_issue_comments(const json_t *comments)
{
        _cleanup_json_ json_t *out = json_array();
        size_t i;
        json_t *cm;
        if (!out)
                return NULL;
        json_array_foreach (comments, i, cm) {
                _cleanup_json_ json_t *o = json_pack("{s:O}", "id", json_object_get(cm, "id"));
                if (!o || set_omitempty(o, "body", get_or_null(cm, "body")) < 0 ||
                    json_object_set(o, "html_url", json_object_get(cm, "html_url")) < 0 ||
                    set_omitempty(o, "user", min_user(json_object_get(cm, "user"))) < 0 ||
                    set_omitempty(o, "author_association", get_or_null(cm, "author_association")) <
                            0 ||
                    set_omitempty(o, "created_at", get_or_null(cm, "created_at")) < 0 ||
                    set_omitempty(o, "updated_at", get_or_null(cm, "updated_at")) < 0 ||
                    json_array_append(out, o) < 0)
                        return NULL;
        }
        return TAKE_PTR(out);
}

json_t *gh_mcp_check_runs(const json_t *result)
{
        static const char *const keys[] = {"id",       "name",        "status",     "conclusion",
                                           "html_url", "details_url", "started_at", "completed_at"};
        _cleanup_json_ json_t *runs = json_array();
        size_t i;
        json_t *run;
        if (!runs)
                return NULL;
        json_array_foreach (json_object_get(result, "check_runs"), i, run) {
                _cleanup_json_ json_t *o = pick(run, keys, ELEMENTSOF(keys));
                /* name and status are not omitempty in MinimalCheckRun */
                if (!o || json_object_set(o, "name", json_object_get(run, "name")) < 0 ||
                    json_object_set(o, "status", json_object_get(run, "status")) < 0 ||
                    json_array_append(runs, o) < 0)
                        return NULL;
        }
        return json_pack("{s:O, s:O}", "total_count", json_object_get(result, "total_count"),
                         "check_runs", runs);
}

/*
 * MinimalReviewThreadsResponse of the review comments (rendered, oldest first): one thread
 * per root comment with its replies, {review_threads, totalCount, pageInfo}.
 */
json_t *gh_mcp_review_threads(const json_t *comments, const char *head_sha)
{
        _cleanup_json_ json_t *threads = json_array(), *index = json_object();
        size_t i;
        json_t *cm;
        if (!threads || !index)
                return NULL;
        json_array_foreach (comments, i, cm) {
                json_t *root = json_object_get(cm, "in_reply_to_id");
                char key[32];
                snprintf(key, sizeof(key), "%lld",
                         (long long)json_integer_value(root ? root : json_object_get(cm, "id")));
                json_t *thread = json_object_get(index, key);
                if (!thread) {
                        char id[48];
                        snprintf(id, sizeof(id), "PRRT_%s", key);
                        /* outdated: the thread's line was commented on an older head */
                        thread = json_pack("{s:s, s:b, s:b, s:b, s:[], s:i}", "id", id,
                                           "is_resolved", false, "is_outdated",
                                           !streq_ptr(json_get_str(cm, "commit_id"), head_sha),
                                           "is_collapsed", false, "comments", "total_count", 0);
                        if (!thread || json_object_set_new(index, key, thread) < 0 ||
                            json_array_append(threads, thread) < 0)
                                return NULL;
                }
                json_t *user = json_object_get(cm, "user");
                _cleanup_json_ json_t *c = json_object();
                static const char *const keys[] = {"body",       "path",
                                                   "line",       "original_line",
                                                   "start_line", "original_start_line"};
                if (!c)
                        return NULL;
                for (size_t k = 0; k < ELEMENTSOF(keys); k++)
                        if (set_omitempty(c, keys[k], get_or_null(cm, keys[k])) < 0)
                                return NULL;
                json_t *list = json_object_get(thread, "comments");
                if (json_object_set(c, "path", json_object_get(cm, "path")) < 0 ||
                    set_omitempty(c, "author",
                                  json_incref(json_object_get(user, "login") ?: json_null())) < 0 ||
                    set_omitempty(c, "created_at", get_or_null(cm, "created_at")) < 0 ||
                    set_omitempty(c, "updated_at", get_or_null(cm, "updated_at")) < 0 ||
                    json_object_set(c, "html_url", json_object_get(cm, "html_url")) < 0 ||
                    json_array_append(list, c) < 0 ||
                    json_object_set_new(thread, "total_count",
                                        json_integer((json_int_t)json_array_size(list))) < 0)
                        return NULL;
        }
        return json_pack("{s:O, s:I, s:{s:b, s:b}}", "review_threads", threads, "totalCount",
                         (json_int_t)json_array_size(threads), "pageInfo", "hasNextPage", false,
                         "hasPreviousPage", false);
}

json_t *gh_mcp_minimal_response(const json_t *id, const char *url)
{
        char buf[32];
        snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(id));
        return json_pack("{s:s, s:s}", "id", buf, "url", strempty(url));
}

int gh_mcp_reply(TwinReply *rp, json_t *body)
{
        if (!body)
                return -ENOMEM;
        json_decref(rp->body);
        rp->body = body;
        return 0;
}

int gh_mcp_reply_text(TwinReply *rp, const char *text)
{
        /* a plain sentence, as the official server's NewToolResultText */
        if (!rp->headers && !(rp->headers = json_object()))
                return -ENOMEM;
        if (json_object_set_new(rp->headers, "Content-Type",
                                json_string("text/plain; charset=utf-8")) < 0)
                return -ENOMEM;
        return gh_mcp_reply(rp, json_string(text));
}
