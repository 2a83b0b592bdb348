/* SPDX-License-Identifier: MIT */
/*
 * Seccomp policy parser (table-driven), the real policies, and what a compiled program
 * does to a process that loads it: allowed, ENOSYS, SIGSYS for [kill] and for x32.
 */
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "common/util.h"
#include "supervisor/seccomp-policy.h"
#include "tests/unit/check.h"

static void test_parser_table(void)
{
        static const struct {
                const char *text;
                int r;
                const char *err; /* substring of the message, for r < 0 */
        } cases[] = {
                {"[allow]\nread\nwrite # frames\n\n[kill]\nptrace\n", 0, NULL},
                {"# only comments\n\n   # and blanks\n", 0, NULL},
                {"[allow]\r\nread\r\n  exit_group\t\n", 0, NULL},
                {"[allow]\nread", 0, NULL},         /* no final newline */
                {"[allow]\nsocketcall\n", 0, NULL}, /* exists, not on x86_64: accepted, no rule */
                {"[kill]\nptrace\n[allow]\nread\n[kill]\nbpf\n", 0, NULL}, /* sections reopen */
                {"[allow]\nread\nfrobnicate\n", -EINVAL,
                 "t.policy:3: unknown syscall 'frobnicate'"},
                {"[deny]\nread\n", -EINVAL, "t.policy:1: unknown section '[deny]'"},
                {"[allow\nread\n", -EINVAL, "t.policy:1: unknown section"},
                {"read\n[allow]\n", -EINVAL, "t.policy:1: 'read' is outside a section"},
                {"[allow]\nread\nwrite\nread\n", -EINVAL,
                 "t.policy:4: 'read' already listed at line 2"},
                {"[allow]\nptrace\n[kill]\nptrace\n", -EINVAL,
                 "t.policy:4: 'ptrace' already listed at line 2"},
                {"[allow]\nre ad\n", -EINVAL, "t.policy:2: unknown syscall 're'"},
                /* argument comparisons */
                {"[allow]\nsocket a0 == AF_UNIX\n[kill]\nsocket a0 != AF_UNIX\n", 0, NULL},
                {"[kill]\nclone a0 & CLONE_NEWUSER\nclone a0 & 0x20000\n", 0, NULL},
                {"[allow]\nmmap a2 == 3 a3 == 0x22\n", 0, NULL},
                {"[allow]\nsocket a0 == AF_UNIX\nsocket\n", -EINVAL,
                 "t.policy:3: 'socket' already listed at line 2"},
                {"[allow]\nsocket\n[kill]\nsocket a0 != 1\n", -EINVAL,
                 "t.policy:4: 'socket' already listed at line 2"},
                {"[allow]\nsocket a6 == 1\n", -EINVAL, "t.policy:2: 'a6' is not an argument"},
                {"[allow]\nsocket a0 < 1\n", -EINVAL, "t.policy:2: unknown comparison '<'"},
                {"[allow]\nsocket a0 == AF_FOO\n", -EINVAL, "t.policy:2: bad value 'AF_FOO'"},
                {"[allow]\nsocket a0 ==\n", -EINVAL, "t.policy:2: bad value"},
                {"[allow]\nsocket a0 == 0x100000000\n", -EINVAL, "t.policy:2: bad value"},
                {"[allow]\nsocket a0 & 0\n", -EINVAL, "t.policy:2: bad value '0'"},
                {"[allow]\nsocket a0 == -1\n", -EINVAL, "t.policy:2: bad value '-1'"},
                {"[allow]\nmmap a0 == 1 a1 == 1 a2 == 1 a3 == 1\n", -EINVAL,
                 "t.policy:2: more than 3 comparisons"},
                {"[allow]\nREAD\n", -EINVAL, "t.policy:2: not a syscall name"},
                /* deny-lists: [default allow], [errno E] */
                {"[default allow]\n[errno EPERM]\nbpf\nclone a0 & CLONE_NEWUSER\n"
                 "[errno ENOSYS]\nclone3\n[kill]\nptrace\n",
                 0, NULL},
                {"# a deny-list\n\n[default allow] # comment\n[errno EPERM]\nbpf\n", 0, NULL},
                {"[allow]\nread\n[errno EPERM]\nbpf\n[errno EACCES]\nmount\n", 0, NULL},
                {"[default allow]\n[errno EAFNOSUPPORT]\nsocket a0 == AF_VSOCK\n"
                 "[errno EPERM]\nioctl a1 == TIOCSTI\nioctl a1 == TIOCLINUX\n",
                 0, NULL},
                {"[errno EFOO]\nbpf\n", -EINVAL, "t.policy:1: unknown errno 'EFOO'"},
                {"[errno]\nbpf\n", -EINVAL, "t.policy:1: unknown section '[errno]'"},
                {"[errno EPERM\nbpf\n", -EINVAL, "t.policy:1: unknown section"},
                {"[default deny]\n", -EINVAL, "t.policy:1: unknown section '[default deny]'"},
                {"[allow]\nread\n[default allow]\n", -EINVAL,
                 "t.policy:3: [default allow] must come before every section"},
                {"[default allow]\n[default allow]\n", -EINVAL,
                 "t.policy:2: [default allow] already given at line 1"},
                {"[default allow]\nbpf\n", -EINVAL, "t.policy:2: 'bpf' is outside a section"},
                {"[default allow]\n[allow]\nread\n", -EINVAL,
                 "t.policy:3: 'read' is allowed by [default allow] already"},
                {"[errno ENOSYS]\nbpf\n", -EINVAL,
                 "t.policy:2: 'bpf' fails with ENOSYS by default already"},
                {"[default allow]\n[errno EPERM]\nbpf\n[kill]\nbpf\n", -EINVAL,
                 "t.policy:5: 'bpf' already listed at line 3"},
                /* masked comparisons; one comparison an argument */
                {"[kill]\npersonality a0 & 0x80040000 == 0x40000\n", 0, NULL},
                {"[kill]\nmmap a2 & 4 == 4 a3 & 0x20 == 0\n", 0, NULL},
                {"[kill]\npersonality a0 & 0xff == 0x100\n", -EINVAL,
                 "t.policy:2: bad value '0x100' (its bits must be in the mask)"},
                {"[kill]\npersonality a0 & 0xff ==\n", -EINVAL, "t.policy:2: bad value"},
                {"[kill]\npersonality a0 != 0 a0 != 8\n", -EINVAL,
                 "t.policy:2: a0 is compared twice"},
                {"[allow]\nread;\n", -EINVAL, "t.policy:2: not a syscall name"},
                {"[allow]\n\0read\n", -EINVAL, "t.policy:2: NUL byte"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                ScpProgram *p = NULL;
                char err[256] = "";
                size_t len = strlen(cases[i].text);
                if (i == ELEMENTSOF(cases) - 1)
                        len = 14; /* the NUL case: its text has a NUL in the middle */
                int r = scp_compile_text(cases[i].text, len, "t.policy", &p, err, sizeof(err));
                if (r != cases[i].r || (r < 0 && !strstr(err, cases[i].err))) {
                        fprintf(stderr, "case %zu: r=%d (want %d) err=\"%s\" (want \"%s\")\n", i, r,
                                cases[i].r, err, strempty(cases[i].err));
                        check_failures++;
                }
                CHECK((r == 0) == (p != NULL));
                scp_free(p);
        }
}

static ScpProgram *compile_real(const char *name)
{
        char path[4096], err[512] = "";
        const char *src = getenv("POME_SOURCE_DIR") ? getenv("POME_SOURCE_DIR") : POME_SOURCE_DIR;
        snprintf(path, sizeof(path), "%s/policies/%s", src, name);
        ScpProgram *p = NULL;
        int r = scp_compile(path, &p, err, sizeof(err));
        if (r < 0)
                fprintf(stderr, "%s: %s\n", path, err);
        CHECK_OK(r);
        return p;
}

static void test_real_policies(void)
{
        ScpProgram *s1 = compile_real("pod-stage1.policy");
        ScpProgram *s2 = compile_real("pod-stage2.policy");
        if (s1 && s2) {
                size_t n1, n2;
                const void *d1 = scp_data(s1, &n1);
                (void)scp_data(s2, &n2);
                CHECK(n1 > 0 && n1 % sizeof(struct sock_filter) == 0);
                CHECK(n1 / sizeof(struct sock_filter) == scp_program(s1)->len);
                CHECK(scp_program(s1)->filter == d1);
                CHECK(n2 > 0 && n2 / sizeof(struct sock_filter) == scp_program(s2)->len);
                fprintf(stderr, "info: stage 1 = %u BPF instructions, stage 2 = %u\n",
                        scp_program(s1)->len, scp_program(s2)->len);
        }
        scp_free(s1);
        scp_free(s2);

        char err[256] = "";
        ScpProgram *p = NULL;
        CHECK(scp_compile("/nonexistent/x.policy", &p, err, sizeof(err)) == -ENOENT);
        CHECK(strstr(err, "/nonexistent/x.policy") != NULL);
        CHECK(p == NULL);
}

/*
 * Loads prog in a forked child (after PR_SET_NO_NEW_PRIVS) and runs one raw syscall.
 * Returns the wait status; the child exits 0 when the syscall succeeded, else with its
 * errno (38: ENOSYS, 1: EPERM…). Only raw syscalls after the filter: no sanitizer
 * runtime, no stdio.
 */
static int run_filtered_args(const ScpProgram *prog, long nr, long a0, long a1, long a2)
{
        pid_t pid = fork();
        if (pid == 0) {
                if (syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
                    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, scp_program(prog)) < 0)
                        syscall(SYS_exit_group, 2);
                long r = syscall(nr, a0, a1, a2, 0, 0, 0);
                syscall(SYS_exit_group, r >= 0 ? 0 : errno);
        }
        int status = -1;
        CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
        return status;
}

