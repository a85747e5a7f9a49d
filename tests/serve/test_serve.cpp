// paddock serve through real sockets: an in-process Server on the tests' runtime, a plain
// blocking client. Every message type; interleaved streams in order per id; stdin; signal,
// cancel and disconnect end the whole sandbox; approvals; malformed input; peer credentials
// and tokens; backpressure; overload; drain; the operators' endpoint.
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <set>
#include <thread>

#include "client/mutual_auth.hpp"
#include "paddock/errors.hpp"
#include "runtime/text_encoding.hpp"
#include "serve/daemon_fixture.hpp"
#include "serve/serve_client.hpp"
#include "serve/server.hpp"
#include "support/attack_fixture.hpp"
#include "support/harness.hpp"
#include "support/processes.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;
using test::Daemon;
using test::gone_within;
using test::LineClient;
using test::processes_with;
using test::running_within;
using test::socket_path;
using test::unclassified_sandbox;

namespace {

std::string http_get(const std::string& endpoint, const std::string& path) {
  const auto colon = endpoint.rfind(':');
  auto c = LineClient::tcp(endpoint.substr(0, colon),
                           static_cast<unsigned short>(std::stoi(endpoint.substr(colon + 1))));
  REQUIRE(c.connected());
  c.send_raw("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string all;
  while (auto l = c.line(5s)) all += *l + "\n";
  return all;
}

}  // namespace

TEST_CASE("serve: the mutual proof is HMAC-SHA256 as any client computes it", "[serve]") {
  // A client in another language (examples/python) computes the same proof: values from
  // Python's hmac.new(b"Jefe", b"paddock-daemon\n" + 64*"a" + "\n" + 64*"b", sha256).
  const std::string mine(64, 'a'), theirs(64, 'b');
  CHECK(paddock::client::auth_proof("Jefe", paddock::client::AuthRole::daemon, mine, theirs) ==
        "8e3bb889c2d27b995ef13003ec04b938e318bc1b7f1683a0a0f13a2da4e248f6");
  CHECK(paddock::client::auth_proof("Jefe", paddock::client::AuthRole::client, mine, theirs) ==
        "abcdf614655596546a969faff0623e8482a929ba5ad3fbc402553f1c849671c6");
  CHECK(paddock::client::same_secret("abc", "abc"));
  CHECK_FALSE(paddock::client::same_secret("abc", "abd"));
  CHECK_FALSE(paddock::client::same_secret("abc", "abcd"));
}

TEST_CASE("serve: hello, exec, streams in order per id, one exit each", "[serve]") {
  Daemon d(unclassified_sandbox());
  auto c = d.connect();
  c.send({{"type", "hello"}, {"version", 1}});
  auto hello = c.next();
  REQUIRE(hello);
  CHECK((*hello)["type"] == "hello");
  CHECK((*hello)["version"] == 1);
  CHECK((*hello)["stdin_stream"] == true);

  // Twenty commands at once, each printing 200 numbered lines on both streams.
  constexpr int kCommands = 20;
  for (int i = 0; i < kCommands; ++i) {
    c.send({{"type", "exec"},
            {"id", i},
            {"argv",
             {"/bin/sh", "-c",
              "i=0; while [ $i -lt 200 ]; do echo " + std::to_string(i) +
                  ":$i; echo e$i >&2; i=$((i+1)); done; exit " + std::to_string(i % 7)}}});
  }
  std::map<int, std::string> out, err;
  std::map<int, std::uint64_t> last_seq;
  std::map<int, json> exits;
  std::set<int> started;
  while (exits.size() < kCommands) {
    auto e = c.next(60s);
    REQUIRE(e);
    const std::string type = (*e)["type"];
    REQUIRE(type != "error");
    const int id = (*e)["id"];
    if (type == "started") {
      CHECK((*e)["pid"].get<int>() > 0);
      CHECK((*e)["sandboxed"] == true);
      started.insert(id);
    } else if (type == "stdout" || type == "stderr") {
      CHECK(started.count(id) == 1);
      const auto seq = (*e)["seq"].get<std::uint64_t>();
      CHECK(seq == last_seq[id] + 1);  // per id, from 1, no gap
      last_seq[id] = seq;
      (type == "stdout" ? out : err)[id] += (*e)["data"].get<std::string>();
    } else if (type == "exit") {
      CHECK(exits.count(id) == 0);
      exits[id] = *e;
    }
  }
  for (int i = 0; i < kCommands; ++i) {
    std::string want_out, want_err;
    for (int n = 0; n < 200; ++n) {
      want_out += std::to_string(i) + ":" + std::to_string(n) + "\n";
      want_err += "e" + std::to_string(n) + "\n";
    }
    CHECK(out[i] == want_out);
    CHECK(err[i] == want_err);
    CHECK(exits[i]["exit_code"] == i % 7);
    CHECK(exits[i]["stdout_bytes_total"] == want_out.size());
    CHECK_FALSE(exits[i].contains("stdout"));  // streamed, not repeated
  }
  // A line with argv and no type is an exec (DESIGN.md); ping answers with its id.
  c.send({{"id", "implicit"}, {"argv", {"/bin/echo", "x"}}});
  CHECK(c.until("exit", "implicit").back()["exit_code"] == 0);
  c.send({{"type", "ping"}, {"id", "p1"}});
  CHECK(c.until("pong", "p1").size() == 1);
}

TEST_CASE("serve: stdin given whole or streamed, bytes both ways without loss", "[serve]") {
  Daemon d(unclassified_sandbox());
  auto c = d.connect();
  c.send({{"type", "exec"}, {"id", "whole"}, {"argv", {"/bin/cat"}}, {"stdin", "given\n"}});
  auto events = c.until("exit", "whole");
  CHECK(events[1]["data"] == "given\n");

  c.send({{"type", "exec"}, {"id", "s"}, {"argv", {"/bin/cat"}}, {"stdin", "stream"}});
  c.send({{"type", "write"}, {"id", "s"}, {"data", "one "}});
  c.send({{"type", "write"}, {"id", "s"}, {"data", "/wA="}, {"encoding", "base64"}});  // ff 00
  c.send({{"type", "close_stdin"}, {"id", "s"}});
  std::string got;
  for (const auto& e : c.until("exit", "s")) {
    if (e["type"] != "stdout") continue;
    std::string data = e["data"].get<std::string>();
    // "one " may come alone (text); "\xff\x00" is not UTF-8: base64.
    if (e.value("encoding", "") == "base64") data = *paddock::base64_decode(data);
    got += data;
  }
  CHECK(got == std::string("one \xff\x00", 6));
  // The literal bytes "stream" as stdin: base64 says so.
  c.send({{"type", "exec"},
          {"id", "lit"},
          {"argv", {"/bin/cat"}},
          {"stdin", "c3RyZWFt"},
          {"stdin_encoding", "base64"}});
  CHECK(c.until("exit", "lit")[1]["data"] == "stream");
  // write to a command whose stdin is not streamed: an error, the connection stays.
  c.send({{"type", "exec"}, {"id", "w"}, {"argv", {"/bin/sleep", "0.2"}}});
  c.send({{"type", "write"}, {"id", "w"}, {"data", "x"}});
  bool error_seen = false;
  for (const auto& e : c.until("exit", "w")) {
    if (e["type"] == "error" && e["id"] == "w") {
      error_seen = true;
      CHECK(e["message"] == "stdin is not streamed for this id");
    }
  }
  CHECK(error_seen);
}

TEST_CASE("serve: signal, cancel and a closed connection end the whole sandbox", "[serve]") {
  // The daemon's per-command log lines, to see how a cancel is logged.
  auto logged = std::make_shared<std::pair<std::mutex, std::vector<std::string>>>();
  paddock::serve::ServeOptions options;
  options.log = [logged](const char* level, const nlohmann::json& fields) {
    if (fields.value("event", "") != "command") return;
    std::lock_guard lock(logged->first);
    logged->second.push_back(std::string(level) + " " + fields.value("id", "") + " " +
                             fields.value("error_code", "?") + " " +
                             (fields.value("cancelled", false) ? "cancelled" : "-"));
  };
  Daemon d(unclassified_sandbox(), options);
  auto c = d.connect();
  const std::string tree = "sleep 987651 & sleep 987651 & wait";
  c.send({{"type", "exec"}, {"id", "sig"}, {"argv", {"/bin/sh", "-c", tree}}});
  auto started = c.until("started", "sig");
  REQUIRE(running_within("987651", 2, 10s));
  c.send({{"type", "signal"}, {"id", "sig"}, {"signal", "SIGTERM"}});
  auto exit = c.until("exit", "sig").back();
  CHECK(exit["signal"] == 15);
  CHECK(gone_within("987651", 10s));

  c.send({{"type", "exec"},
          {"id", "cancel"},
          {"argv", {"/bin/sh", "-c", "sleep 987652 & sleep 987652 & wait"}}});
  c.until("started", "cancel");
  c.send({{"type", "cancel"}, {"id", "cancel"}});
  exit = c.until("exit", "cancel").back();
  CHECK(exit["cancelled"] == true);
  CHECK(gone_within("987652", 10s));
  // A cancel the client asked for is logged as the command's outcome, not as paddock failing
  // (it was "warn ... E_SYSTEM").
  auto line_for = [&](const std::string& id) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    for (;;) {
      {
        std::lock_guard lock(logged->first);
        for (const auto& l : logged->second) {
          if (l.find(" " + id + " ") != std::string::npos) return l;
        }
      }
      if (std::chrono::steady_clock::now() > deadline) return std::string("none");
      std::this_thread::sleep_for(10ms);
    }
  };
  CHECK(line_for("cancel") == "info cancel  cancelled");
  CHECK(line_for("sig") == "info sig  -");

