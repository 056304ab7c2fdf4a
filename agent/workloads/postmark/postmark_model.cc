#include "agent/workloads/postmark/postmark_model.h"

#include <cstddef>

#include "common/memory_estimate.h"
#include "common/workloads/postmark/postmark_spec.h"

namespace stormark::agent {
namespace {

// std::mt19937 is PostMark's generator, but seeds itself differently (the 2002 init_genrand).
// Seeding it through this sequence gives it the state PostMark's 1999 sgenrand() gives: each
// word is the high halves of two steps of Knuth's x = 69069 x + 1, taken mod 2^32 (PostMark
// uses an unsigned long, but only the low 32 bits ever reach the state). std::mt19937 then
// twists before its first output, as PostMark's genrand() does after sgenrand().
class SgenrandSequence {
 public:
  using result_type = uint32_t;

  explicit SgenrandSequence(uint32_t seed) : seed_(seed) {}

  template <typename It>
  void generate(It begin, It end) const {
    uint32_t x = seed_;
    for (It it = begin; it != end; ++it) {
      uint32_t word = x & 0xffff0000u;
      x = 69069u * x + 1u;
      word |= (x & 0xffff0000u) >> 16;
      x = 69069u * x + 1u;
      *it = word;
    }
  }
  size_t size() const { return 1; }
  template <typename It>
  void param(It out) const {
    *out = seed_;
  }

 private:
  uint32_t seed_;
};

}  // namespace

PostmarkParams ResolvePostmark(const stormark::v1::PostmarkSpec& spec) {
  const stormark::v1::PostmarkSpec full = common::WithPostmarkDefaults(spec);
  PostmarkParams p;
  p.number = full.number();
  p.min_size = full.min_size_bytes();
  p.max_size = full.max_size_bytes();
  p.transactions = full.transactions();
  p.subdirectories = full.subdirectories();
  p.read_block_size = full.read_block_size();
  p.write_block_size = full.write_block_size();
  p.unbuffered = full.unbuffered();
  p.bias_read = full.bias_read();
  p.bias_create = full.bias_create();
  p.seed = full.seed();
  return p;
}

PostmarkRandom::PostmarkRandom(uint32_t seed) {
  SgenrandSequence sequence(seed);
  engine_.seed(sequence);
}

uint64_t PostmarkRandom::Below(uint64_t n) { return n == 0 ? 0 : engine_() % n; }

PostmarkModel::PostmarkModel(const PostmarkParams& params)
    : params_(params), random_(params.seed), slots_(uint64_t{params.number} * 2) {
  static_assert(sizeof(Slot) <= common::kPostmarkBytesPerSlot,
                "common/memory_estimate.h counts the file table's slots");
  // PostMark draws 2 x HIGH characters; writes never go past HIGH of them.
  text_.resize(params_.max_size);
  for (uint64_t i = 0; i < 2 * params_.max_size; ++i) {
    const char c = static_cast<char>(32 + random_.Below(95));
    if (i < params_.max_size) text_[i] = c;
  }
}

int64_t PostmarkModel::FindFreeSlot() {
  if (next_slot_ < slots_.size() && slots_[next_slot_].size == 0) {
    return static_cast<int64_t>(next_slot_++);
  }
  for (uint64_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].size == 0) {
      next_slot_ = i + 1;
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

uint32_t PostmarkModel::FindUsedSlot() {
  for (;;) {
    const uint64_t slot = random_.Below(slots_.size());
    if (slots_[slot].size != 0) return static_cast<uint32_t>(slot);
  }
}

PostmarkOp PostmarkModel::Create() {
  const int64_t free_slot = FindFreeSlot();
  if (free_slot < 0) return PostmarkOp{};
  Slot& slot = slots_[static_cast<size_t>(free_slot)];
  // PostMark draws the directory when it makes the name, then the size.
  slot.dir = params_.uses_subdirectories()
                 ? static_cast<uint32_t>(random_.Below(params_.subdirectories))
                 : 0;
  slot.file = ++files_created_;
  slot.size =
      static_cast<uint32_t>(params_.min_size + random_.Below(params_.max_size - params_.min_size));
  ++live_files_;
  live_bytes_ += slot.size;
  counts_.bytes_written += slot.size;
  return PostmarkOp{PostmarkOp::Kind::kCreate, static_cast<uint32_t>(free_slot), slot.file,
                    slot.dir, slot.size};
}

PostmarkOp PostmarkModel::Delete(uint32_t index) {
  Slot& slot = slots_[index];
  PostmarkOp op{PostmarkOp::Kind::kDelete, index, slot.file, slot.dir, 0};
  --live_files_;
  live_bytes_ -= slot.size;
  slot.size = 0;
  return op;
}

PostmarkOp PostmarkModel::CreateForPool() {
  PostmarkOp op = Create();
  if (op.kind == PostmarkOp::Kind::kCreate) ++counts_.created_alone;
  return op;
}

bool PostmarkModel::Transaction(PostmarkOp* first, PostmarkOp* second) {
  *first = PostmarkOp{};
  *second = PostmarkOp{};
  if (live_files_ == 0) {
    counts_.out_of_files = true;
    return false;
  }
  ++counts_.transactions;
  if (params_.bias_read != -1) {
    const bool read = random_.Below(10) < static_cast<uint64_t>(params_.bias_read);
    const uint32_t index = FindUsedSlot();
    Slot& slot = slots_[index];
    if (read) {
      *first = PostmarkOp{PostmarkOp::Kind::kRead, index, slot.file, slot.dir, slot.size};
      ++counts_.read;
      counts_.bytes_read += slot.size;
    } else if (slot.size < params_.max_size) {
      const uint64_t block = random_.Below(params_.max_size - slot.size) + 1;
      slot.size += static_cast<uint32_t>(block);
      live_bytes_ += block;
      *first = PostmarkOp{PostmarkOp::Kind::kAppend, index, slot.file, slot.dir, block};
      ++counts_.appended;
      counts_.bytes_written += block;
    }
  }
  if (params_.bias_create != -1) {
    if (random_.Below(10) < static_cast<uint64_t>(params_.bias_create)) {
      *second = Create();
      if (second->kind == PostmarkOp::Kind::kCreate) ++counts_.created_mixed;
    } else {
      *second = Delete(FindUsedSlot());
      ++counts_.deleted_mixed;
    }
  }
  return true;
}

PostmarkOp PostmarkModel::NextTeardownDelete() {
  while (teardown_slot_ < slots_.size()) {
    const uint32_t index = static_cast<uint32_t>(teardown_slot_++);
    if (slots_[index].size != 0) {
      ++counts_.deleted_alone;
      return Delete(index);
    }
  }
  return PostmarkOp{};
}

}  // namespace stormark::agent
