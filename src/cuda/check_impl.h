/* The lifetime checker's types and shared state, for the files that keep
 * it: check.c (the records, the hooks, the start and end; its top comment
 * has the checker), checkreport.c (the output) and checkfault.c (the fault
 * handler). The other modules use check.h. */
#ifndef FAB_CUDA_CHECK_IMPL_H
#define FAB_CUDA_CHECK_IMPL_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fabmem/fabric.h"
#include "src/cuda/check.h"

#define FAB__CU_CHECK_FRAMES 24
#define FAB__CU_CHECK_PREFIX "========= fabmem-check: "

typedef struct fab__cu_check_rec {
    fab__cu_check_kind_t kind;
    uint64_t key;
    size_t size;
    int device;
    unsigned handle_types;
    uint64_t other; /* MAP: the allocation handle mapped */
    unsigned refs;  /* handle kinds: handle references; others 1 while live */
    unsigned exports;
    unsigned driver_exports; /* made by the driver itself (a multicast bind) */
    bool has_uuid; /* FABRIC exported: the daemon names it by uuid */
    fab_uuid_t uuid;
    uint64_t seq;   /* creation order, for the exit report */
    const char *made_by;
    const char *released_by; /* NULL while live */
    int nframes, rel_nframes;
    void *frames[FAB__CU_CHECK_FRAMES];
    void *rel_frames[FAB__CU_CHECK_FRAMES];
    struct fab__cu_check_rec *next;                 /* in its bucket */
    struct fab__cu_check_rec *dead_prev, *dead_next; /* in the released list */
} fab__cu_check_rec_t;

/* A finding: what, where it was found (call and stack; at exit none), and
 * the object it concerns (NULL for none). */
typedef struct fab__cu_check_finding {
    const char *id;
    char message[512];
    const char *call;
    bool has_address;
    uintptr_t address;
    long long offset; /* in the object; -1 for none */
    const char *access;
    void **frames;
    int nframes;
    const fab__cu_check_rec_t *rec;
    bool in_signal; /* from the fault handler: nothing that allocates */
} fab__cu_check_finding_t;

/* check.c's: the mutex that guards the records and the output, the
 * FABMEM_CHECK_FILE descriptor (-1: none), the probe pipe, the handlers that
 * were there before the fault handler, and each kind's name. */
extern pthread_mutex_t fab__cu_check_mutex;
extern int fab__cu_check_fd;
extern int fab__cu_check_probe[2];
extern struct sigaction fab__cu_check_old_segv, fab__cu_check_old_bus;
extern const char *const fab__cu_check_kind_names[FAB__CU_CHECK_KINDS];

/* The functions one of the three files has and another calls (the caller
 * holds fab__cu_check_mutex where the function's comment says so). */
/* check.c */
bool fab__cu_check_is_handle(fab__cu_check_kind_t kind);
int fab__cu_check_capture(void **frames);
fab__cu_check_rec_t *fab__cu_check_holding(uintptr_t addr, bool live);
/* checkreport.c */
void fab__cu_check_emit(const fab__cu_check_finding_t *f);
void fab__cu_check_summary(void);
/* checkfault.c */
void fab__cu_check_on_fault(int sig, siginfo_t *info, void *uc);

#endif
