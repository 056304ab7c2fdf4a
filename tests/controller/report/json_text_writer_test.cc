#include "controller/report/json_text_writer.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

using nlohmann::json;

std::string Dump(const json& j, bool compact = false) {
  return j.dump(compact ? -1 : 2, ' ', false, json::error_handler_t::replace) + "\n";
}

// {head..., key: [elements...]} written in parts, against the same tree dumped whole, indented
// and compact.
void ExpectSameText(const json& head, const std::string& key, const std::vector<json>& elements) {
  for (bool compact : {false, true}) {
    JsonTextWriter writer(nullptr, compact);
    writer.ObjectWith(head, 0, key, [&](int level) {
      writer.Array(elements.size(), level,
                   [&](size_t i, int at) { writer.Value(elements[i], at); });
    });
    json whole = head;
    whole[key] = elements;
    EXPECT_EQ(writer.Finish(), Dump(whole, compact)) << key << (compact ? ", compact" : "");
  }
}

TEST(JsonTextWriter, WritesWhatDumpWritesWhereverTheKeySorts) {
  const json head = {{"b", 1}, {"d", {{"x", {1, 2}}, {"y", json::object()}}}, {"f", "t\n\"q\""}};
  const std::vector<json> elements = {{{"n", 1}}, json::array(), {1, {{"deep", {true, nullptr}}}}};
  for (const std::string key : {"a", "c", "e", "g", "b0", ""}) ExpectSameText(head, key, elements);
}

TEST(JsonTextWriter, EmptyArraysAndObjectsAreWrittenAsDumpDoes) {
  ExpectSameText(json::object(), "k", {});
  ExpectSameText(json::object(), "k", {json::object(), json::array()});
  ExpectSameText({{"a", json::array()}}, "b", {});
}

TEST(JsonTextWriter, ASpillGetsTheWholeTextInPiecesAndFinishReturnsNothing) {
  std::string spilled;
  int pieces = 0;
  JsonTextWriter writer([&](std::string_view piece) {
    spilled += piece;
    ++pieces;
  });
  const json big = std::string(300'000, 'x');
  writer.Array(10, 0, [&](size_t, int at) {
    writer.Value(big, at);
    writer.Spill();
  });
  EXPECT_EQ(writer.Finish(), "");
  EXPECT_EQ(spilled, Dump(std::vector<json>(10, big)));
  EXPECT_GT(pieces, 2);
}

}  // namespace
}  // namespace stormark::controller
