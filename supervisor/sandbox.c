/* SPDX-License-Identifier: MIT */
#include "supervisor/sandbox.h"

#include <assert.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "common/fileio.h"
#include "common/json-util.h"
#include "common/jsonbytes.h"
#include "common/timeutil.h"
#include "common/token.h"
#include "pods/front/front.h"
#include "pods/front/serve.h"
#include "pods/grade/grade.h"
#include "supervisor/log.h"
#include "supervisor/podpool.h"
#include "supervisor/registry.h"
#include "supervisor/rundir.h"

typedef struct SandboxWaiter {
        SandboxGoneFn fn;
        void *userdata;
        struct SandboxWaiter *next;
} SandboxWaiter;

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

int sandbox_error(SandboxError *e, SandboxErrorCode code, json_t *details, const char *fmt, ...)
{
        json_decref(e->details);
        e->code = code;
        e->details = details;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->message, sizeof(e->message), fmt, ap);
        va_end(ap);
        return -1;
}

void sandbox_error_done(SandboxError *e)
{
        json_decref(e->details);
        e->details = NULL;
}

static void hook_state_changed(Sandbox *s)
{
        if (s->env->hooks.state_changed)
                s->env->hooks.state_changed(s, s->env->hooks.userdata);
}

/* ---- the record: registry row and runs/<sid>/sandbox.json ---- */

/* ---- what the state directory refused, kept until it takes it (SandboxStorage) ---- */

typedef struct PendingRecord {
        char id[SANDBOX_ID_SIZE];
        json_t *doc;
        int64_t created_at, ended_at;
        bool run_file;
        struct PendingRecord *next;
} PendingRecord;

typedef struct HeldReply {
        HttpRequest *rq;
        const TwinKind *kind;
        char request_id[64];
        uint64_t since_usec; /* CLOCK_MONOTONIC */
        struct HeldReply *next;
} HeldReply;

/* The answer to a call carried out whose row could not be written within the request
 * timeout (sandbox_hold_reply). */
#define SANDBOX_ROW_KEPT_MESSAGE                                                                \
        "pomed's state directory cannot be written (full or failing): this call was carried "   \
        "out, but its tape row is not on disk yet. pomed keeps it and writes it once there is " \
        "room; read the twin's state before repeating the call."

static int flush_tapes(Sandbox *s);
static void release_held(Sandbox *s, bool force);

bool sandbox_storage_blocked(const SandboxEnv *env)
{
        return env->storage && env->storage->error;
}

/* A write to the state directory failed (what names it): said once per outage, and the
 * owner retries from now on. */
static void storage_stall(const SandboxEnv *env, int err, const char *what)
{
        SandboxStorage *st = env->storage;
        if (!st) {
                log_error_errno(err, "cannot write %s", what);
                return;
        }
        if (st->error)
                return;
        st->error = err;
        st->failed_usec = now_usec(CLOCK_MONOTONIC);
        log_error_errno(err,
                        "cannot write %s to the state directory: until it can be written, twin "
                        "calls and creates answer 507 insufficient_storage; what was not written "
                        "is kept and written once there is room",
                        what);
        if (st->failed)
                st->failed(st->userdata);
}

static PendingRecord *pending_free(PendingRecord *p)
{
        PendingRecord *next = p->next;
        json_decref(p->doc);
        free(p);
        return next;
}

/* doc (borrowed) is s's record as it is now: it replaces any older one still kept. */
static void pending_drop(SandboxStorage *st, const char *id, bool *run_file)
{
        for (PendingRecord **pp = st ? &st->records : NULL; pp && *pp;) {
                if (streq((*pp)->id, id)) {
                        *run_file = *run_file || (*pp)->run_file;
                        *pp = pending_free(*pp);
                } else
                        pp = &(*pp)->next;
        }
}

static int record_write(const SandboxEnv *env, const char *id, const json_t *doc,
                        int64_t created_at, int64_t ended_at, bool run_file, const char **what)
{
        int r = env->registry ? registry_put_sandbox(env->registry, doc, created_at, ended_at) : 0;
        if (r < 0) {
                *what = "the registry";
                return r;
        }
        if (env->runs && run_file) {
                r = rundir_write_json(env->runs, id, "sandbox.json", doc);
                if (r < 0 && r != -ENOENT) { /* ENOENT: a run discarded meanwhile */
                        *what = "sandbox.json";
                        return r;
                }
        }
        return 0;
}

/* Registry row and, unless run_file is false (a sandbox still provisioning: its run record
 * is first written once it is ready or has failed), runs/<sid>/sandbox.json. A record the
 * state directory refuses is kept (SandboxStorage) and written later: 0, or the negative
 * errno of the refusal. */
static int persist_record(Sandbox *s, bool run_file)
{
        _cleanup_json_ json_t *j = sandbox_to_json(s);
        if (!j)
                return -ENOMEM;
        /* A live pod's pid and cgroup mean nothing once written down; how it ended does. */
        for (size_t i = 0; i < s->n_twins; i++) {
                json_t *pt =
                        json_object_get(json_object_get(j, "per_twin"), s->twins[i].kind->name);
                json_t *pod = json_object_get(pt, "pod");
                if (!s->twins[i].exit_how)
                        json_object_del(pt, "pod");
                else if (pod) {
                        json_object_del(pod, "pid");
                        json_object_del(pod, "uid");
                        json_object_del(pod, "cgroup");
                }
        }
        run_file = run_file && !s->discard;
        SandboxStorage *st = s->env->storage;
        pending_drop(st, s->id, &run_file);
        const char *what = NULL;
        int r = record_write(s->env, s->id, j, s->created_at, s->ended_at, run_file, &what);
        if (r >= 0)
                return 0;
        char said[96];
        snprintf(said, sizeof(said), "%s (%s's record)", what, s->id);
        storage_stall(s->env, r, said);
        PendingRecord *p = st ? calloc(1, sizeof(*p)) : NULL;
        if (!p) {
                log_error("%s: its record is not written and cannot be kept", s->id);
                return r;
        }
        snprintf(p->id, sizeof(p->id), "%s", s->id);
        p->doc = json_incref(j);
        p->created_at = s->created_at;
        p->ended_at = s->ended_at;
        p->run_file = run_file;
        PendingRecord **pp = &st->records;
        while (*pp)
                pp = &(*pp)->next;
        *pp = p;
        return r;
}

static void persist(Sandbox *s)
{
        (void)persist_record(s, true);
}

/*
 * The seeds of a run that is kept, <twin>.seed.json next to its tapes (what grading and
 * `pome eval` read): written once, when the run's fate is known (it ends without being
 * discarded, or is finalized), not at every create — most sandboxes of a busy host are
 * discarded, and an image seed is shared in memory until then (image_seed_get).
 */
static int keep_seeds(Sandbox *s)
{
        int first = 0;
        if (!s->env->runs || s->discard)
                return 0;
        for (size_t i = 0; i < s->n_twins; i++) {
                SandboxTwin *t = &s->twins[i];
                if (t->seed_kept || !t->seed)
                        continue;
                char name[64];
                snprintf(name, sizeof(name), "%s.seed.json", t->kind->name);
                int r = rundir_write(s->env->runs, s->id, name, t->seed->data, t->seed->len, true);
                if (r < 0 && r != -ENOENT)
                        log_warning_errno(r, "%s: cannot keep the %s seed", s->id, t->kind->name);
                if (r < 0 && first == 0)
                        first = r;
                t->seed_kept = true;
        }
        return first;
}

/* ---- life and death ---- */

/* The wall-clock second now, as the sandbox's clocks see it: its creation's reading plus the
 * boot clock's progress since, so an end is never shown before its start, whatever the wall
 * clock did meanwhile. */
static int64_t sandbox_wall_now(const Sandbox *s)
{
        return s->created_at +
               (int64_t)((now_usec(CLOCK_BOOTTIME) - s->created_boot_usec) / USEC_PER_SEC);
}

void sandbox_abandon(Sandbox *s, const char *reason)
{
        if (!sandbox_state_is_open(s->state))
                return;
        s->state = SANDBOX_FAILED;
        free(s->reason);
        s->reason = strdup(reason);
        s->ended_at = sandbox_wall_now(s);
        (void)keep_seeds(s);
        persist(s);
}

