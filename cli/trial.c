/* SPDX-License-Identifier: MIT */
#include "cli/trial.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>

#include "cli/api.h"
#include "cli/collect.h"
#include "cli/commands.h"
#include "cli/localtwin.h"
#include "cli/secrets.h"
#include "common/fileio.h"
#include "common/httpclient.h"
#include "common/json-util.h"
#include "common/strv.h"
#include "common/text.h"
#include "common/timeutil.h"
#include "common/token.h"
#include "common/util.h"

#define SLOT_RETRY_FIRST_USEC (500 * USEC_PER_MSEC) /* a full quota: first retry */
#define SLOT_RETRY_MAX_USEC   (3 * USEC_PER_SEC)    /* … backing off to this */
#define TASK_NAME_MAX         200                   /* bytes pomed takes as a sandbox's task */
#define LOCAL_TOKEN_TTL_SEC   (24 * 3600)
/* Another finalize (the agent's finalize_run) is grading: ask again every half second. pomed
 * ends every grading (its child is killed past 120 s and its judge's budget), so this only
 * bounds a pomed that stopped answering: 30 minutes, a sandbox's longest life. */
#define FINALIZE_RETRY_USEC (500 * USEC_PER_MSEC)
#define FINALIZE_WAITS_MAX  3600u

extern char **environ;

struct Trial {
        RunPlan *plan;
        unsigned number;
        TrialPhase phase;
        TrialOutcome outcome;
        char *sid;
        char *dir;
        json_t *created; /* the create answer (secrets), or its shape for in-process twins */
        LocalTwin *twins[3];
        size_t n_twins;
        Agent *agent;
        SealedAgent *sealed; /* the agent's pod, its network and cgroup (NULL: unsealed) */
        AgentResult agent_result;
        bool agent_exited;
        int out_fd, err_fd;      /* the agent's stdout and stderr: unlinked files, copied into the
                                  * run directory once it has exited */
        bool dir_tried;          /* write_dir ran (t->dir is set when it succeeded) */
        unsigned finalize_waits; /* finalizes answered "finalizing" (another one is grading) */
        char *reply;             /* the agent's reply as the judge is shown it (agent-reply.txt) */
        size_t reply_len;
        char *agent_tmp; /* $POME_AGENT_TMP: the agent's scratch directory, ours to remove */
        json_t *verdict;
        const char *graded_by;
        char *error;
        int exit_status;
        bool fatal;
        bool interrupted;
        bool said_waiting;
        uint64_t retry_usec;
        sd_event_source *retry, *defer;
        uint64_t started_usec, ended_usec;
        json_t *meta;
        TrialDoneFn done;
        void *userdata;
};

Trial *trial_new(RunPlan *plan, unsigned number, TrialDoneFn done, void *userdata)
{
        Trial *t = calloc(1, sizeof(*t));
        if (!t)
                return NULL;
        *t = (Trial){.plan = plan,
                     .number = number,
                     .done = done,
                     .userdata = userdata,
                     .out_fd = -1,
                     .err_fd = -1};
        return t;
}

/* Removes the agent's scratch directory, whatever it left there. */
static void remove_agent_tmp(Trial *t)
{
        if (t->agent_tmp)
                (void)rm_rf_at(AT_FDCWD, t->agent_tmp);
        free(t->agent_tmp);
        t->agent_tmp = NULL;
}

static void stop_twins(Trial *t)
{
        for (size_t i = 0; i < t->n_twins; i++)
                t->twins[i] = local_twin_free(t->twins[i]);
        t->n_twins = 0;
}

Trial *trial_free(Trial *t)
{
        if (!t)
                return NULL;
        agent_free(t->agent);
        sealed_agent_free(t->sealed);
        stop_twins(t);
        remove_agent_tmp(t);
        safe_close(t->out_fd);
        safe_close(t->err_fd);
        sd_event_source_disable_unref(t->retry);
        sd_event_source_disable_unref(t->defer);
        json_decref(t->created);
        json_decref(t->verdict);
        json_decref(t->meta);
        free(t->reply);
        free(t->sid);
        free(t->dir);
        free(t->error);
        free(t);
        return NULL;
}

TrialPhase trial_phase(const Trial *t)
{
        return t->phase;
}
TrialOutcome trial_outcome(const Trial *t)
{
        return t->outcome;
}
unsigned trial_number(const Trial *t)
{
        return t->number;
}
const char *trial_sid(const Trial *t)
{
        return t->sid;
}
const char *trial_dir(const Trial *t)
{
        return t->dir;
}
const json_t *trial_verdict(const Trial *t)
{
        return t->verdict;
}
const char *trial_graded_by(const Trial *t)
{
        return t->graded_by;
}
const char *trial_error(const Trial *t)
{
        return t->error;
}
int trial_exit_status(const Trial *t)
{
        return t->exit_status;
}
bool trial_fatal(const Trial *t)
{
        return t->fatal;
}
const AgentResult *trial_agent(const Trial *t)
{
        return t->agent_exited ? &t->agent_result : NULL;
}
const json_t *trial_meta(const Trial *t)
{
        return t->meta;
}

static void say(Trial *t, const char *fmt, ...) _printf_(2, 3);
static void say(Trial *t, const char *fmt, ...)
{
        _cleanup_free_ char *line = NULL;
        va_list ap;
        va_start(ap, fmt);
        int n = vasprintf(&line, fmt, ap);
        va_end(ap);
        if (n >= 0 && t->plan->say)
                t->plan->say(line);
}

/* ---------------------------------------------------------------- files */

/* <dir>/<name> := len bytes of data, atomically. 0 or negative errno (said). */
/* How write_json_in lays a document out. */
typedef enum JsonLayout {
        JSON_FOR_PEOPLE, /* indented, 6 significant digits: durations in seconds, not
                          * 0.29191299999999998 (meta.json) */
        JSON_EXACT,      /* indented, every digit: read back as the same document (seeds) */
        JSON_DENSE,      /* one line, every digit (final states) */
} JsonLayout;

