/* SPDX-License-Identifier: MIT */
/*
 * `pome run TASK.md -- AGENT…`: a graded run of an agent against a task (CONTRACT.md "Task
 * file"): the task is parsed here first (a bad one is refused naming file:line before
 * anything starts), then each trial (cli/trial.c) gets a sandbox created from the task — or,
 * with --local, twins served in-process — runs the agent with the sandbox's POME_* variables,
 * is finalized and graded, and leaves a run directory. With --trials N the trials run as
 * many at a time as the team's quota has free slots, never more (a full quota is waited
 * out, never an error), and the result is the pass rate (pass@1) and pass^k, whether all k
 * trials passed. `pome run show` reads a run back, from pomed or from its directory.
 */
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "cli/api.h"
#include "cli/args.h"
#include "common/httpclient.h"
#include "cli/collect.h"
#include "cli/commands.h"
#include "cli/judging.h"
#include "cli/localtwin.h"
#include "cli/output.h"
#include "cli/pty.h"
#include "cli/report.h"
#include "cli/trial.h"
#include "common/fileio.h"
#include "common/json-util.h"
#include "common/strv.h"
#include "common/text.h"
#include "common/timeutil.h"
#include "common/token.h"
#include "common/util.h"
#include "pods/grade/grade.h"

#define TRIALS_MAX      1000u
#define TASK_MAX_BYTES  (1u << 20)
#define SIDECAR_MAX     (16u << 20)
#define RUN_FILE_MAX    (64u << 20)
#define PROGRESS_USEC   USEC_PER_SEC
#define LOCAL_KEY_BYTES 32u
#define LOCAL_AT_ONCE   8u    /* --local trials at a time: their twins and agents share this host */
#define LIFETIME_MAX    1800u /* seconds: a sandbox's lifetime never exceeds this */
#define DEFAULT_OUT_DIR "pome-runs"

static const char help_run_head[] =
        "Usage: pome run TASK.md [OPTIONS] -- AGENT_CMD [ARGS...]\n"
        "       pome run TASK.md --shell [OPTIONS]\n"
        "       pome run show ID|RUN_DIR [--json]\n"
        "       pome run collect ID [RUN_DIR]\n"
        "\n"
        "Run an agent against a task and grade it. TASK.md is a task file (# Title,\n"
        "## Prompt, ## Success Criteria, ## Config, ## Seed State; see `pome checks`\n"
        "for the [code] sentences); it is checked first, and one that does not parse,\n"
        "or a [code] criterion that binds no check, is refused naming file:line (exit\n"
        "status 2) before anything is created. Then, per trial:\n"
        "  1. a sandbox with the task's twins, booted from the task's seeds (each twin's\n"
        "     default seed where the task has none), is created on pomed;\n"
        "  2. AGENT_CMD runs sealed (see below) with the sandbox's variables in its\n"
        "     environment (those of `pome sandbox create --secrets-file`) and the prompt\n"
        "     both in $POME_TASK and on its stdin, for at most the task's timeout (##\n"
        "     Config timeout, default 60 s): then it gets SIGTERM, and SIGKILL 5 s later;\n"
        "     the run is still graded and the verdict says the agent timed out. Once the\n"
        "     agent has exited, every process it started is killed;\n"
        "  3. the sandbox is finalized (with the end of the agent's stdout, its reply,\n"
        "     for the judge of [model] criteria): pomed grades it;\n"
        "  4. the run directory is written (./pome-runs/<id>/ unless --out): task.md,\n"
        "     <twin>.seed.json, <twin>.tape.jsonl, <twin>.final.json, verdict.json,\n"
        "     summary.md, agent-reply.txt (what the judge was shown of the agent's\n"
        "     reply), stdout.txt and stderr.txt (the agent's), meta.json (task,\n"
        "     sandbox id, times, agent command and exit).\n"
        "     It does not exist while the agent runs, and the agent is never told\n"
        "     where it will be: nothing the agent could rewrite is what is graded.\n"
        "The verdict is printed as a table: each criterion's status, the grader's\n"
        "reason and its evidence (JSON Pointers into <twin>.final.json, tape event ids).\n"
        "A verdict is PASS, FAIL or INCOMPLETE: a criterion that should have been\n"
        "evaluated and was not (a [model] one with no judge, a judge's error, an\n"
        "unmatched sentence) makes the run INCOMPLETE, never a pass. When the agent\n"
        "fails (a non-zero exit, a signal, a timeout), the last lines of its stderr\n"
        "are printed, with the file that holds all of it.\n"
        "\n"
        "Options:\n"
        "  --trials N             Run N independent trials, each in its own sandbox and\n"
        "                         run directory (default: ## Config runs, else 1), as\n"
        "                         many at once as the team's quota has free slots (GET\n"
        "                         /v1/usage), never more; a trial that finds the quota\n"
        "                         full waits for a slot. Prints the pass rate (pass@1)\n"
        "                         and pass^k: whether all k = N trials passed. With\n"
        "                         --local, at most 8 trials run at once.\n"
        "  --local                No pomed, no account: the task's twins run inside pome\n"
        "                         (as `pome twin start` runs one), each on a loopback\n"
        "                         port (their admin routes closed to the agent); at the\n"
        "                         end each twin's world is exported and the run graded\n"
        "                         here, with the library pomed grades with, from what\n"
        "                         pome holds in memory (the task as parsed before the\n"
        "                         agent started, the seeds, the worlds, the tape rows).\n"
        "  --keep                 Leave the sandbox open for inspection instead of\n"
        "                         finalizing it: no verdict then. Finalize it later with\n"
        "                         `pome sandbox finalize ID`. One trial, not with --local.\n"
        "  --out DIR              Put run directories in DIR/<id>/ (default: ./pome-runs).\n"
        "  --allow-unmatched      Run a task whose [code] criteria bind no check anyway:\n"
        "                         each is said as a warning and graded unmatched (not\n"
        "                         evaluated: the verdict is INCOMPLETE), as pomed and\n"
        "                         `pome eval` grade it.\n"
        "  --allow-net HOST       Let the sealed agent reach HOST through its proxy (its\n"
        "                         model's API): a name (api.anthropic.com), a suffix\n"
        "                         (*.example.com), either with :PORT. Repeatable; adds to\n"
        "                         ## Config allow_net. An IP address passes only if listed.\n"
        "  --hide PATH            Mask PATH (absolute) in the agent's pod too. Repeatable.\n"
        "  --workdir-rw           Let the agent write the working directory itself (by\n"
        "                         default it writes an overlay that vanishes with it).\n"
        "  --agent-memory SIZE    The sealed agent's memory limit (default: ## Config\n"
        "                         agent.memory, else pomed.conf's agent.memory, else 2G);\n"
        "                         K, M, G suffixes.\n"
        "  --agent-pids N         Its process and thread limit (default: agent.pids, else\n"
        "                         pomed.conf's, else 512).\n"
        "  --output-max SIZE      Bytes kept of each of its stdout and stderr (default:\n"
        "                         agent.output, else pomed.conf's, else 16M); the rest is\n"
        "                         counted, not kept.\n"
        "  --shell                Instead of an agent, open your $SHELL (else /bin/sh) in\n"
        "                         the agent's pod, sealed as the agent would be, with the\n"
        "                         sandbox's variables: what the agent sees. No timeout;\n"
        "                         when it exits the sandbox is discarded, ungraded. No\n"
        "                         AGENT_CMD; one trial.\n"
        "  --no-seal              Run the agent on this host as an ordinary process in a\n"
        "                         process group of its own, as the user running pome: it\n"
        "                         can read what you can (./.pome/api-key among it) and\n"
        "                         reach any address. meta.json records it.\n"
        "  --quiet                No progress and no table: one result line.\n"
        "  --json                 The result as JSON on stdout (every trial, its verdict,\n"
        "                         pass@1 and pass^k), for CI.\n"
        "  --api-url URL          Control API base URL (default: $POME_API_URL, else\n"
        "                         control_url in <state dir>/pomed.json, else\n"
        "                         http://127.0.0.1:7070).\n";

