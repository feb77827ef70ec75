/* The one-word reader-writer lock that guards libcuda's state and, taken
 * for writing only, each fabric client's (src/base/rwlock.h), tested
 * directly from its header: writers exclude
 * readers and each other under contention, readers share it, and a writer
 * that finds readers sleeps until the last one leaves. Built twice: as is
 * (cuda.rwlock_*), and with ThreadSanitizer where the compiler has it
 * (cuda.tsan.rwlock_*), which reports any access to the data the lock
 * guards that the lock does not order. Like test_cuda_containers.c, this
 * one includes project headers, as it must. */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>

#include "src/base/rwlock.h"

#include "fabtest.h"

#define RW_THREADS 4
#define RW_ROUNDS 20000

static fab__rwlock_t rw = FAB__RWLOCK_INITIALIZER;
static volatile uint64_t rw_a, rw_b; /* equal whenever no writer holds rw */
static _Atomic int rw_torn, rw_readers_in;

static void *rw_churn(void *arg)
{
    uintptr_t me = (uintptr_t)arg;
    for (int i = 0; i < RW_ROUNDS; i++) {
        if ((i + me) % 3 == 0) {
            fab__rw_wrlock(&rw);
            rw_a = rw_a + 1;
            sched_yield(); /* let others find it held */
            rw_b = rw_b + 1;
            fab__rw_unlock(&rw);
        } else {
            fab__rw_rdlock(&rw);
            if (rw_a != rw_b)
                rw_torn = 1;
            fab__rw_unlock(&rw);
        }
    }
    return NULL;
}

/* Writers exclude readers and one another: no reader sees a half-done
 * write, and no write is lost, with threads contending (and sleeping on
 * the word) throughout. */
static void rwlock_writers_exclude_readers_and_each_other(void **state)
{
    (void)state;
    pthread_t t[RW_THREADS];
    rw_a = rw_b = 0;
    for (uintptr_t i = 0; i < RW_THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, rw_churn, (void *)i), 0);
    for (int i = 0; i < RW_THREADS; i++)
        pthread_join(t[i], NULL);
    uint64_t writes = 0;
    for (int me = 0; me < RW_THREADS; me++)
        for (int i = 0; i < RW_ROUNDS; i++)
            writes += (i + me) % 3 == 0;
    assert_int_equal(rw_torn, 0);
    assert_int_equal(rw_a, writes);
    assert_int_equal(rw_b, writes);
    assert_int_equal(atomic_load(&rw.word), 0);
}

static void *rw_hold_read(void *arg)
{
    _Atomic int *release = arg;
    fab__rw_rdlock(&rw);
    atomic_fetch_add(&rw_readers_in, 1);
    while (!atomic_load(release))
        sched_yield();
    fab__rw_unlock(&rw);
    return NULL;
}

/* Readers share it: a second reader gets in while the first holds it. */
static void rwlock_readers_hold_it_together(void **state)
{
    (void)state;
    _Atomic int release = 0;
    pthread_t t;
    rw_readers_in = 0;
    assert_int_equal(pthread_create(&t, NULL, rw_hold_read, &release), 0);
    while (atomic_load(&rw_readers_in) == 0)
        sched_yield();
    fab__rw_rdlock(&rw); /* would wait forever if readers excluded readers */
    assert_int_equal(atomic_load(&rw.word) & FAB__RW_WRITER, 2);
    fab__rw_unlock(&rw);
    atomic_store(&release, 1);
    pthread_join(t, NULL);
    assert_int_equal(atomic_load(&rw.word), 0);
}

static _Atomic int rw_writer_done;

static void *rw_write_once(void *arg)
{
    (void)arg;
    fab__rw_wrlock(&rw);
    atomic_store(&rw_writer_done, 1);
    fab__rw_unlock(&rw);
    return NULL;
}

/* A writer that finds readers sleeps on the word (it says so with the
 * waiting bit) and gets the lock once the last reader leaves; meanwhile a
 * reader may take it again (as glibc's default lock allows: a thread that
 * holds it for reading never waits for a waiting writer). */
static void rwlock_writer_sleeps_until_the_last_reader_leaves(void **state)
{
    (void)state;
    pthread_t t;
    rw_writer_done = 0;
    fab__rw_rdlock(&rw);
    assert_int_equal(pthread_create(&t, NULL, rw_write_once, NULL), 0);
    while ((atomic_load(&rw.word) & FAB__RW_WAITING) == 0)
        sched_yield(); /* the writer is on its way to sleep */
    fab__rw_rdlock(&rw); /* again, with the writer waiting */
    assert_int_equal(atomic_load(&rw.word), FAB__RW_WAITING | 2);
    fab__rw_unlock(&rw);
    assert_int_equal(atomic_load(&rw_writer_done), 0);
    fab__rw_unlock(&rw); /* the last reader: wakes the writer */
    pthread_join(t, NULL);
    assert_int_equal(atomic_load(&rw_writer_done), 1);
    assert_int_equal(atomic_load(&rw.word), 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(rwlock_writers_exclude_readers_and_each_other),
    cmocka_unit_test(rwlock_readers_hold_it_together),
    cmocka_unit_test(rwlock_writer_sleeps_until_the_last_reader_leaves),
};

FAB_TEST_MAIN_NO_HELPERS("cuda", tests)
