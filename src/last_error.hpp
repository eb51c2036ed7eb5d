// The text of the last error on this thread, for the C ABI's tandem_last_error().
#ifndef TANDEM_SRC_LAST_ERROR_HPP
#define TANDEM_SRC_LAST_ERROR_HPP

#include <string>

namespace tandem::detail {

void set_last_error(const std::string& message);
const char* last_error();

}  // namespace tandem::detail

#endif
