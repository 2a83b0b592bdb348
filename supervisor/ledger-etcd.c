/* SPDX-License-Identifier: MIT */
/*
 * The etcd ledger (ledger.h): a fleet's slots, one key each, admitted by etcd transactions.
 *
 * Keys (P = fleet.etcd.prefix, "/pome" by default):
 *   P/slots/<team>/<sid>  {"node","sid","team","created_at"}, on this node's lease
 *   P/nodes/<node>        {"node","lease","advertise_url","hostname","machine_id","boot_id",
 *                          "pid","started_at"}, on the same lease ("lease" in hex, as etcdctl
 *                          prints it)
 *   P/guard/<team>        changed by every admission (value: the sid admitted last)
 *   P/teams/<team>        a pomed.conf `teams:` item as JSON; the id is the key's last part
 *
 * Admission (take, and the re-admission of held slots after a lost lease):
 *   1. one txn, no compares, three ranges in success: the guard key, a count_only range over
 *      P/slots/<team>/, and sid's own key. etcd runs a txn at one revision, so the guard's
 *      mod_revision G (0 when absent) and the count C describe the same state.
 *   2. C (not counting sid's own key, which only a re-admission can find) >= quota: -EDQUOT.
 *   3. txn compare guard mod_revision == G, success: put the slot key on the lease and put
 *      the guard. Compare failed: another admission committed since step 1 → back to 1, as
 *      long as fleet.timeout allows (each such round is a retry in the metrics).
 * Why it is safe: every admission changes the guard, so two admissions that read the same G
 * cannot both commit; between the read and a commit nothing else can raise the count
 * (expiries, releases, leaves only delete), so the count after a commit is at most C + 1 <=
 * quota. A put whose lease is gone fails the whole txn ("requested lease not found"): no slot
 * is admitted without a live lease. A commit whose answer never came (a timeout, a member that
 * went away) may have been applied: its key is deleted by the thread, and a retried commit
 * that finds sid's own key in step 1 counts as admitted. Measured (etcd 3.4.23, one member,
 * its WAL on ext4, 2 vCPUs): 200 creates in a row, 2.3 ms median, 3.7 ms p90, 6 ms p99 per
 * admission (an ASan build, a quiet host); 3.1-3.9 ms median, 10-11 ms p90, 33-34 ms p99 (a
 * release build, the host busy with another fleet's benchmark). 120 creates at once over 3
 * nodes into one team of quota 90: 8-10 ms median, 50-75 ms p99, 69-71 lost commits
 * (retries) for the 120, exactly 90 admitted.
 *
 * Threads. The loop (every ledger.h call and hook) does the join, take and leave itself, each
 * bounded by fleet.timeout; everything else runs on one background thread: the lease's
 * keepalive every TTL/3, the watch of P/ (teams and slots; reconnected from the last revision
 * + 1, on the next endpoint when one fails; read again whole after a compaction), the deletes
 * of released slots, and after a lost lease a new lease, the membership again and the
 * re-admission of every held slot. It hands the loop a snapshot under a mutex (teams as raw
 * JSON, slot counts per team with the revision they describe, log lines, lost sids) and wakes
 * it through an eventfd; the loop applies it (teams_set_used, hooks). Only the loop logs and
 * touches a Team. The held set (sid → team, the lease generation its key was put under) and
 * the teams' quotas are shared under the same mutex: a slot whose generation is not the lease's
 * current one is re-admitted by the thread, whichever raced whom.
 *
 * etcd's v3 HTTP/JSON gateway (grpc-gateway), as etcd 3.4.23 answers it (measured): POST only;
 * keys and values base64 (standard, padded); int64 fields are JSON strings; fields at their
 * zero value are left out (a failed txn has no "succeeded", an empty range no "kvs" and no
 * "count", an expired lease's keepalive no "TTL"); txn ops are {"request_range": …} /
 * {"request_put": …} and their answers {"response_range": …} / {"response_put": …}; streaming
 * calls (/v3/lease/keepalive, /v3/watch) answer newline-separated {"result": …} objects, a
 * watch event without "type" is a PUT; errors are {"error", "message", "code": <gRPC code>}
 * with an HTTP status to match (a lost lease: 404, code 5, "etcdserver: requested lease not
 * found"; a compacted revision: code 11); /v3/lease/revoke and /v3/kv/lease/revoke both
 * revoke. The header Grpc-Metadata-hasleader: true (clientv3's WithRequireLeader) makes a
 * member without a leader answer "etcdserver: no leader" (code 14) at once instead of timing
 * out, and cancel its watches. etcd keeps leases across its own restart (a new leader extends
 * every lease), so slots survive an etcd outage; only etcd saying a lease is gone makes it
 * lost here. Under --client-cert-auth the gateway dials etcd's own gRPC port with the server
 * certificate, which must then allow clientAuth too, or every call is "connection closed".
 * libcurl stays inside this file (common/httpclient.h is the other user).
 */
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/hashmap.h"
#include "common/json-util.h"
#include "common/strv.h"
#include "common/timeutil.h"
#include "common/token.h"
#include "common/util.h"
#include "pods/twin/kind.h"
#include "supervisor/ledger-impl.h"
#include "supervisor/log.h"

/* etcd answers larger than this are refused (a full read of P/ with every team's keys). */
#define ETCD_BODY_MAX (64u * 1024u * 1024u)
/* Admission times kept for the summary's quantiles. */
#define TXN_SAMPLES 1024u
/* The watch is opened again after a failure this long later at first, doubling to the max. */
#define WATCH_RETRY_MIN_USEC (200 * USEC_PER_MSEC)
#define WATCH_RETRY_MAX_USEC (2 * USEC_PER_SEC)

/* ---- base64 and JSON helpers ---- */

static json_t *json_b64(const char *s)
{
        _cleanup_free_ char *e = twin_base64(s, strlen(s));
        return e ? json_string(e) : NULL;
}

/* A base64 member of o decoded (NUL-terminated; "" when absent), or NULL on bad input/OOM. */
static char *json_get_b64(const json_t *o, const char *key)
{
        const char *s = json_get_str(o, key);
        char *out = NULL;
        size_t n;
        if (!s)
                return strdup("");
        if (token_base64_decode(s, strlen(s), &out, &n) < 0)
                return NULL;
        return out;
}

/* An int64 member the gateway writes as a string (or a number); 0 when absent. */
static int64_t json_get_i64(const json_t *o, const char *key)
{
        json_t *v = json_object_get(o, key);
        if (json_is_integer(v))
                return json_integer_value(v);
        if (json_is_string(v))
                return strtoll(json_string_value(v), NULL, 10);
        return 0;
}

static json_t *json_i64_string(int64_t v)
{
        char s[32];
        snprintf(s, sizeof(s), "%" PRId64, v);
        return json_string(s);
}

/* The end of the range of every key that starts with prefix (etcd's "prefix end"). */
static char *prefix_end(const char *prefix)
{
        char *e = strdup(prefix);
        if (!e)
                return NULL;
        for (size_t n = strlen(e); n > 0; n--) {
                if ((unsigned char)e[n - 1] < 0xff) {
                        e[n - 1]++;
                        e[n] = 0;
                        return e;
                }
        }
        e[0] = 0; /* all 0xff: to the end of the keyspace ("\0") */
        return e;
}

/* {"key": b64(key), "range_end"?: b64(prefix_end(key)) } with more members from extra. */
static json_t *range_op(const char *key, bool prefix, const char *extra_key, json_t *extra_val)
{
        _cleanup_json_ json_t *r = json_object();
        _cleanup_free_ char *end = prefix ? prefix_end(key) : NULL;
        if (!r || (prefix && !end) || json_object_set_new(r, "key", json_b64(key)) < 0 ||
            (prefix && json_object_set_new(r, "range_end", json_b64(end)) < 0) ||
            (extra_key && json_object_set_new(r, extra_key, extra_val) < 0)) {
                return NULL;
        }
        return TAKE_PTR(r);
}

/* ---- one etcd connection: endpoints in order, each request bounded ---- */

typedef enum EtcdErrorKind {
        ETCD_OK,
        ETCD_UNREACHABLE, /* no endpoint answered */
        ETCD_NO_LEADER,   /* answered, without a leader (quorum lost) or timed out inside */
        ETCD_PROTO,       /* answered, not as etcd does */
        ETCD_REFUSED,     /* etcd's own error: grpc code and message */
} EtcdErrorKind;

typedef struct EtcdError {
        EtcdErrorKind kind;
        int grpc_code;
        unsigned n_tried;    /* endpoints that failed this call */
        char first[256];     /* the first of them */
        char one_cause[256]; /* what it said */
        char cause[768];     /* "URL: what it said; URL: …", every one of them */
} EtcdError;

typedef struct Conn {
        const FleetConfig *fc;
        size_t n_endpoints;
        size_t at; /* the endpoint that answered last, tried first */
        CURL *curl;
        struct curl_slist *headers;
        char *buf;
        size_t len, cap;
        bool too_big;
        char errbuf[CURL_ERROR_SIZE];
} Conn;

static size_t conn_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
        Conn *c = userdata;
        size_t n = size * nmemb;
        if (n > ETCD_BODY_MAX - c->len) {
                c->too_big = true;
                return 0;
        }
        if (buf_reserve(&c->buf, &c->cap, c->len + n + 1, 4096) < 0)
                return 0;
        memcpy(c->buf + c->len, ptr, n);
        c->len += n;
        c->buf[c->len] = 0;
        return n;
}

/* Every fd close-on-exec (STYLE.md), libcurl's sockets included. */
static curl_socket_t open_cloexec(void *clientp _unused_, curlsocktype purpose _unused_,
                                  struct curl_sockaddr *a)
{
        return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

/* What every handle of the ledger does: TLS from fleet.etcd, no signals (threads), cloexec. */
static int easy_setup(CURL *h, const FleetConfig *fc)
{
        if (curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
            curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open_cloexec) != CURLE_OK ||
            curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L) != CURLE_OK ||
            curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
            (fc->cert && curl_easy_setopt(h, CURLOPT_SSLCERT, fc->cert) != CURLE_OK) ||
            (fc->key && curl_easy_setopt(h, CURLOPT_SSLKEY, fc->key) != CURLE_OK) ||
            (fc->ca && curl_easy_setopt(h, CURLOPT_CAINFO, fc->ca) != CURLE_OK))
                return -ENOMEM;
        return 0;
}

static int conn_init(Conn *c, const FleetConfig *fc)
{
        *c = (Conn){.fc = fc, .n_endpoints = strv_length(fc->endpoints)};
        c->curl = curl_easy_init();
        if (!c->curl || easy_setup(c->curl, fc) < 0)
                return -ENOMEM;
        /* no "Expect: 100-continue" wait on larger bodies; a member without a leader says so at
         * once (gRPC metadata hasleader, clientv3's WithRequireLeader) instead of letting the
         * request time out */
        static const char *const headers[] = {"Content-Type: application/json",
                                              "Expect:", "Grpc-Metadata-hasleader: true"};
        for (size_t i = 0; i < ELEMENTSOF(headers); i++) {
                struct curl_slist *h = curl_slist_append(c->headers, headers[i]);
                if (!h)
                        return -ENOMEM;
                c->headers = h;
        }
        if (curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, c->headers) != CURLE_OK ||
            curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, conn_write) != CURLE_OK ||
            curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, c) != CURLE_OK ||
            curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, c->errbuf) != CURLE_OK)
                return -ENOMEM;
        return 0;
}

