#include "sandbox/change_set.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <tuple>

#include "base/directory_entries.hpp"
#include "base/unique_fd.hpp"
#include "paddock/errors.hpp"
#include "sandbox/change_set_standins.hpp"
#include "sandbox/path_resolution.hpp"
#include "sandbox/small_file.hpp"

namespace paddock::sandbox {
namespace {

std::string sys_error(const std::string& what, int err) { return what + ": " + std::strerror(err); }

// This process's PID namespace (its inode): a pid means that process only in it. Read once per
// process (a fork, such as the helper's, reads it again).
std::uint64_t own_pid_namespace() {
  static std::atomic<pid_t> read_by{0};
  static std::atomic<std::uint64_t> ns{0};
  if (read_by.load() != ::getpid()) {
    struct stat st;
    ns = ::stat("/proc/self/ns/pid", &st) == 0 ? static_cast<std::uint64_t>(st.st_ino) : 0;
    read_by = ::getpid();
  }
  return ns.load();
}

// /proc/<pid>/stat, empty when unreadable. Not through iostreams: a process that exits
// between the open and the read makes read() fail with ESRCH, which libstdc++'s filebuf
// throws through istreambuf_iterator (a daemon reading a peer's start time died of it).
std::string proc_stat_text(int pid) {
  std::string text;
  const int fd = ::open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  if (read_whole(fd, 4096, text) != 0) text.clear();
  ::close(fd);
  return text;
}

// Field 3 of /proc/<pid>/stat: R, S, D, Z (zombie), ...; 0 when unreadable.
char process_state(int pid) {
  const std::string text = proc_stat_text(pid);
  const std::size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() ? text[close + 2] : '\0';
}

// mkdir -p with mode 0700 for what it makes; the last component must end up a real directory
// owned by us with no access for others (a store another user prepared in /var/tmp would let
// them read and plant changes).
void make_private_directory(const std::string& path) {
  std::string sofar;
  for (const auto& part : paths::components(path)) {
    sofar += "/" + part;
    if (::mkdir(sofar.c_str(), 0700) != 0 && errno != EEXIST) {
      throw Error(errc::spawn_failed, sys_error("change store " + sofar, errno));
    }
  }
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    throw Error(errc::spawn_failed, sys_error("change store " + path, errno));
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) {
    throw Error(errc::config_invalid, "change store " + path +
                                          ": not a directory of this user (uid " +
                                          std::to_string(::geteuid()) + "); refusing to use it");
  }
  if ((st.st_mode & 077) != 0 && ::chmod(path.c_str(), 0700) != 0) {
    throw Error(errc::spawn_failed, sys_error("change store " + path + ": chmod", errno));
  }
}

std::string new_id() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%012llx",
                static_cast<unsigned long long>(rng() & 0xffffffffffffULL));
  return buf;
}

nlohmann::json to_json(const ChangeSetInfo& s) {
  nlohmann::json held = nlohmann::json::array();
  for (const auto& h : s.held) held.push_back({{"path", h.path}, {"reason", h.reason}});
  return {{"id", s.id},
          {"roots", s.roots},
          {"state", s.state},
          {"command", s.command},
          {"cwd", s.cwd},
          {"start_sec", s.start_sec},
          {"start_nsec", s.start_nsec},
          {"pid", s.pid},
          {"pid_start", s.pid_start},
          {"pid_ns", s.pid_ns},
          {"held", held},
          {"note", s.note},
          {"homes", s.homes},
          {"deny_write", s.deny_write},
          {"deny_write_patterns", s.deny_write_patterns},
          {"placeholders", s.placeholders},
          {"placeholder_dirs", s.placeholder_dirs},
          {"session", s.session}};
}

}  // namespace

std::string ChangeSetInfo::upper(std::size_t root) const {
  return dir + "/roots/" + std::to_string(root) + "/upper";
}
std::string ChangeSetInfo::work(std::size_t root) const {
  return dir + "/roots/" + std::to_string(root) + "/work";
}

