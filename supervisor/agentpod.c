/* SPDX-License-Identifier: MIT */
/*
 * The agent pod (agentpod.h): how it is built, and why in this order.
 *
 * pome prepares everything in the parent — the canonical paths, each mount's target as a
 * string, the id map of the working directory, the rlimits, the fds — so that the child
 * only makes raw system calls: pome may have threads (libcurl's resolver), so between
 * clone and execve nothing may allocate, lock, or go through a sanitizer's interceptor.
 * The child is a fork-style clone3 (its own copy of pome's memory, not CLONE_VM as the
 * twin pods' spawner: it lives on as the pod's init, next to pome) into a new pid
 * namespace, and a new user namespace when pome is not root (the pid namespace must be
 * owned by it, or the child could not mount a /proc for it). In the child, pid 1 of the
 * new namespace:
 *   1. join the cgroups (write "0" to each cgroup.procs fd): first, so that the
 *      namespaces made below (a network namespace is ~100 KiB of kernel memory), the
 *      overlay's copy-ups and every process of the pod are charged to the pod, and the
 *      pids limit counts the init too                                      (exit 120)
 *   2. PR_SET_PDEATHSIG(SIGKILL) and a poll of a pidfd of pome: pome dying mid-setup
 *      leaves nothing behind                                               (exit 119)
 *   3. without root: become dumpable (else /proc/<pid>/uid_map is root's, and pome,
 *      undumpable after a uid change or as a setgid program, could not write it), say so
 *      ("R" on the socketpair), wait for pome to write setgroups "deny", uid_map and
 *      gid_map (the invoking user mapped to itself: only the parent namespace's side may
 *      write them) and its "G"                                             (exit 121)
 *   4. unshare(2) mount, network, ipc and uts here rather than in clone3: after the
 *      cgroup join (their memory is the pod's) and, without root, owned by the new user
 *      namespace; sethostname                                              (exit 121)
 *   5. the mount view (bubblewrap's shape, our own code): "/" recursively private; a
 *      tmpfs on /tmp is the base, pivoted into with the host's root at /oldroot; the
 *      host's root bound recursively at /newroot, read-only, nosuid, nodev
 *      (mount_setattr(2), AT_RECURSIVE); a fresh tmpfs /tmp (1777) with HOME in it when
 *      HOME is under /tmp; a proc of the new pid namespace; a minimal /dev (tmpfs,
 *      binds of null zero full random urandom tty, a devpts instance, /dev/shm, the
 *      usual links; then read-only); the masks that are ancestors of the working
 *      directory (an empty tmpfs holding only the path down to it); the working
 *      directory (an overlay on a tmpfs, or a read-write bind); every other mask (the
 *      host's /run always among them: its services' sockets), after it, so masks under
 *      the working directory cover the overlay; pivot_root into
 *      /newroot and detach the old root; chdir                             (exit 122)
 *   6. network: lo up; a listening socket on 127.0.0.1:<port> for each listen port,
 *      handed to pome over a socketpair (SCM_RIGHTS), then closed here     (exit 123)
 *   7. setsid (no controlling terminal: no TIOCSTI into pome's terminal, /dev/tty is
 *      ENXIO); the credentials of the init *and* the agent: an empty bounding set, no
 *      ambient capabilities; as root setgroups(0), setresgid, setresuid to the agent's
 *      ids; an empty capset; not dumpable; PR_SET_PDEATHSIG again (the credential
 *      change cleared it)                                                  (exit 124)
 *   8. fork the agent, pid 2. The init keeps no capability and no fd: it only reaps,
 *      forwards SIGTERM/SIGINT/SIGHUP to every process of the namespace (kill(-1)),
 *      and exits with the agent's status (128 + its signal) once pid 2 is reaped; the
 *      kernel then kills whatever is left in the namespace.
 * In pid 2, the agent:
 *   9. fds 0, 1, 2 (through temporaries above 2, so no source can be a target), the
 *      report pipe at 3 (close-on-exec), close_range(4…); rlimits; default signal
 *      handlers and an empty mask                                          (exit 125)
 *  10. PR_SET_NO_NEW_PRIVS, the seccomp filter                             (exit 126)
 *  11. execve                                                              (exit 127)
 * A failing step writes {step, errno, index} to an O_CLOEXEC pipe (atomic: 12 bytes) and
 * exits with the code above; pome reads the pipe until EOF (pid 2 exec'd) and names the
 * step ("mount the overlay of /work: EPERM").
 * A clone3 refused with ENOSYS (container profiles answer so, Docker's among them, for glibc
 * to fall back) is retried as clone(2) on x86-64, for the init as for pid 2.
 *
 * Why the credential drop is in the init rather than in pid 2: the init needs no
 * privilege once the namespaces are built, and an init that kept root (or, without
 * root, every capability of the user namespace that owns the pod's mounts) would be a
 * target for the agent. With the agent's own uid, kill(-1) reaches every process of the
 * pod (same uid, and no_new_privs keeps it so), and PR_SET_DUMPABLE 0 keeps the agent's
 * ptrace, process_vm_readv and /proc/1/{mem,environ} off it.
 *
 * The working directory's overlay, and who may write in it (measured on 6.18). As root
 * the agent runs as a uid of its own, which owns nothing in the directory: on a plain
 * overlay it could create files only where the host already lets anyone. So the overlay's
 * lower layer is an idmapped mount (mount_setattr(2) MOUNT_ATTR_IDMAP on an
 * open_tree(2) clone, Linux 5.12; overlayfs takes idmapped layers since 5.19) whose user
 * namespace swaps the directory owner's uid and gid with the agent's and maps every other
 * id to itself: the directory owner's files appear as the agent's and are writable
 * (copy-up gives the upper copy the agent's ids), files of other owners keep their owner
 * and their modes, and the host's files are never written (the lower layer is read-only
 * to overlayfs). The upper directory is made with the lower root's mode and owned by the
 * agent. With workdir_rw, the same idmapped mount is the working directory itself: the
 * agent writes the host's files as the directory's owner, and what it creates is owned by
 * that owner on disk. A filesystem that refuses idmapped mounts (tmpfs before 6.3, NFS,
 * FUSE) leaves a plain lower layer: then only the top directory (owned by the agent in
 * the upper layer), new directories and what the host lets anyone write are writable.
 * Without root, the agent is the invoking user: the overlay is mounted with userxattr
 * (overlayfs in a user namespace keeps its whiteouts and opaque marks in user.* xattrs;
 * tmpfs stores those since 6.6 — on older kernels deleting or renaming a lower
 * directory fails with EXDEV/EIO, files work). Submounts below the working directory are
 * not in the overlay (a layer is one mount); with workdir_rw they are, read-write,
 * without root only.
 */
#include "supervisor/agentpod.h"

#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "common/strv.h"
#include "common/util.h"
#include "supervisor/rawsys.h"

/* The child's own code: no sanitizer instrumentation, nothing that allocates or locks. */
#define CHILD_FN __attribute__((no_sanitize("address", "undefined"), noinline))

/* The child's system calls: supervisor/rawsys.h, as the twin pods' spawner makes them. */
#define pod_sys raw_sys

/* struct clone_args of clone3(2), its first published size (Linux 5.3). */
typedef struct PodCloneArgs {
        uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
} PodCloneArgs;

/*
 * A fork-style clone3 (no CLONE_VM): returns in both, 0 in the child, as fork(2); with
 * ret_pidfd, CLONE_PIDFD. A clone3 refused as unknown — what container profiles answer
 * (Docker's, so that glibc falls back) — is retried as clone(2) (x86-64's argument order:
 * flags, stack, parent_tid, child_tid, tls; the pidfd comes back in parent_tid).
 */
static inline __attribute__((always_inline)) long pod_clone(uint64_t flags, int *ret_pidfd)
{
        uint64_t f = flags | (ret_pidfd ? CLONE_PIDFD : 0);
        PodCloneArgs ca = {
                .flags = f, .pidfd = (uint64_t)(uintptr_t)ret_pidfd, .exit_signal = SIGCHLD};
        long r = pod_sys(SYS_clone3, &ca, sizeof(ca));
#if defined(__x86_64__)
        if (r == -ENOSYS)
                r = pod_sys(SYS_clone, f | SIGCHLD, 0, ret_pidfd, NULL, 0);
#endif
        return r;
}

/* The kernel's struct sigaction (rt_sigaction(2) takes this, not glibc's). */
typedef struct PodSigaction {
        void *handler;
        unsigned long flags;
        void *restorer;
        uint64_t mask;
} PodSigaction;

#define SIGBIT(sig) (UINT64_C(1) << ((sig)-1))

