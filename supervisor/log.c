/* SPDX-License-Identifier: MIT */
#include "supervisor/log.h"

#include <stdarg.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <time.h>

static int max_level = LOG_INFO;

void log_set_max_level(int level)
{
        max_level = level;
}

/* sd_journal_stream_fd(3)'s contract: JOURNAL_STREAM=<dev>:<ino> names the stream stderr
 * is, when systemd connected it to the journal; a redirected stderr keeps its own way. */
bool log_to_journal(void)
{
        static int cached = -1;
        if (cached >= 0)
                return cached;
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;
        cached = e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
                 (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
        return cached;
}

/* One journal entry; 0 or negative errno (then the caller falls back to stderr). */
static int send_journal(int level, int e, const LogFields *f, const char *msg)
{
        char fields[10][320];
        struct iovec iov[10];
        size_t n = 0;
#define FIELD(...)                                                                   \
        do {                                                                         \
                int l = snprintf(fields[n], sizeof(fields[n]), __VA_ARGS__);         \
                iov[n] = (struct iovec){.iov_base = fields[n],                       \
                                        .iov_len = (size_t)l < sizeof(fields[n])     \
                                                           ? (size_t)l               \
                                                           : sizeof(fields[n]) - 1}; \
                n++;                                                                 \
        } while (0)
        FIELD("PRIORITY=%d", level & 7);
        FIELD("SYSLOG_IDENTIFIER=pomed");
        if (e)
                FIELD("ERRNO=%d", e);
        if (f && f->message_id)
                FIELD("MESSAGE_ID=%s", f->message_id);
        if (f && f->sandbox_id)
                FIELD("SANDBOX_ID=%s", f->sandbox_id);
        if (f && f->twin)
                FIELD("TWIN=%s", f->twin);
        if (f && f->team)
                FIELD("TEAM=%s", f->team);
        if (f && f->reason)
                FIELD("REASON=%s", f->reason);
        if (f && f->pod_pid > 0)
                FIELD("POD_PID=%d", (int)f->pod_pid);
#undef FIELD
        /* MESSAGE= may be long: its own buffer */
        _cleanup_free_ char *m = NULL;
        if (asprintf(&m, "MESSAGE=%s%s%s", msg, e ? ": " : "", e ? strerror(e) : "") < 0)
                return -ENOMEM;
        iov[n++] = (struct iovec){.iov_base = m, .iov_len = strlen(m)};
        return sd_journal_sendv(iov, (int)n);
}

int log_struct_errno(int level, int err, const LogFields *f, const char *fmt, ...)
{
        int e = err < 0 ? -err : err;
        if (level > max_level)
                return e ? -e : 0;
        char msg[2048];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (log_to_journal()) {
                if (send_journal(level, e, f, msg) >= 0)
                        return e ? -e : 0;
                /* journald gone: the stream still reaches it, or whoever reads stderr */
                fprintf(stderr, "<%d>%s%s%s\n", level & 7, msg, e ? ": " : "",
                        e ? strerror(e) : "");
                return e ? -e : 0;
        }
        static const char *const names[] = {"emerg",   "alert",  "crit", "error",
                                            "warning", "notice", "info", "debug"};
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        struct tm tm;
        gmtime_r(&ts.tv_sec, &tm);
        char when[32];
        strftime(when, sizeof(when), "%H:%M:%S", &tm);
        fprintf(stderr, "pomed %s.%03ld %-7s %s%s%s\n", when, ts.tv_nsec / 1000000,
                names[level & 7], msg, e ? ": " : "", e ? strerror(e) : "");
        return e ? -e : 0;
}
