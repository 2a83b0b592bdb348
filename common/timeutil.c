/* SPDX-License-Identifier: MIT */
#include "common/timeutil.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

uint64_t now_usec(clockid_t clock)
{
        struct timespec ts;
        clock_gettime(clock, &ts);
        return (uint64_t)ts.tv_sec * UINT64_C(1000000) + (uint64_t)ts.tv_nsec / 1000;
}

int64_t now_sec(void)
{
        /* Not time(2): glibc answers it from the vDSO's coarse clock, which can still say
         * the previous second a few ms into the next one. A lifetime timer armed from
         * CLOCK_REALTIME for expires_at then ended a sandbox "at" expires_at - 1
         * (test-clocks, once in four full runs). */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec;
}

void format_rfc3339(int64_t t, char *buf, size_t len)
{
        time_t tt = (time_t)t;
        struct tm tm;
        if (!gmtime_r(&tt, &tm) || strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
                snprintf(buf, len, "1970-01-01T00:00:00Z");
}

void format_rfc3339_usec(int64_t usec, char *buf, size_t len)
{
        time_t tt = (time_t)(usec / 1000000);
        struct tm tm;
        char base[RFC3339_MAX];
        if (!gmtime_r(&tt, &tm) || strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
                snprintf(base, sizeof(base), "1970-01-01T00:00:00");
        snprintf(buf, len, "%s.%03dZ", base, (int)(usec % 1000000 / 1000));
}

int parse_rfc3339(const char *s, int64_t *ret)
{
        struct tm tm = {};
        const char *e = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
        if (!e)
                return -EINVAL;
        if (*e == '.') {
                e++;
                if (*e < '0' || *e > '9')
                        return -EINVAL;
                while (*e >= '0' && *e <= '9')
                        e++;
        }
        if (e[0] != 'Z' || e[1] != 0)
                return -EINVAL;
        *ret = (int64_t)timegm(&tm);
        return 0;
}
