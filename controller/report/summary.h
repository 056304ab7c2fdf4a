// The figures of one phase, per host and for all hosts together, derived from the agents'
// raw results. Percentiles come from histograms merged here, never from averaged
// percentiles. Tables and JSON both print from this.
#ifndef STORMARK_CONTROLLER_REPORT_SUMMARY_H_
#define STORMARK_CONTROLLER_REPORT_SUMMARY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/histogram.h"
#include "controller/fleet/fleet.h"
#include "controller/report/validity.h"

namespace stormark::controller {

struct RowSummary {
  std::string host;    // "all hosts" for the aggregate row
  std::string target;  // empty for the aggregate row
  // HostOutcome::transport; empty for the aggregate row.
  std::string transport;
  // "succeeded", "failed", "aborted" or "error" (no result from the agent).
  std::string status;
  std::string error;
  uint64_t bytes = 0;  // All hosts: summed; "mean of hosts": the mean.
  uint64_t ops = 0;
  // Per host: the timed region. All hosts, concurrent: first start to last end on the
  // controller's clock, so bytes_per_second is the aggregate. All hosts, sequential ("mean
  // of hosts"): they never ran together, so there is no aggregate, and bytes, ops, elapsed
  // and bytes_per_second are each the mean of the hosts' (the latency histogram is merged).
  double elapsed_seconds = 0;
  double bytes_per_second = 0;
  // User+system CPU over wall time; 100 = one core. All hosts: the mean over hosts.
  double cpu_percent = 0;
  common::LatencyHistogram latency;
  std::vector<std::string> warnings;
  // Hosts that contributed (1 for a host row).
  int hosts = 0;
  // The aggregate row of a phase whose validity verdict is INVALID (validity.h): its tables
  // label it "all hosts INVALID", and its first warning says why.
  bool invalid = false;
};

struct PhaseSummary {
  std::vector<RowSummary> rows;  // one per host, in fleet order
  // Present when at least one host succeeded.
  std::optional<RowSummary> all_hosts;
  // Hosts that did not succeed.
  int failed = 0;
  // Whether the hosts ran together (validity.h).
  PhaseValidity validity;
};

// Fails only on a corrupt histogram from an agent, which it reports as that host's error.
PhaseSummary Summarize(const PhaseOutcome& outcome);

// One host's row of Summarize: a function of that host's outcome alone, so that its row can be
// written as its result arrives.
RowSummary SummarizeHost(const HostOutcome& host);

// A host row that was aborted after it had done work: its figures are those until the abort.
// Every view shows them, marked "~" (the tables, results show, CSV, HTML) or `"partial":
// true` (JSON), with the note kPartialNote.
bool IsPartial(const RowSummary& row);

// The note on a partial row, after its host: "partial: its figures cover the 7.76 s until it
// was aborted".
std::string PartialNote(const RowSummary& row);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_SUMMARY_H_
