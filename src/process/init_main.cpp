// paddock-init: PID 1 of every sandbox's PID namespace, in front of the command.
//
// Why an init at all: PID 1 of a namespace ignores every signal it has no handler for, so a
// command running as PID 1 survived `kill -TERM $$`, abort(), SIGPIPE and a timeout's SIGTERM.
// With this init the command is PID 2 and gets the signals as it would anywhere else. The init
//   - blocks every signal and waits for them synchronously (blocked signals are queued even
//     for PID 1, where an unhandled one would be dropped),
//   - forwards each one to the command's process group, reaps every orphan it is given,
//   - when the command ends, reports its exact wait status (init_report.hpp) and exits; the
//     kernel then kills whatever the command left in the namespace.
//
// Why hand-written rather than tini (a Debian package): tini reports a death by signal N as
// exit status 128+N (indistinguishable from exit(128+N)), cannot report the errno of a failed
// execve, and would be a run-time dependency at a path every sandbox must show. This program
// is freestanding (no libc, raw syscalls, a few KiB): the supervisor carries it inside the
// library (init_image.cpp) and execs it from a sealed memfd, so starting it costs one small
// execve and nothing else. x86_64 and aarch64.
//
// Invocation (by the supervisor only): paddock-init PROGRAM ARGV0 [ARGS...], the command's
// environment as its own, the report pipe on fd 3 (init_report.hpp), stdio on 0-2. Or, for a
// sandbox made before its command was known, `paddock-init` alone: it waits for the command
// (program, arguments, environment, standard streams) on fd 4 (init_report.hpp, InitCommand).
#include <asm/unistd.h>
#include <linux/fcntl.h>
#include <linux/signal.h>
#include <linux/wait.h>

#include "process/init_parts.hpp"
#include "process/init_report.hpp"
#include "process/init_syscall.hpp"
#include "process/init_tmp_tally.hpp"

