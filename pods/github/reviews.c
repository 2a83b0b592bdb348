/* SPDX-License-Identifier: MIT */
/*
 * The GitHub twin's pull request reviews (https://docs.github.com/rest/pulls/reviews),
 * review comments and their replies (https://docs.github.com/rest/pulls/comments) and
 * requested reviewers (https://docs.github.com/rest/pulls/review-requests).
 *
 * pull_request.reviews[]: {id, node_id, user, body, state: APPROVED|CHANGES_REQUESTED|
 * COMMENTED|PENDING|DISMISSED, commit_id, submitted_at}. pull_request.review_comments[]:
 * {id, node_id, pull_request_review_id, path, line, side, start_line, commit_id, body, user,
 * in_reply_to_id, diff_hunk, created_at, updated_at}. A pending review and its comments are
 * seen by their author only, as on github.com.
 */
#include <strings.h>

#include "common/json-util.h"
#include "pods/github/github.h"

static const char *viewer_of(TwinCall *c)
{
        return json_get_str(c->world, "viewer");
}

static bool is_pending(json_t *rv)
{
        return streq_ptr(json_get_str(rv, "state"), "PENDING");
}

json_t *gh_review_find(json_t *pr, int64_t id)
{
        size_t i;
        json_t *rv;
        json_array_foreach (json_object_get(pr, "reviews"), i, rv) {
                if (json_integer_value(json_object_get(rv, "id")) == id)
                        return rv;
        }
        return NULL;
}

/* Whether the viewer may see review rv (another user's pending review is hidden). */
static bool review_visible(TwinCall *c, json_t *rv)
{
        return !is_pending(rv) ||
               strcasecmp(strempty(json_get_str(rv, "user")), strempty(viewer_of(c))) == 0;
}

static json_t *review_of_comment(json_t *pr, json_t *cm)
{
        return gh_review_find(pr,
                              json_integer_value(json_object_get(cm, "pull_request_review_id")));
}

/* ------------------------------------------------------------------ rendering */

static int pr_urls(TwinCall *c, json_t *repo, json_t *pr, char **ret_api, char **ret_html)
{
        long long n = json_integer_value(json_object_get(pr, "number"));
        if (asprintf(ret_api, "%s/repos/%s/%s/pulls/%lld", c->base_url, json_get_str(repo, "owner"),
                     json_get_str(repo, "name"), n) < 0)
                return -ENOMEM;
        if (asprintf(ret_html, GH_HTML_BASE "/%s/%s/pull/%lld", json_get_str(repo, "owner"),
                     json_get_str(repo, "name"), n) < 0) {
                free(*ret_api);
                return -ENOMEM;
        }
        return 0;
}

json_t *gh_render_review(TwinCall *c, json_t *repo, json_t *pr, json_t *rv)
{
        _cleanup_free_ char *api = NULL, *html = NULL, *rhtml = NULL;
        if (pr_urls(c, repo, pr, &api, &html) < 0)
                return NULL;
        long long id = json_integer_value(json_object_get(rv, "id"));
        if (asprintf(&rhtml, "%s#pullrequestreview-%lld", html, id) < 0)
                return NULL;
        const char *user = json_get_str(rv, "user");
        _cleanup_json_ json_t *o = json_pack(
                "{s:O, s:O, s:o, s:O, s:O, s:s, s:s, s:s, s:O, s:{s:{s:s}, s:{s:s}}}", "id",
                json_object_get(rv, "id"), "node_id", json_object_get(rv, "node_id"), "user",
                gh_render_user(c, user), "body", json_object_get(rv, "body") ?: json_null(),
                "state", json_object_get(rv, "state"), "html_url", rhtml, "pull_request_url", api,
                "author_association", gh_association(repo, user), "commit_id",
                json_object_get(rv, "commit_id") ?: json_null(), "_links", "html", "href", rhtml,
                "pull_request", "href", api);
        /* a pending review has no submitted_at at all */
        if (o && !is_pending(rv) &&
            json_object_set(o, "submitted_at", json_object_get(rv, "submitted_at")) < 0)
                return NULL;
        return TAKE_PTR(o);
}

json_t *gh_render_review_comment(TwinCall *c, json_t *repo, json_t *pr, json_t *cm)
{
        _cleanup_free_ char *api = NULL, *html = NULL, *url = NULL, *chtml = NULL;
        if (pr_urls(c, repo, pr, &api, &html) < 0)
                return NULL;
        long long id = json_integer_value(json_object_get(cm, "id"));
        if (asprintf(&url, "%s/repos/%s/%s/pulls/comments/%lld", c->base_url,
                     json_get_str(repo, "owner"), json_get_str(repo, "name"), id) < 0 ||
            asprintf(&chtml, "%s#discussion_r%lld", html, id) < 0)
                return NULL;
        const char *user = json_get_str(cm, "user");
        json_t *line = json_object_get(cm, "line"), *start = json_object_get(cm, "start_line");
        _cleanup_json_ json_t *o = json_pack(
                "{s:s, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:o, s:O, s:O, s:O, s:s, "
                "s:s, s:s, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}}}",
                "url", url, "pull_request_review_id", json_object_get(cm, "pull_request_review_id"),
                "id", json_object_get(cm, "id"), "node_id", json_object_get(cm, "node_id"),
                "diff_hunk", json_object_get(cm, "diff_hunk") ?: json_string(""), "path",
                json_object_get(cm, "path"), "position", line ?: json_null(), "original_position",
                line ?: json_null(), "commit_id", json_object_get(cm, "commit_id"),
                "original_commit_id", json_object_get(cm, "commit_id"), "user",
                gh_render_user(c, user), "body", json_object_get(cm, "body"), "created_at",
                json_object_get(cm, "created_at"), "updated_at", json_object_get(cm, "updated_at"),
                "html_url", chtml, "pull_request_url", api, "author_association",
                gh_association(repo, user), "start_line", start ?: json_null(),
                "original_start_line", start ?: json_null(), "start_side",
                start ? json_object_get(cm, "side") : json_null(), "line", line ?: json_null(),
                "original_line", line ?: json_null(), "side",
                json_object_get(cm, "side") ?: json_null(), "original_side",
                json_object_get(cm, "side") ?: json_null(), "subject_type", "line", "_links",
                "self", "href", url, "html", "href", chtml, "pull_request", "href", api);
        json_t *reply = json_object_get(cm, "in_reply_to_id");
        if (o && reply && !json_is_null(reply) && json_object_set(o, "in_reply_to_id", reply) < 0)
                return NULL;
        return TAKE_PTR(o);
}

