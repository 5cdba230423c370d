#include "convert.hpp"

namespace llmsim::python {

Json parse_text(const std::string& text, const std::string& source) { return parse_json(text, source); }

std::string dump(const Json& j) { return j.dump(); }

}  // namespace llmsim::python
