/* SPDX-License-Identifier: MIT */
/*
 * SHA-1 (FIPS 180-4 §6.1), for the git object ids of the GitHub twin (blob, tree and
 * commit shas are SHA-1 over git's object encoding). A small portable implementation:
 * the pod is a static binary that must not link libcrypto. Not for anything that needs
 * collision resistance.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define TWIN_SHA1_SIZE 20 /* bytes of a digest */
#define TWIN_SHA1_HEX  41 /* bytes of a lower-case hex digest with its NUL */

typedef struct TwinSha1 {
        uint32_t h[5];
        uint64_t len; /* bytes hashed so far */
        uint8_t buf[64];
        size_t n; /* bytes waiting in buf */
} TwinSha1;

/* Starts a digest (FIPS 180-4 §5.3.1 initial hash value). */
void twin_sha1_init(TwinSha1 *s);

/* Hashes n more bytes of data (may be NULL when n is 0). */
void twin_sha1_update(TwinSha1 *s, const void *data, size_t n);

/* Pads, writes the 20-byte digest into out and leaves s unusable until twin_sha1_init. */
void twin_sha1_final(TwinSha1 *s, uint8_t out[TWIN_SHA1_SIZE]);

/* The 20-byte digest as 40 lower-case hex digits plus NUL into out. */
void twin_sha1_to_hex(const uint8_t digest[TWIN_SHA1_SIZE], char out[TWIN_SHA1_HEX]);

/* One-shot: the lower-case hex SHA-1 of n bytes of data into out. */
void twin_sha1_hex(const void *data, size_t n, char out[TWIN_SHA1_HEX]);