static int write_in(Trial *t, const char *name, const void *data, size_t len)
{
        return collect_write("pome run", t->dir, name, data, len);
}

/* <dir>/<name> := j as JSON laid out as asked, and a newline. */
static int write_json_in(Trial *t, const char *name, const json_t *j, JsonLayout layout)
{
        size_t flags = layout == JSON_FOR_PEOPLE ? JSON_INDENT(2) | JSON_REAL_PRECISION(6)
                       : layout == JSON_EXACT    ? JSON_INDENT(2)
                                                 : JSON_COMPACT;
        return collect_write_json("pome run", t->dir, name, j, flags);
}

static const char *signal_name(int sig)
{
        static char buf[32];
        const char *abbrev = sig > 0 ? sigabbrev_np(sig) : NULL;
        snprintf(buf, sizeof(buf), "SIG%s", abbrev ? abbrev : "?");
        return buf;
}

static json_t *time_or_null(uint64_t usec)
{
        char buf[RFC3339_MAX];
        if (!usec)
                return json_null();
        format_rfc3339_usec((int64_t)usec, buf, sizeof(buf));
        return json_string(buf);
}

static const char *outcome_word(TrialOutcome o)
{
        switch (o) {
        case TRIAL_GRADED:
                return "graded";
        case TRIAL_KEPT:
                return "kept_open";
        case TRIAL_FAILED:
                return "failed";
        case TRIAL_INTERRUPTED:
                return "interrupted";
        case TRIAL_SHELL:
                return "shell";
        }
        return "?";
}

static json_t *meta_json(Trial *t)
{
        const RunPlan *p = t->plan;
        const GradeTask *task = p->task;
        json_t *twins = json_array(), *argv = json_array();
        for (char **tw = task->twins; twins && *tw; tw++)
                json_array_append_new(twins, json_string(*tw));
        for (char *const *a = p->agent_argv; argv && *a; a++)
                json_array_append_new(argv, json_string(*a));
        const AgentResult *ar = trial_agent(t);
        json_t *output =
                ar ? json_pack("{s:I, s:I, s:b, s:b, s:I}", "stdout_bytes",
                               (json_int_t)ar->stdout_bytes, "stderr_bytes",
                               (json_int_t)ar->stderr_bytes, "stdout_cut", ar->stdout_cut,
                               "stderr_cut", ar->stderr_cut, "max_bytes", (json_int_t)p->output_max)
                   : json_null();
        json_t *seal =
                t->sealed ? sealed_agent_report(t->sealed) : json_pack("{s:b}", "sealed", false);
        json_t *agent = json_pack(
                "{s:o, s:o, s:o, s:o, s:o, s:b, s:b, s:I, s:I, s:o, s:o, s:o}", "argv", argv,
                "started_at", time_or_null(ar ? ar->started_usec : 0), "ended_at",
                time_or_null(ar ? ar->ended_usec : 0), "exit_code",
                ar && ar->signal == 0 ? json_integer(ar->exit_code) : json_null(), "signal",
                ar && ar->signal ? json_string(signal_name(ar->signal)) : json_null(), "timed_out",
                ar && ar->timed_out, "killed", ar && ar->killed, "timeout_seconds",
                (json_int_t)task->timeout_sec, "kill_grace_seconds",
                (json_int_t)TRIAL_KILL_GRACE_SEC, "duration_seconds",
                ar ? json_real((double)ar->duration_usec / 1e6) : json_null(), "output", output,
                "seal", seal);
        json_t *verdict = t->verdict ? json_pack("{s:O?, s:O?, s:O?, s:O?}", "state",
                                                 json_object_get(t->verdict, "state"), "passed",
                                                 json_object_get(t->verdict, "passed"), "score",
                                                 json_object_get(t->verdict, "score"), "counts",
                                                 json_object_get(t->verdict, "counts"))
                                     : json_null();
        return json_pack(
                "{s:i, s:s, s:s, s:{s:s, s:s, s:o, s:I}, s:s?, s:I, s:I, s:s?, s:s?, s:o, s:o, "
                "s:o, s:s, s:s?, s:s?, s:o}",
                "version", 1, "pome_version", POME_VERSION, "mode", p->config ? "sandbox" : "local",
                "task", "path", p->task_path, "title", task->title, "twins", twins,
                "timeout_seconds", (json_int_t)task->timeout_sec, "session_id", t->sid, "trial",
                (json_int_t)t->number, "trials", (json_int_t)p->n_trials, "run_dir", t->dir,
                "api_url", p->config ? p->config->api_url : NULL, "started_at",
                time_or_null(t->started_usec), "ended_at", time_or_null(t->ended_usec), "agent",
                agent, "outcome", outcome_word(t->outcome), "error", t->error, "graded_by",
                t->graded_by, "verdict", verdict);
}

static int on_defer(sd_event_source *s _unused_, void *userdata)
{
        Trial *t = userdata;
        t->defer = sd_event_source_disable_unref(t->defer);
        t->done(t, t->userdata);
        return 0;
}

static int write_dir(Trial *t);

/* The trial is over: the run directory (once a sandbox existed) with meta.json, then done
 * from the loop. */
static int finish(Trial *t, TrialOutcome outcome)
{
        t->outcome = outcome;
        t->phase = TRIAL_DONE;
        t->ended_usec = now_usec(CLOCK_REALTIME);
        t->retry = sd_event_source_disable_unref(t->retry);
        stop_twins(t);
        remove_agent_tmp(t);
        if (t->sid && !t->dir && outcome != TRIAL_SHELL)
                (void)write_dir(t);
        json_decref(t->meta);
        t->meta = meta_json(t);
        if (t->dir && t->meta)
                (void)write_json_in(t, "meta.json", t->meta, JSON_FOR_PEOPLE);
        if (sd_event_add_defer(t->plan->event, &t->defer, on_defer, t) < 0)
                t->done(t, t->userdata);
        return 0;
}

