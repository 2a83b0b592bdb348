/* SPDX-License-Identifier: MIT */
/*
 * pomed: the Pome supervisor. One thread, one sd-event loop: the control API,
 * the twin gateway, pod I/O, child exits, clocks and signals all run on it.
 */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <signal.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "common/httpd.h"
#include "common/json-util.h"
#include "common/strv.h"
#include "common/timeutil.h"
#include "common/util.h"
#include "supervisor/bus.h"
#include "supervisor/config.h"
#include "supervisor/control.h"
#include "supervisor/gateway.h"
#include "supervisor/log.h"
#include "supervisor/image.h"
#include "supervisor/manager.h"
#include "supervisor/podhost.h"
#include "supervisor/registry.h"
#include "supervisor/rundir.h"
#include "supervisor/seccomp-policy.h"
#include "supervisor/statedir.h"

/* Read when no --config is given; its drop-ins are POMED_CONFIG_FILE.d/<name>.conf. */
#define POMED_CONFIG_FILE POME_SYSCONFDIR "/pome/pomed.conf"

static void help(void)
{
        printf("pomed — the Pome self-hosted supervisor\n"
               "\n"
               "Usage: pomed [OPTIONS]\n"
               "\n"
               "Runs twin pods (GitHub, Slack, Stripe, Gmail and Linear digital twins) in\n"
               "isolated sandboxes and serves the control API and the twin gateway. With no\n"
               "configuration it listens on loopback, keeps state in ./.pome and creates team\n"
               "`local` with a generated API key that `pome` finds by itself.\n"
               "\n"
               "Options:\n"
               "  -c, --config FILE          configuration file (YAML; default: the embedded\n"
               "                             default overlaid with /etc/pome/pomed.conf if it\n"
               "                             exists); FILE.d/*.conf drop-ins apply after it,\n"
               "                             in name order\n"
               "      --check-config         validate the configuration and its drop-ins,\n"
               "                             print what applies, and exit (0 valid, 1 not)\n"
               "      --check-registry       check the registry (pome.db) in full at start\n"
               "                             (SQLite's integrity_check; quick_check always)\n"
               "      --rebuild-registry     move a damaged registry aside and rebuild its\n"
               "                             records from <state-dir>/runs, then exit\n"
               "      --reload               make the running pomed of this configuration\n"
               "                             re-read it (SIGHUP to $MAINPID, else to the pid\n"
               "                             in <state-dir>/pomed.json) and wait until it has:\n"
               "                             exit 0 applied, 1 not (the reason is printed);\n"
               "                             the unit's ExecReload\n"
               "      --state-dir DIR        state directory (default ./.pome)\n"
               "      --control-listen A:P   control API address (default 127.0.0.1:7070)\n"
               "      --gateway-listen A:P   twin gateway address (default 127.0.0.1:7071)\n"
               "      --public-url URL       base URL agents use for the gateway\n"
               "                             (default http://<gateway-listen>)\n"
               "      --bus BUS              D-Bus: system, user, none or an address\n"
               "                             (default system)\n"
               "  -v, --verbose              log debug messages\n"
               "  -h, --help                 show this help\n"
               "      --version              show the version\n"
               "\n"
               "Port 0 picks a free port; the chosen URLs are logged and written to\n"
               "<state-dir>/pomed.json.\n");
}

typedef struct Args {
        const char *config, *state_dir, *control_listen, *gateway_listen, *public_url, *bus;
        bool verbose, check_config, check_registry, rebuild_registry, reload;
} Args;

