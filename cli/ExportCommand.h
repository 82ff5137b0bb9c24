// `gnnjit export --layer NAME [layer options] --out DIR [--arch sm_90]
//                [--index int32|int64] [--weighted] [--median-degree N] [--max-degree N] [--local]
//                [--variant auto|generated|cusparse] [--unaligned] [--unfused-attention-backward]
//                [--backward | --no-backward]`
//
// Writes the kernels gnnjit would generate for a library layer, without a
// graph and without a GPU (autotune::exportKernels: the folder's contents are
// described in autotune/KernelExport.h): each module's .cu, the device headers
// under gnnjit/, NVRTC's .ptx, and plan.json.
//
// Graph facts: --index (CSR index type), --weighted (the graph has edge
// weights; gcn and graphconv then multiply messages by them, as `run
// --weighted`), --median-degree and --max-degree (the row lengths the tuning
// rule sees: above its heavy-row threshold the modules get segment and
// combine entries), --local (neighbour ids close together), --unaligned
// (node inputs whose rows do not allow 16-byte vector loads),
// --unfused-attention-backward (attention layers: the backward without
// shared edge loops, as `run --unfused-attention-backward`).
#pragma once

#include <CLI/CLI.hpp>

namespace gnnjit::cli {

void addExportCommand(CLI::App &app);

} // namespace gnnjit::cli
