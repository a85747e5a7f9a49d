// async_exec works with any Asio completion token, and on an embedder's own io_context.
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/deferred.hpp>
#include <asio/io_context.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <future>
#include <thread>

#include "support/harness.hpp"

TEST_CASE("use_future: the result, or the error as an exception", "[tokens]") {
  test::Harness h;
  auto f = h.manager.async_exec(test::argv({"/bin/echo", "future"}), {}, asio::use_future);
  auto r = f.get();
  CHECK(r.stdout_data == "future\n");

  auto missing = h.manager.async_exec(test::argv({"no-such-program-x"}), {}, asio::use_future);
  CHECK_THROWS_AS(missing.get(), std::system_error);
}

TEST_CASE("use_awaitable on the embedder's own single-threaded io_context", "[tokens]") {
  asio::io_context io;
  paddock::Manager manager(io.get_executor(), test::unclassified());
  std::string out;
  int code = -1;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto r =
            co_await manager.async_exec(test::sh("echo awaited; exit 4"), {}, asio::use_awaitable);
        out = r.stdout_data;
        code = r.exit_code;
      },
      asio::detached);
  io.run();
  CHECK(out == "awaited\n");
  CHECK(code == 4);
}

TEST_CASE("experimental::deferred: nothing runs until the operation is invoked", "[tokens]") {
  test::Harness h;
  std::atomic<bool> started{false};
  paddock::ExecOptions o;
  o.on_started = [&](int) { started = true; };
  auto op = h.manager.async_exec(test::argv({"/bin/true"}), o, asio::experimental::deferred);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(started);
  std::promise<int> done;
  std::move(op)([&](std::error_code, paddock::ExecResult r) { done.set_value(r.exit_code); });
  CHECK(done.get_future().get() == 0);
  CHECK(started);
}

TEST_CASE("the blocking wrapper needs no runtime and can be called again and again", "[tokens]") {
  // 20 calls in a row: more than an unprivileged user's RLIMIT_MEMLOCK would allow if each
  // call set up (and asynchronously released) an io_uring ring of its own.
  for (int i = 0; i < 20; ++i) {
    auto r = paddock::run_blocking(test::argv({"/bin/echo", "blocking"}));
    REQUIRE_FALSE(r.ec);
    CHECK(r.result.stdout_data == "blocking\n");
  }
}
