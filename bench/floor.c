/* SPDX-License-Identifier: MIT */
/*
 * The same-isolation fork+exec floor: what starting and stopping N servers costs with the
 * isolation pomed gives a pod (supervisor/spawn.c, supervisor/cgroup.c) and nothing else —
 * no libcgroup, no event loop, no sd_notify, no protocol, no seed. The baseline for pomed's
 * pod start times. Per server:
 *   - a leaf in the memory, pids and cpu cgroups with pomed's default limits
 *     (POD_LIMITS_DEFAULT: 64 MiB memory and memsw, pids.max 32, cpu.shares 1024) and its
 *     cgroup.procs opened for the child;
 *   - a vfork-style clone (CLONE_VM|CLONE_VFORK|CLONE_PIDFD) into new pid, net, ipc, uts and
 *     mount namespaces; the child runs raw syscalls only, in spawn.c's order: join the
 *     cgroups, "/" private and read-only recursively, hostname, empty capability sets,
 *     nobody (65534), PDEATHSIG, fds (socket → 3, /dev/null → 0 1 2, close_range), rlimits,
 *     signals, no_new_privs, a seccomp filter, execve of the static bench/floor-server,
 *     which writes one READY byte and echoes.
 *
 * Latency mode (default): K iterations of [sleep M ms (--idle-ms: cold)], start N servers
 * one after the other, wait for every READY (start_ms: first mkdir → last READY), one echo
 * each (untimed), close the sockets, reap, rmdir the leaves (teardown_ms).
 * Churn mode (--clients C): C forked clients each run such rounds for S seconds; per_s is
 * the rounds completed per second by all clients together.
 * Hold mode (--hold H): H×N servers alive at once; their mean Pss, the host's MemAvailable
 * drop per set of N (read before the first spawn and 1 s after every server answered;
 * bench/harness.py starts it on a settled host), and an isolation check of the first one
 * (credentials, no_new_privs, seccomp, capabilities, cgroups, namespaces, read-only
 * mounts).
 * One JSON object on stdout. A failed step counts in "errors" (the first few say why on
 * stderr, one line each); a round with an error leaves no timing.
 *
 * Lighter than pomed on purpose: leaves by mkdir(2) (pomed: libcgroup), a hand-built deny
 * list of 35 BPF instructions (pomed: libseccomp's stage-1 allow list, and a stage 2 the
 * pod loads itself), READY as a byte on fd 3 (pomed: sd_notify datagram), teardown by EOF
 * (pomed: SIGKILL, cg_pod_release from its event loop), the failed step in shared memory
 * (pomed: a report pipe per spawn), /dev/null, our pidfd and the child stack made once per
 * process (pomed: per spawn), only our two handlers reset in the child (pomed: all).
 *
 * Needs root and cgroup v1 (memory, pids, cpu at /sys/fs/cgroup/<controller>). Like pomed's
 * tree, the leaves go under our own cgroup: <own>/pome-floor-<pid>/<leaf>, removed at exit.
 * Not built by CMake:
 *   cc -O2 -static -o floor-server bench/floor-server.c
 *   cc -O2 -o floor bench/floor.c
 *   ./floor [--servers N(1..3)] [--iterations K] [--idle-ms M] [--server PATH]
 *   ./floor --servers 2 --clients 4 --seconds 3
 *   ./floor --servers 1 --hold 20
 * --server defaults to floor-server next to floor; nobody must be able to execute it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef __x86_64__
#error "the seccomp filter below is for x86_64"
#endif

#define MAX_SERVERS 3
#define N_CTRL      3
#define NOBODY      65534
#define TIMEOUT_MS  5000
#define MAX_REPORTS 5 /* error lines on stderr, per process */

enum { CG_MEMORY, CG_PIDS, CG_CPU };
static const char *const ctrl_names[N_CTRL] = {"memory", "pids", "cpu"};

/* cg_pod_limit_values() for POD_LIMITS_DEFAULT on v1, in its write order (limit before memsw). */
static const struct {
        int ctrl;
        const char *file, *value;
} limits[] = {
        {CG_MEMORY, "memory.limit_in_bytes", "67108864"},
        {CG_MEMORY, "memory.memsw.limit_in_bytes", "67108864"}, /* with swap accounting only */
        {CG_PIDS, "pids.max", "32"},
        {CG_CPU, "cpu.shares", "1024"},
};

/* spawn_default_rlimits() */
static const struct {
        int resource;
        rlim_t cur, max;
} rlimits[] = {
        {RLIMIT_NOFILE, 64, 64},
        {RLIMIT_CORE, 0, 0},
        {RLIMIT_MEMLOCK, 0, 0},
        {RLIMIT_MSGQUEUE, 0, 0},
};

