"""PyGithub (Debian's python3-github), unmodified, over a realistic flow against the GitHub
twin: the user, the repository and its owner, an issue and its labels and comments, labels,
branches and refs, a file, a pull request from review to merge, other users, the organisation,
the rate limit, milestones and search. Usage: pygithub_flow.py TOKEN BASE_URL. Prints one line
per step ("ok  " or "FAIL") and "passed N"; exits 1 when a step failed."""
import sys, github
from flow import step, finish
from github import Github
tok, base = sys.argv[1], sys.argv[2]
g = Github(login_or_token=tok, base_url=base, retry=None)
me = g.get_user()
step("get_user().login", lambda: me.login)
repo = g.get_repo("acme/api")
step("repo.full_name", lambda: repo.full_name)
step("repo.owner.name", lambda: repo.owner.name)
step("repo.clone_url", lambda: repo.clone_url)
issue = repo.get_issue(1)
step("issue.title", lambda: issue.title)
step("issue.user.name", lambda: issue.user.name)
step("issue.labels", lambda: [l.name for l in issue.labels])
step("issue.add_to_labels", lambda: issue.add_to_labels("enhancement"))
step("issue.set_labels", lambda: issue.set_labels("enhancement"))
step("issue.create_comment", lambda: issue.create_comment("from pygithub").id)
step("issue.get_comments", lambda: [c.body for c in issue.get_comments()])
step("repo.create_issue", lambda: repo.create_issue(title="Py issue", body="b", labels=["bug"]).number)
step("repo.get_issues", lambda: [i.number for i in repo.get_issues(state="all")])
step("repo.get_labels", lambda: [l.name for l in repo.get_labels()])
step("repo.create_label", lambda: repo.create_label("py", "00ff00").name)
step("repo.get_branch", lambda: repo.get_branch("main").commit.sha)
step("repo.get_git_ref", lambda: repo.get_git_ref("heads/main").object.sha)
sha = repo.get_branch("main").commit.sha
step("repo.create_git_ref", lambda: repo.create_git_ref("refs/heads/py", sha).ref)
step("repo.create_file", lambda: repo.create_file("py.txt", "add", "hello", branch="py")["commit"].sha)
step("repo.create_pull", lambda: repo.create_pull(title="Py PR", body="x", head="py", base="main").number)
step("repo.get_pulls", lambda: [p.number for p in repo.get_pulls()])
pr = repo.get_pulls()[0]
step("pr.get_files", lambda: [f.filename for f in pr.get_files()])
step("pr.create_review", lambda: pr.create_review(body="lgtm", event="COMMENT").id)
step("pr.merge", lambda: pr.merge().merged)
step("g.get_user('alice').name", lambda: g.get_user("alice").name)
step("g.get_organization('acme').name", lambda: g.get_organization("acme").name)
step("g.get_rate_limit", lambda: g.get_rate_limit().core.limit)
step("issue.edit(state=closed)", lambda: issue.edit(state="closed"))
step("repo.get_milestones", lambda: [m.title for m in repo.get_milestones()])
step("search_issues", lambda: [i.number for i in g.search_issues("repo:acme/api is:issue")])
finish()
