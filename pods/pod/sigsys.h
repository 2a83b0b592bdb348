/* SPDX-License-Identifier: MIT */
/*
 * The pod's SIGSYS handler: names the syscall the seccomp policy trapped, then dies of it.
 *
 * The [kill] rules of policies/pod-stage{1,2}.policy are SECCOMP_RET_TRAP
 * (supervisor/seccomp-policy.h): the kernel raises SIGSYS with si_syscall and si_arch. The handler
 * writes one frame on the pod's socket (id 0, head {"op":"seccomp_violation","nr":N,"arch":A}, no
 * body), which pomed reads before it classifies the exit (supervisor/pod.c), then repeats the
 * trapped syscall with SIGSYS blocked: a forced SIGSYS that is blocked resets the handler to
 * SIG_DFL (force_sig_info_to_task), so the pod dies by SIGSYS exactly as under
 * SECCOMP_RET_KILL_PROCESS. Stage 2 traps rt_sigaction(SIGSYS, …): no later code of the
 * pod can replace the handler.
 *
 * Async-signal-safe: the frame is prepared at install time; the handler formats two
 * numbers into it and calls write(2), rt_sigprocmask(2) and the trapped syscall.
 */
#pragma once

/*
 * Installs the handler, reporting on fd (the pod's frame socket, 3). Call first thing
 * in main, before anything the policy may trap. Returns 0 or negative errno.
 */
int pod_sigsys_install(int fd);
