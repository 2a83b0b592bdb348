/* SPDX-License-Identifier: MIT */
#include "seccomp-policy.h"

#include <fcntl.h>
#include <seccomp.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "common/util.h"

#define SCP_FILE_MAX    (256 * 1024) /* a policy is a few hundred lines */
#define SCP_ENTRIES_MAX 1024

struct ScpProgram {
        struct sock_fprog fprog; /* .filter points at insns */
        size_t len;              /* instructions */
        struct sock_filter insns[];
};

typedef enum ScpSection {
        SCP_NONE,
        SCP_ALLOW,
        SCP_KILL,
} ScpSection;

typedef struct ScpEntry {
        char name[64];
        unsigned line;
        ScpSection section;
        int nr; /* libseccomp's number: >= 0 native, < 0 pseudo (not on this architecture) */
} ScpEntry;

static void seccomp_releasep(scmp_filter_ctx *ctx)
{
        if (*ctx)
                seccomp_release(*ctx);
}

static int perr(char *err, size_t errlen, const char *fmt, ...) _printf_(3, 4);
static int perr(char *err, size_t errlen, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

/* Parses the policy text into entries (at most SCP_ENTRIES_MAX). 0 and *ret_n, -EINVAL… */
static int parse(const char *text, size_t len, const char *name, ScpEntry *entries, size_t *ret_n,
                 char *err, size_t errlen)
{
        ScpSection section = SCP_NONE;
        size_t n = 0;
        unsigned line = 0;

        for (size_t pos = 0; pos < len;) {
                const char *s = text + pos;
                const char *nl = memchr(s, '\n', len - pos);
                size_t l = nl ? (size_t)(nl - s) : len - pos;
                pos += l + 1;
                line++;

                const char *hash = memchr(s, '#', l);
                if (hash)
                        l = (size_t)(hash - s);
                while (l > 0 && (*s == ' ' || *s == '\t')) {
                        s++;
                        l--;
                }
                while (l > 0 && (s[l - 1] == ' ' || s[l - 1] == '\t' || s[l - 1] == '\r'))
                        l--;
                if (l == 0)
                        continue;
                if (memchr(s, 0, l))
                        return perr(err, errlen, "%s:%u: NUL byte", name, line);

                if (s[0] == '[') {
                        if (l == 7 && memcmp(s, "[allow]", 7) == 0)
                                section = SCP_ALLOW;
                        else if (l == 6 && memcmp(s, "[kill]", 6) == 0)
                                section = SCP_KILL;
                        else
                                return perr(
                                        err, errlen,
                                        "%s:%u: unknown section '%.*s' (known: [allow], [kill])",
                                        name, line, (int)(l > 64 ? 64 : l), s);
                        continue;
                }

                bool ok = l < sizeof(entries[0].name);
                for (size_t i = 0; ok && i < l; i++)
                        ok = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
                             s[i] == '_';
                if (!ok)
                        return perr(err, errlen, "%s:%u: not a syscall name: '%.*s'", name, line,
                                    (int)(l > 64 ? 64 : l), s);
                if (section == SCP_NONE)
                        return perr(err, errlen,
                                    "%s:%u: '%.*s' is outside a section ([allow] or [kill])", name,
                                    line, (int)l, s);
                if (n >= SCP_ENTRIES_MAX)
                        return perr(err, errlen, "%s:%u: more than %d syscalls", name, line,
                                    SCP_ENTRIES_MAX);

                ScpEntry *e = &entries[n];
                memcpy(e->name, s, l);
                e->name[l] = 0;
                e->line = line;
                e->section = section;
                e->nr = seccomp_syscall_resolve_name(e->name);
                if (e->nr == __NR_SCMP_ERROR)
                        return perr(err, errlen, "%s:%u: unknown syscall '%s'", name, line,
                                    e->name);
                for (size_t i = 0; i < n; i++)
                        if (streq(entries[i].name, e->name))
                                return perr(err, errlen, "%s:%u: '%s' already listed at line %u",
                                            name, line, e->name, entries[i].line);
                n++;
        }
        *ret_n = n;
        return 0;
}

/* seccomp_export_bpf() writes to an fd: a memfd, read back into one allocation. */
static int export_program(scmp_filter_ctx ctx, ScpProgram **ret)
{
        _cleanup_close_ int fd = memfd_create("pome-seccomp", MFD_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        int r = seccomp_export_bpf(ctx, fd);
        if (r < 0)
                return r;
        struct stat st;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        size_t size = (size_t)st.st_size;
        if (size == 0 || size % sizeof(struct sock_filter) != 0 ||
            size / sizeof(struct sock_filter) > BPF_MAXINSNS)
                return -E2BIG;
        ScpProgram *p = malloc(sizeof(ScpProgram) + size);
        if (!p)
                return -ENOMEM;
        ssize_t k = pread(fd, p->insns, size, 0);
        if (k != (ssize_t)size) {
                free(p);
                return k < 0 ? negative_errno() : -EIO;
        }
        p->len = size / sizeof(struct sock_filter);
        p->fprog = (struct sock_fprog){.len = (unsigned short)p->len, .filter = p->insns};
        *ret = p;
        return 0;
}

int scp_compile_text(const char *text, size_t len, const char *name, ScpProgram **ret, char *err,
                     size_t errlen)
{
        size_t n = 0;
        int r;

        if (len > SCP_FILE_MAX)
                return perr(err, errlen, "%s: larger than %d bytes", name, SCP_FILE_MAX);
        _cleanup_free_ ScpEntry *entries = calloc(SCP_ENTRIES_MAX, sizeof(ScpEntry));
        if (!entries)
                return -ENOMEM;
        r = parse(text, len, name, entries, &n, err, errlen);
        if (r < 0)
                return r;

        _cleanup_(seccomp_releasep) scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(ENOSYS));
        if (!ctx)
                return -ENOMEM;
        /* Another architecture's (or x32's) numbers mean something else here: kill. */
        r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
        if (r < 0)
                return r;
        /* We load the exported program ourselves, after our own PR_SET_NO_NEW_PRIVS. */
        r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
        if (r < 0)
                return r;
        /* A binary tree of syscall numbers: O(log n) comparisons per syscall, not O(n). */
        r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
        if (r < 0)
                return r;

        for (size_t i = 0; i < n; i++) {
                if (entries[i].nr < 0)
                        continue; /* not a syscall on this architecture */
                uint32_t action =
                        entries[i].section == SCP_KILL ? SCMP_ACT_KILL_PROCESS : SCMP_ACT_ALLOW;
                r = seccomp_rule_add(ctx, action, entries[i].nr, 0);
                if (r < 0) {
                        snprintf(err, errlen, "%s:%u: libseccomp refused '%s': %s", name,
                                 entries[i].line, entries[i].name, strerror(-r));
                        return r;
                }
        }
        r = export_program(ctx, ret);
        if (r < 0)
                snprintf(err, errlen, "%s: exporting the BPF program failed: %s", name,
                         strerror(-r));
        return r;
}

int scp_compile(const char *path, ScpProgram **ret, char *err, size_t errlen)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                int r = negative_errno();
                snprintf(err, errlen, "%s: %s", path, strerror(-r));
                return r;
        }
        _cleanup_free_ char *buf = malloc(SCP_FILE_MAX + 1);
        if (!buf)
                return -ENOMEM;
        size_t len = 0;
        for (;;) {
                ssize_t k = read(fd, buf + len, SCP_FILE_MAX + 1 - len);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        int r = negative_errno();
                        snprintf(err, errlen, "%s: %s", path, strerror(-r));
                        return r;
                }
                if (k == 0 || (len += (size_t)k) > SCP_FILE_MAX)
                        break;
        }
        return scp_compile_text(buf, len, path, ret, err, errlen);
}

const struct sock_fprog *scp_program(const ScpProgram *p)
{
        return &p->fprog;
}

const void *scp_data(const ScpProgram *p, size_t *ret_size)
{
        *ret_size = p->len * sizeof(struct sock_filter);
        return p->insns;
}

ScpProgram *scp_free(ScpProgram *p)
{
        free(p);
        return NULL;
}
