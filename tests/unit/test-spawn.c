/* SPDX-License-Identifier: MIT */
/*
 * The spawner for real: real cgroups (supervisor/cgroup.c), the real seccomp policies
 * (policies/pod-stage{1,2}.policy), the real pome-pod when it is built, and
 * tests/helpers/pome-test-pod for what a twin cannot be made to do (forbidden
 * syscalls, allocation past the limit). Everything is asserted from outside the pod,
 * through /proc, the cgroup files, the notify socket and the frame socket.
 *
 * Needs root and a writable cgroup tree: exit 77 otherwise. Prints measured numbers
 * (spawn-to-READY latency, time pomed is blocked in spawn_pod, pod RSS) as "info:".
 */
#include <dirent.h>
#include <elf.h>
#include <inttypes.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

#include "common/frame.h"
#include "common/fileio.h"
#include "common/json-util.h"
#include "common/util.h"
#include "pods/twin/podwire.h"
#include "supervisor/cgroup.h"
#include "supervisor/seccomp-policy.h"
#include "supervisor/spawn.h"
#include "tests/unit/cg-test-util.h"
#include "tests/unit/check.h"

static CgSetup *cg;
static ScpProgram *stage1, *stage2;
static char tmpdir[] = "/tmp/pome-test-spawn-XXXXXX";
static char helper[4096], pod_bin[4096], seed_path[4096];
static unsigned run_counter;

typedef struct Run {
        CgPod *pod;
        pid_t pid;
        int pidfd;
        int sock;   /* our end of the pod's frame socket */
        int notify; /* bound at notify_path, SO_PASSCRED */
        int err_rd; /* read end of the pod's stderr */
        char notify_path[256];
        uint64_t t_start, t_spawned; /* µs, CLOCK_MONOTONIC */
        SpawnFailure failure;
        SpawnChild *setup; /* the child's setup, released once it has exited */
} Run;

static char last_how[96]; /* the `how` of the last run_wait */

/* ----- classification: a table, no root needed ----- */

static const struct {
        PodDeath d;
        PodExit e;
        const char *how;
        const char *detail_has;
} classify_cases[] = {
        {{.code = CLD_EXITED, .status = 0}, POD_EXIT_NORMAL, "exited", "status 0"},
        {{.code = CLD_EXITED, .status = 65}, POD_EXIT_FAILURE, "exit_code:65", "status 65"},
        /* 127 without a report on the pipe is the program's own status */
        {{.code = CLD_EXITED, .status = 127}, POD_EXIT_FAILURE, "exit_code:127", "status 127"},
        {{.code = CLD_EXITED, .status = 127, .spawn = {SPAWN_ERR_EXEC, EAGAIN}, .uid = 65534},
         POD_EXIT_EXEC_FAILED,
         "exec_failed:EAGAIN",
         "RLIMIT_NPROC"},
        {{.code = CLD_EXITED, .status = 127, .spawn = {SPAWN_ERR_EXEC, EAGAIN}, .uid = 65534},
         POD_EXIT_EXEC_FAILED,
         "exec_failed:EAGAIN",
         "uid 65534"},
        {{.code = CLD_EXITED, .status = 127, .spawn = {SPAWN_ERR_EXEC, EACCES}, .uid = 65534},
         POD_EXIT_EXEC_FAILED,
         "exec_failed:EACCES",
         "every directory above it"},
        {{.code = CLD_EXITED, .status = 120, .spawn = {SPAWN_ERR_CGROUP, EACCES}},
         POD_EXIT_SETUP_FAILED,
         "setup_failed:cgroup_join:EACCES",
         "cgroup join"},
        {{.code = CLD_EXITED, .status = 121, .spawn = {SPAWN_ERR_NAMESPACE, EPERM}},
         POD_EXIT_SETUP_FAILED,
         "setup_failed:namespaces:EPERM",
         "Operation not permitted"},
        {{.code = CLD_EXITED, .status = 119, .spawn = {SPAWN_ERR_PARENT_DIED, 0}},
         POD_EXIT_SETUP_FAILED,
         "setup_failed:parent_died",
         "parent died"},
        {{.code = CLD_EXITED, .status = 126, .spawn = {SPAWN_ERR_SECCOMP, EINVAL}},
         POD_EXIT_SETUP_FAILED,
         "setup_failed:seccomp:EINVAL",
         "seccomp"},
        /* pomed's own SIGKILL: teardown, or the reason it gave */
        {{.code = CLD_KILLED, .status = SIGKILL, .kill_why = "killed"},
         POD_EXIT_KILLED,
         "killed",
         "teardown"},
        {{.code = CLD_KILLED,
          .status = SIGKILL,
          .kill_why = "protocol_error",
          .kill_detail = "the pod sent a frame pomed cannot decode"},
         POD_EXIT_KILLED,
         "protocol_error",
         "cannot decode"},
        {{.code = CLD_KILLED, .status = SIGKILL, .kill_why = "pod_hung"},
         POD_EXIT_KILLED,
         "pod_hung",
         "pomed"},
        /* a SIGKILL pomed did not send */
        {{.code = CLD_KILLED, .status = SIGKILL},
         POD_EXIT_SIGNAL,
         "signal:SIGKILL",
         "outside pomed"},
        {{.code = CLD_KILLED, .status = SIGTERM},
         POD_EXIT_SIGNAL,
         "signal:SIGTERM",
         "outside pomed"},
        {{.code = CLD_DUMPED, .status = SIGSEGV}, POD_EXIT_SIGNAL, "signal:SIGSEGV", "crashed"},
        /* pomed was killing it, but the pod died of something else first */
        {{.code = CLD_KILLED, .status = SIGTERM, .kill_why = "killed"},
         POD_EXIT_SIGNAL,
         "signal:SIGTERM",
         "SIGTERM"},
        /* OOM: whose limit */
        {{.code = CLD_KILLED, .status = SIGKILL, .oom = POD_OOM_OWN},
         POD_EXIT_OOM_KILLED,
         "oom_killed",
         "its own memory limit"},
        {{.code = CLD_KILLED, .status = SIGKILL, .oom = POD_OOM_HOST, .oom_cgroup = "/pome"},
         POD_EXIT_HOST_OOM_KILLED,
         "host_oom_killed",
         "cgroup /pome"},
        {{.code = CLD_KILLED, .status = SIGKILL, .oom = POD_OOM_HOST},
         POD_EXIT_HOST_OOM_KILLED,
         "host_oom_killed",
         "the host's"},
        /* the OOM record wins over a teardown SIGKILL sent at the same time */
        {{.code = CLD_KILLED, .status = SIGKILL, .oom = POD_OOM_OWN, .kill_why = "killed"},
         POD_EXIT_OOM_KILLED,
         "oom_killed",
         "own"},
        /* seccomp */
        {{.code = CLD_KILLED, .status = SIGSYS, .syscall = "ptrace", .syscall_nr = 101},
         POD_EXIT_SECCOMP_VIOLATION,
         "seccomp_violation:ptrace",
         "ptrace (syscall 101)"},
        {{.code = CLD_DUMPED, .status = SIGSYS, .syscall_nr = -1},
         POD_EXIT_SECCOMP_VIOLATION,
         "seccomp_violation",
         "forbidden syscall"},
        {{.code = CLD_KILLED, .status = SIGSYS, .kill_why = "killed", .syscall = "mount"},
         POD_EXIT_SECCOMP_VIOLATION,
         "seccomp_violation:mount",
         "mount"},
        {{.code = CLD_STOPPED, .status = SIGSTOP}, POD_EXIT_SIGNAL, "signal:SIGSTOP", "stopped"},
};

