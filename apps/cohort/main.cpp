// The cohort program: train, eval, info.
#include "cohort/cli.h"

int main(int argc, char** argv) { return cohort::app::run_cli(argc, argv); }
