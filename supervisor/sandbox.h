/* SPDX-License-Identifier: MIT */
/*
 * One sandbox's life (DESIGN.md "Sandbox lifecycle"): the all-or-nothing start
 * of 1–3 pods, the lifetime and idle clocks, the tapes, finalize, the stop
 * policy and teardown on every path out.
 *
 *   provisioning → ready → running → done | expired | failed | stopped
 *
 * Its owner (the manager) reserves the slot before sandbox_admit() and is told
 * through SandboxHooks when the slot is free again (the moment the sandbox
 * leaves the open states) and when the teardown is complete (pods reaped,
 * cgroups gone, tapes closed, waiters answered): then it frees the sandbox. An
 * ended sandbox keeps nothing: its record lives on in the registry and its run
 * directory. Errors are domain errors (SandboxError); the surfaces map them to
 * HTTP (control.c, gateway.c) and D-Bus (bus.c).
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "common/httpd.h"
#include "common/util.h"
#include "pods/front/tape.h"
#include "pods/grade/grade.h"
#include "pods/twin/twin.h"
#include "supervisor/config.h"
#include "supervisor/image.h"
#include "supervisor/metrics.h"
#include "supervisor/pod.h"
#include "supervisor/teams.h"

typedef struct Registry Registry;
typedef struct RunDirs RunDirs;
typedef struct PodPool PodPool;

typedef enum SandboxState {
        SANDBOX_PROVISIONING,
        SANDBOX_READY,
        SANDBOX_RUNNING,
        SANDBOX_DONE,
        SANDBOX_EXPIRED,
        SANDBOX_FAILED,
        SANDBOX_STOPPED,
        _SANDBOX_STATE_MAX,
} SandboxState;

const char *sandbox_state_to_string(SandboxState s);
/* The state called s, or -EINVAL. */
int sandbox_state_from_string(const char *s);
bool sandbox_state_is_open(SandboxState s);

#define SANDBOX_TWINS_MAX     3          /* depth: fixed, no plan raises it */
#define SANDBOX_TASK_MAX      (1u << 20) /* bytes of a task file (what grade_task_load reads) */
#define SANDBOX_TASK_NAME_MAX 200        /* bytes of a task's name */

/* What went wrong, in the domain's words; each surface maps the code to its own. */
typedef enum SandboxErrorCode {
        SANDBOX_ERR_INVALID,       /* the request is malformed or names unknown things */
        SANDBOX_ERR_QUOTA,         /* the team has no free slot */
        SANDBOX_ERR_NOT_FOUND,     /* no such sandbox (for this caller) */
        SANDBOX_ERR_PROVISIONING,  /* still starting */
        SANDBOX_ERR_UNGRADED,      /* open and ungraded: stopping would discard its run */
        SANDBOX_ERR_ENDED,         /* has ended (not expired): nothing left to do */
        SANDBOX_ERR_EXPIRED,       /* its lifetime or idle clock ended it */
        SANDBOX_ERR_SHUTTING_DOWN, /* pomed is draining */
        SANDBOX_ERR_BUSY,          /* more creates wait than limits.max_queued_creates */
        SANDBOX_ERR_START_FAILED,  /* a pod did not come up; nothing was left running */
        SANDBOX_ERR_STORAGE,       /* the state directory cannot be written (507) */
        SANDBOX_ERR_UNISOLATED,    /* no cgroups, and allow_unlimited_pods is false (503) */
        SANDBOX_ERR_LEDGER,        /* the slot ledger (etcd) cannot be reached (503) */
        SANDBOX_ERR_INTERNAL,      /* out of memory, I/O */
} SandboxErrorCode;

typedef struct SandboxError {
        SandboxErrorCode code;
        char message[4096]; /* a sentence for the caller (a task's errors: one a line) */
        json_t *details;    /* owned, or NULL */
} SandboxError;

/* Fills e (releasing earlier details; takes ownership of details) and returns -1. */
int sandbox_error(SandboxError *e, SandboxErrorCode code, json_t *details, const char *fmt, ...)
        _printf_(4, 5);
