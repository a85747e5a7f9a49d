// `paddock proxy --listen HOST:PORT`: the filtering proxy on its own, for clients that are not
// paddock's sandboxes (a container, a VM, another sandbox). The same rules, limits and
// credential check as a sandbox's proxy; one JSON line per request on stderr; SIGHUP re-reads
// the settings (hot reload), SIGINT/SIGTERM stop.
#include <sys/random.h>

#include <asio/ip/tcp.hpp>
#include <asio/signal_set.hpp>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "net/host.hpp"
#include "paddock/errors.hpp"
#include "paddock/runtime.hpp"
#include "paddock/settings.hpp"
#include "proxy/proxy_core.hpp"
#include "proxy/session.hpp"

namespace paddock::cli {
namespace {

struct ProxyArgs {
  std::string listen;
  std::string settings;
  std::string profile = "default";
  std::vector<std::string> allow_domains, deny_domains;
  std::string credential;
  bool no_auth = false;
};

void say(const std::string& line) { std::fprintf(stderr, "paddock proxy: %s\n", line.c_str()); }

std::string random_token() {
  unsigned char b[16];
  if (::getrandom(b, sizeof(b), 0) != static_cast<ssize_t>(sizeof(b))) {
    throw Error(errc::proxy_start_failed, "getrandom failed");
  }
  std::string out;
  for (unsigned char c : b) {
    out += "0123456789abcdef"[c >> 4];
    out += "0123456789abcdef"[c & 15];
  }
  return out;
}

Config load(const ProxyArgs& a) {
  PolicyFlags flags;
  flags.allow_domains = a.allow_domains;
  flags.deny_domains = a.deny_domains;
  return resolve_config(a.profile, a.settings.empty() ? default_settings_path() : a.settings,
                        flags);
}

int run(const ProxyArgs& a) {
  try {
    std::string error;
    auto where = net::parse_authority(a.listen, 0, &error);
    if (!where || where->host.kind == net::HostKind::name) {
      throw Error(errc::config_invalid, "--listen: expected IP:PORT (e.g. 127.0.0.1:3128)" +
                                            (where ? std::string() : ", " + error));
    }
    // From the environment when not given: a command line is readable by every local user.
    std::string given = a.credential;
    if (given.empty()) {
      if (const char* env = std::getenv("PADDOCK_PROXY_CREDENTIAL")) given = env;
    }
    if (a.no_auth && !given.empty()) {
      throw Error(errc::config_invalid, "--credential and --no-auth exclude each other");
    }
    if (!given.empty() && given.find(':') == std::string::npos) {
      throw Error(errc::config_invalid,
                  "--credential / PADDOCK_PROXY_CREDENTIAL: expected USER:PASSWORD");
    }
    Config config = load(a);
    NetworkHooks hooks;
    hooks.on_event = [](const NetworkEvent& e) {
      nlohmann::json j = {{"event", e.allowed ? "allow" : "deny"},
                          {"protocol", e.protocol},
                          {"target", e.target},
                          {"client", e.process}};
      if (e.allowed) j["address"] = e.address;
      if (!e.allowed) j["reason"] = e.reason;
      // Client bytes are escaped by the session; `replace` keeps a log line even so.
      std::fprintf(stderr, "%s\n",
                   j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    };
    auto core = std::make_shared<proxy::ProxyCore>(config.sandbox.network, hooks);
    Runtime runtime(RuntimeOptions{2});
    asio::ip::tcp::acceptor acceptor(runtime.executor());
    asio::ip::tcp::endpoint endpoint(where->host.address, where->port);
    try {
      acceptor.open(endpoint.protocol());
      acceptor.set_option(asio::ip::tcp::acceptor::reuse_address(true));
      acceptor.bind(endpoint);
      acceptor.listen(1024);
    } catch (const std::system_error& e) {
      throw Error(errc::proxy_start_failed, "listen on " + a.listen + ": " + e.code().message());
    }
    std::optional<std::string> credential;
    if (!a.no_auth) credential = given.empty() ? "paddock:" + random_token() : given;
    auto session =
        std::make_shared<proxy::Session>(core, runtime.executor(), "proxy client", credential);
    session->start(std::move(acceptor));
    const std::string auth = credential ? *credential + "@" : "";
    say("listening on " + net::to_string(*where));
    std::printf("HTTP_PROXY=http://%s%s\nALL_PROXY=socks5h://%s%s\n", auth.c_str(),
                net::to_string(*where).c_str(), auth.c_str(), net::to_string(*where).c_str());
    std::fflush(stdout);
    if (!where->host.address.is_loopback()) {
      say("warning: listening beyond loopback; anyone who can reach it" +
          std::string(credential ? " and knows the credential" : "") + " can use it");
    }

    std::promise<void> stop;
    asio::signal_set signals(runtime.executor(), SIGINT, SIGTERM, SIGHUP);
    std::function<void(const std::error_code&, int)> on_signal = [&](const std::error_code& ec,
                                                                     int sig) {
      if (ec) return;
      if (sig == SIGHUP) {
        try {
          Config next = load(a);
          core->set_rules(next.sandbox.network);
          say("rules reloaded");
        } catch (const Error& e) {
          say(std::string("reload refused, the old rules stay: ") + e.what());
        }
        signals.async_wait(on_signal);
        return;
      }
      stop.set_value();
    };
    signals.async_wait(on_signal);
    stop.get_future().wait();
    session->close();
    signals.cancel();
    return 0;
  } catch (const Error& e) {
    say(std::string(code_string(e.code())) + ": " + e.what());
    return kExitPaddockFailed;
  }
}

}  // namespace

std::function<int()> add_proxy_command(CLI::App& app) {
  auto args = std::make_shared<ProxyArgs>();
  auto* cmd = app.add_subcommand("proxy", "Run the domain-filtering proxy on its own");
  cmd->add_option("--listen", args->listen, "IP:PORT to listen on (e.g. 127.0.0.1:3128)")
      ->required();
  cmd->add_option("--settings", args->settings,
                  "Settings file (network.allowedDomains / deniedDomains; default: "
                  "~/.srt-settings.json when it exists); SIGHUP re-reads it");
  cmd->add_option("--profile", args->profile, "Base policy (default: default)");
  cmd->add_option("--allow-domain", args->allow_domains, "Reachable domain (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--deny-domain", args->deny_domains, "Unreachable domain (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--credential", args->credential,
                  "USER:PASSWORD clients must present (default: $PADDOCK_PROXY_CREDENTIAL, else a "
                  "random one, printed; the environment keeps it out of `ps`)");
  cmd->add_flag("--no-auth", args->no_auth, "Serve clients without a credential (explicitly)");
  return [args] { return run(*args); };
}

}  // namespace paddock::cli
