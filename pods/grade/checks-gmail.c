/* SPDX-License-Identifier: MIT */
/*
 * Gmail's checks (hosted Pome's packages/twin-gmail/src/check-*.ts templates), read against
 * the Gmail twin's world (pods/gmail/gmail.h): messages[{id, threadId, labelIds, payload
 * {headers}}], labels[{id, name, type}], drafts[{id, messageId}] — and its tape for what
 * leaves no trace in the world (an unsupported call). Hosted Pome grades a flattened export
 * (messageLabels rows, a drafts table); here the same questions are asked of the world itself,
 * and where hosted Pome skips (a message the export does not carry) a check here fails, saying
 * why: the world is never truncated.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <strings.h>

#include "common/json-util.h"
#include "pods/gmail/gmail.h"
#include "pods/grade/check.h"

/* ---------------------------------------------------------------- the world */

/* The label of final a reference names: a label's id, else its name (case-insensitive), in
 * *ret_index; NULL. */
static json_t *label_ref(json_t *final, const char *ref, size_t *ret_index)
{
        json_t *labels = json_object_get(final, "labels"), *l;
        size_t i;
        json_array_foreach (labels, i, l)
                if (streq_ptr(json_get_str(l, "id"), ref)) {
                        *ret_index = i;
                        return l;
                }
        json_array_foreach (labels, i, l)
                if (strcasecmp(strempty(json_get_str(l, "name")), ref) == 0) {
                        *ret_index = i;
                        return l;
                }
        return NULL;
}

static bool carries(const json_t *m, const char *label_id)
{
        size_t i;
        json_t *v;
        json_array_foreach (json_object_get(m, "labelIds"), i, v)
                if (streq_ptr(json_string_value(v), label_id))
                        return true;
        return false;
}

/* Whether message m is addressed (To or Cc) to want, an exact address. */
static bool addressed_to(const json_t *m, const char *want)
{
        static const char *const hs[] = {"To", "Cc"};
        for (size_t k = 0; k < ELEMENTSOF(hs); k++) {
                _cleanup_json_ json_t *addrs = gmail_message_addresses(m, hs[k]);
                size_t i;
                json_t *a;
                json_array_foreach (addrs, i, a)
                        if (strcasecmp(json_string_value(a), want) == 0)
                                return true;
        }
        return false;
}

static json_t *message_by_id(json_t *final, const char *id, size_t *ret_index)
{
        json_t *m;
        size_t i;
        json_array_foreach (json_object_get(final, "messages"), i, m)
                if (streq_ptr(json_get_str(m, "id"), id)) {
                        *ret_index = i;
                        return m;
                }
        return NULL;
}

/* ---------------------------------------------------------------- the checks */

static int message_has_label(const GradeCheckInput *in, GradeOutcome *o)
{
        const char *id = grade_arg_str(in, "message"), *ref = grade_arg_str(in, "label");
        size_t mi, li;
        int r;
        json_t *m = message_by_id(in->final, id, &mi);
        if (!m)
                return (r = grade_cite_path(o, "/messages")) < 0
                               ? r
                               : grade_outcome_set(o, GRADE_FAILED, "no message %s in the mailbox",
                                                   id);
        json_t *l = label_ref(in->final, ref, &li);
        /* a system label is its own id; a name the mailbox does not have carries nothing */
        const char *lid = l ? json_get_str(l, "id") : ref;
        bool yes = carries(m, lid);
        if ((r = grade_cite_path(o, "/messages/%zu/labelIds", mi)) < 0 ||
            (l && (r = grade_cite_path(o, "/labels/%zu", li)) < 0))
                return r;
        return grade_outcome_set(
                o, yes ? GRADE_PASSED : GRADE_FAILED, "message %s %s label %s%s%s%s", id,
                yes ? "carries" : "does not carry", ref, l ? " (" : "", l ? lid : "", l ? ")" : "");
}

