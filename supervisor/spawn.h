/* SPDX-License-Identifier: MIT */
/*
 * Starting a pod (DESIGN.md "Pod isolation (the spawner)") and naming how it ended.
 *
 * spawn_pod() clones a child with CLONE_VM, without CLONE_VFORK, into a new pid namespace
 * and with CLONE_PIDFD: no copy of pomed's page tables (nor copy-on-write faults in pomed
 * after it), and pomed runs on while the child sets up in its memory (its first write to
 * a v1 memory cgroup.procs can take an RCU grace period, ~10 ms after a quiet spell), so
 * pods start side by side. The child runs on a mapping spawn_pod hands back
 * (SpawnChild) that holds its stack and its own copy of the spec; fork-style on
 * architectures without a raw syscall here. Everything the child needs is prepared and copied
 * beforehand; the child runs only raw syscalls (no allocation, no sanitizer
 * interceptor, no glibc set*id broadcast to pomed's threads, no errno), in this order:
 *   1. join the pod cgroups: write "0" to each pre-opened cgroup.procs   (exit 120)
 *   2. namespaces: unshare(2) net, ipc, uts and mount, in the child and after
 *      step 1 (their kernel memory is charged to the pod, and pomed's loop
 *      does not build a network namespace); "/" and below MS_PRIVATE, then
 *      read-only, nosuid, nodev, recursively (mount_setattr(2))           (exit 121)
 *   3. sethostname                                                       (exit 122)
 *   4. empty the capability bounding set, clear ambient capabilities    (exit 124)
 *   5. setgroups(0), setresgid, setresuid: no keep-caps, so the permitted
 *      and effective sets empty themselves; capset() empties inheritable (exit 123/124)
 *   6. PR_SET_PDEATHSIG(SIGKILL), after the uid change since a credential
 *      change clears it, then a poll of a pidfd of pomed: if pomed died
 *      before, the signal will never come, so the child leaves            (exit 119)
 *   7. fds: pod_fd → 3, /dev/null → 0, stderr_fd → 1 and 2 (each through a
 *      temporary above 3, so no source and target can collide, and a dup'ed
 *      fd never keeps FD_CLOEXEC), close_range(4, ~0U); rlimits;
 *      default signal handlers, empty signal mask                         (exit 125)
 *   8. PR_SET_NO_NEW_PRIVS, seccomp(SECCOMP_SET_MODE_FILTER, stage 1)      (exit 126)
 *   9. execve                                                            (exit 127)
 * A failing step writes {step, errno} (SpawnFailure) to an O_CLOEXEC pipe that
 * spawn_child_release() reads once the child has exec'd (closing the pipe) or exited, writes
 * "pome-spawn: <step>: errno N" to the pod's stderr for humans, and _exits with the code above;
 * spawn_classify() names the step and the errno.
 *
 * Needs root (CAP_SYS_ADMIN for the namespaces, CAP_SETUID/SETGID); not thread-safe
 * with respect to signal masks (pomed is single-threaded).
 */
#pragma once

#include <linux/filter.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

/* nobody/nogroup on Debian: the default pod credentials. */
#define SPAWN_NOBODY_UID ((uid_t)65534)
#define SPAWN_NOBODY_GID ((gid_t)65534)

/* The exit status of a child that failed before execve: which step. */
typedef enum SpawnChildError {
        SPAWN_ERR_PARENT_DIED = 119, /* pomed died during setup (nobody will see this) */
        SPAWN_ERR_CGROUP = 120,
        SPAWN_ERR_NAMESPACE = 121, /* net, ipc, uts and mount namespaces, the mount view */
        SPAWN_ERR_HOSTNAME = 122,
        SPAWN_ERR_CREDENTIALS = 123,
        SPAWN_ERR_CAPABILITIES = 124,
        SPAWN_ERR_FDS = 125, /* fds, rlimits, signals */
        SPAWN_ERR_SECCOMP = 126,
        SPAWN_ERR_EXEC = 127,
} SpawnChildError;

