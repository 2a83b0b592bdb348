/* SPDX-License-Identifier: MIT */
#include "common/fileio.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "common/util.h"

int read_file_at(int dirfd, const char *path, size_t max, char **ret, size_t *ret_len)
{
        _cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        struct stat st;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        size_t cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
        if (cap > max + 1)
                cap = max + 1;
        _cleanup_free_ char *buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        size_t n = 0;
        for (;;) {
                if (n + 1 >= cap) {
                        if (cap > max) /* max + 1 bytes read: there is more than max */
                                return -EFBIG;
                        size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
                        char *b = realloc(buf, ncap + 1);
                        if (!b)
                                return -ENOMEM;
                        buf = b;
                        cap = ncap + 1;
                }
                ssize_t k = read(fd, buf + n, cap - 1 - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        break;
                n += (size_t)k;
                if (n > max)
                        return -EFBIG;
        }
        buf[n] = 0;
        if (ret_len)
                *ret_len = n;
        *ret = TAKE_PTR(buf);
        return 0;
}

int write_all(int fd, const void *data, size_t len)
{
        const char *p = data;
        while (len > 0) {
                ssize_t k = write(fd, p, len);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        return -EIO;
                p += k;
                len -= (size_t)k;
        }
        return 0;
}

int write_file_at(int dirfd, const char *path, const void *data, size_t len, mode_t mode, int flags)
{
        if (!(flags & WRITE_FILE_ATOMIC)) {
                _cleanup_close_ int fd = openat(
                        dirfd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
                if (fd < 0)
                        return negative_errno();
                return write_all(fd, data, len);
        }
        char tmp[PATH_MAX];
        const char *slash = strrchr(path, '/');
        int n = slash ? snprintf(tmp, sizeof(tmp), "%.*s/.#%s.tmp", (int)(slash - path), path,
                                 slash + 1)
                      : snprintf(tmp, sizeof(tmp), ".#%s.tmp", path);
        if (n < 0 || (size_t)n >= sizeof(tmp))
                return -ENAMETOOLONG;
        int r;
        {
                _cleanup_close_ int fd = openat(
                        dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
                if (fd < 0)
                        return negative_errno();
                r = write_all(fd, data, len);
                if (r >= 0 && (flags & WRITE_FILE_SYNC) && fdatasync(fd) < 0)
                        r = negative_errno();
        }
        if (r >= 0 && renameat(dirfd, tmp, dirfd, path) < 0)
                r = negative_errno();
        if (r < 0)
                (void)unlinkat(dirfd, tmp, 0);
        return r;
}

int rm_rf_at(int at, const char *name)
{
        if (unlinkat(at, name, 0) == 0 || errno == ENOENT)
                return 0;
        if (errno != EISDIR && errno != EPERM)
                return negative_errno();
        _cleanup_close_ int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        DIR *d = fdopendir(fd);
        if (!d)
                return negative_errno();
        TAKE_FD(fd);
        int r = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                int k = rm_rf_at(dirfd(d), de->d_name);
                if (k < 0 && r == 0)
                        r = k;
        }
        closedir(d);
        if (unlinkat(at, name, AT_REMOVEDIR) < 0 && errno != ENOENT && r == 0)
                r = negative_errno();
        return r;
}

int mkdir_p(const char *path, mode_t mode)
{
        _cleanup_free_ char *p = strdup(path);
        if (!p)
                return -ENOMEM;
        for (char *s = p + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = 0;
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return negative_errno();
                *s = '/';
        }
        if (mkdir(p, mode) < 0 && errno != EEXIST)
                return negative_errno();
        return 0;
}
