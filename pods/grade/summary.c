/* SPDX-License-Identifier: MIT */
/*
 * summary.md: the handoff a run ends with, built from its tapes, final states and verdict
 * alone — no model, no clock, so the same run directory always gives the same bytes. Per
 * twin, what the agent read and changed, in order, with the failed calls and the routes the
 * twin does not serve called out; then each criterion with its evidence rendered: the tape
 * row an event id names and the value a state pointer names in the final world.
 *
 * Two rules for everything it prints:
 * - Only what may be shown. A <twin>.final.json is the twin's world as exported, real
 *   secrets included (the world keeps them; only /_pome/state and tapes are scrubbed), and a
 *   task, a verdict's reasons or a judge's rationale may quote them. So every string and
 *   value goes through the redaction of tapes and /_pome/state (pods/twin/redact.h) before
 *   it is cut or quoted: a value under a secret key (at any depth of the pointer that names
 *   it) is "[REDACTED]", and token-looking words are scrubbed anywhere.
 * - Inert. Everything quoted comes from the agent, a twin or a task, so it is made inert
 *   before it reaches Markdown: control characters dropped, long values cut, and inline code
 *   spans fenced with more backticks than the text holds (CommonMark §6.1).
 *
 * Labels say what the files say: "always scored" only for a criterion the task marked so; a
 * call is a write by what it did (state_mutation) or tried (a write action, or a method
 * other than GET/HEAD when the row names none), so a failed write is never listed as a read.
 * Verdicts of both formats render: version 1 (passed/failed/unmatched/skipped) and version 2
 * (statuses "error", [model] judgments, states by completeness, code_only, not_evaluated).
 */
#include <assert.h>
#include <strings.h>

#include "common/hashmap.h"
#include "common/json-util.h"
#include "common/jsonbytes.h"
#include "common/strv.h"
#include "pods/grade/check.h"
#include "pods/twin/redact.h"
#include "pods/twin/twin.h"

#define SUMMARY_CALLS_MAX    200 /* calls listed per twin; the rest are counted */
#define SUMMARY_VALUE_MAX    160 /* characters of a quoted value */
#define SUMMARY_EVIDENCE_MAX 20  /* tape rows and state values shown per criterion */
#define SUMMARY_LISTED_MAX   20  /* criteria named in the verdict's "incomplete" line */

/* s as it may be shown on one line of Markdown: secrets redacted first (a secret cut in half
 * would no longer look like one), then no control characters and at most max characters (a
 * cut one ends in "…"). A new string, NULL on OOM. */
