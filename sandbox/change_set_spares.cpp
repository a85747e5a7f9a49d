// Spare change sets: a set whose layers stayed empty is kept for the next command instead of
// removed. Making a set costs five new directories and removing it as many removals (~0.7 ms
// on ext4, as much as the spawn itself: its inode allocator); a spare is taken with one
// rename and one new directory.
//
// What a spare must never do is give one command another's writes or a broken layer, so:
//   - a set is retired as a spare only when its upper layers are empty and its overlay work
//     directories hold nothing but the overlay's own 0:0 whiteouts (which it clears itself
//     when it is mounted again); anything else is removed as before;
//   - the rename that claims a spare is atomic between threads and processes, and the
//     claimed directory is checked again, by descriptor, never through a link: ours, 0700,
//     on the store's file system, exactly the layers the new set needs, clean work dirs;
//   - each claim renames a new upper directory over the old (empty) one: whatever still held
//     the old layer open now writes into a removed directory, never the next command's layer
//     (rename(2) refuses a non-empty target: a late write makes the claim fail, not leak).
// A spare is named spare.<12 hex>: list_change_sets never shows it (not a set id).
// Also here: sets orphaned before their set.json was written, removed after a minute.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "base/directory_entries.hpp"
#include "base/unique_fd.hpp"
#include "paddock/errors.hpp"
#include "sandbox/change_set.hpp"
#include "sandbox/path_resolution.hpp"