static void conn_done(Conn *c)
{
        if (c->curl)
                curl_easy_cleanup(c->curl);
        curl_slist_free_all(c->headers);
        free(c->buf);
        *c = (Conn){0};
}

static void lowercase_first(char *s)
{
        if (s[0] >= 'A' && s[0] <= 'Z' && !(s[1] >= 'A' && s[1] <= 'Z'))
                s[0] = (char)(s[0] - 'A' + 'a');
}

/* One POST to one endpoint. 0 with c->buf holding the answer, or a negative errno with cause. */
static int conn_perform(Conn *c, const char *endpoint, const char *path, const char *body,
                        uint64_t budget_usec, char *cause, size_t cause_len)
{
        _cleanup_free_ char *url = NULL;
        size_t el = strlen(endpoint);
        while (el > 0 && endpoint[el - 1] == '/')
                el--;
        if (asprintf(&url, "%.*s%s", (int)el, endpoint, path) < 0)
                return -ENOMEM;
        long ms = (long)((budget_usec + USEC_PER_MSEC - 1) / USEC_PER_MSEC);
        c->len = 0;
        c->too_big = false;
        c->errbuf[0] = 0;
        if (c->buf)
                c->buf[0] = 0;
        if (curl_easy_setopt(c->curl, CURLOPT_URL, url) != CURLE_OK ||
            curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body) != CURLE_OK ||
            curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE, (long)strlen(body)) != CURLE_OK ||
            curl_easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, ms) != CURLE_OK ||
            curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT_MS, ms) != CURLE_OK)
                return -ENOMEM;
        CURLcode cc = curl_easy_perform(c->curl);
        if (cc == CURLE_OK)
                return 0;
        long os_errno = 0;
        (void)curl_easy_getinfo(c->curl, CURLINFO_OS_ERRNO, &os_errno);
        if (cc == CURLE_COULDNT_CONNECT) {
                snprintf(cause, cause_len, "%s",
                         os_errno ? strerror((int)os_errno) : "cannot connect");
                lowercase_first(cause);
                return os_errno == ECONNREFUSED ? -ECONNREFUSED : -EHOSTUNREACH;
        }
        if (cc == CURLE_OPERATION_TIMEDOUT) {
                snprintf(cause, cause_len, "no answer within %ld ms", ms);
                return -ETIMEDOUT;
        }
        if (cc == CURLE_COULDNT_RESOLVE_HOST) {
                snprintf(cause, cause_len, "its host name does not resolve");
                return -EHOSTUNREACH;
        }
        if (cc == CURLE_WRITE_ERROR && c->too_big) {
                snprintf(cause, cause_len, "an answer larger than %u bytes", ETCD_BODY_MAX);
                return -EPROTO;
        }
        if (cc == CURLE_WRITE_ERROR || cc == CURLE_OUT_OF_MEMORY)
                return -ENOMEM;
        /* what an operator can change for the TLS failures libcurl words obscurely (a server
         * that wants a client certificate closes the connection after the handshake) */
        const char *hint = "";
        if (cc == CURLE_PEER_FAILED_VERIFICATION)
                hint = " (fleet.etcd.ca: the CA that signed etcd's certificate)";
        else if (startswith(endpoint, "https://") && !c->fc->cert &&
                 (cc == CURLE_SSL_CONNECT_ERROR || cc == CURLE_RECV_ERROR ||
                  cc == CURLE_SEND_ERROR || cc == CURLE_GOT_NOTHING))
                hint = " (does etcd ask for a client certificate? fleet.etcd.cert and key)";
        snprintf(cause, cause_len, "%s%s", c->errbuf[0] ? c->errbuf : curl_easy_strerror(cc), hint);
        lowercase_first(cause);
        return -EHOSTUNREACH;
}

static void err_add(EtcdError *err, const char *endpoint, const char *cause)
{
        size_t cl = strlen(err->cause);
        if (err->n_tried++ == 0) {
                snprintf(err->first, sizeof(err->first), "%s", endpoint);
                snprintf(err->one_cause, sizeof(err->one_cause), "%s", cause);
        }
        snprintf(err->cause + cl, sizeof(err->cause) - cl, "%s%s: %s", cl ? "; " : "", endpoint,
                 cause);
}

/* Whether etcd's own error says "try another member" rather than "no". */
static bool etcd_error_retriable(int code, const char *msg, bool *no_leader)
{
        *no_leader = strstr(msg, "no leader") || strstr(msg, "leader changed");
        return *no_leader || code == 14 /* Unavailable */ || code == 4 /* DeadlineExceeded */ ||
               strstr(msg, "request timed out") || strstr(msg, "too many requests");
}

/*
 * POSTs req (borrowed) to path on the endpoints, starting with the one that answered last and
 * moving on while one fails (out of reach, no leader, an answer that is not etcd's), until
 * deadline (CLOCK_MONOTONIC µs; each try bounded by fleet.timeout too). Returns 0 with the
 * answer in *ret (new reference), or: -ENOENT (etcd: not found, e.g. the lease), -ERANGE (etcd:
 * compacted), -EIO (another refusal of etcd's), -ECONNREFUSED, -ETIMEDOUT, -EHOSTUNREACH (no
 * endpoint answered; no leader), -EPROTO, -ENOMEM; err says which endpoints said what.
 */
static int etcd_call(Conn *c, const char *path, const json_t *req, uint64_t deadline, json_t **ret,
                     EtcdError *err)
{
        *err = (EtcdError){0};
        _cleanup_free_ char *body = json_dumps(req, JSON_COMPACT);
        if (!body)
                return -ENOMEM;
        int last = -EHOSTUNREACH;
        bool all_refused = true, all_timeout = true;
        for (size_t i = 0; i < c->n_endpoints; i++) {
                size_t idx = (c->at + i) % c->n_endpoints;
                const char *ep = c->fc->endpoints[idx];
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                if (i > 0 && now + USEC_PER_MSEC >= deadline)
                        break;
                uint64_t budget = deadline > now ? deadline - now : USEC_PER_MSEC;
                if (budget > c->fc->timeout_usec)
                        budget = c->fc->timeout_usec;
                char cause[384] = "";
                int r = conn_perform(c, ep, path, body, budget, cause, sizeof(cause));
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        all_refused = all_refused && r == -ECONNREFUSED;
                        all_timeout = all_timeout && r == -ETIMEDOUT;
                        if (err->kind != ETCD_NO_LEADER)
                                err->kind = ETCD_UNREACHABLE;
                        err_add(err, ep, cause);
                        last = r;
                        continue;
                }
                all_refused = all_timeout = false;
                long status = 0;
                (void)curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
                json_error_t je;
                _cleanup_json_ json_t *j = json_loadb(c->buf, c->len, 0, &je);
                if (!json_is_object(j)) {
                        snprintf(cause, sizeof(cause), "HTTP %ld, not etcd's JSON: %.80s", status,
                                 c->buf ? c->buf : "");
                        if (err->kind != ETCD_NO_LEADER)
                                err->kind = ETCD_PROTO;
                        err_add(err, ep, cause);
                        last = -EPROTO;
                        continue;
                }
                /* a streaming call's one answer comes as {"result": …} */
                json_t *res = json_object_get(j, "result");
                json_t *e = json_object_get(j, "error");
                if (!e && res)
                        e = json_object_get(res, "error");
                if (e) {
                        const char *msg = json_get_str(j, "message");
                        if (!msg)
                                msg = json_is_string(e) ? json_string_value(e)
                                                        : json_get_str(e, "message");
                        msg = msg ? msg : "(no message)";
                        int code = (int)json_integer_value(json_object_get(j, "code"));
                        bool no_leader;
                        err->grpc_code = code;
                        if (etcd_error_retriable(code, msg, &no_leader)) {
                                /* a member without a leader says the most: it sticks */
                                if (err->kind != ETCD_NO_LEADER)
                                        err->kind = no_leader ? ETCD_NO_LEADER : ETCD_UNREACHABLE;
                                err_add(err, ep, msg);
                                last = -EHOSTUNREACH;
                                continue;
                        }
                        c->at = idx;
                        *err = (EtcdError){.kind = ETCD_REFUSED, .grpc_code = code};
                        err_add(err, ep, msg);
                        return code == 5 ? -ENOENT : code == 11 ? -ERANGE : -EIO;
                }
                if (status != 200) {
                        snprintf(cause, sizeof(cause), "HTTP %ld: %.80s", status, c->buf);
                        if (err->kind != ETCD_NO_LEADER)
                                err->kind = ETCD_PROTO;
                        err_add(err, ep, cause);
                        last = -EPROTO;
                        continue;
                }
                c->at = idx;
                *err = (EtcdError){0};
                *ret = res ? json_incref(res) : TAKE_PTR(j);
                return 0;
        }
        if (err->kind == ETCD_UNREACHABLE && all_refused)
                return -ECONNREFUSED;
        if (err->kind == ETCD_UNREACHABLE && all_timeout)
                return -ETIMEDOUT;
        return last == -EPROTO ? -EPROTO : -EHOSTUNREACH;
}

/* A sentence for an operator; since_usec: how long it has been so (0: leave it out). */
static void etcd_error_text(const EtcdError *err, uint64_t since_usec, char *buf, size_t len)
{
        char since[48] = "", where[320];
        if (since_usec)
                snprintf(since, sizeof(since), " since %" PRIu64 " s", since_usec / USEC_PER_SEC);
        bool one = err->n_tried <= 1;
        if (one)
                snprintf(where, sizeof(where), "etcd at %s", err->first);
        else
                snprintf(where, sizeof(where), "etcd (%u endpoints tried)", err->n_tried);
        const char *cause = one ? err->one_cause : err->cause;
        switch (err->kind) {
        case ETCD_NO_LEADER:
                snprintf(buf, len, "etcd has no leader (quorum lost)%s: %s", since, err->cause);
                break;
        case ETCD_PROTO:
                snprintf(buf, len, "%s answers, but not as etcd does%s: %s", where, since, cause);
                break;
        case ETCD_REFUSED:
                if (err->n_tried == 0)
                        snprintf(buf, len, "%s", err->one_cause);
                else
                        snprintf(buf, len, "%s refused: %s", where, cause);
                break;
        case ETCD_UNREACHABLE:
        case ETCD_OK:
        default:
                snprintf(buf, len, "%s is out of reach%s: %s", where, since, cause);
                break;
        }
}

/* ---- the ledger ---- */

typedef enum LeaseState {
        LEASE_LIVE,
        LEASE_LOST,        /* etcd said it is gone: a new one when etcd answers */
        LEASE_READMITTING, /* a new one; the held slots are being admitted again */
} LeaseState;

typedef enum Refusal {
        REFUSED_QUOTA,
        REFUSED_UNREACHABLE,
        REFUSED_NO_LEADER,
        REFUSED_LEASE_LOST,
        REFUSED_CONTENDED,
        _REFUSED_MAX,
} Refusal;