namespace paddock::process::init {
namespace {

constexpr long kSigsetSize = 8;  // the kernel's sigset_t, not glibc's
constexpr int kEnoent = 2, kEnotdir = 20;
constexpr long kPrSetDumpable = 4;  // <linux/prctl.h>: PR_SET_DUMPABLE

struct CmsgHdr {
  unsigned long len;
  int level;
  int type;
};
constexpr int kSolSocket = 1, kScmRights = 1;
constexpr long kMsgCtrunc = 0x8, kMsgCmsgCloexec = 0x40000000;
constexpr long kEsrch = 3, kEintr = 4, kEchild = 10;

void report(paddock::process::InitReportKind kind, int value) {
  report_to(paddock::process::kInitReportFd, kind, value);
}

// A waiting init's command (InitCommand): in .bss, so an init that never waits touches none
// of it. Every string is at least its NUL, so argc + envc + 2 pointers always fit.
char g_strings[paddock::process::kInitCommandMaxSize];
char* g_pointers[paddock::process::kInitCommandMaxSize + 4];

bool read_full(int fd, char* buf, unsigned long n) {
  while (n > 0) {
    const long r = raw_syscall(__NR_read, fd, reinterpret_cast<long>(buf), static_cast<long>(n));
    if (r == -kEintr) continue;
    if (r <= 0) return false;
    buf += r;
    n -= static_cast<unsigned long>(r);
  }
  return true;
}

}  // namespace

[[noreturn]] void exit_now(int code) {
  for (;;) raw_syscall(__NR_exit_group, code);
}

void report_to(long fd, paddock::process::InitReportKind kind, int value) {
  paddock::process::InitReport r{kind, value};
  // A pipe write of 8 bytes is atomic; if it fails the supervisor falls back to our status.
  raw_syscall(__NR_write, fd, reinterpret_cast<long>(&r), sizeof r);
}

int receive_command(Command* out, long* command_report, long null_fd) {
  using paddock::process::kInitControlFd;
  *command_report = -1;
  paddock::process::InitCommand h;
  h.magic = 0;
  alignas(8) unsigned char control[sizeof(CmsgHdr) + 5 * sizeof(int)];
  IoVec iov;
  iov.base = &h;
  iov.len = sizeof h;
  MsgHdr msg;
  msg.name = nullptr;
  msg.name_len = 0;
  msg.iov = &iov;
  msg.iov_len = 1;
  msg.control = control;
  msg.control_len = sizeof control;
  msg.flags = 0;
  long n;
  do {
    n = raw_syscall(__NR_recvmsg, kInitControlFd, reinterpret_cast<long>(&msg), kMsgCmsgCloexec);
  } while (n == -kEintr);
  if (n == 0) return 1;
  if (n < 0 || (msg.flags & kMsgCtrunc) != 0) return -1;
  int fds[4];
  unsigned nfds = 0;
  if (msg.control_len >= sizeof(CmsgHdr)) {
    const auto* c = reinterpret_cast<const CmsgHdr*>(control);
    if (c->level != kSolSocket || c->type != kScmRights || c->len < sizeof(CmsgHdr)) return -1;
    const unsigned long count = (c->len - sizeof(CmsgHdr)) / sizeof(int);
    if (count > 4) return -1;
    const int* data = reinterpret_cast<const int*>(control + sizeof(CmsgHdr));
    for (unsigned long i = 0; i < count; ++i) fds[nfds++] = data[i];
  }
  if (static_cast<unsigned long>(n) < sizeof h &&
      !read_full(kInitControlFd, reinterpret_cast<char*>(&h) + n, sizeof h - n)) {
    return -1;
  }
  unsigned wanted = 0;
  for (unsigned bit = 0; bit < 4; ++bit) wanted += (h.streams >> bit) & 1;
  const bool session = (h.streams & paddock::process::kInitSessionCommand) != 0;
  auto close_received = [&] {
    for (unsigned i = 0; i < nfds; ++i) raw_syscall(__NR_close, fds[i]);
  };
  if (h.magic != paddock::process::kInitCommandMagic ||
      h.size > paddock::process::kInitCommandMaxSize || (h.streams & ~15U) != 0 || wanted != nfds ||
      h.argc == 0 || h.argc > h.size || h.envc > h.size ||
      !read_full(kInitControlFd, g_strings, h.size)) {
    close_received();
    return -1;
  }
  // program, argc arguments, envc entries: each NUL-terminated, filling the bytes exactly.
  const unsigned total = 1 + h.argc + h.envc;
  unsigned found = 0, at = 0;
  char** next = g_pointers;
  while (at < h.size && found < total) {
    char* s = g_strings + at;
    while (at < h.size && g_strings[at] != 0) ++at;
    if (at == h.size) return -1;  // no NUL
    ++at;
    if (found == 0) {
      out->program = s;
    } else {
      *next++ = s;
      if (found == h.argc) *next++ = nullptr;  // end of argv
    }
    ++found;
  }
  if (found != total || at != h.size) return -1;
  *next = nullptr;  // end of envp
  out->argv = g_pointers;
  out->envp = g_pointers + h.argc + 1;

  unsigned k = 0;
  for (long target = 0; target < 3; ++target) {
    if (((h.streams >> target) & 1) == 0) {
      // A session's init closed its streams after its first command: a stream not given is
      // its /dev/null again.
      if (session && raw_syscall(__NR_dup3, null_fd, target, 0) != target) return -1;
      continue;
    }
    if (raw_syscall(__NR_dup3, fds[k], target, 0) != target) return -1;
    raw_syscall(__NR_close, fds[k++]);
  }
  if (session) {
    *command_report = fds[k];  // close-on-exec (MSG_CMSG_CLOEXEC): the command's own pipe
  } else {
    raw_syscall(__NR_close, kInitControlFd);
  }
  return 0;
}

// Kills everything else in this namespace and reaps it; true once kill(-1, 0) finds nobody
// left (zombies count): only then may the supervisor take the command as ended before this
// init's own exit (whose namespace teardown would kill the rest in any case). ECHILD alone is
// not taken as proof: a process not (yet) our child is not waited for. Bounded: after the
// rounds the report says so and the supervisor waits for our exit instead.
bool namespace_emptied() {
  constexpr int kRounds = 2000;
  for (int round = 0; round < kRounds; ++round) {
    raw_syscall(__NR_kill, -1, SIGKILL);
    while (raw_syscall(__NR_wait4, -1, 0, __WALL, 0) != -kEchild) {
    }
    if (raw_syscall(__NR_kill, -1, 0) == -kEsrch) return true;
    raw_syscall(__NR_sched_yield);
  }
  return false;
}

namespace {

// The command's process (it shares nothing with the init after its execve), and where it
// reports a failed execve (the sandbox's report pipe, or a session command's own).
Command g_command;
long g_report_fd = paddock::process::kInitReportFd;

[[noreturn]] void command_main() {
  // A process group of its own: signals are passed on to the command and what it starts
  // (as a terminal signals its foreground job), and the supervisor's group signal (the
  // CLI's kill(-pid)) reaches the init alone, so nothing gets a signal twice.
  raw_syscall(__NR_setpgid, 0, 0);
  unsigned long none = 0;
  raw_syscall(__NR_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&none), 0, kSigsetSize);
  const long err =
      -raw_syscall(__NR_execve, reinterpret_cast<long>(g_command.program),
                   reinterpret_cast<long>(g_command.argv), reinterpret_cast<long>(g_command.envp));
  paddock::process::InitReport r{paddock::process::InitReportKind::exec_failed,
                                 static_cast<int>(err)};
  raw_syscall(__NR_write, g_report_fd, reinterpret_cast<long>(&r), sizeof r);
  exit_now(err == kEnoent || err == kEnotdir ? 127 : 126);
}

#if defined(__x86_64__)
// x86_64: clone(CLONE_VM | CLONE_VFORK) on a stack of its own, as posix_spawn does: the init's
// page tables are not copied and neither side takes copy-on-write faults afterwards (a plain
// fork here cost ~0.4 ms on a VM whose page faults are slow; bench/sandbox_bench.cpp, the init
// row), and the init resumes once the command has exec'd or died. The child runs only
// command_main(), which touches its own stack and g_command (read) alone. The price: a stop
// signal the caller sends at the instant between the child's setpgid and its execve holds the
// init in the vfork (a later SIGCONT waits in its queue) until the timeout's SIGKILL.
alignas(16) char g_command_stack[16384];

long clone_command() {
  constexpr long kFlags = 0x100 /* CLONE_VM */ | 0x4000 /* CLONE_VFORK */ | SIGCHLD;
  long ret;
  register long r10 asm("r10") = 0;  // child_tid
  register long r8 asm("r8") = 0;    // tls
  register long r9 asm("r9") = reinterpret_cast<long>(&command_main);
  // The child returns from the syscall on the new stack with every register but rax, rcx and
  // r11 as the parent had them: r9 still holds the function. The stack top is 16-aligned, so
  // the call leaves command_main the ABI's alignment.
  asm volatile(
      "syscall\n\t"
      "test %%rax, %%rax\n\t"
      "jnz 1f\n\t"
      "xor %%ebp, %%ebp\n\t"
      "call *%%r9\n\t"
      "hlt\n"
      "1:\n\t"
      : "=a"(ret)
      : "a"(__NR_clone), "D"(kFlags), "S"(g_command_stack + sizeof g_command_stack), "d"(0L),
        "r"(r10), "r"(r8), "r"(r9)
      : "rcx", "r11", "memory");
  return ret;
}
#else
// Elsewhere a plain fork (clone with only the exit signal: aarch64 has no fork syscall).
long clone_command() {
  const long pid = raw_syscall(__NR_clone, SIGCHLD, 0, 0, 0);
  if (pid == 0) command_main();
  return pid;
}
#endif

}  // namespace

