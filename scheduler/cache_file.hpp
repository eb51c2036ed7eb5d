// Small text files in the per-machine cache directory (the SGEMM tuning table,
// the performance model): written through a temporary file of the writer's own
// and a rename, so a reader never sees half a file, and ended by a line with
// the content's length, so a file cut short is rejected; read only when a
// regular file, without blocking, with a size limit. Neither throws: a cache
// must never break a run.
#ifndef TANDEM_SCHEDULER_CACHE_FILE_HPP
#define TANDEM_SCHEDULER_CACHE_FILE_HPP

#include <cstddef>
#include <string>

namespace tandem::detail {

// Writes `text` to `path`, creating its directory. Returns false and sets `error` when it cannot.
bool write_cache_file(const std::string& path, const std::string& text, std::string& error);

// Reads `path` into `text` when it exists and holds at most max_bytes.
// Returns false and sets `why` otherwise.
bool read_cache_file(const std::string& path, size_t max_bytes, std::string& text,
                     std::string& why);

// Options::cache_dir, or $XDG_CACHE_HOME/tandem, or $HOME/.cache/tandem; when
// that cannot be written, $TMPDIR/tandem-cache-<uid> (made private to the
// user); "" when there is nowhere to cache (the shipped tables are used then).
std::string resolve_cache_dir(const std::string& configured);

// "[^A-Za-z0-9]" -> '_': a name that is safe in a file name.
std::string file_name_safe(std::string name);

}  // namespace tandem::detail

#endif  // TANDEM_SCHEDULER_CACHE_FILE_HPP
