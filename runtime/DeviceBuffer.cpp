#include "runtime/DeviceBuffer.h"

#include "runtime/CudaCheck.h"

#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <utility>

namespace gnnjit::runtime {

namespace {
std::atomic<size_t> liveBytes{0}, peakBytes{0};

std::mutex allocatorMutex;
std::shared_ptr<DeviceAllocator> installedAllocator;

std::shared_ptr<DeviceAllocator> currentAllocator() {
  const std::lock_guard lock(allocatorMutex);
  return installedAllocator;
}

thread_local std::optional<cudaStream_t> allocationStream;

void countAllocation(size_t bytes) {
  const size_t now = liveBytes.fetch_add(bytes) + bytes;
  size_t peak = peakBytes.load();
  while (now > peak && !peakBytes.compare_exchange_weak(peak, now)) {
  }
}
} // namespace

void setDeviceAllocator(std::shared_ptr<DeviceAllocator> allocator) {
  const std::lock_guard lock(allocatorMutex);
  installedAllocator = std::move(allocator);
}

AllocationStream::AllocationStream(cudaStream_t stream) : outer_(allocationStream) { allocationStream = stream; }
AllocationStream::~AllocationStream() { allocationStream = outer_; }
std::optional<cudaStream_t> AllocationStream::current() { return allocationStream; }

DeviceMemoryUse deviceMemoryUse() { return {liveBytes.load(), peakBytes.load()}; }
void resetDeviceMemoryPeak() { peakBytes.store(liveBytes.load()); }

DeviceMemory::DeviceMemory(size_t bytes) : bytes_(bytes) {
  if (bytes == 0)
    return; // an empty buffer needs neither memory nor a device
  allocator_ = currentAllocator();
  if (allocator_) {
    data_ = allocator_->allocate(bytes);
    previousUsersPending_ = true;
  } else
    cudaCheck(cudaMalloc(&data_, bytes), fmt::format("cudaMalloc({} bytes)", bytes));
  countAllocation(bytes);
}

DeviceMemory::~DeviceMemory() {
  if (data_) {
    if (allocator_)
      allocator_->release(data_, bytes_);
    else
      (void)cudaFree(data_); // a destructor cannot report; a failed free leaks nothing we could reclaim
    liveBytes.fetch_sub(bytes_);
  }
}

DeviceMemory::DeviceMemory(DeviceMemory &&other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)),
      allocator_(std::move(other.allocator_)),
      previousUsersPending_(std::exchange(other.previousUsersPending_, false)) {}

DeviceMemory &DeviceMemory::operator=(DeviceMemory &&other) noexcept {
  if (this != &other) {
    DeviceMemory old(std::move(*this));
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    allocator_ = std::move(other.allocator_);
    previousUsersPending_ = std::exchange(other.previousUsersPending_, false);
  }
  return *this;
}

void DeviceMemory::checkRange(size_t bytes, size_t offset, const char *what) const {
  if (offset > bytes_ || bytes > bytes_ - offset)
    throwInternalError("{} of {} bytes at offset {} overruns a device buffer of {} bytes", what, bytes, offset,
                       bytes_);
}

void DeviceMemory::awaitPreviousUsers() {
  if (previousUsersPending_) {
    cudaCheck(cudaDeviceSynchronize(), "cudaDeviceSynchronize (before a first synchronous write)");
    previousUsersPending_ = false;
  }
}

void DeviceMemory::copyFromHost(const void *host, size_t bytes, size_t offset, cudaStream_t stream) {
  checkRange(bytes, offset, "upload");
  if (bytes == 0)
    return;
  if (!stream)
    awaitPreviousUsers();
  char *target = static_cast<char *>(data_) + offset;
  cudaCheck(stream ? cudaMemcpyAsync(target, host, bytes, cudaMemcpyHostToDevice, stream)
                   : cudaMemcpy(target, host, bytes, cudaMemcpyHostToDevice),
            fmt::format("cudaMemcpy(host to device, {} bytes)", bytes));
}

void DeviceMemory::copyToHost(void *host, size_t bytes, size_t offset, cudaStream_t stream) const {
  checkRange(bytes, offset, "download");
  if (bytes == 0)
    return;
  const char *source = static_cast<const char *>(data_) + offset;
  cudaCheck(stream ? cudaMemcpyAsync(host, source, bytes, cudaMemcpyDeviceToHost, stream)
                   : cudaMemcpy(host, source, bytes, cudaMemcpyDeviceToHost),
            fmt::format("cudaMemcpy(device to host, {} bytes)", bytes));
}

void DeviceMemory::fillZero(cudaStream_t stream) {
  if (bytes_ == 0)
    return;
  if (!stream)
    awaitPreviousUsers();
  cudaCheck(stream ? cudaMemsetAsync(data_, 0, bytes_, stream) : cudaMemset(data_, 0, bytes_),
            fmt::format("cudaMemset({} bytes)", bytes_));
}

} // namespace gnnjit::runtime
