#include "controller/workloads/postmark/postmark_report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string_view>

#include "common/histogram.h"
#include "common/strings.h"
#include "common/units.h"
#include "controller/report/text_table.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

using stormark::v1::Measurement;
using stormark::v1::PhaseResult;

constexpr int64_t kMinTimeNanos = 500'000'000;
constexpr double kMegabyte = 1024.0 * 1024.0;  // PostMark's MEGABYTE
constexpr char kTooFastMark[] = " *";
// The terse report's columns for several hosts, in PostMark's order.
constexpr const char* kTerseFields[] = {
    "total_s",        "trans_s",  "trans/s",    "created/s", "create_alone/s",
    "create_mixed/s", "read/s",   "appended/s", "deleted/s", "delete_alone/s",
    "delete_mixed/s", "read_B/s", "written_B/s"};
constexpr char kTooFastNote[] =
    "* timed over less than 0.5 s: a real measurement, but too short to be a stable figure";

// One part of the run: its length, and whether it was too short to time.
struct Span {
  double seconds = 0;
  bool too_fast = true;
};

// One kind of file operation within one part.
struct Count {
  uint64_t files = 0;
  uint64_t bytes = 0;
};

// Everything the reports print, for one host.
struct Figures {
  Span total, pool, transactions_span, teardown;
  uint64_t transactions = 0;
  Count create_alone, create_mixed, read, append, delete_mixed, delete_alone;
  // Per operation type; the alone and mixed parts merged.
  common::LatencyHistogram create_latency, read_latency, append_latency, delete_latency;

  uint64_t created() const { return create_alone.files + create_mixed.files; }
  uint64_t deleted() const { return delete_alone.files + delete_mixed.files; }
  uint64_t bytes_written() const { return create_alone.bytes + create_mixed.bytes + append.bytes; }
};

const Measurement* Find(const PhaseResult& result, std::string_view name) {
  for (const Measurement& m : result.measurements()) {
    if (m.name() == name) return &m;
  }
  return nullptr;
}

// Reads one measurement into `span`, `count` and `latency` (each optional).
bool Take(const PhaseResult& result, std::string_view name, Span* span, Count* count,
          common::LatencyHistogram* latency) {
  const Measurement* m = Find(result, name);
  if (m == nullptr) return false;
  if (span != nullptr) {
    span->seconds = static_cast<double>(m->elapsed_nanos()) / 1e9;
    span->too_fast = m->too_fast() || m->elapsed_nanos() < kMinTimeNanos;
  }
  if (count != nullptr) *count = Count{m->ops(), m->bytes()};
  if (latency != nullptr && m->has_latency()) {
    auto decoded = common::LatencyHistogram::FromProto(m->latency());
    if (decoded.ok()) latency->Merge(*decoded);
  }
  return true;
}

std::optional<Figures> Extract(const PhaseResult& result) {
  Figures f;
  Count transactions;
  const bool complete =
      Take(result, "total", &f.total, nullptr, nullptr) &&
      Take(result, "create_alone", &f.pool, &f.create_alone, &f.create_latency) &&
      Take(result, "transactions", &f.transactions_span, &transactions, nullptr) &&
      Take(result, "create_mixed", nullptr, &f.create_mixed, &f.create_latency) &&
      Take(result, "read", nullptr, &f.read, &f.read_latency) &&
      Take(result, "append", nullptr, &f.append, &f.append_latency) &&
      Take(result, "delete_mixed", nullptr, &f.delete_mixed, &f.delete_latency) &&
      Take(result, "delete_alone", &f.teardown, &f.delete_alone, &f.delete_latency);
  if (!complete) return std::nullopt;
  f.transactions = transactions.files;
  return f;
}

double PerSecond(double amount, const Span& span) {
  return span.seconds > 0 ? amount / span.seconds : 0;
}

// A count per second: whole numbers from 100 up, else with decimals.
std::string RateNumber(double amount, const Span& span) {
  const double rate = PerSecond(amount, span);
  return rate >= 100  ? fmt::format("{:.0f}", rate)
         : rate >= 10 ? fmt::format("{:.1f}", rate)
                      : fmt::format("{:.2f}", rate);
}

const char* Mark(const Span& span) { return span.too_fast ? kTooFastMark : ""; }

// A rate with its too-fast mark, for a table cell.
std::string Rate(double amount, const Span& span) { return RateNumber(amount, span) + Mark(span); }

