/* SPDX-License-Identifier: MIT */
#include "cli/agent.h"

#include <assert.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "common/fileio.h"
#include "common/timeutil.h"
#include "common/strv.h"
#include "common/util.h"

#define OUTPUT_CHUNK        (64u << 10) /* bytes read from an output pipe at a time */
#define OUTPUT_DRAIN_ROUNDS 64u         /* reads of what is left in a pipe once the agent is gone */

/* One of the agent's outputs: the read end of its pipe, and where its bytes are kept. */
typedef struct Agent Agent;
typedef struct Output {
        Agent *agent;
        int fd;   /* the pipe's read end (non-blocking), -1 once closed */
        int sink; /* borrowed */
        sd_event_source *io;
        uint64_t *bytes; /* into the result */
        bool *cut;
        int error; /* the first write error of the sink (negative errno) */
} Output;

struct Agent {
        sd_event *event;
        pid_t pid;
        bool sealed;   /* pid is the pod's init */
        int status_fd; /* sealed: the read end the init writes the agent's wait status to */
        sd_event_source *child, *timeout, *grace, *defer;
        uint64_t grace_usec;
        uint64_t started_mono;
        uint64_t output_max;
        Output out[2]; /* stdout, stderr */
        AgentResult result;
        bool exited, done_called;
        AgentDoneFn done;
        void *userdata;
};

static void kill_group(Agent *a, int sig)
{
        /* ESRCH: gone already. The pod's init forwards SIGTERM to every process of the pod,
         * and its SIGKILL ends the pod's pid namespace: every process in it. */
        if (a->sealed) {
                if (sig != SIGCONT)
                        (void)kill(a->pid, sig);
        } else
                (void)kill(-a->pid, sig);
}

/* Reads what the pipe holds now into the sink, up to the cap. 1 at end of file, 0 when it
 * would block, negative errno on a read error. */
static int output_read(Agent *a, Output *o)
{
        char buf[OUTPUT_CHUNK];
        ssize_t n = read(o->fd, buf, sizeof(buf));
        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : negative_errno();
        if (n == 0)
                return 1;
        uint64_t have = *o->bytes, keep = (uint64_t)n;
        if (a->output_max && have + keep > a->output_max) {
                keep = have < a->output_max ? a->output_max - have : 0;
                *o->cut = true;
        }
        *o->bytes += (uint64_t)n;
        if (keep && !o->error) {
                int r = write_all(o->sink, buf, (size_t)keep);
                if (r < 0)
                        o->error = r;
        }
        return 2;
}

static void output_close(Output *o)
{
        o->io = sd_event_source_disable_unref(o->io);
        o->fd = safe_close(o->fd);
}

static int on_output(sd_event_source *s _unused_, int fd _unused_, uint32_t revents _unused_,
                     void *userdata)
{
        Output *o = userdata;
        int r = output_read(o->agent, o);
        if (r == 1 || r < 0)
                output_close(o);
        return 0;
}

/* The agent is gone: what its pipes still hold, then they close (a process it left that
 * still writes gets EPIPE). Bounded, since such a process could write forever. */
static void output_drain(Agent *a)
{
        for (size_t i = 0; i < ELEMENTSOF(a->out); i++) {
                Output *o = &a->out[i];
                for (unsigned k = 0; o->fd >= 0 && k < OUTPUT_DRAIN_ROUNDS; k++)
                        if (output_read(a, o) <= 1)
                                break;
                output_close(o);
        }
}

static int on_defer(sd_event_source *s _unused_, void *userdata)
{
        Agent *a = userdata;
        a->defer = sd_event_source_disable_unref(a->defer);
        output_drain(a);
        if (!a->done_called) {
                a->done_called = true;
                a->done(a, &a->result, a->userdata);
        }
        return 0;
}

