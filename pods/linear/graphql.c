/* SPDX-License-Identifier: MIT */
/*
 * The Linear twin's GraphQL API (POST /graphql; https://linear.app/developers/graphql) on the
 * shared parser and executor (pods/twin/graphql.h) with the schema of schema.c: the queries
 * @linear/sdk sends for viewer, organization, teams, workflow states, labels, users, issues,
 * comments, projects and cycles — Linear's filters (IssueFilter and the others, evaluated by
 * the tables below), its pagination (first/after/last/before, cursors are node ids, pageInfo,
 * nodes and edges) — and the mutations triage needs. A mutation runs the action of actions.c
 * that makes the same change (issueUpdate: save_issue), so its tape row carries that tool; a
 * query's row carries "graphql".
 *
 * Errors are Linear's: {errors: [{message, locations?, path?, extensions: {code, type,
 * userPresentableMessage, http: {status}}}]} with HTTP 400 (hosted Pome's Linear twin answers
 * every request with errors so). A document that does not validate is GRAPHQL_VALIDATION_FAILED
 * with graphql-js's sentence for an unknown field ("Cannot query field ... on type ..."), as
 * api.linear.app (graphql-js) words it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/json-util.h"
#include "pods/linear/gql.h"
#include "pods/linear/linear.h"

/* What resolvers share: the call, the changes made so far ({tool, status, response_body,
 * state_delta} each) and the action of the last mutation tried (static). */
typedef struct Lx {
        TwinCall *c;
        json_t *mutations;
        const char *last_tool;
} Lx;

static TwinCall *call(GqlExec *x)
{
        return ((Lx *)gql_userdata(x))->c;
}

static json_t *world(GqlExec *x)
{
        return call(x)->world;
}

/* An error at the field being resolved, with Linear's extensions code (graphql.c's "type",
 * turned into extensions when the response is finished). Returns 0 or -ENOMEM. */
#define fail(x, code, ...) gql_error(x, code, __VA_ARGS__)

/* ------------------------------------------------------------------ defaults */

/* A field the world does not model reads its source's member when there is one, else the
 * neutral value of its type. */
static int member_or(GqlExec *x, json_t *source, json_t *def, json_t **ret)
{
        json_t *v = json_object_get(source, gql_field_name(x));
        if (v && !json_is_null(v)) {
                json_decref(def);
                *ret = json_incref(v);
                return 0;
        }
        *ret = def;
        return def ? 0 : -ENOMEM;
}

int lq_d_false(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)args;
        return member_or(x, source, json_false(), ret);
}

int lq_d_zero(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)args;
        return member_or(x, source, json_integer(0), ret);
}

int lq_d_string(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)args;
        return member_or(x, source, json_string(""), ret);
}

int lq_d_list(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)args;
        return member_or(x, source, json_array(), ret);
}

int lq_d_object(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)args;
        return member_or(x, source, json_object(), ret);
}

/* ------------------------------------------------------------------ sources */

typedef enum Kind {
        K_USER,
        K_TEAM,
        K_STATE,
        K_LABEL,
        K_PROJECT,
        K_CYCLE,
        K_ISSUE,
        K_COMMENT,
        K_ATTACHMENT,
        K_RELATION,
} Kind;

static const char *const lists[] = {
        [K_USER] = "users",         [K_TEAM] = "teams",       [K_STATE] = "states",
        [K_LABEL] = "labels",       [K_PROJECT] = "projects", [K_CYCLE] = "cycles",
        [K_ISSUE] = "issues",       [K_COMMENT] = "comments", [K_ATTACHMENT] = "attachments",
        [K_RELATION] = "relations",
};

static const char *priority_label(json_int_t p)
{
        static const char *const names[] = {"No priority", "Urgent", "High", "Medium", "Low"};
        return p >= 0 && p <= 4 ? names[p] : "No priority";
}

static const char *url_key(json_t *w)
{
        const char *k = json_get_str(json_object_get(w, "organization"), "urlKey");
        return k ? k : "pome-twin";
}

static int put(json_t *o, const char *key, json_t *v)
{
        return json_object_set_new(o, key, v ? v : json_null()) < 0 ? -ENOMEM : 0;
}

static size_t count_where(json_t *w, const char *list, const char *key, const char *id)
{
        size_t n = 0, i;
        json_t *row;
        json_array_foreach (ln_list(w, list), i, row) {
                n += streq_ptr(json_get_str(row, key), id);
        }
        return n;
}

/* The GraphQL source of a world row of kind k (row borrowed): a copy with the members Linear
 * computes. New reference; JSON null for NULL; NULL on OOM. */
