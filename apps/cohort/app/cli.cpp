// The command line of the cohort program (CLI11): train, eval, predict, generate, export, info, launch.
#include "app/cli.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <nlohmann/json.hpp>

#include "cohort/core/cpu_budget.h"
#include "cohort/core/device.h"
#include "cohort/core/error.h"
#include "cohort/core/threads.h"
#include "cohort/data/dataloader.h"
#include "cohort/models/model.h"
#include "cohort/ops/backend.h"

#include "app/config.h"
#include "app/data_setup.h"
#include "app/evaluate.h"
#include "app/export.h"
#include "app/flag_check.h"
#include "app/interrupt.h"
#include "app/generate.h"
#include "app/launch.h"
#include "app/predict.h"
#include "app/ranks.h"
#include "app/run_checkpoint.h"
#include "app/run_dir.h"
#include "app/step_profiler.h"
#include "app/trainer.h"

namespace cohort::app {

namespace {

// CLI11 parses "-1" into an unsigned flag as 2^64 - 1 (strtoull's wrap-around): an unsigned flag takes
// digits only.
const CLI::Validator kUnsigned(
    [](const std::string& v) {
      // Digits only (no sign: CLI11 would wrap -1 to 2^64-1), and no more than 2^64-1 (it would clamp).
      const bool fits = !v.empty() && v.find_first_not_of("0123456789") == std::string::npos &&
                        (v.size() < 20 || (v.size() == 20 && v <= "18446744073709551615"));
      return fits ? std::string()
                 : "must be an integer from 0 to 18446744073709551615, got '" + v + "'";
    },
    "UINT");

// The flags `cohort train` understands; each names what it changes.
void add_train_flags(CLI::App& cmd, TrainConfig& c) {
  cmd.add_option("--model", c.model, "Network to train: " + join_names(models::names()))->capture_default_str();
  cmd.add_option("--dataset", c.dataset,
                 "Dataset: fashion-mnist, mnist, cifar10, synthetic; folder:DIR (your images, DIR/<class>/<image>), "
                 "csv:FILE (a table with a header row; with --target) or text:PATH (a text file or a directory of "
                 "them, for char-lstm)")
      ->capture_default_str();
  cmd.add_option("--data-dir", c.data_dir,
                 "Directory with the dataset's files (default: /usr/share/datasets/fashion-mnist for "
                 "fashion-mnist, /usr/share/datasets/mnist, data/cifar-10-batches-bin); for folder, csv and "
                 "text the path after the colon, which --data-dir can change on --resume");
  cmd.add_option("--val-dir", c.val_dir, "--dataset folder: the validation images (an ImageFolder tree)");
  cmd.add_option("--val-split", c.val_split,
                 "--dataset folder or csv: hold out this fraction of the data (shuffled by --seed) to test on "
                 "(csv: 0 = 0.2)")
      ->capture_default_str();
  cmd.add_option("--image-size", c.image_size, "--dataset folder: resize images to N x N (0: 64)")->capture_default_str();
  cmd.add_option("--target", c.target, "--dataset csv: the column to predict (a class per distinct value)");
  cmd.add_option("--seq-len", c.seq_len, "--dataset text: characters per training window")->capture_default_str();
  cmd.add_option("--epochs", c.epochs, "Passes over the training set")->capture_default_str();
  cmd.add_option("--batch-size", c.batch_size, "Images per optimizer step (per micro-batch with --accumulate)")
      ->capture_default_str();
  cmd.add_option("--lr", c.lr, "Learning rate (the peak rate for --scheduler onecycle)")->capture_default_str();
  cmd.add_option("--optimizer", c.optimizer, "Optimizer: " + join_names(kOptimizers))->capture_default_str();
  cmd.add_option("--momentum", c.momentum, "Momentum of sgd and rmsprop")->capture_default_str();
  cmd.add_option("--weight-decay", c.weight_decay, "L2 penalty (decoupled for adamw)")->capture_default_str();
  cmd.add_option("--clip-grad-norm", c.clip_grad_norm,
                 "Scale the gradients down before each update so that their total 2-norm is at most this (0: off); "
                 "the norm before clipping is logged as grad_norm")
      ->capture_default_str();
  cmd.add_option("--accumulate", c.accumulate,
                 "Micro-batches of --batch-size per optimizer step: their gradients add up, so a step sees a batch "
                 "of K x --batch-size (batch norm still normalises each micro-batch)")
      ->capture_default_str();
  cmd.add_option("--scheduler", c.scheduler,
                 "Learning-rate schedule: none; step (x0.1 at 1/2 and 3/4 of the epochs); cosine (to 0, per "
                 "epoch); onecycle (warm-up then anneal, per step); plateau (x0.1 once the test loss has not "
                 "improved for 2 epochs); cosine-restarts (cosine to 0 and back, in periods of 1, 2, 4, ... epochs, "
                 "per step)")
      ->capture_default_str();
  cmd.add_option("--warmup-steps", c.warmup_steps,
                 "Raise the lr linearly over the first N steps (step k at k/N of the schedule's rate), then follow "
                 "the schedule; 0: none")
      ->capture_default_str();
  cmd.add_option("--ema", c.ema,
                 "Keep an exponential moving average of the weights with this decay (e.g. 0.999; batch-norm "
                 "statistics averaged too), checkpointed; the evaluation, predict, generate and export use it; 0: off")
      ->capture_default_str();
  cmd.add_option("--precision", c.precision,
                 "Arithmetic of the forward pass and loss: f32; bf16 or f16 (autocast: matrix products and "
                 "convolutions in the narrow type, losses in float32, weights and optimizer state float32; f16 "
                 "adds dynamic loss scaling)")
      ->capture_default_str();
  cmd.add_flag("--checkpoint-activations", c.checkpoint_activations,
               "Recompute activations in backward instead of keeping them (less memory, about one more forward "
               "pass of compute): ResNets by block, char-transformer by attention and feed-forward step");
  cmd.add_option("--seed", c.seed, "Seed of the weights, the shuffling and the augmentation")
      ->capture_default_str()
      ->check(kUnsigned);
  cmd.add_option("--threads", c.threads, "Intra-op threads (0: one per core)")->capture_default_str();
  cmd.add_option("--devices", c.devices,
                 "Train with DataParallel over these CPU devices: a list (cpu:0,cpu:1) or a count (2); "
                 "the same results as one device up to float rounding")
      ->capture_default_str();
  cmd.add_option("--workers", c.workers, "Data-loading threads (0: load in the training thread)")
      ->capture_default_str();
  cmd.add_option("--limit", c.limit, "Use only the first N training and test images (0: all)")->capture_default_str();
  cmd.add_option("--out", c.out, "Directory for metrics.jsonl, checkpoints/, report.html, samples.png")
      ->capture_default_str();
  cmd.add_option("--resume", c.resume,
                 "Continue the run in this directory from its newest intact checkpoint (or from this checkpoint "
                 "file in its checkpoints/), with its settings (--epochs may be raised)");
  cmd.add_option("--init-from", c.init_from,
                 "Start from these weights: a PyTorch torch.save(model.state_dict()) file, or a cohort run "
                 "directory or checkpoint (tensors of another shape, such as a new classifier, keep their initial "
                 "values)");
  cmd.add_option("--freeze", c.freeze,
                 "Parameters not to train, by name: comma-separated globs, * any characters (dots too), ? one "
                 "(e.g. 'conv*,fc1.*'); they keep requires_grad false and are not given to the optimizer");
  cmd.add_flag("--overwrite", c.overwrite,
               "Start a new run in a non-empty --out: first delete the files a run writes there (metrics.jsonl, "
               "checkpoints/, report.html, samples.png, eval.json, run.json); other files stay");
  cmd.add_option("--checkpoint-every", c.checkpoint_every,
                 "Also checkpoint every N steps (0: only at the end of each epoch)")
      ->capture_default_str();
  cmd.add_option("--keep-checkpoints", c.keep_checkpoints, "How many checkpoints to keep")->capture_default_str();
  cmd.add_option("--log-every", c.log_every, "Steps between loss records in metrics.jsonl")->capture_default_str();
  cmd.add_option("--tensorboard", c.tensorboard,
                 "Also write what metrics.jsonl records, and the samples image, as TensorBoard event files into "
                 "this directory (one file per run; view with tensorboard --logdir DIR)");
  cmd.add_option("--profile", c.profile,
                 "Profile the training steps FIRST:LAST (counted from 1, e.g. 10:20; or one step N): writes "
                 "profile.json (a Chrome trace: chrome://tracing or ui.perfetto.dev) and profile.txt (time by op) "
                 "into the run directory");
  cmd.add_flag("--progress,!--no-progress", c.progress, "Show the progress bar on stderr");
  cmd.add_flag("--log-all-ranks", c.log_all_ranks,
               "Under cohort launch, every process prints its epoch lines (by default rank 0 alone logs)");
}

// With --resume, the run's settings come from its checkpoint. Flags that only change where and how
// fast it runs may be given again; any other flag given with a different value is an error, since
// the resumed run would no longer be the run that was started.
TrainConfig resolve_resume(const CLI::App& cmd, const TrainConfig& given) {
  const std::filesystem::path run_dir = run_dir_of(given.resume);
  Checkpoint checkpoint = read_checkpoint(given.resume, leader_by_environment() || given.log_all_ranks);
  TrainConfig c = checkpoint.config;
  c.resume = checkpoint.path.string();  // the one chosen here, so that every later read is of the same file
  c.out = run_dir.string();
  const nlohmann::json saved = to_json(c), asked = to_json(given);
  for (const CLI::Option* opt : cmd.get_options()) {
    if (opt->count() == 0) continue;
    const std::string flag = opt->get_name(false, true);
    std::string key = flag.substr(2);
    std::replace(key.begin(), key.end(), '-', '_');
    if (key == "epochs" || key == "threads" || key == "workers" || key == "devices" || key == "progress" || key == "resume" ||
        key == "checkpoint_every" || key == "keep_checkpoints" || key == "no_progress" || key == "help" ||
        key == "data_dir" || key == "val_dir" || key == "profile")
      continue;
    if (key == "out") {
      if (std::filesystem::path(given.out).lexically_normal() != run_dir.lexically_normal())
        throw UsageError("cohort train: --resume continues in " + run_dir.string() + "; --out " + given.out +
                         " must be left out (or equal it)");
      continue;
    }
    if (saved.contains(key) && saved[key] != asked[key])
      throw UsageError(cohort::detail::str("cohort train: ", flag, " ", asked[key].dump(),
                                           " differs from the resumed run's ", escape_text(saved[key].dump()), " (",
                                           escape_text(checkpoint.path.string()), "); hint: leave ", flag,
                                           " out, or start a new run with --out"));
  }
  // Where the data is may change (it moved, or the run goes on on another machine); what it is may not.
  if (cmd.get_option("--data-dir")->count()) c.data_dir = given.data_dir;
  if (cmd.get_option("--val-dir")->count()) c.val_dir = given.val_dir;
  if (cmd.get_option("--epochs")->count()) c.epochs = given.epochs;
  if (cmd.get_option("--workers")->count()) c.workers = given.workers;
  if (cmd.get_option("--devices")->count()) {
    c.devices = given.devices;
  } else {
    try {
      parse_devices(c.devices);
    } catch (const UsageError& e) {
      throw UsageError(std::string(e.what()) + " (the devices of the resumed run, " +
                       escape_text(checkpoint.path.string()) + "); hint: give --devices for this machine");
    }
  }
  c.threads = given.threads;
  c.progress = given.progress;
  c.log_all_ranks = given.log_all_ranks;
  c.profile = given.profile;
  if (cmd.get_option("--checkpoint-every")->count()) c.checkpoint_every = given.checkpoint_every;
  if (cmd.get_option("--keep-checkpoints")->count()) c.keep_checkpoints = given.keep_checkpoints;
  return c;
}

// A restarted attempt of a job under `cohort launch --max-restarts` (restart_count() > 0) continues the
// run that an earlier attempt of the same launch started in --out (run.json's job is $COHORT_JOB_ID;
// Note [Run directories] in run_dir.h): from its newest checkpoint, as if --resume --out had been given,
// or, with none yet, from the start again, replacing that attempt's files. A run that another launch
// left there is not this job's: the attempt is treated as a first one (refused unless --overwrite), so a
// first attempt that was refused never turns into a resume of the old run. Without $COHORT_JOB_ID (a
// launcher other than cohort's), the run in --out is taken to be this job's. A first attempt never
// resumes by itself.
TrainConfig resume_after_restart(const TrainConfig& given) {
  TrainConfig c = given;
  const int restarts = restart_count();
  if (restarts == 0 || !c.resume.empty()) return c;
  const std::optional<RunIdentity> identity = read_run_identity(c.out);
  const std::string job = job_id();
  if (!identity || (!job.empty() && identity->job != job)) return c;
  if (list_checkpoints(c.out).empty()) {
    if (leader_by_environment())
      std::cerr << "cohort: restart " << restarts << " of the job: no checkpoint in " << c.out
                << " yet, starting the run again\n";
    c.overwrite = true;  // what the earlier attempt wrote
    return c;
  }
  c.overwrite = false;  // the run goes on: nothing of it is deleted
  c.resume = c.out;
  return c;
}

// `dir` as an absolute path, so that a run stored with it can be resumed or evaluated from any working
// directory.
std::string absolute_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(dir, ec).lexically_normal();
  if (ec) return dir;
  std::string s = p.string();
  if (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

int run_eval(const std::string& path, const std::string& data_dir, const std::string& val_dir, int64_t batch_size,
             int threads, const std::string& json_out) {
  use_threads_flag(threads, "cohort eval");
  if (batch_size < 1)
    throw UsageError(cohort::detail::str("cohort eval: --batch-size must be at least 1, got ", batch_size));
  if (!json_out.empty()) check_output_flag(json_out, "cohort eval: --json");
  Checkpoint checkpoint = read_checkpoint(path);
  TrainConfig config = checkpoint.config;
  if (!data_dir.empty()) config.data_dir = absolute_dir(data_dir);
  if (!val_dir.empty()) {
    if (config.dataset != "folder")
      throw UsageError("cohort eval: --val-dir is a folder of test images for a model trained on --dataset folder; " +
                       escape_text(checkpoint.path.string()) + " was trained on " + config.dataset);
    // The test set is that folder whether the run held out a share of its images or had a folder.
    config.val_dir = absolute_dir(val_dir);
    config.val_split = 0;
  }
  const DataSetup data = load_data(config, /*with_train=*/false, "cohort eval");
  // The model's own normalisation and classes, not ones derived again from the data given now.
  const DataSpec spec = checkpoint.data ? *checkpoint.data : data.spec;
  COHORT_CHECK(data.spec.classes == spec.classes, "cohort eval: the test set in ", escape_text(data.source),
               " does not have the classes the model was trained on: ",
               class_difference(data.spec.classes, "the test set", spec.classes, "the model"));
  auto model = create_model(config.model, spec);
  restore_weights(checkpoint, *model);
  // A carried-state model reads its validation streams a batch of every stream at a time.
  data::DataLoader loader(data.test, data::DataLoaderOptions()
                                         .batch_size(data.test_batch > 0 ? data.test_batch : batch_size)
                                         .transform(inference_transform(spec))
                                         .seed(0));
  std::cout << "cohort eval: " << escape_text(checkpoint.path.string()) << " (" << config.model << ", "
            << config.dataset << " test set)\n";
  EvalResult result = evaluate(*model, loader, static_cast<int64_t>(spec.classes.size()), data.carry_state);
  result.unit = sample_unit(spec.kind);
  print_eval(std::cout, result, spec.classes);
  if (!json_out.empty()) write_eval_json(json_out, result, spec.classes);
  return 0;
}

// "2 (cpu:0 … cpu:1, 1 core each" or, inside a CPU quota smaller than the CPUs, "1 (cpu:0, 1 core under
// the CPU quota" (the caller closes the parenthesis).
std::string describe_devices() {
  const int n = device_count();
  const DeviceProperties first = device_properties(Device(kCPU, 0));
  const bool quota_limited = first.core_share < first.cores() / (1.0 + first.shared_with);
  std::ostringstream os;
  os << n << " (cpu:0" << (n > 1 ? " … cpu:" + std::to_string(n - 1) : "") << ", " << first.core_share
     << (first.core_share == 1 ? " core" : " cores") << (n > 1 ? " each" : "")
     << (quota_limited ? " under the CPU quota" : "");
  return os.str();
}

int run_info() {
  const BackendInfo backend = backend_info();
  std::cout << "cohort " << COHORT_VERSION << "\n"
            << "build:    " << COHORT_BUILD_TYPE << ", " << COHORT_COMPILER << ", C++" << __cplusplus / 100 % 100
            << (COHORT_SANITIZED ? ", AddressSanitizer + UBSan" : "") << "\n"
            << "oneDNN:   " << backend.onednn_version << " (ISA in use: " << backend.cpu_isa << "; Winograd 3x3: "
            << backend.winograd << "'s kernels)\n"
            << "OpenMP:   " << backend.openmp << "\n"
            << "bfloat16: "
            << (backend.bfloat16 == "none" ? "no native instructions (bfloat16 computes through float32: slower)"
                                           : "native (" + backend.bfloat16 + ")")
            << "\n"
            << "float16:  "
            << (backend.float16 == "none" ? "no native kernels (float16 computes through float32: slower)"
                                          : "native (" + backend.float16 + ")")
            << "\n"
            << "cores:    " << cpu_budget() << "\n"
            << "threads:  " << get_num_threads() << " intra-op"
            << (get_num_threads() == 1 ? ""
                : adaptive_threads()   ? ", fewer while other processes keep cores busy (" + std::to_string(free_cores()) +
                                         " free now; COHORT_ADAPTIVE_THREADS=0 fixes the count)"
                                   : " (fixed: COHORT_ADAPTIVE_THREADS=0)")
            << "\n"
            << "devices:  " << describe_devices() << "; set COHORT_CPU_DEVICES to change)\n"
            << "models:   " << join_names(models::names()) << "\n"
            << "datasets: " << join_names(kDatasets) << "\n";
  return 0;
}

constexpr const char* kCommands[] = {"train", "eval", "predict", "generate", "export", "info", "launch", "help"};

// `cohort help [command]` as `cohort [command] --help` (an unknown command is then check_command's to
// name); nullopt for other command lines.
std::optional<std::vector<std::string>> help_command(const std::vector<std::string>& args) {
  if (args.size() < 2 || args[1] != "help") return std::nullopt;
  std::vector<std::string> rewritten = {args[0]};
  if (args.size() > 2) rewritten.push_back(args[2]);
  rewritten.push_back("--help");
  return rewritten;
}

// A first argument that is neither a flag nor a command: CLI11 would say only that a command is
// required.
void check_command(const std::vector<std::string>& args) {
  if (args.size() < 2)
    throw UsageError("cohort: give a command: train, eval, predict, generate, export, info, launch or help; "
                     "hint: cohort --help");
  if (args[1].empty() || args[1][0] == '-') return;
  for (const char* command : kCommands)
    if (args[1] == command) return;
  throw UsageError("cohort: unknown command '" + escape_text(args[1]) +
                   "'; the commands are train, eval, predict, generate, export, info, launch and help; hint: cohort --help");
}

// Whatever went to stdout must have arrived: `cohort info > /dev/full` is a failure, not a success.
int check_stdout(int code) {
  std::cout.flush();
  if (std::cout.good() && std::fflush(stdout) == 0 && !std::ferror(stdout)) return code;
  std::cerr << "error: cohort: writing to stdout failed (" << std::strerror(errno) << ")\n";
  std::cout.clear();
  std::clearerr(stdout);
  return code == 0 ? 1 : code;
}

int run_command(std::vector<std::string> args) {
  CLI::App app{"cohort: train and evaluate neural networks on the CPU"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("cohort ") + COHORT_VERSION, "Print the version and exit");
  app.footer("Run 'cohort <command> --help' or 'cohort help <command>' for the flags of a command.");

  TrainConfig config;
  CLI::App* train_cmd = app.add_subcommand("train", "Train a network; writes metrics, checkpoints and a report");
  // A flag given twice takes its last value, so scripts can put defaults first and let the user override.
  train_cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  add_train_flags(*train_cmd, config);

  std::string eval_path, eval_data_dir, eval_val_dir, eval_json;
  int64_t eval_batch = 256;
  int eval_threads = 0;
  CLI::App* eval_cmd = app.add_subcommand("eval", "Accuracy, per-class accuracy and confusion matrix of a checkpoint");
  eval_cmd->add_option("--checkpoint", eval_path, "A checkpoint file, or a run directory (its newest checkpoint)")
      ->required();
  eval_cmd->add_option("--data-dir", eval_data_dir, "Override the dataset directory stored in the checkpoint");
  eval_cmd->add_option("--val-dir", eval_val_dir,
                       "A folder of test images (DIR/<class>/<image>) for a model trained on --dataset folder, in "
                       "place of the run's validation images");
  eval_cmd->add_option("--batch-size", eval_batch, "Images per forward pass")->capture_default_str();
  eval_cmd->add_option("--threads", eval_threads, "Intra-op threads (0: one per core)")->capture_default_str();
  eval_cmd->add_option("--json", eval_json, "Also write the results to this JSON file");

  PredictOptions predict;
  CLI::App* predict_cmd = app.add_subcommand("predict", "Top classes of a checkpoint's model for image files or CSV rows");
  predict_cmd->add_option("--checkpoint", predict.checkpoint, "A checkpoint file, or a run directory (its newest)")
      ->required();
  predict_cmd->add_option("inputs", predict.inputs, "Image files, or CSV files for a model trained on a table")
      ->required();
  predict_cmd->add_option("--top-k", predict.top_k, "Classes per input")->capture_default_str();
  predict_cmd->add_flag("--json", predict.json, "Print JSON instead of text");
  predict_cmd->add_option("--batch-size", predict.batch_size, "Inputs per forward pass")->capture_default_str();
  predict_cmd->add_option("--threads", predict.threads, "Intra-op threads (0: one per core)")->capture_default_str();
  predict_cmd->add_option("--data-dir", predict.data_dir,
                          "Where the training data is now, if it moved (class names and statistics come from it)");

  GenerateOptions generate;
  CLI::App* generate_cmd = app.add_subcommand("generate", "Text from a language model's checkpoint (char-lstm, char-transformer)");
  generate_cmd->add_option("--checkpoint", generate.checkpoint, "A checkpoint file, or a run directory (its newest)")
      ->required();
  generate_cmd->add_option("--prompt", generate.prompt, "The text to continue")->capture_default_str();
  generate_cmd->add_option("--length", generate.length, "Characters to generate")->capture_default_str();
  generate_cmd->add_option("--temperature", generate.temperature,
                           "Sampling temperature (0: always the most likely character)")->capture_default_str();
  generate_cmd->add_option("--seed", generate.seed, "Seed of the sampling")->capture_default_str()->check(kUnsigned);
  generate_cmd->add_option("--threads", generate.threads, "Intra-op threads (0: one per core)")->capture_default_str();

  ExportOptions export_options;
  CLI::App* export_cmd = app.add_subcommand("export", "Write a checkpoint's model as an ONNX file (opset 13+), a PyTorch state dict or both");
  export_cmd->add_option("--checkpoint", export_options.checkpoint,
                         "A checkpoint file, or a run directory (its newest checkpoint)")
      ->required();
  export_cmd->add_option("--onnx", export_options.onnx, "The ONNX file to write (replaced atomically)");
  export_cmd->add_option("--pytorch", export_options.pytorch,
                         "The PyTorch state dict file to write, as torch.save(model.state_dict()) (replaced "
                         "atomically); prints the Python that loads it");
  export_cmd->add_option("--data-dir", export_options.data_dir,
                         "Override the dataset directory stored in the checkpoint (the model is shaped by its test set)");
  export_cmd->add_option("--opset", export_options.opset, "ONNX opset version, 13 to 17")
      ->check(CLI::Range(13, 17))
      ->capture_default_str();

  CLI::App* info_cmd = app.add_subcommand("info", "Version, build options, devices, threads and the oneDNN ISA");
  app.add_subcommand("help", "The flags of a command: cohort help train (the same as cohort train --help)");

  LaunchOptions launch_options;
  CLI::App* launch_cmd = add_launch_command(app, launch_options);

  try {
    if (auto help = help_command(args)) args = *help;
    check_command(args);
    // Flags the command does not have, with the nearest it does (launch passes its program's on).
    if (args.size() > 1 && args[1] != "launch")
      for (const CLI::App* command : app.get_subcommands({}))
        if (command->get_name() == args[1]) check_flags(*command, {args.begin() + 2, args.end()});
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ArgumentMismatch& e) {
    // CLI11 says "--epochs: 1 required INT missing" for a flag given without its value.
    std::smatch m;
    const std::string what = e.what();
    if (!std::regex_search(what, m, std::regex("^(--[A-Za-z0-9-]+): [0-9]+ required ([A-Z_]+) missing")))
      return app.exit(e) == 0 ? 0 : 2;
    throw UsageError("cohort " + args[1] + ": " + m[1].str() + " needs a value (" + m[2].str() + ")");
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every usage error exits 2, as the header promises (CLI11's own codes vary).
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (*train_cmd) {
    if (config.overwrite && !config.resume.empty())
      throw UsageError("cohort train: --overwrite starts a new run and --resume continues one; give one of them");
    if (!config.profile.empty()) parse_profile_steps(config.profile);  // refused before any work
    // Absolute, so the run can be resumed from another working directory (the checkpoint stores it);
    // a new run stores the default too (CIFAR-10's is relative).
    // --dataset folder:DIR is --dataset folder --data-dir DIR (ImageFolder trees); csv:FILE and
    // text:PATH alike. The path is data_dir, so --resume --data-dir finds data that moved.
    for (const std::string name : {"folder", "csv", "text"}) {
      if (!config.dataset.starts_with(name + ":")) continue;
      if (!config.data_dir.empty())
        throw UsageError("cohort train: --dataset " + name + ":PATH names the data already; leave --data-dir out");
      config.data_dir = config.dataset.substr(name.size() + 1);
      config.dataset = name;
      if (config.data_dir.empty())
        throw UsageError("cohort train: --dataset " + name + ": must name a path, e.g. --dataset " + name + ":" +
                         dataset_path_example(name));
    }
    if (config.resume.empty()) check_dataset_flags(*train_cmd, config);
    if (!config.val_dir.empty()) config.val_dir = absolute_dir(config.val_dir);
    if (config.data_dir.empty() && config.resume.empty() && config.dataset != "synthetic")
      config.data_dir = default_data_dir(config.dataset);
    if (!config.data_dir.empty()) config.data_dir = absolute_dir(config.data_dir);
    if (!config.init_from.empty()) config.init_from = absolute_dir(config.init_from);
    const TrainConfig given = resume_after_restart(config);
    TrainConfig run = given.resume.empty() ? given : resolve_resume(*train_cmd, given);
    train(run);
    return 0;
  }
  if (*eval_cmd) return run_eval(eval_path, eval_data_dir, eval_val_dir, eval_batch, eval_threads, eval_json);
  if (*predict_cmd) return run_predict(predict, std::cout);
  if (*generate_cmd) return run_generate(generate, std::cout);
  if (*export_cmd) {
    run_export(export_options, std::cout);
    return 0;
  }
  if (*info_cmd) return run_info();
  if (*launch_cmd) return launch(launch_options, std::cout, std::cerr);
  std::cout << app.help();  // `cohort help`
  return 0;
}

}  // namespace

int run_cli(int argc, char** argv) {
  const std::vector<std::string> args(argv, argv + argc);
  int code;
  try {
    code = run_command(args);
  } catch (const Interrupted& e) {
    if (*e.what()) std::cerr << e.what() << "\n";
    code = 128 + e.signal();
  } catch (const UsageError& e) {
    std::cerr << "error: " << escape_text(e.what(), /*keep_newlines=*/true) << "\n";
    code = 2;
  } catch (const Error& e) {
    // Escaped once more as a backstop: parts of a message may come from files.
    std::cerr << "error: " << escape_text(e.what(), /*keep_newlines=*/true) << "\n";
    code = 1;
  }
  return check_stdout(code);
}

}  // namespace cohort::app