static int parse_args(int argc, char **argv, Args *a)
{
        enum {
                ARG_STATE_DIR = 0x100,
                ARG_CONTROL,
                ARG_GATEWAY,
                ARG_PUBLIC,
                ARG_BUS,
                ARG_VERSION,
                ARG_CHECK_CONFIG,
                ARG_CHECK_REGISTRY,
                ARG_REBUILD_REGISTRY,
                ARG_RELOAD,
        };
        static const struct option opts[] = {
                {"config", required_argument, NULL, 'c'},
                {"state-dir", required_argument, NULL, ARG_STATE_DIR},
                {"control-listen", required_argument, NULL, ARG_CONTROL},
                {"gateway-listen", required_argument, NULL, ARG_GATEWAY},
                {"public-url", required_argument, NULL, ARG_PUBLIC},
                {"bus", required_argument, NULL, ARG_BUS},
                {"verbose", no_argument, NULL, 'v'},
                {"help", no_argument, NULL, 'h'},
                {"version", no_argument, NULL, ARG_VERSION},
                {"check-config", no_argument, NULL, ARG_CHECK_CONFIG},
                {"check-registry", no_argument, NULL, ARG_CHECK_REGISTRY},
                {"rebuild-registry", no_argument, NULL, ARG_REBUILD_REGISTRY},
                {"reload", no_argument, NULL, ARG_RELOAD},
                {},
        };
        int c;
        while ((c = getopt_long(argc, argv, "c:vh", opts, NULL)) >= 0) {
                switch (c) {
                case 'c':
                        a->config = optarg;
                        break;
                case ARG_STATE_DIR:
                        a->state_dir = optarg;
                        break;
                case ARG_CONTROL:
                        a->control_listen = optarg;
                        break;
                case ARG_GATEWAY:
                        a->gateway_listen = optarg;
                        break;
                case ARG_PUBLIC:
                        a->public_url = optarg;
                        break;
                case ARG_BUS:
                        a->bus = optarg;
                        break;
                case 'v':
                        a->verbose = true;
                        break;
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("pomed %s\n", POME_VERSION);
                        return 0;
                case ARG_CHECK_CONFIG:
                        a->check_config = true;
                        break;
                case ARG_CHECK_REGISTRY:
                        a->check_registry = true;
                        break;
                case ARG_REBUILD_REGISTRY:
                        a->rebuild_registry = true;
                        break;
                case ARG_RELOAD:
                        a->reload = true;
                        break;
                default:
                        fprintf(stderr, "Try 'pomed --help'.\n");
                        return -EINVAL;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "pomed: unexpected argument '%s'. Try 'pomed --help'.\n",
                        argv[optind]);
                return -EINVAL;
        }
        return 1;
}

/* <dir>/<name> parsed (pomed.json, reload.json): a new reference, NULL when not there. */
static json_t *read_json_at(const char *dir, const char *name)
{
        _cleanup_free_ char *path = NULL;
        return asprintf(&path, "%s/%s", dir, name) < 0 ? NULL : json_load_file(path, 0, NULL);
}

static pid_t pid_in(const json_t *j)
{
        return (pid_t)json_integer_value(json_object_get(j, "pid"));
}

/*
 * pomed --reload: SIGHUP to the running pomed of state_dir ($MAINPID under systemd's
 * ExecReload=, else the pid in <state_dir>/pomed.json), then waits (up to 90 s) for its
 * <state_dir>/reload.json to say a newer reload is done, so that `systemctl reload`
 * returns when the new teams apply (systemd 252 has no Type=notify-reload) and fails when
 * they do not. Returns the process's exit status.
 */
static int reload_running(const char *state_dir)
{
        const char *mainpid = getenv("MAINPID");
        _cleanup_json_ json_t *info = mainpid ? NULL : read_json_at(state_dir, "pomed.json");
        pid_t pid = mainpid ? (pid_t)atoi(mainpid) : pid_in(info);
        if (pid <= 0) {
                fprintf(stderr,
                        "pomed --reload: no running pomed found ($MAINPID is not set and %s/"
                        "pomed.json names none). Is it running with this configuration?\n",
                        state_dir);
                return 1;
        }
        /* the generation of this pomed's last reload, 0 before its first */
        _cleanup_json_ json_t *last = read_json_at(state_dir, "reload.json");
        json_int_t before =
                pid_in(last) == pid ? json_integer_value(json_object_get(last, "generation")) : 0;
        if (kill(pid, SIGHUP) < 0) {
                fprintf(stderr, "pomed --reload: cannot signal pid %d: %m\n", (int)pid);
                return 1;
        }
        for (int i = 0; i < 90 * 50; i++) {
                _cleanup_json_ json_t *j = read_json_at(state_dir, "reload.json");
                if (pid_in(j) == pid &&
                    json_integer_value(json_object_get(j, "generation")) > before) {
                        bool ok = json_is_true(json_object_get(j, "ok"));
                        fprintf(ok ? stdout : stderr, "pomed --reload: %s%s\n",
                                ok ? "" : "not applied: ", strempty(json_get_str(j, "message")));
                        return ok ? 0 : 1;
                }
                if (kill(pid, 0) < 0 && errno == ESRCH) {
                        fprintf(stderr, "pomed --reload: pomed (pid %d) exited\n", (int)pid);
                        return 1;
                }
                usleep(20 * 1000);
        }
        fprintf(stderr, "pomed --reload: pid %d did not finish its reload within 90 s\n", (int)pid);
        return 1;
}