int sandbox_new(const SandboxEnv *env, Team *t, const SandboxSpec *spec, Sandbox **ret)
{
        Sandbox *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        _cleanup_free_ char *id = NULL, *dt = NULL;
        if (token_random_id(env->id_prefix ? env->id_prefix : "ses_", 16, &id) < 0 ||
            token_random_id("dsc_", 24, &dt) < 0 ||
            (spec->task && !(s->task = strdup(spec->task)))) {
                sandbox_free(s);
                return -ENOMEM;
        }
        snprintf(s->id, sizeof(s->id), "%s", id);
        snprintf(s->discard_token, sizeof(s->discard_token), "%s", dt);
        s->env = env;
        s->team = t;
        s->task_named = spec->task_named;
        s->has_task = spec->task_markdown != NULL;
        s->n_model_criteria = spec->n_model_criteria;
        s->state = SANDBOX_PROVISIONING;
        s->created_at = now_sec();
        s->created_boot_usec = now_usec(CLOCK_BOOTTIME);
        s->lifetime_usec = spec->ttl_usec;
        s->expires_at =
                s->created_at + (int64_t)((spec->ttl_usec + USEC_PER_SEC - 1) / USEC_PER_SEC);
        s->idle_usec = spec->idle_usec;
        s->n_twins = spec->n_twins;
        for (size_t i = 0; i < spec->n_twins; i++) {
                s->twins[i].sandbox = s;
                s->twins[i].kind = spec->images[i]->kind;
                s->twins[i].image = spec->images[i];
                s->twins[i].seed = seed_text_ref(spec->seeds[i]);
                if (!(s->twins[i].seed_name = strdup(spec->seed_names[i]))) {
                        sandbox_free(s);
                        return -ENOMEM;
                }
        }
        *ret = s;
        return 0;
}

void sandbox_free(Sandbox *s)
{
        if (!s)
                return;
        release_held(s, true);
        for (size_t i = 0; i < s->n_twins; i++) {
                pod_free(s->twins[i].pod);
                tape_free(s->twins[i].tape);
                free(s->twins[i].seed_name);
                seed_text_unref(s->twins[i].seed);
                free(s->twins[i].exit_how);
                free(s->twins[i].exit_detail);
                free(s->twins[i].upload_token);
        }
        sd_event_source_disable_unref(s->lifetime_timer);
        sd_event_source_disable_unref(s->idle_timer);
        sd_event_source_disable_unref(s->start_timer);
        while (s->waiters) {
                SandboxWaiter *w = s->waiters;
                s->waiters = w->next;
                free(w);
        }
        json_decref(s->verdict);
        free(s->verdict_error);
        free(s->task);
        free(s->reason);
        free(s);
}

static bool teardown_complete(const Sandbox *s)
{
        return !sandbox_state_is_open(s->state) && s->live_pods == 0 && !s->grader;
}

static void grader_kill(Sandbox *s);

/* Pods reaped and cgroups gone: keep the run (or throw it away), release everything, tell
 * the waiters, then the owner, who frees s. */
static void finish_teardown(Sandbox *s)
{
        if (s->gone)
                return;
        s->gone = true;
        (void)flush_tapes(s);
        release_held(s, true); /* nothing is left to wait for */
        SandboxStorage *st = s->env->storage;
        for (size_t i = 0; i < s->n_twins; i++) {
                Tape **tp = &s->twins[i].tape, **grown;
                /* rows the disk refused outlive the sandbox, in the storage's keeping */
                if (!s->discard && tape_kept(*tp) > 0 && st &&
                    (grown = reallocarray(st->tapes, st->n_tapes + 1, sizeof(Tape *)))) {
                        st->tapes = grown;
                        st->tapes[st->n_tapes++] = TAKE_PTR(*tp);
                }
                /* a kept run's long tape is read back page by page: its index goes with it */
                if (!s->discard && s->twins[i].tape) {
                        int r = tape_keep_index(s->twins[i].tape);
                        if (r < 0)
                                log_warning_errno(r, "%s: cannot keep the %s tape's index", s->id,
                                                  s->twins[i].kind->name);
                }
                s->twins[i].tape = tape_free(s->twins[i].tape);
                s->twins[i].pod = pod_free(s->twins[i].pod);
        }
        if (s->discard && s->env->runs) {
                int r = rundir_remove(s->env->runs, s->id);
                if (r < 0)
                        log_warning_errno(r, "%s: cannot remove the run directory", s->id);
        }
        persist(s);
        while (s->waiters) {
                SandboxWaiter *w = s->waiters;
                s->waiters = w->next;
                if (w->fn)
                        w->fn(s, w->userdata);
                free(w);
        }
        if (s->env->hooks.gone)
                s->env->hooks.gone(s, s->env->hooks.userdata);
}

static void add_waiter(Sandbox *s, SandboxGoneFn gone, void *userdata)
{
        if (!gone)
                return;
        SandboxWaiter *w = calloc(1, sizeof(*w));
        if (!w) {
                log_error("%s: out of memory: a caller waiting for the teardown gets no answer",
                          s->id);
                return;
        }
        /* FIFO: the create reply goes out before later DELETE replies */
        *w = (SandboxWaiter){.fn = gone, .userdata = userdata};
        SandboxWaiter **pp = &s->waiters;
        while (*pp)
                pp = &(*pp)->next;
        *pp = w;
}

static void created_reply(Sandbox *s, void *userdata);

static void on_pod_replies(Pod *p, void *userdata);

void sandbox_end(Sandbox *s, SandboxState state, const char *reason, bool discard,
                 SandboxGoneFn gone, void *userdata)
{
        /* A create still waiting is answered first, whoever ends the sandbox (a drain, a
         * pod that died, the start timeout): once the teardown is complete. */
        if (s->state == SANDBOX_PROVISIONING && s->on_created)
                add_waiter(s, created_reply, NULL);
        add_waiter(s, gone, userdata);
        if (sandbox_state_is_open(s->state)) {
                assert(!sandbox_state_is_open(state));
                (void)flush_tapes(s); /* the run's files hold every row from here on */
                s->state = state;
                free(s->reason);
                s->reason = reason ? strdup(reason) : NULL;
                s->ended_at = sandbox_wall_now(s);
                s->discard = discard;
                s->lifetime_timer = sd_event_source_disable_unref(s->lifetime_timer);
                s->idle_timer = sd_event_source_disable_unref(s->idle_timer);
                s->start_timer = sd_event_source_disable_unref(s->start_timer);
                log_struct(LOG_INFO,
                           &(LogFields){.message_id = LOG_MESSAGE_SANDBOX_ENDED,
                                        .sandbox_id = s->id,
                                        .team = s->team->id,
                                        .reason = reason},
                           "%s: %s (%s)", s->id, sandbox_state_to_string(state), strempty(reason));
                metrics_sandbox_ended(s->env->metrics, s->team->id, sandbox_state_to_string(state));
                if (s->env->hooks.slot_released)
                        s->env->hooks.slot_released(s, s->env->hooks.userdata);
                for (size_t i = 0; i < s->n_twins; i++)
                        pod_kill(s->twins[i].pod, NULL);
                /* a finalize still grading did not finish: its child goes too (the teardown
                 * waits for it to be reaped) */
                grader_kill(s);
                (void)keep_seeds(s);
                persist(s);
                hook_state_changed(s);
        }
        if (teardown_complete(s))
                finish_teardown(s);
}

/* ---- start ---- */

/* Teardown after a failed start is complete: now answer the create. */
static void created_reply(Sandbox *s, void *userdata _unused_)
{
        if (!s->on_created)
                return;
        SandboxError e = {};
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
        if (streq_ptr(s->reason, "storage"))
                sandbox_error(&e, SANDBOX_ERR_STORAGE, json_pack("{s:s}", "reason", "storage"),
                              "pomed's state directory cannot be written (full or failing), so "
                              "the sandbox's record could not be: it was not started and its "
                              "slot was released. Retry once the operator has freed space (pome "
                              "doctor, /healthz state_dir).");
        else if (s->reason && streq(s->reason, "supervisor_stopped"))
                sandbox_error(&e, SANDBOX_ERR_SHUTTING_DOWN,
                              json_pack("{s:s}", "reason", "supervisor_stopped"),
                              "pomed is shutting down; the sandbox was not started and its slot "
                              "was released. Retry once pomed is back.");
        else
                sandbox_error(&e, SANDBOX_ERR_START_FAILED,
                              json_pack("{s:s?, s:s?, s:s?}", "twin", twin, "reason",
                                        how ? how : s->reason, "detail", detail),
                              "Sandbox could not start: the %s twin failed (%s%s%s). No pod of "
                              "it was left running and its slot was released.",
                              twin ? twin : "?", how ? how : strempty(s->reason),
                              detail && *detail ? ": " : "", strempty(detail));
        SandboxCreatedFn cb = s->on_created;
        s->on_created = NULL;
        cb(NULL, &e, s->created_userdata);
        sandbox_error_done(&e);
}

