/* SPDX-License-Identifier: MIT */
#include "supervisor/manager.h"

#include <fcntl.h>
#include <sys/statvfs.h>

#include "common/fileio.h"
#include "common/hashmap.h"
#include "common/json-util.h"
#include "common/strv.h"
#include "common/timeutil.h"
#include "pods/grade/grade.h"
#include "pods/twin/twin.h"
#include "supervisor/image.h"
#include "supervisor/ledger.h"
#include "supervisor/log.h"
#include "supervisor/podhost.h"
#include "supervisor/podpool.h"
#include "supervisor/registry.h"
#include "supervisor/rundir.h"

#define GC_BATCH        256u                  /* records collected per pass */
#define GC_INTERVAL_MAX (3600 * USEC_PER_SEC) /* a pass at least hourly */
#define DRAIN_POLL_USEC (20 * USEC_PER_MSEC)  /* how often a drain looks at calls in flight */

struct Manager {
        sd_event *event;
        const Config *cfg;
        StateDir *state;
        Teams *teams;
        Ledger *ledger;         /* who holds which slot: local, or the fleet's etcd */
        TeamConfig *conf_teams; /* pomed.conf's teams as last (re)loaded: copies */
        size_t n_conf_teams;
        TeamConfig *etcd_teams; /* the etcd ledger's teams as last told: copies */
        size_t n_etcd_teams;
        char *id_prefix; /* "ses_<node>_" in a fleet, else NULL */
        Images *images;
        PodHost *host;
        PodPool *pool; /* warm pods, or NULL when every pool_size is 0 */
        Registry *registry;
        RunDirs *runs;
        Metrics *metrics;
        Judge *judge; /* the judge of [model] criteria (judge: in pomed.conf), or NULL */
        SandboxEnv env;
        SandboxStorage storage; /* what the state directory refused, kept */
        sd_event_source *storage_timer;
        Hashmap *by_id;     /* id → Sandbox, for every sandbox held */
        Sandbox *sandboxes; /* the same, newest first */
        size_t n;
        char *public_url;
        ManagerObserver observer;
        sd_event_source *gc_timer;
        bool swept; /* run directories without a record were looked for once */
        /* admission: sandboxes starting their pods (at most limits.max_starting), and the
         * FIFO of admitted ones waiting for a start (at most limits.max_queued_creates) */
        unsigned n_starting, n_queued;
        Sandbox *queue_head, *queue_tail;
        bool starting_queued; /* start_queued is running: a nested call returns */
        /* drain */
        bool draining;
        uint64_t drain_deadline; /* CLOCK_MONOTONIC µs */
        sd_event_source *drain_timer;
        void (*drain_done)(void *userdata);
        void *drain_userdata;
};

/* ---- admission ---- */

/* Takes s out of the admission queue (when it is in it). */
static void dequeue(Manager *m, Sandbox *s)
{
        if (!s->queued)
                return;
        Sandbox **p = &m->queue_head, *prev = NULL;
        while (*p && *p != s) {
                prev = *p;
                p = &(*p)->queue_next;
        }
        if (*p) {
                *p = s->queue_next;
                if (m->queue_tail == s)
                        m->queue_tail = prev;
        }
        s->queue_next = NULL;
        s->queued = false;
        m->n_queued--;
}

/* Starts the waiting sandboxes, oldest first, while fewer than limits.max_starting start. */
static void start_queued(Manager *m)
{
        if (m->starting_queued)
                return;
        m->starting_queued = true;
        while (m->queue_head && m->n_starting < m->cfg->max_starting) {
                Sandbox *s = m->queue_head;
                dequeue(m, s);
                if (s->state != SANDBOX_PROVISIONING)
                        continue;
                s->starting = true;
                m->n_starting++;
                sandbox_start(s); /* may end s, and so come back through on_state_changed */
        }
        m->starting_queued = false;
}

/* ---- hooks from the sandboxes and the teams ---- */

static void on_state_changed(Sandbox *s, void *userdata)
{
        Manager *m = userdata;
        if (s->state != SANDBOX_PROVISIONING) {
                dequeue(m, s); /* ended while it waited (a drain, its lifetime) */
                if (s->starting) {
                        s->starting = false;
                        m->n_starting--;
                        start_queued(m);
                }
                podpool_kick(m->pool); /* a create answered: the pool may refill */
        }
        if (m->observer.state_changed)
                m->observer.state_changed(s, m->observer.userdata);
}

static void on_team_changed(Team *t, void *userdata)
{
        Manager *m = userdata;
        if (m->observer.team_changed)
                m->observer.team_changed(t, m->observer.userdata);
}

static void on_slot_released(Sandbox *s, void *userdata)
{
        Manager *m = userdata;
        ledger_release(m->ledger, s->team, s->id);
}

/* The ledger lost sid's slot for good (ledger.h): the sandbox cannot stay open uncounted. */
static void on_slot_lost(const char *sid, void *userdata)
{
        Manager *m = userdata;
        Sandbox *s = hashmap_get(m->by_id, sid);
        if (!s || !sandbox_state_is_open(s->state))
                return;
        log_warning("%s: its slot was lost while the ledger was out of reach and the team has "
                    "no room for it now: ending it (failed, slot_lost)",
                    sid);
        sandbox_end(s, SANDBOX_FAILED, "slot_lost", false, NULL, NULL);
}

/* The teams pomed.conf named last (m->conf_teams), overlaid by the ledger's (same id: the
 * ledger's wins). */
static int apply_teams(Manager *m)
{
        _cleanup_free_ TeamConfig *all =
                calloc(m->n_conf_teams + m->n_etcd_teams + 1, sizeof(*all));
        if (!all)
                return -ENOMEM;
        size_t n = 0;
        for (size_t i = 0; i < m->n_etcd_teams; i++)
                all[n++] = m->etcd_teams[i];
        for (size_t i = 0; i < m->n_conf_teams; i++) {
                bool shadowed = false;
                for (size_t k = 0; k < m->n_etcd_teams; k++)
                        shadowed = shadowed || streq(m->etcd_teams[k].id, m->conf_teams[i].id);
                if (!shadowed)
                        all[n++] = m->conf_teams[i];
        }
        Config merged = *m->cfg;
        merged.teams = all;
        merged.n_teams = n;
        int r = teams_reload(m->teams, &merged);
        size_t nt;
        Team *const *teams = teams_list(m->teams, &nt);
        for (size_t i = 0; i < nt; i++)
                if (!teams[i]->removed)
                        (void)registry_put_team(m->registry, teams[i]->id, teams[i]->quota,
                                                teams[i]->plan_tier, teams[i]->key_hashes);
        return r;
}

static void team_configs_free(TeamConfig **teams, size_t *n)
{
        for (size_t i = 0; i < *n; i++)
                config_team_done(&(*teams)[i]);
        free(*teams);
        *teams = NULL;
        *n = 0;
}

/* Deep copies of teams[0..n) into *ret (n + 1 entries, the last zeroed). 0 or -ENOMEM. */
static int team_configs_copy(const TeamConfig *teams, size_t n, TeamConfig **ret)
{
        TeamConfig *copy = calloc(n + 1, sizeof(*copy));
        if (!copy)
                return -ENOMEM;
        for (size_t k = 0; k < n; k++) {
                TeamConfig *c = &copy[k];
                c->id = strdup(teams[k].id);
                c->plan_tier = strdup(teams[k].plan_tier);
                c->sessions_quota = teams[k].sessions_quota;
                c->key_hashes = strv_new();
                for (char **h = teams[k].key_hashes; c->key_hashes && h && *h; h++)
                        if (strv_extend(&c->key_hashes, *h) < 0)
                                c->key_hashes = strv_free(c->key_hashes);
                if (teams[k].n_unix_uids &&
                    (c->unix_uids = malloc(teams[k].n_unix_uids * sizeof(uid_t)))) {
                        memcpy(c->unix_uids, teams[k].unix_uids,
                               teams[k].n_unix_uids * sizeof(uid_t));
                        c->n_unix_uids = teams[k].n_unix_uids;
                }
                if (!c->id || !c->plan_tier || !c->key_hashes ||
                    c->n_unix_uids != teams[k].n_unix_uids) {
                        for (size_t i = 0; i <= k; i++)
                                config_team_done(&copy[i]);
                        free(copy);
                        return -ENOMEM;
                }
        }
        *ret = copy;
        return 0;
}

