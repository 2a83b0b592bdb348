/* SPDX-License-Identifier: MIT */
/*
 * The agent pod for real (supervisor/agentpod.c): real namespaces, mounts, listeners and the real
 * policies/agent.policy, with the host's own bash, node, python3 and curl as agents. Each
 * agent runs a script of checks from inside its pod and prints "ok <name>" or
 * "FAIL <name>"; what must hold on the host (no write reached it, no process is left, the
 * cgroup is empty) is checked from outside. As root it runs the root mode (a uid of its
 * own, an idmapped working directory), then again as nobody through a forked child (the
 * user namespace mode).
 *
 *   test-agentpod              the tests (root; exit 77 otherwise)
 *   test-agentpod bench [N]    median start cost over N runs (default 50) of /bin/true in
 *                              an agent pod vs a plain fork/exec, printed as "info:"
 */
#include <dirent.h>
#include <stdarg.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "supervisor/agentpod.h"
#include "common/util.h"
#include "supervisor/seccomp-policy.h"
#include "tests/unit/check.h"

static ScpProgram *policy;
static char base[] = "/var/tmp/pome-agentpod-XXXXXX"; /* on the host's disk, not /tmp */
static char tmpbase[] = "/tmp/pome-agentpod-XXXXXX";
static char mark[64];
static uid_t agent_uid;

#define PORT_A 7071
#define PORT_B 8080

/* snprintf that fails the test on truncation (and keeps -Wformat-truncation quiet). */
static void fmt(char *buf, size_t len, const char *f, ...) _printf_(3, 4);
static void fmt(char *buf, size_t len, const char *f, ...)
{
        va_list ap;
        va_start(ap, f);
        int n = vsnprintf(buf, len, f, ap);
        va_end(ap);
        CHECK(n >= 0 && (size_t)n < len);
}

static uint64_t now_us(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void write_file(const char *path, const char *text)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        CHECK(fd >= 0);
        if (fd < 0)
                return;
        CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
        close(fd);
}

/* The file's contents into buf (NUL-terminated), or "" when it cannot be read. */
static const char *read_file(const char *path, char *buf, size_t len)
{
        buf[0] = 0;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return buf;
        ssize_t k = read(fd, buf, len - 1);
        buf[k > 0 ? k : 0] = 0;
        close(fd);
        return buf;
}

static void make_dir(const char *p)
{
        CHECK(mkdir(p, 0755) == 0 || errno == EEXIST);
}

/* Whether a process of the host has marker in its command line. */
static bool host_has_process(const char *marker)
{
        DIR *d = opendir("/proc");
        if (!d)
                return false;
        bool found = false;
        struct dirent *e;
        while (!found && (e = readdir(d))) {
                if (e->d_name[0] < '0' || e->d_name[0] > '9')
                        continue;
                char path[300], buf[512];
                fmt(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
                int fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                ssize_t k = read(fd, buf, sizeof(buf) - 1);
                close(fd);
                for (ssize_t i = 0; i < k; i++)
                        if (!buf[i])
                                buf[i] = ' ';
                buf[k > 0 ? k : 0] = 0;
                found = strstr(buf, marker) != NULL;
        }
        closedir(d);
        return found;
}

/* One connection on a listener: an HTTP reply to "GET …", "yo\n" to anything else. */
static void serve_one(int lfd)
{
        int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0)
                return;
        char buf[4096];
        struct pollfd p = {.fd = c, .events = POLLIN};
        ssize_t k = poll(&p, 1, 5000) == 1 ? read(c, buf, sizeof(buf) - 1) : -1;
        static const char http[] = "HTTP/1.1 200 OK\r\nContent-Length: 12\r\nConnection: close"
                                   "\r\n\r\nhello-agent\n";
        if (k > 4 && memcmp(buf, "GET ", 4) == 0)
                (void)!write(c, http, sizeof(http) - 1);
        else
                (void)!write(c, "yo\n", 3);
        close(c);
}

typedef struct Run {
        int r; /* agent_pod_start's */
        char err[512];
        int code;   /* waitid si_code of the init */
        int status; /* its si_status */
        char out[1 << 16];
        pid_t pid;
        uint64_t start_us; /* agent_pod_start's own time */
} Run;

/*
 * Starts the pod, serves its listeners until the init exits (at most 60 s, then SIGKILL),
 * and collects stdout+stderr. stdout_fd/stderr_fd of s are set here unless already set.
 */
static void run_pod(AgentPodSpec *s, Run *run)
{
        int out = memfd_create("agent-out", MFD_CLOEXEC);
        CHECK(out >= 0);
        if (s->stdout_fd < 0)
                s->stdout_fd = out;
        if (s->stderr_fd < 0)
                s->stderr_fd = out;
        int pidfd = -1, lfds[AGENT_POD_LISTEN_MAX];
        uint64_t t0 = now_us();
        run->r = agent_pod_start(s, &run->pid, &pidfd, lfds, run->err, sizeof(run->err));
        run->start_us = now_us() - t0;
        if (run->r < 0) {
                close(out);
                return;
        }
        uint64_t deadline = now_us() + 60 * 1000000u;
        for (;;) {
                struct pollfd p[1 + AGENT_POD_LISTEN_MAX];
                p[0] = (struct pollfd){.fd = pidfd, .events = POLLIN};
                for (size_t i = 0; i < s->n_listen; i++)
                        p[1 + i] = (struct pollfd){.fd = lfds[i], .events = POLLIN};
                int n = poll(p, 1 + s->n_listen, 1000);
                if (n > 0 && (p[0].revents & POLLIN))
                        break;
                for (size_t i = 0; n > 0 && i < s->n_listen; i++)
                        if (p[1 + i].revents & POLLIN)
                                serve_one(lfds[i]);
                if (now_us() > deadline) {
                        fprintf(stderr, "pod %d still running after 60 s: killed\n", run->pid);
                        check_failures++;
                        syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
                }
        }
        siginfo_t si = {};
        CHECK(waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED) == 0);
        run->code = si.si_code;
        run->status = si.si_status;
        for (size_t i = 0; i < s->n_listen; i++)
                close(lfds[i]);
        close(pidfd);
        ssize_t k = pread(out, run->out, sizeof(run->out) - 1, 0);
        run->out[k > 0 ? k : 0] = 0;
        close(out);
}

