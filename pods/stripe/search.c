/* SPDX-License-Identifier: MIT */
/*
 * Search (https://docs.stripe.com/search): GET /v1/<resource>/search?query=…&limit=&page=
 * for the seven resources Stripe makes searchable, with its query language:
 *
 *   query  := clause { ("AND" | "OR") clause }     at most 10 clauses, AND and OR not mixed
 *   clause := ["-"] field op value                 "-" negates the clause
 *   field  := name {"." name} | "metadata[" quoted "]"
 *   op     := ":" (exact; case-insensitive for strings) | "~" (substring, 3+ characters)
 *           | ">" | "<" | ">=" | "<=" (numeric fields)
 *   value  := quoted ('…' or "…", \ escapes) | integer | null
 *
 * Each resource accepts only its documented query fields (the tables below); anything else
 * is Stripe's 400. The answer is a search_result {object, data, has_more, next_page, url}
 * (total_count with expand[]=total_count), newest first; next_page is an opaque cursor for
 * the page parameter. Unlike Stripe, the twin's index has no propagation delay.
 */
#include <ctype.h>
#include <strings.h>

#include "common/json-util.h"
#include "pods/stripe/stripe.h"

#define SEARCH_MAX_CLAUSES 10

typedef enum FieldType {
        FIELD_STRING,  /* exact (case-insensitive) and substring */
        FIELD_TOKEN,   /* an id or enum: exact only */
        FIELD_NUMBER,  /* exact and comparisons */
        FIELD_BOOLEAN, /* "true" / "false" */
} FieldType;

typedef struct SearchField {
        const char *name; /* as the query names it */
        const char *path; /* JSON Pointer into the row */
        FieldType type;
} SearchField;

typedef struct SearchResource {
        const char *collection; /* world collection, and the query-fields anchor */
        const char *anchor;     /* https://docs.stripe.com/search#query-fields-for-<anchor> */
        const SearchField *fields;
} SearchResource;

static const SearchField customer_fields[] = {{"created", "/created", FIELD_NUMBER},
                                              {"email", "/email", FIELD_STRING},
                                              {"name", "/name", FIELD_STRING},
                                              {"phone", "/phone", FIELD_STRING},
                                              {"test_clock", "/test_clock", FIELD_TOKEN},
                                              {}};
static const SearchField payment_intent_fields[] = {
        {"amount", "/amount", FIELD_NUMBER},    {"created", "/created", FIELD_NUMBER},
        {"currency", "/currency", FIELD_TOKEN}, {"customer", "/customer", FIELD_TOKEN},
        {"status", "/status", FIELD_TOKEN},     {}};
static const SearchField charge_fields[] = {
        {"amount", "/amount", FIELD_NUMBER},
        {"billing_details.address.postal_code", "/billing_details/address/postal_code",
         FIELD_STRING},
        {"created", "/created", FIELD_NUMBER},
        {"currency", "/currency", FIELD_TOKEN},
        {"customer", "/customer", FIELD_TOKEN},
        {"disputed", "/disputed", FIELD_BOOLEAN},
        {"payment_intent", "/payment_intent", FIELD_TOKEN},
        {"payment_method_details.card.brand", "/payment_method_details/card/brand", FIELD_TOKEN},
        {"payment_method_details.card.exp_month", "/payment_method_details/card/exp_month",
         FIELD_NUMBER},
        {"payment_method_details.card.exp_year", "/payment_method_details/card/exp_year",
         FIELD_NUMBER},
        {"payment_method_details.card.fingerprint", "/payment_method_details/card/fingerprint",
         FIELD_TOKEN},
        {"payment_method_details.card.last4", "/payment_method_details/card/last4", FIELD_TOKEN},
        {"refunded", "/refunded", FIELD_BOOLEAN},
        {"status", "/status", FIELD_TOKEN},
        {}};
