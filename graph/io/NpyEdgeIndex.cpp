#include "graph/io/NpyEdgeIndex.h"

#include "graph/Graph.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace gnnjit::graph {

namespace {

/// The .npy header (format 1.0): magic, version, little-endian uint16 header
/// length, then the dict text padded with spaces and ended by '\n' so that
/// the data starts at a multiple of 64 bytes, as NumPy writes it.
std::string npyHeader(std::string_view descr, std::string_view shape) {
  const std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shape);
  constexpr size_t kPrefix = 6 + 2 + 2; // magic, version, header length
  const size_t unpadded = kPrefix + dict.size() + 1;
  const size_t pad = (64 - unpadded % 64) % 64;
  const size_t headerLength = dict.size() + pad + 1;
  if (headerLength > 0xFFFF)
    throwInternalError(".npy header of {} bytes does not fit format 1.0", headerLength);
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(headerLength & 0xFF);
  out += static_cast<char>(headerLength >> 8);
  out += dict;
  out.append(pad, ' ');
  out += '\n';
  return out;
}

/// A file written through a temp file beside `path` and renamed over it on
/// commit(); the temp file is removed when the writer goes away uncommitted.
/// Every failure throws UserError naming `path` and saying what `what` is.
class AtomicFile {
public:
  AtomicFile(const std::filesystem::path &path, std::string_view what) : path_(path), what_(what) {
    // pid + counter: unique among processes and among threads of this one.
    static std::atomic<uint64_t> counter{0};
    temp_ = path;
    temp_ += fmt::format(".tmp-{}-{}", ::getpid(), counter++);
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      const int error = errno;
      fail(error, fmt::format("cannot create the temp file {}", temp_.string()));
    }
  }
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;
  ~AtomicFile() {
    if (fd_ >= 0)
      ::close(fd_);
    if (!committed_ && !temp_.empty())
      ::unlink(temp_.c_str());
  }

  void put(std::string_view bytes) {
    for (char c : bytes) {
      reserve(1);
      buffer_[used_++] = static_cast<uint8_t>(c);
    }
  }
  /// Little-endian whatever the host's byte order.
  void putInt64(int64_t value) { putLittleEndian(static_cast<uint64_t>(value), 8); }
  void putFloat32(float value) {
    uint32_t bits;
    static_assert(sizeof bits == sizeof value);
    std::memcpy(&bits, &value, sizeof bits);
    putLittleEndian(bits, 4);
  }

  void commit() {
    flush();
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) {
      const int error = errno;
      fail(error, fmt::format("cannot close {}", temp_.string()));
    }
    if (std::rename(temp_.c_str(), path_.c_str()) != 0) {
      const int error = errno;
      fail(error, fmt::format("cannot rename {} to it", temp_.string()));
    }
    committed_ = true;
  }

private:
  static constexpr size_t kBufferBytes = size_t{1} << 20;

  void putLittleEndian(uint64_t bits, size_t bytes) {
    reserve(bytes);
    for (size_t b = 0; b < bytes; ++b)
      buffer_[used_++] = static_cast<uint8_t>(bits >> (8 * b));
  }

  void reserve(size_t bytes) {
    if (used_ + bytes > buffer_.size())
      flush();
  }

  void flush() {
    for (size_t done = 0; done < used_;) {
      const ssize_t n = ::write(fd_, buffer_.data() + done, used_ - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        const int error = n < 0 ? errno : 0;
        fail(error, fmt::format("cannot write {}", temp_.string()));
      }
      done += static_cast<size_t>(n);
    }
    used_ = 0;
  }

  /// `error` is the errno of the failed call (read before anything else
  /// can change it), or 0 when there is none.
  [[noreturn]] void fail(int error, const std::string &detail) const {
    throwUserError("cannot write {} to {}: {}: {}", what_, path_.string(), detail,
                   error ? std::strerror(error) : "unknown error");
  }

  std::filesystem::path path_;
  std::string what_;
  std::filesystem::path temp_;
  int fd_ = -1;
  bool committed_ = false;
  std::vector<uint8_t> buffer_ = std::vector<uint8_t>(kBufferBytes);
  size_t used_ = 0; ///< bytes of buffer_ not yet written
};

} // namespace

void writeEdgeIndexNpy(const Graph &graph, const std::filesystem::path &path) {
  const int64_t m = graph.numEdges();
  AtomicFile file(path, "the edge index");
  file.put(npyHeader("<i8", fmt::format("(2, {})", m)));
  graph.incoming().visit([&](const auto &a) {
    // Row 0: the source of every edge, in incoming-CSR order.
    for (int64_t p = 0; p < m; ++p)
      file.putInt64(static_cast<int64_t>(a.indices[static_cast<size_t>(p)]));
    // Row 1: the destination, i.e. the CSR row each position lies in.
    const int64_t rows = static_cast<int64_t>(a.offsets.size()) - 1;
    for (int64_t i = 0; i < rows; ++i) {
      const auto begin = static_cast<int64_t>(a.offsets[static_cast<size_t>(i)]);
      const auto end = static_cast<int64_t>(a.offsets[static_cast<size_t>(i) + 1]);
      for (int64_t p = begin; p < end; ++p)
        file.putInt64(i);
    }
  });
  file.commit();
}

void writeEdgeWeightsNpy(const Graph &graph, const std::filesystem::path &path) {
  if (!graph.hasWeights())
    throwUserError("cannot write edge weights to {}: the graph{} has no edge weights", path.string(),
                   graph.name().empty() ? std::string() : " '" + graph.name() + "'");
  const std::vector<float> &weights = graph.incoming().weights();
  AtomicFile file(path, "the edge weights");
  file.put(npyHeader("<f4", fmt::format("({},)", weights.size())));
  for (float w : weights)
    file.putFloat32(w);
  file.commit();
}

} // namespace gnnjit::graph
