// momenta's public API: this header includes every header a program needs
// (installed as <prefix>/include/momenta/momenta.h; the package's include
// folder is <prefix>/include/momenta, so `#include "momenta.h"`). Each entry
// point below says what it is for; the header itself states the contracts.
// The other installed headers are what these include; the ones not
// installed (the tree's layout and file, the log's codec and scanner, the
// root's state, the wire codecs, *_internal.h) are internals that may change.
//
// Include only what you use, or this one for all of it.
#pragma once

// ---- storage/: durable bytes --------------------------------------------------
#include "storage/array/array_file.h"  // ArrayFile: one .npy array on disk; Create, Open, reads
#include "storage/io/io_backend.h"     // IoOptions and the I/O backends (pread, mmap, io_uring)
#include "storage/log/log_format.h"    // the update log's records (LogRecord) and its time constants
#include "storage/log/log_reader.h"    // LogReader: read (or follow) an update log in sequence order
#include "storage/log/log_sync.h"      // LogSync: when an appended record reaches the disk
#include "storage/log/log_writer.h"    // LogWriter: append records to an update log
#include "storage/npy/dtype.h"         // the element dtypes; ParseValue / FormatValue between text and values
#include "storage/npy/npy_format.h"    // the .npy header: parse and write
#include "storage/util/cancel.h"       // cancelling long work from a signal handler
#include "storage/util/line_reader.h"  // LineReader: lines of a file or a pipe, a stop waking the wait
#include "storage/util/status.h"       // Status and Result<T>: errors as values, MOMENTA_RETURN_IF_ERROR
#include "storage/util/stop_token.h"   // StopToken: how a loop that waits learns to stop

// ---- buffers/: range statistics over an array ---------------------------------
#include "buffers/algebra/moments.h"        // the moment algebra behind them
#include "buffers/algebra/range_summary.h"  // RangeSummary: what a range query returns
#include "buffers/algebra/statistics.h"     // Stat: sum, mean, var, std, moments, com, spread, polyfit, min, max
#include "buffers/buffered_array.h"         // BufferedArray, the facade: open, Summarize, Write, Apply, Commit
#include "buffers/create_array.h"           // CreateBufferedArray: a new array and its buffer, all or nothing
#include "buffers/group_writer.h"           // GroupWriter: group commit for many submitting threads
#include "buffers/summarize_as_of.h"        // SummarizeAsOf: range summaries as of a time of the update log
#include "buffers/tree/tree_options.h"      // TreeOptions, BuildStats, BuildProgress

// ---- stream/: one stream's sliding window -------------------------------------
#include "stream/window/item_counts.h"       // ItemCounts: any item's count and the frequent items
#include "stream/window/item_mapping.h"      // ItemMapping: what "the item" of an update or a line is
#include "stream/window/name_table.h"        // NameTable: the names of items counted by their hash
#include "stream/window/summarizer.h"        // Summarizer: the three synopses of one stream together
#include "stream/window/window_count.h"      // WindowCount: items in the window, within eps
#include "stream/window/window_quantiles.h"  // WindowQuantiles: ranks and quantiles
#include "stream/window/window_spec.h"       // WindowSpec: the window, its clock and tardiness

// ---- stream/: many sites, one root --------------------------------------------
#include "stream/net/query_client.h"  // QueryClient: ask a root one question at a time
#include "stream/net/root_server.h"   // RootServer: the root's network loop and its answers
#include "stream/net/site_client.h"   // SiteClient: a site's connection to the root
#include "stream/net/site_names.h"    // SiteNames: the names a site counting names sends its root

// ---- stream/drive/: running a window or a site over real input ----------------
#include "stream/drive/item_source.h"    // ItemSource: where (timestamp, item) pairs come from
#include "stream/drive/log_follow.h"     // RunLogClock: a window following a log on its own time
#include "stream/drive/log_source.h"     // an array's update log as a source
#include "stream/drive/log_wait.h"       // WaitForLogDir: a log that does not exist yet
#include "stream/drive/site_runner.h"    // RunSiteLoop: a site over a source, reporting to a root
#include "stream/drive/text_source.h"    // "TIMESTAMP ITEM" lines as a source
#include "stream/drive/window_driver.h"  // RunDataClock / RunWallClock: a window over a source
