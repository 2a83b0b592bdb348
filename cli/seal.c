/* SPDX-License-Identifier: MIT */
#include "cli/seal.h"

#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "supervisor/agentnet.h"
#include "common/fileio.h"
#include "common/runca.h"
#include "common/strv.h"
#include "common/util.h"
#include "supervisor/cgroup.h"
#include "supervisor/seccomp-policy.h"
#include "pods/twin/twin.h"

/* policies/agent.policy, built into pome (cmake/embed-text.cmake) */
extern const char agent_policy[];
extern const size_t agent_policy_len;

#define PROXY_PORT  3128                 /* the proxy's port inside the pod, as squid's */
#define UID_BASE    UINT32_C(3000000000) /* agents' uids as root: far from users and pods */
#define UID_PER_RUN 64u
#define UID_RUNS    1000000u
#define TLS_PORT    443                                  /* the vendors' names, in the pod */
#define CA_BUNDLE   "/etc/ssl/certs/ca-certificates.crt" /* Debian's system store */
#define HOSTS_FILE  "/etc/hosts"
#define VENDOR_MAX  16 /* vendor host names of every twin kind */

/* Masked in every pod: where pome and pomed keep keys, runs and state. */
static const char *const hide_always[] = {
        "/root", "/home", "/etc/pome", "/var/lib/pome", "/run/pome",
};

struct Seal {
        SealConfig cfg;
        int mode; /* agent_pod_probe: 1 root, 2 user namespace */
        ScpProgram *filter;
        CgSetup *cg;
        char **hide;
        uint32_t uid_base;
        RunCa ca;    /* the run's CA and its leaf for the vendors' names */
        char *hosts; /* the pod's /etc/hosts: the vendors' names on loopback first */
        size_t hosts_len;
        char *bundle; /* the pod's CA bundle: the host's, and the run's CA */
        size_t bundle_len;
        AgentPodFile files[2];
        size_t n_files;
        char *no_proxy; /* loopback and the vendors' names: reached directly, never proxied */
};

/* One address of the twins the pod's environment names, served on a port inside the pod. */
typedef struct Forward {
        char *host; /* as the URL has it, without brackets */
        uint16_t port;
        uint16_t inner; /* the port inside the pod */
        char *label;
} Forward;

struct SealedAgent {
        Seal *seal;
        unsigned trial;
        char *cwd;
        CgPod *cg;
        AgentNet *net;
        AgentPodSpec pod;
        Forward fwd[AGENT_POD_LISTEN_MAX - 2]; /* and the proxy, and TLS */
        size_t n_fwd;
        uint16_t listen[AGENT_POD_LISTEN_MAX]; /* the forwards', then the proxy, then TLS */
        int listen_fds[AGENT_POD_LISTEN_MAX];
        AgentNetRoute routes[VENDOR_MAX]; /* the vendors' names of this sandbox's twins */
        char route_labels[VENDOR_MAX][48];
        size_t n_routes;
        char **allow;
        bool ended, oom_killed;
        char *oom_note;
        uint64_t pids_refused; /* forks the pids limit refused (pids.events "max") */
        uint64_t memory_hits;  /* times the memory limit was reached (v1 memory.failcnt, v2
                                * memory.events "max") */
        uint64_t memory_peak;  /* bytes (v1 memory.max_usage_in_bytes, v2 memory.peak) */
};

static int fail(int r, char *err, size_t errlen, const char *fmt, ...) _printf_(4, 5);
static int fail(int r, char *err, size_t errlen, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
        return r;
}

/* Adds path (made absolute and without a trailing '/') to the mask list, once. */
static int hide_add(char ***l, const char *path)
{
        char buf[PATH_MAX];
        if (!path || !*path)
                return 0;
        if (path[0] != '/') {
                if (!getcwd(buf, sizeof(buf)) || strlen(buf) + 1 + strlen(path) >= sizeof(buf))
                        return -ENAMETOOLONG;
                strcat(buf, "/");
                strcat(buf, path);
        } else if (strlen(path) < sizeof(buf))
                strcpy(buf, path);
        else
                return -ENAMETOOLONG;
        for (size_t n = strlen(buf); n > 1 && buf[n - 1] == '/'; n--)
                buf[n - 1] = 0;
        if (strv_contains(*l, buf))
                return 0;
        return strv_extend(l, buf);
}

