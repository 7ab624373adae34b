// SPDX-License-Identifier: MIT
// The parport line pair on the far-end simulator, in both of its flavours (raw I/O and ppdev
// register semantics): the same parport_lines code that runs on a real port.
#include "cycle-clock.hpp"
#include "error.hpp"
#include "open-as.hpp"
#include "parport/parport-defaults.hpp"
#include "parport/parport-lines.hpp"
#include "parport/parport-sim.hpp"
#include "registry.hpp"
#include "spec.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <chrono>
#include <thread>

using namespace irqloop;
using namespace irqloop::hw;

namespace
{

parport_pin pin(const char* name)
{
    return parport_pin_by_name(name, "test");
}

latency_model fixed_delay(const char* value)
{
    spec s(std::string("x:model=fixed,value=") + value);
    return latency_model::from_spec(s);
}

// The logger's wait: spin on sense() until it differs from @p before or the deadline passes.
// Returns the time from @p t0 in ns, or -1 when nothing came.
std::int64_t await_change(polled_wire& l, int before, std::int64_t timeout_ns,
                          std::int64_t t0 = monotonic_raw_ns())
{
    while (true) {
        int now = l.sense();
        if (now < 0)
            return -2; // the pair failed: no sample, and error() says why
        std::int64_t t = monotonic_raw_ns();
        if (now != before)
            return t - t0;
        if (t - t0 > timeout_ns)
            return -1;
    }
}

// One logger sample: drive @p level and wait for the response; latency from before the
// write (the simulator stamps the write itself), or -1 on timeout.
std::int64_t sample(polled_wire& l, bool level, std::int64_t timeout_ns)
{
    const int before = l.sense();
    const std::int64_t t0 = monotonic_raw_ns();
    l.drive(level);
    return await_change(l, before, timeout_ns, t0);
}

// Wait until the target has answered (or dropped) every edge so far: its counters are final.
void settle(parport_sim& sim)
{
    const std::int64_t until = monotonic_raw_ns() + 2'000'000'000;
    while (!sim.settled() && monotonic_raw_ns() < until)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    REQUIRE(sim.settled());
}

struct rig final {
    std::shared_ptr<parport_sim> sim;
    std::unique_ptr<parport_lines> pair;
};

rig make_rig(const char* out, const char* in, parport_sim_flavour fl, parport_sim_target t,
             role who = role::logger, bool both = true)
{
    rig r;
    parport_sim_port p;
    p.flavour = fl;
    r.sim = std::make_shared<parport_sim>(pin(out), pin(in), std::move(t), p);
    parport_options o;
    o.out = pin(out);
    o.in = pin(in);
    o.who = who;
    o.answers.both_edges = both;
    r.pair = std::make_unique<parport_lines>(make_parport_sim_io(r.sim), o);
    // Opening moves a control pin from its reset level to low: an edge the target answers.
    // Let that settle, as a real logger re-synchronises before its first stimulus.
    settle(*r.sim);
    return r;
}

/** A simulator without a target thread: the test plays the far end with far_drive(). */
parport_sim_target test_plays_far_end()
{
    parport_sim_target t;
    t.thread = false;
    return t;
}

/** One pin of the port, for the tests that walk the pin table. */
struct pin_case {
    const char* name;
    parport_register reg;
    unsigned mask;
    bool inverted;
};

const char* flavour_name(parport_sim_flavour f)
{
    return f == parport_sim_flavour::raw ? "raw" : "ppdev";
}

} // namespace

