// SPDX-License-Identifier: MIT
#include "merge.hpp"

#include "error.hpp"
#include "rows.hpp"
#include "sql.hpp"
#include "store-error.hpp"

#include <SQLiteCpp/Exception.h>

#include <algorithm>
#include <sys/stat.h>
#include <vector>

namespace irqloop::db
{

namespace
{

/** The columns of @p schema.@p table, in order. */
std::vector<std::string> columns(sqlite3* db, const std::string& schema, const char* table)
{
    std::vector<std::string> out;
    sql::statement q(db, "SELECT name FROM pragma_table_info(?2, ?1) ORDER BY cid");
    q.bind(1, std::string_view(schema));
    q.bind(2, std::string_view(table));
    while (q.step())
        out.push_back(q.text(0));
    return out;
}

/** The columns of main.@p table that merge_src.@p table has too, in main's order. */
std::vector<std::string> shared_columns(sqlite3* db, const char* table)
{
    const auto src = columns(db, "merge_src", table);
    std::vector<std::string> out;
    for (auto& c : columns(db, "main", table))
        if (std::find(src.begin(), src.end(), c) != src.end())
            out.push_back(std::move(c));
    return out;
}

bool same_file(const std::string& a, const std::string& b)
{
    struct stat sa = {}, sb = {};
    return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/** Detaches the source on every way out; a failure to detach only leaks a handle. */
struct attachment final {
    sqlite3* db;
    ~attachment() { sqlite3_exec(db, "DETACH DATABASE merge_src", nullptr, nullptr, nullptr); }
};

/**
 * Copy every finished run of merge_src whose uuid main lacks, with a fresh id, and note each
 * id's new one in temp.merge_map; count what is copied and what is passed over in @p res.
 */
void copy_runs(sqlite3* db, merge_result& res)
{
    std::string run_cols;
    for (const auto& c : shared_columns(db, "runs"))
        if (c != "id")
            run_cols += (run_cols.empty() ? "" : ", ") + c;
    sql::statement pick(db, "SELECT id, status, uuid IN (SELECT uuid FROM main.runs) "
                            "FROM merge_src.runs ORDER BY id");
    sql::statement copy(db, "INSERT INTO main.runs (" + run_cols + ") SELECT " + run_cols +
                                " FROM merge_src.runs WHERE id = ?");
    sql::statement map(db, "INSERT INTO temp.merge_map (src_id, dst_id) VALUES (?, ?)");
    while (pick.step()) {
        if (pick.int64(2)) {
            ++res.already_present;
            continue;
        }
        if (parse_run_status(pick.text(1)) == run_status::running) {
            ++res.still_running;
            continue;
        }
        copy.reset();
        copy.run_with(pick.int64(0));
        map.reset();
        map.run_with(pick.int64(0), static_cast<std::int64_t>(sqlite3_last_insert_rowid(db)));
        ++res.copied;
    }
    pick.reset();
}

/** Copy the rows of every run in temp.merge_map, table by table, under the run's new id. */
void copy_run_rows(sqlite3* db)
{
    for (const char* table :
         {"run_metadata", "intervals", "interval_histograms", "histogram", "worst", "exceedances",
          "events", "raw_samples", "verifications", "verification_outside", "breakdowns",
          "breakdown_parts", "target_info", "target_facts"}) {
        // A source of an older schema version lacks newer tables and columns: what it lacks
        // takes the column's default (NULL: not recorded), as an upgrade would.
        const auto shared = shared_columns(db, table);
        if (shared.empty())
            continue;
        std::string cols;
        std::string from;
        for (const auto& c : shared) {
            if (c == "id" || c == "run_id")
                continue; // events get fresh ids; run_id is mapped
            cols += ", " + c;
            from += ", t." + c;
        }
        sql::exec(db, (std::string("INSERT INTO main.") + table + " (run_id" + cols +
                       ") SELECT m.dst_id" + from + " FROM merge_src." + table +
                       " t JOIN temp.merge_map m ON m.src_id = t.run_id")
                          .c_str());
    }
}

} // namespace

merge_result merge_into(store& dst, const std::string& src_path)
{
    const std::string what = "merge '" + src_path + "' into '" + dst.path() + "'";
    if (same_file(src_path, dst.path()))
        throw error(what, "they are the same file", "give another file to merge from");
    {
        store check(src_path, store::mode::read_only); // refuses what a reader would refuse
    }
    sqlite3* db = dst.database().getHandle();
    merge_result res;
    try {
        {
            sql::statement at(db, "ATTACH DATABASE ? AS merge_src");
            // A plain path would attach read-write, and detaching the last connection to a WAL
            // file checkpoints into it, which is a write.
            at.run_with(sql::file_uri(src_path, "mode=ro"));
        }
        attachment guard{db};
        sql::exec(db, "CREATE TEMP TABLE IF NOT EXISTS merge_map "
                      "(src_id INTEGER PRIMARY KEY, dst_id INTEGER NOT NULL)");
        sql::write_transaction tx(db);
        sql::exec(db, "DELETE FROM temp.merge_map");
        copy_runs(db, res);
        copy_run_rows(db);
        tx.commit();
    } catch (const SQLite::Exception& e) {
        throw_store_error(what, e, db);
    }
    return res;
}

} // namespace irqloop::db
