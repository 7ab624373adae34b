// SPDX-License-Identifier: MIT
// `irqloop verify` end to end (issue 29): a real sim run's stored truth written as a capture,
// converted to a sigrok session by sigrok-cli and read back; the result stored with the run
// (schema version 7); bad input refused with exit 2 and the file left as it was.
#include "capture-align.hpp"
#include "capture.hpp"
#include "read.hpp"
#include "run-process.hpp"
#include "sim-raw-run.hpp"
#include "store.hpp"
#include "temp-dir.hpp"
#include "verify-store.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <catch2/catch_test_macros.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

using namespace irqloop;
using namespace irqloop::analysis;
using irqloop::test::read_bytes;
using irqloop::test::run_irqloop;
using irqloop::test::run_shell;
using irqloop::test::seeded_raw_run;
using irqloop::test::temp_dir;

namespace
{

// The capture an analyzer at @p rate_hz would make of the run: STIM toggles at each stimulus
// (its stored time), RESP at each drawn answer (time + truth); 1 ms of lead; floored to the
// analyzer's samples. @p shifted answers come 2 us later.
capture verify_truth_capture(const std::vector<db::sample_row>& raw, double rate_hz,
                             const std::set<std::uint64_t>& shifted = {})
{
    capture c;
    c.samplerate_hz = rate_hz;
    c.channels = {{"STIM", 0, {}}, {"RESP", 0, {}}};
    const double period_ps = 1e12 / rate_hz;
    auto at = [&](double ns) {
        return std::int64_t(std::floor((ns + 1e6) * 1000 / period_ps) * period_ps);
    };
    int stim = 0, resp = 0;
    for (const auto& s : raw) {
        const double t = double(s.unix_ns - raw[0].unix_ns);
        c.channels[0].changes.emplace_back(at(t), stim ^= 1);
        if (s.truth_ns && !(s.flags & db::flag_lost))
            c.channels[1].changes.emplace_back(
                at(t + double(*s.truth_ns) + (shifted.count(s.seq) ? 2000.0 : 0.0)), resp ^= 1);
    }
    c.end_ps = at(double(raw.back().unix_ns - raw[0].unix_ns) + 1e6);
    return c;
}

// The capture as raw 2-channel bytes (bit 0 STIM, bit 1 RESP), one per analyzer sample: the
// input sigrok-cli's binary format takes with any sample rate.
void verify_write_binary(const capture& c, const std::string& path)
{
    // The sample index from the exact rate: resolution_ps() is rounded, and its error adds up.
    auto index = [&](std::int64_t ps) {
        return std::size_t(std::llround(double(ps) * c.samplerate_hz / 1e12));
    };
    std::string bytes(index(c.end_ps) + 1, '\0');
    for (std::size_t ch = 0; ch < 2; ++ch)
        for (const auto& [t, v] : c.channels[ch].changes) {
            const auto from = index(t);
            for (std::size_t k = from; k < bytes.size(); ++k)
                bytes[k] = char(v ? bytes[k] | (1 << ch) : bytes[k] & ~(1 << ch));
        }
    std::ofstream(path, std::ios::binary) << bytes;
}

bool verify_have_sigrok()
{
    return !find_sigrok_cli().empty();
}

} // namespace

