/* SPDX-License-Identifier: MIT */
/*
 * `pome twin start NAME`: one digital twin on this machine, served in-process
 * over HTTP — no supervisor, no account, no sandbox (CONTRACT.md "A local twin
 * as a process"). The same engine and the same front as pomed's gateway; the
 * tape lives in memory and dies with the process.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <systemd/sd-event.h>
#include <time.h>

#include "cli/commands.h"
#include "common/httpd.h"
#include "common/json-util.h"
#include "common/token.h"
#include "common/util.h"
#include "pods/front/front.h"
#include "pods/front/serve.h"
#include "pods/front/tape.h"

#define LOCAL_MAX_BODY        (1u << 20) /* bytes of a request body */
#define LOCAL_EVENTS_PAGE_MAX (4u << 20) /* bytes of one /_pome/events page */

/* A loopback twin without TWIN_AUTH_SECRET signs with this well-known dev secret. */
static const uint8_t dev_secret[TOKEN_SECRET_LEN] = "pome-local-twin-dev-secret-32byt";

typedef struct LocalTwin {
        Twin *twin;
        const TwinKind *kind;
        json_t *boot_seed; /* what /admin/reset goes back to */
        Tape *tape;
        uint8_t secret[TOKEN_SECRET_LEN];
        const char *admin_token;
        char base[128]; /* http://host:port */
        time_t started;
        unsigned long calls;
} LocalTwin;

static void help(void)
{
        printf("Usage: pome twin start TWIN [--port PORT] [--host ADDRESS] [--seed NAME|FILE]\n"
               "\n"
               "Runs one digital twin (github, slack) on this machine: no pomed, no\n"
               "account, no sandbox. Call it under /s/<session-id>/… with the token it prints;\n"
               "read its tape at /s/<session-id>/_pome/events. Nothing is graded locally.\n"
               "\n"
               "Options:\n"
               "  --port PORT        listen port (default $PORT, else 3333; 0 = any free port)\n"
               "  --host ADDRESS     bind address (default $<TWIN>_CLONE_HOST, else 127.0.0.1)\n"
               "  --seed NAME|FILE   starting state: a seed of the twin's image (default\n"
               "                     \"default\") or a JSON file; $POME_SEED_JSON (JSON text)\n"
               "                     wins, $<TWIN>_CLONE_NO_SEED=1 starts empty\n"
               "  -h, --help         show this help\n"
               "\n"
               "Environment: TWIN_AUTH_SECRET (token signing secret; a loopback twin without it\n"
               "uses a fixed dev secret), TWIN_ADMIN_TOKEN (admin routes by X-Admin-Token instead\n"
               "of the loopback check).\n"
               "\n"
               "Routes: GET /healthz; /s/<sid>/… the twin (REST, /mcp, "
               "/_pome/health|state|events);\n"
               "POST /admin/reset, /admin/seed (body: seed JSON), /admin/token ({\"sid\": …}).\n");
}

static char *images_dir(void)
{
        const char *env = getenv("POME_IMAGES_DIR");
        if (env)
                return strdup(env);
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (n > 0) {
                exe[n] = 0;
                char *slash = strrchr(exe, '/');
                if (slash)
                        *slash = 0;
                char *p;
                if (asprintf(&p, "%s/../share/pome/sandbox-images", exe) >= 0) {
                        if (access(p, R_OK) == 0)
                                return p;
                        free(p);
                }
        }
        if (access(POME_SOURCE_DIR "/sandbox-images", R_OK) == 0)
                return strdup(POME_SOURCE_DIR "/sandbox-images");
        return strdup("/usr/share/pome/sandbox-images");
}