/* SpawnChildError: a child's exit status names its failed step. */
enum {
        STEP_PARENT_DIED = 119,
        STEP_CGROUP,
        STEP_NAMESPACE,
        STEP_HOSTNAME,
        STEP_CREDENTIALS,
        STEP_CAPABILITIES,
        STEP_FDS,
        STEP_SECCOMP,
        STEP_EXEC,
};
static const char *const step_names[] = {
        "parent died",  "cgroup join", "mount namespace", "hostname", "credentials",
        "capabilities", "fds",         "seccomp",         "exec",
};

/*
 * Denied (kill the process): roughly the [kill] list of policies/pod-stage1.policy, as a
 * deny list rather than pomed's allow list. What is measured is the cost of loading a
 * filter of that size, not a policy.
 */
static const int denied[] = {SYS_ptrace,
                             SYS_process_vm_readv,
                             SYS_process_vm_writev,
                             SYS_mount,
                             SYS_umount2,
                             SYS_pivot_root,
                             SYS_chroot,
                             SYS_fsopen,
                             SYS_fsconfig,
                             SYS_fsmount,
                             SYS_fspick,
                             SYS_move_mount,
                             SYS_open_tree,
                             SYS_mount_setattr,
                             SYS_setns,
                             SYS_unshare,
                             SYS_bpf,
                             SYS_perf_event_open,
                             SYS_userfaultfd,
                             SYS_open_by_handle_at,
                             SYS_name_to_handle_at,
                             SYS_kexec_load,
                             SYS_init_module,
                             SYS_finit_module,
                             SYS_delete_module,
                             SYS_keyctl,
                             SYS_add_key,
                             SYS_request_key};
#define N_DENIED    (sizeof(denied) / sizeof(denied[0]))
#define FILTER_SIZE (N_DENIED + 7)

typedef struct Server {
        char name[32];     /* the leaf's name in each hierarchy */
        bool made[N_CTRL]; /* the leaf exists */
        int procs[N_CTRL]; /* its cgroup.procs, for the child to join */
        int sock;          /* our end of the socketpair */
        int pidfd;
        pid_t pid;
        bool ready;  /* its READY byte came */
        bool failed; /* a failure of its own was counted already */
} Server;

/* What the child reads, and where it says which step failed (CLONE_VM: shared memory). */
typedef struct Child {
        const Server *srv;
        int sock; /* the child's end */
        int step, err;
} Child;

static struct {
        char parent[N_CTRL][PATH_MAX]; /* <mount><own cgroup>/pome-floor-<pid> */
        bool parent_made[N_CTRL];
        bool memsw;
        char server[PATH_MAX];
        int devnull;    /* O_RDWR|O_CLOEXEC */
        int self_pidfd; /* of this process: the child's PDEATHSIG race check */
        int cap_last;
        unsigned seq;    /* leaf names */
        unsigned errors; /* failed steps */
        struct sock_filter filter[FILTER_SIZE];
        struct sock_fprog prog;
} g = {.devnull = -1, .self_pidfd = -1};

static volatile sig_atomic_t stop;

/* The child's stack: vfork-style, so one spawn at a time per process. */
static char child_stack[64 * 1024] __attribute__((aligned(16)));

static double now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Counts a failed step and says why (the first few times). Returns -1. */
static int fail(const char *what, int err)
{
        if (g.errors++ < MAX_REPORTS)
                fprintf(stderr, "floor[%d]: %s%s%s\n", (int)getpid(), what, err ? ": " : "",
                        err ? strerror(err) : "");
        return -1;
}

