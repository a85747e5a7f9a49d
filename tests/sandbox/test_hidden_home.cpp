// The hidden home (FilesystemPolicy::hide_home): credentials no list names are unreadable by
// any spelling, what tools need still runs, git has the user's identity and nothing else of
// ~/.gitconfig, and a checkout in the home works from any subdirectory. Run as root and as
// nobody (the [attack] tag is in the unprivileged suite).
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "sandbox/git_home_config.hpp"
#include "sandbox/home_view.hpp"
#include "support/attack_fixture.hpp"
#include "support/git_scratch.hpp"
#include "support/path_tree.hpp"

namespace fs = std::filesystem;
using test::in;
using test::sandbox_config;
using test::Tree;

namespace {

constexpr const char* kToken = "TOKEN-5f1e";

// Tree::write, with the directories above the file made first.
void put(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  Tree::write(path, text);
}

// Credentials of tools the built-in list does not name (the fail-closed issue's class 6).
const char* const kUnlisted[] = {".config/git/credentials",
                                 ".config/pip/pip.conf",
                                 ".terraformrc",
                                 ".config/helm/repositories.yaml",
                                 ".condarc",
                                 ".alibabacloud/credentials",
                                 ".wrangler/config/default.toml",
                                 ".config/heroku/config.json",
                                 ".config/ngrok/ngrok.yml",
                                 ".ngrok2/ngrok.yml",
                                 ".snowsql/config",
                                 ".config/openai/auth.json",
                                 ".anthropic/api_key",
                                 ".some-tool-nobody-listed/token"};

// Scratch with a home holding the unlisted credentials, a toolchain, a cache and a checkout.
struct HomeTree {
  test::Scratch s;
  std::string home = s.root + "/home";
  std::string proj = home + "/proj";
  HomeTree() {
    for (const char* rel : kUnlisted) put(home + "/" + rel, std::string(kToken) + "\n");
    put(home + "/.local/bin/hello-tool", "#!/bin/sh\necho tool-ran\n");
    ::chmod((home + "/.local/bin/hello-tool").c_str(), 0755);
    put(home + "/.cache/pip/http/blob", "cached\n");
    put(home + "/.gem/specs/index", "spec\n");
    put(home + "/.gem/credentials", std::string(kToken) + "\n");
    put(home + "/.cargo/bin/cargo-x", "cargo-bin\n");
    put(home + "/.config/git/ignore", "*.swp\n");  // git's global excludes: shown
    put(home + "/notes/plan.txt", std::string(kToken) + "\n");
    s.repo(proj);
    fs::create_directories(proj + "/src");
    // As nobody runs the suite, the tree must be passable (Scratch makes root 0755).
    s.host("chmod -R a+rX " + s.root);
  }
  paddock::Config config() const {
    paddock::Config c = sandbox_config();
    c.sandbox.filesystem.home = home;
    return c;
  }
};

}  // namespace

TEST_CASE("attack: credentials no list names are unreadable in a hidden home by any spelling",
          "[attack][fs][home]") {
  HomeTree t;
  test::Harness h(t.config());
  std::string script = t.s.env() + "cd " + t.proj + "; ";
  for (const char* rel : kUnlisted) {
    const std::string f = t.home + "/" + rel;
    // Plain, through /proc/self/root, through a link the command plants in its workspace, a
    // relative path from the checkout, and programs that read files their own way.
    script += "cat " + f + "; cat /proc/self/root" + f + "; ln -sf " + f +
              " link && cat link; cat ../" + rel + "; head -c 100 " + f + "; ";
  }
  script += "find " + t.home +
            " -type f 2>/dev/null | xargs cat 2>/dev/null; "
            "tar cf - " +
            t.home +
            " 2>/dev/null | strings; "
            "grep -r TOKEN " +
            t.home +
            " /root /home 2>/dev/null; "
            "ls -la " +
            t.home +
            " /root /home; "
            "cat ~/.gem/credentials " +
            t.home + "/notes/plan.txt; echo END";
  auto r = h.exec(test::sh(script), test::git_in(t.proj));
  INFO(r.result.stdout_data << r.result.stderr_data << r.result.error);
  REQUIRE(r.result.sandboxed);
  CHECK(r.result.stdout_data.find("END") != std::string::npos);
  CHECK(r.result.stdout_data.find(kToken) == std::string::npos);
  CHECK(r.result.stderr_data.find(kToken) == std::string::npos);
  // The link the command made is its own change; the credentials are where they were.
  for (const char* rel : kUnlisted)
    CHECK(Tree::read(t.home + "/" + rel) == std::string(kToken) + "\n");
}

