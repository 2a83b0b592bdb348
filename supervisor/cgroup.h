/* SPDX-License-Identifier: MIT */
/*
 * Pod cgroups (DESIGN.md "Pod isolation"). The only module that includes libcgroup.
 *
 * pomed builds one tree, <own cgroup>/<tree_name>, in every hierarchy it needs
 * (v1: memory, pids, cpu; v2: the unified one), where <own cgroup> is read from
 * /proc/self/cgroup, so pods nest inside whatever limits the host put on pomed. A pod
 * is the leaf <tree>/<pod name>: named by pod, not by sandbox, so that it can be made
 * before the pod has a sandbox (the warm pool). Nothing is written outside <own cgroup>, except
 * on v2 the "+controller" that libcgroup writes into the ancestors' subtree_control
 * (a no-op there: a controller is in our cgroup.controllers only when every ancestor
 * already enabled it).
 *
 * v2 and the "no internal processes" rule (Documentation/admin-guide/cgroup-v2.rst,
 * systemd.io/CGROUP_DELEGATION): a cgroup that enables controllers for its children
 * must hold no process, so when our own cgroup holds processes they move to the leaf
 * <own>/supervisor first, as Delegate=yes services do.
 *
 * The tree is locked (flock on each tree directory) for the lifetime of the CgSetup:
 * a second pomed using the same tree gets -EBUSY instead of killing the first one's
 * pods as "leftovers". Pick distinct tree names for instances sharing a host cgroup.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "supervisor/pod-limits.h"

typedef struct CgSetup CgSetup;
typedef struct CgPod CgPod;

typedef enum CgLayout {
        CG_LAYOUT_V2,     /* cgroup2 on /sys/fs/cgroup */
        CG_LAYOUT_HYBRID, /* tmpfs on /sys/fs/cgroup, v1 controllers, cgroup2 at .../unified */
        CG_LAYOUT_V1,     /* tmpfs on /sys/fs/cgroup, v1 controllers only */
} CgLayout;

/*
 * Detects the layout (statfs(2) of /sys/fs/cgroup and /sys/fs/cgroup/unified), finds
 * our own cgroup per controller (/proc/self/cgroup, cgroups(7)), creates and locks
 * <own>/<tree_name> in each hierarchy and, on v2, moves pomed to <own>/supervisor (until no
 * process is left in <own>) and enables +memory +pids (+cpu where available) in <own> and
 * <tree>. On v2 a cgroup pomed shares with other processes (a login shell, a CI runner) is
 * left as it is: <own> is then <parent>/<tree_name>.pomed, beside it, and only pomed moves.
 * tree_name is one path component ([A-Za-z0-9_.-], not "." or "..").
 *
 * Returns 0 and a new CgSetup (free with cg_setup_free); on success warn may hold a
 * note about a degraded feature (no swap accounting), else is "". Errors, each with a
 * sentence in warn (warnlen bytes, always NUL-terminated) for pomed's startup
 * warning and `pome doctor`:
 *   -ENOENT     no cgroup filesystem, or a needed controller is not mounted
 *   -EOPNOTSUPP v2: memory or pids is not delegated to our cgroup (cpu is optional:
 *               cg_has_cpu says whether pods get a cpu weight)
 *   -EACCES     no write access (not root, cgroup not delegated, read-only mount)
 *   -EBUSY      another process holds the tree (another pomed)
 *   -EINVAL     bad tree_name; -ENOMEM; other negative errno from the kernel.
 */
int cg_setup(const char *tree_name, CgSetup **ret, char *warn, size_t warnlen);

/* Whether pods get a cpu weight: the cpu controller is ours (always on v1). */
bool cg_has_cpu(const CgSetup *s);

/*
 * cg_setup with the tree placed under parent (a cgroup path from each hierarchy's root,
 * such as "/pome.slice", created when missing) instead of under pomed's own cgroup: a
 * stable place a pomed started from any shell or unit finds again. NULL = cg_setup.
 */
