// PostMark's own configuration scripts (the file `postmark pm.cfg` reads), so that users'
// scripts run unchanged:
//
//   set size 1000 9000          set number 2000            set transactions 50000
//   set subdirectories 10       set read 512               set write 512
//   set buffering false         set bias read 5            set bias create 5
//   set seed 42                 set report terse           run
//   load other.cfg              quit (or exit)             # a comment
//
// Each setting goes through SetPostmarkParameter (postmark_params.h), so it is checked as a
// plan's would be. Values are plain whole numbers, as PostMark reads them; where PostMark
// would print an error and go on (a 0, a low size bound above the high one, "10k", which
// PostMark's atoi() reads as 10), the script is refused instead.
//
// Every `run` is one run with the settings as they stand at that line; a script without
// `run` is one run with the settings at its end. `load FILE` reads another script in place,
// FILE relative to the including script (PostMark takes it relative to its working
// directory); inside it, `quit` ends that file only, as in PostMark.
//
// What makes no sense here:
//   set location   refused: stormark runs in a target's directory, which the agent's
//                  configuration names (plan `target:`, --target, or --dir for the local
//                  agent); a script never picks directories on a remote host.
//   !command       refused: shell escapes are not run.
//   show, help, ?  ignored, with a note.
//   run FILE       runs; the FILE PostMark appends its report to is ignored, with a note.
// Settings after the last `run` are not used (PostMark would wait at its prompt); a note says
// so.
//
// Errors are one line: "pm.cfg:4: 'set nubmer 2000': unknown setting 'nubmer' (...)".
#ifndef STORMARK_CONTROLLER_WORKLOADS_POSTMARK_POSTMARK_CONFIG_H_
#define STORMARK_CONTROLLER_WORKLOADS_POSTMARK_POSTMARK_CONFIG_H_

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

struct PostmarkConfig {
  // One spec per run, in order.
  std::vector<stormark::v1::PostmarkSpec> runs;
  // Lines accepted but not acted on, each "pm.cfg:7: 'show' ignored: ...".
  std::vector<std::string> notes;
};

// Parses the script `text`. `source` names it in messages; `base_dir` is where `load` looks
// for relative names ("" for the working directory). `start` holds the settings before the
// first line.
common::StatusOr<PostmarkConfig> ParsePostmarkConfig(std::string_view text, std::string_view source,
                                                     std::string_view base_dir,
                                                     const stormark::v1::PostmarkSpec& start);

// Reads and parses the script at `path`.
common::StatusOr<PostmarkConfig> LoadPostmarkConfig(const std::string& path,
                                                    const stormark::v1::PostmarkSpec& start);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_WORKLOADS_POSTMARK_POSTMARK_CONFIG_H_