static const SearchField invoice_fields[] = {{"created", "/created", FIELD_NUMBER},
                                             {"currency", "/currency", FIELD_TOKEN},
                                             {"customer", "/customer", FIELD_TOKEN},
                                             {"number", "/number", FIELD_STRING},
                                             {"receipt_number", "/receipt_number", FIELD_STRING},
                                             {"status", "/status", FIELD_TOKEN},
                                             {"subscription", "/subscription", FIELD_TOKEN},
                                             {"total", "/total", FIELD_NUMBER},
                                             {}};
static const SearchField price_fields[] = {{"active", "/active", FIELD_BOOLEAN},
                                           {"currency", "/currency", FIELD_TOKEN},
                                           {"lookup_key", "/lookup_key", FIELD_STRING},
                                           {"product", "/product", FIELD_TOKEN},
                                           {"type", "/type", FIELD_TOKEN},
                                           {}};
static const SearchField product_fields[] = {
        {"active", "/active", FIELD_BOOLEAN}, {"description", "/description", FIELD_STRING},
        {"name", "/name", FIELD_STRING},      {"shippable", "/shippable", FIELD_BOOLEAN},
        {"url", "/url", FIELD_STRING},        {}};
static const SearchField subscription_fields[] = {
        {"created", "/created", FIELD_NUMBER}, {"status", "/status", FIELD_TOKEN}, {}};

static const SearchResource resources[] = {
        {"customers", "customers", customer_fields},
        {"payment_intents", "paymentintents", payment_intent_fields},
        {"charges", "charges", charge_fields},
        {"invoices", "invoices", invoice_fields},
        {"prices", "prices", price_fields},
        {"products", "products", product_fields},
        {"subscriptions", "subscriptions", subscription_fields},
};

typedef enum SearchOp { OP_EQ, OP_SUB, OP_GT, OP_LT, OP_GE, OP_LE } SearchOp;

typedef struct Clause {
        bool negate;
        const SearchField *field; /* NULL: metadata[key] */
        char key[48];             /* the metadata key */
        SearchOp op;
        bool null;     /* the value is null */
        bool number;   /* the value was an unquoted integer */
        int64_t n;     /* ... its value */
        char str[512]; /* the value as text (quoted strings unescaped, numbers as written) */
} Clause;

typedef struct Query {
        Clause c[SEARCH_MAX_CLAUSES];
        size_t n;
        bool any; /* OR: any clause; AND (or one clause): all */
} Query;

static void skip_space(const char **p)
{
        while (**p == ' ' || **p == '\t' || **p == '\n' || **p == '\r')
                (*p)++;
}

/* A quoted string at *p ('…' or "…", backslash escapes) into buf: 0, or -EINVAL. */
static int parse_quoted(const char **p, char *buf, size_t len)
{
        char q = **p;
        if (q != '\'' && q != '"')
                return -EINVAL;
        size_t o = 0;
        for ((*p)++; **p && **p != q; (*p)++) {
                if (**p == '\\' && (*p)[1])
                        (*p)++;
                if (o + 1 >= len)
                        return -EINVAL;
                buf[o++] = **p;
        }
        if (**p != q)
                return -EINVAL;
        (*p)++;
        buf[o] = 0;
        return 0;
}

typedef struct SearchError {
        const char *why; /* static text */
        char field[96];  /* an unsupported field's name, when that is the problem */
} SearchError;

