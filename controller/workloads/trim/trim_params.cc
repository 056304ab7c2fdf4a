#include "controller/workloads/trim/trim_params.h"

#include "common/strings.h"
#include "common/units.h"
#include "common/workloads/trim/trim_spec.h"

namespace stormark::controller {

using common::StrCat;
using stormark::v1::PhaseSpec;
using stormark::v1::TrimSpec;

namespace {

TrimSpec& T(PhaseSpec* spec) { return *spec->mutable_trim(); }

const std::vector<Option>& Options() {
  static const auto* const options = new std::vector<Option>{
      {.name = "size",
       .type = OptionType::kSize,
       .default_value = "0",
       .help = "the bytes to discard from offset (a multiple of 4k); 0 for the rest of the "
               "target",
       .store = [](const OptionValue& v, PhaseSpec* s) { T(s).set_size_bytes(v.number); }},
      {.name = "bs",
       .type = OptionType::kSize,
       .default_value = "1M",
       .min = static_cast<int64_t>(common::kTrimAlignment),
       .max = static_cast<int64_t>(common::kMaxTrimBs),
       .help = "the bytes of each discard request (a multiple of 4k)",
       .store = [](const OptionValue& v, PhaseSpec* s) { T(s).set_bs(v.number); }},
      {.name = "offset",
       .type = OptionType::kSize,
       .default_value = "0",
       .help = "where the region starts on the target (a multiple of 4k)",
       .store = [](const OptionValue& v, PhaseSpec* s) { T(s).set_offset_bytes(v.number); }},
      {.name = "random",
       .type = OptionType::kBool,
       .default_value = "false",
       .help = "fio's randtrim: each block of the region once, in a random order, rather than "
               "in address order (fio's trim)",
       .store = [](const OptionValue& v, PhaseSpec* s) { T(s).set_random(v.flag); }},
      {.name = "then_write",
       .type = OptionType::kBool,
       .default_value = "false",
       .help = "fio's trimwrite (randtrimwrite with random): write each block right after "
               "discarding it, timed as its own write; the writes are flushed before the clock "
               "stops",
       .store = [](const OptionValue& v, PhaseSpec* s) { T(s).set_then_write(v.flag); }},
      {.name = "seed",
       .aliases = {"randseed"},
       .type = OptionType::kCount,
       .default_value = "0",
       .help = "the seed of the random order; 0 for a fixed default, so runs repeat",
       .store = [](const OptionValue& v, PhaseSpec* s) { T(s).set_seed(v.number); }},
  };
  return *options;
}

}  // namespace

const OptionTable& TrimOptions() {
  static const auto* const table = new OptionTable("trim", Options());
  return *table;
}

std::string DescribeTrim(const TrimSpec& s) {
  const uint64_t bs = s.bs() == 0 ? common::kTrimDefaultBs : s.bs();
  return StrCat(
      "trim ", s.size_bytes() == 0 ? "the target" : common::FormatBytes(s.size_bytes()),
      s.offset_bytes() == 0 ? "" : StrCat(" from ", common::FormatBytes(s.offset_bytes())), ", bs ",
      common::FormatBytes(bs), s.random() ? ", random" : "",
      s.then_write() ? ", each block written after its discard" : "");
}

}  // namespace stormark::controller
