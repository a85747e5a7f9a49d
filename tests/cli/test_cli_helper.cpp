// `paddock run --helper` / PADDOCK_HELPER=1 (cli/run_helper.hpp), through the real CLI: the
// next run is served by the same helper, and a run through it is what a run in paddock's own
// process is (output, exit statuses, signals, stdin, the environment, the directory, the
// writes); a changed policy or context gets a helper of its own; a dead helper is replaced,
// an idle one exits, and where none can start the run happens in process. Tagged [helper]:
// the suite runs again as nobody.
#include <catch2/catch.hpp>
#include <string>

#include "cli/cli_support.hpp"

using test::around_paddock;
using test::contains;

namespace {

// $run: the runtime directory (so the helpers are this test's), short enough for a unix
// socket's address wherever the checkout is; every helper started there is killed before it
// goes. `idle`: PADDOCK_HELPER_IDLE_SECONDS.
std::string scratch(const std::string& idle = "60") {
  return test::workspace_scratch(
      "helper",
      "run=$(mktemp -d /tmp/paddock-helper-test-XXXXXX); export XDG_RUNTIME_DIR=$run "
      "PADDOCK_HELPER=1 PADDOCK_HELPER_IDLE_SECONDS=" +
          idle +
          "; h=$run/paddock/helpers;"
          " pids() { cat $h/*.json 2>/dev/null | sed 's/.*\"pid\":\\([0-9]*\\).*/\\1/' | sort; };"
          " socks() { ls $h 2>/dev/null | grep -c 'sock$'; };",
      "for p in $(pids); do kill -9 $p; done; rm -rf $run;");
}

}  // namespace

TEST_CASE("cli helper: the next run is served by the same helper, as a run in process",
          "[cli][helper]") {
  auto r = around_paddock(
      scratch() +
      // The host (an editor) writes h.txt before the runs below.
      "echo b > h.txt;"
      " $P run -- sh -c 'echo one; exit 3'; echo \"first=$?\"; first=$(pids);"
      " echo \"socks=$(socks)\"; stat -c 'dir=%a' $h;"
      // ps shows the helper as one, not as the run that started it.
      " echo \"title=$(tr -d '\\0' < /proc/$first/cmdline)\";"
      " $P run -- sh -c 'echo two'; [ \"$(pids)\" = \"$first\" ] && echo same-helper;"
      // The command's environment is the caller's, through the same lists as in process, in
      // the same order (env(1) keeps it; new-user trial: LANG and TERM came after PATH).
      " PADDOCK_HELPER=0 $P run -- env | grep -iv proxy > $d/env-local;"
      " $P run -- env | grep -iv proxy > $d/env-helper;"
      " cmp $d/env-local $d/env-helper && echo same-env;"
      " mkdir -p $d/bin; LANG=C.UTF-8 PATH=$d/bin:$PATH $P run -- sh -c 'echo \"$LANG $PATH\"' |"
      "   grep -q \"^C.UTF-8 $d/bin:\" && echo env-follows;"
      " mkdir sub; (cd sub && $P run -- pwd);"
      " echo piped | $P run -- cat;"
      " $P run -- sh -c 'echo written > w.txt'; cat w.txt;"
      // Files the host (an editor) or the last run changed just before are the run's to
      // change, never held as conflicts (new-user trial: every second append was held).
      " $P run -- sed -i s/b/c/ h.txt; cat h.txt;"
      " for i in 1 2 3 4; do $P run -- sh -c \"echo $i >> k.txt\"; done; tr '\\n' ' ' < k.txt;"
      " echo;"
      // A file saved while the helper's next sandbox waits (made ahead after the last run),
      // right before the run: the host's, not a conflict.
      " echo e > e.txt; $P run -- true;"
      " echo saved > e.new && mv e.new e.txt;"
      " $P run -- sh -c 'cat e.txt; echo cmd >> e.txt'; cat e.txt;"
      // The sandboxes the helper made ahead are nobody's decision: `changes` lists none.
      " echo \"list=[$($P changes list)]\"; $P changes list --json;"
      " $P run -- sh -c 'kill -TERM $$'; echo \"signalled=$?\";"
      " PADDOCK_HELPER=0 $P run -- sh -c 'kill -TERM $$'; echo \"local=$?\";"
      " $P run -- /nonexistent/program 2>/dev/null; echo \"missing=$?\";"
      " $P run -- yes | head -2; echo \"pipe=${PIPESTATUS[0]}\";"
      " $P run --json -- sh -c 'echo j' | grep -o '\"stdout\":\"j\\\\n\"';"
      " echo \"socks=$(socks)\"");
  INFO(r.result.stdout_data << r.result.stderr_data);
  const std::string& out = r.result.stdout_data;
  CHECK(contains(out, "one\nfirst=3\nsocks=1\ndir=700\ntitle=paddock-helper\n"));
  CHECK(contains(out, "two\nsame-helper\n"));
  CHECK(contains(out, "same-env\n"));
  CHECK(contains(out, "env-follows\n"));
  CHECK(contains(out, "/ws/sub\n"));
  CHECK(contains(out, "piped\n"));
  CHECK(contains(out, "written\nc\n1 2 3 4 \n"));
  CHECK(contains(out, "1 2 3 4 \nsaved\nsaved\ncmd\nlist=[]\n[]\nsignalled="));
  CHECK(contains(out, "signalled=143\nlocal=143\n"));
  CHECK(contains(out, "missing=127\n"));
  CHECK(contains(out, "y\ny\npipe=141\n"));
  CHECK(contains(out, "\"stdout\":\"j\\n\""));
  // One context, one helper; the run with another PATH and LANG had one of its own.
  CHECK(out.ends_with("socks=2\n"));
}

