/* SPDX-License-Identifier: MIT */
/*
 * Small shared idioms: cleanup attributes, ownership transfer, errno helpers.
 * Header only; every program and library of the project includes it.
 */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _unused_       __attribute__((unused))
#define _noreturn_     __attribute__((noreturn))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _cleanup_(f)   __attribute__((cleanup(f)))

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

/* Hand ownership on: returns the value and clears the variable so its cleanup does nothing. */
#define TAKE_PTR(p)                      \
        ({                               \
                __typeof__(p) _p_ = (p); \
                (p) = NULL;              \
                _p_;                     \
        })
#define TAKE_FD(fd)              \
        ({                       \
                int _fd_ = (fd); \
                (fd) = -1;       \
                _fd_;            \
        })

static inline void freep(void *p)
{
        free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline int safe_close(int fd)
{
        if (fd >= 0) {
                int saved = errno;
                (void)close(fd);
                errno = saved;
        }
        return -1;
}
static inline void closep(int *fd)
{
        safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

static inline void fclosep(FILE **f)
{
        if (*f)
                fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

/*
 * Makes *buf (*cap bytes) hold at least need bytes: the capacity doubles from *cap, or from
 * min for a buffer that has none yet. 0, or -ENOMEM with *buf and *cap unchanged.
 */
static inline int buf_reserve(char **buf, size_t *cap, size_t need, size_t min)
{
        if (need <= *cap)
                return 0;
        size_t c = *cap ? *cap : min;
        while (c < need) {
                if (c > SIZE_MAX / 2)
                        return -ENOMEM;
                c *= 2;
        }
        char *b = realloc(*buf, c);
        if (!b)
                return -ENOMEM;
        *buf = b;
        *cap = c;
        return 0;
}

/* Negative errno of the last failed libc call, never 0 (defaults to -EIO). */
static inline int negative_errno(void)
{
        return errno > 0 ? -errno : -EIO;
}

static inline bool streq(const char *a, const char *b)
{
        return strcmp(a, b) == 0;
}
static inline bool streq_ptr(const char *a, const char *b)
{
        if (!a || !b)
                return a == b;
        return strcmp(a, b) == 0;
}
static inline const char *startswith(const char *s, const char *prefix)
{
        size_t l = strlen(prefix);
        return strncmp(s, prefix, l) == 0 ? s + l : NULL;
}
/* Whether s ends with suffix. */
static inline bool endswith(const char *s, const char *suffix)
{
        size_t l = strlen(s), k = strlen(suffix);
        return l >= k && strcmp(s + l - k, suffix) == 0;
}
static inline const char *strempty(const char *s)
{
        return s ? s : "";
}

#define USEC_PER_SEC  UINT64_C(1000000)
#define USEC_PER_MSEC UINT64_C(1000)
