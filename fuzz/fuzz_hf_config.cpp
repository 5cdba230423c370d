// A Hugging Face config.json → ModelSpec → validate → derived sizes.
#include "fuzz_common.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/spec/model_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace llmsim;
  try {
    const Json j = parse_json(fuzz::text(data, size), "config.json");
    const auto m = spec::model_spec_from_hf_config(JsonView(j, "model"), "fuzz");
    m.validate();
    volatile double sink = static_cast<double>(m.param_count() + m.active_param_count()) + m.kv_bytes_per_token(2.0);
    (void)sink;
  } catch (const ConfigError&) {
  }
  return 0;
}
