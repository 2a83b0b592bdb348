/* SPDX-License-Identifier: MIT */
#include "pods/twin/podwire.h"

#include <endian.h>

#include "common/json-util.h"
#include "common/jsonbytes.h"
#include "common/text.h"
#include "common/util.h"
#include "pods/twin/redact.h"

/*
 * The binary heads of a call and its reply (layout in podwire.h). Strings travel as
 * u32 length, the bytes, then a NUL, so that the decoder can hand out pointers into the
 * frame as C strings without copying; a u32 of PODWIRE_NONE stands for no string.
 */
#define PODWIRE_NONE UINT32_MAX

static void put_u32(JsonBuf *b, uint32_t v)
{
        v = htole32(v);
        jsonbuf_put(b, (const char *)&v, 4);
}

static void put_str(JsonBuf *b, const char *s, size_t n)
{
        if (n >= PODWIRE_NONE) {
                b->oom = true; /* cannot happen below FRAME_MAX; never a wrong length */
                return;
        }
        put_u32(b, (uint32_t)n);
        jsonbuf_put(b, s, n);
        jsonbuf_put(b, "", 1);
}

/*
 * A string that need not be UTF-8 (a raw query, a decoded path, a message quoting the
 * caller): mended with U+FFFD rather than refused, so that a caller's bad bytes reach the
 * twin, which answers them in its own envelope, instead of failing the frame. NULL: none.
 */
static void put_text(JsonBuf *b, const char *s)
{
        if (!s) {
                put_u32(b, PODWIRE_NONE);
                return;
        }
        size_t n = strlen(s);
        if (utf8_valid(s, n)) {
                put_str(b, s, n);
                return;
        }
        _cleanup_free_ char *m = NULL;
        size_t ml;
        if (utf8_mend(s, n, &m, &ml) < 0) {
                b->oom = true;
                return;
        }
        put_str(b, m, ml);
}

/* A header object's string members as a count and name/value pairs; skip(name) leaves one out. */
static void put_headers(JsonBuf *b, const json_t *headers, bool (*skip)(const char *))
{
        size_t at = b->len;
        uint32_t n = 0;
        put_u32(b, 0);
        const char *key;
        json_t *v;
        json_object_foreach ((json_t *)headers, key, v) {
                if (!json_is_string(v) || (skip && skip(key)))
                        continue;
                put_text(b, key);
                put_text(b, json_string_value(v));
                n++;
        }
        if (!b->oom) {
                n = htole32(n);
                memcpy(b->data + at, &n, 4);
        }
}

typedef struct Cursor {
        const char *p;
        size_t left;
        bool bad; /* the head ended early or broke a rule: every read after it fails */
} Cursor;

static const void *take(Cursor *c, size_t n)
{
        if (c->bad || c->left < n) {
                c->bad = true;
                return NULL;
        }
        const char *p = c->p;
        c->p += n;
        c->left -= n;
        return p;
}

static uint32_t get_u32(Cursor *c)
{
        uint32_t v = 0;
        const void *p = take(c, 4);
        if (p)
                memcpy(&v, p, 4);
        return le32toh(v);
}

/*
 * The next string: well-formed UTF-8 without a NUL inside, NUL-terminated in the frame.
 * NULL for PODWIRE_NONE when nullable, else a broken head (and NULL).
 */
static const char *get_text(Cursor *c, bool nullable, size_t *ret_len)
{
        uint32_t n = get_u32(c);
        if (c->bad || (n == PODWIRE_NONE && nullable))
                return NULL;
        const char *s = n < PODWIRE_NONE ? take(c, (size_t)n + 1) : NULL;
        if (!s || s[n] != 0 || memchr(s, 0, n) || !utf8_valid(s, n)) {
                c->bad = true;
                return NULL;
        }
        if (ret_len)
                *ret_len = n;
        return s;
}

