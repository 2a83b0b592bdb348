/* SPDX-License-Identifier: MIT */
/*
 * The Linear twin's seeds: hosted Pome's Linear seed format (its package twin-linear,
 * src/seed.ts and src/seed/apply.ts), loaded unmodified into the world of linear.h. A seed
 * names things as people do (team "ENG", state "Backlog", assignee "dev@pome-twin.test",
 * labels ["Agent"]); loading resolves every name to an id. Every member is checked: an unknown
 * key or a name that resolves to nothing is a refusal naming it, never a silent drop.
 *
 * What a seed may say and the world does not keep: clock (the time of seeded rows without
 * one), defaultSid and baseUrl (hosted Pome's process settings), strictScopes, tokens and
 * oauthApps (here the front authenticates every caller by its pome credential), webhooks (a
 * pod has no network to deliver them). They are checked for shape and dropped. documents must
 * be empty: the twin serves no documents.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/json-util.h"
#include "pods/linear/linear.h"

#define LN_DEFAULT_CLOCK "2026-07-21T00:00:00.000Z" /* hosted Pome's DEFAULT_LINEAR_CLOCK */

const char *const ln_seed_keys[] = {
        "clock",  "defaultSid", "baseUrl", "strictScopes", "organization", "users",     "teams",
        "labels", "projects",   "cycles",  "issues",       "comments",     "documents", "oauthApps",
        "tokens", "webhooks",   NULL};

/* hosted Pome's inferStateType: the type of a seeded state that names none */
static const char *infer_state_type(const char *name)
{
        _cleanup_free_ char *l = strdup(name);
        for (char *p = l; p && *p; p++)
                *p = (char)tolower((unsigned char)*p);
        if (!l)
                return "unstarted";
        if (strstr(l, "backlog"))
                return "backlog";
        if (strstr(l, "progress") || strstr(l, "started"))
                return "started";
        if (strstr(l, "done") || strstr(l, "complete"))
                return "completed";
        if (strstr(l, "cancel"))
                return "canceled";
        return "unstarted";
}

/* Linear's default colors of a state type (what the app gives a new team's states). */
static const char *state_color(const char *type)
{
        if (streq(type, "backlog"))
                return "#bec2c8";
        if (streq(type, "unstarted"))
                return "#e2e2e2";
        if (streq(type, "started"))
                return "#f2c94c";
        if (streq(type, "completed"))
                return "#5e6ad2";
        if (streq(type, "canceled"))
                return "#95a2b3";
        return "#26b5ce"; /* triage */
}

/* Whether s is an RFC 3339 date-time with an offset (zod's datetime({offset: true})). */
static bool is_datetime(const char *s)
{
        int y, mo, d, h, mi, sec;
        char t;
        if (!s || sscanf(s, "%4d-%2d-%2d%c%2d:%2d:%2d", &y, &mo, &d, &t, &h, &mi, &sec) != 7 ||
            (t != 'T' && t != 't') || strlen(s) < 20)
                return false;
        return mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h < 24 && mi < 60 && sec < 61;
}

/* A member that must be a date-time (or null when nullable). */
static int seed_time(TwinSeed *s, const json_t *o, const char *key, const char *path, bool nullable,
                     const char **ret)
{
        int r = twin_seed_str(s, o, key, path, NULL, nullable ? TWIN_NULL_KEPT : TWIN_NULL_REFUSED,
                              ret);
        if (r < 0)
                return r;
        if (*ret && !is_datetime(*ret))
                return twin_seed_error(s->err, s->errlen, "%s.%s: must be an RFC 3339 date-time",
                                       path, key);
        return 0;
}

/* A required non-empty string. */
static int seed_req(TwinSeed *s, const json_t *o, const char *key, const char *path,
                    const char **ret)
{
        int r = twin_seed_str(s, o, key, path, NULL, TWIN_NULL_REFUSED, ret);
        if (r < 0)
                return r;
        if (!*ret || !**ret)
                return twin_seed_error(s->err, s->errlen, "%s.%s: is required", path, key);
        return 0;
}

/* An optional id: the seed's own, else a new one. Into *ret (malloc'd). */
static int seed_id(TwinSeed *s, const json_t *o, const char *path, const char *prefix, char **ret)
{
        const char *id;
        int r = twin_seed_str(s, o, "id", path, NULL, TWIN_NULL_ABSENT, &id);
        if (r < 0)
                return r;
        if (id) {
                *ret = strdup(id);
                return *ret ? 0 : -ENOMEM;
        }
        return ln_new_id(s->world, prefix, ret);
}