static void test_classify_table(void)
{
        for (size_t i = 0; i < ELEMENTSOF(classify_cases); i++) {
                char how[96], detail[512];
                PodExit e = spawn_classify(&classify_cases[i].d, how, sizeof(how), detail,
                                           sizeof(detail));
                if (e != classify_cases[i].e || !streq(how, classify_cases[i].how) ||
                    !strstr(detail, classify_cases[i].detail_has)) {
                        fprintf(stderr,
                                "classify case %zu: got %s (%d) \"%s\", want %s (%d) ~ %s\n", i,
                                how, (int)e, detail, classify_cases[i].how,
                                (int)classify_cases[i].e, classify_cases[i].detail_has);
                        check_failures++;
                }
                CHECK(streq(pod_exit_to_string(e), "unknown") == false);
        }
        /* a short buffer truncates, never overflows */
        char how[8], detail[8];
        spawn_classify(&classify_cases[3].d, how, sizeof(how), detail, sizeof(detail));
        CHECK(strlen(how) == 7 && strlen(detail) == 7);
}

/* ----- OOM attribution on a fake tree (the kernel's files, our values) ----- */

static void put(const char *dir, const char *name, const char *text)
{
        char p[4096];
        snprintf(p, sizeof(p), "%s/%s", dir, name);
        FILE *f = fopen(p, "we");
        CHECK(f != NULL);
        if (f) {
                fputs(text, f);
                fclose(f);
        }
}

