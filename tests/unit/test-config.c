/* SPDX-License-Identifier: MIT */
/* pomed.conf: the embedded default, overlays, value parsers and refusals. */
#include <stdlib.h>

#include <sys/stat.h>

#include "common/json-util.h"
#include "common/strv.h"
#include "supervisor/config.h"
#include "tests/unit/check.h"

static char *write_tmp(const char *text)
{
        char *path = strdup("/tmp/pome-test-config.XXXXXX");
        int fd = mkstemp(path);
        CHECK(fd >= 0);
        CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
        close(fd);
        return path;
}

static int load_text(const char *text, Config **ret, char *err, size_t errlen)
{
        _cleanup_free_ char *path = write_tmp(text);
        int r = config_load(path, ret, err, errlen);
        unlink(path);
        return r;
}

static void test_default(void)
{
        Config *c = NULL;
        char err[256] = "";
        unsetenv("STATE_DIRECTORY");
        CHECK_OK(config_load(NULL, &c, err, sizeof(err)));
        CHECK(streq(c->control_address, "127.0.0.1") && c->control_port == 7070);
        CHECK(streq(c->gateway_address, "127.0.0.1") && c->gateway_port == 7071);
        CHECK(streq(c->state_dir, "./.pome"));
        CHECK(c->lifetime_usec == 30 * 60 * USEC_PER_SEC);
        CHECK(c->idle_timeout_usec == 10 * 60 * USEC_PER_SEC);
        CHECK(c->start_timeout_usec == 5 * USEC_PER_SEC);
        CHECK(c->max_body == 1u << 20);
        CHECK(c->pod_pack_after_usec == 2 * USEC_PER_SEC);
        CHECK(!c->durability_full);
        CHECK(c->n_teams == 1 && streq(c->teams[0].id, "local") && !c->teams[0].key_hashes[0]);
        config_free(c);

        setenv("STATE_DIRECTORY", "/var/lib/pome:/other", 1);
        CHECK_OK(config_load(NULL, &c, err, sizeof(err)));
        CHECK(streq(c->state_dir, "/var/lib/pome"));
        config_free(c);
        unsetenv("STATE_DIRECTORY");
}

