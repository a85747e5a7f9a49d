// The audit after a sandboxed command: what it left where the host executes later.
//
// Protected paths that did not exist when the command started (a `.git/hooks` or `.bashrc`
// not there yet) cannot be covered by a mount without creating a stub on the host, which we
// refuse to do; git state at every depth is rescanned (git_state.hpp). Whatever the audit
// finds is QUARANTINED, not deleted (quarantine.hpp): renamed in place to a name git and
// shells never read, so nothing is destroyed (the host may have written it during the run)
// and the cost is one rename per finding, not a recursive delete.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "paddock/exec_result.hpp"
#include "sandbox/change_set.hpp"
#include "sandbox/path_policy.hpp"

namespace paddock::sandbox {

// What the plan knew before the command; immutable, copied into the audit's thread.
struct AuditPlan {
  std::vector<std::string> protected_missing;  // canonical, sorted
  std::vector<ResolvedFilesystem::Identity> protected_existing;
  GitState git;
  // Mounts the sandbox's namespace lost while the command ran (paddock-init counts them):
  // read-only protected files are then compared by change time too (quarantine.hpp).
  int mounts_dropped = 0;
  // Nothing confirmed the mounts held for the whole run (the init was killed before it
  // reported, or its mount table could not be read at the start): compared as after a drop,
  // without saying one happened.
  bool mounts_unverified = false;
  // The writable roots as the plan opened them: the audit looks below them through these
  // descriptors (root_views.hpp), as the plan did.
  std::shared_ptr<const RootViews> roots;
  // The command's change set (copy-on-write layers over its writable directories), applied
  // after it exits; null when nothing writable is layered.
  std::shared_ptr<ChangeSetInfo> change_set;
  std::string change_store;
  // A session's command ended, its sandbox lives on: the set is applied by copying
  // (ApplyOptions::keep_layer).
  bool keep_layer = false;
};

struct AuditReport {
  std::vector<Violation> violations;
  ChangeSummary changes;  // file-write, one per entry found (moved or not)
  // Non-empty when the host keeps something live the audit could not move, or the audit
  // could not finish: the run must fail with E_SANDBOX_VIOLATION and this text.
  std::string failure;
};

// Blocking (file system walks and renames, bounded by kGitScanEntryLimit and
// kGitAuditTimeLimit): never call it on an event loop's thread.
AuditReport audit_after_command(const AuditPlan& plan, const std::string& program);

}  // namespace paddock::sandbox
