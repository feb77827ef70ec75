/* The config keys: one list (FAB__CONFIG_KEYS, src/common/topology_impl.h),
 * against which the parser, docs/fabric.md's tables and their defaults are
 * checked. */
#include "fabtest.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabmem.h"
#include "src/common/topology_impl.h"

typedef struct cfg_key {
    const char *section, *name, *sample;
} cfg_key_t;

static const cfg_key_t keys[] = {
#define KEY(section, name, sample) {#section, name, sample},
    FAB__CONFIG_KEYS(KEY)
#undef KEY
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* One row of docs/fabric.md's key tables: its section, key, and the first
 * `...` of its default column ("" where the default is words). */
typedef struct doc_row {
    char section[16], name[64], value[64];
} doc_row_t;

static size_t read_docs(doc_row_t *rows, size_t cap)
{
    FILE *f = fopen(FABMEM_DOCS_DIR "/fabric.md", "r");
    assert_non_null(f);
    char line[4096], section[16] = "";
    size_t n = 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "## ", 3) == 0)
            section[0] = '\0';
        else if (strncmp(line, "### `[driver]`", 14) == 0)
            strcpy(section, "driver");
        else if (strncmp(line, "### `[daemon]`", 14) == 0)
            strcpy(section, "daemon");
        else if (strncmp(line, "### `[node NAME]`", 17) == 0)
            strcpy(section, "node");
        else if (strncmp(line, "### `[channel N]`", 17) == 0)
            strcpy(section, "channel");
        else if (section[0] != '\0' && strncmp(line, "| `", 3) == 0) {
            assert_true(n < cap);
            doc_row_t *r = &rows[n++];
            snprintf(r->section, sizeof(r->section), "%s", section);
            const char *end = strchr(line + 3, '`');
            assert_non_null(end);
            snprintf(r->name, sizeof(r->name), "%.*s", (int)(end - line - 3), line + 3);
            r->value[0] = '\0';
            const char *col = strstr(end, "| ");
            if (strcmp(section, "channel") != 0 && col != NULL && strncmp(col + 2, "`", 1) == 0) {
                const char *v = col + 3, *ve = strchr(v, '`');
                assert_non_null(ve);
                snprintf(r->value, sizeof(r->value), "%.*s", (int)(ve - v), v);
            }
        }
    }
    fclose(f);
    return n;
}

static bool listed(const char *section, const char *name)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (strcmp(keys[i].section, section) == 0 && strcmp(keys[i].name, name) == 0)
            return true;
    return false;
}

static void the_docs_tables_name_every_key_and_no_other(void **state)
{
    (void)state;
    doc_row_t rows[128];
    size_t n = read_docs(rows, 128);
    for (size_t i = 0; i < n; i++)
        if (!listed(rows[i].section, rows[i].name))
            fail_msg("docs/fabric.md's [%s] table names %s, which FAB__CONFIG_KEYS does not",
                     rows[i].section, rows[i].name);
    for (size_t k = 0; k < NKEYS; k++) {
        bool found = false;
        for (size_t i = 0; i < n; i++)
            found |= strcmp(rows[i].section, keys[k].section) == 0 &&
                     strcmp(rows[i].name, keys[k].name) == 0;
        if (!found)
            fail_msg("FAB__CONFIG_KEYS has [%s] %s, which docs/fabric.md's tables do not name",
                     keys[k].section, keys[k].name);
    }
}

/* Load text as a config file: the status, and the topology on success. */
static fab_status_t load(const char *text, fab_topology_t **t_out)
{
    char *dir = NULL;
    char *path = fab_test_config_file(text, &dir);
    fab_status_t s = fab_topology_load(path, t_out);
    fab_test_rmtree(dir);
    free(dir);
    free(path);
    return s;
}

static void section_line(const char *section, char *buf, size_t cap)
{
    if (strcmp(section, "node") == 0)
        snprintf(buf, cap, "[node node0]");
    else if (strcmp(section, "channel") == 0)
        snprintf(buf, cap, "[channel 0]");
    else
        snprintf(buf, cap, "[%s]", section);
}

static void the_parser_takes_every_listed_key_and_no_other(void **state)
{
    (void)state;
    char text[512], head[32];
    for (size_t k = 0; k < NKEYS; k++) {
        section_line(keys[k].section, head, sizeof(head));
        const char *name = strcmp(keys[k].name, "attribute.NAME") == 0
                               ? "attribute.HANDLE_TYPE_FABRIC_SUPPORTED"
                               : keys[k].name;
        snprintf(text, sizeof(text), "%s\n%s = %s\n", head, name, keys[k].sample);
        fab_topology_t *t = NULL;
        fab_status_t s = load(text, &t);
        if (s != FAB_SUCCESS)
            fail_msg("the parser refuses \"%s = %s\" in %s", name, keys[k].sample, head);
        fab_topology_destroy(t);
        snprintf(text, sizeof(text), "%s\n%s_not_a_key = %s\n", head, name, keys[k].sample);
        assert_int_equal(load(text, &t), FAB_ERROR_INVALID_VALUE);
    }
}

/* Setting a key to the default its docs row gives changes nothing. */
static void every_documented_default_is_the_parsers(void **state)
{
    (void)state;
    doc_row_t rows[128];
    size_t n = read_docs(rows, 128), checked = 0;
    fab_topology_t *base = NULL;
    assert_int_equal(load("# nothing\n", &base), FAB_SUCCESS);
    for (size_t i = 0; i < n; i++) {
        const doc_row_t *r = &rows[i];
        if (r->value[0] == '\0' || strchr(r->value, '<') != NULL || strchr(r->name, '.') != NULL)
            continue; /* words, not a value */
        char text[512], head[32];
        section_line(r->section, head, sizeof(head));
        snprintf(text, sizeof(text), "%s\n%s = %s\n", head, r->name, r->value);
        fab_topology_t *t = NULL;
        if (load(text, &t) != FAB_SUCCESS)
            fail_msg("[%s] %s: the documented default %s does not parse", r->section, r->name,
                     r->value);
        bool same = t->driver_version == base->driver_version &&
                    t->socket_mode == base->socket_mode && t->idle_exit == base->idle_exit &&
                    memcmp(&t->limits, &base->limits, sizeof(t->limits)) == 0 &&
                    t->imex_timeout_ms == base->imex_timeout_ms && t->nnodes == base->nnodes &&
                    memcmp(&t->nodes[0], &base->nodes[0], sizeof(t->nodes[0])) == 0;
        if (!same)
            fail_msg("[%s] %s: the docs say %s is the default; it is not the parser's", r->section,
                     r->name, r->value);
        fab_topology_destroy(t);
        checked++;
    }
    fab_topology_destroy(base);
    assert_true(checked > 20);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(the_docs_tables_name_every_key_and_no_other),
    cmocka_unit_test(the_parser_takes_every_listed_key_and_no_other),
    cmocka_unit_test(every_documented_default_is_the_parsers),
};

FAB_TEST_MAIN_NO_HELPERS("config", tests)
