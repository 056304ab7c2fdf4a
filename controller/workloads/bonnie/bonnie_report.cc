#include "controller/workloads/bonnie/bonnie_report.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>

#include "common/histogram.h"
#include "common/strings.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace stormark::controller {
namespace {

using stormark::v1::Measurement;
using stormark::v1::PhaseResult;

// bonnie++'s constants (bonnie.h): the shortest test it will time, its defaults, and the
// file tests' unit of NUM in -n NUM.
constexpr int64_t kMinTimeNanos = 500'000'000;
constexpr uint64_t kDefaultChunkSize = 8192;
constexpr uint64_t kDefaultSeeks = 8192;
constexpr uint64_t kDefaultSeekers = 5;
constexpr uint64_t kDirectoryUnit = 1024;

enum class Unit { kKiBPerSecond, kSeeksPerSecond, kFilesPerSecond };

struct TestColumn {
  std::string_view name;
  Unit unit;
};

constexpr std::array<TestColumn, 6> kIoTests = {{
    {"putc", Unit::kKiBPerSecond},
    {"put_block", Unit::kKiBPerSecond},
    {"rewrite", Unit::kKiBPerSecond},
    {"getc", Unit::kKiBPerSecond},
    {"get_block", Unit::kKiBPerSecond},
    {"seeks", Unit::kSeeksPerSecond},
}};

constexpr std::array<TestColumn, 6> kFileTests = {{
    {"seq_create", Unit::kFilesPerSecond},
    {"seq_stat", Unit::kFilesPerSecond},
    {"seq_del", Unit::kFilesPerSecond},
    {"ran_create", Unit::kFilesPerSecond},
    {"ran_stat", Unit::kFilesPerSecond},
    {"ran_del", Unit::kFilesPerSecond},
}};

constexpr std::string_view kTooFastRate = "+++++";
constexpr std::string_view kTooFastCpu = "+++";

// One test's three report cells; all empty when the test did not run.
struct TestFigures {
  bool ran = false;
  std::string rate;
  std::string cpu;
  std::string latency;
};

// Everything both output forms need from one host's result.
struct HostFigures {
  std::string name;
  std::string seed;
  uint64_t size_bytes = 0;
  uint64_t chunk_size = kDefaultChunkSize;
  uint64_t seeks = kDefaultSeeks;
  uint64_t seekers = kDefaultSeekers;
  uint64_t files_k = 0;
  uint64_t file_max_bytes = 0;
  uint64_t file_min_bytes = 0;
  uint64_t file_dirs = 0;
  bool io_ran = false;
  bool files_ran = false;
  std::array<TestFigures, 6> io;
  std::array<TestFigures, 6> files;
};

uint64_t ResolvedNumber(const PhaseResult& result, const std::string& key, uint64_t fallback) {
  auto it = result.resolved().find(key);
  if (it == result.resolved().end()) return fallback;
  const std::string& text = it->second;
  uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return fallback;
  return value;
}

const Measurement* FindMeasurement(const PhaseResult& result, std::string_view name) {
  for (const Measurement& m : result.measurements()) {
    if (m.name() == name) return &m;
  }
  return nullptr;
}

// bonnie++'s print_latency: seconds above 99.999999 s, milliseconds above 0.099999 s,
// else microseconds, each truncated; nothing for zero.
std::string FormatLatency(uint64_t nanos) {
  if (nanos == 0) return "";
  if (nanos > 99'999'999'000) return common::StrCat(nanos / 1'000'000'000, "s");
  if (nanos > 99'999'000) return common::StrCat(nanos / 1'000'000, "ms");
  return common::StrCat(nanos / 1'000, "us");
}

// Work per second, truncated, computed in long double so that large byte counts keep their
// precision.
uint64_t PerSecond(long double work, int64_t elapsed_nanos) {
  return static_cast<uint64_t>(std::floor(work * 1e9L / static_cast<long double>(elapsed_nanos)));
}

// `nominal_ops` stands in for a seek or file count the agent left at 0: what bonnie++ itself
// divides by (its -s seek count, or NUM x 1024 files).
TestFigures Figures(const PhaseResult& result, const TestColumn& column, uint64_t nominal_ops) {
  TestFigures out;
  const Measurement* m = FindMeasurement(result, column.name);
  if (m == nullptr || m->skipped()) return out;
  out.ran = true;
  if (m->has_latency()) {
    auto histogram = common::LatencyHistogram::FromProto(m->latency());
    if (histogram.ok()) out.latency = FormatLatency(histogram->max());
  }
  const int64_t elapsed = m->elapsed_nanos();
  if (elapsed <= 0) return out;  // Like bonnie++ with no elapsed time: no figures.
  if (m->too_fast() || elapsed < kMinTimeNanos) {
    out.rate = kTooFastRate;
    out.cpu = kTooFastCpu;
    return out;
  }
  const uint64_t ops = m->ops() != 0 ? m->ops() : nominal_ops;
  switch (column.unit) {
    case Unit::kKiBPerSecond:
      out.rate = common::StrCat(PerSecond(static_cast<long double>(m->bytes()) / 1024, elapsed));
      break;
    case Unit::kSeeksPerSecond: {
      const double rate = static_cast<double>(ops) * 1e9 / static_cast<double>(elapsed);
      out.rate = rate >= 1000.0 ? fmt::format("{:.0f}", rate) : fmt::format("{:.1f}", rate);
      break;
    }
    case Unit::kFilesPerSecond:
      out.rate = common::StrCat(PerSecond(static_cast<long double>(ops), elapsed));
      break;
  }
  const int64_t cpu = m->cpu_user_nanos() + m->cpu_system_nanos();
  out.cpu = common::StrCat(cpu < 0 ? 0 : cpu * 100 / elapsed);
  return out;
}

std::string CsvSafeName(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    if (c == ',' || c == '\n' || c == '\r') c = '_';
  }
  return out;
}

HostFigures Summarize(const std::string& name, const PhaseResult& result) {
  HostFigures h;
  h.name = CsvSafeName(name);
  auto seed = result.resolved().find("seed");
  if (seed != result.resolved().end()) h.seed = CsvSafeName(seed->second);
  h.size_bytes = ResolvedNumber(result, "size_bytes", 0);
  h.chunk_size = ResolvedNumber(result, "chunk_size", kDefaultChunkSize);
  h.seeks = ResolvedNumber(result, "seeks", kDefaultSeeks);
  h.seekers = ResolvedNumber(result, "seekers", kDefaultSeekers);
  h.files_k = ResolvedNumber(result, "files_k", 0);
  h.file_max_bytes = ResolvedNumber(result, "file_max_bytes", 0);
  h.file_min_bytes = ResolvedNumber(result, "file_min_bytes", 0);
  h.file_dirs = ResolvedNumber(result, "file_dirs", 0);
  for (size_t i = 0; i < kIoTests.size(); ++i) {
    h.io[i] = Figures(result, kIoTests[i], h.seeks);
    h.io_ran = h.io_ran || h.io[i].ran;
  }
  for (size_t i = 0; i < kFileTests.size(); ++i) {
    h.files[i] = Figures(result, kFileTests[i], h.files_k * kDirectoryUnit);
    h.files_ran = h.files_ran || h.files[i].ran;
  }
  return h;
}

// bonnie++'s print_size with units "MG": the file size in MiB, or in GiB when whole.
std::string FileSizeLabel(uint64_t bytes) {
  const uint64_t mib = bytes >> 20;
  if (mib != 0 && mib % 1024 == 0) return common::StrCat(mib / 1024, "G");
  return common::StrCat(mib, "M");
}

// bonnie++'s print_size with units " km": bytes, or k or m when whole.
std::string ChunkSizeLabel(uint64_t bytes) {
  if (bytes == 0) return "0";
  if (bytes % 1024 != 0) return common::StrCat(bytes);
  if (bytes % (1024 * 1024) != 0) return common::StrCat(bytes / 1024, "k");
  return common::StrCat(bytes / (1024 * 1024), "m");
}

// What bonnie++'s own text report puts after the host name: size[:chunk[:concurrency
// [:seeks[:seekers]]]], naming only what differs from the defaults.
std::string IoLabel(const HostFigures& h) {
  std::string label =
      common::StrCat(FileSizeLabel(h.size_bytes), ":",
                     h.chunk_size != kDefaultChunkSize ? ChunkSizeLabel(h.chunk_size) : "",
                     "::", h.seeks != kDefaultSeeks ? common::StrCat(h.seeks) : "", ":",
                     h.seekers != kDefaultSeekers ? common::StrCat(h.seekers) : "");
  while (!label.empty() && label.back() == ':') label.pop_back();
  return label;
}

// files[:max:min][/dirs], as bonnie++'s own text report writes -n.
std::string FilesLabel(const HostFigures& h) {
  std::string label = common::StrCat(h.files_k);
  if (h.file_max_bytes != 0) {
    label = common::StrCat(label, ":", h.file_max_bytes, ":", h.file_min_bytes);
  }
  if (h.file_dirs > 1) label = common::StrCat(label, "/", h.file_dirs);
  return label;
}

std::string Join(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i != 0) out += ',';
    out += fields[i];
  }
  return out;
}

