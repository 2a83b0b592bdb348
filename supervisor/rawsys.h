/* SPDX-License-Identifier: MIT */
/*
 * A raw system call for the children the spawners make between clone and execve
 * (supervisor/spawn.c's twin pods, supervisor/agentpod.c's agent pods): raw_sys(nr, args…)
 * returns the kernel's result, -errno on failure, and leaves errno untouched — a child that
 * shares the parent's memory (CLONE_VM) must not write the parent's errno, and none may go
 * through glibc's wrappers or the sanitizers' interceptors. x86-64 inline (what this is
 * built and tested on, RAW_SYS_INLINE 1); elsewhere syscall(3), which sets errno (fit only
 * for a fork-style child, with its own copy of it).
 */
#pragma once

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define RAW_SYS_INLINE 1
static inline __attribute__((always_inline)) long raw_sys6(long n, long a, long b, long c, long d,
                                                           long e, long f)
{
        register long r10 __asm__("r10") = d;
        register long r8 __asm__("r8") = e;
        register long r9 __asm__("r9") = f;
        long ret;
        __asm__ volatile("syscall"
                         : "=a"(ret)
                         : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                         : "rcx", "r11", "memory");
        return ret;
}
#else
#define RAW_SYS_INLINE 0
static inline long raw_sys6(long n, long a, long b, long c, long d, long e, long f)
{
        long r = syscall(n, a, b, c, d, e, f);
        return r < 0 ? -errno : r;
}
#endif
#define RAW_SYS_(n, a, b, c, d, e, f, ...) \
        raw_sys6((long)(n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))
#define raw_sys(...) RAW_SYS_(__VA_ARGS__, 0, 0, 0, 0, 0, 0)