static json_t *src(GqlExec *x, Kind k, json_t *row)
{
        json_t *w = world(x);
        if (!row)
                return json_null();
        _cleanup_json_ json_t *o = json_deep_copy(row);
        if (!o)
                return NULL;
        json_t *created = json_object_get(row, "createdAt");
        if (created && !json_object_get(row, "updatedAt") &&
            json_object_set(o, "updatedAt", created) < 0)
                return NULL;
        const char *id = json_get_str(row, "id");
        _cleanup_free_ char *url = NULL;
        switch (k) {
        case K_USER: {
                const char *name = strempty(json_get_str(row, "name"));
                char initials[8] = "";
                size_t n = 0;
                for (const char *p = name; *p && n < 2; p++)
                        if ((p == name || p[-1] == ' ') && *p != ' ')
                                initials[n++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
                if (asprintf(&url, LN_APP_URL "/%s/profiles/%s", url_key(w),
                             strempty(json_get_str(row, "displayName"))) < 0 ||
                    put(o, "url", json_string(url)) < 0 ||
                    put(o, "initials", json_string(initials)) < 0 ||
                    put(o, "isMe", json_boolean(streq_ptr(id, json_get_str(w, "viewer")))) < 0 ||
                    put(o, "owner", json_incref(json_object_get(row, "admin"))) < 0 ||
                    put(o, "isAssignable", json_true()) < 0 ||
                    put(o, "isMentionable", json_true()) < 0 ||
                    put(o, "canAccessAnyPublicTeam", json_true()) < 0 ||
                    put(o, "createdIssueCount",
                        json_integer((json_int_t)count_where(w, "issues", "creatorId", id))) < 0)
                        return NULL;
                break;
        }
        case K_TEAM: {
                bool priv = json_is_true(json_object_get(row, "private"));
                bool cycles = count_where(w, "cycles", "teamId", id) > 0;
                if (put(o, "displayName", json_incref(json_object_get(row, "name"))) < 0 ||
                    put(o, "visibility", json_string(priv ? "private" : "public")) < 0 ||
                    put(o, "timezone", json_string("Etc/UTC")) < 0 ||
                    put(o, "issueEstimationType", json_string("notUsed")) < 0 ||
                    put(o, "cyclesEnabled", json_boolean(cycles)) < 0 ||
                    put(o, "issueCount",
                        json_integer((json_int_t)count_where(w, "issues", "teamId", id))) < 0)
                        return NULL;
                break;
        }
        case K_STATE:
        case K_LABEL:
        case K_RELATION:
                break;
        case K_ATTACHMENT:
                if (put(o, "creator", json_null()) < 0 ||
                    put(o, "creatorId", json_incref(json_object_get(w, "viewer"))) < 0)
                        return NULL;
                break;
        case K_PROJECT: {
                _cleanup_free_ char *slug = NULL;
                if (asprintf(&slug, "%s", strempty(id)) < 0 ||
                    asprintf(&url, LN_APP_URL "/%s/project/%s", url_key(w), slug) < 0 ||
                    put(o, "url", json_string(url)) < 0 ||
                    put(o, "slugId", json_string(slug)) < 0 ||
                    put(o, "frequencyResolution", json_string("weekly")) < 0 ||
                    put(o, "priorityLabel", json_string("No priority")) < 0)
                        return NULL;
                break;
        }
        case K_CYCLE:
                if (!created &&
                    put(o, "createdAt", json_incref(json_object_get(row, "startsAt"))) < 0)
                        return NULL;
                if (!created &&
                    put(o, "updatedAt", json_incref(json_object_get(row, "startsAt"))) < 0)
                        return NULL;
                break;
        case K_ISSUE: {
                char branch[96];
                ln_branch_name(row, branch);
                if (put(o, "url", ln_issue_url(w, row)) < 0 ||
                    put(o, "branchName", json_string(branch)) < 0 ||
                    put(o, "priorityLabel",
                        json_string(priority_label(
                                json_integer_value(json_object_get(row, "priority"))))) < 0)
                        return NULL;
                break;
        }
        case K_COMMENT: {
                json_t *is = ln_by_id(w, "issues", json_get_str(row, "issueId"));
                _cleanup_json_ json_t *iu = ln_issue_url(w, is);
                if (asprintf(&url, "%s#comment-%s", strempty(json_string_value(iu)), strempty(id)) <
                            0 ||
                    put(o, "url", json_string(url)) < 0)
                        return NULL;
                if (!json_equal(json_object_get(row, "updatedAt"), created) &&
                    put(o, "editedAt", json_incref(json_object_get(row, "updatedAt"))) < 0)
                        return NULL;
                break;
        }
        }
        return TAKE_PTR(o);
}

static json_t *org_src(GqlExec *x)
{
        json_t *w = world(x);
        json_t *org = json_object_get(w, "organization");
        if (!json_is_object(org))
                return json_null();
        json_t *first = json_array_get(ln_list(w, "users"), 0);
        json_t *at = json_object_get(first, "createdAt");
        _cleanup_json_ json_t *o = json_deep_copy(org);
        if (!o || put(o, "createdAt", json_incref(at)) < 0 ||
            put(o, "updatedAt", json_incref(at)) < 0 ||
            put(o, "userCount", json_integer((json_int_t)json_array_size(ln_list(w, "users")))) <
                    0 ||
            put(o, "createdIssueCount",
                json_integer((json_int_t)json_array_size(ln_list(w, "issues")))) < 0 ||
            put(o, "releaseChannel", json_string("public")) < 0 ||
            put(o, "slaDayCount", json_string("all")) < 0 ||
            put(o, "projectUpdatesReminderFrequency", json_string("week")) < 0 ||
            put(o, "projectUpdateRemindersDay", json_string("Friday")) < 0 ||
            put(o, "initiativeUpdateRemindersDay", json_string("Friday")) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* ------------------------------------------------------------------ filters */

typedef enum FKind {
        FK_STR,
        FK_NUM,
        FK_DATE,
        FK_BOOL,
        FK_ISME,
        FK_REL,
        FK_LABELS,
        FK_CONTENT,
} FKind;

/* One member of a Linear filter input: what it compares and against which member of the row
 * (a relation: the id member, and the kind of row it names). */
typedef struct FDesc {
        const char *name;
        FKind kind;
        const char *key;
        Kind rel;
} FDesc;

#define FD_END                             \
        {                                  \
                NULL, FK_STR, NULL, K_USER \
        }

static const FDesc fd_user[] = {
        {"id", FK_STR, "id", K_USER},
        {"name", FK_STR, "name", K_USER},
        {"displayName", FK_STR, "displayName", K_USER},
        {"email", FK_STR, "email", K_USER},
        {"active", FK_BOOL, "active", K_USER},
        {"admin", FK_BOOL, "admin", K_USER},
        {"isMe", FK_ISME, "id", K_USER},
        FD_END,
};

static const FDesc fd_team[] = {
        {"id", FK_STR, "id", K_TEAM},
        {"key", FK_STR, "key", K_TEAM},
        {"name", FK_STR, "name", K_TEAM},
        {"description", FK_STR, "description", K_TEAM},
        FD_END,
};

static const FDesc fd_state[] = {
        {"id", FK_STR, "id", K_STATE},      {"name", FK_STR, "name", K_STATE},
        {"type", FK_STR, "type", K_STATE},  {"position", FK_NUM, "position", K_STATE},
        {"team", FK_REL, "teamId", K_TEAM}, FD_END,
};

static const FDesc fd_label[] = {
        {"id", FK_STR, "id", K_LABEL},
        {"name", FK_STR, "name", K_LABEL},
        {"team", FK_REL, "teamId", K_TEAM},
        FD_END,
};

static const FDesc fd_project[] = {
        {"id", FK_STR, "id", K_PROJECT},
        {"name", FK_STR, "name", K_PROJECT},
        {"state", FK_STR, "state", K_PROJECT},
        FD_END,
};

static const FDesc fd_cycle[] = {
        {"id", FK_STR, "id", K_CYCLE},
        {"name", FK_STR, "name", K_CYCLE},
        {"number", FK_NUM, "number", K_CYCLE},
        {"team", FK_REL, "teamId", K_TEAM},
        FD_END,
};

static const FDesc fd_issue[] = {
        {"id", FK_STR, "id", K_ISSUE},
        {"title", FK_STR, "title", K_ISSUE},
        {"description", FK_STR, "description", K_ISSUE},
        {"number", FK_NUM, "number", K_ISSUE},
        {"priority", FK_NUM, "priority", K_ISSUE},
        {"estimate", FK_NUM, "estimate", K_ISSUE},
        {"team", FK_REL, "teamId", K_TEAM},
        {"state", FK_REL, "stateId", K_STATE},
        {"assignee", FK_REL, "assigneeId", K_USER},
        {"creator", FK_REL, "creatorId", K_USER},
        {"labels", FK_LABELS, "labelIds", K_LABEL},
        {"project", FK_REL, "projectId", K_PROJECT},
        {"cycle", FK_REL, "cycleId", K_CYCLE},
        {"parent", FK_REL, "parentId", K_ISSUE},
        {"createdAt", FK_DATE, "createdAt", K_ISSUE},
        {"updatedAt", FK_DATE, "updatedAt", K_ISSUE},
        {"startedAt", FK_DATE, "startedAt", K_ISSUE},
        {"completedAt", FK_DATE, "completedAt", K_ISSUE},
        {"canceledAt", FK_DATE, "canceledAt", K_ISSUE},
        {"archivedAt", FK_DATE, "archivedAt", K_ISSUE},
        {"dueDate", FK_DATE, "dueDate", K_ISSUE},
        {"searchableContent", FK_CONTENT, "id", K_ISSUE},
        FD_END,
};

static const FDesc fd_comment[] = {
        {"id", FK_STR, "id", K_COMMENT},
        {"body", FK_STR, "body", K_COMMENT},
        {"user", FK_REL, "userId", K_USER},
        {"issue", FK_REL, "issueId", K_ISSUE},
        {"parent", FK_REL, "parentId", K_COMMENT},
        {"createdAt", FK_DATE, "createdAt", K_COMMENT},
        {"updatedAt", FK_DATE, "updatedAt", K_COMMENT},
        FD_END,
};

static const FDesc fd_attachment[] = {
        {"id", FK_STR, "id", K_ATTACHMENT},
        {"title", FK_STR, "title", K_ATTACHMENT},
        {"url", FK_STR, "url", K_ATTACHMENT},
        {"createdAt", FK_DATE, "createdAt", K_ATTACHMENT},
        FD_END,
};

static const FDesc fd_relation[] = {
        {"id", FK_STR, "id", K_RELATION},
        {"type", FK_STR, "type", K_RELATION},
        FD_END,
};

static const FDesc *const fdescs[] = {
        [K_USER] = fd_user,         [K_TEAM] = fd_team,       [K_STATE] = fd_state,
        [K_LABEL] = fd_label,       [K_PROJECT] = fd_project, [K_CYCLE] = fd_cycle,
        [K_ISSUE] = fd_issue,       [K_COMMENT] = fd_comment, [K_ATTACHMENT] = fd_attachment,
        [K_RELATION] = fd_relation,
};

static bool in_list(const json_t *list, const char *s, double d, bool num)
{
        size_t i;
        json_t *e;
        json_array_foreach (list, i, e) {
                if (num ? json_is_number(e) && json_number_value(e) == d
                        : streq_ptr(json_string_value(e), s))
                        return true;
        }
        return false;
}

static bool ends_with(const char *s, const char *suffix, bool ci)
{
        size_t n = strlen(s), m = strlen(suffix);
        return n >= m && (ci ? strcasecmp(s + n - m, suffix) : strcmp(s + n - m, suffix)) == 0;
}

/* A StringComparator (or IDComparator) of cmp against s (NULL: the value is null). */
static bool cmp_str(const json_t *cmp, const char *s)
{
        const char *op;
        json_t *v;
        json_object_foreach ((json_t *)cmp, op, v) {
                const char *a = json_string_value(v);
                bool ok = true;
                if (streq(op, "null"))
                        ok = json_is_true(v) == (s == NULL);
                else if (json_is_null(v))
                        continue;
                else if (streq(op, "in") || streq(op, "nin"))
                        ok = (s && in_list(v, s, 0, false)) == streq(op, "in");
                else if (!s) /* a null value passes only the negative comparisons */
                        ok = streq(op, "neq") || streq(op, "neqIgnoreCase") ||
                             startswith(op, "not");
                else if (streq(op, "eq"))
                        ok = streq(s, a);
                else if (streq(op, "neq"))
                        ok = !streq(s, a);
                else if (streq(op, "eqIgnoreCase"))
                        ok = strcasecmp(s, a) == 0;
                else if (streq(op, "neqIgnoreCase"))
                        ok = strcasecmp(s, a) != 0;
                else if (streq(op, "contains"))
                        ok = strstr(s, a) != NULL;
                else if (streq(op, "notContains"))
                        ok = strstr(s, a) == NULL;
                else if (streq(op, "containsIgnoreCase"))
                        ok = strcasestr(s, a) != NULL;
                else if (streq(op, "notContainsIgnoreCase"))
                        ok = strcasestr(s, a) == NULL;
                else if (streq(op, "startsWith"))
                        ok = strncmp(s, a, strlen(a)) == 0;
                else if (streq(op, "notStartsWith"))
                        ok = strncmp(s, a, strlen(a)) != 0;
                else if (streq(op, "endsWith"))
                        ok = ends_with(s, a, false);
                else if (streq(op, "notEndsWith"))
                        ok = !ends_with(s, a, false);
                else
                        ok = false;
                if (!ok)
                        return false;
        }
        return true;
}

/* A NumberComparator (or a date comparator: numbers are then times) of cmp against v (has:
 * whether there is a value). */
static bool cmp_num(const json_t *cmp, bool has, double d, bool dates, int64_t now)
{
        const char *op;
        json_t *v;
        json_object_foreach ((json_t *)cmp, op, v) {
                bool ok;
                if (streq(op, "null")) {
                        ok = json_is_true(v) == !has;
                } else if (json_is_null(v)) {
                        continue;
                } else if (streq(op, "in") || streq(op, "nin")) {
                        ok = (has && in_list(v, NULL, d, true)) == streq(op, "in");
                } else {
                        double b = json_number_value(v);
                        if (dates) {
                                int64_t t;
                                const char *s = json_string_value(v);
                                long long n;
                                char unit = 0;
                                if (ln_parse_time(s, &t) == 0)
                                        b = (double)t;
                                else if (s && sscanf(s, "-P%lld%c", &n, &unit) == 2 &&
                                         (unit == 'D' || unit == 'W'))
                                        b = (double)(now - n * (unit == 'W' ? 604800 : 86400));
                                else
                                        return false;
                        }
                        ok = has && (streq(op, "eq")    ? d == b
                                     : streq(op, "neq") ? d != b
                                     : streq(op, "lt")  ? d < b
                                     : streq(op, "lte") ? d <= b
                                     : streq(op, "gt")  ? d > b
                                     : streq(op, "gte") ? d >= b
                                                        : false);
                        if (!has && streq(op, "neq"))
                                ok = true;
                }
                if (!ok)
                        return false;
        }
        return true;
}

static bool cmp_bool(const json_t *cmp, bool b)
{
        json_t *eq = json_object_get(cmp, "eq"), *neq = json_object_get(cmp, "neq");
        return (!json_is_boolean(eq) || json_is_true(eq) == b) &&
               (!json_is_boolean(neq) || json_is_true(neq) != b);
}

static bool match(GqlExec *x, Kind k, const json_t *filter, json_t *row);

/* A ContentComparator ({contains, notContains}) of cmp against an issue's searchable content:
 * its title, description and comments, ignoring case. */
static bool match_content(GqlExec *x, const json_t *cmp, json_t *issue)
{
        const char *op;
        json_t *v;
        json_object_foreach ((json_t *)cmp, op, v) {
                const char *needle = json_string_value(v);
                if (!needle)
                        continue;
                bool has = strcasestr(strempty(json_get_str(issue, "title")), needle) ||
                           strcasestr(strempty(json_get_str(issue, "description")), needle);
                size_t i;
                json_t *cm;
                json_array_foreach (ln_list(world(x), "comments"), i, cm) {
                        has |= streq_ptr(json_get_str(cm, "issueId"), json_get_str(issue, "id")) &&
                               strcasestr(strempty(json_get_str(cm, "body")), needle);
                }
                if (has != streq(op, "contains"))
                        return false;
        }
        return true;
}

/* An IssueLabelCollectionFilter of f against the labels ids names. */
static bool match_labels(GqlExec *x, const json_t *f, const json_t *ids)
{
        const char *key;
        json_t *v;
        size_t n = json_array_size(ids);
        json_object_foreach ((json_t *)f, key, v) {
                bool ok;
                size_t i;
                json_t *id;
                if (streq(key, "and") || streq(key, "or")) {
                        bool any = false, all = true;
                        json_t *e;
                        json_array_foreach (v, i, e) {
                                bool m = match_labels(x, e, ids);
                                any |= m;
                                all &= m;
                        }
                        ok = streq(key, "and") ? all : any || json_array_size(v) == 0;
                } else if (streq(key, "length")) {
                        ok = cmp_num(v, true, (double)n, false, 0);
                } else if (streq(key, "every")) {
                        ok = true;
                        json_array_foreach (ids, i, id) {
                                ok &= match(x, K_LABEL, v,
                                            ln_by_id(world(x), "labels", json_string_value(id)));
                        }
                } else {
                        /* some, and a member of the label itself: some label matches */
                        _cleanup_json_ json_t *one =
                                streq(key, "some") ? json_incref(v) : json_pack("{s:O}", key, v);
                        ok = false;
                        json_array_foreach (ids, i, id) {
                                ok |= match(x, K_LABEL, one,
                                            ln_by_id(world(x), "labels", json_string_value(id)));
                        }
                }
                if (!ok)
                        return false;
        }
        return true;
}

/* Whether row (of kind k; NULL: a relation that is null) passes filter, a Linear filter input
 * (coerced: only members of the filter tables). */
static bool match(GqlExec *x, Kind k, const json_t *filter, json_t *row)
{
        const char *key;
        json_t *v;
        json_object_foreach ((json_t *)filter, key, v) {
                bool ok = false;
                if (json_is_null(v))
                        continue;
                if (streq(key, "and") || streq(key, "or")) {
                        size_t i;
                        json_t *e;
                        bool all = true, any = false;
                        json_array_foreach (v, i, e) {
                                bool m = match(x, k, e, row);
                                all &= m;
                                any |= m;
                        }
                        ok = streq(key, "and") ? all : any || json_array_size(v) == 0;
                } else if (streq(key, "null")) {
                        ok = json_is_true(v) == (row == NULL);
                } else if (row) {
                        const FDesc *d = fdescs[k];
                        while (d->name && !streq(d->name, key))
                                d++;
                        json_t *m = d->key ? json_object_get(row, d->key) : NULL;
                        int64_t t;
                        switch (d->name ? d->kind : FK_STR) {
                        case FK_STR:
                                ok = d->name && cmp_str(v, json_string_value(m));
                                break;
                        case FK_NUM:
                                ok = cmp_num(v, json_is_number(m), json_number_value(m), false, 0);
                                break;
                        case FK_DATE: {
                                bool has = ln_parse_time(json_string_value(m), &t) == 0;
                                ok = cmp_num(v, has, has ? (double)t : 0, true, call(x)->now);
                                break;
                        }
                        case FK_BOOL:
                                ok = cmp_bool(v, json_is_true(m));
                                break;
                        case FK_ISME:
                                ok = cmp_bool(v, streq_ptr(json_string_value(m),
                                                           json_get_str(world(x), "viewer")));
                                break;
                        case FK_REL:
                                ok = match(x, d->rel, v,
                                           ln_by_id(world(x), lists[d->rel], json_string_value(m)));
                                break;
                        case FK_LABELS:
                                ok = match_labels(x, v, m);
                                break;
                        case FK_CONTENT:
                                ok = match_content(x, v, row);
                                break;
                        }
                }
                if (!ok)
                        return false;
        }
        return true;
}

/* ------------------------------------------------------------------ connections */

/* rows (borrowed) sorted newest first by key (a new array; stable). */
static json_t *newest_first(json_t *rows, const char *key)
{
        json_t *a = json_copy(rows);
        size_t n = json_array_size(a);
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

/*
 * A connection of kind k over rows (taken: world rows, in the world's order) for a field's
 * arguments: filter, includeArchived (issues: archived ones only when true), orderBy (issues
 * and comments, newest first by createdAt or updatedAt), then the page of first/after/last/
 * before. *ret {nodes, edges, pageInfo}. 0 (a bad cursor: error, *ret NULL), or -ENOMEM.
 */
static int conn(GqlExec *x, Kind k, json_t *rows, json_t *args, json_t **ret)
{
        _cleanup_json_ json_t *all = rows, *kept = json_array(), *nodes = NULL, *info = NULL;
        *ret = NULL;
        if (!all || !kept)
                return -ENOMEM;
        json_t *filter = json_object_get(args, "filter");
        bool archived = json_is_true(json_object_get(args, "includeArchived"));
        size_t i;
        json_t *row;
        json_array_foreach (all, i, row) {
                if (k == K_ISSUE && !archived && !json_is_null(json_object_get(row, "archivedAt")))
                        continue;
                if (filter && !match(x, k, filter, row))
                        continue;
                if (json_array_append(kept, row) < 0)
                        return -ENOMEM;
        }
        if (k == K_ISSUE || k == K_COMMENT) {
                const char *order = json_get_str(args, "orderBy");
                json_t *sorted = newest_first(kept, order ? order : "createdAt");
                if (!sorted)
                        return -ENOMEM;
                json_decref(kept);
                kept = sorted;
        }
        json_t *first = json_object_get(args, "first"), *last = json_object_get(args, "last");
        if (json_integer_value(first) < 0 || json_integer_value(last) < 0)
                return fail(x, "BAD_USER_INPUT", "first and last must not be negative");
        if (first && last)
                return fail(x, "BAD_USER_INPUT",
                            "Cannot provide both first and last to a connection");
        /* Linear pages at most 250 nodes; more is answered as 250 (hosted Pome's twin too) */
        int64_t nf = first ? json_integer_value(first) : -1,
                nl = last ? json_integer_value(last) : -1;
        nf = nf > 250 ? 250 : nf;
        nl = nl > 250 ? 250 : nl;
        char err[160];
        int r = ln_page(kept, nf, json_get_str(args, "after"), nl, json_get_str(args, "before"),
                        &nodes, &info, err, sizeof(err));
        if (r < 0)
                return r;
        if (r > 0)
                return fail(x, "BAD_USER_INPUT", "%s", err);
        _cleanup_json_ json_t *out = json_array(), *edges = json_array();
        if (!out || !edges)
                return -ENOMEM;
        json_array_foreach (nodes, i, row) {
                json_t *s = src(x, k, row);
                if (!s || json_array_append_new(out, s) < 0 ||
                    json_array_append_new(edges, json_pack("{s:O, s:O}", "node", s, "cursor",
                                                           json_object_get(row, "id"))) < 0)
                        return -ENOMEM;
        }
        *ret = json_pack("{s:O, s:O, s:O}", "nodes", out, "edges", edges, "pageInfo", info);
        return *ret ? 0 : -ENOMEM;
}

/* The rows of list whose member key is id (a new array of borrowed rows). */
static json_t *rows_where(GqlExec *x, const char *list, const char *key, const char *id)
{
        json_t *a = json_array();
        size_t i;
        json_t *row;
        json_array_foreach (ln_list(world(x), list), i, row) {
                if (a && streq_ptr(json_get_str(row, key), id) && json_array_append(a, row) < 0) {
                        json_decref(a);
                        return NULL;
                }
        }
        return a;
}

static int conn_where(GqlExec *x, Kind k, const char *key, json_t *source, const char *skey,
                      json_t *args, json_t **ret)
{
        return conn(x, k, rows_where(x, lists[k], key, json_get_str(source, skey)), args, ret);
}

static int conn_all(GqlExec *x, Kind k, json_t *args, json_t **ret)
{
        return conn(x, k, json_copy(ln_list(world(x), lists[k])), args, ret);
}

/* ------------------------------------------------------------------ queries */

static int one(GqlExec *x, Kind k, json_t *row, const char *what, const char *ref, json_t **ret)
{
        if (!row) {
                *ret = NULL;
                return fail(x, "NOT_FOUND", "Entity not found: %s", what);
        }
        (void)ref;
        *ret = src(x, k, row);
        return *ret ? 0 : -ENOMEM;
}

int lq_q_viewer(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source, (void)args;
        json_t *w = world(x);
        return one(x, K_USER, ln_by_id(w, "users", json_get_str(w, "viewer")), "User", NULL, ret);
}

int lq_q_organization(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source, (void)args;
        *ret = org_src(x);
        return *ret ? 0 : -ENOMEM;
}

int lq_r_organization(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        return lq_q_organization(x, source, args, ret);
}

int lq_q_user(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        const char *id = json_get_str(args, "id");
        json_t *w = world(x);
        json_t *u = streq_ptr(id, "me") ? ln_by_id(w, "users", json_get_str(w, "viewer"))
                                        : ln_by_id(w, "users", id);
        return one(x, K_USER, u, "User", id, ret);
}

int lq_q_users(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        json_t *rows = json_array();
        size_t i;
        json_t *u;
        bool disabled = json_is_true(json_object_get(args, "includeDisabled"));
        json_array_foreach (ln_list(world(x), "users"), i, u) {
                if (rows && (disabled || json_is_true(json_object_get(u, "active"))) &&
                    json_array_append(rows, u) < 0)
                        return -ENOMEM;
        }
        return conn(x, K_USER, rows, args, ret);
}

/* Team.members: every user is in every team (teams have no memberships in the world). */
int lq_r_team_members(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        return lq_q_users(x, source, args, ret);
}

int lq_r_org_users(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        return lq_q_users(x, source, args, ret);
}

int lq_q_team(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        const char *id = json_get_str(args, "id");
        return one(x, K_TEAM, ln_team_ref(world(x), id), "Team", id, ret);
}

int lq_q_teams(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        return conn_all(x, K_TEAM, args, ret);
}

int lq_r_org_teams(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        return lq_q_teams(x, source, args, ret);
}

int lq_q_state(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        const char *id = json_get_str(args, "id");
        return one(x, K_STATE, ln_by_id(world(x), "states", id), "WorkflowState", id, ret);
}

int lq_q_states(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        return conn_all(x, K_STATE, args, ret);
}

int lq_q_label(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        const char *id = json_get_str(args, "id");
        return one(x, K_LABEL, ln_by_id(world(x), "labels", id), "IssueLabel", id, ret);
}

int lq_q_labels(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        return conn_all(x, K_LABEL, args, ret);
}

int lq_r_org_labels(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        return lq_q_labels(x, source, args, ret);
}

int lq_q_issue(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        const char *id = json_get_str(args, "id");
        return one(x, K_ISSUE, ln_issue_ref(world(x), id), "Issue", id, ret);
}

int lq_q_issues(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        return conn_all(x, K_ISSUE, args, ret);
}

int lq_q_comment(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        const char *id = json_get_str(args, "id");
        if (!id && json_object_get(args, "hash"))
                return fail(x, "BAD_USER_INPUT",
                            "comment(hash:) is not modelled by the pome linear twin; pass id");
        return one(x, K_COMMENT, ln_by_id(world(x), "comments", id), "Comment", id, ret);
}

int lq_q_comments(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        return conn_all(x, K_COMMENT, args, ret);
}

int lq_q_project(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        const char *id = json_get_str(args, "id");
        return one(x, K_PROJECT, ln_by_id(world(x), "projects", id), "Project", id, ret);
}

int lq_q_projects(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        return conn_all(x, K_PROJECT, args, ret);
}

int lq_q_cycle(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        const char *id = json_get_str(args, "id");
        return one(x, K_CYCLE, ln_by_id(world(x), "cycles", id), "Cycle", id, ret);
}

int lq_q_cycles(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        return conn_all(x, K_CYCLE, args, ret);
}

/* ------------------------------------------------------------------ relations */

/* The row of kind k named by source[key] (null when none). */
static int rel(GqlExec *x, Kind k, json_t *source, const char *key, json_t **ret)
{
        *ret = src(x, k, ln_by_id(world(x), lists[k], json_get_str(source, key)));
        return *ret ? 0 : -ENOMEM;
}

int lq_r_team_of(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)args;
        return rel(x, K_TEAM, source, "teamId", ret);
}

int lq_r_state_of(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)args;
        return rel(x, K_STATE, source, "stateId", ret);
}

int lq_r_assignee_of(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)args;
        return rel(x, K_USER, source, "assigneeId", ret);
}

int lq_r_creator_of(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)args;
        return rel(x, K_USER, source, "creatorId", ret);
}

