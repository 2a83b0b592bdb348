/* SPDX-License-Identifier: MIT */
#include "supervisor/notify.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "common/util.h"

struct Notify {
        int fd;
        sd_event_source *source;
        NotifyHandler handler;
        void *userdata;
        char *path;
};

static int on_datagram(sd_event_source *s _unused_, int fd, uint32_t revents _unused_,
                       void *userdata)
{
        Notify *n = userdata;
        for (;;) {
                char buf[4096];
                union {
                        struct cmsghdr h;
                        char b[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(sizeof(int) * 8)];
                } control;
                struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf) - 1};
                struct msghdr mh = {.msg_iov = &iov,
                                    .msg_iovlen = 1,
                                    .msg_control = &control,
                                    .msg_controllen = sizeof(control)};
                ssize_t k = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC | MSG_TRUNC);
                if (k < 0)
                        return 0; /* EAGAIN: drained */
                pid_t pid = 0;
                for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
                        if (c->cmsg_level != SOL_SOCKET)
                                continue;
                        if (c->cmsg_type == SCM_CREDENTIALS) {
                                struct ucred uc;
                                memcpy(&uc, CMSG_DATA(c), sizeof(uc));
                                pid = uc.pid;
                        } else if (c->cmsg_type == SCM_RIGHTS) {
                                /* fd store is not supported: close what was sent */
                                int *fds = (int *)CMSG_DATA(c);
                                size_t nf = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                                for (size_t i = 0; i < nf; i++)
                                        close(fds[i]);
                        }
                }
                if (pid <= 0 || (mh.msg_flags & MSG_TRUNC))
                        continue;
                buf[k] = 0;
                n->handler(pid, buf, (size_t)k, n->userdata);
        }
}

int notify_new(sd_event *e, const char *dir, NotifyHandler handler, void *userdata, Notify **ret)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/notify", dir) >=
            sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        Notify *n = calloc(1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        n->handler = handler;
        n->userdata = userdata;
        n->path = strdup(sa.sun_path);
        n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        int r = 0, one = 1;
        if (!n->path)
                r = -ENOMEM;
        else if (n->fd < 0)
                r = negative_errno();
        else {
                (void)unlink(sa.sun_path);
                if (bind(n->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
                    setsockopt(n->fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0 ||
                    chmod(sa.sun_path, 0666) < 0)
                        r = negative_errno();
        }
        if (r >= 0)
                r = sd_event_add_io(e, &n->source, n->fd, EPOLLIN, on_datagram, n);
        if (r < 0) {
                notify_free(n);
                return r;
        }
        *ret = n;
        return 0;
}

const char *notify_path(const Notify *n)
{
        return n->path;
}

Notify *notify_free(Notify *n)
{
        if (!n)
                return NULL;
        sd_event_source_disable_unref(n->source);
        if (n->fd >= 0) {
                close(n->fd);
                if (n->path)
                        (void)unlink(n->path);
        }
        free(n->path);
        free(n);
        return NULL;
}

char *notify_field(const char *msg, const char *key)
{
        size_t kl = strlen(key);
        for (const char *p = msg; p && *p;) {
                const char *nl = strchrnul(p, '\n');
                if ((size_t)(nl - p) > kl && strncmp(p, key, kl) == 0 && p[kl] == '=')
                        return strndup(p + kl + 1, (size_t)(nl - p) - kl - 1);
                p = *nl ? nl + 1 : NULL;
        }
        return NULL;
}
