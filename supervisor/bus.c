/* SPDX-License-Identifier: MIT */
#include "supervisor/bus.h"

#include <assert.h>
#include <stdarg.h>
#include <systemd/sd-bus.h>

#include "common/json-util.h"
#include "common/timeutil.h"
#include "common/util.h"
#include "supervisor/log.h"

#define BUS_NAME       "sh.pome.Supervisor1"
#define BUS_PATH       "/sh/pome/Supervisor1"
#define BUS_INTERFACE  "sh.pome.Supervisor1"
#define TEAM_PREFIX    "/sh/pome/Supervisor1/team"
#define TEAM_INTERFACE "sh.pome.Team1"

#define BUS_ERROR_NO_SUCH_SANDBOX  "sh.pome.Error.NoSuchSandbox"
#define BUS_ERROR_NO_SUCH_TEAM     "sh.pome.Error.NoSuchTeam"
#define BUS_ERROR_UNGRADED_SESSION "sh.pome.Error.UngradedSession"
#define BUS_ERROR_PROVISIONING     "sh.pome.Error.SandboxProvisioning"
#define BUS_ERROR_EXPIRED          "sh.pome.Error.SandboxExpired"
#define BUS_ERROR_ENDED            "sh.pome.Error.SandboxEnded"
#define BUS_ERROR_SHUTTING_DOWN    "sh.pome.Error.ShuttingDown"

/* Short first retry so a bus started just after pomed is picked up at once; then back off so
 * a host without the bus costs one wake-up a minute. */
/* a page of ListSandboxes, as the control API's GET /v1/sandboxes?limit= */
#define BUS_LIST_MAX 1000u

#define RETRY_FIRST_USEC (1 * USEC_PER_SEC)
#define RETRY_MAX_USEC   (60 * USEC_PER_SEC)

/* RequestName replies (D-Bus specification, "org.freedesktop.DBus.RequestName"). */
enum {
        NAME_PRIMARY_OWNER = 1,
        NAME_IN_QUEUE = 2,
        NAME_EXISTS = 3,
        NAME_ALREADY_OWNER = 4,
};

/* What subscribers last heard about a team, so one change makes exactly one signal. */
typedef struct TeamShadow {
        char *id;
        unsigned used, quota;
        char *plan_tier;
} TeamShadow;

/* A StopSandbox call answered once the sandbox's teardown is complete. */
typedef struct PendingStop {
        struct Bus *bus;
        char id[64];
        sd_bus_message *call; /* a reference */
        struct PendingStop *next;
} PendingStop;

struct Bus {
        sd_event *event; /* a reference */
        Manager *manager;
        char *spec;        /* "system", "user" or an address */
        char *description; /* for logs: "the system bus", … */
        sd_bus *bus;       /* NULL while disconnected */
        bool acquired;     /* we own BUS_NAME on bus */
        sd_event_source *retry;
        uint64_t retry_usec; /* delay of the next retry */
        char last_failure[512];
        TeamShadow *shadows;
        size_t n_shadows;
        PendingStop *pending;
        void (*on_acquired)(void *userdata);
        void *acquired_userdata;
};

static void strv_freep(char ***p)
{
        if (!*p)
                return;
        for (char **s = *p; *s; s++)
                free(*s);
        free(*p);
}

/* ---- access ---- */

/*
 * The caller's euid, the one dbus-daemon read with SO_PEERCRED when the caller connected.
 * SD_BUS_CREDS_AUGMENT is deliberately not asked for: augmented fields are read from
 * /proc/<pid> later, and a reused pid could make them lie (systemd's
 * sd_bus_query_sender_privilege() refuses them for the same reason). 0, or an AccessDenied
 * error in error (what names the method's rule) when the bus cannot tell.
 */
