// SPDX-License-Identifier: MIT
// The bare-metal responder's GPIO drivers (target-responder/baremetal/gpio-*.c, compiled with
// BM_HOST) against register simulators of their blocks (bm-gpio-sim.*): each driver held to
// the rules of gpio.h on the same code that runs on the board.
#include "bm-gpio-sim.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/generators/catch_generators_range.hpp>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

extern "C" {
#include "gpio.h"

extern const struct bm_gpio_driver bm_gpio_bcm2711;
extern const struct bm_gpio_driver bm_gpio_rcar_gen3;
extern const struct bm_gpio_driver bm_gpio_rcar_gen4;
extern const struct bm_gpio_driver bm_gpio_zynqmp;
#ifdef IRQLOOP_BM_HAVE_PL061
extern const struct bm_gpio_driver bm_gpio_pl061;
#endif
}

using irqloop::test::bm::block_sim;
using irqloop::test::bm::install_sim;

namespace
{

/** One driver on one pair of lines of one bank, and a third line of that bank. */
struct bm_case {
    const char* label;
    const bm_gpio_driver* drv;
    std::function<std::unique_ptr<block_sim>()> make;
    unsigned in, out, other;
    bool set_clear; // set_out() is one write and no read (a set/clear or masked register)
};

std::vector<bm_case> bm_cases()
{
    using namespace irqloop::test::bm;
    auto rcar3 = [] { return make_rcar_sim(false); };
    auto rcar4 = [] { return make_rcar_sim(true); };
    std::vector<bm_case> c = {
        {"bcm2711 17/27", &bm_gpio_bcm2711, make_bcm2711_sim, 17, 27, 22, true},
        {"bcm2711 0/31", &bm_gpio_bcm2711, make_bcm2711_sim, 0, 31, 9, true},
        {"bcm2711 bank 1 40/57", &bm_gpio_bcm2711, make_bcm2711_sim, 40, 57, 32, true},
        {"rcar-gen3 3/12", &bm_gpio_rcar_gen3, rcar3, 3, 12, 7, false},
        {"rcar-gen3 31/0", &bm_gpio_rcar_gen3, rcar3, 31, 0, 16, false},
        {"rcar-gen4 3/12", &bm_gpio_rcar_gen4, rcar4, 3, 12, 7, false},
        {"zynqmp bank 0 0/25", &bm_gpio_zynqmp, make_zynqmp_sim, 0, 25, 13, true},
        {"zynqmp bank 1 30/45", &bm_gpio_zynqmp, make_zynqmp_sim, 30, 45, 26, true},
        {"zynqmp bank 3 100/80", &bm_gpio_zynqmp, make_zynqmp_sim, 100, 80, 109, true},
        {"zynqmp bank 5 173/142", &bm_gpio_zynqmp, make_zynqmp_sim, 173, 142, 150, true},
#ifdef IRQLOOP_BM_HAVE_PL061
        {"pl061 3/5", &bm_gpio_pl061, make_pl061_sim, 3, 5, 1, true},
        {"pl061 0/7", &bm_gpio_pl061, make_pl061_sim, 0, 7, 6, true},
#endif
    };
    return c;
}

/** A pattern for presetting register @p offset: every bit differs between @p inverse and not. */
std::uint32_t bm_pattern(std::uint32_t offset, bool inverse)
{
    std::uint32_t v = 0x5ac3c35au ^ (offset * 0x9e3779b9u);
    return inverse ? ~v : v;
}

bm_gpio bm_lines(const bm_case& c, const block_sim& sim, unsigned in, unsigned out)
{
    bm_gpio g{};
    g.drv = c.drv;
    g.base = sim.base();
    g.in_line = in;
    g.out_line = out;
    g.intid = 32 + 7;
    return g;
}

std::map<std::uint32_t, std::uint32_t> bm_snapshot(const block_sim& sim)
{
    std::map<std::uint32_t, std::uint32_t> m;
    for (auto off : sim.config_regs())
        m[off] = sim.peek(off);
    return m;
}

} // namespace