/* waitid on pidfd within 20 s; past that the pod is killed and the check fails. */
static siginfo_t wait_pod(int pidfd, const char *what)
{
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        if (poll(&p, 1, 20000) != 1) {
                fprintf(stderr, "%s: the pod did not exit within 20 s: killed\n", what);
                check_failures++;
                syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
        }
        siginfo_t si = {};
        CHECK(waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED) == 0);
        return si;
}

/* Every "ok NAME" of names is in the output, and no "FAIL". */
static void expect_oks(const Run *run, const char *const *names, const char *what)
{
        bool bad = run->r < 0 || strstr(run->out, "FAIL ") != NULL;
        for (const char *const *n = names; *n; n++) {
                char line[128];
                fmt(line, sizeof(line), "ok %s\n", *n);
                if (!strstr(run->out, line)) {
                        fprintf(stderr, "%s: no \"ok %s\"\n", what, *n);
                        bad = true;
                }
        }
        if (getenv("AGENTPOD_VERBOSE"))
                fprintf(stderr, "--- %s ---\n%s", what, run->out);
        if (bad) {
                fprintf(stderr, "%s: r=%d err=\"%s\" status=%d\n--- output ---\n%s--- end ---\n",
                        what, run->r, run->err, run->status, run->out);
                check_failures++;
        }
}

static AgentPodSpec spec_for(const char *program, char *const *argv, char *const *envp,
                             const char *cwd)
{
        return (AgentPodSpec){
                .program = program,
                .argv = argv,
                .envp = envp,
                .cwd = cwd,
                .stdin_fd = -1,
                .stdout_fd = -1,
                .stderr_fd = -1,
                .status_fd = -1,
                .uid = agent_uid,
                .gid = agent_uid,
                .filter = policy ? scp_program(policy) : NULL,
        };
}

/* t NAME CMD: "ok NAME" when CMD holds. */
#define SH_PRELUDE                                                                               \
        "t() { if eval \"$2\" >/dev/null 2>&1; then echo \"ok $1\"; else echo \"FAIL $1\"; fi; " \
        "}\n"

/*
 * The main battery, from inside the pod. $W is the working directory (the host's copy
 * holds file.txt "host", sub/gone.txt, .pome/api-key, pome-runs/x), $SD a masked directory,
 * $SF a masked file, $ME the agent's expected uid, $HOSTPID a pid of the host.
 */
static const char battery[] = SH_PRELUDE
        "t root-ro 'awk '\\''$2==\"/\"{print $4}'\\'' /proc/mounts | grep -q ^ro, && ! touch "
        "/usr/pome-x && ! mkdir /etc/pome-x'\n"
        "t tmp-rw 'echo x > /tmp/pod-$MARK && test -f /tmp/pod-$MARK'\n"
        "t tmp-fresh 'test \"$(ls -A /tmp | grep -v ^pod- | tr \"\\n\" \" \")\" = \"$TMPLIST \"'\n"
        "t home 'test \"$HOME\" = /tmp/home && touch $HOME/x && test -O $HOME && test \"$(stat -c "
        "%a $HOME)\" = 700'\n"
        "t mask-dir 'test -d $SD && test -z \"$(ls -A $SD)\" && ! cat $SD/s.txt && ! touch $SD/y'\n"
        "t mask-file 'test -c $SF && ! cat $SF && ! sh -c \"echo x >> $SF\"'\n"
        "t init-hidden 'test \"$(tr -d \"\\0\" < /proc/1/cmdline)\" = pome-agent-init && ! cat "
        "/proc/1/environ && test \"$(cat /proc/1/comm)\" = pome-agent-init'\n"
        "t mask-under-cwd 'test -z \"$(ls -A .pome)\" && ! test -e .pome/api-key && test -z \"$(ls "
        "-A pome-runs)\"'\n"
        "t cwd 'test \"$(pwd)\" = \"$W\"'\n"
        "t cwd-write 'echo agent >> file.txt && echo new > new.txt && mkdir newdir && touch "
        "newdir/f && rm sub/gone.txt && test \"$(cat file.txt)\" = \"$(printf "
        "\"host\\nagent\")\"'\n"
        "t cwd-owner 'test -O file.txt && test -O .'\n"
        "t proc-own 'test $$ = 2 && ! test -e /proc/$HOSTPID && test \"$(ls -d /proc/[0-9]* | wc "
        "-l)\" -lt 8'\n"
        "t net-lo-only 'test \"$(grep -c : /proc/net/dev)\" = 1 && grep -q \" lo:\" "
        "/proc/net/dev'\n"
        "t net-no-route '! (exec 3<>/dev/tcp/1.1.1.1/80)'\n"
        "t listener 'exec 3<>/dev/tcp/127.0.0.1/$PORT && echo hi >&3 && read -r reply <&3 && test "
        "\"$reply\" = yo'\n"
        "t caps '! grep -E \"^Cap(Inh|Prm|Eff|Bnd|Amb):\" /proc/self/status | grep -v "
        "\"0000000000000000$\"'\n"
        "t nnp 'grep -q \"^NoNewPrivs:.1\" /proc/self/status'\n"
        "t seccomp 'test -z \"$WANT_SECCOMP\" || grep -q \"^Seccomp:.2\" /proc/self/status'\n"
        "t uid 'test \"$(id -u)\" = $ME && test \"$(id -g)\" = $ME && test \"$(id -G)\" = $ME'\n"
        "t hostname 'test \"$(cat /proc/sys/kernel/hostname)\" = agent'\n"
        "t no-tty '! (exec 9</dev/tty)'\n"
        "t dev 'test -c /dev/null && echo x > /dev/null && test \"$(head -c 4 /dev/urandom | wc "
        "-c)\" = 4 && test -L /dev/ptmx && touch /dev/shm/x && ! touch /dev/pome-x && test \"$(ls "
        "/dev | tr \"\\n\" \" \")\" = \"fd full null ptmx pts random shm stderr stdin stdout tty "
        "urandom zero \"'\n"
        "t run-empty 'test -d /run && test -z \"$(ls -A /run)\" && ! test -e /run/user'\n"
        "t core 'test \"$(ulimit -c)\" = 0'\n"
        "t pty 'python3 -c \"import os,pty; m,s=pty.openpty(); assert "
        "os.ttyname(s).startswith(\\\"/dev/pts/\\\")\"'\n";

