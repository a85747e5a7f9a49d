// What paddock's init (init_main.cpp, PID 1 of every sandbox's PID namespace) tells the
// supervisor, and how: one fixed-size record written to a pipe on fd kInitReportFd before it
// exits. Both halves of the handshake use this header: the init writes, the supervisor
// (manager/exec_operation.cpp) reads after the init's pidfd said it exited.
//
// Why a record and not the init's exit status: an exit status cannot tell "killed by SIGTERM"
// from "exited 143", and cannot carry the errno of a failed execve.
#pragma once

#include <cstdint>

namespace paddock::process {

inline constexpr int kInitReportFd = 3;

enum class InitReportKind : std::uint32_t {
  command_status = 0x50440001,  // value: the command's wait status (as wait4 gives it)
  exec_failed = 0x50440002,     // value: errno of the command's execve
  fork_failed = 0x50440003,     // value: errno of the init's fork
};

struct InitReport {
  InitReportKind kind;
  std::int32_t value;
};
static_assert(sizeof(InitReport) == 8);

}  // namespace paddock::process
