#include "common/spec_check.h"
#include "common/workloads/postmark/postmark_spec.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "common/strings.h"
#include "common/units.h"

namespace stormark::common {

stormark::v1::PostmarkSpec WithPostmarkDefaults(stormark::v1::PostmarkSpec spec) {
  if (spec.number() == 0) spec.set_number(kPostmarkNumber);
  if (spec.min_size_bytes() == 0 && spec.max_size_bytes() == 0) {
    spec.set_min_size_bytes(kPostmarkMinSize);
    spec.set_max_size_bytes(kPostmarkMaxSize);
  }
  if (spec.transactions() == 0) spec.set_transactions(kPostmarkTransactions);
  if (spec.read_block_size() == 0) spec.set_read_block_size(kPostmarkBlockSize);
  if (spec.write_block_size() == 0) spec.set_write_block_size(kPostmarkBlockSize);
  if (!spec.has_bias_read()) spec.set_bias_read(kPostmarkBias);
  if (!spec.has_bias_create()) spec.set_bias_create(kPostmarkBias);
  if (spec.seed() == 0) spec.set_seed(kPostmarkSeed);
  if (spec.report() == stormark::v1::PostmarkSpec::REPORT_UNSPECIFIED) {
    spec.set_report(stormark::v1::PostmarkSpec::VERBOSE);
  }
  return spec;
}

Status CheckPostmarkSpec(const stormark::v1::PostmarkSpec& spec) {
  if (spec.number() > kMaxPostmarkFiles) {
    return absl::InvalidArgumentError(
        StrCat("postmark: number ", spec.number(), " is over the limit of ", kMaxPostmarkFiles));
  }
  const uint64_t low = spec.min_size_bytes();
  const uint64_t high = spec.max_size_bytes();
  if (low != 0 || high != 0) {
    if (low == 0) return absl::InvalidArgumentError("postmark: size low bound must be at least 1");
    if (low > high) {
      return absl::InvalidArgumentError(
          StrCat("postmark: size low bound ", low, " is above the high bound ", high));
    }
    if (high > kMaxPostmarkFileSize) {
      return absl::InvalidArgumentError(StrCat("postmark: size high bound ", FormatSizeShort(high),
                                               " is over the limit of ",
                                               FormatSizeShort(kMaxPostmarkFileSize)));
    }
  }
  if (spec.subdirectories() > kMaxPostmarkSubdirectories) {
    return absl::InvalidArgumentError(StrCat("postmark: subdirectories ", spec.subdirectories(),
                                             " is over the limit of ", kMaxPostmarkSubdirectories));
  }
  for (const auto& [name, value] :
       {std::pair{"read", spec.read_block_size()}, std::pair{"write", spec.write_block_size()}}) {
    if (value > kMaxBlockSize) {
      return absl::InvalidArgumentError(StrCat("postmark: ", name, " block size ",
                                               FormatSizeShort(value), " is over the limit of ",
                                               FormatSizeShort(kMaxBlockSize)));
    }
  }
  for (const auto& [name, has, value] :
       {std::tuple{"read", spec.has_bias_read(), spec.bias_read()},
        std::tuple{"create", spec.has_bias_create(), spec.bias_create()}}) {
    if (has && (value < -1 || value > 10)) {
      return absl::InvalidArgumentError(
          StrCat("postmark: bias ", name, " ", value, " is out of range (0-10, or -1 to disable)"));
    }
  }
  if (spec.seed() > kMaxPostmarkSeed) {
    return absl::InvalidArgumentError(
        StrCat("postmark: seed ", spec.seed(), " is over PostMark's limit of ", kMaxPostmarkSeed));
  }
  return absl::OkStatus();
}

MemoryEstimate EstimateMemory(const stormark::v1::PostmarkSpec& spec) {
  MemoryEstimate e{"postmark", {}};
  const stormark::v1::PostmarkSpec p = WithPostmarkDefaults(spec);
  e.parts.push_back(
      {"the file table", SaturatingMul(SaturatingMul(2, p.number()), kPostmarkBytesPerSlot),
       StrCat("2 x number ", p.number(), " x ", kPostmarkBytesPerSlot, " bytes per slot"),
       "number"});
  const uint64_t live = uint64_t{p.number()} + std::min(p.number(), p.transactions());
  e.parts.push_back(
      {"file names", SaturatingMul(live, kDirBytesPerName),
       StrCat("up to ", live, " files at once (number ", p.number(),
              " + transactions, at most 2 x number) x ", kDirBytesPerName, " bytes per name"),
       "number"});
  e.parts.push_back({"the text files are written from", p.max_size_bytes(),
                     StrCat("size high bound ", FormatBytes(p.max_size_bytes())), "size"});
  e.parts.push_back({"the read buffer", p.read_block_size(),
                     StrCat("read block size ", FormatBytes(p.read_block_size())),
                     "read block size"});
  // One histogram per kind of operation and part of the run.
  e.parts.push_back(
      {"recorders", SaturatingMul(8, HistogramBytes()), "8 latency histograms", "number"});
  return e;
}

}  // namespace stormark::common
