// A command and its per-call options.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "paddock/classifier.hpp"
#include "paddock/exec_control.hpp"
#include "paddock/exec_result.hpp"
#include "paddock/network_event.hpp"
#include "paddock/sandbox_policy.hpp"

namespace paddock {

class Session;  // paddock/session.hpp

// argv is executed directly (no shell). A shell string runs only when asked for explicitly,
// through Config::shell, so an agent's quoting mistakes cannot turn into shell injection.
struct Command {
  std::vector<std::string> argv;
  std::optional<std::string> shell;  // set: run `<Config::shell> -c <shell>`

  static Command exec(std::vector<std::string> args) { return {std::move(args), std::nullopt}; }
  static Command shell_string(std::string script) { return {{}, std::move(script)}; }
};

// Called on the command's own strand, in the order the bytes were read. Streaming callers see
// exactly the bytes that are kept: per stream, the first max_output_bytes; once a stream hits
// the cap its chunk is cut there, nothing more is delivered for it, and ExecResult::truncated
// is set. (The pipe is still drained so the child never blocks.)
using OutputCallback = std::function<void(OutputStream, std::string_view)>;
// Called once the command has been started, with its host pid.
using StartedCallback = std::function<void(int pid)>;
// The same moment with what a caller reporting the start needs (a daemon's `started` event).
struct StartInfo {
  int pid = 0;
  Decision decision = Decision::sandboxed;
  std::string rule;
  std::string reason;
  bool sandboxed = false;
};
using StartCallback = std::function<void(const StartInfo&)>;

// An escalated command asks before it starts (Config::commands). The callback gets what was
// classified and a `respond` to call once, from any thread, at any time before the deadline
// (Config::commands.approval_timeout; silence denies). approve_session approves this command
// (its normalised form: the argv, or the shell string) for the rest of the Manager's life.
enum class Approval { approve, approve_session, deny };
struct CommandApprovalRequest {
  std::string command;  // as classified: argv joined with spaces, or the shell string
  std::string rule;
  std::string reason;
};
using CommandApprovalCallback =
    std::function<void(const CommandApprovalRequest&, std::function<void(Approval)> respond)>;

// Policy for one call, on top of the Manager's (agentbox's per-call options). It can add
// writable roots and denials, narrow the network (allowed -> filtered -> blocked, never the
// other way), run shell strings through another shell, and classify with other rules.
// Checked like the Config (E_CONFIG_INVALID naming the field); the same guards apply (a
// writable root that is $HOME or above it is refused as in the settings).
struct CallPolicy {
  std::vector<std::string> allow_write;  // more writable roots (as filesystem.allowWrite)
  std::vector<std::string> deny_read;    // as filesystem.denyRead
  std::vector<std::string> deny_write;   // as filesystem.denyWrite
  std::optional<NetworkMode> network;    // only as strict as the Manager's or stricter
  // Filtered network only; they narrow, never widen: a connection must pass the Manager's
  // rules and these. allowed_domains: this call reaches only these (nullopt: whatever the
  // Manager allows; an empty list: nothing). denied_domains: also denied (`*`, `*:22` too).
  // Same grammar as network.allowedDomains / deniedDomains.
  std::optional<std::vector<std::string>> allowed_domains;
  std::vector<std::string> denied_domains;
  std::optional<std::string> shell;      // for Command::shell_string: an absolute path
  std::optional<CommandRules> commands;  // instead of Config::commands.custom

  // Whether it changes the sandbox (so it cannot apply to a command run on the host).
  bool touches_sandbox() const noexcept {
    return !allow_write.empty() || !deny_read.empty() || !deny_write.empty() ||
           network.has_value() || allowed_domains.has_value() || !denied_domains.empty();
  }
};

struct ExecOptions {
  std::optional<std::string> cwd;          // default: the supervisor's cwd
  std::map<std::string, std::string> env;  // set explicitly, on top of the allow-list
  // The environment the allow-list draws from (KEY=VALUE entries), instead of the supervisor's
  // own: a helper running a client's `paddock run` passes the client's, so the command gets
  // what it would get run in the client's process (PATH included, through the same lists).
  std::optional<std::vector<std::string>> parent_env;
  std::optional<std::chrono::milliseconds> timeout;  // default Config::default_timeout, capped
  std::optional<std::size_t> max_output_bytes;       // per stream; default Config::max_output_bytes
  std::optional<std::string> stdin_data;             // default: /dev/null
  // stdout and stderr go to /dev/null: status only. One fd per command instead of three,
  // for callers that supervise thousands of commands whose output nobody reads.
  bool discard_output = false;
  // false: output goes to on_output only and ExecResult::stdout_data/stderr_data stay empty,
  // so a streaming caller holds no output in memory; max_output_bytes then bounds only what is
  // streamed (SIZE_MAX: no bound). The byte totals and `truncated` are reported either way.
  bool keep_output = true;
  OutputCallback on_output;
  // This call's proxied requests as the filtering proxy decides them (network "filtered"),
  // beside the Manager's NetworkHooks::on_event; called on the proxy's threads.
  NetworkEventSink on_network;
  StartedCallback on_started;
  StartCallback on_start;  // after on_started, on the command's strand
  // Signals from outside the call while it runs (paddock/exec_control.hpp).
  std::shared_ptr<ExecControl> control;
  // Asked for an escalated command (overrides Manager::set_approval for this call).
  CommandApprovalCallback approve;
  // This call's additions to the Manager's policy (see CallPolicy).
  CallPolicy policy;
  // The caller's own descriptors, given to the command as its stdin / stdout / stderr as they
  // are (a shell's redirection, a terminal, a pipe the caller writes or reads itself); -1
  // keeps paddock's handling above. The command gets a copy; the caller keeps and closes its
  // own once the operation has been initiated (for most tokens: once async_exec returned).
  //  - stdin_fd: overrides stdin_data. To stream stdin, give the read end of a pipe, write
  //    chunks to its write end, close it for EOF.
  //  - stdout_fd / stderr_fd: that stream is not captured (no on_output, nothing kept, no
  //    cap), and the command sees its reader go away (EPIPE, SIGPIPE) as it would without
  //    paddock. The CLI does this for a stdout or stderr that is a pipe.
  // A sandboxed command is given an anonymous pipe or a socket only (E_CONFIG_INVALID
  // otherwise): through a file's, directory's or device's descriptor it would reach that host
  // inode whatever the sandbox says (process/given_fd.hpp). /dev/null is accepted and given
  // as the sandbox's own node.
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  // The process whose run this is, when it is not the supervisor's own: a helper running a
  // client's `paddock run` names the client (its pid, and its start time as
  // /proc/<pid>/stat's field 22 read when it connected, against pid reuse). While the command
  // runs, its change set is that process's: "running" while it lives, "abandoned" once it is
  // gone. Whether the set is applied is the caller's word (ExecControl::leave_changes when
  // the client goes); the supervisor applies it under its own name.
  struct ProcessRef {
    int pid = 0;
    std::uint64_t start_time = 0;
  };
  std::optional<ProcessRef> changes_owner;
  // Run in this session's sandbox (paddock/session.hpp, Manager::open_session), one command
  // at a time: its working directory and policy are the session's (a cwd other than the
  // session's, or any CallPolicy sandbox field, is E_CONFIG_INVALID).
  std::shared_ptr<Session> session;
};

}  // namespace paddock
