#include "src/cache_file.hpp"

#include <exception>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace tandem::detail {

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
        const std::string temporary = path + ".tmp";
        {
            std::ofstream out(temporary, std::ios::trunc);
            out << text;
            if (!out.flush()) {
                error = "cannot write " + temporary;
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
    try {
        std::ifstream in(path, std::ios::binary);
        if (!in) {
            why = "no file " + path;
            return false;
        }
        text.assign(max_bytes + 1, '\0');
        in.read(text.data(), static_cast<std::streamsize>(max_bytes + 1));
        text.resize(static_cast<size_t>(in.gcount()));
        if (text.size() > max_bytes) {
            why = path + " is too large to be a tandem cache file";
            return false;
        }
        return true;
    } catch (const std::exception& e) {  // e.g. bad_alloc
        why = "cannot read " + path + ": " + e.what();
        return false;
    }
}

std::string file_name_safe(std::string name) {
    for (char& c : name)
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) c = '_';
    return name;
}

}  // namespace tandem::detail
