// SPDX-License-Identifier: MIT
#include "ftdi/ftdi-decode.hpp"

#include <catch2/catch_test_macros.hpp>

#include <cstdint>
#include <string>
#include <vector>

using namespace irqloop::hw;

namespace
{

// Pack a string of '0'/'1' samples (time order) into bytes in the given bit order.
std::vector<std::uint8_t> pack(const std::string& bits, ftdi_bit_order order)
{
    std::vector<std::uint8_t> b((bits.size() + 7) / 8, 0);
    for (std::size_t i = 0; i < bits.size(); ++i)
        if (bits[i] == '1')
            b[i / 8] |= static_cast<std::uint8_t>(
                order == ftdi_bit_order::msb_first ? 0x80u >> (i % 8) : 1u << (i % 8));
    return b;
}

std::string run(std::size_t n, std::size_t at, char before, char after)
{
    std::string s(n, before);
    for (std::size_t i = at; i < n; ++i)
        s[i] = after;
    return s;
}

} // namespace

TEST_CASE("ftdi decoder: the first sample at the answer level, both bit orders and polarities",
          "[ftdi]")
{
    for (auto order : {ftdi_bit_order::msb_first, ftdi_bit_order::lsb_first})
        for (bool idle : {false, true})
            for (std::size_t at : {0u, 1u, 7u, 8u, 9u, 63u, 100u, 255u}) {
                const char i = idle ? '1' : '0', a = idle ? '0' : '1';
                auto bytes = pack(run(256, at, i, a), order);
                auto d = ftdi_decode(bytes.data(), bytes.size(), order, idle, !idle);
                INFO("order " << (order == ftdi_bit_order::msb_first ? "msb" : "lsb") << " idle "
                              << idle << " at " << at);
                CHECK(d.first == static_cast<std::int64_t>(at));
                CHECK_FALSE(d.glitch);
                CHECK_FALSE(d.stale);
                CHECK(d.last_level == !idle);
            }
}

TEST_CASE("ftdi decoder: a window read in the wrong bit order gives another answer", "[ftdi]")
{
    // Guards the test above against a decoder that ignores the order: sample 3 set in MSB
    // order is bit 4 of the byte, which LSB order reads as sample 4.
    auto bytes = pack(run(16, 3, '0', '1'), ftdi_bit_order::msb_first);
    CHECK(ftdi_decode(bytes.data(), bytes.size(), ftdi_bit_order::msb_first, false, true).first ==
          3);
    CHECK(ftdi_decode(bytes.data(), bytes.size(), ftdi_bit_order::lsb_first, false, true).glitch);
}

TEST_CASE("ftdi decoder: toggle and follow answers", "[ftdi]")
{
    auto order = ftdi_bit_order::msb_first;
    SECTION("toggle: any change from idle answers")
    {
        for (bool idle : {false, true}) {
            auto bytes = pack(run(64, 20, idle ? '1' : '0', idle ? '0' : '1'), order);
            CHECK(ftdi_decode(bytes.data(), bytes.size(), order, idle, !idle).first == 20);
        }
    }
    SECTION("follow: only the driven level answers; the other way is no answer")
    {
        // Rising stimulus, follow: the answer is 1; the line was 0 and rose at 12.
        auto up = pack(run(64, 12, '0', '1'), order);
        CHECK(ftdi_decode(up.data(), up.size(), order, false, true).first == 12);
        // Falling stimulus, follow: the answer is 0; the line was 1 and fell at 30.
        auto down = pack(run(64, 30, '1', '0'), order);
        CHECK(ftdi_decode(down.data(), down.size(), order, true, false).first == 30);
    }
}

TEST_CASE("ftdi decoder: a stale baseline is never measured", "[ftdi]")
{
    // Follow, rising edge: the line already shows 1 before the edge (a late answer to the
    // previous edge, or a far end out of step).
    auto order = ftdi_bit_order::msb_first;
    auto bytes = pack(std::string(64, '1'), order);
    auto d = ftdi_decode(bytes.data(), bytes.size(), order, true, true);
    CHECK(d.stale);
    CHECK(d.first == -1);
}

TEST_CASE("ftdi decoder: no edge in the window is no answer", "[ftdi]")
{
    auto order = ftdi_bit_order::lsb_first;
    for (bool idle : {false, true}) {
        auto bytes = pack(std::string(1024 * 8, idle ? '1' : '0'), order);
        auto d = ftdi_decode(bytes.data(), bytes.size(), order, idle, !idle);
        CHECK(d.first == -1);
        CHECK_FALSE(d.glitch);
        CHECK_FALSE(d.stale);
        CHECK(d.last_level == idle);
    }
}

TEST_CASE("ftdi decoder: a glitch is flagged and never taken for the answer", "[ftdi]")
{
    auto order = ftdi_bit_order::msb_first;
    SECTION("a pulse, then the answer: the answer is the final run, flagged")
    {
        std::string s = run(128, 70, '0', '1');
        s[10] = s[11] = '1';
        auto bytes = pack(s, order);
        auto d = ftdi_decode(bytes.data(), bytes.size(), order, false, true);
        CHECK(d.first == 70);
        CHECK(d.glitch);
    }
    SECTION("a pulse and nothing else: no answer, flagged")
    {
        std::string s(128, '1');
        s[40] = '0';
        auto bytes = pack(s, order);
        auto d = ftdi_decode(bytes.data(), bytes.size(), order, true, false);
        CHECK(d.first == -1);
        CHECK(d.glitch);
    }
    SECTION("a one-sample pulse inside the byte holding the answer")
    {
        std::string s = run(32, 13, '0', '1');
        s[9] = '1';
        auto bytes = pack(s, order);
        auto d = ftdi_decode(bytes.data(), bytes.size(), order, false, true);
        CHECK(d.first == 13);
        CHECK(d.glitch);
    }
}