/* The setup steps: the sentence of an error ("<sentence>: EPERM"), its exit code. */
typedef enum PodStep {
        STEP_NONE,
        STEP_CGROUP,
        STEP_PARENT_DIED,
        STEP_USERNS_SYNC,
        STEP_NAMESPACES,
        STEP_HOSTNAME,
        STEP_MOUNT_PRIVATE,
        STEP_BASE,
        STEP_PIVOT_BASE,
        STEP_ROOT_BIND,
        STEP_ROOT_RDONLY,
        STEP_TMP,
        STEP_HOME,
        STEP_PROC,
        STEP_DEV,
        STEP_DEV_NODE,
        STEP_DEVPTS,
        STEP_DEV_SHM,
        STEP_DEV_LINKS,
        STEP_DEV_RDONLY,
        STEP_WORKDIR_POINT,
        STEP_WORKDIR_CLONE,
        STEP_OVERLAY_UPPER,
        STEP_OVERLAY,
        STEP_WORKDIR_BIND,
        STEP_MASK,
        STEP_FILE,
        STEP_PIVOT,
        STEP_CHDIR,
        STEP_LOOPBACK,
        STEP_LISTEN,
        STEP_SEND_FDS,
        STEP_SESSION,
        STEP_CAPABILITIES,
        STEP_CREDENTIALS,
        STEP_FORK,
        STEP_FDS,
        STEP_TTY,
        STEP_RLIMITS,
        STEP_SIGNALS,
        STEP_SECCOMP,
        STEP_EXEC,
        _STEP_MAX,
} PodStep;

/* The sentence's %s is filled by pod_step_subject(). */
static const struct {
        const char *fmt;
        uint8_t code;
} pod_steps[_STEP_MAX] = {
        [STEP_CGROUP] = {"join cgroup.procs fd %s", 120},
        [STEP_PARENT_DIED] = {"pome exited during the setup", 119},
        [STEP_USERNS_SYNC] = {"wait for the user namespace's id maps", 121},
        [STEP_NAMESPACES] = {"create the mount, network, ipc and uts namespaces", 121},
        [STEP_HOSTNAME] = {"set the hostname", 121},
        [STEP_MOUNT_PRIVATE] = {"make / private", 122},
        [STEP_BASE] = {"mount the base tmpfs", 122},
        [STEP_PIVOT_BASE] = {"pivot into the base tmpfs", 122},
        [STEP_ROOT_BIND] = {"bind the host's root", 122},
        [STEP_ROOT_RDONLY] = {"make the root read-only", 122},
        [STEP_TMP] = {"mount /tmp", 122},
        [STEP_HOME] = {"make HOME %s", 122},
        [STEP_PROC] = {"mount /proc", 122},
        [STEP_DEV] = {"mount /dev", 122},
        [STEP_DEV_NODE] = {"bind /dev/%s", 122},
        [STEP_DEVPTS] = {"mount /dev/pts", 122},
        [STEP_DEV_SHM] = {"mount /dev/shm", 122},
        [STEP_DEV_LINKS] = {"make the links of /dev", 122},
        [STEP_DEV_RDONLY] = {"make /dev read-only", 122},
        [STEP_WORKDIR_POINT] = {"make the mount point of %s in /tmp", 122},
        [STEP_WORKDIR_CLONE] = {"clone the mount of %s", 122},
        [STEP_OVERLAY_UPPER] = {"make the overlay's upper directory", 122},
        [STEP_OVERLAY] = {"mount the overlay of %s", 122},
        [STEP_WORKDIR_BIND] = {"bind %s read-write", 122},
        [STEP_MASK] = {"mask %s", 122},
        [STEP_FILE] = {"place %s", 122},
        [STEP_PIVOT] = {"pivot into the new root", 122},
        [STEP_CHDIR] = {"chdir to %s", 122},
        [STEP_LOOPBACK] = {"bring lo up", 123},
        [STEP_LISTEN] = {"listen on 127.0.0.1:%s", 123},
        [STEP_SEND_FDS] = {"hand the listening sockets to pome", 123},
        [STEP_SESSION] = {"start a session", 124},
        [STEP_CAPABILITIES] = {"drop the capabilities", 124},
        [STEP_CREDENTIALS] = {"change to uid %s", 124},
        [STEP_FORK] = {"fork the agent", 124},
        [STEP_FDS] = {"set the agent's fds", 125},
        [STEP_TTY] = {"make fd 0 the agent's controlling terminal", 125},
        [STEP_RLIMITS] = {"set the agent's rlimits", 125},
        [STEP_SIGNALS] = {"reset the agent's signals", 125},
        [STEP_SECCOMP] = {"load the seccomp filter", 126},
        [STEP_EXEC] = {"cannot run %s", 127},
};

/* What a failing step writes to the report pipe. */
typedef struct PodReport {
        int step;  /* PodStep */
        int err;   /* positive errno */
        int index; /* the mask, /dev node, port or cgroup fd it was about */
} PodReport;

static const char *const pod_dev_nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};

#define POD_MAX_RLIMITS 3

typedef struct PodMask {
        char *host;   /* canonical host path (for messages) */
        char *target; /* "/newroot" + host */
        size_t target_len;
        size_t chain; /* an ancestor of the working directory: offset in ctx->cwd_chain up to
                       * which the directories down to it are made in the mask; else 0 */
} PodMask;

/*
 * Everything the child reads, built by the parent. The child reads its own copy (a fork),
 * so nothing here is shared with pome once clone3 has returned; the parent frees it.
 */
typedef struct PodCtx {
        const AgentPodSpec *spec;
        bool userns;
        uid_t uid; /* the agent's (and the init's) credentials */
        gid_t gid;
        int report_fd; /* write end, O_CLOEXEC */
        int sync_fd;   /* the child's end of the socketpair */
        int parent_pidfd;
        int devnull;
        int idmap_fd; /* user namespace of the working directory's idmapped mount, or -1 */
        int cap_last;
        const char *hostname;
        size_t hostname_len;
        char *cwd;            /* canonical host path */
        const char *chdir_to; /* where the agent starts: the caller's path (or cwd) */
        char *new_cwd;        /* "/newroot" + cwd: the working directory's mount point */
        char *old_cwd;        /* "/oldroot" + cwd: its source */
        char *cwd_chain;      /* a copy of new_cwd whose '/' the child cuts to mkdir each level */
        size_t tmp_chain;     /* under /tmp: offset after "/newroot/tmp", else 0 */
        mode_t cwd_mode;      /* the lower root's mode, for the upper directory */
        char *home[2];        /* "/newroot" + HOME and + POME_AGENT_TMP when under /tmp, else
                               * NULL */
        const char *ovl_options;
        PodMask masks[AGENT_POD_HIDE_MAX + 1];   /* hide, and /run */
        char *file_targets[AGENT_POD_FILES_MAX]; /* "/newroot" + each file's path */
        size_t n_masks;
        size_t n_ancestors; /* masks[0..n_ancestors) are ancestors of cwd, outermost first */
        struct rlimit rlimits[POD_MAX_RLIMITS];
        int rlimit_res[POD_MAX_RLIMITS];
        size_t n_rlimits;
        /* pome's command line and environment (/proc/self/stat), which the init overwrites
         * in its copy: the agent reads /proc/1/cmdline; 0 when unknown */
        uintptr_t arg_start, arg_end, env_start, env_end;
} PodCtx;

#define NEWROOT "/newroot"
#define OLDROOT "/oldroot"

/* ----- the child ----- */

CHILD_FN _noreturn_ static void child_fail(int report_fd, PodStep step, int index, long r)
{
        PodReport rep = {.step = (int)step, .err = (int)(r < 0 ? -r : r), .index = index};
        (void)pod_sys(SYS_write, report_fd, &rep, sizeof(rep));
        pod_sys(SYS_exit_group, pod_steps[step].code);
        for (;;)
                ;
}

/* r < 0 → the step fails with -r. */
#define TRY(fd, expr, step, index)                             \
        do {                                                   \
                long r_ = (expr);                              \
                if (r_ < 0)                                    \
                        child_fail((fd), (step), (index), r_); \
        } while (0)

CHILD_FN static long child_mount(const char *src, const char *dst, const char *type,
                                 unsigned long flags, const char *data)
{
        return pod_sys(SYS_mount, src, dst, type, flags, data);
}

CHILD_FN static long child_setattr(int dfd, const char *path, unsigned flags, uint64_t set,
                                   uint64_t clr, int userns_fd)
{
        struct mount_attr ma = {.attr_set = set,
                                .attr_clr = clr,
                                .propagation = 0,
                                .userns_fd = (uint64_t)userns_fd};
        return pod_sys(SYS_mount_setattr, dfd, path, flags, &ma, sizeof(ma));
}

/* mkdir of every level of path after offset from (EEXIST is fine); mode for each. */
CHILD_FN static long child_mkdir_chain(char *path, size_t from, mode_t mode)
{
        for (size_t i = from + 1;; i++) {
                char ch = path[i];
                if (ch != '/' && ch != 0)
                        continue;
                path[i] = 0;
                long r = pod_sys(SYS_mkdirat, AT_FDCWD, path, mode);
                path[i] = ch;
                if (r < 0 && r != -EEXIST)
                        return r;
                if (ch == 0)
                        return 0;
        }
}

