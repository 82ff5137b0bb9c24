// Which heavy-row splits a new graph built on the device will be asked for:
// those asked of the last few graphs built there. A layer's plan asks every
// graph of one shape class for the same splits, so with a new graph each
// training step the build can make them inside its own synchronisation, and
// the layer's first pass on the graph needs none of its own
// (DeviceGraph::prepareSegments). A split forecast wrongly costs a few small
// launches; one not forecast costs the synchronisation it always did.
#pragma once

#include "exec/DeviceGraph.h"

#include <cstdint>
#include <vector>

namespace gnnjit::exec::split_forecast {

/// Graphs whose asks a forecast counts: the latest this many.
constexpr uint64_t kWindow = 8;

/// A number for a new graph built on the device, above every earlier one's.
uint64_t newGraph();
/// Notes that graph `graph` (newGraph's number) was asked for `keys`.
void noteAsked(uint64_t graph, const std::vector<SegmentKey> &keys);
/// The splits asked of any of the latest kWindow graphs, for a graph that
/// newGraph just numbered.
std::vector<SegmentKey> forecast();
/// Forgets every ask (for tests that count splits).
void forget();

} // namespace gnnjit::exec::split_forecast
