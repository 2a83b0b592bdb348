/* SPDX-License-Identifier: MIT */
/*
 * Gmail's search query language ("q" of messages.list, threads.list, drafts.list and the
 * MCP search_threads tool; support.google.com/mail/answer/7190): words and "quoted
 * phrases", from: to: cc: bcc: subject: label: in: is: has: filename: after: before:
 * older: newer: older_than: newer_than: larger: smaller:, a leading '-' to negate, OR
 * (and '|'), braces {a b} for OR-groups, parentheses for grouping; juxtaposition is AND.
 * As in Gmail, OR binds tighter than AND: "a b OR c" is a AND (b OR c). An operator takes
 * a group too: subject:(a b) is subject:a subject:b, subject:{a b} either. "x:y" with an
 * unknown x is an ordinary word. Dates are UTC midnights; older_than:/newer_than: count
 * months as 30 days and years as 365; larger:/smaller: sizes are in bytes with K, M or G
 * for powers of 1024. from:me means the message is SENT or a DRAFT, to:me that it is not.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct GmailQuery GmailQuery;

/*
 * Parses q (UTF-8; NULL or blank matches everything) into *ret. 0; -EINVAL with a
 * sentence in err (errlen bytes) for a query Gmail refuses ("Invalid query: unbalanced
 * parentheses"); -ENOMEM.
 */
int gmail_query_parse(const char *q, GmailQuery **ret, char *err, size_t errlen);

/*
 * Whether message (a world message: {id, threadId, labelIds, internalDate (ms, a string),
 * sizeEstimate, payload (MessagePart)}; borrowed) matches q. labels is the mailbox's label
 * list ([{id, name, type}], borrowed) for label:/in: by name; now (seconds since the epoch)
 * anchors newer_than:/older_than:. Words match case-insensitively at word starts in the
 * subject, the addresses and names of From/To/Cc, the snippet's text and the bodies'
 * text, and attachment file names. label:x and in:x match a label whose id or name is x,
 * case-insensitively, with ' ', '-', '_' and '/' all alike (label:follow-up finds "Follow
 * Up", label:work-projects "Work/Projects"); unknown is:/in: values are label names too;
 * has:attachment is a part with a filename or an attachmentId.
 */
bool gmail_query_match(const GmailQuery *q, const json_t *message, const json_t *labels,
                       int64_t now);

/* Whether q names in:trash, in:spam, in:anywhere or label:trash/spam: then messages in TRASH
 * or SPAM are searched too (Gmail leaves them out otherwise). */
bool gmail_query_includes_spam_trash(const GmailQuery *q);

/* Frees q. Accepts NULL; returns NULL. */
GmailQuery *gmail_query_free(GmailQuery *q);
