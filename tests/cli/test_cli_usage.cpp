// paddock's command line itself: usage errors in one `paddock:` line with 125, --version,
// --help, and the completion scripts (checked by the shell that loads them).
#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>

#include "cli/cli_support.hpp"

using test::contains;
using test::line_count;
using test::paddock_cli;

TEST_CASE("paddock: every usage error is one line starting with paddock:, exit 125",
          "[cli][usage]") {
  const std::vector<std::vector<std::string>> wrong = {
      {},                                          // no subcommand
      {"frobnicate"},                              // unknown subcommand
      {"run", "--bogus-flag", "--", "/bin/true"},  // unknown flag
      {"run", "--timeout"},                        // missing value
      {"run", "--json=maybe", "--", "/bin/true"},  // a flag given a value it cannot take
      {"doctor", "extra"},                         // unexpected positional
      {"proxy"},                                   // missing required --listen
      {"completion"},                              // missing shell
      {"completion", "tcsh"},                      // unknown shell
      {"--bogus"},
  };
  for (const auto& args : wrong) {
    std::string shown;
    for (const auto& a : args) shown += a + " ";
    INFO("paddock " << shown);
    auto r = paddock_cli(args);
    CHECK(r.result.exit_code == 125);
    CHECK(line_count(r.result.stderr_data) == 1);
    CHECK(r.result.stderr_data.rfind("paddock: ", 0) == 0);
    CHECK(contains(r.result.stderr_data, "--help)"));
    CHECK(r.result.stdout_data.empty());
  }
  // A word that names no subcommand is named (new-user trial: "a subcommand is required").
  CHECK(contains(paddock_cli({"rn", "--", "true"}).result.stderr_data,
                 "unknown subcommand 'rn' (see paddock --help)"));
  // The hint names the subcommand the error is about.
  CHECK(contains(paddock_cli({"run", "--bogus-flag"}).result.stderr_data,
                 "(see paddock run --help)"));
}

TEST_CASE("paddock --version names the program, version, commit and event backend",
          "[cli][usage]") {
  auto r = paddock_cli({"--version"});
  CHECK(r.result.exit_code == 0);
  INFO(r.result.stdout_data);
  const std::regex shape(R"(paddock \d+\.\d+\.\d+ \(commit ([0-9a-f]{7,40}(-dirty)?|unknown), )"
                         R"(event backend epoll, libpaddock (io_uring|epoll)\)\n)");
  CHECK(std::regex_match(r.result.stdout_data, shape));
  CHECK(contains(r.result.stdout_data, std::string("libpaddock ") + PADDOCK_IO_BACKEND_NAME + ")"));
  CHECK(r.result.stderr_data.empty());
}

TEST_CASE("paddock --help shows the exit codes, environment and defaults", "[cli][usage]") {
  for (auto args : {std::vector<std::string>{"--help"}, {"run", "--help"}}) {
    auto r = paddock_cli(args);
    CHECK(r.result.exit_code == 0);
    const std::string& help = r.result.stdout_data;
    INFO(help);
    for (const char* needle :
         {"124 ", "125 ", "126 ", "127 ", "128+N", "PADDOCK_LOG", "PADDOCK_DEFAULT_TIMEOUT_SECONDS",
          "PADDOCK_MAX_TIMEOUT_SECONDS", "PADDOCK_PROXY_CREDENTIAL", "Defaults", "completion"}) {
      CHECK(contains(help, needle));
    }
  }
  auto run = paddock_cli({"run", "--help"}).result.stdout_data;
  CHECK(contains(run, "--max-output"));
  CHECK(contains(run, "default 600 s"));
  CHECK(contains(run, "with --json 1 MiB"));
  CHECK(contains(run, "(default: default)"));
}

