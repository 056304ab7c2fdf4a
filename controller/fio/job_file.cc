#include "controller/fio/job_file.h"

#include <stdlib.h>

#include <algorithm>
#include <cctype>

#include "common/strings.h"
#include "common/text_file.h"
#include "controller/fio/job_build.h"

namespace stormark::controller::fio {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;

constexpr size_t kMaxSectionName = 255;  // fio: sscanf(p, "[%255[^\n]]", name)

Status ErrorAt(std::string_view file, int line, std::string_view what) {
  return absl::InvalidArgumentError(StrCat(file, ":", line, ": ", what));
}

// `status` from a step that knows no location, placed at FILE:LINE, after `what`.
Status ErrorAt(std::string_view file, int line, const Status& status, std::string_view what = "") {
  return Status(status.code(), StrCat(file, ":", line, ": ", what, status.message()));
}

// A line for a message: long ones are cut.
std::string Clip(std::string_view text) {
  return text.size() <= 60 ? std::string(text) : StrCat(text.substr(0, 57), "...");
}

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool IsBlank(char c) { return IsSpace(c) || std::iscntrl(static_cast<unsigned char>(c)) != 0; }

// fio's is_empty_or_comment.
bool IsBlankOrComment(std::string_view line) {
  for (char c : line) {
    if (c == ';' || c == '#') return true;
    if (!IsBlank(c)) return false;
  }
  return true;
}

// fio's strip_blank_front and strip_blank_end: cut at the first ';' or '#', then trim.
std::string_view Strip(std::string_view line) {
  line = line.substr(0, line.find_first_of(";#"));
  while (!line.empty() && IsSpace(line.front())) line.remove_prefix(1);
  while (!line.empty() && IsBlank(line.back())) line.remove_suffix(1);
  return line;
}

std::string DirName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string JoinPath(const std::string& dir, std::string_view path) {
  if (dir.empty() || path.starts_with("/")) return std::string(path);
  return StrCat(dir, dir.ends_with("/") ? "" : "/", path);
}

// The file's identity for include loops: its real path, or the path if it has none.
std::string Canonical(const std::string& path) {
  char* real = realpath(path.c_str(), nullptr);
  if (real == nullptr) return path;
  std::string out(real);
  free(real);
  return out;
}

// Reads a job file, and the files it includes, into sections: the first half of a read, the
// second being BuildJobs. One Reader serves one read.
class Reader {
 public:
  Reader(const JobFileFacts& facts, const ReadOptions& options)
      : facts_(facts), options_(options) {}

  // Reads `text`, the file called `name` in errors and `identity` in include loops, whose
  // relative includes resolve against `dir`. Only the `top` file may hold sections.
  Status ReadFile(std::string_view text, const std::string& name, const std::string& identity,
                  const std::string& dir, bool top) {
    if (text.size() > kMaxJobFileBytes) {
      return absl::InvalidArgumentError(
          StrCat(name, ": it is over 1 MiB, the limit for a fio job file"));
    }
    include_stack_.push_back({identity, name});
    int number = 0;
    for (size_t start = 0; start < text.size();) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      const std::string_view line = text.substr(start, end - start);
      ++number;
      if (line.size() > kMaxJobLineChars) {
        return ErrorAt(name, number,
                       StrCat("the line is longer than fio's ", kMaxJobLineChars,
                              " characters (fio would split it)"));
      }
      if (line.find('\0') != std::string_view::npos) {
        return ErrorAt(name, number, "a NUL byte: this is not a text file");
      }
      RETURN_IF_ERROR(ReadLine(line, name, number, dir, top));
      start = end + 1;
    }
    include_stack_.pop_back();
    return absl::OkStatus();
  }

  const std::vector<JobSection>& sections() const { return sections_; }
  size_t spent() const { return spent_; }

 private:
  Status ReadLine(std::string_view raw, const std::string& file, int number, const std::string& dir,
                  bool top) {
    if (IsBlankOrComment(raw)) return absl::OkStatus();
    const std::string_view line = Strip(raw);
    if (line.empty()) return absl::OkStatus();
    if (line[0] == '[') {
      if (!top) {
        return ErrorAt(file, number,
                       "an included file may not hold a [section] (fio: \"No new sections in "
                       "included files\")");
      }
      return StartSection(line, file, number);
    }
    if (sections_.empty()) {
      return ErrorAt(file, number,
                     StrCat("'", Clip(line),
                            "' comes before any [section] header: a fio job file starts with "
                            "[global] or [jobname] (fio: \"option outside of [] job section\")"));
    }
    if (sections_.back().skipped) return absl::OkStatus();
    if (line.starts_with("include")) {
      const std::string_view rest = line.substr(7);
      if (rest.empty() || !IsSpace(rest[0])) {
        return ErrorAt(file, number, StrCat("'", Clip(line), "': expected 'include FILE'"));
      }
      return Include(common::Trim(rest), file, number, dir);
    }
    return AddOption(line, file, number);
  }