// bon_csv2txt's convSpd: K/sec as "1234k", "12.3m", "123m" or "1.2g".
std::string ShortSpeed(const std::string& rate) {
  if (rate.empty() || rate == kTooFastRate) return rate;
  uint64_t kib = 0;
  std::from_chars(rate.data(), rate.data() + rate.size(), kib);
  if (kib < 10000) return fmt::format("{:4d}k", kib);
  const double mib = static_cast<double>(kib) / 1024.0;
  if (mib < 1000.0) {
    if (mib < 100.0) return fmt::format("{:4.1f}m", mib);
    return fmt::format("{:4d}m", static_cast<uint64_t>(mib + 0.5));
  }
  return fmt::format("{:4.1f}g", mib / 1024.0);
}

std::string DataRow(const std::string& label, const std::array<std::string, 12>& cells) {
  return fmt::format(
      "{:>19} {:>5} {:>3} {:>5} {:>3} {:>5} {:>3} {:>5} {:>3} {:>5} {:>3} {:>5} {:>3}\n", label,
      cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6], cells[7], cells[8],
      cells[9], cells[10], cells[11]);
}

// A host's row. The first column holds the name and the run's label in 19 characters, as in
// bon_csv2txt; a name that does not fit goes on a line of its own above the row instead of
// being cut (bon_csv2txt cuts it, which makes "node-01.example:7420" and
// "node-02.example:7420" the same row).
std::string HostRow(const std::string& name, const std::string& label,
                    const std::array<std::string, 12>& cells) {
  if (name.size() + 1 + label.size() <= 19) {
    std::string padded = name + std::string(19, ' ');
    return DataRow(common::StrCat(padded.substr(0, 18 - label.size()), " ", label), cells);
  }
  return common::StrCat(name, "\n", DataRow(label, cells));
}

