/* SPDX-License-Identifier: MIT */
/*
 * The GitHub twin's GraphQL API (https://docs.github.com/graphql): POST /graphql (and
 * /api/graphql, where GitHub Enterprise Server serves it), for the queries and mutations the
 * GitHub CLI sends for issues, pull requests, labels, repositories, reviews and checks. The
 * schema below is a subset of GitHub's published one (@octokit/graphql-schema): every type,
 * field and argument here has GitHub's name and type (tests/conformance/graphql-schema.mjs
 * checks it against the package), and a field outside it is GraphQL's validation error
 * naming it, never a made-up answer.
 *
 * Objects are built from the world as the REST renderers build theirs, with GraphQL's names.
 * A mutation changes the world through the REST action that makes the same change (createIssue
 * through create_issue, ...), so its tape row carries that action's tool and state_delta; a
 * request with several mutations has a row per mutation (the earlier ones as rows of their
 * own ahead of the call's, TwinReply.events). A query's row carries the tool "graphql".
 */
#include <ctype.h>
#include <strings.h>

#include "common/json-util.h"
#include "pods/github/github.h"
#include "pods/twin/graphql.h"

/* What resolvers share: the call, and the mutations made so far ({tool, status, body,
 * state_delta} each, in order). */
typedef struct Gx {
        TwinCall *c;
        json_t *mutations;
        const char *last_tool; /* the REST action of the last mutation tried (static) */
} Gx;

static TwinCall *call(GqlExec *x)
{
        return ((Gx *)gql_userdata(x))->c;
}

/* ------------------------------------------------------------------ sources */

static char *upper(const char *s)
{
        char *u = strdup(strempty(s));
        for (char *p = u; p && *p; p++)
                *p = (char)toupper((unsigned char)*p);
        return u;
}

static int put(json_t *o, const char *key, json_t *v)
{
        return json_object_set_new(o, key, v ? v : json_null());
}

static int put_ref(json_t *o, const char *key, json_t *v)
{
        return json_object_set(o, key, v ? v : json_null());
}

static json_t *html_url(const char *a, const char *b, const char *c2, const char *d)
{
        _cleanup_free_ char *s = NULL;
        if (asprintf(&s, GH_HTML_BASE "/%s%s%s%s", a, strempty(b), strempty(c2), strempty(d)) < 0)
                return NULL;
        return json_string(s);
}

/* A User, Organization or Bot for login (NULL: JSON null). */
static json_t *user_src(TwinCall *c, const char *login)
{
        if (!login)
                return json_null();
        json_t *u = gh_user_find(c->world, login);
        const char *l = u ? json_get_str(u, "login") : login;
        const char *type = u ? json_get_str(u, "type") : "User";
        _cleanup_free_ char *rpath = NULL;
        if (asprintf(&rpath, "/%s", l) < 0)
                return NULL;
        _cleanup_json_ json_t *o =
                json_pack("{s:s, s:O?, s:s, s:o, s:s, s:s, s:O?}", "__typename",
                          streq_ptr(type, "Organization") ? "Organization"
                          : streq_ptr(type, "Bot")        ? "Bot"
                                                          : "User",
                          "id", json_object_get(u, "node_id"), "login", l, "url",
                          html_url(l, NULL, NULL, NULL), "resourcePath", rpath, "avatarUrl", "",
                          "databaseId", json_object_get(u, "id"));
        if (!o || put_ref(o, "name", json_object_get(u, "name")) < 0 ||
            put(o, "email", json_string(strempty(json_get_str(u, "email")))) < 0)
                return NULL;
        return TAKE_PTR(o);
}

static json_t *repo_src(TwinCall *c, json_t *repo)
{
        const char *owner = json_get_str(repo, "owner"), *name = json_get_str(repo, "name");
        _cleanup_free_ char *full = NULL;
        if (!repo)
                return json_null();
        if (asprintf(&full, "%s/%s", owner, name) < 0)
                return NULL;
        bool priv = json_is_true(json_object_get(repo, "private"));
        (void)c;
        return json_pack(
                "{s:s, s:O, s:O, s:O, s:s, s:O, s:o, s:b, s:s, s:b, s:b, s:b, s:b, s:b, "
                "s:b, s:b, s:b, s:b, s:b, s:b, s:O, s:O, s:O, s:i, s:i, s:n, s:O}",
                "__typename", "Repository", "_repo", repo, "id", json_object_get(repo, "node_id"),
                "name", json_object_get(repo, "name"), "nameWithOwner", full, "description",
                json_object_get(repo, "description") ? json_object_get(repo, "description")
                                                     : json_null(),
                "url", html_url(owner, "/", name, NULL), "isPrivate", priv, "visibility",
                priv ? "PRIVATE" : "PUBLIC", "isFork", json_object_get(repo, "parent") != NULL,
                "hasIssuesEnabled", 1, "hasWikiEnabled", 1, "hasProjectsEnabled", 1,
                "hasDiscussionsEnabled", 0, "isArchived", 0, "isTemplate", 0, "mergeCommitAllowed",
                1, "rebaseMergeAllowed", 1, "squashMergeAllowed", 1, "deleteBranchOnMerge", 0,
                "createdAt", json_object_get(repo, "created_at"), "updatedAt",
                json_object_get(repo, "updated_at"), "pushedAt",
                json_object_get(repo, "updated_at"), "stargazerCount", 0, "forkCount", 0,
                "homepageUrl", "databaseId", json_object_get(repo, "id"));
}

static json_t *label_src(TwinCall *c, json_t *repo, json_t *l)
{
        (void)c;
        return json_pack(
                "{s:s, s:O, s:O, s:O, s:O, s:o, s:b, s:O?, s:O?}", "__typename", "Label", "id",
                json_object_get(l, "node_id"), "name", json_object_get(l, "name"), "color",
                json_object_get(l, "color"), "description",
                json_object_get(l, "description") ? json_object_get(l, "description") : json_null(),
                "url",
                html_url(json_get_str(repo, "owner"), "/", json_get_str(repo, "name"), "/labels"),
                "isDefault", json_is_true(json_object_get(l, "default")), "createdAt",
                json_object_get(l, "created_at"), "updatedAt", json_object_get(l, "updated_at"));
}

static json_t *milestone_src(TwinCall *c, json_t *repo, json_t *number)
{
        json_t *m = json_is_integer(number)
                            ? gh_number_find(repo, "milestones", json_integer_value(number), NULL)
                            : NULL;
        if (!m)
                return json_null();
        (void)c;
        char n[32];
        snprintf(n, sizeof(n), "/milestone/%lld", (long long)json_integer_value(number));
        bool closed = streq_ptr(json_get_str(m, "state"), "closed");
        return json_pack(
                "{s:s, s:O, s:O, s:O, s:O, s:O, s:s, s:b, s:o}", "__typename", "Milestone", "id",
                json_object_get(m, "node_id"), "number", number, "title",
                json_object_get(m, "title"), "description",
                json_object_get(m, "description") ? json_object_get(m, "description") : json_null(),
                "dueOn", json_object_get(m, "due_on") ? json_object_get(m, "due_on") : json_null(),
                "state", closed ? "CLOSED" : "OPEN", "closed", closed, "url",
                html_url(json_get_str(repo, "owner"), "/", json_get_str(repo, "name"), n));
}

/* An Issue or a PullRequest (by the row). */
static json_t *item_src(TwinCall *c, json_t *repo, json_t *row)
{
        (void)c;
        bool pr = gh_is_pull(row);
        char path[48];
        snprintf(path, sizeof(path), "/%s/%lld", pr ? "pull" : "issues",
                 (long long)json_integer_value(json_object_get(row, "number")));
        const char *state = json_get_str(row, "state");
        bool closed = !streq_ptr(state, "open");
        bool merged = json_is_true(json_object_get(row, "merged"));
        const char *user = json_get_str(row, "user");
        _cleanup_free_ char *reason = upper(json_get_str(row, "state_reason"));
        _cleanup_free_ char *assoc = strdup(gh_association(repo, strempty(user)));
        if (!reason || !assoc)
                return NULL;
        _cleanup_json_ json_t *o = json_pack(
                "{s:s, s:O, s:O, s:O, s:O, s:O, s:o, s:s, s:b, s:O, s:O, s:O, s:b, s:O, s:s, "
                "s:s?, s:o}",
                "__typename", pr ? "PullRequest" : "Issue", "_repo", repo, "_row", row, "id",
                json_object_get(row, "node_id"), "number", json_object_get(row, "number"), "title",
                json_object_get(row, "title"), "url",
                html_url(json_get_str(repo, "owner"), "/", json_get_str(repo, "name"), path),
                "state",
                merged   ? "MERGED"
                : closed ? "CLOSED"
                         : "OPEN",
                "closed", closed, "createdAt", json_object_get(row, "created_at"), "updatedAt",
                json_object_get(row, "updated_at"), "closedAt",
                json_object_get(row, "closed_at") ? json_object_get(row, "closed_at") : json_null(),
                "locked", json_is_true(json_object_get(row, "locked")), "databaseId",
                json_object_get(row, "id"), "authorAssociation", assoc, "_author", user, "body",
                json_string_value(json_object_get(row, "body"))
                        ? json_incref(json_object_get(row, "body"))
                        : json_string(""));
        if (!o)
                return NULL;
        if (!pr)
                return put(o, "stateReason", *reason ? json_string(reason) : json_null()) < 0
                               ? NULL
                               : TAKE_PTR(o);
        const char *head_sha = gh_pr_head_sha(repo, row), *base_sha = gh_pr_base_sha(repo, row);
        if (put(o, "isDraft", json_boolean(json_is_true(json_object_get(row, "draft")))) < 0 ||
            put_ref(o, "baseRefName", json_object_get(row, "base")) < 0 ||
            put_ref(o, "headRefName", json_object_get(row, "head")) < 0 ||
            put(o, "headRefOid", json_string(strempty(head_sha))) < 0 ||
            put(o, "baseRefOid", json_string(strempty(base_sha))) < 0 ||
            put(o, "merged", json_boolean(merged)) < 0 ||
            put_ref(o, "mergedAt", json_object_get(row, "merged_at")) < 0 ||
            put(o, "maintainerCanModify",
                json_boolean(json_is_true(json_object_get(row, "maintainer_can_modify")))) < 0 ||
            put(o, "isCrossRepository", json_false()) < 0)
                return NULL;
        return TAKE_PTR(o);
}

static json_t *comment_src(TwinCall *c, json_t *repo, json_t *row, json_t *cm)
{
        char path[80];
        snprintf(path, sizeof(path), "/%s/%lld#issuecomment-%lld",
                 gh_is_pull(row) ? "pull" : "issues",
                 (long long)json_integer_value(json_object_get(row, "number")),
                 (long long)json_integer_value(json_object_get(cm, "id")));
        const char *user = json_get_str(cm, "user"), *viewer = json_get_str(c->world, "viewer");
        return json_pack(
                "{s:s, s:O, s:O, s:O, s:O, s:O, s:O, s:o, s:s, s:b, s:b, s:n, s:b, s:s?, "
                "s:O}",
                "__typename", "IssueComment", "_cm", cm, "id", json_object_get(cm, "node_id"),
                "databaseId", json_object_get(cm, "id"), "body", json_object_get(cm, "body"),
                "createdAt", json_object_get(cm, "created_at"), "updatedAt",
                json_object_get(cm, "updated_at"), "url",
                html_url(json_get_str(repo, "owner"), "/", json_get_str(repo, "name"), path),
                "authorAssociation", gh_association(repo, strempty(user)), "includesCreatedEdit", 0,
                "isMinimized", 0, "minimizedReason", "viewerDidAuthor",
                viewer && user && strcasecmp(viewer, user) == 0, "_author", user, "_row", row);
}

/* ------------------------------------------------------------------ resolvers: shared */

static int r_author(GqlExec *x, json_t *s, json_t *args _unused_, json_t **ret)
{
        *ret = user_src(call(x), json_get_str(s, "_author"));
        return *ret ? 0 : -ENOMEM;
}

static int r_avatar(GqlExec *x _unused_, json_t *s, json_t *args _unused_, json_t **ret)
{
        _cleanup_free_ char *u = NULL;
        if (asprintf(&u, "https://avatars.githubusercontent.com/%s", json_get_str(s, "login")) < 0)
                return -ENOMEM;
        *ret = json_string(u);
        return *ret ? 0 : -ENOMEM;
}

