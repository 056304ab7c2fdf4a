#include "controller/fio/fio_import.h"

#include <algorithm>
#include <set>
#include <string_view>

#include "common/spec_check.h"
#include "common/workloads/randio/randio_spec.h"
#include "common/strings.h"
#include "controller/fio/fio_option_table.h"
#include "controller/fio/fio_option_values.h"
#include "controller/fio/fio_units.h"
#include "controller/workloads/randio/randio_params.h"
#include "controller/workloads/workload_kinds.h"
#include "google/protobuf/util/message_differencer.h"

namespace stormark::controller::fio {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;

// What one job makes: its spec and target, and its notes.
struct JobPhase {
  PhasePlan plan;
  std::vector<std::string> notes;
  std::vector<std::string> warnings;
};

// The options the importer reads itself (FioOptionStatus::kJob).
Status ReadJobOption(const JobOption& o, const Reading& reading, PhasePlan* plan, bool* repeatable,
                     std::vector<std::string>* notes) {
  stormark::v1::PhaseSpec* spec = &plan->spec;
  if (o.name == "filename") {
    if (o.value.find('/') != std::string::npos) {
      return Refuse(o, StrCat("stormark reaches storage only through the agent's targets, never "
                              "a path: define one in the agent's config (targets: {data: "
                              "{block: ",
                              o.value, "}} or {data: {dir: DIR}}) and write filename=data"));
    }
    if (o.value.find(':') != std::string::npos) {
      return Refuse(o, "several files per job are not supported: name one target");
    }
    if (!common::IsValidName(o.value)) return Refuse(o, "not a target name");
    plan->target = o.value;
  } else if (o.name == "ioengine") {
    if (o.value == "psync" || o.value == "sync" || o.value == "pvsync" || o.value == "pvsync2") {
      return Set("engine", "psync", o, spec);
    }
    if (o.value == "io_uring") return Set("engine", "io_uring", o, spec);
    if (o.value == "libaio") return Set("engine", "libaio", o, spec);
    return Refuse(o, "not supported: stormark runs psync (sync, pvsync), io_uring and libaio");
  } else if (o.name == "buffered") {
    ASSIGN_OR_RETURN(const bool buffered, FioBool(o));
    return Set("direct", buffered ? "false" : "true", o, spec);
  } else if (o.name == "randrepeat") {
    ASSIGN_OR_RETURN(*repeatable, FioBool(o));
  } else if (o.name == "verify") {
    if (o.value == "0" || o.value == "null") return Set("verify", "false", o, spec);
    for (std::string_view kind :
         {"md5", "crc64", "crc32", "crc32c", "crc32c-intel", "crc16", "crc7", "sha1", "sha256",
          "sha512", "sha3-224", "sha3-256", "sha3-384", "sha3-512", "xxhash", "meta", "pattern"}) {
      if (o.value == kind) {
        if (o.value != "crc32c" && o.value != "crc32c-intel") {
          notes->push_back(StrCat(Where(o), Spelled(o),
                                  ": checked by stormark's own verify (offset, generation and "
                                  "CRC32C in every 4 KiB) instead of ",
                                  o.value, "; it finds what ", o.value, " finds and more"));
        }
        return Set("verify", "true", o, spec);
      }
    }
    return Refuse(o, "not a verify method fio knows");
  } else if (o.name == "bssplit") {
    return SetBssplit(o, reading, spec);
  } else if (o.name == "write_bw_log" || o.name == "write_lat_log" || o.name == "write_iops_log") {
    // Without a value, fio names the log after the job; ReadJobFile's caller fills that in.
    PhasePlan::FioLog& log = plan->fio_logs.front();
    std::string& prefix = o.name == "write_bw_log"    ? log.bw
                          : o.name == "write_lat_log" ? log.lat
                                                      : log.iops;
    prefix = o.has_value && !o.value.empty() ? o.value : std::string(1, '\0');
  } else if (o.name == "log_avg_msec") {
    // A FIO_OPT_INT of milliseconds, which fio reads as it reads a size.
    auto n = ParseFioSize(o.value, reading.kb_base);
    if (!n.ok() || n->percent) return Refuse(o, "expected a number of milliseconds");
    const uint64_t ms = n->value;
    if (ms == 0) {
      notes->push_back(StrCat(Where(o), Spelled(o),
                              ": fio then logs every I/O; stormark logs each second's mean"));
      return absl::OkStatus();
    }
    if (ms < common::kMinSeriesIntervalMs || ms > 3'600'000) {
      return Refuse(o, StrCat("stormark's log interval is from ", common::kMinSeriesIntervalMs,
                              " ms to an hour"));
    }
    spec->set_series_interval_ms(static_cast<uint32_t>(ms));
  } else if (o.name == "log_unix_epoch" || o.name == "log_alternate_epoch") {
    ASSIGN_OR_RETURN(const bool epoch, FioBool(o));
    plan->fio_logs.front().unix_epoch = plan->fio_logs.front().unix_epoch || epoch;
  } else if (o.name == "per_job_logs") {
    ASSIGN_OR_RETURN(const bool per_job, FioBool(o));
    plan->fio_logs.front().per_job = per_job;
  }
  // name, description, numjobs, stonewall, wait_for and kb_base: the job file's shape.
  return absl::OkStatus();
}

StatusOr<JobPhase> PhaseOfJob(const FioJob& job) {
  JobPhase out;
  PhasePlan& plan = out.plan;
  FindWorkloadKind("randio")->init(&plan.spec);
  // fio's defaults where randio's differ.
  RETURN_IF_ERROR(SetPhaseParameter("rw", "read", &plan.spec));
  RETURN_IF_ERROR(SetPhaseParameter("engine", "psync", &plan.spec));
  // fio hands the kernel one request per call unless iodepth_batch says otherwise. randio's
  // io_uring and libaio do too; said here so that --check shows it.
  RETURN_IF_ERROR(SetPhaseParameter("iodepth_batch_submit", "1", &plan.spec));
  ASSIGN_OR_RETURN(const int kb_base, KbBase(job));
  const Reading reading{kb_base, &out.warnings};
  bool repeatable = true;
  const JobOption* trim = nullptr;
  plan.fio_logs.resize(1);
  plan.fio_logs[0].job = job.name;
  for (const JobOption& o : job.options) {
    const FioOption* entry = FindFioOption(o.name);
    if (entry == nullptr) return Refuse(o, "not an option of fio 3.33");
    switch (entry->status) {
      case FioOptionStatus::kRefused:
        return Refuse(o, StrCat("not supported: ", entry->why));
      case FioOptionStatus::kIgnored:
        out.notes.push_back(StrCat(Where(o), o.name, ": ignored: ", entry->why));
        break;
      case FioOptionStatus::kJob:
        RETURN_IF_ERROR(ReadJobOption(o, reading, &plan, &repeatable, &out.notes));
        break;
      case FioOptionStatus::kMapped: {
        if (entry->randio == "rw" && (o.value == "trim" || o.value == "randtrim" ||
                                      o.value == "trimwrite" || o.value == "randtrimwrite")) {
          // A trim job: the trim workload, once the job's other options are read.
          trim = &o;
          break;
        }
        if (entry->randio == "bs" && o.value.find(',') != std::string::npos) {
          // bs=READS,WRITES: one size each way, as a split of one size per direction.
          RETURN_IF_ERROR(SetPerDirectionBs(o, reading, &plan.spec));
          break;
        }
        const Option* option = RandioOptions().Find(entry->randio);
        if (option == nullptr) return Refuse(o, "not supported");  // A table out of step.
        ASSIGN_OR_RETURN(const std::string value, RandioValue(*option, o, reading));
        RETURN_IF_ERROR(Set(entry->randio, value, o, &plan.spec));
        break;
      }
    }
  }
  if (repeatable && FindOption(job, "randseed") == nullptr) {
    RETURN_IF_ERROR(SetPhaseParameter("seed", std::to_string(kRepeatableSeed), &plan.spec));
  }
  PhasePlan::FioLog& log = plan.fio_logs[0];
  for (std::string* prefix : {&log.bw, &log.lat, &log.iops}) {
    if (*prefix == std::string(1, '\0')) *prefix = job.name;  // fio's default: the job's name
  }
  if (log.bw.empty() && log.lat.empty() && log.iops.empty()) plan.fio_logs.clear();
  if (trim != nullptr) {
    const uint32_t interval = plan.spec.series_interval_ms();
    ASSIGN_OR_RETURN(plan.spec, TrimPhase(*trim, job, plan.spec.randio(), &out.notes));
    plan.spec.set_series_interval_ms(interval);
    return out;
  }
  const stormark::v1::RandioSpec& r = plan.spec.randio();
  if (r.engine() == stormark::v1::RandioSpec::LIBAIO && !r.direct()) {
    out.warnings.push_back(
        StrCat(job.file, ":", job.line, ": job '", job.name,
               "': ioengine=libaio without direct=1: the kernel runs buffered "
               "AIO inside io_submit, one request at a time",
               r.iodepth() > 1 ? StrCat(", so iodepth=", r.iodepth(), " acts as 1") : "",
               ", as in fio: add direct=1"));
  }
  const bool random = r.rw() == stormark::v1::RandioSpec::RANDREAD ||
                      r.rw() == stormark::v1::RandioSpec::RANDWRITE ||
                      r.rw() == stormark::v1::RandioSpec::RANDRW;
  if (random && (r.bssplit_size() > 0 || r.bs_max() != 0) && !r.norandommap() && !r.time_based()) {
    out.warnings.push_back(StrCat(
        job.file, ":", job.line, ": job '", job.name,
        "': several block sizes with fio's random map: fio ends such a size-bound job early, "
        "once no free aligned block of a size is left (a 4k,16k randrw moved 80% of its size), "
        "while stormark keeps no map for unlike sizes and moves the whole size: add norandommap "
        "to compare the two"));
  }
  if (r.engine() == stormark::v1::RandioSpec::PSYNC && r.iodepth() > 1) {
    out.warnings.push_back(StrCat(job.file, ":", job.line, ": job '", job.name,
                                  "': iodepth=", r.iodepth(),
                                  " with a synchronous engine (psync) keeps one request in "
                                  "flight whatever the depth, as in fio: use ioengine=io_uring"));
  }
  return out;
}

// A phase name from fio's job name: [A-Za-z0-9._-], at most 64 characters.
std::string PhaseName(const std::string& job) {
  std::string name;
  for (char c : job.substr(0, 64)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    name += ok ? c : '-';
  }
  return name.empty() ? "job" : name;
}

bool SameJob(const PhasePlan& a, const PhasePlan& b) {
  return a.target == b.target && google::protobuf::util::MessageDifferencer::Equals(a.spec, b.spec);
}

// The jobs of one run group that are alike in a row (fio's numjobs clones, or identical
// sections): one job of the phase, with `count` threads.
struct GroupMember {
  size_t first = 0;  // Its first job in the file's jobs.
  size_t count = 1;
  JobPhase phase;
};

std::string RunLater(const FioJob& job, const FioJob& other) {
  return StrCat("; add stonewall to '", job.name, "' to run it after '", other.name,
                "', or run one job alone with --section ", job.section);
}

// The phase of a run group of unlike jobs: the first member's spec, with the others in its
// group. What the jobs of a group must share is refused otherwise, naming the job.
Status MakeGroup(const std::vector<FioJob>& jobs, std::vector<GroupMember>& members,
                 JobPhase* phase) {
  const FioJob& head = jobs[members[0].first];
  PhasePlan& plan = phase->plan;
  plan.fio_logs.clear();
  uint32_t interval = 0;
  for (GroupMember& m : members) {
    const FioJob& job = jobs[m.first];
    const std::string at = StrCat(job.file, ":", job.line, ": job '", job.name, "'");
    const PhasePlan& own = m.phase.plan;
    if (own.spec.has_trim()) {
      const FioJob& other = jobs[members[&m == &members[0] ? 1 : 0].first];
      return absl::InvalidArgumentError(StrCat(at, " runs at the same time as job '", other.name,
                                               "' (no stonewall between them): a trim job runs "
                                               "alone",
                                               RunLater(job, other)));
    }
    if (own.target != plan.target) {
      return absl::InvalidArgumentError(
          StrCat(at, " runs on target '", own.target.empty() ? "(the host's)" : own.target,
                 "' at the same time as job '", head.name, "' on '",
                 plan.target.empty() ? "(the host's)" : plan.target,
                 "': the jobs of a run group share one target", RunLater(job, head)));
    }
    // One entry per job, in the group's order (fio_logs.h finds a job's figures by it): a job
    // that asks for no log has one without prefixes.
    PhasePlan::FioLog log = own.fio_logs.empty() ? PhasePlan::FioLog{} : own.fio_logs.front();
    log.job = job.name;
    log.thread_number = static_cast<int>(m.first) + 1;
    log.clones = static_cast<int>(m.count);
    plan.fio_logs.push_back(std::move(log));
    const uint32_t mine = own.spec.series_interval_ms();
    if (mine != 0 && (interval == 0 || mine < interval)) interval = mine;
    if (&m == &members[0]) {
      plan.spec.mutable_randio()->set_name(job.name.substr(0, 64));
      continue;
    }
    stormark::v1::RandioSpec* member = plan.spec.mutable_randio()->add_group();
    *member = own.spec.randio();
    member->set_name(job.name.substr(0, 64));
  }
  if (interval != 0) plan.spec.set_series_interval_ms(interval);
  if (std::all_of(plan.fio_logs.begin(), plan.fio_logs.end(), [](const PhasePlan::FioLog& log) {
        return log.bw.empty() && log.lat.empty() && log.iops.empty();
      })) {
    plan.fio_logs.clear();
  }
  // A verifying job and one that writes the same bytes: refused at the verify option.
  const std::vector<common::RandioJobRegions> regions = common::RegionsOf(plan.spec.randio());
  if (auto conflict = common::FindVerifyConflict(regions)) {
    const FioJob& verifier = jobs[members[conflict->verifier].first];
    const FioJob& writer = jobs[members[conflict->writer].first];
    const std::string why =
        StrCat(common::DescribeVerifyConflict(regions, *conflict),
               members[conflict->writer].first > members[conflict->verifier].first
                   ? RunLater(writer, verifier)
                   : RunLater(verifier, writer));
    if (const JobOption* o = FindOption(verifier, "verify"); o != nullptr) return Refuse(*o, why);
    return absl::InvalidArgumentError(
        StrCat(verifier.file, ":", verifier.line, ": job '", verifier.name, "': ", why));
  }
  if (Status s = common::CheckRandioSpec(plan.spec.randio()); !s.ok()) {
    return absl::InvalidArgumentError(
        StrCat(head.file, ":", head.line, ": the jobs from '", head.name,
               "' on run at the same time (no stonewall between them): ", s.message(),
               "; add stonewall between them to run them one after another"));
  }
  return absl::OkStatus();
}

}  // namespace

