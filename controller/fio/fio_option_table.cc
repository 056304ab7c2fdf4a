#include "controller/fio/fio_option_table.h"

#include <algorithm>

namespace stormark::controller::fio {
namespace {

constexpr FioOption Job(std::string_view name, std::string_view why) {
  return {name, FioOptionStatus::kJob, {}, why};
}
constexpr FioOption Mapped(std::string_view name, std::string_view randio) {
  return {name, FioOptionStatus::kMapped, randio, {}};
}
constexpr FioOption Ignored(std::string_view name, std::string_view why) {
  return {name, FioOptionStatus::kIgnored, {}, why};
}
constexpr FioOption Refused(std::string_view name, std::string_view why) {
  return {name, FioOptionStatus::kRefused, {}, why};
}

// Reasons shared by several options.
constexpr std::string_view kFiles =
    "the agent's target decides where the data lives: name a target with filename=TARGET";
constexpr std::string_view kNotYet = "not supported yet";
constexpr std::string_view kLogs =
    "stormark records every host's per-second series and full latency histogram by itself "
    "(results show, --json, the HTML report)";
constexpr std::string_view kPercentiles =
    "stormark keeps the whole latency histogram: every percentile is in --json and the report";
constexpr std::string_view kTiming = "stormark always times every I/O";
constexpr std::string_view kData =
    "stormark writes incompressible data stamped with its offset, so that compressing or "
    "deduplicating storage cannot shortcut the work";
constexpr std::string_view kZones = "zoned block devices are not supported";
constexpr std::string_view kReplay = "replaying I/O logs is not supported";
constexpr std::string_view kCpu = "CPU and NUMA placement are not supported";
constexpr std::string_view kTrim =
    "trims within a verifying write job are not supported (rw=trim and randtrim run as "
    "stormark's trim workload)";
constexpr std::string_view kPriority = "I/O and process priorities are not supported";
constexpr std::string_view kLatencyTarget = "latency-target runs are not supported";

const std::vector<FioOption>& Table() {
  static const auto* const table = new std::vector<FioOption>{
      Ignored("description", "the phase is named after the job"),
      Job("name", "the phase's name (made a valid phase name)"),
      Job("wait_for", "the job runs after the job it names: a phase boundary"),
      Job("filename", "the agent's target the job runs on (a name, never a path)"),
      Refused("lockfile", kFiles),
      Refused("directory", kFiles),
      Refused("filename_format", kFiles),
      Refused("unique_filename", kFiles),
      Refused("opendir", kFiles),
      Mapped("rw", "rw"),
      Mapped("readwrite", "rw"),
      Mapped("bs", "bs"),
      Mapped("blocksize", "bs"),
      Mapped("ba", "blockalign"),
      Mapped("blockalign", "blockalign"),
      Mapped("bsrange", "bs"),
      Mapped("blocksize_range", "bs"),
      Job("bssplit", "block sizes by share, for reads and (after a comma) writes; fio's units"),
      Refused("bs_unaligned", "I/O is always aligned to the block size"),
      Refused("blocksize_unaligned", "I/O is always aligned to the block size"),
      Job("randrepeat",
          "1 (fio's default): the same offsets every run, from a fixed seed; 0: a "
          "new seed each run"),
      Mapped("randseed", "seed"),
      Mapped("norandommap", "norandommap"),
      Refused("ignore_error", "an I/O error fails the phase, with the error"),
      Refused("rw_sequencer", kNotYet),
      Job("ioengine",
          "psync, sync, pvsync, io_uring and libaio run as stormark's psync, io_uring and "
          "libaio engines"),
      Mapped("iodepth", "iodepth"),
      Mapped("iodepth_batch", "iodepth_batch_submit"),
      Mapped("iodepth_batch_submit", "iodepth_batch_submit"),
      Mapped("iodepth_batch_complete_min", "iodepth_batch_complete_min"),
      Mapped("iodepth_batch_complete", "iodepth_batch_complete_min"),
      Mapped("iodepth_batch_complete_max", "iodepth_batch_complete_max"),
      Mapped("iodepth_low", "iodepth_low"),
      Refused("serialize_overlap", kNotYet),
      Refused("io_submit_mode", kNotYet),
      Mapped("size", "size"),
      Refused("io_size", "use size (with time_based for a fixed runtime)"),
      Refused("io_limit", "use size (with time_based for a fixed runtime)"),
      Refused("fill_device", "use size"),
      Refused("fill_fs", "use size"),
      Refused("filesize", kFiles),
      Refused("file_append", kFiles),
      Mapped("offset", "offset"),
      Mapped("offset_increment", "offset_increment"),
      Refused("offset_align", kNotYet),
      Refused("number_ios", "use size, or runtime with time_based"),
      Ignored("random_generator",
              "stormark draws offsets with its own generator (a keyed permutation for the "
              "random map, xoshiro256** otherwise): the same distribution, not fio's sequence"),
      Mapped("random_distribution", "random_distribution"),
      Refused("percentage_random", kNotYet),
      Refused("allrandrepeat", kNotYet),
      Refused("nrfiles", kFiles),
      Refused("file_service_type", kFiles),
      Refused("openfiles", kFiles),
      Refused("fallocate", kFiles),
      Refused("fadvise_hint", kNotYet),
      Mapped("fsync", "fsync"),
      Mapped("fdatasync", "fdatasync"),
      Refused("write_barrier", kNotYet),
      Refused("sync_file_range", kNotYet),
      Mapped("direct", "direct"),
      Refused("atomic", kNotYet),
      Job("buffered", "the opposite of direct"),
      Ignored("overwrite", "stormark lays out a file before it reads or overwrites it"),
      Refused("loops", "use the plan's repeat: (or --set repeat=N)"),
      Job("numjobs", "threads of the job's phase"),
      Mapped("startdelay", "startdelay"),
      Mapped("runtime", "runtime"),
      Mapped("timeout", "runtime"),
      Mapped("time_based", "time_based"),
      Refused("verify_only", kNotYet),
      Mapped("ramp_time", "ramp_time"),
      Ignored("clocksource", kTiming),
      Refused("mem", kNotYet),
      Refused("iomem", kNotYet),
      Job("verify",
          "every checksum fio knows (crc32c, md5, sha256, xxhash, ...), meta and pattern run "
          "as stormark's own verify: every 4 KiB stamped with its offset, a generation and a "
          "CRC32C, checked on each read and all read back at the end; 0 and null: none. Per "
          "job, also in a run group, where a job may not write the bytes another verifies"),
      Refused("do_verify", kNotYet),
      Refused("verify_interval", kNotYet),
      Refused("verify_offset", kNotYet),
      Ignored("verify_pattern",
              "stormark writes its own stamped data, whose check is stronger than a fixed "
              "pattern's (it finds misdirected and lost writes)"),
      Refused("verify_fatal", kNotYet),
      Refused("verify_dump", kNotYet),
      Refused("verify_async", kNotYet),
      Refused("verify_backlog", kNotYet),
      Refused("verify_backlog_batch", kNotYet),
      Refused("experimental_verify", kNotYet),
      Refused("verify_state_load", kNotYet),
      Refused("verify_state_save", kNotYet),
      Refused("trim_percentage", kTrim),
      Refused("trim_verify_zero", kTrim),
      Refused("trim_backlog", kTrim),
      Refused("trim_backlog_batch", kTrim),
      Refused("write_iolog", kReplay),
      Refused("read_iolog", kReplay),
      Refused("read_iolog_chunked", kReplay),
      Refused("replay_no_stall", kReplay),
      Refused("replay_redirect", kReplay),
      Refused("replay_scale", kReplay),
      Refused("replay_align", kReplay),
      Refused("replay_time_scale", kReplay),
      Refused("replay_skip", kReplay),
      Refused("merge_blktrace_file", kReplay),
      Refused("merge_blktrace_scalars", kReplay),
      Refused("merge_blktrace_iters", kReplay),
      Refused("exec_prerun",
              "use the plan's setup: hooks, which the agent's commands: rules govern"),
      Refused("exec_postrun",
              "use the plan's teardown: hooks, which the agent's commands: rules govern"),
      Refused("ioscheduler", "use the plan's tuning: scheduler=NAME (allow_tuning on the agent)"),
      Refused("zonemode", kZones),
      Refused("zonesize", kZones),
      Refused("zonecapacity", kZones),
      Refused("zonerange", kZones),
      Refused("zoneskip", kZones),
      Refused("read_beyond_wp", kZones),
      Refused("max_open_zones", kZones),
      Refused("job_max_open_zones", kZones),
      Refused("ignore_zone_limits", kZones),
      Refused("zone_reset_threshold", kZones),
      Refused("zone_reset_frequency", kZones),
      Refused("lockmem", kNotYet),
      Mapped("rwmixread", "rwmixread"),
      Mapped("rwmixwrite", "rwmixwrite"),
      Refused("nice", kPriority),
      Refused("prio", kPriority),
      Refused("prioclass", kPriority),
      Mapped("thinktime", "thinktime"),
      Mapped("thinktime_spin", "thinktime_spin"),
      Mapped("thinktime_blocks", "thinktime_blocks"),
      Refused("thinktime_blocks_type", kNotYet),
      Refused("thinktime_iotime", kNotYet),
      Mapped("rate", "rate"),
      Refused("rate_min", kNotYet),
      Mapped("rate_process", "rate_process"),
      Refused("rate_cycle", kNotYet),
      Refused("rate_ignore_thinktime", kNotYet),
      Mapped("rate_iops", "rate_iops"),
      Refused("rate_iops_min", kNotYet),
      Refused("max_latency", kLatencyTarget),
      Refused("latency_target", kLatencyTarget),
      Refused("latency_window", kLatencyTarget),
      Refused("latency_percentile", kLatencyTarget),
      Refused("latency_run", kLatencyTarget),
      Ignored("invalidate",
              "the agent drops the target's pages from the page cache itself before reads"),
      Refused("sync", "use fsync=N or fdatasync=N, or direct=1"),
      Refused("write_hint", kNotYet),
      Refused("create_serialize", kFiles),
      Refused("create_fsync", kFiles),
      Refused("create_on_open", kFiles),
      Refused("create_only", kFiles),
      Refused("allow_file_create", kFiles),
      Refused("allow_mounted_write",
              "the agent refuses to write a mounted device, whatever the job says"),
      Refused("pre_read", kNotYet),
      Refused("cpumask", kCpu),
      Refused("cpus_allowed", kCpu),
      Refused("cpus_allowed_policy", kCpu),
      Refused("numa_cpu_nodes", kCpu),
      Refused("numa_mem_policy", kCpu),
      Mapped("end_fsync", "end_fsync"),
      Mapped("fsync_on_close", "end_fsync"),
      Ignored("unlink", "the agent always removes what a phase created"),
      Ignored("unlink_each_loop", "the agent always removes what a phase created"),
      Refused("exitall", kNotYet),
      Refused("exit_what", kNotYet),
      Refused("exitall_on_error", "use --fail-fast"),
      Job("stonewall", "a phase boundary: the job runs after every job above it"),
      Job("wait_for_previous", "a phase boundary: the job runs after every job above it"),
      Ignored("new_group", "each phase is reported on its own already"),
      Ignored("thread", "stormark runs its jobs as threads"),
      Job("per_job_logs",
          "0: the logs are named without the job's number, and the clones share them"),
      Job("write_bw_log", "a bandwidth log in fio's format, per host, after the run"),
      Ignored("bwavgtime", kLogs),
      Job("write_lat_log", "latency logs (lat, clat) in fio's format, per host, after the run"),
      Job("write_iops_log", "an IOPS log in fio's format, per host, after the run"),
      Ignored("iopsavgtime", kLogs),
      Ignored("log_entries", kLogs),
      Job("log_avg_msec",
          "the logs' interval (at least 100 ms; 0, fio's every-I/O log, is 1000 ms here)"),
      Ignored("log_hist_msec", kLogs),
      Ignored("log_hist_coarseness", kLogs),
      Ignored("write_hist_log", kLogs),
      Ignored("log_max_value",
              "the logs hold each interval's mean; the full histogram is in --json"),
      Ignored("log_offset", kLogs),
      Ignored("log_prio", kLogs),
      Ignored("log_compression", kLogs),
      Ignored("log_compression_cpus", kLogs),
      Ignored("log_store_compressed", kLogs),
      Job("log_unix_epoch", "the logs' times in Unix milliseconds, on the controller's clock"),
      Job("log_alternate_epoch", "the logs' times in Unix milliseconds, on the controller's clock"),
      Ignored("log_alternate_epoch_clock_id", "the logs' Unix times are CLOCK_REALTIME's"),
      Ignored("block_error_percentiles", kLogs),
      Ignored("group_reporting",
              "each phase reports every host and the all-hosts row computed from merged "
              "histograms"),
      Ignored("stats", kTiming),
      Refused("zero_buffers", kData),
      Refused("refill_buffers", kData),
      Refused("scramble_buffers", kData),
      Refused("buffer_pattern", kData),
      Refused("buffer_compress_percentage", kData),
      Refused("buffer_compress_chunk", kData),
      Refused("dedupe_percentage", kData),
      Refused("dedupe_mode", kData),
      Refused("dedupe_working_set_percentage", kData),
      Refused("dedupe_global", kData),
      Ignored("clat_percentiles", kPercentiles),
      Ignored("lat_percentiles", kPercentiles),
      Ignored("slat_percentiles", kPercentiles),
      Ignored("percentile_list", kPercentiles),
      Ignored("percentiles", kPercentiles),
      Ignored("significant_figures", kPercentiles),
      Ignored("disk_util", "the agent records the device's own counters (device_stats)"),
      Ignored("gtod_reduce", kTiming),
      Ignored("disable_lat", kTiming),
      Ignored("disable_clat", kTiming),
      Ignored("disable_slat", kTiming),
      Ignored("disable_bw_measurement", kTiming),
      Ignored("disable_bw", kTiming),
      Ignored("gtod_cpu", kTiming),
      Ignored("unified_rw_reporting", kPercentiles),
      Refused("continue_on_error", "an I/O error fails the phase, with the error"),
      Refused("error_dump", "an I/O error fails the phase, with the error"),
      Refused("profile", kNotYet),
      Refused("cgroup", kNotYet),
      Refused("cgroup_nodelete", kNotYet),
      Refused("cgroup_weight", kNotYet),
      Refused("uid", "phases run as the agent's user"),
      Refused("gid", "phases run as the agent's user"),
      Job("kb_base", "the unit of k, m, g in the job's sizes"),
      Ignored("unit_base", "stormark reports bytes (MiB/s in its tables)"),
      Refused("hugepage-size", kNotYet),
      Refused("flow_id", kNotYet),
      Refused("flow", kNotYet),
      Refused("flow_sleep", kNotYet),
      Refused("steadystate", kNotYet),
      Refused("ss", kNotYet),
      Refused("steadystate_duration", kNotYet),
      Refused("ss_dur", kNotYet),
      Refused("steadystate_ramp_time", kNotYet),
      Refused("ss_ramp", kNotYet),
      // The libaio and io_uring engines' own options.
      Ignored("userspace_reap",
              "stormark's libaio engine reaps with io_getevents, as fio does without it"),
      Refused("cmdprio_percentage", kPriority),
      Refused("cmdprio_class", kPriority),
      Refused("cmdprio", kPriority),
      Refused("cmdprio_bssplit", kPriority),
      Refused("nowait", kNotYet),
      Refused("hipri", kNotYet),
      Ignored("fixedbufs",
              "stormark's io_uring engine registers its buffers whenever the kernel lets it"),
      Ignored("registerfiles",
              "stormark's io_uring engine registers its file whenever the kernel lets it"),
      Refused("sqthread_poll", kNotYet),
      Refused("sqthread_poll_cpu", kNotYet),
      Refused("nonvectored", kNotYet),
      Refused("uncached", kNotYet),
      Refused("force_async", kNotYet),
      Refused("cmd_type", kNotYet),
  };
  return *table;
}

}  // namespace

const std::vector<FioOption>& FioOptions() { return Table(); }

const FioOption* FindFioOption(std::string_view name) {
  const std::vector<FioOption>& table = Table();
  auto it =
      std::find_if(table.begin(), table.end(), [&](const FioOption& o) { return o.name == name; });
  return it == table.end() ? nullptr : &*it;
}

std::string_view FioOptionStatusName(FioOptionStatus status) {
  switch (status) {
    case FioOptionStatus::kJob:
      return "job file";
    case FioOptionStatus::kMapped:
      return "mapped";
    case FioOptionStatus::kIgnored:
      return "ignored, with a note";
    case FioOptionStatus::kRefused:
      return "refused";
  }
  return "refused";
}

}  // namespace stormark::controller::fio
