/* SPDX-License-Identifier: MIT */
#include "supervisor/spawn.h"

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
#include <stdalign.h>
#include <time.h>

#include "common/util.h"
#include "supervisor/rawsys.h"

#define SPAWN_STACK_SIZE   (64 * 1024)
#define SPAWN_MAX_RLIMITS  8
#define SPAWN_MAX_CGROUPS  8
#define SPAWN_HOSTNAME_MAX 64

/*
 * The child runs on its own stack but in pomed's memory (CLONE_VM): no sanitizer
 * instrumentation (it would poison shadow memory pomed later reuses), no libc wrapper
 * that allocates, locks, talks to other threads or sets errno (pomed's, in the TLS the
 * child shares: pomed runs on meanwhile). Only child_sys().
 */
#define CHILD_FN __attribute__((no_sanitize("address", "undefined"), noinline))

/* The child's system calls (supervisor/rawsys.h): a fork-style clone elsewhere than x86-64,
 * whose child has its own copy of errno and of everything else. */
#define SPAWN_CONCURRENT_VM RAW_SYS_INLINE
#define child_sys           raw_sys

/*
 * Everything the child reads, copied by the parent before clone into the mapping that
 * also holds the child's stack (SpawnChild): nothing points into the caller's memory,
 * which the caller reuses while the child still reads.
 */
typedef struct ChildCtx {
        PodSpec spec;     /* its pointers point into the same mapping */
        int devnull;      /* O_RDWR|O_CLOEXEC */
        int parent_pidfd; /* pidfd of pomed, -1 if the kernel has no pidfd_open */
        int report_fd;    /* write end of the report pipe (O_CLOEXEC) */
        int cap_last;     /* /proc/sys/kernel/cap_last_cap */
        size_t hostname_len;
        PodRlimit rlimits[SPAWN_MAX_RLIMITS]; /* clamped to the current hard limits */
        size_t n_rlimits;
} ChildCtx;

struct SpawnChild {
        void *map; /* the child's stack, then (at the low end) ChildCtx and its copies */
        size_t map_size;
        int report_fd; /* the report pipe's read end */
};

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

/* Each spawn step: the sentence ("setup failed at <str>") and the word of a `how`
 * ("setup_failed:<word>:<ERRNO>"), by SpawnChildError code. */
static const struct {
        const char *str, *word;
} child_errors[SPAWN_ERR_LAST - SPAWN_ERR_FIRST + 1] = {
        [SPAWN_ERR_PARENT_DIED - SPAWN_ERR_FIRST] = {"parent died", "parent_died"},
        [SPAWN_ERR_CGROUP - SPAWN_ERR_FIRST] = {"cgroup join", "cgroup_join"},
        [SPAWN_ERR_NAMESPACE - SPAWN_ERR_FIRST] = {"namespaces", "namespaces"},
        [SPAWN_ERR_HOSTNAME - SPAWN_ERR_FIRST] = {"hostname", "hostname"},
        [SPAWN_ERR_CREDENTIALS - SPAWN_ERR_FIRST] = {"credentials", "credentials"},
        [SPAWN_ERR_CAPABILITIES - SPAWN_ERR_FIRST] = {"capabilities", "capabilities"},
        [SPAWN_ERR_FDS - SPAWN_ERR_FIRST] = {"fds, rlimits, signals", "fds"},
        [SPAWN_ERR_SECCOMP - SPAWN_ERR_FIRST] = {"seccomp", "seccomp"},
        [SPAWN_ERR_EXEC - SPAWN_ERR_FIRST] = {"exec", "exec"},
};

const char *spawn_child_error_str(int code)
{
        return code >= SPAWN_ERR_FIRST && code <= SPAWN_ERR_LAST
                       ? child_errors[code - SPAWN_ERR_FIRST].str
                       : NULL;
}

static const char *child_error_word(int code)
{
        return code >= SPAWN_ERR_FIRST && code <= SPAWN_ERR_LAST
                       ? child_errors[code - SPAWN_ERR_FIRST].word
                       : "unknown";
}

/* ----- the child ----- */

/*
 * {step, errno} on the report pipe (pomed reads it once clone returns), "pome-spawn:
 * <step>: errno N\n" on fd for people, then exit with the step's code.
 */