/* reactionGroups: every ReactionContent with the count of the row's reactions of it */
static int r_reaction_groups(GqlExec *x _unused_, json_t *s, json_t *args _unused_, json_t **ret)
{
        static const char *const rest[] = {"+1",       "-1",    "laugh",  "hooray",
                                           "confused", "heart", "rocket", "eyes"};
        static const char *const gql[] = {"THUMBS_UP", "THUMBS_DOWN", "LAUGH",  "HOORAY",
                                          "CONFUSED",  "HEART",       "ROCKET", "EYES"};
        json_t *row =
                json_object_get(s, "_cm") ? json_object_get(s, "_cm") : json_object_get(s, "_row");
        _cleanup_json_ json_t *a = json_array();
        for (size_t k = 0; a && k < ELEMENTSOF(rest); k++) {
                json_int_t n = 0;
                size_t i;
                json_t *r;
                json_array_foreach (json_object_get(row, "reactions"), i, r) {
                        n += streq_ptr(json_get_str(r, "content"), rest[k]);
                }
                if (json_array_append_new(
                            a, json_pack("{s:s, s:{s:I, s:[], s:[], s:{s:b, s:b, s:n, s:n}}}",
                                         "content", gql[k], "users", "totalCount", n, "nodes",
                                         "edges", "pageInfo", "hasNextPage", 0, "hasPreviousPage",
                                         0, "startCursor", "endCursor")) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(a);
        return *ret ? 0 : -ENOMEM;
}

static int r_empty_connection(GqlExec *x, json_t *s _unused_, json_t *args, json_t **ret)
{
        _cleanup_json_ json_t *none = json_array();
        return none ? gql_connection(x, none, args, ret) : -ENOMEM;
}

/* ------------------------------------------------------------------ Query */

static json_t *find_repo_or_error(GqlExec *x, const char *owner, const char *name, int *r)
{
        TwinCall *c = call(x);
        json_t *repo = owner && name ? gh_repo_find(c->world, owner, name) : NULL;
        const char *viewer = json_get_str(c->world, "viewer");
        if (repo && json_is_true(json_object_get(repo, "private")) &&
            !(viewer && gh_repo_member(repo, viewer)))
                repo = NULL; /* a private repository is not there to others (REST's 404) */
        *r = 0;
        if (!repo)
                *r = gql_error(x, "NOT_FOUND",
                               "Could not resolve to a Repository with the name '%s/%s'.",
                               strempty(owner), strempty(name));
        return repo;
}

static int q_repository(GqlExec *x, json_t *s _unused_, json_t *args, json_t **ret)
{
        int r;
        json_t *repo =
                find_repo_or_error(x, json_get_str(args, "owner"), json_get_str(args, "name"), &r);
        *ret = NULL;
        if (!repo)
                return r;
        *ret = repo_src(call(x), repo);
        return *ret ? 0 : -ENOMEM;
}

static int q_viewer(GqlExec *x, json_t *s _unused_, json_t *args _unused_, json_t **ret)
{
        TwinCall *c = call(x);
        *ret = user_src(c, json_get_str(c->world, "viewer"));
        return *ret ? 0 : -ENOMEM;
}

static int q_user(GqlExec *x, json_t *s _unused_, json_t *args, json_t **ret)
{
        TwinCall *c = call(x);
        json_t *u = gh_user_find(c->world, json_get_str(args, "login"));
        *ret = NULL;
        if (!u || !streq_ptr(json_get_str(u, "type"), "User"))
                return gql_error(x, "NOT_FOUND",
                                 "Could not resolve to a User with the login of '%s'.",
                                 json_get_str(args, "login"));
        *ret = user_src(c, json_get_str(u, "login"));
        return *ret ? 0 : -ENOMEM;
}

static const char *node_find(json_t *w, const char *id, json_t **ret_repo, json_t **ret_row);

static int q_node(GqlExec *x, json_t *s _unused_, json_t *args, json_t **ret)
{
        TwinCall *c = call(x);
        json_t *repo = NULL, *row = NULL;
        const char *id = json_get_str(args, "id");
        const char *kind = node_find(c->world, id, &repo, &row);
        *ret = NULL;
        if (!kind)
                return gql_error(x, "NOT_FOUND",
                                 "Could not resolve to a node with the global id of '%s'",
                                 strempty(id));
        *ret = row ? item_src(c, repo, row) : repo_src(c, repo);
        return *ret ? 0 : -ENOMEM;
}

/* ------------------------------------------------------------------ Repository */

static json_t *src_repo(json_t *s)
{
        return json_object_get(s, "_repo");
}

static int r_repo_owner(GqlExec *x, json_t *s, json_t *args _unused_, json_t **ret)
{
        *ret = user_src(call(x), json_get_str(src_repo(s), "owner"));
        return *ret ? 0 : -ENOMEM;
}

static int r_repo_parent(GqlExec *x, json_t *s, json_t *args _unused_, json_t **ret)
{
        json_t *p = json_object_get(src_repo(s), "parent");
        const char *full = json_is_string(p) ? json_string_value(p) : json_get_str(p, "full_name");
        *ret = NULL;
        if (!full)
                return 0;
        char owner[128];
        const char *slash = strchr(full, '/');
        if (!slash || (size_t)(slash - full) >= sizeof(owner))
                return 0;
        snprintf(owner, sizeof(owner), "%.*s", (int)(slash - full), full);
        json_t *repo = gh_repo_find(call(x)->world, owner, slash + 1);
        *ret = repo ? repo_src(call(x), repo) : NULL;
        return repo && !*ret ? -ENOMEM : 0;
}

static int r_repo_permission(GqlExec *x, json_t *s, json_t *args _unused_, json_t **ret)
{
        json_t *repo = src_repo(s);
        const char *viewer = json_get_str(call(x)->world, "viewer");
        const char *perm = !viewer                                                ? "READ"
                           : strcasecmp(viewer, json_get_str(repo, "owner")) == 0 ? "ADMIN"
                           : gh_repo_member(repo, viewer)                         ? "WRITE"
                                                                                  : "READ";
        *ret = json_string(perm);
        return *ret ? 0 : -ENOMEM;
}

static int r_repo_default_ref(GqlExec *x, json_t *s, json_t *args _unused_, json_t **ret)
{
        json_t *repo = src_repo(s);
        const char *b = json_get_str(repo, "default_branch");
        const char *sha = b ? gh_ref_sha(repo, b) : NULL;
        (void)x;
        *ret = b ? json_pack("{s:s, s:s, s:s, s:s, s:O}", "name", b, "prefix", "refs/heads/", "id",
                             "", "_sha", strempty(sha), "_repo", repo)
                 : NULL;
        return b && !*ret ? -ENOMEM : 0;
}

static int r_repo_merge_method(GqlExec *x _unused_, json_t *s _unused_, json_t *args _unused_,
                               json_t **ret)
{
        *ret = json_string("MERGE");
        return *ret ? 0 : -ENOMEM;
}

/* Repository.issue / issueOrPullRequest / pullRequest(number:) */
static int find_item(GqlExec *x, json_t *s, json_t *args, int which, json_t **ret)
{
        json_t *repo = src_repo(s);
        int64_t n = json_integer_value(json_object_get(args, "number"));
        json_t *row = gh_number_find(repo, "issues", n, NULL);
        if (!row)
                row = gh_number_find(repo, "pull_requests", n, NULL);
        *ret = NULL;
        static const char *const what[] = {"Issue", "issue or pull request", "PullRequest"};
        if (!row || (which == 0 && gh_is_pull(row)) || (which == 2 && !gh_is_pull(row)))
                return gql_error(x, "NOT_FOUND",
                                 "Could not resolve to %s %s with the number of %lld.",
                                 which == 1 ? "an" : "a", what[which], (long long)n);
        *ret = item_src(call(x), repo, row);
        return *ret ? 0 : -ENOMEM;
}

static int r_repo_issue(GqlExec *x, json_t *s, json_t *args, json_t **ret)
{
        return find_item(x, s, args, 0, ret);
}

static int r_repo_issue_or_pr(GqlExec *x, json_t *s, json_t *args, json_t **ret)
{
        return find_item(x, s, args, 1, ret);
}

static int r_repo_pull(GqlExec *x, json_t *s, json_t *args, json_t **ret)
{
        return find_item(x, s, args, 2, ret);
}

static bool has_login(json_t *logins, const char *login)
{
        size_t i;
        json_t *l;
        json_array_foreach (logins, i, l) {
                if (strcasecmp(json_string_value(l), login) == 0)
                        return true;
        }
        return false;
}

static bool in_states(json_t *states, const char *state)
{
        if (!json_array_size(states))
                return true;
        size_t i;
        json_t *v;
        json_array_foreach (states, i, v) {
                if (streq_ptr(json_string_value(v), state))
                        return true;
        }
        return false;
}

/* Orders items (sources) by orderBy {field, direction}; CREATED_AT ASC without one. */
static int order_cmp(const void *a, const void *b, void *userdata)
{
        const char *key = ((const char **)userdata)[0];
        bool desc = ((const char **)userdata)[1] != NULL;
        json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
        int c;
        if (streq(key, "comments"))
                c = (int)json_array_size(json_object_get(json_object_get(x, "_row"), "comments")) -
                    (int)json_array_size(json_object_get(json_object_get(y, "_row"), "comments"));
        else
                c = strcmp(strempty(json_get_str(x, key)), strempty(json_get_str(y, key)));
        if (c == 0) /* ids are in creation order */
                c = (int)(json_integer_value(json_object_get(x, "databaseId")) -
                          json_integer_value(json_object_get(y, "databaseId")));
        return desc ? -c : c;
}

static int sort_by(json_t *items, json_t *order, const char *def_key)
{
        const char *field = json_get_str(order, "field");
        const char *key = !field                       ? def_key
                          : streq(field, "UPDATED_AT") ? "updatedAt"
                          : streq(field, "COMMENTS")   ? "comments"
                          : streq(field, "NAME")       ? "name"
                                                       : "createdAt";
        const char *ud[2] = {key, streq_ptr(json_get_str(order, "direction"), "DESC") ? "" : NULL};
        size_t n = json_array_size(items);
        _cleanup_free_ json_t **v = calloc(n ? n : 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                v[i] = json_incref(json_array_get(items, i));
        qsort_r(v, n, sizeof(*v), order_cmp, ud);
        json_array_clear(items);
        for (size_t i = 0; i < n; i++)
                if (json_array_append_new(items, v[i]) < 0)
                        return -ENOMEM;
        return 0;
}

static bool row_has_labels(json_t *row, json_t *labels)
{
        size_t i;
        json_t *l;
        json_array_foreach (labels, i, l) {
                bool found = false;
                size_t j;
                json_t *have;
                json_array_foreach (json_object_get(row, "labels"), j, have) {
                        found |= strcasecmp(json_string_value(have), json_string_value(l)) == 0;
                }
                if (!found)
                        return false;
        }
        return true;
}

/* Repository.issues / pullRequests */
static int list_items(GqlExec *x, json_t *s, json_t *args, bool pulls, json_t **ret)
{
        TwinCall *c = call(x);
        json_t *repo = src_repo(s);
        json_t *filter = json_object_get(args, "filterBy");
        json_t *states = json_object_get(args, "states");
        if (!states)
                states = json_object_get(filter, "states");
        json_t *labels = json_object_get(args, "labels");
        if (!labels)
                labels = json_object_get(filter, "labels");
        const char *assignee = json_get_str(filter, "assignee"),
                   *author = json_get_str(filter, "createdBy"),
                   *mention = json_get_str(filter, "mentioned"),
                   *milestone = json_get_str(filter, "milestoneNumber"),
                   *since = json_get_str(filter, "since"),
                   *head = json_get_str(args, "headRefName"),
                   *base = json_get_str(args, "baseRefName");
        _cleanup_json_ json_t *items = json_array();
        if (!items)
                return -ENOMEM;
        size_t i;
        json_t *row;
        json_array_foreach (json_object_get(repo, pulls ? "pull_requests" : "issues"), i, row) {
                if (gh_is_pull(row) != pulls)
                        continue;
                const char *st = json_get_str(row, "state");
                const char *gst = json_is_true(json_object_get(row, "merged")) ? "MERGED"
                                  : streq_ptr(st, "open")                      ? "OPEN"
                                                                               : "CLOSED";
                if (!in_states(states, gst) || !row_has_labels(row, labels))
                        continue;
                if (assignee && !streq(assignee, "*") &&
                    !has_login(json_object_get(row, "assignees"), assignee))
                        continue;
                if (author && strcasecmp(author, strempty(json_get_str(row, "user"))) != 0)
                        continue;
                if (mention && !gh_mentions(row, mention))
                        continue;
                if (milestone) {
                        json_t *m = json_object_get(row, "milestone");
                        char num[32];
                        snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(m));
                        if (!json_is_integer(m) || !streq(num, milestone))
                                continue;
                }
                if (since && strcmp(strempty(json_get_str(row, "updated_at")), since) < 0)
                        continue;
                if (head && !streq_ptr(json_get_str(row, "head"), head))
                        continue;
                if (base && !streq_ptr(json_get_str(row, "base"), base))
                        continue;
                if (json_array_append_new(items, item_src(c, repo, row)) < 0)
                        return -ENOMEM;
        }
        int r = sort_by(items, json_object_get(args, "orderBy"), "createdAt");
        return r < 0 ? r : gql_connection(x, items, args, ret);
}

static int r_repo_issues(GqlExec *x, json_t *s, json_t *args, json_t **ret)
{
        return list_items(x, s, args, false, ret);
}

static int r_repo_pulls(GqlExec *x, json_t *s, json_t *args, json_t **ret)
{
        return list_items(x, s, args, true, ret);
}

static int r_repo_labels(GqlExec *x, json_t *s, json_t *args, json_t **ret)
{
        json_t *repo = src_repo(s);
        const char *q = json_get_str(args, "query");
        _cleanup_json_ json_t *items = json_array();
        if (!items)
                return -ENOMEM;
        size_t i;
        json_t *l;
        json_array_foreach (json_object_get(repo, "labels"), i, l) {
                /* query: "label names to filter by" (a substring, case-insensitively) */
                if (q && *q && !strcasestr(strempty(json_get_str(l, "name")), q))
                        continue;
                if (json_array_append_new(items, label_src(call(x), repo, l)) < 0)
                        return -ENOMEM;
        }
        int r = sort_by(items, json_object_get(args, "orderBy"), "createdAt");
        return r < 0 ? r : gql_connection(x, items, args, ret);
}

static int r_repo_label(GqlExec *x, json_t *s, json_t *args, json_t **ret)
{
        json_t *repo = src_repo(s), *l = gh_label_find(repo, json_get_str(args, "name"));
        *ret = l ? label_src(call(x), repo, l) : NULL;
        return l && !*ret ? -ENOMEM : 0;
}

static int r_repo_milestones(GqlExec *x, json_t *s, json_t *args, json_t **ret)
{
        json_t *repo = src_repo(s);
        _cleanup_json_ json_t *items = json_array();
        size_t i;
        json_t *m;
        json_array_foreach (json_object_get(repo, "milestones"), i, m) {
                json_t *src = milestone_src(call(x), repo, json_object_get(m, "number"));
                if (!in_states(json_object_get(args, "states"), json_get_str(src, "state"))) {
                        json_decref(src);
                        continue;
                }
                if (json_array_append_new(items, src) < 0)
                        return -ENOMEM;
        }
        return items ? gql_connection(x, items, args, ret) : -ENOMEM;
}

static int r_repo_milestone(GqlExec *x, json_t *s, json_t *args, json_t **ret)
{
        json_t *m = milestone_src(call(x), src_repo(s), json_object_get(args, "number"));
        *ret = json_is_null(m) ? NULL : m;
        if (json_is_null(m))
                json_decref(m);
        return m ? 0 : -ENOMEM;
}

static int users_connection(GqlExec *x, json_t *logins, json_t *args, json_t **ret)
{
        _cleanup_json_ json_t *items = json_array();
        size_t i;
        json_t *l;
        json_array_foreach (logins, i, l) {
                if (json_array_append_new(items, user_src(call(x), json_string_value(l))) < 0)
                        return -ENOMEM;
        }
        return items ? gql_connection(x, items, args, ret) : -ENOMEM;
}

static int r_repo_assignable(GqlExec *x, json_t *s, json_t *args, json_t **ret)
{
        json_t *repo = src_repo(s);
        _cleanup_json_ json_t *logins = json_pack("[s]", json_get_str(repo, "owner"));
        const char *q = json_get_str(args, "query");
        size_t i;
        json_t *l;
        json_array_foreach (json_object_get(repo, "collaborators"), i, l) {
                if (!has_login(logins, json_string_value(l)) && json_array_append(logins, l) < 0)
                        return -ENOMEM;
        }
        for (i = json_array_size(logins); q && *q && i-- > 0;)
                if (!strcasestr(json_string_value(json_array_get(logins, i)), q))
                        json_array_remove(logins, i);
        return logins ? users_connection(x, logins, args, ret) : -ENOMEM;
}

/* ------------------------------------------------------------------ Ref, Commit, checks */

static json_t *commit_src(json_t *repo, const char *sha)
{
        json_t *cm = sha ? gh_commit_find(repo, sha) : NULL;
        if (!cm)
                return json_null();
        const char *msg = strempty(json_get_str(cm, "message"));
        size_t hl = strcspn(msg, "\n");
        char abbrev[8];
        snprintf(abbrev, sizeof(abbrev), "%.7s", sha);
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, "/commit/%s", sha) < 0)
                return NULL;
        json_t *url = html_url(json_get_str(repo, "owner"), "/", json_get_str(repo, "name"), path);
        return json_pack("{s:s, s:O, s:s, s:s, s:s, s:s%, s:O?, s:O, s:o}", "__typename", "Commit",
                         "_repo", repo, "oid", sha, "abbreviatedOid", abbrev, "message", msg,
                         "messageHeadline", msg, hl, "committedDate",
                         json_object_get(cm, "committed_at") ? json_object_get(cm, "committed_at")
                                                             : json_object_get(cm, "date"),
                         "commitUrl", url, "url", url);
}

