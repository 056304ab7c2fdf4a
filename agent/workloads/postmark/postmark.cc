#include "agent/workloads/postmark/postmark.h"

#include <algorithm>
#include <utility>

#include "common/cpu_times.h"
#include "common/spec_check.h"
#include "common/strings.h"
#include "common/units.h"
#include "common/workloads/postmark/postmark_spec.h"
#include "fmt/format.h"

namespace stormark::agent {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;
using stormark::v1::Measurement;

Measurement MakeMeasurement(const char* name, const common::LatencyHistogram* latency, uint64_t ops,
                            uint64_t bytes, int64_t elapsed, const common::CpuTimes* cpu_before,
                            const common::CpuTimes* cpu_after) {
  Measurement m;
  m.set_name(name);
  m.set_ops(ops);
  m.set_bytes(bytes);
  m.set_elapsed_nanos(elapsed);
  if (cpu_before != nullptr) {
    m.set_cpu_user_nanos(cpu_after->user_nanos - cpu_before->user_nanos);
    m.set_cpu_system_nanos(cpu_after->system_nanos - cpu_before->system_nanos);
  }
  if (latency != nullptr) latency->ToProto(m.mutable_latency());
  m.set_too_fast(elapsed < kPostmarkMinTimeNanos);
  return m;
}

}  // namespace

PostmarkWorkload::PostmarkWorkload(const stormark::v1::PostmarkSpec& spec,
                                   std::unique_ptr<Dir> target, const HostFacts& host,
                                   std::string filesystem)
    : spec_(spec),
      target_(std::move(target)),
      host_ram_bytes_(host.ram_bytes),
      filesystem_(std::move(filesystem)) {}

PostmarkWorkload::~PostmarkWorkload() { Cleanup(); }

Status PostmarkWorkload::Prepare(const std::atomic<bool>& cancelled,
                                 std::vector<std::string>* warnings) {
  if (cancelled.load(std::memory_order_relaxed)) {
    return absl::CancelledError("postmark: aborted while preparing");
  }
  RETURN_IF_ERROR(common::CheckPostmarkSpec(spec_));
  params_ = ResolvePostmark(spec_);
  const std::string& target_name = target_->target_name();

  // The pool alone must fit. At worst the table's 2 x number files all grow to the high
  // bound; that only earns a warning, since appends and creates rarely get there.
  const uint64_t pool_bytes = uint64_t{params_.number} * (params_.min_size + params_.max_size) / 2;
  const uint64_t worst_bytes = 2 * uint64_t{params_.number} * params_.max_size;
  if (const std::optional<uint64_t> free = target_->FreeBytes()) {
    const uint64_t free_bytes = *free;
    if (pool_bytes > free_bytes) {
      return absl::ResourceExhaustedError(
          StrCat("target '", target_name, "' has ", common::FormatBytes(free_bytes),
                 " free; the postmark pool of ", params_.number, " files needs about ",
                 common::FormatBytes(pool_bytes)));
    }
    if (worst_bytes > free_bytes) {
      warnings->push_back(StrCat("target '", target_name, "' has ", common::FormatBytes(free_bytes),
                                 " free; the files could grow to ",
                                 common::FormatBytes(worst_bytes), " at worst"));
    }
  }
  if (filesystem_ == "tmpfs" || filesystem_ == "ramfs") {
    warnings->push_back(StrCat("target '", target_name, "' is on ", filesystem_,
                               ": this measures memory, not storage"));
  }
  if (host_ram_bytes_ > 0 && worst_bytes < host_ram_bytes_) {
    warnings->push_back(StrCat(
        "fits in the page cache: the files never hold more than ", common::FormatBytes(worst_bytes),
        " (2 x number x max size), against ", common::FormatBytes(host_ram_bytes_),
        " of RAM. As in PostMark nothing is synced, so the figures measure the filesystem's "
        "metadata work and the page cache more than the disk"));
    cache_warned_ = true;
  }

  if (params_.uses_subdirectories()) {
    for (uint32_t d = 0; d < params_.subdirectories; ++d) {
      if (cancelled.load(std::memory_order_relaxed)) {
        return absl::CancelledError("postmark: aborted while making subdirectories");
      }
      RETURN_IF_ERROR(target_->CreateDirectory(PostmarkFiles::DirName(d)));
    }
  }
  model_ = std::make_unique<PostmarkModel>(params_);
  files_ = std::make_unique<PostmarkFiles>(params_, target_.get(), model_->text());
  return absl::OkStatus();
}

