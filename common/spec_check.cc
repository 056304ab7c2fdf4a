#include "common/spec_check.h"

#include <tuple>
#include <utility>

#include "common/strings.h"
#include "common/units.h"

namespace stormark::common {

using stormark::v1::StreamSpec;

std::string_view WorkloadName(const stormark::v1::PhaseSpec& spec) {
  const google::protobuf::OneofDescriptor* oneof =
      spec.GetDescriptor()->FindOneofByName("workload");
  const google::protobuf::FieldDescriptor* field =
      spec.GetReflection()->GetOneofFieldDescriptor(spec, oneof);
  return field == nullptr ? std::string_view() : std::string_view(field->name());
}

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

Status CheckBonnieSpec(const stormark::v1::BonnieSpec& spec) {
  const uint32_t chunk = spec.chunk_size() == 0 ? 8192 : spec.chunk_size();
  if (chunk > kMaxStreamBlockSize) {
    return absl::InvalidArgumentError(StrCat("bonnie: chunk ", FormatSizeShort(chunk),
                                             " is over the limit of ",
                                             FormatSizeShort(kMaxStreamBlockSize)));
  }
  if (spec.direct() && chunk % 4096 != 0) {
    return absl::InvalidArgumentError(StrCat(
        "bonnie: with direct, chunk must be a multiple of 4k (got ", FormatSizeShort(chunk), ")"));
  }
  if (!spec.skip_io() && spec.size_bytes() != 0 && spec.size_bytes() < chunk) {
    return absl::InvalidArgumentError(StrCat("bonnie: size ", FormatSizeShort(spec.size_bytes()),
                                             " is smaller than one chunk (",
                                             FormatSizeShort(chunk), ")"));
  }
  if (!spec.skip_io() && spec.size_bytes() % chunk != 0) {
    return absl::InvalidArgumentError(StrCat("bonnie: size ", FormatSizeShort(spec.size_bytes()),
                                             " is not a multiple of chunk ",
                                             FormatSizeShort(chunk)));
  }
  if (spec.seekers() > kMaxBonnieSeekers) {
    return absl::InvalidArgumentError(StrCat("bonnie: seekers ", spec.seekers(),
                                             " is over the limit of ", kMaxBonnieSeekers));
  }
  if (spec.file_dirs() > kMaxBonnieFileDirs) {
    return absl::InvalidArgumentError(StrCat("bonnie: files directories ", spec.file_dirs(),
                                             " is over bonnie++'s limit of ",
                                             kMaxBonnieFileDirs));
  }
  if (spec.file_min_bytes() > spec.file_max_bytes()) {
    return absl::InvalidArgumentError(StrCat("bonnie: files min size ", spec.file_min_bytes(),
                                             " is above max size ", spec.file_max_bytes()));
  }
  if (spec.files_k() > 1024) {
    return absl::InvalidArgumentError(StrCat("bonnie: files ", spec.files_k(),
                                             " (x1024) is over the limit of 1024"));
  }
  if (spec.skip_io() && spec.files_k() == 0) {
    return absl::InvalidArgumentError("bonnie: nothing to run (no I/O tests and no file tests)");
  }
  return absl::OkStatus();
}

bool IsTuningKnob(std::string_view name) {
  return name == "scheduler" || name == "read_ahead_kb" || name == "nr_requests" ||
         name == "queue_depth";
}

Status CheckCommandSpec(const stormark::v1::CommandSpec& spec) {
  const bool shell = !spec.shell().empty();
  if (shell == (spec.argv_size() > 0)) {
    return absl::InvalidArgumentError(
        "command: give either a shell command line ('command') or a program with its "
        "arguments ('exec'), not both and not neither");
  }
  if (spec.argv_size() > 0 && spec.argv(0).empty()) {
    return absl::InvalidArgumentError("command: the program name is empty");
  }
  if (spec.argv_size() > kMaxCommandArgs) {
    return absl::InvalidArgumentError(
        StrCat("command: ", spec.argv_size(), " arguments (limit ", kMaxCommandArgs, ")"));
  }
  size_t bytes = spec.shell().size();
  for (const std::string& arg : spec.argv()) bytes += arg.size() + 1;
  if (bytes > kMaxCommandBytes) {
    return absl::InvalidArgumentError(
        StrCat("command: ", bytes, " bytes of command line (limit ", kMaxCommandBytes, ")"));
  }
  for (const std::string& arg : spec.argv()) {
    if (arg.find('\0') != std::string::npos) {
      return absl::InvalidArgumentError("command: an argument holds a NUL byte");
    }
  }
  if (spec.shell().find('\0') != std::string::npos) {
    return absl::InvalidArgumentError("command: the command line holds a NUL byte");
  }
  return absl::OkStatus();
}

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
    if (value > kMaxStreamBlockSize) {
      return absl::InvalidArgumentError(StrCat("postmark: ", name, " block size ",
                                               FormatSizeShort(value), " is over the limit of ",
                                               FormatSizeShort(kMaxStreamBlockSize)));
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

}  // namespace stormark::common