/* The file type at path (S_IFDIR…), or -errno. */
CHILD_FN static long child_type(const char *path)
{
        struct statx stx;
        long r = pod_sys(SYS_statx, AT_FDCWD, path, 0, STATX_TYPE, &stx);
        return r < 0 ? r : (long)(stx.stx_mode & S_IFMT);
}

/*
 * The working directory at target (its mount point, or /ovl/lower for the overlay): the
 * idmapped clone when there is an id map and the filesystem takes it, else a recursive
 * bind. nosuid, nodev; read-only for the overlay's lower layer.
 */
CHILD_FN static void child_workdir_mount(const PodCtx *c, const char *target, bool rdonly,
                                         PodStep step)
{
        int rep = c->report_fd;
        uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (rdonly ? MOUNT_ATTR_RDONLY : 0);
        if (c->idmap_fd >= 0) {
                long t = pod_sys(SYS_open_tree, AT_FDCWD, c->old_cwd,
                                 OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
                TRY(rep, t, STEP_WORKDIR_CLONE, 0);
                /* a filesystem without idmapped mounts: EINVAL; then the clone as it is */
                if (child_setattr((int)t, "", AT_EMPTY_PATH, attrs | MOUNT_ATTR_IDMAP, 0,
                                  c->idmap_fd) < 0)
                        TRY(rep, child_setattr((int)t, "", AT_EMPTY_PATH, attrs, 0, -1),
                            STEP_WORKDIR_CLONE, 0);
                TRY(rep, pod_sys(SYS_move_mount, t, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH),
                    step, 0);
                (void)pod_sys(SYS_close, t);
                return;
        }
        TRY(rep, child_mount(c->old_cwd, target, NULL, MS_BIND | MS_REC, NULL), step, 0);
        TRY(rep, child_setattr(AT_FDCWD, target, AT_RECURSIVE, attrs, 0, -1), step, 0);
}

/* A mask: an empty read-only tmpfs on a directory, /dev/null read-only on anything else. */
CHILD_FN static void child_mask(const PodCtx *c, size_t i)
{
        const PodMask *m = &c->masks[i];
        int rep = c->report_fd;
        long type = child_type(m->target);
        if (type == -ENOENT || type == -ENOTDIR)
                return; /* not in the pod's view (under /tmp, /dev), or already masked */
        TRY(rep, type, STEP_MASK, (int)i);
        uint64_t ro = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
        if (type == S_IFDIR) {
                TRY(rep,
                    child_mount("tmpfs", m->target, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                                "mode=0755,nr_inodes=64,size=64k"),
                    STEP_MASK, (int)i);
                if (m->chain) {
                        /* the path down to the working directory, for its mount point */
                        size_t from = m->target_len;
                        char *chain = c->cwd_chain;
                        char save = chain[m->chain];
                        chain[m->chain] = 0;
                        long r = child_mkdir_chain(chain, from, 0755);
                        chain[m->chain] = save;
                        TRY(rep, r, STEP_MASK, (int)i);
                }
        } else
                TRY(rep, child_mount(OLDROOT "/dev/null", m->target, NULL, MS_BIND, NULL),
                    STEP_MASK, (int)i);
        TRY(rep, child_setattr(AT_FDCWD, m->target, 0, ro, 0, -1), STEP_MASK, (int)i);
}

/* files[i]: its data in a file of the base tmpfs ("/file-<i>"), bound read-only over the
 * existing file of the same path in the new root. */
CHILD_FN static void child_file(const PodCtx *c, size_t i)
{
        const AgentPodFile *f = &c->spec->files[i];
        int rep = c->report_fd;
        char src[16] = "/file-";
        src[6] = (char)('a' + i / 26);
        src[7] = (char)('a' + i % 26);
        long fd = pod_sys(SYS_openat, AT_FDCWD, src, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        TRY(rep, fd, STEP_FILE, (int)i);
        for (size_t at = 0; at < f->len;) {
                long w = pod_sys(SYS_write, fd, f->data + at, f->len - at);
                if (w == -EINTR)
                        continue;
                TRY(rep, w == 0 ? -EIO : w, STEP_FILE, (int)i);
                at += (size_t)w;
        }
        (void)pod_sys(SYS_close, fd);
        TRY(rep, child_mount(src, c->file_targets[i], NULL, MS_BIND, NULL), STEP_FILE, (int)i);
        TRY(rep,
            child_setattr(AT_FDCWD, c->file_targets[i], 0,
                          MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                  MOUNT_ATTR_NOEXEC,
                          0, -1),
            STEP_FILE, (int)i);
}

CHILD_FN static void child_mount_view(const PodCtx *c)
{
        const AgentPodSpec *s = c->spec;
        int rep = c->report_fd;

        TRY(rep, child_mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), STEP_MOUNT_PRIVATE, 0);

        /* The base: a tmpfs on the host's /tmp (in this namespace only), pivoted into, so
         * every host path stays reachable under /oldroot while /newroot is built. */
        TRY(rep, child_mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755"),
            STEP_BASE, 0);
        static const char *const base_dirs[] = {"/tmp/newroot",   "/tmp/oldroot",
                                                "/tmp/ovl",       "/tmp/ovl/lower",
                                                "/tmp/ovl/upper", "/tmp/ovl/work"};
        for (size_t i = 0; i < ELEMENTSOF(base_dirs); i++)
                TRY(rep, pod_sys(SYS_mkdirat, AT_FDCWD, base_dirs[i], 0755), STEP_BASE, 0);
        TRY(rep, pod_sys(SYS_chdir, "/tmp"), STEP_PIVOT_BASE, 0);
        TRY(rep, pod_sys(SYS_pivot_root, ".", "oldroot"), STEP_PIVOT_BASE, 0);
        TRY(rep, pod_sys(SYS_chdir, "/"), STEP_PIVOT_BASE, 0);

        TRY(rep, child_mount(OLDROOT, NEWROOT, NULL, MS_BIND | MS_REC, NULL), STEP_ROOT_BIND, 0);
        TRY(rep,
            child_setattr(AT_FDCWD, NEWROOT, AT_RECURSIVE,
                          MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0, -1),
            STEP_ROOT_RDONLY, 0);

        TRY(rep, child_mount("tmpfs", NEWROOT "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777"),
            STEP_TMP, 0);
        for (int i = 0; i < 2; i++) {
                char *home = c->home[i];
                if (!home)
                        continue;
                TRY(rep, child_mkdir_chain(home, sizeof(NEWROOT "/tmp") - 1, 0755), STEP_HOME, i);
                TRY(rep, pod_sys(SYS_fchownat, AT_FDCWD, home, c->uid, c->gid, 0), STEP_HOME, i);
                TRY(rep, pod_sys(SYS_fchmodat, AT_FDCWD, home, 0700), STEP_HOME, i);
        }
        if (c->tmp_chain) {
                char *chain = c->cwd_chain;
                TRY(rep, child_mkdir_chain(chain, c->tmp_chain, 0755), STEP_WORKDIR_POINT, 0);
        }

        TRY(rep,
            child_mount("proc", NEWROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL),
            STEP_PROC, 0);

        TRY(rep,
            child_mount("tmpfs", NEWROOT "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC,
                        "mode=0755,size=64k"),
            STEP_DEV, 0);
        for (size_t i = 0; i < ELEMENTSOF(pod_dev_nodes); i++) {
                char dst[32] = NEWROOT "/dev/", src[32] = OLDROOT "/dev/";
                size_t dl = sizeof(NEWROOT "/dev/") - 1, sl = sizeof(OLDROOT "/dev/") - 1;
                for (const char *p = pod_dev_nodes[i]; *p; p++)
                        dst[dl++] = src[sl++] = *p;
                dst[dl] = src[sl] = 0;
                long fd = pod_sys(SYS_openat, AT_FDCWD, dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
                TRY(rep, fd, STEP_DEV_NODE, (int)i);
                (void)pod_sys(SYS_close, fd);
                TRY(rep, child_mount(src, dst, NULL, MS_BIND, NULL), STEP_DEV_NODE, (int)i);
        }
        TRY(rep, pod_sys(SYS_mkdirat, AT_FDCWD, NEWROOT "/dev/pts", 0755), STEP_DEVPTS, 0);
        TRY(rep,
            child_mount("devpts", NEWROOT "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
                        "newinstance,ptmxmode=0666,mode=0620"),
            STEP_DEVPTS, 0);
        TRY(rep, pod_sys(SYS_mkdirat, AT_FDCWD, NEWROOT "/dev/shm", 0755), STEP_DEV_SHM, 0);
        TRY(rep,
            child_mount("tmpfs", NEWROOT "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777"),
            STEP_DEV_SHM, 0);
        static const char *const links[][2] = {
                {"pts/ptmx", NEWROOT "/dev/ptmx"},
                {"/proc/self/fd", NEWROOT "/dev/fd"},
                {"/proc/self/fd/0", NEWROOT "/dev/stdin"},
                {"/proc/self/fd/1", NEWROOT "/dev/stdout"},
                {"/proc/self/fd/2", NEWROOT "/dev/stderr"},
        };
        for (size_t i = 0; i < ELEMENTSOF(links); i++)
                TRY(rep, pod_sys(SYS_symlinkat, links[i][0], AT_FDCWD, links[i][1]), STEP_DEV_LINKS,
                    0);
        TRY(rep, child_setattr(AT_FDCWD, NEWROOT "/dev", 0, MOUNT_ATTR_RDONLY, 0, -1),
            STEP_DEV_RDONLY, 0);

        /* Masks above the working directory first: its mount point is made in them. */
        for (size_t i = 0; i < c->n_ancestors; i++)
                child_mask(c, i);

        if (s->workdir_rw)
                child_workdir_mount(c, c->new_cwd, false, STEP_WORKDIR_BIND);
        else {
                child_workdir_mount(c, "/ovl/lower", true, STEP_OVERLAY);
                TRY(rep, pod_sys(SYS_fchownat, AT_FDCWD, "/ovl/upper", c->uid, c->gid, 0),
                    STEP_OVERLAY_UPPER, 0);
                TRY(rep, pod_sys(SYS_fchmodat, AT_FDCWD, "/ovl/upper", c->cwd_mode & 07777),
                    STEP_OVERLAY_UPPER, 0);
                TRY(rep,
                    child_mount("overlay", c->new_cwd, "overlay", MS_NOSUID | MS_NODEV,
                                c->ovl_options),
                    STEP_OVERLAY, 0);
        }

        for (size_t i = c->n_ancestors; i < c->n_masks; i++)
                child_mask(c, i);
        for (size_t i = 0; i < s->n_files; i++)
                child_file(c, i);

        /* pivot_root(".", "."): the old root ends up on top and is detached (pivot_root(2)) */
        TRY(rep, pod_sys(SYS_chdir, NEWROOT), STEP_PIVOT, 0);
        TRY(rep, pod_sys(SYS_pivot_root, ".", "."), STEP_PIVOT, 0);
        TRY(rep, pod_sys(SYS_umount2, ".", MNT_DETACH), STEP_PIVOT, 0);
        TRY(rep, pod_sys(SYS_chdir, "/"), STEP_PIVOT, 0);
        /* the path as the caller gave it: symlinks resolve in the pod's own view */
        TRY(rep, pod_sys(SYS_chdir, c->chdir_to), STEP_CHDIR, 0);
}

CHILD_FN static void child_network(const PodCtx *c)
{
        const AgentPodSpec *s = c->spec;
        int rep = c->report_fd;

        long fd = pod_sys(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        TRY(rep, fd, STEP_LOOPBACK, 0);
        struct ifreq ifr;
        char *b = (char *)&ifr;
        for (size_t i = 0; i < sizeof(ifr); i++)
                b[i] = 0;
        ifr.ifr_name[0] = 'l';
        ifr.ifr_name[1] = 'o';
        TRY(rep, pod_sys(SYS_ioctl, fd, SIOCGIFFLAGS, &ifr), STEP_LOOPBACK, 0);
        ifr.ifr_flags |= IFF_UP;
        TRY(rep, pod_sys(SYS_ioctl, fd, SIOCSIFFLAGS, &ifr), STEP_LOOPBACK, 0);
        (void)pod_sys(SYS_close, fd);

        if (s->n_listen == 0)
                return;
        int fds[AGENT_POD_LISTEN_MAX];
        for (size_t i = 0; i < s->n_listen; i++) {
                long l =
                        pod_sys(SYS_socket, AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                TRY(rep, l, STEP_LISTEN, (int)i);
                int one = 1;
                TRY(rep, pod_sys(SYS_setsockopt, l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)),
                    STEP_LISTEN, (int)i);
                struct sockaddr_in sa;
                char *p = (char *)&sa;
                for (size_t k = 0; k < sizeof(sa); k++)
                        p[k] = 0;
                sa.sin_family = AF_INET;
                sa.sin_port = htons(s->listen[i]);
                sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                TRY(rep, pod_sys(SYS_bind, l, &sa, sizeof(sa)), STEP_LISTEN, (int)i);
                TRY(rep, pod_sys(SYS_listen, l, SOMAXCONN), STEP_LISTEN, (int)i);
                fds[i] = (int)l;
        }
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * AGENT_POD_LISTEN_MAX)];
        } u;
        char byte = 'L';
        struct iovec iov = {.iov_base = &byte, .iov_len = 1};
        struct msghdr m = {.msg_iov = &iov,
                           .msg_iovlen = 1,
                           .msg_control = u.buf,
                           .msg_controllen = CMSG_SPACE(sizeof(int) * s->n_listen)};
        struct cmsghdr *h = CMSG_FIRSTHDR(&m);
        h->cmsg_level = SOL_SOCKET;
        h->cmsg_type = SCM_RIGHTS;
        h->cmsg_len = CMSG_LEN(sizeof(int) * s->n_listen);
        int *out = (int *)CMSG_DATA(h);
        for (size_t i = 0; i < s->n_listen; i++)
                out[i] = fds[i];
        long k = pod_sys(SYS_sendmsg, c->sync_fd, &m, MSG_NOSIGNAL);
        TRY(rep, k == 1 ? 0 : k < 0 ? k : -EIO, STEP_SEND_FDS, 0);
        /* the agent must not hold them: it could accept what pome should */
        for (size_t i = 0; i < s->n_listen; i++)
                (void)pod_sys(SYS_close, fds[i]);
}

