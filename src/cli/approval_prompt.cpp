#include "cli/approval_prompt.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "cli/terminal.hpp"
#include "paddock/classifier.hpp"

namespace paddock::cli {

CommandApprovalCallback approval_for_cli(bool yes) {
  if (yes) {
    return [](const CommandApprovalRequest& r, std::function<void(Approval)> respond) {
      say("approved by --yes: " + r.command + " (rule " + r.rule + ": " + r.reason + ")");
      respond(Approval::approve);
    };
  }
  // The question goes to the terminal itself, not to stdin/stderr (either may be a pipe);
  // asked only when our stdin is that terminal, so a script's paddock never waits on a
  // prompt nobody sees.
  if (::isatty(STDIN_FILENO) == 0) return {};
  return [](const CommandApprovalRequest& r, std::function<void(Approval)> respond) {
    const int tty = ::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
    if (tty < 0) return respond(Approval::deny);
    const std::string question = "paddock: " + terminal_safe(r.command) + "\n  needs approval (" +
                                 r.rule + ": " + terminal_safe(r.reason) + "). Run it? [y/N] ";
    (void)!::write(tty, question.data(), question.size());
    std::string answer;
    char ch;
    while (::read(tty, &ch, 1) == 1 && ch != '\n') answer += ch;
    ::close(tty);
    respond(answer == "y" || answer == "Y" || answer == "yes" ? Approval::approve : Approval::deny);
  };
}

std::string unasked_approval_text(const std::string& rule, const std::string& reason) {
  return "needs approval (rule " + rule + ": " + reason +
         "); --yes approves it, or run paddock with a terminal on stdin to be asked";
}

}  // namespace paddock::cli
