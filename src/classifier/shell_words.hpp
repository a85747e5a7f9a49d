// A shell word's value after quote removal: the escapes bash undoes outside quotes, inside
// double quotes and in $'...' (`r\m`, `"\$"`, `$'\x72m'` are all plain text by then).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace paddock::classifier {

// Inside double quotes a backslash escapes only $ ` " \ and a newline.
std::string unescape_double_quoted(std::string_view s);
// Outside quotes a backslash escapes any character (`r\m` is `rm`).
std::string unescape_bare(std::string_view s);
// $'...' with bash's escapes decoded (`$'\x72m'` is `rm`); the quotes may be included.
std::string decode_ansi_c(std::string_view s);

// Backslash escapes as $'...', `echo -e` or printf's format decode them (\n, \t, \x2f, octal);
// nullopt where echo/printf would do what is not modelled (\c stops output, \u).
enum class Escapes { ansi_c, echo, printf };
std::optional<std::string> decode_escapes(std::string_view s, Escapes dialect);

}  // namespace paddock::classifier
