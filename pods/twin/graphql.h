/* SPDX-License-Identifier: MIT */
/*
 * GraphQL for the twins (the GitHub twin's POST /graphql; Linear's API is GraphQL too): a
 * parser of executable documents (GraphQL spec, October 2021, §2) and an executor (§6) over
 * a schema a kind declares as static tables. No code generator, no I/O.
 *
 * Values are jansson values. A resolver gets its parent's source (a JSON object) and the
 * field's arguments with variables substituted; it answers a JSON value. An object-typed
 * value is a JSON object whose "__typename" names its concrete type when the field's type is
 * an interface or a union (for an object type it may be left out). A field without a
 * resolver reads the member of its name from the source.
 *
 * Errors are GraphQL's response shape: {"errors": [{"message", "locations", "path",
 * "extensions"?}]}, with "data" when execution started. A document that does not parse or
 * validate against the schema (an unknown field, argument, type or fragment) gets errors
 * only, as GitHub answers it: {"errors": [...]} with no "data".
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/util.h"

typedef struct GqlExec GqlExec;

/*
 * Resolves one field: source is the parent's (borrowed), args the arguments as given, each
 * variable replaced by its value and each absent argument left out (borrowed). Writes a new
 * reference to *ret (NULL reads as JSON null). Returns 0, or -ENOMEM; a field that cannot be
 * answered (a repository not found) is 0 with *ret NULL after gql_error.
 */
typedef int (*GqlResolveFn)(GqlExec *x, json_t *source, json_t *args, json_t **ret);

typedef enum GqlKind {
        GQL_SCALAR,
        GQL_OBJECT,
        GQL_INTERFACE,
        GQL_UNION,
        GQL_ENUM,
        GQL_INPUT_OBJECT,
} GqlKind;

/*
 * A field of an object or interface type, or of an input object (then resolve is NULL and
 * args too). type is GraphQL type syntax ("String!", "[Label!]", "IssueConnection!"); args
 * the accepted arguments as "name: Type" pairs separated by commas ("first: Int, after:
 * String, states: [IssueState!]"), NULL for none. Every string is static.
 */
typedef struct GqlField {
        const char *name;
        const char *type;
        const char *args;
        GqlResolveFn resolve;
} GqlField;

/*
 * A named type. For an object type, also lists the interfaces it implements, separated by
 * spaces; for a union, its member types; for an enum, its values. fields for objects,
 * interfaces and input objects.
 */
typedef struct GqlType {
        const char *name;
        GqlKind kind;
        const char *also; /* interfaces, union members or enum values, space-separated */
        const GqlField *fields;
        size_t n_fields;
} GqlType;

/* A schema: its types (built-in scalars are implied) and the root operation types. */
typedef struct GqlSchema {
        const GqlType *types;
        size_t n_types;
        const char *query;    /* the query root type's name */
        const char *mutation; /* the mutation root type's name, or NULL */
        size_t max_nodes;     /* fields a request may select, fragments expanded (validation
                               * counts them); 0: GQL_NODES_MAX */
} GqlSchema;

/*
 * Parses an executable document of len bytes (GraphQL spec §2: operations and fragments;
 * no type system definitions) into a new JSON tree in *ret:
 *   {"operations": [{"operation": "query"|"mutation"|"subscription", "name"?,
 *                    "variables": [{"name", "type", "default"?}], "selections": [...]}],
 *    "fragments": {name: {"on", "selections"}}}
 * where a selection is {"field", "alias"?, "arguments"?, "directives"?, "selections"?, "line",
 * "column"}, {"spread", "directives"?, "line", "column"} or {"inline", "on"?, "directives"?,
 * "selections"}. A variable in a value is {"$variable": name} (no GraphQL name starts with
 * '$'); an enum value is its name as a string. Returns 0, -EINVAL with GitHub's message
 * ("Parse error on \"}\" (RCURLY) at [1, 5]") in err (errlen bytes) and the position in
 * ret_line and ret_column, -ENOMEM. Nesting is bounded (GQL_DEPTH_MAX).
 */
int gql_parse(const char *text, size_t len, json_t **ret, char *err, size_t errlen, int *ret_line,
              int *ret_column);

#define GQL_DEPTH_MAX 64

/* Selections a document may hold as written (before fragments are expanded): what bounds the
 * parse tree's memory, ~600 bytes a selection, within a pod's limit for any body the gateway
 * takes (1 MiB of `a0: viewer { id }` is 110 000 of them). */
#define GQL_SELECTIONS_MAX 20000

/*
 * Runs the request body (len bytes: {"query", "variables"?, "operationName"?}) against
 * schema s and writes GraphQL's response document to *ret (new reference). userdata is
 * what gql_userdata returns to resolvers. Mutations run their root fields in order (§6.2.2).
 * Returns 0 (errors of the request are in the response), or -ENOMEM. A response is never
 * larger than the work a request may cause: each selected field costs one unit and a request
 * over GQL_NODES_MAX is refused.
 */
int gql_execute(const GqlSchema *s, const char *body, size_t len, void *userdata, json_t **ret);

#define GQL_NODES_MAX 500000

/* The userdata given to gql_execute. */
void *gql_userdata(GqlExec *x);

/* The name of the field being resolved (not its alias), as the document spells it: for a
 * resolver that serves several fields (one that reads a member of its source by the field's
 * name, with a default). Borrowed from the document; NULL outside a resolver. */
const char *gql_field_name(GqlExec *x);

/* The kind of the operation running: "query" or "mutation". Static. */
const char *gql_operation(GqlExec *x);

/*
 * Adds an error at the field being resolved: {"message", "path", "locations", "type"?}.
 * type (may be NULL) is GitHub's error type ("NOT_FOUND", "UNPROCESSABLE", "FORBIDDEN").
 * Returns 0 or -ENOMEM.
 */
int gql_error(GqlExec *x, const char *type, const char *fmt, ...) _printf_(3, 4);

/*
 * A connection's page of items (borrowed array of sources) for the arguments first, last,
 * after, before (Relay cursor connections; cursors are opaque offsets): a new
 * {"nodes", "edges", "totalCount", "pageInfo"} source. A first or last outside 0..100 is
 * GitHub's error (gql_error, *ret NULL). 0 or -ENOMEM.
 */
int gql_connection(GqlExec *x, json_t *items, json_t *args, json_t **ret);
