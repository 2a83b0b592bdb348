/* SPDX-License-Identifier: MIT */
#include "supervisor/registry.h"

#include <sqlite3.h>
#include <time.h>

#include "common/json-util.h"
#include "common/strv.h"
#include "common/timeutil.h"
#include "common/util.h"

/* 2: sandboxes.ended_pc and the pomed clock (registry_clock_now) */
#define SCHEMA_VERSION 2
#define STRINGIFY_(x)  #x
#define STRINGIFY(x)   STRINGIFY_(x)

struct Registry {
        sqlite3 *db;
        sqlite3_stmt *put_sandbox;
        /* the pomed clock: it read clock_base_pc at CLOCK_BOOTTIME clock_base_boot */
        char boot_id[40];
        uint64_t clock_base_boot, clock_base_pc;
        RegistryClockStart clock_start;
        uint64_t list_cost; /* SQLite VM steps of the last registry_list */
};

static const char schema[] =
        "CREATE TABLE IF NOT EXISTS teams ("
        "  id TEXT PRIMARY KEY,"
        "  sessions_quota INTEGER NOT NULL,"
        "  plan_tier TEXT NOT NULL,"
        "  updated_at INTEGER NOT NULL DEFAULT (unixepoch()));"
        "CREATE TABLE IF NOT EXISTS api_keys ("
        "  sha256 TEXT PRIMARY KEY,"
        "  team_id TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE);"
        "CREATE TABLE IF NOT EXISTS sandboxes ("
        "  id TEXT PRIMARY KEY,"
        "  team_id TEXT NOT NULL,"
        "  state TEXT NOT NULL,"
        "  created_at INTEGER NOT NULL,"
        "  ended_at INTEGER,"
        "  doc TEXT NOT NULL,"
        "  ended_pc INTEGER);"
        "CREATE INDEX IF NOT EXISTS sandboxes_by_team ON sandboxes(team_id, created_at);"
        "CREATE INDEX IF NOT EXISTS sandboxes_by_created ON sandboxes(created_at);"
        "CREATE TABLE IF NOT EXISTS clock ("
        "  id INTEGER PRIMARY KEY CHECK (id = 1),"
        "  boot_id TEXT NOT NULL,"
        "  boot_usec INTEGER NOT NULL,"
        "  pomed_usec INTEGER NOT NULL);";

/* Version 1 → 2: retention reads the pomed clock, not the wall clock. A record ended before
 * this pomed is aged from its wall-clock end, the only age it has. */
static const char migrate_v1[] =
        "ALTER TABLE sandboxes ADD COLUMN ended_pc INTEGER;"
        "UPDATE sandboxes SET ended_pc = ended_at WHERE ended_at IS NOT NULL;"
        "DROP INDEX IF EXISTS sandboxes_by_end;";

/* created after a migration, as ended_pc is then a column; the listings' indexes
 * (registry_list) replace sandboxes_by_state(state), which made a page of one state cost
 * a sort of all its records */
static const char schema_indexes[] =
        "CREATE INDEX IF NOT EXISTS sandboxes_by_end_pc ON sandboxes(ended_pc);"
        "DROP INDEX IF EXISTS sandboxes_by_state;"
        "CREATE INDEX IF NOT EXISTS sandboxes_by_state_created ON sandboxes(state, created_at);"
        "CREATE INDEX IF NOT EXISTS sandboxes_by_team_state ON "
        "sandboxes(team_id, state, created_at);";

static int fail(sqlite3 *db, char *err, size_t errlen, const char *what)
{
        snprintf(err, errlen, "%s: %s", what, db ? sqlite3_errmsg(db) : "out of memory");
        int code = db ? sqlite3_errcode(db) & 0xff : SQLITE_NOMEM;
        /* a file that is not (or no longer) a database is damage, not an I/O error */
        return code == SQLITE_CORRUPT || code == SQLITE_NOTADB ? -EBADMSG : -EIO;
}

/*
 * SQLite's own check of the file: quick_check (O(N), the pages and their records, what a
 * start can afford) or, with full, integrity_check (the indexes against their tables too).
 * 0 when it answers "ok", else -EBADMSG with its first complaint in err.
 */
