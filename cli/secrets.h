/* SPDX-License-Identifier: MIT */
/*
 * A sandbox's secrets on the client side: masking them for display, the
 * shell variables a created sandbox exports (CONTRACT.md "Sandbox API
 * shapes", secrets file) and writing those to a mode-0600 file.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * New masked form of a secret for display: its first 4 characters and
 * "…(hidden)" ("eyJh…(hidden)"), or just "(hidden)" when it is shorter than
 * 12 characters. NULL on OOM.
 */
char *secrets_mask(const char *secret);

/*
 * Masks, in place, the secrets a sandbox object may carry: session_token,
 * agent_token and every value under provider_credentials except addresses
 * (keys ending in _base or _url, e.g. Stripe's api_base). 0 or -ENOMEM.
 */
int secrets_mask_json(json_t *sandbox);

/* Whether a provider credential field is an address, not a secret: keys ending in _base or _url. */
bool secrets_credential_is_address(const char *key);

typedef struct SandboxVar {
        char *name;  /* POME_… */
        char *value; /* never NULL */
        bool secret;
} SandboxVar;

typedef struct SandboxVars {
        SandboxVar *vars;
        size_t n;
} SandboxVars;

/*
 * The variables of a created sandbox (the 201 body of POST /v1/sandboxes), in
 * this order: POME_AUTH_TOKEN (session_token), POME_SESSION_ID, POME_TWIN_URL
 * (first twin's rest_url), POME_TWIN_NAMES (comma-separated), then per twin in
 * the order of `twins`: POME_<TWIN>_REST_URL, POME_<TWIN>_MCP_URL and one
 * POME_<TWIN>_<FIELD> per provider credential field (POME_GITHUB_TOKEN,
 * POME_SLACK_TOKEN, POME_SLACK_USER_TOKEN, POME_STRIPE_API_KEY,
 * POME_STRIPE_API_BASE). Credentials
 * of twins not in the sandbox are left out.
 * Returns 0, -EBADMSG (no session_id, session_token or twins), -ENOMEM.
 */
int secrets_vars_from_sandbox(const json_t *created, SandboxVars *ret);

/* Frees what a SandboxVars owns (wiping secret values) and zeroes it. Accepts a zeroed one. */
void secrets_vars_done(SandboxVars *v);

/*
 * Prints `export NAME='value'` lines (values single-quoted for any POSIX
 * shell). Secret values are masked unless show_secrets. Returns 0 or -EIO.
 */
int secrets_print_env(FILE *f, const SandboxVars *v, bool show_secrets);

/*
 * A secrets file being written: created before the sandbox exists, so a bad
 * path fails before a slot is taken, and renamed into place once it is full,
 * so the file at path is never partial and never readable by others.
 */
typedef struct SecretsFile {
        char *path;
        char *tmp_path; /* "<dir>/.<name>.XXXXXX", mode 0600 from the start */
        int fd;
} SecretsFile;

/*
 * Creates the temporary file next to path. Returns 0, -EEXIST (path exists and
 * is not a regular file: a directory, a device, a symlink), or the negative
 * errno of mkostemp/fchmod (-EACCES, -ENOENT…).
 */
int secrets_file_prepare(const char *path, SecretsFile *ret);

/* Writes the export lines (real values), then renames the file to its path. 0 or negative errno. */
int secrets_file_commit(SecretsFile *f, const SandboxVars *v);

/* Removes the temporary file, if any, and frees f. Safe after commit and on a zeroed one. */
void secrets_file_done(SecretsFile *f);
