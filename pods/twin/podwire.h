/* SPDX-License-Identifier: MIT */
/*
 * TwinRequest / TwinReply <-> frame heads, for the gateway (one side) and the
 * pod loop (other side). Keeping both directions in one module keeps them in
 * step; the unit test round-trips them.
 *
 * Request head:  {"op":"call","method","path","query","headers","base_url"}; body = request body.
 * Reply head:    {"status","headers","tool","state_mutation","state_delta","fidelity","error",
 *                 "request_body","idempotency_dedupe",
 *                 "events"? (TwinReply.events)}; body = JSON text of TwinReply.body or
 * empty. Other ops (pomed → pod): {"op":"load","twin","seed_len"} with body = seed JSON then the
 * stage-2 seccomp BPF (struct sock_filter[]); {"op":"export"} → reply body = the full world.
 */
#pragma once

#include "common/frame.h"
#include "pods/twin/twin.h"

/* Encodes rq as a "call" frame with id into a new buffer. 0, -EMSGSIZE, -ENOMEM. */
int podwire_encode_request(uint64_t id, const TwinRequest *rq, char **ret_buf, size_t *ret_len);

/*
 * Points *rq into frame f (borrowed: valid while f lives). Returns 0, -EBADMSG when
 * the head lacks a field or has the wrong type.
 */
int podwire_decode_request(const Frame *f, TwinRequest *rq);

/* Encodes rp as the reply frame for id. 0, -EMSGSIZE, -ENOMEM. */
int podwire_encode_reply(uint64_t id, const TwinReply *rp, char **ret_buf, size_t *ret_len);

/*
 * Decodes a reply frame into *rp (new references; caller frees with twin_reply_done).
 * fidelity is mapped back onto the static strings. 0, -EBADMSG, -ENOMEM.
 */
int podwire_decode_reply(const Frame *f, TwinReply *rp);
