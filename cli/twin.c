/* SPDX-License-Identifier: MIT */
/*
 * `pome twin start NAME`: one digital twin on this machine, served in-process
 * over HTTP — no supervisor, no account, no sandbox (CONTRACT.md "A local twin
 * as a process"). The same engine and the same front as pomed's gateway; the
 * tape lives in an unlinked file and dies with the process.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <systemd/sd-event.h>
#include <time.h>

#include "cli/build-info.h"
#include "cli/commands.h"
#include "common/fileio.h"
#include "common/httpd.h"
#include "common/json-util.h"
#include "common/timeutil.h"
#include "common/token.h"
#include "common/util.h"
#include "pods/front/front.h"
#include "pods/front/serve.h"
#include "pods/front/tape.h"

#define LOCAL_MAX_BODY   (1u << 20) /* bytes of a request body */
#define LOCAL_SECRET_MAX 4096u      /* bytes of a persisted secret file */

/* A loopback twin without TWIN_AUTH_SECRET signs with this well-known dev secret. */
static const char dev_secret[] = "pome-local-twin-dev-secret-32byt";

typedef struct LocalTwin {
        Twin *twin;
        const TwinKind *kind;
        json_t *boot_seed; /* what /admin/reset goes back to */
        Tape *tape;
        char *secret; /* the HMAC key, exactly the bytes given (CONTRACT.md "Tokens") */
        size_t secret_len;
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
               "Environment:\n"
               "  TWIN_AUTH_SECRET   the token signing secret, used byte for byte as the\n"
               "                     HMAC-SHA256 key (tokens minted elsewhere with the same\n"
               "                     secret verify); empty is refused. Without it a loopback\n"
               "                     twin uses a fixed dev secret, and any other generates one,\n"
               "                     prints it once and keeps it in $POME_TWIN_DATA_DIR/secret\n"
               "                     (default ./.pome-data/<twin>/secret, mode 0600), reused on\n"
               "                     the next start; it refuses to start when it cannot.\n"
               "  TWIN_ADMIN_TOKEN   admin routes by X-Admin-Token instead of the loopback check\n"
               "\n"
               "Routes: GET /healthz (no auth); /s/<sid>/… the twin (REST, /mcp, /mcp/tools,\n"
               "/mcp/call, /healthz, /_pome/health|state|events); POST /admin/reset (the boot\n"
               "seed again, tape emptied), /admin/seed (body: a seed; the tape is kept),\n"
               "/admin/token ({\"sid\": …}: tokens for a session). Each admin call is a tape "
               "row.\n"
               "stripe also serves /v1/… without the /s/<sid> prefix (its SDKs take a host but\n"
               "no path): the key presented names the session.\n");
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

/*
 * rp := the twin's own error envelope (GitHub {message, documentation_url, status}, Slack
 * {ok:false, error}) at status — ours, even where the vendor answers API errors with 200 —
 * and always carrying the sentence: these routes are ours, and a caller told only
 * "invalid_arguments" could not fix its seed.
 */
static void local_error(const LocalTwin *lt, int status, const char *code, const char *message,
                        TwinReply *rp)
{
        lt->kind->error(status, code, message, rp);
        rp->status = status;
        free(rp->error);
        rp->error = strdup(message);
        json_t *e = json_object_get(rp->body, "error");
        if (json_is_object(rp->body) && !json_object_get(rp->body, "message") && !json_is_object(e))
                json_object_set_new(rp->body, "message", json_string(message));
}

/* Answers rq with local_error's envelope. */
static void reply_local_error(const LocalTwin *lt, HttpRequest *rq, int status, const char *code,
                              const char *message, const char *request_id)
{
        TwinReply rp = {};
        local_error(lt, status, code, message, &rp);
        front_reply(rq, rp.status, rp.headers, rp.body, request_id);
        twin_reply_done(&rp);
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
        const uint8_t *key = (const uint8_t *)lt->secret;
        if (token_mint_session(key, lt->secret_len, sid, "local", exp, NULL, NULL, &session) < 0)
                return NULL;
        (void)token_mint_provider(key, lt->secret_len, lt->kind->name, sid, exp, &provider);
        char rest[256];
        snprintf(rest, sizeof(rest), "%s/s/%s", lt->base, sid);
        return json_pack("{s:s, s:s, s:s, s:s?, s:I}", "session_id", sid, "rest_url", rest,
                         "session_token", session, "provider_token", provider, "expires_at",
                         (json_int_t)exp);
}

