#pragma once
// A Hugging Face checkpoint's published name ("meta-llama/Meta-Llama-3.1-8B-Instruct", "neuralmagic/...-FP8") read
// as the catalogue model it is a checkpoint of, and the weight format the name announces. One rule for server lines,
// check, runs files and a --model / "model" naming no file (analysis and spec both read it).
#include <optional>
#include <string>

#include "llmsim/spec/catalog.hpp"

namespace llmsim::spec {

/// A model name that is a checkpoint on this machine: a file (a config.json), or a directory holding config.json.
/// vLLM reads such a path and never looks its name up (vllm/transformers_utils/config.py, file_or_path_exists: a
/// path that exists is read from disk), so its own config decides the model and the weights: catalogue_model_for
/// and weight_format_in_name say nothing of it.
bool local_checkpoint(const std::string& name);
/// The last path part of a model name in lower case ("meta-llama/Llama-3.1-8B/" -> "llama-3.1-8b").
std::string published_base_name(const std::string& hf_name);
/// The last path part of a model name without its publisher's prefix ("meta-", "nvidia-"), the tuning and release
/// labels ("-instruct", "-thinking", a release date "-2501"), dtype and quantization suffixes and (unless
/// keep_version) versions; with `shape_labels` also a context length ("-8K") and Llama 4's "-17B-16E".
std::string published_reduced_name(const std::string& hf_name, bool keep_version = false, bool shape_labels = false);
/// The catalogue id a Hugging Face model name stands for ("meta-llama/Meta-Llama-3.1-8B-Instruct" ->
/// "llama-3.1-8b"), or nullopt when the catalogue has no such id (no prefix matching) or the name is a local checkpoint.
std::optional<std::string> catalogue_model_for(const std::string& hf_name, const Catalog& catalog);
/// The weight format a checkpoint name announces ("...-FP8" fp8, "...-FP8-dynamic", "...-AWQ" awq-int4,
/// "...-GPTQ-Int4", "...-W8A8", "...-bnb-4bit"), or "": vLLM reads the checkpoint's quantization_config, which a name
/// matched to a catalogue model does not carry, so the name stands for it; "" for a local checkpoint, whose
/// quantization_config (or hf_quant_config.json) is read instead.
std::string weight_format_in_name(const std::string& hf_name);

}  // namespace llmsim::spec
