/* SPDX-License-Identifier: MIT */
/*
 * The receiving end of the sd_notify protocol (sd_notify(3)) for pods: one
 * AF_UNIX datagram socket per pomed, at a path (abstract sockets are per network
 * namespace and pods have their own), with SO_PASSCRED so every datagram names
 * its sender's pid — translated into our pid namespace by the kernel, which is
 * how a pod that is pid 1 in its own namespace is still told apart.
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

typedef struct Notify Notify;

/* Called per datagram: sender pid and the message text (NUL-terminated, len bytes). */
typedef void (*NotifyHandler)(pid_t pid, const char *msg, size_t len, void *userdata);

/*
 * Binds <dir>/notify (dir must exist), mode 0666 so unprivileged pods can send —
 * harmless, since a datagram only counts when its sender pid is a pod's. Returns 0
 * or negative errno (-ENAMETOOLONG when the path does not fit sun_path).
 */
int notify_new(sd_event *e, const char *dir, NotifyHandler handler, void *userdata, Notify **ret);

/* The socket path, for NOTIFY_SOCKET=. */
const char *notify_path(const Notify *n);

/* Closes and unlinks the socket. Accepts NULL; returns NULL. */
Notify *notify_free(Notify *n);

/* Value of KEY= in a notify message (a new string), or NULL. */
char *notify_field(const char *msg, const char *key);
