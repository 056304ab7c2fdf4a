// randio's verify around the timed region: the data laid out before it (every unit of each
// verifying job's regions stamped with its offset and generation 1), and everything read back
// and checked after it. The checks of each unit are VerifyBook's (block_verify.h).
#include <algorithm>
#include <utility>

#include "agent/devices/io_buffer.h"
#include "agent/workloads/randio/randio.h"
#include "common/memory_estimate.h"
#include "common/random.h"
#include "common/strings.h"
#include "common/units.h"
#include "common/workloads/randio/randio_spec.h"

namespace stormark::agent {

using common::Status;

Status RandioWorkload::SetUpVerify(const std::atomic<bool>& cancelled) {
  // The jobs' regions as resolved on this device, and the unit the verifying jobs share.
  std::vector<common::RandioJobRegions> regions;
  uint32_t unit = 4096;
  bool any = false;
  for (const Member& m : members_) {
    common::RandioJobRegions r = common::RegionsOf(m.spec).front();
    r.offset = m.offset;
    r.offset_increment = m.offset_increment;
    r.size = m.region_size;
    r.threads = m.jobs_count;
    r.known = true;
    regions.push_back(std::move(r));
    if (!m.spec.verify()) continue;
    any = true;
    unit = std::min(unit, common::VerifyUnitOf(m.bs_min, m.spec.blockalign(), m.offset,
                                               m.offset_increment, m.region_size));
  }
  if (!any) return absl::OkStatus();
  if (auto conflict = common::FindVerifyConflict(regions)) {
    return absl::InvalidArgumentError(
        common::StrCat("randio: on ", device_->Describe(), ": ",
                       common::DescribeVerifyConflict(regions, *conflict)));
  }
  // One salt for the phase: two verifying readers of the same bytes check the same layout.
  uint64_t salt_state = seed_;
  const auto salt = static_cast<uint32_t>(common::SplitMix64(&salt_state));
  for (Member& m : members_) {
    if (!m.spec.verify()) continue;
    const uint64_t span = m.SpanEnd() - m.offset;
    if (span / unit > VerifyBook::kMaxUnits) {
      return absl::InvalidArgumentError(common::StrCat(
          "randio: ", members_.size() > 1 ? common::StrCat("job '", m.spec.name(), "': ") : "",
          "verify tracks at most ", VerifyBook::kMaxUnits, " units of ", unit, " bytes (",
          common::FormatBytes(VerifyBook::kMaxUnits * unit), "); the region is ",
          common::FormatBytes(span)));
    }
    m.book = std::make_unique<VerifyBook>(m.offset, span, unit, salt);
  }

  constexpr uint32_t kChunk = common::kLayoutChunkBytes;
  ASSIGN_OR_RETURN(IoBuffer buf, IoBuffer::Allocate(kChunk));
  common::Xoshiro256 random(seed_ ^ 0x1a7047);
  // What the layout covers, for WrittenFromStart.
  std::vector<std::pair<uint64_t, uint64_t>> laid;
  for (Member& m : members_) {
    if (m.book == nullptr) continue;
    VerifyBook& book = *m.book;
    const uint32_t generation = book.NextGeneration();
    for (uint32_t j = 0; j < m.jobs_count; ++j) {
      const uint64_t begin = m.offset + uint64_t{j} * m.offset_increment;
      const uint64_t end = begin + m.region_size;
      laid.emplace_back(begin, end);
      for (uint64_t at = begin; at < end;) {
        if (cancelled.load(std::memory_order_relaxed)) {
          return absl::CancelledError("randio: aborted while laying out verifiable data");
        }
        const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(kChunk, end - at));
        random.Fill(buf.data(), n);
        book.Stamp(buf.data(), at, n, generation, UINT32_MAX);
        RETURN_IF_ERROR(device_->WriteAt(at, n, buf.data()));
        book.Written(at, n, generation);
        at += n;
      }
    }
  }
  RETURN_IF_ERROR(device_->Flush(/*data_only=*/true));
  // A layout that is a prefix of the device (from offset 0, without a gap) is one a later
  // phase need not lay out again (a file in a dir target is the phase's own, and goes with it).
  std::sort(laid.begin(), laid.end());
  uint64_t covered = 0, last = 0;
  for (const auto& [begin, end] : laid) {
    if (begin <= covered) covered = std::max(covered, end);
    last = std::max(last, end);
  }
  if (dir_ == nullptr && covered > 0 && covered == last) {
    laid_out_.bytes = covered;
    laid_out_.device_size = device_->size();
    laid_out_.how = "randio's verify layout";
  }
  return absl::OkStatus();
}

Status RandioWorkload::ReadBack(VerifyBook& book, const std::atomic<bool>& cancelled) {
  constexpr uint32_t kChunk = common::kLayoutChunkBytes;
  ASSIGN_OR_RETURN(IoBuffer buf, IoBuffer::Allocate(kChunk));
  const uint64_t end = book.base() + book.size();
  for (uint64_t at = book.base(); at < end;) {
    if (cancelled.load(std::memory_order_relaxed)) {
      return absl::CancelledError("randio: aborted while reading back for verification");
    }
    const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(kChunk, end - at));
    RETURN_IF_ERROR(device_->ReadAt(at, n, buf.data()));
    book.Check(buf.data(), at, n, "read-back");
    at += n;
  }
  return absl::OkStatus();
}

std::optional<stormark::v1::VerifyReport> RandioWorkload::VerifyTotals() const {
  std::optional<stormark::v1::VerifyReport> total;
  for (const Member& m : members_) {
    if (m.book == nullptr) continue;
    const stormark::v1::VerifyReport own = m.book->Report();
    if (!total) {
      total = own;
      continue;
    }
    total->set_units_checked(total->units_checked() + own.units_checked());
    total->set_mismatches(total->mismatches() + own.mismatches());
    for (const auto& mismatch : own.first_mismatches()) {
      if (total->first_mismatches_size() >= VerifyBook::kMaxReported) break;
      *total->add_first_mismatches() = mismatch;
    }
  }
  return total;
}

}  // namespace stormark::agent
