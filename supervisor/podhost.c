/* SPDX-License-Identifier: MIT */
#include "supervisor/podhost.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "common/fileio.h"
#include "common/hashmap.h"
#include "common/strv.h"
#include "common/token.h"
#include "common/timeutil.h"
#include "common/util.h"
#include "supervisor/cgroup.h"
#include "supervisor/log.h"
#include "supervisor/notify.h"
#include "supervisor/seccomp-policy.h"

#define CGROUP_RECORD "cgroup-tree" /* in the state dir: where our pods' cgroups are */

struct PodHost {
        PodEnv env;
        Hashmap *by_pid;
        CgSetup *cgroups;
        ScpProgram *stage1, *stage2;
        Notify *notify;
        char *runtime_dir;
        bool own_runtime_dir; /* ours to remove at exit (not configured, not systemd's) */
        char missing[256];
        char cgroup_error[256]; /* why the cgroup layer is missing, "" when it is there */
        char pod_user[64];      /* "" when pods keep pomed's uid (not root) */
        char uid_range[32];     /* "FIRST-LAST" of pod_uid_range, "" when not configured */
        uint8_t *range_used;    /* one byte per uid of the range: taken by a live pod */
};

static void add_missing(PodHost *h, const char *layer)
{
        size_t l = strlen(h->missing);
        snprintf(h->missing + l, sizeof(h->missing) - l, "%s%s", l ? ", " : "", layer);
}

/* ---- install check: can the pod user run pome-pod and read the images? ---- */

/*
 * Whether uid/gid may execute the program of the O_PATH fd exec_fd, asked in a child that
 * becomes them (the real answer: ACLs, mount flags and all; faccessat(2) with
 * AT_EMPTY_PATH, Linux >= 5.8). No path is searched: pods are started from the fd. 0, a
 * positive errno when it may not, or negative errno when the check itself cannot run.
 */
static int exec_allowed_as(int exec_fd, uid_t uid, gid_t gid)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        pid_t pid = fork();
        if (pid < 0) {
                int r = negative_errno();
                close(p[0]);
                close(p[1]);
                return r;
        }
        if (pid == 0) {
                int res = 0;
                if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
                    setresuid(uid, uid, uid) < 0)
                        res = -errno;
                else if (faccessat(exec_fd, "", X_OK, AT_EMPTY_PATH) < 0)
                        res = errno;
                (void)!write(p[1], &res, sizeof(res));
                _exit(0);
        }
        close(p[1]);
        int res = -EIO;
        ssize_t k = read(p[0], &res, sizeof(res));
        close(p[0]);
        (void)waitpid(pid, NULL, 0);
        return k == (ssize_t)sizeof(res) ? res : -EIO;
}

/* The pod user must be able to execute pome-pod; nothing else of the install is read by a
 * pod (pomed reads the images and policies and hands over what a pod needs). */
static int check_install(const Images *im, const char *user, uid_t uid, gid_t gid, char *err,
                         size_t errlen)
{
        int e = exec_allowed_as(im->pod_exec_fd, uid, gid);
        if (e < 0) {
                snprintf(err, errlen, "cannot check what pod_user %s can execute: %s", user,
                         strerror(-e));
                return e;
        }
        if (e == 0)
                return 0;
        snprintf(err, errlen,
                 "broken install: pod_user %s (uid %u) cannot execute %s (%s), so no pod could "
                 "start. Fix: chmod o+x %s, or set pod_user or pod_exec in pomed.conf",
                 user, (unsigned)uid, im->pod_exec,
                 strerrorname_np(e) ? strerrorname_np(e) : strerror(e), im->pod_exec);
        return -EACCES;
}

/* ---- pod_uid_range ---- */

