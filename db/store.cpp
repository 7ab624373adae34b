// SPDX-License-Identifier: MIT
#include "store.hpp"

#include "error.hpp"
#include "schema-sql.hpp"
#include "sql.hpp"
#include "store-error.hpp"
#include "version.hpp"

#include <SQLiteCpp/Exception.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>
#include <sys/stat.h>
#include <thread>
#include <tuple>
#include <type_traits>
#include <unistd.h>
#include <vector>

namespace irqloop::db
{

namespace
{

constexpr int busy_timeout_ms = 5000;
constexpr std::chrono::milliseconds open_busy_budget{10'000};

// A refused file is the user's to fix: exit status 2 (docs/commands/exit-status.md).
[[noreturn]] void refuse(const std::string& path, const std::string& why, const std::string& hint,
                         int status = exit_usage)
{
    throw error("open database '" + path + "'", why, hint, status);
}

std::string parent_dir(const std::string& path)
{
    auto slash = path.rfind('/');
    if (slash == std::string::npos)
        return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

std::uint32_t be32(const unsigned char* p)
{
    return std::uint32_t(p[0]) << 24 | std::uint32_t(p[1]) << 16 | std::uint32_t(p[2]) << 8 | p[3];
}

/** The fields of an SQLite header that have one valid value or a small set of them. */
bool header_sane(const unsigned char* h)
{
    const unsigned page = unsigned(h[16]) << 8 | h[17];
    const bool page_ok = page == 1 || (page >= 512 && page <= 32768 && (page & (page - 1)) == 0);
    return page_ok && h[18] >= 1 && h[18] <= 2 && h[19] >= 1 && h[19] <= 2 && h[21] == 64 &&
           h[22] == 32 && h[23] == 32;
}

enum class verdict { create, open };

const char* const other_file_hint = "irqloop leaves other files alone; choose another --db path";

/** The checks that need no SQLite connection: the path, its directory and the header bytes. */
verdict check_path(const std::string& path, store::mode m)
{
    const bool rw = m == store::mode::read_write;
    struct stat st = {};
    if (::stat(path.c_str(), &st) != 0) {
        int err = errno;
        if (err != ENOENT)
            refuse(path, std::strerror(err), "check the path and its permissions");
        if (!rw)
            refuse(path, "no such file", "check the path, or record a run into it first");
        const std::string dir = parent_dir(path);
        struct stat dst = {};
        if (::stat(dir.c_str(), &dst) != 0 || !S_ISDIR(dst.st_mode))
            refuse(path, "directory '" + dir + "' does not exist",
                   "create it first, or choose another --db path");
        if (::access(dir.c_str(), W_OK | X_OK) != 0)
            refuse(path, "cannot create a file in '" + dir + "': " + std::strerror(errno),
                   "choose a writable directory for --db");
        return verdict::create;
    }
    if (S_ISDIR(st.st_mode))
        refuse(path, "is a directory", "give the path of a file, e.g. " + path + "/irqloop.db");
    if (!S_ISREG(st.st_mode))
        refuse(path, "not a regular file", other_file_hint);

    unsigned char header[100];
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        refuse(path, std::strerror(errno), "check the file's permissions");
    ssize_t n = ::pread(fd, header, sizeof header, 0);
    int err = errno;
    ::close(fd);
    if (n < 0)
        refuse(path, std::string("cannot read it: ") + std::strerror(err),
               "check the disk and the file's permissions");
    if (n == 0) {
        if (!rw)
            refuse(path, "the file is empty", "record a run into it first");
    } else if (n < 100 || std::memcmp(header, "SQLite format 3", 16) != 0) {
        refuse(path, "not an SQLite database", other_file_hint);
    } else if (!header_sane(header)) {
        refuse(path, "damaged file (its SQLite header is damaged)",
               "keep a copy; `sqlite3 " + path + " .recover` may rescue its rows into a new file");
    } else if (std::uint32_t id = be32(header + 68);
               id != 0 && id != std::uint32_t(store::application_id)) {
        // A WAL file's header may lag behind its WAL, but a foreign id never turns into ours.
        char buf[96];
        std::snprintf(buf, sizeof buf,
                      "an SQLite database of another program (application_id 0x%08X)", id);
        refuse(path, buf, other_file_hint);
    }
    if (rw) {
        if (::access(path.c_str(), W_OK) != 0)
            refuse(path, std::string("cannot write it: ") + std::strerror(errno),
                   "open it read-only (irqloop report), or copy it to a writable place");
        const std::string dir = parent_dir(path);
        if (::access(dir.c_str(), W_OK | X_OK) != 0)
            refuse(path,
                   "cannot create its -wal and -shm files in '" + dir +
                       "': " + std::strerror(errno),
                   "copy it to a writable directory");
    }
    return n == 0 ? verdict::create : verdict::open;
}

/**
 * A read-only connection. A WAL file on read-only media with no -wal or -shm beside it cannot
 * be opened the normal way (SQLite would have to create the -shm); with no -wal nobody can be
 * writing it, so it is opened as immutable.
 */
SQLite::Database open_read_only(const std::string& path)
{
    if (::access(parent_dir(path).c_str(), W_OK) != 0 &&
        ::access((path + "-wal").c_str(), F_OK) != 0)
        return SQLite::Database(sql::file_uri(path, "immutable=1"),
                                SQLite::OPEN_READONLY | SQLite::OPEN_URI, busy_timeout_ms);
    return SQLite::Database(path, SQLite::OPEN_READONLY, busy_timeout_ms);
}

/** Another connection held a lock the open needed (SQLITE_BUSY or SQLITE_LOCKED). */
struct open_busy final : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/** Removes the empty -wal and the -shm the probe created, unless the file is accepted. */
struct probe_side_files {
    std::string wal, shm;
    bool had_wal = ::access(wal.c_str(), F_OK) == 0;
    bool had_shm = ::access(shm.c_str(), F_OK) == 0;
    bool keep = false;
    ~probe_side_files()
    {
        struct stat st = {};
        if (keep || had_wal || ::stat(wal.c_str(), &st) != 0 || st.st_size != 0)
            return;
        ::unlink(wal.c_str());
        if (!had_shm)
            ::unlink(shm.c_str());
    }
};

struct probe_result {
    std::int64_t application_id = 0;
    std::int64_t user_version = 0;
    std::int64_t objects = 0;
};

/**
 * Read what decides acceptance through a read-only connection, which cannot change the file.
 * It may create an empty -wal and a -shm beside a WAL-mode file: see probe_side_files.
 */
probe_result probe(const std::string& path, bool check_pages)
{
    try {
        SQLite::Database db = open_read_only(path);
        sqlite3* h = db.getHandle();
        probe_result r;
        // One read transaction: another logger creating the file at this moment must not be
        // seen half way (its schema already there, its application_id not yet).
        sql::exec(h, "BEGIN");
        r.application_id = sql::scalar_int(h, "PRAGMA application_id");
        r.user_version = sql::scalar_int(h, "PRAGMA user_version");
        r.objects = sql::scalar_int(h, "SELECT count(*) FROM sqlite_schema");
        // Every page's structure, before anything reads or appends (a file whose middle pages
        // were overwritten opens fine and fails only the query that meets them). quick_check
        // is integrity_check without the index-content pass: linear in the file's size.
        if (check_pages && r.objects != 0) {
            std::string verdict = sql::scalar_text(h, "PRAGMA quick_check(1)");
            // One line: "*** in database main ***\nPage 89: ..." -> "page 89: ...".
            if (auto nl = verdict.find('\n'); nl != std::string::npos)
                verdict = verdict.substr(nl + 1);
            for (auto& ch : verdict)
                if (ch == '\n')
                    ch = ' ';
            if (verdict != "ok")
                refuse(path, "damaged file (SQLite's quick_check: " + verdict + ")",
                       "keep a copy; `sqlite3 " + path +
                           " .recover` may rescue its rows into a new file");
        }
        return r;
    } catch (const SQLite::Exception& e) {
        int code = e.getErrorCode();
        if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
            refuse(path, std::string("damaged file (") + e.what() + ")",
                   "keep a copy; `sqlite3 " + path +
                       " .recover` may rescue its rows into a new file");
        if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
            throw open_busy(e.what());
        refuse(path, e.what(), "check the file and its directory");
    }
}

/** Probe with an exclusive OFD lock on byte @p byte of @p fd; true if it was free. */
bool ofd_lock(int fd, std::int64_t byte, short type, int cmd)
{
    struct flock fl = {};
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = byte;
    fl.l_len = 1;
    return ::fcntl(fd, cmd, &fl) == 0;
}

/**
 * The acceptance checks of a file with content, on what a read-only probe reads. Returns the
 * file's schema version; 0 for an SQLite database with no irqloop data yet (read_write only:
 * the open creates in it); nullopt when another connection held a lock and this is not the
 * last try.
 */
std::optional<int> accepted_version(const std::string& path, bool rw, int target,
                                    store::pages check, bool last_try, probe_side_files& sides)
{
    probe_result p;
    try {
        p = probe(path, check == store::pages::check);
    } catch (const open_busy& e) {
        sides.keep = true; // another connection is using the file: its -wal is not ours
        if (!last_try)
            return std::nullopt;
        refuse(path, std::string("locked by another program (") + e.what() + ")",
               "try again when it is done");
    }
    if (p.application_id == 0 && p.objects == 0 && p.user_version == 0) {
        if (!rw)
            refuse(path, "an SQLite database without irqloop data", "record a run into it first");
        return 0;
    }
    if (p.application_id != store::application_id) {
        char buf[96];
        std::snprintf(buf, sizeof buf,
                      "an SQLite database that is not irqloop's (application_id 0x%08X, "
                      "schema objects: %lld)",
                      static_cast<unsigned>(p.application_id), static_cast<long long>(p.objects));
        refuse(path, buf, other_file_hint);
    }
    if (p.user_version > target)
        refuse(path,
               "written by a newer irqloop (schema version " + std::to_string(p.user_version) +
                   ", this irqloop knows up to " + std::to_string(target) + ")",
               "open it with a newer irqloop");
    if (p.user_version < 1)
        refuse(path, "an irqloop file with no schema version", "it was not written by irqloop");
    return static_cast<int>(p.user_version);
}

/**
 * A file this open creates is removed again when the open fails (a full disk must not leave a
 * 0-byte results file, or its -wal, -shm and lock files, behind) while armed.
 */
struct remove_created final {
    std::string path;
    bool armed = false;
    ~remove_created()
    {
        if (!armed)
            return;
        for (const auto& p : {path, path + "-wal", path + "-shm", store::lock_path(path)})
            ::unlink(p.c_str());
    }
};

/**
 * Create @p path with O_EXCL: true when this call made it. Only the logger that made the file
 * removes it again: O_EXCL picks exactly one of several creating it at once, and the others
 * may already be writing into it. EEXIST (another logger made it first) and any other failure
 * give false: SQLite then reports what is wrong with the path.
 */
bool create_exclusively(const std::string& path)
{
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return false;
    ::close(fd);
    return true;
}

/**
 * An SQLite failure of the open as irqloop::error: a file that cannot be opened as asked is
 * refused (2); a full disk or an I/O error while opening stays a runtime failure (1).
 */
[[noreturn]] void throw_open_error(const std::string& path, const SQLite::Exception& e)
{
    try {
        throw_store_error("open database '" + path + "'", e, nullptr);
    } catch (const error& x) {
        const int code = e.getErrorCode() & 0xff;
        const bool refused = code == SQLITE_CANTOPEN || code == SQLITE_READONLY ||
                             code == SQLITE_PERM || code == SQLITE_NOTADB || code == SQLITE_CORRUPT;
        throw error(x.what_failed(), x.why(), x.hint(), refused ? exit_usage : x.status());
    }
}

} // namespace

struct store::impl {
    std::string path;
    store::mode m;
    SQLite::Database db;
    int lock_fd = -1;
    int opened_version = 0; ///< the file's schema version as opened
    std::vector<std::int64_t> recovered;
    std::set<std::int64_t> locked_runs;
    std::chrono::milliseconds busy_retry{10'000}; // the default statistics window

    sql::statement insert_run, insert_metadata, insert_interval_row, update_summary_row,
        insert_exceedance, insert_event, delete_worst, insert_worst, delete_histogram,
        insert_histogram, insert_raw, insert_window_bucket, finish;

    impl(const std::string& p, store::mode mode)
        : path(p), m(mode),
          db(mode == store::mode::read_write
                 ? SQLite::Database(p, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE,
                                    busy_timeout_ms)
                 : open_read_only(p))
    {
    }
    ~impl()
    {
        if (lock_fd >= 0)
            ::close(lock_fd);
    }

    sqlite3* handle() const noexcept { return db.getHandle(); }

    sql::statement& prepared(sql::statement& s, const char* text)
    {
        if (!s)
            s = sql::statement(handle(), text);
        s.reset();
        return s;
    }

    /**
     * The one way store.cpp writes: @p body runs inside one IMMEDIATE transaction that is
     * committed when it returns and rolled back when it throws. SQLite failures become
     * irqloop::error "what: why (hint)" with status exit_failure. Returns what @p body returns.
     */
    template <typename Body> auto write(const std::string& what, Body body) -> decltype(body())
    {
        if (m != store::mode::read_write)
            throw error(what, "the database was opened read-only",
                        "this is a bug in the calling command", exit_failure);
        // Another process holding the write lock past the busy timeout (5 s): the transaction
        // is tried again, waiting 100 ms, 200 ms, ... up to 1 s between tries, until
        // busy_retry (one statistics window in a run) has passed; then it fails.
        const auto first = std::chrono::steady_clock::now();
        auto pause = std::chrono::milliseconds(100);
        while (true) {
            try {
                sql::write_transaction tx(handle());
                if constexpr (std::is_void_v<decltype(body())>) {
                    body();
                    tx.commit();
                    return;
                } else {
                    auto result = body();
                    tx.commit();
                    return result;
                }
            } catch (const SQLite::Exception& e) {
                const int code = e.getErrorCode() & 0xff;
                if ((code == SQLITE_BUSY || code == SQLITE_LOCKED) &&
                    std::chrono::steady_clock::now() - first + pause < busy_retry) {
                    std::this_thread::sleep_for(pause);
                    pause = std::min(pause * 2, std::chrono::milliseconds(1000));
                    continue;
                }
                throw_store_error(what, e, handle());
            }
        }
    }

    void set_up_writer(bool create, const schema_plan& plan);
    void initialise(const schema_plan& plan);
    void insert_events(std::int64_t run_id, std::span<const event_row> rows);
    void insert_interval(std::int64_t run_id, const interval_row& iv);
    /** False when no run has @p run_id. */
    bool update_summary(std::int64_t run_id, const summary_row& sm);
    void replace_worst(std::int64_t run_id, std::span<const sample_row> rows);
    void replace_histogram(std::int64_t run_id, std::span<const bucket_row> rows);
    void open_lock_file();
    void recover();
};

/** The read-write connection's settings, then the schema, the migration, the lock, recovery. */
void store::impl::set_up_writer(bool create, const schema_plan& plan)
{
    sqlite3* h = handle();
    // WAL: readers (irqloop report) never block the logger, and a commit is one append.
    // synchronous=NORMAL: in WAL mode a commit is then not fsynced; a power loss may lose the
    // last few commits but never corrupts the file, and a logger must not stall for an fsync
    // every interval. Checkpoints are still fsynced.
    std::string jm = sql::scalar_text(h, "PRAGMA journal_mode = WAL");
    if (jm != "wal")
        refuse(path, "cannot use write-ahead logging (journal mode stays '" + jm + "')",
               "put the file on a local file system");
    // journal_size_limit: a large --raw batch must not leave a WAL of that size behind.
    sql::exec(h, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; "
                 "PRAGMA journal_size_limit = 67108864");
    if (create)
        initialise(plan);
    migrate(h, plan, path);
    open_lock_file();
    recover();
}

void store::impl::initialise(const schema_plan& plan)
{
    write("open database '" + path + "'", [&] {
        // Two loggers may create the same file at once: the second finds the schema in place.
        if (sql::scalar_int(handle(), "SELECT count(*) FROM sqlite_schema") == 0) {
            sql::exec(handle(), generated::schema_sql);
            // Version 1 is already the latest when there are no steps: its views come now.
            if (latest_version(plan.steps) == 1)
                sql::exec(handle(), plan.views);
            sql::statement info(handle(), "INSERT INTO irqloop_info (key, value) VALUES (?, ?)");
            for (auto [k, v] : {std::pair<std::string_view, std::string>{
                                    "created_by", std::string("irqloop ") + version},
                                {"created_schema_version", "1"}}) {
                info.run_with(k, v);
            }
        }
    });
}

void store::impl::insert_events(std::int64_t run_id, std::span<const event_row> rows)
{
    auto& s = prepared(insert_event, "INSERT INTO events (run_id, unix_ns, seq, kind, value, "
                                     "detail) VALUES (?, ?, ?, ?, ?, ?)");
    for (const auto& e : rows)
        s.run_with(run_id, e.unix_ns, e.seq, e.kind, e.value, e.detail);
}

void store::impl::open_lock_file()
{
    const std::string lp = store::lock_path(path);
    lock_fd = ::open(lp.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd < 0)
        throw_file_error(errno, "open database '" + path + "': create lock file '" + lp + "'", lp,
                         exit_usage);
}

void store::impl::recover()
{
    recovered = write("open database '" + path + "'", [&] {
        std::vector<std::int64_t> running;
        {
            sql::statement s(handle(), "SELECT id FROM runs WHERE status = 'running' ORDER BY id");
            while (s.step())
                running.push_back(s.int64(0));
        }
        sql::statement mark(handle(),
                            "UPDATE runs SET status = 'interrupted', end_unix_ns = coalesce("
                            "(SELECT max(end_unix_ns) FROM intervals WHERE run_id = ?1), "
                            "end_unix_ns, start_unix_ns) WHERE id = ?1");
        sql::statement note(
            handle(), "INSERT INTO events (run_id, unix_ns, seq, kind, value, detail) "
                      "SELECT id, end_unix_ns, stimuli, 'warning', 0, ?2 FROM runs WHERE id = ?1");
        std::vector<std::int64_t> marked;
        for (auto id : running) {
            // Taking the byte proves no live process holds it; give it back at once.
            if (!ofd_lock(lock_fd, id, F_WRLCK, F_OFD_SETLK))
                continue;
            ofd_lock(lock_fd, id, F_UNLCK, F_OFD_SETLK);
            mark.reset();
            mark.bind(1, id);
            mark.run();
            note.reset();
            note.bind(1, id);
            note.bind(
                2, std::string_view("found 'running' with no live writer (logger killed or "
                                    "power lost); marked interrupted, committed intervals kept"));
            note.run();
            marked.push_back(id);
        }
        return marked;
    });
}

store::store(const std::string& path, mode m, pages p) : store(path, m, shipped_plan(), p) {}

store::store(const std::string& path, mode m, const schema_plan& plan)
    : store(path, m, plan, pages::check)
{
}

store::store(const std::string& path, mode m, const schema_plan& plan, pages check)
{
    // Loggers started together may create or upgrade one file at the same moment. A lock one
    // of them holds only for that moment (SQLite's busy handler does not cover every case,
    // e.g. switching a new file to WAL) makes the whole open start again, waiting 20 ms
    // doubling to 500 ms between tries, for up to open_busy_budget; then it fails.
    const auto first = std::chrono::steady_clock::now();
    auto pause = std::chrono::milliseconds(20);
    bool created_here = false;
    while (true) {
        const bool last = std::chrono::steady_clock::now() - first + pause >= open_busy_budget;
        if (try_open(path, m, plan, check, last, created_here))
            return;
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::milliseconds(500));
    }
}

bool store::try_open(const std::string& path, mode m, const schema_plan& plan, pages check,
                     bool last_try, bool& created_here)
{
    const bool rw = m == mode::read_write;
    const int target = latest_version(plan.steps);
    verdict v = check_path(path, m);
    probe_side_files sides{path + "-wal", path + "-shm"};
    int file_version = target;
    if (v == verdict::open) {
        const auto version = accepted_version(path, rw, target, check, last_try, sides);
        if (!version)
            return false;
        if (*version == 0)
            v = verdict::create;
        // An older file opened read-only is read as it is (the read layer knows each shipped
        // version's columns); it is upgraded by the first read-write open.
        file_version = *version;
    }
    sides.keep = true;
    remove_created created{path};
    if (rw && v == verdict::create && !created_here)
        created_here = create_exclusively(path);
    created.armed = created_here;
    try {
        impl_ = std::make_unique<impl>(path, m);
        if (rw) {
            impl_->set_up_writer(v == verdict::create, plan);
            file_version = target;
        } else {
            sql::exec(impl_->handle(), "PRAGMA query_only = ON");
        }
        impl_->opened_version = file_version;
    } catch (const SQLite::Exception& e) {
        impl_.reset();
        const int code = e.getErrorCode() & 0xff;
        if (!last_try && (code == SQLITE_BUSY || code == SQLITE_LOCKED)) {
            created.armed = false; // tried again: the file stays for the next try
            return false;
        }
        throw_open_error(path, e);
    } catch (...) {
        impl_.reset();
        throw;
    }
    created.armed = false;
    return true;
}

store::~store() = default;
store::store(store&&) noexcept = default;
store& store::operator=(store&&) noexcept = default;

void store::set_busy_retry(std::chrono::milliseconds budget) noexcept
{
    impl_->busy_retry = budget;
}

const std::vector<std::int64_t>& store::recovered_runs() const noexcept
{
    return impl_->recovered;
}

const std::string& store::path() const noexcept
{
    return impl_->path;
}

std::string store::lock_path(const std::string& db_path)
{
    return db_path + "-lock";
}

int store::file_version() const noexcept
{
    return impl_->opened_version;
}

int store::schema_version() noexcept
{
    return latest_version(shipped_migrations());
}

SQLite::Database& store::database() noexcept
{
    return impl_->db;
}

namespace
{

/** run --target-info's row and facts (schema version 9), in begin_run()'s transaction. */
void insert_target_info(sqlite3* db, std::int64_t id, const target_info_row& t)
{
    sql::statement ti(db, "INSERT INTO target_info (run_id, command, status, exit_code, signal, "
                          "error, timeout_ns, duration_ns, stdout, stderr, stdout_bytes, "
                          "stderr_bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    ti.run_with(id, t.command, to_text(t.status), t.exit_code, t.signal, t.error, t.timeout_ns,
                t.duration_ns, t.out, t.err, static_cast<std::int64_t>(t.out_bytes),
                static_cast<std::int64_t>(t.err_bytes));
    sql::statement tf(db, "INSERT INTO target_facts (run_id, key, idx, value, source) VALUES (?, "
                          "?, ?, ?, ?)");
    std::int64_t idx = 0;
    for (const auto& f : t.facts)
        tf.run_with(id, f.key, ++idx, f.value, f.source);
}

} // namespace

std::int64_t store::begin_run(const run_row& r)
{
    const std::string what = "begin run in database '" + impl_->path + "'";
    std::int64_t locked = 0;
    try {
        return impl_->write(what, [&] {
            auto& s = impl_->prepared(
                impl_->insert_run,
                "INSERT INTO runs (uuid, label, kind, status, start_unix_ns, command_line, "
                "version, "
                "uname, hostname, backend, clock_source, clock_hz, clock_read_ns, interval_ns, "
                "jitter_ns, timeout_ns, threshold_ns, gap_limit_ns, stats_interval_ns, "
                "warmup_samples, samples_requested, duration_ns, rt_settings, target, load) "
                "VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
                "?15, "
                "?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24)");
            int i = 0;
            s.bind(++i, std::string_view(r.uuid));
            s.bind(++i, std::string_view(r.label));
            s.bind(++i, to_text(r.kind));
            s.bind(++i, r.start_unix_ns);
            for (const std::string* t :
                 {&r.command_line, &r.version, &r.uname, &r.hostname, &r.backend, &r.clock_source})
                s.bind(++i, std::string_view(*t));
            s.bind(++i, r.clock_hz);
            s.bind(++i, r.clock_read_ns);
            for (std::int64_t n :
                 {r.interval_ns, r.jitter_ns, r.timeout_ns, r.threshold_ns, r.gap_limit_ns,
                  r.stats_interval_ns, static_cast<std::int64_t>(r.warmup_samples),
                  static_cast<std::int64_t>(r.samples_requested), r.duration_ns})
                s.bind(++i, n);
            for (const std::string* t : {&r.rt_settings, &r.target, &r.load})
                s.bind(++i, std::string_view(*t));
            s.run();
            const std::int64_t id = sqlite3_last_insert_rowid(impl_->handle());

            auto& md =
                impl_->prepared(impl_->insert_metadata,
                                "INSERT INTO run_metadata (run_id, key, value) VALUES (?, ?, ?)");
            for (const auto& [k, v] : r.metadata) {
                md.run_with(id, k, v);
            }
            if (r.target_info)
                insert_target_info(impl_->handle(), id, *r.target_info);
            // Lock before COMMIT: no other process can see the row 'running' and unlocked.
            if (!ofd_lock(impl_->lock_fd, id, F_WRLCK, F_OFD_SETLK))
                throw error(what, "run id " + std::to_string(id) + " is locked by another process",
                            "another irqloop is writing a run with this id; retry", exit_failure);
            impl_->locked_runs.insert(id);
            locked = id;
            return id;
        });
    } catch (...) {
        if (locked && impl_->locked_runs.erase(locked)) // the COMMIT failed: not ours after all
            ofd_lock(impl_->lock_fd, locked, F_UNLCK, F_OFD_SETLK);
        throw;
    }
}

namespace
{

/** @p v, or NULL (an empty optional) when there is no figure to store. */
template <typename T> std::optional<T> or_null(T v, bool have)
{
    return have ? std::optional<T>(v) : std::nullopt;
}

/**
 * The latency figures a window and a run so far both have, in the order of latency_columns:
 * min, max, mean, stddev, p50, p99, p999. NULL (no figure) while there is no sample.
 */
template <typename Row> auto latency_figures(const Row& r)
{
    const bool have = r.samples > 0;
    return std::tuple{or_null(r.min_ns, have),    or_null(r.max_ns, have), or_null(r.mean_ns, have),
                      or_null(r.stddev_ns, have), or_null(r.p50_ns, have), or_null(r.p99_ns, have),
                      or_null(r.p999_ns, have)};
}

using column_list = std::vector<std::string_view>;

/** The columns that latency_figures() binds, in its order (in intervals and in runs). */
const column_list latency_columns = {"min_ns", "max_ns", "mean_ns", "stddev_ns",
                                     "p50_ns", "p99_ns", "p999_ns"};

column_list operator+(column_list a, const column_list& b)
{
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

/** `INSERT INTO table (c1, c2, ...) VALUES (?, ?, ...)`: one parameter a column, in order. */
std::string insert_sql(std::string_view table, const column_list& columns)
{
    std::string names, params;
    for (auto c : columns) {
        names += (names.empty() ? "" : ", ") + std::string(c);
        params += params.empty() ? "?" : ", ?";
    }
    return "INSERT INTO " + std::string(table) + " (" + names + ") VALUES (" + params + ")";
}

/** `UPDATE table SET c1 = ?2, c2 = ?3, ... WHERE id = ?1`: the row's id first, then each column. */
std::string update_sql(std::string_view table, const column_list& columns)
{
    std::string set;
    int i = 1;
    for (auto c : columns)
        set += (set.empty() ? "" : ", ") + std::string(c) + " = ?" + std::to_string(++i);
    return "UPDATE " + std::string(table) + " SET " + set + " WHERE id = ?1";
}

} // namespace

void store::impl::insert_interval(std::int64_t run_id, const interval_row& iv)
{
    static const std::string text = insert_sql(
        "intervals",
        column_list{"run_id", "idx", "start_unix_ns", "end_unix_ns", "samples"} + latency_columns +
            column_list{"above_threshold", "lost", "disturbed", "overflows", "interruptions",
                        "max_bracket_ns", "smi_count", "truth_max_ns"});
    prepared(insert_interval_row, text.c_str())
        .run_with(run_id, iv.index, iv.start_unix_ns, iv.end_unix_ns, iv.samples,
                  latency_figures(iv), iv.above_threshold, iv.lost, iv.disturbed, iv.overflows,
                  iv.interruptions, iv.max_bracket_ns, iv.smi_count, iv.truth_max_ns);
}

bool store::impl::update_summary(std::int64_t run_id, const summary_row& sm)
{
    static const std::string text = update_sql(
        "runs",
        column_list{"samples", "stimuli", "lost", "late", "disturbed", "overflows",
                    "above_threshold", "exceedances_dropped", "rising", "falling"} +
            latency_columns +
            column_list{"warm_max_ns", "p9999_ns", "p999999_ns", "end_unix_ns", "interruptions",
                        "max_bracket_ns", "warm_max_bracket_ns", "smi_count"});
    const bool any = sm.samples > 0;
    // No sample after the warm-up yet: WARM MAX is unknown, not 0.
    prepared(update_summary_row, text.c_str())
        .run_with(run_id, sm.samples, sm.stimuli, sm.lost, sm.late, sm.disturbed, sm.overflows,
                  sm.above_threshold, sm.exceedances_dropped, sm.rising, sm.falling,
                  latency_figures(sm), or_null(sm.warm_max_ns, any && sm.has_warm_max),
                  or_null(sm.p9999_ns, any), or_null(sm.p999999_ns, any), sm.end_unix_ns,
                  sm.interruptions, sm.max_bracket_ns, sm.warm_max_bracket_ns, sm.smi_count);
    return sqlite3_changes(handle()) == 1;
}

void store::impl::replace_worst(std::int64_t run_id, std::span<const sample_row> rows)
{
    auto& d = prepared(delete_worst, "DELETE FROM worst WHERE run_id = ?");
    d.run_with(run_id);
    auto& s = prepared(insert_worst,
                       "INSERT INTO worst (run_id, seq, unix_ns, latency_ns, gap_ns, flags, "
                       "bracket_ns, truth_ns, rank) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    std::int64_t rank = 0;
    for (const auto& r : rows)
        s.run_with(run_id, r.seq, r.unix_ns, r.latency_ns, r.gap_ns, r.flags, r.bracket_ns,
                   r.truth_ns, ++rank);
}

void store::impl::replace_histogram(std::int64_t run_id, std::span<const bucket_row> rows)
{
    auto& d = prepared(delete_histogram, "DELETE FROM histogram WHERE run_id = ?");
    d.run_with(run_id);
    auto& s = prepared(insert_histogram,
                       "INSERT INTO histogram (run_id, lo_ns, hi_ns, count) VALUES (?, ?, ?, ?)");
    for (const auto& b : rows)
        s.run_with(run_id, b.lo_ns, b.hi_ns, b.count);
}

void store::commit_interval(std::int64_t run_id, const interval_commit& c)
{
    const std::string what = "commit interval " + std::to_string(c.interval.index) + " of run " +
                             std::to_string(run_id) + " to '" + impl_->path + "'";
    auto& d = *impl_;
    impl_->write(what, [&] {
        d.insert_interval(run_id, c.interval);
        if (!d.update_summary(run_id, c.summary))
            throw error(what, "no run with that id", "this is a bug in the caller", exit_failure);
        auto& se = d.prepared(d.insert_exceedance,
                              "INSERT INTO exceedances (run_id, seq, unix_ns, latency_ns, gap_ns, "
                              "flags, bracket_ns, truth_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
        for (const auto& r : c.exceedances)
            se.run_with(run_id, r.seq, r.unix_ns, r.latency_ns, r.gap_ns, r.flags, r.bracket_ns,
                        r.truth_ns);
        d.insert_events(run_id, c.events);
        d.replace_worst(run_id, c.worst);
        d.replace_histogram(run_id, c.histogram);
        auto& sb = d.prepared(d.insert_window_bucket,
                              "INSERT INTO interval_histograms (run_id, idx, bucket, count) "
                              "VALUES (?, ?, ?, ?)");
        for (const auto& b : c.window_histogram)
            if (b.count)
                sb.run_with(run_id, c.interval.index, b.bucket, b.count);
    });
}

void store::append_raw(std::int64_t run_id, std::span<const sample_row> rows)
{
    const std::string what =
        "append raw samples of run " + std::to_string(run_id) + " to '" + impl_->path + "'";
    if (rows.empty())
        return;
    auto& d = *impl_;
    impl_->write(what, [&] {
        auto& s = d.prepared(d.insert_raw,
                             "INSERT INTO raw_samples (run_id, seq, latency_ns, gap_ns, flags, "
                             "bracket_ns, truth_ns, unix_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
        for (const auto& r : rows)
            s.run_with(run_id, r.seq, r.latency_ns, r.gap_ns, r.flags, r.bracket_ns, r.truth_ns,
                       r.unix_ns);
    });
}

void store::append_events(std::int64_t run_id, std::span<const event_row> rows)
{
    const std::string what =
        "append events of run " + std::to_string(run_id) + " to '" + impl_->path + "'";
    if (rows.empty())
        return;
    impl_->write(what, [&] { impl_->insert_events(run_id, rows); });
}

void store::set_run_metadata(std::int64_t run_id,
                             std::span<const std::pair<std::string, std::string>> keys)
{
    const std::string what =
        "set metadata of run " + std::to_string(run_id) + " in '" + impl_->path + "'";
    auto& d = *impl_;
    d.write(what, [&] {
        sql::statement up(d.handle(),
                          "INSERT INTO run_metadata (run_id, key, value) "
                          "SELECT id, ?2, ?3 FROM runs WHERE id = ?1 "
                          "ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value");
        for (const auto& [k, v] : keys) {
            up.reset();
            up.run_with(run_id, k, v);
            if (sqlite3_changes(d.handle()) != 1)
                throw error(what, "no run with that id", "this is a bug in the caller",
                            exit_failure);
        }
    });
}

void store::finish_run(std::int64_t run_id, run_status status, std::int64_t end_unix_ns)
{
    const std::string what = "finish run " + std::to_string(run_id) + " in '" + impl_->path + "'";
    if (status == run_status::running)
        throw error(what, "bad final status 'running'", "use complete, interrupted or failed",
                    exit_failure);
    auto& d = *impl_;
    impl_->write(what, [&] {
        auto& s =
            d.prepared(d.finish, "UPDATE runs SET status = ?2, end_unix_ns = ?3 WHERE id = ?1");
        s.bind(1, run_id);
        s.bind(2, to_text(status));
        s.bind(3, end_unix_ns);
        s.run();
        if (sqlite3_changes(d.handle()) != 1)
            throw error(what, "no run with that id", "this is a bug in the caller", exit_failure);
    });
    if (d.locked_runs.erase(run_id))
        ofd_lock(d.lock_fd, run_id, F_UNLCK, F_OFD_SETLK);
}

bool writer_alive(const std::string& db_path, std::int64_t run_id)
{
    int fd = ::open(store::lock_path(db_path).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct flock fl = {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = run_id;
    fl.l_len = 1;
    bool alive = ::fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
    ::close(fd);
    return alive;
}

} // namespace irqloop::db