static void on_ledger_teams(const TeamConfig *teams, size_t n, void *userdata)
{
        Manager *m = userdata;
        TeamConfig *copy;
        if (team_configs_copy(teams, n, &copy) < 0) {
                log_error("out of memory: the teams etcd changed are not applied");
                return;
        }
        team_configs_free(&m->etcd_teams, &m->n_etcd_teams);
        m->etcd_teams = copy;
        m->n_etcd_teams = n;
        if (m->teams && apply_teams(m) < 0)
                log_error("out of memory: the teams etcd changed are partly applied");
}

static void unlink_sandbox(Manager *m, Sandbox *s)
{
        dequeue(m, s);
        if (s->starting) {
                s->starting = false;
                m->n_starting--;
        }
        (void)hashmap_remove(m->by_id, s->id);
        if (s->prev)
                s->prev->next = s->next;
        else if (m->sandboxes == s)
                m->sandboxes = s->next;
        if (s->next)
                s->next->prev = s->prev;
        s->prev = s->next = NULL;
        m->n--;
}

static void drain_check(Manager *m);

static void on_gone(Sandbox *s, void *userdata)
{
        Manager *m = userdata;
        unlink_sandbox(m, s);
        sandbox_free(s);
        if (m->draining)
                drain_check(m);
}

static int link_sandbox(Manager *m, Sandbox *s)
{
        int r = hashmap_put(m->by_id, s->id, s);
        if (r < 0)
                return r;
        s->next = m->sandboxes;
        if (s->next)
                s->next->prev = s;
        m->sandboxes = s;
        m->n++;
        return 0;
}

/* ---- retention ---- */

static int on_gc(sd_event_source *es, uint64_t usec, void *userdata);

static void gc_arm(Manager *m, uint64_t in_usec)
{
        uint64_t now;
        (void)sd_event_now(m->event, CLOCK_BOOTTIME, &now);
        (void)sd_event_source_set_time(m->gc_timer, now + in_usec);
        (void)sd_event_source_set_enabled(m->gc_timer, SD_EVENT_ONESHOT);
}

/* Run directories that no record points to (a crash between mkdir and the first record). */
static void sweep_orphans(Manager *m, int64_t before)
{
        _cleanup_strv_free_ char **old = NULL;
        if (rundir_list_older(m->runs, before, &old) < 0)
                return;
        for (char **id = old; *id; id++) {
                _cleanup_json_ json_t *doc = NULL;
                if (hashmap_get(m->by_id, *id) || registry_get(m->registry, *id, &doc) != -ENOENT)
                        continue;
                if (rundir_remove(m->runs, *id) >= 0)
                        log_info("%s: run directory without a record removed", *id);
        }
}

/* One pass: at most GC_BATCH records (and their runs) past retention go. Returns how many. */
static int gc_pass(Manager *m)
{
        if (!m->swept) {
                m->swept = true;
                /* orphans (no record) are aged by their directory's wall-clock mtime */
                sweep_orphans(m, now_sec() - (int64_t)(m->cfg->retention_usec / USEC_PER_SEC));
        }
        /* on the pomed clock: a wall clock stepped forward (an RTC reset, a correction)
         * deletes no run before its time */
        (void)registry_clock_save(m->registry);
        int64_t before = registry_clock_now(m->registry) / (int64_t)USEC_PER_SEC -
                         (int64_t)(m->cfg->retention_usec / USEC_PER_SEC);
        _cleanup_strv_free_ char **ids = NULL;
        int n = registry_gc(m->registry, before, GC_BATCH, &ids);
        if (n < 0) {
                log_warning_errno(n, "retention: cannot collect old records");
                return n;
        }
        for (char **id = ids; *id; id++) {
                int r = rundir_remove(m->runs, *id);
                if (r < 0)
                        log_warning_errno(r, "%s: cannot remove the run directory", *id);
                else
                        log_debug("%s: retention over, record and run removed", *id);
        }
        return n;
}

static int on_gc(sd_event_source *es _unused_, uint64_t usec _unused_, void *userdata)
{
        Manager *m = userdata;
        int n = gc_pass(m);
        uint64_t every = m->cfg->retention_usec / 10;
        if (every < USEC_PER_SEC)
                every = USEC_PER_SEC;
        if (every > GC_INTERVAL_MAX)
                every = GC_INTERVAL_MAX;
        /* a full batch means more are waiting: go on soon, in small steps */
        gc_arm(m, n == (int)GC_BATCH ? USEC_PER_MSEC : every);
        return 0;
}

/* ---- set-up ---- */

/* The tapes of a run that was open when pomed (or the machine) went down: a tail a power
 * cut left zeroed or torn is cut off, so that what is read back is whole rows. */
static void repair_tapes(Manager *m, const char *id, const json_t *doc)
{
        size_t i;
        json_t *twin;
        json_array_foreach (json_object_get(doc, "twins"), i, twin) {
                _cleanup_free_ char *path =
                        rundir_tape_path(m->runs, id, strempty(json_string_value(twin)));
                uint64_t cut = 0;
                int r = path ? tape_repair(path, &cut) : -ENOMEM;
                if (r > 0)
                        log_warning("%s: its %s tape ended in %" PRIu64 " bytes that are no whole "
                                    "row (a crash or power cut): cut off",
                                    id, json_string_value(twin), cut);
                else if (r < 0 && r != -ENOENT)
                        log_warning_errno(r, "%s: cannot check its %s tape", id,
                                          json_string_value(twin));
        }
}

/*
 * A run a previous pomed left open was never told it is kept, so its image seeds were not
 * written (sandbox.c keeps them at the end): write them now from the images, by the name
 * its record gives. An inline seed is not on record; grading falls back to the task's.
 */
static void restore_seeds(Manager *m, const char *id, const json_t *doc)
{
        const char *twin;
        json_t *pt;
        json_object_foreach ((json_t *)json_object_get(doc, "per_twin"), twin, pt) {
                const Image *img = images_find(m->images, twin);
                const char *seed = json_get_str(pt, "seed");
                char name[64];
                snprintf(name, sizeof(name), "%s.seed.json", twin);
                _cleanup_free_ char *path = rundir_path(m->runs, id, name);
                _cleanup_(seed_text_unrefp) SeedText *t = NULL;
                if (!img || !seed || !path || image_seed_get(img, seed, &t) < 0)
                        continue;
                /* kept whole, or written again: a pomed before atomic writes (or a full
                 * disk) may have left it cut short */
                _cleanup_free_ char *have = NULL;
                size_t have_len = 0;
                if (read_file_at(AT_FDCWD, path, t->len + 1, &have, &have_len) >= 0 &&
                    have_len == t->len && memcmp(have, t->data, t->len) == 0)
                        continue;
                if (rundir_write(m->runs, id, name, t->data, t->len, true) >= 0 && have)
                        log_notice("%s: %s was cut short (%zu of %zu bytes): written again", id,
                                   name, have_len, t->len);
        }
}

/* The records of the runs ids, from their sandbox.json; *ret_n how many. 0 or -errno. */
static int rebuild_ids(Registry *reg, RunDirs *runs, char **ids, size_t *ret_n)
{
        int r;
        size_t n = 0;
        for (char **id = ids; *id; id++) {
                _cleanup_free_ char *file = rundir_path(runs, *id, "sandbox.json");
                if (!file)
                        return -ENOMEM;
                _cleanup_json_ json_t *doc = json_load_file(file, 0, NULL);
                int64_t created = 0, ended = 0;
                if (!json_is_object(doc) || !streq_ptr(json_get_str(doc, "session_id"), *id) ||
                    parse_rfc3339(json_get_str(doc, "created_at"), &created) < 0) {
                        log_warning("%s: no readable sandbox.json, left out of the rebuilt "
                                    "registry (its directory stays)",
                                    *id);
                        continue;
                }
                (void)parse_rfc3339(json_get_str(doc, "ended_at"), &ended);
                /* its age is not known: retention counts it from now (registry_put_sandbox) */
                r = registry_put_sandbox(reg, doc, created, ended);
                if (r < 0)
                        return r;
                n++;
        }
        *ret_n = n;
        return 0;
}

