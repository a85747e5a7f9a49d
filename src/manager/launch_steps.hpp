// The steps of launching one command that need none of the operation's state, each checked
// and resolved from the caller's ExecOptions and the Manager's Config: its limits, its argv,
// its environment, its working directory and its standard streams. Each throws Error for
// bad input. ExecOperation::launch (exec_launch.cpp) runs them in this order, then the sandbox
// and the proxy, which are the operation's own.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "base/unique_fd.hpp"
#include "paddock/command.hpp"
#include "paddock/config.hpp"
#include "paddock/manager.hpp"
#include "process/spawn.hpp"

namespace paddock::manager {

// The call's timeout (positive, at most Config::max_timeout) and output cap.
struct CommandLimits {
  std::chrono::milliseconds timeout{0};
  std::size_t max_output = 0;
};
CommandLimits command_limits(const ExecOptions& options, const Config& config);

// The argv to run: the command's own, or the shell's `-c` with its string. Never empty, no
// argument with a NUL byte.
std::vector<std::string> command_argv(Command& command, const ExecOptions& options,
                                      const Config& config);

// The command's environment, drawn from the caller's (ExecOptions::parent_env, else ours)
// through Config's allow and deny lists, with the call's own variables on top.
std::vector<std::string> command_environment(const ExecOptions& options, const Config& config,
                                             bool sandboxing);

// An existing directory, or the reason it is not (the empty path: ours).
void check_working_directory(const std::string& cwd);

// The command's stdin, stdout and stderr: a descriptor the caller gave (checked: sandboxed,
// only what process/given_fd.hpp lets through), a pipe of ours (captured output, fed stdin),
// or /dev/null.
class CommandStreams {
 public:
  CommandStreams(const ExecOptions& options, int dev_null, bool sandboxing);

  process::ChildStdio stdio() const;
  // Once the child has its copies (or is gone): ours close, so the readers can see EOF.
  void close_child_ends() noexcept;

  bool feeds_stdin() const { return feed_in_; }
  UniqueFd take_stdout() { return std::move(out_.read); }
  UniqueFd take_stderr() { return std::move(err_.read); }
  UniqueFd take_stdin() { return std::move(in_.write); }

 private:
  struct Pipe {
    UniqueFd read, write;
  };
  static void make_pipe(Pipe& p);

  int dev_null_;
  int given_in_ = -1, given_out_ = -1, given_err_ = -1;
  bool capture_out_ = false, capture_err_ = false, feed_in_ = false;
  Pipe out_, err_, in_;
};

}  // namespace paddock::manager
