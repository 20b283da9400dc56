#include "tools/serve/array_listing.h"

#include "buffers/moment_tree.h"
#include "storage/array_file.h"
#include "storage/json_writer.h"

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
    const TreeLayout& l = ba.tree().layout();
    j.Key("buffer").BeginObject().Key("kind").String(ba.ola() ? "ola" : "hbb").Key("order").Int(ba.index_order());
    j.Key("leaf_span").UInt(l.leaf_span()).Key("levels").Int(l.levels()).EndObject();
    j.EndObject();
  }
  j.EndArray().EndObject();
  return j.str();
}

}  // namespace momenta::serve