static const char *const refusal_names[_REFUSED_MAX] = {
        [REFUSED_QUOTA] = "quota",         [REFUSED_UNREACHABLE] = "unreachable",
        [REFUSED_NO_LEADER] = "no_leader", [REFUSED_LEASE_LOST] = "lease_lost",
        [REFUSED_CONTENDED] = "contended",
};

typedef struct Held {
        char *sid;
        char *team;
        unsigned gen; /* the lease generation its key was put under */
        struct Held *prev, *next;
} Held;

typedef struct Delete {
        char *key;
        unsigned gen;
} Delete;

typedef struct LogLine {
        int level;
        char *text;
} LogLine;

typedef struct EtcdLedger {
        Ledger base;
        FleetConfig fc; /* a copy; endpoints and strings owned */
        Teams *teams;
        sd_event *event;
        LedgerHooks hooks;
        void *userdata;
        char *slots_prefix; /* P/slots/ */
        char *teams_prefix; /* P/teams/ */
        char *guard_prefix; /* P/guard/ */
        char *node_key;     /* P/nodes/<node> */
        char *watch_prefix; /* P/ */
        char hostname[256], machine_id[64], boot_id[64];
        int64_t started_at;
        unsigned ttl_sec;
        bool curl_inited;

        /* the loop's */
        Conn conn;
        int efd;
        sd_event_source *wake_source;
        json_t *teams_applied; /* id → raw value, as last applied */
        json_t *counts;        /* team → slots, fleet-wide, as of counts_rev */
        int64_t counts_rev;
        bool left;
        uint64_t txn_samples[TXN_SAMPLES]; /* µs */
        uint64_t n_txn, txn_usec_sum, txn_retries;
        uint64_t refused[_REFUSED_MAX];

        /* the thread's (set up by the loop before the thread starts) */
        pthread_t thread;
        bool thread_started;
        int tfd; /* wakes the thread */
        Conn bg;
        CURLM *multi;
        CURL *watch;
        char *watch_body;
        size_t watch_at; /* the endpoint the watch is open on */
        char *wbuf;
        size_t wlen, wcap;
        bool watch_created, watch_reread, watch_broken;
        char reread_why[160];
        unsigned watch_failures;
        uint64_t watch_retry_at;
        json_t *w_teams;  /* id → raw value */
        json_t *w_slots;  /* key below P/slots/ → true */
        json_t *w_counts; /* team → count */
        int64_t w_rev;
        /* compaction (bg_compact): when next, and the revision it compacts to then */
        uint64_t compact_at;
        int64_t compact_rev;
        uint64_t compactions;               /* atomic: the thread counts, /metrics reads */
        bool w_teams_dirty, w_counts_dirty; /* changed since handed to the loop */
        uint64_t next_keepalive;

        /* shared, under mu */
        pthread_mutex_t mu;
        bool stop;
        bool poke; /* the thread renews (or replaces) the lease now */
        bool reachable;
        uint64_t unreachable_since;
        EtcdError unreach;
        LeaseState lease_state;
        int64_t lease;
        unsigned gen;
        uint64_t renewed_at;
        Hashmap *held;  /* sid → Held */
        json_t *quotas; /* team → quota, as the loop last saw it: a re-admission's limit */
        Held *held_list;
        Delete *deletes;
        size_t n_deletes, cap_deletes;
        json_t *out_teams, *out_counts;
        int64_t out_counts_rev;
        LogLine *logs;
        size_t n_logs;
        char **lost_sids, **lost_teams;
} EtcdLedger;

static void wake_loop(EtcdLedger *l)
{
        uint64_t one = 1;
        (void)!write(l->efd, &one, sizeof(one));
}

static void wake_thread(EtcdLedger *l)
{
        uint64_t one = 1;
        (void)!write(l->tfd, &one, sizeof(one));
}

/* Queues a line for the loop to log (under mu). */
static void _printf_(3, 4) post_log_locked(EtcdLedger *l, int level, const char *fmt, ...)
{
        LogLine *n = realloc(l->logs, (l->n_logs + 1) * sizeof(*n));
        if (!n)
                return;
        l->logs = n;
        va_list ap;
        va_start(ap, fmt);
        if (vasprintf(&l->logs[l->n_logs].text, fmt, ap) >= 0)
                l->logs[l->n_logs++].level = level;
        va_end(ap);
}

/* Records what a call said about etcd's reach (under mu); logs transitions. */
static void note_reach_locked(EtcdLedger *l, const EtcdError *err)
{
        bool ok = !err || err->kind == ETCD_OK || err->kind == ETCD_REFUSED;
        if (ok && !l->reachable) {
                post_log_locked(l, LOG_INFO, "etcd answers again (out of reach for %" PRIu64 " s)",
                                (now_usec(CLOCK_MONOTONIC) - l->unreachable_since) / USEC_PER_SEC);
                l->reachable = true;
        } else if (!ok) {
                if (l->reachable) {
                        char text[1024];
                        etcd_error_text(err, 0, text, sizeof(text));
                        post_log_locked(l, LOG_WARNING,
                                        "%s: new sandboxes are refused until it answers; open "
                                        "ones keep serving",
                                        text);
                        l->reachable = false;
                        l->unreachable_since = now_usec(CLOCK_MONOTONIC);
                }
                l->unreach = *err;
        }
}

static void note_reach(EtcdLedger *l, const EtcdError *err)
{
        pthread_mutex_lock(&l->mu);
        note_reach_locked(l, err);
        pthread_mutex_unlock(&l->mu);
        wake_loop(l);
}

static char *slot_key(const EtcdLedger *l, const char *team, const char *sid)
{
        char *k;
        return asprintf(&k, "%s%s/%s", l->slots_prefix, team, sid) < 0 ? NULL : k;
}

static uint64_t ttl_third_usec(const EtcdLedger *l)
{
        return l->ttl_sec * USEC_PER_SEC / 3;
}

/* ---- admission ---- */

typedef struct Admission {
        unsigned count;   /* the team's slots, sid's not counted, at rev */
        int64_t rev;      /* of the commit (0), or of the read (-EDQUOT) */
        unsigned retries; /* commits lost to other admissions */
        bool sent;        /* a commit went out whose outcome is unknown (transport error) */
} Admission;

/*
 * The admission of the file's header for sid of team (quota slots) on lease, on conn c, until
 * deadline. 0 (admitted, or sid's key was there already), -EDQUOT, -ENOENT (the lease is
 * gone), -EBUSY (other admissions kept winning until the deadline), etcd_call's errors.
 */
static int admit(EtcdLedger *l, Conn *c, const char *team, const char *sid, unsigned quota,
                 int64_t lease, uint64_t deadline, Admission *ret, EtcdError *err)
{
        _cleanup_free_ char *key = slot_key(l, team, sid), *guard = NULL, *team_slots = NULL;
        if (!key || asprintf(&guard, "%s%s", l->guard_prefix, team) < 0 ||
            asprintf(&team_slots, "%s%s/", l->slots_prefix, team) < 0)
                return -ENOMEM;
        _cleanup_json_ json_t *read =
                json_pack("{s:[{s:o}, {s:o}, {s:o}]}", "success", "request_range",
                          range_op(guard, false, NULL, NULL), "request_range",
                          range_op(team_slots, true, "count_only", json_true()), "request_range",
                          range_op(key, false, "count_only", json_true()));
        char created[RFC3339_MAX];
        format_rfc3339(now_sec(), created, sizeof(created));
        _cleanup_json_ json_t *v = json_pack("{s:s, s:s, s:s, s:s}", "node", l->fc.node, "sid", sid,
                                             "team", team, "created_at", created);
        _cleanup_free_ char *vs = v ? json_dumps(v, JSON_COMPACT) : NULL;
        if (!read || !vs)
                return -ENOMEM;
        *ret = (Admission){0};
        for (;;) {
                _cleanup_json_ json_t *a = NULL, *b = NULL;
                int r = etcd_call(c, "/v3/kv/txn", read, deadline, &a, err);
                if (r < 0)
                        return r;
                json_t *rs = json_object_get(a, "responses");
                json_t *g = json_object_get(json_array_get(rs, 0), "response_range");
                json_t *n = json_object_get(json_array_get(rs, 1), "response_range");
                json_t *own = json_object_get(json_array_get(rs, 2), "response_range");
                if (!g || !n || !own) {
                        *err = (EtcdError){.kind = ETCD_PROTO};
                        err_add(err, c->fc->endpoints[c->at], "a txn answer without its ranges");
                        return -EPROTO;
                }
                int64_t grev =
                        json_get_i64(json_array_get(json_object_get(g, "kvs"), 0), "mod_revision");
                int64_t count = json_get_i64(n, "count");
                if (json_get_i64(own, "count") > 0)
                        return 0; /* re-admission of a key that is there: nothing to do */
                ret->count = count > 0 ? (unsigned)count : 0;
                ret->rev = json_get_i64(json_object_get(a, "header"), "revision");
                if (ret->count >= quota)
                        return -EDQUOT;
                _cleanup_json_ json_t *commit = json_pack(
                        "{s:[{s:o, s:s, s:s, s:o}], s:[{s:{s:o, s:o, s:o}}, {s:{s:o, s:o}}]}",
                        "compare", "key", json_b64(guard), "target", "MOD", "result", "EQUAL",
                        "mod_revision", json_i64_string(grev), "success", "request_put", "key",
                        json_b64(key), "value", json_b64(vs), "lease", json_i64_string(lease),
                        "request_put", "key", json_b64(guard), "value", json_b64(sid));
                if (!commit)
                        return -ENOMEM;
                r = etcd_call(c, "/v3/kv/txn", commit, deadline, &b, err);
                if (r < 0) {
                        ret->sent = r != -ENOENT && r != -ENOMEM;
                        return r;
                }
                if (json_is_true(json_object_get(b, "succeeded"))) {
                        ret->rev = json_get_i64(json_object_get(b, "header"), "revision");
                        return 0;
                }
                ret->retries++;
                if (now_usec(CLOCK_MONOTONIC) >= deadline) {
                        *err = (EtcdError){.kind = ETCD_REFUSED};
                        snprintf(err->one_cause, sizeof(err->one_cause),
                                 "other nodes' admissions to team %s won %u times in a row "
                                 "within fleet.timeout",
                                 team, ret->retries);
                        return -EBUSY;
                }
        }
}

/* ---- the thread: the watch's state ---- */

static void w_count(EtcdLedger *l, const char *team, int delta)
{
        int64_t n = json_integer_value(json_object_get(l->w_counts, team)) + delta;
        if (n <= 0)
                (void)json_object_del(l->w_counts, team);
        else
                (void)json_object_set_new(l->w_counts, team, json_integer(n));
}

