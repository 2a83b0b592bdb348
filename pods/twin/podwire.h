/* SPDX-License-Identifier: MIT */
/*
 * TwinRequest / TwinReply <-> frame heads, for the gateway (one side) and the
 * pod loop (other side). Keeping both directions in one module keeps them in
 * step; the unit test round-trips them.
 *
 * A call and its reply have binary heads (common/frame.h; integers little-endian; a
 * string is a u32 length n, n bytes of UTF-8 without a NUL, then a NUL, and a u32 of
 * 0xffffffff where a string may be absent):
 *   call head:  u8 FRAME_HEAD_CALL, method, path, query, base_url, headers;
 *               body = the request body.
 *   reply head: u8 FRAME_HEAD_REPLY, u32 status, u32 flags (1 state_mutation,
 *               2 idempotency_dedupe, 4 fidelity "unsupported"), i32 parts[B, Q, D, R],
 *               tool?, error?, headers, events? (compact JSON: TwinReply.events);
 *               body = B bytes of the HTTP body as the caller gets it (compact JSON, or a
 *               text body's own bytes), then the tape's request_body (Q bytes of compact
 *               JSON, -1: null), its state_delta (D bytes, -1: null) and its response_body
 *               (R bytes; -1: the HTTP body's own bytes, -2: null) — each already redacted
 *               by the pod (pods/twin/redact.h), so pomed forwards and splices bytes and
 *               never parses a body (DESIGN.md "The supervisor").
 *   headers:    u32 count, then count name/value string pairs.
 * Binary, not JSON, because every request of the gateway crosses it twice: a JSON head
 * was the largest parse on each side of the hop.
 * Other ops (pomed → pod) have JSON heads: {"op":"load","twin","seed_len","pack_after_ms"?}
 * with body = seed JSON then the stage-2 seccomp BPF (struct sock_filter[]);
 * pack_after_ms: idle time before the pod packs its world (0 or absent: never);
 * {"op":"export"} → a reply whose body is the full world.
 */
#pragma once

#include "common/frame.h"
#include "pods/twin/twin.h"

/*
 * Encodes rq as a "call" frame with id into a new buffer: its headers without the ones
 * twin_redact_key names (authorization, cookie, x-api-key…: pomed has checked the
 * credential, the pod never gets it). 0, -EMSGSIZE, -ENOMEM.
 */
int podwire_encode_request(uint64_t id, const TwinRequest *rq, char **ret_buf, size_t *ret_len);

/* Whether f is a call (a binary call head). */
bool podwire_is_call(const Frame *f);

/*
 * Points *rq into frame f (borrowed: valid while f lives; the headers object is made
 * here and owned by f->head). Returns 0, -EBADMSG for a frame that is not a call, a head
 * cut short or with bytes left over, a string that is not UTF-8 or holds a NUL, a
 * repeated header name or a path without its leading '/'.
 */
int podwire_decode_request(Frame *f, TwinRequest *rq);

/*
 * A reply as bytes: what pomed gets from a pod, and what the front forwards and splices
 * into the tape row (front_tape_line). Every pointer is borrowed from the frame (or the
 * owner) it was decoded from. The tape parts are compact JSON, redacted, checked by
 * podwire_decode_reply (json_scan_compact); NULL stands for JSON null.
 */
typedef struct TwinReplyBytes {
        int status;
        json_t *headers;  /* object name → string (string members only), or NULL */
        const char *body; /* the HTTP body as the caller gets it */
        size_t body_len;  /* bytes; 0 for none */
        const char *request_body, *state_delta, *response_body; /* tape parts, or NULL */
        size_t request_body_len, state_delta_len, response_body_len;
        const char *tool;     /* or NULL */
        const char *error;    /* or NULL */
        const char *fidelity; /* "semantic" or "unsupported" (static when decoded) */
        bool state_mutation, idempotency_dedupe;
        json_t *events; /* TwinReply.events, or NULL */
} TwinReplyBytes;

/*
 * Encodes rb as the reply frame for id (the inverse of podwire_decode_reply: the parts
 * as they are, response_body == body with body_len > 0 travelling as "the body's own
 * bytes"). 0, -EINVAL for a status outside 100..599, -EMSGSIZE, -ENOMEM.
 */
int podwire_encode_reply_bytes(uint64_t id, const TwinReplyBytes *rb, char **ret_buf,
                               size_t *ret_len);

/*
 * Encodes rp as the reply frame for id: the HTTP body serialized once, the tape parts
 * redacted where they are produced (rq, the request served, gives the tape's request_body
 * when rp has none: its body parsed as JSON, as the gateway's tape row always did; NULL
 * for a reply to no request). 0, -EMSGSIZE, -ENOMEM.
 */
int podwire_encode_reply(uint64_t id, const TwinReply *rp, const TwinRequest *rq, char **ret_buf,
                         size_t *ret_len);

/*
 * Points *rb into reply frame f (valid while f lives; the headers and events made here
 * are owned by f->head). Returns 0, -ENOMEM, or -EBADMSG for a frame that is not a reply,
 * a head cut short, with bytes left over or unknown flags, a status outside 100..599,
 * parts that do not add up to the body, a string that is not UTF-8 or holds a NUL, events
 * that are not a JSON array, or tape parts that are not one compact JSON value each (a
 * pod must not break the tape's lines).
 */
int podwire_decode_reply(Frame *f, TwinReplyBytes *rb);

/*
 * rp as bytes without a pod (an in-process twin, tests): encoded and decoded as a pod's
 * reply would be, into *ret_frame (owner of what *rb points to; frame_done it). 0,
 * -EMSGSIZE, -ENOMEM.
 */
int podwire_reply_bytes(const TwinReply *rp, const TwinRequest *rq, Frame *ret_frame,
                        TwinReplyBytes *rb);
