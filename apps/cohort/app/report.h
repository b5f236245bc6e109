// The training report: one self-contained HTML page per run, made from the files the trainer leaves
// in its output directory. It opens offline: no script, no external URL, charts as inline SVG, the
// sample picture as a data: URI.
#pragma once

#include <string>

namespace cohort::app {

// Reads <out_dir>/metrics.jsonl and writes <out_dir>/report.html atomically (io::write_file).
//
// metrics.jsonl holds one JSON object per line, by "kind":
//   {"kind":"config", ...any key/values of the run: model, dataset, epochs, lr, ...}
//   {"kind":"step","epoch":0,"step":100,"loss":0.53,"lr":0.01,"images_per_s":5230.1,"elapsed_s":12.3}
//   {"kind":"epoch","epoch":0,"step":938,"train_loss":0.61,"train_acc":0.781,"test_loss":0.45,
//    "test_acc":0.838,"lr":0.01,"seconds":40.2,"images_per_s":1490.0}
//   {"kind":"failure","epoch":0,"step":12,"error":"cohort train: the loss is nan at step 13 ..."}
//     (training stopped: the page says why at the top)
// "step" counts optimizer steps from the start of training; "epoch" counts from 0 (the page shows
// epoch + 1, as training logs do); accuracies are fractions. A missing or null number is shown as
// absent; unknown kinds and keys are ignored; a later config line (a resumed run) overrides earlier
// keys. The trainer may still be appending, so a last line without its newline that does not parse is
// ignored; any other line that is not a JSON object, or a number field that is not a number, throws
// a cohort::Error "write_report: <file>, line <n>: ...". A missing metrics.jsonl throws too.
//
// Optional inputs: <out_dir>/samples.png is embedded; <out_dir>/eval.json (keys "accuracy", "loss",
// "count", "classes", "per_class": [{"name", "accuracy", "count"}], "confusion": [[n]]) adds the
// per-class accuracy and the confusion matrix; a malformed eval.json throws naming it.
//
// in_progress: the run goes on (it rewrites the page after each epoch), so the page reloads itself
// every kRefreshSeconds; the last report of a run, finished, failed or interrupted, does not.
inline constexpr int kRefreshSeconds = 60;
void write_report(const std::string& out_dir, bool in_progress = false);

}  // namespace cohort::app
