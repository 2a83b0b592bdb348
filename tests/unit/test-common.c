/* SPDX-License-Identifier: MIT */
/* The shared helpers of common/: hash map, string vectors, file I/O, RFC 3339 time. */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "check.h"
#include "common/fileio.h"
#include "common/hashmap.h"
#include "common/json-util.h"
#include "common/jsonbytes.h"
#include "common/strv.h"
#include "common/text.h"
#include "common/timeutil.h"

static void test_hashmap_strings(void)
{
        Hashmap *h = hashmap_new(HASHMAP_STRING);
        CHECK(h);
        enum { N = 5000 };
        static char keys[N][16];
        for (int i = 0; i < N; i++) {
                snprintf(keys[i], sizeof(keys[i]), "ses_%d", i);
                CHECK_OK(hashmap_put(h, keys[i], keys[i]));
        }
        CHECK(hashmap_size(h) == N);
        CHECK(hashmap_put(h, keys[7], keys[8]) == -EEXIST);
        CHECK(hashmap_get(h, keys[7]) == keys[7]);
        CHECK(hashmap_put(h, "x", NULL) == -EINVAL);
        /* remove every other one: the rest must stay reachable (backward shift) */
        for (int i = 0; i < N; i += 2)
                CHECK(hashmap_remove(h, keys[i]) == keys[i]);
        for (int i = 0; i < N; i++)
                CHECK(hashmap_get(h, keys[i]) == (i % 2 ? keys[i] : NULL));
        CHECK(hashmap_size(h) == N / 2);
        CHECK(hashmap_remove(h, "ses_missing") == NULL);
        for (int i = 1; i < N; i += 2)
                CHECK(hashmap_remove(h, keys[i]) == keys[i]);
        CHECK(hashmap_size(h) == 0);
        CHECK(hashmap_get(h, keys[1]) == NULL);
        hashmap_free(h);
        CHECK(hashmap_free(NULL) == NULL);
}

static void test_hashmap_integers(void)
{
        Hashmap *h = hashmap_new(HASHMAP_U64);
        int values[64];
        for (int i = 0; i < 64; i++)
                CHECK_OK(hashmap_put_u64(h, (uint64_t)i * 4096, &values[i]));
        for (int i = 0; i < 64; i++)
                CHECK(hashmap_get_u64(h, (uint64_t)i * 4096) == &values[i]);
        CHECK(hashmap_get_u64(h, 1) == NULL);
        CHECK(hashmap_remove_u64(h, 4096) == &values[1]);
        CHECK(hashmap_get_u64(h, 4096) == NULL);
        CHECK(hashmap_get_u64(h, 8192) == &values[2]);
        hashmap_free(h);
}

static void test_strv(void)
{
        _cleanup_strv_free_ char **l = strv_new();
        CHECK(l && strv_length(l) == 0);
        CHECK_OK(strv_extend(&l, "a"));
        CHECK_OK(strv_extendf(&l, "%s-%d", "b", 2));
        CHECK(strv_length(l) == 2 && streq(l[1], "b-2") && l[2] == NULL);
        CHECK(strv_contains(l, "a") && !strv_contains(l, "c"));
        char **fresh = NULL;
        CHECK_OK(strv_extend(&fresh, "z"));
        CHECK(strv_length(fresh) == 1);
        CHECK(strv_free(fresh) == NULL);
        CHECK(strv_length(NULL) == 0 && !strv_contains(NULL, "a"));
}

