// SPDX-License-Identifier: MIT
#pragma once

#include "lines.hpp"
#include "spec.hpp"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace irqloop::hw
{

/** @brief The second step of opening a backend: touches the hardware, returns the pair. */
/**
 * @brief Opens a wire from options already taken from its spec. A backend that takes a floor
 * run's calibration in (ftdi, offset=auto) asks @p floor for it while it opens; the others
 * ignore it.
 */
using opener = std::function<std::unique_ptr<lines>(const calibration_lookup& floor)>;

/**
 * @brief One entry of the backend list.
 *
 * Opening is two steps, so that a bad spec is refused before any hardware is touched:
 * prepare() reads every key of the spec into the backend's options (no device opened, no
 * register written, no segment created) and returns the opener; open_lines() calls
 * spec::finish(), which refuses keys nobody took, and only then the opener.
 */
struct backend_entry final {
    const char* name;    ///< spec name, e.g. "gpiod"
    const char* summary; ///< one line for --help
    const char* example; ///< an example spec
    /** Takes the keys and returns the opener; null when compiled out (see @ref missing). */
    opener (*prepare)(spec& s, role r);
    const char* missing; ///< why it was compiled out, with the package to install
    /// The same wire seen from the target, for irqloop-responder's help: `in` is STIM (the
    /// line the target senses), `out` is RESP (the line it drives), as schematics/*/pins.csv
    /// wires them. Null: the backend is the logger's only.
    const char* target_example = nullptr;
};

/** @brief Every backend, compiled in or not, in alphabetical order. */
const std::vector<backend_entry>& backends();

/**
 * @brief Open a line pair from a spec string such as "sim:model=normal,mean=8us,sd=1us".
 * @param list The backends to choose from: backends(), or in tests a list whose entry puts a
 *        simulator behind a real backend's key parsing.
 * @throws irqloop::error for an unknown or compiled-out backend, an unknown key or a bad
 *         value (all before the hardware is touched), or a hardware failure (missing device,
 *         no permission, line busy).
 */
std::unique_ptr<lines> open_lines(std::string_view spec_text, role r,
                                  const std::vector<backend_entry>& list = backends());

/**
 * @brief Open the wire @p s describes (a spec the caller may have given defaults of its own,
 * spec::set_default()); @p floor gives a device-timed backend its calibration as it opens.
 */
std::unique_ptr<lines> open_lines(spec s, role r, const calibration_lookup& floor = {},
                                  const std::vector<backend_entry>& list = backends());

/**
 * @brief The first step of open_lines() alone: refuse an unknown or compiled-out backend, an
 *        unknown key or a bad value of @p spec_text, and open nothing. What only the hardware
 *        can refuse (a missing device, a busy line) is left to open_lines(). A campaign checks
 *        every phase's spec with it before its first phase runs.
 * @throws irqloop::error as open_lines() does before the hardware is touched.
 */
void check_lines_spec(std::string_view spec_text, role r,
                      const std::vector<backend_entry>& list = backends());

/**
 * @brief The --help paragraph listing the backends, with examples in @p r's orientation:
 * the logger's (out = STIM, in = RESP) or the target's (in = STIM, out = RESP).
 */
std::string backends_help(role r = role::logger);

} // namespace irqloop::hw
