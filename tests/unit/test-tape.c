/* SPDX-License-Identifier: MIT */
/* Tapes: rows on disk, pages by event id and bytes, the JSON array a reader produces; a
 * deferred tape's rows in one write, read back before they are written, and kept whole
 * (never half on disk) by a write that failed, until a later flush writes them. */
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "check.h"
#include "common/json-util.h"
#include "pods/front/tape.h"

static json_t *row(int i)
{
        char id[32];
        snprintf(id, sizeof(id), "req_%04d", i);
        return json_pack("{s:s, s:s, s:i, s:s}", "kind", "TwinHttpEvent", "event_id", id, "n", i,
                         "pad", i % 7 == 0 ? "a longer row\nwith a newline in a string" : "x");
}

/* Everything a reader of range produces, as parsed JSON. */
static json_t *read_all(Tape *t, const TapeRange *range, size_t chunk)
{
        TapeReader *rd = NULL;
        CHECK_OK(tape_reader_new(t, range, &rd));
        uint64_t size = tape_reader_size(rd);
        char *buf = calloc(1, (size_t)size + 1);
        size_t n = 0;
        ssize_t k;
        while ((k = tape_reader_read(rd, buf + n, chunk < size + 1 - n ? chunk : size + 1 - n)) > 0)
                n += (size_t)k;
        CHECK(k == 0);
        CHECK(n == size);
        tape_reader_free(rd);
        json_t *j = json_loadb(buf, n, 0, NULL);
        if (!j)
                fprintf(stderr, "not JSON: %.*s\n", (int)n, buf);
        free(buf);
        return j;
}

static off_t file_size(const char *path)
{
        struct stat st;
        return stat(path, &st) == 0 ? st.st_size : -1;
}

static void test_deferred(const char *path)
{
        Tape *t = NULL;
        unlink(path);
        CHECK_OK(tape_open(path, &t));
        tape_set_deferred(t);
        for (int i = 0; i < 10; i++) {
                json_t *j = row(i);
                CHECK_OK(tape_append(t, j));
                json_decref(j);
        }
        /* kept, counted, not yet written (the file is made by the first write) */
        CHECK(tape_count(t) == 10 && tape_bytes(t) > 0 && file_size(path) == -1);
        /* a read writes them first */
        TapeRange r;
        CHECK_OK(tape_select(t, "req_0004", 3, 1 << 20, &r));
        CHECK(r.first == 5 && r.n == 3 && r.more);
        CHECK(file_size(path) == (off_t)tape_bytes(t));
        json_t *page = read_all(t, &r, 64);
        CHECK(json_array_size(page) == 3 &&
              json_integer_value(json_object_get(json_array_get(page, 0), "n")) == 5);
        json_decref(page);
        uint64_t on_disk = tape_bytes(t);

        /* a write that fails (the file size limit) leaves the file as it was and keeps its
         * rows, in order; readers see what the file holds */
        struct rlimit old;
        CHECK_OK(getrlimit(RLIMIT_FSIZE, &old));
        struct rlimit small = {.rlim_cur = (rlim_t)on_disk + 100, .rlim_max = old.rlim_max};
        signal(SIGXFSZ, SIG_IGN);
        CHECK_OK(setrlimit(RLIMIT_FSIZE, &small));
        for (int i = 10; i < 20; i++) {
                json_t *j = row(i);
                CHECK_OK(tape_append(t, j));
                json_decref(j);
        }
        CHECK(tape_count(t) == 20 && tape_error(t) == 0 && tape_kept(t) == 10);
        CHECK(tape_flush(t) == -EFBIG); /* a short write: cut back to the last whole row */
        CHECK(tape_error(t) == -EFBIG && tape_kept(t) == 10);
        CHECK(file_size(path) == (off_t)on_disk);
        CHECK_OK(tape_select(t, NULL, 0, 0, &r));
        CHECK(r.n == 10 && !r.more);
        CHECK_OK(tape_select(t, "req_0008", 5, 1 << 20, &r));
        CHECK(r.first == 9 && r.n == 1 && !r.more);
        CHECK(tape_select(t, "req_0012", 5, 1 << 20, &r) == -ENOENT); /* kept: not read */
        /* rows still go on while it fails, and the first flush that can writes them all */
        json_t *j = row(20);
        CHECK_OK(tape_append(t, j));
        json_decref(j);
        CHECK(tape_flush(t) == -EFBIG && tape_kept(t) == 11);
        CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
        CHECK_OK(tape_flush(t));
        CHECK(tape_error(t) == 0 && tape_kept(t) == 0 && tape_count(t) == 21);
        CHECK(file_size(path) == (off_t)tape_bytes(t));
        CHECK_OK(tape_select(t, NULL, 0, 0, &r));
        CHECK(r.n == 21 && !r.more);
        page = read_all(t, &r, 4096);
        for (size_t i = 0; i < 21; i++)
                CHECK(json_integer_value(json_object_get(json_array_get(page, i), "n")) ==
                      (json_int_t)i);
        json_decref(page);
        tape_free(t);
        unlink(path);
}

