#include "controller/workloads/bonnie_params.h"

#include <charconv>

#include "common/strings.h"
#include "common/units.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;

// -n NUM[:MAX[:MIN[:DIRS]]], NUM in units of 1024 files, sizes in bytes (k/M suffixes too).
Status ParseFiles(std::string_view value, stormark::v1::BonnieSpec* spec) {
  const std::vector<std::string_view> parts = common::Split(value, ':');
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(StrCat("bad files '", value, "': ", why,
                                             " (as bonnie++ -n: NUM:MAX:MIN:DIRS)"));
  };
  if (parts.size() > 4) return bad("too many fields");
  auto num = common::ParseCount("files", parts[0]);
  if (!num.ok()) return bad("NUM (x1024 files) must be a whole number");
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
    auto parsed = common::ParseCount("files", parts[3]);
    if (!parsed.ok()) return bad("DIRS must be a whole number");
    dirs = *parsed;
  }
  if (min > max) return bad("MIN is above MAX");
  spec->set_files_k(static_cast<uint32_t>(*num));
  spec->set_file_max_bytes(max);
  spec->set_file_min_bytes(min);
  spec->set_file_dirs(static_cast<uint32_t>(dirs));
  return absl::OkStatus();
}

}  // namespace

Status SetBonnieParameter(std::string_view key, std::string_view value,
                          stormark::v1::BonnieSpec* spec) {
  auto size = [&]() -> StatusOr<uint64_t> {
    auto parsed = common::ParseSize(value);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(StrCat(key, ": ", parsed.status().message()));
    }
    return parsed;
  };
  if (key == "size") {
    ASSIGN_OR_RETURN(uint64_t v, size());
    spec->set_size_bytes(v);
  } else if (key == "ram") {
    ASSIGN_OR_RETURN(uint64_t v, size());
    spec->set_ram_bytes(v);
  } else if (key == "chunk") {
    ASSIGN_OR_RETURN(uint64_t v, size());
    if (v > UINT32_MAX) return absl::InvalidArgumentError(StrCat("bad chunk '", value, "'"));
    spec->set_chunk_size(static_cast<uint32_t>(v));
  } else if (key == "char_size") {
    ASSIGN_OR_RETURN(uint64_t v, size());
    spec->set_char_size_bytes(v);
  } else if (key == "fast") {
    ASSIGN_OR_RETURN(bool v, common::ParseBool(key, value));
    spec->set_skip_char(v);
  } else if (key == "io") {
    ASSIGN_OR_RETURN(bool v, common::ParseBool(key, value));
    spec->set_skip_io(!v);
  } else if (key == "direct") {
    ASSIGN_OR_RETURN(bool v, common::ParseBool(key, value));
    spec->set_direct(v);
  } else if (key == "sync") {
    ASSIGN_OR_RETURN(bool v, common::ParseBool(key, value));
    spec->set_fsync_every_write(v);
  } else if (key == "files") {
    RETURN_IF_ERROR(ParseFiles(value, spec));
  } else if (key == "seeks") {
    ASSIGN_OR_RETURN(uint64_t v, common::ParseCount(key, value));
    spec->set_seeks(static_cast<uint32_t>(v));
  } else if (key == "seekers") {
    ASSIGN_OR_RETURN(uint64_t v, common::ParseCount(key, value));
    spec->set_seekers(static_cast<uint32_t>(v));
  } else if (key == "seed") {
    ASSIGN_OR_RETURN(uint64_t v, common::ParseCount(key, value));
    spec->set_seed(v);
  } else {
    return absl::InvalidArgumentError(
        StrCat("unknown bonnie parameter '", key, "' (known: ", kBonnieParameterNames, ")"));
  }
  return absl::OkStatus();
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