static void fail_start(Sandbox *s, const char *reason)
{
        if (s->state == SANDBOX_PROVISIONING)
                sandbox_end(s, SANDBOX_FAILED, reason, false, NULL, NULL);
}

static void on_pod_ready(Pod *p, void *userdata)
{
        Sandbox *s = userdata;
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        for (size_t i = 0; i < s->n_twins; i++)
                if (s->twins[i].pod == p)
                        metrics_pod_ready(s->env->metrics, s->twins[i].kind->name,
                                          now - s->twins[i].spawned_usec);
        if (s->state != SANDBOX_PROVISIONING)
                return;
        for (size_t i = 0; i < s->n_twins; i++)
                if (!s->twins[i].pod || !pod_is_ready(s->twins[i].pod))
                        return;
        /* All-or-nothing: the last pod is up. A create is answered 201 only once its record
         * says so. */
        s->start_timer = sd_event_source_disable_unref(s->start_timer);
        s->state = SANDBOX_READY;
        if (persist_record(s, true) < 0) {
                s->state = SANDBOX_PROVISIONING; /* its create is answered by the teardown */
                sandbox_end(s, SANDBOX_FAILED, "storage", false, NULL, NULL);
                return;
        }
        metrics_sandbox_ready(s->env->metrics, now - s->spawn_usec);
        log_struct(LOG_INFO,
                   &(LogFields){.message_id = LOG_MESSAGE_SANDBOX_READY,
                                .sandbox_id = s->id,
                                .team = s->team->id},
                   "%s: ready (%zu twin%s)", s->id, s->n_twins, s->n_twins == 1 ? "" : "s");
        hook_state_changed(s);
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
        metrics_pod_exited(s->env->metrics, t->kind->name, how);
        /* One line per pod death, whoever caused it. */
        log_struct(streq(how, "killed") ? LOG_INFO : LOG_WARNING,
                   &(LogFields){.message_id = LOG_MESSAGE_POD_EXITED,
                                .sandbox_id = s->id,
                                .twin = t->kind->name,
                                .team = s->team->id,
                                .reason = how,
                                .pod_pid = pod_pid(p)},
                   "%s: %s pod (pid %d) %s%s%s", s->id, t->kind->name, (int)pod_pid(p), how,
                   detail && *detail ? ": " : "", strempty(detail));
        if (s->state == SANDBOX_PROVISIONING) {
                fail_start(s, "start_failed");
                return;
        }
        if (sandbox_state_is_open(s->state)) {
                /* A pod dying later fails the whole sandbox; tapes are kept. pomed's own
                 * verdicts on a pod name the cause first. */
                char reason[128];
                if (streq(how, "pod_hung") || streq(how, "protocol_error"))
                        snprintf(reason, sizeof(reason), "%s:%s", how, t->kind->name);
                else
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
                        fail_start(s, reason);
                        return 0;
                }
        return 0;
}

static int on_lifetime(sd_event_source *es _unused_, uint64_t usec _unused_, void *userdata)
{
        Sandbox *s = userdata;
        /* a finalize under way took the worlds before the clock ran out: it ends s, graded */
        if (!s->finalizing)
                sandbox_end(s, SANDBOX_EXPIRED, "lifetime", false, NULL, NULL);
        return 0;
}

/* How late the idle clock may fire before it is taken for pomed's own stall, and how long
 * the calls that waited out the stall (in the sockets, unread) then get to be read. */
#define IDLE_STALL_USEC (2 * USEC_PER_SEC)
#define IDLE_GRACE_USEC (2 * USEC_PER_SEC)

static int on_idle(sd_event_source *es, uint64_t usec, void *userdata)
{
        Sandbox *s = userdata;
        uint64_t now = now_usec(CLOCK_BOOTTIME);
        /* Fired this late, pomed itself was not running (stopped, starved): a call that came
         * meanwhile is still unread, and the agent was not idle. Its turn first. */
        if (s->finalizing)
                return 0; /* no call comes while it is graded: the finalize ends it */
        if (now > usec + IDLE_STALL_USEC && !s->idle_grace) {
                s->idle_grace = true;
                log_info("%s: the idle clock fired %" PRIu64 " ms late (pomed was stalled): "
                         "calls that waited get %" PRIu64 " s first",
                         s->id, (now - usec) / USEC_PER_MSEC, IDLE_GRACE_USEC / USEC_PER_SEC);
                (void)sd_event_source_set_time(es, now + IDLE_GRACE_USEC);
                (void)sd_event_source_set_enabled(es, SD_EVENT_ONESHOT);
                return 0;
        }
        sandbox_end(s, SANDBOX_EXPIRED, "idle", false, NULL, NULL);
        return 0;
}

static int open_run(Sandbox *s, const SandboxSpec *spec)
{
        RunDirs *runs = s->env->runs;
        int r = runs ? rundir_create(runs, s->id) : -ENOENT;
        if (r < 0 && runs)
                log_warning_errno(r,
                                  "%s: cannot create the run directory, tapes go to "
                                  "temporary files",
                                  s->id);
        bool have_dir = r >= 0;
        if (have_dir && spec->task_markdown) {
                /* what finalize grades against, as `pome eval` would find it */
                r = rundir_write(runs, s->id, "task.md", spec->task_markdown,
                                 spec->task_markdown_len, true);
                if (r < 0)
                        log_warning_errno(r, "%s: cannot keep task.md", s->id);
        }
        for (size_t i = 0; i < s->n_twins; i++) {
                _cleanup_free_ char *tp = NULL;
                /* the seeds are written once the run is known to be kept (keep_seeds); the
                 * tapes' files once they get a row (tape_open) */
                if (have_dir && !(tp = rundir_tape_path(runs, s->id, s->twins[i].kind->name)))
                        return -ENOMEM;
                r = tape_open(tp, &s->twins[i].tape);
                if (r < 0 && tp) {
                        log_warning_errno(r, "%s: cannot open %s, taping to a temporary file",
                                          s->id, tp);
                        r = tape_open(NULL, &s->twins[i].tape);
                }
                if (r < 0)
                        return r;
                tape_set_deferred(s->twins[i].tape);
                tape_set_sync(s->twins[i].tape, s->env->cfg->durability_full);
        }
        return 0;
}

void sandbox_admit(Sandbox *s, const SandboxSpec *spec, SandboxCreatedFn cb, void *userdata)
{
        const SandboxEnv *env = s->env;
        s->on_created = cb;
        s->created_userdata = userdata;
        int r = open_run(s, spec);
        if (r < 0) {
                log_error_errno(r, "%s: cannot open the tapes", s->id);
                fail_start(s, "start_failed");
                return;
        }
        log_struct(LOG_INFO,
                   &(LogFields){.message_id = LOG_MESSAGE_SANDBOX_PROVISIONING,
                                .sandbox_id = s->id,
                                .team = s->team->id},
                   "%s: provisioning for team %s (%zu twin%s)", s->id, s->team->id, s->n_twins,
                   s->n_twins == 1 ? "" : "s");

        /* The lifetime clock runs on the boot clock from the sandbox's creation (systemd's
         * rule: CLOCK_BOOTTIME for every timeout, the wall clock for display only), a wait for
         * its start included; tokens carry expires_at, its wall-clock reading then, as exp. */
        r = sd_event_add_time(env->event, &s->lifetime_timer, CLOCK_BOOTTIME,
                              s->created_boot_usec + s->lifetime_usec, USEC_PER_MSEC * 10,
                              on_lifetime, s);
        if (r < 0) {
                log_error_errno(r, "%s: cannot arm the clocks", s->id);
                fail_start(s, "start_failed");
        }
}