static int write_at(int dfd, const char *file, const char *value)
{
        int fd = openat(dfd, file, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        ssize_t n = write(fd, value, strlen(value));
        int e = errno;
        close(fd);
        errno = e;
        return n == (ssize_t)strlen(value) ? 0 : -1;
}

/* ----- the child: raw syscalls only (it runs in our memory, on child_stack) ----- */

__attribute__((noreturn)) static void child_fail(Child *c, int step)
{
        c->step = step;
        c->err = errno;
        syscall(SYS_exit_group, step);
        __builtin_unreachable();
}

#define CHILD_TRY(expr, step)                  \
        do {                                   \
                if ((long)(expr) < 0)          \
                        child_fail(c, (step)); \
        } while (0)

static int child_main(void *arg)
{
        Child *c = arg;
        const Server *s = c->srv;

        /* cgroups first, so that everything below is accounted to the server */
        for (int i = 0; i < N_CTRL; i++)
                if (syscall(SYS_write, s->procs[i], "0", 1) != 1)
                        child_fail(c, STEP_CGROUP);

        /* one mount_setattr: every mount private (nothing propagates back) and read-only */
        struct mount_attr ma = {
                .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                .propagation = MS_PRIVATE,
        };
        CHILD_TRY(syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &ma, sizeof(ma)),
                  STEP_NAMESPACE);
        CHILD_TRY(syscall(SYS_chdir, "/"), STEP_NAMESPACE);
        CHILD_TRY(syscall(SYS_sethostname, "floor", 5), STEP_HOSTNAME);

        /* the bounding set needs CAP_SETPCAP, so before the uid change */
        for (int cap = 0; cap <= g.cap_last; cap++)
                if (syscall(SYS_prctl, PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
                        child_fail(c, STEP_CAPABILITIES);
        CHILD_TRY(syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0),
                  STEP_CAPABILITIES);

        /* raw: glibc's set*id would signal our other threads; no keep-caps, so the
         * permitted and effective sets empty themselves, capset empties inheritable */
        CHILD_TRY(syscall(SYS_setgroups, 0, NULL), STEP_CREDENTIALS);
        CHILD_TRY(syscall(SYS_setresgid, NOBODY, NOBODY, NOBODY), STEP_CREDENTIALS);
        CHILD_TRY(syscall(SYS_setresuid, NOBODY, NOBODY, NOBODY), STEP_CREDENTIALS);
        struct __user_cap_header_struct ch = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct cd[_LINUX_CAPABILITY_U32S_3] = {};
        CHILD_TRY(syscall(SYS_capset, &ch, cd), STEP_CAPABILITIES);

        /* after the credential change, which clears it; the pidfd catches a parent that
         * died before (getppid() is 0 in a new pid namespace) */
        CHILD_TRY(syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0), STEP_PARENT_DIED);
        struct pollfd pfd = {.fd = g.self_pidfd, .events = POLLIN};
        struct timespec zero = {0, 0};
        if (syscall(SYS_ppoll, &pfd, 1, &zero, NULL, 0) != 0)
                child_fail(c, STEP_PARENT_DIED);

        /* every source through a temporary >= 4, so no source can be a target; dup3(…, 0)
         * never carries FD_CLOEXEC over */
        int t_null = (int)syscall(SYS_fcntl, g.devnull, F_DUPFD_CLOEXEC, 4);
        int t_sock = (int)syscall(SYS_fcntl, c->sock, F_DUPFD_CLOEXEC, 4);
        if (t_null < 0 || t_sock < 0)
                child_fail(c, STEP_FDS);
        for (int fd = 0; fd < 3; fd++)
                CHILD_TRY(syscall(SYS_dup3, t_null, fd, 0), STEP_FDS);
        CHILD_TRY(syscall(SYS_dup3, t_sock, 3, 0), STEP_FDS);
        CHILD_TRY(syscall(SYS_close_range, 4, ~0U, 0), STEP_FDS);
        for (size_t i = 0; i < sizeof(rlimits) / sizeof(rlimits[0]); i++) {
                struct rlimit rl = {.rlim_cur = rlimits[i].cur, .rlim_max = rlimits[i].max};
                CHILD_TRY(syscall(SYS_prlimit64, 0, rlimits[i].resource, &rl, NULL), STEP_FDS);
        }
        /* our handlers (the only ones we set) must not run here, nor our mask reach the
         * server; kernel sigaction layout: handler, flags, restorer, mask */
        struct {
                void *handler;
                unsigned long flags;
                void *restorer;
                unsigned long mask;
        } dfl = {.handler = SIG_DFL};
        (void)syscall(SYS_rt_sigaction, SIGINT, &dfl, NULL, sizeof(dfl.mask));
        (void)syscall(SYS_rt_sigaction, SIGTERM, &dfl, NULL, sizeof(dfl.mask));
        unsigned long empty = 0;
        CHILD_TRY(syscall(SYS_rt_sigprocmask, SIG_SETMASK, &empty, NULL, sizeof(empty)), STEP_FDS);

        CHILD_TRY(syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), STEP_SECCOMP);
        CHILD_TRY(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &g.prog), STEP_SECCOMP);

        char *argv[] = {"floor-server", NULL}, *envp[] = {NULL};
        syscall(SYS_execve, g.server, argv, envp);
        child_fail(c, STEP_EXEC);
}

/* ----- one server ----- */

static void server_init(Server *s)
{
        *s = (Server){.sock = -1, .pidfd = -1, .pid = -1};
        for (int i = 0; i < N_CTRL; i++)
                s->procs[i] = -1;
}

