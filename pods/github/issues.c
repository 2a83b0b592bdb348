/* SPDX-License-Identifier: MIT */
/* The GitHub twin's issue actions: issues, comments, labels and assignees on issues. */
#include <strings.h>

#include "common/json-util.h"
#include "pods/github/github.h"

/* ------------------------------------------------------------------ actions */

int gh_act_get_me(TwinCall *c, TwinReply *rp)
{
        const char *viewer = json_get_str(c->world, "viewer");
        json_t *u = viewer ? gh_user_find(c->world, viewer) : NULL;
        _cleanup_json_ json_t *body = gh_render_user(c, viewer);
        if (!u || !json_is_object(body))
                return body ? gh_not_found(rp) : -ENOMEM;
        json_int_t repos = 0;
        size_t i;
        json_t *r;
        json_array_foreach (json_object_get(c->world, "repositories"), i, r) {
                repos += strcasecmp(json_get_str(r, "owner"), viewer) == 0;
        }
        _cleanup_json_ json_t *more = json_pack(
                "{s:O, s:O, s:n, s:s, s:n, s:n, s:I, s:i, s:i, s:s, s:s}", "name",
                json_object_get(u, "name"), "email", json_object_get(u, "email"), "company", "blog",
                "", "location", "bio", "public_repos", repos, "followers", 0, "following", 0,
                "created_at", GH_SEED_TIME, "updated_at", GH_SEED_TIME);
        if (!more || json_object_update(body, more) < 0)
                return -ENOMEM;
        twin_reply_json(rp, 200, TAKE_PTR(body));
        return 0;
}

int gh_act_get_repository(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        return twin_reply_body(rp, 200, gh_render_repo(c, repo));
}

typedef struct IssueOrder {
        const char *key; /* created_at, updated_at, or NULL for the comment count */
        bool desc;
} IssueOrder;

static int issue_cmp(const void *a, const void *b, void *userdata)
{
        const IssueOrder *o = userdata;
        json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
        int d;
        if (o->key)
                d = strcmp(strempty(json_get_str(x, o->key)), strempty(json_get_str(y, o->key)));
        else {
                size_t cx = json_array_size(json_object_get(x, "comments")),
                       cy = json_array_size(json_object_get(y, "comments"));
                d = (cx > cy) - (cx < cy);
        }
        if (d == 0) {
                /* numbers grow with creation: the tie-break keeps the order total */
                json_int_t nx = json_integer_value(json_object_get(x, "number")),
                           ny = json_integer_value(json_object_get(y, "number"));
                d = (nx > ny) - (nx < ny);
        }
        return o->desc ? -d : d;
}

static bool issue_matches(TwinCall *c, json_t *issue, const char *state, json_t *labels,
                          const char *assignee, const char *creator, const char *since)
{
        if (!streq(state, "all") && !streq_ptr(json_get_str(issue, "state"), state))
                return false;
        size_t i;
        json_t *l;
        json_array_foreach (labels, i, l) {
                if (!gh_strv_has(json_object_get(issue, "labels"), json_string_value(l)))
                        return false;
        }
        json_t *assignees = json_object_get(issue, "assignees");
        if (assignee) {
                if (streq(assignee, "none") ? json_array_size(assignees) > 0
                    : streq(assignee, "*")  ? json_array_size(assignees) == 0
                                            : !gh_strv_has(assignees, assignee))
                        return false;
        }
        if (creator && strcasecmp(strempty(json_get_str(issue, "user")), creator) != 0)
                return false;
        if (since && strcmp(strempty(json_get_str(issue, "updated_at")), since) < 0)
                return false;
        (void)c;
        return true;
}

