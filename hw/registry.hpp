// SPDX-License-Identifier: MIT
#pragma once

#include "lines.hpp"
#include "spec.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace irqloop::hw {

/** @brief One entry of the backend list. */
struct backend_entry final
{
    const char* name;        ///< spec name, e.g. "gpiod"
    const char* summary;     ///< one line for --help
    const char* example;     ///< an example spec
    /** Opens a pair; null when the backend was compiled out (see @ref missing). */
    std::unique_ptr<lines> (*open)(spec& s, role r);
    const char* missing;     ///< why it was compiled out, with the package to install
};

/** @brief Every backend, compiled in or not, in alphabetical order. */
const std::vector<backend_entry>& backends();

/**
 * @brief Open a line pair from a spec string such as "sim:model=normal,mean=8us,sd=1us".
 * @throws irqloop::error for an unknown or compiled-out backend, an unknown key, a bad value
 *         or a hardware failure (missing device, no permission, line busy).
 */
std::unique_ptr<lines> open_lines(std::string_view spec_text, role r);

/** @brief The --help paragraph listing the backends. */
std::string backends_help();

} // namespace irqloop::hw