/* A uid a pod gets must be nobody's: no account nor group may have one of the range. */
static int check_uid_range(uint32_t first, uint32_t n, char *err, size_t errlen)
{
        const char *who = NULL;
        unsigned long id = 0;
        setpwent();
        for (struct passwd *pw; !who && (pw = getpwent());)
                if (pw->pw_uid >= first && pw->pw_uid - first < n) {
                        who = "user";
                        id = pw->pw_uid;
                        snprintf(err, errlen, "%s", pw->pw_name);
                }
        endpwent();
        setgrent();
        for (struct group *gr; !who && (gr = getgrent());)
                if (gr->gr_gid >= first && gr->gr_gid - first < n) {
                        who = "group";
                        id = gr->gr_gid;
                        snprintf(err, errlen, "%s", gr->gr_name);
                }
        endgrent();
        if (!who)
                return 0;
        char name[64];
        snprintf(name, sizeof(name), "%s", err);
        snprintf(err, errlen,
                 "pod_uid_range %u-%u holds %lu, the id of %s %s: pods must not share a uid or "
                 "gid with anyone. Fix: choose a range no account uses",
                 first, first + n - 1, id, who, name);
        return -EEXIST;
}

/* ---- cgroups ---- */

/* Reaps the trees a previous pomed of this state dir recorded, wherever they are. */
static void reap_recorded(const StateDir *state, const CgSetup *cg)
{
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int dfd = open(state->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0 || read_file_at(dfd, CGROUP_RECORD, 64 * 1024, &text, NULL) < 0)
                return;
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
                static const char *const ctrls[] = {"memory", "pids", "cpu"};
                bool ours = false;
                for (size_t i = 0; i < ELEMENTSOF(ctrls); i++)
                        ours = ours || streq_ptr(cg_tree_path(cg, ctrls[i]), line);
                if (ours)
                        continue; /* cg_cleanup_leftovers takes care of our own tree */
                char **sids = NULL;
                int r = cg_reap_tree(line, &sids);
                if (r < 0)
                        log_warning_errno(r, "cannot reap the previous pomed's cgroups at %s",
                                          line);
                for (char **s = sids; s && *s; s++)
                        log_notice("%s: pods left by a previous pomed (at %s) killed", *s, line);
                strv_free(sids);
        }
}

/* Remembers where our tree is, so a pomed started anywhere later reaps it. */
static void record_tree(const StateDir *state, const CgSetup *cg)
{
        static const char *const ctrls[] = {"memory", "pids", "cpu"};
        _cleanup_strv_free_ char **l = strv_new();
        for (size_t i = 0; l && i < ELEMENTSOF(ctrls); i++) {
                const char *p = cg_tree_path(cg, ctrls[i]);
                if (p && !strv_contains(l, p) && strv_extend(&l, p) < 0)
                        return;
        }
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (!f || !l)
                return;
        for (char **p = l; *p; p++)
                fprintf(f, "%s\n", *p);
        if (fclose(f) != 0)
                return;
        _cleanup_close_ int dfd = open(state->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int r = dfd < 0 ? negative_errno()
                        : write_file_at(dfd, CGROUP_RECORD, text, len, 0644, true);
        if (r < 0)
                log_warning_errno(r, "cannot record the cgroup tree in %s/" CGROUP_RECORD,
                                  state->path);
}

static void setup_cgroups(PodHost *h, const Config *cfg, const StateDir *state)
{
        /* One tree per state directory: two pomeds side by side (tests, CI) never touch
         * each other's pods, and a restarted pomed finds its predecessor's. */
        char warn[256] = "", hex[65], tree[32];
        token_sha256_hex(state->path, hex);
        snprintf(tree, sizeof(tree), "pome-%.8s", hex);
        int r = cg_setup_under(cfg->cgroup_parent, tree, &h->cgroups, warn, sizeof(warn));
        if (r < 0) {
                snprintf(h->cgroup_error, sizeof(h->cgroup_error), "%s",
                         warn[0] ? warn : strerror(-r));
                if (cfg->allow_unlimited_pods)
                        log_warning("cgroups unavailable, pods run without memory/pids limits "
                                    "(allow_unlimited_pods: true): %s",
                                    h->cgroup_error);
                else
                        log_warning("cgroups unavailable: %s. Creates are refused, as a pod "
                                    "without memory and pids limits is not isolated. "
                                    "Fix: " PODHOST_CGROUP_FIX,
                                    h->cgroup_error);
                add_missing(h, "cgroups");
                return;
        }
        if (!cg_has_cpu(h->cgroups))
                log_notice("cgroups: no cpu controller here (a unit without Delegate=yes?): "
                           "pods get memory and pids limits, no cpu weight");
        if (warn[0])
                log_warning("%s", warn);
        reap_recorded(state, h->cgroups);
        char **left = NULL;
        r = cg_cleanup_leftovers(h->cgroups, &left);
        if (r < 0)
                log_warning_errno(r, "cannot clean leftover pod cgroups");
        for (char **l = left; l && *l; l++)
                log_notice("%s: pods left by a previous pomed killed", *l);
        strv_free(left);
        record_tree(state, h->cgroups);
        log_info("cgroups: %s layout, pods under %s", cg_layout_name(h->cgroups),
                 strempty(cg_tree_path(h->cgroups, "memory")));
}

/* ---- runtime directory ---- */

/* True when the socket at path has nobody bound to it any more. */
static bool socket_dead(const char *path)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (strlen(path) >= sizeof(sa.sun_path))
                return false;
        strcpy(sa.sun_path, path);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        return fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 &&
               (errno == ECONNREFUSED || errno == ENOENT);
}

