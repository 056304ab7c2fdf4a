#include "controller/workloads/option_table.h"

#include <set>
#include <string>

#include "common/spec_check.h"
#include "common/workloads/postmark/postmark_spec.h"
#include "controller/plan/plan.h"
#include "controller/workloads/workload_kinds.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

using google::protobuf::util::MessageDifferencer;
using stormark::v1::PhaseSpec;
using stormark::v1::RandioSpec;
using ::testing::HasSubstr;

PhaseSpec Init(std::string_view workload) {
  PhaseSpec spec;
  FindWorkloadKind(workload)->init(&spec);
  return spec;
}

// Sets through SetPhaseParameter, the path plan keys, --set and sweep axes take.
PhaseSpec Set(std::string_view workload,
              std::initializer_list<std::pair<std::string_view, std::string_view>> params) {
  PhaseSpec spec = Init(workload);
  for (const auto& [key, value] : params) {
    const common::Status status = SetPhaseParameter(key, value, &spec);
    EXPECT_TRUE(status.ok()) << key << "=" << value << ": " << status;
  }
  return spec;
}

std::string Error(std::string_view workload, std::string_view key, std::string_view value) {
  PhaseSpec spec = Init(workload);
  const PhaseSpec before = spec;
  const common::Status status = SetPhaseParameter(key, value, &spec);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << key << "=" << value;
  EXPECT_TRUE(MessageDifferencer::Equals(spec, before)) << "an error changed the spec";
  return std::string(status.message());
}

TEST(OptionTable, EveryNameAndAliasFindsItsOptionAndNoneIsUsedTwice) {
  for (const WorkloadKind* kind_ptr : WorkloadKinds()) {
    const WorkloadKind& kind = *kind_ptr;
    SCOPED_TRACE(std::string(kind.name));
    const OptionTable& table = kind.options();
    EXPECT_EQ(table.workload(), kind.name);
    std::set<std::string_view> seen;
    for (const Option& option : table.options()) {
      EXPECT_EQ(table.Find(option.name), &option);
      EXPECT_TRUE(seen.insert(option.name).second) << option.name << " is declared twice";
      for (std::string_view alias : option.aliases) {
        EXPECT_EQ(table.Find(alias), &option) << alias;
        EXPECT_TRUE(seen.insert(alias).second) << alias << " is declared twice";
      }
      EXPECT_FALSE(option.help.empty()) << option.name;
      EXPECT_NE(option.store, nullptr) << option.name;
      EXPECT_FALSE(common::IsTuningKnob(option.name)) << option.name << " hides a tuning knob";
    }
    EXPECT_EQ(table.Find("no_such_option"), nullptr);
  }
}

TEST(OptionTable, EveryDefaultIsAValueItsOptionAccepts) {
  for (const WorkloadKind* kind_ptr : WorkloadKinds()) {
    const WorkloadKind& kind = *kind_ptr;
    for (const Option& option : kind.options().options()) {
      if (option.default_value.empty()) continue;
      SCOPED_TRACE(std::string(kind.name) + "." + std::string(option.name));
      PhaseSpec spec = Init(kind.name);
      EXPECT_TRUE(kind.options().Set(option.name, option.default_value, &spec).ok());
      // Setting the default again changes nothing: Init stored that very value.
      EXPECT_TRUE(MessageDifferencer::Equals(spec, Init(kind.name)));
    }
  }
}

