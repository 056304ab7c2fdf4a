#include "controller/report/html/environment_section.h"

#include <algorithm>
#include <map>

#include "common/units.h"
#include "controller/report/host_groups.h"
#include "controller/report/html/markup.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

void Add(std::vector<EnvironmentFact>* facts, const std::string& row, std::string key,
         std::string value) {
  if (!value.empty()) facts->push_back({row, std::move(key), std::move(value)});
}

size_t IndexOf(std::vector<std::string>* list, const std::string& value) {
  auto it = std::find(list->begin(), list->end(), value);
  if (it != list->end()) return static_cast<size_t>(it - list->begin());
  list->push_back(value);
  return list->size() - 1;
}

}  // namespace

std::vector<EnvironmentFact> MachineFacts(const RunRecord& run) {
  std::vector<EnvironmentFact> facts;
  for (const AgentRecord& a : run.agents) {
    const auto& info = a.info;
    Add(&facts, a.host, "unavailable", a.error);
    Add(&facts, a.host, "hostname", info.hostname());
    Add(&facts, a.host, "kernel", info.kernel());
    Add(&facts, a.host, "CPU", info.cpu_model());
    Add(&facts, a.host, "CPUs", info.cpu_count() ? fmt::format("{}", info.cpu_count()) : "");
    Add(&facts, a.host, "RAM", info.ram_bytes() ? common::FormatBytes(info.ram_bytes()) : "");
    Add(&facts, a.host, "agent version", info.agent_version());
    // The captured host facts the lines above do not show: CPU governor, vm.dirty_*.
    const std::map<std::string, std::string> env(info.environment().begin(),
                                                 info.environment().end());
    for (const auto& [key, value] : env) {
      if (key == "kernel" || key == "cpu_model" || key == "cpu_count" || key == "ram_bytes")
        continue;
      Add(&facts, a.host, key, value);
    }
    for (const auto& [key, value] : a.labels) Add(&facts, a.host, "label " + key, value);
  }
  return facts;
}

std::vector<EnvironmentFact> TargetFacts(const RunRecord& run) {
  std::vector<EnvironmentFact> facts;
  for (const AgentRecord& a : run.agents) {
    for (const auto& t : a.info.targets()) {
      const std::string row = a.host + " / " + t.name();
      Add(&facts, row, "kind", t.kind());
      Add(&facts, row, "path", t.path());
      Add(&facts, row, "filesystem", t.filesystem());
      Add(&facts, row, "mount options", t.mount_options());
      Add(&facts, row, "device", t.device());
      const uint64_t size = t.size_bytes() ? t.size_bytes() : t.total_bytes();
      Add(&facts, row, "size", size ? common::FormatBytes(size) : "");
      Add(&facts, row, "logical block size",
          t.logical_block_size() ? fmt::format("{}", t.logical_block_size()) : "");
      Add(&facts, row, "block kind", t.block_kind());
      Add(&facts, row, "transport", t.transport());
      Add(&facts, row, "transport detail", t.transport_detail());
      // Sorted, so the same settings line up across targets.
      const std::map<std::string, std::string> queue(t.device_queue().begin(),
                                                     t.device_queue().end());
      for (const auto& [key, value] : queue) Add(&facts, row, "queue/" + key, value);
      // The captured target facts not shown above (queue_depth of SCSI disks, for one).
      const std::map<std::string, std::string> env(t.environment().begin(), t.environment().end());
      for (const auto& [key, value] : env) {
        if (queue.contains(key) || key == "filesystem" || key == "mount_options" ||
            key == "device" || key == "transport" || key == "transport_detail") {
          continue;
        }
        Add(&facts, row, key, value);
      }
    }
  }
  return facts;
}

