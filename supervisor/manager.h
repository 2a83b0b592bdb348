/* SPDX-License-Identifier: MIT */
/*
 * The manager: every sandbox of one pomed and what they share. It finds an open
 * sandbox by id in one lookup (with its clocks reconciled, so every surface sees
 * the same state), validates creates and hands out the teams' slots, keeps the
 * records of ended sandboxes in the registry and collects them after their
 * retention, and drains everything on SIGTERM. pomed is single-threaded: all of
 * this runs on its event loop.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <systemd/sd-event.h>

#include "supervisor/config.h"
#include "supervisor/ledger.h"
#include "supervisor/sandbox.h"
#include "supervisor/statedir.h"
#include "supervisor/teams.h"

typedef struct Manager Manager;

/* A create as a surface received it (names not yet validated). */
typedef struct SandboxRequest {
        const char *twins[SANDBOX_TWINS_MAX];
        const char *seeds[SANDBOX_TWINS_MAX];       /* NULL = the image's default seed */
        const json_t *seed_docs[SANDBOX_TWINS_MAX]; /* an inline seed (wins over seeds[]) */
        size_t n_twins;                             /* as requested (may exceed the maximum) */
        uint64_t ttl_usec;                          /* 0 = the configured lifetime; capped at it */
        int64_t idle_usec;         /* < 0 = the configured idle timeout, 0 = off; capped at it */
        const char *task;          /* NULL = none; with a task_markdown, its title */
        const char *task_markdown; /* the task file (hosted Pome's Markdown), NULL = none; its
                                    * seed of a twin is used when seeds[] names none */
        size_t task_markdown_len;
} SandboxRequest;

/* Observers of state changes and slot counts (D-Bus, logs). */
typedef struct ManagerObserver {
        void (*state_changed)(Sandbox *s, void *userdata);
        void (*team_changed)(Team *t, void *userdata);
        void *userdata;
} ManagerObserver;

/*
 * Prepares everything (images, pod host, registry, run directories), marks what a previous
 * pomed left open as failed (supervisor_restarted) and starts the retention collector.
 * Returns 0, or negative errno with a sentence in err (errlen bytes).
 */
int manager_new(sd_event *e, const Config *cfg, StateDir *state, Manager **ret, char *err,
                size_t errlen);

/*
 * Frees everything. Sandboxes still open are recorded as failed (supervisor_stopped) and
 * their pods killed synchronously; after manager_drain() there are none. Accepts NULL.
 */
Manager *manager_free(Manager *m);

void manager_set_observer(Manager *m, const ManagerObserver *o);

/* Comma-separated missing isolation layers ("" when complete). */
const char *manager_missing_layers(const Manager *m);

/* Below this many free bytes the state directory is reported full (/healthz, /metrics). */
#define MANAGER_STATE_DIR_FULL_BYTES (16u * 1024 * 1024)

/* Below this many free bytes no sandbox is created (507 insufficient_storage): its record,
 * seeds and first tape rows would not fit. */
#define MANAGER_CREATE_MIN_BYTES (256u * 1024)

/* Below this many free bytes an open sandbox is not finalized (507 insufficient_storage, it
 * stays open): its seeds, final states, verdict and summary would not fit. */
#define MANAGER_FINALIZE_MIN_BYTES (1024u * 1024)

/*
 * The state directory's filesystems (statvfs(3) of it and of its runs/): {path, free_bytes
 * (what pomed may still write, on the fuller of the two), full (free_bytes below
 * MANAGER_STATE_DIR_FULL_BYTES, either read-only, or a write refused and not yet redone),
 * read_only, error (strerror of that refused write, absent when none)}, a new object; NULL
 * when it cannot be read (out of memory, a directory gone).
 */
json_t *manager_state_dir_json(const Manager *m);

/*
 * What isolation the pods get, as /healthz shows it for `pome doctor` (a new reference, NULL
 * on OOM): {cgroups: {active, layout, tree}, seccomp, namespaces, pod_user, pod_uid_range}.
 */
json_t *manager_isolation_json(const Manager *m);

Teams *manager_teams(Manager *m);
/* The slot ledger (local, or the fleet's etcd): borrowed, lives as long as m. */
Ledger *manager_ledger(Manager *m);

/* Applies the teams of a reloaded configuration (SIGHUP) and mirrors them in the registry. */
int manager_reload_teams(Manager *m, const Config *cfg);

/*
 * Starts a sandbox for team t. Returns -1 with e filled when refused at once (invalid,
 * quota, shutting down); otherwise 0 and cb runs exactly once — possibly before this
 * returns (a pod that cannot even be spawned).
 */
int manager_create(Manager *m, Team *t, const SandboxRequest *rq, SandboxCreatedFn cb,
                   void *userdata, SandboxError *e);

/*
 * The sandbox with this id that pomed still holds (open, or ended and being torn down),
 * its clocks reconciled first; NULL when there is none — an ended sandbox's record is then
 * in the registry (manager_record()).
 */
