// The policy's entries and the built-in lists resolved for one command: `~` and relative
// entries, globs, the writable-root candidates and their links, the credential and start-up
// lists per home. Internal to sandbox/: path_policy.cpp combines what these name into rules
// (rule_set.hpp).
#pragma once

#include <string>
#include <vector>

#include "sandbox/path_policy.hpp"
#include "sandbox/path_resolution.hpp"

namespace paddock::sandbox::resolving {

using paths::Resolved;
using paths::Where;

// Where a rule comes from (PathRule::origin).
inline constexpr const char* kPolicy = "policy";
inline constexpr const char* kCredential = "default credential";
inline constexpr const char* kMandatory = "mandatory read-only";
inline constexpr const char* kWorkingDirectory = "working directory";
inline constexpr const char* kStartup = "home start-up";
inline constexpr const char* kHomeReadable = "readable in a hidden home";

// The command's context: canonical cwd and home, the bases relative entries resolve from.
struct Context {
  Resolved cwd;
  std::string home_spelled;  // as given (or from passwd); empty when unknown
  Resolved home;
};

// One entry expanded to the paths it names now. A literal entry names one path (which may not
// exist); a glob names what it matches (maybe nothing). `follow_matched_links`: a glob match
// that is itself a symlink counts as its target (deny rules: the command reads through it) or
// is skipped (allow rules: the command may have planted it). `patterns_out` (a glob only):
// the pattern made absolute, and once more from each host directory link a match could pass
// through (what it names below the link lands at the link's target).
std::vector<Resolved> expand(const std::string& entry, const Context& ctx, const Where& w,
                             bool follow_matched_links,
                             std::vector<std::string>* patterns_out = nullptr);

// The mount layer owns these; a rule on exactly one of them would replace the whole tree.
void refuse_special(const std::string& path, const Where& w);

// A writable root below the trees the sandbox builds itself would attach the host's version
// writable over ours: `--cwd /dev/pts` the host's devpts over the private one, `/sys/fs/cgroup`
// the host's cgroup tmpfs, `/dev/shm` the host's shared memory.
void refuse_pseudo_root(const std::string& path, const Where& w);

// The effective user's home from the passwd entry, looked up once per thread and uid (an NSS
// lookup reads files, and this runs for every command).
const std::string& passwd_home();

// A writable root candidate and how it was reached.
struct WriteRoot {
  Resolved target;
  Where where;
  const char* origin;
};

// An allow rule must not reach outside a writable root through a symlink inside it: the
// command could have planted that link on an earlier run (`ln -s /etc build`, then
// allowWrite ./build). Links outside every writable root are the host's own and fine, and so
// are links that stay inside a root that was itself reached without such a link.
void check_links(const Resolved& t, const Where& w, const std::vector<WriteRoot>& roots,
                 const std::vector<std::string>& trusted);

// A built-in entry resolved for one command.
struct DefaultPath {
  Resolved target;
  PathAccess access;
  const char* origin;
  const char* why;  // for a refused writable root inside it
};

// The built-in lists for one command: credentials (hidden) and the homes' start-up files
// (read-only), `~/` entries once per protected home. Only what can matter is kept: a hidden
// credential, or a path related to one of the writable `roots` (inside one: a rule or a
// watched missing path; containing one: the root is refused). Most entries are neither, and
// this runs for every command.
std::vector<DefaultPath> expand_defaults(const Context& ctx, const std::vector<Context>& homes,
                                         const std::vector<std::string>& roots);

}  // namespace paddock::sandbox::resolving
