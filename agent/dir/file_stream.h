// A C stdio stream over any File (fopencookie), for Files without a descriptor of their own:
// the MemoryDir's, and the FaultDir's, whose faults stdio must meet too.
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