/* Every directory pome's state directory lookup could find (cli/config.h): $POME_STATE_DIR,
 * the .pome of the working directory and of each of its parents, $XDG_RUNTIME_DIR/pome. */
static int hide_state_dirs(char ***l)
{
        char cwd[PATH_MAX], path[PATH_MAX + 8];
        int r = hide_add(l, getenv("POME_STATE_DIR"));
        const char *xdg = getenv("XDG_RUNTIME_DIR");
        if (r >= 0 && xdg && *xdg == '/' && strlen(xdg) < PATH_MAX) {
                snprintf(path, sizeof(path), "%s/pome", xdg);
                r = hide_add(l, path);
        }
        if (r < 0 || !getcwd(cwd, sizeof(cwd)))
                return r;
        for (;;) {
                snprintf(path, sizeof(path), "%s/.pome", streq(cwd, "/") ? "" : cwd);
                struct stat st;
                if (stat(path, &st) == 0 && (r = hide_add(l, path)) < 0)
                        return r;
                char *slash = strrchr(cwd, '/');
                if (!slash || slash == cwd)
                        break;
                *slash = 0;
        }
        return 0;
}

/* Whether this host's cgroups are v1 or hybrid, where a cgroup tree of pome's own changes
 * nothing for the processes already in pome's cgroup (v2's "no internal processes" rule
 * would move them: the user's shell among them). */
static bool cgroup_v1(void)
{
        struct statfs fs;
        return statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type != CGROUP2_SUPER_MAGIC;
}

/* Every twin kind's vendor host names ("api.github.com", "*.slack.com"), in *names. */
static size_t vendor_names(const char *names[static VENDOR_MAX])
{
        size_t n = 0;
        for (const char *const *k = twin_kind_names(); *k; k++) {
                const TwinKind *kind = twin_kind_find(*k);
                for (const char *const *h = kind ? kind->vendor_hosts : NULL; h && *h; h++)
                        if (n < VENDOR_MAX - 1)
                                names[n++] = *h;
        }
        names[n] = NULL;
        return n;
}

/*
 * The vendors' own names inside the pod: a CA of the run's and a leaf for them, an
 * /etc/hosts that puts them on loopback (the host's entries after), and the host's CA
 * bundle with the run's CA added — the pod's system store, which curl, OpenSSL, Python and
 * Go read, and NODE_EXTRA_CA_CERTS for Node. 0 or a negative errno with err said.
 */
