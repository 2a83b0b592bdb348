/* SPDX-License-Identifier: MIT */
/*
 * TwinRequest / TwinReply <-> frame heads, for the gateway (one side) and the
 * pod loop (other side). Keeping both directions in one module keeps them in
 * step; the unit test round-trips them.
 *
 * Request head:  {"op":"call","method","path","query","headers","base_url"}; body = request body.
 * Reply head:    {"status","headers","tool","state_mutation","fidelity","error",
 *                 "idempotency_dedupe","events"? (TwinReply.events),"parts":[B,Q,D,R]};
 *                body = B bytes of the HTTP body as the caller gets it (compact JSON, or a
 *                text body's own bytes), then the tape's request_body (Q bytes of compact
 *                JSON, -1: null), its state_delta (D bytes, -1: null) and its response_body
 *                (R bytes; -1: the HTTP body's own bytes, -2: null) — each already redacted
 *                by the pod (pods/twin/redact.h), so pomed forwards and splices bytes and
 *                never parses a body (DESIGN.md "The supervisor").
 * Other ops (pomed → pod): {"op":"load","twin","seed_len","pack_after_ms"?} with body =
 * seed JSON then the stage-2 seccomp BPF (struct sock_filter[]); pack_after_ms: idle time
 * before the pod packs its world (0 or absent: never); {"op":"export"} → reply body = the
 * full world.
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

/*
 * Points *rq into frame f (borrowed: valid while f lives). Returns 0, -EBADMSG when
 * the head lacks a field or has the wrong type.
 */
int podwire_decode_request(const Frame *f, TwinRequest *rq);

/*
 * A reply as bytes: what pomed gets from a pod, and what the front forwards and splices
 * into the tape row (front_tape_line). Every pointer is borrowed from the frame (or the
 * owner) it was decoded from. The tape parts are compact JSON, redacted, checked by
 * podwire_decode_reply (json_scan_compact); NULL stands for JSON null.
 */
typedef struct TwinReplyBytes {
        int status;
        json_t *headers;  /* object name → string, or NULL */
        const char *body; /* the HTTP body as the caller gets it */
        size_t body_len;  /* bytes; 0 for none */
        const char *request_body, *state_delta, *response_body; /* tape parts, or NULL */
        size_t request_body_len, state_delta_len, response_body_len;
        const char *tool;     /* or NULL */
        const char *error;    /* or NULL */
        const char *fidelity; /* static: "semantic" or "unsupported" */
        bool state_mutation, idempotency_dedupe;
        json_t *events; /* TwinReply.events, or NULL */
} TwinReplyBytes;

/*
 * Encodes rp as the reply frame for id: the HTTP body serialized once, the tape parts
 * redacted where they are produced (rq, the request served, gives the tape's request_body
 * when rp has none: its body parsed as JSON, as the gateway's tape row always did; NULL
 * for a reply to no request). 0, -EMSGSIZE, -ENOMEM.
 */
int podwire_encode_reply(uint64_t id, const TwinReply *rp, const TwinRequest *rq, char **ret_buf,
                         size_t *ret_len);

/*
 * Points *rb into reply frame f (valid while f lives). Returns 0, or -EBADMSG for a head
 * without a valid status or parts, parts that do not add up to the body, or tape parts
 * that are not one compact JSON value each (a pod must not break the tape's lines).
 */
int podwire_decode_reply(const Frame *f, TwinReplyBytes *rb);

/*
 * rp as bytes without a pod (an in-process twin, tests): encoded and decoded as a pod's
 * reply would be, into *ret_frame (owner of what *rb points to; frame_done it). 0,
 * -EMSGSIZE, -ENOMEM.
 */
int podwire_reply_bytes(const TwinReply *rp, const TwinRequest *rq, Frame *ret_frame,
                        TwinReplyBytes *rb);