namespace paddock::sandbox {
namespace {

constexpr char kSparePrefix[] = "spare.";
constexpr int kClaimTries = 4;  // spares looked at per new set before one is made afresh
constexpr std::chrono::seconds kOrphanAge{60};

// A set's id: 12 lower-case hex digits (change_set.cpp makes them).
bool is_set_id(const char* name) {
  const std::size_t n = std::strlen(name);
  return n == 12 && std::strspn(name, "0123456789abcdef") == n;
}

bool is_spare_name(const char* name) {
  return std::strncmp(name, kSparePrefix, sizeof kSparePrefix - 1) == 0 &&
         is_set_id(name + sizeof kSparePrefix - 1);
}

// The store itself, never through a link; -1 otherwise, with its stat in `st`.
int open_store(const std::string& store, struct stat& st) {
  const int fd = ::open(store.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && ::fstat(fd, &st) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// `name` in `dir` as a directory, never through a link; -1 otherwise.
int open_dir(int dir, const char* name) {
  return ::openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

// The names in the open directory `fd`, or false when it cannot be read or holds more than
// `max` (no layer of ours does).
bool entries(int fd, std::vector<std::string>& out, std::size_t max = 64) {
  bool fits = true;
  const int err = base::for_each_directory_entry(fd, [&](const char* name, unsigned char) {
    if (out.size() == max) return fits = false;
    out.emplace_back(name);
    return true;
  });
  return err == 0 && fits;
}

bool empty_directory(int fd) {
  std::vector<std::string> names;
  return entries(fd, names, 0) && names.empty();
}

// The overlay's work directory `work` of a layer: nothing, or its own `work` holding only
// whiteouts (character devices 0:0, the shared whiteout overlayfs keeps there), which the
// overlay clears when it is mounted again. Anything else (a file, a directory, another
// device) could make that clean-up fail, and overlayfs then mounts read-only with no more
// than a kernel warning.
bool clean_work_directory(int work) {
  std::vector<std::string> names;
  if (!entries(work, names, 1)) return false;
  if (names.empty()) return true;
  if (names[0] != "work") return false;
  struct stat st;
  if (::fstatat(work, "work", &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
      st.st_uid != ::geteuid()) {
    return false;
  }
  // The overlay leaves it mode 000; it is ours, so it may be listed after a chmod.
  if ((st.st_mode & 0500) != 0500 && ::fchmodat(work, "work", 0700, AT_SYMLINK_NOFOLLOW) != 0) {
    return false;  // never through a link put there since the lstat
  }
  UniqueFd inner(open_dir(work, "work"));
  if (inner.get() < 0) return false;
  std::vector<std::string> leftovers;
  if (!entries(inner.get(), leftovers)) return false;
  for (const auto& name : leftovers) {
    if (::fstatat(inner.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISCHR(st.st_mode) || st.st_rdev != makedev(0, 0)) {
      return false;
    }
  }
  return true;
}

// The layers of the open set directory `set` are exactly roots/0 .. roots/<count-1>, each
// with an upper and a work directory and nothing else, every work directory clean, every
// upper empty. With `fresh_upper` each upper is then replaced by a new empty directory.
bool layers_reusable(int set, std::size_t count, bool fresh_upper) {
  UniqueFd roots(open_dir(set, "roots"));
  std::vector<std::string> names;
  if (roots.get() < 0 || !entries(roots.get(), names) || names.size() != count) return false;
  for (std::size_t i = 0; i < count; ++i) {
    const std::string n = std::to_string(i);
    UniqueFd layer(open_dir(roots.get(), n.c_str()));
    std::vector<std::string> parts;
    if (layer.get() < 0 || !entries(layer.get(), parts) || parts.size() != 2) return false;
    UniqueFd upper(open_dir(layer.get(), "upper"));
    UniqueFd work(open_dir(layer.get(), "work"));
    if (upper.get() < 0 || work.get() < 0 || !empty_directory(upper.get()) ||
        !clean_work_directory(work.get())) {
      return false;
    }
    if (!fresh_upper) continue;
    if (::mkdirat(layer.get(), "upper.new", 0700) != 0) return false;
    // Over the old one, which must still be empty (rename refuses a non-empty directory).
    if (::renameat(layer.get(), "upper.new", layer.get(), "upper") != 0) {
      ::unlinkat(layer.get(), "upper.new", AT_REMOVEDIR);
      return false;
    }
  }
  return true;
}

// The open spare (or just claimed set) `set` is ours, 0700, on the store's file system
// `dev`, and its layers pass layers_reusable for `count` roots (with `fresh_upper`).
bool fit_spare(int set, dev_t dev, std::size_t count, bool fresh_upper) {
  struct stat st;
  return set >= 0 && ::fstat(set, &st) == 0 && st.st_uid == ::geteuid() &&
         (st.st_mode & 07777) == 0700 && st.st_dev == dev &&
         layers_reusable(set, count, fresh_upper);
}

}  // namespace

bool claim_spare_change_set(const std::string& store, const std::string& id, std::size_t roots) {
  struct stat store_st;
  UniqueFd dir(open_store(store, store_st));
  if (dir.get() < 0) return false;
  {
    // Once per store in a process: a store of many held sets is not listed per command.
    static std::mutex mutex;
    static std::set<std::string> swept;
    std::unique_lock lock(mutex);
    if (swept.insert(store).second) {
      lock.unlock();
      remove_orphan_change_sets(store, kOrphanAge);
    }
  }
  std::vector<std::string> spares;
  base::for_each_directory_entry(dir.get(), [&](const char* name, unsigned char) {
    if (is_spare_name(name)) spares.emplace_back(name);
    return spares.size() < kClaimTries;
  });
  for (const auto& spare : spares) {
    // The claim: another thread or process that took it first leaves ENOENT here.
    if (::renameat2(dir.get(), spare.c_str(), dir.get(), id.c_str(), RENAME_NOREPLACE) != 0) {
      continue;
    }
    UniqueFd set(open_dir(dir.get(), id.c_str()));
    if (fit_spare(set.get(), store_st.st_dev, roots, true)) {
      ::unlinkat(set.get(), "set.json", 0);  // the retired set's; the new one is written next
      return true;
    }
    // Not fit to be a layer (planted, or tampered with since): gone, whatever it is.
    remove_tree(dir.get(), id.c_str(), store_st.st_dev);
  }
  return false;
}

void remove_orphan_change_sets(const std::string& store, std::chrono::seconds min_age) {
  struct stat store_st;
  UniqueFd dir(open_store(store, store_st));
  if (dir.get() < 0) return;
  std::vector<std::string> sets, spares;
  base::for_each_directory_entry(dir.get(), [&](const char* name, unsigned char) {
    if (is_set_id(name)) sets.emplace_back(name);
    if (is_spare_name(name)) spares.emplace_back(name);
    return true;
  });
  // Spares that no longer pass the checks: a claim looks at a few and stops at the first
  // good one, so a bad one behind it would otherwise stay for good.
  for (const auto& name : spares) {
    UniqueFd spare(open_dir(dir.get(), name.c_str()));
    UniqueFd roots(spare.get() >= 0 ? open_dir(spare.get(), "roots") : -1);
    std::vector<std::string> layers;
    const bool ok = roots.get() >= 0 && entries(roots.get(), layers) &&
                    fit_spare(spare.get(), store_st.st_dev, layers.size(), false);
    if (!ok) remove_tree(dir.get(), name.c_str(), store_st.st_dev);
  }
  const auto now = std::chrono::system_clock::now();
  for (const auto& name : sets) {
    struct stat st;
    if (::fstatat(dir.get(), (name + "/set.json").c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 ||
        errno != ENOENT || ::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) {
      continue;
    }
    const auto changed = std::chrono::system_clock::time_point(
        std::chrono::seconds(st.st_ctim.tv_sec) + std::chrono::nanoseconds(st.st_ctim.tv_nsec));
    if (now - changed >= min_age) remove_tree(dir.get(), name.c_str(), store_st.st_dev);
  }
}

void retire_change_set(const ChangeSetInfo& set) {
  // Given up first: a spare is claimed and locked as another set.
  if (set.lock) set.lock->reset();
  struct stat store_st;
  UniqueFd dir(open_store(std::string(paths::parent_of(set.dir)), store_st));
  // Stand-ins are the policy's, not every command's: such a set is not kept.
  if (dir.get() >= 0 && set.placeholders.empty() && set.placeholder_dirs.empty()) {
    UniqueFd own(open_dir(dir.get(), set.id.c_str()));
    // Named after the set's own id: unique in the store as long as the set is there.
    const std::string spare = kSparePrefix + set.id;
    if (own.get() >= 0 && layers_reusable(own.get(), set.roots.size(), false) &&
        ::renameat2(dir.get(), set.id.c_str(), dir.get(), spare.c_str(), RENAME_NOREPLACE) == 0) {
      // Renamed first: a set.json without its set never exists, and a spare that still has
      // one is not listed (its name is no set id).
      UniqueFd moved(open_dir(dir.get(), spare.c_str()));
      if (moved.get() >= 0) ::unlinkat(moved.get(), "set.json", 0);
      return;
    }
  }
  remove_change_set(set);
}

}  // namespace paddock::sandbox
