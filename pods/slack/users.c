/* SPDX-License-Identifier: MIT */
/*
 * People and the workspace: users.{list,info,lookupByEmail,profile.get,profile.set},
 * team.info, emoji.list (https://api.slack.com/methods), and the MCP server's
 * slack_search_users and slack_search_emojis. A user the seed marks hidden does not exist
 * for the caller (user_not_found, users_not_found, absent from lists).
 */
#include <strings.h>

#include "common/json-util.h"
#include "pods/slack/slack.h"

static json_t *visible_users(TwinCall *c)
{
        json_t *out = json_array();
        size_t i;
        json_t *u;
        json_array_foreach (json_object_get(c->world, "users"), i, u) {
                if (out && slack_user_visible(u) && json_array_append(out, u) < 0)
                        return json_decref(out), NULL;
        }
        return out;
}

int slack_act_list_users(TwinCall *c, TwinReply *rp)
{
        _cleanup_json_ json_t *users = visible_users(c);
        if (!users)
                return -ENOMEM;
        return slack_list_page(c, rp, users, 100, 1000, slack_render_user, "members",
                               json_pack("{s:I}", "cache_ts", (json_int_t)c->now));
}

int slack_act_user_info(TwinCall *c, TwinReply *rp)
{
        json_t *u;
        int r = slack_arg_user(c, rp, "user", "user_id", &u);
        if (r <= 0)
                return r;
        return slack_ok(rp, json_pack("{s:o}", "user", slack_render_user(c, u)));
}

int slack_act_lookup_by_email(TwinCall *c, TwinReply *rp)
{
        const char *email;
        int r = slack_arg_string(c, rp, "email", NULL, "invalid_email", &email);
        if (r <= 0)
                return r;
        size_t i;
        json_t *u;
        json_array_foreach (json_object_get(c->world, "users"), i, u) {
                const char *e = json_get_str(json_object_get(u, "profile"), "email");
                if (e && strcasecmp(e, email) == 0 && slack_user_visible(u))
                        return slack_ok(rp, json_pack("{s:o}", "user", slack_render_user(c, u)));
        }
        return slack_fail(rp, "users_not_found");
}

/* users.profile.get / slack_read_user_profile: without a user, the caller's own profile. */
int slack_act_read_user_profile(TwinCall *c, TwinReply *rp)
{
        json_t *u;
        int r;
        if (slack_arg2(c, "user", "user_id") && !json_is_null(slack_arg2(c, "user", "user_id"))) {
                if ((r = slack_arg_user(c, rp, "user", "user_id", &u)) <= 0)
                        return r;
        } else
                u = slack_user_by_id(c->world, slack_bot_user(c));
        if (!u)
                return slack_fail(rp, "user_not_found");
        _cleanup_json_ json_t *profile = slack_render_profile(c, u);
        if (!profile)
                return -ENOMEM;
        return slack_ok(rp,
                        json_pack("{s:O, s:O, s:O}", "profile", profile, "user_id",
                                  json_object_get(u, "id"), "name", json_object_get(u, "name")));
}

/*
 * users.profile.set: profile (a JSON object, or its JSON text in a form), or name + value.
 * The caller sets its own profile; another user's needs an admin caller (not_admin).
 */
int slack_act_set_user_profile(TwinCall *c, TwinReply *rp)
{
        static const char *const settable[] = {"real_name",   "display_name", "title",
                                               "status_text", "status_emoji", "phone",
                                               "first_name",  "last_name",    "pronouns"};
        json_t *me = slack_user_by_id(c->world, slack_bot_user(c)), *u = me;
        int r;
        json_t *ju = json_object_get(c->args, "user");
        if (ju && !json_is_null(ju) && (r = slack_arg_user(c, rp, "user", NULL, &u)) <= 0)
                return r;
        if (u != me && !json_is_true(json_object_get(me, "is_admin")))
                return slack_fail(rp, "not_admin");
        _cleanup_json_ json_t *patch = NULL;
        json_t *jp = json_object_get(c->args, "profile");
        if (json_is_string(jp))
                patch = json_loads(json_string_value(jp), 0, NULL);
        else if (json_is_object(jp))
                patch = json_incref(jp);
        else if (!jp || json_is_null(jp)) {
                const char *name, *value;
                if ((r = slack_arg_string(c, rp, "name", NULL, "invalid_profile", &name)) <= 0 ||
                    (r = slack_arg_string(c, rp, "value", NULL, NULL, &value)) <= 0)
                        return r;
                patch = json_pack("{s:s}", name, strempty(value));
                if (!patch)
                        return -ENOMEM;
        }
        if (!json_is_object(patch) || json_object_size(patch) == 0)
                return slack_fail(rp, "invalid_profile");
        const char *k;
        json_t *v;
        json_object_foreach (patch, k, v) {
                bool ok = false;
                for (size_t i = 0; i < ELEMENTSOF(settable); i++)
                        ok = ok || streq(k, settable[i]);
                if (!ok || !json_is_string(v))
                        return slack_fail(rp, "invalid_profile");
                if (slack_utf8_chars(json_string_value(v)) > 250)
                        return slack_fail(rp, "invalid_profile");
        }
        _cleanup_json_ json_t *before = json_deep_copy(u);
        json_t *profile = json_object_get(u, "profile");
        if (!before || json_object_update(profile, patch) < 0)
                return -ENOMEM;
        json_t *real = json_object_get(patch, "real_name");
        if (real && json_object_set(u, "real_name", real) < 0)
                return -ENOMEM;
        if ((r = twin_reply_mutation(rp, before, u)) < 0)
                return r;
        return slack_ok(rp, json_pack("{s:O}", "profile", profile));
}

