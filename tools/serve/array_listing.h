// GET /api/arrays: what the server serves, one object per array.
#pragma once

#include <string>

#include "tools/serve/served_arrays.h"

namespace momenta::serve {

// {"arrays":[{"name":..,"dtype":..,"shape":[..],"length":N,"itemsize":B,
// "buffer":{"kind":"hbb"|"ola","order":J,"leaf_span":L,"levels":K}
// [,"rate":HZ,"start":SECONDS]}, ...]} -- rate and start only for an array
// given a time axis (element i at start + i / rate seconds since the epoch);

// (an array that cannot be reached now: {"name":..,"error":"..."}).
std::string ListArrays(ServedArrays& arrays);

}  // namespace momenta::serve