/* Entry i of array a, which must be an object. */
static int seed_entry(TwinSeed *s, json_t *a, size_t i, const char *list, char path[static 64],
                      json_t **ret)
{
        snprintf(path, 64, "%s[%zu]", list, i);
        *ret = json_array_get(a, i);
        if (!json_is_object(*ret))
                return twin_seed_error(s->err, s->errlen, "%s: must be an object", path);
        return 0;
}

static int append(json_t *w, const char *list, json_t *row)
{
        if (!row)
                return -ENOMEM;
        return json_array_append_new(json_object_get(w, list), row) < 0 ? -ENOMEM : 0;
}

static int load_org(TwinSeed *s, const json_t *seed, const char *now)
{
        json_t *o = json_object_get(seed, "organization");
        const char *id, *name, *key;
        int r;
        if (o && !json_is_object(o) && !json_is_null(o))
                return twin_seed_error(s->err, s->errlen, "organization: must be an object");
        if ((r = TWIN_SEED_KNOWN(s, o, "organization", "organization", "id", "name", "urlKey")) <
                    0 ||
            (r = twin_seed_str(s, o, "id", "organization", NULL, TWIN_NULL_ABSENT, &id)) < 0 ||
            (r = twin_seed_str(s, o, "name", "organization", "Pome Twin", TWIN_NULL_ABSENT,
                               &name)) < 0 ||
            (r = twin_seed_str(s, o, "urlKey", "organization", NULL, TWIN_NULL_ABSENT, &key)) < 0)
                return r;
        /* hosted Pome's slugify of the name when there is no urlKey */
        _cleanup_free_ char *slug = strdup(name), *new_id = NULL;
        if (!slug)
                return -ENOMEM;
        if (!key) {
                char *q = slug;
                bool dash = false;
                for (const char *p = name; *p; p++) {
                        if (isalnum((unsigned char)*p)) {
                                if (dash && q > slug)
                                        *q++ = '-';
                                *q++ = (char)tolower((unsigned char)*p);
                                dash = false;
                        } else
                                dash = true;
                }
                *q = 0;
                key = slug;
        }
        if (!id) {
                if ((r = ln_new_id(s->world, "org", &new_id)) < 0)
                        return r;
                id = new_id;
        }
        (void)now;
        return json_object_set_new(
                       s->world, "organization",
                       json_pack("{s:s, s:s, s:s}", "id", id, "name", name, "urlKey", key)) < 0
                       ? -ENOMEM
                       : 0;
}

/* Users; the viewer is hosted Pome's resolveViewer without an actor: the first admin that is
 * not an app, else the first user that is not an app, else the first user. */
static int load_users(TwinSeed *s, const json_t *seed, const char *now)
{
        json_t *a;
        int r = twin_seed_array(s, seed, "users", "", &a);
        if (r < 0)
                return r;
        const char *viewer[3] = {NULL, NULL, NULL};
        for (size_t i = 0; i < json_array_size(a); i++) {
                char path[64];
                json_t *u;
                const char *email, *name, *display, *avatar;
                bool active, admin, app;
                _cleanup_free_ char *id = NULL, *lower = NULL;
                if ((r = seed_entry(s, a, i, "users", path, &u)) < 0 ||
                    (r = TWIN_SEED_KNOWN(s, u, path, "user", "id", "email", "name", "displayName",
                                         "avatarUrl", "active", "admin", "app")) < 0 ||
                    (r = seed_req(s, u, "email", path, &email)) < 0 ||
                    (r = twin_seed_str(s, u, "name", path, NULL, TWIN_NULL_ABSENT, &name)) < 0 ||
                    (r = twin_seed_str(s, u, "displayName", path, NULL, TWIN_NULL_ABSENT,
                                       &display)) < 0 ||
                    (r = twin_seed_str(s, u, "avatarUrl", path, NULL, TWIN_NULL_KEPT, &avatar)) <
                            0 ||
                    (r = twin_seed_bool(s, u, "active", path, true, &active)) < 0 ||
                    (r = twin_seed_bool(s, u, "admin", path, false, &admin)) < 0 ||
                    (r = twin_seed_bool(s, u, "app", path, false, &app)) < 0)
                        return r;
                if (!strchr(email, '@'))
                        return twin_seed_error(s->err, s->errlen, "%s.email: must be an email",
                                               path);
                if (!(lower = strdup(email)))
                        return -ENOMEM;
                for (char *p = lower; *p; p++)
                        *p = (char)tolower((unsigned char)*p);
                if (ln_user_ref(s->world, lower))
                        return twin_seed_error(s->err, s->errlen, "%s.email: %s is taken", path,
                                               email);
                if ((r = seed_id(s, u, path, "user", &id)) < 0)
                        return r;
                _cleanup_free_ char *local = strndup(email, strcspn(email, "@"));
                if (!local)
                        return -ENOMEM;
                const char *n = name ? name : display ? display : local;
                if ((r = append(s->world, "users",
                                json_pack("{s:s, s:s, s:s, s:s, s:b, s:b, s:s}", "id", id, "name",
                                          n, "displayName", display ? display : n, "email", lower,
                                          "admin", admin, "active", active, "createdAt", now))) < 0)
                        return r;
                json_t *row = json_array_get(ln_list(s->world, "users"), i);
                const char *rid = json_get_str(row, "id");
                if (!viewer[0] && admin && !app)
                        viewer[0] = rid;
                if (!viewer[1] && !app)
                        viewer[1] = rid;
                if (!viewer[2])
                        viewer[2] = rid;
        }
        const char *v = viewer[0] ? viewer[0] : viewer[1] ? viewer[1] : viewer[2];
        return json_object_set_new(s->world, "viewer", json_string_or_null(v)) < 0 ? -ENOMEM : 0;
}

