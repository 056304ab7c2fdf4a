#include "controller/fio/job_build.h"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

#include "common/strings.h"
#include "controller/fio/fio_units.h"
#include "controller/fio/job_values.h"

namespace stormark::controller::fio {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;

constexpr size_t kOptionOverhead = 64;  // what one JobOption costs besides its strings

Status ErrorAt(const JobOption& option, std::string_view what) {
  return absl::InvalidArgumentError(StrCat(option.file, ":", option.line, ": ", what));
}

// A value for a message: long ones are cut.
std::string Clip(std::string_view text) {
  return text.size() <= 60 ? std::string(text) : StrCat(text.substr(0, 57), "...");
}

// "a, b, c", or "none".
std::string List(const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& name : names) list += StrCat(list.empty() ? "" : ", ", name);
  return list.empty() ? "none" : list;
}

// Options in the order their final values were set: setting a name again moves it last.
class OptionList {
 public:
  void Set(const JobOption& option) {
    auto [it, inserted] = index_.try_emplace(option.name, entries_.size());
    if (!inserted) {
      live_[it->second] = false;
      it->second = entries_.size();
    }
    entries_.push_back(option);
    live_.push_back(true);
  }

  std::vector<JobOption> Live() const {
    std::vector<JobOption> out;
    for (size_t i = 0; i < entries_.size(); ++i) {
      if (live_[i]) out.push_back(entries_[i]);
    }
    return out;
  }

 private:
  std::vector<JobOption> entries_;
  std::vector<bool> live_;
  std::unordered_map<std::string, size_t> index_;
};

const JobOption* Find(const std::vector<JobOption>& options, std::string_view name) {
  for (const JobOption& option : options) {
    if (option.name == name) return &option;
  }
  return nullptr;
}

StatusOr<int> KbBase(const std::vector<JobOption>& options) {
  const JobOption* option = Find(options, "kb_base");
  if (option == nullptr) return 1024;
  if (option->value == "1024" || option->value == "1000") return std::atoi(option->value.c_str());
  return ErrorAt(*option, StrCat("kb_base '", Clip(option->value), "': expected 1024 or 1000"));
}

// A FIO_OPT_STR_SET option: "name" alone sets it, "name=0" clears it. The later of `name`
// and `alias` wins, as they are one option to fio.
StatusOr<bool> Flag(const std::vector<JobOption>& options, std::string_view name,
                    std::string_view alias) {
  const JobOption* option = nullptr;
  for (const JobOption& candidate : options) {
    if (candidate.name == name || (!alias.empty() && candidate.name == alias)) option = &candidate;
  }
  if (option == nullptr) return false;
  if (!option->has_value) return true;
  const std::string& v = option->value;
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos) {
    return ErrorAt(*option, StrCat(option->name, "='", Clip(v), "': expected no value, 0 or 1"));
  }
  return v.find_first_not_of('0') != std::string::npos;
}

// numjobs is a FIO_OPT_INT, which fio reads as it reads a size.
StatusOr<int> NumJobs(const std::vector<JobOption>& options, int kb_base, int jobs_above) {
  const JobOption* option = Find(options, "numjobs");
  if (option == nullptr) return 1;
  auto size = ParseFioSize(option->value, kb_base);
  if (!size.ok()) return ErrorAt(*option, StrCat("numjobs: ", size.status().message()));
  if (size->percent) return ErrorAt(*option, "numjobs: expected a number");
  if (size->value == 0) {
    // init.c add_job counts clones with `while (--numjobs)`.
    return ErrorAt(*option, "numjobs=0: fio then creates jobs until it runs out of room");
  }
  if (size->value > static_cast<uint64_t>(kMaxJobs - jobs_above)) {
    return ErrorAt(*option, StrCat("numjobs=", size->value, " makes more than fio's ", kMaxJobs,
                                   " jobs (REAL_MAX_JOBS) with the ", jobs_above, " before it"));
  }
  return static_cast<int>(size->value);
}

// init.c wait_for_ok: fio compares the waitee with the job names (name= included) of the
// jobs already added, and the waiter's own section name with the waitee.
Status CheckWaitFor(const JobOption& wait_for, const JobSection& section,
                    const std::vector<FioJob>& jobs) {
  const std::string& name = wait_for.value;
  if (!wait_for.has_value || name.empty()) return ErrorAt(wait_for, "wait_for needs a job name");
  if (name == section.name) {
    return ErrorAt(wait_for, StrCat("wait_for=", Clip(name), ": a job cannot wait for itself"));
  }
  std::vector<std::string> above;
  int matches = 0;
  for (const FioJob& job : jobs) {
    if (job.clone != 0) continue;
    matches += job.name == name ? 1 : 0;
    if (above.size() < 20) above.push_back(job.name);
  }
  if (matches > 1) {
    return ErrorAt(wait_for,
                   StrCat("wait_for=", Clip(name), ": ", matches, " jobs above are named '",
                          Clip(name), "'; fio needs the job waited for to have a unique name"));
  }
  if (matches == 0) {
    return ErrorAt(wait_for,
                   StrCat("wait_for=", Clip(name), ": no job above is named '", Clip(name),
                          "' (fio needs it defined first); the jobs above "
                          "are: ",
                          List(above)));
  }
  return absl::OkStatus();
}