/* One key of P/ put (value given) or deleted (value NULL). */
static void w_apply(EtcdLedger *l, const char *key, const char *value)
{
        const char *rest;
        if ((rest = startswith(key, l->teams_prefix)) && *rest && !strchr(rest, '/')) {
                /* a team's put that changes nothing (a rewrite, a re-read) is no change: the loop
                 * reloads every team when told, and writes each to the registry */
                json_t *old = json_object_get(l->w_teams, rest);
                if (value && (!old || !streq(json_string_value(old), value))) {
                        (void)json_object_set_new(l->w_teams, rest, json_string(value));
                        l->w_teams_dirty = true;
                } else if (!value && old) {
                        (void)json_object_del(l->w_teams, rest);
                        l->w_teams_dirty = true;
                }
        } else if ((rest = startswith(key, l->slots_prefix))) {
                const char *slash = strchr(rest, '/');
                if (!slash || slash == rest || !slash[1])
                        return;
                bool had = json_object_get(l->w_slots, rest);
                if (value && !had) {
                        (void)json_object_set_new(l->w_slots, rest, json_true());
                        char team[256];
                        snprintf(team, sizeof(team), "%.*s", (int)(slash - rest), rest);
                        w_count(l, team, +1);
                        l->w_counts_dirty = true;
                } else if (!value && had) {
                        (void)json_object_del(l->w_slots, rest);
                        char team[256];
                        snprintf(team, sizeof(team), "%.*s", (int)(slash - rest), rest);
                        w_count(l, team, -1);
                        l->w_counts_dirty = true;
                }
        }
}

/*
 * Reads teams and slots whole, at one revision (one txn), into the watch's state. On the loop
 * at the join (conn: the loop's), on the thread after a compaction. 0 or etcd_call's errors.
 */
static int w_read_all(EtcdLedger *l, Conn *c, EtcdError *err)
{
        _cleanup_json_ json_t *req =
                json_pack("{s:[{s:o}, {s:o}]}", "success", "request_range",
                          range_op(l->teams_prefix, true, NULL, NULL), "request_range",
                          range_op(l->slots_prefix, true, "keys_only", json_true()));
        _cleanup_json_ json_t *a = NULL;
        if (!req)
                return -ENOMEM;
        int r = etcd_call(c, "/v3/kv/txn", req, now_usec(CLOCK_MONOTONIC) + l->fc.timeout_usec, &a,
                          err);
        if (r < 0)
                return r;
        json_t *rs = json_object_get(a, "responses");
        json_t *teams =
                json_object_get(json_object_get(json_array_get(rs, 0), "response_range"), "kvs");
        json_t *slots =
                json_object_get(json_object_get(json_array_get(rs, 1), "response_range"), "kvs");
        json_object_clear(l->w_teams);
        json_object_clear(l->w_slots);
        json_object_clear(l->w_counts);
        l->w_rev = json_get_i64(json_object_get(a, "header"), "revision");
        l->w_teams_dirty = l->w_counts_dirty = true;
        size_t i;
        json_t *kv;
        json_array_foreach (teams, i, kv) {
                _cleanup_free_ char *k = json_get_b64(kv, "key"), *v = json_get_b64(kv, "value");
                if (k && v)
                        w_apply(l, k, v);
        }
        json_array_foreach (slots, i, kv) {
                _cleanup_free_ char *k = json_get_b64(kv, "key");
                if (k)
                        w_apply(l, k, "");
        }
        return 0;
}

/* Hands the watch's state to the loop (when it changed). */
static void w_publish(EtcdLedger *l)
{
        if (!l->w_teams_dirty && !l->w_counts_dirty)
                return;
        json_t *t = l->w_teams_dirty ? json_deep_copy(l->w_teams) : NULL;
        json_t *c = l->w_counts_dirty ? json_deep_copy(l->w_counts) : NULL;
        if ((l->w_teams_dirty && !t) || (l->w_counts_dirty && !c)) {
                json_decref(t);
                json_decref(c);
                return; /* tried again after the next change */
        }
        pthread_mutex_lock(&l->mu);
        if (t) {
                json_decref(l->out_teams);
                l->out_teams = t;
        }
        if (c) {
                json_decref(l->out_counts);
                l->out_counts = c;
                l->out_counts_rev = l->w_rev;
        }
        pthread_mutex_unlock(&l->mu);
        l->w_teams_dirty = l->w_counts_dirty = false;
        wake_loop(l);
}

/* One line of the watch's stream. Returns false when the watch must be opened anew. */
static bool w_line(EtcdLedger *l, const char *line, size_t len)
{
        json_error_t je;
        _cleanup_json_ json_t *j = json_loadb(line, len, 0, &je);
        json_t *res = json_object_get(j, "result");
        if (!res)
                return false; /* {"error": …} or garbage: open it again */
        if (json_get_i64(res, "compact_revision") > 0) {
                /* what we missed is compacted: read everything */
                l->watch_reread = true;
                snprintf(l->reread_why, sizeof(l->reread_why),
                         "etcd compacted its history up to revision %" PRId64
                         " and the watch needed it from %" PRId64,
                         json_get_i64(res, "compact_revision"), l->w_rev + 1);
                return false;
        }
        if (json_is_true(json_object_get(res, "canceled")))
                return false;
        if (json_is_true(json_object_get(res, "created"))) {
                l->watch_created = true;
                l->watch_failures = 0;
                /* etcd's revision went back: its data was replaced, what we know is not it */
                int64_t now_rev = json_get_i64(json_object_get(res, "header"), "revision");
                if (now_rev < l->w_rev) {
                        l->watch_reread = true;
                        snprintf(l->reread_why, sizeof(l->reread_why),
                                 "etcd is at revision %" PRId64 ", behind the %" PRId64
                                 " this node saw: its data was replaced",
                                 now_rev, l->w_rev);
                        return false;
                }
        }
        size_t i;
        json_t *ev;
        json_array_foreach (json_object_get(res, "events"), i, ev) {
                json_t *kv = json_object_get(ev, "kv");
                _cleanup_free_ char *k = json_get_b64(kv, "key"), *v = json_get_b64(kv, "value");
                if (!k || !v)
                        continue;
                bool del = streq_ptr(json_get_str(ev, "type"), "DELETE");
                w_apply(l, k, del ? NULL : v);
                int64_t rev = json_get_i64(kv, "mod_revision");
                if (rev > l->w_rev)
                        l->w_rev = rev;
        }
        return true;
}

static size_t watch_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
        EtcdLedger *l = userdata;
        size_t n = size * nmemb;
        if (n > ETCD_BODY_MAX - l->wlen ||
            buf_reserve(&l->wbuf, &l->wcap, l->wlen + n + 1, 4096) < 0)
                return 0;
        memcpy(l->wbuf + l->wlen, ptr, n);
        l->wlen += n;
        size_t start = 0;
        for (size_t i = l->wlen - n; i < l->wlen; i++) {
                if (l->wbuf[i] != '\n')
                        continue;
                if (i > start && !w_line(l, l->wbuf + start, i - start)) {
                        l->watch_broken = true;
                        return 0; /* libcurl ends the transfer */
                }
                start = i + 1;
        }
        memmove(l->wbuf, l->wbuf + start, l->wlen - start);
        l->wlen -= start;
        return n;
}

static void watch_stop(EtcdLedger *l)
{
        if (!l->watch)
                return;
        curl_multi_remove_handle(l->multi, l->watch);
        curl_easy_cleanup(l->watch);
        l->watch = NULL;
        free(l->watch_body);
        l->watch_body = NULL;
}

/* Opens the watch of P/ from the revision after the last one seen, on the thread's endpoint
 * (after reading everything again when a compaction or a replaced etcd asks for it). */
static int watch_start(EtcdLedger *l)
{
        EtcdError err;
        int r;
        if (l->watch_reread) {
                r = w_read_all(l, &l->bg, &err);
                if (r < 0) {
                        if (r != -ENOMEM)
                                note_reach(l, &err);
                        return r;
                }
                l->watch_reread = false;
                pthread_mutex_lock(&l->mu);
                post_log_locked(l, LOG_INFO,
                                "%s: teams and slots read again whole (%zu teams, %zu slots at "
                                "revision %" PRId64 ")",
                                l->reread_why, json_object_size(l->w_teams),
                                json_object_size(l->w_slots), l->w_rev);
                pthread_mutex_unlock(&l->mu);
                w_publish(l);
                wake_loop(l);
        }
        /* P/nodes/ up to the end of P/: nodes, slots and teams, not the guard keys (P/guard/
         * sorts before), whose put at every admission every node would read and drop — a
         * third of the watch's events (bench/fleet.sh) */
        _cleanup_free_ char *from = NULL;
        if (asprintf(&from, "%snodes/", l->watch_prefix) < 0) {
                from = NULL;
                return -ENOMEM;
        }
        _cleanup_json_ json_t *req = json_pack(
                "{s:o}", "create_request",
                range_op(l->watch_prefix, true, "start_revision", json_i64_string(l->w_rev + 1)));
        if (!req ||
            json_object_set_new(json_object_get(req, "create_request"), "key", json_b64(from)) < 0)
                return -ENOMEM;
        _cleanup_free_ char *url = NULL;
        const char *ep = l->fc.endpoints[l->bg.at];
        size_t el = strlen(ep);
        while (el > 0 && ep[el - 1] == '/')
                el--;
        if (!req || !(l->watch_body = json_dumps(req, JSON_COMPACT)) ||
            asprintf(&url, "%.*s/v3/watch", (int)el, ep) < 0)
                return -ENOMEM;
        l->watch = curl_easy_init();
        long ms = (long)(l->fc.timeout_usec / USEC_PER_MSEC);
        if (!l->watch || easy_setup(l->watch, &l->fc) < 0 ||
            curl_easy_setopt(l->watch, CURLOPT_URL, url) != CURLE_OK ||
            curl_easy_setopt(l->watch, CURLOPT_POSTFIELDS, l->watch_body) != CURLE_OK ||
            curl_easy_setopt(l->watch, CURLOPT_HTTPHEADER, l->bg.headers) != CURLE_OK ||
            curl_easy_setopt(l->watch, CURLOPT_WRITEFUNCTION, watch_write) != CURLE_OK ||
            curl_easy_setopt(l->watch, CURLOPT_WRITEDATA, l) != CURLE_OK ||
            curl_easy_setopt(l->watch, CURLOPT_CONNECTTIMEOUT_MS, ms > 0 ? ms : 1L) != CURLE_OK ||
            curl_multi_add_handle(l->multi, l->watch) != CURLM_OK) {
                if (l->watch)
                        curl_easy_cleanup(l->watch);
                l->watch = NULL;
                return -ENOMEM;
        }
        l->watch_at = l->bg.at;
        l->wlen = 0;
        l->watch_created = l->watch_broken = false;
        return 0;
}

/* The watch's transfer ended: on the next endpoint, unless we ended it to read anew. */
static void watch_ended(EtcdLedger *l)
{
        bool ours = l->watch_broken;
        watch_stop(l);
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        if (ours && l->watch_created) {
                l->watch_retry_at = now;
                return;
        }
        if (l->bg.at == l->watch_at && l->bg.n_endpoints > 1)
                l->bg.at = (l->bg.at + 1) % l->bg.n_endpoints;
        uint64_t d = WATCH_RETRY_MIN_USEC << (l->watch_failures < 4 ? l->watch_failures : 4);
        l->watch_retry_at = now + (d < WATCH_RETRY_MAX_USEC ? d : WATCH_RETRY_MAX_USEC);
        l->watch_failures++;
}

/* ---- the thread: the lease ---- */

static char *membership_value(const EtcdLedger *l, int64_t lease)
{
        char hex[32], started[RFC3339_MAX];
        snprintf(hex, sizeof(hex), "%" PRIx64, (uint64_t)lease);
        format_rfc3339(l->started_at, started, sizeof(started));
        _cleanup_json_ json_t *v =
                json_pack("{s:s, s:s, s:s*, s:s, s:s, s:s, s:I, s:s}", "node", l->fc.node, "lease",
                          hex, "advertise_url", l->fc.advertise_url, "hostname", l->hostname,
                          "machine_id", l->machine_id, "boot_id", l->boot_id, "pid",
                          (json_int_t)getpid(), "started_at", started);
        return v ? json_dumps(v, JSON_COMPACT) : NULL;
}