  // Unknown signal names and ids: errors, the connection stays.
  c.send({{"type", "signal"}, {"id", "nope"}, {"signal", "TERM"}});
  CHECK(c.next()->value("message", "") == "no command with this id on this connection");
  c.send({{"type", "signal"}, {"id", "sig"}, {"signal", "SIGNOPE"}});
  CHECK(c.next()->value("message", "").find("unknown signal") != std::string::npos);

  // The client goes away: its commands are killed.
  c.send({{"type", "exec"}, {"id", "left"}, {"argv", {"/bin/sh", "-c", "sleep 987653 & wait"}}});
  c.until("started", "left");
  REQUIRE(running_within("987653", 1, 10s));
  c.close();
  CHECK(gone_within("987653", 10s));
}

TEST_CASE("serve: an escalated command asks the client: approve, deny, silence", "[serve]") {
  auto cfg = test::sandbox_config();
  cfg.commands = paddock::DefaultConfig().commands;  // classified: chmod o+w is escalated
  cfg.commands.approval_timeout = 500ms;
  Daemon d(cfg);
  auto c = d.connect();
  c.send(
      {{"type", "exec"}, {"id", "a"}, {"shell", "f=$(mktemp); chmod o+w \"$f\" && echo approved"}});
  auto ask = c.until("approval_request", "a").back();
  CHECK(ask["rule"] == "world-writable");
  c.send({{"type", "approve"}, {"id", "a"}});
  auto events = c.until("exit", "a");
  CHECK(events.back()["exit_code"] == 0);
  CHECK(events.back()["decision"] == "escalated");

  c.send({{"type", "exec"}, {"id", "d"}, {"shell", "f=$(mktemp); chmod o+w \"$f\""}});
  c.until("approval_request", "d");
  c.send({{"type", "deny"}, {"id", "d"}});
  auto denied = c.until("error", "d").back();
  CHECK(denied["code"] == "E_ESCALATED_COMMAND");
  CHECK(denied["rule"] == "world-writable");

  c.send({{"type", "exec"}, {"id", "quiet"}, {"shell", "f=$(mktemp); chmod o+w \"$f\""}});
  c.until("approval_request", "quiet");
  CHECK(c.until("error", "quiet").back()["code"] == "E_ESCALATED_COMMAND");  // the deadline

  // Forbidden: an error naming the rule, nothing ran.
  c.send({{"type", "exec"}, {"id", "f"}, {"shell", "rm -rf /"}});
  auto forbidden = c.until("error", "f").back();
  CHECK(forbidden["code"] == "E_FORBIDDEN_COMMAND");
  CHECK(forbidden["decision"] == "forbidden");
  c.send({{"type", "approve"}, {"id", "f"}});
  CHECK(c.next()->value("message", "") == "no command with this id on this connection");
}

