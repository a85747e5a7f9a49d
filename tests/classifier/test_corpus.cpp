// The classifier against real agent commands (tests/classifier/corpus/agent_commands.jsonl,
// taken from public agent runs; SOURCES.md names each) and against the red team's spellings
// of every bypass mechanism (bypass_spellings.jsonl). Decided as an unattended farm would:
// the default policy (sandbox on, filtered network), a workspace under a home.
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "paddock/classifier.hpp"

namespace {

using paddock::Decision;

std::vector<nlohmann::json> read_jsonl(const std::string& name) {
  std::ifstream in(std::string(CLASSIFIER_CORPUS_DIR) + "/" + name);
  REQUIRE(in.good());
  std::vector<nlohmann::json> out;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  }
  return out;
}

paddock::ClassifyContext farm() {
  paddock::ClassifyContext ctx;
  ctx.cwd = "/home/agent/project";
  ctx.home = "/home/agent";
  return ctx;
}

}  // namespace

TEST_CASE("real agent commands run unattended unless listed, with why", "[classifier][corpus]") {
  const auto commands = read_jsonl("agent_commands.jsonl");
  std::map<std::string, nlohmann::json> exceptions;
  for (auto& e : read_jsonl("exceptions.jsonl")) exceptions[e["cmd"].get<std::string>()] = e;
  REQUIRE(commands.size() >= 700);
  std::size_t unattended = 0, used = 0;
  for (const auto& row : commands) {
    const std::string cmd = row["cmd"];
    const auto c = paddock::classify_script(cmd, {}, farm());
    const bool runs = c.decision == Decision::allow || c.decision == Decision::sandboxed;
    unattended += runs ? 1 : 0;
    INFO(row["source"].get<std::string>()
         << "\n"
         << cmd << "\n=> " << to_string(c.decision) << " [" << c.rule << "] " << c.reason);
    // Nothing that does real harm from inside the sandbox is `allow`.
    if (auto it = exceptions.find(cmd); it != exceptions.end()) {
      ++used;
      CHECK(std::string(to_string(c.decision)) == it->second["expect"].get<std::string>());
      CHECK(c.rule == it->second["rule"].get<std::string>());
    } else {
      CHECK(runs);
    }
  }
  CHECK(used == exceptions.size());  // every listed exception is still in the corpus
  WARN(
      "corpus: " << unattended << " of " << commands.size() << " run unattended ("
                 << (100.0 * static_cast<double>(unattended) / static_cast<double>(commands.size()))
                 << "%)");
}

TEST_CASE("every bypass mechanism, in several spellings, is forbidden or escalated",
          "[classifier][corpus]") {
  const auto rows = read_jsonl("bypass_spellings.jsonl");
  REQUIRE(rows.size() >= 60);
  std::map<std::string, int> per_mechanism;
  for (const auto& row : rows) {
    const std::string cmd = row["cmd"];
    const std::string expect = row["expect"];
    const auto c = paddock::classify_script(cmd, {}, farm());
    INFO(row["mechanism"].get<std::string>()
         << ": " << cmd << "\n=> " << to_string(c.decision) << " [" << c.rule << "] " << c.reason);
    if (expect == "forbidden") {
      CHECK(c.decision == Decision::forbidden);
    } else {
      CHECK((c.decision == Decision::escalated || c.decision == Decision::forbidden));
    }
    // Refused unattended with the sandbox off or the network open; with the network blocked a
    // remote effect reaches nothing (sandboxed), and nothing else gets weaker.
    auto off = farm();
    off.sandboxed = false;
    auto open = farm();
    open.network = paddock::NetworkMode::allowed;
    for (const auto& ctx : {off, open}) {
      const auto d = paddock::classify_script(cmd, {}, ctx).decision;
      CHECK((d == Decision::forbidden || d == Decision::escalated));
    }
    auto blocked = farm();
    blocked.network = paddock::NetworkMode::blocked;
    const auto b = paddock::classify_script(cmd, {}, blocked).decision;
    CHECK(b != Decision::allow);
    if (expect == "forbidden") CHECK(b == Decision::forbidden);
    ++per_mechanism[row["mechanism"]];
  }
  for (const auto& [mechanism, n] : per_mechanism) {
    INFO(mechanism);
    CHECK(n >= 3);  // several spellings each
  }
}
