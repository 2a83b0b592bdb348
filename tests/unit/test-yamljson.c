/* SPDX-License-Identifier: MIT */
/* YAML as JSON: scalars, the line map callers name refusals by, errors by line. */
#include <string.h>

#include "common/json-util.h"
#include "common/yamljson.h"
#include "tests/unit/check.h"

static void test_lines(void)
{
        const char *y = "# a comment\n"
                        "twins:\n"
                        "  - github\n"
                        "  - slack\n"
                        "timeout: 90\n"
                        "\"a/b~c\": x\n";
        _cleanup_json_ json_t *j = NULL, *lines = NULL;
        char err[128];
        CHECK_OK(yamljson_parse(y, strlen(y), &j, &lines, err, sizeof(err)));
        CHECK(json_integer_value(json_object_get(j, "timeout")) == 90);
        CHECK(streq_ptr(json_string_value(json_array_get(json_object_get(j, "twins"), 1)),
                        "slack"));
        CHECK(json_integer_value(json_object_get(lines, "/twins")) == 2);
        CHECK(json_integer_value(json_object_get(lines, "/twins/0")) == 3);
        CHECK(json_integer_value(json_object_get(lines, "/twins/1")) == 4);
        CHECK(json_integer_value(json_object_get(lines, "/timeout")) == 5);
        /* keys are escaped as RFC 6901 tokens */
        CHECK(json_integer_value(json_object_get(lines, "/a~1b~0c")) == 6);
        CHECK(json_object_get(lines, "") != NULL);
}

static void test_errors(void)
{
        json_t *j = NULL, *lines = NULL;
        char err[128] = "";
        const char *bad = "twins: [github\ntimeout: 3\n";
        CHECK(yamljson_parse(bad, strlen(bad), &j, &lines, err, sizeof(err)) == -EINVAL);
        CHECK(startswith(err, "line ") != NULL);
        CHECK(j == NULL && lines == NULL);
        const char *dup = "a: 1\nb: 2\na: 3\n";
        CHECK(yamljson_parse(dup, strlen(dup), &j, NULL, err, sizeof(err)) == -EINVAL);
        CHECK(strstr(err, "line 3: duplicate key 'a'") != NULL);
        const char *empty = "";
        CHECK_OK(yamljson_parse(empty, 0, &j, &lines, err, sizeof(err)));
        CHECK(json_is_object(j) && json_object_size(j) == 0);
        json_decref(j);
        json_decref(lines);
}

int main(void)
{
        test_lines();
        test_errors();
        return check_finish();
}