/* pome's dying before PR_SET_PDEATHSIG took effect: then no signal will ever come. */
CHILD_FN static void child_check_parent(const PodCtx *c)
{
        TRY(c->report_fd, pod_sys(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0), STEP_PARENT_DIED,
            0);
        if (c->parent_pidfd >= 0) {
                struct pollfd pfd = {.fd = c->parent_pidfd, .events = POLLIN, .revents = 0};
                struct timespec zero = {0, 0};
                if (pod_sys(SYS_ppoll, &pfd, 1, &zero, NULL, 0) != 0)
                        child_fail(c->report_fd, STEP_PARENT_DIED, 0, 0);
        }
}

/* The init and the agent: an empty bounding set, no capabilities, the agent's ids. */
CHILD_FN static void child_credentials(const PodCtx *c)
{
        int rep = c->report_fd;
        TRY(rep, pod_sys(SYS_setsid), STEP_SESSION, 0);
        /* PR_CAPBSET_DROP needs CAP_SETPCAP: before the uid change */
        for (int cap = 0; cap <= c->cap_last; cap++) {
                long k = pod_sys(SYS_prctl, PR_CAPBSET_DROP, cap, 0, 0, 0);
                if (k < 0 && k != -EINVAL)
                        child_fail(rep, STEP_CAPABILITIES, 0, k);
        }
        TRY(rep, pod_sys(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0),
            STEP_CAPABILITIES, 0);
        if (!c->userns) {
                /* raw calls: this task only (glibc's would signal pome's other threads,
                 * which a fork does not have) */
                TRY(rep, pod_sys(SYS_setgroups, 0, NULL), STEP_CREDENTIALS, 0);
                TRY(rep, pod_sys(SYS_setresgid, c->gid, c->gid, c->gid), STEP_CREDENTIALS, 0);
                TRY(rep, pod_sys(SYS_setresuid, c->uid, c->uid, c->uid), STEP_CREDENTIALS, 0);
        }
        /* without root the user keeps its uid: only the user namespace's capabilities go */
        struct __user_cap_header_struct ch = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
        struct __user_cap_data_struct cd[_LINUX_CAPABILITY_U32S_3];
        for (size_t i = 0; i < ELEMENTSOF(cd); i++)
                cd[i].effective = cd[i].permitted = cd[i].inheritable = 0;
        TRY(rep, pod_sys(SYS_capset, &ch, cd), STEP_CAPABILITIES, 0);
        TRY(rep, pod_sys(SYS_prctl, PR_SET_DUMPABLE, 0, 0, 0, 0), STEP_CAPABILITIES, 0);
        /* the credential change cleared PDEATHSIG (commit_creds()) */
        child_check_parent(c);
}

