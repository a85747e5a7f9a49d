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
#include "paddock/manager.hpp"
#include "paddock/settings.hpp"

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

// A farm on the built-in default policy (sandbox on, network filtered with no domain
// allowed), judged as `paddock run` judges.
paddock::ClassifyContext farm() {
  paddock::ClassifyContext ctx = paddock::decision_context(paddock::profile_config("default"));
  ctx.cwd = "/home/agent/project";
  ctx.home = "/home/agent";
  return ctx;
}

// A farm whose allow list names every host a red-team command targets: remote effects
// reach their hosts.
paddock::ClassifyContext farm_reaching_all() {
  auto ctx = farm();
  ctx.reaches = nullptr;
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

TEST_CASE("held-out agent commands run unattended: at least 99%", "[classifier][corpus]") {
  // Sampled after the classifier was built, from the same public runs as the corpus but other
  // commands and trajectories (SOURCES.md); never used to tune it.
  const auto commands = read_jsonl("heldout_commands.jsonl");
  REQUIRE(commands.size() >= 1000);
  std::size_t unattended = 0;
  std::map<std::string, int> refused;
  for (const auto& row : commands) {
    const auto c = paddock::classify_script(row["cmd"].get<std::string>(), {}, farm());
    if (c.decision == Decision::allow || c.decision == Decision::sandboxed) {
      ++unattended;
    } else {
      ++refused[to_string(c.decision) + std::string(" ") + c.rule];
    }
  }
  std::string by_rule;
  for (const auto& [rule, n] : refused) by_rule += "\n  " + rule + ": " + std::to_string(n);
  WARN("held-out: " << unattended << " of " << commands.size() << " run unattended ("
                    << 100.0 * static_cast<double>(unattended) /
                           static_cast<double>(commands.size())
                    << "%)" << by_rule);
  CHECK(unattended * 100 >= commands.size() * 99);
}

TEST_CASE("every bypass mechanism, in several spellings, is forbidden or escalated",
          "[classifier][corpus]") {
  const auto rows = read_jsonl("bypass_spellings.jsonl");
  REQUIRE(rows.size() >= 60);
  std::map<std::string, int> per_mechanism;
  for (const auto& row : rows) {
    const std::string cmd = row["cmd"];
    const std::string expect = row["expect"];
    const auto c = paddock::classify_script(cmd, {}, farm_reaching_all());
    INFO(row["mechanism"].get<std::string>()
         << ": " << cmd << "\n=> " << to_string(c.decision) << " [" << c.rule << "] " << c.reason);
    if (expect == "forbidden") {
      CHECK(c.decision == Decision::forbidden);
    } else {
      CHECK((c.decision == Decision::escalated || c.decision == Decision::forbidden));
    }
    // Refused unattended with the sandbox off or the network open; with the network blocked a
    // remote effect reaches nothing (sandboxed), and nothing else gets weaker.
    auto off = farm_reaching_all();
    off.sandboxed = false;
    auto open = farm_reaching_all();
    open.network = paddock::NetworkMode::allowed;
    for (const auto& ctx : {off, open}) {
      const auto d = paddock::classify_script(cmd, {}, ctx).decision;
      CHECK((d == Decision::forbidden || d == Decision::escalated));
    }
    auto blocked = farm_reaching_all();
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
