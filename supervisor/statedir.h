/* SPDX-License-Identifier: MIT */
/*
 * The state directory (DESIGN.md "Persistence"): one pomed at a time (flock),
 * the deployment's twin secret and the generated `local` API key (both 0600,
 * created on first start), runs/, and pomed.json — how `pome` finds a running
 * pomed without configuration.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/token.h"

typedef struct StateDir {
        char *path; /* absolute */
        char *runs; /* <path>/runs */
        int lock_fd;
        uint8_t secret[TOKEN_SECRET_LEN];
        char *api_key;          /* the generated key of team `local` (plain text) */
        mode_t mode;            /* the directory's permission bits when opened */
        bool world_readable;    /* others may read or enter it (warned at start, doctor) */
        char *info_runtime_dir; /* where statedir_write_info() also wrote pomed.json */
} StateDir;

/*
 * Opens (creating as needed, mode 0750 before the umask) the state directory at path, takes
 * its lock, loads or creates twin-secret (always 0600) and api-key (0640 with the directory's
 * group when that group may enter the directory, else 0600; an existing key of ours is
 * brought in line). Returns 0, -EBUSY when another pomed
 * holds the lock (its pid, if known, in *ret_holder), -EINVAL for a damaged secret
 * file, or the errno of a failed file operation (err names the file).
 */
int statedir_open(const char *path, StateDir **ret, pid_t *ret_holder, char *err, size_t errlen);

StateDir *statedir_free(StateDir *s);

/*
 * Writes <path>/pomed.json atomically (tmp + rename, mode 0644): pid, URLs, version, the
 * state dir, and agent (borrowed, may be NULL: pomed.conf's defaults of a sealed agent's
 * limits, {memory, pids, output}, which `pome run` beside it applies). With runtime_dir (systemd's
 * RuntimeDirectory=, /run/pome for the system unit, $XDG_RUNTIME_DIR/pome for a user one), the same
 * file goes there too: that is where `pome` run from any directory finds this pomed. 0 or negative
 * errno.
 */
int statedir_write_info(StateDir *s, const char *runtime_dir, const char *control_url,
                        const char *gateway_url, const json_t *agent);

/*
 * Writes <path>/reload.json atomically (mode 0644) after a reload (SIGHUP): {pid, generation
 * (1 for the first reload of this pomed, then one more each), ok, message}, which
 * `pomed --reload` waits for. 0 or negative errno.
 */
int statedir_write_reload(StateDir *s, unsigned generation, bool ok, const char *message);

/* Removes every pomed.json statedir_write_info() wrote (at a clean exit). */
void statedir_remove_info(StateDir *s);
