#include "common/spec_check.h"

#include <tuple>
#include <utility>

#include "common/log_text.h"
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

Status CheckName(std::string_view what, std::string_view name) {
  if (IsValidName(name)) return absl::OkStatus();
  return absl::InvalidArgumentError(StrCat(what, " '", LogSafe(name, 80),
                                           "' must be 1-64 characters of A-Z a-z 0-9 . _ -"));
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

bool RandioWrites(const stormark::v1::RandioSpec& spec) {
  using stormark::v1::RandioSpec;
  return spec.verify() || spec.rw() == RandioSpec::WRITE || spec.rw() == RandioSpec::RANDWRITE ||
         ((spec.rw() == RandioSpec::RANDRW || spec.rw() == RandioSpec::READWRITE) &&
          spec.rwmixread() < 100);
}

Status CheckRandioSpec(const stormark::v1::RandioSpec& spec) {
  using stormark::v1::RandioSpec;
  auto bad = [](auto... parts) { return absl::InvalidArgumentError(StrCat("randio: ", parts...)); };
  if (spec.rw() == RandioSpec::PATTERN_UNSPECIFIED || !RandioSpec::Pattern_IsValid(spec.rw())) {
    return bad("rw must be read, write, randread, randwrite, randrw or readwrite");
  }
  const bool mixed = spec.rw() == RandioSpec::RANDRW || spec.rw() == RandioSpec::READWRITE;
  if (spec.has_rwmixread() && spec.rwmixread() > 100) {
    return bad("rwmixread ", spec.rwmixread(), " is over 100");
  }
  if (spec.has_rwmixread() && !mixed) return bad("rwmixread applies to rw=randrw or readwrite");
  const uint32_t bs_min = spec.bs_min();
  const uint32_t bs_max = spec.bs_max() == 0 ? bs_min : spec.bs_max();
  if (bs_min == 0) return bad("bs must be at least 1");
  if (bs_max > kMaxStreamBlockSize) {
    return bad("bs ", FormatSizeShort(bs_max), " is over the limit of ",
               FormatSizeShort(kMaxStreamBlockSize));
  }
  if (bs_max < bs_min) {
    return bad("bs range ", FormatSizeShort(bs_min), "-", FormatSizeShort(bs_max),
               " ends below its start");
  }
  if (bs_max % bs_min != 0) {
    return bad("bs range ", FormatSizeShort(bs_min), "-", FormatSizeShort(bs_max),
               ": the largest size must be a multiple of the smallest");
  }
  if (spec.iodepth() > kMaxRandioIodepth) {
    return bad("iodepth ", spec.iodepth(), " is over the limit of ", kMaxRandioIodepth);
  }
  if (spec.numjobs() > kMaxRandioJobs) {
    return bad("numjobs ", spec.numjobs(), " is over the limit of ", kMaxRandioJobs);
  }
  if (spec.size_bytes() != 0 && spec.size_bytes() % bs_min != 0) {
    return bad("size ", FormatSizeShort(spec.size_bytes()), " is not a multiple of bs ",
               FormatSizeShort(bs_min));
  }
  if (spec.size_bytes() != 0 && spec.size_bytes() < bs_max) {
    return bad("size ", FormatSizeShort(spec.size_bytes()), " is smaller than one block (",
               FormatSizeShort(bs_max), ")");
  }
  if (spec.direct() && (bs_min % 512 != 0 || spec.offset_bytes() % 512 != 0 ||
                        spec.offset_increment_bytes() % 512 != 0)) {
    return bad("with direct, bs, offset and offset_increment must be multiples of 512 (the "
               "device may ask for 4k)");
  }
  if (spec.runtime_nanos() < 0 || spec.ramp_time_nanos() < 0) {
    return bad("runtime and ramp_time must not be negative");
  }
  if (spec.time_based() && spec.runtime_nanos() == 0) return bad("time_based needs a runtime");
  if (spec.engine() != RandioSpec::ENGINE_UNSPECIFIED && spec.engine() != RandioSpec::PSYNC &&
      spec.engine() != RandioSpec::IO_URING) {
    return bad("engine must be psync or io_uring");
  }
  if (spec.fsync() != 0 && spec.fdatasync() != 0) return bad("give fsync or fdatasync, not both");
  if ((spec.fsync() != 0 || spec.fdatasync() != 0) && !RandioWrites(spec)) {
    return bad("fsync and fdatasync apply to patterns that write");
  }
  if (spec.random_distribution() == RandioSpec::ZIPF) {
    if (!(spec.zipf_theta() > 0) || spec.zipf_theta() == 1 || spec.zipf_theta() > 100) {
      return bad("zipf theta must be above 0, not 1, and at most 100 (as zipf:1.2)");
    }
    if (spec.rw() != RandioSpec::RANDREAD && spec.rw() != RandioSpec::RANDWRITE &&
        spec.rw() != RandioSpec::RANDRW) {
      return bad("random_distribution applies to random patterns (randread, randwrite, randrw)");
    }
  } else if (spec.random_distribution() != RandioSpec::DISTRIBUTION_UNSPECIFIED &&
             spec.random_distribution() != RandioSpec::UNIFORM) {
    return bad("random_distribution must be random or zipf:THETA");
  }
  if (spec.verify()) {
    if (bs_min % 512 != 0 || spec.offset_bytes() % 512 != 0 ||
        spec.offset_increment_bytes() % 512 != 0) {
      return bad("verify needs bs, offset and offset_increment in multiples of 512");
    }
    const uint32_t jobs = spec.numjobs() == 0 ? 1 : spec.numjobs();
    if (jobs > 1 && RandioWrites(spec) && spec.rw() != RandioSpec::RANDREAD &&
        spec.rw() != RandioSpec::READ &&
        (spec.size_bytes() == 0 || spec.offset_increment_bytes() < spec.size_bytes())) {
      return bad("verify with writes and numjobs ", jobs,
                 " needs a region per job: set size, and offset_increment to at least size");
    }
  }
  return absl::OkStatus();
}

}  // namespace stormark::common
