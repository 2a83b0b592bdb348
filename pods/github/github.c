/* SPDX-License-Identifier: MIT */
/*
 * The GitHub twin (kind "github"): issues, comments, labels and assignees of the REST v3
 * API (https://docs.github.com/rest), shaped closely enough for @octokit/rest.
 *
 * The world is the normalised seed; bodies are rendered from it per call (urls point at
 * the mount's base_url, html_url at github.com as on the real service):
 *   viewer        login of the authenticated user: the seed's "viewer", else the first
 *                 seeded user of type User, else "pome-agent" (added to users)
 *   users[]       {login, id, node_id, type: User|Organization|Bot, name, email}
 *   repositories[] {id, node_id, owner (login), name, description, private, default_branch,
 *                 created_at, updated_at, collaborators[logins], labels[{id, node_id, name,
 *                 color, description, default}], milestones[{id, node_id, number, title,
 *                 description, state, due_on}], files[{path, content}], issues[], pull_requests[]}
 *   issue         {id, node_id, number, title, body, state, state_reason, locked, user (login),
 *                 labels[names], assignees[logins], milestone (number|null), comments[{id,
 *                 node_id, body, user, created_at, updated_at}], created_at, updated_at, closed_at}
 *   next_id       the next numeric id (ids and node_ids are deterministic: same seed, same world)
 * Every login a seed mentions (owners, collaborators, authors, assignees) is a user of the
 * world, added in order of appearance when the seed's users[] lacks it.
 *
 * Behaviour choices, each mirroring github.com: labels named on an issue that the repository
 * lacks are created (color "ededed"); assignees who are not users of the world (or are
 * organisations) are silently dropped; a private repository is a 404 to a viewer who is
 * neither its owner nor a collaborator. There is no other permission model.
 */
#include <strings.h>

#include "common/json-util.h"
#include "pods/twin/kind.h"

#define DOCS_URL     "https://docs.github.com/rest"
#define HTML_BASE    "https://github.com"
#define SEED_TIME    "2026-01-01T00:00:00Z"
#define DEFAULT_USER "pome-agent"

/* ------------------------------------------------------------------ world helpers */

static json_t *world_users(json_t *w)
{
        return json_object_get(w, "users");
}

static json_t *user_find(json_t *w, const char *login)
{
        size_t i;
        json_t *u;
        json_array_foreach (world_users(w), i, u) {
                if (strcasecmp(json_get_str(u, "login"), login) == 0)
                        return u;
        }
        return NULL;
}

static int64_t alloc_id(json_t *w)
{
        int64_t id = json_integer_value(json_object_get(w, "next_id"));
        if (id < 1)
                id = 1;
        /* the world owns this counter so the same seed and calls give the same ids */
        json_object_set_new(w, "next_id", json_integer(id + 1));
        return id;
}

/* GitHub's legacy global node id: base64("<len(type):02>:<type><id>"), e.g. "MDU6SXNzdWUx". */
static json_t *node_id(const char *type, int64_t id)
{
        char raw[64];
        int n = snprintf(raw, sizeof(raw), "%02zu:%s%lld", strlen(type), type, (long long)id);
        _cleanup_free_ char *b = twin_base64(raw, (size_t)n);
        return b ? json_string(b) : NULL;
}

/* The world's user called login, added (as type) when missing. NULL on OOM. */
static json_t *user_ensure(json_t *w, const char *login, const char *type)
{
        json_t *u = user_find(w, login);
        if (u)
                return u;
        int64_t id = alloc_id(w);
        u = json_pack("{s:s, s:I, s:o, s:s, s:n, s:n}", "login", login, "id", (json_int_t)id,
                      "node_id", node_id(type, id), "type", type, "name", "email");
        if (json_array_append_new(world_users(w), u) < 0)
                return NULL;
        return u;
}

static bool login_valid(const char *s)
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

static bool repo_name_valid(const char *s)
{
        size_t n = strlen(s);
        return n > 0 && n <= 100 && !streq(s, ".") && !streq(s, "..") &&
               strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

static json_t *repo_find(json_t *w, const char *owner, const char *name)
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

static bool strv_has(const json_t *a, const char *s)
{
        size_t i;
        json_t *v;
        json_array_foreach (a, i, v) {
                if (strcasecmp(json_string_value(v), s) == 0)
                        return true;
        }
        return false;
}

static bool repo_member(json_t *repo, const char *login)
{
        return strcasecmp(json_get_str(repo, "owner"), login) == 0 ||
               strv_has(json_object_get(repo, "collaborators"), login);
}

static json_t *label_find(json_t *repo, const char *name)
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
static json_t *label_ensure(json_t *w, json_t *repo, const char *name, const char *color,
                            const char *description, int is_default)
{
        json_t *l = label_find(repo, name);
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
        int64_t id = alloc_id(w);
        l = json_pack("{s:I, s:o, s:s, s:s, s:s?, s:b}", "id", (json_int_t)id, "node_id",
                      node_id("Label", id), "name", name, "color", color ? color : "ededed",
                      "description", description, "default", is_default > 0);
        if (json_array_append_new(json_object_get(repo, "labels"), l) < 0)
                return NULL;
        return l;
}

/* Largest issue or pull request number of repo (they share one sequence). */
static int64_t max_number(json_t *repo)
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

static json_t *number_find(json_t *repo, const char *list, int64_t number, size_t *ret_idx)
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

static bool time_valid(const char *s)
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
        if (*ret && !time_valid(*ret))
                return twin_seed_error(s->err, s->errlen,
                                       "%s.%s: must be a UTC time like \"2026-01-01T00:00:00Z\"",
                                       path, key);
        return 0;
}

