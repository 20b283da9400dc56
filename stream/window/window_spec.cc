#include "stream/window/window_spec.h"

#include <cstdio>

namespace momenta {

Status ValidateWindowSpec(const WindowSpec& spec) {
  if (spec.window < 1 || spec.window > kMaxTime)
    return Status::InvalidArgument("window", "W must lie in [1, 2^61], got " + std::to_string(spec.window));
  if (spec.tardiness < 0 || spec.tardiness >= spec.window)
    return Status::InvalidArgument("window", "tardiness must lie in [0, W-1], got " + std::to_string(spec.tardiness) +
                                                 " with W = " + std::to_string(spec.window));
  return Status::OK();
}

Status CheckEps(double eps, std::string_view context) {
  if (!(eps >= kMinEps && eps < 1)) {
    char got[32];
    std::snprintf(got, sizeof got, "%g", eps);
    return Status::InvalidArgument(context, std::string("eps must lie in (0, 1), at least 1e-12, got ") + got);
  }
  return Status::OK();
}

}  // namespace momenta
