/* SPDX-License-Identifier: MIT */
/* Minimal test assertions: report file:line and the expression, keep going, fail at the end. */
#pragma once

#include <stdio.h>
#include <stdlib.h>

static int check_failures;

#define CHECK(expr)                                                                              \
        do {                                                                                     \
                if (!(expr)) {                                                                   \
                        fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #expr); \
                        check_failures++;                                                        \
                }                                                                                \
        } while (0)

/* For calls returning int (>= 0 ok, negative errno). */
#define CHECK_OK(expr)                                                                        \
        do {                                                                                  \
                long _r_ = (long)(expr);                                                      \
                if (_r_ < 0) {                                                                \
                        fprintf(stderr, "%s:%d: %s failed: %ld\n", __FILE__, __LINE__, #expr, \
                                _r_);                                                         \
                        check_failures++;                                                     \
                }                                                                             \
        } while (0)

#define SKIP(...)                                      \
        do {                                           \
                fprintf(stderr, "skip: " __VA_ARGS__); \
                fputc('\n', stderr);                   \
                exit(77);                              \
        } while (0)

static inline int check_finish(void)
{
        if (check_failures)
                fprintf(stderr, "%d check(s) failed\n", check_failures);
        return check_failures ? 1 : 0;
}
