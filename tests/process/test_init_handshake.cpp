// The supervisor's half of paddock-init's report (process/init_handshake.*): records read as
// they come, the command taken as ended only on a settled status, nothing trusted past EOF.
#include <unistd.h>

#include <catch2/catch.hpp>

#include "process/init_handshake.hpp"

using paddock::process::InitHandshake;
using paddock::process::InitReport;
using paddock::process::InitReportKind;
using Progress = paddock::process::InitHandshake::Progress;

namespace {
void write_record(InitHandshake& h, InitReportKind kind, int value) {
  const InitReport r{kind, value};
  REQUIRE(::write(h.child_end(), &r, sizeof r) == static_cast<ssize_t>(sizeof r));
}
}  // namespace

TEST_CASE("init report: the command ends on its settled status, records read as they come",
          "[spawn][init]") {
  InitHandshake h;
  REQUIRE(h.open());
  CHECK(h.poll() == Progress::pending);  // nothing written yet: never waits
  write_record(h, InitReportKind::mounts_dropped, 2);
  CHECK(h.poll() == Progress::pending);                 // not the last record
  write_record(h, InitReportKind::command_status, 15);  // killed by SIGTERM
  CHECK(h.poll() == Progress::reported);
  auto out = h.take();
  REQUIRE(out.status);
  CHECK(out.status->signal == 15);
  CHECK(out.status->exit_code == 128 + 15);
  CHECK(out.mounts_dropped == 2);
  CHECK_FALSE(h.active());
}

TEST_CASE("init report: an unsettled status waits for the init's exit, and still counts",
          "[spawn][init]") {
  InitHandshake h;
  REQUIRE(h.open());
  write_record(h, InitReportKind::command_status_unsettled, 3 << 8);  // exit 3
  CHECK(h.poll() == Progress::pending);  // something may still run: not ended yet
  h.close_child_end();                   // the init exits
  CHECK(h.poll() == Progress::closed);
  auto out = h.take();
  REQUIRE(out.status);
  CHECK(out.status->exit_code == 3);
}

TEST_CASE("init report: an execve failure and a torn record", "[spawn][init]") {
  InitHandshake h;
  REQUIRE(h.open());
  write_record(h, InitReportKind::exec_failed, 2);
  write_record(h, InitReportKind::command_status, 127 << 8);
  CHECK(h.poll() == Progress::reported);
  auto out = h.take();
  CHECK(out.exec_errno == 2);
  CHECK_FALSE(out.status);  // the execve failure says more than its 127

  InitHandshake torn;
  REQUIRE(torn.open());
  const char half[4] = {1, 0, 0x44, 0x50};
  REQUIRE(::write(torn.child_end(), half, sizeof half) == 4);
  torn.close_child_end();
  CHECK(torn.poll() == Progress::closed);  // not a record: nothing taken from it
  auto none = torn.take();
  CHECK_FALSE(none.status);
  CHECK(none.exec_errno == 0);
}