static int apply_args(Config *cfg, const Args *a, char *err, size_t errlen)
{
        struct {
                const char *value;
                char **addr;
                uint16_t *port;
                const char *flag;
        } listens[] = {
                {a->control_listen, &cfg->control_address, &cfg->control_port, "--control-listen"},
                {a->gateway_listen, &cfg->gateway_address, &cfg->gateway_port, "--gateway-listen"},
        };
        for (size_t i = 0; i < ELEMENTSOF(listens); i++) {
                if (!listens[i].value)
                        continue;
                char *addr;
                uint16_t port;
                if (config_parse_listen(listens[i].value, &addr, &port) < 0) {
                        snprintf(err, errlen, "%s: expected ADDRESS:PORT, got '%s'",
                                 listens[i].flag, listens[i].value);
                        return -EINVAL;
                }
                free(*listens[i].addr);
                *listens[i].addr = addr;
                *listens[i].port = port;
        }
        struct {
                const char *value;
                char **field;
        } strs[] = {{a->state_dir, &cfg->state_dir},
                    {a->public_url, &cfg->public_url},
                    {a->bus, &cfg->bus}};
        for (size_t i = 0; i < ELEMENTSOF(strs); i++) {
                if (!strs[i].value)
                        continue;
                char *v = strdup(strs[i].value);
                if (!v)
                        return -ENOMEM;
                free(*strs[i].field);
                *strs[i].field = v;
        }
        return 0;
}

/*
 * What systemd is told (sd_notify(3)): READY=1 once both listeners are bound and, unless
 * D-Bus is off, sh.pome.Supervisor1 is ours, so `systemctl start` returns when every
 * surface answers; STATUS= with the open sandboxes; RELOADING=1/READY=1 around a reload;
 * STOPPING=1 while draining. Outside systemd every sd_notify is a no-op.
 */
typedef struct Service {
        Manager *manager;
        char control_url[128], gateway_url[128];
        bool listening, bus_wanted, bus_up, ready, stopping;
} Service;

static void service_status(Service *sv)
{
        if (!sv->listening)
                return;
        size_t n;
        Team *const *teams = teams_list(manager_teams(sv->manager), &n);
        /* here: this pomed's sandboxes; used: the slots taken (a fleet's, on every node) */
        unsigned here = 0, used = 0, quota = 0;
        for (size_t i = 0; i < n; i++) {
                here += teams[i]->used_here;
                used += teams[i]->used;
                quota += teams[i]->quota;
        }
        (void)sd_notifyf(false,
                         "STATUS=%s: %u sandbox%s open (%u of %u slots), control %s, "
                         "gateway %s%s",
                         sv->stopping ? "Draining" : "Serving", here, here == 1 ? "" : "es", used,
                         quota, sv->control_url, sv->gateway_url,
                         sv->bus_wanted && !sv->bus_up ? ", waiting for D-Bus" : "");
}

static void service_maybe_ready(Service *sv)
{
        if (sv->ready || !sv->listening || (sv->bus_wanted && !sv->bus_up))
                return;
        sv->ready = true;
        log_struct(LOG_INFO, &(LogFields){.message_id = LOG_MESSAGE_POMED_READY},
                   "ready: control API, twin gateway%s up",
                   sv->bus_wanted ? " and D-Bus name" : "");
        (void)sd_notify(false, "READY=1");
        service_status(sv);
}

static void on_bus_acquired(void *userdata)
{
        Service *sv = userdata;
        sv->bus_up = true;
        service_maybe_ready(sv);
}

typedef struct Stop {
        sd_event *event;
        Manager *manager;
        Service *service;
        Httpd *listeners[2];
        unsigned signals;
} Stop;

static void on_drained(void *userdata)
{
        Stop *st = userdata;
        sd_event_exit(st->event, 0);
}