static int fail(Trial *t, int exit_status, bool fatal, const char *fmt, ...) _printf_(4, 5);
static int fail(Trial *t, int exit_status, bool fatal, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        free(t->error);
        if (vasprintf(&t->error, fmt, ap) < 0)
                t->error = NULL;
        va_end(ap);
        t->exit_status = exit_status;
        t->fatal = fatal;
        /* errors are said whatever --quiet says */
        fprintf(stderr, "pome run: trial %u: %s\n", t->number, t->error ? t->error : "failed");
        return finish(t, TRIAL_FAILED);
}

/* <dir>/<name> := what the unlinked file fd holds. 0 or negative errno (said). */
static int copy_out(Trial *t, const char *name, int fd)
{
        _cleanup_free_ char *path = NULL;
        if (fd < 0)
                return 0;
        if (asprintf(&path, "%s/%s", t->dir, name) < 0)
                return -ENOMEM;
        _cleanup_close_ int dst =
                open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        int r = dst < 0 ? negative_errno() : 0;
        off_t off = 0;
        while (r >= 0) {
                ssize_t k = sendfile(dst, fd, &off, 1u << 30);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        r = negative_errno();
                if (k <= 0)
                        break;
        }
        if (r < 0)
                fprintf(stderr, "pome run: cannot write %s: %s\n", path, strerror(-r));
        return r;
}

/*
 * The agent's reply as the judge is shown it (GRADE_AGENT_REPLY_FILE): the last
 * GRADE_AGENT_REPLY_KEEP bytes of its stdout, from a character on, mended to UTF-8 — the same
 * bytes pomed is sent with the finalize and that `pome eval` reads back. 0 or -errno.
 */
static int read_reply(Trial *t)
{
        struct stat st;
        if (t->reply || t->out_fd < 0)
                return 0;
        if (fstat(t->out_fd, &st) < 0)
                return negative_errno();
        size_t size = (size_t)st.st_size,
               n = size < GRADE_AGENT_REPLY_KEEP ? size : GRADE_AGENT_REPLY_KEEP;
        _cleanup_free_ char *raw = malloc(n + 1);
        if (!raw)
                return -ENOMEM;
        ssize_t k = pread(t->out_fd, raw, n, (off_t)(size - n));
        if (k < 0)
                return negative_errno();
        size_t from = 0;
        if (size > n) /* cut: start where a character does */
                while (from < (size_t)k && ((unsigned char)raw[from] & 0xc0) == 0x80)
                        from++;
        return utf8_mend(raw + from, (size_t)k - from, &t->reply, &t->reply_len);
}

/*
 * The run directory, <out>/<id>/, made only now that the agent has exited — so nothing an
 * agent could rewrite exists while it runs — and made afresh: one that already exists was
 * made by something else meanwhile (the agent knows its sandbox id) and is not written into.
 * Then the task and the seeds from what pome holds (the bytes it parsed before the agent
 * started, the seeds it sent or booted from) and the agent's output. 0 or -errno (said).
 */
static int write_dir(Trial *t)
{
        const RunPlan *p = t->plan;
        if (t->dir)
                return 0;
        if (t->dir_tried)
                return -EEXIST; /* said the first time */
        t->dir_tried = true;
        _cleanup_free_ char *dir = NULL;
        if (asprintf(&dir, "%s/%s", p->out_dir, t->sid) < 0)
                return -ENOMEM;
        if (mkdir(dir, 0755) < 0) {
                int r = negative_errno();
                if (r == -EEXIST)
                        fprintf(stderr,
                                "pome run: %s already exists: something other than pome made "
                                "it while the agent ran, so pome writes nothing there\n",
                                dir);
                else
                        fprintf(stderr, "pome run: cannot create %s: %s\n", dir, strerror(-r));
                return r;
        }
        t->dir = TAKE_PTR(dir);
        int r = write_in(t, "task.md", p->task_text, p->task_len);
        if (r >= 0 && p->sidecar_text)
                r = write_in(t, "task.seed.json", p->sidecar_text, p->sidecar_len);
        for (char **tw = p->task->twins; r >= 0 && *tw; tw++) {
                const json_t *seed = json_object_get(p->seeds, *tw);
                char name[64];
                if (!seed)
                        continue;
                snprintf(name, sizeof(name), "%s.seed.json", *tw);
                r = write_json_in(t, name, seed, JSON_EXACT);
        }
        if (r >= 0)
                r = copy_out(t, "stdout.txt", t->out_fd);
        if (r >= 0)
                r = copy_out(t, "stderr.txt", t->err_fd);
        /* the judge's view of the reply, before the output's file goes */
        int q = read_reply(t);
        if (q < 0)
                say(t,
                    "trial %u: the agent's output cannot be read (%s): the judge is not shown "
                    "its reply",
                    t->number, strerror(-q));
        t->out_fd = safe_close(t->out_fd);
        t->err_fd = safe_close(t->err_fd);
        return r;
}

/* ---------------------------------------------------------------- the control API */

static char *sandbox_path(const char *sid, const char *suffix)
{
        _cleanup_free_ char *e = client_escape(sid);
        char *p;
        if (!e || asprintf(&p, "/v1/sandboxes/%s%s", e, suffix) < 0)
                return NULL;
        return p;
}

/* Stops the sandbox, confirming the discard pomed asks for. Errors are said, not returned. */
static void discard(Trial *t)
{
        _cleanup_(api_reply_done) ApiReply reply = {}, again = {};
        _cleanup_free_ char *path = sandbox_path(t->sid, ""), *token = NULL, *confirm = NULL;
        if (!path)
                return;
        int r = api_call(t->plan->config, "DELETE", path, NULL, &reply);
        if (r == -EREMOTEIO && reply.status == 409) {
                const char *dt = json_get_str(reply.error_details, "discard_token");
                token = dt ? client_escape(dt) : NULL;
                if (!token || asprintf(&confirm, "%s?confirm_discard=%s", path, token) < 0) {
                        confirm = NULL;
                        return;
                }
                r = api_call(t->plan->config, "DELETE", confirm, NULL, &again);
                if (r < 0)
                        (void)api_exit_status(r, &again);
                return;
        }
        if (r < 0)
                (void)api_exit_status(r, &reply);
}

