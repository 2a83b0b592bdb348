/* SPDX-License-Identifier: MIT */
/*
 * Linear's checks, read against the Linear twin's world (pods/linear): teams[] {id, key},
 * states[] {id, teamId, name}, labels[] {id, name, teamId}, users[] {id, name, displayName,
 * email}, issues[] {id, teamId, title, stateId, estimate, assigneeId, labelIds[],
 * archivedAt}, comments[] {id, issueId, parentId, body} — flat lists joined by id, as
 * Linear's own API keys them. Semantics follow hosted Pome's declarations (its
 * twin-linear check-*.ts); where this file differs it says so at the check.
 *
 * Every check but the tape's names its issue by exact title within one team (by key, such
 * as ENG): titles are unique per team only in the seed, so the team scopes the lookup and a
 * title two unarchived issues of the team share is a failure that says so, never a coin
 * flip. An archived issue is not there. Hosted Pome skips where its export was truncated or
 * a join dangles; this twin exports whole worlds, so each such miss is a failure naming it.
 */
#include <inttypes.h>
#include <strings.h>

#include "common/json-util.h"
#include "pods/grade/check.h"

/* ---------------------------------------------------------------- resolving */

/* The row of world's list whose "id" is id, and its index, or NULL. */
static json_t *row_by_id(json_t *world, const char *list, const char *id, size_t *ret_idx)
{
        size_t i;
        json_t *x;
        if (!id)
                return NULL;
        json_array_foreach (json_object_get(world, list), i, x)
                if (streq_ptr(json_get_str(x, "id"), id)) {
                        *ret_idx = i;
                        return x;
                }
        return NULL;
}

/* Cites world's list when it has one, else the whole document. */
static int cite_list(GradeOutcome *o, json_t *world, const char *list)
{
        return json_object_get(world, list) ? grade_cite_path(o, "/%s", list)
                                            : grade_cite_path(o, "%s", "");
}

/* Cites key of issues[idx] when the row carries it, else the row: an unset estimate or a
 * missing assignee is exactly what a reader opens the row to see. */
static int cite_issue_field(GradeOutcome *o, const json_t *issue, size_t idx, const char *key)
{
        return json_object_get(issue, key) ? grade_cite_path(o, "/issues/%zu/%s", idx, key)
                                           : grade_cite_path(o, "/issues/%zu", idx);
}

/*
 * The issue titled by the "title" argument in the team keyed by "team", in world: 1 with the
 * row and its index, or 0 with o failed saying what is missing (a verdict, not an error),
 * citing what was searched when world is the final one (a pointer always addresses the
 * final world). -ENOMEM.
 */
static int need_issue(const GradeCheckInput *in, json_t *world, const char *where, GradeOutcome *o,
                      json_t **ret, size_t *ret_idx)
{
        const char *key = grade_arg_str(in, "team"), *title = grade_arg_str(in, "title");
        bool cites = world == in->final;
        json_t *team = NULL, *x;
        size_t i, hits = 0, in_team = 0;
        int r;
        /* the key exactly: Linear's keys are upper-case, and ENG is not Eng */
        json_array_foreach (json_object_get(world, "teams"), i, x)
                if (streq_ptr(json_get_str(x, "key"), key))
                        team = x;
        const char *team_id = json_get_str(team, "id");
        if (!team_id) {
                if ((r = grade_outcome_set(o, GRADE_FAILED, "there is no team `%s` in the %s", key,
                                           where)) < 0)
                        return r;
                return cites && (r = cite_list(o, world, "teams")) < 0 ? r : 0;
        }
        /* the title exactly (a case-folded match would let a half-renamed issue comply) */
        json_array_foreach (json_object_get(world, "issues"), i, x) {
                if (!streq_ptr(json_get_str(x, "teamId"), team_id))
                        continue;
                json_t *archived = json_object_get(x, "archivedAt");
                if (archived && !json_is_null(archived))
                        continue;
                in_team++;
                if (!streq_ptr(json_get_str(x, "title"), title))
                        continue;
                if (!hits++) {
                        *ret = x;
                        *ret_idx = i;
                }
        }
        if (hits == 1)
                return 1;
        if (hits > 1)
                r = grade_outcome_set(o, GRADE_FAILED,
                                      "%zu unarchived issues in `%s` are titled \"%s\" in the %s: "
                                      "the sentence names one",
                                      hits, key, title, where);
        else
                r = grade_outcome_set(o, GRADE_FAILED,
                                      "no unarchived issue in `%s` is titled \"%s\" in the %s (%zu "
                                      "issue(s) there)",
                                      key, title, where, in_team);
        if (r < 0)
                return r;
        return cites && (r = cite_list(o, world, "issues")) < 0 ? r : 0;
}

