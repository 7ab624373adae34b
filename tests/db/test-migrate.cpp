// SPDX-License-Identifier: MIT
#include "merge.hpp"
#include "migrate.hpp"
#include "read.hpp"
#include "store-fixtures.hpp"
#include "store.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <filesystem>
#include <functional>
#include <span>
#include <vector>

using namespace irqloop;
using namespace irqloop::db;
using namespace irqloop::db::test;
using Catch::Matchers::ContainsSubstring;

namespace
{

// Test-only steps: what a future 0002 and 0003 could look like. Never shipped. Like the
// shipped ones they change tables only; their views come with test_plan().
constexpr migration add_notes{2, "0002-test-add-notes",
                              "ALTER TABLE runs ADD COLUMN notes TEXT NOT NULL DEFAULT '';"};
constexpr migration add_tags{3, "0003-test-add-tags",
                             "CREATE TABLE run_tags (run_id INTEGER NOT NULL REFERENCES runs (id), "
                             "tag TEXT NOT NULL, PRIMARY KEY (run_id, tag)) WITHOUT ROWID;"};
constexpr migration broken{3, "0003-test-broken",
                           "CREATE TABLE half_done (x); INSERT INTO no_such_table VALUES (1);"};
// The test steps' one view: worst_cases with the runs' notes (version 2 on).
constexpr const char* notes_views = "DROP VIEW IF EXISTS worst_cases;"
                                    "CREATE VIEW worst_cases AS SELECT w.*, r.label, r.notes "
                                    "FROM worst w JOIN runs r ON r.id = w.run_id;";

schema_plan test_plan(std::span<const migration> steps)
{
    return {steps, notes_views};
}

std::int64_t scalar(const std::string& path, const std::string& q)
{
    SQLite::Database d(path, SQLite::OPEN_READONLY);
    return d.execAndGet(q).getInt64();
}

/**
 * The first write into an older file, which upgrades it (checked, and its pages): a run "new"
 * of one interval, simple_commit(0) as @p fill (if any) changes it, with @p window as its
 * window histogram.
 */
void write_new_run(const std::string& path, const std::string& uuid,
                   const std::function<void(commit_data&)>& fill = {},
                   std::span<const window_bucket_row> window = {})
{
    {
        store s(path);
        CHECK(s.file_version() == store::schema_version());
        const auto id = s.begin_run(sample_run(uuid, "new", t_start));
        auto c = simple_commit(0, t_start);
        if (fill)
            fill(c);
        auto view = c.view();
        view.window_histogram = window;
        s.commit_interval(id, view);
        s.finish_run(id, run_status::complete, t_start + 1);
    }
    CHECK(scalar(path, "PRAGMA user_version") == store::schema_version());
    CHECK(integrity(path) == "ok");
}

/** Does @p table (or view) of @p path have @p column? */
bool has_column(const std::string& path, const std::string& table, const std::string& column)
{
    return scalar(path, "SELECT count(*) FROM pragma_table_info('" + table + "') WHERE name = '" +
                            column + "'") == 1;
}

/** Read @p path as it is, through a catalog given to @p check: reading never upgrades. */
void read_as_is(const std::string& path, const std::function<void(catalog&)>& check)
{
    const auto version = scalar(path, "PRAGMA user_version");
    {
        catalog cat({path});
        check(cat);
    }
    CHECK(scalar(path, "PRAGMA user_version") == version);
}

/**
 * A copy of tests/db/fixtures/v@p version-sim.db in @p dir: the file that the build before
 * step @p version + 1 wrote (each test says how). Checked to be at that version.
 */
std::string fixture(const temp_dir& dir, int version)
{
    const auto name = "v" + std::to_string(version) + "-sim.db";
    const auto path = dir.file(name);
    std::filesystem::copy_file(IRQLOOP_SOURCE_DIR "/tests/db/fixtures/" + name, path);
    REQUIRE(scalar(path, "PRAGMA user_version") == version);
    return path;
}

/** The version-1 file that irqloop 0.1 (schema 1, before brackets) wrote: one run, id 1. */
std::string v1_file(const temp_dir& dir, std::int64_t& run_id)
{
    run_id = 1;
    return fixture(dir, 1);
}

} // namespace

