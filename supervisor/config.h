/* SPDX-License-Identifier: MIT */
/*
 * pomed.conf: YAML (read through common/yamljson.h). An embedded default
 * makes the file optional (DESIGN.md "Configuration"): loopback listeners,
 * state dir ./.pome, one team `local` whose key is generated into the state dir.
 * A file overlays the default key by key; unknown keys are errors (a typo must
 * not silently fall back to a default).
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pods/grade/judges.h"

typedef struct TeamConfig {
        char *id;
        char **key_hashes;       /* lower-case hex SHA-256 of each API key, NULL-terminated */
        unsigned sessions_quota; /* concurrency slots */
        char *plan_tier;
        uid_t *unix_uids; /* unix_users: local users who read this team's sandboxes on the bus */
        size_t n_unix_uids;
} TeamConfig;

/*
 * fleet: (docs/fleet.md) — this pomed is one node of a fleet whose slots, membership and
 * teams live in etcd (supervisor/ledger.h). Absent: the local ledger.
 */
typedef struct FleetConfig {
        char *node;              /* this node's name, [a-z0-9]{1,12}: in its sandbox ids
                                  * (ses_<node>_…), its membership key and its metrics */
        char **endpoints;        /* etcd client URLs (http:// or https://), NULL-terminated */
        char *prefix;            /* key prefix, "/pome" by default; no trailing '/' */
        char *cert, *key;        /* TLS client certificate and its key (PEM); NULL: none */
        char *ca;                /* CA bundle to verify etcd's certificate; NULL: the system's */
        char *advertise_url;     /* this node's control URL as the front door reaches it, kept in
                                  * its membership key; NULL: none */
        uint64_t lease_ttl_usec; /* this node's lease; its slots outlive a crash this long */
        uint64_t timeout_usec;   /* one etcd request (admission, leave) */
        uint64_t compaction_interval_usec; /* etcd's history compacted to the revision seen one
                                            * interval ago, every interval; 0: never */
} FleetConfig;

#define FLEET_NODE_MAX 12u

typedef struct Config {
        char *path;   /* the main file asked for, NULL for the embedded default alone */
        char **files; /* the files applied, in order: path (if it exists), then its drop-ins */
        char *control_address;
        uint16_t control_port;
        char *gateway_address;
        uint16_t gateway_port;
        char *public_url; /* base URL agents reach the gateway at; NULL = from the listener */
        char *state_dir;
        char *runtime_dir; /* NULL = a private directory under /run (or $TMPDIR) */
        char *images_dir;  /* NULL = found next to the binaries / installed location */
        char *policies_dir;
        char *ui_dir; /* the dashboard's files (supervisor/ui.h); NULL = found */
        char *pod_exec;
        char *pod_user;            /* user the pods run as; NULL = pome-pod, else nobody (warned) */
        uint32_t pod_uid_first;    /* pod_uid_range: a uid (= gid) of its own for each pod */
        uint32_t pod_uid_count;    /* 0 = off: every pod runs as pod_user */
        char *bus;                 /* "system", "user", "none" or a D-Bus address */
        bool durability_full;      /* durability: full — each tape write and registry commit is
                                    * synced (fdatasync) before it is acknowledged */
        bool allow_unlimited_pods; /* start sandboxes although pods get no cgroup (no memory
                                    * or pids limit); default false: creates are refused */
        char *cgroup_parent;       /* cgroup path (from each hierarchy's root) to build the pod tree
                                    * under; NULL = pomed's own cgroup */

        uint64_t lifetime_usec;     /* cap of a sandbox's lifetime clock (≤ 30 min) */
        uint64_t idle_timeout_usec; /* default idle clock, 0 = off */
        uint64_t start_timeout_usec;
        uint64_t request_timeout_usec; /* gateway deadline for one pod call */
        uint64_t retention_usec;       /* how long an ended sandbox's record, run directory and 410
                                        * answers are kept; 0 = forever */
        uint64_t drain_timeout_usec;   /* SIGTERM: how long calls in flight may take to finish */
        uint64_t max_tape;             /* bytes of tape per sandbox before it ends (tape_full) */
        unsigned max_pending_calls;    /* calls queued or in flight per pod before 503 busy */
        unsigned max_starting;         /* sandboxes starting their pods at once; more wait */
        unsigned max_queued_creates;   /* creates waiting for a start beyond that: 503 busy */
        size_t max_body;               /* bytes, both listeners */
        unsigned max_connections;      /* per listener */
        unsigned max_connections_per_client; /* per listener and client address */
        uint64_t header_timeout_usec; /* request line + headers must arrive within (per request) */
        uint64_t body_timeout_usec;   /* a request body must arrive within */

        /* pool_size: idle pods kept ready per twin kind (podpool.h); 0 = no pool */
        unsigned pool_size; /* every kind not named below */
        struct {
                char twin[32];
                unsigned size;
        } pool_sizes[8]; /* pool_size as a mapping: per kind */
        size_t n_pool_sizes;

        uint64_t pod_memory_max; /* bytes; 0 = the image's limits profile */
        uint64_t pod_pids_max;   /* 0 = the image's limits profile */
        uint64_t pod_cpu_weight; /* 0 = the image's limits profile */
        /* a pod idle this long packs its world (pods/pod/main.c); 0 = never */
        uint64_t pod_pack_after_usec;

        /* agent: the defaults of a sealed agent's limits for `pome run` beside this pomed
         * (pomed.json carries them; a task's ## Config agent: and the command line win);
         * 0 = pome's own (cli/seal.h) */
        uint64_t agent_memory_max; /* bytes */
        uint64_t agent_pids_max;
        uint64_t agent_output_max; /* bytes kept of each of stdout and stderr */

        /* judge: the judge of [model] criteria at finalize (pods/grade/judges.h); NULL =
         * none: a task's [model] criteria are not evaluated and its run is incomplete */
        JudgeConfig *judge;

        TeamConfig *teams;
        size_t n_teams;

        FleetConfig *fleet; /* NULL: the local ledger */

        /* command line only (pomed --check-registry): SQLite's integrity_check of the
         * registry at start, not its quick_check */
        bool check_registry;
} Config;

