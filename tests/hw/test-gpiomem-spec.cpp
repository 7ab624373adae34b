// SPDX-License-Identifier: MIT
// The gpiomem backend's spec and open path: keys read with the gpiod backend's parser, the
// refusals before any hardware is touched, the SoC from the device tree and soc=, and the
// register simulator through the registry (sim=), in both roles.
#include "error-status.hpp"
#include "error.hpp"
#include "gpiomem/gpiomem-lines.hpp"
#include "gpiomem/gpiomem-open.hpp"
#include "registry.hpp"
#include "run-process.hpp"
#include "spec.hpp"
#include "temp-dir.hpp"

#include <catch2/catch_test_macros.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

using namespace irqloop;
using namespace irqloop::hw;
using irqloop::test::status_of;

namespace
{

gpiomem_options options(const std::string& text, role r = role::logger)
{
    spec s(text);
    auto o = take_gpiomem_options(s, r);
    s.finish();
    return o;
}

} // namespace

TEST_CASE("gpiomem: keys, defaults and the gpiod line syntax", "[gpiomem]")
{
    auto o = options("gpiomem:out=GPIO17,in=gpiochip0:27,bias=pull-down,active_low=1");
    CHECK(o.lines.out == "GPIO17");
    CHECK(o.lines.in == "gpiochip0:27");
    CHECK(o.lines.bias == "pull-down");
    CHECK(o.lines.active_low);
    CHECK_FALSE(o.sim);
    CHECK_FALSE(o.soc);
    CHECK(o.dev.empty());
    auto d = options("gpiomem");
    CHECK(d.lines.out == "17");
    CHECK(d.lines.in == "27");
    CHECK(d.lines.chip.empty()); // the SoC's chip by label, at open
    CHECK(options("gpiomem", role::responder).lines.who == role::responder);
    CHECK(options("gpiomem:soc=bcm2712,dev=/dev/gpiomem0").soc == gpiomem_soc::rp1);
    CHECK(options("gpiomem:sim=bcm2837").sim == gpiomem_soc::bcm2837);
}

TEST_CASE("gpiomem: bad keys are refused before anything is opened", "[gpiomem]")
{
    std::string msg;
    auto refused = [&](const std::string& text, const std::string& why) {
        CAPTURE(text);
        CHECK(status_of([&] { open_lines(text, role::logger); }, msg) == exit_usage);
        CHECK(msg.find(why) != std::string::npos);
    };
    refused("gpiomem:sim=bcm9999", "unknown SoC 'bcm9999' (use one of bcm2835, bcm2836, bcm2837, "
                                   "bcm2711, rp1)");
    refused("gpiomem:soc=x", "unknown SoC 'x'");
    refused("gpiomem:sim=rp1,dev=/dev/mem", "key 'dev': not with sim=");
    refused("gpiomem:sim=rp1,soc=rp1", "key 'soc': not with sim=");
    refused("gpiomem:sim=rp1,chip=gpiochip0", "key 'chip': not with sim=");
    refused("gpiomem:events=both", "no kernel edge events");
    refused("gpiomem:edges=sometimes", "key 'edges'"); // the far end's key, as everywhere
    refused("gpiomem:dev=gpiomem", "'gpiomem' is not a device path");
    refused("gpiomem:bias=sideways", "unknown value 'sideways' of key 'bias'");
    refused("gpiomem:sim=rp1,bias=pull-up", "key 'bias': not with sim=");
    refused("gpiomem:sim=rp1,typo=1", "unknown key 'typo'");
    refused("gpiomem:sim=rp1,out=GPIO17", "'GPIO17' is not a line number");
    refused("gpiomem:sim=rp1,out=28", "out=28 is not in the rp1 GPIO block");
}

