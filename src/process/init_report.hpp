// What paddock's init (init_main.cpp, PID 1 of every sandbox's PID namespace) tells the
// supervisor, and how: fixed-size records written to a pipe on fd kInitReportFd before it
// exits. Both halves of the handshake use this header: the init writes, the supervisor
// (manager/exec_operation.cpp) reads as they come. command_status is written only once every
// other process of the namespace is killed and reaped, so the command has ended when it
// arrives, before the init's own exit.
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
  // value: how many mounts the sandbox's namespace lost while it ran (before command_status).
  // Only something outside can drop one: another mount namespace (the host, another sandbox)
  // unlinking or renaming a name that is a mount point here; the command could then write a
  // protected file through that name. The post-run audit then compares every read-only file.
  mounts_dropped = 0x50440004,
  // value: the command's wait status, as command_status, but something else in the namespace
  // could not be confirmed gone (init_main.cpp, namespace_emptied): the command has not ended
  // until the init's own exit (whose namespace teardown kills the rest).
  command_status_unsettled = 0x50440005,
  // What the command left in the private /tmp and /var/tmp, discarded with the sandbox
  // (init_tmp_tally.hpp), before command_status and only when it left something: the names
  // (value: a count), then the bytes of its regular files in two records (bits 0-30, then
  // bits 31-61; larger is capped), then tmp_tally_bounded if the count stopped at its bound.
  tmp_discarded_entries = 0x50440006,
  tmp_discarded_bytes_low = 0x50440007,
  tmp_discarded_bytes_high = 0x50440008,
  tmp_tally_bounded = 0x50440009,
};

struct InitReport {
  InitReportKind kind;
  std::int32_t value;
};
static_assert(sizeof(InitReport) == 8);

// A waiting init (manager/warm_sandboxes.hpp: a sandbox made before its command was known) is
// started with no command (argc 1) and a unix stream socket on fd kInitControlFd. The
// supervisor sends one InitCommand, with the command's standard streams as SCM_RIGHTS (bit i
// of `streams`: a descriptor for fd i came, in order; a missing one stays the sandbox's own
// /dev/null), then `size` bytes: the program's path, argc arguments and envc environment
// entries, each NUL-terminated. The supervisor's half: init_handshake.cpp; the init's:
// init_main.cpp. EOF instead of a command: the sandbox is discarded and the init exits 0.
inline constexpr int kInitControlFd = 4;
// The sandbox's /proc/self/mountinfo, opened by the child once its last mount step is done
// (child_side.cpp), and the plan's mount points (a sealed memfd: the paths, each ended by a
// NUL, sorted; sandbox/linux/mount_table.hpp). The init checks every planned mount point is
// in the table when it starts (a drop during set-up) and, if the kernel marked a change of
// the namespace's mounts since the child's open, again at the end (init_main.cpp).
inline constexpr int kInitMountTableFd = 5;
inline constexpr int kInitMountPointsFd = 6;
// The upper layers of the private /tmp and /var/tmp (a directory descriptor each, or closed),
// for init_tmp_tally.hpp.
inline constexpr int kInitTmpUpperFd = 7;
inline constexpr int kInitVarTmpUpperFd = 8;
inline constexpr std::uint32_t kInitCommandMagic = 0x50444331;
// A session (manager/session.hpp): a waiting init whose commands each set this bit of
// `streams` and bring one more descriptor after the streams, the write end of that command's
// own report pipe. The init then keeps its control socket and, once the command has exited,
// reports its status there (command_status: the command's own process has ended; what it
// started in the background runs on) and waits for the next. While a command runs, the
// supervisor may send a bare header with kInitSignalMagic and the signal in `size`: the init
// sends it to the command's process group (a SIGKILL for the command, never for the init).
// EOF ends the session: everything in it is killed and the init exits 0. The init's half:
// init_session.cpp.
inline constexpr std::uint32_t kInitSessionCommand = 1U << 3;
inline constexpr std::uint32_t kInitSignalMagic = 0x50444332;
// The most the supervisor sends (it uses a fresh sandbox for a larger command): the whole
// message then fits the socket's buffer at once, so sending never waits on the sandbox.
inline constexpr std::uint32_t kInitCommandMaxSize = 64 * 1024;

struct InitCommand {
  std::uint32_t magic;
  std::uint32_t size;
  std::uint32_t argc;
  std::uint32_t envc;
  std::uint32_t streams;
};
static_assert(sizeof(InitCommand) == 20);

}  // namespace paddock::process
