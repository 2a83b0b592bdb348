/* SPDX-License-Identifier: MIT */
#include "supervisor/seccomp-policy.h"

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
        SCP_ERRNO, /* ScpEntry.err */
} ScpSection;

/* The errnos an [errno E] section may name. */
static const struct {
        const char *name;
        int value;
} scp_errnos[] = {
        {"EPERM", EPERM},
        {"EACCES", EACCES},
        {"ENOSYS", ENOSYS},
        {"EINVAL", EINVAL},
        {"EAFNOSUPPORT", EAFNOSUPPORT},
        {"EOPNOTSUPP", EOPNOTSUPP},
};

static int perr(char *err, size_t errlen, const char *fmt, ...) _printf_(3, 4);
static int perr(char *err, size_t errlen, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

#define SCP_CONDS_MAX 3 /* comparisons on one line (ANDed) */

typedef enum ScpOp {
        SCP_OP_EQ,     /* aN == V: the low 32 bits equal V (int arguments: the kernel truncates) */
        SCP_OP_NE,     /* aN != V */
        SCP_OP_ALL,    /* aN & V: every bit of V is set */
        SCP_OP_MASKED, /* aN & M == V: the bits of M are those of V (mask in ScpCond.mask) */
} ScpOp;

typedef struct ScpCond {
        unsigned arg; /* 0..5 */
        ScpOp op;
        uint64_t value;
        uint64_t mask; /* SCP_OP_MASKED */
} ScpCond;

typedef struct ScpEntry {
        char name[64];
        unsigned line;
        ScpSection section;
        int err; /* SCP_ERRNO: the errno */
        int nr;  /* libseccomp's number: >= 0 native, < 0 pseudo (not on this architecture) */
        ScpCond conds[SCP_CONDS_MAX];
        size_t n_conds;
} ScpEntry;

/* Names a policy may use as argument values: address families, signals, clone flags. */
static const struct {
        const char *name;
        uint64_t value;
} scp_symbols[] = {
        {"AF_UNIX", 1},
        {"AF_INET", 2},
        {"AF_INET6", 10},
        {"AF_NETLINK", 16},
        {"AF_PACKET", 17},
        {"AF_VSOCK", 40},
        {"SIGSYS", 31},
        {"TIOCSTI", 0x5412},
        {"TIOCLINUX", 0x541C},
        {"CLONE_NEWTIME", 0x00000080},
        {"CLONE_NEWNS", 0x00020000},
        {"CLONE_NEWCGROUP", 0x02000000},
        {"CLONE_NEWUTS", 0x04000000},
        {"CLONE_NEWIPC", 0x08000000},
        {"CLONE_NEWUSER", 0x10000000},
        {"CLONE_NEWPID", 0x20000000},
        {"CLONE_NEWNET", 0x40000000},
};

/* One whitespace-separated word of s (l bytes) at *pos; its length, 0 at the end. */
static size_t next_word(const char *s, size_t l, size_t *pos, const char **ret)
{
        while (*pos < l && (s[*pos] == ' ' || s[*pos] == '\t'))
                (*pos)++;
        size_t b = *pos;
        while (*pos < l && s[*pos] != ' ' && s[*pos] != '\t')
                (*pos)++;
        *ret = s + b;
        return *pos - b;
}

static bool word_is(const char *w, size_t l, const char *lit)
{
        return l == strlen(lit) && memcmp(w, lit, l) == 0;
}

static int parse_value(const char *w, size_t l, uint64_t *ret)
{
        for (size_t i = 0; i < ELEMENTSOF(scp_symbols); i++)
                if (word_is(w, l, scp_symbols[i].name)) {
                        *ret = scp_symbols[i].value;
                        return 0;
                }
        char buf[32];
        if (l == 0 || l >= sizeof(buf) || w[0] == '-')
                return -EINVAL;
        memcpy(buf, w, l);
        buf[l] = 0;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(buf, &end, 0);
        if (errno || *end)
                return -EINVAL;
        *ret = v;
        return 0;
}

/* "aN OP V [aN OP V]…" (OP: ==, !=, &, or "& M ==" before V) after the name. 0, -EINVAL with
 * a message. */
static int parse_conds(const char *s, size_t l, ScpEntry *e, const char *name, char *err,
                       size_t errlen)
{
        size_t pos = 0;
        for (;;) {
                const char *a, *op, *v;
                size_t al = next_word(s, l, &pos, &a);
                if (al == 0)
                        return 0;
                size_t ol = next_word(s, l, &pos, &op);
                size_t vl = next_word(s, l, &pos, &v);
                if (e->n_conds == SCP_CONDS_MAX)
                        return perr(err, errlen, "%s:%u: more than %d comparisons", name, e->line,
                                    SCP_CONDS_MAX);
                ScpCond *c = &e->conds[e->n_conds];
                if (al != 2 || a[0] != 'a' || a[1] < '0' || a[1] > '5')
                        return perr(err, errlen, "%s:%u: '%.*s' is not an argument (a0..a5)", name,
                                    e->line, (int)(al > 64 ? 64 : al), a);
                c->arg = (unsigned)(a[1] - '0');
                if (word_is(op, ol, "=="))
                        c->op = SCP_OP_EQ;
                else if (word_is(op, ol, "!="))
                        c->op = SCP_OP_NE;
                else if (word_is(op, ol, "&"))
                        c->op = SCP_OP_ALL;
                else
                        return perr(err, errlen, "%s:%u: unknown comparison '%.*s' (==, !=, &)",
                                    name, e->line, (int)(ol > 8 ? 8 : ol), op);
                if (parse_value(v, vl, &c->value) < 0 ||
                    (c->op == SCP_OP_EQ && c->value > UINT32_MAX) ||
                    (c->op == SCP_OP_ALL && c->value == 0))
                        return perr(err, errlen, "%s:%u: bad value '%.*s'", name, e->line,
                                    (int)(vl > 64 ? 64 : vl), v);
                /* "aN & M == V": the bits of M must be those of V */
                size_t save = pos;
                const char *eq;
                size_t eql = next_word(s, l, &pos, &eq);
                if (c->op == SCP_OP_ALL && word_is(eq, eql, "==")) {
                        vl = next_word(s, l, &pos, &v);
                        c->op = SCP_OP_MASKED;
                        c->mask = c->value;
                        if (parse_value(v, vl, &c->value) < 0 || (c->value & ~c->mask) != 0)
                                return perr(err, errlen,
                                            "%s:%u: bad value '%.*s' (its bits must be in the "
                                            "mask)",
                                            name, e->line, (int)(vl > 64 ? 64 : vl), v);
                } else
                        pos = save;
                /* libseccomp takes one comparison of an argument per rule (EINVAL) */
                for (size_t k = 0; k < e->n_conds; k++)
                        if (e->conds[k].arg == c->arg)
                                return perr(err, errlen,
                                            "%s:%u: a%u is compared twice (one comparison an "
                                            "argument: use one line each, or 'a%u & M == V')",
                                            name, e->line, c->arg, c->arg);
                e->n_conds++;
        }
}

static void seccomp_releasep(scmp_filter_ctx *ctx)
{
        if (*ctx)
                seccomp_release(*ctx);
}

/* "[errno EPERM]" (l bytes at s): 0 and the errno, -EINVAL with a message. */
static int parse_errno_section(const char *s, size_t l, const char *name, unsigned line, int *ret,
                               char *err, size_t errlen)
{
        const char *e = s + 7; /* after "[errno " */
        size_t el = l - 8;     /* without the "]" */
        for (size_t i = 0; i < ELEMENTSOF(scp_errnos); i++)
                if (word_is(e, el, scp_errnos[i].name)) {
                        *ret = scp_errnos[i].value;
                        return 0;
                }
        return perr(err, errlen,
                    "%s:%u: unknown errno '%.*s' (known: EPERM, EACCES, ENOSYS, EINVAL, "
                    "EAFNOSUPPORT, EOPNOTSUPP)",
                    name, line, (int)(el > 32 ? 32 : el), e);
}

/*
 * Parses the policy text into entries (at most SCP_ENTRIES_MAX). 0 with *ret_n and
 * *ret_default_allow ([default allow] given), -EINVAL…
 */
static int parse(const char *text, size_t len, const char *name, ScpEntry *entries, size_t *ret_n,
                 bool *ret_default_allow, char *err, size_t errlen)
{
        ScpSection section = SCP_NONE;
        int section_err = 0;
        bool default_allow = false, seen_section = false;
        unsigned default_line = 0;
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
                        if (word_is(s, l, "[default allow]")) {
                                if (default_allow)
                                        return perr(err, errlen,
                                                    "%s:%u: [default allow] already given at "
                                                    "line %u",
                                                    name, line, default_line);
                                if (seen_section)
                                        return perr(err, errlen,
                                                    "%s:%u: [default allow] must come before "
                                                    "every section",
                                                    name, line);
                                default_allow = true;
                                default_line = line;
                                continue;
                        }
                        if (word_is(s, l, "[allow]"))
                                section = SCP_ALLOW;
                        else if (word_is(s, l, "[kill]"))
                                section = SCP_KILL;
                        else if (l > 8 && memcmp(s, "[errno ", 7) == 0 && s[l - 1] == ']') {
                                int r = parse_errno_section(s, l, name, line, &section_err, err,
                                                            errlen);
                                if (r < 0)
                                        return r;
                                section = SCP_ERRNO;
                        } else
                                return perr(err, errlen,
                                            "%s:%u: unknown section '%.*s' (known: [allow], "
                                            "[kill], [errno E], [default allow])",
                                            name, line, (int)(l > 64 ? 64 : l), s);
                        seen_section = true;
                        continue;
                }

                size_t wl = 0;
                while (wl < l && s[wl] != ' ' && s[wl] != '\t')
                        wl++;
                bool ok = wl < sizeof(entries[0].name);
                for (size_t i = 0; ok && i < wl; i++)
                        ok = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
                             s[i] == '_';
                if (!ok)
                        return perr(err, errlen, "%s:%u: not a syscall name: '%.*s'", name, line,
                                    (int)(wl > 64 ? 64 : wl), s);
                if (section == SCP_NONE)
                        return perr(err, errlen,
                                    "%s:%u: '%.*s' is outside a section ([allow], [kill] or "
                                    "[errno E])",
                                    name, line, (int)(l > 64 ? 64 : l), s);
                if (n >= SCP_ENTRIES_MAX)
                        return perr(err, errlen, "%s:%u: more than %d syscalls", name, line,
                                    SCP_ENTRIES_MAX);

                ScpEntry *e = &entries[n];
                *e = (ScpEntry){};
                memcpy(e->name, s, wl);
                e->name[wl] = 0;
                e->line = line;
                e->section = section;
                e->err = section == SCP_ERRNO ? section_err : 0;
                e->nr = seccomp_syscall_resolve_name(e->name);
                if (e->nr == __NR_SCMP_ERROR)
                        return perr(err, errlen, "%s:%u: unknown syscall '%s'", name, line,
                                    e->name);
                /* libseccomp refuses a rule whose action is the default's */
                if (default_allow && section == SCP_ALLOW)
                        return perr(err, errlen,
                                    "%s:%u: '%s' is allowed by [default allow] already", name, line,
                                    e->name);
                if (!default_allow && section == SCP_ERRNO && e->err == ENOSYS)
                        return perr(err, errlen,
                                    "%s:%u: '%s' fails with ENOSYS by default already (no "
                                    "[default allow])",
                                    name, line, e->name);
                int r = parse_conds(s + wl, l - wl, e, name, err, errlen);
                if (r < 0)
                        return r;
                /*
                 * A name may come back owly with comparisons on every line: libseccomp lets
                 * an unconditional rule swallow the conditional ones of the same syscall.
                 */
                for (size_t i = 0; i < n; i++)
                        if (streq(entries[i].name, e->name) &&
                            (e->n_conds == 0 || entries[i].n_conds == 0))
                                return perr(err, errlen, "%s:%u: '%s' already listed at line %u",
                                            name, line, e->name, entries[i].line);
                n++;
        }
        *ret_n = n;
        *ret_default_allow = default_allow;
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
        bool default_allow = false;
        int r;

        if (len > SCP_FILE_MAX)
                return perr(err, errlen, "%s: larger than %d bytes", name, SCP_FILE_MAX);
        _cleanup_free_ ScpEntry *entries = calloc(SCP_ENTRIES_MAX, sizeof(ScpEntry));
        if (!entries)
                return -ENOMEM;
        r = parse(text, len, name, entries, &n, &default_allow, err, errlen);
        if (r < 0)
                return r;

        _cleanup_(seccomp_releasep) scmp_filter_ctx ctx =
                seccomp_init(default_allow ? SCMP_ACT_ALLOW : SCMP_ACT_ERRNO(ENOSYS));
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
                /*
                 * [kill] traps: the pod's SIGSYS handler reports the syscall to pomed and
                 * dies by SIGSYS all the same (pods/pod/sigsys.h); a process without the
                 * handler dies by SIGSYS at once, as under KILL_PROCESS.
                 */
                uint32_t action = entries[i].section == SCP_KILL ? SCMP_ACT_TRAP
                                  : entries[i].section == SCP_ERRNO
                                          ? SCMP_ACT_ERRNO((uint16_t)entries[i].err)
                                          : SCMP_ACT_ALLOW;
                struct scmp_arg_cmp cmp[SCP_CONDS_MAX];
                for (size_t k = 0; k < entries[i].n_conds; k++) {
                        const ScpCond *c = &entries[i].conds[k];
                        switch (c->op) {
                        case SCP_OP_EQ:
                                /* masked: upper bits cannot dodge a comparison of an int */
                                cmp[k] = SCMP_CMP64(c->arg, SCMP_CMP_MASKED_EQ, UINT32_MAX,
                                                    c->value);
                                break;
                        case SCP_OP_NE:
                                cmp[k] = SCMP_CMP64(c->arg, SCMP_CMP_NE, c->value);
                                break;
                        case SCP_OP_ALL:
                                cmp[k] = SCMP_CMP64(c->arg, SCMP_CMP_MASKED_EQ, c->value, c->value);
                                break;
                        case SCP_OP_MASKED:
                                cmp[k] = SCMP_CMP64(c->arg, SCMP_CMP_MASKED_EQ, c->mask, c->value);
                                break;
                        }
                }
                r = seccomp_rule_add_array(ctx, action, entries[i].nr, (unsigned)entries[i].n_conds,
                                           cmp);
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

int scp_syscall_name(uint32_t arch, int nr, char *buf, size_t len)
{
        char *n = seccomp_syscall_resolve_num_arch(arch ? arch : SCMP_ARCH_NATIVE, nr);
        if (!n)
                return -ENOENT;
        snprintf(buf, len, "%s", n);
        free(n);
        return 0;
}

ScpProgram *scp_free(ScpProgram *p)
{
        free(p);
        return NULL;
}