static int check(Registry *r, bool full, char *err, size_t errlen, const char *path)
{
        sqlite3_stmt *st = NULL;
        const char *pragma = full ? "integrity_check" : "quick_check";
        char sql[48];
        snprintf(sql, sizeof(sql), "PRAGMA %s(1)", pragma);
        if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
                return fail(r->db, err, errlen, path);
        int rc = sqlite3_step(st), q = 0;
        const char *answer = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
        if (rc != SQLITE_ROW)
                q = fail(r->db, err, errlen, path);
        else if (!streq_ptr(answer, "ok")) {
                snprintf(err, errlen, "%s is damaged: SQLite's %s found \"%s\"", path, pragma,
                         strempty(answer));
                q = -EBADMSG;
        }
        sqlite3_finalize(st);
        return q;
}

static int exec(Registry *r, const char *sql)
{
        return sqlite3_exec(r->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

/* This boot's id (the kernel's random boot_id), "" when it cannot be read. */
static void read_boot_id(char *buf, size_t n)
{
        buf[0] = 0;
        _cleanup_fclose_ FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
        if (f && fgets(buf, (int)n, f))
                buf[strcspn(buf, "\n")] = 0;
}

/*
 * Resumes the pomed clock from its row: in the same boot, by the boot clock's progress since
 * (the time pomed was down counts, exactly); after a reboot, where it stood (the time the
 * machine was off is unknown: it does not count, so retention keeps runs longer, never
 * shorter); in a new registry, at the wall clock. Then writes the row for this boot.
 */
static int clock_start(Registry *r, char *err, size_t errlen, const char *path)
{
        read_boot_id(r->boot_id, sizeof(r->boot_id));
        r->clock_base_boot = now_usec(CLOCK_BOOTTIME);
        r->clock_base_pc = now_usec(CLOCK_REALTIME);
        r->clock_start = REGISTRY_CLOCK_NEW;
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(r->db, "SELECT boot_id, boot_usec, pomed_usec FROM clock", -1, &st,
                               NULL) != SQLITE_OK)
                return fail(r->db, err, errlen, path);
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
                const char *boot = (const char *)sqlite3_column_text(st, 0);
                int64_t boot_usec = sqlite3_column_int64(st, 1),
                        pomed_usec = sqlite3_column_int64(st, 2);
                if (r->boot_id[0] && streq_ptr(boot, r->boot_id) && boot_usec >= 0 &&
                    (uint64_t)boot_usec <= r->clock_base_boot) {
                        r->clock_base_pc =
                                (uint64_t)pomed_usec + (r->clock_base_boot - (uint64_t)boot_usec);
                        r->clock_start = REGISTRY_CLOCK_SAME_BOOT;
                } else {
                        r->clock_base_pc = pomed_usec > 0 ? (uint64_t)pomed_usec : 0;
                        r->clock_start = REGISTRY_CLOCK_NEW_BOOT;
                }
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
                return fail(r->db, err, errlen, path);
        return registry_clock_save(r) < 0 ? fail(r->db, err, errlen, path) : 0;
}

RegistryClockStart registry_clock_start(const Registry *r)
{
        return r->clock_start;
}

int64_t registry_clock_now(const Registry *r)
{
        return (int64_t)(r->clock_base_pc + (now_usec(CLOCK_BOOTTIME) - r->clock_base_boot));
}

int registry_clock_save(Registry *r)
{
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(r->db,
                               "INSERT INTO clock(id, boot_id, boot_usec, pomed_usec) VALUES (1, "
                               "?1, ?2, ?3) ON CONFLICT(id) DO UPDATE SET boot_id = "
                               "excluded.boot_id, boot_usec = excluded.boot_usec, pomed_usec = "
                               "excluded.pomed_usec",
                               -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        uint64_t boot = now_usec(CLOCK_BOOTTIME);
        sqlite3_bind_text(st, 1, r->boot_id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, (int64_t)boot);
        sqlite3_bind_int64(st, 3, (int64_t)(r->clock_base_pc + (boot - r->clock_base_boot)));
        int rc = sqlite3_step(st);
        sqlite3_finalize(st);
        return rc == SQLITE_DONE ? 0 : -EIO;
}

int registry_open(const char *path, unsigned flags, Registry **ret, char *err, size_t errlen)
{
        Registry *r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        int rc = sqlite3_open_v2(path, &r->db,
                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX |
                                         SQLITE_OPEN_EXRESCODE,
                                 NULL);
        int q = 0;
        if (rc != SQLITE_OK)
                q = fail(r->db, err, errlen, path);
        /* WAL + NORMAL: a transition costs an append, not an fsync; a crash of pomed loses
         * nothing, a power cut at most the last transitions, never the file (durability:
         * full syncs each). busy_timeout covers a `sqlite3` reader. */
        else if (sqlite3_busy_timeout(r->db, 2000) != SQLITE_OK ||
                 exec(r, flags & REGISTRY_SYNC_FULL ? "PRAGMA journal_mode=WAL; "
                                                      "PRAGMA synchronous=FULL; "
                                                      "PRAGMA foreign_keys=ON;"
                                                    : "PRAGMA journal_mode=WAL; "
                                                      "PRAGMA synchronous=NORMAL; "
                                                      "PRAGMA foreign_keys=ON;") < 0)
                q = fail(r->db, err, errlen, path);
        /* a damaged file is said now, not found one failed write at a time later */
        if (q == 0)
                q = check(r, flags & REGISTRY_CHECK_FULL, err, errlen, path);
        if (q == 0) {
                sqlite3_stmt *st = NULL;
                int version = -1;
                if (sqlite3_prepare_v2(r->db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
                    sqlite3_step(st) == SQLITE_ROW)
                        version = sqlite3_column_int(st, 0);
                sqlite3_finalize(st);
                if (version < 0)
                        q = fail(r->db, err, errlen, path);
                else if (version > SCHEMA_VERSION) {
                        snprintf(err, errlen,
                                 "%s: schema version %d is newer than this pomed's (%d)", path,
                                 version, SCHEMA_VERSION);
                        q = -EPROTO;
                } else if (exec(r, "BEGIN") < 0 || exec(r, schema) < 0 ||
                           (version == 1 && exec(r, migrate_v1) < 0) ||
                           exec(r, schema_indexes) < 0 ||
                           exec(r, "PRAGMA user_version = " STRINGIFY(SCHEMA_VERSION)) < 0 ||
                           exec(r, "COMMIT") < 0) {
                        q = fail(r->db, err, errlen, path);
                        (void)exec(r, "ROLLBACK");
                }
        }
        if (q == 0)
                q = clock_start(r, err, errlen, path);
        if (q == 0 &&
            sqlite3_prepare_v3(r->db,
                               /* an update in place, not REPLACE's delete and insert
                                * under a new rowid, and of the columns that change: a
                                * sandbox's id, team and creation time never do, so their
                                * indexes are not written again */
                               "INSERT INTO sandboxes(id, team_id, state, created_at, "
                               "ended_at, doc, ended_pc) VALUES (?, ?, ?, ?, ?, ?, ?) ON "
                               "CONFLICT(id) DO UPDATE SET state = excluded.state, ended_at = "
                               "excluded.ended_at, doc = excluded.doc, ended_pc = "
                               "COALESCE(sandboxes.ended_pc, excluded.ended_pc)",
                               -1, SQLITE_PREPARE_PERSISTENT, &r->put_sandbox, NULL) != SQLITE_OK)
                q = fail(r->db, err, errlen, path);
        if (q < 0) {
                registry_close(r);
                return q;
        }
        *ret = r;
        return 0;
}

Registry *registry_close(Registry *r)
{
        if (!r)
                return NULL;
        (void)registry_clock_save(r);
        sqlite3_finalize(r->put_sandbox);
        sqlite3_close_v2(r->db);
        free(r);
        return NULL;
}

int registry_put_team(Registry *r, const char *id, unsigned quota, const char *plan_tier,
                      char *const *key_hashes)
{
        sqlite3_stmt *st = NULL;
        int q = exec(r, "BEGIN");
        if (q < 0)
                return q;
        if (sqlite3_prepare_v2(r->db,
                               "INSERT INTO teams(id, sessions_quota, plan_tier) VALUES (?, ?, ?) "
                               "ON CONFLICT(id) DO UPDATE SET sessions_quota = excluded."
                               "sessions_quota, plan_tier = excluded.plan_tier, updated_at = "
                               "unixepoch()",
                               -1, &st, NULL) != SQLITE_OK)
                goto fail;
        sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, quota);
        sqlite3_bind_text(st, 3, plan_tier, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE)
                goto fail;
        sqlite3_finalize(st);
        st = NULL;
        if (sqlite3_prepare_v2(r->db, "DELETE FROM api_keys WHERE team_id = ?", -1, &st, NULL) !=
            SQLITE_OK)
                goto fail;
        sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE)
                goto fail;
        sqlite3_finalize(st);
        st = NULL;
        for (char *const *k = key_hashes; k && *k; k++) {
                if (sqlite3_prepare_v2(r->db,
                                       "INSERT OR REPLACE INTO api_keys(sha256, team_id) VALUES "
                                       "(?, ?)",
                                       -1, &st, NULL) != SQLITE_OK)
                        goto fail;
                sqlite3_bind_text(st, 1, *k, -1, SQLITE_STATIC);
                sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
                if (sqlite3_step(st) != SQLITE_DONE)
                        goto fail;
                sqlite3_finalize(st);
                st = NULL;
        }
        return exec(r, "COMMIT");
fail:
        sqlite3_finalize(st);
        (void)exec(r, "ROLLBACK");
        return -EIO;
}

int registry_put_sandbox(Registry *r, const json_t *doc, int64_t created_at, int64_t ended_at)
{
        const char *id = json_get_str(doc, "session_id"), *team = json_get_str(doc, "team_id"),
                   *state = json_get_str(doc, "state");
        if (!id || !team || !state)
                return -EINVAL;
        _cleanup_free_ char *text = json_dumps(doc, JSON_COMPACT);
        if (!text)
                return -ENOMEM;
        sqlite3_stmt *st = r->put_sandbox;
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, team, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, state, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 4, created_at);
        if (ended_at) {
                sqlite3_bind_int64(st, 5, ended_at);
                /* the first end recorded stays (COALESCE): its age for retention */
                sqlite3_bind_int64(st, 7, registry_clock_now(r) / (int64_t)USEC_PER_SEC);
        } else {
                sqlite3_bind_null(st, 5);
                sqlite3_bind_null(st, 7);
        }
        sqlite3_bind_text(st, 6, text, -1, SQLITE_STATIC);
        int rc = sqlite3_step(st);
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        /* a full disk is said as such: the journal and /healthz name it */
        return rc == SQLITE_DONE                ? 0
               : (rc & 0xff) == SQLITE_FULL     ? -ENOSPC
               : (rc & 0xff) == SQLITE_READONLY ? -EROFS
                                                : -EIO;
}