int manager_rebuild_records(Registry *reg, RunDirs *runs, size_t *ret_n)
{
        _cleanup_strv_free_ char **ids = NULL;
        int r = rundir_list_older(runs, INT64_MAX, &ids);
        return r < 0 ? r : rebuild_ids(reg, runs, ids, ret_n);
}

static int open_registry(Manager *m, char *err, size_t errlen)
{
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, "%s/pome.db", m->state->path) < 0)
                return -ENOMEM;
        int r = registry_open(path,
                              (m->cfg->check_registry ? REGISTRY_CHECK_FULL : 0) |
                                      (m->cfg->durability_full ? REGISTRY_SYNC_FULL : 0),
                              &m->registry, err, errlen);
        if (r == -EBADMSG) {
                size_t n = strlen(err);
                snprintf(err + n, errlen - n,
                         ". Fix: restore it from a backup, or run pomed --rebuild-registry (with "
                         "the same --config and --state-dir), which moves it aside and rebuilds "
                         "every record from %s/runs",
                         m->state->path);
        }
        if (r < 0)
                return r;
        /* Every kept run has its record: a registry deleted, emptied or moved aside, rows
         * deleted, a document damaged (SQLite's checks see pages, not JSON) — the runs say
         * what it held. One pass over the table; its ids and the runs' directories. */
        _cleanup_strv_free_ char **ids = NULL, **missing = NULL;
        size_t damaged = 0, orphans = 0, rebuilt = 0;
        r = rundir_list_older(m->runs, INT64_MAX, &ids);
        if (r >= 0)
                r = registry_missing(m->registry, ids, &missing, &damaged, &orphans);
        if (r >= 0)
                r = rebuild_ids(m->registry, m->runs, missing, &rebuilt);
        if (r < 0) {
                snprintf(err, errlen, "%s: cannot rebuild the records from %s/runs: %s", path,
                         m->state->path, strerror(-r));
                return r;
        }
        if (rebuilt > 0 && registry_clock_start(m->registry) == REGISTRY_CLOCK_NEW)
                log_notice("registry %s is new beside %zu kept run%s: their records are "
                           "rebuilt from runs/ (their ages are not known: retention counts "
                           "them from now)",
                           path, rebuilt, rebuilt == 1 ? "" : "s");
        else if (rebuilt > 0)
                log_warning("registry %s lacked the records of %zu kept run%s (%zu of them "
                            "damaged, not JSON): rebuilt from runs/ (their ages are not known: "
                            "retention counts them from now)",
                            path, rebuilt, rebuilt == 1 ? "" : "s", damaged);
        if (orphans > 0)
                log_warning("registry %s holds %zu damaged record%s (not JSON) of sandboxes "
                            "with no kept run to rebuild them from: they are left out of every "
                            "listing. pomed --rebuild-registry makes a registry of the kept runs "
                            "only",
                            path, orphans, orphans == 1 ? "" : "s");
        if (registry_clock_start(m->registry) == REGISTRY_CLOCK_NEW_BOOT)
                log_info("retention: the machine has booted since pomed last ran; the time it "
                         "was off is not known on the boot clock and does not count toward "
                         "the retention of kept runs");
        size_t n;
        Team *const *teams = teams_list(m->teams, &n);
        for (size_t i = 0; i < n; i++)
                if (registry_put_team(m->registry, teams[i]->id, teams[i]->quota,
                                      teams[i]->plan_tier, teams[i]->key_hashes) < 0)
                        log_warning("cannot record team %s in the registry", teams[i]->id);
        /* Whatever a previous pomed left open is gone now: say so in every record. */
        _cleanup_json_ json_t *failed = NULL;
        r = registry_fail_open(m->registry, "supervisor_restarted", now_sec(), &failed);
        if (r < 0) {
                snprintf(err, errlen, "%s: cannot update open sandboxes", path);
                return r;
        }
        size_t i;
        json_t *doc;
        json_array_foreach (failed, i, doc) {
                const char *id = json_get_str(doc, "session_id");
                log_notice("%s: failed (supervisor_restarted): it was open when the previous "
                           "pomed ended",
                           id);
                if (rundir_exists(m->runs, id)) {
                        (void)rundir_write_json(m->runs, id, "sandbox.json", doc);
                        restore_seeds(m, id, doc);
                        repair_tapes(m, id, doc);
                }
        }
        return 0;
}

/* The pool waits while a create waits for its pods: a spawn now would delay its READY. */
static bool creates_waiting(void *userdata)
{
        Manager *m = userdata;
        for (Sandbox *s = m->sandboxes; s; s = s->next)
                if (s->state == SANDBOX_PROVISIONING)
                        return true;
        return false;
}

/* Creates are refused: pods would get no cgroup, and allow_unlimited_pods is false. */
static bool refuses_unlimited(const Manager *m)
{
        return !podhost_cgroups(m->host) && !m->cfg->allow_unlimited_pods;
}

/* The warm pool (podpool.h), sized by pool_size per twin kind; none when all are 0. */
static int start_pool(Manager *m, char *err, size_t errlen)
{
        const Config *cfg = m->cfg;
        for (size_t i = 0; i < cfg->n_pool_sizes; i++)
                if (!images_find(m->images, cfg->pool_sizes[i].twin)) {
                        snprintf(err, errlen, "pool_size.%s: no such twin (twins: %s%s%s)",
                                 cfg->pool_sizes[i].twin, m->images->n ? "" : "none",
                                 m->images->n ? m->images->images[0].kind->name : "",
                                 m->images->n > 1 ? ", …" : "");
                        return -EINVAL;
                }
        unsigned sizes[16] = {}, total = 0;
        for (size_t i = 0; i < m->images->n && i < ELEMENTSOF(sizes); i++)
                total += sizes[i] = config_pool_size(cfg, m->images->images[i].kind->name);
        /* no warm pods that could never serve: creates are refused without cgroups */
        if (total == 0 || refuses_unlimited(m))
                return 0;
        int r = podpool_new(m->event, podhost_env(m->host), m->images, sizes, creates_waiting, m,
                            &m->pool);
        if (r < 0)
                snprintf(err, errlen, "cannot start the pod pool: %s", strerror(-r));
        return r;
}

/* One pod of the first image, started and stopped: a broken install stops pomed here. */
static int trial(Manager *m, char *err, size_t errlen)
{
        const Image *img = &m->images->images[0];
        _cleanup_free_ char *seed = NULL;
        size_t len = 0;
        int r = image_read_seed(img, img->default_seed, &seed, &len);
        if (r < 0) {
                snprintf(err, errlen, "%s/seeds/%s.json: %s", img->dir, img->default_seed,
                         strerror(-r));
                return r;
        }
        return podhost_trial(m->host, img, seed, len, m->cfg->start_timeout_usec, err, errlen);
}

/* The longest one question to a judge configured as c may take: every attempt timing out,
 * and the backoff between them (judges.h: 1 s doubling to 10 s at most). */
static uint64_t judge_budget_usec(const JudgeConfig *c)
{
        if (!c)
                return 0;
        unsigned attempts = c->api == JUDGE_API_COMMAND ? 1 : c->attempts;
        return (uint64_t)attempts * (c->timeout_sec + 10) * USEC_PER_SEC;
}

/* ---- the state directory refused a write: retried until it takes it ---- */

#define STORAGE_RETRY_USEC (250 * USEC_PER_MSEC)

/* Writes what the storage keeps now: 0 once all is written (the timer goes), else it stays
 * armed. */