/* Puts this node's membership on lease, if the key is absent (0), else -EADDRINUSE. */
static int put_membership(EtcdLedger *l, Conn *c, int64_t lease, bool only_if_absent,
                          EtcdError *err)
{
        _cleanup_free_ char *v = membership_value(l, lease);
        _cleanup_json_ json_t *put =
                v ? json_pack("{s:o, s:o, s:o}", "key", json_b64(l->node_key), "value", json_b64(v),
                              "lease", json_i64_string(lease))
                  : NULL;
        _cleanup_json_ json_t *req =
                put ? json_pack("{s:[{s:o, s:s, s:s, s:s}], s:[{s:O}]}", "compare", "key",
                                json_b64(l->node_key), "target", "MOD", "result", "EQUAL",
                                "mod_revision", "0", "success", "request_put", put)
                    : NULL;
        _cleanup_json_ json_t *a = NULL;
        if (!req)
                return -ENOMEM;
        if (!only_if_absent)
                (void)json_object_del(req, "compare");
        int r = etcd_call(c, "/v3/kv/txn", req, now_usec(CLOCK_MONOTONIC) + l->fc.timeout_usec, &a,
                          err);
        if (r < 0)
                return r;
        return json_is_true(json_object_get(a, "succeeded")) ? 0 : -EADDRINUSE;
}

static int grant(EtcdLedger *l, Conn *c, int64_t *ret, EtcdError *err)
{
        _cleanup_json_ json_t *req = json_pack("{s:o}", "TTL", json_i64_string(l->ttl_sec)),
                              *a = NULL;
        if (!req)
                return -ENOMEM;
        int r = etcd_call(c, "/v3/lease/grant", req, now_usec(CLOCK_MONOTONIC) + l->fc.timeout_usec,
                          &a, err);
        if (r < 0)
                return r;
        int64_t id = json_get_i64(a, "ID");
        if (id == 0 || json_get_i64(a, "TTL") <= 0) {
                *err = (EtcdError){.kind = ETCD_PROTO};
                err_add(err, c->fc->endpoints[c->at], "a lease grant without ID or TTL");
                return -EPROTO;
        }
        *ret = id;
        return 0;
}

static int lease_revoke(EtcdLedger *l, Conn *c, int64_t lease, EtcdError *err)
{
        _cleanup_json_ json_t *req = json_pack("{s:o}", "ID", json_i64_string(lease)), *a = NULL;
        if (!req)
                return -ENOMEM;
        int r = etcd_call(c, "/v3/lease/revoke", req,
                          now_usec(CLOCK_MONOTONIC) + l->fc.timeout_usec, &a, err);
        return r == -ENOENT ? 0 : r; /* gone already */
}

static size_t held_count_locked(const EtcdLedger *l)
{
        return l->held ? hashmap_size(l->held) : 0;
}

/* etcd said the lease is gone (a keepalive, a put): until a new one, nothing is admitted. */
static void lease_lost(EtcdLedger *l, int64_t lease, const char *how)
{
        pthread_mutex_lock(&l->mu);
        if (l->lease == lease && l->lease_state != LEASE_LOST) {
                l->lease_state = LEASE_LOST;
                post_log_locked(l, LOG_WARNING,
                                "this node's lease %" PRIx64 " expired (%s): its %zu slots are "
                                "gone from etcd; new sandboxes are refused until it has a new "
                                "lease and its open sandboxes' slots are admitted again",
                                (uint64_t)lease, how, held_count_locked(l));
                l->poke = true; /* a new lease now, not at the next renewal */
        }
        pthread_mutex_unlock(&l->mu);
        wake_loop(l);
        wake_thread(l);
}

static void bg_keepalive(EtcdLedger *l)
{
        pthread_mutex_lock(&l->mu);
        int64_t lease = l->lease;
        LeaseState st = l->lease_state;
        pthread_mutex_unlock(&l->mu);
        if (st == LEASE_LOST)
                return;
        _cleanup_json_ json_t *req = json_pack("{s:o}", "ID", json_i64_string(lease)), *a = NULL;
        EtcdError err;
        if (!req)
                return;
        int r = etcd_call(&l->bg, "/v3/lease/keepalive", req,
                          now_usec(CLOCK_MONOTONIC) + ttl_third_usec(l), &a, &err);
        if (r == -ENOENT || (r == 0 && json_get_i64(a, "TTL") <= 0)) {
                note_reach(l, NULL);
                lease_lost(l, lease, "etcd says so at its renewal");
        } else if (r == 0) {
                pthread_mutex_lock(&l->mu);
                l->renewed_at = now_usec(CLOCK_MONOTONIC);
                note_reach_locked(l, NULL);
                pthread_mutex_unlock(&l->mu);
        } else if (r != -ENOMEM)
                note_reach(l, &err);
}

/* A new lease and the membership on it; the held slots are then admitted again. */
static void bg_recover(EtcdLedger *l)
{
        EtcdError err;
        int64_t lease;
        int r = grant(l, &l->bg, &lease, &err);
        if (r == 0) {
                r = put_membership(l, &l->bg, lease, false, &err);
                if (r < 0) {
                        EtcdError e2;
                        (void)lease_revoke(l, &l->bg, lease, &e2);
                }
        }
        if (r < 0) {
                if (r != -ENOMEM)
                        note_reach(l, &err);
                return;
        }
        pthread_mutex_lock(&l->mu);
        note_reach_locked(l, NULL);
        l->lease = lease;
        l->gen++;
        l->lease_state = LEASE_READMITTING;
        l->renewed_at = now_usec(CLOCK_MONOTONIC);
        post_log_locked(l, LOG_INFO,
                        "this node has a new lease %" PRIx64 "; admitting its %zu open "
                        "sandboxes' slots again",
                        (uint64_t)lease, held_count_locked(l));
        pthread_mutex_unlock(&l->mu);
        l->next_keepalive = now_usec(CLOCK_MONOTONIC) + ttl_third_usec(l);
}

static int queue_delete_locked(EtcdLedger *l, const char *key, unsigned gen)
{
        if (l->n_deletes == l->cap_deletes) {
                size_t cap = l->cap_deletes ? l->cap_deletes * 2 : 16;
                Delete *d = realloc(l->deletes, cap * sizeof(*d));
                if (!d)
                        return -ENOMEM;
                l->deletes = d;
                l->cap_deletes = cap;
        }
        char *k = strdup(key);
        if (!k)
                return -ENOMEM;
        l->deletes[l->n_deletes++] = (Delete){.key = k, .gen = gen};
        return 0;
}

static Held *held_free(Held *h)
{
        if (h) {
                free(h->sid);
                free(h->team);
                free(h);
        }
        return NULL;
}

static Held *held_remove_locked(EtcdLedger *l, const char *sid)
{
        Held *h = hashmap_remove(l->held, sid);
        if (!h)
                return NULL;
        if (h->prev)
                h->prev->next = h->next;
        else
                l->held_list = h->next;
        if (h->next)
                h->next->prev = h->prev;
        h->prev = h->next = NULL;
        return h;
}

/*
 * Admits again every held slot whose key went with an older lease (after bg_recover, or a
 * take that raced the loss), one admission each: those the team has no room for any more are
 * handed to the loop as lost. Stops at the first failure to reach etcd (next time, then).
 */
static void bg_readmit(EtcdLedger *l)
{
        unsigned ok = 0, lost = 0;
        for (;;) {
                pthread_mutex_lock(&l->mu);
                Held *h = l->held_list;
                while (h && h->gen == l->gen)
                        h = h->next;
                if (l->lease_state == LEASE_LOST || !h) {
                        if (!h && l->lease_state == LEASE_READMITTING) {
                                l->lease_state = LEASE_LIVE;
                                post_log_locked(l, lost ? LOG_WARNING : LOG_INFO,
                                                "slots admitted again: %u; lost (their teams "
                                                "have no room now): %u",
                                                ok, lost);
                        } else if (ok || lost)
                                post_log_locked(l, lost ? LOG_WARNING : LOG_INFO,
                                                "slots admitted again: %u; lost: %u", ok, lost);
                        pthread_mutex_unlock(&l->mu);
                        if (ok || lost)
                                wake_loop(l);
                        return;
                }
                _cleanup_free_ char *sid = strdup(h->sid), *team = strdup(h->team);
                unsigned quota = (unsigned)json_integer_value(json_object_get(l->quotas, team)),
                         gen = l->gen;
                int64_t lease = l->lease;
                pthread_mutex_unlock(&l->mu);
                if (!sid || !team)
                        return;
                Admission a;
                EtcdError err;
                int r = admit(l, &l->bg, team, sid, quota, lease,
                              now_usec(CLOCK_MONOTONIC) + l->fc.timeout_usec, &a, &err);
                if (r == -ENOENT) {
                        lease_lost(l, lease, "etcd says so at a re-admission");
                        return;
                }
                pthread_mutex_lock(&l->mu);
                Held *cur = hashmap_get(l->held, sid);
                if (r == 0 && cur) {
                        cur->gen = gen;
                        ok++;
                } else if (r == 0) {
                        /* released meanwhile: its queued delete named the old lease, so this
                         * key would outlive the sandbox */
                        _cleanup_free_ char *key = slot_key(l, team, sid);
                        if (key)
                                (void)queue_delete_locked(l, key, gen);
                }
                if (r == -EDQUOT && cur && cur->gen != gen) {
                        held_remove_locked(l, sid);
                        held_free(cur);
                        /* lost_sids[i] and lost_teams[i] go together, or neither */
                        if (strv_extend(&l->lost_sids, sid) >= 0 &&
                            strv_extend(&l->lost_teams, team) < 0) {
                                size_t k = strv_length(l->lost_sids) - 1;
                                free(l->lost_sids[k]);
                                l->lost_sids[k] = NULL;
                        }
                        lost++;
                }
                if (r < 0 && r != -EDQUOT && r != -ENOMEM && r != -EBUSY)
                        note_reach_locked(l, &err);
                pthread_mutex_unlock(&l->mu);
                if (r < 0 && r != -EDQUOT) {
                        wake_loop(l);
                        return;
                }
        }
}

/* The deletes of released slots, in order; a failed one is tried again later, unless its
 * key went with an older lease meanwhile. */
static void bg_deletes(EtcdLedger *l)
{
        for (;;) {
                pthread_mutex_lock(&l->mu);
                if (l->n_deletes == 0) {
                        pthread_mutex_unlock(&l->mu);
                        return;
                }
                Delete d = l->deletes[0];
                bool stale = d.gen != l->gen;
                _cleanup_free_ char *key = stale ? NULL : strdup(d.key);
                pthread_mutex_unlock(&l->mu);
                if (!stale) {
                        if (!key)
                                return;
                        _cleanup_json_ json_t *req = json_pack("{s:o}", "key", json_b64(key)),
                                              *a = NULL;
                        EtcdError err;
                        if (!req)
                                return;
                        int r = etcd_call(&l->bg, "/v3/kv/deleterange", req,
                                          now_usec(CLOCK_MONOTONIC) + l->fc.timeout_usec, &a, &err);
                        if (r < 0) {
                                if (r != -ENOMEM)
                                        note_reach(l, &err);
                                return;
                        }
                }
                pthread_mutex_lock(&l->mu);
                free(l->deletes[0].key);
                memmove(l->deletes, l->deletes + 1, --l->n_deletes * sizeof(*l->deletes));
                pthread_mutex_unlock(&l->mu);
        }
}