/* Loads the boot seed as the contract orders it: POME_SEED_JSON, NO_SEED, --seed, default. */
static int load_boot_seed(const TwinKind *k, const char *seed_arg, json_t **ret)
{
        json_error_t je;
        const char *inline_json = getenv("POME_SEED_JSON");
        if (inline_json) {
                json_t *j = json_loads(inline_json, JSON_REJECT_DUPLICATES, &je);
                if (!j) {
                        fprintf(stderr, "pome twin: POME_SEED_JSON is not JSON: %s\n", je.text);
                        return -EINVAL;
                }
                *ret = j;
                return 0;
        }
        char env[64];
        snprintf(env, sizeof(env), "%s_CLONE_NO_SEED", k->name);
        for (char *p = env; *p; p++)
                *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
        if (streq_ptr(getenv(env), "1")) {
                *ret = json_object();
                return 0;
        }
        _cleanup_free_ char *path = NULL;
        const char *name = seed_arg ? seed_arg : "default";
        if (strchr(name, '/') || (strlen(name) > 5 && streq(name + strlen(name) - 5, ".json")))
                path = strdup(name);
        else {
                _cleanup_free_ char *dir = images_dir();
                if (!dir || asprintf(&path, "%s/%s/seeds/%s.json", dir, k->name, name) < 0)
                        path = NULL;
        }
        if (!path)
                return -ENOMEM;
        json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
        if (!j) {
                fprintf(stderr, "pome twin: cannot load seed %s: %s\n", path, je.text);
                return -EINVAL;
        }
        *ret = j;
        return 0;
}

static void reply(HttpRequest *rq, int status, const json_t *headers, const json_t *body)
{
        (void)http_reply_json(rq, status, headers, body);
}

static void reply_error(HttpRequest *rq, int status, const char *type, const char *message)
{
        _cleanup_json_ json_t *b =
                json_pack("{s:{s:s, s:s}}", "error", "type", type, "message", message);
        reply(rq, status, NULL, b);
}

static bool admin_allowed(LocalTwin *lt, HttpRequest *rq)
{
        if (lt->admin_token) {
                const char *t = http_request_header(rq, "X-Admin-Token");
                return t && token_equal(t, lt->admin_token);
        }
        return http_request_from_loopback(rq);
}

static json_t *mint(LocalTwin *lt, const char *sid)
{
        _cleanup_free_ char *session = NULL, *provider = NULL;
        int64_t exp = (int64_t)time(NULL) + 24 * 3600;
        if (token_mint_session(lt->secret, sizeof(lt->secret), sid, "local", exp, NULL, NULL,
                               &session) < 0)
                return NULL;
        (void)token_mint_provider(lt->secret, sizeof(lt->secret), lt->kind->name, sid, exp,
                                  &provider);
        char rest[256];
        snprintf(rest, sizeof(rest), "%s/s/%s", lt->base, sid);
        return json_pack("{s:s, s:s, s:s, s:s?, s:I}", "session_id", sid, "rest_url", rest,
                         "session_token", session, "provider_token", provider, "expires_at",
                         (json_int_t)exp);
}

static void handle_admin(LocalTwin *lt, HttpRequest *rq, const char *what)
{
        if (!admin_allowed(lt, rq)) {
                reply_error(rq, 403, "forbidden",
                            lt->admin_token ? "Send X-Admin-Token."
                                            : "Admin routes answer "
                                              "loopback callers only.");
                return;
        }
        if (!streq(http_request_method(rq), "POST")) {
                reply_error(rq, 405, "validation_failed", "Admin routes take POST.");
                return;
        }
        size_t len;
        const char *body = http_request_body(rq, &len);
        char err[256] = "";
        if (streq(what, "reset") || streq(what, "seed")) {
                _cleanup_json_ json_t *seed = NULL;
                if (streq(what, "seed")) {
                        json_error_t je;
                        seed = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
                        if (!json_is_object(seed)) {
                                reply_error(rq, 400, "validation_failed",
                                            "The body must be a seed (a JSON object).");
                                return;
                        }
                        /* the new seed is also what a later reset returns to */
                        json_decref(lt->boot_seed);
                        lt->boot_seed = json_incref(seed);
                }
                int r = twin_reseed(lt->twin, lt->boot_seed, err, sizeof(err));
                if (r < 0) {
                        reply_error(rq, 422, "validation_failed", err);
                        return;
                }
                (void)tape_reset(lt->tape);
                _cleanup_json_ json_t *ok =
                        json_pack("{s:b, s:s}", "ok", 1, "twin", lt->kind->name);
                reply(rq, 200, NULL, ok);
                return;
        }
        if (streq(what, "token")) {
                _cleanup_json_ json_t *j = len ? json_loadb(body, len, 0, NULL) : json_object();
                const char *sid = json_get_str(j, "sid");
                _cleanup_free_ char *gen = NULL;
                if (!sid && token_random_id("ses_", 16, &gen) >= 0)
                        sid = gen;
                if (!sid || strlen(sid) > 60 || !*sid || strchr(sid, '/')) {
                        reply_error(rq, 422, "validation_failed",
                                    "sid must be 1-60 characters "
                                    "without '/'.");
                        return;
                }
                _cleanup_json_ json_t *t = mint(lt, sid);
                reply(rq, t ? 200 : 500, NULL, t);
                return;
        }
        reply_error(rq, 404, "not_found", "Admin routes: /admin/reset, /admin/seed, /admin/token.");
}