/* The pairs put_headers wrote, as a new object (names unique); NULL for a broken head. */
static json_t *get_headers(Cursor *c)
{
        uint32_t n = get_u32(c);
        _cleanup_json_ json_t *o = json_object();
        if (!o)
                c->bad = true;
        for (uint32_t i = 0; i < n && !c->bad; i++) {
                size_t vl = 0;
                const char *k = get_text(c, false, NULL), *v = get_text(c, false, &vl);
                if (c->bad)
                        break;
                if (json_object_get(o, k) ||
                    json_object_set_new_nocheck(o, k, json_stringn_nocheck(v, vl)) < 0)
                        c->bad = true;
        }
        return c->bad ? NULL : TAKE_PTR(o);
}

bool podwire_is_call(const Frame *f)
{
        return f->bin && f->bin[0] == FRAME_HEAD_CALL;
}

int podwire_encode_request(uint64_t id, const TwinRequest *rq, char **ret_buf, size_t *ret_len)
{
        _cleanup_(jsonbuf_done) JsonBuf h = {};
        jsonbuf_put(&h, (const char[]){FRAME_HEAD_CALL}, 1);
        const char *vals[] = {rq->method, rq->path, rq->query, rq->base_url};
        for (size_t i = 0; i < ELEMENTSOF(vals); i++)
                put_text(&h, strempty(vals[i]));
        /* The caller's credentials stay with pomed, which checked them: no twin reads them
         * (the pod knows its sandbox from its load frame), a pod never holds an agent's
         * token, and a bearer JWT was most of the bytes the pod parsed per call. */
        put_headers(&h, rq->headers, twin_redact_key);
        if (h.oom)
                return -ENOMEM;
        const char *body = rq->body;
        size_t body_len = rq->body_len;
        return frame_encode_raw(id, h.data, h.len, &body, &body_len, 1, ret_buf, ret_len);
}

int podwire_decode_request(Frame *f, TwinRequest *rq)
{
        if (!podwire_is_call(f))
                return -EBADMSG;
        Cursor c = {.p = f->bin + 1, .left = f->bin_len - 1};
        const char *v[4];
        for (size_t i = 0; i < ELEMENTSOF(v); i++)
                v[i] = get_text(&c, false, NULL);
        json_t *headers = get_headers(&c);
        if (c.bad || c.left != 0 || v[1][0] != '/') {
                json_decref(headers);
                return -EBADMSG;
        }
        json_decref(f->head);
        f->head = headers;
        *rq = (TwinRequest){
                .method = v[0],
                .path = v[1],
                .query = v[2],
                .headers = headers,
                .body = f->body,
                .body_len = f->body_len,
                .base_url = v[3],
        };
        return 0;
}

enum {
        REPLY_STATE_MUTATION = 1u << 0,
        REPLY_IDEMPOTENCY_DEDUPE = 1u << 1,
        REPLY_UNSUPPORTED = 1u << 2, /* fidelity "unsupported"; else "semantic" */
};

int podwire_encode_reply_bytes(uint64_t id, const TwinReplyBytes *rb, char **ret_buf,
                               size_t *ret_len)
{
        if (rb->status < 100 || rb->status > 599)
                return -EINVAL;
        bool same = rb->response_body && rb->response_body == rb->body && rb->body_len > 0;
        _cleanup_(jsonbuf_done) JsonBuf h = {};
        jsonbuf_put(&h, (const char[]){FRAME_HEAD_REPLY}, 1);
        put_u32(&h, (uint32_t)rb->status);
        uint32_t flags = (rb->state_mutation ? REPLY_STATE_MUTATION : 0) |
                         (rb->idempotency_dedupe ? REPLY_IDEMPOTENCY_DEDUPE : 0) |
                         (streq_ptr(rb->fidelity, "unsupported") ? REPLY_UNSUPPORTED : 0);
        put_u32(&h, flags);
        const int64_t parts[] = {
                (int64_t)rb->body_len,
                rb->request_body ? (int64_t)rb->request_body_len : -1,
                rb->state_delta ? (int64_t)rb->state_delta_len : -1,
                same                ? -1
                : rb->response_body ? (int64_t)rb->response_body_len
                                    : -2,
        };
        for (size_t i = 0; i < ELEMENTSOF(parts); i++) {
                if (parts[i] > (int64_t)FRAME_MAX)
                        return -EMSGSIZE;
                put_u32(&h, (uint32_t)(int32_t)parts[i]);
        }
        put_text(&h, rb->tool);
        put_text(&h, rb->error);
        put_headers(&h, rb->headers, NULL);
        /* what the twin did on its own before the call: rare, so a document */
        _cleanup_free_ char *events = rb->events ? json_dumps(rb->events, JSON_COMPACT) : NULL;
        if (rb->events && !events)
                return -ENOMEM;
        if (events)
                put_str(&h, events, strlen(events));
        else
                put_u32(&h, PODWIRE_NONE);
        if (h.oom)
                return -ENOMEM;
        const char *const bytes[] = {rb->body, rb->request_body, rb->state_delta,
                                     same ? NULL : rb->response_body};
        const size_t lens[] = {rb->body_len, rb->request_body ? rb->request_body_len : 0,
                               rb->state_delta ? rb->state_delta_len : 0,
                               same || !rb->response_body ? 0 : rb->response_body_len};
        return frame_encode_raw(id, h.data, h.len, bytes, lens, ELEMENTSOF(bytes), ret_buf,
                                ret_len);
}

