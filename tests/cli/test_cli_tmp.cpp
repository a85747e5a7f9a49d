// `paddock run` and the host's /tmp: the sandbox's /tmp is private, an allowRead under it
// attaches the host's path read-only, and every denial under /tmp still holds wherever the
// plan shows the host's tree (a read-only working directory, a program). Through the CLI, as
// root and (tag [attack]) as nobody.
#include <catch2/catch.hpp>

#include "cli/cli_support.hpp"

using test::contains;

using test::in_host_tmp;

TEST_CASE("the private /tmp: allowRead attaches a host path read-only, nothing else shows",
          "[cli][tmp][attack]") {
  auto r = in_host_tmp(
      "mkdir -p $d/shown $d/other $d/ws && echo A > $d/shown/f && echo B > $d/other/f && "
      "$P run --cwd $d/ws --allow-read $d/shown -- sh -c "
      "\"cat $d/shown/f; cat $d/other/f 2>/dev/null || echo other-hidden; "
      "echo x > $d/shown/new 2>/dev/null || echo read-only; echo mine > /tmp/own && cat "
      "/tmp/own\"; "
      "ls $d/shown; test -e /tmp/own && echo LEAKED");
  CHECK(r.result.stdout_data == "A\nother-hidden\nread-only\nmine\nf\n");
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
  auto home = in_host_tmp(
      "mkdir -p $d/home/.ssh && echo KEY > $d/home/.ssh/id_rsa && "
      "HOME=$d/home $P run --profile read-only --cwd $d/home -c "
      "'cat .ssh/id_rsa 2>/dev/null; echo status=$?'");
  CHECK(home.result.stdout_data == "status=1\n");
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
  CHECK(program.result.stdout_data == "status=127\n");
}