static int make_vendor_files(Seal *s, char *err, size_t errlen)
{
        const char *names[VENDOR_MAX];
        size_t n_names = vendor_names(names);
        /* a client that honours the proxy variables (curl, axios, Python) must reach the
         * vendors' names directly: ".slack.com" is curl's and the others' suffix form */
        size_t np_len;
        FILE *np = open_memstream(&s->no_proxy, &np_len);
        if (!np)
                return -ENOMEM;
        fputs("127.0.0.1,localhost,::1", np);
        for (size_t i = 0; i < n_names; i++)
                fprintf(np, ",%s", startswith(names[i], "*") ? names[i] + 1 : names[i]);
        if (fclose(np) != 0)
                return -ENOMEM;
        if (n_names == 0)
                return 0;
        char label[32];
        snprintf(label, sizeof(label), "%d", (int)getpid());
        int r = run_ca_make(label, names, &s->ca, err, errlen);
        if (r < 0)
                return r == -ENOMEM ? r : r;
        _cleanup_free_ char *host_hosts = NULL, *host_bundle = NULL;
        size_t hl = 0, bl = 0;
        FILE *f = open_memstream(&s->hosts, &s->hosts_len);
        if (!f)
                return -ENOMEM;
        fputs("# pome run: the vendors' names reach this sandbox's twins\n127.0.0.1", f);
        for (size_t i = 0; names[i]; i++)
                if (!startswith(names[i], "*."))
                        fprintf(f, " %s", names[i]);
        fputs("\n", f);
        if (read_file_at(AT_FDCWD, HOSTS_FILE, 1u << 20, &host_hosts, &hl) >= 0)
                fwrite(host_hosts, 1, hl, f);
        if (fclose(f) != 0)
                return -ENOMEM;
        s->files[s->n_files++] = (AgentPodFile){HOSTS_FILE, s->hosts, s->hosts_len};
        /* no system store on the host: the variables below name a file that does not exist,
         * and a client says so */
        if (read_file_at(AT_FDCWD, CA_BUNDLE, 16u << 20, &host_bundle, &bl) >= 0) {
                if (asprintf(&s->bundle, "%s%s%s", host_bundle,
                             bl && host_bundle[bl - 1] != '\n' ? "\n" : "", s->ca.ca_pem) < 0) {
                        s->bundle = NULL;
                        return -ENOMEM;
                }
                s->bundle_len = strlen(s->bundle);
                s->files[s->n_files++] = (AgentPodFile){CA_BUNDLE, s->bundle, s->bundle_len};
        }
        return 0;
}

int seal_new(const SealConfig *c, char *const *extra, Seal **ret, char *err, size_t errlen)
{
        char why[512] = "";
        int mode = agent_pod_probe(why, sizeof(why));
        if (mode <= 0)
                return fail(-EPERM, err, errlen, "this host cannot seal the agent: %s", why);
        Seal *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->cfg = *c;
        s->mode = mode;
        s->uid_base = UID_BASE + (uint32_t)(getpid() % UID_RUNS) * UID_PER_RUN;
        int r = scp_compile_text(agent_policy, agent_policy_len, "agent.policy", &s->filter, err,
                                 errlen);
        if (r < 0) {
                seal_free(s);
                return r;
        }
        s->hide = strv_new();
        r = s->hide ? 0 : -ENOMEM;
        for (char *const *h = c->hide; r >= 0 && h && *h; h++) {
                if (**h != '/') {
                        seal_free(s);
                        return fail(-EINVAL, err, errlen,
                                    "--hide %s: not an absolute path (give it as /…)", *h);
                }
                r = hide_add(&s->hide, *h);
        }
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(hide_always); i++)
                r = hide_add(&s->hide, hide_always[i]);
        for (char *const *h = extra; r >= 0 && h && *h; h++)
                r = hide_add(&s->hide, *h);
        if (r >= 0)
                r = hide_state_dirs(&s->hide);
        if (r < 0) {
                seal_free(s);
                return r == -ENOMEM ? r
                                    : fail(r, err, errlen, "the paths to mask: %s", strerror(-r));
        }
        r = make_vendor_files(s, err, errlen);
        if (r < 0) {
                seal_free(s);
                return r;
        }
        if (mode == 1 && cgroup_v1()) {
                char tree[64], warn[512] = "";
                snprintf(tree, sizeof(tree), "pome-agents-%d", (int)getpid());
                /* without one the limits are rlimits: said in every run's meta.json */
                (void)cg_setup(tree, &s->cg, warn, sizeof(warn));
        }
        *ret = s;
        return 0;
}

/* Whether path is dir or below it (both absolute, without trailing '/'). */
static bool path_under(const char *path, const char *dir)
{
        size_t n = strlen(dir);
        while (n > 1 && dir[n - 1] == '/')
                n--;
        if (n == 1 && dir[0] == '/')
                return true;
        return strncmp(path, dir, n) == 0 && (path[n] == 0 || path[n] == '/');
}