static void test_fileio(void)
{
        char dir[] = "/tmp/test-common.XXXXXX";
        CHECK(mkdtemp(dir));
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHECK(dfd >= 0);

        CHECK_OK(write_file_at(dfd, "a.txt", "hello", 5, 0640, 0));
        CHECK_OK(write_file_at(dfd, "a.txt", "bye", 3, 0640, 1)); /* atomic replace */
        char *buf = NULL;
        size_t len = 0;
        CHECK_OK(read_file_at(dfd, "a.txt", 100, &buf, &len));
        CHECK(buf && len == 3 && streq(buf, "bye"));
        free(buf);
        CHECK(read_file_at(dfd, "a.txt", 2, &buf, &len) == -EFBIG);
        CHECK(read_file_at(dfd, "missing", 100, &buf, &len) == -ENOENT);
        CHECK(faccessat(dfd, ".#a.txt.tmp", F_OK, 0) < 0); /* no temporary left */
        /* a write the disk refuses (here RLIMIT_FSIZE's EFBIG, as ENOSPC would): the atomic
         * file keeps its old bytes whole and no temporary is left; a plain one is cut short */
        {
                static char big[64 * 1024];
                memset(big, 'x', sizeof(big));
                struct rlimit old, small = {.rlim_cur = 4096, .rlim_max = RLIM_INFINITY};
                CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
                small.rlim_max = old.rlim_max;
                void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
                CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
                int ra = write_file_at(dfd, "a.txt", big, sizeof(big), 0640,
                                       WRITE_FILE_ATOMIC | WRITE_FILE_SYNC);
                int rp = write_file_at(dfd, "plain.txt", big, sizeof(big), 0640, 0);
                CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
                signal(SIGXFSZ, prev);
                CHECK(ra < 0 && rp < 0);
                CHECK_OK(read_file_at(dfd, "a.txt", 100, &buf, &len));
                CHECK(buf && len == 3 && streq(buf, "bye"));
                free(buf);
                CHECK(faccessat(dfd, ".#a.txt.tmp", F_OK, 0) < 0);
                CHECK_OK(read_file_at(dfd, "plain.txt", sizeof(big) + 1, &buf, &len));
                CHECK(len == 4096); /* what the atomic write spares the run's files */
                free(buf);
        }
        CHECK(symlinkat("a.txt", dfd, "link") == 0);
        CHECK(read_file_at(dfd, "link", 100, &buf, &len) == -ELOOP);
        /* a pseudo-file whose size stat(2) does not know */
        CHECK_OK(read_file_at(AT_FDCWD, "/proc/self/status", 1 << 20, &buf, &len));
        CHECK(buf && strstr(buf, "Pid:"));
        free(buf);

        char deep[PATH_MAX];
        snprintf(deep, sizeof(deep), "%s/x/y/z", dir);
        CHECK_OK(mkdir_p(deep, 0755));
        CHECK_OK(mkdir_p(deep, 0755)); /* exists: fine */
        CHECK_OK(write_file_at(dfd, "x/y/z/f", "1", 1, 0600, 0));
        CHECK(symlinkat("/etc", dfd, "x/y/etc") == 0);
        CHECK_OK(rm_rf_at(dfd, "x"));
        CHECK(faccessat(dfd, "x", F_OK, AT_SYMLINK_NOFOLLOW) < 0);
        CHECK(access("/etc/passwd", F_OK) == 0); /* the link was removed, not followed */
        CHECK_OK(rm_rf_at(dfd, "x"));            /* already gone: fine */
        close(dfd);
        CHECK_OK(rm_rf_at(AT_FDCWD, dir));
        CHECK(access(dir, F_OK) < 0);
}

static void test_format_int(void)
{
        static const int64_t values[] = {0, 1, -1, 9, 10, -10, 1796476106, INT64_MAX, INT64_MIN};
        for (size_t i = 0; i < ELEMENTSOF(values); i++) {
                char want[32], buf[DECIMAL_MAX];
                snprintf(want, sizeof(want), "%" PRId64, values[i]);
                CHECK(streq(format_int(buf, values[i]), want));
        }
}