void sandbox_start(Sandbox *s)
{
        const SandboxEnv *env = s->env;
        if (s->state != SANDBOX_PROVISIONING || s->spawn_usec)
                return;
        s->spawn_usec = now_usec(CLOCK_MONOTONIC);
        /* the start clock runs from now, not from a wait in the admission queue */
        int r = sd_event_add_time_relative(env->event, &s->start_timer, CLOCK_BOOTTIME,
                                           env->cfg->start_timeout_usec, USEC_PER_MSEC,
                                           on_start_timeout, s);
        if (r >= 0 && s->idle_usec)
                r = sd_event_add_time_relative(env->event, &s->idle_timer, CLOCK_BOOTTIME,
                                               s->idle_usec, USEC_PER_MSEC * 10, on_idle, s);
        if (r < 0) {
                log_error_errno(r, "%s: cannot arm the clocks", s->id);
                fail_start(s, "start_failed");
                return;
        }
        static const PodCallbacks pcb = {
                .ready = on_pod_ready, .exited = on_pod_exited, .replies_done = on_pod_replies};
        for (size_t i = 0; i < s->n_twins; i++) {
                char err[256] = "";
                s->twins[i].spawned_usec = now_usec(CLOCK_MONOTONIC);
                /* a warm pod when the pool has one (podpool.h), else one spawned now */
                const Image *img = s->twins[i].image;
                const SeedText *seed = s->twins[i].seed;
                Pod *warm = podpool_take(env->pool, img);
                if (warm) {
                        r = pod_load(warm, s->id, seed->data, seed->len, &pcb, s, err, sizeof(err));
                        if (r < 0)
                                pod_free(warm); /* kills and reaps it: no pod half-given */
                        else
                                s->twins[i].pod = warm;
                } else
                        r = pod_start(env->pods, s->id, img->kind, seed->data, seed->len,
                                      &img->limits, &pcb, s, &s->twins[i].pod, err, sizeof(err));
                if (r < 0) {
                        log_error("%s: %s", s->id, err);
                        s->twins[i].exit_how = strdup("setup_failed");
                        s->twins[i].exit_detail = strdup(err);
                        /* Answered through the same path as a pod that dies while starting;
                         * s may be gone once this returns. */
                        fail_start(s, "start_failed");
                        return;
                }
                s->live_pods++;
        }
        /* recorded while the pods load their seeds, not before they have them */
        (void)persist_record(s, false);
        hook_state_changed(s);
}

/* ---- clocks and calls ---- */

bool sandbox_reconcile_clocks(Sandbox *s)
{
        if (sandbox_state_is_open(s->state) && !s->finalizing &&
            now_usec(CLOCK_BOOTTIME) >= s->created_boot_usec + s->lifetime_usec)
                sandbox_end(s, SANDBOX_EXPIRED, "lifetime", false, NULL, NULL);
        return sandbox_state_is_open(s->state);
}

SandboxTwin *sandbox_twin(Sandbox *s, const char *twin)
{
        for (size_t i = 0; i < s->n_twins; i++)
                if (streq(s->twins[i].kind->name, twin))
                        return &s->twins[i];
        return NULL;
}

void sandbox_touch(Sandbox *s)
{
        if (!sandbox_state_is_open(s->state))
                return;
        s->calls++;
        if (s->state == SANDBOX_READY) {
                s->state = SANDBOX_RUNNING;
                log_struct(LOG_INFO,
                           &(LogFields){.message_id = LOG_MESSAGE_SANDBOX_RUNNING,
                                        .sandbox_id = s->id,
                                        .team = s->team->id},
                           "%s: running (its first twin call)", s->id);
                persist(s);
                hook_state_changed(s);
        }
        sandbox_restart_idle(s);
}

void sandbox_restart_idle(Sandbox *s)
{
        if (sandbox_state_is_open(s->state) && s->idle_timer) {
                s->idle_grace = false;
                (void)sd_event_source_set_time(s->idle_timer,
                                               now_usec(CLOCK_BOOTTIME) + s->idle_usec);
        }
}

static int record(Sandbox *s, SandboxTwin *t, const json_t *row, const char *line, size_t len,
                  const char *event_id);

int sandbox_record(Sandbox *s, SandboxTwin *t, const json_t *row)
{
        return record(s, t, row, NULL, 0, NULL);
}

int sandbox_record_line(Sandbox *s, SandboxTwin *t, const char *line, size_t len,
                        const char *event_id)
{
        return record(s, t, NULL, line, len, event_id);
}

/* A tape that cannot even keep a row (out of memory): the sandbox fails. */
static void tape_failed(Sandbox *s, SandboxTwin *t, int r)
{
        log_error_errno(r, "%s: cannot append to the %s tape", s->id, t->kind->name);
        char reason[64];
        snprintf(reason, sizeof(reason), "tape_error:%s", t->kind->name);
        if (sandbox_state_is_open(s->state))
                sandbox_end(s, SANDBOX_FAILED, reason, false, NULL, NULL);
}

/* Whether a row of s is kept in memory, not yet on disk. */
static bool tapes_kept(const Sandbox *s)
{
        for (size_t i = 0; i < s->n_twins; i++)
                if (tape_kept(s->twins[i].tape) > 0)
                        return true;
        return false;
}

/*
 * Writes the rows the tapes kept (tape_set_deferred): every twin's, one write each. Rows the
 * state directory refuses stay kept (storage_stall). 0, or the first negative errno.
 */
static int flush_tapes(Sandbox *s)
{
        int first = 0;
        for (size_t i = 0; i < s->n_twins; i++) {
                int r = tape_flush(s->twins[i].tape);
                if (r < 0) {
                        char what[96];
                        snprintf(what, sizeof(what), "the %s tape of %s", s->twins[i].kind->name,
                                 s->id);
                        storage_stall(s->env, r, what);
                        if (!first)
                                first = r;
                }
        }
        return first;
}

/*
 * The held replies of s (sandbox_hold_reply) go out once no row of s is kept; while some
 * are, one held for limits.request_timeout (any, with force) is answered 507 instead.
 */
static void release_held(Sandbox *s, bool force)
{
        bool kept = tapes_kept(s);
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        for (HeldReply **pp = &s->held; *pp;) {
                HeldReply *h = *pp;
                if (kept && !force && now - h->since_usec < s->env->cfg->request_timeout_usec) {
                        pp = &h->next;
                        continue;
                }
                if (kept && http_request_unreply(h->rq) >= 0)
                        front_reply_error(h->rq, h->kind, 507, "insufficient_storage",
                                          SANDBOX_ROW_KEPT_MESSAGE, h->request_id);
                http_request_release(h->rq);
                *pp = h->next;
                free(h);
        }
}

void sandbox_hold_reply(Sandbox *s, SandboxTwin *t, HttpRequest *rq, const char *request_id)
{
        if (!tapes_kept(s))
                return; /* every row is on disk: the reply goes out now */
        HeldReply *h = calloc(1, sizeof(*h));
        if (!h) {
                log_error("%s: out of memory: a reply goes out before its row is on disk", s->id);
                return;
        }
        *h = (HeldReply){.rq = rq, .kind = t->kind, .since_usec = now_usec(CLOCK_MONOTONIC)};
        snprintf(h->request_id, sizeof(h->request_id), "%s", request_id);
        http_request_hold(rq);
        HeldReply **pp = &s->held;
        while (*pp)
                pp = &(*pp)->next;
        *pp = h;
}

int sandbox_storage_retry(SandboxStorage *st, Sandbox *list)
{
        int first = 0;
        for (Sandbox *s = list; s; s = s->next) {
                if (!tapes_kept(s) && !s->held)
                        continue;
                int r = flush_tapes(s);
                release_held(s, false);
                if (r < 0 && !first)
                        first = r;
        }
        size_t n = 0;
        for (size_t i = 0; i < st->n_tapes; i++) {
                int r = tape_flush(st->tapes[i]);
                if (r >= 0)
                        tape_free(st->tapes[i]);
                else {
                        st->tapes[n++] = st->tapes[i];
                        if (!first)
                                first = r;
                }
        }
        st->n_tapes = n;
        /* records in order: an older one never overwrites a newer */
        while (st->records && !first) {
                PendingRecord *p = st->records;
                const char *what;
                int r = record_write(st->env, p->id, p->doc, p->created_at, p->ended_at,
                                     p->run_file, &what);
                if (r < 0)
                        first = r;
                else
                        st->records = pending_free(p);
        }
        if (first)
                return first;
        if (st->error)
                log_info("the state directory takes writes again: every row and record kept "
                         "since the failure %.1f s ago is written",
                         (double)(now_usec(CLOCK_MONOTONIC) - st->failed_usec) / 1e6);
        st->error = 0;
        return 0;
}

