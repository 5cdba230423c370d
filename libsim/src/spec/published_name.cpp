// A Hugging Face checkpoint's published name read as a catalogue model (catalogue_model_for) and the weight format
// its name announces (weight_format_in_name): one rule for server lines, check, runs files and --model.
#include "llmsim/spec/published_name.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "llmsim/core/names.hpp"

namespace llmsim::spec {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) return out;
    start = p + 1;
  }
}

}  // namespace

std::string published_base_name(const std::string& hf_name) {
  std::string n = to_lower(hf_name);
  while (!n.empty() && n.back() == '/') n.pop_back();
  const auto slash = n.rfind('/');
  return slash == std::string::npos ? n : n.substr(slash + 1);
}

bool local_checkpoint(const std::string& name) {
  if (name.empty()) return false;
  std::error_code ec;
  const std::filesystem::path p(name);
  return std::filesystem::is_regular_file(p, ec) || std::filesystem::is_regular_file(p / "config.json", ec);
}

std::string weight_format_in_name(const std::string& hf_name) {
  if (local_checkpoint(hf_name)) return "";
  const auto tokens = split(published_base_name(hf_name), '-');
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const auto& t = tokens[i];
    // llm-compressor's "-FP8-dynamic" checkpoints: per-channel weights, dynamic per-token activations.
    if (t == "fp8") return i + 1 < tokens.size() && tokens[i + 1] == "dynamic" ? "fp8-dynamic" : "fp8";
    if (t == "awq") return "awq-int4";
    if (t == "gptq") return "gptq-int4";
    if (t == "w8a8") return "w8a8";
    if (t == "bnb" || t == "nf4") return "nf4";
  }
  return "";
}

namespace {

bool all_digits(const std::string& t) {
  return !t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

}  // namespace

/// The last path part of a model name without its publisher's prefix ("meta-", "nvidia-"), the tuning and release
/// labels ("-instruct", "-thinking", a release date "-2501"), dtype and quantization suffixes and (unless
/// keep_version) versions: "Mistral-7B-Instruct-v0.3" -> "mistral-7b-v0.3", or "mistral-7b" without its version;
/// "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16" -> "nemotron-3-nano-30b-a3b". With `shape_labels` also the labels some
/// publishers add to the shape: a context length ("Nemotron-H-56B-Base-8K") and Llama 4's active size and expert
/// count ("Llama-4-Scout-17B-16E") — a second pass, so "Phi-3-medium-4k" keeps the 4k its catalogue id has.
std::string published_reduced_name(const std::string& hf_name, bool keep_version, bool shape_labels) {
  std::string n = published_base_name(hf_name);
  for (const char* prefix : {"meta-", "nvidia-"})
    if (n.rfind(prefix, 0) == 0) n = n.substr(std::string(prefix).size());
  static const std::vector<std::string> drop{"instruct", "chat", "hf", "it", "base", "thinking", "bf16", "fp16",
                                             "fp8", "dynamic", "awq", "gptq", "int4", "int8", "w8a8", "w4a16", "bnb",
                                             "4bit", "nf4"};
  const auto tokens = split(n, '-');
  std::string kept;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    const bool version = t.size() > 1 && t[0] == 'v' && std::isdigit(static_cast<unsigned char>(t[1]));
    const bool date = t.size() == 4 && all_digits(t) && i > 0;  // Mistral's and Qwen's "-2501", "-2507"
    const auto count_then = [&](std::size_t at, char unit) {
      return at < tokens.size() && tokens[at].size() > 1 && tokens[at].back() == unit &&
             all_digits(tokens[at].substr(0, tokens[at].size() - 1));
    };
    const bool context = shape_labels && count_then(i, 'k');
    const bool experts = shape_labels && (count_then(i, 'e') || (count_then(i, 'b') && count_then(i + 1, 'e')));
    if (std::find(drop.begin(), drop.end(), t) != drop.end() || (version && !keep_version) || date || context ||
        experts)
      continue;
    kept += (kept.empty() ? "" : "-") + t;
  }
  return kept;
}

std::optional<std::string> catalogue_model_for(const std::string& hf_name, const Catalog& catalog) {
  if (local_checkpoint(hf_name)) return std::nullopt;
  if (catalog.has_model(published_base_name(hf_name))) return published_base_name(hf_name);
  // The versioned name first: Mistral-7B v0.3 (32768-token vocabulary, no sliding window) is not v0.1.
  for (const bool shape_labels : {false, true}) {
    for (const bool keep_version : {true, false}) {
      const std::string r = published_reduced_name(hf_name, keep_version, shape_labels);
      if (catalog.has_model(r)) return r;
    }
  }
  return std::nullopt;
}

}  // namespace llmsim::spec
