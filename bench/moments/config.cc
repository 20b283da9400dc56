#include "bench/moments/config.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#include "storage/util/parse_number.h"

namespace momenta::moments_driver {
namespace {

void Usage() {
  std::fprintf(stderr,
               "usage: moments_driver [--name=value ...]\n"
               "  --length-log2=37 --regions=64 --region-mib=128 --min-len-log2=27\n"
               "  --queries=200 --off-queries=50 --scans=5 --checks=5 --scan-max-gib=8\n"
               "  --updates=500000 --batch=4096 --single-updates=200000 --sustained-updates=4000000\n"
               "  --backend-updates=500000 --hot-window-mib=4 --update-rounds=5 --builds=2\n"
               "  --parts=build,queries,scans,off,updates   (a subset re-measures parts of a kept setup)\n"
               "  --fio-seq-mbs=X --fio-rand-p50-us=X --fio-rand64k-p50-us=X\n"
               "  --numpy-script=PATH --python=/usr/bin/python3\n"
               "  --quick   (a small setup for trying the driver: 2^32 elements, 8 x 16 MiB)\n"
               "env: MOMENTA_BENCH_DIR (default .), MOMENTA_BENCH_KEEP=1, MOMENTA_BENCH_SEED\n");
}

// The small setup of --quick: 2^32 elements, 8 regions of 16 MiB.
void ApplyQuick(Config& c) {
  c.length_log2 = 32;
  c.regions = 8;
  c.region_mib = 16;
  c.min_len_log2 = 22;
  c.queries = 40;
  c.off_queries = 20;
  c.scans = 2;
  c.checks = 3;
  c.scan_max_gib = 1;
  c.updates = 200'000;
  c.single_updates = 20'000;
  c.sustained_updates = 400'000;
  c.backend_updates = 100'000;
  c.builds = 1;
}

// The whole of `v` as a T (storage/util/parse_number.h: "5x" is not 5); false
// when it is not one.
template <class T>
bool ParseFlagValue(const std::string& v, T* out) {
  if constexpr (std::is_same_v<T, double>)
    return ParseReal(v, out);
  else if constexpr (std::is_integral_v<T>)
    return ParseInteger(v, out);
  else {
    *out = v;
    return true;
  }
}

// --key=VALUE into *field, applied where it stands on the command line so
// that a later flag overrides an earlier one (and --quick).
template <class T>
void AddFlag(CLI::App& app, const std::string& key, T* field) {
  app.add_option_function<std::string>("--" + key,
                                       [key, field](const std::string& v) {
                                         if (!ParseFlagValue(v, field)) Die("bad value for --" + key + ": '" + v + "'");
                                       })
      ->trigger_on_parse();
}

void AddFlags(CLI::App& app, Config& c) {
  AddFlag(app, "length-log2", &c.length_log2);
  AddFlag(app, "regions", &c.regions);
  AddFlag(app, "region-mib", &c.region_mib);
  AddFlag(app, "min-len-log2", &c.min_len_log2);
  AddFlag(app, "queries", &c.queries);
  AddFlag(app, "off-queries", &c.off_queries);
  AddFlag(app, "scans", &c.scans);
  AddFlag(app, "checks", &c.checks);
  AddFlag(app, "scan-max-gib", &c.scan_max_gib);
  AddFlag(app, "updates", &c.updates);
  AddFlag(app, "batch", &c.batch);
  AddFlag(app, "single-updates", &c.single_updates);
  AddFlag(app, "sustained-updates", &c.sustained_updates);
  AddFlag(app, "parts", &c.parts);
  AddFlag(app, "backend-updates", &c.backend_updates);
  AddFlag(app, "hot-window-mib", &c.hot_window_mib);
  AddFlag(app, "update-rounds", &c.update_rounds);
  AddFlag(app, "builds", &c.builds);
  AddFlag(app, "fio-seq-mbs", &c.fio_seq_mbs);
  AddFlag(app, "fio-rand-p50-us", &c.fio_rand_p50_us);
  AddFlag(app, "fio-rand64k-p50-us", &c.fio_rand64k_p50_us);
  AddFlag(app, "numpy-script", &c.numpy_script);
  AddFlag(app, "python", &c.python);
  app.add_flag_callback("--quick", [&c] { ApplyQuick(c); })->trigger_on_parse();
  app.set_help_flag();  // our own usage text, not CLI11's
  app.add_flag_callback("-h,--help",
                        [] {
                          Usage();
                          std::exit(0);
                        })
      ->trigger_on_parse();
}

bool IsNameValue(const std::string& a) { return a.rfind("--", 0) == 0 && a.find('=') != std::string::npos; }

// The first word that is neither --name=value nor a flag of its own (a value
// missing, as in "--queries" at the end); empty if there is none.
std::string FirstMalformed(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a != "--quick" && a != "--help" && a != "-h" && !IsNameValue(a)) return a;
  }
  return "";
}

// A parse error as one line, worded as the driver always worded it: an
// unknown --name=value is an "unknown flag", any other word CLI11 did not
// take an "unknown argument"; otherwise CLI11's own message.
[[noreturn]] void DieOfParseError(const CLI::App& app, int argc, char** argv, const CLI::ParseError& e) {
  Usage();
  const std::vector<std::string> extra = app.remaining();
  const std::string a = extra.empty() ? FirstMalformed(argc, argv) : extra.front();
  if (a.empty()) Die(e.what());
  if (IsNameValue(a)) Die("unknown flag " + a.substr(0, a.find('=')));
  Die("unknown argument '" + a + "'");
}

std::string Env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

void ReadEnvironment(Config& c) {
  const std::string dir = Env("MOMENTA_BENCH_DIR", ".");
  char* real = ::realpath(dir.c_str(), nullptr);
  if (real == nullptr) Die(dir + ": " + std::strerror(errno));
  c.dir = real;
  std::free(real);
  c.keep = Env("MOMENTA_BENCH_KEEP", "0") == "1";
  if (!ParseInteger(Env("MOMENTA_BENCH_SEED", "20240601"), &c.seed)) Die("MOMENTA_BENCH_SEED must be a number");
}

void CheckConsistent(const Config& c) {
  if (c.length_log2 < 20 || c.length_log2 > 40) Die("--length-log2 must be 20..40");
  if (c.regions < 2 || c.region_mib == 0) Die("need at least 2 regions of at least 1 MiB");
  if (c.data_bytes() * 4 > c.length() * 8) Die("regions cover more than a quarter of the array");
  if (c.min_len_log2 >= c.length_log2) Die("--min-len-log2 must be below --length-log2");
  if (c.batch == 0) Die("--batch must be positive");
}

}  // namespace

bool Config::Wants(const char* part) const {
  const std::string p = "," + parts + ",";
  return p.find("," + std::string(part) + ",") != std::string::npos;
}

Config ParseConfig(int argc, char** argv) {
  Config c;
  CLI::App app{"moments_driver"};
  AddFlags(app, c);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    DieOfParseError(app, argc, argv, e);
  }
  c.update_rounds = std::max(1, c.update_rounds);
  CheckConsistent(c);
  ReadEnvironment(c);
  return c;
}

}  // namespace momenta::moments_driver
