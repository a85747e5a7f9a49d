#include "cli/run_helper.hpp"

#include <fcntl.h>
#include <nettle/sha2.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>
#include <thread>

#include "base/unique_fd.hpp"
#include "cli/commands.hpp"
#include "cli/run_policy.hpp"
#include "cli/terminal.hpp"
#include "cli/user_daemon.hpp"
#include "paddock/errors.hpp"
#include "paddock/manager.hpp"
#include "paddock/runtime.hpp"
#include "process/given_fd.hpp"
#include "serve/connection.hpp"
#include "serve/server.hpp"

extern char** environ;

namespace paddock::cli {
namespace {

using namespace std::chrono_literals;

// Every field of PolicyFlags goes into the key (below): one added there must be added here.
static_assert(sizeof(PolicyFlags) ==
                  6 * sizeof(std::vector<std::string>) + 2 * sizeof(std::string) + 8,
              "a PolicyFlags field is missing from helper_key");

// The file's bytes, or why not (an unreadable one keys alike only with one unreadable alike).
std::string read_file(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return std::string("unreadable: ") + std::strerror(errno);
  std::string out;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0) {
      return out;
    } else if (errno != EINTR) {
      return out + "\nunreadable: " + std::strerror(errno);
    }
  }
}

// What the hash is taken over: named fields, each length-prefixed (no two inputs read alike).
class KeyText {
 public:
  void add(std::string_view name, std::string_view value) {
    text_ += name;
    text_ += ' ';
    text_ += std::to_string(value.size());
    text_ += ':';
    text_ += value;
    text_ += '\n';
  }
  void add(std::string_view name, const std::vector<std::string>& values) {
    add(name, std::to_string(values.size()));
    for (const auto& v : values) add(name, v);
  }
  // The first 32 hex digits of its SHA-256: the helper's name.
  std::string name() const {
    struct sha256_ctx context;
    sha256_init(&context);
    sha256_update(&context, text_.size(), reinterpret_cast<const std::uint8_t*>(text_.data()));
    std::uint8_t digest[SHA256_DIGEST_SIZE];
    sha256_digest(&context, sizeof digest, digest);
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (unsigned i = 0; i < 16; ++i) {
      out += kHex[digest[i] >> 4];
      out += kHex[digest[i] & 15];
    }
    return out;
  }

 private:
  std::string text_;
};

std::string identity_of(const char* path, bool follow) {
  struct stat st;
  if ((follow ? ::stat(path, &st) : ::lstat(path, &st)) != 0) return std::strerror(errno);
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
         std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + ":" + std::to_string(st.st_mode);
}

