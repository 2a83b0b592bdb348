/* SPDX-License-Identifier: MIT */
/*
 * The Linear twin's actions: one per tool of Linear's MCP server that fits the world
 * (https://linear.app/docs/mcp; names and input schemas in surface.json, from its tools/list),
 * and three changes only the GraphQL API makes (archive_issue, delete_issue,
 * update_issue_label). The GraphQL mutations (graphql.c) run these same actions, so a change
 * has one tape `tool` whichever door it came through.
 *
 * Arguments are the MCP tool's. A reference to a team, state, user, label, project or cycle may
 * be its id or its name (key, email, ...), as the MCP server's descriptions say; a reference
 * that names nothing is NOT_FOUND. An argument of the tool's schema whose thing the world does
 * not model (releases, milestones, delegates, initiatives, SLAs, ...) is refused with
 * BAD_USER_INPUT naming it, rather than ignored.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/json-util.h"
#include "pods/linear/linear.h"

#define BAD  400, "BAD_USER_INPUT"
#define GONE 404, "NOT_FOUND"

/* Refuses the first argument of names that is given (not null, not an empty list): 1 with the
 * refusal in rp, 0 none is, -ENOMEM. */
static int unmodelled(TwinCall *c, TwinReply *rp, const char *const *names)
{
        for (const char *const *n = names; *n; n++) {
                json_t *v = json_object_get(c->args, *n);
                if (!v || json_is_null(v) || (json_is_array(v) && json_array_size(v) == 0))
                        continue;
                int r = ln_fail(rp, BAD, "%s is not modelled by the pome linear twin", *n);
                return r < 0 ? r : 1;
        }
        return 0;
}

/* args[key] as a string, NULL when absent or null; 1 (refusal in rp) when of another type. */
static int arg_str(TwinCall *c, TwinReply *rp, const char *key, const char **ret)
{
        *ret = NULL;
        int r = twin_arg_str(c->args, key, ret);
        if (r == -ENOENT)
                return 0;
        if (r < 0) {
                r = ln_fail(rp, BAD, "%s must be a string", key);
                return r < 0 ? r : 1;
        }
        return 0;
}

static const char *now_str(TwinCall *c, char buf[static 32])
{
        ln_time(c->now, buf);
        return buf;
}

/* ------------------------------------------------------------------ renderers */

/* An issue as the MCP tools give it: the keys of list_issues' `fields` enum, with names where
 * its descriptions give names (status, assignee, team, ...), and identifier. New reference.
 * The shape is the real server's: its tools/list (captured from mcp.linear.app, 2026-08-10)
 * offers list_issues `fields` status, statusType, assignee, assigneeId, team, teamId,
 * createdBy, createdById, project, projectId: flat names beside ids. Hosted Pome's objects
 * (team {id, key, name}, state {...}, assignee {...}) are its own, from no capture. */
static json_t *issue_out(json_t *w, json_t *is)
{
        json_t *team = ln_by_id(w, "teams", json_get_str(is, "teamId"));
        json_t *state = ln_by_id(w, "states", json_get_str(is, "stateId"));
        json_t *as = ln_by_id(w, "users", json_get_str(is, "assigneeId"));
        json_t *cr = ln_by_id(w, "users", json_get_str(is, "creatorId"));
        json_t *pr = ln_by_id(w, "projects", json_get_str(is, "projectId"));
        _cleanup_json_ json_t *labels = json_array();
        size_t i;
        json_t *id;
        json_array_foreach (json_object_get(is, "labelIds"), i, id) {
                json_t *l = ln_by_id(w, "labels", json_string_value(id));
                if (l && json_array_append(labels, json_object_get(l, "name")) < 0)
                        return NULL;
        }
        char branch[96];
        ln_branch_name(is, branch);
        return json_pack(
                "{s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:o, s:s, s:O?, s:O?, s:O?, s:O?, s:O?, "
                "s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, "
                "s:O?, s:O?, s:O?}",
                "id", json_object_get(is, "id"), "identifier", json_object_get(is, "identifier"),
                "title", json_object_get(is, "title"), "description",
                json_object_get(is, "description"), "priority", json_object_get(is, "priority"),
                "estimate", json_object_get(is, "estimate"), "url", ln_issue_url(w, is),
                "gitBranchName", branch, "createdAt", json_object_get(is, "createdAt"), "updatedAt",
                json_object_get(is, "updatedAt"), "archivedAt", json_object_get(is, "archivedAt"),
                "completedAt", json_object_get(is, "completedAt"), "startedAt",
                json_object_get(is, "startedAt"), "canceledAt", json_object_get(is, "canceledAt"),
                "dueDate", json_object_get(is, "dueDate"), "status", json_object_get(state, "name"),
                "statusType", json_object_get(state, "type"), "labels", labels, "createdBy",
                json_object_get(cr, "name"), "createdById", json_object_get(is, "creatorId"),
                "assignee", json_object_get(as, "name"), "assigneeId",
                json_object_get(is, "assigneeId"), "project", json_object_get(pr, "name"),
                "projectId", json_object_get(is, "projectId"), "parentId",
                json_object_get(is, "parentId"), "team", json_object_get(team, "name"), "teamId",
                json_object_get(is, "teamId"), "cycleId", json_object_get(is, "cycleId"),
                "labelIds", json_object_get(is, "labelIds"));
}

/* A comment with its author's name. New reference. */
static json_t *comment_out(json_t *w, json_t *cm)
{
        json_t *o = json_deep_copy(cm);
        json_t *u = ln_by_id(w, "users", json_get_str(cm, "userId"));
        if (o && json_object_set_new(o, "author",
                                     u ? json_pack("{s:O, s:O}", "id", json_object_get(u, "id"),
                                                   "name", json_object_get(u, "name"))
                                       : json_null()) < 0) {
                json_decref(o);
                return NULL;
        }
        return o;
}

typedef json_t *(*RenderFn)(json_t *w, json_t *row);

static json_t *row_out(json_t *w, json_t *row)
{
        (void)w;
        return json_deep_copy(row);
}

/* The MCP answer of a list: {<key>: [rendered], pageInfo: {hasNextPage, endCursor}} of the page
 * limit/cursor names (limit: default 50, at most 250). rows is taken. */
static int reply_list(TwinCall *c, TwinReply *rp, const char *key, json_t *rows, RenderFn render)
{
        _cleanup_json_ json_t *all = rows, *nodes = NULL, *info = NULL;
        int64_t limit = 50;
        const char *cursor;
        int r = twin_arg_int(c->args, "limit", 1, 250, &limit);
        if (r == -EINVAL)
                return ln_fail(rp, BAD, "limit must be a number from 1 to 250");
        if ((r = arg_str(c, rp, "cursor", &cursor)) != 0)
                return r < 0 ? r : 0;
        char err[128];
        r = ln_page(all, limit, cursor, -1, NULL, &nodes, &info, err, sizeof(err));
        if (r < 0)
                return r;
        if (r > 0)
                return ln_fail(rp, BAD, "%s", err);
        _cleanup_json_ json_t *out = json_array();
        size_t i;
        json_t *row;
        json_array_foreach (nodes, i, row) {
                if (json_array_append_new(out, render(c->world, row)) < 0)
                        return -ENOMEM;
        }
        return twin_reply_body(rp, 200,
                               json_pack("{s:O, s:{s:O, s:O}}", key, out, "pageInfo", "hasNextPage",
                                         json_object_get(info, "hasNextPage"), "endCursor",
                                         json_object_get(info, "endCursor")));
}

/* Whether hay contains needle, ignoring ASCII case. */
static bool has_ci(const char *hay, const char *needle)
{
        return hay && needle && strcasestr(hay, needle);
}

/* Whether every word of query (split at white space) is in one of the texts, ignoring ASCII
 * case: how Linear's MCP server searches ("agent eval triage" finds "Triage inbox for agent
 * eval"), not as one substring. A query of no words matches. */
static bool has_words(const char *query, const char *const *texts, size_t n)
{
        const char *p = query;
        while (p && *p) {
                p += strspn(p, " \t\r\n");
                size_t l = strcspn(p, " \t\r\n");
                if (l == 0)
                        break;
                bool found = false;
                for (size_t i = 0; i < n && !found; i++)
                        for (const char *q = texts[i]; q && *q && !found; q++)
                                found = strncasecmp(q, p, l) == 0;
                if (!found)
                        return false;
                p += l;
        }
        return true;
}

/* rows (borrowed) sorted by key, newest first (a new array). */
static json_t *newest_first(json_t *rows, const char *key)
{
        json_t *a = json_copy(rows);
        size_t n = json_array_size(a);
        /* insertion sort: stable, and worlds are small */
        for (size_t i = 1; a && i < n; i++) {
                json_t *v = json_incref(json_array_get(a, i));
                const char *vk = strempty(json_get_str(v, key));
                size_t j = i;
                while (j > 0 &&
                       strcmp(strempty(json_get_str(json_array_get(a, j - 1), key)), vk) < 0) {
                        json_array_set(a, j, json_array_get(a, j - 1));
                        j--;
                }
                json_array_set_new(a, j, v);
        }
        return a;
}

/* "Created after" of list_issues and friends: an ISO-8601 date or time, or a duration before
 * now ("-P1D", "-P2W", "-PT3H"). 0 with *ret seconds, 1 refused (rp), -ENOMEM. */