CHILD_FN _noreturn_ static void child_fail(int fd, int report_fd, SpawnChildError step, int err)
{
        SpawnFailure rep = {.step = (int)step, .err = err};
        if (report_fd >= 0)
                (void)child_sys(SYS_write, report_fd, &rep, sizeof(rep));
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
                (void)child_sys(SYS_write, fd, buf, n);
        child_sys(SYS_exit_group, (int)step);
        for (;;)
                ;
}

/* A child_sys() result < 0 → fail the step with its errno. */
#define CHILD_TRY(expr, fd, step)                                      \
        do {                                                           \
                long r_ = (expr);                                      \
                if (r_ < 0)                                            \
                        child_fail((fd), report_fd, (step), (int)-r_); \
        } while (0)

CHILD_FN static int child_main(void *arg)
{
        const ChildCtx *c = arg;
        const PodSpec *s = &c->spec;
        int errfd = s->stderr_fd;     /* becomes 2 at the fds step */
        int report_fd = c->report_fd; /* becomes 4 at the fds step */

        /* 1. cgroups first, so that everything below is accounted to the pod */
        for (size_t i = 0; i < s->n_cgroup_fds; i++) {
                long w = child_sys(SYS_write, s->cgroup_fds[i], "0", 1);
                if (w != 1)
                        child_fail(errfd, report_fd, SPAWN_ERR_CGROUP, w < 0 ? (int)-w : EIO);
        }

        /* Without root (PodSpec.unprivileged) there are no namespaces to shape and no
         * credentials to drop: the pod keeps pomed's uid, with seccomp, no_new_privs,
         * rlimits and whatever cgroup access there is. pomed warns about it. */
        if (s->unprivileged)
                goto fds;
        /*
         * 2. New net, ipc, uts and mount namespaces here rather than in clone (which
         * builds them in pomed's call: a network namespace is ~0.5 ms of pomed's loop),
         * and after the cgroup join, so that their kernel memory is the pod's. Only the
         * pid namespace must come with clone: unshare(CLONE_NEWPID) moves children only.
         */
        CHILD_TRY(child_sys(SYS_unshare, CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNS),
                  errfd, SPAWN_ERR_NAMESPACE);

        /*
         * Then a read-only view of the whole mount tree: one mount_setattr(2) turns every
         * mount private (nothing propagates back to the host) and read-only, nosuid,
         * nodev. No fresh /proc: the pod reads nothing after its seed anyway.
         */
        struct mount_attr ma = {
                .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                .propagation = MS_PRIVATE,
        };
        CHILD_TRY(child_sys(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &ma, sizeof(ma)), errfd,
                  SPAWN_ERR_NAMESPACE);
        CHILD_TRY(child_sys(SYS_chdir, "/"), errfd, SPAWN_ERR_NAMESPACE);

        /* 3. */
        CHILD_TRY(child_sys(SYS_sethostname, s->hostname, c->hostname_len), errfd,
                  SPAWN_ERR_HOSTNAME);

        /* 4. Needs CAP_SETPCAP, so before the uid change. */
        for (int cap = 0; cap <= c->cap_last; cap++) {
                long k = child_sys(SYS_prctl, PR_CAPBSET_DROP, cap, 0, 0, 0);
                if (k < 0 && k != -EINVAL)
                        child_fail(errfd, report_fd, SPAWN_ERR_CAPABILITIES, (int)-k);
        }
        CHILD_TRY(child_sys(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), errfd,
                  SPAWN_ERR_CAPABILITIES);

        /*
         * 5. Raw syscalls change this task only (glibc's setresuid would signal every
         * thread of pomed, whose thread list we share). Without SECBIT_KEEP_CAPS a
         * change to nonzero uids empties the permitted and effective sets; capset
         * then empties inheritable too (and everything for a uid-0 pod).
         */
        CHILD_TRY(child_sys(SYS_setgroups, 0, NULL), errfd, SPAWN_ERR_CREDENTIALS);
        CHILD_TRY(child_sys(SYS_setresgid, s->gid, s->gid, s->gid), errfd, SPAWN_ERR_CREDENTIALS);
        CHILD_TRY(child_sys(SYS_setresuid, s->uid, s->uid, s->uid), errfd, SPAWN_ERR_CREDENTIALS);
        struct __user_cap_header_struct ch = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct cd[_LINUX_CAPABILITY_U32S_3];
        for (size_t i = 0; i < ELEMENTSOF(cd); i++)
                cd[i].effective = cd[i].permitted = cd[i].inheritable = 0;
        CHILD_TRY(child_sys(SYS_capset, &ch, cd), errfd, SPAWN_ERR_CAPABILITIES);

        /*
         * 6. Parent death. The credential change above cleared any earlier
         * PDEATHSIG (commit_creds()), so it is set now; getppid() says 0 in a new pid
         * namespace, so a pidfd of pomed tells whether it died before this point.
         */
        CHILD_TRY(child_sys(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0), errfd,
                  SPAWN_ERR_PARENT_DIED);
        if (c->parent_pidfd >= 0) {
                struct pollfd pfd = {.fd = c->parent_pidfd, .events = POLLIN};
                struct timespec zero = {0, 0};
                if (child_sys(SYS_ppoll, &pfd, 1, &zero, NULL, 0) != 0)
                        child_fail(errfd, report_fd, SPAWN_ERR_PARENT_DIED, 0);
        }

fds:; /* a label is followed by a statement, not a declaration (C17) */
        /*
         * 7. Every source through a temporary >= 4 first: no source can be a target. The
         * report pipe goes first, so that it ends up at 4 (close-on-exec) and survives
         * close_range.
         */
        long t_rep = child_sys(SYS_fcntl, report_fd, F_DUPFD_CLOEXEC, 4);
        if (t_rep < 0)
                child_fail(errfd, report_fd, SPAWN_ERR_FDS, (int)-t_rep);
        report_fd = (int)t_rep;
        long t_null = child_sys(SYS_fcntl, c->devnull, F_DUPFD_CLOEXEC, 4);
        CHILD_TRY(t_null, errfd, SPAWN_ERR_FDS);
        long t_err = child_sys(SYS_fcntl, s->stderr_fd >= 0 ? s->stderr_fd : c->devnull,
                               F_DUPFD_CLOEXEC, 4);
        CHILD_TRY(t_err, errfd, SPAWN_ERR_FDS);
        long t_pod = child_sys(SYS_fcntl, s->pod_fd, F_DUPFD_CLOEXEC, 4);
        CHILD_TRY(t_pod, errfd, SPAWN_ERR_FDS);
        long t_exec = s->exec_fd > 2 ? child_sys(SYS_fcntl, s->exec_fd, F_DUPFD_CLOEXEC, 4) : 0;
        CHILD_TRY(t_exec, errfd, SPAWN_ERR_FDS);
        /* dup3(…, 0) to another number never carries FD_CLOEXEC over (the fd-3 pitfall). */
        CHILD_TRY(child_sys(SYS_dup3, t_null, 0, 0), errfd, SPAWN_ERR_FDS);
        CHILD_TRY(child_sys(SYS_dup3, t_err, 1, 0), errfd, SPAWN_ERR_FDS);
        CHILD_TRY(child_sys(SYS_dup3, t_err, 2, 0), errfd, SPAWN_ERR_FDS);
        CHILD_TRY(child_sys(SYS_dup3, t_pod, 3, 0), errfd, SPAWN_ERR_FDS);
        errfd = 2;
        if (report_fd != 4) {
                CHILD_TRY(child_sys(SYS_dup3, report_fd, 4, O_CLOEXEC), errfd, SPAWN_ERR_FDS);
                report_fd = 4;
        }
        /* the program's O_PATH fd at 5, close-on-exec (an ELF program needs no /dev/fd); it
         * was made after four other temporaries >= 4, so it is not 5 already */
        if (t_exec > 0 && t_exec != 5)
                CHILD_TRY(child_sys(SYS_dup3, t_exec, 5, O_CLOEXEC), errfd, SPAWN_ERR_FDS);
        CHILD_TRY(child_sys(SYS_close_range, t_exec > 0 ? 6 : 5, ~0U, 0), errfd, SPAWN_ERR_FDS);
        for (size_t i = 0; i < c->n_rlimits; i++) {
                struct rlimit rl = {.rlim_cur = c->rlimits[i].cur, .rlim_max = c->rlimits[i].max};
                CHILD_TRY(child_sys(SYS_prlimit64, 0, c->rlimits[i].resource, &rl, NULL), errfd,
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
                (void)child_sys(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(dfl.mask));
        unsigned long empty = 0;
        CHILD_TRY(child_sys(SYS_rt_sigprocmask, SIG_SETMASK, &empty, NULL, sizeof(empty)), errfd,
                  SPAWN_ERR_FDS);

        /* 8. NO_NEW_PRIVS: required for an unprivileged filter, and no setuid exec ever. */
        CHILD_TRY(child_sys(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), errfd, SPAWN_ERR_SECCOMP);
        if (s->stage1)
                CHILD_TRY(child_sys(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, s->stage1), errfd,
                          SPAWN_ERR_SECCOMP);

        /* 9. */
        long e = t_exec > 0 ? child_sys(SYS_execveat, 5, "", s->argv, s->envp, AT_EMPTY_PATH)
                            : child_sys(SYS_execve, s->exec_path, s->argv, s->envp);
        child_fail(errfd, report_fd, SPAWN_ERR_EXEC, (int)-e);
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

/* Bytes from a bump region of the child's mapping (NULL only when the sizing was wrong). */
typedef struct Bump {
        char *at, *end;
} Bump;

static void *bump_copy(Bump *b, const void *src, size_t n)
{
        size_t pad = (size_t)(-(uintptr_t)b->at & (alignof(max_align_t) - 1));
        if ((size_t)(b->end - b->at) < pad + n)
                return NULL;
        void *dst = b->at + pad;
        memcpy(dst, src, n);
        b->at += pad + n;
        return dst;
}

static size_t strv_bytes(char *const *v)
{
        size_t n = sizeof(char *);
        for (; *v; v++)
                n += sizeof(char *) + alignof(max_align_t) + strlen(*v) + 1;
        return n;
}

static char **strv_copy(Bump *b, char *const *v)
{
        size_t n = 0;
        while (v[n])
                n++;
        char **out = bump_copy(b, v, (n + 1) * sizeof(char *));
        for (size_t i = 0; out && i < n; i++)
                if (!(out[i] = bump_copy(b, v[i], strlen(v[i]) + 1)))
                        return NULL;
        return out;
}

/*
 * Mappings of children that are done, kept for the next spawns: a new one would take
 * page faults in the child, and each munmap of a mapping a child used on another CPU
 * costs pomed a TLB shootdown (perf over churn: 4.6 % of pomed's samples).
 */
static struct {
        void *map;
        size_t size;
} spare[4];

static void *map_take(size_t size)
{
        for (size_t i = 0; i < ELEMENTSOF(spare); i++)
                if (spare[i].map && spare[i].size == size) {
                        void *m = spare[i].map;
                        spare[i].map = NULL;
                        return m;
                }
        void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
                       -1, 0);
        return m == MAP_FAILED ? NULL : m;
}

static void map_give(void *map, size_t size)
{
        for (size_t i = 0; i < ELEMENTSOF(spare); i++)
                if (!spare[i].map) {
                        spare[i].map = map;
                        spare[i].size = size;
                        return;
                }
        munmap(map, size);
}

/*
 * One mapping: ChildCtx and copies of everything the spec points to at the low end, the
 * stack above them (it grows down, from the top). Returns NULL with errno set.
 */
static SpawnChild *child_map(const PodSpec *s, const char *hostname)
{
        size_t strings = strlen(s->exec_path) + 1 + strv_bytes(s->argv) + strv_bytes(s->envp) +
                         strlen(hostname) + 1 + s->n_cgroup_fds * sizeof(int) +
                         (s->stage1 ? sizeof(*s->stage1) +
                                              (size_t)s->stage1->len * sizeof(struct sock_filter)
                                    : 0) +
                         8 * alignof(max_align_t);
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        size_t low = (sizeof(SpawnChild) + sizeof(ChildCtx) + strings + page - 1) & ~(page - 1);
        size_t size = low + SPAWN_STACK_SIZE;
        void *map = map_take(size);
        if (!map)
                return NULL;
        SpawnChild *h = map;
        *h = (SpawnChild){.map = map, .map_size = size, .report_fd = -1};
        ChildCtx *c = (ChildCtx *)(h + 1);
        *c = (ChildCtx){.spec = *s, .parent_pidfd = -1, .report_fd = -1, .devnull = -1};
        Bump b = {.at = (char *)(c + 1), .end = (char *)map + low};
        PodSpec *cs = &c->spec;
        cs->exec_path = bump_copy(&b, s->exec_path, strlen(s->exec_path) + 1);
        cs->argv = strv_copy(&b, s->argv);
        cs->envp = strv_copy(&b, s->envp);
        cs->hostname = bump_copy(&b, hostname, strlen(hostname) + 1);
        cs->cgroup_fds = s->n_cgroup_fds
                                 ? bump_copy(&b, s->cgroup_fds, s->n_cgroup_fds * sizeof(int))
                                 : NULL;
        cs->rlimits = NULL; /* ChildCtx.rlimits, clamped, is what the child reads */
        bool ok = cs->exec_path && cs->argv && cs->envp && cs->hostname &&
                  (!s->n_cgroup_fds || cs->cgroup_fds);
        if (ok && s->stage1) {
                struct sock_fprog *fp = bump_copy(&b, s->stage1, sizeof(*s->stage1));
                ok = fp &&
                     (fp->filter = bump_copy(&b, s->stage1->filter,
                                             (size_t)s->stage1->len * sizeof(struct sock_filter)));
                cs->stage1 = fp;
        }
        if (!ok) { /* the sizing above is wrong: a bug, not a state */
                map_give(map, size);
                errno = ENOBUFS;
                return NULL;
        }
        return h;
}

static ChildCtx *child_ctx(SpawnChild *h)
{
        return (ChildCtx *)(h + 1);
}

/*
 * pomed's own PR_GET_DUMPABLE, restored after each child: a child's uid change marks the
 * mm it shares non-dumpable (commit_creds()), which would leave pomed without core dumps
 * and with root-only /proc files. Read while no child of ours can have changed it.
 */
static int own_dumpable = -1;
static unsigned children_in_setup;

static void restore_dumpable(void)
{
        if (own_dumpable == 1)
                (void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

SpawnChild *spawn_child_release(SpawnChild *h, SpawnFailure *ret_failure)
{
        SpawnFailure failure = {};
        if (!h) {
                if (ret_failure)
                        *ret_failure = failure;
                return NULL;
        }
        bool done = true;
        if (h->report_fd >= 0) {
                if (read(h->report_fd, &failure, sizeof(failure)) != (ssize_t)sizeof(failure))
                        failure = (SpawnFailure){};
                /* the write end closes at execve or exit: until then the child is running
                 * on this mapping, which must then stay (a bug of the caller's, leaked) */
                struct pollfd pfd = {.fd = h->report_fd, .events = POLLIN};
                done = poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLHUP);
                h->report_fd = safe_close(h->report_fd);
        }
        if (ret_failure)
                *ret_failure = failure;
        if (children_in_setup > 0)
                children_in_setup--;
        restore_dumpable();
        if (done)
                map_give(h->map, h->map_size);
        return NULL;
}

int spawn_pod(const PodSpec *s, pid_t *ret_pid, int *ret_pidfd, SpawnChild **ret_child)
{
        if (!s || !ret_child || !s->exec_path || s->exec_path[0] != '/' || !s->argv || !s->envp ||
            s->pod_fd < 0 || s->n_cgroup_fds > SPAWN_MAX_CGROUPS ||
            (s->n_cgroup_fds > 0 && !s->cgroup_fds))
                return -EINVAL;
        const char *hostname = s->hostname ? s->hostname : "pod";
        size_t hostname_len = strlen(hostname);
        if (hostname_len == 0 || hostname_len > SPAWN_HOSTNAME_MAX)
                return -EINVAL;

        const PodRlimit *rl = s->rlimits;
        size_t n_rl = s->n_rlimits;
        if (!rl)
                rl = spawn_default_rlimits(&n_rl);
        if (n_rl > SPAWN_MAX_RLIMITS)
                return -EINVAL;
        PodRlimit clamped[SPAWN_MAX_RLIMITS];
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
                clamped[i] = r;
        }

        _cleanup_close_ int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (devnull < 0)
                return negative_errno();
        _cleanup_close_ int self = (int)syscall(SYS_pidfd_open, getpid(), 0);
        if (self < 0 && errno != ENOSYS)
                return negative_errno();
        /* A child's SpawnFailure: 8 bytes, atomic in a pipe (PIPE_BUF). */
        int rep[2];
        if (pipe2(rep, O_CLOEXEC | O_NONBLOCK) < 0)
                return negative_errno();
        _cleanup_close_ int rep_read = rep[0];
        _cleanup_close_ int rep_write = rep[1];

        SpawnChild *h = child_map(s, hostname);
        if (!h)
                return negative_errno();
        ChildCtx *c = child_ctx(h);
        c->devnull = devnull;
        c->parent_pidfd = self;
        c->report_fd = rep_write;
        c->cap_last = read_cap_last();
        c->hostname_len = hostname_len;
        memcpy(c->rlimits, clamped, n_rl * sizeof(PodRlimit));
        c->n_rlimits = n_rl;

        /*
         * Block every signal across the clone: the child inherits the mask and resets
         * handlers before unblocking, so no pomed handler ever runs in the child.
         */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        if (children_in_setup == 0)
                own_dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);

        int pidfd = -1;
        int ns = s->unprivileged ? 0 : CLONE_NEWPID;
        /*
         * pomed's memory, never a copy of its page tables (nor the copy-on-write faults
         * pomed would take on every page it writes afterwards), and no CLONE_VFORK: pomed
         * does not wait through the child's setup. The mapping lives on until the child
         * has exec'd or exited (spawn_child_release).
         */
        int share = SPAWN_CONCURRENT_VM ? CLONE_VM : 0;
        pid_t pid = clone(child_main, (char *)h->map + h->map_size,
                          share | CLONE_PIDFD | ns | SIGCHLD, c, &pidfd);
        int r = pid < 0 ? negative_errno() : 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r < 0) {
                restore_dumpable();
                map_give(h->map, h->map_size);
                return r;
        }
        rep_write = safe_close(rep_write);
        h->report_fd = TAKE_FD(rep_read);
        children_in_setup++;
        *ret_child = h; /* the child is still setting up */
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
                [POD_EXIT_KILLED] = "killed",
                [POD_EXIT_OOM_KILLED] = "oom_killed",
                [POD_EXIT_HOST_OOM_KILLED] = "host_oom_killed",
                [POD_EXIT_SECCOMP_VIOLATION] = "seccomp_violation",
                [POD_EXIT_START_TIMEOUT] = "start_timeout",
                [POD_EXIT_NOT_READY] = "not_ready",
                [POD_EXIT_EXEC_FAILED] = "exec_failed",
                [POD_EXIT_SETUP_FAILED] = "setup_failed",
        };
        return (unsigned)e < _POD_EXIT_MAX ? names[e] : "unknown";
}

