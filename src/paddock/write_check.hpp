// Manager::check_write's answer (the write guard for an agent's own file tools).
#pragma once

#include <string>

namespace paddock {

struct WriteCheck {
  bool allowed = false;
  std::string path;    // the canonical path the write would reach (symlinks resolved)
  std::string reason;  // why, naming the rule or writable root that decided
};

}  // namespace paddock
