// Inline program text (python3 -c, a heredoc into python3, node -e), parsed with tree-sitter's
// Python and JavaScript grammars rather than matched as substrings: `sys.executable` is not
// exec, `pd.read_csv("evaluation.csv")` is not eval. What the code would run is read from its
// calls: a command given as a literal is judged like any command; one built at run time (a
// variable, a concatenation, an f-string, decoded bytes) is opaque; fork in a loop is a fork
// bomb; a socket handed to a shell is a reverse shell.
#pragma once

#include <string_view>

#include "classifier/code_runners.hpp"

namespace paddock::classifier {

Findings python_code(std::string_view code, int depth = 0);
Findings javascript_code(std::string_view code, int depth = 0);

}  // namespace paddock::classifier