std::vector<std::string> change_stores(const std::string& configured, const std::string& home) {
  if (!configured.empty()) return {configured};
  // Set, it is the store (as the settings' changeStore is): runs and `paddock changes` agree.
  if (const char* env = std::getenv("PADDOCK_CHANGE_STORE"); env != nullptr && *env != '\0') {
    if (*env != '/') {
      throw Error(errc::config_invalid,
                  std::string("PADDOCK_CHANGE_STORE=") + env + ": must be an absolute path");
    }
    return {env};
  }
  std::vector<std::string> out;
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg != nullptr && *xdg == '/') {
    out.push_back(std::string(xdg) + "/paddock/changes");
  }
  if (!home.empty() && home != "/" && paths::is_real_directory(home)) {
    out.push_back(home + "/.local/state/paddock/changes");
  }
  out.push_back("/var/tmp/paddock-changes-" + std::to_string(::geteuid()));
  // Last: when /var/tmp itself is a writable root (lost at reboot: a set waiting then is
  // gone, and the workspace was never touched).
  out.push_back("/tmp/paddock-changes-" + std::to_string(::geteuid()));
  return out;
}

std::string change_store(const std::string& configured, const std::string& home,
                         const std::vector<std::string>& roots) {
  std::string tried;  // each candidate and why not, for the error
  for (const auto& candidate : change_stores(configured, home)) {
    std::string store = std::filesystem::path(candidate).lexically_normal().string();
    while (store.size() > 1 && store.back() == '/') store.pop_back();
    const bool overlaps = std::any_of(roots.begin(), roots.end(), [&](const std::string& r) {
      return paths::within(store, r) || paths::within(r, store);
    });
    if (overlaps) {
      if (!configured.empty()) {
        throw Error(errc::config_invalid, "filesystem.changeStore " + store +
                                              " overlaps the writable root; choose a directory "
                                              "outside every writable root");
      }
      tried += "; " + store + ": overlaps a writable root";
      continue;
    }
    try {
      make_private_directory(store);
      return store;
    } catch (const Error& e) {
      if (!configured.empty()) throw;
      // the next candidate (an unwritable home, a /var/tmp name another user took)
      tried += std::string("; ") + e.what();
    }
  }
  throw Error(errc::spawn_failed,
              "no change store outside the writable roots could be made (" + tried.substr(2) +
                  "); set sandbox.changeStore or PADDOCK_CHANGE_STORE to a directory of yours");
}

namespace {
// Below: the layers (unless `reused`: a spare's, in place), the stand-ins, set.json.
void fill_new_set(ChangeSetInfo& set, bool reused);
}  // namespace

ChangeSetInfo create_change_set(const std::string& store, ChangeSetInfo proto) {
  ChangeSetInfo set = std::move(proto);
  if (set.state != "waiting") set.state = "open";
  set.held.clear();
  set.id = new_id();
  set.dir = store + "/" + set.id;
  const bool reused = claim_spare_change_set(store, set.id, set.roots.size());
  for (int attempt = 0; !reused; ++attempt) {
    if (::mkdir(set.dir.c_str(), 0700) == 0) break;
    if (errno != EEXIST || attempt > 8) {
      throw Error(errc::spawn_failed, sys_error("change set " + set.dir, errno));
    }
    set.id = new_id();
    set.dir = store + "/" + set.id;
  }
  // Made whole or not at all: a half-made set (no set.json) would be listed by nothing.
  try {
    // Locked before set.json says "open": from another PID namespace a free lock is a dead
    // owner. Another paddock's probe holds it for moments only.
    set.lock = std::make_shared<UniqueFd>(lock_change_set(set, std::chrono::seconds(2)));
    if (set.lock->get() < 0) {
      throw Error(errc::spawn_failed, "change set " + set.dir + ": cannot lock it: " +
                                          std::strerror(errno != 0 ? errno : EWOULDBLOCK));
    }
    fill_new_set(set, reused);
  } catch (...) {
    try {
      remove_change_set(set);
    } catch (const Error&) {
      // The first failure is the one to report.
    }
    throw;
  }
  return set;
}

