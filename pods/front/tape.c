/* SPDX-License-Identifier: MIT */
#include "pods/front/tape.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "common/fileio.h"
#include "common/json-util.h"
#include "common/util.h"

typedef struct TapeRow {
        uint64_t offset;
        uint64_t id_hash;
} TapeRow;

struct Tape {
        int fd;        /* O_RDWR | O_APPEND, or O_RDONLY (tape_open_readonly); -1 until the
                        * first row of a tape that has no file yet */
        char *path;    /* where the file goes at the first row; NULL: anonymous */
        bool readonly; /* tape_open_readonly: no row is ever appended */
        TapeRow *rows;
        size_t n, cap;
        uint64_t bytes; /* the rows' bytes, on disk and pending */
        /* tape_set_deferred: rows wait in pend for tape_flush; the file holds the first
         * n_disk rows, bytes_disk bytes; failed is the errno of the last flush, while the
         * rows it could not write are still kept */
        bool deferred;
        bool sync; /* tape_set_sync: each write is followed by fdatasync(2) */
        char *pend;
        size_t pend_len, pend_cap, n_disk;
        uint64_t bytes_disk;
        int failed;
};

struct TapeReader {
        int fd;
        uint64_t pos, end; /* file bytes [pos, end) still to emit */
        bool opened, closed, empty;
};

static size_t flush_for_read(Tape *t);

static uint64_t id_hash(const char *s, size_t n)
{
        uint64_t h = UINT64_C(14695981039346656037); /* FNV-1a */
        for (size_t i = 0; i < n; i++)
                h = (h ^ (unsigned char)s[i]) * UINT64_C(1099511628211);
        return h;
}

static int open_anonymous(void)
{
        const char *dir = getenv("TMPDIR");
        int fd = open(dir && *dir ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd < 0 && dir && *dir)
                fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd < 0)
                return negative_errno();
        (void)fcntl(fd, F_SETFL, O_APPEND);
        return fd;
}

/* Notes a row at offset whose event id is id. 0 or -ENOMEM. */
static int push_row(Tape *t, uint64_t offset, const char *id)
{
        if (t->n == t->cap) {
                size_t nc = t->cap ? t->cap * 2 : 64;
                TapeRow *r = realloc(t->rows, nc * sizeof(TapeRow));
                if (!r)
                        return -ENOMEM;
                t->rows = r;
                t->cap = nc;
        }
        t->rows[t->n++] = (TapeRow){.offset = offset, .id_hash = id_hash(id, strlen(id))};
        return 0;
}

/*
 * The event id in the first bytes of a row (head, NUL-terminated): rows start
 * {"kind":"TwinHttpEvent","event_id":"req_…" (both row writers keep that order), ids are
 * [A-Za-z0-9_] and never escaped. "" when there is none.
 */
static void head_event_id(const char *head, char id[static TAPE_EVENT_ID_MAX])
{
        static const char key[] = "\"event_id\":\"";
        const char *p = strstr(head, key);
        id[0] = 0;
        if (!p)
                return;
        p += sizeof(key) - 1;
        const char *e = strchr(p, '"');
        if (e && (size_t)(e - p) < TAPE_EVENT_ID_MAX) {
                memcpy(id, p, (size_t)(e - p));
                id[e - p] = 0;
        }
}

/*
 * Indexes the rows already in the file (a tape reopened by a restarted writer, an ended
 * run's tape opened for reading): one pass of newline search over the file, 1 MiB at a
 * time, and the event id taken from each row's first bytes — no row is parsed, so a tape
 * of 100 000 rows opens in milliseconds.
 */