TEST_CASE("baremetal gpio: setup changes only its two lines' bits, with no stray access",
          "[baremetal-gpio]")
{
    const auto cases = bm_cases();
    const auto& c = cases[GENERATE_COPY(Catch::Generators::range(std::size_t{0}, cases.size()))];
    const bool inverse = GENERATE(false, true);
    CAPTURE(c.label, inverse);
    auto sim = c.make();
    for (auto off : sim->config_regs())
        sim->poke(off, bm_pattern(off, inverse));
    const auto before = bm_snapshot(*sim);
    const auto g = bm_lines(c, *sim, c.in, c.out);
    {
        install_sim on(*sim);
        REQUIRE(c.drv->setup(&g) == 0);
    }
    const auto after = bm_snapshot(*sim);
    for (auto [off, was] : before) {
        const std::uint32_t ours = sim->line_bits(off, c.in) | sim->line_bits(off, c.out);
        CAPTURE(off, was, after.at(off), ours);
        CHECK(((was ^ after.at(off)) & ~ours) == 0);
    }
    CHECK(sim->stray_reads() == 0);
    CHECK(sim->stray_writes() == 0);
    CAPTURE(sim->last_stray());
}

TEST_CASE("baremetal gpio: setup leaves the output low, the stimulus armed, nothing stale",
          "[baremetal-gpio]")
{
    const auto cases = bm_cases();
    const auto& c = cases[GENERATE_COPY(Catch::Generators::range(std::size_t{0}, cases.size()))];
    const bool inverse = GENERATE(false, true);
    CAPTURE(c.label, inverse);
    auto sim = c.make();
    for (auto off : sim->config_regs())
        sim->poke(off, bm_pattern(off, inverse));
    sim->latch_stale(c.in);
    const auto g = bm_lines(c, *sim, c.in, c.out);
    install_sim on(*sim);
    REQUIRE(c.drv->setup(&g) == 0);
    CHECK(sim->is_output(c.out));
    CHECK_FALSE(sim->pad(c.out));
    CHECK_FALSE(sim->is_output(c.in));
    CHECK((c.drv->pending(&g) & bm_gpio_bit(c.in)) == 0); // the stale event is gone
    // Both edges of the stimulus latch; the answer's own edges never do.
    for (bool level : {!sim->pad(c.in), sim->pad(c.in)}) {
        sim->far_drive(c.in, level);
        const std::uint32_t p = c.drv->pending(&g);
        CHECK((p & bm_gpio_bit(c.in)) != 0);
        c.drv->set_out(&g, level);
        CHECK(sim->pad(c.out) == level);
        CHECK((c.drv->pending(&g) & bm_gpio_bit(c.out)) == 0);
        c.drv->ack(&g, p);
        CHECK((c.drv->pending(&g) & bm_gpio_bit(c.in)) == 0);
    }
    CHECK(sim->stray_reads() == 0);
    CHECK(sim->stray_writes() == 0);
}

TEST_CASE("baremetal gpio: an outside edge is pending, answered, read and acknowledged",
          "[baremetal-gpio]")
{
    const auto cases = bm_cases();
    const auto& c = cases[GENERATE_COPY(Catch::Generators::range(std::size_t{0}, cases.size()))];
    CAPTURE(c.label);
    auto sim = c.make();
    const auto g = bm_lines(c, *sim, c.in, c.out);
    install_sim on(*sim);
    REQUIRE(c.drv->setup(&g) == 0);
    CHECK(c.drv->pending(&g) == 0);
    CHECK(c.drv->get_in(&g) == 0);
    (void)sim->take_log();
    for (bool level : {true, false, true, false}) {
        CAPTURE(level);
        sim->far_drive(c.in, level);
        const std::uint32_t p = c.drv->pending(&g);
        CHECK(p == bm_gpio_bit(c.in));
        for (const auto& a : sim->take_log())
            CHECK_FALSE(a.write); // pending() only reads
        c.drv->set_out(&g, level);
        CHECK(sim->pad(c.out) == level);
        CHECK(c.drv->get_in(&g) == int(level));
        (void)sim->take_log();
        c.drv->ack(&g, p);
        const auto acked = sim->take_log();
        REQUIRE(acked.size() == 1); // one write-1-to-clear, no read
        CHECK(acked[0].write);
        CHECK(c.drv->pending(&g) == 0);
        (void)sim->take_log();
    }
    CHECK(sim->stray_reads() == 0);
    CHECK(sim->stray_writes() == 0);
}

