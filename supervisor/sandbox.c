/* SPDX-License-Identifier: MIT */
#include "sandbox.h"

#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <time.h>

#include "cgroup.h"
#include "common/json-util.h"
#include "common/token.h"
#include "common/util.h"
#include "log.h"
#include "notify.h"
#include "registry.h"
#include "seccomp-policy.h"

#define SEED_MAX (8u << 20)

typedef struct SandboxWaiter {
        SandboxGoneFn fn;
        void *userdata;
        struct SandboxWaiter *next;
} SandboxWaiter;

/* A twin kind as this deployment runs it: its image and its pod limits. */
typedef struct Image {
        const TwinKind *kind;
        char *dir; /* sandbox-images/<twin> */
        char *default_seed;
        PodLimits limits;
} Image;

struct Manager {
        sd_event *event;
        const Config *cfg;
        StateDir *state;
        Team **teams;
        size_t n_teams;
        Sandbox *sandboxes; /* newest first; open and tombstones */
        Sandbox **index;    /* by id: open addressing, linear probing, power-of-two size */
        size_t index_size, n_sandboxes;
        Image *images;
        size_t n_images;
        char *images_dir, *policies_dir, *pod_exec, *runtime_dir;
        CgSetup *cgroups;
        ScpProgram *stage1, *stage2;
        Notify *notify;
        Registry *registry;
        PodEnv env;
        char missing[256];
        char *public_url;
        ManagerObserver observer;
};

static const char *const state_names[_SANDBOX_STATE_MAX] = {
        [SANDBOX_PROVISIONING] = "provisioning", [SANDBOX_READY] = "ready",
        [SANDBOX_RUNNING] = "running",           [SANDBOX_DONE] = "done",
        [SANDBOX_EXPIRED] = "expired",           [SANDBOX_FAILED] = "failed",
        [SANDBOX_STOPPED] = "stopped",
};

const char *sandbox_state_to_string(SandboxState s)
{
        return s < _SANDBOX_STATE_MAX ? state_names[s] : "invalid";
}

int sandbox_state_from_string(const char *s)
{
        for (int i = 0; i < _SANDBOX_STATE_MAX; i++)
                if (streq(s, state_names[i]))
                        return i;
        return -EINVAL;
}

bool sandbox_state_is_open(SandboxState s)
{
        return s == SANDBOX_PROVISIONING || s == SANDBOX_READY || s == SANDBOX_RUNNING;
}

int api_error(ApiError *e, int status, const char *type, json_t *details, const char *fmt, ...)
{
        json_decref(e->details);
        e->status = status;
        e->type = type;
        e->details = details;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->message, sizeof(e->message), fmt, ap);
        va_end(ap);
        return -1;
}

void api_error_done(ApiError *e)
{
        json_decref(e->details);
        e->details = NULL;
}

static int64_t now_sec(void)
{
        return (int64_t)time(NULL);
}

static void format_time(int64_t t, char *buf, size_t len)
{
        twin_format_time(t, buf, len);
}

static void notify_observers_state(Sandbox *s)
{
        Manager *m = s->manager;
        if (m->observer.state_changed)
                m->observer.state_changed(s, m->observer.userdata);
}

static void notify_observers_team(Manager *m, Team *t)
{
        if (m->observer.team_changed)
                m->observer.team_changed(t, m->observer.userdata);
}

/* ---- run directory ---- */

static void write_run_doc(const char *run_dir, const char *id, const json_t *doc)
{
        _cleanup_free_ char *tmp = NULL, *dst = NULL;
        if (asprintf(&tmp, "%s/.sandbox.json.tmp", run_dir) < 0 ||
            asprintf(&dst, "%s/sandbox.json", run_dir) < 0)
                return;
        if (json_dump_file(doc, tmp, JSON_INDENT(2)) < 0 || rename(tmp, dst) < 0)
                log_warning("%s: cannot write %s", id, dst);
}

/* Records a state transition: the registry row and runs/<sid>/sandbox.json. */
static void persist(Sandbox *s)
{
        _cleanup_json_ json_t *j = sandbox_to_json(s);
        if (!j)
                return;
        /* the live pod details mean nothing once written down */
        json_t *pt;
        const char *k;
        json_object_foreach (json_object_get(j, "per_twin"), k, pt)
                json_object_del(pt, "pod");
        Registry *reg = s->manager->registry;
        if (reg && registry_put_sandbox(reg, j, s->created_at, s->ended_at) < 0)
                log_warning("%s: cannot record the sandbox in the registry", s->id);
        if (s->run_dir && !s->discard)
                write_run_doc(s->run_dir, s->id, j);
}

