/* SPDX-License-Identifier: MIT */
#include "tape.h"

#include <fcntl.h>

#include "common/json-util.h"
#include "common/util.h"

struct Tape {
        int fd; /* -1 for a memory tape */
        char *path;
        json_t *rows; /* memory tape only */
        size_t count;
};

int tape_open(const char *path, Tape **ret)
{
        Tape *t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->fd = -1;
        if (path) {
                t->path = strdup(path);
                t->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
                if (!t->path || t->fd < 0) {
                        int r = t->path ? negative_errno() : -ENOMEM;
                        tape_free(t);
                        return r;
                }
        } else if (!(t->rows = json_array())) {
                tape_free(t);
                return -ENOMEM;
        }
        *ret = t;
        return 0;
}

int tape_append(Tape *t, const json_t *row)
{
        if (t->fd < 0) {
                if (json_array_append(t->rows, (json_t *)row) < 0)
                        return -ENOMEM;
                t->count++;
                return 0;
        }
        _cleanup_free_ char *line = json_dumps(row, JSON_COMPACT);
        if (!line)
                return -ENOMEM;
        size_t n = strlen(line);
        line[n] = '\n'; /* the NUL's byte carries the newline for this one write */
        /* One write: with O_APPEND a row is never interleaved with another. */
        ssize_t k = write(t->fd, line, n + 1);
        line[n] = 0;
        if (k < 0)
                return negative_errno();
        if ((size_t)k != n + 1)
                return -EIO;
        t->count++;
        return 0;
}

json_t *tape_rows(Tape *t)
{
        if (t->fd < 0)
                return json_copy(t->rows);
        json_t *a = json_array();
        _cleanup_fclose_ FILE *f = a ? fopen(t->path, "re") : NULL;
        if (!f)
                return a;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        while ((n = getline(&line, &cap, f)) > 0) {
                json_t *row = json_loadb(line, (size_t)n, 0, NULL);
                if (row)
                        json_array_append_new(a, row);
        }
        return a;
}

size_t tape_count(const Tape *t)
{
        return t->count;
}

void tape_reset(Tape *t)
{
        if (t->fd < 0) {
                json_array_clear(t->rows);
                t->count = 0;
        }
}

Tape *tape_free(Tape *t)
{
        if (!t)
                return NULL;
        safe_close(t->fd);
        free(t->path);
        json_decref(t->rows);
        free(t);
        return NULL;
}
