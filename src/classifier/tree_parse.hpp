// One home for tree-sitter parses: this thread's parser per grammar, a time budget per parse.
#pragma once

#include <tree_sitter/api.h>

#include <memory>
#include <string_view>

namespace paddock::classifier {

enum class Grammar { bash, python, javascript };

struct TreeDelete {
  void operator()(TSTree* t) const noexcept { ts_tree_delete(t); }
};
using Tree = std::unique_ptr<TSTree, TreeDelete>;

// The tree of `text`, or null when the parse took longer than the analysis allows (200 ms of
// wall time).
Tree parse_tree(Grammar grammar, std::string_view text);

}  // namespace paddock::classifier