static int storage_retry(Manager *m)
{
        int r = sandbox_storage_retry(&m->storage, m->sandboxes);
        if (r >= 0)
                m->storage_timer = sd_event_source_disable_unref(m->storage_timer);
        else if (m->storage_timer &&
                 (sd_event_source_set_time_relative(m->storage_timer, STORAGE_RETRY_USEC) < 0 ||
                  sd_event_source_set_enabled(m->storage_timer, SD_EVENT_ONESHOT) < 0))
                log_error("cannot arm the timer that writes what the state directory refused");
        return r;
}

static int on_storage_retry(sd_event_source *es _unused_, uint64_t usec _unused_, void *userdata)
{
        (void)storage_retry(userdata);
        return 0;
}

static void on_storage_failed(void *userdata)
{
        Manager *m = userdata;
        if (m->storage_timer)
                return; /* armed already */
        if (sd_event_add_time_relative(m->event, &m->storage_timer, CLOCK_MONOTONIC,
                                       STORAGE_RETRY_USEC, USEC_PER_MSEC * 10, on_storage_retry,
                                       m) < 0)
                log_error("cannot arm the timer that writes what the state directory refused");
}

int manager_new(sd_event *e, const Config *cfg, StateDir *state, Manager **ret, char *err,
                size_t errlen)
{
        Manager *m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->event = sd_event_ref(e);
        m->cfg = cfg;
        m->state = state;
        int r = (m->by_id = hashmap_new(HASHMAP_STRING)) ? 0 : -ENOMEM;
        if (r >= 0)
                r = teams_new(cfg, state->api_key, &m->teams);
        if (r >= 0 && (r = team_configs_copy(cfg->teams, cfg->n_teams, &m->conf_teams)) >= 0)
                m->n_conf_teams = cfg->n_teams;
        if (r >= 0)
                r = images_load(cfg, &m->images, err, errlen);
        if (r >= 0)
                r = podhost_new(e, cfg, state, m->images, &m->host, err, errlen);
        if (r >= 0)
                r = trial(m, err, errlen);
        if (r >= 0 && (r = rundirs_open(state->runs, &m->runs)) < 0)
                snprintf(err, errlen, "cannot open %s: %s", state->runs, strerror(-r));
        if (r >= 0)
                r = open_registry(m, err, errlen);
        if (r >= 0 && !cfg->fleet)
                r = ledger_new_local(m->teams, &m->ledger);
        else if (r >= 0) {
                static const LedgerHooks hooks = {.slot_lost = on_slot_lost,
                                                  .teams_changed = on_ledger_teams};
                char why[512] = "";
                r = ledger_new_etcd(cfg->fleet, m->teams, e, &hooks, m, &m->ledger, why,
                                    sizeof(why));
                if (r < 0 && r != -ENOMEM)
                        snprintf(err, errlen, "fleet: cannot join through etcd (%s%s): %s",
                                 cfg->fleet->endpoints[0], cfg->fleet->endpoints[1] ? ", …" : "",
                                 why);
                if (r >= 0)
                        r = asprintf(&m->id_prefix, "ses_%s_", cfg->fleet->node) < 0 ? -ENOMEM : 0;
        }
        if (r >= 0)
                r = metrics_new(&m->metrics);
        if (r >= 0)
                r = start_pool(m, err, errlen);
        if (r >= 0 && cfg->judge)
                /* the key is read now: a judge that cannot be used is a start-up error, not a
                 * surprise at the first finalize */
                r = judge_new(cfg->judge, &m->judge, err, errlen);
        if (r < 0)
                goto fail;
        teams_set_observer(m->teams, on_team_changed, m);
        m->storage = (SandboxStorage){.env = &m->env, .failed = on_storage_failed, .userdata = m};
        m->env = (SandboxEnv){
                .event = e,
                .cfg = cfg,
                .pods = podhost_env(m->host),
                .registry = m->registry,
                .runs = m->runs,
                .secret = state->secret,
                .public_url = (const char *const *)&m->public_url,
                .metrics = m->metrics,
                .pool = m->pool,
                .judge = m->judge ? judge_grade_judge(m->judge) : NULL,
                .judge_budget_usec = judge_budget_usec(cfg->judge),
                .storage = &m->storage,
                .id_prefix = m->id_prefix,
                .hooks = {.state_changed = on_state_changed,
                          .slot_released = on_slot_released,
                          .gone = on_gone,
                          .userdata = m},
        };
        if (cfg->retention_usec) {
                r = sd_event_add_time(e, &m->gc_timer, CLOCK_BOOTTIME, 0, USEC_PER_SEC, on_gc, m);
                if (r < 0) {
                        snprintf(err, errlen, "cannot arm the retention timer: %s", strerror(-r));
                        goto fail;
                }
                (void)gc_pass(m); /* what expired while pomed was down goes now */
                gc_arm(m, USEC_PER_SEC);
        }
        *ret = m;
        return 0;
fail:
        manager_free(m);
        return r < 0 ? r : -EINVAL;
}

Manager *manager_free(Manager *m)
{
        if (!m)
                return NULL;
        while (m->sandboxes) {
                Sandbox *s = m->sandboxes;
                unlink_sandbox(m, s);
                /* pomed is going away without a drain: say so in the run */
                sandbox_abandon(s, "supervisor_stopped");
                sandbox_free(s); /* kills and reaps its pods */
        }
        sandbox_storage_done(&m->storage);
        sd_event_source_disable_unref(m->storage_timer);
        sd_event_source_disable_unref(m->gc_timer);
        sd_event_source_disable_unref(m->drain_timer);
        m->pool = podpool_free(m->pool); /* its idle pods killed and reaped */
        hashmap_free(m->by_id);
        registry_close(m->registry);
        rundirs_free(m->runs);
        podhost_free(m->host);
        images_free(m->images);
        ledger_free(m->ledger); /* its slots go with its lease, unless ledger_leave ran */
        teams_free(m->teams);
        team_configs_free(&m->etcd_teams, &m->n_etcd_teams);
        team_configs_free(&m->conf_teams, &m->n_conf_teams);
        free(m->id_prefix);
        metrics_free(m->metrics);
        judge_free(m->judge);
        free(m->public_url);
        sd_event_unref(m->event);
        free(m);
        return NULL;
}

void manager_set_observer(Manager *m, const ManagerObserver *o)
{
        m->observer = *o;
}

/* The state directory's room: statvfs(3) of it (the registry) and of its runs/ (tapes, run
 * files), which may be a filesystem of its own; the fuller of the two, and whether either is
 * read-only. 0 or the negative errno of statvfs. */
static int state_room(const Manager *m, uint64_t *ret_free, bool *ret_readonly)
{
        const char *paths[] = {m->state->path, m->state->runs};
        *ret_free = UINT64_MAX;
        *ret_readonly = false;
        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                struct statvfs sv;
                if (statvfs(paths[i], &sv) < 0)
                        return negative_errno();
                uint64_t f = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
                if (f < *ret_free)
                        *ret_free = f;
                *ret_readonly = *ret_readonly || (sv.f_flag & ST_RDONLY);
        }
        return 0;
}

/*
 * Whether the state directory takes what is about to be written (min_bytes at least, no
 * write refused and not yet redone, not read-only): 0, or -1 with e a 507 that says why and
 * what was therefore not done (what). What is kept is written first.
 */
static int storage_refusal(Manager *m, uint64_t min_bytes, const char *what, SandboxError *e)
{
        if (m->storage.error)
                (void)storage_retry(m);
        uint64_t free_bytes;
        bool readonly;
        int room = state_room(m, &free_bytes, &readonly);
        const char *error = m->storage.error ? strerror(-m->storage.error) : NULL;
        if (room == 0 && !error && !readonly && free_bytes >= min_bytes)
                return 0;
        return sandbox_error(
                e, SANDBOX_ERR_STORAGE,
                room < 0 ? json_pack("{s:s, s:s?}", "state_dir", m->state->path, "error", error)
                         : json_pack("{s:s, s:I, s:s?}", "state_dir", m->state->path, "free_bytes",
                                     (json_int_t)free_bytes, "error", error),
                "pomed's state directory %s cannot be written (%s): %s. Free space "
                "there (pome doctor), then retry.",
                m->state->path,
                error      ? error
                : room < 0 ? strerror(-room)
                           : "it is full or read-only",
                what);
}