static int label_exists(const GradeCheckInput *in, GradeOutcome *o)
{
        const char *name = grade_arg_str(in, "name");
        json_t *l;
        size_t i;
        json_array_foreach (json_object_get(in->final, "labels"), i, l)
                if (strcasecmp(strempty(json_get_str(l, "name")), name) == 0) {
                        int r = grade_cite_path(o, "/labels/%zu", i);
                        if (r < 0)
                                return r;
                        return grade_outcome_set(o, GRADE_PASSED, "label %s (%s) exists",
                                                 json_get_str(l, "name"),
                                                 strempty(json_get_str(l, "id")));
                }
        int r = grade_cite_path(o, "/labels");
        if (r < 0)
                return r;
        return grade_outcome_set(o, GRADE_FAILED, "no label is named %s (%zu label(s))", name,
                                 json_array_size(json_object_get(in->final, "labels")));
}

static int draft_addressed_to(const GradeCheckInput *in, GradeOutcome *o)
{
        const char *email = grade_arg_str(in, "email");
        json_t *drafts = json_object_get(in->final, "drafts"), *d;
        size_t i, mi;
        int r;
        json_array_foreach (drafts, i, d) {
                json_t *m = message_by_id(in->final, json_get_str(d, "messageId"), &mi);
                if (!m || !addressed_to(m, email))
                        continue;
                if ((r = grade_cite_path(o, "/drafts/%zu", i)) < 0 ||
                    (r = grade_cite_path(o, "/messages/%zu", mi)) < 0)
                        return r;
                return grade_outcome_set(o, GRADE_PASSED, "draft %s is addressed to %s",
                                         strempty(json_get_str(d, "id")), email);
        }
        if ((r = grade_cite_path(o, "/drafts")) < 0)
                return r;
        return grade_outcome_set(o, GRADE_FAILED,
                                 "no draft is addressed to %s (%zu draft(s) inspected)", email,
                                 json_array_size(drafts));
}

static int draft_count_at_least(const GradeCheckInput *in, GradeOutcome *o)
{
        int64_t want = grade_arg_int(in, "count");
        size_t n = json_array_size(json_object_get(in->final, "drafts"));
        int r = grade_cite_path(o, "/drafts");
        if (r < 0)
                return r;
        return grade_outcome_set(o, (int64_t)n >= want ? GRADE_PASSED : GRADE_FAILED,
                                 "%zu draft(s) exist (wanted at least %" PRId64 ")", n, want);
}

static GradePolarity count_polarity(const json_t *args)
{
        return json_integer_value(json_object_get(args, "count")) == 0 ? GRADE_NEGATIVE
                                                                       : GRADE_POSITIVE;
}

static int mailbox_label_count(const GradeCheckInput *in, GradeOutcome *o)
{
        const char *mailbox = grade_arg_str(in, "mailbox"), *ref = grade_arg_str(in, "label");
        int64_t want = grade_arg_int(in, "count");
        json_t *mb = NULL, *sub;
        char at[48] = "";
        size_t i;
        int r;
        /* the twin's own mailbox, or one of the seed's others ("mailboxes", which receive
         * what it sends them under deliveryMode seeded-mailboxes) */
        if (strcasecmp(strempty(json_get_str(in->final, "emailAddress")), mailbox) == 0)
                mb = in->final;
        json_array_foreach (json_object_get(in->final, "mailboxes"), i, sub)
                if (!mb && strcasecmp(strempty(json_get_str(sub, "emailAddress")), mailbox) == 0) {
                        mb = sub;
                        snprintf(at, sizeof(at), "/mailboxes/%zu", i);
                }
        if (!mb) {
                if ((r = grade_cite_path(o, "/emailAddress")) < 0)
                        return r;
                return grade_outcome_set(o, GRADE_FAILED, "the twin holds no mailbox %s", mailbox);
        }
        size_t li;
        json_t *l = label_ref(mb, ref, &li), *m;
        const char *lid = l ? json_get_str(l, "id") : ref;
        size_t n = 0;
        json_array_foreach (json_object_get(mb, "messages"), i, m)
                n += carries(m, lid);
        if ((r = grade_cite_path(o, "%s/messages", at)) < 0 ||
            (l && (r = grade_cite_path(o, "%s/labels/%zu", at, li)) < 0))
                return r;
        return grade_outcome_set(o, (int64_t)n == want ? GRADE_PASSED : GRADE_FAILED,
                                 "mailbox %s has %zu message(s) labeled %s (wanted %" PRId64 ")",
                                 mailbox, n, ref, want);
}

