/* SPDX-License-Identifier: MIT */
/*
 * `pome sandbox create|list|get|stop|kill` (and the permanent alias `pome
 * session …`): the control API's /v1/sandboxes, shaped like hosted Pome's
 * `pome sandbox` reference page.
 */
#include "cli/api.h"
#include "cli/args.h"
#include "common/httpclient.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/secrets.h"
#include "common/json-util.h"
#include "common/util.h"

#define API_URL_HELP                                                                    \
        "  --api-url URL          Control API base URL (default: $POME_API_URL, else\n" \
        "                         control_url in <state dir>/pomed.json, else\n"        \
        "                         http://127.0.0.1:7070).\n"

static const char help_sandbox[] =
        "Usage: pome sandbox COMMAND [ARGS...]\n"
        "\n"
        "Manage the sandboxes of this Pome deployment (pomed). A sandbox holds 1 to 3\n"
        "twins behind one id, one bearer token and one lifetime, and takes one slot of\n"
        "the team's quota while it is open. `pome session` is the same command.\n"
        "\n"
        "Commands:\n"
        "  create --twin NAME...   Start a sandbox and print its connection details\n"
        "  list                    List sandboxes (default: the open ones)\n"
        "  get ID                  Show one sandbox (--show-secrets: its credentials)\n"
        "  env ID                  Print its variables again, secrets included\n"
        "  finalize ID             End a sandbox and keep its run (tapes, final states)\n"
        "  stop ID                 Stop a sandbox; refuses an ungraded one without --discard\n"
        "  kill ID                 Same as stop\n"
        "\n"
        "Run 'pome sandbox COMMAND --help' for a command's options.\n";

static const char help_create[] =
        "Usage: pome sandbox create --twin NAME [--twin NAME ...] [OPTIONS]\n"
        "\n"
        "Start a sandbox holding 1 to 3 twins and print its connection details. All of\n"
        "its twins start, or none does. It counts against the team's quota until it\n"
        "ends (finalized, stopped, expired or failed).\n"
        "\n"
        "Options:\n"
        "  --twin NAME            Required, once per twin (1 to 3, distinct): a twin\n"
        "                         pomed offers (github, slack, stripe, gmail, linear).\n"
        "  --seed TWIN=NAME       Start TWIN from the seed NAME, i.e.\n"
        "                         sandbox-images/TWIN/seeds/NAME.json (default: pomed's\n"
        "                         default seed for that twin). Once per twin.\n"
        "  --seed TWIN=FILE       ... or from the seed in FILE (a path: it has a '/' or\n"
        "                         ends in .json), sent inline; hosted Pome's task seeds,\n"
        "                         one file for several twins, load as they are.\n"
        "  --ttl SECONDS          Lifetime (default: pomed's, 1800 unless configured;\n"
        "                         never more than 1800). Activity does not extend it.\n"
        "  --idle-timeout SECONDS End the sandbox after this long with no twin call\n"
        "                         (default: pomed's, 600 unless configured; 0 turns the\n"
        "                         idle clock off).\n"
        "                         Either, above the deployment's cap, is granted at the\n"
        "                         cap, and a warning on stderr says so.\n"
        "  --task NAME            The task this sandbox runs; shown by list, get and a\n"
        "                         refused stop (default: none).\n"
        "  --format FMT           text (default), json (pomed's answer) or env (shell\n"
        "                         export lines).\n"
        "  --show-secrets         Print tokens and keys instead of masking them\n"
        "                         (default: off). Unsafe on shared terminals.\n"
        "  --secrets-file FILE    Also write the sandbox's variables, secrets included,\n"
        "                         to FILE as shell export lines, mode 0600 (replaced if\n"
        "                         it exists). Load them with: . ./FILE\n" API_URL_HELP
        "  -h, --help             Show this help.\n"
        "\n"
        "Variables (--format env and --secrets-file):\n"
        "  POME_AUTH_TOKEN        the sandbox bearer: opens every twin in it\n"
        "  POME_SESSION_ID        the sandbox id (ses_...)\n"
        "  POME_TWIN_URL          the first twin's REST URL\n"
        "  POME_TWIN_NAMES        the twins, comma-separated\n"
        "  per twin: POME_<TWIN>_REST_URL, POME_<TWIN>_MCP_URL and its vendor-shaped\n"
        "  credentials: POME_GITHUB_TOKEN; POME_SLACK_TOKEN (bot) and\n"
        "  POME_SLACK_USER_TOKEN (user); POME_STRIPE_API_KEY and POME_STRIPE_API_BASE;\n"
        "  POME_GMAIL_TOKEN (an OAuth access token); POME_LINEAR_TOKEN (an API key).\n"
        "\n"
        "Examples:\n"
        "  pome sandbox create --twin github\n"
        "  pome sandbox create --twin github --twin slack --secrets-file pome.env\n"
        "  pome sandbox create --twin slack --format env --show-secrets\n"
        "  pome sandbox create --twin github --show-secrets --format json\n";

static const char help_list[] =
        "Usage: pome sandbox list [OPTIONS]\n"
        "\n"
        "List the team's sandboxes.\n"
        "\n"
        "Options:\n"
        "  --state STATE          running (default), ready, done, expired, failed,\n"
        "                         stopped or all. running matches both ready and\n"
        "                         running sandboxes.\n"
        "  --limit N              Maximum rows to return (default: 20).\n"
        "  --format FMT           text (default) or json (pomed's answer).\n" API_URL_HELP
        "  -h, --help             Show this help.\n"
        "\n"
        "Examples:\n"
        "  pome sandbox list\n"
        "  pome sandbox list --state all --limit 50\n"
        "  pome sandbox list --format json\n";