static const char help_run_tail[] =
        "                         With pomed, [model] criteria are judged at finalize by\n"
        "                         pomed's judge (judge: in pomed.conf): --judge is for\n"
        "                         --local runs and `pome eval`; --code-only works with\n"
        "                         both.\n"
        "  -h, --help             Show this help.\n"
        "\n"
        "The agent's environment: pome's own, less POME_API_KEY, POME_API_URL and\n"
        "POME_STATE_DIR (the team key, and where the control API and the key are, are\n"
        "not the agent's) and any inherited sandbox variables, plus POME_AUTH_TOKEN,\n"
        "POME_SESSION_ID, POME_TWIN_URL, POME_TWIN_NAMES, per twin POME_<TWIN>_REST_URL\n"
        "and POME_<TWIN>_MCP_URL, POME_GITHUB_TOKEN, POME_SLACK_TOKEN,\n"
        "POME_SLACK_USER_TOKEN, POME_STRIPE_API_KEY, POME_STRIPE_API_BASE,\n"
        "POME_GMAIL_TOKEN and POME_LINEAR_TOKEN (for the task's twins), POME_TASK\n"
        "(the prompt, and nothing of the success criteria), POME_AGENT_TMP (an empty\n"
        "scratch directory of its own, mode 0700, removed when it exits) and POME_TRIAL\n"
        "(1, 2…).\n"
        "\n"
        "The seal: the agent runs in a pod of its own (namespaces: mount, pid, net, ipc,\n"
        "uts; a user namespace without root), with no capabilities, no_new_privs, a\n"
        "seccomp filter, a uid of its own as root, and its memory, process and CPU\n"
        "limits in a cgroup (rlimits where pome cannot make one). It sees the host's\n"
        "files read-only, its working directory (pome's) as an overlay, a private /tmp\n"
        "(its HOME and $POME_AGENT_TMP), and never: the state directory and ./.pome\n"
        "(the team key), the run directories, the task file, /root, /home, /etc/pome,\n"
        "/var/lib/pome, /run/pome and what --hide adds. Its network is loopback only:\n"
        "every twin address in its variables points at 127.0.0.1 inside the pod, where\n"
        "pome forwards it to this sandbox's twins, and HTTP_PROXY/HTTPS_PROXY name a\n"
        "proxy that lets through the --allow-net hosts and refuses the rest. Every\n"
        "connection, refused or not, is in meta.json (agent.seal.network). When it\n"
        "exits or times out, every process of the pod dies with it.\n"
        "\n"
        "Progress (the trial, the twin calls seen so far, the time) is shown on stderr\n"
        "when it is a terminal; colours only on a terminal (NO_COLOR turns them off).\n"
        "\n"
        "Exit status: 0 when every trial passed (--keep: the agent ran and the sandbox\n"
        "is open), 1 when a trial failed or was not graded, 6 when no trial failed\n"
        "but one is INCOMPLETE (a criterion that should have been evaluated was not:\n"
        "a [model] one with no judge or a judge error, an unmatched sentence), 2 for a\n"
        "usage error, a task that does not parse or whose [code] criteria bind no\n"
        "check (without --allow-unmatched), 3 and 4 as for every command\n"
        "(authentication, quota refusals other than a full quota), 130 when\n"
        "interrupted (the agents are killed and their sandboxes discarded).\n"
        "\n"
        "`pome run show ID` shows a sandbox through the control API (its record, verdict\n"
        "and summary); `pome run show RUN_DIR` a run directory (meta.json, verdict.json,\n"
        "summary.md).\n"
        "\n"
        "`pome run collect ID [RUN_DIR]` completes the run directory of a sandbox that\n"
        "has ended — one left open by --keep and finalized later with `pome sandbox\n"
        "finalize ID` — from the control API, as pome run does after it finalizes: the\n"
        "tapes, final states, verdict.json and summary.md, and meta.json's outcome.\n"
        "RUN_DIR defaults to ./pome-runs/ID (the --keep run's, with its task.md and\n"
        "seeds); a new directory gets only what the API serves (no task.md, no seeds:\n"
        "it cannot be regraded offline). Then `pome eval RUN_DIR` regrades it to\n"
        "pomed's bytes. A sandbox still open is refused: finalize it first.\n"
        "\n"
        "Examples:\n"
        "  pome run examples/triage/task.md -- examples/triage/good-agent.sh\n"
        "  pome run examples/triage/task.md --trials 5 -- node examples/triage/good-agent.mjs\n"
        "  pome run examples/triage/task.md --local -- examples/triage/bad-agent.sh\n"
        "  pome run examples/triage/task.md --json --quiet -- ./my-agent | jq .pass_at_1\n"
        "  pome run show pome-runs/ses_abc123\n"
        "  pome run collect ses_abc123        # after --keep and pome sandbox finalize\n";

static void print_help_run(void)
{
        fputs(help_run_head, stdout);
        fputs(judging_help, stdout);
        fputs(help_run_tail, stdout);
}

enum {
        OPT_TRIALS = JUDGING_FIRST_FREE,
        OPT_LOCAL,
        OPT_KEEP,
        OPT_OUT,
        OPT_QUIET,
        OPT_JSON,
        OPT_API_URL,
        OPT_ALLOW_UNMATCHED,
        OPT_NO_SEAL,
        OPT_ALLOW_NET,
        OPT_HIDE,
        OPT_WORKDIR_RW,
        OPT_AGENT_MEMORY,
        OPT_AGENT_PIDS,
        OPT_OUTPUT_MAX,
        OPT_SHELL,
};

typedef struct Run {
        RunPlan plan;
        Config config;
        GradeTask *task;       /* named as the user named it: for messages */
        GradeTask *grade_task; /* named task.md: what --local grades with */
        char *task_text;
        size_t task_len;
        char *sidecar_text;
        size_t sidecar_len;
        json_t *seeds;
        char *out_dir;
        Trial **trials;
        unsigned n_trials, next, active, ended, concurrency;
        bool local, keep, quiet, json, progress, color, allow_unmatched;
        JudgeFlags judging;
        Judge *judge;
        unsigned interrupts;
        bool stopping;
        uint64_t started_mono;
        sd_event *event;
        sd_event_source *progress_timer;
        bool line_shown; /* a progress line is on the terminal */
        uint8_t key[LOCAL_KEY_BYTES];
        char *admin_token; /* --local: the in-process twins' X-Admin-Token */
        bool no_seal;      /* --no-seal */
        char **allow_net;  /* --allow-net, then ## Config allow_net */
        char **hide;       /* --hide */
        bool workdir_rw;
        uint64_t memory_max, pids_max, output_max; /* --agent-memory… (0: the task's, else
                                                    * the default) */
        Seal *seal;
        char cwd[PATH_MAX];
        bool shell;                /* --shell */
        const char *shell_argv[2]; /* $SHELL, else /bin/sh */
        Pty pty;
} Run;

/* The run whose lines say() prints (RunPlan.say has no userdata; pome runs one at a time). */
static Run *current;

static void clear_progress(Run *run)
{
        if (run->line_shown) {
                fputs("\r\033[K", stderr);
                run->line_shown = false;
        }
}

/* RunPlan.say: one informational line on stderr, unless --quiet. */
static void say_line(const char *line)
{
        if (!current || current->quiet)
                return;
        clear_progress(current);
        fputs("pome run: ", stderr);
        output_fputs_clean(line, stderr);
        fputc('\n', stderr);
}

static void run_done(Run *run)
{
        for (unsigned i = 0; run->trials && i < run->n_trials; i++)
                trial_free(run->trials[i]);
        free(run->trials);
        sd_event_source_disable_unref(run->progress_timer);
        sd_event_unref(run->event);
        grade_task_free(run->task);
        grade_task_free(run->grade_task);
        free(run->task_text);
        free(run->sidecar_text);
        json_decref(run->seeds);
        judge_free(run->judge);
        pty_close(&run->pty);
        seal_free(run->seal);
        strv_free(run->allow_net);
        strv_free(run->hide);
        free(run->out_dir);
        config_done(&run->config);
        explicit_bzero(run->key, sizeof(run->key));
        if (run->admin_token)
                explicit_bzero(run->admin_token, strlen(run->admin_token));
        free(run->admin_token);
}

/* ---------------------------------------------------------------- the task */

/* "<path>:LINE: …" messages, naming the file as the user gave it. */
static int load_task(Run *run, const char *path)
{
        GradeError e = {};
        int r = read_file_at(AT_FDCWD, path, TASK_MAX_BYTES, &run->task_text, &run->task_len);
        if (r < 0) {
                fprintf(stderr, "pome run: %s: %s\n", path,
                        r == -EFBIG ? "larger than 1 MiB" : strerror(-r));
                return r;
        }
        size_t n = strlen(path);
        _cleanup_free_ char *side = NULL;
        if (asprintf(&side, "%.*s.seed.json", (int)(n > 3 && endswith(path, ".md") ? n - 3 : n),
                     path) < 0)
                return -ENOMEM;
        r = read_file_at(AT_FDCWD, side, SIDECAR_MAX, &run->sidecar_text, &run->sidecar_len);
        if (r < 0 && r != -ENOENT) {
                fprintf(stderr, "pome run: %s: %s\n", side, strerror(-r));
                return r;
        }
        r = grade_task_parse(run->task_text, run->task_len, path, run->sidecar_text,
                             run->sidecar_len, &run->task, &e);
        if (r < 0) {
                output_lines(stderr, "pome run", r == -ENOMEM ? "out of memory" : e.message);
                return r;
        }
        /* the same bytes as the run directory will hold them (task.md, task.seed.json): the
         * task --local grades, held from before the agent starts */
        r = grade_task_parse(run->task_text, run->task_len, "task.md", run->sidecar_text,
                             run->sidecar_len, &run->grade_task, &e);
        if (r < 0) {
                output_lines(stderr, "pome run", r == -ENOMEM ? "out of memory" : e.message);
                return r;
        }
        for (char **w = run->task->warnings; w && *w && !run->quiet; w++)
                fprintf(stderr, "pome run: warning: %s\n", *w);
        return 0;
}

/*
 * Every [code] criterion must bind a check before anything is created: one that binds none
 * would only show up as "unmatched" in the verdict, after the agent ran. Refused (exit 2,
 * every criterion named) unless --allow-unmatched, which runs it anyway with a warning
 * (graded unmatched, so the verdict is incomplete, as pomed and `pome eval` grade it). 0 or a
 * POME_EXIT_*.
 */
