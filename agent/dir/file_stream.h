// A C stdio stream over any File (fopencookie): the MemoryDir's and the FaultDir's, which have
// no descriptor of their own (and whose faults stdio must meet too), and the OsFile's, whose
// stream then makes no system call of its own (os_file.cc).
#ifndef STORMARK_AGENT_DIR_FILE_STREAM_H_
#define STORMARK_AGENT_DIR_FILE_STREAM_H_

#include <cstdio>

#include "agent/dir/dir.h"

namespace stormark::agent {

// A stream whose reads, writes, seeks and close call `file`'s; fclose closes `file`. `file`
// must outlive the stream. nullptr with errno set on failure.
std::FILE* OpenFileStream(File* file, const char* mode);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DIR_FILE_STREAM_H_
