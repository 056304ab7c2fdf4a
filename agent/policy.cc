#include "agent/policy.h"

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "agent/config.h"
#include "agent/sysinfo.h"
#include "agent/workloads/bonnie.h"
#include "agent/workloads/randio.h"
#include "common/spec_check.h"
#include "common/strings.h"
#include "common/units.h"
#include "yaml-cpp/yaml.h"

namespace stormark::agent {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;

Status ErrorAt(std::string_view source, const YAML::Node& node, std::string_view what) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return absl::InvalidArgumentError(StrCat(source, ": ", what));
  return absl::InvalidArgumentError(StrCat(source, ":", mark.line + 1, ": ", what));
}

std::string Scalar(const YAML::Node& node) { return node.IsScalar() ? node.as<std::string>() : ""; }

Status ParseTls(const YAML::Node& node, std::string_view source, TlsConfig* tls) {
  if (!node.IsMap()) return ErrorAt(source, node, "'tls' must be a map {ca: FILE, cert: FILE, key: FILE}");
  for (const auto& field : node) {
    const std::string key = Scalar(field.first);
    std::string* slot = key == "ca" ? &tls->ca : key == "cert" ? &tls->cert : key == "key" ? &tls->key : nullptr;
    if (slot == nullptr) {
      return ErrorAt(source, field.first, StrCat("unknown field 'tls.", key, "' (known: ca, cert, key)"));
    }
    *slot = Scalar(field.second);
    if (slot->empty() || slot->front() != '/') {
      return ErrorAt(source, field.second, StrCat("'tls.", key, "' must be an absolute path"));
    }
  }
  if (tls->ca.empty() || tls->cert.empty() || tls->key.empty()) {
    return ErrorAt(source, node, "'tls' needs all three of ca, cert and key");
  }
  return absl::OkStatus();
}

// The real path of an existing directory, or an error naming it.
StatusOr<std::string> RealDirectory(const std::string& path) {
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) == nullptr) return common::ErrnoError(path, errno);
  return std::string(resolved);
}

Status ParseScratch(const YAML::Node& node, std::string_view source,
                    std::vector<std::string>* scratch) {
  if (!node.IsSequence() || node.size() == 0) {
    return ErrorAt(source, node, "'scratch' must be a non-empty list of directories");
  }
  for (const auto& item : node) {
    const std::string path = Scalar(item);
    if (path.empty() || path.front() != '/') {
      return ErrorAt(source, item, StrCat("scratch '", path, "' must be an absolute path"));
    }
    auto real = RealDirectory(path);
    if (!real.ok()) return ErrorAt(source, item, StrCat("scratch: ", std::string(real.status().message())));
    scratch->push_back(*real);
  }
  return absl::OkStatus();
}

Status ParseLimits(const YAML::Node& node, std::string_view source, ResourceLimits* limits) {
  if (!node.IsMap()) return ErrorAt(source, node, "'limits' must be a map such as {max_size: 10G}");
  for (const auto& field : node) {
    const std::string key = Scalar(field.first);
    const std::string value = Scalar(field.second);
    if (key == "max_size") {
      auto size = common::ParseSizeOf("limits.max_size", value);
      if (!size.ok()) return ErrorAt(source, field.second, std::string(size.status().message()));
      limits->max_size_bytes = *size;
    } else if (key == "max_files") {
      char* end = nullptr;
      const unsigned long long n = std::strtoull(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || n == 0) {
        return ErrorAt(source, field.second, StrCat("limits.max_files: expected a count above 0, not '", value, "'"));
      }
      limits->max_files = n;
    } else if (key == "max_runtime") {
      auto runtime = common::ParseDurationOf("limits.max_runtime", value);
      if (!runtime.ok()) return ErrorAt(source, field.second, std::string(runtime.status().message()));
      limits->max_runtime_nanos = *runtime;
    } else {
      return ErrorAt(source, field.first,
                     StrCat("unknown field 'limits.", key, "' (known: max_size, max_runtime, max_files)"));
    }
  }
  return absl::OkStatus();
}

uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  uint64_t product;
  return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
}

uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  uint64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

}  // namespace

bool IsPolicyKey(std::string_view key) {
  return key == "tls" || key == "scratch" || key == "limits" || key == "identities";
}

Status ParsePolicyKey(std::string_view key, const YAML::Node& value, std::string_view source,
                      AgentConfig* config) {
  if (key == "tls") return ParseTls(value, source, &config->tls);
  if (key == "scratch") return ParseScratch(value, source, &config->scratch);
  if (key == "limits") return ParseLimits(value, source, &config->limits);
  if (key == "identities") return ParseIdentities(value, source, &config->identities);
  return absl::NotFoundError(StrCat("not a policy key: ", key));
}