TEST_CASE("hidden home: toolchains and caches are read and never written, denials stay deeper",
          "[attack][fs][home]") {
  HomeTree t;
  paddock::Config c = t.config();
  SECTION("the built-in readable paths") {
    test::Harness h(c);
    auto r = h.exec(test::sh(t.s.env() + "export PATH=" + t.home +
                             "/.local/bin:$PATH; hello-tool; cat ~/.cache/pip/http/blob "
                             "~/.gem/specs/index ~/.cargo/bin/cargo-x; "
                             "echo x > ~/.cache/pip/new || echo cache-read-only; "
                             "echo x > ~/.local/bin/hello-tool || echo bin-read-only; "
                             "cat ~/.gem/credentials || echo gem-credential-hidden"),
                    test::git_in(t.proj));
    INFO(r.result.stdout_data << r.result.stderr_data << r.result.error);
    REQUIRE(r.result.sandboxed);
    CHECK(r.result.stdout_data ==
          "tool-ran\ncached\nspec\ncargo-bin\ncache-read-only\nbin-read-only\n"
          "gem-credential-hidden\n");
    CHECK(!fs::exists(t.home + "/.cache/pip/new"));
  }
  SECTION("a denyRead of the policy wins over the built-in list") {
    c.sandbox.filesystem.deny_read = {"~/.cargo"};
    test::Harness h(c);
    auto r = h.exec(test::sh(t.s.env() + "cat ~/.cargo/bin/cargo-x || echo denied"),
                    test::git_in(t.proj));
    INFO(r.result.stdout_data << r.result.stderr_data << r.result.error);
    REQUIRE(r.result.sandboxed);
    CHECK(r.result.stdout_data == "denied\n");
  }
  SECTION("allowRead ~ shows the home again, the credential list still applies") {
    c.sandbox.filesystem.allow_read = {"~"};
    test::Harness h(c);
    auto r = h.exec(
        test::sh(t.s.env() +
                 "cat ~/.some-tool-nobody-listed/token; cat ~/.gem/credentials ~/.terraformrc"
                 " 2>/dev/null || echo hidden"),
        test::git_in(t.proj));
    INFO(r.result.stdout_data << r.result.stderr_data << r.result.error);
    REQUIRE(r.result.sandboxed);
    CHECK(r.result.stdout_data == std::string(kToken) + "\nhidden\n");
  }
  SECTION("hideHome off: srt's behaviour") {
    c.sandbox.filesystem.hide_home = false;
    test::Harness h(c);
    auto r = h.exec(test::sh(t.s.env() + "cat ~/notes/plan.txt"), test::git_in(t.proj));
    INFO(r.result.stdout_data << r.result.stderr_data << r.result.error);
    REQUIRE(r.result.sandboxed);
    CHECK(r.result.stdout_data == std::string(kToken) + "\n");
  }
}

