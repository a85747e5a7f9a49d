// What the seccomp filter denies and why: the table seccomp_filter.cpp compiles. Internal to
// sandbox/linux (seccomp_filter.cpp is its only includer).
//
// The filter is a deny-list (default allow); where an allow-list is what we mean ("socketpair,
// but only these types"), it is spelled as the rules that deny every value outside the list.
// Every comparison is masked or covers all 64 bits of the register: the kernel reads an int
// (or a umode_t) and ignores the high half, so a compare that only matches one exact 64-bit
// value would let garbage up there slip past.
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <bit>
#include <cstdint>

namespace paddock::sandbox::seccomp_rules {

enum class Match {
  always,        // every call
  flag,          // (arg & value) == value: the flag bit is set
  equals32,      // (arg & 0xffffffff) == value
  not_equals,    // arg != value over all 64 bits (garbage in the high half is denied too)
  above,         // arg > value, unsigned over all 64 bits
  any_bit,       // one rule per bit of value: (arg & bit) == bit, i.e. (arg & value) != 0
  clear,         // (arg & value) == 0: the bit is missing
  created_with,  // (arg & value) == value && (arg2 & bit) == bit for each bit of value2:
                 // a file created (O_CREAT or O_TMPFILE in flags) with one of these mode bits
  not_persona,   // low 32 bits are neither PER_LINUX (0) nor the query value 0xffffffff
};

struct Rule {
  const char* syscall;
  int error;
  Match match = Match::always;
  unsigned arg = 0;
  std::uint64_t value = 0;
  bool unix_socket = false;  // waived by SeccompOptions::allow_unix_sockets
  unsigned arg2 = 0;         // created_with: the mode argument
  std::uint64_t value2 = 0;  // created_with: the mode bits refused
  // Used when libseccomp does not know the name (its releases lag the kernel's table).
  // Syscalls added since Linux 5.1 have one number on every architecture but alpha, ia64 and
  // mips; -1: no fallback.
  int number_if_unknown = -1;
};

// s390 passes clone's (newsp, flags) backwards; everywhere else the flags come first.
#if defined(__s390__) || defined(__s390x__)
constexpr unsigned kCloneFlags = 1;
#else
constexpr unsigned kCloneFlags = 0;
#endif

#if defined(__x86_64__) || defined(__aarch64__)
constexpr int kNrFchmodat2 = 452;
constexpr int kNrOpenTreeAttr = 467;
#else
constexpr int kNrFchmodat2 = -1;
constexpr int kNrOpenTreeAttr = -1;
#endif

// The setuid and setgid bits; the kernel reads modes as a 16-bit umode_t, so these low bits
// cannot be hidden by garbage higher up.
constexpr std::uint64_t kSetId = S_ISUID | S_ISGID;
// The kernel uses the mode argument when flags have O_CREAT or the __O_TMPFILE bit (glibc's
// O_TMPFILE also carries O_DIRECTORY, which is no sign of a creation by itself).
constexpr std::uint64_t kTmpfileBit = O_TMPFILE & ~O_DIRECTORY;

// socketpair's type: SOCK_STREAM or SOCK_SEQPACKET, each with or without SOCK_NONBLOCK and
// SOCK_CLOEXEC, and nothing else. In bits: bit 0 set, bits 1 and 3 clear (types 1 and 5 differ
// only in bit 2), no bit outside the type nibble and the two flags, nothing above the largest
// allowed value (which also catches the high half of the register).
constexpr std::uint64_t kPairTypeMax = SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC;
constexpr std::uint64_t kPairTypeForbiddenBits =
    ((std::bit_floor(kPairTypeMax) << 1) - 1) & ~std::uint64_t{0xf | SOCK_NONBLOCK | SOCK_CLOEXEC};
static_assert(SOCK_STREAM == 1 && SOCK_SEQPACKET == 5, "the type bits below assume these");

inline constexpr Rule kRules[] = {
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
    // open_tree_attr (6.15) is open_tree with mount attributes.
    {"mount", EPERM},
    {"umount", EPERM},
    {"umount2", EPERM},
    {"pivot_root", EPERM},
    {"chroot", EPERM},
    {"move_mount", EPERM},
    {"open_tree", EPERM},
    {"open_tree_attr", EPERM, Match::always, 0, 0, false, 0, 0, kNrOpenTreeAttr},
    {"fsopen", EPERM},
    {"fsconfig", EPERM},
    {"fsmount", EPERM},
    {"fspick", EPERM},
    {"mount_setattr", EPERM},

    // Reaching into other processes (memory, fds, syscalls) crosses the boundary between the
    // command and whatever else runs as the same user. migrate_pages and move_pages move
    // another process's memory between NUMA nodes (Docker requires CAP_SYS_NICE); the
    // process's own policy calls (mbind, set_mempolicy) stay, JVMs and libnuma use them.
    {"ptrace", EPERM},
    {"process_vm_readv", EPERM},
    {"process_vm_writev", EPERM},
    {"process_madvise", EPERM},
    {"pidfd_getfd", EPERM},
    {"kcmp", EPERM},
    {"migrate_pages", EPERM},
    {"move_pages", EPERM},

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

    // What Docker's default profile also refuses: old or obscure entry points no program in a
    // sandbox needs, with a history of kernel bugs. modify_ldt: 16-bit segments for Wine and
    // DOSEMU (CVE-2015-5157, CVE-2017-17053); vm86: i386 real mode; uselib: a.out libraries
    // (CVE-2004-1235); lookup_dcookie: oprofile, gone in 6.8; _sysctl: gone in 5.5; sysfs and
    // ustat: obsolete queries glibc never makes; nfsservctl: gone in 3.1; vhangup: a terminal
    // reset that needs CAP_SYS_TTY_CONFIG. Absent ones cost nothing (see build_seccomp_program).
    {"modify_ldt", EPERM},
    {"vm86", EPERM},
    {"vm86old", EPERM},
    {"uselib", EPERM},
    {"lookup_dcookie", EPERM},
    {"_sysctl", EPERM},
    {"sysfs", EPERM},
    {"ustat", EPERM},
    {"nfsservctl", EPERM},
    {"vhangup", EPERM},
    // The clock is the host's (no time namespace here). Setting it needs CAP_SYS_TIME, which
    // the command never holds; denied anyway, as Docker does, so a regained capability could
    // not. adjtimex and clock_adjtime stay: glibc's ntp_gettime reads through them (modes 0),
    // and seccomp cannot tell that read from a write (struct timex is in memory); a write
    // still needs CAP_SYS_TIME.
    {"settimeofday", EPERM},
    {"clock_settime", EPERM},
    {"stime", EPERM},

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
    // policy may allow them), vsock reaches the hypervisor. Netlink stays: iproute-style tools
    // need it and the netns confines it.
    {"socket", EPERM, Match::equals32, 0, AF_UNIX, /*unix_socket=*/true},
    {"socket", EPERM, Match::equals32, 0, AF_VSOCK},
    // socketpair is allowed for stream and seqpacket pairs only (Python's multiprocessing,
    // shells, event loops): connected, and both ignore or refuse a sendto() address. Any other
    // type is a datagram socket in disguise: the kernel turns SOCK_RAW into SOCK_DGRAM, and an
    // unconnected datagram socket can sendto() any socket path on the host (/dev/log,
    // /run/systemd/notify; a root supervisor's command is seen as uid 0). An allow-list, because
    // denying SOCK_DGRAM alone missed SOCK_RAW: the rules deny everything outside it. The
    // domain rule stays even when unix sockets are allowed: nothing needs another family's
    // pairs (TIPC is the only other one that has them, and is attack surface).
    {"socketpair", EPERM, Match::not_equals, 0, AF_UNIX},
    {"socketpair", EPERM, Match::above, 1, kPairTypeMax, true},
    {"socketpair", EPERM, Match::clear, 1, 0x1, true},
    {"socketpair", EPERM, Match::any_bit, 1, 0x2 | 0x8 | kPairTypeForbiddenBits, true},

    // Terminal injection: TIOCSTI pushes keystrokes into the terminal, to be run by the user's
    // shell after we exit; TIOCLINUX can do the same on a virtual console.
    {"ioctl", EPERM, Match::equals32, 1, TIOCSTI},
    {"ioctl", EPERM, Match::equals32, 1, TIOCLINUX},

    // Setuid and setgid files: the workspace outlives the command, and a root supervisor's
    // command owns its files as host root, so `chmod 4755 sh-copy` would leave a root shell
    // for whoever runs it later (nosuid and no_new_privs only protect the sandbox itself).
    // Refused in every call that sets a mode: the chmod family (fchmodat2 is 6.6's, with
    // flags), and creation with a mode (O_CREAT or O_TMPFILE, creat, mknod with S_IFREG).
    // Setgid directories (group inheritance on shared trees) fall with it through chmod: a
    // setgid directory runs nothing, but seccomp cannot tell a directory from a file by path.
    // What breaks: git init --shared, install -m 2775/4755, tar -p of such entries as root.
    // mkdir needs no rule: the kernel keeps only the permission and sticky bits of its mode.
    // openat2 carries its mode in memory that seccomp cannot read: ENOSYS, so libcs and
    // libraries fall back to openat as they do on kernels before 5.6. File capabilities
    // (security.capability) need CAP_SETFCAP, which the command never holds: left to the
    // kernel, and tested.
    {"chmod", EPERM, Match::any_bit, 1, kSetId},
    {"fchmod", EPERM, Match::any_bit, 1, kSetId},
    {"fchmodat", EPERM, Match::any_bit, 2, kSetId},
    {"fchmodat2", EPERM, Match::any_bit, 2, kSetId, false, 0, 0, kNrFchmodat2},
    {"creat", EPERM, Match::any_bit, 1, kSetId},
    {"open", EPERM, Match::created_with, 1, O_CREAT, false, 2, kSetId},
    {"open", EPERM, Match::created_with, 1, kTmpfileBit, false, 2, kSetId},
    {"openat", EPERM, Match::created_with, 2, O_CREAT, false, 3, kSetId},
    {"openat", EPERM, Match::created_with, 2, kTmpfileBit, false, 3, kSetId},
    {"openat2", ENOSYS},
    {"mknod", EPERM, Match::any_bit, 1, kSetId},
    {"mknodat", EPERM, Match::any_bit, 2, kSetId},
};

}  // namespace paddock::sandbox::seccomp_rules