Status CheckScratch(const AgentConfig& config, const TargetConfig& target) {
  if (config.scratch.empty() || target.kind != "dir") return absl::OkStatus();
  auto real = RealDirectory(target.path);
  if (!real.ok()) return common::Annotate(real.status(), StrCat("target '", target.name, "'"));
  for (const std::string& dir : config.scratch) {
    if (*real == dir || real->starts_with(dir + "/") || dir == "/") return absl::OkStatus();
  }
  std::string dirs;
  for (const std::string& dir : config.scratch) dirs += StrCat(dirs.empty() ? "" : ", ", dir);
  return absl::PermissionDeniedError(
      StrCat("target '", target.name, "' (", target.path,
             *real == target.path ? "" : StrCat(", which resolves to ", *real),
             ") is outside the agent's scratch directories (", dirs, ")"));
}

StatusOr<uint64_t> PhaseDataBytes(const stormark::v1::PhaseSpec& spec, const TargetConfig& target,
                                  const HostFacts& host) {
  if (target.kind != "dir") return 0;
  switch (spec.workload_case()) {
    case stormark::v1::PhaseSpec::kStream:
      return spec.stream().size_bytes();
    case stormark::v1::PhaseSpec::kBonnie: {
      ASSIGN_OR_RETURN(BonnieParams p, BonnieWorkload::Resolve(spec.bonnie(), host.ram_bytes));
      return SaturatingAdd(p.run_io ? p.size_bytes : 0, SaturatingMul(p.files, p.file_max_bytes));
    }
    case stormark::v1::PhaseSpec::kPostmark: {
      // Every transaction may create a file of the largest size.
      const stormark::v1::PostmarkSpec p = common::WithPostmarkDefaults(spec.postmark());
      return SaturatingMul(uint64_t{p.number()} + p.transactions(), p.max_size_bytes());
    }
    case stormark::v1::PhaseSpec::kRandio: {
      const stormark::v1::RandioSpec& r = spec.randio();
      const uint64_t size = r.size_bytes() == 0 ? RandioWorkload::kDefaultDirFileSize : r.size_bytes();
      const uint64_t jobs = r.numjobs() == 0 ? 1 : r.numjobs();
      return SaturatingAdd(SaturatingAdd(r.offset_bytes(), size),
                           SaturatingMul(jobs - 1, r.offset_increment_bytes()));
    }
    default:
      return 0;
  }
}

uint64_t PhaseFileCount(const stormark::v1::PhaseSpec& spec) {
  if (spec.has_bonnie()) return uint64_t{spec.bonnie().files_k()} * 1024;
  if (spec.has_postmark()) {
    const stormark::v1::PostmarkSpec p = common::WithPostmarkDefaults(spec.postmark());
    return uint64_t{p.number()} + p.transactions();
  }
  return 0;
}

int64_t PhaseRequestedRuntimeNanos(const stormark::v1::PhaseSpec& spec) {
  if (spec.has_randio() && spec.randio().runtime_nanos() > 0) {
    const int64_t ramp = std::max<int64_t>(0, spec.randio().ramp_time_nanos());
    return spec.randio().runtime_nanos() > INT64_MAX - ramp ? INT64_MAX
                                                           : spec.randio().runtime_nanos() + ramp;
  }
  if (spec.has_command() && spec.command().timeout_ms() > 0) {
    return spec.command().timeout_ms() > static_cast<uint64_t>(INT64_MAX / 1'000'000)
               ? INT64_MAX
               : static_cast<int64_t>(spec.command().timeout_ms()) * 1'000'000;
  }
  return 0;
}

Status CheckPolicy(const stormark::v1::PhaseSpec& spec, const AgentConfig& config,
                   const HostFacts& host) {
  const TargetConfig* target = config.FindTarget(spec.target());
  if (target == nullptr) return absl::OkStatus();  // The factory names the missing target.
  RETURN_IF_ERROR(CheckScratch(config, *target));
  const ResourceLimits& limits = config.limits;
  if (limits.max_size_bytes > 0) {
    ASSIGN_OR_RETURN(uint64_t bytes, PhaseDataBytes(spec, *target, host));
    if (bytes > limits.max_size_bytes) {
      return absl::PermissionDeniedError(StrCat(
          common::WorkloadName(spec), " would lay out up to ", common::FormatBytes(bytes),
          " on target '", target->name, "', over this agent's limits.max_size (",
          common::FormatBytes(limits.max_size_bytes), ")"));
    }
  }
  if (limits.max_files > 0 && PhaseFileCount(spec) > limits.max_files) {
    return absl::PermissionDeniedError(StrCat(common::WorkloadName(spec), " may create up to ",
                                              PhaseFileCount(spec),
                                              " files, over this agent's limits.max_files (",
                                              limits.max_files, ")"));
  }
  if (limits.max_runtime_nanos > 0) {
    const int64_t runtime = PhaseRequestedRuntimeNanos(spec);
    if (runtime > limits.max_runtime_nanos) {
      return absl::PermissionDeniedError(
          StrCat(common::WorkloadName(spec), " asks to run for ",
                 common::FormatDurationNanos(static_cast<double>(runtime)),
                 ", over this agent's limits.max_runtime (",
                 common::FormatDurationNanos(static_cast<double>(limits.max_runtime_nanos)), ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace stormark::agent
