#include "agent/targets/null/null_kind.h"

#include "agent/devices/null_device.h"
#include "agent/targets/block/block_target.h"
#include "common/units.h"

namespace stormark::agent {
namespace {

common::Status Parse(const TargetYaml& yaml, TargetConfig* target) {
  auto on = common::ParseBool("null", yaml.value.as<std::string>());
  if (!on.ok() || !*on) {
    return yaml.Error(yaml.value, *target, "write 'null: true' for the null device");
  }
  if (target->size == 0) target->size = kDefaultNullSize;
  return absl::OkStatus();
}

// Its writes are dropped: there is nothing to guard.
common::StatusOr<std::unique_ptr<Device>> OpenDevice(BlockTarget& target,
                                                     const BlockOpenOptions& /*options*/,
                                                     const std::atomic<bool>& /*cancelled*/,
                                                     std::vector<std::string>* /*warnings*/) {
  return std::unique_ptr<Device>(new NullDevice(target.config().size));
}

void ReadFacts(const TargetConfig& target, const SystemPaths& /*paths*/, int /*resolved*/,
               stormark::v1::TargetInfo* info) {
  info->set_size_bytes(target.size);
  info->set_logical_block_size(512);
  info->set_disposable(true);
}

}  // namespace

const TargetKind& NullTargetKind() {
  static const TargetKind kind = {
      .name = "null",
      .value = "true",
      .keys = {"size", "disposable"},
      .caps = {.device = true, .discards = true},
      .transport = "",
      .parse = Parse,
      .open_device = OpenDevice,
      .read_facts = ReadFacts,
      .check_ownership = nullptr,
  };
  return kind;
}

}  // namespace stormark::agent
