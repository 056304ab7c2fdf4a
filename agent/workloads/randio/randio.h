// `randio`: fio-class block I/O (see RandioSpec in agent.proto for every parameter, named as
// fio names them). numjobs threads each run a RandioJob: a queue of iodepth requests on one
// device, with offsets from an OffsetSource, until size bytes are moved or runtime is over.
//
// Targets: a block target (a raw device or a file, used in place; writing goes through the
// interlocks of agent/devices/write_guard.h), the null target, or a dir target, in which the
// phase creates randio.dat and fills it with random data first (so reads never read holes).
//
// A run group of unlike jobs (RandioSpec.group, fio's jobs between stonewalls) runs every
// job's threads at once on the one device, in one timed region: each job has its own
// pattern, sizes, depth, region and deadline, and its own figures in the result (Measurement
// `job`) next to the phase's totals.
//
// Prepare opens the device and every job's queue (an engine that cannot start fails there),
// lays out verifiable data when verifying, and evicts the page cache before buffered reads.
// Run is the timed region; with ramp_time it restarts the region when the ramp ends, and with
// verify it closes the region before reading everything back.
//
// Verify is a job's own: in a run group, each job that verifies has its own book of its own
// regions (one unit size and one salt for the phase), lays out and reads back only those, and
// reports its own mismatches. Prepare refuses a group where such a job shares bytes with
// another that writes them (common::FindVerifyConflict), once the regions are resolved.
#ifndef STORMARK_AGENT_WORKLOADS_RANDIO_RANDIO_H_
#define STORMARK_AGENT_WORKLOADS_RANDIO_RANDIO_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/config/config.h"
#include "agent/devices/device.h"
#include "agent/host/sysinfo.h"
#include "agent/dir/dir.h"
#include "agent/targets/block/block_target.h"
#include "agent/workloads/randio/block_verify.h"
#include "agent/workloads/randio/randio_job.h"
#include "agent/workloads/workload.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

class RandioWorkload final : public Workload {
 public:
  // The size of randio.dat in a dir target when the spec gives none.
  static constexpr uint64_t kDefaultDirFileSize = uint64_t{1} << 30;

  // `dir` is the phase's directory for a dir target, nullptr for block and null targets.
  // `filesystem` is the filesystem holding the target (for the tmpfs note), or "". `block`
  // is a block, null or network target as the phase resolved it (resolved in Prepare when
  // null).
  RandioWorkload(const stormark::v1::RandioSpec& spec, TargetConfig target,
                 std::unique_ptr<Dir> dir, HostFacts host, std::string filesystem,
                 std::shared_ptr<BlockTarget> block = nullptr);
  ~RandioWorkload() override;

  // A workload on a device the caller made (a memory or fault-injecting device in tests).
  // `device` must outlive the workload.
  RandioWorkload(const stormark::v1::RandioSpec& spec, Device& device, HostFacts host);

  common::Status Prepare(const std::atomic<bool>& cancelled,
                         std::vector<std::string>* warnings) override;
  common::Status Run(RunContext& ctx) override;
  // Its job threads exist before the instant (see Run).
  bool StartsItself() const override { return true; }
  CleanupReport Cleanup() override;
  void AddToResult(stormark::v1::PhaseResult* result) const override;
  // The verify layout, when it covers a prefix of a block or network target's device (offset
  // 0, jobs' regions touching); the timed writes are not counted (random, or time-bounded).
  WrittenPrefix WrittenFromStart() const override;

 private:
  // Opens device_ (creating and filling the dir target's file first).
  common::Status OpenDevice(const std::atomic<bool>& cancelled, std::vector<std::string>* warnings);
  // Refuses regions where a verifying job meets another that writes; then makes each
  // verifying job's book and writes verifiable data over its regions (generation 1).
  common::Status SetUpVerify(const std::atomic<bool>& cancelled);
  // Reads every unit of `book` back and checks it; after the timed region.
  common::Status ReadBack(VerifyBook& book, const std::atomic<bool>& cancelled);
  // The verify reports of every verifying job, added up; nullopt when none verifies.
  std::optional<stormark::v1::VerifyReport> VerifyTotals() const;
  // One job of the phase (the spec's own, or one of its group), as Prepare settled it.
  struct Member {
    stormark::v1::RandioSpec spec;  // Its group cleared.
    uint32_t jobs_count = 1;
    uint32_t iodepth = 1;
    uint32_t bs_min = 0, bs_max = 0;
    uint64_t region_size = 0;
    // offset and offset_increment in bytes, percentages of the device resolved.
    uint64_t offset = 0, offset_increment = 0;
    // Its threads are jobs_[first_job, first_job + jobs_count).
    uint32_t first_job = 0;
    // What its threads wrote where, when it verifies; nullptr otherwise.
    std::unique_ptr<VerifyBook> book;
    // Where its last job's region ends.
    uint64_t SpanEnd() const {
      return offset + uint64_t{jobs_count - 1} * offset_increment + region_size;
    }
  };

  // The engine a spec asks for (psync when it names none).
  static Engine EngineOf(const stormark::v1::RandioSpec& spec);
  // Settles the member's region_size, offset and offset_increment (percentages of the
  // device), and checks its regions and alignment against the device.
  common::Status ResolveRegions(Member& m) const;
  void AddWarnings(std::vector<std::string>* warnings) const;
  void AddMemberWarnings(const Member& m, std::vector<std::string>* warnings) const;
  JobPlan PlanFor(const Member& m, uint32_t job) const;
  // The measurements "read", "write" and "flush" of jobs_[begin, end), with their series;
  // their latency histograms unless `latency` is false.
  void AddMeasurements(size_t begin, size_t end, int64_t elapsed_nanos,
                       google::protobuf::RepeatedPtrField<stormark::v1::Measurement>* out,
                       bool latency = true) const;
  void AddResolved(const Member& m, const std::string& prefix,
                   stormark::v1::PhaseResult* result) const;

  const stormark::v1::RandioSpec spec_;
  const TargetConfig target_;
  std::unique_ptr<Dir> dir_;
  const HostFacts host_;
  const std::string filesystem_;
  // The target as the phase resolved it; null on a dir target and on a given device.
  std::shared_ptr<BlockTarget> block_;

  // Settled in Prepare: the spec's own job first, then its group's.
  std::vector<Member> members_;
  uint64_t seed_ = 0;
  std::unique_ptr<Device> owned_device_;
  Device* device_ = nullptr;
  WrittenPrefix laid_out_;  // The verify layout, when it is a prefix of the target's device.

  // Built in Prepare, after device_, so that they go first: every member's threads, in
  // member order.
  std::vector<std::unique_ptr<RandioJob>> jobs_;
  std::vector<uint32_t> member_of_;  // jobs_[j] belongs to members_[member_of_[j]].
  // Figures of the run, for AddToResult.
  int64_t first_done_nanos_ = 0, last_done_nanos_ = 0;
  uint64_t first_done_bytes_ = 0, first_done_ops_ = 0;
  int64_t series_interval_nanos_ = 1'000'000'000;  // The run's (PhaseSpec.series_interval_ms).
  std::vector<std::string> run_warnings_;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_RANDIO_RANDIO_H_