static int parse_clause(const SearchResource *res, const char **p, Clause *cl, SearchError *e)
{
        skip_space(p);
        if (**p == '-') {
                cl->negate = true;
                (*p)++;
        }
        char name[96];
        size_t l = 0;
        if (startswith(*p, "metadata[")) {
                *p += strlen("metadata[");
                if (parse_quoted(p, cl->key, sizeof(cl->key)) < 0 || **p != ']') {
                        e->why = "metadata keys are written metadata['key'], quoted";
                        return -EINVAL;
                }
                (*p)++;
        } else {
                while (isalnum((unsigned char)(*p)[l]) || (*p)[l] == '_' || (*p)[l] == '.')
                        l++;
                if (l == 0 || l >= sizeof(name)) {
                        e->why = "a clause starts with a field name";
                        return -EINVAL;
                }
                memcpy(name, *p, l);
                name[l] = 0;
                *p += l;
                for (const SearchField *f = res->fields; f->name && !cl->field; f++)
                        if (streq(f->name, name))
                                cl->field = f;
                if (!cl->field) {
                        snprintf(e->field, sizeof(e->field), "%s", name);
                        return -EINVAL;
                }
        }
        skip_space(p);
        static const struct {
                const char *text;
                SearchOp op;
        } ops[] = {{">=", OP_GE}, {"<=", OP_LE}, {":", OP_EQ},
                   {"~", OP_SUB}, {">", OP_GT},  {"<", OP_LT}};
        size_t k = 0;
        while (k < ELEMENTSOF(ops) && !startswith(*p, ops[k].text))
                k++;
        if (k == ELEMENTSOF(ops)) {
                e->why = "a field is followed by :, ~, >, <, >= or <=";
                return -EINVAL;
        }
        cl->op = ops[k].op;
        *p += strlen(ops[k].text);
        skip_space(p);
        if (**p == '\'' || **p == '"') {
                if (parse_quoted(p, cl->str, sizeof(cl->str)) < 0) {
                        e->why = "a quoted value is not closed";
                        return -EINVAL;
                }
        } else if (startswith(*p, "null") && !isalnum((unsigned char)(*p)[4])) {
                cl->null = true;
                *p += 4;
        } else {
                char *end;
                errno = 0;
                long long v = strtoll(*p, &end, 10);
                if (end == *p || errno || isalnum((unsigned char)*end)) {
                        e->why = "string values must be quoted ('value' or \"value\")";
                        return -EINVAL;
                }
                snprintf(cl->str, sizeof(cl->str), "%.*s", (int)(end - *p), *p);
                cl->number = true;
                cl->n = v;
                *p = end;
        }
        FieldType type = cl->field ? cl->field->type : FIELD_STRING;
        bool compare = cl->op != OP_EQ && cl->op != OP_SUB;
        if (compare && (type != FIELD_NUMBER || !cl->number)) {
                e->why = "> < >= <= compare a numeric field with a number";
                return -EINVAL;
        }
        if (cl->op == OP_SUB && (type != FIELD_STRING || cl->null || strlen(cl->str) < 3)) {
                e->why = "~ matches a substring of at least 3 characters of a string field";
                return -EINVAL;
        }
        if (cl->null && cl->op != OP_EQ) {
                e->why = "null only goes with :";
                return -EINVAL;
        }
        if (type == FIELD_NUMBER && !cl->null && !cl->number) {
                char *end;
                errno = 0;
                cl->n = strtoll(cl->str, &end, 10);
                if (!cl->str[0] || *end || errno) {
                        e->why = "a numeric field takes an integer";
                        return -EINVAL;
                }
                cl->number = true;
        }
        return 0;
}

static int parse_query(const SearchResource *res, const char *text, Query *q, SearchError *e)
{
        const char *p = text;
        bool and = false, or = false;
        *q = (Query){};
        for (;;) {
                if (q->n == SEARCH_MAX_CLAUSES) {
                        e->why = "a query has at most 10 clauses";
                        return -EINVAL;
                }
                int r = parse_clause(res, &p, &q->c[q->n++], e);
                if (r < 0)
                        return r;
                skip_space(&p);
                if (!*p)
                        break;
                if (startswith(p, "AND") && (p[3] == ' ' || p[3] == '\t')) {
                        and = true;
                        p += 3;
                } else if (startswith(p, "OR") && (p[2] == ' ' || p[2] == '\t')) {
                        or = true;
                        p += 2;
                } else {
                        e->why = "clauses are joined by AND or OR";
                        return -EINVAL;
                }
                if (and&& or) {
                        e->why = "a query cannot combine AND and OR";
                        return -EINVAL;
                }
        }
        q->any = or ;
        return 0;
}

static bool contains_ci(const char *hay, const char *needle)
{
        size_t n = strlen(needle);
        for (; *hay; hay++)
                if (strncasecmp(hay, needle, n) == 0)
                        return true;
        return false;
}