static int load_teams(TwinSeed *s, const json_t *seed, const char *now)
{
        json_t *a;
        int r = twin_seed_array(s, seed, "teams", "", &a);
        if (r < 0)
                return r;
        for (size_t i = 0; i < json_array_size(a); i++) {
                char path[64];
                json_t *t, *states;
                const char *key, *name, *desc;
                bool priv;
                _cleanup_free_ char *id = NULL;
                if ((r = seed_entry(s, a, i, "teams", path, &t)) < 0 ||
                    (r = TWIN_SEED_KNOWN(s, t, path, "team", "id", "key", "name", "description",
                                         "private", "states")) < 0 ||
                    (r = seed_req(s, t, "key", path, &key)) < 0 ||
                    (r = seed_req(s, t, "name", path, &name)) < 0 ||
                    (r = twin_seed_str(s, t, "description", path, NULL, TWIN_NULL_KEPT, &desc)) <
                            0 ||
                    (r = twin_seed_bool(s, t, "private", path, false, &priv)) < 0 ||
                    (r = twin_seed_array(s, t, "states", path, &states)) < 0)
                        return r;
                bool key_ok = isupper((unsigned char)key[0]) && strlen(key) <= 20;
                for (const char *p = key; *p && key_ok; p++)
                        key_ok = isupper((unsigned char)*p) || isdigit((unsigned char)*p);
                if (!key_ok)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.key: must be upper-case letters and digits, "
                                               "starting with a letter (\"ENG\")",
                                               path);
                if (ln_team_ref(s->world, key))
                        return twin_seed_error(s->err, s->errlen, "%s.key: %s is taken", path, key);
                if ((r = seed_id(s, t, path, "team", &id)) < 0 ||
                    (r = append(s->world, "teams",
                                json_pack("{s:s, s:s, s:s, s:o, s:b, s:s}", "id", id, "key", key,
                                          "name", name, "description", json_string_or_null(desc),
                                          "private", priv, "createdAt", now))) < 0)
                        return r;
                /* hosted Pome gives a team without states Linear's five defaults */
                static const char *const defaults[][2] = {{"Backlog", "backlog"},
                                                          {"Todo", "unstarted"},
                                                          {"In Progress", "started"},
                                                          {"Done", "completed"},
                                                          {"Canceled", "canceled"}};
                size_t n = json_array_size(states) ? json_array_size(states) : 5;
                for (size_t j = 0; j < n; j++) {
                        char sp[64];
                        json_t *st = NULL;
                        const char *sname, *stype;
                        json_int_t pos = (json_int_t)j;
                        _cleanup_free_ char *sid = NULL;
                        if (json_array_size(states)) {
                                snprintf(path, 64, "teams[%zu]", i);
                                if ((r = seed_entry(s, states, j, "states", sp, &st)) < 0)
                                        return r;
                                snprintf(sp, sizeof(sp), "teams[%zu].states[%zu]", i, j);
                                if ((r = TWIN_SEED_KNOWN(s, st, sp, "state", "id", "name", "type",
                                                         "position")) < 0 ||
                                    (r = seed_req(s, st, "name", sp, &sname)) < 0 ||
                                    (r = twin_seed_str(s, st, "type", sp, NULL, TWIN_NULL_ABSENT,
                                                       &stype)) < 0)
                                        return r;
                                json_t *p = json_object_get(st, "position");
                                if (p && (!json_is_integer(p) || json_integer_value(p) < 0))
                                        return twin_seed_error(
                                                s->err, s->errlen,
                                                "%s.position: must be a non-negative integer", sp);
                                if (p)
                                        pos = json_integer_value(p);
                                if (stype && !streq(stype, "backlog") &&
                                    !streq(stype, "unstarted") && !streq(stype, "started") &&
                                    !streq(stype, "completed") && !streq(stype, "canceled"))
                                        return twin_seed_error(
                                                s->err, s->errlen,
                                                "%s.type: must be backlog, unstarted, started, "
                                                "completed or canceled",
                                                sp);
                                if (!stype)
                                        stype = infer_state_type(sname);
                                if (ln_state_ref(s->world, id, sname) &&
                                    strcasecmp(
                                            json_get_str(ln_state_ref(s->world, id, sname), "name"),
                                            sname) == 0)
                                        return twin_seed_error(
                                                s->err, s->errlen,
                                                "Duplicate workflow state %s on team %s", sname,
                                                key);
                                if ((r = seed_id(s, st, sp, "state", &sid)) < 0)
                                        return r;
                        } else {
                                sname = defaults[j][0];
                                stype = defaults[j][1];
                                if ((r = ln_new_id(s->world, "state", &sid)) < 0)
                                        return r;
                        }
                        if ((r = append(s->world, "states",
                                        json_pack("{s:s, s:s, s:s, s:s, s:I, s:s}", "id", sid,
                                                  "teamId", id, "name", sname, "type", stype,
                                                  "position", pos, "color", state_color(stype)))) <
                            0)
                                return r;
                }
        }
        return 0;
}