/* ---------------------------------------------------------------- issues */

static int issue_exists(const GradeCheckInput *in, GradeOutcome *o)
{
        json_t *issue;
        size_t ii;
        int r = need_issue(in, in->final, "final state", o, &issue, &ii);
        if (r <= 0)
                return r;
        if ((r = grade_outcome_set(o, GRADE_PASSED, "issue \"%s\" exists in `%s` as %s",
                                   grade_arg_str(in, "title"), grade_arg_str(in, "team"),
                                   strempty(json_get_str(issue, "identifier")))) < 0)
                return r;
        return grade_cite_path(o, "/issues/%zu", ii);
}

static int issue_state(const GradeCheckInput *in, GradeOutcome *o)
{
        json_t *issue;
        size_t ii, si;
        int r = need_issue(in, in->final, "final state", o, &issue, &ii);
        if (r <= 0)
                return r;
        const char *want = grade_arg_str(in, "state"), *sid = json_get_str(issue, "stateId");
        /* an issue holds a state id, and states are per team: the join is team-scoped so a
         * two-team world cannot lend another team's "Done" */
        json_t *st = row_by_id(in->final, "states", sid, &si);
        if (st && !streq_ptr(json_get_str(st, "teamId"), json_get_str(issue, "teamId")))
                st = NULL;
        if ((r = cite_issue_field(o, issue, ii, "stateId")) < 0)
                return r;
        const char *name = json_get_str(st, "name");
        if (!name) {
                if ((r = cite_list(o, in->final, "states")) < 0)
                        return r;
                return grade_outcome_set(o, GRADE_FAILED,
                                         "the issue's state %s is no workflow state of its team "
                                         "(wanted \"%s\")",
                                         sid ? sid : "(none)", want);
        }
        if ((r = grade_cite_path(o, "/states/%zu/name", si)) < 0)
                return r;
        /* case-insensitive: a state's name is prose an author retypes */
        return grade_outcome_set(o, strcasecmp(name, want) == 0 ? GRADE_PASSED : GRADE_FAILED,
                                 "the issue is in state \"%s\" (wanted \"%s\")", name, want);
}

static int issue_has_label(const GradeCheckInput *in, GradeOutcome *o)
{
        json_t *issue;
        size_t ii, i;
        int r = need_issue(in, in->final, "final state", o, &issue, &ii);
        if (r <= 0)
                return r;
        const char *want = grade_arg_str(in, "label");
        json_t *ids = json_object_get(issue, "labelIds"), *id;
        size_t dangling = 0, hit = SIZE_MAX;
        if ((r = cite_issue_field(o, issue, ii, "labelIds")) < 0)
                return r;
        /* the issue holds label ids; their names are the catalog's, case-insensitive */
        json_array_foreach (ids, i, id) {
                size_t li;
                json_t *l = row_by_id(in->final, "labels", json_string_value(id), &li);
                if (!l)
                        dangling++;
                else if (hit == SIZE_MAX &&
                         strcasecmp(strempty(json_get_str(l, "name")), want) == 0)
                        hit = li;
        }
        r = hit != SIZE_MAX ? grade_cite_path(o, "/labels/%zu", hit)
                            : cite_list(o, in->final, "labels");
        if (r < 0)
                return r;
        return grade_outcome_set(o, hit != SIZE_MAX ? GRADE_PASSED : GRADE_FAILED,
                                 "the issue carries %zu label(s)%s, %s \"%s\"",
                                 json_array_size(ids),
                                 dangling ? " (some not in the label catalog)" : "",
                                 hit != SIZE_MAX ? "among them" : "none of them", want);
}

static int issue_estimate(const GradeCheckInput *in, GradeOutcome *o)
{
        json_t *issue;
        size_t ii;
        int r = need_issue(in, in->final, "final state", o, &issue, &ii);
        if (r <= 0)
                return r;
        int64_t want = grade_arg_int(in, "estimate");
        json_t *est = json_object_get(issue, "estimate");
        if ((r = cite_issue_field(o, issue, ii, "estimate")) < 0)
                return r;
        /* unset is a failure, not a skip: an unestimated issue is what this rules out */
        if (!json_is_number(est))
                return grade_outcome_set(o, GRADE_FAILED,
                                         "the issue's estimate is unset (wanted %" PRId64 ")",
                                         want);
        double v = json_number_value(est);
        return grade_outcome_set(o, v == (double)want ? GRADE_PASSED : GRADE_FAILED,
                                 "the issue's estimate is %g (wanted %" PRId64 ")", v, want);
}

