// Links llmsim::memory alone: plans llama-3.1-8b at fp16 on one RTX 4090 24GB from the compiled-in catalogue
// and checks the field guide's number, KV per token = 2 x 32 layers x 8 KV heads x 128 x 2 B = 131,072 B.
#include <iostream>

#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/catalog.hpp"

int main() {
  const auto& catalog = llmsim::spec::Catalog::builtin();
  const auto model = catalog.model("llama-3.1-8b");
  llmsim::spec::Quantization quant;  // fp16 KV cache
  quant.weights = llmsim::spec::weight_format("fp16");
  const auto plan = llmsim::memory::plan_memory(model, quant, catalog.gpu("rtx4090-24gb"), {}, {}, 8192);
  std::cout << "fits " << plan.fits << ", kv_bytes_per_token " << plan.kv_bytes_per_token << ", kv_capacity_tokens "
            << plan.kv_capacity_tokens << "\n";
  return plan.fits && plan.kv_bytes_per_token == 131072 && plan.kv_capacity_tokens > 0 ? 0 : 1;
}