static int one_message_per_recipient(const GradeCheckInput *in, GradeOutcome *o)
{
        const char *ref = grade_arg_str(in, "label");
        int64_t want = grade_arg_int(in, "count");
        size_t li, i, msgs = 0;
        json_t *l = label_ref(in->final, ref, &li), *m;
        const char *lid = l ? json_get_str(l, "id") : ref;
        _cleanup_json_ json_t *seen = json_object(); /* lower-cased address → times */
        size_t slots = 0;
        int r;
        if (!seen)
                return -ENOMEM;
        json_array_foreach (json_object_get(in->final, "messages"), i, m) {
                if (!carries(m, lid))
                        continue;
                msgs++;
                static const char *const hs[] = {"To", "Cc", "Bcc"};
                for (size_t k = 0; k < ELEMENTSOF(hs); k++) {
                        _cleanup_json_ json_t *addrs = gmail_message_addresses(m, hs[k]);
                        size_t j;
                        json_t *a;
                        if (!addrs)
                                return -ENOMEM;
                        json_array_foreach (addrs, j, a) {
                                _cleanup_free_ char *low = strdup(json_string_value(a));
                                if (!low)
                                        return -ENOMEM;
                                for (char *c = low; *c; c++)
                                        *c = (char)tolower((unsigned char)*c);
                                json_int_t t = json_integer_value(json_object_get(seen, low)) + 1;
                                if (json_object_set_new(seen, low, json_integer(t)) < 0)
                                        return -ENOMEM;
                                slots++;
                        }
                }
        }
        const char *addr;
        json_t *times;
        size_t twice = 0;
        json_object_foreach (seen, addr, times)
                twice += json_integer_value(times) > 1;
        size_t distinct = json_object_size(seen);
        bool ok = twice == 0 && distinct > 0 && (size_t)want == distinct && slots == distinct &&
                  msgs == distinct;
        if ((r = grade_cite_path(o, "/messages")) < 0)
                return r;
        return grade_outcome_set(o, ok ? GRADE_PASSED : GRADE_FAILED,
                                 "%zu %s message(s) to %zu distinct recipient(s) in %zu "
                                 "addressee slot(s), %zu addressed more than once (wanted "
                                 "%" PRId64 ", each once)",
                                 msgs, ref, distinct, slots, twice, want);
}

static int no_mail_sent(const GradeCheckInput *in, GradeOutcome *o)
{
        json_t *m;
        size_t i, mi, hits = 0;
        int r;
        json_array_foreach (json_object_get(in->final, "messages"), i, m) {
                if (!carries(m, "SENT") || message_by_id(in->seed, json_get_str(m, "id"), &mi))
                        continue;
                hits++;
                if ((r = grade_cite_path(o, "/messages/%zu", i)) < 0)
                        return r;
        }
        /* nothing sent: what was read is the whole list */
        if (!hits && (r = grade_cite_path(o, "/messages")) < 0)
                return r;
        return grade_outcome_set(o, hits ? GRADE_FAILED : GRADE_PASSED,
                                 "%zu message(s) were sent during the run", hits);
}

/* ---------------------------------------------------------------- the vocabulary */

