/* SPDX-License-Identifier: MIT */
/*
 * The Slack twin (kind "slack"): the Web API methods an agent needs to read channels and
 * post (https://api.slack.com/methods), served at /{method} and /api/{method} for any HTTP
 * method (SDKs POST form bodies; GET + query and JSON bodies work too). API errors are HTTP
 * 200 {ok:false, error}, as on slack.com.
 *
 * The world is the normalised seed:
 *   team          {id, name, domain}
 *   users[]       {id, name, real_name, is_bot, is_admin, deleted, tz, profile{...}, bot_id?}
 *   channels[]    {id, name, is_private, is_archived, created, creator, topic{value, creator,
 *                 last_set}, purpose{...}, members[user ids], messages[]}
 *   message       {type:"message", ts, user?, text, thread_ts?, reply_broadcast?, reactions?
 *                 [{name, users[], count}], bot_id?, blocks?, attachments?}, oldest first
 *   bot           {user_id, bot_id}: who the token is. The first seeded user with is_bot, else
 *                 a synthetic "pome-bot" user appended to users[]
 *   secrets       optional, anything: kept verbatim, redacted in /_pome/state
 *   next_id       counter for generated ids (T…, U…, C…, B…, deterministic per seed)
 *   last_ts_us    the latest message ts issued, in microseconds: new messages get
 *                 max(now, last + 1 µs), so two posts in one second still differ and ts
 *                 only grows
 * Seeds may name users by id or by name, and channels as "general" or "#general".
 *
 * Behaviour choices: channels are resolved by id or by name for every method (slack.com only
 * takes names in chat.postMessage); channel membership is not enforced; an unknown thread_ts
 * is refused with thread_not_found; reaction names may carry their colons (":tada:").
 */
#include <strings.h>

#include "common/json-util.h"
#include "pods/twin/kind.h"

#define SEED_TS_US INT64_C(1700000000000100) /* first generated seed ts: 1700000000.000100 */
#define MAX_TEXT   40000                     /* characters of a message (msg_too_long) */

/* ------------------------------------------------------------------ world helpers */

static json_t *find_by(json_t *list, const char *key, const char *value)
{
        size_t i;
        json_t *x;
        json_array_foreach (list, i, x) {
                if (streq_ptr(json_get_str(x, key), value))
                        return x;
        }
        return NULL;
}

static json_t *user_by_id(json_t *w, const char *id)
{
        return find_by(json_object_get(w, "users"), "id", id);
}

/* A user by id, or by name ("alice", "@alice"). */
static json_t *user_resolve(json_t *w, const char *ref)
{
        json_t *u = user_by_id(w, ref);
        if (!u)
                u = find_by(json_object_get(w, "users"), "name", ref[0] == '@' ? ref + 1 : ref);
        return u;
}

/* A channel by id, or by name ("general", "#general"). */
static json_t *channel_resolve(json_t *w, const char *ref)
{
        json_t *chans = json_object_get(w, "channels");
        json_t *ch = find_by(chans, "id", ref);
        if (!ch)
                ch = find_by(chans, "name", ref[0] == '#' ? ref + 1 : ref);
        return ch;
}

/* A new id prefix + 8 hex digits, unique among users, channels and the team. */
static int alloc_id(json_t *w, char prefix, char ret[static 16])
{
        for (;;) {
                json_int_t n = json_integer_value(json_object_get(w, "next_id"));
                if (n < 1)
                        n = 1;
                if (json_object_set_new(w, "next_id", json_integer(n + 1)) < 0)
                        return -ENOMEM;
                snprintf(ret, 16, "%c%08llX", prefix, (unsigned long long)n & 0xffffffffull);
                /* a seeded id may already hold this value: skip it */
                if (!user_by_id(w, ret) && !find_by(json_object_get(w, "channels"), "id", ret) &&
                    !streq_ptr(json_get_str(json_object_get(w, "team"), "id"), ret) &&
                    !find_by(json_object_get(w, "users"), "bot_id", ret))
                        return 0;
        }
}

/* Parses "1700000000.000100" (or "1700000000", or a JSON number) into microseconds. */
static int ts_parse(const json_t *v, int64_t *ret)
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

static json_t *ts_string(int64_t us)
{
        char buf[32];
        snprintf(buf, sizeof(buf), "%lld.%06lld", (long long)(us / 1000000),
                 (long long)(us % 1000000));
        return json_string(buf);
}

static int64_t msg_ts(json_t *m)
{
        int64_t us = 0;
        (void)ts_parse(json_object_get(m, "ts"), &us);
        return us;
}

