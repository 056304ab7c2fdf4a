#include "controller/plan/plan_yaml.h"

#include "common/strings.h"
#include "common/units.h"

namespace stormark::controller::plan_yaml {

using common::Status;
using common::StatusOr;
using common::StrCat;

Status ErrorAt(std::string_view source, const YAML::Mark& mark, std::string_view what) {
  if (mark.is_null() || mark.line < 0) {
    return absl::InvalidArgumentError(StrCat(source, ": ", what));
  }
  return absl::InvalidArgumentError(StrCat(source, ":", mark.line + 1, ": ", what));
}

std::string ScalarText(const YAML::Node& node) { return node.as<std::string>(); }

// `path` as a plan names it: relative to the plan's directory.
std::string RelativeToPlan(std::string_view source, const std::string& path) {
  const size_t slash = source.rfind('/');
  if (path.empty() || path[0] == '/' || slash == std::string_view::npos) return path;
  return StrCat(source.substr(0, slash + 1), path);
}

// A duration above 0 for `key`: "bad deadline '0s': must be above 0".
StatusOr<int64_t> ParsePositiveDuration(std::string_view key, std::string_view value) {
  ASSIGN_OR_RETURN(int64_t nanos, common::ParseDurationOf(key, value));
  if (nanos <= 0)
    return absl::InvalidArgumentError(StrCat("bad ", key, " '", value, "': must be above 0"));
  return nanos;
}

}  // namespace stormark::controller::plan_yaml
