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

#include "cli/commands.h"
#include "cli/localtwin.h"
#include "common/fileio.h"
#include "common/json-util.h"
#include "common/timeutil.h"
#include "common/token.h"
#include "common/util.h"

#define LOCAL_SECRET_MAX 4096u /* bytes of a persisted secret file */

/* A loopback twin without TWIN_AUTH_SECRET signs with this well-known dev secret. */
static const char dev_secret[] = "pome-local-twin-dev-secret-32byt";

/* The secret a twin signs with, and the name for messages. */
typedef struct Secret {
        const TwinKind *kind;
        char *secret; /* the HMAC key, exactly the bytes given (CONTRACT.md "Tokens") */
        size_t secret_len;
} Secret;

static void help(void)
{
        printf("Usage: pome twin start TWIN [--port PORT] [--host ADDRESS] [--seed NAME|FILE]\n"
               "\n"
               "Runs one digital twin (github, slack, stripe, gmail, linear) on this machine: no\n"
               "pomed, no account, no sandbox. Call it under /s/<session-id>/… with the token it\n"
               "prints; read its tape at /s/<session-id>/_pome/events. Nothing is graded locally.\n"
               "\n"
               "Options:\n"
               "  --port PORT        listen port (default $PORT, else 3333; 0 = any free port)\n"
               "  --host ADDRESS     bind address (default $<TWIN>_CLONE_HOST or\n"
               "                     $<TWIN>_TWIN_HOST, else 127.0.0.1)\n"
               "  --seed NAME|FILE   starting state: a seed of the twin's image (default\n"
               "                     \"default\") or a JSON file; $POME_SEED_JSON (JSON text)\n"
               "                     wins, $<TWIN>_CLONE_NO_SEED=1 starts empty\n"
               "  -h, --help         show this help\n"
               "\n"
               "Environment:\n"
               "  TWIN_AUTH_SECRET   the token signing secret, used byte for byte as the\n"
               "                     HMAC-SHA256 key (tokens minted elsewhere with the same\n"
               "                     secret verify). Without it (or empty) a loopback\n"
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
        char err[400];
        int r = local_seed_load(k->name, seed_arg ? seed_arg : "default", ret, err, sizeof(err));
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                fprintf(stderr, "pome twin: %s\n", err);
                return -EINVAL;
        }
        return 0;
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si _unused_,
                     void *userdata _unused_)
{
        sd_event_exit(sd_event_source_get_event(s), 0);
        return 0;
}

/* lt->secret := a copy of the n bytes at s. 0 or -ENOMEM. */
static int set_secret(Secret *lt, const char *s, size_t n)
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
static int persisted_secret(Secret *lt)
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
 * given when it is set and not empty, else the dev secret on loopback, else the persisted
 * one. 0, or negative errno once stderr says why.
 */
static int load_secret(Secret *lt, bool loopback)
{
        const char *env = getenv("TWIN_AUTH_SECRET");
        /* empty is unset (hosted Pome's contract: its suite boots twins with it empty and
         * expects the dev or the generated secret), never an empty HMAC key */
        if (env && *env)
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
                fprintf(stderr, "pome twin start: name one twin (github, slack, stripe, gmail, "
                                "linear). Try 'pome twin start --help'.\n");
                return POME_EXIT_USAGE;
        }
        Secret lt = {};
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
                host = getenv(env);
        /* hosted Pome's Gmail and Linear twins name it <TWIN>_TWIN_HOST */
        memcpy(strstr(env, "_CLONE_HOST"), "_TWIN_HOST", sizeof("_TWIN_HOST"));
        if (!host)
                host = getenv(env) ? getenv(env) : "127.0.0.1";
        bool loopback = startswith(host, "127.") || streq(host, "::1") || streq(host, "localhost");
        if (streq(host, "localhost"))
                host = "127.0.0.1";

        if (load_secret(&lt, loopback) < 0)
                return POME_EXIT_ERROR;
        int ret = POME_EXIT_ERROR;
        _cleanup_json_ json_t *t = NULL, *boot_seed = NULL;
        sd_event *e = NULL;
        LocalTwin *twin = NULL;
        char err[300] = "";
        if (load_boot_seed(lt.kind, seed, &boot_seed) < 0)
                goto out;
        if (sd_event_default(&e) < 0)
                goto out;
        sigset_t ss;
        sigemptyset(&ss);
        sigaddset(&ss, SIGINT);
        sigaddset(&ss, SIGTERM);
        sigprocmask(SIG_BLOCK, &ss, NULL);
        signal(SIGPIPE, SIG_IGN);
        (void)sd_event_add_signal(e, NULL, SIGINT, on_signal, NULL);
        (void)sd_event_add_signal(e, NULL, SIGTERM, on_signal, NULL);
        LocalTwinConfig cfg = {.kind = lt.kind,
                               .seed = boot_seed,
                               .secret = lt.secret,
                               .secret_len = lt.secret_len,
                               .admin_token = getenv("TWIN_ADMIN_TOKEN"),
                               .host = host,
                               .port = (uint16_t)port};
        int r = local_twin_new(e, &cfg, &twin, err, sizeof(err));
        if (r == -EINVAL) {
                fprintf(stderr, "pome twin start: the seed was rejected: %s\n", err);
                goto out;
        }
        if (r < 0) {
                fprintf(stderr, "pome twin start: %s\n", err[0] ? err : strerror(-r));
                goto out;
        }
        t = local_twin_mint(twin, "ses_local");
        printf("%s twin (%s) listening on %s\n"
               "  rest_url   %s\n"
               "  mcp_url    %s/mcp\n"
               "  events     %s/_pome/events\n"
               "  token      %s\n"
               "  %s token %s\n",
               lt.kind->name, lt.kind->implementation, local_twin_base(twin),
               json_get_str(t, "rest_url"), json_get_str(t, "rest_url"),
               json_get_str(t, "rest_url"), json_get_str(t, "session_token"), lt.kind->name,
               strempty(json_get_str(t, "provider_token")));
        const char *user = json_get_str(json_object_get(t, "provider_credentials"), "user_token");
        if (user)
                printf("  %s user token %s\n", lt.kind->name, user);
        printf("Stop with Ctrl-C. Nothing is graded locally; the tape dies with this process.\n");
        fflush(stdout);
        r = sd_event_loop(e);
        ret = r < 0 ? POME_EXIT_ERROR : POME_EXIT_OK;
out:
        if (lt.secret)
                explicit_bzero(lt.secret, lt.secret_len);
        free(lt.secret);
        local_twin_free(twin);
        sd_event_unref(e);
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
