#include "controller/report/report_table.h"

#include <algorithm>
#include <map>

#include "common/strings.h"
#include "common/units.h"
#include "controller/report/environment.h"
#include "controller/report/host_groups.h"
#include "controller/workloads/workload_kinds.h"
#include "controller/report/text_table.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

using Align = TextTable::Align;
using common::StrCat;

std::string Latency(const common::LatencyHistogram& h, double p) {
  if (h.count() == 0) return "-";
  return common::FormatDurationNanos(static_cast<double>(h.Percentile(p)));
}

// An aborted row that has figures: what it did until the abort, shown and marked partial.
std::vector<std::string> Cells(const RowSummary& row, bool aggregate, bool via) {
  const bool ok = row.status == "succeeded";
  std::string status = ok ? "ok"
                       : row.status == "error"
                           ? "ERROR"
                           : common::StrCat(row.status == "aborted" ? "ABORTED" : "FAILED");
  if (aggregate) status = fmt::format("{} host{}", row.hosts, row.hosts == 1 ? "" : "s");
  std::vector<std::string> cells = {row.invalid ? StrCat(row.host, " INVALID") : row.host};
  if (via) cells.push_back(aggregate ? "" : row.transport.empty() ? "-" : row.transport);
  cells.push_back(row.target);
  if (!ok && !aggregate && !IsPartial(row)) {
    for (const char* dash : {"-", "-", "-", "-", "-", "-"}) cells.push_back(dash);
    cells.push_back(status);
    return cells;
  }
  // A figure qualified by a note is marked, so it is never read without it.
  const std::string mark = IsPartial(row) && !aggregate ? " ~" : row.warnings.empty() ? "" : " *";
  for (std::string& cell : std::vector<std::string>{
           fmt::format("{:.1f}{}", row.bytes_per_second / (1024.0 * 1024.0), mark),
           fmt::format("{:.1f}", row.cpu_percent), Latency(row.latency, 50),
           Latency(row.latency, 99),
           row.latency.count() ? common::FormatDurationNanos(static_cast<double>(row.latency.max()))
                               : "-",
           fmt::format("{:.2f} s", row.elapsed_seconds), status}) {
    cells.push_back(std::move(cell));
  }
  return cells;
}

bool AnyTransport(const PhaseSummary& summary) {
  return std::any_of(summary.rows.begin(), summary.rows.end(),
                     [](const RowSummary& row) { return !row.transport.empty(); });
}

// Agent errors name their host for standalone use; in a note the host is already named.
std::string WithoutHost(const std::string& host, const std::string& error) {
  const std::string prefix = common::StrCat("host ", host, ": ");
  const size_t at = error.find(prefix);
  if (at == std::string::npos) return error;
  return error.substr(0, at) + error.substr(at + prefix.size());
}

// The generic table: throughput, CPU and latency per host, then the aggregate row.
std::string StreamTable(const PhaseSummary& summary) {
  const bool via = AnyTransport(summary);
  TextTable table;
  table.AddColumn("host", Align::kLeft);
  if (via) table.AddColumn("via", Align::kLeft);
  table.AddColumn("target", Align::kLeft);
  table.AddColumn("MiB/s", Align::kRight);
  table.AddColumn("CPU%", Align::kRight);
  table.AddColumn("p50 lat", Align::kRight);
  table.AddColumn("p99 lat", Align::kRight);
  table.AddColumn("max lat", Align::kRight);
  table.AddColumn("elapsed", Align::kRight);
  table.AddColumn("status", Align::kLeft);
  for (const RowSummary& row : summary.rows) table.AddRow(Cells(row, false, via));
  if (summary.all_hosts && summary.rows.size() > 1) {
    // Marked when any host's figure in it is (its notes are those hosts' notes, listed below).
    table.AddRow(Cells(*summary.all_hosts, true, via));
  }
  return table.Render("  ");
}

