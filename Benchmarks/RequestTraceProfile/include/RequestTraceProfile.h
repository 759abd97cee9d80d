#ifndef REQUEST_TRACE_PROFILE_H
#define REQUEST_TRACE_PROFILE_H

/// Whether the LLVM profile runtime is linked in (a build with --enable-code-coverage).
int request_trace_profile_available(void);
/// Zeroes every coverage counter.
void request_trace_profile_reset(void);
/// Writes the counters to `path` (a .profraw file), and names `at_exit` for the runtime's own
/// write at exit; returns 0 on success.
int request_trace_profile_write(const char *path, const char *at_exit);

#endif
