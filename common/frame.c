/* SPDX-License-Identifier: MIT */
#include "common/frame.h"

#include <endian.h>

#include "common/json-util.h"
#include "common/jsonbytes.h"
#include "common/util.h"

void frame_done(Frame *f)
{
        if (!f)
                return;
        json_decref(f->head);
        free(f->body);
        *f = (Frame){};
}

static void put_u32(char *p, uint32_t v)
{
        v = htole32(v);
        memcpy(p, &v, 4);
}
static void put_u64(char *p, uint64_t v)
{
        v = htole64(v);
        memcpy(p, &v, 8);
}
static uint32_t get_u32(const char *p)
{
        uint32_t v;
        memcpy(&v, p, 4);
        return le32toh(v);
}
static uint64_t get_u64(const char *p)
{
        uint64_t v;
        memcpy(&v, p, 8);
        return le64toh(v);
}

int frame_encode_raw(uint64_t id, const char *h, size_t hl, const char *const *parts,
                     const size_t *lens, size_t n_parts, char **ret_buf, size_t *ret_len)
{
        size_t body_len = 0;
        for (size_t i = 0; i < n_parts; i++) {
                if (lens[i] > FRAME_MAX || body_len + lens[i] > FRAME_MAX)
                        return -EMSGSIZE;
                body_len += lens[i];
        }
        if (hl > FRAME_MAX || body_len > FRAME_MAX - 12 - hl)
                return -EMSGSIZE;
        size_t n = FRAME_PREFIX + hl + body_len;
        char *buf = malloc(n);
        if (!buf)
                return -ENOMEM;
        put_u32(buf, (uint32_t)(n - 4));
        put_u64(buf + 4, id);
        put_u32(buf + 12, (uint32_t)hl);
        memcpy(buf + FRAME_PREFIX, h, hl);
        char *o = buf + FRAME_PREFIX + hl;
        for (size_t i = 0; i < n_parts; i++)
                if (lens[i]) {
                        memcpy(o, parts[i], lens[i]);
                        o += lens[i];
                }
        *ret_buf = buf;
        *ret_len = n;
        return 0;
}

int frame_encode(uint64_t id, const json_t *head, const void *body, size_t body_len, char **ret_buf,
                 size_t *ret_len)
{
        _cleanup_(jsonbuf_done) JsonBuf hb = {};
        jsonbuf_put_json(&hb, head);
        if (hb.oom)
                return -ENOMEM;
        const char *part = body;
        return frame_encode_raw(id, hb.data, hb.len, &part, &body_len, 1, ret_buf, ret_len);
}

void frame_reader_done(FrameReader *r)
{
        free(r->buf);
        *r = (FrameReader){};
}

int frame_reader_fill(FrameReader *r, int fd)
{
        const size_t chunk = 64 * 1024;
        if (r->off > 0 && r->cap - r->len < chunk) {
                /* what frames were taken out of goes now, once per fill, not per frame */
                memmove(r->buf, r->buf + r->off, r->len - r->off);
                r->len -= r->off;
                r->off = 0;
        }
        if (buf_reserve(&r->buf, &r->cap, r->len + chunk, chunk) < 0)
                return -ENOMEM;
        for (;;) {
                ssize_t k = read(fd, r->buf + r->len, chunk);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return errno == EWOULDBLOCK ? -EAGAIN : negative_errno();
                r->len += (size_t)k;
                return (int)k;
        }
}

int frame_reader_next(FrameReader *r, Frame *ret)
{
        if (r->off == r->len)
                r->off = r->len = 0;
        const char *p = r->buf + r->off;
        size_t avail = r->len - r->off;
        if (avail < 4)
                return 0;
        uint32_t n = get_u32(p);
        if (n > FRAME_MAX)
                return -EMSGSIZE;
        if (n < FRAME_PREFIX - 4)
                return -EBADMSG;
        if (avail < 4 + (size_t)n)
                return 0;
        uint64_t id = get_u64(p + 4);
        uint32_t hl = get_u32(p + 12);
        if (hl > n - 12 || hl == 0)
                return -EBADMSG;
        const char *h = p + FRAME_PREFIX;
        bool binary = h[0] == FRAME_HEAD_CALL || h[0] == FRAME_HEAD_REPLY;
        json_t *head = NULL;
        if (!binary) {
                /*
                 * JSON_ALLOW_NUL: a string may hold U+0000 ("\u0000" is valid JSON, RFC 8259
                 * §7). The pods never put one in a world (pods/twin/form.c refuses NUL), but a
                 * head that says so must still decode: a frame is refused for its framing,
                 * never its bytes.
                 */
                head = json_loadb(h, hl, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
                if (!json_is_object(head)) {
                        json_decref(head);
                        return -EBADMSG;
                }
        }
        /* one allocation: the body, its NUL, then a binary head's bytes */
        size_t bl = n - 12 - hl;
        char *body = malloc(bl + 1 + (binary ? hl : 0));
        if (!body) {
                json_decref(head);
                return -ENOMEM;
        }
        memcpy(body, h + hl, bl);
        body[bl] = 0;
        if (binary)
                memcpy(body + bl + 1, h, hl);
        r->off += 4 + (size_t)n;
        if (r->off == r->len)
                r->off = r->len = 0;
        *ret = (Frame){.id = id,
                       .head = head,
                       .bin = binary ? body + bl + 1 : NULL,
                       .bin_len = binary ? hl : 0,
                       .body = body,
                       .body_len = bl};
        return 1;
}