static char *inert(const char *s, size_t max)
{
        s = strempty(s);
        _cleanup_free_ char *redacted = NULL;
        size_t rn;
        int r = twin_redact_string(s, strlen(s), &redacted, &rn);
        if (r < 0)
                return NULL;
        if (r > 0)
                s = redacted;
        size_t n = strlen(s);
        char *out = malloc(n + 4);
        if (!out)
                return NULL;
        size_t o = 0, chars = 0;
        for (size_t i = 0; s[i]; i++) {
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

/* s, shown (inert), as plain text. */
static void put_text(JsonBuf *b, const char *s, size_t max)
{
        _cleanup_free_ char *t = inert(s, max);
        if (!t) {
                b->oom = true;
                return;
        }
        jsonbuf_printf(b, "%s", t);
}

/* An inline code span of s, shown (inert, at most max characters). */
static void put_code(JsonBuf *b, const char *s, size_t max)
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
        jsonbuf_printf(b, "%s%s%s%s%s", fence, pad ? " " : "", t, pad ? " " : "", fence);
}

/* A JSON value as compact text, redacted as a tape row's part is (a copy: v is not
 * changed), in a code span; secret: v sits under a secret key, so it is "[REDACTED]" whole. */
static void put_value(JsonBuf *b, const json_t *v, bool secret)
{
        if (!v) {
                put_code(b, "(does not resolve)", SUMMARY_VALUE_MAX);
                return;
        }
        if (secret && !json_is_null(v)) {
                put_code(b, TWIN_REDACTED, SUMMARY_VALUE_MAX);
                return;
        }
        _cleanup_json_ json_t *copy = json_deep_copy(v);
        _cleanup_free_ char *t = NULL;
        /* a bare string is scrubbed as text by put_code; containers here */
        if (!copy || twin_redact_json(copy) < 0 ||
            !(t = json_dumps(copy, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS))) {
                b->oom = true;
                return;
        }
        put_code(b, t, SUMMARY_VALUE_MAX);
}

/* What ptr names in doc, with in *ret_secret whether a member on the way is one of the keys
 * whose values are always redacted (the pointer "/users/0/token" names a secret whatever it
 * looks like). Borrowed; NULL when it does not resolve. */
static const json_t *value_at(const json_t *doc, const char *ptr, bool *ret_secret)
{
        *ret_secret = false;
        if (!doc || !ptr || (*ptr && *ptr != '/'))
                return NULL;
        _cleanup_free_ char *prefix = strdup(ptr);
        if (!prefix)
                return NULL;
        /* each member on the way, checked where its parent is an object (an array's index
         * is no key) */
        for (size_t pos = 0, n = strlen(ptr); pos < n;) {
                prefix[pos] = 0;
                const json_t *parent = grade_pointer_get(doc, prefix);
                prefix[pos] = '/';
                const char *t = ptr + pos + 1;
                size_t tn = strcspn(t, "/");
                pos += 1 + tn;
                if (!json_is_object(parent))
                        continue;
                char tok[64]; /* longer than any secret key: unescaped as far as it goes */
                size_t k = 0;
                for (size_t i = 0; i < tn && k + 1 < sizeof(tok); i++) {
                        char ch = t[i];
                        if (ch == '~' && i + 1 < tn) /* RFC 6901 §4 */
                                ch = t[++i] == '1' ? '/' : '~';
                        tok[k++] = ch;
                }
                tok[k] = 0;
                if (twin_redact_key(tok))
                        *ret_secret = true;
        }
        return grade_pointer_get(doc, ptr);
}

/* ---------------------------------------------------------------- calls */

typedef enum CallKind {
        CALL_READ,         /* a read that did what it was asked, or failed */
        CALL_CHANGED,      /* changed the world (state_mutation) */
        CALL_WRITE_FAILED, /* a write that failed: refused, or the twin does not serve it */
        CALL_WRITE_NOOP,   /* a write that succeeded and changed nothing (a replay, a no-op) */
} CallKind;

/* Whether the call failed: an HTTP error, or Slack's "ok": false (answered with 200). */
static bool call_failed(const json_t *row)
{
        const json_t *body = json_object_get(row, "response_body");
        return json_integer_value(json_object_get(row, "status")) >= 400 ||
               json_is_false(json_object_get(body, "ok"));
}

/* A call is a write by what it did or tried: it changed the world, or it named a write action
 * of its twin (surface.json's readOnly), or, naming none it knows, it used a method other
 * than GET or HEAD (MCP's own calls, tools/list and the like, change nothing). */
static CallKind call_kind(const char *twin, const json_t *row)
{
        if (json_is_true(json_object_get(row, "state_mutation")))
                return CALL_CHANGED;
        const char *tool = json_get_str(row, "tool");
        const TwinKind *k = twin ? twin_kind_find(twin) : NULL;
        const TwinAction *a = k && tool ? twin_kind_action(k, tool) : NULL;
        bool write;
        if (a)
                write = !a->read_only;
        else {
                const char *method = strempty(json_get_str(row, "method"));
                const char *path = strempty(json_get_str(row, "path"));
                size_t pn = strlen(path);
                bool mcp = pn >= 4 && streq(path + pn - 4, "/mcp");
                write = !(strcasecmp(method, "GET") == 0 || strcasecmp(method, "HEAD") == 0 || mcp);
        }
        if (!write)
                return CALL_READ;
        return call_failed(row) ? CALL_WRITE_FAILED : CALL_WRITE_NOOP;
}

static const char *call_kind_label(CallKind k)
{
        switch (k) {
        case CALL_READ:
                return "read";
        case CALL_CHANGED:
                return "**changed**";
        case CALL_WRITE_FAILED:
                return "**failed write**";
        case CALL_WRITE_NOOP:
                return "write, no change";
        }
        return "read";
}

/* "GET /repos/acme/api/issues/1 → 200 (issue_read)" for a tape row. */
static void put_call(JsonBuf *b, const json_t *row)
{
        _cleanup_free_ char *call = NULL;
        if (asprintf(&call, "%s %s", strempty(json_get_str(row, "method")),
                     strempty(json_get_str(row, "path"))) < 0) {
                b->oom = true;
                return;
        }
        put_code(b, call, SUMMARY_VALUE_MAX);
        jsonbuf_printf(b, " → %lld", (long long)json_integer_value(json_object_get(row, "status")));
        const char *tool = json_get_str(row, "tool");
        if (tool) {
                jsonbuf_printf(b, " (");
                put_code(b, tool, 64);
                jsonbuf_printf(b, ")");
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

static void put_twin(JsonBuf *b, const TwinFiles *t)
{
        jsonbuf_printf(b, "\n## %s\n\n", t->twin);
        if (!t->tape) {
                jsonbuf_printf(b, "No tape: the twin served no call, or its tape was not kept.\n");
                return;
        }
        size_t n = json_array_size(t->tape), kinds[4] = {}, failed = 0, unsupported = 0;
        size_t i;
        json_t *row;
        json_array_foreach (t->tape, i, row) {
                kinds[call_kind(t->twin, row)]++;
                if (call_failed(row))
                        failed++;
                if (streq_ptr(json_get_str(row, "fidelity"), "unsupported"))
                        unsupported++;
        }
        jsonbuf_printf(b, "%zu call%s: %zu changed the world, %zu tried to and failed", n,
                       n == 1 ? "" : "s", kinds[CALL_CHANGED], kinds[CALL_WRITE_FAILED]);
        if (kinds[CALL_WRITE_NOOP])
                jsonbuf_printf(b, ", %zu wrote and changed nothing", kinds[CALL_WRITE_NOOP]);
        jsonbuf_printf(b, ", %zu only read it; %zu failed", kinds[CALL_READ], failed);
        if (unsupported)
                jsonbuf_printf(b, ", %zu to routes the twin does not serve", unsupported);
        jsonbuf_printf(b, ".%s\n\n", t->final ? "" : " No final state was kept.");
        json_array_foreach (t->tape, i, row) {
                if (i == SUMMARY_CALLS_MAX) {
                        jsonbuf_printf(b, "\n… and %zu more calls (the tape has them all).\n",
                                       n - i);
                        break;
                }
                jsonbuf_printf(b, "%zu. %s ", i + 1, call_kind_label(call_kind(t->twin, row)));
                put_call(b, row);
                if (streq_ptr(json_get_str(row, "fidelity"), "unsupported"))
                        jsonbuf_printf(b, " — **unsupported by the twin**");
                else if (call_failed(row)) {
                        jsonbuf_printf(b, " — **failed**");
                        const char *err = json_get_str(row, "error");
                        if (!err) /* Slack's {"ok": false, "error": "…"} */
                                err = json_get_str(json_object_get(row, "response_body"), "error");
                        if (err) {
                                jsonbuf_printf(b, ": ");
                                put_code(b, err, SUMMARY_VALUE_MAX);
                        }
                }
                if (json_is_true(json_object_get(row, "idempotency_dedupe")))
                        jsonbuf_printf(b, " — replayed (Idempotency-Key)");
                jsonbuf_printf(b, "\n");
        }
}

static const TwinFiles *files_of(const TwinFiles *tw, size_t n, const char *twin)
{
        for (size_t i = 0; i < n; i++)
                if (streq_ptr(tw[i].twin, twin))
                        return &tw[i];
        return NULL;
}

/* ---------------------------------------------------------------- the verdict */

/* Why a criterion that should have been scored was not (a version 2 verdict's
 * not_evaluated), or NULL when it was, or was left out on purpose. */
static const char *not_evaluated(const json_t *c, bool code_only)
{
        const char *status = strempty(json_get_str(c, "status"));
        if (streq(status, "unmatched"))
                return "unmatched: its sentence binds no check";
        if (streq(status, "error"))
                return "the judge could not be asked, or did not answer with a verdict";
        if (streq(status, "skipped") && streq_ptr(json_get_str(c, "kind"), "model") && !code_only)
                return "a [model] criterion with no judge to ask";
        return NULL;
}

/* The label after a criterion's status: what the verdict says of the seed and the score,
 * in the task's own terms. */
static const char *criterion_label(const json_t *c)
{
        const char *status = strempty(json_get_str(c, "status"));
        bool already = json_is_true(json_object_get(c, "already_true_in_seed"));
        bool always = json_is_true(json_object_get(c, "always_scored"));
        bool scored = json_is_true(json_object_get(c, "scored"));
        if (!already)
                return "";
        if (streq(status, "failed"))
                return " (true in the seed, broken by the run)";
        if (streq(status, "passed") && always && scored)
                return " (already true in the seed; scored: the task marks it always-scored)";
        if (streq(status, "passed") && !scored)
                return " (already true in the seed: excluded, not scored)";
        return " (already true in the seed)";
}

static void put_judgment(JsonBuf *b, const json_t *j)
{
        if (!json_is_object(j))
                return;
        const char *judge = json_get_str(j, "judge");
        if (!judge)
                judge = json_get_str(j, "api");
        const char *verdict = json_get_str(j, "verdict");
        jsonbuf_printf(b, "  - judgment: ");
        if (verdict) {
                jsonbuf_printf(b, "**");
                put_text(b, verdict, 16);
                jsonbuf_printf(b, "**");
        } else
                jsonbuf_printf(b, "no verdict");
        if (judge || json_get_str(j, "model")) {
                jsonbuf_printf(b, " by ");
                put_code(b, judge ? judge : "judge", 64);
                if (json_get_str(j, "model")) {
                        jsonbuf_printf(b, " ");
                        put_code(b, json_get_str(j, "model"), 64);
                }
        }
        const char *why = json_get_str(j, "rationale");
        if (!why)
                why = json_get_str(j, "error");
        if (why) {
                jsonbuf_printf(b, ": ");
                put_text(b, why, 400);
        }
        jsonbuf_printf(b, "\n");
}

static void put_evidence(JsonBuf *b, const json_t *c, const TwinFiles *f)
{
        size_t j;
        json_t *ev;
        json_t *events = json_object_get(c, "evidence_event_ids");
        json_array_foreach (events, j, ev) {
                if (j == SUMMARY_EVIDENCE_MAX) {
                        jsonbuf_printf(b, "  - … and %zu more tape rows (verdict.json has them)\n",
                                       json_array_size(events) - j);
                        break;
                }
                const char *id = json_string_value(ev);
                const json_t *row = f && f->by_id && id ? hashmap_get(f->by_id, id) : NULL;
                jsonbuf_printf(b, "  - tape ");
                put_code(b, id, 64);
                jsonbuf_printf(b, ": ");
                if (row) {
                        put_call(b, row);
                        jsonbuf_printf(b, ", %s", call_kind_label(call_kind(f->twin, row)));
                        const json_t *body = json_object_get(row, "request_body");
                        if (body && !json_is_null(body)) {
                                jsonbuf_printf(b, " with ");
                                put_value(b, body, false);
                        }
                } else
                        jsonbuf_printf(b, "(not on the tape)");
                jsonbuf_printf(b, "\n");
        }
        json_t *path;
        json_t *paths = json_object_get(c, "evidence_state_paths");
        json_array_foreach (paths, j, path) {
                if (j == SUMMARY_EVIDENCE_MAX) {
                        jsonbuf_printf(b,
                                       "  - … and %zu more state values (verdict.json has them)\n",
                                       json_array_size(paths) - j);
                        break;
                }
                bool secret = false;
                const json_t *v =
                        f && f->final ? value_at(f->final, json_string_value(path), &secret) : NULL;
                jsonbuf_printf(b, "  - state ");
                put_code(b, json_string_value(path), 120);
                jsonbuf_printf(b, " = ");
                put_value(b, v, secret);
                jsonbuf_printf(b, "\n");
        }
}

static void put_criteria(JsonBuf *b, const json_t *verdict, const TwinFiles *tw, size_t n)
{
        const json_t *counts = json_object_get(verdict, "counts");
        const json_t *criteria = json_object_get(verdict, "criteria");
        const char *state = strempty(json_get_str(verdict, "state"));
        bool code_only = json_is_true(json_object_get(verdict, "code_only"));
        bool v2 = json_object_get(counts, "not_evaluated") != NULL;
        jsonbuf_printf(b, "\n## Verdict: ");
        put_text(b, state, 32);
        if (json_is_number(json_object_get(verdict, "score")))
                jsonbuf_printf(b, " (score %.0f%%, threshold %.0f%%)",
                               json_number_value(json_object_get(verdict, "score")),
                               json_number_value(json_object_get(json_object_get(verdict, "task"),
                                                                 "pass_threshold")));
        jsonbuf_printf(b, "\n\n");
#define COUNT(name) ((long long)json_integer_value(json_object_get(counts, name)))
        if (counts) {
                jsonbuf_printf(
                        b,
                        "%lld criteria: %lld passed, %lld failed, %lld unmatched, %lld skipped, ",
                        COUNT("criteria"), COUNT("passed"), COUNT("failed"), COUNT("unmatched"),
                        COUNT("skipped"));
                if (COUNT("error"))
                        jsonbuf_printf(b, "%lld judge error%s, ", COUNT("error"),
                                       COUNT("error") == 1 ? "" : "s");
                jsonbuf_printf(b, "%lld already true in the seed; %lld scored",
                               COUNT("already_true_in_seed"), COUNT("scored"));
                if (v2)
                        jsonbuf_printf(b, "; %lld not evaluated", COUNT("not_evaluated"));
                jsonbuf_printf(b, ".\n\n");
        }
#undef COUNT
        if (code_only)
                jsonbuf_printf(
                        b, "Graded code-only: [model] criteria were deliberately not judged.\n\n");
        /* incomplete: say which criteria should have been scored and were not */
        if (streq(state, "incomplete")) {
                size_t listed = 0, missing = 0, i;
                json_t *c;
                json_array_foreach (criteria, i, c)
                        if (not_evaluated(c, code_only))
                                missing++;
                if (missing == 0)
                        jsonbuf_printf(b, "Incomplete: no criterion was scored.\n\n");
                else {
                        jsonbuf_printf(
                                b,
                                "Incomplete: %zu criteri%s that should have been scored %s not:\n",
                                missing, missing == 1 ? "on" : "a", missing == 1 ? "was" : "were");
                        json_array_foreach (criteria, i, c) {
                                const char *why = not_evaluated(c, code_only);
                                if (!why)
                                        continue;
                                if (listed++ == SUMMARY_LISTED_MAX) {
                                        jsonbuf_printf(b, "- … and %zu more\n",
                                                       missing - SUMMARY_LISTED_MAX);
                                        break;
                                }
                                jsonbuf_printf(
                                        b, "- line %lld, %s\n",
                                        (long long)json_integer_value(json_object_get(c, "line")),
                                        why);
                        }
                        jsonbuf_printf(b, "\n");
                }
        }
        size_t i;
        json_t *c;
        json_array_foreach (criteria, i, c) {
                const char *kind = json_get_str(c, "kind");
                const char *twin = json_get_str(c, "twin");
                jsonbuf_printf(b, "- **");
                put_text(b, json_get_str(c, "status"), 16);
                jsonbuf_printf(b, "**%s [", criterion_label(c));
                put_text(b, kind, 16);
                if (twin) {
                        jsonbuf_printf(b, ":");
                        put_text(b, twin, 16);
                }
                if (json_is_true(json_object_get(c, "always_scored")))
                        jsonbuf_printf(b, " always-scored");
                jsonbuf_printf(b, "] ");
                put_text(b, json_get_str(c, "text"), 300);
                if (json_is_integer(json_object_get(c, "line")))
                        jsonbuf_printf(b, " (line %lld)",
                                       (long long)json_integer_value(json_object_get(c, "line")));
                jsonbuf_printf(b, "\n");
                const char *reason = json_get_str(c, "reason");
                if (reason) {
                        jsonbuf_printf(b, "  - ");
                        put_text(b, reason, 300);
                        jsonbuf_printf(b, "\n");
                }
                put_judgment(b, json_object_get(c, "judgment"));
                put_evidence(b, c, files_of(tw, n, twin));
        }
}

int grade_summary_run_dir(const char *dir, char **ret, size_t *ret_len, GradeError *e)
{
        const char *const *kinds = twin_kind_names();
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
        TwinFiles tw[8] = {}; /* at least as many as there are kinds (twin_kind_names) */
        assert(strv_length((char *const *)kinds) <= ELEMENTSOF(tw));
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

        JsonBuf b = {};
        if (r >= 0) {
                jsonbuf_printf(&b, "# Run summary");
                if (task && task->title && task->title[0]) {
                        jsonbuf_printf(&b, ": ");
                        put_text(&b, task->title, 200);
                }
                jsonbuf_printf(&b, "\n\n");
                if (task && task->prompt) {
                        jsonbuf_printf(&b, "Task prompt: ");
                        put_text(&b, task->prompt, 400);
                        jsonbuf_printf(&b, "\n");
                } else if (te.message[0]) {
                        jsonbuf_printf(&b, "The task could not be read: ");
                        put_text(&b, te.message, 400);
                        jsonbuf_printf(&b, "\n");
                } else
                        jsonbuf_printf(&b, "No task: the run was not graded.\n");
                for (size_t i = 0; i < n; i++)
                        put_twin(&b, &tw[i]);
                if (verdict)
                        put_criteria(&b, verdict, tw, n);
                else if (task)
                        jsonbuf_printf(
                                &b, "\n## Verdict\n\nNo verdict.json: the run was not graded.\n");
        }
        json_decref(verdict);
        for (size_t i = 0; i < n; i++) {
                hashmap_free(tw[i].by_id);
                json_decref(tw[i].tape);
                json_decref(tw[i].final);
        }
        grade_task_free(task);
        if (r < 0 || !jsonbuf_text(&b)) {
                jsonbuf_done(&b);
                return r < 0 ? r : -ENOMEM;
        }
        if (ret_len)
                *ret_len = b.len;
        *ret = TAKE_PTR(b.data);
        return 0;
}