static const char help_get[] =
        "Usage: pome sandbox get ID [OPTIONS]\n"
        "\n"
        "Show one sandbox: its state (and why it ended), task, twins, clocks and twin\n"
        "URLs. Its secrets only with --show-secrets, while it is open.\n"
        "\n"
        "Arguments:\n"
        "  ID                     Sandbox id (ses_...) from create or list.\n"
        "\n"
        "Options:\n"
        "  --show-secrets         Show its credentials as create did: tokens and keys,\n"
        "                         unmasked (default: off). Unsafe on shared terminals.\n"
        "  --format FMT           text (default) or json (pomed's answer).\n" API_URL_HELP
        "  -h, --help             Show this help.\n";

static const char help_env[] =
        "Usage: pome sandbox env ID [OPTIONS]\n"
        "\n"
        "Print an open sandbox's variables again as shell export lines, secrets\n"
        "included (the ones create masked), for the team that owns it:\n"
        "  eval \"$(pome sandbox env ses_abc123)\"\n"
        "\n"
        "Arguments:\n"
        "  ID                     Sandbox id (ses_...) from create or list.\n"
        "\n"
        "Options:\n"
        "  --secrets-file FILE    Write them to FILE instead (mode 0600, replaced if it\n"
        "                         exists) and print nothing secret.\n" API_URL_HELP
        "  -h, --help             Show this help.\n";

static const char help_finalize[] =
        "Usage: pome sandbox finalize ID [OPTIONS]\n"
        "\n"
        "End an open sandbox and keep its run: pomed writes every twin's final state\n"
        "next to its tape in <state dir>/runs/ID/, grades the run when the sandbox has a\n"
        "task (the create's task_markdown) into verdict.json, writes summary.md, marks\n"
        "the sandbox done and releases its slot. The answer shows the verdict: PASS,\n"
        "FAIL or INCOMPLETE (a criterion that should have been evaluated was not: a\n"
        "[model] one when pomed has no judge, a judge's error, an unmatched sentence).\n"
        "Stopping with --discard instead throws the run away.\n"
        "\n"
        "Arguments:\n"
        "  ID                     Sandbox id (ses_...) from create or list.\n"
        "\n"
        "Options:\n"
        "  --code-only            Grade the [code] criteria alone, on purpose: [model]\n"
        "                         criteria are not judged, and the verdict says so.\n"
        "  --format FMT           text (default) or json (pomed's answer).\n" API_URL_HELP
        "  -h, --help             Show this help.\n";

static const char help_stop[] =
        "Usage: pome sandbox stop ID [OPTIONS]\n"
        "       pome sandbox kill ID [OPTIONS]\n"
        "\n"
        "Stop a sandbox: its twins are torn down and its slot is released. A sandbox\n"
        "that is still open (ready or running) has not been graded, so stopping it\n"
        "discards its run: without --discard such a stop is refused, naming the task\n"
        "and how long the sandbox has been open (exit status 5). To keep the run,\n"
        "finalize it instead (pome sandbox finalize ID): that ends the sandbox and\n"
        "keeps its tapes and final states.\n"
        "\n"
        "Arguments:\n"
        "  ID                     Sandbox id (ses_...) from create or list.\n"
        "\n"
        "Options:\n"
        "  --discard              Confirm you mean to discard a sandbox whose run has\n"
        "                         not been graded (default: off).\n" API_URL_HELP
        "  -h, --help             Show this help.\n"
        "\n"
        "Examples:\n"
        "  pome sandbox stop ses_abc123\n"
        "  pome sandbox kill ses_abc123            # same as stop\n"
        "  pome sandbox stop ses_abc123 --discard\n";

enum {
        OPT_API_URL = ARGS_FIRST_OPTION,
        OPT_FORMAT,
        OPT_TWIN,
        OPT_SEED,
        OPT_TTL,
        OPT_IDLE_TIMEOUT,
        OPT_TASK,
        OPT_SHOW_SECRETS,
        OPT_SECRETS_FILE,
        OPT_STATE,
        OPT_LIMIT,
        OPT_DISCARD,
        OPT_CODE_ONLY,
};

#define SANDBOX_ID_MAX 128

