// The file operations of a postmark phase, done the way PostMark 1.5 does them:
//
//   create  open a new file, write its size in write-block pieces, close
//   read    open, read the whole file in read-block pieces, close
//   append  open for appending, write the bytes in write-block pieces, close
//   delete  unlink
//
// Every write starts at the first byte of the model's text, as PostMark's do.
//
// Buffered (PostMark's default, `set buffering true`) goes through C stdio: fopen's modes
// "w", "r" and "a" (here a stream over the file the Dir opened with the same flags),
// fwrite/fread of one block at a time, fclose. The library gathers the blocks into its own
// buffer of st_blksize bytes (usually 4 KiB), so the system calls are that size whatever the
// block size. Unbuffered (`set buffering false`) makes one read() or write() per block, with
// PostMark's open flags (O_RDWR|O_CREAT, O_RDONLY, O_RDWR|O_APPEND). Neither is O_DIRECT and
// neither syncs: the data goes to the page cache, as in PostMark.
//
// Unlike PostMark, which prints an error and carries on, any failed call (or a file shorter
// than the model says) fails the operation. Not thread-safe.
#ifndef STORMARK_AGENT_WORKLOADS_POSTMARK_POSTMARK_FILES_H_
#define STORMARK_AGENT_WORKLOADS_POSTMARK_POSTMARK_FILES_H_

#include <string>
#include <vector>

#include "agent/dir/dir.h"
#include "agent/workloads/postmark/postmark_model.h"
#include "common/status.h"

namespace stormark::agent {

class PostmarkFiles {
 public:
  // `target` and `text` must outlive this object; `text` is at least max size bytes.
  PostmarkFiles(const PostmarkParams& params, Dir* target, const std::string& text);

  // PostMark's name for subdirectory `dir`: "s3".
  static std::string DirName(uint32_t dir);
  // The name of the op's file in the phase directory: "17", or "s3/17" with subdirectories.
  std::string NameOf(const PostmarkOp& op) const;

  // Performs `op` (nothing for kNone).
  common::Status Do(const PostmarkOp& op);

 private:
  common::Status Create(const std::string& name, uint64_t size);
  common::Status Read(const std::string& name, uint64_t size);
  common::Status Append(const std::string& name, uint64_t bytes);

  const PostmarkParams& params_;
  Dir* const target_;
  const std::string& text_;
  std::vector<char> read_buffer_;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_POSTMARK_POSTMARK_FILES_H_
