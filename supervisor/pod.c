/* SPDX-License-Identifier: MIT */
#include "supervisor/pod.h"

#include <fcntl.h>
#include <inttypes.h>
#include <linux/filter.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "supervisor/cgroup.h"
#include "common/frame.h"
#include "common/hashmap.h"
#include "common/timeutil.h"
#include "common/json-util.h"
#include "common/util.h"
#include "supervisor/notify.h"
#include "pods/twin/podwire.h"
#include "supervisor/seccomp-policy.h"
#include "supervisor/spawn.h"

#define POD_OUT_MAX (8u << 20) /* bytes queued for a pod before callers get 503 busy */

typedef struct PodCall PodCall;
struct PodCall {
        Pod *pod;
        uint64_t id;
        PodReplyFn cb;
        void *userdata;
        sd_event_source *timer;
        PodCall *next;
};

struct Pod {
        const PodEnv *env;
        const TwinKind *kind;
        char *sid;         /* NULL until pod_load: a pooled pod belongs to no sandbox yet */
        char name[32];     /* its cgroup's name: "pod-<n>" */
        bool loaded;       /* the load frame went out */
        SpawnChild *setup; /* the child until it exec'd or was reaped, or NULL */
        CgPod *cg;
        pid_t pid;
        sd_event_source *child; /* owns the pidfd */
        int fd;
        sd_event_source *io;
        FrameReader rd;
        char *out; /* bytes not yet written to the pod */
        size_t out_len, out_cap;
        bool ready, exited, kill_sent, broken, registered;
        bool reaping;               /* on_exit_ is draining the socket: nothing left to kill */
        bool draining;              /* on_io is handing out the replies of one read */
        const char *kill_why;       /* static: the `how` of pomed's SIGKILL ("killed"…) */
        char *kill_detail;          /* a sentence for kill_why, or NULL */
        sd_event_source *eof_timer; /* the pod closed its socket: grace before a kill */
        SpawnFailure spawn;         /* the child's failed setup step, if any */
        long sigsys_nr;             /* the syscall the pod reported before SIGSYS, -1: none */
        uint32_t sigsys_arch;
        size_t n_calls;                 /* calls queued or in flight */
        sd_event_source *release_timer; /* retrying the cgroup removal after the exit */
        uint64_t release_delay;         /* µs until the next try */
        uint64_t release_deadline;      /* CLOCK_MONOTONIC µs: give up, leave it for next start */
        char exit_how[96], exit_detail[512]; /* how it ended, reported once its cgroups are gone */
        char *status;                        /* last STATUS= the pod sent */
        uid_t uid;                           /* what it runs as */
        gid_t gid;
        ssize_t range_slot; /* its slot of env->range_used, -1: none */
        PodCallbacks cb;
        void *userdata;
        PodCall *calls;
        uint64_t next_id;
};

static void call_free(PodCall *c)
{
        sd_event_source_disable_unref(c->timer);
        free(c);
}

static PodCall *call_take(Pod *p, uint64_t id)
{
        for (PodCall **pp = &p->calls; *pp; pp = &(*pp)->next)
                if ((*pp)->id == id) {
                        PodCall *c = *pp;
                        *pp = c->next;
                        p->n_calls--;
                        return c;
                }
        return NULL;
}

static void call_finish(PodCall *c, int err, const TwinReplyBytes *rb)
{
        static const TwinReplyBytes empty = {};
        c->cb(c->pod, err, rb ? rb : &empty, c->userdata);
        call_free(c);
}

/* Fails every call in flight (the pod is gone or unusable). */
static void fail_calls(Pod *p, int err)
{
        while (p->calls) {
                PodCall *c = p->calls;
                p->calls = c->next;
                p->n_calls--;
                call_finish(c, err, NULL);
        }
}

static void update_io_events(Pod *p)
{
        if (p->io)
                sd_event_source_set_io_events(p->io, EPOLLIN | (p->out_len ? EPOLLOUT : 0));
}