// "Latency" and six latencies, or nothing when none was measured.
std::string LatencyRow(const std::array<TestFigures, 6>& tests) {
  bool any = false;
  for (const TestFigures& t : tests) any = any || !t.latency.empty();
  if (!any) return "";
  return fmt::format("Latency           {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n", tests[0].latency,
                     tests[1].latency, tests[2].latency, tests[3].latency, tests[4].latency,
                     tests[5].latency);
}

}  // namespace

std::string BonnieCsvHeader() {
  return "format_version,bonnie_version,name,concurrency,seed,file_size,io_chunk_size,"
         "putc,putc_cpu,put_block,put_block_cpu,rewrite,rewrite_cpu,getc,getc_cpu,"
         "get_block,get_block_cpu,seeks,seeks_cpu,"
         "num_files,max_size,min_size,num_dirs,file_chunk_size,"
         "seq_create,seq_create_cpu,seq_stat,seq_stat_cpu,seq_del,seq_del_cpu,"
         "ran_create,ran_create_cpu,ran_stat,ran_stat_cpu,ran_del,ran_del_cpu,"
         "putc_latency,put_block_latency,rewrite_latency,getc_latency,get_block_latency,"
         "seeks_latency,seq_create_latency,seq_stat_latency,seq_del_latency,"
         "ran_create_latency,ran_stat_latency,ran_del_latency";
}

