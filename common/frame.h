/* SPDX-License-Identifier: MIT */
/*
 * Length-prefixed frames between pomed's gateway and a pod (DESIGN.md "Processes").
 *
 * Wire format, all integers little-endian:
 *   u32 length   bytes that follow this field (>= 12, <= FRAME_MAX)
 *   u64 id       request id; a response carries the id of its request
 *   u32 head_len length of the head
 *   head         head_len bytes: a JSON object (UTF-8; strings may hold \u0000), the head
 *                of the rare frames (load, export, a pod's seccomp report), or a binary
 *                head whose first byte is its kind (FRAME_HEAD_CALL, FRAME_HEAD_REPLY: a
 *                call and its reply, every request of the gateway; their layout is
 *                pods/twin/podwire.h's), which the reader keeps as bytes
 *   body         raw bytes, the rest of the frame
 * A SOCK_STREAM socketpair carries them, so a frame has no size cap but ours.
 */
#pragma once

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define FRAME_PREFIX 16u                   /* length + id + head_len */
#define FRAME_MAX    (16u * 1024u * 1024u) /* bytes after the length field */

/* The first byte of a binary head: what the frame is. A JSON head starts with '{'. */
enum {
        FRAME_HEAD_CALL = 0x01,  /* pomed → pod: one call of the gateway */
        FRAME_HEAD_REPLY = 0x02, /* pod → pomed: the reply to a call or an export */
};

typedef struct Frame {
        uint64_t id;
        json_t *head;    /* owned: a JSON head, parsed; for a binary head NULL, or what its
                          * decoder made of it (podwire_decode_*) */
        const char *bin; /* a binary head's bytes (bin[0] is its kind), inside body's
                          * allocation; NULL for a JSON head */
        size_t bin_len;
        char *body; /* owned (with bin), NUL-terminated for convenience; body_len excludes
                     * the NUL */
        size_t body_len;
} Frame;

/* Releases what a Frame owns and zeroes it. Accepts a zeroed frame. */
void frame_done(Frame *f);

/*
 * Serialises one frame with a JSON head into a new malloc'ed buffer (*ret_buf, *ret_len
 * bytes). head is borrowed. Returns 0, -EMSGSIZE when it would exceed FRAME_MAX, -ENOMEM.
 */
int frame_encode(uint64_t id, const json_t *head, const void *body, size_t body_len, char **ret_buf,
                 size_t *ret_len);

/*
 * A frame whose head is already bytes (head_len of them: a serialized JSON object or a
 * binary head) and whose body is made of n pieces (parts[i], lens[i] bytes; a NULL part
 * is empty), copied once into the frame. Same returns as frame_encode.
 */
int frame_encode_raw(uint64_t id, const char *head, size_t head_len, const char *const *parts,
                     const size_t *lens, size_t n, char **ret_buf, size_t *ret_len);

/* Incremental decoder: append bytes, take whole frames out. */
typedef struct FrameReader {
        char *buf;
        size_t len, cap;
        size_t off; /* bytes of buf already taken out as frames (moved out only on a fill) */
} FrameReader;

/* Frees the reader's buffer. */
void frame_reader_done(FrameReader *r);

/*
 * Reads what fd has (one read(2) of up to 64 KiB). Returns bytes read (> 0), 0 on EOF,
 * -EAGAIN when a non-blocking fd has nothing, other negative errno on failure.
 */
int frame_reader_fill(FrameReader *r, int fd);

/*
 * Takes the next complete frame out of the buffer into *ret (caller frees with frame_done).
 * Returns 1 when a frame was produced, 0 when more bytes are needed, -EBADMSG for a
 * malformed frame (bad lengths, a head neither a JSON object nor a binary head's kind) and
 * -EMSGSIZE past FRAME_MAX;
 * after an error the stream is unusable.
 */
int frame_reader_next(FrameReader *r, Frame *ret);