/* Characters (code points) of valid UTF-8, which every jansson string is. */
static size_t utf8_chars(const char *s)
{
        size_t n = 0;
        for (; *s; s++)
                n += ((unsigned char)*s & 0xc0) != 0x80;
        return n;
}

static bool msg_top_level(json_t *m)
{
        const char *th = json_get_str(m, "thread_ts");
        return !th || streq(th, json_get_str(m, "ts")) ||
               json_is_true(json_object_get(m, "reply_broadcast"));
}

static json_t *msg_find(json_t *ch, int64_t ts_us, size_t *ret_idx)
{
        size_t i;
        json_t *m;
        json_array_foreach (json_object_get(ch, "messages"), i, m) {
                if (msg_ts(m) == ts_us) {
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
        return n >= 3 && n <= 32 && strchr(prefixes, s[0]) &&
               strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == n;
}

static bool channel_name_valid(const char *s)
{
        size_t n = strlen(s);
        return n > 0 && n <= 80 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-_.") == n;
}

/* A user reference (id or name) → the user's id. */
static int seed_user_ref(TwinSeed *s, json_t *v, const char *path, const char **ret)
{
        json_t *u = json_is_string(v) ? user_resolve(s->world, json_string_value(v)) : NULL;
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
        if (t && !json_is_object(t))
                return twin_seed_error(s->err, s->errlen, "team: must be an object");
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
                if ((r = alloc_id(s->world, 'T', gen)) < 0)
                        return r;
                id = gen;
        }
        if (!domain)
                domain = name;
        if (!domain[0] || strspn(domain, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(domain))
                return twin_seed_error(s->err, s->errlen,
                                       "team.domain: must be lower-case letters, digits and '-' "
                                       "(set it when the name is not)");
        json_t *team = json_pack("{s:s, s:s, s:s}", "id", id, "name", name, "domain", domain);
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
                if (id && (find_by(rows, "id", id) || user_by_id(s->world, id)))
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
        r = seed_ids(s, a, "users", "UW", "\"U0123ABCD\" (U or W + capitals, digits)", users);
        if (r < 0)
                return r;
        size_t i;
        json_t *v;
        json_array_foreach (a, i, v) {
                char p[64], gen[16];
                const char *id, *name, *real, *tz, *bot_id;
                bool is_bot = false, is_admin = false, deleted = false;
                json_t *u = json_array_get(users, i), *profile = json_object_get(v, "profile");
                snprintf(p, sizeof(p), "users[%zu]", i);
                if ((r = twin_seed_str(s, v, "name", p, NULL, TWIN_NULL_ABSENT, &name)) < 0 ||
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
                if (find_by(users, "name", name))
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
                        if ((r = alloc_id(s->world, 'U', gen)) < 0)
                                return r;
                        id = gen;
                }
                _cleanup_json_ json_t *prof = profile ? json_deep_copy(profile) : json_object();
                _cleanup_json_ json_t *defaults = json_pack(
                        "{s:s, s:s}", "real_name", real ? real : name, "display_name", name);
                if (!prof || !defaults || json_object_update_missing(prof, defaults) < 0)
                        return -ENOMEM;
                json_t *row = json_pack("{s:s, s:s, s:s, s:b, s:b, s:b, s:s, s:O}", "id", id,
                                        "name", name, "real_name", real ? real : name, "is_bot",
                                        is_bot, "is_admin", is_admin, "deleted", deleted, "tz", tz,
                                        "profile", prof);
                if (!row || (bot_id && json_object_set_new(row, "bot_id", json_string(bot_id)) < 0))
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
        json_array_foreach (users, i, u) {
                if (json_is_true(json_object_get(u, "is_bot"))) {
                        bot = u;
                        break;
                }
        }
        if (!bot) {
                if ((r = alloc_id(s->world, 'U', gen)) < 0)
                        return r;
                bot = json_pack("{s:s, s:s, s:s, s:b, s:b, s:b, s:s, s:{s:s, s:s}}", "id", gen,
                                "name", "pome-bot", "real_name", "Pome Bot", "is_bot", true,
                                "is_admin", false, "deleted", false, "tz", "UTC", "profile",
                                "real_name", "Pome Bot", "display_name", "pome-bot");
                if (json_array_append_new(users, bot) < 0)
                        return -ENOMEM;
        }
        if (!json_get_str(bot, "bot_id")) {
                if ((r = alloc_id(s->world, 'B', gen)) < 0 ||
                    json_object_set_new(bot, "bot_id", json_string(gen)) < 0)
                        return r < 0 ? r : -ENOMEM;
        }
        json_t *b = json_pack("{s:O, s:O}", "user_id", json_object_get(bot, "id"), "bot_id",
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
                char p[192];
                const char *name;
                json_t *users;
                snprintf(p, sizeof(p), "%s.reactions[%zu]", path, i);
                if (!json_is_object(v))
                        return twin_seed_error(s->err, s->errlen, "%s: must be an object", p);
                if ((r = twin_seed_str(s, v, "name", p, NULL, TWIN_NULL_ABSENT, &name)) < 0 ||
                    (r = twin_seed_array(s, v, "users", p, &users)) < 0)
                        return r;
                if (!name || !name[0])
                        return twin_seed_error(s->err, s->errlen, "%s: needs a name", p);
                if (find_by(out, "name", name))
                        return twin_seed_error(s->err, s->errlen, "%s: duplicate reaction \"%s\"",
                                               p, name);
                _cleanup_json_ json_t *ids = json_array();
                if (!ids)
                        return -ENOMEM;
                size_t k;
                json_t *uv;
                json_array_foreach (users, k, uv) {
                        char pu[256];
                        const char *id;
                        snprintf(pu, sizeof(pu), "%s.users[%zu]", p, k);
                        if ((r = seed_user_ref(s, uv, pu, &id)) < 0)
                                return r;
                        if (json_array_append_new(ids, json_string(id)) < 0)
                                return -ENOMEM;
                }
                if (json_array_size(ids) == 0)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.users: needs at least one user", p);
                json_t *x = json_pack("{s:s, s:O, s:I}", "name", name, "users", ids, "count",
                                      (json_int_t)json_array_size(ids));
                if (json_array_append_new(out, x) < 0)
                        return -ENOMEM;
        }
        return json_array_size(out) && json_object_set(row, "reactions", out) < 0 ? -ENOMEM : 0;
}

static int cmp_msg(const void *a, const void *b)
{
        int64_t x = msg_ts(*(json_t *const *)a), y = msg_ts(*(json_t *const *)b);
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
                if (!json_is_object(v))
                        return twin_seed_error(s->err, s->errlen, "%s: must be an object", p);
                if ((r = twin_seed_str(s, v, "text", p, "", TWIN_NULL_ABSENT, &text)) < 0)
                        return r;
                json_t *jts = json_object_get(v, "ts");
                if (jts && ts_parse(jts, &ts) < 0)
                        return twin_seed_error(s->err, s->errlen,
                                               "%s.ts: must look like \"1700000000.000100\"", p);
                if (!jts)
                        ts = last < SEED_TS_US ? SEED_TS_US : last + 100;
                if (msg_find(row, ts, NULL))
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
                        json_pack("{s:s, s:o, s:s?, s:s}", "type", "message", "ts", ts_string(ts),
                                  "user", user, "text", text);
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
                        if (ts_parse(th, &t) < 0)
                                return twin_seed_error(s->err, s->errlen,
                                                       "%s.thread_ts: must look like "
                                                       "\"1700000000.000100\"",
                                                       p);
                        if (json_object_set_new(m, "thread_ts", ts_string(t)) < 0)
                                return -ENOMEM;
                }
                if ((r = seed_reactions(s, v, p, m)) < 0)
                        return r;
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
                if (th && (ts_parse(th, &t) < 0 || !msg_find(row, t, NULL)))
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
        r = seed_ids(s, a, "channels", "CGD", "\"C0123ABCD\" (C, G or D + capitals, digits)",
                     chans);
        if (r < 0)
                return r;
        size_t i;
        json_t *v;
        const char *bot = json_get_str(json_object_get(s->world, "bot"), "user_id");
        json_array_foreach (a, i, v) {
                char p[64], gen[16];
                const char *id, *name, *creator = bot;
                bool priv = false, archived = false;
                json_t *row = json_array_get(chans, i), *members;
                snprintf(p, sizeof(p), "channels[%zu]", i);
                if ((r = twin_seed_str(s, v, "name", p, NULL, TWIN_NULL_ABSENT, &name)) < 0 ||
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
                if (find_by(chans, "name", name))
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
                        if ((r = alloc_id(s->world, priv ? 'G' : 'C', gen)) < 0)
                                return r;
                        id = gen;
                }
                _cleanup_json_ json_t *ch = json_pack(
                        "{s:s, s:s, s:b, s:b, s:I, s:s, s:O, s:[]}", "id", id, "name", name,
                        "is_private", priv, "is_archived", archived, "created", (json_int_t)created,
                        "creator", strempty(creator), "members", ids, "messages");
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

static int slack_load_seed(const json_t *seed, json_t **ret_world, char *err, size_t errlen)
{
        static const char *const keys[] = {"team", "users", "channels", "secrets"};
        int r = twin_seed_keys(seed, "slack", keys, ELEMENTSOF(keys), err, errlen);
        if (r < 0)
                return r;
        _cleanup_json_ json_t *world =
                json_pack("{s:[], s:[], s:I, s:I}", "users", "channels", "next_id", (json_int_t)1,
                          "last_ts_us", (json_int_t)0);
        if (!world)
                return -ENOMEM;
        TwinSeed s = {.world = world, .err = err, .errlen = errlen};
        if ((r = seed_team(&s, seed)) < 0 || (r = seed_users(&s, seed)) < 0 ||
            (r = seed_bot(&s)) < 0 || (r = seed_channels(&s, seed)) < 0)
                return r;
        json_t *secrets = json_object_get(seed, "secrets");
        if (secrets && json_object_set_new(world, "secrets", json_deep_copy(secrets)) < 0)
                return -ENOMEM;
        *ret_world = TAKE_PTR(world);
        return 0;
}

/* ------------------------------------------------------------------ replies */

static void slack_error(int status, const char *code, const char *message, TwinReply *rp)
{
        (void)message;
        /* slack.com answers API errors with HTTP 200; only its own failures are 5xx */
        twin_reply_json(rp, status >= 500 ? 500 : 200,
                        json_pack("{s:b, s:s}", "ok", false, "error",
                                  status >= 500 ? "internal_error"
                                  : code        ? code
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

static int fail(TwinReply *rp, const char *error)
{
        slack_error(200, error, NULL, rp);
        return rp->body ? 0 : -ENOMEM;
}

/* {ok:true, ...more} with more stolen. */
static int ok(TwinReply *rp, json_t *more)
{
        if (!more || json_object_set_new(more, "ok", json_true()) < 0) {
                json_decref(more);
                return -ENOMEM;
        }
        twin_reply_json(rp, 200, more);
        return 0;
}

/* ------------------------------------------------------------------ rendering */

static json_t *render_channel(TwinCall *c, json_t *ch)
{
        bool priv = json_is_true(json_object_get(ch, "is_private"));
        const char *bot = json_get_str(json_object_get(c->world, "bot"), "user_id");
        json_t *members = json_object_get(ch, "members");
        bool member = false;
        size_t i;
        json_t *m;
        json_array_foreach (members, i, m) {
                member = member || streq_ptr(json_string_value(m), bot);
        }
        return json_pack("{s:O, s:O, s:b, s:b, s:b, s:b, s:O, s:O, s:b, s:b, s:O, s:b, s:b, "
                         "s:O, s:O, s:O, s:I}",
                         "id", json_object_get(ch, "id"), "name", json_object_get(ch, "name"),
                         "is_channel", !priv, "is_group", priv, "is_im", false, "is_mpim", false,
                         "is_private", json_object_get(ch, "is_private"), "created",
                         json_object_get(ch, "created"), "is_archived",
                         json_is_true(json_object_get(ch, "is_archived")), "is_general",
                         streq_ptr(json_get_str(ch, "name"), "general"), "name_normalized",
                         json_object_get(ch, "name"), "is_shared", false, "is_member", member,
                         "creator", json_object_get(ch, "creator"), "topic",
                         json_object_get(ch, "topic"), "purpose", json_object_get(ch, "purpose"),
                         "num_members", (json_int_t)json_array_size(members));
}

/* A message as the API shows it: the stored row, plus thread summary fields on a parent. */
static json_t *render_message(TwinCall *c, json_t *ch, json_t *m)
{
        _cleanup_json_ json_t *out = json_deep_copy(m);
        if (!out || json_object_set(out, "team",
                                    json_object_get(json_object_get(c->world, "team"), "id")) < 0)
                return NULL;
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
        if (replies > 0 &&
            (json_object_set_new(out, "thread_ts", json_string(ts)) < 0 ||
             json_object_set_new(out, "reply_count", json_integer((json_int_t)replies)) < 0 ||
             json_object_set_new(out, "reply_users_count",
                                 json_integer((json_int_t)json_array_size(users))) < 0 ||
             json_object_set(out, "reply_users", users) < 0 ||
             json_object_set_new(out, "latest_reply", json_string(latest)) < 0))
                return NULL;
        return TAKE_PTR(out);
}

static json_t *render_user(TwinCall *c, json_t *u)
{
        _cleanup_json_ json_t *out = json_deep_copy(u);
        if (!out || json_object_set(out, "team_id",
                                    json_object_get(json_object_get(c->world, "team"), "id")) < 0)
                return NULL;
        return TAKE_PTR(out);
}

/* ------------------------------------------------------------------ arguments */

/* args[key], else args[alias] (the reference MCP server's names: channel_id, reaction...). */
static json_t *arg2(TwinCall *c, const char *key, const char *alias)
{
        json_t *v = json_object_get(c->args, key);
        return v && !json_is_null(v) ? v : alias ? json_object_get(c->args, alias) : NULL;
}

/* Resolves the channel argument. 1 with *ret, 0 when rp holds the error, negative errno. */
static int arg_channel(TwinCall *c, TwinReply *rp, json_t **ret)
{
        json_t *v = arg2(c, "channel", "channel_id");
        if (v && !json_is_null(v) && !json_is_string(v))
                return fail(rp, "invalid_arguments");
        json_t *ch = json_is_string(v) ? channel_resolve(c->world, json_string_value(v)) : NULL;
        if (!ch)
                return fail(rp, "channel_not_found");
        *ret = ch;
        return 1;
}

/*
 * Cursor pagination (Slack "Pagination"): limit (default def, at most max), cursor an opaque
 * base64 "offset:N". Writes the window [*from, *from + *count) of n items. 1, or 0 when rp
 * holds invalid_cursor / invalid_limit.
 */
static int arg_page(TwinCall *c, TwinReply *rp, int64_t def, int64_t max, size_t n, size_t *from,
                    size_t *count)
{
        int64_t limit = def;
        int r = twin_arg_int(c->args, "limit", 0, INT64_MAX, &limit);
        if (r == -EINVAL)
                return fail(rp, "invalid_limit");
        if (r == -ENOENT || limit == 0)
                limit = def;
        if (limit > max)
                limit = max;
        *from = 0;
        const char *cursor;
        r = twin_arg_str(c->args, "cursor", &cursor);
        if (r == -EINVAL)
                return fail(rp, "invalid_cursor");
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
                        return fail(rp, "invalid_cursor");
                }
                json_decref(tmp);
                *from = (size_t)off;
        }
        *count = (size_t)limit < n - *from ? (size_t)limit : n - *from;
        return 1;
}

/* {next_cursor} for the window ending at next (of n). NULL on OOM. */
static json_t *response_metadata(size_t next, size_t n)
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
static json_t *next_ts(TwinCall *c)
{
        int64_t last = json_integer_value(json_object_get(c->world, "last_ts_us"));
        int64_t now = c->now > 0 && c->now < INT64_C(100000000000) ? c->now * 1000000 : 0;
        int64_t ts = now > last ? now : last + 1;
        if (json_object_set_new(c->world, "last_ts_us", json_integer(ts)) < 0)
                return NULL;
        return ts_string(ts);
}

/* ------------------------------------------------------------------ actions */

static int act_auth_test(TwinCall *c, TwinReply *rp)
{
        json_t *team = json_object_get(c->world, "team"), *bot = json_object_get(c->world, "bot");
        json_t *u = user_by_id(c->world, json_get_str(bot, "user_id"));
        _cleanup_free_ char *url = NULL;
        if (asprintf(&url, "https://%s.slack.com/", strempty(json_get_str(team, "domain"))) < 0)
                return -ENOMEM;
        return ok(rp, json_pack("{s:s, s:O, s:O, s:O, s:O, s:O, s:b}", "url", url, "team",
                                json_object_get(team, "name"), "user", json_object_get(u, "name"),
                                "team_id", json_object_get(team, "id"), "user_id",
                                json_object_get(bot, "user_id"), "bot_id",
                                json_object_get(bot, "bot_id"), "is_enterprise_install", false));
}

static int act_list_channels(TwinCall *c, TwinReply *rp)
{
        _cleanup_json_ json_t *types = NULL;
        int r = twin_arg_strv(c->args, "types", &types);
        if (r == -ENOMEM)
                return r;
        if (r == -EINVAL)
                return fail(rp, "invalid_types");
        bool want_public = !types, want_private = false;
        size_t i;
        json_t *t;
        json_array_foreach (types, i, t) {
                const char *s = json_string_value(t);
                if (streq(s, "public_channel"))
                        want_public = true;
                else if (streq(s, "private_channel"))
                        want_private = true;
                else if (!streq(s, "mpim") && !streq(s, "im"))
                        return fail(rp, "invalid_types");
        }
        bool exclude_archived = false;
        if (twin_arg_bool(c->args, "exclude_archived", &exclude_archived) == -EINVAL)
                return fail(rp, "invalid_arguments");

        _cleanup_json_ json_t *match = json_array();
        if (!match)
                return -ENOMEM;
        json_t *ch;
        json_array_foreach (json_object_get(c->world, "channels"), i, ch) {
                bool priv = json_is_true(json_object_get(ch, "is_private"));
                if ((priv ? want_private : want_public) &&
                    !(exclude_archived && json_is_true(json_object_get(ch, "is_archived"))) &&
                    json_array_append(match, ch) < 0)
                        return -ENOMEM;
        }
        size_t from, count, n = json_array_size(match);
        r = arg_page(c, rp, 100, 1000, n, &from, &count);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *out = json_array();
        if (!out)
                return -ENOMEM;
        for (i = from; i < from + count; i++)
                if (json_array_append_new(out, render_channel(c, json_array_get(match, i))) < 0)
                        return -ENOMEM;
        return ok(rp, json_pack("{s:O, s:o}", "channels", out, "response_metadata",
                                response_metadata(from + count, n)));
}

/* oldest/latest bounds of conversations.history: 1, or 0 when rp holds the error. */
static int arg_bound(TwinCall *c, TwinReply *rp, const char *key, const char *error, int64_t *ret)
{
        json_t *v = json_object_get(c->args, key);
        if (!v || json_is_null(v) || (json_is_string(v) && !json_string_length(v)))
                return 1;
        if (ts_parse(v, ret) < 0)
                return fail(rp, error);
        return 1;
}

/* Messages of ch from start (newest first when desc), top-level only or one thread. */
static int list_messages(TwinCall *c, TwinReply *rp, json_t *ch, const char *thread)
{
        int64_t oldest = 0, latest = INT64_MAX;
        bool inclusive = false;
        int r;
        if ((r = arg_bound(c, rp, "oldest", "invalid_ts_oldest", &oldest)) <= 0 ||
            (r = arg_bound(c, rp, "latest", "invalid_ts_latest", &latest)) <= 0)
                return r;
        if (twin_arg_bool(c->args, "inclusive", &inclusive) == -EINVAL)
                return fail(rp, "invalid_arguments");

        json_t *msgs = json_object_get(ch, "messages");
        _cleanup_json_ json_t *match = json_array();
        if (!match)
                return -ENOMEM;
        size_t n = json_array_size(msgs);
        for (size_t k = 0; k < n; k++) {
                /* history is newest first, a thread oldest first (parent leading) */
                json_t *m = json_array_get(msgs, thread ? k : n - 1 - k);
                int64_t ts = msg_ts(m);
                const char *th = json_get_str(m, "thread_ts");
                bool in =
                        thread ? (streq_ptr(json_get_str(m, "ts"), thread) || streq_ptr(th, thread))
                               : msg_top_level(m);
                bool lo = inclusive ? ts >= oldest : ts > oldest;
                bool hi = inclusive ? ts <= latest : ts < latest;
                if (in && lo && hi && json_array_append(match, m) < 0)
                        return -ENOMEM;
        }

        size_t from, count;
        n = json_array_size(match);
        r = arg_page(c, rp, thread ? 1000 : 100, 1000, n, &from, &count);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *out = json_array();
        if (!out)
                return -ENOMEM;
        for (size_t i = from; i < from + count; i++)
                if (json_array_append_new(out, render_message(c, ch, json_array_get(match, i))) < 0)
                        return -ENOMEM;
        return ok(rp, json_pack("{s:O, s:b, s:o}", "messages", out, "has_more", from + count < n,
                                "response_metadata", response_metadata(from + count, n)));
}

static int act_history(TwinCall *c, TwinReply *rp)
{
        json_t *ch;
        int r = arg_channel(c, rp, &ch);
        if (r <= 0)
                return r;
        return list_messages(c, rp, ch, NULL);
}

static int act_replies(TwinCall *c, TwinReply *rp)
{
        json_t *ch;
        int r = arg_channel(c, rp, &ch);
        if (r <= 0)
                return r;
        json_t *v = arg2(c, "ts", "thread_ts");
        int64_t ts;
        json_t *parent = v && ts_parse(v, &ts) == 0 ? msg_find(ch, ts, NULL) : NULL;
        if (!parent)
                return fail(rp, "thread_not_found");
        /* a reply's ts stands for its thread, as on slack.com */
        const char *thread = json_get_str(parent, "thread_ts");
        return list_messages(c, rp, ch, thread ? thread : json_get_str(parent, "ts"));
}

/* A JSON array argument that form bodies carry as a JSON string (blocks, attachments). */
static int arg_json_array(TwinCall *c, const char *key, json_t **ret)
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

/* chat.postMessage; a reply when thread_ts is given (required when need_thread). */
static int post(TwinCall *c, TwinReply *rp, bool need_thread)
{
        json_t *ch;
        int r = arg_channel(c, rp, &ch);
        if (r <= 0)
                return r;
        if (json_is_true(json_object_get(ch, "is_archived")))
                return fail(rp, "is_archived");

        json_t *jt = json_object_get(c->args, "text");
        if (jt && !json_is_null(jt) && !json_is_string(jt))
                return fail(rp, "invalid_arguments");
        const char *text = strempty(json_string_value(jt));
        _cleanup_json_ json_t *blocks = NULL, *attachments = NULL;
        if (arg_json_array(c, "blocks", &blocks) < 0)
                return fail(rp, "invalid_blocks");
        if (arg_json_array(c, "attachments", &attachments) < 0)
                return fail(rp, "invalid_attachments");
        if (!text[0] && json_array_size(blocks) == 0 && json_array_size(attachments) == 0)
                return fail(rp, "no_text");
        if (json_string_length(jt) > MAX_TEXT * 4 || utf8_chars(text) > MAX_TEXT)
                return fail(rp, "msg_too_long");

        json_t *jth = json_object_get(c->args, "thread_ts");
        const char *thread = NULL;
        if (jth && !json_is_null(jth) && !(json_is_string(jth) && !json_string_length(jth))) {
                int64_t t;
                json_t *parent = ts_parse(jth, &t) == 0 ? msg_find(ch, t, NULL) : NULL;
                if (!parent)
                        return fail(rp, "thread_not_found");
                thread = json_get_str(parent, "thread_ts");
                if (!thread)
                        thread = json_get_str(parent, "ts");
        } else if (need_thread)
                return fail(rp, "thread_not_found");
        bool broadcast = false;
        if (twin_arg_bool(c->args, "reply_broadcast", &broadcast) == -EINVAL)
                return fail(rp, "invalid_arguments");

        json_t *bot = json_object_get(c->world, "bot");
        json_t *ts = next_ts(c);
        _cleanup_json_ json_t *m = json_pack("{s:s, s:o, s:O, s:O, s:s}", "type", "message", "ts",
                                             ts, "user", json_object_get(bot, "user_id"), "bot_id",
                                             json_object_get(bot, "bot_id"), "text", text);
        if (!m || (thread && json_object_set_new(m, "thread_ts", json_string(thread)) < 0) ||
            (thread && broadcast && json_object_set_new(m, "reply_broadcast", json_true()) < 0) ||
            (blocks && json_object_set(m, "blocks", blocks) < 0) ||
            (attachments && json_object_set(m, "attachments", attachments) < 0) ||
            json_array_append(json_object_get(ch, "messages"), m) < 0)
                return -ENOMEM;

        r = twin_reply_mutation(rp, NULL, m);
        if (r < 0)
                return r;
        return ok(rp, json_pack("{s:O, s:O, s:o}", "channel", json_object_get(ch, "id"), "ts",
                                json_object_get(m, "ts"), "message", render_message(c, ch, m)));
}

static int act_post_message(TwinCall *c, TwinReply *rp)
{
        return post(c, rp, false);
}

static int act_reply_to_thread(TwinCall *c, TwinReply *rp)
{
        return post(c, rp, true);
}

/* Reaction names: a-z, 0-9, '_', '+', '-', '\'', and one "::skin-tone-N". Colons around are
 * dropped. */
static bool reaction_name_valid(const char *s)
{
        size_t n = strlen(s);
        const char *skin = strstr(s, "::skin-tone-");
        if (skin)
                n = (size_t)(skin - s);
        return n > 0 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_+-'") == n &&
               (!skin || (strlen(skin) == 13 && skin[12] >= '2' && skin[12] <= '6'));
}

static int act_add_reaction(TwinCall *c, TwinReply *rp)
{
        json_t *ch;
        int r = arg_channel(c, rp, &ch);
        if (r <= 0)
                return r;
        json_t *jts = arg2(c, "timestamp", "ts");
        if (!jts || json_is_null(jts))
                return fail(rp, "no_item_specified");
        int64_t ts;
        size_t idx;
        json_t *m = ts_parse(jts, &ts) == 0 ? msg_find(ch, ts, &idx) : NULL;
        if (!m)
                return fail(rp, "message_not_found");

        json_t *jn = arg2(c, "name", "reaction");
        const char *raw = json_string_value(jn);
        char name[128];
        if (!raw)
                return fail(rp, jn ? "invalid_arguments" : "invalid_name");
        size_t l = strlen(raw);
        if (l >= 2 && raw[0] == ':' && raw[l - 1] == ':') {
                raw++;
                l -= 2;
        }
        if (l >= sizeof(name))
                return fail(rp, "invalid_name");
        memcpy(name, raw, l);
        name[l] = 0;
        if (!reaction_name_valid(name))
                return fail(rp, "invalid_name");

        const char *bot = json_get_str(json_object_get(c->world, "bot"), "user_id");
        _cleanup_json_ json_t *next = json_deep_copy(m);
        if (!next)
                return -ENOMEM;
        json_t *reactions = json_object_get(next, "reactions");
        if (!reactions) {
                reactions = json_array();
                if (json_object_set_new(next, "reactions", reactions) < 0)
                        return -ENOMEM;
        }
        json_t *x = find_by(reactions, "name", name);
        if (x) {
                json_t *users = json_object_get(x, "users");
                size_t i;
                json_t *u;
                json_array_foreach (users, i, u) {
                        if (streq_ptr(json_string_value(u), bot))
                                return fail(rp, "already_reacted");
                }
                if (json_array_append_new(users, json_string(bot)) < 0 ||
                    json_object_set_new(x, "count",
                                        json_integer((json_int_t)json_array_size(users))) < 0)
                        return -ENOMEM;
        } else if (json_array_append_new(reactions, json_pack("{s:s, s:[s], s:i}", "name", name,
                                                              "users", bot, "count", 1)) < 0)
                return -ENOMEM;

        /* the delta first: setting the row releases m */
        r = twin_reply_mutation(rp, m, next);
        if (r < 0)
                return r;
        if (json_array_set(json_object_get(ch, "messages"), idx, next) < 0)
                return -ENOMEM;
        return ok(rp, json_object());
}

static int act_get_users(TwinCall *c, TwinReply *rp)
{
        json_t *users = json_object_get(c->world, "users");
        size_t from, count, n = json_array_size(users);
        int r = arg_page(c, rp, 100, 1000, n, &from, &count);
        if (r <= 0)
                return r;
        _cleanup_json_ json_t *out = json_array();
        if (!out)
                return -ENOMEM;
        for (size_t i = from; i < from + count; i++)
                if (json_array_append_new(out, render_user(c, json_array_get(users, i))) < 0)
                        return -ENOMEM;
        return ok(rp, json_pack("{s:O, s:I, s:o}", "members", out, "cache_ts", (json_int_t)c->now,
                                "response_metadata", response_metadata(from + count, n)));
}

static int act_get_user_profile(TwinCall *c, TwinReply *rp)
{
        json_t *v = arg2(c, "user", "user_id");
        if (v && !json_is_null(v) && !json_is_string(v))
                return fail(rp, "invalid_arguments");
        /* without a user, the profile of the caller (the bot), as slack.com does */
        const char *ref = json_is_string(v)
                                  ? json_string_value(v)
                                  : json_get_str(json_object_get(c->world, "bot"), "user_id");
        json_t *u = user_resolve(c->world, strempty(ref));
        if (!u)
                return fail(rp, "user_not_found");
        return ok(rp, json_pack("{s:O}", "profile", json_object_get(u, "profile")));
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
        {"slack_auth_test", act_auth_test},
        {"slack_list_channels", act_list_channels},
        {"slack_get_channel_history", act_history},
        {"slack_get_thread_replies", act_replies},
        {"slack_post_message", act_post_message},
        {"slack_reply_to_thread", act_reply_to_thread},
        {"slack_add_reaction", act_add_reaction},
        {"slack_get_users", act_get_users},
        {"slack_get_user_profile", act_get_user_profile},
};

const TwinKind twin_kind_slack = {
        .name = "slack",
        .implementation = "pome-slack",
        .flags = TWIN_KIND_TOKEN_PARAM,
        .surface = twin_surface_slack,
        .handlers = slack_handlers,
        .n_handlers = ELEMENTSOF(slack_handlers),
        .load_seed = slack_load_seed,
        .public_state = slack_public_state,
        .auth_error = slack_auth_error,
        .error = slack_error,
};
