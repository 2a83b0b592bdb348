/* SPDX-License-Identifier: MIT */
/*
 * summary.md: the handoff a run ends with, built from its tapes, final states and verdict
 * alone — no model, no clock, so the same run directory always gives the same bytes. Per
 * twin, what the agent read and changed, in order, with the failed calls and the routes the
 * twin does not serve called out; then each criterion with its evidence rendered: the tape
 * row an event id names and the value a state pointer names in the final world.
 *
 * Everything quoted from a tape comes from the agent or the twin, so it is made inert
 * before it reaches Markdown: control characters dropped, long values cut, and inline code
 * spans fenced with more backticks than the text holds (CommonMark §6.1).
 */
#include <stdarg.h>

#include "common/hashmap.h"
#include "common/json-util.h"
#include "common/strv.h"
#include "pods/grade/check.h"

#define SUMMARY_CALLS_MAX    200 /* calls listed per twin; the rest are counted */
#define SUMMARY_VALUE_MAX    160 /* characters of a quoted value */
#define SUMMARY_EVIDENCE_MAX 20  /* tape rows and state values shown per criterion */

typedef struct Buf {
        char *p;
        size_t len, cap;
        bool oom;
} Buf;

static void put(Buf *b, const char *fmt, ...) _printf_(2, 3);
static void put(Buf *b, const char *fmt, ...)
{
        if (b->oom)
                return;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(NULL, 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
                b->oom = true;
                return;
        }
        if (b->len + (size_t)n + 1 > b->cap) {
                size_t cap = (b->len + (size_t)n + 1) * 2;
                char *p = realloc(b->p, cap);
                if (!p) {
                        b->oom = true;
                        return;
                }
                b->p = p;
                b->cap = cap;
        }
        va_start(ap, fmt);
        vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        b->len += (size_t)n;
}

/* s made safe for one line of Markdown: no control characters, at most max characters
 * (a cut one ends in "…"). A new string, NULL on OOM. */
static char *inert(const char *s, size_t max)
{
        size_t n = strlen(strempty(s));
        char *out = malloc(n + 4);
        if (!out)
                return NULL;
        size_t o = 0, chars = 0;
        for (size_t i = 0; s && s[i]; i++) {
                unsigned char ch = (unsigned char)s[i];
                if (ch < 0x20 || ch == 0x7f) {
                        out[o++] = ' ';
                        chars++;
                } else {
                        if ((ch & 0xc0) != 0x80 && chars++ == max) {
                                memcpy(out + o, "\xe2\x80\xa6", 3);
                                o += 3;
                                break;
                        }
                        out[o++] = (char)ch;
                }
        }
        out[o] = 0;
        return out;
}

/* An inline code span of s (inert, at most max characters). */
static void put_code(Buf *b, const char *s, size_t max)
{
        _cleanup_free_ char *t = inert(s, max);
        if (!t) {
                b->oom = true;
                return;
        }
        size_t run = 0, longest = 0;
        for (const char *p = t; *p; p++) {
                run = *p == '`' ? run + 1 : 0;
                longest = run > longest ? run : longest;
        }
        char fence[16];
        size_t f = longest + 1 < sizeof(fence) ? longest + 1 : sizeof(fence) - 1;
        memset(fence, '`', f);
        fence[f] = 0;
        /* a span that starts or ends with a backtick needs a space inside its fence */
        bool pad = t[0] == '`' || (t[0] && t[strlen(t) - 1] == '`') || t[0] == 0;
        put(b, "%s%s%s%s%s", fence, pad ? " " : "", t, pad ? " " : "", fence);
}

/* A JSON value as compact text, for the summary. */
static void put_value(Buf *b, const json_t *v)
{
        _cleanup_free_ char *t =
                v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS) : NULL;
        put_code(b, v ? t : "(does not resolve)", SUMMARY_VALUE_MAX);
}

/* "GET /repos/acme/api/issues/1 → 200 (issue_read)" for a tape row. */
static void put_call(Buf *b, const json_t *row)
{
        _cleanup_free_ char *call = NULL;
        if (asprintf(&call, "%s %s", strempty(json_get_str(row, "method")),
                     strempty(json_get_str(row, "path"))) < 0) {
                b->oom = true;
                return;
        }
        put_code(b, call, SUMMARY_VALUE_MAX);
        put(b, " → %lld", (long long)json_integer_value(json_object_get(row, "status")));
        const char *tool = json_get_str(row, "tool");
        if (tool) {
                put(b, " (");
                put_code(b, tool, 64);
                put(b, ")");
        }
}

typedef struct TwinFiles {
        const char *twin;
        json_t *tape, *final;
        Hashmap *by_id; /* event_id → row of the tape (keys borrowed from the rows) */
} TwinFiles;