Status PostmarkWorkload::CheckCancelled(const RunContext& ctx, const char* part) const {
  if (ctx.cancelled.load(std::memory_order_relaxed)) {
    return absl::CancelledError(StrCat("postmark: aborted during ", part));
  }
  return absl::OkStatus();
}

StatusOr<uint64_t> PostmarkWorkload::Timed(const PostmarkOp& op, OpStats* stats) {
  if (op.kind == PostmarkOp::Kind::kNone) return 0;
  const int64_t start = clock_->MonotonicNanos();
  RETURN_IF_ERROR(files_->Do(op));
  const int64_t end = clock_->MonotonicNanos();
  const uint64_t latency = static_cast<uint64_t>(end - start);
  stats->latency.Record(latency);
  ++stats->ops;
  stats->bytes += op.bytes;
  recorder_->Record(end, latency, op.bytes);
  return latency;
}

PostmarkWorkload::OpStats* PostmarkWorkload::MixedStats(const PostmarkOp& op) {
  switch (op.kind) {
    case PostmarkOp::Kind::kCreate:
      return &create_mixed_;
    case PostmarkOp::Kind::kRead:
      return &read_;
    case PostmarkOp::Kind::kAppend:
      return &append_;
    case PostmarkOp::Kind::kDelete:
      return &delete_mixed_;
    case PostmarkOp::Kind::kNone:
      break;
  }
  return nullptr;
}

void PostmarkWorkload::NotePeak() {
  peak_files_ = std::max(peak_files_, model_->live_files());
  peak_bytes_ = std::max(peak_bytes_, model_->live_bytes());
}

Status PostmarkWorkload::Run(RunContext& ctx) {
  if (model_ == nullptr) {
    return absl::FailedPreconditionError("postmark: Run before a successful Prepare");
  }
  clock_ = &ctx.clock;
  recorder_ = ctx.recorders.Add();
  target_->ExpectFiles(params_.number);  // The pool's: PostMark's own table is sized so too.

  cpu_start_ = common::ProcessCpuTimes();
  start_ = clock_->MonotonicNanos();
  for (uint32_t i = 0; i < params_.number; ++i) {
    RETURN_IF_ERROR(CheckCancelled(ctx, "the creation of the pool"));
    RETURN_IF_ERROR(Timed(model_->CreateForPool(), &create_alone_).status());
  }
  NotePeak();

  cpu_transactions_ = common::ProcessCpuTimes();
  transactions_start_ = clock_->MonotonicNanos();
  for (uint32_t i = 0; i < params_.transactions; ++i) {
    RETURN_IF_ERROR(CheckCancelled(ctx, "the transactions"));
    PostmarkOp first, second;
    if (!model_->Transaction(&first, &second)) break;  // Out of files, as PostMark stops.
    ASSIGN_OR_RETURN(const uint64_t first_latency, Timed(first, MixedStats(first)));
    ASSIGN_OR_RETURN(const uint64_t second_latency, Timed(second, MixedStats(second)));
    transactions_.latency.Record(first_latency + second_latency);
    ++transactions_.ops;
    transactions_.bytes += first.bytes + second.bytes;
    NotePeak();
  }

  cpu_teardown_ = common::ProcessCpuTimes();
  teardown_start_ = clock_->MonotonicNanos();
  for (;;) {
    const PostmarkOp op = model_->NextTeardownDelete();
    if (op.kind == PostmarkOp::Kind::kNone) break;
    RETURN_IF_ERROR(CheckCancelled(ctx, "the deletion of the files"));
    RETURN_IF_ERROR(Timed(op, &delete_alone_).status());
  }
  end_ = clock_->MonotonicNanos();
  cpu_end_ = common::ProcessCpuTimes();
  finished_ = true;
  return absl::OkStatus();
}

