/* SPDX-License-Identifier: MIT */
#include "supervisor/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libcgroup.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>

#include "common/fileio.h"
#include "common/strv.h"
#include "common/timeutil.h"
#include "common/util.h"

enum { CG_MEMORY, CG_PIDS, CG_CPU, CG_N_CTRL };
static const char *const ctrl_names[CG_N_CTRL] = {"memory", "pids", "cpu"};

#define CG_ROOT           "/sys/fs/cgroup"
#define CG_WAIT_USEC      (1 * USEC_PER_SEC) /* how long a kill may take to empty a cgroup */
#define CG_POLL_USEC      (1 * USEC_PER_MSEC)
#define CG_MAX_DEPTH      8 /* below the tree: <pod>, deeper only if a pod nested */
#define CG_NAME_MAX       64
#define CG_SHARES_MIN     UINT64_C(2)
#define CG_SHARES_MAX     UINT64_C(262144)
#define CG_SHARES_DEFAULT UINT64_C(1024)
#define CG_WEIGHT_DEFAULT UINT64_C(100)

/* One mounted hierarchy holding some of our controllers (v2: the only one, all three). */
typedef struct CgHier {
        unsigned mask;  /* 1 << CG_* of the controllers it holds */
        char *mount;    /* absolute mount point */
        char *own;      /* our cgroup relative to the mount: "/" or "/a/b" */
        char *tree;     /* absolute path of <own>/<tree_name> */
        char *tree_rel; /* the same relative to the mount: libcgroup's name for it */
        int tree_fd;    /* O_DIRECTORY, flock(LOCK_EX) held */
} CgHier;

struct CgSetup {
        CgLayout layout;
        bool use_libcgroup; /* false for a test tree (cg_setup_at) */
        bool swap_limit;    /* memory.memsw.limit_in_bytes (v1) / memory.swap.max (v2) exists */
        bool has_kill;      /* v2 cgroup.kill (Linux >= 5.14) */
        bool has_cpu;       /* the cpu controller is ours (v2: optional; v1: required) */
        CgHier hier[CG_N_CTRL];
        size_t n_hier;
        size_t hier_of[CG_N_CTRL]; /* controller → index in hier[] */
};

typedef struct CgLeaf {
        const CgHier *hier; /* borrowed from the setup */
        char *path;         /* absolute path of <tree>/<pod name> */
} CgLeaf;

struct CgPod {
        CgSetup *setup;
        CgLeaf leaf[CG_N_CTRL];
        size_t n_leaf;
        int join_fds[CG_N_CTRL]; /* cgroup.procs of each leaf, O_WRONLY|O_CLOEXEC */
};

/* ----- small helpers ----- */

/* "a" + "b" with exactly one '/' between them; "/" + "x" = "/x". NULL on OOM. */
static char *path_join(const char *a, const char *b)
{
        size_t la = strlen(a);
        while (la > 0 && a[la - 1] == '/')
                la--;
        while (*b == '/')
                b++;
        char *p;
        if (asprintf(&p, "%.*s/%s", (int)la, a, b) < 0)
                return NULL;
        return p;
}

static void sleep_usec(uint64_t usec)
{
        struct timespec ts = {.tv_sec = (time_t)(usec / USEC_PER_SEC),
                              .tv_nsec = (long)(usec % USEC_PER_SEC) * 1000};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static bool file_exists(const char *dir, const char *name)
{
        _cleanup_free_ char *p = path_join(dir, name);
        return p && access(p, F_OK) == 0;
}

/* Reads a whole (small, pseudo-)file into a NUL-terminated buffer. 0 or negative errno. */
static int read_all(const char *path, char **ret)
{
        return read_file_at(AT_FDCWD, path, 1u << 20, ret, NULL);
}

/* read_all of dir/name. */
static int read_at(const char *dir, const char *name, char **ret)
{
        _cleanup_free_ char *p = path_join(dir, name);
        return p ? read_all(p, ret) : -ENOMEM;
}

/* The v2 flat-keyed events of dir: memory.events.local (5.2+), else memory.events. */
static int read_events_local(const char *dir, char **ret)
{
        int r = read_at(dir, "memory.events.local", ret);
        return r == -ENOENT ? read_at(dir, "memory.events", ret) : r;
}

/* One write(2) of s (cgroupfs takes a control value per write). 0 or negative errno. */
static int write_str(const char *path, const char *s)
{
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC | O_TRUNC);
        if (fd < 0)
                return negative_errno();
        size_t n = strlen(s);
        ssize_t k = write(fd, s, n);
        if (k < 0)
                return negative_errno();
        return (size_t)k == n ? 0 : -EIO;
}

static int write_at(const char *dir, const char *name, const char *s)
{
        _cleanup_free_ char *p = path_join(dir, name);
        if (!p)
                return -ENOMEM;
        return write_str(p, s);
}

/* Parses the pid list of a cgroup.procs file into a malloc'ed array. 0 or negative errno. */
static int read_pids(const char *dir, pid_t **ret, size_t *ret_n)
{
        _cleanup_free_ char *text = NULL;
        int r = read_at(dir, "cgroup.procs", &text);
        if (r < 0)
                return r;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        for (char *s = text, *end; *s;) {
                long v = strtol(s, &end, 10);
                if (end == s)
                        break;
                if (v > 0) {
                        pid_t *np = realloc(pids, (n + 1) * sizeof(pid_t));
                        if (!np)
                                return -ENOMEM;
                        pids = np;
                        pids[n++] = (pid_t)v;
                }
                s = end;
        }
        *ret = TAKE_PTR(pids);
        *ret_n = n;
        return 0;
}