/* A login reference (string) that becomes a user of the world. */
static int seed_login(TwinSeed *s, json_t *v, const char *path, const char **ret)
{
        if (!json_is_string(v) || !login_valid(json_string_value(v)))
                return twin_seed_error(s->err, s->errlen,
                                       "%s: must be a GitHub login (letters, digits, '-')", path);
        json_t *u = user_ensure(s->world, json_string_value(v), "User");
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
                r = seed_login(s, l, p, &login);
                if (r < 0)
                        return r;
                if (!strv_has(out, login) && json_array_append_new(out, json_string(login)) < 0)
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
                if (!json_is_string(login) || !login_valid(json_string_value(login)))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s: needs a login (letters, digits, '-')", p);
                if (user_find(s->world, json_string_value(login)))
                        return twin_seed_error(s->err, s->errlen, "%s: duplicate login \"%s\"", p,
                                               json_string_value(login));
                const char *type = "User", *name = NULL, *email = NULL;
                if (json_is_object(v) &&
                    ((r = twin_seed_str(s, v, "type", p, "User", TWIN_NULL_REFUSED, &type)) < 0 ||
                     (r = twin_seed_str(s, v, "name", p, NULL, TWIN_NULL_KEPT, &name)) < 0 ||
                     (r = twin_seed_str(s, v, "email", p, NULL, TWIN_NULL_KEPT, &email)) < 0))
                        return r;
                if (!streq(type, "User") && !streq(type, "Organization") && !streq(type, "Bot"))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.type: must be User, Organization or Bot", p);
                json_t *u = user_ensure(s->world, json_string_value(login), type);
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
                json_array_foreach (world_users(s->world), i, u) {
                        if (streq(json_get_str(u, "type"), "User")) {
                                login = json_get_str(u, "login");
                                break;
                        }
                }
                if (!login) {
                        if (!user_ensure(s->world, DEFAULT_USER, "User"))
                                return -ENOMEM;
                        login = DEFAULT_USER;
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
                if (label_find(repo, json_string_value(name)))
                        return twin_seed_error(s->err, s->errlen, "%s: duplicate label \"%s\"", p,
                                               json_string_value(name));
                if (json_is_object(v) &&
                    ((r = twin_seed_str(s, v, "color", p, NULL, TWIN_NULL_REFUSED, &color)) < 0 ||
                     (r = twin_seed_str(s, v, "description", p, NULL, TWIN_NULL_KEPT, &desc)) < 0 ||
                     (r = twin_seed_bool(s, v, "default", p, false, &def)) < 0))
                        return r;
                if (color && color[0] == '#')
                        color++;
                if (color && (strlen(color) != 6 || strspn(color, "0123456789abcdefABCDEF") != 6))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.color: must be 6 hex digits like \"d73a4a\"", p);
                if (!label_ensure(s->world, repo, json_string_value(name), color, desc,
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
                if ((r = twin_seed_str(s, v, "title", p, NULL, TWIN_NULL_REFUSED, &title)) < 0 ||
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
                if (number_find(repo, "milestones", n, NULL))
                        return twin_seed_error(s->err, s->errlen, "%s: duplicate number %lld", p,
                                               (long long)n);
                int64_t id = alloc_id(s->world);
                json_t *m = json_pack("{s:I, s:o, s:I, s:s, s:s?, s:s, s:s?}", "id", (json_int_t)id,
                                      "node_id", node_id("Milestone", id), "number", (json_int_t)n,
                                      "title", title, "description", desc, "state", state, "due_on",
                                      due);
                if (json_array_append_new(out, m) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int seed_files(TwinSeed *s, const json_t *r0, json_t *repo, const char *path)
{
        json_t *a;
        int r = twin_seed_array(s, r0, "files", path, &a);
        if (r < 0)
                return r;
        size_t i;
        json_t *v;
        json_array_foreach (a, i, v) {
                char p[256];
                snprintf(p, sizeof(p), "%s.files[%zu]", path, i);
                const char *fpath, *content;
                if (!json_is_object(v))
                        return twin_seed_error(s->err, s->errlen, "%s: must be an object", p);
                if ((r = twin_seed_str(s, v, "path", p, NULL, TWIN_NULL_REFUSED, &fpath)) < 0 ||
                    (r = twin_seed_str(s, v, "content", p, "", TWIN_NULL_REFUSED, &content)) < 0)
                        return r;
                if (!fpath || !fpath[0] || fpath[0] == '/')
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.path: needs a relative path like \"README.md\"",
                                               p);
                if (json_array_append_new(
                            json_object_get(repo, "files"),
                            json_pack("{s:s, s:s}", "path", fpath, "content", content)) < 0)
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
                else if ((r = twin_seed_str(s, v, "body", p, NULL, TWIN_NULL_REFUSED, &body)) < 0)
                        return r;
                if (!body)
                        return twin_seed_error(s->err, s->errlen, "%s: needs a body", p);
                if (ju && (r = seed_login(s, ju, pu, &user)) < 0)
                        return r;
                if ((r = seed_time(s, v, "created_at", p, created, &c_at)) < 0 ||
                    (r = seed_time(s, v, "updated_at", p, c_at, &u_at)) < 0)
                        return r;
                int64_t id = alloc_id(s->world);
                json_t *c = json_pack("{s:I, s:o, s:s, s:s, s:s, s:s}", "id", (json_int_t)id,
                                      "node_id", node_id("IssueComment", id), "body", body, "user",
                                      user, "created_at", c_at ? c_at : SEED_TIME, "updated_at",
                                      u_at ? u_at : SEED_TIME);
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

        json_t *num = json_object_get(v, "number");
        int64_t number = max_number(repo) + 1;
        if (num) {
                if (!json_is_integer(num) || json_integer_value(num) < 1 ||
                    json_integer_value(num) > INT32_MAX)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.number: must be a positive integer", path);
                number = json_integer_value(num);
        }
        if (number_find(repo, "issues", number, NULL) ||
            number_find(repo, "pull_requests", number, NULL))
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
            (r = seed_time(s, v, "created_at", path, SEED_TIME, &c_at)) < 0 ||
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
                json_t *lab = label_ensure(s->world, repo, json_string_value(name), NULL, NULL, -1);
                if (!lab)
                        return -ENOMEM;
                if (!strv_has(labels, json_get_str(lab, "name")) &&
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
                if (!strv_has(assignees, login) &&
                    json_array_insert_new(assignees, 0, json_string(login)) < 0)
                        return -ENOMEM;
        }

        json_t *ms = json_object_get(v, "milestone");
        if (ms && !json_is_null(ms)) {
                /* a milestone number, or {number} as the API renders it */
                json_t *n = json_is_object(ms) ? json_object_get(ms, "number") : ms;
                if (!json_is_integer(n) ||
                    !number_find(repo, "milestones", json_integer_value(n), NULL))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.milestone: must be the number of one of the "
                                               "repository's milestones",
                                               path);
                ms = n;
        } else
                ms = NULL;

        int64_t id = alloc_id(s->world);
        _cleanup_json_ json_t *row = json_pack(
                "{s:I, s:o, s:I, s:s, s:s?, s:s, s:s?, s:b, s:s, s:O, s:O, s:O?, s:[], s:s, s:s, "
                "s:s?}",
                "id", (json_int_t)id, "node_id", node_id(is_pr ? "PullRequest" : "Issue", id),
                "number", (json_int_t)number, "title", title, "body", body, "state", state,
                "state_reason", reason, "locked", locked, "user", user, "labels", labels,
                "assignees", assignees, "milestone", ms, "comments", "created_at", c_at,
                "updated_at", u_at, "closed_at", cl_at);
        if (!row)
                return -ENOMEM;
        if (is_pr) {
                const char *head, *base;
                json_t *reviews;
                if ((r = twin_seed_str(s, v, "head", path, "feature", TWIN_NULL_REFUSED, &head)) <
                            0 ||
                    (r = twin_seed_str(s, v, "base", path, json_get_str(repo, "default_branch"),
                                       TWIN_NULL_REFUSED, &base)) < 0 ||
                    (r = twin_seed_array(s, v, "reviews", path, &reviews)) < 0)
                        return r;
                if (json_object_set_new(row, "merged", json_boolean(merged)) < 0 ||
                    json_object_set_new(row, "merged_at",
                                        merged ? json_string(cl_at) : json_null()) < 0 ||
                    json_object_set_new(row, "draft", json_boolean(draft)) < 0 ||
                    json_object_set_new(row, "head", json_string(head)) < 0 ||
                    json_object_set_new(row, "base", json_string(base)) < 0 ||
                    json_object_set_new(row, "reviews",
                                        reviews ? json_deep_copy(reviews) : json_array()) < 0)
                        return -ENOMEM;
        }
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
        if (!owner || !login_valid(owner))
                return twin_seed_error(s->err, s->errlen,
                                       "%s.owner: needs the owner's login (letters, digits, '-')",
                                       path);
        if (!name || !repo_name_valid(name))
                return twin_seed_error(s->err, s->errlen,
                                       "%s.name: needs a repository name (letters, digits, '.', "
                                       "'_', '-')",
                                       path);
        if (repo_find(s->world, owner, name))
                return twin_seed_error(s->err, s->errlen, "%s: duplicate repository %s/%s", path,
                                       owner, name);
        if ((r = twin_seed_str(s, v, "description", path, NULL, TWIN_NULL_KEPT, &desc)) < 0 ||
            (r = twin_seed_bool(s, v, "private", path, false, &priv)) < 0 ||
            (r = twin_seed_str(s, v, "default_branch", path, "main", TWIN_NULL_REFUSED, &branch)) <
                    0 ||
            (r = seed_time(s, v, "created_at", path, SEED_TIME, &c_at)) < 0 ||
            (r = seed_time(s, v, "updated_at", path, c_at, &u_at)) < 0)
                return r;

        json_t *o = user_ensure(s->world, owner, "User");
        if (!o)
                return -ENOMEM;
        _cleanup_json_ json_t *collabs = NULL;
        if ((r = seed_logins(s, v, "collaborators", path, &collabs)) < 0)
                return r;
        int64_t id = alloc_id(s->world);
        _cleanup_json_ json_t *repo = json_pack(
                "{s:I, s:o, s:s, s:s, s:s?, s:b, s:s, s:s, s:s, s:O, s:[], s:[], s:[], s:[], s:[]}",
                "id", (json_int_t)id, "node_id", node_id("Repository", id), "owner",
                json_get_str(o, "login"), "name", name, "description", desc, "private", priv,
                "default_branch", branch, "created_at", c_at, "updated_at", u_at, "collaborators",
                collabs, "labels", "milestones", "files", "issues", "pull_requests");
        if (!repo || json_array_append(json_object_get(s->world, "repositories"), repo) < 0)
                return -ENOMEM;

        if ((r = seed_labels(s, v, repo, path)) < 0 ||
            (r = seed_milestones(s, v, repo, path)) < 0 || (r = seed_files(s, v, repo, path)) < 0)
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
        int r = twin_seed_keys(seed, "github", keys, ELEMENTSOF(keys), err, errlen);
        if (r < 0)
                return r;

        _cleanup_json_ json_t *world =
                json_pack("{s:[], s:[], s:I}", "users", "repositories", "next_id", (json_int_t)1);
        if (!world)
                return -ENOMEM;
        TwinSeed s = {.world = world, .err = err, .errlen = errlen};
        if ((r = seed_users(&s, seed)) < 0)
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

/* ------------------------------------------------------------------ errors */

static void github_error(int status, const char *code, const char *message, TwinReply *rp)
{
        char st[8];
        snprintf(st, sizeof(st), "%d", status);
        if (streq_ptr(code, "invalid_json"))
                message = "Problems parsing JSON";
        else if (status >= 500 || !message)
                message = status >= 500 ? "Server Error" : "Error";
        twin_reply_json(rp, status,
                        json_pack("{s:s, s:s, s:s}", "message", message, "documentation_url",
                                  DOCS_URL, "status", st));
}

/* GitHub "Authenticating to the REST API": no token 401 "Requires authentication", a bad or
 * expired one 401 "Bad credentials"; a good token without access to the resource 403. */
static void github_auth_error(TwinAuthFailure why, TwinReply *rp)
{
        switch (why) {
        case TWIN_AUTH_MISSING:
                github_error(401, NULL, "Requires authentication", rp);
                return;
        case TWIN_AUTH_WRONG_SESSION:
                github_error(403, NULL, "Forbidden", rp);
                return;
        case TWIN_AUTH_INVALID:
        case TWIN_AUTH_EXPIRED:
                break;
        }
        github_error(401, NULL, "Bad credentials", rp);
}

static int not_found(TwinReply *rp)
{
        github_error(404, NULL, "Not Found", rp);
        return rp->body ? 0 : -ENOMEM;
}

/* 422 Validation Failed with one {resource, field, code} (GitHub "Client errors"). */
static int invalid(TwinReply *rp, const char *resource, const char *field, const char *code)
{
        return twin_reply_body(rp, 422,
                               json_pack("{s:s, s:[{s:s, s:s, s:s}], s:s, s:s}", "message",
                                         "Validation Failed", "errors", "resource", resource,
                                         "field", field, "code", code, "documentation_url",
                                         DOCS_URL, "status", "422"));
}

/* ------------------------------------------------------------------ rendering */

static json_t *render_user(TwinCall *c, const char *login)
{
        json_t *u = login ? user_find(c->world, login) : NULL;
        if (!login)
                return json_null();
        const char *l = u ? json_get_str(u, "login") : login;
        _cleanup_free_ char *url = NULL, *html = NULL;
        if (asprintf(&url, "%s/users/%s", c->base_url, l) < 0 ||
            asprintf(&html, HTML_BASE "/%s", l) < 0)
                return NULL;
        return json_pack("{s:s, s:I, s:O, s:s, s:s, s:s, s:s, s:s, s:b}", "login", l, "id",
                         json_integer_value(json_object_get(u, "id")), "node_id",
                         u ? json_object_get(u, "node_id") : json_null(), "avatar_url", "",
                         "gravatar_id", "", "url", url, "html_url", html, "type",
                         u ? json_get_str(u, "type") : "User", "site_admin", false);
}

static json_t *render_label(TwinCall *c, json_t *repo, const char *name)
{
        json_t *l = label_find(repo, name);
        _cleanup_free_ char *url = NULL;
        if (asprintf(&url, "%s/repos/%s/%s/labels/%s", c->base_url, json_get_str(repo, "owner"),
                     json_get_str(repo, "name"), name) < 0)
                return NULL;
        return json_pack("{s:I, s:O, s:s, s:s, s:s, s:b, s:O}", "id",
                         json_integer_value(json_object_get(l, "id")), "node_id",
                         l ? json_object_get(l, "node_id") : json_null(), "url", url, "name",
                         l ? json_get_str(l, "name") : name, "color",
                         l ? json_get_str(l, "color") : "ededed", "default",
                         json_is_true(json_object_get(l, "default")), "description",
                         l ? json_object_get(l, "description") : json_null());
}

static json_t *render_labels(TwinCall *c, json_t *repo, json_t *names)
{
        _cleanup_json_ json_t *a = json_array();
        size_t i;
        json_t *n;
        if (!a)
                return NULL;
        json_array_foreach (names, i, n) {
                if (json_array_append_new(a, render_label(c, repo, json_string_value(n))) < 0)
                        return NULL;
        }
        return TAKE_PTR(a);
}

static const char *association(json_t *repo, const char *login)
{
        if (strcasecmp(json_get_str(repo, "owner"), login) == 0)
                return "OWNER";
        if (strv_has(json_object_get(repo, "collaborators"), login))
                return "COLLABORATOR";
        return "NONE";
}

static json_t *render_milestone(TwinCall *c, json_t *repo, json_t *number)
{
        json_t *m = json_is_integer(number)
                            ? number_find(repo, "milestones", json_integer_value(number), NULL)
                            : NULL;
        if (!m)
                return json_null();
        _cleanup_free_ char *url = NULL;
        if (asprintf(&url, "%s/repos/%s/%s/milestones/%lld", c->base_url,
                     json_get_str(repo, "owner"), json_get_str(repo, "name"),
                     (long long)json_integer_value(number)) < 0)
                return NULL;
        return json_pack("{s:O, s:O, s:s, s:O, s:O, s:O, s:O, s:O}", "id", json_object_get(m, "id"),
                         "node_id", json_object_get(m, "node_id"), "url", url, "number", number,
                         "title", json_object_get(m, "title"), "description",
                         json_object_get(m, "description"), "state", json_object_get(m, "state"),
                         "due_on", json_object_get(m, "due_on"));
}

static json_t *render_issue(TwinCall *c, json_t *repo, json_t *issue)
{
        const char *owner = json_get_str(repo, "owner"), *name = json_get_str(repo, "name");
        long long n = json_integer_value(json_object_get(issue, "number"));
        _cleanup_free_ char *repo_url = NULL, *url = NULL, *html = NULL;
        if (asprintf(&repo_url, "%s/repos/%s/%s", c->base_url, owner, name) < 0 ||
            asprintf(&url, "%s/issues/%lld", repo_url, n) < 0 ||
            asprintf(&html, HTML_BASE "/%s/%s/issues/%lld", owner, name, n) < 0)
                return NULL;
        _cleanup_free_ char *labels_url = NULL, *comments_url = NULL, *events_url = NULL;
        if (asprintf(&labels_url, "%s/labels{/name}", url) < 0 ||
            asprintf(&comments_url, "%s/comments", url) < 0 ||
            asprintf(&events_url, "%s/events", url) < 0)
                return NULL;

        json_t *assignees = json_object_get(issue, "assignees");
        _cleanup_json_ json_t *rendered = json_array();
        size_t i;
        json_t *a;
        if (!rendered)
                return NULL;
        json_array_foreach (assignees, i, a) {
                if (json_array_append_new(rendered, render_user(c, json_string_value(a))) < 0)
                        return NULL;
        }
        const char *user = json_get_str(issue, "user");
        return json_pack(
                "{s:O, s:O, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:O, s:o, s:o, s:O, s:O, s:o, s:O,"
                " s:o, s:I, s:O, s:O, s:O, s:s, s:n, s:O, s:O}",
                "id", json_object_get(issue, "id"), "node_id", json_object_get(issue, "node_id"),
                "url", url, "repository_url", repo_url, "labels_url", labels_url, "comments_url",
                comments_url, "events_url", events_url, "html_url", html, "number", (json_int_t)n,
                "title", json_object_get(issue, "title"), "user", render_user(c, user), "labels",
                render_labels(c, repo, json_object_get(issue, "labels")), "state",
                json_object_get(issue, "state"), "locked", json_object_get(issue, "locked"),
                "assignee",
                json_array_size(rendered) ? json_incref(json_array_get(rendered, 0)) : json_null(),
                "assignees", rendered, "milestone",
                render_milestone(c, repo, json_object_get(issue, "milestone")), "comments",
                (json_int_t)json_array_size(json_object_get(issue, "comments")), "created_at",
                json_object_get(issue, "created_at"), "updated_at",
                json_object_get(issue, "updated_at"), "closed_at",
                json_object_get(issue, "closed_at"), "author_association", association(repo, user),
                "active_lock_reason", "body", json_object_get(issue, "body"), "state_reason",
                json_object_get(issue, "state_reason"));
}

static json_t *render_comment(TwinCall *c, json_t *repo, json_t *issue, json_t *comment)
{
        const char *owner = json_get_str(repo, "owner"), *name = json_get_str(repo, "name");
        long long n = json_integer_value(json_object_get(issue, "number"));
        long long id = json_integer_value(json_object_get(comment, "id"));
        _cleanup_free_ char *url = NULL, *html = NULL, *issue_url = NULL;
        if (asprintf(&url, "%s/repos/%s/%s/issues/comments/%lld", c->base_url, owner, name, id) <
                    0 ||
            asprintf(&html, HTML_BASE "/%s/%s/issues/%lld#issuecomment-%lld", owner, name, n, id) <
                    0 ||
            asprintf(&issue_url, "%s/repos/%s/%s/issues/%lld", c->base_url, owner, name, n) < 0)
                return NULL;
        const char *user = json_get_str(comment, "user");
        return json_pack("{s:I, s:O, s:s, s:s, s:s, s:O, s:o, s:O, s:O, s:s}", "id", (json_int_t)id,
                         "node_id", json_object_get(comment, "node_id"), "url", url, "html_url",
                         html, "issue_url", issue_url, "body", json_object_get(comment, "body"),
                         "user", render_user(c, user), "created_at",
                         json_object_get(comment, "created_at"), "updated_at",
                         json_object_get(comment, "updated_at"), "author_association",
                         association(repo, user));
}

static json_int_t open_count(json_t *repo)
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

static json_t *render_repo(TwinCall *c, json_t *repo)
{
        const char *owner = json_get_str(repo, "owner"), *name = json_get_str(repo, "name");
        const char *viewer = json_get_str(c->world, "viewer");
        bool member = viewer && repo_member(repo, viewer);
        bool admin = viewer && strcasecmp(owner, viewer) == 0;
        _cleanup_free_ char *full = NULL, *url = NULL, *html = NULL, *issues_url = NULL;
        if (asprintf(&full, "%s/%s", owner, name) < 0 ||
            asprintf(&url, "%s/repos/%s", c->base_url, full) < 0 ||
            asprintf(&html, HTML_BASE "/%s", full) < 0 ||
            asprintf(&issues_url, "%s/issues{/number}", url) < 0)
                return NULL;
        json_int_t open = open_count(repo);
        bool priv = json_is_true(json_object_get(repo, "private"));
        return json_pack(
                "{s:O, s:O, s:O, s:s, s:o, s:b, s:s, s:O, s:b, s:s, s:s, s:O, s:O, "
                "s:O, s:O, s:I, s:I, s:b, s:b, s:b, s:s, s:[], s:{s:b, s:b, s:b, s:b, "
                "s:b}}",
                "id", json_object_get(repo, "id"), "node_id", json_object_get(repo, "node_id"),
                "name", json_object_get(repo, "name"), "full_name", full, "owner",
                render_user(c, owner), "private", priv, "html_url", html, "description",
                json_object_get(repo, "description"), "fork", false, "url", url, "issues_url",
                issues_url, "created_at", json_object_get(repo, "created_at"), "updated_at",
                json_object_get(repo, "updated_at"), "pushed_at",
                json_object_get(repo, "updated_at"), "default_branch",
                json_object_get(repo, "default_branch"), "open_issues_count", open, "open_issues",
                open, "has_issues", true, "archived", false, "disabled", false, "visibility",
                priv ? "private" : "public", "topics", "permissions", "admin", admin, "maintain",
                admin, "push", member, "triage", member, "pull", true);
}

/* ------------------------------------------------------------------ argument resolution */

/*
 * Resolves args owner/repo to a repository the viewer may see. Returns 1 with *ret set,
 * 0 when rp now holds the refusal, negative errno.
 */
static int arg_repo(TwinCall *c, TwinReply *rp, json_t **ret)
{
        const char *owner, *name;
        int r = twin_arg_str(c->args, "owner", &owner);
        if (r < 0)
                return invalid(rp, "Repository", "owner",
                               r == -ENOENT ? "missing_field" : "invalid");
        r = twin_arg_str(c->args, "repo", &name);
        if (r < 0)
                return invalid(rp, "Repository", "repo",
                               r == -ENOENT ? "missing_field" : "invalid");
        json_t *repo = repo_find(c->world, owner, name);
        const char *viewer = json_get_str(c->world, "viewer");
        if (!repo || (json_is_true(json_object_get(repo, "private")) &&
                      !(viewer && repo_member(repo, viewer))))
                return not_found(rp);
        *ret = repo;
        return 1;
}

/*
 * Resolves args owner/repo as arg_repo does, then issue_number within that repository: the
 * preamble of every issue action. Same returns as arg_repo, with *ret_repo, *ret_issue and,
 * when ret_idx is not NULL, the issue's index in the repository's issues.
 */
static int arg_repo_issue(TwinCall *c, TwinReply *rp, json_t **ret_repo, json_t **ret_issue,
                          size_t *ret_idx)
{
        json_t *repo;
        int r = arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        int64_t n;
        r = twin_arg_int(c->args, "issue_number", 1, INT64_MAX, &n);
        if (r == -ENOENT)
                return invalid(rp, "Issue", "issue_number", "missing_field");
        /* a non-number never matches GitHub's route either: Not Found */
        json_t *issue = r < 0 ? NULL : number_find(repo, "issues", n, ret_idx);
        if (!issue)
                return not_found(rp);
        *ret_repo = repo;
        *ret_issue = issue;
        return 1;
}

/*
 * Label names from args[key]: an array of names or {name} objects, or a comma-separated
 * string. Returns 1 with a new array, 0 when absent (*ret NULL), 2 when malformed.
 */
static int arg_label_names(TwinCall *c, const char *key, json_t **ret)
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

/* Logins from args[key] that may be assigned (users of the world, not organisations). */
static int arg_assignees(TwinCall *c, const char *key, json_t **ret)
{
        json_t *v = json_object_get(c->args, key);
        _cleanup_json_ json_t *names = NULL;
        *ret = NULL;
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
                /* GitHub drops assignees it cannot assign instead of failing the call */
                json_t *u = user_find(c->world, json_string_value(n));
                if (!u || streq_ptr(json_get_str(u, "type"), "Organization"))
                        continue;
                if (!strv_has(out, json_get_str(u, "login")) &&
                    json_array_append(out, json_object_get(u, "login")) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(out);
        return 1;
}

/* Canonical label names on repo for names, creating the missing ones. */
static json_t *labels_ensure(TwinCall *c, json_t *repo, json_t *names)
{
        _cleanup_json_ json_t *out = json_array();
        size_t i;
        json_t *n;
        if (!out)
                return NULL;
        json_array_foreach (names, i, n) {
                json_t *l = label_ensure(c->world, repo, json_string_value(n), NULL, NULL, -1);
                if (!l)
                        return NULL;
                if (!strv_has(out, json_get_str(l, "name")) &&
                    json_array_append(out, json_object_get(l, "name")) < 0)
                        return NULL;
        }
        return TAKE_PTR(out);
}

/* query minus any page parameter, each kept piece followed by '&' ("state=all&"). */
static char *query_without_page(const char *query)
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
static int paginate(TwinCall *c, TwinReply *rp, json_t *items, json_t **ret)
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
                _cleanup_free_ char *link = NULL, *q = query_without_page(rq->query);
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
                if (!rp->headers && !(rp->headers = json_object()))
                        return -ENOMEM;
                if (linklen > 0 && json_object_set_new(rp->headers, "Link",
                                                       twin_json_string_lossy(link, linklen)) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(slice);
        return 0;
}

/*
 * Replaces issues[idx] of repo with next when it differs from the current row (ignoring
 * updated_at, which then becomes now). Sets the tape delta. Returns 0 or -ENOMEM.
 */
static int issue_commit(TwinCall *c, TwinReply *rp, json_t *repo, size_t idx, json_t *next)
{
        json_t *issues = json_object_get(repo, "issues");
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

/* ------------------------------------------------------------------ actions */

static int act_get_me(TwinCall *c, TwinReply *rp)
{
        const char *viewer = json_get_str(c->world, "viewer");
        json_t *u = viewer ? user_find(c->world, viewer) : NULL;
        _cleanup_json_ json_t *body = render_user(c, viewer);
        if (!u || !json_is_object(body))
                return body ? not_found(rp) : -ENOMEM;
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
                "created_at", SEED_TIME, "updated_at", SEED_TIME);
        if (!more || json_object_update(body, more) < 0)
                return -ENOMEM;
        twin_reply_json(rp, 200, TAKE_PTR(body));
        return 0;
}

static int act_get_repository(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        return twin_reply_body(rp, 200, render_repo(c, repo));
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
                if (!strv_has(json_object_get(issue, "labels"), json_string_value(l)))
                        return false;
        }
        json_t *assignees = json_object_get(issue, "assignees");
        if (assignee) {
                if (streq(assignee, "none") ? json_array_size(assignees) > 0
                    : streq(assignee, "*")  ? json_array_size(assignees) == 0
                                            : !strv_has(assignees, assignee))
                        return false;
        }
        if (creator && strcasecmp(strempty(json_get_str(issue, "user")), creator) != 0)
                return false;
        if (since && strcmp(strempty(json_get_str(issue, "updated_at")), since) < 0)
                return false;
        (void)c;
        return true;
}

static int act_list_issues(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;

        const char *state = "open", *assignee = NULL, *creator = NULL, *since = NULL,
                   *sort = "created", *direction = "desc";
        if (twin_arg_str(c->args, "state", &state) == -EINVAL ||
            (!streq(state, "open") && !streq(state, "closed") && !streq(state, "all")))
                return invalid(rp, "Issue", "state", "invalid");
        if (twin_arg_str(c->args, "sort", &sort) == -EINVAL ||
            (!streq(sort, "created") && !streq(sort, "updated") && !streq(sort, "comments")))
                return invalid(rp, "Issue", "sort", "invalid");
        if (twin_arg_str(c->args, "direction", &direction) == -EINVAL ||
            (!streq(direction, "asc") && !streq(direction, "desc")))
                return invalid(rp, "Issue", "direction", "invalid");
        if (twin_arg_str(c->args, "assignee", &assignee) == -EINVAL)
                return invalid(rp, "Issue", "assignee", "invalid");
        if (twin_arg_str(c->args, "creator", &creator) == -EINVAL)
                return invalid(rp, "Issue", "creator", "invalid");
        if (twin_arg_str(c->args, "since", &since) == -EINVAL)
                return invalid(rp, "Issue", "since", "invalid");
        _cleanup_json_ json_t *labels = NULL;
        r = arg_label_names(c, "labels", &labels);
        if (r < 0)
                return r;
        if (r == 2)
                return invalid(rp, "Issue", "labels", "invalid");

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
        r = paginate(c, rp, all, &page);
        if (r < 0)
                return r;
        _cleanup_json_ json_t *body = json_array();
        if (!body)
                return -ENOMEM;
        json_array_foreach (page, i, issue) {
                if (json_array_append_new(body, render_issue(c, repo, issue)) < 0)
                        return -ENOMEM;
        }
        twin_reply_json(rp, 200, TAKE_PTR(body));
        return 0;
}

static int act_get_issue(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *issue;
        int r = arg_repo_issue(c, rp, &repo, &issue, NULL);
        if (r <= 0)
                return r;
        return twin_reply_body(rp, 200, render_issue(c, repo, issue));
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
                return invalid(rp, "Issue", "title", r == 0 ? "missing_field" : "invalid");

        json_t *body = json_object_get(c->args, "body");
        if (body && !json_is_string(body) && !json_is_null(body))
                return invalid(rp, "Issue", "body", "invalid");

        _cleanup_json_ json_t *names = NULL;
        r = arg_label_names(c, "labels", &names);
        if (r < 0)
                return r;
        if (r == 2)
                return invalid(rp, "Issue", "labels", "invalid");

        _cleanup_json_ json_t *assignees = NULL;
        r = arg_assignees(c, "assignees", &assignees);
        if (r < 0)
                return r;
        if (r == 2)
                return invalid(rp, "Issue", "assignees", "invalid");
        json_t *one = json_object_get(c->args, "assignee");
        if (one && !json_is_string(one) && !json_is_null(one))
                return invalid(rp, "Issue", "assignee", "invalid");
        if (one && !assignees) {
                /* the legacy single "assignee": null clears, a login replaces */
                json_t *u =
                        json_is_string(one) ? user_find(c->world, json_string_value(one)) : NULL;
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
                if (r < 0 || !number_find(repo, "milestones", milestone, NULL))
                        return invalid(rp, "Issue", "milestone", "invalid");
        }

        if ((title && json_object_set_new(row, "title", json_string(title)) < 0) ||
            (body && json_object_set(row, "body", body) < 0) ||
            (assignees && json_object_set(row, "assignees", assignees) < 0) ||
            (ms && json_object_set_new(row, "milestone",
                                       milestone ? json_integer(milestone) : json_null()) < 0))
                return -ENOMEM;
        if (names) {
                json_t *labels = labels_ensure(c, repo, names);
                if (!labels || json_object_set_new(row, "labels", labels) < 0)
                        return -ENOMEM;
        }
        return 1;
}

static int act_create_issue(TwinCall *c, TwinReply *rp)
{
        json_t *repo;
        int r = arg_repo(c, rp, &repo);
        if (r <= 0)
                return r;
        const char *title;
        r = twin_arg_str(c->args, "title", &title);
        if (r < 0 || !title[0])
                return invalid(rp, "Issue", "title", r == -EINVAL ? "invalid" : "missing_field");

        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        _cleanup_json_ json_t *row = json_pack(
                "{s:I, s:s, s:n, s:s, s:n, s:b, s:s, s:[], s:[], s:n, s:[], s:s, s:s, s:n}",
                "number", (json_int_t)(max_number(repo) + 1), "title", title, "body", "state",
                "open", "state_reason", "locked", false, "user", json_get_str(c->world, "viewer"),
                "labels", "assignees", "milestone", "comments", "created_at", now, "updated_at",
                now, "closed_at");
        if (!row)
                return -ENOMEM;
        r = apply_fields(c, rp, repo, row);
        if (r <= 0)
                return r;
        /* ids only once the request is known valid: a refused call leaves the world alone */
        int64_t id = alloc_id(c->world);
        if (json_object_set_new(row, "id", json_integer(id)) < 0 ||
            json_object_set_new(row, "node_id", node_id("Issue", id)) < 0 ||
            json_array_append(json_object_get(repo, "issues"), row) < 0)
                return -ENOMEM;
        r = twin_reply_mutation(rp, NULL, row);
        if (r < 0)
                return r;
        return twin_reply_body(rp, 201, render_issue(c, repo, row));
}

static int act_update_issue(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *issue;
        size_t idx;
        int r = arg_repo_issue(c, rp, &repo, &issue, &idx);
        if (r <= 0)
                return r;

        const char *state = NULL, *reason = NULL;
        if (twin_arg_str(c->args, "state", &state) == -EINVAL ||
            (state && !streq(state, "open") && !streq(state, "closed")))
                return invalid(rp, "Issue", "state", "invalid");
        json_t *jr = json_object_get(c->args, "state_reason");
        if (jr && !json_is_null(jr)) {
                reason = json_string_value(jr);
                if (!reason || (!streq(reason, "completed") && !streq(reason, "not_planned") &&
                                !streq(reason, "reopened")))
                        return invalid(rp, "Issue", "state_reason", "invalid");
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

        r = issue_commit(c, rp, repo, idx, next);
        if (r < 0)
                return r;
        return twin_reply_body(rp, 200, render_issue(c, repo, next));
}

/* add_issue_assignees (add) and remove_issue_assignees (!add). */
static int change_assignees(TwinCall *c, TwinReply *rp, bool add)
{
        json_t *repo, *issue;
        size_t idx;
        int r = arg_repo_issue(c, rp, &repo, &issue, &idx);
        if (r <= 0)
                return r;

        _cleanup_json_ json_t *names = NULL;
        if (add)
                r = arg_assignees(c, "assignees", &names);
        else {
                r = twin_arg_strv(c->args, "assignees", &names);
                r = r == 0 ? 1 : r == -ENOENT ? 0 : r == -EINVAL ? 2 : r;
        }
        if (r < 0)
                return r;
        if (r == 2)
                return invalid(rp, "Issue", "assignees", "invalid");

        _cleanup_json_ json_t *next = json_deep_copy(issue);
        if (!next)
                return -ENOMEM;
        json_t *list = json_object_get(next, "assignees");
        size_t i;
        json_t *n;
        json_array_foreach (names, i, n) {
                const char *login = json_string_value(n);
                if (add && !strv_has(list, login)) {
                        if (json_array_append(list, n) < 0)
                                return -ENOMEM;
                } else if (!add)
                        for (size_t k = json_array_size(list); k-- > 0;)
                                if (strcasecmp(json_string_value(json_array_get(list, k)), login) ==
                                    0)
                                        json_array_remove(list, k);
        }
        r = issue_commit(c, rp, repo, idx, next);
        if (r < 0)
                return r;
        /* POST answers 201 Created even when nothing changed, as GitHub does */
        return twin_reply_body(rp, add ? 201 : 200, render_issue(c, repo, next));
}

static int act_add_issue_assignees(TwinCall *c, TwinReply *rp)
{
        return change_assignees(c, rp, true);
}

static int act_remove_issue_assignees(TwinCall *c, TwinReply *rp)
{
        return change_assignees(c, rp, false);
}

static int act_add_issue_comment(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *issue;
        int r = arg_repo_issue(c, rp, &repo, &issue, NULL);
        if (r <= 0)
                return r;
        const char *body;
        r = twin_arg_str(c->args, "body", &body);
        if (r < 0 || !body[0])
                return invalid(rp, "IssueComment", "body",
                               r == -EINVAL ? "invalid" : "missing_field");

        char now[32];
        twin_format_time(c->now, now, sizeof(now));
        int64_t id = alloc_id(c->world);
        _cleanup_json_ json_t *comment =
                json_pack("{s:I, s:o, s:s, s:s, s:s, s:s}", "id", (json_int_t)id, "node_id",
                          node_id("IssueComment", id), "body", body, "user",
                          json_get_str(c->world, "viewer"), "created_at", now, "updated_at", now);
        if (!comment || json_array_append(json_object_get(issue, "comments"), comment) < 0 ||
            json_object_set_new(issue, "updated_at", json_string(now)) < 0)
                return -ENOMEM;
        r = twin_reply_mutation(rp, NULL, comment);
        if (r < 0)
                return r;
        return twin_reply_body(rp, 201, render_comment(c, repo, issue, comment));
}

static int act_list_issue_comments(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *issue;
        int r = arg_repo_issue(c, rp, &repo, &issue, NULL);
        if (r <= 0)
                return r;
        const char *since = NULL;
        if (twin_arg_str(c->args, "since", &since) == -EINVAL)
                return invalid(rp, "IssueComment", "since", "invalid");

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
        r = paginate(c, rp, all, &page);
        if (r < 0)
                return r;
        json_array_foreach (page, i, cm) {
                if (json_array_append_new(body, render_comment(c, repo, issue, cm)) < 0)
                        return -ENOMEM;
        }
        twin_reply_json(rp, 200, TAKE_PTR(body));
        return 0;
}

static int act_add_issue_labels(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *issue;
        size_t idx;
        int r = arg_repo_issue(c, rp, &repo, &issue, &idx);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *names = NULL;
        r = arg_label_names(c, "labels", &names);
        if (r < 0)
                return r;
        if (r != 1)
                return invalid(rp, "Label", "labels", r == 0 ? "missing_field" : "invalid");

        _cleanup_json_ json_t *next = json_deep_copy(issue), *canon = labels_ensure(c, repo, names);
        if (!next || !canon)
                return -ENOMEM;
        json_t *list = json_object_get(next, "labels");
        size_t i;
        json_t *n;
        json_array_foreach (canon, i, n) {
                if (!strv_has(list, json_string_value(n)) && json_array_append(list, n) < 0)
                        return -ENOMEM;
        }
        r = issue_commit(c, rp, repo, idx, next);
        if (r < 0)
                return r;
        return twin_reply_body(rp, 200, render_labels(c, repo, list));
}

static int act_remove_issue_label(TwinCall *c, TwinReply *rp)
{
        json_t *repo, *issue;
        size_t idx;
        int r = arg_repo_issue(c, rp, &repo, &issue, &idx);
        if (r <= 0)
                return r;
        const char *name;
        r = twin_arg_str(c->args, "name", &name);
        if (r < 0)
                return invalid(rp, "Label", "name", r == -ENOENT ? "missing_field" : "invalid");

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
                github_error(404, NULL, "Label does not exist", rp);
                return rp->body ? 0 : -ENOMEM;
        }
        r = issue_commit(c, rp, repo, idx, next);
        if (r < 0)
                return r;
        return twin_reply_body(rp, 200, render_labels(c, repo, list));
}

/* ------------------------------------------------------------------ public state, tables */

static json_t *github_public_state(const json_t *world)
{
        /* nothing in a github world is secret; the id counter is bookkeeping, not state */
        json_t *s = json_deep_copy(world);
        if (s)
                json_object_del(s, "next_id");
        return s;
}

#define REPO_PROPS                                                              \
        "\"owner\":{\"type\":\"string\",\"description\":\"Repository owner\"}," \
        "\"repo\":{\"type\":\"string\",\"description\":\"Repository name\"}"
#define ISSUE_PROPS \
        REPO_PROPS ",\"issue_number\":{\"type\":\"number\",\"description\":\"Issue number\"}"
#define PAGE_PROPS                                      \
        "\"page\":{\"type\":\"number\",\"minimum\":1}," \
        "\"perPage\":{\"type\":\"number\",\"minimum\":1,\"maximum\":100}"
#define STRV "{\"type\":\"array\",\"items\":{\"type\":\"string\"}}"
#define SCHEMA(props, ...) \
        "{\"type\":\"object\",\"properties\":{" props "},\"required\":[" __VA_ARGS__ "]}"

static const TwinAction github_actions[] = {
        {"get_me", "Get the authenticated GitHub user.", SCHEMA("", ), act_get_me, true},
        {"get_repository", "Get a repository.", SCHEMA(REPO_PROPS, "\"owner\",\"repo\""),
         act_get_repository, true},
        {"list_issues", "List issues in a repository, newest first, with filters and pages.",
         SCHEMA(REPO_PROPS ",\"state\":{\"type\":\"string\",\"enum\":[\"open\",\"closed\","
                           "\"all\"]},\"labels\":" STRV ",\"assignee\":{\"type\":\"string\"},"
                           "\"sort\":{\"type\":\"string\",\"enum\":[\"created\",\"updated\","
                           "\"comments\"]},\"direction\":{\"type\":\"string\",\"enum\":[\"asc\","
                           "\"desc\"]},\"since\":{\"type\":\"string\"}," PAGE_PROPS,
                "\"owner\",\"repo\""),
         act_list_issues, true},
        {"get_issue", "Get one issue of a repository.",
         SCHEMA(ISSUE_PROPS, "\"owner\",\"repo\",\"issue_number\""), act_get_issue, true},
        {"create_issue", "Open a new issue.",
         SCHEMA(REPO_PROPS ",\"title\":{\"type\":\"string\"},\"body\":{\"type\":\"string\"},"
                           "\"labels\":" STRV ",\"assignees\":" STRV
                           ",\"milestone\":{\"type\":\"number\"}",
                "\"owner\",\"repo\",\"title\""),
         act_create_issue, false},
        {"update_issue", "Edit an issue: title, body, state, state_reason, labels, assignees.",
         SCHEMA(ISSUE_PROPS ",\"title\":{\"type\":\"string\"},\"body\":{\"type\":\"string\"},"
                            "\"state\":{\"type\":\"string\",\"enum\":[\"open\",\"closed\"]},"
                            "\"state_reason\":{\"type\":\"string\",\"enum\":[\"completed\","
                            "\"not_planned\",\"reopened\"]},\"labels\":" STRV ",\"assignees\":" STRV
                            ",\"milestone\":{\"type\":\"number\"}",
                "\"owner\",\"repo\",\"issue_number\""),
         act_update_issue, false},
        {"add_issue_assignees",
         "Assign users to an issue (users who cannot be assigned are ignored).",
         SCHEMA(ISSUE_PROPS ",\"assignees\":" STRV,
                "\"owner\",\"repo\",\"issue_number\",\"assignees\""),
         act_add_issue_assignees, false},
        {"remove_issue_assignees", "Remove assignees from an issue.",
         SCHEMA(ISSUE_PROPS ",\"assignees\":" STRV,
                "\"owner\",\"repo\",\"issue_number\",\"assignees\""),
         act_remove_issue_assignees, false},
        {"add_issue_comment", "Comment on an issue.",
         SCHEMA(ISSUE_PROPS ",\"body\":{\"type\":\"string\"}",
                "\"owner\",\"repo\",\"issue_number\",\"body\""),
         act_add_issue_comment, false},
        {"list_issue_comments", "List the comments of an issue, oldest first.",
         SCHEMA(ISSUE_PROPS ",\"since\":{\"type\":\"string\"}," PAGE_PROPS,
                "\"owner\",\"repo\",\"issue_number\""),
         act_list_issue_comments, true},
        {"add_issue_labels", "Add labels to an issue (missing labels are created).",
         SCHEMA(ISSUE_PROPS ",\"labels\":" STRV, "\"owner\",\"repo\",\"issue_number\",\"labels\""),
         act_add_issue_labels, false},
        {"remove_issue_label", "Remove one label from an issue.",
         SCHEMA(ISSUE_PROPS ",\"name\":{\"type\":\"string\"}",
                "\"owner\",\"repo\",\"issue_number\",\"name\""),
         act_remove_issue_label, false},
};

#define ISSUE "/repos/{owner}/{repo}/issues/{issue_number}"
static const TwinRoute github_routes[] = {
        {"GET", "/user", "get_me"},
        {"GET", "/repos/{owner}/{repo}", "get_repository"},
        {"GET", "/repos/{owner}/{repo}/issues", "list_issues"},
        {"POST", "/repos/{owner}/{repo}/issues", "create_issue"},
        {"GET", ISSUE, "get_issue"},
        {"PATCH", ISSUE, "update_issue"},
        {"POST", ISSUE "/assignees", "add_issue_assignees"},
        {"DELETE", ISSUE "/assignees", "remove_issue_assignees"},
        {"GET", ISSUE "/comments", "list_issue_comments"},
        {"POST", ISSUE "/comments", "add_issue_comment"},
        {"POST", ISSUE "/labels", "add_issue_labels"},
        {"DELETE", ISSUE "/labels/{name}", "remove_issue_label"},
};

const TwinKind twin_kind_github = {
        .name = "github",
        .implementation = "pome-github",
        .flags = 0,
        .actions = github_actions,
        .n_actions = ELEMENTSOF(github_actions),
        .routes = github_routes,
        .n_routes = ELEMENTSOF(github_routes),
        .load_seed = github_load_seed,
        .public_state = github_public_state,
        .auth_error = github_auth_error,
        .error = github_error,
};
