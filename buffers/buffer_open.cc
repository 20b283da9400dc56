// BufferedArray: opening as a writer or a reader, the buffer's condition, the
// sidecar's identity, and a reader's recovery after a dead writer. The
// recovery itself (log replay, rebuilds) is in buffer_recover.cc.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "buffers/buffer_kind.h"
#include "buffers/buffered_array_internal.h"
#include "buffers/tree/tree_seqlock.h"
#include "storage/array/array_store.h"
#include "storage/array/leftovers.h"
#include "storage/io/posix_file.h"
#include "storage/log/log_codec.h"
#include "storage/log/log_segments.h"

namespace momenta {
namespace {

bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

// How long a reader waits for a live writer that holds the lock while the
// buffer it needs is being built or recovered, before giving up.
constexpr auto kWaitForLiveWriter = std::chrono::seconds(30);

// The dtype the log's first segment holds, when there is a readable one.
std::optional<DType> LoggedDType(const std::string& log_dir) {
  auto segments = ListLogSegments(log_dir);
  if (!segments.ok() || segments->empty()) return std::nullopt;
  auto fd = OpenFile(segments->front().path, O_RDONLY);
  if (!fd.ok()) return std::nullopt;
  char bytes[sizeof(LogSegmentHeader)];
  if (!PreadFully(fd->get(), segments->front().path, 0, sizeof bytes, bytes).ok()) return std::nullopt;
  auto h = DecodeLogSegmentHeader(std::string_view(bytes, sizeof bytes), segments->front().path);
  if (!h.ok()) return std::nullopt;
  return LogSegmentDType(*h);
}

// Asks for the first bytes a reader's Open reads, all at once, before it
// reads them one after the other: the array's header, the sidecar's identity
// record, the tree's header and (at the end of the tree file) its RAM tier,
// as large as the default budget for the array's size makes it. Cold, Open
// then waits about one device round trip instead of one per file. Best
// effort: a file that is missing or refuses is simply not prefetched.
void PrefetchReaderFiles(const std::string& array_path, const std::string& sidecar) {
  auto advise = [](const std::string& path, auto ranges_of_size) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return uint64_t{0};
    struct stat st;
    uint64_t size = 0;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
      size = static_cast<uint64_t>(st.st_size);
      for (const auto& [offset, length] : ranges_of_size(size))
        (void)::posix_fadvise(fd, static_cast<off_t>(offset), static_cast<off_t>(length), POSIX_FADV_WILLNEED);
    }
    ::close(fd);
    return size;
  };
  using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;
  const uint64_t array_size = advise(array_path, [](uint64_t) { return Ranges{{0, kTreeHeaderBytes}}; });
  advise(sidecar + "/identity", [](uint64_t size) { return Ranges{{0, size}}; });
  advise(sidecar + "/tree", [&](uint64_t size) {
    const uint64_t ram = ResolveRamBudget(0, array_size);
    return Ranges{{0, kTreeHeaderBytes}, {size > ram + kTreeHeaderBytes ? size - ram : kTreeHeaderBytes, ram}};
  });
}

}  // namespace

Result<std::unique_ptr<BufferedArray>> BufferedArray::Open(const std::string& path, const BufferedArrayOptions& options,
                                                           std::vector<std::string>* notices) {
  if (!options.io.writable) PrefetchReaderFiles(path, SidecarPath(path, options.sidecar));
  std::string notice;
  auto array = ArrayFile::Open(path, options.io, &notice);
  if (!array.ok()) return array.status();
  if (notices && !notice.empty()) notices->push_back(notice);
  auto impl = std::make_unique<Impl>(std::move(array).value(), SidecarPath(path, options.sidecar), options);
  MOMENTA_RETURN_IF_ERROR(options.io.writable ? impl->opening.OpenAsWriter(notices)
                                              : impl->opening.OpenAsReader(notices));
  return std::unique_ptr<BufferedArray>(new BufferedArray(std::move(impl)));
}

