/* SPDX-License-Identifier: MIT */
/*
 * The GitHub twin's labels and milestones (https://docs.github.com/rest/issues/labels,
 * https://docs.github.com/rest/issues/milestones): a repository's labels (list, create, get,
 * update, delete), the labels of an issue or pull request (list, add, set, remove one,
 * remove all) and milestones (list, create, get, update, delete). All REST-only: the
 * official MCP server's issue tools reach labels through issue_read and issue_write.
 *
 * Issue and pull request rows hold label names and milestone numbers, so renaming or
 * deleting a label, or deleting a milestone, rewrites every row that names it, as the
 * objects on github.com change with them.
 */
#include <strings.h>

#include "common/json-util.h"
#include "pods/github/github.h"

/* 422 Validation Failed for a name that is taken (GitHub's already_exists). */
static int already_exists(TwinReply *rp, const char *resource, const char *field)
{
        return twin_reply_body(rp, 422,
                               json_pack("{s:s, s:[{s:s, s:s, s:s}], s:s, s:s}", "message",
                                         "Validation Failed", "errors", "resource", resource,
                                         "code", "already_exists", "field", field,
                                         "documentation_url", GH_DOCS_URL, "status", "422"));
}

static bool color_valid(const char *s)
{
        return strlen(s) == 6 && strspn(s, "0123456789abcdefABCDEF") == 6;
}

/* Every issue and pull request row of repo, in one loop: fn(row, data) for each. */
static int foreach_row(json_t *repo, int (*fn)(json_t *row, void *data), void *data)
{
        const char *lists[] = {"issues", "pull_requests"};
        for (size_t k = 0; k < ELEMENTSOF(lists); k++) {
                size_t i;
                json_t *x;
                json_array_foreach (json_object_get(repo, lists[k]), i, x) {
                        int r = fn(x, data);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* ------------------------------------------------------------------ repository labels */

/* GET /repos/{owner}/{repo}/labels: Link pages of the repository's labels. */
int gh_act_list_labels(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *names = json_array(), *page = NULL;
        if (!names)
                return -ENOMEM;
        size_t i;
        json_t *l;
        json_array_foreach (json_object_get(repo, "labels"), i, l) {
                if (json_array_append(names, json_object_get(l, "name")) < 0)
                        return -ENOMEM;
        }
        if ((r = gh_paginate(c, rp, names, &page)) < 0)
                return r;
        return twin_reply_body(rp, 200, gh_render_labels(c, repo, page));
}

/* The label the route's {name} names: 1 with it, 0 with the 404 in rp. */
static int arg_label(TwinCall *c, TwinReply *rp, json_t **ret_repo, json_t **ret_label)
{
        int r = gh_arg_repo(c, rp, ret_repo);
        if (r <= 0)
                return r;
        const char *name = NULL;
        (void)twin_arg_str(c->args, "name", &name);
        json_t *l = name ? gh_label_find(*ret_repo, name) : NULL;
        if (!l)
                return gh_not_found(rp);
        *ret_label = l;
        return 1;
}

/* GET /repos/{owner}/{repo}/labels/{name}. */
int gh_act_get_label(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *l;
        int r = arg_label(c, rp, &repo, &l);
        if (r <= 0)
                return r;
        return twin_reply_body(rp, 200, gh_render_label(c, repo, json_get_str(l, "name")));
}

/*
 * POST /repos/{owner}/{repo}/labels {name, color, description}: 201 with the label; a name
 * the repository has (case-insensitively) is 422 already_exists.
 */
int gh_act_create_label(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *name, *color = NULL, *desc = NULL;
        r = twin_arg_str(c->args, "name", &name);
        if (r < 0 || !name[0])
                return gh_invalid(rp, "Label", "name", r == -EINVAL ? "invalid" : "missing_field");
        if (twin_arg_str(c->args, "color", &color) == -EINVAL || (color && !color_valid(color)))
                return gh_invalid(rp, "Label", "color", "invalid");
        if (twin_arg_str(c->args, "description", &desc) == -EINVAL || (desc && strlen(desc) > 100))
                return gh_invalid(rp, "Label", "description", "invalid");
        if (gh_label_find(repo, name))
                return already_exists(rp, "Label", "name");
        /* github.com picks a colour when none is given; the twin's is GitHub's grey */
        json_t *l = gh_label_ensure(c->world, repo, name, color ? color : "ededed", desc, 0);
        if (!l)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, NULL, l)) < 0)
                return r;
        return twin_reply_body(rp, 201, gh_render_label(c, repo, name));
}

