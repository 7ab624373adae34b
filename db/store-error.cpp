// SPDX-License-Identifier: MIT
#include "store-error.hpp"

#include "error.hpp"

#include <cerrno>
#include <cstring>

namespace irqloop::db
{

void throw_store_error(const std::string& what, const SQLite::Exception& e, sqlite3* db)
{
    const int sys = db ? sqlite3_system_errno(db) : 0;
    const std::string detail = e.what();
    const char* kept = "results committed before this are kept";
    switch (e.getErrorCode()) {
    case SQLITE_FULL:
        throw error(what, "disk full (" + detail + ")",
                    std::string("free some disk space; ") + kept, exit_failure);
    case SQLITE_IOERR:
        if (sys == ENOSPC || sys == EDQUOT)
            throw error(what, "disk full (" + detail + ": " + std::strerror(sys) + ")",
                        std::string("free some disk space; ") + kept, exit_failure);
        throw error(what,
                    "I/O error (" + detail + (sys ? std::string(": ") + std::strerror(sys) : "") +
                        ")",
                    std::string("check the disk and the kernel log; ") + kept, exit_failure);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        throw error(what, "the database stayed locked by another process (" + detail + ")",
                    "retry when the other irqloop or sqlite3 is done", exit_failure);
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_CANTOPEN:
        throw error(what, "cannot write the file (" + detail + ")",
                    "check the permissions of the file and its directory", exit_failure);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        // A refused file (exit 2), met where quick_check on open could not see it.
        throw error(what, "damaged file (" + detail + ")",
                    "keep a copy; `sqlite3 FILE .recover` may rescue its rows into a new file",
                    exit_usage);
    default:
        throw error(what, detail, {}, exit_failure);
    }
}

} // namespace irqloop::db
