/* SPDX-License-Identifier: MIT */
#include "supervisor/metrics.h"

#include <inttypes.h>

#include "common/util.h"

/* Seconds; spawn → READY takes ~ms here, a slow host or a large seed hundreds of ms. */
static const double buckets[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                 0.25,  0.5,    1,     2.5,  5,     10};
#define N_BUCKETS ELEMENTSOF(buckets)

typedef enum Family {
        FAM_ENDED,
        FAM_POD_EXITS,
        FAM_GATEWAY,
        FAM_TAPE_ROWS,
        FAM_TAPE_BYTES,
        FAM_SANDBOX_READY,
        FAM_POD_READY,
        _FAM_MAX,
} Family;

static const struct {
        const char *name, *type, *help;
        const char *label1, *label2; /* label names (label2 may be NULL) */
} families[_FAM_MAX] = {
        [FAM_ENDED] = {"pome_sandboxes_ended_total", "counter",
                       "Sandboxes that left the open states since pomed started, by team and the "
                       "state they ended in.",
                       "team", "state"},
        [FAM_POD_EXITS] = {"pome_pod_exits_total", "counter",
                           "Pods that ended since pomed started, by twin and how (killed by "
                           "pomed, oom_killed, signal:…, seccomp_violation:…).",
                           "twin", "reason"},
        [FAM_GATEWAY] = {"pome_gateway_requests_total", "counter",
                         "Requests the twin gateway answered, by twin and HTTP status.", "twin",
                         "code"},
        [FAM_TAPE_ROWS] = {"pome_tape_rows_total", "counter", "Tape rows written, by twin.", "twin",
                           NULL},
        [FAM_TAPE_BYTES] = {"pome_tape_bytes_total", "counter", "Tape bytes written, by twin.",
                            "twin", NULL},
        [FAM_SANDBOX_READY] = {"pome_sandbox_create_duration_seconds", "histogram",
                               "Time from an accepted create to the sandbox ready (every pod "
                               "reported READY=1).",
                               NULL, NULL},
        [FAM_POD_READY] = {"pome_pod_ready_duration_seconds", "histogram",
                           "Time from a pod's spawn to its READY=1, by twin.", "twin", NULL},
};

typedef struct Series {
        Family family;
        char *l1, *l2;
        uint64_t value;             /* counters: the count; histograms: the count */
        uint64_t sum_usec;          /* histograms */
        uint64_t bucket[N_BUCKETS]; /* histograms: non-cumulative counts */
} Series;

struct Metrics {
        Series *series;
        size_t n;
};

int metrics_new(Metrics **ret)
{
        Metrics *m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        *ret = m;
        return 0;
}

Metrics *metrics_free(Metrics *m)
{
        if (!m)
                return NULL;
        for (size_t i = 0; i < m->n; i++) {
                free(m->series[i].l1);
                free(m->series[i].l2);
        }
        free(m->series);
        free(m);
        return NULL;
}

/* The series of family with these labels, made on first use; NULL on OOM (the event is then
 * not counted: metrics never fail the caller). */
static Series *series(Metrics *m, Family f, const char *l1, const char *l2)
{
        if (!m)
                return NULL;
        for (size_t i = 0; i < m->n; i++)
                if (m->series[i].family == f && streq_ptr(m->series[i].l1, l1) &&
                    streq_ptr(m->series[i].l2, l2))
                        return &m->series[i];
        Series *a = realloc(m->series, (m->n + 1) * sizeof(*a));
        if (!a)
                return NULL;
        m->series = a;
        Series *s = &a[m->n];
        *s = (Series){.family = f, .l1 = l1 ? strdup(l1) : NULL, .l2 = l2 ? strdup(l2) : NULL};
        if ((l1 && !s->l1) || (l2 && !s->l2)) {
                free(s->l1);
                free(s->l2);
                return NULL;
        }
        m->n++;
        return s;
}

static void count(Metrics *m, Family f, const char *l1, const char *l2, uint64_t by)
{
        Series *s = series(m, f, l1, l2);
        if (s)
                s->value += by;
}

