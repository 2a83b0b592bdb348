/* SPDX-License-Identifier: MIT */
/*
 * `pome eval RUN_DIR`: regrades a saved run offline with the grading library pomed's finalize
 * uses (grade_run_dir), so the same run directory gives the same verdict.json bytes here as
 * there (DESIGN.md "Grading is a library too"), and says whether it did.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/judging.h"
#include "cli/output.h"
#include "cli/report.h"
#include "common/fileio.h"
#include "common/json-util.h"
#include "common/util.h"
#include "pods/grade/grade.h"

#define VERDICT_MAX (64u << 20) /* bytes of a saved verdict.json we compare with */

static const char help_eval_head[] =
        "Usage: pome eval RUN_DIR [--task TASK.md] [--json] [--write]\n"
        "                 [--judge SPEC [--judge-model M] [--judge-key-file F] | --code-only]\n"
        "                 [--rejudge]\n"
        "\n"
        "Regrade a saved run offline, with no pomed: the run directory's task.md\n"
        "against its <twin>.seed.json, <twin>.final.json and <twin>.tape.jsonl, with\n"
        "the same grading library pomed's finalize uses. Grading is deterministic:\n"
        "the same run directory gives the same verdict.json, byte for byte.\n"
        "\n"
        "By default prints the verdict table and compares it with RUN_DIR/verdict.json\n"
        "(\"identical\", or each difference as a JSON Pointer with the saved and the\n"
        "new value).\n"
        "\n"
        "[model] criteria: the judgments recorded in RUN_DIR/verdict.json are reused\n"
        "wherever their question (the criterion and the run's evidence, by SHA-256) is\n"
        "the same, so a regrade needs no judge and gives the same bytes; a criterion\n"
        "with no recorded judgment is asked of --judge, or, with none, left not\n"
        "evaluated (the verdict is INCOMPLETE). A saved --code-only verdict is regraded\n"
        "--code-only unless --judge or --rejudge is given.\n"
        "\n"
        "Arguments:\n"
        "  RUN_DIR                A run directory (pome run's ./pome-runs/<id>/, or\n"
        "                         pomed's <state dir>/runs/<id>/).\n"
        "\n"
        "Options:\n"
        "  --task TASK.md         Grade against this task file instead of RUN_DIR/task.md\n"
        "                         (its sidecar TASK.seed.json too, when there is one).\n"
        "  --json                 Print the verdict's bytes (verdict.json) instead of the\n"
        "                         table, and nothing else on stdout.\n"
        "  --write                Rewrite RUN_DIR/verdict.json with the new verdict.\n"
        "  --rejudge              Ask --judge again about every [model] criterion instead\n"
        "                         of reusing the recorded judgments.\n";

static const char help_eval_tail[] =
        "  -h, --help             Show this help.\n"
        "\n"
        "A run directory of a sandbox pome run --keep left open has no final states\n"
        "until the sandbox is finalized and the run collected (`pome run collect ID\n"
        "RUN_DIR`): eval refuses it until then rather than fail every criterion.\n"
        "\n"
        "Exit status: 0 when the verdict passes, 1 when it fails (or on an error), 6\n"
        "when it is INCOMPLETE (a criterion that should have been evaluated was not: a\n"
        "[model] one with no judge or a judge error, an unmatched sentence; or nothing\n"
        "was scored), 2 for a usage error, a task file that does not parse, a kept-open\n"
        "run not yet collected, or a run directory without a seed its criteria need.\n"
        "\n"
        "Examples:\n"
        "  pome eval pome-runs/ses_abc123\n"
        "  pome eval pome-runs/ses_abc123 --json | cmp - pome-runs/ses_abc123/verdict.json\n"
        "  pome eval pome-runs/ses_abc123 --task examples/triage/task.md\n"
        "  pome eval pome-runs/ses_abc123 --rejudge --judge openai:http://127.0.0.1:8000/v1 \\\n"
        "      --judge-model qwen2.5-7b-instruct\n";

enum {
        OPT_TASK = JUDGING_FIRST_FREE,
        OPT_JSON,
        OPT_WRITE,
        OPT_REJUDGE,
};

