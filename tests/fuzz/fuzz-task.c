/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: the task parser (Markdown sections, criterion markers, ## Config YAML, ## Seed
 * State JSON), then binding and grading what it accepted against an empty run.
 */
#include "common/json-util.h"
#include "common/strv.h"
#include "pods/grade/check.h"
#include "tests/fuzz/fuzz-assert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        GradeTask *t = NULL;
        GradeError e = {};
        int r = grade_task_parse((const char *)data, size, "task.md", NULL, 0, &t, &e);
        if (r < 0) {
                /* a refusal names the file and a line, and nothing is handed out */
                ASSERT(r == -EINVAL || r == -ENOMEM);
                ASSERT(!t);
                ASSERT(r != -EINVAL || startswith(e.message, "task.md:"));
                return 0;
        }
        size_t twins = strv_length(t->twins);
        ASSERT(twins >= 1 && twins <= 3 && t->n_criteria >= 1 && t->prompt[0]);
        ASSERT(t->pass_threshold >= 0 && t->pass_threshold <= 100 && t->timeout_sec >= 1);
        ASSERT(json_is_object(t->seeds));
        for (size_t i = 0; i < t->n_criteria; i++) {
                const GradeCriterion *c = &t->criteria[i];
                ASSERT(c->line >= 1 && c->text[0]);
                ASSERT(!c->twin || strv_contains(t->twins, c->twin));
                ASSERT(!(c->always_scored && c->kind == GRADE_CRITERION_MODEL));
        }
        /* grading what parsed never fails for want of a run, and renders the same twice */
        json_t *v = NULL;
        r = grade_run(t, NULL, 0, NULL, &v, &e);
        ASSERT(r == 0 || r == -ENOMEM);
        if (r == 0) {
                char *a = NULL, *b = NULL;
                size_t al = 0, bl = 0;
                if (grade_verdict_render(v, &a, &al) == 0 && grade_verdict_render(v, &b, &bl) == 0)
                        ASSERT(al == bl && memcmp(a, b, al) == 0);
                ASSERT(json_array_size(json_object_get(v, "criteria")) == t->n_criteria);
                /* with no final state and no tape, nothing passes */
                ASSERT(json_integer_value(
                               json_object_get(json_object_get(v, "counts"), "passed")) == 0);
                free(a);
                free(b);
                json_decref(v);
        }
        grade_task_free(t);
        return 0;
}