// What was done to the page cache on the hosts that started, when the phase asked for
// something. A host where it was not done has its own note (the agent's warning).
std::string CacheLine(const PhaseOutcome& outcome) {
  const stormark::v1::CacheMode mode = outcome.plan.spec.cache();
  if (mode == stormark::v1::CACHE_KEEP) return "";
  size_t done = 0, hosts = 0;
  int64_t sync_max = 0, drop_max = 0;
  for (const HostOutcome& host : outcome.hosts) {
    if (!host.result || host.result->start_unix_nanos() == 0) continue;
    const auto& c = host.result->cache();
    ++hosts;
    if (mode == stormark::v1::CACHE_SYNC ? c.synced() : c.dropped()) ++done;
    sync_max = std::max(sync_max, c.sync_nanos());
    drop_max = std::max(drop_max, c.drop_nanos());
  }
  if (hosts == 0) return "";
  const std::string where = done == hosts
                                ? (hosts == 1 ? "" : " on every host")
                                : fmt::format(" on {} of {} hosts (see the notes)", done, hosts);
  const std::string sync = common::FormatDurationNanos(static_cast<double>(sync_max));
  if (mode == stormark::v1::CACHE_SYNC) {
    return fmt::format("  synced before the timed region{} (sync took up to {})\n", where, sync);
  }
  return fmt::format(
      "  page cache dropped before the timed region{} (sync up to {}, drop up to {})\n",
      done == 0 ? " on no host (see the notes)" : where, sync,
      common::FormatDurationNanos(static_cast<double>(drop_max)));
}

// The device settings in force, when the phase asked for any: "read_ahead_kb 4096 (was
// 128)", per host when the hosts differ.
std::string TuningLine(const PhaseOutcome& outcome, bool collapsed) {
  if (outcome.plan.spec.tuning().empty()) return "";
  std::string first;
  bool same = true;
  std::string lines;
  std::vector<std::pair<std::string, std::string>> texts;
  for (const HostOutcome& host : outcome.hosts) {
    if (!host.result || host.result->tuning().empty()) continue;
    std::string text;
    for (const auto& [knob, value] : outcome.plan.spec.tuning()) {
      const auto& t = host.result->tuning();
      auto now = t.find(knob);
      auto before = t.find(knob + ".before");
      if (now == t.end()) continue;
      text += fmt::format("{}{} {}{}", text.empty() ? "" : ", ", knob, now->second,
                          before != t.end() && before->second != now->second
                              ? fmt::format(" (was {})", before->second)
                              : "");
    }
    if (first.empty()) first = text;
    same = same && text == first;
    lines += fmt::format("  tuning on {}: {}\n", host.host, text);
    texts.emplace_back(host.host, text);
  }
  if (first.empty()) return "";
  if (same) return fmt::format("  tuning: {}; restored afterwards\n", first);
  return collapsed ? GroupedLines("tuning on", texts) : lines;
}

// The memory cgroup each host ran the phase in, when the phase set memory_limit: "memory
// limit: 64 MiB (cgroup v1) on every host", per host when they differ, and "not applied" where
// an agent ran it without (its note says why).
std::string MemoryLimitLine(const PhaseOutcome& outcome, bool collapsed) {
  if (outcome.plan.spec.memory_limit_bytes() == 0) return "";
  std::string first;
  bool same = true;
  std::string lines;
  std::vector<std::pair<std::string, std::string>> texts;
  for (const HostOutcome& host : outcome.hosts) {
    if (!host.result) continue;
    const auto& env = host.result->host_environment();
    const auto limit = env.find("memory_limit_bytes");
    const auto cgroup = env.find("memory_cgroup");
    const std::string text =
        limit == env.end()
            ? std::string("not applied (see the notes)")
            : fmt::format(
                  "{}{}", common::FormatBytes(std::strtoull(limit->second.c_str(), nullptr, 10)),
                  cgroup == env.end() ? ""
                                      : fmt::format(" (cgroup {})", cgroup->second.substr(0, 2)));
    if (lines.empty()) first = text;
    same = same && text == first;
    lines += fmt::format("  memory limit on {}: {}\n", host.host, text);
    texts.emplace_back(host.host, text);
  }
  if (lines.empty()) return "";
  if (same) return fmt::format("  memory limit: {}, the page cache held to it\n", first);
  return collapsed ? GroupedLines("memory limit on", texts) : lines;
}