typedef struct Rename {
        const char *from, *to; /* to NULL: remove */
} Rename;

static int rename_in_row(json_t *row, void *data)
{
        const Rename *rn = data;
        json_t *labels = json_object_get(row, "labels");
        for (size_t k = json_array_size(labels); k-- > 0;) {
                if (strcasecmp(json_string_value(json_array_get(labels, k)), rn->from) != 0)
                        continue;
                if (rn->to ? json_array_set_new(labels, k, json_string(rn->to)) < 0
                           : json_array_remove(labels, k) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/*
 * PATCH /repos/{owner}/{repo}/labels/{name} {new_name, color, description}: the label,
 * renamed on every issue and pull request that carries it.
 */
int gh_act_update_label(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *l;
        int r = arg_label(c, rp, &repo, &l);
        if (r <= 0)
                return r;
        const char *new_name = NULL, *color = NULL, *desc = NULL;
        if (twin_arg_str(c->args, "new_name", &new_name) == -EINVAL || (new_name && !new_name[0]))
                return gh_invalid(rp, "Label", "name", "invalid");
        if (twin_arg_str(c->args, "color", &color) == -EINVAL || (color && !color_valid(color)))
                return gh_invalid(rp, "Label", "color", "invalid");
        if (twin_arg_str(c->args, "description", &desc) == -EINVAL || (desc && strlen(desc) > 100))
                return gh_invalid(rp, "Label", "description", "invalid");
        json_t *other = new_name ? gh_label_find(repo, new_name) : NULL;
        if (other && other != l)
                return already_exists(rp, "Label", "name");

        _cleanup_json_ json_t *before = json_deep_copy(l);
        _cleanup_free_ char *old = strdup(json_get_str(l, "name"));
        if (!before || !old)
                return -ENOMEM;
        if ((color && json_object_set_new(l, "color", json_string(color)) < 0) ||
            (json_object_get(c->args, "description") &&
             json_object_set_new(l, "description", json_string_or_null(desc)) < 0))
                return -ENOMEM;
        if (new_name && !streq(new_name, old)) {
                Rename rn = {old, new_name};
                if (json_object_set_new(l, "name", json_string(new_name)) < 0 ||
                    foreach_row(repo, rename_in_row, &rn) < 0)
                        return -ENOMEM;
        }
        if (!json_equal(before, l) && (r = twin_reply_mutation(rp, before, l)) < 0)
                return r;
        return twin_reply_body(rp, 200, gh_render_label(c, repo, json_get_str(l, "name")));
}

/* DELETE /repos/{owner}/{repo}/labels/{name}: 204, the label gone from every issue. */
int gh_act_delete_label(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *l;
        int r = arg_label(c, rp, &repo, &l);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *before = json_incref(l);
        Rename rn = {json_get_str(l, "name"), NULL};
        if (foreach_row(repo, rename_in_row, &rn) < 0)
                return -ENOMEM;
        json_t *labels = json_object_get(repo, "labels");
        for (size_t k = 0; k < json_array_size(labels); k++)
                if (json_array_get(labels, k) == l) {
                        if (json_array_remove(labels, k) < 0)
                                return -ENOMEM;
                        break;
                }
        if ((r = twin_reply_mutation(rp, before, NULL)) < 0)
                return r;
        twin_reply_json(rp, 204, NULL);
        return 0;
}

/* ------------------------------------------------------------------ issue labels */

/*
 * The labels of issue (or pull request) as GET .../issues/{n}/labels answers them: Link
 * pages of label objects. 0 or negative errno.
 */
int gh_reply_issue_labels(TwinCall *c, TwinReply *rp, json_t *repo, json_t *issue)
{
        _cleanup_json_ json_t *page = NULL;
        int r = gh_paginate(c, rp, json_object_get(issue, "labels"), &page);
        if (r < 0)
                return r;
        return twin_reply_body(rp, 200, gh_render_labels(c, repo, page));
}

/* POST .../issues/{n}/labels {labels}: adds them (creating missing ones), 200 with all. */
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

/*
 * PUT .../issues/{n}/labels {labels}: the issue's labels become exactly these (none when
 * the list is empty or absent), 200 with them.
 */
int gh_act_set_issue_labels(TwinCall *c, TwinReply *rp)
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
        if (r == 2)
                return gh_invalid(rp, "Label", "labels", "invalid");
        _cleanup_json_ json_t *next = json_deep_copy(issue),
                              *canon = names ? gh_labels_ensure(c, repo, names) : json_array();
        if (!next || !canon || json_object_set(next, "labels", canon) < 0)
                return -ENOMEM;
        r = gh_issue_commit(c, rp, repo, idx, next);
        if (r < 0)
                return r;
        return twin_reply_body(rp, 200, gh_render_labels(c, repo, canon));
}

/* DELETE .../issues/{n}/labels: 204, no labels left. */
int gh_act_remove_all_issue_labels(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *issue;
        size_t idx;
        int r = gh_arg_repo_issue(c, rp, &repo, &issue, &idx);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *next = json_deep_copy(issue);
        if (!next || json_object_set_new(next, "labels", json_array()) < 0)
                return -ENOMEM;
        r = gh_issue_commit(c, rp, repo, idx, next);
        if (r < 0)
                return r;
        twin_reply_json(rp, 204, NULL);
        return 0;
}

/* DELETE .../issues/{n}/labels/{name}: 200 with the labels left, 404 when not on it. */
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

/* ------------------------------------------------------------------ milestones */

typedef struct MilestoneOrder {
        json_t *repo;
        bool completeness, desc;
} MilestoneOrder;

/* Percent of a milestone's issues that are closed (0 when it has none). */
static double completeness(json_t *repo, json_t *m)
{
        json_int_t open, closed;
        gh_milestone_counts(repo, json_integer_value(json_object_get(m, "number")), &open, &closed);
        return open + closed ? (double)closed / (double)(open + closed) : 0.0;
}

static int milestone_cmp(const void *a, const void *b, void *userdata)
{
        const MilestoneOrder *o = userdata;
        json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
        int d;
        if (o->completeness) {
                double cx = completeness(o->repo, x), cy = completeness(o->repo, y);
                d = (cx > cy) - (cx < cy);
        } else {
                const char *dx = json_get_str(x, "due_on"), *dy = json_get_str(y, "due_on");
                /* milestones without a due date come last either way */
                if (!dx || !dy)
                        return (dx == NULL) - (dy == NULL);
                d = strcmp(dx, dy);
        }
        if (d == 0) {
                json_int_t nx = json_integer_value(json_object_get(x, "number")),
                           ny = json_integer_value(json_object_get(y, "number"));
                d = (nx > ny) - (nx < ny);
        }
        return o->desc ? -d : d;
}

/*
 * GET /repos/{owner}/{repo}/milestones: state open (default), closed or all; sort due_on
 * (default) or completeness; direction asc (default) or desc; Link pages.
 */
int gh_act_list_milestones(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *state = "open", *sort = "due_on", *direction = "asc";
        if (twin_arg_str(c->args, "state", &state) == -EINVAL ||
            (!streq(state, "open") && !streq(state, "closed") && !streq(state, "all")))
                return gh_invalid(rp, "Milestone", "state", "invalid");
        if (twin_arg_str(c->args, "sort", &sort) == -EINVAL ||
            (!streq(sort, "due_on") && !streq(sort, "completeness")))
                return gh_invalid(rp, "Milestone", "sort", "invalid");
        if (twin_arg_str(c->args, "direction", &direction) == -EINVAL ||
            (!streq(direction, "asc") && !streq(direction, "desc")))
                return gh_invalid(rp, "Milestone", "direction", "invalid");
        json_t *all = json_object_get(repo, "milestones");
        _cleanup_free_ json_t **v = calloc(json_array_size(all) + 1, sizeof(json_t *));
        if (!v)
                return -ENOMEM;
        size_t n = 0, i;
        json_t *m;
        json_array_foreach (all, i, m) {
                if (streq(state, "all") || streq_ptr(json_get_str(m, "state"), state))
                        v[n++] = m;
        }
        MilestoneOrder o = {repo, streq(sort, "completeness"), streq(direction, "desc")};
        qsort_r(v, n, sizeof(json_t *), milestone_cmp, &o);
        _cleanup_json_ json_t *rows = json_array(), *page = NULL, *out = json_array();
        if (!rows || !out)
                return -ENOMEM;
        for (i = 0; i < n; i++)
                if (json_array_append(rows, v[i]) < 0)
                        return -ENOMEM;
        if ((r = gh_paginate(c, rp, rows, &page)) < 0)
                return r;
        json_array_foreach (page, i, m) {
                if (json_array_append_new(
                            out, gh_render_milestone(c, repo, json_object_get(m, "number"))) < 0)
                        return -ENOMEM;
        }
        return twin_reply_body(rp, 200, TAKE_PTR(out));
}

/* The milestone {milestone_number} names: 1 with it and its index, 0 with the 404 in rp. */
static int arg_milestone(TwinCall *c, TwinReply *rp, json_t **ret_repo, json_t **ret_m,
                         size_t *ret_idx)
{
        int r = gh_arg_repo(c, rp, ret_repo);
        if (r <= 0)
                return r;
        int64_t n;
        json_t *m = NULL;
        if (twin_arg_int(c->args, "milestone_number", 1, INT32_MAX, &n) == 0)
                m = gh_number_find(*ret_repo, "milestones", n, ret_idx);
        if (!m)
                return gh_not_found(rp);
        *ret_m = m;
        return 1;
}

/* GET /repos/{owner}/{repo}/milestones/{milestone_number}. */
int gh_act_get_milestone(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *m;
        size_t idx;
        int r = arg_milestone(c, rp, &repo, &m, &idx);
        if (r <= 0)
                return r;
        return twin_reply_body(rp, 200, gh_render_milestone(c, repo, json_object_get(m, "number")));
}

/*
 * The writable milestone fields of args (title, state, description, due_on) applied to m,
 * all validated first. 1 applied, 0 with a 422 in rp, negative errno.
 */
static int milestone_fields(TwinCall *c, TwinReply *rp, json_t *repo, json_t *m, bool create)
{
        const char *title = NULL, *state = NULL, *desc = NULL;
        int r = twin_arg_str(c->args, "title", &title);
        if (r == -EINVAL || (create && r == -ENOENT) || (title && !title[0]))
                return gh_invalid(rp, "Milestone", "title",
                                  r == -EINVAL ? "invalid" : "missing_field");
        if (twin_arg_str(c->args, "state", &state) == -EINVAL ||
            (state && !streq(state, "open") && !streq(state, "closed")))
                return gh_invalid(rp, "Milestone", "state", "invalid");
        if (twin_arg_str(c->args, "description", &desc) == -EINVAL)
                return gh_invalid(rp, "Milestone", "description", "invalid");
        char due[32];
        json_t *jd = json_object_get(c->args, "due_on");
        if (jd && !json_is_null(jd) && gh_time_arg(c, "due_on", due) < 0)
                return gh_invalid(rp, "Milestone", "due_on", "invalid");
        if (title) {
                size_t i;
                json_t *o;
                json_array_foreach (json_object_get(repo, "milestones"), i, o) {
                        if (o != m && strcasecmp(strempty(json_get_str(o, "title")), title) == 0)
                                return already_exists(rp, "Milestone", "title");
                }
        }
        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        if ((title && json_object_set_new(m, "title", json_string(title)) < 0) ||
            (json_object_get(c->args, "description") &&
             json_object_set_new(m, "description", json_string_or_null(desc)) < 0) ||
            (jd && json_object_set_new(m, "due_on",
                                       json_is_null(jd) ? json_null() : json_string(due)) < 0))
                return -ENOMEM;
        if (state && !streq_ptr(json_get_str(m, "state"), state) &&
            (json_object_set_new(m, "state", json_string(state)) < 0 ||
             json_object_set_new(m, "closed_at",
                                 streq(state, "closed") ? json_string(now) : json_null()) < 0))
                return -ENOMEM;
        return 1;
}

/* POST /repos/{owner}/{repo}/milestones {title, state, description, due_on}: 201. */
int gh_act_create_milestone(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        int64_t number = 0;
        size_t i;
        json_t *o;
        json_array_foreach (json_object_get(repo, "milestones"), i, o) {
                int64_t n = json_integer_value(json_object_get(o, "number"));
                if (n > number)
                        number = n;
        }
        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        _cleanup_json_ json_t *m =
                json_pack("{s:I, s:s, s:n, s:s, s:n, s:s, s:s, s:s, s:n}", "number",
                          (json_int_t)(number + 1), "title", "", "description", "state", "open",
                          "due_on", "creator", json_get_str(c->world, "viewer"), "created_at", now,
                          "updated_at", now, "closed_at");
        if (!m)
                return -ENOMEM;
        if ((r = milestone_fields(c, rp, repo, m, true)) <= 0)
                return r;
        int64_t id = gh_alloc_id(c->world);
        if (json_object_set_new(m, "id", json_integer(id)) < 0 ||
            json_object_set_new(m, "node_id", gh_node_id("Milestone", id)) < 0 ||
            json_array_append(json_object_get(repo, "milestones"), m) < 0)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, NULL, m)) < 0)
                return r;
        return twin_reply_body(rp, 201, gh_render_milestone(c, repo, json_object_get(m, "number")));
}

