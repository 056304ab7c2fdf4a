#include "controller/workloads/command/command_report.h"

#include <cstdlib>

#include "common/units.h"
#include "controller/report/text_table.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

const stormark::v1::Measurement* FindCommand(const stormark::v1::PhaseResult& result) {
  for (const auto& m : result.measurements()) {
    if (m.name() == "command") return &m;
  }
  return nullptr;
}

std::string Seconds(int64_t nanos) {
  return fmt::format("{:.3f} s", static_cast<double>(nanos) / 1e9);
}

std::string Resolved(const stormark::v1::PhaseResult& result, const std::string& key) {
  auto it = result.resolved().find(key);
  return it == result.resolved().end() ? "" : it->second;
}

}  // namespace

std::optional<double> CommandSeconds(const stormark::v1::PhaseResult& result) {
  const stormark::v1::Measurement* m = FindCommand(result);
  if (m == nullptr) return std::nullopt;
  return static_cast<double>(m->elapsed_nanos()) / 1e9;
}

std::string CommandTable(const PhaseOutcome& outcome, const PhaseSummary&) {
  TextTable table;
  using Align = TextTable::Align;
  table.AddColumn("host", Align::kLeft);
  table.AddColumn("target", Align::kLeft);
  table.AddColumn("wall", Align::kRight);
  table.AddColumn("of it sync", Align::kRight);
  table.AddColumn("user CPU", Align::kRight);
  table.AddColumn("sys CPU", Align::kRight);
  table.AddColumn("max RSS", Align::kRight);
  table.AddColumn("ended", Align::kLeft);
  for (const HostOutcome& host : outcome.hosts) {
    const stormark::v1::Measurement* m = host.result ? FindCommand(*host.result) : nullptr;
    if (!host.succeeded() || m == nullptr) {
      const std::string ended =
          host.result && !Resolved(*host.result, "exit_status").empty()
              ? Resolved(*host.result, "exit_status")
          : host.result && host.result->state() == stormark::v1::PhaseResult::ABORTED ? "ABORTED"
                                                                                      : "FAILED";
      table.AddRow({host.host, host.target, "-", "-", "-", "-", "-", ended});
      continue;
    }
    const int64_t sync_nanos = std::atoll(Resolved(*host.result, "sync_nanos").c_str());
    const uint64_t rss_kib =
        std::strtoull(Resolved(*host.result, "max_rss_kib").c_str(), nullptr, 10);
    table.AddRow({host.host, host.target, Seconds(m->elapsed_nanos()),
                  outcome.plan.spec.command().sync() ? Seconds(sync_nanos) : "-",
                  Seconds(m->cpu_user_nanos()), Seconds(m->cpu_system_nanos()),
                  common::FormatBytes(rss_kib * 1024), "ok"});
  }
  return table.Render("  ");
}

}  // namespace stormark::controller
