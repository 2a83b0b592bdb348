/* SPDX-License-Identifier: MIT */
/*
 * pomed's counters and histograms for GET /metrics, in the Prometheus text exposition
 * format 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/). The
 * sandbox state machine, the pod callbacks and the gateway's listener report events
 * here; the manager adds the gauges it knows live (sandboxes by state, slots) when it
 * renders. A low layer: it never logs. Label values are few by construction (teams,
 * twins, states, exit reasons, HTTP statuses), each series allocated once.
 */
#pragma once

#include <stdint.h>
#include <stdio.h>

typedef struct Metrics Metrics;

/* A new, empty set. -ENOMEM. */
int metrics_new(Metrics **ret);

/* Accepts NULL; returns NULL. */
Metrics *metrics_free(Metrics *m);

/* A sandbox of team left the open states as state (done, expired, failed, stopped). */
void metrics_sandbox_ended(Metrics *m, const char *team, const char *state);

/* A sandbox was ready usec after its create was accepted (all its pods up). */
void metrics_sandbox_ready(Metrics *m, uint64_t usec);

/* A pod of twin reported READY=1 usec after it was spawned. */
void metrics_pod_ready(Metrics *m, const char *twin, uint64_t usec);

/* A pod of twin ended; reason is its exit as the API reports it (killed, oom_killed, …). */
void metrics_pod_exited(Metrics *m, const char *twin, const char *reason);

/* The twin gateway answered a request for twin ("none": no twin's path) with status. */
void metrics_gateway_reply(Metrics *m, const char *twin, int status);

/* One tape row of bytes bytes was written for twin. */
void metrics_tape_row(Metrics *m, const char *twin, uint64_t bytes);

/*
 * Writes every family this set holds, with its HELP and TYPE lines, to f. Families with
 * no series yet are written with their HELP and TYPE only (counters at zero are not
 * invented: a series appears with its first event). 0 or -EIO.
 */
int metrics_write(const Metrics *m, FILE *f);

/* Writes s as a label value: \ → \\, " → \", newline → \n. */
void metrics_write_label(FILE *f, const char *s);