TEST_CASE("parport pin names resolve to the standard SPP register bits and inversions", "[parport]")
{
    // The table of the IEEE 1284 SPP port, written out here independently of the code's own.
    struct want {
        const char* name;
        unsigned db25;
        parport_register reg;
        unsigned mask;
        bool inverted;
    };
    const want table[] = {
        {"D0", 2, parport_register::data, 0x01, false},
        {"D3", 5, parport_register::data, 0x08, false},
        {"D7", 9, parport_register::data, 0x80, false},
        {"nACK", 10, parport_register::status, 0x40, false},
        {"BUSY", 11, parport_register::status, 0x80, true},
        {"PE", 12, parport_register::status, 0x20, false},
        {"SELECT", 13, parport_register::status, 0x10, false},
        {"nERROR", 15, parport_register::status, 0x08, false},
        {"nSTROBE", 1, parport_register::control, 0x01, true},
        {"nAUTOFD", 14, parport_register::control, 0x02, true},
        {"nINIT", 16, parport_register::control, 0x04, false},
        {"nSELECTIN", 17, parport_register::control, 0x08, true},
    };
    for (const auto& w : table) {
        INFO(w.name);
        parport_pin p = pin(w.name);
        CHECK(std::string(p.name) == w.name);
        CHECK(p.db25 == w.db25);
        CHECK(p.reg == w.reg);
        CHECK(p.mask == w.mask);
        CHECK(p.inverted == w.inverted);
        // By DB-25 number, too.
        CHECK(pin(("pin" + std::to_string(w.db25)).c_str()).mask == w.mask);
    }
    CHECK(std::string(pin("ack").name) == "nACK");
    CHECK(std::string(pin("Strobe").name) == "nSTROBE");
    CHECK(std::string(pin("paperout").name) == "PE");
    CHECK(std::string(pin("busy").name) == "BUSY");
}

TEST_CASE("parport default pins are the crossed cable's D3 and nACK", "[parport]")
{
    CHECK(pin(parport_defaults::out_pin).db25 == parport_defaults::out_db25);
    CHECK(pin(parport_defaults::in_pin).db25 == parport_defaults::in_db25);
}

TEST_CASE("parport unknown pin names are refused with the list of valid names", "[parport]")
{
    for (const char* bad : {"D8", "nBUSY2", "pin18", "pin0", "pinx", ""}) {
        INFO(bad);
        try {
            pin(bad);
            FAIL("accepted");
        } catch (const irqloop::error& e) {
            CHECK(e.status() == exit_usage);
            CHECK(e.message().find("unknown pin") != std::string::npos);
            CHECK(e.hint().find("D0..D7") != std::string::npos);
            CHECK(e.hint().find("nACK") != std::string::npos);
        }
    }
}

TEST_CASE("parport drive() sets the pin's electrical level through the register inversion",
          "[parport]")
{
    using enum parport_register;
    auto fl = GENERATE(parport_sim_flavour::raw, parport_sim_flavour::ppdev);
    auto c = GENERATE(
        pin_case{"D3", data, 0x08, false}, pin_case{"D6", data, 0x40, false},
        pin_case{"nSTROBE", control, 0x01, true}, pin_case{"nAUTOFD", control, 0x02, true},
        pin_case{"nINIT", control, 0x04, false}, pin_case{"nSELECTIN", control, 0x08, true});
    INFO(flavour_name(fl) << " " << c.name);
    auto r = make_rig(c.name, "nACK", fl, test_plays_far_end());
    auto reg = [&] { return c.reg == data ? r.sim->read_data() : r.sim->read_control(); };
    auto bit = [&] { return (reg() & c.mask) != 0; };

    CHECK(bit() == c.inverted); // opened at low level
    r.pair->drive(true);
    CHECK(bit() == !c.inverted);
    CHECK(r.sim->near_level(pin(c.name)));
    r.pair->drive(false);
    CHECK(bit() == c.inverted);
    CHECK_FALSE(r.sim->near_level(pin(c.name)));
    // Other bits of the register stay put: only the chosen pin moved.
    const int before = reg();
    r.pair->drive(true);
    CHECK((reg() ^ before) == static_cast<int>(c.mask));
    CHECK_FALSE(r.pair->error());
}

TEST_CASE("parport sense() returns the input pin's level whatever the status inversion",
          "[parport]")
{
    using enum parport_register;
    auto c = GENERATE(pin_case{"nACK", status, 0x40, false}, pin_case{"BUSY", status, 0x80, true},
                      pin_case{"PE", status, 0x20, false}, pin_case{"SELECT", status, 0x10, false},
                      pin_case{"nERROR", status, 0x08, false});
    auto fl = GENERATE(parport_sim_flavour::raw, parport_sim_flavour::ppdev);
    INFO(flavour_name(fl) << " " << c.name);
    auto r = make_rig("D3", c.name, fl, test_plays_far_end());
    for (bool level : {true, false, true}) {
        r.sim->far_drive(level);
        CHECK(((r.sim->read_status() & c.mask) != 0) == (level != c.inverted));
        CHECK(r.pair->sense() == (level ? 1 : 0));
    }
}

