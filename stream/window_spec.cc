#include "stream/window_spec.h"

namespace momenta {

Status ValidateWindowSpec(const WindowSpec& spec) {
  if (spec.window < 1 || spec.window > kMaxTime)
    return Status::InvalidArgument("window", "W must lie in [1, 2^61], got " + std::to_string(spec.window));
  if (spec.tardiness < 0 || spec.tardiness >= spec.window)
    return Status::InvalidArgument("window", "tardiness must lie in [0, W-1], got " +
                                                 std::to_string(spec.tardiness) + " with W = " +
                                                 std::to_string(spec.window));
  return Status::OK();
}

Status CheckEps(double eps, std::string_view context) {
  if (!(eps > 0 && eps < 1))
    return Status::InvalidArgument(context, "eps must lie in (0, 1), got " + std::to_string(eps));
  return Status::OK();
}

}  // namespace momenta
