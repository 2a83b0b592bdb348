/* SPDX-License-Identifier: MIT */
/*
 * For tests that create real pod cgroups: their trees are named "<prefix><pid>", and a
 * run that died (crash, ctest timeout) leaves its tree behind. The next run removes
 * those of dead pids, the way pomed removes a previous instance's leftovers.
 */
#pragma once

#include <dirent.h>
#include <libgen.h>
#include <signal.h>

#include "common/util.h"
#include "supervisor/cgroup.h"

static inline void cg_test_remove_tree(const char *name)
{
        static const char *const ctrls[] = {"memory", "pids", "cpu"};
        char warn[512], trees[3][4096];
        CgSetup *s = NULL;
        char **sids = NULL;

        if (cg_setup(name, &s, warn, sizeof(warn)) < 0)
                return;
        if (cg_cleanup_leftovers(s, &sids) >= 0) {
                for (size_t i = 0; sids[i]; i++)
                        free(sids[i]);
                free(sids);
        }
        for (size_t i = 0; i < 3; i++)
                snprintf(trees[i], sizeof(trees[i]), "%s", cg_tree_path(s, ctrls[i]));
        cg_setup_free(s);
        for (size_t i = 0; i < 3; i++)
                (void)rmdir(trees[i]);
}

/* Removes the trees "<prefix><pid>" next to s's tree whose pid is dead. */
static inline void cg_test_reap_stale(const CgSetup *s, const char *prefix)
{
        char parent[4096];
        snprintf(parent, sizeof(parent), "%s", cg_tree_path(s, "pids"));
        DIR *d = opendir(dirname(parent));
        if (!d)
                return;
        for (struct dirent *de; (de = readdir(d));) {
                const char *p = startswith(de->d_name, prefix);
                int pid = p ? atoi(p) : 0;
                if (pid > 0 && pid != getpid() && kill(pid, 0) < 0 && errno == ESRCH) {
                        fprintf(stderr, "info: removing %s, left by a dead run\n", de->d_name);
                        cg_test_remove_tree(de->d_name);
                }
        }
        closedir(d);
}
