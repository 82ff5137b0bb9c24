// gnnjit: the command line. Each subcommand lives in its own file and adds
// itself to the app; errors map to exit codes in support/ExitCode, once.
#include "cli/ExportCommand.h"
#include "cli/InfoCommand.h"
#include "cli/LayersCommand.h"
#include "cli/RunCommand.h"
#include "cli/TuneCommand.h"
#include "support/ExitCode.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

int main(int argc, char **argv) {
  CLI::App app{"gnnjit: fused, autotuned GPU kernels for graph neural network layers", "gnnjit"};
  app.set_version_flag("--version", "gnnjit 0.1.0");
  app.require_subcommand(1);
  gnnjit::cli::addInfoCommand(app);
  gnnjit::cli::addLayersCommand(app);
  gnnjit::cli::addRunCommand(app);
  gnnjit::cli::addExportCommand(app);
  gnnjit::cli::addTuneCommand(app);

  if (argc == 1) {
    fmt::print("{}", app.help());
    return gnnjit::kExitOk;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    // CLI11 prints help (exit 0) or the problem; any problem is a usage error.
    return app.exit(e) == 0 ? gnnjit::kExitOk : gnnjit::kExitUsageError;
  } catch (...) {
    return gnnjit::reportCurrentException("gnnjit");
  }
  return gnnjit::kExitOk;
}
