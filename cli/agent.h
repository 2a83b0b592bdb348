/* SPDX-License-Identifier: MIT */
/*
 * The agent under test as a child process of `pome run`: started in a process group of its
 * own with the prompt on its stdin and its stdout and stderr in files, watched on an sd-event
 * loop, and held to a timeout — SIGTERM to the whole group when it fires, SIGKILL to the
 * whole group after a grace period, and SIGKILL to whatever is left of the group once the
 * agent itself has exited, so nothing it started keeps calling the twins while the run is
 * graded. A process that leaves the group (setsid, setpgid) escapes this; nothing short of a
 * cgroup could hold it.
 *
 * SIGCHLD must be blocked in every thread before agent_start (sd_event_add_child).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

typedef struct Agent Agent;

typedef struct AgentResult {
        int exit_code;          /* its exit status, or -1 when a signal ended it */
        int signal;             /* the signal that ended it, 0 when it exited */
        bool timed_out;         /* the timeout fired (its group got SIGTERM) */
        bool killed;            /* the grace period ran out too (its group got SIGKILL) */
        uint64_t started_usec;  /* CLOCK_REALTIME, µs since the epoch */
        uint64_t ended_usec;    /* CLOCK_REALTIME */
        uint64_t duration_usec; /* CLOCK_MONOTONIC between start and exit */
} AgentResult;

/* Called once, from the loop (never inside agent_start), after the agent has exited. */
typedef void (*AgentDoneFn)(Agent *a, const AgentResult *res, void *userdata);

typedef struct AgentSpec {
        char *const *argv;       /* argv[0] is looked up in envp's PATH unless it holds a '/' */
        char *const *envp;       /* the whole environment of the agent */
        const char *prompt;      /* written to a sealed memfd that is the agent's stdin */
        const char *stdout_path; /* created or truncated, mode 0644; NULL: stdout_fd */
        const char *stderr_path; /* NULL: stderr_fd */
        int stdout_fd;           /* the agent's stdout when stdout_path is NULL (borrowed:
                                  * the agent gets a duplicate) */
        int stderr_fd;
        const char *cwd;       /* working directory, NULL = pome's */
        uint64_t timeout_usec; /* 0 = none */
        uint64_t grace_usec;   /* between SIGTERM and SIGKILL */
} AgentSpec;

/*
 * Starts the agent on loop e. Returns 0 with the agent in *ret, or a negative errno with err
 * (errlen bytes) saying what failed: -ENOENT / -EACCES for a program that cannot be found or
 * run (the exec failure is reported by the child through a pipe, so it is seen here), the
 * errno of opening an output file, -ENOMEM.
 */
int agent_start(sd_event *e, const AgentSpec *spec, AgentDoneFn done, void *userdata, Agent **ret,
                char *err, size_t errlen);

/*
 * Ends the agent early (pome was interrupted): SIGTERM to its group now, SIGKILL after the
 * grace period; done still follows. With now, SIGKILL at once. No-op once it has exited.
 */
void agent_terminate(Agent *a, bool now);

/* The agent's pid (= its process group id). */
pid_t agent_pid(const Agent *a);

/* Whether done has been called. */
bool agent_exited(const Agent *a);

/*
 * Frees the agent. A running agent's group is killed with SIGKILL first (and reaped by the
 * loop later). Accepts NULL; returns NULL.
 */
Agent *agent_free(Agent *a);
