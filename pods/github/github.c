/* SPDX-License-Identifier: MIT */
/*
 * The GitHub twin (kind "github"): the REST v3 API (https://docs.github.com/rest) shaped
 * closely enough for @octokit/rest, and the official MCP server's tools. Issues, labels and
 * milestones are in issues.c and labels.c; pull requests in pulls.c; git data in git.c.
 *
 * The world is the normalised seed; bodies are rendered from it per call (urls point at
 * the mount's base_url, html_url at github.com as on the real service):
 *   viewer        login of the authenticated user: the seed's "viewer", else the first
 *                 seeded user of type User, else "pome-agent" (added to users)
 *   users[]       {login, id, node_id, type: User|Organization|Bot, name, email}
 *   repositories[] {id, node_id, owner (login), name, description, private, default_branch,
 *                 created_at, updated_at, collaborators[logins], labels[{id, node_id, name,
 *                 color, description, default}], milestones[{id, node_id, number, title,
 *                 description, state, due_on}], issues[], pull_requests[],
 *                 branches[], commits[], tags[], releases[] (the git data: pods/github/git.c)}
 *   issue         {id, node_id, number, title, body, state, state_reason, locked, user (login),
 *                 labels[names], assignees[logins], milestone (number|null), comments[{id,
 *                 node_id, body, user, created_at, updated_at}], created_at, updated_at, closed_at}
 *   next_id       the next numeric id (ids and node_ids are deterministic: same seed, same world)
 * Every login a seed mentions (owners, collaborators, authors, assignees) is a user of the
 * world, added in order of appearance when the seed's users[] lacks it.
 *
 * Behaviour choices, each mirroring github.com: labels named on an issue that the repository
 * lacks are created (color "ededed"); assignees who cannot be assigned (anyone but the
 * repository's owner and collaborators, and organisations) are silently dropped; a private
 * repository is a 404 to a viewer who is neither its owner nor a collaborator. There is no other
 * permission model.
 */
#include <strings.h>

#include "common/json-util.h"
#include "common/text.h"
#include "pods/github/github.h"

/* ------------------------------------------------------------------ world helpers */

json_t *gh_world_users(json_t *w)
{
        return json_object_get(w, "users");
}

json_t *gh_user_find(json_t *w, const char *login)
{
        size_t i;
        json_t *u;
        json_array_foreach (gh_world_users(w), i, u) {
                if (strcasecmp(json_get_str(u, "login"), login) == 0)
                        return u;
        }
        return NULL;
}

int64_t gh_alloc_id(json_t *w)
{
        int64_t id = json_integer_value(json_object_get(w, "next_id"));
        if (id < 1)
                id = 1;
        /* the world owns this counter so the same seed and calls give the same ids */
        json_object_set_new(w, "next_id", json_integer(id + 1));
        return id;
}

/* GitHub's legacy global node id: base64("<len(type):02>:<type><id>"), e.g. "MDU6SXNzdWUx". */
json_t *gh_node_id(const char *type, int64_t id)
{
        char raw[64];
        int n = snprintf(raw, sizeof(raw), "%02zu:%s%lld", strlen(type), type, (long long)id);
        _cleanup_free_ char *b = twin_base64(raw, (size_t)n);
        return b ? json_string(b) : NULL;
}

/* The world's user called login, added (as type) when missing. NULL on OOM. */
json_t *gh_user_ensure(json_t *w, const char *login, const char *type)
{
        json_t *u = gh_user_find(w, login);
        if (u)
                return u;
        int64_t id = gh_alloc_id(w);
        u = json_pack("{s:s, s:I, s:o, s:s, s:n, s:n}", "login", login, "id", (json_int_t)id,
                      "node_id", gh_node_id(type, id), "type", type, "name", "email");
        if (json_array_append_new(gh_world_users(w), u) < 0)
                return NULL;
        return u;
}