json_t *manager_state_dir_json(const Manager *m)
{
        uint64_t free_bytes;
        bool readonly;
        if (state_room(m, &free_bytes, &readonly) < 0)
                return NULL;
        int err = m->storage.error;
        return json_pack("{s:s, s:I, s:b, s:b, s:s?}", "path", m->state->path, "free_bytes",
                         (json_int_t)free_bytes, "full",
                         readonly || free_bytes < MANAGER_STATE_DIR_FULL_BYTES || err, "read_only",
                         readonly, "error", err ? strerror(-err) : NULL);
}

const char *manager_missing_layers(const Manager *m)
{
        return podhost_missing_layers(m->host);
}

json_t *manager_isolation_json(const Manager *m)
{
        const CgSetup *cg = podhost_cgroups(m->host);
        const char *user = podhost_pod_user(m->host);
        json_t *pool = json_object();
        for (size_t i = 0; pool && i < m->images->n; i++) {
                const Image *img = &m->images->images[i];
                json_object_set_new(pool, img->kind->name,
                                    json_pack("{s:i, s:i}", "idle", (int)podpool_idle(m->pool, img),
                                              "size", (int)podpool_size(m->pool, img)));
        }
        return json_pack("{s:{s:b, s:s?, s:s?, s:b, s:s?, s:b}, s:b, s:b, s:s?, s:s?, s:o*}",
                         "cgroups", "active", cg != NULL, "layout", cg ? cg_layout_name(cg) : NULL,
                         "tree", cg ? cg_tree_path(cg, "memory") : NULL, "cpu",
                         cg && cg_has_cpu(cg), "error", podhost_cgroup_error(m->host),
                         "creates_refused", refuses_unlimited(m), "seccomp", 1, "namespaces",
                         *user != 0, "pod_user", *user ? user : NULL, "pod_uid_range",
                         podhost_pod_uid_range(m->host), "pool", pool);
}

Teams *manager_teams(Manager *m)
{
        return m->teams;
}

Ledger *manager_ledger(Manager *m)
{
        return m->ledger;
}

int manager_reload_teams(Manager *m, const Config *cfg)
{
        TeamConfig *copy;
        if (team_configs_copy(cfg->teams, cfg->n_teams, &copy) < 0)
                return -ENOMEM;
        team_configs_free(&m->conf_teams, &m->n_conf_teams);
        m->conf_teams = copy;
        m->n_conf_teams = cfg->n_teams;
        return apply_teams(m);
}

/* ---- create ---- */

/* What validate prepares for a create and the spec borrows until sandbox_admit. */
typedef struct Seeds {
        SeedText *data[SANDBOX_TWINS_MAX];
        GradeTask *task;
        char *task_name; /* the task's title, when the create names no task */
} Seeds;

static void seeds_done(Seeds *s)
{
        for (size_t i = 0; i < SANDBOX_TWINS_MAX; i++)
                seed_text_unref(s->data[i]);
        grade_task_free(s->task);
        free(s->task_name);
}

/*
 * An inline seed of twin (a task's Seed State, say) as the text the pod loads, into *ret
 * (*ret_len bytes): checked with the twin's own seed loader first, so a bad seed is the
 * caller's 422 naming what is wrong, not a pod that never gets ready. 0, or -1 with e.
 */
static int inline_seed(const char *twin, const json_t *doc, SeedText **ret, SandboxError *e)
{
        const TwinKind *k = twin_kind_find(twin);
        char err[512] = "";
        Twin *t = NULL;
        int r = k ? twin_new(k, doc, &t, err, sizeof(err)) : -EINVAL;
        twin_free(t);
        if (r == -ENOMEM)
                return sandbox_error(e, SANDBOX_ERR_INTERNAL, NULL, "out of memory");
        if (r < 0)
                return sandbox_error(e, SANDBOX_ERR_INVALID,
                                     json_pack("{s:s, s:s, s:s}", "field", "seeds", "twin", twin,
                                               "seed_error", err),
                                     "The inline seed of twin %s is refused: %s", twin, err);
        _cleanup_free_ char *text = json_dumps(doc, JSON_COMPACT);
        if (!text)
                return sandbox_error(e, SANDBOX_ERR_INTERNAL, NULL, "out of memory");
        if (strlen(text) > IMAGE_SEED_MAX)
                return sandbox_error(e, SANDBOX_ERR_INVALID,
                                     json_pack("{s:s, s:s, s:i}", "field", "seeds", "twin", twin,
                                               "max_bytes", (int)IMAGE_SEED_MAX),
                                     "The inline seed of twin %s is larger than %u bytes.", twin,
                                     IMAGE_SEED_MAX);
        *ret = seed_text_new(text, strlen(text));
        if (!*ret)
                return sandbox_error(e, SANDBOX_ERR_INTERNAL, NULL, "out of memory");
        return 0;
}

