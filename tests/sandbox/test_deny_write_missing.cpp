// A path the policy names in denyWrite that does not exist yet fails at once inside the
// sandbox (mount_plan.cpp: a stand-in in the change set's layer, bound read-only), not only
// when the change set is applied. Each spelling of "make that name" must fail in the sandbox,
// the stand-ins never reach the workspace, and the host's git sees only the command's own
// files. Tagged [attack]: the suite runs again as nobody.
#include <sys/stat.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "sandbox/change_set.hpp"
#include "sandbox/change_set_standins.hpp"
#include "sandbox/path_resolution.hpp"
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

TEST_CASE("change sets: the host's directories keep their modes around stand-ins and writes",
          "[attack][changes][denywrite]") {
  Scratch s;
  fs::create_directories(s.ws + "/conf");
  fs::create_directories(s.ws + "/priv");
  fs::create_directories(s.ws + "/plain");
  fs::create_directories(s.ws + "/ro");
  fs::create_directories(s.ws + "/rw-then-ro");
  ::chmod((s.ws + "/conf").c_str(), 02775);
  ::chmod((s.ws + "/priv").c_str(), 0700);
  ::chmod((s.ws + "/plain").c_str(), 02755);
  paddock::Config c = test::layered(s);
  c.sandbox.filesystem.deny_write = {s.ws + "/conf/prod.key", s.ws + "/priv/sub/id_rsa",
                                     s.ws + "/ro/sub/key"};
  // Read-only directories: one with a stand-in below it (its copy is made in the layer),
  // one the command writes into and makes read-only again (copied up with the host's mode):
  // neither comes back writable (helper-43).
  ::chmod((s.ws + "/ro").c_str(), 0555);
  ::chmod((s.ws + "/rw-then-ro").c_str(), 0555);
  test::Harness h(c);
  // Inside, the directories show the host's modes; the stand-ins hold; ordinary writes in
  // the same directories (and in a set-id directory with no stand-in) arrive.
  auto r = test::run_layered(h, s, s.ws,
                             "stat -c '%a' . conf priv plain ro; echo b >> conf/app.yml; echo t "
                             "> priv/notes; echo p > plain/x; (echo k > conf/prod.key) "
                             "2>/dev/null || echo refused");
  struct stat ws {};
  ::lstat(s.ws.c_str(), &ws);
  char root_mode[16];
  std::snprintf(root_mode, sizeof root_mode, "%o\n", ws.st_mode & 07777);
  // The root too: the overlay shows its upper layer's directory, made like the host's.
  CHECK(r.stdout_data == std::string(root_mode) + "2775\n700\n2755\n555\nrefused\n");
  auto mode = [&](const char* rel) {
    struct stat st {};
    ::lstat((s.ws + "/" + rel).c_str(), &st);
    return st.st_mode & 07777;
  };
  CHECK(mode("conf") == 02775);
  CHECK(mode("priv") == 0700);
  CHECK(mode("plain") == 02755);
  CHECK(mode("ro") == 0555);
  CHECK(mode("rw-then-ro") == 0555);
  if (::geteuid() == 0) {
    // The file arrives, the directory stays as it was. (As nobody the apply cannot write into
    // a read-only directory: the set waits, pending, rather than widen the host's mode.)
    test::run_layered(h, s, s.ws,
                      "chmod u+w rw-then-ro; echo r > rw-then-ro/f; chmod 555 rw-then-ro");
    CHECK(test::Tree::read(s.ws + "/rw-then-ro/f") == "r\n");
    CHECK(mode("rw-then-ro") == 0555);
  }
  CHECK(test::Tree::read(s.ws + "/conf/app.yml") == "b\n");
  CHECK(test::Tree::read(s.ws + "/priv/notes") == "t\n");
  CHECK_FALSE(fs::exists(fs::symlink_status(s.ws + "/conf/prod.key")));
  CHECK_FALSE(fs::exists(fs::symlink_status(s.ws + "/priv/sub")));
  CHECK(r.changes.held.empty());
  // A chmod the command makes still arrives; a set-id bit it adds does not.
  auto chmodded = test::run_layered(h, s, s.ws, "chmod 750 priv; chmod g+s priv");
  INFO(test::held(chmodded));
  CHECK(mode("priv") == 0750);
}

