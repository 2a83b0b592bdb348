/* SPDX-License-Identifier: MIT */
/*
 * The warm pod pool: per twin kind, a few pods already spawned — in their own cgroups
 * (named by pod, limits of the kind's image), namespaces, uid, stage-1 filter — and
 * waiting for their load frame, so that a create only hands each twin a pod, sends it its
 * seed and waits for READY=1 (the stage-2 filter goes on after the seed, as for any pod).
 * The pool refills off the critical path: at idle priority on the event loop, one spawn
 * per turn, after whatever else is pending (the create's reply included). A pod that dies
 * idle is reaped and replaced, with a back-off when they keep dying. pool_size in
 * pomed.conf sets the number per kind; 0 disables the pool for that kind.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <systemd/sd-event.h>

#include "supervisor/image.h"
#include "supervisor/pod.h"

typedef struct PodPool PodPool;

#define PODPOOL_SIZE_MAX 64u /* per kind */

/*
 * A pool of sizes[i] idle pods for images->images[i] (both borrowed for the pool's life),
 * filled from the next idle turn of e on, spawned concurrently (pod_spawn). hold
 * (may be NULL) is asked before each spawn: while it says true (creates wait for their
 * pods' READY=1) nothing is spawned until podpool_kick. Returns 0 or -ENOMEM.
 */
int podpool_new(sd_event *e, const PodEnv *env, const Images *images, const unsigned *sizes,
                bool (*hold)(void *userdata), void *userdata, PodPool **ret);

/* Refills again (after hold said true). Accepts NULL. */
void podpool_kick(PodPool *pp);

/* Kills and reaps every idle pod now (blocking: for shutdown), frees the pool. Accepts NULL. */
PodPool *podpool_free(PodPool *pp);

/*
 * An idle pod of img taken out of the pool, or NULL when it has none: the caller owns it
 * and gives it its sandbox with pod_load (a pod that then fails to load is the caller's
 * to kill, as any). A refill is scheduled.
 */
Pod *podpool_take(PodPool *pp, const Image *img);

/* From now on nothing is spawned, and the idle pods are killed (SIGTERM's drain). */
void podpool_drain(PodPool *pp);

/* Idle pods of img now, and the number the pool keeps. */
size_t podpool_idle(const PodPool *pp, const Image *img);
unsigned podpool_size(const PodPool *pp, const Image *img);
