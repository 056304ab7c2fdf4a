#include "common/spec_check.h"

#include <tuple>
#include <utility>

#include "common/log_text.h"
#include "common/strings.h"
#include "common/units.h"

namespace stormark::common {

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
  return absl::InvalidArgumentError(
      StrCat(what, " '", LogSafe(name, 80), "' must be 1-64 characters of A-Z a-z 0-9 . _ -"));
}

bool IsTuningKnob(std::string_view name) {
  return name == "scheduler" || name == "read_ahead_kb" || name == "nr_requests" ||
         name == "queue_depth";
}

}  // namespace stormark::common
