// Every file saturate writes in place (the logs it streams a run's output to, the logs it appends to, an output the
// user named) is opened here; files written whole go through util/atomic_file.h. Those folders may be shared (/tmp,
// node scratch, a project folder others can write): a link planted at a name saturate writes would make it truncate
// or append to the link's target, a file of another user's would be written into. So here no link is ever
// followed (O_NOFOLLOW), a file that is there is used only when it is a regular file of this user's, and a new one
// is created with O_EXCL (a name planted between the look and the creation makes the creation fail, not follow).
// Descriptors are close-on-exec, so a run never inherits them.
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <string>

#include "util/result.h"
#include "util/unique_fd.h"

namespace sat {

enum class WriteMode {
  kNew,      // create it; anything already at the path is an error
  kReplace,  // a regular file of ours there is emptied; else it is created
  kAppend,   // a regular file of ours there is appended to; else it is created
};

// Opens `path` for writing as `mode` says, with permission bits `perms` (before the umask) when it is created.
// Errors name the path and the reason ("... is a symbolic link, which saturate does not follow"). `*err`, when
// given, gets the errno of a failed system call (0 for a refusal), so callers can tell running out of descriptors.
Result<UniqueFd> OpenForWriting(const std::string& path, WriteMode mode, mode_t perms = 0644, int* err = nullptr);

// The same as a stdio stream (for code that writes with fprintf); the caller fcloses it.
Result<std::FILE*> OpenStreamForWriting(const std::string& path, WriteMode mode, mode_t perms = 0644);

}  // namespace sat
