// bonnie++'s file tests, in the order bonnie++ runs them:
//
//   seq_create  creates `files` files, in the order of their names, each of a size drawn
//               uniformly from [file_min, file_max] and written in file_chunk pieces
//   seq_stat    lists each directory and stats every entry in listing order, reading the
//               whole file when it holds data (bonnie++'s "Read" column)
//   seq_del     lists each directory and removes every entry, then the directories
//   ran_create  creates a new set of files whose names start with random characters, so the
//               creation order is random with respect to name order
//   ran_stat    stats (and reads) the files in a shuffled order
//   ran_del     removes the files in another shuffled order, then the directories
//
// Names are bonnie++'s: ten hex digits of the file's index, plus 0 to 12 random characters
// after them (sequential) or before them (random). With file_dirs > 1 the files are spread
// over subdirectories 00000, 00001, ... of a test directory, in index order. Directories are
// made outside the timed region and removed inside it; the create and delete tests end with
// syncfs of the target's filesystem (bonnie++ calls sync()). With fsync_every_write every new
// file, and its directory after each create and delete, is fsync'd.
//
// Memory is O(files) for the names. Each test checks `cancelled` between files. Not
// thread-safe.
#ifndef STORMARK_AGENT_WORKLOADS_BONNIE_BONNIE_FILES_H_
#define STORMARK_AGENT_WORKLOADS_BONNIE_BONNIE_FILES_H_

#include <string>
#include <vector>

#include "agent/dir/dir.h"
#include "agent/workloads/bonnie/bonnie_common.h"
#include "agent/workloads/workload.h"
#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

// The file tests' directory in the phase directory.
inline constexpr char kBonnieFilesDir[] = "files";

class BonnieFileTests {
 public:
  // `target`, `ctx` and `random` must outlive this object; `recorder` belongs to the calling
  // thread.
  BonnieFileTests(const BonnieParams& params, Dir* target, RunContext& ctx,
                  common::Recorder* recorder, BonnieRandom* random);

  // seq_create (random_names false) or ran_create.
  common::StatusOr<stormark::v1::Measurement> Create(bool random_names);
  common::StatusOr<stormark::v1::Measurement> StatSequential();
  common::StatusOr<stormark::v1::Measurement> DeleteSequential();
  common::StatusOr<stormark::v1::Measurement> StatRandom();
  common::StatusOr<stormark::v1::Measurement> DeleteRandom();

 private:
  void MakeNames(bool random_names);
  void Shuffle();
  // The directory holding directory number `dir`, as a name in the Dir.
  std::string DirName(uint32_t dir) const;
  // Stats `name` (a name in the Dir) and reads it whole if it has data; returns the bytes
  // read.
  common::StatusOr<uint64_t> StatAndRead(const std::string& name);
  // Removes the per-directory subdirectories and the test directory.
  common::Status RemoveDirectories();
  common::Status SyncFilesystem(const char* test);
  common::Status CheckCancelled(const char* test) const;

  const BonnieParams& params_;
  Dir* const target_;
  RunContext& ctx_;
  common::Recorder* const recorder_;
  BonnieRandom* const random_;
  AlignedBuffer buf_;
  // File names below the phase directory ("Bonnie.files/00003/0000000001ab"), and each one's
  // directory number, in creation order (shuffled by the random tests).
  std::vector<std::string> names_;
  std::vector<uint32_t> dir_of_;
  // One per directory, held open for fsync, with fsync_every_write only.
  std::vector<std::unique_ptr<File>> dir_fds_;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_BONNIE_BONNIE_FILES_H_
