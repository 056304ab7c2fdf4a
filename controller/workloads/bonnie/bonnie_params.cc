#include "controller/workloads/bonnie/bonnie_params.h"

#include <charconv>

#include "common/spec_check.h"
#include "common/strings.h"
#include "common/units.h"
#include "common/workloads/bonnie/bonnie_spec.h"
#include "controller/workloads/option_table.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;

using stormark::v1::BonnieSpec;
using stormark::v1::PhaseSpec;

BonnieSpec& B(PhaseSpec* spec) { return *spec->mutable_bonnie(); }

// -n NUM[:MAX[:MIN[:DIRS]]], NUM in units of 1024 files, sizes in bytes (k/M suffixes too),
// into fields {NUM, MAX, MIN, DIRS}.
Status ParseFiles(std::string_view key, std::string_view value, OptionValue* out) {
  const std::vector<std::string_view> parts = common::Split(value, ':');
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        StrCat("bad ", key, " '", value, "': ", why, " (as bonnie++ -n: NUM:MAX:MIN:DIRS)"));
  };
  if (parts.size() > 4) return bad("too many fields");
  auto num = common::ParseCount(key, parts[0]);
  if (!num.ok() || *num > UINT32_MAX) return bad("NUM (x1024 files) must be a whole number");
  uint64_t max = 0, min = 0, dirs = 0;
  if (parts.size() > 1) {
    auto parsed = common::ParseSize(parts[1]);
    if (!parsed.ok()) return bad("MAX must be a size");
    max = *parsed;
  }
  if (parts.size() > 2) {
    auto parsed = common::ParseSize(parts[2]);
    if (!parsed.ok()) return bad("MIN must be a size");
    min = *parsed;
  }
  if (parts.size() > 3) {
    auto parsed = common::ParseCount(key, parts[3]);
    if (!parsed.ok() || *parsed > UINT32_MAX) return bad("DIRS must be a whole number");
    dirs = *parsed;
  }
  if (min > max) return bad("MIN is above MAX");
  out->fields = {*num, max, min, dirs};
  return absl::OkStatus();
}

// bonnie++'s flags, as the names say; a size left out is bonnie++'s rule (size 2 x RAM).
const std::vector<Option>& Options() {
  static const auto* const options = new std::vector<Option>{
      {.name = "size",
       .type = OptionType::kSize,
       .help = "bonnie++ -s: the data file's size (not given: 2 x the agent host's RAM)",
       .store = [](const OptionValue& v, PhaseSpec* s) { B(s).set_size_bytes(v.number); }},
      {.name = "ram",
       .type = OptionType::kSize,
       .help = "bonnie++ -r: the RAM the 2 x RAM rule uses (not given: the host's)",
       .store = [](const OptionValue& v, PhaseSpec* s) { B(s).set_ram_bytes(v.number); }},
      {.name = "chunk",
       .type = OptionType::kSize,
       .max = common::kMaxBlockSize,
       .help = "bonnie++ -s SIZE:CHUNK: the block size of the block, rewrite and seek tests "
               "(not given: bonnie++'s 8k)",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { B(s).set_chunk_size(static_cast<uint32_t>(v.number)); }},
      {.name = "char_size",
       .type = OptionType::kSize,
       .help = "bonnie++ -f SIZE: the bytes of the per-character tests (not given: bonnie++'s)",
       .store = [](const OptionValue& v, PhaseSpec* s) { B(s).set_char_size_bytes(v.number); }},
      {.name = "fast",
       .type = OptionType::kBool,
       .default_value = "false",
       .help = "bonnie++ -f: skip the per-character tests",
       .store = [](const OptionValue& v, PhaseSpec* s) { B(s).set_skip_char(v.flag); }},
      {.name = "io",
       .type = OptionType::kBool,
       .default_value = "true",
       .help = "false is bonnie++ -s 0: skip the sequential and seek tests",
       .store = [](const OptionValue& v, PhaseSpec* s) { B(s).set_skip_io(!v.flag); }},
      {.name = "direct",
       .type = OptionType::kBool,
       .default_value = "false",
       .help = "bonnie++ -D: O_DIRECT for the block tests",
       .store = [](const OptionValue& v, PhaseSpec* s) { B(s).set_direct(v.flag); }},
      {.name = "sync",
       .type = OptionType::kBool,
       .default_value = "false",
       .help = "bonnie++ -b: fsync, as bonnie++'s \"no write buffering\" does",
       .store = [](const OptionValue& v, PhaseSpec* s) { B(s).set_fsync_every_write(v.flag); }},
      {.name = "files",
       .type = OptionType::kString,
       .accepts = "NUM[:MAX[:MIN[:DIRS]]]",
       .help = "bonnie++ -n: file tests with NUM x 1024 files of MIN to MAX bytes in DIRS "
               "directories (16:10000:10000:10); 0 or not given skips them",
       .parse = ParseFiles,
       .store =
           [](const OptionValue& v, PhaseSpec* s) {
             B(s).set_files_k(static_cast<uint32_t>(v.fields[0]));
             B(s).set_file_max_bytes(v.fields[1]);
             B(s).set_file_min_bytes(v.fields[2]);
             B(s).set_file_dirs(static_cast<uint32_t>(v.fields[3]));
           }},
      {.name = "seeks",
       .type = OptionType::kCount,
       .max = UINT32_MAX,
       .help = "seeks per run (fixed at 8192 in bonnie++; not given: 8192)",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { B(s).set_seeks(static_cast<uint32_t>(v.number)); }},
      {.name = "seekers",
       .type = OptionType::kCount,
       .unit = "threads",
       .max = common::kMaxBonnieSeekers,
       .help = "concurrent seekers (fixed at 5 in bonnie++; not given: 5)",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { B(s).set_seekers(static_cast<uint32_t>(v.number)); }},
      {.name = "seed",
       .type = OptionType::kCount,
       .help = "bonnie++ -z: the random seed (not given: the agent picks one)",
       .store = [](const OptionValue& v, PhaseSpec* s) { B(s).set_seed(v.number); }},
  };
  return *options;
}

}  // namespace

const OptionTable& BonnieOptions() {
  static const auto* const table = new OptionTable("bonnie", Options());
  return *table;
}

std::string DescribeBonnie(const stormark::v1::BonnieSpec& s) {
  std::string text = "bonnie";
  if (s.skip_io()) {
    text += " file tests only";
  } else {
    text += s.size_bytes() ? StrCat(" ", common::FormatBytes(s.size_bytes())) : " 2x RAM";
    if (s.chunk_size()) text += StrCat(", chunk ", common::FormatBytes(s.chunk_size()));
    if (s.skip_char()) text += ", fast (no per-char)";
  }
  if (s.files_k()) {
    text += StrCat(", files ", s.files_k(), ":", s.file_max_bytes(), ":", s.file_min_bytes(), ":",
                   s.file_dirs());
  }
  if (s.direct()) text += ", direct";
  if (s.fsync_every_write()) text += ", fsync every write";
  return text;
}

}  // namespace stormark::controller
