/* SPDX-License-Identifier: MIT */
/*
 * One trial of `pome run`: one independent attempt of the agent at the task, in a sandbox of
 * its own (created from the task on pomed, finalized there, graded by pomed) or, with
 * --local, against twins served in-process by pome (graded by the linked library), with its
 * own run directory either way.
 *
 * The agent is told nothing of the run directory (it gets $POME_AGENT_TMP, a scratch
 * directory of its own, removed when it exits), and the directory does not exist while it
 * runs: its stdout and stderr go to unlinked files, and the directory is made afresh once it
 * has exited, from what pome holds — the task bytes parsed before the start, the seeds — and,
 * with --local, graded from memory (the twins' exported worlds, the tape rows they recorded),
 * so nothing the agent could reach is read back to grade it:
 *
 *   task.md (+ task.seed.json)    the task as given
 *   <twin>.seed.json              the seed each twin booted from
 *   <twin>.tape.jsonl             the calls each twin served
 *   <twin>.final.json             each twin's world at the end (through the control API:
 *                                 pomed's state dir need not be readable)
 *   verdict.json, summary.md      the verdict (grade_verdict_render's bytes) and pomed's
 *                                 summary, when it serves one
 *   stdout.txt, stderr.txt        the agent's output
 *   meta.json                     task, sandbox id, times, agent command and exit status
 *
 * A trial runs on the caller's sd-event loop; control API calls block it briefly (they are
 * local and short), the agent and the in-process twins never do.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "cli/agent.h"
#include "cli/config.h"
#include "cli/seal.h"
#include "pods/grade/grade.h"

/* Between SIGTERM to the agent's process group at its timeout and SIGKILL. */
#define TRIAL_KILL_GRACE_SEC 5u

/* What every trial of one `pome run` shares (owned by the caller, outliving the trials). */
typedef struct RunPlan {
        sd_event *event;
        const Config *config;        /* the control API; NULL with --local */
        const GradeTask *task;       /* the task, parsed under the name the user gave it */
        const GradeTask *grade_task; /* the same bytes parsed as the run directory's task.md
                                      * (--local grades with it, so `pome eval` of the run
                                      * directory reproduces verdict.json byte for byte) */
        const char *task_path;       /* as given on the command line */
        const char *task_text;       /* the task file's bytes */
        size_t task_len;
        const char *sidecar_text; /* <task>.seed.json's bytes, NULL when there is none */
        size_t sidecar_len;
        const json_t *seeds; /* {twin: seed} of each twin a seed is known for */
        char *const *agent_argv;
        const char *out_dir; /* absolute: run directories go to <out_dir>/<id>/ */
        unsigned n_trials;
        bool keep;                /* leave the sandbox open, ungraded */
        const GradeJudge *judge;  /* --local: asked about [model] criteria; NULL: none */
        bool code_only;           /* [model] criteria deliberately not judged */
        const uint8_t *local_key; /* --local: the token secret of the in-process twins */
        size_t local_key_len;
        const char *local_admin_token; /* --local: their X-Admin-Token, never the agent's */
        Seal *seal;                    /* the agents run sealed (NULL: --no-seal) */
        uint64_t output_max;           /* bytes kept of each of the agent's stdout and stderr */
        const char *cwd;               /* the agent's working directory (absolute) */
        int shell_tty;                 /* --shell: the pty's slave the shell runs on (the agent
                                        * command is the shell; no timeout, no grading), else
                                        * -1 */
        bool announce;                 /* say on stderr when a trial waits for a slot */
        void (*say)(const char *line); /* prints one informational line (clears progress) */
} RunPlan;

typedef enum TrialPhase {
        TRIAL_PENDING,      /* not started */
        TRIAL_WAITING_SLOT, /* the team's quota is full: retrying the create */
        TRIAL_AGENT,        /* the agent is running */
        TRIAL_GRADING,      /* finalizing, collecting the run directory */
        TRIAL_DONE,
} TrialPhase;

typedef enum TrialOutcome {
        TRIAL_GRADED,      /* has a verdict */
        TRIAL_KEPT,        /* --keep: the sandbox is open, no verdict */
        TRIAL_FAILED,      /* no verdict: trial_error says why */
        TRIAL_INTERRUPTED, /* pome was interrupted: agent killed, sandbox discarded */
        TRIAL_SHELL,       /* --shell: the shell exited, the sandbox was discarded ungraded */
} TrialOutcome;

typedef struct Trial Trial;

/* Called once when the trial reaches TRIAL_DONE (from the loop, never inside trial_start). */
typedef void (*TrialDoneFn)(Trial *t, void *userdata);

/* A new pending trial number (1-based) of plan. NULL on OOM. */
Trial *trial_new(RunPlan *plan, unsigned number, TrialDoneFn done, void *userdata);

/* Frees a trial (its twins, agent, timers). Accepts NULL; returns NULL. */
Trial *trial_free(Trial *t);

/* Starts a pending trial. done follows, whatever happens. */
void trial_start(Trial *t);

/*
 * pome is being interrupted: kill the agent (SIGTERM to its group, then SIGKILL after the
 * grace period; at once with now), discard the sandbox instead of grading it. A trial
 * waiting for a slot ends at once. done follows.
 */
void trial_interrupt(Trial *t, bool now);

TrialPhase trial_phase(const Trial *t);
TrialOutcome trial_outcome(const Trial *t);
unsigned trial_number(const Trial *t);
const char *trial_sid(const Trial *t);       /* NULL before the sandbox exists */
const char *trial_dir(const Trial *t);       /* NULL before the run directory exists */
const json_t *trial_verdict(const Trial *t); /* TRIAL_GRADED only */
const char *trial_graded_by(const Trial *t); /* "pomed" or "pome" (--local) */
const char *trial_error(const Trial *t);     /* TRIAL_FAILED: why, for a human */
int trial_exit_status(const Trial *t);       /* TRIAL_FAILED: the POME_EXIT_* it calls for */
bool trial_fatal(const Trial *t); /* TRIAL_FAILED in a way every other trial would be too */
const AgentResult *trial_agent(const Trial *t); /* NULL until the agent has exited */
const json_t *trial_meta(const Trial *t);       /* meta.json's document, once written */

/*
 * The twin calls seen so far, "github 3, slack 1", into buf (len bytes): the in-process
 * twins' tape rows, or X-Pome-Total-Events of each twin's tape (one quiet control API call per
 * twin). Empty when the trial has no twins yet.
 */
void trial_progress(Trial *t, char *buf, size_t len);
