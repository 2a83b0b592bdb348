/* SPDX-License-Identifier: MIT */
/*
 * The pod wire with hostile bytes: what the pod can send, pomed decodes (U+0000 in heads
 * and bodies); what a caller sends (a raw query or path in bad UTF-8) still encodes.
 */
#include <endian.h>

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

/* A frame as a pod could send it: head_len bytes of head, then body. */
static Frame frame_of(const char *head, size_t head_len, const char *body)
{
        char *buf;
        size_t len;
        size_t bl = strlen(body);
        Frame f = {};
        CHECK_OK(frame_encode_raw(1, head, head_len, &body, &bl, 1, &buf, &len));
        CHECK(reread(buf, len, &f) == 1);
        return f;
}

static size_t put32(char *p, uint32_t v)
{
        v = htole32(v);
        memcpy(p, &v, 4);
        return 4;
}

/* A string of the binary heads: length, bytes, NUL (what a pod's encoder writes). */
static size_t putstr(char *p, const char *s, size_t n)
{
        size_t k = put32(p, (uint32_t)n);
        memcpy(p + k, s, n);
        p[k + n] = 0;
        return k + n + 1;
}

/* A reply head: status, flags, parts, no tool, error or events, no headers. */
static size_t reply_head(char *p, uint32_t status, uint32_t flags, int32_t b, int32_t q, int32_t d,
                         int32_t r)
{
        size_t k = 0;
        p[k++] = FRAME_HEAD_REPLY;
        k += put32(p + k, status);
        k += put32(p + k, flags);
        k += put32(p + k, (uint32_t)b);
        k += put32(p + k, (uint32_t)q);
        k += put32(p + k, (uint32_t)d);
        k += put32(p + k, (uint32_t)r);
        k += put32(p + k, UINT32_MAX); /* tool */
        k += put32(p + k, UINT32_MAX); /* error */
        k += put32(p + k, 0);          /* headers */
        k += put32(p + k, UINT32_MAX); /* events */
        return k;
}

static int decode_reply(const char *head, size_t n, const char *body)
{
        Frame f = frame_of(head, n, body);
        TwinReplyBytes rb = {};
        int r = podwire_decode_reply(&f, &rb);
        frame_done(&f);
        return r;
}

