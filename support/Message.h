// Text the user gave, made fit for an error message.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace gnnjit {

/// `text` as it is when it has at most `max` bytes; otherwise its start and
/// end around "...", with the full length, so a 5000-byte path does not fill
/// the terminal but stays recognisable.
inline std::string clipForMessage(std::string_view text, size_t max = 160) {
  if (text.size() <= max)
    return std::string(text);
  const size_t head = max * 2 / 3, tail = max - head;
  return fmt::format("{}...{} ({} bytes)", text.substr(0, head), text.substr(text.size() - tail), text.size());
}

} // namespace gnnjit
