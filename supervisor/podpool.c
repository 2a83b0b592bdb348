/* SPDX-License-Identifier: MIT */
#include "supervisor/podpool.h"

#include "common/timeutil.h"
#include "common/util.h"
#include "supervisor/log.h"

#define BACKOFF_MIN_USEC (100 * USEC_PER_MSEC)
#define BACKOFF_MAX_USEC (30 * USEC_PER_SEC)

typedef struct PoolKind PoolKind;

/* One pod of the pool, idle, or on its way out (killed, not reaped yet). */
typedef struct PoolPod {
        Pod *pod;
        PoolKind *kind;
        struct PoolPod *next;
} PoolPod;

struct PoolKind {
        PodPool *pool;
        const Image *image;
        unsigned size;       /* idle pods wanted */
        size_t idle;         /* of them, alive and waiting */
        PoolPod *pods;       /* idle ones and dying ones */
        unsigned failures;   /* pods in a row that died idle or did not spawn */
        uint64_t not_before; /* CLOCK_MONOTONIC µs: no spawn before (back-off) */
};

struct PodPool {
        sd_event *event;
        const PodEnv *env;
        PoolKind *kinds;
        size_t n;
        unsigned total;          /* sum of the sizes */
        sd_event_source *refill; /* defer, idle priority */
        sd_event_source *backoff;
        bool draining;
        bool (*hold)(void *userdata); /* true: not now (creates are waiting for READY) */
        void *hold_userdata;
};

static void schedule(PodPool *pp);

static void pool_pod_exited(Pod *p, const char *how, const char *detail, void *userdata)
{
        PoolPod *pp_pod = userdata;
        PoolKind *k = pp_pod->kind;
        PodPool *pp = k->pool;
        bool was_idle = !streq(how, "killed");
        for (PoolPod **q = &k->pods; *q; q = &(*q)->next)
                if (*q == pp_pod) {
                        *q = pp_pod->next;
                        break;
                }
        if (was_idle) {
                /* died waiting for a seed: not of a sandbox's doing, so said and replaced */
                k->idle--;
                k->failures++;
                uint64_t delay = BACKOFF_MIN_USEC << (k->failures < 9 ? k->failures - 1 : 8);
                if (delay > BACKOFF_MAX_USEC)
                        delay = BACKOFF_MAX_USEC;
                k->not_before = now_usec(CLOCK_MONOTONIC) + delay;
                log_warning("pool: an idle %s pod (pid %d) %s%s%s; the next one in %" PRIu64 " ms",
                            k->image->kind->name, (int)pod_pid(p), how,
                            detail && *detail ? ": " : "", strempty(detail), delay / USEC_PER_MSEC);
        }
        pod_free(p);
        free(pp_pod);
        schedule(pp);
}

static const PodCallbacks pool_callbacks = {.exited = pool_pod_exited};

/* Free uids of pod_uid_range: the pool only draws on them while it cannot starve creates. */
static bool uids_to_spare(const PodPool *pp)
{
        const PodEnv *env = pp->env;
        if (!env->namespaces || !env->range_n)
                return true;
        size_t free_uids = 0;
        for (size_t i = 0; i < env->range_n; i++)
                free_uids += !env->range_used[i];
        return free_uids > pp->total;
}

static int spawn_one(PoolKind *k)
{
        PodPool *pp = k->pool;
        PoolPod *pp_pod = calloc(1, sizeof(*pp_pod));
        if (!pp_pod)
                return -ENOMEM;
        char err[256] = "";
        /* a refill never holds the loop through the child's cgroup join (an RCU grace
         * period on cgroup v1 after a quiet spell, ~10 ms): pod_spawn does not wait */
        int r = pod_spawn(pp->env, k->image->kind, &k->image->limits, &pool_callbacks, pp_pod,
                          &pp_pod->pod, err, sizeof(err));
        if (r < 0) {
                free(pp_pod);
                k->failures++;
                uint64_t delay = BACKOFF_MIN_USEC << (k->failures < 9 ? k->failures - 1 : 8);
                k->not_before = now_usec(CLOCK_MONOTONIC) +
                                (delay > BACKOFF_MAX_USEC ? BACKOFF_MAX_USEC : delay);
                log_warning("pool: %s", err[0] ? err : strerror(-r));
                return r;
        }
        pp_pod->kind = k;
        pp_pod->next = k->pods;
        k->pods = pp_pod;
        k->idle++;
        return 0;
}

static int on_backoff(sd_event_source *s _unused_, uint64_t usec _unused_, void *userdata)
{
        schedule(userdata);
        return 0;
}