static void test_probe(void)
{
        char why[512];
        int r = agent_pod_probe(why, sizeof(why));
        CHECK(r == (geteuid() == 0 ? 1 : 2));
        if (r == 0)
                fprintf(stderr, "probe: %s\n", why);
}

/* A working directory with the host's files, owned by owner (the directory's owner). */
static void make_workdir(const char *root, uid_t owner, char *ret_w, size_t len)
{
        char p[4096];
        fmt(ret_w, len, "%s/work", root);
        make_dir(ret_w);
        fmt(p, sizeof(p), "%s/file.txt", ret_w);
        write_file(p, "host\n");
        fmt(p, sizeof(p), "%s/sub", ret_w);
        make_dir(p);
        fmt(p, sizeof(p), "%s/sub/gone.txt", ret_w);
        write_file(p, "stays on the host\n");
        fmt(p, sizeof(p), "%s/.pome", ret_w);
        make_dir(p);
        fmt(p, sizeof(p), "%s/.pome/api-key", ret_w);
        write_file(p, "pome_secret\n");
        fmt(p, sizeof(p), "%s/pome-runs", ret_w);
        make_dir(p);
        fmt(p, sizeof(p), "%s/pome-runs/x", ret_w);
        write_file(p, "a run\n");
        fmt(p, sizeof(p), "%s/secret-dir", root);
        make_dir(p);
        fmt(p, sizeof(p), "%s/secret-dir/s.txt", root);
        write_file(p, "secret\n");
        fmt(p, sizeof(p), "%s/secret-file", root);
        write_file(p, "secret\n");
        const char *const paths[] = {"",       "/file.txt",      "/sub",       "/sub/gone.txt",
                                     "/.pome", "/.pome/api-key", "/pome-runs", "/pome-runs/x"};
        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                fmt(p, sizeof(p), "%s%s", ret_w, paths[i]);
                CHECK(chown(p, owner, owner) == 0);
        }
}

/* What the host must still hold after an agent wrote in its overlay. */
static void check_host_untouched(const char *w)
{
        char p[4096], buf[256];
        fmt(p, sizeof(p), "%s/file.txt", w);
        CHECK(streq(read_file(p, buf, sizeof(buf)), "host\n"));
        fmt(p, sizeof(p), "%s/new.txt", w);
        CHECK(access(p, F_OK) < 0 && errno == ENOENT);
        fmt(p, sizeof(p), "%s/newdir", w);
        CHECK(access(p, F_OK) < 0 && errno == ENOENT);
        fmt(p, sizeof(p), "%s/sub/gone.txt", w);
        CHECK(access(p, F_OK) == 0);
        fmt(p, sizeof(p), "/tmp/pod-%s", mark);
        CHECK(access(p, F_OK) < 0 && errno == ENOENT);
}

static void test_battery(const char *root, bool userns)
{
        char w[4096], sd[4096], sf[4096];
        make_workdir(root, userns ? geteuid() : 0, w, sizeof(w));
        fmt(sd, sizeof(sd), "%s/secret-dir", root);
        fmt(sf, sizeof(sf), "%s/secret-file", root);
        char e_w[4200], e_sd[4200], e_sf[4200], e_me[64], e_pid[64], e_mark[96], e_port[32];
        fmt(e_w, sizeof(e_w), "W=%s", w);
        fmt(e_sd, sizeof(e_sd), "SD=%s", sd);
        fmt(e_sf, sizeof(e_sf), "SF=%s", sf);
        fmt(e_me, sizeof(e_me), "ME=%u", userns ? (unsigned)geteuid() : (unsigned)agent_uid);
        fmt(e_pid, sizeof(e_pid), "HOSTPID=%d", (int)getpid());
        fmt(e_mark, sizeof(e_mark), "MARK=%s", mark);
        fmt(e_port, sizeof(e_port), "PORT=%d", PORT_A);
        char *envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin",
                        "HOME=/tmp/home",
                        "LANG=C",
                        "TMPLIST=home",
                        "WANT_SECCOMP=1",
                        e_w,
                        e_sd,
                        e_sf,
                        e_me,
                        e_pid,
                        e_mark,
                        e_port,
                        NULL};
        char *argv[] = {"bash", "-c", (char *)battery, NULL};
        char p1[4200], p2[4200];
        fmt(p1, sizeof(p1), "%s/.pome", w);
        fmt(p2, sizeof(p2), "%s/pome-runs", w);
        const char *hide[] = {sd, sf, p1, p2, "/nonexistent/pome-x", NULL};
        uint16_t ports[] = {PORT_A};
        AgentPodSpec s = spec_for("/bin/bash", argv, envp, w);
        s.hide = hide;
        s.listen = ports;
        s.n_listen = 1;
        static Run run;
        run_pod(&s, &run);
        static const char *const oks[] = {
                "root-ro",   "tmp-rw",      "tmp-fresh",      "home",         "mask-dir",
                "mask-file", "init-hidden", "mask-under-cwd", "cwd",          "cwd-write",
                "cwd-owner", "proc-own",    "net-lo-only",    "net-no-route", "listener",
                "caps",      "nnp",         "seccomp",        "uid",          "hostname",
                "no-tty",    "dev",         "core",           "pty",          NULL};
        expect_oks(&run, oks, userns ? "battery (user namespace)" : "battery (root)");
        CHECK(run.code == CLD_EXITED && run.status == 0);
        check_host_untouched(w);
        fprintf(stderr, "info: %s: agent_pod_start took %.2f ms\n",
                userns ? "user namespace" : "root", run.start_us / 1000.0);
}