void sandbox_error_done(SandboxError *e);

/*
 * The refusal for a sandbox that has ended, live or known only by its record: state "expired"
 * is SANDBOX_ERR_EXPIRED, any other SANDBOX_ERR_ENDED; reason may be NULL. Returns -1.
 */
int sandbox_error_ended(SandboxError *e, const char *id, const char *state, const char *reason);

typedef struct Sandbox Sandbox;

typedef struct SandboxTwin {
        Sandbox *sandbox; /* the sandbox it belongs to */
        const TwinKind *kind;
        const Image *image; /* its image (borrowed: images live as long as pomed) */
        char *seed_name;
        SeedText *seed;               /* what its pod loads; kept as <twin>.seed.json at the end */
        bool seed_kept;               /* <twin>.seed.json is written */
        Pod *pod;                     /* NULL once reaped */
        uint64_t spawned_usec;        /* CLOCK_MONOTONIC when its pod was spawned */
        Tape *tape;                   /* NULL once the sandbox has ended */
        char *exit_how, *exit_detail; /* set when the pod exited */
        char *upload_token; /* its kind's upload token (front_upload_token), minted once */
} SandboxTwin;

/* Called once when a create ends: s on success (state ready), else e. */
typedef void (*SandboxCreatedFn)(Sandbox *s, const SandboxError *e, void *userdata);
/* Called once when a sandbox's teardown is complete; s is freed right after. */
typedef void (*SandboxGoneFn)(Sandbox *s, void *userdata);

/* How a sandbox tells its owner. */
typedef struct SandboxHooks {
        void (*state_changed)(Sandbox *s, void *userdata); /* after it is recorded */
        void (*slot_released)(Sandbox *s, void *userdata); /* it left the open states */
        void (*gone)(Sandbox *s, void *userdata);          /* teardown done: unlink and free */
        void *userdata;
} SandboxHooks;

/* What every sandbox of one pomed shares (borrowed for the sandboxes' lifetimes). */
/*
 * What pomed could not write to its state directory yet (ENOSPC, EIO, EROFS, EDQUOT), kept
 * in memory until it can (DESIGN.md "Persistence"): tape rows stay on their tapes (a
 * tape of a sandbox gone is kept here), records here. While error is set, twin calls
 * and creates are refused with 507 insufficient_storage — a call that cannot be recorded
 * is not carried out — and the owner calls sandbox_storage_retry on a timer. Owned by the
 * manager; zero-initialised.
 */
typedef struct SandboxStorage {
        const struct SandboxEnv *env;  /* where records go */
        int error;                     /* negative errno of the write that failed; 0: none */
        uint64_t failed_usec;          /* CLOCK_MONOTONIC when it was set */
        struct PendingRecord *records; /* records to put again, oldest first */
        Tape **tapes;                  /* tapes of sandboxes gone, with rows kept */
        size_t n_tapes;
        void (*failed)(void *userdata); /* error was just set: arm the retry timer */
        void *userdata;
} SandboxStorage;

typedef struct SandboxEnv {
        sd_event *event;
        const Config *cfg;
        const PodEnv *pods;
        Registry *registry; /* may be NULL (tests) */
        RunDirs *runs;      /* may be NULL: tapes then go to anonymous files */
        const uint8_t *secret;
        const char *const *public_url; /* points at the owner's current value */
        Metrics *metrics;              /* may be NULL */
        PodPool *pool;                 /* warm pods to hand out, or NULL */
        const GradeJudge *judge;       /* asked about [model] criteria at finalize, or NULL */
        uint64_t judge_budget_usec;    /* the longest one question to judge may take */
        SandboxStorage *storage;       /* may be NULL (tests): failed writes are only logged */
        const char *id_prefix;         /* of new sandboxes' ids: "ses_", or "ses_<node>_" in a
                                        * fleet (NULL: "ses_") */
        SandboxHooks hooks;
} SandboxEnv;

