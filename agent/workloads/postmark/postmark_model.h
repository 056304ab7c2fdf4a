// PostMark 1.5's model of a mail or news server's files, without any I/O: which file each
// operation touches, how large it is, and the counts PostMark reports. The workload
// (postmark.h) performs the operations this model chooses; tests run the model alone.
//
// It follows PostMark 1.5x (Debian's postmark 1.53) choice for choice, so that a seed gives
// the same files, sizes and transactions as PostMark does with that seed:
//
// - The random numbers are PostMark's: MT19937, seeded by its sgenrand() (Knuth's 69069
//   generator filling the state), and RND(n) = genrand() % n, with no draw at all when n is 0.
// - Before anything else, 2 x HIGH draws make the text that files are written from
//   (characters 32 + RND(95)); files start at its first byte.
// - A table of 2 x number slots holds the files. A new file takes the slot after the last
//   one taken if that is free, else the first free slot; when none is free nothing is created.
//   Its name is PostMark's running count of files created ("17"), in directory
//   "s" RND(subdirectories) when there are more than one ("s3/17"). Its size is
//   LOW + RND(HIGH - LOW).
// - A used file is picked by drawing RND(2 x number) until the slot is in use.
// - A transaction draws RND(10) < bias read to read a used file whole, else appends to one
//   RND(HIGH - size) + 1 bytes (nothing when the file has reached HIGH); then RND(10) < bias
//   create to create a file, else deletes a used file. A bias of -1 skips its half without a
//   draw. Before each transaction, no file left means "out of files": the run stops.
// - Teardown deletes the files in slot order.
//
// Not thread-safe.
#ifndef STORMARK_AGENT_WORKLOADS_POSTMARK_POSTMARK_MODEL_H_
#define STORMARK_AGENT_WORKLOADS_POSTMARK_POSTMARK_MODEL_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "common/spec_check.h"
#include "common/workloads/postmark/postmark_spec.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

// The parameters a postmark phase runs with, defaults filled in.
struct PostmarkParams {
  uint32_t number = common::kPostmarkNumber;
  uint64_t min_size = common::kPostmarkMinSize;
  uint64_t max_size = common::kPostmarkMaxSize;
  uint32_t transactions = common::kPostmarkTransactions;
  uint32_t subdirectories = 0;  // 0 or 1: none.
  uint32_t read_block_size = common::kPostmarkBlockSize;
  uint32_t write_block_size = common::kPostmarkBlockSize;
  bool unbuffered = false;
  int bias_read = common::kPostmarkBias;    // -1 disables reads and appends.
  int bias_create = common::kPostmarkBias;  // -1 disables creates and deletes.
  uint32_t seed = common::kPostmarkSeed;

  bool uses_subdirectories() const { return subdirectories > 1; }
};

// A spec's parameters with PostMark's defaults for the fields left at 0 or unset. The spec
// must have passed CheckPostmarkSpec.
PostmarkParams ResolvePostmark(const stormark::v1::PostmarkSpec& spec);

// PostMark's random numbers: the same sequence as PostMark 1.5's genrand() after
// sgenrand(seed).
class PostmarkRandom {
 public:
  explicit PostmarkRandom(uint32_t seed);
  // PostMark's RND(n): genrand() % n, and 0 without a draw when n is 0.
  uint64_t Below(uint64_t n);

 private:
  std::mt19937 engine_;
};

// One file operation the model chose.
struct PostmarkOp {
  enum class Kind { kNone, kCreate, kRead, kAppend, kDelete };
  Kind kind = Kind::kNone;
  // The file: its slot in the table, its number (its name) and its directory (0 without
  // subdirectories).
  uint32_t slot = 0;
  uint64_t file = 0;
  uint32_t dir = 0;
  // Bytes the operation moves: a new file's size, a read file's size, the bytes appended;
  // 0 for a delete.
  uint64_t bytes = 0;
};

// What PostMark counts (its globals files_created, ..., bytes_written), split as its report
// splits them.
struct PostmarkCounts {
  uint64_t created_alone = 0;  // the pool, before the transactions
  uint64_t created_mixed = 0;
  uint64_t read = 0;
  uint64_t appended = 0;
  uint64_t deleted_mixed = 0;
  uint64_t deleted_alone = 0;  // teardown, after the transactions
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;  // creations and appends
  uint64_t transactions = 0;   // transactions run
  bool out_of_files = false;   // the run stopped early, as PostMark's does
};

class PostmarkModel {
 public:
  // Seeds the generator and draws the text files are written from, as PostMark's run does
  // before its clock starts. Takes O(max size) time and memory, O(number) memory.
  explicit PostmarkModel(const PostmarkParams& params);

  // The text written to files: max size bytes; every write starts at its first byte.
  const std::string& text() const { return text_; }

  // The next file of the initial pool (call `number` times): a kCreate.
  PostmarkOp CreateForPool();

  // One transaction: the read-or-append half into `first`, the create-or-delete half into
  // `second`; either is kNone when disabled or when there is nothing to do (table full, file
  // at the high bound). Returns false, choosing nothing, when no file is left: PostMark's
  // "out of files", which ends the transactions.
  bool Transaction(PostmarkOp* first, PostmarkOp* second);

  // The next file the teardown deletes, in slot order: a kDelete, or kNone when all are gone.
  PostmarkOp NextTeardownDelete();

  const PostmarkCounts& counts() const { return counts_; }
  // Files that exist now, and their total size.
  uint64_t live_files() const { return live_files_; }
  uint64_t live_bytes() const { return live_bytes_; }

 private:
  struct Slot {
    uint64_t file = 0;
    uint32_t size = 0;  // 0: free (every file has at least 1 byte)
    uint32_t dir = 0;
  };

  // PostMark's create_file(): kNone when the table is full.
  PostmarkOp Create();
  // PostMark's find_free_file(); -1 when full.
  int64_t FindFreeSlot();
  // PostMark's find_used_file(); requires live_files_ > 0.
  uint32_t FindUsedSlot();
  PostmarkOp Delete(uint32_t slot);

  const PostmarkParams params_;
  PostmarkRandom random_;
  std::string text_;
  std::vector<Slot> slots_;
  uint64_t next_slot_ = 0;      // PostMark's file_allocated
  uint64_t files_created_ = 0;  // PostMark's files_created: the next file's name - 1
  uint64_t teardown_slot_ = 0;
  uint64_t live_files_ = 0;
  uint64_t live_bytes_ = 0;
  PostmarkCounts counts_;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_POSTMARK_POSTMARK_MODEL_H_