// The moment the layers exist, on the file system's own clock (the one the host's change
// times come from): anything of the host changed from now on changed in the run. `newest` is
// the last layer's directory: a spare's `roots` is older, its layers' were renewed now.
//
// A plain change time is coarse: a file the host saved in the same clock tick has the same
// one, and would read as changed during the run. So the start is a change made after the
// directory's change time was looked at: a file system with fine-grained stamps on demand
// (multigrain, Linux 6.13+: ext4, xfs, btrfs, tmpfs) then gives a stamp later than any it
// handed out before, and later coarse stamps never fall below it. It does so only when the
// coarse clock (raised to the last fine-grained stamp handed out) is not past the directory's
// own stamp: a directory last changed long ago takes that raised clock, which is the stamp of
// the host's save just before, the same to the nanosecond (measured: 2,000 of 2,000). So it
// is changed twice; the second change is the fine-grained one. Elsewhere the stamp is the
// coarse one the host's own changes get, as before: that errs toward a conflict.
void stamp_change_set_start(ChangeSetInfo& set, const std::string& newest) {
  struct stat st;
  for (int change = 0; change < 2; ++change) {
    if (::stat(newest.c_str(), &st) != 0 || ::chmod(newest.c_str(), st.st_mode & 07777) != 0) {
      throw Error(errc::spawn_failed, sys_error("change set " + newest, errno));
    }
  }
  if (::stat(newest.c_str(), &st) != 0) {
    throw Error(errc::spawn_failed, sys_error("change set " + newest, errno));
  }
  struct timespec start = st.st_ctim;
  // A root on another file system than the store stamps its own changes, perhaps coarsely
  // (no floor raised by the store's stamp) and truncated to its granularity: there the start
  // is the coarse clock now, cut to the coarsest granularity the root's own stamp allows.
  // Later than the host's true start, never earlier than a change the host makes from now on.
  for (const auto& root : set.roots) {
    struct stat r {};
    if (::stat(root.c_str(), &r) == 0 && r.st_dev == st.st_dev) continue;
    struct timespec coarse;
    ::clock_gettime(CLOCK_REALTIME_COARSE, &coarse);
    long granularity = 1;  // 10^(trailing zeros of the root's own stamp), a second at most
    while (granularity < 1000000000L && r.st_ctim.tv_nsec % (granularity * 10) == 0) {
      granularity *= 10;
    }
    coarse.tv_nsec -= coarse.tv_nsec % granularity;
    if (granularity == 1000000000L) coarse.tv_sec &= ~std::int64_t{1};  // FAT: 2 s
    if (std::tie(coarse.tv_sec, coarse.tv_nsec) < std::tie(start.tv_sec, start.tv_nsec)) {
      start = coarse;
    }
  }
  set.start_sec = start.tv_sec;
  set.start_nsec = start.tv_nsec;
}

namespace {

void fill_new_set(ChangeSetInfo& set, bool reused) {
  set.pid = static_cast<int>(::getpid());
  set.pid_start = process_start_time(set.pid);
  set.pid_ns = own_pid_namespace();
  const std::string layers = set.dir + "/roots";
  if (!reused && ::mkdir(layers.c_str(), 0700) != 0) {
    throw Error(errc::spawn_failed, sys_error("change set " + layers, errno));
  }
  for (std::size_t i = 0; i < set.roots.size(); ++i) {
    const std::string layer = layers + "/" + std::to_string(i);
    for (const std::string& d : {layer, set.upper(i), set.work(i)}) {
      if (!reused && ::mkdir(d.c_str(), 0700) != 0) {
        throw Error(errc::spawn_failed, sys_error("change set " + d, errno));
      }
    }
    // The overlay's root shows the upper layer's directory: the host root's owner and mode
    // there, not the store's 0700 (the set's own directory keeps others out of the store).
    struct stat root;
    if (::lstat(set.roots[i].c_str(), &root) == 0 && S_ISDIR(root.st_mode)) {
      mirror_directory(set.upper(i), root);
    }
  }
  make_placeholders(set);
  // A start the proto has is earlier (a plan stamped it before it looked at the host): kept.
  if (set.start_sec == 0 && set.start_nsec == 0) {
    stamp_change_set_start(
        set, set.roots.empty() ? layers : layers + "/" + std::to_string(set.roots.size() - 1));
  }
  save_change_set(set);
}

}  // namespace

