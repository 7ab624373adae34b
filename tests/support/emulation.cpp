// SPDX-License-Identifier: MIT
#include "emulation.hpp"

#include <cstdlib>

namespace irqloop::test
{

const std::string& emulated()
{
    static const std::string why = []() -> std::string {
        const char* env = std::getenv("IRQLOOP_TEST_EMULATED");
        if (env && *env)
            return std::string(env) == "0" ? "" : "emulated: " + std::string(env);
#ifdef IRQLOOP_TEST_EMULATOR
        return "a cross build run through " IRQLOOP_TEST_EMULATOR
               " (IRQLOOP_TEST_EMULATED=0 on a real board)";
#else
        return "";
#endif
    }();
    return why;
}

} // namespace irqloop::test
