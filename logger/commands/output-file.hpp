// SPDX-License-Identifier: MIT
#pragma once

#include <fstream>
#include <string>

namespace irqloop::logger
{

/**
 * @brief A file a reading command writes (export -o, plot -o): every write checked, and a
 * failed one leaves no file behind (no 0-byte or half-written output after a full disk).
 *
 * The path must be a regular file or a new one: a directory is refused with exit status 2
 * (with a hint for files), and so is a device such as /dev/full behind a link (its writes
 * vanish or fail). commit() flushes and closes, checking both; without a commit() (an
 * exception on the way) the destructor removes what was written.
 */
class output_file final
{
public:
    /** @throws irqloop::error: 2 for a directory or a non-regular file, 1 for the rest. */
    output_file(std::string path, std::string command);
    ~output_file();
    output_file(const output_file&) = delete;
    output_file& operator=(const output_file&) = delete;

    std::ostream& stream() noexcept { return file_; }
    /** @brief Write @p bytes, checked. */
    void write(const std::string& bytes);
    /** @brief Flush and close, checked; the file is kept. @throws irqloop::error (1). */
    void commit();

private:
    [[noreturn]] void fail(int errnum);
    std::string path_, command_;
    std::ofstream file_;
    bool done_ = false;
};

} // namespace irqloop::logger