TEST_CASE("cli helper: a changed policy or context is never served by the old helper",
          "[cli][helper]") {
  auto r = around_paddock(
      scratch() +
      "echo secret-text > $d/secret;"
      " echo '{\"filesystem\": {\"denyRead\": [\"'$d/secret'\"]}}' > $d/s.json;"
      " $P run --settings $d/s.json -- cat $d/secret 2>/dev/null; echo \"denied=$?\";"
      // The same file, edited: another policy, another helper, the new policy applies.
      " echo '{\"filesystem\": {\"denyRead\": []}}' > $d/s.json;"
      " $P run --settings $d/s.json -- cat $d/secret; echo \"now=$?\"; echo \"socks=$(socks)\";"
      // A flag, a policy variable, another umask: each a context of its own.
      " $P run --settings $d/s.json --deny-read $d/secret -- cat $d/secret 2>/dev/null;"
      " echo \"flag=$?\"; echo \"socks=$(socks)\";"
      " (umask 077; $P run --settings $d/s.json -- sh -c 'umask');"
      " echo \"socks=$(socks)\";"
      " PADDOCK_HELPER=0 $P run -- true; $P run --no-helper -- true;"
      " echo \"socks=$(socks)\";"
      // The flag outweighs the variable, and the same context finds the same helper.
      " PADDOCK_HELPER=0 $P run --helper --settings $d/s.json -- true; echo "
      "\"flag-socks=$(socks)\";"
      // The host's git that judges the change set runs with the environment: part of it.
      " GIT_CONFIG_GLOBAL=/dev/null $P run --settings $d/s.json -- true;"
      " echo \"git-socks=$(socks)\";"
      // A settings file read from a pipe is read once: its bytes make the key (hostile
      // review: every pipe's key was the same, and a wider policy served a narrower one).
      " $P run --settings <(echo '{}') -- cat $d/secret >/dev/null; echo \"pipe-open=$?\";"
      " $P run --settings <(echo '{\"filesystem\": {\"denyRead\": [\"'$d/secret'\"]}}')"
      "   -- cat $d/secret 2>/dev/null; echo \"pipe-denied=$?\";"
      // A process in other namespaces (a sandbox that can see the socket) is refused.
      " unshare -U -n $P run --connect unix:$(ls $h/*.sock | head -1) -- echo reached;"
      " echo \"foreign=$?\"");
  INFO(r.result.stdout_data << r.result.stderr_data);
  const std::string& out = r.result.stdout_data;
  CHECK(contains(out, "denied=1\n"));
  CHECK(contains(out, "secret-text\nnow=0\nsocks=2\n"));
  CHECK(contains(out, "flag=1\nsocks=3\n"));
  CHECK(contains(out, "0077\nsocks=4\n"));
  CHECK(contains(out, "socks=4\n"));
  CHECK(contains(out, "flag-socks=4\n"));
  CHECK(contains(out, "git-socks=5\n"));
  CHECK(contains(out, "pipe-open=0\npipe-denied=1\n"));
  CHECK(contains(out, "foreign=125"));
  CHECK_FALSE(contains(out, "reached"));
  CHECK_FALSE(contains(out, "socks=5\nflag"));
}

