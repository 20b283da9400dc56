#include "tools/text_values.h"

namespace momenta::cli {

Result<uint64_t> CountTextValues(std::string_view text, DType dtype, const std::string& name) {
  uint64_t count = 0;
  MOMENTA_RETURN_IF_ERROR(ForEachTextValue(text, name, [&](std::string_view tok, uint64_t line) {
    auto v = ParseValue(dtype, tok);
    if (!v.ok()) return v.status().WithContext(name + ": line " + std::to_string(line));
    ++count;
    return Status::OK();
  }));
  return count;
}

}  // namespace momenta::cli