static int on_child(sd_event_source *s _unused_, const siginfo_t *si, void *userdata)
{
        Agent *a = userdata;
        int st;
        /* sealed: the agent's own status, which its init can only pass on as 128 + a signal */
        if (a->status_fd >= 0 && read(a->status_fd, &st, sizeof(st)) == (ssize_t)sizeof(st)) {
                a->result.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
                a->result.signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
        } else if (si->si_code == CLD_EXITED) {
                a->result.exit_code = si->si_status;
                a->result.signal = 0;
        } else {
                a->result.exit_code = -1;
                a->result.signal = si->si_status;
        }
        a->result.ended_usec = now_usec(CLOCK_REALTIME);
        a->result.duration_usec = now_usec(CLOCK_MONOTONIC) - a->started_mono;
        a->exited = true;
        /* The agent is still a zombie here, so its pid (the group's id) cannot have been
         * reused: whatever it left running in its group goes now. */
        kill_group(a, SIGKILL);
        a->timeout = sd_event_source_disable_unref(a->timeout);
        a->grace = sd_event_source_disable_unref(a->grace);
        /* done may free the agent, and with it this source: not from inside its own
         * dispatch, which reaps the zombie after it returns */
        if (sd_event_add_defer(a->event, &a->defer, on_defer, a) < 0) {
                output_drain(a);
                a->done_called = true;
                a->done(a, &a->result, a->userdata);
        }
        return 0;
}

static int on_grace(sd_event_source *s _unused_, uint64_t usec _unused_, void *userdata)
{
        Agent *a = userdata;
        a->grace = sd_event_source_disable_unref(a->grace);
        if (a->exited)
                return 0;
        a->result.killed = true;
        kill_group(a, SIGKILL);
        return 0;
}

static void terminate(Agent *a)
{
        kill_group(a, SIGTERM);
        /* a stopped process holds SIGTERM until it is continued */
        kill_group(a, SIGCONT);
        if (!a->grace && sd_event_add_time_relative(a->event, &a->grace, CLOCK_MONOTONIC,
                                                    a->grace_usec, 0, on_grace, a) < 0) {
                a->result.killed = true;
                kill_group(a, SIGKILL);
        }
}

static int on_timeout(sd_event_source *s _unused_, uint64_t usec _unused_, void *userdata)
{
        Agent *a = userdata;
        a->timeout = sd_event_source_disable_unref(a->timeout);
        if (a->exited)
                return 0;
        a->result.timed_out = true;
        terminate(a);
        return 0;
}

void agent_terminate(Agent *a, bool now)
{
        if (!a || a->exited)
                return;
        a->timeout = sd_event_source_disable_unref(a->timeout);
        if (now) {
                a->result.killed = true;
                kill_group(a, SIGKILL);
        } else
                terminate(a);
}

pid_t agent_pid(const Agent *a)
{
        return a->pid;
}

bool agent_exited(const Agent *a)
{
        return a->done_called;
}

Agent *agent_free(Agent *a)
{
        if (!a)
                return NULL;
        if (!a->exited && a->pid > 0) {
                /* SIGKILL is prompt: reap it here rather than leave a zombie nobody waits for */
                kill_group(a, SIGKILL);
                (void)waitpid(a->pid, NULL, 0);
        }
        sd_event_source_disable_unref(a->timeout);
        sd_event_source_disable_unref(a->grace);
        sd_event_source_disable_unref(a->defer);
        sd_event_source_disable_unref(a->child);
        safe_close(a->status_fd);
        for (size_t i = 0; i < ELEMENTSOF(a->out); i++)
                output_close(&a->out[i]);
        sd_event_unref(a->event);
        free(a);
        return NULL;
}

/* argv0 resolved the way execvp would, with envp's PATH: a new string or NULL with errno. */
static char *find_program(const char *argv0, char *const *envp)
{
        if (strchr(argv0, '/')) {
                if (access(argv0, X_OK) < 0)
                        return NULL;
                return strdup(argv0);
        }
        const char *path = strv_env_get(envp, "PATH");
        if (!path)
                path = "/usr/local/bin:/usr/bin:/bin";
        int saved = ENOENT;
        for (const char *p = path;;) {
                const char *colon = strchrnul(p, ':');
                _cleanup_free_ char *cand = NULL;
                int n = (int)(colon - p);
                if (asprintf(&cand, "%.*s%s%s", n, p, n ? "/" : "", argv0) < 0)
                        return NULL;
                struct stat st;
                if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
                        if (access(cand, X_OK) == 0)
                                return TAKE_PTR(cand);
                        saved = EACCES;
                }
                if (!*colon)
                        break;
                p = colon + 1;
        }
        errno = saved;
        return NULL;
}