/* PATCH /repos/{owner}/{repo}/milestones/{milestone_number}. */
int gh_act_update_milestone(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *m;
        size_t idx;
        int r = arg_milestone(c, rp, &repo, &m, &idx);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *next = json_deep_copy(m);
        if (!next)
                return -ENOMEM;
        if ((r = milestone_fields(c, rp, repo, next, false)) <= 0)
                return r;
        if (!json_equal(next, m)) {
                char now[32];
                twin_format_time(c->now, now, sizeof(now));
                if (json_object_set_new(next, "updated_at", json_string(now)) < 0 ||
                    (r = twin_reply_mutation(rp, m, next)) < 0 ||
                    json_array_set(json_object_get(repo, "milestones"), idx, next) < 0)
                        return r < 0 ? r : -ENOMEM;
        }
        return twin_reply_body(rp, 200,
                               gh_render_milestone(c, repo, json_object_get(next, "number")));
}

static int unset_milestone(json_t *row, void *data)
{
        json_t *ms = json_object_get(row, "milestone");
        if (json_is_integer(ms) && json_integer_value(ms) == *(int64_t *)data)
                return json_object_set_new(row, "milestone", json_null()) < 0 ? -ENOMEM : 0;
        return 0;
}

/* DELETE /repos/{owner}/{repo}/milestones/{milestone_number}: 204, issues lose it. */
int gh_act_delete_milestone(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *m;
        size_t idx;
        int r = arg_milestone(c, rp, &repo, &m, &idx);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *before = json_incref(m);
        int64_t n = json_integer_value(json_object_get(m, "number"));
        if (foreach_row(repo, unset_milestone, &n) < 0 ||
            json_array_remove(json_object_get(repo, "milestones"), idx) < 0)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, before, NULL)) < 0)
                return r;
        twin_reply_json(rp, 204, NULL);
        return 0;
}
