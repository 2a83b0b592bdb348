/* SPDX-License-Identifier: MIT */
/*
 * An exec target for the spawner tests (tests/unit/test-spawn.c), built like the pod
 * (no sanitizers, static) so the real stage-1 policy applies to it unchanged:
 *
 *   pome-test-pod serve     the pod protocol without a twin: load frame, $NOTIFY_SOCKET,
 *                           stage 2, READY=1, then answer every frame with
 *                           {"status":200,"op":<op>} and the request body; exit 0 on EOF.
 *                           Op "open" tries open(2) and answers {"errno":N}; op "exec"
 *                           tries execve(2). Stands in for pome-pod where no twin is needed.
 *   pome-test-pod ptrace    calls ptrace(2) (a [kill] syscall): expected death by SIGSYS
 *   pome-test-pod x32       calls getpid through the x32 ABI: expected death by SIGSYS
 *   pome-test-pod enosys    calls a syscall outside the allow-list (clone3): exits 0 if it
 *                           failed with ENOSYS, 1 otherwise
 *   pome-test-pod alloc MiB touches MiB mebibytes: expected OOM kill under a smaller limit
 *   pome-test-pod exit N    exits with status N
 *   pome-test-pod --twin T  the seccomp probe, run by a real pomed (pod_exec:) in place
 *                           of pome-pod (tests/integration/test-seccomp-table.sh): the
 *                           SIGSYS reporter of pome-pod, the load frame, then the case
 *                           the seed names ({"probe_stage1":"<case>"}) under stage 1
 *                           only; stage 2, READY=1; then a call to /probe/<case> runs
 *                           that case under both stages and answers {"errno":N}, and
 *                           /probe/stage1 answers the errno of the stage-1 case.
 */
#include <fcntl.h>
#include <signal.h>
#include <linux/filter.h>
#include <sys/random.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "common/fileio.h"
#include "common/frame.h"
#include "common/json-util.h"
#include "common/util.h"
#include "pods/twin/podwire.h"
#include "pods/pod/sigsys.h"

static int notify_connect(void);

/*
 * The probe's cases: one syscall each, with arguments that make it fail harmlessly if a
 * policy ever let it through (no capability, bad fd, invalid flag combination). Returns
 * the errno it failed with, 0 when it succeeded, or -1 for an unknown case.
 */