TEST_CASE("hidden home: a checkout in the home works from a subdirectory, writes above fail",
          "[attack][fs][home]") {
  HomeTree t;
  const std::string before = Tree::read(t.proj + "/base.txt");
  Tree::write(t.proj + "/src/edit.swp", "swap\n");  // the global excludes leave it out
  SECTION("writable subdirectory") {
    test::Harness h(t.config());
    auto r = h.exec(test::sh(t.s.env() +
                             "git status --porcelain && git log --format=%s && "
                             "echo new > here.txt && (echo x > ../base.txt || echo above-refused); "
                             "(echo x > ../Makefile || echo makefile-refused); ls -A " +
                             t.home + "; cat ~/.config/git/ignore ~/.config/pip/pip.conf"),
                    test::git_in(t.proj + "/src"));
    INFO(r.result.stdout_data << r.result.stderr_data << r.result.error);
    REQUIRE(r.result.sandboxed);
    // The home is a new one: it lists what is shown in it and nothing else, and what it lacks
    // is absent, not denied (git warned of ~/.config/git/ignore on every run).
    CHECK(r.result.stdout_data ==
          "base\nabove-refused\nmakefile-refused\n.cache\n.cargo\n.config\n"
          ".gem\n.local\nproj\n*.swp\n");
    CHECK(r.result.stderr_data.find("unable to access") == std::string::npos);
    CHECK(r.result.stderr_data.find("Permission denied") == std::string::npos);
    CHECK(r.result.stderr_data.find("/.config/pip/pip.conf: No such file") != std::string::npos);
    CHECK(Tree::read(t.proj + "/src/here.txt") == "new\n");
    CHECK(Tree::read(t.proj + "/base.txt") == before);
    CHECK(!fs::exists(t.proj + "/Makefile"));
    // The host's own git sees only the command's file.
    auto st = t.s.host("cd " + t.proj + " && git status --porcelain");
    CHECK(st.text == "?? src/\n");
  }
  SECTION("read-only working directory") {
    paddock::Config c = t.config();
    c.sandbox.filesystem.allow_write_cwd = false;
    test::Harness h(c);
    auto r = h.exec(test::sh(t.s.env() + "cat ../base.txt && git log --format=%s && "
                                         "(echo x > y || echo read-only)"),
                    test::git_in(t.proj + "/src"));
    INFO(r.result.stdout_data << r.result.stderr_data << r.result.error);
    REQUIRE(r.result.sandboxed);
    CHECK(r.result.stdout_data == "base\nbase\nread-only\n");
  }
  SECTION("a read-only working directory in a home's dot directory is refused") {
    paddock::Config c = t.config();
    c.sandbox.filesystem.allow_write_cwd = false;
    test::Harness h(c);
    auto r =
        h.exec(test::sh("cat git/credentials pip/pip.conf"), test::git_in(t.home + "/.config"));
    INFO(r.result.stdout_data << r.result.stderr_data << r.result.error);
    CHECK(r.result.stdout_data.find(kToken) == std::string::npos);
    CHECK(r.result.error.find("hidden home") != std::string::npos);
  }
  SECTION("a read-only working directory inside a credential stays refused") {
    paddock::Config c = t.config();
    c.sandbox.filesystem.allow_write_cwd = false;
    fs::create_directories(t.home + "/.ssh/sub");
    t.s.host("chmod -R a+rX " + t.home + "/.ssh");
    test::Harness h(c);
    auto r = h.exec(test::sh("ls; cat " + t.home + "/.ssh/sub/../../.terraformrc"),
                    test::git_in(t.home + "/.ssh/sub"));
    INFO(r.result.stdout_data << r.result.stderr_data << r.result.error);
    CHECK(r.result.stdout_data.find(kToken) == std::string::npos);
    CHECK(r.result.exit_code != 0);
  }
}

