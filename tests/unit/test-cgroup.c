/* SPDX-License-Identifier: MIT */
/*
 * Pod cgroups: parsers and the limits loader (pure); the v2 and v1 setup logic on fake
 * trees in a temp dir (this host has no v2 controllers); and, as root, real pod cgroups
 * on this host: limits written, joining through the pre-opened fds, kill + removal on
 * destroy, and the leftovers of a crashed pomed killed and removed at the next start.
 * The real part exits 77 without root or cgroup access (the other parts still count).
 */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "common/fileio.h"
#include "common/util.h"
#include "supervisor/cgroup.h"
#include "supervisor/pod-limits.h"
#include "tests/unit/cg-test-util.h"
#include "tests/unit/check.h"

static char *read_text(const char *path)
{
        char *buf = NULL;
        return read_file_at(AT_FDCWD, path, 1u << 20, &buf, NULL) < 0 ? NULL : buf;
}

static bool file_is(const char *dir, const char *name, const char *want)
{
        char p[4096];
        snprintf(p, sizeof(p), "%s/%s", dir, name);
        _cleanup_free_ char *t = read_text(p);
        if (!t || !streq(t, want))
                fprintf(stderr, "%s: \"%s\", want \"%s\"\n", p, t ? t : "(unreadable)", want);
        return t && streq(t, want);
}

static void put(const char *dir, const char *name, const char *text)
{
        char p[4096];
        snprintf(p, sizeof(p), "%s/%s", dir, name);
        _cleanup_fclose_ FILE *f = fopen(p, "we");
        CHECK(f != NULL);
        if (f)
                fputs(text, f);
}

static void mkdirs(const char *path)
{
        char p[4096];
        snprintf(p, sizeof(p), "%s", path);
        for (char *s = p + 1; *s; s++)
                if (*s == '/') {
                        *s = 0;
                        (void)mkdir(p, 0755);
                        *s = '/';
                }
        (void)mkdir(p, 0755);
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)flag;
        (void)ftw;
        return remove(p) < 0 ? -1 : 0;
}