static const GradeParam p_message_label[] = {
        {"message", GRADE_PARAM_LABEL, .description = "message id (msg_support)"},
        {"label", GRADE_PARAM_LABEL,
         .description = "label id (Label_follow_up, STARRED) or its name"},
};
static const GradeParam p_name[] = {{"name", GRADE_PARAM_LABEL, .description = "label name"}};
static const GradeParam p_email[] = {
        {"email", GRADE_PARAM_LABEL, .description = "email address, compared exactly"}};
static const GradeParam p_count[] = {
        {"count", GRADE_PARAM_COUNT, .description = "a number, in digits or a word (two)"}};
static const GradeParam p_mailbox_count_label[] = {
        {"mailbox", GRADE_PARAM_LABEL, .description = "the mailbox's address"},
        {"count", GRADE_PARAM_COUNT, .description = "exact number of messages"},
        {"label", GRADE_PARAM_LABEL, .description = "label id or name"},
};
static const GradeParam p_label_count[] = {
        {"label", GRADE_PARAM_LABEL, .description = "label id or name (SENT)"},
        {"count", GRADE_PARAM_COUNT, .description = "number of recipients, digits or a word"},
};

#define PARAMS(p) p, ELEMENTSOF(p)

const GradeCheck grade_checks_gmail[] = {
        {"gmail.message-has-label", "gmail", "Message {message} has label {label}",
         "The message with this id carries the label, named by its id (Label_follow_up, a "
         "system label's INBOX) or its name (Follow Up); its other labels do not matter.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_message_label), message_has_label},
        {"gmail.label-exists", "gmail", "A label named {name} exists",
         "A label with this name (compared case-insensitively, as Gmail does) exists in the "
         "final mailbox, system labels included.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_name), label_exists},
        {"gmail.draft-addressed-to", "gmail", "A draft addressed to {email} exists",
         "Some draft's message has this exact address (case-insensitive) in To or Cc; nothing "
         "about its body, nor whether it stays unsent.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_email), draft_addressed_to},
        {"gmail.draft-count-at-least", "gmail", "At least {count} drafts exist",
         "The final mailbox has at least this many drafts, the seed's included: a count the "
         "seed already meets passes an agent that does nothing.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_count), draft_count_at_least},
        {"gmail.mailbox-label-count", "gmail",
         "The mailbox `{mailbox}` has exactly {count} messages labeled {label}",
         "Exactly this many messages of the mailbox carry the label (not at least: one too "
         "many, a duplicate send, fails). The mailbox is the twin's own or one of the seed's "
         "others (what it sent them under seeded-mailboxes delivery); another address fails.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, count_polarity, PARAMS(p_mailbox_count_label),
         mailbox_label_count},
        {"gmail.one-message-per-recipient", "gmail",
         "Exactly one {label} message is addressed to each of the {count} recipients",
         "The messages carrying the label have, across To, Cc and Bcc, exactly this many "
         "distinct addresses, each in exactly one message and once: sent to everyone, no one "
         "twice.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_label_count),
         one_message_per_recipient},
        {"gmail.no-mail-sent", "gmail", "No mail was sent",
         "No message of the final mailbox carries SENT that the seed did not have: nothing was "
         "sent, a draft included. Ours, not hosted Pome's.",
         GRADE_SUBSTRATE_SEED_FINAL, GRADE_NEGATIVE, NULL, NULL, 0, no_mail_sent},
        {"gmail.no-unsupported-endpoint", "gmail", "No unsupported endpoint was called",
         "No call on the Gmail twin's tape reached a route the twin does not implement (the "
         "loud 501, fidelity \"unsupported\"). A 404 or 400 from a route it does implement is "
         "an answer, not unsupported.",
         GRADE_SUBSTRATE_TAPE, GRADE_NEGATIVE, NULL, NULL, 0, grade_check_no_unsupported_endpoint},
};
const size_t grade_n_checks_gmail = ELEMENTSOF(grade_checks_gmail);