// Everything the helper's Manager and its commands would take from the process that started
// it, where a run in our own process takes it from us. Two runs with equal keys would build
// the same Config and run their commands with the same credentials, limits and view.
std::string helper_key(const RunArgs& a, const std::string& settings_text) {
  KeyText k;
  k.add("format", "paddock run helper 1");
  k.add("binary", identity_of("/proc/self/exe", true));
  // The policy's sources: the profile, the settings file by its bytes, the flags.
  k.add("profile", a.profile);
  const std::string settings = a.settings.empty() ? default_settings_path() : a.settings;
  k.add("settings", settings);
  k.add("settings bytes", settings_text);  // as read once and applied (a pipe reads once)
  k.add("shell", a.shell_program);
  const PolicyFlags& p = a.policy;
  k.add("allow_write", p.allow_write);
  k.add("deny_write", p.deny_write);
  k.add("allow_read", p.allow_read);
  k.add("deny_read", p.deny_read);
  k.add("allow_domains", p.allow_domains);
  k.add("deny_domains", p.deny_domains);
  k.add("network", p.network);
  k.add("fallback", p.fallback);
  k.add("no_sandbox", p.no_sandbox ? "1" : "0");
  k.add("allow_write_home", p.allow_write_home ? "1" : "0");
  // The whole environment: the policy reads some (~ is $HOME; PADDOCK_* set timeouts and
  // the change store), and the helper's own work more (the host's git that judges a change
  // set runs with it: GIT_CONFIG_GLOBAL, PATH; hostile review). Only what a shell changes
  // from one command to the next is left out, and how paddock is used (its log level, the
  // helper switch); the command's own environment comes with each run anyway. The idle time
  // counts: a helper already running would not take another (new-user trial helper-44).
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const auto name = entry.substr(0, entry.find('='));
    if (name != "_" && name != "PWD" && name != "OLDPWD" && name != "SHLVL" &&
        name != "PADDOCK_LOG" && name != "PADDOCK_HELPER") {
      env.emplace_back(entry);
    }
  }
  std::sort(env.begin(), env.end());
  k.add("environment", env);
  // Who runs the commands and with what: ids and groups, capabilities, no_new_privs and
  // seccomp, the cgroup (its limits and accounting), the namespaces, the root, the LSM label.
  std::string status;
  {
    std::istringstream lines(read_file("/proc/self/status"));
    for (std::string line; std::getline(lines, line);) {
      for (const char* field :
           {"Uid:", "Gid:", "Groups:", "CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:",
            "NoNewPrivs:", "Seccomp:", "SigBlk:", "SigIgn:", "Cpus_allowed_list:",
            "Mems_allowed_list:", "Speculation_Store_Bypass:", "SpeculationIndirectBranch:"}) {
        if (line.starts_with(field)) status += line + "\n";
      }
    }
  }
  if (status.find("Uid:") == std::string::npos) {
    throw Error(errc::spawn_failed, "/proc/self/status unreadable");
  }
  k.add("status", status);
  k.add("cgroup", read_file("/proc/self/cgroup"));
  k.add("oom_score_adj", read_file("/proc/self/oom_score_adj"));
  k.add("loginuid", read_file("/proc/self/loginuid"));
  k.add("sessionid", read_file("/proc/self/sessionid"));
  k.add("personality", std::to_string(::personality(0xffffffff)));
  k.add("scheduler", std::to_string(::sched_getscheduler(0)));
  k.add("ioprio", std::to_string(::syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, 0)));
  k.add("label", read_file("/proc/self/attr/current"));
  for (const char* ns : {"mnt", "net", "user", "pid", "uts", "ipc", "cgroup", "time"}) {
    char target[128] = {};
    const std::string link = std::string("/proc/self/ns/") + ns;
    const ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
    k.add(link, n > 0 ? std::string(target, static_cast<std::size_t>(n)) : "none");
  }
  k.add("root", identity_of("/", false));
  // What a child inherits: limits, umask, niceness.
  for (int r = 0; r < RLIM_NLIMITS; ++r) {
    struct rlimit l {};
    ::getrlimit(r, &l);
    k.add("rlimit " + std::to_string(r),
          std::to_string(l.rlim_cur) + "/" + std::to_string(l.rlim_max));
  }
  const mode_t mask = ::umask(0);
  ::umask(mask);
  k.add("umask", std::to_string(mask));
  errno = 0;
  k.add("nice", std::to_string(::getpriority(PRIO_PROCESS, 0)));
  return k.name();
}

std::chrono::seconds idle_time() {
  const char* raw = std::getenv("PADDOCK_HELPER_IDLE_SECONDS");
  if (raw == nullptr) return 600s;
  const std::string_view text(raw);
  long long v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v <= 0 || v > 86400) {
    throw Error(errc::config_invalid,
                "PADDOCK_HELPER_IDLE_SECONDS: expected whole seconds, 1 to "
                "86400, got '" +
                    std::string(text) + "'");
  }
  return std::chrono::seconds(v);
}

std::string info_of(const std::string& socket) { return name_of_socket(socket) + ".json"; }

