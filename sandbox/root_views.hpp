// The writable roots of one command, each opened once: every later look at a path below a
// root, while the plan is made and in the audit after the command, goes through the root's
// descriptor, never through the names above it.
//
// Why: whoever can write above a workspace (another sandbox whose root is `projects/`, around
// this one's `projects/app`, or the host) can rename a directory on the way for a symlink and
// back while a plan is made. Resolved by name, the plan scanned one tree for its git state and
// protected files (`.git` absent at that instant: "not a repository") and the child attached
// another, the real one, with no cover on its `.git/config`: a hostile test wrote it and the
// host's git ran it. Through the descriptor the plan sees exactly the tree the sandbox gets
// (the child proves the object at the path is that descriptor's, path_identity.hpp), and the
// audit judges that tree too.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/unique_fd.hpp"

namespace paddock::sandbox {

class RootViews {
 public:
  // Opens the directory `path` (canonical) with no symlink on the way, from the deepest root
  // added before that holds it (add outer roots first). Throws Error(spawn_failed) when it no
  // longer resolves that way (replaced while planned).
  void add(const std::string& path);
  // Adds `paths` outermost first, whatever their order: each inner root is then opened from
  // its outer root's descriptor.
  void add_all(std::vector<std::string> paths);
  // The root whose descriptor `path` (a root) was opened from; "" when opened by name.
  std::string opened_from(std::string_view path) const;

  // `path` spelled through the deepest root holding it ("/proc/self/fd/N/rest", "/." for the
  // root itself), for the calls that take a name; `path` itself when no root holds it.
  std::string view(const std::string& path) const;
  // The descriptor of the deepest root holding `path` and the rest below it ("" for the root
  // itself); fd -1 when no root holds it.
  std::pair<int, std::string_view> beneath(std::string_view path) const;

  // Makes `views` (may be null) the ones stable_path() and stable_beneath() use on this
  // thread while it lives; nests.
  class Active {
   public:
    explicit Active(const RootViews* views);
    ~Active();
    Active(const Active&) = delete;
    Active& operator=(const Active&) = delete;

   private:
    const RootViews* outer_;
  };

 private:
  struct Root {
    std::string path;
    UniqueFd fd;
    std::string from;  // the root it was opened beneath, "" for by name
  };
  const Root* holding(std::string_view path) const;
  std::vector<Root> roots_;
};

// Through the roots active on this thread, or `path` as it is.
std::string stable_path(const std::string& path);
std::pair<int, std::string_view> stable_beneath(std::string_view path);

}  // namespace paddock::sandbox
