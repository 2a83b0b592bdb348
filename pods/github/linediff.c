/* SPDX-License-Identifier: MIT */
/*
 * Line diffs for the GitHub twin's pull request files and .diff replies: a longest common
 * subsequence over lines (after trimming the common prefix and suffix), printed as git's
 * unified diff hunks with three lines of context ("git diff" output format, as
 * https://git-scm.com/docs/diff-format describes and as github.com serves it).
 */
#include "pods/github/github.h"

/* Above this many LCS cells (bytes: 4 each) the changed middle is shown as replaced. */
#define LCS_MAX_CELLS (1u << 20)
#define CONTEXT       3

typedef struct Line {
        const char *s;
        size_t len; /* without the newline */
        bool nl;    /* ended by '\n' (only the last line may not be) */
} Line;

typedef struct Op {
        char kind;   /* ' ', '-', '+' */
        size_t a, b; /* line index in old (for ' ' and '-') and new (for ' ' and '+') */
} Op;

static int split_lines(const char *s, Line **ret, size_t *ret_n)
{
        size_t n = 0, cap = 0;
        Line *v = NULL;
        for (const char *p = strempty(s); *p;) {
                const char *e = strchr(p, '\n');
                size_t l = e ? (size_t)(e - p) : strlen(p);
                if (n == cap) {
                        cap = cap ? cap * 2 : 16;
                        Line *nv = reallocarray(v, cap, sizeof(Line));
                        if (!nv) {
                                free(v);
                                return -ENOMEM;
                        }
                        v = nv;
                }
                v[n++] = (Line){.s = p, .len = l, .nl = e != NULL};
                p += l + (e != NULL);
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

static bool line_eq(const Line *x, const Line *y)
{
        return x->len == y->len && x->nl == y->nl && memcmp(x->s, y->s, x->len) == 0;
}

static int ops_push(Op **v, size_t *n, size_t *cap, char kind, size_t a, size_t b)
{
        if (*n == *cap) {
                *cap = *cap ? *cap * 2 : 32;
                Op *nv = reallocarray(*v, *cap, sizeof(Op));
                if (!nv)
                        return -ENOMEM;
                *v = nv;
        }
        (*v)[(*n)++] = (Op){.kind = kind, .a = a, .b = b};
        return 0;
}

/* The edit script turning a[0..na) into b[0..nb), in order. */
static int edit_script(const Line *a, size_t na, const Line *b, size_t nb, Op **ret, size_t *ret_n)
{
        _cleanup_free_ Op *v = NULL;
        size_t n = 0, cap = 0, pre = 0, suf = 0;
        while (pre < na && pre < nb && line_eq(&a[pre], &b[pre]))
                pre++;
        while (suf < na - pre && suf < nb - pre && line_eq(&a[na - 1 - suf], &b[nb - 1 - suf]))
                suf++;
        for (size_t i = 0; i < pre; i++)
                if (ops_push(&v, &n, &cap, ' ', i, i) < 0)
                        return -ENOMEM;
        size_t ma = na - pre - suf, mb = nb - pre - suf;
        const Line *xa = a + pre, *xb = b + pre;
        if (ma > 0 && mb > 0 && ma * mb <= LCS_MAX_CELLS) {
                /* L[i][j] = LCS length of xa[i..] and xb[j..] */
                _cleanup_free_ uint32_t *L = calloc((ma + 1) * (mb + 1), sizeof(uint32_t));
                if (!L)
                        return -ENOMEM;
#define CELL(i, j) L[(i) * (mb + 1) + (j)]
                for (size_t i = ma; i-- > 0;)
                        for (size_t j = mb; j-- > 0;)
                                CELL(i, j) = line_eq(&xa[i], &xb[j])
                                                     ? CELL(i + 1, j + 1) + 1
                                                     : (CELL(i + 1, j) > CELL(i, j + 1)
                                                                ? CELL(i + 1, j)
                                                                : CELL(i, j + 1));
                size_t i = 0, j = 0;
                while (i < ma || j < mb) {
                        int r;
                        if (i < ma && j < mb && line_eq(&xa[i], &xb[j])) {
                                r = ops_push(&v, &n, &cap, ' ', pre + i, pre + j);
                                i++, j++;
                        } else if (i < ma && (j == mb || CELL(i + 1, j) >= CELL(i, j + 1))) {
                                r = ops_push(&v, &n, &cap, '-', pre + i, pre + j);
                                i++;
                        } else {
                                r = ops_push(&v, &n, &cap, '+', pre + i, pre + j);
                                j++;
                        }
                        if (r < 0)
                                return r;
                }
#undef CELL
        } else {
                for (size_t i = 0; i < ma; i++)
                        if (ops_push(&v, &n, &cap, '-', pre + i, pre) < 0)
                                return -ENOMEM;
                for (size_t j = 0; j < mb; j++)
                        if (ops_push(&v, &n, &cap, '+', pre + ma, pre + j) < 0)
                                return -ENOMEM;
        }
        for (size_t k = 0; k < suf; k++)
                if (ops_push(&v, &n, &cap, ' ', na - suf + k, nb - suf + k) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(v);
        *ret_n = n;
        return 0;
}

int gh_line_diff(const char *old, const char *new, char **ret_patch, size_t *ret_additions,
                 size_t *ret_deletions)
{
        _cleanup_free_ Line *a = NULL, *b = NULL;
        _cleanup_free_ Op *ops = NULL;
        size_t na, nb, nops;
        int r;
        if ((r = split_lines(old, &a, &na)) < 0 || (r = split_lines(new, &b, &nb)) < 0 ||
            (r = edit_script(a, na, b, nb, &ops, &nops)) < 0)
                return r;

        _cleanup_free_ char *out = NULL;
        size_t outlen = 0, adds = 0, dels = 0;
        FILE *f = open_memstream(&out, &outlen);
        if (!f)
                return -ENOMEM;
        size_t k = 0;
        while (k < nops) {
                /* next change */
                while (k < nops && ops[k].kind == ' ')
                        k++;
                if (k == nops)
                        break;
                size_t start = k >= CONTEXT ? k - CONTEXT : 0;
                /* extend while the gap of context to the next change is short */
                size_t end, last = k;
                for (size_t j = k; j < nops; j++) {
                        if (ops[j].kind != ' ') {
                                last = j;
                                continue;
                        }
                        if (j - last > 2 * CONTEXT)
                                break;
                }
                end = last + CONTEXT + 1 < nops ? last + CONTEXT + 1 : nops;
                size_t oc = 0, nc = 0;
                for (size_t j = start; j < end; j++) {
                        oc += ops[j].kind != '+';
                        nc += ops[j].kind != '-';
                }
                size_t os = ops[start].a, ns = ops[start].b;
                fprintf(f, "@@ -%zu", oc ? os + 1 : os);
                if (oc != 1)
                        fprintf(f, ",%zu", oc);
                fprintf(f, " +%zu", nc ? ns + 1 : ns);
                if (nc != 1)
                        fprintf(f, ",%zu", nc);
                fputs(" @@", f);
                /* git's default hunk heading: the nearest line above the hunk in the old
                 * file that starts with a letter, '_' or '$' (diff.c's default funcname) */
                for (size_t j = ops[start].a; j-- > 0;) {
                        char ch = a[j].len ? a[j].s[0] : 0;
                        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
                              ch == '$'))
                                continue;
                        size_t l = a[j].len < 80 ? a[j].len : 80;
                        while (l > 0 && (a[j].s[l - 1] == ' ' || a[j].s[l - 1] == '\t' ||
                                         a[j].s[l - 1] == '\r'))
                                l--;
                        fputc(' ', f);
                        fwrite(a[j].s, 1, l, f);
                        break;
                }
                fputc('\n', f);
                for (size_t j = start; j < end; j++) {
                        const Line *l = ops[j].kind == '+' ? &b[ops[j].b] : &a[ops[j].a];
                        adds += ops[j].kind == '+';
                        dels += ops[j].kind == '-';
                        fputc(ops[j].kind, f);
                        fwrite(l->s, 1, l->len, f);
                        fputc('\n', f);
                        if (!l->nl)
                                fputs("\\ No newline at end of file\n", f);
                }
                k = end;
        }
        if (fclose(f) != 0 || !out)
                return -ENOMEM;
        *ret_patch = TAKE_PTR(out);
        *ret_additions = adds;
        *ret_deletions = dels;
        return 0;
}