int lq_r_parent_issue(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)args;
        return rel(x, K_ISSUE, source, "parentId", ret);
}

int lq_r_project_of(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)args;
        return rel(x, K_PROJECT, source, "projectId", ret);
}

int lq_r_cycle_of(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)args;
        return rel(x, K_CYCLE, source, "cycleId", ret);
}

int lq_r_comment_issue(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)args;
        return rel(x, K_ISSUE, source, "issueId", ret);
}

int lq_r_comment_user(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)args;
        return rel(x, K_USER, source, "userId", ret);
}

int lq_r_comment_parent(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)args;
        return rel(x, K_COMMENT, source, "parentId", ret);
}

int lq_r_issue_labels(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        json_t *rows = json_array();
        size_t i;
        json_t *id;
        json_array_foreach (json_object_get(source, "labelIds"), i, id) {
                json_t *l = ln_by_id(world(x), "labels", json_string_value(id));
                if (rows && l && json_array_append(rows, l) < 0)
                        return -ENOMEM;
        }
        return conn(x, K_LABEL, rows, args, ret);
}

int lq_r_issue_comments(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        return conn_where(x, K_COMMENT, "issueId", source, "id", args, ret);
}

int lq_r_issue_children(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        return conn_where(x, K_ISSUE, "parentId", source, "id", args, ret);
}

