// paddock's own lines on stderr ("paddock: ..."), safe to show on a terminal.
#pragma once

#include <string>
#include <string_view>

namespace paddock::cli {

// paddock's own lines carry text a command controls (paths it created, its program name):
// terminal control bytes in them could rewrite or hide the line, or talk to the terminal.
// C0 controls, DEL and the C1 controls (raw 0x80-0x9f bytes outside UTF-8, and U+0080-U+009F
// encoded, which UTF-8 terminals read as CSI and friends) are written as \xNN.
std::string terminal_safe(std::string_view text);

// One line "paddock: <line>" on stderr, control bytes escaped. On a terminal, the command may
// have left attributes set (invisible text, the line-drawing character set): they are reset
// first, so the line stays readable.
void say(const std::string& line);

}  // namespace paddock::cli