/* Removes the private pome.XXXXXX directories earlier pomeds left in base when killed. */
static void sweep_stale(const char *base)
{
        DIR *d = opendir(base);
        if (!d)
                return;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (!startswith(de->d_name, "pome.") || strlen(de->d_name) != 11)
                        continue;
                struct stat st;
                char sock[PATH_MAX];
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
                        continue;
                snprintf(sock, sizeof(sock), "%s/%s/notify", base, de->d_name);
                if (access(sock, F_OK) == 0 && !socket_dead(sock))
                        continue;
                if (rm_rf_at(dirfd(d), de->d_name) >= 0)
                        log_notice("removed %s/%s, left by a pomed that was killed", base,
                                   de->d_name);
        }
        closedir(d);
}

static int make_runtime_dir(PodHost *h, const Config *cfg, const StateDir *state)
{
        const char *tmp = getenv("TMPDIR");
        sweep_stale("/run");
        sweep_stale(tmp && *tmp ? tmp : "/tmp");
        const char *fixed = cfg->runtime_dir;
        const char *rd = getenv("RUNTIME_DIRECTORY"); /* systemd's RuntimeDirectory= */
        if (!fixed && rd && *rd)
                fixed = rd;
        if (fixed) {
                h->runtime_dir = strndup(fixed, strcspn(fixed, ":"));
                if (!h->runtime_dir)
                        return -ENOMEM;
                if (mkdir(h->runtime_dir, 0755) < 0 && errno != EEXIST)
                        return negative_errno();
                return 0;
        }
        /* A stable name per state directory: a pomed that was killed leaves nothing that
         * its successor does not reuse (the state dir's lock says no one else uses it). */
        char hex[65];
        token_sha256_hex(state->path, hex);
        const char *xdg = getenv("XDG_RUNTIME_DIR");
        const char *base = geteuid() == 0 && access("/run", W_OK) == 0 ? "/run"
                           : xdg && *xdg && access(xdg, W_OK) == 0     ? xdg
                           : tmp && *tmp                               ? tmp
                                                                       : "/tmp";
        if (asprintf(&h->runtime_dir, "%s/pome-%u-%.8s", base, (unsigned)geteuid(), hex) < 0) {
                h->runtime_dir = NULL;
                return -ENOMEM;
        }
        if (mkdir(h->runtime_dir, 0755) < 0 && errno != EEXIST)
                return negative_errno();
        struct stat st;
        if (lstat(h->runtime_dir, &st) < 0)
                return negative_errno();
        /* in a shared /tmp, refuse a directory someone else prepared for us */
        if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
                return -EPERM;
        if (chmod(h->runtime_dir, 0755) < 0)
                return negative_errno();
        h->own_runtime_dir = true;
        return 0;
}

/* ---- notify routing ---- */

static void on_notify(pid_t pid, const char *msg, size_t len _unused_, void *userdata)
{
        PodHost *h = userdata;
        Pod *p = hashmap_get_u64(h->by_pid, (uint64_t)pid);
        if (p)
                pod_notify(p, msg);
        else
                log_debug("notify message from unknown pid %d ignored", (int)pid);
}

