// One update-log record as `momenta log --json` prints it (the server's
// /log answers the same lines).
#pragma once

#include <string>

#include "storage/log/log_codec.h"
#include "storage/log/log_format.h"
#include "storage/npy/dtype.h"

namespace momenta::cli {

// {"seq":S,"time":T,"index":I,"old":V,"new":V} (no newline)
std::string LogRecordJson(DType dtype, const LogRecord& r);

}  // namespace momenta::cli