static const char *errno_name(int err)
{
        const char *n = err > 0 ? strerrorname_np(err) : NULL;
        return n ? n : "EUNKNOWN";
}

static const char *signal_name(int sig, char *buf, size_t len)
{
        const char *abbrev = sigabbrev_np(sig);
        if (abbrev)
                snprintf(buf, len, "SIG%s", abbrev);
        else
                snprintf(buf, len, "SIG%d", sig);
        return buf;
}

/* Signals a process raises on itself by faulting or aborting, not sent from outside. */
static bool signal_is_fault(int sig)
{
        return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL ||
               sig == SIGABRT || sig == SIGTRAP;
}

static PodExit classify_spawn(const PodDeath *d, char *how, size_t howlen, char *detail,
                              size_t detaillen)
{
        int step = d->spawn.step, err = d->spawn.err;
        if (step == SPAWN_ERR_EXEC) {
                snprintf(how, howlen, "exec_failed:%s", errno_name(err));
                if (err == EAGAIN)
                        snprintf(detail, detaillen,
                                 "execve of the pod failed with EAGAIN: uid %u has reached its "
                                 "RLIMIT_NPROC (every process of that uid on the host counts); "
                                 "end that uid's stray processes, raise its process limit, or "
                                 "run pods as a user of their own (pod_user)",
                                 (unsigned)d->uid);
                else if (err == EACCES || err == ENOENT || err == ENOTDIR)
                        snprintf(detail, detaillen,
                                 "execve of the pod failed: %s (can uid %u reach and execute "
                                 "pome-pod and every directory above it?)",
                                 strerror(err), (unsigned)d->uid);
                else
                        snprintf(detail, detaillen, "execve of the pod failed: %s", strerror(err));
                return POD_EXIT_EXEC_FAILED;
        }
        if (err > 0) {
                snprintf(how, howlen, "setup_failed:%s:%s", child_error_word(step),
                         errno_name(err));
                snprintf(detail, detaillen, "setup failed at %s: %s", spawn_child_error_str(step),
                         strerror(err));
        } else {
                snprintf(how, howlen, "setup_failed:%s", child_error_word(step));
                snprintf(detail, detaillen, "setup failed at %s", spawn_child_error_str(step));
        }
        return POD_EXIT_SETUP_FAILED;
}