/* Bytes of a sandbox id and its NUL: "ses_" + 16 base62, or in a fleet "ses_<node>_" + 16
 * (FLEET_NODE_MAX). */
#define SANDBOX_ID_SIZE 40u

/* Read-only outside sandbox.c. */
struct Sandbox {
        const SandboxEnv *env;
        char id[SANDBOX_ID_SIZE];
        Team *team;
        char *task;
        SandboxState state;
        char *reason; /* why it ended: lifetime, idle, discarded, finalized, tape_full,
                       * pod_exited:<twin>:<how>, pod_hung:<twin>, supervisor_stopped… */
        SandboxTwin twins[SANDBOX_TWINS_MAX];
        size_t n_twins;
        /* seconds since the epoch, for display and tokens: created_at is read once, the
         * others derived from it by the boot clock (ended 0 = open) */
        int64_t created_at, expires_at, ended_at;
        uint64_t created_boot_usec; /* CLOCK_BOOTTIME at creation: every duration's start */
        uint64_t lifetime_usec;     /* the lifetime clock, from created_boot_usec */
        bool idle_grace;            /* the idle clock, fired late, gave waiting calls a turn */
        uint64_t idle_usec;         /* 0 = no idle clock */
        uint64_t calls;             /* twin calls recorded */
        char discard_token[40];
        bool has_task;             /* runs/<sid>/task.md holds the task finalize grades against */
        bool task_named;           /* task is the caller's name, not the task file's title */
        json_t *verdict;           /* once graded: the verdict's {state, passed, score, counts} */
        char *verdict_error;       /* why a finalize could not grade, or NULL */
        bool finalizing;           /* a finalize is exporting or grading: no more twin calls */
        unsigned n_model_criteria; /* the task's [model] criteria (the grading child's time) */
        /* private */
        struct Grader *grader; /* the grading child of a finalize, while it runs */
        sd_event_source *lifetime_timer, *idle_timer, *start_timer;
        uint64_t spawn_usec; /* CLOCK_MONOTONIC when sandbox_start started it, 0 before */
        bool starting;       /* the manager counts it among the sandboxes starting */
        Sandbox *queue_next; /* the manager's admission queue: the next waiting, or NULL */
        bool queued;         /* in that queue */
        bool discard, gone;
        unsigned live_pods;
        struct SandboxWaiter *waiters;
        struct HeldReply *held; /* twin replies waiting for their tape rows to be on disk */
        SandboxCreatedFn on_created;
        void *created_userdata;
        Sandbox *prev, *next; /* the owner's list */
};

/* A validated create request: images found, seeds read. */
typedef struct SandboxSpec {
        const Image *images[SANDBOX_TWINS_MAX];
        const char *seed_names[SANDBOX_TWINS_MAX];
        SeedText *seeds[SANDBOX_TWINS_MAX]; /* seed JSON text, borrowed (sandbox_new refs it) */
        size_t n_twins;
        uint64_t ttl_usec;         /* lifetime: already capped */
        uint64_t idle_usec;        /* idle clock: already capped; 0 = off */
        const char *task;          /* NULL = none */
        bool task_named;           /* task was given by the caller (not taken from the task file) */
        const char *task_markdown; /* the task file (NULL = none), borrowed until sandbox_admit */
        size_t task_markdown_len;
        unsigned n_model_criteria; /* the task's [model] criteria: what a judge will be asked */
} SandboxSpec;

/*
 * Parses a task file (len bytes of hosted Pome's task Markdown, CONTRACT.md "Task file";
 * messages name it task.md) for a sandbox of the n twins named twins, with grade_task_parse:
 * the task's twins must be exactly the sandbox's (in any order) and every criterion's twin
 * one of them. Returns 0 with the task in *ret (grade_task_free) and, when ret_name is not
 * NULL, its title cut to SANDBOX_TASK_NAME_MAX bytes on a character boundary (new string, or
 * NULL when the title is empty) in *ret_name; -1 with e filled (SANDBOX_ERR_INVALID: too
 * large, "task.md:LINE: …" from the parser, twins that differ; SANDBOX_ERR_INTERNAL).
 */