TEST_CASE("baremetal gpio: set_out moves the output line and only it", "[baremetal-gpio]")
{
    const auto cases = bm_cases();
    const auto& c = cases[GENERATE_COPY(Catch::Generators::range(std::size_t{0}, cases.size()))];
    const bool inverse = GENERATE(false, true);
    CAPTURE(c.label, inverse);
    auto sim = c.make();
    // Other lines as another user left them: outputs high and low among inputs.
    for (auto off : sim->config_regs())
        sim->poke(off, bm_pattern(off, inverse));
    for (unsigned line = 0; line < sim->lines(); ++line)
        if (line != c.in && line != c.out && line % 3 != 2)
            sim->preset_output(line, (line % 3 == 0) != inverse);
    const auto g = bm_lines(c, *sim, c.in, c.out);
    install_sim on(*sim);
    REQUIRE(c.drv->setup(&g) == 0);
    std::vector<std::pair<bool, bool>> others; // latch, pad of every line
    for (unsigned line = 0; line < sim->lines(); ++line)
        others.emplace_back(sim->latch(line), sim->pad(line));
    unsigned outputs_high = 0, outputs_low = 0;
    for (unsigned line = 0; line < sim->lines(); ++line)
        if (line != c.out && sim->is_output(line))
            ++(sim->latch(line) ? outputs_high : outputs_low);
    CHECK(outputs_high > 0); // the preset did leave both kinds next to ours
    CHECK(outputs_low > 0);
    for (bool level : {true, false, true, false}) {
        (void)sim->take_log();
        c.drv->set_out(&g, level);
        const auto log = sim->take_log();
        CHECK(sim->pad(c.out) == level);
        CHECK(sim->latch(c.out) == level);
        for (unsigned line = 0; line < sim->lines(); ++line) {
            if (line == c.out)
                continue;
            CAPTURE(line);
            CHECK(sim->latch(line) == others[line].first);
            CHECK(sim->pad(line) == others[line].second);
        }
        unsigned reads = 0, writes = 0;
        for (const auto& a : log)
            ++(a.write ? writes : reads);
        CHECK(writes == 1);
        CHECK(reads == (c.set_clear ? 0u : 1u));
    }
    CHECK(sim->stray_reads() == 0);
    CHECK(sim->stray_writes() == 0);
}

TEST_CASE("baremetal gpio: get_in on the output line reads the answer back", "[baremetal-gpio]")
{
    // The core prints the response line's level with its counters: get_in() of a copy whose
    // in_line is the output line (target-responder/baremetal/main.c, bm_print_counts).
    const auto cases = bm_cases();
    const auto& c = cases[GENERATE_COPY(Catch::Generators::range(std::size_t{0}, cases.size()))];
    CAPTURE(c.label);
    auto sim = c.make();
    const auto g = bm_lines(c, *sim, c.in, c.out);
    install_sim on(*sim);
    REQUIRE(c.drv->setup(&g) == 0);
    bm_gpio probe = g;
    probe.in_line = g.out_line;
    for (bool level : {true, false, true}) {
        c.drv->set_out(&g, level);
        CHECK(c.drv->get_in(&probe) == int(level));
    }
    CHECK(sim->stray_reads() == 0);
}

TEST_CASE("baremetal gpio: ack clears exactly the lines it is given", "[baremetal-gpio]")
{
    const auto cases = bm_cases();
    const auto& c = cases[GENERATE_COPY(Catch::Generators::range(std::size_t{0}, cases.size()))];
    CAPTURE(c.label);
    auto sim = c.make();
    const auto g = bm_lines(c, *sim, c.in, c.out);
    install_sim on(*sim);
    REQUIRE(c.drv->setup(&g) == 0);
    sim->arm_foreign(c.other);
    sim->far_drive(c.in, true);
    sim->far_drive(c.other, true);
    const std::uint32_t both = bm_gpio_bit(c.in) | bm_gpio_bit(c.other);
    REQUIRE(c.drv->pending(&g) == both);
    c.drv->ack(&g, bm_gpio_bit(c.other));
    CHECK(c.drv->pending(&g) == bm_gpio_bit(c.in));
    c.drv->ack(&g, 0);
    CHECK(c.drv->pending(&g) == bm_gpio_bit(c.in));
    c.drv->ack(&g, bm_gpio_bit(c.in));
    CHECK(c.drv->pending(&g) == 0);
    CHECK(sim->stray_reads() == 0);
    CHECK(sim->stray_writes() == 0);
}

TEST_CASE("baremetal gpio: an edge on another line is pending but is not the stimulus",
          "[baremetal-gpio]")
{
    const auto cases = bm_cases();
    const auto& c = cases[GENERATE_COPY(Catch::Generators::range(std::size_t{0}, cases.size()))];
    CAPTURE(c.label);
    auto sim = c.make();
    const auto g = bm_lines(c, *sim, c.in, c.out);
    install_sim on(*sim);
    REQUIRE(c.drv->setup(&g) == 0);
    sim->arm_foreign(c.other);
    sim->far_drive(c.other, true);
    // What the core sees: a pending line, not the stimulus's: counted spurious, not answered.
    const std::uint32_t p = c.drv->pending(&g);
    CHECK(p == bm_gpio_bit(c.other));
    CHECK((p & bm_gpio_bit(c.in)) == 0);
    CHECK(c.drv->get_in(&g) == 0);
    c.drv->ack(&g, p);
    CHECK(c.drv->pending(&g) == 0);
    CHECK_FALSE(sim->pad(c.out)); // nothing answered
    CHECK(sim->stray_reads() == 0);
    CHECK(sim->stray_writes() == 0);
}

