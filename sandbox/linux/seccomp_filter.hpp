// The seccomp layer of the Linux sandbox: a deny-list filter (default allow) compiled once per
// policy in the parent with libseccomp, handed to the child as plain classic BPF. The child
// installs it last, right before execve, after PR_SET_NO_NEW_PRIVS and after dropping all
// capabilities, with a raw seccomp() syscall: no allocation, async-signal-safe. The rules and
// the attack each one stops are in seccomp_rules.hpp; where an allow-list is meant (socketpair
// types) it is spelled as the rules that deny everything outside it.
//
// Denied calls fail with EPERM (clone3 and openat2 with ENOSYS: their arguments are in memory
// the filter cannot read, and libcs fall back to clone and openat, which it can inspect). Syscalls
// of a foreign ABI (i386 int 0x80 or x32 on x86_64) kill the process: the filter only speaks the
// native one.
#pragma once

#include <linux/filter.h>

#include <cstddef>
#include <vector>

namespace paddock::sandbox {

struct SeccompOptions {
  bool allow_unix_sockets = false;  // true: socket(AF_UNIX, ...) permitted
};

// A compiled classic-BPF program, ready for seccomp(SECCOMP_SET_MODE_FILTER, 0, fprog()).
class SeccompProgram {
 public:
  explicit SeccompProgram(std::vector<sock_filter> code);
  SeccompProgram(const SeccompProgram& other);
  SeccompProgram(SeccompProgram&& other) noexcept;
  SeccompProgram& operator=(const SeccompProgram& other);
  SeccompProgram& operator=(SeccompProgram&& other) noexcept;
  ~SeccompProgram() = default;

  // Points into this object; valid while it lives (and is not assigned to).
  const sock_fprog* fprog() const noexcept { return &fprog_; }
  std::size_t instructions() const noexcept { return code_.size(); }

 private:
  void point() noexcept;

  std::vector<sock_filter> code_;
  sock_fprog fprog_{};
};

// Built once per policy in the parent (not per command). Throws paddock::Error
// (errc::dependency_missing) naming the libseccomp call that failed.
SeccompProgram build_seccomp_program(const SeccompOptions& options);

}  // namespace paddock::sandbox
