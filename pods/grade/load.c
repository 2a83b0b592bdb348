/* SPDX-License-Identifier: MIT */
/*
 * The run directory loader: the only file I/O of grading besides grade_task_load. It reads
 * what supervisor/rundir.h's layout keeps (<twin>.seed.json, <twin>.final.json,
 * <twin>.tape.jsonl, the task as task.md, the agent's reply as the judge saw it, a saved
 * verdict's judgments) and hands it to grade_run, so pomed's finalize and `pome eval RUN_DIR`
 * grade through one code path.
 */
#include <fcntl.h>
#include <stdarg.h>

#include "common/fileio.h"
#include "common/json-util.h"
#include "common/strv.h"
#include "pods/grade/check.h"

/* <dir>/<name> read whole: 0, 1 when it does not exist (*ret NULL), a negative errno. */
static int read_in(const char *dir, const char *name, size_t max, char **ret, size_t *ret_len,
                   GradeError *e)
{
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        int r = read_file_at(AT_FDCWD, path, max, ret, ret_len);
        if (r == -ENOENT) {
                *ret = NULL;
                return 1;
        }
        if (r < 0)
                return grade_error(e, r, "%s: %s", name, r == -EFBIG ? "too large" : strerror(-r));
        return 0;
}

int grade_load_json(const char *dir, const char *name, size_t max, json_t **ret, GradeError *e)
{
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r = read_in(dir, name, max, &text, &len, e);
        if (r != 0) {
                *ret = NULL;
                return r;
        }
        json_error_t je;
        json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
        if (!j)
                return grade_error(e, -EINVAL, "%s:%d: not valid JSON: %s", name, je.line, je.text);
        *ret = j;
        return 0;
}

int grade_load_tape(const char *dir, const char *name, json_t **ret, GradeError *e)
{
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r = read_in(dir, name, GRADE_TAPE_MAX, &text, &len, e);
        if (r != 0) {
                *ret = NULL;
                return r;
        }
        _cleanup_json_ json_t *rows = json_array();
        if (!rows)
                return -ENOMEM;
        size_t line = 0;
        for (size_t at = 0; at < len;) {
                const char *nl = memchr(text + at, '\n', len - at);
                size_t end = nl ? (size_t)(nl - text) : len;
                line++;
                if (end > at) {
                        json_error_t je;
                        json_t *row = json_loadb(text + at, end - at, 0, &je);
                        if (!json_is_object(row)) {
                                json_decref(row);
                                return grade_error(e, -EINVAL,
                                                   "%s:%zu: not a tape row (a JSON "
                                                   "object)%s%s",
                                                   name, line, row ? "" : ": ", row ? "" : je.text);
                        }
                        if (json_array_append_new(rows, row) < 0)
                                return -ENOMEM;
                }
                at = end + 1;
        }
        *ret = TAKE_PTR(rows);
        return 0;
}

int grade_run_dir(const char *dir, const char *task_path, const GradeOptions *opts, char **ret,
                  size_t *ret_len, GradeError *e)
{
        GradeOptions o = opts ? *opts : (GradeOptions){};
        _cleanup_json_ json_t *saved = NULL;
        _cleanup_free_ char *reply = NULL;
        int r;
        if (o.reuse_saved && !o.recorded) {
                r = grade_load_json(dir, "verdict.json", GRADE_FINAL_MAX, &saved, e);
                if (r < 0)
                        return r;
                o.recorded = saved;
        }
        if (!o.agent_reply) {
                r = read_in(dir, GRADE_AGENT_REPLY_FILE, GRADE_SEED_MAX, &reply, &o.agent_reply_len,
                            e);
                if (r < 0)
                        return r;
                o.agent_reply = reply;
        }
        _cleanup_free_ char *default_task = NULL;
        if (!task_path) {
                if (asprintf(&default_task, "%s/task.md", dir) < 0)
                        return -ENOMEM;
                task_path = default_task;
        }
        GradeTask *task = NULL;
        r = grade_task_load(task_path, &task, e);
        if (r < 0)
                return r;
        size_t n = strv_length(task->twins);
        GradeTwinRun runs[3] = {};
        json_t *docs[9] = {};
        _cleanup_strv_free_ char **warnings = NULL;
        for (size_t i = 0; i < n && i < ELEMENTSOF(runs) && r >= 0; i++) {
                const char *twin = task->twins[i];
                char name[64];
                runs[i].twin = twin;
                snprintf(name, sizeof(name), "%s.seed.json", twin);
                r = grade_load_json(dir, name, GRADE_SEED_MAX, &docs[3 * i], e);
                if (r == 1) {
                        /* the pod's own record is missing: the task's seed is what it was
                         * given; without one, nothing says what the twin booted from */
                        docs[3 * i] = json_incref(json_object_get(task->seeds, twin));
                        runs[i].seed_unknown = !docs[3 * i];
                        r = docs[3 * i] ? strv_extendf(&warnings,
                                                       "%s: missing; graded against the task's "
                                                       "seed",
                                                       name)
                                        : 0;
                }
                runs[i].seed = docs[3 * i];
                if (r < 0)
                        break;
                snprintf(name, sizeof(name), "%s.final.json", twin);
                r = grade_load_json(dir, name, GRADE_FINAL_MAX, &docs[3 * i + 1], e);
                runs[i].final = docs[3 * i + 1];
                if (r < 0)
                        break;
                snprintf(name, sizeof(name), "%s.tape.jsonl", twin);
                r = grade_load_tape(dir, name, &docs[3 * i + 2], e);
                /* pomed creates a tape's file with its first row: none is a twin nobody
                 * called, an empty tape */
                if (r == 1 && !(docs[3 * i + 2] = json_array()))
                        r = -ENOMEM;
                runs[i].tape = docs[3 * i + 2];
        }
        json_t *verdict = NULL;
        if (r >= 0)
                r = grade_run(task, runs, n, &o, &verdict, e);
        for (char **w = warnings; r >= 0 && w && *w; w++)
                if (json_array_append_new(json_object_get(verdict, "warnings"), json_string(*w)) <
                    0)
                        r = -ENOMEM;
        if (r >= 0)
                r = grade_verdict_render(verdict, ret, ret_len);
        json_decref(verdict);
        for (size_t i = 0; i < ELEMENTSOF(docs); i++)
                json_decref(docs[i]);
        grade_task_free(task);
        return r < 0 ? r : 0;
}