int lq_r_issue_attachments(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        return conn_where(x, K_ATTACHMENT, "issueId", source, "id", args, ret);
}

int lq_r_issue_relations(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        return conn_where(x, K_RELATION, "issueId", source, "id", args, ret);
}

int lq_r_issue_inverse_relations(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        return conn_where(x, K_RELATION, "relatedIssueId", source, "id", args, ret);
}

int lq_r_related_issue(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)args;
        return rel(x, K_ISSUE, source, "relatedIssueId", ret);
}

int lq_r_comment_children(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        return conn_where(x, K_COMMENT, "parentId", source, "id", args, ret);
}

int lq_r_team_states(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        return conn_where(x, K_STATE, "teamId", source, "id", args, ret);
}

int lq_r_team_issues(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        return conn_where(x, K_ISSUE, "teamId", source, "id", args, ret);
}

int lq_r_team_cycles(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        return conn_where(x, K_CYCLE, "teamId", source, "id", args, ret);
}

/* A team's labels: its own and the workspace's (Linear lists both for a team). */
int lq_r_team_labels(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        json_t *rows = json_array();
        size_t i;
        json_t *l;
        json_array_foreach (ln_list(world(x), "labels"), i, l) {
                const char *t = json_get_str(l, "teamId");
                if (rows && (!t || streq(t, strempty(json_get_str(source, "id")))) &&
                    json_array_append(rows, l) < 0)
                        return -ENOMEM;
        }
        return conn(x, K_LABEL, rows, args, ret);
}

