// Hand-written: git's index format (Documentation/gitformat-index.txt) is small and stable,
// and nothing in paddock's dependencies reads it; running git on an index the command wrote
// would be one more program start per apply, with git's own tolerance of such paths.
#include "sandbox/git_index_paths.hpp"

#include <cctype>
#include <cstdint>
#include <optional>

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

// The entries of `index` read with object names of `oid` bytes: "" when all are fine, the
// problem otherwise; nullopt when the layout does not fit (the other object name length).
std::optional<std::string> check(std::string_view index, std::size_t oid) {
  const std::uint32_t version = be32(index, 4);
  const std::uint32_t count = be32(index, 8);
  std::size_t at = 12;
  std::string previous;  // version 4: paths are stored against the one before
  for (std::uint32_t n = 0; n < count; ++n) {
    const std::size_t start = at;
    const std::size_t fixed = 40 + oid + 2;  // stat data, mode, ids, size; name; flags
    if (at + fixed > index.size()) return std::nullopt;
    const unsigned flags = (static_cast<unsigned char>(index[at + 40 + oid]) << 8) |
                           static_cast<unsigned char>(index[at + 40 + oid + 1]);
    at += fixed;
    // Extended flags: git reads them whenever the bit is set, whatever the version.
    if ((flags & 0x4000) != 0) at += 2;
    std::string path;
    if (version == 4) {
      // The number of bytes to drop from the previous path (git's offset varint), then the
      // rest of this one.
      std::uint64_t drop = 0;
      if (at >= index.size()) return std::nullopt;
      unsigned char c = static_cast<unsigned char>(index[at++]);
      drop = c & 127;
      while ((c & 128) != 0) {
        if (at >= index.size() || drop > (1u << 20)) return std::nullopt;
        c = static_cast<unsigned char>(index[at++]);
        drop = ((drop + 1) << 7) | (c & 127);
      }
      if (drop > previous.size()) return std::nullopt;
      const std::size_t nul = index.find('\0', at);
      if (nul == std::string_view::npos) return std::nullopt;
      const std::string suffix(index.substr(at, nul - at));
      // An entry that starts a block of a parallel load (IEOT) is read without the name
      // before it: judged both ways.
      if (drop == 0 && !path_git_writes(suffix)) {
        return "an entry git must never write: '" + suffix + "'";
      }
      path = previous.substr(0, previous.size() - drop) + suffix;
      at = nul + 1;
    } else {
      const std::size_t nul = index.find('\0', at);
      if (nul == std::string_view::npos) return std::nullopt;
      path = std::string(index.substr(at, nul - at));
      // 1 to 8 NULs end the entry at a multiple of 8 bytes from its start.
      at = start + ((nul - start) / 8 + 1) * 8;
      if (at > index.size()) return std::nullopt;
      for (std::size_t k = nul; k < at; ++k) {
        if (index[k] != '\0') return std::nullopt;
      }
    }
    if ((flags & 0x0fff) != 0x0fff && (flags & 0x0fff) != path.size()) return std::nullopt;
    if (!path_git_writes(path)) return "an entry git must never write: '" + path + "'";
    previous = std::move(path);
  }
  return std::string();
}

}  // namespace

std::string index_path_problem(std::string_view index) {
  if (index.size() < 12 || index.substr(0, 4) != "DIRC") return "unreadable (not a git index)";
  const std::uint32_t version = be32(index, 4);
  if (version < 2 || version > 4)
    return "unreadable (index version " + std::to_string(version) + ")";
  // Read with both object name lengths: git's is the repository's (SHA-1 or SHA-256), and an
  // index that reads as harmless one way may not the other.
  bool clean = false;
  for (std::size_t oid : {std::size_t{20}, std::size_t{32}}) {
    auto problem = check(index, oid);
    if (problem && !problem->empty()) return *problem;
    clean = clean || problem.has_value();
  }
  return clean ? std::string() : "unreadable (entries that fit no object name length)";
}

}  // namespace paddock::sandbox
