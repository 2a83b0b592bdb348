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
 */
#include <fcntl.h>
#include <linux/filter.h>
#include <sys/random.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "common/frame.h"
#include "common/json-util.h"
#include "common/util.h"

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

static int serve(void)
{
        FrameReader rd = {};
        Frame f = {};
        int k;
        while ((k = frame_reader_next(&rd, &f)) == 0)
                if (frame_reader_fill(&rd, 3) <= 0)
                        return 65;
        if (k < 0 || !streq_ptr(json_get_str(f.head, "op"), "load"))
                return 65;
        size_t seed_len = (size_t)json_integer_value(json_object_get(f.head, "seed_len"));
        if (seed_len > f.body_len || (f.body_len - seed_len) % sizeof(struct sock_filter))
                return 65;

        int nfd = notify_connect();
        if (nfd < 0)
                return 71;
        if (f.body_len > seed_len) {
                struct sock_fprog prog = {.len = (unsigned short)((f.body_len - seed_len) /
                                                                  sizeof(struct sock_filter)),
                                          .filter = (struct sock_filter *)(f.body + seed_len)};
                if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
                        return 71;
        }
        if (send(nfd, "READY=1", 7, MSG_NOSIGNAL) != 7)
                return 71;
        close(nfd);
        frame_done(&f);

        for (;;) {
                k = frame_reader_next(&rd, &f);
                if (k < 0)
                        return 65;
                if (k == 0) {
                        k = frame_reader_fill(&rd, 3);
                        if (k == 0)
                                return 0;
                        if (k < 0)
                                return 71;
                        continue;
                }
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
                _cleanup_json_ json_t *head =
                        json_pack("{s:i, s:s, s:i}", "status", 200, "op", op, "errno", err);
                char *buf;
                size_t len;
                if (!head || frame_encode(f.id, head, f.body, f.body_len, &buf, &len) < 0)
                        return 71;
                if (frame_write_all(3, buf, len) < 0)
                        return 71;
                free(buf);
                frame_done(&f);
        }
}

int main(int argc, char **argv)
{
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