int podwire_encode_reply(uint64_t id, const TwinReply *rp, const TwinRequest *rq, char **ret_buf,
                         size_t *ret_len)
{
        /* the HTTP body: a text body's own bytes, else compact JSON */
        _cleanup_(jsonbuf_done) JsonBuf json_body = {};
        const char *body = NULL;
        size_t body_len = 0;
        const char *text = twin_reply_text(rp->headers, rp->body);
        if (text) {
                body = text;
                body_len = json_string_length(rp->body);
        } else if (rp->body) {
                jsonbuf_put_json(&json_body, rp->body);
                if (json_body.oom)
                        return -ENOMEM;
                body = json_body.data;
                body_len = json_body.len;
        }
        /* the tape's parts, redacted here, where the data is */
        _cleanup_free_ char *req = NULL, *delta = NULL, *resp = NULL;
        size_t req_len = 0, delta_len = 0, resp_len = 0;
        _cleanup_json_ json_t *parsed = NULL;
        const json_t *request_body = rp->request_body;
        if (!request_body && rq && rq->body_len > 0)
                request_body = parsed = json_loadb(rq->body, rq->body_len, JSON_DECODE_ANY, NULL);
        /* a reply larger than a frame fails as soon as it is known to, before its next part
         * is made (a pod near its memory limit must answer 500, not be OOM-killed) */
        int r = body_len > FRAME_MAX ? -EMSGSIZE : twin_redact_dumps(request_body, &req, &req_len);
        if (r >= 0 && body_len + req_len > FRAME_MAX)
                r = -EMSGSIZE;
        if (r >= 0)
                r = twin_redact_dumps(rp->state_delta, &delta, &delta_len);
        if (r >= 0 && body_len + req_len + delta_len > FRAME_MAX)
                r = -EMSGSIZE;
        bool same = rp->body && !text && !twin_redact_needed(rp->body);
        if (r >= 0 && rp->body && !same)
                r = twin_redact_dumps(rp->body, &resp, &resp_len);
        if (r < 0)
                return r;
        TwinReplyBytes rb = {
                .status = rp->status,
                .headers = rp->headers,
                .body = body,
                .body_len = body_len,
                .request_body = req,
                .request_body_len = req_len,
                .state_delta = delta,
                .state_delta_len = delta_len,
                .response_body = same ? body : resp,
                .response_body_len = same ? body_len : resp_len,
                .tool = rp->tool,
                .error = rp->error,
                .fidelity = rp->fidelity,
                .state_mutation = rp->state_mutation,
                .idempotency_dedupe = rp->idempotency_dedupe,
                .events = rp->events,
        };
        return podwire_encode_reply_bytes(id, &rb, ret_buf, ret_len);
}

/* jansson's parser goes no deeper (JSON_PARSER_MAX_DEPTH): neither does a tape row. */
#define TAPE_PART_DEPTH 2048