static void rm_rf(const char *p)
{
        (void)nftw(p, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ----- pure parts ----- */

static void test_parse_own(void)
{
        static const char host[] = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n"
                                   "2:cpu,cpuacct:/x/y\n0::/\n";
        char *p = NULL;
        CHECK_OK(cg_parse_own_cgroup(host, "memory", &p));
        CHECK(p && streq(p, "/process_api/abc"));
        free(p);
        CHECK_OK(cg_parse_own_cgroup(host, "pids", &p));
        CHECK(p && streq(p, "/"));
        free(p);
        CHECK_OK(cg_parse_own_cgroup(host, "cpuacct", &p)); /* co-mounted */
        CHECK(p && streq(p, "/x/y"));
        free(p);
        CHECK_OK(cg_parse_own_cgroup(host, "cpu", &p));
        CHECK(p && streq(p, "/x/y"));
        free(p);
        CHECK_OK(cg_parse_own_cgroup(host, NULL, &p));
        CHECK(p && streq(p, "/"));
        free(p);
        p = NULL;
        CHECK(cg_parse_own_cgroup(host, "blkio", &p) == -ENOENT && !p);
        CHECK(cg_parse_own_cgroup(host, "systemd", &p) == -ENOENT); /* "name=systemd" */
        CHECK_OK(cg_parse_own_cgroup("0::/system.slice/pomed.service\n", NULL, &p));
        CHECK(p && streq(p, "/system.slice/pomed.service"));
        free(p);
        p = NULL;
        CHECK(cg_parse_own_cgroup("0::/gone (deleted)\n", NULL, &p) == -ENOENT);
        CHECK(cg_parse_own_cgroup("garbage\n", "memory", &p) == -EINVAL);
        CHECK(cg_parse_own_cgroup("4:memory:relative\n", "memory", &p) == -EINVAL);
        CHECK(cg_parse_own_cgroup("", "memory", &p) == -ENOENT);
}

static void test_parse_oom(void)
{
        uint64_t n = 99;
        CHECK_OK(cg_parse_oom_kill("oom_kill_disable 0\nunder_oom 0\noom_kill 0\n", &n));
        CHECK(n == 0);
        CHECK_OK(cg_parse_oom_kill("oom_kill_disable 0\nunder_oom 1\noom_kill 3\n", &n));
        CHECK(n == 3);
        /* v2 memory.events */
        CHECK_OK(cg_parse_oom_kill("low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n",
                                   &n));
        CHECK(n == 1);
        CHECK(cg_parse_oom_kill("oom_kill_disable 0\nunder_oom 0\n", &n) == -ENODATA);
        CHECK(cg_parse_oom_kill("oom_kill x\n", &n) == -EINVAL);
}

static void test_shares(void)
{
        CHECK(cg_cpu_weight_to_shares(100) == 1024);
        CHECK(cg_cpu_weight_to_shares(200) == 2048);
        CHECK(cg_cpu_weight_to_shares(1) == 10);
        CHECK(cg_cpu_weight_to_shares(10000) == 102400);
}

static void test_limits(const char *tmp)
{
        static const struct {
                const char *s;
                int r;
                uint64_t v;
        } sizes[] = {
                {"0", 0, 0},
                {"65536", 0, 65536},
                {"64M", 0, 64u << 20},
                {"512K", 0, 512u << 10},
                {"2G", 0, UINT64_C(2) << 30},
                {"", -EINVAL, 0},
                {"M", -EINVAL, 0},
                {"64m", -EINVAL, 0},
                {"64MB", -EINVAL, 0},
                {"-1", -EINVAL, 0},
                {" 64M", -EINVAL, 0},
                {"18446744073709551616", -ERANGE, 0},
                {"17179869184G", -ERANGE, 0},
        };
        for (size_t i = 0; i < ELEMENTSOF(sizes); i++) {
                uint64_t v = 12345;
                int r = pod_limits_parse_size(sizes[i].s, &v);
                if (r != sizes[i].r || (r == 0 && v != sizes[i].v)) {
                        fprintf(stderr, "size \"%s\": r=%d v=%" PRIu64 "\n", sizes[i].s, r, v);
                        check_failures++;
                }
        }

        static const struct {
                const char *json;
                int r;
                PodLimits want;
                const char *err;
        } profiles[] = {
                {"{\"memory_max\":\"64M\",\"pids_max\":32,\"cpu_weight\":100}",
                 0,
                 {64u << 20, 32, 100},
                 NULL},
                {"{\"memory_max\":16777216}", 0, {16u << 20, 32, 100}, NULL},
                {"{}", 0, {64u << 20, 32, 100}, NULL},
                {"{\"cpu_weight\":0}", -EINVAL, {}, "cpu_weight"},
                {"{\"cpu_weight\":10001}", -EINVAL, {}, "cpu_weight"},
                {"{\"pids_max\":0}", -EINVAL, {}, "pids_max"},
                {"{\"pids_max\":\"32\"}", -EINVAL, {}, "pids_max"},
                {"{\"memory_max\":\"512K\"}", -EINVAL, {}, "memory_max"},
                {"{\"memory_max\":\"lots\"}", -EINVAL, {}, "memory_max"},
                {"{\"memory\":\"64M\"}", -EINVAL, {}, "unknown key \"memory\""},
                {"[1]", -EINVAL, {}, "JSON object"},
                {"{\"pids_max\":1,\"pids_max\":2}", -EINVAL, {}, "duplicate"},
                {"{", -EINVAL, {}, ":1:"},
        };
        char path[4096];
        snprintf(path, sizeof(path), "%s/limits.json", tmp);
        for (size_t i = 0; i < ELEMENTSOF(profiles); i++) {
                put(tmp, "limits.json", profiles[i].json);
                PodLimits l = {};
                char err[256] = "";
                int r = pod_limits_load(path, &l, err, sizeof(err));
                bool ok = r == profiles[i].r &&
                          (r < 0 ? strstr(err, profiles[i].err) != NULL
                                 : memcmp(&l, &profiles[i].want, sizeof(l)) == 0);
                if (!ok) {
                        fprintf(stderr, "profile %zu: r=%d err=\"%s\"\n", i, r, err);
                        check_failures++;
                }
        }
        PodLimits l;
        char err[256];
        CHECK(pod_limits_load("/nonexistent/limits.json", &l, err, sizeof(err)) == -ENOENT);

        /* the shipped profile */
        const char *src = getenv("POME_SOURCE_DIR") ? getenv("POME_SOURCE_DIR") : POME_SOURCE_DIR;
        snprintf(path, sizeof(path), "%s/policies/limits/default.json", src);
        CHECK_OK(pod_limits_load(path, &l, err, sizeof(err)));
        PodLimits d = POD_LIMITS_DEFAULT;
        CHECK(memcmp(&l, &d, sizeof(l)) == 0);
}

/* ----- fake trees ----- */

static void test_fake_v2(const char *tmp)
{
        char root[1024], own[2048], tree[3072], sup[4096], proc[256], buf[64], warn[512];
        snprintf(root, sizeof(root), "%s/v2", tmp);
        snprintf(own, sizeof(own), "%s/system.slice/pomed.service", root);
        snprintf(tree, sizeof(tree), "%s/pome", own);
        /* what the kernel shows: a root, our delegated cgroup holding us, an old tree */
        mkdirs(tree);
        put(root, "cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n");
        put(own, "cgroup.type", "domain\n");
        put(own, "cgroup.controllers", "cpu io memory pids\n");
        put(own, "cgroup.subtree_control", "");
        /* pomed alone in its cgroup: the kernel empties cgroup.procs as pomed moves to
         * supervisor/, which a file cannot; so it is shown empty here (the VM test moves) */
        put(own, "cgroup.procs", "");
        snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
        snprintf(sup, sizeof(sup), "%s/supervisor", own);
        mkdirs(sup);
        put(sup, "cgroup.procs", "");
        put(tree, "cgroup.subtree_control", "");
        put(tree, "memory.swap.max", "max\n");
        put(tree, "cgroup.kill", "");
        snprintf(proc, sizeof(proc), "0::/system.slice/pomed.service\n");

        CgSetup *s = NULL;
        CHECK_OK(cg_setup_at(root, CG_LAYOUT_V2, proc, "pome", &s, warn, sizeof(warn)));
        if (!s) {
                fprintf(stderr, "fake v2 setup: %s\n", warn);
                return;
        }
        CHECK(streq(cg_layout_name(s), "v2"));
        CHECK(streq(warn, "")); /* swap accounting present */
        CHECK(streq(cg_tree_path(s, "memory"), tree));
        CHECK(streq(cg_tree_path(s, "pids"), tree) && streq(cg_tree_path(s, "cpu"), tree));
        CHECK(cg_tree_path(s, "blkio") == NULL);
        /* controllers enabled top-down */
        CHECK(file_is(own, "cgroup.subtree_control", "+memory +pids +cpu"));
        CHECK(file_is(tree, "cgroup.subtree_control", "+memory +pids +cpu"));

        char **v = NULL;
        PodLimits lim = {.memory_max = 64u << 20, .pids_max = 32, .cpu_weight = 250};
        CHECK_OK(cg_pod_limit_values(s, &lim, &v));
        static const char *const want[] = {"memory.max=67108864", "memory.swap.max=0",
                                           "pids.max=32", "cpu.weight=250", NULL};
        for (size_t i = 0; v && i < ELEMENTSOF(want); i++) {
                CHECK(streq_ptr(v[i], want[i]));
                free(v[i]);
        }
        free(v);
        CgPod *p = NULL;
        CHECK(cg_pod_create(s, "pod-1", &lim, &p) == -EOPNOTSUPP && !p);

        /* the tree is locked while s lives */
        CgSetup *s2 = NULL;
        CHECK(cg_setup_at(root, CG_LAYOUT_V2, "0::/system.slice/pomed.service\n", "pome", &s2, warn,
                          sizeof(warn)) == -EBUSY);
        CHECK(strstr(warn, "in use") != NULL);
        cg_setup_free(s);

        /* others share our cgroup (a login shell, a CI runner): they stay, not nested below;
         * pomed alone moves to a cgroup beside it, <parent>/pome.pomed/supervisor */
        char beside[4096], bsup[4200], btree[4200];
        snprintf(beside, sizeof(beside), "%s/system.slice/pome.pomed", root);
        snprintf(bsup, sizeof(bsup), "%s/supervisor", beside);
        snprintf(btree, sizeof(btree), "%s/pome", beside);
        mkdirs(bsup);
        mkdirs(btree);
        put(beside, "cgroup.procs", "");
        put(beside, "cgroup.subtree_control", "");
        put(bsup, "cgroup.procs", "");
        put(btree, "cgroup.subtree_control", "");
        char shared[64];
        snprintf(shared, sizeof(shared), "1\n%d\n", (int)getpid());
        put(own, "cgroup.procs", shared);
        put(own, "cgroup.subtree_control", "");
        CHECK_OK(cg_setup_at(root, CG_LAYOUT_V2, proc, "pome", &s, warn, sizeof(warn)));
        if (s) {
                CHECK(streq(cg_tree_path(s, "memory"), btree));
                CHECK(file_is(bsup, "cgroup.procs", "0\n")); /* ourselves, by "0" */
                CHECK(file_is(own, "cgroup.procs", shared)); /* the others: not moved */
                CHECK(file_is(own, "cgroup.subtree_control", ""));
                CHECK(file_is(beside, "cgroup.subtree_control", "+memory +pids +cpu"));
                CHECK(cg_has_cpu(s));
                s = cg_setup_free(s);
        } else
                fprintf(stderr, "fake v2 shared setup: %s\n", warn);
        /* set up again from its supervisor leaf (a process of that layer): the same layer,
         * not one more level below it */
        put(bsup, "cgroup.subtree_control", "");
        put(bsup, "cgroup.controllers", "cpu memory pids\n");
        put(bsup, "cgroup.type", "domain\n");
        CHECK_OK(cg_setup_at(root, CG_LAYOUT_V2, "0::/system.slice/pome.pomed/supervisor\n", "pome",
                             &s, warn, sizeof(warn)));
        if (s) {
                CHECK(streq(cg_tree_path(s, "memory"), btree));
                CHECK(file_is(bsup, "cgroup.subtree_control", ""));
                s = cg_setup_free(s);
        }

        /* no cpu controller (a unit without Delegate=): memory and pids, no cpu weight */
        put(own, "cgroup.procs", "");
        put(own, "cgroup.controllers", "memory pids\n");
        CHECK_OK(cg_setup_at(root, CG_LAYOUT_V2, proc, "pome", &s, warn, sizeof(warn)));
        if (s) {
                CHECK(!cg_has_cpu(s));
                CHECK(file_is(own, "cgroup.subtree_control", "+memory +pids"));
                CHECK(file_is(tree, "cgroup.subtree_control", "+memory +pids"));
                CHECK_OK(cg_pod_limit_values(s, &lim, &v));
                static const char *const want_nocpu[] = {"memory.max=67108864", "memory.swap.max=0",
                                                         "pids.max=32", NULL};
                for (size_t i = 0; v && i < ELEMENTSOF(want_nocpu); i++) {
                        CHECK(streq_ptr(v[i], want_nocpu[i]));
                        free(v[i]);
                }
                free(v);
                s = cg_setup_free(s);
        } else
                fprintf(stderr, "fake v2 setup without cpu: %s\n", warn);

        /* a controller not delegated to us */
        put(own, "cgroup.controllers", "cpu pids\n");
        CHECK(cg_setup_at(root, CG_LAYOUT_V2, "0::/system.slice/pomed.service\n", "pome", &s2, warn,
                          sizeof(warn)) == -EOPNOTSUPP);
        CHECK(strstr(warn, "memory") != NULL);
        /* our cgroup is not there (a container without cgroup namespace) */
        CHECK(cg_setup_at(root, CG_LAYOUT_V2, "0::/docker/abc\n", "pome", &s2, warn,
                          sizeof(warn)) == -ENOENT);
        /* no cgroup2 line at all */
        CHECK(cg_setup_at(root, CG_LAYOUT_V2, "4:memory:/\n", "pome", &s2, warn, sizeof(warn)) ==
              -ENOENT);
        CHECK(cg_setup_at(root, CG_LAYOUT_V2, "0::/system.slice/pomed.service\n", "../x", &s2, warn,
                          sizeof(warn)) == -EINVAL);
        CHECK(s2 == NULL);
}

static void test_fake_v1(const char *tmp)
{
        char root[1024], d[2048], warn[512];
        snprintf(root, sizeof(root), "%s/v1", tmp);
        snprintf(d, sizeof(d), "%s/memory/process_api/abc/pome", root);
        mkdirs(d);
        put(d, "memory.memsw.limit_in_bytes", "9223372036854771712\n");
        snprintf(d, sizeof(d), "%s/pids", root);
        mkdirs(d);
        snprintf(d, sizeof(d), "%s/cpu", root);
        mkdirs(d);
        static const char proc[] = "8:pids:/\n4:memory:/process_api/abc\n1:cpu:/\n0::/\n";

        CgSetup *s = NULL;
        CHECK_OK(cg_setup_at(root, CG_LAYOUT_HYBRID, proc, "pome", &s, warn, sizeof(warn)));
        if (!s)
                return;
        CHECK(streq(cg_layout_name(s), "hybrid"));
        snprintf(d, sizeof(d), "%s/memory/process_api/abc/pome", root);
        CHECK(streq(cg_tree_path(s, "memory"), d));
        snprintf(d, sizeof(d), "%s/pids/pome", root);
        CHECK(streq(cg_tree_path(s, "pids"), d) && access(d, F_OK) == 0);
        snprintf(d, sizeof(d), "%s/cpu/pome", root);
        CHECK(streq(cg_tree_path(s, "cpu"), d) && access(d, F_OK) == 0);
        char **v = NULL;
        PodLimits lim = {.memory_max = 32u << 20, .pids_max = 8, .cpu_weight = 50};
        CHECK_OK(cg_pod_limit_values(s, &lim, &v));
        static const char *const want[] = {"memory.limit_in_bytes=33554432",
                                           "memory.memsw.limit_in_bytes=33554432", "pids.max=8",
                                           "cpu.shares=512", NULL};
        for (size_t i = 0; v && i < ELEMENTSOF(want); i++) {
                CHECK(streq_ptr(v[i], want[i]));
                free(v[i]);
        }
        free(v);
        cg_setup_free(s);

        /* without memsw: no swap value, and a warning that says so */
        snprintf(d, sizeof(d), "%s/memory/process_api/abc/pome/memory.memsw.limit_in_bytes", root);
        unlink(d);
        CHECK_OK(cg_setup_at(root, CG_LAYOUT_V1, proc, "pome", &s, warn, sizeof(warn)));
        CHECK(strstr(warn, "swap") != NULL);
        if (s) {
                CHECK_OK(cg_pod_limit_values(s, &lim, &v));
                CHECK(v && streq(v[1], "pids.max=8"));
                for (size_t i = 0; v && v[i]; i++)
                        free(v[i]);
                free(v);
                CHECK(streq(cg_layout_name(s), "v1"));
        }
        cg_setup_free(s);
        s = NULL;
        /* a needed controller missing from /proc/self/cgroup */
        CHECK(cg_setup_at(root, CG_LAYOUT_V1, "4:memory:/process_api/abc\n1:cpu:/\n", "pome", &s,
                          warn, sizeof(warn)) == -ENOENT);
        CHECK(strstr(warn, "pids") != NULL && !s);
}

/* ----- this host, for real ----- */

static char tree_name[64];

/*
 * A child that joins the pod cgroup through the pod's fds and sleeps; its pid. It keeps
 * nothing open (not our tree locks, not ctest's output pipe) and, unless it is to
 * outlive its parent, dies with it.
 */
static pid_t join_sleeper(const CgPod *p, bool die_with_parent)
{
        const int *fds;
        size_t n;
        CHECK_OK(cg_pod_join_fds(p, &fds, &n));
        pid_t pid = fork();
        if (pid == 0) {
                for (size_t i = 0; i < n; i++)
                        if (write(fds[i], "0", 1) != 1)
                                _exit(1);
                if (die_with_parent)
                        (void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
                        _exit(1);
                close_range(3, ~0U, 0);
                for (;;)
                        pause();
        }
        return pid;
}

/* Whether pid holds nothing but 0, 1, 2 (so no tree lock of ours). Waits up to 1 s. */
static bool fds_closed(pid_t pid)
{
        char p[64];
        snprintf(p, sizeof(p), "/proc/%d/fd", (int)pid);
        for (int i = 0; i < 1000; i++) {
                DIR *d = opendir(p);
                unsigned n = 0;
                for (struct dirent *de; d && (de = readdir(d));)
                        n += de->d_name[0] != '.';
                if (d)
                        closedir(d);
                if (d && n <= 3)
                        return true;
                usleep(1000);
        }
        return false;
}

static bool in_cgroup(pid_t pid, const char *leaf)
{
        char p[4096];
        snprintf(p, sizeof(p), "%s/cgroup.procs", leaf);
        for (int i = 0; i < 1000; i++) { /* the child joins right after fork */
                _cleanup_free_ char *t = read_text(p);
                char line[32];
                snprintf(line, sizeof(line), "%d\n", (int)pid);
                if (t && strstr(t, line))
                        return true;
                usleep(1000);
        }
        return false;
}

/* 0 when it ran, 77 when this host gives no cgroup access. */
static int test_real(void)
{
        char warn[512] = "";
        CgSetup *s = NULL;
        int r = cg_setup(tree_name, &s, warn, sizeof(warn));
        if (r < 0) {
                fprintf(stderr, "skip: real cgroups: %s\n", warn);
                return 77;
        }
        fprintf(stderr, "info: cgroup layout %s%s%s\n", cg_layout_name(s), warn[0] ? ", " : "",
                warn);
        cg_test_reap_stale(s, "pome-test-cgroup-");
        char **sids = NULL;
        CHECK(cg_cleanup_leftovers(s, &sids) == 0);
        CHECK(sids && !sids[0]);
        free(sids);

        PodLimits lim = {.memory_max = 48u << 20, .pids_max = 16, .cpu_weight = 200};
        CgPod *p = NULL;
        CHECK_OK(cg_pod_create(s, "pod-real1", &lim, &p));
        if (!p) {
                cg_setup_free(s);
                return 0;
        }
        const char *mem = cg_pod_path(p, "memory"), *pids = cg_pod_path(p, "pids"),
                   *cpu = cg_pod_path(p, "cpu");
        CHECK(mem && pids && cpu);
        CHECK(cg_pod_path(p, "blkio") == NULL);
        bool v2 = streq(cg_layout_name(s), "v2");
        if (v2) {
                CHECK(file_is(mem, "memory.max", "50331648\n"));
                CHECK(file_is(cpu, "cpu.weight", "200\n"));
        } else {
                CHECK(file_is(mem, "memory.limit_in_bytes", "50331648\n"));
                char p2[4096];
                snprintf(p2, sizeof(p2), "%s/memory.memsw.limit_in_bytes", mem);
                if (access(p2, F_OK) == 0)
                        CHECK(file_is(mem, "memory.memsw.limit_in_bytes", "50331648\n"));
                CHECK(file_is(cpu, "cpu.shares", "2048\n"));
        }
        CHECK(file_is(pids, "pids.max", "16\n"));
        CHECK(cg_pod_oom(p, NULL) == CG_OOM_NONE);

        /* the same leaf again: refused, and the existing one untouched */
        CgPod *dup = NULL;
        CHECK(cg_pod_create(s, "pod-real1", &lim, &dup) == -EEXIST && !dup);
        CHECK(access(mem, F_OK) == 0 && access(pids, F_OK) == 0);
        CHECK(cg_pod_create(s, "..", &lim, &dup) == -EINVAL);
        CHECK(cg_pod_create(s, "pod/x", &lim, &dup) == -EINVAL);
        PodLimits bad = lim;
        bad.cpu_weight = 0;
        CHECK(cg_pod_create(s, "pod-x", &bad, &dup) == -EINVAL);

        /* a process joins through the fds; destroy kills it and removes every directory */
        pid_t pid = join_sleeper(p, true);
        CHECK(pid > 0 && in_cgroup(pid, mem) && in_cgroup(pid, pids) && in_cgroup(pid, cpu));
        char paths[3][4096];
        snprintf(paths[0], sizeof(paths[0]), "%s", mem);
        snprintf(paths[1], sizeof(paths[1]), "%s", pids);
        snprintf(paths[2], sizeof(paths[2]), "%s", cpu);
        CHECK_OK(cg_pod_destroy(p));
        int st = 0;
        CHECK(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        for (size_t i = 0; i < 3; i++)
                CHECK(access(paths[i], F_OK) < 0 && errno == ENOENT);

        /* a pod's leaf is right below the tree, named by the pod: nothing between them */
        CgPod *a = NULL;
        CHECK_OK(cg_pod_create(s, "pod-real2", &lim, &a));
        char want_leaf[4096];
        snprintf(want_leaf, sizeof(want_leaf), "%s/pod-real2", cg_tree_path(s, "pids"));
        CHECK(streq_ptr(cg_pod_path(a, "pids"), want_leaf));
        CHECK_OK(cg_pod_destroy(a));
        CHECK(access(want_leaf, F_OK) < 0);
        CHECK(cg_pod_destroy(NULL) == 0);
        s = cg_setup_free(s);

        /*
         * A pomed that dies with live pods: a child process sets up, creates pods, puts a
         * process in one and exits without cleaning up. The next setup finds both
         * sandboxes, kills the process and removes everything.
         */
        CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0); /* the orphan comes back to us */
        int pp[2];
        CHECK(pipe2(pp, O_CLOEXEC) == 0);
        pid_t crashed = fork();
        if (crashed == 0) {
                CgSetup *cs = NULL;
                CgPod *p1 = NULL, *p2 = NULL, *p3 = NULL;
                if (cg_setup(tree_name, &cs, warn, sizeof(warn)) < 0 ||
                    cg_pod_create(cs, "pod-left1", &lim, &p1) < 0 ||
                    cg_pod_create(cs, "pod-left2", &lim, &p2) < 0 ||
                    cg_pod_create(cs, "pod-left3", &lim, &p3) < 0)
                        _exit(1);
                pid_t orphan = join_sleeper(p3, false);
                if (!in_cgroup(orphan, cg_pod_path(p3, "memory")) || !fds_closed(orphan))
                        _exit(1);
                if (write(pp[1], &orphan, sizeof(orphan)) != sizeof(orphan))
                        _exit(1);
                _exit(0); /* no destroy, no free: a crash */
        }
        close(pp[1]);
        pid_t orphan = 0;
        CHECK(read(pp[0], &orphan, sizeof(orphan)) == sizeof(orphan));
        close(pp[0]);
        CHECK(waitpid(crashed, &st, 0) == crashed && WIFEXITED(st) && WEXITSTATUS(st) == 0);

        CHECK_OK(cg_setup(tree_name, &s, warn, sizeof(warn)));
        if (!s)
                return 0;
        sids = NULL;
        r = cg_cleanup_leftovers(s, &sids);
        CHECK(r == 3);
        bool l1 = false, l3 = false;
        for (size_t i = 0; sids && sids[i]; i++) {
                l1 |= streq(sids[i], "pod-left1");
                l3 |= streq(sids[i], "pod-left3");
                free(sids[i]);
        }
        free(sids);
        CHECK(l1 && l3);
        if (orphan > 0) {
                CHECK(waitpid(orphan, &st, 0) == orphan && WIFSIGNALED(st) &&
                      WTERMSIG(st) == SIGKILL);
        }
        static const char *const ctrls[] = {"memory", "pids", "cpu"};
        char trees[3][4096];
        for (size_t i = 0; i < 3; i++) {
                snprintf(trees[i], sizeof(trees[i]), "%s", cg_tree_path(s, ctrls[i]));
                DIR *d = opendir(trees[i]);
                unsigned subdirs = 0;
                for (struct dirent *de; d && (de = readdir(d));)
                        if (de->d_type == DT_DIR && de->d_name[0] != '.')
                                subdirs++;
                if (d)
                        closedir(d);
                CHECK(d && subdirs == 0);
        }
        cg_setup_free(s);
        for (size_t i = 0; i < 3; i++)
                CHECK(rmdir(trees[i]) == 0 || errno == ENOENT);
        return 0;
}

int main(void)
{
        char tmp[] = "/tmp/pome-test-cgroup-XXXXXX";
        CHECK(mkdtemp(tmp) != NULL);
        snprintf(tree_name, sizeof(tree_name), "pome-test-cgroup-%d", (int)getpid());

        test_parse_own();
        test_parse_oom();
        test_shares();
        test_limits(tmp);
        test_fake_v2(tmp);
        test_fake_v1(tmp);
        rm_rf(tmp);

        if (geteuid() != 0) {
                fprintf(stderr, "skip: real cgroups need root\n");
                return check_failures ? 1 : 77;
        }
        if (test_real() == 77 && !check_failures)
                return 77;
        return check_finish();
}