static int probe_case(const char *name)
{
        static const struct {
                const char *name;
                long nr;
                long a[6];
        } cases[] = {
                {"mount", SYS_mount, {0, 0, 0, 0, 0, 0}},
                {"umount2", SYS_umount2, {0, 0}},
                {"pivot_root", SYS_pivot_root, {0, 0}},
                {"chroot", SYS_chroot, {0}},
                {"fsopen", SYS_fsopen, {0, 0}},
                {"fsconfig", SYS_fsconfig, {-1, 0, 0, 0, 0}},
                {"fsmount", SYS_fsmount, {-1, 0, 0}},
                {"fspick", SYS_fspick, {-1, 0, 0}},
                {"move_mount", SYS_move_mount, {-1, 0, -1, 0, 0}},
                {"open_tree", SYS_open_tree, {-1, 0, 0}},
                {"mount_setattr", SYS_mount_setattr, {-1, 0, 0, 0, 0}},
                {"bpf", SYS_bpf, {0, 0, 0}},
                {"io_uring_setup", SYS_io_uring_setup, {1, 0}},
                {"io_uring_enter", SYS_io_uring_enter, {-1, 0, 0, 0, 0, 0}},
                {"io_uring_register", SYS_io_uring_register, {-1, 0, 0, 0}},
                {"userfaultfd", SYS_userfaultfd, {0}},
                {"perf_event_open", SYS_perf_event_open, {0, 0, -1, -1, 0}},
                {"keyctl", SYS_keyctl, {0, 0, 0, 0, 0}},
                {"add_key", SYS_add_key, {0, 0, 0, 0, 0}},
                {"request_key", SYS_request_key, {0, 0, 0, 0}},
                {"unshare", SYS_unshare, {0}},
                {"setns", SYS_setns, {-1, 0}},
                /* CLONE_THREAD without CLONE_SIGHAND: EINVAL if it ever got through */
                {"clone_newuser", SYS_clone, {0x10000000 | 0x10000, 0, 0, 0, 0}},
                {"clone_newnet", SYS_clone, {0x40000000 | 0x10000, 0, 0, 0, 0}},
                {"clone_newns", SYS_clone, {0x20000 | 0x10000, 0, 0, 0, 0}},
                {"clone_plain", SYS_clone, {0x10000, 0, 0, 0, 0}},
                {"clone3", SYS_clone3, {0, 0}},
                {"socket_inet", SYS_socket, {2 /* AF_INET */, 1, 0}},
                {"socket_inet6", SYS_socket, {10 /* AF_INET6 */, 2, 0}},
                {"socket_netlink", SYS_socket, {16 /* AF_NETLINK */, 3, 0}},
                {"socket_unix", SYS_socket, {1 /* AF_UNIX */, 2, 0}},
                {"socket_unix_hibits", SYS_socket, {0x100000001L, 2, 0}},
                {"socketpair", SYS_socketpair, {1, 1, 0, 0}},
                {"ptrace", SYS_ptrace, {PTRACE_TRACEME, 0, 0, 0}},
                {"process_vm_readv", SYS_process_vm_readv, {0, 0, 0, 0, 0, 0}},
                {"process_vm_writev", SYS_process_vm_writev, {0, 0, 0, 0, 0, 0}},
                {"kexec_load", SYS_kexec_load, {0, 0, 0, 0}},
                {"kexec_file_load", SYS_kexec_file_load, {-1, -1, 0, 0, 0}},
                {"init_module", SYS_init_module, {0, 0, 0}},
                {"finit_module", SYS_finit_module, {-1, 0, 0}},
                {"delete_module", SYS_delete_module, {0, 0}},
                {"swapon", SYS_swapon, {0, 0}},
                {"swapoff", SYS_swapoff, {0}},
                {"reboot", SYS_reboot, {0, 0, 0, 0}},
                {"acct", SYS_acct, {0}},
                {"iopl", SYS_iopl, {0}},
                {"ioperm", SYS_ioperm, {0, 0, 0}},
                {"quotactl", SYS_quotactl, {0, 0, 0, 0}},
                {"settimeofday", SYS_settimeofday, {0, 0}},
                {"clock_settime", SYS_clock_settime, {-1, 0}},
                {"clock_adjtime", SYS_clock_adjtime, {-1, 0}},
                {"adjtimex", SYS_adjtimex, {0}},
                {"pidfd_getfd", SYS_pidfd_getfd, {-1, -1, 0}},
                {"kcmp", SYS_kcmp, {0, 0, 0, 0, 0}},
                {"open_by_handle_at", SYS_open_by_handle_at, {-1, 0, 0}},
                {"name_to_handle_at", SYS_name_to_handle_at, {-1, 0, 0, 0, 0}},
                {"execve", SYS_execve, {0, 0, 0}},
                {"execveat", SYS_execveat, {-1, 0, 0, 0, 0}},
                {"rt_sigaction_sigsys", SYS_rt_sigaction, {SIGSYS, 0, 0, 8}},
                {"rt_sigaction_sigsys_hibits", SYS_rt_sigaction, {0x100000000L | SIGSYS, 0, 0, 8}},
                {"rt_sigaction_sigusr1", SYS_rt_sigaction, {SIGUSR1, 0, 0, 8}},
                {"openat", SYS_openat, {-100, 0, 0, 0}},
                {"getpid", SYS_getpid, {0}},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                if (streq(cases[i].name, name)) {
                        const long *a = cases[i].a;
                        long r = syscall(cases[i].nr, a[0], a[1], a[2], a[3], a[4], a[5]);
                        if (r >= 0 && streq(name, "socket_unix"))
                                close((int)r);
                        return r < 0 ? errno : 0;
                }
        return -1;
}

/* A reply frame of status with body (JSON, also the tape's response_body), in the pod
 * wire's reply head (pods/twin/podwire.h). 0 or negative errno. */
static int probe_reply(uint64_t id, int status, const char *body)
{
        TwinReplyBytes rb = {.status = status, .body = body, .body_len = strlen(body)};
        rb.response_body = rb.body;
        rb.response_body_len = rb.body_len;
        char *buf;
        size_t len;
        int r = podwire_encode_reply_bytes(id, &rb, &buf, &len);
        if (r < 0)
                return r;
        r = write_all(3, buf, len);
        free(buf);
        return r;
}

static int notify_connect(void)
{
        const char *path = getenv("NOTIFY_SOCKET");
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (!path || path[0] != '/' || strlen(path) >= sizeof(sa.sun_path))
                return -EINVAL;
        strcpy(sa.sun_path, path);
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return -errno;
        return fd;
}

/* Reads the load frame into *f: 0, or the exit status to leave with. */
static int read_load(FrameReader *rd, Frame *f, size_t *ret_seed_len)
{
        int k;
        while ((k = frame_reader_next(rd, f)) == 0)
                if (frame_reader_fill(rd, 3) <= 0)
                        return 65;
        if (k < 0 || !streq_ptr(json_get_str(f->head, "op"), "load"))
                return 65;
        size_t seed_len = (size_t)json_integer_value(json_object_get(f->head, "seed_len"));
        if (seed_len > f->body_len || (f->body_len - seed_len) % sizeof(struct sock_filter))
                return 65;
        *ret_seed_len = seed_len;
        return 0;
}

/* Installs the load frame's stage-2 program and says READY=1: 0 or an exit status. */
static int stage2_and_ready(const Frame *f, size_t seed_len)
{
        int nfd = notify_connect();
        if (nfd < 0)
                return 71;
        if (f->body_len > seed_len) {
                struct sock_fprog prog = {.len = (unsigned short)((f->body_len - seed_len) /
                                                                  sizeof(struct sock_filter)),
                                          .filter = (struct sock_filter *)(f->body + seed_len)};
                if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
                        return 71;
        }
        if (send(nfd, "READY=1", 7, MSG_NOSIGNAL) != 7)
                return 71;
        close(nfd);
        return 0;
}

/* The next frame into *f: 1, 0 at EOF, or minus the exit status to leave with. */
static int next_frame(FrameReader *rd, Frame *f)
{
        for (;;) {
                int k = frame_reader_next(rd, f);
                if (k < 0)
                        return -65;
                if (k > 0)
                        return 1;
                k = frame_reader_fill(rd, 3);
                if (k == 0)
                        return 0;
                if (k < 0)
                        return -71;
        }
}

static int probe(void)
{
        FrameReader rd = {};
        Frame f = {};
        size_t seed_len;
        int k = read_load(&rd, &f, &seed_len);
        if (k)
                return k;
        int stage1_errno = -1;
        _cleanup_json_ json_t *seed = json_loadb(f.body, seed_len, 0, NULL);
        const char *s1 = json_get_str(seed, "probe_stage1");
        if (s1)
                stage1_errno = probe_case(s1); /* may not return */
        if ((k = stage2_and_ready(&f, seed_len)))
                return k;
        frame_done(&f);

        while ((k = next_frame(&rd, &f)) > 0) {
                TwinRequest rq = {};
                bool call = podwire_decode_request(&f, &rq) == 0;
                const char *path = strempty(rq.path);
                char body[64] = "{}";
                int status = 200;
                if (call && streq(path, "/probe/stage1"))
                        snprintf(body, sizeof(body), "{\"errno\":%d}", stage1_errno);
                else if (call && startswith(path, "/probe/")) {
                        int e = probe_case(path + strlen("/probe/"));
                        status = e < 0 ? 404 : 200;
                        snprintf(body, sizeof(body), "{\"errno\":%d}", e);
                }
                if (probe_reply(f.id, status, body) < 0)
                        return 71;
                frame_done(&f);
        }
        return -k;
}

static int serve(void)
{
        FrameReader rd = {};
        Frame f = {};
        size_t seed_len;
        int k = read_load(&rd, &f, &seed_len);
        if (k || (k = stage2_and_ready(&f, seed_len)))
                return k;
        frame_done(&f);

        while ((k = next_frame(&rd, &f)) > 0) {
                const char *op = strempty(json_get_str(f.head, "op"));
                int err = 0;
                if (streq(op, "exec")) {
                        char *const args[] = {"/bin/true", NULL};
                        execve(args[0], args, args + 1);
                        err = errno;
                } else if (streq(op, "open")) {
                        int fd = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
                        err = fd < 0 ? errno : 0;
                        if (fd >= 0)
                                close(fd);
                }
                /* the body echoed is whatever came: no tape response_body of it */
                _cleanup_json_ json_t *head =
                        json_pack("{s:i, s:s, s:i, s:[I, i, i, i]}", "status", 200, "op", op,
                                  "errno", err, "parts", (json_int_t)f.body_len, -1, -1, -2);
                char *buf;
                size_t len;
                if (!head || frame_encode(f.id, head, f.body, f.body_len, &buf, &len) < 0)
                        return 71;
                if (write_all(3, buf, len) < 0)
                        return 71;
                free(buf);
                frame_done(&f);
        }
        return -k;
}

int main(int argc, char **argv)
{
        if (argc >= 3 && streq(argv[1], "--twin")) {
                /* as pome-pod: the reporter first, so that every trap is named */
                if (pod_sigsys_install(3) < 0)
                        return 71;
                size_t h;
                if (getrandom(&h, sizeof(h), 0) == (ssize_t)sizeof(h))
                        json_object_seed(h | 1);
                return probe();
        }
        size_t hseed; /* as pome-pod does: no /dev/urandom for jansson */
        if (getrandom(&hseed, sizeof(hseed), 0) == (ssize_t)sizeof(hseed))
                json_object_seed(hseed | 1);
        if (argc >= 2 && streq(argv[1], "serve"))
                return serve();
        if (argc >= 2 && streq(argv[1], "ptrace")) {
                ptrace(PTRACE_TRACEME, 0, NULL, NULL);
                return 1; /* not reached under the policy */
        }
        if (argc >= 2 && streq(argv[1], "x32")) {
                syscall(0x40000000 | SYS_getpid);
                return 1;
        }
        if (argc >= 2 && streq(argv[1], "enosys")) {
                long r = syscall(SYS_clone3, NULL, 0);
                return r < 0 && errno == ENOSYS ? 0 : 1;
        }
        if (argc >= 3 && streq(argv[1], "alloc")) {
                size_t mib = (size_t)atol(argv[2]);
                for (size_t i = 0; i < mib; i++) {
                        char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
                                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                        if (p == MAP_FAILED)
                                return 71;
                        memset(p, 1, 1 << 20);
                }
                return 0;
        }
        if (argc >= 3 && streq(argv[1], "exit"))
                return atoi(argv[2]);
        fprintf(stderr, "usage: pome-test-pod serve|ptrace|x32|enosys|alloc MiB|exit N\n");
        return 64;
}