// The same across many hosts: each counter's range over the hosts that reported it,
// "  device on 36 hosts: aoe.retransmits 0-12, aoe.srtt_us 40.1-48.2".
std::string DeviceStatsRanges(const PhaseOutcome& outcome) {
  struct Range {
    double min = 0, max = 0;
    std::string min_text, max_text;
    bool numeric = true;
    size_t hosts = 0;
  };
  std::map<std::string, Range> ranges;
  size_t hosts = 0;
  for (const HostOutcome& host : outcome.hosts) {
    if (!host.result || host.result->device_stats().empty()) continue;
    ++hosts;
    for (const auto& [key, text] : host.result->device_stats()) {
      Range& r = ranges[key];
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      const bool numeric = !text.empty() && end != nullptr && *end == '\0';
      r.numeric = r.numeric && numeric;
      if (numeric && (r.hosts == 0 || v < r.min)) {
        r.min = v;
        r.min_text = text;
      }
      if (numeric && (r.hosts == 0 || v > r.max)) {
        r.max = v;
        r.max_text = text;
      }
      ++r.hosts;
    }
  }
  if (hosts == 0) return "";
  std::string text;
  for (const auto& [key, r] : ranges) {
    const std::string value = !r.numeric                 ? std::string("(differs by host)")
                              : r.min_text == r.max_text ? r.min_text
                                                         : StrCat(r.min_text, "-", r.max_text);
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", key, value);
  }
  return fmt::format("  device on {} host{}: {}\n", hosts, hosts == 1 ? "" : "s", text);
}

// What each host's device counted during the phase (a network initiator's retransmissions,
// timeouts, RTT): "  device on HOST: aoe.retransmits 12, aoe.srtt_us 48.2".
std::string DeviceStatsLines(const PhaseOutcome& outcome, bool collapsed) {
  if (collapsed) return DeviceStatsRanges(outcome);
  std::string lines;
  for (const HostOutcome& host : outcome.hosts) {
    if (!host.result || host.result->device_stats().empty()) continue;
    const std::map<std::string, std::string> stats(host.result->device_stats().begin(),
                                                   host.result->device_stats().end());
    std::string text;
    for (const auto& [key, value] : stats) {
      text += fmt::format("{}{} {}", text.empty() ? "" : ", ", key, value);
    }
    lines += fmt::format("  device on {}: {}\n", host.host, text);
  }
  return lines;
}

// "  via: db1 AoE, db2 local", for tables that have no column for it.
std::string ViaLine(const PhaseSummary& summary) {
  if (!AnyTransport(summary)) return "";
  std::string hosts;
  for (const RowSummary& row : summary.rows) {
    hosts += fmt::format("{}{} {}", hosts.empty() ? "" : ", ", row.host,
                         row.transport.empty() ? "-" : row.transport);
  }
  return fmt::format("  via: {}\n", hosts);
}

// The notes beneath a group table: each text once, with the hosts it is about.
std::string CollapsedNotes(const PhaseOutcome& outcome, const PhaseSummary& summary) {
  std::vector<std::string> names;
  std::vector<Environment> envs;
  for (const HostOutcome& host : outcome.hosts) {
    names.push_back(host.host);
    envs.push_back(RowEnvironment(host, nullptr));
  }
  std::string notes;
  if (const std::vector<std::string> differing = DifferingKeys(envs); !differing.empty()) {
    notes += fmt::format("  {} {}\n", kDiffersMark, FormatDiffers(names, envs, differing, 3));
  }
  std::vector<std::pair<std::string, std::string>> transport, warnings, partial, errors;
  for (const HostOutcome& host : outcome.hosts) {
    if (!host.transport_note.empty()) transport.emplace_back(host.host, host.transport_note);
  }
  for (const RowSummary& row : summary.rows) {
    for (const auto& w : row.warnings) warnings.emplace_back(row.host, w);
    if (IsPartial(row)) partial.emplace_back(row.host, PartialNote(row));
    if (!row.error.empty()) errors.emplace_back(row.host, WithoutHost(row.host, row.error));
  }
  notes += GroupedLines(kDiffersMark, transport);
  notes += GroupedLines("*", warnings);
  notes += GroupedLines("~", partial);
  notes += GroupedLines("x", errors);
  return notes.empty() ? "" : "\n" + notes;
}