/* A sandbox id goes into a URL path: accept only what ids are made of (ses_ + base62). */
static bool sandbox_id_valid(const char *id)
{
        size_t n = strlen(id);

        if (n == 0 || n > SANDBOX_ID_MAX)
                return false;
        for (const char *p = id; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
                        return false;
        return true;
}

/* "/v1/sandboxes/<escaped id>" into a new string. */
static char *sandbox_path(const char *id)
{
        _cleanup_free_ char *e = client_escape(id);
        char *p;

        if (!e || asprintf(&p, "/v1/sandboxes/%s", e) < 0)
                return NULL;
        return p;
}

/* "github, slack" from a JSON array of strings; "-" when there is none. */
static char *join_twins(const json_t *twins, const char *sep)
{
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, i;
        FILE *f;
        json_t *t;

        f = open_memstream(&buf, &len);
        if (!f)
                return NULL;
        json_array_foreach (twins, i, t) {
                if (i > 0)
                        fputs(sep, f);
                fputs(json_is_string(t) ? json_string_value(t) : "?", f);
        }
        if (fclose(f) != 0)
                return NULL;
        if (len == 0) {
                free(buf);
                buf = strdup("-");
        }
        return TAKE_PTR(buf);
}

/* Prints "  LABEL: value" with the value cleaned of control characters. */
static void print_field(const char *label, const char *value)
{
        printf("  %-15s ", label);
        output_fputs_clean(value ? value : "-", stdout);
        putchar('\n');
}

/*
 * A record's verdict in a few words into buf: "pass 100%", "fail 83%", "incomplete", "error"
 * (finalized but not graded, verdict_error says why); NULL for a sandbox never graded.
 */
static const char *verdict_words(const json_t *s, char *buf, size_t size)
{
        const json_t *v = json_object_get(s, "verdict");
        const json_t *score = json_object_get(v, "score");

        if (json_is_object(v)) {
                if (json_is_number(score))
                        snprintf(buf, size, "%s %.0f%%", json_get_str(v, "state") ?: "?",
                                 json_number_value(score));
                else
                        snprintf(buf, size, "%s", json_get_str(v, "state") ?: "?");
                return buf;
        }
        if (json_get_str(s, "verdict_error")) {
                snprintf(buf, size, "error");
                return buf;
        }
        return NULL;
}

static int print_secret_field(const char *label, const char *value, bool show)
{
        _cleanup_free_ char *m = NULL;

        if (!value)
                return 0;
        if (!show) {
                m = secrets_mask(value);
                if (!m)
                        return -ENOMEM;
        }
        print_field(label, m ? m : value);
        return 0;
}

/*
 * The human view of a sandbox object: the answer of create (with_secrets: its
 * credentials, masked unless show_secrets) or of get.
 */
static int print_sandbox(const json_t *s, bool with_secrets, bool show_secrets)
{
        _cleanup_free_ char *twins = join_twins(json_object_get(s, "twins"), ", ");
        const json_t *per_twin = json_object_get(s, "per_twin");
        const json_t *creds = json_object_get(s, "provider_credentials");
        const json_t *idle = json_object_get(s, "idle_timeout_seconds");
        const json_t *t;
        size_t i;
        int r;

        if (!twins)
                return -ENOMEM;
        fputs("Sandbox ", stdout);
        output_fputs_clean(strempty(json_get_str(s, "session_id")), stdout);
        fputs(with_secrets ? " is " : ": ", stdout);
        output_fputs_clean(json_get_str(s, "state") ?: "?", stdout);
        puts(with_secrets ? "." : "");

        if (!with_secrets && json_get_str(s, "reason"))
                print_field("Reason:", json_get_str(s, "reason"));
        if (json_get_str(s, "team_id"))
                print_field("Team:", json_get_str(s, "team_id"));
        print_field("Task:", json_get_str(s, "task") ?: "(none)");
        char words[64], line[160];
        if (verdict_words(s, words, sizeof(words))) {
                const json_t *counts = json_object_get(json_object_get(s, "verdict"), "counts");
                if (json_is_object(counts))
                        snprintf(line, sizeof(line), "%s (%lld of %lld scored criteria passed)",
                                 words,
                                 (long long)json_integer_value(json_object_get(counts, "passed")),
                                 (long long)json_integer_value(json_object_get(counts, "scored")));
                else
                        snprintf(line, sizeof(line), "%s", words);
                print_field("Verdict:", line);
        }
        if (json_get_str(s, "verdict_error"))
                print_field("Not graded:", json_get_str(s, "verdict_error"));
        print_field("Twins:", twins);
        if (json_get_str(s, "created_at"))
                print_field("Created at:", json_get_str(s, "created_at"));
        print_field("Expires at:", json_get_str(s, "expires_at"));
        if (json_is_integer(idle)) {
                char d[32];
                if (json_integer_value(idle) > 0)
                        output_duration((uint64_t)json_integer_value(idle), d);
                else
                        snprintf(d, sizeof(d), "off");
                print_field("Idle timeout:", d);
        }
        if (json_get_str(s, "ended_at"))
                print_field("Ended at:", json_get_str(s, "ended_at"));

        json_array_foreach (json_object_get(s, "twins"), i, t) {
                const char *name = json_string_value(t);
                const json_t *per = json_object_get(per_twin, strempty(name));
                const json_t *cred = json_object_get(creds, strempty(name));
                const char *key;
                json_t *v;

                if (!name)
                        continue;
                fputs("  ", stdout);
                output_fputs_clean(name, stdout);
                putchar('\n');
                print_field("  REST:", json_get_str(per, "rest_url"));
                print_field("  MCP:", json_get_str(per, "mcp_url"));
                if (!with_secrets && json_get_str(per, "openapi_url"))
                        print_field("  OpenAPI:", json_get_str(per, "openapi_url"));
                if (!with_secrets)
                        continue;
                json_object_foreach ((json_t *)cred, key, v) {
                        _cleanup_free_ char *clean = output_clean(key), *label = NULL;
                        bool address = secrets_credential_is_address(key);

                        if (!clean || asprintf(&label, "  %s:", clean) < 0) {
                                label = NULL;
                                return -ENOMEM;
                        }
                        r = print_secret_field(label, json_string_value(v),
                                               show_secrets || address);
                        if (r < 0)
                                return r;
                }
        }
        if (with_secrets) {
                r = print_secret_field("Session token:", json_get_str(s, "session_token"),
                                       show_secrets);
                if (r >= 0)
                        r = print_secret_field("Agent token:", json_get_str(s, "agent_token"),
                                               show_secrets);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* How to source a file: `. FILE` needs a slash, or the shell searches $PATH for it. */
static void print_source_hint(const char *path)
{
        fputs(". ", stdout);
        if (!strchr(path, '/'))
                fputs("./", stdout);
        output_fputs_clean(path, stdout);
}

typedef struct CreateArgs {
        const char *twins[8];
        size_t n_twins;
        const char *seeds[8]; /* "TWIN=NAME" */
        size_t n_seeds;
        unsigned long long ttl, idle_timeout;
        bool has_ttl, has_idle_timeout;
        const char *task;
        const char *api_url;
        const char *secrets_file;
        bool show_secrets;
        ArgsFormat format;
} CreateArgs;

static int parse_create(int argc, char **argv, const char *command, CreateArgs *a)
{
        static const ArgOption options[] = {
                {"twin", OPT_TWIN, true},
                {"seed", OPT_SEED, true},
                {"ttl", OPT_TTL, true},
                {"idle-timeout", OPT_IDLE_TIMEOUT, true},
                {"task", OPT_TASK, true},
                {"format", OPT_FORMAT, true},
                {"show-secrets", OPT_SHOW_SECRETS, false},
                {"secrets-file", OPT_SECRETS_FILE, true},
                {"api-url", OPT_API_URL, true},
        };
        ArgParser p;
        const char *v;
        int r;

        args_init(&p, argc, argv, 2, options, ELEMENTSOF(options), command);
        while ((r = args_next(&p, &v)) != ARGS_END) {
                switch (r) {
                case ARGS_HELP:
                        fputs(help_create, stdout);
                        return 1;
                case ARGS_POSITIONAL:
                        return args_error(command, "unexpected argument '%s'", v);
                case OPT_TWIN:
                        if (!*v)
                                return args_error(command, "--twin needs a twin name");
                        /* pomed says why 4 twins are too many; this bound only caps the command
                         * line. */
                        if (a->n_twins == ELEMENTSOF(a->twins))
                                return args_error(command,
                                                  "too many --twin (a sandbox holds at most 3)");
                        a->twins[a->n_twins++] = v;
                        break;
                case OPT_SEED: {
                        const char *eq = strchr(v, '=');
                        if (!eq || eq == v || !eq[1])
                                return args_error(command,
                                                  "invalid --seed '%s': expected TWIN=NAME", v);
                        if (a->n_seeds == ELEMENTSOF(a->seeds))
                                return args_error(command, "too many --seed");
                        a->seeds[a->n_seeds++] = v;
                        break;
                }
                case OPT_TTL:
                        if (args_parse_uint(v, 1, INT32_MAX, &a->ttl) < 0)
                                return args_error(
                                        command, "invalid --ttl '%s': expected seconds, at least 1",
                                        v);
                        a->has_ttl = true;
                        break;
                case OPT_IDLE_TIMEOUT:
                        if (args_parse_uint(v, 0, INT32_MAX, &a->idle_timeout) < 0)
                                return args_error(command,
                                                  "invalid --idle-timeout '%s': expected seconds",
                                                  v);
                        a->has_idle_timeout = true;
                        break;
                case OPT_TASK:
                        if (!*v)
                                return args_error(command, "--task needs a name");
                        a->task = v;
                        break;
                case OPT_FORMAT:
                        r = args_parse_format(command, v, true, &a->format);
                        if (r < 0)
                                return r;
                        break;
                case OPT_SHOW_SECRETS:
                        a->show_secrets = true;
                        break;
                case OPT_SECRETS_FILE:
                        if (!*v)
                                return args_error(command, "--secrets-file needs a file name");
                        a->secrets_file = v;
                        break;
                case OPT_API_URL:
                        a->api_url = v;
                        break;
                default:
                        return r; /* -EINVAL, already reported */
                }
        }

        if (a->n_twins == 0)
                return args_error(command, "--twin is required");
        for (size_t i = 0; i < a->n_seeds; i++) {
                size_t len = strcspn(a->seeds[i], "=");
                bool known = false;

                for (size_t k = 0; k < a->n_twins; k++)
                        known = known || (strlen(a->twins[k]) == len &&
                                          strncmp(a->twins[k], a->seeds[i], len) == 0);
                if (!known)
                        return args_error(command, "--seed %s names a twin not given with --twin",
                                          a->seeds[i]);
                for (size_t k = 0; k < i; k++)
                        if (strncmp(a->seeds[k], a->seeds[i], len + 1) == 0)
                                return args_error(command, "two --seed for twin '%.*s'", (int)len,
                                                  a->seeds[i]);
        }
        return 0;
}

/* The create request of a; NULL on OOM, or with *ret_failed when a seed file is unusable
 * (said on stderr). */
static json_t *create_body(const CreateArgs *a, bool *ret_failed)
{
        _cleanup_json_ json_t *body = json_object(), *twins = json_array(), *seeds = json_object();

        if (!body || !twins || !seeds)
                return NULL;
        for (size_t i = 0; i < a->n_twins; i++)
                if (json_array_append_new(twins, json_string(a->twins[i])) < 0)
                        return NULL;
        for (size_t i = 0; i < a->n_seeds; i++) {
                _cleanup_free_ char *twin = strndup(a->seeds[i], strcspn(a->seeds[i], "="));
                const char *v = strchr(a->seeds[i], '=') + 1;
                json_t *seed;
                if (strchr(v, '/') || endswith(v, ".json")) {
                        json_error_t je;
                        seed = json_load_file(v, JSON_REJECT_DUPLICATES, &je);
                        if (!seed || !json_is_object(seed)) {
                                fprintf(stderr, "pome: --seed %s: %s\n", a->seeds[i],
                                        seed ? "a seed file holds one JSON object" : je.text);
                                json_decref(seed);
                                *ret_failed = true;
                                return NULL;
                        }
                } else
                        seed = json_string(v);
                if (!twin || json_object_set_new(seeds, twin, seed) < 0)
                        return NULL;
        }
        if (json_object_set(body, "twins", twins) < 0)
                return NULL;
        if (a->n_seeds > 0 && json_object_set(body, "seeds", seeds) < 0)
                return NULL;
        if (a->has_ttl &&
            json_object_set_new(body, "ttl_seconds", json_integer((json_int_t)a->ttl)) < 0)
                return NULL;
        if (a->has_idle_timeout &&
            json_object_set_new(body, "idle_timeout_seconds",
                                json_integer((json_int_t)a->idle_timeout)) < 0)
                return NULL;
        if (a->task && json_object_set_new(body, "task", json_string(a->task)) < 0)
                return NULL;
        return TAKE_PTR(body);
}

static int sandbox_create(int argc, char **argv, const char *command)
{
        _cleanup_json_ json_t *body = NULL;
        _cleanup_(secrets_vars_done) SandboxVars vars = {};
        _cleanup_(secrets_file_done) SecretsFile file = {.fd = -1};
        _cleanup_(api_reply_done) ApiReply reply = {};
        _cleanup_(config_done) Config config = {};
        _cleanup_free_ char *sid = NULL;
        CreateArgs a = {};
        bool file_failed = false, has_sid;
        int r;

        r = parse_create(argc, argv, command, &a);
        if (r != 0)
                return r > 0 ? POME_EXIT_OK : POME_EXIT_USAGE;

        r = config_load(a.api_url, &config);
        if (r < 0)
                return api_exit_status(r, NULL);

        /* Before the sandbox exists: a bad path must not cost a slot. */
        if (a.secrets_file) {
                r = secrets_file_prepare(a.secrets_file, &file);
                if (r == -EEXIST) {
                        fprintf(stderr,
                                "pome: refusing to write secrets to %s: it exists and is "
                                "not a regular file\n",
                                a.secrets_file);
                        return POME_EXIT_ERROR;
                }
                if (r < 0) {
                        fprintf(stderr, "pome: cannot create secrets file %s: %s\n", a.secrets_file,
                                strerror(-r));
                        return POME_EXIT_ERROR;
                }
        }

        bool seed_failed = false;
        body = create_body(&a, &seed_failed);
        if (!body)
                return seed_failed ? POME_EXIT_USAGE : api_exit_status(-ENOMEM, NULL);
        r = api_call(&config, "POST", "/v1/sandboxes", body, &reply);
        if (r < 0)
                return api_exit_status(r, &reply);

        /* The id goes into error messages below: never let it drive the terminal. */
        sid = output_clean(json_get_str(reply.json, "session_id"));
        if (!sid)
                return api_exit_status(-ENOMEM, NULL);
        r = secrets_vars_from_sandbox(reply.json, &vars);
        if (r < 0) {
                if (r == -ENOMEM)
                        return api_exit_status(r, NULL);
                has_sid = json_get_str(reply.json, "session_id") != NULL;
                fprintf(stderr, "pome: pomed's answer to create lacks %s\n",
                        has_sid ? "session_token or twins" : "session_id");
                if (has_sid)
                        fprintf(stderr,
                                "  Sandbox %s was created; stop it with: pome sandbox stop "
                                "%s --discard\n",
                                sid, sid);
                return POME_EXIT_ERROR;
        }

        if (a.secrets_file) {
                r = secrets_file_commit(&file, &vars);
                if (r < 0) {
                        fprintf(stderr,
                                "pome: sandbox %s was created, but writing %s failed: %s\n"
                                "  Its secrets are not saved; stop it with: pome sandbox stop %s "
                                "--discard\n",
                                sid, a.secrets_file, strerror(-r), sid);
                        file_failed = true;
                }
        }

        /* What was asked and not granted (a lifetime above the cap…), said, not hidden. */
        size_t wi;
        json_t *w;
        json_array_foreach (json_object_get(reply.json, "warnings"), wi, w) {
                fputs("pome: warning: ", stderr);
                output_fputs_clean(json_get_str(w, "message") ?: "?", stderr);
                fputc('\n', stderr);
        }

        switch (a.format) {
        case ARGS_FORMAT_JSON:
                if (!a.show_secrets && secrets_mask_json(reply.json) < 0)
                        return api_exit_status(-ENOMEM, NULL);
                r = output_json(reply.json);
                break;
        case ARGS_FORMAT_ENV:
                r = secrets_print_env(stdout, &vars, a.show_secrets);
                if (!a.show_secrets && r >= 0) {
                        if (a.secrets_file && !file_failed)
                                fprintf(stderr,
                                        "pome: secrets are masked above; their values "
                                        "are in %s\n",
                                        a.secrets_file);
                        else
                                fprintf(stderr,
                                        "pome: secrets are masked above; pass --show-secrets to "
                                        "print them, or --secrets-file F to write them to a "
                                        "0600 file; later: pome sandbox env %s\n",
                                        sid);
                }
                break;
        case ARGS_FORMAT_TEXT:
                r = print_sandbox(reply.json, true, a.show_secrets);
                if (r < 0)
                        break;
                if (a.secrets_file && !file_failed) {
                        fputs("Secrets written to ", stdout);
                        output_fputs_clean(a.secrets_file, stdout);
                        fputs(" (mode 0600); load them with: ", stdout);
                        print_source_hint(a.secrets_file);
                        putchar('\n');
                } else if (!a.show_secrets)
                        printf("Secrets: --show-secrets to print them, or --secrets-file F; "
                               "later: pome sandbox env %s\n",
                               sid);
                break;
        }
        if (r < 0)
                return api_exit_status(r, NULL);
        return file_failed ? POME_EXIT_ERROR : POME_EXIT_OK;
}

static const char *const list_states[] = {
        "running", "ready", "done", "expired", "failed", "stopped", "all",
};

static int sandbox_list(int argc, char **argv, const char *command)
{
        static const ArgOption options[] = {
                {"state", OPT_STATE, true},
                {"limit", OPT_LIMIT, true},
                {"format", OPT_FORMAT, true},
                {"api-url", OPT_API_URL, true},
        };
        _cleanup_(api_reply_done) ApiReply reply = {};
        _cleanup_(config_done) Config config = {};
        _cleanup_(table_freep) Table *table = NULL;
        _cleanup_free_ char *path = NULL;
        const char *state = "running", *api_url = NULL, *v;
        unsigned long long limit = 20;
        ArgsFormat format = ARGS_FORMAT_TEXT;
        const json_t *data, *s;
        bool known, any_reason = false, any_verdict = false;
        ArgParser p;
        size_t i;
        int r;

        args_init(&p, argc, argv, 2, options, ELEMENTSOF(options), command);
        while ((r = args_next(&p, &v)) != ARGS_END) {
                switch (r) {
                case ARGS_HELP:
                        fputs(help_list, stdout);
                        return POME_EXIT_OK;
                case ARGS_POSITIONAL:
                        args_error(command, "unexpected argument '%s'", v);
                        return POME_EXIT_USAGE;
                case OPT_STATE:
                        known = false;
                        for (i = 0; i < ELEMENTSOF(list_states); i++)
                                known = known || streq(v, list_states[i]);
                        if (!known) {
                                args_error(command,
                                           "invalid --state '%s': expected running, ready, done, "
                                           "expired, failed, stopped or all",
                                           v);
                                return POME_EXIT_USAGE;
                        }
                        state = v;
                        break;
                case OPT_LIMIT:
                        if (args_parse_uint(v, 1, INT32_MAX, &limit) < 0) {
                                args_error(command,
                                           "invalid --limit '%s': expected a number, at "
                                           "least 1",
                                           v);
                                return POME_EXIT_USAGE;
                        }
                        break;
                case OPT_FORMAT:
                        if (args_parse_format(command, v, false, &format) < 0)
                                return POME_EXIT_USAGE;
                        break;
                case OPT_API_URL:
                        api_url = v;
                        break;
                default:
                        return POME_EXIT_USAGE;
                }
        }

        r = config_load(api_url, &config);
        if (r < 0)
                return api_exit_status(r, NULL);
        if (asprintf(&path, "/v1/sandboxes?state=%s&limit=%llu", state, limit) < 0) {
                path = NULL;
                return api_exit_status(-ENOMEM, NULL);
        }
        r = api_call(&config, "GET", path, NULL, &reply);
        if (r < 0)
                return api_exit_status(r, &reply);

        data = json_object_get(reply.json, "data");
        if (!json_is_array(data)) {
                fprintf(stderr, "pome: unexpected answer from pomed to GET %s: no \"data\" array\n",
                        path);
                return POME_EXIT_ERROR;
        }
        /* Defence in depth: a list never carries secrets, and must not print one if it did. */
        json_array_foreach (data, i, s)
                if (secrets_mask_json((json_t *)s) < 0)
                        return api_exit_status(-ENOMEM, NULL);

        if (format == ARGS_FORMAT_JSON)
                return output_json(reply.json) < 0 ? POME_EXIT_ERROR : POME_EXIT_OK;

        if (json_array_size(data) == 0) {
                if (json_get_str(reply.json, "node"))
                        printf("No sandboxes on fleet node %s; each node lists its own "
                               "(docs/fleet.md).\n",
                               json_get_str(reply.json, "node"));
                else
                        puts("No sandboxes.");
                return POME_EXIT_OK;
        }
        char words[64];
        json_array_foreach (data, i, s) {
                any_reason = any_reason || json_get_str(s, "reason");
                any_verdict = any_verdict || verdict_words(s, words, sizeof(words));
        }

        /* VERDICT and REASON only when some row has one */
        const char *headers[8] = {"SESSION_ID", "STATE", "TWINS", "CREATED", "EXPIRES", "TASK"};
        size_t n = 6;
        if (any_verdict)
                headers[n++] = "VERDICT";
        if (any_reason)
                headers[n++] = "REASON";
        table = table_new(n, headers);
        if (!table)
                return api_exit_status(-ENOMEM, NULL);
        json_array_foreach (data, i, s) {
                _cleanup_free_ char *twins = join_twins(json_object_get(s, "twins"), ",");
                const char *cells[8] = {
                        json_get_str(s, "session_id"),
                        json_get_str(s, "state"),
                        twins,
                        json_get_str(s, "created_at"),
                        json_get_str(s, "expires_at"),
                        json_get_str(s, "task"),
                };
                size_t k = 6;
                if (any_verdict)
                        cells[k++] = verdict_words(s, words, sizeof(words));
                if (any_reason)
                        cells[k++] = json_get_str(s, "reason");
                if (!twins || table_add_row(table, cells) < 0)
                        return api_exit_status(-ENOMEM, NULL);
        }
        if (table_print(table, stdout) < 0)
                return api_exit_status(-ENOMEM, NULL);
        if (json_is_true(json_object_get(reply.json, "has_more")))
                printf("More sandboxes match; raise --limit (now %llu) to see them.\n", limit);
        if (json_get_str(reply.json, "node"))
                printf("These are fleet node %s's; each node lists its own (docs/fleet.md).\n",
                       json_get_str(reply.json, "node"));
        return POME_EXIT_OK;
}

/* What get, env, finalize and stop take after the ID. */
typedef struct IdArgs {
        const char *id, *api_url, *secrets_file;
        ArgsFormat format;
        bool discard, show_secrets, code_only;
} IdArgs;

/* Parses "ID [OPTIONS]" with the options of options (n of them). 0, 1 (--help shown),
 * or -EINVAL (printed). */
static int parse_id_command(int argc, char **argv, const char *command, const char *help,
                            const ArgOption *options, size_t n, IdArgs *a)
{
        const char *v;
        ArgParser p;
        int r;

        args_init(&p, argc, argv, 2, options, n, command);
        while ((r = args_next(&p, &v)) != ARGS_END) {
                switch (r) {
                case ARGS_HELP:
                        fputs(help, stdout);
                        return 1;
                case ARGS_POSITIONAL:
                        if (a->id)
                                return args_error(command, "unexpected argument '%s'", v);
                        a->id = v;
                        break;
                case OPT_FORMAT:
                        r = args_parse_format(command, v, false, &a->format);
                        if (r < 0)
                                return r;
                        break;
                case OPT_DISCARD:
                        a->discard = true;
                        break;
                case OPT_CODE_ONLY:
                        a->code_only = true;
                        break;
                case OPT_SHOW_SECRETS:
                        a->show_secrets = true;
                        break;
                case OPT_SECRETS_FILE:
                        a->secrets_file = v;
                        break;
                case OPT_API_URL:
                        a->api_url = v;
                        break;
                default:
                        return r;
                }
        }
        if (!a->id)
                return args_error(command, "missing the sandbox ID");
        if (!sandbox_id_valid(a->id))
                return args_error(command,
                                  "invalid sandbox ID '%s': ids look like ses_... (letters, "
                                  "digits, '_' and '-')",
                                  a->id);
        return 0;
}

static const ArgOption get_options[] = {
        {"format", OPT_FORMAT, true},
        {"show-secrets", OPT_SHOW_SECRETS, false},
        {"api-url", OPT_API_URL, true},
};
static const ArgOption finalize_options[] = {
        {"format", OPT_FORMAT, true},
        {"api-url", OPT_API_URL, true},
        {"code-only", OPT_CODE_ONLY, false},
};
static const ArgOption stop_options[] = {
        {"discard", OPT_DISCARD, false},
        {"api-url", OPT_API_URL, true},
};
static const ArgOption env_options[] = {
        {"secrets-file", OPT_SECRETS_FILE, true},
        {"api-url", OPT_API_URL, true},
};

/* GET /v1/sandboxes/ID/credentials into *reply. 0, or an exit status already reported. */
static int fetch_credentials(const Config *config, const char *id, ApiReply *reply)
{
        _cleanup_free_ char *base = sandbox_path(id), *path = NULL;
        if (!base || asprintf(&path, "%s/credentials", base) < 0) {
                path = NULL;
                return api_exit_status(-ENOMEM, NULL);
        }
        int r = api_call(config, "GET", path, NULL, reply);
        if (r < 0)
                return api_exit_status(r, reply);
        if (!reply->json) {
                fprintf(stderr, "pome: pomed answered GET %s with an empty body\n", path);
                return POME_EXIT_ERROR;
        }
        return 0;
}

/* `pome sandbox env ID`: the sandbox's variables again, secrets shown (or to a file). */
static int sandbox_env(int argc, char **argv, const char *command)
{
        _cleanup_(api_reply_done) ApiReply reply = {};
        _cleanup_(config_done) Config config = {};
        _cleanup_(secrets_vars_done) SandboxVars vars = {};
        _cleanup_(secrets_file_done) SecretsFile file = {.fd = -1};
        IdArgs a = {};
        int r = parse_id_command(argc, argv, command, help_env, env_options,
                                 ELEMENTSOF(env_options), &a);
        if (r != 0)
                return r > 0 ? POME_EXIT_OK : POME_EXIT_USAGE;
        r = config_load(a.api_url, &config);
        if (r < 0)
                return api_exit_status(r, NULL);
        if (a.secrets_file && (r = secrets_file_prepare(a.secrets_file, &file)) < 0) {
                fprintf(stderr, "pome: cannot create secrets file %s: %s\n", a.secrets_file,
                        r == -EEXIST ? "it exists and is not a regular file" : strerror(-r));
                return POME_EXIT_ERROR;
        }
        r = fetch_credentials(&config, a.id, &reply);
        if (r != 0)
                return r;
        r = secrets_vars_from_sandbox(reply.json, &vars);
        if (r < 0) {
                fputs("pome: pomed's credentials lack session_token or twins\n", stderr);
                return POME_EXIT_ERROR;
        }
        if (a.secrets_file) {
                r = secrets_file_commit(&file, &vars);
                if (r < 0) {
                        fprintf(stderr, "pome: writing %s failed: %s\n", a.secrets_file,
                                strerror(-r));
                        return POME_EXIT_ERROR;
                }
                fputs("Secrets written to ", stdout);
                output_fputs_clean(a.secrets_file, stdout);
                fputs(" (mode 0600); load them with: ", stdout);
                print_source_hint(a.secrets_file);
                putchar('\n');
                return POME_EXIT_OK;
        }
        r = secrets_print_env(stdout, &vars, true);
        return r < 0 ? api_exit_status(r, NULL) : POME_EXIT_OK;
}

/* get (GET /v1/sandboxes/ID) and finalize (POST /v1/sandboxes/ID/finalize): one
 * sandbox in, the sandbox as pomed then describes it out. */
static int sandbox_show(int argc, char **argv, const char *command, const char *help,
                        const char *method, const char *suffix)
{
        _cleanup_(api_reply_done) ApiReply reply = {};
        _cleanup_(config_done) Config config = {};
        _cleanup_free_ char *base = NULL, *path = NULL;
        IdArgs a = {};
        bool get = streq(method, "GET");
        int r;

        r = parse_id_command(argc, argv, command, help, get ? get_options : finalize_options,
                             get ? ELEMENTSOF(get_options) : ELEMENTSOF(finalize_options), &a);
        if (r != 0)
                return r > 0 ? POME_EXIT_OK : POME_EXIT_USAGE;
        const char *id = a.id;
        ArgsFormat format = a.format;

        r = config_load(a.api_url, &config);
        if (r < 0)
                return api_exit_status(r, NULL);
        if (a.show_secrets) {
                /* the create answer again: what was masked then, shown now */
                r = fetch_credentials(&config, id, &reply);
                if (r != 0)
                        return r;
                r = format == ARGS_FORMAT_JSON ? output_json(reply.json)
                                               : print_sandbox(reply.json, true, true);
                return r < 0 ? api_exit_status(r, NULL) : POME_EXIT_OK;
        }
        base = sandbox_path(id);
        if (!base || asprintf(&path, "%s%s", base, suffix) < 0) {
                path = NULL;
                return api_exit_status(-ENOMEM, NULL);
        }
        _cleanup_json_ json_t *body = a.code_only ? json_pack("{s:b}", "code_only", true) : NULL;
        r = api_call(&config, method, path, body, &reply);
        if (r < 0)
                return api_exit_status(r, &reply);
        if (!reply.json) {
                fprintf(stderr, "pome: pomed answered %s %s with an empty body\n", method, path);
                return POME_EXIT_ERROR;
        }
        if (secrets_mask_json(reply.json) < 0)
                return api_exit_status(-ENOMEM, NULL);

        r = format == ARGS_FORMAT_JSON ? output_json(reply.json)
                                       : print_sandbox(reply.json, false, false);
        return r < 0 ? api_exit_status(r, NULL) : POME_EXIT_OK;
}

/* The refusal of hosted Pome's reference page, from a 409 ungraded_session's details. */
static void print_refused_stop(const char *id, const json_t *details)
{
        const json_t *open = json_object_get(details, "open_seconds");
        const char *state = json_get_str(details, "state");
        const char *task = json_get_str(details, "task");

        fprintf(stderr, "Refused to stop %s: it is still open (", id);
        output_fputs_clean(state ? state : "open", stderr);
        fputs("), so its run has not\nbeen graded — stopping now discards it.\n", stderr);
        fputs("  Task: ", stderr);
        output_fputs_clean(task ? task : "(none)", stderr);
        fputc('\n', stderr);
        if (json_is_integer(open) && json_integer_value(open) >= 0) {
                char d[32];
                output_duration((uint64_t)json_integer_value(open), d);
                fprintf(stderr, "  Open for %s.\n", d);
        }
        fprintf(stderr,
                "  To keep the run, finalize it instead: pome sandbox finalize %s\n"
                "  To discard it anyway:\n"
                "  pome sandbox stop %s --discard\n",
                id, id);
}

static bool is_ungraded_refusal(int r, const ApiReply *reply)
{
        return r == -EREMOTEIO && reply->status == 409 &&
               streq_ptr(json_get_str(reply->error_details, "reason"), "ungraded_session");
}

static int sandbox_stop(int argc, char **argv, const char *command)
{
        _cleanup_(api_reply_done) ApiReply reply = {}, confirm = {}, before = {};
        _cleanup_(config_done) Config config = {};
        _cleanup_free_ char *path = NULL, *token = NULL, *confirm_path = NULL;
        const char *t;
        IdArgs a = {};
        int r;

        r = parse_id_command(argc, argv, command, help_stop, stop_options, ELEMENTSOF(stop_options),
                             &a);
        if (r != 0)
                return r > 0 ? POME_EXIT_OK : POME_EXIT_USAGE;
        const char *id = a.id;
        bool discard = a.discard;

        r = config_load(a.api_url, &config);
        if (r < 0)
                return api_exit_status(r, NULL);
        path = sandbox_path(id);
        if (!path)
                return api_exit_status(-ENOMEM, NULL);

        /* Stopping what has already ended changes nothing: say so, and how it ended. */
        r = api_call(&config, "GET", path, NULL, &before);
        const char *state = json_get_str(before.json, "state");
        const json_t *ended = r >= 0                                    ? before.json
                              : r == -EREMOTEIO && before.status == 410 ? before.error_details
                                                                        : NULL;
        if (r == -EREMOTEIO && before.status == 410)
                state = "expired";
        if (ended && state && !streq(state, "provisioning") && !streq(state, "ready") &&
            !streq(state, "running")) {
                const char *reason = json_get_str(ended, "reason");
                printf("Sandbox %s had already ended (%s%s", id, state, reason ? ": " : "");
                output_fputs_clean(reason ? reason : "", stdout);
                puts("); nothing to stop.");
                return POME_EXIT_OK;
        }

        r = api_call(&config, "DELETE", path, NULL, &reply);
        if (r >= 0) {
                printf("Stopped %s.\n", id);
                return POME_EXIT_OK;
        }
        if (!is_ungraded_refusal(r, &reply))
                return api_exit_status(r, &reply);
        if (!discard) {
                print_refused_stop(id, reply.error_details);
                return POME_EXIT_REFUSED;
        }

        /* --discard: the same DELETE again, confirmed with the token the refusal carried. */
        t = json_get_str(reply.error_details, "discard_token");
        if (!t) {
                fprintf(stderr,
                        "pome: pomed refused to stop %s without a discard_token to "
                        "confirm with\n",
                        id);
                return POME_EXIT_REFUSED;
        }
        token = client_escape(t);
        if (!token || asprintf(&confirm_path, "%s?confirm_discard=%s", path, token) < 0) {
                confirm_path = NULL;
                return api_exit_status(-ENOMEM, NULL);
        }
        r = api_call(&config, "DELETE", confirm_path, NULL, &confirm);
        if (r < 0)
                return api_exit_status(r, &confirm);
        printf("Stopped %s (discarded).\n", id);
        return POME_EXIT_OK;
}

int cmd_sandbox(int argc, char **argv)
{
        _cleanup_free_ char *command = NULL;
        const char *sub;

        if (argc < 2) {
                fputs(help_sandbox, stderr);
                return POME_EXIT_USAGE;
        }
        sub = argv[1];
        if (streq(sub, "help") && argc > 2) {
                /* "pome sandbox help stop" is "pome sandbox stop --help". */
                char *again[] = {argv[0], argv[2], (char *)"--help", NULL};
                return cmd_sandbox(3, again);
        }
        if (streq(sub, "-h") || streq(sub, "--help") || streq(sub, "help")) {
                fputs(help_sandbox, stdout);
                return POME_EXIT_OK;
        }

        /* Errors name the command as typed: "session kill", "sandbox stop"… */
        if (asprintf(&command, "%s %s", argv[0], sub) < 0) {
                command = NULL;
                return api_exit_status(-ENOMEM, NULL);
        }
        if (streq(sub, "create"))
                return sandbox_create(argc, argv, command);
        if (streq(sub, "list"))
                return sandbox_list(argc, argv, command);
        if (streq(sub, "get"))
                return sandbox_show(argc, argv, command, help_get, "GET", "");
        if (streq(sub, "finalize"))
                return sandbox_show(argc, argv, command, help_finalize, "POST", "/finalize");
        if (streq(sub, "stop") || streq(sub, "kill"))
                return sandbox_stop(argc, argv, command);
        if (streq(sub, "env"))
                return sandbox_env(argc, argv, command);

        fprintf(stderr, "pome %s: unknown command '%s' (try 'pome %s --help')\n", argv[0], sub,
                argv[0]);
        return POME_EXIT_USAGE;
}