/* Runs a query whose first column is a document; collects them into a new array. */
static int collect(sqlite3_stmt *st, unsigned limit, json_t **ret, bool *ret_more)
{
        _cleanup_json_ json_t *a = json_array();
        if (!a)
                return -ENOMEM;
        bool more = false;
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                if (limit && json_array_size(a) >= limit) {
                        more = true;
                        break;
                }
                const char *text = (const char *)sqlite3_column_text(st, 0);
                json_t *doc = text ? json_loads(text, 0, NULL) : NULL;
                if (doc)
                        json_array_append_new(a, doc);
        }
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
                return -EIO;
        if (ret_more)
                *ret_more = more;
        *ret = TAKE_PTR(a);
        return 0;
}

int registry_list(Registry *r, const char *team_id, const char *state, const char *after,
                  unsigned limit, json_t **ret, bool *ret_more)
{
        bool all = !state || streq(state, "all"), running = state && streq(state, "running");
        if (after) {
                /* a cursor is a record of the same listing: of the team, still kept */
                _cleanup_json_ json_t *cur = NULL;
                int q = registry_get(r, after, &cur);
                if (q < 0)
                        return q;
                if (team_id && !streq_ptr(json_get_str(cur, "team_id"), team_id))
                        return -ENOENT;
        }
        /* Every listing walks an index in its order (created_at, rowid), from the cursor's
         * row on, and stops after a page: its time is the page's, not the registry's. A team
         * (?1; NULL: every team, D-Bus for root) and a state are that index's leading
         * columns, named here rather than left to the planner, which without statistics
         * chose to sort all 300 000 ended records of one state to list a page of them.
         * "running" is two states: their rows (open sandboxes, bounded by the quotas) are
         * sorted. ?3: the rows after that record's. */
        const char *index =
                all ? (team_id ? "sandboxes_by_team" : "sandboxes_by_created")
                    : (team_id ? "sandboxes_by_team_state" : "sandboxes_by_state_created");
        _cleanup_free_ char *sql = NULL;
        if (asprintf(&sql,
                     "SELECT doc FROM sandboxes INDEXED BY %s WHERE 1 %s %s %s "
                     "ORDER BY created_at DESC, rowid DESC LIMIT ?4",
                     index, team_id ? "AND team_id = ?1" : "",
                     all       ? ""
                     : running ? "AND state IN ('ready', 'running')"
                               : "AND state = ?2",
                     after ? "AND (created_at, rowid) < "
                             "(SELECT created_at, rowid FROM sandboxes WHERE id = ?3)"
                           : "") < 0)
                return -ENOMEM;
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        if (team_id)
                sqlite3_bind_text(st, 1, team_id, -1, SQLITE_STATIC);
        if (!all && !running)
                sqlite3_bind_text(st, 2, state, -1, SQLITE_STATIC);
        if (after)
                sqlite3_bind_text(st, 3, after, -1, SQLITE_STATIC);
        /* one more than asked: whether there are more; 0 asks for every row (tests only) */
        sqlite3_bind_int64(st, 4, limit ? (int64_t)limit + 1 : -1);
        int q = collect(st, limit, ret, ret_more);
        r->list_cost = (uint64_t)sqlite3_stmt_status(st, SQLITE_STMTSTATUS_VM_STEP, 0);
        sqlite3_finalize(st);
        return q;
}

