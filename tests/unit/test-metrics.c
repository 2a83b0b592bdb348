/* SPDX-License-Identifier: MIT */
/* metrics: the exposition text — series made on first use, cumulative histogram buckets,
 * label escaping (https://prometheus.io/docs/instrumenting/exposition_formats/). */
#include <string.h>

#include "common/util.h"
#include "supervisor/metrics.h"
#include "tests/unit/check.h"

static char *render(const Metrics *m)
{
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        CHECK(f != NULL);
        CHECK_OK(metrics_write(m, f));
        CHECK(fclose(f) == 0);
        return text;
}

int main(void)
{
        Metrics *m = NULL;
        CHECK_OK(metrics_new(&m));
        _cleanup_free_ char *empty = render(m);
        /* every family announced, no sample invented */
        CHECK(strstr(empty, "# TYPE pome_pod_exits_total counter\n") != NULL);
        CHECK(strstr(empty, "# TYPE pome_pod_ready_duration_seconds histogram\n") != NULL);
        CHECK(strstr(empty, "pome_pod_exits_total{") == NULL);

        metrics_pod_exited(m, "github", "killed");
        metrics_pod_exited(m, "github", "killed");
        metrics_pod_exited(m, "github", "signal:SIGKILL");
        metrics_gateway_reply(m, "slack", 200);
        metrics_tape_row(m, "slack", 100);
        metrics_tape_row(m, "slack", 23);
        metrics_pod_ready(m, "github", 3000);    /* 3 ms */
        metrics_pod_ready(m, "github", 3000000); /* 3 s */
        metrics_sandbox_ended(m, "a\"b\\c\nd", "failed");
        _cleanup_free_ char *t = render(m);
        CHECK(strstr(t, "pome_pod_exits_total{twin=\"github\",reason=\"killed\"} 2\n") != NULL);
        CHECK(strstr(t, "pome_pod_exits_total{twin=\"github\",reason=\"signal:SIGKILL\"} 1\n"));
        CHECK(strstr(t, "pome_gateway_requests_total{twin=\"slack\",code=\"200\"} 1\n"));
        CHECK(strstr(t, "pome_tape_rows_total{twin=\"slack\"} 2\n"));
        CHECK(strstr(t, "pome_tape_bytes_total{twin=\"slack\"} 123\n"));
        /* cumulative: 3 ms is in every bucket from 0.005 s up, 3 s from 5 s up */
        CHECK(strstr(t,
                     "pome_pod_ready_duration_seconds_bucket{twin=\"github\",le=\"0.0025\"} 0\n"));
        CHECK(strstr(t,
                     "pome_pod_ready_duration_seconds_bucket{twin=\"github\",le=\"0.005\"} 1\n"));
        CHECK(strstr(t, "pome_pod_ready_duration_seconds_bucket{twin=\"github\",le=\"2.5\"} 1\n"));
        CHECK(strstr(t, "pome_pod_ready_duration_seconds_bucket{twin=\"github\",le=\"5\"} 2\n"));
        CHECK(strstr(t, "pome_pod_ready_duration_seconds_bucket{twin=\"github\",le=\"+Inf\"} 2\n"));
        CHECK(strstr(t, "pome_pod_ready_duration_seconds_sum{twin=\"github\"} 3.003000\n"));
        CHECK(strstr(t, "pome_pod_ready_duration_seconds_count{twin=\"github\"} 2\n"));
        /* a label value can hold neither a quote, a backslash nor a newline raw */
        CHECK(strstr(t,
                     "pome_sandboxes_ended_total{team=\"a\\\"b\\\\c\\nd\",state=\"failed\"} 1\n"));
        metrics_free(m);
        return check_finish();
}
