// SPDX-License-Identifier: MIT
#include "store-fixtures.hpp"
#include "store.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <optional>
#include <sys/wait.h>
#include <unistd.h>

using namespace irqloop;
using namespace irqloop::db;
using namespace irqloop::db::test;
using Catch::Matchers::ContainsSubstring;

namespace
{

std::int64_t scalar(store& s, const std::string& q)
{
    return s.database().execAndGet(q).getInt64();
}

/** Every file whose name starts with @p path (the database and its side files). */
std::vector<std::string> side_files(const std::string& path)
{
    std::vector<std::string> out;
    for (const char* sfx : {"-wal", "-shm", "-lock", "-journal"})
        if (std::filesystem::exists(path + sfx))
            out.push_back(path + sfx);
    return out;
}

/** Open must refuse @p path, leave its bytes as they were and create no side file. */
irqloop::error require_refused(const std::string& path, store::mode m = store::mode::read_write)
{
    const auto before = file_bytes(path);
    const auto sides = side_files(path);
    try {
        store s(path, m);
    } catch (const irqloop::error& e) {
        check_refusal(e, path);
        CHECK(file_bytes(path) == before);
        CHECK(side_files(path) == sides);
        return e;
    }
    FAIL("opening '" << path << "' was not refused");
    throw; // not reached
}

/** A child process that writes a run with @p n intervals, then waits to be killed. */
struct child_writer {
    pid_t pid = -1;
    std::int64_t run_id = 0;

    child_writer(const std::string& path, int n)
    {
        int fds[2];
        REQUIRE(::pipe(fds) == 0);
        pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            ::close(fds[0]);
            try {
                store s(path);
                std::int64_t id = s.begin_run(sample_run("child-uuid-0001", "child", t_start));
                for (int i = 0; i < n; ++i)
                    s.commit_interval(id, simple_commit(i, t_start).view());
                if (::write(fds[1], &id, sizeof id) != sizeof id)
                    ::_exit(3);
                for (;;) // with the store open, as a logger in mid-run
                    ::pause();
            } catch (...) {
                ::_exit(3);
            }
        }
        ::close(fds[1]);
        REQUIRE(::read(fds[0], &run_id, sizeof run_id) == sizeof run_id);
        ::close(fds[0]);
    }
    void kill_hard()
    {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            int st = 0;
            ::waitpid(pid, &st, 0);
            CHECK(WIFSIGNALED(st));
            pid = -1;
        }
    }
    ~child_writer() { kill_hard(); }

    /** A run of @p n intervals written into @p path by a child SIGKILLed after them: its id. */
    static std::int64_t killed_run(const std::string& path, int n)
    {
        child_writer w(path, n);
        return w.run_id; // the destructor kills it
    }
};

run_status status_of(store& s, std::int64_t id)
{
    return get_run(s, id).status;
}

/**
 * @brief The start of a disk-full case: a store on a tmpfs of @p options (its size), full.db,
 * with run @p uuid begun and its first @p commits intervals committed. Skips the test where no
 * tmpfs can be mounted.
 */
struct small_disk_run {
    small_disk_run(const std::string& options, const std::string& uuid, int commits) : fs(options)
    {
        if (!fs.ok())
            SKIP(fs.reason());
        path = fs.file("full.db");
        s.emplace(path);
        id = s->begin_run(sample_run(uuid, "full", t_start));
        for (int i = 0; i < commits; ++i)
            s->commit_interval(id, simple_commit(i, t_start).view());
    }

    /** Open the file read-only for @p check (what a reader finds now), then check its pages. */
    void check_reader(const std::function<void(store&)>& check) const
    {
        {
            store r(path, store::mode::read_only);
            check(r);
        }
        CHECK(integrity(path) == "ok");
    }

    tmpfs_mount fs;
    std::string path;
    std::optional<store> s;
    std::int64_t id = 0;
};

} // namespace

