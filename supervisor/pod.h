/* SPDX-License-Identifier: MIT */
/*
 * One pod as pomed sees it: the isolated process (spawned through spawn.c into
 * its cgroup), its frame socket, its readiness and the calls in flight.
 * Everything runs on pomed's single sd-event loop.
 *
 * Life: pod_start() → (READY=1 over the notify socket) → ready callback →
 * pod_call()… → pod_kill() or the process dies → exited callback, once, after
 * the process is reaped and its cgroup removed → pod_free().
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "pods/twin/podwire.h"
#include "pods/twin/twin.h"

typedef struct Pod Pod;
typedef struct CgSetup CgSetup;
typedef struct ScpProgram ScpProgram;
typedef struct Hashmap Hashmap;

/* What every pod of one pomed shares (borrowed for the pods' lifetimes). */
typedef struct PodEnv {
        sd_event *event;
        CgSetup *cgroups;         /* NULL: run without the cgroup layer */
        const ScpProgram *stage1; /* NULL: no seccomp layer */
        const ScpProgram *stage2; /* NULL: no stage-2 filter */
        const char *exec_path;    /* pome-pod */
        const char *notify_path;  /* NOTIFY_SOCKET */
        uid_t uid;
        gid_t gid;
        bool namespaces; /* false when not root: no namespaces, no uid change */
        /* pod_uid_range: each pod runs as uid = gid = first + i for a free slot i of used
         * (n bytes, 0 = free, owned by the pod host), instead of uid/gid above. n = 0: off. */
        uid_t range_first;
        uint8_t *range_used;
        size_t range_n;
        Hashmap *by_pid;      /* pid → live Pod, kept by pod.c: notify datagrams find their pod */
        unsigned max_pending; /* calls queued or in flight per pod before -EBUSY; 0 = no bound */
} PodEnv;

typedef struct PodLimits PodLimits;

typedef struct PodCallbacks {
        void (*ready)(Pod *p, void *userdata);
        /* how: spawn_classify()'s word ("exited", "exit_code:65", "signal:SIGTERM",
         * "killed" or pod_kill's why, "oom_killed", "host_oom_killed",
         * "seccomp_violation:ptrace", "exec_failed:EAGAIN", "setup_failed:<step>:<ERRNO>",
         * "protocol_error"); detail: a sentence (the pod's STATUS= when it sent one and
         * exited by itself). */
        void (*exited)(Pod *p, const char *how, const char *detail, void *userdata);
} PodCallbacks;

/*
 * Starts the pod for twin kind k of sandbox sid: cgroup leaf with limits, socketpair,
 * spawn, and the load frame (seed JSON of seed_len bytes, then the stage-2 program).
 * Returns 0, or negative errno with a sentence in err (errlen bytes) naming the step.
 */
int pod_start(const PodEnv *env, const char *sid, const TwinKind *k, const char *seed,
              size_t seed_len, const PodLimits *limits, const PodCallbacks *cb, void *userdata,
              Pod **ret, char *err, size_t errlen);

/*
 * Kills the pod (SIGKILL to its pid namespace's init); the exited callback follows, once
 * the process is reaped and its cgroups are removed (without blocking the loop). why:
 * NULL for pomed's teardown (reported "killed"), else the `how` reported when the pod
 * dies of this SIGKILL ("pod_hung", "protocol_error"; a static string). A pod that died
 * of something else first is reported by that. The first call's why wins; accepts NULL p.
 */
void pod_kill(Pod *p, const char *why);

/* Frees a pod whose exited callback has run (or that never started). Accepts NULL. */
Pod *pod_free(Pod *p);

pid_t pod_pid(const Pod *p);

/* The uid (= gid) the pod runs as: the pod user's, or its own from pod_uid_range. */
uid_t pod_uid(const Pod *p);
bool pod_is_ready(const Pod *p);
bool pod_has_exited(const Pod *p);
const TwinKind *pod_kind(const Pod *p);
/* Filesystem path of the pod's cgroup for controller ("memory", "pids"), or NULL. */
const char *pod_cgroup_path(const Pod *p, const char *controller);

/* Feeds a notify datagram from this pod's pid (READY=1, STATUS=…, ERRNO=…). */
void pod_notify(Pod *p, const char *msg);

/*
 * The reply to one call. err: 0 (rb filled: bytes borrowed from the frame for the length of
 * the callback — forward and splice them, copy what must outlive it), -ETIMEDOUT
 * (deadline passed; a late reply will be dropped), -ECONNRESET (the pod died or was killed
 * first), -EPROTO (the pod sent garbage). rb is zeroed on error.
 */
typedef void (*PodReplyFn)(Pod *p, int err, const TwinReplyBytes *rb, void *userdata);

/*
 * Sends one request (frame) to the pod; cb runs exactly once, later, from the event
 * loop — never from inside pod_call. timeout_usec: deadline from now; a pod that misses
 * it is declared hung and killed (its exit reads "pod_hung"), so a call whose caller got
 * -ETIMEDOUT is never applied later. The call holds no reference to rq after pod_call
 * returns. Returns 0, -ENOTCONN (not ready, exited or being killed), -EBUSY (the pod has
 * max_pending calls, or 8 MiB, queued already: the call was not sent), -EMSGSIZE, -ENOMEM.
 */
int pod_call(Pod *p, const TwinRequest *rq, uint64_t timeout_usec, PodReplyFn cb, void *userdata);

/* Calls queued or in flight (sent, no reply yet). */
size_t pod_pending(const Pod *p);

/* Asks the pod for its whole world (unredacted, for final state files). cb gets a reply
 * whose body is the world. Same contract as pod_call. */
int pod_export(Pod *p, uint64_t timeout_usec, PodReplyFn cb, void *userdata);