/* tape_repair: what a power cut leaves at the end of a tape is cut back to whole rows. */
static void test_repair(const char *path)
{
        static const char rows[] = "{\"event_id\":\"a\"}\n{\"event_id\":\"b\",\"s\":\"x\\ny\"}\n";
        static const struct {
                const char *tail;
                size_t len;
                bool cut;
        } cases[] = {
                {"", 0, false},                         /* whole */
                {"\0\0\0\0\0\0\0\0", 8, true},          /* a zeroed tail (size ahead of data) */
                {"{\"event_id\":\"c\"", 15, true},      /* torn: no newline */
                {"{\"event_id\":\"c\0\"}\n", 18, true}, /* a NUL inside a line */
                {"\n{\"event_id\":\"d\"}\n", 18, true}, /* an empty line, then a row */
                {"{\"event_id\":\"c\"}\n", 17, false},  /* a third whole row */
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                CHECK(fd >= 0);
                CHECK(write(fd, rows, strlen(rows)) == (ssize_t)strlen(rows));
                CHECK(write(fd, cases[i].tail, cases[i].len) == (ssize_t)cases[i].len);
                close(fd);
                uint64_t cut = 0;
                CHECK(tape_repair(path, &cut) == (cases[i].cut ? 1 : 0));
                CHECK(cut == (cases[i].cut ? cases[i].len : 0));
                CHECK(file_size(path) == (off_t)(strlen(rows) + (cases[i].cut ? 0 : cases[i].len)));
        }
        /* a zeroed block in the middle: every row after it goes too (not known whole) */
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        char big[100000];
        memset(big, 0, sizeof(big));
        CHECK(write(fd, rows, strlen(rows)) == (ssize_t)strlen(rows));
        CHECK(write(fd, big, sizeof(big)) == (ssize_t)sizeof(big));
        CHECK(write(fd, rows, strlen(rows)) == (ssize_t)strlen(rows));
        close(fd);
        uint64_t cut = 0;
        CHECK(tape_repair(path, &cut) == 1 && cut == sizeof(big) + strlen(rows));
        Tape *t = NULL;
        CHECK_OK(tape_open_readonly(path, &t));
        CHECK(tape_count(t) == 2);
        tape_free(t);
        CHECK(tape_repair("/nonexistent/tape.jsonl", &cut) == -ENOENT);
        unlink(path);
}