/* pid 2: fds, rlimits, signals, no_new_privs, seccomp, execve. */
CHILD_FN _noreturn_ static void child_agent(const PodCtx *c)
{
        const AgentPodSpec *s = c->spec;
        int rep = c->report_fd;

        /* Every source through a temporary >= 3 first, the report pipe first of all, so it
         * ends up at 3 (close-on-exec) and no source can be a target. */
        long t_rep = pod_sys(SYS_fcntl, rep, F_DUPFD_CLOEXEC, 3);
        TRY(rep, t_rep, STEP_FDS, 0);
        rep = (int)t_rep;
        int src[3] = {s->stdin_fd, s->stdout_fd, s->stderr_fd};
        long tmp[3];
        for (int i = 0; i < 3; i++) {
                tmp[i] = pod_sys(SYS_fcntl, src[i] >= 0 ? src[i] : c->devnull, F_DUPFD_CLOEXEC, 3);
                TRY(rep, tmp[i], STEP_FDS, i);
        }
        /* dup3(…, 0) to another number never carries FD_CLOEXEC over */
        for (int i = 0; i < 3; i++)
                TRY(rep, pod_sys(SYS_dup3, tmp[i], i, 0), STEP_FDS, i);
        if (rep != 3) {
                TRY(rep, pod_sys(SYS_dup3, rep, 3, O_CLOEXEC), STEP_FDS, 3);
                rep = 3;
        }
        TRY(rep, pod_sys(SYS_close_range, 4, ~0U, 0), STEP_FDS, 4);
        /* an interactive agent (pome run --shell): a session of its own whose terminal is the
         * pty on its fd 0, so job control and ^C work as on a console */
        if (s->tty) {
                TRY(rep, pod_sys(SYS_setsid), STEP_TTY, 0);
                TRY(rep, pod_sys(SYS_ioctl, 0, TIOCSCTTY, 0), STEP_TTY, 0);
        }

        for (size_t i = 0; i < c->n_rlimits; i++)
                TRY(rep, pod_sys(SYS_prlimit64, 0, c->rlimit_res[i], &c->rlimits[i], NULL),
                    STEP_RLIMITS, (int)i);

        /* the handlers are the defaults already (the init reset them): unblock all */
        uint64_t none = 0;
        TRY(rep, pod_sys(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof(none)), STEP_SIGNALS,
            0);

        TRY(rep, pod_sys(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), STEP_SECCOMP, 0);
        if (s->filter)
                TRY(rep, pod_sys(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, s->filter), STEP_SECCOMP,
                    0);

        long e = pod_sys(SYS_execve, s->program, s->argv, s->envp);
        child_fail(rep, STEP_EXEC, 0, e);
}

/* The init after the fork: reap, forward, and leave with the agent's status (its wait status
 * on status_fd first, when there is one). */
CHILD_FN _noreturn_ static void child_reaper(pid_t agent, int status_fd)
{
        uint64_t wait = SIGBIT(SIGCHLD) | SIGBIT(SIGTERM) | SIGBIT(SIGINT) | SIGBIT(SIGHUP);
        for (;;) {
                siginfo_t si;
                /* every signal stays blocked: a blocked signal is queued even for a pid 1
                 * without a handler (sig_ignored()), so pome's SIGTERM arrives here */
                long sig = pod_sys(SYS_rt_sigtimedwait, &wait, &si, NULL, sizeof(wait));
                if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) {
                        /* every process of the namespace but this one (kill(2)) */
                        (void)pod_sys(SYS_kill, -1, sig);
                        if (sig == SIGTERM) /* a stopped process holds SIGTERM until continued */
                                (void)pod_sys(SYS_kill, -1, SIGCONT);
                }
                for (;;) {
                        int st = 0;
                        long p = pod_sys(SYS_wait4, -1, &st, WNOHANG | __WALL, NULL);
                        if (p <= 0)
                                break;
                        if (p == agent && status_fd >= 0)
                                (void)pod_sys(SYS_write, status_fd, &st, sizeof(st));
                        if (p == agent)
                                pod_sys(SYS_exit_group,
                                        WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
                }
        }
}

/*
 * The init is a copy of pome: its /proc/1/cmdline would show the agent pome's command line
 * (and its environment is only kept from it by the init being undumpable). Both are
 * overwritten in the init's own memory, after the fork (pid 2's copy may point into them).
 */
CHILD_FN static void child_scrub(const PodCtx *c)
{
        static const char name[] = "pome-agent-init";
        if (c->arg_end > c->arg_start) {
                char *p = (char *)c->arg_start;
                size_t n = c->arg_end - c->arg_start;
                for (size_t i = 0; i < n; i++)
                        p[i] = i < sizeof(name) - 1 ? name[i] : 0;
        }
        if (c->env_end > c->env_start) {
                char *p = (char *)c->env_start;
                for (size_t i = 0; i < c->env_end - c->env_start; i++)
                        p[i] = 0;
        }
        (void)pod_sys(SYS_prctl, PR_SET_NAME, name, 0, 0, 0);
}

CHILD_FN _noreturn_ static void child_init(const PodCtx *c)
{
        const AgentPodSpec *s = c->spec;
        int rep = c->report_fd;

        /* pome's handlers must never run here: defaults, and every signal stays blocked
         * (the parent blocked them all across clone3) */
        PodSigaction dfl = {.handler = SIG_DFL, .flags = 0, .restorer = NULL, .mask = 0};
        for (int sig = 1; sig < _NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        (void)pod_sys(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(dfl.mask));

        /* 1. */
        for (size_t i = 0; i < s->n_cgroup_fds; i++) {
                long w = pod_sys(SYS_write, s->cgroup_fds[i], "0", 1);
                if (w != 1)
                        child_fail(rep, STEP_CGROUP, (int)i, w < 0 ? w : -EIO);
        }
        /* 2. */
        child_check_parent(c);
        /* 3. */
        if (c->userns) {
                /* /proc/<pid>/uid_map belongs to root while this task is not dumpable, as
                 * it is when pome is (a uid change, a setgid binary): pome could not write
                 * it. Dumpable until the credentials step (a copy of pome's memory, readable
                 * by the user as pome's own is). */
                TRY(rep, pod_sys(SYS_prctl, PR_SET_DUMPABLE, 1, 0, 0, 0), STEP_USERNS_SYNC, 0);
                long w = pod_sys(SYS_sendto, c->sync_fd, "R", 1, MSG_NOSIGNAL, NULL, 0);
                if (w != 1)
                        child_fail(rep, STEP_USERNS_SYNC, 0, w < 0 ? w : -EPIPE);
                char go;
                long k = pod_sys(SYS_read, c->sync_fd, &go, 1);
                if (k != 1)
                        child_fail(rep, STEP_USERNS_SYNC, 0, k < 0 ? k : -EPIPE);
        }
        /* 4. */
        TRY(rep, pod_sys(SYS_unshare, CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS),
            STEP_NAMESPACES, 0);
        TRY(rep, pod_sys(SYS_sethostname, c->hostname, c->hostname_len), STEP_HOSTNAME, 0);
        /* 5., 6., 7. */
        child_mount_view(c);
        child_network(c);
        child_credentials(c);

        /* 8. */
        long pid = pod_clone(0, NULL);
        TRY(rep, pid, STEP_FORK, 0);
        if (pid == 0)
                child_agent(c);
        /* nothing of pome's stays open in the init: the report pipe closes with pid 2's
         * execve, and the listening sockets are pome's alone */
        int status_fd = -1;
        if (s->status_fd >= 0 && pod_sys(SYS_dup3, s->status_fd, 0, 0) == 0)
                status_fd = 0;
        (void)pod_sys(SYS_close_range, status_fd + 1, ~0U, 0);
        child_scrub(c);
        child_reaper((pid_t)pid, status_fd);
}

/* ----- the parent ----- */

static int read_cap_last(void)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
        int v;
        if (!f || fscanf(f, "%d", &v) != 1 || v < 0 || v > 63)
                return 63; /* PR_CAPBSET_DROP past the last one fails with EINVAL, ignored */
        return v;
}

/* arg_start, arg_end, env_start, env_end of /proc/self/stat (fields 48–51, Linux 3.5). */
static void read_arg_env(PodCtx *c)
{
        char buf[2048];
        _cleanup_close_ int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return;
        ssize_t k = read(fd, buf, sizeof(buf) - 1);
        if (k <= 0)
                return;
        buf[k] = 0;
        const char *p = strrchr(buf, ')'); /* the comm may hold spaces and parentheses */
        if (!p)
                return;
        unsigned long long v[4];
        int field = 2;
        for (p++; *p && field < 51;) {
                while (*p == ' ')
                        p++;
                field++;
                if (field >= 48)
                        v[field - 48] = strtoull(p, NULL, 10);
                while (*p && *p != ' ')
                        p++;
        }
        if (field != 51)
                return;
        c->arg_start = (uintptr_t)v[0];
        c->arg_end = (uintptr_t)v[1];
        c->env_start = (uintptr_t)v[2];
        c->env_end = (uintptr_t)v[3];
}

static const char *errno_name(int err)
{
        const char *n = err > 0 ? strerrorname_np(err) : NULL;
        return n ? n : "EUNKNOWN";
}