TEST_CASE("cli helper: -v logs the proxy's refusals as they happen, as in process",
          "[cli][helper][network]") {
  // The line comes while the command runs (before what it writes after the request), not
  // only as the result's violation at the end. Through the helper it travels the connection
  // while the command's own stderr goes straight to ours, so the command gives it a second
  // (nothing it can poll for: it cannot see our stderr); a line sent only at the end comes
  // after its after-request all the same.
  const std::string run =
      " run -v --allow-domain allowed.test -- sh -c"
      " 'curl -s --max-time 10 http://denied.test/ >/dev/null; sleep 1; echo after-request >&2';";
  auto r = around_paddock(scratch() + "PADDOCK_HELPER=0 $P" + run + " echo ---- >&2; $P" + run);
  INFO(r.result.stderr_data);
  const std::string& err = r.result.stderr_data;
  const std::string line = "paddock[info]: network: refused http denied.test:80 for ";
  const auto separator = err.find("----\n");
  REQUIRE(separator != std::string::npos);
  for (const std::string& half : {err.substr(0, separator), err.substr(separator)}) {
    const auto refused = half.find(line), after = half.find("after-request\n");
    CHECK(refused != std::string::npos);
    CHECK(after != std::string::npos);
    CHECK(refused < after);
  }
  CHECK(contains(err.substr(separator), "started: pid "));  // the second ran through the helper
  CHECK(contains(err.substr(separator), "(through the helper)"));
}

TEST_CASE("cli helper: a client killed while its command runs leaves the set abandoned",
          "[cli][helper][changes]") {
  // As `cli: a paddock killed before applying leaves the workspace untouched`: the helper
  // runs on, but the set is the killed client's, so nothing of it is applied; `paddock
  // changes apply` (waiting for the helper to be done with it) applies it whole.
  auto r = around_paddock(
      scratch() +
      "$P run -- true;"
      // It ignores SIGTERM: a killed client's command goes at once all the same,
      // as in process (the sandbox's parent-death signal).
      " $P run -- sh -c 'trap \"\" TERM; echo planted > f; echo x >> g; sleep 31.5' &"
      " pid=$!;"
      " in_layer g;"
      " kill -9 $pid; wait $pid; echo \"killed=$?\";"
      // Gone well within the SIGTERM's grace (2 s). Anchored: this script's
      // own command line holds the words too.
      " t0=$(date +%s%N);"
      " while pgrep -f '^sleep 31.5$' >/dev/null; do sleep 0.01; done;"
      " [ $(( ($(date +%s%N) - t0) / 1000000 )) -gt 1200 ] && echo LINGERS;"
      " [ -e f ] && echo 'LEAKED f'; $P changes list | grep -c abandoned;"
      " id=$(set_id);"
      " $P changes apply $id; echo \"applied=$?\"; cat f g;"
      " [ -e f ] && $P run -- cat f; $P changes list | wc -l");
  INFO(r.result.stdout_data << r.result.stderr_data);
  const std::string& out = r.result.stdout_data;
  CHECK(contains(out, "killed=137\n1\n"));
  CHECK_FALSE(contains(out, "LEAKED"));
  CHECK_FALSE(contains(out, "LINGERS"));
  CHECK(contains(out, "applied=0\nplanted\nx\nplanted\n0\n"));
}