int cg_setup_under(const char *parent, const char *tree_name, CgSetup **ret, char *warn,
                   size_t warnlen);

/* Frees a setup and releases the tree lock; pods must be destroyed first. Accepts NULL. */
CgSetup *cg_setup_free(CgSetup *s);

/* "v2", "hybrid" or "v1". */
const char *cg_layout_name(const CgSetup *s);

/* Absolute path of the tree in the hierarchy of controller ("memory", "pids", "cpu"), or NULL. */
const char *cg_tree_path(const CgSetup *s, const char *controller);

/*
 * At pomed start: SIGKILLs every process in every cgroup below the tree (leftovers of a
 * previous instance; cgroup.kill where the kernel has it), waits until they are gone
 * (up to 1 s), and removes every directory below the tree. *ret_sids receives the
 * names of the pod cgroups found (NULL-terminated strv, caller frees each string and the
 * array; an empty array when none). Returns their number, or a negative errno:
 * -EBUSY when a cgroup would not empty or a directory would not go (whatever could be
 * removed was; *ret_sids untouched).
 */
int cg_cleanup_leftovers(CgSetup *s, char ***ret_sids);

/*
 * Creates the pod leaf <tree>/<name> in every hierarchy with libcgroup and
 * writes the limits: v2 memory.max, memory.swap.max=0, pids.max, cpu.weight; v1
 * memory.limit_in_bytes, memory.memsw.limit_in_bytes (= memory.limit_in_bytes, so the
 * limit covers swap too) when swap accounting exists, pids.max, cpu.shares (weight
 * mapped as systemd does: shares = weight * 1024 / 100, clamped to 2..262144).
 * Opens each leaf's cgroup.procs O_WRONLY|O_CLOEXEC for the child to join with
 * (cg_pod_join_fds). name is one path component ([A-Za-z0-9_.-], at most 64 bytes, not
 * "." or ".."). s is borrowed and must outlive the pod.
 * Returns 0 and a new CgPod (release with cg_pod_destroy), -EINVAL for a bad name or
 * limit, -EEXIST when the leaf exists already, -EACCES, -ENOMEM, or the errno behind
 * a libcgroup failure (-EIO when libcgroup gives none). Nothing is left on failure.
 */
int cg_pod_create(CgSetup *s, const char *name, const PodLimits *lim, CgPod **ret);

/*
 * The pre-opened cgroup.procs fds of the leaf, one per hierarchy (owned by the pod, valid
 * until cg_pod_close_join_fds or cg_pod_destroy). A child joins every pod cgroup by
 * writing "0" into each: a single write(2), async-signal-safe (writing 0 moves the
 * writer, cgroups(7)).
 */
int cg_pod_join_fds(const CgPod *p, const int **ret_fds, size_t *ret_n);

/*
 * Closes the join fds once the pod's first process has joined (spawn_pod returns after
 * the child's execve): a live pod holds no fd in pomed it does not need. Idempotent.
 */
void cg_pod_close_join_fds(CgPod *p);

/* Absolute path of the leaf in the hierarchy of controller ("memory", "pids", "cpu"), or NULL. */
const char *cg_pod_path(const CgPod *p, const char *controller);

/* What an OOM kill recorded in a pod's cgroup is charged to. */
typedef enum CgOom {
        CG_OOM_NONE = 0, /* no OOM kill in the pod's cgroup */
        CG_OOM_OWN = 1,  /* the pod's own limit: v1 memory.failcnt > 0 or peak >= limit, v2
                            memory.events.local oom/max > 0 */
        CG_OOM_HOST = 2, /* a kill for a limit above the pod (v1 oom_control counts the victim
                            whichever limit was reached) */
} CgOom;

