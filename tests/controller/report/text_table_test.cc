#include "controller/report/text_table.h"

#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

using Align = TextTable::Align;

TEST(TextTable, AlignsColumnsLeftAndRightTwoSpacesApart) {
  TextTable table;
  table.AddColumn("host", Align::kLeft);
  table.AddColumn("MiB/s", Align::kRight);
  table.AddColumn("status", Align::kLeft);
  table.AddRow({"db1", "1.5", "ok"});
  table.AddRow({"db-long", "1234.5", "FAILED"});
  EXPECT_EQ(table.Render(),
            "host      MiB/s  status\n"
            "db1         1.5  ok\n"
            "db-long  1234.5  FAILED\n");
}

TEST(TextTable, TrimsTrailingSpaces) {
  TextTable table;
  table.AddColumn("name", Align::kLeft);
  table.AddColumn("note", Align::kLeft);
  table.AddRow({"a", ""});
  table.AddRow({"bbbbbbbb", "x"});
  const std::string text = table.Render();
  EXPECT_EQ(text,
            "name      note\n"
            "a\n"
            "bbbbbbbb  x\n");
  EXPECT_EQ(text.find(" \n"), std::string::npos);
}

TEST(TextTable, IndentPrefixesEveryLine) {
  TextTable table;
  table.AddColumn("n", Align::kRight);
  table.AddRow({"10"});
  EXPECT_EQ(table.Render("  "), "   n\n  10\n");
}

TEST(TextTable, MissingCellsAreBlank) {
  TextTable table;
  table.AddColumn("a", Align::kLeft);
  table.AddColumn("b", Align::kRight);
  table.AddColumn("c", Align::kLeft);
  table.AddRow({"x"});
  table.AddRow({"y", "22", "z"});
  EXPECT_EQ(table.Render(),
            "a   b  c\n"
            "x\n"
            "y  22  z\n");
}

TEST(TextTable, HeaderOnlyTable) {
  TextTable table;
  table.AddColumn("only", Align::kLeft);
  EXPECT_EQ(table.Render(), "only\n");
}

}  // namespace
}  // namespace stormark::controller