/* The in-process backend: the twin answers at once. */
static int local_call(void *userdata, const TwinRequest *rq, FrontExchange *x)
{
        LocalTwin *lt = userdata;
        TwinReply rp = {};
        twin_handle(lt->twin, rq, &rp);
        front_exchange_done(x, 0, &rp);
        twin_reply_done(&rp);
        return 0;
}

static int local_record(void *userdata, const json_t *row)
{
        LocalTwin *lt = userdata;
        lt->calls++;
        return row ? tape_append(lt->tape, row) : -ENOMEM;
}

/* HttpRefuseFn: the HTTP layer's own refusals (400, 413, 431…) in the twin's envelope. */
static void refuse(const char *path _unused_, int status, const char *code, const char *message,
                   HttpRefusal *ret, void *userdata)
{
        LocalTwin *lt = userdata;
        front_refusal(lt->kind, status, code, message, ret);
}

static void handle(HttpRequest *rq, void *userdata)
{
        LocalTwin *lt = userdata;
        const char *raw = http_request_path(rq);
        if (streq(raw, "/healthz")) {
                _cleanup_json_ json_t *tools = twin_kind_tools(lt->kind);
                _cleanup_json_ json_t *j = json_pack(
                        "{s:b, s:s, s:s, s:i, s:{s:i, s:I, s:I, s:I, s:s}}", "ok", 1, "twin",
                        lt->kind->name, "implementation", lt->kind->implementation, "tools",
                        (int)json_array_size(tools), "runtime", "pid", (int)getpid(),
                        "uptime_seconds", (json_int_t)(time(NULL) - lt->started), "calls",
                        (json_int_t)lt->calls, "tape_rows", (json_int_t)tape_count(lt->tape),
                        "version", POME_VERSION);
                reply(rq, 200, NULL, j);
                return;
        }
        const char *admin = startswith(raw, "/admin/");
        if (admin) {
                handle_admin(lt, rq, admin);
                return;
        }
        const char *p = startswith(raw, "/s/");
        const char *e = p ? strchrnul(p, '/') : NULL;
        char sid[64];
        if (!p || e == p || (size_t)(e - p) >= sizeof(sid)) {
                reply_error(rq, 404, "not_found",
                            "Local twin routes: GET /healthz, /s/<session-id>/… (the twin), "
                            "POST /admin/reset|seed|token.");
                return;
        }
        memcpy(sid, p, (size_t)(e - p));
        sid[e - p] = 0;
        json_t *headers = http_request_headers(rq);
        size_t body_len;
        const char *body = http_request_body(rq, &body_len);
        FrontAuth auth =
                front_authenticate(lt->kind, lt->secret, sizeof(lt->secret), sid, headers,
                                   http_request_query(rq), body, body_len, time(NULL), NULL);
        if (auth != FRONT_AUTH_OK) {
                /* A local twin answers as the vendor would: 401 in its own envelope. */
                TwinReply rp = {};
                lt->kind->auth_error(
                        auth == FRONT_AUTH_MISSING ? TWIN_AUTH_MISSING : TWIN_AUTH_INVALID, &rp);
                reply(rq, rp.status, rp.headers, rp.body);
                twin_reply_done(&rp);
                return;
        }
        char request_id[25];
        if (front_request_id(request_id) < 0)
                snprintf(request_id, sizeof(request_id), "req_unavailable");
        char mount[256];
        snprintf(mount, sizeof(mount), "%s/s/%s", lt->base, sid);
        FrontTarget t = {
                .kind = lt->kind,
                .tape = lt->tape,
                .run_id = sid,
                .mount_url = mount,
                .rest = e,
                .request_id = request_id,
                .max_page = LOCAL_EVENTS_PAGE_MAX,
                .backend = {.call = local_call, .record = local_record, .userdata = lt},
        };
        front_serve(rq, &t);
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si _unused_,
                     void *userdata _unused_)
{
        sd_event_exit(sd_event_source_get_event(s), 0);
        return 0;
}