static int run_filtered(const ScpProgram *prog, long nr)
{
        return run_filtered_args(prog, nr, 0, 0, 0);
}

static bool killed_by_sigsys(int status)
{
        return WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS;
}

static void test_behaviour(void)
{
        static const char text[] = "[allow]\nexit_group\ngetpid\n[kill]\nptrace\n";
        ScpProgram *p = NULL;
        char err[256];
        CHECK_OK(scp_compile_text(text, strlen(text), "behaviour", &p, err, sizeof(err)));
        if (!p)
                return;
        int st = run_filtered(p, SYS_getpid);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0); /* allowed */
        st = run_filtered(p, SYS_getppid);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 38); /* not listed: ENOSYS */
        st = run_filtered(p, SYS_ptrace);
        CHECK(killed_by_sigsys(st)); /* [kill] */
        st = run_filtered(p, 0x40000000 | SYS_getpid);
        CHECK(killed_by_sigsys(st)); /* x32 ABI: even an allowed number */
        scp_free(p);

        /* The real stage 2: no new socket, no open (ENOSYS), exec kills. */
        ScpProgram *s2 = compile_real("pod-stage2.policy");
        if (!s2)
                return;
        st = run_filtered_args(s2, SYS_socket, AF_UNIX, SOCK_DGRAM, 0);
        CHECK(killed_by_sigsys(st)); /* no socket at all once serving */
        st = run_filtered(s2, SYS_openat);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 38);
        st = run_filtered(s2, SYS_execve);
        CHECK(killed_by_sigsys(st));
        st = run_filtered(s2, SYS_ptrace);
        CHECK(killed_by_sigsys(st));
        st = run_filtered(s2, SYS_getpid);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        /* rt_sigaction: SIGSYS traps (upper bits cannot hide it), others get ENOSYS */
        st = run_filtered_args(s2, SYS_rt_sigaction, SIGSYS, 0, 0);
        CHECK(killed_by_sigsys(st));
        st = run_filtered_args(s2, SYS_rt_sigaction, (long)(0x100000000L | SIGSYS), 0, 0);
        CHECK(killed_by_sigsys(st));
        st = run_filtered_args(s2, SYS_rt_sigaction, SIGUSR1, 0, 0);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 38);
        /* clone: a namespace flag traps, a plain fork gets ENOSYS */
        st = run_filtered_args(s2, SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0);
        CHECK(killed_by_sigsys(st));
        st = run_filtered_args(s2, SYS_clone, SIGCHLD, 0, 0);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 38);
        scp_free(s2);

        /* The real stage 1: AF_UNIX sockets only, and the SIGSYS handler may be set. */
        ScpProgram *s1 = compile_real("pod-stage1.policy");
        if (!s1)
                return;
        st = run_filtered_args(s1, SYS_socket, AF_UNIX, SOCK_DGRAM, 0);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        st = run_filtered_args(s1, SYS_socket, (long)(0x100000000L | AF_UNIX), SOCK_DGRAM, 0);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0); /* the kernel reads an int: AF_UNIX */
        st = run_filtered_args(s1, SYS_socket, AF_INET, SOCK_STREAM, 0);
        CHECK(killed_by_sigsys(st));
        st = run_filtered_args(s1, SYS_socket, AF_NETLINK, SOCK_RAW, 0);
        CHECK(killed_by_sigsys(st));
        st = run_filtered_args(s1, SYS_clone, CLONE_NEWNET | SIGCHLD, 0, 0);
        CHECK(killed_by_sigsys(st));
        st = run_filtered(s1, SYS_unshare);
        CHECK(killed_by_sigsys(st));
        st = run_filtered(s1, SYS_clone3);
        CHECK(WIFEXITED(st) &&
              WEXITSTATUS(st) == 38); /* flags unreadable: ENOSYS, libc falls back */
        scp_free(s1);

        /* syscall names for SIGSYS reports */
        char name[64];
        CHECK(scp_syscall_name(0, SYS_ptrace, name, sizeof(name)) == 0 && streq(name, "ptrace"));
        CHECK(scp_syscall_name(0xC000003E, SYS_mount, name, sizeof(name)) == 0 &&
              streq(name, "mount"));
        CHECK(scp_syscall_name(0, 99999, name, sizeof(name)) == -ENOENT);
}

