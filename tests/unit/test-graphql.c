/* SPDX-License-Identifier: MIT */
/*
 * GraphQL (pods/twin/graphql.c): the lexer and parser on the spec's corners (block strings,
 * escapes, numbers, comments and commas, nesting), and the executor on a small schema of its
 * own: variables and their defaults, aliases and merged fields, fragments on interfaces and
 * unions, @skip/@include, non-null propagation, connections and cursors, introspection, and
 * each validation error in the shape GitHub answers.
 */
#include "common/json-util.h"
#include "pods/twin/graphql.h"
#include "tests/unit/check.h"

/* ---- parser */

static json_t *parse_ok(const char *text)
{
        json_t *doc = NULL;
        char err[200];
        int line = 0, col = 0;
        int r = gql_parse(text, strlen(text), &doc, err, sizeof(err), &line, &col);
        if (r < 0)
                fprintf(stderr, "parse failed (%d): %s: %s\n", r, err, text);
        CHECK(r == 0);
        return doc;
}

static void parse_fails(const char *text, const char *want, int want_line, int want_col)
{
        json_t *doc = NULL;
        char err[200] = "";
        int line = 0, col = 0;
        int r = gql_parse(text, strlen(text), &doc, err, sizeof(err), &line, &col);
        CHECK(r == -EINVAL);
        if (want && !strstr(err, want))
                fprintf(stderr, "error '%s' lacks '%s' (%s)\n", err, want, text);
        CHECK(!want || strstr(err, want));
        if (want_line && (line != want_line || col != want_col))
                fprintf(stderr, "at [%d, %d], not [%d, %d]: %s\n", line, col, want_line, want_col,
                        text);
        CHECK(!want_line || (line == want_line && col == want_col));
        json_decref(doc);
}

static const char *first_string_arg(json_t *doc)
{
        json_t *sel = json_array_get(
                json_object_get(json_array_get(json_object_get(doc, "operations"), 0),
                                "selections"),
                0);
        return json_get_str(json_object_get(sel, "arguments"), "s");
}