static int issue_assignee(const GradeCheckInput *in, GradeOutcome *o)
{
        json_t *issue;
        size_t ii, ui;
        int r = need_issue(in, in->final, "final state", o, &issue, &ii);
        if (r <= 0)
                return r;
        const char *want = grade_arg_str(in, "user");
        json_t *user = row_by_id(in->final, "users", json_get_str(issue, "assigneeId"), &ui);
        if ((r = cite_issue_field(o, issue, ii, "assigneeId")) < 0)
                return r;
        if (!user)
                return grade_outcome_set(o, GRADE_FAILED, "the issue has no assignee (wanted `%s`)",
                                         want);
        if ((r = grade_cite_path(o, "/users/%zu", ui)) < 0)
                return r;
        /* any spelling of the user: email, name or display name, case-insensitive */
        static const char *const keys[] = {"email", "name", "displayName"};
        const char *shown = NULL;
        bool ok = false;
        for (size_t k = 0; k < ELEMENTSOF(keys); k++) {
                const char *s = json_get_str(user, keys[k]);
                if (!s || !*s)
                        continue;
                shown = shown ?: s;
                ok = ok || strcasecmp(s, want) == 0;
        }
        return grade_outcome_set(o, ok ? GRADE_PASSED : GRADE_FAILED,
                                 "the issue is assigned to `%s` (wanted `%s`)",
                                 shown ? shown : strempty(json_get_str(user, "id")), want);
}

/* ---------------------------------------------------------------- comments */

static int issue_comment_contains(const GradeCheckInput *in, GradeOutcome *o)
{
        json_t *issue;
        size_t ii;
        int r = need_issue(in, in->final, "final state", o, &issue, &ii);
        if (r <= 0)
                return r;
        const char *needle = grade_arg_str(in, "needle"), *id = json_get_str(issue, "id");
        json_t *cm;
        size_t i, on = 0, hits = 0;
        /* a case-sensitive substring of any comment's body on the issue, replies included,
         * whoever wrote it */
        json_array_foreach (json_object_get(in->final, "comments"), i, cm) {
                if (!id || !streq_ptr(json_get_str(cm, "issueId"), id))
                        continue;
                on++;
                const char *body = json_get_str(cm, "body");
                if (!body || !strstr(body, needle))
                        continue;
                hits++;
                if ((r = grade_cite_path(o, "/comments/%zu", i)) < 0)
                        return r;
        }
        if (!hits && (r = cite_list(o, in->final, "comments")) < 0)
                return r;
        return grade_outcome_set(o, hits ? GRADE_PASSED : GRADE_FAILED,
                                 "%zu of the %zu comment(s) on the issue contain \"%s\"", hits, on,
                                 needle);
}

/* Whether list (an array of ids as JSON strings) holds id. */
static bool ids_have(const json_t *list, const char *id)
{
        return id && json_object_get(list, id);
}

/*
 * A comment on the issue whose parent is a comment the seed already had on it. Stricter
 * than hosted Pome's in one way, said here: the reply itself must not be in the seed, so a
 * world seeded with a thread does not pass an agent that did nothing.
 */
static int issue_threaded_reply(const GradeCheckInput *in, GradeOutcome *o)
{
        json_t *seed_issue, *issue;
        size_t si, ii;
        int r = need_issue(in, in->seed, "seed", o, &seed_issue, &si);
        if (r < 0)
                return r;
        if (r == 0) /* the seed cannot be cited: cite where the final world keeps issues */
                return cite_list(o, in->final, "issues");
        if ((r = need_issue(in, in->final, "final state", o, &issue, &ii)) <= 0)
                return r;
        _cleanup_json_ json_t *seeded = json_object(), *all = json_object();
        if (!seeded || !all)
                return -ENOMEM;
        const char *seed_id = json_get_str(seed_issue, "id"), *id = json_get_str(issue, "id");
        json_t *cm;
        size_t i, replies = 0, on = 0;
        json_array_foreach (json_object_get(in->seed, "comments"), i, cm) {
                const char *cid = json_get_str(cm, "id");
                if (!cid)
                        continue;
                if (json_object_set_new(all, cid, json_true()) < 0)
                        return -ENOMEM;
                if (seed_id && streq_ptr(json_get_str(cm, "issueId"), seed_id) &&
                    json_object_set_new(seeded, cid, json_true()) < 0)
                        return -ENOMEM;
        }
        json_array_foreach (json_object_get(in->final, "comments"), i, cm) {
                if (!id || !streq_ptr(json_get_str(cm, "issueId"), id))
                        continue;
                on++;
                if (!ids_have(seeded, json_get_str(cm, "parentId")) ||
                    ids_have(all, json_get_str(cm, "id")))
                        continue;
                replies++;
                if ((r = grade_cite_path(o, "/comments/%zu", i)) < 0)
                        return r;
        }
        if (!replies && (r = cite_list(o, in->final, "comments")) < 0)
                return r;
        return grade_outcome_set(o, replies ? GRADE_PASSED : GRADE_FAILED,
                                 "%zu new repl%s to a seeded comment (%zu comment(s) on the issue "
                                 "in the seed, %zu at the end)",
                                 replies, replies == 1 ? "y" : "ies", json_object_size(seeded), on);
}