TEST_CASE("cli helper: a killed helper is replaced and an idle one exits", "[cli][helper]") {
  auto r = around_paddock(
      scratch("2") +
      "$P run -- true; $P run -- true; first=$(pids);"
      // Killed with a sandbox made ahead (after its second run): its set is nobody's, and
      // `changes list` removes it.
      " sets() { ls $PADDOCK_CHANGE_STORE 2>/dev/null | grep -vc '^spare'; };"
      " for i in $(seq 100); do [ \"$(sets)\" != 0 ] && break; sleep 0.01; done;"
      " [ \"$(sets)\" != 0 ] && echo has-waiting;"
      // From another PID namespace the owner cannot be seen: its sets stay (hostile review).
      " unshare -rpf --mount-proc $P changes list; [ \"$(sets)\" != 0 ] && echo still-waiting;"
      " kill -9 $first;"
      " while kill -0 $first 2>/dev/null; do sleep 0.01; done;"
      " echo \"list=[$($P changes list)] left=$(sets)\";"
      " $P run -- sh -c 'echo after-kill'; second=$(pids);"
      " [ -n \"$second\" ] && [ \"$second\" != \"$first\" ] && echo replaced;"
      " for i in $(seq 1000); do [ \"$(socks)\" = 0 ] && break; sleep 0.02; done;"
      " echo \"socks=$(socks)\";"
      " for i in $(seq 500); do kill -0 $second 2>/dev/null || break; sleep 0.02; done;"
      " kill -0 $second 2>/dev/null || echo exited;"
      // An idle helper removes its name whole: socket, .json and lock.
      " echo \"files=$(ls $h | wc -l)\"");
  INFO(r.result.stdout_data << r.result.stderr_data);
  const std::string& out = r.result.stdout_data;
  CHECK(contains(out, "has-waiting\nstill-waiting\nlist=[] left=0\n"));
  CHECK(contains(out, "after-kill\nreplaced\nsocks=0\nexited\nfiles=0\n"));
}

// A helper killed before it could remove its name (SIGKILL) leaves its socket, its .json (whose
// pid may be reused) and its lock: the next helper to start, of any key, removes every name
// whose lock nobody holds, and never a live helper's.
TEST_CASE("cli helper: what a killed helper left goes when the next one starts", "[cli][helper]") {
  auto r = around_paddock(
      scratch() +
      "$P run -- true; live=$(ls $h/*.json); live=${live%.json}; live_pid=$(pids);"
      // Another idle time is another helper (another key).
      " PADDOCK_HELPER_IDLE_SECONDS=61 $P run -- true;"
      " dead=$(ls $h/*.json | grep -v \"^$live.json\"); dead=${dead%.json};"
      " dead_pid=$(sed 's/.*\"pid\":\\([0-9]*\\).*/\\1/' $dead.json);"
      " kill -9 $dead_pid; while kill -0 $dead_pid 2>/dev/null; do sleep 0.01; done;"
      " echo \"before=$(ls $h | wc -l)\";"
      // Names that are links to files elsewhere: the sweep follows none and removes nothing
      // through them.
      " echo keep > $d/victim; ln -s $d/victim $h/evil.lock; ln -s $d/victim $h/evil.sock;"
      " PADDOCK_HELPER_IDLE_SECONDS=62 $P run -- true;"
      " [ \"$(cat $d/victim)\" = keep ] && [ -L $h/evil.lock ] && echo links-untouched;"
      " rm $h/evil.lock $h/evil.sock;"
      " for f in $dead.sock $dead.json $dead.lock; do [ -e $f ] && echo \"LEFT $f\"; done;"
      " [ -S $live.sock ] && [ -e $live.json ] && [ -e $live.lock ] && echo live-kept;"
      " $P run -- echo live-answers; [ \"$(sed 's/.*\"pid\":\\([0-9]*\\).*/\\1/' $live.json)\" ="
      "   \"$live_pid\" ] && echo same-live;"
      " echo \"after=$(ls $h | wc -l)\"");
  INFO(r.result.stdout_data << r.result.stderr_data);
  const std::string& out = r.result.stdout_data;
  CHECK(contains(out, "before=6\n"));
  CHECK_FALSE(contains(out, "LEFT"));
  CHECK(contains(out, "links-untouched\n"));
  CHECK(contains(out, "live-kept\nlive-answers\nsame-live\nafter=6\n"));
}

