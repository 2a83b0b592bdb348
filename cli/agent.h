/* SPDX-License-Identifier: MIT */
/*
 * The agent under test as a child process of `pome run`, with the prompt on its stdin and its
 * stdout and stderr read by pome through pipes into files, up to a cap (the rest is counted,
 * not kept), watched on an sd-event loop and held to a timeout: SIGTERM when it fires, SIGKILL
 * after a grace period, and SIGKILL to whatever it left once the agent itself has exited, so
 * nothing it started keeps calling the twins while the run is graded.
 *
 * Two ways to run it:
 *   - sealed (spec->pod, agentpod.h): the agent is pid 2 of a pod whose init pome signals;
 *     the init forwards SIGTERM to every process of the pod, and its death (the agent's exit,
 *     or SIGKILL) takes every process of the pod with it, setsid or not;
 *   - unsealed (--no-seal): a process group of its own on the host, signalled as a group. A
 *     process that leaves the group (setsid, setpgid) escapes this; only the pod holds it.
 *
 * SIGCHLD must be blocked in every thread before agent_start (sd_event_add_child).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "supervisor/agentpod.h"

typedef struct Agent Agent;

typedef struct AgentResult {
        int exit_code;          /* its exit status, or -1 when a signal ended it */
        int signal;             /* the signal that ended it, 0 when it exited */
        bool timed_out;         /* the timeout fired (its group got SIGTERM) */
        bool killed;            /* the grace period ran out too (its group got SIGKILL) */
        uint64_t started_usec;  /* CLOCK_REALTIME, µs since the epoch */
        uint64_t ended_usec;    /* CLOCK_REALTIME */
        uint64_t duration_usec; /* CLOCK_MONOTONIC between start and exit */
        uint64_t stdout_bytes;  /* bytes the agent wrote to stdout, kept or not */
        uint64_t stderr_bytes;
        bool sealed;     /* it ran in a pod (spec->pod) */
        bool stdout_cut; /* more than output_max: the rest was not kept */
        bool stderr_cut;
} AgentResult;

/* Called once, from the loop (never inside agent_start), after the agent has exited. */
typedef void (*AgentDoneFn)(Agent *a, const AgentResult *res, void *userdata);

typedef struct AgentSpec {
        char *const *argv;  /* argv[0] is looked up in envp's PATH unless it holds a '/' */
        char *const *envp;  /* the whole environment of the agent */
        const char *prompt; /* written to a sealed memfd that is the agent's stdin */
        int stdout_fd;      /* where the agent's stdout is kept (borrowed; pome writes it,
                             * the agent never holds it) */
        int stderr_fd;
        uint64_t output_max;     /* bytes kept of each of stdout and stderr (0: all) */
        const char *cwd;         /* working directory, NULL = pome's (sealed: absolute) */
        uint64_t timeout_usec;   /* 0 = none */
        uint64_t grace_usec;     /* between SIGTERM and SIGKILL */
        const AgentPodSpec *pod; /* sealed: the pod's spec (its program, argv, envp, cwd and fds
                                  * are filled in from this spec's); NULL: unsealed */
        int *listen_fds;         /* sealed: receives pod->n_listen listening sockets (owned by
                                  * the caller) */
        bool tty;                /* interactive (pome run --shell): stdout_fd is a pty's slave,
                                  * the agent's fds 0, 1 and 2 and its controlling terminal (no
                                  * prompt, no pipes, output_max unused) */
} AgentSpec;

/*
 * Starts the agent on loop e. Returns 0 with the agent in *ret, or a negative errno with err
 * (errlen bytes) saying what failed: -ENOENT / -EACCES for a program that cannot be found or
 * run (the exec failure is reported by the child through a pipe, so it is seen here), a setup
 * step of the pod (agent_pod_start), -ENOMEM.
 */
int agent_start(sd_event *e, const AgentSpec *spec, AgentDoneFn done, void *userdata, Agent **ret,
                char *err, size_t errlen);

/*
 * Ends the agent early (pome was interrupted): SIGTERM to its group now, SIGKILL after the
 * grace period; done still follows. With now, SIGKILL at once. No-op once it has exited.
 */
void agent_terminate(Agent *a, bool now);

/* The agent's pid: its process group's id, or the pod's init. */
pid_t agent_pid(const Agent *a);

/* Whether done has been called. */
bool agent_exited(const Agent *a);

/*
 * Frees the agent. A running agent's group is killed with SIGKILL first (and reaped by the
 * loop later). Accepts NULL; returns NULL.
 */
Agent *agent_free(Agent *a);
