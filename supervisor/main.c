/* SPDX-License-Identifier: MIT */
/*
 * pomed: the Pome supervisor. One thread, one sd-event loop: the control API,
 * the twin gateway, pod I/O, child exits, clocks and signals all run on it.
 */
#include <getopt.h>
#include <sys/stat.h>
#include <signal.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "common/httpd.h"
#include "common/util.h"
#include "supervisor/bus.h"
#include "supervisor/config.h"
#include "supervisor/control.h"
#include "supervisor/gateway.h"
#include "supervisor/log.h"
#include "supervisor/manager.h"
#include "supervisor/statedir.h"

static void help(void)
{
        printf("pomed — the Pome self-hosted supervisor\n"
               "\n"
               "Usage: pomed [OPTIONS]\n"
               "\n"
               "Runs twin pods (GitHub and Slack digital twins) in isolated sandboxes and\n"
               "serves the control API and the twin gateway. With no configuration it listens on\n"
               "loopback, keeps state in ./.pome and creates team `local` with a generated API\n"
               "key that `pome` finds by itself.\n"
               "\n"
               "Options:\n"
               "  -c, --config FILE          configuration file (YAML; default: the embedded\n"
               "                             default, or /etc/pome/pomed.conf if it exists)\n"
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
        bool verbose;
} Args;

static int parse_args(int argc, char **argv, Args *a)
{
        enum { ARG_STATE_DIR = 0x100, ARG_CONTROL, ARG_GATEWAY, ARG_PUBLIC, ARG_BUS, ARG_VERSION };
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

typedef struct Stop {
        sd_event *event;
        Manager *manager;
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
                log_info("received %s: draining — new sandboxes refused, calls in flight "
                         "finish, then every sandbox ends (supervisor_stopped)",
                         strsignal((int)si->ssi_signo));
                (void)sd_notify(false, "STOPPING=1\nSTATUS=Draining");
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
        const Args *args;
        Manager *manager;
} Reload;

/* SIGHUP: re-read the configuration and apply its teams (quotas, plan tiers, keys)
 * without touching open sandboxes. Everything else needs a restart. */
static int on_hup(sd_event_source *s _unused_, const struct signalfd_siginfo *si _unused_,
                  void *userdata)
{
        Reload *rl = userdata;
        char err[512] = "";
        Config *cfg = NULL;
        int r = config_load(rl->config_path, &cfg, err, sizeof(err));
        if (r >= 0)
                r = apply_args(cfg, rl->args, err, sizeof(err));
        if (r < 0) {
                log_error("reload: %s; keeping the running configuration",
                          err[0] ? err : strerror(-r));
                config_free(cfg);
                return 0;
        }
        r = manager_reload_teams(rl->manager, cfg);
        if (r < 0)
                log_error_errno(r, "reload: cannot apply the teams");
        else
                log_info("reload: %zu team%s from %s applied; other settings need a restart",
                         cfg->n_teams, cfg->n_teams == 1 ? "" : "s",
                         rl->config_path ? rl->config_path : "the embedded default");
        config_free(cfg);
        return 0;
}

/* The manager's observers, forwarded to D-Bus; userdata is main's Bus pointer, so once
 * bus_free() has cleared it nothing is forwarded any more. */
static void on_sandbox_changed(Sandbox *s, void *userdata)
{
        bus_sandbox_changed(*(Bus **)userdata, s);
}

static void on_team_changed(Team *t, void *userdata)
{
        bus_team_changed(*(Bus **)userdata, t);
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

int main(int argc, char **argv)
{
        Args a = {};
        int r = parse_args(argc, argv, &a);
        if (r <= 0)
                return r < 0 ? 2 : 0;
        if (a.verbose)
                log_set_max_level(LOG_DEBUG);

        const char *config_path = a.config;
        if (!config_path && access("/etc/pome/pomed.conf", R_OK) == 0)
                config_path = "/etc/pome/pomed.conf";
        char err[512] = "";
        Config *cfg = NULL;
        r = config_load(config_path, &cfg, err, sizeof(err));
        if (r >= 0)
                r = apply_args(cfg, &a, err, sizeof(err));
        if (r < 0) {
                log_error("configuration: %s", err[0] ? err : strerror(-r));
                config_free(cfg);
                return 1;
        }

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

        sd_event *e = NULL;
        Manager *m = NULL;
        Control *ctl = NULL;
        Gateway *gw = NULL;
        Httpd *hc = NULL, *hg = NULL;
        Bus *bus = NULL;
        int ret = 1;
        r = sd_event_default(&e);
        if (r < 0) {
                log_error_errno(r, "cannot create the event loop");
                goto out;
        }
        r = manager_new(e, cfg, state, &m, err, sizeof(err));
        if (r < 0) {
                log_error("%s", err[0] ? err : strerror(-r));
                goto out;
        }
        Stop stop = {.event = e, .manager = m};
        (void)sd_event_add_signal(e, NULL, SIGTERM, on_signal, &stop);
        (void)sd_event_add_signal(e, NULL, SIGINT, on_signal, &stop);
        /* A missing bus is not an error: bus_new logs it and keeps retrying. */
        r = bus_new(e, m, cfg->bus, &bus);
        if (r < 0) {
                log_error_errno(r,
                                "D-Bus: bad bus '%s' (expected system, user, none or an "
                                "address such as unix:path=/run/dbus/system_bus_socket)",
                                cfg->bus);
                goto out;
        }
        Reload reload = {.config_path = config_path, .args = &a, .manager = m};
        (void)sd_event_add_signal(e, NULL, SIGHUP, on_hup, &reload);
        manager_set_observer(m, &(ManagerObserver){.state_changed = on_sandbox_changed,
                                                   .team_changed = on_team_changed,
                                                   .userdata = &bus});
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
                log_error_errno(r, "cannot listen on %s:%u (control API)", cfg->control_address,
                                cfg->control_port);
                goto out;
        }
        hcfg.address = cfg->gateway_address;
        hcfg.port = cfg->gateway_port;
        hcfg.refuse = gateway_refuse;
        r = httpd_new(e, &hcfg, gateway_handle, gw, &hg);
        if (r < 0) {
                log_error_errno(r, "cannot listen on %s:%u (twin gateway)", cfg->gateway_address,
                                cfg->gateway_port);
                goto out;
        }
        stop.listeners[0] = hc;
        stop.listeners[1] = hg;
        char control_url[128], gateway_url[128];
        url_for(cfg->control_address, httpd_port(hc), control_url, sizeof(control_url));
        url_for(cfg->gateway_address, httpd_port(hg), gateway_url, sizeof(gateway_url));
        manager_set_public_url(m, cfg->public_url ? cfg->public_url : gateway_url);
        r = statedir_write_info(state, control_url, gateway_url);
        if (r < 0)
                log_warning_errno(r, "cannot write %s/pomed.json", state->path);
        log_info("control API on %s, twin gateway on %s (public %s), state in %s", control_url,
                 gateway_url, manager_public_url(m), state->path);
        (void)sd_notifyf(false, "READY=1\nSTATUS=Serving on %s and %s", control_url, gateway_url);

        r = sd_event_loop(e);
        if (r < 0)
                log_error_errno(r, "event loop failed");
        ret = r < 0 ? 1 : 0;
out:
        /* Order matters: pods first (their calls in flight get answered), then the
         * listeners (which answer whatever still waits), then the rest. */
        if (hc)
                httpd_quiesce(hc);
        if (hg)
                httpd_quiesce(hg);
        bus = bus_free(bus); /* before the manager: D-Bus StopSandbox waiters point at it */
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
