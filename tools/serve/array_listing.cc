#include "tools/serve/array_listing.h"

#include "storage/array/array_file.h"
#include "storage/util/json_writer.h"

namespace momenta::serve {

std::string ListArrays(ServedArrays& arrays) {
  JsonWriter j;
  j.BeginObject().Key("arrays").BeginArray();
  for (const std::string& name : arrays.Names()) {
    auto lease = arrays.Acquire(name);
    j.BeginObject().Key("name").String(name);
    if (!lease.ok()) {
      j.Key("error").String(lease.status().ToString()).EndObject();
      continue;
    }
    BufferedArray& ba = lease->array();
    const ArrayFile& f = ba.array();
    j.Key("dtype").String(DTypeName(f.dtype())).Key("shape").BeginArray();
    for (uint64_t d : f.header().shape) j.UInt(d);
    j.EndArray().Key("length").UInt(f.length()).Key("itemsize").UInt(f.itemsize());
    j.Key("buffer").BeginObject().Key("kind").String(ba.buffer_kind()).Key("order").Int(ba.index_order());
    j.Key("leaf_span").UInt(ba.leaf_span()).Key("levels").Int(ba.levels()).EndObject();
    if (const TimeAxis* t = arrays.TimeAxisOf(name)) j.Key("rate").Double(t->rate).Key("start").Double(t->start);
    j.EndObject();
  }
  j.EndArray().EndObject();
  return j.str();
}

}  // namespace momenta::serve