TEST_CASE("this build ships steps 0002 (brackets), 0003 (window histograms), 0004 (SMI "
          "counts), 0005 (worst_cases kind), 0006 (truth), 0007 (verify), 0008 (breakdowns), "
          "0009 (target info) and 0010 (breakdown drops): version 10",
          "[db]")
{
    REQUIRE(shipped_migrations().size() == 9);
    CHECK(shipped_migrations()[0].to_version == 2);
    CHECK(shipped_migrations()[1].to_version == 3);
    CHECK(std::string(shipped_migrations()[1].name) == "0003-window-histograms");
    CHECK(std::string(shipped_migrations()[2].name) == "0004-smi-count");
    CHECK(std::string(shipped_migrations()[3].name) == "0005-worst-cases-kind");
    CHECK(std::string(shipped_migrations()[4].name) == "0006-truth");
    CHECK(std::string(shipped_migrations()[5].name) == "0007-verify");
    CHECK(std::string(shipped_migrations()[6].name) == "0008-breakdowns");
    CHECK(std::string(shipped_migrations()[7].name) == "0009-target-info");
    CHECK(std::string(shipped_migrations()[8].name) == "0010-breakdown-drops");
    CHECK(latest_version(shipped_migrations()) == 10);
    CHECK(store::schema_version() == 10);
}

TEST_CASE("a version-2 file from the previous irqloop reads as before without an upgrade", "[db]")
{
    temp_dir dir;
    // The version-2 file of the build before step 0003: a sim run, --raw.
    const auto path = fixture(dir, 2);
    read_as_is(path, [&](catalog& cat) {
        REQUIRE(cat.runs().size() == 1);
        const auto& r = cat.runs()[0];
        CHECK(r.bracketed);
        CHECK(r.meta.label == "v2-fixture");
        CHECK(r.summary.samples == 1788);
        CHECK(r.summary.max_ns == 9'989'184);
        CHECK(cat.intervals(r).size() == 59);
        CHECK(cat.worst(r).size() == 20);
        CHECK(cat.exceedances(r).size() == 424);
        CHECK(cat.raw_count(r) == 3000);
        CHECK_FALSE(cat.has_window_histograms(r));
        CHECK(cat.window_histograms(r).empty());
    });
}

