/* SPDX-License-Identifier: MIT */
#include "supervisor/log.h"

#include <stdarg.h>
#include <time.h>

static int max_level = LOG_INFO;

void log_set_max_level(int level)
{
        max_level = level;
}

int log_full_errno(int level, int err, const char *fmt, ...)
{
        int e = err < 0 ? -err : err;
        if (level <= max_level) {
                char msg[2048];
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(msg, sizeof(msg), fmt, ap);
                va_end(ap);
                if (getenv("JOURNAL_STREAM")) {
                        if (e)
                                fprintf(stderr, "<%d>%s: %s\n", level, msg, strerror(e));
                        else
                                fprintf(stderr, "<%d>%s\n", level, msg);
                } else {
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
                }
        }
        return e ? -e : 0;
}