// A line of the verbose report: "\t<text> (<rate> per second)" and the mark at its end.
std::string RateLine(std::string_view text, double amount, const Span& span) {
  return fmt::format("\t{} ({} per second){}\n", text, RateNumber(amount, span), Mark(span));
}

// PostMark's scalef(): megabytes above one, else kilobytes, with two decimals.
std::string Scaled(double bytes) {
  if (bytes / kMegabyte > 1) return fmt::format("{:.2f} megabytes", bytes / kMegabyte);
  if (bytes > 0) return fmt::format("{:.2f} kilobytes", bytes / 1024.0);
  return "0 bytes";
}

std::string Seconds(const Span& span) { return fmt::format("{:.2f}", span.seconds); }

bool AnyTooFast(const Figures& f) {
  return f.total.too_fast || f.pool.too_fast || f.transactions_span.too_fast || f.teardown.too_fast;
}

// What to raise so that the parts marked too fast last long enough: the pool is created and
// deleted alone in time proportional to `number`, the transactions take `transactions`.
std::string TooFastRemedy(bool pool_short, bool transactions_short) {
  if (pool_short && transactions_short) return "raise number (files) and transactions";
  if (pool_short) return "raise number (files in the pool)";
  return "raise transactions";
}

// The parts any host timed under one second, which PostMark's whole-second clock counts as one
// second (diff_time()), and a note naming them, or "" when none was. PostMark's rate of such a
// part reads at most its count per second, which is why "Deletion alone: 2340 files (2340 per
// second)" in PostMark is 34,000 per second here. Said once per report, not per figure.
std::string WholeSecondNote(const std::vector<const Figures*>& hosts) {
  const std::pair<const char*, Span Figures::*> parts[] = {
      {"the whole run", &Figures::total},
      {"creation alone", &Figures::pool},
      {"the transactions", &Figures::transactions_span},
      {"deletion alone", &Figures::teardown}};
  std::string listed;
  for (const auto& [name, member] : parts) {
    double shortest = 1;
    for (const Figures* f : hosts) shortest = std::min(shortest, (f->*member).seconds);
    if (shortest >= 1) continue;
    listed += fmt::format("{}{} {}", listed.empty() ? "" : ", ", name,
                          common::FormatDurationNanos(shortest * 1e9));
  }
  if (listed.empty()) return "";
  return common::StrCat(
      "under 1 s: ", listed,
      ". PostMark's clock counts whole seconds and times such a part as 1 s, so its rate for it "
      "reads at most the part's file count; these rates use the exact times");
}

// kTooFastNote with the parts that were short and what to raise, or "" when none was.
std::string TooFastNote(const std::vector<const Figures*>& hosts) {
  bool pool = false, transactions = false;
  for (const Figures* f : hosts) {
    pool = pool || f->pool.too_fast || f->teardown.too_fast;
    transactions = transactions || f->transactions_span.too_fast;
    if (f->total.too_fast) pool = transactions = true;
  }
  if (!pool && !transactions) return "";
  return common::StrCat(kTooFastNote, "; ", TooFastRemedy(pool, transactions));
}

std::string LatencyCell(const common::LatencyHistogram& h, double percentile) {
  if (h.count() == 0) return "-";
  const double nanos = percentile > 0 ? static_cast<double>(h.Percentile(percentile)) : h.Mean();
  return common::FormatDurationNanos(nanos);
}

// Not in PostMark's report: the latency of each file operation, all parts together.
std::string LatencyBlock(const Figures& f) {
  TextTable table;
  table.AddColumn("", TextTable::Align::kLeft);
  for (const char* header : {"files", "mean", "p50", "p99", "max"}) {
    table.AddColumn(header, TextTable::Align::kRight);
  }
  const std::pair<const char*, const common::LatencyHistogram*> rows[] = {
      {"create", &f.create_latency},
      {"read", &f.read_latency},
      {"append", &f.append_latency},
      {"delete", &f.delete_latency}};
  for (const auto& [name, h] : rows) {
    table.AddRow({name, common::StrCat(h->count()), LatencyCell(*h, 0), LatencyCell(*h, 50),
                  LatencyCell(*h, 99),
                  h->count() ? common::FormatDurationNanos(static_cast<double>(h->max())) : "-"});
  }
  return "Latency per file operation:\n" + table.Render("\t");
}