void pass_on_signal(long pid, long sig) {
  const long to_group = raw_syscall(__NR_kill, -pid, sig);
  // SIGKILL reaches the command itself too, even when its group still has members: one that
  // moved itself to another group must not outlive its timeout (twice is harmless for it).
  if (to_group != 0 || sig == SIGKILL) raw_syscall(__NR_kill, pid, sig);
}

long start_command(const Command& command, long report_fd) {
  g_command = command;
  g_report_fd = report_fd;
  const long pid = clone_command();
  // Also here for a plain fork, where either may run first; after a vfork the child has
  // done it and exec'd, and this says EACCES.
  if (pid > 0) raw_syscall(__NR_setpgid, pid, pid);
  return pid;
}

namespace {

int status_as_exit_code(int status) {
  const int sig = status & 0x7f;
  return sig == 0 ? (status >> 8) & 0xff : 128 + sig;
}

// What the command left in the private /tmp and /var/tmp (init_report.hpp), once nothing of
// it runs any more: everything there beyond `before` is discarded with the sandbox.
void report_discarded(const int (&uppers)[2], const paddock::process::init::TmpTally& before) {
  using paddock::process::InitReportKind;
  paddock::process::init::TmpTally after;
  for (int fd : uppers) paddock::process::init::tally_tree(fd, after);
  const unsigned long entries = after.entries > before.entries ? after.entries - before.entries : 0;
  unsigned long bytes = after.bytes > before.bytes ? after.bytes - before.bytes : 0;
  if (entries == 0 && bytes == 0 && !after.bounded) return;
  constexpr unsigned long kLow = 0x7fffffffUL;
  if (bytes > (kLow << 31 | kLow)) bytes = kLow << 31 | kLow;
  report(InitReportKind::tmp_discarded_entries, static_cast<int>(entries > kLow ? kLow : entries));
  report(InitReportKind::tmp_discarded_bytes_low, static_cast<int>(bytes & kLow));
  report(InitReportKind::tmp_discarded_bytes_high, static_cast<int>(bytes >> 31));
  if (after.bounded) report(InitReportKind::tmp_tally_bounded, 1);
}

}  // namespace
}  // namespace paddock::process::init

