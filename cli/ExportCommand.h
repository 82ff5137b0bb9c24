// `gnnjit export --layer NAME [layer options] --out DIR [--arch sm_90]
//                [--index int32|int64] [--weighted] [--max-degree N]
//                [--variant auto|generated|cusparse] [--unaligned]
//                [--backward | --no-backward]`
//
// Writes the kernels gnnjit would generate for a library layer, without a
// graph and without a GPU: the layer is lowered (lower::lowerLayer), its
// forward and (unless --no-backward) backward passes are planned
// (exec::planProgram) for the graph facts given on the command line, and DIR
// (created if missing) receives
//   <module>.cu          each generated module's source, exactly as NVRTC
//                        sees it (provenance header included);
//   gnnjit/<name>.cuh    the device helper headers the sources include, so
//                        `nvcc -c -arch=sm_90 -I DIR DIR/<module>.cu` compiles
//                        any .cu on its own;
//   <module>.ptx         NVRTC's PTX of each module for --arch;
//   plan.json            what runs, in order, per pass (steps, targets,
//                        aggregate buffers, describe), and per module its
//                        file, PTX, SHA-256 of the source and, per kernel, the
//                        entry, block size, parameters (what the runner binds
//                        to each) and the launch-grid rule the runner uses.
//
// Graph facts: --index (CSR index type), --weighted (the graph has edge
// weights; gcn and graphconv then multiply messages by them, as `run
// --weighted`), --max-degree (the row degree the tuning rule sees, as both the
// median and the maximum: above its heavy-row threshold, 256 with a warp per
// row, the SpMM modules get segment and combine entries), --unaligned (node
// inputs whose rows do not allow 16-byte vector loads).
//
// Layers of families without generated kernels (reduction, attention) are
// refused with the UserError planProgram gives, before anything is written.
#pragma once

#include <CLI/CLI.hpp>

namespace gnnjit::cli {

void addExportCommand(CLI::App &app);

} // namespace gnnjit::cli
