// SPDX-License-Identifier: MIT
#include "error.hpp"
#include "far-end.hpp"
#include "ftdi/ftdi-lines.hpp"
#include "registry.hpp"
#include "shm/shm-lines.hpp"
#include "sim/sim-lines.hpp"
#include "spec.hpp"
#if IRQLOOP_HAVE_GPIOD
#include "gpiod/gpiod-lines.hpp"
#endif
#if IRQLOOP_HAVE_PARPORT
#include "parport/parport-lines.hpp"
#endif

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

using namespace irqloop;
using Catch::Matchers::ContainsSubstring;

namespace
{

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
        CHECK((b.prepare != nullptr) != (b.missing != nullptr));
    }
}

namespace
{

using hw::far_end;

/** How one backend reads the far-end keys: its own take step, without touching hardware. */
struct far_end_reader {
    const char* prefix; ///< the spec before the far-end keys
    far_end (*take)(hw::spec& s);
    far_end usual; ///< documented defaults
};

std::vector<far_end_reader> far_end_readers()
{
    std::vector<far_end_reader> r = {
        {"shm:name=x",
         [](hw::spec& s) { return hw::take_shm_options(s, hw::role::logger).answers; },
         {true, false}},
        {"sim:model=fixed",
         [](hw::spec& s) { return hw::take_sim_options(s, hw::role::logger).answers; },
         {true, true}},
    };
#if IRQLOOP_HAVE_GPIOD
    r.push_back({"gpiod:chip=x",
                 [](hw::spec& s) { return hw::take_gpiod_options(s, hw::role::logger).answers; },
                 {true, false}});
#endif
#if IRQLOOP_HAVE_PARPORT
    r.push_back(
        {"parport:sim=raw",
         [](hw::spec& s) { return hw::take_parport_spec(s, hw::role::logger).lines.answers; },
         {false, false}});
#endif
    return r;
}

/** The far end @p reader makes of "PREFIX,KEYS"; every key must be taken. */
far_end read_far_end(const far_end_reader& reader, const std::string& keys)
{
    hw::spec s(std::string(reader.prefix) + (keys.empty() ? "" : "," + keys));
    far_end f = reader.take(s);
    s.finish();
    return f;
}

/** The message of the error that reading @p keys throws, with exit status 2. */
std::string far_end_error(const far_end_reader& reader, const std::string& keys)
{
    try {
        read_far_end(reader, keys);
    } catch (const error& e) {
        CHECK(e.status() == exit_usage);
        return e.message();
    }
    FAIL("'" << reader.prefix << "," << keys << "' was accepted");
    return {};
}

bool same(const far_end& a, const far_end& b)
{
    return a.both_edges == b.both_edges && a.follow == b.follow;
}

} // namespace

TEST_CASE("every backend reads edges and answer with one meaning and one default rule", "[spec]")
{
    for (const auto& b : far_end_readers()) {
        INFO(b.prefix);
        CHECK(same(read_far_end(b, ""), b.usual));
        CHECK(same(read_far_end(b, "edges=rising"), {false, false})); // single edge: toggle
        CHECK(same(read_far_end(b, "edges=both"), {true, b.usual.follow}));
        CHECK(same(read_far_end(b, "edges=both,answer=follow"), {true, true}));
        CHECK(same(read_far_end(b, "edges=both,answer=toggle"), {true, false}));
        CHECK(same(read_far_end(b, "edges=rising,answer=toggle"), {false, false}));
        CHECK_THAT(far_end_error(b, "edges=rising,answer=follow"),
                   ContainsSubstring("answer=follow needs edges=both"));
        CHECK_THAT(far_end_error(b, "edges=falling"), ContainsSubstring("key 'edges'"));
        CHECK_THAT(far_end_error(b, "edges=both,answer=echo"), ContainsSubstring("key 'answer'"));
    }
}

TEST_CASE("the line pair reports the far end its spec named", "[spec]")
{
    auto sim = hw::open_lines("sim:edges=rising", hw::role::logger);
    CHECK_FALSE(sim->far_end_answers_both_edges());
    CHECK_FALSE(sim->far_end_follows());
    CHECK(sim->describe().find(",edges=rising,answer=toggle") != std::string::npos);
    auto sim_default = hw::open_lines("sim", hw::role::logger);
    CHECK(sim_default->far_end_answers_both_edges());
    CHECK(sim_default->far_end_follows());

    const std::string name = "irqloop-test-far-end-" + std::to_string(::getpid());
    auto shm = hw::open_lines("shm:name=" + name + ",unlink=yes,edges=rising", hw::role::logger);
    CHECK_FALSE(shm->far_end_answers_both_edges());
    CHECK_FALSE(shm->far_end_follows());
    CHECK(shm->describe() == "shm:name=" + name + ",edges=rising");
    auto follows = hw::open_lines("shm:name=" + name + ",answer=follow", hw::role::logger);
    CHECK(follows->far_end_answers_both_edges());
    CHECK(follows->far_end_follows());
    CHECK(follows->describe() == "shm:name=" + name + ",answer=follow");
}

TEST_CASE("an unknown key is refused before the shared-memory segment is created", "[spec]")
{
    const std::string name = "irqloop-test-refused-" + std::to_string(::getpid());
    const std::string path = "/dev/shm/irqloop-" + name;
    REQUIRE_FALSE(std::filesystem::exists(path));
    CHECK_THAT(message_of("shm:name=" + name + ",unlnk=yes"),
               ContainsSubstring("unknown key 'unlnk'"));
    CHECK_FALSE(std::filesystem::exists(path));
    // The same spec without the typo creates it: the check above can see a segment.
    {
        auto wire = hw::open_lines("shm:name=" + name + ",unlink=yes", hw::role::logger);
        CHECK(std::filesystem::exists(path));
    }
    CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("ftdi reads the far-end keys too, and measures both edges only", "[spec]")
{
    const far_end_reader chip{
        "ftdi:desc=x",
        [](hw::spec& s) {
            return far_end{true, hw::take_ftdi_spec(s, hw::role::logger).options.follow};
        },
        {true, false}};
    const far_end_reader sim{
        "ftdi:sim=ft232h",
        [](hw::spec& s) {
            return far_end{true, hw::take_ftdi_spec(s, hw::role::logger).options.follow};
        },
        {true, true}};
    for (const auto& b : {chip, sim}) {
        INFO(b.prefix);
        CHECK(same(read_far_end(b, ""), b.usual));
        CHECK(same(read_far_end(b, "edges=both,answer=follow"), {true, true}));
        CHECK(same(read_far_end(b, "answer=toggle"), {true, false}));
        CHECK_THAT(far_end_error(b, "edges=rising"), ContainsSubstring("edges=rising"));
        CHECK_THAT(far_end_error(b, "answer=echo"), ContainsSubstring("key 'answer'"));
    }
}