static int after_time(TwinCall *c, TwinReply *rp, const char *key, int64_t *ret)
{
        const char *s;
        int r = arg_str(c, rp, key, &s);
        *ret = INT64_MIN;
        if (r != 0 || !s)
                return r;
        if (ln_parse_time(s, ret) == 0)
                return 0;
        const char *p = s[0] == '-' ? s + 1 : s;
        long long n = 0;
        char unit = 0, t = 0;
        if (sscanf(p, "P%lld%c", &n, &unit) == 2 || sscanf(p, "P%c%lld%c", &t, &n, &unit) == 3) {
                int64_t sec = unit == 'W' ? 604800 : unit == 'D' ? 86400 : 0;
                if (t == 'T')
                        sec = unit == 'H' ? 3600 : unit == 'M' ? 60 : unit == 'S' ? 1 : 0;
                if (sec > 0 && n >= 0 && (t == 0 || t == 'T')) {
                        *ret = c->now - (int64_t)n * sec;
                        return 0;
                }
        }
        r = ln_fail(rp, BAD, "%s must be an ISO-8601 date or a duration such as -P1D", key);
        return r < 0 ? r : 1;
}

static bool newer(const json_t *row, const char *key, int64_t since)
{
        int64_t t;
        if (since == INT64_MIN)
                return true;
        return ln_parse_time(json_get_str(row, key), &t) == 0 && t >= since;
}

/* The number of times needle occurs in hay (non-overlapping), at most 2 unless all. */
static size_t occurrences(const char *hay, const char *needle, bool all)
{
        size_t n = 0, l = strlen(needle);
        for (const char *p = hay; l && (p = strstr(p, needle)) && (all || n < 2); p += l)
                n++;
        return n;
}

/*
 * The `patch` argument of save_issue and save_project (Linear's MCP server): edits applied to
 * content in order, all or none — replace {old_string, new_string, replace_all?},
 * insert_before and insert_after {anchor, text}, prepend and append {text}; an anchor must
 * match exactly once. 0 with the new content in *ret (malloc'd), 1 refused (rp), -ENOMEM.
 */
static int apply_patch(TwinReply *rp, const char *content, json_t *ops, char **ret)
{
        _cleanup_free_ char *cur = strdup(strempty(content));
        if (!cur)
                return -ENOMEM;
        if (!json_is_array(ops) || json_array_size(ops) < 1 || json_array_size(ops) > 50) {
                int r = ln_fail(rp, BAD, "patch must be a list of 1 to 50 operations");
                return r < 0 ? r : 1;
        }
        size_t i;
        json_t *op;
        json_array_foreach (ops, i, op) {
                const char *kind = json_get_str(op, "op");
                bool replace = streq_ptr(kind, "replace");
                const char *anchor = json_get_str(op, replace ? "old_string" : "anchor");
                const char *text = json_get_str(op, replace ? "new_string" : "text");
                bool all = replace && json_is_true(json_object_get(op, "replace_all"));
                bool anchored = replace || streq_ptr(kind, "insert_before") ||
                                streq_ptr(kind, "insert_after");
                if (!kind || !text || (anchored && (!anchor || !*anchor)) ||
                    (!anchored && !streq(kind, "prepend") && !streq(kind, "append"))) {
                        int r = ln_fail(rp, BAD, "patch[%zu]: not an operation Linear knows", i);
                        return r < 0 ? r : 1;
                }
                size_t hits = anchored ? occurrences(cur, anchor, all) : 1;
                if (hits == 0 || (hits > 1 && !all)) {
                        int r = ln_fail(rp, BAD,
                                        "patch[%zu]: the anchor must match the current content "
                                        "exactly once (it matches %s)",
                                        i, hits ? "more than once" : "nowhere");
                        return r < 0 ? r : 1;
                }
                size_t cl = strlen(cur), al = anchor ? strlen(anchor) : 0, tl = strlen(text);
                _cleanup_free_ char *next = malloc(cl + (hits ? hits : 1) * (tl + al) + 1);
                if (!next)
                        return -ENOMEM;
                char *q = next;
                if (streq(kind, "prepend"))
                        q = stpcpy(stpcpy(q, text), cur);
                else if (streq(kind, "append"))
                        q = stpcpy(stpcpy(q, cur), text);
                else {
                        const char *p = cur, *m;
                        while ((m = strstr(p, anchor))) {
                                q = mempcpy(q, p, (size_t)(m - p));
                                if (streq(kind, "insert_before"))
                                        q = stpcpy(stpcpy(q, text), anchor);
                                else if (streq(kind, "insert_after"))
                                        q = stpcpy(stpcpy(q, anchor), text);
                                else
                                        q = stpcpy(q, text);
                                p = m + al;
                                if (!all)
                                        break;
                        }
                        q = stpcpy(q, p);
                }
                *q = 0;
                free(cur);
                cur = TAKE_PTR(next);
        }
        *ret = TAKE_PTR(cur);
        return 0;
}

/* The description a save gives: description as it is, or patch applied to the row's (only on
 * an update, and not both). 0 with *ret (new JSON value, NULL: unchanged), 1 refused, -ENOMEM. */
static int new_description(TwinCall *c, TwinReply *rp, const json_t *old, json_t **ret)
{
        json_t *d = json_object_get(c->args, "description"),
               *patch = json_object_get(c->args, "patch");
        *ret = NULL;
        if (patch && json_is_null(patch))
                patch = NULL;
        int r = 0;
        if (patch && (!old || d))
                r = ln_fail(rp, BAD, "%s",
                            !old ? "patch is only valid when updating"
                                 : "pass description or patch, not both");
        else if (d && !json_is_string(d) && !json_is_null(d))
                r = ln_fail(rp, BAD, "description must be a string");
        if (r != 0 || rp->status >= 400)
                return r < 0 ? r : 1;
        if (d) {
                *ret = json_incref(d);
                return 0;
        }
        if (!patch)
                return 0;
        _cleanup_free_ char *text = NULL;
        if ((r = apply_patch(rp, json_get_str(old, "description"), patch, &text)) != 0)
                return r;
        *ret = json_string(text);
        return *ret ? 0 : -ENOMEM;
}

/* ------------------------------------------------------------------ issues */

/* list_issues: the workspace's issues, filtered by the MCP tool's arguments, by updatedAt (or
 * createdAt) newest first. */
int ln_act_list_issues(TwinCall *c, TwinReply *rp)
{
        json_t *w = c->world;
        int r = unmodelled(c, rp, (const char *const[]){"delegate", "release", NULL});
        if (r != 0)
                return r < 0 ? r : 0;
        const char *query, *team_ref, *state_ref, *cycle_ref, *label_ref, *project_ref, *parent_ref,
                *order;
        if ((r = arg_str(c, rp, "query", &query)) != 0 ||
            (r = arg_str(c, rp, "team", &team_ref)) != 0 ||
            (r = arg_str(c, rp, "state", &state_ref)) != 0 ||
            (r = arg_str(c, rp, "cycle", &cycle_ref)) != 0 ||
            (r = arg_str(c, rp, "label", &label_ref)) != 0 ||
            (r = arg_str(c, rp, "project", &project_ref)) != 0 ||
            (r = arg_str(c, rp, "parentId", &parent_ref)) != 0 ||
            (r = arg_str(c, rp, "orderBy", &order)) != 0)
                return r < 0 ? r : 0;
        if (order && !streq(order, "createdAt") && !streq(order, "updatedAt"))
                return ln_fail(rp, BAD, "orderBy must be createdAt or updatedAt");
        int64_t created, updated, prio = -1;
        if ((r = after_time(c, rp, "createdAt", &created)) != 0 ||
            (r = after_time(c, rp, "updatedAt", &updated)) != 0)
                return r < 0 ? r : 0;
        r = twin_arg_int(c->args, "priority", 0, 4, &prio);
        if (r == -EINVAL)
                return ln_fail(rp, BAD, "priority must be 0, 1, 2, 3 or 4");
        bool archived = true;
        if (twin_arg_bool(c->args, "includeArchived", &archived) == -EINVAL)
                return ln_fail(rp, BAD, "includeArchived must be true or false");

        json_t *team = team_ref ? ln_team_ref(w, team_ref) : NULL;
        if (team_ref && !team)
                return ln_fail(rp, GONE, "Team not found: %s", team_ref);
        const char *tid = json_get_str(team, "id");
        json_t *cycle = cycle_ref ? ln_cycle_ref(w, tid, cycle_ref) : NULL;
        if (cycle_ref && !cycle)
                return ln_fail(rp, GONE, "Cycle not found: %s", cycle_ref);
        json_t *label = label_ref ? ln_label_ref(w, tid, label_ref) : NULL;
        if (label_ref && !label)
                return ln_fail(rp, GONE, "Label not found: %s", label_ref);
        json_t *project = project_ref ? ln_project_ref(w, project_ref) : NULL;
        if (project_ref && !project)
                return ln_fail(rp, GONE, "Project not found: %s", project_ref);
        json_t *parent = parent_ref ? ln_issue_ref(w, parent_ref) : NULL;
        if (parent_ref && !parent)
                return ln_fail(rp, GONE, "Issue not found: %s", parent_ref);
        /* assignee: a user, "me", or null (the MCP schema's "null" for no assignee) */
        json_t *av = json_object_get(c->args, "assignee");
        bool by_assignee = av != NULL, unassigned = false;
        json_t *assignee = NULL;
        if (av && (json_is_null(av) || streq_ptr(json_string_value(av), "null")))
                unassigned = true;
        else if (av && !json_is_string(av))
                return ln_fail(rp, BAD, "assignee must be a string or null");
        else if (av && !(assignee = ln_user_ref(w, json_string_value(av))))
                return ln_fail(rp, GONE, "User not found: %s", json_string_value(av));

        _cleanup_json_ json_t *rows = json_array();
        if (!rows)
                return -ENOMEM;
        size_t i;
        json_t *is;
        json_array_foreach (ln_list(w, "issues"), i, is) {
                json_t *st = ln_by_id(w, "states", json_get_str(is, "stateId"));
                if (tid && !streq_ptr(json_get_str(is, "teamId"), tid))
                        continue;
                if (state_ref && !(streq_ptr(json_get_str(st, "id"), state_ref) ||
                                   strcasecmp(strempty(json_get_str(st, "name")), state_ref) == 0 ||
                                   strcasecmp(strempty(json_get_str(st, "type")), state_ref) == 0))
                        continue;
                if (cycle && !streq_ptr(json_get_str(is, "cycleId"), json_get_str(cycle, "id")))
                        continue;
                if (project &&
                    !streq_ptr(json_get_str(is, "projectId"), json_get_str(project, "id")))
                        continue;
                if (parent && !streq_ptr(json_get_str(is, "parentId"), json_get_str(parent, "id")))
                        continue;
                if (label) {
                        bool has = false;
                        size_t k;
                        json_t *lid;
                        json_array_foreach (json_object_get(is, "labelIds"), k, lid) {
                                has |= streq_ptr(json_string_value(lid), json_get_str(label, "id"));
                        }
                        if (!has)
                                continue;
                }
                if (by_assignee && (unassigned ? json_get_str(is, "assigneeId") != NULL
                                               : !streq_ptr(json_get_str(is, "assigneeId"),
                                                            json_get_str(assignee, "id"))))
                        continue;
                if (prio >= 0 && json_integer_value(json_object_get(is, "priority")) != prio)
                        continue;
                const char *texts[] = {json_get_str(is, "title"), json_get_str(is, "description")};
                if (query && !has_words(query, texts, ELEMENTSOF(texts)) &&
                    strcasecmp(strempty(json_get_str(is, "identifier")), query) != 0)
                        continue;
                if (!archived && !json_is_null(json_object_get(is, "archivedAt")))
                        continue;
                if (!newer(is, "createdAt", created) || !newer(is, "updatedAt", updated))
                        continue;
                if (json_array_append(rows, is) < 0)
                        return -ENOMEM;
        }
        json_t *sorted = newest_first(rows, order ? order : "updatedAt");
        if (!sorted)
                return -ENOMEM;
        r = reply_list(c, rp, "issues", sorted, issue_out);
        if (r < 0 || rp->status != 200)
                return r;
        /* fields: each issue keeps id, identifier and the fields named */
        json_t *fields = json_object_get(c->args, "fields");
        if (!json_is_array(fields) || json_array_size(fields) == 0)
                return 0;
        json_array_foreach (json_object_get(rp->body, "issues"), i, is) {
                const char *k;
                json_t *v, *tmp;
                json_object_foreach_safe (is, tmp, k, v) {
                        bool keep = streq(k, "id") || streq(k, "identifier");
                        size_t j;
                        json_t *f;
                        json_array_foreach (fields, j, f) {
                                keep |= streq_ptr(json_string_value(f), k);
                        }
                        if (!keep)
                                json_object_del(is, k);
                }
        }
        return 0;
}