static void observe(Metrics *m, Family f, const char *l1, uint64_t usec)
{
        Series *s = series(m, f, l1, NULL);
        if (!s)
                return;
        s->value++;
        s->sum_usec += usec;
        double sec = (double)usec / 1e6;
        for (size_t i = 0; i < N_BUCKETS; i++)
                if (sec <= buckets[i]) {
                        s->bucket[i]++;
                        break;
                }
}

void metrics_sandbox_ended(Metrics *m, const char *team, const char *state)
{
        count(m, FAM_ENDED, team, state, 1);
}

void metrics_sandbox_ready(Metrics *m, uint64_t usec)
{
        observe(m, FAM_SANDBOX_READY, NULL, usec);
}

void metrics_pod_ready(Metrics *m, const char *twin, uint64_t usec)
{
        observe(m, FAM_POD_READY, twin, usec);
}

void metrics_pod_exited(Metrics *m, const char *twin, const char *reason)
{
        count(m, FAM_POD_EXITS, twin, reason, 1);
}

void metrics_gateway_reply(Metrics *m, const char *twin, int status)
{
        char code[16];
        snprintf(code, sizeof(code), "%d", status);
        count(m, FAM_GATEWAY, twin, code, 1);
}

void metrics_tape_row(Metrics *m, const char *twin, uint64_t bytes)
{
        count(m, FAM_TAPE_ROWS, twin, NULL, 1);
        count(m, FAM_TAPE_BYTES, twin, NULL, bytes);
}

void metrics_write_label(FILE *f, const char *s)
{
        for (; s && *s; s++) {
                if (*s == '\\' || *s == '"')
                        fputc('\\', f);
                if (*s == '\n')
                        fputs("\\n", f);
                else
                        fputc(*s, f);
        }
}

/* {l1="…",l2="…"} plus an extra le="…" (NULL: none); nothing when there are no labels. */
static void write_labels(FILE *f, Family fam, const Series *s, const char *le)
{
        const char *names[] = {families[fam].label1, families[fam].label2, le ? "le" : NULL};
        const char *values[] = {s->l1, s->l2, le};
        bool open = false;
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                if (!names[i])
                        continue;
                fprintf(f, "%s%s=\"", open ? "," : "{", names[i]);
                metrics_write_label(f, values[i]);
                fputc('"', f);
                open = true;
        }
        if (open)
                fputc('}', f);
}

int metrics_write(const Metrics *m, FILE *f)
{
        for (Family fam = 0; fam < _FAM_MAX; fam++) {
                const char *name = families[fam].name;
                fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, families[fam].help, name,
                        families[fam].type);
                bool hist = streq(families[fam].type, "histogram");
                for (size_t i = 0; i < m->n; i++) {
                        const Series *s = &m->series[i];
                        if (s->family != fam)
                                continue;
                        if (!hist) {
                                fputs(name, f);
                                write_labels(f, fam, s, NULL);
                                fprintf(f, " %" PRIu64 "\n", s->value);
                                continue;
                        }
                        uint64_t cum = 0;
                        char le[32];
                        for (size_t b = 0; b <= N_BUCKETS; b++) {
                                if (b < N_BUCKETS) {
                                        cum += s->bucket[b];
                                        snprintf(le, sizeof(le), "%g", buckets[b]);
                                } else {
                                        cum = s->value;
                                        snprintf(le, sizeof(le), "+Inf");
                                }
                                fprintf(f, "%s_bucket", name);
                                write_labels(f, fam, s, le);
                                fprintf(f, " %" PRIu64 "\n", cum);
                        }
                        fprintf(f, "%s_sum", name);
                        write_labels(f, fam, s, NULL);
                        fprintf(f, " %.6f\n", (double)s->sum_usec / 1e6);
                        fprintf(f, "%s_count", name);
                        write_labels(f, fam, s, NULL);
                        fprintf(f, " %" PRIu64 "\n", s->value);
                }
        }
        return ferror(f) ? -EIO : 0;
}
