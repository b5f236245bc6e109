// The torch.nn twin of each zoo model, as lines of Python: a short class for the small models,
// torchvision's ResNets with cohort's stem, and a list of keys where no short twin exists.
#include "app/pytorch_snippet.h"

#include <cstdio>
#include <sstream>

#include "cohort/models/char_lstm.h"
#include "cohort/models/char_transformer.h"
#include "cohort/models/lenet.h"
#include "cohort/models/resnet.h"

namespace cohort::app {

namespace {

std::string numbers(const std::vector<double>& values) {
  std::ostringstream out;
  out.precision(9);
  out << "[";
  for (size_t i = 0; i < values.size(); ++i) out << (i ? ", " : "") << values[i];
  return out.str() + "]";
}

std::string str(int64_t n) { return std::to_string(n); }

// What the model is fed, as comments and one line of Python: the normalisation cohort applies
// before the model (predict's transform) is not in the state dict, so the user must apply it.
std::string input_lines(const models::Model& model, const DataSpec& data) {
  const models::ModelOptions& o = model.options();
  std::string s;
  if (data.kind == DataKind::kText) {
    s += "# input: int64 [N, T] character ids (0 to " + str(o.num_classes() - 1) + ", the vocabulary's order in "
         "the checkpoint); output: logits [N * T, " + str(o.num_classes()) + "], one row per position\n";
    return s;
  }
  if (data.kind == DataKind::kTable) {
    std::string columns;
    for (const std::string& f : data.features) columns += (columns.empty() ? "" : ", ") + f;
    s += "# input: float32 [N, " + str(o.in_channels()) + "] rows in column order " + columns +
         ", standardised per column (not part of the model): logits = model((rows - mean) / std)\n";
    s += "mean, std = torch.tensor(" + numbers(data.mean) + "), torch.tensor(" + numbers(data.std) + ")\n";
    return s;
  }
  const std::string size = str(o.image_size());
  s += "# input: float32 NCHW [N, " + str(o.in_channels()) + ", " + size + ", " + size + "], pixels in [0, 1] "
       "normalised per channel (not part of the model): logits = model((pixels - mean) / std)\n";
  s += "mean = torch.tensor(" + numbers(data.mean) + ").view(1, -1, 1, 1)\n";
  s += "std = torch.tensor(" + numbers(data.std) + ").view(1, -1, 1, 1)\n";
  return s;
}

std::string loading_lines(const std::string& file) {
  return "model.load_state_dict(torch.load(" + python_string(file) + "))\nmodel.eval()\n";
}

const char* kImports = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n";

// lenet and blitz-cnn: the blitz's two conv-relu-pool stages and three linear layers. blitz-cnn
// holds its pool as a module used twice (it has no parameters, so the keys are lenet's).
std::string lenet_family(const models::Model& model) {
  const models::ModelOptions& o = model.options();
  const int64_t k = models::lenet_feature_size(o.image_size(), model.arch());
  const bool blitz = model.arch() == "blitz-cnn";
  const std::string flat = str(16 * k * k);
  std::string s = std::string("\nclass ") + (blitz ? "BlitzCNN" : "LeNet") + "(nn.Module):  # cohort's " +
                  model.arch() + "\n";
  s += "    def __init__(self):\n        super().__init__()\n";
  s += "        self.conv1 = nn.Conv2d(" + str(o.in_channels()) + ", 6, 5)\n";
  if (blitz) s += "        self.pool = nn.MaxPool2d(2, 2)\n";
  s += "        self.conv2 = nn.Conv2d(6, 16, 5)\n";
  s += "        self.fc1 = nn.Linear(" + flat + ", 120)\n";
  s += "        self.fc2 = nn.Linear(120, 84)\n";
  s += "        self.fc3 = nn.Linear(84, " + str(o.num_classes()) + ")\n\n";
  s += "    def forward(self, x):\n";
  if (blitz) {
    s += "        x = self.pool(F.relu(self.conv1(x)))\n";
    s += "        x = self.pool(F.relu(self.conv2(x)))\n";
    s += "        x = x.view(-1, " + flat + ")\n";
  } else {
    s += "        x = F.max_pool2d(F.relu(self.conv1(x)), 2)\n";
    s += "        x = F.max_pool2d(F.relu(self.conv2(x)), 2)\n";
    s += "        x = torch.flatten(x, 1)\n";
  }
  s += "        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))\n\n";
  return s + "\nmodel = " + (blitz ? "BlitzCNN" : "LeNet") + "()\n";
}

// mlp: flatten (a table's rows [N, F] are already flat), fc 256-128-classes.
std::string mlp_family(const models::Model& model) {
  const models::ModelOptions& o = model.options();
  std::string s = "\nclass MLP(nn.Module):  # cohort's mlp\n";
  s += "    def __init__(self):\n        super().__init__()\n";
  s += "        self.fc1 = nn.Linear(" + str(o.in_channels() * o.image_size() * o.image_size()) + ", 256)\n";
  s += "        self.fc2 = nn.Linear(256, 128)\n";
  s += "        self.fc3 = nn.Linear(128, " + str(o.num_classes()) + ")\n\n";
  s += "    def forward(self, x):\n";
  s += "        x = torch.flatten(x, 1)\n";
  s += "        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))\n\n";
  return s + "\nmodel = MLP()\n";
}

// resnet18/34/50: torchvision's own class and names. cohort's ImageNet stem is torchvision's (its
// first convolution takes the data's channels); below 64 pixels cohort uses the CIFAR stem, a 3x3
// stride-1 convolution and no max pool, which is torchvision's model with those two modules replaced.
std::string resnet_family(const models::Model& model) {
  const models::ModelOptions& o = model.options();
  const auto* resnet = dynamic_cast<const models::ResNet*>(&model);
  const bool cifar = resnet != nullptr && resnet->stem() == models::ResNetStem::Cifar;
  std::string s = "\nmodel = torchvision.models." + model.arch() + "(num_classes=" +
                  str(o.num_classes()) + ")\n";
  const std::string c = str(o.in_channels());
  if (cifar) {
    s += "# cohort's CIFAR stem (images under 64 pixels) differs from torchvision's 7x7 stride-2 convolution\n"
         "# and max pool: a 3x3 stride-1 convolution and no max pool\n";
    s += "model.conv1 = nn.Conv2d(" + c + ", 64, 3, 1, 1, bias=False)\nmodel.maxpool = nn.Identity()\n";
  } else if (o.in_channels() != 3) {
    s += "model.conv1 = nn.Conv2d(" + c + ", 64, 7, 2, 3, bias=False)  # " + c + " input channels, not 3\n";
  }
  return s;
}

// char-lstm: embedding, a 2-layer batch-first LSTM, fc on every position.
std::string char_lstm_family(const models::Model& model) {
  using M = models::CharLSTM;
  const std::string v = str(model.options().num_classes()), h = str(M::kHidden);
  std::string s = "\nclass CharLSTM(nn.Module):  # cohort's char-lstm\n";
  s += "    def __init__(self):\n        super().__init__()\n";
  s += "        self.embedding = nn.Embedding(" + v + ", " + str(M::kEmbedding) + ")\n";
  s += "        self.lstm = nn.LSTM(" + str(M::kEmbedding) + ", " + h + ", num_layers=" + str(M::kLayers) +
       ", batch_first=True)\n";
  s += "        self.fc = nn.Linear(" + h + ", " + v + ")\n\n";
  s += "    def forward(self, x, state=None):\n";
  s += "        out, state = self.lstm(self.embedding(x), state)\n";
  s += "        return self.fc(out.reshape(-1, " + h + "))\n\n";
  return s + "\nmodel = CharLSTM()\n";
}

// char-transformer: token and position embeddings, pre-norm causal encoder layers (GELU, no
// dropout), a final layer norm and fc on every position.
std::string char_transformer_family(const models::Model& model) {
  using M = models::CharTransformer;
  const std::string v = str(model.options().num_classes()), w = str(M::kWidth);
  std::string s = "\nclass CharTransformer(nn.Module):  # cohort's char-transformer\n";
  s += "    def __init__(self):\n        super().__init__()\n";
  s += "        self.embedding = nn.Embedding(" + v + ", " + w + ")\n";
  s += "        self.position = nn.Embedding(" + str(model.options().image_size()) + ", " + w + ")\n";
  s += "        layer = nn.TransformerEncoderLayer(" + w + ", " + str(M::kHeads) + ", " + str(M::kFeedForward) +
       ", dropout=0.0, activation=\"gelu\", batch_first=True, norm_first=True)\n";
  s += "        self.encoder = nn.TransformerEncoder(layer, " + str(M::kLayers) + ", enable_nested_tensor=False)\n";
  s += "        self.norm = nn.LayerNorm(" + w + ")\n";
  s += "        self.fc = nn.Linear(" + w + ", " + v + ")\n\n";
  s += "    def forward(self, x):  # at most " + str(model.options().image_size()) + " positions\n";
  s += "        t = x.shape[1]\n";
  s += "        h = self.embedding(x) + self.position(torch.arange(t, device=x.device))\n";
  s += "        mask = torch.triu(torch.full((t, t), float(\"-inf\"), device=x.device), 1)\n";
  s += "        return self.fc(self.norm(self.encoder(h, mask)).reshape(-1, " + w + "))\n\n";
  return s + "\nmodel = CharTransformer()\n";
}

// No short twin: the names and shapes a user's own module must have, as comments.
std::string key_list(const models::Model& model, const std::string& file) {
  std::string s = "# no few-line torch.nn equivalent of cohort's " + model.arch() +
                  " is known here; a module whose state dict has these keys and shapes loads the file:\n";
  for (const auto& item : model.state_dict()) {
    std::ostringstream shape;
    shape << item.value().sizes();
    s += "#   " + item.key() + " " + shape.str() + "\n";
  }
  s += "state = torch.load(" + python_string(file) + ")  # then model.load_state_dict(state)\n";
  return s;
}

}  // namespace

std::string python_string(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string pytorch_snippet(const models::Model& model, const DataSpec& data, const std::string& file,
                            bool* has_module) {
  const std::string& arch = model.arch();
  std::string build;
  if (arch == "lenet" || arch == "blitz-cnn") {
    build = lenet_family(model);
  } else if (arch == "mlp") {
    build = mlp_family(model);
  } else if (arch == "resnet18" || arch == "resnet34" || arch == "resnet50") {
    build = resnet_family(model);
  } else if (arch == "char-lstm") {
    build = char_lstm_family(model);
  } else if (arch == "char-transformer") {
    build = char_transformer_family(model);
  }
  if (has_module) *has_module = !build.empty();
  if (build.empty()) return "import torch\n" + key_list(model, file);
  const bool torchvision = build.find("torchvision.") != std::string::npos;
  return kImports + std::string(torchvision ? "import torchvision\n" : "") + input_lines(model, data) + build +
         loading_lines(file);
}

}  // namespace cohort::app
