# The headers `cmake --install` puts under <prefix>/include/momenta/:
# momenta.h, the public API's entry points, and exactly the headers it
# includes, directly or through another (so an installed header never names
# one that is not installed). Internals stay out: the tree's layout, file and
# maintenance, the log's codec and scanner, the array's store, the root's
# state, the wire codecs, stream/testing/, every *_internal.h.
# tests/install_consumer checks that this list is that closure: a header the
# API needs and the list lacks fails the consumer's build; one listed that
# momenta.h does not reach fails the check.
set(MOMENTA_INSTALLED_HEADERS
  momenta.h
  storage/array/array_file.h
  storage/util/cancel.h
  storage/npy/dtype.h
  storage/io/extents.h
  storage/io/io_backend.h
  storage/log/log_damage.h
  storage/log/log_format.h
  storage/log/log_mark.h
  storage/log/log_reader.h
  storage/log/log_recovery.h
  storage/log/log_segments.h
  storage/log/log_sync.h
  storage/log/log_writer.h
  storage/npy/npy_format.h
  storage/io/posix_file.h
  storage/array/sidecar.h
  storage/util/status.h
  storage/util/value.h
  storage/array/writer_lock.h
  storage/util/line_reader.h
  storage/util/stop_token.h
  buffers/buffered_array.h
  buffers/create_array.h
  buffers/group_writer.h
  buffers/algebra/exact_squares.h
  buffers/algebra/moments.h
  buffers/algebra/power_sums.h
  buffers/algebra/range_summary.h
  buffers/algebra/statistics.h
  buffers/range_answers.h
  buffers/range_ends.h
  buffers/summarize_as_of.h
  buffers/tree/buffer_description.h
  buffers/tree/tree_options.h
  stream/window/bucket_window.h
  stream/window/flat_count_map.h
  stream/window/hashed_names.h
  stream/window/item_counts.h
  stream/window/item_mapping.h
  stream/window/key_count_sort.h
  stream/window/misra_gries.h
  stream/window/name_table.h
  stream/window/packed_pairs.h
  stream/window/sliding_vector.h
  stream/window/summarizer.h
  stream/window/value_sample.h
  stream/window/window_count.h
  stream/window/window_quantiles.h
  stream/window/window_spec.h
  stream/window/young_log.h
  stream/protocol/approx_count_rule.h
  stream/protocol/basic_count_rule.h
  stream/protocol/count_grid.h
  stream/protocol/messages.h
  stream/protocol/quantile_drift_rule.h
  stream/protocol/quantile_summary_rule.h
  stream/protocol/rank_steps.h
  stream/protocol/site.h
  stream/protocol/site_mirror.h
  stream/protocol/traffic_counts.h
  stream/net/handshake.h
  stream/net/name_frames.h
  stream/net/net_socket.h
  stream/net/query_client.h
  stream/net/root_server.h
  stream/net/site_client.h
  stream/net/site_names.h
  stream/net/wire_frame.h
  stream/drive/item_source.h
  stream/drive/log_follow.h
  stream/drive/log_source.h
  stream/drive/log_wait.h
  stream/drive/site_runner.h
  stream/drive/text_source.h
  stream/drive/window_driver.h)