/* A team named by key or id, for the entry at path (member key). */
static int seed_team(TwinSeed *s, const json_t *o, const char *path, bool required,
                     const char **ret_id)
{
        const char *ref;
        int r = required ? seed_req(s, o, "team", path, &ref)
                         : twin_seed_str(s, o, "team", path, NULL, TWIN_NULL_ABSENT, &ref);
        if (r < 0)
                return r;
        *ret_id = NULL;
        if (!ref)
                return 0;
        json_t *t = ln_team_ref(s->world, ref);
        if (!t)
                return twin_seed_error(s->err, s->errlen, "%s.team: no team %s", path, ref);
        *ret_id = json_get_str(t, "id");
        return 0;
}

static int load_labels(TwinSeed *s, const json_t *seed, const char *now)
{
        json_t *a;
        int r = twin_seed_array(s, seed, "labels", "", &a);
        if (r < 0)
                return r;
        for (size_t i = 0; i < json_array_size(a); i++) {
                char path[64];
                json_t *l;
                const char *name, *color, *desc, *team;
                _cleanup_free_ char *id = NULL;
                if ((r = seed_entry(s, a, i, "labels", path, &l)) < 0 ||
                    (r = TWIN_SEED_KNOWN(s, l, path, "label", "id", "name", "color", "description",
                                         "team")) < 0 ||
                    (r = seed_req(s, l, "name", path, &name)) < 0 ||
                    (r = twin_seed_str(s, l, "color", path, "#64748b", TWIN_NULL_ABSENT, &color)) <
                            0 ||
                    (r = twin_seed_str(s, l, "description", path, NULL, TWIN_NULL_KEPT, &desc)) <
                            0 ||
                    (r = seed_team(s, l, path, false, &team)) < 0 ||
                    (r = seed_id(s, l, path, "label", &id)) < 0)
                        return r;
                if ((r = append(s->world, "labels",
                                json_pack("{s:s, s:s, s:s, s:o, s:o, s:s}", "id", id, "name", name,
                                          "color", color, "description", json_string_or_null(desc),
                                          "teamId", json_string_or_null(team), "createdAt", now))) <
                    0)
                        return r;
        }
        return 0;
}