int main(void)
{
        Tape *t = NULL;
        CHECK_OK(tape_open(NULL, &t));
        TapeRange r;
        CHECK_OK(tape_select(t, NULL, 0, 0, &r));
        CHECK(r.n == 0 && !r.more);
        json_t *empty = read_all(t, &r, 1);
        CHECK(json_is_array(empty) && json_array_size(empty) == 0);
        json_decref(empty);

        for (int i = 0; i < 50; i++) {
                json_t *j = row(i);
                CHECK_OK(tape_append(t, j));
                json_decref(j);
        }
        CHECK(tape_count(t) == 50 && tape_bytes(t) > 0);

        /* the whole tape, through readers with odd chunk sizes */
        CHECK_OK(tape_select(t, NULL, 0, 0, &r));
        CHECK(r.first == 0 && r.n == 50 && !r.more);
        for (size_t chunk = 1; chunk < 300; chunk += 37) {
                json_t *all = read_all(t, &r, chunk);
                CHECK(json_array_size(all) == 50);
                CHECK(json_integer_value(json_object_get(json_array_get(all, 49), "n")) == 49);
                json_decref(all);
        }

        /* pages of 8 after a cursor */
        CHECK_OK(tape_select(t, "req_0009", 8, 1 << 20, &r));
        CHECK(r.first == 10 && r.n == 8 && r.more);
        char id[TAPE_EVENT_ID_MAX];
        CHECK_OK(tape_event_id(t, r.first + r.n - 1, id));
        CHECK(streq(id, "req_0017"));
        json_t *page = read_all(t, &r, 4096);
        CHECK(json_array_size(page) == 8);
        CHECK(streq(json_get_str(json_array_get(page, 0), "event_id"), "req_0010"));
        json_decref(page);
        /* a byte budget smaller than a row still yields one row */
        CHECK_OK(tape_select(t, NULL, 10, 1, &r));
        CHECK(r.n == 1 && r.more);
        /* the last page, and after the last row */
        CHECK_OK(tape_select(t, "req_0045", 100, 1 << 20, &r));
        CHECK(r.n == 4 && !r.more);
        CHECK_OK(tape_select(t, "req_0049", 100, 1 << 20, &r));
        CHECK(r.n == 0 && !r.more);
        CHECK(tape_select(t, "req_9999", 10, 1 << 20, &r) == -ENOENT);
        CHECK(tape_event_id(t, 50, id) == -ERANGE);
        /* a jump to a row number: the same page as the cursor before it; past the end, empty */
        CHECK_OK(tape_select_at(t, 10, 8, 1 << 20, &r));
        CHECK(r.first == 10 && r.n == 8 && r.more);
        page = read_all(t, &r, 4096);
        CHECK(streq(json_get_str(json_array_get(page, 0), "event_id"), "req_0010"));
        json_decref(page);
        CHECK_OK(tape_select_at(t, 46, 100, 1 << 20, &r));
        CHECK(r.first == 46 && r.n == 4 && !r.more);
        CHECK_OK(tape_select_at(t, 50, 100, 1 << 20, &r));
        CHECK(r.first == 50 && r.n == 0 && !r.more);
        CHECK_OK(tape_select_at(t, 999, 100, 1 << 20, &r));
        CHECK(r.first == 50 && r.n == 0 && !r.more);

        /* a reader outlives its tape */
        CHECK_OK(tape_select(t, NULL, 0, 0, &r));
        TapeReader *rd = NULL;
        CHECK_OK(tape_reader_new(t, &r, &rd));
        CHECK_OK(tape_reset(t));
        CHECK(tape_count(t) == 0);
        char buf[64];
        CHECK(tape_reader_read(rd, buf, sizeof(buf)) == -EIO); /* the file shrank under it */
        tape_reader_free(rd);
        tape_free(t);

        /* a file tape reopened is indexed again */
        char path[] = "/tmp/test-tape.XXXXXX";
        int fd = mkstemp(path);
        CHECK(fd >= 0);
        close(fd);
        CHECK_OK(tape_open(path, &t));
        for (int i = 0; i < 5; i++) {
                json_t *j = row(i);
                CHECK_OK(tape_append(t, j));
                json_decref(j);
        }
        tape_free(t);
        CHECK_OK(tape_open(path, &t));
        CHECK(tape_count(t) == 5);
        CHECK_OK(tape_select(t, "req_0002", 10, 1 << 20, &r));
        CHECK(r.first == 3 && r.n == 2);
        tape_free(t);
        unlink(path);

        /* a tape without a file gets one at its first row, not before */
        CHECK_OK(tape_open(path, &t));
        CHECK(access(path, F_OK) < 0 && errno == ENOENT);
        CHECK(tape_count(t) == 0 && tape_bytes(t) == 0);
        CHECK_OK(tape_select(t, NULL, 0, 0, &r));
        CHECK(r.n == 0 && !r.more);
        CHECK_OK(tape_reset(t));
        json_t *none = read_all(t, &r, 64);
        CHECK(json_is_array(none) && json_array_size(none) == 0);
        json_decref(none);
        json_t *j = row(0);
        CHECK_OK(tape_append(t, j));
        json_decref(j);
        CHECK(access(path, F_OK) == 0 && tape_count(t) == 1);
        tape_free(t);
        unlink(path);
        CHECK(tape_open_readonly(path, &t) == -ENOENT);

        /* a long finished tape keeps its index beside it; reopened, the index is read, and
         * once the file changes the scan takes over again */
        CHECK_OK(tape_open(path, &t));
        for (int i = 0; i < 1200; i++) {
                json_t *ri = row(i);
                CHECK_OK(tape_append(t, ri));
                json_decref(ri);
        }
        CHECK_OK(tape_keep_index(t));
        tape_free(t);
        char idx[sizeof(path) + 8];
        snprintf(idx, sizeof(idx), "%s.idx", path);
        CHECK(access(idx, F_OK) == 0);
        CHECK_OK(tape_open_readonly(path, &t));
        CHECK(tape_count(t) == 1200);
        CHECK_OK(tape_select(t, "req_1100", 10, 1 << 20, &r));
        CHECK(r.first == 1101 && r.n == 10);
        CHECK_OK(tape_event_id(t, 1199, id));
        CHECK(streq(id, "req_1199"));
        json_t *ten = read_all(t, &r, 4096);
        CHECK(json_array_size(ten) == 10 &&
              json_integer_value(json_object_get(json_array_get(ten, 0), "n")) == 1101);
        json_decref(ten);
        tape_free(t);
        int afd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
        CHECK(afd >= 0 &&
              write(afd, "{\"kind\":\"TwinHttpEvent\",\"event_id\":\"req_x\"}\n", 44) == 44);
        close(afd);
        CHECK_OK(tape_open_readonly(path, &t));
        CHECK(tape_count(t) == 1201);
        CHECK_OK(tape_event_id(t, 1200, id));
        CHECK(streq(id, "req_x"));
        tape_free(t);
        unlink(idx);
        unlink(path);
        CHECK(tape_free(NULL) == NULL);
        test_deferred(path);
        test_repair(path);
        return check_finish();
}
