// SPDX-License-Identifier: MIT
#pragma once

#include <sqlite3.h>

#include <span>
#include <string>

/**
 * Schema versions. Every new file is created at version 1 from db/schema.sql; a later version
 * N is reached by running the steps 2..N in order, each from db/migrations/NNNN-what.sql (file
 * NNNN takes a file from version NNNN-1 to NNNN). New and old files thus travel the same road,
 * so every shipped step runs in every test that creates a database.
 *
 * Steps change tables only. Views hold no data: each is defined once, in db/views.sql, for the
 * latest version, and re-created in the transaction that brings a file to that version.
 */
namespace irqloop::db
{

/** @brief One step: SQL that takes a file from version to_version-1 to to_version. */
struct migration final {
    int to_version;
    const char* name; ///< file stem, e.g. "0002-add-notes", for messages
    const char* sql;  ///< run inside the step's transaction; must not set user_version itself
};

/** @brief A schema's road: its steps, and the views of the version they reach. */
struct schema_plan final {
    std::span<const migration> steps;
    /// SQL that drops (IF EXISTS) and creates every view of latest_version(steps); run in the
    /// transaction that takes a file to that version (db/views.sql in a build).
    const char* views = "";
};

/** @brief The steps this build ships, in order (compiled from db/migrations/). */
std::span<const migration> shipped_migrations() noexcept;

/** @brief The shipped steps with the shipped views (db/views.sql): what every user gets. */
schema_plan shipped_plan() noexcept;

/** @brief The version a file reaches after @p steps: 1 when there are none. */
int latest_version(std::span<const migration> steps) noexcept;

/**
 * @brief Bring an irqloop file at some version up to latest_version(@p plan.steps).
 *
 * Each step runs in its own IMMEDIATE transaction that also sets PRAGMA user_version, so a
 * failure leaves the file at the last good version, never between two. The last step's
 * transaction also re-creates the views (@p plan.views); until then a file keeps the views it
 * had. A version is re-read inside each transaction, so two processes opening the same old
 * file at once migrate it once. A file already at the latest version is left as it is.
 *
 * @param db A read-write connection to a file already known to be irqloop's.
 * @param path The file's name, for messages.
 * @throws irqloop::error (exit_failure) when a step fails or @p plan has no step for a version
 *         between the file's and the target (a file from a newer irqloop is the caller's check).
 */
void migrate(sqlite3* db, const schema_plan& plan, const std::string& path);

} // namespace irqloop::db