TEST_CASE("store creates the schema in a new file: WAL, application_id, version, tables, views",
          "[db]")
{
    temp_dir dir;
    const auto path = dir.file("new.db");
    {
        store s(path);
        CHECK(s.path() == path);
        CHECK(s.recovered_runs().empty());
        CHECK(s.database().execAndGet("PRAGMA journal_mode").getString() == "wal");
        CHECK(scalar(s, "PRAGMA synchronous") == 1); // NORMAL
        CHECK(scalar(s, "PRAGMA foreign_keys") == 1);
        CHECK(scalar(s, "PRAGMA application_id") == 0x49524C50);
        CHECK(scalar(s, "PRAGMA user_version") == store::schema_version());
        CHECK(store::schema_version() == 10);
        for (const char* t :
             {"irqloop_info", "runs", "run_metadata", "intervals", "histogram", "worst",
              "exceedances", "events", "raw_samples", "interval_histograms", "breakdowns",
              "breakdown_parts", "target_info", "target_facts"})
            CHECK(scalar(s, std::string("SELECT count(*) FROM sqlite_schema WHERE type = 'table' "
                                        "AND name = '") +
                                t + "'") == 1);
        for (const char* v : {"run_summary", "worst_cases", "interval_maxima", "window_histograms"})
            CHECK(scalar(s, std::string("SELECT count(*) FROM sqlite_schema WHERE type = 'view' "
                                        "AND name = '") +
                                v + "'") == 1);
        CHECK(s.database()
                  .execAndGet("SELECT value FROM irqloop_info WHERE key = 'created_by'")
                  .getString()
                  .starts_with("irqloop "));
    }
    CHECK(integrity(path) == "ok");
}

TEST_CASE("store initialises an empty file and an SQLite file without tables", "[db]")
{
    temp_dir dir;
    const auto empty = dir.file("empty.db");
    write_file(empty, "");
    {
        store s(empty);
        CHECK(scalar(s, "PRAGMA application_id") == store::application_id);
    }
    const auto bare = dir.file("bare.db");
    REQUIRE(run_shell("sqlite3 '" + bare + "' 'PRAGMA user_version = 0; VACUUM'").status == 0);
    REQUIRE(std::filesystem::file_size(bare) > 0);
    {
        store s(bare);
        CHECK(scalar(s, "SELECT count(*) FROM runs") == 0);
    }
    CHECK(integrity(empty) == "ok");
    CHECK(integrity(bare) == "ok");
}