Result<BufferCondition> BufferedArray::Inspect(const std::string& path, const BufferedArrayOptions& options) {
  BufferedArrayOptions read_only = options;
  read_only.io.writable = false;
  auto array = ArrayFile::Open(path, read_only.io);
  if (!array.ok()) return array.status();
  Impl self(std::move(array).value(), SidecarPath(path, options.sidecar), read_only);
  return self.opening.Classify();
}

// ---- writers -------------------------------------------------------------------

Status BufferOpening::MakeSidecarAndLock() {
  std::error_code ec;
  std::filesystem::create_directories(s_.sidecar_, ec);
  if (ec) return Status::IOError(s_.sidecar_, ec.message());
  auto lock = LockArrayForWriting(s_.array_->path(), s_.sidecar_);
  if (!lock.ok()) return lock.status();
  s_.lock_ = std::move(lock).value();
  return Status::OK();
}

Status BufferOpening::OpenAsWriter(std::vector<std::string>* notices) {
  const std::string& path = s_.array_->path();
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return Status::FromErrno(path, errno);
  if (st.st_nlink > 1 && s_.options_.sidecar.empty())
    return Status::InvalidArgument(
        path, "the file has " + std::to_string(st.st_nlink) +
                  " names (hard links); momenta keeps one sidecar and one writer lock per name, so updates "
                  "through two names would split the log: update it through a single name with " +
                  s_.options_.sidecar_advice + ", or copy it");
  MOMENTA_RETURN_IF_ERROR(MakeSidecarAndLock());
  MOMENTA_RETURN_IF_ERROR(PrepareWriter(notices));
  MOMENTA_RETURN_IF_ERROR(Recover(notices));
  if (s_.tree_) {
    s_.tree_writable_ = true;
    TreeFileHeader& h = s_.tree_->header();
    h.boot_id = CurrentBootId();
    h.durable_marks = s_.options_.sync != LogSync::kNone ? 1 : 0;
  }
  return Status::OK();
}

// REQUIRES: this process holds the array's writer lock.
Status BufferOpening::PrepareWriter(std::vector<std::string>* notices, bool cut_log) {
  const std::string& path = s_.array_->path();
  auto say = [&](const std::string& what) {
    if (notices) notices->push_back(what);
  };
  auto current = SidecarIdentity::Of(path, s_.array_->header());
  if (!current.ok()) return current.status();
  auto foreign = ForeignSidecarReason();
  if (!foreign.ok()) return foreign.status();
  if (!foreign->empty()) {
    // Renamed while we hold its lock (the lock file moves with it), then a
    // fresh folder with a lock of its own.
    auto aside = SetSidecarAside(s_.sidecar_);
    if (!aside.ok()) return aside.status();
    say("the sidecar " + s_.sidecar_ + " belonged to another array (" + *foreign + "): moved it, with its log, to " +
        *aside + "; starting a fresh one");
    MOMENTA_RETURN_IF_ERROR(MakeSidecarAndLock());
  }
  auto recorded = ReadSidecarIdentity(s_.sidecar_);
  if (!recorded.ok() || !(*recorded == *current)) MOMENTA_RETURN_IF_ERROR(WriteSidecarIdentity(s_.sidecar_, *current));
  RemoveLeftovers(notices);

  LogWriterOptions log_options;
  log_options.dtype = s_.array_->dtype();
  log_options.sync = s_.options_.sync;
  log_options.segment_bytes = s_.options_.log_segment_bytes;
  log_options.cut_torn_tail = cut_log;
  // The buffer's header is a durable record of the last sequence handed out
  // that it reflects: the log never hands it out again, even when segments
  // holding it were removed or cut (and the recovery reports them lost).
  if (Exists(s_.tree_path_))
    if (auto tree = MomentTree::Open(s_.tree_path_, /*writable=*/false, s_.options_.io); tree.ok())
      log_options.min_next_sequence = (*tree)->header().log_sequence + 1;
  auto log = LogWriter::Open(s_.LogDir(), log_options);
  if (!log.ok()) return log.status();
  s_.log_ = std::move(log).value();
  for (const LogDamage& d : s_.log_->recovery().damage) say("update log: " + d.ToString());
  return Status::OK();
}