/* A setsid + double-forked child outlives its agent on the host? Never. */
static void test_no_leftover(const char *cwd)
{
        char marker[128];
        fmt(marker, sizeof(marker), "pome-agentpod-marker-%s", mark);
        char script[512];
        fmt(script, sizeof(script),
            "( setsid bash -c 'exec -a %s sleep 1000' & ) ; echo started; read x; exit 0", marker);
        char *argv[] = {"bash", "-c", script, NULL};
        char *envp[] = {"PATH=/usr/bin:/bin", NULL};
        int in[2];
        CHECK(pipe2(in, O_CLOEXEC) == 0);
        AgentPodSpec s = spec_for("/bin/bash", argv, envp, cwd);
        s.stdin_fd = in[0];
        pid_t pid;
        int pidfd;
        char err[512];
        int r = agent_pod_start(&s, &pid, &pidfd, NULL, err, sizeof(err));
        close(in[0]);
        CHECK_OK(r);
        if (r < 0) {
                fprintf(stderr, "%s\n", err);
                close(in[1]);
                return;
        }
        bool seen = false;
        for (int i = 0; i < 500 && !seen; i++) {
                seen = host_has_process(marker);
                if (!seen)
                        usleep(10000);
        }
        CHECK(seen);  /* the check below would prove nothing otherwise */
        close(in[1]); /* the agent's read ends: it exits, the init follows */
        siginfo_t si = wait_pod(pidfd, "no leftover");
        CHECK(si.si_code == CLD_EXITED && si.si_status == 0);
        close(pidfd);
        /* the init's exit waits for the namespace's processes (zap_pid_ns_processes) */
        CHECK(!host_has_process(marker));
}

/* SIGTERM to the init reaches the agent (and every process of the pod). */
static void test_sigterm(const char *cwd)
{
        char *argv[] = {"bash", "-c",
                        "trap 'echo got-term; exit 42' TERM; echo ready; "
                        "while :; do sleep 0.05; done",
                        NULL};
        char *envp[] = {"PATH=/usr/bin:/bin", NULL};
        int out[2];
        CHECK(pipe2(out, O_CLOEXEC) == 0);
        AgentPodSpec s = spec_for("/bin/bash", argv, envp, cwd);
        s.stdout_fd = out[1];
        pid_t pid;
        int pidfd;
        char err[512], buf[256] = "";
        int r = agent_pod_start(&s, &pid, &pidfd, NULL, err, sizeof(err));
        close(out[1]);
        CHECK_OK(r);
        if (r < 0) {
                fprintf(stderr, "%s\n", err);
                close(out[0]);
                return;
        }
        size_t n = 0;
        while (n < sizeof(buf) - 1 && !strstr(buf, "ready\n")) {
                ssize_t k = read(out[0], buf + n, sizeof(buf) - 1 - n);
                if (k <= 0)
                        break;
                buf[n += (size_t)k] = 0;
        }
        CHECK(strstr(buf, "ready\n") != NULL);
        CHECK(kill(pid, SIGTERM) == 0);
        siginfo_t si = wait_pod(pidfd, "SIGTERM");
        CHECK(si.si_code == CLD_EXITED && si.si_status == 42);
        ssize_t k = read(out[0], buf + n, sizeof(buf) - 1 - n);
        buf[n + (size_t)(k > 0 ? k : 0)] = 0;
        CHECK(strstr(buf, "got-term\n") != NULL);
        close(out[0]);
        close(pidfd);
}

static void test_exit_status(const char *cwd)
{
        static const struct {
                const char *script;
                int status;
        } cases[] = {
                {"exit 0", 0},
                {"exit 7", 7},
                {"kill -KILL $$", 128 + SIGKILL},
                {"kill -SEGV $$", 128 + SIGSEGV},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *argv[] = {"bash", "-c", (char *)cases[i].script, NULL};
                char *envp[] = {NULL};
                AgentPodSpec s = spec_for("/bin/bash", argv, envp, cwd);
                static Run run;
                run_pod(&s, &run);
                CHECK_OK(run.r);
                if (run.code != CLD_EXITED || run.status != cases[i].status) {
                        fprintf(stderr, "exit status of \"%s\": code %d status %d, want %d\n",
                                cases[i].script, run.code, run.status, cases[i].status);
                        check_failures++;
                }
        }
}

/* No working directory given: pome's, by its canonical path. */
static void test_null_cwd(const char *cwd)
{
        char here[4096];
        CHECK(getcwd(here, sizeof(here)) != NULL);
        CHECK(chdir(cwd) == 0);
        char *argv[] = {"bash", "-c", "pwd; touch x-null-cwd", NULL};
        char *envp[] = {"PATH=/usr/bin:/bin", NULL};
        AgentPodSpec s = spec_for("/bin/bash", argv, envp, NULL);
        static Run run;
        run_pod(&s, &run);
        CHECK(chdir(here) == 0);
        char want[4200];
        fmt(want, sizeof(want), "%s\n", cwd);
        CHECK_OK(run.r);
        CHECK(run.code == CLD_EXITED && run.status == 0 && streq(run.out, want));
        fmt(want, sizeof(want), "%s/x-null-cwd", cwd);
        CHECK(access(want, F_OK) < 0); /* in the overlay only */
}

/* A child that is not reaped (or a pod left behind) after a failed start fails this. */
static void check_no_children(void)
{
        siginfo_t si = {};
        int r = waitid(P_ALL, 0, &si, WEXITED | WNOHANG);
        CHECK(r < 0 ? errno == ECHILD : si.si_pid == 0);
}