Sandbox *manager_get(Manager *m, const char *id);

/*
 * The record of sandbox id as a surface shows it (new reference in *ret): live when pomed
 * holds it, else as last written to the registry. 0, -ENOENT, -EIO.
 */
int manager_record(Manager *m, const char *id, json_t **ret);

/*
 * Stops sandbox id, held or only recorded, with the one stop policy (sandbox_stop()). team:
 * the caller's team (another team's sandbox is SANDBOX_ERR_NOT_FOUND), or NULL for root
 * over D-Bus. gone runs once the teardown is complete — at once (s NULL) for a sandbox
 * only on record. Returns 0 or -1 with e filled.
 */
int manager_stop(Manager *m, const Team *team, const char *id, const char *confirm_token,
                 bool confirmed, SandboxGoneFn gone, void *userdata, SandboxError *e);

/* sandbox_finalize() of sandbox id of team (spec: as there), with the same
 * not-found rules. */
int manager_finalize(Manager *m, const Team *team, const char *id, const SandboxFinalizeSpec *spec,
                     SandboxGoneFn done, void *userdata, SandboxError *e);

/*
 * The file name ("verdict.json", "github.final.json"…) of the run sandbox id of team left
 * (runs/<id>/), as a new path in *ret_path, for as long as the run is kept. Returns 0, or
 * -1 with e filled: SANDBOX_ERR_NOT_FOUND naming what is missing (no such sandbox for the
 * team, a run discarded or past its retention, a file the run does not have).
 */
int manager_run_file(Manager *m, const Team *team, const char *id, const char *name,
                     char **ret_path, SandboxError *e);

/*
 * Which twin of sandbox id of team a read names: twin, or the sandbox's first when NULL; its
 * kind name into *ret_twin (borrowed from a static table). Returns 0, or -1 with e filled:
 * SANDBOX_ERR_INVALID for a twin the sandbox lacks, SANDBOX_ERR_NOT_FOUND for a sandbox the
 * team has none of.
 */
int manager_run_twin(Manager *m, const Team *team, const char *id, const char *twin,
                     const char **ret_twin, SandboxError *e);

/*
 * The tape of twin (NULL: the sandbox's first) of sandbox id of team, for reading: the live
 * one while pomed holds the sandbox (borrowed: *ret_owned false), else its run's file opened
 * read-only (*ret_owned true: the caller frees it). Its twin names and the first one's
 * name into *ret_twin (borrowed from a static table). Returns 0, or -1 with e filled:
 * SANDBOX_ERR_INVALID for a twin the sandbox lacks, SANDBOX_ERR_NOT_FOUND as
 * manager_run_file.
 */
int manager_run_tape(Manager *m, const Team *team, const char *id, const char *twin, Tape **ret,
                     bool *ret_owned, const char **ret_twin, SandboxError *e);

/*
 * Writes into reg a record for every run directory of runs whose sandbox.json reads
 * (session_id its name, created_at a time); the others are left out, with a warning, and
 * their directories stay. What an empty or rebuilt registry knows after a loss of pome.db.
 * The number written in *ret_n. 0, -EIO, -ENOMEM.
 */
int manager_rebuild_records(Registry *reg, RunDirs *runs, size_t *ret_n);

/*
 * Sandboxes of team_id (NULL: all), newest first, filtered like the API's ?state= (NULL or
 * "all", "running" = ready + running, or a state name), after the record of id after (may be
 * NULL; registry_list), at most limit: a new array of their records, open ones shown live.
 * 0, -ENOENT (no such cursor), -EIO, -ENOMEM.
 */
int manager_list(Manager *m, const char *team_id, const char *state, const char *after,
                 unsigned limit, json_t **ret, bool *ret_more);

/*
 * Graceful stop (SIGTERM): from now on creates are refused (SANDBOX_ERR_SHUTTING_DOWN) and
 * sandboxes still provisioning fail (supervisor_stopped); calls in flight may finish until
 * limits.drain_timeout, then every open sandbox fails (supervisor_stopped) and is torn
 * down; done runs when nothing is left. Calling it again runs done as soon as possible.
 */
void manager_drain(Manager *m, void (*done)(void *userdata), void *userdata);
bool manager_draining(const Manager *m);

/* The counters the sandboxes and the gateway report to (borrowed). */
Metrics *manager_metrics(Manager *m);

/*
 * Writes GET /metrics to f: the live gauges (sandboxes by team and state, slots used and
 * quota by team, the same numbers /v1/usage and D-Bus show) and every counter and
 * histogram of manager_metrics(). 0 or -EIO.
 */
int manager_write_metrics(Manager *m, FILE *f);

/* The configuration m runs with (borrowed; replaced only by a restart). */
const Config *manager_config(const Manager *m);

const char *manager_public_url(const Manager *m);
void manager_set_public_url(Manager *m, const char *url);
const uint8_t *manager_secret(const Manager *m);