static int caller_euid(sd_bus_message *m, const char *rule, uid_t *ret, sd_bus_error *error)
{
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        int r = sd_bus_query_sender_creds(m, SD_BUS_CREDS_EUID, &creds);
        if (r >= 0)
                r = sd_bus_creds_get_euid(creds, ret);
        if (r >= 0 && (sd_bus_creds_get_augmented_mask(creds) & SD_BUS_CREDS_EUID))
                r = -EPERM;
        if (r < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                         "%s() is %s, and the bus cannot tell who is calling: %s",
                                         sd_bus_message_get_member(m), rule, strerror(-r));
        return 0;
}

/*
 * Mutations are for root (or, when pomed itself is not root — on a user bus —, for its own
 * user). The caller's euid goes to ret_uid, for the log.
 */
static int check_privileged(sd_bus_message *m, uid_t *ret_uid, sd_bus_error *error)
{
        uid_t euid;
        int r = caller_euid(m, "for root only", &euid, error);
        if (r < 0)
                return r;
        if (euid != 0 && euid != geteuid())
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                         "%s() changes what pomed runs and is for root only.",
                                         sd_bus_message_get_member(m));
        *ret_uid = euid;
        return 0;
}

/* ---- sh.pome.Supervisor1 ---- */

static int property_get_version(sd_bus *bus _unused_, const char *path _unused_,
                                const char *interface _unused_, const char *property _unused_,
                                sd_bus_message *reply, void *userdata _unused_,
                                sd_bus_error *error _unused_)
{
        return sd_bus_message_append(reply, "s", POME_VERSION);
}

static int property_get_missing_layers(sd_bus *bus _unused_, const char *path _unused_,
                                       const char *interface _unused_,
                                       const char *property _unused_, sd_bus_message *reply,
                                       void *userdata, sd_bus_error *error _unused_)
{
        Bus *b = userdata;
        return sd_bus_message_append(reply, "s", manager_missing_layers(b->manager));
}

static int method_list_teams(sd_bus_message *m, void *userdata, sd_bus_error *error _unused_)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Bus *b = userdata;
        size_t n;
        Team *const *teams = teams_list(manager_teams(b->manager), &n);
        int r;

        r = sd_bus_message_new_method_return(m, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(suuso)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *path = NULL;
                const Team *t = teams[i];
                r = sd_bus_path_encode(TEAM_PREFIX, t->id, &path);
                if (r < 0)
                        return r;
                r = sd_bus_message_append(reply, "(suuso)", t->id, (uint32_t)t->used,
                                          (uint32_t)t->quota, strempty(t->plan_tier), path);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static bool isempty_or_all(const char *state)
{
        return !state || !*state || streq(state, "all");
}

/* µs since the epoch (CLOCK_REALTIME), systemd's convention for timestamps on the bus. */
static uint64_t epoch_usec(const char *rfc3339)
{
        int64_t sec;
        return parse_rfc3339(rfc3339, &sec) == 0 && sec > 0 ? (uint64_t)sec * USEC_PER_SEC : 0;
}

/*
 * The team whose sandboxes the caller of m may list: *ret NULL for every team (root, or
 * pomed's own user), else the team whose unix_users has the caller. 0, or an AccessDenied
 * error in error for a caller in no team's unix_users (or one the bus cannot name).
 */
static int list_scope(Bus *b, sd_bus_message *m, Team **ret, sd_bus_error *error)
{
        uid_t euid;
        int r = caller_euid(m, "scoped by the caller's team", &euid, error);
        if (r < 0)
                return r;
        *ret = NULL;
        if (euid == 0 || euid == geteuid())
                return 0;
        if (!(*ret = teams_by_uid(manager_teams(b->manager), euid)))
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                         "%s() lists every team's sandboxes to root only; uid %u "
                                         "is in no team's unix_users (pomed.conf).",
                                         sd_bus_message_get_member(m), (unsigned)euid);
        return 0;
}

/*
 * ListSandboxes(state) and ListSandboxesPage(state, limit, starting_after): the records every
 * surface shows (held sandboxes live, ended ones as recorded), newest first, of the caller's
 * scope (list_scope), a page at a time as the control API's GET /v1/sandboxes: at most limit
 * (1 to BUS_LIST_MAX; ListSandboxes: BUS_LIST_MAX), after the record starting_after ("" =
 * from the newest). The time and memory are a page's, whatever the registry holds.
 */
