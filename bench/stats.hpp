// Median, p99 and mean of a sample, shared by the bench programs.
#pragma once

#include <algorithm>
#include <numeric>
#include <vector>

namespace bench {

struct Stats {
  double median, p99, mean;
};

inline Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  return {v[v.size() / 2], v[std::min(v.size() - 1, v.size() * 99 / 100)], mean};
}

}  // namespace bench