namespace {

// Runs `script` in bash after loading `paddock completion bash`.
paddock::BlockingResult bash_with_completion(const std::string& script) {
  test::Harness h(test::host_config());
  return h.exec(paddock::Command::exec(
      {"/bin/bash", "-c", std::string("source <(\"$0\" completion bash) || exit 9\n") + script,
       PADDOCK_BINARY}));
}

// The completions bash offers for a command line; `words` ends with the word being completed.
std::vector<std::string> complete(const std::vector<std::string>& words) {
  std::string array;
  for (const auto& w : words) array += "'" + w + "' ";
  auto r = bash_with_completion("COMP_WORDS=(" + array +
                                "); COMP_CWORD=" + std::to_string(words.size() - 1) +
                                "; _paddock; printf '%s\\n' \"${COMPREPLY[@]}\"");
  INFO(r.result.stderr_data);
  REQUIRE(r.result.exit_code == 0);
  std::vector<std::string> out;
  std::string line;
  for (char c : r.result.stdout_data) {
    if (c == '\n') {
      if (!line.empty()) out.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  return out;
}

bool offers(const std::vector<std::string>& got, const std::string& word) {
  return std::find(got.begin(), got.end(), word) != got.end();
}

}  // namespace

TEST_CASE("paddock completion bash: bash loads it and it completes subcommands and flags",
          "[cli][usage][completion]") {
  auto loaded = bash_with_completion("complete -p paddock");
  CHECK(loaded.result.exit_code == 0);
  CHECK(loaded.result.stdout_data == "complete -F _paddock paddock\n");
  CHECK(loaded.result.stderr_data.empty());

  auto subs = complete({"paddock", ""});
  for (const char* s : {"run", "doctor", "proxy", "completion", "--version", "--help"}) {
    CHECK(offers(subs, s));
  }
  CHECK(complete({"paddock", "r"}) == std::vector<std::string>{"run"});
  CHECK(complete({"paddock", "run", "--js"}) == std::vector<std::string>{"--json"});
  auto run_flags = complete({"paddock", "run", "--"});
  for (const char* f :
       {"--timeout", "--max-output", "--allow-write", "--network", "--settings", "--env", "--"}) {
    CHECK(offers(run_flags, f));
  }
  CHECK(complete({"paddock", "run", "--network", ""}) ==
        std::vector<std::string>{"blocked", "filtered", "allowed"});
  CHECK(complete({"paddock", "-v", "run", "--profile", "re"}) ==
        std::vector<std::string>{"read-only"});
  CHECK(complete({"paddock", "completion", "z"}) == std::vector<std::string>{"zsh"});
  // After `--` the words are the command's: a program name, never paddock's flags.
  auto program = complete({"paddock", "run", "--json", "--", "bas"});
  CHECK(offers(program, "bash"));
  CHECK(complete({"paddock", "run", "--", "ls", "--js"}).empty());
  // A flag's value is not taken for the subcommand.
  CHECK(complete({"paddock", "run", "--timeout", ""}).empty());
}

TEST_CASE("paddock completion zsh and fish print scripts their shells parse",
          "[cli][usage][completion]") {
  auto zsh = paddock_cli({"completion", "zsh"});
  CHECK(zsh.result.exit_code == 0);
  CHECK(zsh.result.stdout_data.rfind("#compdef paddock\n", 0) == 0);
  CHECK(contains(zsh.result.stdout_data, "'--max-output:Cap per stream"));
  auto fish = paddock_cli({"completion", "fish"});
  CHECK(fish.result.exit_code == 0);
  CHECK(contains(fish.result.stdout_data,
                 "complete -c paddock -n '__fish_seen_subcommand_from run' -l network -x -a "
                 "'blocked filtered allowed'"));
  // Each shell's own parser, where it is installed.
  for (auto [shell, script] : {std::pair{"/bin/zsh", zsh.result.stdout_data},
                               std::pair{"/usr/bin/fish", fish.result.stdout_data}}) {
    if (!std::filesystem::exists(shell)) {
      WARN(shell << " not installed: syntax not checked");
      continue;
    }
    test::Harness h(test::host_config());
    paddock::ExecOptions o;
    o.stdin_data = script;
    auto parsed = h.exec(paddock::Command::exec({shell, "-n"}), o);
    INFO(shell << ": " << parsed.result.stderr_data);
    CHECK(parsed.result.exit_code == 0);
  }
}