int gh_act_list_issues(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;

        const char *state = "open", *assignee = NULL, *creator = NULL, *since = NULL,
                   *sort = "created", *direction = "desc";
        if (twin_arg_str(c->args, "state", &state) == -EINVAL ||
            (!streq(state, "open") && !streq(state, "closed") && !streq(state, "all")))
                return gh_invalid(rp, "Issue", "state", "invalid");
        if (twin_arg_str(c->args, "sort", &sort) == -EINVAL ||
            (!streq(sort, "created") && !streq(sort, "updated") && !streq(sort, "comments")))
                return gh_invalid(rp, "Issue", "sort", "invalid");
        if (twin_arg_str(c->args, "direction", &direction) == -EINVAL ||
            (!streq(direction, "asc") && !streq(direction, "desc")))
                return gh_invalid(rp, "Issue", "direction", "invalid");
        if (twin_arg_str(c->args, "assignee", &assignee) == -EINVAL)
                return gh_invalid(rp, "Issue", "assignee", "invalid");
        if (twin_arg_str(c->args, "creator", &creator) == -EINVAL)
                return gh_invalid(rp, "Issue", "creator", "invalid");
        if (twin_arg_str(c->args, "since", &since) == -EINVAL)
                return gh_invalid(rp, "Issue", "since", "invalid");
        _cleanup_json_ json_t *labels = NULL;
        r = gh_arg_label_names(c, "labels", &labels);
        if (r < 0)
                return r;
        if (r == 2)
                return gh_invalid(rp, "Issue", "labels", "invalid");

        json_t *issues = json_object_get(repo, "issues");
        size_t n = 0, i;
        json_t *issue;
        _cleanup_free_ json_t **v = calloc(json_array_size(issues) + 1, sizeof(json_t *));
        if (!v)
                return -ENOMEM;
        json_array_foreach (issues, i, issue) {
                if (issue_matches(c, issue, state, labels, assignee, creator, since))
                        v[n++] = issue;
        }
        IssueOrder order = {.key = streq(sort, "created")   ? "created_at"
                                   : streq(sort, "updated") ? "updated_at"
                                                            : NULL,
                            .desc = streq(direction, "desc")};
        qsort_r(v, n, sizeof(json_t *), issue_cmp, &order);

        _cleanup_json_ json_t *all = json_array(), *page = NULL;
        if (!all)
                return -ENOMEM;
        for (i = 0; i < n; i++)
                if (json_array_append(all, v[i]) < 0)
                        return -ENOMEM;
        r = gh_paginate(c, rp, all, &page);
        if (r < 0)
                return r;
        _cleanup_json_ json_t *body = json_array();
        if (!body)
                return -ENOMEM;
        json_array_foreach (page, i, issue) {
                if (json_array_append_new(body, gh_render_issue(c, repo, issue)) < 0)
                        return -ENOMEM;
        }
        twin_reply_json(rp, 200, TAKE_PTR(body));
        return 0;
}

int gh_act_get_issue(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *issue;
        int r = gh_arg_repo_issue(c, rp, &repo, &issue, NULL);
        if (r <= 0)
                return r;
        return twin_reply_body(rp, 200, gh_render_issue(c, repo, issue));
}

/*
 * The writable fields shared by create_issue and update_issue, applied to row. Everything
 * is validated before anything is applied (labels may be created in the repository), so a
 * 422 leaves the world as it was. Returns 1 when applied, 0 when rp holds a 422, negative
 * errno.
 */