static int check_criteria(Run *run)
{
        _cleanup_strv_free_ char **problems = NULL;
        int n = grade_task_check(run->task, &problems);
        if (n < 0) {
                fputs("pome run: out of memory\n", stderr);
                return POME_EXIT_ERROR;
        }
        if (n == 0)
                return 0;
        if (run->allow_unmatched) {
                for (char **p = problems; *p && !run->quiet; p++)
                        fprintf(stderr,
                                "pome run: warning: %s (graded unmatched: the verdict will be "
                                "INCOMPLETE)\n",
                                *p);
                return 0;
        }
        for (char **p = problems; *p; p++)
                fprintf(stderr, "pome run: %s\n", *p);
        fprintf(stderr,
                "pome run: %d [code] %s no check (`pome checks` lists the sentences): fix "
                "%s, or pass --allow-unmatched to run anyway and grade %s unmatched\n",
                n, n == 1 ? "criterion matches" : "criteria match", n == 1 ? "it" : "them",
                n == 1 ? "it" : "them");
        return POME_EXIT_USAGE;
}

/* The name of twin's default seed in its image.json ("default" when it says none). */
static char *default_seed_name(const char *twin)
{
        _cleanup_free_ char *dir = local_images_dir(), *path = NULL;
        if (!dir || asprintf(&path, "%s/%s/image.json", dir, twin) < 0)
                return NULL;
        _cleanup_json_ json_t *image = json_load_file(path, 0, NULL);
        const char *name = json_get_str(image, "default_seed");
        return strdup(name ? name : "default");
}

/*
 * The seed of every twin: the task's, else the twin's default seed from the images. Sent to
 * pomed inline, so the seed in the run directory is exactly the one the pod booted from, and
 * a --local run boots from the same world.
 */
static int resolve_seeds(Run *run)
{
        run->seeds = json_object();
        if (!run->seeds)
                return -ENOMEM;
        for (char **tw = run->task->twins; *tw; tw++) {
                json_t *seed = json_object_get(run->task->seeds, *tw);
                if (seed) {
                        if (json_object_set(run->seeds, *tw, seed) < 0)
                                return -ENOMEM;
                        continue;
                }
                if (run->task->seed_prose_line) {
                        /* the world the task describes exists only as prose: a default seed
                         * would be another world, graded as if it were the task's */
                        const char *path = run->task->name; /* as the user gave it */
                        size_t n = strlen(path);
                        fprintf(stderr,
                                "pome run: %s:%u: ## Seed State is prose and there is no "
                                "%.*s.seed.json compiled from it, so the %s twin has no seed "
                                "(its default seed is another world); compile the prose into "
                                "that sidecar (hosted Pome's seed JSON), or put the JSON in ## "
                                "Seed State\n",
                                path, run->task->seed_prose_line,
                                (int)(endswith(path, ".md") ? n - 3 : n), path, *tw);
                        return -EINVAL;
                }
                _cleanup_free_ char *name = default_seed_name(*tw);
                char err[400] = "";
                if (!name)
                        return -ENOMEM;
                int r = local_seed_load(*tw, name, &seed, err, sizeof(err));
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        if (run->local) {
                                fprintf(stderr, "pome run: the %s twin has no seed: %s\n", *tw,
                                        err);
                                return r;
                        }
                        /* pomed still boots it from its own default; the run directory then
                         * lacks that seed, and `pome eval` says so */
                        fprintf(stderr,
                                "pome run: warning: %s; pomed boots the %s twin from its own "
                                "default seed, which the run directory will not hold\n",
                                err, *tw);
                        continue;
                }
                if (json_object_set_new(run->seeds, *tw, seed) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* ---------------------------------------------------------------- progress */

static unsigned terminal_width(void)
{
        struct winsize ws;
        if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10)
                return ws.ws_col;
        return 80;
}

static void show_progress(Run *run)
{
        char line[1024];
        size_t at = 0;
        uint64_t elapsed = (now_usec(CLOCK_MONOTONIC) - run->started_mono) / USEC_PER_SEC;
        char d[32];
        output_duration(elapsed, d);
        at += (size_t)snprintf(line + at, sizeof(line) - at, "[%s]", d);
        if (run->n_trials > 1)
                at += (size_t)snprintf(line + at, sizeof(line) - at, " %u/%u done", run->ended,
                                       run->n_trials);
        for (unsigned i = 0; i < run->n_trials && at < sizeof(line); i++) {
                Trial *t = run->trials[i];
                char calls[256];
                const char *sid = trial_sid(t) ? trial_sid(t) : "";
                switch (trial_phase(t)) {
                case TRIAL_WAITING_SLOT:
                        at += (size_t)snprintf(line + at, sizeof(line) - at,
                                               " · #%u waiting for a slot", i + 1);
                        break;
                case TRIAL_AGENT:
                        trial_progress(t, calls, sizeof(calls));
                        if (run->n_trials == 1)
                                at += (size_t)snprintf(line + at, sizeof(line) - at,
                                                       " %s: agent running, twin calls: %s", sid,
                                                       calls[0] ? calls : "-");
                        else
                                at += (size_t)snprintf(line + at, sizeof(line) - at, " · #%u %s",
                                                       i + 1, calls[0] ? calls : "starting");
                        break;
                case TRIAL_GRADING:
                        at += (size_t)snprintf(line + at, sizeof(line) - at, " · #%u grading",
                                               i + 1);
                        break;
                case TRIAL_PENDING:
                case TRIAL_DONE:
                        break;
                }
        }
        /* one terminal line, or \r no longer returns to its start; bytes bound the width
         * (a "·" is two of them), cut where a character starts */
        size_t width = terminal_width() - 1;
        if (strlen(line) > width) {
                while (width > 0 && ((unsigned char)line[width] & 0xc0) == 0x80)
                        width--;
                line[width] = 0;
        }
        fputs("\r\033[K", stderr);
        output_fputs_clean(line, stderr);
        fflush(stderr);
        run->line_shown = true;
}

static int on_progress(sd_event_source *s, uint64_t usec _unused_, void *userdata)
{
        Run *run = userdata;
        show_progress(run);
        (void)sd_event_source_set_time_relative(s, PROGRESS_USEC);
        return 0;
}

/* ---------------------------------------------------------------- scheduling */

static bool trial_passed(const Trial *t)
{
        return trial_outcome(t) == TRIAL_GRADED && report_verdict_passed(trial_verdict(t));
}

/* "agent exited 0", "agent timed out after 3s (SIGTERM to its process group…)" */
static void describe_agent(const Trial *t, char *buf, size_t len)
{
        const AgentResult *a = trial_agent(t);
        if (!a) {
                snprintf(buf, len, "the agent did not run");
                return;
        }
        char d[32];
        output_duration((a->duration_usec + USEC_PER_SEC / 2) / USEC_PER_SEC, d);
        const char *who = a->sealed ? "every process of its pod" : "its process group";
        if (a->timed_out && a->killed)
                snprintf(buf, len,
                         "the agent timed out after %us (%s got SIGTERM, then SIGKILL %us "
                         "later); graded as it stood",
                         current->task->timeout_sec, who, TRIAL_KILL_GRACE_SEC);
        else if (a->timed_out)
                snprintf(buf, len,
                         "the agent timed out after %us (%s got SIGTERM); graded as it stood",
                         current->task->timeout_sec, who);
        else if (a->signal)
                snprintf(buf, len, "the agent was killed by SIG%s after %s",
                         sigabbrev_np(a->signal) ? sigabbrev_np(a->signal) : "?", d);
        else
                snprintf(buf, len, "the agent exited with status %d after %s", a->exit_code, d);
}

/* What the seal held the agent to and refused it, from meta.json's agent.seal. */
static void print_seal(const Trial *t)
{
        const json_t *agent = json_object_get(trial_meta(t), "agent");
        const json_t *seal = json_object_get(agent, "seal");
        const json_t *output = json_object_get(agent, "output");
        if (!trial_agent(t) || !seal)
                return;
        if (!json_is_true(json_object_get(seal, "sealed"))) {
                puts("Not sealed (--no-seal): the agent ran on this host as an ordinary process.");
                return;
        }
        const json_t *net = json_object_get(seal, "network"),
                     *hit = json_object_get(seal, "limits_hit");
        json_int_t refused = json_integer_value(json_object_get(net, "refused"));
        printf("Sealed (limits by %s)", json_get_str(json_object_get(seal, "limits"), "how"));
        if (refused)
                printf("; %" JSON_INTEGER_FORMAT " connection%s refused", refused,
                       refused == 1 ? "" : "s");
        if (json_is_true(json_object_get(seal, "oom_killed")))
                fputs("; OOM-killed at its memory limit", stdout);
        if (json_integer_value(json_object_get(hit, "pids_refused")))
                fputs("; its process limit refused forks", stdout);
        if (json_is_true(json_object_get(output, "stdout_cut")) ||
            json_is_true(json_object_get(output, "stderr_cut")))
                printf("; its output cut at %" JSON_INTEGER_FORMAT " bytes",
                       json_integer_value(json_object_get(output, "max_bytes")));
        puts(" (meta.json: agent.seal)");
}

/* One line for a finished trial of several. */
static void print_trial_line(Run *run, Trial *t)
{
        char agent[256];
        describe_agent(t, agent, sizeof(agent));
        clear_progress(run);
        printf("Trial %u/%u ", trial_number(t), run->n_trials);
        output_fputs_clean(trial_sid(t) ? trial_sid(t) : "-", stdout);
        fputs(": ", stdout);
        switch (trial_outcome(t)) {
        case TRIAL_GRADED: {
                const json_t *v = trial_verdict(t);
                const char *state = report_verdict_state(v);
                const json_t *score = json_object_get(v, "score");
                if (run->color)
                        fputs(trial_passed(t)                ? "\033[32m"
                              : report_verdict_incomplete(v) ? "\033[33m"
                                                             : "\033[31m",
                              stdout);
                for (const char *p = state; *p; p++)
                        putchar(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
                if (run->color)
                        fputs("\033[0m", stdout);
                if (json_is_number(score))
                        printf(" (score %.1f%%)", json_number_value(score));
                size_t i;
                json_t *c;
                json_array_foreach (json_object_get(v, "criteria"), i, c) {
                        const char *st = json_get_str(c, "status");
                        bool unevaluated = streq_ptr(st, "unmatched") || streq_ptr(st, "error") ||
                                           (streq_ptr(st, "skipped") &&
                                            !json_is_true(json_object_get(v, "code_only")));
                        if ((!json_is_true(json_object_get(c, "scored")) && !unevaluated) ||
                            streq_ptr(st, "passed"))
                                continue;
                        fputs("\n    ", stdout);
                        output_fputs_clean(st, stdout);
                        fputs(": ", stdout);
                        output_fputs_clean(json_get_str(c, "text"), stdout);
                }
                break;
        }
        case TRIAL_KEPT:
                fputs("kept open, not graded", stdout);
                break;
        case TRIAL_FAILED:
                fputs("not graded: ", stdout);
                output_fputs_clean(trial_error(t), stdout);
                break;
        case TRIAL_INTERRUPTED:
                fputs("interrupted", stdout);
                break;
        case TRIAL_SHELL:
                fputs("a shell, not graded", stdout);
                break;
        }
        fputs("\n    ", stdout);
        output_fputs_clean(agent, stdout);
        if (trial_dir(t)) {
                fputs("; ", stdout);
                output_fputs_clean(trial_dir(t), stdout);
        }
        putchar('\n');
        fflush(stdout);
}

#define STDERR_TAIL_BYTES 4096u
#define STDERR_TAIL_LINES 10u

/*
 * The agent failed (a non-zero exit, a signal, a timeout): the last lines of its stderr on
 * pome's, and the file that holds all of it — the agent's own words are the first thing to
 * read when it crashes. Said whatever --quiet says, as every error is.
 */
static void print_agent_stderr(Run *run, const Trial *t)
{
        const AgentResult *a = trial_agent(t);
        if (!a || (a->exit_code == 0 && !a->signal && !a->timed_out) || !trial_dir(t))
                return;
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, "%s/stderr.txt", trial_dir(t)) < 0)
                return;
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return;
        size_t size = (size_t)st.st_size, n = size < STDERR_TAIL_BYTES ? size : STDERR_TAIL_BYTES;
        char buf[STDERR_TAIL_BYTES + 1];
        ssize_t k = pread(fd, buf, n, (off_t)(size - n));
        if (k < 0)
                return;
        buf[k] = 0;
        /* the last lines: back from the end, past a final newline */
        size_t end = (size_t)k;
        while (end > 0 && (buf[end - 1] == '\n' || buf[end - 1] == '\r'))
                end--;
        size_t start = end;
        unsigned lines = 0;
        while (start > 0 && lines < STDERR_TAIL_LINES) {
                start--;
                if (buf[start] == '\n' && ++lines == STDERR_TAIL_LINES) {
                        start++;
                        break;
                }
        }
        clear_progress(run);
        if (run->n_trials > 1)
                fprintf(stderr, "pome run: trial %u: ", trial_number(t));
        else
                fputs("pome run: ", stderr);
        if (end == 0) {
                fputs("the agent wrote nothing on its stderr (", stderr);
                output_fputs_clean(path, stderr);
                fputs(")\n", stderr);
                return;
        }
        fprintf(stderr, "the agent's stderr ends with:\n");
        for (const char *l = buf + start; l < buf + end;) {
                const char *e = memchr(l, '\n', (size_t)(buf + end - l));
                if (!e)
                        e = buf + end;
                _cleanup_free_ char *line = strndup(l, (size_t)(e - l));
                fputs("  | ", stderr);
                output_fputs_clean(line ? line : "", stderr);
                fputc('\n', stderr);
                l = e + 1;
        }
        fputs("pome run: all of it is in ", stderr);
        output_fputs_clean(path, stderr);
        fputc('\n', stderr);
}