// The helper is given the caller's streams themselves (run_streams.hpp), as a run in process
// gives them: stdout and stderr on one pipe stay one stream, in order (new-user trial
// helper-46: two streams, out of order); bytes of any kind pass as they are, as fast as in
// process (JSON and base64 on the socket took 4 s for 50 MB of zeros); a file or a terminal
// stays behind a pipe of ours, so the command never holds the host's inode. A closed stream
// stays in process: our socket would take its number.
TEST_CASE("cli helper: the caller's streams as in process and a closed one stays there",
          "[cli][helper]") {
  auto r = around_paddock(
      scratch() +
      " $P run -- sh -c 'echo hi; exit 3' >&-; echo \"closed-out=$?\";"
      " $P run -- sh -c 'echo e >&2; echo out; exit 4' 2>&-; echo \"closed-err=$?\";"
      " $P run -- cat <&-; echo \"closed-in=$?\";"
      " echo \"socks=$(socks)\";"
      "s='for i in 1 2 3 4 5 6; do echo out$i; echo err$i >&2; done';"
      " for k in 1 2 3; do $P run -c \"$s\" 2>&1 | tr '\\n' ' '; echo; done;"
      " $P run -c \"$s\" > $d/both.txt 2>&1; tr '\\n' ' ' < $d/both.txt; echo;"
      " echo \"socks=$(socks)\";"
      " $P run -- sh -c 'echo apart; echo apart-err >&2' 2>$d/err.txt; cat $d/err.txt;"
      // Bytes of every value, through a pipe, into a file, from a file; and from a pipe.
      " head -c 3000000 /dev/urandom > $d/bin;"
      " $P run -- cat $d/bin | cmp - $d/bin && echo bin-pipe;"
      " $P run -- cat $d/bin > $d/bin.out && cmp $d/bin $d/bin.out && echo bin-file;"
      " $P run -- sh -c 'cat >&2' < $d/bin 2> $d/bin.err && cmp $d/bin $d/bin.err && echo bin-in;"
      " cat $d/bin | $P run -- cat | cmp - $d/bin && echo bin-in-pipe;"
      // The caller's file is not the command's: its mode stays, in process and here.
      " for k in 0 1; do : > $d/f$k; chmod 600 $d/f$k;"
      "   PADDOCK_HELPER=$k $P run --yes -- sh -c 'chmod 666 /proc/self/fd/1' > $d/f$k 2>/dev/null;"
      "   echo \"mode$k=$(stat -c %a $d/f$k)\"; done;"
      " echo \"socks=$(socks)\"");
  INFO(r.result.stdout_data << r.result.stderr_data);
  const std::string& out = r.result.stdout_data;
  const std::string in_order = "out1 err1 out2 err2 out3 err3 out4 err4 out5 err5 out6 err6 \n";
  CHECK(contains(out, "closed-out=3\nout\nclosed-err=4\nclosed-in=0\nsocks=0\n"));
  CHECK(contains(out, in_order + in_order + in_order + in_order + "socks=1\n"));
  CHECK(contains(out, "apart\napart-err\n"));
  CHECK(contains(out, "bin-pipe\nbin-file\nbin-in\nbin-in-pipe\n"));
  CHECK(contains(out, "mode0=600\nmode1=600\nsocks=1\n"));
}

