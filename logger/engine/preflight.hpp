// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace irqloop::logger
{

/**
 * @brief How fit one aspect of the logger machine is to measure.
 *
 * ok: nothing to do. warn: figures may carry this host's noise; the hint says how to remove it.
 * fail: figures would be wrong (the sampler would be stopped or share its core with a busy
 * thread); `run --strict-rt` refuses to start. skip: the check does not apply (no --cpu given).
 */
enum class check_level { ok, warn, fail, skip };

/** @brief "OK", "WARN", "FAIL" or "SKIP". */
const char* level_name(check_level l) noexcept;

/** @brief One check's verdict. */
struct preflight_check final {
    std::string key; ///< stable name, e.g. "cpu.isolated"; stored as run metadata "preflight.<key>"
    check_level level = check_level::ok;
    std::string value; ///< what was found, one line
    std::string hint;  ///< what to do about a warn or fail, one line; empty for ok and skip
};

/** @brief Where and what to check. */
struct preflight_options final {
    /**
     * Every file is read below this directory: "/" for the live system, or a fake tree holding
     * sys/..., proc/... and dev/cpu/N/msr for tests (as rteval reads a saved system report).
     */
    std::string root = "/";
    int cpu = -1; ///< the sampler CPU; -1 = not pinned (per-CPU checks cover all online CPUs)
    /**
     * How long to watch /proc/stat for a busy SMT sibling, in ms. The live system needs a
     * window; a fake tree's file does not change, so it reads as idle at any length.
     */
    int busy_window_ms = 200;
};

/**
 * @brief Run every check, in a fixed order, reading only below @p o.root:
 *
 * - cpu.isolated, cpu.nohz_full: the sampler CPU in /sys/devices/system/cpu/{isolated,nohz_full};
 * - cpu.governor: cpufreq scaling_governor of the sampler CPU(s);
 * - cpu.smt: an online SMT sibling of the sampler CPU (fail when it is busy over the window);
 * - cpu.idle: cpuidle states deeper than C1 (index 2 and up) enabled;
 * - irq.balance: an irqbalance process in /proc;
 * - irq.affinity: IRQs whose smp_affinity_list includes the sampler CPU;
 * - sched.rt_throttling: /proc/sys/kernel/sched_rt_runtime_us (not -1 is a fail: the spinning
 *   SCHED_FIFO sampler is stopped for the rest of every period);
 * - clock.source, clock.tsc: the kernel clocksource and constant_tsc/nonstop_tsc in /proc/cpuinfo;
 * - kernel.realtime: /sys/kernel/realtime;
 * - msr.smi: MSR 0x34 (the SMI counter) read from dev/cpu/N/msr;
 * - mem.memlock: "Max locked memory" of /proc/self/limits, or CAP_IPC_LOCK in /proc/self/status;
 * - mem.swap: active swap in /proc/swaps.
 *
 * Never throws for what it finds: a file that cannot be read is part of the verdict.
 * @throws irqloop::error when @p o.root is not a directory or @p o.cpu is not an online CPU.
 */
std::vector<preflight_check> run_preflight(const preflight_options& o);

/** @brief The worst level among @p checks (skip counts as ok). */
check_level worst_level(const std::vector<preflight_check>& checks) noexcept;

/**
 * @brief The doctor's text: one line per check (`LEVEL key  value`), a `hint:` line under each
 * warn and fail, then a count line. Deterministic for a given tree and CPU.
 */
std::string format_preflight(const std::vector<preflight_check>& checks);

/** @brief "preflight.<key>" -> "LEVEL value" pairs for the run's metadata. */
std::vector<std::pair<std::string, std::string>>
preflight_metadata(const std::vector<preflight_check>& checks);

} // namespace irqloop::logger
