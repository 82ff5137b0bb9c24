// Helpers shared by the file loader tests: checking UserError messages, and
// writing gzip files.
#pragma once

#include "support/Error.h"

#include <doctest/doctest.h>
#include <zlib.h>

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gnnjit::test {

/// The message of the UserError that `action` throws, or nothing when it
/// returns normally (any other exception propagates and fails the test).
template <typename F> std::optional<std::string> userErrorOf(F &&action) {
  try {
    action();
  } catch (const gnnjit::UserError &error) {
    return std::string(error.what());
  }
  return std::nullopt;
}

/// Writes `content` gzip-compressed to `file`.
inline std::filesystem::path writeGz(const std::filesystem::path &file, const std::string &content) {
  gzFile gz = gzopen(file.c_str(), "wb");
  if (!gz)
    throw std::runtime_error("gzopen failed");
  if (!content.empty() && gzwrite(gz, content.data(), static_cast<unsigned>(content.size())) <= 0)
    throw std::runtime_error("gzwrite failed");
  if (gzclose(gz) != Z_OK)
    throw std::runtime_error("gzclose failed");
  return file;
}

/// `text` with every "\n" made "\r\n".
inline std::string withCrlf(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n')
      out += '\r';
    out += c;
  }
  return out;
}

} // namespace gnnjit::test

/// Checks that `expr` throws a gnnjit::UserError whose message contains
/// every one of the following strings (file name, line, expectation...).
#define CHECK_USER_ERROR(expr, ...)                                                                                    \
  do {                                                                                                                 \
    const auto message_ = ::gnnjit::test::userErrorOf([&] { (void)(expr); });                                         \
    CHECK_MESSAGE(message_.has_value(), "no UserError from " #expr);                                                  \
    const std::vector<std::string> parts_{__VA_ARGS__};                                                              \
    if (message_)                                                                                                      \
      for (const std::string &part_ : parts_)                                                                          \
        CHECK_MESSAGE(message_->find(part_) != std::string::npos, "'" << part_ << "' is not in: " << *message_);      \
  } while (0)
