// `paddock serve` and `paddock run --connect` as processes, through the real CLI: the
// exit-status contract of a local run, stdin and pipes, SIGTERM drain, SIGHUP reload, and a
// daemon killed with SIGKILL leaves no sandboxed process behind.
#include <catch2/catch.hpp>

#include "cli/cli_support.hpp"

using test::contains;
using test::in_host_tmp;

namespace {

// Starts a daemon on $d/s.sock (its pid in $daemon), waiting for the socket with a deadline.
const std::string kStart =
    "$P serve --listen unix:$d/s.sock --http 127.0.0.1:0 >$d/out 2>$d/err & daemon=$!; "
    "for i in $(seq 200); do [ -S $d/s.sock ] && break; sleep 0.05; done; ";
const std::string kStop = "; kill -TERM $daemon; wait $daemon; echo daemon=$?";

}  // namespace

TEST_CASE("run --connect: the exit statuses, output and stdin of a local run", "[cli][serve]") {
  auto r = in_host_tmp(kStart +
                       "C=\"$P run --connect unix:$d/s.sock\"; "
                       "$C -- sh -c 'echo out; echo err >&2; exit 7'; echo status=$?; "
                       "echo piped | $C -- cat; echo status=$?; "
                       "$C -- /nonexistent/tool 2>/dev/null; echo status=$?; "
                       "$C -c 'rm -rf /' 2>/dev/null; echo status=$?; "
                       "$C --timeout 0.3 -- sleep 5 2>/dev/null; echo status=$?; "
                       "$C -- yes | head -1; echo status=${PIPESTATUS[0]}; "
                       "$C --yes -- sh -c 'kill -TERM $$' 2>/dev/null; echo status=$?; "
                       "$C --json -- printf 'a\\377' | tr -d '\\n'; echo; "
                       "$C --settings /x -- true 2>&1; echo status=$?" +
                       kStop);
  INFO(r.result.stdout_data << r.result.stderr_data);
  CHECK(r.result.stdout_data ==
        "out\nstatus=7\npiped\nstatus=0\nstatus=127\nstatus=126\nstatus=124\ny\nstatus=141\n"
        "status=143\n"
        "{\"decision\":\"allow\",\"duration_ms\":" +
            r.result.stdout_data.substr(r.result.stdout_data.find("\"duration_ms\":") + 14,
                                        r.result.stdout_data.find(",\"exit_code\"") -
                                            r.result.stdout_data.find("\"duration_ms\":") - 14) +
            ",\"exit_code\":0,\"reason\":\"reads files or prints text\",\"rule\":\"read-only-"
            "tools\",\"sandboxed\":true,\"signal\":0,\"stderr\":\"\",\"stderr_bytes_total\":0,"
            "\"stdout\":\"Yf8=\",\"stdout_bytes_total\":2,\"stdout_encoding\":\"base64\","
            "\"timed_out\":false,\"truncated\":false,\"violations\":[]}\n"
            "paddock: E_CONFIG_INVALID: --settings cannot go with --connect: the daemon's policy "
            "applies, and a request can only narrow it (--deny-read, --deny-write, --network, "
            "--allow-domain, --deny-domain)\nstatus=125\ndaemon=0\n");
  CHECK(contains(r.result.stderr_data, "err\n"));
}

TEST_CASE("serve: SIGTERM lets a running command finish, then exits 0", "[cli][serve]") {
  auto r = in_host_tmp(kStart +
                       "$P run --connect unix:$d/s.sock -- sh -c 'sleep 0.6; echo finished' & "
                       "c=$!; for i in $(seq 100); do grep -q 'event=connected' $d/err && "
                       "break; sleep 0.05; done; sleep 0.2; "
                       "kill -TERM $daemon; wait $c; echo client=$?; wait $daemon; "
                       "echo daemon=$?; test -e $d/s.sock && echo socket-left; "
                       "grep -c 'event=drain' $d/err");
  INFO(r.result.stdout_data << r.result.stderr_data);
  CHECK(r.result.stdout_data == "finished\nclient=0\ndaemon=0\n1\n");
}

TEST_CASE("serve: SIGHUP re-reads the settings for the next command", "[cli][serve]") {
  auto r = in_host_tmp(
      "mkdir $d/ws && echo SECRET > $d/ws/key; "
      "printf '{\"filesystem\": {\"denyRead\": [\"'$d'/ws/key\"]}}' > $d/settings.json; "
      "$P serve --listen unix:$d/s.sock --settings $d/settings.json >$d/out 2>$d/err & "
      "daemon=$!; for i in $(seq 200); do [ -S $d/s.sock ] && break; sleep 0.05; done; "
      "$P run --connect unix:$d/s.sock --cwd $d/ws -- cat key 2>/dev/null || echo denied; "
      "echo '{}' > $d/settings.json; kill -HUP $daemon; "
      "for i in $(seq 200); do grep -q 'event=reload' $d/err && break; sleep 0.05; done; "
      "$P run --connect unix:$d/s.sock --cwd $d/ws -- cat key; "
      "echo '{\"filesystem\": {\"denyRead\": 3}}' > $d/settings.json; kill -HUP $daemon; "
      "for i in $(seq 200); do grep -q 'refused: the old settings stay' $d/err && break; "
      "sleep 0.05; done; grep -c 'refused: the old settings stay' $d/err" +
      kStop);
  INFO(r.result.stdout_data << r.result.stderr_data);
  CHECK(r.result.stdout_data == "denied\nSECRET\n1\ndaemon=0\n");
}