static int prompt_fd(const char *prompt)
{
        _cleanup_close_ int fd = memfd_create("pome-prompt", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return negative_errno();
        int r = write_all(fd, prompt, strlen(prompt));
        if (r < 0)
                return r;
        if (lseek(fd, 0, SEEK_SET) < 0)
                return negative_errno();
        /* the agent may read its prompt, not rewrite it for the next reader */
        (void)fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
        return TAKE_FD(fd);
}

/* In the child: async-signal-safe calls only, then execve or _exit. */
static _noreturn_ void child(const char *program, const AgentSpec *spec, int in, int out, int errf,
                             int report)
{
        sigset_t none;
        int e;

        (void)setpgid(0, 0);
        /* pome blocks SIGCHLD, SIGINT and SIGTERM and ignores SIGPIPE; an agent starts clean
         * (an ignored signal would stay ignored across execve) */
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sigemptyset(&none);
        for (int sig = 1; sig < _NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        (void)sigaction(sig, &dfl, NULL);
        (void)sigprocmask(SIG_SETMASK, &none, NULL);
        if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(errf, 2) < 0)
                goto fail;
        if (spec->cwd && chdir(spec->cwd) < 0)
                goto fail;
        execve(program, spec->argv, spec->envp);
fail:
        e = errno;
        (void)!write(report, &e, sizeof(e));
        _exit(127);
}

/* A pipe for one of the agent's outputs: its write end in *ret_w (blocking, for the agent),
 * its read end watched on the loop. 0 or negative errno (said). */
static int output_open(Agent *a, size_t i, int sink, int *ret_w, char *err, size_t errlen)
{
        int p[2];
        Output *o = &a->out[i];
        if (pipe2(p, O_CLOEXEC) < 0) {
                int r = negative_errno();
                snprintf(err, errlen, "cannot make a pipe for the agent's output: %s",
                         strerror(-r));
                return r;
        }
        (void)fcntl(p[0], F_SETFL, O_NONBLOCK);
        *o = (Output){.agent = a,
                      .fd = p[0],
                      .sink = sink,
                      .bytes = i ? &a->result.stderr_bytes : &a->result.stdout_bytes,
                      .cut = i ? &a->result.stderr_cut : &a->result.stdout_cut};
        *ret_w = p[1];
        int r = sd_event_add_io(a->event, &o->io, o->fd, EPOLLIN, on_output, o);
        if (r < 0) {
                snprintf(err, errlen, "cannot watch the agent's output: %s", strerror(-r));
                return r;
        }
        return 0;
}

/* The unsealed agent: forked into a process group of its own. Returns its pid, or a negative
 * errno with err said. */
static pid_t start_plain(const char *program, const AgentSpec *spec, int in, int out, int errf,
                         char *err, size_t errlen)
{
        int report[2];
        if (pipe2(report, O_CLOEXEC) < 0) {
                int r = negative_errno();
                snprintf(err, errlen, "pipe: %s", strerror(-r));
                return r;
        }
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        if (pid < 0) {
                int r = negative_errno();
                snprintf(err, errlen, "fork: %s", strerror(-r));
                safe_close(report[0]);
                safe_close(report[1]);
                return r;
        }
        if (pid == 0)
                child(program, spec, in, out, errf, report[1]);
        /* both sides set the group, so a signal sent right after this returns reaches it */
        (void)setpgid(pid, pid);
        safe_close(report[1]);
        int child_errno = 0;
        ssize_t n;
        do
                n = read(report[0], &child_errno, sizeof(child_errno));
        while (n < 0 && errno == EINTR);
        safe_close(report[0]);
        if (n == (ssize_t)sizeof(child_errno)) {
                /* the exec failed, and the child is exiting: reap it and say why */
                (void)waitpid(pid, NULL, 0);
                snprintf(err, errlen, "cannot run %s: %s", program, strerror(child_errno));
                return -child_errno;
        }
        return pid;
}

/* The sealed agent: the pod's init. Returns its pid, or a negative errno with err said. */
static pid_t start_sealed(Agent *a, const char *program, const AgentSpec *spec, int in, int out,
                          int errf, char *err, size_t errlen)
{
        AgentPodSpec ps = *spec->pod;
        char cwd[PATH_MAX];
        _cleanup_free_ char *abs = NULL;
        if (!ps.cwd)
                ps.cwd = spec->cwd;
        /* the pod execs by absolute path: ./agent.sh is the working directory's */
        if (program[0] != '/' && (!ps.cwd && !getcwd(cwd, sizeof(cwd)))) {
                int r = negative_errno();
                snprintf(err, errlen, "cannot find the working directory: %s", strerror(-r));
                return r;
        }
        if (program[0] != '/' && asprintf(&abs, "%s/%s", ps.cwd ? ps.cwd : cwd, program) < 0)
                return -ENOMEM;
        int status[2];
        if (pipe2(status, O_CLOEXEC | O_NONBLOCK) < 0) {
                int r = negative_errno();
                snprintf(err, errlen, "pipe: %s", strerror(-r));
                return r;
        }
        a->status_fd = status[0];
        ps.program = abs ? abs : program;
        ps.argv = spec->argv;
        ps.envp = spec->envp;
        ps.stdin_fd = in;
        ps.stdout_fd = out;
        ps.stderr_fd = errf;
        ps.status_fd = status[1];
        ps.tty = spec->tty;
        pid_t pid = 0;
        int pidfd = -1;
        fflush(stdout);
        fflush(stderr);
        int r = agent_pod_start(&ps, &pid, &pidfd, spec->listen_fds, err, errlen);
        safe_close(status[1]);
        if (r < 0)
                return r;
        /* the pid is ours to reap: it names the init until then */
        safe_close(pidfd);
        return pid;
}

int agent_start(sd_event *e, const AgentSpec *spec, AgentDoneFn done, void *userdata, Agent **ret,
                char *err, size_t errlen)
{
        assert(e && spec && spec->argv && spec->argv[0] && done && ret);
        _cleanup_free_ char *program = find_program(spec->argv[0], spec->envp);
        if (!program) {
                int r = errno == ENOMEM ? -ENOMEM : -errno;
                snprintf(err, errlen, "cannot run %s: %s", spec->argv[0],
                         r == -ENOENT ? "command not found" : strerror(-r));
                return r;
        }
        _cleanup_close_ int in = spec->tty ? fcntl(spec->stdout_fd, F_DUPFD_CLOEXEC, 3)
                                           : prompt_fd(spec->prompt ? spec->prompt : "");
        if (in < 0) {
                int r = spec->tty ? negative_errno() : in;
                snprintf(err, errlen, "cannot hold the %s: %s", spec->tty ? "terminal" : "prompt",
                         strerror(-r));
                return r;
        }
        Agent *a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        *a = (Agent){.event = sd_event_ref(e),
                     .grace_usec = spec->grace_usec,
                     .output_max = spec->output_max,
                     .sealed = spec->pod != NULL,
                     .status_fd = -1,
                     .out = {{.fd = -1}, {.fd = -1}},
                     .done = done,
                     .userdata = userdata};
        _cleanup_close_ int out = -1, errf = -1;
        int r = 0;
        if (spec->tty) {
                out = fcntl(spec->stdout_fd, F_DUPFD_CLOEXEC, 3);
                errf = fcntl(spec->stdout_fd, F_DUPFD_CLOEXEC, 3);
                if (out < 0 || errf < 0)
                        r = negative_errno();
        } else {
                r = output_open(a, 0, spec->stdout_fd, &out, err, errlen);
                if (r >= 0)
                        r = output_open(a, 1, spec->stderr_fd, &errf, err, errlen);
        }
        if (r < 0) {
                a->exited = true;
                agent_free(a);
                return r;
        }
        a->result.sealed = a->sealed;
        a->result.started_usec = now_usec(CLOCK_REALTIME);
        a->started_mono = now_usec(CLOCK_MONOTONIC);
        pid_t pid = spec->pod ? start_sealed(a, program, spec, in, out, errf, err, errlen)
                              : start_plain(program, spec, in, out, errf, err, errlen);
        if (pid < 0) {
                a->exited = true;
                agent_free(a);
                return pid;
        }
        a->pid = pid;
        r = sd_event_add_child(e, &a->child, pid, WEXITED, on_child, a);
        if (r < 0) {
                snprintf(err, errlen, "cannot watch the agent: %s", strerror(-r));
                agent_free(a);
                return r;
        }
        if (spec->timeout_usec > 0) {
                r = sd_event_add_time_relative(e, &a->timeout, CLOCK_MONOTONIC, spec->timeout_usec,
                                               0, on_timeout, a);
                if (r < 0) {
                        snprintf(err, errlen, "cannot arm the timeout: %s", strerror(-r));
                        agent_free(a);
                        return r;
                }
        }
        *ret = a;
        return 0;
}
