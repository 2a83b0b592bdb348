/* SPDX-License-Identifier: MIT */
#include "spawn.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "common/util.h"

#define SPAWN_STACK_SIZE   (64 * 1024)
#define SPAWN_MAX_RLIMITS  8
#define SPAWN_MAX_CGROUPS  8
#define SPAWN_HOSTNAME_MAX 64

/*
 * The child runs on its own stack but in pomed's memory (CLONE_VM): no sanitizer
 * instrumentation (it would poison shadow memory pomed later reuses), no libc wrapper
 * that allocates, locks, or talks to other threads. Only raw syscall(2).
 */
#define CHILD_FN __attribute__((no_sanitize("address", "undefined"), noinline))

/* Everything the child reads, prepared by the parent before clone. */
typedef struct ChildCtx {
        const PodSpec *spec;
        int devnull;      /* O_RDWR|O_CLOEXEC */
        int parent_pidfd; /* pidfd of pomed, -1 if the kernel has no pidfd_open */
        int cap_last;     /* /proc/sys/kernel/cap_last_cap */
        const char *hostname;
        size_t hostname_len;
        PodRlimit rlimits[SPAWN_MAX_RLIMITS]; /* clamped to the current hard limits */
        size_t n_rlimits;
} ChildCtx;

static const PodRlimit default_rlimits[] = {
        {RLIMIT_NOFILE, 64, 64},
        {RLIMIT_CORE, 0, 0},
        {RLIMIT_MEMLOCK, 0, 0},
        {RLIMIT_MSGQUEUE, 0, 0},
};

const PodRlimit *spawn_default_rlimits(size_t *ret_n)
{
        *ret_n = ELEMENTSOF(default_rlimits);
        return default_rlimits;
}

const char *spawn_child_error_str(int code)
{
        switch (code) {
        case SPAWN_ERR_PARENT_DIED:
                return "parent died";
        case SPAWN_ERR_CGROUP:
                return "cgroup join";
        case SPAWN_ERR_NAMESPACE:
                return "mount namespace";
        case SPAWN_ERR_HOSTNAME:
                return "hostname";
        case SPAWN_ERR_CREDENTIALS:
                return "credentials";
        case SPAWN_ERR_CAPABILITIES:
                return "capabilities";
        case SPAWN_ERR_FDS:
                return "fds, rlimits, signals";
        case SPAWN_ERR_SECCOMP:
                return "seccomp";
        case SPAWN_ERR_EXEC:
                return "exec";
        default:
                return NULL;
        }
}

/* ----- the child ----- */

/* "pome-spawn: <step>: errno N\n" on fd, then exit with the step's code. */
CHILD_FN _noreturn_ static void child_fail(int fd, SpawnChildError step, int err)
{
        char buf[128];
        size_t n = 0;
        const char *parts[] = {"pome-spawn: ", spawn_child_error_str(step), ": errno "};
        for (size_t i = 0; i < ELEMENTSOF(parts); i++)
                for (const char *p = parts[i]; *p && n < sizeof(buf) - 16; p++)
                        buf[n++] = *p;
        char digits[12];
        size_t d = 0;
        unsigned v = err > 0 ? (unsigned)err : 0;
        do {
                digits[d++] = (char)('0' + v % 10);
                v /= 10;
        } while (v && d < sizeof(digits));
        while (d)
                buf[n++] = digits[--d];
        buf[n++] = '\n';
        if (fd >= 0)
                (void)syscall(SYS_write, fd, buf, n);
        syscall(SYS_exit_group, (int)step);
        for (;;)
                ;
}

/* -1 → fail with errno, for raw syscalls. */
#define CHILD_TRY(expr, fd, step)                        \
        do {                                             \
                if ((long)(expr) < 0)                    \
                        child_fail((fd), (step), errno); \
        } while (0)

