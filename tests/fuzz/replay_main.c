/*
 * replay_main.c - runs a libFuzzer target over committed seed corpora.
 *
 * The normal test run has no libFuzzer (gcc), so each fuzz target is also
 * linked with this main(): it calls LLVMFuzzerTestOneInput once with an
 * empty input, then once per regular file of each directory named on the
 * command line. A target signals a broken invariant by aborting, so a
 * non-zero exit (or a sanitizer report) fails the test. An empty or
 * unreadable corpus directory is an error too: a replay that ran nothing
 * would pass for the wrong reason.
 */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Seeds are small by design; anything bigger is a mistake in the corpus. */
#define REPLAY_MAX_FILE (1024 * 1024)

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    uint8_t *buf = malloc(REPLAY_MAX_FILE);
    if (!buf) {
        fclose(f);
        return -1;
    }
    size_t n = fread(buf, 1, REPLAY_MAX_FILE, f);
    int rc = 0;
    if (ferror(f) || !feof(f)) {
        fprintf(stderr, "%s: unreadable or larger than %d bytes\n", path, REPLAY_MAX_FILE);
        rc = -1;
    }
    fclose(f);
    if (rc == 0) {
        /* A buffer of exactly n bytes, so ASan sees reads past the input. */
        uint8_t *exact = malloc(n ? n : 1);
        if (!exact) {
            free(buf);
            return -1;
        }
        memcpy(exact, buf, n);
        LLVMFuzzerTestOneInput(exact, n);
        free(exact);
    }
    free(buf);
    return rc;
}

static int replay_dir(const char *dir, int *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        perror(dir);
        return -1;
    }
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        size_t len = strlen(dir) + 1 + strlen(de->d_name) + 1;
        char *path = malloc(len);
        if (!path) {
            rc = -1;
            break;
        }
        snprintf(path, len, "%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            if (replay_file(path) < 0)
                rc = -1;
            else
                (*count)++;
        }
        free(path);
    }
    closedir(d);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR...\n", argv[0]);
        return 2;
    }
    static const uint8_t empty[1];
    LLVMFuzzerTestOneInput(empty, 0);
    int count = 0, rc = 0;
    for (int i = 1; i < argc; i++)
        if (replay_dir(argv[i], &count) < 0)
            rc = 1;
    printf("replayed %d inputs\n", count);
    if (count == 0) {
        fprintf(stderr, "no inputs found\n");
        rc = 1;
    }
    return rc;
}
