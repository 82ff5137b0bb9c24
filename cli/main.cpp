// gnnjit: the command line. Each subcommand lives in its own file and adds
// itself to the app; errors map to exit codes here, once.
#include "cli/ExportCommand.h"
#include "cli/InfoCommand.h"
#include "cli/LayersCommand.h"
#include "cli/RunCommand.h"
#include "support/Error.h"
#include "support/Message.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <new>

namespace {

enum ExitCode { kOk = 0, kUserError = 1, kUsageError = 2, kInternalError = 3 };

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"gnnjit: fused, autotuned GPU kernels for graph neural network layers", "gnnjit"};
  app.set_version_flag("--version", "gnnjit 0.1.0");
  app.require_subcommand(1);
  gnnjit::cli::addInfoCommand(app);
  gnnjit::cli::addLayersCommand(app);
  gnnjit::cli::addRunCommand(app);
  gnnjit::cli::addExportCommand(app);

  if (argc == 1) {
    fmt::print("{}", app.help());
    return kOk;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    // CLI11 prints help (exit 0) or the problem; any problem is a usage error.
    return app.exit(e) == 0 ? kOk : kUsageError;
  } catch (const gnnjit::UserError &e) {
    fmt::print(stderr, "gnnjit: error: {}\n", e.what());
    return kUserError;
  } catch (const gnnjit::InternalError &e) {
    fmt::print(stderr, "gnnjit: {}\n", e.what());
    return kInternalError;
  } catch (const gnnjit::LibraryError &e) {
    if (e.blame() == gnnjit::LibraryError::Blame::Machine) {
      fmt::print(stderr, "gnnjit: error: {}\n", e.what());
      return kUserError;
    }
    fmt::print(stderr, "gnnjit: internal error (a bug in gnnjit, please report it): {}\n", e.what());
    return kInternalError;
  } catch (const std::filesystem::filesystem_error &e) {
    // A path the user named that cannot be read (too long, a loop of links,
    // no permission) where no loader caught it first: theirs to fix.
    fmt::print(stderr, "gnnjit: error: cannot access '{}': {}\n", gnnjit::clipForMessage(e.path1().string()),
               e.code().message());
    return kUserError;
  } catch (const std::bad_alloc &) {
    fmt::print(stderr, "gnnjit: error: out of host memory (an allocation failed); this machine has too little "
                       "free memory for this run\n");
    return kUserError;
  } catch (const std::exception &e) {
    fmt::print(stderr, "gnnjit: internal error (a bug in gnnjit, please report it): {}\n", e.what());
    return kInternalError;
  }
  return kOk;
}