/* ---- the host ---- */

int podhost_new(sd_event *e, const Config *cfg, const StateDir *state, const Images *images,
                PodHost **ret, char *err, size_t errlen)
{
        _cleanup_free_ char *p1 = NULL, *p2 = NULL;
        PodHost *h = calloc(1, sizeof(*h));
        if (!h)
                return -ENOMEM;
        int r = (h->by_pid = hashmap_new(HASHMAP_U64)) ? 0 : -ENOMEM;
        if (r < 0)
                goto fail;

        /* seccomp: policy files are ours; an error in them is fatal, not a missing layer */
        if (asprintf(&p1, "%s/pod-stage1.policy", images->policies_dir) < 0 ||
            asprintf(&p2, "%s/pod-stage2.policy", images->policies_dir) < 0) {
                r = -ENOMEM;
                goto fail;
        }
        r = scp_compile(p1, &h->stage1, err, errlen);
        if (r >= 0)
                r = scp_compile(p2, &h->stage2, err, errlen);
        if (r < 0)
                goto fail;

        uid_t uid = geteuid();
        gid_t gid = getegid();
        bool root = uid == 0;
        if (root) {
                /* Unset: the package's own system user (sysusers.d/pome.conf), so pods share
                 * a uid with no other service; nobody only where it was never installed. */
                const char *user = cfg->pod_user ? cfg->pod_user : PODHOST_DEFAULT_USER;
                struct passwd *pw = getpwnam(user);
                if (!pw && !cfg->pod_user) {
                        user = "nobody";
                        pw = getpwnam(user);
                        if (pw) {
                                log_warning("pod user " PODHOST_DEFAULT_USER " does not exist: "
                                            "pods run as nobody, a uid other services share. "
                                            "Fix: systemd-sysusers (the package's "
                                            "sysusers.d/pome.conf creates it), or set pod_user");
                                add_missing(h, "a pod user of its own (pods run as nobody)");
                        }
                }
                if (!pw) {
                        snprintf(err, errlen, "pod_user '%s' does not exist", user);
                        r = -ENOENT;
                        goto fail;
                }
                if (pw->pw_uid == 0) {
                        snprintf(err, errlen, "pod_user must not be root");
                        r = -EINVAL;
                        goto fail;
                }
                uid = pw->pw_uid;
                gid = pw->pw_gid;
                snprintf(h->pod_user, sizeof(h->pod_user), "%s", user);
                if (cfg->pod_uid_count) {
                        r = check_uid_range(cfg->pod_uid_first, cfg->pod_uid_count, err, errlen);
                        if (r < 0)
                                goto fail;
                        h->range_used = calloc(cfg->pod_uid_count, 1);
                        if (!h->range_used) {
                                r = -ENOMEM;
                                goto fail;
                        }
                        snprintf(h->uid_range, sizeof(h->uid_range), "%u-%u", cfg->pod_uid_first,
                                 cfg->pod_uid_first + cfg->pod_uid_count - 1);
                        /* what every pod of the range can reach: the first one's answer */
                        uid = gid = cfg->pod_uid_first;
                }
                r = check_install(images, user, uid, gid, err, errlen);
                if (r < 0)
                        goto fail;
        } else
                add_missing(h, "namespaces and unprivileged pod user (pomed is not root)");

        setup_cgroups(h, cfg, state);

        r = make_runtime_dir(h, cfg, state);
        if (r < 0) {
                snprintf(err, errlen, "cannot create the runtime directory %s: %s",
                         strempty(h->runtime_dir), strerror(-r));
                goto fail;
        }
        r = notify_new(e, h->runtime_dir, on_notify, h, &h->notify);
        if (r < 0) {
                snprintf(err, errlen, "cannot bind the notify socket in %s: %s", h->runtime_dir,
                         strerror(-r));
                goto fail;
        }
        h->env = (PodEnv){
                .event = e,
                .cgroups = h->cgroups,
                .stage1 = h->stage1,
                .stage2 = h->stage2,
                .exec_path = images->pod_exec,
                .exec_fd = images->pod_exec_fd,
                .notify_path = notify_path(h->notify),
                .uid = uid,
                .gid = gid,
                .namespaces = root,
                .range_first = cfg->pod_uid_first,
                .range_used = h->range_used,
                .range_n = h->range_used ? cfg->pod_uid_count : 0,
                .by_pid = h->by_pid,
                .max_pending = cfg->max_pending_calls,
                .pack_after_ms = (unsigned)(cfg->pod_pack_after_usec / USEC_PER_MSEC),
        };
        if (h->missing[0])
                log_struct(LOG_WARNING,
                           &(LogFields){.message_id = LOG_MESSAGE_LAYERS_MISSING,
                                        .reason = h->missing},
                           "isolation layers missing: %s", h->missing);
        *ret = h;
        return 0;
fail:
        podhost_free(h);
        return r < 0 ? r : -EINVAL;
}

