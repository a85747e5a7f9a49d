// A command's change set in the store: what it wrote into its writable roots, kept in a
// private copy-on-write layer per root (overlayfs in the sandbox's own user namespace,
// linux/child_mounts.cpp) until paddock has judged and applied it after the command exited
// (change_apply.hpp). The command never writes the host's directory itself, so if paddock
// dies first nothing reaches the workspace: the set waits here for `paddock changes`.
//
// One set:
//   <store>/<id>/set.json         who made it, its roots, its state, what was held back
//   <store>/<id>/roots/<n>/upper  the upper layer over root n: the changes themselves
//   <store>/<id>/roots/<n>/work   the overlay's work directory
// The store is the supervisor's own (mode 0700, verified, never through a symlink) and never
// inside a writable root (overlayfs refuses overlapping layers, and the command would see it).
#pragma once

#include <sys/types.h>
#include <time.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/unique_fd.hpp"
#include "paddock/exec_result.hpp"

namespace paddock::sandbox {

struct ChangeSetInfo {
  std::string id;
  std::string dir;                 // <store>/<id>
  std::vector<std::string> roots;  // host paths, canonical; root n's layer is roots/<n>
  // "open": its paddock is running it or died before applying (owner_alive tells which);
  // "applying": judged, being applied (owner dead: interrupted, what is left is the rest);
  // "pending": paddock could not inspect or apply it whole; "held": applied, except the
  // changes in `held`, which stay in the layers; "waiting": a sandbox made ahead has it
  // mounted and no command has run there yet (empty: removed once its owner is gone).
  std::string state = "open";
  std::string command;  // what ran, for `paddock changes list`
  std::string cwd;
  // The store's clock when the layers were made (their directory's change time): an entry
  // of the host changed at or after this moment was changed during the run (a conflict).
  std::int64_t start_sec = 0;
  std::int64_t start_nsec = 0;
  int pid = 0;                  // the process that made it
  std::uint64_t pid_start = 0;  // and its start time (/proc/<pid>/stat), against pid reuse
  std::uint64_t pid_ns = 0;     // and its PID namespace (inode; 0: not recorded)
  // Ours while we may still act on the set (lock_change_set): taken by create_change_set
  // before set.json is first written, given up when it is applied, retired or left. In
  // memory only; copies share it.
  std::shared_ptr<UniqueFd> lock;
  std::vector<HeldChange> held;
  std::string note;  // why pending, or what the last apply said
  // What the apply judges by, fixed when the set is made (change_rules.hpp): the protected
  // homes and the paths read-only in the sandbox (denyWrite, mandatory names), canonical.
  std::vector<std::string> homes;
  std::vector<std::string> deny_write;
  std::vector<std::string> deny_write_patterns;  // the policy's denyWrite globs, absolute
  // Stand-ins for denyWrite paths that did not exist (host paths, below a root): made in the
  // layer before the overlay is mounted, an empty mode-000 file each and the directories
  // missing above it (`placeholder_dirs`). The sandbox binds them read-only, so the command
  // cannot create the path; the apply leaves them out (they are paddock's, not changes).
  std::vector<std::string> placeholders;
  std::vector<std::string> placeholder_dirs;

  // A session on a worktree paddock made (paddock/session.hpp, WorktreeOptions): its common
  // git directory is a root of the set, and there only what a commit on the session's branch
  // writes passes (objects, the branch's ref and reflog, the worktree's own git directory);
  // the repository's other refs, its index and HEAD are held back. In memory only: a set
  // left by a dead session has none, and every such entry is then judged as any git
  // directory's (its worktree's state held back: fail closed).
  struct Worktree {
    std::string common_dir;  // canonical
    std::string admin_dir;   // <common_dir>/worktrees/<name>, the worktree's git directory
    std::string branch;      // refs/heads/<branch>
  };
  std::optional<Worktree> worktree;

  // A session's set (manager/session.hpp) is applied after each of its commands while its
  // layers stay mounted, so by copying (ApplyOptions::keep_layer): overlayfs's layers must
  // not change under it. What each apply wrote, by (root, path below it): the next apply
  // skips an entry the layer and the host both still have as it left them, takes the host's
  // copy it made as its own (not a conflict), and deletes that copy when the command removed
  // the entry from the layer. In memory only: a set left by a dead session has none, and
  // every entry a session applied is then a conflict (held back, fail closed).
  struct Applied {
    ino_t layer_ino = 0;
    off_t layer_size = 0;
    struct timespec layer_ctime {};
    bool host_present = false;  // false: the apply deleted it
    bool directory = false;     // a directory's identity is its inode (its ctime moves)
    dev_t host_dev = 0;
    ino_t host_ino = 0;
    struct timespec host_ctime {};
    // An index: what it said (index_content_key), so a host copy that differs only by a
    // refresh (`git status` rewrites the stat data) is still the one the apply wrote.
    std::string index_key;
  };
  std::map<std::pair<std::size_t, std::string>, Applied> applied;
  // A session's set (saved): applied after each command by copying. `applied_known` (memory
  // only): its session holds it, so `applied` is the whole record. A session's set without it
  // (its session died; `paddock changes apply`) holds back every entry the host does not
  // have: the host may have deleted what an earlier apply wrote.
  bool session = false;
  bool applied_known = false;

