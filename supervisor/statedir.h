/* SPDX-License-Identifier: MIT */
/*
 * The state directory (DESIGN.md "Persistence"): one pomed at a time (flock),
 * the deployment's twin secret and the generated `local` API key (both 0600,
 * created on first start), runs/, and pomed.json — how `pome` finds a running
 * pomed without configuration.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/token.h"

typedef struct StateDir {
        char *path; /* absolute */
        char *runs; /* <path>/runs */
        int lock_fd;
        uint8_t secret[TOKEN_SECRET_LEN];
        char *api_key; /* the generated key of team `local` (plain text) */
} StateDir;

/*
 * Opens (creating as needed, mode 0755) the state directory at path, takes its lock,
 * loads or creates twin-secret and api-key. Returns 0, -EBUSY when another pomed
 * holds the lock (its pid, if known, in *ret_holder), -EINVAL for a damaged secret
 * file, or the errno of a failed file operation (err names the file).
 */
int statedir_open(const char *path, StateDir **ret, pid_t *ret_holder, char *err, size_t errlen);

StateDir *statedir_free(StateDir *s);

/* Writes <path>/pomed.json atomically (tmp + rename): pid, URLs, version. */
int statedir_write_info(StateDir *s, const char *control_url, const char *gateway_url);

/* Removes pomed.json (at a clean exit). */
void statedir_remove_info(StateDir *s);
