// Waiting for something the test cannot be told about: polled with a deadline, never a fixed
// sleep (a loaded CI machine is slow, an idle one should not wait).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

namespace test {

inline bool eventually(const std::function<bool()>& what,
                       std::chrono::seconds within = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (!what()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// Some entry named `name` anywhere below `dir` (a change set's layer, say).
inline bool file_below(const std::string& dir, const std::string& name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().filename() == name) return true;
  }
  return false;
}

}  // namespace test
