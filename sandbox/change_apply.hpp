// Applying a command's change set (change_set.hpp) to the host, after the command exited.
//
// Two passes over the layers. The first inspects every entry (bounded) and judges it
// (change_rules.hpp), with conflicts found against the host as it is now: an entry the host
// changed at or after the set was made is never overwritten. Only a complete first pass
// applies anything; a bound or an error leaves the whole set pending (fail closed). The
// second pass applies what passed, one entry at a time, atomically per file: renamed out of the
// layer (or copied to a temporary beside the target when the store is another file system)
// and renamed over the target. Applied entries leave the layer, so an interrupted apply
// resumes where it stopped. Held-back entries stay in the layer, outside the workspace, with
// their reasons in set.json. Cost: O(entries in the layers), never O(workspace).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "paddock/exec_result.hpp"
#include "sandbox/change_set.hpp"

namespace paddock::sandbox {

// One entry as the apply sees it (for `paddock changes show`): 'A'dded, 'M'odified,
// 'D'eleted or 'H'eld, the host's path, the entry in the layer, and why when held.
struct ChangeEntryView {
  char what;
  std::string path;
  std::string layer_path;
  std::string reason;
};

struct ApplyOptions {
  // Entries inspected at most; past it nothing is applied and the set stays pending.
  std::size_t max_entries = 500000;
  // Apply nothing; only judge and count (`paddock changes show`).
  bool dry_run = false;
  // Apply the held-back entries too (`paddock changes apply --held`: a person decided).
  bool include_held = false;
  // The layers are still mounted (a session's command ended, its sandbox lives on): copy
  // every entry out, leave the layers as they are, record what was written
  // (ChangeSetInfo::applied) and keep the set open.
  bool keep_layer = false;
  // The roots as the plan opened them (one per set root, -1: by name): applied through these,
  // the set reaches the very directories its layers were made over, whatever was renamed
  // above them meanwhile. Later (`paddock changes apply`) the roots are opened by name.
  std::vector<int> root_fds;
  // Called for every entry that is a change of its own (not a mere parent directory).
  std::function<void(const ChangeEntryView&)> on_entry;
};

// Judges and applies `set` (updates it: state, held, note; removes it when nothing is left).
// Blocking: file system walks and renames. Never throws for what it finds; throws Error only
// when the store itself cannot be read.
ChangeSummary apply_change_set(ChangeSetInfo& set, const ApplyOptions& options);

}  // namespace paddock::sandbox
