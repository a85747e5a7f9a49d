// Spare change sets (sandbox/change_set_spares.cpp): a set applied with empty layers is kept
// and taken by the next set. A spare must never carry one command's writes, a broken layer or
// something planted into the next command's set. Tagged [attack]: the suite runs again as
// nobody.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "sandbox/change_set.hpp"
#include "support/change_set_scratch.hpp"
#include "support/harness.hpp"

namespace fs = std::filesystem;
using paddock::sandbox::ChangeSetInfo;
using paddock::sandbox::create_change_set;
using paddock::sandbox::retire_change_set;
using test::Scratch;
using test::sets_left;
using test::spares_left;

namespace {

// A store and a set over the scratch workspace, made through the same calls a sandbox uses.
struct Store {
  Scratch s;
  std::string dir = s.root + "/store";
  Store() {
    fs::create_directories(dir);
    ::chmod(dir.c_str(), 0700);
  }
  ChangeSetInfo make(std::size_t roots = 1) {
    ChangeSetInfo proto;
    for (std::size_t i = 0; i < roots; ++i) {
      const std::string r = s.ws + "/r" + std::to_string(i);
      fs::create_directories(r);
      proto.roots.push_back(r);
    }
    proto.command = "test";
    return create_change_set(dir, proto);
  }
  std::string only_spare() const {
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string name = e.path().filename();
      if (name.rfind("spare.", 0) == 0) return e.path();
    }
    return {};
  }
};

bool empty_dir(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(fs::symlink_status(path)) && fs::is_empty(path, ec) && !ec;
}

// What overlayfs leaves in its work directory after a command that deleted a lower file: the
// shared whiteout, a 0:0 character device. Root only (mknod); elsewhere nothing is made.
void overlay_leftover(const std::string& work) {
  fs::create_directories(work + "/work");
  ::mknod((work + "/work/#7").c_str(), S_IFCHR | 0, makedev(0, 0));
  ::chmod((work + "/work").c_str(), 0);
}

}  // namespace

TEST_CASE("spare change sets: an empty set is kept and taken by the next one",
          "[attack][changes][spares]") {
  Store st;
  ChangeSetInfo a = st.make();
  overlay_leftover(a.work(0));
  struct stat before;
  REQUIRE(::stat(a.upper(0).c_str(), &before) == 0);
  retire_change_set(a);
  CHECK_FALSE(fs::exists(a.dir));
  CHECK(spares_left(st.dir) == 1);
  CHECK_FALSE(fs::exists(st.only_spare() + "/set.json"));  // no set is listed for it
  CHECK(paddock::sandbox::list_change_sets(st.dir).empty());

  ChangeSetInfo b = st.make();
  CHECK(spares_left(st.dir) == 0);
  CHECK(b.id != a.id);
  CHECK(fs::exists(b.dir + "/set.json"));
  CHECK(paddock::sandbox::load_change_set(st.dir, b.id).id == b.id);
  CHECK(empty_dir(b.upper(0)));
  struct stat after;
  REQUIRE(::stat(b.upper(0).c_str(), &after) == 0);
  CHECK(after.st_ino != before.st_ino);  // a new upper layer, never the old directory
  // Its start time is now's, not the spare's first making.
  struct stat now;
  REQUIRE(::stat((b.dir + "/roots/0").c_str(), &now) == 0);
  CHECK(b.start_sec == now.st_ctim.tv_sec);
  CHECK(b.start_nsec == now.st_ctim.tv_nsec);
  paddock::sandbox::remove_change_set(b);
  CHECK(sets_left(st.dir) == 0);
}

