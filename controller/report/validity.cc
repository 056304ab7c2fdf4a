#include "controller/report/validity.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <vector>

#include "common/units.h"
#include "controller/fleet/packed_series.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

using stormark::v1::PhaseResult;

constexpr double kDefaultLimit = 0.01;

struct Span {
  const HostOutcome* host;
  int64_t start, end;  // Controller clock.
};

std::string Duration(int64_t nanos) {
  return common::FormatDurationNanos(static_cast<double>(nanos));
}

std::string Percent(double share) {
  const double p = 100 * share;
  return p >= 10 ? fmt::format("{:.0f}%", p) : fmt::format("{:.2g}%", p);
}

// The hosts judged: those that succeeded and have a start.
bool Judged(const HostOutcome& host) {
  return host.succeeded() && host.result->start_unix_nanos() != 0;
}

// When a judged host started, on the controller's clock.
int64_t ControllerStart(const HostOutcome& host) {
  return host.result->start_unix_nanos() - host.clock.offset_nanos;
}

// A host's interval series summed, in all and within [from, to], one sample at a time.
class WindowSum {
 public:
  WindowSum(int64_t host_start, int64_t from, int64_t to) : host_start_(host_start) {
    share_.from = from;
    share_.to = to;
  }

  void Add(const stormark::v1::IntervalSample& s) {
    ++samples_;
    series_bytes_ += s.bytes();
    series_ops_ += s.ops();
    const int64_t begin = host_start_ + s.offset_nanos();
    const int64_t end = begin + s.length_nanos();
    const int64_t overlap = std::min(end, share_.to) - std::max(begin, share_.from);
    if (overlap <= 0 || s.length_nanos() <= 0) return;
    const double share = static_cast<double>(overlap) / static_cast<double>(s.length_nanos());
    share_.bytes += static_cast<uint64_t>(share * static_cast<double>(s.bytes()) + 0.5);
    share_.ops += static_cast<uint64_t>(share * static_cast<double>(s.ops()) + 0.5);
  }

  int64_t samples() const { return samples_; }

  // The share within the window, when the series accounts for all of `result`'s work.
  std::optional<WindowShare> Share(const PhaseResult& result) const {
    if (samples_ == 0 || series_bytes_ != result.bytes() || series_ops_ != result.ops()) {
      return std::nullopt;
    }
    return share_;
  }

 private:
  int64_t host_start_;
  int64_t samples_ = 0;
  uint64_t series_bytes_ = 0, series_ops_ = 0;
  WindowShare share_;
};

// What one host did within [from, to]: from its interval series when the series accounts for
// all of its work (in memory, or measured by ShareWindow once it left), else pro rata from its
// totals (then *estimated is set).
void AddWindowShare(const Span& span, int64_t from, int64_t to, PhaseValidity* v) {
  const HostOutcome& host = *span.host;
  const PhaseResult& r = *host.result;
  std::optional<WindowShare> share;
  if (host.window_share && host.window_share->from == from && host.window_share->to == to) {
    share = host.window_share;
  } else {
    // In the result, or packed when it was read back so (one host's unpacked at a time).
    PhaseResult packed;
    WindowSum sum(span.start, from, to);
    for (const auto& s : OwnSeries(host, &packed)) sum.Add(s);
    share = sum.Share(r);
  }
  if (share) {
    v->window_bytes += share->bytes;
    v->window_ops += share->ops;
    return;
  }
  const int64_t length = span.end - span.start;
  const double part =
      length > 0 ? static_cast<double>(std::min(to, span.end) - std::max(from, span.start)) /
                       static_cast<double>(length)
                 : 0;
  if (part > 0) {
    v->window_bytes += static_cast<uint64_t>(part * static_cast<double>(r.bytes()));
    v->window_ops += static_cast<uint64_t>(part * static_cast<double>(r.ops()));
  }
  v->window_estimated = v->window_estimated || r.bytes() > 0 || r.ops() > 0;
}

}  // namespace

double PhaseValidity::share() const {
  return shortest_nanos > 0 ? static_cast<double>(spread_nanos + uncertainty_nanos) /
                                  static_cast<double>(shortest_nanos)
                            : 0;
}

