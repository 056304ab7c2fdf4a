#include "common/spec_check.h"

#include "common/strings.h"
#include "common/units.h"

namespace stormark::common {

using stormark::v1::StreamSpec;

bool IsValidName(std::string_view name) {
  if (name.empty() || name.size() > 64 || name == "." || name == "..") return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Status CheckStreamSpec(const StreamSpec& spec) {
  constexpr uint32_t kDirectAlignment = 4096;
  if (spec.direction() != StreamSpec::WRITE && spec.direction() != StreamSpec::READ) {
    return absl::InvalidArgumentError("stream: rw must be 'write' or 'read'");
  }
  if (spec.block_size() == 0) return absl::InvalidArgumentError("stream: bs must be at least 1");
  if (spec.block_size() > kMaxStreamBlockSize) {
    return absl::InvalidArgumentError(StrCat("stream: bs ", FormatSizeShort(spec.block_size()),
                                             " is over the limit of ",
                                             FormatSizeShort(kMaxStreamBlockSize)));
  }
  if (spec.size_bytes() == 0) return absl::InvalidArgumentError("stream: size must be at least 1");
  if (spec.size_bytes() % spec.block_size() != 0) {
    return absl::InvalidArgumentError(StrCat("stream: size ", FormatSizeShort(spec.size_bytes()),
                                             " is not a multiple of bs ",
                                             FormatSizeShort(spec.block_size())));
  }
  if (spec.direct() && spec.block_size() % kDirectAlignment != 0) {
    return absl::InvalidArgumentError(StrCat("stream: with direct, bs must be a multiple of 4k (got ",
                                             FormatSizeShort(spec.block_size()), ")"));
  }
  if (spec.fdatasync() && spec.direction() == StreamSpec::READ) {
    return absl::InvalidArgumentError("stream: fdatasync applies to rw=write only");
  }
  return absl::OkStatus();
}

}  // namespace stormark::common
