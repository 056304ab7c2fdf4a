// PostMark's report of a postmark phase, from the Measurements the agent sends (named in
// agent/workloads/postmark.h: total, create_alone, transactions, create_mixed, read, append,
// delete_mixed, delete_alone).
//
// The figures are PostMark's, defined as PostMark defines them, so they read the same:
//   transactions per second     transactions / transaction time
//   created, deleted per second files / total time
//   creation alone per second   pool files / pool time; deletion alone: teardown files /
//                               teardown time
//   mixed with transactions, read, appended per second: files / transaction time
//   data read, written per second: bytes / total time ("megabytes" are MiB, as PostMark's)
// Times have two decimals where PostMark's time() counts whole seconds (and makes a part
// under a second take one); a report with a part under a second says so once, in a note. A
// rate timed over less than 0.5 s is marked "*" with a footnote: it is a real measurement but
// too short to be a stable figure.
//
// Pure functions; thread-safe.
#ifndef STORMARK_CONTROLLER_WORKLOADS_POSTMARK_POSTMARK_REPORT_H_
#define STORMARK_CONTROLLER_WORKLOADS_POSTMARK_POSTMARK_REPORT_H_

#include <string>
#include <utility>
#include <vector>

#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

// PostMark's verbose report ("Time:", "Files:", "Data:") of one host, with latency per file
// operation added after it. "" when the result holds no postmark measurements.
std::string PostmarkVerboseReport(const stormark::v1::PhaseResult& result);

// PostMark's terse report: one line of 13 figures (total seconds, transaction seconds,
// transactions/s, created/s, creation alone/s, created mixed/s, read/s, appended/s,
// deleted/s, deletion alone/s, deleted mixed/s, bytes read/s, bytes written/s), in PostMark's
// order and format: the two times as whole seconds, at least 1, as PostMark prints them, and
// the rates "%.2f", from the exact times. Deletion alone is per second of the deletion, as in
// PostMark's verbose report (PostMark 1.5's terse line divides it by the creation's time).
// No newline.
std::string PostmarkTerseLine(const stormark::v1::PhaseResult& result);

// The terse report of a phase: PostMark's line alone for one host, so that a script that
// reads PostMark's line reads this one; for several, a table with the host in its own first
// column and a header naming the 13 fields. A note on parts under a second (see above), when
// there is one, comes first, as a line starting with "# ". "" for no postmark results.
std::string PostmarkTerseReport(
    const std::vector<std::pair<std::string, stormark::v1::PhaseResult>>& hosts);

// Several hosts side by side: one row per figure, one column per host (label, result).
std::string PostmarkComparisonTable(
    const std::vector<std::pair<std::string, stormark::v1::PhaseResult>>& hosts);

// What a postmark phase prints for its hosts: the verbose report for one host, the
// comparison table for several; with `terse`, PostmarkTerseReport. Each line ends in a
// newline; "" for no hosts.
std::string PostmarkPhaseReport(
    const std::vector<std::pair<std::string, stormark::v1::PhaseResult>>& hosts, bool terse);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_WORKLOADS_POSTMARK_POSTMARK_REPORT_H_
