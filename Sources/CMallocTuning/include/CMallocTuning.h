#ifndef C_MALLOC_TUNING_H
#define C_MALLOC_TUNING_H

#include <stddef.h>

/// Has glibc serve every allocation of `bytes` or more with its own mapping, returned to the
/// system as soon as it is freed, and stop raising that threshold as large blocks are freed.
/// Returns 1 when set, 0 where the C library is not glibc (nothing to do) or refused it.
int relay_malloc_map_blocks_from(size_t bytes);

#endif
