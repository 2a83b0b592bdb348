/* SPDX-License-Identifier: MIT */
/*
 * `pome doctor`: what isolates the pods on this host, and whether the deployment is as it
 * should be — each isolation layer (cgroup mode and controllers, seccomp, each namespace,
 * the pod user) as the kernel offers it and as the running pomed uses it (its /healthz),
 * the bus name, the state directory's permissions and room, both listeners. Every problem is one
 * line with its fix. Exit 0 when there is none, 1 otherwise.
 */
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>

#include "cli/api.h"
#include "cli/args.h"
#include "common/httpclient.h"
#include "cli/commands.h"
#include "supervisor/agentpod.h"
#include "cli/config.h"
#include "cli/output.h"
#include "common/fileio.h"
#include "common/json-util.h"
#include "common/util.h"

static const char help_doctor[] =
        "Usage: pome doctor [OPTIONS]\n"
        "\n"
        "Check this host and the pomed pome finds: each isolation layer of the pods\n"
        "(cgroup mode and controllers, seccomp, the net, ipc, uts, pid and mount\n"
        "namespaces, the pod user) as the kernel offers it and as pomed uses it, whether\n"
        "pome run can seal its agents (it starts a test pod), the D-Bus name, the state\n"
        "directory's permissions and room, and both listeners. Each line says ok, warn\n"
        "or missing; a missing or warned one comes with its fix.\n"
        "\n"
        "Options:\n"
        "  --api-url URL          Control API base URL (default: as for every command).\n"
        "  -h, --help             Show this help.\n"
        "\n"
        "Exit status: 0 when nothing is missing, 1 otherwise.\n";

enum {
        OPT_API_URL = ARGS_FIRST_OPTION,
};

typedef enum Verdict { OK, WARN, MISSING } Verdict;

typedef struct Doctor {
        bool color;
        unsigned problems, warnings;
        json_t *health;    /* pomed's /healthz, NULL when unreachable */
        json_t *isolation; /* borrowed from health */
} Doctor;

static void report(Doctor *d, Verdict v, const char *what, const char *fix, const char *fmt, ...)
        _printf_(5, 6);
static void report(Doctor *d, Verdict v, const char *what, const char *fix, const char *fmt, ...)
{
        static const char *const words[] = {"ok", "warn", "missing"};
        static const char *const colors[] = {"\033[32m", "\033[33m", "\033[1;31m"};
        char detail[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof(detail), fmt, ap);
        va_end(ap);
        printf("%s%-8s%s %-18s ", d->color ? colors[v] : "", words[v], d->color ? "\033[0m" : "",
               what);
        output_fputs_clean(detail, stdout);
        putchar('\n');
        if (v != OK && fix)
                printf("%-8s %-18s fix: %s\n", "", "", fix);
        d->problems += v == MISSING;
        d->warnings += v == WARN;
}

/* ---- what the kernel offers ---- */

static bool read_line(const char *path, char *buf, size_t len)
{
        _cleanup_free_ char *text = NULL;
        if (read_file_at(AT_FDCWD, path, 4096, &text, NULL) < 0)
                return false;
        snprintf(buf, len, "%s", text);
        buf[strcspn(buf, "\n")] = 0;
        return true;
}

static bool mounted_rw(const char *path)
{
        struct statvfs sv;
        return statvfs(path, &sv) == 0 && !(sv.f_flag & ST_RDONLY) && access(path, W_OK) == 0;
}