static void test_refusals(void)
{
        char h[512];
        size_t n;
        /* not a reply head: a JSON one, a call's */
        static const char json_reply[] = "{\"status\":200,\"parts\":[0,-1,-1,-2]}";
        CHECK(decode_reply(json_reply, strlen(json_reply), "") == -EBADMSG);
        h[0] = FRAME_HEAD_CALL;
        CHECK(decode_reply(h, 1, "") == -EBADMSG);
        /* the well-formed head these cases break */
        n = reply_head(h, 200, 0, 0, -1, -1, -2);
        CHECK(decode_reply(h, n, "") == 0);
        CHECK(decode_reply(h, n - 1, "") == -EBADMSG); /* cut short */
        h[n] = 0;
        CHECK(decode_reply(h, n + 1, "") == -EBADMSG); /* a byte left over */
        static const struct {
                uint32_t status, flags;
                int32_t parts[4];
        } heads[] = {
                /* a status out of range, an unknown flag, parts out of range; the last:
                 * the body's own bytes as the response, but there is no body */
                {99, 0, {0, -1, -1, -2}},   {600, 0, {0, -1, -1, -2}}, {200, 8, {0, -1, -1, -2}},
                {200, 0, {-1, -1, -1, -2}}, {200, 0, {0, -2, -1, -2}}, {200, 0, {0, -1, -2, -2}},
                {200, 0, {0, -1, -1, -3}},  {200, 0, {0, -1, -1, -1}},
        };
        for (size_t i = 0; i < ELEMENTSOF(heads); i++) {
                n = reply_head(h, heads[i].status, heads[i].flags, heads[i].parts[0],
                               heads[i].parts[1], heads[i].parts[2], heads[i].parts[3]);
                CHECK(decode_reply(h, n, "") == -EBADMSG);
        }
        /* parts that do not add up, and tape parts that would break a tape line */
        static const struct {
                int32_t parts[4];
                const char *body;
                int want;
        } bodies[] = {
                {{4, -1, -1, -1}, "{}", -EBADMSG},
                {{5, -1, -1, -1}, "{nope", -EBADMSG},
                {{9, -1, -1, -1}, "{\"a\":\n1}", -EBADMSG},
                {{0, 8, -1, -2}, "{\"a\":1}X", -EBADMSG},
                {{0, -1, 7, -2}, "[1,2],3", -EBADMSG},
                {{0, -1, -1, 4}, "\"\xff\"", -EBADMSG},
                {{0, -1, -1, 8}, "\"\\ud800\"", -EBADMSG},
                {{5, -1, -1, 2}, "{nope{}", 0}, /* text body */
                {{7, -1, -1, -1}, "{\"a\":1}", 0},
        };
        for (size_t i = 0; i < ELEMENTSOF(bodies); i++) {
                n = reply_head(h, 200, 0, bodies[i].parts[0], bodies[i].parts[1],
                               bodies[i].parts[2], bodies[i].parts[3]);
                CHECK(decode_reply(h, n, bodies[i].body) == bodies[i].want);
        }
        /* strings: the tool (after status, flags, parts) as a pod could mangle it */
        static const struct {
                const char *s;
                size_t n;
                int want;
        } tools[] = {
                {"some_tool", 9, 0},
                {"bad\xff", 4, -EBADMSG},
                {"nu\0l", 4, -EBADMSG},
                {"\xc0\xae", 2, -EBADMSG}, /* overlong */
        };
        size_t at = 1 + 4 * 6;
        for (size_t i = 0; i < ELEMENTSOF(tools); i++) {
                n = reply_head(h, 200, 0, 0, -1, -1, -2);
                char tail[64];
                memcpy(tail, h + at + 4, n - at - 4);
                size_t k = at + putstr(h + at, tools[i].s, tools[i].n);
                memcpy(h + k, tail, n - at - 4);
                CHECK(decode_reply(h, k + n - at - 4, "") == tools[i].want);
        }
        /* a string without its NUL, and one whose length runs past the head */
        n = reply_head(h, 200, 0, 0, -1, -1, -2);
        put32(h + at, 2);
        memcpy(h + at + 4, "ab!", 3);
        CHECK(decode_reply(h, at + 7, "") == -EBADMSG);
        put32(h + at, UINT32_MAX - 1);
        CHECK(decode_reply(h, n, "") == -EBADMSG);
        /* headers: a repeated name; events that are not an array */
        n = reply_head(h, 200, 0, 0, -1, -1, -2) - 8;
        n += put32(h + n, 2);
        for (int i = 0; i < 2; i++) {
                n += putstr(h + n, "etag", 4);
                n += putstr(h + n, "x", 1);
        }
        n += put32(h + n, UINT32_MAX);
        CHECK(decode_reply(h, n, "") == -EBADMSG);
        n = reply_head(h, 200, 0, 0, -1, -1, -2) - 4;
        n += putstr(h + n, "{\"a\":1}", 7);
        CHECK(decode_reply(h, n, "") == -EBADMSG);
        n = reply_head(h, 200, 0, 0, -1, -1, -2) - 4;
        n += putstr(h + n, "[{\"tool\":\"x\"}]", 14);
        CHECK(decode_reply(h, n, "") == 0);

        /* a request: not a call head, a relative path, a head cut short */
        TwinRequest rq;
        static const char json_call[] =
                "{\"op\":\"call\",\"method\":\"GET\",\"path\":\"/x\",\"headers\":{}}";
        Frame q = frame_of(json_call, strlen(json_call), "");
        CHECK(podwire_decode_request(&q, &rq) == -EBADMSG);
        frame_done(&q);
        n = 0;
        h[n++] = FRAME_HEAD_CALL;
        n += putstr(h + n, "GET", 3);
        size_t path_at = n;
        n += putstr(h + n, "/x", 2);
        n += putstr(h + n, "", 0);
        n += putstr(h + n, "http://h", 8);
        n += put32(h + n, 0);
        q = frame_of(h, n, "");
        CHECK_OK(podwire_decode_request(&q, &rq));
        CHECK(streq(rq.path, "/x") && streq(rq.base_url, "http://h") &&
              json_object_size(rq.headers) == 0);
        frame_done(&q);
        q = frame_of(h, n - 1, "");
        CHECK(podwire_decode_request(&q, &rq) == -EBADMSG);
        frame_done(&q);
        h[path_at + 4] = 'x';
        q = frame_of(h, n, "");
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