static void close_procs(Server *s)
{
        for (int i = 0; i < N_CTRL; i++) {
                if (s->procs[i] >= 0)
                        close(s->procs[i]);
                s->procs[i] = -1;
        }
}

/* cg_pod_create: per hierarchy, the leaf, then through one open of it (as pomed's
 * create_leaf) its limits and its cgroup.procs. */
static int make_leaves(Server *s)
{
        char dir[PATH_MAX + 64];

        snprintf(s->name, sizeof(s->name), "%d-%u", (int)getpid(), g.seq++);
        for (int i = 0; i < N_CTRL; i++) {
                snprintf(dir, sizeof(dir), "%s/%s", g.parent[i], s->name);
                if (mkdir(dir, 0755) < 0)
                        return fail("mkdir of a leaf", errno);
                s->made[i] = true;
                int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dfd < 0)
                        return fail("open of a leaf", errno);
                for (size_t l = 0; l < sizeof(limits) / sizeof(limits[0]); l++) {
                        if (limits[l].ctrl != i || (!g.memsw && strstr(limits[l].file, "memsw")))
                                continue;
                        if (write_at(dfd, limits[l].file, limits[l].value) < 0) {
                                close(dfd);
                                return fail(limits[l].file, errno);
                        }
                }
                s->procs[i] = openat(dfd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
                int e = errno;
                close(dfd);
                if (s->procs[i] < 0)
                        return fail("cgroup.procs", e);
        }
        return 0;
}

/* spawn_pod without no_wait: returns once the child has exec'd or failed. */
static int spawn(Server *s)
{
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                return fail("socketpair", errno);
        s->sock = sv[0];
        Child c = {.srv = s, .sock = sv[1]};

        /* all signals blocked across the clone: no handler of ours runs in the child before
         * it resets them */
        sigset_t all, old;
        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, &old);
        /* the child's uid change marks our shared mm non-dumpable: restore */
        int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
        s->pid = clone(child_main, child_stack + sizeof(child_stack),
                       CLONE_VM | CLONE_VFORK | CLONE_PIDFD | CLONE_NEWPID | CLONE_NEWNET |
                               CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNS | SIGCHLD,
                       &c, &s->pidfd);
        int e = errno;
        if (dumpable == 1)
                (void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
        sigprocmask(SIG_SETMASK, &old, NULL);
        close(sv[1]);
        close_procs(s); /* joined (cg_pod_close_join_fds) */
        if (s->pid < 0) {
                s->pidfd = -1;
                return fail("clone", e);
        }
        if (c.step) {
                char what[64];
                s->failed = true;
                snprintf(what, sizeof(what), "child setup: %s",
                         step_names[c.step - STEP_PARENT_DIED]);
                return fail(what, c.err);
        }
        return 0;
}

/* Waits for the READY byte of each of the n servers. */
static int wait_ready(Server *s, int n)
{
        struct pollfd *pfd = calloc((size_t)n, sizeof(*pfd));
        int left = n, r = 0;
        double deadline = now_ms() + TIMEOUT_MS;

        if (!pfd)
                return fail("calloc", ENOMEM);
        while (left > 0 && r == 0) {
                for (int i = 0; i < n; i++)
                        pfd[i] = (struct pollfd){.fd = s[i].ready ? -1 : s[i].sock,
                                                 .events = POLLIN};
                double ms = deadline - now_ms();
                int k = poll(pfd, (nfds_t)n, ms > 0 ? (int)ms + 1 : 0);
                if (k <= 0) {
                        r = fail(k == 0 ? "no READY in time" : "poll", k == 0 ? 0 : errno);
                        break;
                }
                for (int i = 0; i < n && r == 0; i++) {
                        char b;
                        if (!pfd[i].revents)
                                continue;
                        if (read(s[i].sock, &b, 1) != 1 || b != 'R') {
                                s[i].failed = true;
                                r = fail("server ended before READY", 0);
                        }
                        s[i].ready = true;
                        left--;
                }
        }
        free(pfd);
        return r;
}

/* One echo each, untimed: the server works under its filter. */
static int ping(Server *s, int n)
{
        for (int i = 0; i < n; i++) {
                struct pollfd pfd = {.fd = s[i].sock, .events = POLLIN};
                char b = 0;
                if (send(s[i].sock, "p", 1, MSG_NOSIGNAL) != 1 || poll(&pfd, 1, TIMEOUT_MS) != 1 ||
                    read(s[i].sock, &b, 1) != 1 || b != 'p')
                        return fail("no echo", errno);
        }
        return 0;
}