// The job of `section` under `globals`, its values evaluated; groups and clones to come.
StatusOr<FioJob> MakeJob(const JobSection& section, const OptionList& globals) {
  OptionList effective;
  for (const JobOption& option : globals.Live()) {
    // get_new_job sets each job's name to its section's after copying the globals.
    if (option.name != "name") effective.Set(option);
  }
  for (const JobOption& option : section.options) effective.Set(option);
  FioJob job;
  job.name = job.section = section.name;
  job.file = section.file;
  job.line = section.line;
  job.options = effective.Live();
  ASSIGN_OR_RETURN(const int kb_base, KbBase(job.options));
  for (JobOption& option : job.options) {
    auto value = EvaluateValue(option.value, kb_base);
    if (!value.ok()) return ErrorAt(option, StrCat(option.name, ": ", value.status().message()));
    option.value = *std::move(value);
  }
  if (const JobOption* name = Find(job.options, "name")) {
    if (!name->has_value || name->value.empty()) return ErrorAt(*name, "name needs a value");
    job.name = name->value;
  }
  return job;
}

}  // namespace

size_t JobOptionCost(const JobOption& option) {
  return option.name.size() + option.value.size() + option.file.size() + kOptionOverhead;
}

StatusOr<std::vector<FioJob>> BuildJobs(const std::vector<JobSection>& sections,
                                        const ReadOptions& options, std::string_view file_name,
                                        size_t budget) {
  std::vector<std::string> job_sections;
  for (const JobSection& section : sections) {
    if (!section.global) job_sections.push_back(section.name);
  }
  for (const std::string& wanted : options.sections) {
    if (std::find(job_sections.begin(), job_sections.end(), wanted) == job_sections.end()) {
      return absl::InvalidArgumentError(
          StrCat(file_name, ": --section '", Clip(wanted),
                 "' names no job; the jobs are: ", List(job_sections)));
    }
  }
  std::vector<FioJob> jobs;
  OptionList globals;
  int run_group = 0;
  int reporting_group = 0;
  int reporting_group_jobs = 0;  // init.c's prev_group_jobs
  for (const JobSection& section : sections) {
    if (section.global) {
      for (const JobOption& option : section.options) globals.Set(option);
      continue;
    }
    if (section.skipped) continue;
    ASSIGN_OR_RETURN(FioJob job, MakeJob(section, globals));
    const int kb_base = KbBase(job.options).value_or(1024);
    ASSIGN_OR_RETURN(const int numjobs,
                     NumJobs(job.options, kb_base, static_cast<int>(jobs.size())));
    ASSIGN_OR_RETURN(const bool stonewall, Flag(job.options, "stonewall", "wait_for_previous"));
    ASSIGN_OR_RETURN(const bool new_group, Flag(job.options, "new_group", ""));
    if (const JobOption* wait_for = Find(job.options, "wait_for")) {
      RETURN_IF_ERROR(CheckWaitFor(*wait_for, section, jobs));
      job.wait_for = wait_for->value;
    }
    size_t cost = 0;
    for (const JobOption& option : job.options) cost += JobOptionCost(option);
    if (cost * static_cast<size_t>(numjobs) > budget) {
      return absl::InvalidArgumentError(
          StrCat(section.file, ":", section.line, ": the jobs' options come to over 64 MiB"));
    }
    budget -= cost * static_cast<size_t>(numjobs);
    // add_job: a stonewall or new_group starts a reporting group only after some job; the
    // backend holds a stonewalled job until every job started before it has finished.
    if ((stonewall || new_group) && reporting_group_jobs > 0) {
      reporting_group_jobs = 0;
      ++reporting_group;
    }
    if (stonewall && !jobs.empty()) ++run_group;
    job.run_group = run_group;
    job.reporting_group = reporting_group;
    for (int clone = 0; clone < numjobs; ++clone) {  // clones clear stonewall and new_group
      job.clone = clone;
      jobs.push_back(job);
      ++reporting_group_jobs;
    }
  }
  if (jobs.empty()) {
    return absl::InvalidArgumentError(
        StrCat(file_name, ": no jobs: fio needs a section other than [global]"));
  }
  return jobs;
}

}  // namespace stormark::controller::fio
