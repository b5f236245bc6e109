// The command line of the cohort program (CLI11).
#include "cohort/cli.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "cohort/core/error.h"

namespace cohort::app {

int run_cli(int argc, char** argv) {
  CLI::App app{"cohort: train and evaluate neural networks on the CPU"};
  app.require_subcommand(1);
  app.add_subcommand("info", "Print the version, build options, devices and threads");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return 0;
}

}  // namespace cohort::app