/* The member at path ("/a/b": object members only, no escapes) of row, or NULL. */
static json_t *member_at(json_t *row, const char *path)
{
        json_t *v = row;
        while (v && *path == '/') {
                const char *next = strchr(path + 1, '/');
                size_t l = next ? (size_t)(next - path - 1) : strlen(path + 1);
                char name[64];
                if (l >= sizeof(name))
                        return NULL;
                memcpy(name, path + 1, l);
                name[l] = 0;
                v = json_object_get(v, name);
                path += l + 1;
        }
        return v;
}

static bool clause_matches(const Clause *cl, json_t *row)
{
        json_t *v = cl->field ? member_at(row, cl->field->path)
                              : json_object_get(json_object_get(row, "metadata"), cl->key);
        bool m;
        if (cl->null)
                m = !v || json_is_null(v) || (json_is_string(v) && json_string_length(v) == 0);
        else if (json_is_integer(v)) {
                int64_t x = json_integer_value(v);
                switch (cl->op) {
                case OP_EQ:
                        m = cl->number && x == cl->n;
                        break;
                case OP_GT:
                        m = x > cl->n;
                        break;
                case OP_LT:
                        m = x < cl->n;
                        break;
                case OP_GE:
                        m = x >= cl->n;
                        break;
                case OP_LE:
                        m = x <= cl->n;
                        break;
                case OP_SUB:
                default:
                        m = false;
                        break;
                }
        } else if (json_is_boolean(v))
                m = cl->op == OP_EQ && strcasecmp(cl->str, json_is_true(v) ? "true" : "false") == 0;
        else if (json_is_string(v))
                m = cl->op == OP_SUB ? contains_ci(json_string_value(v), cl->str)
                                     : strcasecmp(json_string_value(v), cl->str) == 0;
        else
                m = false;
        return cl->negate ? !m : m;
}

static bool query_matches(const Query *q, json_t *row)
{
        if (json_is_true(json_object_get(row, "deleted")))
                return false;
        for (size_t i = 0; i < q->n; i++) {
                bool m = clause_matches(&q->c[i], row);
                if (q->any && m)
                        return true;
                if (!q->any && !m)
                        return false;
        }
        return !q->any;
}

/* The page cursor: "pome_page_<offset>", Stripe's next_page being opaque to callers. */
#define PAGE_PREFIX "pome_page_"

static int cmp_newest(const void *a, const void *b)
{
        json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
        json_int_t cx = json_integer_value(json_object_get(x, "created"));
        json_int_t cy = json_integer_value(json_object_get(y, "created"));
        if (cx != cy)
                return cx < cy ? 1 : -1;
        /* one second: the later row (a higher index, kept in "_idx" below) first */
        json_int_t ix = json_integer_value(json_object_get(x, "_idx"));
        json_int_t iy = json_integer_value(json_object_get(y, "_idx"));
        return ix < iy ? 1 : -1;
}

/*
 * Answers GET /v1/<collection>/search (args: query, limit 1–100 default 10, page, expand
 * "data.x" paths and "total_count"). 0 or -ENOMEM; refusals are Stripe's 400s in rp.
 */
