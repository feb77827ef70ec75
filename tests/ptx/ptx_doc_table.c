/* The table of instructions in docs/ptx.md, made from the one opcode list
 * (src/ptx/opcodes.h): with no argument it prints the table; with a path it
 * checks that the file holds exactly that table between its
 * "<!-- opcodes begin -->" and "<!-- opcodes end -->" lines, and exits 1
 * (saying which line differs) when it does not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/ptx/opcodes.h"

static const struct {
    const char *mnemonic, *section;
    int runs;
} rows[] = {
#define ROW(id, mnemonic, section, runs) {mnemonic, section, runs},
    FAB__PTX_OPCODES(ROW)
#undef ROW
};

static size_t table(char *out, size_t cap)
{
    size_t n = 0;
    n += (size_t)snprintf(out + n, cap - n, "| section | runs | refused at load (CUDA_ERROR_INVALID_PTX) |\n");
    n += (size_t)snprintf(out + n, cap - n, "|---|---|---|\n");
    size_t nrows = sizeof(rows) / sizeof(rows[0]);
    for (size_t i = 0; i < nrows;) {
        const char *sec = rows[i].section;
        char yes[4096] = "", no[4096] = "";
        size_t j = i;
        for (; j < nrows && strcmp(rows[j].section, sec) == 0; j++) {
            char *dst = rows[j].runs ? yes : no;
            size_t l = strlen(dst);
            snprintf(dst + l, sizeof(yes) - l, "%s`%s`", l ? " " : "", rows[j].mnemonic);
        }
        n += (size_t)snprintf(out + n, cap - n, "| %s | %s | %s |\n", sec, *yes ? yes : "-", *no ? no : "-");
        i = j;
    }
    return n;
}

int main(int argc, char **argv)
{
    static char want[65536];
    table(want, sizeof(want));
    if (argc < 2) {
        fputs(want, stdout);
        return 0;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    static char have[65536];
    size_t n = 0;
    char line[8192];
    int in = 0;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "<!-- opcodes begin -->", 22) == 0) {
            in = 1;
            continue;
        }
        if (strncmp(line, "<!-- opcodes end -->", 20) == 0)
            in = 2;
        if (in == 1 && n + strlen(line) < sizeof(have)) {
            memcpy(have + n, line, strlen(line));
            n += strlen(line);
        }
    }
    fclose(f);
    have[n] = 0;
    if (in != 2 || strcmp(have, want) != 0) {
        fprintf(stderr, "%s: the instruction table is not the one src/ptx/opcodes.h makes; "
                        "run ptx_doc_table and paste its output between the markers:\n%s", argv[1], want);
        return 1;
    }
    return 0;
}
