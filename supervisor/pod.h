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
        int exec_fd;              /* its O_PATH fd (> 2), or 0: exec by path */
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
        unsigned pack_after_ms; /* pod.pack_after: idle time before a pod packs its world; 0 = never
                                 */
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
        /* the replies of one read from the pod's socket went to their calls (pod_draining
         * was true meanwhile): what they left to write in one go, the owner writes now */
        void (*replies_done)(Pod *p, void *userdata);
} PodCallbacks;

/*
 * Spawns a pod for twin kind k that waits for its seed: its own cgroup leaf with limits
 * ("pod-<n>": named by the pod, so it can be made before there is a sandbox), socketpair,
 * spawn. cb and userdata hear of it until pod_load gives it new ones (a pool's: an idle pod
 * that dies is reported as any other). The spawn is concurrent (spawn_pod): it never
 * blocks the loop on the child's cgroup join, a create's pods start side by side, and a
 * failed setup step is reported at the pod's exit. Returns 0, or negative errno with a
 * sentence in err (errlen bytes) naming the step.
 */
int pod_spawn(const PodEnv *env, const TwinKind *k, const PodLimits *limits, const PodCallbacks *cb,
              void *userdata, Pod **ret, char *err, size_t errlen);

/* A spawned pod still waiting for its seed, alive and unharmed (a pool may hand it out). */
bool pod_is_idle(const Pod *p);

/*
 * Gives an idle pod its sandbox sid and seed: from now on cb and userdata hear of it, and
 * the load frame (seed JSON of seed_len bytes, then the stage-2 program, installed by the
 * pod once the seed is loaded) goes out; READY=1 follows. Returns 0, -ENOTCONN for a pod
 * that is not idle, -ENOMEM, or the errno of queueing the frame, with a sentence in err;
 * on failure the pod has no callbacks left and is the caller's to pod_free (kill and reap).
 */
int pod_load(Pod *p, const char *sid, const char *seed, size_t seed_len, const PodCallbacks *cb,
             void *userdata, char *err, size_t errlen);

/*
 * pod_spawn and pod_load at once: the pod for twin kind k of sandbox sid. Returns 0, or
 * negative errno with a sentence in err (errlen bytes) naming the step (nothing is left).
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

/*
 * Whether p is handing out the replies of one read from its socket right now: a caller's
 * reply callback may then leave work for the replies_done callback (the tape rows of a
 * batch, written together).
 */
bool pod_draining(const Pod *p);