static int r_ref_target(GqlExec *x _unused_, json_t *s, json_t *args _unused_, json_t **ret)
{
        *ret = commit_src(src_repo(s), json_get_str(s, "_sha"));
        return *ret ? 0 : -ENOMEM;
}

/* The StatusState of a combined state or check conclusion ("success" → "SUCCESS"). */
static int r_commit_rollup(GqlExec *x _unused_, json_t *s, json_t *args _unused_, json_t **ret)
{
        json_t *repo = src_repo(s);
        const char *sha = json_get_str(s, "oid");
        _cleanup_json_ json_t *contexts = json_array();
        if (!contexts)
                return -ENOMEM;
        /* the latest status per context (gh_repo_list: newest last) */
        json_t *statuses = gh_repo_list(repo, "statuses");
        size_t i;
        json_t *st;
        for (i = json_array_size(statuses); i-- > 0;) {
                st = json_array_get(statuses, i);
                if (!streq_ptr(json_get_str(st, "sha"), sha))
                        continue;
                bool seen = false;
                size_t j;
                json_t *have;
                json_array_foreach (contexts, j, have) {
                        seen |= streq_ptr(json_get_str(have, "context"),
                                          json_get_str(st, "context"));
                }
                if (seen)
                        continue;
                _cleanup_free_ char *state = upper(json_get_str(st, "state"));
                if (!state ||
                    json_array_append_new(contexts,
                                          json_pack("{s:s, s:O, s:O, s:O, s:s, s:O, s:O, s:O}",
                                                    "__typename", "StatusContext", "_repo", repo,
                                                    "id", json_object_get(st, "node_id"), "context",
                                                    json_object_get(st, "context"), "state", state,
                                                    "targetUrl", json_object_get(st, "target_url"),
                                                    "description",
                                                    json_object_get(st, "description"), "createdAt",
                                                    json_object_get(st, "created_at"))) < 0)
                        return -ENOMEM;
        }
        json_array_foreach (gh_repo_list(repo, "check_runs"), i, st) {
                if (!streq_ptr(json_get_str(st, "head_sha"), sha))
                        continue;
                _cleanup_free_ char *status = upper(json_get_str(st, "status")),
                                    *concl = upper(json_get_str(st, "conclusion"));
                if (!status || !concl ||
                    json_array_append_new(
                            contexts,
                            json_pack(
                                    "{s:s, s:O, s:O, s:O, s:O, s:s, s:s?, s:O, s:O, s:O, s:{s:n}}",
                                    "__typename", "CheckRun", "_repo", repo, "id",
                                    json_object_get(st, "node_id"), "databaseId",
                                    json_object_get(st, "id"), "name", json_object_get(st, "name"),
                                    "status", status, "conclusion", *concl ? concl : NULL,
                                    "startedAt",
                                    json_object_get(st, "started_at")
                                            ? json_object_get(st, "started_at")
                                            : json_null(),
                                    "completedAt",
                                    json_object_get(st, "completed_at")
                                            ? json_object_get(st, "completed_at")
                                            : json_null(),
                                    "detailsUrl",
                                    json_object_get(st, "details_url")
                                            ? json_object_get(st, "details_url")
                                            : json_null(),
                                    "checkSuite", "workflowRun")) < 0)
                        return -ENOMEM;
        }
        *ret = NULL;
        if (json_array_size(contexts) == 0)
                return 0;
        /* the rollup's state: failing beats pending beats success (GitHub's StatusState) */
        const char *state = "SUCCESS";
        json_array_foreach (contexts, i, st) {
                const char *v = json_get_str(st, "state");
                if (!v) { /* a check run */
                        const char *cc = json_get_str(st, "conclusion");
                        v = !cc ? "PENDING"
                            : streq(cc, "SUCCESS") || streq(cc, "NEUTRAL") || streq(cc, "SKIPPED")
                                    ? "SUCCESS"
                                    : "FAILURE";
                }
                if (streq(v, "FAILURE") || streq(v, "ERROR"))
                        state = "FAILURE";
                else if (streq(v, "PENDING") && streq(state, "SUCCESS"))
                        state = "PENDING";
        }
        *ret = json_pack("{s:s, s:O}", "state", state, "_contexts", contexts);
        return *ret ? 0 : -ENOMEM;
}

/* StatusContext.isRequired / CheckRun.isRequired: whether the pull request (by id or number)
 * requires this context to pass before it merges (its required_contexts) */
static int r_context_required(GqlExec *x, json_t *s, json_t *args, json_t **ret)
{
        json_t *repo = src_repo(s), *pr = NULL, *prepo = NULL;
        const char *id = json_get_str(args, "pullRequestId");
        json_t *num = json_object_get(args, "pullRequestNumber");
        if (id && !streq_ptr(node_find(call(x)->world, id, &prepo, &pr), "PullRequest"))
                pr = NULL;
        else if (!id && json_is_integer(num))
                pr = gh_number_find(repo, "pull_requests", json_integer_value(num), NULL);
        if (!id && !num) {
                *ret = NULL;
                return gql_error(x, "INVALID_ARGUMENT",
                                 "pullRequestId or pullRequestNumber must be given");
        }
        const char *name =
                json_get_str(s, "context") ? json_get_str(s, "context") : json_get_str(s, "name");
        *ret = json_boolean(pr && name &&
                            gh_strv_has(json_object_get(pr, "required_contexts"), name));
        return 0;
}

static int r_rollup_contexts(GqlExec *x, json_t *s, json_t *args, json_t **ret)
{
        return gql_connection(x, json_object_get(s, "_contexts"), args, ret);
}

/* ------------------------------------------------------------------ Issue, PullRequest */

static json_t *src_row(json_t *s)
{
        return json_object_get(s, "_row");
}

static int r_item_assignees(GqlExec *x, json_t *s, json_t *args, json_t **ret)
{
        return users_connection(x, json_object_get(src_row(s), "assignees"), args, ret);
}

static int r_item_labels(GqlExec *x, json_t *s, json_t *args, json_t **ret)
{
        json_t *repo = src_repo(s);
        _cleanup_json_ json_t *items = json_array();
        size_t i;
        json_t *n;
        json_array_foreach (json_object_get(src_row(s), "labels"), i, n) {
                json_t *l = gh_label_find(repo, json_string_value(n));
                if (l && json_array_append_new(items, label_src(call(x), repo, l)) < 0)
                        return -ENOMEM;
        }
        return items ? gql_connection(x, items, args, ret) : -ENOMEM;
}

static int r_item_milestone(GqlExec *x, json_t *s, json_t *args _unused_, json_t **ret)
{
        *ret = milestone_src(call(x), src_repo(s), json_object_get(src_row(s), "milestone"));
        return *ret ? 0 : -ENOMEM;
}

static int r_item_comments(GqlExec *x, json_t *s, json_t *args, json_t **ret)
{
        json_t *repo = src_repo(s), *row = src_row(s);
        _cleanup_json_ json_t *items = json_array();
        size_t i;
        json_t *cm;
        json_array_foreach (json_object_get(row, "comments"), i, cm) {
                if (json_array_append_new(items, comment_src(call(x), repo, row, cm)) < 0)
                        return -ENOMEM;
        }
        return items ? gql_connection(x, items, args, ret) : -ENOMEM;
}

static int r_item_repository(GqlExec *x, json_t *s, json_t *args _unused_, json_t **ret)
{
        *ret = repo_src(call(x), src_repo(s));
        return *ret ? 0 : -ENOMEM;
}