static PodCtx *ctx_free(PodCtx *c)
{
        if (!c)
                return NULL;
        free(c->cwd);
        free(c->new_cwd);
        free(c->old_cwd);
        free(c->cwd_chain);
        free(c->home[0]);
        free(c->home[1]);
        for (size_t i = 0; i < c->n_masks; i++) {
                free(c->masks[i].host);
                free(c->masks[i].target);
        }
        for (size_t i = 0; i < AGENT_POD_FILES_MAX; i++)
                free(c->file_targets[i]);
        safe_close(c->idmap_fd);
        safe_close(c->devnull);
        safe_close(c->parent_pidfd);
        free(c);
        return NULL;
}

static void ctx_freep(PodCtx **c)
{
        ctx_free(*c);
}

static int seterr(char *err, size_t errlen, int r, const char *fmt, ...) _printf_(4, 5);
static int seterr(char *err, size_t errlen, int r, const char *fmt, ...)
{
        if (err && errlen) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(err, errlen, fmt, ap);
                va_end(ap);
        }
        return r;
}

/* What a step was about, for its sentence. */
static const char *pod_step_subject(const PodCtx *c, const PodReport *rep, char *buf, size_t len)
{
        const AgentPodSpec *s = c->spec;
        int i = rep->index;
        switch ((PodStep)rep->step) {
        case STEP_CGROUP:
                snprintf(buf, len, "%d",
                         i >= 0 && (size_t)i < s->n_cgroup_fds ? s->cgroup_fds[i] : -1);
                return buf;
        case STEP_HOME:
                return i >= 0 && i < 2 && c->home[i] ? c->home[i] + strlen(NEWROOT) : "?";
        case STEP_DEV_NODE:
                return i >= 0 && (size_t)i < ELEMENTSOF(pod_dev_nodes) ? pod_dev_nodes[i] : "?";
        case STEP_WORKDIR_POINT:
        case STEP_WORKDIR_CLONE:
        case STEP_OVERLAY:
        case STEP_WORKDIR_BIND:
                return c->cwd;
        case STEP_CHDIR:
                return c->chdir_to;
        case STEP_MASK:
                return i >= 0 && (size_t)i < c->n_masks ? c->masks[i].host : "?";
        case STEP_FILE:
                return i >= 0 && (size_t)i < s->n_files ? s->files[i].path : "?";
        case STEP_LISTEN:
                snprintf(buf, len, "%u", i >= 0 && (size_t)i < s->n_listen ? s->listen[i] : 0);
                return buf;
        case STEP_CREDENTIALS:
                snprintf(buf, len, "%u gid %u", (unsigned)c->uid, (unsigned)c->gid);
                return buf;
        case STEP_EXEC:
                return s->program;
        case STEP_NONE:
        case STEP_PARENT_DIED:
        case STEP_USERNS_SYNC:
        case STEP_NAMESPACES:
        case STEP_HOSTNAME:
        case STEP_MOUNT_PRIVATE:
        case STEP_BASE:
        case STEP_PIVOT_BASE:
        case STEP_ROOT_BIND:
        case STEP_ROOT_RDONLY:
        case STEP_TMP:
        case STEP_PROC:
        case STEP_DEV:
        case STEP_DEVPTS:
        case STEP_DEV_SHM:
        case STEP_DEV_LINKS:
        case STEP_DEV_RDONLY:
        case STEP_OVERLAY_UPPER:
        case STEP_PIVOT:
        case STEP_LOOPBACK:
        case STEP_SEND_FDS:
        case STEP_SESSION:
        case STEP_CAPABILITIES:
        case STEP_FORK:
        case STEP_FDS:
        case STEP_TTY:
        case STEP_RLIMITS:
        case STEP_SIGNALS:
        case STEP_SECCOMP:
        case _STEP_MAX:
                break;
        }
        return "";
}

/* "<step>: EPERM (Operation not permitted)" into err; returns -errno. */
static int report_error(const PodCtx *c, const PodReport *rep, char *err, size_t errlen)
{
        if (rep->step <= STEP_NONE || rep->step >= _STEP_MAX)
                return seterr(err, errlen, -EIO, "the agent pod's setup failed (step %d)",
                              rep->step);
        char subject[64], what[PATH_MAX + 128];
        const char *subj = pod_step_subject(c, rep, subject, sizeof(subject));
        const char *fmt = pod_steps[rep->step].fmt, *pct = strstr(fmt, "%s");
        if (pct)
                snprintf(what, sizeof(what), "%.*s%s%s", (int)(pct - fmt), fmt, subj, pct + 2);
        else
                snprintf(what, sizeof(what), "%s", fmt);
        if (rep->err <= 0)
                return seterr(err, errlen, -EIO, "%s", what);
        return seterr(err, errlen, -rep->err, "%s: %s (%s)", what, errno_name(rep->err),
                      strerror(rep->err));
}

/* Whether prefix is an ancestor directory of path (both canonical). */
static bool path_is_ancestor(const char *prefix, const char *path)
{
        const char *rest = startswith(path, prefix);
        return rest && rest[0] == '/' && rest[1];
}

/* A path without ".", ".." or empty components (and without a trailing slash). */
static bool path_is_normal(const char *p)
{
        if (p[0] != '/')
                return false;
        for (const char *q = p; *q;) {
                q++;
                const char *e = strchrnul(q, '/');
                size_t l = (size_t)(e - q);
                if (l == 0 || (l == 1 && q[0] == '.') || (l == 2 && q[0] == '.' && q[1] == '.'))
                        return false;
                q = e;
        }
        return true;
}

/*
 * uid_map text that swaps a and b and maps every other id to itself (user_namespaces(7):
 * "inside outside count" lines; at most 5 here, the kernel takes 340).
 */
static void swap_map(char *buf, size_t len, uint32_t x, uint32_t y)
{
        if (x == y) {
                snprintf(buf, len, "0 0 4294967295\n");
                return;
        }
        uint32_t a = x < y ? x : y, b = x < y ? y : x;
        size_t n = 0;
        if (a > 0)
                n += (size_t)snprintf(buf + n, len - n, "0 0 %u\n", a);
        n += (size_t)snprintf(buf + n, len - n, "%u %u 1\n", a, b);
        if (b - a > 1)
                n += (size_t)snprintf(buf + n, len - n, "%u %u %u\n", a + 1, a + 1, b - a - 1);
        n += (size_t)snprintf(buf + n, len - n, "%u %u 1\n", b, a);
        if (b < UINT32_MAX - 1)
                snprintf(buf + n, len - n, "%u %u %u\n", b + 1, b + 1, UINT32_MAX - (b + 1));
}

static int write_proc(pid_t pid, const char *file, const char *text)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        ssize_t k = write(fd, text, strlen(text));
        if (k < 0)
                return negative_errno();
        return (size_t)k == strlen(text) ? 0 : -EIO;
}

CHILD_FN _noreturn_ static void idmap_holder(int rd, int wr)
{
        char b;
        (void)pod_sys(SYS_close, wr); /* or the read below never sees the parent's EOF */
        (void)pod_sys(SYS_read, rd, &b, 1);
        pod_sys(SYS_exit_group, 0);
        for (;;)
                ;
}

/*
 * A user namespace whose id maps swap (uid, gid) of the working directory's owner with the
 * agent's: made by a child that waits on a pipe while its maps are written, then left.
 * Returns an fd of it (O_CLOEXEC), or a negative errno.
 */
static int idmap_userns(uid_t owner_uid, gid_t owner_gid, uid_t uid, gid_t gid)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        _cleanup_close_ int rd = p[0], wr = p[1];
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        long pid = pod_clone(CLONE_NEWUSER, NULL);
        if (pid == 0)
                idmap_holder(rd, wr);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (pid < 0)
                return (int)pid;
        char map[256], path[64];
        int r;
        swap_map(map, sizeof(map), owner_uid, uid);
        r = write_proc((pid_t)pid, "uid_map", map);
        if (r >= 0) {
                swap_map(map, sizeof(map), owner_gid, gid);
                r = write_proc((pid_t)pid, "gid_map", map);
        }
        int fd = -1;
        if (r >= 0) {
                snprintf(path, sizeof(path), "/proc/%ld/ns/user", pid);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        r = negative_errno();
        }
        wr = safe_close(wr);
        (void)waitpid((pid_t)pid, NULL, 0);
        return r < 0 ? r : fd;
}

/* "/newroot" + path, a new string or NULL. */
static char *under(const char *root, const char *path)
{
        char *s = NULL;
        return asprintf(&s, "%s%s", root, path) < 0 ? NULL : s;
}