/* SIGTERM/SIGINT: drain (DESIGN.md "Sandbox lifecycle"); a second one cuts the wait short. */
static int on_signal(sd_event_source *s _unused_, const struct signalfd_siginfo *si, void *userdata)
{
        Stop *st = userdata;
        if (st->signals++ == 0) {
                log_struct(LOG_INFO, &(LogFields){.message_id = LOG_MESSAGE_POMED_DRAINING},
                           "received %s: draining — new sandboxes refused, calls in flight "
                           "finish, then every sandbox ends (supervisor_stopped)",
                           strsignal((int)si->ssi_signo));
                st->service->stopping = true;
                (void)sd_notify(false, "STOPPING=1");
                service_status(st->service);
                for (size_t i = 0; i < ELEMENTSOF(st->listeners); i++)
                        if (st->listeners[i])
                                httpd_drain(st->listeners[i]);
        } else
                log_info("received %s again: ending every sandbox now",
                         strsignal((int)si->ssi_signo));
        manager_drain(st->manager, on_drained, st);
        return 0;
}

typedef struct Reload {
        const char *config_path;
        unsigned config_flags;
        const Args *args;
        Manager *manager;
        Service *service;
        StateDir *state;
        unsigned generation; /* reloads done, in <state>/reload.json for pomed --reload */
} Reload;

/* The end of a reload: READY=1 for systemd, reload.json for pomed --reload. */
static void reload_done(Reload *rl, bool ok, const char *message)
{
        (void)sd_notify(false, "READY=1");
        int r = statedir_write_reload(rl->state, ++rl->generation, ok, message);
        if (r < 0)
                log_warning_errno(r, "reload: cannot write %s/reload.json", rl->state->path);
}

/* SIGHUP: re-read the configuration and apply its teams (quotas, plan tiers, keys)
 * without touching open sandboxes. Everything else needs a restart. */
static int on_hup(sd_event_source *s _unused_, const struct signalfd_siginfo *si _unused_,
                  void *userdata)
{
        Reload *rl = userdata;
        char err[512] = "";
        Config *cfg = NULL;
        /* systemctl reload waits for READY=1 after RELOADING=1 (sd_notify(3)) */
        (void)sd_notifyf(false, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64, now_usec(CLOCK_MONOTONIC));
        int r = config_load_with(rl->config_path, rl->config_flags, &cfg, err, sizeof(err));
        if (r >= 0)
                r = apply_args(cfg, rl->args, err, sizeof(err));
        char message[768];
        if (r < 0) {
                snprintf(message, sizeof(message), "%s; keeping the running configuration",
                         err[0] ? err : strerror(-r));
                log_error("reload: %s", message);
                config_free(cfg);
                reload_done(rl, false, message);
                return 0;
        }
        r = manager_reload_teams(rl->manager, cfg);
        if (r < 0)
                snprintf(message, sizeof(message), "cannot apply the teams: %s", strerror(-r));
        else
                snprintf(message, sizeof(message),
                         "%zu team%s from %s%s applied; other settings need a restart",
                         cfg->n_teams, cfg->n_teams == 1 ? "" : "s",
                         cfg->files[0] ? cfg->files[0] : "the embedded default",
                         cfg->files[0] && cfg->files[1] ? " and its drop-ins" : "");
        if (r < 0)
                log_error("reload: %s", message);
        else
                log_struct(LOG_INFO, &(LogFields){.message_id = LOG_MESSAGE_POMED_RELOADED},
                           "reload: %s", message);
        config_free(cfg);
        reload_done(rl, r >= 0, message);
        service_status(rl->service);
        return 0;
}

/* The observers' userdata: where the D-Bus surface and the service status are. */
typedef struct Observers {
        Bus *bus;
        Service *service;
} Observers;

/* The manager's observers, forwarded to D-Bus; userdata is main's Observers, whose bus
 * is cleared with bus_free(), so nothing is forwarded after it. */
static void on_sandbox_changed(Sandbox *s, void *userdata)
{
        bus_sandbox_changed(((Observers *)userdata)->bus, s);
}

static void on_team_changed(Team *t, void *userdata)
{
        Observers *o = userdata;
        bus_team_changed(o->bus, t);
        service_status(o->service);
}

static void url_for(const char *address, uint16_t port, char *buf, size_t len)
{
        bool v6 = strchr(address, ':') != NULL;
        const char *host = address;
        if (streq(address, "0.0.0.0"))
                host = "127.0.0.1";
        else if (streq(address, "::"))
                host = "::1";
        snprintf(buf, len, "http://%s%s%s:%u", v6 ? "[" : "", host, v6 ? "]" : "", port);
}