// One host's column of the comparison table: (label, cell) in row order.
std::vector<std::pair<std::string, std::string>> ComparisonCells(const Figures& f) {
  const Span& t = f.transactions_span;
  const auto n = [](uint64_t count) { return static_cast<double>(count); };
  const auto megabytes = [](double bytes) { return fmt::format("{:.2f}", bytes / kMegabyte); };
  const auto latency = [](const common::LatencyHistogram& h) {
    return common::StrCat(LatencyCell(h, 50), " / ", LatencyCell(h, 99));
  };
  const double read = n(f.read.bytes);
  const double written = n(f.bytes_written());
  return {
      {"seconds total", Seconds(f.total) + Mark(f.total)},
      {"seconds of transactions", Seconds(t) + Mark(t)},
      {"transactions per second", Rate(n(f.transactions), t)},
      {"files created", common::StrCat(f.created())},
      {"  per second", Rate(n(f.created()), f.total)},
      {"  creation alone per second", Rate(n(f.create_alone.files), f.pool)},
      {"  mixed with transactions per second", Rate(n(f.create_mixed.files), t)},
      {"files read", common::StrCat(f.read.files)},
      {"  per second", Rate(n(f.read.files), t)},
      {"files appended", common::StrCat(f.append.files)},
      {"  per second", Rate(n(f.append.files), t)},
      {"files deleted", common::StrCat(f.deleted())},
      {"  per second", Rate(n(f.deleted()), f.total)},
      {"  deletion alone per second", Rate(n(f.delete_alone.files), f.teardown)},
      {"  mixed with transactions per second", Rate(n(f.delete_mixed.files), t)},
      {"megabytes read", megabytes(read)},
      {"  per second", megabytes(PerSecond(read, f.total)) + Mark(f.total)},
      {"megabytes written", megabytes(written)},
      {"  per second", megabytes(PerSecond(written, f.total)) + Mark(f.total)},
      {"create latency p50 / p99", latency(f.create_latency)},
      {"read latency p50 / p99", latency(f.read_latency)},
      {"append latency p50 / p99", latency(f.append_latency)},
      {"delete latency p50 / p99", latency(f.delete_latency)},
  };
}

}  // namespace

std::string PostmarkVerboseReport(const PhaseResult& result) {
  const std::optional<Figures> figures = Extract(result);
  if (!figures) return "";
  const Figures& f = *figures;
  const Span& t = f.transactions_span;
  const auto n = [](uint64_t count) { return static_cast<double>(count); };
  std::string out = "Time:\n";
  out += fmt::format("\t{} seconds total{}\n", Seconds(f.total), Mark(f.total));
  out += RateLine(fmt::format("{} seconds of transactions", Seconds(t)), n(f.transactions), t);
  out += "\nFiles:\n";
  out += RateLine(fmt::format("{} created", f.created()), n(f.created()), f.total);
  out += RateLine(fmt::format("\tCreation alone: {} files", f.create_alone.files),
                  n(f.create_alone.files), f.pool);
  out += RateLine(fmt::format("\tMixed with transactions: {} files", f.create_mixed.files),
                  n(f.create_mixed.files), t);
  out += RateLine(fmt::format("{} read", f.read.files), n(f.read.files), t);
  out += RateLine(fmt::format("{} appended", f.append.files), n(f.append.files), t);
  out += RateLine(fmt::format("{} deleted", f.deleted()), n(f.deleted()), f.total);
  out += RateLine(fmt::format("\tDeletion alone: {} files", f.delete_alone.files),
                  n(f.delete_alone.files), f.teardown);
  out += RateLine(fmt::format("\tMixed with transactions: {} files", f.delete_mixed.files),
                  n(f.delete_mixed.files), t);
  out += "\nData:\n";
  const double read = static_cast<double>(f.read.bytes);
  const double written = static_cast<double>(f.bytes_written());
  out += fmt::format("\t{} read ({} per second){}\n", Scaled(read),
                     Scaled(PerSecond(read, f.total)), Mark(f.total));
  out += fmt::format("\t{} written ({} per second){}\n", Scaled(written),
                     Scaled(PerSecond(written, f.total)), Mark(f.total));
  out += "\n";
  out += LatencyBlock(f);
  const std::string whole = WholeSecondNote({&f});
  if (AnyTooFast(f) || !whole.empty()) out += "\n";
  if (AnyTooFast(f)) out += common::StrCat(TooFastNote({&f}), "\n");
  if (!whole.empty()) out += common::StrCat(whole, "\n");
  return out;
}