static int flush_out(Pod *p)
{
        while (p->out_len > 0) {
                ssize_t k = send(p->fd, p->out, p->out_len, MSG_DONTWAIT | MSG_NOSIGNAL);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0 && errno == EAGAIN)
                        break;
                if (k < 0)
                        return negative_errno();
                memmove(p->out, p->out + k, p->out_len - (size_t)k);
                p->out_len -= (size_t)k;
        }
        update_io_events(p);
        return 0;
}

static int queue_out(Pod *p, char *buf, size_t len)
{
        if (buf_reserve(&p->out, &p->out_cap, p->out_len + len, 64 * 1024) < 0) {
                free(buf);
                return -ENOMEM;
        }
        memcpy(p->out + p->out_len, buf, len);
        p->out_len += len;
        free(buf);
        return flush_out(p);
}

/* How long a pod that closed its socket may take to exit before pomed kills it. */
#define POD_EOF_GRACE_USEC (1 * USEC_PER_SEC)

static int on_eof_grace(sd_event_source *s _unused_, uint64_t usec _unused_, void *userdata)
{
        Pod *p = userdata;
        p->eof_timer = sd_event_source_disable_unref(p->eof_timer);
        if (!p->kill_detail)
                p->kill_detail = strdup("the pod closed its frame socket but did not exit");
        pod_kill(p, "protocol_error");
        return 0;
}

/*
 * A pod that sends garbage (err -EPROTO, why says what) or closes its socket (-ECONNRESET)
 * is not trusted again. Garbage: killed now, reported "protocol_error". A closed socket
 * is most often a pod on its way out (an exit, a signal from outside, SIGSYS): it gets a
 * grace period, so that its own end, not pomed's kill, names the cause.
 */
static void mark_broken(Pod *p, int err, const char *why)
{
        if (p->broken)
                return;
        p->broken = true;
        p->io = sd_event_source_disable_unref(p->io);
        fail_calls(p, err);
        if (p->reaping)
                return;
        if (err == -EPROTO) {
                if (!p->kill_detail && why)
                        p->kill_detail = strdup(why);
                pod_kill(p, "protocol_error");
                return;
        }
        if (sd_event_add_time_relative(p->env->event, &p->eof_timer, CLOCK_MONOTONIC,
                                       POD_EOF_GRACE_USEC, USEC_PER_MSEC, on_eof_grace, p) < 0)
                pod_kill(p, "protocol_error");
}

/*
 * The report pods/pod/sigsys.c writes before the pod dies by SIGSYS: a frame with id 0
 * and head {"op":"seccomp_violation","nr":N,"arch":A}. It is the pod's word; the kernel's
 * (the death by SIGSYS) decides whether it counts.
 */
static bool on_report(Pod *p, const Frame *f)
{
        if (f->id != 0 || !streq_ptr(json_get_str(f->head, "op"), "seccomp_violation"))
                return false;
        json_t *nr = json_object_get(f->head, "nr"), *arch = json_object_get(f->head, "arch");
        if (json_is_integer(nr) && json_integer_value(nr) >= 0 && json_integer_value(nr) < 4096 &&
            json_is_integer(arch)) {
                p->sigsys_nr = (long)json_integer_value(nr);
                p->sigsys_arch = (uint32_t)json_integer_value(arch);
        }
        return true;
}

static void on_frame(Pod *p, Frame *f)
{
        if (on_report(p, f))
                return;
        PodCall *c = call_take(p, f->id);
        if (!c)
                return; /* a late reply to a call that already timed out */
        TwinReplyBytes rb = {};
        int r = podwire_decode_reply(f, &rb);
        call_finish(c, r < 0 ? -EPROTO : 0, r < 0 ? NULL : &rb);
        if (r < 0) {
                char why[128];
                snprintf(why, sizeof(why),
                         "the pod sent a reply pomed cannot decode (frame %" PRIu64 ": %s)", f->id,
                         strerror(-r));
                mark_broken(p, -EPROTO, why);
        }
}