PodExit spawn_classify(const PodDeath *d, char *how, size_t howlen, char *detail, size_t detaillen)
{
        int st = d->status;
        char sig[32];

        if (d->spawn.step >= SPAWN_ERR_FIRST && d->spawn.step <= SPAWN_ERR_LAST)
                return classify_spawn(d, how, howlen, detail, detaillen);

        switch (d->code) {
        case CLD_EXITED:
                if (st == 0) {
                        snprintf(how, howlen, "exited");
                        snprintf(detail, detaillen, "exited with status 0");
                        return POD_EXIT_NORMAL;
                }
                /* 119..127 without a report on the pipe came from the pod itself, after exec */
                snprintf(how, howlen, "exit_code:%d", st);
                snprintf(detail, detaillen, "exited with status %d", st);
                return POD_EXIT_FAILURE;
        case CLD_KILLED:
        case CLD_DUMPED:
                if (st == SIGSYS) {
                        if (d->syscall) {
                                snprintf(how, howlen, "seccomp_violation:%s", d->syscall);
                                snprintf(detail, detaillen,
                                         "killed by SIGSYS: the seccomp policy forbids %s "
                                         "(syscall %ld)",
                                         d->syscall, d->syscall_nr);
                        } else {
                                snprintf(how, howlen, "seccomp_violation");
                                snprintf(detail, detaillen,
                                         "killed by SIGSYS: a forbidden syscall (x32 or foreign "
                                         "ABI, or made before the pod could name it)");
                        }
                        return POD_EXIT_SECCOMP_VIOLATION;
                }
                if (st == SIGKILL && d->oom == POD_OOM_OWN) {
                        snprintf(how, howlen, "oom_killed");
                        snprintf(detail, detaillen,
                                 "killed by the OOM killer: the pod reached its own memory limit");
                        return POD_EXIT_OOM_KILLED;
                }
                if (st == SIGKILL && d->oom == POD_OOM_HOST) {
                        snprintf(how, howlen, "host_oom_killed");
                        if (d->oom_cgroup)
                                snprintf(detail, detaillen,
                                         "killed by the OOM killer for the memory limit of "
                                         "cgroup %s, above the pod (its own limit was not "
                                         "reached)",
                                         d->oom_cgroup);
                        else
                                snprintf(detail, detaillen,
                                         "killed by the OOM killer for a memory shortage above "
                                         "the pod (the host's); its own limit was not reached");
                        return POD_EXIT_HOST_OOM_KILLED;
                }
                if (st == SIGKILL && d->kill_why) {
                        snprintf(how, howlen, "%s", d->kill_why);
                        snprintf(detail, detaillen, "%s",
                                 d->kill_detail                 ? d->kill_detail
                                 : streq(d->kill_why, "killed") ? "killed by pomed (teardown)"
                                                                : "killed by pomed");
                        return POD_EXIT_KILLED;
                }
                snprintf(how, howlen, "signal:%s", signal_name(st, sig, sizeof(sig)));
                if (signal_is_fault(st))
                        snprintf(detail, detaillen, "killed by %s: the pod crashed", sig);
                else
                        snprintf(detail, detaillen,
                                 "killed by %s, sent from outside pomed (pomed only sends "
                                 "SIGKILL, and did not)",
                                 sig);
                return POD_EXIT_SIGNAL;
        default:
                snprintf(how, howlen, "signal:%s", signal_name(st, sig, sizeof(sig)));
                snprintf(detail, detaillen, "stopped or traced (si_code %d, status %d)", d->code,
                         st);
                return POD_EXIT_SIGNAL;
        }
}
