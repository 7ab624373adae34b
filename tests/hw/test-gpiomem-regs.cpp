// SPDX-License-Identifier: MIT
// The gpiomem backend's register layer: the offsets and bits of every supported SoC, the
// register simulator, and gpiomem_lines on it (active-low, self-loop, the open checks).
#include "error-status.hpp"
#include "error.hpp"
#include "gpiomem/gpiomem-lines.hpp"
#include "gpiomem/gpiomem-sim.hpp"
#include "gpiomem/gpiomem-soc.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <functional>
#include <string>

using namespace irqloop;
using namespace irqloop::hw;
using irqloop::test::status_of;

namespace
{

const gpiomem_soc all_socs[] = {gpiomem_soc::bcm2835, gpiomem_soc::bcm2836, gpiomem_soc::bcm2837,
                                gpiomem_soc::bcm2711, gpiomem_soc::rp1};

/** The simulator, with @p out and @p in set up as the kernel would for a request. */
std::shared_ptr<gpiomem_sim> kernel_setup(gpiomem_soc soc, unsigned out, unsigned in)
{
    auto sim = std::make_shared<gpiomem_sim>(soc);
    sim->set_output(in, false);
    sim->set_output(out, true);
    return sim;
}

gpiomem_lines open_on(const std::shared_ptr<gpiomem_sim>& sim, unsigned out, unsigned in,
                      bool active_low = false)
{
    gpiomem_wiring w;
    w.soc = sim->soc();
    w.out = out;
    w.in = in;
    w.active_low = active_low;
    return gpiomem_lines(make_gpiomem_sim_regs(sim), w, nullptr);
}

} // namespace

TEST_CASE("gpiomem: BCM283x register offsets and bits, both banks", "[gpiomem]")
{
    auto soc = GENERATE(gpiomem_soc::bcm2835, gpiomem_soc::bcm2836, gpiomem_soc::bcm2837,
                        gpiomem_soc::bcm2711);
    CAPTURE(gpiomem_soc_of(soc).name);
    // GPSET0 0x1c, GPSET1 0x20; GPCLR0 0x28, GPCLR1 0x2c; GPLEV0 0x34, GPLEV1 0x38.
    CHECK(gpiomem_set_reg(soc, 0) == gpiomem_reg_bit{0x1c, 1u});
    CHECK(gpiomem_set_reg(soc, 17) == gpiomem_reg_bit{0x1c, 1u << 17});
    CHECK(gpiomem_set_reg(soc, 31) == gpiomem_reg_bit{0x1c, 1u << 31});
    CHECK(gpiomem_set_reg(soc, 32) == gpiomem_reg_bit{0x20, 1u});
    CHECK(gpiomem_set_reg(soc, 53) == gpiomem_reg_bit{0x20, 1u << 21});
    CHECK(gpiomem_clear_reg(soc, 27) == gpiomem_reg_bit{0x28, 1u << 27});
    CHECK(gpiomem_clear_reg(soc, 40) == gpiomem_reg_bit{0x2c, 1u << 8});
    CHECK(gpiomem_level_reg(soc, 27) == gpiomem_reg_bit{0x34, 1u << 27});
    CHECK(gpiomem_level_reg(soc, 45) == gpiomem_reg_bit{0x38, 1u << 13});
    CHECK(gpiomem_bcm_fsel_offset(9) == 0x00);
    CHECK(gpiomem_bcm_fsel_offset(17) == 0x04);
    CHECK(gpiomem_bcm_fsel_offset(27) == 0x08);
    CHECK(gpiomem_bcm_fsel_offset(53) == 0x14);
    CHECK(gpiomem_soc_of(soc).map_size == 4096);
    CHECK(std::string(gpiomem_soc_of(soc).device) == "/dev/gpiomem");
}

TEST_CASE("gpiomem: RP1 RIO bank 0 offsets and bits", "[gpiomem]")
{
    // /dev/gpiomem0 starts at io_bank0 (RP1 0x400d0000); sys_rio0 is 0x10000 further, and
    // every RP1 register has XOR, SET and CLEAR aliases at +0x1000, +0x2000, +0x3000.
    CHECK(gpiomem_set_reg(gpiomem_soc::rp1, 17) == gpiomem_reg_bit{0x12000, 1u << 17});
    CHECK(gpiomem_clear_reg(gpiomem_soc::rp1, 17) == gpiomem_reg_bit{0x13000, 1u << 17});
    CHECK(gpiomem_level_reg(gpiomem_soc::rp1, 27) == gpiomem_reg_bit{0x10008, 1u << 27});
    CHECK(gpiomem_set_reg(gpiomem_soc::rp1, 0) == gpiomem_reg_bit{0x12000, 1u});
    const auto& rp1 = gpiomem_soc_of(gpiomem_soc::rp1);
    CHECK(rp1.lines == 28);
    CHECK(rp1.map_size == 0x30000);
    CHECK(std::string(rp1.device) == "/dev/gpiomem0");
    CHECK(std::string(rp1.chip_label) == "pinctrl-rp1");
}

