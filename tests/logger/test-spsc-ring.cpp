// SPDX-License-Identifier: MIT
#include "spsc-ring.hpp"

#include <catch2/catch_test_macros.hpp>
#include <thread>
#include <vector>

using irqloop::logger::spsc_ring;

TEST_CASE("the ring refuses a push when full and never overwrites", "[ring]")
{
    spsc_ring<int> r(4);
    REQUIRE(r.capacity() == 4);
    for (int i = 0; i < 4; ++i)
        CHECK(r.try_push(i));
    CHECK_FALSE(r.try_push(99));
    std::vector<int> out(8);
    REQUIRE(r.pop(out) == 4);
    CHECK(out[0] == 0);
    CHECK(out[3] == 3);
    CHECK(r.pop(out) == 0);
}

TEST_CASE("the ring carries ten million items between two threads in order", "[ring]")
{
    spsc_ring<std::uint64_t> r(1024);
    constexpr std::uint64_t n = 10'000'000;
    std::uint64_t dropped = 0;
    std::thread producer([&] {
        for (std::uint64_t i = 0; i < n;)
            if (r.try_push(i))
                ++i;
            else
                ++dropped;
    });
    std::vector<std::uint64_t> buf(256);
    std::uint64_t expect = 0;
    bool in_order = true;
    while (expect < n) {
        std::size_t k = r.pop(buf);
        for (std::size_t i = 0; i < k; ++i)
            in_order &= buf[i] == expect++;
    }
    producer.join();
    CHECK(in_order);
    CHECK(expect == n);
}