static void test_parse(void)
{
        json_t *doc =
                parse_ok("\xEF\xBB\xBF # a comment\n,,query Q($a: [Int!]! = [1, 2], $b: String)"
                         " @dir { x: f(a: $a, b: {c: [true, null, ENUM, -1.5e3]}) "
                         "@include(if: true) { ...F ... on T { g } ... @skip(if: false) "
                         "{ h } } } fragment F on T { i }");
        json_t *op = json_array_get(json_object_get(doc, "operations"), 0);
        CHECK(streq_ptr(json_get_str(op, "operation"), "query"));
        CHECK(streq_ptr(json_get_str(op, "name"), "Q"));
        json_t *v0 = json_array_get(json_object_get(op, "variables"), 0);
        CHECK(streq_ptr(json_get_str(v0, "type"), "[Int!]!"));
        CHECK(json_array_size(json_object_get(v0, "default")) == 2);
        json_t *f = json_array_get(json_object_get(op, "selections"), 0);
        CHECK(streq_ptr(json_get_str(f, "alias"), "x") && streq_ptr(json_get_str(f, "field"), "f"));
        CHECK(streq_ptr(
                json_get_str(json_object_get(json_object_get(f, "arguments"), "a"), "$variable"),
                "a"));
        json_t *c = json_object_get(json_object_get(json_object_get(f, "arguments"), "b"), "c");
        CHECK(json_is_true(json_array_get(c, 0)) && json_is_null(json_array_get(c, 1)));
        CHECK(streq_ptr(json_string_value(json_array_get(c, 2)), "ENUM"));
        CHECK(json_real_value(json_array_get(c, 3)) == -1500.0);
        json_t *sels = json_object_get(f, "selections");
        CHECK(json_array_size(sels) == 3);
        CHECK(streq_ptr(json_get_str(json_array_get(sels, 0), "spread"), "F"));
        CHECK(streq_ptr(json_get_str(json_array_get(sels, 1), "on"), "T"));
        CHECK(!json_object_get(json_array_get(sels, 2), "on"));
        CHECK(json_object_get(json_object_get(doc, "fragments"), "F"));
        json_decref(doc);

        /* shorthand query, positions */
        doc = parse_ok("{\n  a\n  b }");
        json_t *b = json_array_get(
                json_object_get(json_array_get(json_object_get(doc, "operations"), 0),
                                "selections"),
                1);
        CHECK(json_integer_value(json_object_get(b, "line")) == 3);
        CHECK(json_integer_value(json_object_get(b, "column")) == 3);
        json_decref(doc);

        /* strings: escapes, surrogate pairs, \u{...} */
        doc = parse_ok("{ f(s: \"a\\\"b\\\\c\\/\\n\\u00e9\\ud83d\\ude00\\u{1F600}\") }");
        CHECK(streq_ptr(first_string_arg(doc),
                        "a\"b\\c/\n\xc3\xa9\xf0\x9f\x98\x80\xf0\x9f\x98\x80"));
        json_decref(doc);
        /* block strings: common indentation and blank edge lines go, trailing spaces of a line
         * stay (§2.9.4) */
        doc = parse_ok("{ f(s: \"\"\"\n    Hello,\n      World!\n\n    Yours,\n    \\\"\"\" \n  "
                       "\"\"\") }");
        CHECK(streq_ptr(first_string_arg(doc), "Hello,\n  World!\n\nYours,\n\"\"\" "));
        json_decref(doc);
        doc = parse_ok("{ f(s: \"\"\"  first line keeps its indent\n  x\"\"\") }");
        CHECK(streq_ptr(first_string_arg(doc), "  first line keeps its indent\nx"));
        json_decref(doc);

        parse_fails("{ a", "end of input", 0, 0);
        parse_fails("query { repository(owner: \"acme\" name: \"api\" { id } }",
                    "Parse error on \"{\" (LCURLY) at [1, 46]", 1, 46);
        parse_fails("", "Unexpected end of document", 0, 0);
        parse_fails("{ f(s: \"unterminated) }", "unterminated string", 0, 0);
        parse_fails("{ f(s: \"line\nbreak\") }", "unterminated string", 0, 0);
        parse_fails("{ f(s: \"ctl\x01\") }", "control character", 0, 0);
        parse_fails("{ f(s: \"\\q\") }", "bad escape", 0, 0);
        parse_fails("{ f(s: \"\\ud800\") }", "invalid Unicode", 0, 0);
        parse_fails("{ f(n: 012) }", "invalid number", 0, 0);
        parse_fails("{ f(n: 1.) }", "invalid number", 0, 0);
        parse_fails("{ f(n: 1x) }", "invalid number", 0, 0);
        parse_fails("{ f(n: 99999999999999999999) }", "out of range", 0, 0);
        parse_fails("{ f(n: 4E+777777) }", "float out of range", 0, 0);
        parse_fails("{ f(a: 1, a: 2) }", "only one argument named \"a\"", 0, 0);
        parse_fails("query($a: Int, $a: Int) { f }", "only one variable", 0, 0);
        parse_fails("fragment F on T { a } fragment F on T { b } { f }", "must be unique", 0, 0);
        parse_fails("fragment on on T { a }", "Parse error", 0, 0);
        parse_fails("query($a: Int = $b) { f }", "VAR_SIGN", 0, 0);
        parse_fails("{ f } }", "RCURLY", 0, 0);
        parse_fails("{ f @ }", NULL, 0, 0);
        parse_fails("{ \xff }", "UNKNOWN_CHAR", 0, 0);

        /* nesting is bounded: selections, values and types */
        char deep[4096];
        size_t n = 0;
        for (int i = 0; i < 100; i++)
                n += (size_t)snprintf(deep + n, sizeof(deep) - n, "{ a ");
        for (int i = 0; i < 100; i++)
                deep[n++] = '}';
        deep[n] = 0;
        parse_fails(deep, "nests deeper", 0, 0);
        n = (size_t)snprintf(deep, sizeof(deep), "{ f(a: ");
        for (int i = 0; i < 100; i++)
                deep[n++] = '[';
        deep[n] = 0;
        parse_fails(deep, "nests deeper", 0, 0);
}

/* ---- executor, on a schema of its own */

static int r_things(GqlExec *x, json_t *s _unused_, json_t *args, json_t **ret)
{
        json_t *items =
                json_pack("[{s:s, s:i, s:s}, {s:s, s:i, s:s}, {s:s, s:i, s:s}]", "__typename",
                          "Box", "id", 1, "label", "one", "__typename", "Ball", "id", 2, "label",
                          "two", "__typename", "Box", "id", 3, "label", "three");
        int r = gql_connection(x, items, args, ret);
        json_decref(items);
        return r;
}

static int r_echo(GqlExec *x _unused_, json_t *s _unused_, json_t *args, json_t **ret)
{
        char *d = json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS);
        *ret = d ? json_string(d) : NULL;
        free(d);
        return *ret ? 0 : -ENOMEM;
}

