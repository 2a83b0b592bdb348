/* SPDX-License-Identifier: MIT */
/*
 * For the grading tests: a twin from a shipped seed whose world the real engine changes
 * (REST or MCP through twin_handle, so the replies carry the tape metadata), and a tape of
 * real rows built by the front's own row builder (front_tape_row) from those calls, as the
 * gateway records them. Then a criterion's sentence is bound and graded against the seed
 * world (built as grade_run builds it), the twin's world as the final state, and that tape,
 * checking every evidence pointer resolves in the final world and every event id is a row's.
 */
#pragma once

#include <inttypes.h>

#include "pods/front/front.h"
#include "pods/grade/check.h"
#include "tests/unit/twin-test-util.h"

typedef struct Fx {
        const char *kind;
        json_t *seed; /* the raw seed the twin booted from */
        Twin *twin;   /* its world is the final state */
        json_t *tape; /* rows, in call order */
        unsigned calls;
} Fx;

/* A fixture from a shipped seed (sandbox-images/<kind>/seeds/<name>.json). */
static inline void fx_open(Fx *f, const char *kind, const char *name)
{
        *f = (Fx){.kind = kind, .seed = twin_test_seed(kind, name), .tape = json_array()};
        f->twin = twin_test_from(twin_kind_find(kind), f->seed);
}

/* A fixture from a seed given as JSON text. */
static inline void fx_open_json(Fx *f, const char *kind, const char *seed_json)
{
        json_error_t e;
        *f = (Fx){.kind = kind, .seed = json_loads(seed_json, 0, &e), .tape = json_array()};
        if (!f->seed) {
                fprintf(stderr, "bad test seed: %s\n", e.text);
                exit(1);
        }
        f->twin = twin_test_from(twin_kind_find(kind), f->seed);
}

static inline void fx_close(Fx *f)
{
        twin_free(f->twin);
        json_decref(f->seed);
        json_decref(f->tape);
        *f = (Fx){};
}

/* Appends the row of a call already served into rp (path below the mount) to the tape. */
static inline void fx_record(Fx *f, const char *method, const char *path, json_t *headers,
                             const char *body, const TwinReply *rp)
{
        char id[32], full[512];
        snprintf(id, sizeof(id), "req_test%012u", ++f->calls);
        snprintf(full, sizeof(full), "/%s/s/ses_test%s", f->kind, path);
        FrontCall fc = {.twin = f->kind,
                        .run_id = "ses_test",
                        .request_id = id,
                        .method = method,
                        .path = full,
                        .query = "",
                        .headers = headers,
                        .body = body,
                        .body_len = body ? strlen(body) : 0,
                        .ts_usec = (int64_t)TWIN_TEST_NOW * 1000000};
        json_t *row = front_tape_row(&fc, rp);
        CHECK(row != NULL);
        json_array_append_new(f->tape, row);
}

/*
 * Serves one call through the real engine (twin_handle) and records it: method, path (below
 * the mount, may carry ?query), a content type and body (NULL for none), and one extra
 * request header (NULL for none). Returns the HTTP status.
 */
static inline int fx_call_h(Fx *f, const char *method, const char *path, const char *ctype,
                            const char *body, const char *hname, const char *hvalue)
{
        char base[128], p[512];
        snprintf(base, sizeof(base), TWIN_TEST_BASE("%s"), f->kind);
        snprintf(p, sizeof(p), "%s", path);
        char *q = strchr(p, '?');
        if (q)
                *q++ = 0;
        _cleanup_json_ json_t *headers = json_object();
        if (ctype)
                json_object_set_new(headers, "content-type", json_string(ctype));
        if (hname)
                json_object_set_new(headers, hname, json_string(hvalue));
        TwinRequest rq = {.method = method,
                          .path = p,
                          .query = q ? q : "",
                          .headers = headers,
                          .body = body,
                          .body_len = body ? strlen(body) : 0,
                          .base_url = base};
        TwinReply rp = {};
        twin_handle(f->twin, &rq, &rp);
        fx_record(f, method, path, headers, body, &rp);
        int status = rp.status;
        twin_reply_done(&rp);
        return status;
}

static inline int fx_call(Fx *f, const char *method, const char *path, const char *ctype,
                          const char *body)
{
        return fx_call_h(f, method, path, ctype, body, NULL, NULL);
}

/* A JSON body (GitHub REST, Slack, MCP). */
static inline int fx_json(Fx *f, const char *method, const char *path, const char *body)
{
        return fx_call(f, method, path, "application/json", body);
}

