#include "controller/workloads/postmark_params.h"

#include <charconv>
#include <vector>

#include "common/spec_check.h"
#include "common/strings.h"
#include "common/units.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;
using stormark::v1::PostmarkSpec;

// A whole number in [min, max]; the error names the parameter and the range.
StatusOr<int64_t> ParseWhole(std::string_view key, std::string_view value, int64_t min,
                             int64_t max) {
  int64_t n = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (error != std::errc() || end != value.data() + value.size() || n < min || n > max) {
    return absl::InvalidArgumentError(
        StrCat("bad ", key, " '", value, "': expected a whole number from ", min, " to ", max));
  }
  return n;
}

// A byte count in [1, max], with k/M suffixes.
StatusOr<uint64_t> ParseBytes(std::string_view key, std::string_view value, uint64_t max) {
  StatusOr<uint64_t> n = common::ParseSize(value);
  if (!n.ok()) return absl::InvalidArgumentError(StrCat(key, ": ", n.status().message()));
  if (*n == 0 || *n > max) {
    return absl::InvalidArgumentError(StrCat("bad ", key, " '", value, "': expected 1 to ",
                                             common::FormatSizeShort(max), " bytes"));
  }
  return n;
}

// LOW:HIGH, or one size for both.
Status ParseSizes(std::string_view value, PostmarkSpec* spec) {
  const std::vector<std::string_view> parts = common::Split(value, ':');
  if (parts.size() > 2) {
    return absl::InvalidArgumentError(
        StrCat("bad size '", value, "': expected LOW:HIGH in bytes, such as 1000:9000"));
  }
  ASSIGN_OR_RETURN(uint64_t low, ParseBytes("size", parts[0], common::kMaxPostmarkFileSize));
  uint64_t high = low;
  if (parts.size() == 2) {
    ASSIGN_OR_RETURN(high, ParseBytes("size", parts[1], common::kMaxPostmarkFileSize));
  }
  if (low > high) {
    return absl::InvalidArgumentError(
        StrCat("bad size '", value, "': the low bound is above the high bound"));
  }
  spec->set_min_size_bytes(low);
  spec->set_max_size_bytes(high);
  return absl::OkStatus();
}

}  // namespace

Status SetPostmarkParameter(std::string_view key, std::string_view value, PostmarkSpec* spec) {
  if (key == "number") {
    ASSIGN_OR_RETURN(int64_t n, ParseWhole(key, value, 1, common::kMaxPostmarkFiles));
    spec->set_number(static_cast<uint32_t>(n));
  } else if (key == "size") {
    RETURN_IF_ERROR(ParseSizes(value, spec));
  } else if (key == "transactions") {
    ASSIGN_OR_RETURN(int64_t n, ParseWhole(key, value, 1, UINT32_MAX));
    spec->set_transactions(static_cast<uint32_t>(n));
  } else if (key == "subdirectories") {
    ASSIGN_OR_RETURN(int64_t n, ParseWhole(key, value, 0, common::kMaxPostmarkSubdirectories));
    spec->set_subdirectories(static_cast<uint32_t>(n));
  } else if (key == "read" || key == "write") {
    ASSIGN_OR_RETURN(uint64_t n, ParseBytes(key, value, common::kMaxStreamBlockSize));
    if (key == "read") {
      spec->set_read_block_size(static_cast<uint32_t>(n));
    } else {
      spec->set_write_block_size(static_cast<uint32_t>(n));
    }
  } else if (key == "buffering") {
    ASSIGN_OR_RETURN(bool buffered, common::ParseBool(key, value));
    spec->set_unbuffered(!buffered);
  } else if (key == "bias_read") {
    ASSIGN_OR_RETURN(int64_t n, ParseWhole(key, value, -1, 10));
    spec->set_bias_read(static_cast<int32_t>(n));
  } else if (key == "bias_create") {
    ASSIGN_OR_RETURN(int64_t n, ParseWhole(key, value, -1, 10));
    spec->set_bias_create(static_cast<int32_t>(n));
  } else if (key == "seed") {
    ASSIGN_OR_RETURN(int64_t n, ParseWhole(key, value, 1, common::kMaxPostmarkSeed));
    spec->set_seed(static_cast<uint32_t>(n));
  } else if (key == "report") {
    if (value == "verbose") {
      spec->set_report(PostmarkSpec::VERBOSE);
    } else if (value == "terse") {
      spec->set_report(PostmarkSpec::TERSE);
    } else {
      return absl::InvalidArgumentError(StrCat("bad report '", value, "': use verbose or terse"));
    }
  } else if (key == "config") {
    return absl::InvalidArgumentError(
        "config names a PostMark script: give it as `config: FILE` in a plan phase (relative "
        "to the plan) or with --postmark-config FILE");
  } else {
    return absl::InvalidArgumentError(
        StrCat("unknown postmark parameter '", key, "' (known: ", kPostmarkParameterNames, ")"));
  }
  return absl::OkStatus();
}

std::string DescribePostmark(const PostmarkSpec& raw) {
  const PostmarkSpec s = common::WithPostmarkDefaults(raw);
  std::string text = StrCat("postmark ", s.number(), " files of ");
  if (s.min_size_bytes() == s.max_size_bytes()) {
    text += StrCat(s.min_size_bytes(), " B");
  } else {
    text += StrCat(s.min_size_bytes(), "-", s.max_size_bytes(), " B");
  }
  text += StrCat(", ", s.transactions(), " transactions");
  if (s.subdirectories() > 1) text += StrCat(", ", s.subdirectories(), " subdirectories");
  if (s.read_block_size() != common::kPostmarkBlockSize ||
      s.write_block_size() != common::kPostmarkBlockSize) {
    text += StrCat(", read/write ", common::FormatSizeShort(s.read_block_size()), "/",
                   common::FormatSizeShort(s.write_block_size()));
  }
  if (s.unbuffered()) text += ", unbuffered";
  if (s.bias_read() != common::kPostmarkBias || s.bias_create() != common::kPostmarkBias) {
    text += StrCat(", bias read ", s.bias_read(), " create ", s.bias_create());
  }
  if (s.seed() != common::kPostmarkSeed) text += StrCat(", seed ", s.seed());
  return text;
}

}  // namespace stormark::controller