#define SPAWN_ERR_FIRST SPAWN_ERR_PARENT_DIED
#define SPAWN_ERR_LAST  SPAWN_ERR_EXEC

/* The step a child exit status stands for ("cgroup join", "exec"…), or NULL for other codes. */
const char *spawn_child_error_str(int code);

typedef struct PodRlimit {
        int resource; /* RLIMIT_* */
        rlim_t cur, max;
} PodRlimit;

typedef struct PodSpec {
        const char *exec_path; /* absolute path, no PATH search */
        int exec_fd;       /* > 2: an O_PATH fd of exec_path, run with execveat(AT_EMPTY_PATH), so
                            * the pod's uid needs no search permission on the path (a clone in a
                            * 0700 home); 0: execve(exec_path) */
        char *const *argv; /* NULL-terminated */
        char *const *envp; /* NULL-terminated, e.g. NOTIFY_SOCKET=/path, LANG=C */
        uid_t uid;         /* the pod's credentials, normally SPAWN_NOBODY_UID/GID */
        gid_t gid;
        const int *cgroup_fds; /* cgroup.procs fds to join (cg_pod_join_fds), may be NULL */
        size_t n_cgroup_fds;
        const struct sock_fprog *stage1; /* filter loaded before execve (scp_program), or NULL */
        int pod_fd;                      /* becomes fd 3 (the pod's frame socket) */
        int stderr_fd;                   /* becomes fd 1 and 2; -1 for /dev/null */
        const PodRlimit *rlimits;        /* NULL: spawn_default_rlimits() */
        size_t n_rlimits;
        const char *hostname; /* NULL: "pod" */
        bool unprivileged;    /* pomed is not root: no namespaces, no uid or capability change */
} PodSpec;

/*
 * The rlimits a pod gets unless PodSpec says otherwise (*ret_n entries, static storage):
 * RLIMIT_NOFILE 64 (a pod holds 5 fds), RLIMIT_CORE 0, RLIMIT_MEMLOCK 0, RLIMIT_MSGQUEUE 0.
 * Not RLIMIT_NPROC: it counts every process of the uid host-wide, and all pods share
 * nobody, so it would fail the n-th pod's execve (the pids cgroup limits a pod instead).
 * Not RLIMIT_FSIZE: stderr may be a log file. A limit above the current hard limit is
 * clamped to it (raising needs CAP_SYS_RESOURCE).
 */
const PodRlimit *spawn_default_rlimits(size_t *ret_n);

/* Which setup step of the child failed, and why; step 0 when none did (it exec'd). */
typedef struct SpawnFailure {
        int step; /* SpawnChildError, or 0 */
        int err;  /* the step's errno (positive), 0 when it has none (parent died) */
} SpawnFailure;

/* A child still setting up: the mapping it runs on and its report pipe. */
typedef struct SpawnChild SpawnChild;

/*
 * Starts a pod as described above. Returns 0 with the pid (in pomed's pid namespace) in
 * *ret_pid and a pidfd (O_CLOEXEC, for sd_event_add_child_pidfd and waitid(P_PIDFD)) in
 * *ret_pidfd, both owned by the caller, who must reap the child. A child that fails a
 * setup step still counts as started: it exits with a SpawnChildError code, which
 * spawn_child_release reports. *ret_child receives the child's SpawnChild, owned by the
 * caller: release it (spawn_child_release) once the child has exec'd or been reaped,
 * never before. Everything *s points to is copied: the caller may reuse it on return.
 * Returns -EINVAL for a bad spec (relative exec_path, more than 8 cgroup fds or rlimits,
 * pod_fd < 0) or a NULL ret_child, or the errno of the parent's preparation or of clone(2) (-EPERM
 * without root, -ENOMEM, -EAGAIN at the pids limit).
 */
int spawn_pod(const PodSpec *s, pid_t *ret_pid, int *ret_pidfd, SpawnChild **ret_child);

/*
 * Ends a child's setup phase, once it has exec'd (its READY=1) or been reaped:
 * *ret_failure (may be NULL) gets the step it reported, {0, 0} when none; its mapping is
 * unmapped (left mapped, leaked, if the child is in fact still setting up: its report
 * pipe's write end is still open) and pomed's dumpable flag restored. NULL is a no-op.
 * Returns NULL.
 */