static int apply_fields(TwinCall *c, TwinReply *rp, json_t *repo, json_t *row)
{
        const char *title = NULL;
        int r = twin_arg_str(c->args, "title", &title);
        if (r == -EINVAL || (r == 0 && !title[0]))
                return gh_invalid(rp, "Issue", "title", r == 0 ? "missing_field" : "invalid");

        json_t *body = json_object_get(c->args, "body");
        if (body && !json_is_string(body) && !json_is_null(body))
                return gh_invalid(rp, "Issue", "body", "invalid");

        _cleanup_json_ json_t *names = NULL;
        r = gh_arg_label_names(c, "labels", &names);
        if (r < 0)
                return r;
        if (r == 2)
                return gh_invalid(rp, "Issue", "labels", "invalid");

        _cleanup_json_ json_t *assignees = NULL;
        r = gh_arg_assignees(c, "assignees", &assignees);
        if (r < 0)
                return r;
        if (r == 2)
                return gh_invalid(rp, "Issue", "assignees", "invalid");
        json_t *one = json_object_get(c->args, "assignee");
        if (one && !json_is_string(one) && !json_is_null(one))
                return gh_invalid(rp, "Issue", "assignee", "invalid");
        if (one && !assignees) {
                /* the legacy single "assignee": null clears, a login replaces */
                json_t *u =
                        json_is_string(one) ? gh_user_find(c->world, json_string_value(one)) : NULL;
                assignees = json_array();
                if (!assignees)
                        return -ENOMEM;
                if (u && !streq_ptr(json_get_str(u, "type"), "Organization") &&
                    json_array_append(assignees, json_object_get(u, "login")) < 0)
                        return -ENOMEM;
        }

        json_t *ms = json_object_get(c->args, "milestone");
        int64_t milestone = 0;
        if (ms && !json_is_null(ms)) {
                r = twin_arg_int(c->args, "milestone", 1, INT64_MAX, &milestone);
                if (r < 0 || !gh_number_find(repo, "milestones", milestone, NULL))
                        return gh_invalid(rp, "Issue", "milestone", "invalid");
        }

        if ((title && json_object_set_new(row, "title", json_string(title)) < 0) ||
            (body && json_object_set(row, "body", body) < 0) ||
            (assignees && json_object_set(row, "assignees", assignees) < 0) ||
            (ms && json_object_set_new(row, "milestone",
                                       milestone ? json_integer(milestone) : json_null()) < 0))
                return -ENOMEM;
        if (names) {
                json_t *labels = gh_labels_ensure(c, repo, names);
                if (!labels || json_object_set_new(row, "labels", labels) < 0)
                        return -ENOMEM;
        }
        return 1;
}

int gh_act_create_issue(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *title;
        r = twin_arg_str(c->args, "title", &title);
        if (r < 0 || !title[0])
                return gh_invalid(rp, "Issue", "title", r == -EINVAL ? "invalid" : "missing_field");

        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        _cleanup_json_ json_t *row = json_pack(
                "{s:I, s:s, s:n, s:s, s:n, s:b, s:s, s:[], s:[], s:n, s:[], s:s, s:s, s:n}",
                "number", (json_int_t)(gh_max_number(repo) + 1), "title", title, "body", "state",
                "open", "state_reason", "locked", false, "user", json_get_str(c->world, "viewer"),
                "labels", "assignees", "milestone", "comments", "created_at", now, "updated_at",
                now, "closed_at");
        if (!row)
                return -ENOMEM;
        r = apply_fields(c, rp, repo, row);
        if (r <= 0)
                return r;
        /* ids only once the request is known valid: a refused call leaves the world alone */
        int64_t id = gh_alloc_id(c->world);
        if (json_object_set_new(row, "id", json_integer(id)) < 0 ||
            json_object_set_new(row, "node_id", gh_node_id("Issue", id)) < 0 ||
            json_array_append(json_object_get(repo, "issues"), row) < 0)
                return -ENOMEM;
        r = twin_reply_mutation(rp, NULL, row);
        if (r < 0)
                return r;
        return twin_reply_body(rp, 201, gh_render_issue(c, repo, row));
}

