#include "controller/results/same_plan.h"

#include <google/protobuf/util/message_differencer.h>

#include <vector>

#include "common/strings.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {
namespace {

using common::StatusOr;
using common::StrCat;
using sqlite::Statement;

struct PlannedPhase {
  std::string name;
  std::string sweep_point;
  int64_t repetition = 0;
  stormark::v1::PhaseSpec spec;

  bool operator==(const PlannedPhase& o) const {
    return name == o.name && sweep_point == o.sweep_point && repetition == o.repetition &&
           google::protobuf::util::MessageDifferencer::Equals(spec, o.spec);
  }
};

StatusOr<std::vector<PlannedPhase>> PlanOf(const sqlite::Database& db, const std::string& run_id) {
  ASSIGN_OR_RETURN(Statement query,
                   db.Prepare("SELECT name, sweep_point, repetition, spec FROM phases "
                              "WHERE run_id = ? ORDER BY phase_index"));
  query.Bind(1, run_id);
  std::vector<PlannedPhase> phases;
  while (true) {
    ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) return phases;
    PlannedPhase phase{query.Text(0), query.Text(1), query.Int(2), {}};
    if (!phase.spec.ParseFromString(query.Blob(3))) {
      return absl::DataLossError(
          StrCat(db.path(), ": the stored phase spec of run ", run_id, " does not decode"));
    }
    phases.push_back(std::move(phase));
  }
}

// The hosts the run was planned on, sorted: a baseline from other machines says nothing
// about this one.
StatusOr<std::vector<std::string>> HostsOf(const sqlite::Database& db, const std::string& run_id) {
  ASSIGN_OR_RETURN(Statement query,
                   db.Prepare("SELECT host FROM agents WHERE run_id = ? ORDER BY host"));
  query.Bind(1, run_id);
  std::vector<std::string> hosts;
  while (true) {
    ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) return hosts;
    hosts.push_back(query.Text(0));
  }
}

}  // namespace

StatusOr<std::string> LatestSamePlanRun(const ResultsStore& store, const std::string& run_id) {
  const sqlite::Database& db = store.db();
  ASSIGN_OR_RETURN(Statement run,
                   db.Prepare("SELECT label, started_unix_nanos FROM runs WHERE run_id = ?"));
  run.Bind(1, run_id);
  ASSIGN_OR_RETURN(bool found, run.Step());
  if (!found) return absl::NotFoundError(StrCat("no run '", run_id, "' in ", store.path()));
  const std::string label = run.Text(0);
  const int64_t started = run.Int(1);
  ASSIGN_OR_RETURN(std::vector<PlannedPhase> plan, PlanOf(db, run_id));
  ASSIGN_OR_RETURN(std::vector<std::string> hosts, HostsOf(db, run_id));

  ASSIGN_OR_RETURN(Statement earlier,
                   db.Prepare("SELECT run_id FROM runs WHERE label = ? AND status = 'completed' "
                              "AND run_id != ? AND (started_unix_nanos < ? OR "
                              "(started_unix_nanos = ? AND run_id < ?)) "
                              "ORDER BY started_unix_nanos DESC, run_id DESC"));
  earlier.Bind(1, label).Bind(2, run_id).Bind(3, started).Bind(4, started).Bind(5, run_id);
  size_t same_label = 0, other_hosts = 0;
  while (true) {
    ASSIGN_OR_RETURN(bool row, earlier.Step());
    if (!row) break;
    ++same_label;
    const std::string candidate = earlier.Text(0);
    ASSIGN_OR_RETURN(std::vector<PlannedPhase> other, PlanOf(db, candidate));
    if (other != plan) continue;
    ASSIGN_OR_RETURN(std::vector<std::string> other_hosts_list, HostsOf(db, candidate));
    if (other_hosts_list == hosts) return candidate;
    ++other_hosts;
  }
  const size_t other_plans = same_label - other_hosts;
  std::string why;
  if (other_plans > 0) {
    why = StrCat(other_plans, " earlier completed run", other_plans == 1 ? "" : "s",
                 " with that label ran other phases or parameters");
  }
  if (other_hosts > 0) {
    why += StrCat(why.empty() ? "" : "; ", other_hosts, " ran the same plan on other hosts");
  }
  if (why.empty()) why = "there is no earlier completed run with that label";
  return absl::NotFoundError(StrCat("--baseline latest-same-plan: no completed run before ", run_id,
                                    " with label '", label, "', the same plan and the same hosts (",
                                    why, ")"));
}

}  // namespace stormark::controller
