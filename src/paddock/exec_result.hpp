// What a finished command reports (docs/cli.md: the --json object has these fields).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace paddock {

enum class OutputStream { stdout_stream, stderr_stream };

// Something the sandbox refused (filled by the isolation and proxy layers).
struct Violation {
  std::string operation;  // "file-read", "file-write", "network", ...
  std::string path;       // path or host:port
  std::string detail;     // why it was refused
  std::string process;    // the program that tried
  std::string raw;        // the underlying record, verbatim
};

enum class Decision { allow, sandboxed, escalated, forbidden };

// A change the command made that paddock kept out of the workspace, and why (a git hook, a
// file the repository's config names, a start-up file, a conflict with the host's own edit).
struct HeldChange {
  std::string path;    // absolute, as the host names it
  std::string reason;  // one line
  bool operator==(const HeldChange&) const = default;
};

// What became of the command's writes to its writable roots (sandbox/change_set.hpp): they
// went to a private copy-on-write layer, and paddock applied it after the command exited.
struct ChangeSummary {
  std::string id;           // the set in the change store; empty: no change set (nothing writable)
  std::uint64_t added = 0;  // files, directories and links the workspace did not have
  std::uint64_t modified = 0;    // entries it had, replaced
  std::uint64_t deleted = 0;     // entries removed
  std::uint64_t bytes = 0;       // file bytes written into the workspace
  std::vector<HeldChange> held;  // kept in the store, never applied (`paddock changes show`)
  // Non-empty: nothing at all was applied, and why (the set could not be inspected whole);
  // it waits in the store for `paddock changes apply|discard`.
  std::string pending;
};

// What the command wrote to the sandbox's private /tmp and /var/tmp, discarded when the
// sandbox went (those directories live as long as one command; sandbox/README.md).
struct DiscardedWrites {
  std::uint64_t entries = 0;  // names: files, directories, links, deletions of the host's
  std::uint64_t bytes = 0;    // regular files' sizes
  bool at_least = false;      // the count stopped at its bound: there was more
};

struct ExecResult {
  int exit_code = -1;  // the command's status; 128+N if killed by signal N; -1 if never run
  int signal = 0;      // the terminating signal, 0 if it exited
  bool timed_out = false;
  std::string stdout_data;  // empty when ExecOptions::keep_output is false (streamed only)
  std::string stderr_data;
  bool truncated = false;                // either stream hit max_output_bytes
  std::uint64_t stdout_bytes_total = 0;  // bytes the command wrote, kept or not
  std::uint64_t stderr_bytes_total = 0;
  std::chrono::milliseconds duration{0};
  bool sandboxed = false;
  Decision decision = Decision::sandboxed;
  std::string rule;    // the classifier's rule that decided (paddock/classifier.hpp)
  std::string reason;  // and why
  std::vector<Violation> violations;
  ChangeSummary changes;
  DiscardedWrites discarded;
  std::string error;  // set when paddock (not the command) failed: one clear line
  // Status, not an error: set when the command ran on the host although a sandbox was asked
  // for (sandbox.fallback = warn, where this platform could not set it up), saying why.
  std::string unsandboxed_reason;
  // Host pid of the command's leader while it ran (0 if never started). Sandboxed, the leader
  // is paddock-init: the result arrives on its report, once nothing of the command is left,
  // and the init itself may still be exiting then (it is reaped just after). Do not signal or
  // poll this pid once the result is in.
  int pid = 0;
};

const char* to_string(Decision d) noexcept;

}  // namespace paddock
