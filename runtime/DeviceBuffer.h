// Device memory owned like a std::vector: allocated with cudaMalloc (or the
// allocator the process installed, e.g. a framework's caching allocator),
// freed when the owner goes away, moved never copied.
#pragma once

#include "support/Error.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace gnnjit::runtime {

/// Bytes held by all DeviceMemory objects of this process: now and the most
/// since the last resetDeviceMemoryPeak() (what --json reports as peak).
struct DeviceMemoryUse {
  size_t live = 0, peak = 0;
};
DeviceMemoryUse deviceMemoryUse();
void resetDeviceMemoryPeak();

/// Where device memory comes from instead of cudaMalloc: a framework's
/// allocator (PyTorch's caching allocator from Python), so that its memory
/// statistics count gnnjit's buffers and its pool reuses them. Each
/// allocation is returned to the allocator that made it.
class DeviceAllocator {
public:
  virtual ~DeviceAllocator() = default;
  /// `bytes` (> 0) of device memory on the current device; throws on failure.
  virtual void *allocate(size_t bytes) = 0;
  /// Returns what allocate gave; must not throw.
  virtual void release(void *data, size_t bytes) noexcept = 0;
};

/// While one lives, the allocations of its thread are for `stream`: an
/// allocator that orders its memory by stream (torch's) takes it from here
/// instead of asking which stream is current, once per allocation (a graph
/// built per training step makes dozens of allocations, each a call into
/// Python). Scopes nest; the innermost one holds.
class AllocationStream {
public:
  explicit AllocationStream(cudaStream_t stream);
  ~AllocationStream();
  AllocationStream(const AllocationStream &) = delete;
  AllocationStream &operator=(const AllocationStream &) = delete;

  /// The stream of this thread's innermost scope, or none.
  static std::optional<cudaStream_t> current();

private:
  std::optional<cudaStream_t> outer_;
};

/// Installs `allocator` for allocations made from now on (null: cudaMalloc
/// again); memory already allocated goes back where it came from.
void setDeviceAllocator(std::shared_ptr<DeviceAllocator> allocator);

/// Untyped device bytes. Every failure throws CudaError naming the call and size.
class DeviceMemory {
public:
  DeviceMemory() = default;
  explicit DeviceMemory(size_t bytes);
  ~DeviceMemory();
  DeviceMemory(DeviceMemory &&other) noexcept;
  DeviceMemory &operator=(DeviceMemory &&other) noexcept;
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;

  void *data() const { return data_; }
  size_t bytes() const { return bytes_; }

  /// Copies `bytes` at `offset`; synchronous when `stream` is null. The
  /// first synchronous write to memory from an installed allocator waits for
  /// the whole device first: a stream-ordered allocator (torch's) hands out
  /// memory whose last user may still be queued on another stream, which a
  /// copy on the legacy default stream is not ordered after.
  void copyFromHost(const void *host, size_t bytes, size_t offset = 0, cudaStream_t stream = nullptr);
  void copyToHost(void *host, size_t bytes, size_t offset = 0, cudaStream_t stream = nullptr) const;
  void fillZero(cudaStream_t stream = nullptr);

private:
  void checkRange(size_t bytes, size_t offset, const char *what) const;
  void awaitPreviousUsers();

  void *data_ = nullptr;
  size_t bytes_ = 0;
  std::shared_ptr<DeviceAllocator> allocator_; ///< null: cudaMalloc'd
  bool previousUsersPending_ = false;           ///< from an allocator, not yet synchronised with
};

/// A non-owning typed view, for passing a buffer on.
template <typename T> struct DeviceView {
  T *data = nullptr;
  size_t size = 0;
};

/// `size` values of T in device memory.
template <typename T> class DeviceBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "device buffers hold plain values");

public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t size) : memory_(byteCount(size)), size_(size) {}
  DeviceBuffer(DeviceBuffer &&other) noexcept
      : memory_(std::move(other.memory_)), size_(std::exchange(other.size_, 0)) {}
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept {
    memory_ = std::move(other.memory_);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }

  static DeviceBuffer fromHost(std::span<const T> host) {
    DeviceBuffer buffer(host.size());
    buffer.upload(host);
    return buffer;
  }

  T *data() const { return static_cast<T *>(memory_.data()); }
  size_t size() const { return size_; }
  size_t bytes() const { return memory_.bytes(); }
  bool empty() const { return size_ == 0; }
  DeviceView<T> view() const { return {data(), size_}; }

  /// Fills the whole buffer from `host`, which must have size() values.
  void upload(std::span<const T> host, cudaStream_t stream = nullptr) {
    checkSize(host.size(), "upload");
    memory_.copyFromHost(host.data(), host.size_bytes(), 0, stream);
  }
  /// Copies the whole buffer into `host`, which must have size() values.
  void download(std::span<T> host, cudaStream_t stream = nullptr) const {
    checkSize(host.size(), "download");
    memory_.copyToHost(host.data(), host.size_bytes(), 0, stream);
  }
  std::vector<T> download() const {
    std::vector<T> host(size_);
    download(std::span<T>(host));
    return host;
  }
  void fillZero(cudaStream_t stream = nullptr) { memory_.fillZero(stream); }

private:
  static size_t byteCount(size_t size) {
    if (size > std::numeric_limits<size_t>::max() / sizeof(T))
      throwUserError("a device buffer of {} values of {} bytes overflows size_t", size, sizeof(T));
    return size * sizeof(T);
  }
  void checkSize(size_t hostSize, const char *what) const {
    if (hostSize != size_)
      throwInternalError("device buffer {}: host has {} values, device {}", what, hostSize, size_);
  }

  DeviceMemory memory_;
  size_t size_ = 0;
};

} // namespace gnnjit::runtime