int sandbox_task_parse(const char *text, size_t len, const char *const *twins, size_t n,
                       GradeTask **ret, char **ret_name, SandboxError *e);

/* How many of t's criteria are [model] ones. */
unsigned sandbox_task_model_criteria(const GradeTask *t);

/*
 * A new sandbox of team t in state provisioning (nothing started yet: no pod, no clock).
 * Returns 0 or -ENOMEM.
 */
int sandbox_new(const SandboxEnv *env, Team *t, const SandboxSpec *spec, Sandbox **ret);

/*
 * Records an open sandbox as failed for reason without tearing it down (pomed going away
 * without a drain: sandbox_free kills its pods next). Nothing for an ended one.
 */
void sandbox_abandon(Sandbox *s, const char *reason);

/* Frees a sandbox that never spawned or whose teardown is complete. Accepts NULL. */
void sandbox_free(Sandbox *s);

/*
 * Admits s, still provisioning: its run directory and tapes (from spec, which may go after
 * this returns) and its lifetime clock. cb runs exactly once, when the create is answered:
 * with s once its pods are up (sandbox_start), else with the error. A failure here ends s
 * (failed, start_failed), reported through cb after the teardown, maybe before this returns.
 */
void sandbox_admit(Sandbox *s, const SandboxSpec *spec, SandboxCreatedFn cb, void *userdata);

/*
 * Starts an admitted sandbox's pods, one per twin (a warm one from the pool when there is
 * one), its start clock (limits.start_timeout, from now) and its idle clock. Nothing when s
 * is no longer provisioning or has started already. A pod that cannot even be spawned ends s
 * (failed, start_failed): s may be gone when this returns.
 */
void sandbox_start(Sandbox *s);

/*
 * Ends an open sandbox: state and reason are set now, the slot is released now, pods are
 * killed; gone (may be NULL) runs when the teardown is complete, before s is freed.
 * discard throws the run directory away. Ending an ended sandbox only queues gone.
 */
void sandbox_end(Sandbox *s, SandboxState state, const char *reason, bool discard,
                 SandboxGoneFn gone, void *userdata);

/*
 * Ends s (expired, lifetime) when its lifetime has passed on the boot clock but its lifetime
 * timer has not run yet (the timer may be a few ms late). The owner calls this on every
 * lookup, so every surface sees the same state. The wall clock plays no part: a step of it
 * ends no sandbox early nor keeps one late. Nothing while a finalize is under way (it took
 * the worlds before the clock ran out, and ends s with its verdict); the lifetime and idle
 * timers hold off then too. Returns whether s is still open.
 */
bool sandbox_reconcile_clocks(Sandbox *s);

/*
 * The stop policy, one for every surface (DESIGN.md "stop"). An expired sandbox →
 * SANDBOX_ERR_EXPIRED; another ended one → nothing to do (gone queued, 0); still
 * provisioning → SANDBOX_ERR_PROVISIONING; open → discarded when confirmed is true or
 * confirm_token equals its discard_token, else SANDBOX_ERR_UNGRADED (details carry the
 * discard_token). Returns 0 (gone will run) or -1 with e filled (gone will not).
 */
int sandbox_stop(Sandbox *s, const char *confirm_token, bool confirmed, SandboxGoneFn gone,
                 void *userdata, SandboxError *e);

/* What a finalize brings besides the sandbox. All borrowed; a zeroed struct is the default. */
typedef struct SandboxFinalizeSpec {
        const char *task_markdown; /* sets or replaces the task (task_len bytes); NULL = keep
                                    * the sandbox's task, if any */
        size_t task_len;
        const char *agent_reply; /* the end of the agent's stdout for the judge
                                  * (runs/<sid>/agent-reply.txt), reply_len bytes of UTF-8;
                                  * NULL = not given */
        size_t reply_len;
        bool code_only;       /* [model] criteria deliberately not judged */
        GradeSeal agent_seal; /* whether the agent ran sealed, as its runner said (the
                               * verdict's agent_sealed) */
} SandboxFinalizeSpec;