TEST_CASE("store reopens a file read-write and read-only and keeps its runs", "[db]")
{
    temp_dir dir;
    const auto path = dir.file("reopen.db");
    std::int64_t id = 0;
    {
        store s(path);
        id = s.begin_run(sample_run("uuid-reopen", "first", t_start));
        s.commit_interval(id, simple_commit(0, t_start).view());
        s.finish_run(id, run_status::complete, t_start + 10'000'000'000);
    }
    {
        store s(path);
        CHECK(s.recovered_runs().empty());
        auto r = get_run(s, id);
        CHECK(r.status == run_status::complete);
        CHECK(r.meta.uuid == "uuid-reopen");
        CHECK(s.begin_run(sample_run("uuid-second", "second", t_start + 1)) != id);
    }
    {
        store s(path, store::mode::read_only);
        CHECK(list_runs(s).size() == 2);
        CHECK_THROWS_AS(s.begin_run(sample_run("uuid-third", "x", t_start)), irqloop::error);
    }
    CHECK(integrity(path) == "ok");
}

TEST_CASE("store refuses a text file named .db and leaves it untouched", "[db]")
{
    temp_dir dir;
    const auto path = dir.file("notes.db");
    write_file(path, "these are my notes, not a database\nline two\n");
    auto e = require_refused(path);
    CHECK_THAT(e.why(), ContainsSubstring("not an SQLite database"));
    require_refused(path, store::mode::read_only);
    const auto tiny = dir.file("tiny.db");
    write_file(tiny, "x");
    require_refused(tiny);
}

TEST_CASE("store refuses another program's SQLite file and leaves it untouched", "[db]")
{
    temp_dir dir;
    SECTION("tables and no application_id")
    {
        const auto path = dir.file("other.db");
        REQUIRE(sqlite3_shell(path,
                              "CREATE TABLE customers (name TEXT); "
                              "INSERT INTO customers VALUES ('ada');",
                              dir.path())
                    .status == 0);
        auto e = require_refused(path);
        CHECK_THAT(e.why(), ContainsSubstring("not irqloop's"));
        require_refused(path, store::mode::read_only);
    }
    SECTION("another application_id, even without tables")
    {
        const auto path = dir.file("app.db");
        REQUIRE(sqlite3_shell(path, "PRAGMA application_id = 1234; VACUUM;", dir.path()).status ==
                0);
        auto e = require_refused(path);
        CHECK_THAT(e.why(), ContainsSubstring("0x000004D2"));
    }
    SECTION("another program's WAL-mode file")
    {
        const auto path = dir.file("wal.db");
        REQUIRE(sqlite3_shell(path,
                              "PRAGMA journal_mode = WAL; CREATE TABLE t (x); "
                              "INSERT INTO t VALUES (1);",
                              dir.path())
                    .status == 0);
        require_refused(path);
    }
}

TEST_CASE("store refuses a file from a newer irqloop and leaves it untouched", "[db]")
{
    temp_dir dir;
    const auto path = dir.file("newer.db");
    {
        store s(path);
        s.finish_run(s.begin_run(sample_run("uuid-newer", "n", t_start)), run_status::complete,
                     t_start + 1);
    }
    const auto newer = std::to_string(store::schema_version() + 1);
    REQUIRE(run_shell("sqlite3 '" + path + "' 'PRAGMA user_version = " + newer + "'").status == 0);
    auto e = require_refused(path);
    CHECK_THAT(e.why(), ContainsSubstring("newer irqloop"));
    CHECK_THAT(e.why(), ContainsSubstring("schema version " + newer));
    require_refused(path, store::mode::read_only);
    SQLite::Database d(path, SQLite::OPEN_READONLY);
    CHECK(d.execAndGet("SELECT count(*) FROM runs").getInt() == 1);
}

TEST_CASE("store refuses a corrupt file and leaves it untouched", "[db]")
{
    temp_dir dir;
    SECTION("the SQLite header followed by garbage")
    {
        const auto path = dir.file("garbage.db");
        std::string bytes = "SQLite format 3";
        bytes.push_back('\0');
        for (int i = 0; i < 8192; ++i)
            bytes.push_back(static_cast<char>((i * 7919 + 13) & 0xff));
        write_file(path, bytes);
        auto e = require_refused(path);
        CHECK_THAT(e.why(), ContainsSubstring("damaged file"));
    }
    SECTION("an irqloop file whose schema page is overwritten")
    {
        const auto path = dir.file("damaged.db");
        {
            store s(path);
            s.begin_run(sample_run("uuid-damaged", "d", t_start));
        }
        REQUIRE(run_shell("sqlite3 '" + path + "' 'PRAGMA wal_checkpoint(TRUNCATE)'").status == 0);
        auto bytes = file_bytes(path).value();
        REQUIRE(bytes.size() > 4096);
        for (std::size_t i = 100; i < 4096; ++i) // page 1 after the header: sqlite_schema
            bytes[i] = static_cast<char>(0xA5);
        write_file(path, bytes);
        std::filesystem::remove(path + "-lock");
        auto e = require_refused(path);
        CHECK_THAT(e.why(), ContainsSubstring("damaged file"));
    }
}

TEST_CASE("store refuses a path it cannot write and creates nothing", "[db]")
{
    temp_dir dir;
    SECTION("missing directory")
    {
        const auto path = dir.file("no/such/dir/x.db");
        auto e = require_refused(path);
        CHECK_THAT(e.why(), ContainsSubstring("does not exist"));
        CHECK(!std::filesystem::exists(dir.file("no")));
    }
    SECTION("a directory")
    {
        auto e = require_refused(dir.path());
        CHECK_THAT(e.why(), ContainsSubstring("is a directory"));
    }
    SECTION("read-only open of a missing file")
    {
        const auto path = dir.file("missing.db");
        require_refused(path, store::mode::read_only);
        CHECK(!std::filesystem::exists(path));
    }
    SECTION("a read-only file system, new file and existing file")
    {
        tmpfs_mount fs("size=1m");
        if (!fs.ok())
            SKIP(fs.reason());
        const auto existing = fs.file("kept.db");
        {
            store s(existing);
            s.finish_run(s.begin_run(sample_run("uuid-ro", "ro", t_start)), run_status::complete,
                         t_start + 1);
        }
        REQUIRE(run_shell("sqlite3 '" + existing + "' 'PRAGMA wal_checkpoint(TRUNCATE)'").status ==
                0);
        if (!fs.make_read_only())
            SKIP("cannot remount the tmpfs read-only");
        auto e = require_refused(fs.file("new.db"));
        CHECK_THAT(e.why(), ContainsSubstring("Read-only file system"));
        CHECK(!std::filesystem::exists(fs.file("new.db")));
        e = require_refused(existing);
        CHECK_THAT(e.why(), ContainsSubstring("Read-only file system"));
        // Reading it is still possible.
        store r(existing, store::mode::read_only);
        CHECK(list_runs(r).size() == 1);
    }
    SECTION("a directory without write permission (non-root only)")
    {
        if (::geteuid() == 0)
            SKIP("root ignores permission bits; the read-only file system section covers this");
        std::filesystem::create_directory(dir.file("locked"));
        std::filesystem::permissions(dir.file("locked"), std::filesystem::perms::owner_read |
                                                             std::filesystem::perms::owner_exec);
        require_refused(dir.file("locked/x.db"));
        std::filesystem::permissions(dir.file("locked"), std::filesystem::perms::owner_all);
    }
}

TEST_CASE("opening after SIGKILL marks the run interrupted and keeps its intervals", "[db]")
{
    temp_dir dir;
    const auto path = dir.file("killed.db");
    const auto id = child_writer::killed_run(path, 3);
    {
        // A reader does not recover: it sees the run as the dead logger left it.
        const auto before = file_bytes(path);
        store r(path, store::mode::read_only);
        CHECK(status_of(r, id) == run_status::running);
        CHECK(r.recovered_runs().empty());
        CHECK(file_bytes(path) == before);
    }
    CHECK(integrity(path) == "ok");
    {
        store s(path);
        REQUIRE(s.recovered_runs() == std::vector<std::int64_t>{id});
        auto r = get_run(s, id);
        CHECK(r.status == run_status::interrupted);
        CHECK(r.end_unix_ns == simple_commit(2, t_start).interval.end_unix_ns);
        CHECK(r.summary.samples == 3000);
        auto iv = intervals(s, id);
        REQUIRE(iv.size() == 3);
        CHECK(iv[2].index == 2);
        auto ev = events(s, id);
        REQUIRE(!ev.empty());
        CHECK(ev.back().kind == "warning");
        CHECK_THAT(ev.back().detail, ContainsSubstring("marked interrupted"));
    }
    {
        store s(path);
        CHECK(s.recovered_runs().empty()); // done once
    }
    CHECK(integrity(path) == "ok");
}

TEST_CASE("a run a live process is writing is not marked interrupted", "[db]")
{
    temp_dir dir;
    const auto path = dir.file("live.db");
    child_writer w(path, 2);
    CHECK(writer_alive(path, w.run_id));
    {
        store s(path);
        CHECK(s.recovered_runs().empty());
        CHECK(status_of(s, w.run_id) == run_status::running);
        // The same in-process: another store's run is protected too.
        std::int64_t mine = s.begin_run(sample_run("uuid-mine", "mine", t_start + 5));
        store other(path);
        CHECK(other.recovered_runs().empty());
        CHECK(status_of(other, mine) == run_status::running);
        s.finish_run(mine, run_status::complete, t_start + 6);
        CHECK(!writer_alive(path, mine));
    }
    w.kill_hard();
    CHECK(!writer_alive(path, w.run_id));
    store s(path);
    CHECK(s.recovered_runs() == std::vector<std::int64_t>{w.run_id});
    CHECK(status_of(s, w.run_id) == run_status::interrupted);
    CHECK(intervals(s, w.run_id).size() == 2);
    CHECK(integrity(path) == "ok");
}

TEST_CASE("commit_interval round-trips every column and replaces worst and histogram", "[db]")
{
    temp_dir dir;
    const auto path = dir.file("roundtrip.db");
    const run_row run = sample_run("uuid-rt", "rt-idle", t_start);
    std::int64_t id = 0;
    const auto c0 = simple_commit(0, t_start);
    auto c1 = simple_commit(1, t_start);
    c1.histogram.erase(c1.histogram.begin()); // replaced, not merged
    c1.events.push_back(event_row{t_start + 11, 1400, "signal", 2, "SIGINT"});
    {
        store s(path);
        id = s.begin_run(run);
        s.commit_interval(id, c0.view());
        s.commit_interval(id, c1.view());
    }
    store s(path, store::mode::read_only);
    auto r = get_run(s, id);
    CHECK(r.id == id);
    CHECK(r.status == run_status::running);
    CHECK(r.end_unix_ns == c1.summary.end_unix_ns);
    auto expected = run;
    std::sort(expected.metadata.begin(), expected.metadata.end()); // read back by key
    CHECK(r.meta == expected);
    CHECK(r.summary == c1.summary);

    auto iv = intervals(s, id);
    REQUIRE(iv.size() == 2);
    CHECK(iv[0] == c0.interval);
    CHECK(iv[1] == c1.interval);

    auto same_samples = [](const std::vector<sample_row>& x, const std::vector<sample_row>& y) {
        REQUIRE(x.size() == y.size());
        for (std::size_t k = 0; k < x.size(); ++k)
            CHECK(x[k] == y[k]);
    };
    same_samples(worst(s, id), c1.worst);
    CHECK(worst(s, id, 1).size() == 1);
    std::vector<sample_row> all_exc = c0.exceedances;
    all_exc.insert(all_exc.end(), c1.exceedances.begin(), c1.exceedances.end());
    same_samples(exceedances(s, id), all_exc);
    same_samples(exceedances(s, id, c1.interval.start_unix_ns, c1.interval.end_unix_ns),
                 c1.exceedances);

    auto h = histogram(s, id);
    REQUIRE(h.size() == c1.histogram.size());
    for (std::size_t k = 0; k < h.size(); ++k) {
        CHECK(h[k].lo_ns == c1.histogram[k].lo_ns);
        CHECK(h[k].hi_ns == c1.histogram[k].hi_ns);
        CHECK(h[k].count == c1.histogram[k].count);
    }
    // In time order: the signal, committed last but stamped first, comes first.
    auto ev = events(s, id);
    REQUIRE(ev.size() == 3);
    CHECK(ev[0].unix_ns == t_start + 11);
    CHECK(ev[0].seq == 1400);
    CHECK(ev[0].kind == "signal");
    CHECK(ev[0].value == 2);
    CHECK(ev[0].detail == "SIGINT");
    CHECK(ev[1].kind == "lost");
    CHECK(ev[1].unix_ns < ev[2].unix_ns);
}

TEST_CASE("an interval with no samples stores NULL latencies, not zeros", "[db]")
{
    temp_dir dir;
    const auto path = dir.file("empty-interval.db");
    store s(path);
    auto id = s.begin_run(sample_run("uuid-empty", "e", t_start));
    commit_data c;
    c.interval.index = 0;
    c.interval.lost = 7;
    c.summary.lost = 7;
    c.summary.end_unix_ns = t_start + 5;
    s.commit_interval(id, c.view());
    CHECK(scalar(s, "SELECT count(*) FROM intervals WHERE min_ns IS NULL AND max_ns IS NULL "
                    "AND mean_ns IS NULL AND p99_ns IS NULL AND lost = 7") == 1);
    CHECK(scalar(s, "SELECT count(*) FROM runs WHERE max_ns IS NULL AND warm_max_ns IS NULL "
                    "AND p999999_ns IS NULL AND lost = 7") == 1);
    CHECK(scalar(s, "SELECT count(*) FROM run_summary WHERE pct_above IS NULL") == 1);
}

TEST_CASE("a failed commit rolls back entirely and the store stays usable", "[db]")
{
    temp_dir dir;
    const auto path = dir.file("rollback.db");
    store s(path);
    auto id = s.begin_run(sample_run("uuid-rb", "rb", t_start));
    auto c0 = simple_commit(0, t_start);
    s.commit_interval(id, c0.view());

    // Interval 1 repeats interval 0's exceedance: the primary key fails after the interval
    // row, the summary and the events were written.
    auto bad = simple_commit(1, t_start);
    bad.exceedances.push_back(c0.exceedances[0]);
    try {
        s.commit_interval(id, bad.view());
        FAIL("a duplicate exceedance was accepted");
    } catch (const irqloop::error& e) {
        CHECK(e.status() == exit_failure);
        CHECK_THAT(e.message(), ContainsSubstring("commit interval 1 of run"));
    }
    CHECK(scalar(s, "SELECT count(*) FROM intervals") == 1);
    CHECK(scalar(s, "SELECT count(*) FROM exceedances") == 1);
    CHECK(scalar(s, "SELECT count(*) FROM events") == 1);
    CHECK(scalar(s, "SELECT count(*) FROM worst") == 1);
    CHECK(scalar(s, "SELECT samples FROM runs") == 1000);
    CHECK(scalar(s, "SELECT end_unix_ns FROM runs") == c0.summary.end_unix_ns);

    SECTION("a commit for a run that does not exist")
    {
        CHECK_THROWS_AS(s.commit_interval(id + 100, simple_commit(1, t_start).view()),
                        irqloop::error);
        CHECK(scalar(s, "SELECT count(*) FROM intervals") == 1);
    }
    SECTION("a bad final status")
    {
        CHECK_THROWS_AS(s.finish_run(id, run_status::running, t_start), irqloop::error);
        CHECK(status_of(s, id) == run_status::running);
    }
    s.commit_interval(id, simple_commit(1, t_start).view());
    CHECK(scalar(s, "SELECT count(*) FROM intervals") == 2);
    s.finish_run(id, run_status::complete, t_start + 20'000'000'000);
    CHECK(status_of(s, id) == run_status::complete);
    CHECK(integrity(path) == "ok");
}

TEST_CASE("append_raw stores every sample in order, one transaction per call", "[db]")
{
    temp_dir dir;
    const auto path = dir.file("raw.db");
    store s(path);
    auto id = s.begin_run(sample_run("uuid-raw", "raw", t_start));
    std::vector<sample_row> rows;
    for (std::uint64_t i = 0; i < 100'000; ++i)
        rows.push_back(sample_row{i, 0, i % 97 == 0 ? -1 : std::int64_t(4000 + i % 1000),
                                  std::int64_t(30 + i % 7),
                                  i % 97 == 0 ? std::uint32_t(flag_lost)
                                  : i % 2     ? std::uint32_t(flag_rising)
                                              : 0u});
    s.append_raw(id, std::span(rows).first(60'000));
    s.append_raw(id, std::span(rows).subspan(60'000));
    s.append_raw(id, {});
    CHECK(raw_count(s, id) == rows.size());
    std::size_t k = 0;
    bool same = true;
    for_each_raw(s, id, [&](const sample_row& r) {
        const auto& w = rows[k++];
        same = same && r.seq == w.seq && r.latency_ns == w.latency_ns && r.gap_ns == w.gap_ns &&
               r.flags == w.flags;
    });
    CHECK(k == rows.size());
    CHECK(same);
    // A row that cannot be stored aborts its whole batch.
    std::vector<sample_row> bad = {rows[0], rows[1]};
    s.database().exec("CREATE TRIGGER no_neg BEFORE INSERT ON raw_samples WHEN NEW.seq = 1 "
                      "BEGIN SELECT RAISE(ABORT, 'refused'); END");
    CHECK_THROWS_AS(s.append_raw(id, bad), irqloop::error);
    CHECK(raw_count(s, id) == rows.size());
    s.database().exec("DROP TRIGGER no_neg");
    CHECK(integrity(path) == "ok");
}

TEST_CASE("a full disk fails the write cleanly and keeps every earlier commit", "[db]")
{
    small_disk_run d("size=1m", "uuid-full", 3);
    const auto filler = d.fs.file("filler");
    write_file(filler, std::string(256 * 1024, 'f'));

    std::vector<sample_row> batch;
    for (std::uint64_t i = 0; i < 20'000; ++i)
        batch.push_back(sample_row{i, 0, std::int64_t(5000 + i), 31, 0});
    std::uint64_t committed_raw = 0;
    bool failed = false;
    for (int round = 0; round < 100 && !failed; ++round) {
        for (auto& r : batch)
            r.seq += batch.size();
        try {
            d.s->append_raw(d.id, batch);
            committed_raw += batch.size();
        } catch (const irqloop::error& e) {
            failed = true;
            CHECK(e.status() == exit_failure);
            CHECK_THAT(e.message(), ContainsSubstring("append raw samples of run"));
            CHECK_THAT(e.why(), ContainsSubstring("disk full"));
            CHECK_THAT(e.hint(), ContainsSubstring("free some disk space"));
        }
    }
    REQUIRE(failed);
    CHECK(committed_raw > 0);

    // The store still reads, and after freeing space it writes again.
    CHECK(raw_count(*d.s, d.id) == committed_raw);
    std::filesystem::remove(filler);
    d.s->commit_interval(d.id, simple_commit(3, t_start).view());
    d.check_reader([&](store& r) {
        CHECK(intervals(r, d.id).size() == 4);
        CHECK(raw_count(r, d.id) == committed_raw);
    });
}

TEST_CASE("a full disk during commit_interval rolls back the interval", "[db]")
{
    small_disk_run d("size=512k", "uuid-full2", 2);
    // Fill the rest of the file system, then commit an interval with a large histogram.
    {
        std::ofstream f(d.fs.file("filler"), std::ios::binary);
        std::string block(4096, 'x');
        while (f.write(block.data(), block.size()))
            f.flush();
    }
    auto big = simple_commit(2, t_start);
    for (std::int64_t b = 0; b < 40'000; ++b)
        big.histogram.push_back(bucket_row{100'000 + b * 10, 100'000 + b * 10 + 10, 1});
    try {
        d.s->commit_interval(d.id, big.view());
        FAIL("the commit fitted into a full file system");
    } catch (const irqloop::error& e) {
        CHECK(e.status() == exit_failure);
        CHECK_THAT(e.why(), ContainsSubstring("disk full"));
    }
    d.s->database().exec("SELECT 1"); // the connection is fine
    d.check_reader([&](store& r) {
        CHECK(intervals(r, d.id).size() == 2);
        CHECK(histogram(r, d.id).size() == simple_commit(1, t_start).histogram.size());
        CHECK(get_run(r, d.id).summary.samples == 2000);
    });
}

TEST_CASE("a run killed before its first commit is recovered with its start as its end", "[db]")
{
    temp_dir dir;
    const auto path = dir.file("early.db");
    const auto id = child_writer::killed_run(path, 0);
    store s(path);
    CHECK(s.recovered_runs() == std::vector<std::int64_t>{id});
    auto r = get_run(s, id);
    CHECK(r.status == run_status::interrupted);
    CHECK(r.end_unix_ns == t_start);
    CHECK(intervals(s, id).empty());
}

TEST_CASE("loggers creating the same new file at once all get it, with one schema", "[db]")
{
    temp_dir dir;
    const auto path = dir.file("race.db");
    constexpr int writers = 4;
    std::vector<pid_t> pids;
    for (int k = 0; k < writers; ++k) {
        pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            int rc = 0;
            try {
                store s(path);
                auto id =
                    s.begin_run(sample_run("uuid-race-" + std::to_string(k), "race", t_start));
                s.commit_interval(id, simple_commit(0, t_start).view());
                s.finish_run(id, run_status::complete, t_start + 1);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "writer %d: %s\n", k, e.what());
                rc = 3;
            } catch (...) {
                std::fprintf(stderr, "writer %d: an exception that is not std::exception\n", k);
                rc = 3;
            }
            ::_exit(rc);
        }
        pids.push_back(pid);
    }
    for (pid_t pid : pids) {
        int st = 0;
        REQUIRE(::waitpid(pid, &st, 0) == pid);
        CHECK((WIFEXITED(st) && WEXITSTATUS(st) == 0));
    }
    store s(path, store::mode::read_only);
    auto runs = list_runs(s);
    CHECK(runs.size() == writers);
    for (const auto& r : runs)
        CHECK(r.status == run_status::complete);
    CHECK(s.database().execAndGet("SELECT count(*) FROM irqloop_info").getInt() == 2);
    CHECK(integrity(path) == "ok");
}

TEST_CASE("SIGKILL at any point of a commit leaves only whole intervals", "[db]")
{
    temp_dir dir;
    const auto path = dir.file("torn.db");
    const int delays_ms[] = {3, 11, 29, 47, 83};
    for (int delay : delays_ms) {
        int fds[2];
        REQUIRE(::pipe(fds) == 0);
        pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            ::close(fds[0]);
            try {
                store s(path);
                auto id =
                    s.begin_run(sample_run("uuid-torn-" + std::to_string(delay), "torn", t_start));
                if (::write(fds[1], &id, sizeof id) != sizeof id)
                    ::_exit(3);
                for (std::uint64_t i = 0;; ++i) { // commit as fast as possible until killed
                    auto c = simple_commit(i, t_start, 1000);
                    for (std::int64_t b = 0; b < 2000; ++b)
                        c.histogram.push_back(bucket_row{100'000 + b, 100'001 + b, i + 1});
                    s.commit_interval(id, c.view());
                }
            } catch (...) {
                ::_exit(3);
            }
        }
        ::close(fds[1]);
        std::int64_t id = 0;
        REQUIRE(::read(fds[0], &id, sizeof id) == sizeof id);
        ::close(fds[0]);
        ::usleep(delay * 1000);
        ::kill(pid, SIGKILL);
        int st = 0;
        ::waitpid(pid, &st, 0);
        REQUIRE(WIFSIGNALED(st));

        store s(path);
        CHECK(s.recovered_runs() == std::vector<std::int64_t>{id});
        auto r = get_run(s, id);
        const auto iv = intervals(s, id);
        const std::uint64_t k = iv.size();
        INFO("killed after " << delay << " ms, " << k << " intervals committed");
        for (std::uint64_t i = 0; i < k; ++i)
            CHECK(iv[i].index == i);
        CHECK(r.summary.samples == 1000 * k);
        CHECK(worst(s, id).size() == k);
        CHECK(histogram(s, id).size() == (k ? 2003u : 0u));
        CHECK(exceedances(s, id).size() == k);
        CHECK(r.status == run_status::interrupted);
    }
    CHECK(integrity(path) == "ok");
}
