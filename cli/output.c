/* SPDX-License-Identifier: MIT */
#include "cli/output.h"

#include <assert.h>
#include <inttypes.h>

#include "common/util.h"

struct Table {
        size_t n_columns;
        const char *const *headers;
        char **cells; /* n_rows * n_columns, row-major */
        size_t n_rows;
};

static bool is_control(unsigned char c)
{
        return c < 0x20 || c == 0x7f;
}

char *output_clean(const char *s)
{
        char *copy = strdup(s ? s : "-");

        if (!copy)
                return NULL;
        for (char *p = copy; *p; p++)
                if (is_control((unsigned char)*p))
                        *p = '?';
        return copy;
}

void output_fputs_clean(const char *s, FILE *f)
{
        for (; *s; s++)
                fputc(is_control((unsigned char)*s) ? '?' : *s, f);
}

void output_lines(FILE *f, const char *prefix, const char *text)
{
        for (const char *l = text; l && *l;) {
                const char *e = strchrnul(l, '\n');
                fprintf(f, "%s: ", prefix);
                for (const char *c = l; c < e; c++)
                        fputc(is_control((unsigned char)*c) ? '?' : *c, f);
                fputc('\n', f);
                l = *e ? e + 1 : e;
        }
}

void output_duration(uint64_t seconds, char buf[static 32])
{
        uint64_t big, small;
        const char *big_unit, *small_unit;

        if (seconds < 60) {
                snprintf(buf, 32, "%" PRIu64 "s", seconds);
                return;
        }
        if (seconds < 3600) {
                big = seconds / 60, small = seconds % 60;
                big_unit = "m", small_unit = "s";
        } else if (seconds < 86400) {
                big = seconds / 3600, small = seconds % 3600 / 60;
                big_unit = "h", small_unit = "m";
        } else {
                big = seconds / 86400, small = seconds % 86400 / 3600;
                big_unit = "d", small_unit = "h";
        }
        if (small == 0)
                snprintf(buf, 32, "%" PRIu64 "%s", big, big_unit);
        else
                snprintf(buf, 32, "%" PRIu64 "%s %" PRIu64 "%s", big, big_unit, small, small_unit);
}

int output_json(const json_t *j)
{
        if (json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0)
                return -EIO;
        return fputc('\n', stdout) == EOF ? -EIO : 0;
}

/* Display width of UTF-8 text, one column per code point (the table holds ids, states, times). */
static size_t text_width(const char *s)
{
        size_t w = 0;

        for (; *s; s++)
                if (((unsigned char)*s & 0xc0) != 0x80)
                        w++;
        return w;
}

Table *table_new(size_t n, const char *const *headers)
{
        Table *t;

        assert(n > 0);
        t = calloc(1, sizeof(*t));
        if (!t)
                return NULL;
        t->n_columns = n;
        t->headers = headers;
        return t;
}

int table_add_row(Table *t, const char *const *cells)
{
        char **grown = reallocarray(t->cells, (t->n_rows + 1) * t->n_columns, sizeof(char *));

        if (!grown)
                return -ENOMEM;
        t->cells = grown;
        for (size_t i = 0; i < t->n_columns; i++) {
                char *c = output_clean(cells[i] && *cells[i] ? cells[i] : "-");

                if (!c) {
                        for (size_t k = 0; k < i; k++)
                                free(t->cells[t->n_rows * t->n_columns + k]);
                        return -ENOMEM;
                }
                t->cells[t->n_rows * t->n_columns + i] = c;
        }
        t->n_rows++;
        return 0;
}

size_t table_rows(const Table *t)
{
        return t->n_rows;
}

static void print_cell(FILE *f, const char *s, size_t width, bool last)
{
        fputs(s, f);
        if (last) {
                fputc('\n', f);
                return;
        }
        for (size_t w = text_width(s); w < width + 2; w++)
                fputc(' ', f);
}

int table_print(const Table *t, FILE *f)
{
        _cleanup_free_ size_t *widths = calloc(t->n_columns, sizeof(size_t));

        if (!widths)
                return -ENOMEM;
        for (size_t c = 0; c < t->n_columns; c++) {
                widths[c] = text_width(t->headers[c]);
                for (size_t r = 0; r < t->n_rows; r++) {
                        size_t w = text_width(t->cells[r * t->n_columns + c]);
                        if (w > widths[c])
                                widths[c] = w;
                }
        }
        for (size_t c = 0; c < t->n_columns; c++)
                print_cell(f, t->headers[c], widths[c], c + 1 == t->n_columns);
        for (size_t r = 0; r < t->n_rows; r++)
                for (size_t c = 0; c < t->n_columns; c++)
                        print_cell(f, t->cells[r * t->n_columns + c], widths[c],
                                   c + 1 == t->n_columns);
        return 0;
}

Table *table_free(Table *t)
{
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n_rows * t->n_columns; i++)
                free(t->cells[i]);
        free(t->cells);
        free(t);
        return NULL;
}

bool output_color(FILE *f)
{
        const char *term = getenv("TERM");
        return isatty(fileno(f)) && !getenv("NO_COLOR") && term && *term && !streq(term, "dumb");
}
