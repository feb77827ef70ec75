/* The test support itself: a helper re-run from the test binary gets its
 * arguments and the extra environment (overriding the inherited value), and
 * talks to the parent over the socketpair. */
#include "fabtest.h"
#include <stdlib.h>
#include <string.h>
static int echo_helper(int argc, char **argv, int sock) {
    if (argc != 2) return 3;
    const char *v = getenv("FOO");
    if (!v || strcmp(v, "bar") != 0) return 4;
    if (fab_test_send_word(sock, argv[1]) != 0) return 5;
    return fab_test_expect_word(sock, "bye") == 0 ? 0 : 6;
}
static void spawn_helper_gets_args_env_and_socket(void **state) {
    (void)state;
    setenv("FOO", "old", 1);
    const char *args[] = {"hello", NULL};
    const char *env[] = {"FOO=bar", NULL};
    fab_test_child_t c;
    assert_int_equal(fab_test_spawn("echo", args, env, &c), 0);
    assert_int_equal(fab_test_expect_word(c.sock, "hello"), 0);
    assert_int_equal(fab_test_send_word(c.sock, "bye"), 0);
    assert_int_equal(fab_test_reap(&c), 0);
}
static const struct CMUnitTest tests[] = { cmocka_unit_test(spawn_helper_gets_args_env_and_socket) };
static const fab_test_helper_t helpers[] = { {"echo", echo_helper} };
FAB_TEST_MAIN("spawn", tests, helpers)