/* Checks rq and fills spec (seeds read into seeds). 0, or -1 with e filled. */
static int validate(Manager *m, const SandboxRequest *rq, SandboxSpec *spec, Seeds *seeds,
                    SandboxError *e)
{
        const Images *im = m->images;
        /* Depth before width: more than three twins is refused whatever the quota. */
        if (rq->n_twins == 0)
                return sandbox_error(e, SANDBOX_ERR_INVALID,
                                     json_pack("{s:s, s:o}", "field", "twins", "available",
                                               images_names_json(im)),
                                     "Name at least one twin (\"twins\": [\"github\"]).");
        if (rq->n_twins > SANDBOX_TWINS_MAX)
                return sandbox_error(e, SANDBOX_ERR_INVALID,
                                     json_pack("{s:s, s:i, s:i}", "field", "twins", "requested",
                                               (int)rq->n_twins, "max", SANDBOX_TWINS_MAX),
                                     "A sandbox holds at most %d twins; %zu were requested. This "
                                     "limit is fixed (no plan raises it).",
                                     SANDBOX_TWINS_MAX, rq->n_twins);
        *spec = (SandboxSpec){.n_twins = rq->n_twins, .task = rq->task};
        for (size_t i = 0; i < rq->n_twins; i++) {
                const Image *img = images_find(im, rq->twins[i]);
                if (!img)
                        return sandbox_error(e, SANDBOX_ERR_INVALID,
                                             json_pack("{s:s, s:s, s:o}", "field", "twins", "twin",
                                                       rq->twins[i], "available",
                                                       images_names_json(im)),
                                             "Unknown twin '%s'.", rq->twins[i]);
                for (size_t j = 0; j < i; j++)
                        if (spec->images[j] == img)
                                return sandbox_error(
                                        e, SANDBOX_ERR_INVALID,
                                        json_pack("{s:s, s:s}", "field", "twins", "twin",
                                                  rq->twins[i]),
                                        "Twin '%s' is listed twice; each twin appears once per "
                                        "sandbox.",
                                        rq->twins[i]);
                spec->images[i] = img;
        }
        if (rq->task_markdown) {
                /* refused here, before a slot is taken or anything spawned */
                const char *names[SANDBOX_TWINS_MAX];
                for (size_t i = 0; i < rq->n_twins; i++)
                        names[i] = spec->images[i]->kind->name;
                if (sandbox_task_parse(rq->task_markdown, rq->task_markdown_len, names, rq->n_twins,
                                       &seeds->task, &seeds->task_name, e) < 0)
                        return -1;
                spec->task_markdown = rq->task_markdown;
                spec->task_markdown_len = rq->task_markdown_len;
                spec->n_model_criteria = sandbox_task_model_criteria(seeds->task);
        }
        for (size_t i = 0; i < rq->n_twins; i++) {
                const Image *img = spec->images[i];
                /* a seed the create names wins; else the task's own for that twin */
                const json_t *task_seed =
                        seeds->task && !rq->seeds[i]
                                ? json_object_get(seeds->task->seeds, img->kind->name)
                                : NULL;
                if (!rq->seed_docs[i] && !task_seed && !rq->seeds[i] && seeds->task &&
                    seeds->task->seed_prose_line)
                        /* the task's world exists only as its prose: the image's default
                         * seed is another world, and grading against it would judge the
                         * agent on a task it was not given */
                        return sandbox_error(
                                e, SANDBOX_ERR_INVALID,
                                json_pack("{s:s, s:s, s:I}", "field", "seeds", "twin", rq->twins[i],
                                          "line", (json_int_t)seeds->task->seed_prose_line),
                                "task.md:%u: ## Seed State is prose, and no seed for the %s twin "
                                "was sent: send each twin's seed in seeds (the task's compiled "
                                "<task>.seed.json, as pome run does), or name one.",
                                seeds->task->seed_prose_line, rq->twins[i]);
                if (rq->seed_docs[i] || task_seed) {
                        if (inline_seed(rq->twins[i], rq->seed_docs[i] ?: task_seed,
                                        &seeds->data[i], e) < 0)
                                return -1;
                        spec->seed_names[i] = rq->seed_docs[i] ? "inline" : "task";
                        spec->seeds[i] = seeds->data[i];
                        continue;
                }
                const char *name = rq->seeds[i] ? rq->seeds[i] : img->default_seed;
                int r = image_seed_get(img, name, &seeds->data[i]);
                if (r == -ENOENT)
                        return sandbox_error(e, SANDBOX_ERR_INVALID,
                                             json_pack("{s:s, s:s, s:s, s:o}", "field", "seeds",
                                                       "twin", rq->twins[i], "seed", name,
                                                       "available", image_seeds_json(img)),
                                             "Unknown seed '%s' for twin %s.", name, rq->twins[i]);
                if (r == -EFBIG)
                        return sandbox_error(e, SANDBOX_ERR_INVALID,
                                             json_pack("{s:s, s:s, s:s, s:i}", "field", "seeds",
                                                       "twin", rq->twins[i], "seed", name,
                                                       "max_bytes", (int)IMAGE_SEED_MAX),
                                             "Seed '%s' of twin %s is larger than %u bytes.", name,
                                             rq->twins[i], IMAGE_SEED_MAX);
                if (r < 0)
                        return sandbox_error(e, SANDBOX_ERR_INTERNAL, NULL,
                                             "Cannot read seed '%s' of twin %s: %s", name,
                                             rq->twins[i], strerror(-r));
                spec->seed_names[i] = name;
                spec->seeds[i] = seeds->data[i];
        }
        if (rq->task && (strlen(rq->task) > SANDBOX_TASK_NAME_MAX || !*rq->task))
                return sandbox_error(e, SANDBOX_ERR_INVALID, json_pack("{s:s}", "field", "task"),
                                     "task must be 1-200 characters.");
        spec->task_named = rq->task != NULL;
        if (!rq->task)
                spec->task = seeds->task_name;
        const Config *cfg = m->cfg;
        spec->ttl_usec = rq->ttl_usec && rq->ttl_usec < cfg->lifetime_usec ? rq->ttl_usec
                                                                           : cfg->lifetime_usec;
        spec->idle_usec =
                rq->idle_usec < 0 ? cfg->idle_timeout_usec
                : cfg->idle_timeout_usec && (uint64_t)rq->idle_usec > cfg->idle_timeout_usec
                        ? cfg->idle_timeout_usec
                        : (uint64_t)rq->idle_usec;
        return 0;
}

int manager_create(Manager *m, Team *t, const SandboxRequest *rq, SandboxCreatedFn cb,
                   void *userdata, SandboxError *e)
{
        if (m->draining)
                return sandbox_error(e, SANDBOX_ERR_SHUTTING_DOWN, NULL,
                                     "pomed is shutting down and starts no new sandbox. Retry "
                                     "once it is back.");
        SandboxSpec spec;
        _cleanup_(seeds_done) Seeds seeds = {};
        if (validate(m, rq, &spec, &seeds, e) < 0)
                return -1;
        if (refuses_unlimited(m))
                return sandbox_error(e, SANDBOX_ERR_UNISOLATED,
                                     json_pack("{s:s?}", "cgroups", podhost_cgroup_error(m->host)),
                                     "pomed has no cgroups for pods (%s), so a pod would run "
                                     "without memory and pids limits: no sandbox is started. "
                                     "Fix: " PODHOST_CGROUP_FIX ".",
                                     strempty(podhost_cgroup_error(m->host)));
        /* Admission, as a load balancer does it: beyond what can start now and what may wait
         * for a start, 503 before a slot or a pod is spent. */
        if (m->n_starting >= m->cfg->max_starting && m->n_queued >= m->cfg->max_queued_creates)
                return sandbox_error(e, SANDBOX_ERR_BUSY,
                                     json_pack("{s:i, s:i}", "starting", (int)m->n_starting,
                                               "queued", (int)m->n_queued),
                                     "pomed is starting %u sandboxes and %u more wait for a "
                                     "start (limits.max_starting, limits.max_queued_creates). "
                                     "Retry shortly.",
                                     m->n_starting, m->n_queued);
        /* Nothing is started that cannot be recorded. */
        if (storage_refusal(m, MANAGER_CREATE_MIN_BYTES,
                            "no sandbox is started that could not be recorded", e) < 0)
                return -1;
        /* Width: reserve the slot before anything is spawned. */
        Sandbox *s = NULL;
        int r = sandbox_new(&m->env, t, &spec, &s);
        if (r < 0)
                return sandbox_error(e, SANDBOX_ERR_INTERNAL, NULL, "out of memory");
        char why[512] = "";
        r = ledger_take(m->ledger, t, s->id, why, sizeof(why));
        if (r < 0) {
                sandbox_free(s);
                if (r == -EDQUOT)
                        return sandbox_error(
                                e, SANDBOX_ERR_QUOTA,
                                json_pack("{s:i, s:i, s:s}", "sessions_used", (int)t->used,
                                          "sessions_quota", (int)t->quota, "team_id", t->id),
                                "Team %s has %u of %u sandboxes open. Stop or finalize one, or "
                                "raise sessions_quota.",
                                t->id, t->used, t->quota);
                if (r == -ENOMEM)
                        return sandbox_error(e, SANDBOX_ERR_INTERNAL, NULL, "out of memory");
                return sandbox_error(
                        e, SANDBOX_ERR_LEDGER,
                        json_pack("{s:s, s:s}", "ledger", ledger_kind(m->ledger), "error", why),
                        "No sandbox is started: the slot ledger cannot say whether "
                        "team %s has a free slot (%s). Sandboxes already open keep "
                        "serving. Retry once it is back.",
                        t->id, why);
        }
        if ((r = link_sandbox(m, s)) < 0) {
                ledger_release(m->ledger, t, s->id);
                sandbox_free(s);
                return sandbox_error(e, SANDBOX_ERR_INTERNAL, NULL, "out of memory");
        }
        /* its run directory and lifetime now; its pods when a start is free, in order */
        char id[sizeof(s->id)];
        memcpy(id, s->id, sizeof(id));
        sandbox_admit(s, &spec, cb, userdata);
        if (hashmap_get(m->by_id, id) != s || s->state != SANDBOX_PROVISIONING)
                return 0; /* admitting failed: ended (maybe freed), answered through cb */
        s->queued = true;
        if (m->queue_tail)
                m->queue_tail->queue_next = s;
        else
                m->queue_head = s;
        m->queue_tail = s;
        m->n_queued++;
        start_queued(m);
        return 0;
}

/* ---- lookups ---- */

Sandbox *manager_get(Manager *m, const char *id)
{
        Sandbox *s = hashmap_get(m->by_id, id);
        if (!s)
                return NULL;
        (void)sandbox_reconcile_clocks(s);
        /* ending it may have completed its teardown */
        return hashmap_get(m->by_id, id);
}

