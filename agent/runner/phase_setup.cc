#include "agent/runner/phase_setup.h"

#include <map>

#include "agent/config/policy.h"
#include "agent/workloads/factory.h"
#include "agent/workloads/workload_registry.h"
#include "common/cache_report.h"
#include "common/log_text.h"
#include "common/strings.h"
#include "common/units.h"

namespace stormark::agent {

using common::Status;
using common::StatusOr;

StatusOr<std::unique_ptr<DeviceTuning>> ApplyTuning(const stormark::v1::PhaseSpec& spec,
                                                    const AgentConfig& config,
                                                    const SystemPaths& paths,
                                                    const BlockTarget* block) {
  std::string knobs;
  for (const auto& [knob, value] : spec.tuning()) {
    knobs += (knobs.empty() ? "" : ", ") + common::LogSafe(knob, 32);
  }
  if (!config.allow_tuning) {
    return absl::PermissionDeniedError(
        common::StrCat("tuning (", common::LogSafeLine(knobs, 256),
                       ") is not allowed on this agent: its config must set allow_tuning: true"));
  }
  const TargetConfig* target = config.FindTarget(spec.target());
  if (target == nullptr) {
    return absl::NotFoundError(common::StrCat("no target '", common::LogSafe(spec.target()), "'"));
  }
  std::map<std::string, std::string> settings(spec.tuning().begin(), spec.tuning().end());
  const int fd = block != nullptr ? block->fd() : -1;
  // A raw device by its number, whatever its path leads to now; anything else by the device
  // holding its filesystem.
  StatusOr<std::unique_ptr<DeviceTuning>> applied;
  if (fd >= 0 && block->identity().block) {
    applied = DeviceTuning::ApplyToDevice(block->identity().rdev, target->path, settings,
                                          paths.sys_dev_block);
  } else {
    // A filesystem's disk is shared with whatever else it holds, often the host's root disk:
    // only the one the config names may be tuned, and only if the filesystem is on it.
    const std::string device = ReadTargetFacts(*target, paths, fd).device();
    const std::string on = device.empty() ? std::string("its filesystem's disk")
                                          : common::StrCat("the disk under it (", device, ")");
    if (target->device.empty()) {
      return absl::PermissionDeniedError(common::StrCat(
          "target '", target->name, "': tuning (", common::LogSafeLine(knobs, 256),
          ") would change ", on, ", which other data shares; name that disk in the target's ",
          "config (device: /dev/...) to allow it"));
    }
    auto same = OnSameDisk(device, target->device, paths.sys_class_block);
    if (!same.ok() || !*same) {
      return absl::FailedPreconditionError(common::StrCat(
          "target '", target->name, "': its filesystem is on ",
          device.empty() ? std::string("no block device") : device, ", not on device: ",
          target->device, same.ok() ? "" : common::StrCat(" (", same.status().message(), ")")));
    }
    applied = DeviceTuning::Apply(device, settings, paths.sys_class_block);
  }
  if (!applied.ok()) {
    return common::Annotate(applied.status(), common::StrCat("target '", target->name, "'"));
  }
  return applied;
}

namespace {

// Whether the phase creates files after deleting others: PostMark, and bonnie's file tests.
bool DeletesThenCreates(const stormark::v1::PhaseSpec& spec) {
  return spec.has_postmark() || (spec.has_bonnie() && spec.bonnie().files_k() != 0);
}

// Puts the agent into the phase's memory cgroup, if the spec sets a limit, and returns the
// host's facts as the phase sees them (MemoryLimitedFacts).
StatusOr<HostFacts> EnterMemoryCgroup(const stormark::v1::PhaseSpec& spec,
                                      const AgentConfig& config, const HostFacts& host,
                                      const SystemPaths& paths, PhaseSetup* setup) {
  const uint64_t limit = spec.memory_limit_bytes();
  if (limit == 0) return host;
  const std::string what = common::StrCat("memory_limit ", common::FormatBytes(limit));
  StatusOr<std::unique_ptr<PhaseMemoryCgroup>> cgroup;
  // A tmpfs file is memory that no limit can reclaim (without swap): writing more than the
  // limit would have the kernel kill the agent.
  const TargetConfig* target = config.FindTarget(spec.target());
  const std::string fs = target == nullptr || ProgramOf(spec) != nullptr
                             ? ""
                             : ReadTargetFacts(*target, paths).filesystem();
  if (fs == "tmpfs" || fs == "ramfs") {
    cgroup = absl::FailedPreconditionError(common::StrCat(
        "target '", target->name, "' is on ", fs,
        ", whose files are memory the limit cannot reclaim (the kernel would kill the agent)"));
  } else {
    // The limit holds the caches, not the agent's own memory; a command's programs stay under
    // it (memory_cgroup.h, "What the limit holds").
    PhaseMemoryCgroup::Options options;
    options.exclude_own_memory = ProgramOf(spec) == nullptr;
    cgroup = PhaseMemoryCgroup::Enter(paths, spec.phase_id(), limit, options);
  }
  if (cgroup.ok()) {
    setup->memory_cgroup = std::move(*cgroup);
    return MemoryLimitedFacts(host, setup->memory_cgroup->limit_bytes());
  }
  if (spec.memory_limit_optional() && absl::IsFailedPrecondition(cgroup.status())) {
    setup->warnings.push_back(common::StrCat(
        what,
        " not applied (the plan allows running without it): the phase had all of this host's "
        "memory, so its page cache was not bounded: ",
        cgroup.status().message()));
    return host;
  }
  return common::Annotate(cgroup.status(), what);
}

}  // namespace

HostFacts MemoryLimitedFacts(const HostFacts& host, uint64_t limit_bytes) {
  HostFacts facts = host;
  if (facts.ram_bytes == 0 || limit_bytes < facts.ram_bytes) facts.ram_bytes = limit_bytes;
  if (facts.memory_limit_bytes == 0 || limit_bytes < facts.memory_limit_bytes) {
    facts.memory_limit_bytes = limit_bytes;
  }
  return facts;
}

Status SetUpPhase(const stormark::v1::PhaseSpec& spec, const Identity& caller,
                  const AgentConfig& config, const HostFacts& host, const SystemPaths& paths,
                  const PageCache& page_cache, WrittenPrefixes& written,
                  const std::atomic<bool>& cancelled, PhaseSetup* setup) {
  RETURN_IF_ERROR(CheckAccess(config.identities, caller, spec, config.FindTarget(spec.target())));
  ASSIGN_OR_RETURN(const HostFacts facts, EnterMemoryCgroup(spec, config, host, paths, setup));
  RETURN_IF_ERROR(CheckPolicy(spec, config, facts));
  const TargetConfig* target = config.FindTarget(spec.target());
  WrittenPrefix earlier;
  // A command or hook gets the target's path as configured; it is its own to resolve.
  if (target != nullptr && ProgramOf(spec) == nullptr) {
    ASSIGN_OR_RETURN(setup->block, BlockTarget::Resolve(*target));
    earlier = written.Find(*target, TargetIdentity(*setup->block, paths));
  }
  ASSIGN_OR_RETURN(setup->workload,
                   MakeWorkload(spec, config, facts, earlier, setup->block, &setup->handed));
  if (!spec.tuning().empty()) {
    ASSIGN_OR_RETURN(setup->tuning, ApplyTuning(spec, config, paths, setup->block.get()));
  }
  RETURN_IF_ERROR(setup->workload->Prepare(cancelled, &setup->warnings));
  if (setup->block != nullptr) setup->target_identity = TargetIdentity(*setup->block, paths);
  if (cancelled) return absl::OkStatus();
  // The cache is settled last, so that nothing the set-up wrote or read is left in it.
  setup->cache_report = page_cache.Apply(spec.cache(), config.allow_drop_caches);
  if (!setup->cache_report.not_done().empty()) {
    setup->warnings.push_back(common::DescribeCacheReport(setup->cache_report));
  }
  // qemu's software emulation runs guests tens of times slower than the hardware: a lab guest's
  // rates say nothing about its storage.
  if (host.cpu_model.find("QEMU TCG") != std::string::npos) {
    setup->warnings.push_back(common::StrCat(
        "this host's CPU is emulated (", host.cpu_model,
        "): its figures measure the emulator, not the storage; compare what reached the disk and "
        "what happened, not the rates"));
  }
  // The environment the phase runs in: after the hooks, the tuning and the cache.
  setup->host_environment = ReadHostEnvironment(host, paths);
  if (const PhaseMemoryCgroup* cgroup = setup->memory_cgroup.get()) {
    setup->host_environment["memory_limit_bytes"] = common::StrCat(cgroup->limit_bytes());
    setup->host_environment["memory_cgroup"] =
        common::StrCat("v", cgroup->version(), " ", cgroup->path());
  }
  if (target != nullptr) {
    const stormark::v1::TargetInfo facts =
        ReadTargetFacts(*target, paths, setup->block != nullptr ? setup->block->fd() : -1);
    setup->target_environment = TargetEnvironment(facts);
    if (DeletesThenCreates(spec) && facts.filesystem() == "ext4" &&
        Ext4WithoutJournal(facts.device(), paths)) {
      setup->warnings.push_back(common::StrCat(
          "target '", target->name, "' is ext4 without a journal (", facts.device(),
          "): for 60 s after a file is deleted (300 s while its inode's table block is dirty) "
          "ext4 will not reuse its inode, and each new file scans past them, so files created "
          "after deletions (bonnie's random create after its sequential delete, a run after "
          "another) may be many times slower, and differently from run to run; leave 5 minutes "
          "between runs, or compare on a filesystem with a journal"));
    }
  }
  if (setup->block != nullptr) setup->block->ReleaseDescriptor();
  return absl::OkStatus();
}

}  // namespace stormark::agent
