// `paddock run` behaves as bwrap, srt, timeout(1) and env(1) taught people (issue 10, "Process
// semantics"): the command is not PID 1 (paddock-init is), so its own signals, abort(),
// SIGPIPE and a timeout's SIGTERM work; pipes end when their reader goes; stdin is passed on;
// Ctrl-C is passed on and exits 130. Through the real CLI, as root and (tag [spawn]) as nobody.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli/cli_support.hpp"

using test::contains;
using test::paddock_cli;

using test::around_paddock;
using test::in_host_tmp;

TEST_CASE("paddock run: the command's own signals end it (it is not PID 1)",
          "[cli][process][spawn]") {
  struct Case {
    const char* script;
    int exit_code, signal;
  };
  for (auto c :
       {Case{"kill -TERM $$", 143, 15}, Case{"kill -SEGV $$", 139, 11},
        Case{"kill -INT $$", 130, 2}, Case{"kill -ABRT $$", 134, 6}, Case{"kill -PIPE $$", 141, 13},
        Case{"exit 7", 7, 0}, Case{"echo pid=$$; exit 0", 0, 0}}) {
    INFO(c.script);
    // Unattended, no --yes: a signal inside the sandbox's own PID namespace is contained
    // (issue 23), so it runs and ends the way it would anywhere.
    auto plain = paddock_cli({"run", "--", "/bin/sh", "-c", c.script});
    CHECK(plain.result.exit_code == c.exit_code);
    auto json = paddock_cli({"run", "--json", "--", "/bin/sh", "-c", c.script});
    CHECK(json.result.exit_code == c.exit_code);
    auto j = nlohmann::json::parse(json.result.stdout_data);
    CHECK(j["exit_code"] == c.exit_code);
    CHECK(j["signal"] == c.signal);
    CHECK(j["sandboxed"] == true);
  }
  // The command is PID 2; PID 1 is paddock-init.
  auto pid = paddock_cli({"run", "--", "/bin/sh", "-c", "echo $$; cat /proc/1/comm"});
  CHECK(pid.result.stdout_data.substr(0, 2) == "2\n");
  CHECK(contains(pid.result.stdout_data, "paddock-i"));
}

TEST_CASE("paddock run: a timeout's SIGTERM ends a command without a handler (no SIGKILL needed)",
          "[cli][process][timeout]") {
  auto r = paddock_cli({"run", "--json", "--timeout", "0.3", "--", "/bin/sleep", "30"});
  CHECK(r.result.exit_code == 124);
  auto j = nlohmann::json::parse(r.result.stdout_data);
  CHECK(j["timed_out"] == true);
  CHECK(j["signal"] == 15);  // as PID 1 it ignored SIGTERM and was SIGKILLed after the grace
}

TEST_CASE("paddock run: a command whose execve fails inside the sandbox is 127/126 with a reason",
          "[cli][process][spawn]") {
  // Found on the host's PATH, then its interpreter is missing: execve fails in the sandbox.
  auto r = in_host_tmp(
      "printf '#!/no/such/interpreter\\n' > $d/tool && chmod +x $d/tool && "
      "cd $d && $P run -- ./tool; echo status=$?");
  CHECK(contains(r.result.stdout_data, "status=127\n"));
  CHECK(contains(r.result.stderr_data, "paddock: E_SPAWN_FAILED: execve failed for"));
}