static void drain(Pod *p)
{
        for (;;) {
                int r = frame_reader_fill(&p->rd, p->fd);
                if (r == -EAGAIN)
                        break;
                if (r <= 0) {
                        /* EOF or error: deliver what is complete, then give up. */
                        Frame f = {};
                        while (!p->broken && frame_reader_next(&p->rd, &f) == 1) {
                                on_frame(p, &f);
                                frame_done(&f);
                        }
                        mark_broken(p, -ECONNRESET, NULL);
                        return;
                }
                Frame f = {};
                while ((r = frame_reader_next(&p->rd, &f)) == 1) {
                        on_frame(p, &f);
                        frame_done(&f);
                        if (p->broken)
                                return;
                }
                if (r < 0) {
                        char why[128];
                        snprintf(why, sizeof(why), "the pod sent a frame pomed cannot decode (%s)",
                                 r == -EMSGSIZE ? "longer than FRAME_MAX" : "bad framing or head");
                        mark_broken(p, -EPROTO, why);
                        return;
                }
        }
}

static int on_io(sd_event_source *s _unused_, int fd _unused_, uint32_t revents, void *userdata)
{
        Pod *p = userdata;
        if (revents & EPOLLOUT) {
                int r = flush_out(p);
                if (r < 0) {
                        mark_broken(p, -ECONNRESET, NULL);
                        return 0;
                }
        }
        if (revents & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                p->draining = true;
                drain(p);
                p->draining = false;
                if (p->cb.replies_done)
                        p->cb.replies_done(p, p->userdata);
        }
        return 0;
}

bool pod_draining(const Pod *p)
{
        return p && p->draining;
}

/* The pid index maps live pods only: a recycled pid never reaches a dead pod. */
static void unregister(Pod *p)
{
        if (p->registered && p->env->by_pid)
                (void)hashmap_remove_u64(p->env->by_pid, (uint64_t)p->pid);
        p->registered = false;
}

static void report_exit(Pod *p)
{
        p->release_timer = sd_event_source_disable_unref(p->release_timer);
        p->cg = cg_pod_free(p->cg);
        if (p->cb.exited)
                p->cb.exited(p, p->exit_how, p->exit_detail, p->userdata);
}

/* The pod's process is gone; its cgroups go without blocking the loop: retried on a timer
 * while a dying process still holds one. */
static int on_release(sd_event_source *es _unused_, uint64_t usec _unused_, void *userdata)
{
        Pod *p = userdata;
        int r = cg_pod_release(p->cg);
        if (r == -EBUSY && now_usec(CLOCK_MONOTONIC) < p->release_deadline) {
                p->release_delay = p->release_delay < 100 * USEC_PER_MSEC ? p->release_delay * 2
                                                                          : p->release_delay;
                uint64_t now;
                (void)sd_event_now(p->env->event, CLOCK_MONOTONIC, &now);
                (void)sd_event_source_set_time(p->release_timer, now + p->release_delay);
                (void)sd_event_source_set_enabled(p->release_timer, SD_EVENT_ONESHOT);
                return 0;
        }
        /* Gone, or given up: the next pomed start removes what is left. */
        report_exit(p);
        return 0;
}

static int on_exit_(sd_event_source *s _unused_, const siginfo_t *si, void *userdata)
{
        Pod *p = userdata;
        /*
         * Replies and a SIGSYS report the pod wrote before dying are still in the socket:
         * take them first. The pod is dead: nothing found there may kill it again.
         */
        p->reaping = true;
        p->eof_timer = sd_event_source_disable_unref(p->eof_timer);
        if (p->io)
                drain(p);
        p->exited = true;
        unregister(p);
        p->io = sd_event_source_disable_unref(p->io);
        p->fd = safe_close(p->fd);
        fail_calls(p, -ECONNRESET);
        if (p->setup) /* a failed setup step reported itself */
                p->setup = spawn_child_release(p->setup, &p->spawn);

        _cleanup_free_ char *culprit = NULL;
        int oom = p->cg ? cg_pod_oom(p->cg, &culprit) : CG_OOM_NONE;
        char syscall_name[64] = "";
        if (p->sigsys_nr >= 0 && scp_syscall_name(p->sigsys_arch, (int)p->sigsys_nr, syscall_name,
                                                  sizeof(syscall_name)) < 0)
                snprintf(syscall_name, sizeof(syscall_name), "%ld", p->sigsys_nr);
        PodDeath d = {
                .code = si->si_code,
                .status = si->si_status,
                .kill_why = p->kill_sent ? p->kill_why : NULL,
                .kill_detail = p->kill_detail,
                .oom = oom == CG_OOM_OWN    ? POD_OOM_OWN
                       : oom == CG_OOM_HOST ? POD_OOM_HOST
                                            : POD_OOM_NONE,
                .oom_cgroup = culprit,
                .spawn = p->spawn,
                .syscall = syscall_name[0] ? syscall_name : NULL,
                .syscall_nr = p->sigsys_nr,
                .uid = p->uid,
        };
        PodExit e = spawn_classify(&d, p->exit_how, sizeof(p->exit_how), p->exit_detail,
                                   sizeof(p->exit_detail));
        /* A pod that said why it is leaving (STATUS=) says it better than its status. */
        if (p->status && *p->status && (e == POD_EXIT_FAILURE || e == POD_EXIT_NORMAL))
                snprintf(p->exit_detail, sizeof(p->exit_detail), "%s", p->status);
        /* Its cgroups go without blocking the loop: the exit is reported once they have. */
        if (!p->cg || cg_pod_release(p->cg) != -EBUSY) {
                report_exit(p);
                return 0;
        }
        p->release_delay = USEC_PER_MSEC;
        p->release_deadline = now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC;
        if (sd_event_add_time_relative(p->env->event, &p->release_timer, CLOCK_MONOTONIC,
                                       p->release_delay, 0, on_release, p) < 0)
                report_exit(p);
        return 0;
}