TEST_CASE("serve: a daemon killed with SIGKILL leaves no sandboxed process", "[cli][serve]") {
  auto r =
      in_host_tmp(kStart +
                  "$P run --connect unix:$d/s.sock --yes -- sh -c 'sleep 987661 & sleep 987661' & "
                  "for i in $(seq 200); do pgrep -f '^sleep 987661' >/dev/null && break; "
                  "sleep 0.05; done; pgrep -f '^sleep 987661' >/dev/null && echo running; "
                  "kill -KILL $daemon; wait $daemon 2>/dev/null; "
                  "for i in $(seq 200); do pgrep -f '^sleep 987661' >/dev/null || break; "
                  "sleep 0.05; done; pgrep -f '^sleep 987661' >/dev/null && echo LEFT; "
                  "wait; echo done");
  INFO(r.result.stdout_data << r.result.stderr_data);
  CHECK(r.result.stdout_data == "running\ndone\n");
}

TEST_CASE("run --connect tcp: the token is never sent and the daemon proves it holds it first",
          "[cli][serve]") {
  // A real daemon with a token: the right token runs, a wrong one is refused before the
  // command is sent. Then a listener that is not the daemon (a bogus challenge): the client
  // sends only its hello with a nonce and gives up; the token is nowhere in what it received.
  auto r = in_host_tmp(
      "echo right-token-8f3a > $d/tok; echo wrong > $d/bad; mkdir $d/root; "
      "$P serve --listen tcp:127.0.0.1:0 --token-file $d/tok --root $d/root >$d/out 2>$d/err & "
      "daemon=$!; for i in $(seq 200); do grep -q ready $d/out && break; sleep 0.05; done; "
      "ep=$(grep -o 'tcp:127.0.0.1:[0-9]*' $d/out | head -1); "
      "$P run --connect $ep --token-file $d/tok --cwd $d/root -- /bin/echo over-tcp; "
      "echo status=$?; "
      "$P run --connect $ep --token-file $d/bad --cwd $d/root -- /bin/echo never 2>$d/e1; "
      "echo status=$?; cat $d/e1; "
      "kill -TERM $daemon; wait $daemon; "
      "python3 -c 'import socket,json,sys\n"
      "s=socket.socket(); s.bind((\"127.0.0.1\",0)); s.listen(1)\n"
      "open(sys.argv[1],\"w\").write(str(s.getsockname()[1]))\n"
      "c,_=s.accept(); got=c.recv(65536)\n"
      "c.sendall((json.dumps({\"type\":\"challenge\",\"nonce\":\"a\"*64,\"proof\":\"b\"*64})+"
      "\"\\n\").encode())\n"
      "c.settimeout(2)\n"
      "try:\n  while True:\n    x=c.recv(65536)\n    if not x: break\n    got+=x\n"
      "except Exception: pass\n"
      "open(sys.argv[2],\"wb\").write(got)' $d/port $d/got & fake=$!; "
      "for i in $(seq 200); do [ -s $d/port ] && break; sleep 0.05; done; "
      "$P run --connect tcp:127.0.0.1:$(cat $d/port) --token-file $d/tok -- /bin/echo never "
      "2>$d/e2; echo status=$?; cat $d/e2; wait $fake; "
      "grep -c right-token $d/got; grep -c '\"nonce\"' $d/got; "
      // A peer that answers with output and an exit, no challenge: not believed, and stdin
      // is not sent to it.
      "python3 -c 'import socket,json,sys\n"
      "s=socket.socket(); s.bind((\"127.0.0.1\",0)); s.listen(1)\n"
      "open(sys.argv[1],\"w\").write(str(s.getsockname()[1]))\n"
      "c,_=s.accept(); got=c.recv(65536)\n"
      "for m in "
      "[{\"type\":\"stdout\",\"id\":1,\"data\":\"spoofed\\n\"},{\"type\":\"exit\",\"id\":1,\"exit_"
      "code\":0}]:\n"
      "  c.sendall((json.dumps(m)+\"\\n\").encode())\n"
      "c.settimeout(1)\n"
      "try:\n  while True:\n    x=c.recv(65536)\n    if not x: break\n    got+=x\n"
      "except Exception: pass\n"
      "c.close(); open(sys.argv[2],\"wb\").write(got)' $d/port2 $d/got2 & fake=$!; "
      "for i in $(seq 200); do [ -s $d/port2 ] && break; sleep 0.05; done; "
      "echo TOP-SECRET | timeout 10 $P run --connect tcp:127.0.0.1:$(cat $d/port2) --token-file "
      "$d/tok -- /bin/cat 2>/dev/null; echo status=$?; wait $fake; "
      "grep -c -e TOP -e VE9Q $d/got2");
  INFO(r.result.stdout_data << r.result.stderr_data);
  const std::string& out = r.result.stdout_data;
  CHECK(contains(out, "over-tcp\nstatus=0\n"));
  CHECK(!contains(out, "never"));
  CHECK(contains(out, "status=125\npaddock: E_CONFIG_INVALID: --connect tcp:127.0.0.1:"));
  CHECK(contains(out, "the daemon's proof does not match this token"));
  CHECK(contains(out, "\n0\n1\n"));  // the token nowhere; the hello's nonce once
  CHECK(!contains(out, "spoofed"));
  CHECK(contains(out, "status=125\n0\n"));  // refused, and stdin never sent
}