std::string MachineCell(const stormark::v1::AgentInfo& info) {
  return fmt::format("{}, {}, {} x {}, {} RAM", info.hostname(), info.kernel(), info.cpu_count(),
                     info.cpu_model().empty() ? "CPU" : info.cpu_model(),
                     common::FormatBytes(info.ram_bytes()));
}

// "scratch (ext4, 9.8 GiB free), nvme (block /dev/nvme0n1, 1.0 TiB, disposable)"; without
// `sizes`, no figure that differs from host to host (free space), so that hosts group.
std::string TargetsCell(const stormark::v1::AgentInfo& info, bool sizes) {
  std::string targets;
  for (const auto& t : info.targets()) {
    std::string what;
    if (t.kind() == "null") {
      what = "null device";
    } else if (t.kind() == "block" || t.kind() == "aoe") {
      const std::string where = t.kind() == "aoe"            ? t.path()
                                : t.block_kind() == "device" ? t.path()
                                                             : t.block_kind();
      what = common::StrCat(t.kind() == "aoe" ? "" : "block ", where, ", ",
                            common::FormatBytes(t.size_bytes()),
                            t.disposable() ? ", disposable" : ", read-only");
    } else if (t.kind() == "nbd" || t.kind() == "iscsi") {
      what = common::StrCat(
          t.transport(), " ", t.path(), ", ",
          t.size_bytes() != 0 ? common::FormatBytes(t.size_bytes()) : std::string("not reached"),
          t.disposable() ? ", disposable" : ", read-only");
    } else {
      what = common::StrCat(
          t.filesystem().empty() ? "?" : t.filesystem(),
          sizes ? common::StrCat(", ", common::FormatBytes(t.free_bytes()), " free") : "");
    }
    targets += common::StrCat(targets.empty() ? "" : ", ", t.name(), " (", what, ")");
  }
  return targets;
}

// The agents of a large fleet: how many answered, the machines and targets grouped by what
// they are, and the range of the clock offsets.
std::string AgentGroups(const std::vector<AgentRecord>& agents) {
  std::vector<std::string> unavailable;
  std::vector<std::pair<std::string, std::string>> machines;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const AgentRecord& agent : agents) {
    if (!agent.error.empty()) {
      unavailable.push_back(agent.host);
      continue;
    }
    stormark::v1::AgentInfo info = agent.info;
    info.clear_hostname();
    machines.emplace_back(agent.host, common::StrCat(MachineCell(info).substr(2), "; targets ",
                                                     TargetsCell(agent.info, false)));
    lo = std::min(lo, agent.clock.offset_nanos);
    hi = std::max(hi, agent.clock.offset_nanos);
  }
  std::string out = fmt::format("  {} agents: {} answering", agents.size(), machines.size());
  if (!unavailable.empty()) {
    out += fmt::format(", {} UNAVAILABLE ({})", unavailable.size(), NameList(unavailable, 8));
  }
  out += "\n" + GroupedLines("machine of", machines, 8);
  if (!machines.empty()) {
    out += fmt::format("  clock offsets {:+.3f} ms to {:+.3f} ms\n", static_cast<double>(lo) / 1e6,
                       static_cast<double>(hi) / 1e6);
  }
  out += "  --all-hosts prints a row per agent\n";
  return out;
}

}  // namespace

std::string FormatAgentsTable(const std::vector<AgentRecord>& agents, const TableView& view) {
  if (Collapses(view, agents.size())) return AgentGroups(agents);
  TextTable table;
  table.AddColumn("host", Align::kLeft);
  table.AddColumn("machine", Align::kLeft);
  table.AddColumn("targets", Align::kLeft);
  table.AddColumn("clock offset", Align::kRight);
  for (const AgentRecord& agent : agents) {
    if (!agent.error.empty()) {
      table.AddRow({agent.host, "UNAVAILABLE", "", ""});
      continue;
    }
    const double offset_ms = static_cast<double>(agent.clock.offset_nanos) / 1e6;
    table.AddRow({agent.host, MachineCell(agent.info), TargetsCell(agent.info, true),
                  fmt::format("{:+.3f} ms", offset_ms)});
  }
  return table.Render("  ");
}