/* The identifier of the issue id names (borrowed), or NULL. */
static json_t *identifier_of(json_t *w, const char *id)
{
        return json_object_get(ln_by_id(w, "issues", id), "identifier");
}

/* get_issue's relations of issue is: {blocks, blockedBy, relatedTo: [identifiers], duplicateOf:
 * identifier | null}, as save_issue's arguments name them (new reference). */
static json_t *relations_out(json_t *w, json_t *is)
{
        const char *self = json_get_str(is, "id");
        _cleanup_json_ json_t *o = json_pack("{s:[], s:[], s:[], s:n}", "blocks", "blockedBy",
                                             "relatedTo", "duplicateOf");
        size_t i;
        json_t *row;
        if (!o)
                return NULL;
        json_array_foreach (ln_list(w, "relations"), i, row) {
                const char *type = json_get_str(row, "type"), *a = json_get_str(row, "issueId"),
                           *b = json_get_str(row, "relatedIssueId");
                bool out = streq_ptr(a, self), in = streq_ptr(b, self);
                json_t *other = identifier_of(w, out ? b : a);
                if ((!out && !in) || !other)
                        continue;
                const char *key = streq_ptr(type, "related")  ? "relatedTo"
                                  : streq_ptr(type, "blocks") ? (out ? "blocks" : "blockedBy")
                                  : out                       ? "duplicateOf"
                                                              : NULL;
                if (!key)
                        continue;
                int r = streq(key, "duplicateOf")
                                ? json_object_set(o, key, other)
                                : json_array_append(json_object_get(o, key), other);
                if (r < 0)
                        return NULL;
        }
        return TAKE_PTR(o);
}

/* get_issue: one issue by id or identifier, with its attachments (the links save_issue added)
 * and, with includeRelations, its relations. */
int ln_act_get_issue(TwinCall *c, TwinReply *rp)
{
        const char *ref;
        int r = arg_str(c, rp, "id", &ref);
        if (r != 0)
                return r < 0 ? r : 0;
        if (!ref)
                return ln_fail(rp, BAD, "id is required");
        bool rels = false;
        if (twin_arg_bool(c->args, "includeRelations", &rels) == -EINVAL)
                return ln_fail(rp, BAD, "includeRelations must be true or false");
        static const char *const unmodelled_includes[] = {"includeCustomerNeeds",
                                                          "includeReleases"};
        for (size_t k = 0; k < ELEMENTSOF(unmodelled_includes); k++)
                if (json_is_true(json_object_get(c->args, unmodelled_includes[k])))
                        return ln_fail(rp, BAD, "%s is not modelled by the pome linear twin",
                                       unmodelled_includes[k]);
        json_t *is = ln_issue_ref(c->world, ref);
        if (!is)
                return ln_fail(rp, GONE, "Issue not found: %s", ref);
        _cleanup_json_ json_t *out = issue_out(c->world, is), *atts = json_array();
        size_t i;
        json_t *a;
        if (!out || !atts)
                return -ENOMEM;
        json_array_foreach (ln_list(c->world, "attachments"), i, a) {
                if (streq_ptr(json_get_str(a, "issueId"), json_get_str(is, "id")) &&
                    json_array_append_new(atts, json_pack("{s:O, s:O, s:O, s:O}", "id",
                                                          json_object_get(a, "id"), "title",
                                                          json_object_get(a, "title"), "url",
                                                          json_object_get(a, "url"), "createdAt",
                                                          json_object_get(a, "createdAt"))) < 0)
                        return -ENOMEM;
        }
        if (json_object_set(out, "attachments", atts) < 0 ||
            (rels && json_object_set_new(out, "relations", relations_out(c->world, is)) < 0))
                return -ENOMEM;
        return twin_reply_body(rp, 200, TAKE_PTR(out));
}

/* The labels the save_issue argument labels names (names or ids of team tid's labels) as ids,
 * into *ret (new). 0, 1 refused (rp), -ENOMEM. */
