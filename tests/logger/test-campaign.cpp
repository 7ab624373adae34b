// SPDX-License-Identifier: MIT
// `irqloop campaign`: three phases on the sim board give three labelled runs and the compare
// table; killed during phase 2, a re-run resumes at phase 2 without repeating phase 1.
#include "campaign-command.hpp"
#include "db-query.hpp"
#include "error.hpp"
#include "parse-words.hpp"
#include "run-command.hpp"
#include "run-process.hpp"
#include "run-request.hpp"
#include "temp-dir.hpp"
#include "test-campaign-file.hpp"

#include <SQLiteCpp/Database.h>
#include <boost/program_options/errors.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace irqloop::test;
using Catch::Matchers::ContainsSubstring;

TEST_CASE("campaign: three phases into one file, and a kill during phase 2 resumes at phase 2",
          "[run][cli][campaign]")
{
    campaign_file night("night");
    const auto& dir = night.dir;
    const auto &db = night.db, &ini = night.ini;
    night.write(std::string("[idle]\nduration = 1s\nprogress = none\ntarget = sim board\n") +
                "[load]\nduration = 4s\nprogress = none\nstats-interval = 200ms\n" +
                "[after]\nsamples = 2000\nprogress = none\n");
    background_process first({IRQLOOP_BIN, "campaign", ini}, dir / "first.log");
    bool in_phase2 = false;
    for (int i = 0; i < 200 && !in_phase2; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        try {
            in_phase2 =
                std::filesystem::exists(db) &&
                query_int(
                    db, "SELECT count(*) FROM runs WHERE label = 'load' AND status = 'running'") ==
                    1;
        } catch (const SQLite::Exception&) {
        }
    }
    INFO("the first campaign's output so far:\n" << file_text(dir / "first.log"));
    REQUIRE(in_phase2);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    first.signal(SIGKILL);
    CHECK(first.wait() == 128 + SIGKILL);
    CHECK(query_int(db, "SELECT count(*) FROM runs WHERE label = 'idle' AND status = 'complete'") ==
          1);
    CHECK(query_int(db, "SELECT count(*) FROM runs WHERE label = 'after'") == 0);

    auto again = run_process({IRQLOOP_BIN, "campaign", ini});
    INFO(again.out << again.err);
    REQUIRE(again.status == 0);
    CHECK_THAT(again.out,
               ContainsSubstring("campaign: phase 1/3 'idle': complete (run 1), skipped"));
    CHECK_THAT(again.out, ContainsSubstring("campaign: phase 2/3 'load'\n"));
    CHECK_THAT(again.out, ContainsSubstring("campaign: phase 3/3 'after'\n"));
    CHECK(query_int(db, "SELECT count(*) FROM runs WHERE label = 'idle'") == 1); // not repeated
    CHECK(query_int(db, "SELECT count(*) FROM runs WHERE label = 'load' AND status = 'complete'") ==
          1);
    CHECK(query_int(
              db, "SELECT count(*) FROM runs WHERE label = 'after' AND status = 'complete'") == 1);
    // The compare table, one row per label.
    CHECK_THAT(again.out, ContainsSubstring("label "));
    for (const char* l : {"\nidle ", "\nload ", "\nafter "})
        CHECK_THAT(again.out, ContainsSubstring(l));

    auto third = run_process({IRQLOOP_BIN, "campaign", ini});
    CHECK(third.status == 0);
    CHECK_THAT(third.out, ContainsSubstring("phase 3/3 'after': complete"));
    CHECK(query_int(db, "SELECT count(*) FROM runs WHERE status = 'complete'") == 3);
}

TEST_CASE("campaign: a bad file is refused with exit 2", "[cli][campaign]")
{
    temp_dir dir;
    const std::string ini = dir / "bad.ini";
    std::ofstream(ini) << "colour = red\n[idle]\nduration = 1s\n";
    auto r = run_process({IRQLOOP_BIN, "campaign", ini});
    CHECK(r.status == 2);
    CHECK_THAT(r.err, ContainsSubstring("unknown top-level key 'colour'"));
    std::ofstream(ini) << "db = x.db\n[idle]\ndb = y.db\n";
    r = run_process({IRQLOOP_BIN, "campaign", ini});
    CHECK(r.status == 2);
    r = run_process({IRQLOOP_BIN, "campaign", dir / "none.ini"});
    CHECK(r.status == 2);
}

