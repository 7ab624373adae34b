// SPDX-License-Identifier: MIT
// The base both programs share: the program's name in error text, stop signals, the
// real-time options and the CLI main wrapper's exit statuses.
#include "cli-main.hpp"
#include "error.hpp"
#include "rt-options.hpp"
#include "run-process.hpp"
#include "stop-signal.hpp"

#include <boost/program_options.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <csignal>
#include <stdexcept>

using namespace irqloop;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;
namespace po = boost::program_options;

namespace
{

const std::string responder_bin = IRQLOOP_RESPONDER_BIN;
const std::string irqloop_bin = IRQLOOP_BIN;

void (*current_handler(int sig))(int)
{
    struct sigaction now {
    };
    sigaction(sig, nullptr, &now);
    return now.sa_handler;
}

base::rt_options parse_rt(std::vector<std::string> args)
{
    base::rt_options o;
    po::options_description d;
    base::add_rt_options(d, o, "the test thread");
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(d).run(), vm);
    po::notify(vm);
    return o;
}

} // namespace

TEST_CASE("base: error text starts with the program's own name", "[base]")
{
    const error e("open backend 'x'", "no such thing", "check the spec");
    CHECK(program_name() == "irqloop");
    CHECK(e.message() == "irqloop: open backend 'x': no such thing (check the spec)");
    {
        struct restore // the rest of this process's tests expect "irqloop"
        {
            ~restore() { set_program_name("irqloop"); }
        } guard;
        set_program_name("irqloop-responder");
        CHECK(e.message() == "irqloop-responder: open backend 'x': no such thing (check the spec)");
    }
    CHECK(e.message() == "irqloop: open backend 'x': no such thing (check the spec)");
}

TEST_CASE("base: SIGINT and SIGTERM set the stop flag once, then the old handlers return", "[base]")
{
    for (int sig : {SIGINT, SIGTERM}) {
        DYNAMIC_SECTION("signal " << sig)
        {
            auto* before = current_handler(sig);
            {
                base::stop_signals stop;
                CHECK_FALSE(stop.flag().load());
                CHECK(stop.signal() == 0);
                CHECK(current_handler(sig) != before);
                REQUIRE(raise(sig) == 0);
                CHECK(stop.flag().load());
                CHECK(stop.signal() == sig);
                // The first signal asks; a second one gets the default action.
                CHECK(current_handler(sig) == SIG_DFL);
                CHECK_THROWS_AS(base::stop_signals(), error); // one at a time
            }
            CHECK(current_handler(sig) == before);
            base::stop_signals again; // a new scope starts cleared
            CHECK_FALSE(again.flag().load());
            CHECK(again.signal() == 0);
        }
    }
}

TEST_CASE("base: the real-time options parse, default and range-check the same for both programs",
          "[base]")
{
    auto req = base::to_rt_request(parse_rt({}));
    CHECK(req.priority == 80);
    CHECK(req.cpu == -1);
    CHECK(req.mlock);
    CHECK(req.dma_latency);
    CHECK_FALSE(req.strict);

    req = base::to_rt_request(
        parse_rt({"-p", "0", "--cpu", "1", "--no-mlock", "--no-dma-latency", "--strict-rt"}));
    CHECK(req.priority == 0);
    CHECK(req.cpu == 1);
    CHECK_FALSE(req.mlock);
    CHECK_FALSE(req.dma_latency);
    CHECK(req.strict);

    CHECK(base::to_rt_request(parse_rt({"--priority", "99", "-a", "1023"})).cpu == 1023);
    for (auto bad : std::vector<std::vector<std::string>>{
             {"--priority", "100"}, {"--priority", "-1"}, {"--cpu", "-2"}, {"--cpu", "1024"}}) {
        try {
            base::to_rt_request(parse_rt(bad));
            FAIL("accepted " << bad[0] << " " << bad[1]);
        } catch (const error& e) {
            CHECK(e.status() == exit_usage);
            CHECK_THAT(e.message(), StartsWith("irqloop: bad value for " + bad[0]));
        }
    }
}

TEST_CASE("base: the CLI main wrapper turns each kind of failure into its exit status", "[base]")
{
    auto ok = [](int, char**) { return 0; };
    auto gate = [](int, char**) { return 3; };
    auto bad_input = [](int, char**) -> int { throw error("parse", "bad", "fix it"); };
    auto runtime = [](int, char**) -> int { throw error("write", "disk full", "", exit_failure); };
    auto bad_option = [](int, char**) -> int { throw po::unknown_option("--nope"); };
    auto bug = [](int, char**) -> int { throw std::logic_error("oops"); };
    auto odd = [](int, char**) -> int { throw 42; };
    char* argv[] = {nullptr};
    CHECK(base::run_main(ok, 0, argv) == exit_ok);
    CHECK(base::run_main(gate, 0, argv) == 3);
    CHECK(base::run_main(bad_input, 0, argv, "run") == exit_usage);
    CHECK(base::run_main(runtime, 0, argv) == exit_failure);
    CHECK(base::run_main(bad_option, 0, argv, "run") == exit_usage);
    CHECK(base::run_main(bug, 0, argv) == exit_failure);
    CHECK(base::run_main(odd, 0, argv) == exit_failure);
}

TEST_CASE("base: both programs word their errors alike, each under its own name", "[base]")
{
    auto r = test::run_process({responder_bin, "--hw", "sim", "--priority", "100"});
    CHECK(r.status == exit_usage);
    CHECK(r.err ==
          "irqloop-responder: bad value for --priority: '100' (use 0 (SCHED_OTHER) to 99)\n");
    r = test::run_process({irqloop_bin, "run", "--no-db", "--priority", "100"});
    CHECK(r.status == exit_usage);
    CHECK(r.err == "irqloop: bad value for --priority: '100' (use 0 (SCHED_OTHER) to 99)\n");

    r = test::run_process({responder_bin, "--nope"});
    CHECK(r.status == exit_usage);
    CHECK(r.err ==
          "irqloop-responder: unrecognised option '--nope' (see 'irqloop-responder --help')\n");
    r = test::run_process({irqloop_bin, "run", "--nope"});
    CHECK(r.status == exit_usage);
    CHECK(r.err == "irqloop: run: unrecognised option '--nope' (see 'irqloop run --help')\n");

    r = test::run_process({responder_bin, "--hw", "nosuch"});
    CHECK(r.status == exit_usage);
    CHECK_THAT(r.err, StartsWith("irqloop-responder: open backend 'nosuch': "));

    r = test::run_process({responder_bin, "--version"});
    CHECK(r.status == exit_ok);
    CHECK_THAT(r.out, StartsWith("irqloop-responder "));
    r = test::run_process({irqloop_bin, "--version"});
    CHECK(r.status == exit_ok);
    CHECK_THAT(r.out, StartsWith("irqloop "));
}
