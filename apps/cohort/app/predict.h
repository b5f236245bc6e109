// `cohort predict`: a trained checkpoint's top classes for new inputs (images, or the rows of CSV
// files for a model trained on a table), as text or JSON on stdout.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace cohort::app {

struct PredictOptions {
  std::string checkpoint;           // a checkpoint file or a run directory (its newest checkpoint)
  std::vector<std::string> inputs;  // JPEG/PNG files (resized to the model's size), or CSV files with the
                                    // training table's feature columns
  int64_t top_k = 3;                // classes per input (at most the number of classes)
  bool json = false;
  int64_t batch_size = 64;
  int threads = 0;                  // 0: one per core
  std::string data_dir;             // where the training data is now, if it moved (class names, table statistics)
};

// Prints, per input, "<input>: <class> <p>%, <class> <p>%, ..." (most probable first), or with json
// one object {"checkpoint", "predictions": [{"input", "top": [{"class", "index", "probability"}]}]}.
// A CSV row's input is "<file>:<row>" (the header is row 1). Throws a UsageError for bad options and a
// cohort::Error naming the file for an input that cannot be read or does not fit the model.
int run_predict(const PredictOptions& options, std::ostream& out);

}  // namespace cohort::app
