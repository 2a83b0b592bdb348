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

int main(void)
{
        test_sha1_vectors();
        test_git_objects();
        test_path_and_branch_names();
        test_seed_branches();
        test_seed_default_repo();
        test_seed_errors();
        return check_finish();
}