// Writes `title` over the process's own arguments (ps's COMMAND, /proc/<pid>/cmdline): the
// helper outlives the run that started it, whose command line it would show. The kernel
// reads the arguments from the memory they were given in, contiguous from argv[0] (glibc's
// program_invocation_name) over as many bytes as /proc/self/cmdline has; PR_SET_MM would
// need CAP_SYS_RESOURCE. Hand-written: libbsd's setproctitle moves the environment to do
// more than this needs.
void retitle(const std::string& title) {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string args((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (args.size() < 2 || program_invocation_name == nullptr) return;
  char* area = program_invocation_name;
  if (std::string_view(area) != std::string_view(args.c_str())) return;  // not argv[0]
  std::memset(area, 0, args.size());
  std::memcpy(area, title.data(), std::min(title.size(), args.size() - 1));
}

// The helper's life, in the child start_daemon forked (no thread before it): serves until no
// client has been connected for `idle`, or a signal. Unlinks its socket first, so a run
// from then on starts the next helper (waiting for the lock this one holds to its exit).
int serve_helper(const Config& config, const std::string& path, std::chrono::seconds idle,
                 int ready) {
  bool removed = false;  // our name removed: ours no longer
  try {
    if (::chdir("/") != 0) throw Error(errc::spawn_failed, "chdir /");
    // What `ps` and `top` show: not the command line of the run that started it.
    ::prctl(PR_SET_NAME, "paddock-helper", 0, 0, 0);
    retitle("paddock-helper");  // the shortest command line that starts one has room for it
    Config ours = config;       // as a run in the caller's own process would make it
    keep_file_size_limit_for_command(ours);
    // Sandboxes made ahead, as the Manager's default: what the host (the user's editor, the
    // previous run's apply) writes before a run comes is no conflict, since the set of a
    // sandbox made ahead starts when its run does (exec_launch.cpp).
    Runtime runtime(RuntimeOptions{2});
    Manager manager(runtime.executor(), ours);
    serve::ServeOptions o;
    o.listen = {"unix:" + path};
    o.socket_activation = false;
    o.clients_own_changes = true;    // a killed client's set waits, abandoned, as in process
    o.allowed_uids = {::geteuid()};  // this user alone (not even root: not its helper)
    // And never from inside a sandbox, wherever one can see this socket: a peer in other
    // namespaces than ours would not have got this helper's name anyway (helper_key).
    o.peer_namespaces = {"user", "mnt", "net", "pid", "ipc", "uts", "cgroup"};
    o.rules.parent_env = true;
    o.rules.given_descriptors = true;  // the caller's streams themselves (run_streams.hpp)
    o.rules.keyed_lines = true;        // and only from the client that said hello
    o.rules.one_writer = true;
    o.drain_grace = 0s;
    serve::Server server(runtime.executor(), manager, o);
    std::ofstream(info_of(path)) << nlohmann::json{{"pid", ::getpid()},
                                                   {"started",
                                                    static_cast<long long>(::time(nullptr))},
                                                   {"idle_timeout_s", idle.count()}}
                                        .dump()
                                 << "\n";
    tell_ready(ready, "ok");
    ::close(ready);
    auto busy_at = std::chrono::steady_clock::now();
    const auto every = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::min<std::chrono::steady_clock::duration>(idle / 4, 1s));
    run_until_ended(runtime.executor(), [&]() -> std::optional<std::chrono::milliseconds> {
      const auto now = std::chrono::steady_clock::now();
      if (server.connection_count() > 0) busy_at = now;
      if (now - busy_at >= idle) return std::nullopt;
      return every;
    });
    // No new run finds us; one that connected just before is still served. The lock goes
    // too: a run from now on starts the next helper at once, whose name this is from now on.
    remove_name(name_of_socket(path));
    removed = true;
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (server.connection_count() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
    }
    server.close_all("the helper stopped");
    manager.close();
    return 0;
  } catch (const std::exception& e) {
    if (removed) return 1;  // ready told and closed; the name may be a successor's now
    tell_ready(ready, std::string("error ") + e.what());
    remove_name(name_of_socket(path));
    return 1;
  }
}

}  // namespace

std::optional<bool> helper_wanted(const RunArgs& args, const Config& config) {
  const char* env = std::getenv("PADDOCK_HELPER");
  // A flag outweighs the variable, whatever it holds.
  const std::string_view choice = args.helper || args.no_helper || env == nullptr ? "" : env;
  if (!choice.empty() && choice != "0" && choice != "1") {
    say(std::string(code_string(errc::config_invalid)) + ": PADDOCK_HELPER=" + std::string(choice) +
        ": expected 0 (paddock run sets the sandbox up itself) or 1 (through " +
        "your helper, the default)");
    return std::nullopt;
  }
  if (args.no_helper || choice == "0") return false;
  // A closed standard stream: the command finds it closed in process; here our socket to the
  // helper would take its number (new-user trial helper-46). Every open one goes to the
  // helper as it is, or through a pipe of ours, as in process (run_streams.hpp).
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
      spdlog::info("no helper: descriptor {} is closed", fd);
      return false;
    }
  }
  if (!config.sandbox.enabled) {
    spdlog::info("no helper: the sandbox is off, nothing to keep");
    return false;
  }
  if (args.stdin_mode == "inherit" &&
      process::classify_given_fd(STDIN_FILENO) == process::GivenFdKind::terminal) {
    spdlog::info("no helper: --stdin inherit gives the command this terminal");
    return false;
  }
  // Under a seccomp filter or no_new_privs (a nested sandbox, a test's syscall filter): what
  // the filter allows cannot be compared, so no helper forked under another could stand in.
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if ((line.starts_with("Seccomp:") || line.starts_with("NoNewPrivs:")) &&
        line.find_first_of("123456789") != std::string::npos) {
      spdlog::info("no helper: this process runs under {}", line.substr(0, line.find(':')));
      return false;
    }
  }
  return true;
}