/*
 * etcd keeps every revision of every key until it is compacted, and 3.4 compacts nothing by
 * default: each create leaves ~470 bytes of history (two puts, a delete), and at its 2 GiB
 * quota etcd takes no write at all (every create refused). So, as kube-apiserver does, every
 * fleet.compaction_interval the history is compacted to the revision this node's watch had
 * reached one interval before: no watch that keeps up is cut off, and a member of a fleet
 * that compacts too (every node does; etcd's --auto-compaction-retention may too) only finds
 * the revision compacted already, which is fine. Only while etcd answers, so it never delays
 * a renewal that matters. Freeing the space on disk is etcdctl defrag's (docs/fleet.md).
 */
static void bg_compact(EtcdLedger *l)
{
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        if (!l->fc.compaction_interval_usec || now < l->compact_at)
                return;
        pthread_mutex_lock(&l->mu);
        bool reachable = l->reachable;
        pthread_mutex_unlock(&l->mu);
        if (!reachable)
                return;
        l->compact_at = now + l->fc.compaction_interval_usec;
        int64_t rev = l->compact_rev;
        l->compact_rev = l->w_rev;
        if (rev <= 0)
                return;
        _cleanup_json_ json_t *req = json_pack("{s:o}", "revision", json_i64_string(rev)),
                              *a = NULL;
        EtcdError err;
        if (req &&
            etcd_call(&l->bg, "/v3/kv/compaction", req, now + l->fc.timeout_usec, &a, &err) >= 0)
                __atomic_fetch_add(&l->compactions, 1, __ATOMIC_RELAXED);
}