static int rm_rf_at(int dfd, const char *name)
{
        _cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        DIR *d = fdopendir(fd);
        if (!d)
                return negative_errno();
        TAKE_FD(fd);
        struct dirent *de;
        while ((de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (de->d_type == DT_DIR)
                        (void)rm_rf_at(dirfd(d), de->d_name);
                else
                        (void)unlinkat(dirfd(d), de->d_name, 0);
        }
        closedir(d);
        return unlinkat(dfd, name, AT_REMOVEDIR) < 0 ? negative_errno() : 0;
}

/* ---- the id index: every gateway call looks its sandbox up ---- */

static size_t id_hash(const char *id)
{
        size_t h = 14695981039346656037ULL; /* FNV-1a: ids are random already */
        for (; *id; id++)
                h = (h ^ (unsigned char)*id) * 1099511628211ULL;
        return h;
}

static Sandbox **index_slot(Sandbox **index, size_t size, const char *id)
{
        for (size_t i = id_hash(id) & (size - 1);; i = (i + 1) & (size - 1))
                if (!index[i] || streq(index[i]->id, id))
                        return &index[i];
}

static int index_add(Manager *m, Sandbox *s)
{
        /* Keep the load factor at or under 1/2 so probes stay short. */
        if ((m->n_sandboxes + 1) * 2 > m->index_size) {
                size_t size = m->index_size ? m->index_size * 2 : 64;
                Sandbox **n = calloc(size, sizeof(*n));
                if (!n)
                        return -ENOMEM;
                for (size_t i = 0; i < m->index_size; i++)
                        if (m->index[i])
                                *index_slot(n, size, m->index[i]->id) = m->index[i];
                free(m->index);
                m->index = n;
                m->index_size = size;
        }
        *index_slot(m->index, m->index_size, s->id) = s;
        m->n_sandboxes++;
        return 0;
}

static void index_remove(Manager *m, Sandbox *s)
{
        Sandbox **slot = index_slot(m->index, m->index_size, s->id);
        if (*slot != s)
                return;
        *slot = NULL;
        m->n_sandboxes--;
        /* Re-place the rest of the probe run so lookups never stop at the hole. */
        size_t mask = m->index_size - 1;
        for (size_t i = ((size_t)(slot - m->index) + 1) & mask; m->index[i]; i = (i + 1) & mask) {
                Sandbox *x = m->index[i];
                m->index[i] = NULL;
                *index_slot(m->index, m->index_size, x->id) = x;
        }
}

/* Links s at the head of the list (newest first) and into the index. */
static int manager_link(Manager *m, Sandbox *s)
{
        int r = index_add(m, s);
        if (r < 0)
                return r;
        s->next = m->sandboxes;
        if (s->next)
                s->next->prev = s;
        m->sandboxes = s;
        return 0;
}

static void manager_unlink(Manager *m, Sandbox *s)
{
        index_remove(m, s);
        if (s->prev)
                s->prev->next = s->next;
        else if (m->sandboxes == s)
                m->sandboxes = s->next;
        if (s->next)
                s->next->prev = s->prev;
        s->prev = s->next = NULL;
}

/* ---- teardown ---- */

static void sandbox_free(Sandbox *s);

static bool teardown_complete(const Sandbox *s)
{
        return !sandbox_state_is_open(s->state) && s->live_pods == 0;
}

static void run_waiters(Sandbox *s)
{
        while (s->waiters) {
                SandboxWaiter *w = s->waiters;
                s->waiters = w->next;
                if (w->fn)
                        w->fn(s, w->userdata);
                free(w);
        }
}

static int on_retention(sd_event_source *es _unused_, uint64_t usec _unused_, void *userdata)
{
        Sandbox *s = userdata;
        if (!teardown_complete(s) || s->waiters)
                return 0; /* still busy: freed when the retention timer fires again */
        manager_unlink(s->manager, s);
        log_debug("%s: tombstone retired", s->id);
        sandbox_free(s);
        return 0;
}

static void finish_teardown(Sandbox *s)
{
        if (s->discard && s->run_dir) {
                _cleanup_close_ int dfd = open(s->manager->state->runs, O_DIRECTORY | O_CLOEXEC);
                if (dfd >= 0)
                        (void)rm_rf_at(dfd, s->id);
        }
        persist(s);
        for (size_t i = 0; i < s->n_twins; i++)
                s->twins[i].pod = pod_free(s->twins[i].pod);
        if (!s->retention_timer)
                (void)sd_event_add_time_relative(s->manager->event, &s->retention_timer,
                                                 CLOCK_BOOTTIME, s->manager->cfg->retention_usec,
                                                 USEC_PER_SEC, on_retention, s);
        run_waiters(s);
}

static void release_slot(Sandbox *s)
{
        if (s->team->used > 0)
                s->team->used--;
        notify_observers_team(s->manager, s->team);
}

void sandbox_end(Sandbox *s, SandboxState state, const char *reason, bool discard,
                 SandboxGoneFn gone, void *userdata)
{
        if (gone) {
                SandboxWaiter *w = calloc(1, sizeof(*w));
                if (w) {
                        /* FIFO: the create reply goes out before later DELETE replies */
                        *w = (SandboxWaiter){.fn = gone, .userdata = userdata};
                        SandboxWaiter **pp = &s->waiters;
                        while (*pp)
                                pp = &(*pp)->next;
                        *pp = w;
                }
        }
        if (sandbox_state_is_open(s->state)) {
                assert(!sandbox_state_is_open(state));
                s->state = state;
                free(s->reason);
                s->reason = reason ? strdup(reason) : NULL;
                s->ended_at = now_sec();
                s->discard = discard;
                s->lifetime_timer = sd_event_source_disable_unref(s->lifetime_timer);
                s->idle_timer = sd_event_source_disable_unref(s->idle_timer);
                s->start_timer = sd_event_source_disable_unref(s->start_timer);
                release_slot(s);
                log_info("%s: %s (%s)", s->id, sandbox_state_to_string(state), strempty(reason));
                for (size_t i = 0; i < s->n_twins; i++)
                        pod_kill(s->twins[i].pod, NULL);
                notify_observers_state(s);
        }
        if (teardown_complete(s))
                finish_teardown(s);
}

/* ---- pods ---- */

static void fail_start(Sandbox *s, const char *twin, const char *reason);

static void created_reply(Sandbox *s, void *userdata _unused_)
{
        /* teardown after a failed start is complete: now answer the create */
        if (!s->on_created)
                return;
        ApiError e = {};
        const char *twin = NULL, *how = NULL, *detail = NULL;
        for (size_t i = 0; i < s->n_twins; i++)
                if (s->twins[i].exit_how && !streq(s->twins[i].exit_how, "killed")) {
                        twin = s->twins[i].kind->name;
                        how = s->twins[i].exit_how;
                        detail = s->twins[i].exit_detail;
                        break;
                }
        if (!twin && s->reason && startswith(s->reason, "start_timeout:")) {
                twin = s->reason + strlen("start_timeout:");
                how = "start_timeout";
                detail = "did not report READY=1 within the start timeout";
        }
        json_t *details = json_pack("{s:s?, s:s?, s:s?}", "twin", twin, "reason",
                                    how ? how : s->reason, "detail", detail);
        api_error(&e, 503, "internal_error", details,
                  "Sandbox could not start: the %s twin failed (%s%s%s). No pod of it was "
                  "left running and its slot was released.",
                  twin ? twin : "?", how ? how : strempty(s->reason), detail && *detail ? ": " : "",
                  strempty(detail));
        SandboxCreatedFn cb = s->on_created;
        s->on_created = NULL;
        cb(NULL, &e, s->created_userdata);
        api_error_done(&e);
}

static void fail_start(Sandbox *s, const char *twin _unused_, const char *reason)
{
        if (s->state != SANDBOX_PROVISIONING)
                return;
        sandbox_end(s, SANDBOX_FAILED, reason, false, created_reply, NULL);
}

static void on_pod_ready(Pod *p _unused_, void *userdata)
{
        Sandbox *s = userdata;
        if (s->state != SANDBOX_PROVISIONING)
                return;
        for (size_t i = 0; i < s->n_twins; i++)
                if (!s->twins[i].pod || !pod_is_ready(s->twins[i].pod))
                        return;
        /* All-or-nothing: the last pod is up. */
        s->start_timer = sd_event_source_disable_unref(s->start_timer);
        s->state = SANDBOX_READY;
        log_info("%s: ready (%zu twin%s)", s->id, s->n_twins, s->n_twins == 1 ? "" : "s");
        persist(s);
        notify_observers_state(s);
        SandboxCreatedFn cb = s->on_created;
        s->on_created = NULL;
        if (cb)
                cb(s, NULL, s->created_userdata);
}

static void on_pod_exited(Pod *p, const char *how, const char *detail, void *userdata)
{
        Sandbox *s = userdata;
        SandboxTwin *t = NULL;
        for (size_t i = 0; i < s->n_twins; i++)
                if (s->twins[i].pod == p)
                        t = &s->twins[i];
        assert(t);
        free(t->exit_how);
        free(t->exit_detail);
        t->exit_how = strdup(how);
        t->exit_detail = strdup(strempty(detail));
        s->live_pods--;
        if (!streq(how, "killed"))
                log_warning("%s: %s pod (pid %d) %s%s%s", s->id, t->kind->name, (int)pod_pid(p),
                            how, detail && *detail ? ": " : "", strempty(detail));
        if (s->state == SANDBOX_PROVISIONING) {
                fail_start(s, t->kind->name, "start_failed");
                return;
        }
        if (sandbox_state_is_open(s->state)) {
                /* A pod dying later fails the whole sandbox; tapes are kept. */
                char reason[96];
                snprintf(reason, sizeof(reason), "pod_exited:%s:%s", t->kind->name, how);
                sandbox_end(s, SANDBOX_FAILED, reason, false, NULL, NULL);
                return;
        }
        if (teardown_complete(s))
                finish_teardown(s);
}

static int on_start_timeout(sd_event_source *es _unused_, uint64_t usec _unused_, void *userdata)
{
        Sandbox *s = userdata;
        s->start_timer = sd_event_source_disable_unref(s->start_timer);
        for (size_t i = 0; i < s->n_twins; i++)
                if (!s->twins[i].pod || !pod_is_ready(s->twins[i].pod)) {
                        char reason[64];
                        snprintf(reason, sizeof(reason), "start_timeout:%s",
                                 s->twins[i].kind->name);
                        fail_start(s, s->twins[i].kind->name, reason);
                        return 0;
                }
        return 0;
}

static int on_lifetime(sd_event_source *es _unused_, uint64_t usec _unused_, void *userdata)
{
        sandbox_end(userdata, SANDBOX_EXPIRED, "lifetime", false, NULL, NULL);
        return 0;
}

static int on_idle(sd_event_source *es _unused_, uint64_t usec _unused_, void *userdata)
{
        sandbox_end(userdata, SANDBOX_EXPIRED, "idle", false, NULL, NULL);
        return 0;
}

bool sandbox_check_clocks(Sandbox *s)
{
        /* Whichever fires first wins: the timer may be a few ms behind the wall clock. */
        if (sandbox_state_is_open(s->state) && now_sec() >= s->expires_at)
                sandbox_end(s, SANDBOX_EXPIRED, "lifetime", false, NULL, NULL);
        return sandbox_state_is_open(s->state);
}

void sandbox_touch(Sandbox *s)
{
        s->calls++;
        if (s->state == SANDBOX_READY) {
                s->state = SANDBOX_RUNNING;
                persist(s);
                notify_observers_state(s);
        }
        if (s->idle_timer) {
                uint64_t now;
                sd_event_now(s->manager->event, CLOCK_BOOTTIME, &now);
                sd_event_source_set_time(s->idle_timer, now + s->idle_usec);
        }
}

SandboxTwin *sandbox_twin(Sandbox *s, const char *twin)
{
        for (size_t i = 0; i < s->n_twins; i++)
                if (streq(s->twins[i].kind->name, twin))
                        return &s->twins[i];
        return NULL;
}

/* ---- finalize ---- */

typedef struct Finalize {
        Sandbox *sandbox;
        unsigned pending;
        bool failed;
        char failure[160];
        SandboxGoneFn done;
        void *userdata;
} Finalize;

static void on_exported(Pod *p, int err, TwinReply *rp, void *userdata)
{
        Finalize *f = userdata;
        Sandbox *s = f->sandbox;
        const char *twin = pod_kind(p)->name;
        int r = err;
        if (r >= 0 && (rp->status != 200 || !rp->body))
                r = -EPROTO;
        if (r >= 0 && s->run_dir) {
                /* the world as the run ended: what grading reads next to the tape */
                _cleanup_free_ char *path = NULL;
                if (asprintf(&path, "%s/%s.final.json", s->run_dir, twin) < 0)
                        r = -ENOMEM;
                else if (json_dump_file(rp->body, path, JSON_INDENT(2) | JSON_SORT_KEYS) < 0)
                        r = -EIO;
        }
        if (r < 0 && !f->failed) {
                f->failed = true;
                snprintf(f->failure, sizeof(f->failure), "cannot export the %s twin's state: %s",
                         twin, strerror(-r));
        }
        if (--f->pending > 0)
                return;
        if (f->failed)
                log_warning("%s: %s", s->id, f->failure);
        /* Even without a final state the run is kept (tapes, seeds); it is done either
         * way unless something else ended it meanwhile. */
        if (sandbox_state_is_open(s->state))
                sandbox_end(s, SANDBOX_DONE, "finalized", false, f->done, f->userdata);
        else
                sandbox_end(s, s->state, s->reason, false, f->done, f->userdata);
        free(f);
}

int sandbox_finalize(Sandbox *s, SandboxGoneFn done, void *userdata, ApiError *e)
{
        Manager *m = s->manager;
        (void)sandbox_check_clocks(s);
        if (s->state == SANDBOX_PROVISIONING)
                return api_error(e, 409, "conflict", json_pack("{s:s}", "reason", "provisioning"),
                                 "Sandbox %s is still starting; finalize it once it is ready.",
                                 s->id);
        if (!sandbox_state_is_open(s->state))
                return api_error(e, s->state == SANDBOX_EXPIRED ? 410 : 409,
                                 s->state == SANDBOX_EXPIRED ? "session_expired" : "conflict",
                                 json_pack("{s:s, s:s?}", "state",
                                           sandbox_state_to_string(s->state), "reason", s->reason),
                                 "Sandbox %s has already ended (%s); there is nothing to "
                                 "finalize.",
                                 s->id, sandbox_state_to_string(s->state));
        Finalize *f = calloc(1, sizeof(*f));
        if (!f)
                return api_error(e, 500, "internal_error", NULL, "out of memory");
        *f = (Finalize){.sandbox = s, .done = done, .userdata = userdata};
        /* Export every twin first (+1 keeps the count from reaching 0 inside the loop). */
        f->pending = 1;
        for (size_t i = 0; i < s->n_twins; i++) {
                Pod *p = s->twins[i].pod;
                if (!p || pod_export(p, m->cfg->request_timeout_usec, on_exported, f) < 0) {
                        f->failed = true;
                        snprintf(f->failure, sizeof(f->failure),
                                 "the %s twin cannot export its state", s->twins[i].kind->name);
                        continue;
                }
                f->pending++;
        }
        /* drop the +1: finish now when no export is outstanding (callbacks never run
         * inside pod_export, so the count cannot reach 0 earlier) */
        if (--f->pending == 0) {
                if (f->failed)
                        log_warning("%s: %s", s->id, f->failure);
                sandbox_end(s, SANDBOX_DONE, "finalized", false, done, userdata);
                free(f);
        }
        return 0;
}

/* ---- JSON ---- */

static json_t *per_twin_json(const Sandbox *s)
{
        json_t *o = json_object();
        for (size_t i = 0; o && i < s->n_twins; i++) {
                const char *name = s->twins[i].kind->name;
                char rest[512], mcp[560], openapi[560];
                snprintf(rest, sizeof(rest), "%s/%s/s/%s", s->manager->public_url, name, s->id);
                snprintf(mcp, sizeof(mcp), "%s/mcp", rest);
                snprintf(openapi, sizeof(openapi), "%s/openapi.json", rest);
                json_t *t = json_pack("{s:s, s:s, s:s, s:s}", "rest_url", rest, "mcp_url", mcp,
                                      "openapi_url", openapi, "seed", s->twins[i].seed_name);
                /* What an operator needs to find the pod on the host. */
                const SandboxTwin *st = &s->twins[i];
                const char *pod_state = st->exit_how                       ? st->exit_how
                                        : st->pod && pod_is_ready(st->pod) ? "ready"
                                        : st->pod                          ? "starting"
                                                                           : "none";
                json_t *pod = json_pack("{s:s}", "state", pod_state);
                if (pod && st->pod && !pod_has_exited(st->pod)) {
                        json_object_set_new(pod, "pid", json_integer(pod_pid(st->pod)));
                        const char *mem = pod_cgroup_path(st->pod, "memory");
                        if (mem)
                                json_object_set_new(pod, "cgroup", json_string(mem));
                }
                if (pod && st->exit_detail && *st->exit_detail)
                        json_object_set_new(pod, "detail", json_string(st->exit_detail));
                if (t && pod)
                        json_object_set_new(t, "pod", pod);
                json_object_set_new(o, name, t);
        }
        return o;
}

json_t *sandbox_to_json(const Sandbox *s)
{
        char created[32], expires[32], ended[32];
        format_time(s->created_at, created, sizeof(created));
        format_time(s->expires_at, expires, sizeof(expires));
        format_time(s->ended_at, ended, sizeof(ended));
        json_t *twins = json_array();
        for (size_t i = 0; twins && i < s->n_twins; i++)
                json_array_append_new(twins, json_string(s->twins[i].kind->name));
        return json_pack("{s:s, s:s, s:o, s:s, s:o, s:o, s:s, s:s, s:o, s:I, s:I, s:o}",
                         "session_id", s->id, "state", sandbox_state_to_string(s->state), "reason",
                         json_string_or_null(s->reason), "team_id", s->team->id, "task",
                         json_string_or_null(s->task), "twins", twins, "created_at", created,
                         "expires_at", expires, "ended_at",
                         s->ended_at ? json_string(ended) : json_null(), "idle_timeout_seconds",
                         (json_int_t)(s->idle_usec / USEC_PER_SEC), "calls", (json_int_t)s->calls,
                         "per_twin", per_twin_json(s));
}

json_t *sandbox_credentials_json(const Sandbox *s)
{
        const Manager *m = s->manager;
        const uint8_t *key = m->state->secret;
        _cleanup_json_ json_t *j = sandbox_to_json(s);
        _cleanup_free_ char *session = NULL, *agent = NULL;
        if (!j ||
            token_mint_session(key, TOKEN_SECRET_LEN, s->id, s->team->id, s->expires_at, NULL, NULL,
                               &session) < 0 ||
            token_mint_session(key, TOKEN_SECRET_LEN, s->id, s->team->id, s->expires_at,
                               "pome-agent", NULL, &agent) < 0)
                return NULL;
        json_t *creds = json_object();
        for (size_t i = 0; creds && i < s->n_twins; i++) {
                const char *name = s->twins[i].kind->name;
                _cleanup_free_ char *t = NULL;
                if (token_mint_provider(key, TOKEN_SECRET_LEN, name, s->id, s->expires_at, &t) < 0)
                        continue; /* a kind without a provider credential */
                json_t *c = streq(name, "stripe") ? json_pack("{s:s, s:s}", "api_key", t,
                                                              "api_base", m->public_url)
                                                  : json_pack("{s:s}", "token", t);
                json_object_set_new(creds, name, c);
        }
        if (!creds || json_object_set_new(j, "session_token", json_string(session)) < 0 ||
            json_object_set_new(j, "agent_token", json_string(agent)) < 0 ||
            json_object_set_new(j, "provider_credentials", creds) < 0)
                return NULL;
        return TAKE_PTR(j);
}

/* ---- create ---- */

static const Image *find_image(const Manager *m, const char *twin)
{
        for (size_t i = 0; i < m->n_images; i++)
                if (streq(m->images[i].kind->name, twin))
                        return &m->images[i];
        return NULL;
}

static bool valid_name(const char *s)
{
        return s && *s && strlen(s) <= 64 &&
               strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == strlen(s);
}

static int read_seed(const Image *img, const char *name, char **ret, size_t *ret_len)
{
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, "%s/seeds/%s.json", img->dir, name) < 0)
                return -ENOMEM;
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        struct stat st;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -ENOENT;
        if ((size_t)st.st_size > SEED_MAX)
                return -EFBIG;
        _cleanup_free_ char *buf = malloc((size_t)st.st_size + 1);
        if (!buf)
                return -ENOMEM;
        size_t n = 0;
        while (n < (size_t)st.st_size) {
                ssize_t k = read(fd, buf + n, (size_t)st.st_size - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return k < 0 ? negative_errno() : -EIO;
                n += (size_t)k;
        }
        buf[n] = 0;
        *ret = TAKE_PTR(buf);
        *ret_len = n;
        return 0;
}