/* Path components we create from caller input: no '/', no "." or "..", short. */
static bool valid_name(const char *s)
{
        size_t n = s ? strlen(s) : 0;
        if (n == 0 || n > CG_NAME_MAX || streq(s, ".") || streq(s, ".."))
                return false;
        for (const char *p = s; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' || *p == '.'))
                        return false;
        return true;
}

static int ctrl_index(const char *name)
{
        for (int i = 0; i < CG_N_CTRL; i++)
                if (streq_ptr(name, ctrl_names[i]))
                        return i;
        return -1;
}

/* ----- parsing ----- */

int cg_parse_own_cgroup(const char *text, const char *controller, char **ret)
{
        /* cgroups(7): "hierarchy-ID:controller-list:cgroup-path", v2 has ID 0 and an empty list. */
        for (const char *line = text; line && *line;) {
                const char *eol = strchrnul(line, '\n');
                const char *c1 = memchr(line, ':', (size_t)(eol - line));
                const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(eol - c1 - 1)) : NULL;
                if (!c1 || !c2 || c2[1] != '/')
                        return -EINVAL;
                bool match = false;
                if (!controller)
                        match = c2 == c1 + 1 && c1 - line == 1 && line[0] == '0';
                else
                        for (const char *w = c1 + 1; w < c2;) {
                                const char *e = memchr(w, ',', (size_t)(c2 - w));
                                if (!e)
                                        e = c2;
                                if ((size_t)(e - w) == strlen(controller) &&
                                    memcmp(w, controller, (size_t)(e - w)) == 0)
                                        match = true;
                                w = e + 1;
                        }
                if (match) {
                        char *p = strndup(c2 + 1, (size_t)(eol - c2 - 1));
                        if (!p)
                                return -ENOMEM;
                        /* A path deleted under us reads "/a (deleted)": refuse it. */
                        if (strstr(p, " (deleted)")) {
                                free(p);
                                return -ENOENT;
                        }
                        *ret = p;
                        return 0;
                }
                line = *eol ? eol + 1 : eol;
        }
        return -ENOENT;
}

/* A "key N" line of a flat-keyed cgroup file (memory.events, memory.oom_control). */
static int parse_key(const char *text, const char *key, uint64_t *ret)
{
        size_t kl = strlen(key);
        for (const char *line = text; line && *line;) {
                if (strncmp(line, key, kl) == 0 && line[kl] == ' ') {
                        const char *v = line + kl + 1;
                        char *end;
                        errno = 0;
                        unsigned long long n = strtoull(v, &end, 10);
                        if (errno || end == v || (*end && *end != '\n'))
                                return -EINVAL;
                        *ret = n;
                        return 0;
                }
                line = strchrnul(line, '\n');
                if (*line)
                        line++;
        }
        return -ENODATA;
}

int cg_parse_oom_kill(const char *text, uint64_t *ret)
{
        return parse_key(text, "oom_kill", ret);
}

uint64_t cg_cpu_weight_to_shares(uint64_t weight)
{
        uint64_t s = weight * CG_SHARES_DEFAULT / CG_WEIGHT_DEFAULT;
        return s < CG_SHARES_MIN ? CG_SHARES_MIN : s > CG_SHARES_MAX ? CG_SHARES_MAX : s;
}

/* ----- setup ----- */

CgSetup *cg_setup_free(CgSetup *s)
{
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n_hier; i++) {
                CgHier *h = &s->hier[i];
                /* Leave no empty tree behind (every state dir has its own); a tree that
                 * still holds pods stays, for the next pomed to clean up. */
                if (h->tree && h->tree_fd >= 0)
                        (void)rmdir(h->tree);
                safe_close(h->tree_fd);
                free(h->mount);
                free(h->own);
                free(h->tree);
                free(h->tree_rel);
        }
        free(s);
        return NULL;
}
static void cg_setup_freep(CgSetup **s)
{
        cg_setup_free(*s);
}

bool cg_has_cpu(const CgSetup *s)
{
        return s->has_cpu;
}

const char *cg_layout_name(const CgSetup *s)
{
        switch (s->layout) {
        case CG_LAYOUT_V2:
                return "v2";
        case CG_LAYOUT_HYBRID:
                return "hybrid";
        case CG_LAYOUT_V1:
                return "v1";
        }
        return "unknown";
}

const char *cg_tree_path(const CgSetup *s, const char *controller)
{
        int c = ctrl_index(controller);
        return c < 0 ? NULL : s->hier[s->hier_of[c]].tree;
}

static int fail(int r, char *warn, size_t warnlen, const char *fmt, ...) _printf_(4, 5);
static int fail(int r, char *warn, size_t warnlen, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(warn, warnlen, fmt, ap);
        va_end(ap);
        return r;
}

static int access_errno(int r)
{
        return r == -EPERM || r == -EROFS ? -EACCES : r;
}

/* v2: moves every process of the cgroup dir into dir/supervisor, again until none is left
 * (a process forked meanwhile is moved by the next round). 0, -EBUSY when some stay. */
static int v2_move_all(const char *dir, char *warn, size_t warnlen)
{
        _cleanup_free_ char *sup = path_join(dir, "supervisor");
        _cleanup_free_ char *procs = sup ? path_join(sup, "cgroup.procs") : NULL;
        if (!procs)
                return -ENOMEM;
        if (mkdir(sup, 0755) < 0 && errno != EEXIST)
                return fail(access_errno(negative_errno()), warn, warnlen, "cannot create %s: %m",
                            sup);
        for (int round = 0; round < 100; round++) {
                _cleanup_free_ pid_t *pids = NULL;
                size_t n = 0;
                int r = read_pids(dir, &pids, &n);
                if (r < 0)
                        return fail(access_errno(r), warn, warnlen,
                                    "cannot read %s/cgroup.procs: %s", dir, strerror(-r));
                if (n == 0)
                        return 0;
                for (size_t i = 0; i < n; i++) {
                        char buf[32];
                        snprintf(buf, sizeof(buf), "%d\n", (int)pids[i]);
                        r = write_str(procs, buf);
                        if (r < 0 && r != -ESRCH) /* ESRCH: it exited meanwhile */
                                return fail(access_errno(r), warn, warnlen,
                                            "cannot move pid %d into %s: %s", (int)pids[i], sup,
                                            strerror(-r));
                }
        }
        return fail(-EBUSY, warn, warnlen, "processes keep appearing in %s", dir);
}

