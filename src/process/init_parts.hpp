// What paddock-init's translation units share (init_main.cpp: the program and a sandbox's one
// command; init_session.cpp: a session's many). Freestanding: no libc here either.
#pragma once

#include <asm/unistd.h>

#include "process/init_report.hpp"
#include "process/init_syscall.hpp"

namespace paddock::process::init {

struct Command {
  const char* program;
  char** argv;
  char** envp;
};

// The kernel's recvmsg structures (LP64: the same on x86_64 and aarch64); no libc headers here.
struct IoVec {
  void* base;
  unsigned long len;
};
struct MsgHdr {
  void* name;
  int name_len;
  IoVec* iov;
  unsigned long iov_len;
  void* control;
  unsigned long control_len;
  unsigned flags;
};

[[noreturn]] void exit_now(int code);

// One record on a report pipe (init_report.hpp); a write of 8 bytes is atomic.
void report_to(long fd, InitReportKind kind, int value);

// Waits for a command on kInitControlFd and installs its streams on 0-2. 0: received; 1:
// EOF (the supervisor discarded this sandbox, or ended its session); -1: not a well-formed
// command. A session's command (kInitSessionCommand) leaves its report pipe in
// `*command_report` and the control socket open, and gets `null_fd` for a stream not given;
// any other closes the control socket.
int receive_command(Command* out, long* command_report, long null_fd);

// The plan's mount points (kInitMountPointsFd), read once; false when unreadable
// (init_mounts.cpp).
bool load_planned_points(long points_fd);
// Every planned mount point in the namespace's table `table_fd` (read in full), each point's
// mount noted for the checks after it.
bool planned_mounts_present(long table_fd);
// The same, again: each point still reaches the mount noted, or the table is read in full.
bool planned_mounts_still_present(long table_fd);

// Passes `sig` on to the command's process group (or the command alone, if it left it);
// SIGKILL to both.
void pass_on_signal(long pid, long sig);

// Reaps every child that has exited; the status of `pid` (the command), if among them, goes
// to `on_command`. Returns whether it was.
template <typename F>
bool reap_children(long pid, F on_command) {
  bool found = false;
  for (;;) {
    int status = 0;
    const long reaped = raw_syscall(__NR_wait4, -1, reinterpret_cast<long>(&status),
                                    1 /* WNOHANG */ | 0x40000000 /* __WALL */, 0);
    if (reaped <= 0) return found;
    if (reaped == pid) {
      found = true;
      on_command(status);
    }
  }
}

// Kills and reaps everything else in the namespace; false when it could not confirm so.
bool namespace_emptied();

// Starts `command` in a process group of its own; a failed execve is reported on
// `report_fd`. Its pid, or -errno.
long start_command(const Command& command, long report_fd);

// A session: runs `first` (its report pipe `command_report`), then each command that comes
// on the control socket, until EOF there (init_session.cpp). `mounts_held`: the start check.
[[noreturn]] void session_main(const Command& first, long command_report, long null_fd,
                               long mount_table, bool mounts_held);

}  // namespace paddock::process::init
