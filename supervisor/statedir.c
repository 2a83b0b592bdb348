/* SPDX-License-Identifier: MIT */
#include "supervisor/statedir.h"

#include <fcntl.h>
#include <limits.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "common/fileio.h"
#include "common/json-util.h"
#include "common/util.h"

/* Reads a small secret file into buf (len bytes at most: more is -EFBIG), leaving no copy
 * of it on the heap. */
static int read_small(int dirfd, const char *name, char *buf, size_t len, size_t *ret_n)
{
        _cleanup_free_ char *data = NULL;
        size_t n;
        int r = read_file_at(dirfd, name, len, &data, &n);
        if (r < 0)
                return r;
        memcpy(buf, data, n);
        explicit_bzero(data, n);
        *ret_n = n;
        return 0;
}

/* Creates name with content, mode and group (gid; (gid_t)-1: the creator's), failing if
 * it exists (first start only). */
static int write_new_secret(int dirfd, const char *name, const void *data, size_t n, mode_t mode,
                            gid_t gid)
{
        _cleanup_close_ int fd =
                openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return negative_errno();
        /* fchmod: the umask must not decide who reads a secret; fchown: nor the group of
         * whoever started pomed (root's own by hand, pome under the unit). A user that may
         * not give it that group (not a member) keeps it to itself (0600), as key_access
         * does at every later start. */
        if (gid != (gid_t)-1 && gid != getegid() && fchown(fd, (uid_t)-1, gid) < 0) {
                if (errno != EPERM)
                        return negative_errno();
                mode &= 0700;
        }
        if (fchmod(fd, mode) < 0 || write(fd, data, n) != (ssize_t)n || fsync(fd) < 0)
                return negative_errno();
        return 0;
}

/*
 * The team key is as readable as the directory it is in lets it be: 0640 with the
 * directory's group when that group may enter it (StateDirectoryMode=0750 under the unit's
 * Group=pome: the operators' group), else 0600. An existing key is brought in line, so
 * changing the directory's mode is all an operator does.
 */