/* <twin>.tape.jsonl from GET /events. 0 or -errno (said). */
static int fetch_tape(Trial *t, const char *twin)
{
        return collect_tape(t->plan->config, "pome run", t->sid, t->dir, twin);
}

/* <twin>.final.json from GET /state?twin=. 0, 1 when pomed kept none, -errno (said). */
static int fetch_state(Trial *t, const char *twin)
{
        _cleanup_free_ char *why = NULL;
        int r = collect_state(t->plan->config, "pome run", t->sid, t->dir, twin, &why);
        if (r == 1)
                say(t, "trial %u: pomed kept no final state of the %s twin: %s", t->number, twin,
                    strempty(why));
        return r;
}

/* The graded verdict from pomed (verdict.json in grade_verdict_render's bytes) and its
 * summary.md. A run pomed could not grade has none: said, never made up here (pomed's record
 * says why; `pome eval` of the run directory regrades it offline). 0 or -errno (said). */
static int fetch_verdict(Trial *t)
{
        _cleanup_free_ char *why = NULL;
        int r = collect_verdict(t->plan->config, "pome run", t->sid, t->dir, &t->verdict, &why);
        if (r < 0)
                return r;
        if (r > 0) {
                free(t->error);
                if (asprintf(&t->error,
                             "pomed did not grade the run: %s (pome eval %s regrades it)",
                             strempty(why), t->dir) < 0)
                        t->error = NULL;
                return -ENODATA;
        }
        t->graded_by = "pomed";
        (void)collect_summary(t->plan->config, "pome run", t->sid, t->dir);
        return 0;
}