static int search(TwinCall *c, TwinReply *rp, const char *collection)
{
        const SearchResource *res = NULL;
        for (size_t i = 0; i < ELEMENTSOF(resources) && !res; i++)
                if (streq(resources[i].collection, collection))
                        res = &resources[i];
        if (!res)
                return -EIO; /* a table bug */
        const char *text, *page;
        int r;
        if ((r = stripe_arg_str(c, rp, "query", true, &text)) <= 0 ||
            (r = stripe_arg_str(c, rp, "page", false, &page)) <= 0)
                return r;
        int64_t limit = 10;
        json_t *lv = json_object_get(c->args, "limit");
        if (lv && !json_is_null(lv) && twin_arg_int(c->args, "limit", 1, 100, &limit) < 0)
                return stripe_invalid(rp, NULL, "limit",
                                      "This value must be greater than or equal to 1 and less "
                                      "than or equal to 100.");
        size_t offset = 0;
        if (page) {
                const char *digits = startswith(page, PAGE_PREFIX);
                char *end;
                unsigned long long o = digits ? strtoull(digits, &end, 10) : 0;
                if (!digits || !*digits || *end || !isdigit((unsigned char)*digits))
                        return stripe_invalid(rp, NULL, "page",
                                              "Invalid page: use the next_page of the previous "
                                              "search result.");
                offset = (size_t)o;
        }

        Query q;
        SearchError e = {};
        if (parse_query(res, text, &q, &e) < 0) {
                if (e.field[0])
                        return stripe_invalid(rp, NULL, "query",
                                              "Field `%s` is an unsupported search field for "
                                              "resource `%s`. See "
                                              "https://docs.stripe.com/search#query-fields-for-%s "
                                              "for a list of supported fields.",
                                              e.field, res->collection, res->anchor);
                return stripe_invalid(rp, NULL, "query",
                                      "We were unable to parse your search query (%s). See "
                                      "https://docs.stripe.com/search#search-query-language.",
                                      e.why);
        }

        /* expand: "total_count" asks for the count; "data.x" expands x in every row */
        bool want_total = false;
        _cleanup_json_ json_t *expand = NULL;
        if ((r = stripe_list_expansions(c, rp, &want_total, &expand)) <= 0)
                return r;
        size_t i;

        json_t *rows = json_object_get(c->world, collection);
        _cleanup_json_ json_t *hits = json_array();
        if (!hits)
                return -ENOMEM;
        json_t *row;
        json_array_foreach (rows, i, row) {
                if (!query_matches(&q, row))
                        continue;
                json_t *copy = json_deep_copy(row);
                if (!copy || json_object_set_new(copy, "_idx", json_integer((json_int_t)i)) < 0 ||
                    json_array_append_new(hits, copy) < 0)
                        return -ENOMEM;
        }
        size_t n = json_array_size(hits);
        _cleanup_free_ json_t **sorted = calloc(n + 1, sizeof(json_t *));
        if (!sorted)
                return -ENOMEM;
        for (i = 0; i < n; i++)
                sorted[i] = json_array_get(hits, i);
        qsort(sorted, n, sizeof(json_t *), cmp_newest);

        _cleanup_json_ json_t *data = json_array();
        if (!data)
                return -ENOMEM;
        size_t end = offset + (size_t)limit < n ? offset + (size_t)limit : n;
        for (size_t k = offset; k < end; k++) {
                json_object_del(sorted[k], "_idx");
                if (json_array_append(data, sorted[k]) < 0)
                        return -ENOMEM;
                if ((r = stripe_expand(c, rp, sorted[k], expand)) <= 0)
                        return r;
        }
        bool more = end < n;
        char url[64], next[48];
        snprintf(url, sizeof(url), "/v1/%s/search", collection);
        snprintf(next, sizeof(next), PAGE_PREFIX "%zu", end);
        json_t *body =
                json_pack("{s:s, s:O, s:b, s:s?, s:s}", "object", "search_result", "data", data,
                          "has_more", more, "next_page", more ? next : NULL, "url", url);
        if (body && want_total && json_object_set_new(body, "total_count", json_integer(n)) < 0) {
                json_decref(body);
                return -ENOMEM;
        }
        return twin_reply_body(rp, 200, body);
}

int stripe_act_search_customers(TwinCall *c, TwinReply *rp)
{
        return search(c, rp, "customers");
}

int stripe_act_search_payment_intents(TwinCall *c, TwinReply *rp)
{
        return search(c, rp, "payment_intents");
}

int stripe_act_search_charges(TwinCall *c, TwinReply *rp)
{
        return search(c, rp, "charges");
}

int stripe_act_search_invoices(TwinCall *c, TwinReply *rp)
{
        return search(c, rp, "invoices");
}

int stripe_act_search_prices(TwinCall *c, TwinReply *rp)
{
        return search(c, rp, "prices");
}

int stripe_act_search_products(TwinCall *c, TwinReply *rp)
{
        return search(c, rp, "products");
}

int stripe_act_search_subscriptions(TwinCall *c, TwinReply *rp)
{
        return search(c, rp, "subscriptions");
}