/* Prints how the new verdict compares with the saved verdict.json of dir. */
static void compare_saved(const char *dir, const char *bytes, size_t len)
{
        _cleanup_free_ char *path = NULL, *saved = NULL;
        size_t saved_len;

        if (asprintf(&path, "%s/verdict.json", dir) < 0)
                return;
        int r = read_file_at(AT_FDCWD, path, VERDICT_MAX, &saved, &saved_len);
        if (r == -ENOENT) {
                puts("verdict.json: none in the run directory to compare with");
                return;
        }
        if (r < 0) {
                printf("verdict.json: cannot read it: %s\n", strerror(-r));
                return;
        }
        if (saved_len == len && memcmp(saved, bytes, len) == 0) {
                puts("verdict.json: identical (byte for byte)");
                return;
        }
        _cleanup_json_ json_t *a = json_loadb(saved, saved_len, 0, NULL);
        _cleanup_json_ json_t *b = json_loadb(bytes, len, 0, NULL);
        if (!a) {
                puts("verdict.json: differs (the saved one is not JSON)");
                return;
        }
        puts("verdict.json: differs (saved → regraded):");
        if (report_json_diff(stdout, a, b, 40) == 0)
                puts("  the same JSON in other bytes (not written by pome or pomed?)");
}

/*
 * A run `pome run --keep` left open has no final states yet, nor pomed's verdict: graded
 * as it stands, every final-state criterion would fail for want of them, a verdict that says
 * nothing about the agent. Once finalized, `pome run collect` completes the directory.
 * 0, or POME_EXIT_USAGE after saying so.
 */
static int refuse_kept_open(const char *dir, const GradeTask *task)
{
        _cleanup_free_ char *path = NULL, *text = NULL;
        if (asprintf(&path, "%s/meta.json", dir) < 0)
                return POME_EXIT_ERROR;
        if (read_file_at(AT_FDCWD, path, VERDICT_MAX, &text, NULL) < 0)
                return 0;
        _cleanup_json_ json_t *meta = json_loads(text, 0, NULL);
        if (!streq_ptr(json_get_str(meta, "outcome"), "kept_open"))
                return 0;
        for (char **tw = task->twins; *tw; tw++) {
                _cleanup_free_ char *final = NULL;
                if (asprintf(&final, "%s/%s.final.json", dir, *tw) < 0)
                        return POME_EXIT_ERROR;
                if (access(final, F_OK) == 0)
                        continue;
                const char *sid = json_get_str(meta, "session_id");
                fprintf(stderr,
                        "pome eval: %s is the run of sandbox %s, left open by pome run --keep: "
                        "it has no final states (no %s.final.json) and no verdict, so there is "
                        "nothing to grade yet.\n"
                        "  Finalize the sandbox (pome sandbox finalize %s), collect its run "
                        "(pome run collect %s %s),\n  then pome eval %s\n",
                        dir, strempty(sid), *tw, strempty(sid), strempty(sid), dir, dir);
                return POME_EXIT_USAGE;
        }
        return 0;
}

/* dir's saved verdict.json (new reference), or NULL when there is none that parses. */
static json_t *saved_verdict(const char *dir)
{
        _cleanup_free_ char *path = NULL, *text = NULL;
        if (asprintf(&path, "%s/verdict.json", dir) < 0 ||
            read_file_at(AT_FDCWD, path, VERDICT_MAX, &text, NULL) < 0)
                return NULL;
        return json_loads(text, 0, NULL);
}

