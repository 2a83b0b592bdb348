/* SPDX-License-Identifier: MIT */
#include "common/strv.h"

#include <stdarg.h>

char **strv_new(void)
{
        return calloc(1, sizeof(char *));
}

char **strv_free(char **l)
{
        for (char **p = l; p && *p; p++)
                free(*p);
        free(l);
        return NULL;
}

size_t strv_length(char *const *l)
{
        size_t n = 0;
        while (l && l[n])
                n++;
        return n;
}

bool strv_contains(char *const *l, const char *s)
{
        for (char *const *p = l; p && *p; p++)
                if (streq(*p, s))
                        return true;
        return false;
}

static int strv_push(char ***l, char *s)
{
        if (!s)
                return -ENOMEM;
        size_t n = strv_length(*l);
        char **nl = realloc(*l, (n + 2) * sizeof(char *));
        if (!nl) {
                free(s);
                return -ENOMEM;
        }
        nl[n] = s;
        nl[n + 1] = NULL;
        *l = nl;
        return 0;
}

int strv_extend(char ***l, const char *s)
{
        return strv_push(l, strdup(s));
}

int strv_extendf(char ***l, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        char *s;
        int k = vasprintf(&s, fmt, ap);
        va_end(ap);
        return strv_push(l, k < 0 ? NULL : s);
}

const char *strv_env_get(char *const *envp, const char *name)
{
        size_t n = strlen(name);
        for (; envp && *envp; envp++)
                if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
                        return *envp + n + 1;
        return NULL;
}