static int list_sandboxes(sd_bus_message *m, void *userdata, sd_bus_error *error, bool paged)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Bus *b = userdata;
        const char *state, *after = "";
        uint32_t limit = BUS_LIST_MAX;
        int r;

        r = paged ? sd_bus_message_read(m, "sus", &state, &limit, &after)
                  : sd_bus_message_read(m, "s", &state);
        if (r < 0)
                return r;
        if (!isempty_or_all(state) && sandbox_state_from_string(state) < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Unknown state '%s': expected provisioning, ready, "
                                         "running, done, expired, failed, stopped, all or \"\".",
                                         state);
        if (limit < 1 || limit > BUS_LIST_MAX)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "limit %u is out of range: 1 to %u.", (unsigned)limit,
                                         (unsigned)BUS_LIST_MAX);
        Team *scope;
        r = list_scope(b, m, &scope, error);
        if (r < 0)
                return r;
        _cleanup_json_ json_t *docs = NULL;
        bool more = false;
        r = manager_list(b->manager, scope ? scope->id : NULL, isempty_or_all(state) ? NULL : state,
                         !*after ? NULL : after, limit, &docs, &more);
        if (r == -ENOENT)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "starting_after '%s' is no sandbox kept in this "
                                         "listing (the last of the previous page).",
                                         after);
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "Cannot read the registry: %s",
                                               strerror(-r));
        r = sd_bus_message_new_method_return(m, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(ssssstt)");
        if (r < 0)
                return r;
        size_t i;
        json_t *doc;
        json_array_foreach (docs, i, doc) {
                char twins[128] = "";
                size_t len = 0, k;
                json_t *t;
                json_array_foreach (json_object_get(doc, "twins"), k, t)
                        if (len < sizeof(twins))
                                len += (size_t)snprintf(twins + len, sizeof(twins) - len, "%s%s",
                                                        k ? "," : "",
                                                        strempty(json_string_value(t)));
                r = sd_bus_message_append(
                        reply, "(ssssstt)", strempty(json_get_str(doc, "session_id")),
                        strempty(json_get_str(doc, "team_id")),
                        strempty(json_get_str(doc, "state")), strempty(json_get_str(doc, "reason")),
                        twins, epoch_usec(json_get_str(doc, "created_at")),
                        epoch_usec(json_get_str(doc, "expires_at")));
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r >= 0 && paged)
                r = sd_bus_message_append(reply, "b", more);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int method_list_sandboxes(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        return list_sandboxes(m, userdata, error, false);
}

static int method_list_sandboxes_page(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        return list_sandboxes(m, userdata, error, true);
}

/* SandboxGoneFn of a discard asked for over D-Bus: the StopSandbox call waiting for it gets
 * its reply now (s is NULL for a sandbox that had already ended). */
static void on_sandbox_gone(Sandbox *s _unused_, void *userdata)
{
        PendingStop *p = userdata;
        for (PendingStop **pp = &p->bus->pending; *pp; pp = &(*pp)->next)
                if (*pp == p) {
                        *pp = p->next;
                        break;
                }
        /* the caller may have gone, or our connection with it: nothing to do then */
        int r = sd_bus_reply_method_return(p->call, NULL);
        if (r < 0)
                log_debug("D-Bus: cannot answer StopSandbox(%s): %s", p->id, strerror(-r));
        sd_bus_message_unref(p->call);
        free(p);
}

/* The one place a domain error becomes a D-Bus error. */
static int bus_error(sd_bus_error *error, const SandboxError *e)
{
        static const char *const names[] = {
                [SANDBOX_ERR_INVALID] = SD_BUS_ERROR_INVALID_ARGS,
                [SANDBOX_ERR_QUOTA] = SD_BUS_ERROR_LIMITS_EXCEEDED,
                [SANDBOX_ERR_NOT_FOUND] = BUS_ERROR_NO_SUCH_SANDBOX,
                [SANDBOX_ERR_PROVISIONING] = BUS_ERROR_PROVISIONING,
                [SANDBOX_ERR_UNGRADED] = BUS_ERROR_UNGRADED_SESSION,
                [SANDBOX_ERR_ENDED] = BUS_ERROR_ENDED,
                [SANDBOX_ERR_EXPIRED] = BUS_ERROR_EXPIRED,
                [SANDBOX_ERR_SHUTTING_DOWN] = BUS_ERROR_SHUTTING_DOWN,
                [SANDBOX_ERR_BUSY] = SD_BUS_ERROR_LIMITS_EXCEEDED,
                [SANDBOX_ERR_START_FAILED] = SD_BUS_ERROR_FAILED,
                [SANDBOX_ERR_STORAGE] = SD_BUS_ERROR_IO_ERROR,
                [SANDBOX_ERR_UNISOLATED] = SD_BUS_ERROR_NOT_SUPPORTED,
                [SANDBOX_ERR_LEDGER] = SD_BUS_ERROR_TIMEOUT,
                [SANDBOX_ERR_INTERNAL] = SD_BUS_ERROR_FAILED,
        };
        if (e->code == SANDBOX_ERR_UNGRADED)
                return sd_bus_error_setf(error, names[e->code],
                                         "%s Finalize it to keep the run, or pass discard=true "
                                         "to throw it away.",
                                         e->message);
        return sd_bus_error_setf(error, names[e->code], "%s", e->message);
}

static int method_stop_sandbox(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        Bus *b = userdata;
        const char *id;
        int discard, r;
        uid_t uid;

        r = sd_bus_message_read(m, "sb", &id, &discard);
        if (r < 0)
                return r;
        r = check_privileged(m, &uid, error);
        if (r < 0)
                return r;
        PendingStop *p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        /* Queued before the stop, which may answer at once when there is no pod to reap. */
        *p = (PendingStop){.bus = b, .call = sd_bus_message_ref(m), .next = b->pending};
        snprintf(p->id, sizeof(p->id), "%s", id);
        b->pending = p;
        if (discard)
                log_info("%s: discard asked for over D-Bus by uid %u", id, (unsigned)uid);
        SandboxError e = {};
        if (manager_stop(b->manager, NULL, id, NULL, discard, on_sandbox_gone, p, &e) < 0) {
                b->pending = p->next;
                sd_bus_message_unref(p->call);
                free(p);
                r = bus_error(error, &e);
                sandbox_error_done(&e);
                return r;
        }
        return 1; /* answered by on_sandbox_gone */
}

static int method_set_quota(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        Bus *b = userdata;
        const char *id;
        uint32_t quota;
        uid_t uid;
        int r;

        r = sd_bus_message_read(m, "su", &id, &quota);
        if (r < 0)
                return r;
        r = check_privileged(m, &uid, error);
        if (r < 0)
                return r;
        Team *t = teams_by_id(manager_teams(b->manager), id);
        if (!t)
                return sd_bus_error_setf(error, BUS_ERROR_NO_SUCH_TEAM, "No team %s.", id);
        /* the range pomed.conf's sessions_quota has: 2^32-1 would read as -1 in /v1/usage */
        if (quota > CONFIG_TEAM_QUOTA_MAX)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Quota %u is out of range: 0 to %u.", (unsigned)quota,
                                         CONFIG_TEAM_QUOTA_MAX);
        log_info("team %s: SetQuota(%u) over D-Bus by uid %u", t->id, (unsigned)quota,
                 (unsigned)uid);
        teams_set_quota(manager_teams(b->manager), t, quota);
        return sd_bus_reply_method_return(m, NULL);
}

