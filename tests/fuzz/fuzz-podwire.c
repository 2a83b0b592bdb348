/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: the pod wire decoders on arbitrary frames (the input is one frame's bytes).
 * A request decodes or is refused; a reply decodes or is refused, and a decoded reply
 * encodes again and decodes to the same status.
 */
#include "common/frame.h"
#include "common/json-util.h"
#include "pods/twin/podwire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
                        if (podwire_encode_request(f.id, &rq, &buf, &len) == 0)
                                free(buf);
                }
                TwinReply rp = {};
                if (podwire_decode_reply(&f, &rp) == 0) {
                        char *buf;
                        size_t len;
                        if (podwire_encode_reply(f.id, &rp, &buf, &len) == 0) {
                                FrameReader r2 = {.buf = buf, .len = len, .cap = len};
                                Frame g = {};
                                TwinReply rp2 = {};
                                if (frame_reader_next(&r2, &g) != 1 ||
                                    podwire_decode_reply(&g, &rp2) != 0 || rp2.status != rp.status)
                                        abort();
                                twin_reply_done(&rp2);
                                frame_done(&g);
                                frame_reader_done(&r2);
                        }
                        twin_reply_done(&rp);
                }
                frame_done(&f);
        }
        frame_reader_done(&r);
        return 0;
}
