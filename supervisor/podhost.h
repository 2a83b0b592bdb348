/* SPDX-License-Identifier: MIT */
/*
 * The pod host: everything the pods of one pomed share, prepared once at start
 * (DESIGN.md "Pod isolation"): the pod user, the compiled seccomp programs, the
 * cgroup tree (at a stable place, its predecessor reaped), the runtime
 * directory with the sd_notify socket, and the pid index that routes each
 * notify datagram to its pod in one lookup. It also refuses a broken install:
 * a pod user who cannot execute pome-pod or read the images is found here, at
 * start, not at the first sandbox.
 */
#pragma once

#include <systemd/sd-event.h>

#include "supervisor/cgroup.h"
#include "supervisor/config.h"
#include "supervisor/image.h"
#include "supervisor/pod.h"
#include "supervisor/statedir.h"

typedef struct PodHost PodHost;

/*
 * Prepares the pod host. Layers this host cannot give (no root: no namespaces and no uid
 * change; no cgroup access: no limits) are logged as warnings and listed by
 * podhost_missing_layers(); anything else failing — a bad policy file, a pod user who
 * cannot run pome-pod, no runtime directory — returns a negative errno with a sentence in
 * err (errlen bytes) that names the path, the user and the fix.
 */
int podhost_new(sd_event *e, const Config *cfg, const StateDir *state, const Images *images,
                PodHost **ret, char *err, size_t errlen);

/* Releases the host (pods must be gone): notify socket, runtime directory, cgroup tree. */
PodHost *podhost_free(PodHost *h);

/* What pod_start needs (borrowed, valid until podhost_free). */
const PodEnv *podhost_env(PodHost *h);

/*
 * Starts one pod of img (seed_len bytes of seed) through the whole isolation path, waits
 * up to timeout_usec for its READY=1 by turning the (not yet running) event loop, then
 * kills it: what any check of paths and permissions can miss (a dynamically linked or
 * otherwise unrunnable pod program, a policy that kills it) fails pomed's start instead
 * of every sandbox. Returns 0, or negative errno with a sentence in err (errlen bytes).
 */
int podhost_trial(PodHost *h, const Image *img, const char *seed, size_t seed_len,
                  uint64_t timeout_usec, char *err, size_t errlen);

/* Comma-separated missing isolation layers ("" when complete), for warnings and doctor. */
const char *podhost_missing_layers(const PodHost *h);

/* The pods' user when pomed drops them to one ("" when pods keep pomed's uid). Borrowed. */
const char *podhost_pod_user(const PodHost *h);

/* "FIRST-LAST" when each pod gets a uid of its own from pod_uid_range, else NULL. */
const char *podhost_pod_uid_range(const PodHost *h);

/* What to do when the cgroup layer is missing (the start-up warning, a refused create). */
#define PODHOST_CGROUP_FIX                                                                        \
        "run pomed as root where the memory and pids controllers can be had (the packaged unit, " \
        "or systemd-run -p Delegate=yes; pome doctor says more), or set allow_unlimited_pods: "   \
        "true in pomed.conf to start pods without them"

/* Why the cgroup layer is missing (a sentence naming the path and errno), NULL when pods
 * get their cgroups. Borrowed. */
const char *podhost_cgroup_error(const PodHost *h);

/* The cgroup tree pods go into, NULL when the cgroup layer is missing. Borrowed. */
const CgSetup *podhost_cgroups(const PodHost *h);

/* The pod user when pod_user is not configured (packaging/sysusers.d/pome.conf). */
#define PODHOST_DEFAULT_USER "pome-pod"