static void test_oom_attribution(void)
{
        char root[] = "/tmp/pome-test-oom-XXXXXX";
        CHECK(mkdtemp(root) != NULL);
        char mid[4096], leaf[4096];
        snprintf(mid, sizeof(mid), "%s/pome", root);
        snprintf(leaf, sizeof(leaf), "%s/pome/ses_1", root);
        CHECK(mkdir(mid, 0755) == 0 && mkdir(leaf, 0755) == 0);
        char *culprit = NULL;

        /* v1: no kill */
        put(leaf, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
        put(leaf, "memory.failcnt", "0\n");
        put(leaf, "memory.max_usage_in_bytes", "1000\n");
        put(leaf, "memory.limit_in_bytes", "67108864\n");
        put(mid, "memory.failcnt", "0\n");
        put(mid, "memory.max_usage_in_bytes", "1000\n");
        put(mid, "memory.limit_in_bytes", "9223372036854771712\n");
        CHECK(cg_oom_attribute(CG_LAYOUT_V1, root, leaf, &culprit) == CG_OOM_NONE);
        /* v1: killed, own limit reached (failcnt) */
        put(leaf, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
        put(leaf, "memory.failcnt", "12\n");
        CHECK(cg_oom_attribute(CG_LAYOUT_V1, root, leaf, &culprit) == CG_OOM_OWN);
        /* v1: killed, own peak at the limit */
        put(leaf, "memory.failcnt", "0\n");
        put(leaf, "memory.max_usage_in_bytes", "67108864\n");
        CHECK(cg_oom_attribute(CG_LAYOUT_V1, root, leaf, &culprit) == CG_OOM_OWN);
        /* v1: killed for the parent's limit: named */
        put(leaf, "memory.max_usage_in_bytes", "1000\n");
        put(mid, "memory.failcnt", "3\n");
        CHECK(cg_oom_attribute(CG_LAYOUT_V1, root, leaf, &culprit) == CG_OOM_HOST);
        CHECK(culprit && streq(culprit, "/pome"));
        free(culprit);
        culprit = NULL;
        /* v1: nobody's limit: a host-wide shortage */
        put(mid, "memory.failcnt", "0\n");
        CHECK(cg_oom_attribute(CG_LAYOUT_V1, root, leaf, &culprit) == CG_OOM_HOST);
        CHECK(culprit == NULL);

        /* v2: memory.events.local of the leaf tells its own limit */
        put(leaf, "memory.events.local", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n");
        CHECK(cg_oom_attribute(CG_LAYOUT_V2, root, leaf, &culprit) == CG_OOM_NONE);
        put(leaf, "memory.events.local", "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n");
        CHECK(cg_oom_attribute(CG_LAYOUT_V2, root, leaf, &culprit) == CG_OOM_OWN);
        put(leaf, "memory.events.local", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 1\n");
        put(mid, "memory.events.local", "low 0\nhigh 0\nmax 2\noom 1\noom_kill 0\n");
        CHECK(cg_oom_attribute(CG_LAYOUT_V2, root, leaf, &culprit) == CG_OOM_HOST);
        CHECK(culprit && streq(culprit, "/pome"));
        free(culprit);
        culprit = NULL;
        /* unreadable: an error, not a guess */
        CHECK(cg_oom_attribute(CG_LAYOUT_V1, root, mid, &culprit) == -ENOENT);

        char cmd[4200];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
        CHECK(system(cmd) == 0);
}

static uint64_t now_usec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

static char *read_text(const char *path)
{
        char *buf = NULL;
        return read_file_at(AT_FDCWD, path, 1u << 20, &buf, NULL) < 0 ? NULL : buf;
}

/* The value of "Key:" in /proc/<pid>/status, whitespace-squeezed into out. */
static bool status_field(pid_t pid, const char *key, char *out, size_t len)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
        _cleanup_free_ char *text = read_text(path);
        if (!text)
                return false;
        size_t kl = strlen(key);
        for (char *line = text; line && *line;) {
                char *eol = strchrnul(line, '\n');
                if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
                        const char *v = line + kl + 1;
                        size_t o = 0;
                        bool space = false;
                        for (; v < eol && o + 1 < len; v++) {
                                if (*v == ' ' || *v == '\t') {
                                        space = o > 0;
                                        continue;
                                }
                                if (space)
                                        out[o++] = ' ';
                                space = false;
                                if (o + 1 < len)
                                        out[o++] = *v;
                        }
                        out[o] = 0;
                        return true;
                }
                line = *eol ? eol + 1 : eol;
        }
        return false;
}

static bool status_is(pid_t pid, const char *key, const char *want)
{
        char v[256];
        if (!status_field(pid, key, v, sizeof(v))) {
                fprintf(stderr, "no %s in /proc/%d/status\n", key, (int)pid);
                return false;
        }
        if (!streq(v, want))
                fprintf(stderr, "/proc/%d/status %s: \"%s\", want \"%s\"\n", (int)pid, key, v,
                        want);
        return streq(v, want);
}

static bool same_ns(pid_t pid, const char *ns)
{
        char a[64], b[64], la[128] = "", lb[128] = "";
        snprintf(a, sizeof(a), "/proc/%d/ns/%s", (int)pid, ns);
        snprintf(b, sizeof(b), "/proc/self/ns/%s", ns);
        if (readlink(a, la, sizeof(la) - 1) < 0 || readlink(b, lb, sizeof(lb) - 1) < 0)
                return true; /* unknown counts as a failure of the caller's CHECK(!same) */
        return streq(la, lb);
}

/* ----- running a pod ----- */

static int make_notify(Run *r)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(r->notify_path, sizeof(r->notify_path), "%s/notify-%u", tmpdir, run_counter);
        strcpy(sa.sun_path, r->notify_path);
        r->notify = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        int one = 1;
        if (r->notify < 0 ||
            setsockopt(r->notify, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0 ||
            bind(r->notify, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return negative_errno();
        /* the pod runs as nobody: it must be able to connect */
        if (chmod(r->notify_path, 0777) < 0)
                return negative_errno();
        return 0;
}

/*
 * Creates the pod cgroup and spawns exe with argv. pod_fd_at_3 forces the parent's end
 * of the socket to be fd 3 (the dup2 pitfall). cgroup_fd_override replaces the join fds.
 */
static int run_start(Run *r, const char *twin, const PodLimits *lim, const char *exe,
                     char *const *argv, bool pod_fd_at_3, int cgroup_fd_override)
{
        *r = (Run){.pidfd = -1, .sock = -1, .notify = -1, .err_rd = -1};
        char name[48];
        snprintf(name, sizeof(name), "pod-%s-t%u", twin, ++run_counter);
        int k = cg_pod_create(cg, name, lim, &r->pod);
        if (k < 0)
                return k;
        if ((k = make_notify(r)) < 0)
                return k;

        int sv[2], ep[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(ep, O_CLOEXEC) < 0)
                return negative_errno();
        r->sock = sv[0];
        r->err_rd = ep[0];
        int child_end = sv[1];
        if (pod_fd_at_3) {
                /* the caller saved whatever was at 3; the socket goes there, O_CLOEXEC */
                if (dup3(sv[1], 3, O_CLOEXEC) < 0)
                        return negative_errno();
                close(sv[1]);
                child_end = 3;
        }

        char env_notify[300];
        snprintf(env_notify, sizeof(env_notify), "NOTIFY_SOCKET=%s", r->notify_path);
        char *envp[] = {env_notify, "LANG=C", NULL};
        const int *fds;
        size_t n_fds;
        cg_pod_join_fds(r->pod, &fds, &n_fds);
        int override[1] = {cgroup_fd_override};
        /* started from an O_PATH fd, as pomed starts pome-pod (the path need not be reachable
         * by the pod's uid: a build in a 0700 home) */
        _cleanup_close_ int exe_fd = open(exe, O_PATH | O_CLOEXEC);
        PodSpec spec = {
                .exec_path = exe,
                .exec_fd = exe_fd > 2 ? exe_fd : 0,
                .argv = argv,
                .envp = envp,
                .uid = SPAWN_NOBODY_UID,
                .gid = SPAWN_NOBODY_GID,
                .cgroup_fds = cgroup_fd_override >= 0 ? override : fds,
                .n_cgroup_fds = cgroup_fd_override >= 0 ? 1 : n_fds,
                .stage1 = scp_program(stage1),
                .pod_fd = child_end,
                .stderr_fd = ep[1],
                .hostname = twin,
        };
        r->t_start = now_usec();
        k = spawn_pod(&spec, &r->pid, &r->pidfd, &r->setup);
        r->t_spawned = now_usec();
        /* spawn_pod copied the spec: a child still setting up in our memory must
         * not read this frame, which is gone once we return (READY=1 needs NOTIFY_SOCKET) */
        memset(env_notify, 'x', sizeof(env_notify) - 1);
        envp[0] = envp[1] = NULL;
        close(child_end);
        close(ep[1]);
        return k;
}

/* Waits for one notify datagram; checks the sender's pid. Returns 0 and the text in msg. */
static int wait_notify(Run *r, char *msg, size_t len, int timeout_ms)
{
        struct pollfd p = {.fd = r->notify, .events = POLLIN};
        if (poll(&p, 1, timeout_ms) != 1)
                return -ETIMEDOUT;
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(struct ucred))];
        } control = {};
        struct iovec iov = {.iov_base = msg, .iov_len = len - 1};
        struct msghdr mh = {.msg_iov = &iov,
                            .msg_iovlen = 1,
                            .msg_control = &control,
                            .msg_controllen = sizeof(control)};
        ssize_t n = recvmsg(r->notify, &mh, MSG_CMSG_CLOEXEC);
        if (n < 0)
                return negative_errno();
        msg[n] = 0;
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        if (!c || c->cmsg_type != SCM_CREDENTIALS)
                return -EBADMSG;
        struct ucred uc;
        memcpy(&uc, CMSG_DATA(c), sizeof(uc));
        /* the pod is pid 1 in its namespace; the kernel translates it into ours */
        CHECK(uc.pid == r->pid);
        CHECK(uc.uid == SPAWN_NOBODY_UID);
        return 0;
}

static int send_frame(Run *r, uint64_t id, json_t *head, const void *body, size_t len)
{
        char *buf;
        size_t n;
        int k = frame_encode(id, head, body, len, &buf, &n);
        if (k < 0)
                return k;
        k = write_all(r->sock, buf, n);
        free(buf);
        return k;
}

/* A call as pomed's gateway sends it (the pod wire's binary call head). */
static int send_call(Run *r, uint64_t id, const TwinRequest *rq)
{
        char *buf;
        size_t n;
        int k = podwire_encode_request(id, rq, &buf, &n);
        if (k < 0)
                return k;
        k = write_all(r->sock, buf, n);
        free(buf);
        return k;
}

/* A reply's status (and error): pome-pod's binary reply head, or the test pod's JSON one. */
static int reply_status(Frame *f, const char **ret_error)
{
        const char *error = NULL;
        int status = -1;
        TwinReplyBytes rb;
        if (!f->bin) {
                status = (int)json_integer_value(json_object_get(f->head, "status"));
                error = json_get_str(f->head, "error");
        } else if (podwire_decode_reply(f, &rb) == 0) {
                status = rb.status;
                error = rb.error;
        }
        if (ret_error)
                *ret_error = error;
        return status;
}

static int send_load(Run *r, const char *twin, const char *seed, size_t seed_len, bool with_stage2)
{
        size_t bl = 0;
        const void *bpf = with_stage2 ? scp_data(stage2, &bl) : NULL;
        _cleanup_free_ char *body = malloc(seed_len + bl + 1);
        if (!body)
                return -ENOMEM;
        memcpy(body, seed, seed_len);
        if (bl)
                memcpy(body + seed_len, bpf, bl);
        _cleanup_json_ json_t *head = json_pack("{s:s, s:s, s:I}", "op", "load", "twin", twin,
                                                "seed_len", (json_int_t)seed_len);
        return send_frame(r, 1, head, body, seed_len + bl);
}

static int read_reply(Run *r, Frame *f, int timeout_ms)
{
        FrameReader rd = {};
        int k;
        while ((k = frame_reader_next(&rd, f)) == 0) {
                struct pollfd p = {.fd = r->sock, .events = POLLIN};
                if (poll(&p, 1, timeout_ms) != 1) {
                        k = -ETIMEDOUT;
                        break;
                }
                k = frame_reader_fill(&rd, r->sock);
                if (k <= 0) {
                        k = k == 0 ? -EPIPE : k;
                        break;
                }
        }
        frame_reader_done(&rd);
        return k;
}

/* Waits for the pod to end (at most timeout_ms) and classifies it. */
static PodExit run_wait(Run *r, char *detail, size_t len, int timeout_ms)
{
        struct pollfd p = {.fd = r->pidfd, .events = POLLIN};
        if (poll(&p, 1, timeout_ms) != 1) {
                snprintf(detail, len, "did not exit in time");
                return _POD_EXIT_MAX;
        }
        siginfo_t si = {};
        if (waitid(P_PIDFD, (id_t)r->pidfd, &si, WEXITED) < 0) {
                snprintf(detail, len, "waitid: %m");
                return _POD_EXIT_MAX;
        }
        r->pid = 0;
        if (r->setup) /* the step report is read once the child is gone */
                r->setup = spawn_child_release(r->setup, &r->failure);
        _cleanup_free_ char *culprit = NULL;
        int oom = cg_pod_oom(r->pod, &culprit);
        PodDeath d = {
                .code = si.si_code,
                .status = si.si_status,
                .oom = oom == CG_OOM_OWN    ? POD_OOM_OWN
                       : oom == CG_OOM_HOST ? POD_OOM_HOST
                                            : POD_OOM_NONE,
                .oom_cgroup = culprit,
                .spawn = r->failure,
                .syscall_nr = -1,
                .uid = SPAWN_NOBODY_UID,
        };
        return spawn_classify(&d, last_how, sizeof(last_how), detail, len);
}

static void run_stderr(Run *r, char *buf, size_t len)
{
        ssize_t n = 0;
        struct pollfd p = {.fd = r->err_rd, .events = POLLIN};
        if (poll(&p, 1, 0) == 1)
                n = read(r->err_rd, buf, len - 1);
        buf[n > 0 ? n : 0] = 0;
}

/* Kills what is left, destroys the cgroup and checks that no directory remains. */
static void run_end(Run *r)
{
        char paths[3][512] = {};
        const char *ctrls[] = {"memory", "pids", "cpu"};
        if (r->pod)
                for (size_t i = 0; i < 3; i++) {
                        const char *p = cg_pod_path(r->pod, ctrls[i]);
                        snprintf(paths[i], sizeof(paths[i]), "%s", p ? p : "");
                }
        CHECK_OK(cg_pod_destroy(r->pod));
        for (size_t i = 0; i < 3; i++)
                if (paths[i][0]) {
                        CHECK(access(paths[i], F_OK) < 0 && errno == ENOENT);
                }
        if (r->pid > 0) {
                siginfo_t si;
                (void)waitid(P_PIDFD, (id_t)r->pidfd, &si, WEXITED);
        }
        safe_close(r->pidfd);
        safe_close(r->sock);
        safe_close(r->notify);
        safe_close(r->err_rd);
        r->setup = spawn_child_release(r->setup, NULL); /* reaped above */
        if (r->notify_path[0])
                unlink(r->notify_path);
        *r = (Run){.pidfd = -1, .sock = -1, .notify = -1, .err_rd = -1};
}

/* ----- scenarios ----- */

static char *load_seed(size_t *len)
{
        char *s = read_text(seed_path);
        if (!s) {
                fprintf(stderr, "info: %s absent, seeding with {}\n", seed_path);
                s = strdup("{}");
        }
        *len = strlen(s);
        return s;
}

static void check_isolation(Run *r)
{
        pid_t pid = r->pid;
        CHECK(status_is(pid, "Seccomp", "2"));
        CHECK(status_is(pid, "Seccomp_filters", "2")); /* stage 1 + stage 2 */
        CHECK(status_is(pid, "NoNewPrivs", "1"));
        CHECK(status_is(pid, "CapInh", "0000000000000000"));
        CHECK(status_is(pid, "CapPrm", "0000000000000000"));
        CHECK(status_is(pid, "CapEff", "0000000000000000"));
        CHECK(status_is(pid, "CapBnd", "0000000000000000"));
        CHECK(status_is(pid, "CapAmb", "0000000000000000"));
        CHECK(status_is(pid, "Uid", "65534 65534 65534 65534"));
        CHECK(status_is(pid, "Gid", "65534 65534 65534 65534"));
        CHECK(status_is(pid, "Groups", ""));
        char nspid[64];
        CHECK(status_field(pid, "NSpid", nspid, sizeof(nspid)));
        char want[64];
        snprintf(want, sizeof(want), "%d 1", (int)pid); /* pid 1 in its own namespace */
        CHECK(streq(nspid, want));

        static const char *const nss[] = {"net", "ipc", "uts", "pid", "mnt"};
        for (size_t i = 0; i < ELEMENTSOF(nss); i++) {
                bool same = same_ns(pid, nss[i]);
                if (same)
                        fprintf(stderr, "pod shares our %s namespace\n", nss[i]);
                CHECK(!same);
        }

        /* cgroup membership and limits, from the cgroup side and from the pod's side */
        static const char *const ctrls[] = {"memory", "pids", "cpu"};
        char path[4096];
        snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
        _cleanup_free_ char *pcg = read_text(path);
        for (size_t i = 0; i < ELEMENTSOF(ctrls); i++) {
                const char *leaf = cg_pod_path(r->pod, ctrls[i]);
                CHECK(leaf != NULL);
                if (!leaf)
                        continue;
                snprintf(path, sizeof(path), "%s/cgroup.procs", leaf);
                _cleanup_free_ char *procs = read_text(path);
                char line[32];
                snprintf(line, sizeof(line), "%d\n", (int)pid);
                CHECK(procs && streq(procs, line));
                /* /proc/PID/cgroup shows the leaf relative to the hierarchy mount */
                const char *rel = strstr(leaf, "/pome-");
                CHECK(pcg && rel && strstr(pcg, rel));
        }
        snprintf(path, sizeof(path), "%s/pids.max", cg_pod_path(r->pod, "pids"));
        _cleanup_free_ char *pmax = read_text(path);
        CHECK(pmax && streq(pmax, "32\n"));

        /* fds: exactly 0..3 */
        snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
        DIR *d = opendir(path);
        CHECK(d != NULL);
        unsigned mask = 0, count = 0;
        for (struct dirent *de; d && (de = readdir(d));) {
                if (de->d_name[0] == '.')
                        continue;
                int fd = atoi(de->d_name);
                count++;
                if (fd >= 0 && fd < 4)
                        mask |= 1u << fd;
                else
                        fprintf(stderr, "pod has an extra fd %d\n", fd);
        }
        if (d)
                closedir(d);
        CHECK(mask == 0xf && count == 4);

        /* every mount read-only */
        snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
        _cleanup_free_ char *mi = read_text(path);
        CHECK(mi && *mi);
        unsigned rw = 0, mounts = 0;
        for (char *line = mi; line && *line;) {
                char *eol = strchrnul(line, '\n');
                char opts[256] = "";
                /* "id parent maj:min root mountpoint options ..." */
                if (sscanf(line, "%*s %*s %*s %*s %*s %255s", opts) == 1) {
                        mounts++;
                        if (strncmp(opts, "ro", 2) != 0 || (opts[2] && opts[2] != ','))
                                rw++;
                        if (!strstr(opts, "nosuid"))
                                rw++;
                }
                line = *eol ? eol + 1 : eol;
        }
        CHECK(mounts > 0 && rw == 0);

        /* rlimits */
        snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
        _cleanup_free_ char *lim = read_text(path);
        CHECK(lim && strstr(lim, "Max open files            64                   64"));
        CHECK(lim && strstr(lim, "Max core file size        0                    0"));
}

static bool have(const char *exe)
{
        return access(exe, X_OK) == 0;
}

/* Whether exe asks for a dynamic loader (an ELF PT_INTERP header). */
static bool is_dynamic(const char *exe)
{
        _cleanup_close_ int fd = open(exe, O_RDONLY | O_CLOEXEC);
        Elf64_Ehdr eh;
        if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
            memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
                return false;
        for (unsigned i = 0; i < eh.e_phnum; i++) {
                Elf64_Phdr ph;
                if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != sizeof(ph))
                        return false;
                if (ph.p_type == PT_INTERP)
                        return true;
        }
        return false;
}

