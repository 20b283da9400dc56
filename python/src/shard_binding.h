// Sharded arrays' plan and manifest from Python: momenta.dask.shard_create
// plans its shards and writes its manifest through the library
// (buffers/shard_plan.h, storage/array/shard_manifest.h), as `momenta shard
// create` does, so the two make the same layout and the same bytes.
#pragma once

#include <pybind11/pybind11.h>

namespace momenta::python {

namespace py = pybind11;

void RegisterShards(py::module_& m);

}  // namespace momenta::python
