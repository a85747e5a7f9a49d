// Bytes a command wrote, carried through JSON without loss: JSON strings hold Unicode text,
// a command's output is arbitrary bytes. Text when the bytes are valid UTF-8, base64
// (RFC 4648, with padding) otherwise. The one home of these helpers.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace paddock {

// Strict UTF-8 (Unicode 15, table 3-7): no overlong forms, no surrogates (U+D800-U+DFFF), nothing
// above U+10FFFF, no truncated sequence at the end. The same bytes a JSON encoder would have to
// replace, so text that passes goes into JSON unchanged.
bool is_valid_utf8(std::string_view bytes) noexcept;

std::string base64_encode(std::string_view bytes);

// nullopt for anything that is not canonical padded base64 (wrong length, a character outside
// the alphabet, padding in the middle, non-zero bits in the last character before padding).
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace paddock
