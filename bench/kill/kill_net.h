// Monitor rounds of the kill driver: real `momenta root` and `momenta site`
// processes on loopback, the sites tailing the update logs of arrays the
// driver writes; one of them (a site, or the root) SIGKILLed while the
// updates stream, restarted, and the time until the root's answers are back
// within the guarantee measured. See kill_net.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace momenta::kill {

struct NetRunOptions {
  bool kill_root = false;  // false: kill a site
  uint64_t kills = 100;
  uint64_t seed = 1;
  std::string dir;
  std::string cli;              // the momenta binary
  uint64_t heartbeat_ms = 200;  // the sites' --heartbeat
  bool verbose = false;
};

struct NetRunReport {
  bool kill_root = false;
  uint64_t kills = 0;
  uint64_t heartbeat_ms = 0;
  std::vector<double> recovery_ms;  // restart (spawn) -> first answer back within the guarantee
  std::vector<double> down_ms;      // kill -> restart
  uint64_t answers_checked = 0;     // `sites` answers, each live site's count checked
  uint64_t wrong_answers = 0;       // a live site's count outside eps of its exact window
  uint64_t not_recovered = 0;       // not back within 30 s
  uint64_t other_failures = 0;
  uint64_t updates = 0;
  double seconds = 0;
  std::vector<std::string> failures;
  bool ok() const { return wrong_answers == 0 && not_recovered == 0 && other_failures == 0; }
};

NetRunReport RunNetKills(const NetRunOptions& options);
void PrintNetReport(const NetRunReport& r);

}  // namespace momenta::kill
