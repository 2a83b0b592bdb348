/* SPDX-License-Identifier: MIT */
#include "pods/twin/podwire.h"

#include "common/json-util.h"
#include "pods/twin/kind.h"

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
        _cleanup_json_ json_t *head =
                json_pack("{s:s, s:o}", "op", "call", "headers",
                          rq->headers ? json_incref(rq->headers) : json_object());
        if (!head || set_text(head, "method", strempty(rq->method)) < 0 ||
            set_text(head, "path", strempty(rq->path)) < 0 ||
            set_text(head, "query", strempty(rq->query)) < 0 ||
            set_text(head, "base_url", strempty(rq->base_url)) < 0)
                return -ENOMEM;
        return frame_encode(id, head, rq->body, rq->body_len, ret_buf, ret_len);
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

int podwire_encode_reply(uint64_t id, const TwinReply *rp, char **ret_buf, size_t *ret_len)
{
        _cleanup_json_ json_t *head =
                json_pack("{s:i, s:b, s:s, s:b}", "status", rp->status, "state_mutation",
                          rp->state_mutation, "fidelity", rp->fidelity ? rp->fidelity : "semantic",
                          "idempotency_dedupe", rp->idempotency_dedupe);
        if (!head)
                return -ENOMEM;
        if (set_text(head, "tool", rp->tool) < 0 || set_text(head, "error", rp->error) < 0 ||
            json_object_set(head, "headers", rp->headers ? rp->headers : json_null()) < 0 ||
            json_object_set(head, "state_delta", rp->state_delta ? rp->state_delta : json_null()) <
                    0 ||
            json_object_set(head, "request_body",
                            rp->request_body ? rp->request_body : json_null()) < 0 ||
            (rp->events && json_object_set(head, "events", rp->events) < 0))
                return -ENOMEM;
        _cleanup_free_ char *body = NULL;
        if (rp->body) {
                body = json_dumps(rp->body, JSON_COMPACT | JSON_ENCODE_ANY);
                if (!body)
                        return -ENOMEM;
        }
        return frame_encode(id, head, body, body ? strlen(body) : 0, ret_buf, ret_len);
}

static json_t *nonnull(json_t *j)
{
        return j && !json_is_null(j) ? json_incref(j) : NULL;
}

int podwire_decode_reply(const Frame *f, TwinReply *rp)
{
        json_t *h = f->head;
        json_t *status = json_object_get(h, "status");
        if (!json_is_integer(status) || json_integer_value(status) < 100 ||
            json_integer_value(status) > 599)
                return -EBADMSG;
        json_t *body = NULL;
        if (f->body_len > 0) {
                /* as frame heads: any JSON text decodes, U+0000 in strings included */
                body = json_loadb(f->body, f->body_len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
                if (!body)
                        return -EBADMSG;
        }
        const char *tool = json_get_str(h, "tool"), *error = json_get_str(h, "error");
        *rp = (TwinReply){
                .status = (int)json_integer_value(status),
                .headers = nonnull(json_object_get(h, "headers")),
                .body = body,
                .tool = tool ? strdup(tool) : NULL,
                .state_mutation = json_is_true(json_object_get(h, "state_mutation")),
                .state_delta = nonnull(json_object_get(h, "state_delta")),
                .fidelity = streq_ptr(json_get_str(h, "fidelity"), "unsupported") ? "unsupported"
                                                                                  : "semantic",
                .error = error ? strdup(error) : NULL,
                .request_body = nonnull(json_object_get(h, "request_body")),
                .idempotency_dedupe = json_is_true(json_object_get(h, "idempotency_dedupe")),
                .events = json_is_array(json_object_get(h, "events"))
                                  ? json_incref(json_object_get(h, "events"))
                                  : NULL,
        };
        if ((tool && !rp->tool) || (error && !rp->error)) {
                twin_reply_done(rp);
                return -ENOMEM;
        }
        return 0;
}
