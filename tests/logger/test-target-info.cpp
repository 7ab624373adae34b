// SPDX-License-Identifier: MIT
// run --target-info (issue 28): the command run once before the first stimulus, bounded and
// stored with the run (tables target_info and target_facts), the facts parsed from its output,
// report's target info section, and compare --by KEY and --preset tbm-target over them.
#include "db-query.hpp"
#include "golden.hpp"
#include "run-process.hpp"
#include "target-info.hpp"
#include "temp-dir.hpp"

#include <atomic>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace irqloop;
using namespace irqloop::test;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;

namespace
{

/** The facts of @p text, one "key=value [source]" line each: what a golden holds. */
std::string facts_text(const std::string& text)
{
    std::string s;
    for (const auto& f : logger::parse_target_facts(text))
        s += f.key + "=" + f.value + " [" + f.source + "]\n";
    return s;
}

/** A sim run of 300 stimuli into @p db with @p extra options; its result. */
process_result sim_run(const std::string& db, const std::string& label, const std::string& mean,
                       std::vector<std::string> extra)
{
    std::vector<std::string> args = {
        "run",   "--hw",       "sim:model=normal,mean=" + mean + ",sd=100ns,seed=3",
        "-n",    "300",        "-i",
        "100us", "--warmup",   "50",
        "--db",  db,           "--label",
        label,   "--progress", "none"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_irqloop(args);
}

/** Does @p text hold a line whose words are @p words (a table row, whatever its padding)? */
bool has_row(const std::string& text, const std::vector<std::string>& words)
{
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        std::istringstream ls(line);
        std::vector<std::string> got;
        for (std::string w; ls >> w;)
            got.push_back(w);
        if (got == words)
            return true;
    }
    return false;
}

std::vector<std::vector<std::string>> csv_rows(const std::string& text)
{
    std::vector<std::vector<std::string>> rows;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#')
            continue;
        // Fields quoted when they hold a comma or a quote (table.hpp's CSV).
        std::vector<std::string> cells(1);
        bool quoted = false;
        for (std::size_t i = 0; i < line.size(); ++i) {
            const char ch = line[i];
            if (quoted && ch == '"' && i + 1 < line.size() && line[i + 1] == '"')
                cells.back() += line[++i];
            else if (ch == '"')
                quoted = !quoted;
            else if (ch == ',' && !quoted)
                cells.emplace_back();
            else
                cells.back() += ch;
        }
        rows.push_back(cells);
    }
    return rows;
}

} // namespace

TEST_CASE("target info: the facts of xl info, xl sched-*, module parameters, uname and plain "
          "lines match their goldens",
          "[target-info]")
{
    for (const char* name : {"xen-arm64", "xen-default-vwfi", "kvm-linux"}) {
        INFO(name);
        const auto text = file_text(golden_path("target-info", std::string(name) + ".txt"));
        REQUIRE_FALSE(text.empty());
        const auto path = golden_path("target-info", std::string(name) + ".facts");
        const auto actual = facts_text(text);
        if (rewrite_golden(path, actual))
            continue;
        CHECK(actual == file_text(path));
    }
    // The keys compare groups on, as a reader checks them by eye.
    const auto xen =
        logger::parse_target_facts(file_text(golden_path("target-info", "xen-arm64.txt")));
    auto value = [](const std::vector<db::target_fact>& f, const std::string& k) {
        for (const auto& x : f)
            if (x.key == k)
                return x.value + " [" + x.source + "]";
        return std::string("(none)");
    };
    CHECK(value(xen, "sched") == "credit2 [xl info]");
    CHECK(value(xen, "vwfi") == "native [xen cmdline]");
    CHECK(value(xen, "sched-gran") == "cpu [xen cmdline]");
    CHECK(value(xen, "dom0_vcpus_pin") == "true [xen cmdline]");
    CHECK(value(xen, "xen_version") == "4.17.5 [xl info]");
    CHECK(value(xen, "pool.Pool-0.ratelimit") == "1000us [xl sched]");
    CHECK(value(xen, "dom.tbm.weight") == "512 [xl sched]");
    CHECK(value(xen, "xen_changeset") == " [xl info]"); // printed empty: kept, empty
    const auto dflt =
        logger::parse_target_facts(file_text(golden_path("target-info", "xen-default-vwfi.txt")));
    CHECK(value(dflt, "vwfi") == "trap [xen default]");
    CHECK(value(dflt, "sched") == "credit [xl info]");
    CHECK(value(dflt, "pool.rt.sched") == "RTDS [xl sched]");
    CHECK(value(dflt, "dom.zephyr.vcpu0.budget") == "4000 [xl sched]");
    const auto kvm =
        logger::parse_target_facts(file_text(golden_path("target-info", "kvm-linux.txt")));
    CHECK(value(kvm, "halt_poll_ns") == "200000 [kvm]");
    CHECK(value(kvm, "halt_poll_ns_shrink") == "0 [kvm]");
    CHECK(value(kvm, "kernel") == "6.12.9-arm64 [uname]");
    CHECK(value(kvm, "nohz_full") == "2,3 [line]");
    CHECK(value(kvm, "governor") == "performance [line]");
    CHECK(value(kvm, "vwfi") == "(none)"); // no Xen: no default
    // Without a Xen command line there is no vwfi default, and the first value of a key stands.
    const auto twice = logger::parse_target_facts("vwfi=native\nvwfi=trap\n");
    REQUIRE(twice.size() == 1);
    CHECK(twice[0].value == "native");
}