Result<std::string> BufferOpening::ForeignSidecarReason() {
  const std::string& path = s_.array_->path();
  if (!Exists(s_.sidecar_)) return std::string();
  if (s_.options_.fresh_array) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(s_.sidecar_, ec))
      if (entry.path().filename() != "writer.lock")
        return std::string("the array file was just made in place of the one it describes");
  }
  auto current = SidecarIdentity::Of(path, s_.array_->header());
  if (!current.ok()) return current.status();
  auto recorded = ReadSidecarIdentity(s_.sidecar_);
  if (recorded.ok()) {
    if (!recorded->SameLayout(*current))
      return "it was made for " + recorded->Describe() + "; the array is " + current->Describe();
    if (recorded->SameFile(*current)) return std::string();
    // Another file with the same layout: the same array moved or copied with
    // its sidecar (the buffer knows its size and modification time), or a new
    // one made in its place.
    if (Exists(s_.tree_path_)) {
      auto tree = MomentTree::Open(s_.tree_path_, /*writable=*/false, s_.options_.io);
      auto id = IdentityOf(path);
      if (tree.ok() && id.ok() && (*tree)->header().array.size == id->size &&
          (*tree)->header().array.mtime_ns == id->mtime_ns)
        return std::string();
    }
    return "it was made for inode " + std::to_string(recorded->inode) + " of device " +
           std::to_string(recorded->device) + ", and the file is now inode " + std::to_string(current->inode) +
           " with contents its buffer does not know";
  }
  // No record (a sidecar from before records, or a damaged one): the log's
  // dtype is what can still be checked.
  if (auto logged = LoggedDType(s_.LogDir()); logged && *logged != s_.array_->dtype())
    return "its log holds dtype " + std::string(DTypeName(*logged)) + ", the array is " +
           std::string(DTypeName(s_.array_->dtype()));
  return std::string();
}

void BufferOpening::RemoveLeftovers(std::vector<std::string>* notices) {
  // Scratch files of killed processes: a build's tree.new-PID, a verify's
  // tree.verify-PID, an identity record's identity.tmp-PID.
  RemoveFilesOfDeadProcesses(s_.sidecar_, {"tree.new-", "tree.verify-", "identity.tmp-"}, notices);
}

// ---- readers -------------------------------------------------------------------

Result<BufferCondition> BufferOpening::Classify() {
  using Kind = BufferCondition::Kind;
  // A tree fit to answer from: so is what its kind keeps beside it, or the
  // buffer is rebuilt. A live writer keeps that current under the tree's
  // seqlock: it need not be clean then.
  auto BufferFit = [&](Kind tree_kind) -> Result<BufferCondition> {
    auto why = s_.OpenBuffer(/*require_clean=*/tree_kind == Kind::kCurrent);
    if (!why.ok()) return why.status();
    if (!why->empty()) return BufferCondition{Kind::kRebuild, *why};
    return BufferCondition{tree_kind, ""};
  };
  const std::string& path = s_.array_->path();
  if (!Exists(s_.sidecar_) || !Exists(s_.tree_path_)) return BufferCondition{Kind::kMissing, "it does not exist yet"};
  auto foreign = ForeignSidecarReason();
  if (!foreign.ok()) return foreign.status();
  if (!foreign->empty()) return BufferCondition{Kind::kForeign, *foreign};
  for (int attempt = 0;; ++attempt) {
    s_.tree_writable_ = ::access(s_.tree_path_.c_str(), W_OK) == 0;
    auto tree = MomentTree::Open(s_.tree_path_, s_.tree_writable_, s_.options_.io);
    if (!tree.ok()) return BufferCondition{Kind::kRebuild, tree.status().ToString()};
    s_.tree_ = std::move(tree).value();
    const TreeFileHeader& h = s_.tree_->header();
    if (h.state == kTreeRetired && attempt < 8) continue;  // replaced meanwhile: open the new one
    if (h.length != s_.array_->length() || h.dtype != static_cast<uint32_t>(s_.array_->dtype()))
      return BufferCondition{Kind::kRebuild, "it was built for another array shape or dtype"};
    // A live writer is asked about (one open and fcntl) only where it changes
    // the answer; our own lock is no other writer.
    long pid = 0;
    auto writer_alive = [&] { return !s_.lock_ && WriterIsAlive(s_.LockPath(), &pid); };
    if (h.state == kTreeClean) {
      auto id = IdentityOf(path);
      if (!id.ok()) return id.status();
      if (SameContents(h.array, *id)) return BufferFit(Kind::kCurrent);
      // A live writer moves the array's mtime: its changes are not an outside write.
      if (writer_alive()) return BufferFit(Kind::kLiveWriter);
      return BufferCondition{
          Kind::kRebuild,
          "the array file was modified outside momenta (its size or modification time changed), and the file "
          "system cannot say which elements changed, so every node is recomputed"};
    }
    if (writer_alive()) return BufferFit(Kind::kLiveWriter);
    const std::string who = pid > 0 ? "the last writer (pid " + std::to_string(pid) + ")" : "the last writer";
    if (h.state == kTreeUpdating) return BufferCondition{Kind::kRecover, who + " stopped mid-update"};
    if (h.state == kTreeBuilding) return BufferCondition{Kind::kRebuild, "its last build did not finish"};
    return BufferCondition{Kind::kRebuild, "its state is unknown"};
  }
}

