// SPDX-License-Identifier: MIT
#include "golden.hpp"

#include <catch2/catch_test_macros.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace irqloop::test
{

std::string golden_path(const std::string& area, const std::string& name)
{
    return std::string(IRQLOOP_SOURCE_DIR) + "/tests/golden/" + area + "/" + name;
}

bool rewrite_golden(const std::string& path, const std::string& actual)
{
    const char* update = std::getenv("IRQLOOP_UPDATE_GOLDEN");
    if (!update || std::string(update) != "1")
        return false;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << actual;
    WARN("rewrote golden file " << path << ": review it with git diff");
    return true;
}

} // namespace irqloop::test