// The promise: `paddock run` goes through the helper unless told not to, and a
// variable that says neither 0 nor 1 is an error, not a silent choice.
TEST_CASE("cli helper: the default unless --no-helper or PADDOCK_HELPER=0", "[cli][helper]") {
  auto r =
      around_paddock(scratch() +
                     "unset PADDOCK_HELPER; $P run -- sh -c 'echo ran'; echo \"default=$(socks)\";"
                     " $P run --no-helper --deny-read $d/a -- true; echo \"no-helper=$?,$(socks)\";"
                     " PADDOCK_HELPER=0 $P run --deny-read $d/b -- true; echo \"zero=$?,$(socks)\";"
                     " PADDOCK_HELPER=1 $P run --deny-read $d/c -- true; echo \"one=$?,$(socks)\";"
                     " PADDOCK_HELPER= $P run --deny-read $d/e -- true; echo \"empty=$?,$(socks)\";"
                     " PADDOCK_HELPER=yes $P run -- true; echo \"bad=$?,$(socks)\";"
                     " $P run --helper --no-helper -- true 2>/dev/null; echo \"both=$?\";"
                     // A flag outweighs the variable, whatever it holds.
                     " PADDOCK_HELPER=yes $P run --no-helper -- true; echo \"flag-wins=$?\";"
                     // Another idle time is a helper of its own (the running one would not
                     // take it), and it goes when idle.
                     " PADDOCK_HELPER_IDLE_SECONDS=1 $P run --deny-read $d/c -- true;"
                     " echo \"idle=$(socks)\";"
                     " for i in $(seq 500); do [ \"$(socks)\" = 3 ] && break; sleep 0.02; done;"
                     " echo \"idled=$(socks)\"");
  INFO(r.result.stdout_data << r.result.stderr_data);
  const std::string& out = r.result.stdout_data;
  CHECK(contains(out, "ran\ndefault=1\n"));
  CHECK(contains(out, "no-helper=0,1\nzero=0,1\none=0,2\nempty=0,3\nbad=125,3\n"));
  CHECK_FALSE(contains(out, "both=0"));
  CHECK(contains(out, "flag-wins=0\nidle=4\nidled=3\n"));
  CHECK(contains(r.result.stderr_data, "PADDOCK_HELPER=yes: expected 0"));
}

// New-user trial helper-44: through the helper, the approval line showed the approval's
// internal key ("(in 21:/path) (env 4:LANG=...)"), and --json's error for an escalated command
// nobody could approve differed from a run in process. Both read the same now.
TEST_CASE("cli helper: an escalated command reads the same as in process", "[cli][helper]") {
  auto r = around_paddock(
      scratch() +
      "git init -q .;"
      " $P run --yes -- git push nowhere main 2>&1 | grep 'approved by' > $d/yes-h;"
      " $P run --no-helper --yes -- git push nowhere main 2>&1 |"
      "   grep 'approved by' > $d/yes-l;"
      " cmp $d/yes-h $d/yes-l && echo same-yes; cat $d/yes-h;"
      " $P run --json -- git push nowhere main | grep -o '\"error\":\"[^\"]*\"' > $d/j-h;"
      " $P run --no-helper --json -- git push nowhere main |"
      "   grep -o '\"error\":\"[^\"]*\"' > $d/j-l;"
      " cmp $d/j-h $d/j-l && echo same-json; cat $d/j-h");
  INFO(r.result.stdout_data << r.result.stderr_data);
  const std::string& out = r.result.stdout_data;
  CHECK(contains(out, "same-yes\npaddock: approved by --yes: git push nowhere main (rule"));
  CHECK(contains(out, "same-json\n\"error\":\"needs approval (rule"));
  CHECK(contains(out, "--yes approves it"));
  CHECK_FALSE(contains(out, "(in "));
}