TEST_CASE("gpiomem: the SoC from the device tree and from soc=", "[gpiomem]")
{
    using namespace std::string_literals;
    CHECK(gpiomem_soc_from_compatible("raspberrypi,3-model-b\0brcm,bcm2837\0"s) ==
          gpiomem_soc::bcm2837);
    CHECK(gpiomem_soc_from_compatible("raspberrypi,4-model-b\0brcm,bcm2711\0"s) ==
          gpiomem_soc::bcm2711);
    CHECK(gpiomem_soc_from_compatible("raspberrypi,5-model-b\0brcm,bcm2712\0"s) ==
          gpiomem_soc::rp1);
    CHECK(gpiomem_soc_from_compatible("raspberrypi,model-zero-w\0brcm,bcm2835\0"s) ==
          gpiomem_soc::bcm2835);
    CHECK(gpiomem_soc_from_compatible("raspberrypi,2-model-b\0brcm,bcm2836\0"s) ==
          gpiomem_soc::bcm2836);
    CHECK_FALSE(gpiomem_soc_from_compatible("pine64,pine64-plus\0allwinner,sun50i-a64\0"s));
    CHECK_FALSE(gpiomem_soc_from_compatible(""));
    CHECK(gpiomem_soc_by_name("bcm2711") == gpiomem_soc::bcm2711);
    CHECK(gpiomem_soc_by_name("rp1") == gpiomem_soc::rp1);
    CHECK(gpiomem_soc_by_name("bcm2712") == gpiomem_soc::rp1);
    CHECK_FALSE(gpiomem_soc_by_name("bcm2838"));
    CHECK(gpiomem_soc_names() == "bcm2835, bcm2836, bcm2837, bcm2711, rp1");
    for (auto soc : all_socs)
        CHECK(gpiomem_soc_of(soc).soc == soc);
}

TEST_CASE("gpiomem: drive and sense on the simulator of every SoC, no stray access", "[gpiomem]")
{
    auto soc = GENERATE(gpiomem_soc::bcm2835, gpiomem_soc::bcm2836, gpiomem_soc::bcm2837,
                        gpiomem_soc::bcm2711, gpiomem_soc::rp1);
    const unsigned max = gpiomem_soc_of(soc).lines - 1;
    auto [out, in] = GENERATE_COPY(table<unsigned, unsigned>({{17, 27}, {0, max}, {max, 1}}));
    CAPTURE(gpiomem_soc_of(soc).name, out, in);
    auto sim = kernel_setup(soc, out, in);
    auto l = open_on(sim, out, in);
    CHECK_FALSE(sim->latch(out)); // starts low

    for (bool v : {true, false, true, false}) {
        auto writes = sim->writes(), reads = sim->reads();
        l.drive(v);
        CHECK(sim->latch(out) == v);
        CHECK(sim->level(out) == v);
        CHECK(sim->writes() == writes + 1); // one store, no read-modify-write
        CHECK(sim->reads() == reads + 1);   // and the read-back
        sim->far_drive(in, v);
        CHECK(l.sense() == int(v));
    }
    // Other lines of the bank are never touched by drive().
    for (unsigned line = 0; line <= max; ++line)
        if (line != out)
            CHECK_FALSE(sim->latch(line));
    CHECK(sim->stray_reads() == 0);
    CHECK(sim->stray_writes() == 0);
}

TEST_CASE("gpiomem: active_low inverts in software, registers hold pad levels", "[gpiomem]")
{
    auto soc = GENERATE(gpiomem_soc::bcm2711, gpiomem_soc::rp1);
    auto sim = kernel_setup(soc, 17, 27);
    auto l = open_on(sim, 17, 27, true);
    CHECK(sim->latch(17)); // logical low is a high pad
    l.drive(true);
    CHECK_FALSE(sim->latch(17));
    sim->far_drive(27, false);
    CHECK(l.sense() == 1);
    sim->far_drive(27, true);
    CHECK(l.sense() == 0);
    l.stop();
    CHECK(sim->latch(17));
}

