/* FAB__HOT marks a function that every import runs through: the client's
 * import, map, unmap and release, and what they call; fabmemd's loop, its
 * IMPORT and release handlers, and what they call. GCC places such
 * functions together in .text.hot, so an import's code spans fewer pages:
 * with many importers taking turns on a core each import finds its code's
 * cache lines and TLB entries cold, and each page more is a miss more.
 * Header-only and below every layer. */
#ifndef FABMEM_BASE_HOT_H
#define FABMEM_BASE_HOT_H

#if defined(__GNUC__) || defined(__clang__)
#define FAB__HOT __attribute__((hot))
#else
#define FAB__HOT
#endif

#endif
