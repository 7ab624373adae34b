// SPDX-License-Identifier: MIT
// What an irqloop::error thrown by a piece of code says, for the tests of refusals.
#pragma once

#include "error.hpp"

#include <functional>
#include <string>

namespace irqloop::test
{

/**
 * @brief Run @p f: 0 when it returns, else the exit status of the irqloop::error it throws,
 * whose message goes to @p message.
 */
inline int status_of(const std::function<void()>& f, std::string& message)
{
    try {
        f();
    } catch (const irqloop::error& e) {
        message = e.message();
        return e.status();
    }
    return 0;
}

} // namespace irqloop::test
