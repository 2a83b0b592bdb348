/* SPDX-License-Identifier: MIT */
/*
 * Where pome finds pomed and the team API key, with no configuration needed
 * for the embedded default (pomed and pome on one host, same state dir) nor for a
 * pomed under systemd, from any directory:
 *   state dir  $POME_STATE_DIR, else the .pome directory of the working directory or of
 *              its nearest parent that has one (as git finds .git; not above $HOME's
 *              parent), else state_dir of the pomed.json a pomed under systemd writes to
 *              its RuntimeDirectory= ($XDG_RUNTIME_DIR/pome/ for a user unit, then
 *              /run/pome/), else /var/lib/pome
 *   API URL    --api-url, else $POME_API_URL, else control_url of that pomed.json or
 *              of <state dir>/pomed.json (written by a running pomed); a state dir with
 *              an api-key and no pomed.json is a stopped pomed's, and is refused (never
 *              the default); else http://127.0.0.1:7070
 *   API key    $POME_API_KEY, else the first line of <state dir>/api-key
 *              (pomed generates it on first start, mode 0600, or 0640 for the state
 *              directory's group: the system unit's `pome` group)
 */
#pragma once

#include <stdint.h>

#define CONFIG_DEFAULT_API_URL   "http://127.0.0.1:7070"
#define CONFIG_DEFAULT_STATE_DIR "/var/lib/pome"
#define CONFIG_SYSTEM_INFO       "/run/pome/pomed.json" /* the system unit's RuntimeDirectory= */

typedef struct Config {
        char *api_url;        /* no trailing '/' */
        char *api_url_source; /* for messages: "--api-url", "$POME_API_URL", a path, "default" */
        char *api_key;
} Config;

/*
 * Resolves the API URL and key. api_url_override (--api-url) may be NULL.
 * Prints its own one-line errors on stderr, then returns -EINVAL (a bad URL),
 * -EHOSTDOWN (the state dir's pomed is not running: its api-key is there, its
 * pomed.json not), -ENOKEY (no key anywhere: the message says where it looked),
 * -EACCES (the key file exists but cannot be read), -ENOMEM.
 */
int config_load(const char *api_url_override, Config *ret);

/*
 * config_load() without the key, for `pome doctor`: the API URL in ret (api_key NULL), the
 * state dir pome settled on and the pomed.json that says where pomed is (new strings; the
 * file need not exist). -EINVAL (a bad URL, printed), -ENOMEM; -EHOSTDOWN (printed) with
 * every output filled but ret->api_url NULL when that state dir's pomed is not running.
 */
int config_locate(const char *api_url_override, Config *ret, char **ret_state_dir, char **ret_info);

/*
 * pomed.conf's defaults of a sealed agent's limits (its `agent:` memory, pids and output), as
 * the pomed pome would talk to wrote them in its pomed.json (the state dir's, else the
 * runtime directory's it was found by): each 0 when that pomed set none, or there is no
 * such pomed.json.
 */
void config_agent_defaults(uint64_t *ret_memory, uint64_t *ret_pids, uint64_t *ret_output);

/* Frees what a Config owns and zeroes it. Accepts a zeroed Config. */
void config_done(Config *c);

/*
 * Sets the URL `pome --api-url URL COMMAND` gave before the command, used when
 * the command itself has no --api-url. url is borrowed (argv).
 */
void config_set_global_api_url(const char *url);