extern "C" [[noreturn]] [[gnu::used]] void paddock_init_main(long* stack) {
  using namespace paddock::process::init;
  using paddock::process::InitReportKind;
  const long argc = stack[0];
  char** argv = reinterpret_cast<char**>(stack + 1);
  char** envp = argv + argc + 1;
  if (argc != 1 && argc < 3) exit_now(125);

  // Not dumpable: the command runs with the same credentials, and /proc/1/fd/3, /proc/1/exe
  // and /proc/1/mem must stay out of its reach (a forged report, a chmod of the shared
  // image). The command's own execve makes it dumpable again; the init never execs.
  raw_syscall(__NR_prctl, kPrSetDumpable, 0);

  // Started with every signal blocked (child_side.cpp), and kept so: a signal that reaches
  // PID 1 unblocked with no handler is dropped by the kernel, blocked it is queued until the
  // loop below takes it. The command starts with none blocked, as without an init.
  unsigned long all = ~0UL;
  raw_syscall(__NR_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&all), 0, kSigsetSize);
  // The report pipe is ours alone: the command must not inherit it.
  raw_syscall(__NR_fcntl, paddock::process::kInitReportFd, F_SETFD, FD_CLOEXEC);

  // Every mount the plan made must be in the namespace's table when the command starts and
  // when it ends: another mount namespace (the host, another sandbox) that unlinks a name
  // which is a mount point here, or renames another over it, makes the kernel drop that mount
  // (a read-only cover of .git/config gone: the command could write the host's file), and a
  // directory renamed out of a bind's root hides the mounts below it from the table, which is
  // no better (sandbox/README.md: what a rename of the covered name itself does). The
  // table was opened by the child after its last mount step (a drop since then shows here)
  // and is read in full again at the end. No
  // count: mounts that appear (hidden ones brought back, automounts) must not balance one
  // that went. A sandbox made ahead checks before it waits (the supervisor also checks when
  // it takes it); a fresh one just after the command is started, off its critical path.
  const long mount_table =
      raw_syscall(__NR_fcntl, paddock::process::kInitMountTableFd, F_SETFD, FD_CLOEXEC) == 0
          ? paddock::process::kInitMountTableFd
          : -1;
  bool mounts_held = load_planned_points(paddock::process::kInitMountPointsFd);
  raw_syscall(__NR_close, paddock::process::kInitMountPointsFd);
  auto check_start = [&] { mounts_held = mounts_held && planned_mounts_present(mount_table); };
  Command command{argc > 1 ? argv[1] : nullptr, argv + 2, envp};
  if (argc == 1) {  // a sandbox made ahead: its command comes now
    check_start();
    // The waiting init's streams are the sandbox's /dev/null: a session's later commands get
    // it for a stream they bring none for.
    const long null_fd = raw_syscall(__NR_fcntl, 0, F_DUPFD_CLOEXEC, 10);
    long command_report = -1;
    const int got = receive_command(&command, &command_report, null_fd);
    if (got == 1) exit_now(0);
    if (got != 0) exit_now(125);
    if (command_report >= 0) {
      session_main(command, command_report, null_fd, mount_table, mounts_held);
    }
    raw_syscall(__NR_close, null_fd);
  }

  // What the plan itself made in the private /tmp and /var/tmp (mount points, hidden names):
  // counted before the command can write there, so the count after it is the command's.
  using paddock::process::init::TmpTally;
  const int tmp_uppers[] = {paddock::process::kInitTmpUpperFd,
                            paddock::process::kInitVarTmpUpperFd};
  TmpTally before;
  for (int fd : tmp_uppers) {
    if (raw_syscall(__NR_fcntl, fd, F_SETFD, FD_CLOEXEC) == 0) {
      paddock::process::init::tally_tree(fd, before);
    }
  }

  const long pid = start_command(command, paddock::process::kInitReportFd);
  if (pid < 0) {
    report(InitReportKind::fork_failed, static_cast<int>(-pid));
    exit_now(125);
  }
  // The command's standard streams are its own: holding them here would keep a pipe open
  // after the command closed it (no EOF for its reader, no EPIPE for its writer).
  for (long fd = 0; fd < 3; ++fd) raw_syscall(__NR_close, fd);
  if (argc != 1) check_start();

  alignas(8) unsigned char info[128];  // siginfo_t; only the signal number (returned) is used
  for (;;) {
    const long sig = raw_syscall(__NR_rt_sigtimedwait, reinterpret_cast<long>(&all),
                                 reinterpret_cast<long>(info), 0, kSigsetSize);
    if (sig <= 0) continue;  // EINTR
    if (sig != SIGCHLD) {
      pass_on_signal(pid, sig);
      continue;
    }
    reap_children(pid, [&](int status) {
      // Nothing of the command may outlive its report: what it left running is killed and
      // reaped first (the kernel would kill it once we exit, but after the report the
      // supervisor's audit starts). Then the mount count: a drop from outside is only
      // harmless if nothing of the command is left to use it.
      const bool emptied = namespace_emptied();
      // Read again whatever the kernel's change mark on the open table says: older kernels
      // mark a namespace for a drop from outside only when another mount anywhere moved
      // the global event counter since its own last mount (umount_tree's
      // __touch_mnt_namespace), so a quiet machine's drop went unmarked (CI: a planted
      // config stayed, 1 run in 12). By mount ID where the kernel has them (init_mounts.cpp):
      // ~1 µs a point, where reading the table took ~120 µs.
      if (mounts_held) mounts_held = planned_mounts_still_present(mount_table);
      if (!mounts_held) report(InitReportKind::mounts_dropped, 1);
      report_discarded(tmp_uppers, before);
      report(emptied ? InitReportKind::command_status : InitReportKind::command_status_unsettled,
             status);
      exit_now(status_as_exit_code(status));
    });
  }
}

// The entry point: no libc, so no crt1. Hands the initial stack (argc, argv..., envp...) to
// paddock_init_main with the ABI's stack alignment.
#if defined(__x86_64__)
asm(".text\n.global _start\n.type _start,@function\n_start:\n"
    "  xor %rbp, %rbp\n  mov %rsp, %rdi\n  and $-16, %rsp\n  call paddock_init_main\n  hlt\n");
#elif defined(__aarch64__)
asm(".text\n.global _start\n.type _start,%function\n_start:\n"
    "  mov x29, #0\n  mov x30, #0\n  mov x0, sp\n  bl paddock_init_main\n");
#endif