TEST_CASE("change sets: a denyWrite glob holds back what it matches among new paths",
          "[attack][changes][denywrite]") {
  Scratch s;
  paddock::Config c = test::layered(s);
  c.sandbox.filesystem.deny_write = {"./*.pem", "./keys/*", "./deep/**/*.key"};
  test::Harness h(c);
  auto r = test::run_layered(h, s, s.ws,
                             "echo k > a.pem; mkdir -p keys deep/x/y; echo k > keys/one; echo k > "
                             "deep/x/y/z.key; echo ok > notes.pem.txt; echo ok > deep/x/y/z.txt");
  INFO(test::held(r));
  for (const char* rel : {"a.pem", "keys/one", "deep/x/y/z.key"}) {
    INFO(rel);
    CHECK_FALSE(fs::exists(s.ws + "/" + rel));
    CHECK(test::held_with(r, s.ws + "/" + rel, "read-only in the sandbox"));
  }
  CHECK(fs::exists(s.ws + "/notes.pem.txt"));
  CHECK(fs::exists(s.ws + "/deep/x/y/z.txt"));
  // A link put in the way, above the match or inside a `**`: held, and the host keeps its
  // directories.
  fs::create_directories(s.ws + "/conf");
  test::Tree::write(s.ws + "/conf/app.yml", "app\n");
  fs::create_directories(s.ws + "/tree/sub");
  c.sandbox.filesystem.deny_write = {"./conf/*.key", "./tree/**/*.key"};
  test::Harness h2(c);
  auto linked =
      test::run_layered(h2, s, s.ws,
                        "mkdir -p real r/q && cp conf/* real/ && rm -rf conf && ln -s real"
                        " conf && echo evil > conf/a.key; ln -s ../r tree/d && echo e >"
                        " tree/d/q/w.key; true");
  INFO(test::held(linked));
  CHECK(test::held_with(linked, s.ws + "/conf", "replaces the way to"));
  CHECK(test::held_with(linked, s.ws + "/tree/d", "replaces the way to"));
  CHECK(fs::is_directory(fs::symlink_status(s.ws + "/conf")));
  CHECK_FALSE(fs::exists(fs::symlink_status(s.ws + "/conf/a.key")));
  CHECK_FALSE(fs::exists(fs::symlink_status(s.ws + "/tree/d")));
  // A directory link the host already has on the way: a match written through it lands at
  // the target's real path, and is held there too.
  fs::create_directories(s.ws + "/keys2");
  fs::create_directories(s.ws + "/keys3");
  fs::create_symlink("../keys2", s.ws + "/tree/lk");
  fs::create_symlink("../keys3", s.ws + "/tree/sub/lk3");
  fs::create_symlink("../keys4", s.ws + "/tree/lk4");  // dangling: the command may make it
  c.sandbox.filesystem.deny_write = {"./tree/**/*.key", "./tree/*/x.key"};
  test::Harness h3(c);
  auto through = test::run_layered(h3, s, s.ws,
                                   "echo PWN > tree/lk/x.key; echo PWN > tree/sub/lk3/y.key;"
                                   " echo fine > tree/lk/notes.txt; mkdir keys4 && echo PWN >"
                                   " keys4/a.key; true");
  INFO(test::held(through));
  CHECK_FALSE(fs::exists(s.ws + "/keys2/x.key"));
  CHECK_FALSE(fs::exists(s.ws + "/keys3/y.key"));
  CHECK_FALSE(fs::exists(s.ws + "/keys4/a.key"));
  CHECK(fs::exists(s.ws + "/keys2/notes.txt"));
}

TEST_CASE("change sets: a stand-in that cannot be made is held back when the set is applied",
          "[attack][changes][denywrite]") {
  Scratch s;
  // A name that fits on the host (4,080 bytes with the workspace's path, under PATH_MAX) but
  // not below the store's longer prefix (<root>/store/<id>/roots/0/upper, 30 bytes more).
  const std::string leaf = "secret.key";
  const std::size_t want = 4080 - s.ws.size() - 1 - leaf.size();
  std::string rel;
  while (rel.size() + 2 < want) {
    rel += std::string(std::min<std::size_t>(200, want - rel.size() - 1), 'd') + "/";
  }
  rel += leaf;
  REQUIRE(s.ws.size() + 1 + rel.size() < 4096);
  REQUIRE(s.root.size() + 34 + rel.size() >= 4096);
  paddock::Config c = test::layered(s);
  c.sandbox.filesystem.deny_write = {s.ws + "/" + rel};
  test::Harness h(c);
  auto r = test::run_layered(h, s, s.ws,
                             "mkdir -p \"$(dirname " + rel + ")\" && echo k > " + rel +
                                 " && echo written; echo ok > notes.txt");
  INFO(test::held(r));
  CHECK(test::held_with(r, s.ws + "/" + rel, "read-only in the sandbox"));
  CHECK_FALSE(fs::exists(s.ws + "/" + rel));
  CHECK(fs::exists(s.ws + "/notes.txt"));
  // Only the set that waits with what was held back: no half-made set beside it.
  std::size_t without_json = 0;
  for (const auto& e : fs::directory_iterator(s.root + "/store")) {
    if (!fs::exists(e.path() / "set.json")) ++without_json;
  }
  CHECK(without_json == 0);
}

