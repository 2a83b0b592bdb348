/* SPDX-License-Identifier: MIT */
/*
 * The GitHub twin's issues (https://docs.github.com/rest/issues): issues, their comments and
 * assignees, and the official MCP server's issue tools (github/github-mcp-server
 * pkg/github/issues.go: issue_read, issue_write, list_issues, create_issue,
 * add_issue_comment).
 *
 * As on github.com every pull request is an issue: the issues routes list pull requests
 * (with a pull_request member), read them, edit them (closing one closes the pull request)
 * and comment on them (the pull request's conversation). The MCP list_issues is GraphQL's
 * Repository.issues on github.com, which holds issues only: so does it here.
 *
 * One action per tool: the REST route doing what a tool does names that tool (POST
 * .../issues is create_issue, PATCH .../issues/{n} is issue_write {method: update}); over MCP
 * issue_write {method: create} makes the same world change as create_issue and its tape row
 * says issue_write, the tool the caller named.
 */
#include <ctype.h>
#include <strings.h>
#include <time.h>

#include "common/json-util.h"
#include "pods/github/github.h"

/* ------------------------------------------------------------------ helpers */

/* Go's omitempty, as the official server's Minimal* types marshal. Takes v. */
static int put_omitempty(json_t *o, const char *key, json_t *v)
{
        if (!v)
                return -ENOMEM;
        bool empty = json_is_null(v) || json_is_false(v) ||
                     (json_is_string(v) && json_string_length(v) == 0) ||
                     (json_is_integer(v) && json_integer_value(v) == 0) ||
                     (json_is_array(v) && json_array_size(v) == 0);
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

/* MinimalUser {login, id, profile_url, avatar_url} of a rendered user, or null. */
static json_t *mcp_user(const json_t *u)
{
        if (!json_is_object(u))
                return json_null();
        _cleanup_json_ json_t *o = json_pack("{s:O}", "login", json_object_get(u, "login"));
        if (!o || put_omitempty(o, "id", get_or_null(u, "id")) < 0 ||
            put_omitempty(o, "profile_url", get_or_null(u, "html_url")) < 0 ||
            put_omitempty(o, "avatar_url", get_or_null(u, "avatar_url")) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* The values of member key of each object of array a (names of labels, logins). */
static json_t *members_of(const json_t *a, const char *key)
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

/*
 * The official server's MinimalIssue (convertToMinimalIssue) of a rendered REST issue: what
 * issue_read {method: get} answers. New reference, NULL on OOM.
 */
json_t *gh_mcp_issue(const json_t *issue)
{
        static const char *const plain[] = {"title", "body",   "state",   "state_reason",
                                            "draft", "locked", "html_url"};
        _cleanup_json_ json_t *o = json_pack("{s:O}", "number", json_object_get(issue, "number"));
        if (!o)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(plain); i++) {
                json_t *v = get_or_null(issue, plain[i]);
                /* number, title and state are not omitempty */
                if (streq(plain[i], "title") || streq(plain[i], "state")) {
                        if (json_object_set_new(o, plain[i], v) < 0)
                                return NULL;
                } else if (put_omitempty(o, plain[i], v) < 0)
                        return NULL;
        }
        json_t *ms = json_object_get(issue, "milestone");
        if (put_omitempty(o, "user", mcp_user(json_object_get(issue, "user"))) < 0 ||
            put_omitempty(o, "author_association", get_or_null(issue, "author_association")) < 0 ||
            put_omitempty(o, "labels", members_of(json_object_get(issue, "labels"), "name")) < 0 ||
            json_object_set_new(o, "assignees",
                                members_of(json_object_get(issue, "assignees"), "login")) < 0 ||
            put_omitempty(o, "milestone", get_or_null(ms, "title")) < 0 ||
            put_omitempty(o, "comments", get_or_null(issue, "comments")) < 0 ||
            put_omitempty(o, "created_at", get_or_null(issue, "created_at")) < 0 ||
            put_omitempty(o, "updated_at", get_or_null(issue, "updated_at")) < 0 ||
            put_omitempty(o, "closed_at", get_or_null(issue, "closed_at")) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/*
 * Reads args[key] as an ISO 8601 time ("2026-01-02", "2026-01-02T03:04:05Z", with a
 * fraction or a ±hh:mm offset) into out as GitHub's UTC form "YYYY-MM-DDTHH:MM:SSZ", which
 * compares as a string with every time of the world. 0, -ENOENT when absent, -EINVAL.
 */
int gh_time_arg(TwinCall *c, const char *key, char out[32])
{
        const char *s;
        int r = twin_arg_str(c->args, key, &s);
        if (r < 0)
                return r;
        /* digits where digits belong: sscanf alone would take signs and spaces */
        static const char date[] = "dddd-dd-dd", clock[] = "Tdd:dd:dd";
        size_t len = strlen(s);
        for (size_t i = 0; i < sizeof(date) - 1 + (len > 10 ? sizeof(clock) - 1 : 0); i++) {
                char want = i < 10 ? date[i] : clock[i - 10];
                if (i >= len ||
                    (want == 'd' ? !isdigit((unsigned char)s[i]) : want != 'T' && s[i] != want))
                        return -EINVAL;
        }
        struct tm tm = {};
        int n = 0;
        if (sscanf(s, "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &n) != 3 || n != 10)
                return -EINVAL;
        const char *p = s + 10;
        long off = 0;
        if (*p) {
                int m = 0;
                if ((*p != 'T' && *p != 't' && *p != ' ') ||
                    sscanf(p + 1, "%2d:%2d:%2d%n", &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &m) != 3 ||
                    m != 8)
                        return -EINVAL;
                p += 9;
                if (*p == '.')
                        for (p++; isdigit((unsigned char)*p); p++)
                                ;
                if (*p == 'Z' || *p == 'z')
                        p++;
                else if (*p == '+' || *p == '-') {
                        int hh, mm, k = 0;
                        if (sscanf(p + 1, "%2d:%2d%n", &hh, &mm, &k) != 2 || k != 5)
                                return -EINVAL;
                        off = (*p == '-' ? -1 : 1) * (hh * 3600L + mm * 60L);
                        p += 6;
                } else
                        return -EINVAL;
                if (*p)
                        return -EINVAL;
        }
        if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
            tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
                return -EINVAL;
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        time_t t = timegm(&tm);
        if (t == (time_t)-1)
                return -EINVAL;
        twin_format_time((int64_t)t - off, out, 32);
        return 0;
}

/* Does text hold "@login" as a whole mention (GitHub's mentioned filter)? */
static bool text_mentions(const char *text, const char *login)
{
        size_t n = strlen(login);
        for (const char *p = text ? strchr(text, '@') : NULL; p; p = strchr(p + 1, '@')) {
                char next = p[1 + n];
                bool before_ok = p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '-');
                if (before_ok && strncasecmp(p + 1, login, n) == 0 &&
                    !(isalnum((unsigned char)next) || next == '-'))
                        return true;
        }
        return false;
}

/* Whether login is @-mentioned in the body of row or of one of its comments. */
bool gh_mentions(json_t *row, const char *login)
{
        if (text_mentions(json_get_str(row, "body"), login))
                return true;
        size_t i;
        json_t *cm;
        json_array_foreach (json_object_get(row, "comments"), i, cm) {
                if (text_mentions(json_get_str(cm, "body"), login))
                        return true;
        }
        return false;
}

/* ------------------------------------------------------------------ user, repository */

/*
 * GitHub's public-user object (https://docs.github.com/rest/users/users#get-a-user) of the
 * world's user u (borrowed): the simple user and its profile (no profile is seeded beyond name
 * and email: the rest is null, "" or 0 as on a bare github.com account). New reference, NULL on
 * OOM.
 */
/* How many repositories of the world login owns that are private (or public). */
static json_int_t owned_repos(json_t *w, const char *login, bool private)
{
        json_int_t n = 0;
        size_t i;
        json_t *r;
        json_array_foreach (json_object_get(w, "repositories"), i, r) {
                n += strcasecmp(json_get_str(r, "owner"), login) == 0 &&
                     json_is_true(json_object_get(r, "private")) == private;
        }
        return n;
}

static json_t *user_full(TwinCall *c, json_t *u)
{
        const char *login = json_get_str(u, "login");
        _cleanup_json_ json_t *body = gh_render_user(c, login);
        if (!json_is_object(body))
                return NULL;
        json_int_t repos = owned_repos(c->world, login, false);
        _cleanup_json_ json_t *more =
                json_pack("{s:O, s:O, s:n, s:s, s:n, s:n, s:n, s:n, s:I, s:i, s:i, s:i, s:s, s:s}",
                          "name", json_object_get(u, "name"), "email", json_object_get(u, "email"),
                          "company", "blog", "", "location", "hireable", "bio", "twitter_username",
                          "public_repos", repos, "public_gists", 0, "followers", 0, "following", 0,
                          "created_at", GH_SEED_TIME, "updated_at", GH_SEED_TIME);
        if (!more || json_object_update(body, more) < 0)
                return NULL;
        return TAKE_PTR(body);
}

/* GET /users/{username} (get_user): the public user, or an organisation's user view; 404 for
 * a login the world lacks, as github.com answers an unknown one. */
int gh_act_get_user(TwinCall *c, TwinReply *rp)
{
        const char *login;
        json_t *u = twin_arg_str(c->args, "username", &login) == 0 ? gh_user_find(c->world, login)
                                                                   : NULL;
        if (!u)
                return gh_not_found(rp);
        return twin_reply_body(rp, 200, user_full(c, u));
}

/* GET /orgs/{org} (get_org): https://docs.github.com/rest/orgs/orgs#get-an-organization; 404
 * for a login that is not an organisation's. */
int gh_act_get_org(TwinCall *c, TwinReply *rp)
{
        const char *login;
        json_t *u =
                twin_arg_str(c->args, "org", &login) == 0 ? gh_user_find(c->world, login) : NULL;
        if (!u || !streq_ptr(json_get_str(u, "type"), "Organization"))
                return gh_not_found(rp);
        const char *l = json_get_str(u, "login");
        json_int_t repos = owned_repos(c->world, l, false);
        _cleanup_free_ char *url = NULL, *html = NULL;
        if (asprintf(&url, "%s/orgs/%s", c->base_url, l) < 0 ||
            asprintf(&html, GH_HTML_BASE "/%s", l) < 0)
                return -ENOMEM;
        _cleanup_free_ char *repos_url = NULL, *events_url = NULL, *hooks_url = NULL,
                            *issues_url = NULL, *members_url = NULL, *public_members_url = NULL;
        if (asprintf(&repos_url, "%s/repos", url) < 0 ||
            asprintf(&events_url, "%s/events", url) < 0 ||
            asprintf(&hooks_url, "%s/hooks", url) < 0 ||
            asprintf(&issues_url, "%s/issues", url) < 0 ||
            asprintf(&members_url, "%s/members{/member}", url) < 0 ||
            asprintf(&public_members_url, "%s/public_members{/member}", url) < 0)
                return -ENOMEM;
        return twin_reply_body(
                rp, 200,
                json_pack("{s:s, s:O, s:O, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:n, s:O, s:n, "
                          "s:s, s:n, s:O, s:n, s:b, s:b, s:b, s:I, s:i, s:i, s:i, s:s, s:s, s:s, "
                          "s:s, s:n}",
                          "login", l, "id", json_object_get(u, "id"), "node_id",
                          json_object_get(u, "node_id"), "url", url, "repos_url", repos_url,
                          "events_url", events_url, "hooks_url", hooks_url, "issues_url",
                          issues_url, "members_url", members_url, "public_members_url",
                          public_members_url, "avatar_url", "", "description", "name",
                          json_object_get(u, "name") ? json_object_get(u, "name") : json_null(),
                          "company", "blog", "", "location", "email",
                          json_object_get(u, "email") ? json_object_get(u, "email") : json_null(),
                          "twitter_username", "is_verified", 0, "has_organization_projects", 1,
                          "has_repository_projects", 1, "public_repos", repos, "public_gists", 0,
                          "followers", 0, "following", 0, "html_url", html, "created_at",
                          GH_SEED_TIME, "updated_at", GH_SEED_TIME, "type", "Organization",
                          "archived_at"));
}

/*
 * GET /rate_limit (get_rate_limit): the twin limits no one, so every resource has its
 * github.com limit untouched (https://docs.github.com/rest/rate-limit); reading it does not
 * count, as on github.com.
 */
int gh_act_get_rate_limit(TwinCall *c, TwinReply *rp)
{
        static const struct {
                const char *name;
                int limit;
        } res[] = {{"core", 5000},
                   {"search", 30},
                   {"graphql", 5000},
                   {"integration_manifest", 5000},
                   {"code_search", 10}};
        json_int_t reset = (json_int_t)c->now + 3600;
        _cleanup_json_ json_t *resources = json_object();
        if (!resources)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(res); i++)
                if (json_object_set_new(resources, res[i].name,
                                        json_pack("{s:i, s:i, s:I, s:i, s:s}", "limit",
                                                  res[i].limit, "remaining", res[i].limit, "reset",
                                                  reset, "used", 0, "resource", res[i].name)) < 0)
                        return -ENOMEM;
        return twin_reply_body(rp, 200,
                               json_pack("{s:O, s:O}", "resources", resources, "rate",
                                         json_object_get(resources, "core")));
}

int gh_act_get_me(TwinCall *c, TwinReply *rp)
{
        const char *viewer = json_get_str(c->world, "viewer");
        json_t *u = viewer ? gh_user_find(c->world, viewer) : NULL;
        if (!u)
                return gh_not_found(rp);
        _cleanup_json_ json_t *body = user_full(c, u);
        if (!body)
                return -ENOMEM;
        /* the private-user object adds what only its owner sees */
        json_int_t private = owned_repos(c->world, viewer, true);
        _cleanup_json_ json_t *more =
                json_pack("{s:I, s:I, s:i, s:i, s:i, s:b}", "total_private_repos", private,
                          "owned_private_repos", private, "private_gists", 0, "disk_usage", 0,
                          "collaborators", 0, "two_factor_authentication", 0);
        if (!more || json_object_update(body, more) < 0)
                return -ENOMEM;
        if (c->request)
                return twin_reply_body(rp, 200, TAKE_PTR(body));
        /* MCP: the official get_me's MinimalUser with details (its outputSchema) */
        _cleanup_json_ json_t *details = json_object(), *out = mcp_user(body);
        static const char *const keys[] = {"name",         "email",      "company",   "blog",
                                           "location",     "bio",        "followers", "following",
                                           "public_repos", "created_at", "updated_at"};
        if (!details || !out)
                return -ENOMEM;
        for (size_t k = 0; k < ELEMENTSOF(keys); k++) {
                json_t *v = get_or_null(body, keys[k]);
                bool required = json_is_integer(v) || streq(keys[k], "created_at") ||
                                streq(keys[k], "updated_at");
                if (required ? json_object_set_new(details, keys[k], v) < 0
                             : put_omitempty(details, keys[k], v) < 0)
                        return -ENOMEM;
        }
        if (json_object_set_new(details, "public_gists", json_integer(0)) < 0 ||
            json_object_set(out, "details", details) < 0)
                return -ENOMEM;
        return twin_reply_body(rp, 200, TAKE_PTR(out));
}

int gh_act_get_repository(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        return twin_reply_body(rp, 200, gh_render_repo_full(c, repo));
}

/* ------------------------------------------------------------------ list */

/* v as the string a query parameter would have carried (new reference, NULL on OOM). */
static json_t *json_dumps_string(const json_t *v)
{
        _cleanup_free_ char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        return s ? json_string(s) : NULL;
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

/* The REST list's filters (GET /repos/{owner}/{repo}/issues query parameters). */
typedef struct IssueFilter {
        const char *state;     /* open, closed, all */
        json_t *labels;        /* all must be on the issue (REST) */
        bool any_label;        /* one of labels suffices (GraphQL's labels argument) */
        const char *assignee;  /* login, "none", "*" */
        const char *creator;   /* login */
        const char *mentioned; /* login */
        const char *milestone; /* number, "none", "*" */
        const char *since;     /* updated at or after, GitHub's UTC form */
} IssueFilter;

static bool issue_matches(json_t *issue, const IssueFilter *f)
{
        if (!streq(f->state, "all") && !streq_ptr(json_get_str(issue, "state"), f->state))
                return false;
        size_t i;
        json_t *l;
        bool any = json_array_size(f->labels) == 0;
        json_array_foreach (f->labels, i, l) {
                bool has = gh_strv_has(json_object_get(issue, "labels"), json_string_value(l));
                if (!has && !f->any_label)
                        return false;
                any = any || has;
        }
        if (!any)
                return false;
        json_t *assignees = json_object_get(issue, "assignees");
        if (f->assignee) {
                if (streq(f->assignee, "none") ? json_array_size(assignees) > 0
                    : streq(f->assignee, "*")  ? json_array_size(assignees) == 0
                                               : !gh_strv_has(assignees, f->assignee))
                        return false;
        }
        if (f->creator && strcasecmp(strempty(json_get_str(issue, "user")), f->creator) != 0)
                return false;
        if (f->mentioned && !gh_mentions(issue, f->mentioned))
                return false;
        json_t *ms = json_object_get(issue, "milestone");
        if (f->milestone) {
                bool has = json_is_integer(ms);
                if (streq(f->milestone, "none") ? has
                    : streq(f->milestone, "*")
                            ? !has
                            : !(has && json_integer_value(ms) == strtoll(f->milestone, NULL, 10)))
                        return false;
        }
        if (f->since && strcmp(strempty(json_get_str(issue, "updated_at")), f->since) < 0)
                return false;
        return true;
}

/* The rows of repo (issues, and pull requests when pulls) matching f, sorted (new array). */
static json_t *issues_select(json_t *repo, const IssueFilter *f, bool pulls, const char *sort,
                             bool desc)
{
        const char *lists[] = {"issues", "pull_requests"};
        size_t cap = json_array_size(json_object_get(repo, "issues")) +
                     json_array_size(json_object_get(repo, "pull_requests")) + 1;
        _cleanup_free_ json_t **v = calloc(cap, sizeof(json_t *));
        if (!v)
                return NULL;
        size_t n = 0, i;
        json_t *issue;
        for (size_t k = 0; k < (pulls ? 2u : 1u); k++)
                json_array_foreach (json_object_get(repo, lists[k]), i, issue) {
                        if (issue_matches(issue, f))
                                v[n++] = issue;
                }
        IssueOrder order = {.key = streq(sort, "created")   ? "created_at"
                                   : streq(sort, "updated") ? "updated_at"
                                                            : NULL,
                            .desc = desc};
        qsort_r(v, n, sizeof(json_t *), issue_cmp, &order);
        _cleanup_json_ json_t *all = json_array();
        if (!all)
                return NULL;
        for (i = 0; i < n; i++)
                if (json_array_append(all, v[i]) < 0)
                        return NULL;
        return TAKE_PTR(all);
}

/* Where an MCP list_issues page starts: after the cursor's position (base64 "cursor:<n>"). */
static int cursor_decode(const char *s, int64_t *ret)
{
        _cleanup_free_ char *raw = NULL;
        if (twin_base64_decode(s, &raw) < 0 || strncmp(raw, "cursor:", 7) != 0)
                return -EINVAL;
        json_t *tmp = json_pack("{s:s}", "n", raw + 7);
        int r = tmp ? twin_arg_int(tmp, "n", 1, INT32_MAX, ret) : -ENOMEM;
        json_decref(tmp);
        return r;
}

static json_t *cursor_encode(size_t position)
{
        char raw[32];
        int n = snprintf(raw, sizeof(raw), "cursor:%zu", position);
        _cleanup_free_ char *b = twin_base64(raw, (size_t)n);
        return b ? json_string(b) : NULL;
}

/* A tool error whose text is message, as the official server's NewToolResultError. */
static int tool_error(TwinReply *rp, const char *message)
{
        return twin_reply_body(rp, 422,
                               json_pack("{s:s, s:s, s:s}", "message", message, "documentation_url",
                                         GH_DOCS_URL, "status", "422"));
}

/*
 * MCP list_issues: GraphQL Repository.issues (issues only) with states OPEN/CLOSED (both when
 * absent), labels (any of them), orderBy/direction, since, first (perPage, default 30) and
 * after (a cursor), answered as the official server's MinimalIssuesResponse {issues,
 * totalCount, pageInfo}.
 */
static int list_issues_mcp(TwinCall *c, TwinReply *rp, json_t *repo)
{
        IssueFilter f = {.state = "all"};
        const char *state = NULL, *order_by = "CREATED_AT", *direction = "DESC", *after = NULL;
        if (twin_arg_str(c->args, "state", &state) == -EINVAL ||
            twin_arg_str(c->args, "orderBy", &order_by) == -EINVAL ||
            twin_arg_str(c->args, "direction", &direction) == -EINVAL ||
            twin_arg_str(c->args, "after", &after) == -EINVAL)
                return tool_error(rp, "state, orderBy, direction and after must be strings");
        if (state && strcasecmp(state, "open") == 0)
                f.state = "open";
        else if (state && strcasecmp(state, "closed") == 0)
                f.state = "closed";
        const char *sort = strcasecmp(order_by, "UPDATED_AT") == 0 ? "updated"
                           : strcasecmp(order_by, "COMMENTS") == 0 ? "comments"
                                                                   : "created";
        bool desc = strcasecmp(direction, "ASC") != 0;
        if (json_object_get(c->args, "page"))
                return tool_error(rp, "This tool uses cursor-based pagination. Use the 'after' "
                                      "parameter with the 'endCursor' value from the previous "
                                      "response instead of 'page'.");
        _cleanup_json_ json_t *labels = NULL;
        int r = gh_arg_label_names(c, "labels", &labels);
        if (r < 0)
                return r;
        if (r == 2)
                return tool_error(rp, "parameter labels is not of type []string");
        f.labels = labels;
        f.any_label = true;
        char since[32];
        r = gh_time_arg(c, "since", since);
        if (r == -EINVAL) {
                const char *s = "";
                (void)twin_arg_str(c->args, "since", &s);
                _cleanup_free_ char *m = NULL;
                if (asprintf(&m,
                             "failed to list issues: invalid ISO 8601 timestamp: %s (supported "
                             "formats: YYYY-MM-DDThh:mm:ssZ or YYYY-MM-DD)",
                             s) < 0)
                        return -ENOMEM;
                return tool_error(rp, m);
        }
        f.since = r == 0 ? since : NULL;
        json_t *ff = json_object_get(c->args, "field_filters");
        if (json_array_size(ff) > 0) {
                /* no repository here defines custom issue fields */
                _cleanup_free_ char *m = NULL;
                const char *name = json_get_str(json_array_get(ff, 0), "field_name");
                if (asprintf(&m, "field_filters: unknown field \"%s\". Known fields: ",
                             strempty(name)) < 0)
                        return -ENOMEM;
                return tool_error(rp, m);
        }
        int64_t first = 30, start = 0;
        if (json_object_get(c->args, "perPage") &&
            twin_arg_int(c->args, "perPage", 1, 100, &first) < 0)
                return tool_error(rp, "perPage must be between 1 and 100");
        if (after && after[0] && cursor_decode(after, &start) < 0) {
                _cleanup_free_ char *m = NULL;
                if (asprintf(&m,
                             "failed to list issues: `%s` does not appear to be a valid cursor.",
                             after) < 0)
                        return -ENOMEM;
                return tool_error(rp, m);
        }

        _cleanup_json_ json_t *all = issues_select(repo, &f, false, sort, desc),
                              *issues = json_array();
        if (!all || !issues)
                return -ENOMEM;
        size_t total = json_array_size(all), from = (size_t)start;
        for (size_t i = from; i < total && i < from + (size_t)first; i++) {
                json_t *row = json_array_get(all, i);
                json_t *user = json_pack("{s:s}", "login", strempty(json_get_str(row, "user")));
                json_t *st = json_string(streq_ptr(json_get_str(row, "state"), "open") ? "OPEN"
                                                                                       : "CLOSED");
                _cleanup_json_ json_t *o =
                        json_pack("{s:O, s:O}", "number", json_object_get(row, "number"), "title",
                                  json_object_get(row, "title"));
                if (!o || put_omitempty(o, "body", get_or_null(row, "body")) < 0 ||
                    json_object_set_new(o, "state", st) < 0 ||
                    put_omitempty(o, "comments",
                                  json_integer((json_int_t)json_array_size(
                                          json_object_get(row, "comments")))) < 0 ||
                    json_object_set(o, "created_at", json_object_get(row, "created_at")) < 0 ||
                    json_object_set(o, "updated_at", json_object_get(row, "updated_at")) < 0 ||
                    json_object_set_new(o, "user", user) < 0 ||
                    put_omitempty(o, "labels", json_deep_copy(json_object_get(row, "labels"))) <
                            0 ||
                    json_object_set_new(o, "assignees",
                                        json_deep_copy(json_object_get(row, "assignees"))) < 0)
                        return -ENOMEM;
                if (json_array_append_new(issues, gh_pick_fields(c, json_incref(o))) < 0)
                        return -ENOMEM;
        }
        size_t shown = json_array_size(issues);
        json_t *startc = shown ? cursor_encode(from + 1) : json_string("");
        json_t *endc = shown ? cursor_encode(from + shown) : json_string("");
        return twin_reply_body(rp, 200,
                               json_pack("{s:O, s:I, s:{s:b, s:b, s:o, s:o}}", "issues", issues,
                                         "totalCount", (json_int_t)total, "pageInfo", "hasNextPage",
                                         from + shown<total, "hasPreviousPage", from> 0,
                                         "startCursor", startc, "endCursor", endc));
}

/*
 * GET /repos/{owner}/{repo}/issues (https://docs.github.com/rest/issues/issues#list-repository-
 * issues): issues and pull requests, filtered by milestone (number, "*", "none"), state,
 * assignee (login, "*", "none"), creator, mentioned, labels (all of them), since; sorted by
 * created, updated or comments; Link pages. Over MCP: list_issues_mcp.
 */
int gh_act_list_issues(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        if (!c->request)
                return list_issues_mcp(c, rp, repo);

        IssueFilter f = {.state = "open"};
        const char *sort = "created", *direction = "desc";
        if (twin_arg_str(c->args, "state", &f.state) == -EINVAL ||
            (!streq(f.state, "open") && !streq(f.state, "closed") && !streq(f.state, "all")))
                return gh_invalid(rp, "Issue", "state", "invalid");
        if (twin_arg_str(c->args, "sort", &sort) == -EINVAL ||
            (!streq(sort, "created") && !streq(sort, "updated") && !streq(sort, "comments")))
                return gh_invalid(rp, "Issue", "sort", "invalid");
        if (twin_arg_str(c->args, "direction", &direction) == -EINVAL ||
            (!streq(direction, "asc") && !streq(direction, "desc")))
                return gh_invalid(rp, "Issue", "direction", "invalid");
        if (twin_arg_str(c->args, "assignee", &f.assignee) == -EINVAL)
                return gh_invalid(rp, "Issue", "assignee", "invalid");
        if (twin_arg_str(c->args, "creator", &f.creator) == -EINVAL)
                return gh_invalid(rp, "Issue", "creator", "invalid");
        if (twin_arg_str(c->args, "mentioned", &f.mentioned) == -EINVAL)
                return gh_invalid(rp, "Issue", "mentioned", "invalid");
        char since[32];
        r = gh_time_arg(c, "since", since);
        if (r == -EINVAL)
                return gh_invalid(rp, "Issue", "since", "invalid");
        f.since = r == 0 ? since : NULL;
        json_t *ms = json_object_get(c->args, "milestone");
        char msbuf[32];
        if (ms && !json_is_null(ms)) {
                int64_t n;
                if (json_is_string(ms) &&
                    (streq(json_string_value(ms), "*") || streq(json_string_value(ms), "none")))
                        f.milestone = json_string_value(ms);
                else if (twin_arg_int(c->args, "milestone", 1, INT32_MAX, &n) == 0 &&
                         gh_number_find(repo, "milestones", n, NULL)) {
                        snprintf(msbuf, sizeof(msbuf), "%lld", (long long)n);
                        f.milestone = msbuf;
                } else {
                        /* github.com: 422 naming the value, for junk and unknown numbers
                         * alike (github3.py issue #406 shows the body) */
                        _cleanup_json_ json_t *value =
                                json_is_string(ms) ? json_incref(ms) : json_dumps_string(ms);
                        return twin_reply_body(
                                rp, 422,
                                json_pack("{s:s, s:[{s:O?, s:s, s:s, s:s}], s:s, s:s}", "message",
                                          "Validation Failed", "errors", "value", value, "resource",
                                          "Issue", "field", "milestone", "code", "invalid",
                                          "documentation_url", GH_DOCS_URL, "status", "422"));
                }
        }
        _cleanup_json_ json_t *labels = NULL;
        r = gh_arg_label_names(c, "labels", &labels);
        if (r < 0)
                return r;
        if (r == 2)
                return gh_invalid(rp, "Issue", "labels", "invalid");
        f.labels = labels;

        _cleanup_json_ json_t *all = issues_select(repo, &f, true, sort, streq(direction, "desc")),
                              *page = NULL, *body = json_array();
        if (!all || !body)
                return -ENOMEM;
        r = gh_paginate(c, rp, all, &page);
        if (r < 0)
                return r;
        size_t i;
        json_t *issue;
        json_array_foreach (page, i, issue) {
                if (json_array_append_new(body, gh_render_issue(c, repo, issue)) < 0)
                        return -ENOMEM;
        }
        return twin_reply_body(rp, 200, TAKE_PTR(body));
}

/* ------------------------------------------------------------------ read */

/* The comments of issue (or pull request) rendered, since filtered, paged (new array). */
static int issue_comments(TwinCall *c, TwinReply *rp, json_t *repo, json_t *issue, json_t **ret)
{
        char since[32];
        int r = gh_time_arg(c, "since", since);
        if (r == -EINVAL)
                return gh_invalid(rp, "IssueComment", "since", "invalid");
        _cleanup_json_ json_t *all = json_array(), *page = NULL, *out = json_array();
        if (!all || !out)
                return -ENOMEM;
        size_t i;
        json_t *cm;
        json_array_foreach (json_object_get(issue, "comments"), i, cm) {
                if ((r != 0 || strcmp(strempty(json_get_str(cm, "updated_at")), since) >= 0) &&
                    json_array_append(all, cm) < 0)
                        return -ENOMEM;
        }
        if ((r = gh_paginate(c, rp, all, &page)) < 0)
                return r;
        json_array_foreach (page, i, cm) {
                if (json_array_append_new(out, gh_render_comment(c, repo, issue, cm)) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(out);
        return 1;
}

/*
 * issue_read {method}: get (GET .../issues/{n}), get_comments (GET .../issues/{n}/comments),
 * get_labels (GET .../issues/{n}/labels), get_sub_issues (GET .../issues/{n}/sub_issues).
 * REST answers github.com's bodies; MCP the official server's (MinimalIssue,
 * MinimalIssueComment[], {labels, totalCount}, the sub-issues array).
 */
int gh_act_issue_read(TwinCall *c, TwinReply *rp)
{
        const char *method = NULL;
        bool mcp = !c->request;
        int r = twin_arg_str(c->args, "method", &method);
        if (r < 0)
                return mcp ? tool_error(rp, "missing required parameter: method")
                           : gh_invalid(rp, "Issue", "method", "missing_field");
        if (!streq(method, "get") && !streq(method, "get_comments") &&
            !streq(method, "get_labels") && !streq(method, "get_sub_issues")) {
                _cleanup_free_ char *m = NULL;
                if (asprintf(&m, "unknown method: %s", method) < 0)
                        return -ENOMEM;
                return tool_error(rp, m);
        }
        json_t *repo, *issue;
        r = gh_arg_repo_issue(c, rp, &repo, &issue, NULL);
        if (r <= 0)
                return r;
        if (streq(method, "get")) {
                _cleanup_json_ json_t *body = gh_render_issue_full(c, repo, issue);
                if (!body)
                        return -ENOMEM;
                return twin_reply_body(rp, 200, mcp ? gh_mcp_issue(body) : json_incref(body));
        }
        if (streq(method, "get_comments")) {
                _cleanup_json_ json_t *page = NULL;
                if ((r = issue_comments(c, rp, repo, issue, &page)) <= 0)
                        return r;
                return twin_reply_body(rp, 200,
                                       mcp ? gh_mcp_issue_comments(page) : json_incref(page));
        }
        if (streq(method, "get_labels")) {
                if (!mcp)
                        return gh_reply_issue_labels(c, rp, repo, issue);
                /* the official server reads them over GraphQL: node ids, no urls */
                _cleanup_json_ json_t *labels = json_array();
                size_t i;
                json_t *n;
                if (!labels)
                        return -ENOMEM;
                json_array_foreach (json_object_get(issue, "labels"), i, n) {
                        json_t *l = gh_label_find(repo, json_string_value(n));
                        json_t *d = json_object_get(l, "description");
                        if (json_array_append_new(
                                    labels,
                                    json_pack("{s:O, s:O, s:O, s:s}", "id",
                                              json_object_get(l, "node_id"), "name",
                                              json_object_get(l, "name"), "color",
                                              json_object_get(l, "color"), "description",
                                              json_is_string(d) ? json_string_value(d) : "")) < 0)
                                return -ENOMEM;
                }
                return twin_reply_body(rp, 200,
                                       json_pack("{s:O, s:I}", "labels", labels, "totalCount",
                                                 (json_int_t)json_array_size(labels)));
        }
        /* get_sub_issues: the world has no sub-issue hierarchy, every issue has none */
        return twin_reply_body(rp, 200, json_array());
}

/* ------------------------------------------------------------------ write */

/*
 * The writable fields shared by create and update, applied to row. Everything is validated
 * before anything is applied (labels may be created in the repository), so a 422 leaves the
 * world as it was. Returns 1 when applied, 0 when rp holds a 422, negative errno.
 */
static int apply_fields(TwinCall *c, TwinReply *rp, json_t *repo, json_t *row)
{
        const char *title = NULL;
        int r = twin_arg_str(c->args, "title", &title);
        if (r == -EINVAL || (r == 0 && !title[0]))
                return gh_invalid(rp, "Issue", "title", r == 0 ? "missing_field" : "invalid");
        if (title && (r = gh_pulls_too_long(rp, "Issue", "title", title, GH_PR_TITLE_MAX)) != 0)
                return r < 0 ? r : 0;

        json_t *body = json_object_get(c->args, "body");
        if (body && !json_is_string(body) && !json_is_null(body))
                return gh_invalid(rp, "Issue", "body", "invalid");
        if (json_is_string(body) &&
            (r = gh_pulls_too_long(rp, "Issue", "body", json_string_value(body), GH_PR_BODY_MAX)) !=
                    0)
                return r < 0 ? r : 0;

        _cleanup_json_ json_t *names = NULL;
        /* an issue's labels are an array: a string is refused, as GitHub's schema does */
        r = json_is_string(json_object_get(c->args, "labels"))
                    ? 2
                    : gh_arg_label_names(c, "labels", &names);
        if (r < 0)
                return r;
        if (r == 2)
                return gh_invalid(rp, "Issue", "labels", "invalid");

        _cleanup_json_ json_t *assignees = NULL;
        const char *bad;
        r = gh_arg_assignees(c, repo, "assignees", true, &assignees, &bad);
        if (r < 0)
                return r;
        if (r == 2)
                return gh_invalid(rp, "Issue", "assignees", "invalid");
        if (r == 3)
                return gh_invalid_value(rp, "Issue", "assignees", "invalid", bad);
        json_t *one = json_object_get(c->args, "assignee");
        if (one && !json_is_string(one) && !json_is_null(one))
                return gh_invalid(rp, "Issue", "assignee", "invalid");
        if (one && !assignees) {
                /* the legacy single "assignee": null clears, a login replaces */
                json_t *u =
                        json_is_string(one) ? gh_assignable(c, repo, json_string_value(one)) : NULL;
                if (json_is_string(one) && !u)
                        return gh_invalid_value(rp, "Issue", "assignee", "invalid",
                                                json_string_value(one));
                assignees = json_array();
                if (!assignees)
                        return -ENOMEM;
                if (u && json_array_append(assignees, json_object_get(u, "login")) < 0)
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

/* The answer to a write: REST the issue, MCP the official MinimalResponse {id, url}. */
static int reply_issue(TwinCall *c, TwinReply *rp, int status, json_t *repo, json_t *row)
{
        _cleanup_json_ json_t *out = gh_render_issue_full(c, repo, row);
        if (!out)
                return -ENOMEM;
        if (!c->request)
                return twin_reply_body(rp, status,
                                       gh_mcp_minimal_response(json_object_get(out, "id"),
                                                               json_get_str(out, "html_url")));
        return twin_reply_body(rp, status, TAKE_PTR(out));
}

static int issue_create(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *title;
        r = twin_arg_str(c->args, "title", &title);
        if (r < 0 || !title[0]) {
                if (!c->request)
                        return tool_error(rp, "missing required parameter: title");
                return gh_invalid(rp, "Issue", "title", r == -EINVAL ? "invalid" : "missing_field");
        }

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
        if (c->request) {
                _cleanup_free_ char *loc = NULL;
                if (asprintf(&loc, "%s/repos/%s/%s/issues/%lld", c->base_url,
                             json_get_str(repo, "owner"), json_get_str(repo, "name"),
                             (long long)json_integer_value(json_object_get(row, "number"))) < 0)
                        return -ENOMEM;
                if (twin_reply_header(rp, "Location", json_string(loc)) < 0)
                        return -ENOMEM;
        }
        return reply_issue(c, rp, 201, repo, row);
}

static int issue_update(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *issue;
        size_t idx;
        int r = gh_arg_repo_issue(c, rp, &repo, &issue, &idx);
        if (r <= 0)
                return r;
        bool pull = gh_is_pull(issue);

        const char *state = NULL, *reason = NULL;
        if (twin_arg_str(c->args, "state", &state) == -EINVAL ||
            (state && !streq(state, "open") && !streq(state, "closed")))
                return gh_invalid(rp, "Issue", "state", "invalid");
        json_t *jr = json_object_get(c->args, "state_reason");
        if (jr && !json_is_null(jr)) {
                reason = json_string_value(jr);
                if (!reason || (!streq(reason, "completed") && !streq(reason, "not_planned") &&
                                !streq(reason, "reopened") && !streq(reason, "duplicate")))
                        return gh_invalid(rp, "Issue", "state_reason", "invalid");
        }
        json_t *dup = json_object_get(c->args, "duplicate_of");
        if (dup && !json_is_null(dup)) {
                int64_t d;
                if (!streq_ptr(reason, "duplicate"))
                        return tool_error(rp, "duplicate_of can only be used when state_reason "
                                              "is 'duplicate'");
                if (twin_arg_int(c->args, "duplicate_of", 1, INT32_MAX, &d) < 0 ||
                    !(gh_number_find(repo, "issues", d, NULL) ||
                      gh_number_find(repo, "pull_requests", d, NULL)))
                        return gh_invalid(rp, "Issue", "duplicate_of", "invalid");
        } else if (!c->request && streq_ptr(state, "closed") && streq_ptr(reason, "duplicate"))
                return tool_error(rp, "duplicate_of must be provided when state_reason is "
                                      "'duplicate'");
        if (pull && streq_ptr(state, "open") && json_is_true(json_object_get(issue, "merged")))
                return gh_invalid_custom(rp, "Issue", "Cannot reopen a merged pull request.");

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
                /* closing a pull request pins the tips it showed, as pulls.c does */
                if (pull && closing && gh_pr_pin_tips(repo, next) < 0)
                        return -ENOMEM;
                const char *viewer = json_get_str(c->world, "viewer");
                if (json_object_set_new(next, "state", json_string(state)) < 0 ||
                    json_object_set_new(next, "closed_at",
                                        closing ? json_string(now) : json_null()) < 0 ||
                    json_object_set_new(next, "closed_by",
                                        closing && viewer ? json_string(viewer) : json_null()) <
                            0 ||
                    (!pull && json_object_set_new(next, "state_reason",
                                                  json_string(reason    ? reason
                                                              : closing ? "completed"
                                                                        : "reopened")) < 0))
                        return -ENOMEM;
        } else if (jr && !pull &&
                   json_object_set_new(next, "state_reason", json_string_or_null(reason)) < 0)
                return -ENOMEM;

        r = gh_issue_commit(c, rp, repo, idx, next);
        if (r < 0)
                return r;
        return reply_issue(c, rp, 200, repo, next);
}

/* POST /repos/{owner}/{repo}/issues, MCP create_issue {owner, repo, title, body}. */
int gh_act_create_issue(TwinCall *c, TwinReply *rp)
{
        return issue_create(c, rp);
}

/*
 * issue_write {method: create|update}: PATCH /repos/{owner}/{repo}/issues/{n} is update.
 * Over MCP the official server sends only what is set: an empty title or body, or milestone
 * 0, leaves the field alone.
 */
int gh_act_issue_write(TwinCall *c, TwinReply *rp)
{
        const char *method = NULL;
        if (twin_arg_str(c->args, "method", &method) < 0)
                return c->request ? gh_invalid(rp, "Issue", "method", "missing_field")
                                  : tool_error(rp, "missing required parameter: method");
        if (!streq(method, "create") && !streq(method, "update"))
                return tool_error(rp, "invalid method, must be either 'create' or 'update'");
        if (c->request)
                return streq(method, "create") ? issue_create(c, rp) : issue_update(c, rp);

        _cleanup_json_ json_t *args = json_copy(c->args);
        if (!args)
                return -ENOMEM;
        const char *v;
        if (twin_arg_str(args, "title", &v) == 0 && !v[0])
                json_object_del(args, "title");
        if (twin_arg_str(args, "body", &v) == 0 && !v[0])
                json_object_del(args, "body");
        json_t *ms = json_object_get(args, "milestone");
        if (json_is_number(ms) && json_number_value(ms) == 0)
                json_object_del(args, "milestone");
        if (streq(method, "update") && !json_object_get(args, "issue_number"))
                return tool_error(rp, "missing required parameter: issue_number");
        json_t *saved = c->args;
        c->args = args;
        int r = streq(method, "create") ? issue_create(c, rp) : issue_update(c, rp);
        c->args = saved;
        return r;
}

/* ------------------------------------------------------------------ assignees */

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
                r = gh_arg_assignees(c, repo, "assignees", false, &names, NULL);
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
                        /* github.com caps an issue at 10 assignees, dropping the rest */
                        if (json_array_size(list) < 10 && json_array_append(list, n) < 0)
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
        return twin_reply_body(rp, add ? 201 : 200, gh_render_issue_full(c, repo, next));
}

int gh_act_add_issue_assignees(TwinCall *c, TwinReply *rp)
{
        return change_assignees(c, rp, true);
}

int gh_act_remove_issue_assignees(TwinCall *c, TwinReply *rp)
{
        return change_assignees(c, rp, false);
}

static int login_cmp(const void *a, const void *b)
{
        return strcasecmp(json_string_value(*(json_t *const *)a),
                          json_string_value(*(json_t *const *)b));
}

/*
 * GET /repos/{owner}/{repo}/assignees (https://docs.github.com/rest/issues/assignees): the
 * users who may be assigned, by login, Link pages.
 */
int gh_act_list_assignees(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *logins = json_array(), *page = NULL, *out = json_array();
        if (!logins || !out)
                return -ENOMEM;
        json_t *owner = gh_assignable(c, repo, json_get_str(repo, "owner"));
        if (owner && json_array_append(logins, json_object_get(owner, "login")) < 0)
                return -ENOMEM;
        size_t i;
        json_t *l;
        json_array_foreach (json_object_get(repo, "collaborators"), i, l) {
                json_t *u = gh_assignable(c, repo, json_string_value(l));
                if (u && !gh_strv_has(logins, json_get_str(u, "login")) &&
                    json_array_append(logins, json_object_get(u, "login")) < 0)
                        return -ENOMEM;
        }
        size_t n = json_array_size(logins);
        _cleanup_free_ json_t **v = calloc(n + 1, sizeof(json_t *));
        if (!v)
                return -ENOMEM;
        for (i = 0; i < n; i++)
                v[i] = json_array_get(logins, i);
        qsort(v, n, sizeof(json_t *), login_cmp);
        _cleanup_json_ json_t *sorted = json_array();
        if (!sorted)
                return -ENOMEM;
        for (i = 0; i < n; i++)
                if (json_array_append(sorted, v[i]) < 0)
                        return -ENOMEM;
        if ((r = gh_paginate(c, rp, sorted, &page)) < 0)
                return r;
        json_array_foreach (page, i, l) {
                if (json_array_append_new(out, gh_render_user(c, json_string_value(l))) < 0)
                        return -ENOMEM;
        }
        return twin_reply_body(rp, 200, TAKE_PTR(out));
}

/* GET /repos/{owner}/{repo}/assignees/{assignee}: 204 when assignable, else 404. */
int gh_act_check_user_can_be_assigned(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *login = NULL;
        (void)twin_arg_str(c->args, "assignee", &login);
        if (!gh_assignable(c, repo, login))
                return gh_not_found(rp);
        twin_reply_json(rp, 204, NULL);
        return 0;
}

/* ------------------------------------------------------------------ comments */

static const char *const reactions[] = {"+1",    "-1",     "laugh",  "confused",
                                        "heart", "hooray", "rocket", "eyes"};

/*
 * POST /repos/{owner}/{repo}/issues/{n}/comments, MCP add_issue_comment {body, reaction}: a
 * comment on an issue or on a pull request's conversation. Over MCP the answer is the
 * official server's MinimalResponse; a reaction is recorded on the issue row (reactions[]).
 */
int gh_act_add_issue_comment(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *issue;
        bool mcp = !c->request;
        const char *body = NULL, *reaction = NULL;
        int rb = twin_arg_str(c->args, "body", &body),
            rr = mcp ? twin_arg_str(c->args, "reaction", &reaction) : -ENOENT;
        if (mcp && rb == -ENOENT && rr == -ENOENT)
                return tool_error(rp, "at least one of body or reaction is required");
        if (mcp && rb == 0 && !body[0])
                return tool_error(rp, "body cannot be empty when provided");
        if (mcp && rr == -EINVAL)
                return tool_error(rp, "parameter reaction is not of type string");
        bool known = false;
        for (size_t i = 0; reaction && i < ELEMENTSOF(reactions); i++)
                known = known || streq(reactions[i], reaction);
        if (reaction && !known)
                return gh_invalid(rp, "Reaction", "content", "invalid");
        int r = gh_arg_repo_issue(c, rp, &repo, &issue, NULL);
        if (r <= 0)
                return r;
        if (!mcp && (rb < 0 || !body[0]))
                return gh_invalid(rp, "IssueComment", "body",
                                  rb == -EINVAL ? "invalid" : "missing_field");
        if (body && (r = gh_pulls_too_long(rp, "IssueComment", "body", body, GH_PR_BODY_MAX)) != 0)
                return r < 0 ? r : 0;

        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        const char *viewer = json_get_str(c->world, "viewer");
        _cleanup_json_ json_t *comment = NULL, *react = NULL, *out = NULL;
        if (body) {
                int64_t id = gh_alloc_id(c->world);
                comment = json_pack("{s:I, s:o, s:s, s:s, s:s, s:s}", "id", (json_int_t)id,
                                    "node_id", gh_node_id("IssueComment", id), "body", body, "user",
                                    viewer, "created_at", now, "updated_at", now);
                if (!comment ||
                    json_array_append(json_object_get(issue, "comments"), comment) < 0 ||
                    json_object_set_new(issue, "updated_at", json_string(now)) < 0)
                        return -ENOMEM;
                if ((r = twin_reply_mutation(rp, NULL, comment)) < 0)
                        return r;
                out = gh_render_comment(c, repo, issue, comment);
                if (!out)
                        return -ENOMEM;
        }
        if (reaction) {
                int64_t id = gh_alloc_id(c->world);
                json_t *list = json_object_get(issue, "reactions");
                if (!list && (json_object_set_new(issue, "reactions", json_array()) < 0 ||
                              !(list = json_object_get(issue, "reactions"))))
                        return -ENOMEM;
                react = json_pack("{s:I, s:o, s:s, s:s, s:s}", "id", (json_int_t)id, "node_id",
                                  gh_node_id("Reaction", id), "content", reaction, "user", viewer,
                                  "created_at", now);
                if (!react || json_array_append(list, react) < 0)
                        return -ENOMEM;
                if (!comment && (r = twin_reply_mutation(rp, NULL, react)) < 0)
                        return r;
        }
        if (!mcp)
                return twin_reply_body(rp, 201, TAKE_PTR(out));
        _cleanup_json_ json_t *cres = NULL, *rres = NULL;
        if (out && !(cres = gh_mcp_minimal_response(json_object_get(out, "id"),
                                                    json_get_str(out, "html_url"))))
                return -ENOMEM;
        if (react) {
                _cleanup_free_ char *url = NULL;
                if (asprintf(&url, "%s/repos/%s/%s/issues/%lld/reactions/%lld", c->base_url,
                             json_get_str(repo, "owner"), json_get_str(repo, "name"),
                             (long long)json_integer_value(json_object_get(issue, "number")),
                             (long long)json_integer_value(json_object_get(react, "id"))) < 0 ||
                    !(rres = gh_mcp_minimal_response(json_object_get(react, "id"), url)))
                        return -ENOMEM;
        }
        if (cres && rres)
                return twin_reply_body(rp, 201,
                                       json_pack("{s:O, s:O}", "comment", cres, "reaction", rres));
        return twin_reply_body(rp, 201, json_incref(cres ? cres : rres));
}

/* The comment called id in repo: 1 with its issue (or pull request) row, 0 when none. */
static int comment_find(json_t *repo, int64_t id, json_t **ret_issue, json_t **ret_comment,
                        size_t *ret_idx)
{
        const char *lists[] = {"issues", "pull_requests"};
        for (size_t k = 0; k < ELEMENTSOF(lists); k++) {
                size_t i;
                json_t *x;
                json_array_foreach (json_object_get(repo, lists[k]), i, x) {
                        size_t j;
                        json_t *cm;
                        json_array_foreach (json_object_get(x, "comments"), j, cm) {
                                if (json_integer_value(json_object_get(cm, "id")) == id) {
                                        *ret_issue = x;
                                        *ret_comment = cm;
                                        *ret_idx = j;
                                        return 1;
                                }
                        }
                }
        }
        return 0;
}

/* The preamble of the one-comment routes: 1 with the rows, 0 with the 404 in rp. */
static int arg_comment(TwinCall *c, TwinReply *rp, json_t **ret_repo, json_t **ret_issue,
                       json_t **ret_comment, size_t *ret_idx)
{
        int r = gh_arg_repo(c, rp, ret_repo);
        if (r <= 0)
                return r;
        int64_t id;
        if (twin_arg_int(c->args, "comment_id", 1, INT64_MAX, &id) < 0 ||
            !comment_find(*ret_repo, id, ret_issue, ret_comment, ret_idx))
                return gh_not_found(rp);
        return 1;
}

typedef struct CommentHit {
        json_t *issue, *comment;
        const char *key; /* created_at, updated_at, or NULL for the id */
        bool desc;
} CommentHit;

static int comment_hit_cmp(const void *a, const void *b)
{
        const CommentHit *x = a, *y = b;
        int d = x->key ? strcmp(strempty(json_get_str(x->comment, x->key)),
                                strempty(json_get_str(y->comment, x->key)))
                       : 0;
        if (d == 0) {
                json_int_t ix = json_integer_value(json_object_get(x->comment, "id")),
                           iy = json_integer_value(json_object_get(y->comment, "id"));
                d = (ix > iy) - (ix < iy);
        }
        return x->desc ? -d : d;
}

/*
 * GET /repos/{owner}/{repo}/issues/comments (https://docs.github.com/rest/issues/comments#
 * list-issue-comments-for-a-repository): every issue and pull request comment, by id unless
 * sort (created, updated; direction desc by default then) says otherwise, since filtered,
 * Link pages.
 */
int gh_act_list_issue_comments_for_repo(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *sort = NULL, *direction = NULL;
        if (twin_arg_str(c->args, "sort", &sort) == -EINVAL ||
            (sort && !streq(sort, "created") && !streq(sort, "updated")))
                return gh_invalid(rp, "IssueComment", "sort", "invalid");
        if (twin_arg_str(c->args, "direction", &direction) == -EINVAL ||
            (direction && !streq(direction, "asc") && !streq(direction, "desc")))
                return gh_invalid(rp, "IssueComment", "direction", "invalid");
        char since[32];
        int rs = gh_time_arg(c, "since", since);
        if (rs == -EINVAL)
                return gh_invalid(rp, "IssueComment", "since", "invalid");

        size_t cap = 16, n = 0;
        _cleanup_free_ CommentHit *hits = malloc(cap * sizeof(CommentHit));
        if (!hits)
                return -ENOMEM;
        const char *lists[] = {"issues", "pull_requests"};
        for (size_t k = 0; k < ELEMENTSOF(lists); k++) {
                size_t i;
                json_t *x;
                json_array_foreach (json_object_get(repo, lists[k]), i, x) {
                        size_t j;
                        json_t *cm;
                        json_array_foreach (json_object_get(x, "comments"), j, cm) {
                                if (rs == 0 &&
                                    strcmp(strempty(json_get_str(cm, "updated_at")), since) < 0)
                                        continue;
                                if (n == cap) {
                                        CommentHit *w = realloc(hits, (cap *= 2) * sizeof(*w));
                                        if (!w)
                                                return -ENOMEM;
                                        hits = w;
                                }
                                hits[n++] = (CommentHit){x, cm,
                                                         !sort                    ? NULL
                                                         : streq(sort, "updated") ? "updated_at"
                                                                                  : "created_at",
                                                         /* direction needs sort (docs) */
                                                         sort && !streq_ptr(direction, "asc")};
                        }
                }
        }
        qsort(hits, n, sizeof(CommentHit), comment_hit_cmp);
        _cleanup_json_ json_t *idx = json_array(), *page = NULL, *out = json_array();
        if (!idx || !out)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (json_array_append_new(idx, json_integer((json_int_t)i)) < 0)
                        return -ENOMEM;
        if ((r = gh_paginate(c, rp, idx, &page)) < 0)
                return r;
        size_t i;
        json_t *x;
        json_array_foreach (page, i, x) {
                CommentHit *h = &hits[json_integer_value(x)];
                if (json_array_append_new(out, gh_render_comment(c, repo, h->issue, h->comment)) <
                    0)
                        return -ENOMEM;
        }
        return twin_reply_body(rp, 200, TAKE_PTR(out));
}

/* GET /repos/{owner}/{repo}/issues/comments/{comment_id}. */
int gh_act_get_issue_comment(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *issue, *cm;
        size_t idx;
        int r = arg_comment(c, rp, &repo, &issue, &cm, &idx);
        if (r <= 0)
                return r;
        return twin_reply_body(rp, 200, gh_render_comment(c, repo, issue, cm));
}

/* PATCH /repos/{owner}/{repo}/issues/comments/{comment_id} {body}. */
int gh_act_update_issue_comment(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *issue, *cm;
        size_t idx;
        int r = arg_comment(c, rp, &repo, &issue, &cm, &idx);
        if (r <= 0)
                return r;
        const char *body;
        r = twin_arg_str(c->args, "body", &body);
        if (r < 0 || !body[0])
                return gh_invalid(rp, "IssueComment", "body",
                                  r == -EINVAL ? "invalid" : "missing_field");
        if ((r = gh_pulls_too_long(rp, "IssueComment", "body", body, GH_PR_BODY_MAX)) != 0)
                return r < 0 ? r : 0;
        _cleanup_json_ json_t *before = json_deep_copy(cm);
        if (!before)
                return -ENOMEM;
        if (!streq_ptr(json_get_str(cm, "body"), body)) {
                char now[32];
                twin_format_time(c->now, now, sizeof(now));
                if (json_object_set_new(cm, "body", json_string(body)) < 0 ||
                    json_object_set_new(cm, "updated_at", json_string(now)) < 0)
                        return -ENOMEM;
                if ((r = twin_reply_mutation(rp, before, cm)) < 0)
                        return r;
        }
        return twin_reply_body(rp, 200, gh_render_comment(c, repo, issue, cm));
}

/* DELETE /repos/{owner}/{repo}/issues/comments/{comment_id}: 204. */
int gh_act_delete_issue_comment(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *issue, *cm;
        size_t idx;
        int r = arg_comment(c, rp, &repo, &issue, &cm, &idx);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *before = json_incref(cm);
        if (json_array_remove(json_object_get(issue, "comments"), idx) < 0)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, before, NULL)) < 0)
                return r;
        twin_reply_json(rp, 204, NULL);
        return 0;
}