static void test_time(void)
{
        char buf[RFC3339_MAX];
        format_rfc3339(1796108901, buf, sizeof(buf));
        CHECK(streq(buf, "2026-12-01T07:08:21Z"));
        format_rfc3339_usec(INT64_C(1796108901) * 1000000 + 123456, buf, sizeof(buf));
        CHECK(streq(buf, "2026-12-01T07:08:21.123Z"));
        int64_t t = 0;
        CHECK_OK(parse_rfc3339("2026-12-01T07:08:21Z", &t));
        CHECK(t == 1796108901);
        CHECK_OK(parse_rfc3339("2026-12-01T07:08:21.123Z", &t));
        CHECK(t == 1796108901);
        static const char *const bad[] = {"",
                                          "2026-12-01",
                                          "2026-12-01T07:08:21",
                                          "2026-12-01T07:08:21+01:00",
                                          "2026-12-01T07:08:21.Z",
                                          "2026-12-01T07:08:21Zjunk"};
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                CHECK(parse_rfc3339(bad[i], &t) == -EINVAL);
        CHECK(parse_rfc3339(NULL, &t) == -EINVAL);
        CHECK(now_usec(CLOCK_MONOTONIC) > 0 && now_sec() > 1700000000);
}

/* JSON bytes: the writer's strings and reals parse back; the scanner takes what
 * json_dumps(JSON_COMPACT) writes and nothing that would break a line or a parser. */