void sandbox_storage_done(SandboxStorage *st)
{
        size_t lost = 0, records = 0;
        for (size_t i = 0; i < st->n_tapes; i++) {
                lost += tape_flush(st->tapes[i]) < 0 ? tape_kept(st->tapes[i]) : 0;
                tape_free(st->tapes[i]);
        }
        free(st->tapes);
        st->tapes = NULL;
        st->n_tapes = 0;
        while (st->records) {
                records++;
                st->records = pending_free(st->records);
        }
        if (lost || records)
                log_error("exiting with %zu tape rows and %zu records that the state directory "
                          "never took: they are lost",
                          lost, records);
}

/* A pod's batch of replies is done: the rows they left on the tapes go in one write, then
 * the replies. */
static void on_pod_replies(Pod *p _unused_, void *userdata)
{
        Sandbox *s = userdata;
        (void)flush_tapes(s);
        release_held(s, false);
}

static int record(Sandbox *s, SandboxTwin *t, const json_t *row, const char *line, size_t len,
                  const char *event_id)
{
        if (!t->tape)
                return -ESHUTDOWN; /* ended meanwhile: nothing more goes on its tapes */
        uint64_t before = tape_bytes(t->tape);
        int r = row    ? tape_append(t->tape, row)
                : line ? tape_append_line(t->tape, line, len, event_id)
                       : -ENOMEM;
        if (r >= 0)
                metrics_tape_row(s->env->metrics, t->kind->name, tape_bytes(t->tape) - before);
        if (r < 0) {
                tape_failed(s, t, r);
                return r;
        }
        /* The rows of the replies of one read from a pod are written together, by
         * on_pod_replies, before MHD sends any of their answers (sandbox_hold_reply); any
         * other row now. Every read of a tape (tape.h) flushes first, and so does the end of
         * the sandbox. */
        if (!pod_draining(t->pod))
                (void)flush_tapes(s);
        if (!sandbox_state_is_open(s->state))
                return 0;
        uint64_t bytes = 0;
        for (size_t i = 0; i < s->n_twins; i++)
                bytes += s->twins[i].tape ? tape_bytes(s->twins[i].tape) : 0;
        if (bytes >= s->env->cfg->max_tape) {
                log_warning("%s: its tapes hold %" PRIu64 " bytes, limits.max_tape is %" PRIu64,
                            s->id, bytes, s->env->cfg->max_tape);
                sandbox_end(s, SANDBOX_FAILED, "tape_full", false, NULL, NULL);
        }
        return 0;
}

/* ---- stop and finalize ---- */

int sandbox_error_ended(SandboxError *e, const char *id, const char *state, const char *reason)
{
        return sandbox_error(
                e, streq(state, "expired") ? SANDBOX_ERR_EXPIRED : SANDBOX_ERR_ENDED,
                json_pack("{s:s, s:s, s:s?}", "session_id", id, "state", state, "reason", reason),
                "Sandbox %s has ended (%s%s%s).", id, state, reason ? ": " : "", strempty(reason));
}

static int refuse_ended(Sandbox *s, SandboxError *e)
{
        return sandbox_error_ended(e, s->id, sandbox_state_to_string(s->state), s->reason);
}

int sandbox_stop(Sandbox *s, const char *confirm_token, bool confirmed, SandboxGoneFn gone,
                 void *userdata, SandboxError *e)
{
        (void)sandbox_reconcile_clocks(s);
        if (s->state == SANDBOX_EXPIRED)
                return refuse_ended(s, e);
        if (!sandbox_state_is_open(s->state)) {
                /* stopping what has ended is a no-op, not an error */
                sandbox_end(s, s->state, s->reason, false, gone, userdata);
                return 0;
        }
        if (s->state == SANDBOX_PROVISIONING)
                return sandbox_error(
                        e, SANDBOX_ERR_PROVISIONING, json_pack("{s:s}", "reason", "provisioning"),
                        "Sandbox %s is still starting; stop it once it is ready.", s->id);
        /* A finalize under way ends it (done) with its verdict: a discard now would take the
         * run from the grader and answer the finalize with a run thrown away. */
        if (s->finalizing)
                return sandbox_error(e, SANDBOX_ERR_PROVISIONING,
                                     json_pack("{s:s}", "reason", "finalizing"),
                                     "Sandbox %s is being finalized: it ends with its verdict "
                                     "in a moment, and is kept. Nothing to stop.",
                                     s->id);
        if (!confirmed && !(confirm_token && token_equal(confirm_token, s->discard_token))) {
                int64_t open_for =
                        (int64_t)((now_usec(CLOCK_BOOTTIME) - s->created_boot_usec) / USEC_PER_SEC);
                /* the task is what the operator recognises: a run of it would be lost */
                char task[SANDBOX_TASK_NAME_MAX + 16] = "";
                if (s->task)
                        snprintf(task, sizeof(task), " (task \"%s\")", s->task);
                return sandbox_error(
                        e, SANDBOX_ERR_UNGRADED,
                        json_pack("{s:s, s:s, s:s?, s:s, s:I, s:s}", "reason", "ungraded_session",
                                  "discard_token", s->discard_token, "task", s->task, "state",
                                  sandbox_state_to_string(s->state), "open_seconds",
                                  (json_int_t)(open_for < 0 ? 0 : open_for), "session_id", s->id),
                        "Refused to stop %s%s: it is still open (%s), so its run has not been "
                        "graded and stopping now discards it.",
                        s->id, task, sandbox_state_to_string(s->state));
        }
        sandbox_end(s, SANDBOX_STOPPED, "discarded", true, gone, userdata);
        return 0;
}

/* ---- the task and the verdict ---- */

/* title cut to SANDBOX_TASK_NAME_MAX bytes, never inside a UTF-8 sequence; NULL when empty */
static int task_name(const char *title, char **ret)
{
        size_t n = strlen(strempty(title));
        if (n > SANDBOX_TASK_NAME_MAX) {
                n = SANDBOX_TASK_NAME_MAX;
                while (n > 0 && ((unsigned char)title[n] & 0xC0) == 0x80)
                        n--;
        }
        *ret = NULL;
        if (n == 0)
                return 0;
        return (*ret = strndup(title, n)) ? 0 : -ENOMEM;
}

static bool twin_listed(const char *const *twins, size_t n, const char *twin)
{
        for (size_t i = 0; i < n; i++)
                if (streq_ptr(twins[i], twin))
                        return true;
        return false;
}

static void join_names(const char *const *names, size_t n, char *buf, size_t size)
{
        size_t k = 0;
        buf[0] = 0;
        for (size_t i = 0; i < n && k < size; i++)
                k += (size_t)snprintf(buf + k, size - k, "%s%s", i ? ", " : "", names[i]);
}

static json_t *names_json(const char *const *names, size_t n)
{
        json_t *a = json_array();
        for (size_t i = 0; a && i < n; i++)
                json_array_append_new(a, json_string(names[i]));
        return a;
}