Status BufferOpening::OpenAsReader(std::vector<std::string>* notices) {
  auto condition = Classify();
  if (!condition.ok()) return condition.status();
  if (!condition->NeedsWriter()) return Status::OK();
  return RecoverAsWriter(*condition, notices);
}

Status BufferOpening::RecoverAsWriter(const BufferCondition& why, std::vector<std::string>* notices) {
  using Kind = BufferCondition::Kind;
  const std::string& path = s_.array_->path();
  const char* what = why.kind == Kind::kMissing   ? "has to be built"
                     : why.kind == Kind::kRecover ? "has to be recovered"
                     : why.kind == Kind::kForeign ? "belongs to another array"
                                                  : "has to be rebuilt";
  if (!SidecarWritable(s_.sidecar_))
    return Status::IOError(path, std::string("the moment buffer in ") + s_.sidecar_ + " " + what + " (" + why.why +
                                     "), and this user may not write there: " + s_.options_.build_advice +
                                     " as a user who may, or keep the buffer elsewhere with " +
                                     s_.options_.sidecar_advice + " or MOMENTA_SIDECAR_DIR");
  const auto deadline = std::chrono::steady_clock::now() + kWaitForLiveWriter;
  while (true) {
    std::error_code ec;
    std::filesystem::create_directories(s_.sidecar_, ec);
    if (ec) return Status::IOError(s_.sidecar_, ec.message());
    auto lock = LockArrayForWriting(path, s_.sidecar_);
    if (lock.ok()) {
      s_.lock_ = std::move(lock).value();
      break;
    }
    if (!IsLockedByAnotherWriter(lock.status())) return lock.status();
    // A writer started meanwhile: it recovers; use the buffer once it can be.
    auto again = Classify();
    if (!again.ok()) return again.status();
    if (!again->NeedsWriter()) return Status::OK();
    if (std::chrono::steady_clock::now() > deadline)
      return Status::IOError(path, "the moment buffer " + std::string(what) +
                                       " and another writer holds the lock without doing it; try again");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // The lock is ours: look again (a writer may have finished the work since).
  auto again = Classify();
  Status s = again.status();
  if (s.ok() && (again->NeedsWriter() || !s_.forced_rebuild_.empty())) {
    // A reader's recovery: the log is read, never cut (its next writer cuts
    // a torn tail).
    s = PrepareWriter(notices, /*cut_log=*/false);
    if (s.ok()) s = Recover(notices);
    if (s.ok() && s_.log_) s = s_.log_->Close();
    s_.open_report_.recovered = s.ok();
  }
  // A reader again: no log, no writable array mapping, no lock.
  s_.log_.reset();
  s_.store_.reset();
  s_.dirty_ = false;
  s_.lock_.reset();
  s_.tree_writable_ = true;
  return s;
}

}  // namespace momenta
