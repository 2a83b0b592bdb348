/* SPDX-License-Identifier: MIT */
/*
 * The agent pod (issue 24, DESIGN.md "The agent pod"): the agent under test of `pome run`,
 * started sealed. A child is cloned into new pid, mount, network, ipc and uts namespaces
 * (and a user namespace when pome is not root), and there:
 *
 *   - its files: the host's root read-only (nosuid, nodev), so the agent's own toolchain
 *     works unchanged; a private /tmp (tmpfs, 1777) holding HOME and POME_AGENT_TMP when
 *     envp puts them under /tmp (AGENT_POD_HOME, AGENT_POD_SCRATCH: made there, 0700, the
 *     agent's); a fresh /proc of its pid namespace; a minimal /dev (null, zero, full,
 *     random, urandom, tty, pts, shm; read-only itself); an empty read-only /run (the
 *     host's holds its services' sockets: D-Bus, systemd, docker.sock, the user's session
 *     bus; a socket with a path is reached past the network namespace and past a
 *     read-only mount); its working directory as an overlay whose writes go to a tmpfs and
 *     vanish with the pod (or the directory itself, read-write, with workdir_rw); and
 *     every path of hide masked, after the working directory (so masks under it cover the
 *     overlay): pome's state directory, the run directories, /root, /home, /etc/pome,
 *     /var/lib/pome and what the user adds;
 *   - its network: loopback only, up, with a listening socket on 127.0.0.1 for each port
 *     of listen, made inside the namespace and handed to pome (agentnet.h forwards them to
 *     the twins, or proxies them to the allowed hosts); the agent never holds them;
 *   - its credentials: as root, uid/gid (a uid of its own) and no supplementary groups;
 *     without root, the invoking user mapped to itself in a user namespace (its
 *     supplementary groups stay: the kernel lets no unprivileged process drop them); no
 *     capabilities (bounding set emptied), no_new_privs, the seccomp filter given;
 *     rlimits; the cgroup.procs fds given joined first (memory, pids and cpu limits);
 *   - its end: the child is pid 1 of the namespace, a small init (uid and capabilities of
 *     the agent, not dumpable) that runs the agent as pid 2, reaps every orphan and
 *     forwards SIGTERM/SIGINT/SIGHUP to every process of the namespace; when it dies (the
 *     agent exited, or pome's SIGKILL, or pome's death: PR_SET_PDEATHSIG), the kernel kills
 *     every process left in the namespace, setsid or not, before the init's exit is
 *     reported. It exits with the agent's status, or 128 + the signal that killed it (as a
 *     shell does: an agent's own exit 137 looks the same as a SIGKILL).
 *
 * Writable in the working directory (measured on 6.18, see agentpod.c's top): as root, the
 * overlay's lower layer is an idmapped mount that swaps the directory owner's uid and gid
 * with the agent's, so everything the owner owns is the agent's to change (in the overlay:
 * the host's files are never written), other owners' files keep their owner and modes;
 * with workdir_rw the agent writes the host's directory as its owner (what it creates is
 * the owner's on disk). On a filesystem that refuses idmapped mounts (tmpfs before 6.3,
 * NFS, FUSE) only the directory's top level, new directories and what the host lets anyone
 * write are writable. Without root the agent is the user: what the user may write. Submounts
 * below the working directory are not in the overlay. A working directory under /tmp gets
 * its mount point made in the pod's fresh /tmp.
 *
 * A mask is an empty read-only tmpfs on a directory, or /dev/null bound read-only and nodev
 * on anything else (opening it fails with EACCES). A hide path is resolved on the host
 * (realpath(3): a symlink masks its target); one that does not resolve is skipped, as is
 * one the pod's view lacks (under /tmp, /dev, /run). A hide path above the working
 * directory (/home for /home/u/proj) masks everything there but the path down to it.
 *
 * The init is a copy of pome's memory (a fork: pome may hold secrets there). Its command
 * line and environment are overwritten in that copy (/proc/1/cmdline reads
 * "pome-agent-init"), and being undumpable keeps ptrace, /proc/1/mem and /proc/1/environ
 * off it.
 *
 * Setup failures are reported before exec through a pipe: agent_pod_start says which step
 * and why, as the twin pods' spawner does (supervisor/spawn.h).
 *
 * Needs Linux 5.12 (mount_setattr(2)); overlayfs on an idmapped layer 5.19; without root
 * the overlay keeps its whiteouts in user.* xattrs, which tmpfs stores since 6.6 (before,
 * deleting or renaming a directory of the lower layer fails). Safe to call with threads
 * running: the child makes raw system calls only, and the calling thread blocks every
 * signal across the clone (the child resets every handler before it unblocks one).
 */
#pragma once

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define AGENT_POD_LISTEN_MAX 16
#define AGENT_POD_HIDE_MAX   64
#define AGENT_POD_FILES_MAX  8
#define AGENT_POD_HOME       "/tmp/home" /* the HOME a caller gives the agent: made in its /tmp */
#define AGENT_POD_SCRATCH    "/tmp/scratch" /* its $POME_AGENT_TMP, made the same way */