static void test_failures(const char *cwd)
{
        char *argv[] = {"x", NULL};
        char *envp[] = {NULL};
        char err[512];
        pid_t pid = 0;
        int pidfd = -1, lfds[2];

        /* a child-side step: the exec */
        AgentPodSpec s = spec_for("/nonexistent/agent", argv, envp, cwd);
        int r = agent_pod_start(&s, &pid, &pidfd, NULL, err, sizeof(err));
        CHECK(r == -ENOENT);
        CHECK(strstr(err, "cannot run /nonexistent/agent: ENOENT") != NULL);
        check_no_children();

        /* a child-side step: the second listener on the same port */
        uint16_t ports[] = {PORT_B, PORT_B};
        s = spec_for("/bin/true", argv, envp, cwd);
        s.listen = ports;
        s.n_listen = 2;
        r = agent_pod_start(&s, &pid, &pidfd, lfds, err, sizeof(err));
        CHECK(r == -EADDRINUSE);
        CHECK(strstr(err, "listen on 127.0.0.1:8080: EADDRINUSE") != NULL);
        check_no_children();

        /* a seccomp filter the kernel refuses: the step that loads it */
        struct sock_filter bad[] = {BPF_STMT(BPF_RET | BPF_K, 0xdeadbeef), {0xffff, 0, 0, 0}};
        struct sock_fprog bad_prog = {.len = 2, .filter = bad};
        s = spec_for("/bin/true", argv, envp, cwd);
        s.filter = &bad_prog;
        r = agent_pod_start(&s, &pid, &pidfd, NULL, err, sizeof(err));
        CHECK(r == -EINVAL);
        CHECK(strstr(err, "load the seccomp filter: EINVAL") != NULL);
        check_no_children();

        /* the parent's checks */
        s = spec_for("/bin/true", argv, envp, "/nonexistent/dir");
        r = agent_pod_start(&s, &pid, &pidfd, NULL, err, sizeof(err));
        CHECK(r == -ENOENT && strstr(err, "/nonexistent/dir") != NULL);
        s = spec_for("bin/true", argv, envp, cwd);
        CHECK(agent_pod_start(&s, &pid, &pidfd, NULL, err, sizeof(err)) == -EINVAL);
        s = spec_for("/bin/true", argv, envp, "/");
        CHECK(agent_pod_start(&s, &pid, &pidfd, NULL, err, sizeof(err)) == -EINVAL);
        const char *hide_root[] = {"/", NULL};
        s = spec_for("/bin/true", argv, envp, cwd);
        s.hide = hide_root;
        CHECK(agent_pod_start(&s, &pid, &pidfd, NULL, err, sizeof(err)) == -EINVAL);
        if (geteuid() == 0) {
                s = spec_for("/bin/true", argv, envp, cwd);
                s.uid = 0;
                CHECK(agent_pod_start(&s, &pid, &pidfd, NULL, err, sizeof(err)) == -EINVAL);
        }
        check_no_children();
}

/* Node, Python, bash and curl under policies/agent.policy; what it refuses, refused. */
static void test_runtimes(const char *cwd)
{
        static const char script[] = SH_PRELUDE
                "t bash-pipeline 'test \"$(echo a b c | tr \" \" \"\\n\" | sort -r | head -1)\" = "
                "c'\n"
                "t bash-subshell 'test \"$( (cd /tmp && pwd) )\" = /tmp && (exit 3); test $? = 3'\n"
                "t node 'test \"$(node -e \"console.log(6*7)\")\" = 42'\n"
                "t node-fs-child 'node -e \"const fs=require(\\\"fs\\\"); "
                "fs.writeFileSync(\\\"/tmp/n\\\",\\\"x\\\"); "
                "require(\\\"child_process\\\").execSync(\\\"true\\\"); "
                "fs.promises.readFile(\\\"/tmp/n\\\").then(b=>process.exit(b==\\\"x\\\"?0:1))\"'\n"
                "t node-http 'node -e \"require(\\\"http\\\").get(\\\"http://127.0.0.1:$PORT/\\\", "
                "r => { let d=\\\"\\\"; "
                "r.on(\\\"data\\\", c => d+=c); r.on(\\\"end\\\", () => "
                "process.exit(d==\\\"hello-agent\\\\n\\\"?0:1)); })\"'\n"
                "t python 'test \"$(python3 -c \"import threading,subprocess; "
                "t=threading.Thread(target=lambda:None); t.start(); t.join(); "
                "print(subprocess.run([\\\"echo\\\",\\\"py\\\"],capture_output=True).stdout.decode("
                ").strip())\")\" = py'\n"
                "t curl 'test \"$(curl -sS --max-time 10 http://127.0.0.1:$PORT/)\" = "
                "hello-agent'\n"
                "t refused 'test \"$(python3 -c \"\n"
                "import ctypes\n"
                "libc = ctypes.CDLL(None, use_errno=True)\n"
                "def e(nr, *a):\n"
                "    return 0 if libc.syscall(nr, *a) >= 0 else ctypes.get_errno()\n"
                "print(e(425, 8, 0), e(272, 0x10000000), e(272, 0x40000000), e(56, 0x10000000|17, "
                "0, 0, 0, 0), "
                "e(165, 0, 0, 0, 0, 0), e(101, 0, 0, 0, 0), e(321, 0, 0, 0), e(323, 0), e(135, "
                "0x0040000), "
                "e(41, 40, 1, 0), e(435, 0, 0))\n"
                "\")\" = \"1 1 1 1 1 1 1 1 1 97 38\"'\n"
                "t unshare-cmd '! unshare -U true && ! unshare -n true'\n"
                "t personality-query 'python3 -c \"import ctypes; l=ctypes.CDLL(None); assert "
                "l.personality(0xffffffff) >= 0\"'\n";
        char e_port[32];
        fmt(e_port, sizeof(e_port), "PORT=%d", PORT_A);
        char *envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp/home", "LANG=C", e_port,
                        NULL};
        char *argv[] = {"bash", "-c", (char *)script, NULL};
        uint16_t ports[] = {PORT_A};
        AgentPodSpec s = spec_for("/bin/bash", argv, envp, cwd);
        s.listen = ports;
        s.n_listen = 1;
        static Run run;
        run_pod(&s, &run);
        static const char *const oks[] = {"bash-pipeline",
                                          "bash-subshell",
                                          "node",
                                          "node-fs-child",
                                          "node-http",
                                          "python",
                                          "curl",
                                          "refused",
                                          "unshare-cmd",
                                          "personality-query",
                                          NULL};
        expect_oks(&run, oks, "runtimes under agent.policy");
}

