// The seccomp program of each SeccompOptions variant as compiled at build time by
// build_seccomp_program itself (seccomp_precompile.cpp), so no process pays libseccomp's
// compilation. Empty where the build could not compile one (a cross build): callers then
// compile at run time.
#pragma once

#include <optional>

#include "sandbox/linux/seccomp_filter.hpp"

namespace paddock::sandbox {

std::optional<SeccompProgram> precompiled_seccomp_program(const SeccompOptions& options);

}  // namespace paddock::sandbox