std::string PhasePlace(const PhaseOutcome& outcome, int repeat) {
  std::string where = DescribeSweepPoint(outcome.plan.sweep_point);
  if (repeat > 1) {
    where +=
        fmt::format("{}run {}/{}", where.empty() ? "" : ", ", outcome.plan.repetition + 1, repeat);
  }
  return where.empty() ? outcome.plan.name : fmt::format("{} [{}]", outcome.plan.name, where);
}

std::string FormatPhaseTable(const PhaseOutcome& outcome, const PhaseSummary& summary, size_t index,
                             size_t count, int repeat, const TableView& view) {
  const bool collapsed = Collapses(view, summary.rows.size());
  std::string out = fmt::format("Phase {}/{}  {}: {}\n", index + 1, count,
                                PhasePlace(outcome, repeat), outcome.plan.Describe());
  const WorkloadKind* kind = KindOf(outcome.plan.spec);
  size_t started = 0;
  int64_t late = 0;
  for (const HostOutcome& host : outcome.hosts) {
    if (host.result && host.result->start_unix_nanos() != 0) {
      ++started;
      late = std::max(late, host.result->start_late_nanos());
    }
  }
  if (outcome.mode == RunMode::kSequential) {
    out += kind != nullptr && kind->table != nullptr
               ? "  sequential: one host at a time\n"
               : "  sequential: one host at a time; the last row is the mean of the hosts\n";
  } else if (started == 1) {
    out += fmt::format("  started {} after the planned instant\n",
                       common::FormatDurationNanos(static_cast<double>(late)));
  } else if (outcome.start_skew_nanos) {
    out += fmt::format(
        "  start skew {} across hosts (clock estimate good to +-{})\n",
        common::FormatDurationNanos(static_cast<double>(*outcome.start_skew_nanos)),
        common::FormatDurationNanos(static_cast<double>(outcome.start_skew_uncertainty_nanos)));
  }
  out += ValidityLines(summary.validity);
  out += CacheLine(outcome);
  out += TuningLine(outcome, collapsed);
  out += MemoryLimitLine(outcome, collapsed);
  out += DeviceStatsLines(outcome, collapsed);
  const bool via_column = kind == nullptr || kind->table == nullptr || kind->table_shows_via;
  if (!via_column && !collapsed) out += ViaLine(summary);
  out += "\n";
  if (collapsed) return out + GroupTable(outcome, summary, view) + CollapsedNotes(outcome, summary);

  // The rows whose settings differ from the first row's carry the mark beside their host.
  std::vector<std::string> names;
  std::vector<Environment> envs;
  for (const HostOutcome& host : outcome.hosts) {
    names.push_back(host.host);
    envs.push_back(RowEnvironment(host, nullptr));
  }
  const std::vector<std::string> differing = DifferingKeys(envs);
  PhaseSummary marked = summary;
  for (size_t i = 0; i < marked.rows.size(); ++i) {
    if (RowDiffers(i, envs, differing)) marked.rows[i].host += StrCat(" ", kDiffersMark);
  }
  if (kind != nullptr && kind->table != nullptr) {
    out += kind->table(outcome, marked);
  } else {
    out += StreamTable(marked);
  }

  std::string notes;
  if (!differing.empty()) {
    notes += fmt::format("  {} {}\n", kDiffersMark, FormatDiffers(names, envs, differing));
  }
  for (const HostOutcome& host : outcome.hosts) {
    if (!host.transport_note.empty()) {
      notes += fmt::format("  {} {}: {}\n", kDiffersMark, host.host, host.transport_note);
    }
  }
  for (const RowSummary& row : summary.rows) {
    for (const auto& w : row.warnings) notes += fmt::format("  * {}: {}\n", row.host, w);
    if (IsPartial(row)) {
      notes += fmt::format("  ~ {}: {}\n", row.host, PartialNote(row));
    }
    if (!row.error.empty())
      notes += fmt::format("  x {}: {}\n", row.host, WithoutHost(row.host, row.error));
  }
  if (!notes.empty()) out += "\n" + notes;
  return out;
}

}  // namespace stormark::controller