/* A started pod: load, READY=1, isolation seen from outside, a call, an export, EOF. */
static void pod_session(Run *r, bool real_pod)
{
        char msg[256], detail[256];

        size_t seed_len;
        _cleanup_free_ char *seed = load_seed(&seed_len);
        CHECK_OK(send_load(r, "github", seed, seed_len, true));
        int k = wait_notify(r, msg, sizeof(msg), 5000);
        uint64_t t_ready = now_usec();
        CHECK_OK(k);
        CHECK(k == 0 && streq(msg, "READY=1"));
        if (k < 0) {
                run_stderr(r, msg, sizeof(msg));
                fprintf(stderr, "pod stderr: %s\n", msg);
                return;
        }
        fprintf(stderr,
                "info: %s: spawn_pod blocked %" PRIu64 " us, spawn to READY=1 %" PRIu64 " us\n",
                real_pod ? "pome-pod" : "pome-test-pod", r->t_spawned - r->t_start,
                t_ready - r->t_start);
        char rss[64] = "";
        status_field(r->pid, "VmRSS", rss, sizeof(rss));
        fprintf(stderr, "info: %s RSS after READY: %s\n", real_pod ? "pome-pod" : "pome-test-pod",
                rss);

        _cleanup_json_ json_t *headers = json_pack("{s:s}", "accept", "application/json");
        TwinRequest call = {.method = "GET",
                            .path = "/_pome/health",
                            .query = "",
                            .headers = headers,
                            .base_url = "http://127.0.0.1:7071/github/s/ses_t"};
        CHECK_OK(send_call(r, 7, &call));
        Frame f = {};
        CHECK(read_reply(r, &f, 5000) == 1);
        CHECK(f.id == 7);
        CHECK(reply_status(&f, NULL) == 200);
        /* after a round trip the pod is past its setup (notify socket closed) */
        check_isolation(r);
        if (real_pod) {
                _cleanup_json_ json_t *body = json_loadb(f.body, f.body_len, 0, NULL);
                CHECK(json_is_true(json_object_get(body, "ok")));
                CHECK(streq_ptr(json_get_str(body, "twin"), "github"));
        }
        frame_done(&f);

        _cleanup_json_ json_t *exp = json_pack("{s:s}", "op", "export");
        CHECK_OK(send_frame(r, 8, exp, NULL, 0));
        CHECK(read_reply(r, &f, 5000) == 1);
        CHECK(f.id == 8 && reply_status(&f, NULL) == 200);
        if (real_pod) {
                _cleanup_json_ json_t *world = json_loadb(f.body, f.body_len, 0, NULL);
                CHECK(json_is_object(world));
        }
        frame_done(&f);

        if (real_pod) {
                /* A burst, as pomed sends under load: 200 calls in one write. The pod batches
                 * its replies (64 KiB at a time, ~400 KB here): every one comes back, once. */
                enum { BURST = 200, FIRST_ID = 100 };
                call.path = "/repos/acme/api/issues/1";
                _cleanup_free_ char *burst = NULL;
                size_t burst_len = 0;
                for (uint64_t id = FIRST_ID; id < FIRST_ID + BURST; id++) {
                        char *buf;
                        size_t n;
                        CHECK_OK(podwire_encode_request(id, &call, &buf, &n));
                        char *grown = realloc(burst, burst_len + n);
                        CHECK(grown);
                        memcpy(grown + burst_len, buf, n);
                        burst = grown;
                        burst_len += n;
                        free(buf);
                }
                CHECK_OK(write_all(r->sock, burst, burst_len));
                bool seen[BURST] = {};
                size_t got = 0, bytes = 0;
                FrameReader rd = {};
                while (got < BURST) {
                        int next = frame_reader_next(&rd, &f);
                        if (next == 1) {
                                uint64_t i = f.id - FIRST_ID;
                                CHECK(f.id >= FIRST_ID && i < BURST && !seen[i]);
                                CHECK(reply_status(&f, NULL) == 200);
                                if (f.id >= FIRST_ID && i < BURST)
                                        seen[i] = true;
                                bytes += f.body_len;
                                got++;
                                frame_done(&f);
                                continue;
                        }
                        struct pollfd pf = {.fd = r->sock, .events = POLLIN};
                        if (next < 0 || poll(&pf, 1, 5000) != 1 ||
                            frame_reader_fill(&rd, r->sock) <= 0)
                                break;
                }
                frame_reader_done(&rd);
                CHECK(got == BURST);
                CHECK(bytes > 2 * 64 * 1024); /* the batch filled and went out more than once */
        }

        if (!real_pod) {
                /* stage 2 in force: open(2) fails with ENOSYS inside the pod */
                _cleanup_json_ json_t *op = json_pack("{s:s}", "op", "open");
                CHECK_OK(send_frame(r, 9, op, NULL, 0));
                CHECK(read_reply(r, &f, 5000) == 1);
                CHECK(json_integer_value(json_object_get(f.head, "errno")) == ENOSYS);
                frame_done(&f);
        }

        /* EOF on fd 3 → the pod exits 0 */
        r->sock = safe_close(r->sock);
        PodExit e = run_wait(r, detail, sizeof(detail), 5000);
        CHECK(e == POD_EXIT_NORMAL);
        CHECK(streq(pod_exit_to_string(e), "exited"));
        if (e != POD_EXIT_NORMAL)
                fprintf(stderr, "pod ended: %s\n", detail);
}

