/* SPDX-License-Identifier: MIT */
/*
 * The gateway's baseline: a minimal libmicrohttpd responder on one thread (its own epoll
 * loop), answering every request with the same bytes (a file given on the command line:
 * the twin's reply body), as fast as the HTTP library goes. Not built by CMake: bench/run.sh
 * and bench/ab.py compile it (cc -O2 bench/responder.c -lmicrohttpd).
 *   responder PORT BODYFILE    (PORT 0: any free port; the port is printed on stdout)
 */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char *body;
static size_t body_len;

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_len, void **state)
{
        (void)cls, (void)url, (void)method, (void)version, (void)upload;
        if (!*state) { /* the first call sees the headers only */
                *state = c;
                return MHD_YES;
        }
        if (*upload_len) {
                *upload_len = 0;
                return MHD_YES;
        }
        struct MHD_Response *r =
                MHD_create_response_from_buffer(body_len, body, MHD_RESPMEM_PERSISTENT);
        MHD_add_response_header(r, "Content-Type", "application/json");
        enum MHD_Result ret = MHD_queue_response(c, 200, r);
        MHD_destroy_response(r);
        return ret;
}

int main(int argc, char **argv)
{
        if (argc != 3)
                return 2;
        FILE *f = fopen(argv[2], "rb");
        if (!f)
                return 1;
        body = malloc(1 << 20);
        body_len = fread(body, 1, 1 << 20, f);
        fclose(f);
        struct MHD_Daemon *d = MHD_start_daemon(
                MHD_USE_EPOLL_INTERNAL_THREAD, (uint16_t)atoi(argv[1]), NULL, NULL, on_request,
                NULL, MHD_OPTION_CONNECTION_LIMIT, 1000u, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                (size_t)64 * 1024, MHD_OPTION_END);
        if (!d)
                return 1;
        const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
        printf("%u\n", info ? (unsigned)info->port : 0u);
        fflush(stdout);
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, SIGTERM);
        sigaddset(&s, SIGINT);
        sigprocmask(SIG_BLOCK, &s, NULL);
        int sig;
        sigwait(&s, &sig);
        MHD_stop_daemon(d);
        return 0;
}