/* The working directory read-write (root: through the idmapped mount, as its owner). */
static void test_workdir_rw(const char *root)
{
        char w[4096], p[4200], buf[64];
        fmt(w, sizeof(w), "%s/rw", root);
        make_dir(w);
        fmt(p, sizeof(p), "%s/f.txt", w);
        write_file(p, "host\n");
        char *argv[] = {"bash", "-c",
                        "echo agent >> f.txt && echo new > new.txt && test -O f.txt && echo done",
                        NULL};
        char *envp[] = {"PATH=/usr/bin:/bin", NULL};
        AgentPodSpec s = spec_for("/bin/bash", argv, envp, w);
        s.workdir_rw = true;
        static Run run;
        run_pod(&s, &run);
        CHECK_OK(run.r);
        CHECK(run.code == CLD_EXITED && run.status == 0 && strstr(run.out, "done\n"));
        CHECK(streq(read_file(p, buf, sizeof(buf)), "host\nagent\n"));
        fmt(p, sizeof(p), "%s/new.txt", w);
        struct stat st;
        CHECK(stat(p, &st) == 0 && st.st_uid == geteuid() && st.st_gid == getegid());
        if (run.code != CLD_EXITED || run.status != 0)
                fprintf(stderr, "workdir_rw: %s %s\n", run.err, run.out);
}

/* A working directory under the host's /tmp (the pod's /tmp is a fresh tmpfs), with its
 * parent masked: the mask holds the path down to it and nothing else. */
static void test_tmp_workdir(const char *root)
{
        char w[4096], p[4200];
        fmt(w, sizeof(w), "%s/deep/work", root);
        fmt(p, sizeof(p), "%s/deep", root);
        make_dir(p);
        make_dir(w);
        fmt(p, sizeof(p), "%s/deep/sibling", root);
        write_file(p, "hidden\n");
        fmt(p, sizeof(p), "%s/f.txt", w);
        write_file(p, "host\n");
        char parent[4200];
        fmt(parent, sizeof(parent), "%s/deep", root);
        char script[16384];
        fmt(script, sizeof(script),
            SH_PRELUDE
            "t pwd 'test \"$(pwd)\" = %s'\n"
            "t write 'echo a >> f.txt && test \"$(cat f.txt)\" = \"$(printf \"host\\na\")\"'\n"
            "t parent-masked 'test \"$(ls -A %s)\" = work'\n",
            w, parent);
        char *argv[] = {"bash", "-c", script, NULL};
        char *envp[] = {"PATH=/usr/bin:/bin", NULL};
        const char *hide[] = {parent, NULL};
        AgentPodSpec s = spec_for("/bin/bash", argv, envp, w);
        s.hide = hide;
        static Run run;
        run_pod(&s, &run);
        static const char *const oks[] = {"pwd", "write", "parent-masked", NULL};
        expect_oks(&run, oks, "working directory under /tmp");
        char buf[64];
        fmt(p, sizeof(p), "%s/f.txt", w);
        CHECK(streq(read_file(p, buf, sizeof(buf)), "host\n"));
}

/* Forks 30 children that sleep, prints how many forks were refused (EAGAIN), kills them. */
#define PY_FORKS                                       \
        "python3 -c 'import os, signal, time\n"        \
        "kids = []; refused = 0\n"                     \
        "for i in range(30):\n"                        \
        "    try:\n"                                   \
        "        p = os.fork()\n"                      \
        "    except BlockingIOError:\n"                \
        "        refused += 1; continue\n"             \
        "    if p == 0:\n"                             \
        "        time.sleep(10); os._exit(0)\n"        \
        "    kids.append(p)\n"                         \
        "print(refused, flush=True)\n"                 \
        "[os.kill(p, signal.SIGKILL) for p in kids]\n" \
        "[os.waitpid(p, 0) for p in kids]'" /* reaped: a zombie still counts in NPROC */

/* /run is always masked; a working directory under it keeps the path down to it. */
static void test_run_workdir(void)
{
        char top[256], w[300];
        fmt(top, sizeof(top), "/run/pome-agentpod-%s", mark);
        fmt(w, sizeof(w), "%s/w", top);
        if (mkdir(top, 0755) < 0) {
                fprintf(stderr, "info: cannot make %s (%s): not tested\n", top, strerror(errno));
                return;
        }
        make_dir(w);
        char script[2048];
        fmt(script, sizeof(script),
            SH_PRELUDE
            "t pwd 'test \"$(pwd)\" = %s && touch new'\n"
            "t run-only-path 'test \"$(ls -A /run)\" = %s && test \"$(ls -A %s)\" = w'\n",
            w, top + 5, top);
        char *argv[] = {"bash", "-c", script, NULL};
        char *envp[] = {"PATH=/usr/bin:/bin", NULL};
        AgentPodSpec s = spec_for("/bin/bash", argv, envp, w);
        static Run run;
        run_pod(&s, &run);
        static const char *const oks[] = {"pwd", "run-only-path", NULL};
        expect_oks(&run, oks, "working directory under /run");
        CHECK(rmdir(w) == 0 && rmdir(top) == 0); /* nothing was written there */
}

/* rlimits without cgroups: RLIMIT_NPROC (pids_max) and RLIMIT_AS (memory_max). */
static void test_rlimits(const char *cwd)
{
        char *argv[] = {"bash", "-c",
                        PY_FORKS "; python3 -c 'bytearray(400 << 20)' 2>&1 | grep -c MemoryError; "
                                 "exit 0",
                        NULL};
        char *envp[] = {"PATH=/usr/bin:/bin", NULL};
        AgentPodSpec s = spec_for("/bin/bash", argv, envp, cwd);
        s.filter = NULL;
        s.pids_max = 16;
        s.memory_max = 256u << 20;
        static Run run;
        run_pod(&s, &run);
        CHECK_OK(run.r);
        int forks_refused = -1, memerr = -1;
        CHECK(sscanf(run.out, "%d\n%d", &forks_refused, &memerr) == 2);
        fprintf(stderr,
                "info: %s: pids_max 16: %d of 30 forks refused; memory_max 256 MiB: "
                "MemoryError %d\n",
                geteuid() == 0 ? "root" : "user namespace", forks_refused, memerr);
        CHECK(forks_refused > 0 && forks_refused < 30);
        CHECK(memerr == 1);
        if (forks_refused <= 0 || forks_refused >= 30 || memerr != 1)
                fprintf(stderr, "rlimits: %s %s\n", run.err, run.out);
}

