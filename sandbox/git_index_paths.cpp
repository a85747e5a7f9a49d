// Hand-written: git's index format (Documentation/gitformat-index.txt) is small and stable,
// and nothing in paddock's dependencies reads it; running git on an index the command wrote
// would be one more program start per apply, with git's own tolerance of such paths.
#include "sandbox/git_index_paths.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <vector>

namespace paddock::sandbox {
namespace {

std::uint32_t be32(std::string_view s, std::size_t at) {
  return (std::uint32_t{static_cast<unsigned char>(s[at])} << 24) |
         (std::uint32_t{static_cast<unsigned char>(s[at + 1])} << 16) |
         (std::uint32_t{static_cast<unsigned char>(s[at + 2])} << 8) |
         std::uint32_t{static_cast<unsigned char>(s[at + 3])};
}

// What git's verify_path refuses, the parts that matter on Linux: absolute, empty, `.` or
// `..` components, and `.git` in any case as a component.
bool path_git_writes(std::string_view path) {
  if (path.empty() || path.front() == '/' || path.back() == '/') return false;
  for (std::size_t at = 0; at <= path.size();) {
    std::size_t end = path.find('/', at);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view c = path.substr(at, end - at);
    if (c.empty() || c == "." || c == "..") return false;
    if (c.size() == 4 && c[0] == '.' && std::tolower(static_cast<unsigned char>(c[1])) == 'g' &&
        std::tolower(static_cast<unsigned char>(c[2])) == 'i' &&
        std::tolower(static_cast<unsigned char>(c[3])) == 't') {
      return false;
    }
    at = end + 1;
  }
  return true;
}

// git's offset varint at `at` (advanced past it), or nullopt when it runs off the end or past
// any length an index can hold.
std::optional<std::uint64_t> varint(std::string_view s, std::size_t& at) {
  if (at >= s.size()) return std::nullopt;
  unsigned char c = static_cast<unsigned char>(s[at++]);
  std::uint64_t value = c & 127;
  while ((c & 128) != 0) {
    if (at >= s.size() || value > (1u << 20)) return std::nullopt;
    c = static_cast<unsigned char>(s[at++]);
    value = ((value + 1) << 7) | (c & 127);
  }
  return value;
}

// The NUL-ended string at `at` (advanced past its NUL), or nullopt.
std::optional<std::string_view> c_string(std::string_view s, std::size_t& at) {
  const std::size_t nul = s.find('\0', at);
  if (nul == std::string_view::npos) return std::nullopt;
  const std::string_view out = s.substr(at, nul - at);
  at = nul + 1;
  return out;
}

// The untracked cache (the UNTR extension, Documentation/gitformat-index.txt): per directory,
// the names `git status` lists as untracked without reading the directory again. git's reader
// trusts its counts (a directory claiming more subdirectories than the cache declares
// overflows its array: every later git command crashed), so the blocks are read as git reads
// them, depth first, and must be exactly as many as declared; each directory and each name
// must be one component (a name may end in `/`: an untracked directory). "" when all is
// well, else the problem. Not read: the ewah bitmaps after the blocks.
std::string untracked_cache_problem(std::string_view u, std::size_t oid) {
  std::size_t at = 0;
  const auto ident = varint(u, at);  // "Location <work tree>, system <uname>"
  if (!ident || *ident > u.size() - std::min(u.size(), at)) return "unreadable untracked cache";
  at += *ident;
  at += 2 * 36 + 4 + 2 * oid;  // the exclude files' stat data, dir_flags, their hashes
  if (at > u.size() || !c_string(u, at)) return "unreadable untracked cache";  // ".gitignore"
  const auto dirs = varint(u, at);
  if (!dirs) return "unreadable untracked cache";
  if (*dirs == 0) return {};
  // One component, as git itself records them (case kept: `.GIT` is a file name on Linux).
  const auto one_component = [](std::string_view name) {
    return !name.empty() && name != "." && name != ".." && name != ".git" &&
           name.find('/') == std::string_view::npos;
  };
  std::uint64_t read = 0;
  std::vector<std::uint64_t> children_left;  // of each directory on the way down
  do {
    if (!children_left.empty()) --children_left.back();
    if (read == *dirs) return "an untracked cache with more directories than it declares";
    const auto names = varint(u, at), subdirs = varint(u, at);
    const auto dir = subdirs ? c_string(u, at) : std::nullopt;
    if (!names || !dir) return "unreadable untracked cache";
    if ((read == 0) != dir->empty() || (read > 0 && !one_component(*dir))) {
      return "an untracked cache naming the directory '" + std::string(*dir) + "'";
    }
    ++read;
    for (std::uint64_t n = 0; n < *names; ++n) {
      const auto name = c_string(u, at);
      if (!name) return "unreadable untracked cache";
      std::string_view judged = *name;
      if (judged.size() > 1 && judged.back() == '/') judged.remove_suffix(1);
      if (!one_component(judged)) {
        return "an untracked cache naming '" + std::string(*name) + "'";
      }
    }
    children_left.push_back(*subdirs);
    while (!children_left.empty() && children_left.back() == 0) children_left.pop_back();
  } while (!children_left.empty());
  if (read != *dirs) return "an untracked cache with fewer directories than it declares";
  return {};
}

// The entries of `index` read as git's create_from_disk reads them with object names of
// `oid` bytes: "" when all are fine, else the problem. Where git trusts the file and this
// reading cannot (a name's length and its NUL disagree, a NUL inside a name), the index is
// held: git itself never writes such an entry.
std::string check(std::string_view index, std::size_t oid, std::string* key = nullptr) {
  const std::uint32_t version = be32(index, 4);
  const std::uint32_t count = be32(index, 8);
  bool unnamed = false;             // entries with no name (split index, below)
  std::vector<std::size_t> starts;  // each entry's offset
  std::vector<bool> keeps;          // version 4: the entry keeps part of the previous name
  std::size_t at = 12;
  std::string previous;  // version 4: paths are stored against the one before
  for (std::uint32_t n = 0; n < count; ++n) {
    const std::size_t start = at;
    starts.push_back(start);
    const std::size_t fixed = 40 + oid + 2;  // stat data, mode, ids, size; name; flags
    if (at + fixed > index.size()) return "unreadable (an entry past the end)";
    const std::uint32_t mode = be32(index, at + 24);
    const unsigned flags = (static_cast<unsigned char>(index[at + 40 + oid]) << 8) |
                           static_cast<unsigned char>(index[at + 40 + oid + 1]);
    at += fixed;
    // Extended flags: git reads them whenever the bit is set, whatever the version.
    if ((flags & 0x4000) != 0) at += 2;
    const std::size_t named = flags & 0x0fff;  // 0xfff: as long as its NUL says
    std::size_t kept = 0;                      // version 4: bytes of the previous path kept
    if (version == 4) {
      // The number of bytes to drop from the previous path (git's offset varint).
      const auto drop = varint(index, at);
      if (!drop || *drop > previous.size()) return "unreadable (a malformed name)";
      kept = previous.size() - *drop;
    }
    const std::size_t nul = index.find('\0', at);
    if (nul == std::string_view::npos) return "unreadable (a name past the end)";
    if (named != 0x0fff && named != kept + (nul - at)) {
      return "an entry whose name length and end disagree";
    }
    const std::string suffix(index.substr(at, nul - at));
    keeps.push_back(kept > 0);
    std::string path = previous.substr(0, kept) + suffix;
    at = version == 4 ? nul + 1 : start + ((nul - start) / 8 + 1) * 8;  // 1 to 8 NULs
    if (at > index.size()) return "unreadable (an entry past the end)";
    if (key != nullptr) {
      // What the entry says, not when it was looked at: mode, object name, flags (stage,
      // assume-valid, the extended ones), path. The stat data (40 bytes) is left out.
      key->append(index.substr(start + 24, 4));
      key->append(index.substr(start + 40, oid + 2 + ((flags & 0x4000) != 0 ? 2 : 0)));
      key->append(path);
      key->push_back('\0');
    }
    // A sparse index's directory entry names a directory, with a `/` at the end.
    const bool sparse_dir = (mode & 0170000) == 0040000;
    std::string_view judged = path;
    if (sparse_dir && judged.size() > 1 && judged.back() == '/') judged.remove_suffix(1);
    if (path.empty()) {
      unnamed = true;
    } else if (!path_git_writes(judged)) {
      return "an entry git must never write: '" + path + "'";
    }
    previous = std::move(path);
  }
  const std::size_t entries_end = at;
  // git loads a large index on several threads (index.threads, by default one per 10,000
  // entries up to the CPUs): then it reads the extensions from where the EOIE extension says
  // they start, and the entries from where the IEOT extension says each block starts, not
  // one after another. Both must agree with this reading, or git reads other entries.
  // EOIE: always the last extension, right before the checksum (git looks only there). git
  // 2.39 reads it with a SHA-1-sized hash (24 bytes) in any object format; later ones may
  // size it by the format: both are checked.
  for (const std::size_t payload : {std::size_t{24}, 4 + oid}) {
    if (index.size() < 12 + 8 + payload + oid) continue;
    const std::size_t e = index.size() - oid - 8 - payload;
    if (index.substr(e, 4) == "EOIE" && be32(index, e + 4) == payload &&
        be32(index, e + 8) != entries_end) {
      return "an end-of-entries extension (EOIE) that is not where the entries end";
    }
  }
  // Extensions: a 4-byte signature and a 4-byte size each, up to the checksum. Entries
  // without a name stand for the shared index's entry in their place (split index: the
  // `link` extension names the shared index, which is checked as an index of its own).
  bool linked = false, offsets = false;
  const std::size_t limit = index.size() - std::min(index.size(), oid);
  // Only the extensions git writes, each once, EOIE last: nothing hidden inside another's
  // name, nothing git would find where this walk does not look.
  static constexpr std::string_view kKnown[] = {"TREE", "REUC", "link", "UNTR",
                                                "FSMN", "EOIE", "IEOT", "sdir"};
  std::vector<std::string_view> seen;
  while (at + 8 <= limit) {
    const std::size_t size = be32(index, at + 4);
    const std::string_view sig = index.substr(at, 4);
    if (std::find(std::begin(kKnown), std::end(kKnown), sig) == std::end(kKnown)) {
      return "an index extension git does not write ('" + std::string(sig) + "')";
    }
    if (std::find(seen.begin(), seen.end(), sig) != seen.end()) {
      return "the index extension " + std::string(sig) + " twice";
    }
    seen.push_back(sig);
    if (sig == "EOIE" && at + 8 + size != limit) {
      return "an end-of-entries extension (EOIE) that is not the last";
    }
    linked = linked || index.substr(at, 4) == "link";
    if (index.substr(at, 4) == "UNTR") {
      if (at + 8 + size > limit) return "unreadable untracked cache";
      if (std::string bad = untracked_cache_problem(index.substr(at + 8, size), oid);
          !bad.empty()) {
        return bad;
      }
    }
    if (index.substr(at, 4) == "IEOT" && !offsets) {
      offsets = true;
      // A version, then each block's offset and entry count: the blocks must be the
      // entries as read here, in order, all of them.
      if (size < 4 || (size - 4) % 8 != 0 || at + 8 + size > limit || be32(index, at + 8) != 1) {
        return "an entry offset table (IEOT) git would misread";
      }
      std::size_t entry = 0;
      for (std::size_t b = at + 12; b < at + 8 + size; b += 8) {
        const std::size_t offset = be32(index, b), entries = be32(index, b + 4);
        if (entry >= starts.size() || starts[entry] != offset || entries == 0) {
          return "an entry offset table (IEOT) that does not match the entries";
        }
        // git reads a block's first entry without the name before it, and the rest of the
        // block against what it read: the same names as here only when that entry keeps
        // nothing of the previous name (as git writes it).
        if (keeps[entry]) {
          return "an entry offset table (IEOT) whose block starts in the middle of a name";
        }
        entry += entries;
      }
      if (entry != starts.size()) {
        return "an entry offset table (IEOT) that does not match the entries";
      }
    }
    at += 8 + size;
  }
  if (unnamed && !linked) return "an entry with no name outside a split index";
  if (key != nullptr && linked) return "a split index (its entries are elsewhere)";
  return std::string();
}

}  // namespace

std::optional<std::string> index_content_key(std::string_view index, std::size_t oid) {
  if (!index_path_problem(index, oid).empty()) return std::nullopt;
  std::string key;
  if (!check(index, oid, &key).empty()) return std::nullopt;
  return key;
}

std::string index_path_problem(std::string_view index, std::size_t oid) {
  if (index.size() < 12 || index.substr(0, 4) != "DIRC") return "unreadable (not a git index)";
  const std::uint32_t version = be32(index, 4);
  if (version < 2 || version > 4)
    return "unreadable (index version " + std::to_string(version) + ")";
  return check(index, oid);
}

}  // namespace paddock::sandbox