static void check_cgroups(Doctor *d)
{
        struct statfs fs;
        const char *mode = "none";
        char controllers[256] = "";
        bool writable = false;
        if (statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC) {
                mode = "v2 (unified)";
                (void)read_line("/sys/fs/cgroup/cgroup.controllers", controllers,
                                sizeof(controllers));
                writable = mounted_rw("/sys/fs/cgroup");
        } else if (statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type == TMPFS_MAGIC) {
                struct statfs u;
                mode = statfs("/sys/fs/cgroup/unified", &u) == 0 && u.f_type == CGROUP2_SUPER_MAGIC
                               ? "v1 (hybrid)"
                               : "v1 (legacy)";
                size_t n = 0;
                writable = true;
                static const char *const ctrls[] = {"memory", "pids", "cpu"};
                for (size_t i = 0; i < ELEMENTSOF(ctrls); i++) {
                        char p[64];
                        snprintf(p, sizeof(p), "/sys/fs/cgroup/%s", ctrls[i]);
                        if (access(p, F_OK) < 0) {
                                writable = false;
                                continue;
                        }
                        bool rw = mounted_rw(p);
                        writable = writable && rw;
                        n += (size_t)snprintf(controllers + n, sizeof(controllers) - n, "%s%s%s",
                                              n ? " " : "", ctrls[i], rw ? "" : " (read-only)");
                }
        }
        json_t *cg = json_object_get(d->isolation, "cgroups");
        bool active = json_is_true(json_object_get(cg, "active"));
        if (!d->health)
                report(d, writable ? OK : MISSING, "cgroups",
                       "pods need the memory and pids controllers writable by pomed: run it "
                       "where they are (not in a container that mounts them read-only), as "
                       "root, with Delegate=yes under systemd",
                       "%s, controllers: %s (pomed not reachable: its view unknown)", mode,
                       controllers[0] ? controllers : "none");
        else if (active)
                report(d, OK, "cgroups", NULL, "%s, controllers: %s; pods under %s%s", mode,
                       controllers[0] ? controllers : "none", strempty(json_get_str(cg, "tree")),
                       json_is_false(json_object_get(cg, "cpu"))
                               ? " (memory and pids; no cpu controller: no cpu weight)"
                               : "");
        else {
                /* pomed's own reason, then the fix for that case */
                const char *why = json_get_str(cg, "error");
                bool refused = json_is_true(json_object_get(cg, "creates_refused"));
                const char *fix =
                        !writable ? "the controllers are read-only here (a container?): run pomed "
                                    "on a host where memory and pids are writable"
                        : why && strstr(why, "Permission denied")
                                ? "pomed is not root: run it as root (the packaged unit does), "
                                  "or in a cgroup delegated to its user (systemd-run --user "
                                  "--scope -p Delegate=yes pomed …)"
                        : why && strstr(why, "not available")
                                ? "its cgroup lacks the memory or pids controller: start it "
                                  "with Delegate=yes (the packaged unit; systemd-run -p "
                                  "Delegate=yes), or set cgroup_parent in pomed.conf to a "
                                  "cgroup that has them"
                                : "its log says why; the packaged unit (Delegate=yes) is the "
                                  "known-good place";
                report(d, MISSING, "cgroups", fix,
                       "%s, controllers: %s: pomed has no pod cgroups (%s); %s", mode,
                       controllers[0] ? controllers : "none", why ? why : "no reason given",
                       refused ? "creates are refused (allow_unlimited_pods: false)"
                               : "pods run without memory and pids limits (allow_unlimited_pods: "
                                 "true)");
        }
}

static void check_seccomp(Doctor *d)
{
        char actions[256] = "";
        bool filter =
                read_line("/proc/sys/kernel/seccomp/actions_avail", actions, sizeof(actions)) &&
                strstr(actions, "kill_process") && strstr(actions, "errno");
        if (filter)
                report(d, OK, "seccomp", NULL, "filters supported (%s)%s", actions,
                       d->health ? "; pomed filters every pod in two stages" : "");
        else
                report(d, MISSING, "seccomp",
                       "a kernel with CONFIG_SECCOMP_FILTER (every Debian kernel has it)",
                       "the kernel offers no seccomp filters");
}

