// SPDX-License-Identifier: MIT
#include "floor-rule.hpp"

#include <algorithm>
#include <cmath>

namespace irqloop::analysis
{

hw::backend_identity identity_of(const db::run_record& r)
{
    return hw::identity_from_record(r.meta.backend, r.meta.metadata);
}

const db::run_record* floor_for(const db::catalog& cat, const db::run_record& run)
{
    const db::run_record* before = nullptr;
    const db::run_record* after = nullptr;
    for (const auto& f : cat.runs()) {
        if (f.meta.kind != db::run_kind::floor || !f.has_stats || f.db_index != run.db_index ||
            !hw::same_backend(f.meta.backend, run.meta.backend))
            continue;
        if (f.meta.start_unix_ns <= run.meta.start_unix_ns)
            before = &f; // runs are in start order: the last one wins
        else if (!after)
            after = &f;
    }
    return before ? before : after;
}

const db::run_record* newest_floor_for_wiring(const db::catalog& cat, hw::backend_kind kind,
                                              const std::string& wiring)
{
    const db::run_record* best = nullptr;
    for (const auto& f : cat.runs()) {
        if (f.meta.kind != db::run_kind::floor || !f.has_stats ||
            f.status != db::run_status::complete || hw::kind_of_spec(f.meta.backend) != kind)
            continue;
        const bool same = identity_of(f).wiring == wiring;
        if (same && (!best || f.meta.start_unix_ns >= best->meta.start_unix_ns))
            best = &f;
    }
    return best;
}

namespace
{

// Host-timed: the smallest latency the floor's clean samples prove.
std::int64_t host_timed_share_ns(const db::run_record& floor)
{
    if (!floor.bracketed)
        return 0;
    if (floor.floor_proven_ns)
        return std::max<std::int64_t>(0, *floor.floor_proven_ns);
    const auto& md = floor.meta.metadata;
    const bool kept_disturbed = std::any_of(md.begin(), md.end(), [](const auto& kv) {
        return kv.first == "logger.keep_disturbed" && kv.second == "yes";
    });
    return kept_disturbed
               ? 0
               : std::max<std::int64_t>(0, floor.summary.min_ns - floor.meta.gap_limit_ns);
}

} // namespace

std::int64_t floor_share_ns(const db::run_record& floor)
{
    const hw::backend_identity id = identity_of(floor);
    if (!id.clock)
        return host_timed_share_ns(floor);
    const hw::device_clock& c = *id.clock;
    // min = ceil(offset + k x upper): k samples came before the one that saw the jumper.
    const double k = std::floor(
        (static_cast<double>(floor.summary.min_ns) - c.offset_ns) / c.tick_upper_ns + 1e-6);
    if (k < 1)
        return 0;
    return static_cast<std::int64_t>(
        std::floor(std::max(0.0, c.offset_ns + (k - 1) * c.tick_lower_ns)));
}

bool floor_device_timed(const db::run_record& floor)
{
    return identity_of(floor).clock.has_value();
}

std::int64_t floor_correction_ns(const db::run_record& run, const db::run_record& floor)
{
    const std::int64_t share = floor_share_ns(floor);
    const hw::calibration applied = identity_of(run).floor;
    if (!applied)
        return share;
    return std::max<std::int64_t>(0, share - applied.floor_share_ns);
}

} // namespace irqloop::analysis
