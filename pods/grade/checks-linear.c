/* SPDX-License-Identifier: MIT */
/*
 * Linear's checks, read against the Linear twin's world (pods/linear). SKELETON (issue 28).
 */
#include <string.h>

#include "common/json-util.h"
#include "pods/grade/check.h"

static int check_label_exists(const GradeCheckInput *in, GradeOutcome *o)
{
        const char *want = json_string_value(json_object_get(in->args, "name"));
        json_t *labels = json_object_get(in->final, "labels"), *l;
        size_t i;
        o->status = GRADE_FAILED;
        json_array_foreach (labels, i, l)
                if (want && streq(json_string_value(json_object_get(l, "name")) ?: "", want))
                        o->status = GRADE_PASSED;
        o->reason = strdup(o->status == GRADE_PASSED ? "The label exists." : "No such label.");
        return o->reason ? 0 : -ENOMEM;
}

static const GradeParam p_label[] = {{"name", GRADE_PARAM_LABEL, .description = "label name"}};

const GradeCheck grade_checks_linear[] = {
        {"linear.label-exists", "linear", "A label named \"{name}\" exists",
         "A user label with this name exists in the final mailbox.", GRADE_SUBSTRATE_FINAL,
         GRADE_POSITIVE, NULL, p_label, ELEMENTSOF(p_label), check_label_exists},
};
const size_t grade_n_checks_linear = ELEMENTSOF(grade_checks_linear);