static int r_null(GqlExec *x, json_t *s _unused_, json_t *args _unused_, json_t **ret)
{
        *ret = NULL;
        return gql_error(x, "NOT_FOUND", "nothing here");
}

static int r_mut(GqlExec *x, json_t *s _unused_, json_t *args, json_t **ret)
{
        static int counter;
        CHECK(streq(gql_operation(x), "mutation"));
        *ret = json_pack("{s:i, s:O}", "n", ++counter, "input", json_object_get(args, "input"));
        return *ret ? 0 : -ENOMEM;
}

static const GqlField query_fields[] = {
        {"things", "ThingConnection!", "first: Int, last: Int, after: String, before: String",
         r_things},
        {"echo", "String!", "n: Int, s: String, e: Color, l: [Int!], o: Filter", r_echo},
        {"missing", "Box", NULL, r_null},
        {"mustHave", "Box!", NULL, r_null},
};
static const GqlField thing_fields[] = {{"id", "Int!", NULL, NULL},
                                        {"label", "String", NULL, NULL}};
static const GqlField box_fields[] = {
        {"id", "Int!", NULL, NULL}, {"label", "String", NULL, NULL}, {"side", "Int", NULL, NULL}};
static const GqlField conn_fields[] = {{"nodes", "[Thing]", NULL, NULL},
                                       {"edges", "[ThingEdge]", NULL, NULL},
                                       {"totalCount", "Int!", NULL, NULL},
                                       {"pageInfo", "PageInfo!", NULL, NULL}};
static const GqlField edge_fields[] = {{"cursor", "String!", NULL, NULL},
                                       {"node", "Thing", NULL, NULL}};
static const GqlField page_fields[] = {{"hasNextPage", "Boolean!", NULL, NULL},
                                       {"hasPreviousPage", "Boolean!", NULL, NULL},
                                       {"startCursor", "String", NULL, NULL},
                                       {"endCursor", "String", NULL, NULL}};
static const GqlField filter_fields[] = {{"color", "Color!", NULL, NULL},
                                         {"max", "Int", NULL, NULL}};
static const GqlField mutation_fields[] = {{"make", "Made!", "input: Filter!", r_mut}};
static const GqlField made_fields[] = {{"n", "Int!", NULL, NULL}};

static const GqlType types[] = {
        {"Query", GQL_OBJECT, NULL, query_fields, ELEMENTSOF(query_fields)},
        {"Mutation", GQL_OBJECT, NULL, mutation_fields, ELEMENTSOF(mutation_fields)},
        {"Made", GQL_OBJECT, NULL, made_fields, ELEMENTSOF(made_fields)},
        {"Thing", GQL_INTERFACE, NULL, thing_fields, ELEMENTSOF(thing_fields)},
        {"Box", GQL_OBJECT, "Thing", box_fields, ELEMENTSOF(box_fields)},
        {"Ball", GQL_OBJECT, "Thing", thing_fields, ELEMENTSOF(thing_fields)},
        {"Toy", GQL_UNION, "Box Ball", NULL, 0},
        {"ThingConnection", GQL_OBJECT, NULL, conn_fields, ELEMENTSOF(conn_fields)},
        {"ThingEdge", GQL_OBJECT, NULL, edge_fields, ELEMENTSOF(edge_fields)},
        {"PageInfo", GQL_OBJECT, NULL, page_fields, ELEMENTSOF(page_fields)},
        {"Filter", GQL_INPUT_OBJECT, NULL, filter_fields, ELEMENTSOF(filter_fields)},
        {"Color", GQL_ENUM, "RED GREEN", NULL, 0},
};
static const GqlSchema schema = {types, ELEMENTSOF(types), "Query", "Mutation"};