/* As root: joining a cgroup given as a cgroup.procs fd (v1 pids here). */
static void test_cgroup(const char *cwd)
{
        char dir[256], procs[300], max[300];
        fmt(dir, sizeof(dir), "/sys/fs/cgroup/pids/pome-agentpod-%d", (int)getpid());
        if (mkdir(dir, 0755) < 0) {
                fprintf(stderr, "info: no writable pids cgroup (%s): cgroup join not tested\n",
                        strerror(errno));
                return;
        }
        fmt(procs, sizeof(procs), "%s/cgroup.procs", dir);
        fmt(max, sizeof(max), "%s/pids.max", dir);
        write_file(max, "12");
        int fd = open(procs, O_WRONLY | O_CLOEXEC);
        CHECK(fd >= 0);
        char script[1024];
        fmt(script, sizeof(script),
            "grep -q pome-agentpod-%d /proc/self/cgroup && echo in-cgroup; " PY_FORKS,
            (int)getpid());
        char *argv[] = {"bash", "-c", script, NULL};
        char *envp[] = {"PATH=/usr/bin:/bin", NULL};
        AgentPodSpec s = spec_for("/bin/bash", argv, envp, cwd);
        s.cgroup_fds = &fd;
        s.n_cgroup_fds = 1;
        s.pids_max = 2; /* ignored: the cgroup limits */
        static Run run;
        run_pod(&s, &run);
        close(fd);
        CHECK_OK(run.r);
        int refused = -1;
        const char *l2 = strstr(run.out, "in-cgroup\n");
        CHECK(l2 && sscanf(l2 + 10, "%d", &refused) == 1 && refused > 0 && refused < 30);
        if (!l2 || refused <= 0)
                fprintf(stderr, "cgroup: %s\n", run.out);
        char buf[64];
        fmt(procs, sizeof(procs), "%s/cgroup.procs", dir);
        CHECK(streq(read_file(procs, buf, sizeof(buf)), "")); /* nothing left in it */
        CHECK(rmdir(dir) == 0);
}

/*
 * A host that refuses the namespaces (here: clone3 refused by a seccomp filter, as a
 * container's profile would): the probe says why, agent_pod_start fails cleanly.
 */
static void test_refused(bool as_nobody)
{
        pid_t pid = fork();
        if (pid == 0) {
                check_failures = 0;
                if (as_nobody && (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                                  setresuid(65534, 65534, 65534) < 0))
                        _exit(99);
                static const char deny[] = "[default allow]\n[errno EPERM]\nclone3\n";
                ScpProgram *p = NULL;
                char err[512];
                if (scp_compile_text(deny, strlen(deny), "deny", &p, err, sizeof(err)) < 0 ||
                    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
                    syscall(SYS_seccomp, 1 /* SECCOMP_SET_MODE_FILTER */, 0, scp_program(p)) < 0)
                        _exit(98);
                char why[512];
                CHECK(agent_pod_probe(why, sizeof(why)) == 0);
                CHECK(strstr(why, as_nobody ? "user namespace" : "even as root") != NULL);
                fprintf(stderr, "info: refused probe (%s): %s\n", as_nobody ? "nobody" : "root",
                        why);
                char *argv[] = {"true", NULL};
                char *envp[] = {NULL};
                AgentPodSpec s = spec_for("/bin/true", argv, envp, base);
                s.filter = NULL;
                pid_t p2;
                int pidfd;
                CHECK(agent_pod_start(&s, &p2, &pidfd, NULL, err, sizeof(err)) == -EPERM);
                CHECK(strstr(err, "clone3 into new namespaces: EPERM") != NULL);
                check_no_children();
                scp_free(p);
                _exit(check_failures ? 1 : 0);
        }
        int st = -1;
        CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);

        /* clone3 unknown (ENOSYS, Docker's answer): clone(2) instead, and the pod runs */
        pid = fork();
        if (pid == 0) {
                check_failures = 0;
                if (as_nobody && (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                                  setresuid(65534, 65534, 65534) < 0))
                        _exit(99);
                static const char enosys[] = "[default allow]\n[errno ENOSYS]\nclone3\n";
                ScpProgram *p = NULL;
                char err[512];
                if (scp_compile_text(enosys, strlen(enosys), "enosys", &p, err, sizeof(err)) < 0 ||
                    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
                    syscall(SYS_seccomp, 1 /* SECCOMP_SET_MODE_FILTER */, 0, scp_program(p)) < 0)
                        _exit(98);
                char why[512];
                CHECK(agent_pod_probe(why, sizeof(why)) == (as_nobody ? 2 : 1));
                char *argv[] = {"bash", "-c", "exit 5", NULL};
                char *envp[] = {NULL};
                AgentPodSpec s = spec_for("/bin/bash", argv, envp, base);
                s.filter = NULL;
                static Run run;
                run_pod(&s, &run);
                CHECK_OK(run.r);
                CHECK(run.code == CLD_EXITED && run.status == 5);
                if (run.r < 0)
                        fprintf(stderr, "clone3 ENOSYS: %s\n", run.err);
                scp_free(p);
                _exit(check_failures ? 1 : 0);
        }
        st = -1;
        CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Without root: the same battery in a user namespace, as nobody (a forked child). */
static void test_userns(void)
{
        char root[4200];
        fmt(root, sizeof(root), "%s/nobody", base);
        make_dir(root);
        CHECK(chown(root, 65534, 65534) == 0);
        /* host processes of the same uid must not count against the pod's RLIMIT_NPROC:
         * since 5.14 it is counted per user namespace (ucounts) */
        pid_t sleepers[20];
        for (size_t i = 0; i < ELEMENTSOF(sleepers); i++) {
                sleepers[i] = fork();
                if (sleepers[i] == 0) {
                        (void)!setresgid(65534, 65534, 65534);
                        (void)!setresuid(65534, 65534, 65534);
                        execl("/bin/sleep", "sleep", "30", NULL);
                        _exit(1);
                }
        }
        pid_t pid = fork();
        if (pid == 0) {
                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                    setresuid(65534, 65534, 65534) < 0)
                        _exit(99);
                /* not dumpable after the uid change: agent_pod_start copes */
                check_failures = 0;
                test_probe();
                test_battery(root, true);
                test_no_leftover(root);
                test_sigterm(root);
                test_exit_status(root);
                test_failures(root);
                test_rlimits(root);
                _exit(check_failures ? 1 : 0);
        }
        int st = -1;
        CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                fprintf(stderr, "the user-namespace run failed (status 0x%x)\n", st);
                check_failures++;
        }
        for (size_t i = 0; i < ELEMENTSOF(sleepers); i++) {
                kill(sleepers[i], SIGKILL);
                waitpid(sleepers[i], NULL, 0);
        }
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

