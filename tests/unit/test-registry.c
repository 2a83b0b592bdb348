/* SPDX-License-Identifier: MIT */
/*
 * The registry's pomed clock and retention (supervisor/registry.h): ages on a clock that only
 * moves forward, resumed across restarts; a schema-1 registry migrated with its records'
 * ages; an end never recorded before a start.
 */
#include <sqlite3.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/json-util.h"
#include "common/strv.h"
#include "common/timeutil.h"
#include "common/util.h"
#include "supervisor/registry.h"
#include "tests/unit/check.h"

static char dir[] = "/tmp/pome-registry.XXXXXX";
static char path[128];

static Registry *open_it(void)
{
        char err[256] = "";
        Registry *r = NULL;
        int q = registry_open(path, 0, &r, err, sizeof(err));
        if (q < 0)
                fprintf(stderr, "registry_open: %s\n", err);
        CHECK(q == 0 && r);
        return r;
}

static json_t *doc(const char *id, const char *state)
{
        return json_pack("{s:s, s:s, s:s}", "session_id", id, "team_id", "local", "state", state);
}

static void sql(const char *text)
{
        sqlite3 *db = NULL;
        CHECK(sqlite3_open(path, &db) == SQLITE_OK);
        char *err = NULL;
        if (sqlite3_exec(db, text, NULL, NULL, &err) != SQLITE_OK)
                fprintf(stderr, "sql: %s\n", err);
        CHECK(!err);
        sqlite3_free(err);
        sqlite3_close(db);
}

static int gc(Registry *r, int64_t before)
{
        _cleanup_strv_free_ char **ids = NULL;
        return registry_gc(r, before, 100, &ids);
}

static void test_clock_and_retention(void)
{
        unlink(path);
        Registry *r = open_it();
        CHECK(registry_clock_start(r) == REGISTRY_CLOCK_NEW);
        /* a new registry's clock starts at the wall clock */
        int64_t pc = registry_clock_now(r) / (int64_t)USEC_PER_SEC;
        CHECK(pc >= now_sec() - 1 && pc <= now_sec() + 1);
        _cleanup_json_ json_t *a = doc("ses_a", "expired");
        /* its wall-clock end is far in the past: retention does not read it */
        CHECK_OK(registry_put_sandbox(r, a, 1000, 2000));
        CHECK(gc(r, 2001) == 0);
        int64_t end = registry_clock_now(r) / (int64_t)USEC_PER_SEC;
        CHECK(gc(r, end + 2) == 1);
        /* the first end recorded stays: a rewrite of an ended record does not rejuvenate it */
        _cleanup_json_ json_t *b = doc("ses_b", "expired");
        CHECK_OK(registry_put_sandbox(r, b, 1000, 2000));
        sql("UPDATE sandboxes SET ended_pc = 5 WHERE id = 'ses_b'");
        CHECK_OK(registry_put_sandbox(r, b, 1000, 2001));
        CHECK(gc(r, 6) == 1);
        /* an open sandbox is never collected */
        _cleanup_json_ json_t *c = doc("ses_c", "running");
        CHECK_OK(registry_put_sandbox(r, c, 1000, 0));
        CHECK(gc(r, INT64_MAX) == 0);
        /* a previous pomed's open sandbox: failed, ended no earlier than it was created */
        _cleanup_json_ json_t *failed = NULL;
        CHECK_OK(registry_fail_open(r, "supervisor_restarted", 500, &failed));
        CHECK(json_array_size(failed) == 1);
        CHECK(streq(json_get_str(json_array_get(failed, 0), "ended_at"), "1970-01-01T00:16:40Z"));
        registry_close(r);

        /* restarted in the same boot: the clock goes on from where it stood */
        r = open_it();
        CHECK(registry_clock_start(r) == REGISTRY_CLOCK_SAME_BOOT);
        CHECK(registry_clock_now(r) / (int64_t)USEC_PER_SEC >= end);
        registry_close(r);

        /* after a reboot (another boot id): from where it stood then, the time off uncounted */
        sql("UPDATE clock SET boot_id = 'another-boot', pomed_usec = 1000000000");
        r = open_it();
        CHECK(registry_clock_start(r) == REGISTRY_CLOCK_NEW_BOOT);
        int64_t now = registry_clock_now(r);
        CHECK(now >= 1000000000 && now < 1000000000 + 5 * (int64_t)USEC_PER_SEC);
        registry_close(r);
}

static void test_migration_v1(void)
{
        unlink(path);
        /* a schema-1 registry as a previous pomed left it */
        sql("CREATE TABLE teams (id TEXT PRIMARY KEY, sessions_quota INTEGER NOT NULL, "
            "plan_tier TEXT NOT NULL, updated_at INTEGER NOT NULL DEFAULT (unixepoch()));"
            "CREATE TABLE api_keys (sha256 TEXT PRIMARY KEY, team_id TEXT NOT NULL REFERENCES "
            "teams(id) ON DELETE CASCADE);"
            "CREATE TABLE sandboxes (id TEXT PRIMARY KEY, team_id TEXT NOT NULL, state TEXT NOT "
            "NULL, created_at INTEGER NOT NULL, ended_at INTEGER, doc TEXT NOT NULL);"
            "CREATE INDEX sandboxes_by_end ON sandboxes(ended_at);"
            "INSERT INTO sandboxes VALUES ('ses_old', 'local', 'done', 100, 200, '{}');"
            "INSERT INTO sandboxes VALUES ('ses_open', 'local', 'running', 100, NULL, '{}');"
            "PRAGMA user_version = 1;");
        Registry *r = open_it();
        /* aged from its wall-clock end, the only age it has */
        CHECK(gc(r, 200) == 0);
        CHECK(gc(r, 201) == 1);
        _cleanup_json_ json_t *d = NULL;
        CHECK(registry_get(r, "ses_old", &d) == -ENOENT);
        CHECK_OK(registry_get(r, "ses_open", &d));
        registry_close(r);
}

