#include "scheduler/cache_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <system_error>

namespace tandem::detail {
namespace {

// The last line of every cache file: a reader that does not find it, with the
// length of what precedes it, has a file cut short (a full disk, a crash).
constexpr const char* kEndMarker = "end of tandem cache file, bytes ";

std::string end_line(size_t bytes) { return kEndMarker + std::to_string(bytes) + "\n"; }

// A temporary name no other writer uses: two processes (or threads) saving
// the same file at once each rename their own complete copy.
std::string temporary_name(const std::string& path) {
    static std::atomic<unsigned> counter{0};
    return path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
}

}  // namespace

bool write_cache_file(const std::string& path, const std::string& text, std::string& error) {
    namespace fs = std::filesystem;
    try {
        std::error_code ec;
        const fs::path target(path);
        if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
        if (ec) {
            error = "cannot create " + target.parent_path().string() + ": " + ec.message();
            return false;
        }
        const std::string temporary = temporary_name(path);
        {
            std::ofstream out(temporary, std::ios::trunc);
            out << text << end_line(text.size());
            if (!out.flush()) {
                error = "cannot write " + temporary;
                out.close();
                fs::remove(temporary, ec);
                return false;
            }
        }
        fs::rename(temporary, target, ec);
        if (ec) {
            error = "cannot rename " + temporary + " to " + path + ": " + ec.message();
            fs::remove(temporary, ec);
            return false;
        }
        return true;
    } catch (const std::exception& e) {
        error = "cannot write " + path + ": " + e.what();
        return false;
    }
}

bool read_cache_file(const std::string& path, size_t max_bytes, std::string& text,
                     std::string& why) {
    // Opened without blocking and read only if it is a regular file: a FIFO
    // or a device at the cache's path must not hang the call (or every call
    // waiting behind its lock).
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        why = "no file " + path;
        return false;
    }
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat status {};
    if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
        why = path + " is not a regular file";
        return false;
    }
    const size_t limit = max_bytes + end_line(max_bytes).size();
    if (static_cast<size_t>(status.st_size) > limit) {
        why = path + " is too large to be a tandem cache file";
        return false;
    }
    try {
        text.assign(static_cast<size_t>(status.st_size), '\0');
        size_t got = 0;
        while (got < text.size()) {
            const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            got += static_cast<size_t>(n);
        }
        text.resize(got);
    } catch (const std::exception& e) {  // e.g. bad_alloc
        why = "cannot read " + path + ": " + e.what();
        return false;
    }
    // The end line, and the length it gives, must be there.
    const size_t last = text.empty() ? std::string::npos : text.rfind('\n', text.size() - 2);
    const size_t line_start = last == std::string::npos ? 0 : last + 1;
    const size_t content = line_start;
    if (text.empty() || text.back() != '\n' ||
        text.compare(line_start, text.size() - line_start, end_line(content)) != 0) {
        why = path + " is cut short or was not written by tandem";
        return false;
    }
    text.resize(content);
    return true;
}

std::string file_name_safe(std::string name) {
    for (char& c : name)
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) c = '_';
    return name;
}

namespace {

// Whether `dir` exists or can be made, and this process may write into it.
bool usable_cache_dir(const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    return !ec && access(dir.c_str(), W_OK | X_OK) == 0;
}

// A directory of this user's own under $TMPDIR (or /tmp): made with mode 0700,
// and used only when it is ours and nobody else may write into it.
std::string private_temp_cache_dir() {
    const char* tmp = std::getenv("TMPDIR");
    const std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/tandem-cache-" +
                            std::to_string(static_cast<unsigned long>(getuid()));
    (void)mkdir(dir.c_str(), 0700);
    struct stat st {};
    if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
        (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        return "";
    return dir;
}

}  // namespace

std::string resolve_cache_dir(const std::string& configured) {
    if (!configured.empty()) return configured;
    std::string dir;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        dir = std::string(xdg) + "/tandem";
    else if (const char* home = std::getenv("HOME"); home && *home)
        dir = std::string(home) + "/.cache/tandem";
    // A cache that cannot be written (a read-only home in a container) would
    // make every process calibrate again: a private directory under $TMPDIR
    // keeps the model for the machine's later processes instead. The answer
    // is remembered per directory (a call at small n must not pay a mkdir).
    static std::mutex mutex;
    static std::map<std::string, std::string> resolved;
    const std::lock_guard<std::mutex> lock(mutex);
    const auto known = resolved.find(dir);
    if (known != resolved.end()) return known->second;
    const std::string answer = !dir.empty() && usable_cache_dir(dir) ? dir : private_temp_cache_dir();
    resolved.emplace(dir, answer);
    return answer;  // "": nowhere to cache, the shipped tables are used
}

}  // namespace tandem::detail
