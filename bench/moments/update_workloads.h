// The update workloads and their floors: random single-element updates
// (scattered over all the data, or inside a hot set of windows), applied
// through BufferedArray, and the kernel's floor for dirtying the same pages
// without momenta.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "bench/moments/context.h"
#include "buffers/buffered_array.h"

namespace momenta::moments_driver {

// n updates at random elements of the setup's regions, values in [-4096, 4096).
std::vector<IndexedValue> MakeUpdates(const DriverContext& ctx, std::mt19937_64& rng, uint64_t n);

// The hot set: one window of hot_window_mib in each region, at a random
// page-aligned place. Returns each window's first element.
// REQUIRES: hot_window_mib <= region_mib
std::vector<uint64_t> HotWindows(const DriverContext& ctx, std::mt19937_64& rng);
// n updates at random elements inside the windows.
std::vector<IndexedValue> MakeHotUpdates(const DriverContext& ctx, const std::vector<uint64_t>& windows,
                                         std::mt19937_64& rng, uint64_t n);
// One update per 4 KiB page of every window: applied, they leave the hot
// set resident, mapped and dirty, as for a writer that keeps updating it.
std::vector<IndexedValue> TouchHotPages(const DriverContext& ctx, const std::vector<uint64_t>& windows);

// The kernel's floor for the updates u: each element's own 8 bytes loaded
// and stored back through a fresh shared mapping of the array (advised
// random, as BufferedArray's is), no tree, no log: what any writer that
// updates the file in place pays to dirty the pages. Updates/s; msyncs after.
double BareStores(const DriverContext& ctx, BufferedArray& ba, const std::vector<IndexedValue>& u);
// The same floor through pwrite: each element's own bytes (read before the
// clock starts) written back with one pwrite each. Updates/s; fdatasyncs after.
double BarePwrites(const DriverContext& ctx, BufferedArray& ba, const std::vector<IndexedValue>& u);

// u applied in Apply calls of `batch` updates. Updates/s of wall time;
// *per_cpu_second (optional) gets updates per second of this thread's CPU
// time (user and kernel), which other processes taking the CPU do not lower.
double ApplyBatches(BufferedArray& ba, const std::vector<IndexedValue>& u, uint64_t batch,
                    double* per_cpu_second = nullptr);

}  // namespace momenta::moments_driver