int gh_reply_reviews(TwinCall *c, TwinReply *rp, json_t *repo, json_t *pr)
{
        _cleanup_json_ json_t *all = json_array(), *page = NULL, *out = json_array();
        if (!all || !out)
                return -ENOMEM;
        size_t i;
        json_t *rv;
        json_array_foreach (json_object_get(pr, "reviews"), i, rv) {
                if (review_visible(c, rv) && json_array_append(all, rv) < 0)
                        return -ENOMEM;
        }
        int r = gh_paginate(c, rp, all, &page);
        if (r < 0)
                return r;
        json_array_foreach (page, i, rv) {
                if (json_array_append_new(out, gh_render_review(c, repo, pr, rv)) < 0)
                        return -ENOMEM;
        }
        return twin_reply_body(rp, 200, TAKE_PTR(out));
}

int gh_reply_review_comments(TwinCall *c, TwinReply *rp, json_t *repo, json_t *pr)
{
        _cleanup_json_ json_t *all = json_array(), *page = NULL, *out = json_array();
        if (!all || !out)
                return -ENOMEM;
        size_t i;
        json_t *cm;
        json_array_foreach (json_object_get(pr, "review_comments"), i, cm) {
                json_t *rv = review_of_comment(pr, cm);
                if ((!rv || review_visible(c, rv)) && json_array_append(all, cm) < 0)
                        return -ENOMEM;
        }
        int r = gh_paginate(c, rp, all, &page);
        if (r < 0)
                return r;
        json_array_foreach (page, i, cm) {
                if (json_array_append_new(out, gh_render_review_comment(c, repo, pr, cm)) < 0)
                        return -ENOMEM;
        }
        return twin_reply_body(rp, 200, TAKE_PTR(out));
}

/* ------------------------------------------------------------------ diff positions */

/*
 * The diff hunk of path's patch in pr up to line (on side RIGHT: a line of the new file,
 * LEFT: of the old one), as review comments carry it. Returns 0 with *ret (new string),
 * -ENOENT when path is not in the diff, -ERANGE when the line is in none of its hunks.
 */
static int diff_hunk(TwinCall *c, json_t *repo, json_t *pr, const char *path, int64_t line,
                     bool right, char **ret)
{
        _cleanup_json_ json_t *files = gh_pr_files(c, repo, pr);
        if (!files)
                return -ENOMEM;
        const char *patch = NULL;
        size_t i;
        json_t *f;
        json_array_foreach (files, i, f) {
                if (streq_ptr(json_get_str(f, "filename"), path))
                        patch = json_get_str(f, "patch");
        }
        if (!patch)
                return -ENOENT;
        const char *hunk = NULL;
        long o = 0, n = 0;
        for (const char *p = patch; *p;) {
                size_t l = strcspn(p, "\n");
                long os, ns;
                if (p[0] == '@' && sscanf(p, "@@ -%ld%*[^+]+%ld", &os, &ns) == 2) {
                        hunk = p;
                        o = os;
                        n = ns;
                } else if (hunk && p[0] != '\\') {
                        bool old_line = p[0] != '+', new_line = p[0] != '-';
                        if ((right && new_line && n == line) || (!right && old_line && o == line)) {
                                *ret = strndup(hunk, (size_t)(p + l - hunk));
                                return *ret ? 0 : -ENOMEM;
                        }
                        o += old_line;
                        n += new_line;
                }
                p += l + (p[l] == '\n');
        }
        return -ERANGE;
}

static int thread_invalid(TwinReply *rp, const char *field)
{
        return twin_reply_body(rp, 422,
                               json_pack("{s:s, s:[{s:s, s:s, s:s, s:s}], s:s, s:s}", "message",
                                         "Validation Failed", "errors", "resource",
                                         "PullRequestReviewComment", "code", "custom", "field",
                                         field, "message", "could not be resolved",
                                         "documentation_url", GH_DOCS_URL, "status", "422"));
}

/* "Unprocessable Entity" with one error sentence, as github.com answers review refusals. */
static int unprocessable(TwinReply *rp, const char *sentence)
{
        return twin_reply_body(rp, 422,
                               json_pack("{s:s, s:[s], s:s, s:s}", "message",
                                         "Unprocessable Entity", "errors", sentence,
                                         "documentation_url", GH_DOCS_URL, "status", "422"));
}

/*
 * A new review comment row on pr from spec (an object with path, line or position, side,
 * start_line, body), attached to review review_id. 1 with *ret (new), 0 with rp holding the
 * refusal.
 */
static int new_thread_comment(TwinCall *c, TwinReply *rp, json_t *repo, json_t *pr,
                              const json_t *spec, int64_t review_id, const char *commit_id,
                              json_t **ret)
{
        const char *path, *body, *side = "RIGHT";
        int64_t line, start = 0;
        if (twin_arg_str(spec, "path", &path) < 0)
                return gh_invalid(rp, "PullRequestReviewComment", "path", "missing_field");
        if (twin_arg_str(spec, "body", &body) < 0 || !body[0])
                return gh_invalid(rp, "PullRequestReviewComment", "body", "missing_field");
        int r0 = gh_pulls_too_long(rp, "PullRequestReviewComment", "body", body, GH_PR_BODY_MAX);
        if (r0 != 0)
                return r0 < 0 ? r0 : 0;
        if (twin_arg_str(spec, "side", &side) == -EINVAL ||
            (!streq(side, "RIGHT") && !streq(side, "LEFT")))
                return gh_invalid(rp, "PullRequestReviewComment", "side", "invalid");
        if (twin_arg_int(spec, "line", 1, INT32_MAX, &line) < 0 &&
            twin_arg_int(spec, "position", 1, INT32_MAX, &line) < 0)
                return thread_invalid(rp, "pull_request_review_thread.line");
        if (twin_arg_int(spec, "start_line", 1, INT32_MAX, &start) == -EINVAL ||
            (start && start >= line))
                return thread_invalid(rp, "pull_request_review_thread.start_line");
        _cleanup_free_ char *hunk = NULL;
        int r = diff_hunk(c, repo, pr, path, line, streq(side, "RIGHT"), &hunk);
        if (r == -ENOENT)
                return thread_invalid(rp, "pull_request_review_thread.path");
        if (r == -ERANGE)
                return thread_invalid(rp, "pull_request_review_thread.line");
        if (r < 0)
                return r;
        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        int64_t id = gh_alloc_id(c->world);
        json_t *cm = json_pack("{s:I, s:o, s:I, s:s, s:I, s:s, s:s, s:s, s:s, s:s, s:n, s:s, "
                               "s:s}",
                               "id", (json_int_t)id, "node_id",
                               gh_node_id("PullRequestReviewComment", id), "pull_request_review_id",
                               (json_int_t)review_id, "path", path, "line", (json_int_t)line,
                               "side", side, "commit_id", commit_id, "body", body, "user",
                               viewer_of(c), "diff_hunk", hunk, "in_reply_to_id", "created_at", now,
                               "updated_at", now);
        if (!cm)
                return -ENOMEM;
        if (start && json_object_set_new(cm, "start_line", json_integer(start)) < 0) {
                json_decref(cm);
                return -ENOMEM;
        }
        *ret = cm;
        return 1;
}