static int rmdir_retry(const char *path)
{
        /* a process that is exiting can still hold its cgroup: cg_pod_destroy polls 1 ms, 1 s */
        for (int i = 0; i < 1000; i++) {
                if (rmdir(path) == 0 || errno == ENOENT)
                        return 0;
                if (errno != EBUSY)
                        break;
                usleep(1000);
        }
        return -1;
}

/* Close the sockets (EOF: the servers exit), reap each, remove the leaves. */
static void teardown(Server *s, int n)
{
        for (int i = 0; i < n; i++) {
                if (s[i].sock >= 0)
                        close(s[i].sock);
                s[i].sock = -1;
        }
        for (int i = 0; i < n; i++) {
                if (s[i].pidfd < 0)
                        continue;
                struct pollfd pfd = {.fd = s[i].pidfd, .events = POLLIN};
                if (poll(&pfd, 1, TIMEOUT_MS) != 1) {
                        s[i].failed = true;
                        fail("server did not exit at EOF: SIGKILL", 0);
                        (void)syscall(SYS_pidfd_send_signal, s[i].pidfd, SIGKILL, NULL, 0);
                }
                siginfo_t si = {};
                if (waitid(P_PIDFD, (id_t)s[i].pidfd, &si, WEXITED) < 0) {
                        fail("waitid", errno);
                } else if (!s[i].failed && (si.si_code != CLD_EXITED || si.si_status != 0)) {
                        char what[64];
                        snprintf(what, sizeof(what), "server %s %d",
                                 si.si_code == CLD_EXITED ? "exited with status"
                                                          : "killed by signal",
                                 si.si_status);
                        fail(what, 0);
                }
                close(s[i].pidfd);
                s[i].pidfd = -1;
        }
        for (int i = 0; i < n; i++) {
                close_procs(&s[i]);
                for (int c = 0; c < N_CTRL; c++) {
                        char dir[PATH_MAX + 64];
                        snprintf(dir, sizeof(dir), "%s/%s", g.parent[c], s[i].name);
                        if (s[i].made[c] && rmdir_retry(dir) < 0)
                                fail(dir, errno);
                        s[i].made[c] = false;
                }
        }
}

/* Starts n servers and tears them down; false when a step failed (no timing then). */
static bool round_trip(int n, double *start_ms, double *teardown_ms)
{
        Server s[MAX_SERVERS];
        unsigned errors = g.errors;
        int started = 0;

        for (int i = 0; i < n; i++)
                server_init(&s[i]);
        double t0 = now_ms();
        for (; started < n; started++)
                if (make_leaves(&s[started]) < 0 || spawn(&s[started]) < 0)
                        break;
        if (started == n)
                (void)wait_ready(s, n);
        double t1 = now_ms();
        if (g.errors == errors)
                (void)ping(s, n);
        double t2 = now_ms();
        teardown(s, started < n ? started + 1 : n);
        double t3 = now_ms();
        if (start_ms)
                *start_ms = t1 - t0;
        if (teardown_ms)
                *teardown_ms = t3 - t2;
        return g.errors == errors;
}

/* ----- setup ----- */

/* The cgroup of a process ("self" or a pid) in the v1 hierarchy of ctrl, from
 * /proc/<who>/cgroup ("N:a,b:/path"); "" for the root. */
static int cgroup_of(const char *who, const char *ctrl, char *buf, size_t len)
{
        char line[PATH_MAX + 64];
        int r = -1;

        snprintf(line, sizeof(line), "/proc/%s/cgroup", who);
        FILE *f = fopen(line, "re");
        if (!f)
                return -1;
        while (r < 0 && fgets(line, sizeof(line), f)) {
                char *list = strchr(line, ':'), *path = list ? strchr(list + 1, ':') : NULL;
                if (!path)
                        continue;
                *path++ = 0;
                path[strcspn(path, "\n")] = 0;
                for (char *save, *tok = strtok_r(list + 1, ",", &save); tok;
                     tok = strtok_r(NULL, ",", &save))
                        if (strcmp(tok, ctrl) == 0) {
                                snprintf(buf, len, "%s", strcmp(path, "/") ? path : "");
                                r = 0;
                        }
        }
        fclose(f);
        return r;
}

static void remove_parents(void)
{
        for (int i = 0; i < N_CTRL; i++) {
                if (!g.parent_made[i])
                        continue;
                DIR *d = opendir(g.parent[i]);
                struct dirent *de;
                while (d && (de = readdir(d)))
                        if (de->d_type == DT_DIR && de->d_name[0] != '.') {
                                char dir[PATH_MAX + 256];
                                snprintf(dir, sizeof(dir), "%s/%s", g.parent[i], de->d_name);
                                (void)rmdir_retry(dir);
                        }
                if (d)
                        closedir(d);
                if (rmdir_retry(g.parent[i]) < 0)
                        fprintf(stderr, "floor: cannot remove %s: %m\n", g.parent[i]);
                g.parent_made[i] = false;
        }
}

