#include "classifier/tree_parse.hpp"

#include <chrono>
#include <cstdint>

extern "C" const TSLanguage* tree_sitter_bash(void);
extern "C" const TSLanguage* tree_sitter_python(void);
extern "C" const TSLanguage* tree_sitter_javascript(void);

namespace paddock::classifier {
namespace {

constexpr std::chrono::microseconds kBudget{200'000};

struct ParserDelete {
  void operator()(TSParser* p) const noexcept { ts_parser_delete(p); }
};

TSParser* thread_parser(Grammar g) {
  thread_local std::unique_ptr<TSParser, ParserDelete> parsers[3];
  auto& slot = parsers[static_cast<int>(g)];
  if (!slot) {
    slot.reset(ts_parser_new());
    ts_parser_set_language(slot.get(), g == Grammar::bash     ? tree_sitter_bash()
                                       : g == Grammar::python ? tree_sitter_python()
                                                              : tree_sitter_javascript());
  }
  return slot.get();
}

}  // namespace

Tree parse_tree(Grammar grammar, std::string_view text) {
  TSParser* parser = thread_parser(grammar);
  const auto start = std::chrono::steady_clock::now();
  // libtree-sitter 0.20 (Debian 12) computes its deadline without carrying nanoseconds into
  // seconds (fixed upstream later: "possible rollover of nanoseconds in clock.h"): a parse
  // begun in the last 200 ms of a second gives up the moment the second turns, after a few
  // microseconds. So the budget is measured here too, and a parse that gave up early is run
  // again with what is left of it. The wrap happens once a second, so three tries are plenty.
  for (int attempt = 0; attempt < 3; ++attempt) {
    const auto left = kBudget - std::chrono::duration_cast<std::chrono::microseconds>(
                                    std::chrono::steady_clock::now() - start);
    if (left.count() <= 0) break;
    ts_parser_reset(parser);
    ts_parser_set_timeout_micros(parser, static_cast<std::uint64_t>(left.count()));
    Tree tree(ts_parser_parse_string(parser, nullptr, text.data(),
                                     static_cast<std::uint32_t>(text.size())));
    if (tree) return tree;
  }
  ts_parser_reset(parser);
  return nullptr;
}

}  // namespace paddock::classifier
