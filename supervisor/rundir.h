/* SPDX-License-Identifier: MIT */
/*
 * Run directories (DESIGN.md "Persistence"): <state_dir>/runs/<sid>/ keeps what a
 * sandbox leaves behind — sandbox.json (its record as last written),
 * <twin>.seed.json, <twin>.tape.jsonl, <twin>.final.json — after the sandbox has
 * ended, until its retention is over. All file I/O of a run goes through here.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct RunDirs RunDirs;

/* The runs/ directory at path (created 0750 if missing). 0 or negative errno. */
int rundirs_open(const char *path, RunDirs **ret);
RunDirs *rundirs_free(RunDirs *d);

/* Creates runs/<sid> (0750). Returns 0 (also when it exists) or negative errno. */
int rundir_create(RunDirs *d, const char *sid);

/* Absolute path of runs/<sid>/<name> (name NULL: the directory) as a new string, or NULL. */
char *rundir_path(RunDirs *d, const char *sid, const char *name);

/* Absolute path of twin's tape in runs/<sid> (<twin>.tape.jsonl) as a new string, or NULL. */
char *rundir_tape_path(RunDirs *d, const char *sid, const char *twin);

/* Writes name in runs/<sid> (len bytes); with atomic, whole or not at all: a temporary file,
 * synced, renamed over it (a full disk leaves the old file, never a truncated one). 0 or
 * -errno. */
int rundir_write(RunDirs *d, const char *sid, const char *name, const void *data, size_t len,
                 bool atomic);

/* doc as indented JSON (borrowed) to runs/<sid>/name, atomically but not synced (a mirror
 * of a record the registry holds: sandbox.json). 0 or -errno. */
int rundir_write_json(RunDirs *d, const char *sid, const char *name, const json_t *doc);

/* True when runs/<sid> exists. */
bool rundir_exists(RunDirs *d, const char *sid);

/* Removes runs/<sid> and everything in it. 0 (also when it is not there) or -errno. */
int rundir_remove(RunDirs *d, const char *sid);

/*
 * Names (new strv, NULL-terminated; caller frees) of the run directories whose last change
 * is older than before (seconds since the epoch): the candidates for a sweep of
 * directories no record points to. 0 or negative errno.
 */
int rundir_list_older(RunDirs *d, int64_t before, char ***ret);
