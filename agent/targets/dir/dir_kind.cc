#include "agent/targets/dir/dir_kind.h"

#include <sys/stat.h>

#include "agent/config/strict_modes.h"
#include "agent/host/sysinfo.h"
#include "common/strings.h"

namespace stormark::agent {
namespace {

common::Status Parse(const TargetYaml& yaml, TargetConfig* target) {
  RETURN_IF_ERROR(ParseLocalPath(yaml, target));
  struct stat st;
  if (stat(target->path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return yaml.Error(yaml.value, *target,
                      common::StrCat("directory ", target->path, " does not exist"));
  }
  return absl::OkStatus();
}

void ReadFacts(const TargetConfig& target, const SystemPaths& paths, int resolved,
               stormark::v1::TargetInfo* info) {
  ReadFilesystemFacts(target.path, paths, resolved, info);
}

common::Status CheckOwnership(const TargetConfig& target, uid_t agent_uid) {
  return CheckTrustedPath(target.path, TrustedKind::kDirectory, agent_uid);
}

}  // namespace

const TargetKind& DirTargetKind() {
  static const TargetKind kind = {
      .name = "dir",
      .value = "PATH",
      .keys = {"strict_modes", "device"},
      .caps = {.files = true, .local_path = true, .page_cache = true, .engines = true},
      .transport = "",
      .parse = Parse,
      .open_device = nullptr,
      .read_facts = ReadFacts,
      .check_ownership = CheckOwnership,
  };
  return kind;
}

}  // namespace stormark::agent
