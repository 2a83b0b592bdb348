/* SPDX-License-Identifier: MIT */
/*
 * A wall clock the test steps: LD_PRELOADed into pomed, it adds to every CLOCK_REALTIME
 * reading (clock_gettime's REALTIME and REALTIME_COARSE, time(), gettimeofday()) the
 * signed number of seconds the file $POME_CLOCKSHIM_FILE holds, read again at most every
 * 50 ms of the real monotonic clock. The boot and monotonic clocks are untouched: what a
 * step of the wall clock (an NTP correction, an RTC reset) does to a daemon, without
 * setting the host's clock. A time namespace cannot do it (it offsets only the monotonic
 * and boot clocks). Test-only: never installed.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

static clock_gettime_fn real_clock_gettime(void)
{
        static clock_gettime_fn fn;
        if (!fn)
                fn = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
        return fn;
}

/* The offset in seconds, re-read from the file at most every 50 ms. */
static int64_t offset(void)
{
        static int64_t cached, read_at_ns = -1;
        struct timespec mono;
        if (real_clock_gettime()(CLOCK_MONOTONIC, &mono) < 0)
                return cached;
        int64_t now_ns = (int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec;
        if (read_at_ns >= 0 && now_ns - read_at_ns < 50000000)
                return cached;
        read_at_ns = now_ns;
        const char *path = getenv("POME_CLOCKSHIM_FILE");
        int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
        if (fd < 0)
                return cached;
        char buf[32] = "";
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n > 0) {
                buf[n] = 0;
                cached = strtoll(buf, NULL, 10);
        }
        return cached;
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
        int r = real_clock_gettime()(id, ts);
        if (r == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE))
                ts->tv_sec += (time_t)offset();
        return r;
}

time_t time(time_t *t)
{
        struct timespec ts;
        if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
                return (time_t)-1;
        if (t)
                *t = ts.tv_sec;
        return ts.tv_sec;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
        (void)tz;
        struct timespec ts;
        int r = clock_gettime(CLOCK_REALTIME, &ts);
        if (r == 0) {
                tv->tv_sec = ts.tv_sec;
                tv->tv_usec = ts.tv_nsec / 1000;
        }
        return r;
}
