// SPDX-License-Identifier: MIT
#include "migrate.hpp"

#include "error.hpp"
#include "schema-sql.hpp"
#include "shipped-migrations.hpp"
#include "sql.hpp"

#include <SQLiteCpp/Exception.h>

namespace irqloop::db
{

std::span<const migration> shipped_migrations() noexcept
{
    return generated::shipped_migrations;
}

schema_plan shipped_plan() noexcept
{
    return {shipped_migrations(), generated::views_sql};
}

int latest_version(std::span<const migration> steps) noexcept
{
    return steps.empty() ? 1 : steps.back().to_version;
}

static int user_version(sqlite3* db)
{
    sql::statement s(db, "PRAGMA user_version");
    s.step();
    return static_cast<int>(s.int64(0));
}

void migrate(sqlite3* db, const schema_plan& plan, const std::string& path)
{
    const int target = latest_version(plan.steps);
    for (int v = user_version(db); v < target; v = user_version(db)) {
        const std::string what = "upgrade database '" + path + "' from schema version " +
                                 std::to_string(v) + " to " + std::to_string(v + 1);
        const migration* step = nullptr;
        for (const auto& m : plan.steps)
            if (m.to_version == v + 1)
                step = &m;
        if (!step)
            throw error(what, "this irqloop has no step for that version",
                        "report this as a bug; the file is unchanged", exit_failure);
        std::string doing = step->name;
        try {
            sql::write_transaction tx(db);
            if (user_version(db) != v)
                continue; // another process migrated it meanwhile: re-read and go on
            sql::exec(db, step->sql);
            if (v + 1 == target) {
                doing += ", then the views";
                sql::exec(db, plan.views);
            }
            sql::exec(db, ("PRAGMA user_version = " + std::to_string(v + 1)).c_str());
            tx.commit();
        } catch (const SQLite::Exception& e) {
            throw error(what, doing + ": " + e.what(),
                        "the file stays at version " + std::to_string(v) +
                            " and is usable by the irqloop that wrote it",
                        exit_failure);
        }
    }
}

} // namespace irqloop::db