static int load_projects(TwinSeed *s, const json_t *seed, const char *now)
{
        json_t *a;
        int r = twin_seed_array(s, seed, "projects", "", &a);
        if (r < 0)
                return r;
        for (size_t i = 0; i < json_array_size(a); i++) {
                char path[64];
                json_t *p;
                const char *name, *desc, *state, *team;
                _cleanup_free_ char *id = NULL;
                if ((r = seed_entry(s, a, i, "projects", path, &p)) < 0 ||
                    (r = TWIN_SEED_KNOWN(s, p, path, "project", "id", "name", "description",
                                         "state", "team")) < 0 ||
                    (r = seed_req(s, p, "name", path, &name)) < 0 ||
                    (r = twin_seed_str(s, p, "description", path, NULL, TWIN_NULL_KEPT, &desc)) <
                            0 ||
                    (r = twin_seed_str(s, p, "state", path, "planned", TWIN_NULL_REFUSED, &state)) <
                            0 ||
                    (r = seed_team(s, p, path, false, &team)) < 0 ||
                    (r = seed_id(s, p, path, "project", &id)) < 0)
                        return r;
                if (!streq(state, "planned") && !streq(state, "started") &&
                    !streq(state, "completed") && !streq(state, "canceled"))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.state: must be planned, started, completed or "
                                               "canceled",
                                               path);
                json_t *teams = team ? json_pack("[s]", team) : json_array();
                if ((r = append(s->world, "projects",
                                json_pack("{s:s, s:s, s:o, s:s, s:o, s:s}", "id", id, "name", name,
                                          "description", json_string_or_null(desc), "state", state,
                                          "teamIds", teams, "createdAt", now))) < 0)
                        return r;
        }
        return 0;
}

static int load_cycles(TwinSeed *s, const json_t *seed)
{
        json_t *a;
        int r = twin_seed_array(s, seed, "cycles", "", &a);
        if (r < 0)
                return r;
        for (size_t i = 0; i < json_array_size(a); i++) {
                char path[64];
                json_t *c;
                const char *name, *team, *starts, *ends;
                _cleanup_free_ char *id = NULL;
                if ((r = seed_entry(s, a, i, "cycles", path, &c)) < 0 ||
                    (r = TWIN_SEED_KNOWN(s, c, path, "cycle", "id", "team", "name", "number",
                                         "startsAt", "endsAt")) < 0 ||
                    (r = seed_team(s, c, path, true, &team)) < 0 ||
                    (r = seed_req(s, c, "name", path, &name)) < 0 ||
                    (r = seed_time(s, c, "startsAt", path, true, &starts)) < 0 ||
                    (r = seed_time(s, c, "endsAt", path, true, &ends)) < 0 ||
                    (r = seed_id(s, c, path, "cycle", &id)) < 0)
                        return r;
                json_t *n = json_object_get(c, "number");
                if (n && (!json_is_integer(n) || json_integer_value(n) < 1))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.number: must be a positive integer", path);
                if ((r = append(s->world, "cycles",
                                json_pack("{s:s, s:s, s:I, s:s, s:o, s:o}", "id", id, "teamId",
                                          team, "number", n ? json_integer_value(n) : (json_int_t)1,
                                          "name", name, "startsAt", json_string_or_null(starts),
                                          "endsAt", json_string_or_null(ends)))) < 0)
                        return r;
        }
        return 0;
}

/* A user named by id, email, name or display name at member key, or the viewer when absent. */
static int seed_user(TwinSeed *s, const json_t *o, const char *key, const char *path,
                     bool viewer_default, json_t **ret)
{
        const char *ref;
        int r = twin_seed_str(s, o, key, path, NULL, TWIN_NULL_ABSENT, &ref);
        if (r < 0)
                return r;
        if (!ref) {
                *ret = viewer_default
                               ? ln_by_id(s->world, "users", json_get_str(s->world, "viewer"))
                               : NULL;
                if (viewer_default && !*ret)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.%s: the seed has no user to be it", path, key);
                return 0;
        }
        *ret = ln_user_ref(s->world, ref);
        if (!*ret || strcasecmp(ref, "me") == 0)
                return twin_seed_error(s->err, s->errlen, "%s.%s: no user %s", path, key, ref);
        return 0;
}

/* An issue named by id, identifier or title (hosted Pome's seeds name them by title). */
static json_t *seed_issue_ref(json_t *w, const char *ref)
{
        json_t *i = ln_issue_ref(w, ref);
        size_t k;
        json_t *row;
        if (i)
                return i;
        json_array_foreach (ln_list(w, "issues"), k, row) {
                if (streq_ptr(json_get_str(row, "title"), ref))
                        return row;
        }
        return NULL;
}

