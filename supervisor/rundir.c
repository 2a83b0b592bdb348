/* SPDX-License-Identifier: MIT */
#include "supervisor/rundir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "common/fileio.h"
#include "common/strv.h"
#include "common/util.h"

struct RunDirs {
        char *path;
        int fd; /* O_DIRECTORY of runs/ */
};

static bool valid_sid(const char *sid)
{
        /* ses_ + base62: one path component, never "." or ".." */
        return sid && *sid && sid[0] != '.' && !strchr(sid, '/') && strlen(sid) < 64;
}

int rundirs_open(const char *path, RunDirs **ret)
{
        if (mkdir(path, 0750) < 0 && errno != EEXIST)
                return negative_errno();
        RunDirs *d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        d->path = strdup(path);
        d->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (!d->path || d->fd < 0) {
                int r = d->path ? negative_errno() : -ENOMEM;
                rundirs_free(d);
                return r;
        }
        *ret = d;
        return 0;
}

RunDirs *rundirs_free(RunDirs *d)
{
        if (!d)
                return NULL;
        safe_close(d->fd);
        free(d->path);
        free(d);
        return NULL;
}

int rundir_create(RunDirs *d, const char *sid)
{
        if (!valid_sid(sid))
                return -EINVAL;
        if (mkdirat(d->fd, sid, 0750) < 0 && errno != EEXIST)
                return negative_errno();
        return 0;
}

char *rundir_path(RunDirs *d, const char *sid, const char *name)
{
        char *p;
        if ((name ? asprintf(&p, "%s/%s/%s", d->path, sid, name)
                  : asprintf(&p, "%s/%s", d->path, sid)) < 0)
                return NULL;
        return p;
}

char *rundir_tape_path(RunDirs *d, const char *sid, const char *twin)
{
        char *p;
        return asprintf(&p, "%s/%s/%s.tape.jsonl", d->path, sid, twin) < 0 ? NULL : p;
}

int rundir_write(RunDirs *d, const char *sid, const char *name, const void *data, size_t len,
                 bool atomic)
{
        if (!valid_sid(sid))
                return -EINVAL;
        char rel[128];
        if ((size_t)snprintf(rel, sizeof(rel), "%s/%s", sid, name) >= sizeof(rel))
                return -ENAMETOOLONG;
        /* a run's file is kept whole or not at all: the old content or the whole new one */
        return write_file_at(d->fd, rel, data, len, 0640,
                             atomic ? WRITE_FILE_ATOMIC | WRITE_FILE_SYNC : 0);
}

int rundir_write_json(RunDirs *d, const char *sid, const char *name, const json_t *doc)
{
        _cleanup_free_ char *s = json_dumps(doc, JSON_INDENT(2) | JSON_ENCODE_ANY);
        if (!s)
                return -ENOMEM;
        char rel[128];
        if (!valid_sid(sid))
                return -EINVAL;
        if ((size_t)snprintf(rel, sizeof(rel), "%s/%s", sid, name) >= sizeof(rel))
                return -ENAMETOOLONG;
        /* atomic, not synced: sandbox.json mirrors the registry's record at every
         * transition, and the registry is what a power cut is recovered from */
        return write_file_at(d->fd, rel, s, strlen(s), 0640, WRITE_FILE_ATOMIC);
}

bool rundir_exists(RunDirs *d, const char *sid)
{
        return valid_sid(sid) && faccessat(d->fd, sid, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

int rundir_remove(RunDirs *d, const char *sid)
{
        if (!valid_sid(sid))
                return -EINVAL;
        return rm_rf_at(d->fd, sid);
}

int rundir_list_older(RunDirs *d, int64_t before, char ***ret)
{
        _cleanup_strv_free_ char **l = strv_new();
        if (!l)
                return -ENOMEM;
        int fd = openat(d->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        DIR *dir = fdopendir(fd);
        if (!dir) {
                safe_close(fd);
                return negative_errno();
        }
        int r = 0;
        struct dirent *de;
        while ((de = readdir(dir))) {
                struct stat st;
                if (!valid_sid(de->d_name) ||
                    fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISDIR(st.st_mode) || st.st_mtime >= before)
                        continue;
                if ((r = strv_extend(&l, de->d_name)) < 0)
                        break;
        }
        closedir(dir);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(l);
        return 0;
}