/* A non-loopback twin without TWIN_AUTH_SECRET: generate one once and keep it (0600). */
static int persistent_secret(const char *twin, uint8_t out[TOKEN_SECRET_LEN])
{
        const char *home = getenv("XDG_STATE_HOME");
        _cleanup_free_ char *dir = NULL, *path = NULL;
        if (home)
                dir = strdup(home);
        else if (getenv("HOME") && asprintf(&dir, "%s/.local/state", getenv("HOME")) < 0)
                dir = NULL;
        if (!dir || asprintf(&path, "%s/pome-%s-twin.secret", dir, twin) < 0)
                return -ENOMEM;
        (void)mkdir(dir, 0700);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd >= 0)
                return read(fd, out, TOKEN_SECRET_LEN) == TOKEN_SECRET_LEN ? 0 : -EINVAL;
        int r = token_random_bytes(out, TOKEN_SECRET_LEN);
        if (r < 0)
                return r;
        _cleanup_close_ int wfd =
                open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (wfd < 0 || write(wfd, out, TOKEN_SECRET_LEN) != TOKEN_SECRET_LEN)
                return -EIO;
        fprintf(stderr, "pome twin: generated a token secret in %s\n", path);
        return 0;
}

static int twin_start(int argc, char **argv)
{
        static const struct option opts[] = {{"port", required_argument, NULL, 'p'},
                                             {"host", required_argument, NULL, 'H'},
                                             {"seed", required_argument, NULL, 's'},
                                             {"help", no_argument, NULL, 'h'},
                                             {}};
        const char *port_s = getenv("PORT"), *host = NULL, *seed = NULL;
        int c;
        optind = 0; /* full re-initialisation: options may follow the twin name */
        while ((c = getopt_long(argc, argv, "p:H:s:h", opts, NULL)) >= 0) {
                switch (c) {
                case 'p':
                        port_s = optarg;
                        break;
                case 'H':
                        host = optarg;
                        break;
                case 's':
                        seed = optarg;
                        break;
                case 'h':
                        help();
                        return POME_EXIT_OK;
                default:
                        fprintf(stderr, "Try 'pome twin start --help'.\n");
                        return POME_EXIT_USAGE;
                }
        }
        if (optind + 1 != argc) {
                fprintf(stderr, "pome twin start: name one twin (github, slack). Try "
                                "'pome twin start --help'.\n");
                return POME_EXIT_USAGE;
        }
        LocalTwin lt = {.started = time(NULL)};
        lt.kind = twin_kind_find(argv[optind]);
        if (!lt.kind) {
                fprintf(stderr, "pome twin start: unknown twin '%s' (known:", argv[optind]);
                for (const char *const *n = twin_kind_names(); *n; n++)
                        fprintf(stderr, " %s", *n);
                fprintf(stderr, ")\n");
                return POME_EXIT_USAGE;
        }
        char *end;
        unsigned long port = port_s ? strtoul(port_s, &end, 10) : 3333;
        if (port_s && (*end || !*port_s || port > 65535)) {
                fprintf(stderr, "pome twin start: bad port '%s'\n", port_s);
                return POME_EXIT_USAGE;
        }
        char env[64];
        snprintf(env, sizeof(env), "%s_CLONE_HOST", lt.kind->name);
        for (char *p = env; *p; p++)
                *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
        if (!host)
                host = getenv(env) ? getenv(env) : "127.0.0.1";
        bool loopback = startswith(host, "127.") || streq(host, "::1") || streq(host, "localhost");
        if (streq(host, "localhost"))
                host = "127.0.0.1";

        const char *secret = getenv("TWIN_AUTH_SECRET");
        if (secret) {
                /* any length: hash it down to the key size */
                char hex[65];
                token_sha256_hex(secret, hex);
                for (size_t i = 0; i < TOKEN_SECRET_LEN; i++)
                        lt.secret[i] =
                                (uint8_t)strtoul((char[]){hex[2 * i], hex[2 * i + 1], 0}, NULL, 16);
        } else if (loopback)
                memcpy(lt.secret, dev_secret, sizeof(lt.secret));
        else if (persistent_secret(lt.kind->name, lt.secret) < 0) {
                fprintf(stderr, "pome twin start: cannot create a token secret; set "
                                "TWIN_AUTH_SECRET\n");
                return POME_EXIT_ERROR;
        }
        lt.admin_token = getenv("TWIN_ADMIN_TOKEN");

        int ret = POME_EXIT_ERROR;
        _cleanup_json_ json_t *t = NULL;
        sd_event *e = NULL;
        Httpd *h = NULL;
        char err[256] = "";
        if (load_boot_seed(lt.kind, seed, &lt.boot_seed) < 0)
                goto out;
        if (twin_new(lt.kind, lt.boot_seed, &lt.twin, err, sizeof(err)) < 0) {
                fprintf(stderr, "pome twin start: the seed was rejected: %s\n", err);
                goto out;
        }
        if (tape_open(NULL, &lt.tape) < 0 || sd_event_default(&e) < 0)
                goto out;
        sigset_t ss;
        sigemptyset(&ss);
        sigaddset(&ss, SIGINT);
        sigaddset(&ss, SIGTERM);
        sigprocmask(SIG_BLOCK, &ss, NULL);
        signal(SIGPIPE, SIG_IGN);
        (void)sd_event_add_signal(e, NULL, SIGINT, on_signal, NULL);
        (void)sd_event_add_signal(e, NULL, SIGTERM, on_signal, NULL);
        HttpdConfig hc = {.address = host,
                          .port = (uint16_t)port,
                          .max_body = LOCAL_MAX_BODY,
                          .connection_limit = 256,
                          .connection_timeout = 60,
                          .refuse = refuse};
        int r = httpd_new(e, &hc, handle, &lt, &h);
        if (r < 0) {
                fprintf(stderr, "pome twin start: cannot listen on %s:%lu: %s\n", host, port,
                        strerror(-r));
                goto out;
        }
        bool v6 = strchr(host, ':') != NULL;
        snprintf(lt.base, sizeof(lt.base), "http://%s%s%s:%u", v6 ? "[" : "", host, v6 ? "]" : "",
                 httpd_port(h));
        t = mint(&lt, "ses_local");
        printf("%s twin (%s) listening on %s\n"
               "  rest_url   %s\n"
               "  mcp_url    %s/mcp\n"
               "  events     %s/_pome/events\n"
               "  token      %s\n"
               "  %s token %s\n"
               "Stop with Ctrl-C. Nothing is graded locally; the tape dies with this process.\n",
               lt.kind->name, lt.kind->implementation, lt.base, json_get_str(t, "rest_url"),
               json_get_str(t, "rest_url"), json_get_str(t, "rest_url"),
               json_get_str(t, "session_token"), lt.kind->name,
               strempty(json_get_str(t, "provider_token")));
        fflush(stdout);
        r = sd_event_loop(e);
        ret = r < 0 ? POME_EXIT_ERROR : POME_EXIT_OK;
out:
        httpd_free(h);
        sd_event_unref(e);
        tape_free(lt.tape);
        twin_free(lt.twin);
        json_decref(lt.boot_seed);
        return ret;
}

int cmd_twin(int argc, char **argv)
{
        if (argc < 2 || streq(argv[1], "--help") || streq(argv[1], "-h") ||
            streq(argv[1], "help")) {
                help();
                return argc < 2 ? POME_EXIT_USAGE : POME_EXIT_OK;
        }
        if (streq(argv[1], "start"))
                return twin_start(argc - 1, argv + 1);
        fprintf(stderr, "pome twin: unknown subcommand '%s'. Try 'pome twin --help'.\n", argv[1]);
        return POME_EXIT_USAGE;
}
