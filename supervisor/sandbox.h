/* SPDX-License-Identifier: MIT */
/*
 * Sandboxes and their manager (DESIGN.md "Sandbox lifecycle"): all-or-nothing
 * start of 1–3 pods, the lifetime and idle clocks, teams and their concurrency
 * slots, teardown on every path out, tombstones that answer 410.
 *
 *   provisioning → ready → running → done | expired | failed | stopped
 *
 * A slot is reserved before any pod is spawned and released the moment a
 * sandbox leaves the open states (provisioning, ready, running).
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "common/util.h"
#include "config.h"
#include "pod.h"
#include "statedir.h"
#include "tape.h"

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

#define SANDBOX_TWINS_MAX 3 /* depth: fixed, no plan raises it */

/* An error meant for an API caller: HTTP status, envelope type, a sentence, details. */
typedef struct ApiError {
        int status;
        const char *type; /* static: CONTRACT.md error types */
        char message[512];
        json_t *details; /* owned, or NULL */
} ApiError;

/* Fills e (releasing previous details; takes ownership of details) and returns -1. */
int api_error(ApiError *e, int status, const char *type, json_t *details, const char *fmt, ...)
        _printf_(5, 6);
void api_error_done(ApiError *e);

typedef struct Team {
        char *id;
        char **key_hashes; /* hex SHA-256, NULL-terminated */
        unsigned quota;
        unsigned used; /* open sandboxes now */
        char *plan_tier;
        bool removed; /* dropped from the configuration on reload; kept while it has sandboxes */
} Team;

typedef struct Sandbox Sandbox;
typedef struct Manager Manager;

typedef struct SandboxTwin {
        const TwinKind *kind;
        char *seed_name;
        Pod *pod;
        Tape *tape;
        char *exit_how, *exit_detail; /* set when the pod exited */
} SandboxTwin;

struct Sandbox {
        Manager *manager;
        char id[32];
        Team *team;
        char *task;
        SandboxState state;
        char *reason; /* why it ended: lifetime, idle, stopped, discarded, finalized,
                       * pod_exited, start_failed, supervisor_restarted… */
        SandboxTwin twins[SANDBOX_TWINS_MAX];
        size_t n_twins;
        int64_t created_at, expires_at, ended_at; /* seconds since the epoch (ended 0 = open) */
        uint64_t idle_usec;                       /* 0 = no idle clock */
        sd_event_source *lifetime_timer, *idle_timer, *start_timer, *retention_timer;
        char *run_dir;
        char discard_token[40];
        bool discard; /* throw run dir away once torn down */
        unsigned live_pods;
        uint64_t calls; /* routed twin calls served */
        /* waiters for the end of teardown (create failure replies, DELETE replies) */
        struct SandboxWaiter *waiters;
        /* the create request, while provisioning */
        void (*on_created)(Sandbox *s, const ApiError *e, void *userdata);
        void *created_userdata;
        Sandbox *prev, *next;
};

typedef struct SandboxRequest {
        const char *twins[SANDBOX_TWINS_MAX];
        const char *seeds[SANDBOX_TWINS_MAX]; /* NULL = the image's default seed */
        size_t n_twins;
        uint64_t ttl_usec; /* 0 = the configured lifetime; capped at 30 min */
        int64_t idle_usec; /* < 0 = the configured idle timeout, 0 = off; capped at it */
        const char *task;  /* NULL = none */
} SandboxRequest;

/* Called once when a create ends: s set on success (state ready), else e set. */
typedef void (*SandboxCreatedFn)(Sandbox *s, const ApiError *e, void *userdata);
/* Called once when a sandbox's teardown has finished (pods reaped, cgroups gone). */
typedef void (*SandboxGoneFn)(Sandbox *s, void *userdata);
/* Observers of state changes and slot counts (D-Bus, logs). */
typedef struct ManagerObserver {
        void (*state_changed)(Sandbox *s, void *userdata);
        void (*team_changed)(Team *t, void *userdata);
        void *userdata;
} ManagerObserver;

/*
 * Prepares everything pods need (cgroup tree, seccomp programs, notify socket,
 * images) and cleans what a previous pomed left. Layers that cannot be had here
 * (no root, no cgroup access) are logged as warnings and listed by
 * manager_missing_layers(); anything else failing is an error with err filled.
 */
