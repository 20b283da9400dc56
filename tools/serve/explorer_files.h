// The explorer's files (tools/serve/explorer/), compiled into the binary by
// embed_files.cmake: served at / (index.html) and /explorer/NAME, nothing
// read from disk or fetched at run time.
#pragma once

#include <cstddef>
#include <span>

namespace momenta::serve {

struct EmbeddedFile {
  const char* name;          // "index.html", "plot.js" (the folder's top level)
  const char* content_type;  // from the extension: "text/html; charset=utf-8", ...
  const unsigned char* data;
  size_t size;
};

// Every file of the folder, sorted by name (generated: explorer_files.cc).
std::span<const EmbeddedFile> ExplorerFiles();

}  // namespace momenta::serve
