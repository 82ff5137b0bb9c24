// A plain C table through which gnnjit's torch operator library
// (python/torch_ops) runs a layer runner that gnnjit._core made. The two
// libraries share no C++ types (the torch library is built against torch's
// headers, _core never is), so only pointers and integers cross: _core hands
// out the table's address (_core.runner_bridge()) and each runner's
// (CudaLayer.handle), and the torch library calls through them.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

/// What a failed call was, so the caller raises the matching error.
enum GnnjitBridgeStatus : int32_t {
  GNNJIT_BRIDGE_OK = 0,
  GNNJIT_BRIDGE_ERROR = 1,         ///< any gnnjit or CUDA error; the message says which
  GNNJIT_BRIDGE_OUT_OF_MEMORY = 2, ///< the allocator had no memory
};

/// Bumped whenever a member changes: the torch library refuses another.
constexpr uint32_t GNNJIT_RUNNER_BRIDGE_VERSION = 1;

struct GnnjitRunnerBridge {
  uint32_t version;
  /// CudaLayer.call of the runner at `runner`: the same flat layout and
  /// meaning. On failure writes a NUL-terminated message of at most
  /// `capacity` bytes into `message`. Takes the GIL itself (a runner's
  /// passes run one at a time, as from Python).
  int32_t (*call)(void *runner, int32_t backward, const int64_t *flat, size_t count, void *stream, uint64_t seed,
                  int32_t backwardFollows, char *message, size_t capacity);
  /// Keeps the Python object `owner` (the runner's CudaLayer) alive until the
  /// matching release; both take the GIL themselves.
  void (*retain)(void *owner);
  void (*release)(void *owner);
};

} // extern "C"
