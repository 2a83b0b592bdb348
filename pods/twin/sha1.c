/* SPDX-License-Identifier: MIT */
/* SHA-1 as FIPS 180-4 §6.1.2 describes it: 512-bit blocks, 80 rounds, big-endian words. */
#include <string.h>

#include "pods/twin/sha1.h"

static uint32_t rol(uint32_t x, unsigned n)
{
        return (x << n) | (x >> (32 - n));
}

static void block(TwinSha1 *s, const uint8_t *p)
{
        uint32_t w[80];
        for (size_t t = 0; t < 16; t++)
                w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
                       (uint32_t)p[4 * t + 2] << 8 | (uint32_t)p[4 * t + 3];
        for (size_t t = 16; t < 80; t++)
                w[t] = rol(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);

        uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4];
        for (size_t t = 0; t < 80; t++) {
                uint32_t f, k;
                if (t < 20) {
                        f = (b & c) | (~b & d);
                        k = 0x5a827999;
                } else if (t < 40) {
                        f = b ^ c ^ d;
                        k = 0x6ed9eba1;
                } else if (t < 60) {
                        f = (b & c) | (b & d) | (c & d);
                        k = 0x8f1bbcdc;
                } else {
                        f = b ^ c ^ d;
                        k = 0xca62c1d6;
                }
                uint32_t tmp = rol(a, 5) + f + e + k + w[t];
                e = d;
                d = c;
                c = rol(b, 30);
                b = a;
                a = tmp;
        }
        s->h[0] += a;
        s->h[1] += b;
        s->h[2] += c;
        s->h[3] += d;
        s->h[4] += e;
}

void twin_sha1_init(TwinSha1 *s)
{
        *s = (TwinSha1){.h = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0}};
}

void twin_sha1_update(TwinSha1 *s, const void *data, size_t n)
{
        const uint8_t *p = data;
        s->len += n;
        while (n > 0) {
                size_t k = 64 - s->n < n ? 64 - s->n : n;
                memcpy(s->buf + s->n, p, k);
                s->n += k;
                p += k;
                n -= k;
                if (s->n == 64) {
                        block(s, s->buf);
                        s->n = 0;
                }
        }
}

void twin_sha1_final(TwinSha1 *s, uint8_t out[TWIN_SHA1_SIZE])
{
        uint64_t bits = s->len * 8;
        /* §5.1.1: a 1 bit, zeros up to 56 mod 64 bytes, the length in bits as 64-bit big-endian */
        static const uint8_t pad[64] = {0x80};
        size_t k = s->n < 56 ? 56 - s->n : 120 - s->n;
        uint8_t len[8];
        for (size_t i = 0; i < 8; i++)
                len[i] = (uint8_t)(bits >> (56 - 8 * i));
        twin_sha1_update(s, pad, k);
        twin_sha1_update(s, len, 8);
        for (size_t i = 0; i < 5; i++)
                for (size_t j = 0; j < 4; j++)
                        out[4 * i + j] = (uint8_t)(s->h[i] >> (24 - 8 * j));
}

void twin_sha1_to_hex(const uint8_t digest[TWIN_SHA1_SIZE], char out[TWIN_SHA1_HEX])
{
        static const char hex[] = "0123456789abcdef";
        for (size_t i = 0; i < TWIN_SHA1_SIZE; i++) {
                out[2 * i] = hex[digest[i] >> 4];
                out[2 * i + 1] = hex[digest[i] & 15];
        }
        out[2 * TWIN_SHA1_SIZE] = 0;
}

void twin_sha1_hex(const void *data, size_t n, char out[TWIN_SHA1_HEX])
{
        TwinSha1 s;
        uint8_t d[TWIN_SHA1_SIZE];
        twin_sha1_init(&s);
        twin_sha1_update(&s, data, n);
        twin_sha1_final(&s, d);
        twin_sha1_to_hex(d, out);
}
