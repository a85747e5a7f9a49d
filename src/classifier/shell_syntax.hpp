// A bash script as the classifier sees it: every simple command wherever it sits (lists,
// pipelines, subshells, $(...), backticks, process substitutions, if/for/while/case bodies,
// function bodies), with its words after quote removal, the redirects that apply to it (its
// own and every enclosing statement's), what feeds its stdin, and whether it runs in the
// background. Parsed with tree-sitter's bash grammar (tree-sitter-bash, fetched by .ci/setup):
// a real grammar instead of regular expressions, which every system paddock replaces got
// wrong somewhere (quoting, escapes, separators, heredocs).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace paddock::classifier {

// One part of a word: literal text, a variable's value (`$x`, `${x}`), or something only the
// run knows (`$(cmd)`, `${x:-y}`, `$1`). The classifier expands the variables it tracks.
struct Piece {
  enum class Kind { literal, variable, opaque } kind = Kind::literal;
  std::string text;     // literal: the text; variable: the name; opaque: the source text
  bool quoted = false;  // inside "..." (an expanded value is not split into words)
  // A variable's: what bash uses when it is unset or empty (`${x:-/tmp}`): a literal, or
  // another variable (`${x:-$HOME}`).
  std::optional<std::string> fallback = std::nullopt;
};

struct Word {
  std::string text;      // the value after quote removal; for a dynamic word, its source text
  bool dynamic = false;  // has an expansion or substitution: its value is known only at run time
  bool ifs = false;      // expands $IFS (word splitting used to hide a command)
  std::vector<Piece> pieces;  // the parts, in order (empty: one literal, `text`)
  bool glob = false;          // an unquoted *, ? or [: bash replaces it with the files it matches
};

// NAME=VALUE, as a statement (`x=1`), after export/declare/local/readonly (`export x=1`), or
// a for loop's variable (one per value; `unknown` when the values are the positional ones).
struct Assignment {
  std::string name;
  Word value;
  bool unknown = false;
  std::vector<Word> elements = {};  // an array's (`a=(x y)`): each a value of `a`
};

struct Redirect {
  std::string op;  // ">", ">>", "<", "&>", ">&", "<>", ">|", "&>>"
  Word target;
};

struct SimpleCommand {
  std::vector<Word> words;               // argv; prefix assignments are not in it
  std::vector<std::string> assignments;  // NAME=value prefixes (`LD_PRELOAD=x ls`), as written
  // Variables this statement sets for the rest of the script (`x=1`, `export x=1`, a for
  // loop); a statement with no words and only these is `x=1` (a loop: words empty too).
  std::vector<Assignment> sets;
  // Text bash evaluates as arithmetic when this command runs ($((...)), ((...)), the operands
  // of [[ -eq ]] ...): a variable named there is expanded, and evaluated again, recursively;
  // `a[$(cmd)]` in it runs cmd.
  std::vector<Word> arithmetic;
  std::vector<Redirect> redirects;
  // A heredoc or here-string given to this command, or the text an earlier stage of its
  // pipeline prints from its arguments (`echo ... | sh`): what a shell reading stdin runs.
  std::vector<Word> stdin_texts;
  std::vector<std::string> upstream;  // program names of the earlier stages of its pipeline
  bool piped_in = false;
  bool background = false;
  std::string source;  // the command's own text in the script
};

struct ParsedScript {
  std::vector<SimpleCommand> commands;
  // Why the script cannot be fully seen through (a parse error, nesting past the bound, a
  // parse that took too long); empty when it was.
  std::vector<std::string> problems;
  // Set when the script has a syntax error bash is known to stop at (a line that starts with
  // `&&`): the commands before it are all that runs, and all that is kept.
  std::string stops_at;
  // Functions that call themselves, directly or through others, in a call that forks (in the
  // background or in a pipeline: `:(){ :|:& };:`, `f(){ g|g& }; g(){ f|f& }`): the shape of
  // a fork bomb. Plain recursion (a directory walk) is not.
  std::vector<std::string> self_calling_functions;
};

// Parses `script`; never throws for any input (problems says what could not be analysed).
ParsedScript parse_script(std::string_view script);

// The command substitutions in text the grammar leaves unparsed (`$(...)` balanced, and
// `...`), in order: what bash runs when it expands that text.
std::vector<std::string_view> command_substitutions(std::string_view text);

// An unquoted `*`, `?` or `[...]` in a word's source text: bash expands it to the files it
// matches. A `[` with no `]` after it is itself (`/usr/bin/[`).
bool unquoted_glob(std::string_view raw);

}  // namespace paddock::classifier