// New-user trial helper-44: a stopped helper held the run for 10 minutes (Ctrl-C and TERM
// could not end it), then ran the command anyway when it woke. The command now goes out only
// once the helper answered; without an answer it runs in process, once.
TEST_CASE("cli helper: a stopped helper is not waited for and runs nothing later",
          "[cli][helper]") {
  auto r = around_paddock(scratch() +
                          "$P run -- true; p=$(pids); kill -STOP $p;"
                          // Stopped before the next run is sent (state T), whatever the load.
                          " for q in $p; do while [ \"$(cut -d' ' -f3 /proc/$q/stat)\" != T ];"
                          " do sleep 0.01; done; done;"
                          " $P run -v -- sh -c 'echo ran >> once.txt'; echo \"rc=$?\";"
                          " kill -CONT $p; $P run -- sh -c 'echo after >> once.txt'; cat once.txt;"
                          // Killed while its command runs: said so, not as a failed start.
                          " $P run -- sh -c 'echo x > k.txt; sleep 30' & c=$!;"
                          " in_layer k.txt;"
                          " kill -9 $(pids); wait $c; echo \"killed=$?\"");
  INFO(r.result.stdout_data << r.result.stderr_data);
  CHECK(contains(r.result.stdout_data, "rc=0\nran\nafter\nkilled=125\n"));
  CHECK(contains(r.result.stderr_data, "did not answer within 5 s"));
  CHECK(contains(r.result.stderr_data, "went away while the command ran"));
}

TEST_CASE("cli helper: where no helper can start the run happens in process and says so",
          "[cli][helper]") {
  auto r = around_paddock(scratch() +
                          // Not a private directory: refused, never used.
                          "mkdir -m 755 $run/paddock;"
                          " $P run -v -- sh -c 'echo ran'; echo \"rc=$?\"; echo \"socks=$(socks)\";"
                          " PADDOCK_HELPER_IDLE_SECONDS=soon $P run -- true; echo \"bad=$?\"");
  INFO(r.result.stdout_data << r.result.stderr_data);
  CHECK(contains(r.result.stdout_data, "ran\nrc=0\nsocks=0\nbad=125\n"));
  CHECK(contains(r.result.stderr_data, "no helper ("));
  CHECK(contains(r.result.stderr_data, "not a private directory"));
  CHECK(contains(r.result.stderr_data, "PADDOCK_HELPER_IDLE_SECONDS: expected whole seconds"));
}

// Hostile review helper-50: a client that said hello to its helper, then exec'd `paddock run`
// with that connection as its stdin and stdout, had the command read the connection's key and
// write lines the CLI copied back as the client's own (same process, same start time). A run
// whose stream is a connection to a paddock daemon is refused, in process, through the helper
// and with --connect; nothing runs.
TEST_CASE("cli helper: a stream connected to a paddock daemon is refused", "[cli][helper]") {
  auto r =
      around_paddock(scratch() +
                     "$P run -- true; sock=$(ls $h/*.sock | head -1);"
                     " hand() { python3 - \"$sock\" \"$@\" <<'PY'\n"
                     "import os, socket, sys, json\n"
                     "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
                     "s.connect(sys.argv[1])\n"
                     "s.sendall(b'{\"type\":\"hello\",\"version\":1}\\n')\n"
                     "os.dup2(s.fileno(), 0); os.dup2(s.fileno(), 1)\n"
                     "os.execvp(sys.argv[2], sys.argv[2:])\n"
                     "PY\n"
                     "}; for how in '' '--no-helper' '--max-output 1M' \"--connect unix:$sock\"; do"
                     "   hand $P run $how -- sh -c 'touch $d/ran' 2>$d/err; echo \"rc=$? $(grep -c "
                     "'connection to a paddock daemon' $d/err)\";"
                     " done; ls $d/ran 2>/dev/null || echo nothing-ran");
  INFO(r.result.stdout_data << r.result.stderr_data);
  const std::string& out = r.result.stdout_data;
  CHECK(contains(out, "rc=125 1\nrc=125 1\nrc=125 1\nrc=125 1\nnothing-ran\n"));
}
