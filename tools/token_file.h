// The shared secret a site presents and a root asks for (--token-file).
#pragma once

#include <string>

#include "storage/util/status.h"

namespace momenta::cli {

// The token is the file's first line (trailing blanks dropped); an empty
// token, or one longer than a handshake string (256 bytes), is refused.
Result<std::string> ReadToken(const std::string& path);

}  // namespace momenta::cli