TEST_CASE("paddock run -- yes | head -1 ends at once: the command gets SIGPIPE",
          "[cli][process][spawn]") {
  auto r = around_paddock("$P run -- yes | head -1; echo \"status=${PIPESTATUS[0]}\"");
  CHECK(r.result.exit_code == 0);
  CHECK_FALSE(r.result.timed_out);
  CHECK(r.result.stdout_data == "y\nstatus=141\n");
  // The same for stderr, and for a command that checks write errors itself.
  auto err = around_paddock(
      "$P run -- sh -c 'while :; do echo x >&2; done' 2>&1 >/dev/null | head -1; "
      "echo \"status=${PIPESTATUS[0]}\"");
  CHECK(err.result.stdout_data == "x\nstatus=141\n");
  // With --max-output paddock reads the output itself; when its own reader goes, the command
  // gets SIGPIPE all the same.
  auto capped =
      around_paddock("$P run --max-output 10M -- yes | head -1; echo \"status=${PIPESTATUS[0]}\"");
  CHECK(capped.result.stdout_data == "y\nstatus=141\n");
  auto seq =
      around_paddock("$P run -- seq 1 100000000 | head -2; echo \"status=${PIPESTATUS[0]}\"");
  CHECK(seq.result.stdout_data == "1\n2\nstatus=141\n");
}

TEST_CASE("paddock run passes its stdin on unless it is a terminal, --stdin none|inherit",
          "[cli][process][spawn]") {
  auto piped = around_paddock("echo hi | $P run -- cat");
  CHECK(piped.result.stdout_data == "hi\n");
  auto none = around_paddock("echo hi | $P run --stdin none -- cat; echo status=$?");
  CHECK(none.result.stdout_data == "status=0\n");
  auto inherit = around_paddock("printf 'a\\nb\\n' | $P run --stdin inherit -- wc -l");
  CHECK(inherit.result.stdout_data == "2\n");
  // Far more than a pipe holds, streamed through: nothing lost.
  auto big = around_paddock("head -c 5000000 /dev/zero | $P run -- wc -c");
  CHECK(big.result.stdout_data == "5000000\n");
  // --json keeps stdout but still passes stdin on.
  auto json = around_paddock("echo hi | $P run --json -- cat");
  CHECK(nlohmann::json::parse(json.result.stdout_data)["stdout"] == "hi\n");
  auto bad = paddock_cli({"run", "--stdin", "maybe", "--", "/bin/true"});
  CHECK(bad.result.exit_code == 125);
  CHECK(bad.result.stderr_data ==
        "paddock: --stdin maybe: expected auto, inherit or none (see paddock run --help)\n");
}

TEST_CASE("paddock run: Ctrl-C is passed on (130), a command that handles it decides",
          "[cli][process][spawn]") {
  // `cmd` started in the background, signalled with `signals` once its output says it runs
  // (polled with a deadline, no fixed sleep); then paddock's status and the command's output.
  auto interrupted = [](const std::string& cmd, const std::string& signals = "kill -INT $p") {
    return in_host_tmp("CMD='" + cmd +
                       "'; $P run -- sh -c \"$CMD\" > $d/out 2>$d/err & p=$!; "
                       "i=0; until grep -q ready $d/out; do sleep 0.01; i=$((i+1)); "
                       "[ $i -lt 3000 ] || break; done; " +
                       signals + "; wait $p; echo status=$?; cat $d/out; cat $d/err >&2");
  };
  auto plain = interrupted("echo ready; exec sleep 30");
  CHECK(plain.result.stdout_data == "status=130\nready\n");
  auto handled =
      interrupted("trap \"echo caught; exit 3\" INT; echo ready; while :; do sleep 0.02; done");
  CHECK(handled.result.stdout_data == "status=3\nready\ncaught\n");
  // Delivered once: the command's handler runs once per Ctrl-C (a second delivery makes
  // pytest, npm and friends force-quit).
  auto once = interrupted(
      "trap \"echo caught\" INT; echo ready; i=0; while [ $i -lt 50 ]; do sleep 0.02; "
      "i=$((i+1)); done");
  CHECK(once.result.stdout_data == "status=0\nready\ncaught\n");
  // A second signal ends a command that ignores the first, the way a timeout does.
  auto stubborn =
      interrupted("trap \"\" INT; echo ready; exec sleep 30", "kill -INT $p; kill -TERM $p");
  CHECK(contains(stubborn.result.stdout_data, "status=143\n"));
}