static void check_namespaces(Doctor *d)
{
        static const struct {
                const char *name, *ns, *sysctl, *why;
        } nss[] = {
                {"net", "net", "max_net_namespaces", "no network at all"},
                {"ipc", "ipc", "max_ipc_namespaces", "no shared IPC"},
                {"uts", "uts", "max_uts_namespaces", "its own hostname"},
                {"pid", "pid", "max_pid_namespaces", "sees only itself"},
                {"mount", "mnt", "max_mnt_namespaces", "a read-only view"},
        };
        bool active = json_is_true(json_object_get(d->isolation, "namespaces"));
        for (size_t i = 0; i < ELEMENTSOF(nss); i++) {
                char what[32], p[64], max[32] = "";
                snprintf(what, sizeof(what), "namespace %s", nss[i].name);
                snprintf(p, sizeof(p), "/proc/self/ns/%s", nss[i].ns);
                bool kernel = access(p, F_OK) == 0;
                snprintf(p, sizeof(p), "/proc/sys/user/%s", nss[i].sysctl);
                bool allowed = !read_line(p, max, sizeof(max)) || atoll(max) > 0;
                char fix[160];
                snprintf(fix, sizeof(fix), "sysctl -w user.%s=10000", nss[i].sysctl);
                if (!kernel)
                        report(d, MISSING, what, "a kernel with this namespace",
                               "the kernel has no %s namespaces", nss[i].name);
                else if (!allowed)
                        report(d, MISSING, what, fix, "user.%s is 0: none may be made",
                               nss[i].sysctl);
                else if (d->health && !active)
                        report(d, MISSING, what,
                               "run pomed as root (the packaged unit does): only root may "
                               "make namespaces and drop pods to another uid",
                               "supported, but pomed is not root: pods share its namespaces");
                else
                        report(d, OK, what, NULL, "each pod its own (%s)", nss[i].why);
        }
}

