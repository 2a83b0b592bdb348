/* SPDX-License-Identifier: MIT */
/*
 * Whole-file reads and writes, directory trees: the file idioms every program of
 * the project needs, written once. Paths are relative to dirfd (AT_FDCWD for the
 * working directory); nothing follows a symbolic link in its last component.
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/*
 * Reads the whole file at path (relative to dirfd) into a new NUL-terminated buffer
 * (*ret_len excludes the NUL; ret_len may be NULL). Works for files whose size stat(2)
 * does not know (/proc, /sys). Returns 0, -EFBIG when it holds more than max bytes,
 * -ENOMEM, or the errno of open/read (-ELOOP for a symbolic link).
 */
int read_file_at(int dirfd, const char *path, size_t max, char **ret, size_t *ret_len);

/* Writes all len bytes to a blocking fd, retrying on EINTR. 0, -EIO (no progress), -errno. */
int write_all(int fd, const void *data, size_t len);

/* write_file_at flags */
enum {
        WRITE_FILE_ATOMIC =
                1 << 0,           /* a temporary file renamed over path: old or new, never a part */
        WRITE_FILE_SYNC = 1 << 1, /* with ATOMIC: the bytes synced (fdatasync) before the rename,
                                     so a power cut leaves the old file or the whole new one */
};

/*
 * Writes len bytes of data to path (relative to dirfd), created with mode or truncated.
 * flags: WRITE_FILE_ATOMIC, WRITE_FILE_SYNC (0 or 1 as before: plain or atomic). A write
 * that fails (a full disk: ENOSPC) leaves an atomic path as it was and no temporary file.
 * Returns 0 or negative errno (-EIO for a short write).
 */
int write_file_at(int dirfd, const char *path, const void *data, size_t len, mode_t mode,
                  int flags);

/*
 * Removes name (relative to dirfd) and, when it is a directory, everything below it,
 * without following symbolic links. Returns 0 (also when name does not exist) or the
 * first negative errno met (the rest is still attempted).
 */
int rm_rf_at(int dirfd, const char *name);

/* mkdir -p: creates path and missing parents with mode. 0 or negative errno. */
int mkdir_p(const char *path, mode_t mode);