int seal_check_argv(const Seal *s, char *const *argv, const char *cwd, char *err, size_t errlen)
{
        char real_cwd[PATH_MAX];
        if (!cwd || !realpath(cwd, real_cwd))
                real_cwd[0] = 0;
        for (char *const *a = argv; a && *a; a++) {
                char real[PATH_MAX];
                if (!**a || !realpath(*a, real)) /* not a file: an option, a word */
                        continue;
                if (real_cwd[0] && path_under(real, real_cwd))
                        continue;
                const char *hidden = path_under(real, "/tmp") ? "/tmp" : NULL;
                for (char *const *h = s->hide; !hidden && h && *h; h++)
                        if (path_under(real, *h))
                                hidden = *h;
                if (hidden) {
                        snprintf(err, errlen,
                                 "the agent's command names %s, which is under %s: the sealed "
                                 "pod %s, so the agent could not open it. Put it in the working "
                                 "directory (the pod sees that), or pass --no-seal",
                                 real, hidden,
                                 streq(hidden, "/tmp") ? "has a /tmp of its own"
                                                       : "masks that path");
                        return -ENOENT;
                }
        }
        return 0;
}

Seal *seal_free(Seal *s)
{
        if (!s)
                return NULL;
        scp_free(s->filter);
        cg_setup_free(s->cg);
        run_ca_done(&s->ca);
        free(s->hosts);
        free(s->bundle);
        free(s->no_proxy);
        strv_free(s->hide);
        free(s);
        return NULL;
}

const char *seal_limits_how(const Seal *s)
{
        return s->cg ? "cgroup" : "rlimit";
}

/* ---------------------------------------------------------------- the environment */

/* The twin a POME_<TWIN>_…_URL variable names, lowercased, or NULL. */
static char *var_twin(const char *kv)
{
        const char *from = kv + strlen("POME_"), *us = strchr(from, '_'), *eq = strchr(kv, '=');
        if (!us || !eq || us > eq || startswith(kv, "POME_TWIN_"))
                return NULL;
        char *t = strndup(from, (size_t)(us - from));
        for (char *c = t; c && *c; c++)
                *c = (char)tolower((unsigned char)*c);
        return t;
}

/* Splits http://HOST[:PORT]/REST. 0, or -EINVAL for anything else (an https:// address). */
static int split_url(const char *url, char **ret_host, uint16_t *ret_port, const char **ret_rest)
{
        if (!startswith(url, "http://"))
                return -EINVAL;
        const char *h = url + strlen("http://"), *end = h + strcspn(h, "/?#"), *colon, *hend;
        if (*h == '[') {
                hend = memchr(h, ']', (size_t)(end - h));
                if (!hend)
                        return -EINVAL;
                colon = hend + 1 < end && hend[1] == ':' ? hend + 1 : NULL;
                h++;
        } else {
                colon = memchr(h, ':', (size_t)(end - h));
                hend = colon ? colon : end;
        }
        unsigned long port = 80;
        if (colon) {
                char *e;
                port = strtoul(colon + 1, &e, 10);
                if (e != end || port == 0 || port > 65535)
                        return -EINVAL;
        }
        if (hend == h)
                return -EINVAL;
        *ret_host = strndup(h, (size_t)(hend - h));
        if (!*ret_host)
                return -ENOMEM;
        *ret_port = (uint16_t)port;
        *ret_rest = end;
        return 0;
}

static bool port_used(const SealedAgent *a, uint16_t port)
{
        for (size_t i = 0; i < a->n_fwd; i++)
                if (a->fwd[i].inner == port)
                        return true;
        return false;
}