static bool exited_with(int status, int code)
{
        return WIFEXITED(status) && WEXITSTATUS(status) == code;
}

/* [default allow] with [errno E] sections, and the real agent policy. */
static void test_deny_list(void)
{
        static const char text[] = "[default allow]\n"
                                   "[errno EPERM]\ngetppid\n"
                                   "personality a0 & 0x80040000 == 0x40000\n"
                                   "[errno EACCES]\ngetuid\n"
                                   "[kill]\nptrace\n";
        ScpProgram *p = NULL;
        char err[256];
        CHECK_OK(scp_compile_text(text, strlen(text), "deny", &p, err, sizeof(err)));
        if (!p)
                return;
        CHECK(exited_with(run_filtered(p, SYS_getpid), 0));  /* not listed: allowed */
        CHECK(exited_with(run_filtered(p, SYS_getpgrp), 0)); /* not listed: allowed */
        CHECK(exited_with(run_filtered(p, SYS_getppid), EPERM));
        CHECK(exited_with(run_filtered(p, SYS_getuid), EACCES));
        CHECK(killed_by_sigsys(run_filtered(p, SYS_ptrace)));
        /* x32 and foreign architectures still kill under a default of allow */
        CHECK(killed_by_sigsys(run_filtered(p, 0x40000000 | SYS_getpid)));
        /* a masked comparison: the flag without bit 31, not the query */
        CHECK(exited_with(run_filtered_args(p, SYS_personality, 0x40000, 0, 0), EPERM));
        CHECK(exited_with(run_filtered_args(p, SYS_personality, 0xffffffffL, 0, 0), 0));
        CHECK(exited_with(run_filtered_args(p, SYS_personality, 0, 0, 0), 0));
        scp_free(p);

        ScpProgram *a = compile_real("agent.policy");
        if (!a)
                return;
        fprintf(stderr, "info: agent.policy = %u BPF instructions\n", scp_program(a)->len);
        static const struct {
                const char *what;
                long nr, a0, a1, a2;
                int want; /* exit code: 0 allowed, else the errno; -1: SIGSYS */
        } cases[] = {
                {"getpid", SYS_getpid, 0, 0, 0, 0},
                {"fork by clone", SYS_clone, SIGCHLD, 0, 0, 0},
                {"clone3", SYS_clone3, 0, 0, 0, ENOSYS},
                {"clone CLONE_NEWUSER", SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, EPERM},
                {"clone CLONE_NEWNET", SYS_clone, CLONE_NEWNET | SIGCHLD, 0, 0, EPERM},
                {"unshare CLONE_NEWUSER", SYS_unshare, CLONE_NEWUSER, 0, 0, EPERM},
                {"unshare CLONE_NEWNS", SYS_unshare, CLONE_NEWNS, 0, 0, EPERM},
                {"unshare CLONE_FILES", SYS_unshare, CLONE_FILES, 0, 0, 0},
                {"setns", SYS_setns, -1, 0, 0, EPERM},
                {"mount", SYS_mount, 0, 0, 0, EPERM},
                {"umount2", SYS_umount2, 0, 0, 0, EPERM},
                {"open_tree", SYS_open_tree, -1, 0, 0, EPERM},
                {"ptrace", SYS_ptrace, 0, 0, 0, EPERM},
                {"process_vm_readv", SYS_process_vm_readv, 1, 0, 0, EPERM},
                {"bpf", SYS_bpf, 0, 0, 0, EPERM},
                {"perf_event_open", SYS_perf_event_open, 0, 0, 0, EPERM},
                {"userfaultfd", SYS_userfaultfd, 0, 0, 0, EPERM},
                {"io_uring_setup", SYS_io_uring_setup, 8, 0, 0, EPERM},
                {"keyctl", SYS_keyctl, 0, 0, 0, EPERM},
                {"init_module", SYS_init_module, 0, 0, 0, EPERM},
                {"kexec_load", SYS_kexec_load, 0, 0, 0, EPERM},
                {"reboot", SYS_reboot, 0, 0, 0, EPERM},
                {"syslog", SYS_syslog, 3, 0, 0, EPERM},
                {"settimeofday", SYS_settimeofday, 0, 0, 0, EPERM},
                {"open_by_handle_at", SYS_open_by_handle_at, -1, 0, 0, EPERM},
                {"personality ADDR_NO_RANDOMIZE", SYS_personality, 0x0040000, 0, 0, EPERM},
                {"personality query", SYS_personality, 0xffffffffL, 0, 0, 0},
                {"ioctl TIOCSTI", SYS_ioctl, 0, 0x5412, 0, EPERM},
                {"socket AF_VSOCK", SYS_socket, 40, SOCK_STREAM, 0, EAFNOSUPPORT},
                {"socket AF_INET", SYS_socket, AF_INET, SOCK_STREAM, 0, 0},
                {"x32 getpid", 0x40000000 | SYS_getpid, 0, 0, 0, -1},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int st = run_filtered_args(a, cases[i].nr, cases[i].a0, cases[i].a1, cases[i].a2);
                bool ok = cases[i].want < 0 ? killed_by_sigsys(st) : exited_with(st, cases[i].want);
                if (!ok) {
                        fprintf(stderr, "agent.policy, %s: wait status 0x%x, want %d\n",
                                cases[i].what, st, cases[i].want);
                        check_failures++;
                }
        }
        scp_free(a);
}

int main(void)
{
        test_parser_table();
        test_real_policies();
        test_behaviour();
        test_deny_list();
        return check_finish();
}
