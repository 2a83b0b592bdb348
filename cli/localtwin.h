/* SPDX-License-Identifier: MIT */
/*
 * A twin served in-process over HTTP on an sd-event loop: the twin engine (pods/twin) behind
 * the shared front (pods/front), with no supervisor and no account (CONTRACT.md "A local twin
 * as a process"). `pome twin start` serves one; `pome run --local` serves one per twin of a
 * task, each on its own loopback port, its tape rows kept in memory for grading.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "pods/twin/twin.h"

typedef struct LocalTwin LocalTwin;

typedef struct LocalTwinConfig {
        const TwinKind *kind;
        const json_t *seed;      /* borrowed: the boot seed, also what /admin/reset returns to */
        const char *secret;      /* the token HMAC key, secret_len bytes as given; copied */
        size_t secret_len;       /* > 0 */
        const char *admin_token; /* X-Admin-Token for the admin routes; NULL = loopback callers;
                                  * borrowed, must outlive the twin */
        const char *host;        /* numeric bind address ("127.0.0.1", "::1", "0.0.0.0") */
        uint16_t port;           /* 0 = an ephemeral port */
        const char *tape_path;   /* the tape file (created or appended to); NULL = an unlinked
                                  * temporary file that dies with the twin */
        bool keep_rows;          /* also keep a copy of every tape row in memory
                                  * (local_twin_rows): what `pome run --local` grades, since
                                  * a file can be changed behind the twin's back */
} LocalTwinConfig;

/*
 * Builds the twin from cfg->seed and starts listening on e. Returns 0 with the twin in *ret;
 * -EINVAL when the seed is refused (err says why, errlen bytes), the errno of opening the tape
 * or of listening (-EADDRINUSE…; err says which), -ENOMEM.
 */
int local_twin_new(sd_event *e, const LocalTwinConfig *cfg, LocalTwin **ret, char *err,
                   size_t errlen);

/* Stops listening, closes the tape, frees the twin. Accepts NULL; returns NULL. */
LocalTwin *local_twin_free(LocalTwin *lt);

/* "http://host:port" the twin listens on (borrowed). */
const char *local_twin_base(const LocalTwin *lt);

/* The twin's kind. */
const TwinKind *local_twin_kind(const LocalTwin *lt);

/* Rows on the twin's tape so far. */
size_t local_twin_tape_rows(const LocalTwin *lt);

/* With keep_rows, the tape's rows so far as a JSON array (borrowed, valid while the twin is;
 * an /admin/reset empties it with the tape); NULL without. */
const json_t *local_twin_rows(const LocalTwin *lt);

/*
 * Credentials for session sid, valid for a day: {session_id, rest_url, session_token,
 * provider_token? (the vendor's main one), provider_credentials? (as pomed's
 * provider_credentials.<twin>: front_provider_credentials), expires_at} (a new object),
 * NULL on OOM or a sid no token can carry.
 */
json_t *local_twin_mint(LocalTwin *lt, const char *sid);

/*
 * The twin's world as a run ends, as a pod's export makes it (pods/pod/main.c): what came due
 * by now (a scheduled Slack message) is applied first and each such change goes on the tape
 * as its own row (origin "twin", under the mount of session sid), then the world is returned
 * unredacted as a new reference (a copy: later calls do not change it). Returns 0, -ENOMEM,
 * or the errno of advancing the twin.
 */
int local_twin_export(LocalTwin *lt, const char *sid, json_t **ret);

/*
 * Where the twins' images are (sandbox-images/): $POME_IMAGES_DIR, else
 * <dir of pome>/../share/pome/sandbox-images, else the source tree's, else
 * /usr/share/pome/sandbox-images. A new string, NULL on OOM.
 */
char *local_images_dir(void);

/*
 * The seed called name_or_path of twin: a JSON file when it holds a '/' or ends in ".json",
 * else <images>/<twin>/seeds/<name>.json. Returns 0 with a new reference, -ENOENT or -EINVAL
 * (err says which file and why), -ENOMEM.
 */
int local_seed_load(const char *twin, const char *name_or_path, json_t **ret, char *err,
                    size_t errlen);
