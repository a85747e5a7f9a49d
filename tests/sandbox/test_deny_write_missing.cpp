// A path the policy names in denyWrite that does not exist yet fails at once inside the
// sandbox (mount_plan.cpp: a stand-in in the change set's layer, bound read-only), not only
// when the change set is applied. Each spelling of "make that name" must fail in the sandbox,
// the stand-ins never reach the workspace, and the host's git sees only the command's own
// files. Tagged [attack]: the suite runs again as nobody.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "support/change_set_scratch.hpp"
#include "support/harness.hpp"

namespace fs = std::filesystem;
using test::Scratch;

TEST_CASE("attack: a missing denyWrite path cannot be made inside the sandbox",
          "[attack][changes][denywrite]") {
  Scratch s;
  s.repo(s.ws);
  fs::create_directories(s.ws + "/sub");
  paddock::Config c = test::layered(s);
  c.sandbox.filesystem.deny_write = {s.ws + "/out.txt", s.ws + "/secrets/key.pem",
                                     s.ws + "/secrets/deep/x"};
  test::Harness h(c);
  // Every way of bringing a name into being; each must fail (a success prints GOT).
  const std::vector<std::string> attempts = {
      "echo x > out.txt",
      "printf x >> out.txt",
      "cp /etc/hostname out.txt",
      "echo x > t1 && mv -f t1 out.txt",
      "ln -sf /etc/passwd out.txt",
      "echo x > t2 && ln -f t2 out.txt",
      "rm -f out.txt && echo x > out.txt",
      "truncate -s 9 out.txt",
      "mkdir out.txt/",
      "cd sub && echo x > ../out.txt",
      "echo x > /proc/self/cwd/out.txt",
      "python3 -c 'import os; os.close(os.open(\"out.txt\", os.O_WRONLY|os.O_CREAT|os.O_TRUNC))'",
      "python3 -c 'import os; os.rename(\"t1\" if os.path.exists(\"t1\") else \"t2\", "
      "\"out.txt\")'",
      "mkdir -p pack && echo x > pack/out.txt && tar -cf a.tar -C pack out.txt && tar -xf a.tar",
      "echo x > secrets/key.pem",
      "mv secrets moved && mkdir secrets && echo x > secrets/key.pem",
      "rm -rf secrets",
      "mv secrets/deep elsewhere",
      "echo x > secrets/deep/x",
  };
  std::string script = "echo keep > t1; echo keep > t2;";
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    script += " (" + attempts[i] + ") 2>/dev/null && echo 'GOT " + std::to_string(i) + "';";
  }
  // Still what paddock put there: empty, and no one may open it.
  script +=
      " stat -c '%s %a' out.txt secrets/key.pem; echo done > notes.txt; git status "
      "--porcelain >/dev/null && echo git-ok";
  auto r = test::run_layered(h, s, s.ws, script);
  INFO(r.stdout_data << r.stderr_data << test::held(r));
  CHECK(r.stdout_data.find("GOT") == std::string::npos);
  CHECK(r.stdout_data.find("0 0\n0 0\n") != std::string::npos);
  CHECK(r.stdout_data.find("git-ok") != std::string::npos);
  // The host: none of the names, no stand-in, no directory made for one; the command's
  // ordinary files arrived.
  CHECK_FALSE(fs::exists(fs::symlink_status(s.ws + "/out.txt")));
  CHECK_FALSE(fs::exists(fs::symlink_status(s.ws + "/secrets")));
  CHECK_FALSE(fs::exists(fs::symlink_status(s.ws + "/moved")));
  CHECK(test::Tree::read(s.ws + "/notes.txt") == "done\n");
  CHECK(r.changes.held.empty());
  CHECK(test::sets_left(s) == 0);
  auto status = s.host("cd " + s.ws + " && git status --porcelain");
  INFO(status.text);
  CHECK(status.text.find("out.txt\n") == std::string::npos);
  CHECK(status.text.find("secrets") == std::string::npos);
  CHECK(status.text.find("notes.txt") != std::string::npos);
}

TEST_CASE("change sets: a stand-in's directory is kept when the command fills it",
          "[attack][changes][denywrite]") {
  Scratch s;
  paddock::Config c = test::layered(s);
  c.sandbox.filesystem.deny_write = {s.ws + "/conf/local.json"};
  test::Harness h(c);
  auto r = test::run_layered(h, s, s.ws,
                             "echo '{}' > conf/base.json && (echo x > conf/local.json) 2>/dev/null;"
                             " ls conf");
  CHECK(r.stdout_data == "base.json\nlocal.json\n");
  CHECK(test::Tree::read(s.ws + "/conf/base.json") == "{}\n");
  CHECK_FALSE(fs::exists(fs::symlink_status(s.ws + "/conf/local.json")));
  CHECK(r.changes.held.empty());
  CHECK(test::sets_left(s) == 0);
  // A later run sees the host's directory (it exists now): the stand-in is made there alone.
  auto again = test::run_layered(h, s, s.ws, "(: > conf/local.json) 2>/dev/null || echo refused");
  CHECK(again.stdout_data == "refused\n");
  CHECK_FALSE(fs::exists(fs::symlink_status(s.ws + "/conf/local.json")));
}
