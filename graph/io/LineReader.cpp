#include "graph/io/LineReader.h"

#include "support/Error.h"
#include "support/Message.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <limits>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gnnjit::graph {

namespace {

constexpr size_t kMessageBytes = 60;
/// zlib's own read-ahead; larger than its 8 KiB default so plain files are
/// read in few system calls.
constexpr unsigned kZlibBuffer = 256 * 1024;
constexpr unsigned kMinZlibBuffer = 8 * 1024; // zlib's default
/// The smallest chunk, however small the file says it is (files in /proc and
/// on some network file systems say 0 bytes).
constexpr size_t kMinChunkBytes = 64 * 1024;
/// Deflate expands its input at most about 1032 times.
constexpr uint64_t kMaxDeflateRatio = 1032;

std::string errnoText(int err) { return std::error_code(err, std::generic_category()).message(); }

bool isBlank(char c) { return c == ' ' || c == '\t'; }

} // namespace

std::string escapeForMessage(std::string_view text) {
  std::string out;
  const size_t shown = std::min(text.size(), kMessageBytes);
  for (size_t i = 0; i < shown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\t')
      out += "\\t";
    else if (c == '\\')
      out += "\\\\";
    else if (c >= 0x20 && c < 0x7f)
      out += static_cast<char>(c);
    else
      out += fmt::format("\\x{:02x}", c);
  }
  if (text.size() > shown)
    out += "...";
  return out;
}

size_t splitFields(std::string_view line, std::span<std::string_view> out, bool commas) {
  const char *p = line.data();
  const char *end = p + line.size();
  size_t count = 0;
  auto add = [&](const char *begin, const char *stop) {
    if (count < out.size())
      out[count] = std::string_view(begin, static_cast<size_t>(stop - begin));
    return ++count <= out.size();
  };
  while (p != end && isBlank(*p))
    ++p;
  if (p == end)
    return 0;
  for (;;) {
    const char *begin = p;
    while (p != end && !isBlank(*p) && !(commas && *p == ','))
      ++p;
    if (!add(begin, p))
      return count;
    while (p != end && isBlank(*p))
      ++p;
    if (p == end)
      return count;
    if (commas && *p == ',') {
      ++p;
      while (p != end && isBlank(*p))
        ++p;
      if (p == end) { // a trailing comma leaves an empty last field
        add(p, p);
        return count;
      }
    }
  }
}

LineReader::LineReader(const std::filesystem::path &file, size_t chunkBytes)
    : name_(clipForMessage(file.string())) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throwUserError("cannot open {}: {}", name_, errnoText(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int err = errno;
    ::close(fd);
    throwUserError("cannot open {}: {}", name_, errnoText(err));
  }
  if (S_ISDIR(info.st_mode)) {
    ::close(fd);
    throwUserError("cannot open {}: it is a directory, not a file", name_);
  }
  sizeKnown_ = S_ISREG(info.st_mode);
  fileBytes_ = sizeKnown_ ? static_cast<uint64_t>(info.st_size) : 0;
  gz_ = gzdopen(fd, "rb");
  if (!gz_) {
    ::close(fd);
    throwUserError("cannot open {}: out of memory", name_);
  }
  // A small plain file gets small buffers: a dataset folder holds several
  // files of a few bytes, and each cost 1.8 MiB of buffers (ours and zlib's).
  // A gzip file keeps the large ones, so that zlib finds corrupt data or a
  // bad checksum before the parser sees the garbage it expands to.
  unsigned char magic[2] = {};
  const bool gzip = ::pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  const uint64_t sizeHint = sizeKnown_ && !gzip ? fileBytes_ + 1 : std::numeric_limits<uint64_t>::max();
  gzbuffer(gz_, static_cast<unsigned>(std::clamp<uint64_t>(sizeHint, kMinZlibBuffer, kZlibBuffer)));
  capacity_ = std::max<size_t>(16, std::min<uint64_t>(chunkBytes, std::max<uint64_t>(sizeHint, kMinChunkBytes)));
  buffer_ = std::make_unique_for_overwrite<char[]>(capacity_);
  pos_ = end_ = buffer_.get();
  progress_.emplace("reading " + file.filename().string(), fileBytes_);
}

LineReader::~LineReader() {
  progress_.reset();
  if (gz_)
    gzclose_r(gz_);
}

bool LineReader::compressed() const { return gzdirect(gz_) == 0; }

uint64_t LineReader::maxTextBytes() const {
  if (!sizeKnown_)
    return std::numeric_limits<uint64_t>::max();
  if (!compressed())
    return fileBytes_;
  return fileBytes_ > std::numeric_limits<uint64_t>::max() / kMaxDeflateRatio ? std::numeric_limits<uint64_t>::max()
                                                                               : fileBytes_ * kMaxDeflateRatio;
}

