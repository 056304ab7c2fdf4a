// bonnie++-compatible output of a bonnie phase, so that results can go through the tools and
// spreadsheets people already use with bonnie++ 2.00 (Debian's bon_csv2html, bon_csv2txt).
//
// A bonnie PhaseResult holds one Measurement per bonnie++ test, named by its CSV column
// (putc, put_block, rewrite, getc, get_block, seeks, seq_create, seq_stat, seq_del,
// ran_create, ran_stat, ran_del), and `resolved` holds size_bytes, chunk_size, seed,
// files_k, file_max_bytes, file_min_bytes, file_dirs, seeks and seekers.
//
// Figures follow bonnie++'s rules: K/sec is int(KiB / s), seeks/sec has one decimal below
// 1000, file tests are files/sec, %CPU is int(cpu / elapsed * 100), a test that was too fast
// to time shows "+++++" and "+++", a test that did not run shows empty fields, and latency is
// the histogram's maximum as "123us", "45ms" or "120s" (seconds only from 100 s on). A
// missing measurement counts as not run; a histogram that does not decode leaves its latency
// field empty. A missing or unparsable `resolved` value takes bonnie++'s default.
//
// All functions are pure and thread-safe.
#ifndef STORMARK_CONTROLLER_WORKLOADS_BONNIE_BONNIE_REPORT_H_
#define STORMARK_CONTROLLER_WORKLOADS_BONNIE_BONNIE_REPORT_H_

#include <string>
#include <utility>
#include <vector>

#include "nlohmann/json_fwd.hpp"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

// The format_version and bonnie_version fields. "2.00a" is what bonnie++ 2.00 (Debian's
// 2.00a+nmu1) really prints; the readers check only the format version.
inline constexpr char kBonnieCsvFormatVersion[] = "1.98";
inline constexpr char kBonnieVersion[] = "2.00a";

// One data line of bonnie++ 2.00's CSV output, without the newline. It has 50 fields: the
// 48 the header names, plus bonnie++'s seek count and seeker count, which it prints after
// the (always empty) io_chunk_size field. Field by field (0-based):
//   0-4   format_version, bonnie_version, name, concurrency (1), seed
//   5-8   file size ("300M", "4G"), empty, seeks, seekers          (all empty: no I/O tests)
//   9-20  putc, put_block, rewrite, getc, get_block, seeks: rate and %CPU
//   21-25 files (in 1024s), max size, min size, empty, directories (all empty: no file tests)
//   26-37 seq_create, seq_stat, seq_del, ran_create, ran_stat, ran_del: rate and %CPU
//   38-49 the twelve latencies, in the same test order
// `name` becomes the host label, with commas and line breaks replaced by '_'.
std::string BonnieCsvLine(const std::string& name, const stormark::v1::PhaseResult& result);

// The header line bonnie++ prints before several CSV lines (48 field names), without the
// newline. bon_csv2html skips it; bon_csv2txt complains about it on stderr but goes on.
std::string BonnieCsvHeader();

// A plain-text table in bon_csv2txt's layout, one row per (host, result): a block for the
// I/O tests (Sequential Output, Sequential Input, Random Seeks) with a Latency line per host,
// then a block for the file tests (Sequential Create, Random Create) when any host ran them.
// Each ends in a newline; no rows (or no tests run) give "".
//
// Columns and widths are bon_csv2txt's. Three things differ from what bon_csv2txt prints for
// BonnieCsvLine's output, because there it is wrong: a too-fast K/sec test shows "+++++"
// (bon_csv2txt shows "0k"); the first column labels the run as bonnie++'s own report
// does ("4G", "4G:4k", "16:10000:10000/10") instead of bon_csv2txt's "4G::8192:5" and
// "16:10000:10000:10"; and a host name too long for the first column is printed whole on
// a line of its own above the host's row, where bon_csv2txt cuts it.
std::string BonnieTextTable(
    const std::vector<std::pair<std::string, stormark::v1::PhaseResult>>& rows);

// The "workload" object of a bonnie phase in the JSON report (report_json.h), without its
// "type": every BonnieSpec field under its protobuf name, as a number or a bool (a seed
// beyond 2^53 too).
nlohmann::json BonnieSpecJson(const stormark::v1::BonnieSpec& spec);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_WORKLOADS_BONNIE_BONNIE_REPORT_H_