static void make_parents(void)
{
        char own[PATH_MAX - 128];
        for (int i = 0; i < N_CTRL; i++) {
                if (cgroup_of("self", ctrl_names[i], own, sizeof(own)) < 0) {
                        fprintf(stderr, "floor: no v1 %s cgroup in /proc/self/cgroup\n",
                                ctrl_names[i]);
                        exit(1);
                }
                snprintf(g.parent[i], sizeof(g.parent[i]), "/sys/fs/cgroup/%s%s/pome-floor-%d",
                         ctrl_names[i], own, (int)getpid());
                if (mkdir(g.parent[i], 0755) < 0) {
                        fprintf(stderr, "floor: mkdir %s: %m\n", g.parent[i]);
                        exit(1);
                }
                g.parent_made[i] = true;
        }
        char memsw[PATH_MAX + 32];
        snprintf(memsw, sizeof(memsw), "%s/memory.memsw.limit_in_bytes", g.parent[CG_MEMORY]);
        g.memsw = access(memsw, F_OK) == 0;
}

/* Arch check (kill foreign and x32 syscalls), then one comparison per denied syscall. */
static void build_filter(void)
{
        struct sock_filter *f = g.filter;
        size_t n = 0;
        f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                              offsetof(struct seccomp_data, arch));
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
        f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
        f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                              offsetof(struct seccomp_data, nr));
        /* jumps count the instructions skipped: to the last one, the kill */
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000,
                                              (unsigned char)(N_DENIED + 1), 0);
        for (size_t i = 0; i < N_DENIED; i++)
                f[n++] =
                        (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)denied[i],
                                                     (unsigned char)(N_DENIED - i), 0);
        f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
        g.prog = (struct sock_fprog){.len = (unsigned short)n, .filter = g.filter};
}

/* Per process (main, each churn client): the fds the child needs. */
static void open_process_fds(void)
{
        if (g.devnull >= 0)
                close(g.devnull);
        if (g.self_pidfd >= 0)
                close(g.self_pidfd);
        g.devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
        g.self_pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
        if (g.devnull < 0 || g.self_pidfd < 0) {
                fprintf(stderr, "floor: /dev/null or pidfd_open: %m\n");
                _exit(1);
        }
}

static void on_signal(int sig)
{
        (void)sig;
        stop = 1;
}

/* ----- modes ----- */

static void print_ms(const char *key, const double *v, int n)
{
        printf("\"%s\":[", key);
        for (int i = 0; i < n; i++)
                printf("%s%.3f", i ? "," : "", v[i]);
        printf("]");
}

static void latency(int servers, int iterations, int idle_ms)
{
        double *start = calloc((size_t)iterations, sizeof(double));
        double *down = calloc((size_t)iterations, sizeof(double));
        int n = 0;

        if (!start || !down)
                exit(1);
        for (int i = 0; i < iterations && !stop; i++) {
                if (idle_ms > 0)
                        usleep((useconds_t)idle_ms * 1000);
                if (round_trip(servers, &start[n], &down[n]))
                        n++;
        }
        printf("{\"servers\":%d,\"iterations\":%d,\"idle_ms\":%d,", servers, iterations, idle_ms);
        print_ms("start_ms", start, n);
        printf(",");
        print_ms("teardown_ms", down, n);
        printf(",\"errors\":%u}\n", g.errors);
        free(start);
        free(down);
}

static void churn(int servers, int clients, int seconds)
{
        struct report {
                unsigned long rounds, errors;
        } rep;
        int pfd[2];
        unsigned long rounds = 0;

        if (pipe2(pfd, O_CLOEXEC) < 0)
                exit(1);
        fflush(NULL);
        double t0 = now_ms(), deadline = t0 + seconds * 1e3;
        for (int c = 0; c < clients; c++) {
                pid_t pid = fork();
                if (pid < 0) {
                        fail("fork", errno);
                        continue;
                }
                if (pid == 0) {
                        open_process_fds();
                        g.errors = 0;
                        rep = (struct report){0, 0};
                        while (!stop && now_ms() < deadline)
                                rep.rounds += round_trip(servers, NULL, NULL);
                        rep.errors = g.errors;
                        _exit(write(pfd[1], &rep, sizeof(rep)) == sizeof(rep) ? 0 : 1);
                }
        }
        close(pfd[1]);
        while (wait(NULL) > 0 || errno == EINTR)
                ;
        double elapsed = (now_ms() - t0) / 1e3;
        while (read(pfd[0], &rep, sizeof(rep)) == sizeof(rep)) {
                rounds += rep.rounds;
                g.errors += (unsigned)rep.errors;
        }
        close(pfd[0]);
        printf("{\"servers\":%d,\"clients\":%d,\"seconds\":%d,\"per_s\":%.1f,\"errors\":%u}\n",
               servers, clients, seconds, rounds / elapsed, g.errors);
}