/* Every method is SD_BUS_VTABLE_UNPRIVILEGED: sd-bus's own gate (CAP_SYS_ADMIN on untrusted
 * buses, none at all on trusted ones) is a different rule from ours, so the mutating ones
 * call check_privileged() instead, the one rule pomed has. */
static const sd_bus_vtable supervisor_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("MissingLayers", "s", property_get_missing_layers, 0,
                        SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_METHOD_WITH_NAMES("ListTeams", NULL, , "a(suuso)", SD_BUS_PARAM(teams),
                                 method_list_teams, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("ListSandboxes", "s", SD_BUS_PARAM(state), "a(ssssstt)",
                                 SD_BUS_PARAM(sandboxes), method_list_sandboxes,
                                 SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("ListSandboxesPage", "sus",
                                 SD_BUS_PARAM(state) SD_BUS_PARAM(limit)
                                         SD_BUS_PARAM(starting_after),
                                 "a(ssssstt)b", SD_BUS_PARAM(sandboxes) SD_BUS_PARAM(has_more),
                                 method_list_sandboxes_page, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("StopSandbox", "sb", SD_BUS_PARAM(id) SD_BUS_PARAM(discard), NULL,
                                 , method_stop_sandbox, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("SetQuota", "su", SD_BUS_PARAM(team) SD_BUS_PARAM(quota), NULL, ,
                                 method_set_quota, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL_WITH_NAMES(
                "SandboxStateChanged", "ssss",
                SD_BUS_PARAM(id) SD_BUS_PARAM(team) SD_BUS_PARAM(state) SD_BUS_PARAM(reason), 0),
        SD_BUS_VTABLE_END,
};

/* ---- sh.pome.Team1, one object per team ---- */

/* Objects are looked up per call, so teams a configuration reload adds or drops show up
 * without registering anything. */
static int team_find(sd_bus *bus _unused_, const char *path, const char *interface _unused_,
                     void *userdata, void **ret_found, sd_bus_error *error _unused_)
{
        _cleanup_free_ char *id = NULL;
        Bus *b = userdata;
        int r;

        r = sd_bus_path_decode(path, TEAM_PREFIX, &id);
        if (r <= 0)
                return r;
        Team *t = teams_by_id(manager_teams(b->manager), id);
        if (!t)
                return 0;
        *ret_found = t;
        return 1;
}

static int team_enumerate(sd_bus *bus _unused_, const char *prefix _unused_, void *userdata,
                          char ***ret_nodes, sd_bus_error *error _unused_)
{
        Bus *b = userdata;
        size_t n;
        Team *const *teams = teams_list(manager_teams(b->manager), &n);
        _cleanup_(strv_freep) char **nodes = calloc(n + 1, sizeof(char *));
        int r;

        if (!nodes)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                r = sd_bus_path_encode(TEAM_PREFIX, teams[i]->id, &nodes[i]);
                if (r < 0)
                        return r;
        }
        *ret_nodes = TAKE_PTR(nodes);
        return 0;
}

static const sd_bus_vtable team_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Id", "s", NULL, offsetof(Team, id), SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("SessionsUsed", "u", NULL, offsetof(Team, used),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("SessionsQuota", "u", NULL, offsetof(Team, quota),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("PlanTier", "s", NULL, offsetof(Team, plan_tier),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_VTABLE_END,
};
/* sd-bus reads "u" properties as uint32_t through the offsets above. */
_Static_assert(sizeof(((Team *)NULL)->used) == sizeof(uint32_t), "Team.used is not 32-bit");
_Static_assert(sizeof(((Team *)NULL)->quota) == sizeof(uint32_t), "Team.quota is not 32-bit");

/* ---- connection ---- */

static int on_retry(sd_event_source *es, uint64_t usec, void *userdata);

static void schedule_retry(Bus *b)
{
        int r;

        if (b->retry)
                return; /* one failure often shows twice (an error reply, then Disconnected) */
        uint64_t delay = b->retry_usec;
        b->retry_usec = delay * 2 < RETRY_MAX_USEC ? delay * 2 : RETRY_MAX_USEC;
        r = sd_event_add_time_relative(b->event, &b->retry, CLOCK_BOOTTIME, delay,
                                       100 * USEC_PER_MSEC, on_retry, b);
        if (r < 0)
                log_warning_errno(r, "D-Bus: cannot arm the reconnect timer; D-Bus stays off");
}

/* A failed attempt: warn when the reason is new (not at every retry), then retry later. */
static void bus_failed(Bus *b, const char *fmt, ...) _printf_(2, 3);
static void bus_failed(Bus *b, const char *fmt, ...)
{
        char what[sizeof(b->last_failure)];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        b->acquired = false;
        if (!streq(what, b->last_failure)) {
                log_warning("D-Bus: %s. Serving HTTP without D-Bus; retrying.", what);
                snprintf(b->last_failure, sizeof(b->last_failure), "%s", what);
        } else
                log_debug("D-Bus: %s (again)", what);
        schedule_retry(b);
}

static void bus_drop(Bus *b)
{
        b->acquired = false;
        if (!b->bus)
                return;
        /* Pending StopSandbox calls may keep the object alive a while: never dispatch it. */
        (void)sd_bus_detach_event(b->bus);
        b->bus = sd_bus_close_unref(b->bus);
}

static int on_disconnected(sd_bus_message *m, void *userdata, sd_bus_error *error _unused_)
{
        Bus *b = userdata;

        if (sd_bus_message_get_bus(m) != b->bus)
                return 0;
        if (b->acquired) {
                log_warning("D-Bus: lost the connection to %s; reconnecting", b->description);
                b->acquired = false;
                b->last_failure[0] = '\0';
                b->retry_usec = RETRY_FIRST_USEC;
                schedule_retry(b);
        } else
                bus_failed(b, "%s closed the connection", b->description);
        /* The connection itself is dropped by on_retry, outside its own dispatch. */
        return 0;
}

static int on_name_reply(sd_bus_message *reply, void *userdata, sd_bus_error *error _unused_)
{
        Bus *b = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        uint32_t ret;
        int r;

        if (!sd_bus_is_open(sd_bus_message_get_bus(reply)))
                return 0; /* on_disconnected tells */
        if (e) {
                bus_failed(b, "cannot own %s on %s: %s", BUS_NAME, b->description,
                           e->message ? e->message : e->name);
                return 0;
        }
        r = sd_bus_message_read(reply, "u", &ret);
        if (r < 0) {
                bus_failed(b, "cannot own %s on %s: bad RequestName reply: %s", BUS_NAME,
                           b->description, strerror(-r));
                return 0;
        }
        if (ret != NAME_PRIMARY_OWNER && ret != NAME_ALREADY_OWNER) {
                bus_failed(b, "cannot own %s on %s: %s", BUS_NAME, b->description,
                           ret == NAME_EXISTS ? "another connection owns it (another pomed?)"
                                              : "refused");
                return 0;
        }
        b->acquired = true;
        b->retry_usec = RETRY_FIRST_USEC;
        b->last_failure[0] = '\0';
        log_info("D-Bus: acquired %s on %s", BUS_NAME, b->description);
        if (b->on_acquired)
                b->on_acquired(b->acquired_userdata);
        return 0;
}

static int bus_open(const Bus *b, sd_bus **ret)
{
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        int r;

        if (streq(b->spec, "system"))
                return sd_bus_open_system(ret);
        if (streq(b->spec, "user"))
                return sd_bus_open_user(ret);
        r = sd_bus_new(&bus);
        if (r < 0)
                return r;
        r = sd_bus_set_address(bus, b->spec);
        if (r < 0)
                return r;
        r = sd_bus_set_bus_client(bus, true);
        if (r < 0)
                return r;
        r = sd_bus_start(bus);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(bus);
        return 0;
}

/* Objects, the disconnect watch and the name request on a fresh connection. */
static int bus_setup(Bus *b, sd_bus *bus)
{
        int r;

        /* pomed closes the connection itself, in its shutdown order */
        r = sd_bus_set_close_on_exit(bus, false);
        if (r < 0)
                return r;
        /* A local match: sd-bus synthesizes Disconnected; nothing is sent to the bus. */
        r = sd_bus_match_signal_async(bus, NULL, "org.freedesktop.DBus.Local", NULL,
                                      "org.freedesktop.DBus.Local", "Disconnected", on_disconnected,
                                      NULL, b);
        if (r < 0)
                return r;
        r = sd_bus_add_object_vtable(bus, NULL, BUS_PATH, BUS_INTERFACE, supervisor_vtable, b);
        if (r < 0)
                return r;
        r = sd_bus_add_fallback_vtable(bus, NULL, TEAM_PREFIX, TEAM_INTERFACE, team_vtable,
                                       team_find, b);
        if (r < 0)
                return r;
        r = sd_bus_add_node_enumerator(bus, NULL, TEAM_PREFIX, team_enumerate, b);
        if (r < 0)
                return r;
        /* A queue of D-Bus calls (a local user listing pages of 1 000 again and again) takes
         * turns with the twin traffic, not precedence: the bus runs at the priority of "run
         * MHD again now" (common/httpd.c), so an agent's reply waits for one call at most,
         * where at NORMAL every queued call went first (a twin call waited 12 s behind 40
         * listings). The pods' and listeners' sockets still come first. */
        r = sd_bus_attach_event(bus, b->event, SD_EVENT_PRIORITY_NORMAL + 1);
        if (r < 0)
                return r;
        return sd_bus_request_name_async(bus, NULL, BUS_NAME, 0, on_name_reply, b);
}

/* One attempt. The socket connect is synchronous (and local); authentication, Hello and
 * RequestName go on asynchronously on the loop, answered in on_name_reply. */
static void bus_connect(Bus *b)
{
        _cleanup_(sd_bus_close_unrefp) sd_bus *bus = NULL;
        int r;

        assert(!b->bus);
        r = bus_open(b, &bus);
        if (r < 0) {
                bus_failed(b, "cannot connect to %s: %s", b->description, strerror(-r));
                return;
        }
        r = bus_setup(b, bus);
        if (r < 0) {
                bus_failed(b, "cannot set up %s: %s", b->description, strerror(-r));
                return;
        }
        b->bus = TAKE_PTR(bus);
}

static int on_retry(sd_event_source *es _unused_, uint64_t usec _unused_, void *userdata)
{
        Bus *b = userdata;

        b->retry = sd_event_source_unref(b->retry);
        bus_drop(b);
        bus_connect(b);
        return 0;
}

/* ---- observers ---- */

static TeamShadow *shadow_find(Bus *b, const char *id)
{
        for (size_t i = 0; i < b->n_shadows; i++)
                if (streq(b->shadows[i].id, id))
                        return &b->shadows[i];
        return NULL;
}

static int shadow_add(Bus *b, const Team *t, TeamShadow **ret)
{
        TeamShadow *a = realloc(b->shadows, (b->n_shadows + 1) * sizeof(*a));
        if (!a)
                return -ENOMEM;
        b->shadows = a;
        TeamShadow *sh = &a[b->n_shadows];
        *sh = (TeamShadow){.id = strdup(t->id),
                           .used = t->used,
                           .quota = t->quota,
                           .plan_tier = t->plan_tier ? strdup(t->plan_tier) : NULL};
        if (!sh->id || (t->plan_tier && !sh->plan_tier)) {
                free(sh->id);
                free(sh->plan_tier);
                return -ENOMEM;
        }
        b->n_shadows++;
        *ret = sh;
        return 0;
}

void bus_team_changed(Bus *b, Team *t)
{
        char *changed[4] = {};
        size_t n = 0;
        int r;

        if (!b)
                return;
        TeamShadow *sh = shadow_find(b, t->id);
        if (!sh) {
                /* A team we never announced (added by a reload): all of it is news. */
                if (shadow_add(b, t, &sh) < 0)
                        return;
                changed[n++] = (char *)"SessionsUsed";
                changed[n++] = (char *)"SessionsQuota";
                changed[n++] = (char *)"PlanTier";
        } else {
                if (sh->used != t->used)
                        changed[n++] = (char *)"SessionsUsed";
                if (sh->quota != t->quota)
                        changed[n++] = (char *)"SessionsQuota";
                if (!streq_ptr(sh->plan_tier, t->plan_tier)) {
                        char *p = t->plan_tier ? strdup(t->plan_tier) : NULL;
                        if (t->plan_tier && !p)
                                return; /* keep the old value: the change is announced later */
                        free(sh->plan_tier);
                        sh->plan_tier = p;
                        changed[n++] = (char *)"PlanTier";
                }
                sh->used = t->used;
                sh->quota = t->quota;
        }
        if (n == 0 || !b->acquired)
                return;
        _cleanup_free_ char *path = NULL;
        r = sd_bus_path_encode(TEAM_PREFIX, t->id, &path);
        if (r >= 0)
                r = sd_bus_emit_properties_changed_strv(b->bus, path, TEAM_INTERFACE, changed);
        if (r < 0)
                log_debug("D-Bus: cannot announce team %s's change: %s", t->id, strerror(-r));
}

void bus_sandbox_changed(Bus *b, Sandbox *s)
{
        int r;

        if (!b || !b->acquired)
                return;
        r = sd_bus_emit_signal(b->bus, BUS_PATH, BUS_INTERFACE, "SandboxStateChanged", "ssss",
                               s->id, s->team->id, sandbox_state_to_string(s->state),
                               strempty(s->reason));
        if (r < 0)
                log_debug("D-Bus: cannot announce %s's state: %s", s->id, strerror(-r));
}

/* ---- lifetime ---- */

int bus_new(sd_event *e, Manager *m, const char *spec, Bus **ret)
{
        if (!spec || streq(spec, "none")) {
                *ret = NULL;
                return 0;
        }
        /* Anything but the two names must look like an address ("transport:key=value"); a
         * typo must not become a bus pomed retries forever. */
        if (!streq(spec, "system") && !streq(spec, "user") && !strchr(spec, ':'))
                return -EINVAL;

        Bus *b = calloc(1, sizeof(*b));
        if (!b)
                return -ENOMEM;
        b->event = sd_event_ref(e);
        b->manager = m;
        b->retry_usec = RETRY_FIRST_USEC;
        b->spec = strdup(spec);
        if (streq(spec, "system") || streq(spec, "user")) {
                if (asprintf(&b->description, "the %s bus", spec) < 0)
                        b->description = NULL;
        } else
                b->description = strdup(spec);
        if (!b->spec || !b->description) {
                bus_free(b);
                return -ENOMEM;
        }
        size_t n;
        Team *const *teams = teams_list(manager_teams(m), &n);
        for (size_t i = 0; i < n; i++) {
                TeamShadow *sh;
                if (shadow_add(b, teams[i], &sh) < 0) {
                        bus_free(b);
                        return -ENOMEM;
                }
        }
        bus_connect(b);
        *ret = b;
        return 0;
}

void bus_set_acquired_handler(Bus *b, void (*fn)(void *userdata), void *userdata)
{
        b->on_acquired = fn;
        b->acquired_userdata = userdata;
}

Bus *bus_free(Bus *b)
{
        if (!b)
                return NULL;
        while (b->pending) {
                PendingStop *p = b->pending;
                b->pending = p->next;
                (void)sd_bus_reply_method_errorf(p->call, SD_BUS_ERROR_FAILED,
                                                 "pomed is shutting down; the pods of %s are "
                                                 "killed on its way out.",
                                                 p->id);
                sd_bus_message_unref(p->call);
                free(p);
        }
        if (b->bus) {
                (void)sd_bus_detach_event(b->bus);
                b->bus = sd_bus_flush_close_unref(b->bus);
        }
        sd_event_source_disable_unref(b->retry);
        for (size_t i = 0; i < b->n_shadows; i++) {
                free(b->shadows[i].id);
                free(b->shadows[i].plan_tier);
        }
        free(b->shadows);
        free(b->spec);
        free(b->description);
        sd_event_unref(b->event);
        free(b);
        return NULL;
}
