/* SPDX-License-Identifier: MIT */
/*
 * The sealed agent's start cost (issue 24): how much longer an agent takes to start and exit
 * in its pod than as a plain fork+exec, measured the way `pome run` makes the pod — a cgroup
 * leaf with the agent's limits (as root on cgroup v1 or hybrid: cg_pod_create), the hide list
 * of the seal, the agent's seccomp filter (policies/agent.policy), two listening sockets (a
 * twin's forward and the proxy) — around /bin/true. Each iteration runs both, interleaved:
 *   plain: fork, execve("/bin/true"), waitpid;
 *   pod:   cg_pod_create, agent_pod_start, wait for the init, cg_pod_destroy.
 * One JSON object on stdout: {"mode": "root"|"user namespace", "cgroup": bool, "plain_ms":
 * [...], "pod_ms": [...], "setup_ms": [...] (agent_pod_start's return alone), "errors": N}.
 *
 *   bench-agentpod-start [--iterations N] [--policy PATH]
 */
#include <getopt.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "supervisor/agentpod.h"
#include "supervisor/cgroup.h"
#include "supervisor/seccomp-policy.h"

static double now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void print_list(const char *name, const double *v, int n, bool last)
{
        printf("\"%s\": [", name);
        for (int i = 0; i < n; i++)
                printf("%s%.4f", i ? ", " : "", v[i]);
        printf("]%s", last ? "" : ", ");
}

int main(int argc, char **argv)
{
        int n = 50;
        const char *policy = POME_SOURCE_DIR "/policies/agent.policy";
        static const struct option opts[] = {{"iterations", required_argument, NULL, 'n'},
                                             {"policy", required_argument, NULL, 'p'},
                                             {}};
        for (int c; (c = getopt_long(argc, argv, "n:p:", opts, NULL)) != -1;) {
                if (c == 'n')
                        n = atoi(optarg);
                else if (c == 'p')
                        policy = optarg;
                else
                        return 2;
        }
        if (n < 1)
                return 2;
        char err[512] = "";
        ScpProgram *filter = NULL;
        if (scp_compile(policy, &filter, err, sizeof(err)) < 0) {
                fprintf(stderr, "bench-agentpod-start: %s\n", err);
                return 1;
        }
        int mode = agent_pod_probe(err, sizeof(err));
        if (mode <= 0) {
                fprintf(stderr, "bench-agentpod-start: cannot seal here: %s\n", err);
                return 1;
        }
        CgSetup *cg = NULL;
        struct statfs fs;
        if (mode == 1 && statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type != CGROUP2_SUPER_MAGIC) {
                char tree[64], warn[256];
                snprintf(tree, sizeof(tree), "pome-agents-%d", (int)getpid());
                (void)cg_setup(tree, &cg, warn, sizeof(warn));
        }
        double *plain = calloc((size_t)n, sizeof(double)), *pod = calloc((size_t)n, sizeof(double)),
               *setup = calloc((size_t)n, sizeof(double));
        if (!plain || !pod || !setup)
                return 1;
        char *targv[] = {(char *)"true", NULL}, *envp[] = {(char *)"PATH=/usr/bin:/bin", NULL};
        const char *hide[] = {"/root", "/home", "/etc/pome", "/var/lib/pome", "/run/pome", NULL};
        const uint16_t listen[] = {7071, 3128};
        int errors = 0, done = 0;
        for (int i = 0; i < n; i++) {
                double t0 = now_ms();
                pid_t p = fork();
                if (p == 0) {
                        execve("/bin/true", targv, envp);
                        _exit(127);
                }
                int st;
                waitpid(p, &st, 0);
                plain[done] = now_ms() - t0;

                t0 = now_ms();
                CgPod *leaf = NULL;
                const int *fds = NULL;
                size_t n_fds = 0;
                PodLimits lim = {
                        .memory_max = UINT64_C(2) << 30, .pids_max = 512, .cpu_weight = 100};
                char name[32];
                snprintf(name, sizeof(name), "trial-%d", i);
                if (cg && (cg_pod_create(cg, name, &lim, &leaf) < 0 ||
                           cg_pod_join_fds(leaf, &fds, &n_fds) < 0)) {
                        errors++;
                        cg_pod_destroy(leaf);
                        continue;
                }
                AgentPodSpec s = {.program = "/bin/true",
                                  .argv = targv,
                                  .envp = envp,
                                  .cwd = "/usr",
                                  .hide = hide,
                                  .listen = listen,
                                  .n_listen = ELEMENTSOF(listen),
                                  .stdin_fd = -1,
                                  .stdout_fd = -1,
                                  .stderr_fd = -1,
                                  .status_fd = -1,
                                  .uid = 3000000000u,
                                  .gid = 3000000000u,
                                  .cgroup_fds = fds,
                                  .n_cgroup_fds = n_fds,
                                  .filter = scp_program(filter),
                                  .memory_max = lim.memory_max,
                                  .pids_max = lim.pids_max};
                pid_t pid;
                int pidfd, lfds[2] = {-1, -1};
                int r = agent_pod_start(&s, &pid, &pidfd, lfds, err, sizeof(err));
                double t1 = now_ms();
                if (r < 0) {
                        if (errors++ < 3)
                                fprintf(stderr, "bench-agentpod-start: %s\n", err);
                        cg_pod_destroy(leaf);
                        continue;
                }
                if (leaf)
                        cg_pod_close_join_fds(leaf);
                waitpid(pid, &st, 0);
                safe_close(pidfd);
                safe_close(lfds[0]);
                safe_close(lfds[1]);
                if (leaf && cg_pod_destroy(leaf) < 0)
                        errors++;
                pod[done] = now_ms() - t0;
                setup[done] = t1 - t0;
                if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                        errors++;
                        continue;
                }
                done++;
        }
        printf("{\"mode\": \"%s\", \"cgroup\": %s, ", mode == 1 ? "root" : "user namespace",
               cg ? "true" : "false");
        print_list("plain_ms", plain, done, false);
        print_list("pod_ms", pod, done, false);
        print_list("setup_ms", setup, done, false);
        printf("\"errors\": %d}\n", errors);
        cg_setup_free(cg);
        scp_free(filter);
        free(plain);
        free(pod);
        free(setup);
        return 0;
}
