// Swift's Glibc module does not export <malloc.h>, so `mallopt` is reached through C.
#include "CMallocTuning.h"

// A C library header first: glibc's defines `__GLIBC__` (through <features.h>), which the
// compiler's own headers, such as <stddef.h>, do not.
#include <limits.h>

#if defined(__GLIBC__)
#include <malloc.h>

int relay_malloc_map_blocks_from(size_t bytes) {
    if (bytes > INT_MAX) return 0;
    return mallopt(M_MMAP_THRESHOLD, (int)bytes) == 1 ? 1 : 0;
}
#else
int relay_malloc_map_blocks_from(size_t bytes) {
    (void)bytes;
    return 0;
}
#endif
