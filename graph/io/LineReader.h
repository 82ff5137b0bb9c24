// Fast line-by-line reading of text inputs (plain or gzip), and the one error
// format every text parser shares: "FILE:LINE: expected X, found 'Y'".
#pragma once

#include "support/Progress.h"

#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

struct gzFile_s; // zlib's file handle

namespace gnnjit::graph {

/// The most nodes a loader accepts. Ids beyond 2^31 are real; a count beyond
/// this could not be stored as a CSR on any machine, so a larger id is a typo
/// or an id that was never renumbered, and is reported as such.
inline constexpr int64_t kMaxNodeCount = int64_t{1} << 40;

/// `text` made safe for an error message: at most 60 bytes (then "..."),
/// with non-printable bytes written as \xNN. No quotes are added.
std::string escapeForMessage(std::string_view text);

/// Splits `line` into fields separated by spaces and tabs, and with `commas`
/// also by one comma (",," gives an empty field, which no number parser
/// accepts). Stores at most out.size() fields and returns how many there
/// are, or out.size() + 1 when there are more.
size_t splitFields(std::string_view line, std::span<std::string_view> out, bool commas);

/// The first byte of `line` that is not a space or tab, or -1 for a blank
/// line: how parsers spot comments.
inline int firstNonBlank(std::string_view line) {
  for (char c : line)
    if (c != ' ' && c != '\t')
      return static_cast<unsigned char>(c);
  return -1;
}

class LineReader {
public:
  static constexpr size_t kChunkBytes = size_t{1} << 20;
  /// Longer lines are not text in any format read here: it is a binary file.
  static constexpr size_t kMaxLineBytes = size_t{64} << 20;

  /// Opens `file`, gzip or plain (told by its content, not its name).
  /// Throws UserError "cannot open FILE: reason". `chunkBytes` is only made
  /// small by tests, to exercise lines that span chunks.
  explicit LineReader(const std::filesystem::path &file, size_t chunkBytes = kChunkBytes);
  ~LineReader();
  LineReader(const LineReader &) = delete;
  LineReader &operator=(const LineReader &) = delete;

  /// The next line without its '\n' and a trailing '\r' (and, on line 1, a
  /// UTF-8 byte order mark); false at the end of the file. The view lasts
  /// until the next call. Throws UserError on a read error or corrupt gzip.
  bool next(std::string_view &line) {
    const void *nl = pos_ == end_ ? nullptr : std::memchr(pos_, '\n', static_cast<size_t>(end_ - pos_));
    if (!nl)
      return refill(line);
    return take(static_cast<const char *>(nl), line);
  }

  /// 1-based number of the line last returned by next(); 0 before the first.
  int64_t lineNumber() const { return lineNumber_; }
  /// The file as given (clipped when very long), for messages.
  const std::string &fileName() const { return name_; }
  /// Whether the file is gzip-compressed (known once a line was read).
  bool compressed() const;
  /// An upper bound on the uncompressed bytes: the file size, or for gzip
  /// the most that deflate can expand it to. Lets parsers reject a declared
  /// count that the file cannot hold before reserving memory for it.
  uint64_t maxTextBytes() const;

  /// Checks that `declared` items of at least `minBytesEach` fit in the
  /// file (else fails with "expected ..., found 'sizeLine'") and returns a
  /// count that is safe to reserve.
  size_t checkDeclaredCount(uint64_t declared, uint64_t minBytesEach, std::string_view what,
                            std::string_view sizeLine) const;

  /// Throws "FILE:LINE: expected EXPECTED, found 'FOUND'" for the current line.
  [[noreturn]] void fail(std::string_view expected, std::string_view found) const;
  /// Throws "FILE:LINE: expected EXPECTED, found end of file[ (NOTE)]", LINE
  /// being the one after the last.
  [[noreturn]] void failAtEnd(std::string_view expected, std::string_view note = {}) const;

  /// Parses a whole token as an integer in [min, max]; otherwise fails with
  /// "expected WHAT (an integer from MIN to MAX), found 'TOKEN'". Overflow is
  /// an error, never a wrap.
  int64_t parseInt(std::string_view token, std::string_view what, int64_t min, int64_t max) const {
    int64_t value = 0;
    const char *end = token.data() + token.size();
    const auto [stop, ec] = std::from_chars(token.data(), end, value);
    if (ec == std::errc() && stop == end && value >= min && value <= max) [[likely]]
      return value;
    failInt(token, what, min, max, ec == std::errc::result_out_of_range);
  }
  /// Parses a whole token as a finite number that fits a float.
  float parseFloat(std::string_view token, std::string_view what) const;

private:
  bool take(const char *newline, std::string_view &line) {
    const char *begin = pos_;
    const char *stop = newline;
    pos_ += newline + 1 - begin;
    if (stop != begin && stop[-1] == '\r')
      --stop;
    ++lineNumber_;
    line = std::string_view(begin, static_cast<size_t>(stop - begin));
    return true;
  }
  bool refill(std::string_view &line);
  size_t readMore(char *into, size_t bytes);
  [[noreturn]] void failInt(std::string_view token, std::string_view what, int64_t min, int64_t max,
                            bool overflow) const;

  std::string name_;
  gzFile_s *gz_ = nullptr;
  uint64_t fileBytes_ = 0;
  bool sizeKnown_ = false; // false for pipes and devices
  std::unique_ptr<char[]> buffer_;
  size_t capacity_ = 0;
  char *pos_ = nullptr;
  char *end_ = nullptr;
  bool eof_ = false;
  bool started_ = false;
  int64_t lineNumber_ = 0;
  std::optional<Progress> progress_;
};

} // namespace gnnjit::graph