int manager_record(Manager *m, const char *id, json_t **ret)
{
        Sandbox *s = manager_get(m, id);
        if (s) {
                *ret = sandbox_to_json(s);
                return *ret ? 0 : -ENOMEM;
        }
        return registry_get(m->registry, id, ret);
}

/* The sandbox id of team (NULL: any) pomed holds, or its record: exactly one is set. */
static int lookup(Manager *m, const Team *team, const char *id, Sandbox **ret_s, json_t **ret_doc,
                  SandboxError *e)
{
        *ret_s = manager_get(m, id);
        *ret_doc = NULL;
        if (*ret_s && (!team || (*ret_s)->team == team))
                return 0;
        if (!*ret_s && registry_get(m->registry, id, ret_doc) >= 0 &&
            (!team || streq_ptr(json_get_str(*ret_doc, "team_id"), team->id))) {
                return 0;
        }
        *ret_s = NULL;
        json_decref(*ret_doc);
        *ret_doc = NULL;
        return sandbox_error(e, SANDBOX_ERR_NOT_FOUND, json_pack("{s:s}", "session_id", id),
                             team ? "No sandbox %s for team %s." : "No sandbox %s.", id,
                             team ? team->id : "");
}

/* The refusal for a sandbox known only by its record (it has ended). */
static int refuse_record(const json_t *doc, SandboxError *e)
{
        return sandbox_error_ended(e, strempty(json_get_str(doc, "session_id")),
                                   strempty(json_get_str(doc, "state")),
                                   json_get_str(doc, "reason"));
}

int manager_stop(Manager *m, const Team *team, const char *id, const char *confirm_token,
                 bool confirmed, SandboxGoneFn gone, void *userdata, SandboxError *e)
{
        Sandbox *s;
        _cleanup_json_ json_t *doc = NULL;
        if (lookup(m, team, id, &s, &doc, e) < 0)
                return -1;
        if (s)
                return sandbox_stop(s, confirm_token, confirmed, gone, userdata, e);
        /* Only on record: it has ended. The same policy: expired is refused, the rest is a
         * no-op, answered now. */
        if (streq_ptr(json_get_str(doc, "state"), "expired"))
                return refuse_record(doc, e);
        if (gone)
                gone(NULL, userdata);
        return 0;
}

int manager_finalize(Manager *m, const Team *team, const char *id, const SandboxFinalizeSpec *spec,
                     SandboxGoneFn done, void *userdata, SandboxError *e)
{
        Sandbox *s;
        _cleanup_json_ json_t *doc = NULL;
        if (lookup(m, team, id, &s, &doc, e) < 0)
                return -1;
        if (!s)
                return refuse_record(doc, e);
        /* A run whose finals would not fit is not finalized: refused before its pods are
         * stopped, it stays open and finalizes once there is room. */
        if (sandbox_state_is_open(s->state) &&
            storage_refusal(m, MANAGER_FINALIZE_MIN_BYTES,
                            "the run is not finalized, as its final states might not fit; the "
                            "sandbox stays open",
                            e) < 0)
                return -1;
        return sandbox_finalize(s, spec, done, userdata, e);
}

/* Why a run is not kept, for a sandbox known to have ended (its record doc). */
static int refuse_no_run(const char *id, const json_t *doc, SandboxError *e)
{
        const char *reason = json_get_str(doc, "reason");
        if (streq_ptr(reason, "discarded"))
                return sandbox_error(e, SANDBOX_ERR_NOT_FOUND,
                                     json_pack("{s:s, s:s}", "session_id", id, "reason", reason),
                                     "Sandbox %s was discarded: its tapes and worlds were thrown "
                                     "away.",
                                     id);
        return sandbox_error(e, SANDBOX_ERR_NOT_FOUND, json_pack("{s:s}", "session_id", id),
                             "The run of sandbox %s is no longer kept.", id);
}

int manager_run_file(Manager *m, const Team *team, const char *id, const char *name,
                     char **ret_path, SandboxError *e)
{
        Sandbox *s;
        _cleanup_json_ json_t *doc = NULL;
        if (lookup(m, team, id, &s, &doc, e) < 0)
                return -1;
        if (!doc && s)
                doc = sandbox_to_json(s);
        if (!m->runs || !rundir_exists(m->runs, id))
                return refuse_no_run(id, doc, e);
        _cleanup_free_ char *path = rundir_path(m->runs, id, name);
        if (!path)
                return sandbox_error(e, SANDBOX_ERR_INTERNAL, NULL, "out of memory");
        if (access(path, F_OK) < 0)
                return sandbox_error(e, SANDBOX_ERR_NOT_FOUND,
                                     json_pack("{s:s, s:s}", "session_id", id, "file", name),
                                     "The run of sandbox %s has no %s%s.", id, name,
                                     s && sandbox_state_is_open(s->state)
                                             ? " yet: it is still open (finalize it)"
                                             : "");
        *ret_path = TAKE_PTR(path);
        return 0;
}

int manager_run_twin(Manager *m, const Team *team, const char *id, const char *twin,
                     const char **ret_twin, SandboxError *e)
{
        Sandbox *s;
        _cleanup_json_ json_t *doc = NULL;
        if (lookup(m, team, id, &s, &doc, e) < 0)
                return -1;
        if (!doc && s)
                doc = sandbox_to_json(s);
        json_t *twins = json_object_get(doc, "twins");
        const char *found = NULL;
        size_t i;
        json_t *v;
        json_array_foreach (twins, i, v) {
                if (!twin || streq_ptr(json_string_value(v), twin)) {
                        found = json_string_value(v);
                        break;
                }
        }
        const TwinKind *k = found ? twin_kind_find(found) : NULL;
        if (!k)
                return sandbox_error(e, SANDBOX_ERR_INVALID,
                                     json_pack("{s:s, s:O}", "field", "twin", "twins", twins),
                                     "Sandbox %s has no %s twin.", id, strempty(twin));
        *ret_twin = k->name;
        return 0;
}

int manager_run_tape(Manager *m, const Team *team, const char *id, const char *twin, Tape **ret,
                     bool *ret_owned, const char **ret_twin, SandboxError *e)
{
        if (manager_run_twin(m, team, id, twin, ret_twin, e) < 0)
                return -1;
        const TwinKind *k = twin_kind_find(*ret_twin);
        Sandbox *s = manager_get(m, id);
        for (size_t t = 0; s && t < s->n_twins; t++)
                if (s->twins[t].kind == k && s->twins[t].tape) {
                        *ret = s->twins[t].tape;
                        *ret_owned = false;
                        return 0;
                }
        if (!m->runs || !rundir_exists(m->runs, id)) {
                _cleanup_json_ json_t *doc = NULL;
                (void)manager_record(m, id, &doc);
                return refuse_no_run(id, doc, e);
        }
        _cleanup_free_ char *path = rundir_tape_path(m->runs, id, k->name);
        if (!path)
                return sandbox_error(e, SANDBOX_ERR_INTERNAL, NULL, "out of memory");
        int r = tape_open_readonly(path, ret);
        /* a twin that served no call never made its tape's file: its tape is empty */
        if (r == -ENOENT)
                r = tape_open(NULL, ret);
        if (r < 0)
                return sandbox_error(e, SANDBOX_ERR_INTERNAL, NULL, "cannot read %s: %s", path,
                                     strerror(-r));
        *ret_owned = true;
        return 0;
}

int manager_list(Manager *m, const char *team_id, const char *state, const char *after,
                 unsigned limit, json_t **ret, bool *ret_more)
{
        _cleanup_json_ json_t *data = NULL;
        int r = registry_list(m->registry, team_id, state, after, limit, &data, ret_more);
        if (r < 0)
                return r;
        /* Sandboxes pomed holds are shown live (their pods), not as last recorded. */
        size_t i;
        json_t *doc;
        json_array_foreach (data, i, doc) {
                Sandbox *s = hashmap_get(m->by_id, strempty(json_get_str(doc, "session_id")));
                json_t *live = s ? sandbox_to_json(s) : NULL;
                if (live)
                        json_array_set_new(data, i, live);
        }
        *ret = TAKE_PTR(data);
        return 0;
}

