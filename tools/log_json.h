// One update-log record as `momenta log --json` prints it (the server's
// /log answers the same lines).
#pragma once

#include <string>

#include "storage/dtype.h"
#include "storage/log_codec.h"
#include "storage/log_format.h"

namespace momenta::cli {

// {"seq":S,"time":T,"index":I,"old":V,"new":V} (no newline)
std::string LogRecordJson(DType dtype, const LogRecord& r);

}  // namespace momenta::cli
