#include "agent/workloads/randio/block_verify.h"

#include <cstring>
#include <string>

#include "common/crc32c.h"
#include "common/memory_estimate.h"
#include "common/strings.h"
#include "common/workloads/randio/randio_spec.h"
#include "fmt/format.h"

namespace stormark::agent {

static_assert(VerifyBook::kMaxUnits == common::kVerifyMaxUnits &&
                  sizeof(uint32_t) == common::kVerifyBytesPerUnit,
              "common/memory_estimate.h counts the book");

namespace {

constexpr char kMagic[4] = {'S', 'M', 'V', '1'};

struct Header {
  uint64_t offset;
  uint32_t crc, salt, generation, job, unit;
  bool magic_ok;
};

Header Parse(const char* p) {
  Header h{};
  h.magic_ok = std::memcmp(p, kMagic, 4) == 0;
  std::memcpy(&h.crc, p + 4, 4);
  std::memcpy(&h.offset, p + 8, 8);
  std::memcpy(&h.salt, p + 16, 4);
  std::memcpy(&h.generation, p + 20, 4);
  std::memcpy(&h.job, p + 24, 4);
  std::memcpy(&h.unit, p + 28, 4);
  return h;
}

std::string Generation(uint32_t generation) {
  return generation == 1 ? "generation 1 (the layout before the run)"
                         : common::StrCat("generation ", generation);
}

}  // namespace

VerifyBook::VerifyBook(uint64_t base, uint64_t size, uint32_t unit, uint32_t salt)
    : base_(base), unit_(unit), salt_(salt), expected_(size / unit, 0) {
  report_.set_unit_bytes(unit);
}

void VerifyBook::Stamp(char* buf, uint64_t offset, uint32_t n, uint32_t generation,
                       uint32_t job) const {
  for (uint32_t at = 0; at + unit_ <= n; at += unit_) {
    char* p = buf + at;
    const uint64_t unit_offset = offset + at;
    std::memcpy(p, kMagic, 4);
    std::memcpy(p + 8, &unit_offset, 8);
    std::memcpy(p + 16, &salt_, 4);
    std::memcpy(p + 20, &generation, 4);
    std::memcpy(p + 24, &job, 4);
    std::memcpy(p + 28, &unit_, 4);
    const uint32_t crc = common::Crc32c(0, p + 8, unit_ - 8);
    std::memcpy(p + 4, &crc, 4);
  }
}

void VerifyBook::Written(uint64_t offset, uint32_t n, uint32_t generation) {
  const uint64_t first = (offset - base_) / unit_;
  for (uint64_t u = first; u < first + n / unit_ && u < expected_.size(); ++u) {
    expected_[u] = generation;
  }
}

uint64_t VerifyBook::Check(const char* buf, uint64_t offset, uint32_t n, const char* during) {
  struct Found {
    uint64_t unit;  // index in expected_
    stormark::v1::VerifyMismatch mismatch;
  };
  std::vector<Found> found;
  std::vector<uint64_t> good;  // units of this buffer that matched
  uint64_t checked = 0;
  for (uint32_t at = 0; at + unit_ <= n; at += unit_) {
    const uint64_t unit_offset = offset + at;
    if (unit_offset < base_) continue;
    const uint64_t index = (unit_offset - base_) / unit_;
    if (index >= expected_.size() || expected_[index] == 0) continue;
    ++checked;
    const uint32_t want = expected_[index];
    const char* p = buf + at;
    const Header h = Parse(p);
    stormark::v1::VerifyMismatch m;
    m.set_offset(unit_offset);
    m.set_during(during);
    if (!h.magic_ok) {
      m.set_kind("corrupt");
      m.set_field("magic");
      m.set_expected("a stormark header");
      uint64_t first_bytes;
      std::memcpy(&first_bytes, p, 8);
      m.set_actual(fmt::format("no header (first bytes {:016x})", first_bytes));
    } else if (common::Crc32c(0, p + 8, unit_ - 8) != h.crc) {
      const bool ours = h.offset == unit_offset && h.salt == salt_;
      m.set_kind(ours ? "torn" : "corrupt");
      m.set_field("checksum");
      m.set_expected(fmt::format("crc32c {:08x} (as its header says)", h.crc));
      m.set_actual(
          fmt::format("crc32c {:08x} over the unit{}", common::Crc32c(0, p + 8, unit_ - 8),
                      ours ? common::StrCat("; header of ", Generation(h.generation)) : ""));
    } else if (h.offset != unit_offset) {
      m.set_kind("misdirected");
      m.set_field("offset");
      m.set_expected(common::StrCat("offset ", unit_offset));
      m.set_actual(common::StrCat("offset ", h.offset, " (", Generation(h.generation),
                                  ": a write meant for there landed here)"));
    } else if (h.salt != salt_) {
      m.set_kind("stale");
      m.set_field("generation");
      m.set_expected(Generation(want));
      m.set_actual("data from an earlier run (a lost write)");
    } else if (h.generation != want) {
      m.set_kind(h.generation < want ? "stale" : "corrupt");
      m.set_field("generation");
      m.set_expected(Generation(want));
      m.set_actual(common::StrCat(Generation(h.generation), h.generation < want
                                                                ? " (a lost write)"
                                                                : " (newer than written)"));
    } else {
      good.push_back(index);
      continue;
    }
    found.push_back({index, std::move(m)});
  }
  // A stale unit next to a current unit of the same write: part of that write arrived.
  for (Found& f : found) {
    if (f.mismatch.kind() != "stale") continue;
    for (uint64_t g : good) {
      if (expected_[g] == expected_[f.unit]) {
        f.mismatch.set_kind("torn");
        f.mismatch.set_actual(f.mismatch.actual() + "; other units of the same write arrived");
        break;
      }
    }
  }
  checked_.fetch_add(checked, std::memory_order_relaxed);
  if (!found.empty()) {
    absl::MutexLock lock(&mu_);
    report_.set_mismatches(report_.mismatches() + found.size());
    for (Found& f : found) {
      if (report_.first_mismatches_size() < kMaxReported) {
        *report_.add_first_mismatches() = std::move(f.mismatch);
      }
    }
  }
  return found.size();
}

stormark::v1::VerifyReport VerifyBook::Report() const {
  absl::MutexLock lock(&mu_);
  stormark::v1::VerifyReport report = report_;
  report.set_units_checked(checked_.load(std::memory_order_relaxed));
  return report;
}

}  // namespace stormark::agent
