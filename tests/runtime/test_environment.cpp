// The child's environment: the allow-list keeps the supervisor's secrets out.
#include <stdlib.h>

#include <catch2/catch.hpp>

#include "config/environment.hpp"
#include "support/harness.hpp"

TEST_CASE("a supervisor secret never reaches the child, allowed and explicit variables do",
          "[env]") {
  ::setenv("SECRET_API_KEY", "sk-live-should-never-leak", 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", "also-secret", 1);
  ::setenv("LC_TESTVAR", "kept", 1);
  test::Harness h;
  paddock::ExecOptions o;
  o.env["EXPLICIT"] = "given";
  auto r = h.exec(test::argv({"/usr/bin/env"}), o);
  ::unsetenv("SECRET_API_KEY");
  ::unsetenv("AWS_SECRET_ACCESS_KEY");
  ::unsetenv("LC_TESTVAR");

  REQUIRE_FALSE(r.ec);
  const auto& env = r.result.stdout_data;
  CHECK(env.find("SECRET_API_KEY") == std::string::npos);
  CHECK(env.find("sk-live") == std::string::npos);
  CHECK(env.find("AWS_SECRET_ACCESS_KEY") == std::string::npos);
  CHECK(env.find("\nLC_TESTVAR=kept\n") != std::string::npos);
  CHECK(env.find("EXPLICIT=given\n") != std::string::npos);
  CHECK(env.find("PATH=") != std::string::npos);
}

TEST_CASE("explicit entries override inherited ones, PATH has a default", "[env]") {
  const char* parent[] = {"PATH=/a", "HOME=/h", "TOKEN=x", nullptr};
  auto env = paddock::configuration::build_child_environment({"PATH", "HOME"}, {{"HOME", "/other"}},
                                                             parent);
  CHECK(env == std::vector<std::string>{"PATH=/a", "HOME=/other"});

  const char* bare[] = {nullptr};
  auto defaulted = paddock::configuration::build_child_environment({"PATH"}, {}, bare);
  CHECK(defaulted == std::vector<std::string>{"PATH=/usr/local/bin:/usr/bin:/bin"});
}

TEST_CASE("a malformed explicit variable is refused, naming it", "[env]") {
  const char* parent[] = {nullptr};
  CHECK_THROWS_WITH(paddock::configuration::build_child_environment({}, {{"A=B", "x"}}, parent),
                    Catch::Contains("'A=B'"));
  CHECK_THROWS_WITH(paddock::configuration::build_child_environment({}, {{"", "x"}}, parent),
                    Catch::Contains("invalid variable"));
}
