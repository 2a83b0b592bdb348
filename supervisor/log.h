/* SPDX-License-Identifier: MIT */
/*
 * pomed's log. Under the journal (systemd sets JOURNAL_STREAM to stderr's device and
 * inode) every entry goes to journald through sd-journal with its priority and, for
 * lifecycle events, structured fields: MESSAGE_ID= (one per kind of event, below),
 * SANDBOX_ID=, TWIN=, TEAM=, POD_PID=, REASON=, so `journalctl MESSAGE_ID=… SANDBOX_ID=…`
 * finds them. Otherwise one line per event on stderr with a timestamp and a level word.
 * Only the top of pomed logs (STYLE.md): low layers return errors instead. Nothing
 * secret (keys, tokens, the twin secret) is ever passed here.
 */
#pragma once

#include <sys/types.h>
#include <syslog.h>

#include "common/util.h"

/* MESSAGE_ID= of each lifecycle event (systemd-id128 new; stable: tools match on them). */
#define LOG_MESSAGE_POMED_READY          "0b48ed2c87104d138afe69b9aa66f1dd"
#define LOG_MESSAGE_POMED_DRAINING       "2129b8bb962d4c26a6b75af5b0a77f14"
#define LOG_MESSAGE_POMED_STOPPED        "b6908f7a17124fbb9ae811a182088b27"
#define LOG_MESSAGE_POMED_RELOADED       "84aae2b74c7f4755b69bc8ff2171c96e"
#define LOG_MESSAGE_SANDBOX_PROVISIONING "3361558e9ba2469086c6b1e8cc13f9da"
#define LOG_MESSAGE_SANDBOX_READY        "bf6f1bdf30cf4a4e8c18d32d306f732a"
#define LOG_MESSAGE_SANDBOX_RUNNING      "ce58c4342b9045b8be3da8b76bb9135b"
#define LOG_MESSAGE_SANDBOX_ENDED        "3f39e7c911b8423c9a59b79d6763f122"
#define LOG_MESSAGE_POD_EXITED           "9095d9b61bd34a2689719f43fa450f3d"
#define LOG_MESSAGE_LAYERS_MISSING       "567344ca32a84e4c9ebd1e21fd224240"

/* The structured part of an entry; NULL/0 members are left out. */
typedef struct LogFields {
        const char *message_id; /* LOG_MESSAGE_* */
        const char *sandbox_id;
        const char *twin;
        const char *team;
        const char *reason;
        pid_t pod_pid;
} LogFields;

/* Sets the maximum priority that is logged (LOG_DEBUG logs everything). */
void log_set_max_level(int level);

/* True when entries go to the journal (decided once, from JOURNAL_STREAM and stderr). */
bool log_to_journal(void);

/*
 * Logs at priority level (LOG_ERR … LOG_DEBUG) with the fields of f (NULL: none). Returns
 * -err when err != 0, else 0, so callers can write `return log_error_errno(r, "…")`.
 * errno-style %m is not supported: pass the error and it is appended as ": <strerror>"
 * (and ERRNO= in the journal).
 */
int log_struct_errno(int level, int err, const LogFields *f, const char *fmt, ...) _printf_(4, 5);

#define log_full_errno(level, err, ...) log_struct_errno((level), (err), NULL, __VA_ARGS__)
/* log_struct(level, &(LogFields){…}, fmt, …): variadic only, so the compound literal's commas
 * pass through the macro. */
#define log_struct(level, ...) log_struct_errno((level), 0, __VA_ARGS__)

#define log_debug(...)            log_full_errno(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...)             log_full_errno(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...)           log_full_errno(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...)          log_full_errno(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...)            log_full_errno(LOG_ERR, 0, __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, (e), __VA_ARGS__)
#define log_error_errno(e, ...)   log_full_errno(LOG_ERR, (e), __VA_ARGS__)