TEST_CASE("hidden home: git gets the settings of ~/.gitconfig that hold no secret",
          "[attack][fs][home]") {
  HomeTree t;
  put(t.home + "/.gitconfig",
      "[credential]\n\thelper = store\n"
      "[url \"https://user:" +
          std::string(kToken) +
          "@example.com/\"]\n"
          "\tinsteadOf = https://example.com/\n"
          "[User]\n\tName = \"Jane \\\"JD\\\" Doe\" ; a comment\n"
          "[include]\n\tpath = ~/.gitconfig-extra\n"
          "[user]\n\temail = jane@example.com\n"
          "[init]\n\tdefaultBranch = trunk\n[pull]\n\trebase = true\n"
          "[alias]\n\tst = status -s\n\tpushx = !git push https://u:" +
          std::string(kToken) +
          "@example.com\n"
          "[http]\n\textraHeader = Authorization: " +
          std::string(kToken) +
          "\n"
          "[core]\n\tfsmonitor = touch " +
          t.s.canary + "\n");
  put(t.home + "/.gitconfig-extra", "[user]\n\tsigningkey = " + std::string(kToken) + "\n");
  t.s.host("chmod -R a+rX " + t.home);
  test::Harness h(t.config());
  // No GIT_AUTHOR_* this time: the identity comes from the config file.
  const std::string env =
      "export HOME=" + t.home + " GIT_CONFIG_NOSYSTEM=1 GIT_CEILING_DIRECTORIES=" + t.s.root + "; ";
  auto r = h.exec(test::sh(env + "cat ~/.gitconfig; git config --global --list; "
                                 "echo more >> base.txt && git commit -qam more && "
                                 "git log -1 --format='%an <%ae>'; "
                                 "(echo x >> ~/.gitconfig || echo config-read-only)"),
                  test::git_in(t.proj));
  INFO(r.result.stdout_data << r.result.stderr_data << r.result.error);
  REQUIRE(r.result.sandboxed);
  const std::string& out = r.result.stdout_data;
  CHECK(out.find(kToken) == std::string::npos);
  CHECK(out.find("user.email=jane@example.com\nuser.name=Jane \"JD\" Doe\n") != std::string::npos);
  CHECK(out.find("init.defaultbranch=trunk\n") != std::string::npos);
  CHECK(out.find("pull.rebase=true\n") != std::string::npos);
  CHECK(out.find("alias.st=status -s\n") != std::string::npos);
  CHECK(out.find("pushx") == std::string::npos);
  CHECK(out.find("extraheader") == std::string::npos);
  CHECK(out.find("credential") == std::string::npos);
  CHECK(out.find("Jane \"JD\" Doe <jane@example.com>\n") != std::string::npos);
  CHECK(out.find("config-read-only") != std::string::npos);
  CHECK(!t.s.canary_appeared());
  // The home's file is as it was.
  CHECK(Tree::read(t.home + "/.gitconfig").find("fsmonitor") != std::string::npos);
}

// The settings reader against git itself: whatever git reads as user.name, user.email and
// the other carried keys from a file, the file paddock writes says the same (and nothing when
// git reads nothing).
TEST_CASE("git home config: the same settings git reads, for git's own syntax", "[fs][home]") {
  test::Scratch s;
  const std::string home = s.root + "/home";
  const std::vector<std::string> samples = {
      "[user]\n\tname = Plain Name\n\temail = p@example.com\n",
      "[user] name = same line\n",
      "[USER]\n\tNAME = Upper\n",
      "[user]\n\tname = \"  quoted  spaces  \"\n",
      "[user]\n\tname = tab\\there ; trailing comment\n\temail = a@b # another\n",
      "[user]\n\tname = first\n[user]\n\tname = second\n",
      "[user]\n\tname = con\\\n  tinued\n",
      "[user \"sub\"]\n\tname = not-this\n[user.x]\n\temail = nor-this\n",
      "[user]\n\temail\n",
      "# only a comment\n",
      "[user]\n\tname = \"esc \\\\ \\\" q\"\n",
      "[user]\n  name=no-space\n  email =  x@y  \n",
      "[url \"https://TOK@x/]\"]\n\tinsteadOf = y\n[user]\n\temail = e@x\n",
      "[init]\n\tdefaultBranch = \"main\" # c\n[alias]\n\tst = status \\\n  -s\n",
      "[Alias]\n\tSt = log\n[alias \"x\"]\n\tst = not-this\n"};
  for (const auto& text : samples) {
    fs::remove_all(home);
    put(home + "/.gitconfig", text);
    const std::string mine = paddock::sandbox::git_home_config(home);
    put(s.root + "/mine", mine);
    for (const char* key : {"user.name", "user.email", "init.defaultbranch", "alias.st"}) {
      const auto want = s.host("git config --file " + home + "/.gitconfig " + key);
      const auto got = s.host("git config --file " + s.root + "/mine " + key);
      INFO(text << "---\n" << mine);
      CHECK(got.text == want.text);
      CHECK(got.status == want.status);
    }
  }
}