int gh_act_update_issue(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *issue;
        size_t idx;
        int r = gh_arg_repo_issue(c, rp, &repo, &issue, &idx);
        if (r <= 0)
                return r;

        const char *state = NULL, *reason = NULL;
        if (twin_arg_str(c->args, "state", &state) == -EINVAL ||
            (state && !streq(state, "open") && !streq(state, "closed")))
                return gh_invalid(rp, "Issue", "state", "invalid");
        json_t *jr = json_object_get(c->args, "state_reason");
        if (jr && !json_is_null(jr)) {
                reason = json_string_value(jr);
                if (!reason || (!streq(reason, "completed") && !streq(reason, "not_planned") &&
                                !streq(reason, "reopened")))
                        return gh_invalid(rp, "Issue", "state_reason", "invalid");
        }

        _cleanup_json_ json_t *next = json_deep_copy(issue);
        if (!next)
                return -ENOMEM;
        r = apply_fields(c, rp, repo, next);
        if (r <= 0)
                return r;
        const char *was = json_get_str(issue, "state");
        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        if (state && !streq(state, was)) {
                bool closing = streq(state, "closed");
                if (json_object_set_new(next, "state", json_string(state)) < 0 ||
                    json_object_set_new(next, "closed_at",
                                        closing ? json_string(now) : json_null()) < 0 ||
                    json_object_set_new(next, "state_reason",
                                        json_string(reason    ? reason
                                                    : closing ? "completed"
                                                              : "reopened")) < 0)
                        return -ENOMEM;
        } else if (jr && json_object_set_new(next, "state_reason", json_string_or_null(reason)) < 0)
                return -ENOMEM;

        r = gh_issue_commit(c, rp, repo, idx, next);
        if (r < 0)
                return r;
        return twin_reply_body(rp, 200, gh_render_issue(c, repo, next));
}

/* add_issue_assignees (add) and remove_issue_assignees (!add). */
static int change_assignees(TwinCall *c, TwinReply *rp, bool add)
{
        json_t *repo, *issue;
        size_t idx;
        int r = gh_arg_repo_issue(c, rp, &repo, &issue, &idx);
        if (r <= 0)
                return r;

        _cleanup_json_ json_t *names = NULL;
        if (add)
                r = gh_arg_assignees(c, "assignees", &names);
        else {
                r = twin_arg_strv(c->args, "assignees", &names);
                r = r == 0 ? 1 : r == -ENOENT ? 0 : r == -EINVAL ? 2 : r;
        }
        if (r < 0)
                return r;
        if (r == 2)
                return gh_invalid(rp, "Issue", "assignees", "invalid");

        _cleanup_json_ json_t *next = json_deep_copy(issue);
        if (!next)
                return -ENOMEM;
        json_t *list = json_object_get(next, "assignees");
        size_t i;
        json_t *n;
        json_array_foreach (names, i, n) {
                const char *login = json_string_value(n);
                if (add && !gh_strv_has(list, login)) {
                        if (json_array_append(list, n) < 0)
                                return -ENOMEM;
                } else if (!add)
                        for (size_t k = json_array_size(list); k-- > 0;)
                                if (strcasecmp(json_string_value(json_array_get(list, k)), login) ==
                                    0)
                                        json_array_remove(list, k);
        }
        r = gh_issue_commit(c, rp, repo, idx, next);
        if (r < 0)
                return r;
        /* POST answers 201 Created even when nothing changed, as GitHub does */
        return twin_reply_body(rp, add ? 201 : 200, gh_render_issue(c, repo, next));
}

int gh_act_add_issue_assignees(TwinCall *c, TwinReply *rp)
{
        return change_assignees(c, rp, true);
}

int gh_act_remove_issue_assignees(TwinCall *c, TwinReply *rp)
{
        return change_assignees(c, rp, false);
}

int gh_act_add_issue_comment(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *issue;
        int r = gh_arg_repo_issue(c, rp, &repo, &issue, NULL);
        if (r <= 0)
                return r;
        const char *body;
        r = twin_arg_str(c->args, "body", &body);
        if (r < 0 || !body[0])
                return gh_invalid(rp, "IssueComment", "body",
                                  r == -EINVAL ? "invalid" : "missing_field");

        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        int64_t id = gh_alloc_id(c->world);
        _cleanup_json_ json_t *comment =
                json_pack("{s:I, s:o, s:s, s:s, s:s, s:s}", "id", (json_int_t)id, "node_id",
                          gh_node_id("IssueComment", id), "body", body, "user",
                          json_get_str(c->world, "viewer"), "created_at", now, "updated_at", now);
        if (!comment || json_array_append(json_object_get(issue, "comments"), comment) < 0 ||
            json_object_set_new(issue, "updated_at", json_string(now)) < 0)
                return -ENOMEM;
        r = twin_reply_mutation(rp, NULL, comment);
        if (r < 0)
                return r;
        return twin_reply_body(rp, 201, gh_render_comment(c, repo, issue, comment));
}

