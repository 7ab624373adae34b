// SPDX-License-Identifier: MIT
#pragma once
// run --target-info CMD: the target's set-up, asked once before the first stimulus and stored
// with the run (tables target_info and target_facts, db/migrations/0009-target-info.sql).

#include "rows.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace irqloop::logger
{

/** @brief What `run --target-info` runs, and its bounds. */
struct target_info_options final {
    std::string command;                          ///< through /bin/sh -c; "" = none
    std::int64_t timeout_ns = default_timeout_ns; ///< --target-info-timeout
    std::size_t cap_bytes = default_cap_bytes;    ///< per stream; the rest is counted, not kept
    static constexpr std::int64_t default_timeout_ns = 30'000'000'000;
    static constexpr std::size_t default_cap_bytes = 1u << 20; ///< 1 MiB
};

/**
 * @brief Run @p o.command once through /bin/sh -c, in a process group of its own, stdin from
 * /dev/null, at SCHED_OTHER; keep up to cap_bytes of its stdout and of its stderr (counting
 * the rest), and the facts parse_target_facts() finds in its stdout.
 *
 * Never throws for the command's own failure: a non-zero exit is `exited` with its code, a
 * signal `killed`, a command still running (or holding its output open) at timeout_ns is killed
 * with its whole process group and is `timed_out`, one that cannot be started `not_started`
 * with the reason; the run goes on in every case. When the shell exits and something it left in
 * the background keeps the output open, that is read for at most 1 s more, then the group is
 * killed. @p stop set (SIGINT) kills the group and ends the wait (`killed`, error says so).
 */
db::target_info_row run_target_info(const target_info_options& o, const std::atomic<bool>& stop);

/**
 * @brief The facts recognized in @p text, one per key, the first occurrence kept, in the
 * order found (docs/commands/run.md, "The target's set-up"):
 * - `xl info`'s `key : value` lines (source "xl info"), and from them sched (xen_scheduler);
 * - the words of its xen_commandline, `name=value` or a bare `name` (= "true"), e.g. vwfi,
 *   sched, sched-gran, dom0_vcpus_pin (source "xen cmdline"); when the text has a
 *   xen_commandline without vwfi, vwfi=trap, Xen's default (source "xen default");
 * - `xl sched-credit`, `sched-credit2`, `sched-rtds`: `Cpupool P: k=v ...` as pool.P.k, the
 *   domain table's columns as dom.NAME.column (dom.NAME.vcpuN.column with a VCPU column)
 *   (source "xl sched");
 * - module parameters as `grep -H . /sys/module/M/parameters/P` or `head` print them, e.g.
 *   KVM's halt_poll_ns (key P, source "M");
 * - `uname -r` (a lone release line) and `uname -a` (a line "Linux host release ..."): kernel
 *   (source "uname");
 * - any other `key=value` line (several `k=v` words split), or `key: value` line (source
 *   "line").
 */
std::vector<db::target_fact> parse_target_facts(std::string_view text);

/** @brief How @p t ended, one phrase: "exit 0", "exit 3", "killed by SIGKILL", "timed out
 *  after 30 s (killed)", "not started: why". */
std::string target_info_outcome(const db::target_info_row& t);

/** @brief One line for the run's summary and report: the outcome, the duration, the bytes of
 *  each stream (and where they were cut), and the number of keys. */
std::string target_info_line(const db::target_info_row& t);

} // namespace irqloop::logger