static void test_overlay(void)
{
        Config *c = NULL;
        char err[256] = "";
        CHECK_OK(load_text("control_listen: '[::1]:0'\n"
                           "durability: full\n"
                           "limits:\n  idle_timeout: off\n  lifetime: 90s\n"
                           "pod:\n  memory_max: 48M\n  pids_max: 24\n"
                           "agent: {memory: 1G, pids: 300}\n"
                           "teams:\n"
                           "  - id: ci\n    sessions_quota: 50\n"
                           "    api_keys_sha256: ["
                           "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD]\n",
                           &c, err, sizeof(err)));
        CHECK(streq(c->control_address, "::1") && c->control_port == 0);
        CHECK(c->durability_full);
        CHECK(c->gateway_port == 7071); /* untouched keys keep the default */
        CHECK(c->idle_timeout_usec == 0 && c->lifetime_usec == 90 * USEC_PER_SEC);
        CHECK(c->start_timeout_usec == 5 * USEC_PER_SEC);
        CHECK(c->pod_memory_max == 48u << 20 && c->pod_pids_max == 24);
        CHECK(c->pod_pack_after_usec == 2 * USEC_PER_SEC); /* pod: merged key by key */
        CHECK(c->agent_memory_max == 1u << 30 && c->agent_pids_max == 300 &&
              c->agent_output_max == 0);
        /* teams replace the default list as a whole */
        CHECK(c->n_teams == 1 && streq(c->teams[0].id, "ci") && c->teams[0].sessions_quota == 50);
        CHECK(streq(c->teams[0].key_hashes[0],
                    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        CHECK(streq(c->teams[0].plan_tier, "self-hosted"));
        CHECK(config_find_team(c, "ci") && !config_find_team(c, "local"));
        config_free(c);
}

/* pool_size: 2 by default, a number for every twin, or a mapping per twin. */
static void test_pool_size(void)
{
        Config *c = NULL;
        char err[256] = "";
        CHECK_OK(config_load(NULL, &c, err, sizeof(err)));
        CHECK(config_pool_size(c, "github") == 2 && config_pool_size(c, "stripe") == 2);
        c = config_free(c);
        CHECK_OK(load_text("pool_size: 0\n", &c, err, sizeof(err)));
        CHECK(c && config_pool_size(c, "slack") == 0);
        c = config_free(c);
        CHECK_OK(load_text("pool_size:\n  github: 5\n  stripe: 0\n", &c, err, sizeof(err)));
        CHECK(c && config_pool_size(c, "github") == 5 && config_pool_size(c, "stripe") == 0 &&
              config_pool_size(c, "slack") == 2);
        config_free(c);
}

static void test_fleet(void)
{
        Config *c = NULL;
        char err[256] = "";
        CHECK_OK(load_text("teams:\n  - id: a\n    sessions_quota: 1\n", &c, err, sizeof(err)));
        CHECK(c && !c->fleet); /* the local ledger by default */
        c = config_free(c);
        CHECK_OK(load_text("fleet:\n  node: n1\n  lease_ttl: 5s\n  etcd:\n"
                           "    endpoints: 'http://10.0.0.1:2379,https://10.0.0.2:2379'\n"
                           "    prefix: /ci/pome//\n",
                           &c, err, sizeof(err)));
        CHECK(c && c->fleet && streq(c->fleet->node, "n1") &&
              c->fleet->lease_ttl_usec == 5 * USEC_PER_SEC &&
              c->fleet->timeout_usec == 2 * USEC_PER_SEC && streq(c->fleet->prefix, "/ci/pome") &&
              c->fleet->compaction_interval_usec == 300 * USEC_PER_SEC &&
              strv_length(c->fleet->endpoints) == 2 &&
              streq(c->fleet->endpoints[1], "https://10.0.0.2:2379") && !c->fleet->cert);
        c = config_free(c);
        CHECK_OK(load_text("fleet:\n  node: b\n  etcd: {endpoints: [http://e:2379]}\n", &c, err,
                           sizeof(err)));
        CHECK(c && streq(c->fleet->prefix, "/pome") && !c->fleet->endpoints[1]);
        config_free(c);

        /* a team as etcd keeps it: pomed.conf's shape, its id from the key */
        TeamConfig tc;
        char why[256];
        _cleanup_json_ json_t *j =
                json_pack("{s:i, s:[s], s:s}", "sessions_quota", 5, "api_keys_sha256",
                          "ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789",
                          "plan_tier", "ci");
        CHECK_OK(config_team_from_json(j, "acme", &tc, why, sizeof(why)));
        CHECK(streq(tc.id, "acme") && tc.sessions_quota == 5 && streq(tc.plan_tier, "ci") &&
              startswith(tc.key_hashes[0], "abcdef0123") && !tc.key_hashes[1]);
        config_team_done(&tc);
        _cleanup_json_ json_t *other = json_pack("{s:s, s:i}", "id", "other", "sessions_quota", 1);
        CHECK(config_team_from_json(other, "acme", &tc, why, sizeof(why)) == -EINVAL);
        CHECK(strstr(why, "is not the team its key names") != NULL);
        _cleanup_json_ json_t *bad = json_pack("{s:i}", "sessions_quota", -1);
        CHECK(config_team_from_json(bad, "acme", &tc, why, sizeof(why)) == -EINVAL);
        CHECK(strstr(why, "sessions_quota: required") != NULL);
        CHECK(config_team_from_json(bad, "a/b", &tc, why, sizeof(why)) == -EINVAL);
}

static void test_refusals(void)
{
        static const struct {
                const char *text;
                const char *needle; /* part of the error message */
        } cases[] = {
                {"contol_listen: 1.2.3.4:5\n", "unknown key 'contol_listen'"},
                {"durability: fsync\n", "durability: expected normal"},
                {"durability: [full]\n", "durability: expected normal"},
                {"limits:\n  lifetim: 5s\n", "unknown key 'limits.lifetim'"},
                {"limits:\n  lifetime: 31m\n", "between 1s and 30m"},
                {"limits:\n  idle_timeout: soon\n", "limits.idle_timeout"},
                {"limits:\n  max_body: 12X\n", "limits.max_body"},
                {"control_listen: nowhere\n", "control_listen"},
                {"control_listen: 1.2.3.4:70000\n", "control_listen"},
                {"teams: []\n", "non-empty"},
                {"teams:\n  - id: a\n", "sessions_quota"},
                {"teams:\n  - id: 'a/b'\n    sessions_quota: 1\n", "teams[0].id"},
                {"teams:\n  - id: a\n    sessions_quota: 1\n  - id: a\n    sessions_quota: 2\n",
                 "duplicate team"},
                {"teams:\n  - id: a\n    sessions_quota: 1\n    api_keys_sha256: [abc]\n",
                 "64 hex"},
                {"teams:\n  - id: a\n    sessions_quota: 1\n    unix_users: [no-such-user-here]\n",
                 "teams[0].unix_users[0]: 'no-such-user-here' is no user of this host"},
                {"teams:\n  - id: a\n    sessions_quota: 1\n    unix_users: nobody\n",
                 "teams[0].unix_users must be a list"},
                {"teams:\n  - id: a\n    sessions_quota: 100001\n",
                 "sessions_quota: required, 0-100000"},
                {"a: 1\na: 2\n", "duplicate key"},
                {"[1, 2]\n", "mapping"},
                {"key: [unclosed\n", "line"},
                {"pod:\n  memory_max: -5\n", "pod.memory_max"},
                {"pod:\n  memory_max: 1K\n", "pod.memory_max: must be between 1M"},
                {"pod:\n  pack_after: soon\n", "pod.pack_after: expected a duration"},
                {"agent: 2G\n", "'agent' must be a mapping"},
                {"agent:\n  memory: 8M\n", "agent.memory: must be between 16M"},
                {"agent:\n  cpu: 2\n", "cpu"},
                {"agent:\n  pids: 5000000\n", "agent.pids: at most"},
                {"pod:\n  pack_after: 2d\n", "pod.pack_after: must be off or between 1ms and 24h"},
                {"public_url: not a url\n", "public_url: expected an http"},
                {"control_listen: localhost:7070\n", "no host names"},
                {"pool_size: -1\n", "pool_size: expected a number of pods from 0"},
                {"pool_size: 65\n", "pool_size: expected"},
                {"pool_size: many\n", "pool_size: expected"},
                {"pool_size:\n  github: two\n", "pool_size.github: expected"},
                {"fleet: yes\n", "fleet must be a mapping"},
                {"fleet:\n  etcd: {endpoints: [http://e:2379]}\n", "fleet.node: required"},
                {"fleet:\n  node: N1\n  etcd: {endpoints: [http://e:2379]}\n", "[a-z0-9]"},
                {"fleet:\n  node: abcdefghijklm\n  etcd: {endpoints: [http://e:2379]}\n",
                 "1-12 characters"},
                {"fleet:\n  node: n1\n", "fleet.etcd: required"},
                {"fleet:\n  node: n1\n  etcd: {}\n", "fleet.etcd.endpoints: required"},
                {"fleet:\n  node: n1\n  etcd: {endpoints: [e:2379]}\n", "not an http"},
                {"fleet:\n  node: n1\n  etcd: {endpoints: ',,'}\n", "endpoints: empty"},
                {"fleet:\n  node: n1\n  etcd: {endpoints: [http://e:2379], prefix: pome}\n",
                 "fleet.etcd.prefix: must start with '/'"},
                {"fleet:\n  node: n1\n  etcd: {endpoints: [http://e:2379], cert: /c.pem}\n",
                 "cert and key go together"},
                {"fleet:\n  node: n1\n  etcd: {endpoints: [http://e:2379], user: x}\n",
                 "unknown key 'fleet.etcd.user'"},
                {"fleet:\n  node: n1\n  lease_ttl: 1s\n  etcd: {endpoints: [http://e:2379]}\n",
                 "fleet.lease_ttl: must be between 2s and 1h"},
                {"fleet:\n  node: n1\n  timeout: 20s\n  etcd: {endpoints: [http://e:2379]}\n",
                 "below fleet.lease_ttl"},
                {"fleet:\n  node: n1\n  compaction_interval: 500ms\n  etcd: {endpoints: "
                 "[http://e:2379]}\n",
                 "fleet.compaction_interval: must be off or at least 1s"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Config *c = NULL;
                char err[256] = "";
                int r = load_text(cases[i].text, &c, err, sizeof(err));
                CHECK(r < 0 && !c);
                if (!strstr(err, cases[i].needle)) {
                        fprintf(stderr, "case %zu: '%s' not in error '%s'\n", i, cases[i].needle,
                                err);
                        check_failures++;
                }
        }
        Config *c = NULL;
        char err[256] = "";
        CHECK(config_load("/nonexistent/pomed.conf", &c, err, sizeof(err)) == -ENOENT);
        CHECK(strstr(err, "/nonexistent/pomed.conf") != NULL);
        CHECK(config_load("/tmp", &c, err, sizeof(err)) == -EINVAL);
        CHECK(strstr(err, "not a regular file") != NULL);
        CHECK_OK(load_text(
                "teams:\n  - id: a\n    sessions_quota: 1\n    unix_users: [root, 65534]\n", &c,
                err, sizeof(err)));
        CHECK(c && c->teams[0].n_unix_uids == 2 && c->teams[0].unix_uids[0] == 0 &&
              c->teams[0].unix_uids[1] == 65534);
        config_free(c);
        CHECK_OK(load_text("public_url: https://pome.example/base/\n", &c, err, sizeof(err)));
        CHECK(c && streq(c->public_url, "https://pome.example/base")); /* no trailing '/' */
        config_free(c);
}

static void test_parsers(void)
{
        uint64_t v;
        static const struct {
                const char *s;
                uint64_t usec;
        } durations[] = {{"90", 90 * USEC_PER_SEC},
                         {"90s", 90 * USEC_PER_SEC},
                         {"15m", 900 * USEC_PER_SEC},
                         {"1h", 3600 * USEC_PER_SEC},
                         {"250ms", 250 * USEC_PER_MSEC},
                         {"7d", 7 * 86400 * USEC_PER_SEC},
                         {"off", 0}};
        for (size_t i = 0; i < ELEMENTSOF(durations); i++) {
                _cleanup_json_ json_t *j = json_string(durations[i].s);
                CHECK(config_parse_duration(j, &v) == 0 && v == durations[i].usec);
        }
        static const char *const bad[] = {"", "s", "1w", "-1s", "1.5s", "99999999999999999999h"};
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_json_ json_t *j = json_string(bad[i]);
                CHECK(config_parse_duration(j, &v) < 0);
        }
        _cleanup_json_ json_t *mib = json_string("64M"), *n = json_integer(4096);
        CHECK(config_parse_size(mib, &v) == 0 && v == 64u << 20);
        CHECK(config_parse_size(n, &v) == 0 && v == 4096);
        char *addr;
        uint16_t port;
        CHECK(config_parse_listen("0.0.0.0:0", &addr, &port) == 0 && port == 0);
        free(addr);
        CHECK(config_parse_listen("[::]:7070", &addr, &port) == 0 && streq(addr, "::"));
        free(addr);
        CHECK(config_parse_listen(":7070", &addr, &port) < 0);
        CHECK(config_parse_listen("host:", &addr, &port) < 0);
}

static void test_yaml_bombs(void)
{
        /* exponential alias expansion is bounded, not followed */
        const char *bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                           "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                           "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                           "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                           "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                           "f: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n";
        json_t *j = NULL;
        char err[128] = "";
        CHECK(config_yaml_to_json(bomb, strlen(bomb), &j, err, sizeof(err)) == -EINVAL);
        CHECK(strstr(err, "too large") != NULL);
        const char *ok = "n: 3\nr: 1.5\nt: true\ns: '3'\nz: ~\n";
        CHECK_OK(config_yaml_to_json(ok, strlen(ok), &j, err, sizeof(err)));
        CHECK(json_integer_value(json_object_get(j, "n")) == 3);
        CHECK(json_is_real(json_object_get(j, "r")) && json_is_true(json_object_get(j, "t")));
        CHECK(json_is_string(json_object_get(j, "s")) && json_is_null(json_object_get(j, "z")));
        json_decref(j);
}

static void write_file(const char *path, const char *text)
{
        FILE *f = fopen(path, "we");
        CHECK(f != NULL);
        CHECK(fputs(text, f) >= 0);
        CHECK(fclose(f) == 0);
}

/* <path>.d/<name>.conf drop-ins apply after path, in name order; others are ignored. */
static void test_dropins(void)
{
        char dir[] = "/tmp/pome-test-dropins.XXXXXX";
        CHECK(mkdtemp(dir) != NULL);
        char main_path[256], d[256], p[300];
        snprintf(main_path, sizeof(main_path), "%s/pomed.conf", dir);
        snprintf(d, sizeof(d), "%s/pomed.conf.d", dir);
        write_file(main_path, "control_listen: 127.0.0.1:7000\nlimits:\n  lifetime: 20m\n");
        CHECK(mkdir(d, 0755) == 0);
        snprintf(p, sizeof(p), "%s/50-b.conf", d);
        write_file(p, "limits:\n  idle_timeout: 2m\ngateway_listen: 127.0.0.1:7002\n");
        snprintf(p, sizeof(p), "%s/10-a.conf", d);
        write_file(p, "gateway_listen: 127.0.0.1:7001\nteams:\n  - id: a\n    sessions_quota: 2\n");
        snprintf(p, sizeof(p), "%s/90-ignored.yaml", d);
        write_file(p, "not: a key pomed knows\n");

        Config *c = NULL;
        char err[512] = "";
        CHECK_OK(config_load(main_path, &c, err, sizeof(err)));
        CHECK(c->control_port == 7000);
        CHECK(c->gateway_port == 7002); /* 50-b after 10-a */
        CHECK(c->lifetime_usec == 20 * 60 * USEC_PER_SEC &&
              c->idle_timeout_usec == 2 * 60 * USEC_PER_SEC);
        CHECK(c->n_teams == 1 && streq(c->teams[0].id, "a"));
        CHECK(strv_length(c->files) == 3 && streq(c->files[0], main_path) &&
              strstr(c->files[1], "10-a.conf") && strstr(c->files[2], "50-b.conf"));
        config_free(c);

        /* a bad drop-in is named, with the line that set the value */
        snprintf(p, sizeof(p), "%s/60-bad.conf", d);
        write_file(p, "# a drop-in\nlimits:\n  lifetime: 2h\n");
        CHECK(config_load(main_path, &c, err, sizeof(err)) == -EINVAL);
        char want[700];
        snprintf(want, sizeof(want), "%s:3: limits.lifetime: must be between 1s and 30m", p);
        if (!streq(err, want)) {
                fprintf(stderr, "wanted '%s', got '%s'\n", want, err);
                check_failures++;
        }
        /* a later file setting the same key takes its line over; an unknown key is its own */
        write_file(p, "limits:\n  lifetime: 5m\n  lifetim: 5s\n");
        CHECK(config_load(main_path, &c, err, sizeof(err)) == -EINVAL);
        snprintf(want, sizeof(want), "%s:3: unknown key 'limits.lifetim'", p);
        if (!streq(err, want)) {
                fprintf(stderr, "wanted '%s', got '%s'\n", want, err);
                check_failures++;
        }
        unlink(p);

        /* no main file: an error, unless optional (pomed without --config) */
        unlink(main_path);
        CHECK(config_load(main_path, &c, err, sizeof(err)) == -ENOENT);
        CHECK_OK(config_load_with(main_path, CONFIG_FILE_OPTIONAL, &c, err, sizeof(err)));
        CHECK(c->control_port == 7070 && c->gateway_port == 7002 && strv_length(c->files) == 2);
        config_free(c);
        CHECK_OK(config_load_with("/nonexistent/pomed.conf", CONFIG_FILE_OPTIONAL, &c, err,
                                  sizeof(err)));
        CHECK(strv_length(c->files) == 0 && !c->pod_user);
        config_free(c);

        char cmd[300];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        CHECK(system(cmd) == 0);
}

/* Refusals name FILE:LINE of the key or value at fault (the line map of pome-yaml). */
static void test_refusal_lines(void)
{
        static const struct {
                const char *text;
                unsigned line;
                const char *message;
        } cases[] = {
                {"control_listen: 127.0.0.1:0\nlimits:\n  max_body: 2M\n  lifetim: 5s\n", 4,
                 "unknown key 'limits.lifetim'"},
                {"# pomed.conf\n\ncontol_listen: 1.2.3.4:5\n", 3, "unknown key 'contol_listen'"},
                {"limits:\n  idle_timeout: soon\n", 2,
                 "limits.idle_timeout: expected a duration like 90s, 15m, 1h or off"},
                {"bus: none\ngateway_listen: localhost:7071\n", 2,
                 "gateway_listen: expected IP-ADDRESS:PORT (e.g. 127.0.0.1:7071 or [::1]:7071; no "
                 "host names), got 'localhost:7071'"},
                {"pod:\n  cpu_weight: 1\n  memory_max: 1K\n", 3,
                 "pod.memory_max: must be between 1M and 1P"},
                {"teams:\n  - id: a\n    sessions_quota: 1\n  - id: b\n    sessions_quota: lots\n",
                 5, "teams[1].sessions_quota: required, 0-100000"},
                {"teams:\n  - id: a\n    sessions_quota: 1\n    colour: red\n", 4,
                 "unknown key 'teams[0].colour'"},
                {"teams:\n  - id: a\n    sessions_quota: 1\n  - id: a\n    sessions_quota: 2\n", 4,
                 "teams[1].id: duplicate team 'a'"},
                {"state_dir: [a, b]\n", 1, "'state_dir' must be a string"},
                {"limits:\n  \"a/b~c\": 1\n", 2, "unknown key 'limits.a/b~c'"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *path = write_tmp(cases[i].text);
                Config *c = NULL;
                char err[512] = "", want[700];
                CHECK(config_load(path, &c, err, sizeof(err)) == -EINVAL && !c);
                snprintf(want, sizeof(want), "%s:%u: %s", path, cases[i].line, cases[i].message);
                if (!streq(err, want)) {
                        fprintf(stderr, "case %zu: wanted '%s', got '%s'\n", i, want, err);
                        check_failures++;
                }
                unlink(path);
        }
}

int main(void)
{
        test_refusal_lines();
        test_dropins();
        test_default();
        test_overlay();
        test_refusals();
        test_fleet();
        test_pool_size();
        test_parsers();
        test_yaml_bombs();
        return check_finish();
}
