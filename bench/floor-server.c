/* SPDX-License-Identifier: MIT */
/*
 * The server of the fork+exec floor (bench/floor.c): the least a pod can do once it is
 * started. fd 3 is its end of a socketpair: it writes "R" (READY), then echoes whatever it
 * reads and exits 0 at EOF. Static, as pome-pod is, so that execve maps no loader and no
 * libc.so. Not built by CMake:
 *   cc -O2 -static -o floor-server bench/floor-server.c
 */
#include <unistd.h>

int main(void)
{
        char buf[4096];
        ssize_t n;

        if (write(3, "R", 1) != 1)
                return 1;
        while ((n = read(3, buf, sizeof(buf))) > 0)
                if (write(3, buf, (size_t)n) != n)
                        return 1;
        return n < 0 ? 1 : 0;
}