/* The load frame: seed bytes, then the stage-2 BPF program the pod installs itself
 * once the seed is loaded (it no longer needs open() after that). */
static int send_load(Pod *p, const TwinKind *k, const char *seed, size_t seed_len)
{
        const struct sock_fprog *s2 = p->env->stage2 ? scp_program(p->env->stage2) : NULL;
        size_t bpf_len = s2 ? s2->len * sizeof(struct sock_filter) : 0;
        _cleanup_free_ char *body = malloc(seed_len + bpf_len + 1);
        _cleanup_json_ json_t *head =
                json_pack("{s:s, s:s, s:I, s:I}", "op", "load", "twin", k->name, "seed_len",
                          (json_int_t)seed_len, "pack_after_ms", (json_int_t)p->env->pack_after_ms);
        if (!body || !head)
                return -ENOMEM;
        memcpy(body, seed, seed_len);
        if (bpf_len)
                memcpy(body + seed_len, s2->filter, bpf_len);
        char *buf;
        size_t len;
        int r = frame_encode(0, head, body, seed_len + bpf_len, &buf, &len);
        if (r < 0)
                return r;
        return queue_out(p, buf, len);
}

/* Names pods "pod-<instance>-<n>": unique for this pomed, and not one a predecessor's
 * leftover (reaped at start, but maybe still going) could hold. */
static uint64_t pod_counter;
static uint32_t pod_instance;