  Status StartSection(std::string_view line, const std::string& file, int number) {
    if (line.size() < 3 || line.back() != ']') {
      return ErrorAt(file, number,
                     StrCat("'", Clip(line), "' is not a section header: expected [name]"));
    }
    std::string name(line.substr(1, line.size() - 2));
    if (name.size() > kMaxSectionName) {
      return ErrorAt(file, number, "the section name is longer than fio's 255 characters");
    }
    const bool global = name.starts_with("global");  // fio: strncmp(name, "global", 6)
    const auto& wanted = options_.sections;
    const bool skipped =
        !global && !wanted.empty() && std::find(wanted.begin(), wanted.end(), name) == wanted.end();
    sections_.push_back({std::move(name), file, number, global, skipped, {}});
    return absl::OkStatus();
  }

  Status AddOption(std::string_view line, const std::string& file, int number) {
    auto substituted = SubstituteLine(line, facts_, options_.unset_variables_are_empty);
    if (!substituted.ok()) return ErrorAt(file, number, substituted.status());
    const std::string_view text = *substituted;
    JobOption option{std::string(common::Trim(text)), "", false, file, number};
    const size_t eq = text.find('=');
    if (eq != std::string_view::npos) {
      option.name = std::string(common::Trim(text.substr(0, eq)));
      option.value = std::string(text.substr(eq + 1));
      option.has_value = true;
      if (!option.value.empty() && IsSpace(option.value[0])) {
        return ErrorAt(file, number,
                       StrCat("'", Clip(line), "': fio keeps the blank after '=' and then ",
                              "ignores the unit or rejects the value; write '", option.name, "=",
                              common::Trim(option.value), "'"));
      }
    }
    if (option.name.empty()) {
      return ErrorAt(file, number, StrCat("'", Clip(line), "' has no option name"));
    }
    RETURN_IF_ERROR(Spend(JobOptionCost(option), file, number));
    sections_.back().options.push_back(std::move(option));
    return absl::OkStatus();
  }

  Status Include(std::string_view argument, const std::string& file, int number,
                 const std::string& dir) {
    if (argument.empty()) return ErrorAt(file, number, "include needs a file name");
    const std::string path = JoinPath(dir, argument);
    const std::string identity = Canonical(path);
    auto loop = std::find_if(include_stack_.begin(), include_stack_.end(),
                             [&](const auto& open) { return open.first == identity; });
    if (loop != include_stack_.end()) {
      if (loop + 1 == include_stack_.end()) {
        return ErrorAt(file, number, StrCat("include loop: ", file, " includes itself"));
      }
      std::string chain;
      for (auto it = loop; it != include_stack_.end(); ++it) chain += StrCat(it->second, " -> ");
      return ErrorAt(file, number, StrCat("include loop: ", chain, path));
    }
    if (include_stack_.size() >= static_cast<size_t>(kMaxIncludeDepth)) {
      return ErrorAt(
          file, number,
          StrCat("include ", path, ": includes nest deeper than ", kMaxIncludeDepth, " files"));
    }
    auto text = common::ReadTextFile(path, "included fio job file", kMaxJobFileBytes);
    if (!text.ok()) return ErrorAt(file, number, text.status());
    bytes_read_ += text->size();
    if (bytes_read_ > kMaxReadBytes) {
      return ErrorAt(file, number, "the included files come to over 16 MiB together");
    }
    return ReadFile(*text, path, identity, DirName(path), false);
  }

  Status Spend(size_t bytes, const std::string& file, int number) {
    spent_ += bytes;
    if (spent_ <= kMaxExpandedBytes) return absl::OkStatus();
    return ErrorAt(file, number, "the jobs' options come to over 64 MiB");
  }

  const JobFileFacts& facts_;
  const ReadOptions& options_;
  std::vector<JobSection> sections_;
  std::vector<std::pair<std::string, std::string>> include_stack_;  // identity, name
  size_t bytes_read_ = 0;
  size_t spent_ = 0;
};

StatusOr<std::vector<FioJob>> Parse(std::string_view text, const std::string& name,
                                    const std::string& path, const std::string& dir,
                                    const JobFileFacts& facts, const ReadOptions& options) {
  Reader reader(facts, options);
  RETURN_IF_ERROR(reader.ReadFile(text, name, Canonical(path), dir, true));
  return BuildJobs(reader.sections(), options, name, kMaxExpandedBytes - reader.spent());
}

}  // namespace

StatusOr<std::vector<FioJob>> ReadJobFile(const std::string& path, const JobFileFacts& facts,
                                          const ReadOptions& options) {
  ASSIGN_OR_RETURN(std::string text, common::ReadTextFile(path, "fio job file", kMaxJobFileBytes));
  return Parse(text, path, path, DirName(path), facts, options);
}

StatusOr<std::vector<FioJob>> ParseJobText(std::string_view text, const std::string& file_name,
                                           const JobFileFacts& facts, const ReadOptions& options,
                                           const std::string& base_dir) {
  return Parse(text, file_name, JoinPath(base_dir, file_name), base_dir, facts, options);
}

bool LooksLikeJobFile(std::string_view text) {
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (IsBlankOrComment(line)) continue;
    const std::string_view stripped = Strip(line);
    if (stripped.empty()) continue;
    return stripped.size() >= 3 && stripped.front() == '[' && stripped.back() == ']';
  }
  return false;
}

const JobOption* FindOption(const FioJob& job, std::string_view name) {
  for (const JobOption& option : job.options) {
    if (option.name == name) return &option;
  }
  return nullptr;
}

}  // namespace stormark::controller::fio
