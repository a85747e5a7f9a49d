// The stand-ins of a new change set: for each denyWrite path the host lacks, an empty file in
// its root's layer (bound read-only in the sandbox, mount_plan.cpp), and the directories on
// the way to it. Used by the change store (change_set.cpp) and the plan (plan_builder.hpp).
#pragma once

#include <sys/stat.h>

#include <string>

#include "sandbox/change_set.hpp"

namespace paddock::sandbox {

// A directory at `at` in a layer standing for the host's directory `host` (st): the same mode
// and owner, so the merged view shows the host's (overlayfs shows the upper one's) and applying
// changes neither. False when that cannot be made so (another user's directory, for an
// unprivileged supervisor) or the command could not enter it: no stand-in is made there.
bool mirror_directory(const std::string& at, const struct stat& host);

// Makes the stand-ins of `set.placeholders` in their roots' layers (the layers are new and
// ours: nothing else writes them yet). A directory on the way that the host has is mirrored;
// one it lacks is made (placeholder_dirs). A stand-in that cannot be made (a name too long for
// the store, a directory that cannot be mirrored) is left out: the apply still holds back
// what the command writes there (deny_write), only not at once. Placeholders outside every
// root are dropped.
void make_placeholders(ChangeSetInfo& set);

// What make_placeholders would keep and make for `set` on the host as it is now, making
// nothing: `placeholders` and `placeholder_dirs` as they would be after it. A plan whose set is
// made only when it is needed (plan_builder.hpp, ChangeSetMaking::on_demand) plans its mounts
// from this; the set made later must come out the same, or the plan is not used.
void plan_placeholders(ChangeSetInfo& set);

}  // namespace paddock::sandbox