/* Indexes a tape by event id, so evidence lookups cost O(1) whatever the tape's length. */
static int index_tape(TwinFiles *t)
{
        t->by_id = hashmap_new(HASHMAP_STRING);
        if (!t->by_id)
                return -ENOMEM;
        size_t i;
        json_t *row;
        json_array_foreach (t->tape, i, row) {
                const char *id = json_get_str(row, "event_id");
                /* a repeated id keeps its first row */
                if (id && hashmap_put(t->by_id, id, row) == -ENOMEM)
                        return -ENOMEM;
        }
        return 0;
}

static void put_twin(Buf *b, const TwinFiles *t)
{
        put(b, "\n## %s\n\n", t->twin);
        if (!t->tape) {
                put(b, "No tape: the twin served no call, or its tape was not kept.\n");
                return;
        }
        size_t n = json_array_size(t->tape), reads = 0, changes = 0, failed = 0, unsupported = 0;
        size_t i;
        json_t *row;
        json_array_foreach (t->tape, i, row) {
                if (json_is_true(json_object_get(row, "state_mutation")))
                        changes++;
                else
                        reads++;
                if (json_integer_value(json_object_get(row, "status")) >= 400)
                        failed++;
                if (streq_ptr(json_get_str(row, "fidelity"), "unsupported"))
                        unsupported++;
        }
        put(b, "%zu call%s: %zu changed the world, %zu only read it; %zu failed", n,
            n == 1 ? "" : "s", changes, reads, failed);
        if (unsupported)
                put(b, ", %zu to routes the twin does not serve", unsupported);
        put(b, ".%s\n\n", t->final ? "" : " No final state was kept.");
        json_array_foreach (t->tape, i, row) {
                if (i == SUMMARY_CALLS_MAX) {
                        put(b, "\n… and %zu more calls (the tape has them all).\n", n - i);
                        break;
                }
                bool changed = json_is_true(json_object_get(row, "state_mutation"));
                int64_t status = json_integer_value(json_object_get(row, "status"));
                put(b, "%zu. %s ", i + 1, changed ? "**changed**" : "read");
                put_call(b, row);
                if (streq_ptr(json_get_str(row, "fidelity"), "unsupported"))
                        put(b, " — **unsupported by the twin**");
                else if (status >= 400) {
                        put(b, " — **failed**");
                        const char *err = json_get_str(row, "error");
                        if (err) {
                                put(b, ": ");
                                put_code(b, err, SUMMARY_VALUE_MAX);
                        }
                }
                if (json_is_true(json_object_get(row, "idempotency_dedupe")))
                        put(b, " — replayed (Idempotency-Key)");
                put(b, "\n");
        }
}

static const TwinFiles *files_of(const TwinFiles *tw, size_t n, const char *twin)
{
        for (size_t i = 0; i < n; i++)
                if (streq_ptr(tw[i].twin, twin))
                        return &tw[i];
        return NULL;
}

static void put_criteria(Buf *b, const json_t *verdict, const TwinFiles *tw, size_t n)
{
        const json_t *counts = json_object_get(verdict, "counts");
        put(b, "\n## Verdict: %s", strempty(json_get_str(verdict, "state")));
        if (json_is_number(json_object_get(verdict, "score")))
                put(b, " (score %.0f%%, threshold %.0f%%)",
                    json_number_value(json_object_get(verdict, "score")),
                    json_number_value(
                            json_object_get(json_object_get(verdict, "task"), "pass_threshold")));
        put(b, "\n\n");
#define COUNT(name) ((long long)json_integer_value(json_object_get(counts, name)))
        if (counts)
                put(b,
                    "%lld criteria: %lld passed, %lld failed, %lld unmatched, %lld skipped, "
                    "%lld already true in the seed; %lld scored.\n\n",
                    COUNT("criteria"), COUNT("passed"), COUNT("failed"), COUNT("unmatched"),
                    COUNT("skipped"), COUNT("already_true_in_seed"), COUNT("scored"));
#undef COUNT
        size_t i;
        json_t *c;
        json_array_foreach (json_object_get(verdict, "criteria"), i, c) {
                const char *status = strempty(json_get_str(c, "status"));
                bool already = json_is_true(json_object_get(c, "already_true_in_seed"));
                bool scored = json_is_true(json_object_get(c, "scored"));
                put(b, "- **%s**%s [%s%s%s] ", status,
                    already ? (scored ? " (already true in the seed; always scored)"
                                      : " (already true in the seed; not scored)")
                            : "",
                    strempty(json_get_str(c, "kind")), json_get_str(c, "twin") ? ":" : "",
                    strempty(json_get_str(c, "twin")));
                _cleanup_free_ char *text = inert(json_get_str(c, "text"), 300);
                put(b, "%s\n", text ? text : "");
                const char *reason = json_get_str(c, "reason");
                if (reason) {
                        _cleanup_free_ char *r = inert(reason, 300);
                        put(b, "  - %s\n", r ? r : "");
                }
                const TwinFiles *f = files_of(tw, n, json_get_str(c, "twin"));
                size_t j;
                json_t *ev;
                json_t *events = json_object_get(c, "evidence_event_ids");
                json_array_foreach (events, j, ev) {
                        if (j == SUMMARY_EVIDENCE_MAX) {
                                put(b, "  - … and %zu more tape rows (verdict.json has them)\n",
                                    json_array_size(events) - j);
                                break;
                        }
                        const char *id = json_string_value(ev);
                        const json_t *row = f && f->by_id && id ? hashmap_get(f->by_id, id) : NULL;
                        put(b, "  - tape ");
                        put_code(b, json_string_value(ev), 64);
                        put(b, ": ");
                        if (row)
                                put_call(b, row);
                        else
                                put(b, "(not on the tape)");
                        put(b, "\n");
                }
                json_t *path;
                json_t *paths = json_object_get(c, "evidence_state_paths");
                json_array_foreach (paths, j, path) {
                        if (j == SUMMARY_EVIDENCE_MAX) {
                                put(b, "  - … and %zu more state values (verdict.json has them)\n",
                                    json_array_size(paths) - j);
                                break;
                        }
                        put(b, "  - state ");
                        put_code(b, json_string_value(path), 120);
                        put(b, " = ");
                        put_value(b, f && f->final
                                             ? grade_pointer_get(f->final, json_string_value(path))
                                             : NULL);
                        put(b, "\n");
                }
        }
}

