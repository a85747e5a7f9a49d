// `paddock run` and the host's /tmp: shown read-only with the sandbox's writes kept private
// (an overlay); an allowRead under it attaches the host's path read-only; a denial inside
// hides that name, and every denial under /tmp still holds wherever the plan shows the host's
// tree (a read-only working directory, a program). Through the CLI, as root and (tag
// [attack]) as nobody.
#include <catch2/catch.hpp>

#include "cli/cli_support.hpp"

using test::contains;

using test::in_host_tmp;

TEST_CASE("the host's /tmp is shown read-only, every write there is private",
          "[cli][tmp][attack]") {
  // srt shows the host's /tmp read-only: data files, tools and checkouts there are usable.
  // paddock's /tmp also takes writes (new files, appends, removals), which stay in the
  // sandbox: the host's files are unchanged afterwards.
  auto r = in_host_tmp(
      "mkdir -p $d/data $d/ws && echo A > $d/data/f && echo old > $d/data/g && "
      "printf '#!/bin/sh\\necho tool-ran\\n' > $d/tool && chmod +x $d/tool && "
      "$P run --cwd $d/ws --env D=$d -- sh -c '"
      "cat $D/data/f; '$d'/tool; ls $D/data | tr \"\\n\" \" \"; echo; "
      "echo new > $D/data/new && echo more >> $D/data/g && rm $D/data/f && cat $D/data/g && "
      "ls $D/data | tr \"\\n\" \" \"; echo; echo mine > /tmp/own && cat /tmp/own; "
      "echo ws > $D/ws/kept'; "
      "echo host:; cat $d/data/f $d/data/g; ls $d/data; cat $d/ws/kept; "
      "test -e /tmp/own && echo LEAKED");
  CHECK(r.result.stdout_data ==
        "A\ntool-ran\nf g \nold\nmore\ng new \nmine\nhost:\nA\nold\nf\ng\nws\n");
}

TEST_CASE("the host's /tmp: allowRead attaches a host path read-only over the private writes",
          "[cli][tmp][attack]") {
  auto r = in_host_tmp(
      "mkdir -p $d/shown $d/ws && echo A > $d/shown/f && "
      "$P run --cwd $d/ws --allow-read $d/shown -- sh -c "
      "\"cat $d/shown/f; echo x > $d/shown/new 2>/dev/null || echo read-only\"; ls $d/shown");
  CHECK(r.result.stdout_data == "A\nread-only\nf\n");
}

TEST_CASE("attack: a denial inside the host's /tmp hides that path and shows the rest",
          "[cli][tmp][attack]") {
  // The denied names are the sandbox's own entries in the overlay's upper layer (an opaque
  // directory, an empty file, mode 000): removing or replacing them leaves a whiteout, never
  // the host's object. A HOME under /tmp (CI containers) is hidden as any home is, its
  // ~/.ssh too.
  auto r = in_host_tmp(
      "mkdir -p $d/secret $d/other $d/ws && echo S > $d/secret/s && echo F > $d/file && "
      "echo B > $d/other/f && "
      "$P run --cwd $d/ws --deny-read $d/secret --deny-read $d/file --env D=$d -- sh -c '"
      "cat $D/secret/s 2>/dev/null || echo secret-hidden; cat $D/file 2>/dev/null || echo "
      "file-hidden; cat $D/other/f; rmdir $D/secret 2>/dev/null; mkdir -p $D/secret; "
      "ls $D/secret | wc -l; rm -f $D/file; cat $D/file 2>/dev/null || echo file-gone; "
      "mv $D/other $D/secret2 2>/dev/null; cat $D/secret/s 2>/dev/null || echo still-hidden'");
  CHECK(r.result.stdout_data == "secret-hidden\nfile-hidden\nB\n0\nfile-gone\nstill-hidden\n");
  auto home = in_host_tmp(
      "mkdir -p $d/home/.ssh $d/home/proj && echo KEY > $d/home/.ssh/id_rsa && "
      "echo cfg > $d/home/.toolrc && "
      "HOME=$d/home $P run --yes --cwd $d/home/proj -- sh -c "
      "'cat $HOME/.toolrc 2>/dev/null || echo toolrc-hidden; "
      "cat $HOME/.ssh/id_rsa 2>/dev/null || echo key-hidden' 2>/dev/null");
  CHECK(home.result.stdout_data == "toolrc-hidden\nkey-hidden\n");
}