/* ------------------------------------------------------------------ reviews */

static json_t *viewer_pending(TwinCall *c, json_t *pr)
{
        size_t i;
        json_t *rv;
        json_array_foreach (json_object_get(pr, "reviews"), i, rv) {
                if (is_pending(rv) &&
                    strcasecmp(strempty(json_get_str(rv, "user")), strempty(viewer_of(c))) == 0)
                        return rv;
        }
        return NULL;
}

/* The review state an event gives, or NULL for an unknown event. */
static const char *event_state(const char *event)
{
        return streq(event, "APPROVE")           ? "APPROVED"
               : streq(event, "REQUEST_CHANGES") ? "CHANGES_REQUESTED"
               : streq(event, "COMMENT")         ? "COMMENTED"
                                                 : NULL;
}

/*
 * Whether the viewer may submit event on pr with body: github.com refuses approving or
 * requesting changes on one's own pull request, and a REQUEST_CHANGES or COMMENT review
 * without a body. 1 fine, 0 with rp holding the refusal.
 */
static int check_event(TwinCall *c, TwinReply *rp, json_t *pr, const char *event, const char *body,
                       bool has_comments)
{
        bool own = strcasecmp(strempty(json_get_str(pr, "user")), strempty(viewer_of(c))) == 0;
        if (own && streq(event, "APPROVE"))
                return unprocessable(rp, "Can not approve your own pull request");
        if (own && streq(event, "REQUEST_CHANGES"))
                return unprocessable(rp, "Can not request changes on your own pull request");
        if ((streq(event, "REQUEST_CHANGES") || (streq(event, "COMMENT") && !has_comments)) &&
            (!body || !body[0]))
                return unprocessable(rp, "Body is required when the review event is "
                                         "REQUEST_CHANGES or COMMENT");
        return 1;
}

/* After a submitted review its author is no longer a requested reviewer (github.com). */
static int unrequest(json_t *pr, const char *login)
{
        json_t *req = json_object_get(pr, "requested_reviewers");
        for (size_t i = json_array_size(req); i-- > 0;)
                if (strcasecmp(strempty(json_string_value(json_array_get(req, i))), login) == 0 &&
                    json_array_remove(req, i) < 0)
                        return -ENOMEM;
        return 0;
}

static int create_review(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *pr;
        int r = gh_arg_repo_pull(c, rp, &repo, &pr);
        if (r <= 0)
                return r;
        const char *event = NULL, *body = NULL, *commit_id = NULL;
        if (twin_arg_str(c->args, "event", &event) == -EINVAL ||
            (event && !event[0] ? (event = NULL, false) : event && !event_state(event)))
                return gh_invalid(rp, "PullRequestReview", "event", "invalid");
        if (twin_arg_str(c->args, "body", &body) == -EINVAL)
                return gh_invalid(rp, "PullRequestReview", "body", "invalid");
        if ((r = gh_pulls_too_long(rp, "PullRequestReview", "body", body, GH_PR_BODY_MAX)) != 0)
                return r < 0 ? r : 0;
        if (gh_arg_str2(c, "commit_id", "commitID", &commit_id) == -EINVAL)
                return gh_invalid(rp, "PullRequestReview", "commit_id", "invalid");
        json_t *specs = json_object_get(c->args, "comments");
        if (specs && !json_is_array(specs) && !json_is_null(specs))
                return gh_invalid(rp, "PullRequestReview", "comments", "invalid");
        const char *head = gh_pr_head_sha(repo, pr);
        if (commit_id && !gh_commit_find(repo, commit_id)) {
                _cleanup_free_ char *m = NULL;
                if (asprintf(&m, "No commit found for SHA: %s", commit_id) < 0)
                        return -ENOMEM;
                return gh_fail(rp, 422, m);
        }
        commit_id = commit_id ? json_get_str(gh_commit_find(repo, commit_id), "sha") : head;
        if (!commit_id)
                return unprocessable(rp, "Pull request has no commits");
        if (event && (r = check_event(c, rp, pr, event, body, json_array_size(specs) > 0)) <= 0)
                return r;
        if (!event && viewer_pending(c, pr))
                return unprocessable(rp, "User can only have one pending review per pull request");

        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        _cleanup_json_ json_t *mark = json_incref(json_object_get(c->world, "next_id"));
        int64_t id = gh_alloc_id(c->world);
        _cleanup_json_ json_t *rv =
                json_pack("{s:I, s:o, s:s, s:s, s:s, s:s, s:s}", "id", (json_int_t)id, "node_id",
                          gh_node_id("PullRequestReview", id), "user", viewer_of(c), "body",
                          strempty(body), "state", event ? event_state(event) : "PENDING",
                          "commit_id", commit_id, "submitted_at", now);
        _cleanup_json_ json_t *comments = json_array();
        if (!rv || !comments)
                return -ENOMEM;
        size_t i;
        json_t *spec;
        json_array_foreach (specs, i, spec) {
                json_t *cm = NULL;
                if (!json_is_object(spec)) {
                        json_object_set(c->world, "next_id", mark);
                        return gh_invalid(rp, "PullRequestReview", "comments", "invalid");
                }
                if ((r = new_thread_comment(c, rp, repo, pr, spec, id, commit_id, &cm)) <= 0) {
                        /* a refused review takes no ids: the world is as it was */
                        json_object_set(c->world, "next_id", mark);
                        return r;
                }
                if (json_array_append_new(comments, cm) < 0)
                        return -ENOMEM;
        }
        _cleanup_json_ json_t *before = json_deep_copy(pr);
        if (!before || json_array_append(gh_repo_list(pr, "reviews"), rv) < 0 ||
            json_array_extend(gh_repo_list(pr, "review_comments"), comments) < 0 ||
            (event && unrequest(pr, viewer_of(c)) < 0))
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, NULL, rv)) < 0)
                return r;
        return twin_reply_body(rp, 200, gh_render_review(c, repo, pr, rv));
}

