/* SPDX-License-Identifier: MIT */
/*
 * The Gmail twin's private header: the world's shape and the helpers its resource files
 * (messages.c, threads.c, labels.c, drafts.c, history.c, settings.c) share. gmail.c holds
 * the kind, the seed, the error envelope and the request pipeline (faults); store.c puts
 * messages into the world (MIME parsed by mime.c, attachments moved out, threads, history,
 * filters) and renders them.
 *
 * The world (the mailbox served, the seed's primaryMailbox):
 *   emailAddress, displayName    the mailbox's owner
 *   clock                        ms since the epoch: the seed's clock (time of the seeded
 *                                world), one second later after each change (a logical
 *                                clock: gmail_clock_ms, gmail_now_ms)
 *   deliveryMode                 the seed's ("sender-only")
 *   historyId                    the mailbox's current history id (an integer)
 *   historyStart                 the oldest startHistoryId history.list answers (older: 404)
 *   labels[]                     {id, name, type "system"|"user", messageListVisibility?,
 *                                labelListVisibility?, color?}; system labels first
 *   messages[]                   {id, threadId, labelIds[], snippet, historyId (string),
 *                                internalDate (ms, string), sizeEstimate, payload
 *                                (MessagePart, attachment bytes moved out behind
 *                                body.attachmentId), raw (base64url of the whole message)},
 *                                in insertion order
 *   attachments[]                {id, messageId, size, data (base64url)}
 *   drafts[]                     {id, messageId}: the message carries DRAFT
 *   filters[]                    {id, criteria, action}
 *   history[]                    {id (string), messages[{id, threadId}], and one of
 *                                messagesAdded / messagesDeleted [{message}], labelsAdded /
 *                                labelsRemoved [{message, labelIds}]}
 *   sendAs[], forwardingAddresses[]  the seed's settings, kept as given
 *   faults[]                     hosted Pome's named faults {name, target, succeedFirst,
 *                                throttleFor, retryAfterSeconds}
 *   failure_injection[]          the Stripe twin's rules {method, path, attempt, status, body}
 *   attempts                     calls counted: {"fault:<target>": n} for faults, {"METHOD
 *                                /path" or "MCP <tool>": n} for failure_injection
 *   counters                     {prefix: n} behind minted ids ("msg_3", "thread_2")
 *   mailboxes[]                  the seed's other mailboxes, each a world of this shape (its
 *                                own emailAddress, labels, messages, drafts, filters, …, no
 *                                faults): not served, they receive what the primary mailbox
 *                                sends them under deliveryMode "seeded-mailboxes"
 */
#pragma once

#include <stdarg.h>
#include <stdbool.h>

#include "common/json-util.h"
#include "pods/gmail/mime.h"
#include "pods/gmail/query.h"
#include "pods/twin/kind.h"

/* The world's array called key, made empty when absent; NULL on OOM. Borrowed. */
json_t *gmail_rows(json_t *world, const char *key);

/* The row of rows whose "id" is id (borrowed), its index in *ret_index (may be NULL); NULL. */
json_t *gmail_find(json_t *rows, const char *id, size_t *ret_index);

/*
 * Fills rp with Google's error envelope (cloud.google.com/apis/design/errors, as Gmail
 * answers: {error: {code, message, errors: [{message, domain: "global", reason}], status}})
 * at status, reason Gmail's ("notFound", "invalidArgument", "failedPrecondition"), the
 * message printf-style. Returns 0, -ENOMEM.
 */
int gmail_fail(TwinReply *rp, int status, const char *reason, const char *fmt, ...) _printf_(4, 5);

/* The answer of the MCP tools that change labels: the text "OK" (text/plain), as Google's
 * Gmail MCP server gives it (hosted Pome's contentText). 0, -ENOMEM. */
int gmail_reply_ok(TwinReply *rp);

/* The 404 Gmail answers for a missing message, thread, draft, label or filter. 0, -ENOMEM. */
int gmail_not_found(TwinReply *rp);

/*
 * A new id "<prefix>_<n>" (malloc'd) from the world's counters, one not yet in rows (may be
 * NULL). NULL on OOM.
 */