/* A file the pod sees in place of the host's (its /etc/hosts, its CA bundle). */
typedef struct AgentPodFile {
        const char *path; /* absolute: an existing regular file of the host, covered */
        const char *data; /* the pod's content (borrowed), read-only to the agent */
        size_t len;
} AgentPodFile;

typedef struct AgentPodSpec {
        const char *program;     /* absolute path of the program (PATH already searched), as
                                  * the pod sees it: under a masked path it is not there */
        char *const *argv;       /* NULL-terminated */
        char *const *envp;       /* NULL-terminated: the agent's whole environment; a HOME
                                  * and a POME_AGENT_TMP under /tmp (AGENT_POD_HOME,
                                  * AGENT_POD_SCRATCH) are made in the pod, empty, 0700, the
                                  * agent's */
        const char *cwd;         /* absolute host path: the agent's working directory (the
                                  * same path inside the pod); NULL: pome's */
        bool workdir_rw;         /* cwd itself, read-write; else an overlay of it on a tmpfs */
        const char *const *hide; /* absolute host paths masked in the pod, NULL-terminated
                                  * (at most AGENT_POD_HIDE_MAX; "/" is refused) */
        const uint16_t *listen;  /* 127.0.0.1 ports to listen on inside the pod's network */
        size_t n_listen;         /* at most AGENT_POD_LISTEN_MAX */
        int stdin_fd;            /* the agent's fd 0, 1 and 2 (borrowed; -1: /dev/null) */
        int stdout_fd;
        int stderr_fd;
        bool tty;      /* fd 0 is a terminal (a pty's slave): the agent gets a session of its
                        * own with it as its controlling terminal (pome run --shell) */
        int status_fd; /* -1, or a pipe's write end the init keeps (borrowed; pid 2
                        * never holds it): when the agent ends, the init writes its
                        * wait status there (an int, as wait(2) gives it), since the
                        * init itself can only exit with 128 + a signal */
        uid_t uid;     /* as root: the agent's uid and gid (a range of its own, never 0; the
                        * init runs as them too); without root: ignored, the agent is the user */
        gid_t gid;
        const int *cgroup_fds; /* cgroup.procs fds (O_WRONLY) the pod's init joins first,
                                * before any namespace is made (borrowed), or NULL */
        size_t n_cgroup_fds;
        const struct sock_fprog *filter; /* seccomp filter loaded before execve, or NULL */
        const AgentPodFile *files;       /* placed over the host's files (borrowed), after the
                                          * masks */
        size_t n_files;                  /* at most AGENT_POD_FILES_MAX */
        uint64_t memory_max;             /* bytes; without cgroup fds, RLIMIT_AS (0: none). Address
                                          * space, not memory: node reserves ~730 MiB at start and
                                          * dies under 1 GiB */
        uint64_t pids_max;    /* without cgroup fds, RLIMIT_NPROC (0: none): counts threads
                               * and the init; per uid in the pod's user namespace without
                               * root, per uid host-wide as root (hence a uid of its own) */
        const char *hostname; /* NULL: "agent" */
} AgentPodSpec;

/*
 * Whether this host can seal an agent, and how: 1 as root (namespaces, a uid of its own), 2
 * without root through an unprivileged user namespace, or 0 with why not and how to get it
 * in why (len bytes, always NUL-terminated): no user namespaces (user.max_user_namespaces
 * is 0, kernel.unprivileged_userns_clone is 0, a container's seccomp profile), AppArmor
 * taking their capabilities (kernel.apparmor_restrict_unprivileged_userns = 1, Ubuntu
 * 23.10 and later), no mount or network namespaces, a /proc a container has partly masked.
 * Tries it: a throwaway child in the same namespaces mounts a tmpfs and a /proc (~1 ms).
 */
int agent_pod_probe(char *why, size_t len);

/*
 * Starts the agent pod. Returns 0 with the init's pid (in pome's pid namespace) in *ret_pid,
 * a pidfd for it (O_CLOEXEC) in *ret_pidfd, and for each port of s->listen its listening
 * socket (O_CLOEXEC, O_NONBLOCK, made in the pod's network namespace) in ret_listen_fds[i];
 * all owned by the caller, who reaps the pid (SIGTERM to it reaches every process of the
 * pod; SIGKILL ends the pod). Blocks until the agent has exec'd (a few ms). Call it from
 * the thread that will outlive the pod: PR_SET_PDEATHSIG follows the calling thread.
 * Returns a negative errno with why in err (errlen bytes): a setup step the child reported
 * ("mount the overlay of /work: EPERM (Operation not permitted)"), the program that cannot
 * be executed ("cannot run /x: ENOENT …", as execve says), the working directory
 * (-ENOENT, -ENOTDIR; -EINVAL for "/"), -EINVAL for a bad spec (a relative path, root's
 * uid or gid, too many ports or hide paths), -EPERM or -ENOSYS when the namespaces are
 * refused (agent_pod_probe says why), -ENOMEM; then no child is left.
 */
int agent_pod_start(const AgentPodSpec *s, pid_t *ret_pid, int *ret_pidfd, int *ret_listen_fds,
                    char *err, size_t errlen);
