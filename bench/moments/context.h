// The one context every phase of the driver reads and fills: the
// configuration, the files, the device the probes watch, the ranges, what
// was measured, whether every checked answer was right, and what the machine
// did during each phase. main() owns it; the phases take it by reference.
#pragma once

#include <string>
#include <vector>

#include "bench/moments/config.h"
#include "bench/moments/probes.h"
#include "bench/moments/results.h"

namespace momenta::moments_driver {

// The driver's files in config.dir: the array and the setup text.
constexpr const char* kArrayName = "momenta_moments_bench.npy";
constexpr const char* kSetupName = "momenta_moments_bench.setup";

struct DriverPaths {
  std::string array;    // the .npy array
  std::string sidecar;  // its buffer's folder (SidecarPath)
  std::string tree;     // the moment tree in the sidecar
  std::string setup;    // the text that says which setup the kept array holds
  // Drops the array's and the tree's clean cached pages.
  void DropCaches() const;
};

struct DriverContext {
  explicit DriverContext(Config c);
  DriverContext(const DriverContext&) = delete;
  DriverContext& operator=(const DriverContext&) = delete;

  const Config config;
  const DriverPaths paths;
  const DeviceId device;  // config.dir's device, for the disk counters
  QuerySet ranges;        // drawn after the setup
  Report report;
  bool correct = true;          // every answer checked so far was right
  std::vector<PhaseUse> usage;  // one entry per finished phase, in order
};

// Times one phase from construction to destruction: prints its "phase" line
// and appends what other processes did meanwhile to ctx.usage.
class PhaseTimer {
 public:
  PhaseTimer(DriverContext& ctx, std::string name);
  ~PhaseTimer();
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  DriverContext& ctx_;
  const std::string name_;
  const Snapshot start_;
};

}  // namespace momenta::moments_driver
