/* SPDX-License-Identifier: MIT */
/*
 * pome-grade-run-dir DIR [TASK]: grades a run directory with grade_run_dir — the call pomed's
 * finalize makes and `pome eval RUN_DIR` will make — and writes the verdict's bytes to
 * stdout. Exit 0, or 1 with the library's message on stderr. tests/integration/
 * test-graded-finalize.sh compares its output with the verdict.json pomed wrote, byte for
 * byte, until `pome eval` exists to do the same.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pods/grade/grade.h"

int main(int argc, char **argv)
{
        if (argc < 2 || argc > 3) {
                fprintf(stderr, "usage: %s RUN_DIR [TASK_FILE]\n", argv[0]);
                return 2;
        }
        char *out = NULL;
        size_t len = 0;
        GradeError e = {};
        int r = grade_run_dir(argv[1], argc == 3 ? argv[2] : NULL, &out, &len, &e);
        if (r < 0) {
                fprintf(stderr, "%s: %s\n", argv[1], *e.message ? e.message : strerror(-r));
                return 1;
        }
        int ok = fwrite(out, 1, len, stdout) == len && fflush(stdout) == 0;
        free(out);
        return ok ? 0 : 1;
}
