/* SPDX-License-Identifier: MIT */
/*
 * The Slack twin (kind "slack"): the Web API (https://api.slack.com/methods), served at
 * /{method} and /api/{method} for any HTTP method (SDKs POST form bodies; GET + query and
 * JSON bodies work too), and the tools of Slack's MCP server. API errors are HTTP 200
 * {ok:false, error}, as on slack.com. This file holds the world, the seed, the shared
 * helpers and the handler table; the methods live in one file per family (slack.h).
 *
 * The world is the normalised seed:
 *   team          {id, name, domain, email_domain}
 *   users[]       {id, name, real_name, is_bot, is_admin, is_owner, deleted, tz, profile{...},
 *                 bot_id?, hidden?}; hidden: a user the token may not see
 *   channels[]    {id, name?, is_private, is_archived, created, creator, topic{value, creator,
 *                 last_set}, purpose{...}, members[user ids], messages[], pins[{ts, created,
 *                 created_by}], bookmarks[], is_im?, is_mpim?, user? (the other side of a DM)}
 *   message       {type:"message", ts, user?, text, thread_ts?, reply_broadcast?, reactions?
 *                 [{name, users[], count}], bot_id?, blocks?, attachments?, edited?, files?},
 *                 oldest first
 *   scheduled[]   {id, channel_id, post_at, date_created, text, thread_ts?, reply_broadcast?,
 *                 blocks?, attachments?}: pending chat.scheduleMessage messages; the kind's
 *                 advance hook (slack_deliver_scheduled) posts each once post_at has passed
 *   files[]       {id, name, title, filetype, mimetype, size, user, created, channels[],
 *                 content, upload_pending?, sections? (canvases: filetype "quip")}
 *   emoji         {name: url or "alias:name"} (custom emoji, emoji.list)
 *   bot           {user_id, bot_id?}: who the token is. The seeded user U_PRIMARY (hosted
 *                 Pome's task seeds), else the first seeded user with is_bot, else a
 *                 synthetic "pome-bot" user appended to users[]
 *   secrets       optional, anything: kept verbatim, redacted in /_pome/state
 *   next_id       counter for generated ids (T…, U…, C…, B…, F…, deterministic per seed)
 *   last_ts_us    the latest message ts issued, in microseconds: new messages get
 *                 max(now, last + 1 µs), so two posts in one second still differ and ts
 *                 only grows
 * Seeds may name users by id or by name, and channels as "general" or "#general"; a key a
 * seed entry does not know is refused with its JSON path.
 *
 * Membership is Slack's: a private conversation the caller is not in is channel_not_found
 * everywhere (and absent from lists and search); reading or writing a public channel it
 * has not joined is not_in_channel. Behaviour choices: channels are resolved by id or by
 * name for every method (slack.com only takes names in chat.postMessage); an unknown
 * thread_ts is refused with thread_not_found; reaction names may carry their colons.
 */
#include <strings.h>

#include "common/json-util.h"
#include "pods/slack/slack.h"

/* ------------------------------------------------------------------ world helpers */

json_t *slack_find_by(json_t *list, const char *key, const char *value)
{
        size_t i;
        json_t *x;
        json_array_foreach (list, i, x) {
                if (streq_ptr(json_get_str(x, key), value))
                        return x;
        }
        return NULL;
}

json_t *slack_user_by_id(json_t *w, const char *id)
{
        return slack_find_by(json_object_get(w, "users"), "id", id);
}

/* A user by id, or by name ("alice", "@alice"). */
json_t *slack_user_resolve(json_t *w, const char *ref)
{
        json_t *u = slack_user_by_id(w, ref);
        if (!u)
                u = slack_find_by(json_object_get(w, "users"), "name",
                                  ref[0] == '@' ? ref + 1 : ref);
        return u;
}

/* A channel by id, or by name ("general", "#general"). */
json_t *slack_channel_resolve(json_t *w, const char *ref)
{
        json_t *chans = json_object_get(w, "channels");
        json_t *ch = slack_find_by(chans, "id", ref);
        if (!ch)
                ch = slack_find_by(chans, "name", ref[0] == '#' ? ref + 1 : ref);
        return ch;
}

/* A new id prefix + 8 hex digits, unique among users, channels and the team. */
int slack_alloc_id(json_t *w, char prefix, char ret[static 16])
{
        for (;;) {
                json_int_t n = json_integer_value(json_object_get(w, "next_id"));
                if (n < 1)
                        n = 1;
                if (json_object_set_new(w, "next_id", json_integer(n + 1)) < 0)
                        return -ENOMEM;
                snprintf(ret, 16, "%c%08llX", prefix, (unsigned long long)n & 0xffffffffull);
                /* a seeded id may already hold this value: skip it */
                if (!slack_user_by_id(w, ret) &&
                    !slack_find_by(json_object_get(w, "channels"), "id", ret) &&
                    !streq_ptr(json_get_str(json_object_get(w, "team"), "id"), ret) &&
                    !slack_find_by(json_object_get(w, "users"), "bot_id", ret))
                        return 0;
        }
}

/* Parses "1700000000.000100" (or "1700000000", or a JSON number) into microseconds. */
int slack_ts_parse(const json_t *v, int64_t *ret)
{
        char buf[64];
        if (json_is_integer(v) || json_is_real(v)) {
                double d = json_number_value(v);
                if (!(d >= 0 && d < 1e11))
                        return -EINVAL;
                *ret = (int64_t)(d * 1e6 + 0.5);
                return 0;
        }
        const char *s = json_string_value(v);
        if (!s || strlen(s) >= sizeof(buf))
                return -EINVAL;
        size_t secs = strspn(s, "0123456789");
        if (secs == 0 || secs > 10)
                return -EINVAL;
        int64_t us = 0;
        for (size_t i = 0; i < secs; i++)
                us = us * 10 + (s[i] - '0');
        us *= 1000000;
        if (s[secs] == '.') {
                const char *f = s + secs + 1;
                size_t fl = strspn(f, "0123456789");
                if (fl == 0 || fl > 6 || f[fl])
                        return -EINVAL;
                int64_t frac = 0;
                for (size_t i = 0; i < 6; i++)
                        frac = frac * 10 + (i < fl ? f[i] - '0' : 0);
                us += frac;
        } else if (s[secs])
                return -EINVAL;
        *ret = us;
        return 0;
}

json_t *slack_ts_string(int64_t us)
{
        char buf[32];
        snprintf(buf, sizeof(buf), "%lld.%06lld", (long long)(us / 1000000),
                 (long long)(us % 1000000));
        return json_string(buf);
}

int64_t slack_msg_ts(json_t *m)
{
        int64_t us = 0;
        (void)slack_ts_parse(json_object_get(m, "ts"), &us);
        return us;
}

/* Characters (code points) of valid UTF-8, which every jansson string is. */
size_t slack_utf8_chars(const char *s)
{
        size_t n = 0;
        for (; *s; s++)
                n += ((unsigned char)*s & 0xc0) != 0x80;
        return n;
}

bool slack_msg_top_level(json_t *m)
{
        const char *th = json_get_str(m, "thread_ts");
        return !th || streq(th, json_get_str(m, "ts")) ||
               json_is_true(json_object_get(m, "reply_broadcast"));
}

json_t *slack_msg_find(json_t *ch, int64_t ts_us, size_t *ret_idx)
{
        size_t i;
        json_t *m;
        json_array_foreach (json_object_get(ch, "messages"), i, m) {
                if (slack_msg_ts(m) == ts_us) {
                        if (ret_idx)
                                *ret_idx = i;
                        return m;
                }
        }
        return NULL;
}

/* ------------------------------------------------------------------ seed */

static bool id_valid(const char *s, const char *prefixes)
{
        size_t n = strlen(s);
        /* ours look like "U0123ABCD"; hosted Pome's seeds use "U_PRIMARY", "C_GENERAL" */
        return n >= 2 && n <= 64 && strchr(prefixes, s[0]) &&
               strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == n;
}

static bool channel_name_valid(const char *s)
{
        size_t n = strlen(s);
        return n > 0 && n <= 80 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-_.") == n;
}

/* A user reference (id or name) → the user's id. */
static int seed_user_ref(TwinSeed *s, json_t *v, const char *path, const char **ret)
{
        json_t *u = json_is_string(v) ? slack_user_resolve(s->world, json_string_value(v)) : NULL;
        if (!u)
                return twin_seed_error(s->err, s->errlen,
                                       "%s: must name a user of the seed (id or name)", path);
        *ret = json_get_str(u, "id");
        return 0;
}