int sandbox_task_parse(const char *text, size_t len, const char *const *twins, size_t n,
                       GradeTask **ret, char **ret_name, SandboxError *e)
{
        if (len > SANDBOX_TASK_MAX)
                return sandbox_error(e, SANDBOX_ERR_INVALID,
                                     json_pack("{s:s, s:I}", "field", "task_markdown", "max_bytes",
                                               (json_int_t)SANDBOX_TASK_MAX),
                                     "task_markdown is larger than %u bytes.", SANDBOX_TASK_MAX);
        GradeTask *t = NULL;
        GradeError ge = {};
        int r = grade_task_parse(text, len, "task.md", NULL, 0, &t, &ge);
        if (r == -ENOMEM)
                return sandbox_error(e, SANDBOX_ERR_INTERNAL, NULL, "out of memory");
        if (r < 0) {
                /* the parser's own words ("task.md:12: …"), and the line for programs */
                unsigned line = 0;
                json_t *d = json_pack("{s:s}", "field", "task_markdown");
                if (d && sscanf(ge.message, "task.md:%u:", &line) == 1)
                        json_object_set_new(d, "line", json_integer(line));
                return sandbox_error(e, SANDBOX_ERR_INVALID, d, "%s", ge.message);
        }
        size_t nt = 0;
        bool same = true;
        for (char **tw = t->twins; tw && *tw; tw++, nt++)
                same = same && twin_listed(twins, n, *tw);
        if (!same || nt != n) {
                json_t *d = json_pack("{s:s, s:o, s:o}", "field", "task_markdown", "task_twins",
                                      names_json((const char *const *)t->twins, nt), "twins",
                                      names_json(twins, n));
                char want[64] = "", have[64] = "";
                join_names((const char *const *)t->twins, nt, want, sizeof(want));
                join_names(twins, n, have, sizeof(have));
                grade_task_free(t);
                return sandbox_error(e, SANDBOX_ERR_INVALID, d,
                                     "The task's twins (%s) are not this sandbox's (%s): a task's "
                                     "## Config twins (github when it names none) must be exactly "
                                     "its sandbox's twins.",
                                     want, have);
        }
        for (size_t i = 0; i < t->n_criteria; i++) {
                const GradeCriterion *c = &t->criteria[i];
                if (c->twin && !twin_listed(twins, n, c->twin)) {
                        int q = sandbox_error(e, SANDBOX_ERR_INVALID,
                                              json_pack("{s:s, s:I, s:s}", "field", "task_markdown",
                                                        "line", (json_int_t)c->line, "twin",
                                                        c->twin),
                                              "task.md:%u: a criterion for the %s twin, which "
                                              "this sandbox lacks",
                                              c->line, c->twin);
                        grade_task_free(t);
                        return q;
                }
        }
        if (ret_name && task_name(t->title, ret_name) < 0) {
                grade_task_free(t);
                return sandbox_error(e, SANDBOX_ERR_INTERNAL, NULL, "out of memory");
        }
        *ret = t;
        return 0;
}

unsigned sandbox_task_model_criteria(const GradeTask *t)
{
        unsigned n = 0;
        for (size_t i = 0; i < t->n_criteria; i++)
                n += t->criteria[i].kind == GRADE_CRITERION_MODEL;
        return n;
}

/* Finalize's task: checked against s's twins, kept as runs/<sid>/task.md. 0 or -1 with e. */
static int set_task(Sandbox *s, const char *text, size_t len, SandboxError *e)
{
        const char *twins[SANDBOX_TWINS_MAX];
        for (size_t i = 0; i < s->n_twins; i++)
                twins[i] = s->twins[i].kind->name;
        GradeTask *t = NULL;
        _cleanup_free_ char *name = NULL;
        if (sandbox_task_parse(text, len, twins, s->n_twins, &t, &name, e) < 0)
                return -1;
        s->n_model_criteria = sandbox_task_model_criteria(t);
        grade_task_free(t);
        int r = s->env->runs ? rundir_write(s->env->runs, s->id, "task.md", text, len, true)
                             : -ENOENT;
        free(s->verdict_error);
        s->verdict_error = NULL;
        s->has_task = r >= 0;
        if (r < 0) {
                /* the run is kept ungraded rather than graded against a task it was not given */
                log_warning_errno(r, "%s: cannot keep task.md, the run will not be graded", s->id);
                char why[128];
                snprintf(why, sizeof(why), "cannot keep task.md: %s", strerror(-r));
                s->verdict_error = strdup(why);
        }
        if (!s->task_named && name) {
                free(s->task);
                s->task = TAKE_PTR(name);
        }
        return 0;
}

/* The verdict's summary a record carries: {state, passed, score, counts}. */
static json_t *verdict_summary(const char *bytes, size_t len)
{
        _cleanup_json_ json_t *v = json_loadb(bytes, len, 0, NULL);
        if (!v)
                return NULL;
        return json_pack("{s:O?, s:O?, s:O?, s:O?}", "state", json_object_get(v, "state"), "passed",
                         json_object_get(v, "passed"), "score", json_object_get(v, "score"),
                         "counts", json_object_get(v, "counts"));
}

#define GRADER_TIMEOUT_USEC (120 * USEC_PER_SEC) /* a grading child longer than this is killed */

/*
 * In the grading child (fork of pomed, no exec): grades runs/<sid>/ as `pome eval RUN_DIR`
 * does (grade_run_dir: the same bytes) into verdict.json when the run has a task — asking
 * opts->judge about [model] criteria, over HTTP or through a command: blocking here, never
 * on the loop —, writes
 * summary.md (grade_summary_run_dir), and reports on fd one JSON object {verdict_error,
 * summary_error, grade_ms, summary_ms} before _exit. Pure CPU and file I/O over the run's
 * files: nothing of pomed's loop, bus or listeners is touched.
 */
_noreturn_ static void grader_child(RunDirs *runs, const char *sid, bool has_task,
                                    const GradeOptions *opts, int fd)
{
        _cleanup_free_ char *dir = rundir_path(runs, sid, NULL), *bytes = NULL, *md = NULL;
        GradeError ge = {}, se = {};
        size_t len = 0, mdlen = 0;
        int r = dir ? 0 : -ENOMEM;
        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        if (r >= 0 && has_task) {
                r = grade_run_dir(dir, NULL, opts, &bytes, &len, &ge);
                if (r >= 0 && (r = rundir_write(runs, sid, "verdict.json", bytes, len, true)) < 0)
                        snprintf(ge.message, sizeof(ge.message), "cannot write verdict.json: %s",
                                 strerror(-r));
                if (r < 0 && !*ge.message)
                        snprintf(ge.message, sizeof(ge.message), "%s", strerror(-r));
        }
        uint64_t t1 = now_usec(CLOCK_MONOTONIC);
        int rs = dir ? grade_summary_run_dir(dir, &md, &mdlen, &se) : -ENOMEM;
        if (rs >= 0 && (rs = rundir_write(runs, sid, "summary.md", md, mdlen, true)) < 0)
                snprintf(se.message, sizeof(se.message), "cannot write summary.md: %s",
                         strerror(-rs));
        if (rs < 0 && !*se.message)
                snprintf(se.message, sizeof(se.message), "%s", strerror(-rs));
        uint64_t t2 = now_usec(CLOCK_MONOTONIC);
        _cleanup_json_ json_t *report =
                json_pack("{s:s?, s:s?, s:I, s:I}", "verdict_error", r < 0 ? ge.message : NULL,
                          "summary_error", rs < 0 ? se.message : NULL, "grade_ms",
                          (json_int_t)((t1 - t0) / USEC_PER_MSEC), "summary_ms",
                          (json_int_t)((t2 - t1) / USEC_PER_MSEC));
        _cleanup_free_ char *line = report ? json_dumps(report, JSON_COMPACT) : NULL;
        if (line)
                (void)!write(fd, line, strlen(line));
        _exit(line ? 0 : 1);
}

typedef struct Finalize {
        Sandbox *sandbox;
        unsigned pending;
        bool code_only;       /* [model] criteria deliberately not judged */
        GradeSeal agent_seal; /* the verdict's agent_sealed */
        bool failed;
        char failure[160];
        /* a file of the run that could not be written (a full or read-only disk): the run
         * is not graded, and verdict_error says so (the disk's fault is not the agent's) */
        char storage[200];
        SandboxGoneFn done;
        void *userdata;
} Finalize;

/* Notes that f's run could not write what (r its negative errno); the first one is said. */
static void storage_failed(Finalize *f, const char *what, int r)
{
        if (!f->storage[0])
                snprintf(f->storage, sizeof(f->storage), "storage: cannot write %s: %s", what,
                         strerror(-r));
}

/* A finalize's grading child: forked so that grading a large run (seconds of JSON parsing)
 * never holds up the loop that serves every other sandbox. */
typedef struct Grader {
        Finalize *finalize;
        pid_t pid;
        int fd; /* the child's report */
        sd_event_source *child, *timer;
        uint64_t started_usec;
        bool killed; /* by the timeout or the sandbox's end */
} Grader;

static void finalize_complete(Finalize *f)
{
        Sandbox *s = f->sandbox;
        s->finalizing = false;
        /* done unless something else ended it meanwhile: then it is not graded, it did not
         * finish */
        if (sandbox_state_is_open(s->state))
                sandbox_end(s, SANDBOX_DONE, "finalized", false, f->done, f->userdata);
        else
                sandbox_end(s, s->state, s->reason, false, f->done, f->userdata);
        free(f);
}

static Grader *grader_free(Grader *g)
{
        if (!g)
                return NULL;
        sd_event_source_disable_unref(g->child);
        sd_event_source_disable_unref(g->timer);
        safe_close(g->fd);
        free(g);
        return NULL;
}

