/* SPDX-License-Identifier: MIT */
/* The fuzzers' invariant check: a broken invariant aborts, so libFuzzer keeps the input. */
#pragma once

#include <stdio.h>
#include <stdlib.h>

#define ASSERT(x)                                                                                 \
        do {                                                                                      \
                if (!(x)) {                                                                       \
                        fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #x); \
                        abort();                                                                  \
                }                                                                                 \
        } while (0)