static void schedule(Run *run);

static void on_trial_done(Trial *t, void *userdata)
{
        Run *run = userdata;
        run->active--;
        run->ended++;
        print_agent_stderr(run, t);
        if (trial_fatal(t))
                run->stopping = true; /* the next trial would fail the same way */
        if (run->n_trials > 1 && !run->quiet && !run->json)
                print_trial_line(run, t);
        schedule(run);
}

static void schedule(Run *run)
{
        while (!run->stopping && run->active < run->concurrency && run->next < run->n_trials) {
                Trial *t = run->trials[run->next++];
                run->active++;
                trial_start(t);
        }
        if (run->active == 0 && (run->stopping || run->next == run->n_trials))
                (void)sd_event_exit(run->event, 0);
}

static int on_signal(sd_event_source *s _unused_, const struct signalfd_siginfo *si, void *userdata)
{
        Run *run = userdata;
        run->interrupts++;
        run->stopping = true;
        say_line(run->interrupts == 1
                         ? (si->ssi_signo == SIGINT ? "interrupted: stopping the agents and "
                                                      "discarding their sandboxes (again: kill "
                                                      "at once)"
                                                    : "terminated: stopping the agents and "
                                                      "discarding their sandboxes")
                         : "killing the agents now");
        for (unsigned i = 0; i < run->next; i++)
                if (trial_phase(run->trials[i]) != TRIAL_DONE)
                        trial_interrupt(run->trials[i], run->interrupts > 1);
        schedule(run);
        return 0;
}

/* How many trials to run at once: the free slots of the team (GET /v1/usage), at least 1. */
static int pick_concurrency(Run *run)
{
        if (run->local) {
                run->concurrency = run->n_trials < LOCAL_AT_ONCE ? run->n_trials : LOCAL_AT_ONCE;
                return 0;
        }
        _cleanup_(api_reply_done) ApiReply reply = {};
        int r = api_call(&run->config, "GET", "/v1/usage", NULL, &reply);
        if (r < 0)
                return api_exit_status(r, &reply);
        json_int_t free_slots =
                json_integer_value(json_object_get(reply.json, "sessions_remaining"));
        run->concurrency = free_slots < 1                           ? 1
                           : (json_int_t)run->n_trials < free_slots ? run->n_trials
                                                                    : (unsigned)free_slots;
        if (run->n_trials > 1 && !run->quiet)
                fprintf(stderr,
                        "pome run: %u trials, %u at a time (%" JSON_INTEGER_FORMAT
                        " of %" JSON_INTEGER_FORMAT " slots free)\n",
                        run->n_trials, run->concurrency, free_slots,
                        json_integer_value(json_object_get(reply.json, "sessions_quota")));
        return 0;
}

/* ---------------------------------------------------------------- the result */

static json_t *trial_json(const Trial *t)
{
        const json_t *meta = trial_meta(t);
        const json_t *v = trial_verdict(t);
        return json_pack("{s:I, s:s?, s:s?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:s?, s:O?}",
                         "trial", (json_int_t)trial_number(t), "session_id", trial_sid(t),
                         "run_dir", trial_dir(t), "outcome", json_object_get(meta, "outcome"),
                         "state", json_object_get(v, "state"), "passed",
                         json_object_get(v, "passed"), "score", json_object_get(v, "score"),
                         "counts", json_object_get(v, "counts"), "graded_by",
                         json_object_get(meta, "graded_by"), "agent",
                         json_object_get(meta, "agent"), "error", trial_error(t), "verdict", v);
}

/* The first trial that failed or was not graded sets the status; an incomplete verdict
 * only when nothing worse happened. */
static int exit_status(Run *run, unsigned *ret_passed)
{
        unsigned passed = 0;
        int code = POME_EXIT_OK;
        for (unsigned i = 0; i < run->next; i++) {
                Trial *t = run->trials[i];
                if (trial_passed(t))
                        passed++;
                int v = trial_outcome(t) == TRIAL_FAILED
                                ? (trial_exit_status(t) ? trial_exit_status(t) : POME_EXIT_ERROR)
                        : trial_outcome(t) == TRIAL_GRADED
                                ? report_verdict_exit_status(trial_verdict(t))
                                : POME_EXIT_OK;
                if (v != POME_EXIT_OK && (code == POME_EXIT_OK || (code == POME_EXIT_INCOMPLETE &&
                                                                   v != POME_EXIT_INCOMPLETE)))
                        code = v;
        }
        if (run->next < run->n_trials && code == POME_EXIT_OK)
                code = POME_EXIT_ERROR;
        *ret_passed = passed;
        return run->interrupts ? POME_EXIT_INTERRUPTED : code;
}