int manager_new(sd_event *e, const Config *cfg, StateDir *state, Manager **ret, char *err,
                size_t errlen);

/* Kills every pod synchronously, frees everything. Accepts NULL; returns NULL. */
Manager *manager_free(Manager *m);

void manager_set_observer(Manager *m, const ManagerObserver *o);

/* Comma-separated missing isolation layers ("" when complete), for warnings and doctor. */
const char *manager_missing_layers(const Manager *m);

/* Team for an API key (constant-time compare of SHA-256 hashes), or NULL. */
Team *manager_team_by_key(Manager *m, const char *api_key);
Team *manager_team_by_id(Manager *m, const char *id);
Team *const *manager_teams(Manager *m, size_t *ret_n);

/*
 * Sets team t's concurrency quota (slots) at run time, as D-Bus SetQuota does. Open
 * sandboxes are never touched: a quota below sessions_used only refuses new ones.
 * Lasts until the next configuration reload. Observers see a team change.
 */
void manager_set_quota(Manager *m, Team *t, unsigned quota);

/*
 * Applies the teams of a reloaded configuration (SIGHUP): quotas, plan tiers and keys
 * change, new teams appear, teams no longer configured lose their keys but keep
 * their open sandboxes (and their object, so counts stay right). Open sandboxes are
 * never touched. Returns 0 or -ENOMEM (teams then partly updated, all consistent).
 */
int manager_reload_teams(Manager *m, const Config *cfg);

/*
 * Starts a sandbox for team t. Returns -1 with e filled when refused at once
 * (validation 422, quota 402); otherwise 0 and cb runs exactly once — possibly
 * before manager_create returns (a pod that cannot even be spawned).
 */
int manager_create(Manager *m, Team *t, const SandboxRequest *rq, SandboxCreatedFn cb,
                   void *userdata, ApiError *e);

/* Sandbox (open or tombstone) by id, or NULL. */
Sandbox *manager_find(Manager *m, const char *id);

/* First sandbox in creation order (newest first); iterate with s->next. */
Sandbox *manager_sandboxes(Manager *m);

/*
 * Ends an open sandbox: state (stopped, expired, failed, done) and reason are set
 * now and the slot is released now; pods are killed; gone (may be NULL) runs when
 * teardown is complete. discard removes the run directory. Ending an ended
 * sandbox only queues gone (called at once when teardown is already complete).
 */
void sandbox_end(Sandbox *s, SandboxState state, const char *reason, bool discard,
                 SandboxGoneFn gone, void *userdata);

/*
 * Ends s (expired, lifetime) when its expires_at has passed on the wall clock but the
 * lifetime timer has not run yet — callers that read a sandbox's state ask this first
 * so that a token's exp and the sandbox's state never disagree. Returns whether s is
 * still open.
 */
bool sandbox_check_clocks(Sandbox *s);

/*
 * Ends an open sandbox and keeps its run: every twin's world is exported into
 * runs/<sid>/<twin>.final.json next to its tape, then the sandbox is done
 * (reason finalized), torn down and its slot released; done runs then. Grading
 * against a task's criteria is not part of this yet. Returns -1 with e filled (409
 * still provisioning or already ended, 410 expired), else 0.
 */
int sandbox_finalize(Sandbox *s, SandboxGoneFn done, void *userdata, ApiError *e);

/* Records a routed twin call: ready → running, idle clock reset. */
void sandbox_touch(Sandbox *s);

/* Twin name of s (its pod is NULL once torn down), or NULL when s holds no such twin. */
SandboxTwin *sandbox_twin(Sandbox *s, const char *twin);

/* Public JSON of a sandbox (no secrets). New reference. */
json_t *sandbox_to_json(const Sandbox *s);

/*
 * The create response: sandbox JSON plus session_token, agent_token and
 * provider_credentials minted now. New reference, NULL on OOM.
 */
json_t *sandbox_credentials_json(const Sandbox *s);

typedef struct Registry Registry;
/* The registry (history of every sandbox), borrowed. */
Registry *manager_registry(Manager *m);

/* The gateway's public base URL ("http://127.0.0.1:7071"). */
const char *manager_public_url(const Manager *m);
void manager_set_public_url(Manager *m, const char *url);
const Config *manager_config(const Manager *m);
const uint8_t *manager_secret(const Manager *m);
