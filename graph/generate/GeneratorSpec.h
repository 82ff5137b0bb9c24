// Generator specs as the CLI takes them: "rmat:scale=20,ef=16,seed=0",
// "grid:side=1024", "er:n=100000,deg=100,seed=0", "sbm:...", "ba:...".
#pragma once

#include "graph/EdgeList.h"

#include <string>
#include <string_view>

namespace gnnjit::graph {

/// Whether `text` names a generator ("rmat:", "grid:", "er:", "sbm:", "ba:",
/// or the bare name for its defaults).
bool isGeneratorSpec(std::string_view text);

/// Parses and runs a spec. Unknown generators, unknown or repeated keys and
/// bad values throw UserError listing the accepted keys and their defaults.
EdgeList generateFromSpec(std::string_view spec);

/// One line per generator: its keys and defaults (for --help and errors).
std::string generatorHelp();

} // namespace gnnjit::graph