/* additions, deletions, changedFiles, mergeable, mergeStateStatus: from the REST rendering */
static int pull_rest(GqlExec *x, json_t *s, json_t **ret)
{
        json_t *cached = json_object_get(s, "_rest");
        if (!cached) {
                cached = gh_render_pull(call(x), src_repo(s), src_row(s), true);
                if (!cached || json_object_set_new(s, "_rest", cached) < 0)
                        return -ENOMEM;
        }
        *ret = cached;
        return 0;
}

static int r_pull_count(GqlExec *x, json_t *s, const char *key, json_t **ret)
{
        json_t *rest;
        int r = pull_rest(x, s, &rest);
        if (r < 0)
                return r;
        *ret = json_integer(json_integer_value(json_object_get(rest, key)));
        return *ret ? 0 : -ENOMEM;
}

static int r_pull_additions(GqlExec *x, json_t *s, json_t *args _unused_, json_t **ret)
{
        return r_pull_count(x, s, "additions", ret);
}

static int r_pull_deletions(GqlExec *x, json_t *s, json_t *args _unused_, json_t **ret)
{
        return r_pull_count(x, s, "deletions", ret);
}

static int r_pull_changed_files(GqlExec *x, json_t *s, json_t *args _unused_, json_t **ret)
{
        return r_pull_count(x, s, "changed_files", ret);
}

static int r_pull_mergeable(GqlExec *x, json_t *s, json_t *args _unused_, json_t **ret)
{
        json_t *rest;
        int r = pull_rest(x, s, &rest);
        if (r < 0)
                return r;
        json_t *m = json_object_get(rest, "mergeable");
        *ret = json_string(json_is_true(m)    ? "MERGEABLE"
                           : json_is_false(m) ? "CONFLICTING"
                                              : "UNKNOWN");
        return *ret ? 0 : -ENOMEM;
}

static int r_pull_merge_state(GqlExec *x, json_t *s, json_t *args _unused_, json_t **ret)
{
        json_t *rest;
        int r = pull_rest(x, s, &rest);
        if (r < 0)
                return r;
        _cleanup_free_ char *u = upper(json_get_str(rest, "mergeable_state"));
        *ret = u ? json_string(u) : NULL;
        return *ret ? 0 : -ENOMEM;
}

static int r_pull_merged_by(GqlExec *x, json_t *s, json_t *args _unused_, json_t **ret)
{
        *ret = user_src(call(x), json_get_str(src_row(s), "merged_by"));
        return *ret ? 0 : -ENOMEM;
}

static int r_pull_head_owner(GqlExec *x, json_t *s, json_t *args _unused_, json_t **ret)
{
        *ret = user_src(call(x), json_get_str(src_repo(s), "owner"));
        return *ret ? 0 : -ENOMEM;
}

/* PullRequest.commits: PullRequestCommit {commit} over the commits base..head */
static int r_pull_commits(GqlExec *x, json_t *s, json_t *args, json_t **ret)
{
        json_t *repo = src_repo(s), *row = src_row(s);
        const char *head = gh_pr_head_sha(repo, row), *base = gh_pr_base_sha(repo, row);
        const char *mb = head && base ? gh_pr_merge_base(repo, base, head) : NULL;
        _cleanup_json_ json_t *commits = gh_pr_commits_between(repo, mb ? mb : base, head),
                              *items = json_array();
        if (!commits || !items)
                return -ENOMEM;
        size_t i;
        json_t *cm;
        json_array_foreach (commits, i, cm) {
                const char *sha = json_get_str(cm, "sha");
                if (json_array_append_new(items, json_pack("{s:s?, s:o}", "id", sha, "commit",
                                                           commit_src(repo, sha))) < 0)
                        return -ENOMEM;
        }
        return gql_connection(x, items, args, ret);
}

/* A PullRequestReview of repo's review row rv. New reference, NULL on OOM. */
static json_t *review_src(json_t *repo, json_t *rv)
{
        const char *user = json_get_str(rv, "user"), *sha = json_get_str(rv, "commit_id");
        json_t *body = json_object_get(rv, "body"), *at = json_object_get(rv, "submitted_at");
        return json_pack("{s:s, s:O, s:O, s:s?, s:s, s:o, s:o, s:O, s:o, s:s?, s:O}", "__typename",
                         "PullRequestReview", "id", json_object_get(rv, "node_id"), "databaseId",
                         json_object_get(rv, "id"), "_author", user, "authorAssociation",
                         gh_association(repo, strempty(user)), "submittedAt",
                         at ? json_incref(at) : json_null(), "body",
                         json_is_string(body) ? json_incref(body) : json_string(""), "state",
                         json_object_get(rv, "state"), "commit", commit_src(repo, sha), "_sha", sha,
                         "_row", rv);
}

static int r_pull_reviews(GqlExec *x, json_t *s, json_t *args, json_t **ret)
{
        TwinCall *c = call(x);
        json_t *repo = src_repo(s), *row = src_row(s);
        const char *viewer = json_get_str(c->world, "viewer");
        _cleanup_json_ json_t *items = json_array();
        size_t i;
        json_t *rv;
        json_array_foreach (json_object_get(row, "reviews"), i, rv) {
                const char *user = json_get_str(rv, "user");
                if (streq_ptr(json_get_str(rv, "state"), "PENDING") &&
                    !(viewer && user && strcasecmp(viewer, user) == 0))
                        continue; /* a pending review is its author's alone */
                if (json_array_append_new(items, review_src(repo, rv)) < 0)
                        return -ENOMEM;
        }
        return items ? gql_connection(x, items, args, ret) : -ENOMEM;
}

/* Repository.releases: newest first unless orderBy says otherwise; isLatest is the newest
 * published release that is not a prerelease (GitHub's "latest release"). */
static int r_repo_releases(GqlExec *x, json_t *s, json_t *args, json_t **ret)
{
        json_t *repo = src_repo(s), *latest = NULL;
        size_t i;
        json_t *rel;
        json_array_foreach (json_object_get(repo, "releases"), i, rel) {
                if (json_is_true(json_object_get(rel, "draft")) ||
                    json_is_true(json_object_get(rel, "prerelease")))
                        continue;
                if (!latest || strcmp(strempty(json_get_str(rel, "created_at")),
                                      strempty(json_get_str(latest, "created_at"))) >= 0)
                        latest = rel;
        }
        _cleanup_json_ json_t *items = json_array();
        if (!items)
                return -ENOMEM;
        json_array_foreach (json_object_get(repo, "releases"), i, rel) {
                const char *tag = json_get_str(rel, "tag_name");
                char path[160];
                snprintf(path, sizeof(path), "/releases/tag/%s", strempty(tag));
                json_t *name = json_object_get(rel, "name"), *body = json_object_get(rel, "body");
                json_t *src = json_pack(
                        "{s:s, s:O, s:O, s:o, s:O?, s:o, s:b, s:b, s:b, s:O, s:O?, s:O, s:o}",
                        "__typename", "Release", "id", json_object_get(rel, "node_id"),
                        "databaseId", json_object_get(rel, "id"), "name",
                        json_is_string(name) ? json_incref(name) : json_null(), "tagName",
                        json_object_get(rel, "tag_name"), "description",
                        json_is_string(body) ? json_incref(body) : json_null(), "isDraft",
                        json_is_true(json_object_get(rel, "draft")), "isPrerelease",
                        json_is_true(json_object_get(rel, "prerelease")), "isLatest", rel == latest,
                        "createdAt", json_object_get(rel, "created_at"), "publishedAt",
                        json_object_get(rel, "published_at"), "updatedAt",
                        json_object_get(rel, "created_at"), "url",
                        html_url(json_get_str(repo, "owner"), "/", json_get_str(repo, "name"),
                                 path));
                if (json_array_append_new(items, src) < 0)
                        return -ENOMEM;
        }
        /* newest first unless orderBy says otherwise */
        _cleanup_json_ json_t *newest =
                json_pack("{s:s, s:s}", "field", "CREATED_AT", "direction", "DESC");
        json_t *order = json_object_get(args, "orderBy");
        if (!newest)
                return -ENOMEM;
        int r = sort_by(items, order ? order : newest, "createdAt");
        if (r < 0)
                return r;
        return gql_connection(x, items, args, ret);
}

/*
 * Query.search(type: ISSUE): GitHub's issue search (the REST search_issues, qualifiers and
 * all) as a connection of Issue and PullRequest, with issueCount. Other types are not served:
 * GraphQL's error naming them.
 */
static int q_search(GqlExec *x, json_t *s _unused_, json_t *args, json_t **ret);

static int r_pull_review_requests(GqlExec *x, json_t *s, json_t *args, json_t **ret)
{
        _cleanup_json_ json_t *items = json_array();
        size_t i;
        json_t *l;
        json_array_foreach (json_object_get(src_row(s), "requested_reviewers"), i, l) {
                if (json_array_append_new(items,
                                          json_pack("{s:o}", "requestedReviewer",
                                                    user_src(call(x), json_string_value(l)))) < 0)
                        return -ENOMEM;
        }
        return items ? gql_connection(x, items, args, ret) : -ENOMEM;
}

static int r_pull_review_decision(GqlExec *x _unused_, json_t *s, json_t *args _unused_,
                                  json_t **ret)
{
        /* the latest review per reviewer that approves or requests changes decides */
        json_t *reviews = json_object_get(src_row(s), "reviews");
        bool approved = false, changes = false;
        for (size_t i = json_array_size(reviews); i-- > 0;) {
                json_t *rv = json_array_get(reviews, i);
                const char *st = json_get_str(rv, "state"), *user = json_get_str(rv, "user");
                bool later = false;
                for (size_t j = i + 1; j < json_array_size(reviews); j++) {
                        json_t *o = json_array_get(reviews, j);
                        const char *ost = json_get_str(o, "state");
                        later |=
                                streq_ptr(json_get_str(o, "user"), user) &&
                                (streq_ptr(ost, "APPROVED") || streq_ptr(ost, "CHANGES_REQUESTED"));
                }
                if (later)
                        continue;
                approved |= streq_ptr(st, "APPROVED");
                changes |= streq_ptr(st, "CHANGES_REQUESTED");
        }
        *ret = changes    ? json_string("CHANGES_REQUESTED")
               : approved ? json_string("APPROVED")
                          : NULL;
        return 0;
}

/* ------------------------------------------------------------------ mutations */

/* The node whose global id is id: its repository, and the row when it is an issue or a pull
 * request. Returns the kind ("Repository", "Issue", "PullRequest") or NULL. */
static const char *node_find(json_t *w, const char *id, json_t **ret_repo, json_t **ret_row)
{
        size_t i, j;
        json_t *repo, *row;
        json_array_foreach (json_object_get(w, "repositories"), i, repo) {
                if (streq_ptr(json_get_str(repo, "node_id"), id)) {
                        *ret_repo = repo;
                        *ret_row = NULL;
                        return "Repository";
                }
                const char *lists[] = {"issues", "pull_requests"};
                for (size_t k = 0; k < 2; k++)
                        json_array_foreach (json_object_get(repo, lists[k]), j, row) {
                                if (streq_ptr(json_get_str(row, "node_id"), id)) {
                                        *ret_repo = repo;
                                        *ret_row = row;
                                        return gh_is_pull(row) ? "PullRequest" : "Issue";
                                }
                        }
        }
        return NULL;
}

static int not_found_id(GqlExec *x, const char *id)
{
        return gql_error(x, "NOT_FOUND", "Could not resolve to a node with the global id of '%s'",
                         strempty(id));
}

/*
 * Runs the REST action tool with args (taken) as its route would, and keeps what it changed for
 * the tape. 0 with the action's 2xx body in *ret_body (new), 1 refused (the REST error is
 * the GraphQL error), -ENOMEM.
 */
static int rest(GqlExec *x, const char *tool, json_t *args, json_t **ret_body)
{
        Gx *g = gql_userdata(x);
        _cleanup_json_ json_t *a = args;
        const TwinAction *act = twin_kind_action(&twin_kind_github, tool);
        if (!a || !act)
                return -ENOMEM;
        TwinReply rp = {};
        if (streq(gql_operation(x), "mutation")) /* a query's row stays the graphql tool's */
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
        const char *m = json_get_str(rp.body, "message");
        json_t *errs = json_object_get(rp.body, "errors");
        json_t *first = json_array_get(errs, 0); /* {message}, or a sentence of its own */
        const char *detail =
                json_is_string(first) ? json_string_value(first) : json_get_str(first, "message");
        const char *type = rp.status == 404   ? "NOT_FOUND"
                           : rp.status == 403 ? "FORBIDDEN"
                                              : "UNPROCESSABLE";
        r = gql_error(x, type, "%s%s%s", m ? m : "The change was refused", detail ? ": " : "",
                      strempty(detail));
        twin_reply_done(&rp);
        return r < 0 ? r : 1;
}

