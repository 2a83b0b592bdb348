/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: the frame reader over an arbitrary byte stream, fed in uneven chunks. It
 * never crashes or leaks, and every frame it yields encodes back to the same frame (a binary
 * head to the same bytes, a JSON head to an equal document).
 */
#include "common/frame.h"
#include "common/json-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        FrameReader r = {};
        size_t pos = 0, step = size ? (size_t)data[0] % 17 + 1 : 1;
        int k = 0;
        while (pos < size && k >= 0) {
                size_t n = size - pos < step ? size - pos : step;
                if (r.cap - r.len < n) {
                        char *b = realloc(r.buf, r.len + n + 64);
                        if (!b)
                                break;
                        r.buf = b;
                        r.cap = r.len + n + 64;
                }
                memcpy(r.buf + r.len, data + pos, n);
                r.len += n;
                pos += n;
                Frame f = {};
                while ((k = frame_reader_next(&r, &f)) == 1) {
                        char *buf;
                        size_t len;
                        /* a binary head goes back as its bytes, a JSON one as its dump */
                        const char *body = f.body;
                        size_t bl = f.body_len;
                        int e = f.bin ? frame_encode_raw(f.id, f.bin, f.bin_len, &body, &bl, 1,
                                                         &buf, &len)
                                      : frame_encode(f.id, f.head, f.body, f.body_len, &buf, &len);
                        if (e == 0) {
                                Frame g = {};
                                FrameReader r2 = {.buf = buf, .len = len, .cap = len};
                                if (frame_reader_next(&r2, &g) != 1 || g.id != f.id ||
                                    g.body_len != f.body_len ||
                                    memcmp(g.body, f.body, f.body_len) != 0 || !g.bin != !f.bin ||
                                    g.bin_len != f.bin_len ||
                                    (f.bin ? memcmp(g.bin, f.bin, f.bin_len) != 0
                                           : !json_equal(g.head, f.head)))
                                        abort();
                                frame_done(&g);
                                frame_reader_done(&r2);
                        }
                        frame_done(&f);
                }
        }
        frame_reader_done(&r);
        return 0;
}