static int print_result(Run *run, int code, unsigned passed)
{
        double rate = (double)passed / (double)run->n_trials;
        bool all = passed == run->n_trials;
        /* "error": some trial has no verdict (or never started); "fail": all graded, not all
         * passed */
        bool ungraded = run->next < run->n_trials;
        for (unsigned i = 0; i < run->next; i++)
                ungraded = ungraded || trial_outcome(run->trials[i]) == TRIAL_FAILED;
        const char *word = run->interrupts                     ? "interrupted"
                           : run->keep && code == POME_EXIT_OK ? "kept"
                           : code == POME_EXIT_OK              ? "pass"
                           : ungraded                          ? "error"
                           : code == POME_EXIT_INCOMPLETE      ? "incomplete"
                                                               : "fail";
        if (run->json) {
                _cleanup_json_ json_t *trials = json_array(), *twins = json_array();
                for (char **tw = run->task->twins; twins && *tw; tw++)
                        json_array_append_new(twins, json_string(*tw));
                for (unsigned i = 0; trials && i < run->next; i++)
                        json_array_append_new(trials, trial_json(run->trials[i]));
                _cleanup_json_ json_t *j = json_pack(
                        "{s:{s:s, s:s, s:O}, s:s, s:s, s:i, s:I, s:I, s:f, s:i, s:O}", "task",
                        "path", run->plan.task_path, "title", run->task->title, "twins", twins,
                        "mode", run->local ? "local" : "sandbox", "result", word, "exit_status",
                        code, "k", (json_int_t)run->n_trials, "passed", (json_int_t)passed,
                        "pass_at_1", rate, "pass_hat_k", all ? 1 : 0, "trials", trials);
                /* 6 significant digits for people reading rates; verdict.json keeps the rest */
                if (!j || json_dumpf(j, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) < 0 ||
                    fputc('\n', stdout) == EOF)
                        return -EIO;
                return 0;
        }
        if (run->quiet) {
                printf("%s: %s", word, run->task->title);
                if (run->n_trials > 1)
                        printf(" (%u/%u trials passed, pass^%u = %d)", passed, run->n_trials,
                               run->n_trials, all ? 1 : 0);
                putchar('\n');
                return 0;
        }
        clear_progress(run);
        if (run->n_trials == 1) {
                Trial *t = run->trials[0];
                char agent[256];
                if (!trial_sid(t))
                        return 0; /* nothing ran; the error was said */
                describe_agent(t, agent, sizeof(agent));
                printf("%s %s: ", run->local ? "Local run" : "Sandbox", trial_sid(t));
                output_fputs_clean(agent, stdout);
                putchar('\n');
                print_seal(t);
                if (trial_dir(t)) {
                        fputs("Run directory: ", stdout);
                        output_fputs_clean(trial_dir(t), stdout);
                        putchar('\n');
                }
                switch (trial_outcome(t)) {
                case TRIAL_GRADED:
                        /* the task's own warnings were said at the start, naming the
                         * user's file: not again as the run directory's task.md */
                        return report_verdict_except(stdout, trial_verdict(t), run->color,
                                                     run->grade_task->warnings);
                case TRIAL_KEPT:
                        printf("No verdict: the sandbox is still open (--keep), ungraded.\n"
                               "  Inspect it:  pome sandbox get %s (its twins answer as "
                               "before)\n"
                               "  Grade it:    pome sandbox finalize %s, then pome run collect "
                               "%s %s\n"
                               "               (the run directory gets its final states and "
                               "verdict; pome eval it then)\n"
                               "  Or drop it:  pome sandbox stop %s --discard\n",
                               trial_sid(t), trial_sid(t), trial_sid(t),
                               trial_dir(t) ? trial_dir(t) : "", trial_sid(t));
                        return 0;
                case TRIAL_FAILED:
                        fputs("No verdict: ", stdout);
                        output_fputs_clean(trial_error(t), stdout);
                        putchar('\n');
                        return 0;
                case TRIAL_INTERRUPTED:
                        puts("No verdict: interrupted; the sandbox was discarded.");
                        return 0;
                case TRIAL_SHELL:
                        printf("The shell ended; %s, ungraded.\n",
                               run->local ? "its twins were stopped" : "the sandbox was discarded");
                        return 0;
                }
                return 0;
        }
        printf("%u trials: %u passed, %u did not · pass@1 = %.2f · pass^%u = %d (%s)\n",
               run->n_trials, passed, run->n_trials - passed, rate, run->n_trials, all ? 1 : 0,
               all ? "every trial passed" : "not every trial passed");
        return 0;
}

/* ---------------------------------------------------------------- pome run */

static int parse_run(Run *run, int argc, char **argv, const char **ret_task, char ***ret_agent,
                     const char **ret_api_url, const char **ret_out, unsigned *ret_trials)
{
        static const ArgOption options[] = {
                {"trials", OPT_TRIALS, true},
                {"local", OPT_LOCAL, false},
                {"keep", OPT_KEEP, false},
                {"out", OPT_OUT, true},
                {"quiet", OPT_QUIET, false},
                {"json", OPT_JSON, false},
                {"api-url", OPT_API_URL, true},
                {"allow-unmatched", OPT_ALLOW_UNMATCHED, false},
                {"no-seal", OPT_NO_SEAL, false},
                {"allow-net", OPT_ALLOW_NET, true},
                {"hide", OPT_HIDE, true},
                {"workdir-rw", OPT_WORKDIR_RW, false},
                {"agent-memory", OPT_AGENT_MEMORY, true},
                {"agent-pids", OPT_AGENT_PIDS, true},
                {"output-max", OPT_OUTPUT_MAX, true},
                {"shell", OPT_SHELL, false},
                JUDGING_OPTIONS,
        };
        int dashdash = argc;
        for (int i = 1; i < argc; i++)
                if (streq(argv[i], "--")) {
                        dashdash = i;
                        break;
                }
        ArgParser p;
        const char *v;
        int r;
        unsigned long long n;
        args_init(&p, dashdash, argv, 1, options, ELEMENTSOF(options), "run");
        while ((r = args_next(&p, &v)) != ARGS_END) {
                switch (r) {
                case ARGS_HELP:
                        print_help_run();
                        return 1;
                case ARGS_POSITIONAL:
                        if (*ret_task)
                                return args_error("run",
                                                  "unexpected argument '%s': put the agent "
                                                  "command after --",
                                                  v);
                        *ret_task = v;
                        break;
                case OPT_TRIALS:
                        if (args_parse_uint(v, 1, TRIALS_MAX, &n) < 0)
                                return args_error("run", "invalid --trials '%s': 1 to %u", v,
                                                  TRIALS_MAX);
                        *ret_trials = (unsigned)n;
                        break;
                case OPT_LOCAL:
                        run->local = true;
                        break;
                case OPT_KEEP:
                        run->keep = true;
                        break;
                case OPT_OUT:
                        if (!*v)
                                return args_error("run", "--out needs a directory");
                        *ret_out = v;
                        break;
                case OPT_QUIET:
                        run->quiet = true;
                        break;
                case OPT_JSON:
                        run->json = true;
                        break;
                case OPT_API_URL:
                        *ret_api_url = v;
                        break;
                case OPT_ALLOW_UNMATCHED:
                        run->allow_unmatched = true;
                        break;
                case OPT_NO_SEAL:
                        run->no_seal = true;
                        break;
                case OPT_SHELL:
                        run->shell = true;
                        break;
                case OPT_ALLOW_NET:
                        if (!*v)
                                return args_error("run", "--allow-net needs a host");
                        if (strv_extend(&run->allow_net, v) < 0)
                                return -ENOMEM;
                        break;
                case OPT_HIDE:
                        if (*v != '/')
                                return args_error("run", "--hide needs an absolute path, not '%s'",
                                                  v);
                        if (strv_extend(&run->hide, v) < 0)
                                return -ENOMEM;
                        break;
                case OPT_WORKDIR_RW:
                        run->workdir_rw = true;
                        break;
                case OPT_AGENT_MEMORY:
                case OPT_OUTPUT_MAX: {
                        uint64_t b;
                        if (text_parse_size(v, &b) < 0 || b == 0 ||
                            (r == OPT_AGENT_MEMORY && b < (UINT64_C(16) << 20)))
                                return args_error(
                                        "run", "invalid --%s '%s': a size like 512M or 2G%s",
                                        r == OPT_AGENT_MEMORY ? "agent-memory" : "output-max", v,
                                        r == OPT_AGENT_MEMORY ? ", at least 16M" : "");
                        *(r == OPT_AGENT_MEMORY ? &run->memory_max : &run->output_max) = b;
                        break;
                }
                case OPT_AGENT_PIDS:
                        if (args_parse_uint(v, 8, 4194304, &n) < 0)
                                return args_error("run", "invalid --agent-pids '%s': 8 to 4194304",
                                                  v);
                        run->pids_max = n;
                        break;
                default:
                        if (r >= ARGS_FIRST_OPTION && judging_take(&run->judging, r, v))
                                break;
                        return r;
                }
        }
        if (!*ret_task)
                return args_error("run", "missing the task file (TASK.md)");
        if (run->shell) {
                if (dashdash < argc)
                        return args_error("run", "--shell runs a shell in the agent's place: "
                                                 "drop the command after --");
                if (run->no_seal || run->keep || *ret_trials > 1 || run->json || run->quiet)
                        return args_error("run", "--shell opens one sealed shell: not with "
                                                 "--no-seal, --keep, --trials, --json or "
                                                 "--quiet");
                if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
                        return args_error("run", "--shell needs a terminal on its stdin and "
                                                 "stdout");
                const char *sh = getenv("SHELL");
                run->shell_argv[0] = sh && *sh == '/' && access(sh, X_OK) == 0 ? sh : "/bin/sh";
                *ret_agent = (char **)run->shell_argv;
                return 0;
        }
        if (dashdash >= argc - 1)
                return args_error("run",
                                  "missing the agent command: pome run %s -- AGENT_CMD "
                                  "[ARGS...]",
                                  *ret_task);
        if (run->keep && run->local)
                return args_error("run", "--keep leaves a sandbox open; --local has none (its "
                                         "twins end with pome)");
        if (run->keep && *ret_trials > 1)
                return args_error("run", "--keep runs one trial: the kept sandboxes would hold "
                                         "every slot");
        if (run->judging.spec && !run->local)
                return args_error("run",
                                  "--judge judges a --local run; a run on pomed is graded at "
                                  "finalize by pomed's own judge (judge: in pomed.conf). Give "
                                  "pomed a judge, or regrade the run directory with pome eval "
                                  "RUN_DIR --judge SPEC");
        if (run->no_seal && (run->allow_net || run->hide || run->workdir_rw))
                return args_error("run", "--allow-net, --hide and --workdir-rw shape the "
                                         "agent's seal: not with --no-seal");
        *ret_agent = argv + dashdash + 1;
        return 0;
}

