/* Every FABMEM_* environment variable the libraries, the daemon and the
 * tools read or set, written once: each is named here and only here (the
 * sources say FAB__ENV_SOCKET, never "FABMEM_SOCKET"), and docs/design.md's
 * "Environment" table names exactly these (tests: env.*). Which layer reads
 * each, and what it means, is that table's; the comment here is a reminder.
 * Build options (FABMEM_WERROR, ...) are CMake's, not the environment's. */
#ifndef FABMEM_BASE_ENV_H
#define FABMEM_BASE_ENV_H

#define FAB__ENV_SOCKET "FABMEM_SOCKET"                   /* the daemon's socket */
#define FAB__ENV_CONFIG "FABMEM_CONFIG"                   /* the topology's config file */
#define FAB__ENV_NODE "FABMEM_NODE"                       /* the node this process sits on */
#define FAB__ENV_LOG "FABMEM_LOG"                         /* error, warn, info, debug */
#define FAB__ENV_NO_AUTOSTART "FABMEM_NO_AUTOSTART"       /* 1: never start a daemon */
#define FAB__ENV_DAEMON "FABMEM_DAEMON"                   /* the fabmemd to autostart */
#define FAB__ENV_TIMEOUT_MS "FABMEM_TIMEOUT_MS"           /* the bound on a wait for the daemon */
#define FAB__ENV_KERNELS "FABMEM_KERNELS"                 /* CPU kernel libraries */
#define FAB__ENV_KERNEL_WATCH_MS "FABMEM_KERNEL_WATCH_MS" /* when a running kernel is logged */
#define FAB__ENV_PTX_PROFILE "FABMEM_PTX_PROFILE"         /* where PTX profiles are appended */
#define FAB__ENV_FAULTS "FABMEM_FAULTS"                   /* libcuda's per-call faults */
#define FAB__ENV_FAULTS_SEED "FABMEM_FAULTS_SEED"         /* the seed of their draws */
#define FAB__ENV_CHECK "FABMEM_CHECK"                     /* libcuda's lifetime checker */
#define FAB__ENV_CHECK_FILE "FABMEM_CHECK_FILE"           /* where the checker writes */
#define FAB__ENV_RUN_REPORT "FABMEM_RUN_REPORT"           /* fabmem run's closing report */

#endif /* FABMEM_BASE_ENV_H */
