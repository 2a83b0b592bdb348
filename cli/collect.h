/* SPDX-License-Identifier: MIT */
/*
 * A run directory's files from the control API, for a sandbox that has ended: what `pome
 * run` fetches after it finalizes a trial, and what `pome run collect` fetches for a sandbox
 * finalized later (a --keep run): <twin>.tape.jsonl (GET …/events, page by page),
 * <twin>.final.json (GET …/state), verdict.json (GET …/verdict, in grade_verdict_render's
 * bytes) and summary.md (GET …/summary). Final states come through the API, never pomed's
 * state directory, which need not be readable. Each file is written whole or not at all
 * (a temporary file renamed over it). Errors are said on stderr; who ("pome run") starts
 * the line.
 */
#pragma once

#include <jansson.h>
#include <stddef.h>

#include "cli/config.h"

/* <dir>/<name> := len bytes of data, whole or not at all. 0 or -errno (said). */
int collect_write(const char *who, const char *dir, const char *name, const void *data, size_t len);

/* <dir>/<name> := j dumped with jansson's flags, and a newline. 0 or -errno (said). */
int collect_write_json(const char *who, const char *dir, const char *name, const json_t *j,
                       size_t flags);

/* <dir>/<twin>.tape.jsonl: the tape of twin of sandbox sid. 0 or -errno (said). */
int collect_tape(const Config *c, const char *who, const char *sid, const char *dir,
                 const char *twin);

/*
 * <dir>/<twin>.final.json: the final world a finalize kept. 0; 1 when pomed kept none (404),
 * with its reason in *ret_why (a new string; ret_why may be NULL); -errno (said).
 */
int collect_state(const Config *c, const char *who, const char *sid, const char *dir,
                  const char *twin, char **ret_why);

/*
 * <dir>/verdict.json: pomed's verdict, rendered as pomed wrote it. 0 with a new reference to
 * it in *ret_verdict (may be NULL); 1 when pomed has none (404: an ungraded run), with its
 * reason in *ret_why (new; may be NULL); -errno (said).
 */
int collect_verdict(const Config *c, const char *who, const char *sid, const char *dir,
                    json_t **ret_verdict, char **ret_why);

/* <dir>/summary.md from pomed. 0; 1 when it serves none; -errno (said, except a 404). */
int collect_summary(const Config *c, const char *who, const char *sid, const char *dir);

/*
 * <dir>/agent-reply.txt from GET …/agent-reply: what pomed's judge was shown of the agent's
 * reply (sent with the finalize, or by the agent's own finalize_run), so that `pome eval` of
 * the directory asks the judge the same question. 0, 1 when pomed holds none (said nowhere:
 * a run need not have one), -errno (said).
 */
int collect_reply(const Config *c, const char *who, const char *sid, const char *dir);