/* One spawn per idle turn, for the kind furthest below its size. */
static int on_refill(sd_event_source *s _unused_, void *userdata)
{
        PodPool *pp = userdata;
        /* held: podpool_kick brings it back once the creates are answered */
        if (pp->draining || !uids_to_spare(pp) || (pp->hold && pp->hold(pp->hold_userdata)))
                return 0;
        uint64_t now = now_usec(CLOCK_MONOTONIC), wake = 0;
        PoolKind *best = NULL;
        for (size_t i = 0; i < pp->n; i++) {
                PoolKind *k = &pp->kinds[i];
                if (k->idle >= k->size)
                        continue;
                if (k->not_before > now) {
                        wake = !wake || k->not_before < wake ? k->not_before : wake;
                        continue;
                }
                if (!best || k->size - k->idle > best->size - best->idle)
                        best = k;
        }
        if (best) {
                (void)spawn_one(best);
                schedule(pp);
        } else if (wake) {
                (void)sd_event_source_set_time(pp->backoff, wake);
                (void)sd_event_source_set_enabled(pp->backoff, SD_EVENT_ONESHOT);
        }
        return 0;
}

static void schedule(PodPool *pp)
{
        if (!pp->draining && pp->refill)
                (void)sd_event_source_set_enabled(pp->refill, SD_EVENT_ONESHOT);
}

int podpool_new(sd_event *e, const PodEnv *env, const Images *images, const unsigned *sizes,
                bool (*hold)(void *userdata), void *userdata, PodPool **ret)
{
        PodPool *pp = calloc(1, sizeof(*pp));
        if (!pp)
                return -ENOMEM;
        pp->event = e;
        pp->env = env;
        pp->hold = hold;
        pp->hold_userdata = userdata;
        pp->kinds = calloc(images->n ? images->n : 1, sizeof(PoolKind));
        int r = pp->kinds ? 0 : -ENOMEM;
        for (size_t i = 0; r >= 0 && i < images->n; i++) {
                pp->kinds[i] = (PoolKind){.pool = pp,
                                          .image = &images->images[i],
                                          .size = sizes[i] < PODPOOL_SIZE_MAX ? sizes[i]
                                                                              : PODPOOL_SIZE_MAX};
                pp->total += pp->kinds[i].size;
        }
        pp->n = images->n;
        if (r >= 0 && pp->total > 0) {
                r = sd_event_add_defer(e, &pp->refill, on_refill, pp);
                if (r >= 0)
                        r = sd_event_source_set_priority(pp->refill, SD_EVENT_PRIORITY_IDLE);
                if (r >= 0)
                        r = sd_event_add_time(e, &pp->backoff, CLOCK_MONOTONIC, 0,
                                              10 * USEC_PER_MSEC, on_backoff, pp);
                if (r >= 0)
                        r = sd_event_source_set_enabled(pp->backoff, SD_EVENT_OFF);
        }
        if (r < 0) {
                podpool_free(pp);
                return r;
        }
        schedule(pp);
        *ret = pp;
        return 0;
}

PodPool *podpool_free(PodPool *pp)
{
        if (!pp)
                return NULL;
        pp->draining = true;
        sd_event_source_disable_unref(pp->refill);
        sd_event_source_disable_unref(pp->backoff);
        for (size_t i = 0; pp->kinds && i < pp->n; i++)
                while (pp->kinds[i].pods) {
                        PoolPod *q = pp->kinds[i].pods;
                        pp->kinds[i].pods = q->next;
                        pod_free(q->pod); /* kills and reaps it, removes its cgroup */
                        free(q);
                }
        free(pp->kinds);
        free(pp);
        return NULL;
}

static PoolKind *kind_of(const PodPool *pp, const Image *img)
{
        for (size_t i = 0; pp && i < pp->n; i++)
                if (pp->kinds[i].image == img)
                        return &pp->kinds[i];
        return NULL;
}

Pod *podpool_take(PodPool *pp, const Image *img)
{
        PoolKind *k = kind_of(pp, img);
        if (!k || pp->draining)
                return NULL;
        for (PoolPod **q = &k->pods; *q; q = &(*q)->next) {
                PoolPod *pp_pod = *q;
                if (!pod_is_idle(pp_pod->pod))
                        continue; /* on its way out: its exit comes to the pool */
                *q = pp_pod->next;
                Pod *p = pp_pod->pod;
                free(pp_pod);
                k->idle--;
                k->failures = 0;
                schedule(pp);
                return p;
        }
        return NULL;
}

void podpool_drain(PodPool *pp)
{
        if (!pp || pp->draining)
                return;
        pp->draining = true;
        (void)sd_event_source_set_enabled(pp->refill, SD_EVENT_OFF);
        (void)sd_event_source_set_enabled(pp->backoff, SD_EVENT_OFF);
        for (size_t i = 0; i < pp->n; i++)
                for (PoolPod *q = pp->kinds[i].pods; q; q = q->next)
                        if (pod_is_idle(q->pod)) {
                                pp->kinds[i].idle--;
                                pod_kill(q->pod, NULL); /* "killed": its exit is not a failure */
                        }
}

void podpool_kick(PodPool *pp)
{
        if (pp)
                schedule(pp);
}

size_t podpool_idle(const PodPool *pp, const Image *img)
{
        const PoolKind *k = kind_of(pp, img);
        return k ? k->idle : 0;
}

unsigned podpool_size(const PodPool *pp, const Image *img)
{
        const PoolKind *k = kind_of(pp, img);
        return k ? k->size : 0;
}