static void test_jsonbytes(void)
{
        JsonBuf b = {};
        jsonbuf_put(&b, "[", 1);
        jsonbuf_put_string(&b, "a\"b\\c\n\x01\0z\xc3\xa9", 12);
        jsonbuf_put(&b, ",", 1);
        jsonbuf_put_real(&b, 2.0);
        jsonbuf_put(&b, ",", 1);
        jsonbuf_put_real(&b, 0.1);
        jsonbuf_put(&b, ",", 1);
        jsonbuf_put_int(&b, INT64_MIN);
        jsonbuf_put(&b, "]", 1);
        CHECK(!b.oom && json_scan_compact(b.data, b.len, 16));
        json_t *j = json_loadb(b.data, b.len, JSON_ALLOW_NUL, NULL);
        CHECK(j && json_string_length(json_array_get(j, 0)) == 12 &&
              memcmp(json_string_value(json_array_get(j, 0)), "a\"b\\c\n\x01\0z\xc3\xa9", 12) == 0);
        CHECK(json_real_value(json_array_get(j, 1)) == 2.0 && json_is_real(json_array_get(j, 1)));
        CHECK(json_real_value(json_array_get(j, 2)) == 0.1);
        CHECK(json_integer_value(json_array_get(j, 3)) == INT64_MIN);
        _cleanup_free_ char *dump = json_dumps(j, JSON_COMPACT);
        CHECK(dump && strlen(dump) == b.len && memcmp(dump, b.data, b.len) == 0);
        json_decref(j);
        jsonbuf_done(&b);

        /* the compact writer is json_dumps' bytes */
        static const char *const docs[] = {
                "{\"a\":[1,-2,3.5,1e300,-0.0,true,false,null],\"b\":{\"\":\"x\\u0000y\"}}",
                "\"caf\\u00e9 \\u20ac \\ud83d\\ude00 \\t\\u007f/\"",
                "[[],{},[{}],\"\\u0001\\u001f\\\"\\\\\"]",
                "{\"z\":1,\"a\":2,\"m\":{\"k\":3}}",
                "12345678901234",
                "[0,-9,10,-10,9223372036854775807,-9223372036854775808]",
                "[0.1,1e-5,-2.5e-300,1e21,123456789012345678901234567890.0]",
        };
        for (size_t i = 0; i < ELEMENTSOF(docs); i++) {
                json_t *d = json_loads(docs[i], JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
                CHECK(d);
                char *want = json_dumps(d, JSON_COMPACT | JSON_ENCODE_ANY);
                JsonBuf w = {};
                jsonbuf_put_json(&w, d);
                CHECK(!w.oom && w.len == strlen(want) && memcmp(w.data, want, w.len) == 0);
                jsonbuf_done(&w);
                free(want);
                json_decref(d);
        }

        static const char *const good[] = {
                "0",        "-1.5e+3", "\"\"", "\"\\u0000\\ud83d\\ude00\\/\"",
                "[]",       "{}",      "null", "{\"a\":[1,{\"b\":false}],\"c\":\"\xe2\x82\xac\"}",
                "[[[[]]]]",
        };
        static const char *const bad[] = {
                "",
                " 1",
                "1 ",
                "[1, 2]",
                "{\"a\" :1}",
                "[1,]",
                "{\"a\":1,}",
                "01",
                "1.",
                "-",
                "1e",
                "+1",
                "\"\x01\"",
                "\"\n\"",
                "\"\xff\"",
                "\"\xc0\xae\"",
                "\"\\ud800\"",
                "\"\\udc00\"",
                "\"\\x\"",
                "[1]]",
                "{\"a\"}",
                "{1:2}",
                "tru",
                "nul",
                "[1][2]",
                "[[[[[]]]]]",
                "\"abc",
                "[\"a\"\n]",
        };
        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                CHECK(json_scan_compact(good[i], strlen(good[i]), 4));
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                if (json_scan_compact(bad[i], strlen(bad[i]), 4))
                        CHECK(!bad[i]);
}

/* The writer's runs and escapes and the scanner: each special byte at each place of a
 * 40-byte string, and a long string with escapes throughout. */
static void test_jsonbytes_runs(void)
{
        static const struct {
                const char *ins; /* in a JSON text, between 'a's */
                bool ok;
        } scan[] = {
                {"\x01", false},    {"\x1f", false}, {"\"", false},     {"\\", false},
                {"\xff", false},    {"\x80", false}, {"\x7f", true},    {" ", true},
                {"\xc3\xa9", true}, {"\\n", true},   {"\\u00e9", true}, {"\xe2\x82", false},
        };
        for (size_t c = 0; c < ELEMENTSOF(scan); c++)
                for (size_t pos = 0; pos <= 40; pos++) {
                        char t[64];
                        int n = snprintf(t, sizeof(t), "\"%.*s%s%.*s\"", (int)pos,
                                         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", scan[c].ins,
                                         (int)(40 - pos),
                                         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
                        CHECK(json_scan_compact(t, (size_t)n, 4) == scan[c].ok);
                }
        static const char *const raw[] = {"\x01", "\x1f", "\"", "\\", "\x7f", "\xc3\xa9", "\n"};
        for (size_t c = 0; c < ELEMENTSOF(raw); c++)
                for (size_t pos = 0; pos <= 40; pos++) {
                        char t[64];
                        int n = snprintf(t, sizeof(t), "%.*s%s%.*s", (int)pos,
                                         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", raw[c],
                                         (int)(40 - pos),
                                         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
                        json_t *j = json_stringn(t, (size_t)n);
                        char *want = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
                        JsonBuf w = {};
                        jsonbuf_put_string(&w, t, (size_t)n);
                        CHECK(want && !w.oom && w.len == strlen(want) &&
                              memcmp(w.data, want, w.len) == 0);
                        jsonbuf_done(&w);
                        free(want);
                        json_decref(j);
                }
        /* a long string, escapes at its ends and throughout */
        size_t big = 10000;
        char *t = malloc(big);
        CHECK(t);
        if (!t)
                return;
        for (size_t i = 0; i < big; i++)
                t[i] = (char)('a' + i % 26);
        static const size_t at[] = {0, 4095, 4096, 4097, 8191, 8192, 9999};
        for (size_t i = 0; i < ELEMENTSOF(at); i++)
                t[at[i]] = i % 2 ? '\n' : '\x01';
        json_t *j = json_stringn(t, big);
        char *want = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
        JsonBuf w = {};
        jsonbuf_put_string(&w, t, big);
        CHECK(want && !w.oom && w.len == strlen(want) && memcmp(w.data, want, w.len) == 0);
        jsonbuf_done(&w);
        free(want);
        json_decref(j);
        free(t);
}

int main(void)
{
        test_jsonbytes();
        test_jsonbytes_runs();
        test_hashmap_strings();
        test_hashmap_integers();
        test_strv();
        test_fileio();
        test_time();
        test_format_int();
        return check_finish();
}
