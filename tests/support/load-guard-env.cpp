// SPDX-License-Identifier: MIT
// The load tests (areas soak, actions, run) start loads from inside irqloop-tests, whose own
// directory holds no irqloop-load-guard: find_load_guard() is pointed at the one built next
// to irqloop, through the variable an installed irqloop never needs. The irqloop processes
// the tests start inherit it; a value already set is kept.
#include <cstdlib>

namespace
{

const int guard_path_set = ::setenv("IRQLOOP_LOAD_GUARD", IRQLOOP_LOAD_GUARD_BIN, 0);

} // namespace