/* Whether `pome run` can seal an agent here: the probe, then a real pod running true(1). */
static void check_seal(Doctor *d)
{
        char why[512] = "", err[512] = "";
        int mode = agent_pod_probe(why, sizeof(why));
        if (mode <= 0) {
                report(d, MISSING, "agent seal",
                       "see the reason; or run agents unsealed with pome run --no-seal (they "
                       "can then read what you can and reach any address)",
                       "pome run cannot seal its agents: %s", why);
                return;
        }
        char *argv[] = {(char *)"true", NULL}, *envp[] = {NULL};
        AgentPodSpec s = {.program = "/bin/true",
                          .argv = argv,
                          .envp = envp,
                          .cwd = "/usr",
                          .stdin_fd = -1,
                          .stdout_fd = -1,
                          .stderr_fd = -1,
                          .status_fd = -1,
                          .uid = 65534,
                          .gid = 65534};
        pid_t pid = 0;
        int pidfd = -1, st = 0;
        int r = agent_pod_start(&s, &pid, &pidfd, NULL, err, sizeof(err));
        if (r >= 0) {
                while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                        ;
                safe_close(pidfd);
        }
        if (r < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                report(d, MISSING, "agent seal",
                       "see the reason; or run agents unsealed with pome run --no-seal",
                       "a test pod failed: %s", r < 0 ? err : "true(1) did not exit 0 in it");
        else
                report(d, OK, "agent seal", NULL,
                       "pome run seals its agents (%s; a test pod ran true(1))",
                       mode == 1 ? "as root: a uid of their own, limits in a cgroup"
                                 : "without root: a user namespace, limits as rlimits");
}

static void check_pod_user(Doctor *d)
{
        if (!d->health)
                return;
        const char *user = json_get_str(d->isolation, "pod_user");
        const char *range = json_get_str(d->isolation, "pod_uid_range");
        if (!user)
                report(d, MISSING, "pod user",
                       "run pomed as root (the packaged unit does) so that pods drop to an "
                       "unprivileged uid",
                       "none: pods keep pomed's uid");
        else if (range)
                report(d, OK, "pod user", NULL, "a uid of its own per pod, from %s", range);
        else if (streq(user, "nobody"))
                report(d, WARN, "pod user",
                       "systemd-sysusers /usr/lib/sysusers.d/pome.conf (the package does) makes "
                       "pome-pod; or set pod_user or pod_uid_range in pomed.conf",
                       "nobody: a uid other services share");
        else
                report(d, OK, "pod user", NULL, "%s, a uid pods share with no other service%s",
                       user, "; pod_uid_range would give each pod its own");
}

/* ---- the deployment ---- */

static bool http_get(const char *url, long *ret_status, json_t **ret_json, char *err, size_t errlen)
{
        ClientResponse resp = {};
        ClientError e = {};
        int r = client_request("GET", url, "", NULL, &resp, &e);
        if (r < 0) {
                /* cut to errlen: a precision keeps -Wformat-truncation (release) quiet */
                snprintf(err, errlen, "%.*s", (int)(errlen ? errlen - 1 : 0), e.message);
                return false;
        }
        *ret_status = resp.status;
        if (ret_json)
                *ret_json = json_loadb(resp.body, resp.body_len, 0, NULL);
        client_response_done(&resp);
        return true;
}

static void check_listeners(Doctor *d, const Config *c, const char *info)
{
        char url[512], err[sizeof(((ClientError *)0)->message)] = "";
        long status = 0;
        snprintf(url, sizeof(url), "%s/healthz", c->api_url);
        if (!http_get(url, &status, &d->health, err, sizeof(err)) || status != 200) {
                json_decref(d->health);
                d->health = NULL;
                report(d, MISSING, "control API",
                       "start pomed: systemctl start pomed (journalctl -u pomed says why it "
                       "stopped), or run pomed for one of your own",
                       "%s (from %s): %s", c->api_url, strempty(c->api_url_source),
                       err[0] ? err : "not pomed's /healthz");
                return;
        }
        d->isolation = json_object_get(d->health, "isolation");
        report(d, OK, "control API", NULL, "%s answers (pomed %s, found via %s)", c->api_url,
               strempty(json_get_str(d->health, "version")), strempty(c->api_url_source));
        _cleanup_json_ json_t *j = json_load_file(info, 0, NULL);
        const char *gw = json_get_str(j, "gateway_url");
        if (!gw) {
                report(d, WARN, "twin gateway", "run pome where pomed's pomed.json is readable",
                       "its address is not known here (%s unreadable)", info);
                return;
        }
        snprintf(url, sizeof(url), "%s/healthz", gw);
        if (http_get(url, &status, NULL, err, sizeof(err)))
                report(d, OK, "twin gateway", NULL, "%s answers", gw);
        else
                report(d, MISSING, "twin gateway", "journalctl -u pomed: the gateway's listener",
                       "%s: %s", gw, err);
}

static void check_key(Doctor *d, const char *api_url)
{
        _cleanup_(config_done) Config c = {};
        _cleanup_(api_reply_done) ApiReply reply = {};
        /* config_load prints why on stderr, with the fix */
        int r = config_load(api_url, &c);
        if (r < 0) {
                report(d, MISSING, "API key", "see the line above", "not found or not readable");
                return;
        }
        if (!d->health)
                return;
        r = api_call(&c, "GET", "/v1/usage", NULL, &reply);
        if (r < 0)
                report(d, MISSING, "API key",
                       "POME_API_KEY or the state dir's api-key must hold a team's key",
                       "refused by pomed (HTTP %ld)", reply.status);
        else
                report(d, OK, "API key", NULL,
                       "accepted: team %s, %" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT
                       " slots used",
                       strempty(json_get_str(reply.json, "team_id")),
                       json_integer_value(json_object_get(reply.json, "sessions_used")),
                       json_integer_value(json_object_get(reply.json, "sessions_quota")));
}

static void check_bus(Doctor *d)
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r = sd_bus_open_system(&bus);
        if (r < 0) {
                report(d, WARN, "D-Bus",
                       "apt-get install dbus (pomed serves HTTP without it, but busctl and "
                       "monitoring see nothing)",
                       "no system bus: %s", strerror(-r));
                return;
        }
        r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                               "org.freedesktop.DBus", "GetNameOwner", &e, &reply, "s",
                               "sh.pome.Supervisor1");
        if (r >= 0)
                report(d, OK, "D-Bus", NULL, "sh.pome.Supervisor1 owned on the system bus");
        else
                report(d, WARN, "D-Bus",
                       "pomed owns it with bus: system (the default) and the policy "
                       "/usr/share/dbus-1/system.d/sh.pome.Supervisor1.conf (the package "
                       "installs it); journalctl -u pomed says why not",
                       "sh.pome.Supervisor1 is not on the system bus");
}