/* The full path: pome-pod (or the helper stand-in) spawned, loaded, READY, isolated, served. */
static void test_pod(bool real_pod)
{
        const char *exe = real_pod ? pod_bin : helper;
        char *argv_pod[] = {(char *)exe, "--twin", "github", NULL};
        char *argv_helper[] = {(char *)exe, "serve", NULL};
        PodLimits lim = POD_LIMITS_DEFAULT;
        Run r;

        int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
        sigset_t before, after; /* the kernel fills only _NSIG bits: zero the rest */
        sigemptyset(&before);
        sigemptyset(&after);
        pthread_sigmask(SIG_SETMASK, NULL, &before);
        CHECK_OK(run_start(&r, "github", &lim, exe, real_pod ? argv_pod : argv_helper, false, -1));
        /* the child's uid change must not leave pomed non-dumpable (the child may still be
         * setting up: checked once released, below), nor its mask changed */
        pthread_sigmask(SIG_SETMASK, NULL, &after);
        for (int sig = 1; sig < SIGRTMIN; sig++)
                if (sigismember(&before, sig) != sigismember(&after, sig)) {
                        fprintf(stderr, "signal %d: blocked %d before spawn_pod, %d after\n", sig,
                                sigismember(&before, sig), sigismember(&after, sig));
                        check_failures++;
                }
        if (r.pid > 0)
                pod_session(&r, real_pod);
        run_end(&r);
        CHECK(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == dumpable);
}