static int fetch_tapes(Trial *t)
{
        for (char **tw = t->plan->task->twins; *tw; tw++) {
                int r = fetch_tape(t, *tw);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The finalize's body: the agent's reply for the judge, --code-only, and whether the agent ran
 * sealed (the verdict records it). NULL on OOM. */
static json_t *finalize_body(Trial *t)
{
        _cleanup_json_ json_t *body = json_object();
        if (!body)
                return NULL;
        if (t->reply &&
            json_object_set_new(body, "agent_reply", json_stringn(t->reply, t->reply_len)) < 0)
                return NULL;
        if (t->plan->code_only && json_object_set_new(body, "code_only", json_true()) < 0)
                return NULL;
        if (json_object_set_new(body, "agent_sealed", json_boolean(t->sealed != NULL)) < 0)
                return NULL;
        return TAKE_PTR(body);
}

static int finalize_sandbox(Trial *t);

static int on_finalize_retry(sd_event_source *s _unused_, uint64_t usec _unused_, void *userdata)
{
        Trial *t = userdata;
        t->retry = sd_event_source_disable_unref(t->retry);
        (void)finalize_sandbox(t);
        return 0;
}

static int finalize_sandbox(Trial *t)
{
        _cleanup_(api_reply_done) ApiReply reply = {};
        _cleanup_free_ char *p = sandbox_path(t->sid, "/finalize");
        if (!p)
                return fail(t, POME_EXIT_ERROR, false, "out of memory");
        (void)read_reply(t); /* when the run directory could not be written */
        _cleanup_json_ json_t *body = finalize_body(t);
        if (!body)
                return fail(t, POME_EXIT_ERROR, false, "out of memory");
        int r = api_call(t->plan->config, "POST", p, body, &reply);
        if (r == -EREMOTEIO && reply.status == 409 &&
            streq_ptr(json_get_str(reply.error_details, "reason"), "finalizing")) {
                /* the agent's own finalize_run is grading it: ask again shortly */
                r = sd_event_add_time_relative(t->plan->event, &t->retry, CLOCK_MONOTONIC,
                                               FINALIZE_RETRY_USEC, 0, on_finalize_retry, t);
                if (r >= 0 && ++t->finalize_waits <= FINALIZE_WAITS_MAX)
                        return 0;
                return fail(t, POME_EXIT_ERROR, false,
                            "the sandbox is being finalized by someone else and did not finish");
        }
        if (r == -EREMOTEIO && reply.status == 409 &&
            streq_ptr(json_get_str(reply.error_details, "state"), "done")) {
                /* the agent finalized its own run (finalize_run): graded already, with the
                 * reply it gave then, if any */
                r = 0;
                say(t, "trial %u: the agent finalized the sandbox itself; collecting its verdict",
                    t->number);
        }
        if (r < 0) {
                int code = api_exit_status(r, &reply);
                /* what it did is still worth keeping: an ended sandbox's tapes stay readable */
                if (t->dir)
                        (void)fetch_tapes(t);
                return fail(t, code, false, "the sandbox could not be finalized%s%s",
                            reply.error_message ? ": " : "", strempty(reply.error_message));
        }
        if (!t->dir)
                return fail(t, POME_EXIT_ERROR, false,
                            "the sandbox was finalized and graded by pomed, but the run "
                            "directory could not be written (pome run show %s shows the "
                            "verdict)",
                            t->sid);
        r = fetch_tapes(t);
        for (char **tw = t->plan->task->twins; r >= 0 && *tw; tw++)
                r = fetch_state(t, *tw);
        /* the reply pomed's judge was shown, as pomed holds it (ours, or the one the agent
         * gave its own finalize_run): `pome eval` of the directory asks the same question */
        if (r >= 0 && collect_reply(t->plan->config, "pome run", t->sid, t->dir) < 0)
                r = -EIO;
        if (r >= 0)
                r = fetch_verdict(t);
        if (r == -ENODATA)
                return fail(t, POME_EXIT_ERROR, false, "%s", t->error);
        if (r < 0)
                return fail(t, POME_EXIT_ERROR, false,
                            "the run directory could not be collected from pomed");
        return finish(t, TRIAL_GRADED);
}

/* ---------------------------------------------------------------- in-process twins */

/* <dir>/<twin>.tape.jsonl := rows, one compact line each, as the tape file got them. */
static int write_tape(Trial *t, const char *twin, const json_t *rows)
{
        _cleanup_free_ char *path = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        if (asprintf(&path, "%s/%s.tape.jsonl", t->dir, twin) < 0)
                return -ENOMEM;
        f = fopen(path, "wxe");
        int r = f ? 0 : negative_errno();
        size_t i;
        json_t *row;
        json_array_foreach (rows, i, row)
                if (r >= 0 && (json_dumpf(row, f, JSON_COMPACT | JSON_ENCODE_ANY) < 0 ||
                               fputc('\n', f) == EOF))
                        r = -EIO;
        if (r >= 0 && (fflush(f) != 0 || ferror(f)))
                r = -EIO;
        if (r < 0)
                fprintf(stderr, "pome run: cannot write %s: %s\n", path, strerror(-r));
        return r;
}

/* summary.md of a --local run directory, as pomed's finalize writes it
 * (grade_summary_run_dir). */
static void write_summary(Trial *t)
{
        _cleanup_free_ char *text = NULL;
        size_t len;
        GradeError e = {};
        int r = grade_summary_run_dir(t->dir, &text, &len, &e);
        if (r < 0)
                say(t, "trial %u: no summary.md: %s", t->number,
                    r == -ENOMEM ? "out of memory" : e.message);
        else
                (void)write_in(t, "summary.md", text, len);
}

/*
 * Grades a --local run from what pome holds itself, never from files the agent could have
 * reached: the task parsed before the agent started (as the run directory's task.md parses,
 * so `pome eval` of the directory reproduces the bytes), the seeds pome booted the twins
 * from, their worlds exported from memory and the tape rows as the twins recorded them.
 * Then the run directory is written from the same documents.
 */
static int grade_local(Trial *t)
{
        const RunPlan *p = t->plan;
        GradeTwinRun runs[ELEMENTSOF(t->twins)] = {};
        json_t *finals[ELEMENTSOF(t->twins)] = {}, *rows[ELEMENTSOF(t->twins)] = {};
        _cleanup_free_ char *bytes = NULL;
        size_t n = t->n_twins, len;
        GradeError e = {};
        int r = 0;
        for (size_t i = 0; i < n && r >= 0; i++) {
                const char *twin = local_twin_kind(t->twins[i])->name;
                r = local_twin_export(t->twins[i], t->sid, &finals[i]);
                if (r < 0) {
                        (void)fail(t, POME_EXIT_ERROR, false,
                                   "the %s twin could not export its world: %s", twin,
                                   strerror(-r));
                        break;
                }
                /* the export may add rows (what came due): the rows are read after it */
                rows[i] = json_deep_copy(local_twin_rows(t->twins[i]));
                runs[i] = (GradeTwinRun){.twin = twin,
                                         .seed = json_object_get(p->seeds, twin),
                                         .final = finals[i],
                                         .tape = rows[i]};
                if (!rows[i])
                        r = -ENOMEM;
        }
        /* nothing can call them any more: what was exported and kept is the run */
        stop_twins(t);
        _cleanup_json_ json_t *verdict = NULL;
        if (r >= 0 && (r = read_reply(t)) < 0)
                (void)fail(t, POME_EXIT_ERROR, false, "cannot read the agent's output: %s",
                           strerror(-r));
        GradeOptions opts = {.judge = p->judge,
                             .code_only = p->code_only,
                             .agent_reply = t->reply,
                             .agent_reply_len = t->reply_len,
                             .agent_seal = t->sealed ? GRADE_SEAL_SEALED : GRADE_SEAL_UNSEALED};
        if (r >= 0 && (r = grade_run(p->grade_task, runs, n, &opts, &verdict, &e)) >= 0)
                r = grade_verdict_render(verdict, &bytes, &len);
        if (r < 0 && t->phase != TRIAL_DONE)
                (void)fail(t, POME_EXIT_ERROR, false, "cannot grade the run: %s",
                           r == -ENOMEM ? "out of memory" : e.message);
        if (r >= 0 && write_dir(t) < 0) {
                r = -EIO;
                (void)fail(t, POME_EXIT_ERROR, false, "cannot write the run directory");
        }
        for (size_t i = 0; i < n && r >= 0; i++) {
                char name[64];
                snprintf(name, sizeof(name), "%s.final.json", runs[i].twin);
                if (write_tape(t, runs[i].twin, rows[i]) < 0 ||
                    write_json_in(t, name, finals[i], JSON_DENSE) < 0) {
                        r = -EIO;
                        (void)fail(t, POME_EXIT_ERROR, false, "cannot write the run directory");
                }
        }
        if (r >= 0 && t->reply && write_in(t, GRADE_AGENT_REPLY_FILE, t->reply, t->reply_len) < 0) {
                r = -EIO;
                (void)fail(t, POME_EXIT_ERROR, false, "cannot write the run directory");
        }
        if (r >= 0 && write_in(t, "verdict.json", bytes, len) < 0) {
                r = -EIO;
                (void)fail(t, POME_EXIT_ERROR, false, "cannot write verdict.json");
        }
        for (size_t i = 0; i < n; i++) {
                json_decref(finals[i]);
                json_decref(rows[i]);
        }
        if (r < 0)
                return 0; /* failed, and said so */
        t->verdict = json_loadb(bytes, len, 0, NULL);
        if (!t->verdict)
                return fail(t, POME_EXIT_ERROR, false, "out of memory");
        t->graded_by = "pome";
        write_summary(t);
        return finish(t, TRIAL_GRADED);
}

/*
 * The twins of the task in-process, each on its own loopback port with its tape in the run
 * directory, and the create answer's shape for them (what secrets_vars_from_sandbox reads).
 */
static int start_twins(Trial *t)
{
        const RunPlan *p = t->plan;
        _cleanup_json_ json_t *twins = json_array(), *per = json_object(), *creds = json_object();
        _cleanup_free_ char *session = NULL;
        int64_t exp = now_sec() + LOCAL_TOKEN_TTL_SEC;
        if (!twins || !per || !creds)
                return -ENOMEM;
        int r = token_mint_session(p->local_key, p->local_key_len, t->sid, "local", exp, NULL, NULL,
                                   &session);
        if (r < 0)
                return r;
        for (char **tw = p->task->twins; *tw && t->n_twins < ELEMENTSOF(t->twins); tw++) {
                char err[300] = "";
                const TwinKind *k = twin_kind_find(*tw);
                const json_t *seed = json_object_get(p->seeds, *tw);
                if (!k)
                        return -EINVAL;
                if (!seed) {
                        fprintf(stderr, "pome run: no seed for the %s twin (see above)\n", *tw);
                        return -ENOENT;
                }
                /* the tape file is unlinked and the rows graded are kept in memory; the admin
                 * routes (reset, reseed: they rewrite the world and the tape) want a token the
                 * agent is never given */
                LocalTwinConfig cfg = {.kind = k,
                                       .seed = seed,
                                       .secret = (const char *)p->local_key,
                                       .secret_len = p->local_key_len,
                                       .admin_token = p->local_admin_token,
                                       .host = "127.0.0.1",
                                       .port = 0,
                                       .keep_rows = true};
                r = local_twin_new(p->event, &cfg, &t->twins[t->n_twins], err, sizeof(err));
                if (r < 0) {
                        fprintf(stderr, "pome run: the %s twin cannot start: %s\n", *tw,
                                err[0] ? err : strerror(-r));
                        return r;
                }
                LocalTwin *lt = t->twins[t->n_twins++];
                _cleanup_json_ json_t *minted = local_twin_mint(lt, t->sid);
                const char *rest = json_get_str(minted, "rest_url");
                _cleanup_free_ char *mcp = NULL;
                if (!rest || asprintf(&mcp, "%s/mcp", rest) < 0)
                        return -ENOMEM;
                json_t *c = json_incref(json_object_get(minted, "provider_credentials"));
                if (json_array_append_new(twins, json_string(*tw)) < 0 ||
                    json_object_set_new(per, *tw,
                                        json_pack("{s:s, s:s}", "rest_url", rest, "mcp_url", mcp)) <
                            0 ||
                    (c && json_object_set_new(creds, *tw, c) < 0))
                        return -ENOMEM;
        }
        t->created =
                json_pack("{s:s, s:s, s:O, s:O, s:O}", "session_id", t->sid, "session_token",
                          session, "twins", twins, "per_twin", per, "provider_credentials", creds);
        explicit_bzero(session, strlen(session));
        return t->created ? 0 : -ENOMEM;
}

/* ---------------------------------------------------------------- the agent */

/* Inherited variables the run sets itself (a sourced secrets file of another sandbox must not
 * leak into this one), and the team key, which is not the agent's to hold, nor where to find
 * it or the control API (POME_STATE_DIR, POME_API_URL: an agent needs only its twins). */
static bool env_replaced(const char *kv)
{
        static const char *const names[] = {
                "POME_API_KEY=",    "POME_AUTH_TOKEN=", "POME_SESSION_ID=", "POME_TWIN_URL=",
                "POME_TWIN_NAMES=", "POME_TASK=",       "POME_RUN_DIR=",    "POME_TRIAL=",
                "POME_AGENT_TMP=",  "POME_STATE_DIR=",  "POME_API_URL=",
        };
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (startswith(kv, names[i]))
                        return true;
        for (const char *const *k = twin_kind_names(); *k; k++) {
                char prefix[64];
                snprintf(prefix, sizeof(prefix), "POME_%s_", *k);
                for (char *c = prefix; *c; c++)
                        *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
                if (startswith(kv, prefix))
                        return true;
        }
        return false;
}

static char **agent_env(Trial *t)
{
        _cleanup_(secrets_vars_done) SandboxVars vars = {};
        _cleanup_strv_free_ char **env = strv_new();
        if (!env || secrets_vars_from_sandbox(t->created, &vars) < 0)
                return NULL;
        for (char **e = environ; e && *e; e++)
                if (!env_replaced(*e) && strv_extend(&env, *e) < 0)
                        return NULL;
        for (size_t i = 0; i < vars.n; i++)
                if (strv_extendf(&env, "%s=%s", vars.vars[i].name, vars.vars[i].value) < 0)
                        return NULL;
        /* the prompt, and nothing of how it is graded: no run directory (nothing is written
         * there until the agent has exited), only a scratch directory of its own */
        if (strv_extendf(&env, "POME_TASK=%s", t->plan->task->prompt) < 0 ||
            (t->agent_tmp && strv_extendf(&env, "POME_AGENT_TMP=%s", t->agent_tmp) < 0) ||
            strv_extendf(&env, "POME_TRIAL=%u", t->number) < 0)
                return NULL;
        return TAKE_PTR(env);
}

static void wipe_env(char **env)
{
        for (char **e = env; e && *e; e++)
                explicit_bzero(*e, strlen(*e));
        strv_free(env);
}

static int agent_done(Trial *t, const AgentResult *res)
{
        t->agent_result = *res;
        t->agent_exited = true;
        t->agent = agent_free(t->agent);
        t->phase = TRIAL_GRADING;
        sealed_agent_end(t->sealed);
        remove_agent_tmp(t);
        if (t->interrupted || t->plan->shell_tty >= 0) {
                /* a shell's sandbox was for looking at: it goes ungraded, as an interrupted
                 * trial's does */
                if (t->plan->config)
                        discard(t);
                return finish(t, t->interrupted ? TRIAL_INTERRUPTED : TRIAL_SHELL);
        }
        if (!t->plan->config)
                return grade_local(t);
        if (write_dir(t) < 0 && !t->plan->keep)
                /* the sandbox still ends: finalized, pomed keeps the run and its verdict */
                return finalize_sandbox(t);
        if (t->plan->keep) {
                if (!t->dir)
                        return fail(t, POME_EXIT_ERROR, false,
                                    "the run directory could not be written; the sandbox is "
                                    "open");
                if (fetch_tapes(t) < 0)
                        return fail(t, POME_EXIT_ERROR, false, "cannot read the tapes");
                return finish(t, TRIAL_KEPT);
        }
        return finalize_sandbox(t);
}

static void on_agent_done(Agent *a _unused_, const AgentResult *res, void *userdata)
{
        (void)agent_done(userdata, res);
}

/* The temporary directory: $TMPDIR, else /tmp. */
static const char *tmp_dir(void)
{
        const char *d = getenv("TMPDIR");
        return d && *d == '/' ? d : "/tmp";
}

/* An unlinked file for the agent's stdout or stderr: it names no directory of the run. */
static int capture_fd(void)
{
        /* O_APPEND: an unsealed agent that truncates it through /proc/<pome>/fd leaves no hole
         * before what pome writes next */
        int fd = open(tmp_dir(), O_TMPFILE | O_RDWR | O_APPEND | O_CLOEXEC, 0600);
        if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != ENOENT))
                return fd >= 0 ? fd : negative_errno();
        /* no O_TMPFILE there: a file of our own, unlinked at once */
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/pome-agent-out.XXXXXX", tmp_dir());
        fd = mkostemp(path, O_APPEND | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        (void)unlink(path);
        return fd;
}

/* The agent's scratch directory ($POME_AGENT_TMP): new, empty, 0700. 0 or -errno. */
static int make_agent_tmp(Trial *t)
{
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, "%s/pome-agent.XXXXXX", tmp_dir()) < 0)
                return -ENOMEM;
        if (!mkdtemp(path))
                return negative_errno();
        t->agent_tmp = TAKE_PTR(path);
        return 0;
}

