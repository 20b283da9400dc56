// Scratch files named "<prefix><pid>" (a build's tree.new-PID, an import's
// DEST.partial-PID) that a killed process left behind.
#pragma once

#include <string>
#include <vector>

namespace momenta {

// Removes every file in `dir` named <prefix><pid> for one of `prefixes`
// whose process is gone (not this one, not alive, not another user's), and
// appends one notice per file removed. A pid that looks dead from here
// (another pid namespace, NFS) is taken as dead.
void RemoveFilesOfDeadProcesses(const std::string& dir, const std::vector<std::string>& prefixes,
                                std::vector<std::string>* notices);

}  // namespace momenta