static bool has_id(const json_t *ids, const char *id)
{
        size_t i;
        json_t *e;
        json_array_foreach (ids, i, e) {
                if (streq_ptr(json_string_value(e), id))
                        return true;
        }
        return false;
}

int lq_r_team_projects(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        json_t *rows = json_array();
        size_t i;
        json_t *p;
        json_array_foreach (ln_list(world(x), "projects"), i, p) {
                if (rows && has_id(json_object_get(p, "teamIds"), json_get_str(source, "id")) &&
                    json_array_append(rows, p) < 0)
                        return -ENOMEM;
        }
        return conn(x, K_PROJECT, rows, args, ret);
}

int lq_r_project_teams(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        json_t *rows = json_array();
        size_t i;
        json_t *t;
        json_array_foreach (ln_list(world(x), "teams"), i, t) {
                if (rows && has_id(json_object_get(source, "teamIds"), json_get_str(t, "id")) &&
                    json_array_append(rows, t) < 0)
                        return -ENOMEM;
        }
        return conn(x, K_TEAM, rows, args, ret);
}

int lq_r_state_issues(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        return conn_where(x, K_ISSUE, "stateId", source, "id", args, ret);
}

int lq_r_label_issues(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        json_t *rows = json_array();
        size_t i;
        json_t *is;
        json_array_foreach (ln_list(world(x), "issues"), i, is) {
                if (rows && has_id(json_object_get(is, "labelIds"), json_get_str(source, "id")) &&
                    json_array_append(rows, is) < 0)
                        return -ENOMEM;
        }
        return conn(x, K_ISSUE, rows, args, ret);
}

int lq_r_user_assigned(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        return conn_where(x, K_ISSUE, "assigneeId", source, "id", args, ret);
}

int lq_r_user_created(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        return conn_where(x, K_ISSUE, "creatorId", source, "id", args, ret);
}

int lq_r_project_issues(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        return conn_where(x, K_ISSUE, "projectId", source, "id", args, ret);
}

int lq_r_cycle_issues(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        return conn_where(x, K_ISSUE, "cycleId", source, "id", args, ret);
}

/* Issue.sharedAccess: the twin models no sharing, so an issue is shared with no one. */
int lq_r_shared_access(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)x, (void)source, (void)args;
        *ret = json_pack("{s:b, s:b, s:i, s:[]}", "isShared", false, "viewerHasOnlySharedAccess",
                         false, "sharedWithCount", 0, "disallowedIssueFields");
        return *ret ? 0 : -ENOMEM;
}

/* Project.status: the project's state as the ProjectStatus Linear's workspaces have for it. */
int lq_r_project_status(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)x, (void)args;
        static const struct {
                const char *type, *name, *color;
        } statuses[] = {
                {"backlog", "Backlog", "#bec2c8"},     {"planned", "Planned", "#e2e2e2"},
                {"started", "In Progress", "#f2c94c"}, {"paused", "Paused", "#95a2b3"},
                {"completed", "Completed", "#5e6ad2"}, {"canceled", "Canceled", "#95a2b3"},
        };
        const char *state = json_get_str(source, "state");
        for (size_t i = 0; i < ELEMENTSOF(statuses); i++)
                if (streq_ptr(state, statuses[i].type)) {
                        char id[48];
                        snprintf(id, sizeof(id), "status_%s", statuses[i].type);
                        *ret = json_pack("{s:s, s:s, s:s, s:s, s:i, s:O?, s:O?}", "id", id, "name",
                                         statuses[i].name, "type", statuses[i].type, "color",
                                         statuses[i].color, "position", (int)i, "createdAt",
                                         json_object_get(source, "createdAt"), "updatedAt",
                                         json_object_get(source, "createdAt"));
                        return *ret ? 0 : -ENOMEM;
                }
        *ret = NULL;
        return 0;
}

/* ------------------------------------------------------------------ mutations */

/*
 * Runs the action tool with args (taken) as MCP would, and keeps what it changed for the tape.
 * 0 with its 2xx body in *ret_body (new), 1 refused (its Linear error is the GraphQL error),
 * -ENOMEM.
 */
