// POST /api/arrays/NAME/update (`momenta serve --writable` only): the body's
// lines, as `momenta update` reads them ("INDEX VALUE [TIME]"), applied
// through the update log by a writer opened for this request and closed
// after it (one writer at a time, as everywhere: another writer's lock is a
// 409). All lines are parsed before any is applied.
#pragma once

#include <string>

#include "tools/serve/api.h"
#include "tools/serve/params.h"

namespace momenta::serve {

inline constexpr uint64_t kMaxUpdatesPerRequest = 1 << 20;

// Answers {"name":..,"applied":N,"sequence":S}.
ApiResponse Update(Lease& lease, const Target& t, const std::string& body);

}  // namespace momenta::serve