static int payload(const char *key, json_t *v, json_t *input, json_t **ret)
{
        *ret = json_pack("{s:o, s:O?}", key, v, "clientMutationId",
                         json_object_get(input, "clientMutationId"));
        return *ret ? 0 : -ENOMEM;
}

/* Label names for label node ids (unknown ids are an error); into *ret (new). 0, 1, -ENOMEM. */
static int names_for_ids(GqlExec *x, json_t *repo, json_t *ids, const char *list, const char *key,
                         json_t **ret)
{
        _cleanup_json_ json_t *names = json_array();
        size_t i;
        json_t *id;
        json_array_foreach (ids, i, id) {
                json_t *hit = NULL;
                size_t j;
                json_t *v;
                json_t *rows = streq(list, "users") ? gh_world_users(call(x)->world)
                                                    : json_object_get(repo, list);
                json_array_foreach (rows, j, v) {
                        if (streq_ptr(json_get_str(v, "node_id"), json_string_value(id)))
                                hit = v;
                }
                if (!hit) {
                        int r = not_found_id(x, json_string_value(id));
                        return r < 0 ? r : 1;
                }
                if (json_array_append(names, json_object_get(hit, key)) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(names);
        return *ret ? 0 : -ENOMEM;
}

static int item_from_body(GqlExec *x, json_t *repo, json_t *body, const char *list, json_t **ret)
{
        json_t *row = gh_number_find(repo, list,
                                     json_integer_value(json_object_get(body, "number")), NULL);
        *ret = row ? item_src(call(x), repo, row) : json_null();
        return *ret ? 0 : -ENOMEM;
}

static int m_create_issue(GqlExec *x, json_t *s _unused_, json_t *args, json_t **ret)
{
        json_t *in = json_object_get(args, "input"), *repo = NULL, *row = NULL;
        const char *rid = json_get_str(in, "repositoryId");
        *ret = NULL;
        if (!streq_ptr(node_find(call(x)->world, rid, &repo, &row), "Repository"))
                return not_found_id(x, rid);
        _cleanup_json_ json_t *a =
                json_pack("{s:O, s:O, s:O}", "owner", json_object_get(repo, "owner"), "name",
                          json_object_get(repo, "name"), "title", json_object_get(in, "title"));
        if (!a || json_object_set_new(a, "repo", json_incref(json_object_get(repo, "name"))) < 0)
                return -ENOMEM;
        json_object_del(a, "name");
        if (json_object_get(in, "body") &&
            json_object_set(a, "body", json_object_get(in, "body")) < 0)
                return -ENOMEM;
        _cleanup_json_ json_t *labels = NULL, *assignees = NULL;
        int r;
        if ((r = names_for_ids(x, repo, json_object_get(in, "labelIds"), "labels", "name",
                               &labels)) != 0 ||
            (r = names_for_ids(x, repo, json_object_get(in, "assigneeIds"), "users", "login",
                               &assignees)) != 0)
                return r < 0 ? r : 0;
        if (json_array_size(labels) && json_object_set(a, "labels", labels) < 0)
                return -ENOMEM;
        if (json_array_size(assignees) && json_object_set(a, "assignees", assignees) < 0)
                return -ENOMEM;
        const char *mid = json_get_str(in, "milestoneId");
        if (mid) {
                json_t *m = NULL;
                size_t i;
                json_t *v;
                json_array_foreach (json_object_get(repo, "milestones"), i, v) {
                        if (streq_ptr(json_get_str(v, "node_id"), mid))
                                m = v;
                }
                if (!m)
                        return not_found_id(x, mid);
                if (json_object_set(a, "milestone", json_object_get(m, "number")) < 0)
                        return -ENOMEM;
        }
        _cleanup_json_ json_t *body = NULL, *issue = NULL;
        r = rest(x, "create_issue", TAKE_PTR(a), &body);
        if (r != 0)
                return r < 0 ? r : 0;
        if ((r = item_from_body(x, repo, body, "issues", &issue)) < 0)
                return r;
        return payload("issue", TAKE_PTR(issue), in, ret);
}

static int m_add_comment(GqlExec *x, json_t *s _unused_, json_t *args, json_t **ret)
{
        json_t *in = json_object_get(args, "input"), *repo = NULL, *row = NULL;
        const char *sid = json_get_str(in, "subjectId");
        *ret = NULL;
        const char *kind = node_find(call(x)->world, sid, &repo, &row);
        if (!row)
                return not_found_id(x, sid);
        (void)kind;
        _cleanup_json_ json_t *body = NULL;
        int r = rest(x, "add_issue_comment",
                     json_pack("{s:O, s:O, s:O, s:O}", "owner", json_object_get(repo, "owner"),
                               "repo", json_object_get(repo, "name"), "issue_number",
                               json_object_get(row, "number"), "body", json_object_get(in, "body")),
                     &body);
        if (r != 0)
                return r < 0 ? r : 0;
        /* the row may have been replaced: find it again, then the new comment */
        json_t *fresh = gh_number_find(repo, gh_is_pull(row) ? "pull_requests" : "issues",
                                       json_integer_value(json_object_get(row, "number")), NULL);
        json_t *cm = NULL;
        size_t i;
        json_t *v;
        json_array_foreach (json_object_get(fresh, "comments"), i, v) {
                if (json_equal(json_object_get(v, "id"), json_object_get(body, "id")))
                        cm = v;
        }
        json_t *edge = cm ? json_pack("{s:s, s:o}", "cursor", "", "node",
                                      comment_src(call(x), repo, fresh, cm))
                          : json_null();
        *ret = json_pack("{s:o, s:o, s:O?}", "commentEdge", edge, "subject",
                         item_src(call(x), repo, fresh), "clientMutationId",
                         json_object_get(in, "clientMutationId"));
        return *ret ? 0 : -ENOMEM;
}

static int set_issue_state(GqlExec *x, json_t *args, const char *state, json_t **ret)
{
        json_t *in = json_object_get(args, "input"), *repo = NULL, *row = NULL;
        const char *id = json_get_str(in, "issueId");
        *ret = NULL;
        if (!streq_ptr(node_find(call(x)->world, id, &repo, &row), "Issue"))
                return not_found_id(x, id);
        _cleanup_json_ json_t *a =
                json_pack("{s:s, s:O, s:O, s:O, s:s}", "method", "update", "owner",
                          json_object_get(repo, "owner"), "repo", json_object_get(repo, "name"),
                          "issue_number", json_object_get(row, "number"), "state", state);
        const char *reason = json_get_str(in, "stateReason");
        if (!a)
                return -ENOMEM;
        if (reason) {
                _cleanup_free_ char *lower = strdup(reason);
                for (char *p = lower; p && *p; p++)
                        *p = (char)tolower((unsigned char)*p);
                if (!lower || json_object_set_new(a, "state_reason", json_string(lower)) < 0)
                        return -ENOMEM;
        }
        _cleanup_json_ json_t *body = NULL, *issue = NULL;
        int r = rest(x, "issue_write", TAKE_PTR(a), &body);
        if (r != 0)
                return r < 0 ? r : 0;
        if ((r = item_from_body(x, repo, body, "issues", &issue)) < 0)
                return r;
        return payload("issue", TAKE_PTR(issue), in, ret);
}

static int m_close_issue(GqlExec *x, json_t *s _unused_, json_t *args, json_t **ret)
{
        return set_issue_state(x, args, "closed", ret);
}

static int m_reopen_issue(GqlExec *x, json_t *s _unused_, json_t *args, json_t **ret)
{
        return set_issue_state(x, args, "open", ret);
}

static int m_create_pull(GqlExec *x, json_t *s _unused_, json_t *args, json_t **ret)
{
        json_t *in = json_object_get(args, "input"), *repo = NULL, *row = NULL;
        const char *rid = json_get_str(in, "repositoryId");
        *ret = NULL;
        if (!streq_ptr(node_find(call(x)->world, rid, &repo, &row), "Repository"))
                return not_found_id(x, rid);
        _cleanup_json_ json_t *a = json_pack(
                "{s:O, s:O, s:O, s:O, s:O}", "owner", json_object_get(repo, "owner"), "repo",
                json_object_get(repo, "name"), "title", json_object_get(in, "title"), "head",
                json_object_get(in, "headRefName"), "base", json_object_get(in, "baseRefName"));
        if (!a)
                return -ENOMEM;
        const char *keys[][2] = {{"body", "body"},
                                 {"draft", "draft"},
                                 {"maintainerCanModify", "maintainer_can_modify"}};
        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                if (json_object_get(in, keys[i][0]) &&
                    json_object_set(a, keys[i][1], json_object_get(in, keys[i][0])) < 0)
                        return -ENOMEM;
        _cleanup_json_ json_t *body = NULL, *pr = NULL;
        int r = rest(x, "create_pull_request", TAKE_PTR(a), &body);
        if (r != 0)
                return r < 0 ? r : 0;
        if ((r = item_from_body(x, repo, body, "pull_requests", &pr)) < 0)
                return r;
        return payload("pullRequest", TAKE_PTR(pr), in, ret);
}

static int m_merge_pull(GqlExec *x, json_t *s _unused_, json_t *args, json_t **ret)
{
        json_t *in = json_object_get(args, "input"), *repo = NULL, *row = NULL;
        const char *id = json_get_str(in, "pullRequestId");
        *ret = NULL;
        if (!streq_ptr(node_find(call(x)->world, id, &repo, &row), "PullRequest"))
                return not_found_id(x, id);
        _cleanup_free_ char *method = NULL;
        const char *m = json_get_str(in, "mergeMethod");
        if (m && !(method = strdup(m)))
                return -ENOMEM;
        for (char *p = method; p && *p; p++)
                *p = (char)tolower((unsigned char)*p);
        _cleanup_json_ json_t *a =
                json_pack("{s:O, s:O, s:O, s:s?}", "owner", json_object_get(repo, "owner"), "repo",
                          json_object_get(repo, "name"), "pullNumber",
                          json_object_get(row, "number"), "merge_method", method);
        if (!a)
                return -ENOMEM;
        const char *keys[][2] = {{"commitHeadline", "commit_title"},
                                 {"commitBody", "commit_message"},
                                 {"expectedHeadOid", "sha"}};
        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                if (json_object_get(in, keys[i][0]) &&
                    json_object_set(a, keys[i][1], json_object_get(in, keys[i][0])) < 0)
                        return -ENOMEM;
        _cleanup_json_ json_t *body = NULL, *pr = NULL;
        int r = rest(x, "merge_pull_request", TAKE_PTR(a), &body);
        if (r != 0)
                return r < 0 ? r : 0;
        json_t *fresh = gh_number_find(repo, "pull_requests",
                                       json_integer_value(json_object_get(row, "number")), NULL);
        pr = fresh ? item_src(call(x), repo, fresh) : json_null();
        if (!pr)
                return -ENOMEM;
        return payload("pullRequest", TAKE_PTR(pr), in, ret);
}

/* addLabelsToLabelable / removeLabelsFromLabelable: the REST label actions, by name */
static int labels_change(GqlExec *x, json_t *args, bool add, json_t **ret)
{
        json_t *in = json_object_get(args, "input"), *repo = NULL, *row = NULL;
        const char *id = json_get_str(in, "labelableId");
        *ret = NULL;
        if (!node_find(call(x)->world, id, &repo, &row) || !row)
                return not_found_id(x, id);
        _cleanup_json_ json_t *names = NULL;
        int r = names_for_ids(x, repo, json_object_get(in, "labelIds"), "labels", "name", &names);
        if (r != 0)
                return r < 0 ? r : 0;
        const char *list = gh_is_pull(row) ? "pull_requests" : "issues";
        json_t *number = json_object_get(row, "number");
        size_t i;
        json_t *n;
        json_array_foreach (add ? NULL : names, i, n) {
                _cleanup_json_ json_t *body = NULL;
                r = rest(x, "remove_issue_label",
                         json_pack("{s:O, s:O, s:O, s:O}", "owner", json_object_get(repo, "owner"),
                                   "repo", json_object_get(repo, "name"), "issue_number", number,
                                   "name", n),
                         &body);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        if (add) {
                _cleanup_json_ json_t *body = NULL;
                r = rest(x, "add_issue_labels",
                         json_pack("{s:O, s:O, s:O, s:O}", "owner", json_object_get(repo, "owner"),
                                   "repo", json_object_get(repo, "name"), "issue_number", number,
                                   "labels", names),
                         &body);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        json_t *fresh = gh_number_find(repo, list, json_integer_value(number), NULL);
        json_t *item = fresh ? item_src(call(x), repo, fresh) : json_null();
        return item ? payload("labelable", item, in, ret) : -ENOMEM;
}

static int m_add_labels(GqlExec *x, json_t *s _unused_, json_t *args, json_t **ret)
{
        return labels_change(x, args, true, ret);
}

static int m_remove_labels(GqlExec *x, json_t *s _unused_, json_t *args, json_t **ret)
{
        return labels_change(x, args, false, ret);
}

/* closePullRequest / reopenPullRequest: update_pull_request with its state */
static int pull_state(GqlExec *x, json_t *args, const char *state, json_t **ret)
{
        json_t *in = json_object_get(args, "input"), *repo = NULL, *row = NULL;
        const char *id = json_get_str(in, "pullRequestId");
        *ret = NULL;
        if (!streq_ptr(node_find(call(x)->world, id, &repo, &row), "PullRequest"))
                return not_found_id(x, id);
        _cleanup_json_ json_t *body = NULL;
        int r = rest(x, "update_pull_request",
                     json_pack("{s:O, s:O, s:O, s:s}", "owner", json_object_get(repo, "owner"),
                               "repo", json_object_get(repo, "name"), "pullNumber",
                               json_object_get(row, "number"), "state", state),
                     &body);
        if (r != 0)
                return r < 0 ? r : 0;
        json_t *fresh = gh_number_find(repo, "pull_requests",
                                       json_integer_value(json_object_get(row, "number")), NULL);
        json_t *pr = fresh ? item_src(call(x), repo, fresh) : json_null();
        return pr ? payload("pullRequest", pr, in, ret) : -ENOMEM;
}

static int m_close_pull(GqlExec *x, json_t *s _unused_, json_t *args, json_t **ret)
{
        return pull_state(x, args, "closed", ret);
}

static int m_reopen_pull(GqlExec *x, json_t *s _unused_, json_t *args, json_t **ret)
{
        return pull_state(x, args, "open", ret);
}

/* addPullRequestReview: create_pull_request_review (event APPROVE, REQUEST_CHANGES, COMMENT;
 * none leaves it PENDING, as GitHub does) */
static int m_add_review(GqlExec *x, json_t *s _unused_, json_t *args, json_t **ret)
{
        json_t *in = json_object_get(args, "input"), *repo = NULL, *row = NULL;
        const char *id = json_get_str(in, "pullRequestId");
        *ret = NULL;
        if (!streq_ptr(node_find(call(x)->world, id, &repo, &row), "PullRequest"))
                return not_found_id(x, id);
        _cleanup_json_ json_t *a = json_pack(
                "{s:O, s:O, s:O}", "owner", json_object_get(repo, "owner"), "repo",
                json_object_get(repo, "name"), "pullNumber", json_object_get(row, "number"));
        if (!a)
                return -ENOMEM;
        const char *keys[][2] = {{"body", "body"}, {"event", "event"}, {"commitOID", "commitID"}};
        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                if (json_object_get(in, keys[i][0]) &&
                    json_object_set(a, keys[i][1], json_object_get(in, keys[i][0])) < 0)
                        return -ENOMEM;
        _cleanup_json_ json_t *body = NULL;
        int r = rest(x, "create_pull_request_review", TAKE_PTR(a), &body);
        if (r != 0)
                return r < 0 ? r : 0;
        json_t *fresh = gh_number_find(repo, "pull_requests",
                                       json_integer_value(json_object_get(row, "number")), NULL);
        json_t *rv = gh_review_find(fresh, json_integer_value(json_object_get(body, "id")));
        json_t *src = rv ? review_src(repo, rv) : json_null();
        return src ? payload("pullRequestReview", src, in, ret) : -ENOMEM;
}

static int q_search(GqlExec *x, json_t *s _unused_, json_t *args, json_t **ret)
{
        *ret = NULL;
        const char *type = json_get_str(args, "type");
        if (!streq_ptr(type, "ISSUE"))
                return gql_error(x, NULL,
                                 "search of type %s is not served by the pome GitHub twin (ISSUE "
                                 "is)",
                                 strempty(type));
        /* every match, through the REST search (its qualifiers, its order); then paged here */
        _cleanup_json_ json_t *body = NULL;
        int r = rest(
                x, "search_issues",
                json_pack("{s:O, s:s}", "q", json_object_get(args, "query"), "per_page", "100"),
                &body);
        if (r != 0)
                return r < 0 ? r : 0;
        TwinCall *c = call(x);
        _cleanup_json_ json_t *items = json_array();
        size_t i;
        json_t *it;
        json_array_foreach (json_object_get(body, "items"), i, it) {
                /* .../repos/{owner}/{name}: the row the hit names */
                const char *url = strempty(json_get_str(it, "repository_url"));
                const char *rest_path = strstr(url, "/repos/");
                char owner[128] = "", name[128] = "";
                if (!rest_path || sscanf(rest_path, "/repos/%127[^/]/%127[^/]", owner, name) != 2)
                        continue;
                json_t *repo = gh_repo_find(c->world, owner, name);
                int64_t n = json_integer_value(json_object_get(it, "number"));
                json_t *row = repo ? gh_number_find(repo, "issues", n, NULL) : NULL;
                if (!row && repo)
                        row = gh_number_find(repo, "pull_requests", n, NULL);
                if (row && json_array_append_new(items, item_src(c, repo, row)) < 0)
                        return -ENOMEM;
        }
        if (!items)
                return -ENOMEM;
        if ((r = gql_connection(x, items, args, ret)) < 0 || !*ret)
                return r;
        json_t *total = json_object_get(body, "total_count");
        if (json_object_set(*ret, "issueCount", total ? total : json_integer(0)) < 0)
                return -ENOMEM;
        return 0;
}

/* ------------------------------------------------------------------ the schema */

#define F(name, type)                  \
        {                              \
                name, type, NULL, NULL \
        }
#define FA(name, type, args)           \
        {                              \
                name, type, args, NULL \
        }
#define FR(name, type, fn)           \
        {                            \
                name, type, NULL, fn \
        }
#define FAR(name, type, args, fn)    \
        {                            \
                name, type, args, fn \
        }
#define PAGE "after: String, before: String, first: Int, last: Int"
#define TYPE(name, kind, also, fields)                       \
        {                                                    \
                name, kind, also, fields, ELEMENTSOF(fields) \
        }
#define ENUM(name, values)                      \
        {                                       \
                name, GQL_ENUM, values, NULL, 0 \
        }
#define SCALAR(name)                            \
        {                                       \
                name, GQL_SCALAR, NULL, NULL, 0 \
        }

/* A connection's and its edge's fields, as GitHub's schema has them for every XConnection. */
#define CONNECTION(T)                                                                        \
        static const GqlField T##_connection[] = {                                           \
                F("nodes", "[" #T "]"), F("edges", "[" #T "Edge]"), F("totalCount", "Int!"), \
                F("pageInfo", "PageInfo!")};                                                 \
        static const GqlField T##_edge[] = {F("cursor", "String!"), F("node", #T)};
#define CONNECTION_TYPES(T)                                      \
        TYPE(#T "Connection", GQL_OBJECT, NULL, T##_connection), \
                TYPE(#T "Edge", GQL_OBJECT, NULL, T##_edge)

CONNECTION(Issue)
CONNECTION(PullRequest)
CONNECTION(Label)
CONNECTION(User)
CONNECTION(IssueComment)
CONNECTION(Milestone)
CONNECTION(PullRequestReview)
CONNECTION(ReviewRequest)
CONNECTION(PullRequestCommit)
CONNECTION(StatusCheckRollupContext)
CONNECTION(ProjectCard)
CONNECTION(Release)

static const GqlField ReactingUser_connection[] = {
        F("nodes", "[User]"), F("edges", "[ReactingUserEdge]"), F("totalCount", "Int!"),
        F("pageInfo", "PageInfo!")};
static const GqlField ReactingUser_edge[] = {F("cursor", "String!"), F("node", "User!")};

static const GqlField query_fields[] = {
        FAR("repository", "Repository", "owner: String!, name: String!, followRenames: Boolean",
            q_repository),
        FR("viewer", "User!", q_viewer),
        FAR("user", "User", "login: String!", q_user),
        FAR("node", "Node", "id: ID!", q_node),
        FAR("search", "SearchResultItemConnection!",
            "after: String, before: String, first: Int, last: Int, query: String!, type: "
            "SearchType!",
            q_search),
};

static const GqlField mutation_fields[] = {
        FAR("createIssue", "CreateIssuePayload", "input: CreateIssueInput!", m_create_issue),
        FAR("addComment", "AddCommentPayload", "input: AddCommentInput!", m_add_comment),
        FAR("closeIssue", "CloseIssuePayload", "input: CloseIssueInput!", m_close_issue),
        FAR("reopenIssue", "ReopenIssuePayload", "input: ReopenIssueInput!", m_reopen_issue),
        FAR("createPullRequest", "CreatePullRequestPayload", "input: CreatePullRequestInput!",
            m_create_pull),
        FAR("mergePullRequest", "MergePullRequestPayload", "input: MergePullRequestInput!",
            m_merge_pull),
        FAR("closePullRequest", "ClosePullRequestPayload", "input: ClosePullRequestInput!",
            m_close_pull),
        FAR("reopenPullRequest", "ReopenPullRequestPayload", "input: ReopenPullRequestInput!",
            m_reopen_pull),
        FAR("addLabelsToLabelable", "AddLabelsToLabelablePayload",
            "input: AddLabelsToLabelableInput!", m_add_labels),
        FAR("removeLabelsFromLabelable", "RemoveLabelsFromLabelablePayload",
            "input: RemoveLabelsFromLabelableInput!", m_remove_labels),
        FAR("addPullRequestReview", "AddPullRequestReviewPayload",
            "input: AddPullRequestReviewInput!", m_add_review),
};

#define ACTOR_FIELDS                                                        \
        F("login", "String!"), F("url", "URI!"), F("resourcePath", "URI!"), \
                FAR("avatarUrl", "URI!", "size: Int", r_avatar)

static const GqlField user_fields[] = {
        ACTOR_FIELDS,          F("id", "ID!"),         F("name", "String"),
        F("email", "String!"), F("databaseId", "Int"),
};
static const GqlField org_fields[] = {
        ACTOR_FIELDS,
        F("id", "ID!"),
        F("name", "String"),
        F("databaseId", "Int"),
};
static const GqlField bot_fields[] = {ACTOR_FIELDS, F("id", "ID!"), F("databaseId", "Int")};
static const GqlField actor_fields[] = {ACTOR_FIELDS};
static const GqlField owner_fields[] = {ACTOR_FIELDS, F("id", "ID!")};

static const GqlField repository_fields[] = {
        F("id", "ID!"),
        F("databaseId", "Int"),
        F("name", "String!"),
        F("nameWithOwner", "String!"),
        FR("owner", "RepositoryOwner!", r_repo_owner),
        F("description", "String"),
        F("url", "URI!"),
        F("homepageUrl", "URI"),
        F("isPrivate", "Boolean!"),
        F("visibility", "RepositoryVisibility!"),
        F("isFork", "Boolean!"),
        F("isArchived", "Boolean!"),
        F("isTemplate", "Boolean!"),
        F("hasIssuesEnabled", "Boolean!"),
        F("hasWikiEnabled", "Boolean!"),
        F("hasProjectsEnabled", "Boolean!"),
        F("hasDiscussionsEnabled", "Boolean!"),
        F("mergeCommitAllowed", "Boolean!"),
        F("rebaseMergeAllowed", "Boolean!"),
        F("squashMergeAllowed", "Boolean!"),
        F("deleteBranchOnMerge", "Boolean!"),
        F("createdAt", "DateTime!"),
        F("updatedAt", "DateTime!"),
        F("pushedAt", "DateTime"),
        F("stargazerCount", "Int!"),
        F("forkCount", "Int!"),
        FR("viewerPermission", "RepositoryPermission", r_repo_permission),
        FR("viewerDefaultMergeMethod", "PullRequestMergeMethod!", r_repo_merge_method),
        FR("defaultBranchRef", "Ref", r_repo_default_ref),
        FR("parent", "Repository", r_repo_parent),
        FAR("issue", "Issue", "number: Int!", r_repo_issue),
        FAR("issueOrPullRequest", "IssueOrPullRequest", "number: Int!", r_repo_issue_or_pr),
        FAR("pullRequest", "PullRequest", "number: Int!", r_repo_pull),
        FAR("issues", "IssueConnection!",
            "orderBy: IssueOrder, labels: [String!], states: [IssueState!], filterBy: "
            "IssueFilters, " PAGE,
            r_repo_issues),
        FAR("pullRequests", "PullRequestConnection!",
            "states: [PullRequestState!], labels: [String!], headRefName: String, baseRefName: "
            "String, orderBy: IssueOrder, " PAGE,
            r_repo_pulls),
        FAR("labels", "LabelConnection", "orderBy: LabelOrder, " PAGE ", query: String",
            r_repo_labels),
        FAR("label", "Label", "name: String!", r_repo_label),
        FAR("milestones", "MilestoneConnection",
            PAGE ", states: [MilestoneState!], orderBy: MilestoneOrder, query: String",
            r_repo_milestones),
        FAR("milestone", "Milestone", "number: Int!", r_repo_milestone),
        FAR("assignableUsers", "UserConnection!", "query: String, " PAGE, r_repo_assignable),
        FAR("releases", "ReleaseConnection!", PAGE ", orderBy: ReleaseOrder", r_repo_releases),
};

#define ITEM_FIELDS                                                                             \
        F("id", "ID!"), F("databaseId", "Int"), F("number", "Int!"), F("title", "String!"),     \
                F("body", "String!"), F("url", "URI!"), F("closed", "Boolean!"),                \
                F("closedAt", "DateTime"), F("createdAt", "DateTime!"),                         \
                F("updatedAt", "DateTime!"), F("locked", "Boolean!"),                           \
                F("authorAssociation", "CommentAuthorAssociation!"),                            \
                FR("author", "Actor", r_author),                                                \
                FAR("assignees", "UserConnection!", PAGE, r_item_assignees),                    \
                FAR("labels", "LabelConnection", "orderBy: LabelOrder, " PAGE, r_item_labels),  \
                FR("milestone", "Milestone", r_item_milestone),                                 \
                FAR("comments", "IssueCommentConnection!", "orderBy: IssueCommentOrder, " PAGE, \
                    r_item_comments),                                                           \
                FR("reactionGroups", "[ReactionGroup!]", r_reaction_groups),                    \
                FAR("projectCards", "ProjectCardConnection!",                                   \
                    PAGE ", archivedStates: [ProjectCardArchivedState]", r_empty_connection),   \
                FR("repository", "Repository!", r_item_repository)

static const GqlField issue_fields[] = {
        ITEM_FIELDS,
        F("state", "IssueState!"),
        F("stateReason", "IssueStateReason"),
};

static const GqlField pull_fields[] = {
        ITEM_FIELDS,
        F("state", "PullRequestState!"),
        F("isDraft", "Boolean!"),
        F("merged", "Boolean!"),
        F("mergedAt", "DateTime"),
        FR("mergedBy", "Actor", r_pull_merged_by),
        F("maintainerCanModify", "Boolean!"),
        F("baseRefName", "String!"),
        F("headRefName", "String!"),
        F("baseRefOid", "GitObjectID!"),
        F("headRefOid", "GitObjectID!"),
        F("isCrossRepository", "Boolean!"),
        FR("headRepositoryOwner", "RepositoryOwner", r_pull_head_owner),
        FR("headRepository", "Repository", r_item_repository),
        FR("baseRepository", "Repository", r_item_repository),
        FR("additions", "Int!", r_pull_additions),
        FR("deletions", "Int!", r_pull_deletions),
        FR("changedFiles", "Int!", r_pull_changed_files),
        FR("mergeable", "MergeableState!", r_pull_mergeable),
        FR("mergeStateStatus", "MergeStateStatus!", r_pull_merge_state),
        FR("reviewDecision", "PullRequestReviewDecision", r_pull_review_decision),
        FAR("commits", "PullRequestCommitConnection!", PAGE, r_pull_commits),
        FAR("reviews", "PullRequestReviewConnection",
            PAGE ", states: [PullRequestReviewState!], author: String", r_pull_reviews),
        FAR("reviewRequests", "ReviewRequestConnection", PAGE, r_pull_review_requests),
};

static const GqlField label_fields[] = {
        F("id", "ID!"),
        F("name", "String!"),
        F("color", "String!"),
        F("description", "String"),
        F("url", "URI!"),
        F("isDefault", "Boolean!"),
        F("createdAt", "DateTime"),
        F("updatedAt", "DateTime"),
};

static const GqlField milestone_fields[] = {
        F("id", "ID!"),          F("number", "Int!"),
        F("title", "String!"),   F("description", "String"),
        F("dueOn", "DateTime"),  F("state", "MilestoneState!"),
        F("closed", "Boolean!"), F("url", "URI!"),
};

static const GqlField comment_fields[] = {
        F("id", "ID!"),
        F("databaseId", "Int"),
        F("body", "String!"),
        F("url", "URI!"),
        F("createdAt", "DateTime!"),
        F("updatedAt", "DateTime!"),
        FR("author", "Actor", r_author),
        F("authorAssociation", "CommentAuthorAssociation!"),
        F("includesCreatedEdit", "Boolean!"),
        F("isMinimized", "Boolean!"),
        F("minimizedReason", "String"),
        F("viewerDidAuthor", "Boolean!"),
        FR("reactionGroups", "[ReactionGroup!]", r_reaction_groups),
};

static const GqlField reaction_group_fields[] = {
        F("content", "ReactionContent!"),
        FA("users", "ReactingUserConnection!", PAGE),
};

static const GqlField page_info_fields[] = {
        F("hasNextPage", "Boolean!"),
        F("hasPreviousPage", "Boolean!"),
        F("startCursor", "String"),
        F("endCursor", "String"),
};

static const GqlField ref_fields[] = {
        F("id", "ID!"),
        F("name", "String!"),
        F("prefix", "String!"),
        FR("target", "GitObject", r_ref_target),
};

static const GqlField commit_fields[] = {
        F("oid", "GitObjectID!"),
        F("abbreviatedOid", "String!"),
        F("message", "String!"),
        F("messageHeadline", "String!"),
        F("committedDate", "DateTime!"),
        F("url", "URI!"),
        F("commitUrl", "URI!"),
        FR("statusCheckRollup", "StatusCheckRollup", r_commit_rollup),
};
static const GqlField git_object_fields[] = {
        F("oid", "GitObjectID!"), F("abbreviatedOid", "String!"), F("commitUrl", "URI!")};

static const GqlField rollup_fields[] = {
        F("state", "StatusState!"),
        FAR("contexts", "StatusCheckRollupContextConnection!", PAGE, r_rollup_contexts),
};

static const GqlField check_run_fields[] = {
        F("id", "ID!"),
        F("databaseId", "Int"),
        F("name", "String!"),
        F("status", "CheckStatusState!"),
        F("conclusion", "CheckConclusionState"),
        F("startedAt", "DateTime"),
        F("completedAt", "DateTime"),
        F("detailsUrl", "URI"),
        F("checkSuite", "CheckSuite!"),
        FAR("isRequired", "Boolean!", "pullRequestId: ID, pullRequestNumber: Int",
            r_context_required),
};

static const GqlField status_context_fields[] = {
        F("id", "ID!"),
        F("context", "String!"),
        F("state", "StatusState!"),
        F("targetUrl", "URI"),
        F("description", "String"),
        F("createdAt", "DateTime!"),
        FAR("isRequired", "Boolean!", "pullRequestId: ID, pullRequestNumber: Int",
            r_context_required),
};

static const GqlField check_suite_fields[] = {F("workflowRun", "WorkflowRun")};
static const GqlField workflow_run_fields[] = {F("workflow", "Workflow!")};
static const GqlField workflow_fields[] = {F("name", "String!")};

static const GqlField review_fields[] = {
        F("id", "ID!"),
        F("databaseId", "Int"),
        FR("author", "Actor", r_author),
        F("authorAssociation", "CommentAuthorAssociation!"),
        F("submittedAt", "DateTime"),
        F("body", "String!"),
        F("state", "PullRequestReviewState!"),
        F("commit", "Commit"),
        FR("reactionGroups", "[ReactionGroup!]", r_reaction_groups),
};

static const GqlField review_request_fields[] = {F("requestedReviewer", "RequestedReviewer")};
static const GqlField pull_commit_fields[] = {F("id", "ID!"), F("commit", "Commit!")};
static const GqlField team_fields[] = {F("name", "String!"), F("slug", "String!"),
                                       F("organization", "Organization!")};
static const GqlField project_card_fields[] = {F("project", "Project!"),
                                               F("column", "ProjectColumn")};
static const GqlField project_fields[] = {F("name", "String!")};

static const GqlField create_issue_payload[] = {F("clientMutationId", "String"),
                                                F("issue", "Issue")};
static const GqlField close_issue_payload[] = {F("clientMutationId", "String"),
                                               F("issue", "Issue")};
static const GqlField reopen_issue_payload[] = {F("clientMutationId", "String"),
                                                F("issue", "Issue")};
static const GqlField add_comment_payload[] = {F("clientMutationId", "String"),
                                               F("commentEdge", "IssueCommentEdge"),
                                               F("subject", "Node")};
static const GqlField create_pull_payload[] = {F("clientMutationId", "String"),
                                               F("pullRequest", "PullRequest")};
static const GqlField merge_pull_payload[] = {F("clientMutationId", "String"),
                                              F("pullRequest", "PullRequest")};
static const GqlField node_fields[] = {F("id", "ID!")};
static const GqlField labelable_fields[] = {
        FAR("labels", "LabelConnection", "orderBy: LabelOrder, " PAGE, r_item_labels)};
static const GqlField release_fields[] = {
        F("id", "ID!"),
        F("databaseId", "Int"),
        F("name", "String"),
        F("tagName", "String!"),
        F("description", "String"),
        F("isDraft", "Boolean!"),
        F("isLatest", "Boolean!"),
        F("isPrerelease", "Boolean!"),
        F("createdAt", "DateTime!"),
        F("publishedAt", "DateTime"),
        F("updatedAt", "DateTime!"),
        F("url", "URI!"),
};
static const GqlField search_connection[] = {
        F("nodes", "[SearchResultItem]"),
        F("edges", "[SearchResultItemEdge]"),
        F("issueCount", "Int!"),
        F("pageInfo", "PageInfo!"),
};
static const GqlField search_edge[] = {F("cursor", "String!"), F("node", "SearchResultItem")};
static const GqlField labelable_payload[] = {F("clientMutationId", "String"),
                                             F("labelable", "Labelable")};
static const GqlField review_payload[] = {F("clientMutationId", "String"),
                                          F("pullRequestReview", "PullRequestReview")};
static const GqlField pull_state_input[] = {F("pullRequestId", "ID!"),
                                            F("clientMutationId", "String")};
static const GqlField labels_input[] = {F("labelableId", "ID!"), F("labelIds", "[ID!]!"),
                                        F("clientMutationId", "String")};
static const GqlField review_input[] = {
        F("pullRequestId", "ID!"),
        F("commitOID", "GitObjectID"),
        F("body", "String"),
        F("event", "PullRequestReviewEvent"),
        F("clientMutationId", "String"),
};
static const GqlField release_order_input[] = {F("field", "ReleaseOrderField!"),
                                               F("direction", "OrderDirection!")};

static const GqlField create_issue_input[] = {
        F("repositoryId", "ID!"),  F("title", "String!"),        F("body", "String"),
        F("assigneeIds", "[ID!]"), F("milestoneId", "ID"),       F("labelIds", "[ID!]"),
        F("projectIds", "[ID!]"),  F("issueTemplate", "String"), F("clientMutationId", "String"),
};
static const GqlField add_comment_input[] = {F("subjectId", "ID!"), F("body", "String!"),
                                             F("clientMutationId", "String")};
static const GqlField close_issue_input[] = {F("issueId", "ID!"),
                                             F("stateReason", "IssueClosedStateReason"),
                                             F("clientMutationId", "String")};
static const GqlField reopen_issue_input[] = {F("issueId", "ID!"), F("clientMutationId", "String")};
static const GqlField create_pull_input[] = {
        F("repositoryId", "ID!"),
        F("baseRefName", "String!"),
        F("headRefName", "String!"),
        F("headRepositoryId", "ID"),
        F("title", "String!"),
        F("body", "String"),
        F("maintainerCanModify", "Boolean"),
        F("draft", "Boolean"),
        F("clientMutationId", "String"),
};
static const GqlField merge_pull_input[] = {
        F("pullRequestId", "ID!"),
        F("commitHeadline", "String"),
        F("commitBody", "String"),
        F("expectedHeadOid", "GitObjectID"),
        F("mergeMethod", "PullRequestMergeMethod"),
        F("authorEmail", "String"),
        F("clientMutationId", "String"),
};
static const GqlField issue_order_input[] = {F("field", "IssueOrderField!"),
                                             F("direction", "OrderDirection!")};
static const GqlField label_order_input[] = {F("field", "LabelOrderField!"),
                                             F("direction", "OrderDirection!")};
static const GqlField milestone_order_input[] = {F("field", "MilestoneOrderField!"),
                                                 F("direction", "OrderDirection!")};
static const GqlField comment_order_input[] = {F("field", "IssueCommentOrderField!"),
                                               F("direction", "OrderDirection!")};
static const GqlField issue_filters_input[] = {
        F("assignee", "String"),  F("createdBy", "String"),     F("labels", "[String!]"),
        F("mentioned", "String"), F("milestone", "String"),     F("milestoneNumber", "String"),
        F("since", "DateTime"),   F("states", "[IssueState!]"), F("viewerSubscribed", "Boolean"),
};

static const GqlType github_types[] = {
        TYPE("Query", GQL_OBJECT, NULL, query_fields),
        TYPE("Mutation", GQL_OBJECT, NULL, mutation_fields),
        TYPE("Repository", GQL_OBJECT, "Node RepositoryInfo", repository_fields),
        TYPE("User", GQL_OBJECT, "Actor Node RepositoryOwner", user_fields),
        TYPE("Organization", GQL_OBJECT, "Actor Node RepositoryOwner", org_fields),
        TYPE("Bot", GQL_OBJECT, "Actor Node", bot_fields),
        TYPE("Actor", GQL_INTERFACE, NULL, actor_fields),
        TYPE("RepositoryOwner", GQL_INTERFACE, NULL, owner_fields),
        TYPE("Node", GQL_INTERFACE, NULL, node_fields),
        TYPE("Issue", GQL_OBJECT, "Node Labelable", issue_fields),
        TYPE("PullRequest", GQL_OBJECT, "Node Labelable", pull_fields),
        TYPE("Labelable", GQL_INTERFACE, NULL, labelable_fields),
        TYPE("Release", GQL_OBJECT, "Node", release_fields),
        CONNECTION_TYPES(Release),
        {"SearchResultItem", GQL_UNION, "Issue PullRequest", NULL, 0},
        TYPE("SearchResultItemConnection", GQL_OBJECT, NULL, search_connection),
        TYPE("SearchResultItemEdge", GQL_OBJECT, NULL, search_edge),
        TYPE("AddLabelsToLabelablePayload", GQL_OBJECT, NULL, labelable_payload),
        TYPE("RemoveLabelsFromLabelablePayload", GQL_OBJECT, NULL, labelable_payload),
        TYPE("ClosePullRequestPayload", GQL_OBJECT, NULL, create_pull_payload),
        TYPE("ReopenPullRequestPayload", GQL_OBJECT, NULL, create_pull_payload),
        TYPE("AddPullRequestReviewPayload", GQL_OBJECT, NULL, review_payload),
        TYPE("ClosePullRequestInput", GQL_INPUT_OBJECT, NULL, pull_state_input),
        TYPE("ReopenPullRequestInput", GQL_INPUT_OBJECT, NULL, pull_state_input),
        TYPE("AddLabelsToLabelableInput", GQL_INPUT_OBJECT, NULL, labels_input),
        TYPE("RemoveLabelsFromLabelableInput", GQL_INPUT_OBJECT, NULL, labels_input),
        TYPE("AddPullRequestReviewInput", GQL_INPUT_OBJECT, NULL, review_input),
        TYPE("ReleaseOrder", GQL_INPUT_OBJECT, NULL, release_order_input),
        ENUM("ReleaseOrderField", "CREATED_AT NAME"),
        ENUM("SearchType", "ISSUE REPOSITORY USER DISCUSSION"),
        ENUM("PullRequestReviewEvent", "COMMENT APPROVE REQUEST_CHANGES DISMISS"),
        {"IssueOrPullRequest", GQL_UNION, "Issue PullRequest", NULL, 0},
        TYPE("Label", GQL_OBJECT, "Node", label_fields),
        TYPE("Milestone", GQL_OBJECT, "Node", milestone_fields),
        TYPE("IssueComment", GQL_OBJECT, "Node", comment_fields),
        TYPE("ReactionGroup", GQL_OBJECT, NULL, reaction_group_fields),
        TYPE("ReactingUserConnection", GQL_OBJECT, NULL, ReactingUser_connection),
        TYPE("ReactingUserEdge", GQL_OBJECT, NULL, ReactingUser_edge),
        TYPE("PageInfo", GQL_OBJECT, NULL, page_info_fields),
        TYPE("Ref", GQL_OBJECT, "Node", ref_fields),
        TYPE("GitObject", GQL_INTERFACE, NULL, git_object_fields),
        TYPE("Commit", GQL_OBJECT, "GitObject Node", commit_fields),
        TYPE("StatusCheckRollup", GQL_OBJECT, "Node", rollup_fields),
        {"StatusCheckRollupContext", GQL_UNION, "CheckRun StatusContext", NULL, 0},
        TYPE("CheckRun", GQL_OBJECT, "Node", check_run_fields),
        TYPE("StatusContext", GQL_OBJECT, "Node", status_context_fields),
        TYPE("CheckSuite", GQL_OBJECT, "Node", check_suite_fields),
        TYPE("WorkflowRun", GQL_OBJECT, "Node", workflow_run_fields),
        TYPE("Workflow", GQL_OBJECT, "Node", workflow_fields),
        TYPE("PullRequestReview", GQL_OBJECT, "Node", review_fields),
        TYPE("ReviewRequest", GQL_OBJECT, "Node", review_request_fields),
        {"RequestedReviewer", GQL_UNION, "Bot Mannequin Team User", NULL, 0},
        TYPE("Team", GQL_OBJECT, "Node", team_fields),
        TYPE("Mannequin", GQL_OBJECT, "Actor Node", bot_fields),
        TYPE("PullRequestCommit", GQL_OBJECT, "Node", pull_commit_fields),
        TYPE("ProjectCard", GQL_OBJECT, "Node", project_card_fields),
        TYPE("Project", GQL_OBJECT, "Node", project_fields),
        TYPE("ProjectColumn", GQL_OBJECT, "Node", project_fields),
        CONNECTION_TYPES(Issue),
        CONNECTION_TYPES(PullRequest),
        CONNECTION_TYPES(Label),
        CONNECTION_TYPES(User),
        CONNECTION_TYPES(IssueComment),
        CONNECTION_TYPES(Milestone),
        CONNECTION_TYPES(PullRequestReview),
        CONNECTION_TYPES(ReviewRequest),
        CONNECTION_TYPES(PullRequestCommit),
        CONNECTION_TYPES(StatusCheckRollupContext),
        CONNECTION_TYPES(ProjectCard),
        TYPE("CreateIssuePayload", GQL_OBJECT, NULL, create_issue_payload),
        TYPE("CloseIssuePayload", GQL_OBJECT, NULL, close_issue_payload),
        TYPE("ReopenIssuePayload", GQL_OBJECT, NULL, reopen_issue_payload),
        TYPE("AddCommentPayload", GQL_OBJECT, NULL, add_comment_payload),
        TYPE("CreatePullRequestPayload", GQL_OBJECT, NULL, create_pull_payload),
        TYPE("MergePullRequestPayload", GQL_OBJECT, NULL, merge_pull_payload),
        TYPE("CreateIssueInput", GQL_INPUT_OBJECT, NULL, create_issue_input),
        TYPE("AddCommentInput", GQL_INPUT_OBJECT, NULL, add_comment_input),
        TYPE("CloseIssueInput", GQL_INPUT_OBJECT, NULL, close_issue_input),
        TYPE("ReopenIssueInput", GQL_INPUT_OBJECT, NULL, reopen_issue_input),
        TYPE("CreatePullRequestInput", GQL_INPUT_OBJECT, NULL, create_pull_input),
        TYPE("MergePullRequestInput", GQL_INPUT_OBJECT, NULL, merge_pull_input),
        TYPE("IssueOrder", GQL_INPUT_OBJECT, NULL, issue_order_input),
        TYPE("LabelOrder", GQL_INPUT_OBJECT, NULL, label_order_input),
        TYPE("MilestoneOrder", GQL_INPUT_OBJECT, NULL, milestone_order_input),
        TYPE("IssueCommentOrder", GQL_INPUT_OBJECT, NULL, comment_order_input),
        TYPE("IssueFilters", GQL_INPUT_OBJECT, NULL, issue_filters_input),
        SCALAR("DateTime"),
        SCALAR("URI"),
        SCALAR("GitObjectID"),
        SCALAR("HTML"),
        ENUM("IssueState", "OPEN CLOSED"),
        ENUM("IssueStateReason", "REOPENED NOT_PLANNED COMPLETED"),
        ENUM("IssueClosedStateReason", "COMPLETED NOT_PLANNED"),
        ENUM("PullRequestState", "OPEN CLOSED MERGED"),
        ENUM("IssueOrderField", "CREATED_AT UPDATED_AT COMMENTS"),
        ENUM("LabelOrderField", "NAME CREATED_AT"),
        ENUM("MilestoneOrderField", "DUE_DATE CREATED_AT UPDATED_AT NUMBER"),
        ENUM("IssueCommentOrderField", "UPDATED_AT"),
        ENUM("OrderDirection", "ASC DESC"),
        ENUM("MilestoneState", "OPEN CLOSED"),
        ENUM("RepositoryVisibility", "PRIVATE PUBLIC INTERNAL"),
        ENUM("RepositoryPermission", "ADMIN MAINTAIN WRITE TRIAGE READ"),
        ENUM("PullRequestMergeMethod", "MERGE SQUASH REBASE"),
        ENUM("CommentAuthorAssociation",
             "MEMBER OWNER MANNEQUIN COLLABORATOR CONTRIBUTOR FIRST_TIME_CONTRIBUTOR "
             "FIRST_TIMER NONE"),
        ENUM("ReactionContent", "THUMBS_UP THUMBS_DOWN LAUGH HOORAY CONFUSED HEART ROCKET EYES"),
        ENUM("MergeableState", "MERGEABLE CONFLICTING UNKNOWN"),
        ENUM("MergeStateStatus", "DIRTY UNKNOWN BLOCKED BEHIND DRAFT UNSTABLE HAS_HOOKS CLEAN"),
        ENUM("PullRequestReviewDecision", "CHANGES_REQUESTED APPROVED REVIEW_REQUIRED"),
        ENUM("PullRequestReviewState", "PENDING COMMENTED APPROVED CHANGES_REQUESTED DISMISSED"),
        ENUM("StatusState", "EXPECTED ERROR FAILURE PENDING SUCCESS"),
        ENUM("CheckStatusState", "REQUESTED QUEUED IN_PROGRESS COMPLETED WAITING PENDING"),
        ENUM("CheckConclusionState",
             "ACTION_REQUIRED TIMED_OUT CANCELLED FAILURE SUCCESS NEUTRAL SKIPPED "
             "STARTUP_FAILURE STALE"),
        ENUM("ProjectCardArchivedState", "ARCHIVED NOT_ARCHIVED"),
};

static const GqlSchema github_schema = {
        .types = github_types,
        .n_types = ELEMENTSOF(github_types),
        .query = "Query",
        .mutation = "Mutation",
};

/*
 * POST /graphql: GitHub's GraphQL API
 * (https://docs.github.com/graphql/guides/forming-calls-with-graphql). Always 200 with {data,
 * errors} as GitHub answers, a body that is not a request included
 * ({"errors": [{"message": "Problems parsing JSON"}]}).
 */
int gh_act_graphql(TwinCall *c, TwinReply *rp)
{
        _cleanup_json_ json_t *mutations = json_array();
        if (!mutations)
                return -ENOMEM;
        Gx g = {.c = c, .mutations = mutations};
        const char *body = c->request ? c->request->body : NULL;
        size_t len = c->request ? c->request->body_len : 0;
        _cleanup_free_ char *dumped = NULL;
        if (!c->request) { /* not over MCP: the surface does not list it; a direct call */
                dumped = json_dumps(c->args, JSON_COMPACT);
                body = dumped;
                len = dumped ? strlen(dumped) : 0;
        }
        json_t *resp = NULL;
        int r = gql_execute(&github_schema, body, len, &g, &resp);
        if (r < 0)
                return r;
        if ((r = twin_reply_body(rp, 200, resp)) < 0)
                return r;
        if (g.last_tool) {
                free(rp->tool);
                if (!(rp->tool = strdup(g.last_tool)))
                        return -ENOMEM;
        }
        /* the last change is the call's own row; each earlier one a row ahead of it */
        return twin_reply_changes(rp, mutations, c->request);
}