TEST_CASE("spare change sets: a layer with anything in it is never kept",
          "[attack][changes][spares]") {
  Store st;
  const auto plant = GENERATE(as<std::string>{}, "file", "dir", "fifo", "link", "work-file",
                              "work-dir", "work-extra", "extra-layer", "extra-entry");
  INFO(plant);
  ChangeSetInfo a = st.make();
  const std::string up = a.upper(0), work = a.work(0);
  if (plant == "file") test::Tree::write(up + "/x", "data\n");
  if (plant == "dir") fs::create_directories(up + "/d");
  if (plant == "fifo") ::mkfifo((up + "/p").c_str(), 0600);
  if (plant == "link") fs::create_symlink("/etc/passwd", up + "/l");
  if (plant == "work-file") {
    fs::create_directories(work + "/work");
    test::Tree::write(work + "/work/x", "data\n");
  }
  if (plant == "work-dir") fs::create_directories(work + "/work/d");
  if (plant == "work-extra") fs::create_directories(work + "/index");
  if (plant == "extra-layer") fs::create_directories(a.dir + "/roots/1/upper");
  if (plant == "extra-entry") test::Tree::write(a.dir + "/roots/0/note", "x\n");
  retire_change_set(a);
  CHECK_FALSE(fs::exists(a.dir));
  CHECK(spares_left(st.dir) == 0);
  CHECK(sets_left(st.dir) == 0);
}

TEST_CASE("spare change sets: a spare changed after it was kept is removed, not taken",
          "[attack][changes][spares]") {
  Store st;
  const auto plant = GENERATE(as<std::string>{}, "upper-file", "upper-dir", "work-file", "mode",
                              "roots-link", "layer-link", "upper-link", "two-layers");
  INFO(plant);
  ChangeSetInfo a = st.make();
  retire_change_set(a);
  const std::string spare = st.only_spare();
  REQUIRE_FALSE(spare.empty());
  const std::string outside = st.s.root + "/outside";
  fs::create_directories(outside + "/0/upper");
  fs::create_directories(outside + "/0/work");
  test::Tree::write(outside + "/0/upper/planted", "planted\n");
  if (plant == "upper-file") test::Tree::write(spare + "/roots/0/upper/planted", "x\n");
  if (plant == "upper-dir") fs::create_directories(spare + "/roots/0/upper/d");
  if (plant == "work-file") test::Tree::write(spare + "/roots/0/work/stray", "x\n");
  if (plant == "mode") ::chmod(spare.c_str(), 0755);
  if (plant == "roots-link") {
    fs::remove_all(spare + "/roots");
    fs::create_directory_symlink(outside, spare + "/roots");
  }
  if (plant == "layer-link") {
    fs::remove_all(spare + "/roots/0");
    fs::create_directory_symlink(outside + "/0", spare + "/roots/0");
  }
  if (plant == "upper-link") {
    fs::remove_all(spare + "/roots/0/upper");
    fs::create_directory_symlink(outside + "/0/upper", spare + "/roots/0/upper");
  }
  ChangeSetInfo b = st.make(plant == "two-layers" ? 2 : 1);
  CHECK(spares_left(st.dir) == 0);  // looked at and removed
  for (std::size_t i = 0; i < b.roots.size(); ++i) {
    CHECK(empty_dir(b.upper(i)));
    CHECK(empty_dir(b.work(i)));
  }
  CHECK(test::Tree::read(outside + "/0/upper/planted") == "planted\n");  // never followed
  paddock::sandbox::remove_change_set(b);
}

TEST_CASE("spare change sets: links and files named as spares are never taken",
          "[attack][changes][spares]") {
  Store st;
  ChangeSetInfo a = st.make();
  retire_change_set(a);
  const std::string real = st.only_spare();
  // A copy of a good spare's layout elsewhere, reached by a link named as a spare.
  const std::string elsewhere = st.s.root + "/elsewhere";
  fs::create_directories(elsewhere + "/roots/0/upper");
  fs::create_directories(elsewhere + "/roots/0/work");
  ::chmod(elsewhere.c_str(), 0700);
  fs::remove_all(real);
  fs::create_directory_symlink(elsewhere, st.dir + "/spare.00000000000a");
  test::Tree::write(st.dir + "/spare.00000000000b", "a file\n");
  fs::create_directories(st.dir + "/spare.NOTHEX000000/roots");  // not a spare's name
  ChangeSetInfo b = st.make();
  CHECK(fs::is_directory(fs::symlink_status(b.dir)));
  CHECK(fs::exists(elsewhere + "/roots/0/upper"));  // the link's target is untouched
  CHECK(fs::canonical(b.upper(0)).string().rfind(fs::canonical(st.dir).string(), 0) == 0);
  CHECK(fs::exists(st.dir + "/spare.NOTHEX000000"));  // what is not named as ours stays
  paddock::sandbox::remove_change_set(b);
}