static void *bg_main(void *userdata)
{
        EtcdLedger *l = userdata;
        uint64_t retry = ttl_third_usec(l) < USEC_PER_SEC ? ttl_third_usec(l) : USEC_PER_SEC;
        l->next_keepalive = now_usec(CLOCK_MONOTONIC) + ttl_third_usec(l);
        l->compact_at = now_usec(CLOCK_MONOTONIC) + l->fc.compaction_interval_usec;
        for (;;) {
                pthread_mutex_lock(&l->mu);
                bool stop = l->stop, poke = l->poke;
                l->poke = false;
                pthread_mutex_unlock(&l->mu);
                if (stop)
                        break;
                /* the lease: renewed every TTL/3; while etcd is out of reach or the lease is
                 * lost, tried every second (or TTL/3 if shorter), and at once when the loop
                 * saw something fail */
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                if (poke || now >= l->next_keepalive) {
                        pthread_mutex_lock(&l->mu);
                        LeaseState st = l->lease_state;
                        pthread_mutex_unlock(&l->mu);
                        if (st == LEASE_LOST)
                                bg_recover(l);
                        else
                                bg_keepalive(l);
                        pthread_mutex_lock(&l->mu);
                        bool fine = l->reachable && l->lease_state != LEASE_LOST;
                        pthread_mutex_unlock(&l->mu);
                        l->next_keepalive = now + (fine ? ttl_third_usec(l) : retry);
                }
                bg_readmit(l);
                bg_deletes(l);
                bg_compact(l);
                /* the watch follows the endpoint that answers */
                if (l->watch && l->watch_at != l->bg.at) {
                        watch_stop(l);
                        l->watch_retry_at = 0;
                }
                if (!l->watch && now_usec(CLOCK_MONOTONIC) >= l->watch_retry_at &&
                    watch_start(l) < 0)
                        l->watch_retry_at = now_usec(CLOCK_MONOTONIC) + retry;
                w_publish(l);

                now = now_usec(CLOCK_MONOTONIC);
                uint64_t until = l->next_keepalive;
                if (!l->watch && l->watch_retry_at < until)
                        until = l->watch_retry_at;
                int ms = until > now ? (int)((until - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC) : 0;
                struct curl_waitfd wfd = {.fd = l->tfd, .events = CURL_WAIT_POLLIN};
                (void)curl_multi_poll(l->multi, &wfd, 1, ms > 1000 ? 1000 : ms, NULL);
                if (wfd.revents) {
                        uint64_t v;
                        (void)!read(l->tfd, &v, sizeof(v));
                }
                int running, q;
                (void)curl_multi_perform(l->multi, &running);
                CURLMsg *m;
                while ((m = curl_multi_info_read(l->multi, &q)))
                        if (m->msg == CURLMSG_DONE && m->easy_handle == l->watch)
                                watch_ended(l);
                w_publish(l);
        }
        watch_stop(l);
        return NULL;
}

static void stop_thread(EtcdLedger *l)
{
        if (!l->thread_started)
                return;
        pthread_mutex_lock(&l->mu);
        l->stop = true;
        pthread_mutex_unlock(&l->mu);
        wake_thread(l);
        (void)pthread_join(l->thread, NULL);
        l->thread_started = false;
}

/* ---- the loop ---- */

/* The teams etcd holds (id → raw value) to hooks->teams_changed; invalid ones are logged (once
 * per value) and left out. */
static void apply_teams(EtcdLedger *l, json_t *raw)
{
        size_t n = json_object_size(raw), k = 0;
        TeamConfig *list = calloc(n + 1, sizeof(*list));
        if (!list) {
                log_error("out of memory: the teams etcd holds are not applied");
                return;
        }
        const char *id;
        json_t *v;
        json_object_foreach (raw, id, v) {
                const char *text = json_string_value(v);
                json_error_t je;
                _cleanup_json_ json_t *j = json_loads(text ? text : "", 0, &je);
                char why[512];
                int r = -EINVAL;
                if (!j)
                        snprintf(why, sizeof(why), "not JSON: %s", je.text);
                else
                        r = config_team_from_json(j, id, &list[k], why, sizeof(why));
                if (r == -ENOMEM) {
                        log_error("out of memory: the teams etcd holds are not applied");
                        break;
                }
                if (r < 0) {
                        /* config_team_from_json freed what it had filled */
                        memset(&list[k], 0, sizeof(list[k]));
                        if (!json_equal(json_object_get(l->teams_applied, id), v))
                                log_warning("etcd key %s%s: %s: this team is skipped",
                                            l->teams_prefix, id, why);
                        continue;
                }
                k++;
        }
        if (!id && l->hooks.teams_changed) /* the loop ran to its end: nothing ran out */
                l->hooks.teams_changed(list, k, l->userdata);
        for (size_t i = 0; i < k; i++)
                config_team_done(&list[i]);
        free(list);
        json_decref(l->teams_applied);
        l->teams_applied = json_incref(raw);
}

/* The fleet's counts to every team: Team.used (never below what this node holds). */
static void apply_counts(EtcdLedger *l)
{
        size_t n;
        Team *const *ts = teams_list(l->teams, &n);
        for (size_t i = 0; i < n; i++) {
                json_int_t c = json_integer_value(json_object_get(l->counts, ts[i]->id));
                unsigned used = c > 0 ? (unsigned)c : 0;
                if (used < ts[i]->used_here)
                        used = ts[i]->used_here;
                teams_set_used(l->teams, ts[i], used, ts[i]->used_here);
        }
}

/* The quotas a re-admission compares with: the teams' as the loop knows them (pomed.conf's and
 * SetQuota's too, which the ledger is not told of), refreshed at every wake and take. */
static void note_quotas(EtcdLedger *l)
{
        size_t n;
        Team *const *ts = teams_list(l->teams, &n);
        pthread_mutex_lock(&l->mu);
        for (size_t i = 0; i < n; i++)
                (void)json_object_set_new(l->quotas, ts[i]->id, json_integer(ts[i]->quota));
        pthread_mutex_unlock(&l->mu);
}

static int on_wake(sd_event_source *s _unused_, int fd, uint32_t revents _unused_, void *userdata)
{
        EtcdLedger *l = userdata;
        uint64_t v;
        (void)!read(fd, &v, sizeof(v));

        pthread_mutex_lock(&l->mu);
        LogLine *logs = l->logs;
        size_t n_logs = l->n_logs;
        json_t *teams = l->out_teams, *counts = l->out_counts;
        int64_t rev = l->out_counts_rev;
        char **lost_sids = l->lost_sids, **lost_teams = l->lost_teams;
        l->logs = NULL;
        l->n_logs = 0;
        l->out_teams = l->out_counts = NULL;
        l->lost_sids = l->lost_teams = NULL;
        pthread_mutex_unlock(&l->mu);

        for (size_t i = 0; i < n_logs; i++) {
                log_full_errno(logs[i].level, 0, "fleet: %s", logs[i].text);
                free(logs[i].text);
        }
        free(logs);
        if (teams && !json_equal(teams, l->teams_applied))
                apply_teams(l, teams);
        json_decref(teams);
        if (counts && rev >= l->counts_rev) {
                json_decref(l->counts);
                l->counts = json_incref(counts);
                l->counts_rev = rev;
        }
        json_decref(counts);
        if (teams || counts)
                apply_counts(l);
        note_quotas(l);
        for (size_t i = 0; lost_sids && lost_sids[i]; i++) {
                Team *t = lost_teams && lost_teams[i] ? teams_by_id(l->teams, lost_teams[i]) : NULL;
                if (t)
                        teams_set_used(l->teams, t, t->used, t->used_here ? t->used_here - 1 : 0);
                if (l->hooks.slot_lost)
                        l->hooks.slot_lost(lost_sids[i], l->userdata);
        }
        strv_free(lost_sids);
        strv_free(lost_teams);
        return 0;
}

static void count_add(EtcdLedger *l, const char *team, int delta)
{
        json_int_t c = json_integer_value(json_object_get(l->counts, team)) + delta;
        if (l->counts)
                (void)json_object_set_new(l->counts, team, json_integer(c > 0 ? c : 0));
}

static int etcd_take(Ledger *base, Team *t, const char *sid, char *why, size_t why_len)
{
        EtcdLedger *l = (EtcdLedger *)base;
        if (l->left) {
                snprintf(why, why_len, "this node left the fleet (it is stopping)");
                return -EHOSTUNREACH;
        }
        pthread_mutex_lock(&l->mu);
        bool reachable = l->reachable;
        LeaseState st = l->lease_state;
        int64_t lease = l->lease;
        unsigned gen = l->gen;
        bool no_leader = l->unreach.kind == ETCD_NO_LEADER;
        (void)json_object_set_new(l->quotas, t->id, json_integer(t->quota));
        if (!reachable)
                etcd_error_text(&l->unreach, now_usec(CLOCK_MONOTONIC) - l->unreachable_since + 1,
                                why, why_len);
        pthread_mutex_unlock(&l->mu);
        if (!reachable) {
                l->refused[no_leader ? REFUSED_NO_LEADER : REFUSED_UNREACHABLE]++;
                return -EHOSTUNREACH;
        }
        if (st != LEASE_LIVE) {
                snprintf(why, why_len, "%s",
                         st == LEASE_LOST
                                 ? "this node's lease expired; it takes a new one as soon as "
                                   "etcd answers"
                                 : "this node's lease expired and the slots of its open "
                                   "sandboxes are being admitted again first");
                l->refused[REFUSED_LEASE_LOST]++;
                return -EHOSTUNREACH;
        }

        uint64_t start = now_usec(CLOCK_MONOTONIC);
        Admission a;
        EtcdError err;
        int r = admit(l, &l->conn, t->id, sid, t->quota, lease, start + l->fc.timeout_usec, &a,
                      &err);
        uint64_t took = now_usec(CLOCK_MONOTONIC) - start;
        l->txn_samples[l->n_txn % TXN_SAMPLES] = took;
        l->n_txn++;
        l->txn_usec_sum += took;
        l->txn_retries += a.retries;
        if (r == 0) {
                pthread_mutex_lock(&l->mu);
                Held *h = calloc(1, sizeof(*h));
                if (h && (h->sid = strdup(sid)) && (h->team = strdup(t->id)) &&
                    hashmap_put(l->held, h->sid, h) >= 0) {
                        h->gen = gen;
                        h->next = l->held_list;
                        if (h->next)
                                h->next->prev = h;
                        l->held_list = h;
                        h = NULL;
                        r = 0;
                } else {
                        /* not held, so not kept: its key goes now */
                        _cleanup_free_ char *key = slot_key(l, t->id, sid);
                        if (key)
                                (void)queue_delete_locked(l, key, gen);
                        r = -ENOMEM;
                }
                bool stale = gen != l->gen;
                pthread_mutex_unlock(&l->mu);
                held_free(h);
                if (r < 0 || stale)
                        wake_thread(l);
                if (r < 0)
                        return r;
                if (a.rev > l->counts_rev) {
                        (void)json_object_set_new(l->counts, t->id, json_integer(a.count + 1));
                        l->counts_rev = a.rev;
                }
                unsigned used = a.count + 1 > t->used_here + 1 ? a.count + 1 : t->used_here + 1;
                teams_set_used(l->teams, t, used, t->used_here + 1);
                return 0;
        }
        if (r == -EDQUOT) {
                l->refused[REFUSED_QUOTA]++;
                if (a.rev >= l->counts_rev) {
                        (void)json_object_set_new(l->counts, t->id, json_integer(a.count));
                        l->counts_rev = a.rev;
                }
                teams_set_used(l->teams, t, a.count > t->used_here ? a.count : t->used_here,
                               t->used_here);
                return -EDQUOT;
        }
        if (r == -ENOMEM)
                return r;
        if (a.sent) {
                /* the commit went out and its answer did not come back: if it was applied, the
                 * key must not stay */
                _cleanup_free_ char *key = slot_key(l, t->id, sid);
                pthread_mutex_lock(&l->mu);
                if (key)
                        (void)queue_delete_locked(l, key, gen);
                pthread_mutex_unlock(&l->mu);
                wake_thread(l);
        }
        if (r == -ENOENT) {
                lease_lost(l, lease, "etcd says so at an admission");
                snprintf(why, why_len, "this node's lease expired; it takes a new one now");
                l->refused[REFUSED_LEASE_LOST]++;
        } else if (r == -EBUSY) {
                etcd_error_text(&err, 0, why, why_len);
                l->refused[REFUSED_CONTENDED]++;
        } else {
                etcd_error_text(&err, 0, why, why_len);
                if (err.kind != ETCD_REFUSED) {
                        /* refused at once from now on; the thread finds out when etcd is back */
                        pthread_mutex_lock(&l->mu);
                        note_reach_locked(l, &err);
                        l->poke = true;
                        pthread_mutex_unlock(&l->mu);
                        wake_loop(l);
                        wake_thread(l);
                }
                l->refused[err.kind == ETCD_NO_LEADER ? REFUSED_NO_LEADER : REFUSED_UNREACHABLE]++;
        }
        return -EHOSTUNREACH;
}

static void etcd_release(Ledger *base, Team *t, const char *sid)
{
        EtcdLedger *l = (EtcdLedger *)base;
        pthread_mutex_lock(&l->mu);
        Held *h = held_remove_locked(l, sid);
        if (h) {
                _cleanup_free_ char *key = slot_key(l, h->team, sid);
                /* out of memory: the key goes with the lease */
                if (key)
                        (void)queue_delete_locked(l, key, h->gen);
        }
        pthread_mutex_unlock(&l->mu);
        if (!h)
                return;
        held_free(h);
        wake_thread(l);
        count_add(l, t->id, -1);
        teams_set_used(l->teams, t, t->used ? t->used - 1 : 0, t->used_here ? t->used_here - 1 : 0);
}

static int etcd_leave(Ledger *base)
{
        EtcdLedger *l = (EtcdLedger *)base;
        if (l->left)
                return 0;
        l->left = true;
        stop_thread(l); /* it would take a new lease when the revoked one fails its renewal */
        pthread_mutex_lock(&l->mu);
        int64_t lease = l->lease;
        LeaseState st = l->lease_state;
        size_t n = held_count_locked(l);
        pthread_mutex_unlock(&l->mu);
        if (st == LEASE_LOST)
                return 0; /* nothing of this node's is left in etcd */
        EtcdError err;
        int r = lease_revoke(l, &l->conn, lease, &err);
        if (r < 0) {
                char text[1024];
                etcd_error_text(&err, 0, text, sizeof(text));
                log_warning("fleet: cannot revoke this node's lease %" PRIx64 ": %s",
                            (uint64_t)lease, text);
                return r == -ENOMEM ? r : -EHOSTUNREACH;
        }
        log_info("fleet: left: lease %" PRIx64 " revoked, so this node's membership and its %zu "
                 "slots are gone",
                 (uint64_t)lease, n);
        return 0;
}

static json_t *etcd_status(const Ledger *base)
{
        EtcdLedger *l = (EtcdLedger *)base;
        char err[1024] = "", lease[32] = "";
        pthread_mutex_lock(&l->mu);
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        bool reachable = l->reachable;
        if (!reachable)
                etcd_error_text(&l->unreach, now - l->unreachable_since + 1, err, sizeof(err));
        else if (l->lease_state == LEASE_LOST)
                snprintf(err, sizeof(err), "this node's lease expired");
        else if (l->lease_state == LEASE_READMITTING)
                snprintf(err, sizeof(err),
                         "this node's lease expired; its slots are being "
                         "admitted again");
        if (l->left)
                snprintf(err, sizeof(err), "this node left the fleet");
        if (l->lease_state != LEASE_LOST && !l->left)
                snprintf(lease, sizeof(lease), "%" PRIx64, (uint64_t)l->lease);
        uint64_t renewed = l->renewed_at;
        pthread_mutex_unlock(&l->mu);
        _cleanup_json_ json_t *eps = json_array();
        for (char **e = l->fc.endpoints; eps && *e; e++)
                if (json_array_append_new(eps, json_string(*e)) < 0)
                        return NULL;
        if (!eps)
                return NULL;
        return json_pack("{s:s, s:s, s:O, s:b, s:s*, s:I, s:I, s:s*}", "ledger", "etcd", "node",
                         l->fc.node, "endpoints", eps, "reachable", reachable, "lease_id",
                         lease[0] ? lease : NULL, "lease_ttl_ms", (json_int_t)l->ttl_sec * 1000,
                         "last_renewed_ms_ago", (json_int_t)((now - renewed) / USEC_PER_MSEC),
                         "error", err[0] ? err : NULL);
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

static void etcd_metrics(const Ledger *base, FILE *f)
{
        const EtcdLedger *l = (const EtcdLedger *)base;
        pthread_mutex_t *mu = (pthread_mutex_t *)&l->mu;
        pthread_mutex_lock(mu);
        bool reachable = l->reachable;
        pthread_mutex_unlock(mu);
        const char *node = l->fc.node; /* [a-z0-9]: nothing to escape */
        fprintf(f,
                "# HELP pome_ledger_reachable Whether this fleet node reaches etcd (1) or not "
                "(0).\n# TYPE pome_ledger_reachable gauge\npome_ledger_reachable{node=\"%s\"} "
                "%d\n",
                node, reachable);
        fputs("# HELP pome_ledger_txn_seconds Admissions (the read, the commit and the retries "
              "of one create's slot) on etcd; quantiles over the last 1024.\n"
              "# TYPE pome_ledger_txn_seconds summary\n",
              f);
        size_t n = l->n_txn < TXN_SAMPLES ? l->n_txn : TXN_SAMPLES;
        if (n > 0) {
                uint64_t sorted[TXN_SAMPLES];
                memcpy(sorted, l->txn_samples, n * sizeof(*sorted));
                qsort(sorted, n, sizeof(*sorted), cmp_u64);
                static const double qs[] = {0.5, 0.9, 0.99};
                for (size_t i = 0; i < ELEMENTSOF(qs); i++)
                        fprintf(f, "pome_ledger_txn_seconds{node=\"%s\",quantile=\"%g\"} %.6f\n",
                                node, qs[i],
                                (double)sorted[(size_t)(qs[i] * (double)(n - 1))] / 1e6);
        }
        fprintf(f,
                "pome_ledger_txn_seconds_sum{node=\"%s\"} %.6f\n"
                "pome_ledger_txn_seconds_count{node=\"%s\"} %" PRIu64 "\n",
                node, (double)l->txn_usec_sum / 1e6, node, l->n_txn);
        fprintf(f,
                "# HELP pome_ledger_txn_retries_total Admission commits lost to another node's "
                "admission of the same team, each followed by a new read.\n"
                "# TYPE pome_ledger_txn_retries_total counter\n"
                "pome_ledger_txn_retries_total{node=\"%s\"} %" PRIu64 "\n",
                node, l->txn_retries);
        fprintf(f,
                "# HELP pome_ledger_compactions_total Compactions of etcd's history this node "
                "made (fleet.compaction_interval).\n"
                "# TYPE pome_ledger_compactions_total counter\n"
                "pome_ledger_compactions_total{node=\"%s\"} %" PRIu64 "\n",
                node, __atomic_load_n(&l->compactions, __ATOMIC_RELAXED));
        fputs("# HELP pome_ledger_refused_total Slots the ledger refused, by reason (quota: the "
              "team's slots are all in use; the others: 503 ledger_unavailable).\n"
              "# TYPE pome_ledger_refused_total counter\n",
              f);
        for (size_t i = 0; i < _REFUSED_MAX; i++)
                fprintf(f, "pome_ledger_refused_total{node=\"%s\",reason=\"%s\"} %" PRIu64 "\n",
                        node, refusal_names[i], l->refused[i]);
}

static void etcd_free(Ledger *base)
{
        EtcdLedger *l = (EtcdLedger *)base;
        stop_thread(l);
        sd_event_source_disable_unref(l->wake_source);
        safe_close(l->efd);
        safe_close(l->tfd);
        watch_stop(l);
        if (l->multi)
                curl_multi_cleanup(l->multi);
        conn_done(&l->conn);
        conn_done(&l->bg);
        free(l->wbuf);
        while (l->held_list) {
                Held *h = l->held_list;
                held_remove_locked(l, h->sid);
                held_free(h);
        }
        hashmap_free(l->held);
        json_decref(l->quotas);
        for (size_t i = 0; i < l->n_deletes; i++)
                free(l->deletes[i].key);
        free(l->deletes);
        for (size_t i = 0; i < l->n_logs; i++)
                free(l->logs[i].text);
        free(l->logs);
        strv_free(l->lost_sids);
        strv_free(l->lost_teams);
        json_decref(l->teams_applied);
        json_decref(l->counts);
        json_decref(l->w_teams);
        json_decref(l->w_slots);
        json_decref(l->w_counts);
        json_decref(l->out_teams);
        json_decref(l->out_counts);
        free(l->slots_prefix);
        free(l->teams_prefix);
        free(l->guard_prefix);
        free(l->node_key);
        free(l->watch_prefix);
        free(l->fc.node);
        strv_free(l->fc.endpoints);
        free(l->fc.prefix);
        free(l->fc.cert);
        free(l->fc.key);
        free(l->fc.ca);
        free(l->fc.advertise_url);
        if (l->curl_inited)
                curl_global_cleanup();
        pthread_mutex_destroy(&l->mu);
        free(l);
}

static const LedgerOps etcd_ops = {
        .kind = "etcd",
        .take = etcd_take,
        .release = etcd_release,
        .leave = etcd_leave,
        .status = etcd_status,
        .metrics = etcd_metrics,
        .free = etcd_free,
};

/* ---- joining ---- */

static void read_id_file(const char *path, char *buf, size_t len)
{
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        buf[0] = 0;
        if (f && fgets(buf, (int)len, f))
                buf[strcspn(buf, "\n")] = 0;
}

/* Whether pid runs a pomed on this host now (another run of ours, not a reused pid). */
static bool pomed_runs(int64_t pid)
{
        char path[64], comm[32] = "";
        if (pid <= 0 || pid == getpid())
                return false;
        snprintf(path, sizeof(path), "/proc/%" PRId64 "/comm", pid);
        read_id_file(path, comm, sizeof(comm));
        return streq(comm, "pomed");
}

/*
 * The membership a previous run left: 0 when there is none or it was this node's (then its
 * lease is revoked: its slots go now, not at the end of their TTL), -EADDRINUSE when another
 * host (or another pomed on this one) is this node now.
 */
static int join_previous(EtcdLedger *l, char *why, size_t why_len)
{
        _cleanup_json_ json_t *req = json_pack("{s:o}", "key", json_b64(l->node_key)), *a = NULL;
        EtcdError err;
        if (!req)
                return -ENOMEM;
        int r = etcd_call(&l->conn, "/v3/kv/range", req,
                          now_usec(CLOCK_MONOTONIC) + l->fc.timeout_usec, &a, &err);
        if (r < 0) {
                etcd_error_text(&err, 0, why, why_len);
                return r == -EIO ? -EPROTO : r;
        }
        json_t *kv = json_array_get(json_object_get(a, "kvs"), 0);
        if (!kv)
                return 0;
        _cleanup_free_ char *value = json_get_b64(kv, "value");
        _cleanup_json_ json_t *v = value ? json_loads(value, 0, NULL) : NULL;
        const char *mid = json_get_str(v, "machine_id"), *host = json_get_str(v, "hostname");
        const char *started = json_get_str(v, "started_at");
        int64_t pid = json_integer_value(json_object_get(v, "pid"));
        bool same_host = mid && *mid ? streq(mid, l->machine_id) : streq_ptr(host, l->hostname);
        if (!same_host) {
                snprintf(why, why_len,
                         "%s says host %s is node %s (since %s) and its lease is alive: two nodes "
                         "share the name. Give this one another fleet.node, or stop that one "
                         "and wait for its lease (%s) to expire",
                         l->node_key, host ? host : "(unknown)", l->fc.node,
                         started ? started : "(unknown)", json_get_str(v, "lease") ?: "?");
                return -EADDRINUSE;
        }
        if (streq_ptr(json_get_str(v, "boot_id"), l->boot_id) && pomed_runs(pid)) {
                snprintf(why, why_len,
                         "another pomed on this host (pid %" PRId64 ") is node %s: two nodes "
                         "share the name. Give this one another fleet.node",
                         pid, l->fc.node);
                return -EADDRINUSE;
        }
        /* a previous run of this node: what it held goes now */
        int64_t lease = json_get_i64(kv, "lease");
        if (lease == 0 && json_get_str(v, "lease"))
                lease = (int64_t)strtoull(json_get_str(v, "lease"), NULL, 16);
        if (lease != 0 && (r = lease_revoke(l, &l->conn, lease, &err)) < 0) {
                etcd_error_text(&err, 0, why, why_len);
                return r == -EIO ? -EPROTO : r;
        }
        log_info("fleet: node %s's previous run (pid %" PRId64 ", since %s) left lease %" PRIx64
                 " behind: revoked, so its slots count no more",
                 l->fc.node, pid, started ? started : "?", (uint64_t)lease);
        return 0;
}

static int copy_fleet(FleetConfig *to, const FleetConfig *from)
{
        to->lease_ttl_usec = from->lease_ttl_usec;
        to->timeout_usec = from->timeout_usec;
        to->compaction_interval_usec = from->compaction_interval_usec;
        to->endpoints = strv_new();
        for (char **e = from->endpoints; to->endpoints && e && *e; e++)
                if (strv_extend(&to->endpoints, *e) < 0)
                        return -ENOMEM;
        if (!to->endpoints || !(to->node = strdup(from->node)) ||
            !(to->prefix = strdup(from->prefix ? from->prefix : "/pome")) ||
            (from->cert && !(to->cert = strdup(from->cert))) ||
            (from->key && !(to->key = strdup(from->key))) ||
            (from->ca && !(to->ca = strdup(from->ca))) ||
            (from->advertise_url && !(to->advertise_url = strdup(from->advertise_url))))
                return -ENOMEM;
        return 0;
}

int ledger_new_etcd(const FleetConfig *fc, Teams *ts, sd_event *e, const LedgerHooks *hooks,
                    void *userdata, Ledger **ret, char *why, size_t why_len)
{
        _cleanup_json_ json_t *teams = NULL;
        EtcdError err;
        EtcdLedger *l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        l->base.ops = &etcd_ops;
        l->efd = l->tfd = -1;
        pthread_mutex_init(&l->mu, NULL);
        l->teams = ts;
        l->event = e;
        l->hooks = hooks ? *hooks : (LedgerHooks){0};
        l->userdata = userdata;
        l->reachable = true;
        l->started_at = now_sec();
        int r = copy_fleet(&l->fc, fc);
        if (r < 0)
                goto fail;
        if (!l->fc.endpoints[0]) {
                snprintf(why, why_len, "fleet.etcd.endpoints is empty");
                r = -EINVAL;
                goto fail;
        }
        l->ttl_sec = (unsigned)((l->fc.lease_ttl_usec + USEC_PER_SEC - 1) / USEC_PER_SEC);
        const char *p = streq(l->fc.prefix, "/") ? "" : l->fc.prefix;
        if (asprintf(&l->slots_prefix, "%s/slots/", p) < 0 ||
            asprintf(&l->teams_prefix, "%s/teams/", p) < 0 ||
            asprintf(&l->guard_prefix, "%s/guard/", p) < 0 ||
            asprintf(&l->node_key, "%s/nodes/%s", p, l->fc.node) < 0 ||
            asprintf(&l->watch_prefix, "%s/", p) < 0) {
                r = -ENOMEM;
                goto fail;
        }
        if (gethostname(l->hostname, sizeof(l->hostname) - 1) < 0)
                snprintf(l->hostname, sizeof(l->hostname), "localhost");
        read_id_file("/etc/machine-id", l->machine_id, sizeof(l->machine_id));
        read_id_file("/proc/sys/kernel/random/boot_id", l->boot_id, sizeof(l->boot_id));
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
                r = -ENOMEM;
                goto fail;
        }
        l->curl_inited = true;
        if ((r = conn_init(&l->conn, &l->fc)) < 0 || (r = conn_init(&l->bg, &l->fc)) < 0 ||
            !(l->held = hashmap_new(HASHMAP_STRING)) || !(l->quotas = json_object()) ||
            !(l->w_teams = json_object()) || !(l->w_slots = json_object()) ||
            !(l->w_counts = json_object()) || !(l->counts = json_object()) ||
            !(l->multi = curl_multi_init())) {
                r = -ENOMEM;
                goto fail;
        }

        /* the join: a previous run's lease revoked, ours granted, membership on it */
        if ((r = join_previous(l, why, why_len)) < 0)
                goto fail;
        if ((r = grant(l, &l->conn, &l->lease, &err)) < 0) {
                etcd_error_text(&err, 0, why, why_len);
                goto fail;
        }
        l->renewed_at = now_usec(CLOCK_MONOTONIC);
        r = put_membership(l, &l->conn, l->lease, true, &err);
        if (r == -EADDRINUSE)
                snprintf(why, why_len,
                         "%s appeared while this node joined: another pomed is node %s too (two "
                         "nodes share the name)",
                         l->node_key, l->fc.node);
        else if (r < 0)
                etcd_error_text(&err, 0, why, why_len);
        if (r >= 0 && (r = w_read_all(l, &l->conn, &err)) < 0)
                etcd_error_text(&err, 0, why, why_len);
        if (r < 0) {
                (void)lease_revoke(l, &l->conn, l->lease, &err);
                goto fail;
        }
        l->bg.at = l->conn.at;

        /* what etcd holds, applied before the first create */
        l->w_teams_dirty = l->w_counts_dirty = false;
        teams = json_deep_copy(l->w_teams); /* the thread's objects stay its own */
        json_decref(l->counts);
        if (!teams || !(l->counts = json_deep_copy(l->w_counts))) {
                r = -ENOMEM;
                goto revoke;
        }
        apply_teams(l, teams);
        l->counts_rev = l->w_rev;
        apply_counts(l);
        note_quotas(l);

        l->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        l->tfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (l->efd < 0 || l->tfd < 0) {
                r = negative_errno();
                snprintf(why, why_len, "eventfd: %s", strerror(-r));
                goto revoke;
        }
        if ((r = sd_event_add_io(e, &l->wake_source, l->efd, EPOLLIN, on_wake, l)) < 0) {
                snprintf(why, why_len, "cannot watch the ledger's eventfd: %s", strerror(-r));
                goto revoke;
        }
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old); /* signals are the loop's (signalfd) */
        r = -pthread_create(&l->thread, NULL, bg_main, l);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r < 0) {
                snprintf(why, why_len, "cannot start the ledger's thread: %s", strerror(-r));
                goto revoke;
        }
        l->thread_started = true;
        log_info("fleet: node %s joined through %s: lease %" PRIx64 " (TTL %u s), %zu teams in "
                 "etcd, %zu slots held fleet-wide",
                 l->fc.node, l->fc.endpoints[l->conn.at], (uint64_t)l->lease, l->ttl_sec,
                 json_object_size(l->w_teams), json_object_size(l->w_slots));
        *ret = &l->base;
        return 0;
revoke:
        (void)lease_revoke(l, &l->conn, l->lease, &err);
fail:
        etcd_free(&l->base);
        /* ledger.h's errors: etcd's own refusals (permissions, say) are answers we cannot use */
        if (r == -EIO || r == -ENOENT || r == -ERANGE)
                r = -EPROTO;
        return r;
}
