/* SPDX-License-Identifier: MIT */
#include "supervisor/config.h"

#include <ctype.h>
#include <dirent.h>
#include <arpa/inet.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "common/json-util.h"
#include "common/strv.h"
#include "common/util.h"
#include "common/yamljson.h"
#include "supervisor/pod-limits.h"

/* The embedded default (DESIGN.md "Configuration"). A file overlays it key by key. */
static const char embedded_default[] = "control_listen: 127.0.0.1:7070\n"
                                       "gateway_listen: 127.0.0.1:7071\n"
                                       "bus: system\n"
                                       "durability: normal\n"
                                       "limits:\n"
                                       "  lifetime: 30m\n"
                                       "  idle_timeout: 10m\n"
                                       "  start_timeout: 5s\n"
                                       "  request_timeout: 30s\n"
                                       "  retention: 7d\n"
                                       "  max_body: 1M\n"
                                       "  max_tape: 64M\n"
                                       "  max_pending_calls: 64\n"
                                       "  max_starting: 128\n"
                                       "  max_queued_creates: 4096\n"
                                       "  drain_timeout: 10s\n"
                                       "  max_connections: 1000\n"
                                       "  max_connections_per_client: 256\n"
                                       "  header_timeout: 10s\n"
                                       "  body_timeout: 30s\n"
                                       "pool_size: 2\n"
                                       "pod:\n"
                                       "  pack_after: 2s\n"
                                       "teams:\n"
                                       "  - id: local\n"
                                       "    sessions_quota: 10\n"
                                       "    plan_tier: self-hosted\n";

/* ---- YAML → JSON ---- */

int config_yaml_to_json(const char *text, size_t len, json_t **ret, char *err, size_t errlen)
{
        return yamljson_parse(text, len, ret, NULL, err, errlen);
}

/* ---- value parsers ---- */

static int parse_scaled(const json_t *v, const char *const *units, const uint64_t *mult,
                        size_t n_units, uint64_t *ret)
{
        if (json_is_integer(v)) {
                if (json_integer_value(v) < 0)
                        return -EINVAL;
                *ret = (uint64_t)json_integer_value(v) * mult[0];
                return 0;
        }
        const char *s = json_string_value(v);
        if (!s || !isdigit((unsigned char)*s))
                return -EINVAL;
        char *end;
        errno = 0;
        unsigned long long x = strtoull(s, &end, 10);
        if (errno)
                return -EINVAL;
        for (size_t i = 0; i < n_units; i++)
                if (streq(end, units[i])) {
                        if (x > UINT64_MAX / mult[i])
                                return -EINVAL;
                        *ret = x * mult[i];
                        return 0;
                }
        return -EINVAL;
}

int config_parse_duration(const json_t *v, uint64_t *ret_usec)
{
        if (json_is_false(v) || streq_ptr(json_string_value(v), "off")) {
                *ret_usec = 0;
                return 0;
        }
        static const char *const units[] = {"", "s", "ms", "m", "min", "h", "d"};
        static const uint64_t mult[] = {USEC_PER_SEC,        USEC_PER_SEC,      USEC_PER_MSEC,
                                        60 * USEC_PER_SEC,   60 * USEC_PER_SEC, 3600 * USEC_PER_SEC,
                                        86400 * USEC_PER_SEC};
        return parse_scaled(v, units, mult, ELEMENTSOF(units), ret_usec);
}

int config_parse_size(const json_t *v, uint64_t *ret_bytes)
{
        static const char *const units[] = {"", "K", "M", "G", "KiB", "MiB", "GiB"};
        static const uint64_t mult[] = {1,        1u << 10, 1u << 20, 1u << 30,
                                        1u << 10, 1u << 20, 1u << 30};
        return parse_scaled(v, units, mult, ELEMENTSOF(units), ret_bytes);
}

int config_parse_listen(const char *s, char **ret_address, uint16_t *ret_port)
{
        if (!s)
                return -EINVAL;
        const char *colon = strrchr(s, ':');
        if (!colon || colon == s)
                return -EINVAL;
        const char *a = s, *ae = colon;
        if (*s == '[') {
                if (colon[-1] != ']')
                        return -EINVAL;
                a = s + 1;
                ae = colon - 1;
        }
        char *end;
        errno = 0;
        unsigned long p = strtoul(colon + 1, &end, 10);
        if (errno || *end || colon[1] == 0 || p > 65535)
                return -EINVAL;
        char *addr = strndup(a, (size_t)(ae - a));
        if (!addr)
                return -ENOMEM;
        /* IP literals only: a host name would need a resolver on the start-up path */
        unsigned char buf[sizeof(struct in6_addr)];
        if (inet_pton(*s == '[' ? AF_INET6 : AF_INET, addr, buf) != 1) {
                free(addr);
                return -EINVAL;
        }
        *ret_address = addr;
        *ret_port = (uint16_t)p;
        return 0;
}

/* ---- the configuration ---- */

void fleet_config_free(FleetConfig *f)
{
        if (!f)
                return;
        free(f->node);
        strv_free(f->endpoints);
        free(f->prefix);
        free(f->cert);
        free(f->key);
        free(f->ca);
        free(f->advertise_url);
        free(f);
}

void config_team_done(TeamConfig *t)
{
        free(t->id);
        for (char **k = t->key_hashes; k && *k; k++)
                free(*k);
        free(t->key_hashes);
        free(t->plan_tier);
        free(t->unix_uids);
}