SpawnChild *spawn_child_release(SpawnChild *c, SpawnFailure *ret_failure);

/* How a pod ended (DESIGN.md "Exit classification"): the base of the `how` word. */
typedef enum PodExit {
        POD_EXIT_NORMAL,            /* "exited": status 0 */
        POD_EXIT_FAILURE,           /* "exit_code:<N>": a nonzero status of the pod itself */
        POD_EXIT_SIGNAL,            /* "signal:SIG<X>": a signal pomed did not send */
        POD_EXIT_KILLED,            /* pomed's own SIGKILL: "killed" (teardown) or its reason */
        POD_EXIT_OOM_KILLED,        /* "oom_killed": the pod's own memory limit */
        POD_EXIT_HOST_OOM_KILLED,   /* "host_oom_killed": a limit above the pod, or the host */
        POD_EXIT_SECCOMP_VIOLATION, /* "seccomp_violation[:<syscall>]": SIGSYS */
        POD_EXIT_START_TIMEOUT,     /* "start_timeout": no READY=1 in time (pomed decides) */
        POD_EXIT_NOT_READY,         /* "not_ready": exited before READY=1 (pomed decides) */
        POD_EXIT_EXEC_FAILED,       /* "exec_failed:<ERRNO>": execve(2) of the pod failed */
        POD_EXIT_SETUP_FAILED,      /* "setup_failed:<step>:<ERRNO>": another spawn step */
        _POD_EXIT_MAX,
} PodExit;

/* The base word above ("exited", "oom_killed"…); "unknown" for anything else. */
const char *pod_exit_to_string(PodExit e);

/* What an OOM kill of the pod is charged to (cg_pod_oom()). */
typedef enum PodOom {
        POD_OOM_NONE, /* no OOM kill recorded in the pod's cgroup */
        POD_OOM_OWN,  /* the pod's own cgroup reached its own limit */
        POD_OOM_HOST, /* killed for a limit above the pod (pomed's, the host's) */
} PodOom;

/* Everything known about one pod's death, gathered by pomed before it classifies it. */
typedef struct PodDeath {
        int code;                /* waitid(2) si_code: CLD_EXITED, CLD_KILLED, CLD_DUMPED */
        int status;              /* waitid(2) si_status: exit status or signal number */
        const char *kill_why;    /* pomed sent SIGKILL: "killed" (teardown), "protocol_error",
                                    "pod_hung"…; NULL when it sent nothing */
        const char *kill_detail; /* a sentence for kill_why, or NULL */
        PodOom oom;
        const char *oom_cgroup; /* POD_OOM_HOST: the cgroup whose limit was reached, or NULL */
        SpawnFailure spawn;     /* from spawn_pod() */
        const char *syscall;    /* SIGSYS: the trapped syscall's name as the pod reported it */
        long syscall_nr;        /* its number, -1 when the pod reported none */
        uid_t uid;              /* the pod's uid, named in the RLIMIT_NPROC advice */
} PodDeath;

/*
 * Classifies a pod's death. Writes the `how` word (API per_twin.<t>.pod.state, sandbox
 * reason pod_exited:<twin>:<how>, logs, D-Bus) into how (howlen bytes): "exited",
 * "exit_code:65", "signal:SIGTERM", "killed" / d->kill_why, "oom_killed",
 * "host_oom_killed", "seccomp_violation:ptrace" (or "seccomp_violation" when the pod died
 * before it could name the syscall), "exec_failed:EAGAIN", "setup_failed:cgroup_join:EACCES";
 * and a sentence for people into detail (detaillen bytes). Both always NUL-terminated.
 * Precedence: a spawn step's report, then SIGSYS, then the OOM killer's record, then
 * pomed's own SIGKILL, then the bare status.
 */
PodExit spawn_classify(const PodDeath *d, char *how, size_t howlen, char *detail, size_t detaillen);