int grade_summary_run_dir(const char *dir, char **ret, size_t *ret_len, GradeError *e)
{
        static const char *const kinds[] = {"github", "slack", "stripe", NULL};
        _cleanup_free_ char *task_path = NULL;
        if (asprintf(&task_path, "%s/task.md", dir) < 0)
                return -ENOMEM;
        /* a task that cannot be read is said in the summary, which still covers the tapes */
        GradeTask *task = NULL;
        GradeError te = {};
        int r = access(task_path, F_OK) == 0 ? grade_task_load(task_path, &task, &te) : -ENOENT;
        if (r == -ENOMEM)
                return r;

        /* the task's twins, in its order; without a task, those with a tape or a final state */
        TwinFiles tw[ELEMENTSOF(kinds) - 1] = {};
        size_t n = 0;
        const char *const *names = task ? (const char *const *)task->twins : kinds;
        r = 0;
        for (size_t i = 0; names[i] && n < ELEMENTSOF(tw) && r >= 0; i++) {
                char name[64];
                json_t *tape = NULL, *final = NULL;
                snprintf(name, sizeof(name), "%s.tape.jsonl", names[i]);
                r = grade_load_tape(dir, name, &tape, e);
                snprintf(name, sizeof(name), "%s.final.json", names[i]);
                if (r >= 0)
                        r = grade_load_json(dir, name, GRADE_FINAL_MAX, &final, e);
                if (r < 0 || (!task && !tape && !final)) {
                        json_decref(tape);
                        json_decref(final);
                        continue;
                }
                tw[n] = (TwinFiles){.twin = names[i], .tape = tape, .final = final};
                r = index_tape(&tw[n++]);
        }
        json_t *verdict = NULL;
        if (r >= 0)
                r = grade_load_json(dir, "verdict.json", GRADE_FINAL_MAX, &verdict, e);

        Buf b = {};
        if (r >= 0) {
                _cleanup_free_ char *title = inert(task ? task->title : NULL, 200);
                put(&b, "# Run summary%s%s\n\n", title && title[0] ? ": " : "", title ? title : "");
                if (task && task->prompt) {
                        _cleanup_free_ char *prompt = inert(task->prompt, 400);
                        put(&b, "Task prompt: %s\n", prompt ? prompt : "");
                } else if (te.message[0]) {
                        _cleanup_free_ char *why = inert(te.message, 400);
                        put(&b, "The task could not be read: %s\n", why ? why : "");
                } else
                        put(&b, "No task: the run was not graded.\n");
                for (size_t i = 0; i < n; i++)
                        put_twin(&b, &tw[i]);
                if (verdict)
                        put_criteria(&b, verdict, tw, n);
                else if (task)
                        put(&b, "\n## Verdict\n\nNo verdict.json: the run was not graded.\n");
        }
        json_decref(verdict);
        for (size_t i = 0; i < n; i++) {
                hashmap_free(tw[i].by_id);
                json_decref(tw[i].tape);
                json_decref(tw[i].final);
        }
        grade_task_free(task);
        if (r < 0 || b.oom || !b.p) {
                free(b.p);
                return r < 0 ? r : -ENOMEM;
        }
        *ret = b.p;
        if (ret_len)
                *ret_len = b.len;
        return 0;
}
