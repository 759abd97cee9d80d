// Swift's Glibc module does not export <malloc.h>, so `mallopt` is reached through C.
#include "CMallocTuning.h"

#if defined(__GLIBC__)
#include <limits.h>
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