TEST_CASE("git home config: includes followed as git follows them and risky aliases left out",
          "[fs][home]") {
  test::Scratch s;
  const std::string home = s.root + "/home";
  put(home + "/.gitconfig",
      "[user]\n\tname = Before\n[include]\n\tpath = conf/extra.inc\n"
      "[alias]\n\tlg = log --pretty=format:%h\n\ttok = !GITHUB_TOKEN=ghp_x gh pr create\n"
      "\tsshpush = push git@example.com:me/priv.git\n\tcfg = -c http.extraHeader=x push\n"
      "\tq1 = \\\"-c\\\" http.extraHeader=Q1SECRET fetch\n\tq2 = '-c' x=Q2SECRET fetch\n"
      "\tq3 = \\t !curl Q3SECRET\n");
  put(home + "/conf/extra.inc",
      "[user]\n\tname = Included Name\n\temail = inc@example.com\n"
      "[credential]\n\thelper = store\n");
  const std::string mine = paddock::sandbox::git_home_config(home);
  put(s.root + "/mine", mine);
  INFO(mine);
  for (const char* key : {"user.name", "user.email", "alias.lg"}) {
    // As git reads it when it runs (config --file alone skips includes).
    const auto want = s.host("git config --includes --file " + home + "/.gitconfig " + key);
    const auto got = s.host("git config --file " + s.root + "/mine " + key);
    CHECK(got.text == want.text);
  }
  CHECK(mine.find("ghp_x") == std::string::npos);
  // A file that includes itself again and again is read once, promptly.
  put(home + "/conf/loop.inc", [] {
    std::string t;
    for (int i = 0; i < 30; ++i) t += "[include]\n\tpath = loop.inc\n";
    return t;
  }());
  put(home + "/.config/git/config", "[include]\n\tpath = ~/conf/loop.inc\n[alias]\n\tx = log\n");
  const auto started = std::chrono::steady_clock::now();
  CHECK(paddock::sandbox::git_home_config(home).find("x = ") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
  // Another user's file, or one others may write, is not followed (a root supervisor would
  // carry a private config into the sandbox).
  put(home + "/conf/theirs.inc", "[user]\n\tsigningkey = x\n[alias]\n\ttheirs = log\n");
  put(home + "/conf/open.inc", "[alias]\n\topen = log\n");
  ::chmod((home + "/conf/open.inc").c_str(), 0666);
  if (::geteuid() == 0) ::chown((home + "/conf/theirs.inc").c_str(), 12345, 12345);
  put(home + "/.config/git/config",
      "[include]\n\tpath = ~/conf/theirs.inc\n\tpath = ~/conf/open.inc\n");
  const std::string narrowed = paddock::sandbox::git_home_config(home);
  INFO(narrowed);
  CHECK(narrowed.find("open = ") == std::string::npos);
  if (::geteuid() == 0) CHECK(narrowed.find("theirs = ") == std::string::npos);
  CHECK(mine.find("example.com:me") == std::string::npos);
  CHECK(mine.find("extraHeader") == std::string::npos);
  CHECK(mine.find("SECRET") == std::string::npos);
  CHECK(mine.find("helper") == std::string::npos);
}

// The rules the hidden home adds, for the paths of one scratch tree (the machine's own /root,
// /home and passwd home add theirs, which differ from machine to machine).
TEST_CASE("hidden home rules: the home denied, the list and the repository shown, denials win",
          "[paths][home]") {
  test::paths::Tree t;
  const std::string home = t.dir("home");
  t.dir("home/.local/bin");
  t.dir("home/.cargo/bin");
  t.dir("home/.gem");
  t.file("home/.gem/credentials");
  t.dir("home/proj/.git");
  t.dir("home/proj/src");
  t.link(t("elsewhere"), "home/.pyenv");  // a link: its name stays hidden, no rule
  t.dir("elsewhere");
  paddock::FilesystemPolicy p = test::paths::host_policy();
  p.hide_home = true;
  p.deny_read = {"~/.cargo"};
  auto r = paddock::sandbox::resolve_filesystem(p, home + "/proj/src", home);
  std::vector<std::string> mine;
  for (const auto& line : test::paths::lines(r)) {
    if (line.find(t.root) != std::string::npos) mine.push_back(line);
  }
  // ~/.cargo needs no rule of its own (the home hides it), but keeps ~/.cargo/bin hidden.
  CHECK(mine == std::vector<std::string>{
                    "deny_read " + home,
                    "allow_read " + home + "/.gem",
                    "allow_read " + home + "/proj",
                    "deny_read " + home + "/.gem/credentials",
                    "allow_read " + home + "/.local/bin",
                    "writable " + home + "/proj/src",
                });
  CHECK(std::find(r.hidden_homes.begin(), r.hidden_homes.end(), home) != r.hidden_homes.end());
  if (fs::is_directory("/root")) {
    CHECK(std::find(r.hidden_homes.begin(), r.hidden_homes.end(), "/root") != r.hidden_homes.end());
  }
  // A dotfiles repository at the home itself is never shown whole.
  t.dir("home/.git");
  fs::remove_all(home + "/proj/.git");
  r = paddock::sandbox::resolve_filesystem(p, home + "/proj/src", home);
  for (const auto& line : test::paths::lines(r)) CHECK(line != "allow_read " + home);
  for (const auto& line : test::paths::lines(r)) CHECK(line != "allow_read " + home + "/proj");
}

// The hostile review's leaks: a repository inside a credential (`pass git init`) is never the
// top shown around a working directory, and a relative program is the command's own file
// (found from its cwd), not the one at that name below paddock's cwd.
TEST_CASE("attack: a repository in a credential and a relative program show nothing more",
          "[attack][fs][home]") {
  HomeTree t;
  put(t.home + "/.password-store/bank.gpg", std::string(kToken) + "\n");
  fs::create_directories(t.home + "/.password-store/.git");
  fs::create_directories(t.home + "/.password-store/sub");
  // The same relative name below the home (paddock's cwd) is a secret, not a program.
  put(t.home + "/notes/secret", std::string(kToken) + "\n");
  put(t.home + "/proj/notes/secret", "#!/bin/sh\ncat " + t.home + "/notes/secret\n");
  ::chmod((t.home + "/proj/notes/secret").c_str(), 0755);
  t.s.host("chmod -R a+rX " + t.home);
  paddock::Config c = t.config();
  c.sandbox.filesystem.allow_write_cwd = false;
  test::Harness h(c);
  auto r =
      h.exec(test::sh("cat ../bank.gpg; ls .."), test::git_in(t.home + "/.password-store/sub"));
  INFO(r.result.stdout_data << r.result.stderr_data << r.result.error);
  CHECK(r.result.stdout_data.find(kToken) == std::string::npos);
  CHECK(r.result.exit_code != 0);
  // paddock's cwd is the home: the program named is proj/notes/secret, and ~/notes/secret
  // stays hidden.
  auto cli = t.s.host("cd " + t.home + " && HOME=" + t.home + " " + PADDOCK_BINARY +
                      " run --yes --cwd " + t.proj + " -- notes/secret; echo status=$?");
  INFO(cli.text);
  CHECK(cli.text.find(kToken) == std::string::npos);
}

TEST_CASE("attack: another user's home around the workspace is protected as one's own",
          "[fs][home]") {
  // Root running in /home/bob/proj: bob's dotfiles repository at his home's top is not shown
  // whole, and his credentials stay hidden inside what is shown. Only root can make a home.
  if (::geteuid() != 0 || !fs::is_directory("/home")) return;
  std::string tmpl = "/home/paddock-test-XXXXXX";
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  const std::string bob = tmpl;
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{bob};
  test::Scratch s;
  s.repo(bob);  // a dotfiles repository at the top of bob's home
  put(bob + "/.ssh/id_ed25519", std::string(kToken) + "\n");
  put(bob + "/.some-tool-nobody-listed/token", std::string(kToken) + "\n");
  put(bob + "/proj/.ssh/id_ed25519", "not a credential of bob's home\n");
  paddock::Config c = sandbox_config();
  c.sandbox.filesystem.home = s.root + "/home";
  test::Harness h(c);
  auto r = h.exec(test::sh(s.env() + "cat ../.ssh/id_ed25519 ../.some-tool-nobody-listed/token " +
                           bob + "/.ssh/id_ed25519; git log --format=%s -1; echo done"),
                  test::git_in(bob + "/proj"));
  INFO(r.result.stdout_data << r.result.stderr_data << r.result.error);
  REQUIRE(r.result.sandboxed);
  CHECK(r.result.stdout_data.find(kToken) == std::string::npos);
  CHECK(r.result.stdout_data.find("base") == std::string::npos);  // bob's history unseen
  CHECK(r.result.stdout_data.find("done") != std::string::npos);
  // A read-only run from bob's home itself is refused, naming his home, as one's own is.
  paddock::Config ro = c;
  ro.sandbox.filesystem.allow_write_cwd = false;
  test::Harness read_only(ro);
  auto ro_run = read_only.exec(test::sh("cat .ssh/id_ed25519; git log -1"), test::git_in(bob));
  INFO(ro_run.result.stdout_data << ro_run.result.error);
  CHECK(ro_run.result.stdout_data.find(kToken) == std::string::npos);
  CHECK(ro_run.result.error.find("hidden home (" + bob + ")") != std::string::npos);
  // bob's home itself as the writable root is refused, as one's own is.
  auto home_run = h.exec(test::sh("true"), test::git_in(bob));
  INFO(home_run.result.error);
  CHECK(home_run.result.error.find("home") != std::string::npos);
  CHECK(home_run.result.exit_code != 0);
}

TEST_CASE("homes outside /home: people's are hidden, a run in any account's is protected",
          "[fs][home]") {
  // A passwd file of the shapes a system has: a person's home on /srv, a service's on /var,
  // accounts whose home is the system's own tree, a home that does not exist, and a line
  // longer than the first buffer.
  test::paths::Tree t;
  const std::string alice = t.dir("srv/alice"), svc = t.dir("var/lib/svc");
  t.dir("var/lib/svc/proj/src");
  t.dir("srv/alice/work");
  const std::string passwd = t.root + "/passwd";
  Tree::write(passwd,
              "root:x:0:0:root:/root:/bin/bash\n"
              "bin:x:2:2:bin:/bin:/usr/sbin/nologin\n"
              "games:x:5:60:games:/usr/games:/usr/sbin/nologin\n"
              "svcsys:x:997:997::/:/usr/sbin/nologin\n"
              "svc:x:120:120:" +
                  std::string(9000, 'g') + ":" + svc +
                  ":/usr/sbin/nologin\n"
                  "alice:x:1001:1001:Alice:" +
                  alice +
                  ":/bin/bash\n"
                  "ghost:x:1002:1002::" +
                  t.root + "/srv/ghost:/bin/bash\n");
  using paddock::sandbox::hidden_home_dirs;
  using paddock::sandbox::user_home_around;
  const char* file = passwd.c_str();
  CHECK(user_home_around(svc + "/proj/src", file) == svc);
  CHECK(user_home_around(svc, file) == svc);
  CHECK(user_home_around(alice + "/work", file) == alice);
  CHECK(user_home_around(t.root + "/srv/ghost/x", file).empty());
  CHECK(user_home_around(t.root + "/srv", file).empty());
  // A home below a system directory is one (`games`' /usr/games; a person's /usr/local/bob).
  if (fs::is_directory("/usr/games") && !fs::is_symlink("/usr/games")) {
    CHECK(user_home_around("/usr/games/x", file) == "/usr/games");
  }
  CHECK(user_home_around("/bin", file).empty());
  CHECK(user_home_around("/", file).empty());
  std::vector<std::string> hidden;
  for (const auto& r : hidden_home_dirs({}, file)) hidden.push_back(r.path);
  CHECK(std::find(hidden.begin(), hidden.end(), alice) != hidden.end());
  CHECK(std::find(hidden.begin(), hidden.end(), svc) == hidden.end());  // a service's data
  CHECK(std::find(hidden.begin(), hidden.end(), "/") == hidden.end());
  CHECK(std::find(hidden.begin(), hidden.end(), "/usr/games") == hidden.end());
  // A change to the file is read at once (the cache is keyed on it).
  Tree::write(passwd, "alice:x:1001:1001::" + t.root + "/srv:/bin/bash\n");
  CHECK(user_home_around(alice + "/work", file) == t.root + "/srv");
}
