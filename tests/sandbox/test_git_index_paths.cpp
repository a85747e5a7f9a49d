// The index check's reading of extensions, byte by byte: what git's threaded load and its
// untracked-cache reader would take differently from a reading in sequence is held.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "sandbox/git_index_paths.hpp"

using paddock::sandbox::index_path_problem;

namespace {

std::string be32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

// A version-2 index of one entry `a` with `oid`-byte object names; its extensions after.
std::string index_of(std::size_t oid, const std::string& extensions) {
  std::string e(40, '\0');
  e.replace(24, 4, be32(0100644));
  e += std::string(oid, '\x11') + std::string("\0\x01", 2) + "a";
  e += std::string(8 - e.size() % 8, '\0');
  return "DIRC" + be32(2) + be32(1) + e + extensions + std::string(oid, '\0');
}

std::string ext(const std::string& sig, const std::string& payload) {
  return sig + be32(static_cast<std::uint32_t>(payload.size())) + payload;
}

}  // namespace

TEST_CASE("index check: extensions git does not write, or twice, are held", "[changes][index]") {
  CHECK(index_path_problem(index_of(20, ""), 20).empty());
  CHECK(index_path_problem(index_of(20, ext("TREE", "")), 20).empty());
  CHECK_THAT(index_path_problem(index_of(20, ext("ZZZZ", "x")), 20),
             Catch::Contains("git does not write"));
  CHECK_THAT(index_path_problem(index_of(20, ext("TREE", "") + ext("TREE", "")), 20),
             Catch::Contains("twice"));
}

TEST_CASE("index check: EOIE in git 2.39's layout, in either object format", "[changes][index]") {
  // git 2.39 reads EOIE with a 20-byte hash whatever the format: 24 bytes before the checksum.
  for (std::size_t oid : {std::size_t{20}, std::size_t{32}}) {
    const std::size_t end = index_of(oid, "").size() - oid;  // where the entries end
    for (std::size_t payload : {std::size_t{24}, 4 + oid}) {
      INFO(oid << "-byte names, " << payload << "-byte EOIE");
      const std::string hash(payload - 4, '\0');
      const auto eoie = [&](std::size_t offset) {
        return ext("EOIE", be32(static_cast<std::uint32_t>(offset)) + hash);
      };
      CHECK(index_path_problem(index_of(oid, eoie(end)), oid).empty());
      CHECK_THAT(index_path_problem(index_of(oid, eoie(end + 8)), oid),
                 Catch::Contains("not where the entries end"));
    }
  }
}

TEST_CASE("index check: an untracked cache read as git reads it", "[changes][index]") {
  // ident, stat data and flags, hashes, ".gitignore", then the directory blocks.
  const auto untr = [](std::uint32_t dirs, const std::string& blocks) {
    std::string u = std::string(1, '\x02') + "i" + std::string(1, '\0');
    u += std::string(2 * 36 + 4 + 2 * 20, '\0') + ".gitignore" + std::string(1, '\0');
    return ext("UNTR", u + static_cast<char>(dirs) + blocks);
  };
  const auto block = [](int names, int subdirs, const std::string& name, const std::string& list) {
    return std::string(1, static_cast<char>(names)) + static_cast<char>(subdirs) + name +
           std::string(1, '\0') + list;
  };
  const std::string x = std::string("x") + '\0', sub = std::string("sub/") + '\0';
  // The root with `x` and `sub/`, and sub's block: two directories, as declared.
  CHECK(index_path_problem(index_of(20, untr(2, block(2, 1, "", x + sub) + block(1, 0, "sub", x))),
                           20)
            .empty());
  CHECK(index_path_problem(index_of(20, untr(1, block(1, 0, "", std::string(".GIT") + '\0'))), 20)
            .empty());  // a file name on Linux
  // A root claiming more subdirectories than the cache declares (git overflows its array).
  CHECK_THAT(index_path_problem(index_of(20, untr(1, block(1, 5, "", x))), 20),
             Catch::Contains("more directories"));
  CHECK_THAT(
      index_path_problem(index_of(20, untr(3, block(1, 1, "", x) + block(0, 0, "d", ""))), 20),
      Catch::Contains("fewer directories"));
  for (const char* bad : {"..", ".git", "a/b", ""}) {
    INFO(bad);
    CHECK_THAT(
        index_path_problem(index_of(20, untr(1, block(1, 0, "", std::string(bad) + '\0'))), 20),
        Catch::Contains("untracked cache"));
  }
}
