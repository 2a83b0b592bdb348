/* SPDX-License-Identifier: MIT */
/*
 * The GitHub twin's git data: SHA-1 against FIPS 180-4's test vectors, object ids against
 * what git itself computes (blob, tree, commit), ref resolution, and the seed loader for
 * files on several branches (hosted Pome's format).
 */
#include "common/json-util.h"
#include "pods/github/github.h"
#include "pods/twin/sha1.h"
#include "tests/unit/check.h"
#include "tests/unit/twin-test-util.h"

static void test_sha1_vectors(void)
{
        char hex[TWIN_SHA1_HEX];
        /* FIPS 180-4 examples (NIST CSRC "Examples with Intermediate Values", SHA-1) */
        twin_sha1_hex("abc", 3, hex);
        CHECK(streq(hex, "a9993e364706816aba3e25717850c26c9cd0d89d"));
        const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
        twin_sha1_hex(two, strlen(two), hex);
        CHECK(streq(hex, "84983e441c3bd26ebaae4aa1f95129e5e54670f1"));
        twin_sha1_hex("", 0, hex);
        CHECK(streq(hex, "da39a3ee5e6b4b0d3255bfef95601890afd80709"));
        const char *four = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                           "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
        twin_sha1_hex(four, strlen(four), hex);
        CHECK(streq(hex, "a49b2446a02c645bf419f995b67091253a04a259"));

        /* one million 'a', fed in uneven pieces across block boundaries */
        TwinSha1 s;
        uint8_t d[TWIN_SHA1_SIZE];
        char chunk[997];
        memset(chunk, 'a', sizeof(chunk));
        twin_sha1_init(&s);
        size_t left = 1000000;
        while (left > 0) {
                size_t k = left < sizeof(chunk) ? left : sizeof(chunk);
                twin_sha1_update(&s, chunk, k);
                left -= k;
        }
        twin_sha1_final(&s, d);
        twin_sha1_to_hex(d, hex);
        CHECK(streq(hex, "34aa973cd4c4daa4f61eeb2bdbad27316534016f"));

        /* 55, 56 and 64 bytes: the padding edge cases */
        char buf[64];
        memset(buf, 'a', sizeof(buf));
        twin_sha1_hex(buf, 55, hex);
        CHECK(streq(hex, "c1c8bbdc22796e28c0e15163d20899b65621d65a"));
        twin_sha1_hex(buf, 56, hex);
        CHECK(streq(hex, "c2db330f6083854c99d4b5bfb6e8f29f201be699"));
        twin_sha1_hex(buf, 64, hex);
        CHECK(streq(hex, "0098ba824b5c16427bd7a1122a5a442a25ec644d"));
}

