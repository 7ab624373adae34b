// SPDX-License-Identifier: MIT
// Whether this test program runs under an emulator (qemu-user), where claims about the speed
// of a native loop cannot hold and are left out, with the reason printed.
#pragma once

#include <string>

namespace irqloop::test
{

/**
 * @brief Why this process's timing is not a native machine's, or "" when it is.
 *
 * Non-empty when IRQLOOP_TEST_EMULATED names an emulator (tests/packaging/test-arm64.sh sets
 * it), or, with IRQLOOP_TEST_EMULATED unset, in a cross build with an emulator
 * (IRQLOOP_TEST_EMULATOR). IRQLOOP_TEST_EMULATED=0 says "native" (a cross-built test program
 * copied to a real board). Only claims about speed use it (a floor within 5 us, a disturbed
 * share): a test leaves those out with SKIP and this reason, never silently; what is true
 * on any machine (nothing measured below the injected delay, no long answer dropped) is
 * checked everywhere.
 */
const std::string& emulated();

} // namespace irqloop::test
