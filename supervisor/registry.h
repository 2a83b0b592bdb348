/* SPDX-License-Identifier: MIT */
/*
 * The registry: pome.db in the state directory (SQLite, WAL), the only module
 * that includes SQLite. It keeps teams, their API key hashes and every
 * sandbox's record — written at state transitions, never per call — so
 * history survives a pomed restart and `pome sandbox list` can show it.
 *
 * A sandbox row holds indexed columns (id, team, state, times) and the
 * sandbox's public JSON document as last written, so a listing returns the
 * same shape the live API does.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct Registry Registry;

/* How the pomed clock (registry_clock_now) resumed when the registry was opened. */
typedef enum RegistryClockStart {
        REGISTRY_CLOCK_NEW,       /* a new registry: it starts at the wall clock */
        REGISTRY_CLOCK_SAME_BOOT, /* pomed restarted in this boot: the time it was down counts */
        REGISTRY_CLOCK_NEW_BOOT,  /* the machine has booted since: the time it was off does not
                                     count (it cannot be known), so runs are kept longer */
} RegistryClockStart;

/* registry_open flags */
enum {
        REGISTRY_CHECK_FULL = 1u << 0, /* PRAGMA integrity_check, not quick_check */
        REGISTRY_SYNC_FULL = 1u << 1,  /* PRAGMA synchronous=FULL: every commit synced */
};

/*
 * Opens (creating) the database at path, in WAL mode (synchronous=NORMAL: a commit is
 * synced at the next checkpoint; FULL with REGISTRY_SYNC_FULL), checks it (SQLite's quick_check, or
 * integrity_check with REGISTRY_CHECK_FULL) and brings its schema to the current version.
 * Returns 0, or negative errno with a sentence in err (errlen bytes): -EBADMSG for a damaged
 * file (not a database, or a check that does not answer "ok"), -EIO for other SQLite errors
 * (a locked or unreadable file), -EPROTO for a schema newer than this pomed knows.
 */
int registry_open(const char *path, unsigned flags, Registry **ret, char *err, size_t errlen);

Registry *registry_close(Registry *r);

/* Mirrors a team of the configuration: quota, plan tier and key hashes (hex, NULL-
 * terminated, replaced as a whole). Returns 0 or -EIO. */
int registry_put_team(Registry *r, const char *id, unsigned quota, const char *plan_tier,
                      char *const *key_hashes);

/*
 * Writes a sandbox's record (insert or replace). doc is its public JSON (borrowed);
 * the indexed columns are taken from doc's session_id, team_id, state and the
 * created_at/ended_at seconds given (wall clock, for display). The first write with an
 * ended_at also records the end on the pomed clock, which retention reads. Returns 0,
 * -ENOSPC (SQLITE_FULL: the disk is full), -EROFS (read-only) or -EIO.
 */
int registry_put_sandbox(Registry *r, const json_t *doc, int64_t created_at, int64_t ended_at);

/*
 * Sandboxes of team_id (NULL: every team), newest first. state: NULL or "all" for every state,
 * "running" for ready + running, or one state name. after (may be NULL): only those listed
 * after the record of that id (a page's last, as Stripe's starting_after), which must be one
 * of team_id's (-ENOENT otherwise, or when it is not kept). At most limit rows (0: all, for
 * tests); *ret_more says whether there were more. The time is that of the page, not of the
 * registry's size. *ret is a new array of the stored documents. 0, -ENOENT, -EIO, -ENOMEM.
 */
int registry_list(Registry *r, const char *team_id, const char *state, const char *after,
                  unsigned limit, json_t **ret, bool *ret_more);

/*
 * What the last registry_list cost: the virtual machine steps SQLite counted for its query
 * (SQLITE_STMTSTATUS_VM_STEP), a measure of rows visited and sorted that does not depend on
 * the machine's speed. 0 before the first. Tests show with it that a page costs the same in
 * a registry of any size.
 */
uint64_t registry_list_cost(const Registry *r);

/* The stored document of sandbox id (new reference), -ENOENT, -EIO. */
int registry_get(Registry *r, const char *id, json_t **ret);

/*
 * At start-up: every sandbox recorded as open (provisioning, ready, running) belonged
 * to a pomed that is gone. Marks each failed with reason, ended at now (wall clock, seconds;
 * its created_at when that is later: a clock stepped back) and on the pomed clock, and
 * returns their documents as they are now (new array). 0, -EIO, -ENOMEM.
 */
int registry_fail_open(Registry *r, const char *reason, int64_t now, json_t **ret);

/*
 * Of ids (a NULL-terminated list: the kept runs' directories), those with no record, or
 * whose record's document is not JSON (damage SQLite's checks do not see): new strv in
 * *ret_missing (caller frees), *ret_damaged of them damaged. Also *ret_orphans_damaged:
 * records not JSON whose id is not in ids (nothing to rebuild them from). One pass over the
 * table (a temporary table of ids joined to it). 0, -EIO, -ENOMEM.
 */
int registry_missing(Registry *r, char *const *ids, char ***ret_missing, size_t *ret_damaged,
                     size_t *ret_orphans_damaged);

/*
 * Retention: deletes the records of at most limit sandboxes that ended before before
 * (seconds on the pomed clock, registry_clock_now), oldest first, and returns their ids (new
 * strv in *ret_ids, caller frees) so their run directories can go too. Returns how many, or
 * -EIO/-ENOMEM.
 */
int registry_gc(Registry *r, int64_t before, unsigned limit, char ***ret_ids);

/*
 * The pomed clock, in µs: what every age the registry keeps is measured on (a record's end,
 * for retention). It moves with CLOCK_BOOTTIME and only forward, whatever the wall clock
 * does; it is persisted in the registry (registry_clock_save, and on close), so it goes on
 * across restarts as registry_clock_start says. Its origin is the wall clock when the
 * registry was made: its values look like the epoch's but are not to be shown as dates.
 * (A record written before schema 2 is aged from its wall-clock end.)
 */
int64_t registry_clock_now(const Registry *r);

/* How the pomed clock resumed when the registry was opened. */
RegistryClockStart registry_clock_start(const Registry *r);

/* Writes where the pomed clock stands now, for the next start. 0 or -EIO. */
int registry_clock_save(Registry *r);
