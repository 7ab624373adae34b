// SPDX-License-Identifier: MIT
#pragma once

#include "gpiod/gpiod-lines.hpp"
#include "gpiomem-soc.hpp"
#include "lines.hpp"
#include "spec.hpp"

#include <memory>
#include <optional>
#include <string>

namespace irqloop::hw
{

/** @brief The line keys of a `gpiomem:` spec, with the gpiod backend's meaning. */
struct gpiomem_line_keys final {
    role who = role::logger;
    std::string chip;           ///< default chip for lines given without one; empty: the SoC's
    std::string out = "17";     ///< `[CHIP:]LINE` this program drives
    std::string in = "27";      ///< `[CHIP:]LINE` this program senses
    std::string bias = "as-is"; ///< as-is, disabled, pull-up or pull-down (checked)
    bool active_low = false;
};

/**
 * @brief What a `gpiomem:` spec says (take_gpiomem_options()); nothing is opened yet.
 *
 * Keys (docs/backends/gpiomem.md):
 * - the gpiod backend's line keys, with the same meaning and the same line naming
 *   (find_gpiod_line()): `chip=`, `out=[CHIP:]LINE`, `in=[CHIP:]LINE`, `bias=`, `active_low=`.
 *   The default chip is the SoC's GPIO chip by label (pinctrl-bcm2835, pinctrl-bcm2711,
 *   pinctrl-rp1). No `events=`: this backend polls (irqloop-responder --mode poll);
 * - `dev=` the device to map: default `/dev/gpiomem` (BCM283x) or `/dev/gpiomem0` (RP1);
 *   `/dev/mem` maps the block at the physical address of the chip's device (testbed only:
 *   needs root and a kernel booted with iomem=relaxed);
 * - `soc=bcm2835|bcm2836|bcm2837|bcm2711|rp1` overrides the SoC read from
 *   /proc/device-tree/compatible; refused when the device tree names another supported SoC;
 * - `sim=bcm2835|...|rp1` the register simulator instead of the hardware: no kernel, no chip;
 *   `out=` and `in=` are plain line numbers, wired to each other by a jumper (so that
 *   `irqloop calibrate --hw gpiomem:sim=bcm2711` measures the register loop's floor).
 *   `chip`, `bias`, `dev` and `soc` are refused with it.
 */
struct gpiomem_options final {
    gpiomem_line_keys lines;        ///< chip, out, in, bias, active_low
    std::optional<gpiomem_soc> sim; ///< sim=: the register simulator
    std::optional<gpiomem_soc> soc; ///< soc=: overrides the device tree
    std::string dev;                ///< dev=: empty for the SoC's own device
    far_end answers;                ///< edges=, answer= (see far_end)
};

/** @throws irqloop::error (exit status 2) on a bad or contradictory key. Opens nothing. */
gpiomem_options take_gpiomem_options(spec& s, role r);

/**
 * @brief Open the pair: find the SoC (device tree, soc=), resolve the lines as gpiod does,
 * check that their chip is the SoC's GPIO block, map the block, request the lines through
 * libgpiod, then hand it all to gpiomem_lines.
 *
 * @p device_tree_compatible is the path of the device tree's root compatible list (tests
 * give their own file). @throws irqloop::error (exit status 2): not a supported SoC (the
 * machine's compatible list in the message), soc= contradicting the device tree, a chip that
 * is not the SoC's GPIO block, no device (the gpiomem hint), no permission, a line held by
 * another consumer (naming it), and the checks of gpiomem_lines.
 */
std::unique_ptr<lines> open_gpiomem_lines_with(const gpiomem_options& o,
                                               const std::string& device_tree_compatible);

/** @brief open_gpiomem_lines_with(o, "/proc/device-tree/compatible"). */
std::unique_ptr<lines> open_gpiomem_lines(const gpiomem_options& o);

/**
 * @brief The registry's entry: take the keys, refuse unknown ones (spec::finish()) before any
 * device is opened, then open_gpiomem_lines().
 */
std::unique_ptr<lines> open_gpiomem_spec(spec& s, role r);

} // namespace irqloop::hw