static int run(GqlExec *x, const char *tool, json_t *args, json_t **ret_body)
{
        Lx *g = gql_userdata(x);
        _cleanup_json_ json_t *a = args;
        const TwinAction *act = twin_kind_action(&twin_kind_linear, tool);
        if (!a || !act)
                return -ENOMEM;
        TwinReply rp = {};
        g->last_tool = act->tool;
        int r = twin_call_part(g->c, act, a, g->mutations, &rp);
        if (r < 0) {
                twin_reply_done(&rp);
                return r;
        }
        if (rp.status >= 200 && rp.status < 300) {
                *ret_body = json_incref(rp.body);
                twin_reply_done(&rp);
                return 0;
        }
        json_t *e = json_array_get(json_object_get(rp.body, "errors"), 0);
        const char *code = json_get_str(json_object_get(e, "extensions"), "code");
        r = fail(x, code ? code : "BAD_USER_INPUT", "%s", strempty(json_get_str(e, "message")));
        twin_reply_done(&rp);
        return r < 0 ? r : 1;
}

/* {success: true, lastSyncId, <key>: value (taken)} */
static int payload(GqlExec *x, const char *key, json_t *value, json_t **ret)
{
        json_t *n = json_object_get(json_object_get(world(x), "next"), "id");
        *ret = json_pack("{s:b, s:f, s:o}", "success", true, "lastSyncId",
                         (double)json_integer_value(n), key, value ? value : json_null());
        return *ret ? 0 : -ENOMEM;
}

/* The payload of an action whose body names the row of kind k by its id. */
static int payload_of(GqlExec *x, Kind k, const char *key, json_t *body, json_t **ret)
{
        json_t *row = ln_by_id(world(x), lists[k], json_get_str(body, "id"));
        json_t *s = src(x, k, row);
        if (!s)
                return -ENOMEM;
        return payload(x, key, s, ret);
}

/* Copies input[from] into a[to] when the input has it (a JSON null too: it clears). */
static int pass(json_t *a, json_t *in, const char *from, const char *to)
{
        json_t *v = json_object_get(in, from);
        return v && json_object_set(a, to, v) < 0 ? -ENOMEM : 0;
}

/* The save_issue arguments of an IssueCreateInput or IssueUpdateInput. */
static json_t *issue_args(json_t *in)
{
        json_t *a = json_object();
        static const char *const map[][2] = {
                {"title", "title"},       {"description", "description"},
                {"priority", "priority"}, {"estimate", "estimate"},
                {"stateId", "state"},     {"assigneeId", "assignee"},
                {"labelIds", "labels"},   {"projectId", "project"},
                {"cycleId", "cycle"},     {"parentId", "parentId"},
                {"dueDate", "dueDate"},   {"teamId", "team"},
        };
        for (size_t i = 0; a && i < ELEMENTSOF(map); i++)
                if (pass(a, in, map[i][0], map[i][1]) < 0) {
                        json_decref(a);
                        return NULL;
                }
        return a;
}

/*
 * The members of a mutation's input that name rows take ids, as Linear's API does (a name, key
 * or email is no id there: "In Progress" as a stateId is "Entity not found: WorkflowState");
 * an issue may also be named by its identifier where Linear says so (parentId, issueId). The
 * MCP tools take names; GraphQL does not pass names through to them. 1 refused (the error
 * added), 0 every id names a row (or is null), -ENOMEM.
 */
static int check_ids(GqlExec *x, json_t *in)
{
        static const struct {
                const char *key, *list, *what;
        } refs[] = {
                {"teamId", "teams", "Team"},
                {"teamIds", "teams", "Team"},
                {"stateId", "states", "WorkflowState"},
                {"assigneeId", "users", "User"},
                {"labelIds", "labels", "IssueLabel"},
                {"addedLabelIds", "labels", "IssueLabel"},
                {"removedLabelIds", "labels", "IssueLabel"},
                {"labelId", "labels", "IssueLabel"},
                {"projectId", "projects", "Project"},
                {"cycleId", "cycles", "Cycle"},
                {"parentId", "issues", "Issue"},
                {"issueId", "issues", "Issue"},
        };
        json_t *w = world(x);
        for (size_t k = 0; k < ELEMENTSOF(refs); k++) {
                json_t *v = json_object_get(in, refs[k].key);
                size_t n = json_is_array(v) ? json_array_size(v) : 1;
                for (size_t i = 0; v && !json_is_null(v) && i < n; i++) {
                        const char *id =
                                json_string_value(json_is_array(v) ? json_array_get(v, i) : v);
                        bool found = (streq(refs[k].list, "issues")
                                              ? ln_issue_ref(w, id)
                                              : ln_by_id(w, refs[k].list, id)) != NULL;
                        if (found)
                                continue;
                        int r = fail(x, "NOT_FOUND", "Entity not found: %s", refs[k].what);
                        return r < 0 ? r : 1;
                }
        }
        return 0;
}

int lq_m_issue_create(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        _cleanup_json_ json_t *body = NULL;
        json_t *in = json_object_get(args, "input");
        *ret = NULL;
        if (!json_get_str(in, "title"))
                return fail(x, "BAD_USER_INPUT", "Argument Validation Error: title is required");
        int r = check_ids(x, in);
        if (r != 0)
                return r < 0 ? r : 0;
        r = run(x, "save_issue", issue_args(in), &body);
        if (r != 0)
                return r < 0 ? r : 0;
        return payload_of(x, K_ISSUE, "issue", body, ret);
}

/* The issue's label ids with added and without removed (new array). */
static json_t *labels_changed(json_t *issue, json_t *added, json_t *removed)
{
        json_t *ids = json_array();
        size_t i;
        json_t *e;
        json_array_foreach (json_object_get(issue, "labelIds"), i, e) {
                if (ids && !has_id(removed, json_string_value(e)) && json_array_append(ids, e) < 0)
                        return NULL;
        }
        json_array_foreach (added, i, e) {
                if (ids && !has_id(ids, json_string_value(e)) &&
                    !has_id(removed, json_string_value(e)) && json_array_append(ids, e) < 0)
                        return NULL;
        }
        return ids;
}

static int update_issue(GqlExec *x, const char *id, json_t *a, json_t **ret)
{
        _cleanup_json_ json_t *args = a, *body = NULL;
        json_t *is = ln_issue_ref(world(x), id);
        *ret = NULL;
        if (!args)
                return -ENOMEM;
        if (!is)
                return fail(x, "NOT_FOUND", "Entity not found: Issue");
        if (json_object_set(args, "id", json_object_get(is, "id")) < 0)
                return -ENOMEM;
        int r = run(x, "save_issue", TAKE_PTR(args), &body);
        if (r != 0)
                return r < 0 ? r : 0;
        return payload_of(x, K_ISSUE, "issue", body, ret);
}

int lq_m_issue_update(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        json_t *in = json_object_get(args, "input");
        *ret = NULL;
        if (!ln_issue_ref(world(x), json_get_str(args, "id")))
                return fail(x, "NOT_FOUND", "Entity not found: Issue");
        int r = check_ids(x, in);
        if (r != 0)
                return r < 0 ? r : 0;
        json_t *a = issue_args(in);
        json_t *added = json_object_get(in, "addedLabelIds"),
               *removed = json_object_get(in, "removedLabelIds");
        if (a && (added || removed)) {
                json_t *is = ln_issue_ref(world(x), json_get_str(args, "id"));
                json_t *base =
                        json_object_get(in, "labelIds")
                                ? json_pack("{s:O}", "labelIds", json_object_get(in, "labelIds"))
                                : json_incref(is);
                json_t *ids = labels_changed(base, added, removed);
                json_decref(base);
                if (!ids || json_object_set_new(a, "labels", ids) < 0) {
                        json_decref(a);
                        return -ENOMEM;
                }
        }
        return update_issue(x, json_get_str(args, "id"), a, ret);
}

