# octokit.rb (Debian's ruby-octokit), unmodified, over a realistic flow against the GitHub twin:
# the user, a repository, issues with labels and comments, milestones, branches and refs, a file,
# a pull request through review to merge, other users, the organisation and the rate limit.
# Usage: octokit_flow.rb TOKEN API_ENDPOINT. Prints one line per step ("ok  " or "FAIL") and
# "passed N"; exits 1 when a step failed.
require "octokit"
token, endpoint = ARGV
c = Octokit::Client.new(access_token: token, api_endpoint: endpoint.end_with?("/") ? endpoint : endpoint + "/")
c.auto_paginate = true
$ok = 0
$failed = 0
def step(name)
  v = yield
  puts "ok   #{name} #{v.inspect[0, 80]}"
  $ok += 1
rescue StandardError => e
  $failed += 1
  puts "FAIL #{name} #{e.class}: #{e.message[0, 200]}"
end
R = "acme/api"
step("user.login") { c.user.login }
step("repository.full_name") { c.repository(R).full_name }
step("repository.owner.login") { c.repository(R).owner.login }
step("issue.title") { c.issue(R, 1).title }
step("issue.user.login") { c.issue(R, 1).user.login }
step("list_issues") { c.list_issues(R, state: "all").map(&:number) }
step("add_labels_to_an_issue") { c.add_labels_to_an_issue(R, 1, ["enhancement"]).map(&:name) }
step("replace_all_labels") { c.replace_all_labels(R, 1, ["bug"]).map(&:name) }
step("labels_for_issue") { c.labels_for_issue(R, 1).map(&:name) }
step("add_comment") { c.add_comment(R, 1, "from octokit.rb").id }
step("issue_comments") { c.issue_comments(R, 1).map(&:body) }
step("create_issue") { c.create_issue(R, "Rb issue", "b", labels: "bug").number }
step("close_issue") { c.close_issue(R, 1).state }
step("labels") { c.labels(R).map(&:name) }
step("add_label") { c.add_label(R, "rb", "00ff00").name }
step("milestones") { c.milestones(R).map(&:title) }
step("branch") { c.branch(R, "main").commit.sha }
step("ref") { c.ref(R, "heads/main").object.sha }
step("refs") { c.refs(R).map(&:ref) }
sha = c.branch(R, "main").commit.sha
step("create_ref") { c.create_ref(R, "heads/rb", sha).ref }
step("create_contents") { c.create_contents(R, "rb.txt", "add", "hello", branch: "rb").commit.sha }
step("create_pull_request") { c.create_pull_request(R, "main", "rb", "Rb PR", "x").number }
n = c.pull_requests(R).first.number
step("pull_request_files") { c.pull_request_files(R, n).map(&:filename) }
step("create_pull_request_review") { c.create_pull_request_review(R, n, event: "COMMENT", body: "ok").id }
step("merge_pull_request") { c.merge_pull_request(R, n).merged }
step("user(alice).name") { c.user("alice").name }
step("organization(acme).name") { c.organization("acme").name }
step("rate_limit.limit") { c.rate_limit.limit }
step("search_issues") { c.search_issues("repo:acme/api is:issue").total_count }
puts "passed #{$ok}"
exit($failed.zero? ? 0 : 1)
