/* SPDX-License-Identifier: MIT */
/* NULL-terminated string vectors (strv, as systemd calls them). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/util.h"

/* A new empty vector (NULL on OOM). */
char **strv_new(void);
/* Frees every string and the vector. Accepts NULL; returns NULL. */
char **strv_free(char **l);
static inline void strv_freep(char ***l)
{
        strv_free(*l);
}
#define _cleanup_strv_free_ _cleanup_(strv_freep)

size_t strv_length(char *const *l);
bool strv_contains(char *const *l, const char *s);
/* Appends a copy of s (*l may be NULL: a new vector). 0 or -ENOMEM. */
int strv_extend(char ***l, const char *s);
/* Appends a formatted string. 0 or -ENOMEM. */
int strv_extendf(char ***l, const char *fmt, ...) _printf_(2, 3);
/* The value of name in an environment ("NAME=value" strings), borrowed, or NULL. */
const char *strv_env_get(char *const *envp, const char *name);
