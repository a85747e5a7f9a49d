// Fail closed, through the real CLI: a paddock killed before it applied a command's change set
// leaves the workspace untouched and the set waiting for `paddock changes`; SIGXFSZ from its
// own output file does not kill it; and 100 runs killed with SIGKILL at random moments while
// the command writes never leave a workspace that is neither untouched nor the whole set.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "cli/cli_support.hpp"

using test::around_paddock;
using test::contains;

namespace {
std::string scratch() { return test::workspace_scratch("changes"); }
}  // namespace

TEST_CASE("cli: a paddock killed before applying leaves the workspace untouched",
          "[cli][changes][attack]") {
  auto r = around_paddock(
      scratch() +
      "$P run -- sh -c 'echo planted > f; mkdir -p .git && echo ref: refs/heads/main > .git/HEAD; "
      "sleep 30' &"
      " pid=$!;"
      // The write is in the change set (not the workspace) while the command runs.
      " in_layer f;"
      " kill -9 $pid; wait $pid; echo \"killed=$?\";"
      " [ -e f ] && echo 'LEAKED f'; [ -e .git ] && echo 'LEAKED .git';"
      " $P changes list; id=$(set_id);"
      " $P changes show $id; $P changes apply $id; echo \"applied=$?\"; cat f;"
      " $P changes list | wc -l");
  INFO(r.result.stdout_data << r.result.stderr_data);
  const std::string& out = r.result.stdout_data;
  CHECK(contains(out, "killed=137"));
  CHECK_FALSE(contains(out, "LEAKED"));
  CHECK(contains(out, "abandoned"));
  CHECK(contains(out, "A "));
  CHECK(contains(out, "applied=0"));
  CHECK(contains(out, "planted\n"));
  CHECK(out.ends_with("0\n"));  // nothing waits any more
}

TEST_CASE("cli: a run killed in another PID namespace leaves its set abandoned here",
          "[cli][changes][attack]") {
  // Its pid means nothing here; its lock (dropped by the kernel with it) says it is gone. A
  // listing there while it runs must not take it for dead.
  auto r = around_paddock(
      scratch() +
      "unshare -rpf --mount-proc --kill-child $P run -- sh -c 'echo ns > t8.txt; sleep 30' &"
      " pid=$!;"
      " in_layer t8.txt;"
      " $P changes list | grep -c running;"
      " kill -9 $pid; wait $pid;"
      " for i in $(seq 1 400); do $P changes list | grep -q abandoned && break; sleep 0.025; done;"
      " [ -e t8.txt ] && echo LEAKED; $P changes list | grep -c abandoned;"
      " id=$(set_id);"
      " $P changes apply $id >/dev/null; echo \"applied=$?\"; cat t8.txt");
  INFO(r.result.stdout_data << r.result.stderr_data);
  const std::string& out = r.result.stdout_data;
  CHECK_FALSE(contains(out, "LEAKED"));
  CHECK(out == "1\n1\napplied=0\nns\n");
}

TEST_CASE("cli: paddock survives SIGXFSZ from its own output file and applies",
          "[cli][changes][attack]") {
  auto r = around_paddock(scratch() +
                          "(ulimit -f 64; $P run -- sh -c 'echo kept > g; head -c 200000 "
                          "/dev/zero' > $d/out 2>$d/err); echo \"rc=$?\"; cat g; "
                          "$P changes list | wc -l");
  INFO(r.result.stdout_data << r.result.stderr_data);
  const std::string& out = r.result.stdout_data;
  CHECK_FALSE(contains(out, "rc=153"));  // 128 + SIGXFSZ: paddock died of it
  CHECK(contains(out, "kept\n"));
  CHECK(out.ends_with("0\n"));
}

TEST_CASE("cli: 100 runs killed at random moments leave the workspace untouched or whole",
          "[cli][changes][attack]") {
  // Each run writes 20 files; paddock gets SIGKILL after a random 0-60 ms (start-up, the
  // command's writes, the apply). Then: nothing in the workspace and the set abandoned (or
  // never made), all 20 files and no set, or an apply interrupted (marked so in its set),
  // which `paddock changes apply` completes to all 20.
  auto r = around_paddock(
      scratch() +
      "untouched=0; whole=0; finished=0; bad=0;"
      " for run in $(seq 1 100); do rm -rf $d/ws/*;"
      "  $P run -- sh -c 'for i in $(seq 1 20); do echo $i > f$i; done' & pid=$!;"
      "  sleep 0.0$(printf %02d $((RANDOM % 60))); kill -9 $pid 2>/dev/null; wait $pid;"
      "  n=$(ls $d/ws | wc -l); list=$($P changes list);"
      "  case \"$list\" in *interrupted*) id=${list%% *}; $P changes apply $id >/dev/null;"
      "    n2=$(ls $d/ws | wc -l); [ $n2 = 20 ] && finished=$((finished+1)) || bad=$((bad+1));;"
      "   *abandoned*) id=${list%% *}; [ $n = 0 ] && untouched=$((untouched+1)) ||"
      "     { bad=$((bad+1)); echo \"run $run: $n files with an abandoned set\"; };"
      "     $P changes discard $id >/dev/null;;"
      "   '') if [ $n = 0 ]; then untouched=$((untouched+1)); elif [ $n = 20 ]; then"
      "     whole=$((whole+1)); else bad=$((bad+1)); echo \"run $run: $n files, no set\"; fi;;"
      "   *) bad=$((bad+1)); echo \"run $run: $list\";; esac;"
      "  for f in $d/ws/f*; do [ -e \"$f\" ] || continue;"
      "   [ \"$(cat $f)\" = \"${f##*/f}\" ] || { bad=$((bad+1)); echo \"run $run: $f wrong\"; }; "
      "done;"
      " done;"
      " echo \"untouched=$untouched whole=$whole finished=$finished bad=$bad\"");
  INFO(r.result.stdout_data << r.result.stderr_data);
  const std::string& out = r.result.stdout_data;
  CHECK(contains(out, "bad=0"));
  // Both ends were reached: some runs were killed early, some ran whole.
  CHECK_FALSE(contains(out, "untouched=0 "));
  CHECK_FALSE(contains(out, "whole=0 "));
}