/* pome-pod's own refusals: a rejected seed over NOTIFY_SOCKET, a bad frame, bad usage. */
static void test_pod_errors(void)
{
        PodLimits lim = POD_LIMITS_DEFAULT;
        char msg[1024], detail[256], err[1024];
        Run r;

        /* a seed the twin rejects: STATUS + ERRNO=22 (sd_notify), exit 65 */
        char broken[4096];
        snprintf(broken, sizeof(broken), "%s/tests/sandbox-images/github/seeds/broken.json",
                 getenv("POME_SOURCE_DIR") ? getenv("POME_SOURCE_DIR") : POME_SOURCE_DIR);
        _cleanup_free_ char *seed = read_text(broken);
        if (!seed)
                seed = strdup("{\"repositories\": 7}");
        char *argv[] = {pod_bin, "--twin", "github", NULL};
        CHECK_OK(run_start(&r, "github", &lim, pod_bin, argv, false, -1));
        CHECK_OK(send_load(&r, "github", seed, strlen(seed), true));
        CHECK_OK(wait_notify(&r, msg, sizeof(msg), 5000));
        CHECK(startswith(msg, "STATUS=seed rejected: ") != NULL);
        CHECK(strstr(msg, "\nERRNO=22") != NULL && !strstr(msg, "READY=1"));
        fprintf(stderr, "info: pome-pod on %s: %s\n", broken, msg);
        PodExit e = run_wait(&r, detail, sizeof(detail), 5000);
        CHECK(e == POD_EXIT_FAILURE && streq(detail, "exited with status 65"));
        CHECK(streq(last_how, "exit_code:65"));
        run_end(&r);

        /*
         * After READY=1, frames the pod cannot serve (an unknown op, a call head cut
         * short) are answered 500 and the pod lives on: it never exits over a frame.
         */
        CHECK_OK(run_start(&r, "github", &lim, pod_bin, argv, false, -1));
        CHECK_OK(send_load(&r, "github", "{}", 2, true));
        CHECK_OK(wait_notify(&r, msg, sizeof(msg), 5000));
        CHECK(streq(msg, "READY=1"));
        _cleanup_json_ json_t *head = json_pack("{s:s}", "op", "frobnicate");
        /* a call head cut short after its kind */
        static const char cut[] = {FRAME_HEAD_CALL};
        Frame f = {};
        CHECK_OK(send_frame(&r, 3, head, NULL, 0));
        CHECK(read_reply(&r, &f, 5000) == 1);
        const char *error = NULL;
        CHECK(f.id == 3 && reply_status(&f, &error) == 500);
        CHECK(strstr(strempty(error), "frobnicate") != NULL);
        frame_done(&f);
        char *cbuf;
        size_t clen, none = 0;
        const char *nobody = NULL;
        CHECK_OK(frame_encode_raw(4, cut, sizeof(cut), &nobody, &none, 1, &cbuf, &clen));
        CHECK_OK(write_all(r.sock, cbuf, clen));
        free(cbuf);
        CHECK(read_reply(&r, &f, 5000) == 1);
        CHECK(f.id == 4 && reply_status(&f, NULL) == 500);
        frame_done(&f);
        r.sock = safe_close(r.sock);
        e = run_wait(&r, detail, sizeof(detail), 5000);
        CHECK(e == POD_EXIT_NORMAL);
        run_stderr(&r, err, sizeof(err));
        run_end(&r);

        /* usage */
        char *bad_argv[] = {pod_bin, "--twin", NULL};
        CHECK_OK(run_start(&r, "github", &lim, pod_bin, bad_argv, false, -1));
        e = run_wait(&r, detail, sizeof(detail), 5000);
        CHECK(e == POD_EXIT_FAILURE && streq(detail, "exited with status 64"));
        run_end(&r);
}

/* A helper run under stage 1 only; returns its classification. */
static PodExit run_helper(const PodLimits *lim, char *const *argv, char *detail, size_t len,
                          char *err, size_t errlen)
{
        Run r;
        PodExit e = _POD_EXIT_MAX;
        int k = run_start(&r, "helper", lim, helper, argv, false, -1);
        CHECK_OK(k);
        if (k == 0)
                e = run_wait(&r, detail, len, 10000);
        run_stderr(&r, err, errlen);
        run_end(&r);
        return e;
}