static int seed_team(TwinSeed *s, const json_t *seed)
{
        json_t *t = json_object_get(seed, "team");
        const char *id = NULL, *name = "pome", *domain = NULL;
        int r;
        static const char *const keys[] = {"id", "name", "domain", "icon"};
        if (t && !json_is_object(t))
                return twin_seed_error(s->err, s->errlen, "team: must be an object");
        if (t && (r = twin_seed_known(s, t, "team", "team", keys, ELEMENTSOF(keys))) < 0)
                return r;
        if ((r = twin_seed_str(s, t, "id", "team", NULL, TWIN_NULL_ABSENT, &id)) < 0 ||
            (r = twin_seed_str(s, t, "name", "team", name, TWIN_NULL_ABSENT, &name)) < 0 ||
            (r = twin_seed_str(s, t, "domain", "team", NULL, TWIN_NULL_ABSENT, &domain)) < 0)
                return r;
        if (id && !id_valid(id, "TE"))
                return twin_seed_error(s->err, s->errlen,
                                       "team.id: must look like \"T0123ABCD\" (T + capitals, "
                                       "digits)");
        char gen[16];
        if (!id) {
                if ((r = slack_alloc_id(s->world, 'T', gen)) < 0)
                        return r;
                id = gen;
        }
        /* without a domain, the name made one as Slack suggests it: "Acme Corp" → acme-corp */
        char slug[64];
        if (!domain) {
                size_t n = 0;
                for (const char *p = name; *p && n < sizeof(slug) - 1; p++) {
                        char ch = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
                        bool keep = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
                        if (keep)
                                slug[n++] = ch;
                        else if (n > 0 && slug[n - 1] != '-')
                                slug[n++] = '-';
                }
                while (n > 0 && slug[n - 1] == '-')
                        n--;
                slug[n] = 0;
                domain = n ? slug : "workspace";
        }
        if (!domain[0] || strspn(domain, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(domain))
                return twin_seed_error(s->err, s->errlen,
                                       "team.domain: must be lower-case letters, digits and '-'");
        json_t *team = json_pack("{s:s, s:s, s:s, s:s}", "id", id, "name", name, "domain", domain,
                                 "email_domain", "");
        return json_object_set_new(s->world, "team", team) < 0 ? -ENOMEM : 0;
}

/*
 * The first pass over the seed's users or channels (the array a, at list): every entry is an
 * object, and an id it brings looks like ours (a first letter out of prefixes; shape says
 * how, for the message) and is not taken by a user or an earlier row. Appends one {id} row
 * per entry ({} without an id) to rows, so the ids generated later never collide with a
 * seeded one.
 */
static int seed_ids(TwinSeed *s, const json_t *a, const char *list, const char *prefixes,
                    const char *shape, json_t *rows)
{
        size_t i;
        json_t *v;
        json_array_foreach (a, i, v) {
                char p[64];
                const char *id;
                int r;
                snprintf(p, sizeof(p), "%s[%zu]", list, i);
                if (!json_is_object(v))
                        return twin_seed_error(s->err, s->errlen, "%s: must be an object", p);
                if ((r = twin_seed_str(s, v, "id", p, NULL, TWIN_NULL_ABSENT, &id)) < 0)
                        return r;
                if (id && !id_valid(id, prefixes))
                        return twin_seed_error(s->err, s->errlen, "%s.id: must look like %s", p,
                                               shape);
                if (id && (slack_find_by(rows, "id", id) || slack_user_by_id(s->world, id)))
                        return twin_seed_error(s->err, s->errlen, "%s.id: duplicate id \"%s\"", p,
                                               id);
                if (json_array_append_new(rows, json_pack("{s:s?}", "id", id)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int seed_users(TwinSeed *s, const json_t *seed)
{
        json_t *a, *users = json_object_get(s->world, "users");
        int r = twin_seed_array(s, seed, "users", "", &a);
        if (r < 0)
                return r;
        r = seed_ids(s, a, "users", "UWB", "\"U0123ABCD\" (U, W or B + capitals, digits, '_')",
                     users);
        if (r < 0)
                return r;
        size_t i;
        json_t *v;
        json_array_foreach (a, i, v) {
                static const char *const keys[] = {
                        "id",       "name",    "real_name", "display_name", "email",
                        "title",    "tz",      "bot_id",    "is_bot",       "is_admin",
                        "is_owner", "deleted", "profile",   "hidden"};
                char p[64], gen[16];
                const char *id, *name, *real, *tz, *bot_id, *email, *title, *display;
                bool is_bot = false, is_admin = false, is_owner = false, deleted = false,
                     hidden = false;
                json_t *u = json_array_get(users, i), *profile = json_object_get(v, "profile");
                snprintf(p, sizeof(p), "users[%zu]", i);
                if ((r = twin_seed_known(s, v, p, "user", keys, ELEMENTSOF(keys))) < 0 ||
                    (r = twin_seed_str(s, v, "email", p, NULL, TWIN_NULL_ABSENT, &email)) < 0 ||
                    (r = twin_seed_str(s, v, "title", p, NULL, TWIN_NULL_ABSENT, &title)) < 0 ||
                    (r = twin_seed_str(s, v, "display_name", p, NULL, TWIN_NULL_ABSENT, &display)) <
                            0 ||
                    (r = twin_seed_bool(s, v, "is_owner", p, false, &is_owner)) < 0 ||
                    (r = twin_seed_bool(s, v, "hidden", p, false, &hidden)) < 0 ||
                    (r = twin_seed_str(s, v, "name", p, NULL, TWIN_NULL_ABSENT, &name)) < 0 ||
                    (r = twin_seed_str(s, v, "real_name", p, NULL, TWIN_NULL_ABSENT, &real)) < 0 ||
                    (r = twin_seed_str(s, v, "tz", p, "UTC", TWIN_NULL_ABSENT, &tz)) < 0 ||
                    (r = twin_seed_str(s, v, "bot_id", p, NULL, TWIN_NULL_ABSENT, &bot_id)) < 0 ||
                    (r = twin_seed_bool(s, v, "is_bot", p, false, &is_bot)) < 0 ||
                    (r = twin_seed_bool(s, v, "is_admin", p, false, &is_admin)) < 0 ||
                    (r = twin_seed_bool(s, v, "deleted", p, false, &deleted)) < 0)
                        return r;
                if (!name || !name[0] || strchr(name, ' '))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.name: needs a user name without spaces", p);
                if (slack_find_by(users, "name", name))
                        return twin_seed_error(s->err, s->errlen, "%s.name: duplicate name \"%s\"",
                                               p, name);
                if (profile && !json_is_object(profile))
                        return twin_seed_error(s->err, s->errlen, "%s.profile: must be an object",
                                               p);
                if (bot_id && !id_valid(bot_id, "B"))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.bot_id: must look like \"B0123ABCD\"", p);
                id = json_get_str(u, "id");
                if (!id) {
                        if ((r = slack_alloc_id(s->world, 'U', gen)) < 0)
                                return r;
                        id = gen;
                }
                _cleanup_json_ json_t *prof = profile ? json_deep_copy(profile) : json_object();
                _cleanup_json_ json_t *defaults =
                        json_pack("{s:s, s:s, s:s, s:s?, s:s?}", "real_name", real ? real : name,
                                  "display_name", display ? display : name, "title",
                                  title ? title : "", "email", email, "status_text", "");
                if (!prof || !defaults)
                        return -ENOMEM;
                /* a profile without an email (a bot's) has no email member, not a null one */
                if (!email)
                        json_object_del(defaults, "email");
                if (json_object_update_missing(prof, defaults) < 0)
                        return -ENOMEM;
                json_t *row = json_pack("{s:s, s:s, s:s, s:b, s:b, s:b, s:b, s:s, s:O}", "id", id,
                                        "name", name, "real_name", real ? real : name, "is_bot",
                                        is_bot, "is_admin", is_admin, "is_owner", is_owner,
                                        "deleted", deleted, "tz", tz, "profile", prof);
                if (!row ||
                    (bot_id && json_object_set_new(row, "bot_id", json_string(bot_id)) < 0) ||
                    (hidden && json_object_set_new(row, "hidden", json_true()) < 0))
                        return -ENOMEM;
                if (json_array_set_new(users, i, row) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int seed_bot(TwinSeed *s)
{
        json_t *users = json_object_get(s->world, "users");
        json_t *bot = NULL;
        size_t i;
        json_t *u;
        char gen[16];
        int r;
        /* hosted Pome's task seeds name the agent U_PRIMARY; ours mark it is_bot */
        bot = slack_find_by(users, "id", "U_PRIMARY");
        json_array_foreach (users, i, u) {
                if (!bot && json_is_true(json_object_get(u, "is_bot"))) {
                        bot = u;
                        break;
                }
        }
        if (!bot) {
                if ((r = slack_alloc_id(s->world, 'U', gen)) < 0)
                        return r;
                bot = json_pack("{s:s, s:s, s:s, s:b, s:b, s:b, s:s, s:{s:s, s:s}}", "id", gen,
                                "name", "pome-bot", "real_name", "Pome Bot", "is_bot", true,
                                "is_admin", false, "deleted", false, "tz", "UTC", "profile",
                                "real_name", "Pome Bot", "display_name", "pome-bot");
                if (json_array_append_new(users, bot) < 0)
                        return -ENOMEM;
        }
        if (!json_get_str(bot, "bot_id") && json_is_true(json_object_get(bot, "is_bot"))) {
                if ((r = slack_alloc_id(s->world, 'B', gen)) < 0 ||
                    json_object_set_new(bot, "bot_id", json_string(gen)) < 0)
                        return r < 0 ? r : -ENOMEM;
        }
        json_t *b = json_pack("{s:O, s:O*}", "user_id", json_object_get(bot, "id"), "bot_id",
                              json_object_get(bot, "bot_id"));
        return json_object_set_new(s->world, "bot", b) < 0 ? -ENOMEM : 0;
}

/* topic / purpose: a string or {value, creator?, last_set?}. */
static int seed_topic(TwinSeed *s, const json_t *ch, const char *key, const char *path,
                      const char *creator, int64_t created, json_t *row)
{
        json_t *v = json_object_get(ch, key);
        const char *value = "";
        int r;
        if (json_is_string(v))
                value = json_string_value(v);
        else if (json_is_object(v)) {
                char p[128];
                snprintf(p, sizeof(p), "%s.%s", path, key);
                if ((r = twin_seed_str(s, v, "value", p, "", TWIN_NULL_ABSENT, &value)) < 0)
                        return r;
        } else if (v && !json_is_null(v))
                return twin_seed_error(s->err, s->errlen, "%s.%s: must be a string or {value}",
                                       path, key);
        json_t *t = json_pack("{s:s, s:s, s:I}", "value", value, "creator", value[0] ? creator : "",
                              "last_set", (json_int_t)(value[0] ? created : 0));
        return json_object_set_new(row, key, t) < 0 ? -ENOMEM : 0;
}

/*
 * reactions: [{name, users: [user…]}] (ours, Slack's shape) or [{name, user}] (hosted
 * Pome's task seeds: one entry per user); entries of one name are merged.
 */
static int seed_reactions(TwinSeed *s, const json_t *m, const char *path, json_t *row)
{
        json_t *a;
        int r = twin_seed_array(s, m, "reactions", path, &a);
        if (r < 0 || !a)
                return r;
        _cleanup_json_ json_t *out = json_array();
        if (!out)
                return -ENOMEM;
        size_t i;
        json_t *v;
        json_array_foreach (a, i, v) {
                static const char *const keys[] = {"name", "users", "user", "count"};
                char p[192];
                const char *name;
                json_t *users, *one = json_object_get(v, "user");
                snprintf(p, sizeof(p), "%s.reactions[%zu]", path, i);
                if (!json_is_object(v))
                        return twin_seed_error(s->err, s->errlen, "%s: must be an object", p);
                if ((r = twin_seed_known(s, v, p, "reaction", keys, ELEMENTSOF(keys))) < 0 ||
                    (r = twin_seed_str(s, v, "name", p, NULL, TWIN_NULL_ABSENT, &name)) < 0 ||
                    (r = twin_seed_array(s, v, "users", p, &users)) < 0)
                        return r;
                if (!name || !name[0])
                        return twin_seed_error(s->err, s->errlen, "%s: needs a name", p);
                if (!users == !one)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s: needs users (a list) or user (one)", p);
                json_t *x = slack_find_by(out, "name", name);
                if (!x) {
                        x = json_pack("{s:s, s:[], s:i}", "name", name, "users", "count", 0);
                        if (!x || json_array_append_new(out, x) < 0)
                                return -ENOMEM;
                }
                json_t *ids = json_object_get(x, "users");
                size_t k, n = one ? 1 : json_array_size(users);
                for (k = 0; k < n; k++) {
                        char pu[256];
                        const char *id;
                        if (one)
                                snprintf(pu, sizeof(pu), "%s.user", p);
                        else
                                snprintf(pu, sizeof(pu), "%s.users[%zu]", p, k);
                        if ((r = seed_user_ref(s, one ? one : json_array_get(users, k), pu, &id)) <
                            0)
                                return r;
                        if (!slack_strv_has(ids, id) &&
                            json_array_append_new(ids, json_string(id)) < 0)
                                return -ENOMEM;
                }
                if (json_array_size(ids) == 0)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.users: needs at least one user", p);
                if (json_object_set_new(x, "count",
                                        json_integer((json_int_t)json_array_size(ids))) < 0)
                        return -ENOMEM;
        }
        return json_array_size(out) && json_object_set(row, "reactions", out) < 0 ? -ENOMEM : 0;
}

static int cmp_msg(const void *a, const void *b)
{
        int64_t x = slack_msg_ts(*(json_t *const *)a), y = slack_msg_ts(*(json_t *const *)b);
        return (x > y) - (x < y);
}

static int seed_messages(TwinSeed *s, const json_t *ch, const char *path, json_t *row)
{
        json_t *a;
        int r = twin_seed_array(s, ch, "messages", path, &a);
        if (r < 0)
                return r;
        json_t *msgs = json_object_get(row, "messages");
        int64_t last = json_integer_value(json_object_get(s->world, "last_ts_us"));
        size_t i;
        json_t *v;
        json_array_foreach (a, i, v) {
                char p[128], pu[160];
                const char *text, *user = NULL;
                int64_t ts;
                snprintf(p, sizeof(p), "%s.messages[%zu]", path, i);
                static const char *const keys[] = {
                        "user",   "text",        "ts",      "thread_ts", "reactions",
                        "blocks", "attachments", "subtype", "bot_id",    "reply_broadcast",
                        "pinned"};
                bool pinned = false, broadcast = false;
                if (!json_is_object(v))
                        return twin_seed_error(s->err, s->errlen, "%s: must be an object", p);
                if ((r = twin_seed_known(s, v, p, "message", keys, ELEMENTSOF(keys))) < 0 ||
                    (r = twin_seed_bool(s, v, "pinned", p, false, &pinned)) < 0 ||
                    (r = twin_seed_bool(s, v, "reply_broadcast", p, false, &broadcast)) < 0 ||
                    (r = twin_seed_str(s, v, "text", p, "", TWIN_NULL_ABSENT, &text)) < 0)
                        return r;
                json_t *jts = json_object_get(v, "ts");
                if (jts && slack_ts_parse(jts, &ts) < 0)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.ts: must look like \"1700000000.000100\"", p);
                if (!jts)
                        ts = last < SLACK_SEED_TS_US ? SLACK_SEED_TS_US : last + 100;
                if (slack_msg_find(row, ts, NULL))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.ts: another message of the channel has this ts",
                                               p);
                if (ts > last)
                        last = ts;
                snprintf(pu, sizeof(pu), "%s.user", p);
                json_t *ju = json_object_get(v, "user");
                if (ju && !json_is_null(ju) && (r = seed_user_ref(s, ju, pu, &user)) < 0)
                        return r;

                _cleanup_json_ json_t *m =
                        json_pack("{s:s, s:o, s:s?, s:s}", "type", "message", "ts",
                                  slack_ts_string(ts), "user", user, "text", text);
                if (!m)
                        return -ENOMEM;
                /* blocks, attachments, subtype, bot_id: carried as the seed wrote them */
                const char *carry[] = {"blocks", "attachments", "subtype", "bot_id"};
                for (size_t k = 0; k < ELEMENTSOF(carry); k++) {
                        json_t *x = json_object_get(v, carry[k]);
                        if (x && json_object_set_new(m, carry[k], json_deep_copy(x)) < 0)
                                return -ENOMEM;
                }
                json_t *th = json_object_get(v, "thread_ts");
                if (th && !json_is_null(th)) {
                        int64_t t;
                        if (slack_ts_parse(th, &t) < 0)
                                return twin_seed_error(s->err, s->errlen,
                                                       "%s.thread_ts: must look like "
                                                       "\"1700000000.000100\"",
                                                       p);
                        if (json_object_set_new(m, "thread_ts", slack_ts_string(t)) < 0)
                                return -ENOMEM;
                }
                if ((r = seed_reactions(s, v, p, m)) < 0)
                        return r;
                if (broadcast && json_object_set_new(m, "reply_broadcast", json_true()) < 0)
                        return -ENOMEM;
                if (pinned &&
                    json_array_append_new(json_object_get(row, "pins"),
                                          json_pack("{s:o, s:I, s:s}", "ts", slack_ts_string(ts),
                                                    "created", (json_int_t)(ts / 1000000),
                                                    "created_by", strempty(user))) < 0)
                        return -ENOMEM;
                if (json_array_append(msgs, m) < 0)
                        return -ENOMEM;
        }

        /* oldest first, whatever order the seed used; then every thread_ts needs its parent */
        size_t n = json_array_size(msgs);
        _cleanup_free_ json_t **sorted = calloc(n + 1, sizeof(json_t *));
        if (!sorted)
                return -ENOMEM;
        for (i = 0; i < n; i++)
                sorted[i] = json_incref(json_array_get(msgs, i));
        qsort(sorted, n, sizeof(json_t *), cmp_msg);
        json_array_clear(msgs);
        for (i = 0; i < n; i++)
                if (json_array_append_new(msgs, sorted[i]) < 0)
                        return -ENOMEM;
        json_array_foreach (msgs, i, v) {
                int64_t t;
                json_t *th = json_object_get(v, "thread_ts");
                if (th && (slack_ts_parse(th, &t) < 0 || !slack_msg_find(row, t, NULL)))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.messages: thread_ts %s has no message with "
                                               "that ts in the channel",
                                               path, json_string_value(th));
        }
        return json_object_set_new(s->world, "last_ts_us", json_integer(last)) < 0 ? -ENOMEM : 0;
}

static int seed_channels(TwinSeed *s, const json_t *seed)
{
        json_t *a, *chans = json_object_get(s->world, "channels");
        int r = twin_seed_array(s, seed, "channels", "", &a);
        if (r < 0)
                return r;
        r = seed_ids(s, a, "channels", "CGDM",
                     "\"C0123ABCD\" (C, G, D or M + capitals, digits, '_')", chans);
        if (r < 0)
                return r;
        size_t i;
        json_t *v;
        const char *bot = json_get_str(json_object_get(s->world, "bot"), "user_id");
        json_array_foreach (a, i, v) {
                static const char *const keys[] = {
                        "id",      "name",  "is_private", "is_archived", "created",
                        "creator", "topic", "purpose",    "members",     "messages"};
                char p[64], gen[16];
                const char *id, *name, *creator = bot;
                bool priv = false, archived = false;
                json_t *row = json_array_get(chans, i), *members;
                snprintf(p, sizeof(p), "channels[%zu]", i);
                if ((r = twin_seed_known(s, v, p, "channel", keys, ELEMENTSOF(keys))) < 0 ||
                    (r = twin_seed_str(s, v, "name", p, NULL, TWIN_NULL_ABSENT, &name)) < 0 ||
                    (r = twin_seed_bool(s, v, "is_private", p, false, &priv)) < 0 ||
                    (r = twin_seed_bool(s, v, "is_archived", p, false, &archived)) < 0 ||
                    (r = twin_seed_array(s, v, "members", p, &members)) < 0)
                        return r;
                if (name && name[0] == '#')
                        name++;
                if (!name || !channel_name_valid(name))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.name: needs a channel name (lower-case "
                                               "letters, digits, '-', '_')",
                                               p);
                if (slack_find_by(chans, "name", name))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.name: duplicate channel \"%s\"", p, name);
                json_t *jc = json_object_get(v, "creator");
                if (jc && !json_is_null(jc)) {
                        char pc[96];
                        snprintf(pc, sizeof(pc), "%s.creator", p);
                        if ((r = seed_user_ref(s, jc, pc, &creator)) < 0)
                                return r;
                }
                int64_t created = 1700000000;
                json_t *jcr = json_object_get(v, "created");
                if (jcr && (!json_is_integer(jcr) || json_integer_value(jcr) < 0))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.created: must be seconds since the epoch", p);
                if (jcr)
                        created = json_integer_value(jcr);

                /* members: the listed users, else everybody (a fresh workspace's #general) */
                _cleanup_json_ json_t *ids = json_array();
                if (!ids)
                        return -ENOMEM;
                size_t k;
                json_t *mv;
                json_array_foreach (members ? members : json_object_get(s->world, "users"), k, mv) {
                        char pm[128];
                        const char *uid = json_get_str(mv, "id");
                        snprintf(pm, sizeof(pm), "%s.members[%zu]", p, k);
                        if (members && (r = seed_user_ref(s, mv, pm, &uid)) < 0)
                                return r;
                        bool dup = false;
                        size_t q;
                        json_t *y;
                        json_array_foreach (ids, q, y) {
                                dup = dup || streq(json_string_value(y), uid);
                        }
                        if (!dup && json_array_append_new(ids, json_string(uid)) < 0)
                                return -ENOMEM;
                }

                id = json_get_str(row, "id");
                if (!id) {
                        /* private channels have had C ids since 2021, like public ones */
                        if ((r = slack_alloc_id(s->world, 'C', gen)) < 0)
                                return r;
                        id = gen;
                }
                _cleanup_json_ json_t *ch =
                        json_pack("{s:s, s:s, s:b, s:b, s:I, s:s, s:O, s:[], s:[], s:[]}", "id", id,
                                  "name", name, "is_private", priv, "is_archived", archived,
                                  "created", (json_int_t)created, "creator", strempty(creator),
                                  "members", ids, "messages", "pins", "bookmarks");
                if (!ch)
                        return -ENOMEM;
                if ((r = seed_topic(s, v, "topic", p, strempty(creator), created, ch)) < 0 ||
                    (r = seed_topic(s, v, "purpose", p, strempty(creator), created, ch)) < 0)
                        return r;
                if (json_array_set(chans, i, ch) < 0)
                        return -ENOMEM;
                if ((r = seed_messages(s, v, p, ch)) < 0)
                        return r;
        }
        return 0;
}

/*
 * Custom emoji (emoji.list): an object name → image URL or "alias:other" (Slack's shape), or
 * hosted Pome's list [{name, url?, alias?}].
 */
static int seed_emoji(TwinSeed *s, const json_t *seed)
{
        json_t *emoji = json_object_get(seed, "emoji"), *out = json_object_get(s->world, "emoji");
        static const char *const chars = "abcdefghijklmnopqrstuvwxyz0123456789_+-'";
        if (!emoji || json_is_null(emoji))
                return 0;
        if (json_is_object(emoji)) {
                const char *en;
                json_t *ev;
                json_object_foreach (emoji, en, ev) {
                        if (!json_is_string(ev) || !en[0] || strspn(en, chars) != strlen(en))
                                return twin_seed_error(s->err, s->errlen,
                                                       "emoji.%s: needs a lower-case name and a "
                                                       "URL string",
                                                       en);
                        if (json_object_set(out, en, ev) < 0)
                                return -ENOMEM;
                }
                return 0;
        }
        if (!json_is_array(emoji))
                return twin_seed_error(s->err, s->errlen,
                                       "emoji: must be an object of name → URL, or a list of "
                                       "{name, url?, alias?}");
        size_t i;
        json_t *v;
        json_array_foreach (emoji, i, v) {
                static const char *const keys[] = {"name", "url", "alias"};
                char p[64];
                const char *name, *url, *alias;
                int r;
                snprintf(p, sizeof(p), "emoji[%zu]", i);
                if (!json_is_object(v))
                        return twin_seed_error(s->err, s->errlen, "%s: must be an object", p);
                if ((r = twin_seed_known(s, v, p, "emoji", keys, ELEMENTSOF(keys))) < 0 ||
                    (r = twin_seed_str(s, v, "name", p, NULL, TWIN_NULL_ABSENT, &name)) < 0 ||
                    (r = twin_seed_str(s, v, "url", p, NULL, TWIN_NULL_ABSENT, &url)) < 0 ||
                    (r = twin_seed_str(s, v, "alias", p, NULL, TWIN_NULL_ABSENT, &alias)) < 0)
                        return r;
                if (!name || !name[0] || strspn(name, chars) != strlen(name) ||
                    (alias && (!alias[0] || strspn(alias, chars) != strlen(alias))))
                        return twin_seed_error(s->err, s->errlen,
                                               "%s: needs a lower-case name (and alias)", p);
                _cleanup_free_ char *value = NULL;
                if (alias ? asprintf(&value, "alias:%s", alias) < 0
                    : url ? !(value = strdup(url))
                          : asprintf(
                                    &value, "https://emoji.slack-edge.com/%s/%s.png",
                                    strempty(json_get_str(json_object_get(s->world, "team"), "id")),
                                    name) < 0)
                        return -ENOMEM;
                if (json_object_set_new(out, name, json_string(value)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static const char *const seed_keys[] = {"team", "users", "channels", "emoji", "secrets", NULL};

static int slack_load_seed(const json_t *seed, json_t **ret_world, char *err, size_t errlen)
{
        _cleanup_json_ json_t *world = json_pack(
                "{s:[], s:[], s:[], s:[], s:{}, s:I, s:I}", "users", "channels", "scheduled",
                "files", "emoji", "next_id", (json_int_t)1, "last_ts_us", (json_int_t)0);
        if (!world)
                return -ENOMEM;
        TwinSeed s = {.world = world, .err = err, .errlen = errlen};
        int r = twin_seed_known(&s, seed, "", "slack seed", seed_keys, ELEMENTSOF(seed_keys) - 1);
        if (r < 0 || (r = seed_team(&s, seed)) < 0 || (r = seed_users(&s, seed)) < 0 ||
            (r = seed_bot(&s)) < 0 || (r = seed_channels(&s, seed)) < 0)
                return r;
        if ((r = seed_emoji(&s, seed)) < 0)
                return r;
        json_t *secrets = json_object_get(seed, "secrets");
        if (secrets && json_object_set_new(world, "secrets", json_deep_copy(secrets)) < 0)
                return -ENOMEM;
        *ret_world = TAKE_PTR(world);
        return 0;
}

/* ------------------------------------------------------------------ replies */

void slack_error(int status, const char *code, const char *message, TwinReply *rp)
{
        (void)message;
        /* slack.com answers API errors with HTTP 200; only its own failures are 5xx: a
         * twin's own fault is internal_error, the front's (busy, twin_timeout,
         * insufficient_storage…) keep their code */
        twin_reply_json(rp, status >= 500 ? status : 200,
                        json_pack("{s:b, s:s}", "ok", false, "error",
                                  status == 500 || (status > 500 && !code) ? "internal_error"
                                  : code                                   ? code
                                                                           : "invalid_arguments"));
}

/* Slack Web API errors common to every method: not_authed, invalid_auth, token_expired. */
static void slack_auth_error(TwinAuthFailure why, TwinReply *rp)
{
        const char *error = "invalid_auth"; /* also a token of another workspace's sandbox */
        switch (why) {
        case TWIN_AUTH_MISSING:
                error = "not_authed";
                break;
        case TWIN_AUTH_EXPIRED:
                error = "token_expired";
                break;
        case TWIN_AUTH_INVALID:
        case TWIN_AUTH_WRONG_SESSION:
                break;
        }
        twin_reply_json(rp, 401, json_pack("{s:b, s:s}", "ok", false, "error", error));
}

/*
 * The control surfaces as hosted Pome's Slack twin answers them: its admin gate 403
 * restricted_action, any refused seed 500 internal_error (the admin surface's own envelope,
 * the reason under "warning"), /mcp/call 404 unknown_tool and 400 invalid_arguments.
 */
static void slack_control_error(TwinControlError what, const char *detail, TwinReply *rp)
{
        switch (what) {
        case TWIN_CONTROL_FORBIDDEN:
                twin_reply_json(rp, 403,
                                json_pack("{s:b, s:s}", "ok", false, "error", "restricted_action"));
                return;
        case TWIN_CONTROL_BAD_BODY:
        case TWIN_CONTROL_BAD_SEED:
                twin_reply_json(rp, 500,
                                json_pack("{s:b, s:s, s:s}", "ok", false, "error", "internal_error",
                                          "warning", detail ? detail : "The body is not a seed."));
                return;
        case TWIN_CONTROL_UNKNOWN_TOOL:
                twin_reply_json(rp, 404,
                                json_pack("{s:b, s:s}", "ok", false, "error", "unknown_tool"));
                return;
        case TWIN_CONTROL_NO_TOOL:
                twin_reply_json(rp, 400,
                                json_pack("{s:b, s:s}", "ok", false, "error", "invalid_arguments"));
                return;
        }
}

int slack_fail(TwinReply *rp, const char *error)
{
        slack_error(200, error, NULL, rp);
        return rp->body ? 0 : -ENOMEM;
}

/*
 * A required argument the call left out (absent, or JSON null): Slack's argument validator
 * answers invalid_arguments and names the field in response_metadata.messages, which
 * @slack/web-api logs ("[ERROR] missing required field: channel"). field is the name the
 * caller would have used: key on the Web API, alias (the MCP server's name) over MCP.
 * 1 when args[key] (else args[alias]) is there, 0 with the error in rp, -ENOMEM.
 */
int slack_arg_required(TwinCall *c, TwinReply *rp, const char *key, const char *alias)
{
        json_t *v = slack_arg2(c, key, alias);
        if (v && !json_is_null(v))
                return 1;
        _cleanup_free_ char *msg = NULL;
        if (asprintf(&msg, "[ERROR] missing required field: %s",
                     !c->request && alias ? alias : key) < 0)
                return -ENOMEM;
        twin_reply_json(rp, 200,
                        json_pack("{s:b, s:s, s:{s:[s]}}", "ok", false, "error",
                                  "invalid_arguments", "response_metadata", "messages", msg));
        return rp->body ? 0 : -ENOMEM;
}

/* {ok:true, ...more} with more stolen. */
int slack_ok(TwinReply *rp, json_t *more)
{
        if (!more || json_object_set_new(more, "ok", json_true()) < 0) {
                json_decref(more);
                return -ENOMEM;
        }
        twin_reply_json(rp, 200, more);
        return 0;
}

/* ------------------------------------------------------------------ rendering */

/*
 * Whether ch is a private channel of the kind Slack made before March 2021 (a G id), which
 * the API still shows as is_group, not is_channel; newer private channels (C ids) are
 * is_channel with is_private (https://api.slack.com/types/conversation).
 */
bool slack_channel_is_group(json_t *ch)
{
        const char *id = json_get_str(ch, "id");
        return json_is_true(json_object_get(ch, "is_private")) &&
               !json_is_true(json_object_get(ch, "is_im")) &&
               !json_is_true(json_object_get(ch, "is_mpim")) && id && id[0] == 'G';
}

json_t *slack_render_channel(TwinCall *c, json_t *ch)
{
        bool priv = json_is_true(json_object_get(ch, "is_private"));
        bool im = json_is_true(json_object_get(ch, "is_im"));
        bool mpim = json_is_true(json_object_get(ch, "is_mpim"));
        json_t *members = json_object_get(ch, "members");
        if (im)
                return json_pack("{s:O, s:b, s:b, s:b, s:b, s:O, s:O, s:b, s:b, s:b}", "id",
                                 json_object_get(ch, "id"), "is_channel", false, "is_group", false,
                                 "is_im", true, "is_mpim", false, "user",
                                 json_object_get(ch, "user"), "created",
                                 json_object_get(ch, "created"), "is_org_shared", false,
                                 "is_archived", false, "is_open", true);
        return json_pack(
                "{s:O, s:O, s:b, s:b, s:b, s:b, s:b, s:O, s:b, s:b, s:O, s:b, s:b, "
                "s:O, s:O, s:O, s:I, s:b, s:O, s:b, s:b, s:[], s:b, s:b, s:b, s:[], s:i, "
                "s:I, s:o}",
                "id", json_object_get(ch, "id"), "name", json_object_get(ch, "name"), "is_channel",
                !mpim && !slack_channel_is_group(ch), "is_group", slack_channel_is_group(ch),
                "is_im", false, "is_mpim", mpim, "is_private", priv, "created",
                json_object_get(ch, "created"), "is_archived",
                json_is_true(json_object_get(ch, "is_archived")), "is_general",
                streq_ptr(json_get_str(ch, "name"), "general"), "name_normalized",
                json_object_get(ch, "name"), "is_shared", false, "is_member",
                slack_is_member(ch, slack_bot_user(c)), "creator", json_object_get(ch, "creator"),
                "topic", json_object_get(ch, "topic"), "purpose", json_object_get(ch, "purpose"),
                "num_members", (json_int_t)json_array_size(members), "is_org_shared", false,
                /* what every channel object has (https://api.slack.com/types/conversation);
                 * the twin's workspace shares nothing and renames nothing */
                "context_team_id", json_object_get(json_object_get(c->world, "team"), "id"),
                "is_ext_shared", false, "is_pending_ext_shared", false, "pending_shared",
                "is_read_only", false, "is_thread_only", false, "is_non_threadable", false,
                "previous_names", "unlinked", 0, "updated",
                (json_int_t)json_integer_value(json_object_get(ch, "created")) * 1000, "last_read",
                json_object_get(ch, "last_read") ? json_incref(json_object_get(ch, "last_read"))
                                                 : json_string("0000000000.000000"));
}

/* The icons of a bot without its own: Slack's default bot icon, by size */
#define SLACK_BOT_ICON "https://a.slack-edge.com/80588/img/plugins/app/bot_"

/*
 * A message as the API shows it: the stored row, plus the thread summary on a parent
 * (thread_ts, reply_count, reply_users, latest_reply), parent_user_id on a reply, and on a
 * reply also sent to the channel subtype "thread_broadcast" with its thread's parent as
 * root (when with_root), as conversations.replies and the thread_broadcast message show
 * them (https://api.slack.com/events/message/thread_broadcast).
 */
static json_t *render_message(TwinCall *c, json_t *ch, json_t *m, bool with_root)
{
        _cleanup_json_ json_t *out = json_deep_copy(m);
        json_t *team = json_object_get(json_object_get(c->world, "team"), "id");
        if (!out || json_object_set(out, "team", team) < 0)
                return NULL;
        /* a bot's message names its app and carries its bot_profile, as Slack shows a message a
         * bot token posted (https://api.slack.com/events/message/bot_message) */
        const char *bot_id = json_get_str(m, "bot_id");
        if (bot_id && !json_object_get(out, "bot_profile")) {
                json_t *bu = slack_find_by(json_object_get(c->world, "users"), "bot_id", bot_id);
                char app[32];
                snprintf(app, sizeof(app), "A%s", bot_id[0] ? bot_id + 1 : "");
                json_t *icons = json_pack("{s:s, s:s, s:s}", "image_36", SLACK_BOT_ICON "36.png",
                                          "image_48", SLACK_BOT_ICON "48.png", "image_72",
                                          SLACK_BOT_ICON "72.png");
                if (json_object_set_new(out, "app_id", json_string(app)) < 0 ||
                    json_object_set_new(out, "bot_profile",
                                        json_pack("{s:s, s:s, s:O?, s:o, s:b, s:i, s:O}", "id",
                                                  bot_id, "app_id", app, "name",
                                                  json_object_get(bu, "name"), "icons", icons,
                                                  "deleted", false, "updated", 1767225600,
                                                  "team_id", team)) < 0)
                        return NULL;
        }
        const char *ts = json_get_str(m, "ts");
        _cleanup_json_ json_t *users = json_array();
        if (!users)
                return NULL;
        size_t i, replies = 0;
        json_t *r;
        const char *latest = NULL;
        json_array_foreach (json_object_get(ch, "messages"), i, r) {
                const char *th = json_get_str(r, "thread_ts"), *u = json_get_str(r, "user");
                if (!th || !streq(th, ts) || streq_ptr(json_get_str(r, "ts"), ts))
                        continue;
                replies++;
                latest = json_get_str(r, "ts");
                bool seen = !u;
                size_t k;
                json_t *x;
                json_array_foreach (users, k, x) {
                        seen = seen || streq(json_string_value(x), u);
                }
                if (!seen && json_array_append_new(users, json_string(u)) < 0)
                        return NULL;
        }
        size_t k;
        json_t *pin;
        json_array_foreach (json_object_get(ch, "pins"), k, pin) {
                if (streq_ptr(json_get_str(pin, "ts"), ts) &&
                    json_object_set_new(out, "pinned_to",
                                        json_pack("[O]", json_object_get(ch, "id"))) < 0)
                        return NULL;
        }
        if (replies > 0 &&
            (json_object_set_new(out, "thread_ts", json_string(ts)) < 0 ||
             json_object_set_new(out, "reply_count", json_integer((json_int_t)replies)) < 0 ||
             json_object_set_new(out, "reply_users_count",
                                 json_integer((json_int_t)json_array_size(users))) < 0 ||
             json_object_set(out, "reply_users", users) < 0 ||
             json_object_set_new(out, "latest_reply", json_string(latest)) < 0))
                return NULL;
        const char *th = json_get_str(m, "thread_ts");
        bool reply = th && !streq_ptr(th, ts);
        int64_t th_us;
        json_t *parent = NULL;
        if (reply && slack_ts_parse(json_object_get(m, "thread_ts"), &th_us) == 0)
                parent = slack_msg_find(ch, th_us, NULL);
        if (parent && json_object_get(parent, "user") &&
            json_object_set(out, "parent_user_id", json_object_get(parent, "user")) < 0)
                return NULL;
        if (reply && json_is_true(json_object_get(m, "reply_broadcast")) &&
            !json_object_get(m, "subtype")) {
                if (json_object_set_new(out, "subtype", json_string("thread_broadcast")) < 0)
                        return NULL;
                if (parent && with_root &&
                    json_object_set_new(out, "root", render_message(c, ch, parent, false)) < 0)
                        return NULL;
        }
        return TAKE_PTR(out);
}

json_t *slack_render_message(TwinCall *c, json_t *ch, json_t *m)
{
        return render_message(c, ch, m, true);
}

/* Sets o[key] to v (taken) unless o has it. 0 or -ENOMEM. */
static int put_default(json_t *o, const char *key, json_t *v)
{
        if (!v)
                return -ENOMEM;
        if (json_object_get(o, key)) {
                json_decref(v);
                return 0;
        }
        return json_object_set_new(o, key, v) < 0 ? -ENOMEM : 0;
}

/* The avatar urls of a profile without one of its own: Slack's default avatar, as a user
 * who never uploaded one shows it. */
#define SLACK_AVATAR "https://a.slack-edge.com/80588/img/avatars/ava_0001-%d.png"

json_t *slack_render_profile(TwinCall *c, json_t *u)
{
        _cleanup_json_ json_t *p = json_deep_copy(json_object_get(u, "profile"));
        if (!p)
                p = json_object();
        if (!p || json_object_set(p, "team",
                                  json_object_get(json_object_get(c->world, "team"), "id")) < 0)
                return NULL;
        /* what every profile has (https://api.slack.com/types/user, the profile of its example),
         * as a workspace member who filled in nothing more than the seed says shows it */
        const char *real = json_get_str(p, "real_name") ? json_get_str(p, "real_name")
                                                        : strempty(json_get_str(u, "real_name"));
        const char *display = strempty(json_get_str(p, "display_name"));
        const char *space = strchr(real, ' ');
        _cleanup_free_ char *first = space ? strndup(real, (size_t)(space - real)) : strdup(real);
        if (!first)
                return NULL;
        int r = 0;
        r = r ?: put_default(p, "real_name", json_string(real));
        r = r ?: put_default(p, "real_name_normalized", json_string(real));
        r = r ?: put_default(p, "display_name", json_string(display));
        r = r ?: put_default(p, "display_name_normalized", json_string(display));
        r = r ?: put_default(p, "first_name", json_string(first));
        r = r ?: put_default(p, "last_name", json_string(space ? space + 1 : ""));
        r = r ?: put_default(p, "title", json_string(""));
        r = r ?: put_default(p, "phone", json_string(""));
        r = r ?: put_default(p, "skype", json_string(""));
        r = r ?: put_default(p, "pronouns", json_string(""));
        r = r ?: put_default(p, "fields", json_object());
        r = r ?: put_default(p, "status_text", json_string(""));
        r = r ?: put_default(p, "status_text_canonical", json_string(""));
        r = r ?: put_default(p, "status_emoji", json_string(""));
        r = r ?: put_default(p, "status_emoji_display_info", json_array());
        r = r ?: put_default(p, "status_emoji_url", json_string(""));
        r = r ?: put_default(p, "status_expiration", json_integer(0));
        r = r ?: put_default(p, "avatar_hash", json_string("g0001"));
        r = r ?: put_default(p, "is_custom_image", json_false());
        r = r ?: put_default(p, "huddle_state", json_string("default_unset"));
        r = r ?: put_default(p, "huddle_state_expiration_ts", json_integer(0));
        static const int sizes[] = {24, 32, 48, 72, 192, 512, 1024};
        for (size_t i = 0; r == 0 && i < ELEMENTSOF(sizes); i++) {
                char key[32], url[128];
                snprintf(key, sizeof(key), "image_%d", sizes[i]);
                snprintf(url, sizeof(url), SLACK_AVATAR, sizes[i]);
                r = put_default(p, key, json_string(url));
        }
        if (r == 0) {
                char url[128];
                snprintf(url, sizeof(url), SLACK_AVATAR, 1024);
                r = put_default(p, "image_original", json_string(url));
        }
        return r < 0 ? NULL : TAKE_PTR(p);
}

json_t *slack_render_user(TwinCall *c, json_t *u)
{
        _cleanup_json_ json_t *out = json_deep_copy(u);
        if (!out || json_object_set(out, "team_id",
                                    json_object_get(json_object_get(c->world, "team"), "id")) < 0)
                return NULL;
        /* bookkeeping of the twin, not a field of Slack's user object */
        json_object_del(out, "hidden");
        bool bot = json_is_true(json_object_get(u, "is_bot"));
        const char *tz = json_get_str(u, "tz");
        int r = 0;
        r = r ?: json_object_set_new(out, "profile", slack_render_profile(c, u)) < 0 ? -ENOMEM : 0;
        r = r ?: put_default(out, "color", json_string("9f69e7"));
        r = r ?: put_default(out, "tz", json_string(tz ? tz : "Etc/UTC"));
        r = r ?: put_default(out, "tz_label", json_string("Coordinated Universal Time"));
        r = r ?: put_default(out, "tz_offset", json_integer(0));
        r = r ?: put_default(out, "is_owner", json_false());
        r = r ?: put_default(out, "is_primary_owner", json_false());
        r = r ?: put_default(out, "is_restricted", json_false());
        r = r ?: put_default(out, "is_ultra_restricted", json_false());
        r = r ?: put_default(out, "is_app_user", json_false());
        r = r ?: put_default(out, "is_email_confirmed", json_boolean(!bot));
        r = r ?: put_default(out, "has_2fa", json_false());
        r = r ?: put_default(out, "who_can_share_contact_card", json_string("EVERYONE"));
        r = r ?: put_default(out, "updated", json_integer(1767225600)); /* GH_SEED_TIME's day */
        return r < 0 ? NULL : TAKE_PTR(out);
}

/* ------------------------------------------------------------------ arguments */

/* args[key], else args[alias] (the reference MCP server's names: channel_id, reaction...). */
json_t *slack_arg2(TwinCall *c, const char *key, const char *alias)
{
        json_t *v = json_object_get(c->args, key);
        return v && !json_is_null(v) ? v : alias ? json_object_get(c->args, alias) : NULL;
}

/*
 * Resolves the channel argument (channel, or the MCP server's channel_id; an id or a name)
 * among the conversations the caller can see. 1 with *ret, 0 when rp holds the error
 * (channel_not_found, invalid_arguments), negative errno.
 */
int slack_arg_channel(TwinCall *c, TwinReply *rp, json_t **ret)
{
        json_t *v = slack_arg2(c, "channel", "channel_id");
        if (v && !json_is_null(v) && !json_is_string(v))
                return slack_fail(rp, "invalid_arguments");
        json_t *ch =
                json_is_string(v) ? slack_channel_resolve(c->world, json_string_value(v)) : NULL;
        /* a private conversation the caller is not in does not exist for it (Slack) */
        if (!ch || !slack_channel_visible(c, ch))
                return slack_fail(rp, "channel_not_found");
        *ret = ch;
        return 1;
}

/* limit: default def (also for 0), at most max. 1, or 0 when rp holds invalid_limit. */
int slack_arg_limit(TwinCall *c, TwinReply *rp, int64_t def, int64_t max, int64_t *ret)
{
        int64_t limit = def;
        int r = twin_arg_int(c->args, "limit", 0, INT64_MAX, &limit);
        if (r == -EINVAL)
                return slack_fail(rp, "invalid_limit");
        if (r == -ENOENT || limit == 0)
                limit = def;
        *ret = limit > max ? max : limit;
        return 1;
}

/*
 * Cursor pagination (Slack "Pagination"): limit (default def, at most max), cursor an opaque
 * base64 "offset:N". Writes the window [*from, *from + *count) of n items. 1, or 0 when rp
 * holds invalid_cursor / invalid_limit.
 */
int slack_arg_page(TwinCall *c, TwinReply *rp, int64_t def, int64_t max, size_t n, size_t *from,
                   size_t *count)
{
        int64_t limit;
        int r = slack_arg_limit(c, rp, def, max, &limit);
        if (r <= 0)
                return r;
        *from = 0;
        const char *cursor;
        r = twin_arg_str(c->args, "cursor", &cursor);
        if (r == -EINVAL)
                return slack_fail(rp, "invalid_cursor");
        if (r == 0 && cursor[0]) {
                _cleanup_free_ char *raw = NULL;
                const char *num;
                int64_t off;
                r = twin_base64_decode(cursor, &raw);
                if (r == -ENOMEM)
                        return r;
                json_t *tmp = NULL;
                if (r < 0 || !(num = startswith(raw, "offset:")) ||
                    !(tmp = json_pack("{s:s}", "o", num)) ||
                    twin_arg_int(tmp, "o", 0, (int64_t)n, &off) < 0) {
                        json_decref(tmp);
                        return slack_fail(rp, "invalid_cursor");
                }
                json_decref(tmp);
                *from = (size_t)off;
        }
        *count = (size_t)limit < n - *from ? (size_t)limit : n - *from;
        return 1;
}

/* {next_cursor} for the window ending at next (of n). NULL on OOM. */
json_t *slack_response_metadata(size_t next, size_t n)
{
        char raw[48];
        _cleanup_free_ char *cur = NULL;
        if (next < n) {
                snprintf(raw, sizeof(raw), "offset:%zu", next);
                cur = twin_base64(raw, strlen(raw));
                if (!cur)
                        return NULL;
        }
        return json_pack("{s:s}", "next_cursor", cur ? cur : "");
}

/* The next message ts: now, or 1 µs past the last one issued, whichever is later. */
json_t *slack_next_ts(TwinCall *c)
{
        int64_t last = json_integer_value(json_object_get(c->world, "last_ts_us"));
        int64_t now = c->now > 0 && c->now < INT64_C(100000000000) ? c->now * 1000000 : 0;
        int64_t ts = now > last ? now : last + 1;
        if (json_object_set_new(c->world, "last_ts_us", json_integer(ts)) < 0)
                return NULL;
        return slack_ts_string(ts);
}

/* ------------------------------------------------------------------ membership, more readers */

/* The user id the token acts as (the bot, or the seed's U_PRIMARY). Borrowed. */
const char *slack_bot_user(TwinCall *c)
{
        return json_get_str(json_object_get(c->world, "bot"), "user_id");
}

bool slack_strv_has(const json_t *a, const char *s)
{
        size_t i;
        json_t *x;
        json_array_foreach (a, i, x) {
                if (streq_ptr(json_string_value(x), s))
                        return true;
        }
        return false;
}

bool slack_is_member(json_t *ch, const char *uid)
{
        return uid && slack_strv_has(json_object_get(ch, "members"), uid);
}

/*
 * Whether the caller can see ch at all: public channels yes, private channels, DMs and
 * group DMs only as a member. Slack answers channel_not_found for the others, and leaves
 * them out of conversations.list and search.
 */
bool slack_channel_visible(TwinCall *c, json_t *ch)
{
        return !json_is_true(json_object_get(ch, "is_private")) ||
               slack_is_member(ch, slack_bot_user(c));
}

/* A seeded user with "hidden": true is one the token may not see (users.info: user_not_found). */
bool slack_user_visible(json_t *u)
{
        return u && !json_is_true(json_object_get(u, "hidden"));
}

/* The world's array called key (created when an older world lacks it). Borrowed. */
json_t *slack_world_list(json_t *w, const char *key)
{
        json_t *a = json_object_get(w, key);
        if (!a) {
                a = json_array();
                if (json_object_set_new(w, key, a) < 0)
                        return NULL;
        }
        return a;
}

/* https://<domain>.slack.com/archives/<channel>/p<ts without the dot> (chat.getPermalink). */
json_t *slack_permalink(TwinCall *c, json_t *ch, json_t *m)
{
        char digits[32];
        const char *ts = strempty(json_get_str(m, "ts"));
        size_t n = 0;
        for (; *ts && n < sizeof(digits) - 1; ts++)
                if (*ts != '.')
                        digits[n++] = *ts;
        digits[n] = 0;
        _cleanup_free_ char *url = NULL;
        const char *th = json_get_str(m, "thread_ts");
        bool reply = th && !streq(th, strempty(json_get_str(m, "ts")));
        if (asprintf(&url, "https://%s.slack.com/archives/%s/p%s%s%s%s%s",
                     strempty(json_get_str(json_object_get(c->world, "team"), "domain")),
                     strempty(json_get_str(ch, "id")), digits, reply ? "?thread_ts=" : "",
                     reply ? th : "", reply ? "&cid=" : "",
                     reply ? strempty(json_get_str(ch, "id")) : "") < 0)
                return NULL;
        return json_string(url);
}

/*
 * A string argument (key, else alias). 1 with *ret; absent or empty: missing != NULL puts
 * that error in rp (returns 0), else *ret = NULL and 1. A non-string is invalid_arguments.
 */
int slack_arg_string(TwinCall *c, TwinReply *rp, const char *key, const char *alias,
                     const char *missing, const char **ret)
{
        json_t *v = slack_arg2(c, key, alias);
        if (v && !json_is_null(v) && !json_is_string(v))
                return slack_fail(rp, "invalid_arguments");
        const char *s = json_string_value(v);
        if (!s || !s[0]) {
                if (missing)
                        return slack_fail(rp, missing);
                s = NULL;
        }
        *ret = s;
        return 1;
}

/* slack_arg_channel, and the caller must be a member: else not_in_channel (Slack). */
int slack_arg_channel_in(TwinCall *c, TwinReply *rp, json_t **ret)
{
        int r = slack_arg_channel(c, rp, ret);
        if (r <= 0)
                return r;
        if (!slack_is_member(*ret, slack_bot_user(c)))
                return slack_fail(rp, "not_in_channel");
        return 1;
}

/* A user argument (id or name) the caller may see: 1, 0 with user_not_found in rp, -errno. */
int slack_arg_user(TwinCall *c, TwinReply *rp, const char *key, const char *alias, json_t **ret)
{
        const char *ref;
        int r = slack_arg_string(c, rp, key, alias, "user_not_found", &ref);
        if (r <= 0)
                return r;
        json_t *u = slack_user_resolve(c->world, ref);
        if (!slack_user_visible(u))
                return slack_fail(rp, "user_not_found");
        *ret = u;
        return 1;
}

/*
 * The message of ch whose ts is args[key] (else alias): 1, 0 with no_item_specified /
 * message_not_found in rp, -errno.
 */
int slack_arg_message(TwinCall *c, TwinReply *rp, json_t *ch, const char *key, const char *alias,
                      json_t **ret, size_t *ret_idx)
{
        json_t *v = slack_arg2(c, key, alias);
        int64_t ts;
        if (!v || json_is_null(v) || (json_is_string(v) && !json_string_length(v)))
                return slack_fail(rp, "no_item_specified");
        json_t *m = slack_ts_parse(v, &ts) == 0 ? slack_msg_find(ch, ts, ret_idx) : NULL;
        if (!m)
                return slack_fail(rp, "message_not_found");
        *ret = m;
        return 1;
}

/* A JSON array argument that form bodies carry as a JSON string (blocks, attachments). */
int slack_arg_json_array(TwinCall *c, const char *key, json_t **ret)
{
        json_t *v = json_object_get(c->args, key);
        *ret = NULL;
        if (!v || json_is_null(v) || (json_is_string(v) && !json_string_length(v)))
                return 0;
        json_t *a = json_is_string(v) ? json_loads(json_string_value(v), 0, NULL) : json_incref(v);
        if (!json_is_array(a)) {
                json_decref(a);
                return -EINVAL;
        }
        *ret = a;
        return 0;
}

/* oldest/latest bounds (a ts): 1, or 0 when rp holds error. */
int slack_arg_bound(TwinCall *c, TwinReply *rp, const char *key, const char *error, int64_t *ret)
{
        json_t *v = json_object_get(c->args, key);
        if (!v || json_is_null(v) || (json_is_string(v) && !json_string_length(v)))
                return 1;
        if (slack_ts_parse(v, ret) < 0)
                return slack_fail(rp, error);
        return 1;
}

/*
 * Answers one cursor page of items (borrowed) as {ok, <key>: [render(item)...],
 * response_metadata, ...more} (more stolen, may be NULL). 0 or -errno.
 */
int slack_list_page(TwinCall *c, TwinReply *rp, json_t *items, int64_t def, int64_t max,
                    json_t *(*render)(TwinCall *c, json_t *item), const char *key, json_t *more)
{
        _cleanup_json_ json_t *extra = more ? more : json_object();
        size_t from, count, n = json_array_size(items);
        int r = slack_arg_page(c, rp, def, max, n, &from, &count);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *out = json_array();
        if (!extra || !out)
                return -ENOMEM;
        for (size_t i = from; i < from + count; i++) {
                json_t *x = json_array_get(items, i);
                if (json_array_append_new(out, render ? render(c, x) : json_incref(x)) < 0)
                        return -ENOMEM;
        }
        if (json_object_set(extra, key, out) < 0 ||
            json_object_set_new(extra, "response_metadata",
                                slack_response_metadata(from + count, n)) < 0)
                return -ENOMEM;
        return slack_ok(rp, TAKE_PTR(extra));
}

/*
 * Replaces list[idx] by next (borrowed) and records the mutation {before, after}. The delta
 * is taken first: setting the row releases the old one. 0 or -ENOMEM.
 */
int slack_row_replace(TwinReply *rp, json_t *list, size_t idx, json_t *next)
{
        int r = twin_reply_mutation(rp, json_array_get(list, idx), next);
        if (r < 0)
                return r;
        return json_array_set(list, idx, next) < 0 ? -ENOMEM : 0;
}

/* ------------------------------------------------------------------ public state, tables */

static bool secret_key(const char *k)
{
        static const char *const exact[] = {"token",        "password",      "secret",
                                            "secrets",      "client_secret", "api_key",
                                            "access_token", "refresh_token", "signing_secret"};
        for (size_t i = 0; i < ELEMENTSOF(exact); i++)
                if (strcasecmp(k, exact[i]) == 0)
                        return true;
        size_t n = strlen(k);
        const char *suffixes[] = {"_token", "_secret", "_password"};
        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++) {
                size_t l = strlen(suffixes[i]);
                if (n > l && strcasecmp(k + n - l, suffixes[i]) == 0)
                        return true;
        }
        return false;
}

static int redact(json_t *j)
{
        const char *k;
        json_t *v;
        size_t i;
        if (json_is_array(j))
                json_array_foreach (j, i, v) {
                        int r = redact(v);
                        if (r < 0)
                                return r;
                }
        if (json_is_object(j))
                json_object_foreach (j, k, v) {
                        int r = secret_key(k) ? json_object_set_new(j, k, json_string("[REDACTED]"))
                                              : redact(v);
                        if (r < 0)
                                return -ENOMEM;
                }
        return 0;
}

static json_t *slack_public_state(const json_t *world)
{
        _cleanup_json_ json_t *s = json_deep_copy(world);
        if (!s)
                return NULL;
        /* counters are bookkeeping, not state */
        json_object_del(s, "next_id");
        json_object_del(s, "last_ts_us");
        if (redact(s) < 0)
                return NULL;
        return TAKE_PTR(s);
}

static const TwinHandler slack_handlers[] = {
        {"slack_auth_test", slack_act_auth_test},
        {"slack_list_conversations", slack_act_list_conversations},
        {"slack_get_conversation_info", slack_act_conversation_info},
        {"slack_read_channel", slack_act_read_channel},
        {"slack_read_thread", slack_act_read_thread},
        {"slack_list_channel_members", slack_act_list_channel_members},
        {"slack_create_conversation", slack_act_create_conversation},
        {"slack_join_conversation", slack_act_join},
        {"slack_leave_conversation", slack_act_leave},
        {"slack_invite_to_conversation", slack_act_invite},
        {"slack_kick_from_conversation", slack_act_kick},
        {"slack_archive_conversation", slack_act_archive},
        {"slack_unarchive_conversation", slack_act_unarchive},
        {"slack_rename_conversation", slack_act_rename},
        {"slack_list_user_conversations", slack_act_user_conversations},
        {"slack_set_conversation_topic", slack_act_set_topic},
        {"slack_set_conversation_purpose", slack_act_set_purpose},
        {"slack_send_message", slack_act_send_message},
        {"slack_post_ephemeral", slack_act_post_ephemeral},
        {"slack_mark_conversation", slack_act_mark},
        {"slack_list_usergroups", slack_act_list_usergroups},
        {"slack_edit_message", slack_act_edit_message},
        {"slack_delete_message", slack_act_delete_message},
        {"slack_schedule_message", slack_act_schedule_message},
        {"slack_delete_scheduled_message", slack_act_delete_scheduled_message},
        {"slack_list_scheduled_messages", slack_act_list_scheduled_messages},
        {"slack_get_permalink", slack_act_get_permalink},
        {"slack_add_reaction", slack_act_add_reaction},
        {"slack_get_reactions", slack_act_get_reactions},
        {"slack_remove_reaction", slack_act_remove_reaction},
        {"slack_add_pin", slack_act_add_pin},
        {"slack_list_pins", slack_act_list_pins},
        {"slack_remove_pin", slack_act_remove_pin},
        {"slack_add_bookmark", slack_act_add_bookmark},
        {"slack_list_bookmarks", slack_act_list_bookmarks},
        {"slack_remove_bookmark", slack_act_remove_bookmark},
        {"slack_list_users", slack_act_list_users},
        {"slack_get_user_info", slack_act_user_info},
        {"slack_lookup_user_by_email", slack_act_lookup_by_email},
        {"slack_read_user_profile", slack_act_read_user_profile},
        {"slack_update_user_profile", slack_act_set_user_profile},
        {"slack_get_team_info", slack_act_team_info},
        {"slack_list_emoji", slack_act_list_emoji},
        {"slack_search_emojis", slack_act_search_emojis},
        {"slack_search_users", slack_act_search_users},
        {"slack_search_public", slack_act_search_public},
        {"slack_search_public_and_private", slack_act_search_all},
        {"slack_search_channels", slack_act_search_channels},
        {"slack_list_files", slack_act_list_files},
        {"slack_read_file", slack_act_read_file},
        {"slack_upload_file", slack_act_upload_file},
        {"slack_get_file_upload_url", slack_act_get_upload_url},
        {"slack_put_file_upload", slack_act_put_upload},
        {"slack_complete_file_upload", slack_act_complete_upload},
        {"slack_delete_file", slack_act_delete_file},
        {"slack_create_canvas", slack_act_create_canvas},
        {"slack_update_canvas", slack_act_update_canvas},
        {"slack_read_canvas", slack_act_read_canvas},
        {"slack_delete_canvas", slack_act_delete_canvas},
        {"slack_lookup_canvas_sections", slack_act_lookup_canvas_sections},
};

const TwinKind twin_kind_slack = {
        .name = "slack",
        .implementation = "pome-slack",
        .flags = TWIN_KIND_TOKEN_PARAM | TWIN_KIND_TOLERANT_CONTROL | TWIN_KIND_CALL_ALIASES |
                 TWIN_KIND_SEED_WRAPPED,
        .surface = &twin_surface_slack,
        .handlers = slack_handlers,
        .n_handlers = ELEMENTSOF(slack_handlers),
        /* Web API methods at https://slack.com/api/{method} (api.slack.com/web); workspace
         * hosts and files.slack.com (files.getUploadURLExternal's upload_url) below it */
        .vendor_hosts = (const char *const[]){"slack.com", "*.slack.com", NULL},
        .load_seed = slack_load_seed,
        .seed_keys = seed_keys,
        .public_state = slack_public_state,
        .auth_error = slack_auth_error,
        .error = slack_error,
        .control_error = slack_control_error, /* no health_extras: hosted Pome's {ok, twin} */
        .advance = slack_deliver_scheduled,
        /* files.getUploadURLExternal's upload_url: pre-signed, as Slack's (files.c) */
        .upload_path = "/_upload/",
};