PhaseValidity JudgeValidity(const PhaseOutcome& outcome) {
  PhaseValidity v;
  v.limit = outcome.plan.start_spread_limit > 0 ? outcome.plan.start_spread_limit : kDefaultLimit;
  if (!outcome.ended) {
    // Whatever the clocks say, an aggregate of the hosts that happened to have reported is not
    // the fleet's, and the clocks of the phase's end were never taken.
    const auto reported = std::count_if(outcome.hosts.begin(), outcome.hosts.end(),
                                        [](const HostOutcome& h) { return h.result.has_value(); });
    v.verdict = PhaseValidity::Verdict::kInvalid;
    v.why = fmt::format(
        "the phase had not ended when it was recorded (its controller stopped, or it still "
        "runs): {} of {} hosts had reported",
        reported, outcome.hosts.size());
    return v;
  }
  if (outcome.mode == RunMode::kSequential) {
    v.why = "the hosts ran one after another";
    return v;
  }
  std::vector<Span> spans;
  int64_t u1 = 0, u2 = 0;
  for (const HostOutcome& host : outcome.hosts) {
    if (!Judged(host)) continue;
    const int64_t start = ControllerStart(host);
    spans.push_back({&host, start, start + host.result->elapsed_nanos()});
    const int64_t u = host.clock.uncertainty_nanos;
    if (u > u1) {
      u2 = u1;
      u1 = u;
    } else if (u > u2) {
      u2 = u;
    }
  }
  v.hosts = static_cast<int>(spans.size());
  if (spans.size() < 2) {
    v.why = spans.empty() ? "no host succeeded" : "one host";
    return v;
  }
  const auto by_start = [](const Span& a, const Span& b) { return a.start < b.start; };
  const auto by_end = [](const Span& a, const Span& b) { return a.end < b.end; };
  const Span& first = *std::min_element(spans.begin(), spans.end(), by_start);
  const Span& last = *std::max_element(spans.begin(), spans.end(), by_start);
  const Span& first_done = *std::min_element(spans.begin(), spans.end(), by_end);
  v.first_start = first.start;
  v.last_start = last.start;
  v.first_end = first_done.end;
  v.last_end = std::max_element(spans.begin(), spans.end(), by_end)->end;
  v.spread_nanos = v.last_start - v.first_start;
  v.uncertainty_nanos = u1 + u2;
  v.shortest_nanos = INT64_MAX;
  for (const Span& s : spans) v.shortest_nanos = std::min(v.shortest_nanos, s.end - s.start);
  v.window_nanos = std::max<int64_t>(0, v.first_end - v.last_start);
  if (v.window_nanos > 0) {
    for (const Span& s : spans) AddWindowShare(s, v.last_start, v.first_end, &v);
  }

  const double allowed = v.limit * static_cast<double>(v.shortest_nanos);
  v.verdict = PhaseValidity::Verdict::kInvalid;
  if (v.last_start > v.first_end) {
    v.why =
        fmt::format("{} started {} after {} had finished: the hosts never ran together",
                    last.host->host, Duration(v.last_start - v.first_end), first_done.host->host);
  } else if (static_cast<double>(v.uncertainty_nanos) > allowed) {
    v.clock_too_poor = true;
    v.why = fmt::format(
        "the clock estimate is good to +-{} only, more than {} of the shortest host's {}: too "
        "poor to say whether the hosts started together",
        Duration(v.uncertainty_nanos), Percent(v.limit), Duration(v.shortest_nanos));
  } else if (static_cast<double>(v.spread_nanos + v.uncertainty_nanos) > allowed) {
    v.why = fmt::format(
        "start spread {} +-{} is {} of the shortest host's {} (limit {}): {} started last, {} "
        "after {}",
        Duration(v.spread_nanos), Duration(v.uncertainty_nanos), Percent(v.share()),
        Duration(v.shortest_nanos), Percent(v.limit), last.host->host, Duration(v.spread_nanos),
        first.host->host);
  } else {
    v.verdict = PhaseValidity::Verdict::kValid;
  }
  return v;
}

common::Status ShareWindow(
    PhaseOutcome* outcome,
    const std::function<common::Status(const SeriesSampleFn&)>& read_series) {
  const PhaseValidity v = JudgeValidity(*outcome);
  if (v.window_nanos <= 0) return absl::OkStatus();
  std::vector<std::optional<WindowSum>> sums(outcome->hosts.size());
  bool any = false;
  for (size_t h = 0; h < sums.size(); ++h) {
    const HostOutcome& host = outcome->hosts[h];
    // Its series left memory: none in the result, none packed.
    if (!Judged(host) || host.result->series_size() > 0 || !host.packed_series.empty()) {
      continue;
    }
    sums[h].emplace(ControllerStart(host), v.last_start, v.first_end);
    any = true;
  }
  if (!any) return absl::OkStatus();
  RETURN_IF_ERROR(read_series([&sums](size_t h, const stormark::v1::IntervalSample& s) {
    if (h < sums.size() && sums[h]) sums[h]->Add(s);
  }));
  // Rows deleted or added under the run would make another window, and look like a series
  // that the host sent incomplete.
  for (size_t h = 0; h < sums.size(); ++h) {
    const HostOutcome& host = outcome->hosts[h];
    if (sums[h] && sums[h]->samples() != host.own_series_samples) {
      return absl::DataLossError(
          fmt::format("{} samples of host {}'s series are stored, where its result had {}",
                      sums[h]->samples(), host.host, host.own_series_samples));
    }
  }
  for (size_t h = 0; h < sums.size(); ++h) {
    if (sums[h]) outcome->hosts[h].window_share = sums[h]->Share(*outcome->hosts[h].result);
  }
  return absl::OkStatus();
}

std::string_view VerdictName(PhaseValidity::Verdict verdict) {
  switch (verdict) {
    case PhaseValidity::Verdict::kValid:
      return "valid";
    case PhaseValidity::Verdict::kInvalid:
      return "INVALID";
    case PhaseValidity::Verdict::kNotJudged:
      break;
  }
  return "not judged";
}

std::string ValidityLines(const PhaseValidity& v) {
  if (!v.judged()) return "";
  std::string out;
  if (v.invalid()) {
    out =
        fmt::format("  validity: INVALID: {}; the all-hosts figures are not the fleet's\n", v.why);
  } else {
    out = fmt::format(
        "  validity: valid: start spread {} +-{} is {} of the shortest host's {} (limit {})\n",
        Duration(v.spread_nanos), Duration(v.uncertainty_nanos), Percent(v.share()),
        Duration(v.shortest_nanos), Percent(v.limit));
  }
  if (v.window_nanos > 0 && !v.clock_too_poor) {
    const double seconds = static_cast<double>(v.window_nanos) / 1e9;
    out += fmt::format("  all {} hosts ran together for {}: {}, {} ops/s in that window{}\n",
                       v.hosts, Duration(v.window_nanos),
                       common::FormatRate(static_cast<double>(v.window_bytes) / seconds),
                       common::FormatIops(static_cast<double>(v.window_ops) / seconds),
                       v.window_estimated ? " (pro rata: a host sent no complete series)" : "");
  }
  return out;
}

}  // namespace stormark::controller
