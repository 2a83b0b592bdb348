/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: the pod wire decoders on arbitrary frames (the input is one frame's bytes).
 * A request decodes or is refused, and a decoded request encodes and decodes again to
 * the same method and path; a reply decodes or is refused, and a decoded reply's parts
 * all lie inside the frame's body (pomed splices them into tape rows unparsed) and it
 * encodes back to the same reply.
 */
#include "common/frame.h"
#include "common/json-util.h"
#include "pods/twin/podwire.h"
#include "pods/twin/redact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void part_inside(const Frame *f, const char *p, size_t len)
{
        if (p && (p < f->body || p + len > f->body + f->body_len))
                abort();
}

/* The headers a call carries across the pod hop: rq's, less the credentials
 * podwire_encode_request leaves with pomed (twin_redact_key names). */
static json_t *headers_sent(const json_t *headers)
{
        json_t *o = json_object();
        const char *k;
        json_t *v;
        json_object_foreach ((json_t *)headers, k, v)
                if (o && json_is_string(v) && !twin_redact_key(k) && json_object_set(o, k, v) < 0)
                        abort();
        return o;
}

/* json_equal, with two NULLs (nothing there) equal */
static bool same_json(const json_t *a, const json_t *b)
{
        return a || b ? json_equal(a, b) : true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size == 0)
                return 0;
        char *copy = malloc(size);
        if (!copy)
                return 0;
        memcpy(copy, data, size);
        FrameReader r = {.buf = copy, .len = size, .cap = size};
        Frame f = {};
        if (frame_reader_next(&r, &f) == 1) {
                TwinRequest rq;
                if (podwire_decode_request(&f, &rq) == 0) {
                        char *buf;
                        size_t len;
                        if (podwire_encode_request(f.id, &rq, &buf, &len) == 0) {
                                FrameReader r2 = {.buf = buf, .len = len, .cap = len};
                                Frame g = {};
                                TwinRequest rq2;
                                _cleanup_json_ json_t *sent = headers_sent(rq.headers);
                                if (!sent || frame_reader_next(&r2, &g) != 1 ||
                                    podwire_decode_request(&g, &rq2) != 0 ||
                                    !streq_ptr(rq.method, rq2.method) ||
                                    !streq_ptr(rq.path, rq2.path) ||
                                    !streq_ptr(rq.query, rq2.query) ||
                                    !json_equal(sent, rq2.headers))
                                        abort();
                                frame_done(&g);
                                frame_reader_done(&r2);
                        }
                }
                TwinReplyBytes rb = {};
                if (podwire_decode_reply(&f, &rb) == 0) {
                        if (rb.status < 100 || rb.status > 599)
                                abort();
                        if (rb.body_len)
                                part_inside(&f, rb.body, rb.body_len);
                        part_inside(&f, rb.request_body, rb.request_body_len);
                        part_inside(&f, rb.state_delta, rb.state_delta_len);
                        part_inside(&f, rb.response_body, rb.response_body_len);
                        /* and encodes back to a reply that decodes the same */
                        char *buf;
                        size_t len;
                        if (podwire_encode_reply_bytes(f.id, &rb, &buf, &len) == 0) {
                                FrameReader r2 = {.buf = buf, .len = len, .cap = len};
                                Frame g = {};
                                TwinReplyBytes rb2 = {};
                                if (frame_reader_next(&r2, &g) != 1 ||
                                    podwire_decode_reply(&g, &rb2) != 0 ||
                                    rb2.status != rb.status || rb2.body_len != rb.body_len ||
                                    !streq_ptr(rb2.tool, rb.tool) ||
                                    !streq_ptr(rb2.error, rb.error) ||
                                    !same_json(rb2.headers, rb.headers) ||
                                    !same_json(rb2.events, rb.events) || g.body_len != f.body_len ||
                                    memcmp(g.body, f.body, f.body_len) != 0)
                                        abort();
                                frame_done(&g);
                                frame_reader_done(&r2);
                        }
                }
                frame_done(&f);
        }
        frame_reader_done(&r);
        return 0;
}