#define POD_PACK_AFTER_MAX_USEC  (86400 * UINT64_C(1000000))
#define CONFIG_LIFETIME_MAX_USEC (30 * 60 * UINT64_C(1000000))
#define CONFIG_POD_UID_RANGE_MAX 65536u /* pods at once; the range costs one byte per uid */
/* A team's sessions_quota (concurrency slots), 0 to this, wherever it is set: pomed.conf,
 * SetQuota. Far above what one host opens (BENCHMARKS.md), far below where a count of
 * slots read as a signed 32-bit number (JSON, D-Bus "i" peers) turns negative. */
#define CONFIG_TEAM_QUOTA_MAX 100000u

/* config_load_with(): a missing main file counts as empty; its drop-ins still apply. */
#define CONFIG_FILE_OPTIONAL 1u

/*
 * Loads the embedded default overlaid with the file at path (NULL = default only), then with
 * its drop-ins, <path>.d/<name>.conf, each in turn in strcmp order (systemd's convention: a
 * package's file stays untouched, an operator's 50-local.conf changes what it names).
 * Mappings merge key by key; anything else (teams included) replaces. Returns 0, -ENOENT
 * (the main file is missing and flags lack CONFIG_FILE_OPTIONAL), -EINVAL (syntax or a
 * bad/unknown key; err names the file, the line or key), -ENOMEM. err is errlen bytes, always
 * NUL-terminated on error.
 */
int config_load_with(const char *path, unsigned flags, Config **ret, char *err, size_t errlen);

/* config_load_with(path, 0, …). */
static inline int config_load(const char *path, Config **ret, char *err, size_t errlen)
{
        return config_load_with(path, 0, ret, err, errlen);
}

Config *config_free(Config *c);

/* The pool size of twin kind twin (pool_size). */
unsigned config_pool_size(const Config *c, const char *twin);

#define CONFIG_POOL_SIZE_DEFAULT 2u
#define CONFIG_POOL_SIZE_MAX     64u

/* The team with this id, or NULL. */
TeamConfig *config_find_team(const Config *c, const char *id);

/*
 * One team from its JSON (the shape of a pomed.conf `teams:` item, the id given by where it
 * is kept: etcd's <prefix>/teams/<id>) into *ret, to free with config_team_done(). 0,
 * -EINVAL (why says what is wrong, as a configuration error does), -ENOMEM.
 */
int config_team_from_json(const json_t *j, const char *id, TeamConfig *ret, char *why,
                          size_t why_len);
void config_team_done(TeamConfig *t);
void fleet_config_free(FleetConfig *f);

/*
 * Parses YAML text (len bytes) into JSON: yamljson_parse (common/yamljson.h) without its
 * line map. Returns 0 with a new reference, -EINVAL with "line N: …" in err, -ENOMEM.
 */
int config_yaml_to_json(const char *text, size_t len, json_t **ret, char *err, size_t errlen);

/* "90", "90s", "15m", "1h", "500ms" → µs; "off"/"0" → 0. -EINVAL otherwise. */
int config_parse_duration(const json_t *v, uint64_t *ret_usec);

/* "67108864", "64M", "512K", "1G" (binary multiples) → bytes. -EINVAL otherwise. */
int config_parse_size(const json_t *v, uint64_t *ret_bytes);

/* "127.0.0.1:7070", "[::1]:7070" → address + port (IP literals only). -EINVAL otherwise. */
int config_parse_listen(const char *s, char **ret_address, uint16_t *ret_port);
