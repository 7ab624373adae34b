// SPDX-License-Identifier: MIT
// SMI counts per window (schema version 4): MSR 0x34 read through a fake /dev/cpu/N/msr under a
// root directory, at each window commit; stored per interval, "n/a" (never 0) where unreadable.
#include "read.hpp"
#include "smi-counter.hpp"
#include "test-report-fixtures.hpp"

#include <catch2/catch_test_macros.hpp>

#include <fcntl.h>
#include <filesystem>
#include <unistd.h>

using namespace irqloop;
using namespace irqloop::logger;
using namespace irqloop::logger::report_test;

namespace
{

/** Write @p value as MSR 0x34 of CPU @p cpu in the fake tree @p root (an 8-byte pwrite). */
void set_msr(const std::string& root, int cpu, std::uint64_t value)
{
    const auto dir = root + "/dev/cpu/" + std::to_string(cpu);
    std::filesystem::create_directories(dir);
    const int fd = ::open((dir + "/msr").c_str(), O_RDWR | O_CREAT, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::pwrite(fd, &value, sizeof value, 0x34) == static_cast<ssize_t>(sizeof value));
    ::close(fd);
}

/** Three 1 s windows of 100 samples, the counter set to @p counts[k] before window k closes. */
std::int64_t run_with_counter(db::store& st, const smi_counter* smi, const std::string& root,
                              const std::vector<std::uint64_t>& counts, const char* uuid)
{
    db::run_row row;
    row.uuid = uuid;
    row.label = "smi";
    row.start_unix_ns = 1'790'000'000'000'000'000;
    row.command_line = "test";
    row.version = row.uname = row.hostname = "test";
    row.backend = "sim:model=synthetic";
    row.clock_source = "synthetic";
    row.clock_hz = 1e9;
    const auto id = st.begin_run(row);
    recorder_config cfg;
    cfg.clock.hz = 1e9;
    cfg.clock.source = "synthetic";
    cfg.stats_interval_ns = 1'000'000'000;
    cfg.anchor_unix_ns = row.start_unix_ns;
    if (smi)
        cfg.smi_read = [smi] { return smi->read(); };
    recorder rec(cfg, &st, id);
    std::uint64_t seq = 0;
    for (std::size_t w = 0; w < counts.size(); ++w) {
        std::vector<sample> v;
        for (int i = 0; i < 100; ++i) {
            sample s{};
            s.seq = seq++;
            s.t0_cycles = w * 1'000'000'000 + std::uint64_t(i) * 5'000'000 + 1;
            s.latency_cycles = 5'000;
            s.bracket_cycles = 40;
            v.push_back(s);
        }
        rec.add(v); // commits window w-1 at its first sample: the counter as set before
        if (!root.empty())
            set_msr(root, 0, counts[w]);
    }
    rec.finish(counts.size() * 1'000'000'000 - 1'000);
    st.finish_run(id, db::run_status::complete, row.start_unix_ns + 3'000'000'000);
    return id;
}

} // namespace

TEST_CASE("smi counter: reads MSR 0x34 below a root; a missing file is unavailable, not 0",
          "[recorder]")
{
    temp_dir dir;
    const auto root = dir.file("root");
    {
        smi_counter none(root, 0);
        CHECK_FALSE(none.available());
        CHECK_FALSE(none.read());
        CHECK(none.why().find("/dev/cpu/0/msr") != std::string::npos);
    }
    set_msr(root, 2, 0x1'0000'0007); // the count is the low 32 bits
    smi_counter c(root, 2);
    REQUIRE(c.available());
    CHECK(c.device() == "/dev/cpu/2/msr");
    CHECK(c.read() == 7u);
    CHECK(smi_counter::between(0xffff'fffe, 3) == 5); // wraps at 32 bits
    // A file too short to hold offset 0x34 reads as unavailable.
    std::filesystem::create_directories(root + "/dev/cpu/3");
    {
        std::FILE* f = std::fopen((root + "/dev/cpu/3/msr").c_str(), "w");
        std::fclose(f);
    }
    CHECK_FALSE(smi_counter(root, 3).available());
}

TEST_CASE("smi counts: stored per window from the fake MSR, n/a without it; report's timeline",
          "[recorder][report]")
{
    temp_dir dir;
    const auto root = dir.file("root");
    set_msr(root, 0, 100);
    smi_counter smi(root, 0);
    REQUIRE(smi.available());
    const auto path = dir.file("smi.db");
    std::int64_t with = 0, without = 0;
    {
        db::store st(path);
        // Before window 0 closes the counter reads 102, then 102 (none), then 110.
        with = run_with_counter(st, &smi, root, {102, 102, 110},
                                "00000000-0000-4000-8000-000000000c01");
        without =
            run_with_counter(st, nullptr, "", {0, 0, 0}, "00000000-0000-4000-8000-000000000c02");
    }
    db::catalog cat({path});
    const auto& a = *cat.select({{std::to_string(with)}, {}, false}).front();
    const auto iv = cat.intervals(a);
    REQUIRE(iv.size() == 3);
    CHECK(iv[0].smi_count == 2u);
    CHECK(iv[1].smi_count == 0u); // counted and none happened: a real 0
    CHECK(iv[2].smi_count == 8u);
    CHECK(a.summary.smi_count == 10u);
    const auto& b = *cat.select({{std::to_string(without)}, {}, false}).front();
    for (const auto& w : cat.intervals(b))
        CHECK_FALSE(w.smi_count);
    CHECK_FALSE(b.summary.smi_count);

    auto r = run_cmd(report_command,
                     {"report", "--db", path, "--run", std::to_string(with), "--format", "csv"});
    INFO(r.out);
    REQUIRE(r.status == 0);
    CHECK(r.out.find(",SMI,") != std::string::npos);
    auto n = run_cmd(report_command, {"report", "--db", path, "--run", std::to_string(without)});
    INFO(n.out);
    REQUIRE(n.status == 0);
    const auto timeline = n.out.substr(n.out.find("timeline"));
    CHECK(timeline.find("SMI") != std::string::npos);
    CHECK(timeline.find("n/a") != std::string::npos);
}