static int ctx_build(const AgentPodSpec *s, PodCtx **ret, char *err, size_t errlen)
{
        _cleanup_(ctx_freep) PodCtx *c = calloc(1, sizeof(PodCtx));
        if (!c)
                return -ENOMEM;
        c->spec = s;
        c->report_fd = c->sync_fd = c->parent_pidfd = c->devnull = c->idmap_fd = -1;
        c->userns = geteuid() != 0;
        if (c->userns) {
                c->uid = geteuid();
                c->gid = getegid();
        } else {
                if (s->uid == 0 || s->gid == 0)
                        return seterr(err, errlen, -EINVAL,
                                      "the agent must run as a uid and gid of its own, not root");
                c->uid = s->uid;
                c->gid = s->gid;
        }
        c->hostname = s->hostname ? s->hostname : "agent";
        c->hostname_len = strlen(c->hostname);
        if (c->hostname_len == 0 || c->hostname_len > 64)
                return seterr(err, errlen, -EINVAL, "bad hostname \"%s\"", c->hostname);
        c->cap_last = read_cap_last();
        read_arg_env(c);

        c->cwd = realpath(s->cwd ? s->cwd : ".", NULL);
        if (!c->cwd)
                return seterr(err, errlen, negative_errno(), "the working directory %s: %m",
                              s->cwd ? s->cwd : ".");
        c->chdir_to = s->cwd ? s->cwd : c->cwd;
        struct stat st;
        if (stat(c->cwd, &st) < 0)
                return seterr(err, errlen, negative_errno(), "the working directory %s: %m",
                              c->cwd);
        if (!S_ISDIR(st.st_mode))
                return seterr(err, errlen, -ENOTDIR, "the working directory %s: %s", c->cwd,
                              strerror(ENOTDIR));
        if (streq(c->cwd, "/"))
                return seterr(err, errlen, -EINVAL, "the working directory must not be /");
        c->cwd_mode = st.st_mode;
        c->new_cwd = under(NEWROOT, c->cwd);
        c->old_cwd = under(OLDROOT, c->cwd);
        c->cwd_chain = under(NEWROOT, c->cwd);
        if (!c->new_cwd || !c->old_cwd || !c->cwd_chain)
                return -ENOMEM;
        if (startswith(c->cwd, "/tmp/"))
                c->tmp_chain = strlen(NEWROOT "/tmp");
        if (!c->userns && (st.st_uid != c->uid || st.st_gid != c->gid)) {
                /* without user namespaces, the overlay is not idmapped (see the top) */
                int fd = idmap_userns(st.st_uid, st.st_gid, c->uid, c->gid);
                c->idmap_fd = fd >= 0 ? fd : -1;
        }
        c->ovl_options = c->userns ? "userxattr,lowerdir=/ovl/lower,upperdir=/ovl/upper,"
                                     "workdir=/ovl/work"
                                   : "lowerdir=/ovl/lower,upperdir=/ovl/upper,workdir=/ovl/work";

        /* the files placed over the host's: an absolute, normal path of an existing file */
        for (size_t i = 0; i < s->n_files; i++) {
                const char *path = s->files[i].path;
                struct stat fst;
                if (!path || path[0] != '/' || !path_is_normal(path) || !s->files[i].data)
                        return seterr(err, errlen, -EINVAL, "bad file to place in the pod: %s",
                                      path ? path : "(null)");
                if (stat(path, &fst) < 0 || !S_ISREG(fst.st_mode))
                        return seterr(err, errlen, -ENOENT,
                                      "%s: only an existing regular file can be replaced in the "
                                      "pod",
                                      path);
                c->file_targets[i] = under(NEWROOT, path);
                if (!c->file_targets[i])
                        return -ENOMEM;
        }

        static const char *const homes[2] = {"HOME", "POME_AGENT_TMP"};
        for (int i = 0; i < 2; i++) {
                const char *home = strv_env_get(s->envp, homes[i]);
                if (home && startswith(home, "/tmp/") && path_is_normal(home)) {
                        c->home[i] = under(NEWROOT, home);
                        if (!c->home[i])
                                return -ENOMEM;
                }
        }

        /* Masks: canonical (a symlink masks its target); ancestors of cwd first, outermost
         * first; a path that cannot be resolved is not there to see. The host's /run is
         * always one: it is its services' sockets (D-Bus, systemd, docker.sock, the user's
         * session bus and systemd --user under /run/user), and a socket with a path is
         * reached past the network namespace and past a read-only mount. */
        size_t n_hide = 0;
        for (; s->hide && s->hide[n_hide]; n_hide++)
                if (n_hide == AGENT_POD_HIDE_MAX)
                        return seterr(err, errlen, -EINVAL, "more than %d paths to hide",
                                      AGENT_POD_HIDE_MAX);
        PodMask anc[AGENT_POD_HIDE_MAX + 1], rest[AGENT_POD_HIDE_MAX + 1];
        size_t n_anc = 0, n_rest = 0;
        int r = 0;
        for (size_t i = 0; i <= n_hide; i++) {
                const char *h = i < n_hide ? s->hide[i] : "/run";
                if (h[0] != '/') {
                        r = seterr(err, errlen, -EINVAL, "hide: %s is not an absolute path", h);
                        break;
                }
                char *canon = realpath(h, NULL);
                if (!canon) {
                        if (errno == ENOMEM) {
                                r = -ENOMEM;
                                break;
                        }
                        continue;
                }
                if (streq(canon, "/")) {
                        free(canon);
                        r = seterr(err, errlen, -EINVAL, "hide: %s is the root", h);
                        break;
                }
                PodMask m = {.host = canon, .target = under(NEWROOT, canon)};
                if (!m.target) {
                        free(canon);
                        r = -ENOMEM;
                        break;
                }
                m.target_len = strlen(m.target);
                if (path_is_ancestor(canon, c->cwd)) {
                        m.chain = strlen(c->new_cwd);
                        size_t k = n_anc++;
                        while (k > 0 && strlen(anc[k - 1].host) > strlen(canon)) {
                                anc[k] = anc[k - 1];
                                k--;
                        }
                        anc[k] = m;
                } else
                        rest[n_rest++] = m;
        }
        for (size_t i = 0; i < n_anc; i++)
                c->masks[c->n_masks++] = anc[i];
        for (size_t i = 0; i < n_rest; i++)
                c->masks[c->n_masks++] = rest[i];
        c->n_ancestors = n_anc;
        if (r < 0)
                return r;

        /* rlimits, clamped to the current hard limits (raising needs CAP_SYS_RESOURCE,
         * which the agent does not have) */
        struct {
                int res;
                uint64_t v;
                bool on;
        } want[POD_MAX_RLIMITS] = {
                {RLIMIT_CORE, 0, true},
                {RLIMIT_AS, s->memory_max, s->memory_max > 0 && s->n_cgroup_fds == 0},
                {RLIMIT_NPROC, s->pids_max, s->pids_max > 0 && s->n_cgroup_fds == 0},
        };
        for (size_t i = 0; i < ELEMENTSOF(want); i++) {
                if (!want[i].on)
                        continue;
                struct rlimit cur;
                if (getrlimit(want[i].res, &cur) < 0)
                        return negative_errno();
                rlim_t v = (rlim_t)want[i].v;
                if (cur.rlim_max != RLIM_INFINITY && v > cur.rlim_max)
                        v = cur.rlim_max;
                c->rlimit_res[c->n_rlimits] = want[i].res;
                c->rlimits[c->n_rlimits++] = (struct rlimit){.rlim_cur = v, .rlim_max = v};
        }

        c->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (c->devnull < 0)
                return negative_errno();
        c->parent_pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
        if (c->parent_pidfd < 0 && errno != ENOSYS)
                return negative_errno();
        *ret = TAKE_PTR(c);
        return 0;
}

/* The listening sockets from the child (SCM_RIGHTS); -EPIPE when it left without them. */
static int recv_listen_fds(int sock, int *fds, size_t n)
{
        char byte;
        struct iovec iov = {.iov_base = &byte, .iov_len = 1};
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * AGENT_POD_LISTEN_MAX)];
        } u;
        struct msghdr m = {.msg_iov = &iov,
                           .msg_iovlen = 1,
                           .msg_control = u.buf,
                           .msg_controllen = sizeof(u.buf)};
        ssize_t k;
        do
                k = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return negative_errno();
        if (k == 0)
                return -EPIPE;
        size_t got = 0;
        for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h)) {
                if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
                        continue;
                size_t cnt = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                const int *in = (const int *)CMSG_DATA(h);
                for (size_t i = 0; i < cnt; i++) {
                        if (got < n)
                                fds[got++] = in[i];
                        else
                                safe_close(in[i]);
                }
        }
        if (got != n || (m.msg_flags & MSG_CTRUNC)) {
                for (size_t i = 0; i < got; i++)
                        safe_close(fds[i]);
                return -EBADMSG;
        }
        return 0;
}