TEST_CASE("baremetal gpio: setup refuses lines out of range or on two banks, touching nothing",
          "[baremetal-gpio]")
{
    using namespace irqloop::test::bm;
    struct refusal {
        const char* label;
        const bm_gpio_driver* drv;
        std::function<std::unique_ptr<block_sim>()> make;
        unsigned in, out;
    };
    auto rcar3 = [] { return make_rcar_sim(false); };
    auto rcar4 = [] { return make_rcar_sim(true); };
    const std::vector<refusal> refusals = {
        {"bcm2711: two banks", &bm_gpio_bcm2711, make_bcm2711_sim, 17, 40},
        {"bcm2711: two banks", &bm_gpio_bcm2711, make_bcm2711_sim, 32, 31},
        {"bcm2711: in beyond 57", &bm_gpio_bcm2711, make_bcm2711_sim, 58, 40},
        {"bcm2711: out beyond 57", &bm_gpio_bcm2711, make_bcm2711_sim, 40, 58},
        {"bcm2711: one line for both", &bm_gpio_bcm2711, make_bcm2711_sim, 17, 17},
        {"rcar-gen3: in beyond the bank", &bm_gpio_rcar_gen3, rcar3, 32, 1},
        {"rcar-gen3: out beyond the bank", &bm_gpio_rcar_gen3, rcar3, 1, 32},
        {"rcar-gen3: one line for both", &bm_gpio_rcar_gen3, rcar3, 4, 4},
        {"rcar-gen4: out beyond the bank", &bm_gpio_rcar_gen4, rcar4, 1, 40},
        {"zynqmp: banks 0 and 1", &bm_gpio_zynqmp, make_zynqmp_sim, 25, 26},
        {"zynqmp: banks 2 and 3", &bm_gpio_zynqmp, make_zynqmp_sim, 78, 77},
        {"zynqmp: banks 4 and 5", &bm_gpio_zynqmp, make_zynqmp_sim, 141, 142},
        {"zynqmp: in beyond 173", &bm_gpio_zynqmp, make_zynqmp_sim, 174, 173},
        {"zynqmp: out beyond 173", &bm_gpio_zynqmp, make_zynqmp_sim, 173, 174},
        {"zynqmp: one line for both", &bm_gpio_zynqmp, make_zynqmp_sim, 30, 30},
#ifdef IRQLOOP_BM_HAVE_PL061
        {"pl061: in beyond 7", &bm_gpio_pl061, make_pl061_sim, 8, 1},
        {"pl061: out beyond 7", &bm_gpio_pl061, make_pl061_sim, 1, 8},
#endif
    };
    for (const auto& r : refusals) {
        CAPTURE(r.label, r.in, r.out);
        auto sim = r.make();
        bm_gpio g{};
        g.drv = r.drv;
        g.base = sim->base();
        g.in_line = r.in;
        g.out_line = r.out;
        install_sim on(*sim);
        CHECK(r.drv->setup(&g) == BM_GPIO_EINVAL);
        CHECK(sim->writes() == 0);
        CHECK(sim->reads() == 0);
    }
}

TEST_CASE("baremetal gpio: R-Car Gen4 enables the stimulus's input buffer, Gen3 has none",
          "[baremetal-gpio]")
{
    // On Gen4 an interrupt line whose INEN bit is clear never sees an edge; on Gen3 offset
    // 0x50 is no register, and a Gen3 driver writing it would be a stray write.
    auto gen4 = irqloop::test::bm::make_rcar_sim(true);
    gen4->poke(0x50, 0); // INEN: every buffer off, as at reset
    bm_gpio g{};
    g.base = gen4->base();
    g.in_line = 5;
    g.out_line = 6;
    {
        install_sim on(*gen4);
        REQUIRE(bm_gpio_rcar_gen4.setup(&g) == 0);
        gen4->far_drive(5, true);
        CHECK(bm_gpio_rcar_gen4.pending(&g) == bm_gpio_bit(5));
        CHECK(bm_gpio_rcar_gen4.get_in(&g) == 1);
    }
    auto gen3 = irqloop::test::bm::make_rcar_sim(false);
    install_sim on(*gen3);
    REQUIRE(bm_gpio_rcar_gen3.setup(&g) == 0);
    CHECK(gen3->stray_writes() == 0);
    CHECK(gen3->stray_reads() == 0);
}