PodHost *podhost_free(PodHost *h)
{
        if (!h)
                return NULL;
        notify_free(h->notify);
        if (h->runtime_dir && h->own_runtime_dir)
                (void)rmdir(h->runtime_dir);
        free(h->runtime_dir);
        scp_free(h->stage1);
        scp_free(h->stage2);
        cg_setup_free(h->cgroups);
        hashmap_free(h->by_pid);
        free(h->range_used);
        free(h);
        return NULL;
}

const PodEnv *podhost_env(PodHost *h)
{
        return &h->env;
}

const char *podhost_missing_layers(const PodHost *h)
{
        return h->missing;
}

const char *podhost_pod_user(const PodHost *h)
{
        return h->pod_user;
}

const char *podhost_pod_uid_range(const PodHost *h)
{
        return h->uid_range[0] ? h->uid_range : NULL;
}

const char *podhost_cgroup_error(const PodHost *h)
{
        return h->cgroup_error[0] ? h->cgroup_error : NULL;
}

const CgSetup *podhost_cgroups(const PodHost *h)
{
        return h->cgroups;
}

/* ---- the trial pod ---- */

typedef struct Trial {
        bool ready, exited;
        char how[96], detail[256];
} Trial;

static void trial_ready(Pod *p _unused_, void *userdata)
{
        ((Trial *)userdata)->ready = true;
}

static void trial_exited(Pod *p _unused_, const char *how, const char *detail, void *userdata)
{
        Trial *t = userdata;
        t->exited = true;
        snprintf(t->how, sizeof(t->how), "%s", how);
        snprintf(t->detail, sizeof(t->detail), "%s", strempty(detail));
}

int podhost_trial(PodHost *h, const Image *img, const char *seed, size_t seed_len,
                  uint64_t timeout_usec, char *err, size_t errlen)
{
        static const PodCallbacks cb = {.ready = trial_ready, .exited = trial_exited};
        Trial t = {};
        Pod *p = NULL;
        char e[256] = "";
        int r = pod_start(&h->env, "pome-trial", img->kind, seed, seed_len, &img->limits, &cb, &t,
                          &p, e, sizeof(e));
        if (r < 0) {
                snprintf(err, errlen, "broken install: a trial pod cannot be started: %s", e);
                return r;
        }
        /* pomed's loop is not running yet: turn it here until the pod is up or gone */
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + timeout_usec;
        while (!t.ready && !t.exited && now_usec(CLOCK_MONOTONIC) < deadline)
                (void)sd_event_run(h->env.event, 10 * USEC_PER_MSEC);
        if (!t.ready && !t.exited) {
                pod_kill(p, "start_timeout");
                while (!t.exited)
                        (void)sd_event_run(h->env.event, 10 * USEC_PER_MSEC);
        }
        bool ok = t.ready && !t.exited;
        pod_free(p); /* kills and reaps it: a trial is not kept */
        if (ok)
                return 0;
        snprintf(err, errlen,
                 "broken install: a trial %s pod (%s, run as uid %u under the pod isolation) "
                 "did not start: %s%s%s. pome-pod must be the static program the build makes "
                 "(see its lines above on stderr, if any); check pod_exec, pod_user and the "
                 "policies",
                 img->kind->name, h->env.exec_path, (unsigned)h->env.uid, t.how,
                 t.detail[0] ? ": " : "", t.detail);
        return -ENOEXEC;
}