/* A "Key: value" line of a /proc file, value without leading blanks; false if absent. */
static bool proc_field(pid_t pid, const char *file, const char *key, char *val, size_t len)
{
        char path[64], line[512];
        size_t kl = strlen(key);
        bool found = false;
        snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
        FILE *f = fopen(path, "re");
        while (f && !found && fgets(line, sizeof(line), f))
                if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
                        char *v = line + kl + 1;
                        v += strspn(v, " \t");
                        v[strcspn(v, "\n")] = 0;
                        snprintf(val, len, "%s", v);
                        found = true;
                }
        if (f)
                fclose(f);
        return found;
}

static bool bad(const char *what)
{
        fail(what, 0);
        return false;
}

/* What pomed promises of a pod, read back from /proc. */
static bool isolated(const Server *s)
{
        static const struct {
                const char *key, *want;
        } status[] = {
                {"Uid", "65534\t65534\t65534\t65534"},
                {"Gid", "65534\t65534\t65534\t65534"},
                {"Groups", ""},
                {"NoNewPrivs", "1"},
                {"Seccomp", "2"},
                {"CapEff", "0000000000000000"},
                {"CapPrm", "0000000000000000"},
                {"CapBnd", "0000000000000000"},
        };
        static const char *const ns[] = {"pid", "net", "ipc", "uts", "mnt"};
        char v[512], path[PATH_MAX], a[64], b[64];
        bool ok = true;

        for (size_t i = 0; i < sizeof(status) / sizeof(status[0]); i++)
                if (!proc_field(s->pid, "status", status[i].key, v, sizeof(v)) ||
                    strcmp(v, status[i].want) != 0) {
                        snprintf(path, sizeof(path), "isolation: %s is \"%s\"", status[i].key, v);
                        ok = bad(path);
                }
        for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
                ssize_t k, l;
                snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)s->pid, ns[i]);
                k = readlink(path, a, sizeof(a) - 1);
                snprintf(path, sizeof(path), "/proc/self/ns/%s", ns[i]);
                l = readlink(path, b, sizeof(b) - 1);
                if (k < 0 || l < 0 || (k == l && memcmp(a, b, (size_t)k) == 0)) {
                        snprintf(path, sizeof(path), "isolation: %s namespace shared", ns[i]);
                        ok = bad(path);
                }
        }
        /* in its leaf of each hierarchy */
        char pid[16];
        snprintf(pid, sizeof(pid), "%d", (int)s->pid);
        for (int c = 0; c < N_CTRL; c++) {
                char want[PATH_MAX + 64];
                snprintf(want, sizeof(want), "%s/%s",
                         g.parent[c] + strlen("/sys/fs/cgroup/") + strlen(ctrl_names[c]), s->name);
                if (cgroup_of(pid, ctrl_names[c], path, sizeof(path)) < 0 || strcmp(path, want)) {
                        snprintf(want, sizeof(want), "isolation: %s cgroup is %s", ctrl_names[c],
                                 path);
                        ok = bad(want);
                }
        }
        /* every mount read-only (the mount options, field 6 of mountinfo) */
        snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)s->pid);
        FILE *f = fopen(path, "re");
        int rw = 0, mounts = 0;
        while (f && fgets(v, sizeof(v), f)) {
                char opts[256];
                if (sscanf(v, "%*s %*s %*s %*s %*s %255s", opts) == 1) {
                        mounts++;
                        rw += strncmp(opts, "ro", 2) != 0 || (opts[2] && opts[2] != ',');
                }
        }
        if (f)
                fclose(f);
        if (mounts == 0 || rw > 0)
                ok = bad("isolation: a mount is not read-only");
        return ok;
}

/* MemAvailable from /proc/meminfo, KiB; -1 when unreadable. */
static long mem_available_kib(void)
{
        FILE *f = fopen("/proc/meminfo", "re");
        char line[256];
        long v = -1;
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "MemAvailable: %ld kB", &v) == 1)
                        break;
        if (f)
                fclose(f);
        return v;
}