/*
 * The seal of the run's agents, from the command line, the task and the defaults; or, with
 * --no-seal, only the output cap. A host that cannot seal is said, with what is missing and
 * how to get it, and the run refused; so is an agent command (agent, borrowed) that names a
 * file the pod cannot see (seal_check_argv). 0 or a POME_EXIT_*.
 */
static int prepare_seal(Run *run, const char *task_path, char *const *agent)
{
        const GradeTask *task = run->task;
        /* the command line, else the task's ## Config agent:, else pomed.conf's agent: (the
         * pomed beside this pome, by its pomed.json), else pome's own */
        uint64_t conf_memory, conf_pids, conf_output;
        config_agent_defaults(&conf_memory, &conf_pids, &conf_output);
        uint64_t output = run->output_max          ? run->output_max
                          : task->agent_output_max ? task->agent_output_max
                          : conf_output            ? conf_output
                                                   : SEAL_OUTPUT_DEFAULT;
        run->output_max = output;
        if (run->no_seal)
                return 0;
        for (char **h = task->allow_net; h && *h; h++)
                if (!strv_contains(run->allow_net, *h) && strv_extend(&run->allow_net, *h) < 0)
                        return POME_EXIT_ERROR;
        SealConfig c = {
                .allow_net = run->allow_net,
                .hide = run->hide,
                .workdir_rw = run->workdir_rw,
                .memory_max = run->memory_max          ? run->memory_max
                              : task->agent_memory_max ? task->agent_memory_max
                              : conf_memory            ? conf_memory
                                                       : SEAL_MEMORY_DEFAULT,
                .pids_max = run->pids_max          ? run->pids_max
                            : task->agent_pids_max ? task->agent_pids_max
                            : conf_pids            ? conf_pids
                                                   : SEAL_PIDS_DEFAULT,
                .output_max = output,
        };
        /* what grades it is the agent's to neither read nor rewrite */
        char task_abs[PATH_MAX] = "", side_abs[PATH_MAX + 16] = "";
        if (!realpath(task_path, task_abs))
                snprintf(task_abs, sizeof(task_abs), "%s", task_path);
        size_t n = strlen(task_abs);
        snprintf(side_abs, sizeof(side_abs), "%.*s.seed.json",
                 (int)(n > 3 && endswith(task_abs, ".md") ? n - 3 : n), task_abs);
        char *extra[] = {run->out_dir, task_abs, side_abs, NULL};
        char err[1024] = "";
        int r = seal_new(&c, extra, &run->seal, err, sizeof(err));
        if (r >= 0)
                r = seal_check_argv(run->seal, agent, run->cwd, err, sizeof(err));
        if (r == -ENOMEM)
                return POME_EXIT_ERROR;
        if (r < 0) {
                fprintf(stderr, "pome run: %s\n", err);
                if (r == -EPERM)
                        fputs("pome run: the agent runs sealed by default; to run it on this "
                              "host as an ordinary process instead (it can then read what you "
                              "can, the team key among it, and reach any address), pass "
                              "--no-seal\n",
                              stderr);
                return r == -EPERM ? POME_EXIT_ERROR : POME_EXIT_USAGE;
        }
        return 0;
}

static int run_command(int argc, char **argv)
{
        _cleanup_(run_done) Run run = {.pty = PTY_NULL};
        const char *task_path = NULL, *api_url = NULL, *out = DEFAULT_OUT_DIR;
        char **agent = NULL;
        unsigned trials = 0;
        int r;

        r = parse_run(&run, argc, argv, &task_path, &agent, &api_url, &out, &trials);
        if (r != 0)
                return r > 0 ? POME_EXIT_OK : POME_EXIT_USAGE;
        r = judging_open(&run.judging, "run", &run.judge);
        if (r < 0)
                return r == -ENOMEM ? POME_EXIT_ERROR : POME_EXIT_USAGE;
        current = &run;
        if (load_task(&run, task_path) < 0)
                return POME_EXIT_USAGE;
        r = check_criteria(&run);
        if (r != 0)
                return r;
        if (trials == 0)
                trials = run.task->runs ? run.task->runs : 1;
        if (run.keep && trials > 1) {
                args_error("run",
                           "--keep runs one trial, and the task asks for %u (## Config "
                           "runs): pass --trials 1",
                           trials);
                return POME_EXIT_USAGE;
        }
        if (!run.local && run.task->timeout_sec >= LIFETIME_MAX && !run.quiet)
                fprintf(stderr,
                        "pome run: warning: the task's timeout (%us) is not shorter than a "
                        "sandbox's lifetime (%us at most): the sandbox may expire before the "
                        "agent does, and an expired run is not graded\n",
                        run.task->timeout_sec, LIFETIME_MAX);
        r = resolve_seeds(&run);
        if (r < 0)
                return r == -ENOMEM ? POME_EXIT_ERROR : POME_EXIT_USAGE;
        if (!run.local) {
                r = config_load(api_url, &run.config);
                if (r < 0)
                        return api_exit_status(r, NULL);
        } else if (token_random_bytes(run.key, sizeof(run.key)) < 0 ||
                   token_random_id("adm_", 24, &run.admin_token) < 0)
                return POME_EXIT_ERROR;

        r = mkdir_p(out, 0755);
        char abs[PATH_MAX];
        if (r < 0 || !realpath(out, abs)) {
                fprintf(stderr, "pome run: cannot create %s: %s\n", out,
                        strerror(r < 0 ? -r : errno));
                return POME_EXIT_ERROR;
        }
        run.out_dir = strdup(abs);
        if (!run.out_dir || !getcwd(run.cwd, sizeof(run.cwd)))
                return POME_EXIT_ERROR;
        r = prepare_seal(&run, task_path, agent);
        if (r != 0)
                return r;
        run.n_trials = trials;
        run.trials = calloc(trials, sizeof(Trial *));
        if (!run.out_dir || !run.trials)
                return POME_EXIT_ERROR;
        run.color = report_use_color(stdout);
        run.progress = !run.quiet && !run.shell && isatty(STDERR_FILENO);

        /* SIGCHLD for the agents' child sources, SIGINT/SIGTERM for the loop: blocked before
         * any thread (libcurl's resolver) exists, so every thread inherits the mask */
        sigset_t ss;
        sigemptyset(&ss);
        sigaddset(&ss, SIGCHLD);
        sigaddset(&ss, SIGINT);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGWINCH); /* --shell's terminal size, on the loop */
        sigprocmask(SIG_BLOCK, &ss, NULL);
        signal(SIGPIPE, SIG_IGN);
        r = sd_event_new(&run.event);
        if (r < 0)
                return POME_EXIT_ERROR;
        if (sd_event_add_signal(run.event, NULL, SIGINT, on_signal, &run) < 0 ||
            sd_event_add_signal(run.event, NULL, SIGTERM, on_signal, &run) < 0)
                return POME_EXIT_ERROR;
        if (run.shell) {
                fprintf(stderr,
                        "pome run: a shell in the agent's pod, with the sandbox's variables: what "
                        "the agent sees. Exit it to end; %s, ungraded.\n",
                        run.local ? "its twins stop then" : "the sandbox is discarded then");
                r = pty_open(&run.pty, run.event);
                if (r < 0) {
                        fprintf(stderr, "pome run: cannot open a terminal for the shell: %s\n",
                                strerror(-r));
                        return POME_EXIT_ERROR;
                }
        }

        run.plan = (RunPlan){
                .event = run.event,
                .config = run.local ? NULL : &run.config,
                .task = run.task,
                .grade_task = run.grade_task,
                .task_path = task_path,
                .task_text = run.task_text,
                .task_len = run.task_len,
                .sidecar_text = run.sidecar_text,
                .sidecar_len = run.sidecar_len,
                .seeds = run.seeds,
                .agent_argv = agent,
                .out_dir = run.out_dir,
                .n_trials = trials,
                .keep = run.keep,
                .judge = run.judge ? judge_grade_judge(run.judge) : NULL,
                .code_only = run.judging.code_only,
                .local_key = run.key,
                .local_key_len = sizeof(run.key),
                .local_admin_token = run.admin_token,
                .seal = run.seal,
                .output_max = run.output_max,
                .cwd = run.cwd,
                .shell_tty = run.shell ? run.pty.slave : -1,
                .announce = !run.quiet,
                .say = say_line,
        };
        for (unsigned i = 0; i < trials; i++) {
                run.trials[i] = trial_new(&run.plan, i + 1, on_trial_done, &run);
                if (!run.trials[i])
                        return POME_EXIT_ERROR;
        }
        r = pick_concurrency(&run);
        if (r != 0)
                return r;

        run.started_mono = now_usec(CLOCK_MONOTONIC);
        if (run.progress &&
            sd_event_add_time_relative(run.event, &run.progress_timer, CLOCK_MONOTONIC,
                                       PROGRESS_USEC, 0, on_progress, &run) >= 0)
                (void)sd_event_source_set_enabled(run.progress_timer, SD_EVENT_ON);
        schedule(&run);
        r = sd_event_loop(run.event);
        pty_close(&run.pty); /* the user's terminal as it was, before anything is printed */
        clear_progress(&run);
        if (r < 0) {
                fprintf(stderr, "pome run: the event loop failed: %s\n", strerror(-r));
                return POME_EXIT_ERROR;
        }
        unsigned passed;
        int code = exit_status(&run, &passed);
        if (print_result(&run, code, passed) < 0)
                return POME_EXIT_ERROR;
        current = NULL;
        return code;
}