// Written beside set.json, then swapped with it (RENAME_EXCHANGE): readers see one whole
// file or the other. The file set aside keeps its inode and blocks for the next save, which
// writes over them in place. A rename over set.json would free the old file's blocks on every
// save, and where the file system discards freed blocks at once (ext4 `-o discard`, this
// project's VMs) that made each save ~100 µs instead of ~11 (measured 2026-11-29).
void save_change_set(const ChangeSetInfo& set) {
  const std::string path = set.dir + "/set.json";
  const std::string tmp = path + ".tmp";
  const std::string text = to_json(set).dump(1) + "\n";
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (fd.get() < 0) throw Error(errc::spawn_failed, sys_error("change set " + tmp, errno));
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n =
        ::pwrite(fd.get(), text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(errc::spawn_failed, sys_error("change set " + tmp + ": write", errno));
    done += static_cast<std::size_t>(n);
  }
  if (::ftruncate(fd.get(), static_cast<off_t>(text.size())) != 0 || ::close(fd.release()) != 0) {
    throw Error(errc::spawn_failed, sys_error("change set " + tmp + ": write", errno));
  }
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_EXCHANGE) == 0) return;
  // The first save (no set.json yet), or a file system without the exchange.
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    throw Error(errc::spawn_failed, sys_error("change set " + path, errno));
  }
}

ChangeSetInfo load_change_set(const std::string& store, const std::string& id) {
  const bool plain = !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0;
  });
  if (!plain) throw Error(errc::config_invalid, "no change set '" + id + "'");
  // A save swaps a new file in (save_change_set); a reader that opened the one before may see
  // it rewritten in place by the save after that. Text that does not parse is read again, a
  // few times, before it counts as unreadable (hostile review helper-43).
  nlohmann::json j;
  for (int attempt = 0;; ++attempt) {
    std::ifstream in(store + "/" + id + "/set.json");
    if (!in) throw Error(errc::config_invalid, "no change set '" + id + "' in " + store);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded()) break;
    if (attempt == 2) {
      throw Error(errc::config_invalid,
                  "change set " + store + "/" + id + "/set.json: unreadable: not JSON");
    }
  }
  ChangeSetInfo set;
  try {
    set.id = j.at("id").get<std::string>();
    set.roots = j.at("roots").get<std::vector<std::string>>();
    set.state = j.at("state").get<std::string>();
    set.command = j.value("command", "");
    set.cwd = j.value("cwd", "");
    set.start_sec = j.at("start_sec").get<std::int64_t>();
    set.start_nsec = j.at("start_nsec").get<std::int64_t>();
    set.pid = j.value("pid", 0);
    set.pid_start = j.value("pid_start", std::uint64_t{0});
    set.pid_ns = j.value("pid_ns", std::uint64_t{0});
    set.note = j.value("note", "");
    set.homes = j.value("homes", std::vector<std::string>{});
    set.deny_write = j.value("deny_write", std::vector<std::string>{});
    set.deny_write_patterns = j.value("deny_write_patterns", std::vector<std::string>{});
    set.placeholders = j.value("placeholders", std::vector<std::string>{});
    set.placeholder_dirs = j.value("placeholder_dirs", std::vector<std::string>{});
    set.session = j.value("session", false);
    for (const auto& h : j.value("held", nlohmann::json::array())) {
      set.held.push_back({h.at("path").get<std::string>(), h.at("reason").get<std::string>()});
    }
  } catch (const std::exception& e) {
    throw Error(errc::config_invalid,
                "change set " + store + "/" + id + "/set.json: unreadable: " + e.what());
  }
  if (set.id != id) throw Error(errc::config_invalid, "change set " + id + ": id mismatch");
  set.dir = store + "/" + id;
  return set;
}

