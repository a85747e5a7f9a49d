#include "sandbox/linux/seccomp_filter.hpp"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "paddock/errors.hpp"

namespace paddock::sandbox {
namespace {

// How a rule looks at its argument. Every comparison is a masked one on the low 32 bits where
// the kernel reads an int (socket family, ioctl cmd, personality, clone flags): a plain 64-bit
// compare would let garbage in the high half slip past while the kernel ignores it.
enum class Match {
  always,       // every call
  flag,         // (arg & value) == value: the flag bit is set
  equals32,     // (arg & 0xffffffff) == value
  sock_type,    // (arg & 0xf) == value: the socket type without SOCK_NONBLOCK/SOCK_CLOEXEC
  not_persona,  // low 32 bits are neither PER_LINUX (0) nor the query value 0xffffffff
};

struct Rule {
  const char* syscall;
  int error;
  Match match = Match::always;
  unsigned arg = 0;
  std::uint64_t value = 0;
  bool unix_socket = false;  // waived by SeccompOptions::allow_unix_sockets
};

// s390 passes clone's (newsp, flags) backwards; everywhere else the flags come first.
#if defined(__s390__) || defined(__s390x__)
constexpr unsigned kCloneFlags = 1;
#else
constexpr unsigned kCloneFlags = 0;
#endif

constexpr Rule kRules[] = {
    // New namespaces: a user namespace hands out every capability inside it, and with them the
    // kernel's least-hardened code; new mount/net namespaces could rebuild what the sandbox
    // took away. clone is judged by its flags (a plain fork or thread must work). CLONE_NEWTIME
    // sits in clone()'s exit-signal byte, where no valid signal sets it: denying it costs
    // nothing and keeps the list complete.
    {"unshare", EPERM},
    {"setns", EPERM},
    {"clone", EPERM, Match::flag, kCloneFlags, CLONE_NEWUSER},
    {"clone", EPERM, Match::flag, kCloneFlags, CLONE_NEWNS},
    {"clone", EPERM, Match::flag, kCloneFlags, CLONE_NEWPID},
    {"clone", EPERM, Match::flag, kCloneFlags, CLONE_NEWNET},
    {"clone", EPERM, Match::flag, kCloneFlags, CLONE_NEWIPC},
    {"clone", EPERM, Match::flag, kCloneFlags, CLONE_NEWUTS},
    {"clone", EPERM, Match::flag, kCloneFlags, CLONE_NEWCGROUP},
    {"clone", EPERM, Match::flag, kCloneFlags, CLONE_NEWTIME},
    // clone3 passes its flags in memory, which seccomp cannot read. ENOSYS (not EPERM) makes
    // glibc fall back to clone, whose flags we can check; Docker does the same.
    {"clone3", ENOSYS},

    // The mount family: a remount, pivot or chroot would undo the filesystem view we built.
    {"mount", EPERM},
    {"umount2", EPERM},
    {"pivot_root", EPERM},
    {"chroot", EPERM},
    {"move_mount", EPERM},
    {"open_tree", EPERM},
    {"fsopen", EPERM},
    {"fsconfig", EPERM},
    {"fsmount", EPERM},
    {"fspick", EPERM},
    {"mount_setattr", EPERM},

    // Reaching into other processes (memory, fds, syscalls) crosses the boundary between the
    // command and whatever else runs as the same user.
    {"ptrace", EPERM},
    {"process_vm_readv", EPERM},
    {"process_vm_writev", EPERM},
    {"pidfd_getfd", EPERM},
    {"kcmp", EPERM},

    // Kernel facilities that are not namespaced or are favourite exploit primitives: keyrings
    // are shared per user, bpf/perf/userfaultfd are big attack surface, fanotify watches the
    // host's mounts, and file handles open files outside our mount view (the "Shocker" escape).
    {"keyctl", EPERM},
    {"add_key", EPERM},
    {"request_key", EPERM},
    {"bpf", EPERM},
    {"perf_event_open", EPERM},
    {"userfaultfd", EPERM},
    {"fanotify_init", EPERM},
    {"open_by_handle_at", EPERM},
    {"name_to_handle_at", EPERM},

    // io_uring performs operations (socket creation included) without the syscalls this filter
    // inspects.
    {"io_uring_setup", EPERM},
    {"io_uring_enter", EPERM},
    {"io_uring_register", EPERM},

    // Host administration: never legitimate in a sandbox, even with a capability regained.
    {"kexec_load", EPERM},
    {"kexec_file_load", EPERM},
    {"init_module", EPERM},
    {"finit_module", EPERM},
    {"delete_module", EPERM},
    {"reboot", EPERM},
    {"swapon", EPERM},
    {"swapoff", EPERM},
    {"acct", EPERM},
    {"syslog", EPERM},
    {"quotactl", EPERM},
    {"quotactl_fd", EPERM},
    {"iopl", EPERM},
    {"ioperm", EPERM},

    // Persona flags weaken the process (ADDR_NO_RANDOMIZE turns ASLR off, READ_IMPLIES_EXEC
    // makes data executable). Only PER_LINUX and the query survive.
    {"personality", EPERM, Match::not_persona},

    // Sockets that leave the network namespace: unix sockets reach host daemons by path (the
    // policy may allow them), vsock reaches the hypervisor. Stream and seqpacket socketpairs
    // stay (connected, no address; Python's multiprocessing needs them), but a datagram one
    // can sendto() any socket path (/dev/log, /run/systemd/notify). socketpair exists only for
    // AF_UNIX, so its type alone decides. Netlink stays: iproute-style tools need it and the
    // netns confines it.
    {"socket", EPERM, Match::equals32, 0, AF_UNIX, /*unix_socket=*/true},
    {"socketpair", EPERM, Match::sock_type, 1, SOCK_DGRAM, /*unix_socket=*/true},
    {"socket", EPERM, Match::equals32, 0, AF_VSOCK},

    // Terminal injection: TIOCSTI pushes keystrokes into the terminal, to be run by the user's
    // shell after we exit; TIOCLINUX can do the same on a virtual console.
    {"ioctl", EPERM, Match::equals32, 1, TIOCSTI},
    {"ioctl", EPERM, Match::equals32, 1, TIOCLINUX},
};

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
  auto add = [&](std::uint64_t mask, std::uint64_t value) {
    scmp_arg_cmp cmp{rule.arg, SCMP_CMP_MASKED_EQ, mask, value};
    check(seccomp_rule_add_array(ctx, action, nr, 1, &cmp), "seccomp_rule_add", rule.syscall);
  };
  switch (rule.match) {
    case Match::always:
      check(seccomp_rule_add_array(ctx, action, nr, 0, nullptr), "seccomp_rule_add", rule.syscall);
      break;
    case Match::flag:
      add(rule.value, rule.value);
      break;
    case Match::equals32:
      add(kLow32, rule.value);
      break;
    case Match::sock_type:
      add(0xf, rule.value);
      break;
    case Match::not_persona:
      // libseccomp 2.5 allows one comparison per argument per rule, so "!= 0 && != ~0" is
      // spelled as an OR of masked compares: a 32-bit value that is neither all zeros nor all
      // ones has some bit i set with bit (i+1) mod 32 clear, and no other value has.
      for (unsigned i = 0; i < 32; ++i) {
        add((std::uint64_t{1} << i) | (std::uint64_t{1} << ((i + 1) % 32)), std::uint64_t{1} << i);
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
    // Negative: unknown to libseccomp or absent on this arch (iopl on arm64); nothing to deny.
    int nr = seccomp_syscall_resolve_name(rule.syscall);
    if (nr < 0) continue;
    add_rule(ctx.get(), nr, rule);
  }

  std::vector<sock_filter> code = export_bpf(ctx.get());
  if (code.size() > BPF_MAXINSNS) fail("seccomp_export_bpf (program too long)", E2BIG);
  return SeccompProgram(std::move(code));
}

}  // namespace paddock::sandbox
