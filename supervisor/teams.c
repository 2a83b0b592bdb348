/* SPDX-License-Identifier: MIT */
#include "supervisor/teams.h"

#include "common/token.h"
#include "common/util.h"
#include "supervisor/log.h"

struct Teams {
        Team **teams;
        size_t n;
        char *local_key_hash; /* hex SHA-256 of the generated key, or NULL */
        TeamChangedFn changed;
        void *userdata;
};

static void changed(Teams *ts, Team *t)
{
        if (ts->changed)
                ts->changed(t, ts->userdata);
}

static void keys_free(char **keys)
{
        for (char **k = keys; k && *k; k++)
                free(*k);
        free(keys);
}

static Team *team_free(Team *t)
{
        if (!t)
                return NULL;
        free(t->id);
        keys_free(t->key_hashes);
        free(t->plan_tier);
        free(t->unix_uids);
        free(t);
        return NULL;
}

/* Sets a team's quota, plan and keys from its configuration entry (its slots stay). */
static int team_apply(Teams *ts, Team *t, const TeamConfig *tc)
{
        size_t nk = 0;
        while (tc->key_hashes[nk])
                nk++;
        char **keys = calloc(nk + 2, sizeof(char *));
        char *tier = strdup(tc->plan_tier);
        uid_t *uids = calloc(tc->n_unix_uids + 1, sizeof(uid_t));
        if (!keys || !tier || !uids) {
                free(keys);
                free(tier);
                free(uids);
                return -ENOMEM;
        }
        if (tc->n_unix_uids)
                memcpy(uids, tc->unix_uids, tc->n_unix_uids * sizeof(uid_t));
        free(t->unix_uids);
        t->unix_uids = uids;
        t->n_unix_uids = tc->n_unix_uids;
        size_t n = 0;
        for (size_t k = 0; k < nk; k++)
                if ((keys[n] = strdup(tc->key_hashes[k])))
                        n++;
        if (streq(tc->id, "local") && ts->local_key_hash && (keys[n] = strdup(ts->local_key_hash)))
                n++;
        keys_free(t->key_hashes);
        free(t->plan_tier);
        t->key_hashes = keys;
        t->plan_tier = tier;
        t->quota = tc->sessions_quota;
        t->removed = false;
        return n == nk + (streq(tc->id, "local") && ts->local_key_hash) ? 0 : -ENOMEM;
}

static Team *team_add(Teams *ts, const char *id)
{
        Team **n = realloc(ts->teams, (ts->n + 1) * sizeof(Team *));
        if (!n)
                return NULL;
        ts->teams = n;
        Team *t = calloc(1, sizeof(*t));
        if (!t || !(t->id = strdup(id)) || !(t->key_hashes = calloc(1, sizeof(char *))))
                return team_free(t);
        ts->teams[ts->n++] = t;
        return t;
}

int teams_new(const Config *cfg, const char *local_key, Teams **ret)
{
        Teams *ts = calloc(1, sizeof(*ts));
        if (!ts)
                return -ENOMEM;
        if (local_key) {
                char hex[65];
                token_sha256_hex(local_key, hex);
                if (!(ts->local_key_hash = strdup(hex))) {
                        teams_free(ts);
                        return -ENOMEM;
                }
        }
        for (size_t i = 0; i < cfg->n_teams; i++) {
                Team *t = team_add(ts, cfg->teams[i].id);
                if (!t || team_apply(ts, t, &cfg->teams[i]) < 0) {
                        teams_free(ts);
                        return -ENOMEM;
                }
        }
        *ret = ts;
        return 0;
}

Teams *teams_free(Teams *ts)
{
        if (!ts)
                return NULL;
        for (size_t i = 0; i < ts->n; i++)
                team_free(ts->teams[i]);
        free(ts->teams);
        free(ts->local_key_hash);
        free(ts);
        return NULL;
}

void teams_set_observer(Teams *ts, TeamChangedFn fn, void *userdata)
{
        ts->changed = fn;
        ts->userdata = userdata;
}

Team *teams_by_key(Teams *ts, const char *api_key)
{
        if (!api_key || !startswith(api_key, "pome_") || strlen(api_key) > 200)
                return NULL;
        char hex[65];
        token_sha256_hex(api_key, hex);
        Team *found = NULL;
        /* Compare against every hash, without an early exit. */
        for (size_t i = 0; i < ts->n; i++)
                for (char **k = ts->teams[i]->key_hashes; *k; k++)
                        if (token_equal(hex, *k) && !ts->teams[i]->removed)
                                found = ts->teams[i];
        return found;
}

Team *teams_by_id(Teams *ts, const char *id)
{
        for (size_t i = 0; i < ts->n; i++)
                if (streq(ts->teams[i]->id, id))
                        return ts->teams[i];
        return NULL;
}

Team *teams_by_uid(Teams *ts, uid_t uid)
{
        for (size_t i = 0; i < ts->n; i++)
                for (size_t k = 0; !ts->teams[i]->removed && k < ts->teams[i]->n_unix_uids; k++)
                        if (ts->teams[i]->unix_uids[k] == uid)
                                return ts->teams[i];
        return NULL;
}

Team *const *teams_list(Teams *ts, size_t *ret_n)
{
        *ret_n = ts->n;
        return ts->teams;
}

int teams_reload(Teams *ts, const Config *cfg)
{
        for (size_t i = 0; i < ts->n; i++) {
                Team *t = ts->teams[i];
                if (config_find_team(cfg, t->id) || t->removed)
                        continue;
                t->removed = true;
                for (char **k = t->key_hashes; *k; k++)
                        free(*k);
                t->key_hashes[0] = NULL;
                log_info("team %s removed from the configuration (%u sandbox%s still open)", t->id,
                         t->used, t->used == 1 ? "" : "es");
                changed(ts, t);
        }
        for (size_t i = 0; i < cfg->n_teams; i++) {
                const TeamConfig *tc = &cfg->teams[i];
                Team *t = teams_by_id(ts, tc->id);
                if (!t) {
                        if (!(t = team_add(ts, tc->id)))
                                return -ENOMEM;
                        log_info("team %s added", t->id);
                }
                unsigned old_quota = t->quota;
                int r = team_apply(ts, t, tc);
                if (r < 0)
                        return r;
                if (old_quota != t->quota)
                        log_info("team %s: sessions_quota %u → %u", t->id, old_quota, t->quota);
                changed(ts, t);
        }
        return 0;
}

void teams_set_quota(Teams *ts, Team *t, unsigned quota)
{
        if (t->quota == quota)
                return;
        log_info("team %s: sessions_quota %u → %u", t->id, t->quota, quota);
        t->quota = quota;
        changed(ts, t);
}

void teams_set_used(Teams *ts, Team *t, unsigned used, unsigned used_here)
{
        if (t->used == used && t->used_here == used_here)
                return;
        t->used = used;
        t->used_here = used_here;
        changed(ts, t);
}
