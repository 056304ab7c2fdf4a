#include "controller/fio/fio_hosts.h"

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "common/strings.h"
#include "controller/fio/fio_import.h"
#include "google/protobuf/util/message_differencer.h"

namespace stormark::controller::fio {
namespace {

using common::Status;
using common::StrCat;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// `field` of `from`, alone in a message of its type.
std::unique_ptr<Message> FieldAlone(const Message& from, const FieldDescriptor* field) {
  std::unique_ptr<Message> alone(from.New());
  std::unique_ptr<Message> copy(from.New());
  copy->CopyFrom(from);
  from.GetReflection()->SwapFields(copy.get(), alone.get(), {field});
  return alone;
}

// Gives `target` the fields in which `host_read` differs from `read` (all three of one type).
// A repeated message of the same length in all three (a run group's jobs) is merged element
// by element, so that the plan's settings stay on each job.
void TakeChangedFields(const Message& read, const Message& host_read, Message* target) {
  const google::protobuf::Descriptor* type = read.GetDescriptor();
  const auto* reflection = read.GetReflection();
  for (int i = 0; i < type->field_count(); ++i) {
    const FieldDescriptor* field = type->field(i);
    const std::unique_ptr<Message> ours = FieldAlone(read, field);
    std::unique_ptr<Message> theirs = FieldAlone(host_read, field);
    if (google::protobuf::util::MessageDifferencer::Equals(*ours, *theirs)) continue;
    if (field->is_repeated() && field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      const int n = reflection->FieldSize(read, field);
      if (n == reflection->FieldSize(host_read, field) &&
          n == target->GetReflection()->FieldSize(*target, field)) {
        for (int e = 0; e < n; ++e) {
          TakeChangedFields(reflection->GetRepeatedMessage(read, field, e),
                            reflection->GetRepeatedMessage(host_read, field, e),
                            target->GetReflection()->MutableRepeatedMessage(target, field, e));
        }
        continue;
      }
    }
    // The host's value replaces the plan's: swap it in.
    target->GetReflection()->SwapFields(theirs.get(), target, {field});
  }
}

}  // namespace

stormark::v1::PhaseSpec WithHostFields(const stormark::v1::PhaseSpec& base,
                                       const stormark::v1::PhaseSpec& read,
                                       const stormark::v1::PhaseSpec& host_read) {
  stormark::v1::PhaseSpec out = base;
  const google::protobuf::OneofDescriptor* workload =
      stormark::v1::PhaseSpec::descriptor()->FindOneofByName("workload");
  const auto* reflection = read.GetReflection();
  const FieldDescriptor* set = reflection->GetOneofFieldDescriptor(host_read, workload);
  if (set == nullptr || reflection->GetOneofFieldDescriptor(read, workload) != set) {
    return out;  // Another workload: ResolveHostSpecs refuses it.
  }
  TakeChangedFields(reflection->GetMessage(read, set), reflection->GetMessage(host_read, set),
                    out.GetReflection()->MutableMessage(&out, set));
  return out;
}

Status ResolveHostSpecs(Plan* plan, const TargetLookup& lookup) {
  std::vector<FioHost> hosts;
  for (const HostPlan& host : plan->hosts) hosts.push_back({host.name, host.labels, {}});
  if (hosts.empty()) hosts.push_back({});  // The embedded agent, "local".
  // Each host reads a file once per target it runs on, whatever the number of phases (a
  // repeated or swept plan copies a file's phases many times).
  std::map<std::tuple<size_t, std::string, std::string, std::vector<std::string>>,
           common::StatusOr<FioImport>>
      readings;
  for (PhasePlan& phase : plan->phases) {
    if (phase.fio_origin == nullptr) continue;
    const PhasePlan::FioOrigin& origin = *phase.fio_origin;
    phase.host_specs.clear();
    phase.host_targets.clear();
    for (size_t i = 0; i < hosts.size(); ++i) {
      // The facts of the target the phase runs on there (its filename=, or the host's).
      if (lookup) {
        const stormark::v1::TargetInfo* target = lookup(i, origin.target);
        if (target == nullptr) continue;  // Not reached: it runs nothing.
        hosts[i].target = TargetFacts(*target);
      }
      const std::string where = StrCat(origin.path, " on host '", hosts[i].name, "'");
      auto key = std::make_tuple(i, origin.target, origin.path, origin.sections);
      auto it = readings.find(key);
      if (it == readings.end()) {
        it = readings.emplace(key, ImportJobFile(origin.path, origin.sections, hosts[i])).first;
      }
      const common::StatusOr<FioImport>& read = it->second;
      if (!read.ok()) return common::Annotate(read.status(), where);
      if (read->phases.size() <= origin.index || read->phases[origin.index].name != origin.name) {
        return absl::InvalidArgumentError(
            StrCat(where, ": the job file gives this host other phases than the first host (",
                   read->phases.size(),
                   " phases); every host must run the same phases, each with its "
                   "own values"));
      }
      const PhasePlan& own = read->phases[origin.index];
      if (own.spec.workload_case() != origin.spec.workload_case()) {
        return absl::InvalidArgumentError(
            StrCat(where, ": phase '", own.name, "' is another workload on this host"));
      }
      if (!google::protobuf::util::MessageDifferencer::Equals(own.spec, origin.spec)) {
        phase.host_specs[i] = WithHostFields(phase.spec, origin.spec, own.spec);
      }
      if (own.target != origin.target) {
        phase.host_targets[i] = own.target.empty() ? phase.target : own.target;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace stormark::controller::fio