// Each table's defaults are what the controller's Init... functions and constants set before
// the tables: a plan that names nothing sends the same spec as before, so results recorded
// before stay comparable.
TEST(OptionTable, DefaultsAreTheOnesThePlansHadBefore) {
  PhaseSpec randio;
  randio.mutable_randio()->set_rw(RandioSpec::RANDREAD);
  randio.mutable_randio()->set_bs_min(4096);
  randio.mutable_randio()->set_runtime_nanos(int64_t{60} * 1'000'000'000);
  EXPECT_TRUE(MessageDifferencer::Equals(Init("randio"), randio)) << Init("randio").DebugString();

  PhaseSpec stream;
  stream.mutable_stream()->set_direction(stormark::v1::StreamSpec::WRITE);
  stream.mutable_stream()->set_size_bytes(uint64_t{1} << 30);
  stream.mutable_stream()->set_block_size(1u << 20);
  EXPECT_TRUE(MessageDifferencer::Equals(Init("stream"), stream)) << Init("stream").DebugString();

  PhaseSpec postmark;
  *postmark.mutable_postmark() = common::WithPostmarkDefaults(stormark::v1::PostmarkSpec());
  EXPECT_TRUE(MessageDifferencer::Equals(Init("postmark"), postmark))
      << Init("postmark").DebugString();

  PhaseSpec bonnie;
  bonnie.mutable_bonnie();
  EXPECT_TRUE(MessageDifferencer::Equals(Init("bonnie"), bonnie)) << Init("bonnie").DebugString();

  PhaseSpec command;
  command.mutable_command();
  EXPECT_TRUE(MessageDifferencer::Equals(Init("command"), command))
      << Init("command").DebugString();
}

TEST(OptionTable, FiosAliasesWorkThroughThePhaseParameterPath) {
  const RandioSpec spec = Set("randio", {{"readwrite", "randrw"},
                                         {"ioengine", "io_uring"},
                                         {"bsrange", "4k-16k"},
                                         {"rwmixwrite", "30"},
                                         {"randseed", "7"}})
                              .randio();
  EXPECT_EQ(spec.rw(), RandioSpec::RANDRW);
  EXPECT_EQ(spec.engine(), RandioSpec::IO_URING);
  EXPECT_EQ(spec.bs_min(), 4096u);
  EXPECT_EQ(spec.bs_max(), 16384u);
  EXPECT_EQ(spec.rwmixread(), 70u);
  EXPECT_EQ(spec.seed(), 7u);
}

TEST(OptionTable, UnknownKeysAreNotFoundOnThePathAndNamedByTheTable) {
  // ApplySetting and sweeps skip phases whose workload lacks the key (NOT_FOUND) ...
  PhaseSpec spec = Init("stream");
  EXPECT_TRUE(absl::IsNotFound(SetPhaseParameter("ioengine", "psync", &spec)));
  // ... and the table itself lists what it knows, aliases included.
  const common::Status status = FindWorkloadKind("randio")->options().Set("blocksize", "4k", &spec);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      std::string(status.message()),
      HasSubstr("unknown randio parameter 'blocksize' (known: rw (readwrite), rwmixread, "
                "rwmixwrite, bs (bsrange), bssplit, blockalign (ba), norandommap, iodepth"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("engine (ioengine)"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("seed (randseed))"));
}

TEST(OptionTable, ValueErrorsNameTheKeyAsWrittenTheValueAndWhatIsAccepted) {
  EXPECT_EQ(Error("randio", "ioengine", "posixaio"),
            "bad ioengine 'posixaio': use psync, io_uring or libaio");
  EXPECT_EQ(Error("randio", "rwmixwrite", "101"),
            "bad rwmixwrite '101': expected a percentage, 0 to 100");
  EXPECT_EQ(Error("randio", "iodepth", "5000"),
            "bad iodepth '5000': expected a whole number from 0 to 4096");
  EXPECT_EQ(Error("randio", "numjobs", "-1"),
            "bad numjobs '-1': expected a whole number from 0 to 256");
  EXPECT_EQ(Error("randio", "bsrange", "0-4k"),
            "bad bsrange '0-4k': expected sizes from 1 to 64M, or LOW-HIGH");
  EXPECT_EQ(Error("randio", "bs", "64k-4k"), "bad bs '64k-4k': the high end is below the low end");
  EXPECT_EQ(Error("randio", "runtime", "soon"),
            "bad runtime 'soon': expected a duration (90s, 500ms, 10m; 0 for none)");
  EXPECT_EQ(Error("randio", "readwrite", "random"),
            "bad readwrite 'random': use read, write, randread, randwrite, randrw, readwrite or "
            "rw");
  EXPECT_EQ(Error("randio", "randseed", "x"), "bad randseed 'x': expected a whole number");
  EXPECT_EQ(Error("postmark", "bias_read", "11"),
            "bad bias_read '11': expected a whole number from -1 to 10");
  EXPECT_EQ(Error("postmark", "size", "1:1G"),
            "bad size '1:1G': expected sizes from 1 to 256M, or LOW:HIGH");
  EXPECT_EQ(Error("stream", "direct", "maybe"), "bad direct 'maybe': expected true or false");
  EXPECT_EQ(Error("command", "timeout", "0"),
            "bad timeout '0': expected a duration of at least 1.00 ms (90s, 500ms, 10m)");
  EXPECT_EQ(Error("command", "exec", " "), "bad exec ' ': give a program and its arguments");
}

TEST(OptionTable, RequiredOptionsAreDeclared) {
  // stream's rw: a plan phase must say which way it goes.
  const Option* rw = FindWorkloadKind("stream")->options().Find("rw");
  ASSERT_NE(rw, nullptr);
  EXPECT_TRUE(rw->required);
  EXPECT_FALSE(FindWorkloadKind("randio")->options().Find("rw")->required);
}

TEST(OptionTable, HelpListsEveryOptionWithAliasesTypeAndDefault) {
  const std::string help = FindWorkloadKind("randio")->options().HelpText();
  EXPECT_THAT(
      help,
      HasSubstr("\n  engine, ioengine\n      enum, default: none; psync, io_uring or libaio\n"));
  EXPECT_THAT(help, HasSubstr("\n  runtime\n      duration, default 60s;"));
  EXPECT_THAT(help, HasSubstr("\n  fsync\n      count (writes), default 0;"));
  for (const Option& option : FindWorkloadKind("randio")->options().options()) {
    EXPECT_THAT(help, HasSubstr(std::string(option.help))) << option.name;
  }
  EXPECT_THAT(FindWorkloadKind("stream")->options().HelpText(),
              HasSubstr("\n  rw\n      enum, required in plan phases (default write "
                        "elsewhere); write or read\n"));
}

TEST(OptionTable, MarkdownHasARowPerOptionAndEscapesPipes) {
  const OptionTable table("demo", {{.name = "mode",
                                    .aliases = {"m"},
                                    .type = OptionType::kEnum,
                                    .default_value = "a",
                                    .choices = {{"a", 1}, {"b", 2}},
                                    .help = "a | b",
                                    .store = [](const OptionValue&, PhaseSpec*) {}}});
  const std::string md = table.Markdown();
  EXPECT_THAT(md, HasSubstr("# demo options\n"));
  EXPECT_THAT(md, HasSubstr("| `mode` | `m` | enum | `a` | a or b | a \\| b |\n"));
}

}  // namespace
}  // namespace stormark::controller