int gh_act_list_issue_comments(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *issue;
        int r = gh_arg_repo_issue(c, rp, &repo, &issue, NULL);
        if (r <= 0)
                return r;
        const char *since = NULL;
        if (twin_arg_str(c->args, "since", &since) == -EINVAL)
                return gh_invalid(rp, "IssueComment", "since", "invalid");

        _cleanup_json_ json_t *all = json_array(), *page = NULL, *body = json_array();
        if (!all || !body)
                return -ENOMEM;
        size_t i;
        json_t *cm;
        json_array_foreach (json_object_get(issue, "comments"), i, cm) {
                if ((!since || strcmp(strempty(json_get_str(cm, "updated_at")), since) >= 0) &&
                    json_array_append(all, cm) < 0)
                        return -ENOMEM;
        }
        r = gh_paginate(c, rp, all, &page);
        if (r < 0)
                return r;
        json_array_foreach (page, i, cm) {
                if (json_array_append_new(body, gh_render_comment(c, repo, issue, cm)) < 0)
                        return -ENOMEM;
        }
        twin_reply_json(rp, 200, TAKE_PTR(body));
        return 0;
}

int gh_act_add_issue_labels(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *issue;
        size_t idx;
        int r = gh_arg_repo_issue(c, rp, &repo, &issue, &idx);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *names = NULL;
        r = gh_arg_label_names(c, "labels", &names);
        if (r < 0)
                return r;
        if (r != 1)
                return gh_invalid(rp, "Label", "labels", r == 0 ? "missing_field" : "invalid");

        _cleanup_json_ json_t *next = json_deep_copy(issue),
                              *canon = gh_labels_ensure(c, repo, names);
        if (!next || !canon)
                return -ENOMEM;
        json_t *list = json_object_get(next, "labels");
        size_t i;
        json_t *n;
        json_array_foreach (canon, i, n) {
                if (!gh_strv_has(list, json_string_value(n)) && json_array_append(list, n) < 0)
                        return -ENOMEM;
        }
        r = gh_issue_commit(c, rp, repo, idx, next);
        if (r < 0)
                return r;
        return twin_reply_body(rp, 200, gh_render_labels(c, repo, list));
}

int gh_act_remove_issue_label(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *issue;
        size_t idx;
        int r = gh_arg_repo_issue(c, rp, &repo, &issue, &idx);
        if (r <= 0)
                return r;
        const char *name;
        r = twin_arg_str(c->args, "name", &name);
        if (r < 0)
                return gh_invalid(rp, "Label", "name", r == -ENOENT ? "missing_field" : "invalid");

        _cleanup_json_ json_t *next = json_deep_copy(issue);
        if (!next)
                return -ENOMEM;
        json_t *list = json_object_get(next, "labels");
        bool found = false;
        for (size_t k = json_array_size(list); k-- > 0;)
                if (strcasecmp(json_string_value(json_array_get(list, k)), name) == 0) {
                        json_array_remove(list, k);
                        found = true;
                }
        if (!found) {
                gh_error(404, NULL, "Label does not exist", rp);
                return rp->body ? 0 : -ENOMEM;
        }
        r = gh_issue_commit(c, rp, repo, idx, next);
        if (r < 0)
                return r;
        return twin_reply_body(rp, 200, gh_render_labels(c, repo, list));
}

/* ------------------------------------------------------------------ public state, tables */