static void test_violations(void)
{
        PodLimits lim = POD_LIMITS_DEFAULT;
        char detail[256], err[512];

        char *ptrace_argv[] = {helper, "ptrace", NULL};
        PodExit e = run_helper(&lim, ptrace_argv, detail, sizeof(detail), err, sizeof(err));
        CHECK(e == POD_EXIT_SECCOMP_VIOLATION);
        CHECK(streq(pod_exit_to_string(e), "seccomp_violation"));
        /* the helper has no SIGSYS handler: the trap kills it unnamed */
        CHECK(streq(last_how, "seccomp_violation"));

        char *x32_argv[] = {helper, "x32", NULL};
        e = run_helper(&lim, x32_argv, detail, sizeof(detail), err, sizeof(err));
        CHECK(e == POD_EXIT_SECCOMP_VIOLATION);

        /* not listed → ENOSYS, the process lives on */
        char *enosys_argv[] = {helper, "enosys", NULL};
        e = run_helper(&lim, enosys_argv, detail, sizeof(detail), err, sizeof(err));
        CHECK(e == POD_EXIT_NORMAL);

        char *exit_argv[] = {helper, "exit", "3", NULL};
        e = run_helper(&lim, exit_argv, detail, sizeof(detail), err, sizeof(err));
        CHECK(e == POD_EXIT_FAILURE && streq(detail, "exited with status 3"));
        CHECK(streq(pod_exit_to_string(e), "exit_code"));
        CHECK(streq(last_how, "exit_code:3"));

        /* 127 from the program itself, after exec: its own status, not a spawn step */
        char *exit127_argv[] = {helper, "exit", "127", NULL};
        e = run_helper(&lim, exit127_argv, detail, sizeof(detail), err, sizeof(err));
        CHECK(e == POD_EXIT_FAILURE && streq(last_how, "exit_code:127"));
}

static void test_oom(void)
{
        PodLimits lim = POD_LIMITS_DEFAULT;
        lim.memory_max = 16u << 20;
        char *argv[] = {helper, "alloc", "64", NULL};
        char detail[256], err[512];
        PodExit e = run_helper(&lim, argv, detail, sizeof(detail), err, sizeof(err));
        CHECK(e == POD_EXIT_OOM_KILLED);
        CHECK(streq(pod_exit_to_string(e), "oom_killed"));
        CHECK(streq(last_how, "oom_killed"));
        if (e != POD_EXIT_OOM_KILLED)
                fprintf(stderr, "alloc past 16M ended: %s\n", detail);
}

static void test_setup_failures(void)
{
        PodLimits lim = POD_LIMITS_DEFAULT;
        char detail[256], err[512];
        Run r;

        /* exec of a missing binary: exit 127, "exec" named, errno on the pod's stderr */
        char *argv[] = {"/nonexistent/pome-pod", NULL};
        CHECK_OK(run_start(&r, "helper", &lim, "/nonexistent/pome-pod", argv, false, -1));
        PodExit e = run_wait(&r, detail, sizeof(detail), 5000);
        run_stderr(&r, err, sizeof(err));
        run_end(&r);
        /* the errno comes over the report pipe, not from the pod's stderr */
        CHECK(e == POD_EXIT_EXEC_FAILED);
        CHECK(streq(pod_exit_to_string(e), "exec_failed"));
        CHECK(streq(last_how, "exec_failed:ENOENT"));
        CHECK(strstr(detail, "execve") != NULL);
        CHECK(streq(err, "pome-spawn: exec: errno 2\n"));

        /* a cgroup fd that cannot be written: exit 120, "cgroup join" */
        _cleanup_close_ int ro = open("/dev/null", O_RDONLY | O_CLOEXEC);
        char *hargv[] = {helper, "exit", "0", NULL};
        CHECK_OK(run_start(&r, "helper", &lim, helper, hargv, false, ro));
        e = run_wait(&r, detail, sizeof(detail), 5000);
        run_stderr(&r, err, sizeof(err));
        run_end(&r);
        CHECK(e == POD_EXIT_SETUP_FAILED && strstr(detail, "cgroup join"));
        CHECK(streq(last_how, "setup_failed:cgroup_join:EBADF"));
        CHECK(streq(err, "pome-spawn: cgroup join: errno 9\n"));

        /* bad specs never fork */
        pid_t pid;
        int pidfd;
        PodSpec bad = {.exec_path = "relative", .argv = argv, .envp = argv + 1, .pod_fd = 0};
        SpawnChild *child;
        CHECK(spawn_pod(&bad, &pid, &pidfd, &child) == -EINVAL);
        /* nowhere to hand the child's setup to */
        PodSpec good = {.exec_path = "/bin/true", .argv = argv, .envp = argv + 1};
        CHECK(spawn_pod(&good, &pid, &pidfd, NULL) == -EINVAL);
}

/*
 * A child released while it is still setting up runs on a mapping that must stay
 * where it is: spawn_child_release leaves it mapped (and out of reuse) until the report
 * pipe says the child exec'd or died. The child blocks in its cgroup "join" on a full
 * pipe; it is released early, a second child is spawned (which would take a mapping given
 * back), then the pipe drains: both must still exec and say READY=1.
 */
static void test_release_during_setup(void)
{
        PodLimits lim = POD_LIMITS_DEFAULT;
        char msg[64], detail[128];
        int p[2];
        CHECK_OK(pipe2(p, O_CLOEXEC));
        _cleanup_close_ int rd = p[0], wr = p[1];
        (void)fcntl(wr, F_SETFL, O_NONBLOCK);
        (void)fcntl(rd, F_SETFL, O_NONBLOCK);
        char fill[4096] = {0};
        while (write(wr, fill, sizeof(fill)) > 0)
                ;
        while (write(wr, fill, 1) == 1)
                ;
        (void)fcntl(wr, F_SETFL, 0); /* the child's write now blocks */

        char *hargv[] = {helper, "serve", NULL};
        Run a, b;
        CHECK_OK(run_start(&a, "helper", &lim, helper, hargv, false, wr));
        usleep(20 * 1000);
        SpawnFailure f = {.step = -1};
        a.setup = spawn_child_release(a.setup, &f);
        CHECK(f.step == 0); /* nothing reported yet */
        CHECK_OK(run_start(&b, "helper", &lim, helper, hargv, false, -1));
        while (read(rd, fill, sizeof(fill)) > 0)
                ;
        CHECK_OK(send_load(&a, "helper", "{}", 2, true));
        CHECK_OK(send_load(&b, "helper", "{}", 2, true));
        CHECK_OK(wait_notify(&a, msg, sizeof(msg), 5000));
        CHECK_OK(wait_notify(&b, msg, sizeof(msg), 5000));
        a.sock = safe_close(a.sock);
        b.sock = safe_close(b.sock);
        CHECK(run_wait(&a, detail, sizeof(detail), 5000) == POD_EXIT_NORMAL);
        CHECK(run_wait(&b, detail, sizeof(detail), 5000) == POD_EXIT_NORMAL);
        run_end(&a);
        run_end(&b);
}