char *gmail_mint_id(json_t *world, const char *prefix, json_t *rows);

/* Bumps and returns the mailbox's history id. */
json_int_t gmail_history_bump(json_t *world);

/*
 * Appends a history record of kind ("messagesAdded", "messagesDeleted", "labelsAdded",
 * "labelsRemoved") about message (borrowed; labels: the label ids added or removed, or NULL)
 * under a new history id, which the message takes as its historyId. 0, -ENOMEM.
 */
int gmail_history_add(json_t *world, const char *kind, json_t *message, json_t *labels);

/*
 * The mailbox's clock, ms since the epoch: the seed's clock (or load_seed's fixed default),
 * advanced by one second per change of the world (a logical clock, as hosted Pome's twin
 * keeps it: worlds are the same run to run). Searches (newer_than:, older_than:) run at it.
 */
int64_t gmail_clock_ms(const json_t *world);

/* Milliseconds since the epoch the call's changes are stamped at (internalDate, the Date
 * header, history): the clock's next second, which the clock takes when the call changed
 * the world (gmail_serve). */
int64_t gmail_now_ms(const TwinCall *c);

/* Whether userId is the mailbox's: "me" or its address (case-insensitive); absent is "me". */
bool gmail_user_ok(const TwinCall *c);

/* The 404/400 Gmail answers for another user's mailbox ("Delegation denied"). 0, -ENOMEM. */
int gmail_user_refused(TwinCall *c, TwinReply *rp);

/* ----- labels (labels.c) ----- */

/* Whether id names a label of the mailbox (system or user). */
json_t *gmail_label(json_t *world, const char *id);

/*
 * The label ids in ids (an array of label ids, borrowed; a system label's in any case) as a
 * new array into *ret, deduplicated. As Gmail, a label's name is no id: -EINVAL with rp
 * filled (400 "Invalid label: Follow Up") for one the mailbox does not have; 0; -ENOMEM.
 */
int gmail_label_ids(json_t *world, const json_t *ids, json_t **ret, TwinReply *rp);

/* The Label resource of label with its counts (users.labels#Label), or MCP's Label shape
 * ({labelId, name, color?, messagesTotal, …}) when mcp. New reference, NULL on OOM. */
json_t *gmail_label_render(json_t *world, const json_t *label, bool with_counts, bool mcp);

/* Seeds the system labels into the world's labels. 0, -ENOMEM. */
int gmail_labels_system(json_t *world);

/* ----- messages (store.c) ----- */

/* How gmail_store puts a message in. */
typedef struct GmailStore {
        const char *id;        /* the message id, NULL: minted */
        const char *thread_id; /* the thread, NULL: by References/In-Reply-To, else a new one */
        json_t *label_ids;     /* ids (borrowed), NULL: none */
        int64_t internal_ms;   /* internalDate, ms; 0: the Date header, else now_ms */
        int64_t now_ms;        /* the clock */
        bool history;          /* record messagesAdded */
        bool filters;          /* an incoming message: the mailbox's filters apply */
} GmailStore;

/*
 * Parses the RFC 5322 message raw (len bytes) and appends it to the world's messages as
 * o says (attachments moved out to the world's attachments, snippet, sizeEstimate, raw kept
 * base64url); the stored row (borrowed) in *ret (may be NULL). 0, -ENOMEM.
 */
int gmail_store(json_t *world, const char *raw, size_t len, const GmailStore *o, json_t **ret);

/* Removes the message row at index i of messages, its attachments and drafts with it. */
void gmail_message_remove(json_t *world, size_t i);

/*
 * The users.messages resource of m in format ("full", "metadata", "minimal", "raw"; NULL:
 * full); metadata_headers (borrowed, may be NULL) keeps only those headers in metadata.
 * New reference, NULL on OOM.
 */
json_t *gmail_message_render(const json_t *m, const char *format, const json_t *metadata_headers);

/*
 * MCP's Message shape (hosted Pome's, from Google's gmailmcp listing) of m at format
 * "metadata", "minimal" or "full". New reference, NULL on OOM.
 */
