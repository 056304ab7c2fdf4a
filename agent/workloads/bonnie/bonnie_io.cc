#include "agent/workloads/bonnie/bonnie_io.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <functional>
#include <latch>
#include <memory>
#include <thread>
#include <vector>

#include "agent/runner/thread_top.h"
#include "agent/workloads/fd.h"
#include "common/strings.h"

namespace stormark::agent {
namespace {

using common::Status;
using common::StatusOr;
using stormark::v1::Measurement;

// Salts that give each use of the seed its own sequence.
constexpr uint64_t kBufferSalt = 0xb0b0'0000'0000'0001ULL;
constexpr uint64_t kSeekSalt = 0xb0b0'0000'0000'0002ULL;

Status SeekTo(File& file, int64_t offset, int whence, const char* test) {
  if (const int64_t r = file.Seek(offset, whence); r < 0) {
    return common::ErrnoError(common::StrCat("bonnie ", test, ": lseek"), static_cast<int>(-r));
  }
  return absl::OkStatus();
}

// fsync then close: bonnie++ ends every I/O test this way, inside the timed region.
Status SyncAndClose(File& file, const char* test) {
  if (const int err = file.Sync(); err != 0) {
    return common::ErrnoError(common::StrCat("bonnie ", test, ": fsync"), -err);
  }
  if (const int err = file.Close(); err != 0) {
    return common::ErrnoError(common::StrCat("bonnie ", test, ": close"), -err);
  }
  return absl::OkStatus();
}

}  // namespace

BonnieIoTests::BonnieIoTests(const BonnieParams& params, Dir* target, RunContext& ctx,
                             common::Recorder* recorder)
    : params_(params), target_(target), ctx_(ctx), recorder_(recorder) {}

int BonnieIoTests::BlockFlags() const { return params_.direct ? O_DIRECT : 0; }

Status BonnieIoTests::CheckCancelled(const char* test) const {
  if (ctx_.cancelled.load(std::memory_order_relaxed)) {
    return absl::CancelledError(common::StrCat("bonnie: aborted during ", test));
  }
  return absl::OkStatus();
}

// The per-character tests write and read at an explicit offset (pwrite/pread of one byte) where
// bonnie++ 2.00 writes and reads at the file position (write/read). The filesystem does the same
// work; the difference is the file position's lock: the kernel takes it for read(2) and write(2)
// when other threads could share the open file, which in the agent (gRPC's threads) is always
// and in single-threaded bonnie++ never. With read/write the agent's per-character figures were
// 8-12% under bonnie++'s (perf: fdget_pos and mutex_lock), with pread/pwrite within 5%.
StatusOr<Measurement> BonnieIoTests::Putc() {
  ASSIGN_OR_RETURN(std::unique_ptr<File> file, target_->CreateFile(kBonnieDataFile, O_WRONLY));
  TestMeter meter("putc", ctx_.clock, recorder_);
  meter.Start();
  for (uint64_t done = 0; done < params_.char_size_bytes;) {
    RETURN_IF_ERROR(CheckCancelled("putc"));
    const uint64_t piece = std::min(kBonnieCharPiece, params_.char_size_bytes - done);
    const int64_t start = meter.Now();
    for (uint64_t i = 0; i < piece; ++i) {
      // One system call per character, as bonnie++ 2.00's write(2) of one byte (see above).
      const char c = static_cast<char>(i & 0x7f);
      if (const ssize_t n = file->WriteAt(&c, 1, done + i); n != 1) {
        return n < 0 ? common::ErrnoError("bonnie putc: write", static_cast<int>(-n))
                     : absl::DataLossError("bonnie putc: a one-byte write wrote nothing");
      }
    }
    meter.Op(start, piece);
    done += piece;
  }
  RETURN_IF_ERROR(SyncAndClose(*file, "putc"));
  Measurement m = meter.Stop();
  m.set_ops(m.bytes());  // bonnie++ counts characters.
  return m;
}

StatusOr<Measurement> BonnieIoTests::PutBlock() {
  if (buf_.data() == nullptr) {
    RETURN_IF_ERROR(buf_.Allocate(params_.chunk_size, params_.seed ^ kBufferSalt));
  }
  // bonnie++ unlinks the file and creates it afresh, outside the timed region.
  Status removed = target_->RemoveFile(kBonnieDataFile);
  if (!removed.ok() && !absl::IsNotFound(removed)) return removed;
  ASSIGN_OR_RETURN(std::unique_ptr<File> file,
                   target_->CreateFile(kBonnieDataFile, O_WRONLY | BlockFlags()));
  const uint32_t chunk = params_.chunk_size;
  char* buf = buf_.data();
  TestMeter meter("put_block", ctx_.clock, recorder_);
  meter.Start();
  for (uint64_t offset = 0; offset < params_.size_bytes; offset += chunk) {
    RETURN_IF_ERROR(CheckCancelled("put_block"));
    // Every chunk differs: it carries its own offset, so storage cannot deduplicate it.
    std::memcpy(buf, &offset, std::min<size_t>(sizeof(offset), chunk));
    const int64_t start = meter.Now();
    RETURN_IF_ERROR(WriteChunk(*file, buf, chunk, "put_block"));
    meter.Op(start, chunk);
  }
  RETURN_IF_ERROR(SyncAndClose(*file, "put_block"));
  return meter.Stop();
}

StatusOr<Measurement> BonnieIoTests::Rewrite() {
  if (buf_.data() == nullptr) {
    RETURN_IF_ERROR(buf_.Allocate(params_.chunk_size, params_.seed ^ kBufferSalt));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<File> file,
                   target_->OpenFile(kBonnieDataFile, O_RDWR | BlockFlags()));
  const uint32_t chunk = params_.chunk_size;
  char* buf = buf_.data();
  uint32_t dirty = 0;
  TestMeter meter("rewrite", ctx_.clock, recorder_);
  meter.Start();
  for (uint64_t offset = 0; offset < params_.size_bytes; offset += chunk) {
    RETURN_IF_ERROR(CheckCancelled("rewrite"));
    const int64_t start = meter.Now();
    RETURN_IF_ERROR(ReadChunk(*file, buf, chunk, "rewrite"));
    ++buf[dirty];
    dirty = (dirty + 1) % chunk;
    RETURN_IF_ERROR(SeekTo(*file, -static_cast<int64_t>(chunk), SEEK_CUR, "rewrite"));
    RETURN_IF_ERROR(WriteChunk(*file, buf, chunk, "rewrite"));
    meter.Op(start, chunk);
  }
  RETURN_IF_ERROR(SyncAndClose(*file, "rewrite"));
  return meter.Stop();
}

StatusOr<Measurement> BonnieIoTests::Getc() {
  ASSIGN_OR_RETURN(std::unique_ptr<File> file, target_->OpenFile(kBonnieDataFile, O_RDONLY));
  TestMeter meter("getc", ctx_.clock, recorder_);
  meter.Start();
  for (uint64_t done = 0; done < params_.char_size_bytes;) {
    RETURN_IF_ERROR(CheckCancelled("getc"));
    const uint64_t piece = std::min(kBonnieCharPiece, params_.char_size_bytes - done);
    const int64_t start = meter.Now();
    for (uint64_t i = 0; i < piece; ++i) {
      // One system call per character, as bonnie++ 2.00's read(2) of one byte (see Putc).
      char c;
      if (const ssize_t n = file->ReadAt(&c, 1, done + i); n != 1) {
        return n < 0 ? common::ErrnoError("bonnie getc: read", static_cast<int>(-n))
                     : absl::DataLossError(
                           "bonnie getc: the data file ended before the "
                           "expected size");
      }
    }
    meter.Op(start, piece);
    done += piece;
  }
  if (const int err = file->Close(); err != 0) {
    return common::ErrnoError("bonnie getc: close", -err);
  }
  Measurement m = meter.Stop();
  m.set_ops(m.bytes());  // bonnie++ counts characters.
  return m;
}

StatusOr<Measurement> BonnieIoTests::GetBlock() {
  if (buf_.data() == nullptr) {
    RETURN_IF_ERROR(buf_.Allocate(params_.chunk_size, params_.seed ^ kBufferSalt));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<File> file,
                   target_->OpenFile(kBonnieDataFile, O_RDONLY | BlockFlags()));
  const uint32_t chunk = params_.chunk_size;
  TestMeter meter("get_block", ctx_.clock, recorder_);
  meter.Start();
  for (uint64_t offset = 0; offset < params_.size_bytes; offset += chunk) {
    RETURN_IF_ERROR(CheckCancelled("get_block"));
    const int64_t start = meter.Now();
    RETURN_IF_ERROR(ReadChunk(*file, buf_.data(), chunk, "get_block"));
    meter.Op(start, chunk);
  }
  if (const int err = file->Close(); err != 0) {
    return common::ErrnoError("bonnie get_block: close", -err);
  }
  return meter.Stop();
}

namespace {

// The seekers' tickets, as bonnie++ 2.00 hands them out: one 8-byte ticket per seek, the
// chunk to read, written down a pipe that every seeker reads; kNoMoreSeeks ends a seeker.
// The pipe is part of what bonnie++'s figure measures (a read(2) per seek, and the
// seekers' contention on the pipe), so it is part of ours.
constexpr uint64_t kNoMoreSeeks = ~uint64_t{0};
// Tickets are written in pieces of this many bytes: under PIPE_BUF, so each write is atomic
// and a reader never sees part of a ticket.
constexpr size_t kTicketBatch = 512;

// Writes every ticket, then one kNoMoreSeeks per seeker, to the non-blocking `fd`. Returns 0
// or the errno; ECANCELED when `stop` said to stop while the pipe was full (a seeker failed,
// or the phase was cancelled, and the seekers no longer read).
int WriteTickets(int fd, uint64_t seed, uint64_t seeks, uint64_t chunks, uint32_t seekers,
                 const std::function<bool()>& stop) {
  std::vector<uint64_t> batch;
  batch.reserve(kTicketBatch);
  const uint64_t total = seeks + seekers;
  for (uint64_t i = 0; i < total;) {
    batch.clear();
    for (; i < total && batch.size() < kTicketBatch; ++i) {
      batch.push_back(i < seeks ? BonnieRandom::At(seed, i) % chunks : kNoMoreSeeks);
    }
    const char* p = reinterpret_cast<const char*>(batch.data());
    size_t left = batch.size() * sizeof(uint64_t);
    while (left > 0) {
      const ssize_t n = write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) {
        if (stop()) return ECANCELED;
        pollfd ready{.fd = fd, .events = POLLOUT, .revents = 0};
        poll(&ready, 1, 50);
        continue;
      }
      if (n < 0) return errno;
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  return 0;
}

// The next ticket from the pipe; kNoMoreSeeks at its end.
StatusOr<uint64_t> ReadTicket(int fd) {
  uint64_t ticket = 0;
  char* p = reinterpret_cast<char*>(&ticket);
  size_t got = 0;
  while (got < sizeof(ticket)) {
    const ssize_t n = read(fd, p + got, sizeof(ticket) - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return common::ErrnoError("bonnie seeks: read ticket", errno);
    if (n == 0) return kNoMoreSeeks;
    got += static_cast<size_t>(n);
  }
  return ticket;
}

}  // namespace

StatusOr<Measurement> BonnieIoTests::Seeks() {
  struct Seeker {
    std::unique_ptr<File> file;
    AlignedBuffer buf;
    common::Recorder* recorder = nullptr;
    common::LatencyHistogram latency;
    uint64_t bytes = 0;
    uint64_t ops = 0;
    Status status;
  };
  const uint32_t chunk = params_.chunk_size;
  const uint64_t chunks = params_.size_bytes / chunk;
  // Set-up outside the timed region, as bonnie++'s seeker processes open the file first.
  std::vector<Seeker> seekers(params_.seekers);
  for (uint32_t i = 0; i < params_.seekers; ++i) {
    ASSIGN_OR_RETURN(seekers[i].file, target_->OpenFile(kBonnieDataFile, O_RDWR | BlockFlags()));
    RETURN_IF_ERROR(seekers[i].buf.Allocate(chunk, params_.seed ^ kBufferSalt ^ i));
    seekers[i].recorder = ctx_.recorders.Add();
  }
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return common::ErrnoError("bonnie seeks: pipe", errno);
  // Only the writer's end is non-blocking: the seekers wait for their tickets.
  fcntl(pipe_fds[1], F_SETFL, O_NONBLOCK);
  Fd tickets_out(pipe_fds[0]);
  Fd tickets_in(pipe_fds[1]);

  std::atomic<bool> failed{false};
  std::latch ready(params_.seekers + 1);
  const common::Clock& clock = ctx_.clock;
  auto seek = [&](Seeker& s) -> Status {
    char* buf = s.buf.data();
    File& file = *s.file;
    // As bonnie++'s seekers: the first of every ten seeks of each seeker also writes.
    for (uint64_t count = 0;; ++count) {
      if (failed.load(std::memory_order_relaxed)) return absl::OkStatus();
      RETURN_IF_ERROR(CheckCancelled("seeks"));
      ASSIGN_OR_RETURN(const uint64_t block, ReadTicket(tickets_out.get()));
      if (block == kNoMoreSeeks) break;
      const bool update = count % kBonnieUpdateEvery == 0;
      const int64_t offset = static_cast<int64_t>(block * chunk);
      const int64_t start = clock.MonotonicNanos();
      RETURN_IF_ERROR(SeekTo(file, offset, SEEK_SET, "seeks"));
      RETURN_IF_ERROR(ReadChunk(file, buf, chunk, "seeks"));
      uint64_t bytes = chunk;
      if (update) {
        --buf[block % chunk];
        RETURN_IF_ERROR(SeekTo(file, offset, SEEK_SET, "seeks"));
        RETURN_IF_ERROR(WriteChunk(file, buf, chunk, "seeks"));
        if (params_.fsync_every_write) {
          if (const int err = file.Sync(); err != 0) {
            return common::ErrnoError("bonnie seeks: fsync", -err);
          }
        }
        bytes += chunk;
      }
      const int64_t end = clock.MonotonicNanos();
      const uint64_t latency = static_cast<uint64_t>(end - start);
      s.latency.Record(latency);
      s.recorder->Record(end, latency, bytes);
      s.bytes += bytes;
      ++s.ops;
    }
    return SyncAndClose(file, "seeks");
  };

  std::vector<std::thread> threads;
  threads.reserve(seekers.size());
  Status start_error;
  for (Seeker& s : seekers) {
    try {
      threads.emplace_back([&] {
        ready.arrive_and_wait();
        s.status = CatchAtThreadTop("bonnie seeks", [&] { return seek(s); });
        if (!s.status.ok()) failed = true;
      });
    } catch (const std::exception& e) {  // std::system_error, std::bad_alloc
      // The seekers started stop at once; the test fails.
      start_error = absl::ResourceExhaustedError(
          common::StrCat("bonnie seeks: cannot start seeker thread ", threads.size() + 1, " of ",
                         seekers.size(), ": ", e.what(), " (lower seekers)"));
      failed = true;
      ready.count_down(static_cast<std::ptrdiff_t>(seekers.size() - threads.size()));
      break;
    }
  }
  ready.arrive_and_wait();
  TestMeter meter("seeks", ctx_.clock, recorder_);
  meter.Start();
  // The seekers wait on the pipe until the first ticket arrives, as bonnie++'s do. A seeker
  // that failed stops reading; closing the pipe's far end then ends the others.
  int written = 0;
  if (start_error.ok()) {
    written = WriteTickets(tickets_in.get(), params_.seed ^ kSeekSalt, params_.seeks, chunks,
                           params_.seekers, [&] { return failed.load() || ctx_.cancelled.load(); });
  }
  tickets_in.Close("bonnie seeks: close the ticket pipe").IgnoreError();
  for (std::thread& t : threads) t.join();
  RETURN_IF_ERROR(start_error);
  for (const Seeker& s : seekers) {
    if (!s.status.ok()) return s.status;
  }
  RETURN_IF_ERROR(CheckCancelled("seeks"));
  if (written != 0) return common::ErrnoError("bonnie seeks: write tickets", written);
  for (const Seeker& s : seekers) meter.Absorb(s.latency, s.bytes, s.ops);
  return meter.Stop();
}

Status BonnieIoTests::RemoveDataFile() { return target_->RemoveFile(kBonnieDataFile); }

}  // namespace stormark::agent