// Every phase is parsed into its run request before the first one starts: a bad key or value
// in the last phase is refused at once with exit 2, names the phase, and makes no file. The
// first phase would take 5 s: a quick return shows it never ran.
TEST_CASE("campaign: a typo or a bad value in the last phase is refused before phase 1 runs, "
          "and no file is made",
          "[cli][campaign]")
{
    campaign_file night("night");
    const auto &db = night.db, &ini = night.ini;
    const std::string first = "[idle]\nduration = 5s\nprogress = none\n";
    struct bad_phase {
        const char* text;
        const char* says;
    };
    for (const auto& [text, says] : {
             bad_phase{"[after]\nduraton = 1s\n", "unrecognised option 'duraton'"},
             bad_phase{"[after]\nduration = 1s\ninterval = -5us\n", "bad value for --interval"},
             bad_phase{"[after]\nsamples = 10\nduration = 1s\n", "--samples and --duration"},
             bad_phase{"[after]\nduration = 1s\nhw = sim:model=fixed,valeu=30us\n", "valeu"},
             bad_phase{"[after]\nduration = 1s\nraw = perhaps\n", "raw"},
         }) {
        INFO(text);
        night.write(first + "[load]\nsamples = 100\n" + text);
        auto r = run_process({IRQLOOP_BIN, "campaign", ini});
        INFO(r.out << r.err);
        CHECK(r.status == 2);
        CHECK_THAT(r.err, ContainsSubstring("irqloop: campaign: " + ini + ": phase [after]"));
        CHECK_THAT(r.err, ContainsSubstring(says));
        CHECK(r.out.find("campaign: phase 1/3") == std::string::npos);
        CHECK(r.seconds < 3.0);
        CHECK_FALSE(std::filesystem::exists(db));
    }
}

// A switch given as a key takes true and false, as in a config file; the phase's keys reach
// the run as its options (stored command line, label, raw samples).
TEST_CASE("campaign: a phase's keys become its run's options, switches included",
          "[run][cli][campaign]")
{
    campaign_file night("night");
    const auto &db = night.db, &ini = night.ini;
    night.write("[short]\nsamples = 300\nprogress = none\nraw = true\n"
                "keep-disturbed = false\ntarget = sim board, idle\n");
    auto r = run_process({IRQLOOP_BIN, "campaign", ini});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(query_int(db, "SELECT count(*) FROM raw_samples") == 300);
    CHECK(query_text(db, "SELECT label FROM runs") == "short");
    CHECK(query_text(db, "SELECT target FROM runs") == "sim board, idle");
    CHECK_THAT(query_text(db, "SELECT command_line FROM runs"),
               ContainsSubstring("irqloop run --db " + db +
                                 " --samples 300 --progress none "
                                 "--raw true --keep-disturbed false --target 'sim board, idle' "
                                 "--label short"));
}