bool gh_login_valid(const char *s)
{
        size_t n = strlen(s);
        const char *bot = n > 5 ? s + n - 5 : NULL;
        if (bot && streq(bot, "[bot]"))
                n -= 5;
        if (n == 0 || n > 39 || s[0] == '-')
                return false;
        for (size_t i = 0; i < n; i++)
                if (!(s[i] == '-' || (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') ||
                      (s[i] >= 'A' && s[i] <= 'Z')))
                        return false;
        return true;
}

bool gh_repo_name_valid(const char *s)
{
        size_t n = strlen(s);
        return n > 0 && n <= 100 && !streq(s, ".") && !streq(s, "..") &&
               strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

json_t *gh_repo_find(json_t *w, const char *owner, const char *name)
{
        size_t i;
        json_t *r;
        json_array_foreach (json_object_get(w, "repositories"), i, r) {
                if (strcasecmp(json_get_str(r, "owner"), owner) == 0 &&
                    strcasecmp(json_get_str(r, "name"), name) == 0)
                        return r;
        }
        return NULL;
}

bool gh_strv_has(const json_t *a, const char *s)
{
        size_t i;
        json_t *v;
        json_array_foreach (a, i, v) {
                if (strcasecmp(json_string_value(v), s) == 0)
                        return true;
        }
        return false;
}

bool gh_repo_member(json_t *repo, const char *login)
{
        return strcasecmp(json_get_str(repo, "owner"), login) == 0 ||
               gh_strv_has(json_object_get(repo, "collaborators"), login);
}

json_t *gh_label_find(json_t *repo, const char *name)
{
        size_t i;
        json_t *l;
        json_array_foreach (json_object_get(repo, "labels"), i, l) {
                if (strcasecmp(json_get_str(l, "name"), name) == 0)
                        return l;
        }
        return NULL;
}

/* GitHub's colours for the labels a new repository gets. */
static const struct {
        const char *name, *color, *description;
} default_labels[] = {
        {"bug", "d73a4a", "Something isn't working"},
        {"documentation", "0075ca", "Improvements or additions to documentation"},
        {"duplicate", "cfd3d7", "This issue or pull request already exists"},
        {"enhancement", "a2eeef", "New feature or request"},
        {"good first issue", "7057ff", "Good for newcomers"},
        {"help wanted", "008672", "Extra attention is needed"},
        {"invalid", "e4e669", "This doesn't seem right"},
        {"question", "d876e3", "Further information is requested"},
        {"wontfix", "ffffff", "This will not be worked on"},
};

/* Adds label name to repo (GitHub creates labels named on issues). NULL on OOM. */
json_t *gh_label_ensure(json_t *w, json_t *repo, const char *name, const char *color,
                        const char *description, int is_default)
{
        json_t *l = gh_label_find(repo, name);
        if (l)
                return l;
        for (size_t i = 0; i < ELEMENTSOF(default_labels); i++)
                if (strcasecmp(default_labels[i].name, name) == 0) {
                        if (!color)
                                color = default_labels[i].color;
                        if (!description)
                                description = default_labels[i].description;
                        if (is_default < 0)
                                is_default = 1;
                }
        int64_t id = gh_alloc_id(w);
        l = json_pack("{s:I, s:o, s:s, s:s, s:s?, s:b}", "id", (json_int_t)id, "node_id",
                      gh_node_id("Label", id), "name", name, "color", color ? color : "ededed",
                      "description", description, "default", is_default > 0);
        if (json_array_append_new(json_object_get(repo, "labels"), l) < 0)
                return NULL;
        return l;
}

/* Largest issue or pull request number of repo (they share one sequence). */
int64_t gh_max_number(json_t *repo)
{
        int64_t m = 0;
        const char *lists[] = {"issues", "pull_requests"};
        for (size_t k = 0; k < ELEMENTSOF(lists); k++) {
                size_t i;
                json_t *x;
                json_array_foreach (json_object_get(repo, lists[k]), i, x) {
                        int64_t n = json_integer_value(json_object_get(x, "number"));
                        if (n > m)
                                m = n;
                }
        }
        return m;
}

/* Whether row (of issues[] or pull_requests[]) is a pull request: only those have a head. */
bool gh_is_pull(const json_t *row)
{
        return json_object_get(row, "head") != NULL;
}

json_t *gh_number_find(json_t *repo, const char *list, int64_t number, size_t *ret_idx)
{
        size_t i;
        json_t *x;
        json_array_foreach (json_object_get(repo, list), i, x) {
                if (json_integer_value(json_object_get(x, "number")) == number) {
                        if (ret_idx)
                                *ret_idx = i;
                        return x;
                }
        }
        return NULL;
}

/* ------------------------------------------------------------------ seed */

bool gh_time_valid(const char *s)
{
        /* the one shape GitHub emits: YYYY-MM-DDTHH:MM:SSZ */
        static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
        if (strlen(s) != sizeof(shape) - 1)
                return false;
        for (size_t i = 0; shape[i]; i++)
                if (shape[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != shape[i])
                        return false;
        return true;
}

static int seed_time(TwinSeed *s, const json_t *o, const char *key, const char *path,
                     const char *def, const char **ret)
{
        int r = twin_seed_str(s, o, key, path, def, TWIN_NULL_KEPT, ret);
        if (r < 0)
                return r;
        if (*ret && !gh_time_valid(*ret))
                return twin_seed_error(s->err, s->errlen,
                                       "%s.%s: must be a UTC time like \"2026-01-01T00:00:00Z\"",
                                       path, key);
        return 0;
}

/* A login reference (string) that becomes a user of the world. */
static int seed_login(TwinSeed *s, json_t *v, const char *path, const char **ret)
{
        if (!json_is_string(v) || !gh_login_valid(json_string_value(v)))
                return twin_seed_error(s->err, s->errlen,
                                       "%s: must be a GitHub login (letters, digits, '-')", path);
        json_t *u = gh_user_ensure(s->world, json_string_value(v), "User");
        if (!u)
                return -ENOMEM;
        *ret = json_get_str(u, "login");
        return 0;
}

/* A list of logins → new array of canonical logins, without duplicates. */
static int seed_logins(TwinSeed *s, const json_t *o, const char *key, const char *path,
                       json_t **ret)
{
        json_t *a;
        int r = twin_seed_array(s, o, key, path, &a);
        if (r < 0)
                return r;
        _cleanup_json_ json_t *out = json_array();
        if (!out)
                return -ENOMEM;
        size_t i;
        json_t *v;
        json_array_foreach (a, i, v) {
                char p[256];
                const char *login;
                snprintf(p, sizeof(p), "%s.%s[%zu]", path, key, i);
                /* collaborators may be {login, permission} objects */
                json_t *l = json_is_object(v) ? json_object_get(v, "login") : v;
                if (json_is_object(v) &&
                    (r = TWIN_SEED_KNOWN(s, v, p, "collaborator", "login", "permission")) < 0)
                        return r;
                r = seed_login(s, l, p, &login);
                if (r < 0)
                        return r;
                if (!gh_strv_has(out, login) && json_array_append_new(out, json_string(login)) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(out);
        return 0;
}

static int seed_users(TwinSeed *s, const json_t *seed)
{
        json_t *a;
        int r = twin_seed_array(s, seed, "users", "", &a);
        if (r < 0)
                return r;
        size_t i;
        json_t *v;
        json_array_foreach (a, i, v) {
                char p[64];
                snprintf(p, sizeof(p), "users[%zu]", i);
                json_t *login = json_is_object(v) ? json_object_get(v, "login") : v;
                if (!json_is_string(login) || !gh_login_valid(json_string_value(login)))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s: needs a login (letters, digits, '-')", p);
                if (gh_user_find(s->world, json_string_value(login)))
                        return twin_seed_error(s->err, s->errlen, "%s: duplicate login \"%s\"", p,
                                               json_string_value(login));
                const char *type = "User", *name = NULL, *email = NULL;
                if (json_is_object(v) &&
                    ((r = TWIN_SEED_KNOWN(s, v, p, "user", "login", "type", "name", "email")) < 0 ||
                     (r = twin_seed_str(s, v, "type", p, "User", TWIN_NULL_REFUSED, &type)) < 0 ||
                     (r = twin_seed_str(s, v, "name", p, NULL, TWIN_NULL_KEPT, &name)) < 0 ||
                     (r = twin_seed_str(s, v, "email", p, NULL, TWIN_NULL_KEPT, &email)) < 0))
                        return r;
                if (!streq(type, "User") && !streq(type, "Organization") && !streq(type, "Bot"))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.type: must be User, Organization or Bot", p);
                json_t *u = gh_user_ensure(s->world, json_string_value(login), type);
                if (!u || json_object_set_new(u, "name", json_string_or_null(name)) < 0 ||
                    json_object_set_new(u, "email", json_string_or_null(email)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int seed_viewer(TwinSeed *s, const json_t *seed)
{
        json_t *v = json_object_get(seed, "viewer");
        const char *login = NULL;
        if (v) {
                int r = seed_login(s, v, "viewer", &login);
                if (r < 0)
                        return r;
        } else {
                size_t i;
                json_t *u;
                json_array_foreach (gh_world_users(s->world), i, u) {
                        if (streq(json_get_str(u, "type"), "User")) {
                                login = json_get_str(u, "login");
                                break;
                        }
                }
                if (!login) {
                        if (!gh_user_ensure(s->world, GH_DEFAULT_USER, "User"))
                                return -ENOMEM;
                        login = GH_DEFAULT_USER;
                }
        }
        return json_object_set_new(s->world, "viewer", json_string(login)) < 0 ? -ENOMEM : 0;
}

static int seed_labels(TwinSeed *s, const json_t *r0, json_t *repo, const char *path)
{
        json_t *a;
        int r = twin_seed_array(s, r0, "labels", path, &a);
        if (r < 0)
                return r;
        size_t i;
        json_t *v;
        json_array_foreach (a, i, v) {
                char p[256];
                snprintf(p, sizeof(p), "%s.labels[%zu]", path, i);
                json_t *name = json_is_object(v) ? json_object_get(v, "name") : v;
                const char *color = NULL, *desc = NULL;
                bool def = false;
                if (!json_is_string(name) || json_string_length(name) == 0)
                        return twin_seed_error(s->err, s->errlen, "%s: needs a name", p);
                if (gh_label_find(repo, json_string_value(name)))
                        return twin_seed_error(s->err, s->errlen, "%s: duplicate label \"%s\"", p,
                                               json_string_value(name));
                if (json_is_object(v) &&
                    ((r = TWIN_SEED_KNOWN(s, v, p, "label", "name", "color", "description",
                                          "default")) < 0 ||
                     (r = twin_seed_str(s, v, "color", p, NULL, TWIN_NULL_REFUSED, &color)) < 0 ||
                     (r = twin_seed_str(s, v, "description", p, NULL, TWIN_NULL_KEPT, &desc)) < 0 ||
                     (r = twin_seed_bool(s, v, "default", p, false, &def)) < 0))
                        return r;
                if (color && color[0] == '#')
                        color++;
                if (color && (strlen(color) != 6 || strspn(color, "0123456789abcdefABCDEF") != 6))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.color: must be 6 hex digits like \"d73a4a\"", p);
                if (!gh_label_ensure(s->world, repo, json_string_value(name), color, desc,
                                     json_is_object(v) && json_object_get(v, "default") ? def : -1))
                        return -ENOMEM;
        }
        return 0;
}

static int seed_milestones(TwinSeed *s, const json_t *r0, json_t *repo, const char *path)
{
        json_t *a;
        int r = twin_seed_array(s, r0, "milestones", path, &a);
        if (r < 0)
                return r;
        json_t *out = json_object_get(repo, "milestones");
        size_t i;
        json_t *v;
        json_array_foreach (a, i, v) {
                char p[256];
                snprintf(p, sizeof(p), "%s.milestones[%zu]", path, i);
                const char *title, *desc, *state, *due;
                json_t *num = json_object_get(v, "number");
                if (!json_is_object(v))
                        return twin_seed_error(s->err, s->errlen, "%s: must be an object", p);
                if ((r = TWIN_SEED_KNOWN(s, v, p, "milestone", "number", "title", "description",
                                         "state", "due_on")) < 0 ||
                    (r = twin_seed_str(s, v, "title", p, NULL, TWIN_NULL_REFUSED, &title)) < 0 ||
                    (r = twin_seed_str(s, v, "description", p, NULL, TWIN_NULL_KEPT, &desc)) < 0 ||
                    (r = twin_seed_str(s, v, "state", p, "open", TWIN_NULL_REFUSED, &state)) < 0 ||
                    (r = seed_time(s, v, "due_on", p, NULL, &due)) < 0)
                        return r;
                if (!title || !title[0])
                        return twin_seed_error(s->err, s->errlen, "%s: needs a title", p);
                if (!streq(state, "open") && !streq(state, "closed"))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.state: must be \"open\" or \"closed\"", p);
                int64_t n = (int64_t)i + 1;
                if (num && (!json_is_integer(num) || json_integer_value(num) < 1 ||
                            json_integer_value(num) > INT32_MAX))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.number: must be a positive integer", p);
                if (num)
                        n = json_integer_value(num);
                if (gh_number_find(repo, "milestones", n, NULL))
                        return twin_seed_error(s->err, s->errlen, "%s: duplicate number %lld", p,
                                               (long long)n);
                int64_t id = gh_alloc_id(s->world);
                json_t *m = json_pack("{s:I, s:o, s:I, s:s, s:s?, s:s, s:s?}", "id", (json_int_t)id,
                                      "node_id", gh_node_id("Milestone", id), "number",
                                      (json_int_t)n, "title", title, "description", desc, "state",
                                      state, "due_on", due);
                if (json_array_append_new(out, m) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int seed_comments(TwinSeed *s, const json_t *i0, json_t *row, const char *author,
                         const char *created, const char *path)
{
        json_t *a;
        int r = twin_seed_array(s, i0, "comments", path, &a);
        if (r < 0)
                return r;
        size_t i;
        json_t *v;
        json_array_foreach (a, i, v) {
                char p[256], pu[300];
                snprintf(p, sizeof(p), "%s.comments[%zu]", path, i);
                snprintf(pu, sizeof(pu), "%s.user", p);
                const char *body, *user = author, *c_at, *u_at;
                json_t *ju = json_object_get(v, "user");
                if (json_is_string(v))
                        body = json_string_value(v);
                else if (!json_is_object(v))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s: must be an object or a string", p);
                else if ((r = TWIN_SEED_KNOWN(s, v, p, "comment", "body", "user", "created_at",
                                              "updated_at")) < 0 ||
                         (r = twin_seed_str(s, v, "body", p, NULL, TWIN_NULL_REFUSED, &body)) < 0)
                        return r;
                if (!body)
                        return twin_seed_error(s->err, s->errlen, "%s: needs a body", p);
                if (ju && (r = seed_login(s, ju, pu, &user)) < 0)
                        return r;
                if ((r = seed_time(s, v, "created_at", p, created, &c_at)) < 0 ||
                    (r = seed_time(s, v, "updated_at", p, c_at, &u_at)) < 0)
                        return r;
                int64_t id = gh_alloc_id(s->world);
                json_t *c = json_pack("{s:I, s:o, s:s, s:s, s:s, s:s}", "id", (json_int_t)id,
                                      "node_id", gh_node_id("IssueComment", id), "body", body,
                                      "user", user, "created_at", c_at ? c_at : GH_SEED_TIME,
                                      "updated_at", u_at ? u_at : GH_SEED_TIME);
                if (json_array_append_new(json_object_get(row, "comments"), c) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* One issue or pull request (is_pr) of a repository seed. */
static int seed_item(TwinSeed *s, json_t *repo, const json_t *v, const char *path, bool is_pr)
{
        int r;
        if (!json_is_object(v))
                return twin_seed_error(s->err, s->errlen, "%s: must be an object", path);
        /* a pull request's keys are checked by gh_seed_pull (pulls.c) */
        if (!is_pr && (r = TWIN_SEED_KNOWN(s, v, path, "issue", "number", "title", "body", "state",
                                           "state_reason", "locked", "user", "labels", "assignees",
                                           "assignee", "milestone", "comments", "created_at",
                                           "updated_at", "closed_at")) < 0)
                return r;

        json_t *num = json_object_get(v, "number");
        int64_t number = gh_max_number(repo) + 1;
        if (num) {
                if (!json_is_integer(num) || json_integer_value(num) < 1 ||
                    json_integer_value(num) > INT32_MAX)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.number: must be a positive integer", path);
                number = json_integer_value(num);
        }
        if (gh_number_find(repo, "issues", number, NULL) ||
            gh_number_find(repo, "pull_requests", number, NULL))
                return twin_seed_error(s->err, s->errlen,
                                       "%s.number: %lld is already used in this repository (issues "
                                       "and pull requests share numbers)",
                                       path, (long long)number);

        const char *title, *body, *state, *reason, *c_at, *u_at, *cl_at;
        bool locked = false, merged = false, draft = false;
        if ((r = twin_seed_str(s, v, "title", path, NULL, TWIN_NULL_REFUSED, &title)) < 0 ||
            (r = twin_seed_str(s, v, "body", path, NULL, TWIN_NULL_KEPT, &body)) < 0 ||
            (r = twin_seed_str(s, v, "state", path, "open", TWIN_NULL_REFUSED, &state)) < 0 ||
            (r = twin_seed_str(s, v, "state_reason", path, NULL, TWIN_NULL_KEPT, &reason)) < 0 ||
            (r = twin_seed_bool(s, v, "locked", path, false, &locked)) < 0 ||
            (r = seed_time(s, v, "created_at", path, GH_SEED_TIME, &c_at)) < 0 ||
            (r = seed_time(s, v, "updated_at", path, c_at, &u_at)) < 0 ||
            (r = seed_time(s, v, "closed_at", path, NULL, &cl_at)) < 0)
                return r;
        if (!title || !title[0])
                return twin_seed_error(s->err, s->errlen, "%s: needs a title", path);
        if (is_pr) {
                if ((r = twin_seed_bool(s, v, "merged", path, false, &merged)) < 0 ||
                    (r = twin_seed_bool(s, v, "draft", path, false, &draft)) < 0)
                        return r;
                if (streq(state, "merged")) {
                        state = "closed";
                        merged = true;
                }
        }
        if (!streq(state, "open") && !streq(state, "closed"))
                return twin_seed_error(s->err, s->errlen,
                                       "%s.state: must be \"open\" or \"closed\"%s", path,
                                       is_pr ? " (or \"merged\")" : "");
        if (reason && !streq(reason, "completed") && !streq(reason, "not_planned") &&
            !streq(reason, "reopened"))
                return twin_seed_error(
                        s->err, s->errlen,
                        "%s.state_reason: must be completed, not_planned, reopened or null", path);
        if (streq(state, "closed")) {
                if (!cl_at)
                        cl_at = u_at;
                if (!reason && !is_pr)
                        reason = "completed";
        } else
                cl_at = NULL;

        const char *user = json_get_str(s->world, "viewer");
        json_t *ju = json_object_get(v, "user");
        char p[300];
        snprintf(p, sizeof(p), "%s.user", path);
        if (ju && (r = seed_login(s, ju, p, &user)) < 0)
                return r;

        /* labels: names, or {name} objects; missing ones join the repository */
        _cleanup_json_ json_t *labels = json_array();
        json_t *la;
        if (!labels)
                return -ENOMEM;
        if ((r = twin_seed_array(s, v, "labels", path, &la)) < 0)
                return r;
        size_t i;
        json_t *l;
        json_array_foreach (la, i, l) {
                json_t *name = json_is_object(l) ? json_object_get(l, "name") : l;
                if (!json_is_string(name) || json_string_length(name) == 0)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.labels[%zu]: must be a label name", path, i);
                json_t *lab =
                        gh_label_ensure(s->world, repo, json_string_value(name), NULL, NULL, -1);
                if (!lab)
                        return -ENOMEM;
                if (!gh_strv_has(labels, json_get_str(lab, "name")) &&
                    json_array_append_new(labels, json_string(json_get_str(lab, "name"))) < 0)
                        return -ENOMEM;
        }

        _cleanup_json_ json_t *assignees = NULL;
        if ((r = seed_logins(s, v, "assignees", path, &assignees)) < 0)
                return r;
        json_t *one = json_object_get(v, "assignee");
        if (one && !json_is_null(one)) {
                const char *login;
                snprintf(p, sizeof(p), "%s.assignee", path);
                if ((r = seed_login(s, one, p, &login)) < 0)
                        return r;
                if (!gh_strv_has(assignees, login) &&
                    json_array_insert_new(assignees, 0, json_string(login)) < 0)
                        return -ENOMEM;
        }

        json_t *ms = json_object_get(v, "milestone");
        if (ms && !json_is_null(ms)) {
                /* a milestone number, or {number} as the API renders it */
                json_t *n = json_is_object(ms) ? json_object_get(ms, "number") : ms;
                if (!json_is_integer(n) ||
                    !gh_number_find(repo, "milestones", json_integer_value(n), NULL))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.milestone: must be the number of one of the "
                                               "repository's milestones",
                                               path);
                ms = n;
        } else
                ms = NULL;

        int64_t id = gh_alloc_id(s->world);
        _cleanup_json_ json_t *row = json_pack(
                "{s:I, s:o, s:I, s:s, s:s?, s:s, s:s?, s:b, s:s, s:O, s:O, s:O?, s:[], s:s, s:s, "
                "s:s?}",
                "id", (json_int_t)id, "node_id", gh_node_id(is_pr ? "PullRequest" : "Issue", id),
                "number", (json_int_t)number, "title", title, "body", body, "state", state,
                "state_reason", reason, "locked", locked, "user", user, "labels", labels,
                "assignees", assignees, "milestone", ms, "comments", "created_at", c_at,
                "updated_at", u_at, "closed_at", cl_at);
        if (!row)
                return -ENOMEM;
        if (is_pr && (r = gh_seed_pull(s, repo, v, row, path)) < 0) /* pulls.c */
                return r;
        if ((r = seed_comments(s, v, row, user, c_at, path)) < 0)
                return r;
        return json_array_append(json_object_get(repo, is_pr ? "pull_requests" : "issues"), row) < 0
                       ? -ENOMEM
                       : 0;
}

static int seed_repo(TwinSeed *s, const json_t *v, size_t idx)
{
        char path[64];
        int r;
        snprintf(path, sizeof(path), "repositories[%zu]", idx);
        if (!json_is_object(v))
                return twin_seed_error(s->err, s->errlen, "%s: must be an object", path);
        if ((r = TWIN_SEED_KNOWN(s, v, path, "repository", "owner", "name", "full_name",
                                 "description", "private", "default_branch", "created_at",
                                 "updated_at", "collaborators", "labels", "milestones", "issues",
                                 "pull_requests", "files", "branches", "tags", "releases")) < 0)
                return r;

        const char *owner = NULL, *name = NULL, *full = NULL, *desc, *branch, *c_at, *u_at;
        char split[256];
        bool priv = false;
        if ((r = twin_seed_str(s, v, "owner", path, NULL, TWIN_NULL_REFUSED, &owner)) < 0 ||
            (r = twin_seed_str(s, v, "name", path, NULL, TWIN_NULL_REFUSED, &name)) < 0 ||
            (r = twin_seed_str(s, v, "full_name", path, NULL, TWIN_NULL_REFUSED, &full)) < 0)
                return r;
        /* "full_name": "acme/api" stands for owner + name */
        if (full && (!owner || !name)) {
                const char *slash = strchr(full, '/');
                if (!slash || strlen(full) >= sizeof(split))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.full_name: must look like \"owner/name\"", path);
                memcpy(split, full, strlen(full) + 1);
                split[slash - full] = 0;
                owner = owner ? owner : split;
                name = name ? name : split + (slash - full) + 1;
        }
        if (!owner || !gh_login_valid(owner))
                return twin_seed_error(s->err, s->errlen,
                                       "%s.owner: needs the owner's login (letters, digits, '-')",
                                       path);
        if (!name || !gh_repo_name_valid(name))
                return twin_seed_error(s->err, s->errlen,
                                       "%s.name: needs a repository name (letters, digits, '.', "
                                       "'_', '-')",
                                       path);
        if (gh_repo_find(s->world, owner, name))
                return twin_seed_error(s->err, s->errlen, "%s: duplicate repository %s/%s", path,
                                       owner, name);
        if ((r = twin_seed_str(s, v, "description", path, NULL, TWIN_NULL_KEPT, &desc)) < 0 ||
            (r = twin_seed_bool(s, v, "private", path, false, &priv)) < 0 ||
            (r = twin_seed_str(s, v, "default_branch", path, "main", TWIN_NULL_REFUSED, &branch)) <
                    0 ||
            (r = seed_time(s, v, "created_at", path, GH_SEED_TIME, &c_at)) < 0 ||
            (r = seed_time(s, v, "updated_at", path, c_at, &u_at)) < 0)
                return r;

        json_t *o = gh_user_ensure(s->world, owner, "User");
        if (!o)
                return -ENOMEM;
        _cleanup_json_ json_t *collabs = NULL;
        if ((r = seed_logins(s, v, "collaborators", path, &collabs)) < 0)
                return r;
        int64_t id = gh_alloc_id(s->world);
        _cleanup_json_ json_t *repo =
                json_pack("{s:I, s:o, s:s, s:s, s:s?, s:b, s:s, s:s, s:s, s:O, s:[], s:[], s:[], "
                          "s:[], s:[], s:[], "
                          "s:[], s:[]}",
                          "id", (json_int_t)id, "node_id", gh_node_id("Repository", id), "owner",
                          json_get_str(o, "login"), "name", name, "description", desc, "private",
                          priv, "default_branch", branch, "created_at", c_at, "updated_at", u_at,
                          "collaborators", collabs, "labels", "milestones", "issues",
                          "pull_requests", "branches", "commits", "tags", "releases");
        if (!repo || json_array_append(json_object_get(s->world, "repositories"), repo) < 0)
                return -ENOMEM;

        if ((r = seed_labels(s, v, repo, path)) < 0 ||
            (r = seed_milestones(s, v, repo, path)) < 0 || (r = gh_seed_git(s, v, repo, path)) < 0)
                return r;
        const char *lists[] = {"issues", "pull_requests"};
        for (size_t k = 0; k < ELEMENTSOF(lists); k++) {
                json_t *a;
                if ((r = twin_seed_array(s, v, lists[k], path, &a)) < 0)
                        return r;
                size_t i;
                json_t *item;
                json_array_foreach (a, i, item) {
                        char p[160];
                        snprintf(p, sizeof(p), "%s.%s[%zu]", path, lists[k], i);
                        if ((r = seed_item(s, repo, item, p, k == 1)) < 0)
                                return r;
                }
        }
        return 0;
}

static int github_load_seed(const json_t *seed, json_t **ret_world, char *err, size_t errlen)
{
        static const char *const keys[] = {"users", "repositories", "viewer"};
        _cleanup_json_ json_t *world =
                json_pack("{s:[], s:[], s:I}", "users", "repositories", "next_id", (json_int_t)1);
        if (!world)
                return -ENOMEM;
        TwinSeed s = {.world = world, .err = err, .errlen = errlen};
        int r = twin_seed_known(&s, seed, "", "github seed", keys, ELEMENTSOF(keys));
        if (r < 0 || (r = seed_users(&s, seed)) < 0)
                return r;
        if ((r = seed_viewer(&s, seed)) < 0)
                return r;
        json_t *repos, *v;
        if ((r = twin_seed_array(&s, seed, "repositories", "", &repos)) < 0)
                return r;
        size_t i;
        json_array_foreach (repos, i, v) {
                if ((r = seed_repo(&s, v, i)) < 0)
                        return r;
        }
        *ret_world = TAKE_PTR(world);
        return 0;
}

/* ------------------------------------------------------------------ media types */

const char *gh_accept_format(TwinCall *c)
{
        static const char *const formats[] = {"diff", "patch", "raw", "object"};
        const char *accept = c->request ? json_get_str(c->request->headers, "accept") : NULL;
        for (size_t i = 0; accept && i < ELEMENTSOF(formats); i++) {
                char a[64], b[64];
                snprintf(a, sizeof(a), "application/vnd.github.%s", formats[i]);
                snprintf(b, sizeof(b), "application/vnd.github.v3.%s", formats[i]);
                if (strstr(accept, a) || strstr(accept, b))
                        return formats[i];
        }
        return NULL;
}

int gh_reply_text(TwinReply *rp, const char *media_type, char *text)
{
        _cleanup_free_ char *t = text;
        if (!t)
                return -ENOMEM;
        if (twin_reply_header(rp, "Content-Type", json_string(media_type)) < 0)
                return -ENOMEM;
        return twin_reply_body(rp, 200, twin_json_string_lossy(t, strlen(t)));
}

/* ------------------------------------------------------------------ errors */

void gh_error(int status, const char *code, const char *message, TwinReply *rp)
{
        char st[8];
        snprintf(st, sizeof(st), "%d", status);
        if (streq_ptr(code, "invalid_json"))
                message = "Problems parsing JSON";
        else if (status == 500 || !message) /* a twin's own fault says no more than GitHub's */
                message = status >= 500 ? "Server Error" : "Error";
        twin_reply_json(rp, status,
                        json_pack("{s:s, s:s, s:s}", "message", message, "documentation_url",
                                  GH_DOCS_URL, "status", st));
}

/* GitHub "Authenticating to the REST API": no token 401 "Requires authentication", a bad or
 * expired one 401 "Bad credentials". A good token of another session is hosted Pome's 401
 * "Forbidden" (its contract suite's sid-mismatch pin; status "401" with it). */
static void github_auth_error(TwinAuthFailure why, TwinReply *rp)
{
        switch (why) {
        case TWIN_AUTH_MISSING:
                gh_error(401, NULL, "Requires authentication", rp);
                return;
        case TWIN_AUTH_WRONG_SESSION:
                gh_error(401, NULL, "Forbidden", rp);
                return;
        case TWIN_AUTH_INVALID:
        case TWIN_AUTH_EXPIRED:
                break;
        }
        gh_error(401, NULL, "Bad credentials", rp);
}

/*
 * The control surfaces in GitHub's envelope, as hosted Pome's GitHub twin answers them: its
 * admin gate 403 "Forbidden", a bad seed and a /mcp/call naming no tool or an unknown one 422
 * "Validation Failed" (errors[] saying which), a body that is no JSON 400 "Problems parsing
 * JSON".
 */
static void github_control_error(TwinControlError what, const char *detail, TwinReply *rp)
{
        switch (what) {
        case TWIN_CONTROL_FORBIDDEN:
                gh_error(403, NULL, "Forbidden", rp);
                return;
        case TWIN_CONTROL_BAD_BODY:
                gh_error(400, "invalid_json", NULL, rp);
                return;
        case TWIN_CONTROL_BAD_SEED:
                twin_reply_json(rp, 422,
                                json_pack("{s:s, s:[{s:s, s:s, s:s}], s:s, s:s}", "message",
                                          "Validation Failed", "errors", "resource", "Seed", "code",
                                          "invalid", "message", strempty(detail),
                                          "documentation_url", GH_DOCS_URL, "status", "422"));
                return;
        case TWIN_CONTROL_UNKNOWN_TOOL:
                (void)gh_invalid_value(rp, "Tool", "tool", "invalid", strempty(detail));
                return;
        case TWIN_CONTROL_NO_TOOL:
                (void)gh_invalid(rp, "Tool", "tool", "missing_field");
                return;
        }
}

/*
 * hosted Pome's GitHub health shapes: /healthz adds fidelity and access_control (what the
 * twin enforces of GitHub's permissions: the header comment of this file), /_pome/health
 * implementation, fidelity and runtime.
 */
static int github_health_extras(const Twin *t _unused_, json_t *body, bool health)
{
        if (json_object_set_new(body, "fidelity", json_string("semantic")) < 0)
                return -ENOMEM;
        if (health)
                return json_object_set_new(body, "implementation",
                                           json_string(twin_kind_github.implementation)) < 0 ||
                                       json_object_set_new(body, "runtime", twin_runtime()) < 0
                               ? -ENOMEM
                               : 0;
        return json_object_set_new(
                       body, "access_control",
                       json_pack("{s:s, s:s, s:s}", "private_repositories",
                                 "owner and collaborators; anyone else gets 404", "writes",
                                 "owner and collaborators; anyone else gets 403", "sessions",
                                 "a token is good for its own session only")) < 0
                       ? -ENOMEM
                       : 0;
}

int gh_not_found(TwinReply *rp)
{
        gh_error(404, NULL, "Not Found", rp);
        return rp->body ? 0 : -ENOMEM;
}

/* 422 Validation Failed with one {resource, field, code} (GitHub "Client errors"). */
int gh_invalid_value(TwinReply *rp, const char *resource, const char *field, const char *code,
                     const char *value)
{
        return twin_reply_body(rp, 422,
                               json_pack("{s:s, s:[{s:s, s:s, s:s, s:s}], s:s, s:s}", "message",
                                         "Validation Failed", "errors", "value", value, "resource",
                                         resource, "field", field, "code", code,
                                         "documentation_url", GH_DOCS_URL, "status", "422"));
}

int gh_invalid(TwinReply *rp, const char *resource, const char *field, const char *code)
{
        return twin_reply_body(rp, 422,
                               json_pack("{s:s, s:[{s:s, s:s, s:s}], s:s, s:s}", "message",
                                         "Validation Failed", "errors", "resource", resource,
                                         "field", field, "code", code, "documentation_url",
                                         GH_DOCS_URL, "status", "422"));
}

/* ------------------------------------------------------------------ rendering */

/*
 * The objects every issue read and list returns (issue, user, label) are built member by
 * member, not with json_pack, which parses its format again on every call: it was a
 * quarter of the engine's time for a GET of an issue. The keys are our ASCII literals.
 * As with json_pack, a NULL value ("O", "o") or a string that is not UTF-8 ("s") fails
 * the whole object; "o" values are stolen, also on failure.
 */
static bool set_ref(json_t *o, const char *key, json_t *v)
{
        return v && json_object_set_nocheck(o, key, v) == 0;
}

static bool set_new(json_t *o, const char *key, json_t *v)
{
        return v && json_object_set_new_nocheck(o, key, v) == 0;
}

static bool set_str(json_t *o, const char *key, const char *s)
{
        return s && set_new(o, key, json_string(s));
}

/* Sets each links[i][0] of o to base followed by links[i][1] (GitHub's *_url templates). */
static bool set_links(json_t *o, const char *base, const char *const (*links)[2], size_t n)
{
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *v = NULL;
                if (asprintf(&v, "%s%s", base, links[i][1]) < 0 || !set_str(o, links[i][0], v))
                        return false;
        }
        return true;
}

static bool set_int(json_t *o, const char *key, json_int_t v)
{
        return set_new(o, key, json_integer(v));
}

/*
 * The concatenation of parts up to a NULL entry, as a new string; NULL on OOM or for a
 * missing part. For the URLs of those hot objects: asprintf's format machinery was
 * another 7 % of a GET of an issue.
 */
static char *cat_strv(const char *const *parts, size_t n)
{
        size_t len = 0;
        for (size_t i = 0; i < n; i++) {
                if (!parts[i])
                        return NULL;
                len += strlen(parts[i]);
        }
        char *out = malloc(len + 1), *o = out;
        if (!out)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                size_t l = strlen(parts[i]);
                memcpy(o, parts[i], l);
                o += l;
        }
        *o = 0;
        return out;
}
#define CAT(...)                                     \
        cat_strv((const char *const[]){__VA_ARGS__}, \
                 sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

json_t *gh_render_user(TwinCall *c, const char *login)
{
        json_t *u = login ? gh_user_find(c->world, login) : NULL;
        if (!login)
                return json_null();
        const char *l = u ? json_get_str(u, "login") : login;
        _cleanup_free_ char *url = NULL, *html = NULL;
        if (!(url = CAT(c->base_url, "/users/", l)) || !(html = CAT(GH_HTML_BASE "/", l)))
                return NULL;
        _cleanup_json_ json_t *o = json_object();
        if (!o || !set_str(o, "login", l) ||
            !set_int(o, "id", json_integer_value(json_object_get(u, "id"))) ||
            !set_ref(o, "node_id", u ? json_object_get(u, "node_id") : json_null()) ||
            !set_str(o, "avatar_url", "") || !set_str(o, "gravatar_id", "") ||
            !set_str(o, "url", url) || !set_str(o, "html_url", html))
                return NULL;
        /* the link templates of GitHub's simple-user object, at the twin's own urls */
        static const char *const links[][2] = {
                {"followers_url", "/followers"},
                {"following_url", "/following{/other_user}"},
                {"gists_url", "/gists{/gist_id}"},
                {"starred_url", "/starred{/owner}{/repo}"},
                {"subscriptions_url", "/subscriptions"},
                {"organizations_url", "/orgs"},
                {"repos_url", "/repos"},
                {"events_url", "/events{/privacy}"},
                {"received_events_url", "/received_events"},
        };
        if (!set_links(o, url, links, ELEMENTSOF(links)))
                return NULL;
        if (!set_str(o, "type", u ? json_get_str(u, "type") : "User") ||
            !set_str(o, "user_view_type", "public") || !set_new(o, "site_admin", json_false()))
                return NULL;
        return TAKE_PTR(o);
}

json_t *gh_render_label(TwinCall *c, json_t *repo, const char *name)
{
        json_t *l = gh_label_find(repo, name);
        _cleanup_free_ char *url = NULL;
        if (!(url = CAT(c->base_url, "/repos/", json_get_str(repo, "owner"), "/",
                        json_get_str(repo, "name"), "/labels/", name)))
                return NULL;
        _cleanup_json_ json_t *o = json_object();
        if (!o || !set_int(o, "id", json_integer_value(json_object_get(l, "id"))) ||
            !set_ref(o, "node_id", l ? json_object_get(l, "node_id") : json_null()) ||
            !set_str(o, "url", url) || !set_str(o, "name", l ? json_get_str(l, "name") : name) ||
            !set_str(o, "color", l ? json_get_str(l, "color") : "ededed") ||
            !set_new(o, "default", json_boolean(json_is_true(json_object_get(l, "default")))) ||
            !set_ref(o, "description", l ? json_object_get(l, "description") : json_null()))
                return NULL;
        return TAKE_PTR(o);
}

json_t *gh_render_labels(TwinCall *c, json_t *repo, json_t *names)
{
        _cleanup_json_ json_t *a = json_array();
        size_t i;
        json_t *n;
        if (!a)
                return NULL;
        json_array_foreach (names, i, n) {
                if (json_array_append_new(a, gh_render_label(c, repo, json_string_value(n))) < 0)
                        return NULL;
        }
        return TAKE_PTR(a);
}

const char *gh_association(json_t *repo, const char *login)
{
        if (strcasecmp(json_get_str(repo, "owner"), login) == 0)
                return "OWNER";
        if (gh_strv_has(json_object_get(repo, "collaborators"), login))
                return "COLLABORATOR";
        return "NONE";
}

/* Open and closed issues and pull requests of repo on milestone number (GitHub counts both). */
void gh_milestone_counts(json_t *repo, json_int_t number, json_int_t *ret_open,
                         json_int_t *ret_closed)
{
        json_int_t open = 0, closed = 0;
        const char *lists[] = {"issues", "pull_requests"};
        for (size_t k = 0; k < ELEMENTSOF(lists); k++) {
                size_t i;
                json_t *x;
                json_array_foreach (json_object_get(repo, lists[k]), i, x) {
                        json_t *m = json_object_get(x, "milestone");
                        if (!json_is_integer(m) || json_integer_value(m) != number)
                                continue;
                        if (streq_ptr(json_get_str(x, "state"), "open"))
                                open++;
                        else
                                closed++;
                }
        }
        *ret_open = open;
        *ret_closed = closed;
}

/*
 * The milestone object of GitHub's REST API (https://docs.github.com/rest/issues/milestones)
 * for milestone number of repo: null when there is none. Seeded milestones carry no creator
 * or timestamps: the repository owner and GH_SEED_TIME stand in.
 */
json_t *gh_render_milestone(TwinCall *c, json_t *repo, json_t *number)
{
        json_t *m = json_is_integer(number)
                            ? gh_number_find(repo, "milestones", json_integer_value(number), NULL)
                            : NULL;
        if (!m)
                return json_null();
        const char *owner = json_get_str(repo, "owner"), *name = json_get_str(repo, "name");
        long long n = json_integer_value(number);
        _cleanup_free_ char *url = NULL, *html = NULL, *labels = NULL;
        if (asprintf(&url, "%s/repos/%s/%s/milestones/%lld", c->base_url, owner, name, n) < 0 ||
            asprintf(&html, GH_HTML_BASE "/%s/%s/milestone/%lld", owner, name, n) < 0 ||
            asprintf(&labels, "%s/labels", url) < 0)
                return NULL;
        json_int_t open, closed;
        gh_milestone_counts(repo, n, &open, &closed);
        const char *creator = json_get_str(m, "creator");
        const char *created = json_get_str(m, "created_at");
        json_t *closed_at = json_object_get(m, "closed_at");
        if (!closed_at && streq_ptr(json_get_str(m, "state"), "closed"))
                closed_at = json_object_get(m, "updated_at");
        return json_pack(
                "{s:s, s:s, s:s, s:O, s:O, s:I, s:O, s:O, s:O, s:o, s:I, s:I, s:s, s:s, "
                "s:O?, s:O?}",
                "url", url, "html_url", html, "labels_url", labels, "id", json_object_get(m, "id"),
                "node_id", json_object_get(m, "node_id"), "number", (json_int_t)n, "state",
                json_object_get(m, "state"), "title", json_object_get(m, "title"), "description",
                json_object_get(m, "description") ? json_object_get(m, "description") : json_null(),
                "creator", gh_render_user(c, creator ? creator : owner), "open_issues", open,
                "closed_issues", closed, "created_at", created ? created : GH_SEED_TIME,
                "updated_at",
                json_get_str(m, "updated_at") ? json_get_str(m, "updated_at")
                : created                     ? created
                                              : GH_SEED_TIME,
                "closed_at", closed_at ? closed_at : json_null(), "due_on",
                json_object_get(m, "due_on") ? json_object_get(m, "due_on") : json_null());
}

json_t *gh_render_issue(TwinCall *c, json_t *repo, json_t *issue)
{
        const char *owner = json_get_str(repo, "owner"), *name = json_get_str(repo, "name");
        long long n = json_integer_value(json_object_get(issue, "number"));
        _cleanup_free_ char *repo_url = NULL, *url = NULL, *html = NULL;
        char num[DECIMAL_MAX];
        const char *ns = format_int(num, n);
        if (!(repo_url = CAT(c->base_url, "/repos/", owner, "/", name)) ||
            !(url = CAT(repo_url, "/issues/", ns)) ||
            !(html = CAT(GH_HTML_BASE "/", owner, "/", name, "/issues/", ns)))
                return NULL;
        _cleanup_free_ char *labels_url = NULL, *comments_url = NULL, *events_url = NULL;
        if (!(labels_url = CAT(url, "/labels{/name}")) || !(comments_url = CAT(url, "/comments")) ||
            !(events_url = CAT(url, "/events")))
                return NULL;

        json_t *assignees = json_object_get(issue, "assignees");
        _cleanup_json_ json_t *rendered = json_array();
        size_t i;
        json_t *a;
        if (!rendered)
                return NULL;
        json_array_foreach (assignees, i, a) {
                if (json_array_append_new(rendered, gh_render_user(c, json_string_value(a))) < 0)
                        return NULL;
        }
        const char *user = json_get_str(issue, "user");
        _cleanup_json_ json_t *out = json_object();
        if (!out || !set_ref(out, "id", json_object_get(issue, "id")) ||
            !set_ref(out, "node_id", json_object_get(issue, "node_id")) ||
            !set_str(out, "url", url) || !set_str(out, "repository_url", repo_url) ||
            !set_str(out, "labels_url", labels_url) ||
            !set_str(out, "comments_url", comments_url) ||
            !set_str(out, "events_url", events_url) || !set_str(out, "html_url", html) ||
            !set_int(out, "number", (json_int_t)n) ||
            !set_ref(out, "title", json_object_get(issue, "title")) ||
            !set_new(out, "user", gh_render_user(c, user)) ||
            !set_new(out, "labels", gh_render_labels(c, repo, json_object_get(issue, "labels"))) ||
            !set_ref(out, "state", json_object_get(issue, "state")) ||
            !set_ref(out, "locked", json_object_get(issue, "locked")) ||
            !set_ref(out, "assignee",
                     json_array_size(rendered) ? json_array_get(rendered, 0) : json_null()) ||
            !set_ref(out, "assignees", rendered) ||
            !set_new(out, "milestone",
                     gh_render_milestone(c, repo, json_object_get(issue, "milestone"))) ||
            !set_int(out, "comments",
                     (json_int_t)json_array_size(json_object_get(issue, "comments"))) ||
            !set_ref(out, "created_at", json_object_get(issue, "created_at")) ||
            !set_ref(out, "updated_at", json_object_get(issue, "updated_at")) ||
            !set_ref(out, "closed_at", json_object_get(issue, "closed_at")) ||
            !set_str(out, "author_association", gh_association(repo, user)) ||
            !set_new(out, "active_lock_reason", json_null()) ||
            !set_ref(out, "body", json_object_get(issue, "body")) ||
            !set_ref(out, "state_reason", json_object_get(issue, "state_reason")))
                return NULL;
        /* the reactions rollup every issue object carries (add_issue_comment's reactions) */
        static const char *const kinds[] = {"+1",       "-1",    "laugh",  "hooray",
                                            "confused", "heart", "rocket", "eyes"};
        _cleanup_free_ char *reactions_url = NULL, *timeline_url = NULL;
        if (!(reactions_url = CAT(url, "/reactions")) || !(timeline_url = CAT(url, "/timeline")))
                return NULL;
        json_t *list = json_object_get(issue, "reactions");
        json_t *rollup = json_pack("{s:s, s:I}", "url", reactions_url, "total_count",
                                   (json_int_t)json_array_size(list));
        if (json_object_set_new(out, "reactions", rollup) < 0 ||
            json_object_set_new(out, "timeline_url", json_string(timeline_url)) < 0 ||
            json_object_set_new(out, "performed_via_github_app", json_null()) < 0)
                return NULL;
        for (size_t k = 0; k < ELEMENTSOF(kinds); k++) {
                json_int_t count = 0;
                json_t *x;
                json_array_foreach (list, i, x) {
                        count += streq_ptr(json_get_str(x, "content"), kinds[k]);
                }
                if (json_object_set_new(rollup, kinds[k], json_integer(count)) < 0)
                        return NULL;
        }
        if (!gh_is_pull(issue))
                return TAKE_PTR(out);
        /* a pull request seen through the issues API: github.com adds pull_request and draft */
        _cleanup_free_ char *pr_url = NULL, *pr_html = NULL, *diff = NULL, *patch = NULL;
        if (asprintf(&pr_url, "%s/pulls/%lld", repo_url, n) < 0 ||
            asprintf(&pr_html, GH_HTML_BASE "/%s/%s/pull/%lld", owner, name, n) < 0 ||
            asprintf(&diff, "%s.diff", pr_html) < 0 || asprintf(&patch, "%s.patch", pr_html) < 0)
                return NULL;
        json_t *merged_at = json_object_get(issue, "merged_at");
        if (json_object_set_new(out, "html_url", json_string(pr_html)) < 0 ||
            json_object_set_new(out, "draft",
                                json_boolean(json_is_true(json_object_get(issue, "draft")))) < 0 ||
            json_object_set_new(out, "pull_request",
                                json_pack("{s:s, s:s, s:s, s:s, s:O}", "url", pr_url, "html_url",
                                          pr_html, "diff_url", diff, "patch_url", patch,
                                          "merged_at", merged_at ? merged_at : json_null())) < 0)
                return NULL;
        return TAKE_PTR(out);
}

json_t *gh_render_issue_full(TwinCall *c, json_t *repo, json_t *issue)
{
        _cleanup_json_ json_t *out = gh_render_issue(c, repo, issue);
        if (!out)
                return NULL;
        /* who closed it last: the issue's closer, or for a merged pull request its merger */
        const char *by = json_get_str(issue, "closed_by");
        if (!by && json_is_true(json_object_get(issue, "merged")))
                by = json_get_str(issue, "merged_by");
        if (!streq_ptr(json_get_str(issue, "state"), "closed"))
                by = NULL;
        if (json_object_set_new(out, "closed_by", gh_render_user(c, by)) < 0)
                return NULL;
        return TAKE_PTR(out);
}

json_t *gh_render_comment(TwinCall *c, json_t *repo, json_t *issue, json_t *comment)
{
        const char *owner = json_get_str(repo, "owner"), *name = json_get_str(repo, "name");
        long long n = json_integer_value(json_object_get(issue, "number"));
        long long id = json_integer_value(json_object_get(comment, "id"));
        _cleanup_free_ char *url = NULL, *html = NULL, *issue_url = NULL;
        char num[DECIMAL_MAX], idn[DECIMAL_MAX];
        const char *ns = format_int(num, n), *ids = format_int(idn, id);
        if (!(url = CAT(c->base_url, "/repos/", owner, "/", name, "/issues/comments/", ids)) ||
            !(html = CAT(GH_HTML_BASE "/", owner, "/", name, "/issues/", ns, "#issuecomment-",
                         ids)) ||
            !(issue_url = CAT(c->base_url, "/repos/", owner, "/", name, "/issues/", ns)))
                return NULL;
        /* built member by member, as an issue is: every comment read and write renders it */
        const char *user = json_get_str(comment, "user");
        _cleanup_json_ json_t *o = json_object();
        if (!o || !set_int(o, "id", (json_int_t)id) ||
            !set_ref(o, "node_id", json_object_get(comment, "node_id")) ||
            !set_str(o, "url", url) || !set_str(o, "html_url", html) ||
            !set_str(o, "issue_url", issue_url) ||
            !set_ref(o, "body", json_object_get(comment, "body")) ||
            !set_new(o, "user", gh_render_user(c, user)) ||
            !set_ref(o, "created_at", json_object_get(comment, "created_at")) ||
            !set_ref(o, "updated_at", json_object_get(comment, "updated_at")) ||
            !set_str(o, "author_association", gh_association(repo, user)))
                return NULL;
        return TAKE_PTR(o);
}

json_int_t gh_open_count(json_t *repo)
{
        json_int_t n = 0;
        const char *lists[] = {"issues", "pull_requests"};
        for (size_t k = 0; k < ELEMENTSOF(lists); k++) {
                size_t i;
                json_t *x;
                json_array_foreach (json_object_get(repo, lists[k]), i, x) {
                        n += streq_ptr(json_get_str(x, "state"), "open");
                }
        }
        return n;
}

json_t *gh_render_repo(TwinCall *c, json_t *repo)
{
        const char *owner = json_get_str(repo, "owner"), *name = json_get_str(repo, "name");
        const char *viewer = json_get_str(c->world, "viewer");
        bool member = viewer && gh_repo_member(repo, viewer);
        bool admin = viewer && strcasecmp(owner, viewer) == 0;
        _cleanup_free_ char *full = NULL, *url = NULL, *html = NULL, *issues_url = NULL;
        if (asprintf(&full, "%s/%s", owner, name) < 0 ||
            asprintf(&url, "%s/repos/%s", c->base_url, full) < 0 ||
            asprintf(&html, GH_HTML_BASE "/%s", full) < 0 ||
            asprintf(&issues_url, "%s/issues{/number}", url) < 0)
                return NULL;
        json_int_t open = gh_open_count(repo);
        bool priv = json_is_true(json_object_get(repo, "private"));
        _cleanup_json_ json_t *o = json_pack(
                "{s:O, s:O, s:O, s:s, s:o, s:b, s:s, s:O, s:b, s:s, s:s, s:O, s:O, "
                "s:O, s:O, s:I, s:I, s:b, s:b, s:b, s:s, s:[], s:{s:b, s:b, s:b, s:b, "
                "s:b}}",
                "id", json_object_get(repo, "id"), "node_id", json_object_get(repo, "node_id"),
                "name", json_object_get(repo, "name"), "full_name", full, "owner",
                gh_render_user(c, owner), "private", priv, "html_url", html, "description",
                json_object_get(repo, "description"), "fork",
                json_object_get(repo, "parent") != NULL, "url", url, "issues_url", issues_url,
                "created_at", json_object_get(repo, "created_at"), "updated_at",
                json_object_get(repo, "updated_at"), "pushed_at",
                json_object_get(repo, "updated_at"), "default_branch",
                json_object_get(repo, "default_branch"), "open_issues_count", open, "open_issues",
                open, "has_issues", true, "archived", false, "disabled", false, "visibility",
                priv ? "private" : "public", "topics", "permissions", "admin", admin, "maintain",
                admin, "push", member, "triage", member, "pull", true);
        if (!o)
                return NULL;
        /* the link templates and clone urls of GitHub's repository object (its OpenAPI
         * description's "repository"), at the twin's own urls */
        static const char *const links[][2] = {
                {"archive_url", "/{archive_format}{/ref}"},
                {"assignees_url", "/assignees{/user}"},
                {"blobs_url", "/git/blobs{/sha}"},
                {"branches_url", "/branches{/branch}"},
                {"collaborators_url", "/collaborators{/collaborator}"},
                {"comments_url", "/comments{/number}"},
                {"commits_url", "/commits{/sha}"},
                {"compare_url", "/compare/{base}...{head}"},
                {"contents_url", "/contents/{+path}"},
                {"contributors_url", "/contributors"},
                {"deployments_url", "/deployments"},
                {"downloads_url", "/downloads"},
                {"events_url", "/events"},
                {"forks_url", "/forks"},
                {"git_commits_url", "/git/commits{/sha}"},
                {"git_refs_url", "/git/refs{/sha}"},
                {"git_tags_url", "/git/tags{/sha}"},
                {"hooks_url", "/hooks"},
                {"issue_comment_url", "/issues/comments{/number}"},
                {"issue_events_url", "/issues/events{/number}"},
                {"keys_url", "/keys{/key_id}"},
                {"labels_url", "/labels{/name}"},
                {"languages_url", "/languages"},
                {"merges_url", "/merges"},
                {"milestones_url", "/milestones{/number}"},
                {"notifications_url", "/notifications{?since,all,participating}"},
                {"pulls_url", "/pulls{/number}"},
                {"releases_url", "/releases{/id}"},
                {"stargazers_url", "/stargazers"},
                {"statuses_url", "/statuses/{sha}"},
                {"subscribers_url", "/subscribers"},
                {"subscription_url", "/subscription"},
                {"tags_url", "/tags"},
                {"teams_url", "/teams"},
                {"trees_url", "/git/trees{/sha}"},
        };
        if (!set_links(o, url, links, ELEMENTSOF(links)))
                return NULL;
        _cleanup_free_ char *git = NULL, *ssh = NULL, *clone = NULL;
        if (asprintf(&git, "git://github.com/%s.git", full) < 0 ||
            asprintf(&ssh, "git@github.com:%s.git", full) < 0 ||
            asprintf(&clone, GH_HTML_BASE "/%s.git", full) < 0)
                return NULL;
        if (!set_str(o, "git_url", git) || !set_str(o, "ssh_url", ssh) ||
            !set_str(o, "clone_url", clone) || !set_str(o, "svn_url", html) ||
            !set_new(o, "mirror_url", json_null()) || !set_new(o, "homepage", json_null()))
                return NULL;
        return TAKE_PTR(o);
}

/* ------------------------------------------------------------------ argument resolution */

/*
 * Resolves args owner/repo to a repository the viewer may see. Returns 1 with *ret set,
 * 0 when rp now holds the refusal, negative errno.
 */
int gh_arg_repo(TwinCall *c, TwinReply *rp, json_t **ret)
{
        const char *owner, *name;
        int r = twin_arg_str(c->args, "owner", &owner);
        if (r < 0)
                return gh_invalid(rp, "Repository", "owner",
                                  r == -ENOENT ? "missing_field" : "invalid");
        r = twin_arg_str(c->args, "repo", &name);
        if (r < 0)
                return gh_invalid(rp, "Repository", "repo",
                                  r == -ENOENT ? "missing_field" : "invalid");
        json_t *repo = gh_repo_find(c->world, owner, name);
        const char *viewer = json_get_str(c->world, "viewer");
        if (!repo || (json_is_true(json_object_get(repo, "private")) &&
                      !(viewer && gh_repo_member(repo, viewer))))
                return gh_not_found(rp);
        *ret = repo;
        return 1;
}

/*
 * Resolves args owner/repo as arg_repo does, then issue_number within that repository: the
 * preamble of every issue action. Same returns as arg_repo, with *ret_repo, *ret_issue and,
 * when ret_idx is not NULL, the issue's index in the repository's issues.
 */
int gh_arg_repo_issue(TwinCall *c, TwinReply *rp, json_t **ret_repo, json_t **ret_issue,
                      size_t *ret_idx)
{
        json_t *repo;
        int r = gh_arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        int64_t n;
        r = twin_arg_int(c->args, "issue_number", 1, INT64_MAX, &n);
        if (r == -ENOENT)
                return gh_invalid(rp, "Issue", "issue_number", "missing_field");
        /* a non-number never matches GitHub's route either: Not Found */
        /* a pull request is an issue too: the issues routes serve its number */
        json_t *issue = r < 0 ? NULL : gh_number_find(repo, "issues", n, ret_idx);
        if (!issue && r >= 0)
                issue = gh_number_find(repo, "pull_requests", n, ret_idx);
        if (!issue)
                return gh_not_found(rp);
        *ret_repo = repo;
        *ret_issue = issue;
        return 1;
}

/*
 * Label names from args[key]: an array of names or {name} objects, or a comma-separated
 * string. Returns 1 with a new array, 0 when absent (*ret NULL), 2 when malformed.
 */
int gh_arg_label_names(TwinCall *c, const char *key, json_t **ret)
{
        *ret = NULL;
        json_t *v = json_object_get(c->args, key);
        if (!v || json_is_null(v))
                return 0;
        _cleanup_json_ json_t *out = NULL;
        if (json_is_array(v)) {
                out = json_array();
                if (!out)
                        return -ENOMEM;
                size_t i;
                json_t *e;
                json_array_foreach (v, i, e) {
                        json_t *n = json_is_object(e) ? json_object_get(e, "name") : e;
                        if (!json_is_string(n) || json_string_length(n) == 0)
                                return 2;
                        if (json_array_append(out, n) < 0)
                                return -ENOMEM;
                }
        } else {
                int r = twin_arg_strv(c->args, key, &out);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return 2;
        }
        *ret = TAKE_PTR(out);
        return 1;
}

/*
 * Whether login may be assigned issues of repo: a user (not an organisation) who owns it or
 * collaborates on it (GitHub "Check if a user can be assigned"). The canonical login row, or
 * NULL.
 */
json_t *gh_assignable(TwinCall *c, json_t *repo, const char *login)
{
        json_t *u = login ? gh_user_find(c->world, login) : NULL;
        if (!u || streq_ptr(json_get_str(u, "type"), "Organization") ||
            !gh_repo_member(repo, json_get_str(u, "login")))
                return NULL;
        return u;
}

/*
 * Logins from args[key] that may be assigned issues of repo (gh_assignable); the others are
 * dropped without an error, as github.com does. 1 with a new array, 0 when absent, 2 when
 * malformed, -ENOMEM.
 */
int gh_arg_assignees(TwinCall *c, json_t *repo, const char *key, bool strict, json_t **ret,
                     const char **ret_invalid)
{
        json_t *v = json_object_get(c->args, key);
        _cleanup_json_ json_t *names = NULL;
        *ret = NULL;
        if (ret_invalid)
                *ret_invalid = NULL;
        if (!v || json_is_null(v))
                return 0;
        int r = twin_arg_strv(c->args, key, &names);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 2;
        _cleanup_json_ json_t *out = json_array();
        if (!out)
                return -ENOMEM;
        size_t i;
        json_t *n;
        json_array_foreach (names, i, n) {
                /* adding assignees drops those GitHub cannot assign; creating or editing
                 * an issue with one fails (422 "invalid", the value named) */
                json_t *u = gh_assignable(c, repo, json_string_value(n));
                if (!u && strict) {
                        if (ret_invalid)
                                *ret_invalid = json_string_value(
                                        json_array_get(json_object_get(c->args, key), i));
                        return 3;
                }
                if (!u)
                        continue;
                if (!gh_strv_has(out, json_get_str(u, "login")) &&
                    json_array_append(out, json_object_get(u, "login")) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(out);
        return 1;
}

/* Canonical label names on repo for names, creating the missing ones. */
json_t *gh_labels_ensure(TwinCall *c, json_t *repo, json_t *names)
{
        _cleanup_json_ json_t *out = json_array();
        size_t i;
        json_t *n;
        if (!out)
                return NULL;
        json_array_foreach (names, i, n) {
                json_t *l = gh_label_ensure(c->world, repo, json_string_value(n), NULL, NULL, -1);
                if (!l)
                        return NULL;
                if (!gh_strv_has(out, json_get_str(l, "name")) &&
                    json_array_append(out, json_object_get(l, "name")) < 0)
                        return NULL;
        }
        return TAKE_PTR(out);
}

/* query minus any page parameter, each kept piece followed by '&' ("state=all&"). */
char *gh_query_without_page(const char *query)
{
        char *out = malloc(strlen(strempty(query)) + 2), *o = out;
        if (!out)
                return NULL;
        for (const char *p = strempty(query); *p;) {
                size_t l = strcspn(p, "&");
                bool is_page = (l >= 5 && strncmp(p, "page=", 5) == 0) ||
                               (l == 4 && strncmp(p, "page", 4) == 0);
                if (l > 0 && !is_page) {
                        memcpy(o, p, l);
                        o += l;
                        *o++ = '&';
                }
                p += l + (p[l] == '&');
        }
        *o = 0;
        return out;
}

/*
 * Pagination (GitHub "Using pagination in the REST API"): per_page default 30, max 100,
 * page from 1. Slices items into *ret and, for an HTTP request, sets the Link header
 * (prev, next, last, first) with absolute urls back at the mount.
 */
int gh_paginate(TwinCall *c, TwinReply *rp, json_t *items, json_t **ret)
{
        int64_t per_page = 30, page = 1;
        if (twin_arg_int(c->args, "per_page", 1, INT64_MAX, &per_page) < 0 &&
            twin_arg_int(c->args, "perPage", 1, INT64_MAX, &per_page) < 0)
                per_page = 30;
        if (per_page > 100)
                per_page = 100;
        if (twin_arg_int(c->args, "page", 1, INT64_MAX, &page) < 0)
                page = 1;

        size_t total = json_array_size(items);
        int64_t last =
                total == 0 ? 1 : (int64_t)((total + (size_t)per_page - 1) / (size_t)per_page);
        /* any page past the end reads as the first empty one (and keeps page + 1 finite) */
        if (page > last + 1)
                page = last + 1;
        _cleanup_json_ json_t *slice = json_array();
        if (!slice)
                return -ENOMEM;
        if (page <= last) {
                size_t from = (size_t)((page - 1) * per_page);
                for (size_t i = from; i < total && i < from + (size_t)per_page; i++)
                        if (json_array_append(slice, json_array_get(items, i)) < 0)
                                return -ENOMEM;
        }

        const TwinRequest *rq = c->request;
        if (rq && last > 1) {
                /* the caller's query minus its page, so filters survive into every link */
                _cleanup_free_ char *link = NULL, *q = gh_query_without_page(rq->query);
                size_t linklen = 0;
                if (!q)
                        return -ENOMEM;
                FILE *f = open_memstream(&link, &linklen);
                if (!f)
                        return -ENOMEM;
                struct {
                        const char *rel;
                        int64_t page;
                        bool on;
                } rels[] = {{"prev", page - 1, page > 1 && page - 1 <= last},
                            {"next", page + 1, page < last},
                            {"last", last, page < last},
                            {"first", 1, page > 1}};
                bool first = true;
                for (size_t i = 0; i < ELEMENTSOF(rels); i++) {
                        if (!rels[i].on)
                                continue;
                        fprintf(f, "%s<%s%s?%spage=%lld>; rel=\"%s\"", first ? "" : ", ",
                                rq->base_url, rq->path, q, (long long)rels[i].page, rels[i].rel);
                        first = false;
                }
                if (fclose(f) != 0 || !link)
                        return -ENOMEM;
                if (linklen > 0 &&
                    twin_reply_header(rp, "Link", twin_json_string_lossy(link, linklen)) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(slice);
        return 0;
}

/*
 * Replaces issues[idx] (pull_requests[idx] when next is a pull request) of repo with next
 * when it differs from the current row (ignoring updated_at, which then becomes now). Sets the tape
 * delta. Returns 0 or -ENOMEM.
 */
int gh_issue_commit(TwinCall *c, TwinReply *rp, json_t *repo, size_t idx, json_t *next)
{
        /* next is a copy of the row: a pull request's stays in pull_requests */
        json_t *issues = json_object_get(repo, gh_is_pull(next) ? "pull_requests" : "issues");
        _cleanup_json_ json_t *before = json_incref(json_array_get(issues, idx));
        if (json_equal(before, next))
                return 0;
        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        if (json_object_set_new(next, "updated_at", json_string(now)) < 0 ||
            json_array_set(issues, idx, next) < 0)
                return -ENOMEM;
        return twin_reply_mutation(rp, before, next);
}

static json_t *github_public_state(const json_t *world)
{
        /* nothing in a github world is secret; the id counter is bookkeeping, not state */
        json_t *s = json_deep_copy(world);
        if (s)
                json_object_del(s, "next_id");
        return s;
}

static const TwinHandler github_handlers[] = {
        {"get_me", gh_act_get_me},
        {"get_user", gh_act_get_user},
        {"get_org", gh_act_get_org},
        {"get_rate_limit", gh_act_get_rate_limit},
        {"graphql", gh_act_graphql},
        {"list_git_refs", gh_act_list_git_refs},
        {"get_repository", gh_act_get_repository},
        /* issues, comments, assignees (issues.c), labels and milestones (labels.c) */
        {"list_issues", gh_act_list_issues},
        {"issue_read", gh_act_issue_read},
        {"issue_write", gh_act_issue_write},
        {"create_issue", gh_act_create_issue},
        {"add_issue_comment", gh_act_add_issue_comment},
        {"add_issue_assignees", gh_act_add_issue_assignees},
        {"remove_issue_assignees", gh_act_remove_issue_assignees},
        {"list_assignees", gh_act_list_assignees},
        {"check_user_can_be_assigned", gh_act_check_user_can_be_assigned},
        {"add_issue_labels", gh_act_add_issue_labels},
        {"set_issue_labels", gh_act_set_issue_labels},
        {"remove_issue_label", gh_act_remove_issue_label},
        {"remove_all_issue_labels", gh_act_remove_all_issue_labels},
        {"list_issue_comments_for_repo", gh_act_list_issue_comments_for_repo},
        {"get_issue_comment", gh_act_get_issue_comment},
        {"update_issue_comment", gh_act_update_issue_comment},
        {"delete_issue_comment", gh_act_delete_issue_comment},
        {"list_labels", gh_act_list_labels},
        {"create_label", gh_act_create_label},
        {"get_label", gh_act_get_label},
        {"update_label", gh_act_update_label},
        {"delete_label", gh_act_delete_label},
        {"list_milestones", gh_act_list_milestones},
        {"create_milestone", gh_act_create_milestone},
        {"get_milestone", gh_act_get_milestone},
        {"update_milestone", gh_act_update_milestone},
        {"delete_milestone", gh_act_delete_milestone},
        {"search_issues", gh_act_search_issues},
        /* pull requests, reviews, statuses and checks (pulls.c, reviews.c, checks.c) */
        {"list_pull_requests", gh_act_list_pull_requests},
        {"pull_request_read", gh_act_pull_request_read},
        {"create_pull_request", gh_act_create_pull_request},
        {"update_pull_request", gh_act_update_pull_request},
        {"update_pull_request_branch", gh_act_update_pull_request_branch},
        {"merge_pull_request", gh_act_merge_pull_request},
        {"pull_request_review_write", gh_act_pull_request_review_write},
        {"create_pull_request_review", gh_act_create_pull_request_review},
        {"add_reply_to_pull_request_comment", gh_act_add_reply_to_pull_request_comment},
        {"get_pull_request_commits", gh_act_get_pull_request_commits},
        {"get_pull_request_review", gh_act_get_pull_request_review},
        {"create_pull_request_review_comment", gh_act_create_pull_request_review_comment},
        {"request_reviewers", gh_act_request_reviewers},
        {"remove_requested_reviewers", gh_act_remove_requested_reviewers},
        {"list_requested_reviewers", gh_act_list_requested_reviewers},
        {"create_commit_status", gh_act_create_commit_status},
        {"list_commit_statuses", gh_act_list_commit_statuses},
        {"get_combined_status_for_ref", gh_act_get_combined_status_for_ref},
        {"create_check_run", gh_act_create_check_run},
        {"get_check_run", gh_act_get_check_run},
        {"update_check_run", gh_act_update_check_run},
        {"list_check_runs_for_ref", gh_act_list_check_runs_for_ref},
        {"check_pull_request_merged", gh_act_check_pull_request_merged},
        {"update_pull_request_review", gh_act_update_pull_request_review},
        {"dismiss_pull_request_review", gh_act_dismiss_pull_request_review},
        {"get_pull_request_review_comment", gh_act_get_pull_request_review_comment},
        {"update_pull_request_review_comment", gh_act_update_pull_request_review_comment},
        {"delete_pull_request_review_comment", gh_act_delete_pull_request_review_comment},
        {"list_pull_requests_associated_with_commit",
         gh_act_list_pull_requests_associated_with_commit},
        {"list_review_comments_for_repo", gh_act_list_review_comments_for_repo},
        /* gh-git: repos.c, contents.c, search.c, gitdata.c */
        {"create_repository", gh_act_create_repository},
        {"fork_repository", gh_act_fork_repository},
        {"list_branches", gh_act_list_branches},
        {"get_branch", gh_act_get_branch},
        {"create_branch", gh_act_create_branch},
        {"get_git_ref", gh_act_get_git_ref},
        {"delete_branch", gh_act_delete_branch},
        {"list_repository_collaborators", gh_act_list_repository_collaborators},
        {"check_collaborator", gh_act_check_collaborator},
        {"add_repository_collaborator", gh_act_add_repository_collaborator},
        {"list_tags", gh_act_list_tags},
        {"get_tag", gh_act_get_tag},
        {"list_releases", gh_act_list_releases},
        {"get_latest_release", gh_act_get_latest_release},
        {"get_release_by_tag", gh_act_get_release_by_tag},
        {"create_release", gh_act_create_release},
        {"get_file_contents", gh_act_get_file_contents},
        {"create_or_update_file", gh_act_create_or_update_file},
        {"delete_file", gh_act_delete_file},
        {"push_files", gh_act_push_files},
        {"list_commits", gh_act_list_commits},
        {"get_commit", gh_act_get_commit},
        {"compare_commits", gh_act_compare_commits},
        {"search_code", gh_act_search_code},
        {"search_commits", gh_act_search_commits},
        {"search_repositories", gh_act_search_repositories},
        {"search_users", gh_act_search_users},
        {"get_git_blob", gh_act_get_git_blob},
        {"create_git_blob", gh_act_create_git_blob},
        {"get_git_tree", gh_act_get_git_tree},
        {"create_git_tree", gh_act_create_git_tree},
        {"get_git_commit", gh_act_get_git_commit},
        {"create_git_commit", gh_act_create_git_commit},
        {"update_git_ref", gh_act_update_git_ref},
        {"list_repositories_for_authenticated_user",
         gh_act_list_repositories_for_authenticated_user},
        {"list_repositories_for_user", gh_act_list_repositories_for_user},
        {"list_org_repositories", gh_act_list_org_repositories},
        {"get_readme", gh_act_get_readme},
        {"update_repository", gh_act_update_repository},
        {"delete_repository", gh_act_delete_repository},
        {"get_branch_protection", gh_act_get_branch_protection},
        {"update_branch_protection", gh_act_update_branch_protection},
};

/*
 * What api.github.com sends on every REST reply: the X-RateLimit-* headers of the call's
 * resource (docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api: core 5000 an
 * hour, search 30 a minute, graphql 5000 points; the twin limits no one, so nothing is ever
 * used), and on a successful read an ETag, a conditional read (If-None-Match) of an unchanged
 * representation being 304 without a body ("Use conditional requests if appropriate").
 */
static int github_vendor_headers(const TwinRequest *rq, int64_t now, TwinReply *rp)
{
        const char *resource = startswith(rq->path, "/search/") ? "search"
                               : endswith(rq->path, "/graphql") ? "graphql"
                                                                : "core";
        const char *limit = streq(resource, "search") ? "30" : "5000";
        char reset[DECIMAL_MAX];
        int r;
        if ((r = twin_reply_header(rp, "X-RateLimit-Limit", json_string(limit))) < 0 ||
            (r = twin_reply_header(rp, "X-RateLimit-Remaining", json_string(limit))) < 0 ||
            (r = twin_reply_header(
                     rp, "X-RateLimit-Reset",
                     json_string(format_int(reset, streq(resource, "search") ? now + 60
                                                                             : now + 3600)))) < 0 ||
            (r = twin_reply_header(rp, "X-RateLimit-Used", json_string("0"))) < 0 ||
            (r = twin_reply_header(rp, "X-RateLimit-Resource", json_string(resource))) < 0)
                return r;
        if (rp->status != 200 || !rp->body ||
            !(streq(rq->method, "GET") || streq(rq->method, "HEAD")))
                return 0;
        _cleanup_free_ char *dump = json_dumps(rp->body, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!dump)
                return -ENOMEM;
        char hex[TWIN_SHA1_HEX], etag[TWIN_SHA1_HEX + 8];
        twin_sha1_hex(dump, strlen(dump), hex);
        snprintf(etag, sizeof(etag), "W/\"%s\"", hex);
        if ((r = twin_reply_header(rp, "ETag", json_string(etag))) < 0)
                return r;
        /* If-None-Match: a list of tags, weakly compared (RFC 9110 §13.1.2) */
        const char *inm = json_get_str(rq->headers, "if-none-match");
        bool match = false;
        for (const char *p = inm; p && *p && !match;) {
                p += strspn(p, " \t,");
                size_t n = strcspn(p, ",");
                while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
                        n--;
                const char *tag = p;
                size_t tn = n;
                if (tn >= 2 && startswith(tag, "W/")) {
                        tag += 2;
                        tn -= 2;
                }
                match = (n == 1 && p[0] == '*') ||
                        (tn == strlen(etag) - 2 && memcmp(tag, etag + 2, tn) == 0);
                p += n;
        }
        if (match) {
                rp->status = 304;
                json_decref(rp->body);
                rp->body = NULL;
        }
        return 0;
}

const TwinKind twin_kind_github = {
        .name = "github",
        .implementation = "pome-github",
        .flags = TWIN_KIND_JSON_BODY,
        .surface = &twin_surface_github,
        .handlers = github_handlers,
        .n_handlers = ELEMENTSOF(github_handlers),
        /* REST at https://api.github.com (docs.github.com/rest, "Getting started with the
         * REST API"); the rest of github.com is its web site and git, which the twin answers
         * with its loud 501 */
        .vendor_hosts = (const char *const[]){"api.github.com", "github.com", NULL},
        .load_seed = github_load_seed,
        .public_state = github_public_state,
        .auth_error = github_auth_error,
        .error = gh_error,
        .vendor_headers = github_vendor_headers,
        .control_error = github_control_error,
        .health_extras = github_health_extras,
        /* every api.github.com reply names its request in X-GitHub-Request-Id, which the
         * docs ask to quote to support and octokit's errors carry */
        .request_id_header = "X-GitHub-Request-Id",
};