/* Cannot start the agent: the sandbox goes, and so does every other trial (the same would
 * happen to it). */
static int agent_failed(Trial *t, int exit_status, const char *what, int r)
{
        if (t->plan->config)
                discard(t);
        return fail(t, exit_status, true, "%s%s%s", what, r ? ": " : "", r ? strerror(-r) : "");
}

static int start_agent(Trial *t)
{
        const RunPlan *p = t->plan;
        char err[512] = "";
        /* sealed, $POME_AGENT_TMP is made in the pod (AGENT_POD_SCRATCH) */
        int r = p->seal ? 0 : make_agent_tmp(t);
        if (r >= 0 && (t->out_fd = capture_fd()) < 0)
                r = t->out_fd;
        if (r >= 0 && (t->err_fd = capture_fd()) < 0)
                r = t->err_fd;
        if (r < 0)
                return agent_failed(t, POME_EXIT_ERROR, "cannot hold the agent's output", r);
        char **env = agent_env(t);
        if (!env)
                return agent_failed(t, POME_EXIT_ERROR, "out of memory", 0);
        if (p->seal && (r = sealed_agent_new(p->seal, t->number, p->cwd, &env, &t->sealed, err,
                                             sizeof(err))) < 0) {
                wipe_env(env);
                return agent_failed(t, POME_EXIT_ERROR, r == -ENOMEM ? "out of memory" : err, 0);
        }
        AgentSpec spec = {.argv = p->agent_argv,
                          .envp = env,
                          .prompt = p->task->prompt,
                          .stdout_fd = p->shell_tty >= 0 ? p->shell_tty : t->out_fd,
                          .stderr_fd = t->err_fd,
                          .output_max = p->output_max,
                          .cwd = p->cwd,
                          .timeout_usec = p->shell_tty >= 0
                                                  ? 0
                                                  : (uint64_t)p->task->timeout_sec * USEC_PER_SEC,
                          .tty = p->shell_tty >= 0,
                          .grace_usec = (uint64_t)TRIAL_KILL_GRACE_SEC * USEC_PER_SEC,
                          .pod = t->sealed ? sealed_agent_pod(t->sealed) : NULL,
                          .listen_fds = t->sealed ? sealed_agent_listen_fds(t->sealed) : NULL};
        r = agent_start(p->event, &spec, on_agent_done, t, &t->agent, err, sizeof(err));
        wipe_env(env);
        if (r < 0)
                /* the command line named something that cannot run: every trial would fail */
                return agent_failed(
                        t, r == -ENOENT || r == -EACCES ? POME_EXIT_USAGE : POME_EXIT_ERROR, err,
                        0);
        t->phase = TRIAL_AGENT;
        if (t->sealed && (r = sealed_agent_serve(t->sealed, p->event, err, sizeof(err))) < 0) {
                /* no way to the twins: the agent could only fail */
                agent_terminate(t->agent, true);
                say(t, "trial %u: the agent's network cannot be served: %s", t->number,
                    r == -ENOMEM ? "out of memory" : err);
        }
        return 0;
}