static bool blank(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (!strchr(" \t\r\n", s[i]) || s[i] == 0)
                        return false;
        return true;
}

/*
 * The admin call what (reset, seed, token) of a caller past the gate, into rp: status,
 * body, error, request_body and state_mutation, for the reply and its tape row.
 */
static void admin_call(LocalTwin *lt, HttpRequest *rq, const char *what, TwinReply *rp)
{
        bool reset = streq(what, "reset"), seed = streq(what, "seed"), tok = streq(what, "token");
        if (!reset && !seed && !tok) {
                local_error(lt, 404, "unknown_method",
                            "Admin routes: POST /admin/reset, /admin/seed, /admin/token.", rp);
                return;
        }
        if (!streq(http_request_method(rq), "POST")) {
                local_error(lt, 405, "method_not_allowed", "Admin routes take POST.", rp);
                json_decref(rp->headers);
                rp->headers = json_pack("{s:s}", "Allow", "POST");
                return;
        }
        size_t len;
        const char *body = http_request_body(rq, &len);
        _cleanup_json_ json_t *j = NULL;
        if (!reset && body && !blank(body, len)) {
                json_error_t je;
                j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
                if (!j) {
                        char msg[128];
                        snprintf(msg, sizeof(msg), "The body is not JSON (line %d, column %d).",
                                 je.line, je.column);
                        local_error(lt, 400, "invalid_json", msg, rp);
                        return;
                }
                rp->request_body = json_incref(j);
        }
        if (tok) {
                const char *sid = json_get_str(j, "sid");
                _cleanup_free_ char *gen = NULL;
                if (!sid && !json_object_get(j, "sid") && token_random_id("ses_", 16, &gen) >= 0)
                        sid = gen;
                if ((j && !json_is_object(j)) || !sid || strlen(sid) > 60 || !*sid ||
                    strchr(sid, '/') || strchr(sid, ':')) {
                        local_error(lt, 422, "invalid_arguments",
                                    "sid must be 1-60 characters without '/' or ':'.", rp);
                        return;
                }
                json_t *t = mint(lt, sid);
                if (!t)
                        local_error(lt, 500, "internal_error", "Out of memory.", rp);
                else
                        twin_reply_json(rp, 200, t);
                return;
        }
        char err[256] = "";
        int r;
        if (seed) {
                if (!json_is_object(j)) {
                        local_error(lt, 422, "invalid_arguments",
                                    "The body must be a seed: a JSON object.", rp);
                        return;
                }
                r = twin_reseed(lt->twin, j, err, sizeof(err));
                if (r >= 0) {
                        /* the new seed is also what a later reset returns to */
                        json_decref(lt->boot_seed);
                        lt->boot_seed = json_incref(j);
                }
        } else
                r = twin_reseed(lt->twin, lt->boot_seed, err, sizeof(err));
        if (r < 0) {
                local_error(lt, r == -EINVAL ? 422 : 500,
                            r == -EINVAL ? "invalid_arguments" : "internal_error",
                            r == -EINVAL ? err : "Out of memory.", rp);
                return;
        }
        /* A reset is the start again, tape included; a seed keeps the tape (its row says when
         * the world was replaced). */
        if (reset)
                (void)tape_reset(lt->tape);
        rp->state_mutation = true;
        twin_reply_json(rp, 200, json_pack("{s:b, s:s}", "ok", 1, "twin", lt->kind->name));
}

static int local_record(void *userdata, const json_t *row)
{
        LocalTwin *lt = userdata;
        lt->calls++;
        return row ? tape_append(lt->tape, row) : -ENOMEM;
}

