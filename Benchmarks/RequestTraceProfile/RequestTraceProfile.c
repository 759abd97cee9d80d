// The LLVM profile runtime's own entry points, declared weak: a build without coverage links
// (they are then null) and request-trace says how to build it instead of failing to link.
#include "RequestTraceProfile.h"
#include <stddef.h>

extern void __llvm_profile_reset_counters(void) __attribute__((weak));
extern void __llvm_profile_set_filename(const char *) __attribute__((weak));
extern int __llvm_profile_write_file(void) __attribute__((weak));

int request_trace_profile_available(void) {
    return __llvm_profile_reset_counters != NULL && __llvm_profile_set_filename != NULL && __llvm_profile_write_file != NULL;
}

void request_trace_profile_reset(void) {
    if (__llvm_profile_reset_counters) __llvm_profile_reset_counters();
}

int request_trace_profile_write(const char *path, const char *at_exit) {
    if (!request_trace_profile_available()) return -1;
    __llvm_profile_set_filename(path);
    int result = __llvm_profile_write_file();
    // The runtime writes once more at exit: elsewhere, so the shutdown is not counted.
    __llvm_profile_set_filename(at_exit);
    return result;
}