static int add_remove_label(GqlExec *x, json_t *args, bool add, json_t **ret)
{
        *ret = NULL;
        int r = check_ids(x, args);
        if (r != 0)
                return r < 0 ? r : 0;
        json_t *is = ln_issue_ref(world(x), json_get_str(args, "id"));
        _cleanup_json_ json_t *one = json_pack("[O]", json_object_get(args, "labelId"));
        if (!one)
                return -ENOMEM;
        json_t *ids = labels_changed(is, add ? one : NULL, add ? NULL : one);
        if (!ids)
                return -ENOMEM;
        return update_issue(x, json_get_str(args, "id"), json_pack("{s:o}", "labels", ids), ret);
}

int lq_m_issue_add_label(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        return add_remove_label(x, args, true, ret);
}

int lq_m_issue_remove_label(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        return add_remove_label(x, args, false, ret);
}

/* issueArchive and issueDelete: {success, lastSyncId, entity: the issue as it was made}. */
static int archive_or_delete(GqlExec *x, const char *tool, json_t *args, json_t **ret)
{
        json_t *is = ln_issue_ref(world(x), json_get_str(args, "id"));
        _cleanup_json_ json_t *body = NULL, *kept = NULL;
        *ret = NULL;
        if (!is)
                return fail(x, "NOT_FOUND", "Entity not found: Issue");
        if (!(kept = json_deep_copy(is)))
                return -ENOMEM;
        int r = run(x, tool, json_pack("{s:O}", "id", json_object_get(is, "id")), &body);
        if (r != 0)
                return r < 0 ? r : 0;
        json_t *now = ln_by_id(world(x), "issues", json_get_str(kept, "id"));
        json_t *s = src(x, K_ISSUE, now ? now : kept);
        if (!s)
                return -ENOMEM;
        return payload(x, "entity", s, ret);
}

int lq_m_issue_archive(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        if (json_is_true(json_object_get(args, "trash")))
                return fail(x, "BAD_USER_INPUT",
                            "issueArchive(trash: true) is not modelled by the pome linear twin");
        return archive_or_delete(x, "archive_issue", args, ret);
}

int lq_m_issue_delete(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        return archive_or_delete(x, "delete_issue", args, ret);
}

int lq_m_comment_create(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        json_t *in = json_object_get(args, "input");
        _cleanup_json_ json_t *a = json_object(), *body = NULL;
        *ret = NULL;
        if (!a || pass(a, in, "issueId", "issueId") < 0 ||
            pass(a, in, "parentId", "parentId") < 0 || pass(a, in, "body", "body") < 0)
                return -ENOMEM;
        int r = run(x, "save_comment", TAKE_PTR(a), &body);
        if (r != 0)
                return r < 0 ? r : 0;
        return payload_of(x, K_COMMENT, "comment", body, ret);
}

int lq_m_comment_update(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        json_t *in = json_object_get(args, "input");
        _cleanup_json_ json_t *body = NULL;
        *ret = NULL;
        int r = run(x, "save_comment",
                    json_pack("{s:O, s:O?}", "id", json_object_get(args, "id"), "body",
                              json_object_get(in, "body")),
                    &body);
        if (r != 0)
                return r < 0 ? r : 0;
        return payload_of(x, K_COMMENT, "comment", body, ret);
}

int lq_m_comment_delete(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        _cleanup_json_ json_t *body = NULL;
        *ret = NULL;
        int r = run(x, "delete_comment", json_pack("{s:O}", "id", json_object_get(args, "id")),
                    &body);
        if (r != 0)
                return r < 0 ? r : 0;
        return payload(x, "entityId", json_incref(json_object_get(args, "id")), ret);
}

int lq_m_label_create(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        json_t *in = json_object_get(args, "input");
        _cleanup_json_ json_t *a = json_object(), *body = NULL;
        *ret = NULL;
        if (json_is_true(json_object_get(args, "replaceTeamLabels")))
                return fail(x, "BAD_USER_INPUT",
                            "replaceTeamLabels is not modelled by the pome linear twin");
        int r = check_ids(x, in);
        if (r != 0)
                return r < 0 ? r : 0;
        if (!a || pass(a, in, "name", "name") < 0 || pass(a, in, "color", "color") < 0 ||
            pass(a, in, "description", "description") < 0 || pass(a, in, "teamId", "teamId") < 0)
                return -ENOMEM;
        r = run(x, "create_issue_label", TAKE_PTR(a), &body);
        if (r != 0)
                return r < 0 ? r : 0;
        return payload_of(x, K_LABEL, "issueLabel", body, ret);
}

int lq_m_label_update(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        json_t *in = json_object_get(args, "input");
        _cleanup_json_ json_t *a = json_pack("{s:O}", "id", json_object_get(args, "id")),
                              *body = NULL;
        *ret = NULL;
        if (!a || pass(a, in, "name", "name") < 0 || pass(a, in, "color", "color") < 0 ||
            pass(a, in, "description", "description") < 0)
                return -ENOMEM;
        int r = run(x, "update_issue_label", TAKE_PTR(a), &body);
        if (r != 0)
                return r < 0 ? r : 0;
        return payload_of(x, K_LABEL, "issueLabel", body, ret);
}

int lq_m_project_create(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        json_t *in = json_object_get(args, "input");
        _cleanup_json_ json_t *a = json_object(), *body = NULL;
        *ret = NULL;
        if (!a || pass(a, in, "name", "name") < 0 ||
            pass(a, in, "description", "description") < 0 ||
            pass(a, in, "teamIds", "setTeams") < 0 || pass(a, in, "state", "state") < 0)
                return -ENOMEM;
        int r = check_ids(x, in);
        if (r != 0)
                return r < 0 ? r : 0;
        r = run(x, "save_project", TAKE_PTR(a), &body);
        if (r != 0)
                return r < 0 ? r : 0;
        return payload_of(x, K_PROJECT, "project", body, ret);
}

/* Refuses the argument name of a mutation when it is given (not null): what the world does not
 * model. 1 refused (error added), 0 not given, -ENOMEM. */
static int not_modelled(GqlExec *x, json_t *args, const char *const *names)
{
        for (const char *const *n = names; *n; n++) {
                json_t *v = json_object_get(args, *n);
                if (!v || json_is_null(v))
                        continue;
                int r = fail(x, "BAD_USER_INPUT", "%s is not modelled by the pome linear twin", *n);
                return r < 0 ? r : 1;
        }
        return 0;
}

/* attachmentCreate and attachmentLinkURL: a link on an issue (id or identifier), save_issue's
 * links; the same url on the same issue updates its title, as Linear does. */
static int link_url(GqlExec *x, json_t *a, json_t **ret)
{
        const char *issue_ref = json_get_str(a, "issueId"), *url = json_get_str(a, "url");
        const char *title = json_get_str(a, "title");
        json_t *is = ln_issue_ref(world(x), issue_ref);
        _cleanup_json_ json_t *body = NULL;
        *ret = NULL;
        if (!is)
                return fail(x, "NOT_FOUND", "Entity not found: Issue");
        /* the issue's row is replaced when it changes: keep its id, not the row */
        _cleanup_free_ char *id = strdup(strempty(json_get_str(is, "id")));
        if (!id)
                return -ENOMEM;
        int r = run(x, "save_issue",
                    json_pack("{s:s, s:[{s:s?, s:s?}]}", "id", id, "links", "url", url, "title",
                              title ? title : url),
                    &body);
        if (r != 0)
                return r < 0 ? r : 0;
        size_t i;
        json_t *row, *hit = NULL;
        json_array_foreach (ln_list(world(x), "attachments"), i, row) {
                if (streq_ptr(json_get_str(row, "issueId"), id) &&
                    streq_ptr(json_get_str(row, "url"), url))
                        hit = row;
        }
        json_t *s = src(x, K_ATTACHMENT, hit);
        return s ? payload(x, "attachment", s, ret) : -ENOMEM;
}

int lq_m_attachment_create(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        json_t *in = json_object_get(args, "input");
        *ret = NULL;
        if (!json_get_str(in, "title"))
                return fail(x, "BAD_USER_INPUT", "Argument Validation Error: title is required");
        return link_url(x, in, ret);
}

int lq_m_attachment_link_url(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        *ret = NULL;
        int r = not_modelled(x, args,
                             (const char *const[]){"createAsUser", "displayIconUrl", "id", NULL});
        return r != 0 ? (r < 0 ? r : 0) : link_url(x, args, ret);
}

