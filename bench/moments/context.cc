#include "bench/moments/context.h"

#include <cstdio>

#include "bench/moments/files.h"
#include "storage/array/sidecar.h"

namespace momenta::moments_driver {
namespace {

DriverPaths PathsIn(const std::string& dir) {
  DriverPaths p;
  p.array = dir + "/" + kArrayName;
  p.sidecar = SidecarPath(p.array);
  p.tree = p.sidecar + "/tree";
  p.setup = dir + "/" + kSetupName;
  return p;
}

}  // namespace

void DriverPaths::DropCaches() const {
  DropCache(array);
  DropCache(tree);
}

DriverContext::DriverContext(Config c)
    : config(std::move(c)), paths(PathsIn(config.dir)), device(DeviceOf(config.dir)) {}

PhaseTimer::PhaseTimer(DriverContext& ctx, std::string name)
    : ctx_(ctx), name_(std::move(name)), start_(TakeSnapshot(ctx.device)) {}

PhaseTimer::~PhaseTimer() {
  const PhaseUse u = UseBetween(name_, start_, TakeSnapshot(ctx_.device));
  std::printf("phase %-10s %.0f s; %s%s\n", name_.c_str(), u.seconds, u.Text().c_str(),
              u.busy() ? "  <- a busy machine: these figures may be disturbed" : "");
  ctx_.usage.push_back(u);
}

}  // namespace momenta::moments_driver