int slack_act_team_info(TwinCall *c, TwinReply *rp)
{
        json_t *team = json_object_get(c->world, "team");
        _cleanup_free_ char *url = NULL;
        if (asprintf(&url, "https://%s.slack.com/", strempty(json_get_str(team, "domain"))) < 0)
                return -ENOMEM;
        return slack_ok(rp, json_pack("{s:{s:O, s:O, s:O, s:O, s:s, s:{s:b}, s:b}}", "team", "id",
                                      json_object_get(team, "id"), "name",
                                      json_object_get(team, "name"), "domain",
                                      json_object_get(team, "domain"), "email_domain",
                                      json_object_get(team, "email_domain"), "url", url, "icon",
                                      "image_default", true, "is_verified", false));
}

int slack_act_list_emoji(TwinCall *c, TwinReply *rp)
{
        json_t *emoji = json_object_get(c->world, "emoji");
        return slack_ok(rp, json_pack("{s:o, s:I}", "emoji",
                                      emoji ? json_deep_copy(emoji) : json_object(), "cache_ts",
                                      (json_int_t)c->now));
}

/* slack_search_emojis: custom emoji whose name holds one of the comma-separated terms. */
int slack_act_search_emojis(TwinCall *c, TwinReply *rp)
{
        _cleanup_json_ json_t *terms = NULL, *out = json_array();
        int r = twin_arg_strv(c->args, "query", &terms);
        if (r == -ENOMEM || !out)
                return -ENOMEM;
        if (r < 0 || json_array_size(terms) == 0)
                return slack_fail(rp, "invalid_arguments");
        const char *name;
        json_t *url;
        json_object_foreach (json_object_get(c->world, "emoji"), name, url) {
                size_t i;
                json_t *t;
                bool hit = false;
                json_array_foreach (terms, i, t) {
                        hit = hit || strcasestr(name, json_string_value(t));
                }
                if (hit && json_array_append_new(
                                   out, json_pack("{s:s, s:O}", "name", name, "url", url)) < 0)
                        return -ENOMEM;
        }
        return slack_ok(rp, json_pack("{s:O}", "emojis", out));
}

/* Whether every blank-separated word of query appears (case-insensitive) in one of fields. */
static bool words_match(const char *query, const char *const *fields, size_t n)
{
        const char *p = query;
        while (*p) {
                while (*p == ' ')
                        p++;
                size_t l = strcspn(p, " ");
                if (l == 0)
                        break;
                char word[256];
                if (l >= sizeof(word))
                        return false;
                memcpy(word, p, l);
                word[l] = 0;
                bool found = false;
                for (size_t i = 0; i < n && !found; i++)
                        found = fields[i] && strcasestr(fields[i], word);
                if (!found)
                        return false;
                p += l;
        }
        return true;
}

/* slack_search_users: users whose name, real name, display name, title or email match. */
int slack_act_search_users(TwinCall *c, TwinReply *rp)
{
        const char *query;
        int r = slack_arg_string(c, rp, "query", NULL, NULL, &query);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *match = json_array();
        if (!match)
                return -ENOMEM;
        size_t i;
        json_t *u;
        json_array_foreach (json_object_get(c->world, "users"), i, u) {
                json_t *p = json_object_get(u, "profile");
                const char *fields[] = {
                        json_get_str(u, "name"),         json_get_str(u, "real_name"),
                        json_get_str(p, "display_name"), json_get_str(p, "title"),
                        json_get_str(p, "email"),        json_get_str(u, "id")};
                if (slack_user_visible(u) && !json_is_true(json_object_get(u, "deleted")) &&
                    words_match(strempty(query), fields, ELEMENTSOF(fields)) &&
                    json_array_append(match, u) < 0)
                        return -ENOMEM;
        }
        return slack_list_page(c, rp, match, 20, 100, slack_render_user, "users", NULL);
}

/*
 * usergroups.list (https://api.slack.com/methods/usergroups.list): {ok, usergroups}. The twin
 * models no user groups (a seed cannot make one), so the list is empty, as in a workspace that
 * has none; include_users, include_count and include_disabled are read and change nothing.
 */
int slack_act_list_usergroups(TwinCall *c, TwinReply *rp)
{
        static const char *const flags[] = {"include_users", "include_count", "include_disabled"};
        for (size_t i = 0; i < ELEMENTSOF(flags); i++) {
                bool b;
                if (twin_arg_bool(c->args, flags[i], &b) == -EINVAL)
                        return slack_fail(rp, "invalid_arguments");
        }
        return slack_ok(rp, json_pack("{s:[]}", "usergroups"));
}