TEST_CASE("serve: malformed input gets an error and the connection survives", "[serve]") {
  paddock::serve::ServeOptions o;
  o.limits.max_line_bytes = 4096;
  Daemon d(unclassified_sandbox(), o);
  auto c = d.connect();
  const std::pair<std::string, std::string> cases[] = {
      {"{nope", "not a JSON line"},
      {"[1,2]", "expected a JSON object per line"},
      {R"({"type":"launch","id":1})", "type: unknown message type \"launch\""},
      {R"({"type":"exec","id":1,"argv":["/bin/true"],"colour":"red"})", "colour: unknown field"},
      {R"({"type":"exec","argv":["/bin/true"]})", "id: missing"},
      {R"({"type":"exec","id":{"x":1},"argv":["/bin/true"]})", "id: expected"},
      {R"({"type":"exec","id":1,"argv":[]})", "argv: needs a program name first"},
      {R"({"type":"exec","id":1,"argv":["/bin/true"],"shell":"true"})", "argv: give exactly one"},
      {R"({"type":"exec","id":1,"argv":["/bin/true"],"timeout_ms":0})", "timeout_ms: expected"},
      {R"({"type":"exec","id":1,"argv":["/bin/true"],"tty":true})", "tty: terminals"},
      {R"({"type":"exec","id":1,"argv":["/bin/true"],"network_events":"yes"})",
       "network_events: expected true or false"},
      {R"({"type":"exec","id":1,"argv":["/bin/true"],"policy":{"allow_write":["/"]}})",
       "policy.allow_write: this daemon does not let requests add writable roots"},
      {R"({"type":"write","id":1,"data":"!!","encoding":"base64"})", "data: is not canonical"},
      {R"({"type":"hello","version":2})", "version: this server speaks version 1"},
      {std::string(5000, 'x'), "line longer than 4096 bytes"},
  };
  for (const auto& [text, message] : cases) {
    INFO(text.substr(0, 100));
    c.send_raw(text + "\n");
    auto e = c.next();
    REQUIRE(e);
    CHECK((*e)["type"] == "error");
    CHECK((*e)["code"] == "E_CONFIG_INVALID");
    CHECK((*e)["message"].get<std::string>().find(message) != std::string::npos);
  }
  // An oversize line split over many reads is dropped whole; what follows it is read.
  c.send_raw(std::string(20000, 'y'));
  c.send_raw(std::string(20000, 'y') + "\n" + R"({"type":"ping","id":"after"})" + "\n");
  CHECK(c.next()->value("type", "") == "error");
  CHECK(c.until("pong", "after").size() == 1);
  // Duplicate ids while running; the id is free again once it exited.
  c.send({{"type", "exec"}, {"id", "dup"}, {"argv", {"/bin/sleep", "0.3"}}});
  c.send({{"type", "exec"}, {"id", "dup"}, {"argv", {"/bin/true"}}});
  bool duplicate = false;
  for (const auto& e : c.until("exit", "dup")) {
    duplicate |=
        e["type"] == "error" && e["message"].get<std::string>().starts_with("duplicate id");
  }
  CHECK(duplicate);
  c.send({{"type", "exec"}, {"id", "dup"}, {"argv", {"/bin/true"}}});
  CHECK(c.until("exit", "dup").back()["exit_code"] == 0);
}

