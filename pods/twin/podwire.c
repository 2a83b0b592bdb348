/* SPDX-License-Identifier: MIT */
#include "pods/twin/podwire.h"

#include "common/json-util.h"
#include "common/jsonbytes.h"
#include "pods/twin/kind.h"
#include "pods/twin/redact.h"

/*
 * A string member from bytes that need not be UTF-8 (a raw query, a decoded path): mended
 * with U+FFFD rather than refused, so that a caller's bad bytes reach the twin, which
 * answers them in its own envelope, instead of failing the frame (jansson refuses
 * invalid UTF-8 in json_string and json_pack "s").
 */
static int set_text(json_t *o, const char *key, const char *s)
{
        json_t *v = s ? twin_json_string_lossy(s, strlen(s)) : json_null();
        return v && json_object_set_new(o, key, v) == 0 ? 0 : -ENOMEM;
}

int podwire_encode_request(uint64_t id, const TwinRequest *rq, char **ret_buf, size_t *ret_len)
{
        /* written as bytes: every call of the gateway goes through here */
        _cleanup_(jsonbuf_done) JsonBuf h = {};
        jsonbuf_puts(&h, "{\"op\":\"call\",\"headers\":{");
        /* The caller's credentials stay with pomed, which checked them: no twin reads them
         * (the pod knows its sandbox from its load frame), a pod never holds an agent's
         * token, and a bearer JWT was most of the bytes the pod parsed per call. */
        const char *key;
        json_t *hv;
        bool first = true;
        json_object_foreach (rq->headers, key, hv) {
                if (twin_redact_key(key))
                        continue;
                if (!first)
                        jsonbuf_put(&h, ",", 1);
                first = false;
                jsonbuf_put_string_lossy(&h, key, strlen(key));
                jsonbuf_put(&h, ":", 1);
                jsonbuf_put_json(&h, hv);
        }
        jsonbuf_put(&h, "}", 1);
        static const char *const keys[] = {
                ",\"method\":", ",\"path\":", ",\"query\":", ",\"base_url\":"};
        const char *vals[] = {rq->method, rq->path, rq->query, rq->base_url};
        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                const char *v = strempty(vals[i]);
                jsonbuf_puts(&h, keys[i]);
                jsonbuf_put_string_lossy(&h, v, strlen(v));
        }
        jsonbuf_put(&h, "}", 1);
        if (h.oom)
                return -ENOMEM;
        const char *body = rq->body;
        size_t body_len = rq->body_len;
        return frame_encode_raw(id, h.data, h.len, &body, &body_len, 1, ret_buf, ret_len);
}

int podwire_decode_request(const Frame *f, TwinRequest *rq)
{
        json_t *h = f->head;
        const char *method = json_get_str(h, "method"), *path = json_get_str(h, "path");
        json_t *headers = json_object_get(h, "headers");
        if (!method || !path || !json_is_object(headers) || path[0] != '/')
                return -EBADMSG;
        *rq = (TwinRequest){
                .method = method,
                .path = path,
                .query = strempty(json_get_str(h, "query")),
                .headers = headers,
                .body = f->body,
                .body_len = f->body_len,
                .base_url = strempty(json_get_str(h, "base_url")),
        };
        return 0;
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

        _cleanup_json_ json_t *head = json_pack(
                "{s:i, s:b, s:s, s:b, s:[I, I, I, I]}", "status", rp->status, "state_mutation",
                rp->state_mutation, "fidelity", rp->fidelity ? rp->fidelity : "semantic",
                "idempotency_dedupe", rp->idempotency_dedupe, "parts", (json_int_t)body_len,
                req ? (json_int_t)req_len : -1, delta ? (json_int_t)delta_len : -1,
                same   ? -1
                : resp ? (json_int_t)resp_len
                       : -2);
        if (!head)
                return -ENOMEM;
        if (set_text(head, "tool", rp->tool) < 0 || set_text(head, "error", rp->error) < 0 ||
            json_object_set(head, "headers", rp->headers ? rp->headers : json_null()) < 0 ||
            (rp->events && json_object_set(head, "events", rp->events) < 0))
                return -ENOMEM;
        const char *const parts[] = {body, req, delta, resp};
        const size_t lens[] = {body_len, req_len, delta_len, resp_len};
        return frame_encode_parts(id, head, parts, lens, ELEMENTSOF(parts), ret_buf, ret_len);
}

/* A tape part of the parts list: its length, or -1 for null (-2 too, for the response). */
static bool part_len(json_t *v, json_int_t min, json_int_t *ret)
{
        if (!json_is_integer(v) || json_integer_value(v) < min ||
            json_integer_value(v) > (json_int_t)FRAME_MAX)
                return false;
        *ret = json_integer_value(v);
        return true;
}

/* jansson's parser goes no deeper (JSON_PARSER_MAX_DEPTH): neither does a tape row. */
#define TAPE_PART_DEPTH 2048

int podwire_decode_reply(const Frame *f, TwinReplyBytes *rb)
{
        json_t *h = f->head;
        json_t *status = json_object_get(h, "status"), *parts = json_object_get(h, "parts");
        if (!json_is_integer(status) || json_integer_value(status) < 100 ||
            json_integer_value(status) > 599 || json_array_size(parts) != 4)
                return -EBADMSG;
        json_int_t b, q, d, rl;
        if (!part_len(json_array_get(parts, 0), 0, &b) ||
            !part_len(json_array_get(parts, 1), -1, &q) ||
            !part_len(json_array_get(parts, 2), -1, &d) ||
            !part_len(json_array_get(parts, 3), -2, &rl))
                return -EBADMSG;
        /* the parts must fill the body exactly */
        uint64_t want = (uint64_t)b + (uint64_t)(q > 0 ? q : 0) + (uint64_t)(d > 0 ? d : 0) +
                        (uint64_t)(rl > 0 ? rl : 0);
        if (want != f->body_len || (rl == -1 && b == 0))
                return -EBADMSG;
        const char *p = f->body;
        json_t *headers = json_object_get(h, "headers"), *events = json_object_get(h, "events");
        *rb = (TwinReplyBytes){
                .status = (int)json_integer_value(status),
                .headers = json_is_object(headers) ? headers : NULL,
                .body = p,
                .body_len = (size_t)b,
                .tool = json_get_str(h, "tool"),
                .error = json_get_str(h, "error"),
                .fidelity = streq_ptr(json_get_str(h, "fidelity"), "unsupported") ? "unsupported"
                                                                                  : "semantic",
                .state_mutation = json_is_true(json_object_get(h, "state_mutation")),
                .idempotency_dedupe = json_is_true(json_object_get(h, "idempotency_dedupe")),
                .events = json_is_array(events) ? events : NULL,
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
