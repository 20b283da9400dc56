#include "tools/log_json.h"

#include "storage/json_writer.h"

namespace momenta::cli {

std::string LogRecordJson(DType dtype, const LogRecord& r) {
  JsonWriter j;
  j.BeginObject().Key("seq").UInt(r.sequence).Key("time").Int(r.time).Key("index").UInt(r.index);
  j.Key("old").ElementValue(LogValueFromRaw(dtype, r.old_raw));
  j.Key("new").ElementValue(LogValueFromRaw(dtype, r.new_raw)).EndObject();
  return j.str();
}

}  // namespace momenta::cli
