/* SPDX-License-Identifier: MIT */
/*
 * Seccomp policies (DESIGN.md "Pod isolation"). The only module that includes libseccomp.
 *
 * Policy text (policies/pod-stage1.policy, policies/pod-stage2.policy, policies/agent.policy):
 *   # comment                 '#' starts a comment anywhere on a line
 *   [default allow]           optional, before any section: a deny-list (see below)
 *   [allow]                   the syscalls below are allowed
 *   read
 *   [kill]                    the syscalls below kill the whole process (SIGSYS)
 *   ptrace
 *   socket a0 != AF_UNIX      a rule for some arguments only
 *   [errno EPERM]             the syscalls below fail with that errno
 *   bpf
 * One syscall name per line, blank lines ignored. After the name, up to three
 * comparisons of distinct arguments (all must hold): "aN == V" (the low 32 bits of argument
 * N equal V: int arguments, whose upper bits the kernel drops), "aN != V", "aN & V" (every
 * bit of V is set), "aN & M == V" (the bits of mask M are those of V: "personality
 * a0 & 0x80040000 == 0x40000" is ADDR_NO_RANDOMIZE without bit 31). V and M are numbers
 * (decimal or 0x…) or one of AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_PACKET, AF_VSOCK,
 * SIGSYS, CLONE_NEW{NS,CGROUP,UTS,IPC,USER,PID,NET,TIME}, TIOCSTI, TIOCLINUX. A name comes at most
 * once, or several times with comparisons on each line (any of its lines may match; one action per
 * name and argument values). [kill] is SECCOMP_RET_TRAP: the pod's SIGSYS handler
 * (pods/pod/sigsys.h) reports which syscall it was, then the pod dies by SIGSYS as it would under
 * KILL_PROCESS. [errno E] is SECCOMP_RET_ERRNO: the call fails with E, one of EPERM, EACCES,
 * ENOSYS, EINVAL, EAFNOSUPPORT, EOPNOTSUPP; several such sections may name different errnos. The
 * default — what a syscall not listed gets:
 *   - an allow-list (the twin pods' policies, no directive): it fails with ENOSYS, so libc
 *     falls back as on an older kernel (clone3 → clone, faccessat2 → faccessat, rseq →
 *     none); an [errno ENOSYS] line would say the default again and is refused;
 *   - a deny-list ("[default allow]", first: the agent pod's policy): it is allowed, so a
 *     program (bash, node, python, curl) runs unchanged and the policy names what it
 *     refuses; an [allow] line would say the default again and is refused.
 * A name the architecture does not have (open on aarch64, socketcall on x86_64) is
 * accepted and adds nothing; a name no architecture has (or that this libseccomp does not
 * know: 2.5.4 knows nothing newer than Linux 6.1, e.g. not statmount) is an error.
 * Syscalls of another architecture and of the x32 ABI kill the process, whatever the
 * default: the filter is built for the native architecture only with
 * SCMP_FLTATR_ACT_BADARCH = KILL_PROCESS, and libseccomp (2.5) routes x86_64 syscall
 * numbers with the x32 bit (0x40000000) to that same action.
 */
#pragma once

#include <linux/filter.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ScpProgram ScpProgram;

/*
 * Reads and compiles the policy at path into classic BPF, ready for
 * seccomp(SECCOMP_SET_MODE_FILTER) (seccomp(2)). Returns 0 and a new program (free with
 * scp_free); -EINVAL for a bad policy, with "path:line: what" in err (errlen bytes,
 * always NUL-terminated): unknown syscall, unknown section or errno, a name outside a
 * section, a name listed twice, a line that says the default again, [default allow]
 * after a section or twice; -ENOENT/-EACCES… when the file cannot be read; -ENOMEM;
 * another negative errno from libseccomp.
 */
int scp_compile(const char *path, ScpProgram **ret, char *err, size_t errlen);

/* Same from text (len bytes, need not be NUL-terminated); name labels error messages. */
int scp_compile_text(const char *text, size_t len, const char *name, ScpProgram **ret, char *err,
                     size_t errlen);

/*
 * The program as the kernel takes it (borrowed, valid while p lives). Loading it does
 * not allocate: a child between clone and execve may pass it to seccomp(2).
 */
const struct sock_fprog *scp_program(const ScpProgram *p);

/*
 * The raw instructions (struct sock_filter[], *ret_size bytes, a multiple of 8), e.g.
 * for the body of the pod's load frame. Borrowed, valid while p lives.
 */
const void *scp_data(const ScpProgram *p, size_t *ret_size);

/*
 * The name of syscall nr of architecture arch (AUDIT_ARCH_* as in siginfo's si_arch; 0 =
 * native), e.g. for a SIGSYS report, into buf (len bytes). 0, or -ENOENT for an unknown
 * number.
 */
int scp_syscall_name(uint32_t arch, int nr, char *buf, size_t len);

/* Frees p. Accepts NULL; returns NULL. */
ScpProgram *scp_free(ScpProgram *p);
