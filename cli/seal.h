/* SPDX-License-Identifier: MIT */
/*
 * The seal of `pome run` (issue 24, DESIGN.md "The agent pod"): what turns a trial's agent
 * into a sealed one. Per run, a Seal: whether and how this host can seal (agentpod.h), the
 * agent's seccomp filter (policies/agent.policy, built into pome), a cgroup tree for the
 * agents' limits, and the paths every pod masks. Per trial, a SealedAgent: its pod's spec,
 * its cgroup, its environment rewritten so that every twin address points at a loopback
 * port inside the pod (forwarded by agentnet.h to the twin's real address) and the HTTP
 * proxy is the only other way out, the vendors' own names (api.github.com, slack.com,
 * api.stripe.com) served on 443 inside the pod with the run's CA (common/runca.h) and routed
 * to the twin of each, and, once it has run, what it reached and what limits it hit
 * (sealed_agent_report, for meta.json).
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "supervisor/agentpod.h"

#define SEAL_MEMORY_DEFAULT (UINT64_C(2) << 30) /* bytes: an agent with node and its SDKs */
#define SEAL_PIDS_DEFAULT   UINT64_C(512)
#define SEAL_CPU_WEIGHT     UINT64_C(100)
#define SEAL_OUTPUT_DEFAULT (UINT64_C(16) << 20) /* bytes kept of each of stdout and stderr */

/* What the command line, the task's ## Config and pome's defaults ask of the seal. */
typedef struct SealConfig {
        char *const *allow_net; /* hosts the proxy lets through (agentnet.h's entries) */
        char *const *hide;      /* more absolute paths to mask */
        bool workdir_rw;        /* the working directory itself, not an overlay of it */
        uint64_t memory_max;    /* bytes */
        uint64_t pids_max;
        uint64_t output_max; /* bytes kept of each of stdout and stderr (applies unsealed too) */
} SealConfig;

typedef struct Seal Seal;

/*
 * Prepares the seal for a run: probes the host (agent_pod_probe), compiles the agent's
 * seccomp filter, sets up a cgroup tree for the agents (as root, on cgroup v1 or hybrid;
 * elsewhere the limits are rlimits, and seal_limits_how says so) and the mask list: the
 * hide paths of c, the state directory pome uses, ./.pome, /root, /home, /etc/pome,
 * /var/lib/pome, /run/pome and each of extra (NULL-terminated: the run directories, the
 * task file and its sidecar). c's strings are borrowed for the Seal's life. Returns 0, or a
 * negative errno with why (and what to do) in err (errlen bytes): -EPERM when this host
 * cannot seal, -EINVAL for a bad hide path, -ENOMEM.
 */
int seal_new(const SealConfig *c, char *const *extra, Seal **ret, char *err, size_t errlen);

/* Frees the seal (every SealedAgent first). Accepts NULL; returns NULL. */
Seal *seal_free(Seal *s);

/*
 * Whether the agent's command line (argv, borrowed) names files the sealed pod can see: each
 * element that names an existing file (absolute, or relative to cwd) must not lie under the
 * pod's own /tmp or a path it masks, unless under cwd (the pod's working directory). 0, or
 * -ENOENT with "<file> is under <path>, which …: …" (what to do) in err (errlen bytes).
 */
int seal_check_argv(const Seal *s, char *const *argv, const char *cwd, char *err, size_t errlen);

/* "cgroup" (memory, pids and cpu in a cgroup of its own) or "rlimit". */
const char *seal_limits_how(const Seal *s);

typedef struct SealedAgent SealedAgent;

/*
 * A trial's sealed agent: its cgroup, its pod spec, and *envp rewritten for it (a new strv
 * replaces it; the old one is wiped and freed): every http:// address in a POME_ variable
 * pointing at 127.0.0.1:<its port> inside the pod, HTTP(S)_PROXY at the proxy, NO_PROXY for
 * loopback and the vendors' names, HOME, TMPDIR and POME_AGENT_TMP on the pod's private
 * /tmp, the CA bundle variables, the vendors' credential variables (GITHUB_TOKEN, GH_TOKEN,
 * SLACK_BOT_TOKEN, STRIPE_API_KEY; inherited ones are dropped). cwd is the agent's working
 * directory (absolute). 0 or a negative errno with err said.
 */
int sealed_agent_new(Seal *s, unsigned trial, const char *cwd, char ***envp, SealedAgent **ret,
                     char *err, size_t errlen);

/* The pod's spec (borrowed): program, argv, envp and fds are the caller's to fill. */
const AgentPodSpec *sealed_agent_pod(const SealedAgent *a);

/* Where agent_start puts the pod's listening sockets: an array of pod->n_listen fds. */
int *sealed_agent_listen_fds(SealedAgent *a);

/*
 * The pod is up: its listening sockets (sealed_agent_listen_fds, taken) serve the twins'
 * forwards and the proxy on loop e. 0 or a negative errno with err said.
 */
int sealed_agent_serve(SealedAgent *a, sd_event *e, char *err, size_t errlen);

/*
 * The agent has exited: closes its ways out, kills whatever is left in its cgroup and
 * removes it, and reads whether the kernel's OOM killer ended something in it.
 */
void sealed_agent_end(SealedAgent *a);

/* Connections the proxy refused so far. */
size_t sealed_agent_refused(const SealedAgent *a);

/*
 * meta.json's "seal": {sealed: true, limits: {how, memory_max, pids_max, output_max}, uid,
 * oom_killed, network: agent_net_report's document}. A new reference, NULL on OOM.
 */
json_t *sealed_agent_report(const SealedAgent *a);

/* Frees a (sealed_agent_end first when it ran). Accepts NULL; returns NULL. */
SealedAgent *sealed_agent_free(SealedAgent *a);
