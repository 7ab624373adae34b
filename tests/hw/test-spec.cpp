// SPDX-License-Identifier: MIT
#include "error.hpp"
#include "registry.hpp"
#include "spec.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

using namespace irqloop;
using Catch::Matchers::ContainsSubstring;

namespace {

std::string message_of(const std::string& spec_text)
{
    try {
        hw::open_lines(spec_text, hw::role::logger);
    } catch (const error& e) {
        CHECK(e.status() == exit_usage);
        return e.message();
    }
    FAIL("spec '" << spec_text << "' was accepted");
    return {};
}

} // namespace

TEST_CASE("a spec splits into a name and key=value pairs", "[spec]")
{
    hw::spec s("gpiod:chip=gpiochip0,out=17,in=27");
    CHECK(s.name() == "gpiod");
    CHECK(s.take_string("chip", "") == "gpiochip0");
    CHECK(s.take_count("out", 0) == 17);
    CHECK(s.take_count("in", 0) == 27);
    CHECK_NOTHROW(s.finish());
    hw::spec bare("sim");
    CHECK(bare.name() == "sim");
    CHECK_NOTHROW(bare.finish());
}

TEST_CASE("an unknown backend lists the known ones", "[spec]")
{
    auto m = message_of("usb3000");
    CHECK_THAT(m, ContainsSubstring("unknown backend"));
    CHECK_THAT(m, ContainsSubstring("sim"));
    CHECK_THAT(m, ContainsSubstring("shm"));
}

TEST_CASE("unknown keys and malformed values name the key", "[spec]")
{
    CHECK_THAT(message_of("sim:colour=blue"), ContainsSubstring("unknown key 'colour'"));
    CHECK_THAT(message_of("sim:mean=fast"), ContainsSubstring("key 'mean'"));
    CHECK_THAT(message_of("sim:model=normal,mean"), ContainsSubstring("'mean' is not key=value"));
    CHECK_THAT(message_of("sim:model=gamma"), ContainsSubstring("key 'model'"));
    CHECK_THAT(message_of("sim:loss_p=2"), ContainsSubstring("'loss_p'"));
    CHECK_THAT(message_of("sim:mean=1us,mean=2us"), ContainsSubstring("given twice"));
    CHECK_THAT(message_of("shm:name=a/b"), ContainsSubstring("key 'name'"));
    CHECK_THAT(message_of(":x=1"), ContainsSubstring("no backend name"));
}

TEST_CASE("the backend list is alphabetical and every entry has an example", "[spec]")
{
    const auto& list = hw::backends();
    REQUIRE(list.size() >= 2);
    for (std::size_t i = 1; i < list.size(); ++i)
        CHECK(std::string(list[i - 1].name) < std::string(list[i].name));
    for (const auto& b : list) {
        CHECK(std::string(b.example).rfind(b.name, 0) == 0);
        CHECK((b.open != nullptr) != (b.missing != nullptr));
    }
}