/* ---------------------------------------------------------------- starting */

static int create_sandbox(Trial *t);

static int on_retry(sd_event_source *s _unused_, uint64_t usec _unused_, void *userdata)
{
        Trial *t = userdata;
        t->retry = sd_event_source_disable_unref(t->retry);
        (void)create_sandbox(t);
        return 0;
}

/* Cuts a task's title to what pomed takes as a sandbox's task, on a UTF-8 boundary. */
static char *task_name(const char *title)
{
        size_t n = strlen(title);
        if (n <= TASK_NAME_MAX)
                return strdup(n ? title : "task");
        n = TASK_NAME_MAX;
        while (n > 0 && ((unsigned char)title[n] & 0xc0) == 0x80)
                n--;
        return strndup(title, n);
}

static json_t *create_body(const Trial *t)
{
        const RunPlan *p = t->plan;
        _cleanup_free_ char *name = task_name(p->task->title);
        _cleanup_json_ json_t *twins = json_array(), *seeds = json_object();
        if (!name || !twins || !seeds)
                return NULL;
        for (char **tw = p->task->twins; *tw; tw++) {
                json_t *seed = json_object_get(p->seeds, *tw);
                if (json_array_append_new(twins, json_string(*tw)) < 0 ||
                    (seed && json_object_set(seeds, *tw, seed) < 0))
                        return NULL;
        }
        return json_pack("{s:O, s:O, s:s, s:s%}", "twins", twins, "seeds", seeds, "task", name,
                         "task_markdown", p->task_text, p->task_len);
}