/* issueRelationCreate: save_issue's blocks, relatedTo or duplicateOf, from the issue's side. */
int lq_m_issue_relation_create(GqlExec *x, json_t *source, json_t *args, json_t **ret)
{
        (void)source;
        json_t *in = json_object_get(args, "input");
        const char *type = json_get_str(in, "type");
        *ret = NULL;
        int r = not_modelled(x, args, (const char *const[]){"overrideCreatedAt", NULL});
        if (r == 0)
                r = not_modelled(x, in, (const char *const[]){"id", NULL});
        if (r != 0)
                return r < 0 ? r : 0;
        json_t *is = ln_issue_ref(world(x), json_get_str(in, "issueId"));
        json_t *other = ln_issue_ref(world(x), json_get_str(in, "relatedIssueId"));
        if (!is || !other)
                return fail(x, "NOT_FOUND", "Entity not found: Issue");
        const char *arg = streq_ptr(type, "blocks")      ? "blocks"
                          : streq_ptr(type, "related")   ? "relatedTo"
                          : streq_ptr(type, "duplicate") ? "duplicateOf"
                                                         : NULL;
        if (!arg)
                return fail(x, "BAD_USER_INPUT",
                            "issueRelationCreate(type: %s) is not modelled by the pome linear twin",
                            strempty(type));
        /* the issues' rows are replaced when they change: keep their ids, not the rows */
        _cleanup_free_ char *a = strdup(strempty(json_get_str(is, "id"))),
                            *b = strdup(strempty(json_get_str(other, "id")));
        _cleanup_json_ json_t *body = NULL;
        if (!a || !b)
                return -ENOMEM;
        r = run(x, "save_issue",
                streq(arg, "duplicateOf") ? json_pack("{s:s, s:s}", "id", a, arg, b)
                                          : json_pack("{s:s, s:[s]}", "id", a, arg, b),
                &body);
        if (r != 0)
                return r < 0 ? r : 0;
        size_t i;
        json_t *row, *hit = NULL;
        json_array_foreach (ln_list(world(x), "relations"), i, row) {
                const char *ra = json_get_str(row, "issueId"),
                           *rb = json_get_str(row, "relatedIssueId");
                if (streq_ptr(json_get_str(row, "type"), type) &&
                    ((streq_ptr(ra, a) && streq_ptr(rb, b)) ||
                     (streq(type, "related") && streq_ptr(ra, b) && streq_ptr(rb, a))))
                        hit = row;
        }
        json_t *s = src(x, K_RELATION, hit);
        return s ? payload(x, "issueRelation", s, ret) : -ENOMEM;
}

/* ------------------------------------------------------------------ the endpoint */

static int code_status(const char *code)
{
        if (streq(code, "NOT_FOUND"))
                return 404;
        if (streq(code, "FORBIDDEN"))
                return 403;
        if (streq(code, "AUTHENTICATION_ERROR"))
                return 401;
        if (streq(code, "INTERNAL_SERVER_ERROR"))
                return 500;
        return 400;
}

/* Whether path a is path b or below it. */
static bool path_under(const json_t *a, const json_t *b)
{
        if (!json_is_array(a) || !json_is_array(b) || json_array_size(a) < json_array_size(b))
                return false;
        for (size_t i = 0; i < json_array_size(b); i++)
                if (!json_equal(json_array_get(a, i), json_array_get(b, i)))
                        return false;
        return true;
}

/* The executor's errors in Linear's shape (see the file's comment). 0 or -ENOMEM. */
static int linear_errors(json_t *resp)
{
        json_t *errors = json_object_get(resp, "errors");
        bool validation = !json_object_get(resp, "data");
        _cleanup_json_ json_t *out = json_array();
        if (!out)
                return -ENOMEM;
        size_t i;
        json_t *e;
        json_array_foreach (errors, i, e) {
                const char *message = strempty(json_get_str(e, "message"));
                const char *type = json_get_str(e, "type");
                json_t *ext = json_object_get(e, "extensions");
                _cleanup_free_ char *rewritten = NULL;
                const char *code;
                if (validation) {
                        code = startswith(message, "Parse error") ? "GRAPHQL_PARSE_FAILED"
                                                                  : "GRAPHQL_VALIDATION_FAILED";
                        /* graphql-js's sentence, which api.linear.app answers */
                        if (streq_ptr(json_get_str(ext, "code"), "undefinedField") &&
                            asprintf(&rewritten, "Cannot query field \"%s\" on type \"%s\".",
                                     strempty(json_get_str(ext, "fieldName")),
                                     strempty(json_get_str(ext, "typeName"))) < 0)
                                return -ENOMEM;
                } else if (type) {
                        code = streq(type, "INVALID_ARGUMENT") ? "BAD_USER_INPUT" : type;
                } else {
                        /* a non-null field left null by an error already said: not twice */
                        bool said = false;
                        size_t j;
                        json_t *o;
                        json_array_foreach (out, j, o) {
                                said |= path_under(json_object_get(e, "path"),
                                                   json_object_get(o, "path")) ||
                                        path_under(json_object_get(o, "path"),
                                                   json_object_get(e, "path"));
                        }
                        if (said)
                                continue;
                        code = "INTERNAL_SERVER_ERROR";
                }
                const char *m = rewritten ? rewritten : message;
                /* api.linear.app: "Entity not found: Issue", presented as "Could not find
                 * referenced Issue." */
                _cleanup_free_ char *presented = NULL;
                const char *what = startswith(m, "Entity not found: ");
                if (what && asprintf(&presented, "Could not find referenced %s.", what) < 0)
                        return -ENOMEM;
                /* a caller's mistake is a user error (userError: true), as api.linear.app says
                 * of invalid input; only a fault of the twin's is not */
                bool internal = streq(code, "INTERNAL_SERVER_ERROR");
                json_t *n =
                        json_pack("{s:s, s:{s:s, s:s, s:b, s:s, s:{s:i}}}", "message", m,
                                  "extensions", "code", code, "type",
                                  validation ? "graphql error"
                                  : streq(code, "NOT_FOUND") || streq(code, "BAD_USER_INPUT")
                                          ? "invalid input"
                                          : "internal error",
                                  "userError", !internal, "userPresentableMessage",
                                  presented ? presented : m, "http", "status", code_status(code));
                if (!n || json_array_append_new(out, n) < 0)
                        return -ENOMEM;
                static const char *const keep[] = {"locations", "path"};
                for (size_t k = 0; k < ELEMENTSOF(keep); k++) {
                        json_t *v = json_object_get(e, keep[k]);
                        if (json_is_array(v) && json_object_set(n, keep[k], v) < 0)
                                return -ENOMEM;
                }
        }
        return json_object_set(resp, "errors", out) < 0 ? -ENOMEM : 0;
}

/*
 * POST /graphql: Linear's GraphQL API (https://linear.app/developers/graphql). 200 with {data}
 * when nothing went wrong; 400 with {errors, data?} in Linear's shape otherwise.
 */
int ln_act_graphql(TwinCall *c, TwinReply *rp)
{
        _cleanup_json_ json_t *mutations = json_array();
        if (!mutations)
                return -ENOMEM;
        Lx g = {.c = c, .mutations = mutations};
        const char *body = c->request ? c->request->body : NULL;
        size_t len = c->request ? c->request->body_len : 0;
        _cleanup_free_ char *dumped = NULL;
        if (!c->request) { /* a direct call: the arguments are the request */
                dumped = json_dumps(c->args, JSON_COMPACT);
                body = dumped;
                len = dumped ? strlen(dumped) : 0;
        }
        json_t *resp = NULL;
        int r = gql_execute(&ln_schema, body, len, &g, &resp);
        if (r < 0)
                return r;
        bool errors = json_array_size(json_object_get(resp, "errors")) > 0;
        if (errors && (r = linear_errors(resp)) < 0) {
                json_decref(resp);
                return r;
        }
        if ((r = twin_reply_body(rp, errors ? 400 : 200, resp)) < 0)
                return r;
        if (g.last_tool) {
                free(rp->tool);
                if (!(rp->tool = strdup(g.last_tool)))
                        return -ENOMEM;
        }
        return twin_reply_changes(rp, mutations, c->request);
}