/* A form body (Stripe, Slack SDKs). */
static inline int fx_form(Fx *f, const char *method, const char *path, const char *body)
{
        return fx_call(f, method, path, "application/x-www-form-urlencoded", body);
}

/* MCP tools/call name(arguments) over POST /mcp; returns the HTTP status (200). */
static inline int fx_mcp(Fx *f, const char *name, const char *arguments)
{
        char msg[2048];
        snprintf(msg, sizeof(msg),
                 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                 "\"%s\",\"arguments\":%s}}",
                 name, arguments);
        return fx_json(f, "POST", "/mcp", msg);
}

/* Appends a row for a reply the twin never gives (an ungated x402 resource): status, body,
 * one header. */
static inline void fx_synthetic(Fx *f, const char *method, const char *path, int status,
                                const char *body_json, const char *hname, const char *hvalue)
{
        _cleanup_json_ json_t *headers = json_object();
        if (hname)
                json_object_set_new(headers, hname, json_string(hvalue));
        TwinReply rp = {.status = status,
                        .body = body_json ? json_loads(body_json, 0, NULL) : NULL,
                        .fidelity = "semantic"};
        fx_record(f, method, path, headers, NULL, &rp);
        twin_reply_done(&rp);
}

static inline bool tape_has_event(const json_t *tape, const char *id)
{
        size_t i;
        json_t *row;
        json_array_foreach (tape, i, row)
                if (streq_ptr(json_get_str(row, "event_id"), id))
                        return true;
        return false;
}

/*
 * Binds sentence to a check of the fixture's twin (it must bind), grades it and checks the
 * status is want and the evidence holds together. final_override (NULL = the twin's world)
 * and tape_override (NULL = the fixture's tape; use tape_missing for a NULL tape) replace
 * the substrates. Returns the outcome; the caller releases it (grade_outcome_done).
 */
static inline GradeOutcome fx_grade_at(Fx *f, const char *sentence, GradeStatus want,
                                       const char *file, int line)
{
        const GradeCheck *c = NULL;
        json_t *args = NULL;
        char *why = NULL;
        GradeOutcome o = {};
        int r = grade_bind(sentence, f->kind, &c, &args, &why);
        if (r != 1) {
                fprintf(stderr, "%s:%d: \"%s\" did not bind: %s\n", file, line, sentence,
                        why ? why : "?");
                check_failures++;
                free(why);
                return o;
        }
        char err[256];
        Twin *seed = NULL;
        CHECK_OK(twin_new(twin_kind_find(f->kind), f->seed, &seed, err, sizeof(err)));
        CHECK_OK(grade_check_eval(c, args, twin_world(seed), twin_world(f->twin), f->tape, &o));
        if (o.status != want) {
                fprintf(stderr, "%s:%d: \"%s\" (%s): %s, wanted %s: %s\n", file, line, sentence,
                        c->id, grade_status_to_string(o.status), grade_status_to_string(want),
                        strempty(o.reason));
                check_failures++;
        }
        CHECK(o.reason && *o.reason);
        /* a state check always cites what it read, so a reader can open it */
        if (c->substrate != GRADE_SUBSTRATE_TAPE && json_array_size(o.state_paths) == 0) {
                fprintf(stderr, "%s:%d: %s cites no state path\n", file, line, c->id);
                check_failures++;
        }
        /* every pointer resolves in the final world, every event id is a row of the tape */
        size_t i;
        json_t *v;
        json_array_foreach (o.state_paths, i, v) {
                if (!grade_pointer_get(twin_world(f->twin), json_string_value(v))) {
                        fprintf(stderr, "%s:%d: %s: pointer %s does not resolve\n", file, line,
                                c->id, json_string_value(v));
                        check_failures++;
                }
        }
        json_array_foreach (o.event_ids, i, v) {
                if (!tape_has_event(f->tape, json_string_value(v))) {
                        fprintf(stderr, "%s:%d: %s: event %s is not on the tape\n", file, line,
                                c->id, json_string_value(v));
                        check_failures++;
                }
        }
        twin_free(seed);
        json_decref(args);
        return o;
}

#define fx_grade(f, sentence, want) fx_grade_at(f, sentence, want, __FILE__, __LINE__)

/* fx_grade without keeping the outcome. */
#define EXPECT(f, sentence, want)                                                      \
        do {                                                                           \
                GradeOutcome _o_ = fx_grade_at(f, sentence, want, __FILE__, __LINE__); \
                grade_outcome_done(&_o_);                                              \
        } while (0)