TEST_CASE("verify: a sim run's truth as a capture at 24 MHz and 100 MHz, through sigrok-cli's "
          "own .sr and back: every sample matches, every bracket holds the analyzer's value, "
          "every difference is the logger's known overhead within one analyzer sample",
          "[verify]")
{
    if (!verify_have_sigrok())
        SKIP("SKIPPED: sigrok-cli is not on PATH (apt-get install sigrok-cli)");
    temp_dir dir;
    const auto db_path = dir / "sim.db";
    const auto raw = seeded_raw_run(db_path, 1000, "sim", 11);
    std::size_t answered = 0;
    for (const auto& s : raw)
        answered += (s.flags & db::flag_lost) ? 0 : 1;

    struct variant {
        const char* name;
        double rate;
    };
    for (const auto& v : {variant{"100MHz-vcd", 100e6}, variant{"24MHz-binary", 24e6}}) {
        INFO(v.name);
        const auto c = verify_truth_capture(raw, v.rate);
        const auto sr = dir / (std::string(v.name) + ".sr");
        std::string stim = "STIM", resp = "RESP";
        if (v.rate == 100e6) { // a VCD at 10 ns: sigrok's VCD input takes its rate from it
            const auto vcd = dir / "100.vcd";
            std::ofstream(vcd) << [&] {
                std::ostringstream o;
                write_vcd(o, c, 10'000);
                return o.str();
            }();
            const auto conv = run_shell("sigrok-cli -I vcd -i '" + vcd + "' -o '" + sr + "' 2>&1");
            INFO(conv.out);
            REQUIRE(conv.status == 0);
        } else { // 24 MHz has no VCD timescale (a power of ten): raw samples at 24 MHz
            const auto bin = dir / "24.bin";
            verify_write_binary(c, bin);
            const auto conv =
                run_shell("sigrok-cli -I binary:numchannels=2:samplerate=24000000 -i '" + bin +
                          "' -o '" + sr + "' 2>&1");
            INFO(conv.out);
            REQUIRE(conv.status == 0);
        }
        const auto back = read_capture(sr);
        REQUIRE(back.channels.size() == 2);
        if (v.rate != 100e6) { // the binary input names its channels itself
            stim = back.channels[0].name;
            resp = back.channels[1].name;
        }
        CHECK(back.samplerate_hz == v.rate);
        REQUIRE(back.find(stim));
        REQUIRE(back.find(resp));
        const auto edges = capture_stimuli(back, *back.find(stim), *back.find(resp));
        std::vector<run_stimulus> run;
        for (const auto& s : raw)
            run.push_back(
                {s.seq, s.unix_ns, (s.flags & db::flag_lost) ? -1 : s.latency_ns, s.bracket_ns});
        const auto f = align_capture(run, edges, back.resolution_ps(), back.end_ps, 50'000'000);
        CHECK(f.matched == 1000);
        CHECK(f.capture_only == 0);
        CHECK(f.run_only == 0);
        CHECK(f.both_answered == answered);
        CHECK(f.outside.empty());
        const double res_ns = double(back.resolution_ps()) / 1000.0;
        std::size_t k = 0, compared = 0;
        for (const auto& p : f.pairs) {
            const auto& s = raw[p.run_index];
            if (s.flags & db::flag_lost)
                continue;
            REQUIRE(s.truth_ns);
            const auto overhead = s.latency_ns - *s.truth_ns; // the logger's own share
            INFO("seq " << s.seq << " overhead " << overhead << " diff " << f.diffs_ns[k]);
            CHECK(std::fabs(double(f.diffs_ns[k] - overhead)) <= res_ns + 1);
            ++k;
            ++compared;
        }
        CHECK(compared == answered);

        // The command: the same figures, stored with the run.
        const auto out = run_irqloop({"verify", "--db", db_path, "--run", "1", "--capture", sr,
                                      "--stim", stim, "--resp", resp});
        INFO(out.out << out.err);
        CHECK(out.status == 0);
        CHECK(out.out.find("1000 matched; only in the capture 0, only in the run 0") !=
              std::string::npos);
        CHECK(out.out.find("outside their bracket (beyond one analyzer sample): 0") !=
              std::string::npos);
        const auto dry = run_irqloop({"verify", "--db", db_path, "--run", "1", "--capture", sr,
                                      "--stim", stim, "--resp", resp, "--no-store"});
        CHECK(dry.status == 0);
        CHECK(dry.out.find("verification (not stored) of run 1:") == 0);
    }
    const auto stored = read_verifications(db_path, 1);
    REQUIRE(stored.size() == 2);
    CHECK(stored[0].idx == 1);
    CHECK(stored[0].figures.matched == 1000);
    CHECK(stored[0].samplerate_hz == 100e6);
    CHECK(stored[1].figures.resolution_ps == 41'667);
    CHECK(stored[1].figures.both_answered == answered);
}

TEST_CASE("verify: RESP 2 us late on 10 samples of a sim run: exactly those 10 are reported and "
          "stored as outside their brackets",
          "[verify]")
{
    temp_dir dir;
    const auto db_path = dir / "sim.db";
    const auto raw = seeded_raw_run(db_path, 1000, "shift", 11);
    std::set<std::uint64_t> shifted;
    // Only a sample whose upper bound lies less than 2 us above its truth can show a 2 us late
    // answer as outside: one the logger's descheduling disturbed has a bracket wide enough to
    // hold it (those are left alone, as they would be on a real wire).
    // Every sample from the 50th is a candidate, the chosen ones at least 20 apart: an
    // instrumented build (ASan) disturbs more samples, and a sparse fixed stride of candidates
    // found only 9 in run Q.
    for (std::size_t i = 50, last = 0; shifted.size() < 10 && i < raw.size(); ++i)
        if ((last == 0 || i >= last + 20) && !(raw[i].flags & db::flag_lost) && raw[i].truth_ns &&
            raw[i].latency_ns - *raw[i].truth_ns < 1500) {
            shifted.insert(raw[i].seq);
            last = i;
        }
    REQUIRE(shifted.size() == 10);
    const auto c = verify_truth_capture(raw, 24e6, shifted);
    const auto vcd = dir / "shift.vcd";
    std::ofstream(vcd) << [&] {
        std::ostringstream o;
        write_vcd(o, c, 100); // sigrok's own VCD shape at 24 MHz: 100 ps
        return o.str();
    }();
    const auto out = run_irqloop({"verify", "--db", db_path, "--run", "1", "--capture", vcd});
    INFO(out.out << out.err);
    CHECK(out.status == 0);
    CHECK(out.out.find("outside their bracket (beyond one analyzer sample): 10\n") !=
          std::string::npos);
    const auto stored = read_verifications(db_path, 1);
    REQUIRE(stored.size() == 1);
    std::set<std::uint64_t> seen;
    for (const auto& o : stored[0].figures.outside)
        seen.insert(o.seq);
    CHECK(seen == shifted);

    // report shows it; export's JSON carries it, every outside sample by seq.
    const auto rep = run_irqloop({"report", "--db", db_path, "--run", "1"});
    INFO(rep.out << rep.err);
    CHECK(rep.status == 0);
    CHECK(rep.out.find("verification against a logic analyzer") != std::string::npos);
    CHECK(rep.out.find("outside their bracket (beyond one analyzer sample): 10\n") !=
          std::string::npos);
    const auto js = run_irqloop({"export", "--db", db_path, "--run", "1", "--format", "json"});
    REQUIRE(js.status == 0);
    const auto j = nlohmann::json::parse(js.out);
    const auto& v = j["runs"][0]["verifications"];
    REQUIRE(v.size() == 1);
    CHECK(v[0]["matched"] == 1000);
    CHECK(v[0]["stim"] == "STIM");
    std::set<std::uint64_t> in_json;
    for (const auto& o : v[0]["outside_bracket"])
        in_json.insert(o["seq"].get<std::uint64_t>());
    CHECK(in_json == shifted);
}

TEST_CASE("verify: no such channel, a capture cut short (VCD or .sr) and a capture of another "
          "run each exit 2 with what, why and a hint, and leave the results file as it was",
          "[verify]")
{
    temp_dir dir;
    const auto db_path = dir / "sim.db";
    const auto raw = seeded_raw_run(db_path, 1000, "a", 11);
    const auto other = seeded_raw_run(dir / "other.db", 1000, "b", 12);
    const auto good = dir / "good.vcd";
    const auto good10 = dir / "good10.vcd"; // at 10 ns: sigrok-cli's .sr of it is 100 MHz
    {
        std::ostringstream o;
        write_vcd(o, verify_truth_capture(raw, 24e6), 100);
        std::ofstream(good) << o.str();
        std::ostringstream o10;
        write_vcd(o10, verify_truth_capture(raw, 100e6), 10'000);
        std::ofstream(good10) << o10.str();
        // Cut in the middle of the value changes, mid-line.
        const auto text = o.str();
        std::ofstream(dir / "cut.vcd") << text.substr(0, text.find('\n', text.size() / 2) + 3);
        std::ostringstream p;
        write_vcd(p, verify_truth_capture(other, 24e6), 100);
        std::ofstream(dir / "other.vcd") << p.str();
    }
    struct bad {
        std::vector<std::string> args;
        std::string message;
    };
    std::vector<bad> cases = {
        {{"--capture", good, "--stim", "D7"},
         "irqloop: verify: read capture '" + good +
             "': it has no channel 'D7' (--stim) (its channels: STIM, RESP)"},
        {{"--capture", dir / "cut.vcd"},
         "irqloop: read capture '" + dir / "cut.vcd" +
             "': the file is cut short (its last line has no end) (capture again, or copy the "
             "whole file)"},
        {{"--capture", dir / "other.vcd"}, "nothing aligns"},
    };
    if (verify_have_sigrok()) {
        REQUIRE(run_shell("sigrok-cli -I vcd -i '" + good10 + "' -o '" + dir / "good.sr" + "'")
                    .status == 0);
        const auto sr = read_bytes(dir / "good.sr");
        std::ofstream(dir / "cut.sr", std::ios::binary) << sr.substr(0, sr.size() / 2);
        cases.push_back(
            {{"--capture", dir / "cut.sr"},
             "irqloop: read capture '" + dir / "cut.sr" + "': sigrok-cli cannot read it"});
    } else {
        WARN("SKIPPED: the cut .sr case: sigrok-cli is not on PATH (apt-get install sigrok-cli)");
    }
    const auto before = read_bytes(db_path);
    for (const auto& c : cases) {
        std::vector<std::string> args = {"verify", "--db", db_path, "--run", "1"};
        args.insert(args.end(), c.args.begin(), c.args.end());
        const auto out = run_irqloop(args);
        INFO(out.out << out.err);
        CHECK(out.status == 2);
        CHECK(out.err.find(c.message) != std::string::npos);
        CHECK(out.out.empty());
        CHECK((read_bytes(db_path) == before));
    }
    CHECK_FALSE(std::filesystem::exists(dir / "irqloop.db"));
}

TEST_CASE("verify: a version-6 file is upgraded to 7 (raw samples keep their rows, without "
          "times; the verification tables are empty), and verify refuses its run",
          "[verify][db]")
{
    temp_dir dir;
    const auto path = dir / "v6.db";
    std::filesystem::copy_file(IRQLOOP_SOURCE_DIR "/tests/db/fixtures/v6-sim.db", path);
    // Written by main's build at cb30f4d (schema 6):
    //   irqloop run --hw 'sim:model=normal,mean=8us,sd=1us,seed=5,far=computed' -n 300
    //     -i 100us --raw --stats-interval 100ms --top-k 100 --label v6-fixture --db v6-sim.db
    {
        SQLite::Database d(path, SQLite::OPEN_READONLY);
        REQUIRE(d.execAndGet("PRAGMA user_version").getInt() == 6);
    }
    const auto before = read_bytes(path);
    const auto refused = run_irqloop({"verify", "--db", path, "--run", "1", "--capture", path});
    CHECK(refused.status == 2);
    CHECK(refused.err.find("its raw samples have no stimulus times (recorded before schema "
                           "version 7)") != std::string::npos);
    CHECK((read_bytes(path) == before)); // a refusal does not even upgrade it
    {
        db::store s(path);
    }
    SQLite::Database d(path, SQLite::OPEN_READONLY);
    CHECK(d.execAndGet("PRAGMA user_version").getInt() == db::store::schema_version());
    CHECK(d.execAndGet("SELECT count(*), count(unix_ns), count(truth_ns) FROM raw_samples")
              .getInt() == 300);
    CHECK(d.execAndGet("SELECT count(unix_ns) FROM raw_samples").getInt() == 0);
    CHECK(d.execAndGet("SELECT count(*) FROM verifications").getInt() == 0);
    CHECK(d.execAndGet("SELECT count(*) FROM verification_outside").getInt() == 0);
    CHECK(read_verifications(path, 1).empty());
}
