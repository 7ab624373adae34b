// SPDX-License-Identifier: MIT
// The one scratch-directory helper of every test area.
#pragma once

#include <string>

namespace irqloop::test
{

/**
 * @brief A fresh, empty directory under $TMPDIR (or /tmp when unset), removed with everything
 * in it on destruction. Throws std::runtime_error when it cannot be created.
 */
class temp_dir final
{
public:
    temp_dir();
    ~temp_dir();
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;

    const std::string& path() const noexcept { return path_; }
    /** @brief The path of @p name inside the directory (not created). */
    std::string file(const std::string& name) const { return path_ + "/" + name; }
    /** @brief The same as file(): `dir / "x.db"`. */
    std::string operator/(const std::string& name) const { return file(name); }

private:
    std::string path_;
};

/** @brief The whole file at @p path as bytes; empty when it cannot be read. */
std::string read_bytes(const std::string& path);

} // namespace irqloop::test
