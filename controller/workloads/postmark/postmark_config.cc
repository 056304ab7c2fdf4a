#include "controller/workloads/postmark/postmark_config.h"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include "common/strings.h"
#include "common/text_file.h"
#include "controller/workloads/postmark/postmark_params.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;
using stormark::v1::PostmarkSpec;

// `load` inside `load` is fine; a script that loads itself is not.
constexpr int kMaxLoadDepth = 8;

constexpr char kSettings[] =
    "size, number, seed, transactions, location, subdirectories, read, write, buffering, "
    "bias read, bias create, report";

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t at = 0;
  while (at < line.size()) {
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
    size_t end = at;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
    if (end > at) words.push_back(line.substr(at, end - at));
    at = end;
  }
  return words;
}

// PostMark reads numbers with atoi(), which stops at the first non-digit: "10k" is 10 there.
// Only plain numbers mean the same to both.
bool IsPlainNumber(std::string_view word) {
  if (!word.empty() && word[0] == '-') word.remove_prefix(1);
  if (word.empty()) return false;
  for (char c : word) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::string DirOf(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string() : std::string(path.substr(0, slash + 1));
}

StatusOr<std::string> ReadFile(const std::string& path) {
  return common::ReadTextFile(path, "PostMark script");
}

// One line of a script, and where it is, for messages.
struct Line {
  std::string_view text;
  std::string where;  // "pm.cfg:4"

  // The one-line error for this line: "pm.cfg:4: 'set nubmer 2000': why".
  Status Bad(std::string_view why) const {
    return absl::InvalidArgumentError(StrCat(where, ": '", text, "': ", why));
  }
  std::string Note(std::string_view what) const { return StrCat(where, ": '", text, "' ", what); }
};

class ScriptParser {
 public:
  explicit ScriptParser(const PostmarkSpec& start) : spec_(start) {}

  // Parses one script (the top one, or one that `load` names).
  Status Parse(std::string_view text, std::string_view source, std::string_view base_dir,
               int depth) {
    int number = 0;
    for (std::string_view raw : common::Split(text, '\n')) {
      ++number;
      if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
      const Line line{common::Trim(raw), StrCat(source, ":", number)};
      if (line.text.empty() || line.text[0] == '#') continue;
      bool quit = false;
      RETURN_IF_ERROR(Command(line, base_dir, depth, &quit));
      if (quit) break;
    }
    return absl::OkStatus();
  }

  PostmarkConfig Finish() && {
    if (out_.runs.empty()) {
      out_.runs.push_back(spec_);
    } else if (!unused_since_.empty()) {
      out_.notes.push_back(StrCat(unused_since_,
                                  ": this and later settings come after the last 'run' and are "
                                  "not used (PostMark would wait at its prompt)"));
    }
    return std::move(out_);
  }

 private:
  Status Command(const Line& line, std::string_view base_dir, int depth, bool* quit) {
    if (line.text[0] == '!') return line.Bad("shell escapes are not run");
    const std::vector<std::string_view> words = Words(line.text);
    const std::string_view command = words[0];
    if (command == "set") return Set(line, words);
    if (command == "run") {
      out_.runs.push_back(spec_);
      unused_since_.clear();
      if (words.size() > 1) {
        out_.notes.push_back(line.Note(StrCat("runs; its report file '", words[1],
                                              "' is ignored (the report is printed, and in "
                                              "--json)")));
      }
      return absl::OkStatus();
    }
    if (command == "load") return Load(line, words, base_dir, depth);
    if (command == "show" || command == "help" || command == "?") {
      out_.notes.push_back(line.Note("ignored: each phase's title shows its settings"));
      return absl::OkStatus();
    }
    if (command == "quit" || command == "exit") {
      *quit = true;
      return absl::OkStatus();
    }
    return line.Bad(
        StrCat("unknown command '", command, "' (PostMark's: set, run, load, show, help, quit)"));
  }

  Status Set(const Line& line, const std::vector<std::string_view>& words) {
    if (words.size() < 2) return line.Bad(StrCat("'set' needs a setting (", kSettings, ")"));
    std::string_view setting = words[1];
    std::string key(setting);
    size_t first_value = 2;
    if (setting == "bias") {
      const std::string_view which = words.size() > 2 ? words[2] : "";
      if (which != "read" && which != "create") {
        return line.Bad(StrCat("unknown setting 'bias ", which, "' (bias read or bias create)"));
      }
      key = StrCat("bias_", which);
      first_value = 3;
    } else if (setting == "location") {
      // In almost every real script; the directory is the agent's to decide, never the
      // script's (a request names a target, never a path).
      if (words.size() < 3) return line.Bad("'location' takes a directory");
      out_.notes.push_back(line.Note(
          "ignored: the phase runs in the agent's target (plan `target:` or --target; --dir "
          "for the local agent), not in a directory the script names"));
      return absl::OkStatus();
    }
    const std::vector<std::string_view> values(words.begin() + first_value, words.end());
    const size_t most = key == "size" ? 2 : 1;
    if (values.empty() || values.size() > most) {
      return line.Bad(
          StrCat("'", setting, "' takes ", most == 2 ? "one or two values" : "one value"));
    }
    const bool textual = key == "buffering" || key == "report";
    if (key == "buffering" && values[0] != "true" && values[0] != "false") {
      return line.Bad(StrCat("bad buffering '", values[0], "': PostMark takes true or false"));
    }
    if (key != "size" && key != "number" && key != "seed" && key != "transactions" &&
        key != "subdirectories" && key != "read" && key != "write" && !textual &&
        !key.starts_with("bias_")) {
      return line.Bad(StrCat("unknown setting '", setting, "' (", kSettings, ")"));
    }
    if (!textual) {
      for (std::string_view v : values) {
        if (!IsPlainNumber(v)) {
          return line.Bad(StrCat("bad ", setting, " '", v,
                                 "': PostMark takes plain whole numbers (it reads '", v, "' as ",
                                 std::atoi(std::string(v).c_str()), ")"));
        }
      }
    }
    const std::string value =
        values.size() == 2 ? StrCat(values[0], ":", values[1]) : std::string(values[0]);
    if (Status s = SetPostmarkParameter(key, value, &spec_); !s.ok())
      return line.Bad(std::string(s.message()));
    if (unused_since_.empty()) unused_since_ = line.where;
    return absl::OkStatus();
  }

  // Errors inside the loaded script name that script's own line.
  Status Load(const Line& line, const std::vector<std::string_view>& words,
              std::string_view base_dir, int depth) {
    if (words.size() != 2) return line.Bad("'load' takes one file name");
    if (depth >= kMaxLoadDepth) {
      return line.Bad(
          StrCat("scripts load each other more than ", kMaxLoadDepth, " deep (a loop?)"));
    }
    std::string path(words[1]);
    if (path[0] != '/') path = StrCat(base_dir, path);
    StatusOr<std::string> text = ReadFile(path);
    if (!text.ok()) return line.Bad(std::string(text.status().message()));
    return Parse(*text, path, DirOf(path), depth + 1);
  }

  PostmarkSpec spec_;
  PostmarkConfig out_;
  // Where the first setting after the last `run` is, or "".
  std::string unused_since_;
};

}  // namespace

StatusOr<PostmarkConfig> ParsePostmarkConfig(std::string_view text, std::string_view source,
                                             std::string_view base_dir, const PostmarkSpec& start) {
  ScriptParser parser(start);
  RETURN_IF_ERROR(parser.Parse(text, source, base_dir, 0));
  return std::move(parser).Finish();
}

StatusOr<PostmarkConfig> LoadPostmarkConfig(const std::string& path, const PostmarkSpec& start) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParsePostmarkConfig(text, path, DirOf(path), start);
}

}  // namespace stormark::controller