TEST_CASE("serve: unix peers by uid, TCP by token, HTTP refused on the protocol port", "[serve]") {
  {
    paddock::serve::ServeOptions o;
    o.allowed_uids = {static_cast<uid_t>(::geteuid() + 4242)};  // not us
    Daemon d(unclassified_sandbox(), o);
    auto c = d.connect();
    c.send({{"type", "ping"}});
    CHECK(c.closed_by_server());
    CHECK(c.pending().empty());  // nothing is said to a peer that is not allowed
    CHECK(d.server->metrics().connections_refused.load() == 1);
  }
  struct stat st;
  {
    Daemon d(unclassified_sandbox());
    REQUIRE(::stat(d.path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
  }
  const std::string token = "0123456789abcdef-test-token";
  paddock::serve::ServeOptions o;
  o.listen = {"tcp:127.0.0.1:0"};
  o.token = token;
  const std::string root = fs::path(socket_path("root")).replace_extension("").string();
  fs::create_directories(root);
  o.roots = {root};
  Daemon d(unclassified_sandbox(), o);
  const std::string ep = d.server->endpoints().at(0);
  const auto port = static_cast<unsigned short>(std::stoi(ep.substr(ep.rfind(':') + 1)));
  {
    auto c = LineClient::tcp("127.0.0.1", port);
    c.send({{"type", "exec"}, {"id", 1}, {"argv", {"/bin/true"}}});
    auto e = c.next();
    REQUIRE(e);
    CHECK((*e)["message"].get<std::string>().starts_with("authentication required"));
    CHECK(c.closed_by_server());
  }
  // The token is never sent: a hello carrying it is refused, even the right one.
  for (const std::string& sent : {token, token + "x"}) {
    auto c = LineClient::tcp("127.0.0.1", port);
    c.send({{"type", "hello"}, {"version", 1}, {"token", sent}});
    auto e = c.next();
    REQUIRE(e);
    CHECK(e->value("type", "") == "error");
    CHECK(e->value("message", "").starts_with("the token is never sent"));
    CHECK(c.closed_by_server());
  }
  // Mutual proof: the daemon proves it holds the token first, over our nonce and its own.
  const auto handshake = [&](LineClient& c, const std::string& key) {
    const std::string mine = paddock::client::random_nonce();
    c.send({{"type", "hello"}, {"version", 1}, {"nonce", mine}});
    auto challenge = c.next();
    // (CI once saw no challenge here, at once: what the socket said, to tell why.)
    INFO("connected " << c.connected() << ", recv errno " << c.last_errno() << ", refused "
                      << d.server->metrics().connections_refused.load());
    REQUIRE(challenge);
    REQUIRE(challenge->value("type", "") == "challenge");
    const std::string theirs = challenge->value("nonce", "");
    CHECK(paddock::client::well_formed_nonce(theirs));
    CHECK(theirs != mine);
    CHECK(challenge->value("proof", "") ==
          paddock::client::auth_proof(token, paddock::client::AuthRole::daemon, mine, theirs));
    CHECK(challenge->dump().find(token) == std::string::npos);
    c.send({{"type", "auth"},
            {"proof",
             paddock::client::auth_proof(key, paddock::client::AuthRole::client, mine, theirs)}});
  };
  {
    auto c = LineClient::tcp("127.0.0.1", port);
    handshake(c, token + "x");  // a client that does not hold the token
    auto e = c.next();
    REQUIRE(e);
    CHECK(e->value("message", "") == "authentication failed: the proof does not match");
    CHECK(c.closed_by_server());
  }
  {
    // A proof for another exchange (replayed) does not open this one.
    auto c = LineClient::tcp("127.0.0.1", port);
    c.send({{"type", "hello"}, {"version", 1}, {"nonce", std::string(64, 'a')}});
    auto challenge = c.next();
    REQUIRE(challenge);
    c.send({{"type", "auth"},
            {"proof", paddock::client::auth_proof(token, paddock::client::AuthRole::client,
                                                  std::string(64, 'a'), std::string(64, 'b'))}});
    CHECK(c.next()->value("type", "") == "error");
    CHECK(c.closed_by_server());
  }
  {
    auto c = LineClient::tcp("127.0.0.1", port);
    c.send({{"type", "hello"}, {"version", 1}, {"nonce", "short"}});
    CHECK(c.next()->value("type", "") == "error");
    CHECK(c.closed_by_server());
  }
  {
    auto c = LineClient::tcp("127.0.0.1", port);
    c.send_raw("GET / HTTP/1.1\r\nHost: evil.example\r\nOrigin: http://evil.example\r\n\r\n");
    auto l = c.line();
    REQUIRE(l);
    CHECK(l->starts_with("HTTP/1.1 400"));
    CHECK(c.closed_by_server());
  }
  {
    auto c = LineClient::tcp("127.0.0.1", port);
    handshake(c, token);
    CHECK(c.next()->value("type", "") == "hello");
    c.send({{"type", "exec"}, {"id", 1}, {"argv", {"/bin/echo", "ok"}}, {"cwd", root}});
    CHECK(c.until("exit", 1).back()["exit_code"] == 0);
    // A TCP client has no uid the daemon could trust: its commands run under --root only.
    for (const std::string& cwd :
         {std::string("/var"), std::string("relative/dir"), root + "/../.."}) {
      INFO(cwd);
      c.send({{"type", "exec"}, {"id", 2}, {"argv", {"/bin/true"}}, {"cwd", cwd}});
      auto e = c.until("error", 2).back();
      CHECK(e["message"].get<std::string>().starts_with("cwd: "));
    }
    c.send({{"type", "exec"}, {"id", 3}, {"argv", {"/bin/true"}}});
    CHECK(c.until("error", 3).back()["message"].get<std::string>().find("absolute working") !=
          std::string::npos);
  }
  {
    // Before the hello: 4 KiB at most, and only a hello.
    auto c = LineClient::tcp("127.0.0.1", port);
    c.send_raw(std::string(5000, 'x'));
    CHECK(c.closed_by_server());
  }
  {
    // Pre-authentication lock-out: 80 connections that never say hello do not keep 15
    // clients holding the token out (the oldest waiting ones make room).
    std::vector<LineClient> idle;
    for (int i = 0; i < 80; ++i) idle.push_back(LineClient::tcp("127.0.0.1", port));
    int in = 0;
    for (int i = 0; i < 15; ++i) {
      auto c = LineClient::tcp("127.0.0.1", port);
      handshake(c, token);
      auto e = c.next();
      if (e && e->value("type", "") == "hello") ++in;
    }
    CHECK(in == 15);
    // The flood does not hold more than the bounds: evicted connections are closed.
    std::vector<LineClient> more;
    for (int i = 0; i < 200; ++i) more.push_back(LineClient::tcp("127.0.0.1", port));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (d.server->metrics().connections.load() > 2 * 64 &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(d.server->metrics().connections.load() <= 2 * 64);
  }
  {
    // A drain keeps the TCP port bound: nothing else can take it and collect what clients
    // send; connections during the drain are refused.
    std::promise<void> drained;
    d.server->drain([&drained] { drained.set_value(); });
    const int other = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    // (give the drain its turn on the server's strand first)
    auto c = LineClient::tcp("127.0.0.1", port);
    CHECK(c.closed_by_server());
    CHECK(::bind(other, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0);
    ::close(other);
    drained.get_future().wait_for(std::chrono::seconds(10));
  }
  // Refused configurations: TCP without a token, beyond loopback without --allow-remote.
  auto refused = [](paddock::serve::ServeOptions bad) {
    test::Harness h(unclassified_sandbox());
    bad.socket_activation = false;
    try {
      paddock::serve::Server s(test::shared_runtime().executor(), h.manager, bad);
    } catch (const paddock::Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  paddock::serve::ServeOptions no_token;
  no_token.listen = {"tcp:127.0.0.1:0"};
  CHECK(refused(no_token).find("needs a token") != std::string::npos);
  paddock::serve::ServeOptions remote;
  remote.listen = {"tcp:0.0.0.0:0"};
  remote.token = token;
  CHECK(refused(remote).find("--allow-remote") != std::string::npos);
  fs::remove_all(root);
}

TEST_CASE("serve: a client that stops reading pauses the command, memory stays bounded",
          "[serve]") {
  paddock::serve::ServeOptions o;
  o.limits.high_water_bytes = 256 * 1024;
  o.limits.hard_limit_bytes = 1024 * 1024;
  Daemon d(unclassified_sandbox(), o);
  auto c = d.connect();
  constexpr std::uint64_t kBytes = 64ull << 20;
  c.send({{"type", "exec"},
          {"id", "big"},
          {"argv", {"/bin/sh", "-c", "yes 0123456789abcdef | head -c " + std::to_string(kBytes)}},
          {"max_output_bytes", kBytes}});
  // Not reading for a second: the queue stays near the mark, the command waits.
  const auto until = std::chrono::steady_clock::now() + 1s;
  std::int64_t peak = 0;
  while (std::chrono::steady_clock::now() < until) {
    peak = std::max(peak, d.server->metrics().queued_bytes.load());
    std::this_thread::sleep_for(10ms);  // sampling a gauge, against the deadline above
  }
  CHECK(peak > 0);
  CHECK(peak < static_cast<std::int64_t>(2 * o.limits.hard_limit_bytes));
  CHECK(d.server->metrics().backpressure_pauses.load() > 0);
  // Then everything arrives, nothing lost, and it exits normally.
  std::uint64_t got = 0;
  json exit;
  for (;;) {
    auto e = c.next(60s);
    REQUIRE(e);
    if ((*e)["type"] == "stdout") got += (*e)["data"].get<std::string>().size();
    if ((*e)["type"] == "exit") {
      exit = *e;
      break;
    }
  }
  CHECK(got == kBytes);
  CHECK(exit["exit_code"] == 0);
  CHECK(exit["stdout_bytes_total"] == kBytes);
  CHECK(exit["truncated"] == false);
}

TEST_CASE("serve: a TCP client that does not prove the token in time is closed", "[serve]") {
  // Whatever it sent first: nothing, a hello (answered by the daemon's challenge, a write of
  // its own, which once re-armed the one timer and dropped the deadline), or half a line.
  paddock::serve::ServeOptions o;
  o.listen = {"tcp:127.0.0.1:0"};
  o.token = "0123456789abcdef-test-token";
  o.limits.auth_deadline = std::chrono::milliseconds(300);
  Daemon d(unclassified_sandbox(), o);
  const std::string ep = d.server->endpoints().at(0);
  const auto port = static_cast<unsigned short>(std::stoi(ep.substr(ep.rfind(':') + 1)));
  for (const std::string first : {"nothing", "hello", "partial"}) {
    INFO(first);
    auto c = test::LineClient::tcp("127.0.0.1", port);
    REQUIRE(c.connected());
    const auto start = std::chrono::steady_clock::now();
    if (first == "hello") {
      c.send({{"type", "hello"}, {"version", 1}, {"nonce", paddock::client::random_nonce()}});
      auto challenge = c.next();
      REQUIRE(challenge);
      CHECK(challenge->value("type", "") == "challenge");
    }
    if (first == "partial") c.send_raw("{\"type\":\"hel");
    CHECK(c.closed_by_server(std::chrono::seconds(10)));
    CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(250));
  }
  CHECK(d.server->metrics().connections_refused.load() == 3);
}

TEST_CASE("serve: limits answer E_OVERLOADED, never queue", "[serve]") {
  paddock::serve::ServeOptions o;
  o.limits.max_per_connection = 2;
  Daemon d(unclassified_sandbox(), o);
  auto c = d.connect();
  for (const char* id : {"1", "2", "3"}) {
    c.send({{"type", "exec"}, {"id", id}, {"argv", {"/bin/sleep", "0.5"}}});
  }
  auto e = c.until("error", "3").back();
  CHECK(e["code"] == "E_OVERLOADED");
  CHECK(d.server->metrics().overloaded.load() == 1);
  c.until_each("exit", {"1", "2"});  // either may finish first
  // Capped output: the first bytes, the rest counted.
  c.send({{"type", "exec"},
          {"id", "cap"},
          {"argv", {"/bin/sh", "-c", "yes | head -c 100000"}},
          {"max_output_bytes", 1000}});
  std::size_t got = 0;
  json exit;
  for (const auto& ev : c.until("exit", "cap")) {
    if (ev["type"] == "stdout") got += ev["data"].get<std::string>().size();
    exit = ev;
  }
  CHECK(got == 1000);
  CHECK(exit["truncated"] == true);
  CHECK(exit["stdout_bytes_total"] == 100000);
}

TEST_CASE("serve: drain lets running commands finish, refuses new ones, readyz says 503",
          "[serve]") {
  paddock::serve::ServeOptions o;
  o.http = "127.0.0.1:0";
  o.drain_grace = 10s;
  Daemon d(unclassified_sandbox(), o);
  const std::string http = d.server->http_endpoint();
  CHECK(http_get(http, "/healthz").find("200 OK") != std::string::npos);
  CHECK(http_get(http, "/readyz").find("200 OK") != std::string::npos);
  auto c = d.connect();
  c.send({{"type", "exec"}, {"id", "run"}, {"argv", {"/bin/sh", "-c", "sleep 0.5; echo done"}}});
  c.until("started", "run");
  std::promise<void> drained;
  d.server->drain([&] { drained.set_value(); });
  CHECK(http_get(http, "/readyz").find("503") != std::string::npos);
  c.send({{"type", "exec"}, {"id", "new"}, {"argv", {"/bin/true"}}});
  CHECK(c.until("error", "new").back()["code"] == "E_MANAGER_CLOSED");
  auto events = c.until("exit", "run");
  CHECK(events.back()["exit_code"] == 0);
  CHECK(drained.get_future().wait_for(10s) == std::future_status::ready);
  CHECK_FALSE(fs::exists(d.path));  // the socket is gone
  const std::string metrics = http_get(http, "/metrics");
  CHECK(metrics.find("paddock_ready 0") != std::string::npos);
  CHECK(metrics.find("paddock_commands_started_total{decision=\"sandboxed\"} 1") !=
        std::string::npos);
  CHECK(metrics.find("paddock_commands_finished_total{outcome=\"exited\"} 1") != std::string::npos);
  CHECK(metrics.find("paddock_spawn_latency_seconds_count 1") != std::string::npos);
  CHECK(http_get(http, "/nope").find("404") != std::string::npos);
}

TEST_CASE("serve: past the drain grace, what still runs is killed", "[serve]") {
  paddock::serve::ServeOptions o;
  o.drain_grace = 200ms;
  Daemon d(unclassified_sandbox(), o);
  auto c = d.connect();
  c.send({{"type", "exec"}, {"id", "long"}, {"argv", {"/bin/sh", "-c", "sleep 987654 & wait"}}});
  c.until("started", "long");
  std::promise<void> drained;
  d.server->drain([&] { drained.set_value(); });
  CHECK(drained.get_future().wait_for(15s) == std::future_status::ready);
  CHECK(gone_within("987654", 10s));
  CHECK(c.closed_by_server());
}

TEST_CASE(
    "serve: review: deep nesting, close_output, an early signal, approvals per "
    "connection, injected variables, a live socket",
    "[serve]") {
  auto cfg = test::sandbox_config();
  cfg.commands = paddock::DefaultConfig().commands;
  cfg.commands.approval_timeout = 2s;
  Daemon d(cfg);
  auto c = d.connect();
  // 300,000 levels of nesting once overflowed the stack in a message about the value.
  const std::string deep(300000, '[');
  c.send_raw(R"({"type":"exec","id":1,"argv":["x"],"timeout_ms":)" + deep + "\n");
  auto e = c.next();
  REQUIRE(e);
  CHECK((*e)["message"].get<std::string>().find("nested deeper") != std::string::npos);
  c.send({{"type", "ping"}, {"id", "alive"}});
  CHECK(c.until("pong", "alive").size() == 1);

  // The reader goes away: the command's next write fails as it would without paddock.
  c.send({{"type", "exec"}, {"id", "yes"}, {"argv", {"/usr/bin/yes"}}});
  c.until("stdout", "yes");
  c.send({{"type", "close_output"}, {"id", "yes"}, {"stream", "stdout"}});
  json exit;
  for (int i = 0; i < 100000 && exit.is_null(); ++i) {  // bounded: never all of `yes`
    auto ev = c.next();
    REQUIRE(ev);
    if ((*ev)["type"] == "exit" || (*ev)["type"] == "error") exit = *ev;
  }
  CHECK(exit["signal"] == 13);

  // A signal sent before the command started is delivered when it starts.
  for (int i = 0; i < 10; ++i) {
    const std::string id = "early" + std::to_string(i);
    c.send({{"type", "exec"}, {"id", id}, {"argv", {"/bin/sleep", "30"}}});
    c.send({{"type", "signal"}, {"id", id}, {"signal", "KILL"}});
    CHECK(c.until("exit", id).back()["signal"] == 9);
  }

  // approve_session belongs to the connection that said it.
  c.send({{"type", "exec"}, {"id", "s1"}, {"shell", "f=$(mktemp); chmod o+w \"$f\""}});
  c.until("approval_request", "s1");
  c.send({{"type", "approve_session"}, {"id", "s1"}});
  CHECK(c.until("exit", "s1").back()["exit_code"] == 0);
  c.send({{"type", "exec"}, {"id", "s2"}, {"shell", "f=$(mktemp); chmod o+w \"$f\""}});
  for (const auto& ev : c.until("exit", "s2")) CHECK(ev["type"] != "approval_request");
  auto other = d.connect();
  other.send({{"type", "exec"}, {"id", "s3"}, {"shell", "f=$(mktemp); chmod o+w \"$f\""}});
  other.until("approval_request", "s3");
  other.send({{"type", "deny"}, {"id", "s3"}});
  CHECK(other.until("error", "s3").back()["code"] == "E_ESCALATED_COMMAND");

  // A variable holding a command line is judged as that command, as a prefix is.
  c.send(
      {{"type", "exec"}, {"id", "env"}, {"shell", "echo hi"}, {"env", {{"PAGER", "ssh host id"}}}});
  auto ask = c.until("approval_request", "env").back();
  CHECK(ask["rule"] == "remote-shell");
  c.send({{"type", "deny"}, {"id", "env"}});
  c.until("error", "env");

  // A second daemon on a live socket is refused; the first keeps its path.
  paddock::serve::ServeOptions again;
  again.listen = {"unix:" + d.path};
  again.socket_activation = false;
  CHECK_THROWS_WITH(paddock::serve::Server(test::shared_runtime().executor(), d.h.manager, again),
                    Catch::Contains("another daemon is listening there"));
  CHECK(fs::exists(d.path));
  auto still = d.connect();
  still.send({{"type", "ping"}, {"id", "p"}});
  CHECK(still.until("pong", "p").size() == 1);
}
