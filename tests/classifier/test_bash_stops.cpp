// Where bash stops with a syntax error (classifier/bash_stops.hpp), with bash itself as the
// oracle: each script is run by the host's bash with a harmless payload (`touch MARK`) in
// place of a destructive one. Whenever bash runs the payload, the classifier must see the
// destructive spelling (forbidden); only when bash never runs it may the classifier judge the
// lines before the error alone.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "paddock/classifier.hpp"

namespace {

using paddock::classify_script;
using paddock::Decision;
namespace fs = std::filesystem;

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// Runs `bash -c script` in `dir` with stdin, stdout and stderr on /dev/null; its status.
int run_bash(const std::string& script, const fs::path& dir) {
  std::fflush(nullptr);  // or the child's freopen writes the parent's buffered output again
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(120);
    ::freopen("/dev/null", "r", stdin);
    ::freopen("/dev/null", "w", stdout);
    ::freopen("/dev/null", "w", stderr);
    ::execl("/bin/bash", "bash", "-c", script.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct Oracle {
  fs::path dir = fs::temp_directory_path() / ("paddock-bash-stops-" + std::to_string(::getpid()));
  Oracle() { fs::create_directories(dir); }
  ~Oracle() { fs::remove_all(dir); }
  // Whether bash runs PAYLOAD in the script.
  bool runs_payload(const std::string& script) {
    fs::remove(dir / "MARK");
    run_bash(replace_all(script, "PAYLOAD", "touch MARK"), dir);
    return fs::exists(dir / "MARK");
  }
};

}  // namespace

TEST_CASE("bash's own syntax errors: what bash never runs is not judged, checked against bash",
          "[classifier][bash-stops]") {
  if (!fs::exists("/bin/bash")) {
    WARN("no /bin/bash to check against");
    return;
  }
  Oracle bash;
  // Text agents send that is not bash: bash runs the lines before the first error only.
  const std::vector<std::string> stops = {
      "edit 1:9\nfrom pwn import *\np = remote(\"pwn.example\", 8000)\nPAYLOAD\nend_of_edit\n",
      "edit 9:9\n    model = s.model()\nPAYLOAD\nend_of_edit\n",
      "echo a; x = f(1)\nPAYLOAD",
      "ls | foo bar(\nPAYLOAD",
      "ls && 2>x foo bar(\nPAYLOAD",
      "x=1 cat >f <<'PY'\\nprint(1)\\nPY\nPAYLOAD",  // \n typed as two characters
      "THOUGHT: it isn't there\nPAYLOAD\n",
      "echo \"unclosed\nPAYLOAD\n",
      "echo \"$(true)\nPAYLOAD\n",
      "echo 'unclosed; PAYLOAD",
      "PAYLOAD; foo bar(",  // the whole line is one command: rejected whole
      "PAYLOAD && >x (\nPAYLOAD",
      "cat >f <<X print(\nPAYLOAD",
  };
  for (const auto& s : stops) {
    INFO(s);
    REQUIRE_FALSE(bash.runs_payload(s));
    const auto c = classify_script(replace_all(s, "PAYLOAD", "rm -rf ~"));
    INFO(to_string(c.decision) << " [" << c.rule << "] " << c.reason);
    CHECK((c.decision == Decision::allow || c.decision == Decision::sandboxed));
  }
  // Lines that look like an error but are not where bash reads a command (a heredoc's body, a
  // string, a compound command, a continued line), or an error bash reads differently (extended
  // globs, aliases): bash runs the payload, so the classifier must see it.
  const std::vector<std::string> runs = {
      "cat <<EOF\nx = f(1)\nEOF\nPAYLOAD\ny = g(",
      "cat <<'EOF'\nx = f(1)\nEOF\nPAYLOAD\ny = g(",
      "python3 - <<PY\nprint(1)\nPY\nPAYLOAD\nfoo bar(",
      "echo 'a\nx = f(1)\n'; PAYLOAD\nfoo bar(",
      "echo \"a\nx = f(1)\n\"; PAYLOAD\nfoo bar(",
      "if true; then\n PAYLOAD\nfi\nfoo bar(",
      "echo a \\\n  b; PAYLOAD\nfoo bar(",
      "PAYLOAD\necho \"$(echo \")\")\"\nfoo bar(",
      "shopt -s extglob\nls x @(a|b)\nPAYLOAD\nfoo bar(",
      "PAYLOAD # it's a comment\nfoo bar(",
      "echo it\\'s; PAYLOAD",
      "echo $'it\\'s'; PAYLOAD",
      "f() { PAYLOAD; }\nf\nfoo bar(",
      "case x in x) PAYLOAD;; esac\nfoo bar(",
      // Lines the grammar takes for a heredoc's end but bash does not: bash reads on to the
      // real end, then runs what follows.
      "cat <<EOF\nEOF \nx y (\nEOF\nPAYLOAD",
      "cat <<EOF\nEOF\t\nx y (\nEOF\nPAYLOAD",
      "cat <<EOF\n EOF\nx y (\nEOF\nPAYLOAD",
      "cat <<EOF\n\tEOF\nx y (\nEOF\nPAYLOAD",
      "cat <<EOF\nEOF;\nx y (\nEOF\nPAYLOAD",
      "cat <<-EOF\n  EOF\nx y (\nEOF\nPAYLOAD",
      "cat <<E\"O\"F\nE\"O\"F\nx y (\nEOF\nPAYLOAD",
      "cat <<-'EOF'\n    EOF\nx y (\nEOF\nPAYLOAD",
      "cat <<EOF\nEOF \n&& x\nEOF\nPAYLOAD",
      // Aliases make the error line something else; bash recovers inside an array.
      "set -o posix\nal''ias w1='true;'\nw1 w2 (){ :; }; PAYLOAD",
      "sh''opt -s expand_al''iases\nal''ias w1='true;'\nw1 w2 (){ :; }; PAYLOAD",
      "shopt -s expand_aliases\nalias w1='true;'\nw1 w2 (){ :; }; PAYLOAD",
      "x=(\nx y (\nPAYLOAD",
      // delimiters the shells read otherwise, joined lines, variables set by builtins
      "cat <<'E\\OF'\nEOF\nx y (\nE\\OF\nPAYLOAD\n",
      "cat <<\"E\\OF\"\nEOF\nx y (\nE\\OF\nPAYLOAD\n",
      "cat <<EOF\r\nEOF\nx y (\nEOF\r\nPAYLOAD\n",
      "cat <<EOF\nfoo\\\nEOF\nx y (\nEOF\nPAYLOAD\n",
      "cat <<$'EOF'\n$EOF\nx y (\nEOF\nPAYLOAD\n",
      "printf -v POSIXLY_CORRECT 1\nprintf -v 'BASH_ALIASES[w1]' 'true;'\nw1 w2 (){ :; }; "
      "PAYLOAD\n",
      "read POSIXLY_CORRECT <<< 1\nread 'BASH_ALIASES[w1]' <<< 'true;'\nw1 w2 (){ :; }; PAYLOAD\n",
      "set -o posix\ndeclare 'BASH_ALIASES[w1]=true;'\nw1 w2 (){ :; }; PAYLOAD\n",
      "set -o posix\n: ${BASH_ALIASES[w1]:='true;'}\nw1 w2 (){ :; }; PAYLOAD\n",
  };
  for (const auto& s : runs) {
    INFO(s);
    REQUIRE(bash.runs_payload(s));
    const auto c = classify_script(replace_all(s, "PAYLOAD", "rm -rf ~"));
    INFO(to_string(c.decision) << " [" << c.rule << "] " << c.reason);
    CHECK((c.decision == Decision::forbidden || c.decision == Decision::escalated));
  }
}
