/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the seccomp policy parser and compiler (supervisor/seccomp-policy.c):
 * any input either compiles to a program of whole BPF instructions or fails with -EINVAL
 * and a NUL-terminated message that names the input.
 */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "supervisor/seccomp-policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        ScpProgram *p = NULL;
        char err[256];
        memset(err, 'x', sizeof(err));
        err[sizeof(err) - 1] = 0;

        int r = scp_compile_text((const char *)data, size, "fuzz", &p, err, sizeof(err));
        if (r == 0) {
                size_t n;
                assert(p && scp_data(p, &n) && n > 0 && n % sizeof(struct sock_filter) == 0);
                assert(scp_program(p)->len == n / sizeof(struct sock_filter));
        } else {
                assert(!p);
                assert(memchr(err, 0, sizeof(err)) != NULL);
                if (r == -EINVAL)
                        assert(strncmp(err, "fuzz", 4) == 0);
        }
        scp_free(p);
        return 0;
}