/* Reads what the grading child reported and what it wrote into s's record. */
static void grader_collect(Sandbox *s, Grader *g, const siginfo_t *si)
{
        char buf[2048];
        ssize_t n = g->killed ? -1 : read(g->fd, buf, sizeof(buf) - 1);
        buf[n > 0 ? n : 0] = 0;
        _cleanup_json_ json_t *report = n > 0 ? json_loads(buf, 0, NULL) : NULL;
        uint64_t ms = (now_usec(CLOCK_MONOTONIC) - g->started_usec) / USEC_PER_MSEC;
        const char *verr = json_get_str(report, "verdict_error");
        char why[640] = "";
        if (!report)
                snprintf(why, sizeof(why), "the grading process %s",
                         g->killed                   ? "took too long and was killed"
                         : si->si_code == CLD_EXITED ? "reported nothing"
                                                     : "was killed by a signal");
        else if (verr)
                snprintf(why, sizeof(why), "%s", verr);
        if (s->has_task && !*why) {
                _cleanup_free_ char *path = rundir_path(s->env->runs, s->id, "verdict.json");
                _cleanup_free_ char *bytes = NULL;
                size_t len = 0;
                if (!path || read_file_at(AT_FDCWD, path, 256u << 20, &bytes, &len) < 0 ||
                    !(s->verdict = verdict_summary(bytes, len)))
                        snprintf(why, sizeof(why), "cannot read the verdict it wrote");
        }
        if (s->has_task && *why) {
                log_warning("%s: finalized without a verdict: %s", s->id, why);
                free(s->verdict_error);
                s->verdict_error = strdup(why);
        } else if (s->has_task)
                log_info("%s: graded: %s (task \"%s\", %" PRIi64 " ms in a child, %" PRIi64
                         " ms of it grading)",
                         s->id, strempty(json_get_str(s->verdict, "state")), strempty(s->task),
                         (int64_t)ms,
                         (int64_t)json_integer_value(json_object_get(report, "grade_ms")));
        const char *serr = json_get_str(report, "summary_error");
        if (serr)
                log_warning("%s: no summary.md: %s", s->id, serr);
}

static int on_grader_exit(sd_event_source *src _unused_, const siginfo_t *si, void *userdata)
{
        Grader *g = userdata;
        Finalize *f = g->finalize;
        Sandbox *s = f->sandbox;
        if (sandbox_state_is_open(s->state))
                grader_collect(s, g, si);
        s->grader = grader_free(g);
        finalize_complete(f);
        return 0;
}

static int on_grader_timeout(sd_event_source *src _unused_, uint64_t usec _unused_, void *userdata)
{
        Grader *g = userdata;
        g->killed = true;
        (void)sd_event_source_send_child_signal(g->child, SIGKILL, NULL, 0);
        return 0;
}

static void grader_kill(Sandbox *s)
{
        if (!s->grader || s->grader->killed)
                return;
        s->grader->killed = true;
        (void)sd_event_source_send_child_signal(s->grader->child, SIGKILL, NULL, 0);
}

/*
 * How long f's grading child may take: GRADER_TIMEOUT_USEC for the checks, and, when a judge
 * will be asked, each [model] criterion's worst case on top (every attempt timing out, with
 * its backoff): a slow judge is an error of that criterion, never a run killed half-graded.
 */
static uint64_t grader_timeout_usec(const Sandbox *s, const Finalize *f)
{
        uint64_t t = GRADER_TIMEOUT_USEC;
        if (s->env->judge && !f->code_only)
                t += (uint64_t)s->n_model_criteria * s->env->judge_budget_usec;
        return t;
}

/*
 * Forks the child that grades and summarizes f's run (grader_child); finalize_complete runs
 * once it has been reaped. Returns 0, or a negative errno when it could not start (then
 * nothing is running).
 */
