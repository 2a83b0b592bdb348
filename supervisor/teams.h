/* SPDX-License-Identifier: MIT */
/*
 * Teams (DESIGN.md "Vocabulary"): who owns API keys and how many concurrency
 * slots they have (sessions_quota). A slot is taken before a sandbox's first
 * pod is spawned and given back the moment the sandbox leaves the open states.
 * Teams come from the configuration; SIGHUP re-applies it without touching an
 * open sandbox, and D-Bus SetQuota changes a quota until the next reload.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "supervisor/config.h"

typedef struct Team {
        char *id;
        char **key_hashes;  /* lower-case hex SHA-256, NULL-terminated */
        unsigned quota;     /* sessions_quota: slots */
        unsigned used;      /* slots taken: sandboxes open now, everywhere the ledger sees
                             * (the fleet's under an etcd ledger) */
        unsigned used_here; /* of which this pomed holds */
        char *plan_tier;
        bool removed; /* dropped from the configuration by a reload; kept while it has sandboxes */
        uid_t *unix_uids; /* unix_users: who reads its sandboxes on the bus (TeamConfig) */
        size_t n_unix_uids;
} Team;

typedef struct Teams Teams;

/* Called after a team's quota, keys, plan tier or used slots changed. */
typedef void (*TeamChangedFn)(Team *t, void *userdata);

/*
 * The teams of cfg. local_key (may be NULL) is the generated key of the state directory,
 * which belongs to team `local`. Returns 0 or -ENOMEM.
 */
int teams_new(const Config *cfg, const char *local_key, Teams **ret);
Teams *teams_free(Teams *ts);

/* Observer of every change (one at a time; NULL to stop). */
void teams_set_observer(Teams *ts, TeamChangedFn fn, void *userdata);

/*
 * The team owning api_key (compared as SHA-256 hashes, in constant time, against every
 * key of every team), or NULL. Keys that do not start with "pome_" are nobody's.
 */
Team *teams_by_key(Teams *ts, const char *api_key);
Team *teams_by_id(Teams *ts, const char *id);

/* The first team (not removed) whose unix_users has uid, or NULL. */
Team *teams_by_uid(Teams *ts, uid_t uid);
/* All teams (borrowed array of *ret_n). */
Team *const *teams_list(Teams *ts, size_t *ret_n);

/*
 * Applies a reloaded configuration: quotas, plan tiers and keys change, new teams appear,
 * teams no longer configured lose their keys but keep their slots (and their object, so
 * the counts stay right). Returns 0 or -ENOMEM (then partly applied, each team consistent).
 */
int teams_reload(Teams *ts, const Config *cfg);

/* Sets t's quota until the next reload. A quota below t->used only refuses new sandboxes. */
void teams_set_quota(Teams *ts, Team *t, unsigned quota);

/* Sets t's counts of slots in use (supervisor/ledger.h, the only caller) and tells the
 * observer when either changed. */
void teams_set_used(Teams *ts, Team *t, unsigned used, unsigned used_here);
