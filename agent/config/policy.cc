#include "agent/config/policy.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "agent/config/config.h"
#include "agent/config/executables.h"
#include "agent/config/strict_modes.h"
#include "agent/host/sysinfo.h"
#include "agent/targets/target_caps.h"
#include "agent/targets/target_kind.h"
#include "agent/workloads/workload_registry.h"
#include "agent/config/yaml_error.h"
#include "common/memory_estimate.h"
#include "common/spec_check.h"
#include "common/spec_check.h"
#include "common/strings.h"
#include "common/units.h"
#include "yaml-cpp/yaml.h"

namespace stormark::agent {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;

Status ParseTls(const YAML::Node& node, std::string_view source, TlsConfig* tls) {
  if (!node.IsMap())
    return YamlErrorAt(source, node, "'tls' must be a map {ca: FILE, cert: FILE, key: FILE}");
  for (const auto& field : node) {
    const std::string key = YamlScalar(field.first);
    std::string* slot = key == "ca"     ? &tls->ca
                        : key == "cert" ? &tls->cert
                        : key == "key"  ? &tls->key
                                        : nullptr;
    if (slot == nullptr) {
      return YamlErrorAt(source, field.first,
                         StrCat("unknown field 'tls.", key, "' (known: ca, cert, key)"));
    }
    *slot = YamlScalar(field.second);
    if (slot->empty() || slot->front() != '/') {
      return YamlErrorAt(source, field.second, StrCat("'tls.", key, "' must be an absolute path"));
    }
  }
  if (tls->ca.empty() || tls->cert.empty() || tls->key.empty()) {
    return YamlErrorAt(source, node, "'tls' needs all three of ca, cert and key");
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
    return YamlErrorAt(source, node, "'scratch' must be a non-empty list of directories");
  }
  for (const auto& item : node) {
    const std::string path = YamlScalar(item);
    if (path.empty() || path.front() != '/') {
      return YamlErrorAt(source, item, StrCat("scratch '", path, "' must be an absolute path"));
    }
    auto real = RealDirectory(path);
    if (!real.ok())
      return YamlErrorAt(source, item, StrCat("scratch: ", std::string(real.status().message())));
    scratch->push_back(*real);
  }
  return absl::OkStatus();
}

Status ParseLimits(const YAML::Node& node, std::string_view source, ResourceLimits* limits) {
  if (!node.IsMap())
    return YamlErrorAt(source, node, "'limits' must be a map such as {max_size: 10G}");
  for (const auto& field : node) {
    const std::string key = YamlScalar(field.first);
    const std::string value = YamlScalar(field.second);
    if (key == "max_size") {
      auto size = common::ParseSizeOf("limits.max_size", value);
      if (!size.ok())
        return YamlErrorAt(source, field.second, std::string(size.status().message()));
      limits->max_size_bytes = *size;
    } else if (key == "max_files") {
      char* end = nullptr;
      const unsigned long long n = std::strtoull(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || n == 0) {
        return YamlErrorAt(source, field.second,
                           StrCat("limits.max_files: expected a count above 0, not '", value, "'"));
      }
      limits->max_files = n;
    } else if (key == "max_memory") {
      auto size = common::ParseSizeOf("limits.max_memory", value);
      if (!size.ok())
        return YamlErrorAt(source, field.second, std::string(size.status().message()));
      if (*size == 0) return YamlErrorAt(source, field.second, "limits.max_memory must be above 0");
      limits->max_memory_bytes = *size;
    } else if (key == "max_runtime") {
      auto runtime = common::ParseDurationOf("limits.max_runtime", value);
      if (!runtime.ok())
        return YamlErrorAt(source, field.second, std::string(runtime.status().message()));
      limits->max_runtime_nanos = *runtime;
    } else {
      return YamlErrorAt(source, field.first,
                         StrCat("unknown field 'limits.", key,
                                "' (known: max_size, max_runtime, max_files, max_memory)"));
    }
  }
  return absl::OkStatus();
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
  if (config.scratch.empty() || !CapsOf(target).files) return absl::OkStatus();
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

namespace {

// The check of CheckTargetOwnership, without the target's name.
Status CheckTargetPath(const AgentConfig& config, const TargetConfig& target) {
  return CheckTargetOwner(target, config.agent_uid);
}

}  // namespace

Status CheckTargetOwnership(const AgentConfig& config, const TargetConfig& target) {
  if (!target.strict_modes) return absl::OkStatus();
  return common::Annotate(CheckTargetPath(config, target), StrCat("target '", target.name, "'"));
}

Status CheckCommandProgram(const stormark::v1::PhaseSpec& spec, const AgentConfig& config) {
  const stormark::v1::CommandSpec* command = ProgramOf(spec);
  if (command == nullptr) return absl::OkStatus();
  // Only an approved command is looked at: a refusal must read the same whether or not a file
  // exists (agent/config/command_policy.h), and the workload gives it.
  auto approved = config.commands.Approve(*command);
  if (!approved.ok()) return absl::OkStatus();
  std::string program = approved->program;
  if (program.find('/') == std::string::npos) {
    // No allow-list, a bare name: the first match in PATH, as the child will find it. None
    // is for the child to report.
    std::string found;
    if (!FindExecutable(program, &found).ok()) return absl::OkStatus();
    program = found;
  }
  Status trusted = CheckTrustedPath(program, TrustedKind::kFile, config.agent_uid);
  if (absl::IsNotFound(trusted)) return absl::OkStatus();  // The child reports it.
  return common::Annotate(trusted, StrCat("program '", approved->argv[0], "'"));
}

Status CheckTrustedFiles(const AgentConfig& config, const std::string& config_path,
                         std::vector<std::string>* warnings) {
  // --config and the --tls-* flags may be relative; the walk starts from /.
  const auto absolute = [](const std::string& path) {
    if (path.empty() || path.front() == '/') return path;
    char cwd[PATH_MAX];
    return getcwd(cwd, sizeof(cwd)) == nullptr ? path : StrCat(cwd, "/", path);
  };
  std::vector<std::pair<std::string, std::string>> files = {{"config", absolute(config_path)}};
  for (auto [setting, path] :
       {std::pair{"tls.ca", &config.tls.ca}, std::pair{"tls.cert", &config.tls.cert},
        std::pair{"tls.key", &config.tls.key}}) {
    if (!path->empty()) files.emplace_back(setting, absolute(*path));
  }
  for (const CommandRule& rule : config.commands.allow) {
    files.emplace_back("commands.allow", rule.program);
  }
  for (const TargetConfig& target : config.targets) {
    const std::string name = StrCat("target '", target.name, "': ");
    if (!target.tls.psk_file.empty())
      files.emplace_back(name + "tls.psk_file", target.tls.psk_file);
    if (!target.chap.password_file.empty()) {
      files.emplace_back(name + "chap.password_file", target.chap.password_file);
    }
    if (!target.tls.certificates.empty()) {
      RETURN_IF_ERROR(common::Annotate(
          CheckTrustedPath(target.tls.certificates, TrustedKind::kDirectory, config.agent_uid),
          name + "tls.certificates"));
      for (const char* file : {"ca-cert.pem", "client-cert.pem", "client-key.pem"}) {
        const std::string path = StrCat(target.tls.certificates, "/", file);
        if (access(path.c_str(), F_OK) == 0) files.emplace_back(name + "tls.certificates", path);
      }
    }
    if (!CapsOf(target).local_path) continue;
    if (!target.strict_modes) {
      warnings->push_back(
          StrCat("warning: target '", target.name, "': strict_modes is off: the owner and mode of ",
                 target.path,
                 " are not checked, so whoever can write to it can redirect this agent's "
                 "writes"));
    } else if (Status owned = CheckTargetPath(config, target); !owned.ok()) {
      warnings->push_back(
          StrCat("warning: target '", target.name,
                 "': every phase on it is refused until this is fixed: ", owned.message()));
    }
  }
  for (const auto& [setting, path] : files) {
    Status trusted = CheckTrustedPath(path, TrustedKind::kFile, config.agent_uid);
    // The path is named again only when the refusal is about another one (a directory above
    // it, or where a link led).
    const bool names_path = std::string(trusted.message()).starts_with(path + " ");
    RETURN_IF_ERROR(common::Annotate(trusted, names_path ? setting : StrCat(setting, " ", path)));
  }
  return absl::OkStatus();
}

StatusOr<uint64_t> PhaseDataBytes(const stormark::v1::PhaseSpec& spec, const TargetConfig& target,
                                  const HostFacts& host) {
  const WorkloadModule* module = FindWorkload(spec);
  if (!CapsOf(target).files || module == nullptr || module->data_bytes == nullptr) return 0;
  return module->data_bytes(spec, host);
}

uint64_t PhaseFileCount(const stormark::v1::PhaseSpec& spec) {
  const WorkloadModule* module = FindWorkload(spec);
  return module == nullptr || module->files == nullptr ? 0 : module->files(spec);
}

MemoryBudget PhaseMemoryBudget(const ResourceLimits& limits, const HostFacts& host) {
  if (limits.max_memory_bytes != 0) return {limits.max_memory_bytes, ""};
  const uint64_t cgroup_half = host.memory_limit_bytes / 2;
  if (cgroup_half != 0 && (host.ram_bytes == 0 || cgroup_half < host.ram_bytes / 4)) {
    return {cgroup_half, StrCat("half of the ", common::FormatBytes(host.memory_limit_bytes),
                                " its memory cgroup allows")};
  }
  if (host.ram_bytes == 0) return {};
  return {host.ram_bytes / 4, "a quarter of its RAM"};
}

common::MemoryEstimate PhaseMemory(const stormark::v1::PhaseSpec& spec,
                                   const TargetConfig& target) {
  const WorkloadModule* module = FindWorkload(spec);
  if (module == nullptr || module->memory == nullptr) {
    return common::MemoryEstimate{std::string(common::WorkloadName(spec)), {}};
  }
  return module->memory(spec, target, CapsOf(target));
}

Status CheckMemory(const common::MemoryEstimate& estimate, const MemoryBudget& budget) {
  if (budget.bytes == 0 || estimate.total() <= budget.bytes) return absl::OkStatus();
  return absl::PermissionDeniedError(
      common::DescribeOverBudget(estimate, budget.bytes, budget.note));
}

Status CheckKernelMemory(const stormark::v1::PhaseSpec& spec, const HostFacts& host) {
  const WorkloadModule* module = FindWorkload(spec);
  if (host.memory_limit_bytes == 0 || module == nullptr || module->live_files == nullptr) {
    return absl::OkStatus();
  }
  const uint64_t files = module->live_files(spec);
  const uint64_t kernel = common::SaturatingMul(files, kKernelBytesPerFile);
  if (kernel <= host.memory_limit_bytes / 4 * 3) return absl::OkStatus();
  return absl::InvalidArgumentError(StrCat(
      common::WorkloadName(spec), " holds up to ", files,
      " files at once, whose inodes and directory entries take about ", common::FormatBytes(kernel),
      " of memory the kernel cannot reclaim while they are new (", kKernelBytesPerFile,
      " bytes a file on ext4), over three quarters of the memory limit of ",
      common::FormatBytes(host.memory_limit_bytes),
      " (the rest is the page cache's): the phase would run out of memory; lower files, or "
      "raise memory_limit to at least ",
      common::FormatBytes(common::SaturatingMul(kernel, 4) / 3)));
}

int64_t PhaseRequestedRuntimeNanos(const stormark::v1::PhaseSpec& spec) {
  const WorkloadModule* module = FindWorkload(spec);
  return module == nullptr || module->runtime_nanos == nullptr ? 0 : module->runtime_nanos(spec);
}

Status CheckPolicy(const stormark::v1::PhaseSpec& spec, const AgentConfig& config,
                   const HostFacts& host) {
  const TargetConfig* target = config.FindTarget(spec.target());
  if (target == nullptr) return absl::OkStatus();  // The factory names the missing target.
  RETURN_IF_ERROR(CheckScratch(config, *target));
  RETURN_IF_ERROR(CheckTargetOwnership(config, *target));
  RETURN_IF_ERROR(CheckCommandProgram(spec, config));
  const ResourceLimits& limits = config.limits;
  if (limits.max_size_bytes > 0) {
    ASSIGN_OR_RETURN(uint64_t bytes, PhaseDataBytes(spec, *target, host));
    if (bytes > limits.max_size_bytes) {
      return absl::PermissionDeniedError(
          StrCat(common::WorkloadName(spec), " would lay out up to ", common::FormatBytes(bytes),
                 " on target '", target->name, "', over this agent's limits.max_size (",
                 common::FormatBytes(limits.max_size_bytes), ")"));
    }
  }
  if (limits.max_files > 0 && PhaseFileCount(spec) > limits.max_files) {
    return absl::PermissionDeniedError(
        StrCat(common::WorkloadName(spec), " may create up to ", PhaseFileCount(spec),
               " files, over this agent's limits.max_files (", limits.max_files, ")"));
  }
  // A spec the workload's own checks refuse gets their message (the factory's), not a memory
  // figure made of out-of-range values.
  const WorkloadModule* module = FindWorkload(spec);
  if (module != nullptr && module->check(spec).ok()) {
    RETURN_IF_ERROR(CheckMemory(PhaseMemory(spec, *target), PhaseMemoryBudget(limits, host)));
    RETURN_IF_ERROR(CheckKernelMemory(spec, host));
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
