// paddock-init's session loop (init_report.hpp, kInitSessionCommand): one sandbox, many
// commands of one agent. The supervisor's half is manager/session.cpp.
//
// Unlike a sandbox's single command, a session's command ends when its own process exits:
// what it started in the background (a server, a watcher) runs on into the next command,
// reparented to this init, which reaps it whenever it exits. The init waits on two things at
// once, so its signals come through a signalfd rather than sigtimedwait: the signals (SIGCHLD,
// and those it passes on to the running command's process group) and the control socket
// (the next command, a signal request for the running one, or EOF: the session's end).
#include <asm/unistd.h>
#include <linux/fcntl.h>
#include <linux/signal.h>
#include <linux/wait.h>

#include "process/init_parts.hpp"
#include "process/init_report.hpp"
#include "process/init_syscall.hpp"

namespace paddock::process::init {
namespace {

constexpr long kSigsetSize = 8;
constexpr long kSfdNonblock = 04000, kSfdCloexec = 02000000;  // O_NONBLOCK, O_CLOEXEC
constexpr long kMsgPeek = 2, kMsgDontwait = 0x40;
constexpr short kPollIn = 1;
constexpr long kEintr = 4;

struct PollFd {
  int fd;
  short events;
  short revents;
};

// The end of the session: everything in it goes, then the init (whose exit the supervisor's
// pidfd sees).
[[noreturn]] void end_session() {
  namespace_emptied();
  exit_now(0);
}

// recvmsg of the header's bytes alone, no descriptors (recvfrom takes six arguments, and
// raw_syscall passes four). What recvmsg returns.
long receive_header(InitCommand* h, long flags) {
  IoVec iov{h, sizeof *h};
  MsgHdr msg{nullptr, 0, &iov, 1, nullptr, 0, 0};
  return raw_syscall(__NR_recvmsg, kInitControlFd, reinterpret_cast<long>(&msg), flags);
}

// The header at the head of the control socket, left there (MSG_PEEK). -1: EOF or an error;
// 0: nothing yet; 1: `*h` holds it.
int peek_header(InitCommand* h) {
  const long n = receive_header(h, kMsgPeek | kMsgDontwait);
  if (n == -11 /* EAGAIN */ || n == -kEintr) return 0;
  if (n <= 0) return -1;
  return static_cast<unsigned long>(n) == sizeof *h ? 1 : 0;  // the rest of it comes
}

void drop_header() {
  InitCommand h;
  receive_header(&h, kMsgDontwait);
}

}  // namespace

void session_main(const Command& first, long command_report, long null_fd, long mount_table,
                  bool mounts_held) {
  // Nothing the init holds may reach a command: the control socket stays (close-on-exec),
  // the private /tmp's tally descriptors are for a one-command sandbox only.
  raw_syscall(__NR_fcntl, kInitControlFd, F_SETFD, FD_CLOEXEC);
  raw_syscall(__NR_close, kInitTmpUpperFd);
  raw_syscall(__NR_close, kInitVarTmpUpperFd);
  raw_syscall(__NR_close, kInitReportFd);  // the sandbox's pipe: each command brings its own
  unsigned long all = ~0UL;
  const long signals = raw_syscall(__NR_signalfd4, -1, reinterpret_cast<long>(&all), kSigsetSize,
                                   kSfdNonblock | kSfdCloexec);
  if (signals < 0) {
    report_to(command_report, InitReportKind::fork_failed, static_cast<int>(-signals));
    end_session();
  }

  long pid = 0;  // the running command's (and its process group's), 0 between commands
  auto begin = [&](const Command& command) {
    pid = start_command(command, command_report);
    if (pid < 0) {
      report_to(command_report, InitReportKind::fork_failed, static_cast<int>(-pid));
      raw_syscall(__NR_close, command_report);
      command_report = -1;
      pid = 0;
    }
    // The command's streams are its own (see init_main.cpp): ours become /dev/null again,
    // never closed, so the next command's descriptors arrive above 2 and cannot land on a
    // stream number before it is installed.
    for (long fd = 0; fd < 3; ++fd) raw_syscall(__NR_dup3, null_fd, fd, 0);
  };
  // Its own process has exited: the mount check (sticky: a drop stays reported for every
  // later command, whose audit then compares every protected file), then its status.
  auto finish = [&](int status) {
    if (mounts_held) mounts_held = planned_mounts_still_present(mount_table);
    if (!mounts_held) report_to(command_report, InitReportKind::mounts_dropped, 1);
    report_to(command_report, InitReportKind::command_status, status);
    raw_syscall(__NR_close, command_report);
    command_report = -1;
    pid = 0;
  };

  begin(first);
  for (;;) {
    PollFd fds[2] = {{static_cast<int>(signals), kPollIn, 0}, {kInitControlFd, kPollIn, 0}};
    // No signal mask and no timeout: ppoll's fifth argument is not read.
    if (raw_syscall(__NR_ppoll, reinterpret_cast<long>(fds), 2, 0, 0) < 0) continue;
    if (fds[0].revents != 0) {
      alignas(8) unsigned char info[128 * 8];  // signalfd_siginfo; ssi_signo comes first
      const long n = raw_syscall(__NR_read, signals, reinterpret_cast<long>(info), sizeof info);
      for (long at = 0; at + 128 <= n; at += 128) {
        const unsigned sig = *reinterpret_cast<const unsigned*>(info + at);
        if (sig != SIGCHLD) {
          if (pid > 0) pass_on_signal(pid, sig);
          continue;
        }
        if (pid > 0) {
          reap_children(pid, finish);
        } else {
          reap_children(-2, [](int) {});  // orphans of earlier commands
        }
      }
    }
    if (fds[1].revents == 0) continue;
    InitCommand h;
    const int peeked = peek_header(&h);
    if (peeked < 0) end_session();
    if (peeked == 0) continue;
    if (h.magic == kInitSignalMagic) {
      // For the command that runs; one that ended meanwhile is gone with its request.
      drop_header();
      const long sig = static_cast<long>(h.size);
      if (pid > 0 && sig > 0 && sig < 65) pass_on_signal(pid, sig);
      continue;
    }
    if (pid > 0) end_session();  // a second command while one runs: not our supervisor's
    Command next;
    long report = -1;
    if (receive_command(&next, &report, null_fd) != 0 || report < 0) end_session();
    command_report = report;
    begin(next);
  }
}

}  // namespace paddock::process::init