StatusOr<FioImport> ImportJobs(const std::vector<FioJob>& jobs) {
  FioImport out;
  std::set<std::string> noted, names;
  // The jobs of each phase: a run group, cut again where a job waits for another.
  size_t first = 0;
  while (first < jobs.size()) {
    size_t end = first + 1;
    while (end < jobs.size() && jobs[end].run_group == jobs[first].run_group &&
           jobs[end].wait_for.empty()) {
      ++end;
    }
    std::vector<GroupMember> members;
    for (size_t j = first; j < end; ++j) {
      ASSIGN_OR_RETURN(JobPhase phase, PhaseOfJob(jobs[j]));
      if (!members.empty() && SameJob(members.back().phase.plan, phase.plan)) {
        ++members.back().count;
        continue;
      }
      members.push_back({j, 1, std::move(phase)});
    }
    for (GroupMember& m : members) {
      const FioJob& job = jobs[m.first];
      if (m.count > 1 && m.phase.plan.spec.has_trim()) {
        return absl::InvalidArgumentError(
            StrCat(job.file, ":", job.line, ": job '", job.name, "': ", m.count,
                   " trim jobs at once (numjobs, or identical jobs without stonewall): "
                   "a trim job runs in one thread"));
      }
      if (m.count > 1) {
        RETURN_IF_ERROR(common::Annotate(
            SetPhaseParameter("numjobs", std::to_string(m.count), &m.phase.plan.spec),
            StrCat(job.file, ":", job.line, ": job '", job.name, "'")));
      }
      for (PhasePlan::FioLog& log : m.phase.plan.fio_logs) {
        log.thread_number = static_cast<int>(m.first) + 1;
        log.clones = static_cast<int>(m.count);
      }
    }
    JobPhase phase = members[0].phase;
    if (members.size() > 1) RETURN_IF_ERROR(MakeGroup(jobs, members, &phase));
    // A logged job with clones: fio writes one log per clone, from each thread's series.
    if (std::any_of(phase.plan.fio_logs.begin(), phase.plan.fio_logs.end(),
                    [](const PhasePlan::FioLog& log) { return log.clones > 1; })) {
      phase.plan.spec.mutable_randio()->set_thread_series(true);
    }
    const std::string base = members.size() > 1 ? StrCat(PhaseName(jobs[first].name), "..",
                                                         PhaseName(jobs[members.back().first].name))
                                                : PhaseName(jobs[first].name);
    std::string name = PhaseName(base);
    for (int n = 2; names.count(name) > 0; ++n) name = StrCat(PhaseName(base), "-", n);
    names.insert(name);
    phase.plan.name = name;
    for (const GroupMember& m : members) {
      for (const std::string& note : m.phase.notes) {
        if (noted.insert(note).second) out.notes.push_back(note);
      }
      for (const std::string& warning : m.phase.warnings) {
        if (noted.insert(warning).second) out.warnings.push_back(warning);
      }
    }
    out.phases.push_back(std::move(phase.plan));
    first = end;
  }
  if (out.phases.empty()) return absl::InvalidArgumentError("the job file holds no job");
  return out;
}