// A command that a sandbox made ahead may serve plans its stand-ins without making them
// (plan_builder.hpp, ChangeSetMaking::on_demand); the set made later must come out as planned,
// or that plan is not used. Each layout a stand-in meets: directories the host has or lacks,
// shared ones, a file where a directory should be, a stand-in under another, a path outside
// every root, a directory of another user (/usr's, or a chowned one as root: mirrored as root,
// left out as nobody).
TEST_CASE("change sets: stand-ins planned without making them come out as made",
          "[attack][changes][denywrite]") {
  Scratch s;
  const std::string store = s.root + "/store";
  fs::create_directories(store);
  ::chmod(store.c_str(), 0700);
  const std::string other = s.root + "/other";
  fs::create_directories(s.ws + "/has/deep");
  fs::create_directories(other + "/sub");
  test::Tree::write(s.ws + "/plain", "x\n");
  fs::create_directories(s.ws + "/foreign");
  if (::geteuid() == 0) REQUIRE(::chown((s.ws + "/foreign").c_str(), 65534, 65534) == 0);
  ::chmod((s.ws + "/has").c_str(), 0750);
  paddock::sandbox::ChangeSetInfo proto;
  proto.roots = {s.ws, other + "/sub", "/usr"};
  proto.command = "test";
  proto.placeholders = {s.ws + "/.envrc",           s.ws + "/has/x",     s.ws + "/has/deep/y",
                        s.ws + "/new/a/b",          s.ws + "/new/a/c",   s.ws + "/new/z",
                        s.ws + "/plain/below",      s.ws + "/foreign/k", s.ws + "/has/x/under",
                        other + "/sub/q/r",         other + "/outside",  "/nowhere/at/all",
                        "/usr/share/paddock-none/y"};
  paddock::sandbox::ChangeSetInfo planned = proto;
  paddock::sandbox::plan_placeholders(planned);
  const auto made = paddock::sandbox::create_change_set(store, proto);
  CHECK(made.placeholders == planned.placeholders);
  CHECK(made.placeholder_dirs == planned.placeholder_dirs);
  // What the layouts above must give, whoever runs it.
  auto kept = [&](const std::string& p) {
    return std::find(planned.placeholders.begin(), planned.placeholders.end(), p) !=
           planned.placeholders.end();
  };
  CHECK(kept(s.ws + "/.envrc"));
  CHECK(kept(s.ws + "/has/deep/y"));
  CHECK(kept(s.ws + "/new/a/b"));
  CHECK(kept(other + "/sub/q/r"));
  CHECK_FALSE(kept(s.ws + "/plain/below"));  // the host has a file there
  CHECK_FALSE(kept(s.ws + "/has/x/under"));  // below a stand-in file
  CHECK_FALSE(kept(other + "/outside"));     // in no root
  CHECK(kept(s.ws + "/foreign/k"));          // root mirrors it; nobody owns it
  CHECK(kept("/usr/share/paddock-none/y") == (::geteuid() == 0));
  paddock::sandbox::remove_change_set(made);
}

TEST_CASE("glob_covers: a denyWrite pattern covers the paths GlobWalk would match and below",
          "[paths][denywrite]") {
  using paddock::sandbox::paths::glob_covers;
  CHECK(glob_covers("/w/*.pem", "/w/a.pem"));
  CHECK_FALSE(glob_covers("/w/*.pem", "/w/sub/a.pem"));
  CHECK(glob_covers("/w/keys/*", "/w/keys/one/two"));
  CHECK(glob_covers("/w/**/*.key", "/w/z.key"));
  CHECK(glob_covers("/w/**/*.key", "/w/a/b/z.key"));
  CHECK_FALSE(glob_covers("/w/**/*.key", "/w/a/b/z.txt"));
  CHECK(glob_covers("/w/app/\\[id]/*", "/w/app/[id]/page"));
  CHECK_FALSE(glob_covers("/w/app/\\[id]/*", "/w/app/i/page"));
  CHECK_FALSE(glob_covers("/w/*.pem", "/x/a.pem"));
}
