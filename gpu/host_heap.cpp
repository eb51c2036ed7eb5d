#include "gpu/host_heap.hpp"

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace tandem::gpu {
namespace {

// The heap's start (start_brk, field 47 of /proc/self/stat), 0 when unknown.
// It is fixed when the program starts, so it is read once.
uintptr_t heap_start() {
    static const uintptr_t start = [] {
        std::ifstream in("/proc/self/stat");
        std::string line;
        if (!std::getline(in, line)) return uintptr_t{0};
        // Field 2, the command's name, is in parentheses and may hold spaces
        // and ')': the fields are counted from the last ')' on.
        const size_t name_end = line.rfind(')');
        if (name_end == std::string::npos) return uintptr_t{0};
        std::istringstream fields(line.substr(name_end + 1));
        std::string field;
        for (int number = 3; number <= 47; ++number)
            if (!(fields >> field)) return uintptr_t{0};
        try {
            return static_cast<uintptr_t>(std::stoull(field));
        } catch (const std::exception&) {  // not a number: no fast answer, CUDA is asked
            return uintptr_t{0};
        }
    }();
    return start;
}

}  // namespace

bool in_brk_heap(const void* pointer) {
    const uintptr_t start = heap_start();
    if (start == 0 || pointer == nullptr) return false;
    // sbrk(0): the current break (glibc answers from its own copy); (void*)-1 on failure.
    const void* end = sbrk(0);
    if (end == reinterpret_cast<void*>(-1)) return false;
    const uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
    return address >= start && address < reinterpret_cast<uintptr_t>(end);
}

}  // namespace tandem::gpu