uint64_t registry_list_cost(const Registry *r)
{
        return r->list_cost;
}

int registry_missing(Registry *r, char *const *ids, char ***ret_missing, size_t *ret_damaged,
                     size_t *ret_orphans_damaged)
{
        _cleanup_strv_free_ char **missing = strv_new();
        if (!missing)
                return -ENOMEM;
        size_t damaged = 0, orphans = 0;
        sqlite3_stmt *st = NULL;
        int q = exec(r, "CREATE TEMP TABLE IF NOT EXISTS run_ids(id TEXT PRIMARY KEY);"
                        "DELETE FROM run_ids; BEGIN");
        if (q == 0 && sqlite3_prepare_v2(r->db, "INSERT OR IGNORE INTO run_ids VALUES (?)", -1, &st,
                                         NULL) != SQLITE_OK)
                q = -EIO;
        for (char *const *id = ids; q == 0 && id && *id; id++) {
                sqlite3_bind_text(st, 1, *id, -1, SQLITE_STATIC);
                if (sqlite3_step(st) != SQLITE_DONE)
                        q = -EIO;
                sqlite3_reset(st);
        }
        sqlite3_finalize(st);
        st = NULL;
        (void)exec(r, q == 0 ? "COMMIT" : "ROLLBACK");
        if (q == 0 && sqlite3_prepare_v2(r->db,
                                         "SELECT i.id, s.id IS NOT NULL FROM run_ids i LEFT JOIN "
                                         "sandboxes s ON s.id = i.id WHERE s.id IS NULL OR NOT "
                                         "json_valid(s.doc)",
                                         -1, &st, NULL) != SQLITE_OK)
                q = -EIO;
        int rc;
        while (q == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                q = strv_extend(&missing, (const char *)sqlite3_column_text(st, 0));
                damaged += sqlite3_column_int(st, 1) != 0;
        }
        if (q == 0 && rc != SQLITE_DONE)
                q = -EIO;
        sqlite3_finalize(st);
        st = NULL;
        if (q == 0 &&
            sqlite3_prepare_v2(r->db,
                               "SELECT count(*) FROM sandboxes WHERE NOT json_valid(doc) AND id "
                               "NOT IN (SELECT id FROM run_ids)",
                               -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
                orphans = (size_t)sqlite3_column_int64(st, 0);
        else if (q == 0)
                q = -EIO;
        sqlite3_finalize(st);
        (void)exec(r, "DELETE FROM run_ids");
        if (q < 0)
                return q;
        *ret_missing = TAKE_PTR(missing);
        *ret_damaged = damaged;
        *ret_orphans_damaged = orphans;
        return 0;
}

int registry_get(Registry *r, const char *id, json_t **ret)
{
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(r->db, "SELECT doc FROM sandboxes WHERE id = ?", -1, &st, NULL) !=
            SQLITE_OK)
                return -EIO;
        sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
        json_t *a = NULL;
        int q = collect(st, 1, &a, NULL);
        sqlite3_finalize(st);
        if (q < 0)
                return q;
        if (json_array_size(a) == 0) {
                json_decref(a);
                return -ENOENT;
        }
        *ret = json_incref(json_array_get(a, 0));
        json_decref(a);
        return 0;
}

int registry_fail_open(Registry *r, const char *reason, int64_t now, json_t **ret)
{
        sqlite3_stmt *st = NULL;
        int q = exec(r, "BEGIN");
        if (q < 0)
                return q;
        /* json_set keeps the stored document in step with the columns. */
        if (sqlite3_prepare_v2(r->db,
                               /* a wall clock stepped back since: never ended before
                                * it was created */
                               "UPDATE sandboxes SET state = 'failed', ended_at = MAX(?1, "
                               "created_at), ended_pc = ?3, doc = json_set(doc, '$.state', "
                               "'failed', '$.reason', ?2, '$.ended_at', "
                               "strftime('%Y-%m-%dT%H:%M:%SZ', MAX(?1, created_at), "
                               "'unixepoch')) WHERE state IN ('provisioning', 'ready', "
                               "'running') RETURNING doc",
                               -1, &st, NULL) != SQLITE_OK) {
                (void)exec(r, "ROLLBACK");
                return -EIO;
        }
        sqlite3_bind_int64(st, 1, now);
        sqlite3_bind_text(st, 2, reason, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, registry_clock_now(r) / (int64_t)USEC_PER_SEC);
        q = collect(st, 0, ret, NULL);
        sqlite3_finalize(st);
        if (q < 0) {
                (void)exec(r, "ROLLBACK");
                return q;
        }
        return exec(r, "COMMIT");
}

int registry_gc(Registry *r, int64_t before, unsigned limit, char ***ret_ids)
{
        _cleanup_strv_free_ char **ids = strv_new();
        if (!ids)
                return -ENOMEM;
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(r->db,
                               "DELETE FROM sandboxes WHERE id IN (SELECT id FROM sandboxes "
                               "WHERE ended_pc IS NOT NULL AND ended_pc < ?1 ORDER BY ended_pc "
                               "LIMIT ?2) RETURNING id",
                               -1, &st, NULL) != SQLITE_OK)
                return -EIO;
        sqlite3_bind_int64(st, 1, before);
        sqlite3_bind_int64(st, 2, limit);
        int rc, q = 0;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                const char *id = (const char *)sqlite3_column_text(st, 0);
                if (id && (q = strv_extend(&ids, id)) < 0)
                        break;
        }
        sqlite3_finalize(st);
        if (q < 0)
                return q;
        if (rc != SQLITE_DONE && rc != SQLITE_ROW)
                return -EIO;
        int n = (int)strv_length(ids);
        *ret_ids = TAKE_PTR(ids);
        return n;
}