static int load_issue(TwinSeed *s, json_t *in, const char *path, const char *clock)
{
        const char *title, *team, *desc, *state_ref, *project_ref, *cycle_ref, *parent_ref, *due,
                *created, *updated;
        json_t *assignee, *creator, *labels;
        _cleanup_free_ char *id = NULL;
        int r;
        if ((r = TWIN_SEED_KNOWN(s, in, path, "issue", "id", "team", "title", "description",
                                 "priority", "state", "assignee", "creator", "delegate", "project",
                                 "cycle", "parent", "estimate", "labels", "dueDate", "createdAt",
                                 "updatedAt")) < 0 ||
            (r = seed_team(s, in, path, true, &team)) < 0 ||
            (r = seed_req(s, in, "title", path, &title)) < 0 ||
            (r = twin_seed_str(s, in, "description", path, NULL, TWIN_NULL_KEPT, &desc)) < 0 ||
            (r = twin_seed_str(s, in, "state", path, NULL, TWIN_NULL_ABSENT, &state_ref)) < 0 ||
            (r = seed_user(s, in, "assignee", path, false, &assignee)) < 0 ||
            (r = seed_user(s, in, "creator", path, true, &creator)) < 0 ||
            (r = twin_seed_str(s, in, "project", path, NULL, TWIN_NULL_ABSENT, &project_ref)) < 0 ||
            (r = twin_seed_str(s, in, "cycle", path, NULL, TWIN_NULL_ABSENT, &cycle_ref)) < 0 ||
            (r = twin_seed_str(s, in, "parent", path, NULL, TWIN_NULL_ABSENT, &parent_ref)) < 0 ||
            (r = twin_seed_str(s, in, "dueDate", path, NULL, TWIN_NULL_KEPT, &due)) < 0 ||
            (r = seed_time(s, in, "createdAt", path, false, &created)) < 0 ||
            (r = seed_time(s, in, "updatedAt", path, false, &updated)) < 0 ||
            (r = twin_seed_array(s, in, "labels", path, &labels)) < 0)
                return r;
        if (json_object_get(in, "delegate"))
                return twin_seed_error(s->err, s->errlen,
                                       "%s.delegate: agent delegation is not modelled by the "
                                       "pome linear twin",
                                       path);
        json_t *prio = json_object_get(in, "priority"), *est = json_object_get(in, "estimate");
        if (prio && (!json_is_integer(prio) || json_integer_value(prio) < 0 ||
                     json_integer_value(prio) > 4))
                return twin_seed_error(s->err, s->errlen, "%s.priority: must be 0, 1, 2, 3 or 4",
                                       path);
        if (est && !json_is_null(est) && (!json_is_integer(est) || json_integer_value(est) < 0))
                return twin_seed_error(s->err, s->errlen,
                                       "%s.estimate: must be a non-negative integer or null", path);
        json_t *w = s->world;
        /* hosted Pome: the named state, else Todo, else the team's first */
        json_t *state = state_ref ? ln_state_ref(w, team, state_ref) : NULL;
        if (state_ref && !state)
                return twin_seed_error(s->err, s->errlen, "%s.state: Issue state not found: %s",
                                       path, state_ref);
        if (!state)
                state = ln_state_ref(w, team, "Todo");
        if (!state) {
                size_t k;
                json_t *st;
                json_array_foreach (ln_list(w, "states"), k, st) {
                        if (streq_ptr(json_get_str(st, "teamId"), team)) {
                                state = st;
                                break;
                        }
                }
        }
        if (!state)
                return twin_seed_error(s->err, s->errlen, "%s: no workflow state for its team",
                                       path);
        json_t *project = project_ref ? ln_project_ref(w, project_ref) : NULL;
        if (project_ref && !project)
                return twin_seed_error(s->err, s->errlen, "%s.project: no project %s", path,
                                       project_ref);
        json_t *cycle = cycle_ref ? ln_cycle_ref(w, team, cycle_ref) : NULL;
        if (cycle_ref && !cycle)
                return twin_seed_error(s->err, s->errlen, "%s.cycle: no cycle %s of its team", path,
                                       cycle_ref);
        json_t *parent = parent_ref ? seed_issue_ref(w, parent_ref) : NULL;
        if (parent_ref && !parent)
                return twin_seed_error(s->err, s->errlen,
                                       "%s.parent: no earlier issue %s (a parent comes first)",
                                       path, parent_ref);
        size_t k;
        json_t *row;
        json_array_foreach (ln_list(w, "issues"), k, row) {
                if (streq_ptr(json_get_str(row, "teamId"), team) &&
                    streq_ptr(json_get_str(row, "title"), title))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.title: Duplicate issue title on team: %s", path,
                                               title);
        }
        _cleanup_json_ json_t *label_ids = json_array();
        if (!label_ids)
                return -ENOMEM;
        json_array_foreach (labels, k, row) {
                json_t *l =
                        json_is_string(row) ? ln_label_ref(w, team, json_string_value(row)) : NULL;
                if (!l)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.labels[%zu]: Issue label not found", path, k);
                if (json_array_append(label_ids, json_object_get(l, "id")) < 0)
                        return -ENOMEM;
        }
        if ((r = seed_id(s, in, path, "issue", &id)) < 0)
                return r;
        int64_t number = ln_next_number(w, team);
        if (number < 0)
                return (int)number;
        json_t *t = ln_by_id(w, "teams", team);
        _cleanup_free_ char *ident = NULL;
        if (asprintf(&ident, "%s-%lld", json_get_str(t, "key"), (long long)number) < 0)
                return -ENOMEM;
        const char *c_at = created ? created : clock, *u_at = updated ? updated : c_at;
        json_t *issue = json_pack(
                "{s:s, s:s, s:I, s:s, s:s, s:o, s:I, s:O, s:n, s:O?, s:O, s:O, s:O?, s:O?, "
                "s:O?, s:o, s:s, s:s, s:n, s:n, s:n, s:n}",
                "id", id, "identifier", ident, "number", (json_int_t)number, "teamId", team,
                "title", title, "description", json_string_or_null(desc), "priority",
                prio ? json_integer_value(prio) : (json_int_t)0, "estimate",
                est ? est : json_null(), "stateId", "assigneeId", json_object_get(assignee, "id"),
                "creatorId", json_object_get(creator, "id"), "labelIds", label_ids, "projectId",
                json_object_get(project, "id"), "cycleId", json_object_get(cycle, "id"), "parentId",
                json_object_get(parent, "id"), "dueDate", json_string_or_null(due), "createdAt",
                c_at, "updatedAt", u_at, "startedAt", "completedAt", "canceledAt", "archivedAt");
        if (!issue)
                return -ENOMEM;
        /* a seeded issue entered its state when it was last updated */
        if (ln_set_issue_state(issue, state, u_at) < 0 || append(w, "issues", issue) < 0)
                return -ENOMEM;
        static const char *const keys[] = {"assigneeId", "projectId", "cycleId", "parentId"};
        for (size_t j = 0; j < ELEMENTSOF(keys); j++)
                if (!json_object_get(issue, keys[j]) &&
                    json_object_set_new(issue, keys[j], json_null()) < 0)
                        return -ENOMEM;
        return 0;
}