static int local_record_line(void *userdata, const char *line, size_t len, const char *event_id)
{
        LocalTwin *lt = userdata;
        lt->calls++;
        return line ? tape_append_line(lt->tape, line, len, event_id) : -ENOMEM;
}

/* /admin/…: the gate, then the call, its tape row (run_id "local"), and the reply. */
static void handle_admin(LocalTwin *lt, HttpRequest *rq, const char *what, const char *request_id)
{
        if (!admin_allowed(lt, rq)) {
                /* not a served call: a stranger does not get to write on the tape */
                reply_local_error(lt, rq, 403, "forbidden",
                                  lt->admin_token ? "Send X-Admin-Token."
                                                  : "Admin routes answer loopback callers only.",
                                  request_id);
                return;
        }
        int64_t ts = (int64_t)now_usec(CLOCK_REALTIME);
        TwinReply rp = {};
        admin_call(lt, rq, what, &rp);
        if (!rp.body) {
                twin_reply_done(&rp);
                reply_local_error(lt, rq, 500, "internal_error", "Out of memory.", request_id);
                return;
        }
        rp.fidelity = "semantic";
        size_t len;
        const char *body = http_request_body(rq, &len);
        FrontCall fc = {
                .twin = lt->kind->name,
                .run_id = "local",
                .request_id = request_id,
                .method = http_request_method(rq),
                .path = http_request_path(rq),
                .query = http_request_query(rq),
                .headers = http_request_headers(rq),
                .body = body,
                .body_len = len,
                .latency_ms =
                        (double)(now_usec(CLOCK_MONOTONIC) - http_request_start_usec(rq)) / 1000.0,
                .ts_usec = ts,
        };
        _cleanup_json_ json_t *row = front_tape_row(&fc, &rp);
        (void)local_record(lt, row);
        front_reply(rq, rp.status, rp.headers, rp.body, request_id);
        twin_reply_done(&rp);
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

/* HttpRefuseFn: the HTTP layer's own refusals (400, 413, 431…) in the twin's envelope. */
static void refuse(const char *path _unused_, int status, const char *code, const char *message,
                   HttpRefusal *ret, void *userdata)
{
        LocalTwin *lt = userdata;
        front_refusal(lt->kind, status, code, message, ret);
}

/* GET /healthz (CONTRACT.md): no auth; tools = the MCP tool count; runtime = this build. */
static void serve_healthz(LocalTwin *lt, HttpRequest *rq, const char *request_id)
{
        const char *m = http_request_method(rq);
        if (!streq(m, "GET") && !streq(m, "HEAD")) {
                TwinReply rp = {};
                local_error(lt, 405, "method_not_allowed", "/healthz only answers GET.", &rp);
                json_decref(rp.headers);
                rp.headers = json_pack("{s:s}", "Allow", "GET");
                front_reply(rq, rp.status, rp.headers, rp.body, request_id);
                twin_reply_done(&rp);
                return;
        }
        _cleanup_json_ json_t *tools = twin_kind_tools(lt->kind);
        _cleanup_json_ json_t *j = json_pack(
                "{s:b, s:s, s:s, s:s, s:I, s:{s:s, s:s, s:s, s:s, s:i, s:I, s:I, s:I}}", "ok", 1,
                "twin", lt->kind->name, "implementation", lt->kind->implementation, "fidelity",
                "semantic", "tools", (json_int_t)json_array_size(tools), "runtime", "package",
                "pome", "version", POME_VERSION, "git_sha", POME_GIT_SHA, "build_time",
                POME_BUILD_TIME, "pid", (int)getpid(), "uptime_seconds",
                (json_int_t)(time(NULL) - lt->started), "calls", (json_int_t)lt->calls, "tape_rows",
                (json_int_t)tape_count(lt->tape));
        front_reply(rq, j ? 200 : 500, NULL, j, request_id);
}

static void handle(HttpRequest *rq, void *userdata)
{
        LocalTwin *lt = userdata;
        const char *raw = http_request_path(rq);
        char request_id[25];
        if (front_request_id(request_id) < 0)
                snprintf(request_id, sizeof(request_id), "req_unavailable");
        if (streq(raw, "/healthz")) {
                serve_healthz(lt, rq, request_id);
                return;
        }
        const char *admin = startswith(raw, "/admin/");
        if (admin) {
                handle_admin(lt, rq, admin, request_id);
                return;
        }
        const char *p = startswith(raw, "/s/");
        const char *e = p ? strchrnul(p, '/') : NULL;
        char sid[64];
        json_t *headers = http_request_headers(rq);
        size_t body_len;
        const char *body = http_request_body(rq, &body_len);
        if ((lt->kind->flags & TWIN_KIND_RAW_KEY) && front_keyed_path(raw)) {
                /* Stripe's SDKs take no path prefix: the key names the session */
                front_keyed_session(lt->kind, (const uint8_t *)lt->secret, lt->secret_len, headers,
                                    http_request_query(rq), body, body_len, sid, sizeof(sid));
                p = e = raw;
        } else if (!p || e == p || (size_t)(e - p) >= sizeof(sid)) {
                reply_local_error(lt, rq, 404, "unknown_method",
                                  "Local twin routes: GET /healthz, /s/<session-id>/… (the twin), "
                                  "POST /admin/reset|seed|token.",
                                  request_id);
                return;
        } else {
                memcpy(sid, p, (size_t)(e - p));
                sid[e - p] = 0;
        }
        FrontAuth auth = front_authenticate(lt->kind, (const uint8_t *)lt->secret, lt->secret_len,
                                            sid, headers, http_request_query(rq), body, body_len,
                                            time(NULL), NULL);
        if (auth != FRONT_AUTH_OK) {
                /* A local twin answers as the vendor would, in its own envelope and words. */
                TwinReply rp = {};
                lt->kind->auth_error(front_auth_failure(auth), &rp);
                front_reply(rq, rp.status, rp.headers, rp.body, request_id);
                twin_reply_done(&rp);
                return;
        }
        char mount[256];
        snprintf(mount, sizeof(mount), "%s/s/%s", lt->base, sid);
        FrontTarget t = {
                .kind = lt->kind,
                .tape = lt->tape,
                .run_id = sid,
                .mount_url = mount,
                .rest = e,
                .request_id = request_id,
                .max_page = FRONT_EVENTS_PAGE_MAX,
                .backend = {.call = local_call,
                            .record = local_record,
                            .record_line = local_record_line,
                            .userdata = lt},
        };
        front_serve(rq, &t);
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si _unused_,
                     void *userdata _unused_)
{
        sd_event_exit(sd_event_source_get_event(s), 0);
        return 0;
}

/* lt->secret := a copy of the n bytes at s. 0 or -ENOMEM. */
static int set_secret(LocalTwin *lt, const char *s, size_t n)
{
        lt->secret = malloc(n + 1);
        if (!lt->secret)
                return -ENOMEM;
        memcpy(lt->secret, s, n);
        lt->secret[n] = 0;
        lt->secret_len = n;
        return 0;
}

/*
 * Creates path (O_EXCL, mode 0600) holding a new secret: 32 random bytes as 64 hex digits
 * and a newline, the hex text itself being the secret (what an operator copies into
 * TWIN_AUTH_SECRET elsewhere). The text into *ret. 0, -EEXIST (another twin was first),
 * or negative errno.
 */
static int generate_secret(const char *path, char **ret)
{
        uint8_t raw[32];
        int r = token_random_bytes(raw, sizeof(raw));
        if (r < 0)
                return r;
        char hex[2 * sizeof(raw) + 2];
        for (size_t i = 0; i < sizeof(raw); i++)
                snprintf(hex + 2 * i, 3, "%02x", raw[i]);
        explicit_bzero(raw, sizeof(raw));
        hex[2 * sizeof(raw)] = '\n';
        hex[2 * sizeof(raw) + 1] = 0;
        _cleanup_close_ int fd =
                open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return negative_errno();
        r = write_all(fd, hex, strlen(hex));
        if (r >= 0 && fsync(fd) < 0)
                r = negative_errno();
        if (r < 0) {
                (void)unlink(path);
                return r;
        }
        *ret = strdup(hex);
        explicit_bzero(hex, sizeof(hex));
        return *ret ? 0 : -ENOMEM;
}

/*
 * A non-loopback twin without TWIN_AUTH_SECRET: the secret kept in
 * $POME_TWIN_DATA_DIR/secret (default ./.pome-data/<twin>/secret, as hosted Pome's twins),
 * generated, printed once and persisted when there is none yet. The file's text less its
 * trailing whitespace is the secret, byte for byte. Says on stderr why it cannot be had.
 */
static int persisted_secret(LocalTwin *lt)
{
        const char *env = getenv("POME_TWIN_DATA_DIR");
        _cleanup_free_ char *dir = NULL, *path = NULL, *text = NULL;
        if (env && *env)
                dir = strdup(env);
        else if (asprintf(&dir, ".pome-data/%s", lt->kind->name) < 0)
                dir = NULL;
        if (!dir || asprintf(&path, "%s/secret", dir) < 0)
                return -ENOMEM;
        size_t n = 0;
        int r = read_file_at(AT_FDCWD, path, LOCAL_SECRET_MAX, &text, &n);
        bool generated = false;
        if (r == -ENOENT) {
                r = mkdir_p(dir, 0700);
                if (r >= 0)
                        r = generate_secret(path, &text);
                if (r == -EEXIST) /* another twin on the same directory was first: use its */
                        r = read_file_at(AT_FDCWD, path, LOCAL_SECRET_MAX, &text, &n);
                else if (r >= 0) {
                        n = strlen(text);
                        generated = true;
                }
        }
        if (r < 0) {
                fprintf(stderr,
                        "pome twin start: TWIN_AUTH_SECRET is not set, and a twin listening beyond "
                        "loopback cannot read or create its secret %s: %s. Set TWIN_AUTH_SECRET, "
                        "or "
                        "POME_TWIN_DATA_DIR to a directory this user can write.\n",
                        path, strerror(-r));
                return r;
        }
        while (n > 0 && strchr(" \t\r\n", text[n - 1]))
                n--;
        if (n == 0) {
                fprintf(stderr,
                        "pome twin start: %s is empty; an empty secret is refused. Remove it "
                        "(a new one is generated) or set TWIN_AUTH_SECRET.\n",
                        path);
                return -EINVAL;
        }
        if (generated)
                printf("Generated TWIN_AUTH_SECRET=%.*s (kept in %s, mode 0600, reused on the next "
                       "start; shown only now)\n",
                       (int)n, text, path);
        r = set_secret(lt, text, n);
        explicit_bzero(text, n);
        return r;
}

/*
 * The token secret (CONTRACT.md "A local twin as a process"): TWIN_AUTH_SECRET's bytes as
 * given when it is set (empty is refused), else the dev secret on loopback, else the
 * persisted one. 0, or negative errno once stderr says why.
 */
static int load_secret(LocalTwin *lt, bool loopback)
{
        const char *env = getenv("TWIN_AUTH_SECRET");
        if (env && !*env) {
                fprintf(stderr, "pome twin start: TWIN_AUTH_SECRET is set but empty; anyone can "
                                "sign tokens with an empty secret. Give it the secret your "
                                "tokens are signed with, or unset it.\n");
                return -EINVAL;
        }
        if (env)
                return set_secret(lt, env, strlen(env));
        if (loopback)
                return set_secret(lt, dev_secret, strlen(dev_secret));
        return persisted_secret(lt);
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

        if (load_secret(&lt, loopback) < 0)
                return POME_EXIT_ERROR;
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
        if (lt.secret)
                explicit_bzero(lt.secret, lt.secret_len);
        free(lt.secret);
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