  std::string upper(std::size_t root) const;
  std::string work(std::size_t root) const;
};

// The store for a command whose writable roots are `roots`: `configured` if set, else
// $PADDOCK_CHANGE_STORE, $XDG_STATE_HOME/paddock/changes, $HOME/.local/state/paddock/changes,
// then /var/tmp/paddock-changes-<uid>, /tmp/paddock-changes-<uid> — the first that neither
// lies inside a root nor holds one. Created (0700) when missing; refused when it is not a directory
// of ours.
std::string change_store(const std::string& configured, const std::string& home,
                         const std::vector<std::string>& roots);
// Every store this user may have sets in (for `paddock changes`): the same candidates.
std::vector<std::string> change_stores(const std::string& configured, const std::string& home);

// Makes a new set in `store` from `proto` (roots, command, cwd, homes, deny_write,
// placeholders): a layer per root, empty but for the placeholders (and the directories made
// for them, recorded in placeholder_dirs), state "open" (or "waiting", when `proto`'s is),
// owned by this process. Its start is stamped once its layers exist, unless `proto` has one
// (stamped earlier, by stamp_change_set_start): the earlier start is kept.
ChangeSetInfo create_change_set(const std::string& store, ChangeSetInfo proto);
// Sets `set`'s start to now, on the clock of the file system of `dir` (a directory of ours in
// the store, whose mode is set to itself; change_set.cpp says why): a host change from now on
// is one made during the command. Stamped before anything of the host is looked at.
void stamp_change_set_start(ChangeSetInfo& set, const std::string& dir);
// Reads <store>/<id>/set.json; throws Error(config_invalid) when there is no such set.
ChangeSetInfo load_change_set(const std::string& store, const std::string& id);
// Writes set.json atomically (a file beside it, then swapped with it). The file swapped out is
// written over in place by the next save: a reader still reading it then reads it again
// (load_change_set).
void save_change_set(const ChangeSetInfo& set);
// The sets in a store, oldest first. Unreadable entries are skipped, and so are "waiting"
// ones (removed when their owner is gone).
std::vector<ChangeSetInfo> list_change_sets(const std::string& store);
// The process that made an "open" set is still running (so the set is not abandoned).
// `locked`: the caller holds the set's lock (lock_change_set), so an owner in another PID
// namespace, which would hold it while it may act on the set, is gone.
bool owner_alive(const ChangeSetInfo& set, bool locked = false);
// Makes `pid` (started at `start_time`) the set's owner: a helper running a client's
// `paddock run` names the client, so the set is abandoned once the client is gone, as it is
// when a paddock running the command in its own process is killed. Saved by the caller.
void set_change_set_owner(ChangeSetInfo& set, int pid, std::uint64_t start_time);
// /proc/<pid>/stat's field 22 (the process's start, in clock ticks since boot); 0 when gone.
std::uint64_t process_start_time(int pid);
// An exclusive lock on the set (flock on its directory) against another paddock applying,
// discarding or judging it at the same time, waited for up to `wait`. Held while the
// descriptor is open; an invalid descriptor: not had in time, or the set is gone.
UniqueFd lock_change_set(const ChangeSetInfo& set, std::chrono::milliseconds wait);
// Removes the set and everything in it (the overlay leaves its work/work mode 000).
void remove_change_set(const ChangeSetInfo& set);
// A set applied whole, done with: kept as a spare for the next set when its layers stayed
// empty and clean (change_set_spares.cpp), removed otherwise.
void retire_change_set(const ChangeSetInfo& set);
// Takes a spare of `store` as the new set `id` (renamed to <store>/<id>), checked by
// descriptor and given new empty upper layers for `roots` roots; false when no spare fits
// (the caller makes the set afresh). What fails the checks is removed.
bool claim_spare_change_set(const std::string& store, const std::string& id, std::size_t roots);
// Removes the sets of `store` that have no set.json and are at least `min_age` old: their
// maker died between making the directory and writing set.json, before any command ran over
// them, and nothing lists them. Also the spares that no longer pass a claim's checks (a
// claim stops at the first good one). The first claim in a process does it with a minute.
void remove_orphan_change_sets(const std::string& store, std::chrono::seconds min_age);

// Removes `name` in the directory `dir` and everything below it, never following a link and
// never leaving the file system `dev` (a mount point below is an error, EXDEV). Directories
// are given u+rwx first. 0 or an errno. The one recursive delete of the change sets: the
// store's own sets, and a host directory a set deletes.
int remove_tree(int dir, const char* name, dev_t dev);

}  // namespace paddock::sandbox
