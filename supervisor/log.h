/* SPDX-License-Identifier: MIT */
/*
 * pomed's log: one line per event on stderr. Under systemd (JOURNAL_STREAM set)
 * each line carries an sd-daemon(3) "<N>" priority prefix so journald keeps the
 * level; otherwise a timestamp and a level word. Only the top of pomed logs
 * (STYLE.md): low layers return errors instead.
 */
#pragma once

#include <syslog.h>

#include "common/util.h"

/* Sets the maximum priority that is printed (LOG_DEBUG shows everything). */
void log_set_max_level(int level);

/* Logs at priority level (LOG_ERR … LOG_DEBUG). Returns -err when err != 0, else 0, so
 * callers can write `return log_error_errno(r, "…")`. errno-style %m is not supported:
 * pass the error and it is appended as ": <strerror>". */
int log_full_errno(int level, int err, const char *fmt, ...) _printf_(3, 4);

#define log_debug(...)            log_full_errno(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...)             log_full_errno(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...)           log_full_errno(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...)          log_full_errno(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...)            log_full_errno(LOG_ERR, 0, __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, (e), __VA_ARGS__)
#define log_error_errno(e, ...)   log_full_errno(LOG_ERR, (e), __VA_ARGS__)