/* The official server's sentence for a review it created (pending or submitted). */
static const char *created_sentence(TwinReply *rp)
{
        return streq_ptr(json_get_str(rp->body, "state"), "PENDING")
                       ? "pending pull request created"
                       : "pull request review submitted successfully";
}

int gh_act_create_pull_request_review(TwinCall *c, TwinReply *rp)
{
        int r = create_review(c, rp);
        if (r < 0 || c->request || rp->status != 200)
                return r;
        /* MCP: {message} (the tool's output schema) */
        return gh_mcp_reply(rp, json_pack("{s:s}", "message", created_sentence(rp)));
}

int gh_act_get_pull_request_review(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *pr;
        int64_t id;
        int r = gh_arg_repo_pull(c, rp, &repo, &pr);
        if (r <= 0)
                return r;
        r = twin_arg_int(c->args, "review_id", 1, INT64_MAX, &id);
        json_t *rv = r < 0 ? NULL : gh_review_find(pr, id);
        if (!rv || !review_visible(c, rv))
                return gh_not_found(rp);
        return twin_reply_body(rp, 200, gh_render_review(c, repo, pr, rv));
}

/*
 * The review a submit or delete acts on: args review_id (REST) or, without one, the viewer's
 * pending review (the MCP server's submit_pending / delete_pending). 1, or 0 with rp set.
 */
static int arg_pending(TwinCall *c, TwinReply *rp, json_t *pr, json_t **ret)
{
        int64_t id;
        int r = twin_arg_int(c->args, "review_id", 1, INT64_MAX, &id);
        json_t *rv = r == 0 ? gh_review_find(pr, id) : r == -ENOENT ? viewer_pending(c, pr) : NULL;
        if (!rv && r == -ENOENT)
                return unprocessable(rp, "No pending review found for the viewer");
        if (!rv || !review_visible(c, rv))
                return gh_not_found(rp);
        *ret = rv;
        return 1;
}

static int submit_review(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *pr, *rv;
        int r = gh_arg_repo_pull(c, rp, &repo, &pr);
        if (r <= 0)
                return r;
        const char *event = NULL, *body = NULL;
        if ((r = twin_arg_str(c->args, "event", &event)) < 0 || !event_state(event))
                return gh_invalid(rp, "PullRequestReview", "event",
                                  r == -ENOENT ? "missing_field" : "invalid");
        if (twin_arg_str(c->args, "body", &body) == -EINVAL)
                return gh_invalid(rp, "PullRequestReview", "body", "invalid");
        if ((r = gh_pulls_too_long(rp, "PullRequestReview", "body", body, GH_PR_BODY_MAX)) != 0)
                return r < 0 ? r : 0;
        if ((r = arg_pending(c, rp, pr, &rv)) <= 0)
                return r;
        if (!is_pending(rv))
                return unprocessable(rp, "Can not submit a non-pending review");
        bool has_comments = false;
        size_t i;
        json_t *cm;
        json_array_foreach (json_object_get(pr, "review_comments"), i, cm) {
                has_comments = has_comments || review_of_comment(pr, cm) == rv;
        }
        const char *b = body ? body : json_get_str(rv, "body");
        if ((r = check_event(c, rp, pr, event, b, has_comments)) <= 0)
                return r;
        _cleanup_json_ json_t *before = json_deep_copy(rv);
        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        if (!before || json_object_set_new(rv, "state", json_string(event_state(event))) < 0 ||
            (body && json_object_set_new(rv, "body", json_string(body)) < 0) ||
            json_object_set_new(rv, "submitted_at", json_string(now)) < 0 ||
            unrequest(pr, viewer_of(c)) < 0)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, before, rv)) < 0)
                return r;
        return twin_reply_body(rp, 200, gh_render_review(c, repo, pr, rv));
}

static int delete_review(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *pr, *rv;
        int r = gh_arg_repo_pull(c, rp, &repo, &pr);
        if (r <= 0)
                return r;
        if ((r = arg_pending(c, rp, pr, &rv)) <= 0)
                return r;
        if (!is_pending(rv))
                return unprocessable(rp, "Can not delete a non-pending pull request review");
        _cleanup_json_ json_t *before = json_incref(rv);
        _cleanup_json_ json_t *body = gh_render_review(c, repo, pr, rv);
        if (!body)
                return -ENOMEM;
        json_t *comments = json_object_get(pr, "review_comments");
        for (size_t i = json_array_size(comments); i-- > 0;)
                if (review_of_comment(pr, json_array_get(comments, i)) == rv &&
                    json_array_remove(comments, i) < 0)
                        return -ENOMEM;
        json_t *reviews = json_object_get(pr, "reviews");
        for (size_t i = json_array_size(reviews); i-- > 0;)
                if (json_array_get(reviews, i) == rv && json_array_remove(reviews, i) < 0)
                        return -ENOMEM;
        if ((r = twin_reply_mutation(rp, before, NULL)) < 0)
                return r;
        return twin_reply_body(rp, 200, TAKE_PTR(body));
}

int gh_act_pull_request_review_write(TwinCall *c, TwinReply *rp)
{
        const char *method;
        int r = twin_arg_str(c->args, "method", &method);
        if (r < 0)
                return gh_invalid(rp, "PullRequestReview", "method",
                                  r == -ENOENT ? "missing_field" : "invalid");
        const char *sentence;
        if (streq(method, "create")) {
                r = create_review(c, rp);
                sentence = rp->status == 200 ? created_sentence(rp) : NULL;
        } else if (streq(method, "submit_pending")) {
                r = submit_review(c, rp);
                sentence = "pending pull request review successfully submitted";
        } else if (streq(method, "delete_pending")) {
                r = delete_review(c, rp);
                sentence = "pending pull request review successfully deleted";
        } else
                return gh_invalid(rp, "PullRequestReview", "method", "invalid");
        /* MCP answers with the official server's sentence; REST with the review */
        if (r < 0 || c->request || rp->status != 200)
                return r;
        return gh_mcp_reply_text(rp, sentence);
}