/*
 * --check-config: what pomed would refuse at start, found without starting — the files
 * (main file and drop-ins), every key, and the parts they name that must exist: the pod
 * user, the bus, the images and seccomp policies. Prints a verdict; 0 valid, 1 not.
 */
static int check_config(const Config *cfg)
{
        char err[512] = "";
        int bad = 0;
        if (cfg->pod_user && !getpwnam(cfg->pod_user)) {
                fprintf(stderr, "pomed: pod_user '%s' does not exist\n", cfg->pod_user);
                bad = 1;
        } else if (!cfg->pod_user && !getpwnam(PODHOST_DEFAULT_USER))
                fprintf(stderr,
                        "pomed: warning: pod user " PODHOST_DEFAULT_USER " does not exist; pods "
                        "would run as nobody (install the package's sysusers.d/pome.conf, or "
                        "set pod_user)\n");
        if (!streq(cfg->bus, "system") && !streq(cfg->bus, "user") && !streq(cfg->bus, "none") &&
            !strchr(cfg->bus, ':')) {
                fprintf(stderr, "pomed: bus '%s': expected system, user, none or an address\n",
                        cfg->bus);
                bad = 1;
        }
        Images *im = NULL;
        int r = images_load(cfg, &im, err, sizeof(err));
        if (r < 0) {
                fprintf(stderr, "pomed: images: %s\n", err[0] ? err : strerror(-r));
                bad = 1;
        } else {
                static const char *const policies[] = {"pod-stage1.policy", "pod-stage2.policy"};
                for (size_t i = 0; i < ELEMENTSOF(policies); i++) {
                        _cleanup_free_ char *path = NULL;
                        ScpProgram *p = NULL;
                        if (asprintf(&path, "%s/%s", im->policies_dir, policies[i]) < 0)
                                return 1;
                        err[0] = 0;
                        r = scp_compile(path, &p, err, sizeof(err));
                        if (r < 0) {
                                fprintf(stderr, "pomed: %s\n", err[0] ? err : strerror(-r));
                                bad = 1;
                        }
                        scp_free(p);
                }
        }
        if (bad) {
                images_free(im);
                return 1;
        }
        printf("configuration valid:");
        if (!cfg->files[0])
                printf(" the embedded default");
        for (char **f = cfg->files; *f; f++)
                printf("%s %s", f == cfg->files ? "" : " +", *f);
        printf("\n  control %s:%u, gateway %s:%u, state %s, bus %s, pod user %s\n"
               "  images %s, policies %s, pod program %s\n",
               cfg->control_address, cfg->control_port, cfg->gateway_address, cfg->gateway_port,
               cfg->state_dir, cfg->bus, cfg->pod_user ? cfg->pod_user : PODHOST_DEFAULT_USER,
               im->images_dir, im->policies_dir, im->pod_exec);
        for (size_t i = 0; i < cfg->n_teams; i++)
                printf("  team %s: sessions_quota %u, %zu key%s\n", cfg->teams[i].id,
                       cfg->teams[i].sessions_quota, strv_length(cfg->teams[i].key_hashes),
                       strv_length(cfg->teams[i].key_hashes) == 1 ? "" : "s");
        _cleanup_free_ char *judge = cfg->judge ? judge_config_describe(cfg->judge) : NULL;
        printf("  judge of [model] criteria: %s\n",
               judge ? judge
                     : "none (a task's [model] criteria are not evaluated: its run is "
                       "incomplete)");
        images_free(im);
        return 0;
}

/*
 * A listener that cannot be bound. A port in use is the common case (another pomed, or a
 * second one started by hand): say how to pick another rather than only that it is taken.
 */
static void listen_failed(int r, const char *address, uint16_t port, const char *what,
                          const char *key, const char *option)
{
        log_error_errno(r, "cannot listen on %s:%u (%s)", address, port, what);
        if (r == -EADDRINUSE || r == -EACCES)
                log_notice("%s on %s:%u: choose another address for the %s with %s: in the "
                           "configuration (pomed --check-config shows what applies) or %s "
                           "ADDRESS:PORT; port 0 picks a free one, which pomed.json then names",
                           r == -EADDRINUSE ? "something else (another pomed?) listens"
                                            : "only root may listen",
                           address, port, what, key, option);
}