/* ---------------------------------------------------------------- the vocabulary */

#define P_TITLE                                                                   \
        {                                                                         \
                "title", GRADE_PARAM_TEXT, NULL, false, "the issue's exact title" \
        }
/* a team key (ENG): a login's characters, which hold Linear's [A-Z][A-Z0-9]* */
#define P_TEAM                                                                        \
        {                                                                             \
                "team", GRADE_PARAM_LOGIN, NULL, false, "the team's key, such as ENG" \
        }

static const GradeParam p_title_team[] = {P_TITLE, P_TEAM};
static const GradeParam p_title_team_state[] = {
        P_TITLE, P_TEAM, {"state", GRADE_PARAM_TEXT, NULL, false, "a workflow state's name"}};
static const GradeParam p_title_team_label[] = {
        P_TITLE, P_TEAM, {"label", GRADE_PARAM_TEXT, NULL, false, "a label's name"}};
static const GradeParam p_title_team_estimate[] = {
        P_TITLE, P_TEAM, {"estimate", GRADE_PARAM_COUNT, NULL, false, "estimate points"}};
static const GradeParam p_title_team_user[] = {
        P_TITLE,
        P_TEAM,
        {"user", GRADE_PARAM_LABEL, NULL, false, "the user's email, name or display name"}};
static const GradeParam p_title_team_needle[] = {
        P_TITLE,
        P_TEAM,
        {"needle", GRADE_PARAM_TEXT, NULL, false, "text a comment's body contains"}};

#define PARAMS(p) p, ELEMENTSOF(p)

const GradeCheck grade_checks_linear[] = {
        {"linear.issue-exists", "linear", "An issue titled \"{title}\" exists in `{team}`",
         "An unarchived issue with exactly this title is in the team (by key) at the end. "
         "Nothing about its state or content; a seeded issue makes it true before the agent "
         "starts.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_title_team), issue_exists},
        {"linear.issue-state", "linear", "Issue \"{title}\" in `{team}` is in state \"{state}\"",
         "The issue's workflow state (its stateId joined to its own team's states) has this "
         "name, case-insensitive. A missing, archived or ambiguous issue fails.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_title_team_state), issue_state},
        {"linear.issue-has-label", "linear", "Issue \"{title}\" in `{team}` has label \"{label}\"",
         "A label of this name (case-insensitive; its labelIds joined to the label catalog) is "
         "among the issue's; others may be too.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_title_team_label), issue_has_label},
        {"linear.issue-estimate", "linear", "Issue \"{title}\" in `{team}` has estimate {estimate}",
         "The issue's estimate is this number of points; an unset estimate fails.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_title_team_estimate),
         issue_estimate},
        {"linear.issue-assignee", "linear", "Issue \"{title}\" in `{team}` is assigned to `{user}`",
         "The issue's assignee has this email, name or display name (case-insensitive); an "
         "unassigned issue fails.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_title_team_user), issue_assignee},
        {"linear.issue-comment-contains", "linear",
         "A comment on issue \"{title}\" in `{team}` contains \"{needle}\"",
         "Some comment's body on the issue, a reply or not, contains the text (case-sensitive "
         "substring), whoever wrote it.",
         GRADE_SUBSTRATE_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_title_team_needle),
         issue_comment_contains},
        {"linear.issue-threaded-reply", "linear",
         "A threaded reply to a seeded comment exists on issue \"{title}\" in `{team}`",
         "A comment on the issue that was not in the seed has for parent a comment the seed "
         "had on it: a reply inside an existing thread, not a new root comment nor a reply to "
         "the agent's own. Nothing about what it says or who wrote it.",
         GRADE_SUBSTRATE_SEED_FINAL, GRADE_POSITIVE, NULL, PARAMS(p_title_team),
         issue_threaded_reply},
        {"linear.no-unsupported-endpoint", "linear", "No unsupported endpoint was called",
         "No call on the Linear twin's tape reached an operation the twin does not implement "
         "(fidelity \"unsupported\"). A GraphQL error from an operation it does implement is an "
         "answer, not unsupported.",
         GRADE_SUBSTRATE_TAPE, GRADE_NEGATIVE, NULL, NULL, 0, grade_check_no_unsupported_endpoint},
};
const size_t grade_n_checks_linear = ELEMENTSOF(grade_checks_linear);