TEST_CASE("target info: a failing command is recorded with its status and stderr; a hung one "
          "is killed at the limit; output over the cap is cut and counted",
          "[target-info]")
{
    const std::atomic<bool> no_stop{false};
    logger::target_info_options o;
    o.command = "echo 'sched: rtds'; echo oops >&2; exit 3";
    auto t = logger::run_target_info(o, no_stop);
    CHECK(t.status == db::target_info_status::exited);
    CHECK(t.exit_code == 3);
    CHECK(t.out == "sched: rtds\n");
    CHECK(t.err == "oops\n");
    CHECK(t.fact("sched") == "rtds");
    CHECK(logger::target_info_outcome(t) == "exit 3");

    o.command = "sleep 30";
    o.timeout_ns = 300'000'000;
    t = logger::run_target_info(o, no_stop);
    CHECK(t.status == db::target_info_status::timed_out);
    CHECK_FALSE(t.exit_code);
    CHECK(t.duration_ns >= 300'000'000);
    CHECK(t.duration_ns < 5'000'000'000);
    CHECK_THAT(logger::target_info_outcome(t), StartsWith("timed out after 0.3 s"));

    // A shell that exits while its background child holds the output open: its status stands.
    o.command = "sleep 30 & echo started; exit 0";
    o.timeout_ns = 20'000'000'000;
    t = logger::run_target_info(o, no_stop);
    CHECK(t.status == db::target_info_status::exited);
    CHECK(t.exit_code == 0);
    CHECK(t.out == "started\n");
    CHECK(t.duration_ns < 5'000'000'000);

    o.command = "kill -TERM $$";
    t = logger::run_target_info(o, no_stop);
    CHECK(t.status == db::target_info_status::killed);
    CHECK(logger::target_info_outcome(t) == "killed by SIGTERM");

    o.command = "head -c 5000 /dev/zero | tr '\\0' x; head -c 10 /dev/zero | tr '\\0' y >&2";
    o.cap_bytes = 1000;
    t = logger::run_target_info(o, no_stop);
    CHECK(t.out.size() == 1000);
    CHECK(t.out_bytes == 5000);
    CHECK(t.out_truncated());
    CHECK(t.err == "yyyyyyyyyy");
    CHECK_FALSE(t.err_truncated());
    CHECK_THAT(logger::target_info_line(t), ContainsSubstring("stdout 5000 bytes (TRUNCATED: 1000 "
                                                              "kept)"));
}

TEST_CASE("run --target-info: bad input is refused before anything is created", "[target-info]")
{
    temp_dir dir;
    const std::string db = dir / "x.db";
    struct bad {
        std::vector<std::string> args;
        const char* expect;
    };
    const bad cases[] = {
        {{"--target-info", ""}, "bad value for --target-info: an empty command"},
        {{"--target-info", "  "}, "bad value for --target-info: an empty command"},
        {{"--target-info", "true", "--target-info-timeout", "-1s"},
         "bad value for --target-info-timeout"},
        {{"--target-info", "true", "--target-info-timeout", "nan"},
         "bad value for --target-info-timeout"},
        {{"--target-info", "true", "--target-info-timeout", "inf"},
         "bad value for --target-info-timeout"},
        {{"--target-info", "true", "--target-info-timeout", "0"},
         "bad value for --target-info-timeout"},
        {{"--target-info-timeout", "5s"}, "--target-info-timeout given without --target-info"},
    };
    for (const auto& c : cases) {
        auto args = c.args;
        args.insert(args.begin(), {"run", "-n", "10", "--db", db});
        const auto r = run_irqloop(args);
        INFO("stderr: " << r.err);
        CHECK(r.status == 2);
        CHECK_THAT(r.err, StartsWith("irqloop: "));
        CHECK_THAT(r.err, ContainsSubstring(c.expect));
        CHECK_FALSE(std::filesystem::exists(db));
    }
}

TEST_CASE("run --target-info: stored with the run and shown by report; a failing command, a "
          "hung one and one over the cap are recorded and the run goes on",
          "[target-info][cli]")
{
    temp_dir dir;
    const std::string db = dir / "t.db";
    // Stored and shown.
    auto r = sim_run(db, "ok", "8us",
                     {"--target-info", "printf 'xen_scheduler          : credit2\\nxen_commandline "
                                       "       : console=dtuart vwfi=native\\n'"});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.out, ContainsSubstring("target info: exit 0 in "));
    CHECK(query_text(db, "SELECT status || ' ' || exit_code FROM target_info WHERE run_id = 1") ==
          "exited 0");
    CHECK(query_text(db, "SELECT value FROM target_facts WHERE run_id = 1 AND key = 'vwfi'") ==
          "native");
    CHECK(query_int(db, "SELECT count(*) FROM target_facts WHERE run_id = 1") == 5);
    auto rep = run_irqloop({"report", "--db", db, "--run", "1"});
    REQUIRE(rep.status == 0);
    CHECK_THAT(rep.out, ContainsSubstring("== target info =="));
    CHECK_THAT(rep.out, ContainsSubstring("command: printf "));
    CHECK_THAT(rep.out, ContainsSubstring("outcome: exit 0 in "));
    CHECK(has_row(rep.out, {"sched", "credit2", "xl", "info"}));
    CHECK(has_row(rep.out, {"vwfi", "native", "xen", "cmdline"}));
    CHECK_THAT(rep.out, !ContainsSubstring("stdout:"));
    rep = run_irqloop({"report", "--db", db, "--run", "1", "--target-output"});
    CHECK_THAT(rep.out, ContainsSubstring("stdout:\n  xen_scheduler          : credit2\n"));
    CHECK_THAT(rep.out, ContainsSubstring("stderr: (empty)"));
    // The JSON export carries it whole: the command, how it ended, the facts and the output.
    auto ex = run_irqloop({"export", "--db", db, "--run", "1"});
    REQUIRE(ex.status == 0);
    const auto ti = nlohmann::json::parse(ex.out)["runs"][0]["target_info"];
    CHECK(ti["status"] == "exited");
    CHECK(ti["exit_code"] == 0);
    CHECK(ti["signal"].is_null());
    CHECK(ti["facts"].size() == 5);
    CHECK(ti["facts"][0]["key"].is_string());
    bool vwfi = false;
    for (const auto& f : ti["facts"])
        vwfi = vwfi || (f["key"] == "vwfi" && f["value"] == "native");
    CHECK(vwfi);
    CHECK(ti["stdout"].get<std::string>().starts_with("xen_scheduler          : credit2\n"));
    CHECK(ti["stdout_bytes"] == ti["stdout"].get<std::string>().size());
    CHECK(ti["stderr"] == "");

    // A failing command: recorded as such, the run goes on and exits 0.
    r = sim_run(db, "fails", "8us", {"--target-info", "echo 'no xl here' >&2; exit 127"});
    CHECK(r.status == 0);
    CHECK_THAT(r.err, ContainsSubstring("irqloop: warning: --target-info command exit 127 (the "
                                        "run went on"));
    CHECK(query_text(db, "SELECT r.status || ' ' || t.status || ' ' || t.exit_code || ' ' || "
                         "t.stderr FROM runs r JOIN target_info t ON t.run_id = r.id WHERE r.id "
                         "= 2") == "complete exited 127 no xl here\n");
    CHECK(query_int(db, "SELECT samples FROM runs WHERE id = 2") > 0);
    rep = run_irqloop({"report", "--db", db, "--run", "2"});
    CHECK_THAT(rep.out, ContainsSubstring("outcome: exit 127 in "));
    CHECK_THAT(rep.out, ContainsSubstring("keys: none recognized in its stdout"));

    // A hung command: killed at the limit, recorded as timed out; the run completes.
    r = sim_run(db, "hangs", "8us",
                {"--target-info", "echo partial; sleep 60", "--target-info-timeout", "500ms"});
    CHECK(r.status == 0);
    CHECK(r.seconds < 20);
    CHECK(query_text(db, "SELECT r.status || ' ' || t.status || ' ' || t.stdout || "
                         "coalesce(t.exit_code, 'null') FROM runs r JOIN target_info t ON "
                         "t.run_id = r.id WHERE r.id = 3") == "complete timed_out partial\nnull");
    CHECK(query_int(db, "SELECT timeout_ns FROM target_info WHERE run_id = 3") == 500'000'000);
    rep = run_irqloop({"report", "--db", db, "--run", "3"});
    CHECK_THAT(rep.out, ContainsSubstring("outcome: timed out after 0.5 s (killed)"));

    // Over the 1 MiB cap: cut and marked, the bytes written counted.
    r = sim_run(db, "big", "8us", {"--target-info", "head -c 1100000 /dev/zero | tr '\\0' x"});
    CHECK(r.status == 0);
    CHECK(query_text(db, "SELECT length(stdout) || ' ' || stdout_bytes FROM target_info WHERE "
                         "run_id = 4") == "1048576 1100000");
    rep = run_irqloop({"report", "--db", db, "--run", "4"});
    CHECK_THAT(rep.out, ContainsSubstring("stdout 1100000 bytes (TRUNCATED: 1048576 kept)"));

    // A run without the option has no row, and report says so.
    r = sim_run(db, "none", "8us", {});
    CHECK(r.status == 0);
    CHECK(query_int(db, "SELECT count(*) FROM target_info WHERE run_id = 5") == 0);
    rep = run_irqloop({"report", "--db", db, "--run", "5"});
    CHECK_THAT(rep.out,
               ContainsSubstring("none recorded (the run was made without --target-info)"));
    ex = run_irqloop({"export", "--db", db, "--run", "5"});
    REQUIRE(ex.status == 0);
    CHECK_FALSE(nlohmann::json::parse(ex.out)["runs"][0].contains("target_info"));
}

TEST_CASE("compare --by KEY groups runs on their target info; --preset tbm-target prints the "
          "TBM table's shape, scheduler x vwfi, from real sim runs",
          "[target-info][cli]")
{
    temp_dir dir;
    const std::string db = dir / "tbm.db";
    // Each run's target info: a script that prints the keys, as `ssh board xl info` would.
    struct cfg {
        const char* sched;
        const char* vwfi;
        const char* mean;
    };
    const cfg cfgs[] = {{"credit", "trap", "7706ns"},
                        {"credit", "native", "2908ns"},
                        {"credit2", "trap", "7221ns"},
                        {"credit2", "native", "2906ns"}};
    int n = 0;
    for (const auto& c : cfgs)
        for (int rep = 0; rep < 2; ++rep) { // two runs per configuration: pooled in one row
            const std::string script =
                std::string("echo 'xen_scheduler          : ") + c.sched +
                "'; echo 'xen_commandline        : console=dtuart vwfi=" + c.vwfi + "'";
            const auto r =
                sim_run(db, "tbm-" + std::to_string(++n), c.mean, {"--target-info", script});
            INFO(r.err);
            REQUIRE(r.status == 0);
        }
    // One run without target info: its own row, never dropped. One from a KVM host.
    REQUIRE(sim_run(db, "bare", "5us", {}).status == 0);
    REQUIRE(sim_run(db, "kvm", "5us", {"--target-info", "echo halt_poll_ns=200000"}).status == 0);

    auto out = run_irqloop({"compare", "--db", db, "--by", "sched,vwfi", "--format", "csv",
                            "--columns", "group,runs,samples"});
    INFO(out.out << out.err);
    REQUIRE(out.status == 0);
    auto rows = csv_rows(out.out);
    REQUIRE(rows.size() == 7);
    CHECK(rows[0] == std::vector<std::string>{"group", "runs", "samples"});
    CHECK(rows[1][0] == "sched=credit, vwfi=trap");
    CHECK(rows[1][1] == "2");
    CHECK(rows[2][0] == "sched=credit, vwfi=native");
    CHECK(rows[3][0] == "sched=credit2, vwfi=trap");
    CHECK(rows[4][0] == "sched=credit2, vwfi=native");
    CHECK(rows[5][0] == "(no target info)");
    CHECK(rows[5][1] == "1");
    CHECK(rows[6][0] == "sched=(none), vwfi=(none)");

    // One key: the runs of both schedulers pool by vwfi; a key no run has reads (none).
    out = run_irqloop(
        {"compare", "--db", db, "--by", "vwfi", "--format", "csv", "--columns", "group,runs"});
    rows = csv_rows(out.out);
    REQUIRE(rows.size() == 5);
    CHECK(rows[1] == std::vector<std::string>{"vwfi=trap", "4"});
    CHECK(rows[2] == std::vector<std::string>{"vwfi=native", "4"});
    CHECK(rows[3] == std::vector<std::string>{"(no target info)", "1"});
    CHECK(rows[4] == std::vector<std::string>{"vwfi=(none)", "1"});
    out = run_irqloop({"compare", "--db", db, "--by", "halt_poll_ns", "--format", "csv",
                       "--columns", "group,runs"});
    rows = csv_rows(out.out);
    REQUIRE(rows.size() == 4);
    CHECK(rows[1] == std::vector<std::string>{"halt_poll_ns=(none)", "8"});
    CHECK(rows[2] == std::vector<std::string>{"(no target info)", "1"});
    CHECK(rows[3] == std::vector<std::string>{"halt_poll_ns=200000", "1"});
    // A key no selected run has is a typo, refused with the keys the runs have.
    out = run_irqloop({"compare", "--db", db, "--by", "vwif"});
    CHECK(out.status == 2);
    CHECK_THAT(out.err, StartsWith("irqloop: bad --by: no selected run has 'vwif' in its target "
                                   "info (use run, label, or keys the runs have: "));
    CHECK_THAT(out.err, ContainsSubstring("vwfi"));

    // The preset: the TBM header, one row per scheduler x vwfi in the order first recorded,
    // integer ns, MIN <= AVG <= MAX.
    out = run_irqloop({"compare", "--db", db, "--preset", "tbm-target", "--format", "csv"});
    REQUIRE(out.status == 0);
    rows = csv_rows(out.out);
    REQUIRE(rows.size() == 7);
    CHECK(rows[0] == std::vector<std::string>{"", "AVG", "MIN", "MAX", "WARM MAX", "LOST"});
    for (std::size_t i = 1; i <= 4; ++i) {
        INFO(out.out);
        REQUIRE(rows[i].size() == 6);
        for (std::size_t c = 1; c <= 5; ++c)
            CHECK(rows[i][c].find_first_not_of("0123456789") == std::string::npos);
        const long avg = std::stol(rows[i][1]), mn = std::stol(rows[i][2]),
                   mx = std::stol(rows[i][3]);
        CHECK(mn <= avg);
        CHECK(avg <= mx);
    }
    // The models' means show through: each trap row above its native row.
    CHECK(std::stol(rows[1][2]) > std::stol(rows[2][2]));
    CHECK(std::stol(rows[3][2]) > std::stol(rows[4][2]));
    // The text table names each row as the seeds' table does its scheduler and vwfi.
    out = run_irqloop({"compare", "--db", db, "--preset", "tbm-target"});
    CHECK_THAT(out.out, ContainsSubstring("sched=credit2, vwfi=native"));
    CHECK_THAT(out.out, ContainsSubstring("AVG"));
    CHECK_THAT(out.out, ContainsSubstring("WARM MAX"));

    // Bad --by: refused.
    out = run_irqloop({"compare", "--db", db, "--by", "sched;rm"});
    CHECK(out.status == 2);
    CHECK_THAT(out.err, ContainsSubstring("irqloop: bad --by"));
    out = run_irqloop({"compare", "--db", db, "--by", "sched", "--tail"});
    CHECK(out.status == 2);
}

TEST_CASE("campaign: a phase's target-info key runs as run's option does; an empty one is "
          "refused before any phase",
          "[target-info][cli][campaign]")
{
    temp_dir dir;
    const std::string db = dir / "camp.db";
    const std::string ini = dir / "c.ini";
    {
        std::ofstream f(ini);
        f << "db = " << db << "\n\n[credit2]\nsamples = 200\ninterval = 100us\nwarmup = 10\n"
          << "progress = none\ntarget-info = echo sched=credit2 vwfi=native\n"
          << "target-info-timeout = 5s\n";
    }
    auto r = run_irqloop({"campaign", ini});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(query_text(db, "SELECT group_concat(key || '=' || value, ' ') FROM (SELECT key, value "
                         "FROM target_facts WHERE run_id = 1 ORDER BY idx)") ==
          "sched=credit2 vwfi=native");
    CHECK(query_int(db, "SELECT timeout_ns FROM target_info WHERE run_id = 1") == 5'000'000'000);

    const std::string bad = dir / "bad.ini";
    const std::string bad_db = dir / "bad.db";
    {
        std::ofstream f(bad);
        f << "db = " << bad_db << "\n\n[a]\nsamples = 10\n\n[b]\nsamples = 10\ntarget-info =\n";
    }
    r = run_irqloop({"campaign", bad});
    CHECK(r.status == 2);
    CHECK_THAT(r.err, ContainsSubstring("target-info"));
    CHECK_FALSE(std::filesystem::exists(bad_db));
}