TEST_CASE("attack: paddock-init is out of the command's reach (report pipe, image, memory)",
          "[cli][process][attack]") {
  // The init is not dumpable: its fds, exe and memory are closed to a command with the same
  // credentials. A forged report (an execve failure) once hid the audit's findings; a chmod of
  // /proc/1/exe once broke every later sandbox of the same Manager.
  auto r = paddock_cli(
      {"run", "--yes", "--json", "--", "/bin/sh", "-c",
       "printf '\\002\\000\\104\\120\\002\\000\\000\\000' > /proc/1/fd/3 && echo FORGED; "
       "chmod 0644 /proc/1/exe && echo CHMODDED; cat /proc/1/mem >/dev/null 2>&1 && echo MEM; "
       "readlink /proc/1/fd/3 2>/dev/null && echo LINK; echo done"});
  auto j = nlohmann::json::parse(r.result.stdout_data);
  CHECK(j["stdout"] == "done\n");
  CHECK(j["exit_code"] == 0);
  CHECK(j["sandboxed"] == true);
  CHECK_FALSE(j.contains("error_code"));
  // The next command of the same process still starts (the image is unchanged).
  auto again = paddock_cli({"run", "--yes", "--", "/bin/sh", "-c",
                            "chmod 0644 /proc/1/exe 2>/dev/null; exec /bin/echo second"});
  CHECK(again.result.stdout_data == "second\n");
}

TEST_CASE("attack: the CLI's stdin is a file, a directory or /dev/null: the command gets a pipe",
          "[cli][process][attack]") {
  // Through a host file's descriptor a command could fchmod that inode (the host's /dev/null,
  // the user's terminal); through a directory's it read past every deny rule
  // (/proc/self/fd/0/.ssh/...). Such a stdin is copied in through a pipe instead.
  auto r = in_host_tmp(
      "printf 'content\\n' > $d/f && chmod 640 $d/f && "
      "$P run -- cat < $d/f && "
      "$P run -- sh -c 'chmod 777 /proc/self/fd/0; python3 -c \"import os; os.fchmod(0, 0o777)\"' "
      "< $d/f 2>/dev/null; stat -c mode=%a $d/f; "
      "$P run -- sh -c 'ls /proc/self/fd/0/ 2>/dev/null | wc -l' < /; "
      "$P run -- sh -c 'readlink /proc/self/fd/0' < $d/f");
  CHECK(r.result.stdout_data.substr(0, 8) == "content\n");
  CHECK(contains(r.result.stdout_data, "mode=640\n"));
  CHECK(contains(r.result.stdout_data, "\n0\n"));  // nothing listed through the directory
  CHECK(contains(r.result.stdout_data, "pipe:["));
  // /dev/null (as paddock's own stdin under cron, systemd, CI) is the sandbox's own node: a
  // root-mapped command cannot chmod the host's. A copy of the node stands in for it here.
  if (::geteuid() == 0) {
    auto dev = in_host_tmp(
        "mknod $d/null c 1 3 && chmod 666 $d/null && "
        "$P run -- python3 -c 'import os; os.fchmod(0, 0o600)' < $d/null 2>/dev/null; "
        "stat -c mode=%a $d/null");
    CHECK(dev.result.stdout_data == "mode=666\n");
  }
}

TEST_CASE("paddock run -c STRING NAME ARGS: $0 and $1... as with sh -c", "[cli][process][spawn]") {
  auto r = paddock_cli({"run", "-c", "echo \"$0|$1|$2\"", "name", "one", "two words"});
  CHECK(r.result.exit_code == 0);
  CHECK(r.result.stdout_data == "name|one|two words\n");
  auto dashed = paddock_cli({"run", "-c", "echo \"$0|$#\"", "--", "n", "--flag"});
  CHECK(dashed.result.stdout_data == "n|1\n");
  auto plain = paddock_cli({"run", "-c", "echo $#"});
  CHECK(plain.result.stdout_data == "0\n");
}