TEST_CASE("baremetal gpio: the mask bit of a line is its number modulo 32", "[baremetal-gpio]")
{
    CHECK(bm_gpio_bit(0) == 1u);
    CHECK(bm_gpio_bit(31) == 0x80000000u);
    CHECK(bm_gpio_bit(32) == 1u);
    CHECK(bm_gpio_bit(57) == 1u << 25);
    CHECK(bm_gpio_bit(142) == 1u << 14);
    // ZynqMP bank 1 is lines 26..51: its bits run 26..31 then 0..19, none twice.
    std::uint32_t seen = 0;
    for (unsigned line = 26; line <= 51; ++line) {
        CHECK((seen & bm_gpio_bit(line)) == 0);
        seen |= bm_gpio_bit(line);
    }
}

TEST_CASE("baremetal gpio: the simulators count stray accesses", "[baremetal-gpio]")
{
    using namespace irqloop::test::bm;
    struct probe {
        const char* label;
        std::function<std::unique_ptr<block_sim>()> make;
        std::uint32_t bad_read, bad_write; // a write-only register, a read-only one
    };
    const std::vector<probe> probes = {
        {"bcm2711: GPSET0 read, GPLEV0 write", make_bcm2711_sim, 0x1c, 0x34},
        {"rcar-gen3: INTCLR read, INEN write", [] { return make_rcar_sim(false); }, 0x14, 0x50},
        {"rcar-gen4: MSKCLR read, INDT write", [] { return make_rcar_sim(true); }, 0x1c, 0x0c},
        {"zynqmp: INT_EN read, INT_MASK write", make_zynqmp_sim, 0x210, 0x20c},
        {"pl061: GPIOIC read, GPIOMIS write", make_pl061_sim, 0x41c, 0x418},
    };
    for (const auto& p : probes) {
        CAPTURE(p.label);
        auto sim = p.make();
        (void)sim->read(sim->base() + p.bad_read);
        sim->write(sim->base() + p.bad_write, 1);
        (void)sim->read(sim->base() + 0x2000); // beyond the block
        CHECK(sim->stray_reads() == 2);
        CHECK(sim->stray_writes() == 1);
        CHECK(sim->last_stray() == 0x2000);
    }
}

#ifdef IRQLOOP_BM_HAVE_PL061
TEST_CASE("baremetal gpio: the driver list finds every driver by name and compatible",
          "[baremetal-gpio]")
{
    CHECK(bm_gpio_find("bcm2711") == &bm_gpio_bcm2711);
    CHECK(bm_gpio_find("brcm,bcm2711-gpio") == &bm_gpio_bcm2711);
    CHECK(bm_gpio_find("renesas,rcar-gen3-gpio") == &bm_gpio_rcar_gen3);
    CHECK(bm_gpio_find("renesas,gpio-r8a7795") == &bm_gpio_rcar_gen3);
    CHECK(bm_gpio_find("renesas,gpio-r8a77965") == &bm_gpio_rcar_gen3);
    CHECK(bm_gpio_find("renesas,rcar-gen4-gpio") == &bm_gpio_rcar_gen4);
    CHECK(bm_gpio_find("renesas,gpio-r8a779a0") == &bm_gpio_rcar_gen4);
    CHECK(bm_gpio_find("xlnx,zynqmp-gpio-1.0") == &bm_gpio_zynqmp);
    CHECK(bm_gpio_find("zynqmp") == &bm_gpio_zynqmp);
    CHECK(bm_gpio_find("pl061") == &bm_gpio_pl061);
    CHECK(bm_gpio_find("xlnx,zynq-gpio-1.0") == nullptr); // Zynq-7000: other banks
    CHECK(bm_gpio_find("brcm,bcm2835-gpio") == nullptr);  // no GPIO 54..57, other interrupts
    // Every name and compatible is found as itself: none shadowed by an earlier driver.
    for (unsigned i = 0; bm_gpio_drivers[i]; ++i) {
        const auto* d = bm_gpio_drivers[i];
        CHECK(bm_gpio_find(d->name) == d);
        for (unsigned k = 0; d->compatible[k]; ++k)
            CHECK(bm_gpio_find(d->compatible[k]) == d);
    }
}
#else
TEST_CASE("baremetal gpio: the driver list finds every driver by name and compatible",
          "[baremetal-gpio]")
{
    SKIP("target-responder/baremetal/gpio-pl061.c is not in the tree yet: gpio-drivers.c "
         "names bm_gpio_pl061 and cannot link without it");
}
#endif
