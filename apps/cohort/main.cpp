// The cohort program: train, eval, predict, generate, info, launch (app/cli.cpp).
#include "app/cli.h"

int main(int argc, char** argv) { return cohort::app::run_cli(argc, argv); }