int pod_spawn(const PodEnv *env, const TwinKind *k, const PodLimits *limits, const PodCallbacks *cb,
              void *userdata, Pod **ret, char *err, size_t errlen)
{
        Pod *p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->env = env;
        p->kind = k;
        p->fd = -1;
        p->cb = *cb;
        p->userdata = userdata;
        p->next_id = 1;
        p->sigsys_nr = -1;
        p->range_slot = -1;
        p->uid = env->uid;
        p->gid = env->gid;
        while (pod_instance == 0 && getrandom(&pod_instance, sizeof(pod_instance), 0) < 0 &&
               errno == EINTR)
                ;
        if (pod_instance == 0)
                pod_instance = (uint32_t)getpid();
        snprintf(p->name, sizeof(p->name), "pod-%08" PRIx32 "-%" PRIu64, pod_instance,
                 ++pod_counter);
        int r = 0;
        if (env->namespaces && env->range_n) {
                /* the lowest free uid: no two live pods share one, so neither can signal,
                 * trace or read the other, seccomp or not */
                size_t i = 0;
                while (i < env->range_n && env->range_used[i])
                        i++;
                if (i == env->range_n) {
                        r = -EUSERS;
                        snprintf(err, errlen,
                                 "no free uid in pod_uid_range (%zu pods run): widen the range",
                                 env->range_n);
                } else {
                        env->range_used[i] = 1;
                        p->range_slot = (ssize_t)i;
                        p->uid = (uid_t)(env->range_first + i);
                        p->gid = (gid_t)p->uid;
                }
        }

        if (r >= 0 && env->cgroups) {
                r = cg_pod_create(env->cgroups, p->name, limits, &p->cg);
                if (r < 0)
                        snprintf(err, errlen, "cannot create the cgroup of the %s pod: %s", k->name,
                                 strerror(-r));
        }
        int sv[2] = {-1, -1};
        if (r >= 0 && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
                r = negative_errno();
                snprintf(err, errlen, "socketpair: %s", strerror(-r));
        }
        if (r < 0) {
                pod_free(p);
                return r;
        }
        p->fd = sv[0];
        _cleanup_close_ int child_end = sv[1];
        (void)fcntl(p->fd, F_SETFL, O_NONBLOCK);

        char twin_arg[32], notify_env[160];
        snprintf(twin_arg, sizeof(twin_arg), "%s", k->name);
        snprintf(notify_env, sizeof(notify_env), "NOTIFY_SOCKET=%s", env->notify_path);
        char *argv[] = {(char *)"pome-pod", (char *)"--twin", twin_arg, NULL};
        /*
         * No malloc tcache in a pod: the up to 7 freed chunks a size it keeps stay "in use"
         * and pin pages of a world the pod freed, so an idle pod that packs its world gives
         * back far less (packed heap, GitHub's default world: 108 KiB resident with it, 40
         * without; pod Pss_Anon GitHub 168 → 92, Slack 124 → 88 KiB). Measured cost: the
         * engine's loop 21.8 → 23.2 µs a request; gateway GET and 1-connection latency
         * within noise in an interleaved A/B (18.6k vs 19.2k req/s).
         */
        char *envp[] = {notify_env, (char *)"LANG=C.UTF-8",
                        (char *)"GLIBC_TUNABLES=glibc.malloc.tcache_count=0", NULL};
        const int *cg_fds = NULL;
        size_t n_cg_fds = 0;
        if (p->cg)
                (void)cg_pod_join_fds(p->cg, &cg_fds, &n_cg_fds);
        PodSpec spec = {
                .exec_path = env->exec_path,
                .exec_fd = env->exec_fd,
                .argv = argv,
                .envp = envp,
                .uid = p->uid,
                .gid = p->gid,
                .cgroup_fds = cg_fds,
                .n_cgroup_fds = n_cg_fds,
                .stage1 = env->stage1 ? scp_program(env->stage1) : NULL,
                .pod_fd = child_end,
                .stderr_fd = STDERR_FILENO,
                .hostname = k->name,
                .unprivileged = !env->namespaces,
        };
        int pidfd = -1;
        r = spawn_pod(&spec, &p->pid, &pidfd, &p->setup);
        /* the child has its own copies of the fds (closed at its execve) */
        if (p->cg)
                cg_pod_close_join_fds(p->cg);
        if (r < 0) {
                snprintf(err, errlen, "cannot spawn the %s pod: %s", k->name, strerror(-r));
                pod_free(p);
                return r;
        }
        r = sd_event_add_child_pidfd(env->event, &p->child, pidfd, WEXITED, on_exit_, p);
        if (r < 0) {
                (void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
                (void)waitid(P_PIDFD, (id_t)pidfd, NULL, WEXITED);
                close(pidfd);
                snprintf(err, errlen, "cannot watch the %s pod: %s", k->name, strerror(-r));
                p->exited = true;
                pod_free(p);
                return r;
        }
        (void)sd_event_source_set_child_pidfd_own(p->child, true);
        (void)sd_event_source_set_child_process_own(p->child, true);
        if (env->by_pid) {
                r = hashmap_put_u64(env->by_pid, (uint64_t)p->pid, p);
                if (r < 0) {
                        snprintf(err, errlen, "cannot index the %s pod: %s", k->name, strerror(-r));
                        goto fail_running;
                }
                p->registered = true;
        }
        r = sd_event_add_io(env->event, &p->io, p->fd, EPOLLIN, on_io, p);
        if (r < 0) {
                snprintf(err, errlen, "cannot watch the %s pod's socket: %s", k->name,
                         strerror(-r));
                goto fail_running;
        }
        *ret = p;
        return 0;

fail_running:
        /* Kill and reap synchronously: the caller gets no callbacks for a failed start. */
        p->cb = (PodCallbacks){};
        (void)sd_event_source_send_child_signal(p->child, SIGKILL, NULL, 0);
        {
                int fd = sd_event_source_get_child_pidfd(p->child);
                (void)waitid(P_PIDFD, (id_t)fd, NULL, WEXITED);
        }
        p->exited = true;
        pod_free(p);
        return r;
}

bool pod_is_idle(const Pod *p)
{
        return p && !p->loaded && !p->exited && !p->broken && !p->kill_sent && !p->reaping;
}

int pod_load(Pod *p, const char *sid, const char *seed, size_t seed_len, const PodCallbacks *cb,
             void *userdata, char *err, size_t errlen)
{
        if (!pod_is_idle(p)) {
                snprintf(err, errlen, "the %s pod is not waiting for a seed", p->kind->name);
                return -ENOTCONN;
        }
        free(p->sid);
        p->sid = strdup(sid);
        if (!p->sid) {
                p->cb = (PodCallbacks){};
                return -ENOMEM;
        }
        p->cb = *cb;
        p->userdata = userdata;
        p->loaded = true;
        int r = send_load(p, p->kind, seed, seed_len);
        if (r == -EPIPE || r == -ECONNRESET) {
                /* it is dying (a failed exec, a kill): its exit, not this send, says why */
                mark_broken(p, -ECONNRESET, NULL);
                return 0;
        }
        if (r < 0) {
                snprintf(err, errlen, "cannot send the seed to the %s pod: %s", p->kind->name,
                         strerror(-r));
                p->cb = (PodCallbacks){}; /* the caller frees it: no callbacks for a failure */
        }
        return r;
}

int pod_start(const PodEnv *env, const char *sid, const TwinKind *k, const char *seed,
              size_t seed_len, const PodLimits *limits, const PodCallbacks *cb, void *userdata,
              Pod **ret, char *err, size_t errlen)
{
        Pod *p = NULL;
        int r = pod_spawn(env, k, limits, cb, userdata, &p, err, errlen);
        if (r < 0)
                return r;
        r = pod_load(p, sid, seed, seed_len, cb, userdata, err, errlen);
        if (r < 0) {
                pod_free(p); /* kills and reaps it */
                return r;
        }
        *ret = p;
        return 0;
}

void pod_kill(Pod *p, const char *why)
{
        if (!p || p->exited || p->reaping || p->kill_sent)
                return;
        p->kill_sent = true;
        p->kill_why = why ? why : "killed";
        /* pid 1 of a pid namespace ignores signals it has no handler for — except SIGKILL
         * from an ancestor namespace, which also takes every process in it down. */
        (void)sd_event_source_send_child_signal(p->child, SIGKILL, NULL, 0);
}

Pod *pod_free(Pod *p)
{
        if (!p)
                return NULL;
        if (!p->exited && p->child) {
                /* Freed while alive (pomed shutting down): kill and reap now. */
                int fd = sd_event_source_get_child_pidfd(p->child);
                (void)sd_event_source_send_child_signal(p->child, SIGKILL, NULL, 0);
                (void)waitid(P_PIDFD, (id_t)fd, NULL, WEXITED);
        }
        unregister(p);
        fail_calls(p, -ECONNRESET);
        sd_event_source_disable_unref(p->io);
        sd_event_source_disable_unref(p->eof_timer);
        sd_event_source_disable_unref(p->child);
        sd_event_source_disable_unref(p->release_timer);
        safe_close(p->fd);
        spawn_child_release(p->setup, NULL); /* reaped above */
        cg_pod_destroy(p->cg);
        frame_reader_done(&p->rd);
        free(p->out);
        free(p->status);
        free(p->kill_detail);
        free(p->sid);
        /* reaped above: the pid namespace's init is gone, and with it every process of
         * that uid, so the next pod may have it */
        if (p->range_slot >= 0)
                p->env->range_used[p->range_slot] = 0;
        free(p);
        return NULL;
}

uid_t pod_uid(const Pod *p)
{
        return p->uid;
}

pid_t pod_pid(const Pod *p)
{
        return p->pid;
}
bool pod_is_ready(const Pod *p)
{
        return p->ready && !p->exited && !p->broken;
}
bool pod_has_exited(const Pod *p)
{
        return p->exited;
}
const TwinKind *pod_kind(const Pod *p)
{
        return p->kind;
}
const char *pod_cgroup_path(const Pod *p, const char *controller)
{
        return p->cg ? cg_pod_path(p->cg, controller) : NULL;
}

void pod_notify(Pod *p, const char *msg)
{
        char *status = notify_field(msg, "STATUS");
        if (status) {
                free(p->status);
                p->status = status;
        }
        char *ready = notify_field(msg, "READY");
        bool is_ready = ready && streq(ready, "1");
        free(ready);
        if (is_ready && !p->ready && !p->exited && !p->broken) {
                p->ready = true;
                /* READY=1 comes from the pod program: the child exec'd, nothing to report */
                p->setup = spawn_child_release(p->setup, NULL);
                if (p->cb.ready)
                        p->cb.ready(p, p->userdata);
        }
}

static int on_call_timeout(sd_event_source *s _unused_, uint64_t usec _unused_, void *userdata)
{
        PodCall *c = userdata;
        Pod *p = c->pod;
        uint64_t id = c->id;
        /* A reply may be waiting in the socket: take it before judging the pod. Taking it
         * may also find the pod gone and fail (free) every call, this one included. */
        if (p->io)
                drain(p);
        PodCall *taken = call_take(p, id);
        if (!taken)
                return 0;
        /*
         * A pod that misses the deadline is hung (stopped, looping, swapping): it is killed
         * now, so nothing this call or a queued one carried can be applied later, after its
         * caller was told it failed.
         */
        call_finish(taken, -ETIMEDOUT, NULL);
        pod_kill(p, "pod_hung");
        return 0;
}

static int submit(Pod *p, char *buf, size_t len, uint64_t id, uint64_t timeout_usec, PodReplyFn cb,
                  void *userdata)
{
        PodCall *c = calloc(1, sizeof(*c));
        if (!c) {
                free(buf);
                return -ENOMEM;
        }
        *c = (PodCall){.pod = p, .id = id, .cb = cb, .userdata = userdata};
        int r = sd_event_add_time_relative(p->env->event, &c->timer, CLOCK_MONOTONIC, timeout_usec,
                                           USEC_PER_MSEC, on_call_timeout, c);
        if (r < 0) {
                free(buf);
                free(c);
                return r;
        }
        r = queue_out(p, buf, len);
        if (r < 0) {
                call_free(c);
                return r;
        }
        c->next = p->calls;
        p->calls = c;
        p->n_calls++;
        return 0;
}

int pod_call(Pod *p, const TwinRequest *rq, uint64_t timeout_usec, PodReplyFn cb, void *userdata)
{
        if (!pod_is_ready(p) || p->kill_sent)
                return -ENOTCONN;
        /* Backpressure before the call reaches the pod: bounded calls and bytes queued. */
        if ((p->env->max_pending && p->n_calls >= p->env->max_pending) || p->out_len > POD_OUT_MAX)
                return -EBUSY;
        uint64_t id = p->next_id++;
        char *buf;
        size_t len;
        int r = podwire_encode_request(id, rq, &buf, &len);
        if (r < 0)
                return r;
        return submit(p, buf, len, id, timeout_usec, cb, userdata);
}

int pod_export(Pod *p, uint64_t timeout_usec, PodReplyFn cb, void *userdata)
{
        if (!pod_is_ready(p) || p->kill_sent)
                return -ENOTCONN;
        uint64_t id = p->next_id++;
        _cleanup_json_ json_t *head = json_pack("{s:s}", "op", "export");
        char *buf;
        size_t len;
        int r = head ? frame_encode(id, head, NULL, 0, &buf, &len) : -ENOMEM;
        if (r < 0)
                return r;
        return submit(p, buf, len, id, timeout_usec, cb, userdata);
}

size_t pod_pending(const Pod *p)
{
        return p->n_calls;
}