/* The pod's socket already at fd 3 in pomed (dup2 onto itself keeps FD_CLOEXEC). */
static void test_fd3(void)
{
        PodLimits lim = POD_LIMITS_DEFAULT;
        char *argv[] = {helper, "serve", NULL};
        char msg[64], detail[256];
        Run r;
        int saved = fcntl(3, F_DUPFD_CLOEXEC, 10);
        CHECK_OK(run_start(&r, "helper", &lim, helper, argv, true, -1));
        CHECK_OK(send_load(&r, "helper", "{}", 2, true));
        CHECK_OK(wait_notify(&r, msg, sizeof(msg), 5000));
        r.sock = safe_close(r.sock);
        CHECK(run_wait(&r, detail, sizeof(detail), 5000) == POD_EXIT_NORMAL);
        run_end(&r);
        if (saved >= 0) {
                dup3(saved, 3, O_CLOEXEC);
                close(saved);
        }
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

/* Sequential spawns, as pomed does them: cgroup create, spawn, load, READY, EOF, destroy. */
static void measure(const char *exe, char *const *argv, const char *twin, unsigned n)
{
        uint64_t cgc[64], blk[64], rdy[64], dst[64];
        size_t seed_len;
        _cleanup_free_ char *seed = load_seed(&seed_len);
        PodLimits lim = POD_LIMITS_DEFAULT;
        unsigned ok = 0;
        for (unsigned i = 0; i < n && i < 64; i++) {
                Run r;
                char msg[64], detail[128];
                uint64_t t0 = now_usec();
                if (run_start(&r, twin, &lim, exe, argv, false, -1) < 0 ||
                    send_load(&r, twin, seed, seed_len, true) < 0 ||
                    wait_notify(&r, msg, sizeof(msg), 5000) < 0) {
                        run_end(&r);
                        check_failures++;
                        continue;
                }
                uint64_t t1 = now_usec(), t_start = r.t_start;
                blk[ok] = r.t_spawned - r.t_start;
                r.sock = safe_close(r.sock);
                (void)run_wait(&r, detail, sizeof(detail), 5000);
                uint64_t t2 = now_usec();
                run_end(&r);
                uint64_t t3 = now_usec();
                cgc[ok] = t_start - t0; /* run_start: cgroup + notify socket before spawn */
                rdy[ok] = t1 - t0;
                dst[ok] = t3 - t2;
                ok++;
        }
        if (!ok)
                return;
        qsort(cgc, ok, sizeof(uint64_t), cmp_u64);
        qsort(rdy, ok, sizeof(uint64_t), cmp_u64);
        qsort(dst, ok, sizeof(uint64_t), cmp_u64);
        qsort(blk, ok, sizeof(uint64_t), cmp_u64);
        fprintf(stderr,
                "info: %s x%u (medians): cgroup create %" PRIu64 " us, spawn_pod blocked %" PRIu64
                " us, create-to-READY %" PRIu64 " us (max %" PRIu64 "), destroy %" PRIu64 " us\n",
                argv[0], ok, cgc[ok / 2], blk[ok / 2], rdy[ok / 2], rdy[ok - 1], dst[ok / 2]);
}

static void cleanup(void)
{
        cg_setup_free(cg);
        cg = NULL;
        scp_free(stage1);
        scp_free(stage2);
        rmdir(tmpdir);
}

int main(void)
{
        const char *build = getenv("POME_BUILD_DIR");
        const char *src = getenv("POME_SOURCE_DIR") ? getenv("POME_SOURCE_DIR") : POME_SOURCE_DIR;
        test_classify_table();
        test_oom_attribution();
        if (geteuid() != 0) {
                if (check_failures)
                        return check_finish();
                SKIP("spawning pods needs root (namespaces, cgroups, setresuid)");
        }
        if (!build)
                SKIP("POME_BUILD_DIR is not set (run through ctest)");
        snprintf(helper, sizeof(helper), "%s/tests/pome-test-pod", build);
        snprintf(pod_bin, sizeof(pod_bin), "%s/pods/pome-pod", build);
        snprintf(seed_path, sizeof(seed_path), "%s/sandbox-images/github/seeds/default.json", src);
        if (!have(helper))
                SKIP("%s is not built", helper);

        char warn[512] = "", err[512] = "", tree[64], path[4096];
        snprintf(tree, sizeof(tree), "pome-test-spawn-%d", (int)getpid());
        int k = cg_setup(tree, &cg, warn, sizeof(warn));
        if (k < 0)
                SKIP("no cgroup access: %s", warn);
        cg_test_reap_stale(cg, "pome-test-spawn-");
        snprintf(path, sizeof(path), "%s/policies/pod-stage1.policy", src);
        CHECK_OK(scp_compile(path, &stage1, err, sizeof(err)));
        snprintf(path, sizeof(path), "%s/policies/pod-stage2.policy", src);
        CHECK_OK(scp_compile(path, &stage2, err, sizeof(err)));
        if (!stage1 || !stage2 || !mkdtemp(tmpdir) || chmod(tmpdir, 0755) < 0) {
                fprintf(stderr, "%s\n", err);
                cleanup();
                return 1;
        }
        /* the pods' notify sockets live here: nobody must be able to reach them */

        /* the pod's stage-1 policy has no dynamic loader in it: */
        bool pod_ok = have(pod_bin) && !is_dynamic(pod_bin);
        if (have(pod_bin) && !pod_ok) {
                fprintf(stderr,
                        "%s is dynamically linked, but policies/pod-stage1.policy "
                        "allows no dynamic loader (no openat): link pome-pod with "
                        "-static\n",
                        pod_bin);
                check_failures++;
        }
        signal(SIGPIPE, SIG_IGN); /* a pod that died under us is a checked error, not our death */
        test_pod(false);
        if (pod_ok) {
                test_pod(true);
                test_pod_errors();
        } else
                fprintf(stderr,
                        "info: %s is not built (or not static): the pome-pod checks were skipped\n",
                        pod_bin);
        test_violations();
        test_oom();
        test_setup_failures();
        test_release_during_setup();
        test_fd3();
        char *hargv[] = {helper, "serve", NULL};
        measure(helper, hargv, "helper", 20);
        if (pod_ok) {
                char *pargv[] = {pod_bin, "--twin", "github", NULL};
                measure(pod_bin, pargv, "github", 20);
        }

        /* the tree itself: empty now, ours to remove */
        static const char *const ctrls[] = {"memory", "pids", "cpu"};
        char trees[3][4096];
        for (size_t i = 0; i < 3; i++)
                snprintf(trees[i], sizeof(trees[i]), "%s", cg_tree_path(cg, ctrls[i]));
        cleanup();
        for (size_t i = 0; i < 3; i++)
                if (rmdir(trees[i]) < 0 && errno != ENOENT) {
                        fprintf(stderr, "rmdir %s: %m\n", trees[i]);
                        check_failures++;
                }
        return check_finish();
}