static void kill_and_reap(pid_t pid, int pidfd)
{
        if (pidfd >= 0)
                (void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
        else
                (void)kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
}

int agent_pod_start(const AgentPodSpec *s, pid_t *ret_pid, int *ret_pidfd, int *ret_listen_fds,
                    char *err, size_t errlen)
{
        if (err && errlen)
                err[0] = 0;
        if (!s || !ret_pid || !ret_pidfd || !s->program || s->program[0] != '/' || !s->argv ||
            !s->envp || (s->cwd && s->cwd[0] != '/') || s->n_listen > AGENT_POD_LISTEN_MAX ||
            (s->n_listen > 0 && (!s->listen || !ret_listen_fds)) ||
            (s->n_cgroup_fds > 0 && !s->cgroup_fds) || s->n_files > AGENT_POD_FILES_MAX ||
            (s->n_files > 0 && !s->files))
                return seterr(err, errlen, -EINVAL, "bad agent pod spec");

        _cleanup_(ctx_freep) PodCtx *c = NULL;
        int r = ctx_build(s, &c, err, errlen);
        if (r < 0) {
                if (err && errlen && !err[0])
                        seterr(err, errlen, r, "cannot prepare the agent pod: %s", strerror(-r));
                return r;
        }

        int rep[2], sp[2];
        if (pipe2(rep, O_CLOEXEC) < 0)
                return seterr(err, errlen, negative_errno(), "pipe: %m");
        _cleanup_close_ int rep_rd = rep[0], rep_wr = rep[1];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
                return seterr(err, errlen, negative_errno(), "socketpair: %m");
        _cleanup_close_ int sync_parent = sp[0], sync_child = sp[1];
        c->report_fd = rep_wr;
        c->sync_fd = sync_child;

        /* Every signal blocked across the clone: the child resets the handlers before
         * anything could run one of pome's there. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int pidfd = -1;
        long pid = pod_clone(CLONE_NEWPID | (c->userns ? CLONE_NEWUSER : 0), &pidfd);
        if (pid == 0)
                child_init(c);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (pid < 0)
                return seterr(err, errlen, (int)pid, "clone3 into new namespaces: %s (%s)",
                              errno_name((int)-pid), strerror((int)-pid));
        rep_wr = safe_close(rep_wr);
        sync_child = safe_close(sync_child);
        _cleanup_close_ int pidfd_owned = pidfd;

        if (c->userns) {
                /* once the child is dumpable (its "R"): EOF if it failed before */
                char ready = 0;
                ssize_t k;
                do
                        k = recv(sync_parent, &ready, 1, 0);
                while (k < 0 && errno == EINTR);
                r = k == 1 ? 0 : k < 0 ? negative_errno() : -EPIPE;
                char map[64];
                if (r >= 0)
                        r = write_proc((pid_t)pid, "setgroups", "deny");
                if (r >= 0) {
                        snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)c->uid, (unsigned)c->uid);
                        r = write_proc((pid_t)pid, "uid_map", map);
                }
                if (r >= 0) {
                        snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)c->gid, (unsigned)c->gid);
                        r = write_proc((pid_t)pid, "gid_map", map);
                }
                if (r >= 0 && send(sync_parent, "G", 1, MSG_NOSIGNAL) != 1)
                        r = negative_errno();
                if (r < 0) {
                        kill_and_reap((pid_t)pid, pidfd);
                        /* a child that failed first says why */
                        PodReport early = {};
                        if (read(rep_rd, &early, sizeof(early)) == (ssize_t)sizeof(early))
                                return report_error(c, &early, err, errlen);
                        return seterr(err, errlen, r, "write the user namespace's id maps: %s (%s)",
                                      errno_name(-r), strerror(-r));
                }
        }

        int fds[AGENT_POD_LISTEN_MAX];
        int rfds = 0;
        if (s->n_listen > 0)
                rfds = recv_listen_fds(sync_parent, fds, s->n_listen);

        /* EOF: pid 2 exec'd (the init closed its copy after the fork) */
        PodReport report = {};
        ssize_t k;
        do
                k = read(rep_rd, &report, sizeof(report));
        while (k < 0 && errno == EINTR);
        if (k != 0 || rfds < 0) {
                if (rfds >= 0)
                        for (size_t i = 0; i < s->n_listen; i++)
                                safe_close(fds[i]);
                kill_and_reap((pid_t)pid, pidfd);
                if (k == (ssize_t)sizeof(report))
                        return report_error(c, &report, err, errlen);
                if (k < 0)
                        return seterr(err, errlen, negative_errno(),
                                      "read the agent pod's report: %m");
                if (k > 0)
                        return seterr(err, errlen, -EIO, "a short report from the agent pod");
                return seterr(err, errlen, rfds,
                              "receive the listening sockets from the agent pod: %s (%s)",
                              errno_name(-rfds), strerror(-rfds));
        }
        for (size_t i = 0; i < s->n_listen; i++)
                ret_listen_fds[i] = fds[i];
        *ret_pid = (pid_t)pid;
        *ret_pidfd = TAKE_FD(pidfd_owned);
        return 0;
}

/* ----- the probe ----- */

/* What the probe's child tried: each its own exit code. */
enum {
        PROBE_OK = 0,
        PROBE_PRIVATE = 10,
        PROBE_TMPFS = 11,
        PROBE_PROC = 12,
};

CHILD_FN _noreturn_ static void probe_child(int report_fd)
{
        long r;
        int step = PROBE_PRIVATE;
        r = pod_sys(SYS_mount, NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
        if (r >= 0) {
                step = PROBE_TMPFS;
                r = pod_sys(SYS_mount, "tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755");
        }
        if (r >= 0) {
                step = PROBE_PROC;
                r = pod_sys(SYS_mount, "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                            NULL);
        }
        if (r < 0) {
                int e = (int)-r;
                (void)pod_sys(SYS_write, report_fd, &e, sizeof(e));
                pod_sys(SYS_exit_group, step);
        }
        pod_sys(SYS_exit_group, PROBE_OK);
        for (;;)
                ;
}

static long read_sysctl(const char *path)
{
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        long v;
        if (!f || fscanf(f, "%ld", &v) != 1)
                return -1;
        return v;
}

int agent_pod_probe(char *why, size_t len)
{
        bool root = geteuid() == 0;
        if (why && len)
                why[0] = 0;
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return seterr(why, len, 0, "cannot probe namespaces: pipe: %m");
        _cleanup_close_ int rd = p[0], wr = p[1];
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        long pid = pod_clone(CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC |
                                     CLONE_NEWUTS | (root ? 0 : CLONE_NEWUSER),
                             NULL);
        if (pid == 0)
                probe_child(wr);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (pid < 0) {
                int e = (int)-pid;
                if (root)
                        return seterr(why, len, 0,
                                      "cannot create namespaces even as root (clone3: %s): pome "
                                      "runs where they are refused (a container without "
                                      "CAP_SYS_ADMIN, or a seccomp policy); run it on the host",
                                      errno_name(e));
                if (read_sysctl("/proc/sys/user/max_user_namespaces") == 0)
                        return seterr(why, len, 0,
                                      "user namespaces are disabled (user.max_user_namespaces = "
                                      "0): `sysctl -w user.max_user_namespaces=15000`, or run "
                                      "pome as root");
                if (read_sysctl("/proc/sys/kernel/unprivileged_userns_clone") == 0)
                        return seterr(why, len, 0,
                                      "unprivileged user namespaces are disabled "
                                      "(kernel.unprivileged_userns_clone = 0): `sysctl -w "
                                      "kernel.unprivileged_userns_clone=1`, or run pome as root");
                return seterr(why, len, 0,
                              "cannot create an unprivileged user namespace (clone3: %s; a "
                              "container's seccomp policy, or a kernel that refuses them): run "
                              "pome as root, or allow unprivileged user namespaces",
                              errno_name(e));
        }
        wr = safe_close(wr);
        int st = 0, e = 0;
        while (waitpid((pid_t)pid, &st, 0) < 0 && errno == EINTR)
                ;
        if (read(rd, &e, sizeof(e)) != (ssize_t)sizeof(e))
                e = 0;
        if (WIFEXITED(st) && WEXITSTATUS(st) == PROBE_OK)
                return root ? 1 : 2;
        const char *what = !WIFEXITED(st)                     ? "the probe"
                           : WEXITSTATUS(st) == PROBE_PRIVATE ? "a private mount namespace"
                           : WEXITSTATUS(st) == PROBE_TMPFS   ? "a tmpfs"
                           : WEXITSTATUS(st) == PROBE_PROC    ? "a /proc"
                                                              : "the probe";
        if (!root && read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1)
                return seterr(why, len, 0,
                              "AppArmor takes the capabilities of unprivileged user namespaces "
                              "(kernel.apparmor_restrict_unprivileged_userns = 1, Ubuntu 23.10 "
                              "and later): mounting %s failed (%s); `sysctl -w "
                              "kernel.apparmor_restrict_unprivileged_userns=0`, an AppArmor "
                              "profile for pome that allows `userns,`, or run pome as root",
                              what, errno_name(e));
        return seterr(why, len, 0, "%s: mounting %s failed (%s)%s",
                      root ? "as root" : "in a user namespace", what, e ? errno_name(e) : "killed",
                      e == EPERM && WEXITSTATUS(st) == PROBE_PROC
                              ? ": /proc is partly masked here (a container), so a new one is "
                                "refused; run pome on the host, or as root"
                      : root ? ""
                             : ": run pome as root");
}
