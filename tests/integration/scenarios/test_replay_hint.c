/*
 * test_replay_hint.c - a user's own test program hands over to scn_main:
 * the command printed to replay a failure names that program (its argv[0],
 * quoted for the shell when it needs to be), not `scenario`, which knows
 * none of its controllers.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scn/run.h"

/* Run scn_main with argv, its stdout into a string (the caller frees). */
static char *main_output(int argc, char **argv, int *rc)
{
    char path[] = "/tmp/scn-hint-out-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    dup2(fd, STDOUT_FILENO);
    *rc = scn_main(argc, argv);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    off_t n = lseek(fd, 0, SEEK_END);
    char *buf = calloc(1, (size_t)n + 1);
    cr_assert_not_null(buf);
    cr_assert_eq(pread(fd, buf, (size_t)n, 0), n);
    close(fd);
    unlink(path);
    return buf;
}

Test(replay_hint, names_the_program_that_ran)
{
    char file[] = "/tmp/scn-hint-XXXXXX.yaml";
    int fd = mkstemps(file, 5);
    cr_assert_geq(fd, 0);
    const char *text = "name: fails\n"
                       "steps:\n"
                       "  - expect: {exists: {apiVersion: v1, kind: ConfigMap, namespace: default, "
                       "name: nope}}\n";
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);

    char prog1[] = "build/tests/my_scn", run[] = "run", seed_opt[] = "--seed", seven[] = "7",
         three[] = "3", prog2[] = "/opt/my tests/it's";
    char *argv1[] = {prog1, run, file, seed_opt, seven, NULL};
    int rc;
    char *out = main_output(5, argv1, &rc);
    cr_assert_eq(rc, 1, "%s", out);
    char want[512];
    snprintf(want, sizeof want,
             "  replay: build/tests/my_scn replay %s --seed 7 --trace trace.jsonl\n", file);
    cr_assert(strstr(out, want) != NULL, "wanted %s in:\n%s", want, out);
    free(out);

    /* a program path with a space and a quote is quoted for the shell */
    char *argv2[] = {prog2, run, file, seed_opt, three, NULL};
    out = main_output(5, argv2, &rc);
    cr_assert_eq(rc, 1);
    snprintf(want, sizeof want,
             "  replay: '/opt/my tests/it'\\''s' replay %s --seed 3 --trace trace.jsonl\n", file);
    cr_assert(strstr(out, want) != NULL, "wanted %s in:\n%s", want, out);
    free(out);
    unlink(file);
}
