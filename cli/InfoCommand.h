// `gnnjit info GRAPH [--json]`: what a graph is made of.
#pragma once

#include <CLI/CLI.hpp>

namespace gnnjit::cli {

void addInfoCommand(CLI::App &app);

} // namespace gnnjit::cli
