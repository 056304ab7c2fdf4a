#include "controller/workloads/stream_params.h"

#include "common/strings.h"
#include "common/units.h"

namespace stormark::controller {

using common::Status;
using common::StatusOr;
using common::StrCat;
using stormark::v1::StreamSpec;

Status SetStreamParameter(std::string_view key, std::string_view value, StreamSpec* spec) {
  if (key == "rw") {
    if (value == "write") {
      spec->set_direction(StreamSpec::WRITE);
    } else if (value == "read") {
      spec->set_direction(StreamSpec::READ);
      spec->set_fdatasync(false);
    } else {
      return absl::InvalidArgumentError(StrCat("bad rw '", value, "': use write or read"));
    }
    return absl::OkStatus();
  }
  if (key == "size") {
    ASSIGN_OR_RETURN(uint64_t size, common::ParseSize(value));
    spec->set_size_bytes(size);
    return absl::OkStatus();
  }
  if (key == "bs") {
    ASSIGN_OR_RETURN(const uint64_t bs, common::ParseSizeOf(key, value));
    if (bs > UINT32_MAX) return absl::InvalidArgumentError(StrCat("bad bs '", value, "': too large"));
    spec->set_block_size(static_cast<uint32_t>(bs));
    return absl::OkStatus();
  }
  if (key == "direct") {
    ASSIGN_OR_RETURN(bool direct, common::ParseBool(key, value));
    spec->set_direct(direct);
    return absl::OkStatus();
  }
  if (key == "fdatasync") {
    ASSIGN_OR_RETURN(bool sync, common::ParseBool(key, value));
    spec->set_fdatasync(sync);
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      StrCat("unknown stream parameter '", key, "' (known: rw, size, bs, direct, fdatasync)"));
}

std::string DescribeStream(const StreamSpec& s) {
  std::string text = StrCat("stream ", s.direction() == StreamSpec::READ ? "read" : "write", " ",
                            common::FormatBytes(s.size_bytes()), ", bs ",
                            common::FormatBytes(s.block_size()));
  if (s.direct()) text += ", direct";
  if (s.fdatasync()) text += ", fdatasync";
  return text;
}

}  // namespace stormark::controller