json_t *gmail_message_mcp(json_t *world, const json_t *m, const char *format);

/* The addresses of header name of m ("To", "Cc"), bare, as a new array; NULL on OOM. */
json_t *gmail_message_addresses(const json_t *m, const char *name);

/* The decoded text of m's first part of mime type ("text/plain"), malloc'd ("" if none). */
char *gmail_message_text(const json_t *m, const char *mime_type);

/*
 * Changes m's labels: adds add, removes remove (ids, borrowed, may be NULL; TRASH and SPAM
 * exclude each other), recording labelsAdded/labelsRemoved. *ret_changed says whether any
 * label moved. 0, -ENOMEM.
 */
int gmail_message_relabel(json_t *world, json_t *m, const json_t *add, const json_t *remove,
                          bool *ret_changed);

/*
 * The messages matching q (NULL: all) and every id of label_ids, newest first, as a new
 * array of borrowed rows; TRASH and SPAM only when spam_trash or q asks, DRAFT only when
 * label_ids or q names it. -EINVAL with rp filled for a q Gmail refuses; 0; -ENOMEM.
 */
int gmail_search(TwinCall *c, const char *q, const json_t *label_ids, bool spam_trash, json_t **ret,
                 TwinReply *rp);

/*
 * The raw message of a send/insert/import/draft call into *ret (malloc'd, *ret_len bytes):
 * a media upload's body (uploadType=media: the message; multipart: its message/rfc822 part,
 * the JSON part's threadId/labelIds into *ret_meta), else the JSON body's raw (base64url) —
 * under "message" when in_message (drafts). *ret_meta is a new object: the whole metadata
 * (the upload's JSON part, else the arguments; a draft's message is its "message"). 1 with the
 * refusal in rp (400: no message), 0, -ENOMEM.
 */
int gmail_upload(TwinCall *c, bool in_message, char **ret, size_t *ret_len, json_t **ret_meta,
                 TwinReply *rp);

/* ----- message changes (messages.c) ----- */

/* What a change answers and the tape keeps of a message: {id, threadId, labelIds}. New
 * reference, NULL on OOM. */
json_t *gmail_slim(const json_t *m);

/*
 * Resolves add/remove (label ids, borrowed, may be NULL) for message m and checks
 * what Gmail refuses (DRAFT is the drafts' own), into *ret_add and *ret_remove (new). 1 with the
 * refusal in rp, 0, -ENOMEM.
 */
int gmail_labels_checked(TwinCall *c, TwinReply *rp, const json_t *m, const json_t *add,
                         const json_t *remove, json_t **ret_add, json_t **ret_remove);

/* Changes the labels of m as gmail_labels_checked allows, its before/after on the tape.
 * 1 with the refusal in rp, 0, -ENOMEM. */
int gmail_relabel(TwinCall *c, TwinReply *rp, json_t *m, const json_t *add, const json_t *remove);

/*
 * Sends raw (len bytes) as the mailbox: completed (From, Date, Message-ID when missing),
 * stored with SENT (and INBOX when addressed to the mailbox itself, its filters applied
 * then), in thread (NULL: by its references). keep_id: the message id to use (NULL: minted).
 * The stored row (borrowed) in *ret. 1 with the refusal in rp (no recipient), 0, -ENOMEM.
 */
int gmail_send_raw(TwinCall *c, TwinReply *rp, const char *raw, size_t len, const char *thread,
                   const char *keep_id, json_t **ret);

/*
 * The list argument key as twin_arg_strv reads it, except that a REST query repeating it
 * (googleapis sends an array as labelIds=A&labelIds=B) gives every value. Same returns.
 */
int gmail_arg_list(TwinCall *c, const char *key, json_t **ret);

/* ----- list paging (store.c) ----- */

/*
 * Reads pageToken and maxResults (default def, at most max) from the args: *ret_offset,
 * *ret_size. -EINVAL with rp filled for a bad token or size; 0; -ENOMEM.
 */