TEST_CASE("gpiomem: the SoC from the device tree; soc= may not contradict it", "[gpiomem]")
{
    irqloop::test::temp_dir dir;
    auto dt = [&](const std::string& content) {
        auto p = dir / "compatible";
        std::ofstream(p, std::ios::binary) << content;
        return p;
    };
    using namespace std::string_literals;
    std::string msg;
    SECTION("not a supported SoC")
    {
        auto path = dt("pine64,pine64-plus\0allwinner,sun50i-a64\0"s);
        CHECK(status_of([&] { open_gpiomem_lines_with(options("gpiomem"), path); }, msg) ==
              exit_usage);
        CHECK(msg.find("not a supported SoC: " + path +
                       " says 'pine64,pine64-plus allwinner,sun50i-a64'") != std::string::npos);
        CHECK(msg.find("elsewhere use the gpiod backend") != std::string::npos);
    }
    SECTION("no device tree at all (a PC)")
    {
        auto path = dir / "absent";
        CHECK(status_of([&] { open_gpiomem_lines_with(options("gpiomem"), path); }, msg) ==
              exit_usage);
        CHECK(msg.find("is absent (no device tree)") != std::string::npos);
    }
    SECTION("soc= contradicting the device tree")
    {
        auto path = dt("raspberrypi,3-model-b\0brcm,bcm2837\0"s);
        CHECK(status_of([&] { open_gpiomem_lines_with(options("gpiomem:soc=bcm2711"), path); },
                        msg) == exit_usage);
        CHECK(msg.find("soc=bcm2711 contradicts the device tree, which names brcm,bcm2837 "
                       "(bcm2837, Raspberry Pi 3") != std::string::npos);
        CHECK(msg.find("drop soc=") != std::string::npos);
    }
    SECTION("soc= naming the SoC the device tree names goes on to the chip lookup")
    {
        auto path = dt("raspberrypi,4-model-b\0brcm,bcm2711\0"s);
        // This machine has no pinctrl-bcm2711 chip: the next refusal is the chip's.
        CHECK(status_of([&] { open_gpiomem_lines_with(options("gpiomem:soc=bcm2711"), path); },
                        msg) == exit_usage);
        CHECK(msg.find("pinctrl-bcm2711") != std::string::npos);
        CHECK(msg.find("contradicts") == std::string::npos);
    }
}

TEST_CASE("gpiomem: sim= through the registry, logger and responder", "[gpiomem]")
{
    for (auto r : {role::logger, role::responder}) {
        auto pair = open_lines("gpiomem:sim=bcm2711,out=5,in=6,active_low=1", r);
        auto* l = dynamic_cast<gpiomem_lines*>(pair.get());
        REQUIRE(l);
        CHECK(l->describe() == "gpiomem:sim=bcm2711,out=5,in=6,active_low=1");
        CHECK_FALSE(hw::find_edge_waiter(*pair)); // the responder runs it with --mode poll
        // The simulator's jumper takes out to in: a loop, active-low on both ends.
        l->drive(true);
        CHECK(l->sense() == 1);
        l->drive(false);
        CHECK(l->sense() == 0);
        bool has_cost = false;
        for (const auto& m : l->metadata())
            has_cost |= m.key == "gpiomem.poll_cost_ns";
        CHECK(has_cost);
    }
}

TEST_CASE("gpiomem: the responder takes it and is told to poll", "[gpiomem]")
{
    using irqloop::test::run_process;
    auto r = run_process({IRQLOOP_RESPONDER_BIN, "--hw", "gpiomem:sim=bcm2711", "--mode", "event"});
    CHECK(r.status == exit_usage);
    CHECK(r.err.find("this backend cannot wait for edges (use --mode poll)") != std::string::npos);
}

TEST_CASE("gpiomem: the logger takes it; on a PC the real backend refuses", "[gpiomem]")
{
    using irqloop::test::run_process;
    auto h = run_process({IRQLOOP_BIN, "run", "--help"});
    CHECK(h.status == 0);
    CHECK(h.out.find("gpiomem: Raspberry Pi GPIO block polled through its registers") !=
          std::string::npos);
    // A PC has no device tree: the real backend refuses with the way out.
    auto pc = run_process(
        {IRQLOOP_BIN, "calibrate", "--no-db", "--samples", "10", "--hw", "gpiomem:out=17,in=27"});
    if (!std::filesystem::exists("/proc/device-tree/compatible")) {
        CHECK(pc.status == exit_usage);
        CHECK(pc.err.find("not a supported SoC: /proc/device-tree/compatible is absent") !=
              std::string::npos);
    }
}