int podwire_decode_reply(Frame *f, TwinReplyBytes *rb)
{
        if (!f->bin || f->bin[0] != FRAME_HEAD_REPLY)
                return -EBADMSG;
        Cursor c = {.p = f->bin + 1, .left = f->bin_len - 1};
        uint32_t status = get_u32(&c), flags = get_u32(&c);
        int32_t part[4];
        for (size_t i = 0; i < ELEMENTSOF(part); i++)
                part[i] = (int32_t)get_u32(&c);
        const char *tool = get_text(&c, true, NULL), *error = get_text(&c, true, NULL);
        _cleanup_json_ json_t *headers = get_headers(&c);
        size_t el = 0;
        const char *ev = get_text(&c, true, &el);
        if (c.bad || c.left != 0 || status < 100 || status > 599 || flags > 7)
                return -EBADMSG;
        int64_t b = part[0], q = part[1], d = part[2], rl = part[3];
        if (b < 0 || q < -1 || d < -1 || rl < -2 || (rl == -1 && b == 0))
                return -EBADMSG;
        /* the parts must fill the body exactly */
        uint64_t want = (uint64_t)b + (uint64_t)(q > 0 ? q : 0) + (uint64_t)(d > 0 ? d : 0) +
                        (uint64_t)(rl > 0 ? rl : 0);
        if (want != f->body_len)
                return -EBADMSG;
        _cleanup_json_ json_t *events =
                ev ? json_loadb(ev, el, JSON_REJECT_DUPLICATES, NULL) : NULL;
        if (ev && !json_is_array(events))
                return -EBADMSG;
        /* what the decoder made lives as long as the frame */
        if (json_object_size(headers) == 0)
                json_decref(TAKE_PTR(headers));
        if (headers || events) {
                json_t *own = json_object();
                if (!own || (headers && json_object_set(own, "headers", headers) < 0) ||
                    (events && json_object_set(own, "events", events) < 0)) {
                        json_decref(own);
                        return -ENOMEM;
                }
                json_decref(f->head);
                f->head = own;
        }
        const char *p = f->body;
        *rb = (TwinReplyBytes){
                .status = (int)status,
                .headers = headers,
                .body = p,
                .body_len = (size_t)b,
                .tool = tool,
                .error = error,
                .fidelity = flags & REPLY_UNSUPPORTED ? "unsupported" : "semantic",
                .state_mutation = flags & REPLY_STATE_MUTATION,
                .idempotency_dedupe = flags & REPLY_IDEMPOTENCY_DEDUPE,
                .events = events,
        };
        p += b;
        if (q >= 0) {
                rb->request_body = p;
                rb->request_body_len = (size_t)q;
                p += q;
        }
        if (d >= 0) {
                rb->state_delta = p;
                rb->state_delta_len = (size_t)d;
                p += d;
        }
        if (rl >= 0) {
                rb->response_body = p;
                rb->response_body_len = (size_t)rl;
        } else if (rl == -1) {
                rb->response_body = rb->body;
                rb->response_body_len = rb->body_len;
        }
        if ((rb->request_body &&
             !json_scan_compact(rb->request_body, rb->request_body_len, TAPE_PART_DEPTH)) ||
            (rb->state_delta &&
             !json_scan_compact(rb->state_delta, rb->state_delta_len, TAPE_PART_DEPTH)) ||
            (rb->response_body &&
             !json_scan_compact(rb->response_body, rb->response_body_len, TAPE_PART_DEPTH))) {
                *rb = (TwinReplyBytes){};
                return -EBADMSG;
        }
        return 0;
}

int podwire_reply_bytes(const TwinReply *rp, const TwinRequest *rq, Frame *ret_frame,
                        TwinReplyBytes *rb)
{
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int r = podwire_encode_reply(0, rp, rq, &buf, &len);
        if (r < 0)
                return r;
        FrameReader rd = {.buf = TAKE_PTR(buf), .len = len, .cap = len};
        Frame f = {};
        r = frame_reader_next(&rd, &f);
        frame_reader_done(&rd);
        if (r != 1)
                return r < 0 ? r : -EBADMSG;
        r = podwire_decode_reply(&f, rb);
        if (r < 0) {
                frame_done(&f);
                return r;
        }
        *ret_frame = f;
        return 0;
}
