// Removing a directory's contents that someone else wrote (a command's output), without
// ever leaving that directory: symbolic links are removed, not followed, and a mount point
// found inside is left alone, with whatever is mounted on it.
#ifndef STORMARK_AGENT_DIR_REMOVE_TREE_H_
#define STORMARK_AGENT_DIR_REMOVE_TREE_H_

namespace stormark::agent {

// Removes everything inside the directory `dir_fd` refers to (not the directory itself).
// Returns the number of entries removed. Entries that cannot be removed are left; the
// directory then stays non-empty. Does not close `dir_fd`.
int RemoveDirectoryContents(int dir_fd);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DIR_REMOVE_TREE_H_
