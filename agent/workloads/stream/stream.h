// `stream`: a dd-like sequential pass over [0, size) of a device, in block_size requests, one
// at a time. WRITE writes it; READ reads data that Prepare laid out (and evicted from the page
// cache). With `fdatasync`, one fdatasync closes the timed region (dd conv=fdatasync); with
// `direct`, the device is opened with O_DIRECT.
//
// The device is
//   - on a dir target: the file stream.dat in the phase directory, new (WRITE extends it, as
//     dd does) or laid out by Prepare (READ). A READ right after a WRITE of at least its size,
//     which the controller asked to hand its file over (agent/workloads/handed_over.h), reads
//     that very file instead: it is flushed and evicted, not laid out again;
//   - on a block, null, aoe, nbd or iscsi target: the target's device, used in place. WRITE,
//     and the layout before a READ, go through the interlocks of agent/devices/write_guard.h
//     (`disposable: true`); a READ of a target that is not disposable reads what is there, and
//     says how much of it holds no data (a block file or loop device: see FindUnallocated in
//     agent/targets/block/block_target.h) or that this may be space never written (any other). A
//     READ of [0, size) that the agent's own earlier phases wrote in full
//     (agent/targets/written_prefix.h), or of a block file whose filesystem reports no hole
//     there, is not laid out again: it reads that data, and says whose.
//
// Data is random (incompressible) and every 4 KiB carries its own offset, so that
// deduplicating or compressing storage cannot shortcut the work.
#ifndef STORMARK_AGENT_WORKLOADS_STREAM_STREAM_H_
#define STORMARK_AGENT_WORKLOADS_STREAM_STREAM_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "agent/config/config.h"
#include "agent/devices/device.h"
#include "agent/devices/file_device.h"
#include "agent/devices/io_buffer.h"
#include "agent/dir/dir.h"
#include "agent/targets/written_prefix.h"
#include "agent/workloads/workload.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

class StreamWorkload final : public Workload {
 public:
  // On a dir target. `filesystem` is the target's filesystem type, for the tmpfs warning. The
  // page cache is handled without the 2xRAM rule: writes are flushed inside the timed region
  // (fdatasync or direct, else a warning), and reads start from a file evicted from the cache.
  StreamWorkload(const stormark::v1::StreamSpec& spec, TargetConfig target,
                 std::unique_ptr<Dir> dir, std::string filesystem);
  // A READ on a dir target of the file an earlier phase handed over, which Rereads accepted.
  StreamWorkload(const stormark::v1::StreamSpec& spec, TargetConfig target,
                 std::unique_ptr<HandedOver> handed, std::string filesystem);
  // On a block, null, aoe, nbd or iscsi target, opened in Prepare. `filesystem` is the one
  // holding a block target's file (for the tmpfs warning), or "". `earlier` is what the
  // agent's earlier phases wrote on the target. `block` is the target as the phase resolved
  // it (resolved in Prepare when null).
  StreamWorkload(const stormark::v1::StreamSpec& spec, TargetConfig target, std::string filesystem,
                 WrittenPrefix earlier = {}, std::shared_ptr<BlockTarget> block = nullptr);
  // On a device the caller made (a memory or fault-injecting device in tests), which must
  // outlive the workload. A READ lays out its data first when the device is writable, unless
  // `earlier` covers it.
  StreamWorkload(const stormark::v1::StreamSpec& spec, Device& device, WrittenPrefix earlier = {});
  ~StreamWorkload() override;

  // Checks the parameters (without touching the target) and returns the first problem.
  static common::Status Validate(const stormark::v1::StreamSpec& spec);
  // Whether a READ of `spec` can read `handed` (a stream write's file of at least its size).
  static bool Rereads(const stormark::v1::StreamSpec& spec, const HandedOver& handed);

  common::Status Prepare(const std::atomic<bool>& cancelled,
                         std::vector<std::string>* warnings) override;
  common::Status Run(RunContext& ctx) override;
  CleanupReport Cleanup() override;
  // The device (resolved["device"]), its counters (device_stats), and for a READ of a
  // handed-over file, whose file it is (resolved["data"]).
  void AddToResult(stormark::v1::PhaseResult* result) const override;
  // The layout of a READ, or the blocks a WRITE completed (on an aoe, nbd or iscsi target,
  // only once its fdatasync did); {} on a dir or null target.
  WrittenPrefix WrittenFromStart() const override;
  // A WRITE on a dir target that ran to its end hands over its file.
  std::unique_ptr<HandedOver> HandOver() override;

 private:
  // Fills buf_ for the block at `offset`: random data with the offset stamped per 4 KiB.
  void StampBlock(uint64_t offset);
  // Sets device_ to the phase's file in dir_: new for WRITE, laid out for READ.
  common::Status OpenDirFile(const std::atomic<bool>& cancelled);
  // Sets device_ to the file handed over to a READ, flushed first (AddToResult names its
  // writer, in resolved["data"]).
  common::Status OpenHandedOverFile();
  // Sets device_ to the target's device, writable for WRITE and, when the target is
  // disposable, for READ (which then lays out the data).
  common::Status OpenTarget(const std::atomic<bool>& cancelled, std::vector<std::string>* warnings);
  // OUT_OF_RANGE when size does not fit device_, INVALID_ARGUMENT when bs breaks its alignment.
  common::Status CheckFits() const;
  // Writes [0, size) of `device` with stamped random data and flushes it.
  common::Status LayOut(Device& device, const std::atomic<bool>& cancelled);
  // Before a READ of the target's device: lays out its data, unless `earlier_` covers it
  // (then says so), or warns that a device that may not be written reads what is there.
  common::Status LayOutOrReuse(const std::atomic<bool>& cancelled,
                               std::vector<std::string>* warnings);
  // Before buffered reads of a file or block device: drops [0, size) from the page cache and
  // warns when it stayed.
  void EvictBeforeReading(std::vector<std::string>* warnings) const;
  // "target 'disk1' on /dev/sdb (psync)", or the device alone when no target is known.
  std::string Where() const;

  const stormark::v1::StreamSpec spec_;
  // The target's configuration; empty for a given device.
  const TargetConfig target_;
  std::unique_ptr<Dir> dir_;  // The phase's directory on a dir target; null otherwise.
  const bool on_files_;       // A dir target (dir_ is moved out by HandOver).
  // For a READ of a handed-over file: the phase that wrote it, and how ("" otherwise).
  const std::string reread_from_;
  const std::string reread_how_;
  const std::string filesystem_;
  const WrittenPrefix earlier_;
  // The target as the phase resolved it; null on a dir target and on a given device.
  std::shared_ptr<BlockTarget> block_;

  // Settled in Prepare. device_ is owned_device_ or the caller's; file_ is device_ when it is
  // a file or block device (closed at the end of Run, inside the timed region, as dd does).
  std::unique_ptr<Device> owned_device_;
  Device* device_ = nullptr;
  Device* file_ = nullptr;
  std::unique_ptr<IoBuffer> buf_;  // block_size bytes, aligned for O_DIRECT.
  uint64_t device_size_ = 0;
  // On the target's device: the bytes Prepare laid out, and those Run wrote from offset 0 in
  // requests that completed, flushed on a network target (read by WrittenFromStart after Run
  // returned).
  uint64_t laid_out_ = 0;
  std::atomic<uint64_t> written_{0};
  std::atomic<bool> ran_to_end_{false};  // Run returned OK.
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_STREAM_STREAM_H_