/* Runs body; the response as compact JSON with sorted keys (new string). */
static char *run(const char *body)
{
        json_t *resp = NULL;
        int r = gql_execute(&schema, body, strlen(body), NULL, &resp);
        CHECK(r == 0);
        char *s = json_dumps(resp, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(resp);
        return s;
}

static void expect(const char *body, const char *want)
{
        char *got = run(body);
        if (!got || !strstr(got, want))
                fprintf(stderr, "for %s\n  got  %s\n  want %s\n", body, strempty(got), want);
        CHECK(got && strstr(got, want));
        free(got);
}

static void test_execute(void)
{
        /* fragments on the interface and on each concrete type; __typename; aliases */
        expect("{\"query\":\"{ things(first: 2) { totalCount nodes { __typename id ... on Box "
               "{ side } ...B } all: nodes { id } } } fragment B on Ball { label }\"}",
               "{\"data\":{\"things\":{\"all\":[{\"id\":1},{\"id\":2}],\"nodes\":[{\"__typename\":"
               "\"Box\",\"id\":1,\"side\":null},{\"__typename\":\"Ball\",\"id\":2,\"label\":"
               "\"two\"}],\"totalCount\":3}}}");
        /* a field selected twice (directly and by a fragment) is one, its selections merged */
        expect("{\"query\":\"{ things(first: 1) { nodes { id } nodes { label } } }\"}",
               "\"nodes\":[{\"id\":1,\"label\":\"one\"}]");
        /* cursors: after the first page comes the rest; last counts from the end */
        char *page = run("{\"query\":\"{ things(first: 1) { pageInfo { endCursor hasNextPage } "
                         "} }\"}");
        json_t *pj = json_loads(page, 0, NULL);
        json_t *things = json_object_get(json_object_get(pj, "data"), "things");
        const char *cur = json_get_str(json_object_get(things, "pageInfo"), "endCursor");
        char body[512];
        snprintf(body, sizeof(body),
                 "{\"query\":\"query($c: String) { things(first: 5, after: $c) { nodes { id } "
                 "pageInfo { hasNextPage hasPreviousPage } } }\",\"variables\":{\"c\":\"%s\"}}",
                 strempty(cur));
        expect(body, "{\"nodes\":[{\"id\":2},{\"id\":3}],\"pageInfo\":{\"hasNextPage\":false,"
                     "\"hasPreviousPage\":true}}");
        json_decref(pj);
        free(page);
        expect("{\"query\":\"{ things(last: 1) { nodes { id } } }\"}", "\"nodes\":[{\"id\":3}]");
        expect("{\"query\":\"{ things(first: 101) { totalCount } }\"}", "EXCESSIVE_PAGINATION");
        expect("{\"query\":\"{ things(after: \\\"bm9wZQ==\\\") { totalCount } }\"}",
               "does not appear to be a valid cursor");

        /* variables: defaults, absent ones left out, a single value as a list of one, enums
         * and input objects checked */
        expect("{\"query\":\"query($n: Int = 7, $s: String) { echo(n: $n, s: $s, l: 3) }\"}",
               "\"echo\":\"{\\\"l\\\":[3],\\\"n\\\":7}\"");
        expect("{\"query\":\"query($o: Filter) { echo(o: $o) }\",\"variables\":{\"o\":{\"color\":"
               "\"RED\"}}}",
               "{\\\"o\\\":{\\\"color\\\":\\\"RED\\\"}}");
        expect("{\"query\":\"query($o: Filter) { echo(o: $o) }\",\"variables\":{\"o\":{\"color\":"
               "\"BLUE\"}}}",
               "Variable $o of type Filter was provided invalid value");
        expect("{\"query\":\"query($o: Filter) { echo(o: $o) "
               "}\",\"variables\":{\"o\":{\"max\":1}}}",
               "is required");
        expect("{\"query\":\"query($n: Int!) { echo(n: $n) }\"}",
               "Variable $n of type Int! was provided invalid value");
        expect("{\"query\":\"query($n: Int) { echo(n: $n) }\",\"variables\":{\"n\":\"1\"}}",
               "Could not coerce value \\\"1\\\" to Int");
        expect("{\"query\":\"{ echo(n: \\\"x\\\") }\"}", "argumentLiteralsIncompatible");
        expect("{\"query\":\"{ echo(e: PURPLE) }\"}", "Expected type 'Color'");
        expect("{\"query\":\"{ echo(n: $nope) }\"}", "Variable $nope is used by");

        /* @skip and @include */
        expect("{\"query\":\"query($t: Boolean!) { a: echo(n: 1) @skip(if: $t) b: echo(n: 2) "
               "@include(if: $t) }\",\"variables\":{\"t\":true}}",
               "{\"data\":{\"b\":");

        /* nulls: a nullable field is null with its error and path; a non-null one nulls its
         * parent */
        expect("{\"query\":\"{ missing { id } echo }\"}",
               "\"errors\":[{\"locations\":[{\"column\":3,\"line\":1}],\"message\":\"nothing "
               "here\",\"path\":[\"missing\"],\"type\":\"NOT_FOUND\"}]");
        expect("{\"query\":\"{ mustHave { id } }\"}", "{\"data\":null,");
        expect("{\"query\":\"{ mustHave { id } }\"}",
               "Cannot return null for non-nullable field Query.mustHave");

        /* validation: GitHub's messages and codes, and no data */
        expect("{\"query\":\"{ nope }\"}",
               "{\"errors\":[{\"extensions\":{\"code\":\"undefinedField\",\"fieldName\":\"nope\","
               "\"typeName\":\"Query\"},\"locations\":[{\"column\":3,\"line\":1}],\"message\":"
               "\"Field 'nope' doesn't exist on type 'Query'\"}]}");
        expect("{\"query\":\"{ echo(zzz: 1) }\"}", "Field 'echo' doesn't accept argument 'zzz'");
        expect("{\"query\":\"{ things }\"}", "Field must have selections");
        expect("{\"query\":\"{ echo { x } }\"}", "Selections can't be made on scalars");
        expect("{\"query\":\"{ things(first: 1) { nodes { ... on Nope { id } } } }\"}",
               "No such type Nope");
        expect("{\"query\":\"{ ...X }\"}", "Fragment X was used, but not defined");
        expect("{\"query\":\"fragment A on Query { ...B } fragment B on Query { ...A } { ...A }\"}",
               "Fragment A contains an infinite loop");
        expect("{\"query\":\"{ things(first: 1) { nodes { side } } }\"}",
               "Field 'side' doesn't exist on type 'Thing'");

        /* an error that quotes a token holding multibyte characters is still UTF-8 */
        expect("{\"query\":\"{ __ \\\"\u05d7\u05d7\\\" }\"}", "(STRING) at [1, 6]");

        /* requests */
        expect("{\"query\": 5}", "A query attribute must be specified");
        expect("[]", "Problems parsing JSON");
        expect("{\"query\":\"query A { echo } query B { echo }\"}",
               "An operation name is required");
        expect("{\"query\":\"query A { echo(n: 1) } query B { echo(n: 2) }\",\"operationName\":"
               "\"B\"}",
               "{\\\"n\\\":2}");
        expect("{\"query\":\"subscription { echo }\"}",
               "Schema is not configured for subscriptions");

        /* mutations run in order, each once */
        expect("{\"query\":\"mutation { a: make(input: {color: RED}) { n } b: make(input: "
               "{color: GREEN}) { n } }\"}",
               "{\"data\":{\"a\":{\"n\":1},\"b\":{\"n\":2}}}");

        /* introspection */
        expect("{\"query\":\"{ __type(name: \\\"Box\\\") { kind name interfaces { name } fields "
               "{ name type { kind ofType { name } } } } }\"}",
               "{\"data\":{\"__type\":{\"fields\":[{\"name\":\"id\",\"type\":{\"kind\":"
               "\"NON_NULL\",\"ofType\":{\"name\":\"Int\"}}},{\"name\":\"label\",\"type\":{"
               "\"kind\":\"SCALAR\",\"ofType\":null}},{\"name\":\"side\",\"type\":{\"kind\":"
               "\"SCALAR\",\"ofType\":null}}],\"interfaces\":[{\"name\":\"Thing\"}],\"kind\":"
               "\"OBJECT\",\"name\":\"Box\"}}}");
        expect("{\"query\":\"{ __type(name: \\\"Toy\\\") { possibleTypes { name } } t: "
               "__type(name: \\\"Thing\\\") { possibleTypes { name } } c: __type(name: "
               "\\\"Color\\\") { enumValues { name } } }\"}",
               "{\"data\":{\"__type\":{\"possibleTypes\":[{\"name\":\"Box\"},{\"name\":"
               "\"Ball\"}]},\"c\":{\"enumValues\":[{\"name\":\"RED\"},{\"name\":\"GREEN\"}]},"
               "\"t\":{\"possibleTypes\":[{\"name\":\"Box\"},{\"name\":\"Ball\"}]}}}");
        expect("{\"query\":\"{ __type(name: \\\"Nope\\\") { name } }\"}",
               "{\"data\":{\"__type\":null}}");
        expect("{\"query\":\"{ __schema { queryType { name } mutationType { name } } }\"}",
               "{\"mutationType\":{\"name\":\"Mutation\"},\"queryType\":{\"name\":\"Query\"}}");

        /* work is bounded: fragments that fan out are refused, not run */
        char big[8192];
        size_t n = (size_t)snprintf(big, sizeof(big), "{\"query\":\"{ ...F0 } ");
        for (int i = 0; i < 24; i++)
                n += (size_t)snprintf(big + n, sizeof(big) - n,
                                      "fragment F%d on Query { ...F%d ...F%d } ", i, i + 1, i + 1);
        n += (size_t)snprintf(big + n, sizeof(big) - n, "fragment F24 on Query { echo }\"}");
        expect(big, "more than 500000 fields");
}

int main(void)
{
        test_parse();
        test_execute();
        return check_finish();
}
