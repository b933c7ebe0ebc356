/* Facts about this build, fixed when CMake configured it (see CMakeLists.txt),
 * so benchmark output can say exactly what produced it. */
#include "cli.h"

#ifndef RK_GIT_DESCRIBE
#define RK_GIT_DESCRIBE "unknown"
#endif
#ifndef RK_BUILD_TYPE
#define RK_BUILD_TYPE "unknown"
#endif
#ifndef RK_SANITIZERS
#define RK_SANITIZERS ""
#endif

const char *cli_git_describe(void) { return RK_GIT_DESCRIBE[0] ? RK_GIT_DESCRIBE : "unknown"; }
const char *cli_build_type(void) { return RK_BUILD_TYPE[0] ? RK_BUILD_TYPE : "unknown"; }
const char *cli_sanitizers(void) { return RK_SANITIZERS; }

const char *cli_compiler(void) {
#if defined(__clang__)
    return "clang " __clang_version__;
#elif defined(__GNUC__)
    return "gcc " __VERSION__;
#else
    return "unknown";
#endif
}