/*
 * Ends an open sandbox and keeps its run: every twin's world is written to
 * runs/<sid>/<twin>.final.json; then, when the sandbox has a task, the run is graded
 * (grade_run_dir, the code `pome eval` runs) into runs/<sid>/verdict.json and its summary
 * kept in s->verdict — or, when grading fails, the reason in s->verdict_error (logged; the
 * run is finalized all the same); then runs/<sid>/summary.md (grade_summary_run_dir, with or
 * without a task); then the sandbox is done (finalized) and torn down; done
 * runs when the teardown is complete. Grading runs in a child of pomed (DESIGN.md "Grading
 * runs in a child"), with env->judge for [model] criteria.
 * spec (NULL: the defaults): its task_markdown sets or replaces the task first
 * (runs/<sid>/task.md), checked as sandbox_task_parse does; its agent_reply is kept as
 * runs/<sid>/agent-reply.txt (at most GRADE_AGENT_REPLY_KEEP bytes: its end) before grading.
 * Returns -1 with e filled (provisioning, ended, expired, a task refused, a reply too large),
 * else 0.
 */
int sandbox_finalize(Sandbox *s, const SandboxFinalizeSpec *spec, SandboxGoneFn done,
                     void *userdata, SandboxError *e);

/* The twin called twin, or NULL. */
SandboxTwin *sandbox_twin(Sandbox *s, const char *twin);

/* A routed twin call arrived: ready → running, and the idle clock restarts. */
void sandbox_touch(Sandbox *s);

/* Only the idle clock restarts: a call arrived that was refused (it counts as activity,
 * not as a call). */
void sandbox_restart_idle(Sandbox *s);

/*
 * Records one served call of twin t: its tape row (borrowed) goes on the tape before the
 * caller sees the reply (sandbox_hold_reply). A sandbox whose tapes reach limits.max_tape
 * ends (failed, tape_full) after this row. A row the state directory refuses stays kept
 * (SandboxStorage) and is written later. Returns 0, or negative errno when the row could not
 * even be kept (out of memory: the sandbox ends failed, tape_error:<twin>).
 */
int sandbox_record(Sandbox *s, SandboxTwin *t, const json_t *row);

/* sandbox_record of a row already serialized (tape_append_line; line NULL: not built). */
int sandbox_record_line(Sandbox *s, SandboxTwin *t, const char *line, size_t len,
                        const char *event_id);

/*
 * The reply to a call of twin t that put rows on s's tapes is about to be set on rq: while
 * any of those rows is not on disk yet, the reply is held (http_request_hold) and goes out
 * once they are. One not written within limits.request_timeout is answered instead with 507
 * insufficient_storage in the twin's envelope (the call was carried out; its row is kept
 * and written once there is room). request_id is copied.
 */
void sandbox_hold_reply(Sandbox *s, SandboxTwin *t, HttpRequest *rq, const char *request_id);

/* Whether twin calls and creates are refused now: a write to the state directory failed and
 * what it kept is not written yet (env->storage). */
bool sandbox_storage_blocked(const SandboxEnv *env);

/*
 * Writes what st keeps: the kept rows of the sandboxes in list (linked by next) and of the
 * tapes of sandboxes gone, then the records; releases the replies that waited for them.
 * Returns 0 once everything is written (st->error is cleared), else the negative errno of
 * a write that failed again.
 */
int sandbox_storage_retry(SandboxStorage *st, Sandbox *list);

/* Frees what st keeps (pomed exiting: what is still kept is lost, and said). */
void sandbox_storage_done(SandboxStorage *st);

/* Public JSON of a sandbox (no secrets). New reference. */
json_t *sandbox_to_json(const Sandbox *s);

/*
 * The create response: sandbox JSON plus session_token, agent_token and
 * provider_credentials minted now. New reference, NULL on OOM.
 */
json_t *sandbox_credentials_json(const Sandbox *s);