static int load_comments(TwinSeed *s, const json_t *seed, const char *clock)
{
        json_t *a;
        int r = twin_seed_array(s, seed, "comments", "", &a);
        if (r < 0)
                return r;
        for (size_t i = 0; i < json_array_size(a); i++) {
                char path[64];
                json_t *c, *user;
                const char *issue_ref, *body, *parent_ref, *created;
                _cleanup_free_ char *id = NULL;
                if ((r = seed_entry(s, a, i, "comments", path, &c)) < 0 ||
                    (r = TWIN_SEED_KNOWN(s, c, path, "comment", "id", "issue", "body", "parent",
                                         "user", "createdAt")) < 0 ||
                    (r = seed_req(s, c, "issue", path, &issue_ref)) < 0 ||
                    (r = seed_req(s, c, "body", path, &body)) < 0 ||
                    (r = twin_seed_str(s, c, "parent", path, NULL, TWIN_NULL_ABSENT, &parent_ref)) <
                            0 ||
                    (r = seed_user(s, c, "user", path, true, &user)) < 0 ||
                    (r = seed_time(s, c, "createdAt", path, false, &created)) < 0)
                        return r;
                json_t *issue = seed_issue_ref(s->world, issue_ref);
                if (!issue)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.issue: Comment issue not found: %s", path,
                                               issue_ref);
                json_t *parent = parent_ref ? ln_by_id(s->world, "comments", parent_ref) : NULL;
                if (parent_ref && !parent)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.parent: no earlier comment %s", path,
                                               parent_ref);
                if ((r = seed_id(s, c, path, "comment", &id)) < 0)
                        return r;
                const char *at = created ? created : clock;
                if ((r = append(s->world, "comments",
                                json_pack("{s:s, s:O, s:O, s:s, s:O?, s:s, s:s}", "id", id,
                                          "issueId", json_object_get(issue, "id"), "userId",
                                          json_object_get(user, "id"), "body", body, "parentId",
                                          json_object_get(parent, "id"), "createdAt", at,
                                          "updatedAt", at))) < 0)
                        return r;
                json_t *row = json_array_get(ln_list(s->world, "comments"),
                                             json_array_size(ln_list(s->world, "comments")) - 1);
                if (!json_object_get(row, "parentId") &&
                    json_object_set_new(row, "parentId", json_null()) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* The members the world does not keep: checked to be what hosted Pome's schema says. */
static int check_dropped(TwinSeed *s, const json_t *seed)
{
        static const char *const lists[] = {"oauthApps", "tokens", "webhooks", "documents"};
        int r;
        const char *str;
        bool b;
        if ((r = twin_seed_str(s, seed, "defaultSid", "", NULL, TWIN_NULL_REFUSED, &str)) < 0 ||
            (r = twin_seed_str(s, seed, "baseUrl", "", NULL, TWIN_NULL_REFUSED, &str)) < 0 ||
            (r = twin_seed_bool(s, seed, "strictScopes", "", false, &b)) < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(lists); i++) {
                json_t *a;
                size_t k;
                json_t *e;
                if ((r = twin_seed_array(s, seed, lists[i], "", &a)) < 0)
                        return r;
                json_array_foreach (a, k, e) {
                        if (!json_is_object(e))
                                return twin_seed_error(s->err, s->errlen,
                                                       "%s[%zu]: must be an object", lists[i], k);
                }
                if (streq(lists[i], "documents") && json_array_size(a) > 0)
                        return twin_seed_error(s->err, s->errlen,
                                               "documents: the pome linear twin serves no "
                                               "documents; leave the list empty");
        }
        return 0;
}

/* load_seed: see the file's comment. */
int ln_load_seed(const json_t *seed, json_t **ret_world, char *err, size_t errlen)
{
        _cleanup_json_ json_t *w =
                json_pack("{s:n, s:n, s:[], s:[], s:[], s:[], s:[], s:[], s:[], s:[], s:[], s:[], "
                          "s:{s:i, s:{}}}",
                          "organization", "viewer", "users", "teams", "states", "labels",
                          "projects", "cycles", "issues", "comments", "attachments", "relations",
                          "next", "id", 0, "numbers");
        if (!w)
                return -ENOMEM;
        TwinSeed s = {.world = w, .err = err, .errlen = errlen};
        if (seed && !json_is_object(seed))
                return twin_seed_error(err, errlen, "the seed must be a JSON object");
        const char *clock;
        int r;
        if ((r = twin_seed_known(&s, seed, "", "Linear seed", ln_seed_keys,
                                 ELEMENTSOF(ln_seed_keys) - 1)) < 0 ||
            (r = seed_time(&s, seed, "clock", "", false, &clock)) < 0 ||
            (r = check_dropped(&s, seed)) < 0)
                return r;
        if (!clock)
                clock = LN_DEFAULT_CLOCK;
        json_t *issues;
        if ((r = load_org(&s, seed, clock)) < 0 || (r = load_users(&s, seed, clock)) < 0 ||
            (r = load_teams(&s, seed, clock)) < 0 || (r = load_labels(&s, seed, clock)) < 0 ||
            (r = load_projects(&s, seed, clock)) < 0 || (r = load_cycles(&s, seed)) < 0 ||
            (r = twin_seed_array(&s, seed, "issues", "", &issues)) < 0)
                return r;
        for (size_t i = 0; i < json_array_size(issues); i++) {
                char path[64];
                json_t *in;
                if ((r = seed_entry(&s, issues, i, "issues", path, &in)) < 0 ||
                    (r = load_issue(&s, in, path, clock)) < 0)
                        return r;
        }
        if ((r = load_comments(&s, seed, clock)) < 0)
                return r;
        *ret_world = TAKE_PTR(w);
        return 0;
}