// The parse step alone: the keys become the request's figures, in ns and counts, and a bad
// key, value or spec key throws; nothing is opened, so nothing is made in the directory.
TEST_CASE("campaign: parse_run_keys() builds the run request without opening anything",
          "[cli][campaign]")
{
    using irqloop::logger::parse_run_keys;
    temp_dir dir;
    const std::string db = dir / "x.db";
    const auto req = parse_run_keys({{"db", db},
                                     {"duration", "2s"},
                                     {"interval", "250us"},
                                     {"hw", "sim:model=fixed,value=30us"},
                                     {"raw", ""},
                                     {"fail-above", "100us"},
                                     {"label", "idle"}},
                                    "irqloop run --duration 2s");
    CHECK(req.opt.timing.duration_ns == 2'000'000'000);
    CHECK(req.opt.timing.interval_ns == 250'000);
    CHECK(req.opt.recording.raw);
    CHECK(req.opt.recording.label == "idle");
    CHECK(req.opt.recording.db_path == db);
    CHECK(req.hw == "sim:model=fixed,value=30us");
    REQUIRE(req.gates.max_ns);
    CHECK(*req.gates.max_ns == 100'000);
    CHECK(req.opt.recording.command_line == "irqloop run --duration 2s");
    CHECK_THROWS_AS(parse_run_keys({{"duraton", "1s"}}, ""), boost::program_options::error);
    CHECK_THROWS_AS(parse_run_keys({{"interval", "-5us"}}, ""), irqloop::error);
    CHECK_THROWS_AS(parse_run_keys({{"hw", "sim:modle=fixed"}}, ""), irqloop::error);
    CHECK_THROWS_AS(parse_run_keys({{"hw", "nosuch:x=1"}}, ""), irqloop::error);
    CHECK(std::filesystem::is_empty(dir.path()));
}

namespace
{

} // namespace

// The parse steps the CLI fuzz target calls: requests from words, --help as text, nothing
// opened or made (no results file, no wire), a campaign refused whole for its last phase.
TEST_CASE("campaign: parse_run, parse_calibrate and parse_campaign open and make nothing",
          "[cli][campaign]")
{
    namespace logger = irqloop::logger;
    campaign_file night("night");
    const std::string& db = night.db;
    const auto run = parse_words(logger::parse_run, {"run", "--db", db, "-D", "2s", "--fail-p",
                                                     "99.5=40us", "--on-threshold", "stop"});
    REQUIRE(run.request);
    CHECK(run.request->opt.timing.duration_ns == 2'000'000'000);
    CHECK(run.request->opt.recording.db_path == db);
    REQUIRE(run.request->gates.percentiles.size() == 1);
    CHECK(run.request->gates.percentiles[0].second == 40'000);
    CHECK(run.request->opt.soak.actions.size() == 1);
    CHECK(run.request->opt.recording.command_line ==
          "irqloop run --db " + db + " -D 2s --fail-p 99.5=40us --on-threshold stop");
    const auto cal = parse_words(logger::parse_calibrate, {"calibrate", "--db", db});
    REQUIRE(cal.request);
    CHECK(cal.request->floor);
    CHECK(cal.request->hw == "sim:model=fixed,value=0");
    CHECK(cal.request->opt.recording.label == "floor");
    CHECK(cal.request->opt.recording.kind == irqloop::db::run_kind::floor);
    CHECK(cal.request->opt.timing.interval_ns == 10'000);
    const auto help = parse_words(logger::parse_run, {"run", "--help"});
    CHECK_FALSE(help.request);
    CHECK_THAT(help.text, ContainsSubstring("usage: irqloop run [options]"));
    CHECK_THROWS_AS(parse_words(logger::parse_run, {"run", "-n", "10", "-D", "1s"}),
                    irqloop::error);

    night.write("[idle]\nsamples = 100\nprogress = none\n[after]\nduraton = 1s\n");
    CHECK_THROWS_WITH(parse_words(logger::parse_campaign, {"campaign", night.ini}),
                      ContainsSubstring("phase [after]"));
    night.write("[idle]\nsamples = 100\nprogress = none\n[after]\nduration = 1s\nmax = 1ms\n");
    const auto camp = parse_words(logger::parse_campaign, {"campaign", night.ini});
    REQUIRE(camp.request);
    REQUIRE(camp.request->phases.size() == 2);
    CHECK(camp.request->phases[0].request.opt.timing.samples == 100);
    CHECK(camp.request->phases[1].request.opt.recording.label == "after");
    CHECK(camp.request->phases[1].gates.max_ns == 1'000'000);
    CHECK_FALSE(std::filesystem::exists(db));

    // parse() ends whatever it is given: what is not a regular file, or a huge one, is
    // refused before a byte is read (a FIFO would block, /dev/zero never ends).
    CHECK_THROWS_WITH(parse_words(logger::parse_campaign, {"campaign", "/dev/zero"}),
                      ContainsSubstring("not a regular file"));
    std::filesystem::resize_file(night.ini, (1u << 20) + 1);
    CHECK_THROWS_WITH(parse_words(logger::parse_campaign, {"campaign", night.ini}),
                      ContainsSubstring("larger than 1 MiB"));
}
