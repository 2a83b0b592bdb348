/* SPDX-License-Identifier: MIT */
/*
 * The pod wire with hostile bytes: what the pod can send, pomed decodes (U+0000 in heads
 * and bodies); what a caller sends (a raw query or path in bad UTF-8) still encodes.
 */
#include "common/frame.h"
#include "common/json-util.h"
#include "pods/twin/podwire.h"
#include "tests/unit/check.h"

static int reread(char *buf, size_t len, Frame *f)
{
        FrameReader r = {.buf = buf, .len = len, .cap = len};
        int k = frame_reader_next(&r, f);
        frame_reader_done(&r);
        return k;
}

static void test_reply_with_nul(void)
{
        TwinReply rp = {.status = 200, .fidelity = "semantic", .state_mutation = true};
        rp.body = json_pack("{s:s%}", "text", "a\0b", (size_t)3);
        rp.request_body = json_pack("{s:s%}", "text", "\0", (size_t)1);
        rp.state_delta = json_pack("{s:n, s:{s:s%}}", "before", "after", "text", "a\0b", (size_t)3);
        rp.tool = strdup("slack_send_message");
        rp.error = strdup("bad \xff byte"); /* mended, never a failed encode */
        /* a scheduled message the twin delivered before the call travels with the reply */
        rp.events = json_pack("[{s:s, s:s, s:{s:n, s:{s:s}}}]", "tool", "slack_schedule_message",
                              "path", "/chat.scheduleMessage", "state_delta", "before", "after",
                              "text", "later");
        char *buf;
        size_t len;
        CHECK_OK(podwire_encode_reply(7, &rp, &buf, &len));
        Frame f = {};
        CHECK(reread(buf, len, &f) == 1);
        TwinReply got = {};
        CHECK_OK(podwire_decode_reply(&f, &got));
        CHECK(got.status == 200 && got.state_mutation);
        CHECK(json_equal(got.body, rp.body));
        CHECK(json_equal(got.request_body, rp.request_body));
        CHECK(json_equal(got.state_delta, rp.state_delta));
        CHECK(json_equal(got.events, rp.events) && json_array_size(got.events) == 1);
        CHECK(streq_ptr(got.error, "bad \xef\xbf\xbd byte"));
        twin_reply_done(&got);
        twin_reply_done(&rp);
        frame_done(&f);
}

static void test_request_bad_utf8(void)
{
        _cleanup_json_ json_t *headers = json_pack("{s:s}", "content-type", "text/plain");
        TwinRequest rq = {.method = "GET",
                          .path = "/a\xc0\xae",
                          .query = "x=\xff&y=%00",
                          .headers = headers,
                          .body = "\0\1\2",
                          .body_len = 3,
                          .base_url = "http://h"};
        char *buf;
        size_t len;
        CHECK_OK(podwire_encode_request(9, &rq, &buf, &len));
        Frame f = {};
        CHECK(reread(buf, len, &f) == 1);
        TwinRequest got;
        CHECK_OK(podwire_decode_request(&f, &got));
        CHECK(streq(got.path, "/a\xef\xbf\xbd\xef\xbf\xbd"));
        CHECK(streq(got.query, "x=\xef\xbf\xbd&y=%00"));
        CHECK(got.body_len == 3 && memcmp(got.body, "\0\1\2", 3) == 0);
        frame_done(&f);
}

static void test_refusals(void)
{
        /* a reply without a valid status, a body that is not JSON */
        static const char *const heads[] = {"{}", "{\"status\":99}", "{\"status\":\"200\"}"};
        for (size_t i = 0; i < ELEMENTSOF(heads); i++) {
                Frame f = {.head = json_loads(heads[i], 0, NULL)};
                TwinReply rp = {};
                CHECK(podwire_decode_reply(&f, &rp) == -EBADMSG);
                frame_done(&f);
        }
        Frame f = {
                .head = json_pack("{s:i}", "status", 200), .body = strdup("{nope"), .body_len = 5};
        TwinReply rp = {};
        CHECK(podwire_decode_reply(&f, &rp) == -EBADMSG);
        frame_done(&f);
        /* a request without a method or with a relative path */
        Frame q = {.head = json_pack("{s:s, s:s, s:{}}", "op", "call", "path", "x", "headers")};
        TwinRequest rq;
        CHECK(podwire_decode_request(&q, &rq) == -EBADMSG);
        frame_done(&q);
}

int main(void)
{
        test_reply_with_nul();
        test_request_bad_utf8();
        test_refusals();
        return check_finish();
}
