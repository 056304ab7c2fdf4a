#include "bench/fleet_sim/lies.h"

#include <cstdint>
#include <limits>
#include <utility>

namespace stormark::fleet_sim {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

constexpr std::pair<std::string_view, Lie> kWords[] = {
    {"elapsed", Lie::kElapsed},
    {"start", Lie::kStart},
    {"series-offset", Lie::kSeriesOffset},
    {"bytes", Lie::kBytes},
    {"progress-elapsed", Lie::kProgressElapsed},
};

}  // namespace

std::optional<Lie> ParseLie(std::string_view word) {
  for (const auto& [w, lie] : kWords) {
    if (w == word) return lie;
  }
  return std::nullopt;
}

std::vector<std::string> LieWords() {
  std::vector<std::string> words;
  for (const auto& [w, lie] : kWords) words.emplace_back(w);
  return words;
}

void Tell(Lie lie, stormark::v1::PhaseResult* result) {
  switch (lie) {
    case Lie::kElapsed:
      result->set_elapsed_nanos(kInt64Max);
      break;
    case Lie::kStart:
      result->set_start_unix_nanos(std::numeric_limits<int64_t>::min());
      break;
    case Lie::kSeriesOffset:
      if (result->series_size() > 0) result->mutable_series(0)->set_offset_nanos(kInt64Max - 5);
      break;
    case Lie::kBytes:
      result->set_bytes(std::numeric_limits<uint64_t>::max());
      break;
    case Lie::kNone:
    case Lie::kProgressElapsed:
      break;
  }
}

void Tell(Lie lie, stormark::v1::RunUpdate::Progress* progress) {
  if (lie == Lie::kProgressElapsed) progress->set_elapsed_nanos(kInt64Max);
}

}  // namespace stormark::fleet_sim