/* The forward for host:port (a new one the first time), with twin added to its label. */
static Forward *forward_for(SealedAgent *a, char *host, uint16_t port, const char *twin)
{
        Forward *f = NULL;
        for (size_t i = 0; i < a->n_fwd && !f; i++)
                if (a->fwd[i].port == port && streq(a->fwd[i].host, host))
                        f = &a->fwd[i];
        if (!f) {
                if (a->n_fwd == ELEMENTSOF(a->fwd))
                        return NULL;
                f = &a->fwd[a->n_fwd];
                /* the same port inside as outside, unless another address has it */
                uint16_t inner = port;
                while (port_used(a, inner) || inner == PROXY_PORT || inner == TLS_PORT)
                        inner = inner < 65535 ? inner + 1 : 1024;
                *f = (Forward){.host = strdup(host), .port = port, .inner = inner};
                if (!f->host)
                        return NULL;
                a->n_fwd++;
        }
        if (twin && (!f->label || !strstr(f->label, twin))) {
                char *l;
                if (asprintf(&l, "%s%s%s", f->label ? f->label : "", f->label ? "+" : "", twin) < 0)
                        return NULL;
                free(f->label);
                f->label = l;
        }
        return f;
}

/* The vendors' own variables for a twin's credential (what their SDKs and CLIs read), by
 * the POME_ variable that holds it. */
static const struct {
        const char *pome, *vendor;
} vendor_vars[] = {
        {"POME_GITHUB_TOKEN", "GITHUB_TOKEN"},         /* gh, Octokit examples, Actions */
        {"POME_GITHUB_TOKEN", "GH_TOKEN"},             /* gh's first choice */
        {"POME_SLACK_TOKEN", "SLACK_BOT_TOKEN"},       /* Bolt, the Slack SDKs' examples */
        {"POME_SLACK_USER_TOKEN", "SLACK_USER_TOKEN"}, /* the same, for user-token methods */
        {"POME_STRIPE_API_KEY", "STRIPE_API_KEY"},     /* the Stripe CLI, the SDKs' examples */
        {"POME_LINEAR_TOKEN", "LINEAR_API_KEY"},       /* @linear/sdk's examples */
};

/* Variables the pod sets itself: where its proxy, home, scratch and CA bundle are, and the
 * vendors' credentials (an inherited real one must not reach the pod). */
static bool pod_sets(const char *kv)
{
        static const char *const names[] = {
                "HTTP_PROXY=",     "HTTPS_PROXY=",    "http_proxy=",         "https_proxy=",
                "ALL_PROXY=",      "all_proxy=",      "NO_PROXY=",           "no_proxy=",
                "HOME=",           "TMPDIR=",         "POME_AGENT_TMP=",     "SSL_CERT_FILE=",
                "SSL_CERT_DIR=",   "CURL_CA_BUNDLE=", "REQUESTS_CA_BUNDLE=", "NODE_EXTRA_CA_CERTS=",
                "GIT_SSL_CAINFO=",
        };
        for (size_t i = 0; i < ELEMENTSOF(vendor_vars); i++) {
                size_t n = strlen(vendor_vars[i].vendor);
                if (strncmp(kv, vendor_vars[i].vendor, n) == 0 && kv[n] == '=')
                        return true;
        }
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (startswith(kv, names[i]))
                        return true;
        return false;
}

/* The vendors' names of twin, served in the pod over TLS, go where its REST URL goes (f). */
static void add_routes(SealedAgent *a, const char *twin, const Forward *f)
{
        const TwinKind *kind = twin_kind_find(twin);
        for (const char *const *h = kind ? kind->vendor_hosts : NULL; h && *h; h++) {
                if (a->n_routes == ELEMENTSOF(a->routes))
                        return;
                char *label = a->route_labels[a->n_routes];
                snprintf(label, sizeof(a->route_labels[0]), "%s twin", twin);
                a->routes[a->n_routes++] = (AgentNetRoute){
                        .name = *h, .host = f->host, .port = f->port, .label = label};
        }
}