static int grader_start(Finalize *f)
{
        Sandbox *s = f->sandbox;
        if (!s->env->runs || !rundir_exists(s->env->runs, s->id))
                return -ENOENT;
        (void)flush_tapes(s); /* the child grades the files */
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        Grader *g = calloc(1, sizeof(*g));
        if (!g) {
                safe_close(p[0]);
                safe_close(p[1]);
                return -ENOMEM;
        }
        *g = (Grader){.finalize = f, .fd = p[0], .started_usec = now_usec(CLOCK_MONOTONIC)};
        pid_t parent = getpid();
        /* the loop is single-threaded: nothing is mid-way in another thread at fork */
        g->pid = fork();
        if (g->pid < 0) {
                int r = negative_errno();
                safe_close(p[1]);
                grader_free(g);
                return r;
        }
        if (g->pid == 0) {
                (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                        _exit(1);
                GradeOptions opts = {.judge = s->env->judge,
                                     .code_only = f->code_only,
                                     .agent_seal = f->agent_seal};
                grader_child(s->env->runs, s->id, s->has_task, &opts, p[1]);
        }
        safe_close(p[1]);
        int r = sd_event_add_child(s->env->event, &g->child, g->pid, WEXITED, on_grader_exit, g);
        if (r >= 0)
                r = sd_event_add_time_relative(s->env->event, &g->timer, CLOCK_MONOTONIC,
                                               grader_timeout_usec(s, f), 0, on_grader_timeout, g);
        if (r < 0) {
                (void)kill(g->pid, SIGKILL);
                (void)waitpid(g->pid, NULL, 0);
                grader_free(g);
                return r;
        }
        (void)sd_event_source_set_child_process_own(g->child, true);
        s->grader = g;
        return 0;
}

static void finalize_finish(Finalize *f)
{
        Sandbox *s = f->sandbox;
        if (f->failed)
                log_warning("%s: %s", s->id, f->failure);
        /* the tapes too are files of the run: written (flushed) before anything is graded */
        for (size_t i = 0; i < s->n_twins && sandbox_state_is_open(s->state); i++) {
                int r = tape_flush(s->twins[i].tape);
                if (r < 0) {
                        char what[64];
                        snprintf(what, sizeof(what), "the %s tape", s->twins[i].kind->name);
                        storage_failed(f, what, r);
                }
        }
        if (s->has_task && !f->storage[0] && (!s->env->runs || !rundir_exists(s->env->runs, s->id)))
                storage_failed(f, "the run directory", -ENOENT);
        if (f->storage[0] && s->has_task) {
                /* a verdict from files that are not whole would grade the disk as the agent */
                log_error("%s: %s; the run is not graded: a verdict from files that are not "
                          "whole would grade the disk, not the agent",
                          s->id, f->storage);
                free(s->verdict_error);
                s->verdict_error = strdup(f->storage);
                finalize_complete(f);
                return;
        }
        /* Even without a final state the run is kept (tapes, seeds) and graded (a check
         * that needs a missing world fails, saying so), by a child, off the loop. */
        if (sandbox_state_is_open(s->state)) {
                int r = grader_start(f);
                if (r >= 0)
                        return; /* on_grader_exit goes on */
                if (r != -ENOENT) {
                        log_warning_errno(r, "%s: cannot start grading", s->id);
                        if (s->has_task) {
                                free(s->verdict_error);
                                s->verdict_error = strdup("pomed could not start grading");
                        }
                }
        }
        finalize_complete(f);
}

static void on_exported(Pod *p, int err, const TwinReplyBytes *rb, void *userdata)
{
        Finalize *f = userdata;
        Sandbox *s = f->sandbox;
        const char *twin = pod_kind(p)->name;
        int r = err;
        /* the world as the pod wrote it (compact JSON): checked in one pass and kept as
         * bytes, not parsed and dumped again on the loop (10 MB worlds took ~200 ms) */
        if (r >= 0 &&
            (rb->status != 200 || !rb->body || !json_scan_compact(rb->body, rb->body_len, 4096)))
                r = -EPROTO;
        /* changes the twin made on its own by the end (a scheduled message come due) go on
         * its tape before the final state is written, as they do ahead of a call */
        SandboxTwin *st = NULL;
        for (size_t i = 0; i < s->n_twins; i++)
                if (s->twins[i].pod == p)
                        st = &s->twins[i];
        if (r >= 0 && st && json_array_size(rb->events) > 0) {
                char request_id[25], mount[128];
                if (front_request_id(request_id) < 0)
                        snprintf(request_id, sizeof(request_id), "req_finalize");
                snprintf(mount, sizeof(mount), "/%s/s/%s", twin, s->id);
                FrontCall fc = {.twin = twin,
                                .run_id = s->id,
                                .request_id = request_id,
                                .ts_usec = (int64_t)now_usec(CLOCK_REALTIME)};
                size_t i;
                json_t *ev;
                json_array_foreach (rb->events, i, ev) {
                        _cleanup_json_ json_t *row = front_event_row(&fc, mount, ev);
                        (void)sandbox_record(s, st, row);
                }
        }
        if (r >= 0 && s->env->runs) {
                /* the world as the run ended: what grading reads next to the tape */
                char name[64];
                snprintf(name, sizeof(name), "%s.final.json", twin);
                r = rundir_write(s->env->runs, s->id, name, rb->body, rb->body_len, true);
                if (r < 0)
                        storage_failed(f, name, r);
        }
        if (r < 0 && !f->failed) {
                f->failed = true;
                snprintf(f->failure, sizeof(f->failure), "cannot export the %s twin's state: %s",
                         twin, strerror(-r));
        }
        if (--f->pending == 0)
                finalize_finish(f);
}

int sandbox_finalize(Sandbox *s, const SandboxFinalizeSpec *spec, SandboxGoneFn done,
                     void *userdata, SandboxError *e)
{
        static const SandboxFinalizeSpec defaults = {};
        if (!spec)
                spec = &defaults;
        (void)sandbox_reconcile_clocks(s);
        if (s->state == SANDBOX_PROVISIONING)
                return sandbox_error(
                        e, SANDBOX_ERR_PROVISIONING, json_pack("{s:s}", "reason", "provisioning"),
                        "Sandbox %s is still starting; finalize it once it is ready.", s->id);
        if (!sandbox_state_is_open(s->state))
                return refuse_ended(s, e);
        if (s->finalizing)
                return sandbox_error(e, SANDBOX_ERR_PROVISIONING,
                                     json_pack("{s:s}", "reason", "finalizing"),
                                     "Sandbox %s is being finalized already.", s->id);
        if (spec->agent_reply && spec->reply_len > GRADE_AGENT_REPLY_KEEP)
                return sandbox_error(e, SANDBOX_ERR_INVALID,
                                     json_pack("{s:s, s:I}", "field", "agent_reply", "max_bytes",
                                               (json_int_t)GRADE_AGENT_REPLY_KEEP),
                                     "agent_reply is larger than %u bytes: send the end of the "
                                     "agent's output.",
                                     GRADE_AGENT_REPLY_KEEP);
        if (spec->task_markdown && set_task(s, spec->task_markdown, spec->task_len, e) < 0)
                return -1; /* refused: the sandbox stays open, nothing exported */
        Finalize *f = calloc(1, sizeof(*f));
        if (!f)
                return sandbox_error(e, SANDBOX_ERR_INTERNAL, NULL, "out of memory");
        *f = (Finalize){.sandbox = s,
                        .done = done,
                        .userdata = userdata,
                        .code_only = spec->code_only,
                        .agent_seal = spec->agent_seal};
        /* from now on the worlds and tapes are what the run ends with: no more twin calls */
        s->finalizing = true;
        /* the run is kept: its seeds next to the finals, before any grading */
        int rs = keep_seeds(s);
        if (rs < 0 && rs != -ENOENT)
                storage_failed(f, "the seeds", rs);
        if (spec->agent_reply && s->env->runs) {
                /* what the judge is shown of the agent's reply, kept with the run so that
                 * `pome eval` asks the same question */
                int r = rundir_write(s->env->runs, s->id, GRADE_AGENT_REPLY_FILE, spec->agent_reply,
                                     spec->reply_len, true);
                if (r < 0) {
                        log_warning_errno(r, "%s: cannot keep the agent's reply", s->id);
                        storage_failed(f, GRADE_AGENT_REPLY_FILE, r);
                }
        }
        /* +1 keeps the count from reaching 0 inside the loop */
        f->pending = 1;
        for (size_t i = 0; i < s->n_twins; i++) {
                Pod *p = s->twins[i].pod;
                if (!p || pod_export(p, s->env->cfg->request_timeout_usec, on_exported, f) < 0) {
                        f->failed = true;
                        snprintf(f->failure, sizeof(f->failure),
                                 "the %s twin cannot export its state", s->twins[i].kind->name);
                        continue;
                }
                f->pending++;
        }
        /* callbacks never run inside pod_export, so only this can reach 0 first */
        if (--f->pending == 0)
                finalize_finish(f);
        return 0;
}

/* ---- JSON ---- */

static json_t *per_twin_json(const Sandbox *s)
{
        json_t *o = json_object();
        for (size_t i = 0; o && i < s->n_twins; i++) {
                const SandboxTwin *st = &s->twins[i];
                const char *name = st->kind->name;
                char rest[512], mcp[560], openapi[560];
                snprintf(rest, sizeof(rest), "%s/%s/s/%s", strempty(*s->env->public_url), name,
                         s->id);
                snprintf(mcp, sizeof(mcp), "%s/mcp", rest);
                snprintf(openapi, sizeof(openapi), "%s/openapi.json", rest);
                json_t *t = json_pack("{s:s, s:s, s:s, s:s}", "rest_url", rest, "mcp_url", mcp,
                                      "openapi_url", openapi, "seed", st->seed_name);
                /* What an operator needs to find the pod on the host. */
                const char *pod_state = st->exit_how                       ? st->exit_how
                                        : st->pod && pod_is_ready(st->pod) ? "ready"
                                        : st->pod                          ? "starting"
                                                                           : "none";
                json_t *pod = json_pack("{s:s}", "state", pod_state);
                if (pod && st->pod && !pod_has_exited(st->pod)) {
                        json_object_set_new(pod, "pid", json_integer(pod_pid(st->pod)));
                        json_object_set_new(pod, "uid", json_integer(pod_uid(st->pod)));
                        const char *mem = pod_cgroup_path(st->pod, "memory");
                        if (mem)
                                json_object_set_new(pod, "cgroup", json_string(mem));
                }
                if (pod && st->exit_detail && *st->exit_detail)
                        json_object_set_new(pod, "detail", json_string(st->exit_detail));
                if (t && pod)
                        json_object_set_new(t, "pod", pod);
                else
                        json_decref(pod);
                json_object_set_new(o, name, t);
        }
        return o;
}

json_t *sandbox_to_json(const Sandbox *s)
{
        char created[RFC3339_MAX], expires[RFC3339_MAX], ended[RFC3339_MAX];
        format_rfc3339(s->created_at, created, sizeof(created));
        format_rfc3339(s->expires_at, expires, sizeof(expires));
        format_rfc3339(s->ended_at, ended, sizeof(ended));
        json_t *twins = json_array();
        for (size_t i = 0; twins && i < s->n_twins; i++)
                json_array_append_new(twins, json_string(s->twins[i].kind->name));
        return json_pack("{s:s, s:s, s:o, s:s, s:o, s:o, s:s, s:s, s:o, s:I, s:I, s:o, s:O?, "
                         "s:o}",
                         "session_id", s->id, "state", sandbox_state_to_string(s->state), "reason",
                         json_string_or_null(s->reason), "team_id", s->team->id, "task",
                         json_string_or_null(s->task), "twins", twins, "created_at", created,
                         "expires_at", expires, "ended_at",
                         s->ended_at ? json_string(ended) : json_null(), "idle_timeout_seconds",
                         (json_int_t)(s->idle_usec / USEC_PER_SEC), "calls", (json_int_t)s->calls,
                         "per_twin", per_twin_json(s), "verdict", s->verdict, "verdict_error",
                         json_string_or_null(s->verdict_error));
}

json_t *sandbox_credentials_json(const Sandbox *s)
{
        const uint8_t *key = s->env->secret;
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
                const TwinKind *k = s->twins[i].kind;
                json_t *c = front_provider_credentials(k, key, TOKEN_SECRET_LEN, s->id,
                                                       s->expires_at, *s->env->public_url);
                if (c) /* else a kind without a provider credential */
                        json_object_set_new(creds, k->name, c);
        }
        if (!creds || json_object_set_new(j, "session_token", json_string(session)) < 0 ||
            json_object_set_new(j, "agent_token", json_string(agent)) < 0 ||
            json_object_set_new(j, "provider_credentials", creds) < 0)
                return NULL;
        return TAKE_PTR(j);
}