static void check_state_dir(Doctor *d, const char *dir)
{
        const char *sd = d->health ? dir : NULL;
        if (!sd)
                return;
        struct stat st;
        if (stat(sd, &st) < 0) {
                report(d, WARN, "state dir", "run pome doctor as root or as a member of its group",
                       "%s: %s", sd, strerror(errno));
                return;
        }
        if (st.st_mode & S_IRWXO) {
                char fix[600];
                snprintf(fix, sizeof(fix), "chmod o-rwx %s (the unit's StateDirectoryMode=0750)",
                         sd);
                report(d, MISSING, "state dir", fix,
                       "%s is mode %04o: every user may read the agents' tapes and states", sd,
                       (unsigned)(st.st_mode & 07777));
                return;
        }
        static const struct {
                const char *name;
                mode_t allowed; /* bits it may have */
        } secrets[] = {{"twin-secret", 0600}, {"api-key", 0640}};
        for (size_t i = 0; i < ELEMENTSOF(secrets); i++) {
                char p[600];
                struct stat fst;
                snprintf(p, sizeof(p), "%s/%s", sd, secrets[i].name);
                if (stat(p, &fst) < 0)
                        continue;
                if (fst.st_mode & 07777 & ~secrets[i].allowed) {
                        char fix[700];
                        snprintf(fix, sizeof(fix), "chmod %04o %s", secrets[i].allowed, p);
                        report(d, MISSING, "state dir", fix, "%s is mode %04o", p,
                               (unsigned)(fst.st_mode & 07777));
                        return;
                }
        }
        report(d, OK, "state dir", NULL, "%s mode %04o; its secrets closed to others", sd,
               (unsigned)(st.st_mode & 07777));
}

/* pomed's own reading of its state directory's room (/healthz state_dir), whatever its
 * permissions. */
static void check_state_room(Doctor *d)
{
        const json_t *room = json_object_get(d->health, "state_dir");
        if (room) {
                double mib = (double)json_integer_value(json_object_get(room, "free_bytes")) /
                             (1024.0 * 1024.0);
                if (json_is_true(json_object_get(room, "full"))) {
                        char fix[700];
                        snprintf(fix, sizeof(fix),
                                 "free space on %s (or its runs/): kept runs go after "
                                 "limits.retention, or remove old ones with pome sandbox list "
                                 "--state all and their run directories",
                                 strempty(json_get_str(room, "path")));
                        const char *err = json_get_str(room, "error");
                        report(d, MISSING, "state room", fix,
                               "%.1f MiB free: tapes, runs and the registry cannot be written "
                               "(%s%s)",
                               mib, err ? "a write failed: " : "or it is read-only",
                               err ? err : "");
                } else
                        report(d, OK, "state room", NULL, "%.1f MiB free", mib);
        }
}

int cmd_doctor(int argc, char **argv)
{
        static const ArgOption options[] = {
                {"api-url", OPT_API_URL, true},
        };
        const char *api_url = NULL, *v;
        ArgParser p;
        int r;

        args_init(&p, argc, argv, 1, options, ELEMENTSOF(options), "doctor");
        while ((r = args_next(&p, &v)) != ARGS_END) {
                switch (r) {
                case ARGS_HELP:
                        fputs(help_doctor, stdout);
                        return POME_EXIT_OK;
                case OPT_API_URL:
                        api_url = v;
                        break;
                case ARGS_POSITIONAL:
                        args_error("doctor", "unexpected argument '%s'", v);
                        return POME_EXIT_USAGE;
                default:
                        return POME_EXIT_USAGE;
                }
        }
        _cleanup_(config_done) Config c = {};
        _cleanup_free_ char *dir = NULL, *info = NULL;
        r = config_locate(api_url, &c, &dir, &info);
        if (r < 0 && r != -EHOSTDOWN)
                return api_exit_status(r, NULL);

        Doctor d = {.color = output_color(stdout)};
        if (r == -EHOSTDOWN)
                /* said above; the host's own layers are still worth checking */
                report(&d, MISSING, "control API", "start pomed (see the line above)",
                       "pomed is not running in %s", dir);
        else
                check_listeners(&d, &c, info);
        _cleanup_json_ json_t *info_json = json_load_file(info, 0, NULL);
        const char *state = json_get_str(info_json, "state_dir");
        if (r != -EHOSTDOWN)
                check_key(&d, api_url);
        check_cgroups(&d);
        check_seccomp(&d);
        check_namespaces(&d);
        check_pod_user(&d);
        check_seal(&d);
        check_bus(&d);
        check_state_dir(&d, state ? state : dir);
        check_state_room(&d);
        if (d.health && !streq_ptr(json_get_str(d.health, "missing_layers"), ""))
                printf("pomed reports missing: %s\n", json_get_str(d.health, "missing_layers"));
        printf("%u missing, %u warning%s.\n", d.problems, d.warnings, d.warnings == 1 ? "" : "s");
        json_decref(d.health);
        return d.problems ? POME_EXIT_ERROR : POME_EXIT_OK;
}