static void hold(int servers, int sets)
{
        int n = servers * sets, started = 0;
        Server *s = calloc((size_t)n, sizeof(*s));
        long pss = 0;
        bool iso = false;

        /* two fds per live server, three more while one starts */
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                (void)setrlimit(RLIMIT_NOFILE, &rl);
        }
        if (!s)
                exit(1);
        for (int i = 0; i < n; i++)
                server_init(&s[i]);
        long avail0 = mem_available_kib(), avail1 = -1;
        for (; started < n && !stop; started++)
                if (make_leaves(&s[started]) < 0 || spawn(&s[started]) < 0)
                        break;
        bool held = started == n && wait_ready(s, n) == 0 && ping(s, n) == 0;
        if (held) {
                for (int i = 0; i < n; i++) {
                        char v[64];
                        if (!proc_field(s[i].pid, "smaps_rollup", "Pss", v, sizeof(v)))
                                fail("no Pss in smaps_rollup", 0);
                        pss += atol(v);
                }
                iso = isolated(&s[0]);
                sleep(1);
                avail1 = mem_available_kib();
        }
        teardown(s, started < n ? started + 1 : n);
        if (held && (avail0 < 0 || avail1 < 0))
                bad("no MemAvailable in /proc/meminfo");
        printf("{\"servers\":%d,\"held\":%d,\"pss_kib_per_server\":%.1f,"
               "\"host_kib_per_set\":%.1f,\"isolated\":%s,\"errors\":%u}\n",
               servers, sets, (double)pss / n,
               avail0 >= 0 && avail1 >= 0 ? (double)(avail0 - avail1) / sets : 0.0,
               iso ? "true" : "false", g.errors);
        free(s);
}

static int number(const char *opt, const char *arg, int min, int max)
{
        char *end;
        errno = 0;
        long v = strtol(arg, &end, 10);
        if (errno || end == arg || *end || v < min || v > max) {
                fprintf(stderr, "floor: %s wants a number in %d..%d\n", opt, min, max);
                exit(2);
        }
        return (int)v;
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                {"servers", required_argument, NULL, 'n'},
                {"iterations", required_argument, NULL, 'k'},
                {"idle-ms", required_argument, NULL, 'i'},
                {"server", required_argument, NULL, 's'},
                {"clients", required_argument, NULL, 'c'},
                {"seconds", required_argument, NULL, 't'},
                {"hold", required_argument, NULL, 'h'},
                {},
        };
        int servers = 1, iterations = 40, idle_ms = 0, clients = 0, seconds = 5, sets = 0, o;
        const char *server = NULL;
        char self[PATH_MAX];

        while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                switch (o) {
                case 'n':
                        servers = number("--servers", optarg, 1, MAX_SERVERS);
                        break;
                case 'k':
                        iterations = number("--iterations", optarg, 1, 1000000);
                        break;
                case 'i':
                        idle_ms = number("--idle-ms", optarg, 0, 600000);
                        break;
                case 's':
                        server = optarg;
                        break;
                case 'c':
                        clients = number("--clients", optarg, 1, 256);
                        break;
                case 't':
                        seconds = number("--seconds", optarg, 1, 3600);
                        break;
                case 'h':
                        sets = number("--hold", optarg, 1, 10000);
                        break;
                default:
                        fprintf(stderr, "usage: floor [--servers N(1..3)] [--iterations K] "
                                        "[--idle-ms M] [--server PATH] [--clients C --seconds S] "
                                        "[--hold H]\n");
                        return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "floor: unexpected argument %s\n", argv[optind]);
                return 2;
        }

        /* absolute: the child execs it after chdir("/") */
        if (!server) {
                ssize_t l = readlink("/proc/self/exe", self, sizeof(self) - 16);
                if (l < 0) {
                        perror("floor: /proc/self/exe");
                        return 1;
                }
                self[l] = 0;
                snprintf(strrchr(self, '/') + 1, 16, "floor-server");
                server = self;
        }
        if (!realpath(server, g.server) || access(g.server, X_OK) < 0) {
                fprintf(stderr, "floor: server %s: %m\n", server);
                return 1;
        }

        FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
        if (!f || fscanf(f, "%d", &g.cap_last) != 1 || g.cap_last < 0 || g.cap_last > 63)
                g.cap_last = 63; /* PR_CAPBSET_DROP past the last one: EINVAL, ignored */
        if (f)
                fclose(f);
        build_filter();
        open_process_fds();

        struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: poll returns */
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        make_parents();
        atexit(remove_parents);

        if (sets)
                hold(servers, sets);
        else if (clients)
                churn(servers, clients, seconds);
        else
                latency(servers, iterations, idle_ms);
        return 0;
}
