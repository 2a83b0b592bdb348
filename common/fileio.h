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

/*
 * Writes len bytes of data to path (relative to dirfd), created with mode or truncated.
 * With atomic, the bytes go to a temporary file in the same directory that is then
 * renamed over path, so readers see the old or the new content, never a part. Returns 0
 * or negative errno (-EIO for a short write).
 */
int write_file_at(int dirfd, const char *path, const void *data, size_t len, mode_t mode,
                  int atomic);

/*
 * Removes name (relative to dirfd) and, when it is a directory, everything below it,
 * without following symbolic links. Returns 0 (also when name does not exist) or the
 * first negative errno met (the rest is still attempted).
 */
int rm_rf_at(int dirfd, const char *name);

/* mkdir -p: creates path and missing parents with mode. 0 or negative errno. */
int mkdir_p(const char *path, mode_t mode);
