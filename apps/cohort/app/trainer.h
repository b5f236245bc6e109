// `cohort train`: the training loop with progress, metrics, checkpoints, the report and resume.
#pragma once

#include "app/config.h"

namespace cohort::app {

// Trains as `config` says, writing into config.out: metrics.jsonl, checkpoints/, eval.json,
// samples.png and report.html. With config.resume set, `config` must already be the resumed run's
// (see resolve_resume). Returns the final test accuracy. Throws a cohort::Error on bad data, bad
// settings, an unwritable output directory or a non-finite loss (naming the step).
double train(const TrainConfig& config);

}  // namespace cohort::app