static int index_existing(Tape *t)
{
        struct stat st;
        if (fstat(t->fd, &st) < 0)
                return negative_errno();
        t->bytes = (uint64_t)st.st_size;
        if (t->bytes == 0)
                return 0;
        const size_t chunk = 1u << 20;
        _cleanup_free_ char *buf = malloc(chunk);
        if (!buf)
                return -ENOMEM;
        char head[256], id[TAPE_EVENT_ID_MAX];
        size_t head_len = 0;
        uint64_t row_start = 0;
        for (uint64_t off = 0; off < t->bytes;) {
                size_t want = t->bytes - off < chunk ? (size_t)(t->bytes - off) : chunk;
                ssize_t k = pread(t->fd, buf, want, (off_t)off);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        break; /* shorter than fstat said: index what is there */
                const char *p = buf, *end = buf + k;
                while (p < end) {
                        const char *nl = memchr(p, '\n', (size_t)(end - p));
                        size_t take = (size_t)((nl ? nl : end) - p);
                        if (head_len < sizeof(head) - 1) {
                                size_t c = sizeof(head) - 1 - head_len;
                                c = take < c ? take : c;
                                memcpy(head + head_len, p, c);
                                head_len += c;
                        }
                        if (!nl)
                                break;
                        head[head_len] = 0;
                        head_event_id(head, id);
                        int r = push_row(t, row_start, id);
                        if (r < 0)
                                return r;
                        row_start = off + (uint64_t)(nl - buf) + 1;
                        head_len = 0;
                        p = nl + 1;
                }
                off += (uint64_t)k;
        }
        if (row_start < t->bytes) { /* a last row without its newline: indexed too */
                head[head_len] = 0;
                head_event_id(head, id);
                return push_row(t, row_start, id);
        }
        return 0;
}

/* ---- the sidecar index: <tape>.idx, the in-memory index of a finished tape ---- */

static const char index_magic[8] = "POMETIX1";

static char *index_path(const char *path)
{
        char *p;
        return asprintf(&p, "%s.idx", path) < 0 ? NULL : p;
}

static int unlink_index(const char *path)
{
        _cleanup_free_ char *ip = index_path(path);
        if (!ip)
                return -ENOMEM;
        return unlink(ip) < 0 && errno != ENOENT ? negative_errno() : 0;
}

int tape_keep_index(Tape *t)
{
        if (flush_for_read(t) < t->n)
                return t->failed; /* rows are still kept: no index of a file not whole */
        /* below a thousand rows (a few MB) the scan takes about a millisecond */
        if (!t->path || t->fd < 0 || t->n < 1000)
                return 0;
        _cleanup_free_ char *ip = index_path(t->path), *tmp = NULL;
        if (!ip || asprintf(&tmp, "%s.tmp", ip) < 0)
                return -ENOMEM;
        _cleanup_close_ int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
        if (fd < 0)
                return negative_errno();
        uint64_t hdr[2] = {t->bytes, t->n};
        int r = write_all(fd, index_magic, sizeof(index_magic));
        if (r >= 0)
                r = write_all(fd, hdr, sizeof(hdr));
        if (r >= 0)
                r = write_all(fd, t->rows, t->n * sizeof(TapeRow));
        if (r >= 0 && rename(tmp, ip) < 0)
                r = negative_errno();
        if (r < 0)
                (void)unlink(tmp);
        return r;
}