TEST_CASE("gpiomem: a self-loop on one pin reads the output's own level", "[gpiomem]")
{
    auto soc = GENERATE(gpiomem_soc::bcm2837, gpiomem_soc::rp1);
    auto sim = kernel_setup(soc, 17, 17);
    auto l = open_on(sim, 17, 17);
    CHECK(l.sense() == 0);
    l.drive(true);
    CHECK(l.sense() == 1);
    l.drive(false);
    CHECK(l.sense() == 0);
    CHECK(l.poll_cost_ns() > 0);
    CHECK(l.describe() == std::string("gpiomem:sim=") + gpiomem_soc_of(soc).name + ",out=17,in=17");
}

TEST_CASE("gpiomem: the simulator's jumper and its stray-access counters", "[gpiomem]")
{
    auto sim = kernel_setup(gpiomem_soc::bcm2711, 17, 27);
    sim->set_jumper(17, 27);
    auto l = open_on(sim, 17, 27);
    l.drive(true);
    CHECK(l.sense() == 1);
    l.drive(false);
    CHECK(l.sense() == 0);
    // The counters do see a wrong offset: a test without strays means something.
    auto regs = make_gpiomem_sim_regs(sim);
    regs->write(0x24, 1); // between GPSET1 and GPCLR0: reserved
    (void)regs->read(0x40);
    CHECK(sim->stray_writes() == 1);
    CHECK(sim->stray_reads() == 1);
    CHECK(sim->last_stray() == 0x40);
    // RP1: SYNC_IN is read only; the XOR alias flips.
    auto rp1 = kernel_setup(gpiomem_soc::rp1, 5, 6);
    auto r = make_gpiomem_sim_regs(rp1);
    r->write(rp1_rio::base + rp1_rio::alias_xor + rp1_rio::out, 1u << 5);
    CHECK(rp1->latch(5));
    r->write(rp1_rio::base + rp1_rio::sync_in, 0);
    CHECK(rp1->stray_writes() == 1);
}

TEST_CASE("gpiomem: open refuses lines outside the block and a block the kernel did not set up",
          "[gpiomem]")
{
    std::string msg;
    SECTION("a line beyond the block")
    {
        auto sim = kernel_setup(gpiomem_soc::rp1, 17, 27);
        CHECK(status_of([&] { open_on(sim, 28, 27); }, msg) == exit_usage);
        CHECK(msg.find("out=28 is not in the rp1 GPIO block, whose lines are 0..27") !=
              std::string::npos);
        auto bcm = kernel_setup(gpiomem_soc::bcm2837, 17, 27);
        CHECK(status_of([&] { open_on(bcm, 17, 54); }, msg) == exit_usage);
        CHECK(msg.find("in=54 is not in the bcm2837 GPIO block") != std::string::npos);
    }
    SECTION("the out line is not an output: not the block the kernel configured")
    {
        auto sim = std::make_shared<gpiomem_sim>(gpiomem_soc::bcm2711);
        CHECK(status_of([&] { open_on(sim, 17, 27); }, msg) == exit_usage);
        CHECK(msg.find("line 17 does not show as an output") != std::string::npos);
        CHECK(msg.find("check soc= and dev=") != std::string::npos);
        CHECK(sim->writes() == 0); // refused before driving anything
    }
    SECTION("the in line is an output")
    {
        auto sim = kernel_setup(gpiomem_soc::rp1, 17, 27);
        sim->set_output(27, true);
        CHECK(status_of([&] { open_on(sim, 17, 27); }, msg) == exit_usage);
        CHECK(msg.find("line 27 shows as an output, not an input") != std::string::npos);
    }
    SECTION("an RP1 layout over a BCM block (soc= wrong): refused, nothing written")
    {
        auto bcm = kernel_setup(gpiomem_soc::bcm2711, 17, 27);
        gpiomem_wiring w;
        w.soc = gpiomem_soc::rp1;
        // The sim reports the BCM map size (4 KiB): too small for RP1's registers.
        CHECK(status_of([&] { gpiomem_lines(make_gpiomem_sim_regs(bcm), w, nullptr); }, msg) ==
              exit_usage);
        CHECK(msg.find("maps 4096 bytes, the registers need 196608") != std::string::npos);
        CHECK(bcm->writes() == 0);
    }
}
