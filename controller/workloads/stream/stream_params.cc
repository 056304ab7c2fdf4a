#include "controller/workloads/stream/stream_params.h"

#include "common/spec_check.h"
#include "common/strings.h"
#include "common/units.h"
#include "nlohmann/json.hpp"

namespace stormark::controller {

using common::Status;
using common::StatusOr;
using common::StrCat;
using stormark::v1::StreamSpec;

namespace {

using stormark::v1::PhaseSpec;

StreamSpec& S(PhaseSpec* spec) { return *spec->mutable_stream(); }

const std::vector<Option>& Options() {
  static const auto* const options = new std::vector<Option>{
      {.name = "rw",
       .type = OptionType::kEnum,
       .default_value = "write",
       .choices = {{"write", StreamSpec::WRITE}, {"read", StreamSpec::READ}},
       .help = "write the file (or device) from start to end, or read it back; read turns "
               "fdatasync off",
       .required = true,
       .store =
           [](const OptionValue& v, PhaseSpec* s) {
             S(s).set_direction(static_cast<StreamSpec::Direction>(v.choice));
             if (v.choice == StreamSpec::READ) S(s).set_fdatasync(false);
           }},
      {.name = "size",
       .type = OptionType::kSize,
       .default_value = "1G",
       .help = "the bytes each host moves",
       .store = [](const OptionValue& v, PhaseSpec* s) { S(s).set_size_bytes(v.number); }},
      {.name = "bs",
       .type = OptionType::kSize,
       .default_value = "1M",
       .min = 1,
       .max = common::kMaxBlockSize,
       .help = "the bytes of each read or write call",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { S(s).set_block_size(static_cast<uint32_t>(v.number)); }},
      {.name = "direct",
       .type = OptionType::kBool,
       .default_value = "false",
       .help = "O_DIRECT: bypass the page cache (bs must suit the device)",
       .store = [](const OptionValue& v, PhaseSpec* s) { S(s).set_direct(v.flag); }},
      {.name = "fdatasync",
       .type = OptionType::kBool,
       .default_value = "false",
       .help = "writes: fdatasync once at the end, inside the timed region",
       .store = [](const OptionValue& v, PhaseSpec* s) { S(s).set_fdatasync(v.flag); }},
  };
  return *options;
}

}  // namespace

const OptionTable& StreamOptions() {
  static const auto* const table = new OptionTable("stream", Options());
  return *table;
}

Status SetStreamParameter(std::string_view key, std::string_view value, StreamSpec* spec) {
  PhaseSpec phase;
  phase.mutable_stream()->Swap(spec);
  Status status = StreamOptions().Set(key, value, &phase);
  spec->Swap(phase.mutable_stream());
  return status;
}

std::string DescribeStream(const StreamSpec& s) {
  std::string text =
      StrCat("stream ", s.direction() == StreamSpec::READ ? "read" : "write", " ",
             common::FormatBytes(s.size_bytes()), ", bs ", common::FormatBytes(s.block_size()));
  if (s.direct()) text += ", direct";
  if (s.fdatasync()) text += ", fdatasync";
  return text;
}

nlohmann::json StreamSpecJson(const StreamSpec& s) {
  return {{"rw", s.direction() == StreamSpec::READ ? "read" : "write"},
          {"size_bytes", s.size_bytes()},
          {"block_size", s.block_size()},
          {"direct", s.direct()},
          {"fdatasync", s.fdatasync()}};
}

}  // namespace stormark::controller
