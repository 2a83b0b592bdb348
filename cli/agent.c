/* SPDX-License-Identifier: MIT */
#include "cli/agent.h"

#include <assert.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "common/fileio.h"
#include "common/timeutil.h"
#include "common/util.h"

struct Agent {
        sd_event *event;
        pid_t pid;
        sd_event_source *child, *timeout, *grace, *defer;
        uint64_t grace_usec;
        uint64_t started_mono;
        AgentResult result;
        bool exited, done_called;
        AgentDoneFn done;
        void *userdata;
};

static void kill_group(Agent *a, int sig)
{
        /* ESRCH: the group is gone already */
        (void)kill(-a->pid, sig);
}

static int on_defer(sd_event_source *s _unused_, void *userdata)
{
        Agent *a = userdata;
        a->defer = sd_event_source_disable_unref(a->defer);
        if (!a->done_called) {
                a->done_called = true;
                a->done(a, &a->result, a->userdata);
        }
        return 0;
}

static int on_child(sd_event_source *s _unused_, const siginfo_t *si, void *userdata)
{
        Agent *a = userdata;
        if (si->si_code == CLD_EXITED) {
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
        sd_event_unref(a->event);
        free(a);
        return NULL;
}

/* The value of name in envp, or NULL. */
static const char *env_get(char *const *envp, const char *name)
{
        size_t n = strlen(name);
        for (; envp && *envp; envp++)
                if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
                        return *envp + n + 1;
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
        const char *path = env_get(envp, "PATH");
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

/* The agent's stdout or stderr: path created or truncated, else a duplicate of fd. */
static int output_fd(const char *path, int fd, char *err, size_t errlen)
{
        int r = path ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
                     : fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (r < 0) {
                r = negative_errno();
                snprintf(err, errlen, "cannot %s %s: %s", path ? "create" : "hold",
                         path ? path : "the agent's output", strerror(-r));
        }
        return r;
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
        _cleanup_close_ int in = prompt_fd(spec->prompt ? spec->prompt : "");
        if (in < 0) {
                snprintf(err, errlen, "cannot hold the prompt: %s", strerror(-in));
                return in;
        }
        _cleanup_close_ int out = output_fd(spec->stdout_path, spec->stdout_fd, err, errlen);
        if (out < 0)
                return out;
        _cleanup_close_ int errf = output_fd(spec->stderr_path, spec->stderr_fd, err, errlen);
        if (errf < 0)
                return errf;
        int report[2];
        if (pipe2(report, O_CLOEXEC) < 0) {
                int r = negative_errno();
                snprintf(err, errlen, "pipe: %s", strerror(-r));
                return r;
        }
        Agent *a = calloc(1, sizeof(*a));
        if (!a) {
                safe_close(report[0]);
                safe_close(report[1]);
                return -ENOMEM;
        }
        *a = (Agent){.event = sd_event_ref(e),
                     .grace_usec = spec->grace_usec,
                     .done = done,
                     .userdata = userdata};
        a->result.started_usec = now_usec(CLOCK_REALTIME);
        a->started_mono = now_usec(CLOCK_MONOTONIC);
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        if (pid < 0) {
                int r = negative_errno();
                snprintf(err, errlen, "fork: %s", strerror(-r));
                safe_close(report[0]);
                safe_close(report[1]);
                agent_free(a);
                return r;
        }
        if (pid == 0)
                child(program, spec, in, out, errf, report[1]);
        /* both sides set the group, so a signal sent right after this returns reaches it */
        (void)setpgid(pid, pid);
        a->pid = pid;
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
                a->exited = true;
                agent_free(a);
                return -child_errno;
        }
        int r = sd_event_add_child(e, &a->child, pid, WEXITED, on_child, a);
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