int gmail_page(TwinCall *c, const char *size_key, int64_t def, int64_t max, size_t *ret_offset,
               size_t *ret_size, TwinReply *rp);

/* Sets body.nextPageToken when offset + size < total. 0, -ENOMEM. */
int gmail_page_next(json_t *body, size_t offset, size_t size, size_t total);

/* ----- threads (threads.c) ----- */

/* The messages of thread id (a new array of borrowed rows, insertion order); NULL on OOM. */
json_t *gmail_thread_messages(json_t *world, const char *id);

/* ----- the actions, one per file family ----- */
int gmail_get_profile(TwinCall *c, TwinReply *rp);
int gmail_list_messages(TwinCall *c, TwinReply *rp);
int gmail_get_message(TwinCall *c, TwinReply *rp);
int gmail_send_message(TwinCall *c, TwinReply *rp);
int gmail_insert_message(TwinCall *c, TwinReply *rp);
int gmail_import_message(TwinCall *c, TwinReply *rp);
int gmail_modify_message(TwinCall *c, TwinReply *rp);
int gmail_batch_modify_messages(TwinCall *c, TwinReply *rp);
int gmail_batch_delete_messages(TwinCall *c, TwinReply *rp);
int gmail_trash_message(TwinCall *c, TwinReply *rp);
int gmail_untrash_message(TwinCall *c, TwinReply *rp);
int gmail_delete_message(TwinCall *c, TwinReply *rp);
int gmail_get_attachment(TwinCall *c, TwinReply *rp);
int gmail_label_message(TwinCall *c, TwinReply *rp);
int gmail_unlabel_message(TwinCall *c, TwinReply *rp);
int gmail_apply_sensitive_message_label(TwinCall *c, TwinReply *rp);

int gmail_search_threads(TwinCall *c, TwinReply *rp);
int gmail_get_thread(TwinCall *c, TwinReply *rp);
int gmail_modify_thread(TwinCall *c, TwinReply *rp);
int gmail_trash_thread(TwinCall *c, TwinReply *rp);
int gmail_untrash_thread(TwinCall *c, TwinReply *rp);
int gmail_delete_thread(TwinCall *c, TwinReply *rp);
int gmail_label_thread(TwinCall *c, TwinReply *rp);
int gmail_unlabel_thread(TwinCall *c, TwinReply *rp);
int gmail_apply_sensitive_thread_label(TwinCall *c, TwinReply *rp);

int gmail_list_labels(TwinCall *c, TwinReply *rp);
int gmail_get_label(TwinCall *c, TwinReply *rp);
int gmail_create_label(TwinCall *c, TwinReply *rp);
int gmail_update_label(TwinCall *c, TwinReply *rp);
int gmail_patch_label(TwinCall *c, TwinReply *rp);
int gmail_delete_label(TwinCall *c, TwinReply *rp);

int gmail_list_drafts(TwinCall *c, TwinReply *rp);
int gmail_get_draft(TwinCall *c, TwinReply *rp);
int gmail_create_draft(TwinCall *c, TwinReply *rp);
int gmail_update_draft(TwinCall *c, TwinReply *rp);
int gmail_send_draft(TwinCall *c, TwinReply *rp);
int gmail_delete_draft(TwinCall *c, TwinReply *rp);

int gmail_list_history(TwinCall *c, TwinReply *rp);
int gmail_list_filters(TwinCall *c, TwinReply *rp);
int gmail_get_filter(TwinCall *c, TwinReply *rp);
int gmail_create_filter(TwinCall *c, TwinReply *rp);
int gmail_delete_filter(TwinCall *c, TwinReply *rp);
int gmail_list_send_as(TwinCall *c, TwinReply *rp);
int gmail_get_send_as(TwinCall *c, TwinReply *rp);
int gmail_list_forwarding_addresses(TwinCall *c, TwinReply *rp);
int gmail_get_forwarding_address(TwinCall *c, TwinReply *rp);

/* Applies the mailbox's filters to the new message m (store.c calls it). 0, -ENOMEM. */
int gmail_filters_apply(json_t *world, json_t *m, int64_t now_ms);