Config *config_free(Config *c)
{
        if (!c)
                return NULL;
        free(c->path);
        strv_free(c->files);
        free(c->control_address);
        free(c->gateway_address);
        free(c->public_url);
        free(c->state_dir);
        free(c->runtime_dir);
        free(c->images_dir);
        free(c->ui_dir);
        free(c->policies_dir);
        free(c->pod_exec);
        free(c->pod_user);
        free(c->bus);
        free(c->cgroup_parent);
        if (c->judge) {
                judge_config_done(c->judge);
                free(c->judge);
        }
        for (size_t i = 0; i < c->n_teams; i++)
                config_team_done(&c->teams[i]);
        free(c->teams);
        fleet_config_free(c->fleet);
        free(c);
        return NULL;
}

TeamConfig *config_find_team(const Config *c, const char *id)
{
        for (size_t i = 0; i < c->n_teams; i++)
                if (streq(c->teams[i].id, id))
                        return &c->teams[i];
        return NULL;
}

/* Recursive overlay: objects merge key by key; anything else replaces. */
static int overlay(json_t *base, json_t *top)
{
        const char *k;
        json_t *v;
        json_object_foreach (top, k, v) {
                json_t *b = json_object_get(base, k);
                if (json_is_object(b) && json_is_object(v)) {
                        int r = overlay(b, v);
                        if (r < 0)
                                return r;
                } else if (json_object_set(base, k, v) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/*
 * A refusal of the merged document, and the RFC 6901 JSON Pointer of the value (or key) it
 * is about, which config_load_with turns into the FILE:LINE that set it.
 */
typedef struct CfgError {
        char *msg;
        size_t len;
        char ptr[256];
} CfgError;

static int cfg_fail(CfgError *e, const char *ptr, const char *fmt, ...) _printf_(3, 4);
static int cfg_fail(CfgError *e, const char *ptr, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, e->len, fmt, ap);
        va_end(ap);
        snprintf(e->ptr, sizeof(e->ptr), "%s", ptr ? ptr : "");
        return -EINVAL;
}

/* buf := base + "/" + token escaped (RFC 6901 §3: '~' → "~0", '/' → "~1"). */
static const char *ptr_join(char *buf, size_t len, const char *base, const char *token)
{
        size_t at = (size_t)snprintf(buf, len, "%s/", base);
        for (const char *t = token; *t && at + 3 < len; t++) {
                if (*t == '~' || *t == '/') {
                        buf[at++] = '~';
                        buf[at++] = *t == '~' ? '0' : '1';
                } else
                        buf[at++] = *t;
        }
        buf[at < len ? at : len - 1] = 0;
        return buf;
}

/* where ("", "limits", "teams[0]") names o for messages; base ("", "/limits", "/teams/0")
 * points at it. */
static int check_keys(const json_t *o, const char *where, const char *base,
                      const char *const *allowed, CfgError *e)
{
        const char *k;
        json_t *v;
        json_object_foreach ((json_t *)o, k, v) {
                bool ok = false;
                for (const char *const *a = allowed; *a; a++)
                        ok = ok || streq(k, *a);
                if (!ok) {
                        char ptr[256];
                        return cfg_fail(e, ptr_join(ptr, sizeof(ptr), base, k),
                                        "unknown key '%s%s%s'", where, *where ? "." : "", k);
                }
        }
        return 0;
}

static int get_string(const json_t *o, const char *key, char **ret, CfgError *e)
{
        json_t *v = json_object_get(o, key);
        char ptr[256];
        if (!v || json_is_null(v))
                return 0;
        if (!json_is_string(v))
                return cfg_fail(e, ptr_join(ptr, sizeof(ptr), "", key), "'%s' must be a string",
                                key);
        char *s = strdup(json_string_value(v));
        if (!s)
                return -ENOMEM;
        free(*ret);
        *ret = s;
        return 0;
}

static int get_duration(const json_t *o, const char *key, const char *where, uint64_t *ret,
                        CfgError *e)
{
        json_t *v = json_object_get(o, key);
        char base[64], ptr[256];
        if (!v)
                return 0;
        snprintf(base, sizeof(base), "/%s", where);
        if (config_parse_duration(v, ret) < 0)
                return cfg_fail(e, ptr_join(ptr, sizeof(ptr), base, key),
                                "%s.%s: expected a duration like 90s, 15m, 1h or off", where, key);
        return 0;
}

static int get_size(const json_t *o, const char *key, const char *where, uint64_t *ret, CfgError *e)
{
        json_t *v = json_object_get(o, key);
        char base[64], ptr[256];
        if (!v)
                return 0;
        snprintf(base, sizeof(base), "/%s", where);
        if (config_parse_size(v, ret) < 0)
                return cfg_fail(e, ptr_join(ptr, sizeof(ptr), base, key),
                                "%s.%s: expected a size like 1048576, 512K, 64M or 1G", where, key);
        return 0;
}

static int pool_count(const json_t *v, const char *where, const char *twin, unsigned *ret,
                      CfgError *e)
{
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            json_integer_value(v) > CONFIG_POOL_SIZE_MAX) {
                char ptr[128];
                snprintf(ptr, sizeof(ptr), "/%s%s%s", where, twin ? "/" : "", strempty(twin));
                return cfg_fail(e, ptr, "%s%s%s: expected a number of pods from 0 (no pool) to %u",
                                where, twin ? "." : "", strempty(twin), CONFIG_POOL_SIZE_MAX);
        }
        *ret = (unsigned)json_integer_value(v);
        return 0;
}

/* pool_size: N for every twin kind, or {twin: N, …} (kinds not named keep the default). */
static int parse_pool_size(Config *c, const json_t *v, CfgError *e)
{
        c->pool_size = CONFIG_POOL_SIZE_DEFAULT;
        if (!v)
                return 0;
        if (!json_is_object(v))
                return pool_count(v, "pool_size", NULL, &c->pool_size, e);
        const char *twin;
        json_t *n;
        json_object_foreach ((json_t *)v, twin, n) {
                if (c->n_pool_sizes == ELEMENTSOF(c->pool_sizes) ||
                    strlen(twin) >= sizeof(c->pool_sizes[0].twin) || !*twin) {
                        char ptr[128];
                        snprintf(ptr, sizeof(ptr), "/pool_size/%.100s", twin);
                        return cfg_fail(e, ptr, "pool_size.%s: not a twin", twin);
                }
                int r = pool_count(n, "pool_size", twin, &c->pool_sizes[c->n_pool_sizes].size, e);
                if (r < 0)
                        return r;
                snprintf(c->pool_sizes[c->n_pool_sizes].twin, sizeof(c->pool_sizes[0].twin), "%s",
                         twin);
                c->n_pool_sizes++;
        }
        return 0;
}

unsigned config_pool_size(const Config *c, const char *twin)
{
        for (size_t i = 0; i < c->n_pool_sizes; i++)
                if (streq(c->pool_sizes[i].twin, twin))
                        return c->pool_sizes[i].size;
        return c->pool_size;
}

/*
 * A team's unix_users: local user names (or uids) whose D-Bus ListSandboxes lists this team's
 * sandboxes (root's lists every team's). Resolved now, so that a name this host lacks is an
 * error here rather than a listing that silently shows nothing.
 */
static int parse_unix_users(TeamConfig *tc, const json_t *users, const char *where,
                            const char *base, CfgError *e)
{
        char ptr[96];
        snprintf(ptr, sizeof(ptr), "%s/unix_users", base);
        if (!users)
                return 0;
        if (!json_is_array(users))
                return cfg_fail(e, ptr, "%s.unix_users must be a list of user names", where);
        tc->unix_uids = calloc(json_array_size(users) + 1, sizeof(uid_t));
        if (!tc->unix_uids)
                return -ENOMEM;
        size_t i;
        json_t *u;
        json_array_foreach ((json_t *)users, i, u) {
                char item[128];
                snprintf(item, sizeof(item), "%s/%zu", ptr, i);
                if (json_is_integer(u) && json_integer_value(u) >= 0 &&
                    json_integer_value(u) < (json_int_t)UINT32_MAX) {
                        tc->unix_uids[tc->n_unix_uids++] = (uid_t)json_integer_value(u);
                        continue;
                }
                const char *name = json_string_value(u);
                struct passwd *pw = name && *name ? getpwnam(name) : NULL;
                if (!pw)
                        return cfg_fail(e, item,
                                        "%s.unix_users[%zu]: %s%s%s is no user of this host "
                                        "(getent passwd)",
                                        where, i, name ? "'" : "", name ? name : "not a name",
                                        name ? "'" : "");
                tc->unix_uids[tc->n_unix_uids++] = pw->pw_uid;
        }
        return 0;
}

/* One team's mapping t (where "teams[0]", base "/teams/0" name it) into tc; id_given
 * (NULL: t's own "id", required) is a team whose id its place says (etcd's key). */
static int parse_team(const json_t *t, const char *id_given, const char *where, const char *base,
                      TeamConfig *tc, CfgError *e)
{
        static const char *const team_keys[] = {
                "id", "sessions_quota", "plan_tier", "api_keys_sha256", "unix_users", NULL};
        char ptr[96];
        if (!json_is_object(t))
                return cfg_fail(e, base, "%s must be a mapping", where);
        int r = check_keys(t, where, base, team_keys, e);
        if (r < 0)
                return r;
        const char *id = id_given ? id_given : json_get_str(t, "id");
        if (!id || !*id || strlen(id) > 63 ||
            strspn(id, "abcdefghijklmnopqrstuvwxyz"
                       "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                       "0123456789_-.") != strlen(id)) {
                snprintf(ptr, sizeof(ptr), "%s%s", base, id ? "/id" : "");
                return cfg_fail(e, ptr, "%s.id: required, 1-63 characters of [A-Za-z0-9_.-]",
                                where);
        }
        if (id_given && json_get_str(t, "id") && !streq(json_get_str(t, "id"), id_given)) {
                snprintf(ptr, sizeof(ptr), "%s/id", base);
                return cfg_fail(e, ptr, "%s.id: '%s' is not the team its key names ('%s')", where,
                                json_get_str(t, "id"), id_given);
        }
        tc->id = strdup(id);
        json_t *q = json_object_get(t, "sessions_quota");
        if (!json_is_integer(q) || json_integer_value(q) < 0 ||
            json_integer_value(q) > CONFIG_TEAM_QUOTA_MAX) {
                snprintf(ptr, sizeof(ptr), "%s%s", base, q ? "/sessions_quota" : "");
                return cfg_fail(e, ptr, "%s.sessions_quota: required, 0-%u", where,
                                CONFIG_TEAM_QUOTA_MAX);
        }
        tc->sessions_quota = (unsigned)json_integer_value(q);
        const char *tier = json_get_str(t, "plan_tier");
        tc->plan_tier = strdup(tier ? tier : "self-hosted");
        json_t *keys = json_object_get(t, "api_keys_sha256");
        size_t nk = json_is_array(keys) ? json_array_size(keys) : 0;
        snprintf(ptr, sizeof(ptr), "%s/api_keys_sha256", base);
        if (keys && !json_is_array(keys))
                return cfg_fail(e, ptr, "%s.api_keys_sha256 must be a list", where);
        tc->key_hashes = calloc(nk + 1, sizeof(char *));
        if (!tc->id || !tc->plan_tier || !tc->key_hashes)
                return -ENOMEM;
        for (size_t j = 0; j < nk; j++) {
                const char *h = json_string_value(json_array_get(keys, j));
                if (!h || strlen(h) != 64 || strspn(h, "0123456789abcdefABCDEF") != 64) {
                        char item[128];
                        snprintf(item, sizeof(item), "%s/%zu", ptr, j);
                        return cfg_fail(e, item,
                                        "%s.api_keys_sha256[%zu]: expected 64 hex digits "
                                        "(sha256sum of the key)",
                                        where, j);
                }
                tc->key_hashes[j] = strdup(h);
                if (!tc->key_hashes[j])
                        return -ENOMEM;
                for (char *p = tc->key_hashes[j]; *p; p++)
                        *p = (char)tolower((unsigned char)*p);
        }
        return parse_unix_users(tc, json_object_get(t, "unix_users"), where, base, e);
}

static int parse_teams(Config *c, const json_t *teams, CfgError *e)
{
        if (!json_is_array(teams) || json_array_size(teams) == 0)
                return cfg_fail(e, "/teams", "'teams' must be a non-empty list");
        c->teams = calloc(json_array_size(teams), sizeof(TeamConfig));
        if (!c->teams)
                return -ENOMEM;
        size_t i;
        json_t *t;
        json_array_foreach (teams, i, t) {
                char where[32], base[32];
                snprintf(where, sizeof(where), "teams[%zu]", i);
                snprintf(base, sizeof(base), "/teams/%zu", i);
                TeamConfig *tc = &c->teams[c->n_teams++];
                int r = parse_team(t, NULL, where, base, tc, e);
                if (r < 0)
                        return r;
                for (size_t j = 0; j + 1 < c->n_teams; j++)
                        if (streq(c->teams[j].id, tc->id)) {
                                char ptr[64];
                                snprintf(ptr, sizeof(ptr), "%s/id", base);
                                return cfg_fail(e, ptr, "%s.id: duplicate team '%s'", where,
                                                tc->id);
                        }
        }
        return 0;
}

int config_team_from_json(const json_t *j, const char *id, TeamConfig *ret, char *why,
                          size_t why_len)
{
        char where[96];
        snprintf(where, sizeof(where), "team %s", id);
        CfgError e = {.msg = why, .len = why_len};
        *ret = (TeamConfig){};
        int r = parse_team(j, id, where, "", ret, &e);
        if (r < 0)
                config_team_done(ret);
        return r;
}

/* fleet: {node, etcd: {endpoints, prefix, cert, key, ca}, advertise_url, lease_ttl, timeout} */
static int parse_fleet(Config *c, const json_t *f, CfgError *e)
{
        static const char *const fleet_keys[] = {"node",      "etcd",    "advertise_url",
                                                 "lease_ttl", "timeout", "compaction_interval",
                                                 NULL};
        static const char *const etcd_keys[] = {"endpoints", "prefix", "cert", "key", "ca", NULL};
        if (!f || json_is_null(f))
                return 0;
        if (!json_is_object(f))
                return cfg_fail(e, "/fleet", "fleet must be a mapping");
        int r = check_keys(f, "fleet", "/fleet", fleet_keys, e);
        if (r < 0)
                return r;
        FleetConfig *fc = c->fleet = calloc(1, sizeof(*fc));
        if (!fc)
                return -ENOMEM;
        fc->lease_ttl_usec = 10 * USEC_PER_SEC;
        fc->timeout_usec = 2 * USEC_PER_SEC;
        fc->compaction_interval_usec = 5 * 60 * USEC_PER_SEC; /* as kube-apiserver's */
        const char *node = json_get_str(f, "node");
        if (!node || !*node || strlen(node) > FLEET_NODE_MAX ||
            strspn(node, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(node))
                return cfg_fail(e, node ? "/fleet/node" : "/fleet",
                                "fleet.node: required, 1-%u characters of [a-z0-9] (it is part of "
                                "this node's sandbox ids)",
                                FLEET_NODE_MAX);
        if (!(fc->node = strdup(node)))
                return -ENOMEM;
        if ((r = get_string(f, "advertise_url", &fc->advertise_url, e)) < 0 ||
            (r = get_duration(f, "lease_ttl", "fleet", &fc->lease_ttl_usec, e)) < 0 ||
            (r = get_duration(f, "timeout", "fleet", &fc->timeout_usec, e)) < 0 ||
            (r = get_duration(f, "compaction_interval", "fleet", &fc->compaction_interval_usec,
                              e)) < 0)
                return r;
        if (fc->compaction_interval_usec && fc->compaction_interval_usec < USEC_PER_SEC)
                return cfg_fail(e, "/fleet/compaction_interval",
                                "fleet.compaction_interval: must be off or at least 1s");
        if (fc->lease_ttl_usec < 2 * USEC_PER_SEC || fc->lease_ttl_usec > 3600 * USEC_PER_SEC)
                return cfg_fail(e, "/fleet/lease_ttl",
                                "fleet.lease_ttl: must be between 2s and 1h (etcd leases count "
                                "whole seconds; renewed every third of it)");
        if (fc->timeout_usec < 10 * USEC_PER_MSEC || fc->timeout_usec >= fc->lease_ttl_usec)
                return cfg_fail(e, "/fleet/timeout",
                                "fleet.timeout: must be at least 10ms and below fleet.lease_ttl");
        json_t *etcd = json_object_get(f, "etcd");
        if (!json_is_object(etcd))
                return cfg_fail(e, etcd ? "/fleet/etcd" : "/fleet",
                                "fleet.etcd: required, a mapping with endpoints (etcd's client "
                                "URLs)");
        if ((r = check_keys(etcd, "fleet.etcd", "/fleet/etcd", etcd_keys, e)) < 0)
                return r;
        json_t *eps = json_object_get(etcd, "endpoints");
        if (json_is_string(eps)) { /* one URL, or several separated by commas as etcdctl's */
                const char *p = json_string_value(eps);
                while (r >= 0 && *p) {
                        size_t n = strcspn(p, ",");
                        if (n > 0)
                                r = strv_extendf(&fc->endpoints, "%.*s", (int)n, p);
                        p += n + (p[n] == ',');
                }
                if (r >= 0 && !fc->endpoints && !(fc->endpoints = strv_new()))
                        r = -ENOMEM;
        } else if (json_is_array(eps) && json_array_size(eps) > 0) {
                if (!(fc->endpoints = calloc(json_array_size(eps) + 1, sizeof(char *))))
                        return -ENOMEM;
                size_t i;
                json_t *u;
                json_array_foreach (eps, i, u) {
                        if (!json_is_string(u))
                                return cfg_fail(e, "/fleet/etcd/endpoints",
                                                "fleet.etcd.endpoints[%zu]: must be a URL", i);
                        if (!(fc->endpoints[i] = strdup(json_string_value(u))))
                                return -ENOMEM;
                }
        } else
                return cfg_fail(e, "/fleet/etcd/endpoints",
                                "fleet.etcd.endpoints: required, etcd's client URLs (a list, or "
                                "one string with commas)");
        if (r < 0)
                return r;
        for (char **u = fc->endpoints; *u; u++)
                if (!startswith(*u, "http://") && !startswith(*u, "https://"))
                        return cfg_fail(e, "/fleet/etcd/endpoints",
                                        "fleet.etcd.endpoints: '%s' is not an http:// or "
                                        "https:// URL",
                                        *u);
        if (!fc->endpoints[0])
                return cfg_fail(e, "/fleet/etcd/endpoints", "fleet.etcd.endpoints: empty");
        if ((r = get_string(etcd, "prefix", &fc->prefix, e)) < 0 ||
            (r = get_string(etcd, "cert", &fc->cert, e)) < 0 ||
            (r = get_string(etcd, "key", &fc->key, e)) < 0 ||
            (r = get_string(etcd, "ca", &fc->ca, e)) < 0)
                return r;
        if (!fc->prefix && !(fc->prefix = strdup("/pome")))
                return -ENOMEM;
        size_t pl = strlen(fc->prefix);
        while (pl > 1 && fc->prefix[pl - 1] == '/')
                fc->prefix[--pl] = 0;
        if (fc->prefix[0] != '/' || pl == 1)
                return cfg_fail(e, "/fleet/etcd/prefix",
                                "fleet.etcd.prefix: must start with '/' and name a directory, "
                                "like /pome");
        if (!fc->cert != !fc->key)
                return cfg_fail(e, "/fleet/etcd", "fleet.etcd: cert and key go together");
        return 0;
}

static int interpret(Config *c, const json_t *j, CfgError *e)
{
        static const char *const top_keys[] = {"control_listen",
                                               "gateway_listen",
                                               "public_url",
                                               "state_dir",
                                               "runtime_dir",
                                               "images_dir",
                                               "ui_dir",
                                               "policies_dir",
                                               "pod_exec",
                                               "pod_user",
                                               "bus",
                                               "cgroup_parent",
                                               "limits",
                                               "pod",
                                               "teams",
                                               "pod_uid_range",
                                               "pool_size",
                                               "judge",
                                               "agent",
                                               "durability",
                                               "allow_unlimited_pods",
                                               "fleet",
                                               NULL};
        static const char *const limit_keys[] = {"lifetime",
                                                 "idle_timeout",
                                                 "start_timeout",
                                                 "request_timeout",
                                                 "retention",
                                                 "max_body",
                                                 "max_connections",
                                                 "max_tape",
                                                 "drain_timeout",
                                                 "max_pending_calls",
                                                 "max_starting",
                                                 "max_queued_creates",
                                                 "max_connections_per_client",
                                                 "header_timeout",
                                                 "body_timeout",
                                                 NULL};
        static const char *const pod_keys[] = {"memory_max", "pids_max", "cpu_weight", "pack_after",
                                               NULL};
        int r = check_keys(j, "", "", top_keys, e);
        if (r < 0)
                return r;
        const char *cl = json_get_str(j, "control_listen"), *gl = json_get_str(j, "gateway_listen");
        if (config_parse_listen(cl, &c->control_address, &c->control_port) < 0)
                return cfg_fail(e, "/control_listen",
                                "control_listen: expected IP-ADDRESS:PORT (e.g. 127.0.0.1:7070 or "
                                "[::1]:7070; no host names), got '%s'",
                                strempty(cl));
        if (config_parse_listen(gl, &c->gateway_address, &c->gateway_port) < 0)
                return cfg_fail(e, "/gateway_listen",
                                "gateway_listen: expected IP-ADDRESS:PORT (e.g. 127.0.0.1:7071 or "
                                "[::1]:7071; no host names), got '%s'",
                                strempty(gl));
        static const struct {
                const char *key;
                size_t off;
        } strings[] = {
                {"public_url", offsetof(Config, public_url)},
                {"state_dir", offsetof(Config, state_dir)},
                {"runtime_dir", offsetof(Config, runtime_dir)},
                {"images_dir", offsetof(Config, images_dir)},
                {"policies_dir", offsetof(Config, policies_dir)},
                {"ui_dir", offsetof(Config, ui_dir)},
                {"pod_exec", offsetof(Config, pod_exec)},
                {"pod_user", offsetof(Config, pod_user)},
                {"bus", offsetof(Config, bus)},
                {"cgroup_parent", offsetof(Config, cgroup_parent)},
        };
        for (size_t i = 0; i < ELEMENTSOF(strings); i++) {
                r = get_string(j, strings[i].key, (char **)((char *)c + strings[i].off), e);
                if (r < 0)
                        return r;
        }

        const json_t *dur = json_object_get(j, "durability");
        if (dur && !(json_is_string(dur) && (streq(json_string_value(dur), "normal") ||
                                             streq(json_string_value(dur), "full"))))
                return cfg_fail(e, "/durability",
                                "durability: expected normal (written before acknowledged) or "
                                "full (also synced to the disk)");
        c->durability_full = dur && streq(json_string_value(dur), "full");

        const json_t *unl = json_object_get(j, "allow_unlimited_pods");
        if (unl && !json_is_boolean(unl))
                return cfg_fail(e, "/allow_unlimited_pods",
                                "allow_unlimited_pods: expected true or false");
        c->allow_unlimited_pods = json_is_true(unl);

        if (c->public_url && !startswith(c->public_url, "http://") &&
            !startswith(c->public_url, "https://"))
                return cfg_fail(e, "/public_url",
                                "public_url: expected an http:// or https:// URL, got '%s'",
                                c->public_url);
        if (c->public_url) /* rest_url = public_url + "/github/s/…" */
                c->public_url[strcspn(c->public_url, "?#")] = 0;
        while (c->public_url && strlen(c->public_url) > 8 &&
               c->public_url[strlen(c->public_url) - 1] == '/')
                c->public_url[strlen(c->public_url) - 1] = 0;
        if (!c->state_dir) {
                /* Under systemd, StateDirectory= says where (DESIGN.md: /var/lib/pome);
                 * elsewhere the embedded default is ./.pome. */
                const char *sd = getenv("STATE_DIRECTORY");
                c->state_dir = sd && *sd ? strndup(sd, strcspn(sd, ":")) : strdup("./.pome");
                if (!c->state_dir)
                        return -ENOMEM;
        }
        json_t *lim = json_object_get(j, "limits");
        if (lim) {
                if (!json_is_object(lim))
                        return cfg_fail(e, "/limits", "'limits' must be a mapping");
                if ((r = check_keys(lim, "limits", "/limits", limit_keys, e)) < 0 ||
                    (r = get_duration(lim, "lifetime", "limits", &c->lifetime_usec, e)) < 0 ||
                    (r = get_duration(lim, "idle_timeout", "limits", &c->idle_timeout_usec, e)) <
                            0 ||
                    (r = get_duration(lim, "start_timeout", "limits", &c->start_timeout_usec, e)) <
                            0 ||
                    (r = get_duration(lim, "request_timeout", "limits", &c->request_timeout_usec,
                                      e)) < 0 ||
                    (r = get_duration(lim, "retention", "limits", &c->retention_usec, e)) < 0 ||
                    (r = get_duration(lim, "drain_timeout", "limits", &c->drain_timeout_usec, e)) <
                            0 ||
                    (r = get_duration(lim, "header_timeout", "limits", &c->header_timeout_usec,
                                      e)) < 0 ||
                    (r = get_duration(lim, "body_timeout", "limits", &c->body_timeout_usec, e)) < 0)
                        return r;
                uint64_t mb = c->max_body, mc = c->max_connections,
                         mpc = c->max_connections_per_client, mp = c->max_pending_calls,
                         ms = c->max_starting, mq = c->max_queued_creates;
                if ((r = get_size(lim, "max_body", "limits", &mb, e)) < 0 ||
                    (r = get_size(lim, "max_connections", "limits", &mc, e)) < 0 ||
                    (r = get_size(lim, "max_connections_per_client", "limits", &mpc, e)) < 0 ||
                    (r = get_size(lim, "max_tape", "limits", &c->max_tape, e)) < 0 ||
                    (r = get_size(lim, "max_pending_calls", "limits", &mp, e)) < 0 ||
                    (r = get_size(lim, "max_starting", "limits", &ms, e)) < 0 ||
                    (r = get_size(lim, "max_queued_creates", "limits", &mq, e)) < 0)
                        return r;
                if (ms == 0 || ms > 100000)
                        return cfg_fail(e, "/limits/max_starting",
                                        "limits.max_starting must be between 1 and 100000");
                if (mq > 1000000)
                        return cfg_fail(e, "/limits/max_queued_creates",
                                        "limits.max_queued_creates must be between 0 and "
                                        "1000000");
                c->max_starting = (unsigned)ms;
                c->max_queued_creates = (unsigned)mq;
                if (mc == 0 || mc > 100000 || mpc == 0 || mpc > mc)
                        return cfg_fail(e,
                                        mc == 0 || mc > 100000
                                                ? "/limits/max_connections"
                                                : "/limits/max_connections_per_client",
                                        "limits.max_connections must be between 1 and 100000 and "
                                        "limits.max_connections_per_client between 1 and it");
                c->max_body = (size_t)mb;
                c->max_connections = (unsigned)mc;
                c->max_pending_calls = (unsigned)mp;
                c->max_connections_per_client = (unsigned)mpc;
        }
        if (c->lifetime_usec == 0 || c->lifetime_usec > CONFIG_LIFETIME_MAX_USEC)
                return cfg_fail(e, "/limits/lifetime",
                                "limits.lifetime: must be between 1s and 30m");
        if (c->start_timeout_usec == 0 || c->request_timeout_usec == 0 ||
            c->header_timeout_usec == 0 || c->body_timeout_usec == 0)
                return cfg_fail(e,
                                !c->start_timeout_usec     ? "/limits/start_timeout"
                                : !c->request_timeout_usec ? "/limits/request_timeout"
                                : !c->header_timeout_usec  ? "/limits/header_timeout"
                                                           : "/limits/body_timeout",
                                "limits.start_timeout, request_timeout, header_timeout and "
                                "body_timeout cannot be off");
        if (c->max_pending_calls < 1 || c->max_pending_calls > 100000)
                return cfg_fail(e, "/limits/max_pending_calls",
                                "limits.max_pending_calls: must be between 1 and 100000");
        if (c->max_tape < 4096)
                return cfg_fail(e, "/limits/max_tape", "limits.max_tape: must be at least 4K");
        json_t *range = json_object_get(j, "pod_uid_range");
        if (range && !json_is_null(range)) {
                const char *rs = json_string_value(range);
                unsigned long long first = 0, last = 0;
                int used = 0;
                if (!rs || sscanf(rs, "%llu-%llu%n", &first, &last, &used) != 2 ||
                    (size_t)used != strlen(rs) || first < 1000 || last < first ||
                    last >= UINT32_MAX || last - first + 1 > CONFIG_POD_UID_RANGE_MAX ||
                    (first <= 65534 && last >= 65534))
                        return cfg_fail(e, "/pod_uid_range",
                                        "pod_uid_range: expected FIRST-LAST, uids no account uses "
                                        "(from 1000, not 65534, at most %u of them), e.g. "
                                        "2147000000-2147065535",
                                        CONFIG_POD_UID_RANGE_MAX);
                c->pod_uid_first = (uint32_t)first;
                c->pod_uid_count = (uint32_t)(last - first + 1);
        }
        if (c->cgroup_parent && c->cgroup_parent[0] != '/')
                return cfg_fail(e, "/cgroup_parent",
                                "cgroup_parent: expected a cgroup path from the hierarchy's root, "
                                "such as /pome.slice, got '%s'",
                                c->cgroup_parent);
        if (c->max_body < 1024 || c->max_body > 64u << 20)
                return cfg_fail(e, "/limits/max_body",
                                "limits.max_body: must be between 1K and 64M");
        json_t *agent = json_object_get(j, "agent");
        if (agent) {
                static const char *const agent_keys[] = {"memory", "pids", "output", NULL};
                if (!json_is_object(agent))
                        return cfg_fail(e, "/agent", "'agent' must be a mapping");
                if ((r = check_keys(agent, "agent", "/agent", agent_keys, e)) < 0 ||
                    (r = get_size(agent, "memory", "agent", &c->agent_memory_max, e)) < 0 ||
                    (r = get_size(agent, "pids", "agent", &c->agent_pids_max, e)) < 0 ||
                    (r = get_size(agent, "output", "agent", &c->agent_output_max, e)) < 0)
                        return r;
                /* the bounds a task's ## Config agent: has (pods/grade/task.c) */
                if (c->agent_memory_max && (c->agent_memory_max < (UINT64_C(16) << 20) ||
                                            c->agent_memory_max > (UINT64_C(1) << 50)))
                        return cfg_fail(e, "/agent/memory",
                                        "agent.memory: must be between 16M and 1P (an agent "
                                        "cannot even start below 16M)");
                if (c->agent_pids_max > 4194304)
                        return cfg_fail(e, "/agent/pids", "agent.pids: at most 4194304");
                if (c->agent_output_max > (UINT64_C(1) << 50))
                        return cfg_fail(e, "/agent/output", "agent.output: at most 1P");
        }
        json_t *pod = json_object_get(j, "pod");
        if (pod) {
                if (!json_is_object(pod))
                        return cfg_fail(e, "/pod", "'pod' must be a mapping");
                if ((r = check_keys(pod, "pod", "/pod", pod_keys, e)) < 0 ||
                    (r = get_size(pod, "memory_max", "pod", &c->pod_memory_max, e)) < 0 ||
                    (r = get_size(pod, "pids_max", "pod", &c->pod_pids_max, e)) < 0 ||
                    (r = get_size(pod, "cpu_weight", "pod", &c->pod_cpu_weight, e)) < 0 ||
                    (r = get_duration(pod, "pack_after", "pod", &c->pod_pack_after_usec, e)) < 0)
                        return r;
                if (c->pod_pack_after_usec > POD_PACK_AFTER_MAX_USEC ||
                    (c->pod_pack_after_usec && c->pod_pack_after_usec < USEC_PER_MSEC))
                        return cfg_fail(e, "/pod/pack_after",
                                        "pod.pack_after: must be off or between 1ms and 24h");
                /* the same bounds as a limits profile (policies/limits/) */
                if (c->pod_memory_max &&
                    (c->pod_memory_max < POD_MEMORY_MIN || c->pod_memory_max > POD_MEMORY_MAX))
                        return cfg_fail(e, "/pod/memory_max",
                                        "pod.memory_max: must be between 1M and 1P");
                if (c->pod_pids_max > POD_PIDS_MAX)
                        return cfg_fail(e, "/pod/pids_max", "pod.pids_max: at most %" PRIu64,
                                        POD_PIDS_MAX);
                if (c->pod_cpu_weight > POD_CPU_WEIGHT_MAX)
                        return cfg_fail(e, "/pod/cpu_weight",
                                        "pod.cpu_weight: must be between 1 and 10000");
        }
        if ((r = parse_pool_size(c, json_object_get(j, "pool_size"), e)) < 0)
                return r;
        json_t *judge = json_object_get(j, "judge");
        if (judge && !json_is_null(judge)) {
                char why[400];
                if (!(c->judge = calloc(1, sizeof(*c->judge))))
                        return -ENOMEM;
                r = judge_config_from_json(judge, c->judge, why, sizeof(why));
                if (r == -EINVAL)
                        return cfg_fail(e, "/judge", "%s", why);
                if (r < 0)
                        return r;
        }
        if ((r = parse_fleet(c, json_object_get(j, "fleet"), e)) < 0)
                return r;
        return parse_teams(c, json_object_get(j, "teams"), e);
}

/* Reads path (at most 1 MiB) and overlays its YAML mapping on j. -ENOENT when it does not
 * exist (err names it), -EINVAL for anything else wrong with it. */
static int overlay_file(json_t *j, json_t *origins, const char *path, char *err, size_t errlen)
{
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        struct stat st;
        int r;
        if (f && fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode)) {
                snprintf(err, errlen, "%s: not a regular file", path);
                return -EINVAL;
        }
        if (!f) {
                r = negative_errno();
                snprintf(err, errlen, "%s: %s", path, strerror(-r));
                return r;
        }
        _cleanup_free_ char *text = NULL;
        size_t cap = 0, n = 0;
        for (;;) {
                if (n + 4096 > cap) {
                        if (cap > (1u << 20)) {
                                snprintf(err, errlen, "%s: larger than 1 MiB", path);
                                return -EINVAL;
                        }
                        cap = cap ? cap * 2 : 8192;
                        char *t = realloc(text, cap);
                        if (!t)
                                return -ENOMEM;
                        text = t;
                }
                size_t k = fread(text + n, 1, cap - n, f);
                n += k;
                if (k == 0)
                        break;
        }
        _cleanup_json_ json_t *file = NULL, *lines = NULL;
        char e2[256];
        r = yamljson_parse(text, n, &file, &lines, e2, sizeof(e2));
        if (r < 0) {
                snprintf(err, errlen, "%s: %s", path, e2);
                return r;
        }
        /* where each value of this file is, for refusals of the merged document: a later
         * file that sets the same pointer takes it over */
        const char *ptr;
        json_t *line;
        json_object_foreach (lines, ptr, line) {
                char *at;
                if (asprintf(&at, "%s:%" JSON_INTEGER_FORMAT, path, json_integer_value(line)) < 0 ||
                    json_object_set_new(origins, ptr, json_string(at)) < 0) {
                        free(at);
                        return -ENOMEM;
                }
                free(at);
        }
        if (json_is_null(file))
                file = json_object();
        if (!json_is_object(file)) {
                snprintf(err, errlen, "%s: the top level must be a mapping", path);
                return -EINVAL;
        }
        /* teams replace the list below them as a whole, not element by element */
        return overlay(j, file) < 0 ? -ENOMEM : 0;
}

static int compare_names(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The drop-ins of path: <path>.d/<name>.conf in strcmp order (a new NULL-terminated list; empty
 * when the directory does not exist). */
static int dropins(const char *path, char ***ret, char *err, size_t errlen)
{
        _cleanup_free_ char *dir = NULL;
        if (asprintf(&dir, "%s.d", path) < 0)
                return -ENOMEM;
        char **l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        size_t n = 0;
        DIR *d = opendir(dir);
        if (!d) {
                int r = errno == ENOENT || errno == ENOTDIR ? 0 : negative_errno();
                if (r < 0) {
                        snprintf(err, errlen, "%s: %s", dir, strerror(-r));
                        free(l);
                        return r;
                }
                *ret = l;
                return 0;
        }
        struct dirent *de;
        int r = 0;
        while (r >= 0 && (de = readdir(d))) {
                size_t len = strlen(de->d_name);
                if (de->d_name[0] == '.' || len < 6 || !streq(de->d_name + len - 5, ".conf"))
                        continue;
                char **nl = realloc(l, (n + 2) * sizeof(char *));
                if (!nl) {
                        r = -ENOMEM;
                        break;
                }
                l = nl;
                if (asprintf(&l[n], "%s/%s", dir, de->d_name) < 0) {
                        r = -ENOMEM;
                        break;
                }
                l[++n] = NULL;
        }
        closedir(d);
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        free(l[i]);
                free(l);
                return r;
        }
        qsort(l, n, sizeof(char *), compare_names);
        *ret = l;
        return 0;
}

int config_load_with(const char *path, unsigned flags, Config **ret, char *err, size_t errlen)
{
        _cleanup_json_ json_t *j = NULL, *origins = json_object();
        if (!origins)
                return -ENOMEM;
        int r = config_yaml_to_json(embedded_default, strlen(embedded_default), &j, err, errlen);
        if (r < 0)
                return r;
        _cleanup_strv_free_ char **files = strv_new();
        if (!files)
                return -ENOMEM;
        if (path) {
                r = overlay_file(j, origins, path, err, errlen);
                if (r == -ENOENT && (flags & CONFIG_FILE_OPTIONAL))
                        r = 0;
                else if (r >= 0)
                        r = strv_extend(&files, path);
                if (r < 0)
                        return r;
                _cleanup_strv_free_ char **d = NULL;
                r = dropins(path, &d, err, errlen);
                if (r < 0)
                        return r;
                for (char **f = d; *f; f++) {
                        r = overlay_file(j, origins, *f, err, errlen);
                        if (r >= 0)
                                r = strv_extend(&files, *f);
                        if (r < 0)
                                return r;
                }
        }
        Config *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        if (path && !(c->path = strdup(path))) {
                config_free(c);
                return -ENOMEM;
        }
        c->files = TAKE_PTR(files);
        char e3[256] = "";
        CfgError ce = {.msg = e3, .len = sizeof(e3)};
        r = interpret(c, j, &ce);
        const char *at = ce.ptr[0] ? json_string_value(json_object_get(origins, ce.ptr)) : NULL;
        if (r < 0 && at) {
                /* the file and line that set the value refused */
                snprintf(err, errlen, "%s: %s", at, e3[0] ? e3 : strerror(-r));
                config_free(c);
                return r;
        }
        if (r < 0) {
                /* a value no file set (or a refusal of several): name every file */
                char names[512] = "";
                size_t nl = 0;
                for (char **f = c->files; *f && nl < sizeof(names); f++)
                        nl += (size_t)snprintf(names + nl, sizeof(names) - nl, "%s%s",
                                               f == c->files ? "" : " + ", *f);
                snprintf(err, errlen, "%s: %s", names[0] ? names : "embedded default",
                         e3[0] ? e3 : strerror(-r));
                config_free(c);
                return r;
        }
        *ret = c;
        return 0;
}