/* ------------------------------------------------------------------ review comments */

/* The review comment id of pr (any pull request of repo when pr is NULL). */
static json_t *comment_find(json_t *repo, json_t **pr, int64_t id)
{
        size_t i, j;
        json_t *p, *cm;
        json_array_foreach (json_object_get(repo, "pull_requests"), i, p) {
                if (*pr && p != *pr)
                        continue;
                json_array_foreach (json_object_get(p, "review_comments"), j, cm) {
                        if (json_integer_value(json_object_get(cm, "id")) == id) {
                                *pr = p;
                                return cm;
                        }
                }
        }
        return NULL;
}

/*
 * A reply to the thread of comment to (its root when to is itself a reply): same path, line
 * and commit, its own COMMENTED review as github.com makes for a lone comment.
 */
static int add_reply(TwinCall *c, TwinReply *rp, json_t *repo, json_t *pr, json_t *to,
                     const char *body)
{
        json_t *root = to;
        json_t *rid = json_object_get(to, "in_reply_to_id");
        if (json_is_integer(rid)) {
                json_t *p = pr, *x = comment_find(repo, &p, json_integer_value(rid));
                if (x)
                        root = x;
        }
        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        int64_t rvid = gh_alloc_id(c->world), id = gh_alloc_id(c->world);
        _cleanup_json_ json_t *rv = json_pack(
                "{s:I, s:o, s:s, s:s, s:s, s:O, s:s}", "id", (json_int_t)rvid, "node_id",
                gh_node_id("PullRequestReview", rvid), "user", viewer_of(c), "body", "", "state",
                "COMMENTED", "commit_id", json_object_get(root, "commit_id"), "submitted_at", now);
        _cleanup_json_ json_t *cm = json_deep_copy(root);
        if (!rv || !cm)
                return -ENOMEM;
        json_object_del(cm, "reactions");
        if (json_object_set_new(cm, "id", json_integer(id)) < 0 ||
            json_object_set_new(cm, "node_id", gh_node_id("PullRequestReviewComment", id)) < 0 ||
            json_object_set_new(cm, "pull_request_review_id", json_integer(rvid)) < 0 ||
            json_object_set_new(cm, "body", json_string(body)) < 0 ||
            json_object_set_new(cm, "user", json_string(viewer_of(c))) < 0 ||
            json_object_set(cm, "in_reply_to_id", json_object_get(root, "id")) < 0 ||
            json_object_set_new(cm, "created_at", json_string(now)) < 0 ||
            json_object_set_new(cm, "updated_at", json_string(now)) < 0 ||
            json_array_append(gh_repo_list(pr, "reviews"), rv) < 0 ||
            json_array_append(gh_repo_list(pr, "review_comments"), cm) < 0)
                return -ENOMEM;
        int r = twin_reply_mutation(rp, NULL, cm);
        if (r < 0)
                return r;
        _cleanup_json_ json_t *out = gh_render_review_comment(c, repo, pr, cm);
        if (!out)
                return -ENOMEM;
        if (!c->request) /* MCP: MinimalResponse {id, url} */
                return twin_reply_body(rp, 201,
                                       gh_mcp_minimal_response(json_object_get(out, "id"),
                                                               json_get_str(out, "html_url")));
        return twin_reply_body(rp, 201, TAKE_PTR(out));
}

int gh_act_create_pull_request_review_comment(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *pr;
        int r = gh_arg_repo_pull(c, rp, &repo, &pr);
        if (r <= 0)
                return r;
        const char *body, *commit_id = NULL;
        if ((r = twin_arg_str(c->args, "body", &body)) < 0 || !body[0])
                return gh_invalid(rp, "PullRequestReviewComment", "body",
                                  r == -EINVAL ? "invalid" : "missing_field");
        if ((r = gh_pulls_too_long(rp, "PullRequestReviewComment", "body", body, GH_PR_BODY_MAX)) !=
            0)
                return r < 0 ? r : 0;
        int64_t to_id;
        r = twin_arg_int(c->args, "in_reply_to", 1, INT64_MAX, &to_id);
        if (r == -EINVAL)
                return gh_invalid(rp, "PullRequestReviewComment", "in_reply_to", "invalid");
        if (r == 0) {
                json_t *p = pr, *to = comment_find(repo, &p, to_id);
                if (!to)
                        return gh_not_found(rp);
                return add_reply(c, rp, repo, pr, to, body);
        }
        if (twin_arg_str(c->args, "commit_id", &commit_id) == -EINVAL ||
            (commit_id && !gh_commit_find(repo, commit_id)))
                return gh_invalid(rp, "PullRequestReviewComment", "commit_id", "invalid");
        commit_id = commit_id ? json_get_str(gh_commit_find(repo, commit_id), "sha")
                              : gh_pr_head_sha(repo, pr);
        if (!commit_id)
                return gh_invalid(rp, "PullRequestReviewComment", "commit_id", "missing_field");
        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        _cleanup_json_ json_t *mark = json_incref(json_object_get(c->world, "next_id"));
        int64_t rvid = gh_alloc_id(c->world);
        json_t *cm = NULL;
        if ((r = new_thread_comment(c, rp, repo, pr, c->args, rvid, commit_id, &cm)) <= 0) {
                json_object_set(c->world, "next_id", mark); /* refused: no ids taken */
                return r;
        }
        _cleanup_json_ json_t *row = cm;
        _cleanup_json_ json_t *rv =
                json_pack("{s:I, s:o, s:s, s:s, s:s, s:s, s:s}", "id", (json_int_t)rvid, "node_id",
                          gh_node_id("PullRequestReview", rvid), "user", viewer_of(c), "body", "",
                          "state", "COMMENTED", "commit_id", commit_id, "submitted_at", now);
        if (!rv || json_array_append(gh_repo_list(pr, "reviews"), rv) < 0 ||
            json_array_append(gh_repo_list(pr, "review_comments"), row) < 0)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, NULL, row)) < 0)
                return r;
        return twin_reply_body(rp, 201, gh_render_review_comment(c, repo, pr, row));
}