/* Median start-to-exit of /bin/true: agent pod vs fork/exec. */
static int bench(int n)
{
        char *argv[] = {"true", NULL};
        char *envp[] = {NULL};
        uint64_t *pod = calloc((size_t)n, sizeof(uint64_t)), *plain = calloc((size_t)n, 8),
                 *setup = calloc((size_t)n, 8);
        if (!pod || !plain || !setup) {
                free(pod);
                free(plain);
                free(setup);
                return 1;
        }
        const char *hide[] = {"/root", "/home", "/etc/pome", "/var/lib/pome", NULL};
        for (int i = 0; i < n; i++) {
                uint64_t t0 = now_us();
                pid_t p = fork();
                if (p == 0) {
                        execve("/bin/true", argv, envp);
                        _exit(127);
                }
                waitpid(p, NULL, 0);
                plain[i] = now_us() - t0;

                AgentPodSpec s = spec_for("/bin/true", argv, envp, base);
                s.hide = hide;
                pid_t pid;
                int pidfd;
                char err[512];
                t0 = now_us();
                int r = agent_pod_start(&s, &pid, &pidfd, NULL, err, sizeof(err));
                if (r < 0) {
                        fprintf(stderr, "bench: %s\n", err);
                        free(pod);
                        free(plain);
                        free(setup);
                        return 1;
                }
                setup[i] = now_us() - t0;
                siginfo_t si;
                waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED);
                pod[i] = now_us() - t0;
                close(pidfd);
        }
        qsort(pod, (size_t)n, 8, cmp_u64);
        qsort(plain, (size_t)n, 8, cmp_u64);
        qsort(setup, (size_t)n, 8, cmp_u64);
        fprintf(stderr,
                "info: %s, %d runs of /bin/true, medians: fork/exec %.3f ms; agent pod %.3f ms "
                "start to exit (agent_pod_start alone %.3f ms); overhead %.3f ms; p90 pod %.3f "
                "ms\n",
                geteuid() == 0 ? "root" : "user namespace", n, plain[n / 2] / 1000.0,
                pod[n / 2] / 1000.0, setup[n / 2] / 1000.0,
                ((double)pod[n / 2] - (double)plain[n / 2]) / 1000.0, pod[n * 9 / 10] / 1000.0);
        free(pod);
        free(plain);
        free(setup);
        return 0;
}

/* Whether name is an executable of /usr/local/bin, /usr/bin or /bin. */
static bool have(const char *name)
{
        static const char *const dirs[] = {"/usr/local/bin", "/usr/bin", "/bin"};
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                char p[256];
                fmt(p, sizeof(p), "%s/%s", dirs[i], name);
                if (access(p, X_OK) == 0)
                        return true;
        }
        return false;
}

static void cleanup(void)
{
        char cmd[512];
        fmt(cmd, sizeof(cmd), "rm -rf '%s' '%s'", base, tmpbase);
        (void)!system(cmd);
}

int main(int argc, char **argv)
{
        if (geteuid() != 0)
                SKIP("the agent pod tests run as root (root mode), then as nobody (user "
                     "namespace mode) in a forked child");
        if (access("/bin/bash", X_OK) < 0 || !have("python3"))
                SKIP("the agents of these tests are bash and python3 scripts");
        signal(SIGPIPE, SIG_IGN);
        fmt(mark, sizeof(mark), "%d-%ld", (int)getpid(), (long)time(NULL));
        agent_uid = (uid_t)(64000 + getpid() % 1000); /* a uid of its own */
        if (!mkdtemp(base) || !mkdtemp(tmpbase))
                SKIP("mkdtemp: %s", strerror(errno));
        atexit(cleanup);
        CHECK(chmod(base, 0755) == 0 && chmod(tmpbase, 0755) == 0);

        char err[512], path[4096];
        const char *src = getenv("POME_SOURCE_DIR") ? getenv("POME_SOURCE_DIR") : POME_SOURCE_DIR;
        fmt(path, sizeof(path), "%s/policies/agent.policy", src);
        int r = scp_compile(path, &policy, err, sizeof(err));
        if (r < 0)
                fprintf(stderr, "%s\n", err);
        CHECK_OK(r);

        if (argc > 1 && streq(argv[1], "bench")) {
                int n = argc > 2 ? atoi(argv[2]) : 50;
                int rr = bench(n > 0 ? n : 50);
                if (rr == 0 && argc > 3 && streq(argv[3], "nobody")) {
                        pid_t pid = fork();
                        if (pid == 0) {
                                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                                    setresuid(65534, 65534, 65534) < 0)
                                        _exit(99);
                                _exit(bench(n > 0 ? n : 50));
                        }
                        int st = -1;
                        rr = waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : 1;
                }
                scp_free(policy);
                return rr;
        }

        test_probe();
        test_battery(base, false);
        char w[4200];
        fmt(w, sizeof(w), "%s/work", base);
        test_no_leftover(w);
        test_sigterm(w);
        test_exit_status(w);
        test_null_cwd(w);
        test_failures(w);
        if (have("node") && have("curl"))
                test_runtimes(w);
        else
                fprintf(stderr, "info: no node or no curl: the runtimes are not tested\n");
        test_workdir_rw(base);
        test_tmp_workdir(tmpbase);
        test_run_workdir();
        test_rlimits(w);
        test_cgroup(w);
        test_refused(false);
        test_refused(true);
        test_userns();
        scp_free(policy);
        return check_finish();
}