CHILD_FN static int child_main(void *arg)
{
        const ChildCtx *c = arg;
        const PodSpec *s = c->spec;
        int errfd = s->stderr_fd; /* becomes 2 at the fds step */

        /* 1. cgroups first, so that everything below is accounted to the pod */
        for (size_t i = 0; i < s->n_cgroup_fds; i++)
                if (syscall(SYS_write, s->cgroup_fds[i], "0", 1) != 1)
                        child_fail(errfd, SPAWN_ERR_CGROUP, errno);

        /* Without root (PodSpec.unprivileged) there are no namespaces to shape and no
         * credentials to drop: the pod keeps pomed's uid, with seccomp, no_new_privs,
         * rlimits and whatever cgroup access there is. pomed warns about it. */
        if (s->unprivileged)
                goto fds;

        /*
         * 2. A read-only view of the whole mount tree: one mount_setattr(2) turns every
         * mount private (nothing propagates back to the host) and read-only, nosuid,
         * nodev. No fresh /proc: the pod reads nothing after its seed anyway.
         */
        struct mount_attr ma = {
                .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                .propagation = MS_PRIVATE,
        };
        CHILD_TRY(syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &ma, sizeof(ma)), errfd,
                  SPAWN_ERR_NAMESPACE);
        CHILD_TRY(syscall(SYS_chdir, "/"), errfd, SPAWN_ERR_NAMESPACE);

        /* 3. */
        CHILD_TRY(syscall(SYS_sethostname, c->hostname, c->hostname_len), errfd,
                  SPAWN_ERR_HOSTNAME);

        /* 4. Needs CAP_SETPCAP, so before the uid change. */
        for (int cap = 0; cap <= c->cap_last; cap++)
                if (syscall(SYS_prctl, PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
                        child_fail(errfd, SPAWN_ERR_CAPABILITIES, errno);
        CHILD_TRY(syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), errfd,
                  SPAWN_ERR_CAPABILITIES);

        /*
         * 5. Raw syscalls change this task only (glibc's setresuid would signal every
         * thread of pomed, whose thread list we share). Without SECBIT_KEEP_CAPS a
         * change to nonzero uids empties the permitted and effective sets; capset
         * then empties inheritable too (and everything for a uid-0 pod).
         */
        CHILD_TRY(syscall(SYS_setgroups, 0, NULL), errfd, SPAWN_ERR_CREDENTIALS);
        CHILD_TRY(syscall(SYS_setresgid, s->gid, s->gid, s->gid), errfd, SPAWN_ERR_CREDENTIALS);
        CHILD_TRY(syscall(SYS_setresuid, s->uid, s->uid, s->uid), errfd, SPAWN_ERR_CREDENTIALS);
        struct __user_cap_header_struct ch = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct cd[_LINUX_CAPABILITY_U32S_3];
        for (size_t i = 0; i < ELEMENTSOF(cd); i++)
                cd[i].effective = cd[i].permitted = cd[i].inheritable = 0;
        CHILD_TRY(syscall(SYS_capset, &ch, cd), errfd, SPAWN_ERR_CAPABILITIES);

        /*
         * 6. Parent death. The credential change above cleared any earlier
         * PDEATHSIG (commit_creds()), so it is set now; getppid() says 0 in a new pid
         * namespace, so a pidfd of pomed tells whether it died before this point.
         */
        CHILD_TRY(syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0), errfd,
                  SPAWN_ERR_PARENT_DIED);
        if (c->parent_pidfd >= 0) {
                struct pollfd pfd = {.fd = c->parent_pidfd, .events = POLLIN};
                struct timespec zero = {0, 0};
                if (syscall(SYS_ppoll, &pfd, 1, &zero, NULL, 0) != 0)
                        child_fail(errfd, SPAWN_ERR_PARENT_DIED, 0);
        }