/* ---------------------------------------------------------------- pome run show */

static bool sandbox_id_valid(const char *id)
{
        size_t n = strlen(id);
        if (n == 0 || n > 128)
                return false;
        for (const char *p = id; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
                        return false;
        return true;
}

static char *read_in(const char *dir, const char *name)
{
        _cleanup_free_ char *path = NULL;
        char *text = NULL;
        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return NULL;
        if (read_file_at(AT_FDCWD, path, RUN_FILE_MAX, &text, NULL) < 0)
                return NULL;
        return text;
}

static void print_summary(const char *text)
{
        if (!text) {
                puts("\nNo summary.");
                return;
        }
        puts("\nSummary:");
        /* Markdown is text for a terminal too; only control characters are dropped */
        for (const char *l = text; *l;) {
                const char *e = strchrnul(l, '\n');
                _cleanup_free_ char *line = strndup(l, (size_t)(e - l));
                fputs("  ", stdout);
                output_fputs_clean(line, stdout);
                putchar('\n');
                l = *e ? e + 1 : e;
        }
}

static int show_dir(const char *dir, bool json)
{
        _cleanup_free_ char *meta_text = read_in(dir, "meta.json");
        _cleanup_free_ char *verdict_text = read_in(dir, "verdict.json");
        _cleanup_free_ char *summary = read_in(dir, "summary.md");
        _cleanup_json_ json_t *meta = meta_text ? json_loads(meta_text, 0, NULL) : NULL;
        _cleanup_json_ json_t *verdict = verdict_text ? json_loads(verdict_text, 0, NULL) : NULL;
        if (!meta && !verdict) {
                fprintf(stderr, "pome run show: %s holds neither meta.json nor verdict.json\n",
                        dir);
                return POME_EXIT_ERROR;
        }
        if (json) {
                _cleanup_json_ json_t *j =
                        json_pack("{s:s, s:O?, s:O?, s:s?}", "run_dir", dir, "meta", meta,
                                  "verdict", verdict, "summary", summary);
                return j && output_json(j) >= 0 ? POME_EXIT_OK : POME_EXIT_ERROR;
        }
        const json_t *agent = json_object_get(meta, "agent");
        printf("Run %s\n", dir);
        if (meta) {
                const json_t *task = json_object_get(meta, "task");
                printf("  %-12s ", "Task:");
                output_fputs_clean(json_get_str(task, "title"), stdout);
                fputs(" (", stdout);
                output_fputs_clean(json_get_str(task, "path"), stdout);
                puts(")");
                printf("  %-12s ", "Session:");
                output_fputs_clean(json_get_str(meta, "session_id"), stdout);
                fputs(" (", stdout);
                output_fputs_clean(json_get_str(meta, "mode"), stdout);
                printf(", trial %" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT ")\n",
                       json_integer_value(json_object_get(meta, "trial")),
                       json_integer_value(json_object_get(meta, "trials")));
                printf("  %-12s ", "Started:");
                output_fputs_clean(json_get_str(meta, "started_at"), stdout);
                printf("\n  %-12s ", "Ended:");
                output_fputs_clean(json_get_str(meta, "ended_at"), stdout);
                printf("\n  %-12s ", "Outcome:");
                output_fputs_clean(json_get_str(meta, "outcome"), stdout);
                if (json_get_str(meta, "error")) {
                        fputs(": ", stdout);
                        output_fputs_clean(json_get_str(meta, "error"), stdout);
                }
                printf("\n  %-12s ", "Agent:");
                _cleanup_free_ char *argv = json_dumps(json_object_get(agent, "argv"), 0);
                output_fputs_clean(argv, stdout);
                if (json_is_integer(json_object_get(agent, "exit_code")))
                        printf(", exit status %" JSON_INTEGER_FORMAT,
                               json_integer_value(json_object_get(agent, "exit_code")));
                if (json_get_str(agent, "signal")) {
                        fputs(", killed by ", stdout);
                        output_fputs_clean(json_get_str(agent, "signal"), stdout);
                }
                if (json_is_true(json_object_get(agent, "timed_out")))
                        printf(", timed out after %" JSON_INTEGER_FORMAT "s",
                               json_integer_value(json_object_get(agent, "timeout_seconds")));
                putchar('\n');
        }
        if (verdict) {
                if (report_verdict(stdout, verdict, report_use_color(stdout)) < 0)
                        return POME_EXIT_ERROR;
        } else
                puts("No verdict.json: the run was not graded.");
        print_summary(summary);
        return POME_EXIT_OK;
}

static int show_sandbox(const char *id, const char *api_url, bool json)
{
        _cleanup_(config_done) Config config = {};
        _cleanup_(api_reply_done) ApiReply rec = {}, ver = {}, sum = {};
        _cleanup_free_ char *e = client_escape(id), *base = NULL, *vpath = NULL, *spath = NULL;
        int r = config_load(api_url, &config);
        if (r < 0)
                return api_exit_status(r, NULL);
        if (!e || asprintf(&base, "/v1/sandboxes/%s", e) < 0 ||
            asprintf(&vpath, "%s/verdict", base) < 0 || asprintf(&spath, "%s/summary", base) < 0)
                return POME_EXIT_ERROR;
        r = api_call(&config, "GET", base, NULL, &rec);
        if (r < 0) {
                int code = api_exit_status(r, &rec);
                _cleanup_free_ char *dir = NULL;
                struct stat st;
                /* a --local run's id names a run directory, not a sandbox of pomed's */
                if (r == -EREMOTEIO && rec.status == 404 &&
                    asprintf(&dir, "%s/%s", DEFAULT_OUT_DIR, id) > 0 && stat(dir, &st) == 0 &&
                    S_ISDIR(st.st_mode))
                        fprintf(stderr,
                                "pome run show: %s is a run directory here (a --local run has "
                                "no sandbox on pomed): pome run show %s\n",
                                dir, dir);
                return code;
        }
        int rv = api_call(&config, "GET", vpath, NULL, &ver);
        if (rv < 0 && !(rv == -EREMOTEIO && ver.status == 404))
                return api_exit_status(rv, &ver);
        int rs = api_request(&config, "GET", spath, NULL, API_ANY_BODY, &sum);
        if (rs < 0 && !(rs == -EREMOTEIO && sum.status == 404))
                return api_exit_status(rs, &sum);
        const json_t *verdict = rv >= 0 ? ver.json : NULL;
        const char *summary = rs >= 0 ? sum.body : NULL;
        if (json) {
                _cleanup_json_ json_t *j = json_pack("{s:O, s:O?, s:s?}", "sandbox", rec.json,
                                                     "verdict", verdict, "summary", summary);
                return j && output_json(j) >= 0 ? POME_EXIT_OK : POME_EXIT_ERROR;
        }
        const json_t *s = rec.json;
        fputs("Sandbox ", stdout);
        output_fputs_clean(json_get_str(s, "session_id"), stdout);
        fputs(": ", stdout);
        output_fputs_clean(json_get_str(s, "state"), stdout);
        if (json_get_str(s, "reason")) {
                fputs(" (", stdout);
                output_fputs_clean(json_get_str(s, "reason"), stdout);
                fputc(')', stdout);
        }
        printf("\n  %-12s ", "Task:");
        output_fputs_clean(json_get_str(s, "task") ?: "(none)", stdout);
        printf("\n  %-12s ", "Created:");
        output_fputs_clean(json_get_str(s, "created_at"), stdout);
        printf("\n  %-12s ", "Ended:");
        output_fputs_clean(json_get_str(s, "ended_at") ?: "(open)", stdout);
        putchar('\n');
        if (verdict) {
                if (report_verdict(stdout, verdict, report_use_color(stdout)) < 0)
                        return POME_EXIT_ERROR;
        } else if (json_get_str(s, "verdict_error")) {
                /* finalized, and pomed could not grade it: its reason, not a bare 404 */
                fputs("No verdict: pomed could not grade the run: ", stdout);
                output_fputs_clean(json_get_str(s, "verdict_error"), stdout);
                putchar('\n');
        } else {
                fputs("No verdict: ", stdout);
                output_fputs_clean(ver.error_message ? ver.error_message : "none", stdout);
                putchar('\n');
        }
        if (summary)
                print_summary(summary);
        else {
                fputs("\nNo summary: ", stdout);
                output_fputs_clean(sum.error_message ? sum.error_message : "none", stdout);
                putchar('\n');
        }
        return POME_EXIT_OK;
}

static int run_show(int argc, char **argv)
{
        static const ArgOption options[] = {
                {"json", OPT_JSON, false},
                {"api-url", OPT_API_URL, true},
        };
        const char *what = NULL, *api_url = NULL, *v;
        bool json = false;
        ArgParser p;
        int r;
        args_init(&p, argc, argv, 1, options, ELEMENTSOF(options), "run show");
        while ((r = args_next(&p, &v)) != ARGS_END) {
                switch (r) {
                case ARGS_HELP:
                        print_help_run();
                        return POME_EXIT_OK;
                case ARGS_POSITIONAL:
                        if (what) {
                                args_error("run show", "unexpected argument '%s'", v);
                                return POME_EXIT_USAGE;
                        }
                        what = v;
                        break;
                case OPT_JSON:
                        json = true;
                        break;
                case OPT_API_URL:
                        api_url = v;
                        break;
                default:
                        return POME_EXIT_USAGE;
                }
        }
        if (!what) {
                args_error("run show", "missing a sandbox ID or a run directory");
                return POME_EXIT_USAGE;
        }
        struct stat st;
        if (stat(what, &st) == 0 && S_ISDIR(st.st_mode))
                return show_dir(what, json);
        if (strchr(what, '/') || !sandbox_id_valid(what)) {
                fprintf(stderr, "pome run show: %s is neither a run directory nor a sandbox id\n",
                        what);
                return POME_EXIT_USAGE;
        }
        return show_sandbox(what, api_url, json);
}

/* ---------------------------------------------------------------- pome run collect */

/* meta.json of dir updated (or begun) for a collected run. 0 or -errno. */
static int collect_meta(const char *dir, const char *sid, const Config *config, const json_t *rec,
                        const json_t *verdict)
{
        _cleanup_free_ char *path = NULL, *text = NULL;
        if (asprintf(&path, "%s/meta.json", dir) < 0)
                return -ENOMEM;
        _cleanup_json_ json_t *meta = NULL;
        if (read_file_at(AT_FDCWD, path, SIDECAR_MAX, &text, NULL) >= 0)
                meta = json_loads(text, 0, NULL);
        if (!json_is_object(meta)) {
                json_decref(meta);
                meta = json_pack("{s:i, s:s, s:s, s:s, s:s}", "version", 1, "pome_version",
                                 POME_VERSION, "mode", "sandbox", "session_id", sid, "api_url",
                                 config->api_url);
                if (!meta)
                        return -ENOMEM;
        }
        char now[RFC3339_MAX];
        format_rfc3339_usec((int64_t)now_usec(CLOCK_REALTIME), now, sizeof(now));
        json_t *summary = verdict ? json_pack("{s:O?, s:O?, s:O?, s:O?}", "state",
                                              json_object_get(verdict, "state"), "passed",
                                              json_object_get(verdict, "passed"), "score",
                                              json_object_get(verdict, "score"), "counts",
                                              json_object_get(verdict, "counts"))
                                  : json_null();
        if (json_object_set_new(meta, "outcome", json_string(verdict ? "graded" : "not_graded")) <
                    0 ||
            json_object_set_new(meta, "graded_by", verdict ? json_string("pomed") : json_null()) <
                    0 ||
            json_object_set_new(meta, "verdict", summary) < 0 ||
            json_object_set_new(meta, "collected_at", json_string(now)) < 0 ||
            json_object_set(meta, "sandbox_state", json_object_get(rec, "state") ?: json_null()) <
                    0 ||
            json_object_set(meta, "sandbox_reason", json_object_get(rec, "reason") ?: json_null()) <
                    0)
                return -ENOMEM;
        _cleanup_free_ char *out = json_dumps(meta, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
        if (!out)
                return -ENOMEM;
        size_t n = strlen(out);
        _cleanup_free_ char *line = malloc(n + 2);
        if (!line)
                return -ENOMEM;
        memcpy(line, out, n);
        line[n] = '\n';
        return write_file_at(AT_FDCWD, path, line, n + 1, 0644, true);
}

static int run_collect(int argc, char **argv)
{
        static const ArgOption options[] = {
                {"api-url", OPT_API_URL, true},
        };
        const char *id = NULL, *dir_arg = NULL, *api_url = NULL, *v;
        ArgParser p;
        int r;
        args_init(&p, argc, argv, 1, options, ELEMENTSOF(options), "run collect");
        while ((r = args_next(&p, &v)) != ARGS_END) {
                switch (r) {
                case ARGS_HELP:
                        print_help_run();
                        return POME_EXIT_OK;
                case ARGS_POSITIONAL:
                        if (!id)
                                id = v;
                        else if (!dir_arg)
                                dir_arg = v;
                        else {
                                args_error("run collect", "unexpected argument '%s'", v);
                                return POME_EXIT_USAGE;
                        }
                        break;
                case OPT_API_URL:
                        api_url = v;
                        break;
                default:
                        return POME_EXIT_USAGE;
                }
        }
        if (!id || !sandbox_id_valid(id)) {
                args_error("run collect",
                           id ? "'%s' is not a sandbox id" : "missing the sandbox ID", id);
                return POME_EXIT_USAGE;
        }
        _cleanup_free_ char *dir = NULL;
        if (dir_arg)
                dir = strdup(dir_arg);
        else if (asprintf(&dir, "%s/%s", DEFAULT_OUT_DIR, id) < 0)
                dir = NULL;
        if (!dir)
                return POME_EXIT_ERROR;

        /* the directory, when it exists, must be this sandbox's run */
        _cleanup_free_ char *meta_text = read_in(dir, "meta.json");
        _cleanup_json_ json_t *meta = meta_text ? json_loads(meta_text, 0, NULL) : NULL;
        const char *owner = json_get_str(meta, "session_id");
        if (owner && !streq(owner, id)) {
                fprintf(stderr,
                        "pome run collect: %s is the run directory of %s, not of %s: name "
                        "another directory\n",
                        dir, owner, id);
                return POME_EXIT_USAGE;
        }

        _cleanup_(config_done) Config config = {};
        _cleanup_(api_reply_done) ApiReply rec = {};
        _cleanup_free_ char *e = client_escape(id), *base = NULL;
        r = config_load(api_url, &config);
        if (r < 0)
                return api_exit_status(r, NULL);
        if (!e || asprintf(&base, "/v1/sandboxes/%s", e) < 0)
                return POME_EXIT_ERROR;
        r = api_call(&config, "GET", base, NULL, &rec);
        if (r < 0)
                return api_exit_status(r, &rec);
        if (json_is_null(json_object_get(rec.json, "ended_at")) ||
            !json_object_get(rec.json, "ended_at")) {
                fprintf(stderr,
                        "pome run collect: %s is still open (%s): it has no final states or "
                        "verdict yet.\n  Finalize it first: pome sandbox finalize %s\n",
                        id, strempty(json_get_str(rec.json, "state")), id);
                return POME_EXIT_ERROR;
        }
        r = mkdir_p(dir, 0755);
        if (r < 0) {
                fprintf(stderr, "pome run collect: cannot create %s: %s\n", dir, strerror(-r));
                return POME_EXIT_ERROR;
        }
        size_t i;
        json_t *tw;
        unsigned states = 0, twins = 0;
        json_array_foreach (json_object_get(rec.json, "twins"), i, tw) {
                const char *twin = json_string_value(tw);
                _cleanup_free_ char *why = NULL;
                if (!twin || !twin_kind_find(twin))
                        continue;
                twins++;
                r = collect_tape(&config, "pome run collect", id, dir, twin);
                if (r >= 0)
                        r = collect_state(&config, "pome run collect", id, dir, twin, &why);
                if (r < 0)
                        return POME_EXIT_ERROR;
                if (r == 1)
                        fprintf(stderr,
                                "pome run collect: pomed kept no final state of the %s twin: "
                                "%s\n",
                                twin, strempty(why));
                else
                        states++;
        }
        _cleanup_json_ json_t *verdict = NULL;
        _cleanup_free_ char *why = NULL;
        r = collect_verdict(&config, "pome run collect", id, dir, &verdict, &why);
        if (r < 0)
                return POME_EXIT_ERROR;
        bool summary = collect_summary(&config, "pome run collect", id, dir) == 0;
        (void)collect_reply(&config, "pome run collect", id, dir);
        r = collect_meta(dir, id, &config, rec.json, verdict);
        if (r < 0) {
                fprintf(stderr, "pome run collect: cannot write %s/meta.json: %s\n", dir,
                        strerror(-r));
                return POME_EXIT_ERROR;
        }
        printf("Collected %s into %s: %u tape%s, %u final state%s, ", id, dir, twins,
               twins == 1 ? "" : "s", states, states == 1 ? "" : "s");
        if (verdict) {
                printf("verdict.json (%s)", report_verdict_state(verdict));
        } else {
                fputs("no verdict (", stdout);
                output_fputs_clean(strempty(why), stdout);
                putchar(')');
        }
        printf("%s.\n", summary ? ", summary.md" : "");
        _cleanup_free_ char *task = read_in(dir, "task.md");
        if (task)
                printf("Regrade it offline: pome eval %s\n", dir);
        else
                printf("It holds no task.md and no seeds (the control API serves neither; pome "
                       "run --keep writes them): verdict.json is pomed's, and pome eval needs "
                       "both to regrade it.\n");
        return POME_EXIT_OK;
}

int cmd_run(int argc, char **argv)
{
        if (argc >= 2 && streq(argv[1], "show"))
                return run_show(argc - 1, argv + 1);
        if (argc >= 2 && streq(argv[1], "collect"))
                return run_collect(argc - 1, argv + 1);
        return run_command(argc, argv);
}
