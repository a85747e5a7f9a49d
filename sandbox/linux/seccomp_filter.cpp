#include "sandbox/linux/seccomp_filter.hpp"

#include <errno.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <string>
#include <utility>

#include "paddock/errors.hpp"
#include "sandbox/linux/seccomp_rules.hpp"

namespace paddock::sandbox {
namespace {

using seccomp_rules::kRules;
using seccomp_rules::Match;
using seccomp_rules::Rule;

constexpr std::uint64_t kLow32 = 0xffffffffu;

struct ContextRelease {
  void operator()(void* ctx) const noexcept { seccomp_release(ctx); }
};
using Context = std::unique_ptr<void, ContextRelease>;

[[noreturn]] void fail(const std::string& call, int rc) {
  throw Error(errc::dependency_missing,
              "libseccomp: " + call + " failed: " + std::strerror(rc < 0 ? -rc : rc));
}

void check(int rc, const char* call, const char* syscall = nullptr) {
  if (rc == 0) return;
  fail(syscall == nullptr ? std::string(call) : std::string(call) + "(" + syscall + ")", rc);
}

void add_rule(scmp_filter_ctx ctx, int nr, const Rule& rule) {
  const std::uint32_t action = SCMP_ACT_ERRNO(static_cast<std::uint32_t>(rule.error));
  auto add = [&](std::initializer_list<scmp_arg_cmp> cmps) {
    check(seccomp_rule_add_array(ctx, action, nr, static_cast<unsigned>(cmps.size()),
                                 cmps.size() == 0 ? nullptr : std::data(cmps)),
          "seccomp_rule_add", rule.syscall);
  };
  auto masked = [](unsigned arg, std::uint64_t mask, std::uint64_t value) {
    return scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, mask, value};
  };
  // One rule per set bit: libseccomp 2.5 allows one comparison per argument per rule, so
  // "some bit of value is set" is an OR of rules.
  auto for_each_bit = [](std::uint64_t value, auto fn) {
    for (unsigned i = 0; i < 64; ++i) {
      if (value & (std::uint64_t{1} << i)) fn(std::uint64_t{1} << i);
    }
  };
  switch (rule.match) {
    case Match::always:
      add({});
      break;
    case Match::flag:
      add({masked(rule.arg, rule.value, rule.value)});
      break;
    case Match::equals32:
      add({masked(rule.arg, kLow32, rule.value)});
      break;
    case Match::not_equals:
      add({scmp_arg_cmp{rule.arg, SCMP_CMP_NE, rule.value, 0}});
      break;
    case Match::above:
      add({scmp_arg_cmp{rule.arg, SCMP_CMP_GT, rule.value, 0}});
      break;
    case Match::any_bit:
      for_each_bit(rule.value, [&](std::uint64_t bit) { add({masked(rule.arg, bit, bit)}); });
      break;
    case Match::clear:
      add({masked(rule.arg, rule.value, 0)});
      break;
    case Match::created_with:
      for_each_bit(rule.value2, [&](std::uint64_t bit) {
        add({masked(rule.arg, rule.value, rule.value), masked(rule.arg2, bit, bit)});
      });
      break;
    case Match::not_persona:
      // "!= 0 && != ~0" as an OR of masked compares: a 32-bit value that is neither all zeros
      // nor all ones has some bit i set with bit (i+1) mod 32 clear, and no other value has.
      for (unsigned i = 0; i < 32; ++i) {
        const std::uint64_t bit = std::uint64_t{1} << i;
        add({masked(rule.arg, bit | (std::uint64_t{1} << ((i + 1) % 32)), bit)});
      }
      break;
  }
}

// seccomp_export_bpf_mem only arrived in libseccomp 2.6: export into a memfd and read it back.
std::vector<sock_filter> export_bpf(scmp_filter_ctx ctx) {
  int fd = ::memfd_create("paddock-seccomp", MFD_CLOEXEC);
  if (fd < 0) fail("memfd_create for seccomp_export_bpf", errno);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};

  check(seccomp_export_bpf(ctx, fd), "seccomp_export_bpf");
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail("fstat after seccomp_export_bpf", errno);
  const auto bytes = static_cast<std::size_t>(st.st_size);
  if (bytes == 0 || bytes % sizeof(sock_filter) != 0) fail("seccomp_export_bpf (size)", EINVAL);

  std::vector<sock_filter> code(bytes / sizeof(sock_filter));
  auto* out = reinterpret_cast<char*>(code.data());
  for (std::size_t done = 0; done < bytes;) {
    ssize_t n = ::pread(fd, out + done, bytes - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("read back of seccomp_export_bpf", n < 0 ? errno : EIO);
    done += static_cast<std::size_t>(n);
  }
  return code;
}

}  // namespace

SeccompProgram::SeccompProgram(std::vector<sock_filter> code) : code_(std::move(code)) { point(); }

SeccompProgram::SeccompProgram(const SeccompProgram& other) : code_(other.code_) { point(); }

SeccompProgram::SeccompProgram(SeccompProgram&& other) noexcept : code_(std::move(other.code_)) {
  point();
  other.point();
}

SeccompProgram& SeccompProgram::operator=(const SeccompProgram& other) {
  code_ = other.code_;
  point();
  return *this;
}

SeccompProgram& SeccompProgram::operator=(SeccompProgram&& other) noexcept {
  code_ = std::move(other.code_);
  point();
  other.point();
  return *this;
}

void SeccompProgram::point() noexcept {
  fprog_.len = static_cast<unsigned short>(code_.size());
  fprog_.filter = code_.data();
}

SeccompProgram build_seccomp_program(const SeccompOptions& options) {
  Context ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) fail("seccomp_init", ENOMEM);
  // Only the native ABI is in the filter, so any other one (i386 int 0x80 on x86_64) hits the
  // bad-arch action. libseccomp's x86_64 filter also sends x32 calls (nr | 0x40000000) there
  // as long as the x32 arch is not added; the tests check both.
  check(seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS),
        "seccomp_attr_set(ACT_BADARCH)");
  // A binary tree on the syscall number instead of a linear list: the argument-checked calls
  // (ioctl, socket, clone) escape the kernel's always-allow cache, run the filter every time and
  // would otherwise first walk past every denied syscall. Costs 13 more instructions.
  check(seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2), "seccomp_attr_set(CTL_OPTIMIZE)");

  for (const Rule& rule : kRules) {
    if (rule.unix_socket && options.allow_unix_sockets) continue;
    // Negative: absent on this arch (iopl on arm64, vm86 on x86_64; libseccomp answers with a
    // pseudo number) or unknown to this libseccomp (__NR_SCMP_ERROR), where a number we know
    // stands in. Nothing to deny for the former.
    int nr = seccomp_syscall_resolve_name(rule.syscall);
    if (nr == __NR_SCMP_ERROR) nr = rule.number_if_unknown;
    if (nr < 0) continue;
    add_rule(ctx.get(), nr, rule);
  }

  std::vector<sock_filter> code = export_bpf(ctx.get());
  if (code.size() > BPF_MAXINSNS) fail("seccomp_export_bpf (program too long)", E2BIG);
  return SeccompProgram(std::move(code));
}

}  // namespace paddock::sandbox