/* Loads the sidecar index of t's file when it describes the file as it is: 1, else 0. */
static int load_index(Tape *t, const char *path)
{
        _cleanup_free_ char *ip = index_path(path);
        if (!ip)
                return -ENOMEM;
        _cleanup_close_ int fd = open(ip, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        struct stat st, ist;
        char magic[8];
        uint64_t hdr[2];
        if (fd < 0 || fstat(t->fd, &st) < 0 || fstat(fd, &ist) < 0 ||
            read(fd, magic, sizeof(magic)) != (ssize_t)sizeof(magic) ||
            memcmp(magic, index_magic, sizeof(magic)) != 0 ||
            read(fd, hdr, sizeof(hdr)) != (ssize_t)sizeof(hdr) || hdr[0] != (uint64_t)st.st_size ||
            hdr[1] == 0 || hdr[1] > (uint64_t)st.st_size ||
            (uint64_t)ist.st_size != sizeof(magic) + sizeof(hdr) + hdr[1] * sizeof(TapeRow))
                return 0;
        TapeRow *rows = malloc(hdr[1] * sizeof(TapeRow));
        if (!rows)
                return -ENOMEM;
        size_t want = hdr[1] * sizeof(TapeRow);
        if (read(fd, rows, want) != (ssize_t)want) {
                free(rows);
                return 0;
        }
        /* rows in order, inside the file: else it is not this file's index */
        for (uint64_t i = 0; i < hdr[1]; i++)
                if (rows[i].offset >= hdr[0] || (i && rows[i].offset <= rows[i - 1].offset) ||
                    (i == 0 && rows[0].offset != 0)) {
                        free(rows);
                        return 0;
                }
        free(t->rows);
        t->rows = rows;
        t->n = t->cap = hdr[1];
        t->bytes = hdr[0];
        return 1;
}

int tape_open(const char *path, Tape **ret)
{
        Tape *t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->fd = -1;
        int r = 0;
        if (path) {
                /* An existing tape (a restarted writer) is indexed now; a new one is created
                 * by its first row, so a sandbox that serves no call costs no file. */
                t->fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
                if (!(t->path = strdup(path)))
                        r = -ENOMEM;
                else if (t->fd >= 0)
                        r = index_existing(t);
                else if (errno != ENOENT)
                        r = negative_errno();
        }
        if (r < 0) {
                tape_free(t);
                return r;
        }
        t->n_disk = t->n;
        t->bytes_disk = t->bytes;
        *ret = t;
        return 0;
}

/* The file of a tape that has none yet: created at its first row. 0 or negative errno. */
static int ensure_file(Tape *t)
{
        if (t->fd >= 0)
                return 0;
        /* a sidecar index of an earlier writer no longer describes the file */
        if (t->path)
                (void)unlink_index(t->path);
        if (t->readonly)
                return -EBADF;
        t->fd = t->path ? open(t->path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640)
                        : open_anonymous();
        if (t->fd < 0) {
                int r = t->path ? negative_errno() : t->fd;
                t->fd = -1;
                return r;
        }
        return 0;
}

int tape_repair(const char *path, uint64_t *ret_cut)
{
        *ret_cut = 0;
        _cleanup_close_ int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        struct stat st;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        /* Whole rows are "{…}\n" with no NUL (JSON escapes it); the first line that is not
         * one (a power cut's zeroed or torn tail) ends what the file holds for sure. */
        char buf[64 * 1024];
        uint64_t pos = 0, line = 0; /* where the read is, where the current line began */
        bool good = true;           /* the current line so far */
        char first = 0, last = 0;
        for (;;) {
                ssize_t k = pread(fd, buf, sizeof(buf), (off_t)pos);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        break;
                const char *p = buf, *end = buf + k;
                while (p < end) {
                        const char *nl = memchr(p, '\n', (size_t)(end - p));
                        const char *seg_end = nl ? nl : end;
                        if (seg_end > p) {
                                if (pos + (uint64_t)(p - buf) == line)
                                        first = *p;
                                last = seg_end[-1];
                                if (memchr(p, 0, (size_t)(seg_end - p)))
                                        good = false;
                        }
                        if (!nl)
                                break;
                        if (!good || first != '{' || last != '}' ||
                            pos + (uint64_t)(nl - buf) == line)
                                goto cut;
                        line = pos + (uint64_t)(nl - buf) + 1;
                        first = last = 0;
                        good = true;
                        p = nl + 1;
                }
                pos += (uint64_t)k;
        }
cut:
        if (line == (uint64_t)st.st_size)
                return 0;
        if (ftruncate(fd, (off_t)line) < 0 || fdatasync(fd) < 0)
                return negative_errno();
        _cleanup_free_ char *ip = index_path(path);
        if (ip)
                (void)unlink(ip); /* it described the file before the cut */
        *ret_cut = (uint64_t)st.st_size - line;
        return 1;
}

int tape_open_readonly(const char *path, Tape **ret)
{
        Tape *t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->readonly = true;
        t->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        int r = t->fd < 0 ? negative_errno() : load_index(t, path);
        if (r == 0) /* no sidecar that fits: the cheap scan */
                r = index_existing(t);
        if (r < 0) {
                tape_free(t);
                return r;
        }
        t->n_disk = t->n;
        t->bytes_disk = t->bytes;
        *ret = t;
        return 0;
}

Tape *tape_free(Tape *t)
{
        if (!t)
                return NULL;
        (void)tape_flush(t); /* an owner that needs the error flushes first */
        safe_close(t->fd);
        free(t->pend);
        free(t->path);
        free(t->rows);
        free(t);
        return NULL;
}

/* One write of len bytes at the end of the file: all of them, or the file as it was. */
static int write_rows(Tape *t, const char *data, size_t len)
{
        int r = ensure_file(t);
        if (r < 0)
                return r;
        /* One write: with O_APPEND a row is never interleaved with another. */
        ssize_t k = write(t->fd, data, len);
        if (k == (ssize_t)len) {
                if (!t->sync || fdatasync(t->fd) >= 0)
                        return 0;
                /* not known to be on the disk: as if not written (kept, written again) */
                r = negative_errno();
                (void)ftruncate(t->fd, (off_t)t->bytes_disk);
                return r;
        }
        r = k < 0 ? negative_errno() : -EIO;
        if (k > 0) {
                /* the rest, to learn why (ENOSPC, EFBIG…); then a partial row would corrupt
                 * every later read: the file goes back to its last whole row */
                ssize_t k2 = write(t->fd, data + k, len - (size_t)k);
                if (k2 < 0)
                        r = negative_errno();
                else if (k2 == (ssize_t)(len - (size_t)k))
                        return 0;
                (void)ftruncate(t->fd, (off_t)t->bytes_disk);
        }
        return r;
}

int tape_append_line(Tape *t, const char *line, size_t len, const char *event_id)
{
        if (len == 0 || line[len - 1] != '\n' || memchr(line, '\n', len - 1))
                return -EINVAL;
        if (t->deferred && !t->readonly) {
                int r = buf_reserve(&t->pend, &t->pend_cap, t->pend_len + len, 64 * 1024);
                if (r >= 0)
                        r = push_row(t, t->bytes, strempty(event_id));
                if (r < 0)
                        return r;
                memcpy(t->pend + t->pend_len, line, len);
                t->pend_len += len;
                t->bytes += len;
                return 0;
        }
        /* room in the index first: a row on disk is always indexed */
        int r = push_row(t, 0, "");
        if (r < 0)
                return r;
        t->n--;
        r = write_rows(t, line, len);
        if (r < 0)
                return r;
        (void)push_row(t, t->bytes, strempty(event_id)); /* has room */
        t->bytes += len;
        t->n_disk = t->n;
        t->bytes_disk = t->bytes;
        return 0;
}

/* Before a read: the kept rows written, if they can be. Returns the rows a reader sees:
 * what the file holds (rows still kept after a failed flush are not read). */
static size_t flush_for_read(Tape *t)
{
        if (t->pend_len > 0)
                (void)tape_flush(t);
        return t->pend_len > 0 ? t->n_disk : t->n;
}

void tape_set_deferred(Tape *t)
{
        t->deferred = true;
}

void tape_set_sync(Tape *t, bool sync)
{
        t->sync = sync;
}

int tape_error(const Tape *t)
{
        return t ? t->failed : 0;
}

int tape_flush(Tape *t)
{
        if (!t || t->pend_len == 0)
                return 0;
        int r = write_rows(t, t->pend, t->pend_len);
        if (r < 0)
                return (t->failed = r); /* kept: the next flush tries again */
        t->failed = 0;
        t->n_disk = t->n;
        t->bytes_disk = t->bytes;
        t->pend_len = 0;
        if (t->pend_cap > 1024 * 1024) { /* a burst of large rows: not kept for life */
                free(t->pend);
                t->pend = NULL;
                t->pend_cap = 0;
        }
        return 0;
}

size_t tape_kept(const Tape *t)
{
        return t ? t->n - t->n_disk : 0;
}

int tape_append(Tape *t, const json_t *row)
{
        _cleanup_free_ char *line = json_dumps(row, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!line)
                return -ENOMEM;
        size_t n = strlen(line);
        line[n] = '\n'; /* the NUL's byte carries the newline for this one write */
        return tape_append_line(t, line, n + 1, json_get_str(row, "event_id"));
}

size_t tape_count(const Tape *t)
{
        return t->n;
}

uint64_t tape_bytes(const Tape *t)
{
        return t->bytes;
}

int tape_reset(Tape *t)
{
        if (t->fd >= 0 && ftruncate(t->fd, 0) < 0)
                return negative_errno();
        t->n = t->n_disk = 0;
        t->bytes = t->bytes_disk = 0;
        t->pend_len = 0;
        t->failed = 0;
        return 0;
}

static uint64_t row_end(const Tape *t, size_t i)
{
        return i + 1 < t->n ? t->rows[i + 1].offset : t->bytes;
}

static int event_id_at(const Tape *t, size_t i, char buf[static TAPE_EVENT_ID_MAX])
{
        if (i >= t->n)
                return -ERANGE;
        /* Rows start {"kind":"TwinHttpEvent","event_id":"…" (jansson keeps the order). */
        char head[256];
        uint64_t len = row_end(t, i) - t->rows[i].offset;
        ssize_t k = pread(t->fd, head, len < sizeof(head) - 1 ? (size_t)len : sizeof(head) - 1,
                          (off_t)t->rows[i].offset);
        if (k < 0)
                return negative_errno();
        head[k] = 0;
        static const char key[] = "\"event_id\":\"";
        const char *p = strstr(head, key);
        if (!p)
                return -EBADMSG;
        p += sizeof(key) - 1;
        const char *e = strchr(p, '"');
        if (!e || (size_t)(e - p) >= TAPE_EVENT_ID_MAX)
                return -EBADMSG;
        memcpy(buf, p, (size_t)(e - p));
        buf[e - p] = 0;
        return 0;
}

int tape_event_id(Tape *t, size_t i, char buf[static TAPE_EVENT_ID_MAX])
{
        return i < flush_for_read(t) ? event_id_at(t, i, buf) : -ERANGE;
}

/* Row number of the row among the first n whose event id is id, or -ENOENT. */
static ssize_t find_row(const Tape *t, size_t n, const char *id)
{
        uint64_t h = id_hash(id, strlen(id));
        /* Newest first: a reader paging along asks for a recent row. */
        for (size_t i = n; i-- > 0;) {
                if (t->rows[i].id_hash != h)
                        continue;
                char got[TAPE_EVENT_ID_MAX];
                if (event_id_at(t, i, got) == 0 && streq(got, id))
                        return (ssize_t)i;
        }
        return -ENOENT;
}

int tape_select(Tape *t, const char *after, size_t limit, uint64_t max_bytes, TapeRange *ret)
{
        size_t first = 0;
        if (after && *after) {
                ssize_t i = find_row(t, flush_for_read(t), after);
                if (i < 0)
                        return (int)i;
                first = (size_t)i + 1;
        }
        return tape_select_at(t, first, limit, max_bytes, ret);
}

int tape_select_at(Tape *t, size_t first, size_t limit, uint64_t max_bytes, TapeRange *ret)
{
        size_t total = flush_for_read(t);
        if (first > total)
                first = total;
        size_t n = total - first;
        if (limit > 0) {
                if (n > limit)
                        n = limit;
                /* Whole rows within max_bytes, but never an empty page while rows remain. */
                while (n > 1 && row_end(t, first + n - 1) - t->rows[first].offset > max_bytes)
                        n--;
        }
        *ret = (TapeRange){
                .first = first,
                .n = n,
                .offset = n ? t->rows[first].offset : 0,
                .length = n ? row_end(t, first + n - 1) - t->rows[first].offset : 0,
                .more = first + n < total,
        };
        return 0;
}

int tape_reader_new(Tape *t, const TapeRange *range, TapeReader **ret)
{
        TapeReader *rd = calloc(1, sizeof(*rd));
        if (!rd)
                return -ENOMEM;
        rd->fd = range->n ? fcntl(t->fd, F_DUPFD_CLOEXEC, 3) : -1;
        if (range->n && rd->fd < 0) {
                free(rd);
                return negative_errno();
        }
        rd->pos = range->offset;
        rd->end = range->offset + range->length;
        rd->empty = range->n == 0;
        *ret = rd;
        return 0;
}

uint64_t tape_reader_size(const TapeReader *rd)
{
        /* "[" + the rows with each newline turned into "," and the last one into "]" */
        return rd->empty ? 2 : 1 + (rd->end - rd->pos);
}

ssize_t tape_reader_read(TapeReader *rd, char *buf, size_t max)
{
        if (max == 0 || rd->closed)
                return 0;
        size_t n = 0;
        if (!rd->opened) {
                buf[n++] = '[';
                rd->opened = true;
                if (rd->empty) {
                        if (n < max) {
                                buf[n++] = ']';
                                rd->closed = true;
                        }
                        return (ssize_t)n;
                }
        }
        if (rd->empty) {
                buf[0] = ']';
                rd->closed = true;
                return 1;
        }
        uint64_t left = rd->end - rd->pos;
        size_t want = max - n < left ? max - n : (size_t)left;
        while (want > 0) {
                ssize_t k = pread(rd->fd, buf + n, want, (off_t)rd->pos);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        return -EIO; /* the file shrank under us (a reset) */
                for (ssize_t i = 0; i < k; i++)
                        if (buf[n + (size_t)i] == '\n')
                                buf[n + (size_t)i] = ',';
                n += (size_t)k;
                rd->pos += (uint64_t)k;
                want -= (size_t)k;
        }
        if (rd->pos == rd->end) {
                buf[n - 1] = ']'; /* the last row's newline closes the array */
                rd->closed = true;
        }
        return (ssize_t)n;
}

TapeReader *tape_reader_free(TapeReader *rd)
{
        if (!rd)
                return NULL;
        safe_close(rd->fd);
        free(rd);
        return NULL;
}