std::string PostmarkTerseLine(const PhaseResult& result) {
  const std::optional<Figures> figures = Extract(result);
  if (!figures) return "";
  const Figures& f = *figures;
  const Span& t = f.transactions_span;
  auto rate = [](double amount, const Span& span) {
    return fmt::format("{:.2f}", PerSecond(amount, span));
  };
  // PostMark prints the two times as whole seconds, at least 1 (diff_time()).
  auto whole = [](const Span& span) {
    return fmt::format("{}", std::max<int64_t>(1, std::llround(span.seconds)));
  };
  const std::array<std::string, 13> fields = {
      whole(f.total),
      whole(t),
      rate(static_cast<double>(f.transactions), t),
      rate(static_cast<double>(f.created()), f.total),
      rate(static_cast<double>(f.create_alone.files), f.pool),
      rate(static_cast<double>(f.create_mixed.files), t),
      rate(static_cast<double>(f.read.files), t),
      rate(static_cast<double>(f.append.files), t),
      rate(static_cast<double>(f.deleted()), f.total),
      rate(static_cast<double>(f.delete_alone.files), f.teardown),
      rate(static_cast<double>(f.delete_mixed.files), t),
      rate(static_cast<double>(f.read.bytes), f.total),
      rate(static_cast<double>(f.bytes_written()), f.total)};
  std::string line;
  for (const std::string& field : fields) line += (line.empty() ? "" : " ") + field;
  return line;
}

std::string PostmarkComparisonTable(const std::vector<std::pair<std::string, PhaseResult>>& hosts) {
  std::vector<std::string> names;
  std::vector<std::vector<std::pair<std::string, std::string>>> columns;
  std::vector<Figures> figures;
  for (const auto& [name, result] : hosts) {
    if (std::optional<Figures> f = Extract(result)) {
      names.push_back(name);
      columns.push_back(ComparisonCells(*f));
      figures.push_back(std::move(*f));
    }
  }
  std::vector<const Figures*> all;
  for (const Figures& f : figures) all.push_back(&f);
  const std::string too_fast = TooFastNote(all);
  if (columns.empty()) return "";
  TextTable table;
  table.AddColumn("PostMark", TextTable::Align::kLeft);
  for (const std::string& name : names) table.AddColumn(name, TextTable::Align::kRight);
  for (size_t row = 0; row < columns[0].size(); ++row) {
    std::vector<std::string> cells = {columns[0][row].first};
    for (const auto& column : columns) cells.push_back(column[row].second);
    table.AddRow(std::move(cells));
  }
  std::string out = table.Render("  ");
  const std::string whole = WholeSecondNote(all);
  if (!too_fast.empty() || !whole.empty()) out += "\n";
  if (!too_fast.empty()) out += common::StrCat("  ", too_fast, "\n");
  if (!whole.empty()) out += common::StrCat("  ", whole, "\n");
  return out;
}

std::string PostmarkTerseReport(const std::vector<std::pair<std::string, PhaseResult>>& hosts) {
  std::vector<std::pair<std::string, std::string>> lines;
  std::vector<Figures> figures;
  for (const auto& [name, result] : hosts) {
    if (std::optional<Figures> f = Extract(result)) {
      lines.emplace_back(name, PostmarkTerseLine(result));
      figures.push_back(std::move(*f));
    }
  }
  if (lines.empty()) return "";
  std::vector<const Figures*> all;
  for (const Figures& f : figures) all.push_back(&f);
  // The note first, so that the report's last line is PostMark's line for a single host.
  const std::string whole = WholeSecondNote(all);
  std::string out = whole.empty() ? "" : common::StrCat("# ", whole, "\n");
  if (lines.size() == 1) return out + lines[0].second + "\n";
  TextTable table;
  table.AddColumn("host", TextTable::Align::kLeft);
  for (const char* field : kTerseFields) table.AddColumn(field, TextTable::Align::kRight);
  for (const auto& [name, line] : lines) {
    std::vector<std::string> cells = {name};
    for (std::string_view field : common::Split(line, ' ')) cells.emplace_back(field);
    table.AddRow(std::move(cells));
  }
  return out + table.Render("");
}

std::string PostmarkPhaseReport(const std::vector<std::pair<std::string, PhaseResult>>& hosts,
                                bool terse) {
  if (terse) return PostmarkTerseReport(hosts);
  if (hosts.size() == 1) return PostmarkVerboseReport(hosts[0].second);
  return PostmarkComparisonTable(hosts);
}

}  // namespace stormark::controller
