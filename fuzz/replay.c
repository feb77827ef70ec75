/* Replays a fuzz corpus through a fuzz target without libFuzzer, so that every
 * input the fuzzer ever kept is checked by the ordinary test run (and under
 * the sanitizers and valgrind with it). Arguments are files or directories. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 4096;
            uint8_t *grown = realloc(buf, cap);
            if (!grown) {
                free(buf);
                fclose(f);
                return -1;
            }
            buf = grown;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        if (n == 0)
            break;
        len += n;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

static int replay_path(const char *path, size_t *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        (*count)++;
        return replay_file(path);
    }
    struct dirent **entries;
    int n = scandir(path, &entries, NULL, alphasort);
    if (n < 0) {
        perror(path);
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        if (entries[i]->d_name[0] != '.' && rc == 0) {
            char child[4096];
            snprintf(child, sizeof(child), "%s/%s", path, entries[i]->d_name);
            rc = replay_path(child, count);
        }
        free(entries[i]);
    }
    free(entries);
    return rc;
}

int main(int argc, char **argv)
{
    size_t count = 0;
    for (int i = 1; i < argc; i++) {
        if (replay_path(argv[i], &count) != 0)
            return 1;
    }
    if (count == 0) {
        fprintf(stderr, "replay: no corpus inputs found\n");
        return 1;
    }
    printf("replayed %zu inputs\n", count);
    return 0;
}
