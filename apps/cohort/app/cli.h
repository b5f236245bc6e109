// The command line of the cohort program: subcommands train, eval, info and launch.
#pragma once

namespace cohort::app {

// Parses argv and runs the chosen subcommand; returns the process exit code
// (0 success, 1 a runtime error, 2 bad usage). Errors are printed to stderr.
int run_cli(int argc, char** argv);

}  // namespace cohort::app