/*
 * Every open sandbox holds a few fds in pomed (per pod its socket and pidfd; per twin a
 * tape once it has a row) and every connection one: the soft RLIMIT_NOFILE of a plain shell
 * (1024) would cap a host at ~80 sandboxes. pomed raises it to the hard limit (the unit's
 * LimitNOFILE=, or the shell's `ulimit -Hn`); the pods get their own 64 (spawn.c), so
 * nothing inherits the raised one. pomed calls no select(2), the one API that breaks past
 * FD_SETSIZE.
 */
static void raise_nofile(void)
{
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
                log_warning_errno(-errno, "cannot read RLIMIT_NOFILE");
                return;
        }
        rlim_t was = rl.rlim_cur;
        if (rl.rlim_cur != rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
                        log_warning_errno(-errno, "cannot raise RLIMIT_NOFILE from %llu to %llu",
                                          (unsigned long long)was, (unsigned long long)rl.rlim_max);
                        return;
                }
        }
        log_info("file descriptors: soft limit %llu (was %llu, hard limit %llu)",
                 (unsigned long long)rl.rlim_cur, (unsigned long long)was,
                 (unsigned long long)rl.rlim_max);
}

/* The first entry of systemd's $RUNTIME_DIRECTORY (or runtime_dir of pomed.conf): where
 * pomed.json is also written for `pome` run from anywhere. NULL outside systemd. */
static char *discovery_dir(const Config *cfg)
{
        const char *rd = cfg->runtime_dir ? cfg->runtime_dir : getenv("RUNTIME_DIRECTORY");
        return rd && *rd ? strndup(rd, strcspn(rd, ":")) : NULL;
}

/*
 * --rebuild-registry: pome.db (and its -wal, -shm) moved aside as pome.db.damaged-<time>, a
 * new registry made and every record rebuilt from runs/ (manager_rebuild_records); the
 * teams are written at the next start, from the configuration, as always. The state
 * directory is held (statedir_open) meanwhile, so no pomed runs on it.
 */
static int rebuild_registry(StateDir *state)
{
        char stamp[32], from[PATH_MAX], to[PATH_MAX + 64], err[512] = "";
        time_t now = time(NULL);
        struct tm tm;
        strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", gmtime_r(&now, &tm));
        snprintf(from, sizeof(from), "%s/pome.db", state->path);
        for (const char *suffix = ""; suffix; suffix = streq(suffix, "")       ? "-wal"
                                                       : streq(suffix, "-wal") ? "-shm"
                                                                               : NULL) {
                char f[PATH_MAX + 8];
                snprintf(f, sizeof(f), "%s%s", from, suffix);
                snprintf(to, sizeof(to), "%s.damaged-%s%s", from, stamp, suffix);
                if (rename(f, to) < 0 && errno != ENOENT) {
                        log_error_errno(-errno, "--rebuild-registry: cannot move %s aside", f);
                        return -errno;
                }
                if (streq(suffix, "") && access(to, F_OK) == 0)
                        log_notice("--rebuild-registry: %s moved aside to %s", from, to);
        }
        RunDirs *runs = NULL;
        Registry *reg = NULL;
        size_t n = 0;
        int r = rundirs_open(state->runs, &runs);
        if (r >= 0)
                r = registry_open(from, 0, &reg, err, sizeof(err));
        if (r >= 0)
                r = manager_rebuild_records(reg, runs, &n);
        registry_close(reg);
        rundirs_free(runs);
        if (r < 0) {
                log_error("--rebuild-registry: %s", err[0] ? err : strerror(-r));
                return r;
        }
        log_notice("--rebuild-registry: %s rebuilt with %zu record%s from %s (their ages are not "
                   "known: retention counts them from now); start pomed to serve",
                   from, n, n == 1 ? "" : "s", state->runs);
        return 0;
}

