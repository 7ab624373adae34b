// SPDX-License-Identifier: MIT
#include "run-select.hpp"

#include "error.hpp"
#include "store.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <boost/program_options.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <set>

namespace irqloop::logger
{

std::string run_info::name() const
{
    return meta.label.empty() ? "run " + std::to_string(id) : meta.label;
}

double run_info::pct_above() const noexcept
{
    return summary.samples ? 100.0 * double(summary.above_threshold) / double(summary.samples)
                           : 0.0;
}

struct run_catalog::impl {
    std::vector<std::string> paths;
    std::vector<std::unique_ptr<db::store>> stores;
    std::vector<run_info> runs;
};

namespace
{

std::int64_t i64(const SQLite::Column& c)
{
    return c.isNull() ? 0 : c.getInt64();
}
std::uint64_t u64(const SQLite::Column& c)
{
    return std::uint64_t(i64(c));
}
double dbl(const SQLite::Column& c)
{
    return c.isNull() ? 0.0 : c.getDouble();
}

void load_runs(SQLite::Database& sql, const std::string& path, std::size_t index,
               std::vector<run_info>& out)
{
    SQLite::Statement q(sql, R"(
        SELECT id, uuid, label, kind, status, start_unix_ns, end_unix_ns, command_line, version,
               uname, hostname, backend, clock_source, clock_hz, clock_read_ns, interval_ns,
               jitter_ns, timeout_ns, threshold_ns, gap_limit_ns, stats_interval_ns,
               warmup_samples, samples_requested, duration_ns, rt_settings, target, load,
               samples, stimuli, lost, late, disturbed, overflows, above_threshold,
               exceedances_dropped, rising, falling, min_ns, max_ns, warm_max_ns, mean_ns,
               stddev_ns, p50_ns, p99_ns, p999_ns, p9999_ns, p999999_ns
        FROM runs ORDER BY id)");
    while (q.executeStep()) {
        run_info r;
        r.db_path = path;
        r.db_index = index;
        int c = 0;
        auto col = [&] { return q.getColumn(c++); };
        r.id = i64(col());
        r.meta.uuid = col().getString();
        r.meta.label = col().getString();
        r.meta.kind = db::parse_run_kind(col().getString());
        r.status = db::parse_run_status(col().getString());
        r.meta.start_unix_ns = i64(col());
        if (auto e = col(); !e.isNull())
            r.end_unix_ns = e.getInt64();
        r.meta.command_line = col().getString();
        r.meta.version = col().getString();
        r.meta.uname = col().getString();
        r.meta.hostname = col().getString();
        r.meta.backend = col().getString();
        r.meta.clock_source = col().getString();
        r.meta.clock_hz = dbl(col());
        r.meta.clock_read_ns = dbl(col());
        r.meta.interval_ns = i64(col());
        r.meta.jitter_ns = i64(col());
        r.meta.timeout_ns = i64(col());
        r.meta.threshold_ns = i64(col());
        r.meta.gap_limit_ns = i64(col());
        r.meta.stats_interval_ns = i64(col());
        r.meta.warmup_samples = u64(col());
        r.meta.samples_requested = u64(col());
        r.meta.duration_ns = i64(col());
        r.meta.rt_settings = col().getString();
        r.meta.target = col().getString();
        r.meta.load = col().getString();
        auto& s = r.summary;
        s.samples = u64(col());
        s.stimuli = u64(col());
        s.lost = u64(col());
        s.late = u64(col());
        s.disturbed = u64(col());
        s.overflows = u64(col());
        s.above_threshold = u64(col());
        s.exceedances_dropped = u64(col());
        s.rising = u64(col());
        s.falling = u64(col());
        auto min_col = col();
        r.has_stats = !min_col.isNull() && s.samples > 0;
        s.min_ns = i64(min_col);
        s.max_ns = i64(col());
        s.warm_max_ns = i64(col());
        s.mean_ns = dbl(col());
        s.stddev_ns = dbl(col());
        s.p50_ns = i64(col());
        s.p99_ns = i64(col());
        s.p999_ns = i64(col());
        s.p9999_ns = i64(col());
        s.p999999_ns = i64(col());
        s.end_unix_ns = r.end_unix_ns.value_or(0);
        out.push_back(std::move(r));
    }
    SQLite::Statement m(sql, "SELECT run_id, key, value FROM run_metadata ORDER BY run_id, key");
    while (m.executeStep()) {
        const std::int64_t id = m.getColumn(0).getInt64();
        for (auto& r : out)
            if (r.db_index == index && r.id == id)
                r.meta.metadata.emplace_back(m.getColumn(1).getString(),
                                             m.getColumn(2).getString());
    }
}

std::string backend_kind(const std::string& spec)
{
    return spec.substr(0, spec.find(':'));
}

} // namespace

run_catalog::run_catalog(const std::vector<std::string>& paths) : impl_(std::make_unique<impl>())
{
    if (paths.empty())
        throw error("open database", "no database file given", "use --db FILE");
    std::set<std::string> seen_uuid;
    std::vector<run_info> all;
    for (const auto& p : paths) {
        std::error_code ec;
        if (!std::filesystem::exists(p, ec))
            throw error("open database '" + p + "'", "no such file",
                        "give the file 'irqloop run --db' wrote");
        auto st = std::make_unique<db::store>(p, db::store::mode::read_only);
        load_runs(st->database(), p, impl_->stores.size(), all);
        impl_->stores.push_back(std::move(st));
        impl_->paths.push_back(p);
    }
    std::stable_sort(all.begin(), all.end(), [](const run_info& a, const run_info& b) {
        if (a.meta.start_unix_ns != b.meta.start_unix_ns)
            return a.meta.start_unix_ns < b.meta.start_unix_ns;
        if (a.db_index != b.db_index)
            return a.db_index < b.db_index;
        return a.id < b.id;
    });
    // Dedup keeps the copy from the earliest file, whatever the start-time order says.
    std::vector<const run_info*> by_file;
    for (const auto& r : all)
        by_file.push_back(&r);
    std::stable_sort(by_file.begin(), by_file.end(),
                     [](auto* a, auto* b) { return a->db_index < b->db_index; });
    std::set<const run_info*> keep;
    for (auto* r : by_file)
        if (seen_uuid.insert(r->meta.uuid).second)
            keep.insert(r);
    for (auto& r : all)
        if (keep.count(&r))
            impl_->runs.push_back(std::move(r));
}

run_catalog::~run_catalog() = default;
run_catalog::run_catalog(run_catalog&&) noexcept = default;
run_catalog& run_catalog::operator=(run_catalog&&) noexcept = default;

const std::vector<run_info>& run_catalog::runs() const noexcept
{
    return impl_->runs;
}
const std::vector<std::string>& run_catalog::paths() const noexcept
{
    return impl_->paths;
}

std::string run_catalog::describe() const
{
    std::string s;
    for (const auto& p : impl_->paths)
        s += (s.empty() ? "" : ", ") + p;
    return s;
}

SQLite::Database& run_catalog::database(const run_info& run)
{
    return impl_->stores.at(run.db_index)->database();
}

std::vector<db::interval_row> run_catalog::intervals(const run_info& run)
{
    SQLite::Statement q(database(run), R"(
        SELECT idx, start_unix_ns, end_unix_ns, samples, min_ns, max_ns, mean_ns, stddev_ns,
               p50_ns, p99_ns, p999_ns, above_threshold, lost, disturbed, overflows
        FROM intervals WHERE run_id = ? ORDER BY idx)");
    q.bind(1, run.id);
    std::vector<db::interval_row> out;
    while (q.executeStep()) {
        db::interval_row i;
        int c = 0;
        auto col = [&] { return q.getColumn(c++); };
        i.index = u64(col());
        i.start_unix_ns = i64(col());
        i.end_unix_ns = i64(col());
        i.samples = u64(col());
        i.min_ns = i64(col());
        i.max_ns = i64(col());
        i.mean_ns = dbl(col());
        i.stddev_ns = dbl(col());
        i.p50_ns = i64(col());
        i.p99_ns = i64(col());
        i.p999_ns = i64(col());
        i.above_threshold = u64(col());
        i.lost = u64(col());
        i.disturbed = u64(col());
        i.overflows = u64(col());
        out.push_back(i);
    }
    return out;
}

std::vector<db::bucket_row> run_catalog::histogram(const run_info& run)
{
    SQLite::Statement q(
        database(run), "SELECT lo_ns, hi_ns, count FROM histogram WHERE run_id = ? ORDER BY lo_ns");
    q.bind(1, run.id);
    std::vector<db::bucket_row> out;
    while (q.executeStep())
        out.push_back({i64(q.getColumn(0)), i64(q.getColumn(1)), u64(q.getColumn(2))});
    return out;
}

namespace
{

std::vector<db::sample_row> read_samples(SQLite::Statement& q)
{
    std::vector<db::sample_row> out;
    while (q.executeStep())
        out.push_back({u64(q.getColumn(0)), i64(q.getColumn(1)), i64(q.getColumn(2)),
                       i64(q.getColumn(3)), std::uint32_t(i64(q.getColumn(4)))});
    return out;
}

} // namespace

std::vector<db::sample_row> run_catalog::worst(const run_info& run, std::size_t limit)
{
    SQLite::Statement q(database(run), "SELECT seq, unix_ns, latency_ns, gap_ns, flags FROM worst "
                                       "WHERE run_id = ? ORDER BY rank LIMIT ?");
    q.bind(1, run.id);
    q.bind(2, limit ? std::int64_t(limit) : std::int64_t(-1));
    return read_samples(q);
}

std::vector<db::sample_row> run_catalog::exceedances(const run_info& run)
{
    SQLite::Statement q(database(run), "SELECT seq, unix_ns, latency_ns, gap_ns, flags "
                                       "FROM exceedances WHERE run_id = ? ORDER BY seq");
    q.bind(1, run.id);
    return read_samples(q);
}

std::vector<db::event_row> run_catalog::events(const run_info& run)
{
    SQLite::Statement q(database(run), "SELECT unix_ns, seq, kind, value, detail FROM events "
                                       "WHERE run_id = ? ORDER BY unix_ns, id");
    q.bind(1, run.id);
    std::vector<db::event_row> out;
    while (q.executeStep())
        out.push_back({i64(q.getColumn(0)), u64(q.getColumn(1)), q.getColumn(2).getString(),
                       i64(q.getColumn(3)), q.getColumn(4).getString()});
    return out;
}

std::uint64_t run_catalog::raw_count(const run_info& run)
{
    SQLite::Statement q(database(run), "SELECT count(*) FROM raw_samples WHERE run_id = ?");
    q.bind(1, run.id);
    q.executeStep();
    return u64(q.getColumn(0));
}

void run_catalog::for_each_raw(const run_info& run,
                               const std::function<void(const db::sample_row&)>& fn)
{
    SQLite::Statement q(database(run), "SELECT seq, latency_ns, gap_ns, flags FROM raw_samples "
                                       "WHERE run_id = ? ORDER BY seq");
    q.bind(1, run.id);
    while (q.executeStep())
        fn({u64(q.getColumn(0)), 0, i64(q.getColumn(1)), i64(q.getColumn(2)),
            std::uint32_t(i64(q.getColumn(3)))});
}

const run_info* run_catalog::floor_for(const run_info& run) const
{
    const run_info* before = nullptr;
    const run_info* after = nullptr;
    for (const auto& f : impl_->runs) {
        if (f.meta.kind != db::run_kind::floor || !f.has_stats || f.db_index != run.db_index ||
            backend_kind(f.meta.backend) != backend_kind(run.meta.backend))
            continue;
        if (f.meta.start_unix_ns <= run.meta.start_unix_ns)
            before = &f; // runs are in start order: the last one wins
        else if (!after)
            after = &f;
    }
    return before ? before : after;
}

std::vector<const run_info*> select_runs(const run_catalog& cat, const run_selector& sel)
{
    const auto& runs = cat.runs();
    if (runs.empty())
        throw error("read " + cat.describe(), "the database holds no runs",
                    "record one with 'irqloop run --db FILE'");
    std::set<const run_info*> picked;
    auto list_ids = [&] {
        std::string s;
        for (const auto& r : runs)
            s += (s.empty() ? "" : ", ") + std::to_string(r.id);
        return s;
    };
    for (const auto& want : sel.runs) {
        const bool numeric = !want.empty() && std::all_of(want.begin(), want.end(), [](char c) {
            return c >= '0' && c <= '9';
        });
        std::vector<const run_info*> hits;
        for (const auto& r : runs) {
            if (numeric && std::to_string(r.id) == want)
                hits.push_back(&r);
            else if (!numeric && want.size() >= 4 && r.meta.uuid.compare(0, want.size(), want) == 0)
                hits.push_back(&r);
        }
        if (hits.empty())
            throw error("select run '" + want + "'",
                        "no such run in " + cat.describe() + " (ids: " + list_ids() + ")",
                        "list the runs with 'irqloop report --list'");
        if (hits.size() > 1)
            throw error("select run '" + want + "'",
                        std::to_string(hits.size()) + " runs match in " + cat.describe(),
                        numeric ? "ids repeat across files: give the run's uuid"
                                : "give more characters of the uuid");
        picked.insert(hits.front());
    }
    for (const auto& want : sel.labels) {
        bool any = false;
        for (const auto& r : runs)
            if (r.meta.label == want) {
                picked.insert(&r);
                any = true;
            }
        if (!any) {
            std::set<std::string> labels;
            for (const auto& r : runs)
                if (!r.meta.label.empty())
                    labels.insert(r.meta.label);
            std::string known;
            for (const auto& l : labels)
                known += (known.empty() ? "" : ", ") + ("'" + l + "'");
            throw error("select label '" + want + "'",
                        "no run with that label in " + cat.describe() +
                            (known.empty() ? " (no run has a label)" : " (labels: " + known + ")"),
                        "labels are set with 'irqloop run --label'");
        }
    }
    std::vector<const run_info*> out;
    const bool narrowed = !sel.runs.empty() || !sel.labels.empty();
    for (const auto& r : runs)
        if (narrowed ? picked.count(&r) != 0 : r.meta.kind == db::run_kind::measure)
            out.push_back(&r);
    if (out.empty())
        throw error("read " + cat.describe(), "the database holds no measurement runs",
                    "name a floor or selftest run with --run ID");
    if (sel.last)
        out.erase(out.begin(), out.end() - 1);
    return out;
}

std::vector<std::string> db_paths_or_default(std::vector<std::string> dbs)
{
    if (dbs.empty())
        dbs.push_back("irqloop.db");
    return dbs;
}

void add_selection_options(boost::program_options::options_description& desc, selection_options& o)
{
    namespace po = boost::program_options;
    auto add = desc.add_options();
    add("db", po::value(&o.dbs)->composing(),
        "database file; repeat to combine files (default: irqloop.db)");
    add("run", po::value(&o.sel.runs)->composing(),
        "run id, or uuid (a unique prefix of >= 4 characters will do); repeatable");
    add("label", po::value(&o.sel.labels)->composing(), "every run with this label; repeatable");
    add("last", po::bool_switch(&o.sel.last),
        "only the most recently started of the selected runs");
}

boost::program_options::variables_map
parse_selection_command(int argc, char** argv,
                        const boost::program_options::options_description& desc)
{
    namespace po = boost::program_options;
    po::positional_options_description pos;
    pos.add("db", -1);
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(desc).positional(pos).run(), vm);
    return vm;
}

void print_command_help(const char* usage, const char* about,
                        const boost::program_options::options_description& desc)
{
    std::cout << "usage: " << usage << "\n\n" << about << "\n\n" << desc << '\n';
}

} // namespace irqloop::logger