namespace {

// The helper's answer to our hello, within kGreetingTime: only then does the command go out.
// A helper that is stopped (SIGSTOP), stuck or gone would otherwise hold the run for good,
// with the command still sent and run once it wakes (new-user trial helper-44: 10 minutes,
// Ctrl-C and TERM could not end it). Without an answer nothing was sent: the run happens in
// process, once.
constexpr auto kGreetingTime = 5s;

// Returns the key the helper gave this connection (RequestRules::keyed_lines): every line we
// send from here on carries it.
std::string greet(int sock) {
  const std::string hello = nlohmann::json{{"type", "hello"}, {"version", 1}}.dump() + "\n";
  if (::send(sock, hello.data(), hello.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(hello.size())) {
    throw Error(errc::spawn_failed, "hello: " + std::string(std::strerror(errno)));
  }
  const auto deadline = std::chrono::steady_clock::now() + kGreetingTime;
  std::string answer;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{sock, POLLIN, 0};
    const int ready = left.count() > 0 ? ::poll(&p, 1, static_cast<int>(left.count())) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) throw Error(errc::spawn_failed, "it did not answer within 5 s");
    // Its line is taken off the socket up to its end: what follows is run_connected's.
    char buf[4096];
    const ssize_t seen = ::recv(sock, buf, sizeof buf, MSG_PEEK);
    if (seen < 0 && errno == EINTR) continue;
    if (seen <= 0) throw Error(errc::spawn_failed, "it closed the connection at once");
    const void* nl = std::memchr(buf, '\n', static_cast<std::size_t>(seen));
    const std::size_t take =
        nl != nullptr ? static_cast<const char*>(nl) - buf + 1 : static_cast<std::size_t>(seen);
    if (::recv(sock, buf, take, 0) != static_cast<ssize_t>(take)) {
      throw Error(errc::spawn_failed, "hello: " + std::string(std::strerror(errno)));
    }
    answer.append(buf, take);
    if (nl != nullptr) {
      const auto reply = nlohmann::json::parse(answer, nullptr, false);
      if (!reply.is_object() || !reply.contains("conn_key") || !reply["conn_key"].is_string()) {
        throw Error(errc::spawn_failed, "its hello gave no key for the connection");
      }
      return reply["conn_key"].get<std::string>();
    }
  }
}

}  // namespace

std::optional<int> run_through_helper(const RunArgs& args, const Config& config,
                                      const std::string& settings_text) {
  UniqueFd sock;
  std::string path, conn_key;
  try {
    const auto idle = idle_time();
    const std::string dir = user_runtime_dir("helpers");
    const std::string name = helper_key(args, settings_text);
    path = socket_path(dir, name + ".sock");
    sock.reset(connect_own(path));
    if (sock.get() < 0) {
      // The running helper holds its lock for its whole life: a lock we get means none runs
      // (a socket left there is a dead one's). A busy lock: one is starting.
      UniqueFd lock;
      const auto deadline = std::chrono::steady_clock::now() + 10s;
      bool ours = false;
      while (sock.get() < 0) {
        lock = take_name_lock(dir + "/" + name);
        if (lock.get() >= 0) {
          ours = true;
          break;
        }
        if (errno != EWOULDBLOCK && errno != EINTR && errno != EAGAIN) {
          throw Error(errc::spawn_failed, "its lock: " + std::string(std::strerror(errno)));
        }
        if (std::chrono::steady_clock::now() > deadline) {
          throw Error(errc::spawn_failed, "a helper starting or stopping did not answer in 10 s");
        }
        std::this_thread::sleep_for(5ms);
        sock.reset(connect_own(path));
      }
      if (ours) {
        ::unlink(path.c_str());
        // What helpers killed before they could remove their names left (any key's).
        remove_dead_names(dir);
        spdlog::info("helper: starting one at {}", path);
        const DaemonStart started = start_daemon(
            lock.get(), [&](int ready) { return serve_helper(config, path, idle, ready); });
        if (started.line.rfind("ok", 0) != 0) {
          ::waitpid(started.pid, nullptr, 0);
          const std::string why = started.line.rfind("error ", 0) == 0
                                      ? started.line.substr(6, started.line.find('\n') - 6)
                                      : "it died";
          throw Error(errc::spawn_failed, "it did not start: " + why);
        }
        sock.reset(connect_own(path));
        if (sock.get() < 0) {
          throw Error(errc::spawn_failed,
                      "it started but does not answer: " + std::string(std::strerror(errno)));
        }
      }
    }
    conn_key = greet(sock.get());
  } catch (const Error& e) {
    if (std::string_view(e.what()).starts_with("PADDOCK_HELPER_IDLE_SECONDS")) {
      say(std::string(code_string(e.code())) + ": " + e.what());
      return kExitPaddockFailed;
    }
    spdlog::info("no helper ({}{}); the command runs in this process",
                 path.empty() ? "" : path + ": ", e.what());
    return std::nullopt;
  }
  spdlog::info("helper: {}", path);
  RunArgs via = args;
  via.connect = "unix:" + path;
  const HelperTarget target{sock.get(), config.shell, config.max_output_bytes, conn_key};
  return run_connected(via, &target);
}

}  // namespace paddock::cli
