// `paddock changes list|show|apply|discard`: the change sets that wait in the store
// (sandbox/change_set.hpp). A set waits when its paddock died before applying it (killed,
// SIGKILL, OOM), when it could not be inspected whole (nothing of it applied), or when changes
// were held back (what git or a shell would run later). A person decides here.
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/terminal.hpp"
#include "paddock/errors.hpp"
#include "sandbox/change_apply.hpp"
#include "sandbox/change_set.hpp"

extern char** environ;

namespace paddock::cli {
namespace {

struct ChangesArgs {
  std::string id;
  std::string store;
  bool json = false;
  bool diff = false;
  bool held = false;
};

std::vector<std::string> stores(const ChangesArgs& args) {
  const char* home = std::getenv("HOME");
  return sandbox::change_stores(args.store, home != nullptr ? home : "");
}

// What a set is now: "running" (its paddock is running it), "abandoned" (its paddock died
// before applying: nothing of it is in the workspace), "applying", "interrupted" (its paddock
// died while applying: what is left in it is the rest), "pending", "held"; "waiting" and
// "unused": a sandbox made ahead that no command ran in (its paddock alive, or gone).
// `locked`: we hold the set's lock (its owner, wherever it runs, does not).
std::string status_of(const sandbox::ChangeSetInfo& set, bool locked = false) {
  const bool alive = sandbox::owner_alive(set, locked);
  if (set.state == "open") return alive ? "running" : "abandoned";
  if (set.state == "waiting") return alive ? "waiting" : "unused";
  if (set.state == "applying") return alive ? "applying" : "interrupted";
  return set.state;
}

std::optional<sandbox::ChangeSetInfo> find_set(const ChangesArgs& args) {
  for (const auto& store : stores(args)) {
    try {
      return sandbox::load_change_set(store, args.id);
    } catch (const Error&) {
    }
  }
  say("changes: no change set '" + args.id + "' (see paddock changes list)");
  return std::nullopt;
}

std::string when(const sandbox::ChangeSetInfo& set) {
  char buf[32];
  const std::time_t t = static_cast<std::time_t>(set.start_sec);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

int list(const ChangesArgs& args) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& store : stores(args)) {
    for (const auto& set : sandbox::list_change_sets(store)) {
      const std::string status = status_of(set);
      if (args.json) {
        out.push_back({{"id", set.id},
                       {"status", status},
                       {"started", when(set)},
                       {"command", set.command},
                       {"cwd", set.cwd},
                       {"roots", set.roots},
                       {"held", set.held.size()},
                       {"note", set.note},
                       {"store", store}});
        continue;
      }
      std::printf(
          "%s  %-9s  %s  %s (in %s)%s\n", set.id.c_str(), status.c_str(), when(set).c_str(),
          set.command.c_str(), set.cwd.c_str(),
          set.held.empty() ? "" : ("  " + std::to_string(set.held.size()) + " held").c_str());
      if (!set.note.empty()) std::printf("    %s\n", set.note.c_str());
    }
  }
  if (args.json) std::printf("%s\n", out.dump().c_str());
  return 0;
}

// A path as one visible line: a name with a newline or a terminal escape in it cannot fake
// or hide a line of the listing a person decides on.
std::string shown(const std::string& path) {
  std::string out;
  for (unsigned char c : path) {
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// `diff -u` of the host's file against the layer's (diffutils: never the workspace's git,
// whose config could name a diff driver to run).
void print_diff(const sandbox::ChangeEntryView& e) {
  // Regular files only: diff would block on a FIFO the command left.
  struct stat layer;
  if (e.what != 'D' && (::lstat(e.layer_path.c_str(), &layer) != 0 || !S_ISREG(layer.st_mode))) {
    return;
  }
  std::fflush(stdout);
  struct stat st;
  const bool on_host = ::lstat(e.path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  const std::string from = e.what == 'A' || !on_host ? std::string("/dev/null") : e.path;
  const std::string to = e.what == 'D' ? std::string("/dev/null") : e.layer_path;
  const char* argv[] = {"diff",         "-u",         "--label",  e.path.c_str(), "--label",
                        e.path.c_str(), from.c_str(), to.c_str(), nullptr};
  pid_t pid = 0;
  if (::posix_spawnp(&pid, "diff", nullptr, nullptr, const_cast<char**>(argv), environ) == 0) {
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
}

int show(const ChangesArgs& args) {
  auto set = find_set(args);
  if (!set) return kExitPaddockFailed;
  sandbox::ApplyOptions options;
  options.dry_run = true;
  nlohmann::json entries = nlohmann::json::array();
  std::vector<sandbox::ChangeEntryView> seen;
  options.on_entry = [&](const sandbox::ChangeEntryView& e) { seen.push_back(e); };
  const ChangeSummary summary = sandbox::apply_change_set(*set, options);
  if (args.json) {
    for (const auto& e : seen) {
      entries.push_back(
          {{"change", std::string(1, e.what)}, {"path", e.path}, {"reason", e.reason}});
    }
    std::printf("%s\n", nlohmann::json{{"id", set->id},
                                       {"status", status_of(*set)},
                                       {"command", set->command},
                                       {"cwd", set->cwd},
                                       {"entries", entries},
                                       {"pending", summary.pending}}
                            .dump()
                            .c_str());
    return 0;
  }
  std::printf("change set %s (%s): %s in %s, started %s\n", set->id.c_str(),
              status_of(*set).c_str(), set->command.c_str(), set->cwd.c_str(), when(*set).c_str());
  if (set->state == "waiting") {
    std::printf("a sandbox made ahead for the next command: no command has run in it yet\n");
  }
  if (!summary.pending.empty())
    std::printf("cannot be applied as it is: %s\n", summary.pending.c_str());
  if (set->session) {
    // Its layer keeps what each command's apply copied: judged here without the session's
    // record of those applies, they look like conflicts or like new files.
    std::printf(
        "a session's set: what its session applied already is known to the session only, so "
        "entries here may be on the host already; %s\n",
        status_of(*set) == "running"
            ? "`paddock session stop` applies the rest"
            : "with its session gone, what the host lacks is held back (the host may have "
              "deleted it)");
  }
  for (const auto& e : seen) {
    std::printf("%c %s%s\n", e.what, shown(e.path).c_str(),
                e.reason.empty() ? "" : ("  (" + shown(e.reason) + ")").c_str());
    if (args.diff && (e.what == 'A' || e.what == 'M' || e.what == 'H')) print_diff(e);
  }
  return 0;
}

// Whether `set` is still another paddock's to decide (said why), before the lock and after.
bool in_use(const sandbox::ChangeSetInfo& set, bool locked = false) {
  const std::string status = status_of(set, locked);
  if (status == "waiting") {
    say("changes: set " + set.id + " is a sandbox paddock (pid " + std::to_string(set.pid) +
        ") made ahead for the next command: no command has written it yet");
    return true;
  }
  if (status == "running" || status == "applying") {
    say("changes: set " + set.id + " belongs to a paddock that is still running (pid " +
        std::to_string(set.pid) +
        "); it applies the set itself: when its command ends, or, a session's, after each "
        "command and at `paddock session stop`");
    return true;
  }
  return false;
}

int apply_or_discard(const ChangesArgs& args, bool apply) {
  auto set = find_set(args);
  if (!set) return kExitPaddockFailed;
  if (status_of(*set) != "unused" && in_use(*set)) return kExitPaddockFailed;
  // A helper whose client was killed may still be ending the command (its set is abandoned
  // the moment the client is gone): its lock says when it is done. Then the set as it is now.
  UniqueFd lock = sandbox::lock_change_set(*set, std::chrono::seconds(10));
  if (lock.get() < 0) {
    say("changes: set " + set->id +
        (::access(set->dir.c_str(), F_OK) == 0
             ? " is still locked by another paddock after 10 s; try again when it is done"
             : " is gone: applied or discarded meanwhile"));
    return kExitPaddockFailed;
  }
  set = find_set(args);
  if (!set) return kExitPaddockFailed;
  if (status_of(*set, true) == "unused") {
    sandbox::remove_change_set(*set);
    std::printf("change set %s was a sandbox made ahead that no command used: removed\n",
                set->id.c_str());
    return 0;
  }
  if (in_use(*set, true)) return kExitPaddockFailed;
  if (!apply) {
    sandbox::remove_change_set(*set);
    std::printf("discarded change set %s\n", set->id.c_str());
    return 0;
  }
  sandbox::ApplyOptions options;
  options.include_held = args.held;
  const ChangeSummary s = sandbox::apply_change_set(*set, options);
  std::printf("change set %s: %llu added, %llu modified, %llu deleted, %llu bytes\n",
              set->id.c_str(), static_cast<unsigned long long>(s.added),
              static_cast<unsigned long long>(s.modified),
              static_cast<unsigned long long>(s.deleted), static_cast<unsigned long long>(s.bytes));
  for (const auto& h : s.held)
    std::printf("held back: %s (%s)\n", shown(h.path).c_str(), shown(h.reason).c_str());
  if (!s.pending.empty()) {
    say("changes: not applied whole: " + s.pending);
    return kExitPaddockFailed;
  }
  if (!s.held.empty()) {
    std::printf(
        "the held-back changes stay in the set; `paddock changes apply --held %s` applies "
        "them anyway, `paddock changes discard %s` drops them\n",
        set->id.c_str(), set->id.c_str());
  }
  return 0;
}

}  // namespace

std::function<int()> add_changes_command(CLI::App& app) {
  auto args = std::make_shared<ChangesArgs>();
  CLI::App* changes = app.add_subcommand(
      "changes",
      "Change sets that wait: a command's writes paddock did not apply (its paddock "
      "died, or changes were held back)");
  changes->require_subcommand(1);
  changes->add_option("--store", args->store, "The change store (default: as paddock run uses)");
  CLI::App* list_cmd = changes->add_subcommand("list", "Every waiting set, oldest first");
  list_cmd->add_flag("--json", args->json, "One JSON array");
  CLI::App* show_cmd = changes->add_subcommand("show", "What a set would change, entry by entry");
  show_cmd->add_option("id", args->id, "The set's id")->required();
  show_cmd->add_flag("--diff", args->diff, "A unified diff of each file");
  show_cmd->add_flag("--json", args->json, "One JSON object");
  CLI::App* apply_cmd = changes->add_subcommand(
      "apply", "Apply a set to the workspace (judged again; held-back entries stay)");
  apply_cmd->add_option("id", args->id, "The set's id")->required();
  apply_cmd->add_flag("--held", args->held,
                      "Apply the held-back entries too (git hooks, start-up files, conflicts...)");
  CLI::App* discard_cmd = changes->add_subcommand("discard", "Delete a set without applying it");
  discard_cmd->add_option("id", args->id, "The set's id")->required();
  return [=]() -> int {
    try {
      if (list_cmd->parsed()) return list(*args);
      if (show_cmd->parsed()) return show(*args);
      if (apply_cmd->parsed()) return apply_or_discard(*args, true);
      if (discard_cmd->parsed()) return apply_or_discard(*args, false);
    } catch (const Error& e) {
      say(std::string("changes: ") + e.what());
    }
    return kExitPaddockFailed;
  };
}

}  // namespace paddock::cli