int gh_act_add_reply_to_pull_request_comment(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        int64_t id, n;
        r = twin_arg_int(c->args, "comment_id", 1, INT64_MAX, &id);
        if (r == -ENOENT)
                r = twin_arg_int(c->args, "commentId", 1, INT64_MAX, &id);
        if (r == -ENOENT)
                return gh_invalid(rp, "PullRequestReviewComment", "comment_id", "missing_field");
        json_t *pr = NULL;
        r = gh_arg_pull_number(c, &n);
        if (r == 0 && !(pr = gh_number_find(repo, "pull_requests", n, NULL)))
                return gh_not_found(rp);
        json_t *to = comment_find(repo, &pr, id);
        if (!to)
                return gh_not_found(rp);
        const char *body = NULL, *reaction = NULL;
        if (twin_arg_str(c->args, "body", &body) == -EINVAL)
                return gh_invalid(rp, "PullRequestReviewComment", "body", "invalid");
        if ((r = gh_pulls_too_long(rp, "PullRequestReviewComment", "body", body, GH_PR_BODY_MAX)) !=
            0)
                return r < 0 ? r : 0;
        static const char *const reactions[] = {"+1",    "-1",     "laugh",  "confused",
                                                "heart", "hooray", "rocket", "eyes"};
        bool known = false;
        if (twin_arg_str(c->args, "reaction", &reaction) == -EINVAL)
                return gh_invalid(rp, "Reaction", "content", "invalid");
        for (size_t k = 0; reaction && k < ELEMENTSOF(reactions); k++)
                known = known || streq(reaction, reactions[k]);
        if (reaction && !known)
                return gh_invalid(rp, "Reaction", "content", "invalid");
        if ((!body || !body[0]) && !reaction)
                return gh_invalid(rp, "PullRequestReviewComment", "body", "missing_field");
        if (reaction) {
                /* reactions are counted on the comment row: {"+1": 2, ...} */
                _cleanup_json_ json_t *before = json_deep_copy(to);
                json_t *counts = json_object_get(to, "reactions");
                if (!counts && json_object_set_new(to, "reactions", counts = json_object()) < 0)
                        return -ENOMEM;
                if (!before ||
                    json_object_set_new(
                            counts, reaction,
                            json_integer(json_integer_value(json_object_get(counts, reaction)) +
                                         1)) < 0)
                        return -ENOMEM;
                if (!body || !body[0]) {
                        if ((r = twin_reply_mutation(rp, before, to)) < 0)
                                return r;
                        if (!c->request) {
                                /* MCP: MinimalResponse {id, url} of the reaction */
                                _cleanup_free_ char *url = NULL;
                                int64_t rid = gh_alloc_id(c->world);
                                _cleanup_json_ json_t *jid = json_integer(rid);
                                if (asprintf(&url,
                                             "%s/repos/%s/%s/pulls/comments/%lld/reactions/%lld",
                                             c->base_url, json_get_str(repo, "owner"),
                                             json_get_str(repo, "name"), (long long)id,
                                             (long long)rid) < 0)
                                        return -ENOMEM;
                                return twin_reply_body(rp, 201, gh_mcp_minimal_response(jid, url));
                        }
                        return twin_reply_body(rp, 201,
                                               json_pack("{s:s, s:o}", "content", reaction, "user",
                                                         gh_render_user(c, viewer_of(c))));
                }
        }
        return add_reply(c, rp, repo, pr, to, body);
}

/* ------------------------------------------------------------------ requested reviewers */

int gh_check_reviewers(TwinCall *c, TwinReply *rp, json_t *repo, json_t *pr, json_t *logins)
{
        const char *author = pr ? json_get_str(pr, "user") : viewer_of(c);
        size_t i;
        json_t *l;
        json_array_foreach (logins, i, l) {
                const char *login = json_string_value(l);
                if (strcasecmp(strempty(login), strempty(author)) == 0)
                        return gh_invalid_custom(rp, "PullRequest",
                                                 "Review cannot be requested from pull request "
                                                 "author.");
                json_t *u = gh_user_find(c->world, login);
                if (!u || !gh_repo_member(repo, login)) {
                        _cleanup_free_ char *m = NULL;
                        if (asprintf(&m,
                                     "Reviews may only be requested from collaborators. One or "
                                     "more of the users or teams you specified is not a "
                                     "collaborator of the %s/%s repository.",
                                     json_get_str(repo, "owner"), json_get_str(repo, "name")) < 0)
                                return -ENOMEM;
                        return gh_invalid_custom(rp, "PullRequest", m);
                }
                /* the world's spelling of the login */
                if (json_array_set_new(logins, i, json_string(json_get_str(u, "login"))) < 0)
                        return -ENOMEM;
        }
        return 1;
}

int gh_act_request_reviewers(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *pr;
        int r = gh_arg_repo_pull(c, rp, &repo, &pr);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *logins = NULL;
        if ((r = twin_arg_strv(c->args, "reviewers", &logins)) == -EINVAL)
                return gh_invalid(rp, "PullRequest", "reviewers", "invalid");
        if (r == -ENOENT && !json_object_get(c->args, "team_reviewers"))
                return gh_invalid(rp, "PullRequest", "reviewers", "missing_field");
        if (logins && (r = gh_check_reviewers(c, rp, repo, pr, logins)) <= 0)
                return r;
        _cleanup_json_ json_t *before = json_deep_copy(pr);
        json_t *req = gh_repo_list(pr, "requested_reviewers");
        size_t i;
        json_t *l;
        if (!before || !req)
                return -ENOMEM;
        json_array_foreach (logins, i, l) {
                if (!gh_strv_has(req, json_string_value(l)) && json_array_append(req, l) < 0)
                        return -ENOMEM;
        }
        if ((r = gh_pr_touch(c, rp, before, pr)) < 0)
                return r;
        return twin_reply_body(rp, 201, gh_render_pull(c, repo, pr, false));
}

int gh_act_remove_requested_reviewers(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *pr;
        int r = gh_arg_repo_pull(c, rp, &repo, &pr);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *logins = NULL;
        if ((r = twin_arg_strv(c->args, "reviewers", &logins)) < 0)
                return gh_invalid(rp, "PullRequest", "reviewers",
                                  r == -ENOENT ? "missing_field" : "invalid");
        _cleanup_json_ json_t *before = json_deep_copy(pr);
        if (!before)
                return -ENOMEM;
        size_t i;
        json_t *l;
        json_array_foreach (logins, i, l) {
                if (unrequest(pr, json_string_value(l)) < 0)
                        return -ENOMEM;
        }
        if ((r = gh_pr_touch(c, rp, before, pr)) < 0)
                return r;
        return twin_reply_body(rp, 200, gh_render_pull(c, repo, pr, false));
}