static int label_ids(TwinCall *c, TwinReply *rp, json_t *names, const char *tid, json_t **ret)
{
        _cleanup_json_ json_t *ids = json_array();
        if (!ids)
                return -ENOMEM;
        if (!json_is_array(names)) {
                int r = ln_fail(rp, BAD, "labels must be a list of label names or ids");
                return r < 0 ? r : 1;
        }
        size_t i;
        json_t *n;
        json_array_foreach (names, i, n) {
                json_t *l = json_is_string(n) ? ln_label_ref(c->world, tid, json_string_value(n))
                                              : NULL;
                if (!l) {
                        int r = ln_fail(rp, GONE, "Label not found: %s",
                                        json_is_string(n) ? json_string_value(n) : "(not a name)");
                        return r < 0 ? r : 1;
                }
                bool dup = false;
                size_t j;
                json_t *have;
                json_array_foreach (ids, j, have) {
                        dup |= json_equal(have, json_object_get(l, "id"));
                }
                if (!dup && json_array_append(ids, json_object_get(l, "id")) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(ids);
        return 0;
}

/* Sets issue[key] to the id of the row the argument arg names (resolve), or null when the
 * argument is null. 0, 1 refused (rp), -ENOMEM. */
static int set_ref(TwinCall *c, TwinReply *rp, json_t *is, const char *arg, const char *key,
                   const char *what, json_t *(*resolve)(TwinCall *, const char *tid, const char *),
                   const char *tid)
{
        json_t *v = json_object_get(c->args, arg);
        if (!v)
                return 0;
        if (json_is_null(v))
                return json_object_set_new(is, key, json_null()) < 0 ? -ENOMEM : 0;
        json_t *row = json_is_string(v) ? resolve(c, tid, json_string_value(v)) : NULL;
        if (!row) {
                int r = json_is_string(v)
                                ? ln_fail(rp, GONE, "%s not found: %s", what, json_string_value(v))
                                : ln_fail(rp, BAD, "%s must be a string or null", arg);
                return r < 0 ? r : 1;
        }
        return json_object_set(is, key, json_object_get(row, "id")) < 0 ? -ENOMEM : 0;
}

static json_t *res_user(TwinCall *c, const char *tid, const char *ref)
{
        (void)tid;
        return ln_user_ref(c->world, ref);
}

static json_t *res_project(TwinCall *c, const char *tid, const char *ref)
{
        (void)tid;
        return ln_project_ref(c->world, ref);
}

static json_t *res_cycle(TwinCall *c, const char *tid, const char *ref)
{
        return ln_cycle_ref(c->world, tid, ref);
}

static json_t *res_issue(TwinCall *c, const char *tid, const char *ref)
{
        (void)tid;
        return ln_issue_ref(c->world, ref);
}

/* ------------------------------------------------------------------ links and relations */

/* The relation lists of save_issue: the argument, the relation's type, whether the issue saved
 * is the relation's issue (else its related issue), and whether the list removes. */
static const struct {
        const char *arg, *type;
        bool out, remove;
} rel_args[] = {
        {"relatedTo", "related", true, false},  {"blocks", "blocks", true, false},
        {"blockedBy", "blocks", false, false},  {"removeRelatedTo", "related", true, true},
        {"removeBlocks", "blocks", true, true}, {"removeBlockedBy", "blocks", false, true},
};

/* The row of world.relations of type between issues a and b (a related relation either way
 * round), or NULL. NULL a or b: none. */
static json_t *find_relation(json_t *w, const char *type, const char *a, const char *b)
{
        size_t i;
        json_t *row;
        if (!a || !b)
                return NULL;
        bool sym = streq(type, "related");
        json_array_foreach (ln_list(w, "relations"), i, row) {
                if (!streq_ptr(json_get_str(row, "type"), type))
                        continue;
                const char *x = json_get_str(row, "issueId"),
                           *y = json_get_str(row, "relatedIssueId");
                if ((streq_ptr(x, a) && streq_ptr(y, b)) ||
                    (sym && streq_ptr(x, b) && streq_ptr(y, a)))
                        return row;
        }
        return NULL;
}

/* The attachment of issue issue_id with url, or NULL. */
static json_t *find_attachment(json_t *w, const char *issue_id, const char *url)
{
        size_t i;
        json_t *row;
        json_array_foreach (ln_list(w, "attachments"), i, row) {
                if (streq_ptr(json_get_str(row, "issueId"), issue_id) &&
                    streq_ptr(json_get_str(row, "url"), url))
                        return row;
        }
        return NULL;
}

/* Refuses the argument arg: BAD_USER_INPUT "<arg><what>". 1, or -ENOMEM. */
static int refuse(TwinReply *rp, const char *arg, const char *what)
{
        int r = ln_fail(rp, BAD, "%s%s", arg, what);
        return r < 0 ? r : 1;
}

/*
 * What save_issue's links, relation lists (relatedTo, blocks, blockedBy and their remove*) and
 * duplicateOf ask, checked before anything changes: *ret a new list of steps ({op: "add" | "del"
 * | "link" | "undup", ...}; an issue id null is the issue being saved), NULL when none is asked.
 * old: the issue updated (NULL: a new one). 0, 1 refused (rp), -ENOMEM.
 */
static int plan_links(TwinCall *c, TwinReply *rp, json_t *old, json_t **ret)
{
        json_t *w = c->world;
        const char *self = json_get_str(old, "id");
        _cleanup_json_ json_t *plan = json_array();
        if (!plan)
                return -ENOMEM;
        *ret = NULL;
        json_t *links = json_object_get(c->args, "links");
        if (links && !json_is_null(links)) {
                if (!json_is_array(links) || json_array_size(links) > 50)
                        return refuse(rp, "links", " must be a list of at most 50 {url, title}");
                size_t i;
                json_t *l;
                json_array_foreach (links, i, l) {
                        const char *url = json_get_str(l, "url"), *title = json_get_str(l, "title");
                        const char *sep = url ? strstr(url, "://") : NULL;
                        if (!sep || sep == url || strpbrk(url, " \t\r\n") || strlen(url) > 2048)
                                return refuse(rp, "links", ": each url must be an absolute URI");
                        if (!title || !*title)
                                return refuse(rp, "links", ": each link needs a title");
                        if (json_array_append_new(plan, json_pack("{s:s, s:s, s:s}", "op", "link",
                                                                  "url", url, "title", title)) < 0)
                                return -ENOMEM;
                }
        }
        for (size_t k = 0; k < ELEMENTSOF(rel_args); k++) {
                json_t *v = json_object_get(c->args, rel_args[k].arg);
                if (!v || json_is_null(v))
                        continue;
                if (!json_is_array(v) || json_array_size(v) > 50)
                        return refuse(rp, rel_args[k].arg,
                                      " must be a list of issue ids or identifiers");
                size_t i;
                json_t *e;
                json_array_foreach (v, i, e) {
                        json_t *other =
                                json_is_string(e) ? ln_issue_ref(w, json_string_value(e)) : NULL;
                        if (!other) {
                                int r = ln_fail(rp, GONE, "Issue not found: %s",
                                                json_is_string(e) ? json_string_value(e)
                                                                  : "(not an identifier)");
                                return r < 0 ? r : 1;
                        }
                        const char *oid = json_get_str(other, "id");
                        if (streq_ptr(oid, self))
                                return refuse(rp, rel_args[k].arg,
                                              ": an issue cannot relate to itself");
                        json_t *step =
                                json_pack("{s:s, s:s}", "op", rel_args[k].remove ? "del" : "add",
                                          "type", rel_args[k].type);
                        if (!step || json_array_append_new(plan, step) < 0 ||
                            json_object_set_new(step,
                                                rel_args[k].out ? "issueId" : "relatedIssueId",
                                                json_string_or_null(self)) < 0 ||
                            json_object_set_new(step,
                                                rel_args[k].out ? "relatedIssueId" : "issueId",
                                                json_string(oid)) < 0)
                                return -ENOMEM;
                }
        }
        json_t *dup = json_object_get(c->args, "duplicateOf");
        if (dup) {
                json_t *other =
                        json_is_string(dup) ? ln_issue_ref(w, json_string_value(dup)) : NULL;
                if (!json_is_null(dup) && !json_is_string(dup))
                        return refuse(rp, "duplicateOf",
                                      " must be an issue id, identifier or null");
                if (json_is_string(dup) && !other) {
                        int r = ln_fail(rp, GONE, "Issue not found: %s", json_string_value(dup));
                        return r < 0 ? r : 1;
                }
                if (other && streq_ptr(json_get_str(other, "id"), self))
                        return refuse(rp, "duplicateOf", ": an issue cannot duplicate itself");
                if (json_array_append_new(plan, json_pack("{s:s}", "op", "undup")) < 0)
                        return -ENOMEM;
                if (other &&
                    json_array_append_new(
                            plan, json_pack("{s:s, s:s, s:o, s:O}", "op", "add", "type",
                                            "duplicate", "issueId", json_string_or_null(self),
                                            "relatedIssueId", json_object_get(other, "id"))) < 0)
                        return -ENOMEM;
        }
        if (json_array_size(plan) > 0)
                *ret = TAKE_PTR(plan);
        return 0;
}

/* step's issue id member key, the issue saved (self) where the step has null. */
static const char *step_id(const json_t *step, const char *key, const char *self)
{
        const char *v = json_get_str(step, key);
        return v ? v : self;
}

/* The index in world.relations of the duplicate relation of issue self, or -1. */
static ssize_t dup_index(json_t *w, const char *self)
{
        size_t i;
        json_t *row;
        json_array_foreach (ln_list(w, "relations"), i, row) {
                if (self && streq_ptr(json_get_str(row, "type"), "duplicate") &&
                    streq_ptr(json_get_str(row, "issueId"), self))
                        return (ssize_t)i;
        }
        return -1;
}

/* Whether plan (NULL: none) changes anything for the issue old (NULL: a new issue: any link or
 * added relation does). */
static bool plan_changes(json_t *w, json_t *old, json_t *plan)
{
        const char *self = json_get_str(old, "id");
        size_t i;
        json_t *step;
        json_array_foreach (plan, i, step) {
                const char *op = json_get_str(step, "op");
                if (streq(op, "link")) {
                        json_t *a = find_attachment(w, self, json_get_str(step, "url"));
                        if (!a || !json_equal(json_object_get(a, "title"),
                                              json_object_get(step, "title")))
                                return true;
                } else if (streq(op, "undup")) {
                        if (dup_index(w, self) >= 0)
                                return true;
                } else {
                        bool has = find_relation(w, json_get_str(step, "type"),
                                                 step_id(step, "issueId", self),
                                                 step_id(step, "relatedIssueId", self));
                        if (has != streq(op, "add"))
                                return true;
                }
        }
        return false;
}

/* Carries plan out for the issue self (its id, now it has one): links become attachments
 * (a url the issue has already: its title is updated), relations are added once and removed.
 * 0 or -ENOMEM. */
static int plan_apply(TwinCall *c, const char *self, json_t *plan, const char *now)
{
        json_t *w = c->world;
        size_t i;
        json_t *step;
        json_array_foreach (plan, i, step) {
                const char *op = json_get_str(step, "op");
                const char *a = step_id(step, "issueId", self),
                           *b = step_id(step, "relatedIssueId", self);
                const char *type = json_get_str(step, "type");
                _cleanup_free_ char *nid = NULL;
                if (streq(op, "link")) {
                        json_t *at = find_attachment(w, self, json_get_str(step, "url"));
                        if (at) {
                                if (json_object_set(at, "title", json_object_get(step, "title")) <
                                    0)
                                        return -ENOMEM;
                                continue;
                        }
                        if (ln_new_id(w, "attachment", &nid) < 0 ||
                            json_array_append_new(
                                    ln_list(w, "attachments"),
                                    json_pack("{s:s, s:s, s:O, s:O, s:s}", "id", nid, "issueId",
                                              self, "url", json_object_get(step, "url"), "title",
                                              json_object_get(step, "title"), "createdAt", now)) <
                                    0)
                                return -ENOMEM;
                } else if (streq(op, "undup")) {
                        ssize_t k = dup_index(w, self);
                        if (k >= 0)
                                json_array_remove(ln_list(w, "relations"), (size_t)k);
                } else if (streq(op, "del")) {
                        json_t *row = find_relation(w, type, a, b);
                        json_t *list = ln_list(w, "relations");
                        for (size_t k = 0; row && k < json_array_size(list); k++)
                                if (json_array_get(list, k) == row) {
                                        json_array_remove(list, k);
                                        break;
                                }
                } else if (!find_relation(w, type, a, b)) {
                        if (ln_new_id(w, "relation", &nid) < 0 ||
                            json_array_append_new(ln_list(w, "relations"),
                                                  json_pack("{s:s, s:s, s:s, s:s, s:s}", "id", nid,
                                                            "type", type, "issueId", a,
                                                            "relatedIssueId", b, "createdAt",
                                                            now)) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

/*
 * save_issue: creates an issue (no id: title and team required) or updates the issue id names
 * (id or identifier). state takes a state of the issue's team by id, name or type; assignee a
 * user by id, name, email or "me", null to unassign; labels replaces the issue's labels.
 */
int ln_act_save_issue(TwinCall *c, TwinReply *rp)
{
        json_t *w = c->world;
        int r = unmodelled(c, rp,
                           (const char *const[]){"milestone", "delegate", "slaBreachesAt",
                                                 "slaType", "setReleases", "addReleases",
                                                 "removeReleases", NULL});
        if (r != 0)
                return r < 0 ? r : 0;
        const char *id, *title, *team_ref, *state_ref;
        _cleanup_json_ json_t *plan = NULL;
        if ((r = arg_str(c, rp, "id", &id)) != 0 || (r = arg_str(c, rp, "title", &title)) != 0 ||
            (r = arg_str(c, rp, "team", &team_ref)) != 0 ||
            (r = arg_str(c, rp, "state", &state_ref)) != 0)
                return r < 0 ? r : 0;
        char now[32];
        now_str(c, now);
        json_t *old = id ? ln_issue_ref(w, id) : NULL;
        if (id && !old)
                return ln_fail(rp, GONE, "Issue not found: %s", id);
        if ((r = plan_links(c, rp, old, &plan)) != 0)
                return r < 0 ? r : 0;
        if (!old && (!title || !*title))
                return ln_fail(rp, BAD, "title is required when creating an issue");
        if (!old && !team_ref)
                return ln_fail(rp, BAD, "team is required when creating an issue");
        if (title && !*title)
                return ln_fail(rp, BAD, "title must not be empty");
        json_t *team = team_ref ? ln_team_ref(w, team_ref)
                                : ln_by_id(w, "teams", json_get_str(old, "teamId"));
        if (!team)
                return ln_fail(rp, GONE, "Team not found: %s", strempty(team_ref));
        const char *tid = json_get_str(team, "id");

        _cleanup_json_ json_t *is = NULL;
        if (old)
                is = json_deep_copy(old);
        else {
                /* id, identifier and number are given when the issue is made (below): a
                 * refused call takes nothing from the world's counters */
                is = json_pack("{s:s, s:s, s:i, s:s, s:s, s:n, s:i, s:n, s:n, s:n, s:O?, s:[], "
                               "s:n, s:n, s:n, s:n, s:s, s:s, s:n, s:n, s:n, s:n}",
                               "id", "", "identifier", "", "number", 0, "teamId", tid, "title",
                               title, "description", "priority", 0, "estimate", "stateId",
                               "assigneeId", "creatorId", json_object_get(w, "viewer"), "labelIds",
                               "projectId", "cycleId", "parentId", "dueDate", "createdAt", now,
                               "updatedAt", now, "startedAt", "completedAt", "canceledAt",
                               "archivedAt");
                if (!is)
                        return -ENOMEM;
                if (!json_object_get(is, "creatorId") &&
                    json_object_set_new(is, "creatorId", json_null()) < 0)
                        return -ENOMEM;
        }
        if (old && team_ref && !streq_ptr(json_get_str(old, "teamId"), tid))
                return ln_fail(rp, BAD,
                               "Moving an issue to another team is not modelled by the "
                               "pome linear twin");
        if (title && json_object_set_new(is, "title", json_string(title)) < 0)
                return -ENOMEM;
        _cleanup_json_ json_t *desc = NULL;
        if ((r = new_description(c, rp, old, &desc)) != 0)
                return r < 0 ? r : 0;
        if (desc && json_object_set(is, "description", desc) < 0)
                return -ENOMEM;
        json_t *v;
        if ((v = json_object_get(c->args, "priority"))) {
                int64_t p;
                if (twin_arg_int(c->args, "priority", 0, 4, &p) < 0)
                        return ln_fail(rp, BAD, "priority must be 0, 1, 2, 3 or 4");
                if (json_object_set_new(is, "priority", json_integer(p)) < 0)
                        return -ENOMEM;
        }
        if ((v = json_object_get(c->args, "estimate"))) {
                int64_t e = 0;
                if (!json_is_null(v) && twin_arg_int(c->args, "estimate", 0, 1000000, &e) < 0)
                        return ln_fail(rp, BAD, "estimate must be a non-negative integer or null");
                if (json_object_set_new(is, "estimate",
                                        json_is_null(v) ? json_null() : json_integer(e)) < 0)
                        return -ENOMEM;
        }
        if ((v = json_object_get(c->args, "dueDate"))) {
                int64_t t;
                if (!json_is_null(v) &&
                    (!json_is_string(v) || ln_parse_time(json_string_value(v), &t) < 0))
                        return ln_fail(rp, BAD, "dueDate must be a date (YYYY-MM-DD) or null");
                if (json_object_set(is, "dueDate", v) < 0)
                        return -ENOMEM;
        }
        if ((r = set_ref(c, rp, is, "assignee", "assigneeId", "User", res_user, tid)) != 0 ||
            (r = set_ref(c, rp, is, "project", "projectId", "Project", res_project, tid)) != 0 ||
            (r = set_ref(c, rp, is, "cycle", "cycleId", "Cycle", res_cycle, tid)) != 0 ||
            (r = set_ref(c, rp, is, "parentId", "parentId", "Issue", res_issue, tid)) != 0)
                return r < 0 ? r : 0;
        if (streq_ptr(json_get_str(is, "parentId"), json_get_str(is, "id")))
                return ln_fail(rp, BAD, "An issue cannot be its own parent");
        if ((v = json_object_get(c->args, "labels"))) {
                _cleanup_json_ json_t *ids = NULL;
                if ((r = label_ids(c, rp, v, tid, &ids)) != 0)
                        return r < 0 ? r : 0;
                if (json_object_set(is, "labelIds", ids) < 0)
                        return -ENOMEM;
        }
        json_t *state = NULL;
        if (state_ref) {
                state = ln_state_ref(w, tid, state_ref);
                if (!state)
                        return ln_fail(rp, GONE, "Workflow state not found: %s", state_ref);
        } else if (!old) {
                /* a new issue starts in the team's Todo, else its first state */
                state = ln_state_ref(w, tid, "Todo");
                size_t i;
                json_t *st;
                json_array_foreach (ln_list(w, "states"), i, st) {
                        if (!state && streq_ptr(json_get_str(st, "teamId"), tid))
                                state = st;
                }
                if (!state)
                        return ln_fail(rp, BAD, "No workflow state exists for the selected team");
        }
        if (state && !streq_ptr(json_get_str(state, "id"), json_get_str(is, "stateId")) &&
            ln_set_issue_state(is, state, now) < 0)
                return -ENOMEM;
        bool linked = plan_changes(w, old, plan);
        if (old && json_equal(old, is) && !linked)
                return twin_reply_body(rp, 200, issue_out(w, old)); /* nothing changed */
        if (json_object_set_new(is, "updatedAt", json_string(now)) < 0)
                return -ENOMEM;
        json_t *list = ln_list(w, "issues");
        if (old) {
                size_t i;
                json_t *row;
                json_array_foreach (list, i, row) {
                        if (row == old)
                                break;
                }
                if ((r = twin_reply_mutation(rp, old, is)) < 0)
                        return r;
                if (json_array_set(list, i, is) < 0)
                        return -ENOMEM;
        } else {
                _cleanup_free_ char *nid = NULL, *ident = NULL;
                if ((r = ln_new_id(w, "issue", &nid)) < 0)
                        return r;
                int64_t n = ln_next_number(w, tid);
                if (n < 0)
                        return (int)n;
                if (asprintf(&ident, "%s-%lld", json_get_str(team, "key"), (long long)n) < 0 ||
                    json_object_set_new(is, "id", json_string(nid)) < 0 ||
                    json_object_set_new(is, "identifier", json_string(ident)) < 0 ||
                    json_object_set_new(is, "number", json_integer(n)) < 0)
                        return -ENOMEM;
                if ((r = twin_reply_mutation(rp, NULL, is)) < 0)
                        return r;
                if (json_array_append(list, is) < 0)
                        return -ENOMEM;
        }
        if ((r = plan_apply(c, json_get_str(is, "id"), plan, now)) < 0)
                return r;
        return twin_reply_body(rp, old ? 200 : 201, issue_out(w, is));
}

/* The issue args.id names, or NULL with NOT_FOUND in rp (r: 0, or -ENOMEM). */
static json_t *issue_arg(TwinCall *c, TwinReply *rp, int *r)
{
        const char *ref;
        *r = arg_str(c, rp, "id", &ref);
        if (*r != 0) {
                *r = *r < 0 ? *r : 0;
                return NULL;
        }
        json_t *is = ref ? ln_issue_ref(c->world, ref) : NULL;
        if (!is)
                *r = ref ? ln_fail(rp, GONE, "Issue not found: %s", ref)
                         : ln_fail(rp, BAD, "id is required");
        return is;
}

/* archive_issue (GraphQL issueArchive): stamps archivedAt; archiving an archived issue changes
 * nothing. */
int ln_act_archive_issue(TwinCall *c, TwinReply *rp)
{
        int r;
        json_t *is = issue_arg(c, rp, &r);
        if (!is)
                return r;
        if (json_is_null(json_object_get(is, "archivedAt"))) {
                char now[32];
                _cleanup_json_ json_t *before = json_deep_copy(is);
                if (!before ||
                    json_object_set_new(is, "archivedAt", json_string(now_str(c, now))) < 0 ||
                    json_object_set_new(is, "updatedAt", json_string(now)) < 0 ||
                    twin_reply_mutation(rp, before, is) < 0)
                        return -ENOMEM;
        }
        return twin_reply_body(rp, 200, issue_out(c->world, is));
}

/* delete_issue (GraphQL issueDelete): removes the issue, its comments, attachments and
 * relations; its sub-issues lose their parent. */
int ln_act_delete_issue(TwinCall *c, TwinReply *rp)
{
        int r;
        json_t *is = issue_arg(c, rp, &r);
        if (!is)
                return r;
        _cleanup_json_ json_t *gone = json_incref(is);
        const char *id = json_get_str(gone, "id");
        json_t *issues = ln_list(c->world, "issues");
        static const char *const owned[][2] = {{"comments", "issueId"},
                                               {"attachments", "issueId"},
                                               {"relations", "issueId"},
                                               {"relations", "relatedIssueId"}};
        for (size_t k = 0; k < ELEMENTSOF(owned); k++) {
                json_t *list = ln_list(c->world, owned[k][0]);
                for (size_t i = json_array_size(list); i-- > 0;)
                        if (streq_ptr(json_get_str(json_array_get(list, i), owned[k][1]), id))
                                json_array_remove(list, i);
        }
        for (size_t i = json_array_size(issues); i-- > 0;) {
                json_t *row = json_array_get(issues, i);
                if (row == gone)
                        json_array_remove(issues, i);
                else if (streq_ptr(json_get_str(row, "parentId"), id) &&
                         json_object_set_new(row, "parentId", json_null()) < 0)
                        return -ENOMEM;
        }
        if ((r = twin_reply_mutation(rp, gone, NULL)) < 0)
                return r;
        return twin_reply_body(
                rp, 200,
                json_pack("{s:b, s:O}", "success", true, "id", json_object_get(gone, "id")));
}

/* ------------------------------------------------------------------ comments */

/* list_comments: the comments of an issue, newest first. */
int ln_act_list_comments(TwinCall *c, TwinReply *rp)
{
        int r = unmodelled(c, rp,
                           (const char *const[]){"projectId", "initiativeId", "documentId",
                                                 "milestoneId", "statusUpdateId",
                                                 "statusUpdateType", NULL});
        if (r != 0)
                return r < 0 ? r : 0;
        const char *ref, *order;
        if ((r = arg_str(c, rp, "issueId", &ref)) != 0 ||
            (r = arg_str(c, rp, "orderBy", &order)) != 0)
                return r < 0 ? r : 0;
        if (!ref)
                return ln_fail(rp, BAD, "issueId is required");
        if (order && !streq(order, "createdAt") && !streq(order, "updatedAt"))
                return ln_fail(rp, BAD, "orderBy must be createdAt or updatedAt");
        json_t *is = ln_issue_ref(c->world, ref);
        if (!is)
                return ln_fail(rp, GONE, "Issue not found: %s", ref);
        _cleanup_json_ json_t *rows = json_array();
        size_t i;
        json_t *cm;
        json_array_foreach (ln_list(c->world, "comments"), i, cm) {
                if (streq_ptr(json_get_str(cm, "issueId"), json_get_str(is, "id")) &&
                    json_array_append(rows, cm) < 0)
                        return -ENOMEM;
        }
        json_t *sorted = newest_first(rows, order ? order : "createdAt");
        if (!sorted)
                return -ENOMEM;
        return reply_list(c, rp, "comments", sorted, comment_out);
}

/*
 * save_comment: creates a comment on an issue (issueId), a reply in a thread (parentId: the
 * reply goes to the thread's root comment, on its issue), or updates a comment's body (id).
 */
int ln_act_save_comment(TwinCall *c, TwinReply *rp)
{
        json_t *w = c->world;
        int r = unmodelled(c, rp,
                           (const char *const[]){"projectId", "initiativeId", "documentId",
                                                 "milestoneId", "statusUpdateId",
                                                 "statusUpdateType", NULL});
        if (r != 0)
                return r < 0 ? r : 0;
        const char *id, *issue_ref, *parent_ref, *body;
        if ((r = arg_str(c, rp, "id", &id)) != 0 ||
            (r = arg_str(c, rp, "issueId", &issue_ref)) != 0 ||
            (r = arg_str(c, rp, "parentId", &parent_ref)) != 0 ||
            (r = arg_str(c, rp, "body", &body)) != 0)
                return r < 0 ? r : 0;
        if (!body || !*body)
                return ln_fail(rp, BAD, "body is required");
        char now[32];
        now_str(c, now);
        if (id) {
                json_t *cm = ln_by_id(w, "comments", id);
                if (!cm)
                        return ln_fail(rp, GONE, "Comment not found: %s", id);
                if (!streq_ptr(json_get_str(cm, "body"), body)) {
                        _cleanup_json_ json_t *before = json_deep_copy(cm);
                        if (!before || json_object_set_new(cm, "body", json_string(body)) < 0 ||
                            json_object_set_new(cm, "updatedAt", json_string(now)) < 0 ||
                            twin_reply_mutation(rp, before, cm) < 0)
                                return -ENOMEM;
                }
                return twin_reply_body(rp, 200, comment_out(w, cm));
        }
        json_t *parent = parent_ref ? ln_by_id(w, "comments", parent_ref) : NULL;
        if (parent_ref && !parent)
                return ln_fail(rp, GONE, "Comment not found: %s", parent_ref);
        /* Linear threads are one level deep: a reply to a reply joins its root's thread */
        json_t *root = ln_by_id(w, "comments", json_get_str(parent, "parentId"));
        if (root)
                parent = root;
        json_t *is = parent      ? ln_by_id(w, "issues", json_get_str(parent, "issueId"))
                     : issue_ref ? ln_issue_ref(w, issue_ref)
                                 : NULL;
        if (!parent && !issue_ref)
                return ln_fail(rp, BAD, "issueId or parentId is required");
        if (!is)
                return ln_fail(rp, GONE, "Issue not found: %s", strempty(issue_ref));
        _cleanup_free_ char *nid = NULL;
        if ((r = ln_new_id(w, "comment", &nid)) < 0)
                return r;
        _cleanup_json_ json_t *cm = json_pack(
                "{s:s, s:O, s:O?, s:s, s:O?, s:s, s:s}", "id", nid, "issueId",
                json_object_get(is, "id"), "userId", json_object_get(w, "viewer"), "body", body,
                "parentId", json_object_get(parent, "id"), "createdAt", now, "updatedAt", now);
        if (!cm)
                return -ENOMEM;
        if ((!json_object_get(cm, "userId") &&
             json_object_set_new(cm, "userId", json_null()) < 0) ||
            (!json_object_get(cm, "parentId") &&
             json_object_set_new(cm, "parentId", json_null()) < 0))
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, NULL, cm)) < 0)
                return r;
        if (json_array_append(ln_list(w, "comments"), cm) < 0)
                return -ENOMEM;
        return twin_reply_body(rp, 201, comment_out(w, cm));
}

/* delete_comment: removes a comment and the replies of its thread. */
int ln_act_delete_comment(TwinCall *c, TwinReply *rp)
{
        const char *id;
        int r = arg_str(c, rp, "id", &id);
        if (r != 0)
                return r < 0 ? r : 0;
        if (!id)
                return ln_fail(rp, BAD, "id is required");
        json_t *cm = ln_by_id(c->world, "comments", id);
        if (!cm)
                return ln_fail(rp, GONE, "Comment not found: %s", id);
        _cleanup_json_ json_t *gone = json_incref(cm);
        json_t *list = ln_list(c->world, "comments");
        for (size_t i = json_array_size(list); i-- > 0;) {
                json_t *row = json_array_get(list, i);
                if (row == gone || streq_ptr(json_get_str(row, "parentId"), id))
                        json_array_remove(list, i);
        }
        if ((r = twin_reply_mutation(rp, gone, NULL)) < 0)
                return r;
        return twin_reply_body(rp, 200, json_pack("{s:b, s:s}", "success", true, "id", id));
}

/* ------------------------------------------------------------------ teams and states */

static json_t *team_of_arg(TwinCall *c, TwinReply *rp, const char *key, bool required, int *r)
{
        const char *ref;
        *r = arg_str(c, rp, key, &ref);
        if (*r != 0) {
                *r = *r < 0 ? *r : 0;
                return NULL;
        }
        if (!ref) {
                if (required)
                        *r = ln_fail(rp, BAD, "%s is required", key);
                return NULL;
        }
        json_t *t = ln_team_ref(c->world, ref);
        if (!t)
                *r = ln_fail(rp, GONE, "Team not found: %s", ref);
        return t;
}

/* list_issue_statuses: the workflow states of a team, by position. */
int ln_act_list_issue_statuses(TwinCall *c, TwinReply *rp)
{
        int r;
        json_t *team = team_of_arg(c, rp, "team", true, &r);
        if (!team)
                return r;
        _cleanup_json_ json_t *out = json_array();
        size_t i;
        json_t *st;
        json_array_foreach (ln_list(c->world, "states"), i, st) {
                if (streq_ptr(json_get_str(st, "teamId"), json_get_str(team, "id")) &&
                    json_array_append_new(out, json_deep_copy(st)) < 0)
                        return -ENOMEM;
        }
        return twin_reply_body(rp, 200, json_pack("{s:O}", "statuses", out));
}

/* get_issue_status: one workflow state of a team, by id or name. */
int ln_act_get_issue_status(TwinCall *c, TwinReply *rp)
{
        int r;
        json_t *team = team_of_arg(c, rp, "team", true, &r);
        if (!team)
                return r;
        const char *id, *name;
        if ((r = arg_str(c, rp, "id", &id)) != 0 || (r = arg_str(c, rp, "name", &name)) != 0)
                return r < 0 ? r : 0;
        const char *tid = json_get_str(team, "id");
        json_t *st = id ? ln_state_ref(c->world, tid, id) : NULL;
        if (!st && name)
                st = ln_state_ref(c->world, tid, name);
        if (!st)
                return ln_fail(rp, GONE, "Workflow state not found: %s", id ? id : strempty(name));
        return twin_reply_body(rp, 200, json_deep_copy(st));
}

/* list_teams: the workspace's teams. */
int ln_act_list_teams(TwinCall *c, TwinReply *rp)
{
        const char *query;
        int64_t created, updated;
        int r;
        if ((r = arg_str(c, rp, "query", &query)) != 0 ||
            (r = after_time(c, rp, "createdAt", &created)) != 0 ||
            (r = after_time(c, rp, "updatedAt", &updated)) != 0)
                return r < 0 ? r : 0;
        _cleanup_json_ json_t *rows = json_array();
        size_t i;
        json_t *t;
        json_array_foreach (ln_list(c->world, "teams"), i, t) {
                if (query && !has_ci(json_get_str(t, "name"), query) &&
                    !has_ci(json_get_str(t, "key"), query))
                        continue;
                if (!newer(t, "createdAt", created) || !newer(t, "createdAt", updated))
                        continue;
                if (json_array_append(rows, t) < 0)
                        return -ENOMEM;
        }
        return reply_list(c, rp, "teams", TAKE_PTR(rows), row_out);
}

/* get_team: a team by id, key or name. */
int ln_act_get_team(TwinCall *c, TwinReply *rp)
{
        int r;
        json_t *team = team_of_arg(c, rp, "query", true, &r);
        if (!team)
                return r;
        return twin_reply_body(rp, 200, json_deep_copy(team));
}

/* ------------------------------------------------------------------ users */

/* list_users: the workspace's users (every user is in every team: teams are not modelled as
 * memberships, so team only checks that the team exists). */
int ln_act_list_users(TwinCall *c, TwinReply *rp)
{
        const char *query;
        int r = arg_str(c, rp, "query", &query);
        if (r != 0)
                return r < 0 ? r : 0;
        if (json_object_get(c->args, "team")) {
                json_t *team = team_of_arg(c, rp, "team", false, &r);
                if (!team)
                        return r;
        }
        _cleanup_json_ json_t *rows = json_array();
        size_t i;
        json_t *u;
        json_array_foreach (ln_list(c->world, "users"), i, u) {
                if (query && !has_ci(json_get_str(u, "name"), query) &&
                    !has_ci(json_get_str(u, "displayName"), query) &&
                    !has_ci(json_get_str(u, "email"), query))
                        continue;
                if (json_array_append(rows, u) < 0)
                        return -ENOMEM;
        }
        return reply_list(c, rp, "users", TAKE_PTR(rows), row_out);
}

/* get_user: a user by id, name, email or "me". */
int ln_act_get_user(TwinCall *c, TwinReply *rp)
{
        const char *ref;
        int r = arg_str(c, rp, "query", &ref);
        if (r != 0)
                return r < 0 ? r : 0;
        if (!ref)
                return ln_fail(rp, BAD, "query is required");
        json_t *u = ln_user_ref(c->world, ref);
        if (!u)
                return ln_fail(rp, GONE, "User not found: %s", ref);
        return twin_reply_body(rp, 200, json_deep_copy(u));
}

/* ------------------------------------------------------------------ labels */

/* list_issue_labels: workspace labels and, with team, that team's. */
int ln_act_list_issue_labels(TwinCall *c, TwinReply *rp)
{
        const char *name;
        int r = arg_str(c, rp, "name", &name);
        if (r != 0)
                return r < 0 ? r : 0;
        json_t *team = NULL;
        if (json_object_get(c->args, "team") && !(team = team_of_arg(c, rp, "team", false, &r)))
                return r;
        _cleanup_json_ json_t *rows = json_array();
        size_t i;
        json_t *l;
        json_array_foreach (ln_list(c->world, "labels"), i, l) {
                const char *tid = json_get_str(l, "teamId");
                if (team && tid && !streq(tid, json_get_str(team, "id")))
                        continue;
                if (name && !has_ci(json_get_str(l, "name"), name))
                        continue;
                if (json_array_append(rows, l) < 0)
                        return -ENOMEM;
        }
        return reply_list(c, rp, "labels", TAKE_PTR(rows), row_out);
}

static int check_color(TwinReply *rp, const char *color)
{
        size_t n = color ? strlen(color) : 0;
        bool ok = !color || (color[0] == '#' && (n == 7 || n == 4) &&
                             strspn(color + 1, "0123456789abcdefABCDEF") == n - 1);
        if (ok)
                return 0;
        int r = ln_fail(rp, BAD, "color must be a hex color (#rrggbb)");
        return r < 0 ? r : 1;
}

/* create_issue_label: a label of a team (teamId) or of the workspace; a name already used in
 * the same scope is refused, as Linear refuses it. */
int ln_act_create_issue_label(TwinCall *c, TwinReply *rp)
{
        json_t *w = c->world;
        int r = unmodelled(c, rp, (const char *const[]){"parent", NULL});
        if (r != 0)
                return r < 0 ? r : 0;
        bool group = false;
        if (twin_arg_bool(c->args, "isGroup", &group) == -EINVAL)
                return ln_fail(rp, BAD, "isGroup must be true or false");
        if (group)
                return ln_fail(rp, BAD, "isGroup is not modelled by the pome linear twin");
        const char *name, *desc, *color;
        if ((r = arg_str(c, rp, "name", &name)) != 0 ||
            (r = arg_str(c, rp, "description", &desc)) != 0 ||
            (r = arg_str(c, rp, "color", &color)) != 0 || (r = check_color(rp, color)) != 0)
                return r < 0 ? r : 0;
        if (!name || !*name)
                return ln_fail(rp, BAD, "name is required");
        json_t *team = NULL;
        if (json_object_get(c->args, "teamId") && !(team = team_of_arg(c, rp, "teamId", false, &r)))
                return r;
        const char *tid = json_get_str(team, "id");
        size_t i;
        json_t *l;
        json_array_foreach (ln_list(w, "labels"), i, l) {
                const char *lt = json_get_str(l, "teamId");
                if (strcasecmp(strempty(json_get_str(l, "name")), name) == 0 &&
                    (!lt || !tid || streq(lt, tid)))
                        return ln_fail(rp, BAD, "Duplicate label name: %s", name);
        }
        char now[32];
        _cleanup_free_ char *nid = NULL;
        if ((r = ln_new_id(w, "label", &nid)) < 0)
                return r;
        _cleanup_json_ json_t *row =
                json_pack("{s:s, s:s, s:s, s:o, s:o, s:s}", "id", nid, "name", name, "color",
                          color ? color : "#64748b", "description", json_string_or_null(desc),
                          "teamId", json_string_or_null(tid), "createdAt", now_str(c, now));
        if (!row || twin_reply_mutation(rp, NULL, row) < 0 ||
            json_array_append(ln_list(w, "labels"), row) < 0)
                return -ENOMEM;
        return twin_reply_body(rp, 201, json_deep_copy(row));
}

/* update_issue_label (GraphQL issueLabelUpdate): a label's name, color or description. */
int ln_act_update_issue_label(TwinCall *c, TwinReply *rp)
{
        const char *id, *name, *color;
        int r;
        if ((r = arg_str(c, rp, "id", &id)) != 0 || (r = arg_str(c, rp, "name", &name)) != 0 ||
            (r = arg_str(c, rp, "color", &color)) != 0 || (r = check_color(rp, color)) != 0)
                return r < 0 ? r : 0;
        json_t *l = id ? ln_by_id(c->world, "labels", id) : NULL;
        if (!l)
                return ln_fail(rp, GONE, "Label not found: %s", strempty(id));
        if (name && !*name)
                return ln_fail(rp, BAD, "name must not be empty");
        json_t *desc = json_object_get(c->args, "description");
        if (desc && !json_is_string(desc) && !json_is_null(desc))
                return ln_fail(rp, BAD, "description must be a string or null");
        _cleanup_json_ json_t *before = json_deep_copy(l);
        if (!before || (name && json_object_set_new(l, "name", json_string(name)) < 0) ||
            (color && json_object_set_new(l, "color", json_string(color)) < 0) ||
            (desc && json_object_set(l, "description", desc) < 0))
                return -ENOMEM;
        if (!json_equal(before, l) && twin_reply_mutation(rp, before, l) < 0)
                return -ENOMEM;
        return twin_reply_body(rp, 200, json_deep_copy(l));
}

/* ------------------------------------------------------------------ projects and cycles */

/* list_projects: the workspace's projects. */
int ln_act_list_projects(TwinCall *c, TwinReply *rp)
{
        int r = unmodelled(c, rp, (const char *const[]){"initiative", "member", "label", NULL});
        if (r != 0)
                return r < 0 ? r : 0;
        const char *query, *state;
        int64_t created, updated;
        if ((r = arg_str(c, rp, "query", &query)) != 0 ||
            (r = arg_str(c, rp, "state", &state)) != 0 ||
            (r = after_time(c, rp, "createdAt", &created)) != 0 ||
            (r = after_time(c, rp, "updatedAt", &updated)) != 0)
                return r < 0 ? r : 0;
        json_t *team = NULL;
        if (json_object_get(c->args, "team") && !(team = team_of_arg(c, rp, "team", false, &r)))
                return r;
        _cleanup_json_ json_t *rows = json_array();
        size_t i;
        json_t *p;
        json_array_foreach (ln_list(c->world, "projects"), i, p) {
                if (query && !has_ci(json_get_str(p, "name"), query))
                        continue;
                if (state && strcasecmp(strempty(json_get_str(p, "state")), state) != 0)
                        continue;
                if (!newer(p, "createdAt", created) || !newer(p, "createdAt", updated))
                        continue;
                if (team) {
                        bool in = false;
                        size_t k;
                        json_t *t;
                        json_array_foreach (json_object_get(p, "teamIds"), k, t) {
                                in |= streq_ptr(json_string_value(t), json_get_str(team, "id"));
                        }
                        if (!in)
                                continue;
                }
                if (json_array_append(rows, p) < 0)
                        return -ENOMEM;
        }
        return reply_list(c, rp, "projects", TAKE_PTR(rows), row_out);
}

/* get_project: a project by id or name. */
int ln_act_get_project(TwinCall *c, TwinReply *rp)
{
        const char *ref;
        int r = arg_str(c, rp, "query", &ref);
        if (r != 0)
                return r < 0 ? r : 0;
        json_t *p = ref ? ln_project_ref(c->world, ref) : NULL;
        if (!p)
                return ref ? ln_fail(rp, GONE, "Project not found: %s", ref)
                           : ln_fail(rp, BAD, "query is required");
        return twin_reply_body(rp, 200, json_deep_copy(p));
}

/* The team ids the argument key lists (team ids, keys or names) into *ret (new). 0, 1 refused,
 * -ENOMEM. */
static int team_ids(TwinCall *c, TwinReply *rp, const char *key, json_t **ret)
{
        json_t *v = json_object_get(c->args, key);
        *ret = NULL;
        if (!v)
                return 0;
        _cleanup_json_ json_t *ids = json_array();
        size_t i;
        json_t *e;
        if (!json_is_array(v)) {
                int r = ln_fail(rp, BAD, "%s must be a list of teams", key);
                return r < 0 ? r : 1;
        }
        json_array_foreach (v, i, e) {
                json_t *t = json_is_string(e) ? ln_team_ref(c->world, json_string_value(e)) : NULL;
                if (!t) {
                        int r = ln_fail(rp, GONE, "Team not found: %s",
                                        json_is_string(e) ? json_string_value(e) : "(not a name)");
                        return r < 0 ? r : 1;
                }
                if (json_array_append(ids, json_object_get(t, "id")) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(ids);
        return 0;
}

static bool strv_has(const json_t *a, const json_t *v)
{
        size_t i;
        json_t *e;
        json_array_foreach (a, i, e) {
                if (json_equal(e, v))
                        return true;
        }
        return false;
}

/* save_project: creates a project (no id: name and at least one team) or updates one: name,
 * description, state, and its teams (setTeams, addTeams, removeTeams). */
int ln_act_save_project(TwinCall *c, TwinReply *rp)
{
        json_t *w = c->world;
        int r = unmodelled(c, rp,
                           (const char *const[]){"icon", "color", "summary", "startDate",
                                                 "startDateResolution", "targetDate",
                                                 "targetDateResolution", "priority", "labels",
                                                 "lead", "addInitiatives", "removeInitiatives",
                                                 "setInitiatives", "links", NULL});
        if (r != 0)
                return r < 0 ? r : 0;
        const char *id, *name, *state;
        if ((r = arg_str(c, rp, "id", &id)) != 0 || (r = arg_str(c, rp, "name", &name)) != 0 ||
            (r = arg_str(c, rp, "state", &state)) != 0)
                return r < 0 ? r : 0;
        json_t *old = id ? ln_project_ref(w, id) : NULL;
        if (id && !old)
                return ln_fail(rp, GONE, "Project not found: %s", id);
        if (state && !streq(state, "planned") && !streq(state, "started") &&
            !streq(state, "completed") && !streq(state, "canceled") && !streq(state, "backlog") &&
            !streq(state, "paused"))
                return ln_fail(rp, BAD,
                               "state must be backlog, planned, started, paused, "
                               "completed or canceled");
        _cleanup_json_ json_t *set = NULL, *add = NULL, *del = NULL, *p = NULL;
        if ((r = team_ids(c, rp, "setTeams", &set)) != 0 ||
            (r = team_ids(c, rp, "addTeams", &add)) != 0 ||
            (r = team_ids(c, rp, "removeTeams", &del)) != 0)
                return r < 0 ? r : 0;
        char now[32];
        now_str(c, now);
        if (old)
                p = json_deep_copy(old);
        else {
                if (!name || !*name)
                        return ln_fail(rp, BAD, "name is required when creating a project");
                p = json_pack("{s:s, s:s, s:n, s:s, s:[], s:s}", "id", "", "name", name,
                              "description", "state", "planned", "teamIds", "createdAt", now);
        }
        if (!p)
                return -ENOMEM;
        if (name && (!*name || json_object_set_new(p, "name", json_string(name)) < 0))
                return *name ? -ENOMEM : ln_fail(rp, BAD, "name must not be empty");
        _cleanup_json_ json_t *desc = NULL;
        if ((r = new_description(c, rp, old, &desc)) != 0)
                return r < 0 ? r : 0;
        if ((desc && json_object_set(p, "description", desc) < 0) ||
            (state && json_object_set_new(p, "state", json_string(state)) < 0) ||
            (set && json_object_set(p, "teamIds", set) < 0))
                return -ENOMEM;
        json_t *teams = json_object_get(p, "teamIds");
        size_t i;
        json_t *t;
        json_array_foreach (add, i, t) {
                if (!strv_has(teams, t) && json_array_append(teams, t) < 0)
                        return -ENOMEM;
        }
        for (size_t k = json_array_size(teams); k-- > 0;)
                if (strv_has(del, json_array_get(teams, k)))
                        json_array_remove(teams, k);
        if (json_array_size(teams) == 0)
                return ln_fail(rp, BAD, "A project needs at least one team (setTeams)");
        if (old && json_equal(old, p))
                return twin_reply_body(rp, 200, json_deep_copy(old));
        json_t *list = ln_list(w, "projects");
        _unused_ _cleanup_json_ json_t *keep = json_incref(old); /* for the delta, once replaced */
        if (old) {
                json_array_foreach (list, i, t) {
                        if (t == old)
                                break;
                }
                if (json_array_set(list, i, p) < 0)
                        return -ENOMEM;
        } else {
                _cleanup_free_ char *nid = NULL;
                if ((r = ln_new_id(w, "project", &nid)) < 0)
                        return r;
                if (json_object_set_new(p, "id", json_string(nid)) < 0 ||
                    json_array_append(list, p) < 0)
                        return -ENOMEM;
        }
        if ((r = twin_reply_mutation(rp, old, p)) < 0)
                return r;
        return twin_reply_body(rp, old ? 200 : 201, json_deep_copy(p));
}

/* list_cycles: a team's cycles; type current, previous or next picks by the clock. */
int ln_act_list_cycles(TwinCall *c, TwinReply *rp)
{
        int r;
        json_t *team = team_of_arg(c, rp, "teamId", true, &r);
        if (!team)
                return r;
        const char *type;
        if ((r = arg_str(c, rp, "type", &type)) != 0)
                return r < 0 ? r : 0;
        if (type && !streq(type, "current") && !streq(type, "previous") && !streq(type, "next"))
                return ln_fail(rp, BAD, "type must be current, previous or next");
        _cleanup_json_ json_t *out = json_array();
        size_t i;
        json_t *cy;
        json_array_foreach (ln_list(c->world, "cycles"), i, cy) {
                if (!streq_ptr(json_get_str(cy, "teamId"), json_get_str(team, "id")))
                        continue;
                int64_t s = INT64_MIN, e = INT64_MAX;
                (void)ln_parse_time(json_get_str(cy, "startsAt"), &s);
                (void)ln_parse_time(json_get_str(cy, "endsAt"), &e);
                bool keep = !type || (streq(type, "current") && s <= c->now && c->now < e) ||
                            (streq(type, "previous") && e <= c->now) ||
                            (streq(type, "next") && s > c->now);
                if (keep && json_array_append_new(out, json_deep_copy(cy)) < 0)
                        return -ENOMEM;
        }
        return twin_reply_body(rp, 200, json_pack("{s:O}", "cycles", out));
}