std::string BonnieCsvLine(const std::string& name, const PhaseResult& result) {
  const HostFigures h = Summarize(name, result);
  std::vector<std::string> fields = {kBonnieCsvFormatVersion, kBonnieVersion, h.name, "1", h.seed};
  if (h.io_ran) {
    // bonnie++ leaves io_chunk_size empty and adds the seek count and seekers after it.
    fields.insert(fields.end(), {FileSizeLabel(h.size_bytes), "", common::StrCat(h.seeks),
                                 common::StrCat(h.seekers)});
    for (const TestFigures& t : h.io) fields.insert(fields.end(), {t.rate, t.cpu});
  } else {
    fields.resize(fields.size() + 4 + 2 * kIoTests.size());
  }
  if (h.files_ran) {
    fields.push_back(common::StrCat(h.files_k));
    fields.push_back(h.file_max_bytes != 0 ? common::StrCat(h.file_max_bytes) : "");
    fields.push_back(
        h.file_max_bytes != 0 && h.file_min_bytes != 0 ? common::StrCat(h.file_min_bytes) : "");
    // bonnie++ never fills this field, and writes the directory count after it.
    fields.push_back("");
    fields.push_back(h.file_dirs > 1 ? common::StrCat(h.file_dirs) : "");
    for (const TestFigures& t : h.files) fields.insert(fields.end(), {t.rate, t.cpu});
  } else {
    fields.resize(fields.size() + 5 + 2 * kFileTests.size());
  }
  for (const TestFigures& t : h.io) fields.push_back(t.latency);
  for (const TestFigures& t : h.files) fields.push_back(t.latency);
  return Join(fields);
}

std::string BonnieTextTable(const std::vector<std::pair<std::string, PhaseResult>>& rows) {
  std::vector<HostFigures> hosts;
  hosts.reserve(rows.size());
  for (const auto& [name, result] : rows) hosts.push_back(Summarize(name, result));

  std::string io_block;
  std::string files_block;
  for (const HostFigures& h : hosts) {
    if (h.io_ran) {
      std::array<std::string, 12> cells;
      for (size_t i = 0; i < h.io.size(); ++i) {
        const bool kib = kIoTests[i].unit == Unit::kKiBPerSecond;
        cells[2 * i] = kib ? ShortSpeed(h.io[i].rate) : h.io[i].rate;
        cells[2 * i + 1] = h.io[i].cpu;
      }
      io_block += HostRow(h.name, IoLabel(h), cells);
      io_block += LatencyRow(h.io);
    }
    if (h.files_ran) {
      std::array<std::string, 12> cells;
      for (size_t i = 0; i < h.files.size(); ++i) {
        cells[2 * i] = h.files[i].rate;
        cells[2 * i + 1] = h.files[i].cpu;
      }
      files_block += HostRow(h.name, FilesLabel(h), cells);
      files_block += LatencyRow(h.files);
    }
  }

  std::string out;
  if (!io_block.empty()) {
    out +=
        fmt::format("Version {:>9}   ------Sequential Output------ --Sequential Input- --Random-\n",
                    kBonnieVersion);
    out += "                    -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--\n";
    out += "Name:Size etc        /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP\n";
    out += io_block;
  }
  if (!files_block.empty()) {
    out += "                    ------Sequential Create------ --------Random Create--------\n";
    out += "                    -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--\n";
    out += "      files:max:min  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP\n";
    out += files_block;
  }
  return out;
}

nlohmann::json BonnieSpecJson(const stormark::v1::BonnieSpec& b) {
  return {{"size_bytes", b.size_bytes()},
          {"ram_bytes", b.ram_bytes()},
          {"chunk_size", b.chunk_size()},
          {"char_size_bytes", b.char_size_bytes()},
          {"skip_char", b.skip_char()},
          {"skip_io", b.skip_io()},
          {"direct", b.direct()},
          {"fsync_every_write", b.fsync_every_write()},
          {"files_k", b.files_k()},
          {"file_max_bytes", b.file_max_bytes()},
          {"file_min_bytes", b.file_min_bytes()},
          {"file_dirs", b.file_dirs()},
          {"seeks", b.seeks()},
          {"seekers", b.seekers()},
          {"seed", b.seed()}};
}

}  // namespace stormark::controller
