// A plan's steps as bytes, for comparing plans (SandboxPlan::fingerprint) and views
// (mount_template.cpp). The one home of this.
#pragma once

#include <cstring>
#include <string>
#include <type_traits>

#include "sandbox/linux/path_identity.hpp"

namespace paddock::sandbox {

// Appends plain values and strings unambiguously (strings with their length).
class Bytes {
 public:
  template <typename T>
  Bytes& operator<<(const T& v) {
    static_assert(std::is_trivially_copyable_v<T> && !std::is_pointer_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
    return *this;
  }
  Bytes& str(const char* s) {
    const std::size_t n = s == nullptr ? ~std::size_t{0} : std::strlen(s);
    *this << n;
    if (s != nullptr) out_.append(s, n);
    return *this;
  }
  Bytes& id(const PathIdentity& p) { return *this << p.dev << p.ino; }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

}  // namespace paddock::sandbox