TEST_CASE("a version-2 file is upgraded to 3 on the first write; old runs keep every row and "
          "have no window histograms, new runs have them",
          "[db]")
{
    temp_dir dir;
    const auto path = fixture(dir, 2);
    const window_bucket_row wb[] = {{0, db::window_buckets::index_of(5'000), 7},
                                    {0, db::window_buckets::index_of(90'000), 1}};
    write_new_run(path, "uuid-v3", {}, wb);
    CHECK(scalar(path, "SELECT count(*) FROM raw_samples WHERE run_id = 1") == 3000);
    CHECK(scalar(path, "SELECT count(*) FROM intervals WHERE run_id = 1") == 59);
    CHECK(scalar(path, "SELECT count(*) FROM exceedances WHERE run_id = 1") == 424);
    CHECK(scalar(path, "SELECT count(*) FROM events WHERE run_id = 1") == 495);
    CHECK(scalar(path, "SELECT count(*) FROM interval_histograms WHERE run_id = 1") == 0);
    CHECK(scalar(path, "SELECT sum(count) FROM window_histograms WHERE run_id = 2") == 8);
    CHECK(scalar(path, "SELECT lo_ns FROM window_histograms WHERE run_id = 2 AND count = 1") ==
          81'920);
    catalog cat({path});
    REQUIRE(cat.runs().size() == 2);
    for (const auto& r : cat.runs()) {
        CHECK(cat.has_window_histograms(r) == (r.id == 2)); // the old run has none
        CHECK(cat.window_histograms(r).size() == (r.id == 2 ? 2u : 0u));
    }
}

TEST_CASE("merge copies a version-2 file's runs into a current file", "[db]")
{
    temp_dir dir;
    const auto src = fixture(dir, 2);
    const auto dst = dir.file("current.db");
    {
        store s(dst);
        s.begin_run(sample_run("uuid-current", "current", t_start));
    }
    {
        store s(dst);
        const auto r = merge_into(s, src);
        CHECK(r.copied == 1);
    }
    CHECK(scalar(src, "PRAGMA user_version") == 2); // the source is only read
    CHECK(scalar(dst, "SELECT count(*) FROM raw_samples") == 3000);
    CHECK(scalar(dst, "SELECT count(*) FROM intervals") == 59);
    CHECK(integrity(dst) == "ok");
}

TEST_CASE("a version-1 file from the previous irqloop reads as before without an upgrade", "[db]")
{
    temp_dir dir;
    const auto path = fixture(dir, 1);
    read_as_is(path, [&](catalog& cat) {
        REQUIRE(cat.runs().size() == 1);
        const auto& r = cat.runs()[0];
        CHECK_FALSE(r.bracketed); // measured under the old rule: no interruption count
        CHECK(r.summary.samples == 2787);
        CHECK(r.summary.above_threshold == 34);
        CHECK(r.summary.max_ns == 2'161'180);
        CHECK(r.summary.max_bracket_ns == 0);
        const auto worst = cat.worst(r);
        REQUIRE(worst.size() == 20);
        CHECK(worst[0].latency_ns == 2'161'180);
        for (const auto& w : worst)
            CHECK(w.bracket_ns == 0);
        CHECK(cat.exceedances(r).size() == 34);
        std::uint64_t raw = 0;
        cat.for_each_raw(r, [&](const sample_row&) { ++raw; });
        CHECK(raw == 3000);
        CHECK(cat.intervals(r).size() > 1);
    });
}

TEST_CASE("a version-1 file is upgraded to the current version on the first write, keeping every "
          "row",
          "[db]")
{
    temp_dir dir;
    const auto path = fixture(dir, 1);
    // A new run goes into the upgraded file with its brackets.
    write_new_run(path, "uuid-v2", [](commit_data& c) {
        c.worst = {sample_row{1, t_start, 500'000, 100, flag_disturbed, 40'000}};
        c.summary.max_bracket_ns = 40'000;
        c.summary.interruptions = 7;
    });
    CHECK(scalar(path, "SELECT count(*) FROM raw_samples WHERE run_id = 1") == 3000);
    CHECK(scalar(path, "SELECT count(*) FROM worst WHERE run_id = 1 AND bracket_ns = 0") == 20);
    CHECK(scalar(path, "SELECT interruptions IS NULL FROM runs WHERE id = 1") == 1);
    CHECK(scalar(path, "SELECT max_bracket_ns FROM runs WHERE id = 2") == 40'000);
    CHECK(scalar(path, "SELECT interruptions FROM runs WHERE id = 2") == 7);
    CHECK(scalar(path, "SELECT lower_ns FROM worst_cases WHERE run_id = 2") == 460'000);
    catalog cat({path});
    REQUIRE(cat.runs().size() == 2);
    for (const auto& r : cat.runs()) {
        CHECK(r.bracketed == (r.id == 2)); // the old run keeps its old rule
        CHECK(cat.worst(r)[0].bracket_ns == (r.id == 2 ? 40'000 : 0));
    }
}

TEST_CASE("opening an older file runs each step in order and keeps its runs", "[db]")
{
    temp_dir dir;
    std::int64_t id = 0;
    const auto path = v1_file(dir, id);
    // Test steps up to one version past this build's, so that this build must refuse the file.
    std::vector<migration> steps = {add_notes, add_tags};
    while (latest_version(steps) <= store::schema_version())
        steps.push_back({latest_version(steps) + 1, "test-filler", "SELECT 1;"});
    const int newer = latest_version(steps);
    {
        store s(path, store::mode::read_write, test_plan(steps));
        CHECK(s.database().execAndGet("PRAGMA user_version").getInt() == newer);
        CHECK(s.database().tableExists("run_tags"));
        s.database().exec("UPDATE runs SET notes = 'migrated'");
    }
    // This build's catalog refuses a newer file (see below): count the rows directly.
    CHECK(scalar(path, "SELECT samples FROM runs WHERE id = " + std::to_string(id)) == 2787);
    CHECK(scalar(path, "SELECT count(*) FROM intervals WHERE run_id = " + std::to_string(id)) == 6);
    CHECK(scalar(path, "SELECT count(*) FROM worst_cases WHERE notes = 'migrated'") == 20);
    CHECK(integrity(path) == "ok");
    // This build now refuses the file as newer, and leaves it alone.
    const auto before = file_bytes(path);
    try {
        store s(path);
        FAIL("a version-" << newer << " file was opened by a version-" << store::schema_version()
                          << " build");
    } catch (const irqloop::error& e) {
        CHECK_THAT(e.why(), ContainsSubstring("newer irqloop"));
    }
    CHECK(file_bytes(path) == before);
}

TEST_CASE("a new file goes through the same steps as an old one", "[db]")
{
    temp_dir dir;
    const migration steps[] = {add_notes};
    const auto path = dir.file("fresh.db");
    {
        store s(path, store::mode::read_write, test_plan(steps));
        s.begin_run(sample_run("uuid-fresh", "fresh", t_start));
    }
    CHECK(scalar(path, "PRAGMA user_version") == 2);
    CHECK(scalar(path, "SELECT count(*) FROM runs WHERE notes = ''") == 1);
}

TEST_CASE("a failing step leaves the file at the last good version", "[db]")
{
    temp_dir dir;
    std::int64_t id = 0;
    const auto path = v1_file(dir, id);
    const migration steps[] = {add_notes, broken};
    try {
        store s(path, store::mode::read_write, test_plan(steps));
        FAIL("a broken step was accepted");
    } catch (const irqloop::error& e) {
        CHECK(e.status() == exit_failure);
        CHECK_THAT(e.message(), ContainsSubstring("from schema version 2 to 3"));
        CHECK_THAT(e.why(), ContainsSubstring("0003-test-broken"));
        CHECK_THAT(e.hint(), ContainsSubstring("stays at version 2"));
    }
    CHECK(scalar(path, "PRAGMA user_version") == 2);
    CHECK(scalar(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'half_done'") == 0);
    CHECK(scalar(path, "SELECT count(*) FROM runs") == 1);
    CHECK(integrity(path) == "ok");
    // The views come with the last step only: until then the file keeps the ones it had.
    CHECK_FALSE(has_column(path, "worst_cases", "notes"));
    CHECK(scalar(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'run_summary'") == 1);
    // A read-only open of an older file reads it as it is and never upgrades it.
    const migration good[] = {add_notes, add_tags};
    {
        store r(path, store::mode::read_only, test_plan(good));
        CHECK(r.file_version() == 2);
    }
    CHECK(scalar(path, "PRAGMA user_version") == 2);
    store s(path, store::mode::read_write, test_plan(good));
    CHECK(s.file_version() == 3);
    CHECK(s.database().execAndGet("PRAGMA user_version").getInt() == 3);
    CHECK(has_column(path, "worst_cases", "notes"));
    // Views the plan does not define are left alone (the file's own, or a user's).
    CHECK(s.database().execAndGet("SELECT count(*) FROM run_summary").getInt() == 1);
}

TEST_CASE("a gap in the steps is an error, not a skipped version", "[db]")
{
    temp_dir dir;
    std::int64_t id = 0;
    const auto path = v1_file(dir, id);
    const migration steps[] = {add_tags}; // 3 without 2
    CHECK_THROWS_AS(store(path, store::mode::read_write, test_plan(steps)), irqloop::error);
    CHECK(scalar(path, "PRAGMA user_version") == 1);
}

TEST_CASE("a version-3 file from the previous irqloop reads without an upgrade, SMIs n/a", "[db]")
{
    temp_dir dir;
    const auto path = fixture(dir, 3);
    read_as_is(path, [&](catalog& cat) {
        REQUIRE(cat.runs().size() == 1);
        const auto& r = cat.runs()[0];
        CHECK(r.meta.label == "v3-fixture");
        CHECK(r.summary.samples == 2972);
        CHECK_FALSE(r.summary.smi_count);
        const auto iv = cat.intervals(r);
        CHECK(iv.size() == 9);
        for (const auto& w : iv)
            CHECK_FALSE(w.smi_count); // not counted: n/a, never 0
        CHECK(cat.has_window_histograms(r));
        CHECK(cat.window_histograms(r).size() == 62);
        CHECK(cat.raw_count(r) == 3000);
    });
    // The first write upgrades it; the old run keeps every row and its NULL SMI counts.
    write_new_run(path, "uuid-v4", [](commit_data& c) {
        c.interval.smi_count = 3;
        c.summary.smi_count = 3;
    });
    CHECK(scalar(path, "SELECT count(*) FROM interval_histograms WHERE run_id = 1") == 62);
    CHECK(scalar(path, "SELECT count(*) FROM intervals WHERE run_id = 1 AND smi_count IS NULL") ==
          9);
    CHECK(scalar(path, "SELECT smi_count IS NULL FROM run_summary WHERE id = 1") == 1);
    CHECK(scalar(path, "SELECT smi_count FROM interval_maxima WHERE run_id = 2") == 3);
    CHECK(scalar(path, "SELECT smi_count FROM run_summary WHERE id = 2") == 3);
    CHECK(scalar(path, "SELECT count(*) FROM raw_samples WHERE run_id = 1") == 3000);
}

TEST_CASE("a version-4 file from the previous irqloop upgrades to 5: worst_cases gains kind, "
          "which tells the floor run from the measurements",
          "[db]")
{
    // Written by the build before step 0005 (schema 4, the tree of commit f172cf7):
    //   irqloop merge --db v4-sim.db src.db smi.db
    // src.db: a floor run ('loopback', irqloop calibrate) and a measurement ('credit2,
    // vwfi=native') on the sim board, recorded by the schema-3 build as docs/commands/report.md's
    // demo.db commands do (the other runs deleted); smi.db: a schema-4 sim run whose SMI counter
    // was a fake MSR file that never moved (--preflight-root). Every run keeps the top 1000.
    temp_dir dir;
    const auto path = fixture(dir, 4);
    CHECK_FALSE(has_column(path, "worst_cases", "kind")); // version 4 could not tell them apart
    const std::string common = "SELECT run_id, label, rank, seq, time_utc, latency_ns, "
                               "disturbed, warmup, lower_ns FROM worst_cases ORDER BY run_id, rank";
    const auto before = rows_text(path, common);
    read_as_is(path, [&](catalog& cat) {
        REQUIRE(cat.runs().size() == 3);
        auto by_id = [&](std::int64_t id) -> const run_record& {
            for (const auto& r : cat.runs())
                if (r.id == id)
                    return r;
            FAIL("no run " << id);
            throw;
        };
        const auto& floor = by_id(1);
        CHECK(floor.meta.kind == run_kind::floor);
        CHECK(floor.meta.label == "loopback");
        CHECK(floor.summary.samples == 4820);
        CHECK(by_id(2).meta.kind == run_kind::measure);
        CHECK(by_id(2).meta.label == "credit2, vwfi=native");
        CHECK(by_id(2).summary.samples == 4812);
        CHECK_FALSE(by_id(2).summary.smi_count); // recorded before version 4: n/a
        CHECK(by_id(3).meta.kind == run_kind::measure);
        CHECK(by_id(3).summary.samples == 2831);
        REQUIRE(by_id(3).summary.smi_count); // counted, none came: 0, not n/a
        CHECK(*by_id(3).summary.smi_count == 0);
        // What `irqloop worst` reads without --run: the two measure runs (by start time), not
        // the floor.
        const auto picked = cat.select({});
        REQUIRE(picked.size() == 2);
        CHECK(picked[0]->id == 3);
        CHECK(picked[1]->id == 2);
        CHECK(cat.worst(floor).size() == 1000);
    });
    CHECK(scalar(path, "SELECT count(*) FROM worst_cases") == 3000);
    // The floor run's worst samples rank among the measurements' in the version-4 view.
    const std::string top_run = "SELECT run_id FROM worst_cases ORDER BY latency_ns DESC LIMIT 1";
    CHECK(scalar(path, top_run) == 1);
    {
        store s(path);
        CHECK(s.file_version() == store::schema_version());
    }
    CHECK(scalar(path, "PRAGMA user_version") == store::schema_version());
    CHECK(integrity(path) == "ok");
    CHECK(has_column(path, "worst_cases", "kind"));
    CHECK(rows_text(path, common) == before); // the same rows and values, one column more
    CHECK(scalar(path, "SELECT count(*) FROM worst_cases WHERE kind = 'floor'") == 1000);
    CHECK(scalar(path, "SELECT count(*) FROM worst_cases WHERE kind = 'floor' AND run_id = 1") ==
          1000);
    CHECK(scalar(path, "SELECT count(*) FROM worst_cases WHERE kind = 'measure' AND run_id IN "
                       "(2, 3)") == 2000);
    CHECK(scalar(path, "SELECT count(*) FROM worst_cases") == 3000);
    // WHERE kind = 'measure' ORDER BY rank_ns is what `irqloop worst` ranks: the measurements'
    // worst rank 1 (run 3's clean 9.987 ms; disturbed samples of run 2 have larger upper bounds
    // and smaller lower bounds), never the floor's.
    CHECK(has_column(path, "worst_cases", "rank_ns"));
    CHECK(scalar(path, "SELECT run_id FROM worst_cases WHERE kind = 'measure' ORDER BY rank_ns "
                       "DESC, latency_ns DESC LIMIT 1") == 3);
    CHECK(scalar(path, "SELECT rank FROM worst_cases WHERE kind = 'measure' ORDER BY rank_ns "
                       "DESC, latency_ns DESC LIMIT 1") == 1);
    CHECK(scalar(path, "SELECT max(rank_ns) FROM worst_cases WHERE kind = 'measure'") == 9'987'431);
    CHECK(scalar(path, "SELECT count(*) FROM worst_cases WHERE rank_ns != CASE WHEN disturbed "
                       "THEN lower_ns ELSE latency_ns END") == 0);
    CHECK(scalar(path, "SELECT smi_count FROM run_summary WHERE id = 3") == 0);
    CHECK(scalar(path, "SELECT smi_count IS NULL FROM run_summary WHERE id = 2") == 1);
}

TEST_CASE("a version-5 file from the previous irqloop reads without an upgrade, truth unknown; "
          "upgraded to 6 it has the truth columns, NULL in its old rows",
          "[db]")
{
    // Written by a schema-5 build: /work/main's build tree of 02:31 UTC on 2026-12-02, the
    // lead's tree just before commit 81fe1d4 (the sim board's far end already computed, as
    // its "far=computed has none" message shows; its truth not yet stored):
    //   irqloop run --hw 'sim:model=normal,mean=8us,sd=1us,seed=5,far=computed' -n 3000
    //     -i 100us --raw --stats-interval 100ms --top-k 100 --label v5-fixture --db v5-sim.db
    temp_dir dir;
    const auto path = fixture(dir, 5);
    CHECK_FALSE(has_column(path, "raw_samples", "truth_ns"));
    CHECK_FALSE(has_column(path, "intervals", "truth_max_ns"));
    const std::string common =
        "SELECT run_id, label, rank, seq, time_utc, latency_ns, disturbed, warmup, lower_ns, "
        "kind, rank_ns FROM worst_cases WHERE run_id = 1 ORDER BY rank";
    const auto before = rows_text(path, common);
    auto by_label = [](catalog& cat, const std::string& label) -> const run_record& {
        for (const auto& r : cat.runs())
            if (r.meta.label == label)
                return r;
        FAIL("no run labelled " << label);
        throw;
    };
    auto check_old_run = [&](catalog& cat) {
        const auto& r = by_label(cat, "v5-fixture");
        CHECK(r.summary.samples == 2964);
        CHECK(r.summary.max_ns == 12'038);
        const auto iv = cat.intervals(r);
        REQUIRE(iv.size() == 4);
        for (const auto& w : iv)
            CHECK_FALSE(w.truth_max_ns); // unknown, never 0
        const auto worst = cat.worst(r);
        REQUIRE(worst.size() == 100);
        for (const auto& w : worst)
            CHECK_FALSE(w.truth_ns);
        std::uint64_t raw = 0, with_truth = 0;
        cat.for_each_raw(r, [&](const sample_row& s) {
            ++raw;
            with_truth += s.truth_ns.has_value();
        });
        CHECK(raw == 3000);
        CHECK(with_truth == 0);
    };
    read_as_is(path, [&](catalog& cat) {
        REQUIRE(cat.runs().size() == 1);
        check_old_run(cat);
    });

    // The first write upgrades it; a new run stores its truth, the old run's rows read NULL.
    write_new_run(path, "uuid-v6", [](commit_data& c) {
        c.worst = {sample_row{1, t_start, 9'000, 100, 0, 400, 8'700}};
        c.interval.truth_max_ns = 8'700;
    });
    for (const auto& [table, column] :
         {std::pair{"raw_samples", "truth_ns"}, std::pair{"worst", "truth_ns"},
          std::pair{"exceedances", "truth_ns"}, std::pair{"intervals", "truth_max_ns"},
          std::pair{"worst_cases", "truth_ns"}, std::pair{"interval_maxima", "truth_max_ns"}})
        CHECK(has_column(path, table, column));
    CHECK(rows_text(path, common) == before); // the old run's rows, values as they were
    CHECK(scalar(path, "SELECT count(*) FROM raw_samples WHERE run_id = 1") == 3000);
    CHECK(scalar(path, "SELECT count(*) FROM raw_samples WHERE truth_ns IS NOT NULL") == 0);
    CHECK(scalar(path, "SELECT count(*) FROM worst WHERE run_id = 1 AND truth_ns IS NULL") == 100);
    CHECK(scalar(path, "SELECT count(*) FROM intervals WHERE run_id = 1 AND truth_max_ns IS "
                       "NULL") == 4);
    CHECK(scalar(path, "SELECT count(*) FROM interval_maxima WHERE run_id = 1 AND truth_max_ns "
                       "IS NULL") == 4);
    CHECK(scalar(path, "SELECT truth_ns FROM worst_cases WHERE run_id = 2") == 8'700);
    CHECK(scalar(path, "SELECT truth_max_ns FROM interval_maxima WHERE run_id = 2") == 8'700);
    catalog cat({path});
    REQUIRE(cat.runs().size() == 2);
    check_old_run(cat);
    const auto& fresh = by_label(cat, "new");
    REQUIRE(cat.worst(fresh).size() == 1);
    CHECK(cat.worst(fresh)[0].truth_ns == 8'700);
    CHECK(cat.intervals(fresh)[0].truth_max_ns == 8'700);
}

TEST_CASE("a version-8 file from the previous irqloop reads without an upgrade, no target "
          "info; upgraded to 9 its runs keep every row, a new run stores its target info, and "
          "merge copies it",
          "[db]")
{
    // Written by a schema-8 build: the build tree of /work/wt-explain26c at b9a4948 (main with
    // 0008-breakdowns, before 0009-target-info), 10:19 UTC on 2026-12-05:
    //   irqloop run --hw 'sim:model=normal,mean=8us,sd=1us,seed=7,far=computed' -n 2000
    //     -i 100us --raw --stats-interval 100ms --top-k 50 --label v8-fixture --db v8-sim.db
    temp_dir dir;
    const auto path = fixture(dir, 8);
    CHECK(scalar(path, "PRAGMA user_version") == 8);
    CHECK(scalar(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'target_info'") == 0);
    read_as_is(path, [](catalog& cat) {
        REQUIRE(cat.runs().size() == 1);
        CHECK(cat.runs()[0].meta.label == "v8-fixture");
        CHECK_FALSE(cat.runs()[0].meta.target_info); // none recorded, never an empty one
    });
    const auto raw_before = scalar(path, "SELECT count(*) FROM raw_samples WHERE run_id = 1");
    CHECK(raw_before == 2000);
    {
        store s(path);
        CHECK(s.file_version() == store::schema_version());
        auto run = sample_run("uuid-v9", "with-target", t_start);
        target_info_row t;
        t.command = "xl info";
        t.status = target_info_status::exited;
        t.exit_code = 0;
        t.timeout_ns = 30'000'000'000;
        t.duration_ns = 12'000'000;
        t.out = "xen_scheduler          : credit2\n";
        t.out_bytes = t.out.size();
        t.facts = {{"xen_scheduler", "credit2", "xl info"}, {"sched", "credit2", "xl info"}};
        run.target_info = t;
        const auto id = s.begin_run(run);
        s.finish_run(id, run_status::complete, t_start + 1);
    }
    CHECK(scalar(path, "PRAGMA user_version") == store::schema_version());
    CHECK(integrity(path) == "ok");
    CHECK(scalar(path, "SELECT count(*) FROM raw_samples WHERE run_id = 1") == raw_before);
    CHECK(scalar(path, "SELECT count(*) FROM target_info WHERE run_id = 1") == 0);
    CHECK(scalar(path, "SELECT count(*) FROM target_facts WHERE run_id = 2 AND key = 'sched' AND "
                       "value = 'credit2'") == 1);
    {
        catalog cat({path});
        REQUIRE(cat.runs().size() == 2);
        const run_record* old_run = nullptr;
        const run_record* new_run = nullptr;
        for (const auto& r : cat.runs())
            (r.meta.label == "v8-fixture" ? old_run : new_run) = &r;
        REQUIRE(old_run);
        REQUIRE(new_run);
        CHECK_FALSE(old_run->meta.target_info);
        REQUIRE(new_run->meta.target_info);
        const auto& t = *new_run->meta.target_info;
        CHECK(t.command == "xl info");
        CHECK(t.exit_code == 0);
        CHECK_FALSE(t.signal);
        CHECK(t.fact("sched") == "credit2");
        CHECK(t.facts.size() == 2);
        CHECK_FALSE(t.out_truncated());
    }
    // merge carries the target info under the run's new id.
    const auto dst = dir.file("merged.db");
    {
        store d(dst);
        merge_into(d, path);
    }
    CHECK(scalar(dst, "SELECT count(*) FROM target_info t JOIN runs r ON r.id = t.run_id WHERE "
                      "r.uuid = 'uuid-v9' AND t.command = 'xl info'") == 1);
    CHECK(scalar(dst, "SELECT count(*) FROM target_facts f JOIN runs r ON r.id = f.run_id WHERE "
                      "r.uuid = 'uuid-v9'") == 2);
}

TEST_CASE("a version-9 file from the previous irqloop reads without an upgrade; upgraded to 10 "
          "its stored breakdowns keep every field, what the tracer dropped unknown (NULL), and "
          "merge copies them",
          "[db]")
{
    // Written by main's build at 0087f05 (schema 9), the scripted trace of
    // docs/commands/explain.md (trace-of-run.awk) stored for the worst two samples:
    //   irqloop run --hw 'sim:model=normal,mean=8us,sd=1us,spike_p=0.005,spike_min=60us,
    //     spike_max=120us,seed=3,far=computed' --samples 2000 --interval 100us --jitter 10us
    //     --raw --label v9-fixture --db v9-sim.db
    //   irqloop explain --db v9-sim.db --run 1 --trace trace.txt --worst 2 --store
    temp_dir dir;
    const auto path = fixture(dir, 9);
    const std::string kept = "SELECT seq, unix_ns, trace, trace_bytes, trace_hash, trace_events, "
                             "paired, residual_ns, drift_ppm, latency_ns, cpu, blocker_kind, "
                             "blocker_name, blocker_ns, blocker_in_window_ns, blocker_complete, "
                             "task FROM breakdowns ORDER BY seq";
    const auto before = rows_text(path, kept);
    const auto parts = rows_text(path, "SELECT * FROM breakdown_parts ORDER BY seq, idx");
    CHECK(scalar(path, "SELECT count(*) FROM breakdowns") == 2);
    CHECK_FALSE(has_column(path, "breakdowns", "dropped_events"));
    read_as_is(path, [](catalog& cat) {
        REQUIRE(cat.runs().size() == 1);
        CHECK(cat.runs()[0].meta.label == "v9-fixture");
        CHECK(cat.raw_count(cat.runs()[0]) == 2000);
    });
    {
        store upgraded(path);
    }
    CHECK(scalar(path, "PRAGMA user_version") == 10);
    CHECK(integrity(path) == "ok");
    CHECK(has_column(path, "breakdowns", "dropped_events"));
    CHECK(rows_text(path, kept) == before);
    CHECK(rows_text(path, "SELECT * FROM breakdown_parts ORDER BY seq, idx") == parts);
    CHECK(scalar(path, "SELECT count(*) FROM breakdowns WHERE dropped_events IS NULL") == 2);
    // merge carries them, the unknown left unknown.
    const auto dst = dir.file("merged.db");
    {
        store d(dst);
        merge_into(d, path);
    }
    CHECK(scalar(dst, "SELECT count(*) FROM breakdowns WHERE dropped_events IS NULL") == 2);
    CHECK(scalar(dst, "SELECT count(*) FROM breakdown_parts") ==
          scalar(path, "SELECT count(*) FROM breakdown_parts"));
}

namespace
{

/** Every table, index and view of @p path with its SQL, by name: what a schema is. */
std::string schema_text(const std::string& path)
{
    return rows_text(path, "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, "
                           "name");
}

} // namespace

TEST_CASE("every road reaches the same schema: a new file and each previous version's file, "
          "upgraded, have the same tables, indexes and views",
          "[db]")
{
    temp_dir dir;
    const auto fresh = dir.file("fresh.db");
    store{fresh}.begin_run(sample_run("uuid-fresh", "fresh", t_start));
    const auto expected = schema_text(fresh);
    for (const char* view : {"run_summary", "worst_cases", "interval_maxima", "window_histograms"})
        CHECK_THAT(expected, ContainsSubstring(std::string("CREATE VIEW ") + view + " AS"));
    for (int version = 1; version < store::schema_version(); ++version) {
        INFO("the version-" << version << " fixture");
        const auto path = fixture(dir, version);
        {
            store upgraded(path);
        }
        CHECK(schema_text(path) == expected);
    }
}

TEST_CASE("a read-write open of a file at the latest version changes no schema object", "[db]")
{
    temp_dir dir;
    const auto path = dir.file("current.db");
    store{path}.begin_run(sample_run("uuid-current", "current", t_start));
    const auto cookie = scalar(path, "PRAGMA schema_version");
    const auto before = schema_text(path);
    {
        store s(path);
        CHECK(s.file_version() == store::schema_version());
    }
    CHECK(scalar(path, "PRAGMA schema_version") == cookie); // no view dropped and re-created
    CHECK(schema_text(path) == before);
}

TEST_CASE("a version-7 file from the previous irqloop reads without an upgrade; upgraded to 8 "
          "it has the empty breakdown tables and every old row as it was",
          "[db]")
{
    // Written by main's build at ac30e44 (schema 7):
    //   irqloop run --hw 'sim:model=normal,mean=8us,sd=1us,seed=5,far=computed' -n 300
    //     -i 100us --raw --stats-interval 100ms --top-k 100 --label v7-fixture --db v7-sim.db
    temp_dir dir;
    const auto path = fixture(dir, 7);
    const std::string rows = "SELECT seq, latency_ns, gap_ns, flags, bracket_ns, truth_ns, "
                             "unix_ns FROM raw_samples ORDER BY rowid";
    const auto before = rows_text(path, rows);
    const auto worst = rows_text(path, "SELECT * FROM worst_cases ORDER BY run_id, rank");
    read_as_is(path, [&](catalog& cat) {
        REQUIRE(cat.runs().size() == 1);
        CHECK(cat.runs()[0].meta.label == "v7-fixture");
        CHECK(cat.raw_count(cat.runs()[0]) == 300);
    });
    CHECK(scalar(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'breakdowns'") == 0);
    {
        store upgraded(path);
    }
    CHECK(scalar(path, "PRAGMA user_version") == store::schema_version());
    CHECK(scalar(path, "SELECT count(*) FROM breakdowns") == 0);
    CHECK(scalar(path, "SELECT count(*) FROM breakdown_parts") == 0);
    CHECK(has_column(path, "breakdowns", "blocker_ns"));
    CHECK(has_column(path, "breakdowns", "trace_hash"));
    CHECK(has_column(path, "breakdowns", "residual_ns"));
    CHECK(has_column(path, "breakdown_parts", "measured"));
    CHECK(rows_text(path, rows) == before);
    CHECK(rows_text(path, "SELECT * FROM worst_cases ORDER BY run_id, rank") == worst);
    CHECK(scalar(path, "SELECT count(unix_ns) FROM raw_samples") == 300);
}