/* Pages: bounded, newest first, every record exactly once by starting_after, team-scoped. */
static void test_pages(void)
{
        unlink(path);
        Registry *r = open_it();
        enum { N = 2500 };
        for (int i = 0; i < N; i++) {
                char id[32];
                snprintf(id, sizeof(id), "ses_%05d", i);
                _cleanup_json_ json_t *d = json_pack("{s:s, s:s, s:s}", "session_id", id, "team_id",
                                                     i % 5 ? "local" : "other", "state", "done");
                /* several per second, as a busy host makes them: rowid breaks the ties */
                CHECK_OK(registry_put_sandbox(r, d, 1000 + i / 7, 2000 + i));
        }
        _cleanup_json_ json_t *seen = json_object();
        const char *after = NULL;
        _cleanup_free_ char *last = NULL;
        size_t pages = 0, rows = 0;
        bool more = true;
        while (more) {
                _cleanup_json_ json_t *page = NULL;
                CHECK_OK(registry_list(r, "local", "all", after, 1000, &page, &more));
                CHECK(json_array_size(page) <= 1000);
                size_t i;
                json_t *d;
                json_array_foreach (page, i, d) {
                        const char *id = json_get_str(d, "session_id");
                        CHECK(streq_ptr(json_get_str(d, "team_id"), "local"));
                        CHECK(!json_object_get(seen, id));    /* once */
                        CHECK(!last || strcmp(id, last) < 0); /* newest first */
                        json_object_set_new(seen, id, json_true());
                        free(last);
                        last = strdup(id);
                        rows++;
                }
                after = last;
                pages++;
                if (pages > 10)
                        break;
        }
        CHECK(rows == N - N / 5 && pages == 2);
        /* a cursor of another team's is none of this listing */
        _cleanup_json_ json_t *none = NULL;
        CHECK(registry_list(r, "local", "all", "ses_00000", 10, &none, NULL) == -ENOENT);
        CHECK(registry_list(r, "local", "all", "ses_nosuch", 10, &none, NULL) == -ENOENT);
        registry_close(r);
}

/* put N records of team and state, created (in seconds) from `from` on, ids PREFIX%06d */
static void put_many(Registry *r, const char *prefix, const char *team, const char *state, int n,
                     int64_t from)
{
        for (int i = 0; i < n; i++) {
                char id[32];
                snprintf(id, sizeof(id), "%s%06d", prefix, i);
                _cleanup_json_ json_t *d = json_pack("{s:s, s:s, s:s}", "session_id", id, "team_id",
                                                     team, "state", state);
                bool open = streq(state, "running");
                CHECK_OK(registry_put_sandbox(r, d, from + i, open ? 0 : from + i + 1));
        }
}

/* A page costs what a page costs, whatever the registry holds (issue 26: 300 000 ended
 * records made a page of one state sort all of them). Costs are SQLite's VM steps, not
 * times: each listing's page costs within 2× with ten times more older records around it,
 * of its own team and state, of another state and of another team. */
static void test_page_cost(void)
{
        unlink(path);
        Registry *r = open_it();
        static const struct {
                const char *team, *state;
        } listings[] = {
                {"local", "all"},  {"local", "stopped"}, {"local", "running"}, {NULL, "all"},
                {NULL, "stopped"}, {NULL, "running"},    {"local", "failed"},
        };
        uint64_t small[ELEMENTSOF(listings)][2];
        put_many(r, "ses_o", "local", "running", 3, 1000000);
        put_many(r, "ses_n", "local", "stopped", 1000, 900000);
        put_many(r, "ses_f", "local", "failed", 100, 800000);
        for (int round = 0; round < 2; round++) {
                if (round == 1) { /* ten times as many, all older */
                        put_many(r, "ses_s", "local", "stopped", 10000, 100000);
                        put_many(r, "ses_x", "local", "expired", 10000, 200000);
                        put_many(r, "ses_t", "other", "stopped", 10000, 300000);
                }
                for (size_t l = 0; l < ELEMENTSOF(listings); l++) {
                        _cleanup_json_ json_t *page = NULL, *next = NULL;
                        bool more = false;
                        CHECK_OK(registry_list(r, listings[l].team, listings[l].state, NULL, 50,
                                               &page, &more));
                        uint64_t first = registry_list_cost(r);
                        const char *after = json_get_str(
                                json_array_get(page, json_array_size(page) - 1), "session_id");
                        CHECK_OK(registry_list(r, listings[l].team, listings[l].state, after, 50,
                                               &next, &more));
                        uint64_t second = registry_list_cost(r);
                        if (round == 0) {
                                small[l][0] = first;
                                small[l][1] = second;
                                continue;
                        }
                        if (first > 2 * small[l][0] + 100 || second > 2 * small[l][1] + 100)
                                fprintf(stderr,
                                        "page of (%s, %s): %llu, %llu steps; "
                                        "%llu, %llu with ten times fewer records\n",
                                        listings[l].team ?: "every team", listings[l].state,
                                        (unsigned long long)first, (unsigned long long)second,
                                        (unsigned long long)small[l][0],
                                        (unsigned long long)small[l][1]);
                        CHECK(first <= 2 * small[l][0] + 100);
                        CHECK(second <= 2 * small[l][1] + 100);
                }
        }
        registry_close(r);
}

int main(void)
{
        CHECK(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/pome.db", dir);
        test_clock_and_retention();
        test_migration_v1();
        test_pages();
        test_page_cost();
        char cmd[160];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        (void)!system(cmd);
        return check_finish();
}