int gh_act_list_requested_reviewers(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *pr;
        int r = gh_arg_repo_pull(c, rp, &repo, &pr);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *users = json_array();
        size_t i;
        json_t *l;
        if (!users)
                return -ENOMEM;
        json_array_foreach (json_object_get(pr, "requested_reviewers"), i, l) {
                if (json_array_append_new(users, gh_render_user(c, json_string_value(l))) < 0)
                        return -ENOMEM;
        }
        return twin_reply_body(rp, 200,
                               json_pack("{s:o, s:[]}", "users", TAKE_PTR(users), "teams"));
}

/* ------------------------------------------------------------------ seed */

int gh_seed_reviews(TwinSeed *s, json_t *repo, const json_t *v, json_t *pr, const char *path)
{
        static const char *const keys[] = {"user",      "author",       "state", "body",
                                           "commit_id", "submitted_at", "id"};
        json_t *a;
        int r = twin_seed_array(s, v, "reviews", path, &a);
        if (r < 0)
                return r;
        size_t i;
        json_t *e;
        json_array_foreach (a, i, e) {
                char p[320];
                snprintf(p, sizeof(p), "%s.reviews[%zu]", path, i);
                if (!json_is_object(e))
                        return twin_seed_error(s->err, s->errlen, "%s: must be an object", p);
                const char *user = NULL, *author = NULL, *state, *body, *commit, *at;
                if ((r = twin_seed_known(s, e, p, "review", keys, ELEMENTSOF(keys))) < 0 ||
                    (r = twin_seed_str(s, e, "user", p, NULL, TWIN_NULL_REFUSED, &user)) < 0 ||
                    (r = twin_seed_str(s, e, "author", p, NULL, TWIN_NULL_REFUSED, &author)) < 0 ||
                    (r = twin_seed_str(s, e, "state", p, "COMMENTED", TWIN_NULL_REFUSED, &state)) <
                            0 ||
                    (r = twin_seed_str(s, e, "body", p, "", TWIN_NULL_ABSENT, &body)) < 0 ||
                    (r = twin_seed_str(s, e, "commit_id", p, json_get_str(pr, "head_sha"),
                                       TWIN_NULL_REFUSED, &commit)) < 0 ||
                    (r = twin_seed_str(s, e, "submitted_at", p, json_get_str(pr, "updated_at"),
                                       TWIN_NULL_REFUSED, &at)) < 0)
                        return r;
                user = user ? user : author;
                if (!user || !gh_login_valid(user) || !gh_user_ensure(s->world, user, "User"))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.user: needs the reviewer's GitHub login", p);
                /* the API's states, or the events that make them (APPROVE, ...), any case */
                static const struct {
                        const char *in, *state;
                } states[] = {{"APPROVED", "APPROVED"},
                              {"APPROVE", "APPROVED"},
                              {"CHANGES_REQUESTED", "CHANGES_REQUESTED"},
                              {"REQUEST_CHANGES", "CHANGES_REQUESTED"},
                              {"COMMENTED", "COMMENTED"},
                              {"COMMENT", "COMMENTED"},
                              {"PENDING", "PENDING"},
                              {"DISMISSED", "DISMISSED"}};
                const char *st = NULL;
                for (size_t k = 0; k < ELEMENTSOF(states) && !st; k++)
                        if (strcasecmp(state, states[k].in) == 0)
                                st = states[k].state;
                if (!st)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.state: must be APPROVED, CHANGES_REQUESTED, "
                                               "COMMENTED, PENDING or DISMISSED",
                                               p);
                if (!gh_time_valid(at))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.submitted_at: must be a UTC time like "
                                               "\"2026-01-01T00:00:00Z\"",
                                               p);
                const char *sha = commit ? gh_ref_sha(repo, commit) : NULL;
                if (commit && !sha)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.commit_id: no commit of the repository", p);
                int64_t id = gh_alloc_id(s->world);
                json_t *rv = json_pack("{s:I, s:o, s:s, s:s, s:s, s:s?, s:s}", "id", (json_int_t)id,
                                       "node_id", gh_node_id("PullRequestReview", id), "user",
                                       json_get_str(gh_user_find(s->world, user), "login"), "body",
                                       body, "state", st, "commit_id", sha, "submitted_at", at);
                if (!rv || json_array_append_new(json_object_get(pr, "reviews"), rv) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* ------------------------------------------------------------------ edits */

static int arg_review(TwinCall *c, TwinReply *rp, json_t **ret_repo, json_t **ret_pr,
                      json_t **ret_rv)
{
        int64_t id;
        int r = gh_arg_repo_pull(c, rp, ret_repo, ret_pr);
        if (r <= 0)
                return r;
        r = twin_arg_int(c->args, "review_id", 1, INT64_MAX, &id);
        json_t *rv = r < 0 ? NULL : gh_review_find(*ret_pr, id);
        if (!rv || !review_visible(c, rv))
                return gh_not_found(rp);
        *ret_rv = rv;
        return 1;
}

/* PUT .../reviews/{review_id}: a new body for one's own review. */
int gh_act_update_pull_request_review(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *pr, *rv;
        const char *body;
        int r = arg_review(c, rp, &repo, &pr, &rv);
        if (r <= 0)
                return r;
        if ((r = twin_arg_str(c->args, "body", &body)) < 0)
                return gh_invalid(rp, "PullRequestReview", "body",
                                  r == -ENOENT ? "missing_field" : "invalid");
        if ((r = gh_pulls_too_long(rp, "PullRequestReview", "body", body, GH_PR_BODY_MAX)) != 0)
                return r < 0 ? r : 0;
        if (strcasecmp(strempty(json_get_str(rv, "user")), strempty(viewer_of(c))) != 0)
                return gh_fail(rp, 403, "Must be the author of the review to edit it");
        _cleanup_json_ json_t *before = json_deep_copy(rv);
        if (!before || json_object_set_new(rv, "body", json_string(body)) < 0)
                return -ENOMEM;
        if (!json_equal(before, rv) && (r = twin_reply_mutation(rp, before, rv)) < 0)
                return r;
        return twin_reply_body(rp, 200, gh_render_review(c, repo, pr, rv));
}

/* PUT .../reviews/{review_id}/dismissals: a submitted review becomes DISMISSED. */
int gh_act_dismiss_pull_request_review(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *pr, *rv;
        const char *message;
        int r = arg_review(c, rp, &repo, &pr, &rv);
        if (r <= 0)
                return r;
        if ((r = twin_arg_str(c->args, "message", &message)) < 0 || !message[0])
                return gh_invalid(rp, "PullRequestReview", "message",
                                  r == -EINVAL ? "invalid" : "missing_field");
        if (!gh_repo_member(repo, strempty(viewer_of(c))))
                return gh_fail(rp, 403, "Must have push access to repository");
        if (is_pending(rv))
                return unprocessable(rp, "Can not dismiss a pending review");
        _cleanup_json_ json_t *before = json_deep_copy(rv);
        if (!before || json_object_set_new(rv, "state", json_string("DISMISSED")) < 0)
                return -ENOMEM;
        if (!json_equal(before, rv) && (r = twin_reply_mutation(rp, before, rv)) < 0)
                return r;
        return twin_reply_body(rp, 200, gh_render_review(c, repo, pr, rv));
}

/* The review comment args comment_id names in repo, visible to the viewer. 1 or 0 (404). */
static int arg_comment(TwinCall *c, TwinReply *rp, json_t **ret_repo, json_t **ret_pr,
                       json_t **ret_cm)
{
        json_t *repo, *pr = NULL;
        int64_t id;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        r = twin_arg_int(c->args, "comment_id", 1, INT64_MAX, &id);
        json_t *cm = r < 0 ? NULL : comment_find(repo, &pr, id);
        json_t *rv = cm ? review_of_comment(pr, cm) : NULL;
        if (!cm || (rv && !review_visible(c, rv)))
                return gh_not_found(rp);
        *ret_repo = repo;
        *ret_pr = pr;
        *ret_cm = cm;
        return 1;
}

int gh_act_get_pull_request_review_comment(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *pr, *cm;
        int r = arg_comment(c, rp, &repo, &pr, &cm);
        if (r <= 0)
                return r;
        return twin_reply_body(rp, 200, gh_render_review_comment(c, repo, pr, cm));
}

int gh_act_update_pull_request_review_comment(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *pr, *cm;
        const char *body;
        int r = arg_comment(c, rp, &repo, &pr, &cm);
        if (r <= 0)
                return r;
        if ((r = twin_arg_str(c->args, "body", &body)) < 0 || !body[0])
                return gh_invalid(rp, "PullRequestReviewComment", "body",
                                  r == -EINVAL ? "invalid" : "missing_field");
        if ((r = gh_pulls_too_long(rp, "PullRequestReviewComment", "body", body, GH_PR_BODY_MAX)) !=
            0)
                return r < 0 ? r : 0;
        if (strcasecmp(strempty(json_get_str(cm, "user")), strempty(viewer_of(c))) != 0)
                return gh_fail(rp, 403, "Must be the author of the comment to edit it");
        _cleanup_json_ json_t *before = json_deep_copy(cm);
        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        if (!before || json_object_set_new(cm, "body", json_string(body)) < 0)
                return -ENOMEM;
        if (!json_equal(before, cm)) {
                if (json_object_set_new(cm, "updated_at", json_string(now)) < 0 ||
                    (r = twin_reply_mutation(rp, before, cm)) < 0)
                        return r < 0 ? r : -ENOMEM;
        }
        return twin_reply_body(rp, 200, gh_render_review_comment(c, repo, pr, cm));
}

int gh_act_delete_pull_request_review_comment(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *pr, *cm;
        int r = arg_comment(c, rp, &repo, &pr, &cm);
        if (r <= 0)
                return r;
        if (strcasecmp(strempty(json_get_str(cm, "user")), strempty(viewer_of(c))) != 0 &&
            !gh_repo_member(repo, strempty(viewer_of(c))))
                return gh_fail(rp, 403, "Must have push access to repository");
        _cleanup_json_ json_t *before = json_incref(cm);
        json_t *list = json_object_get(pr, "review_comments");
        for (size_t i = json_array_size(list); i-- > 0;)
                if (json_array_get(list, i) == cm && json_array_remove(list, i) < 0)
                        return -ENOMEM;
        if ((r = twin_reply_mutation(rp, before, NULL)) < 0)
                return r;
        twin_reply_json(rp, 204, NULL);
        return 0;
}

/* GET /repos/{o}/{r}/pulls/comments: every visible review comment of the repository. */
int gh_act_list_review_comments_for_repo(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *direction = "asc";
        if (twin_arg_str(c->args, "direction", &direction) == -EINVAL ||
            (!streq(direction, "asc") && !streq(direction, "desc")))
                return gh_invalid(rp, "PullRequestReviewComment", "direction", "invalid");
        /* (comment, its pull request) pairs in id order: ids grow with creation */
        _cleanup_json_ json_t *all = json_array(), *page = NULL, *out = json_array();
        if (!all || !out)
                return -ENOMEM;
        size_t i, j;
        json_t *pr, *cm;
        json_array_foreach (json_object_get(repo, "pull_requests"), i, pr) {
                json_array_foreach (json_object_get(pr, "review_comments"), j, cm) {
                        json_t *rv = review_of_comment(pr, cm);
                        if ((!rv || review_visible(c, rv)) &&
                            json_array_append_new(all, json_pack("[O, O]", cm, pr)) < 0)
                                return -ENOMEM;
                }
        }
        size_t n = json_array_size(all);
        for (i = 1; i < n; i++) /* insertion sort by id; lists are small */
                for (j = i; j > 0; j--) {
                        json_t *a = json_array_get(all, j - 1), *b = json_array_get(all, j);
                        json_int_t ia = json_integer_value(
                                           json_object_get(json_array_get(a, 0), "id")),
                                   ib = json_integer_value(
                                           json_object_get(json_array_get(b, 0), "id"));
                        if (streq(direction, "asc") ? ia <= ib : ia >= ib)
                                break;
                        json_incref(a);
                        if (json_array_set(all, j - 1, b) < 0 || json_array_set_new(all, j, a) < 0)
                                return -ENOMEM;
                }
        if ((r = gh_paginate(c, rp, all, &page)) < 0)
                return r;
        json_t *pair;
        json_array_foreach (page, i, pair) {
                if (json_array_append_new(out,
                                          gh_render_review_comment(c, repo, json_array_get(pair, 1),
                                                                   json_array_get(pair, 0))) < 0)
                        return -ENOMEM;
        }
        return twin_reply_body(rp, 200, TAKE_PTR(out));
}
