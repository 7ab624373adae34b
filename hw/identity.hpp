// SPDX-License-Identifier: MIT
// A wire's identity as a typed record: which backend, its canonical spec, the lines it names,
// and the calibration figures a reading depends on. It travels between the layers (the run,
// the floor rule, the responder); metadata text is written from it once, for the file, and
// read back into it once (identity_from_record()).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace irqloop::hw
{

/** @brief The backends, by the name their spec starts with; `other` for any other name. */
enum class backend_kind { ftdi, gpiod, gpiomem, parport, shm, sim, other };

/** @brief The spec name of @p k ("ftdi", ...; "" for other). */
std::string_view kind_name(backend_kind k) noexcept;

/** @brief The kind of a spec text, from its name before ':' (the one place that reads it). */
backend_kind kind_of_spec(std::string_view spec_text) noexcept;

/** @brief The two specs name the same backend (the same name before ':', known or not). */
bool same_backend(std::string_view a, std::string_view b) noexcept;

/**
 * @brief A floor run's share, taken into a device-timed backend's reading when it opens
 * (ftdi's command offset, `offset=auto`): the share in ns and the floor run it came from.
 */
struct calibration final {
    std::int64_t floor_share_ns = -1; ///< < 0: none taken
    std::string floor_run;            ///< "floor run ID (UUID)"
    explicit operator bool() const noexcept { return floor_share_ns >= 0; }
};

/**
 * @brief Finds the calibration for a backend @p kind on @p wiring (the newest floor run on the
 * same wiring in the run's file); nullopt when there is none. Called by the backend while it
 * opens, once it knows its wiring, before anything is driven.
 */
using calibration_lookup =
    std::function<std::optional<calibration>(backend_kind kind, const std::string& wiring)>;

/**
 * @brief The clock of a device-timed backend (ftdi: the chip's TCK or bit-bang tick): what
 * the floor rule needs to read a floor run's minimum.
 */
struct device_clock final {
    double tick_ns = 0;       ///< nominal tick
    double tick_lower_ns = 0; ///< the tick's lower bound (syncbb's calibration; else tick_ns)
    double tick_upper_ns = 0; ///< the tick's upper bound
    double offset_ns = 0;     ///< command offset: the first sample's time after the edge
};

/** @brief Who a wire is, typed: see the file comment. */
struct backend_identity final {
    backend_kind kind = backend_kind::other;
    std::string spec;   ///< canonical spec, defaults filled in (lines::describe())
    std::string out;    ///< the driven line as the spec names it ("" where it names none)
    std::string in;     ///< the sensed line
    std::string wiring; ///< what a floor run's share depends on; "" where none is taken in
    std::optional<device_clock> clock; ///< device-timed backends
    calibration floor;                 ///< the floor share taken into the reading, if any

    /** @brief "STIM (out=...)" and "RESP (in=...)", or STIM and RESP where unnamed. */
    std::pair<std::string, std::string> line_names() const;
};

/** @brief The identity a canonical spec gives by itself: kind, spec, out and in. */
backend_identity identity_of_spec(std::string_view spec_text);

/**
 * @brief The identity of a stored run: its spec, and its `<kind>.tick_ns`, `.tick_lower_ns`,
 * `.tick_upper_ns`, `.offset_ns` (the device clock, when tick and offset are both there and
 * the tick is above 0), `.wiring`, `.floor_share_ns` and `.floor_run` metadata.
 */
backend_identity
identity_from_record(std::string_view spec_text,
                     const std::vector<std::pair<std::string, std::string>>& metadata);

} // namespace irqloop::hw