static int write_file(const char *dir, const char *name, const char *data, size_t n)
{
        _cleanup_free_ char *p = NULL;
        if (asprintf(&p, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        _cleanup_close_ int fd =
                open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return negative_errno();
        if (write(fd, data, n) != (ssize_t)n)
                return -EIO;
        return 0;
}

static json_t *available_seeds(const Image *img)
{
        json_t *a = json_array();
        _cleanup_free_ char *p = NULL;
        if (!a || asprintf(&p, "%s/seeds", img->dir) < 0)
                return a;
        DIR *d = opendir(p);
        if (!d)
                return a;
        struct dirent *de;
        while ((de = readdir(d))) {
                size_t l = strlen(de->d_name);
                if (l > 5 && streq(de->d_name + l - 5, ".json"))
                        json_array_append_new(a, json_stringn(de->d_name, l - 5));
        }
        closedir(d);
        return a;
}

static json_t *twin_names_json(const Manager *m)
{
        json_t *a = json_array();
        for (size_t i = 0; a && i < m->n_images; i++)
                json_array_append_new(a, json_string(m->images[i].kind->name));
        return a;
}

static void sandbox_free(Sandbox *s)
{
        if (!s)
                return;
        for (size_t i = 0; i < s->n_twins; i++) {
                pod_free(s->twins[i].pod);
                tape_free(s->twins[i].tape);
                free(s->twins[i].seed_name);
                free(s->twins[i].exit_how);
                free(s->twins[i].exit_detail);
        }
        sd_event_source_disable_unref(s->lifetime_timer);
        sd_event_source_disable_unref(s->idle_timer);
        sd_event_source_disable_unref(s->start_timer);
        sd_event_source_disable_unref(s->retention_timer);
        while (s->waiters) {
                SandboxWaiter *w = s->waiters;
                s->waiters = w->next;
                free(w);
        }
        free(s->task);
        free(s->reason);
        free(s->run_dir);
        free(s);
}

static void seeds_free(char *(*seeds)[SANDBOX_TWINS_MAX])
{
        for (size_t i = 0; i < SANDBOX_TWINS_MAX; i++)
                free((*seeds)[i]);
}

int manager_create(Manager *m, Team *t, const SandboxRequest *rq, SandboxCreatedFn cb,
                   void *userdata, ApiError *e)
{
        /* Depth before width: more than three twins is refused whatever the quota. */
        if (rq->n_twins == 0)
                return api_error(
                        e, 422, "validation_failed",
                        json_pack("{s:s, s:o}", "field", "twins", "available", twin_names_json(m)),
                        "Name at least one twin (\"twins\": [\"github\"]).");
        if (rq->n_twins > SANDBOX_TWINS_MAX)
                return api_error(e, 422, "validation_failed",
                                 json_pack("{s:s, s:i, s:i}", "field", "twins", "requested",
                                           (int)rq->n_twins, "max", SANDBOX_TWINS_MAX),
                                 "A sandbox holds at most %d twins; %zu were requested. This "
                                 "limit is fixed (no plan raises it).",
                                 SANDBOX_TWINS_MAX, rq->n_twins);
        const Image *imgs[SANDBOX_TWINS_MAX];
        for (size_t i = 0; i < rq->n_twins; i++) {
                imgs[i] = find_image(m, rq->twins[i]);
                if (!imgs[i])
                        return api_error(e, 422, "validation_failed",
                                         json_pack("{s:s, s:s, s:o}", "field", "twins", "twin",
                                                   rq->twins[i], "available", twin_names_json(m)),
                                         "Unknown twin '%s'.", rq->twins[i]);
                for (size_t j = 0; j < i; j++)
                        if (imgs[j] == imgs[i])
                                return api_error(e, 422, "validation_failed",
                                                 json_pack("{s:s, s:s}", "field", "twins", "twin",
                                                           rq->twins[i]),
                                                 "Twin '%s' is listed twice; each twin appears "
                                                 "once per sandbox.",
                                                 rq->twins[i]);
        }
        _cleanup_(seeds_free) char *seeds[SANDBOX_TWINS_MAX] = {};
        size_t seed_lens[SANDBOX_TWINS_MAX] = {};
        for (size_t i = 0; i < rq->n_twins; i++) {
                const char *name = rq->seeds[i] ? rq->seeds[i] : imgs[i]->default_seed;
                int r = valid_name(name) ? read_seed(imgs[i], name, &seeds[i], &seed_lens[i])
                                         : -ENOENT;
                if (r == -ENOENT)
                        return api_error(e, 422, "validation_failed",
                                         json_pack("{s:s, s:s, s:s, s:o}", "field", "seeds", "twin",
                                                   rq->twins[i], "seed", name, "available",
                                                   available_seeds(imgs[i])),
                                         "Unknown seed '%s' for twin %s.", name, rq->twins[i]);
                if (r < 0)
                        return api_error(e, 500, "internal_error", NULL,
                                         "Cannot read seed '%s' of twin %s: %s", name, rq->twins[i],
                                         strerror(-r));
        }
        if (rq->task && (strlen(rq->task) > 200 || !*rq->task))
                return api_error(e, 422, "validation_failed", json_pack("{s:s}", "field", "task"),
                                 "task must be 1-200 characters.");
        /* Width: reserve the slot before anything is spawned. */
        if (t->used >= t->quota)
                return api_error(e, 402, "quota_exceeded",
                                 json_pack("{s:i, s:i, s:s}", "sessions_used", (int)t->used,
                                           "sessions_quota", (int)t->quota, "team_id", t->id),
                                 "Team %s has %u of %u sandboxes open. Stop or finalize one, "
                                 "or raise sessions_quota.",
                                 t->id, t->used, t->quota);

        Sandbox *s = calloc(1, sizeof(*s));
        if (!s)
                return api_error(e, 500, "internal_error", NULL, "out of memory");
        _cleanup_free_ char *id = NULL, *dt = NULL;
        if (token_random_id("ses_", 16, &id) < 0 || token_random_id("dsc_", 24, &dt) < 0) {
                free(s);
                return api_error(e, 500, "internal_error", NULL, "no randomness");
        }
        snprintf(s->id, sizeof(s->id), "%s", id);
        snprintf(s->discard_token, sizeof(s->discard_token), "%s", dt);
        s->manager = m;
        s->team = t;
        s->state = SANDBOX_PROVISIONING;
        s->task = rq->task ? strdup(rq->task) : NULL;
        struct timespec wall;
        clock_gettime(CLOCK_REALTIME, &wall);
        s->created_at = (int64_t)wall.tv_sec;
        uint64_t ttl = rq->ttl_usec && rq->ttl_usec < m->cfg->lifetime_usec ? rq->ttl_usec
                                                                            : m->cfg->lifetime_usec;
        s->expires_at = s->created_at + (int64_t)((ttl + USEC_PER_SEC - 1) / USEC_PER_SEC);
        /* The clock fires at expires_at, the second every token carries as exp, so a
         * token never outlives its sandbox nor dies before it. */
        ttl = (uint64_t)s->expires_at * USEC_PER_SEC -
              ((uint64_t)wall.tv_sec * USEC_PER_SEC + (uint64_t)wall.tv_nsec / 1000);
        s->idle_usec =
                rq->idle_usec < 0 ? m->cfg->idle_timeout_usec
                : m->cfg->idle_timeout_usec && (uint64_t)rq->idle_usec > m->cfg->idle_timeout_usec
                        ? m->cfg->idle_timeout_usec
                        : (uint64_t)rq->idle_usec;
        s->on_created = cb;
        s->created_userdata = userdata;
        s->n_twins = rq->n_twins;
        for (size_t i = 0; i < rq->n_twins; i++) {
                s->twins[i].kind = imgs[i]->kind;
                s->twins[i].seed_name = strdup(rq->seeds[i] ? rq->seeds[i] : imgs[i]->default_seed);
        }
        if (manager_link(m, s) < 0) {
                sandbox_free(s);
                return api_error(e, 500, "internal_error", NULL, "out of memory");
        }
        t->used++;
        notify_observers_team(m, t);

        int r = statedir_run_dir(m->state, s->id, true, &s->run_dir);
        if (r < 0)
                log_warning_errno(r, "%s: cannot create the run directory", s->id);
        for (size_t i = 0; i < s->n_twins; i++) {
                char name[64];
                _cleanup_free_ char *tp = NULL;
                const char *twin = s->twins[i].kind->name;
                if (s->run_dir) {
                        snprintf(name, sizeof(name), "%s.seed.json", twin);
                        (void)write_file(s->run_dir, name, seeds[i], seed_lens[i]);
                        if (asprintf(&tp, "%s/%s.tape.jsonl", s->run_dir, twin) < 0)
                                tp = NULL;
                }
                /* Without a run directory the tape still works, in memory. */
                r = tape_open(tp, &s->twins[i].tape);
                if (r < 0 && tp) {
                        log_warning_errno(r, "%s: cannot open %s, keeping the tape in memory",
                                          s->id, tp);
                        r = tape_open(NULL, &s->twins[i].tape);
                }
                if (r < 0) {
                        s->on_created = NULL;
                        sandbox_end(s, SANDBOX_FAILED, "start_failed", false, NULL, NULL);
                        return api_error(e, 500, "internal_error", NULL, "cannot open a tape");
                }
        }
        persist(s);
        notify_observers_state(s);
        log_info("%s: provisioning for team %s (%zu twin%s)", s->id, t->id, s->n_twins,
                 s->n_twins == 1 ? "" : "s");

        r = sd_event_add_time_relative(m->event, &s->start_timer, CLOCK_BOOTTIME,
                                       m->cfg->start_timeout_usec, USEC_PER_MSEC, on_start_timeout,
                                       s);
        if (r >= 0)
                r = sd_event_add_time_relative(m->event, &s->lifetime_timer, CLOCK_BOOTTIME, ttl,
                                               USEC_PER_MSEC * 10, on_lifetime, s);
        if (r >= 0 && s->idle_usec)
                r = sd_event_add_time_relative(m->event, &s->idle_timer, CLOCK_BOOTTIME,
                                               s->idle_usec, USEC_PER_MSEC * 10, on_idle, s);
        if (r < 0) {
                s->on_created = NULL;
                sandbox_end(s, SANDBOX_FAILED, "start_failed", false, NULL, NULL);
                return api_error(e, 500, "internal_error", NULL, "cannot arm the clocks: %s",
                                 strerror(-r));
        }
        static const PodCallbacks pcb = {.ready = on_pod_ready, .exited = on_pod_exited};
        for (size_t i = 0; i < s->n_twins; i++) {
                char err[256] = "";
                r = pod_start(&m->env, s->id, imgs[i]->kind, seeds[i], seed_lens[i],
                              &imgs[i]->limits, &pcb, s, &s->twins[i].pod, err, sizeof(err));
                if (r < 0) {
                        log_error("%s: %s", s->id, err);
                        s->twins[i].exit_how = strdup("setup_failed");
                        s->twins[i].exit_detail = strdup(err);
                        /* Answer through the same path as a pod that dies while starting. */
                        fail_start(s, imgs[i]->kind->name, "start_failed");
                        return 0;
                }
                s->live_pods++;
        }
        return 0;
}

Sandbox *manager_find(Manager *m, const char *id)
{
        return m->index_size ? *index_slot(m->index, m->index_size, id) : NULL;
}

Sandbox *manager_sandboxes(Manager *m)
{
        return m->sandboxes;
}

/* ---- teams ---- */

static Team *team_free(Team *t)
{
        if (!t)
                return NULL;
        free(t->id);
        for (char **k = t->key_hashes; k && *k; k++)
                free(*k);
        free(t->key_hashes);
        free(t->plan_tier);
        free(t);
        return NULL;
}

/* Sets a team's quota, plan and keys from its configuration entry (used stays). */
static int team_apply(Manager *m, Team *t, const TeamConfig *tc)
{
        size_t nk = 0;
        while (tc->key_hashes[nk])
                nk++;
        char **keys = calloc(nk + 2, sizeof(char *));
        char *tier = strdup(tc->plan_tier);
        if (!keys || !tier) {
                free(keys);
                free(tier);
                return -ENOMEM;
        }
        for (size_t k = 0; k < nk; k++)
                keys[k] = strdup(tc->key_hashes[k]);
        if (streq(tc->id, "local") && m->state->api_key) {
                /* The generated key in the state dir belongs to team `local`. */
                char hex[65];
                token_sha256_hex(m->state->api_key, hex);
                keys[nk] = strdup(hex);
        }
        for (char **k = t->key_hashes; k && *k; k++)
                free(*k);
        free(t->key_hashes);
        free(t->plan_tier);
        t->key_hashes = keys;
        t->plan_tier = tier;
        t->quota = tc->sessions_quota;
        t->removed = false;
        for (size_t k = 0; k < nk; k++)
                if (!keys[k])
                        return -ENOMEM;
        return 0;
}

static int teams_from_config(Manager *m)
{
        m->teams = calloc(m->cfg->n_teams, sizeof(Team *));
        if (!m->teams)
                return -ENOMEM;
        for (size_t i = 0; i < m->cfg->n_teams; i++) {
                Team *t = calloc(1, sizeof(*t));
                if (!t)
                        return -ENOMEM;
                m->teams[m->n_teams++] = t;
                t->id = strdup(m->cfg->teams[i].id);
                if (!t->id || team_apply(m, t, &m->cfg->teams[i]) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int manager_reload_teams(Manager *m, const Config *cfg)
{
        /* Teams that went away keep their object (open sandboxes point at it) but lose
         * their keys; nothing open is touched. */
        for (size_t i = 0; i < m->n_teams; i++) {
                Team *t = m->teams[i];
                if (config_find_team(cfg, t->id) || t->removed)
                        continue;
                t->removed = true;
                for (char **k = t->key_hashes; k && *k; k++)
                        free(*k);
                t->key_hashes[0] = NULL;
                log_info("team %s removed from the configuration (%u sandbox%s still open)", t->id,
                         t->used, t->used == 1 ? "" : "es");
                notify_observers_team(m, t);
        }
        for (size_t i = 0; i < cfg->n_teams; i++) {
                const TeamConfig *tc = &cfg->teams[i];
                Team *t = manager_team_by_id(m, tc->id);
                if (!t) {
                        Team **n = realloc(m->teams, (m->n_teams + 1) * sizeof(Team *));
                        if (!n)
                                return -ENOMEM;
                        m->teams = n;
                        t = calloc(1, sizeof(*t));
                        if (!t || !(t->id = strdup(tc->id))) {
                                free(t);
                                return -ENOMEM;
                        }
                        m->teams[m->n_teams++] = t;
                        log_info("team %s added", t->id);
                }
                unsigned old_quota = t->quota;
                int r = team_apply(m, t, tc);
                if (r < 0)
                        return r;
                if (m->registry)
                        (void)registry_put_team(m->registry, t->id, t->quota, t->plan_tier,
                                                t->key_hashes);
                if (old_quota != t->quota)
                        log_info("team %s: sessions_quota %u → %u", t->id, old_quota, t->quota);
                notify_observers_team(m, t);
        }
        return 0;
}

Team *manager_team_by_key(Manager *m, const char *api_key)
{
        if (!api_key || !startswith(api_key, "pome_") || strlen(api_key) > 200)
                return NULL;
        char hex[65];
        token_sha256_hex(api_key, hex);
        Team *found = NULL;
        /* Compare against every hash, without an early exit. */
        for (size_t i = 0; i < m->n_teams; i++)
                for (char **k = m->teams[i]->key_hashes; *k; k++)
                        if (token_equal(hex, *k) && !m->teams[i]->removed)
                                found = m->teams[i];
        return found;
}

Team *manager_team_by_id(Manager *m, const char *id)
{
        for (size_t i = 0; i < m->n_teams; i++)
                if (streq(m->teams[i]->id, id))
                        return m->teams[i];
        return NULL;
}

Team *const *manager_teams(Manager *m, size_t *ret_n)
{
        *ret_n = m->n_teams;
        return m->teams;
}

void manager_set_quota(Manager *m, Team *t, unsigned quota)
{
        if (t->quota == quota)
                return;
        log_info("team %s: sessions_quota %u → %u", t->id, t->quota, quota);
        t->quota = quota;
        notify_observers_team(m, t);
}

/* ---- set-up ---- */

static int64_t parse_time(const char *s)
{
        struct tm tm = {};
        if (!s || !strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm))
                return 0;
        return (int64_t)timegm(&tm);
}

/* An ended sandbox from the registry, kept in memory so calls to it answer 410
 * for the rest of its retention period — across restarts too. */
static void restore_tombstone(Manager *m, const json_t *doc)
{
        const char *id = json_get_str(doc, "session_id");
        Team *t = manager_team_by_id(m, strempty(json_get_str(doc, "team_id")));
        int state = sandbox_state_from_string(strempty(json_get_str(doc, "state")));
        if (!id || strlen(id) >= sizeof(((Sandbox *)0)->id) || !t || state < 0 ||
            sandbox_state_is_open(state) || manager_find(m, id))
                return;
        Sandbox *s = calloc(1, sizeof(*s));
        if (!s)
                return;
        snprintf(s->id, sizeof(s->id), "%s", id);
        s->manager = m;
        s->team = t;
        s->state = state;
        const char *reason = json_get_str(doc, "reason"), *task = json_get_str(doc, "task");
        s->reason = reason ? strdup(reason) : NULL;
        s->task = task ? strdup(task) : NULL;
        s->created_at = parse_time(json_get_str(doc, "created_at"));
        s->expires_at = parse_time(json_get_str(doc, "expires_at"));
        s->ended_at = parse_time(json_get_str(doc, "ended_at"));
        size_t i;
        json_t *name;
        json_array_foreach (json_object_get(doc, "twins"), i, name) {
                const TwinKind *k = twin_kind_find(strempty(json_string_value(name)));
                if (!k || s->n_twins >= SANDBOX_TWINS_MAX)
                        continue;
                SandboxTwin *st = &s->twins[s->n_twins++];
                st->kind = k;
                const char *seed = json_get_str(
                        json_object_get(json_object_get(doc, "per_twin"), k->name), "seed");
                st->seed_name = strdup(seed ? seed : "default");
        }
        uint64_t left_usec = 0;
        int64_t until = s->ended_at + (int64_t)(m->cfg->retention_usec / USEC_PER_SEC);
        if (until > now_sec())
                left_usec = (uint64_t)(until - now_sec()) * USEC_PER_SEC;
        (void)sd_event_add_time_relative(m->event, &s->retention_timer, CLOCK_BOOTTIME, left_usec,
                                         USEC_PER_SEC, on_retention, s);
        if (manager_link(m, s) < 0)
                sandbox_free(s);
}

static int open_registry(Manager *m, char *err, size_t errlen)
{
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, "%s/pome.db", m->state->path) < 0)
                return -ENOMEM;
        int r = registry_open(path, &m->registry, err, errlen);
        if (r < 0)
                return r;
        for (size_t i = 0; i < m->n_teams; i++)
                if (registry_put_team(m->registry, m->teams[i]->id, m->teams[i]->quota,
                                      m->teams[i]->plan_tier, m->teams[i]->key_hashes) < 0)
                        log_warning("cannot record team %s in the registry", m->teams[i]->id);
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
                _cleanup_free_ char *dir = NULL;
                if (statedir_run_dir(m->state, id, false, &dir) >= 0 && access(dir, F_OK) == 0)
                        write_run_doc(dir, id, doc);
        }
        _cleanup_json_ json_t *recent = NULL;
        int64_t since = now_sec() - (int64_t)(m->cfg->retention_usec / USEC_PER_SEC);
        if (registry_ended_since(m->registry, since, &recent) >= 0)
                json_array_foreach (recent, i, doc)
                        restore_tombstone(m, doc);
        return 0;
}

Registry *manager_registry(Manager *m)
{
        return m->registry;
}

static void on_notify(pid_t pid, const char *msg, size_t len _unused_, void *userdata)
{
        Manager *m = userdata;
        for (Sandbox *s = m->sandboxes; s; s = s->next)
                for (size_t i = 0; i < s->n_twins; i++)
                        if (s->twins[i].pod && pod_pid(s->twins[i].pod) == pid &&
                            !pod_has_exited(s->twins[i].pod)) {
                                pod_notify(s->twins[i].pod, msg);
                                return;
                        }
        log_debug("notify message from unknown pid %d ignored", (int)pid);
}

static char *exe_dir(void)
{
        char buf[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
        if (n <= 0)
                return NULL;
        buf[n] = 0;
        char *slash = strrchr(buf, '/');
        if (slash)
                *slash = 0;
        return strdup(buf);
}

/* First existing path of the candidates (NULL entries skipped); a new string or NULL. */
static char *first_existing(const char *const *cands, size_t n, int mode)
{
        for (size_t i = 0; i < n; i++)
                if (cands[i] && access(cands[i], mode) == 0)
                        return realpath(cands[i], NULL);
        return NULL;
}

static int resolve_paths(Manager *m, char *err, size_t errlen)
{
        _cleanup_free_ char *ed = exe_dir();
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL, *d = NULL, *f = NULL;
        if (ed &&
            (asprintf(&a, "%s/pome-pod", ed) < 0 || asprintf(&b, "%s/../pods/pome-pod", ed) < 0 ||
             asprintf(&c, "%s/../libexec/pome/pome-pod", ed) < 0))
                return -ENOMEM;
        const char *pods[] = {
                m->cfg->pod_exec, getenv("POME_POD_EXEC"), a, b, c, "/usr/libexec/pome/pome-pod"};
        if (m->cfg->pod_exec || getenv("POME_POD_EXEC")) {
                const char *want = m->cfg->pod_exec ? m->cfg->pod_exec : getenv("POME_POD_EXEC");
                m->pod_exec = first_existing(&want, 1, X_OK);
        } else
                m->pod_exec = first_existing(pods, ELEMENTSOF(pods), X_OK);
        if (!m->pod_exec) {
                snprintf(err, errlen,
                         "cannot find the pome-pod program (looked next to pomed, in "
                         "../pods and /usr/libexec/pome); set pod_exec in pomed.conf or "
                         "POME_POD_EXEC");
                return -ENOENT;
        }
        if (ed && (asprintf(&d, "%s/../share/pome/sandbox-images", ed) < 0 ||
                   asprintf(&f, "%s/../share/pome/policies", ed) < 0))
                return -ENOMEM;
        const char *imgs[] = {m->cfg->images_dir, getenv("POME_IMAGES_DIR"), d,
                              POME_SOURCE_DIR "/sandbox-images", "/usr/share/pome/sandbox-images"};
        const char *pols[] = {m->cfg->policies_dir, getenv("POME_POLICIES_DIR"), f,
                              POME_SOURCE_DIR "/policies", "/usr/share/pome/policies"};
        m->images_dir = first_existing(imgs, ELEMENTSOF(imgs), R_OK);
        m->policies_dir = first_existing(pols, ELEMENTSOF(pols), R_OK);
        if (!m->images_dir || !m->policies_dir) {
                snprintf(err, errlen, "cannot find the %s directory; set %s in pomed.conf",
                         !m->images_dir ? "sandbox-images" : "policies",
                         !m->images_dir ? "images_dir" : "policies_dir");
                return -ENOENT;
        }
        return 0;
}

static int load_images(Manager *m, char *err, size_t errlen)
{
        const char *const *names = twin_kind_names();
        size_t n = 0;
        while (names[n])
                n++;
        m->images = calloc(n, sizeof(Image));
        if (!m->images)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *dir = NULL, *path = NULL;
                if (asprintf(&dir, "%s/%s", m->images_dir, names[i]) < 0 ||
                    asprintf(&path, "%s/image.json", dir) < 0)
                        return -ENOMEM;
                if (access(path, R_OK) < 0)
                        continue; /* a kind without an image is not offered */
                json_error_t je;
                _cleanup_json_ json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
                if (!json_is_object(j)) {
                        snprintf(err, errlen, "%s:%d: %s", path, je.line, je.text);
                        return -EINVAL;
                }
                const char *limits = json_get_str(j, "limits");
                const char *seed = json_get_str(j, "default_seed");
                if (!valid_name(limits) || !valid_name(seed ? seed : "default")) {
                        snprintf(err, errlen,
                                 "%s: 'limits' must name a profile in "
                                 "policies/limits/",
                                 path);
                        return -EINVAL;
                }
                Image *img = &m->images[m->n_images];
                img->kind = twin_kind_find(names[i]);
                img->dir = TAKE_PTR(dir);
                img->default_seed = strdup(seed ? seed : "default");
                if (!img->default_seed)
                        return -ENOMEM;
                m->n_images++;
                _cleanup_free_ char *lp = NULL;
                if (asprintf(&lp, "%s/limits/%s.json", m->policies_dir, limits) < 0)
                        return -ENOMEM;
                char e2[256];
                int r = pod_limits_load(lp, &img->limits, e2, sizeof(e2));
                if (r < 0) {
                        snprintf(err, errlen, "%s", e2);
                        return r;
                }
                /* pomed.conf's pod: section overrides every profile (tests, small hosts) */
                if (m->cfg->pod_memory_max)
                        img->limits.memory_max = m->cfg->pod_memory_max;
                if (m->cfg->pod_pids_max)
                        img->limits.pids_max = m->cfg->pod_pids_max;
                if (m->cfg->pod_cpu_weight)
                        img->limits.cpu_weight = m->cfg->pod_cpu_weight;
        }
        if (m->n_images == 0) {
                snprintf(err, errlen, "%s: no twin images found", m->images_dir);
                return -ENOENT;
        }
        return 0;
}

static void add_missing(Manager *m, const char *layer)
{
        size_t l = strlen(m->missing);
        snprintf(m->missing + l, sizeof(m->missing) - l, "%s%s", l ? ", " : "", layer);
}

static int make_runtime_dir(Manager *m)
{
        if (m->cfg->runtime_dir) {
                if (mkdir(m->cfg->runtime_dir, 0755) < 0 && errno != EEXIST)
                        return negative_errno();
                m->runtime_dir = strdup(m->cfg->runtime_dir);
                return m->runtime_dir ? 0 : -ENOMEM;
        }
        /* A private directory per pomed: several can run side by side (tests, CI). */
        const char *bases[] = {getenv("RUNTIME_DIRECTORY"), "/run", getenv("TMPDIR"), "/tmp"};
        for (size_t i = 0; i < ELEMENTSOF(bases); i++) {
                if (!bases[i] || access(bases[i], W_OK) < 0)
                        continue;
                char *p;
                if (asprintf(&p, "%s/pome.XXXXXX", bases[i]) < 0)
                        return -ENOMEM;
                if (mkdtemp(p) && chmod(p, 0755) == 0) {
                        m->runtime_dir = p;
                        return 0;
                }
                free(p);
        }
        return -EACCES;
}

int manager_new(sd_event *e, const Config *cfg, StateDir *state, Manager **ret, char *err,
                size_t errlen)
{
        _cleanup_free_ char *p1 = NULL, *p2 = NULL;
        Manager *m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->event = sd_event_ref(e);
        m->cfg = cfg;
        m->state = state;
        int r = teams_from_config(m);
        if (r >= 0)
                r = resolve_paths(m, err, errlen);
        if (r >= 0)
                r = load_images(m, err, errlen);
        if (r < 0)
                goto fail;

        /* seccomp: policy files are ours; an error in them is fatal, not a missing layer */
        if (asprintf(&p1, "%s/pod-stage1.policy", m->policies_dir) < 0 ||
            asprintf(&p2, "%s/pod-stage2.policy", m->policies_dir) < 0) {
                r = -ENOMEM;
                goto fail;
        }
        r = scp_compile(p1, &m->stage1, err, errlen);
        if (r >= 0)
                r = scp_compile(p2, &m->stage2, err, errlen);
        if (r < 0)
                goto fail;

        bool root = geteuid() == 0;
        m->env.namespaces = root;
        if (root) {
                struct passwd *pw = getpwnam(cfg->pod_user);
                if (!pw) {
                        snprintf(err, errlen, "pod_user '%s' does not exist", cfg->pod_user);
                        r = -ENOENT;
                        goto fail;
                }
                if (pw->pw_uid == 0) {
                        snprintf(err, errlen, "pod_user must not be root");
                        r = -EINVAL;
                        goto fail;
                }
                m->env.uid = pw->pw_uid;
                m->env.gid = pw->pw_gid;
        } else {
                m->env.uid = geteuid();
                m->env.gid = getegid();
                add_missing(m, "namespaces and unprivileged pod user (pomed is not root)");
        }

        /* One cgroup tree per state directory: two pomeds side by side (tests, CI) never
         * touch each other's pods, and a restarted pomed finds its predecessor's. */
        char warn[256] = "", hex[65], tree[32];
        token_sha256_hex(state->path, hex);
        snprintf(tree, sizeof(tree), "pome-%.8s", hex);
        r = cg_setup(tree, &m->cgroups, warn, sizeof(warn));
        if (r < 0) {
                log_warning("cgroups unavailable, pods run without memory/pids limits: %s",
                            warn[0] ? warn : strerror(-r));
                add_missing(m, "cgroups");
        } else {
                if (warn[0])
                        log_warning("%s", warn);
                char **left = NULL;
                r = cg_cleanup_leftovers(m->cgroups, &left);
                if (r < 0)
                        log_warning_errno(r, "cannot clean leftover pod cgroups");
                for (char **l = left; l && *l; l++) {
                        log_notice("%s: pods left by a previous pomed killed", *l);
                        free(*l);
                }
                free(left);
                log_info("cgroups: %s layout, pods under %s", cg_layout_name(m->cgroups),
                         strempty(cg_tree_path(m->cgroups, "memory")));
        }

        r = open_registry(m, err, errlen);
        if (r < 0)
                goto fail;

        r = make_runtime_dir(m);
        if (r < 0) {
                snprintf(err, errlen, "cannot create a runtime directory: %s", strerror(-r));
                goto fail;
        }
        r = notify_new(e, m->runtime_dir, on_notify, m, &m->notify);
        if (r < 0) {
                snprintf(err, errlen, "cannot bind the notify socket in %s: %s", m->runtime_dir,
                         strerror(-r));
                goto fail;
        }
        m->env = (PodEnv){
                .event = e,
                .cgroups = m->cgroups,
                .stage1 = m->stage1,
                .stage2 = m->stage2,
                .exec_path = m->pod_exec,
                .notify_path = notify_path(m->notify),
                .uid = m->env.uid,
                .gid = m->env.gid,
                .namespaces = m->env.namespaces,
        };
        if (m->missing[0])
                log_warning("isolation layers missing: %s", m->missing);
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
                manager_unlink(m, s);
                if (sandbox_state_is_open(s->state)) {
                        /* pomed is going away: say so in the run before the pods go */
                        s->state = SANDBOX_FAILED;
                        free(s->reason);
                        s->reason = strdup("supervisor_stopped");
                        s->ended_at = now_sec();
                        persist(s);
                }
                sandbox_free(s);
        }
        free(m->index);
        registry_close(m->registry);
        for (size_t i = 0; i < m->n_teams; i++)
                team_free(m->teams[i]);
        free(m->teams);
        for (size_t i = 0; i < m->n_images; i++) {
                free(m->images[i].dir);
                free(m->images[i].default_seed);
        }
        free(m->images);
        notify_free(m->notify);
        if (m->runtime_dir && !m->cfg->runtime_dir)
                (void)rmdir(m->runtime_dir);
        free(m->runtime_dir);
        scp_free(m->stage1);
        scp_free(m->stage2);
        cg_setup_free(m->cgroups);
        free(m->images_dir);
        free(m->policies_dir);
        free(m->pod_exec);
        free(m->public_url);
        sd_event_unref(m->event);
        free(m);
        return NULL;
}

void manager_set_observer(Manager *m, const ManagerObserver *o)
{
        m->observer = *o;
}

const char *manager_missing_layers(const Manager *m)
{
        return m->missing;
}

const char *manager_public_url(const Manager *m)
{
        return m->public_url;
}

void manager_set_public_url(Manager *m, const char *url)
{
        free(m->public_url);
        m->public_url = strdup(url);
}

const Config *manager_config(const Manager *m)
{
        return m->cfg;
}

const uint8_t *manager_secret(const Manager *m)
{
        return m->state->secret;
}