std::string EnvironmentTable(const std::vector<EnvironmentFact>& facts) {
  if (facts.empty()) return "";
  std::vector<std::string> rows, keys;
  std::map<std::pair<size_t, size_t>, std::string> cells;  // (key, row) -> value
  for (const EnvironmentFact& f : facts) {
    const size_t row = IndexOf(&rows, f.row);
    const size_t key = IndexOf(&keys, f.key);
    cells[{key, row}] = f.value;
  }
  std::string out = "<table class=\"environment\">\n<thead><tr><th></th>";
  for (const std::string& row : rows) out += "<th>" + EscapeMarkup(row) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (size_t k = 0; k < keys.size(); ++k) {
    std::vector<const std::string*> values;
    for (size_t r = 0; r < rows.size(); ++r) {
      auto it = cells.find({k, r});
      values.push_back(it == cells.end() ? nullptr : &it->second);
    }
    const bool differs = std::any_of(values.begin(), values.end(), [&](const std::string* v) {
      return (v == nullptr) != (values[0] == nullptr) || (v && *v != *values[0]);
    });
    out += differs ? "<tr class=\"differs\">" : "<tr>";
    out += "<th>" + EscapeMarkup(keys[k]) + "</th>";
    for (const std::string* v : values) {
      out += v ? "<td>" + EscapeMarkup(*v) + "</td>" : "<td class=\"missing\">-</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
  return out;
}

std::string GroupedEnvironmentTable(const std::vector<EnvironmentFact>& facts,
                                    std::string_view noun) {
  if (facts.empty()) return "";
  std::vector<std::string> keys;
  std::map<std::string, size_t> row_index;
  std::vector<std::string> rows;
  // By key: the columns of each value, in order of first appearance.
  std::vector<std::map<std::string, std::vector<size_t>>> by_key;
  std::map<std::string, size_t> key_index;
  for (const EnvironmentFact& f : facts) {
    auto [r, new_row] = row_index.emplace(f.row, rows.size());
    if (new_row) rows.push_back(f.row);
    auto [k, new_key] = key_index.emplace(f.key, keys.size());
    if (new_key) {
      keys.push_back(f.key);
      by_key.emplace_back();
    }
    by_key[k->second][f.value].push_back(r->second);
  }
  std::string out = fmt::format(
      "<table class=\"environment grouped\">\n<thead><tr><th></th><th>{} {}: each value, how "
      "many have it, and the first of them</th></tr></thead>\n<tbody>\n",
      rows.size(), noun);
  for (size_t k = 0; k < keys.size(); ++k) {
    std::vector<std::pair<std::string, std::vector<size_t>>> values(by_key[k].begin(),
                                                                    by_key[k].end());
    size_t with = 0;
    for (const auto& [value, columns] : values) with += columns.size();
    if (with < rows.size()) {
      // The columns that lack the key, as the value "-".
      std::vector<char> has(rows.size(), 0);
      for (const auto& [value, columns] : values) {
        for (const size_t c : columns) has[c] = 1;
      }
      std::vector<size_t> missing;
      for (size_t c = 0; c < rows.size(); ++c) {
        if (!has[c]) missing.push_back(c);
      }
      values.emplace_back("-", std::move(missing));
    }
    std::stable_sort(values.begin(), values.end(), [](const auto& a, const auto& b) {
      return a.second.size() > b.second.size();
    });
    out += values.size() > 1 ? "<tr class=\"differs\">" : "<tr>";
    out += "<th>" + EscapeMarkup(keys[k]) + "</th><td>";
    if (values.size() == rows.size() && values.size() > kValuesListed) {
      // A value each (hostnames): a list of them says nothing the first few do not.
      out += fmt::format("a value each: <b>{}</b>, <b>{}</b>, <b>{}</b> and {} more</td></tr>\n",
                         EscapeMarkup(values[0].first), EscapeMarkup(values[1].first),
                         EscapeMarkup(values[2].first), values.size() - 3);
      continue;
    }
    for (size_t v = 0; v < values.size() && v < kValuesListed; ++v) {
      const auto& [value, columns] = values[v];
      // NameList's "a, b, c and 1995 more", without a list of two thousand names.
      std::vector<std::string> names;
      for (size_t c = 0; c < columns.size() && c < 4; ++c) names.push_back(rows[columns[c]]);
      std::string who = NameList(names, 4);
      if (columns.size() > 4) {
        who =
            fmt::format("{}, {}, {} and {} more", names[0], names[1], names[2], columns.size() - 3);
      }
      out += fmt::format("{}<b>{}</b>: {} ({})", v == 0 ? "" : "<br>", EscapeMarkup(value),
                         columns.size(), EscapeMarkup(who));
    }
    if (values.size() > kValuesListed) {
      out += fmt::format("<br>and {} more values", values.size() - kValuesListed);
    }
    out += "</td></tr>\n";
  }
  return out + "</tbody></table>\n";
}

}  // namespace stormark::controller