TEST_CASE("parport logger measures a simulated target on several pin pairs", "[parport]")
{
    auto fl = GENERATE(parport_sim_flavour::raw, parport_sim_flavour::ppdev);
    struct pair_case {
        const char* out;
        const char* in;
    };
    auto c = GENERATE(pair_case{"D3", "nACK"}, pair_case{"D0", "BUSY"},
                      pair_case{"nSTROBE", "SELECT"}, pair_case{"nSELECTIN", "BUSY"},
                      pair_case{"nINIT", "nERROR"}, pair_case{"D7", "PE"});
    INFO(flavour_name(fl) << " out=" << c.out << " in=" << c.in);
    parport_sim_target t;
    t.model = fixed_delay("50us");
    t.truth_capacity = 8;
    auto r = make_rig(c.out, c.in, fl, t);
    // Control lines idle high after reset; opening drives the out pin low: for a control
    // pin that is one edge, which the target answers. Data lines start low: no edge.
    const auto opened = r.sim->edges_seen();
    CHECK(opened == (pin(c.out).reg == parport_register::control ? 1u : 0u));
    bool level = false;
    for (int i = 0; i < 6; ++i) {
        level = !level;
        std::int64_t ns = sample(*r.pair, level, 2'000'000'000);
        REQUIRE(ns >= 0);
        CHECK(ns >= 50'000); // never earlier than the modelled delay
    }
    settle(*r.sim);
    CHECK(r.sim->edges_seen() == opened + 6);
    CHECK(r.sim->answers() == opened + 6);
    const auto& truth = r.sim->truths();
    REQUIRE(truth.size() == opened + 6);
    for (const auto& x : truth) {
        CHECK(x.answered);
        CHECK(x.answer_ns - x.edge_ns >= 50'000);
    }
}

TEST_CASE("parport logger sees a lost response as a timeout and resynchronises", "[parport]")
{
    auto fl = GENERATE(parport_sim_flavour::raw, parport_sim_flavour::ppdev);
    INFO(flavour_name(fl));
    parport_sim_target t;
    t.model = fixed_delay("20us");
    t.lose_every = 3;
    auto r = make_rig("D3", "nACK", fl, t);
    int answered = 0, timed_out = 0;
    bool level = false;
    for (int i = 0; i < 6; ++i) {
        level = !level;
        if (sample(*r.pair, level, 200'000'000) >= 0)
            ++answered;
        else
            ++timed_out;
    }
    settle(*r.sim);
    CHECK(answered == 4);
    CHECK(timed_out == 2);
    CHECK(r.sim->lost() == 2);
}

TEST_CASE("parport logger sees both changes of a target that answers twice", "[parport]")
{
    parport_sim_target t;
    t.model = fixed_delay("20us");
    t.answer_twice = true;
    // Long enough for the polling test thread to be scheduled in between on a busy machine:
    // a poller that sleeps through both answers sees nothing, as on hardware.
    t.twice_gap_ns = 100'000'000;
    auto r = make_rig("D3", "BUSY", parport_sim_flavour::raw, t);
    const int before = r.pair->sense();
    REQUIRE(sample(*r.pair, true, 2'000'000'000) >= 20'000);
    // The second answer puts the line back: seen as a second change.
    REQUIRE(await_change(*r.pair, 1 - before, 2'000'000'000) >= 0);
    CHECK(r.pair->sense() == before);
    settle(*r.sim);
    CHECK(r.sim->answers() == 2);
    CHECK(r.sim->edges_seen() == 1);
}

TEST_CASE("parport single-edge target answers the rising stimulus only", "[parport]")
{
    parport_sim_target t;
    t.model = fixed_delay("20us");
    t.rising_only = true;
    auto r = make_rig("D3", "nACK", parport_sim_flavour::raw, t, role::logger, false);
    CHECK_FALSE(r.pair->far_end_answers_both_edges());
    for (int i = 0; i < 3; ++i) {
        CHECK(sample(*r.pair, true, 2'000'000'000) >= 20'000);
        CHECK(sample(*r.pair, false, 5'000'000) == -1); // the re-arm edge: no answer
    }
    settle(*r.sim);
    CHECK(r.sim->edges_seen() == 6);
    CHECK(r.sim->edges_ignored() == 3);
    CHECK(r.sim->answers() == 3);
}

TEST_CASE("parport logger disables the port IRQ where the access method allows it", "[parport]")
{
    const parport_sim_target t = test_plays_far_end();
    // Raw I/O writes the whole control register: the logger turns the IRQ off, so response
    // edges do not interrupt its own loop.
    auto raw = make_rig("D3", "nACK", parport_sim_flavour::raw, t);
    CHECK((raw.sim->control_latch() & 0x10) == 0);
    CHECK((raw.sim->control_latch() & 0x20) == 0); // data lines driven, not reversed
    raw.sim->far_drive(true);
    CHECK(raw.sim->irqs() == 0);
    // ppdev masks bit 4 (PPCLAIM enabled it): the interrupt stays on, as documented.
    auto pp = make_rig("D3", "nACK", parport_sim_flavour::ppdev, t);
    CHECK((pp.sim->control_latch() & 0x10) != 0);
    pp.sim->far_drive(true);
    CHECK(pp.sim->irqs() == 1);
}

TEST_CASE("parport open fails with a clear message when no port answers at the address",
          "[parport]")
{
    parport_sim_target t;
    t.thread = false;
    parport_sim_port p;
    p.absent = true;
    auto sim = std::make_shared<parport_sim>(pin("D3"), pin("nACK"), t, p);
    parport_options o;
    o.out = pin("D3");
    o.in = pin("nACK");
    try {
        parport_lines l(make_parport_sim_io(sim), o);
        FAIL("opened a port that is not there");
    } catch (const irqloop::error& e) {
        CHECK(e.status() == exit_usage);
        CHECK(e.message().find("no parallel port answers") != std::string::npos);
        CHECK(e.hint().find("/proc/ioports") != std::string::npos);
    }
    o.check = false; // the escape hatch still opens it
    CHECK_NOTHROW(parport_lines(make_parport_sim_io(sim), o));
}

TEST_CASE("parport refuses an input as out and an output as in", "[parport]")
{
    auto sim = std::make_shared<parport_sim>(pin("D3"), pin("nACK"), test_plays_far_end());
    parport_options o;
    o.out = pin("BUSY");
    o.in = pin("nACK");
    CHECK_THROWS_AS(parport_lines(make_parport_sim_io(sim), o), irqloop::error);
    o.out = pin("D3");
    o.in = pin("D4");
    CHECK_THROWS_AS(parport_lines(make_parport_sim_io(sim), o), irqloop::error);
}

TEST_CASE("parport responder waits for the nACK interrupt through the ppdev flavour", "[parport]")
{
    parport_sim_target t;
    t.thread = false; // the test plays the logger
    auto r = make_rig("D3", "nACK", parport_sim_flavour::ppdev, t, role::responder);
    REQUIRE(r.pair->has_edge_events());
    CHECK((r.sim->control_latch() & 0x10) != 0);
    CHECK(r.pair->wait_edge(1'000'000) == 0); // nothing yet: timeout

    std::atomic<int> got{-2};
    std::thread responder([&] {
        got = r.pair->wait_edge(5'000'000'000);
        r.pair->drive(true);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    r.sim->far_drive(true); // rising nACK: the interrupt
    responder.join();
    CHECK(got == 1);
    CHECK(r.sim->near_level(pin("D3")));
    CHECK(r.pair->irqs() == 1);

    // A falling edge raises no interrupt.
    r.sim->far_drive(false);
    CHECK(r.pair->wait_edge(2'000'000) == 0);

    // Two interrupts before the responder looks: one edge reported, one counted missed.
    r.sim->far_drive(true);
    r.sim->far_drive(false);
    r.sim->far_drive(true);
    CHECK(r.pair->wait_edge(0) == 1);
    CHECK(r.pair->missed_edges() == 1);
}

TEST_CASE("parport responder has no edge events on raw I/O or on a pin other than nACK",
          "[parport]")
{
    const parport_sim_target t = test_plays_far_end();
    auto raw = make_rig("D3", "nACK", parport_sim_flavour::raw, t, role::responder);
    CHECK_FALSE(raw.pair->has_edge_events());
    CHECK(raw.pair->wait_edge(1000) == -1);
    auto busy = make_rig("D3", "BUSY", parport_sim_flavour::ppdev, t, role::responder);
    CHECK_FALSE(busy.pair->has_edge_events());
}

TEST_CASE("parport ctl_on_irq: the IRQ handler toggles the control pin, drive() writes nothing",
          "[parport]")
{
    parport_sim_target t;
    t.thread = false;
    auto sim = std::make_shared<parport_sim>(pin("nSTROBE"), pin("nACK"), t,
                                             parport_sim_port{parport_sim_flavour::ppdev});
    parport_options o;
    o.out = pin("nSTROBE");
    o.in = pin("nACK");
    o.who = role::responder;
    o.ctl_on_irq = pin("nSTROBE");
    parport_lines l(make_parport_sim_io(sim), o);
    CHECK_FALSE(sim->near_level(pin("nSTROBE")));
    bool level = false;
    for (int i = 0; i < 3; ++i) {
        // Catch2 assertions are not thread-safe: the responder thread only records.
        int waited = -2;
        std::uint64_t writes_before = 0, writes_after = 0;
        std::thread responder([&] {
            waited = l.wait_edge(5'000'000'000);
            writes_before = sim->writes();
            level = !level;
            l.drive(level); // already done by the "kernel"
            writes_after = sim->writes();
        });
        const std::int64_t until = monotonic_raw_ns() + 2'000'000'000;
        while (!sim->irq_armed() && monotonic_raw_ns() < until)
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        REQUIRE(sim->irq_armed());
        sim->far_drive(true);
        // The pin moved in the IRQ handler, whatever the responder thread does.
        CHECK(sim->near_level(pin("nSTROBE")) == (i % 2 == 0));
        responder.join();
        CHECK(waited == 1);
        CHECK(writes_after == writes_before);
        sim->far_drive(false);
    }
    CHECK(l.describe().find("ctl_on_irq=nSTROBE") != std::string::npos);
}

TEST_CASE("parport:sim= spec runs the parport code through the registry", "[parport]")
{
    auto l = test::open_as<parport_lines>(
        "parport:sim=raw,model=fixed,value=30us,edges=rising,read_cost=1us", role::logger);
    CHECK_FALSE(l->far_end_answers_both_edges());
    CHECK(l->describe() == "parport:sim=raw,out=D3,in=nACK,edges=rising");
    double read_ns = -1;
    for (const auto& m : l->metadata())
        if (m.key == "parport.status_read_ns")
            read_ns = std::stod(m.value);
    CHECK(read_ns >= 1000); // the modelled 1 us bus cycle shows in the measured poll cost
    l->start();
    CHECK(sample(*l, true, 2'000'000'000) >= 30'000);
    l->stop();
}

TEST_CASE("parport answer=follow: the target copies the stimulus level", "[parport]")
{
    auto l = test::open_as<parport_lines>(
        "parport:sim=raw,model=fixed,value=20us,edges=both,answer=follow,out=D5,in=BUSY",
        role::logger);
    CHECK(l->far_end_follows());
    CHECK(l->far_end_answers_both_edges());
    CHECK(l->describe() == "parport:sim=raw,out=D5,in=BUSY,edges=both,answer=follow");
    // The response ends at the level of the stimulus, whatever it was before.
    for (bool level : {true, false, true}) {
        CHECK(sample(*l, level, 2'000'000'000) >= 20'000);
        CHECK(l->sense() == (level ? 1 : 0));
    }
}

TEST_CASE("parport spec errors: method, edges, pins, ctl_on_irq", "[parport]")
{
    auto status_of = [](const char* text, role r = role::logger) {
        try {
            open_lines(text, r);
        } catch (const irqloop::error& e) {
            return e.status();
        }
        return 0;
    };
    CHECK(status_of("parport") == exit_usage);
    CHECK(status_of("parport:base=0x378,dev=/dev/parport0") == exit_usage);
    CHECK(status_of("parport:sim=raw,edges=falling") == exit_usage);
    CHECK(status_of("parport:sim=raw,answer=follow") == exit_usage); // needs edges=both
    CHECK(status_of("parport:sim=raw,answer=echo,edges=both") == exit_usage);
    CHECK(status_of("parport:sim=raw,out=nACK") == exit_usage);
    CHECK(status_of("parport:sim=raw,in=D2") == exit_usage);
    CHECK(status_of("parport:sim=raw,out=D9") == exit_usage);
    CHECK(status_of("parport:sim=isa") == exit_usage);
    CHECK(status_of("parport:sim=raw", role::responder) == exit_usage);
    CHECK(status_of("parport:sim=raw,ctl_on_irq=nSTROBE") == exit_usage);
    CHECK(status_of("parport:base=banana") == exit_usage);
    CHECK(status_of("parport:base=0x10000") == exit_usage);
}

TEST_CASE("parport ppdev on a missing device says which modules to load", "[parport]")
{
    try {
        open_lines("parport:dev=/dev/parport-irqloop-absent,out=D3,in=nACK", role::logger);
        FAIL("opened a missing device");
    } catch (const irqloop::error& e) {
        CHECK(e.status() == exit_usage);
        CHECK(e.message().find("/dev/parport-irqloop-absent") != std::string::npos);
        CHECK(e.hint().find("modprobe ppdev parport_pc") != std::string::npos);
    }
}

namespace
{

// The register simulator behind the real parport key parsing, for the registry test below.
std::shared_ptr<parport_sim> watched_port;

opener prepare_on_watched_port(spec& s, role r)
{
    auto p = take_parport_spec(s, r);
    return [p](const calibration_lookup&) {
        return std::make_unique<parport_lines>(make_parport_sim_io(watched_port), p.lines);
    };
}

} // namespace

TEST_CASE("parport spec with an unknown key is refused before any register is written", "[parport]")
{
    // The registry's own order (take the keys, finish(), then open) with the port the test
    // watches: the parport entry's parsing, and parport_lines on the register simulator.
    watched_port = std::make_shared<parport_sim>(pin("D3"), pin("nACK"), test_plays_far_end());
    const std::vector<backend_entry> list = {{"parport", "", "", prepare_on_watched_port, nullptr}};
    const std::uint8_t control_at_reset = watched_port->control_latch();
    const int data_at_reset = watched_port->read_data();
    for (const char* typo : {"parport:sim=raw,chek=no", "parport:sim=raw,out=D3,edge=both",
                             "parport:sim=raw,answer=follow,edges=both,x=1"}) {
        INFO(typo);
        try {
            open_lines(typo, role::logger, list);
            FAIL("accepted");
        } catch (const irqloop::error& e) {
            CHECK(e.status() == exit_usage);
            CHECK(e.message().find("unknown key") != std::string::npos);
        }
        CHECK(watched_port->writes() == 0);
        CHECK(watched_port->control_latch() == control_at_reset);
        CHECK(watched_port->read_data() == data_at_reset);
    }
    // Without the typo the same path writes the port: the count above would have seen it.
    auto pair = open_lines("parport:sim=raw,check=no", role::logger, list);
    CHECK(watched_port->writes() > 0);
    pair.reset();
    watched_port.reset();

    // Through the real registry: the key is named, not the port's absence or permission.
    for (const char* typo : {"parport:base=0x378,chek=no", "parport:dev=/dev/parport-absent,x=1",
                             "parport:sim=raw,lose_evry=3"}) {
        INFO(typo);
        try {
            open_lines(typo, role::logger);
            FAIL("accepted");
        } catch (const irqloop::error& e) {
            CHECK(e.status() == exit_usage);
            CHECK(e.message().find("unknown key") != std::string::npos);
        }
    }
}

TEST_CASE("parport keys of another access method are unknown keys", "[parport]")
{
    auto message_of = [](const char* text) {
        try {
            open_lines(text, role::logger);
        } catch (const irqloop::error& e) {
            return e.message();
        }
        return std::string("accepted");
    };
    CHECK(message_of("parport:sim=raw,excl=no").find("unknown key 'excl'") != std::string::npos);
    CHECK(message_of("parport:base=0x378,model=fixed").find("unknown key 'model'") !=
          std::string::npos);
}
