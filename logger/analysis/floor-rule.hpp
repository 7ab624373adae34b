// SPDX-License-Identifier: MIT
// The floor-correction rule: which floor run corrects a run, and what it may subtract. One
// module for report, compare, run (ftdi's offset=auto) and docs/querying.md; it reads the runs
// through db/read.hpp and each run's backend identity once (hw/identity.hpp), so the read
// layer knows nothing of backends.
#pragma once

#include "identity.hpp"
#include "read.hpp"

#include <cstdint>
#include <string>

namespace irqloop::analysis
{

/** @brief The typed identity of a stored run: its spec and its backend metadata, read once. */
hw::backend_identity identity_of(const db::run_record& r);

/**
 * @brief The floor run that corrects @p run: a run of kind floor with samples, in the same
 *        file, on the same backend kind, preferring the latest one started before @p run, else
 *        the earliest after it. Null when none.
 */
const db::run_record* floor_for(const db::catalog& cat, const db::run_record& run);

/**
 * @brief The newest complete floor run with samples whose wiring (metadata `<kind>.wiring`) is
 *        @p wiring, on a backend of @p kind (ftdi): the floor a device-timed backend takes its
 *        offset from (docs/backends/ftdi.md, "Calibration"). Null when none.
 */
const db::run_record* newest_floor_for_wiring(const db::catalog& cat, hw::backend_kind kind,
                                              const std::string& wiring);

/**
 * @brief The floor run's share: what a floor-corrected figure may subtract. THE ONE RULE for
 *        report, compare and docs/querying.md (docs/commands/report.md, "Floor correction"):
 *        what the floor run proves, never more, so that a corrected figure never falls below
 *        the truth.
 *
 * Each sample's true latency lies in [latency - bracket, latency]. A floor's truth is the
 * jumper's delay: every answer through the same wiring takes at least the smallest delay the
 * floor's samples prove, while the rest of a floor sample (the drive() before the edge left,
 * the poll that saw the answer) is the logger's and varies with where the answer lands: the
 * floor's first poll always costs a whole poll period, a target's answer can land just before
 * a read. So the share is the floor's smallest proven lower bound, not its minimum:
 * - host-timed, samples stored (`calibrate --raw`): floor_proven_ns (0 when one poll saw
 *   the jumpered answer at once, as it usually does);
 * - host-timed, no samples stored: min_ns - the gap limit (a clean sample's bracket is at
 *   most the gap limit), not below 0; 0 when the floor kept disturbed samples in its
 *   statistics (--keep-disturbed) or has no brackets (a version-1 file);
 * - device-timed (the floor's identity has a device clock: `<kind>.tick_ns` and
 *   `<kind>.offset_ns` stored, e.g. ftdi): the reading is the first sample at the answer
 *   level, timed from the edge; the minimum sample's proven lower bound is 0 when the
 *   jumpered answer showed in the first sample (k = 0), else offset + (k - 1) x the tick's
 *   lower bound (`<kind>.tick_lower_ns`, else `<kind>.tick_ns`).
 */
std::int64_t floor_share_ns(const db::run_record& floor);

/** @brief The floor run was timed by its device (its identity has a device clock). */
bool floor_device_timed(const db::run_record& floor);

/**
 * @brief What the floor-corrected figures of @p run subtract with @p floor: floor_share_ns(),
 *        less what @p run already took into its own reading (`<kind>.floor_share_ns`: a
 *        device-timed run whose offset came from a floor run), never below 0 for those.
 */
std::int64_t floor_correction_ns(const db::run_record& run, const db::run_record& floor);

} // namespace irqloop::analysis
