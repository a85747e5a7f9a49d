// Programs that run code given to them as text: awk (system(), pipes to and from commands),
// sed (the `e` command and `s///e`, `w FILE`), make (recipes and $(shell ...) of --eval or a
// makefile on stdin), perl and ruby (-e), python and node (-c/-e, inline_code.hpp). Each
// reader says what the text would run or write; the classifier judges that like any command.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace paddock::classifier {

struct Finding {
  enum class Kind {
    script,         // a shell command line the code runs (`system("rm -rf ~")`)
    argv,           // a program and its arguments (`subprocess.run(["rm", "-rf", "/"])`)
    opaque,         // runs something built at run time: text names what
    fork_bomb,      // forks in an endless loop
    reverse_shell,  // hands a shell or its stdio to a socket
    removes,        // deletes text (a path), recursively
    writes,         // writes text (a path)
    remote,         // sends data to another host (an upload, a POST)
  };
  Kind kind;
  std::string text;
  std::vector<std::string> argv = {};
};
using Findings = std::vector<Finding>;

Findings awk_program(std::string_view program);
Findings sed_script(std::string_view script);
// A makefile's text (--eval TEXT, `make -f -` with a heredoc): its recipes and $(shell ...).
Findings makefile_text(std::string_view text);
// perl -e / ruby -e: no grammar here, so words are matched on identifier boundaries, and a
// command is read only when it is one plain string literal.
Findings perl_or_ruby(std::string_view code);
// php -r, lua -e, Rscript -e, pwsh -c, osascript -e, tclsh: no reader of their own; a name
// that runs commands or evaluates code, on identifier boundaries, makes the code opaque.
Findings other_language(std::string_view code);

}  // namespace paddock::classifier