static int key_access(int dirfd, const struct stat *dir, mode_t *ret_mode)
{
        bool group = (dir->st_mode & (S_IRGRP | S_IXGRP)) == (S_IRGRP | S_IXGRP);
        *ret_mode = group ? 0640 : 0600;
        struct stat st;
        if (fstatat(dirfd, "api-key", &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : negative_errno();
        if (st.st_uid != geteuid())
                return 0; /* not ours to change (a key an operator put there) */
        if (group && st.st_gid != dir->st_gid &&
            fchownat(dirfd, "api-key", (uid_t)-1, dir->st_gid, AT_SYMLINK_NOFOLLOW) < 0) {
                /* EPERM: not root nor in that group; the key stays ours alone */
                if (errno != EPERM)
                        return negative_errno();
                *ret_mode = 0600;
        }
        if ((st.st_mode & 07777) != *ret_mode && fchmodat(dirfd, "api-key", *ret_mode, 0) < 0)
                return negative_errno();
        return 0;
}

StateDir *statedir_free(StateDir *s)
{
        if (!s)
                return NULL;
        safe_close(s->lock_fd);
        free(s->path);
        free(s->runs);
        free(s->info_runtime_dir);
        if (s->api_key)
                explicit_bzero(s->api_key, strlen(s->api_key));
        free(s->api_key);
        explicit_bzero(s->secret, sizeof(s->secret));
        free(s);
        return NULL;
}

int statedir_open(const char *path, StateDir **ret, pid_t *ret_holder, char *err, size_t errlen)
{
        int r = mkdir_p(path, 0755);
        if (r < 0) {
                snprintf(err, errlen, "cannot create state directory %s: %s", path, strerror(-r));
                return r;
        }
        StateDir *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->lock_fd = -1;
        char abs[PATH_MAX];
        if (!realpath(path, abs) || !(s->path = strdup(abs)) ||
            asprintf(&s->runs, "%s/runs", abs) < 0) {
                r = errno ? negative_errno() : -ENOMEM;
                snprintf(err, errlen, "%s: %s", path, strerror(-r));
                s->runs = NULL;
                statedir_free(s);
                return r;
        }
        _cleanup_close_ int dfd = open(s->path, O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0) {
                r = negative_errno();
                snprintf(err, errlen, "%s: %s", s->path, strerror(-r));
                statedir_free(s);
                return r;
        }
        s->lock_fd = openat(dfd, "pomed.lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (s->lock_fd < 0 || flock(s->lock_fd, LOCK_EX | LOCK_NB) < 0) {
                r = errno == EWOULDBLOCK ? -EBUSY : negative_errno();
                if (r == -EBUSY && ret_holder) {
                        char buf[32] = "";
                        ssize_t n = pread(s->lock_fd, buf, sizeof(buf) - 1, 0);
                        *ret_holder = n > 0 ? (pid_t)atoi(buf) : 0;
                }
                snprintf(err, errlen, "%s/pomed.lock: %s", s->path,
                         r == -EBUSY ? "another pomed is using this state directory"
                                     : strerror(-r));
                statedir_free(s);
                return r;
        }
        char pid[32];
        int pl = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
        if (ftruncate(s->lock_fd, 0) < 0 || pwrite(s->lock_fd, pid, (size_t)pl, 0) < 0) {
                /* the pid in the lock file is a courtesy for error messages only */
        }
        r = mkdir(s->runs, 0750) < 0 && errno != EEXIST ? negative_errno() : 0;
        if (r < 0) {
                snprintf(err, errlen, "%s: %s", s->runs, strerror(-r));
                statedir_free(s);
                return r;
        }

        /* twin-secret: 32 random bytes, created once, never rotated implicitly (it signs
         * every outstanding token). */
        size_t n = 0;
        char buf[256];
        r = read_small(dfd, "twin-secret", buf, sizeof(buf), &n);
        if (r == -ENOENT) {
                r = token_random_bytes(s->secret, sizeof(s->secret));
                if (r >= 0)
                        r = write_new_secret(dfd, "twin-secret", s->secret, sizeof(s->secret), 0600,
                                             (gid_t)-1);
        } else if (r >= 0 && n != sizeof(s->secret)) {
                snprintf(err, errlen, "%s/twin-secret: expected %zu bytes, found %zu", s->path,
                         sizeof(s->secret), n);
                statedir_free(s);
                return -EINVAL;
        } else if (r >= 0)
                memcpy(s->secret, buf, sizeof(s->secret));
        if (r < 0) {
                snprintf(err, errlen, "%s/twin-secret: %s", s->path, strerror(-r));
                statedir_free(s);
                return r;
        }

        /* api-key: "pome_" + 32 base62, the `local` team's key that `pome` picks up. */
        struct stat dst;
        mode_t key_mode = 0600;
        r = fstat(dfd, &dst) < 0 ? negative_errno() : key_access(dfd, &dst, &key_mode);
        if (r < 0) {
                snprintf(err, errlen, "%s/api-key: cannot set its mode: %s", s->path, strerror(-r));
                statedir_free(s);
                return r;
        }
        s->world_readable = (dst.st_mode & (S_IROTH | S_IXOTH)) != 0;
        s->mode = dst.st_mode & 07777;
        r = read_small(dfd, "api-key", buf, sizeof(buf) - 1, &n);
        if (r == -ENOENT) {
                r = token_random_id("pome_", 32, &s->api_key);
                if (r >= 0) {
                        char line[64];
                        int ll = snprintf(line, sizeof(line), "%s\n", s->api_key);
                        r = write_new_secret(dfd, "api-key", line, (size_t)ll, key_mode,
                                             key_mode & S_IRGRP ? dst.st_gid : (gid_t)-1);
                }
        } else if (r >= 0) {
                buf[n] = 0;
                buf[strcspn(buf, "\r\n")] = 0;
                if (!startswith(buf, "pome_") || strlen(buf) < 20) {
                        snprintf(err, errlen, "%s/api-key: not a pome_ key", s->path);
                        statedir_free(s);
                        return -EINVAL;
                }
                s->api_key = strdup(buf);
                if (!s->api_key)
                        r = -ENOMEM;
        }
        explicit_bzero(buf, sizeof(buf));
        if (r < 0) {
                snprintf(err, errlen, "%s/api-key: %s", s->path, strerror(-r));
                statedir_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

/* Writes <dir>/<name> atomically (tmp + rename), mode 0644. */
static int write_public_at(const char *dir, const char *name, const json_t *j)
{
        _cleanup_free_ char *tmp = NULL, *dst = NULL;
        if (asprintf(&tmp, "%s/.%s.tmp", dir, name) < 0 || asprintf(&dst, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        if (json_dump_file(j, tmp, JSON_INDENT(2)) < 0)
                return -EIO;
        /* Not a secret: how `pome` finds this pomed, whoever runs it. */
        (void)chmod(tmp, 0644);
        if (rename(tmp, dst) < 0)
                return negative_errno();
        return 0;
}

static int write_info_at(const char *dir, const json_t *j)
{
        return write_public_at(dir, "pomed.json", j);
}

int statedir_write_reload(StateDir *s, unsigned generation, bool ok, const char *message)
{
        _cleanup_json_ json_t *j =
                json_pack("{s:i, s:I, s:b, s:s}", "pid", (int)getpid(), "generation",
                          (json_int_t)generation, "ok", ok, "message", message);
        return j ? write_public_at(s->path, "reload.json", j) : -ENOMEM;
}

int statedir_write_info(StateDir *s, const char *runtime_dir, const char *control_url,
                        const char *gateway_url, const json_t *agent)
{
        _cleanup_json_ json_t *j = json_pack("{s:i, s:s, s:s, s:s, s:s}", "pid", (int)getpid(),
                                             "control_url", control_url, "gateway_url", gateway_url,
                                             "version", POME_VERSION, "state_dir", s->path);
        if (!j || (json_object_size(agent) > 0 && json_object_set(j, "agent", (json_t *)agent) < 0))
                return -ENOMEM;
        int r = write_info_at(s->path, j);
        if (r < 0)
                return r;
        if (runtime_dir) {
                free(s->info_runtime_dir);
                s->info_runtime_dir = strdup(runtime_dir);
                if (!s->info_runtime_dir)
                        return -ENOMEM;
                r = write_info_at(runtime_dir, j);
        }
        return r;
}

void statedir_remove_info(StateDir *s)
{
        const char *dirs[] = {s->path, s->info_runtime_dir};
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                _cleanup_free_ char *p = NULL;
                if (dirs[i] && asprintf(&p, "%s/pomed.json", dirs[i]) >= 0)
                        (void)unlink(p);
        }
}