static int rewrite_env(SealedAgent *a, char *const *in, char ***ret)
{
        _cleanup_strv_free_ char **out = strv_new();
        if (!out)
                return -ENOMEM;
        for (char *const *e = in; e && *e; e++) {
                const char *eq = strchr(*e, '='), *rest;
                _cleanup_free_ char *host = NULL, *twin = NULL;
                uint16_t port;
                if (pod_sets(*e))
                        continue;
                if (!startswith(*e, "POME_") || !eq || split_url(eq + 1, &host, &port, &rest) < 0) {
                        if (strv_extend(&out, *e) < 0)
                                return -ENOMEM;
                        continue;
                }
                twin = var_twin(*e);
                Forward *f = forward_for(a, host, port, twin);
                if (!f)
                        return -ENOMEM;
                if (twin && strstr(*e, "_REST_URL="))
                        add_routes(a, twin, f);
                if (strv_extendf(&out, "%.*s=http://127.0.0.1:%u%s", (int)(eq - *e), *e, f->inner,
                                 rest) < 0)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < ELEMENTSOF(vendor_vars); i++) {
                const char *v = strv_env_get(in, vendor_vars[i].pome);
                if (v && strv_extendf(&out, "%s=%s", vendor_vars[i].vendor, v) < 0)
                        return -ENOMEM;
        }
        /* the pod's system store holds the run's CA (make_vendor_files) */
        if (a->seal->bundle && (strv_extend(&out, "SSL_CERT_FILE=" CA_BUNDLE) < 0 ||
                                strv_extend(&out, "CURL_CA_BUNDLE=" CA_BUNDLE) < 0 ||
                                strv_extend(&out, "REQUESTS_CA_BUNDLE=" CA_BUNDLE) < 0 ||
                                strv_extend(&out, "NODE_EXTRA_CA_CERTS=" CA_BUNDLE) < 0 ||
                                strv_extend(&out, "GIT_SSL_CAINFO=" CA_BUNDLE) < 0))
                return -ENOMEM;
        if (strv_extendf(&out, "HTTP_PROXY=http://127.0.0.1:%u", PROXY_PORT) < 0 ||
            strv_extendf(&out, "HTTPS_PROXY=http://127.0.0.1:%u", PROXY_PORT) < 0 ||
            strv_extendf(&out, "http_proxy=http://127.0.0.1:%u", PROXY_PORT) < 0 ||
            strv_extendf(&out, "https_proxy=http://127.0.0.1:%u", PROXY_PORT) < 0 ||
            strv_extendf(&out, "NO_PROXY=%s", a->seal->no_proxy) < 0 ||
            strv_extendf(&out, "no_proxy=%s", a->seal->no_proxy) < 0 ||
            strv_extend(&out, "HOME=" AGENT_POD_HOME) < 0 || strv_extend(&out, "TMPDIR=/tmp") < 0 ||
            strv_extend(&out, "POME_AGENT_TMP=" AGENT_POD_SCRATCH) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(out);
        return 0;
}

static void wipe_strv(char **l)
{
        for (char **e = l; e && *e; e++)
                explicit_bzero(*e, strlen(*e));
        strv_free(l);
}

/* ---------------------------------------------------------------- a trial's agent */

int sealed_agent_new(Seal *s, unsigned trial, const char *cwd, char ***envp, SealedAgent **ret,
                     char *err, size_t errlen)
{
        SealedAgent *a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        a->seal = s;
        a->trial = trial;
        for (size_t i = 0; i < ELEMENTSOF(a->listen_fds); i++)
                a->listen_fds[i] = -1;
        char **env = NULL;
        int r = (a->cwd = strdup(cwd)) ? rewrite_env(a, *envp, &env) : -ENOMEM;
        if (r < 0) {
                sealed_agent_free(a);
                return r == -ENOMEM
                               ? r
                               : fail(r, err, errlen, "the agent's environment: %s", strerror(-r));
        }
        wipe_strv(*envp);
        *envp = env;
        for (size_t i = 0; i < a->n_fwd; i++)
                a->listen[i] = a->fwd[i].inner;
        a->listen[a->n_fwd] = PROXY_PORT;
        bool tls = a->n_routes > 0 && s->ca.leaf_chain_pem;
        if (tls)
                a->listen[a->n_fwd + 1] = TLS_PORT;
        a->allow = strv_new();
        for (char *const *h = s->cfg.allow_net; a->allow && h && *h; h++)
                if (strv_extend(&a->allow, *h) < 0)
                        a->allow = strv_free(a->allow);
        if (!a->allow) {
                sealed_agent_free(a);
                return -ENOMEM;
        }
        const int *fds = NULL;
        size_t n_fds = 0;
        if (s->cg) {
                char name[32];
                PodLimits lim = {.memory_max = s->cfg.memory_max,
                                 .pids_max = s->cfg.pids_max,
                                 .cpu_weight = SEAL_CPU_WEIGHT};
                snprintf(name, sizeof(name), "trial-%u", trial);
                r = cg_pod_create(s->cg, name, &lim, &a->cg);
                if (r >= 0)
                        r = cg_pod_join_fds(a->cg, &fds, &n_fds);
                if (r < 0) {
                        sealed_agent_free(a);
                        return fail(r, err, errlen, "cannot make the agent's cgroup: %s",
                                    strerror(-r));
                }
        }
        a->pod = (AgentPodSpec){
                .cwd = a->cwd,
                .workdir_rw = s->cfg.workdir_rw,
                .hide = (const char *const *)s->hide,
                .listen = a->listen,
                .n_listen = a->n_fwd + 1 + tls,
                .stdin_fd = -1,
                .stdout_fd = -1,
                .stderr_fd = -1,
                .status_fd = -1,
                .uid = (uid_t)(s->uid_base + trial % UID_PER_RUN),
                .gid = (gid_t)(s->uid_base + trial % UID_PER_RUN),
                .cgroup_fds = fds,
                .n_cgroup_fds = n_fds,
                .filter = scp_program(s->filter),
                .files = s->files,
                .n_files = s->n_files,
                .memory_max = s->cfg.memory_max,
                .pids_max = s->cfg.pids_max,
        };
        *ret = a;
        return 0;
}

const AgentPodSpec *sealed_agent_pod(const SealedAgent *a)
{
        return &a->pod;
}

int *sealed_agent_listen_fds(SealedAgent *a)
{
        return a->listen_fds;
}

int sealed_agent_serve(SealedAgent *a, sd_event *e, char *err, size_t errlen)
{
        if (a->cg)
                cg_pod_close_join_fds(a->cg);
        int r = agent_net_new(e, &a->net);
        if (r < 0)
                return r;
        for (size_t i = 0; i < a->n_fwd; i++) {
                _cleanup_free_ char *label = NULL;
                if (asprintf(&label, "%s twin%s", a->fwd[i].label ? a->fwd[i].label : "the",
                             a->fwd[i].label && strchr(a->fwd[i].label, '+') ? "s" : "") < 0)
                        return -ENOMEM;
                r = agent_net_forward(a->net, TAKE_FD(a->listen_fds[i]), a->fwd[i].host,
                                      a->fwd[i].port, label);
                if (r < 0)
                        return fail(r, err, errlen, "cannot forward to %s:%u: %s", a->fwd[i].host,
                                    a->fwd[i].port, strerror(-r));
        }
        r = agent_net_proxy(a->net, TAKE_FD(a->listen_fds[a->n_fwd]), a->allow, err, errlen);
        if (r < 0 || a->listen_fds[a->n_fwd + 1] < 0)
                return r;
        return agent_net_tls(a->net, TAKE_FD(a->listen_fds[a->n_fwd + 1]),
                             a->seal->ca.leaf_chain_pem, a->seal->ca.leaf_key_pem, a->routes,
                             a->n_routes, err, errlen);
}

/* The number after key in the cgroup file dir/name ("max 3"), or the file's only number
 * when key is NULL; 0 when it cannot be read. */
static uint64_t cg_read(const char *dir, const char *name, const char *key)
{
        _cleanup_free_ char *path = NULL, *text = NULL;
        if (!dir || asprintf(&path, "%s/%s", dir, name) < 0 ||
            read_file_at(AT_FDCWD, path, 4096, &text, NULL) < 0)
                return 0;
        const char *at = text;
        if (key) {
                size_t n = strlen(key);
                for (at = text; at && !(startswith(at, key) && at[n] == ' ');) {
                        at = strchr(at, '\n');
                        at = at ? at + 1 : NULL;
                }
                if (!at)
                        return 0;
                at += n + 1;
        }
        return strtoull(at, NULL, 10);
}

/* What the pod's limits refused it, read before its cgroup goes. */
static void read_limits_hit(SealedAgent *a)
{
        const char *mem = cg_pod_path(a->cg, "memory"), *pids = cg_pod_path(a->cg, "pids");
        bool v2 = streq_ptr(cg_layout_name(a->seal->cg), "v2");
        a->pids_refused = cg_read(pids, "pids.events", "max");
        a->memory_hits =
                v2 ? cg_read(mem, "memory.events", "max") : cg_read(mem, "memory.failcnt", NULL);
        a->memory_peak = v2 ? cg_read(mem, "memory.peak", NULL)
                            : cg_read(mem, "memory.max_usage_in_bytes", NULL);
}

void sealed_agent_end(SealedAgent *a)
{
        if (!a || a->ended)
                return;
        a->ended = true;
        if (a->net)
                agent_net_stop(a->net);
        if (!a->cg)
                return;
        read_limits_hit(a);
        int r = cg_pod_oom(a->cg, &a->oom_note);
        a->oom_killed = r == CG_OOM_OWN || r == CG_OOM_HOST;
        /* the pod's init is gone, and with it its pid namespace: this only removes the leaves */
        (void)cg_pod_destroy(a->cg);
        a->cg = NULL;
}

size_t sealed_agent_refused(const SealedAgent *a)
{
        return a && a->net ? agent_net_refused(a->net) : 0;
}

json_t *sealed_agent_report(const SealedAgent *a)
{
        json_t *net = a->net ? agent_net_report(a->net) : json_null();
        json_t *allow = json_array();
        for (char **h = a->allow; allow && h && *h; h++)
                json_array_append_new(allow, json_string(*h));
        json_t *hit = a->seal->cg ? json_pack("{s:I, s:I, s:I}", "pids_refused",
                                              (json_int_t)a->pids_refused, "memory_max_reached",
                                              (json_int_t)a->memory_hits, "memory_peak",
                                              (json_int_t)a->memory_peak)
                                  : json_null();
        json_t *names = json_array();
        for (size_t i = 0; names && i < a->n_routes; i++)
                json_array_append_new(names, json_string(a->routes[i].name));
        return json_pack("{s:b, s:s, s:{s:s, s:I, s:I, s:I}, s:o, s:I, s:o, s:o, s:o, s:o}",
                         "sealed", true, "mode", a->seal->mode == 1 ? "root" : "user namespace",
                         "limits", "how", seal_limits_how(a->seal), "memory_max",
                         (json_int_t)a->seal->cfg.memory_max, "pids_max",
                         (json_int_t)a->seal->cfg.pids_max, "output_max",
                         (json_int_t)a->seal->cfg.output_max, "limits_hit", hit, "uid",
                         (json_int_t)(a->seal->mode == 1 ? a->pod.uid : getuid()), "oom_killed",
                         json_boolean(a->oom_killed), "allow_net", allow, "vendor_names", names,
                         "network", net);
}

SealedAgent *sealed_agent_free(SealedAgent *a)
{
        if (!a)
                return NULL;
        if (a->cg)
                (void)cg_pod_destroy(a->cg);
        agent_net_free(a->net);
        for (size_t i = 0; i < ELEMENTSOF(a->listen_fds); i++)
                safe_close(a->listen_fds[i]);
        for (size_t i = 0; i < a->n_fwd; i++) {
                free(a->fwd[i].host);
                free(a->fwd[i].label);
        }
        strv_free(a->allow);
        free(a->oom_note);
        free(a->cwd);
        free(a);
        return NULL;
}
