/* SPDX-License-Identifier: MIT */
/* Frame codec and pod wire round trips, including split reads and malformed input. */
#include <assert.h>
#include <sys/socket.h>

#include "common/frame.h"
#include "common/json-util.h"
#include "pods/twin/podwire.h"
#include "tests/unit/check.h"

static void test_roundtrip_split(void)
{
        _cleanup_json_ json_t *head = json_pack("{s:s}", "op", "call");
        char *buf;
        size_t len;
        CHECK_OK(frame_encode(42, head, "hello", 5, &buf, &len));
        CHECK(len == FRAME_PREFIX + strlen("{\"op\":\"call\"}") + 5);

        int sv[2];
        CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
        FrameReader r = {};
        Frame f = {};
        /* Deliver one byte at a time: the reader must never produce a frame early. */
        for (size_t i = 0; i < len; i++) {
                CHECK(write(sv[0], buf + i, 1) == 1);
                CHECK(frame_reader_fill(&r, sv[1]) == 1);
                int k = frame_reader_next(&r, &f);
                CHECK(k == (i + 1 == len ? 1 : 0));
        }
        CHECK(f.id == 42);
        CHECK(streq(json_get_str(f.head, "op"), "call"));
        CHECK(f.body_len == 5 && memcmp(f.body, "hello", 5) == 0);
        frame_done(&f);
        frame_reader_done(&r);
        free(buf);
        close(sv[0]);
        close(sv[1]);
}

static void test_malformed(void)
{
        FrameReader r = {};
        /* length says 4 GiB: refused, not allocated */
        r.buf = malloc(64);
        r.cap = 64;
        memcpy(r.buf, "\xff\xff\xff\xff", 4);
        r.len = 4;
        Frame f = {};
        CHECK(frame_reader_next(&r, &f) == -EMSGSIZE);
        /* head length larger than the frame */
        memcpy(r.buf,
               "\x10\x00\x00\x00"
               "\x01\x00\x00\x00\x00\x00\x00\x00"
               "\xff\x00\x00\x00"
               "{}  ",
               20);
        r.len = 20;
        CHECK(frame_reader_next(&r, &f) == -EBADMSG);
        /* head not an object */
        memcpy(r.buf,
               "\x0e\x00\x00\x00"
               "\x01\x00\x00\x00\x00\x00\x00\x00"
               "\x02\x00\x00\x00"
               "[]",
               18);
        r.len = 18;
        CHECK(frame_reader_next(&r, &f) == -EBADMSG);
        frame_reader_done(&r);
}

static void test_podwire(void)
{
        _cleanup_json_ json_t *headers =
                json_pack("{s:s, s:s, s:s, s:s}", "content-type", "application/json",
                          "authorization", "Bearer ghp_secret", "cookie", "s=1", "accept", "*/*");
        TwinRequest rq = {.method = "POST",
                          .path = "/repos/acme/api/issues/1/comments",
                          .query = "a=1",
                          .headers = headers,
                          .body = "{\"body\":\"x\"}",
                          .body_len = 12,
                          .base_url = "http://127.0.0.1:7071/github/s/ses_x"};
        char *buf;
        size_t len;
        CHECK_OK(podwire_encode_request(7, &rq, &buf, &len));
        FrameReader r = {.buf = buf, .len = len, .cap = len};
        Frame f = {};
        CHECK(frame_reader_next(&r, &f) == 1);
        TwinRequest back;
        CHECK_OK(podwire_decode_request(&f, &back));
        CHECK(streq(back.method, "POST") && streq(back.path, rq.path) && streq(back.query, "a=1"));
        CHECK(back.body_len == 12 && memcmp(back.body, rq.body, 12) == 0);
        CHECK(streq(back.base_url, rq.base_url));
        CHECK(streq(json_get_str(back.headers, "content-type"), "application/json"));
        CHECK(streq(json_get_str(back.headers, "accept"), "*/*"));
        /* the credentials pomed checked never reach the pod */
        CHECK(json_object_size(back.headers) == 2);
        CHECK(!memmem(buf, len, "ghp_secret", 10) && !memmem(buf, len, "s=1", 3));
        frame_done(&f);
        frame_reader_done(&r);

        TwinReply rp = {.status = 201,
                        .body = json_pack("{s:i}", "id", 1),
                        .tool = strdup("add_issue_comment"),
                        .state_mutation = true,
                        .fidelity = "semantic"};
        twin_reply_delta(&rp, NULL, rp.body);
        CHECK_OK(podwire_encode_reply(7, &rp, NULL, &buf, &len));
        r = (FrameReader){.buf = buf, .len = len, .cap = len};
        CHECK(frame_reader_next(&r, &f) == 1);
        TwinReplyBytes rb = {};
        CHECK_OK(podwire_decode_reply(&f, &rb));
        CHECK(rb.status == 201 && rb.state_mutation && streq(rb.tool, "add_issue_comment"));
        CHECK(rb.body_len == 8 && memcmp(rb.body, "{\"id\":1}", 8) == 0);
        /* no secret in it: the tape's response_body is the body's own bytes */
        CHECK(rb.response_body == rb.body && rb.response_body_len == rb.body_len);
        _cleanup_json_ json_t *delta = json_loadb(rb.state_delta, rb.state_delta_len, 0, NULL);
        CHECK(json_is_null(json_object_get(delta, "before")));
        CHECK(json_equal(json_object_get(delta, "after"), rp.body));
        CHECK(streq(rb.fidelity, "semantic") && !rb.error && !rb.request_body);
        twin_reply_done(&rp);
        frame_done(&f);
        frame_reader_done(&r);
}

int main(void)
{
        test_roundtrip_split();
        test_malformed();
        test_podwire();
        return check_finish();
}