TEST_CASE("spare change sets: a descriptor kept on an old layer never reaches the next set",
          "[attack][changes][spares]") {
  Store st;
  ChangeSetInfo a = st.make();
  const int kept = ::open(a.upper(0).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(kept >= 0);
  retire_change_set(a);
  ChangeSetInfo b = st.make();
  REQUIRE(spares_left(st.dir) == 0);
  // The old layer's directory was replaced by a new one: what is written through the kept
  // descriptor lands nowhere the next command's set can see.
  const int fd = ::openat(kept, "late", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  CHECK(fd < 0);
  if (fd >= 0) ::close(fd);
  ::close(kept);
  CHECK(empty_dir(b.upper(0)));
  paddock::sandbox::remove_change_set(b);
}

TEST_CASE("spare change sets: many sets made at once each get a layer of their own",
          "[attack][changes][spares]") {
  Store st;
  std::vector<ChangeSetInfo> first;
  for (int i = 0; i < 6; ++i) first.push_back(st.make());
  for (auto& set : first) retire_change_set(set);
  REQUIRE(spares_left(st.dir) == 6);
  std::mutex m;
  std::vector<ChangeSetInfo> made;
  std::vector<std::string> errors;
  std::vector<std::thread> threads;
  for (int t = 0; t < 12; ++t) {
    threads.emplace_back([&] {
      try {
        ChangeSetInfo set = st.make();
        std::lock_guard<std::mutex> lock(m);
        made.push_back(set);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(m);
        errors.push_back(e.what());
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(errors.empty());
  REQUIRE(made.size() == 12);
  std::set<std::string> dirs;
  std::set<ino_t> uppers;
  for (const auto& set : made) {
    dirs.insert(set.dir);
    struct stat up;
    REQUIRE(::stat(set.upper(0).c_str(), &up) == 0);
    uppers.insert(up.st_ino);
    CHECK(empty_dir(set.upper(0)));
  }
  CHECK(dirs.size() == 12);
  CHECK(uppers.size() == 12);
  CHECK(spares_left(st.dir) == 0);
  for (auto& set : made) paddock::sandbox::remove_change_set(set);
}

TEST_CASE("spare change sets: through the sandbox, one command's writes never reach another's",
          "[attack][changes][spares]") {
  Scratch s;
  s.repo(s.ws);
  auto cfg = test::layered(s);
  cfg.warm_sandboxes = 0;  // a sandbox made ahead holds a set of its own while it waits
  test::Harness h(cfg);
  const std::string store = s.root + "/store";
  // Nothing written: its set is kept.
  auto quiet = test::run_layered(h, s, s.ws, "cat base.txt >/dev/null; echo ok");
  CHECK(quiet.stdout_data == "ok\n");
  CHECK(spares_left(store) == 1);
  // The next command takes it, writes, and its writes arrive; deleting a tracked file leaves
  // the overlay's whiteout in the work directory, which a later set clears.
  auto busy = test::run_layered(h, s, s.ws, "echo new > new.txt && rm base.txt && echo done");
  CHECK(busy.stdout_data == "done\n");
  CHECK(test::Tree::read(s.ws + "/new.txt") == "new\n");
  CHECK_FALSE(fs::exists(s.ws + "/base.txt"));
  CHECK(sets_left(store) == 0);
  for (int i = 0; i < 3; ++i) {
    auto again = test::run_layered(h, s, s.ws, "ls; touch t" + std::to_string(i));
    INFO(again.stdout_data);
    CHECK(again.stdout_data.find("new.txt") != std::string::npos);
    CHECK(again.stdout_data.find("base.txt") == std::string::npos);
    CHECK(fs::exists(s.ws + "/t" + std::to_string(i)));
  }
  // A command that only reads sees exactly the workspace, with nothing of earlier sets.
  auto look = test::run_layered(h, s, s.ws, "ls -A | grep -v '^.git$' | sort | tr '\\n' ' '");
  CHECK(look.stdout_data == "new.txt t0 t1 t2 ");
  CHECK(sets_left(store) == 0);
  CHECK(s.host("cd " + s.ws + " && git status --porcelain").status == 0);
}

TEST_CASE("spare change sets: sets orphaned before their set.json are removed once old",
          "[attack][changes][spares]") {
  // A paddock killed between making a set's directory (or claiming a spare) and writing its
  // set.json leaves a directory nothing lists. No command ran over it: it goes, once old.
  Store st;
  ChangeSetInfo kept = st.make();
  ChangeSetInfo orphan = st.make();
  // Two spares, one with a file planted in its layer since: the bad one goes, whatever
  // order a claim would look at them in.
  ChangeSetInfo good = st.make(), bad = st.make();
  retire_change_set(good);
  const std::string good_spare = st.only_spare();
  retire_change_set(bad);
  std::string bad_spare;
  for (const auto& e : fs::directory_iterator(st.dir)) {
    const bool spare = e.path().filename().string().rfind("spare.", 0) == 0;
    if (spare && e.path() != good_spare) bad_spare = e.path();
  }
  REQUIRE(spares_left(st.dir) == 2);
  test::Tree::write(bad_spare + "/roots/0/upper/planted", "x\n");
  fs::remove(orphan.dir + "/set.json");
  const std::string elsewhere = st.s.root + "/elsewhere";
  fs::create_directories(elsewhere);
  fs::create_directory_symlink(elsewhere, st.dir + "/00000000000c");  // a link, not a set
  fs::create_directories(st.dir + "/not-a-set-id");
  paddock::sandbox::remove_orphan_change_sets(st.dir, std::chrono::hours(1));
  CHECK(fs::exists(orphan.dir));  // young: it may still be being made
  paddock::sandbox::remove_orphan_change_sets(st.dir, std::chrono::seconds(0));
  CHECK_FALSE(fs::exists(orphan.dir));
  CHECK(fs::exists(kept.dir + "/set.json"));
  CHECK(fs::is_symlink(st.dir + "/00000000000c"));
  CHECK(fs::exists(elsewhere));
  CHECK(fs::exists(st.dir + "/not-a-set-id"));
  CHECK(paddock::sandbox::list_change_sets(st.dir).size() == 1);
  CHECK(spares_left(st.dir) == 1);
  CHECK_FALSE(fs::exists(bad_spare));
  paddock::sandbox::remove_change_set(kept);
}

TEST_CASE("change sets: a set is locked from its making and a spare goes unlocked",
          "[attack][changes][spares]") {
  // From another PID namespace a free lock is a dead owner: the lock must be held before
  // set.json first says "open" (hostile review: `changes discard` from another namespace
  // removed a run's set between its making and its command), and a retired set's lock must
  // not follow its directory into the spare the next set is made from.
  Store st;
  ChangeSetInfo a = st.make();
  REQUIRE(a.lock);
  REQUIRE(a.lock->get() >= 0);
  CHECK(paddock::sandbox::lock_change_set(a, std::chrono::milliseconds(0)).get() < 0);
  CHECK(paddock::sandbox::owner_alive(a));
  retire_change_set(a);         // gives the lock up first
  ChangeSetInfo b = st.make();  // takes the spare, and locks it
  CHECK(spares_left(st.dir) == 0);
  CHECK(paddock::sandbox::lock_change_set(b, std::chrono::milliseconds(0)).get() < 0);
  b.lock->reset();
  CHECK(paddock::sandbox::lock_change_set(b, std::chrono::milliseconds(0)).get() >= 0);
  paddock::sandbox::remove_change_set(b);
}
