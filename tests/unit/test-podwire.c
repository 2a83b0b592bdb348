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

static json_t *part(const char *p, size_t n)
{
        return p ? json_loadb(p, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL) : NULL;
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
        CHECK_OK(podwire_encode_reply(7, &rp, NULL, &buf, &len));
        Frame f = {};
        CHECK(reread(buf, len, &f) == 1);
        TwinReplyBytes got = {};
        CHECK_OK(podwire_decode_reply(&f, &got));
        CHECK(got.status == 200 && got.state_mutation);
        _cleanup_json_ json_t *body = part(got.body, got.body_len);
        _cleanup_json_ json_t *req = part(got.request_body, got.request_body_len);
        _cleanup_json_ json_t *delta = part(got.state_delta, got.state_delta_len);
        CHECK(json_equal(body, rp.body));
        CHECK(json_equal(req, rp.request_body));
        CHECK(json_equal(delta, rp.state_delta));
        CHECK(json_equal(got.events, rp.events) && json_array_size(got.events) == 1);
        CHECK(streq_ptr(got.error, "bad \xef\xbf\xbd byte"));
        twin_reply_done(&rp);
        frame_done(&f);
}

/* Secrets are redacted where the reply is made: the tape's parts, never the caller's body. */
static void test_reply_redacted(void)
{
        static const char key[] = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
        TwinReply rp = {.status = 200, .fidelity = "semantic"};
        rp.body = json_pack("{s:{s:s, s:s}}", "data", "password", "hunter2", "note", key);
        rp.headers = json_pack("{s:s}", "Content-Type", "application/json");
        char *buf;
        size_t len;
        /* no request_body from the twin: the request's body, parsed, as the tape had it */
        TwinRequest rq = {.body = "{\"token\":\"x\"}", .body_len = 13};
        CHECK_OK(podwire_encode_reply(3, &rp, &rq, &buf, &len));
        Frame f = {};
        CHECK(reread(buf, len, &f) == 1);
        TwinReplyBytes got = {};
        CHECK_OK(podwire_decode_reply(&f, &got));
        CHECK(memmem(got.body, got.body_len, key, strlen(key)) &&
              memmem(got.body, got.body_len, "hunter2", 7));
        CHECK(got.response_body != got.body);
        CHECK(!memmem(got.response_body, got.response_body_len, key, strlen(key)) &&
              !memmem(got.response_body, got.response_body_len, "hunter2", 7));
        _cleanup_json_ json_t *req = part(got.request_body, got.request_body_len);
        CHECK(streq(json_get_str(req, "token"), "[REDACTED]"));
        twin_reply_done(&rp);
        frame_done(&f);

        /* a text body is the caller's bytes; the tape holds it as a JSON string */
        TwinReply tx = {.status = 200, .fidelity = "semantic"};
        tx.body = json_string("plain\ntext");
        tx.headers = json_pack("{s:s}", "Content-Type", "text/plain");
        CHECK_OK(podwire_encode_reply(4, &tx, NULL, &buf, &len));
        CHECK(reread(buf, len, &f) == 1);
        CHECK_OK(podwire_decode_reply(&f, &got));
        CHECK(got.body_len == 10 && memcmp(got.body, "plain\ntext", 10) == 0);
        CHECK(got.response_body_len == 13 &&
              memcmp(got.response_body, "\"plain\\ntext\"", 13) == 0);
        twin_reply_done(&tx);
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

/* A frame of head (JSON text) and body, as a pod could send it. */
static Frame frame_of(const char *head, const char *body)
{
        return (Frame){
                .head = json_loads(head, 0, NULL), .body = strdup(body), .body_len = strlen(body)};
}

static void test_refusals(void)
{
        /* a reply without a valid status or parts */
        static const char *const heads[] = {
                "{}",
                "{\"status\":99,\"parts\":[0,-1,-1,-2]}",
                "{\"status\":\"200\",\"parts\":[0,-1,-1,-2]}",
                "{\"status\":200}",
                "{\"status\":200,\"parts\":[0,-1,-1]}",
                "{\"status\":200,\"parts\":[0,-2,-1,-2]}",
                "{\"status\":200,\"parts\":[0,-1,-1,-1]}", /* the body's bytes, but none */
        };
        for (size_t i = 0; i < ELEMENTSOF(heads); i++) {
                Frame f = frame_of(heads[i], "");
                TwinReplyBytes rb = {};
                CHECK(podwire_decode_reply(&f, &rb) == -EBADMSG);
                frame_done(&f);
        }
        /* parts that do not add up, and tape parts that would break a tape line */
        static const struct {
                const char *head, *body;
                int want;
        } bodies[] = {
                {"{\"status\":200,\"parts\":[4,-1,-1,-1]}", "{}", -EBADMSG},
                {"{\"status\":200,\"parts\":[5,-1,-1,-1]}", "{nope", -EBADMSG},
                {"{\"status\":200,\"parts\":[9,-1,-1,-1]}", "{\"a\":\n1}", -EBADMSG},
                {"{\"status\":200,\"parts\":[0,8,-1,-2]}", "{\"a\":1}X", -EBADMSG},
                {"{\"status\":200,\"parts\":[0,-1,7,-2]}", "[1,2],3", -EBADMSG},
                {"{\"status\":200,\"parts\":[0,-1,-1,4]}", "\"\xff\"", -EBADMSG},
                {"{\"status\":200,\"parts\":[0,-1,-1,8]}", "\"\\ud800\"", -EBADMSG},
                {"{\"status\":200,\"parts\":[5,-1,-1,2]}", "{nope{}", 0}, /* text body */
                {"{\"status\":200,\"parts\":[7,-1,-1,-1]}", "{\"a\":1}", 0},
        };
        for (size_t i = 0; i < ELEMENTSOF(bodies); i++) {
                Frame f = frame_of(bodies[i].head, bodies[i].body);
                TwinReplyBytes rb = {};
                CHECK(podwire_decode_reply(&f, &rb) == bodies[i].want);
                frame_done(&f);
        }
        /* a request without a method or with a relative path */
        Frame q = {.head = json_pack("{s:s, s:s, s:{}}", "op", "call", "path", "x", "headers")};
        TwinRequest rq;
        CHECK(podwire_decode_request(&q, &rq) == -EBADMSG);
        frame_done(&q);
}

int main(void)
{
        test_reply_with_nul();
        test_reply_redacted();
        test_request_bad_utf8();
        test_refusals();
        return check_finish();
}
