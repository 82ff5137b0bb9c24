// A device build captured once as a CUDA graph and replayed for later
// graphs of the same sizes and options (a training loop that drops a fixed
// share of its edges each step, a sampler of fixed-size blocks). On small
// graphs a build's time is host time: some 50 runtime calls (CUB's sorts
// and scans, the build's kernels, memsets) and two dozen allocations. A
// replay is one graph launch, the copies in and out that it holds updated to
// this graph's arrays, and one allocation per array the graph keeps.
//
// What a replay keeps fixed is exactly what the build decides from sizes
// and options alone (exec/DeviceBuilder.h): the node and edge counts, the
// edge id type, whether there are weights, the self-loop mode, the index
// type, the added loops' weight and the forecast splits. The captured graph
// reads the caller's edges through copy nodes into its own memory, and
// writes every array the graph keeps through copy nodes into fresh memory
// from the installed allocator, so each built graph owns its arrays as a
// direct build's does, and the results are the same bit for bit.
//
// The captured graph's temporaries are CUDA graph memory (its own
// allocation nodes, reserved at its peak while it is held), not the
// installed allocator's: at most kHeld graphs are held, each for a build of
// at most kMaxCandidates candidates.
#pragma once

#include "exec/DeviceBuild.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace gnnjit::exec::captured_build {

/// When a build is captured: never; when the same sizes and options come
/// a second time in a row of kSightings (the default); or every time (tests).
enum class Policy { Never, OnRepeat, Always };

/// Builds of more candidates than this (edges, plus added loops) run
/// directly: their time is the GPU's, and their graph memory would be large.
constexpr int64_t kMaxCandidates = int64_t{1} << 22;
/// Captured builds held at once (the least recently used goes first).
constexpr size_t kHeld = 2;
/// Builds remembered for OnRepeat.
constexpr size_t kSightings = 8;

/// The policy: set here, else from GNNJIT_CAPTURED_BUILD (0: Never,
/// always: Always), else OnRepeat.
Policy policy();
void setPolicy(Policy policy);

/// The graph of `edges` from a captured build (captured now if the policy
/// says so), or null where the build is to run directly (policy, size, a
/// first sighting, or a capture that failed: it is not tried again for
/// those sizes). `splits` and `number` as exec::DeviceBuilder takes them.
/// Synchronises `stream` once, as a direct build does; a bad edge throws
/// the direct build's UserError.
std::unique_ptr<DeviceGraph> build(const DeviceEdges &edges, const graph::BuildOptions &options,
                                   cudaStream_t stream, const std::vector<SegmentKey> &splits, uint64_t number);

/// What has happened so far (tests and benchmarks).
struct Counts {
  size_t held = 0;
  uint64_t captures = 0, replays = 0, failures = 0;
};
Counts counts();
/// Drops every captured build and sighting, and gives the graph memory back.
void clear();

} // namespace gnnjit::exec::captured_build