TEST_CASE("attack: denials under /tmp hold for a read-only cwd, a HOME and a program there",
          "[cli][tmp][attack]") {
  // Once dropped as no-ops because the host's /tmp is hidden, while the plan showed the cwd
  // (and a program) under it again: a denyRead inside and ~/.ssh of a HOME under /tmp read.
  auto cwd = in_host_tmp(
      "mkdir -p $d/ws/secret && echo TOP > $d/ws/secret/s && echo ENV > $d/ws/f.env && "
      "$P run --profile read-only --cwd $d/ws --deny-read $d/ws/secret --deny-read $d/ws/f.env "
      "-c 'cat secret/s f.env 2>/dev/null; echo status=$?'");
  CHECK(cwd.result.stdout_data == "status=1\n");
  // The home itself as a read-only cwd: hidden (refused, by name); with hideHome off, shown
  // with its ~/.ssh still hidden.
  auto home = in_host_tmp(
      "mkdir -p $d/home/.ssh && echo KEY > $d/home/.ssh/id_rsa && "
      "HOME=$d/home $P run --profile read-only --cwd $d/home -c "
      "'cat .ssh/id_rsa 2>/dev/null; echo status=$?'; echo run=$?; "
      "echo '{\"sandbox\": {\"hideHome\": false}}' > $d/shown.json && "
      "HOME=$d/home $P run --settings $d/shown.json --profile read-only --cwd $d/home -c "
      "'cat .ssh/id_rsa 2>/dev/null; echo status=$?'");
  CHECK(home.result.stdout_data == "run=125\nstatus=1\n");
  CHECK(contains(home.result.stderr_data, "in a hidden home"));
  auto inside = in_host_tmp(
      "mkdir -p $d/denied/ws && echo IN > $d/denied/ws/x && "
      "$P run --profile read-only --deny-read $d/denied --cwd $d/denied/ws -c 'cat x'; "
      "echo status=$?");
  CHECK(inside.result.stdout_data == "status=125\n");
  CHECK(contains(inside.result.stderr_data, "inside the denied path"));
  auto program = in_host_tmp(
      "mkdir -p $d/bin $d/ws && printf '#!/bin/sh\\necho RAN\\n' > $d/bin/tool && "
      "chmod +x $d/bin/tool && $P run --cwd $d/ws --deny-read $d/bin -- $d/bin/tool; "
      "echo status=$?");
  // Denied as everywhere: the name is there, mode 000 (EACCES: 126, not run).
  CHECK(program.result.stdout_data == "status=126\n");
}

TEST_CASE("attack: a writable root at /var/tmp itself keeps every rule below it",
          "[cli][tmp][attack][git]") {
  // `allowWrite: /var/tmp`, or a working directory of /tmp or /var/tmp: the host's directory
  // is attached writable, so it is not the sandbox's own one. It was still counted as ours,
  // and the rules below it skipped as "under a cover": the command read a denied file and
  // wrote a repository's .git/config there, which the host's git then ran (hostile review).
  for (const std::string how : {"--allow-write /var/tmp", "--cwd /var/tmp"}) {
    auto r = test::around_paddock(
        // The store outside /var/tmp, wherever the build is (held sets stay there).
        "s=$(mktemp -d /tmp/paddock-store-XXXXXX) && export PADDOCK_CHANGE_STORE=$s && "
        "d=$(mktemp -d /var/tmp/paddock-root-XXXXXX) && mkdir -p $d/secret $d/ws && "
        "echo TOP > $d/secret/s && git init -q $d/repo && "
        "(cd $d/ws && $P run " +
        how +
        " --deny-read $d/secret --env D=$d -- sh -c '"
        "cat $D/secret/s 2>/dev/null || echo denied; "
        "echo x >> $D/repo/.git/config 2>/dev/null; "
        "echo x > $D/repo/.git/hooks/pre-commit 2>/dev/null; "
        "echo kept > $D/written'); cat $d/written; "
        "git -C $d/repo config --list | grep -c '^x'; "
        "[ -e $d/repo/.git/hooks/pre-commit ] || echo no-hook; rm -rf $d;"
        " chmod -R u+rwx $s; rm -rf $s");
    INFO(how << r.result.stderr_data);
    // Held back from the change set, or refused inside: either way the host's repository
    // is as it was.
    CHECK(r.result.stdout_data == "denied\nkept\n0\nno-hook\n");
  }
}

TEST_CASE("what a command writes to the private /tmp is reported as discarded",
          "[cli][tmp][attack]") {
  // /tmp and /var/tmp live as long as one command: the result says what went with them
  // (names and bytes: new files, a directory, a host file replaced, one removed), and says
  // nothing when nothing was written there.
  auto r = in_host_tmp(
      "mkdir -p $d/ws && echo host > $d/keep && echo host > $d/gone && "
      "$P run --json --cwd $d/ws --env D=$d -- sh -c '"
      "printf notes > /tmp/notes.txt; mkdir -p /var/tmp/d; head -c 4096 /dev/zero > "
      "/var/tmp/d/z; printf 12345678 > $D/keep; rm $D/gone; echo ws > kept' "
      "| python3 -c 'import json,sys; d=json.load(sys.stdin)[\"discarded\"]; "
      "print(d[\"entries\"], d[\"bytes\"], d[\"where\"])'; "
      "$P run --json --cwd $d/ws -- sh -c 'echo only-ws > w; cat /tmp/notes.txt 2>&1 | wc -l' "
      "| python3 -c 'import json,sys; d=json.load(sys.stdin); "
      "print(\"discarded\" in d, d[\"stdout\"].strip())'; cat $d/keep $d/gone");
  // notes.txt (5) + d/ + d/z (4096) + keep (8) + the removal of gone (a whiteout) = 5 names.
  CHECK(r.result.stdout_data == "5 4109 private /tmp and /var/tmp\nFalse 1\nhost\nhost\n");
}