fds:; /* a label is followed by a statement, not a declaration (C17) */
        /* 7. Every source through a temporary >= 4 first: no source can be a target. */
        int t_null = (int)syscall(SYS_fcntl, c->devnull, F_DUPFD_CLOEXEC, 4);
        int t_err = (int)syscall(SYS_fcntl, s->stderr_fd >= 0 ? s->stderr_fd : c->devnull,
                                 F_DUPFD_CLOEXEC, 4);
        int t_pod = (int)syscall(SYS_fcntl, s->pod_fd, F_DUPFD_CLOEXEC, 4);
        if (t_null < 0 || t_err < 0 || t_pod < 0)
                child_fail(errfd, SPAWN_ERR_FDS, errno);
        /* dup3(…, 0) to another number never carries FD_CLOEXEC over (the fd-3 pitfall). */
        if (syscall(SYS_dup3, t_null, 0, 0) < 0 || syscall(SYS_dup3, t_err, 1, 0) < 0 ||
            syscall(SYS_dup3, t_err, 2, 0) < 0 || syscall(SYS_dup3, t_pod, 3, 0) < 0)
                child_fail(errfd, SPAWN_ERR_FDS, errno);
        errfd = 2;
        CHILD_TRY(syscall(SYS_close_range, 4, ~0U, 0), errfd, SPAWN_ERR_FDS);
        for (size_t i = 0; i < c->n_rlimits; i++) {
                struct rlimit rl = {.rlim_cur = c->rlimits[i].cur, .rlim_max = c->rlimits[i].max};
                CHILD_TRY(syscall(SYS_prlimit64, 0, c->rlimits[i].resource, &rl, NULL), errfd,
                          SPAWN_ERR_FDS);
        }
        /*
         * pomed's handlers must never run here (on this stack, in pomed's memory) and
         * its mask (all blocked, for signalfd) must not reach the pod: defaults, then
         * unblock. Kernel sigaction layout: handler, flags, restorer, mask.
         */
        struct {
                void *handler;
                unsigned long flags;
                void *restorer;
                unsigned long mask;
        } dfl = {.handler = SIG_DFL};
        for (int sig = 1; sig < _NSIG; sig++)
                (void)syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(dfl.mask));
        unsigned long empty = 0;
        CHILD_TRY(syscall(SYS_rt_sigprocmask, SIG_SETMASK, &empty, NULL, sizeof(empty)), errfd,
                  SPAWN_ERR_FDS);

        /* 8. NO_NEW_PRIVS: required for an unprivileged filter, and no setuid exec ever. */
        CHILD_TRY(syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), errfd, SPAWN_ERR_SECCOMP);
        if (s->stage1)
                CHILD_TRY(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, s->stage1), errfd,
                          SPAWN_ERR_SECCOMP);

        /* 9. */
        syscall(SYS_execve, s->exec_path, s->argv, s->envp);
        child_fail(errfd, SPAWN_ERR_EXEC, errno);
}

/* ----- the parent ----- */

static int read_cap_last(void)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
        int v;
        if (!f || fscanf(f, "%d", &v) != 1 || v < 0 || v > 63)
                return 63; /* PR_CAPBSET_DROP past the last one fails with EINVAL, ignored */
        return v;
}