size_t LineReader::checkDeclaredCount(uint64_t declared, uint64_t minBytesEach, std::string_view what,
                                      std::string_view sizeLine) const {
  const uint64_t bound = maxTextBytes();
  // n items need at least n * minBytesEach - 1 bytes: the last may lack its newline.
  const uint64_t most = bound == std::numeric_limits<uint64_t>::max() ? bound : (bound + 1) / minBytesEach;
  if (declared > most)
    fail(fmt::format("a count of {} that the file can hold ({} {} need at least {} bytes each, but the "
                     "file {} {} bytes; is the size line wrong or the file truncated?)",
                     what, declared, what, minBytesEach, compressed() ? "expands to at most" : "has", bound),
         sizeLine);
  if (!compressed())
    return static_cast<size_t>(declared);
  // The uncompressed size is unknown: reserve for a typical ratio, grow beyond.
  return static_cast<size_t>(std::min<uint64_t>(declared, fileBytes_ * 8 / minBytesEach + 1024));
}

size_t LineReader::readMore(char *into, size_t bytes) {
  const auto ask = static_cast<unsigned>(std::min<size_t>(bytes, size_t{1} << 30));
  const int got = gzread(gz_, into, ask);
  int err = Z_OK;
  const char *message = gzerror(gz_, &err);
  if (got < 0 || err != Z_OK) {
    if (err == Z_ERRNO)
      throwUserError("cannot read {}: {}", name_, errnoText(errno));
    if (err == Z_MEM_ERROR)
      throwUserError("cannot read {}: out of memory", name_);
    // zlib prefixes its message with the descriptor it was given ("<fd:3>: ").
    std::string_view detail = message ? message : "unknown error";
    if (const size_t colon = detail.find(": "); detail.starts_with("<fd:") && colon != std::string_view::npos)
      detail.remove_prefix(colon + 2);
    throwUserError("{}: the compressed data is corrupt or truncated (zlib: {}); download or "
                   "decompress it again",
                   name_, detail);
  }
  progress_->update(static_cast<uint64_t>(gzoffset(gz_)));
  return static_cast<size_t>(got);
}

bool LineReader::refill(std::string_view &line) {
  for (;;) {
    if (eof_) {
      if (pos_ == end_)
        return false;
      // The last line has no newline.
      const char *begin = pos_;
      const char *stop = end_;
      pos_ = end_;
      if (stop[-1] == '\r')
        --stop;
      ++lineNumber_;
      line = std::string_view(begin, static_cast<size_t>(stop - begin));
      return true;
    }
    // Move the partial line to the front and read after it, growing the
    // buffer when the line fills it.
    const size_t kept = static_cast<size_t>(end_ - pos_);
    if (kept == capacity_) {
      if (capacity_ >= kMaxLineBytes) {
        ++lineNumber_;
        fail("a line of text shorter than 64 MiB (is this a binary file?)", std::string_view(pos_, kept));
      }
      auto bigger = std::make_unique_for_overwrite<char[]>(capacity_ * 2);
      std::memcpy(bigger.get(), pos_, kept);
      buffer_ = std::move(bigger);
      capacity_ *= 2;
    } else if (pos_ != buffer_.get()) {
      std::memmove(buffer_.get(), pos_, kept);
    }
    pos_ = buffer_.get();
    end_ = pos_ + kept;
    const size_t got = readMore(end_, capacity_ - kept);
    if (got == 0) {
      eof_ = true;
      continue;
    }
    const char *fresh = end_;
    end_ += got;
    if (!started_) {
      started_ = true;
      if (got >= 3 && std::memcmp(pos_, "\xEF\xBB\xBF", 3) == 0)
        pos_ += 3;
      fresh = pos_;
    }
    if (const void *nl = std::memchr(fresh, '\n', static_cast<size_t>(end_ - fresh)))
      return take(static_cast<const char *>(nl), line);
  }
}

void LineReader::fail(std::string_view expected, std::string_view found) const {
  throwUserError("{}:{}: expected {}, found '{}'", name_, lineNumber_, expected, escapeForMessage(found));
}

void LineReader::failAtEnd(std::string_view expected, std::string_view note) const {
  if (note.empty())
    throwUserError("{}:{}: expected {}, found end of file", name_, lineNumber_ + 1, expected);
  throwUserError("{}:{}: expected {}, found end of file ({})", name_, lineNumber_ + 1, expected, note);
}

void LineReader::failInt(std::string_view token, std::string_view what, int64_t min, int64_t max,
                         bool overflow) const {
  constexpr int64_t kLowest = std::numeric_limits<int64_t>::min();
  constexpr int64_t kHighest = std::numeric_limits<int64_t>::max();
  std::string range;
  if (min == kLowest && max == kHighest)
    range = "a 64-bit integer";
  else if (max == kHighest)
    range = fmt::format("an integer of at least {}", min);
  else
    range = fmt::format("an integer from {} to {}", min, max);
  throwUserError("{}:{}: expected {} ({}), found '{}'{}", name_, lineNumber_, what, range, escapeForMessage(token),
                 overflow ? ", which does not fit in 64 bits" : "");
}

float LineReader::parseFloat(std::string_view token, std::string_view what) const {
  const char *begin = token.data();
  const char *end = begin + token.size();
  // from_chars rejects the leading '+' that some writers emit.
  if (end - begin >= 2 && *begin == '+' && begin[1] != '-')
    ++begin;
  double value = 0;
  const auto [stop, ec] = std::from_chars(begin, end, value);
  if (ec == std::errc() && stop == end && std::isfinite(value) && std::fabs(value) <= FLT_MAX) [[likely]]
    return static_cast<float>(value);
  fail(fmt::format("{} (a finite number within float range)", what), token);
}

} // namespace gnnjit::graph