/*
 * v2 "no internal processes": the cgroup that enables controllers for its children holds no
 * process; pomed lives in its leaf <own>/supervisor. Where pomed's cgroup is its own (the
 * unit's, Delegate=yes), that is <own>. Where others share it (a login shell, a CI runner's
 * service, a shell that keeps forking) they are never moved — nor nested a level down: pomed
 * moves itself alone into a cgroup beside it, <parent>/<tree_name>.pomed, whose controllers
 * are its parent's too. The hierarchy's real root is exempt (recognised by its lack of
 * cgroup.type) and holds the whole system: nothing moves. *own (relative to mount) may be
 * replaced.
 */
static int v2_place(const char *mount, char **own, const char *tree_name, char *warn,
                    size_t warnlen)
{
        /* already placed (a process of a pomed layer, in its supervisor leaf, sets up again):
         * that layer, not a new one below it */
        const char *leaf = strrchr(*own, '/');
        if (leaf && leaf != *own && streq(leaf + 1, "supervisor"))
                (*own)[leaf - *own] = 0;
        _cleanup_free_ char *dir = path_join(mount, *own);
        if (!dir)
                return -ENOMEM;
        if (!file_exists(dir, "cgroup.type"))
                return 0;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        int r = read_pids(dir, &pids, &n);
        if (r < 0)
                return fail(access_errno(r), warn, warnlen, "cannot read %s/cgroup.procs: %s", dir,
                            strerror(-r));
        bool alone = true;
        for (size_t i = 0; i < n; i++)
                alone = alone && pids[i] == getpid();
        if (!alone) {
                _cleanup_free_ char *up = strdup(*own), *name = NULL;
                if (!up || asprintf(&name, "%s.pomed", tree_name) < 0)
                        return -ENOMEM;
                char *slash = strrchr(up, '/');
                slash[slash == up ? 1 : 0] = 0; /* "/a/b" → "/a", "/a" → "/" */
                char *beside = path_join(up, name);
                if (!beside)
                        return -ENOMEM;
                free(*own);
                *own = beside;
                free(dir);
                dir = path_join(mount, *own);
                if (!dir)
                        return -ENOMEM;
                if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                        return fail(access_errno(negative_errno()), warn, warnlen,
                                    "pomed's cgroup is shared with other processes, and the "
                                    "cgroup of its own beside it, %s, cannot be created: %m",
                                    dir);
                /* ourselves only: the others stay where they are */
                _cleanup_free_ char *sup = path_join(dir, "supervisor");
                if (!sup)
                        return -ENOMEM;
                if (mkdir(sup, 0755) < 0 && errno != EEXIST)
                        return fail(access_errno(negative_errno()), warn, warnlen,
                                    "cannot create %s: %m", sup);
                r = write_at(sup, "cgroup.procs", "0\n");
                if (r < 0)
                        return fail(access_errno(r), warn, warnlen, "cannot move pomed into %s: %s",
                                    sup, strerror(-r));
        }
        return v2_move_all(dir, warn, warnlen);
}

/* v2: enable our controllers for the children of dir ("+memory +pids [+cpu]" in one write);
 * a process that joined dir meanwhile is moved to dir/supervisor, and it is tried again. */
static int v2_enable(const char *dir, bool cpu, char *warn, size_t warnlen)
{
        const char *what = cpu ? "+memory +pids +cpu" : "+memory +pids";
        int r = write_at(dir, "cgroup.subtree_control", what);
        for (int i = 0; r == -EBUSY && i < 10; i++) {
                if (v2_move_all(dir, warn, warnlen) < 0)
                        break;
                r = write_at(dir, "cgroup.subtree_control", what);
        }
        if (r < 0)
                return fail(r == -EBUSY ? r : access_errno(r), warn, warnlen,
                            "cannot enable %s in %s/cgroup.subtree_control: %s%s", what, dir,
                            strerror(-r),
                            r == -EBUSY ? " (processes in that cgroup: no internal processes rule)"
                                        : "");
        return 0;
}

/* v2: memory and pids must be available in dir (its parent enabled them for it); cpu may be
 * missing (a service without Delegate= gets memory and pids only): *ret_cpu says. */
static int v2_check_delegated(const char *own, bool *ret_cpu, char *warn, size_t warnlen)
{
        _cleanup_free_ char *p = path_join(own, "cgroup.controllers"), *text = NULL;
        if (!p)
                return -ENOMEM;
        int r = read_all(p, &text);
        if (r < 0)
                return fail(access_errno(r), warn, warnlen, "cannot read %s: %s", p, strerror(-r));
        for (int c = 0; c < CG_N_CTRL; c++) {
                bool found = false;
                size_t l = strlen(ctrl_names[c]);
                /* a space-separated list: "cpuset cpu io memory pids" */
                for (const char *w = text; *w; w += strcspn(w, " \n"), w += strspn(w, " \n"))
                        if (strncmp(w, ctrl_names[c], l) == 0 && strchr(" \n", w[l]))
                                found = true;
                if (c == CG_CPU)
                        *ret_cpu = found;
                else if (!found)
                        return fail(-EOPNOTSUPP, warn, warnlen,
                                    "the %s controller is not available in %s (its parent does "
                                    "not enable it for pomed's cgroup: under systemd, "
                                    "Delegate=yes or MemoryAccounting=yes and TasksAccounting=yes)",
                                    ctrl_names[c], own);
        }
        return 0;
}

