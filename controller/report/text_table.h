// A plain-text table with aligned columns, for terminals and logs.
#ifndef STORMARK_CONTROLLER_REPORT_TEXT_TABLE_H_
#define STORMARK_CONTROLLER_REPORT_TEXT_TABLE_H_

#include <string>
#include <vector>

namespace stormark::controller {

class TextTable {
 public:
  enum class Align { kLeft, kRight };

  // One header per column, with its alignment.
  void AddColumn(std::string header, Align align);
  // A row with one cell per column (missing cells are blank).
  void AddRow(std::vector<std::string> cells);
  // The table, each line prefixed by `indent` and ending in '\n'; columns two spaces apart.
  std::string Render(const std::string& indent = "") const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_TEXT_TABLE_H_