/* ---- drain ---- */

static bool calls_in_flight(const Manager *m)
{
        for (Sandbox *s = m->sandboxes; s; s = s->next)
                for (size_t i = 0; sandbox_state_is_open(s->state) && i < s->n_twins; i++)
                        if (s->twins[i].pod && pod_pending(s->twins[i].pod) > 0)
                                return true;
        return false;
}

static void end_open(Manager *m, bool provisioning_only)
{
        Sandbox *next;
        for (Sandbox *s = m->sandboxes; s; s = next) {
                next = s->next; /* s may be freed by its own end */
                if (sandbox_state_is_open(s->state) &&
                    (!provisioning_only || s->state == SANDBOX_PROVISIONING))
                        sandbox_end(s, SANDBOX_FAILED, "supervisor_stopped", false, NULL, NULL);
        }
}

static void drain_check(Manager *m)
{
        if (m->n > 0 && (calls_in_flight(m) && now_usec(CLOCK_MONOTONIC) < m->drain_deadline))
                return;
        end_open(m, false);
        if (m->n > 0 || !m->drain_done)
                return; /* teardowns under way: on_gone calls back */
        m->drain_timer = sd_event_source_disable_unref(m->drain_timer);
        void (*done)(void *) = m->drain_done;
        m->drain_done = NULL;
        log_info("drained: no sandbox left");
        /* a fleet node leaves: its membership and any slot still on its lease go now, not
         * when the lease runs out */
        int r = ledger_leave(m->ledger);
        if (r < 0)
                log_warning_errno(r, "cannot leave the fleet cleanly; this node's slots and "
                                     "membership go when its lease expires");
        done(m->drain_userdata);
}

static int on_drain_poll(sd_event_source *es _unused_, uint64_t usec _unused_, void *userdata)
{
        Manager *m = userdata;
        drain_check(m);
        if (m->drain_timer) {
                uint64_t now;
                (void)sd_event_now(m->event, CLOCK_MONOTONIC, &now);
                (void)sd_event_source_set_time(m->drain_timer, now + DRAIN_POLL_USEC);
                (void)sd_event_source_set_enabled(m->drain_timer, SD_EVENT_ONESHOT);
        }
        return 0;
}

void manager_drain(Manager *m, void (*done)(void *userdata), void *userdata)
{
        if (m->draining) {
                /* asked again (a second SIGTERM): do not wait for calls any more */
                m->drain_deadline = 0;
                drain_check(m);
                return;
        }
        m->draining = true;
        podpool_drain(m->pool); /* no pod is handed out again: the idle ones go now */
        m->drain_done = done;
        m->drain_userdata = userdata;
        m->drain_deadline = now_usec(CLOCK_MONOTONIC) + m->cfg->drain_timeout_usec;
        log_info("draining: new sandboxes refused, %zu held, calls in flight get up to %" PRIu64
                 " ms",
                 m->n, m->cfg->drain_timeout_usec / USEC_PER_MSEC);
        end_open(m, true);
        if (sd_event_add_time_relative(m->event, &m->drain_timer, CLOCK_MONOTONIC, DRAIN_POLL_USEC,
                                       USEC_PER_MSEC, on_drain_poll, m) < 0)
                m->drain_deadline = 0; /* cannot wait: end everything now */
        drain_check(m);
}

bool manager_draining(const Manager *m)
{
        return m->draining;
}

/* ---- accessors ---- */

const char *manager_public_url(const Manager *m)
{
        return m->public_url;
}

const Config *manager_config(const Manager *m)
{
        return m->cfg;
}

void manager_set_public_url(Manager *m, const char *url)
{
        free(m->public_url);
        m->public_url = strdup(url);
}

const uint8_t *manager_secret(const Manager *m)
{
        return m->state->secret;
}

Metrics *manager_metrics(Manager *m)
{
        return m->metrics;
}

int manager_write_metrics(Manager *m, FILE *f)
{
        static const SandboxState open[] = {SANDBOX_PROVISIONING, SANDBOX_READY, SANDBOX_RUNNING};
        size_t n;
        Team *const *teams = teams_list(m->teams, &n);
        fputs("# HELP pome_sandboxes Sandboxes open now, by team and state.\n"
              "# TYPE pome_sandboxes gauge\n",
              f);
        for (size_t i = 0; i < n; i++)
                for (size_t k = 0; k < ELEMENTSOF(open); k++) {
                        unsigned c = 0;
                        for (Sandbox *s = m->sandboxes; s; s = s->next)
                                c += s->team == teams[i] && s->state == open[k];
                        fputs("pome_sandboxes{team=\"", f);
                        metrics_write_label(f, teams[i]->id);
                        fprintf(f, "\",state=\"%s\"} %u\n", sandbox_state_to_string(open[k]), c);
                }
        static const struct {
                const char *name, *help;
                bool quota;
        } slots[] = {
                {"pome_slots_used",
                 "Slots taken now (open sandboxes; in a fleet, on every node), by team: "
                 "/v1/usage sessions_used, D-Bus SessionsUsed.",
                 false},
                {"pome_slots_quota",
                 "Slots a team may take (sessions_quota): /v1/usage "
                 "sessions_quota, D-Bus SessionsQuota.",
                 true},
        };
        for (size_t k = 0; k < ELEMENTSOF(slots); k++) {
                fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", slots[k].name, slots[k].help,
                        slots[k].name);
                for (size_t i = 0; i < n; i++) {
                        fprintf(f, "%s{team=\"", slots[k].name);
                        metrics_write_label(f, teams[i]->id);
                        fprintf(f, "\"} %u\n", slots[k].quota ? teams[i]->quota : teams[i]->used);
                }
        }
        if (m->cfg->fleet) {
                fputs("# HELP pome_slots_used_here Slots this fleet node holds (its open "
                      "sandboxes), by team: /v1/usage sessions_used_here.\n"
                      "# TYPE pome_slots_used_here gauge\n",
                      f);
                for (size_t i = 0; i < n; i++) {
                        fputs("pome_slots_used_here{team=\"", f);
                        metrics_write_label(f, teams[i]->id);
                        fputs("\",node=\"", f);
                        metrics_write_label(f, m->cfg->fleet->node);
                        fprintf(f, "\"} %u\n", teams[i]->used_here);
                }
        }
        ledger_write_metrics(m->ledger, f);
        _cleanup_json_ json_t *sd = manager_state_dir_json(m);
        if (sd)
                fprintf(f,
                        "# HELP pome_state_dir_free_bytes Bytes pomed may still write in its "
                        "state directory (runs, tapes, the registry).\n"
                        "# TYPE pome_state_dir_free_bytes gauge\n"
                        "pome_state_dir_free_bytes %" JSON_INTEGER_FORMAT "\n"
                        "# HELP pome_state_dir_full 1 when the state directory is full (less "
                        "than 16 MiB free) or read-only.\n"
                        "# TYPE pome_state_dir_full gauge\n"
                        "pome_state_dir_full %d\n",
                        json_integer_value(json_object_get(sd, "free_bytes")),
                        json_is_true(json_object_get(sd, "full")));
        fprintf(f,
                "# HELP pome_creates_starting Sandboxes starting their pods now (at most "
                "limits.max_starting).\n"
                "# TYPE pome_creates_starting gauge\n"
                "pome_creates_starting %u\n"
                "# HELP pome_creates_queued Creates admitted and waiting for a start, in order (at "
                "most limits.max_queued_creates; beyond it 503 busy).\n"
                "# TYPE pome_creates_queued gauge\n"
                "pome_creates_queued %u\n",
                m->n_starting, m->n_queued);
        fprintf(f,
                "# HELP pome_build_info The pomed version serving, always 1.\n"
                "# TYPE pome_build_info gauge\n"
                "pome_build_info{version=\"%s\"} 1\n",
                POME_VERSION);
        return metrics_write(m->metrics, f);
}
