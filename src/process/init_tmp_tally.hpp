// What a command left in the sandbox's private /tmp and /var/tmp, counted by paddock-init
// (init_main.cpp) so the result can say what was discarded with the sandbox: those writes
// live in the upper layer of each directory's overlay (a tmpfs of the sandbox's own), which
// the child hands to the init as a descriptor (kInitTmpUpperFd, init_report.hpp) and nothing
// else in the sandbox can reach. The init counts once before the command starts (the mount
// points and hidden names the plan made there) and once after every process of it is gone;
// the difference is the command's. Freestanding, as the init is.
#pragma once

namespace paddock::process::init {

struct TmpTally {
  unsigned long entries = 0;  // every name: files, directories, links, deletions (whiteouts)
  unsigned long bytes = 0;    // regular files' sizes
  bool bounded = false;       // stopped at kTmpTallyMaxEntries or kTmpTallyMaxDepth
};

inline constexpr unsigned long kTmpTallyMaxEntries = 200'000;
inline constexpr int kTmpTallyMaxDepth = 48;

// Adds what is below the directory `dir` (not consumed; read from its start) to `t`.
void tally_tree(int dir, TmpTally& t);

}  // namespace paddock::process::init
