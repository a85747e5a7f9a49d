// Which of the caller's standard streams a `paddock run` command gets as they are, and the
// copy of the others: one rule for a run in this process and one through the helper, so the
// two give the command the same streams (process/given_fd.hpp says what a sandboxed command
// may have).
#pragma once

#include <string_view>
#include <vector>

#include "base/unique_fd.hpp"
#include "cli/run_args.hpp"
#include "paddock/manager.hpp"

namespace paddock::cli {

// False when the reader is gone (EPIPE) or the write failed otherwise: the bytes are dropped.
// Blocking: the CLI supervises one command, and a full terminal or pipe of ours is
// back-pressure, not a stall of anyone else's work.
bool write_all(int fd, std::string_view data);

// The --stdin value is one we know (else said on stderr).
bool valid_stdin_mode(const RunArgs& args);

// Sets options.stdin_fd/stdout_fd/stderr_fd to the streams of ours the command gets as they
// are. stdin: ours, as bwrap, srt and env(1) pass it, unless it is a terminal (a command
// reading it would compete with the shell behind us) or --stdin says otherwise; a pipe or
// socket is given as it is, a file, a terminal (inherit) or anything else on the host is
// copied in through a pipe of ours (`relayed_stdin`: close it once the command has its copy).
// A stdout or stderr that is a pipe or socket goes to the command as it is: nothing to copy,
// and the command sees its reader go away (`paddock run -- yes | head -1` ends at once with
// SIGPIPE). A terminal or a file stays behind a pipe (a terminal keeps paddock's own lines
// readable, terminal.hpp; a file's inode stays out of the command's reach); --json and
// --max-output need the bytes, so they capture. False (said on stderr) when it cannot be done.
bool choose_streams(const RunArgs& args, ExecOptions& options, UniqueFd& relayed_stdin);

// Whether one of our standard streams is a connection to a paddock daemon (its peer runs this
// very binary): a helper's, a session's, `paddock serve`'s. A command's bytes written there,
// as they are or copied by us, would be read by that daemon as its client's lines (hostile
// review helper-50: a client that greeted, then exec'd `paddock run` with the connection as its
// stdin and stdout, had the command read the key and run commands through the helper). Said on
// stderr; the run is refused.
bool a_stream_reaches_a_daemon();

// Copies a command's output into one of our streams: the first failure other than a reader
// gone (a full disk, `ulimit -f`) said once, never silently; what comes after is dropped.
// Returns false when the reader is gone (EPIPE).
class OutputCopy {
 public:
  explicit OutputCopy(int to) : to_(to) {}
  bool write(std::string_view chunk);
  int to() const noexcept { return to_; }

 private:
  int to_;
  bool failed_ = false;
};

// The streams a run through the helper gives its command, sent with the exec line
// (SCM_RIGHTS; the helper's "given"). The same as choose_streams would give it in process;
// a stream it would copy (a terminal, a file, unless --json or --max-output capture) is a
// pipe of ours here, copied by the client as it comes (`copies`), never JSON on the socket.
struct HelperStreams {
  std::vector<std::string> names;  // "stdin", "stdout", "stderr": the exec line's "given"
  std::vector<int> fds;            // in the same order
  std::vector<UniqueFd> ours;      // the pipe ends made for the command: closed once sent
  struct Copy {
    UniqueFd from;  // our pipe's read end
    OutputCopy to;
  };
  std::vector<Copy> copies;
};

// nullopt: said on stderr (a pipe could not be made).
std::optional<HelperStreams> helper_streams(const RunArgs& args);

// Sends `line` on the connected unix socket with `fds` attached to its first byte. Returns the
// bytes sent (the rest is the caller's to send), or -1 with errno.
ssize_t send_with_descriptors(int socket, std::string_view line, const std::vector<int>& fds);

}  // namespace paddock::cli