void KeepOrigins(const std::string& path, const std::vector<std::string>& sections,
                 FioImport* imported) {
  if (!imported->per_host) return;
  for (size_t i = 0; i < imported->phases.size(); ++i) {
    PhasePlan& phase = imported->phases[i];
    auto origin = std::make_shared<PhasePlan::FioOrigin>();
    origin->path = path;
    origin->sections = sections;
    origin->index = i;
    origin->name = phase.name;
    origin->spec = phase.spec;
    origin->target = phase.target;
    phase.fio_origin = std::move(origin);
  }
}

std::map<std::string, std::string> HostVariables(const FioHost& host) {
  std::map<std::string, std::string> vars{{"STORMARK_HOST", host.name}};
  for (const auto& [key, value] : host.labels) {
    std::string name = "STORMARK_LABEL_";
    for (char c : key) {
      const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
      name += alnum ? static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c) : '_';
    }
    vars[name] = value;
  }
  for (const char* fact : kTargetFacts) {
    auto it = host.target.find(fact);
    const std::string_view name = fact;
    vars[StrCat("STORMARK_TARGET_", fact)] = it != host.target.end() ? it->second
                                             : name == "SIZE"        ? "1073741824"
                                             : name == "SIZE_MIB"    ? "1024"
                                             : name == "BLOCK_SIZE"  ? "4096"
                                                                     : "unknown";
  }
  return vars;
}