int spawn_pod(const PodSpec *s, pid_t *ret_pid, int *ret_pidfd)
{
        if (!s || !s->exec_path || s->exec_path[0] != '/' || !s->argv || !s->envp ||
            s->pod_fd < 0 || s->n_cgroup_fds > SPAWN_MAX_CGROUPS ||
            (s->n_cgroup_fds > 0 && !s->cgroup_fds))
                return -EINVAL;

        ChildCtx c = {.spec = s, .parent_pidfd = -1};
        c.hostname = s->hostname ? s->hostname : "pod";
        c.hostname_len = strlen(c.hostname);
        if (c.hostname_len == 0 || c.hostname_len > SPAWN_HOSTNAME_MAX)
                return -EINVAL;

        const PodRlimit *rl = s->rlimits;
        size_t n_rl = s->n_rlimits;
        if (!rl)
                rl = spawn_default_rlimits(&n_rl);
        if (n_rl > SPAWN_MAX_RLIMITS)
                return -EINVAL;
        for (size_t i = 0; i < n_rl; i++) {
                struct rlimit cur;
                if (getrlimit(rl[i].resource, &cur) < 0)
                        return negative_errno();
                PodRlimit r = rl[i];
                if (cur.rlim_max != RLIM_INFINITY &&
                    (r.max == RLIM_INFINITY || r.max > cur.rlim_max))
                        r.max = cur.rlim_max;
                if (r.cur > r.max)
                        r.cur = r.max;
                c.rlimits[c.n_rlimits++] = r;
        }
        c.cap_last = read_cap_last();

        _cleanup_close_ int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (devnull < 0)
                return negative_errno();
        c.devnull = devnull;
        _cleanup_close_ int self = (int)syscall(SYS_pidfd_open, getpid(), 0);
        if (self < 0 && errno != ENOSYS)
                return negative_errno();
        c.parent_pidfd = self;

        void *stack = mmap(NULL, SPAWN_STACK_SIZE, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (stack == MAP_FAILED)
                return negative_errno();

        /*
         * Block every signal across the clone: the child inherits the mask and resets
         * handlers before unblocking, so no pomed handler ever runs in the child.
         */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);

        /*
         * The child's uid change marks the shared mm non-dumpable (commit_creds()), which
         * would leave pomed without core dumps and with root-only /proc files: restore.
         */
        int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);

        int pidfd = -1;
        int ns = s->unprivileged
                         ? 0
                         : CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNS;
        pid_t pid = clone(child_main, (char *)stack + SPAWN_STACK_SIZE,
                          CLONE_VM | CLONE_VFORK | CLONE_PIDFD | ns | SIGCHLD, &c, &pidfd);
        int r = pid < 0 ? negative_errno() : 0;

        if (dumpable == 1)
                (void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        munmap(stack, SPAWN_STACK_SIZE);
        if (r < 0)
                return r;
        *ret_pid = pid;
        *ret_pidfd = pidfd;
        return 0;
}

/* ----- how it ended ----- */

const char *pod_exit_to_string(PodExit e)
{
        static const char *const names[_POD_EXIT_MAX] = {
                [POD_EXIT_NORMAL] = "exited",
                [POD_EXIT_FAILURE] = "exit_code",
                [POD_EXIT_SIGNAL] = "signal",
                [POD_EXIT_OOM_KILLED] = "oom_killed",
                [POD_EXIT_SECCOMP_VIOLATION] = "seccomp_violation",
                [POD_EXIT_START_TIMEOUT] = "start_timeout",
                [POD_EXIT_NOT_READY] = "not_ready",
                [POD_EXIT_SETUP_FAILED] = "setup_failed",
        };
        return (unsigned)e < _POD_EXIT_MAX ? names[e] : "unknown";
}

PodExit spawn_classify(const siginfo_t *si, int oom_killed, char *detail, size_t len)
{
        int st = si->si_status;

        switch (si->si_code) {
        case CLD_EXITED:
                if (st == 0) {
                        snprintf(detail, len, "exited with status 0");
                        return POD_EXIT_NORMAL;
                }
                if (st >= SPAWN_ERR_FIRST && st <= SPAWN_ERR_LAST) {
                        snprintf(detail, len, "setup failed at %s (status %d)",
                                 spawn_child_error_str(st), st);
                        return POD_EXIT_SETUP_FAILED;
                }
                snprintf(detail, len, "exited with status %d", st);
                return POD_EXIT_FAILURE;
        case CLD_KILLED:
        case CLD_DUMPED:
                if (st == SIGSYS) {
                        snprintf(detail, len, "killed by SIGSYS: forbidden syscall");
                        return POD_EXIT_SECCOMP_VIOLATION;
                }
                if (st == SIGKILL && oom_killed > 0) {
                        snprintf(detail, len, "killed by the OOM killer at its memory limit");
                        return POD_EXIT_OOM_KILLED;
                }
                const char *abbrev = sigabbrev_np(st);
                if (abbrev)
                        snprintf(detail, len, "killed by SIG%s", abbrev);
                else
                        snprintf(detail, len, "killed by signal %d", st);
                return POD_EXIT_SIGNAL;
        default:
                snprintf(detail, len, "stopped or traced (si_code %d, status %d)", si->si_code, st);
                return POD_EXIT_SIGNAL;
        }
}