int cmd_eval(int argc, char **argv)
{
        static const ArgOption options[] = {
                {"task", OPT_TASK, true},
                {"json", OPT_JSON, false},
                {"write", OPT_WRITE, false},
                {"rejudge", OPT_REJUDGE, false},
                JUDGING_OPTIONS,
        };
        _cleanup_free_ char *bytes = NULL, *task_default = NULL;
        _cleanup_(judge_freep) Judge *judge = NULL;
        const char *dir = NULL, *task = NULL, *v;
        bool json = false, write = false, rejudge = false;
        JudgeFlags jf = {};
        ArgParser p;
        struct stat st;
        size_t len;
        int r;

        args_init(&p, argc, argv, 1, options, ELEMENTSOF(options), "eval");
        while ((r = args_next(&p, &v)) != ARGS_END) {
                switch (r) {
                case ARGS_HELP:
                        fputs(help_eval_head, stdout);
                        fputs(judging_help, stdout);
                        fputs(help_eval_tail, stdout);
                        return POME_EXIT_OK;
                case ARGS_POSITIONAL:
                        if (dir) {
                                args_error("eval", "unexpected argument '%s'", v);
                                return POME_EXIT_USAGE;
                        }
                        dir = v;
                        break;
                case OPT_TASK:
                        task = v;
                        break;
                case OPT_JSON:
                        json = true;
                        break;
                case OPT_WRITE:
                        write = true;
                        break;
                case OPT_REJUDGE:
                        rejudge = true;
                        break;
                default:
                        if (r >= ARGS_FIRST_OPTION && judging_take(&jf, r, v))
                                break;
                        return POME_EXIT_USAGE;
                }
        }
        if (!dir) {
                args_error("eval", "missing the run directory");
                return POME_EXIT_USAGE;
        }
        if (rejudge && !jf.spec) {
                args_error("eval", "--rejudge asks the judge again: give --judge");
                return POME_EXIT_USAGE;
        }
        r = judging_open(&jf, "eval", &judge);
        if (r < 0)
                return r == -ENOMEM ? POME_EXIT_ERROR : POME_EXIT_USAGE;
        if (stat(dir, &st) < 0) {
                fprintf(stderr, "pome eval: %s: %m\n", dir);
                return POME_EXIT_USAGE;
        }
        if (!S_ISDIR(st.st_mode)) {
                fprintf(stderr, "pome eval: %s is not a run directory\n", dir);
                return POME_EXIT_USAGE;
        }

        /* the task first: one that does not parse is the caller's to fix (file:line) */
        GradeError e = {};
        GradeTask *t = NULL;
        if (!task && asprintf(&task_default, "%s/task.md", dir) < 0)
                return POME_EXIT_ERROR;
        r = grade_task_load(task ? task : task_default, &t, &e);
        if (r < 0) {
                output_lines(stderr, "pome eval", e.message);
                return POME_EXIT_USAGE;
        }
        r = refuse_kept_open(dir, t);
        grade_task_free(t);
        if (r != 0)
                return r;

        GradeOptions opts = {.judge = judge ? judge_grade_judge(judge) : NULL,
                             .reuse_saved = !rejudge,
                             .code_only = jf.code_only};
        /* what the run was graded as is the run's: --code-only, and whether its agent was
         * sealed (which a regrade cannot know otherwise) */
        _cleanup_json_ json_t *saved = saved_verdict(dir);
        bool inherited =
                !jf.code_only && !judge && json_is_true(json_object_get(saved, "code_only"));
        if (inherited)
                opts.code_only = true;
        json_t *sealed = json_object_get(saved, "agent_sealed");
        opts.agent_seal = json_is_true(sealed)    ? GRADE_SEAL_SEALED
                          : json_is_false(sealed) ? GRADE_SEAL_UNSEALED
                                                  : GRADE_SEAL_UNKNOWN;
        r = grade_run_dir(dir, task, &opts, &bytes, &len, &e);
        if (r < 0) {
                fprintf(stderr, "pome eval: cannot grade %s: %s\n", dir,
                        r == -ENOMEM ? "out of memory" : e.message);
                return r == -ENOENT ? POME_EXIT_USAGE : POME_EXIT_ERROR;
        }
        _cleanup_json_ json_t *verdict = json_loadb(bytes, len, 0, NULL);
        if (!verdict)
                return POME_EXIT_ERROR;

        if (json) {
                if (fwrite(bytes, 1, len, stdout) != len)
                        return POME_EXIT_ERROR;
        } else {
                if (inherited)
                        puts("Graded --code-only, as the saved verdict was.");
                if (report_verdict(stdout, verdict, report_use_color(stdout)) < 0)
                        return POME_EXIT_ERROR;
                compare_saved(dir, bytes, len);
        }
        if (write) {
                _cleanup_free_ char *path = NULL;
                if (asprintf(&path, "%s/verdict.json", dir) < 0)
                        return POME_EXIT_ERROR;
                r = write_file_at(AT_FDCWD, path, bytes, len, 0644, true);
                if (r < 0) {
                        fprintf(stderr, "pome eval: cannot write %s: %s\n", path, strerror(-r));
                        return POME_EXIT_ERROR;
                }
                if (!json)
                        printf("Wrote %s.\n", path);
        }
        return report_verdict_exit_status(verdict);
}
