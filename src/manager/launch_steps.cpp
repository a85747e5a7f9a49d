#include "manager/launch_steps.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "config/environment.hpp"
#include "paddock/errors.hpp"
#include "process/given_fd.hpp"

extern char** environ;

namespace paddock::manager {

CommandLimits command_limits(const ExecOptions& options, const Config& config) {
  CommandLimits limits;
  limits.timeout = options.timeout.value_or(config.default_timeout);
  if (limits.timeout.count() <= 0) {
    throw Error(errc::config_invalid,
                "timeout: must be positive, got " + std::to_string(limits.timeout.count()) + " ms");
  }
  if (limits.timeout > config.max_timeout) {
    throw Error(errc::config_invalid, "timeout: " + std::to_string(limits.timeout.count()) +
                                          " ms exceeds the cap of " +
                                          std::to_string(config.max_timeout.count()) +
                                          " ms (Config::max_timeout, PADDOCK_MAX_TIMEOUT_SECONDS)");
  }
  limits.max_output = options.max_output_bytes.value_or(config.max_output_bytes);
  return limits;
}

std::vector<std::string> command_argv(Command& command, const ExecOptions& options,
                                      const Config& config) {
  std::vector<std::string> argv;
  if (command.shell) {
    if (!command.argv.empty()) {
      throw Error(errc::config_invalid, "command: give either argv or a shell string, not both");
    }
    argv = {options.policy.shell.value_or(config.shell), "-c", *command.shell};
  } else {
    argv = std::move(command.argv);
  }
  if (argv.empty()) throw Error(errc::config_invalid, "command: argv is empty");
  for (const auto& arg : argv) {
    if (arg.find('\0') != std::string::npos) {
      throw Error(errc::config_invalid, "command: an argument contains a NUL byte");
    }
  }
  return argv;
}

std::vector<std::string> command_environment(const ExecOptions& options, const Config& config,
                                             bool sandboxing) {
  std::vector<const char*> parent;  // options.parent_env as an environ-style array
  if (options.parent_env) {
    for (const auto& entry : *options.parent_env) parent.push_back(entry.c_str());
    parent.push_back(nullptr);
  }
  auto env = configuration::build_child_environment(
      config.env_allow, options.env, options.parent_env ? parent.data() : environ, config.env_deny);
  // In the sandbox every writable root is a mount of its own (a copy-on-write layer, or the
  // host's directory under the private /tmp): git run below one stops looking for the
  // repository at that boundary unless told it may cross it.
  if (sandboxing &&
      configuration::find_variable(env, "GIT_DISCOVERY_ACROSS_FILESYSTEM") == nullptr) {
    env.emplace_back("GIT_DISCOVERY_ACROSS_FILESYSTEM=1");
  }
  return env;
}

void check_working_directory(const std::string& cwd) {
  if (cwd.empty()) return;
  struct stat st;
  if (::stat(cwd.c_str(), &st) != 0) {
    throw Error(errc::spawn_failed, "working directory " + cwd + ": " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) {
    throw Error(errc::spawn_failed, "working directory " + cwd + ": not a directory");
  }
}

CommandStreams::CommandStreams(const ExecOptions& options, int dev_null, bool sandboxing)
    : dev_null_(dev_null) {
  // The caller's own descriptors: any, unsandboxed; a pipe or socket only, sandboxed (and
  // /dev/null becomes the sandbox's own, as when paddock chose it).
  auto given = [&](int fd, const char* name) {
    if (fd < 0) return -1;
    const auto kind = process::classify_given_fd(fd);
    if (kind == process::GivenFdKind::invalid || sandboxing) {
      const std::string why = process::refusal_for_sandbox(kind);
      if (!why.empty()) throw Error(errc::config_invalid, std::string(name) + ": " + why);
    }
    return sandboxing && kind == process::GivenFdKind::dev_null ? dev_null : fd;
  };
  given_in_ = given(options.stdin_fd, "stdin_fd");
  given_out_ = given(options.stdout_fd, "stdout_fd");
  given_err_ = given(options.stderr_fd, "stderr_fd");

  // A stream the caller gave a descriptor for is the caller's: no pipe of ours.
  capture_out_ = !options.discard_output && options.stdout_fd < 0;
  capture_err_ = !options.discard_output && options.stderr_fd < 0;
  feed_in_ = options.stdin_data && options.stdin_fd < 0;
  if (capture_out_) make_pipe(out_);
  if (capture_err_) make_pipe(err_);
  if (feed_in_) make_pipe(in_);
}

void CommandStreams::make_pipe(Pipe& p) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw Error(errc::spawn_failed, std::string("pipe: ") + std::strerror(errno));
  }
  p.read.reset(fds[0]);
  p.write.reset(fds[1]);
}

process::ChildStdio CommandStreams::stdio() const {
  auto stream = [&](int callers, bool ours, int child_end) {
    if (callers >= 0) return callers;
    return ours ? child_end : dev_null_;
  };
  return {stream(given_in_, feed_in_, in_.read.get()),
          stream(given_out_, capture_out_, out_.write.get()),
          stream(given_err_, capture_err_, err_.write.get()), dev_null_};
}

void CommandStreams::close_child_ends() noexcept {
  out_.write.reset();
  err_.write.reset();
  in_.read.reset();
}

}  // namespace paddock::manager