std::vector<ChangeSetInfo> list_change_sets(const std::string& store) {
  std::vector<ChangeSetInfo> sets;
  UniqueFd fd(::open(store.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) return sets;
  std::vector<std::string> names;
  base::for_each_directory_entry(fd.get(), [&](const char* name, unsigned char) {
    names.emplace_back(name);
    return true;
  });
  for (const auto& name : names) {
    try {
      ChangeSetInfo set = load_change_set(store, name);
      if (set.state == "waiting") {
        // A sandbox made ahead, no command in it: nothing to decide. Its paddock gone (killed
        // before it could remove it), it goes now.
        if (!owner_alive(set)) remove_change_set(set);
        continue;
      }
      sets.push_back(std::move(set));
    } catch (const Error&) {
    }
  }
  std::sort(sets.begin(), sets.end(), [](const ChangeSetInfo& a, const ChangeSetInfo& b) {
    return std::tie(a.start_sec, a.start_nsec, a.id) < std::tie(b.start_sec, b.start_nsec, b.id);
  });
  return sets;
}

// Field 22 of /proc/<pid>/stat (after the command name, which may hold spaces and parens).
std::uint64_t process_start_time(int pid) {
  const std::string text = proc_stat_text(pid);
  const std::size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 22) return std::strtoull(field.c_str(), nullptr, 10);
  }
  return 0;
}

void set_change_set_owner(ChangeSetInfo& set, int pid, std::uint64_t start_time) {
  set.pid = pid;
  set.pid_start = start_time;
  set.pid_ns = own_pid_namespace();  // a pid from SO_PEERCRED is one of ours (translated)
}

UniqueFd lock_change_set(const ChangeSetInfo& set, std::chrono::milliseconds wait) {
  UniqueFd dir(::open(set.dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dir.get() < 0) return dir;
  // Polled with a deadline: flock has no timeout of its own.
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (::flock(dir.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return UniqueFd();
    if (std::chrono::steady_clock::now() >= deadline) return UniqueFd();
    ::usleep(5000);
  }
  return dir;
}

bool owner_alive(const ChangeSetInfo& set, bool locked) {
  if (set.pid <= 0) return false;
  // Made in another PID namespace (a container, `unshare -p` sharing the store): its pid
  // names another process here, or none. An owner that may still act on its set holds the
  // set's lock from the set's making (ChangeSetInfo::lock) until it has applied or left it,
  // and the kernel drops it with the owner: a free lock is a dead owner (hostile reviews: a
  // listing from another namespace removed a live session's set; a dead namespace's sets
  // could never be applied).
  if (set.pid_ns != 0 && set.pid_ns != own_pid_namespace()) {
    if (locked) return false;
    UniqueFd probe = lock_change_set(set, std::chrono::milliseconds(0));
    return probe.get() < 0 && ::access(set.dir.c_str(), F_OK) == 0;
  }
  if (::kill(set.pid, 0) != 0 && errno == ESRCH) return false;
  // A zombie is dead (its parent has not reaped it yet: a helper killed on a machine whose
  // pid 1 reaps late): its set is abandoned now, not when it is reaped.
  return process_start_time(set.pid) == set.pid_start && process_state(set.pid) != 'Z';
}

// Removes `name` in `dir` and everything below it, never following a link and never leaving
// the file system (a mount point below is an error). Directories are given u+rwx first.
int remove_tree(int dir, const char* name, dev_t dev) {
  if (::unlinkat(dir, name, 0) == 0 || errno == ENOENT) return 0;
  if (errno != EISDIR) return errno;
  ::fchmodat(dir, name, 0700, AT_SYMLINK_NOFOLLOW);  // never a link's target
  UniqueFd sub(::openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (sub.get() < 0) return errno;
  struct stat st;
  if (::fstat(sub.get(), &st) != 0) return errno;
  if (st.st_dev != dev) return EXDEV;
  std::vector<std::string> names;
  if (int err = base::for_each_directory_entry(sub.get(), [&](const char* n, unsigned char) {
        names.emplace_back(n);
        return true;
      })) {
    return err;
  }
  for (const auto& n : names) {
    if (int err = remove_tree(sub.get(), n.c_str(), dev)) return err;
  }
  return ::unlinkat(dir, name, AT_REMOVEDIR) == 0 ? 0 : errno;
}

void remove_change_set(const ChangeSetInfo& set) {
  const std::string store(paths::parent_of(set.dir));
  UniqueFd fd(::open(store.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st;
  if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0) return;
  if (int err = remove_tree(fd.get(), set.id.c_str(), st.st_dev); err != 0) {
    throw Error(errc::spawn_failed, sys_error("change set " + set.dir + ": remove", err));
  }
}

}  // namespace paddock::sandbox