std::map<std::string, std::string> TargetFacts(const stormark::v1::TargetInfo& info) {
  const uint64_t bytes = info.size_bytes() != 0 ? info.size_bytes() : info.free_bytes();
  std::map<std::string, std::string> facts{
      {"NAME", info.name()},
      {"KIND", info.kind()},
      {"SIZE", std::to_string(bytes)},
      {"SIZE_MIB", std::to_string(bytes >> 20)},
      {"BLOCK_SIZE", std::to_string(info.logical_block_size())},
      {"TRANSPORT", info.transport()}};
  if (auto it = info.environment().find("model"); it != info.environment().end()) {
    facts["MODEL"] = it->second;
  }
  // A fact the target lacks reads as not known (HostVariables).
  std::erase_if(facts, [](const auto& fact) { return fact.second.empty(); });
  return facts;
}

StatusOr<FioImport> ImportJobFile(const std::string& path, const std::vector<std::string>& sections,
                                  const FioHost& host) {
  ReadOptions options;
  options.sections = sections;
  JobFileFacts here = MachineJobFileFacts();
  for (auto& [name, value] : HostVariables(host)) here.env[name] = value;
  ASSIGN_OR_RETURN(const std::vector<FioJob> jobs, ReadJobFile(path, here, options));
  ASSIGN_OR_RETURN(FioImport imported, ImportJobs(jobs));
  // Read again as another host: phases that change use the host's variables.
  {
    JobFileFacts there = here;
    for (auto& [name, value] : HostVariables(host)) there.env[name] = value + "-x";
    auto other = ReadJobFile(path, there, options);
    StatusOr<FioImport> moved =
        other.ok() ? ImportJobs(*other) : StatusOr<FioImport>(other.status());
    bool same = moved.ok() && moved->phases.size() == imported.phases.size();
    for (size_t i = 0; same && i < imported.phases.size(); ++i) {
      same = SameJob(imported.phases[i], moved->phases[i]) &&
             imported.phases[i].name == moved->phases[i].name;
    }
    imported.per_host = !same;
  }
  // Read again as on a machine unlike this one: phases that change depend on $ncpus,
  // $mb_memory or $pagesize, which fio takes from the machine running the job.
  JobFileFacts other = here;
  other.ncpus = here.ncpus + 1;
  other.mb_memory = here.mb_memory + 1;
  other.pagesize = here.pagesize * 2;
  auto elsewhere = ReadJobFile(path, other, options);
  StatusOr<FioImport> moved =
      elsewhere.ok() ? ImportJobs(*elsewhere) : StatusOr<FioImport>(elsewhere.status());
  bool same = moved.ok() && moved->phases.size() == imported.phases.size();
  for (size_t i = 0; same && i < imported.phases.size(); ++i) {
    same = SameJob(imported.phases[i], moved->phases[i]);
  }
  if (!same) {
    imported.warnings.push_back(
        StrCat(path,
               ": its jobs depend on $ncpus, $mb_memory or $pagesize, which stormark takes from "
               "this controller (",
               here.ncpus, " CPUs, ", here.mb_memory, " MiB, pages of ", here.pagesize,
               " bytes), not from each host as fio on that host would"));
  }
  return imported;
}

}  // namespace stormark::controller::fio