/*
 * Attributes an OOM kill of the pod (an "oom_kill N" > 0 in v1 memory.oom_control or v2
 * memory.events.local) to the pod's own limit or to one above it. Returns a CgOom; for
 * CG_OOM_HOST *ret_culprit (may be NULL) is a new string naming the nearest ancestor
 * cgroup that reached its limit, relative to the hierarchy ("/pome/ses_x"), or NULL for
 * a host-wide shortage. Negative errno when the file cannot be read (-ENODATA when it
 * has no oom_kill line: a kernel older than 4.13).
 */
int cg_pod_oom(CgPod *p, char **ret_culprit);

/* cg_pod_oom on any directory tree (tests): leaf below mount, files as the kernel has them. */
int cg_oom_attribute(CgLayout layout, const char *mount, const char *leaf, char **ret_culprit);

/*
 * One non-blocking step of a pod's teardown, for an event loop: closes the join fds,
 * SIGKILLs whatever is still in the pod's cgroups (v2 cgroup.kill when present, else each
 * pid of cgroup.procs) and removes every leaf that is empty. Returns 0 when every leaf is gone,
 * -EBUSY when a dying process still holds one (call again a little later), other negative errno on
 * failure. p stays allocated.
 */
int cg_pod_release(CgPod *p);

/* Frees p without touching the cgroup filesystem. Accepts NULL; returns NULL. */
CgPod *cg_pod_free(CgPod *p);

/*
 * cg_pod_release until it is done, polling every 1 ms for at most 1 s — blocking, so for
 * start-up, shutdown and tests only — then frees p. Accepts NULL. Returns 0, or -EBUSY
 * when a leaf would not go away in time (the next cg_cleanup_leftovers retries it).
 */
int cg_pod_destroy(CgPod *p);

/*
 * Reaps a pomed tree at an absolute path (another pomed's, e.g. the predecessor recorded
 * in the state directory): SIGKILLs every process below it, removes every cgroup below it
 * and the tree itself. Refuses (-EINVAL) a path outside /sys/fs/cgroup, on another file
 * system or whose last component does not start with "pome-". Blocking (up to 1 s per
 * cgroup). Returns the number of pod directories reaped (their names in *ret_sids when not
 * NULL; caller frees), 0 when the path does not exist, or negative errno.
 */
int cg_reap_tree(const char *path, char ***ret_sids);

/* ----- for tests: the same logic on a fake tree (no libcgroup, no statfs) ----- */

/*
 * Like cg_setup, with the layout given, each hierarchy's mount point taken to be
 * root_dir/<controller> (v1) or root_dir (v2), and proc_self_cgroup the text of
 * /proc/self/cgroup. Directories that the kernel would populate (cgroup.procs,
 * cgroup.subtree_control, cgroup.controllers) must exist as files. Pods of such a
 * setup cannot be created (libcgroup knows only the real mounts): -EOPNOTSUPP.
 */
int cg_setup_at(const char *root_dir, CgLayout layout, const char *proc_self_cgroup,
                const char *tree_name, CgSetup **ret, char *warn, size_t warnlen);

/*
 * Our cgroup in the hierarchy holding controller (v1: "N:memory:/a/b" or a co-mounted
 * "N:cpu,cpuacct:/a"; v2: controller NULL for the "0::/a/b" line) from the text of
 * /proc/self/cgroup. Returns 0 and a new string ("/" for the root), -ENOENT when absent,
 * -EINVAL for a malformed line, -ENOMEM.
 */
int cg_parse_own_cgroup(const char *proc_self_cgroup, const char *controller, char **ret);

/* Parses the "oom_kill N" line of memory.oom_control (v1) or memory.events (v2). 0, -ENODATA. */
int cg_parse_oom_kill(const char *text, uint64_t *ret);

/* cpu.weight (1..10000) → v1 cpu.shares, as systemd maps them. */
uint64_t cg_cpu_weight_to_shares(uint64_t weight);

/*
 * The control files and values cg_pod_create writes for lim on setup s, in write order,
 * as "file=value" strings (NULL-terminated strv, caller frees). 0, -ENOMEM.
 */
int cg_pod_limit_values(const CgSetup *s, const PodLimits *lim, char ***ret);