static int create_sandbox(Trial *t)
{
        RunPlan *p = t->plan;
        _cleanup_(api_reply_done) ApiReply reply = {};
        _cleanup_json_ json_t *body = create_body(t);
        if (!body)
                return fail(t, POME_EXIT_ERROR, true, "out of memory");
        int r = api_call(p->config, "POST", "/v1/sandboxes", body, &reply);
        if (r == -EREMOTEIO && reply.status == 402 &&
            streq_ptr(reply.error_type, "quota_exceeded")) {
                /* a slot frees when any of the team's sandboxes ends: wait for it, never fail */
                if (!t->said_waiting && p->announce)
                        say(t,
                            "trial %u: the team's quota is full (%" JSON_INTEGER_FORMAT
                            " of %" JSON_INTEGER_FORMAT " sandboxes open); waiting for a slot",
                            t->number,
                            json_integer_value(
                                    json_object_get(reply.error_details, "sessions_used")),
                            json_integer_value(
                                    json_object_get(reply.error_details, "sessions_quota")));
                t->said_waiting = true;
                t->phase = TRIAL_WAITING_SLOT;
                t->retry_usec = t->retry_usec ? t->retry_usec * 2 : SLOT_RETRY_FIRST_USEC;
                if (t->retry_usec > SLOT_RETRY_MAX_USEC)
                        t->retry_usec = SLOT_RETRY_MAX_USEC;
                r = sd_event_add_time_relative(p->event, &t->retry, CLOCK_MONOTONIC, t->retry_usec,
                                               0, on_retry, t);
                if (r < 0)
                        return fail(t, POME_EXIT_ERROR, true, "cannot arm a timer: %s",
                                    strerror(-r));
                return 0;
        }
        if (r < 0) {
                int code = api_exit_status(r, &reply);
                /* pomed's 422 for a task names task.md:LINE: the caller's to fix */
                if (reply.status == 422)
                        code = POME_EXIT_USAGE;
                return fail(t, code, true, "cannot create the sandbox%s%s",
                            reply.error_message ? ": " : "", strempty(reply.error_message));
        }
        const char *sid = json_get_str(reply.json, "session_id");
        t->created = json_incref(reply.json);
        t->sid = sid ? strdup(sid) : NULL;
        t->phase = TRIAL_AGENT;
        if (!t->sid)
                return fail(t, POME_EXIT_ERROR, true, "pomed's answer to create has no session_id");
        if (t->said_waiting && p->announce)
                say(t, "trial %u: got a slot: %s", t->number, t->sid);
        return start_agent(t);
}

static int start(Trial *t)
{
        t->started_usec = now_usec(CLOCK_REALTIME);
        if (t->plan->config)
                return create_sandbox(t);
        if (token_random_id("ses_", 16, &t->sid) < 0)
                return fail(t, POME_EXIT_ERROR, true, "out of memory");
        t->phase = TRIAL_AGENT;
        int r = start_twins(t);
        if (r < 0)
                return fail(t, POME_EXIT_ERROR, true, "the twins could not start: %s",
                            strerror(-r));
        return start_agent(t);
}

void trial_start(Trial *t)
{
        (void)start(t);
}

void trial_interrupt(Trial *t, bool now)
{
        t->interrupted = true;
        switch (t->phase) {
        case TRIAL_PENDING:
        case TRIAL_WAITING_SLOT:
                (void)finish(t, TRIAL_INTERRUPTED);
                return;
        case TRIAL_AGENT:
                agent_terminate(t->agent, now);
                return;
        case TRIAL_GRADING:
        case TRIAL_DONE:
                return;
        }
}

void trial_progress(Trial *t, char *buf, size_t len)
{
        size_t at = 0;
        buf[0] = 0;
        if (t->phase != TRIAL_AGENT)
                return;
        for (size_t i = 0; i < t->n_twins; i++)
                at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%s%s %zu", i ? ", " : "",
                                       local_twin_kind(t->twins[i])->name,
                                       local_twin_tape_rows(t->twins[i]));
        if (!t->plan->config || !t->sid)
                return;
        size_t i = 0;
        for (char **tw = t->plan->task->twins; *tw && at < len; tw++, i++) {
                _cleanup_(api_reply_done) ApiReply reply = {};
                _cleanup_free_ char *q = NULL, *p = NULL, *total = NULL;
                if (asprintf(&q, "/events?twin=%s&limit=1", *tw) < 0 ||
                    !(p = sandbox_path(t->sid, q)))
                        return;
                if (api_request(t->plan->config, "GET", p, NULL, API_ANY_BODY | API_QUIET, &reply) <
                    0)
                        return;
                total = client_header_value(reply.headers, "X-Pome-Total-Events");
                at += (size_t)snprintf(buf + at, len - at, "%s%s %s", i ? ", " : "", *tw,
                                       total ? total : "?");
        }
}
