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
// environment as its own, the report pipe on fd 3 (init_report.hpp), stdio on 0-2.
#include <asm/unistd.h>
#include <linux/fcntl.h>
#include <linux/signal.h>
#include <linux/wait.h>

#include "process/init_report.hpp"

namespace {

#if defined(__x86_64__)
long raw_syscall(long n, long a = 0, long b = 0, long c = 0, long d = 0) {
  long ret;
  register long r10 asm("r10") = d;
  asm volatile("syscall"
               : "=a"(ret)
               : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
               : "rcx", "r11", "memory");
  return ret;
}
#elif defined(__aarch64__)
long raw_syscall(long n, long a = 0, long b = 0, long c = 0, long d = 0) {
  register long x8 asm("x8") = n;
  register long x0 asm("x0") = a;
  register long x1 asm("x1") = b;
  register long x2 asm("x2") = c;
  register long x3 asm("x3") = d;
  asm volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
  return x0;
}
#else
#error "paddock-init: add this architecture's syscall convention and _start"
#endif

constexpr long kSigsetSize = 8;  // the kernel's sigset_t, not glibc's
constexpr int kEnoent = 2, kEnotdir = 20;
constexpr long kPrSetDumpable = 4;  // <linux/prctl.h>: PR_SET_DUMPABLE

[[noreturn]] void exit_now(int code) {
  for (;;) raw_syscall(__NR_exit_group, code);
}

void report(paddock::process::InitReportKind kind, int value) {
  paddock::process::InitReport r{kind, value};
  // A pipe write of 8 bytes is atomic; if it fails the supervisor falls back to our status.
  raw_syscall(__NR_write, paddock::process::kInitReportFd, reinterpret_cast<long>(&r), sizeof r);
}

int status_as_exit_code(int status) {
  const int sig = status & 0x7f;
  return sig == 0 ? (status >> 8) & 0xff : 128 + sig;
}

}  // namespace

extern "C" [[noreturn]] [[gnu::used]] void paddock_init_main(long* stack) {
  using paddock::process::InitReportKind;
  const long argc = stack[0];
  char** argv = reinterpret_cast<char**>(stack + 1);
  char** envp = argv + argc + 1;
  if (argc < 3) exit_now(125);

  // Not dumpable: the command runs with the same credentials, and /proc/1/fd/3, /proc/1/exe
  // and /proc/1/mem must stay out of its reach (a forged report, a chmod of the shared
  // image). The command's own execve makes it dumpable again; the init never execs.
  raw_syscall(__NR_prctl, kPrSetDumpable, 0);

  unsigned long all = ~0UL, before = 0;
  raw_syscall(__NR_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&all),
              reinterpret_cast<long>(&before), kSigsetSize);
  // The report pipe is ours alone: the command must not inherit it.
  raw_syscall(__NR_fcntl, paddock::process::kInitReportFd, F_SETFD, FD_CLOEXEC);

  // fork: clone with only the exit signal (aarch64 has no fork syscall).
  const long pid = raw_syscall(__NR_clone, SIGCHLD, 0, 0, 0);
  if (pid == 0) {
    // A process group of its own: signals are passed on to the command and what it starts
    // (as a terminal signals its foreground job), and the supervisor's group signal (the
    // CLI's kill(-pid)) reaches the init alone, so nothing gets a signal twice.
    raw_syscall(__NR_setpgid, 0, 0);
    raw_syscall(__NR_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&before), 0, kSigsetSize);
    const long err = -raw_syscall(__NR_execve, reinterpret_cast<long>(argv[1]),
                                  reinterpret_cast<long>(argv + 2), reinterpret_cast<long>(envp));
    report(InitReportKind::exec_failed, static_cast<int>(err));
    exit_now(err == kEnoent || err == kEnotdir ? 127 : 126);
  }
  if (pid < 0) {
    report(InitReportKind::fork_failed, static_cast<int>(-pid));
    exit_now(125);
  }
  raw_syscall(__NR_setpgid, pid, pid);  // also here: whichever runs first, the group exists
  // The command's standard streams are its own: holding them here would keep a pipe open
  // after the command closed it (no EOF for its reader, no EPIPE for its writer).
  for (long fd = 0; fd < 3; ++fd) raw_syscall(__NR_close, fd);

  alignas(8) unsigned char info[128];  // siginfo_t; only the signal number (returned) is used
  for (;;) {
    const long sig = raw_syscall(__NR_rt_sigtimedwait, reinterpret_cast<long>(&all),
                                 reinterpret_cast<long>(info), 0, kSigsetSize);
    if (sig <= 0) continue;  // EINTR
    if (sig != SIGCHLD) {
      if (raw_syscall(__NR_kill, -pid, sig) != 0) raw_syscall(__NR_kill, pid, sig);
      continue;
    }
    for (;;) {
      int status = 0;
      const long reaped =
          raw_syscall(__NR_wait4, -1, reinterpret_cast<long>(&status), WNOHANG | __WALL, 0);
      if (reaped <= 0) break;
      if (reaped == pid) {
        report(InitReportKind::command_status, status);
        exit_now(status_as_exit_code(status));
      }
    }
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
