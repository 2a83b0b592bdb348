/* SPDX-License-Identifier: MIT */
#include "cli/pty.h"

#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/util.h"

/* Copies what from holds now to to. false at the end of from (EOF, or EIO: a master whose
 * slave every process has closed) or on an error. */
static bool relay(int from, int to)
{
        char buf[16384];
        ssize_t n = read(from, buf, sizeof(buf));
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return true;
        return n > 0 && write_all(to, buf, (size_t)n) >= 0;
}

static int on_in(sd_event_source *s _unused_, int fd _unused_, uint32_t revents _unused_,
                 void *userdata)
{
        Pty *p = userdata;
        if (!relay(STDIN_FILENO, p->master))
                p->in = sd_event_source_disable_unref(p->in);
        return 0;
}

static int on_out(sd_event_source *s _unused_, int fd _unused_, uint32_t revents _unused_,
                  void *userdata)
{
        Pty *p = userdata;
        if (!relay(p->master, STDOUT_FILENO))
                p->out = sd_event_source_disable_unref(p->out);
        return 0;
}

static void copy_size(Pty *p)
{
        struct winsize ws;
        if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
                (void)ioctl(p->master, TIOCSWINSZ, &ws);
}

static int on_winch(sd_event_source *s _unused_, const struct signalfd_siginfo *si _unused_,
                    void *userdata)
{
        copy_size(userdata);
        return 0;
}

int pty_open(Pty *p, sd_event *e)
{
        struct termios t;
        struct winsize ws = {.ws_row = 24, .ws_col = 80};
        *p = PTY_NULL;
        if (tcgetattr(STDIN_FILENO, &t) < 0)
                return negative_errno();
        (void)ioctl(STDIN_FILENO, TIOCGWINSZ, &ws);
        if (openpty(&p->master, &p->slave, NULL, &t, &ws) < 0)
                return negative_errno();
        (void)fcntl(p->master, F_SETFD, FD_CLOEXEC);
        (void)fcntl(p->slave, F_SETFD, FD_CLOEXEC);
        int r = sd_event_add_io(e, &p->in, STDIN_FILENO, EPOLLIN, on_in, p);
        if (r >= 0)
                r = sd_event_add_io(e, &p->out, p->master, EPOLLIN, on_out, p);
        if (r >= 0)
                r = sd_event_add_signal(e, &p->winch, SIGWINCH, on_winch, p);
        if (r < 0) {
                pty_close(p);
                return r;
        }
        p->saved = t;
        cfmakeraw(&t);
        if (tcsetattr(STDIN_FILENO, TCSADRAIN, &t) < 0) {
                r = negative_errno();
                pty_close(p);
                return r;
        }
        p->raw = true;
        return 0;
}

void pty_close(Pty *p)
{
        if (p->raw)
                (void)tcsetattr(STDIN_FILENO, TCSADRAIN, &p->saved);
        p->raw = false;
        p->in = sd_event_source_disable_unref(p->in);
        p->out = sd_event_source_disable_unref(p->out);
        p->winch = sd_event_source_disable_unref(p->winch);
        p->master = safe_close(p->master);
        p->slave = safe_close(p->slave);
}
