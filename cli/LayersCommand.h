// `gnnjit layers [NAME...] [--json] [--dim F] [--heads H] [--print]`: the
// layer library — each layer's inputs (name, kind, where it is read, shape,
// dtype), parameters, outputs, formula, the PyG class it matches, what stays
// outside it, and its kernel family.
//
// Family: the lowering (lower::pipeline) does not exist yet, so no layer is
// classified; the command says "not yet classified" and prints the family
// the design expects as a hint. Shapes are those of the layer built with
// --dim/--heads (default 16 and 4; --heads applies to attention layers only).
//
// --json prints an array of objects: name, summary, pyg_class, family
// ("not yet classified"), family_hint, options, outside, hash, inputs and
// params ([{name, kind, read_at: ["src", "dst", ...], shape: [h, d],
// dtype}]), outputs ([{name, shape}]), built_with ({dim, heads}).
#pragma once

#include <CLI/CLI.hpp>

namespace gnnjit::cli {

void addLayersCommand(CLI::App &app);

} // namespace gnnjit::cli
