// SPDX-License-Identifier: MIT
// Golden files: where they are, and their regeneration with IRQLOOP_UPDATE_GOLDEN=1.
#pragma once

#include <string>

namespace irqloop::test
{

/** @brief tests/golden/@p area/@p name in the source tree. */
std::string golden_path(const std::string& area, const std::string& name);

/**
 * @brief With IRQLOOP_UPDATE_GOLDEN=1 in the environment: (re)write @p path with @p actual,
 * warn (review it with git diff) and return true. Otherwise false, and nothing is written.
 */
bool rewrite_golden(const std::string& path, const std::string& actual);

} // namespace irqloop::test
