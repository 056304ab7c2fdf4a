// The randio workload's parameters as a plan file or `--set` writes them, named as fio names
// its options, so that a fio job file translates line by line:
//
//   rw: randread         read | write | randread | randwrite | randrw | readwrite (or rw)
//   rwmixread: 70        randrw/readwrite: percent reads (default 50)
//   bs: 4k               or a range, bs: 4k-64k (each I/O a multiple of the smaller size)
//   iodepth: 32          numjobs: 4
//   size: 1G             offset: 0     offset_increment: 1G
//   runtime: 60s         time_based: true     ramp_time: 5s    (runtime defaults to a 60 s cap)
//   engine: io_uring     psync (default) | io_uring; `ioengine` is accepted too
//   direct: true         fsync: 32 / fdatasync: 32   (every N writes)
//   rate_iops: 1000      rate: 100M   (bytes per second, per job)
//   random_distribution: zipf:1.2     random (default) | zipf:THETA
//   verify: true         (or crc32c, fio's name for the checksum used)
//   seed: 42             (fio: randseed)
#ifndef STORMARK_CONTROLLER_WORKLOADS_RANDIO_PARAMS_H_
#define STORMARK_CONTROLLER_WORKLOADS_RANDIO_PARAMS_H_

#include <string>
#include <string_view>

#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

inline constexpr char kRandioParameterNames[] =
    "rw, rwmixread, bs, iodepth, numjobs, size, offset, offset_increment, runtime, time_based, "
    "ramp_time, engine, direct, fsync, fdatasync, rate_iops, rate, random_distribution, verify, "
    "seed";

// The runtime a phase gets unless it says otherwise: a cap, so that the default 4 KiB random
// reads over a whole disk end in a minute rather than hours (fio has no cap; runtime=0 removes
// it here too).
inline constexpr int64_t kDefaultRandioRuntimeNanos = int64_t{60} * 1'000'000'000;

// The defaults a plan starts from: rw=randread and bs=4k, as fio's, and a 60 s runtime cap.
void InitRandio(stormark::v1::RandioSpec* spec);

// Sets one parameter. INVALID_ARGUMENT names the parameter, the value and what is accepted.
common::Status SetRandioParameter(std::string_view key, std::string_view value,
                                  stormark::v1::RandioSpec* spec);

// "randio randread bs 4 KiB, iodepth 32, io_uring, direct, 60 s time_based" (defaults left out).
std::string DescribeRandio(const stormark::v1::RandioSpec& spec);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_WORKLOADS_RANDIO_PARAMS_H_