int main(int argc, char **argv)
{
        Args a = {};
        int r = parse_args(argc, argv, &a);
        if (r <= 0)
                return r < 0 ? 2 : 0;
        if (a.verbose)
                log_set_max_level(LOG_DEBUG);

        /* No --config: the embedded default, overlaid with /etc/pome/pomed.conf when it
         * exists and then with /etc/pome/pomed.conf.d/<name>.conf. */
        const char *config_path = a.config ? a.config : POMED_CONFIG_FILE;
        unsigned config_flags = a.config ? 0 : CONFIG_FILE_OPTIONAL;
        char err[512] = "";
        Config *cfg = NULL;
        r = config_load_with(config_path, config_flags, &cfg, err, sizeof(err));
        if (r >= 0)
                r = apply_args(cfg, &a, err, sizeof(err));
        if (r < 0) {
                if (a.check_config || a.reload)
                        fprintf(stderr, "pomed: configuration invalid: %s%s\n",
                                err[0] ? err : strerror(-r),
                                a.reload ? "; the running pomed keeps its configuration" : "");
                else
                        log_error("configuration: %s", err[0] ? err : strerror(-r));
                config_free(cfg);
                return 1;
        }
        if (a.check_config) {
                r = check_config(cfg);
                config_free(cfg);
                return r;
        }
        if (a.reload) {
                r = reload_running(cfg->state_dir);
                config_free(cfg);
                return r;
        }

        raise_nofile();

        /* SIGCHLD must be blocked for sd-event's child sources; the others become events. */
        sigset_t ss;
        sigemptyset(&ss);
        sigaddset(&ss, SIGCHLD);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGINT);
        sigaddset(&ss, SIGHUP);
        sigprocmask(SIG_BLOCK, &ss, NULL);
        signal(SIGPIPE, SIG_IGN);
        /* Runs hold agents' data: tapes, seeds and states are not for other users. */
        umask(027);

        StateDir *state = NULL;
        pid_t holder = 0;
        r = statedir_open(cfg->state_dir, &state, &holder, err, sizeof(err));
        if (r < 0) {
                if (r == -EBUSY && holder > 0)
                        log_error("%s (pid %d). Stop it first, or use another --state-dir.", err,
                                  (int)holder);
                else
                        log_error("%s", err);
                config_free(cfg);
                return 1;
        }
        cfg->check_registry = a.check_registry;
        if (a.rebuild_registry) {
                r = rebuild_registry(state);
                statedir_free(state);
                config_free(cfg);
                return r < 0 ? 1 : 0;
        }
        if (state->world_readable)
                log_warning("state directory %s is open to every user (mode %04o): its runs hold "
                            "agents' tapes and states. Fix: chmod o-rwx %s (the unit's "
                            "StateDirectoryMode=0750 does this)",
                            state->path, (unsigned)state->mode, state->path);

        sd_event *e = NULL;
        Manager *m = NULL;
        Control *ctl = NULL;
        Gateway *gw = NULL;
        Httpd *hc = NULL, *hg = NULL;
        Observers obs = {};
        _cleanup_free_ char *info_dir = discovery_dir(cfg);
        int ret = 1;
        r = sd_event_default(&e);
        if (r < 0) {
                log_error_errno(r, "cannot create the event loop");
                goto out;
        }
        /* WATCHDOG=1 from the loop itself at half of WatchdogSec= (none when unset): a
         * stuck loop stops the pings and systemd restarts pomed. */
        r = sd_event_set_watchdog(e, true);
        if (r < 0)
                log_warning_errno(r, "cannot set up the systemd watchdog");
        r = manager_new(e, cfg, state, &m, err, sizeof(err));
        if (r < 0) {
                log_error("%s", err[0] ? err : strerror(-r));
                goto out;
        }
        Service service = {.manager = m, .bus_wanted = cfg->bus && !streq(cfg->bus, "none")};
        obs.service = &service;
        Stop stop = {.event = e, .manager = m, .service = &service};
        (void)sd_event_add_signal(e, NULL, SIGTERM, on_signal, &stop);
        (void)sd_event_add_signal(e, NULL, SIGINT, on_signal, &stop);
        /* A missing bus is not an error: bus_new logs it and keeps retrying. */
        r = bus_new(e, m, cfg->bus, &obs.bus);
        if (r < 0) {
                log_error_errno(r,
                                "D-Bus: bad bus '%s' (expected system, user, none or an "
                                "address such as unix:path=/run/dbus/system_bus_socket)",
                                cfg->bus);
                goto out;
        }
        if (obs.bus)
                bus_set_acquired_handler(obs.bus, on_bus_acquired, &service);
        Reload reload = {.config_path = config_path,
                         .config_flags = config_flags,
                         .args = &a,
                         .manager = m,
                         .service = &service,
                         .state = state};
        (void)sd_event_add_signal(e, NULL, SIGHUP, on_hup, &reload);
        manager_set_observer(m, &(ManagerObserver){.state_changed = on_sandbox_changed,
                                                   .team_changed = on_team_changed,
                                                   .userdata = &obs});
        if ((r = control_new(m, &ctl)) < 0 || (r = gateway_new(m, &gw)) < 0) {
                log_error_errno(r, "out of memory");
                goto out;
        }
        HttpdConfig hcfg = {.address = cfg->control_address,
                            .port = cfg->control_port,
                            .max_body = cfg->max_body,
                            .connection_limit = cfg->max_connections,
                            .per_client_limit = cfg->max_connections_per_client,
                            .connection_timeout = 60,
                            .header_timeout_usec = cfg->header_timeout_usec,
                            .body_timeout_usec = cfg->body_timeout_usec,
                            .refuse = control_refuse};
        r = httpd_new(e, &hcfg, control_handle, ctl, &hc);
        if (r < 0) {
                listen_failed(r, cfg->control_address, cfg->control_port, "control API",
                              "control_listen", "--control-listen");
                goto out;
        }
        hcfg.address = cfg->gateway_address;
        hcfg.port = cfg->gateway_port;
        hcfg.refuse = gateway_refuse;
        hcfg.replied = gateway_replied;
        r = httpd_new(e, &hcfg, gateway_handle, gw, &hg);
        if (r < 0) {
                listen_failed(r, cfg->gateway_address, cfg->gateway_port, "twin gateway",
                              "gateway_listen", "--gateway-listen");
                goto out;
        }
        stop.listeners[0] = hc;
        stop.listeners[1] = hg;
        char *control_url = service.control_url, *gateway_url = service.gateway_url;
        url_for(cfg->control_address, httpd_port(hc), control_url, sizeof(service.control_url));
        url_for(cfg->gateway_address, httpd_port(hg), gateway_url, sizeof(service.gateway_url));
        manager_set_public_url(m, cfg->public_url ? cfg->public_url : gateway_url);
        {
                /* a block of its own: the gotos to out jump past it */
                _cleanup_json_ json_t *agent = json_object();
                const struct {
                        const char *key;
                        uint64_t v;
                } limits[] = {{"memory", cfg->agent_memory_max},
                              {"pids", cfg->agent_pids_max},
                              {"output", cfg->agent_output_max}};
                bool oom = !agent;
                for (size_t i = 0; !oom && i < ELEMENTSOF(limits); i++)
                        oom = limits[i].v &&
                              json_object_set_new(agent, limits[i].key,
                                                  json_integer((json_int_t)limits[i].v)) < 0;
                r = oom ? -ENOMEM
                        : statedir_write_info(state, info_dir, control_url, gateway_url, agent);
        }
        if (r < 0)
                log_warning_errno(r, "cannot write pomed.json in %s%s%s", state->path,
                                  info_dir ? " and " : "", strempty(info_dir));
        log_info("control API on %s, twin gateway on %s (public %s), state in %s", control_url,
                 gateway_url, manager_public_url(m), state->path);
        {
                /* a block of its own: the gotos to out jump past it */
                _cleanup_free_ char *judge = cfg->judge ? judge_config_describe(cfg->judge) : NULL;
                log_info("judge of [model] criteria: %s",
                         judge ? judge
                               : "none: a task's [model] criteria are not evaluated (judge: "
                                 "in pomed.conf)");
        }
        service.listening = true;
        service_maybe_ready(&service);
        service_status(&service);

        r = sd_event_loop(e);
        if (r < 0)
                log_error_errno(r, "event loop failed");
        else
                log_struct(LOG_INFO, &(LogFields){.message_id = LOG_MESSAGE_POMED_STOPPED},
                           "stopped: no sandbox and no pod left");
        ret = r < 0 ? 1 : 0;
out:
        /* Order matters: pods first (their calls in flight get answered), then the
         * listeners (which answer whatever still waits), then the rest. */
        if (hc)
                httpd_quiesce(hc);
        if (hg)
                httpd_quiesce(hg);
        obs.bus = bus_free(obs.bus); /* before the manager: D-Bus StopSandbox waiters point at it */
        m = manager_free(m);
        hg = httpd_free(hg);
        hc = httpd_free(hc);
        gw = gateway_free(gw);
        ctl = control_free(ctl);
        if (state)
                statedir_remove_info(state);
        statedir_free(state);
        config_free(cfg);
        sd_event_unref(e);
        return ret;
}
