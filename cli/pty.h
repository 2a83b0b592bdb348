/* SPDX-License-Identifier: MIT */
/*
 * The terminal of `pome run --shell`: a pseudo-terminal whose slave is the shell's fds 0, 1
 * and 2 in the agent's pod (its controlling terminal there), relayed to the user's terminal
 * on pome's sd-event loop — the user's terminal in raw mode meanwhile (so ^C, ^Z and the
 * line editing are the shell's), its size passed on at the start and on every SIGWINCH, as
 * script(1) and ssh do.
 *
 * SIGWINCH must be blocked in every thread before pty_open (sd_event_add_signal).
 */
#pragma once

#include <stdbool.h>
#include <systemd/sd-event.h>
#include <termios.h>

typedef struct Pty {
        int master, slave;    /* -1 when closed */
        struct termios saved; /* the user's terminal before raw mode */
        bool raw;
        sd_event_source *in, *out, *winch;
} Pty;

#define PTY_NULL ((Pty){.master = -1, .slave = -1})

/*
 * Opens the pty, sized as stdin's terminal, puts stdin's terminal in raw mode and relays
 * stdin to the master and the master to stdout on e until either side ends. 0, or a
 * negative errno (nothing is left changed).
 */
int pty_open(Pty *p, sd_event *e);

/* Restores the user's terminal and closes everything. Idempotent; accepts PTY_NULL. */
void pty_close(Pty *p);