/* Object ids as git computes them (`git hash-object`, `git write-tree`, `git commit-tree`). */
static void test_git_objects(void)
{
        char hex[TWIN_SHA1_HEX];
        gh_blob_sha("hello world\n", 12, hex);
        CHECK(streq(hex, "3b18e512dba79e4c8300dd08aeb37f8e728b8dad"));
        gh_blob_sha("", 0, hex);
        CHECK(streq(hex, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"));

        _cleanup_json_ json_t *empty = json_object();
        CHECK_OK(gh_tree_sha(empty, hex));
        CHECK(streq(hex, "4b825dc642cb6eb9a060e54bf8d69288fbee4904"));

        /* nested directories, and "src.txt" sorting between "src/…" entries' name and others */
        _cleanup_json_ json_t *tree =
                json_pack("{s:s, s:s, s:s, s:s}", "src/lib/a.txt", "x", "src.txt", "y", "README.md",
                          "# api\n", "src/main.c", "int main;\n");
        CHECK_OK(gh_tree_sha(tree, hex));
        CHECK(streq(hex, "26e5f52ba0fe961d51a760ae5893ee0540ea0453"));
        /* every directory's tree in the same pass, as git ls-tree shows them */
        _cleanup_json_ json_t *dirs = json_object();
        CHECK_OK(gh_tree_shas(tree, dirs, hex));
        CHECK(json_object_size(dirs) == 2);
        CHECK(streq(jps(dirs, "/src"), "3a8f428c5e0da760ebbf7327f6d63ca76866e6b2"));
        CHECK(streq_ptr(json_string_value(json_object_get(dirs, "src/lib")),
                        "9375a50d54bf5374615a3378349e298761a4b116"));
        CHECK(gh_tree_conflict(tree) == NULL && gh_path_conflicts(tree, NULL, "src") &&
              gh_path_conflicts(tree, NULL, "README.md/x") &&
              !gh_path_conflicts(tree, NULL, "src/y"));

        /* a commit with the same tree, author, time and message git commit-tree made */
        _cleanup_json_ json_t *seed =
                json_pack("{s:[{s:s, s:s}], s:[{s:s, s:s}]}", "users", "login", "alice", "name",
                          "Alice", "repositories", "owner", "alice", "name", "r");
        Twin *t = twin_test_from(&twin_kind_github, seed);
        json_t *w = twin_world(t);
        json_t *repo = gh_repo_find(w, "alice", "r");
        CHECK(jpi(gh_user_find(w, "alice"), "/id") == 1);
        json_t *c1 = gh_commit_add(w, repo, NULL, NULL, tree, "Add files", "alice", 1780000000);
        CHECK(c1 && streq(jps(c1, "/sha"), "1045127636dbe6188b27210d16e15f898d134549"));
        CHECK(streq(jps(c1, "/tree_sha"), "26e5f52ba0fe961d51a760ae5893ee0540ea0453"));
        CHECK(streq(jps(c1, "/author/email"), "1+alice@users.noreply.github.com"));
        CHECK(streq(jps(c1, "/author/date"), "2026-05-28T20:26:40Z"));
        CHECK(streq(jps(c1, "/login"), "alice") && json_array_size(jp(c1, "/parents")) == 0);
        /* the snapshot is a copy, its paths in order */
        CHECK(jp(c1, "/tree") != tree && json_equal(jp(c1, "/tree"), tree));
        const char *first = NULL;
        json_t *x;
        json_object_foreach (jp(c1, "/tree"), first, x)
                break;
        CHECK(streq_ptr(first, "README.md"));

        json_t *c2 =
                gh_commit_add(w, repo, jps(c1, "/sha"), NULL, NULL, "Second", "alice", 1780000060);
        CHECK(c2 && streq(jps(c2, "/sha"), "a9ec7c1b459f61bc41418226f9d58a8006893631"));
        CHECK(streq(jps(c2, "/parents/0"), jps(c1, "/sha")));
        /* author given (REST's author parameter), committer the viewer: still git's id */
        _cleanup_json_ json_t *bot = json_pack("{s:s, s:s, s:s}", "name", "Bot", "email",
                                               "bot@example.com", "date", "2026-01-02T03:04:05Z");
        json_t *c3 = gh_commit_add_as(w, repo, NULL, NULL, NULL, "By bot", "alice", bot, NULL,
                                      1780000000);
        CHECK(c3 && streq(jps(c3, "/sha"), "b1d67dd9f4b9f92809208968189ae4cc86a6048d"));
        CHECK(streq(jps(c3, "/author/date"), "2026-01-02T03:04:05Z") &&
              streq(jps(c3, "/committer/name"), "Alice"));
        twin_free(t);
}

static void test_path_and_branch_names(void)
{
        CHECK(gh_path_valid("README.md") && gh_path_valid("a/b/c.txt") &&
              gh_path_valid(".github/workflows/ci.yml"));
        CHECK(!gh_path_valid("") && !gh_path_valid("/abs") && !gh_path_valid("a//b") &&
              !gh_path_valid("a/") && !gh_path_valid("../x") && !gh_path_valid("a/./b") &&
              !gh_path_valid(".git/config") && !gh_path_valid(NULL));
        CHECK(gh_branch_name_valid("main") && gh_branch_name_valid("feature/login-fix") &&
              gh_branch_name_valid("v1.2"));
        CHECK(!gh_branch_name_valid("") && !gh_branch_name_valid("a..b") &&
              !gh_branch_name_valid("a b") && !gh_branch_name_valid("x.lock") &&
              !gh_branch_name_valid("-x") && !gh_branch_name_valid("a~1") &&
              !gh_branch_name_valid("a/") && !gh_branch_name_valid("@"));
}

static const char branch_seed[] =
        "{\"_meta\": {\"task\": \"t\"},"
        " \"users\": [{\"login\": \"alice\", \"type\": \"User\", \"name\": \"Alice\"}],"
        " \"repositories\": [{\"owner\": \"acme\", \"name\": \"web\", \"default_branch\": "
        "\"trunk\","
        "  \"files\": ["
        "   {\"path\": \"README.md\", \"content\": \"# web\\n\"},"
        "   {\"path\": \"src/app.js\", \"content\": \"v1\\n\", \"branch\": \"trunk\"},"
        "   {\"path\": \"src/app.js\", \"content\": \"v2\\n\", \"branch\": \"fix/ci\"},"
        "   {\"path\": \".github/ci.yml\", \"content\": \"on: push\\n\", \"branch\": \"fix/ci\"},"
        "   {\"path\": \"NOTES\", \"content\": \"n\", \"branch\": \"docs\"}],"
        "  \"branches\": [\"release\", {\"name\": \"trunk\", \"protected\": true},"
        "   {\"name\": \"hotfix\", \"from\": \"fix/ci\"}]}]}";

static void test_seed_branches(void)
{
        json_error_t e;
        _cleanup_json_ json_t *seed = json_loads(branch_seed, 0, &e);
        CHECK(seed);
        Twin *t = twin_test_from(&twin_kind_github, seed);
        json_t *repo = gh_repo_find(twin_world(t), "acme", "web");
        CHECK(repo && !jp(repo, "/files"));

        json_t *trunk = gh_branch_find(repo, "trunk"), *fix = gh_branch_find(repo, "fix/ci");
        CHECK(trunk && fix && gh_branch_find(repo, "docs") && gh_branch_find(repo, "release"));
        CHECK(json_is_true(jp(trunk, "/protected")) && json_is_false(jp(fix, "/protected")));
        CHECK(json_array_size(jp(repo, "/branches")) == 5);
        CHECK(streq(jps(repo, "/branches/0/name"), "trunk"));
        CHECK(json_array_size(jp(repo, "/commits")) == 3);

        /* the default tree: files without a branch or on the default branch */
        json_t *tt = gh_tree_at(repo, "trunk");
        CHECK(json_object_size(tt) == 2 && streq(jps(tt, "/README.md"), "# web\n"));
        CHECK(streq(json_string_value(json_object_get(tt, "src/app.js")), "v1\n"));
        /* fix/ci: the default tree overlaid, its parent the default head */
        json_t *ft = gh_tree_at(repo, "fix/ci");
        CHECK(json_object_size(ft) == 3 && streq(jps(ft, "/README.md"), "# web\n"));
        CHECK(streq(json_string_value(json_object_get(ft, "src/app.js")), "v2\n"));
        CHECK(streq(json_string_value(json_object_get(ft, ".github/ci.yml")), "on: push\n"));
        json_t *fc = gh_commit_find(repo, jps(fix, "/sha"));
        CHECK(fc && streq(jps(fc, "/parents/0"), jps(trunk, "/sha")));
        CHECK(streq(jps(fc, "/message"), "Update fix/ci") && streq(jps(fc, "/login"), "acme"));
        CHECK(json_object_size(gh_tree_at(repo, "docs")) == 3);
        /* branches[]: at the default head, or at `from` */
        CHECK(streq(jps(gh_branch_find(repo, "release"), "/sha"), jps(trunk, "/sha")));
        CHECK(streq(jps(gh_branch_find(repo, "hotfix"), "/sha"), jps(fix, "/sha")));

        /* every spelling of a ref */
        const char *head = jps(fix, "/sha");
        CHECK(gh_ref_sha(repo, "fix/ci") == head && gh_ref_sha(repo, "heads/fix/ci") == head);
        CHECK(gh_ref_sha(repo, "refs/heads/fix/ci") == head);
        char abbrev[8];
        snprintf(abbrev, sizeof(abbrev), "%.7s", head);
        CHECK(streq_ptr(gh_ref_sha(repo, abbrev), head) && streq_ptr(gh_ref_sha(repo, head), head));
        CHECK(!gh_ref_sha(repo, "nope") && !gh_ref_sha(repo, "") && !gh_ref_sha(repo, NULL));
        CHECK(!gh_ref_sha(repo, "heads/nope") && !gh_ref_sha(repo, "abc"));
        CHECK(!gh_commit_find(repo, "zzzzzzz") && !gh_tree_at(repo, "nope"));
        /* seeded blobs have git's ids */
        char hex[TWIN_SHA1_HEX];
        gh_blob_sha("# web\n", 6, hex);
        CHECK(strlen(hex) == 40);
        twin_free(t);

        /* the same seed gives the same shas */
        Twin *t2 = twin_test_from(&twin_kind_github, seed);
        Twin *t3 = twin_test_from(&twin_kind_github, seed);
        CHECK(json_equal(twin_world(t2), twin_world(t3)));
        twin_free(t2);
        twin_free(t3);
}

static void test_seed_default_repo(void)
{
        /* a repository seeded without files still has its default branch and a root commit */
        _cleanup_json_ json_t *seed =
                json_pack("{s:[{s:s, s:s}]}", "repositories", "owner", "o", "name", "empty");
        Twin *t = twin_test_from(&twin_kind_github, seed);
        json_t *repo = gh_repo_find(twin_world(t), "o", "empty");
        json_t *main_ = gh_branch_find(repo, "main");
        CHECK(main_ && json_array_size(jp(repo, "/commits")) == 1);
        CHECK(json_object_size(gh_tree_at(repo, "main")) == 0);
        CHECK(streq(jps(repo, "/commits/0/tree_sha"), "4b825dc642cb6eb9a060e54bf8d69288fbee4904"));
        twin_free(t);
}

static void seed_refused(const char *text, const char *want)
{
        json_error_t e;
        _cleanup_json_ json_t *seed = json_loads(text, 0, &e);
        char err[256] = "";
        Twin *t = NULL;
        CHECK(seed);
        CHECK(twin_new(&twin_kind_github, seed, &t, err, sizeof(err)) == -EINVAL && !t);
        if (!strstr(err, want)) {
                fprintf(stderr, "seed error \"%s\" lacks \"%s\"\n", err, want);
                CHECK(false);
        }
}

static void test_seed_errors(void)
{
        seed_refused(
                "{\"repositories\":[{\"owner\":\"o\",\"name\":\"r\",\"files\":[{\"path\":\"a\","
                "\"brnach\":\"x\"}]}]}",
                "repositories[0].files[0].brnach: unknown key (a file has path, content, branch)");
        seed_refused("{\"repositories\":[{\"owner\":\"o\",\"name\":\"r\",\"branches\":[{\"name\":"
                     "\"x\",\"sha\":\"y\"}]}]}",
                     "repositories[0].branches[0].sha: unknown key (a branch has name, protected, "
                     "from, protection)");
        seed_refused(
                "{\"repositories\":[{\"owner\":\"o\",\"name\":\"r\",\"releases\":[{\"tag_name\":"
                "\"v1\",\"assets\":[]}]}]}",
                "repositories[0].releases[0].assets: unknown key (a release has");
        seed_refused("{\"repositories\":[{\"owner\":\"o\",\"name\":\"r\",\"tags\":[{\"name\":"
                     "\"v1\",\"ref\":\"nope\"}]}]}",
                     "repositories[0].tags[0].ref: \"nope\" names no branch");
        seed_refused(
                "{\"repositories\":[{\"owner\":\"o\",\"name\":\"r\",\"releases\":[{\"tag_name\":"
                "\"v1\"},{\"tag_name\":\"v1\"}]}]}",
                "repositories[0].releases[1].tag_name: a release of v1 exists already");
        seed_refused("{\"repositories\":[{\"owner\":\"o\",\"name\":\"r\",\"files\":[{\"path\":\"../"
                     "x\"}]}]}",
                     "repositories[0].files[0].path: needs a relative path");
        seed_refused(
                "{\"repositories\":[{\"owner\":\"o\",\"name\":\"r\",\"files\":[{\"path\":\"a\","
                "\"branch\":\"a b\"}]}]}",
                "repositories[0].files[0].branch: must be a valid branch name");
        seed_refused(
                "{\"repositories\":[{\"owner\":\"o\",\"name\":\"r\",\"files\":[{\"path\":\"a\"},"
                "{\"path\":\"a/b\"}]}]}",
                "repositories[0].files[1].path: \"a/b\" is both a file and a directory");
        seed_refused(
                "{\"repositories\":[{\"owner\":\"o\",\"name\":\"r\",\"files\":[{\"path\":\"a\","
                "\"content\":1}]}]}",
                "repositories[0].files[0].content: must be a string");
        seed_refused("{\"repositories\":[{\"owner\":\"o\",\"name\":\"r\",\"branches\":[{\"name\":"
                     "\"x\",\"from\":\"nope\"}]}]}",
                     "repositories[0].branches[0].from: \"nope\" names no branch");
        seed_refused("{\"repositories\":[{\"owner\":\"o\",\"name\":\"r\",\"branches\":[3]}]}",
                     "repositories[0].branches[0]: must be a branch name");
        seed_refused(
                "{\"repositories\":[{\"owner\":\"o\",\"name\":\"r\",\"default_branch\":\"a..b\"}]}",
                "repositories[0].default_branch: must be a valid branch name");
}

/* A world where the viewer (alice) collaborates on acme/web; bob only reads. */
static const char flow_seed[] =
        "{\"users\": [{\"login\": \"alice\", \"name\": \"Alice\"}, {\"login\": \"bob\"},"
        "  {\"login\": \"acme\", \"type\": \"Organization\"}],"
        " \"repositories\": [{\"owner\": \"acme\", \"name\": \"web\", \"collaborators\": "
        "[\"alice\"],"
        "  \"files\": [{\"path\": \"a.txt\", \"content\": "
        "\"L1\\nL2\\nL3\\nL4\\nL5\\nL6\\nL7\\nL8\\nL9\\n"
        "L10\\nL11\\nL12\\nL13\\nL14\\nL15\\nL16\\nL17\\nL18\\nL19\\nL20\\n\"},"
        "   {\"path\": \"src/x.c\", \"content\": \"int x;\\n\", \"branch\": \"feature\"}],"
        "  \"tags\": [\"v0.9\", {\"name\": \"v1.0\", \"ref\": \"feature\", \"message\": \"One\"}],"
        "  \"releases\": [{\"tag_name\": \"v1.0\", \"name\": \"1.0\", \"created_at\": "
        "\"2026-02-01T00:00:00Z\"},"
        "   {\"tag_name\": \"v2.0-rc\", \"prerelease\": true, \"created_at\": "
        "\"2026-03-01T00:00:00Z\"}]},"
        "  {\"owner\": \"bob\", \"name\": \"notes\", \"files\": [{\"path\": \"n.md\", \"content\": "
        "\"n\"}]}]}";

static Twin *flow_twin(void)
{
        json_error_t e;
        _cleanup_json_ json_t *seed = json_loads(flow_seed, 0, &e);
        CHECK(seed);
        return twin_test_from(&twin_kind_github, seed);
}

static void req(Twin *t, TwinReply *rp, const char *method, const char *path, const char *query,
                const char *body)
{
        twin_test_req(t, rp, method, path, query, "application/json", body);
}

/* The text of an MCP tools/call reply, parsed (new reference). */
static json_t *mcp_result(TwinReply *rp, bool *is_error)
{
        json_error_t e;
        *is_error = json_is_true(jp(rp->body, "/result/isError"));
        return json_loads(strempty(jps(rp->body, "/result/content/0/text")), JSON_DECODE_ANY, &e);
}

static void test_contents_rest(void)
{
        Twin *t = flow_twin();
        TwinReply rp = {};
        json_t *repo = gh_repo_find(twin_world(t), "acme", "web");
        char old_head[TWIN_SHA1_HEX];
        snprintf(old_head, sizeof(old_head), "%s", gh_ref_sha(repo, "feature"));

        /* a new file: 201, one commit on the branch, the branch row as the tape delta */
        req(t, &rp, "PUT", "/repos/acme/web/contents/docs/hi.md", NULL,
            "{\"message\":\"Add hi\",\"content\":\"aGkK\",\"branch\":\"feature\"}");
        CHECK(rp.status == 201 && streq(rp.tool, "create_or_update_file") && rp.state_mutation);
        CHECK(streq(jps(rp.body, "/content/path"), "docs/hi.md"));
        CHECK(streq(jps(rp.body, "/content/sha"), "45b983be36b73c0788dc9cbcb76cbb80fc7bb057"));
        CHECK(streq(jps(rp.body, "/commit/parents/0/sha"), old_head));
        CHECK(streq(jps(rp.state_delta, "/before/sha"), old_head));
        CHECK(streq(jps(rp.state_delta, "/after/sha"), jps(rp.body, "/commit/sha")));
        CHECK(streq(jps(rp.state_delta, "/after/name"), "feature"));
        CHECK(streq(gh_ref_sha(repo, "feature"), jps(rp.body, "/commit/sha")));

        /* updating needs the blob sha: missing 422, stale 409, and the world stays */
        _cleanup_json_ json_t *before = json_deep_copy(twin_world(t));
        req(t, &rp, "PUT", "/repos/acme/web/contents/docs/hi.md", NULL,
            "{\"message\":\"m\",\"content\":\"aG8K\",\"branch\":\"feature\"}");
        CHECK(rp.status == 422 && !rp.state_mutation && !rp.state_delta);
        req(t, &rp, "PUT", "/repos/acme/web/contents/docs/hi.md", NULL,
            "{\"message\":\"m\",\"content\":\"aG8K\",\"branch\":\"feature\",\"sha\":\"abc\"}");
        CHECK(rp.status == 409 && streq(jps(rp.body, "/message"), "docs/hi.md does not match abc"));
        req(t, &rp, "PUT", "/repos/acme/web/contents/docs/hi.md", NULL,
            "{\"message\":\"m\",\"content\":\"not base64!\",\"branch\":\"feature\"}");
        CHECK(rp.status == 422);
        req(t, &rp, "PUT", "/repos/acme/web/contents/bin", NULL,
            "{\"message\":\"m\",\"content\":\"AAE=\"}"); /* NUL byte: no binary files */
        CHECK(rp.status == 422);
        req(t, &rp, "PUT", "/repos/acme/web/contents/a.txt/under", NULL,
            "{\"message\":\"m\",\"content\":\"eA==\"}"); /* below a file */
        CHECK(rp.status == 422);
        req(t, &rp, "PUT", "/repos/acme/web/contents/x", NULL,
            "{\"message\":\"m\",\"content\":\"eA==\",\"committer\":{\"name\":\"x\"}}");
        CHECK(rp.status == 422 && streq(jps(rp.body, "/errors/0/field"), "committer"));
        req(t, &rp, "PUT", "/repos/acme/web/contents/x", NULL, "{\"content\":\"eA==\"}");
        CHECK(rp.status == 422 && streq(jps(rp.body, "/errors/0/field"), "message"));
        CHECK(json_equal(before, twin_world(t)));

        /* the right sha updates: 200 */
        req(t, &rp, "PUT", "/repos/acme/web/contents/docs/hi.md", NULL,
            "{\"message\":\"m\",\"content\":\"aG8K\",\"branch\":\"feature\","
            "\"sha\":\"45b983be36b73c0788dc9cbcb76cbb80fc7bb057\"}");
        CHECK(rp.status == 200 && rp.state_mutation);

        /* contents by ref: base64 with GitHub's line breaks; directories list entries */
        req(t, &rp, "GET", "/repos/acme/web/contents/docs/hi.md", "ref=feature", NULL);
        CHECK(rp.status == 200 && streq(jps(rp.body, "/content"), "aG8K\n"));
        CHECK(streq(jps(rp.body, "/encoding"), "base64") && jpi(rp.body, "/size") == 3);
        CHECK(streq(jps(rp.body, "/html_url"),
                    "https://github.com/acme/web/blob/feature/docs/hi.md"));
        req(t, &rp, "GET", "/repos/acme/web/contents/docs/hi.md", NULL, NULL);
        CHECK(rp.status == 404); /* not on the default branch */
        req(t, &rp, "GET", "/repos/acme/web/contents", "ref=feature", NULL);
        CHECK(rp.status == 200 && json_array_size(rp.body) == 3);
        CHECK(streq(jps(rp.body, "/0/name"), "a.txt") && streq(jps(rp.body, "/1/type"), "dir"));
        CHECK(streq(jps(rp.body, "/2/name"), "src") &&
              json_is_null(jp(rp.body, "/2/download_url")));

        /* a read-only viewer cannot write */
        req(t, &rp, "PUT", "/repos/bob/notes/contents/x", NULL,
            "{\"message\":\"m\",\"content\":\"eA==\"}");
        CHECK(rp.status == 403 && !rp.state_mutation);

        /* delete needs the sha over REST */
        req(t, &rp, "DELETE", "/repos/acme/web/contents/docs/hi.md", NULL,
            "{\"message\":\"rm\",\"branch\":\"feature\"}");
        CHECK(rp.status == 422);
        req(t, &rp, "DELETE", "/repos/acme/web/contents/docs/hi.md", NULL,
            "{\"message\":\"rm\",\"branch\":\"feature\",\"sha\":"
            "\"9ab75d1e0f8e5a7f5d5a4fc5c1b1e0bf5fc5c5c5\"}");
        CHECK(rp.status == 409);
        req(t, &rp, "DELETE", "/repos/acme/web/contents/nope", NULL,
            "{\"message\":\"rm\",\"sha\":\"x\"}");
        CHECK(rp.status == 404);
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_commits_and_compare(void)
{
        Twin *t = flow_twin();
        TwinReply rp = {};
        /* change lines 2 and 18 of a.txt: two hunks, as git diff cuts them */
        bool err;
        twin_test_call(
                t, &rp, "create_or_update_file",
                "{\"owner\":\"acme\",\"repo\":\"web\",\"path\":\"a.txt\",\"branch\":\"main\","
                "\"message\":\"Edit\",\"sha\":\"2ee33bb91b43c0800e052cea22af3b4f2ad0bb07\","
                "\"content\":\"L1\\nX2\\nL3\\nL4\\nL5\\nL6\\nL7\\nL8\\nL9\\nL10\\nL11\\nL12\\n"
                "L13\\nL14\\nL15\\nL16\\nL17\\nX18\\nL19\\nL20\\n\"}");
        _cleanup_json_ json_t *put = mcp_result(&rp, &err);
        CHECK(!err && rp.state_mutation && streq(rp.tool, "create_or_update_file"));
        if (err)
                fprintf(stderr, "%s\n", jps(rp.body, "/result/content/0/text"));
        const char *sha = jps(put, "/commit/sha");

        char path[128];
        snprintf(path, sizeof(path), "/repos/acme/web/commits/%.10s", strempty(sha));
        req(t, &rp, "GET", path, NULL, NULL);
        CHECK(rp.status == 200 && streq(rp.tool, "get_commit") && streq(jps(rp.body, "/sha"), sha));
        CHECK(streq(jps(rp.body, "/files/0/patch"),
                    "@@ -1,5 +1,5 @@\n L1\n-L2\n+X2\n L3\n L4\n L5\n"
                    "@@ -15,6 +15,6 @@\n L15\n L16\n L17\n-L18\n+X18\n L19\n L20\n"));
        CHECK(jpi(rp.body, "/stats/additions") == 2 && jpi(rp.body, "/stats/deletions") == 2);
        CHECK(streq(jps(rp.body, "/commit/author/name"), "Alice"));
        CHECK(streq(jps(rp.body, "/author/login"), "alice"));

        req(t, &rp, "GET", "/repos/acme/web/commits/ffffffff", NULL, NULL);
        CHECK(rp.status == 422 &&
              streq(jps(rp.body, "/message"), "No commit found for SHA: ffffffff"));

        /* feature forked before the edit: diverged, one commit each way */
        req(t, &rp, "GET", "/repos/acme/web/compare/main...feature", NULL, NULL);
        CHECK(rp.status == 200 && streq(jps(rp.body, "/status"), "diverged"));
        CHECK(jpi(rp.body, "/ahead_by") == 1 && jpi(rp.body, "/behind_by") == 1);
        CHECK(streq(jps(rp.body, "/files/0/filename"), "src/x.c") &&
              streq(jps(rp.body, "/files/0/status"), "added"));
        CHECK(streq(jps(rp.body, "/files/0/patch"), "@@ -0,0 +1 @@\n+int x;\n"));
        req(t, &rp, "GET", "/repos/acme/web/compare/main..main", NULL, NULL);
        CHECK(streq(jps(rp.body, "/status"), "identical") &&
              json_array_size(jp(rp.body, "/files")) == 0);
        req(t, &rp, "GET", "/repos/acme/web/compare/main...nope", NULL, NULL);
        CHECK(rp.status == 404);

        /* history with pages: newest first, Link to the next page */
        req(t, &rp, "GET", "/repos/acme/web/commits", "per_page=1", NULL);
        CHECK(rp.status == 200 && json_array_size(rp.body) == 1 &&
              streq(jps(rp.body, "/0/sha"), sha));
        CHECK(rp.headers && strstr(jps(rp.headers, "/Link"), "rel=\"next\""));
        req(t, &rp, "GET", "/repos/acme/web/commits", "path=src", NULL);
        CHECK(json_array_size(rp.body) == 0);
        req(t, &rp, "GET", "/repos/acme/web/commits", "sha=feature&path=src", NULL);
        CHECK(json_array_size(rp.body) == 1);
        req(t, &rp, "GET", "/repos/acme/web/commits", "since=2026-05-01", NULL);
        CHECK(json_array_size(rp.body) == 1);
        req(t, &rp, "GET", "/repos/acme/web/commits", "author=alice", NULL);
        CHECK(json_array_size(rp.body) == 1);
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_refs_tags_releases(void)
{
        Twin *t = flow_twin();
        TwinReply rp = {};
        json_t *repo = gh_repo_find(twin_world(t), "acme", "web");
        /* seeded tags and releases */
        CHECK(streq_ptr(gh_ref_sha(repo, "tags/v1.0"), gh_ref_sha(repo, "feature")));
        CHECK(streq_ptr(gh_ref_sha(repo, "v0.9"), gh_ref_sha(repo, "main")));
        req(t, &rp, "GET", "/repos/acme/web/releases/latest", NULL, NULL);
        CHECK(rp.status == 200 && streq(jps(rp.body, "/tag_name"), "v1.0"));
        req(t, &rp, "GET", "/repos/acme/web/releases", NULL, NULL);
        CHECK(json_array_size(rp.body) == 2 && streq(jps(rp.body, "/0/tag_name"), "v2.0-rc"));
        req(t, &rp, "GET", "/repos/acme/web/tags", NULL, NULL);
        CHECK(json_array_size(rp.body) == 3 && streq(jps(rp.body, "/0/name"), "v2.0-rc"));
        twin_test_call(t, &rp, "get_tag", "{\"owner\":\"acme\",\"repo\":\"web\",\"tag\":\"v1.0\"}");
        bool err;
        _cleanup_json_ json_t *tag = mcp_result(&rp, &err);
        CHECK(!err && streq(jps(tag, "/message"), "One") &&
              strlen(strempty(jps(tag, "/sha"))) == 40);
        char path[128];
        snprintf(path, sizeof(path), "/repos/acme/web/git/tags/%s", strempty(jps(tag, "/sha")));
        req(t, &rp, "GET", path, NULL, NULL);
        CHECK(rp.status == 200 && streq(jps(rp.body, "/tag"), "v1.0"));

        /* refs: create, read, refuse twice, delete; the default branch stays */
        char body[256];
        snprintf(body, sizeof(body), "{\"ref\":\"refs/heads/topic\",\"sha\":\"%s\"}",
                 gh_ref_sha(repo, "main"));
        req(t, &rp, "POST", "/repos/acme/web/git/refs", NULL, body);
        CHECK(rp.status == 201 && streq(rp.tool, "create_branch") && rp.state_mutation);
        CHECK(json_is_null(jp(rp.state_delta, "/before")) &&
              streq(jps(rp.state_delta, "/after/name"), "topic"));
        req(t, &rp, "POST", "/repos/acme/web/git/refs", NULL, body);
        CHECK(rp.status == 422 && streq(jps(rp.body, "/message"), "Reference already exists"));
        req(t, &rp, "POST", "/repos/acme/web/git/refs", NULL, "{\"ref\":\"topic2\",\"sha\":\"x\"}");
        CHECK(rp.status == 422);
        req(t, &rp, "GET", "/repos/acme/web/git/ref/heads/topic", NULL, NULL);
        CHECK(rp.status == 200 && streq(jps(rp.body, "/ref"), "refs/heads/topic"));
        /* the legacy /git/refs reads PyGithub 1.55 and octokit.rb 4.20 make: an exact ref is
         * the object, a prefix the list under it, every ref without one; matching-refs a list */
        req(t, &rp, "GET", "/repos/acme/web/git/refs/heads/topic", NULL, NULL);
        CHECK(rp.status == 200 && streq(rp.tool, "list_git_refs") &&
              streq(jps(rp.body, "/ref"), "refs/heads/topic") &&
              streq(jps(rp.body, "/object/sha"), gh_ref_sha(repo, "main")));
        req(t, &rp, "GET", "/repos/acme/web/git/refs/heads", NULL, NULL);
        CHECK(rp.status == 200 && json_is_array(rp.body) &&
              json_array_size(rp.body) == json_array_size(jp(repo, "/branches")));
        for (size_t i = 1; i < json_array_size(rp.body); i++)
                CHECK(strcmp(jps(json_array_get(rp.body, i - 1), "/ref"),
                             jps(json_array_get(rp.body, i), "/ref")) < 0);
        req(t, &rp, "GET", "/repos/acme/web/git/refs", NULL, NULL);
        CHECK(rp.status == 200 &&
              json_array_size(rp.body) ==
                      json_array_size(jp(repo, "/branches")) + json_array_size(jp(repo, "/tags")));
        req(t, &rp, "GET", "/repos/acme/web/git/refs/heads/top", NULL, NULL);
        CHECK(rp.status == 404); /* not a ref, and no ref below refs/heads/top/ */
        req(t, &rp, "GET", "/repos/acme/web/git/matching-refs/heads/top", NULL, NULL);
        CHECK(rp.status == 200 && json_array_size(rp.body) == 1 &&
              streq(jps(rp.body, "/0/ref"), "refs/heads/topic"));
        req(t, &rp, "GET", "/repos/acme/web/git/matching-refs/heads/nope", NULL, NULL);
        CHECK(rp.status == 200 && json_array_size(rp.body) == 0);
        req(t, &rp, "DELETE", "/repos/acme/web/git/refs/heads/topic", NULL, NULL);
        CHECK(rp.status == 204 && streq(rp.tool, "delete_branch") && rp.state_mutation);
        CHECK(streq(jps(rp.state_delta, "/before/name"), "topic") &&
              json_is_null(jp(rp.state_delta, "/after")));
        req(t, &rp, "GET", "/repos/acme/web/git/ref/heads/topic", NULL, NULL);
        CHECK(rp.status == 404);
        req(t, &rp, "DELETE", "/repos/acme/web/git/refs/heads/main", NULL, NULL);
        CHECK(rp.status == 422 && gh_branch_find(repo, "main"));

        /* a release of a new tag tags the target */
        req(t, &rp, "POST", "/repos/acme/web/releases", NULL,
            "{\"tag_name\":\"v3\",\"target_commitish\":\"feature\"}");
        CHECK(rp.status == 201 && streq_ptr(gh_ref_sha(repo, "v3"), gh_ref_sha(repo, "feature")));
        req(t, &rp, "POST", "/repos/acme/web/releases", NULL, "{\"tag_name\":\"v3\"}");
        CHECK(rp.status == 422 && streq(jps(rp.body, "/errors/0/code"), "already_exists"));
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_repos_collaborators_search(void)
{
        Twin *t = flow_twin();
        TwinReply rp = {};
        req(t, &rp, "POST", "/user/repos", NULL, "{\"name\":\"tool\",\"auto_init\":true}");
        CHECK(rp.status == 201 && streq(jps(rp.body, "/full_name"), "alice/tool"));
        CHECK(json_is_false(jp(rp.body, "/private")) && rp.state_mutation);
        req(t, &rp, "POST", "/user/repos", NULL, "{\"name\":\"tool\"}");
        CHECK(rp.status == 422);
        req(t, &rp, "POST", "/orgs/nope/repos", NULL, "{\"name\":\"x\"}");
        CHECK(rp.status == 404);
        req(t, &rp, "POST", "/orgs/acme/repos", NULL, "{\"name\":\"bad name\"}");
        CHECK(rp.status == 422);
        req(t, &rp, "POST", "/repos/bob/notes/forks", NULL, "{}");
        CHECK(rp.status == 202 && streq(jps(rp.body, "/full_name"), "alice/notes"));
        CHECK(json_is_true(jp(rp.body, "/fork")) &&
              streq(jps(rp.body, "/parent/full_name"), "bob/notes"));
        req(t, &rp, "POST", "/repos/bob/notes/forks", NULL, "{}");
        CHECK(rp.status == 202 && !rp.state_mutation); /* the existing fork */

        req(t, &rp, "GET", "/repos/acme/web/collaborators/alice", NULL, NULL);
        CHECK(rp.status == 204 && !rp.body);
        req(t, &rp, "GET", "/repos/acme/web/collaborators/bob", NULL, NULL);
        CHECK(rp.status == 404);
        req(t, &rp, "PUT", "/repos/acme/web/collaborators/bob", NULL, "{\"permission\":\"push\"}");
        CHECK(rp.status == 201 && streq(jps(rp.body, "/invitee/login"), "bob"));
        req(t, &rp, "PUT", "/repos/acme/web/collaborators/bob", NULL, "{}");
        CHECK(rp.status == 204);
        req(t, &rp, "PUT", "/repos/acme/web/collaborators/acme", NULL, "{}");
        CHECK(rp.status == 422);
        req(t, &rp, "GET", "/repos/acme/web/collaborators", NULL, NULL);
        CHECK(json_array_size(rp.body) == 1 && streq(jps(rp.body, "/0/login"), "alice"));
        CHECK(json_is_true(jp(rp.body, "/0/permissions/push")));

        req(t, &rp, "GET", "/search/code", "q=L18+repo:acme/web", NULL);
        CHECK(rp.status == 200 && jpi(rp.body, "/total_count") == 1);
        CHECK(streq(jps(rp.body, "/items/0/path"), "a.txt"));
        req(t, &rp, "GET", "/search/code", "q=%22int+x%22", NULL); /* only on a branch */
        CHECK(jpi(rp.body, "/total_count") == 0);
        req(t, &rp, "GET", "/search/code", "q=x+path:src", NULL);
        CHECK(jpi(rp.body, "/total_count") == 0);
        req(t, &rp, "GET", "/search/code", "q=L1+NOT+L20", NULL);
        CHECK(jpi(rp.body, "/total_count") == 0);
        req(t, &rp, "GET", "/search/commits", "q=update+feature", NULL);
        CHECK(jpi(rp.body, "/total_count") == 0); /* the default branch only */
        req(t, &rp, "GET", "/search/commits", "q=initial", NULL);
        CHECK(jpi(rp.body, "/total_count") == 4); /* acme/web, bob/notes, alice/tool, the fork */
        req(t, &rp, "GET", "/search/commits", "q=initial+user:bob", NULL);
        CHECK(jpi(rp.body, "/total_count") == 1);
        req(t, &rp, "GET", "/search/commits", "q=initial+repo:acme/web", NULL);
        CHECK(jpi(rp.body, "/total_count") == 1);
        req(t, &rp, "GET", "/search/repositories", "q=notes+fork:true", NULL);
        CHECK(jpi(rp.body, "/total_count") == 2);
        req(t, &rp, "GET", "/search/repositories", "q=notes", NULL);
        CHECK(jpi(rp.body, "/total_count") == 1 && jp(rp.body, "/items/0/owner"));
        req(t, &rp, "GET", "/search/users", "q=ali", NULL);
        CHECK(jpi(rp.body, "/total_count") == 1 && streq(jps(rp.body, "/items/0/login"), "alice"));
        req(t, &rp, "GET", "/search/users", NULL, NULL);
        CHECK(rp.status == 422 && streq(jps(rp.body, "/errors/0/field"), "q"));
        twin_reply_done(&rp);
        twin_free(t);
}

static void test_git_database(void)
{
        Twin *t = flow_twin();
        TwinReply rp = {};
        json_t *repo = gh_repo_find(twin_world(t), "acme", "web");
        char head[TWIN_SHA1_HEX], body[512];
        snprintf(head, sizeof(head), "%s", gh_ref_sha(repo, "feature"));

        /* a tree on feature's tree without src/ (a directory removed by sha null) */
        snprintf(body, sizeof(body),
                 "{\"base_tree\":\"%s\",\"tree\":[{\"path\":\"src\",\"mode\":\"040000\","
                 "\"type\":\"tree\",\"sha\":null},{\"path\":\"b.txt\",\"mode\":\"100644\","
                 "\"type\":\"blob\",\"content\":\"b\\n\"}]}",
                 jps(gh_commit_find(repo, head), "/tree_sha"));
        req(t, &rp, "POST", "/repos/acme/web/git/trees", NULL, body);
        CHECK(rp.status == 201 && streq(rp.tool, "create_git_tree") && rp.state_mutation);
        CHECK(json_array_size(jp(rp.body, "/tree")) == 2);
        CHECK(streq(jps(rp.body, "/tree/0/path"), "a.txt") &&
              streq(jps(rp.body, "/tree/1/path"), "b.txt"));
        char tree[TWIN_SHA1_HEX];
        snprintf(tree, sizeof(tree), "%s", strempty(jps(rp.body, "/sha")));
        req(t, &rp, "POST", "/repos/acme/web/git/trees", NULL,
            "{\"tree\":[{\"path\":\"m\",\"mode\":\"160000\",\"type\":\"commit\",\"sha\":\"x\"}]}");
        CHECK(rp.status == 422 && !rp.state_mutation);
        req(t, &rp, "POST", "/repos/acme/web/git/trees", NULL,
            "{\"tree\":[{\"path\":\"a\",\"content\":\"1\"},{\"path\":\"a/b\",\"content\":\"2\"}]}");
        CHECK(rp.status == 422);

        snprintf(body, sizeof(body),
                 "{\"message\":\"Drop src\",\"tree\":\"%s\",\"parents\":[\"%s\"]}", tree, head);
        req(t, &rp, "POST", "/repos/acme/web/git/commits", NULL, body);
        CHECK(rp.status == 201 && streq(jps(rp.body, "/tree/sha"), tree));
        char made[TWIN_SHA1_HEX];
        snprintf(made, sizeof(made), "%s", strempty(jps(rp.body, "/sha")));
        CHECK(streq_ptr(gh_ref_sha(repo, "feature"), head)); /* no ref moved */

        /* fast-forward only, unless forced */
        char main_sha[TWIN_SHA1_HEX];
        snprintf(main_sha, sizeof(main_sha), "%s", gh_ref_sha(repo, "main"));
        snprintf(body, sizeof(body), "{\"sha\":\"%s\"}", made);
        req(t, &rp, "PATCH", "/repos/acme/web/git/refs/heads/feature", NULL, body);
        CHECK(rp.status == 200 && streq(rp.tool, "update_git_ref") && rp.state_mutation);
        CHECK(streq(jps(rp.state_delta, "/before/sha"), head) &&
              streq(jps(rp.state_delta, "/after/sha"), made));
        CHECK(json_object_size(gh_tree_at(repo, "feature")) == 2);
        snprintf(body, sizeof(body), "{\"sha\":\"%s\"}", main_sha);
        req(t, &rp, "PATCH", "/repos/acme/web/git/refs/heads/feature", NULL, body);
        CHECK(rp.status == 422 && streq(jps(rp.body, "/message"), "Update is not a fast forward"));
        CHECK(streq_ptr(gh_ref_sha(repo, "feature"), made));
        snprintf(body, sizeof(body), "{\"sha\":\"%s\",\"force\":true}", main_sha);
        req(t, &rp, "PATCH", "/repos/acme/web/git/refs/heads/feature", NULL, body);
        CHECK(rp.status == 200 && streq_ptr(gh_ref_sha(repo, "feature"), main_sha));
        req(t, &rp, "PATCH", "/repos/acme/web/git/refs/heads/nope", NULL, body);
        CHECK(rp.status == 422 && streq(jps(rp.body, "/message"), "Reference does not exist"));

        snprintf(body, sizeof(body), "/repos/acme/web/git/trees/%s", made);
        req(t, &rp, "GET", body, NULL, NULL);
        CHECK(rp.status == 200 && streq(jps(rp.body, "/sha"), tree));
        req(t, &rp, "GET", "/repos/acme/web/git/blobs/45b983be36b73c0788dc9cbcb76cbb80fc7bb057",
            NULL, NULL);
        CHECK(rp.status == 404);
        twin_reply_done(&rp);
        twin_free(t);
}

int main(void)
{
        test_sha1_vectors();
        test_git_objects();
        test_path_and_branch_names();
        test_seed_branches();
        test_seed_default_repo();
        test_seed_errors();
        test_contents_rest();
        test_commits_and_compare();
        test_refs_tags_releases();
        test_repos_collaborators_search();
        test_git_database();
        return check_finish();
}
