// A plain C table through which gnnjit._core takes device memory from
// torch's caching allocator without Python: gnnjit's torch operator library
// (python/torch_ops, linked with torch) fills it, and _core calls it where
// it would otherwise call torch's Python allocator functions (a GIL, two
// Python calls and a cast each: a graph built per training step makes some
// 25 allocations and as many frees). As with RunnerBridge.h, only pointers
// and integers cross between the two libraries.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

/// Bumped whenever a member changes: _core refuses a table of another.
constexpr uint32_t GNNJIT_ALLOCATOR_BRIDGE_VERSION = 1;

struct GnnjitAllocatorBridge {
  uint32_t version;
  /// `bytes` (> 0) on the current device, ordered on `stream` (null: the
  /// device's current torch stream); null where torch's allocator refused
  /// (no memory, or any other error: the caller asks again through Python,
  /// which raises torch's own error).
  void *(*allocate)(size_t bytes, void *stream);
  /// Returns what allocate gave, or any other pointer from torch's caching
  /// allocator; never throws.
  void (*release)(void *data);
};

} // extern "C"