/*
 * The common part of cg_setup and cg_setup_at. mounts[c] is the mount point of the
 * hierarchy of controller c (v2: the same string thrice).
 */
static int setup_internal(CgLayout layout, const char *const mounts[CG_N_CTRL],
                          const char *proc_text, const char *parent, const char *tree_name,
                          bool use_libcgroup, CgSetup **ret, char *warn, size_t warnlen)
{
        int r;

        if (!valid_name(tree_name))
                return fail(-EINVAL, warn, warnlen, "invalid cgroup tree name \"%s\"",
                            strempty(tree_name));

        _cleanup_(cg_setup_freep) CgSetup *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->layout = layout;
        s->use_libcgroup = use_libcgroup;

        for (int c = 0; c < CG_N_CTRL; c++) {
                size_t i;
                for (i = 0; i < s->n_hier; i++)
                        if (streq(s->hier[i].mount, mounts[c]))
                                break;
                s->hier_of[c] = i;
                if (i < s->n_hier) {
                        s->hier[i].mask |= 1u << c;
                        continue;
                }
                CgHier *h = &s->hier[s->n_hier++];
                h->tree_fd = -1;
                h->mask = 1u << c;
                h->mount = strdup(mounts[c]);
                if (!h->mount)
                        return -ENOMEM;
                if (parent)
                        r = (h->own = strdup(parent)) ? 0 : -ENOMEM;
                else
                        r = cg_parse_own_cgroup(
                                proc_text, layout == CG_LAYOUT_V2 ? NULL : ctrl_names[c], &h->own);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return fail(-ENOENT, warn, warnlen, "no %s%s%s line in /proc/self/cgroup",
                                    layout == CG_LAYOUT_V2 ? "cgroup2 (0::)" : "",
                                    layout == CG_LAYOUT_V2 ? "" : ctrl_names[c],
                                    layout == CG_LAYOUT_V2 ? "" : " controller");
        }
        s->has_cpu = true;

        for (size_t i = 0; i < s->n_hier; i++) {
                CgHier *h = &s->hier[i];
                _cleanup_free_ char *own = path_join(h->mount, h->own);
                if (!own)
                        return -ENOMEM;
                struct stat st;
                if (parent && stat(own, &st) < 0 && mkdir(own, 0755) < 0 && errno != EEXIST) {
                        r = access_errno(negative_errno());
                        return fail(r, warn, warnlen, "cannot create cgroup_parent %s: %s", own,
                                    strerror(-r));
                }
                if (stat(own, &st) < 0 || !S_ISDIR(st.st_mode))
                        return fail(-ENOENT, warn, warnlen,
                                    "our cgroup %s is not visible at %s (a container without a "
                                    "cgroup namespace?)",
                                    h->own, own);
                if (layout == CG_LAYOUT_V2) {
                        r = v2_check_delegated(own, &s->has_cpu, warn, warnlen);
                        if (r < 0)
                                return r;
                        if (!s->has_cpu)
                                h->mask &= ~(1u << CG_CPU);
                        /* a configured parent is not where we run: nothing of ours to move */
                        r = parent ? 0 : v2_place(h->mount, &h->own, tree_name, warn, warnlen);
                        if (r < 0)
                                return r;
                        free(own);
                        own = path_join(h->mount, h->own);
                        if (!own)
                                return -ENOMEM;
                        r = v2_enable(own, s->has_cpu, warn, warnlen);
                        if (r < 0)
                                return r;
                }
                h->tree_rel = path_join(h->own, tree_name);
                h->tree = path_join(h->mount, h->tree_rel);
                if (!h->tree_rel || !h->tree)
                        return -ENOMEM;
                if (mkdir(h->tree, 0755) < 0 && errno != EEXIST) {
                        r = access_errno(negative_errno());
                        return fail(
                                r, warn, warnlen, "cannot create %s: %s%s", h->tree, strerror(-r),
                                r == -EACCES ? " (pomed needs root or a delegated cgroup)" : "");
                }
                h->tree_fd = open(h->tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (h->tree_fd < 0)
                        return fail(negative_errno(), warn, warnlen, "cannot open %s: %m", h->tree);
                if (flock(h->tree_fd, LOCK_EX | LOCK_NB) < 0)
                        return fail(errno == EWOULDBLOCK ? -EBUSY : negative_errno(), warn, warnlen,
                                    "%s is in use by another process (another pomed?)", h->tree);
                if (layout == CG_LAYOUT_V2) {
                        r = v2_enable(h->tree, s->has_cpu, warn, warnlen);
                        if (r < 0)
                                return r;
                        s->has_kill = file_exists(h->tree, "cgroup.kill");
                }
        }

        const CgHier *mh = &s->hier[s->hier_of[CG_MEMORY]];
        s->swap_limit =
                file_exists(mh->tree, layout == CG_LAYOUT_V2 ? "memory.swap.max"
                                                             : "memory.memsw.limit_in_bytes");
        if (s->swap_limit)
                warn[0] = 0;
        else
                snprintf(warn, warnlen,
                         "no swap accounting in %s (swapaccount=0?): a pod may use swap beyond "
                         "its memory limit",
                         mh->tree);
        *ret = TAKE_PTR(s);
        return 0;
}

static void cg_log_nothing(void *userdata, int level, const char *fmt, va_list ap)
{
        /* A low layer never logs (STYLE.md): libcgroup's messages are dropped, its codes kept. */
        (void)userdata;
        (void)level;
        (void)fmt;
        (void)ap;
}

/* libcgroup's positive ECG* codes → negative errno. */
static int cg_errno(int ecg)
{
        switch (ecg) {
        case 0:
                return 0;
        case ECGOTHER: {
                int e = cgroup_get_last_errno();
                return e > 0 ? -e : -EIO;
        }
        case ECGROUPNOTMOUNTED:
        case ECGROUPSUBSYSNOTMOUNTED:
        case ECGROUPNOTEXIST:
        case ECGROUPVALUENOTEXIST:
                return -ENOENT;
        case ECGROUPNOTOWNER:
        case ECGROUPNOTALLOWED:
                return -EACCES;
        case ECGINVAL:
        case ECGCANTSETVALUE:
                return -EINVAL;
        case ECGNONEMPTY:
                return -EBUSY;
        default:
                return -EIO;
        }
}

static bool endswith_dotdot(const char *p)
{
        size_t n = strlen(p);
        return (n >= 3 && streq(p + n - 3, "/..")) || (n >= 2 && streq(p + n - 2, "/."));
}

int cg_setup(const char *tree_name, CgSetup **ret, char *warn, size_t warnlen)
{
        return cg_setup_under(NULL, tree_name, ret, warn, warnlen);
}

int cg_setup_under(const char *parent, const char *tree_name, CgSetup **ret, char *warn,
                   size_t warnlen)
{
        if (parent && (parent[0] != '/' || strstr(parent, "/../") || strstr(parent, "/./") ||
                       endswith_dotdot(parent)))
                return fail(-EINVAL, warn, warnlen, "invalid cgroup parent \"%s\"", parent);
        struct statfs fs;
        CgLayout layout;

        if (statfs(CG_ROOT, &fs) < 0)
                return fail(-ENOENT, warn, warnlen, "no cgroup filesystem at " CG_ROOT ": %m");
        if ((unsigned long)fs.f_type == CGROUP2_SUPER_MAGIC)
                layout = CG_LAYOUT_V2;
        else if ((unsigned long)fs.f_type == TMPFS_MAGIC)
                layout = statfs(CG_ROOT "/unified", &fs) == 0 &&
                                         (unsigned long)fs.f_type == CGROUP2_SUPER_MAGIC
                                 ? CG_LAYOUT_HYBRID
                                 : CG_LAYOUT_V1;
        else
                return fail(-ENOENT, warn, warnlen,
                            CG_ROOT " is neither cgroup2 nor a tmpfs of v1 hierarchies");

        cgroup_set_logger(cg_log_nothing, CGROUP_LOG_ERROR, NULL);
        int e = cgroup_init();
        if (e != 0)
                return fail(cg_errno(e), warn, warnlen, "libcgroup: %s", cgroup_strerror(e));

        /* Mount points as libcgroup sees them, so our paths and its names agree. */
        char *mounts[CG_N_CTRL] = {};
        int r = 0;
        for (int c = 0; c < CG_N_CTRL; c++) {
                e = cgroup_get_subsys_mount_point(ctrl_names[c], &mounts[c]);
                if (e != 0) {
                        r = fail(-ENOENT, warn, warnlen, "the %s cgroup controller is not mounted",
                                 ctrl_names[c]);
                        break;
                }
        }
        _cleanup_free_ char *text = NULL;
        if (r == 0) {
                r = read_all("/proc/self/cgroup", &text);
                if (r < 0)
                        fail(r, warn, warnlen, "cannot read /proc/self/cgroup: %s", strerror(-r));
        }
        if (r == 0)
                r = setup_internal(layout, (const char *const *)mounts, text, parent, tree_name,
                                   true, ret, warn, warnlen);
        for (int c = 0; c < CG_N_CTRL; c++)
                free(mounts[c]);
        return r;
}

int cg_setup_at(const char *root_dir, CgLayout layout, const char *proc_self_cgroup,
                const char *tree_name, CgSetup **ret, char *warn, size_t warnlen)
{
        char *mounts[CG_N_CTRL] = {};
        int r = 0;
        for (int c = 0; c < CG_N_CTRL && r == 0; c++) {
                mounts[c] = layout == CG_LAYOUT_V2 ? strdup(root_dir)
                                                   : path_join(root_dir, ctrl_names[c]);
                if (!mounts[c])
                        r = -ENOMEM;
        }
        if (r == 0)
                r = setup_internal(layout, (const char *const *)mounts, proc_self_cgroup, NULL,
                                   tree_name, false, ret, warn, warnlen);
        for (int c = 0; c < CG_N_CTRL; c++)
                free(mounts[c]);
        return r;
}

/* ----- killing and removing ----- */

/* SIGKILLs the members of one cgroup. Returns how many pids it saw (>= 0) or negative errno. */
static int kill_members(const char *dir, bool has_kill)
{
        /* cgroup-v2.rst "cgroup.kill": writing 1 kills the whole subtree, no pid races. */
        if (has_kill && write_at(dir, "cgroup.kill", "1") == 0)
                return 0;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        int r = read_pids(dir, &pids, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                (void)kill(pids[i], SIGKILL); /* ESRCH: already gone */
        return (int)n;
}

/* Names of the subdirectories of dir (child cgroups), as a strv. 0 or negative errno. */
static int list_subdirs(const char *dir, char ***ret)
{
        _cleanup_strv_free_ char **l = strv_new();
        if (!l)
                return -ENOMEM;
        DIR *d = opendir(dir);
        if (!d)
                return negative_errno();
        int r = 0;
        struct dirent *de;
        while ((errno = 0, de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                bool is_dir = de->d_type == DT_DIR;
                if (de->d_type == DT_UNKNOWN) {
                        struct stat st;
                        is_dir = fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                                 S_ISDIR(st.st_mode);
                }
                if (is_dir && (r = strv_extend(&l, de->d_name)) < 0)
                        break;
        }
        if (r == 0 && errno)
                r = negative_errno();
        closedir(d);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(l);
        return 0;
}

/* kill_members on dir and every cgroup below it (cgroup.kill covers the subtree at once). */
static int kill_subtree(const char *dir, bool has_kill, int depth)
{
        if (has_kill && write_at(dir, "cgroup.kill", "1") == 0)
                return 0;
        if (depth > CG_MAX_DEPTH)
                return -ELOOP;
        _cleanup_strv_free_ char **subs = NULL;
        int r = list_subdirs(dir, &subs);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        for (char **p = subs; *p; p++) {
                _cleanup_free_ char *sub = path_join(dir, *p);
                if (!sub)
                        return -ENOMEM;
                (void)kill_subtree(sub, false, depth + 1);
        }
        r = kill_members(dir, false);
        return r == -ENOENT ? 0 : r < 0 ? r : 0;
}

/* rmdir(2) of dir and everything below it, bottom-up. 0 (also when already gone), -EBUSY… */
static int remove_subtree(const char *dir, int depth)
{
        if (depth > CG_MAX_DEPTH)
                return -ELOOP;
        _cleanup_strv_free_ char **subs = NULL;
        int r = list_subdirs(dir, &subs);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        for (char **p = subs; *p; p++) {
                _cleanup_free_ char *sub = path_join(dir, *p);
                if (!sub)
                        return -ENOMEM;
                r = remove_subtree(sub, depth + 1);
                if (r < 0)
                        return r;
        }
        if (rmdir(dir) < 0 && errno != ENOENT)
                return negative_errno();
        return 0;
}

/*
 * Kills everything in dir's subtree and removes it, retrying while a dying process
 * keeps a cgroup busy, for at most CG_WAIT_USEC. 0, -EBUSY on timeout, other errno.
 */
static int kill_and_remove(const char *dir, bool has_kill)
{
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + CG_WAIT_USEC;
        for (;;) {
                (void)kill_subtree(dir, has_kill, 0);
                int r = remove_subtree(dir, 0);
                if (r != -EBUSY && r != -ENOTEMPTY)
                        return r;
                if (now_usec(CLOCK_MONOTONIC) >= deadline)
                        return -EBUSY;
                sleep_usec(CG_POLL_USEC);
        }
}

int cg_cleanup_leftovers(CgSetup *s, char ***ret_sids)
{
        _cleanup_strv_free_ char **sids = strv_new();
        if (!sids)
                return -ENOMEM;
        int r = 0;
        for (size_t i = 0; i < s->n_hier; i++) {
                const CgHier *h = &s->hier[i];
                _cleanup_strv_free_ char **subs = NULL;
                int k = list_subdirs(h->tree, &subs);
                if (k < 0)
                        return k;
                for (char **p = subs; *p; p++) {
                        if (!strv_contains(sids, *p) && (k = strv_extend(&sids, *p)) < 0)
                                return k;
                        _cleanup_free_ char *dir = path_join(h->tree, *p);
                        if (!dir)
                                return -ENOMEM;
                        k = kill_and_remove(dir, s->has_kill);
                        if (k < 0 && r == 0)
                                r = k;
                }
        }
        if (r < 0)
                return r;
        size_t n = strv_length(sids);
        *ret_sids = TAKE_PTR(sids);
        return (int)n;
}

/* ----- pods ----- */

int cg_pod_limit_values(const CgSetup *s, const PodLimits *lim, char ***ret)
{
        _cleanup_strv_free_ char **l = strv_new();
        if (!l)
                return -ENOMEM;
        bool v2 = s->layout == CG_LAYOUT_V2;
        int r;
        /* v1 wants memsw >= limit at every moment: memory.limit_in_bytes goes first. */
        if ((r = strv_extendf(&l, "%s=%" PRIu64, v2 ? "memory.max" : "memory.limit_in_bytes",
                              lim->memory_max)) < 0)
                return r;
        if (s->swap_limit) {
                r = v2 ? strv_extend(&l, "memory.swap.max=0")
                       : strv_extendf(&l, "memory.memsw.limit_in_bytes=%" PRIu64, lim->memory_max);
                if (r < 0)
                        return r;
        }
        if ((r = strv_extendf(&l, "pids.max=%" PRIu64, lim->pids_max)) < 0)
                return r;
        if (!s->has_cpu)
                ;
        else if ((r = v2 ? strv_extendf(&l, "cpu.weight=%" PRIu64, lim->cpu_weight)
                         : strv_extendf(&l, "cpu.shares=%" PRIu64,
                                        cg_cpu_weight_to_shares(lim->cpu_weight))) < 0)
                return r;
        *ret = TAKE_PTR(l);
        return 0;
}

static bool limits_valid(const PodLimits *lim)
{
        return lim && lim->memory_max >= POD_MEMORY_MIN && lim->memory_max <= POD_MEMORY_MAX &&
               lim->pids_max >= 1 && lim->pids_max <= POD_PIDS_MAX &&
               lim->cpu_weight >= POD_CPU_WEIGHT_MIN && lim->cpu_weight <= POD_CPU_WEIGHT_MAX;
}

static void cgroup_freep_(struct cgroup **cg)
{
        if (*cg)
                cgroup_free(cg);
}

/*
 * Creates the leaf of one hierarchy with libcgroup, then writes the values of its
 * controllers. libcgroup 2.0's cgroup_create_cgroup re-reads /proc/mounts before every
 * directory it makes and every value it sets (cg_test_mounted_fs, not cached by
 * cgroup_init): it is asked for the directory only, and the values — one write(2) each,
 * as it would make them — go through our own open of the leaf, which pomed needs anyway.
 */
static int create_leaf(const CgSetup *s, const CgHier *h, const char *rel, const char *leaf,
                       char **values)
{
        _cleanup_(cgroup_freep_) struct cgroup *cg = cgroup_new_cgroup(rel);
        if (!cg)
                return -ENOMEM;
        for (int c = 0; c < CG_N_CTRL; c++)
                if ((h->mask & (1u << c)) && !cgroup_add_controller(cg, ctrl_names[c]))
                        return -ENOMEM;
        /*
         * ignore_ownership=1: the files stay root's, and libcgroup skips a chown per
         * control file (most of its ~230 syscalls per create, DESIGN.md pitfalls).
         */
        int e = cgroup_create_cgroup(cg, 1);
        if (e != 0)
                return cg_errno(e);
        _cleanup_close_ int dfd = open(leaf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return negative_errno();
        for (int c = 0; c < CG_N_CTRL; c++) {
                if (!(h->mask & (1u << c)))
                        continue;
                size_t cl = strlen(ctrl_names[c]);
                for (char **v = values; *v; v++) {
                        if (strncmp(*v, ctrl_names[c], cl) != 0 || (*v)[cl] != '.')
                                continue;
                        const char *eq = strchr(*v, '=');
                        char file[64];
                        if ((size_t)(eq - *v) >= sizeof(file))
                                return -EINVAL;
                        memcpy(file, *v, (size_t)(eq - *v));
                        file[eq - *v] = 0;
                        _cleanup_close_ int fd = openat(dfd, file, O_WRONLY | O_CLOEXEC);
                        if (fd < 0)
                                return access_errno(negative_errno());
                        size_t n = strlen(eq + 1);
                        ssize_t k = write(fd, eq + 1, n);
                        if (k < 0) /* a value the kernel refuses is a bad limit */
                                return errno == EPERM || errno == EACCES ? -EACCES : -EINVAL;
                        if ((size_t)k != n)
                                return -EIO;
                }
        }
        if (s->layout == CG_LAYOUT_V2) {
                /*
                 * The leaf must enable nothing for children or nobody could join it (no
                 * internal processes). libcgroup enables controllers in the parents only,
                 * but older releases also did it in the leaf: undo that if it happened.
                 */
                _cleanup_free_ char *sc = path_join(leaf, "cgroup.subtree_control");
                _cleanup_free_ char *text = NULL;
                if (!sc)
                        return -ENOMEM;
                if (read_all(sc, &text) == 0 && text[strspn(text, " \n")] != 0) {
                        int r = write_str(sc, "-memory -pids -cpu");
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

int cg_pod_create(CgSetup *s, const char *name, const PodLimits *lim, CgPod **ret)
{
        int r;

        if (!valid_name(name) || !limits_valid(lim))
                return -EINVAL;
        if (!s->use_libcgroup)
                return -EOPNOTSUPP;

        _cleanup_strv_free_ char **values = NULL;
        r = cg_pod_limit_values(s, lim, &values);
        if (r < 0)
                return r;

        CgPod *p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->setup = s;
        for (size_t i = 0; i < CG_N_CTRL; i++)
                p->join_fds[i] = -1;

        for (size_t i = 0; i < s->n_hier; i++) {
                const CgHier *h = &s->hier[i];
                CgLeaf *l = &p->leaf[i];
                _cleanup_free_ char *rel = path_join(h->tree_rel, name);
                l->hier = h;
                l->path = path_join(h->tree, name);
                if (!rel || !l->path) {
                        r = -ENOMEM;
                        goto fail;
                }
                if (access(l->path, F_OK) == 0) {
                        /* Someone else's leaf: not ours to remove on the way out. */
                        r = -EEXIST;
                        goto fail;
                }
                p->n_leaf = i + 1;
                r = create_leaf(s, h, rel, l->path, values);
                if (r < 0)
                        goto fail;
                _cleanup_free_ char *procs = path_join(l->path, "cgroup.procs");
                if (!procs) {
                        r = -ENOMEM;
                        goto fail;
                }
                p->join_fds[i] = open(procs, O_WRONLY | O_CLOEXEC);
                if (p->join_fds[i] < 0) {
                        r = negative_errno();
                        goto fail;
                }
        }
        *ret = p;
        return 0;

fail:
        if (r == -EEXIST) {
                /* leave the existing leaf alone: forget it before cleaning up ours */
                CgLeaf *l = &p->leaf[p->n_leaf];
                free(l->path);
                *l = (CgLeaf){};
        }
        (void)cg_pod_destroy(p);
        return r;
}

int cg_pod_join_fds(const CgPod *p, const int **ret_fds, size_t *ret_n)
{
        *ret_fds = p->join_fds;
        *ret_n = p->n_leaf;
        return 0;
}

void cg_pod_close_join_fds(CgPod *p)
{
        for (size_t i = 0; i < CG_N_CTRL; i++)
                p->join_fds[i] = safe_close(p->join_fds[i]);
}

static const CgLeaf *leaf_of(const CgPod *p, const char *controller)
{
        int c = ctrl_index(controller);
        if (c < 0)
                return NULL;
        for (size_t i = 0; i < p->n_leaf; i++)
                if (p->leaf[i].hier && (p->leaf[i].hier->mask & (1u << c)))
                        return &p->leaf[i];
        return NULL;
}

const char *cg_pod_path(const CgPod *p, const char *controller)
{
        const CgLeaf *l = leaf_of(p, controller);
        return l ? l->path : NULL;
}

static int read_u64(const char *dir, const char *name, uint64_t *ret)
{
        _cleanup_free_ char *text = NULL;
        int r = read_at(dir, name, &text);
        if (r < 0)
                return r;
        char *end;
        errno = 0;
        unsigned long long n = strtoull(text, &end, 10);
        if (errno || end == text)
                return -EINVAL;
        *ret = n;
        return 0;
}

/*
 * Whether the memory cgroup at dir reached its own limit: v1 memory.failcnt > 0 (the
 * page counter that refused a charge counts it, not its descendants) or a peak at the
 * limit; v2 "oom" or "max" in memory.events.local (5.2+; memory.events before).
 */
static bool limit_reached(CgLayout layout, const char *dir)
{
        uint64_t n;
        if (layout == CG_LAYOUT_V2) {
                _cleanup_free_ char *text = NULL;
                if (read_events_local(dir, &text) < 0)
                        return false;
                return (parse_key(text, "oom", &n) == 0 && n > 0) ||
                       (parse_key(text, "max", &n) == 0 && n > 0);
        }
        if (read_u64(dir, "memory.failcnt", &n) == 0 && n > 0)
                return true;
        uint64_t peak, limit;
        return read_u64(dir, "memory.max_usage_in_bytes", &peak) == 0 &&
               read_u64(dir, "memory.limit_in_bytes", &limit) == 0 && peak >= limit;
}

int cg_oom_attribute(CgLayout layout, const char *mount, const char *leaf, char **ret_culprit)
{
        _cleanup_free_ char *text = NULL;
        int r = layout == CG_LAYOUT_V2 ? read_events_local(leaf, &text)
                                       : read_at(leaf, "memory.oom_control", &text);
        if (r < 0)
                return r;
        uint64_t n;
        r = parse_key(text, "oom_kill", &n);
        if (r < 0)
                return r;
        if (n == 0)
                return CG_OOM_NONE;
        if (limit_reached(layout, leaf))
                return CG_OOM_OWN;

        /* Not ours: the nearest ancestor that reached its limit, up to the mount point. */
        _cleanup_free_ char *dir = strdup(leaf);
        if (!dir)
                return -ENOMEM;
        size_t ml = strlen(mount);
        for (;;) {
                char *slash = strrchr(dir, '/');
                if (!slash || (size_t)(slash - dir) <= ml)
                        break;
                *slash = 0;
                if (limit_reached(layout, dir)) {
                        if (ret_culprit) {
                                *ret_culprit = strdup(dir + ml);
                                if (!*ret_culprit)
                                        return -ENOMEM;
                        }
                        return CG_OOM_HOST;
                }
        }
        if (ret_culprit)
                *ret_culprit = NULL; /* the root: a host-wide shortage */
        return CG_OOM_HOST;
}

int cg_pod_oom(CgPod *p, char **ret_culprit)
{
        const CgLeaf *l = leaf_of(p, "memory");
        if (!l)
                return -ENOENT;
        return cg_oom_attribute(p->setup->layout, l->hier->mount, l->path, ret_culprit);
}

/* Kills what is left in every leaf and removes the leaves that are empty. */
int cg_pod_release(CgPod *p)
{
        int r = 0;
        cg_pod_close_join_fds(p);
        for (size_t i = 0; i < p->n_leaf; i++) {
                CgLeaf *l = &p->leaf[i];
                if (!l->path)
                        continue;
                /* the usual case, a reaped pod's leaf: empty, no children, one rmdir (the
                 * walk below is four more syscalls a controller, on every discard's path) */
                int k = rmdir(l->path) < 0 && errno != ENOENT ? -errno : 0;
                if (k < 0) {
                        (void)kill_subtree(l->path, p->setup->has_kill, 0);
                        k = remove_subtree(l->path, 0);
                }
                if (k == -ENOTEMPTY)
                        k = -EBUSY;
                if (k < 0) {
                        if (r == 0 || k == -EBUSY)
                                r = k;
                        continue;
                }
                free(l->path);
                l->path = NULL;
        }
        return r;
}

CgPod *cg_pod_free(CgPod *p)
{
        if (!p)
                return NULL;
        for (size_t i = 0; i < CG_N_CTRL; i++) {
                safe_close(p->join_fds[i]);
                free(p->leaf[i].path);
        }
        free(p);
        return NULL;
}

int cg_pod_destroy(CgPod *p)
{
        if (!p)
                return 0;
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + CG_WAIT_USEC;
        int r;
        while ((r = cg_pod_release(p)) == -EBUSY && now_usec(CLOCK_MONOTONIC) < deadline)
                sleep_usec(CG_POLL_USEC);
        cg_pod_free(p);
        return r;
}

int cg_reap_tree(const char *path, char ***ret_sids)
{
        /* Only ever a pomed tree in a cgroup filesystem: the path comes from a file. */
        const char *base = strrchr(path, '/');
        if (!startswith(path, CG_ROOT "/") || strstr(path, "/../") || strstr(path, "/./") ||
            !base || !startswith(base + 1, "pome-"))
                return -EINVAL;
        struct statfs fs;
        if (statfs(path, &fs) < 0)
                return errno == ENOENT ? 0 : negative_errno();
        if ((unsigned long)fs.f_type != CGROUP2_SUPER_MAGIC &&
            (unsigned long)fs.f_type != CGROUP_SUPER_MAGIC)
                return -EINVAL;
        _cleanup_strv_free_ char **subs = NULL;
        int r = list_subdirs(path, &subs);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        bool has_kill = file_exists(path, "cgroup.kill");
        for (char **p = subs; *p; p++) {
                _cleanup_free_ char *dir = path_join(path, *p);
                if (!dir)
                        return -ENOMEM;
                int k = kill_and_remove(dir, has_kill);
                if (k < 0 && r == 0)
                        r = k;
        }
        if (rmdir(path) < 0 && errno != ENOENT && errno != EBUSY && r == 0)
                r = negative_errno();
        if (r < 0)
                return r;
        /* v2: the leaf its pomed lived in, and the cgroup pomed made for itself beside a
         * shared one (<parent>/<tree>.pomed), go too when nothing is left in them; rmdir
         * refuses one that still holds a process or a child (ours, when we are there) */
        _cleanup_free_ char *up = strndup(path, (size_t)(base - path));
        _cleanup_free_ char *sup = up ? path_join(up, "supervisor") : NULL;
        if (sup && file_exists(up, "cgroup.type")) {
                (void)rmdir(sup);
                if (endswith(up, ".pomed"))
                        (void)rmdir(up);
        }
        size_t n = strv_length(subs);
        if (ret_sids)
                *ret_sids = TAKE_PTR(subs);
        return (int)n;
}