CleanupReport PostmarkWorkload::Cleanup() {
  // Its descriptors name files of the target, which goes next.
  files_.reset();
  return target_ ? target_->Cleanup() : CleanupReport();
}

void PostmarkWorkload::AddToResult(stormark::v1::PhaseResult* result) const {
  if (model_ == nullptr) return;
  auto& resolved = *result->mutable_resolved();
  resolved["number"] = StrCat(params_.number);
  resolved["min_size_bytes"] = StrCat(params_.min_size);
  resolved["max_size_bytes"] = StrCat(params_.max_size);
  resolved["transactions"] = StrCat(params_.transactions);
  resolved["subdirectories"] = StrCat(params_.subdirectories);
  resolved["read_block_size"] = StrCat(params_.read_block_size);
  resolved["write_block_size"] = StrCat(params_.write_block_size);
  resolved["buffering"] = params_.unbuffered ? "unbuffered" : "buffered";
  resolved["bias_read"] = StrCat(params_.bias_read);
  resolved["bias_create"] = StrCat(params_.bias_create);
  resolved["seed"] = StrCat(params_.seed);
  if (!finished_) return;

  const PostmarkCounts& counts = model_->counts();
  resolved["transactions_run"] = StrCat(counts.transactions);
  resolved["out_of_files"] = counts.out_of_files ? "true" : "false";
  resolved["peak_files"] = StrCat(peak_files_);
  resolved["peak_file_bytes"] = StrCat(peak_bytes_);

  const int64_t pool = *transactions_start_ - *start_;
  const int64_t mixed = *teardown_start_ - *transactions_start_;
  const int64_t teardown = *end_ - *teardown_start_;
  const OpStats* all[] = {&create_alone_, &create_mixed_, &read_,
                          &append_,       &delete_mixed_, &delete_alone_};
  uint64_t ops = 0, bytes = 0;
  for (const OpStats* s : all) {
    ops += s->ops;
    bytes += s->bytes;
  }
  auto add = [result](Measurement m) { *result->add_measurements() = std::move(m); };
  add(MakeMeasurement("total", nullptr, ops, bytes, *end_ - *start_, &cpu_start_, &cpu_end_));
  add(MakeMeasurement("create_alone", &create_alone_.latency, create_alone_.ops,
                      create_alone_.bytes, pool, &cpu_start_, &cpu_transactions_));
  add(MakeMeasurement("transactions", &transactions_.latency, transactions_.ops,
                      transactions_.bytes, mixed, &cpu_transactions_, &cpu_teardown_));
  const std::pair<const char*, const OpStats*> mixed_ops[] = {{"create_mixed", &create_mixed_},
                                                              {"read", &read_},
                                                              {"append", &append_},
                                                              {"delete_mixed", &delete_mixed_}};
  for (const auto& [name, s] : mixed_ops) {
    add(MakeMeasurement(name, &s->latency, s->ops, s->bytes, mixed, nullptr, nullptr));
  }
  add(MakeMeasurement("delete_alone", &delete_alone_.latency, delete_alone_.ops,
                      delete_alone_.bytes, teardown, &cpu_teardown_, &cpu_end_));

  if (counts.out_of_files) {
    result->add_warnings(StrCat(
        "out of files after ", counts.transactions, " of ", params_.transactions,
        " transactions: PostMark stops there too (and prints no report); the figures cover the "
        "transactions that ran. Raise number or bias create, or lower transactions"));
  }
  if (!cache_warned_ && host_ram_bytes_ > 0 && peak_bytes_ < host_ram_bytes_) {
    result->add_warnings(StrCat("fits in the page cache: the files held at most ",
                                common::FormatBytes(peak_bytes_), ", against ",
                                common::FormatBytes(host_ram_bytes_),
                                " of RAM, and nothing is synced (as in PostMark)"));
  }
  if (mixed < kPostmarkMinTimeNanos) {
    result->add_warnings(StrCat("the transactions took ",
                                fmt::format("{:.3f}", static_cast<double>(mixed) / 1e9),
                                " s (under 0.5 s): too short for a stable rate; raise "
                                "transactions"));
  }
}

}  // namespace stormark::agent
