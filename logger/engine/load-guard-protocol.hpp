// SPDX-License-Identifier: MIT
// What irqloop (load_process) and irqloop-load-guard say to each other. Shared so that both
// ends read the same words; the guard links nothing else of irqloop.
#pragma once

namespace irqloop::logger::guard_protocol
{

/// The guard's end of the control socket (an AF_UNIX stream socketpair) in the guard.
constexpr int control_fd = 3;

/// The guard's file name: next to irqloop (build tree) or in ../libexec/irqloop (installed).
constexpr const char* program_name = "irqloop-load-guard";

/// Environment variable naming the guard's path (ignored by a program with file
/// capabilities: it is read with secure_getenv()).
constexpr const char* path_variable = "IRQLOOP_LOAD_GUARD";

// The guard's lines, one per event, each ending in '\n':
//   "group PGID"   the load's shell started as PGID, leader of its own process group
//   "error ERRNO WHAT"  the shell could not be started; the guard then exits 1
//   "exit STATUS"  the shell ended; STATUS is its raw waitpid() status
//   "killed"       the grace period ran out: SIGKILL went to the group and every descendant
// irqloop's end says nothing: end of file on the socket (irqloop closed its end, or died:
// SIGKILL, a crash) is the one order, "end the load now".
constexpr const char* group_word = "group";
constexpr const char* error_word = "error";
constexpr const char* exit_word = "exit";
constexpr const char* killed_word = "killed";

} // namespace irqloop::logger::guard_protocol
