// SPDX-License-Identifier: MIT
// run --target-info: the command, its bounds, its output, and the facts parsed from it.
#include "target-info.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace irqloop::logger
{

namespace target_info_detail
{

std::int64_t monotonic_ns()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/** One output stream of the command: kept up to the cap, counted beyond. */
struct stream {
    int fd = -1;
    std::string* kept = nullptr;
    std::uint64_t* bytes = nullptr;
    bool open() const { return fd >= 0; }
    void close_fd()
    {
        if (fd >= 0)
            ::close(fd);
        fd = -1;
    }
    /** Read what is there; at EOF or an error the stream is closed. */
    void drain(std::size_t cap)
    {
        char buf[65536];
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            return;
        if (n <= 0) {
            close_fd();
            return;
        }
        *bytes += static_cast<std::uint64_t>(n);
        if (kept->size() < cap)
            kept->append(buf,
                         std::min<std::size_t>(static_cast<std::size_t>(n), cap - kept->size()));
    }
};

/** The shell with @p command, its stdout and stderr into the pipes' write ends. */
int spawn_shell(const std::string& command, int out_w, int err_w, pid_t& pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out_w, 1);
    posix_spawn_file_actions_adddup2(&fa, err_w, 2);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGUSR1, SIGCHLD})
        sigaddset(&defaults, sig);
    sched_param sp{};
    posix_spawnattr_setpgroup(&at, 0); // its own group: a timeout kills all it started
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &defaults);
    posix_spawnattr_setschedpolicy(&at, SCHED_OTHER);
    posix_spawnattr_setschedparam(&at, &sp);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSCHEDULER);
    const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
    const int rc = posix_spawn(&pid, "/bin/sh", &fa, &at, const_cast<char* const*>(argv), environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    return rc;
}

void record_wait_status(db::target_info_row& t, int status)
{
    if (WIFEXITED(status)) {
        t.status = db::target_info_status::exited;
        t.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        t.status = db::target_info_status::killed;
        t.signal = WTERMSIG(status);
    }
}

} // namespace target_info_detail

db::target_info_row run_target_info(const target_info_options& o, const std::atomic<bool>& stop)
{
    using namespace target_info_detail;
    db::target_info_row t;
    t.command = o.command;
    t.timeout_ns = o.timeout_ns;
    const std::int64_t start = monotonic_ns();
    int out_p[2] = {-1, -1}, err_p[2] = {-1, -1};
    if (::pipe2(out_p, O_CLOEXEC) != 0 || ::pipe2(err_p, O_CLOEXEC) != 0) {
        t.status = db::target_info_status::not_started;
        t.error = std::string("cannot make a pipe: ") + std::strerror(errno);
        for (int fd : {out_p[0], out_p[1], err_p[0], err_p[1]})
            if (fd >= 0)
                ::close(fd);
        return t;
    }
    pid_t pid = -1;
    const int rc = spawn_shell(o.command, out_p[1], err_p[1], pid);
    ::close(out_p[1]);
    ::close(err_p[1]);
    stream streams[2] = {{out_p[0], &t.out, &t.out_bytes}, {err_p[0], &t.err, &t.err_bytes}};
    if (rc != 0) {
        t.status = db::target_info_status::not_started;
        t.error = std::string("cannot start /bin/sh: ") + std::strerror(rc);
        for (auto& s : streams)
            s.close_fd();
        t.duration_ns = monotonic_ns() - start;
        return t;
    }
    const std::int64_t deadline = start + o.timeout_ns;
    std::int64_t exited_at = -1; // the shell's exit: what it left behind gets 1 s more
    int status = 0;
    bool reaped = false, timed_out = false, stopped = false;
    while (true) {
        if (!reaped && ::waitpid(pid, &status, WNOHANG) == pid) {
            reaped = true;
            exited_at = monotonic_ns();
        }
        const bool any_open = streams[0].open() || streams[1].open();
        if (reaped && !any_open)
            break;
        const std::int64_t now = monotonic_ns();
        if (stop.load()) {
            stopped = true;
            break;
        }
        if (now >= deadline) {
            timed_out = !reaped;
            break;
        }
        if (reaped && now >= exited_at + 1'000'000'000)
            break; // a background child holds the output: the shell's status stands
        pollfd fds[2];
        nfds_t n = 0;
        for (auto& s : streams)
            if (s.open())
                fds[n++] = {s.fd, POLLIN, 0};
        // Wake at least every 20 ms: the shell's exit and SIGINT are seen between reads.
        const std::int64_t wait_ms = std::clamp<std::int64_t>((deadline - now) / 1'000'000, 0, 20);
        if (n == 0) { // both streams closed: the shell's exit is near
            ::usleep(1000);
            continue;
        }
        if (::poll(fds, n, static_cast<int>(wait_ms)) <= 0)
            continue;
        for (auto& s : streams)
            for (nfds_t i = 0; i < n; ++i)
                if (s.open() && fds[i].fd == s.fd &&
                    (fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                    s.drain(o.cap_bytes);
    }
    // Whatever is still running in the command's group ends here.
    ::kill(-pid, SIGKILL);
    if (!reaped) {
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    for (auto& s : streams)
        s.close_fd();
    t.duration_ns = monotonic_ns() - start;
    if (timed_out) {
        t.status = db::target_info_status::timed_out;
    } else {
        record_wait_status(t, status);
        if (stopped && !reaped) {
            t.status = db::target_info_status::killed;
            t.signal = SIGKILL;
            t.exit_code.reset();
            t.error = "irqloop was stopped by a signal while it ran";
        }
    }
    t.facts = parse_target_facts(t.out);
    return t;
}

std::string target_info_outcome(const db::target_info_row& t)
{
    char secs[48];
    std::snprintf(secs, sizeof secs, "%.3g s", static_cast<double>(t.timeout_ns) / 1e9);
    switch (t.status) {
    case db::target_info_status::exited:
        return "exit " + std::to_string(t.exit_code.value_or(-1));
    case db::target_info_status::killed: {
        const char* name = t.signal ? sigabbrev_np(*t.signal) : nullptr;
        return std::string("killed by ") +
               (name ? std::string("SIG") + name
                     : "signal " + std::to_string(t.signal.value_or(0))) +
               (t.error.empty() ? "" : " (" + t.error + ")");
    }
    case db::target_info_status::timed_out:
        return std::string("timed out after ") + secs + " (killed)";
    case db::target_info_status::not_started:
        return "not started: " + t.error;
    }
    return "?";
}

std::string target_info_line(const db::target_info_row& t)
{
    char dur[48];
    std::snprintf(dur, sizeof dur, "%.3f s", static_cast<double>(t.duration_ns) / 1e9);
    auto stream_text = [](const char* name, const std::string& kept, std::uint64_t bytes) {
        std::string s = std::string(name) + " " + std::to_string(bytes) + " bytes";
        if (bytes > kept.size())
            s += " (TRUNCATED: " + std::to_string(kept.size()) + " kept)";
        return s;
    };
    return target_info_outcome(t) + " in " + dur + ", " +
           stream_text("stdout", t.out, t.out_bytes) + ", " +
           stream_text("stderr", t.err, t.err_bytes) + ", " + std::to_string(t.facts.size()) +
           (t.facts.size() == 1 ? " key" : " keys");
}

// --- the facts --------------------------------------------------------------------------

namespace target_info_detail
{

std::string_view trim(std::string_view s)
{
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string_view::npos)
        return {};
    const auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

std::vector<std::string_view> words(std::string_view s)
{
    std::vector<std::string_view> w;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t'))
            ++i;
        std::size_t j = i;
        while (j < s.size() && s[j] != ' ' && s[j] != '\t')
            ++j;
        if (j > i)
            w.push_back(s.substr(i, j - i));
        i = j;
    }
    return w;
}

bool is_key(std::string_view k)
{
    if (k.empty() || !(std::isalpha(static_cast<unsigned char>(k[0])) || k[0] == '_'))
        return false;
    return std::all_of(k.begin(), k.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    });
}

/** A kernel release, as `uname -r` prints it: 6.1.0-18-arm64, 5.15.0+. */
bool is_release(std::string_view s)
{
    std::size_t i = 0, dots = 0;
    auto digits = [&] {
        const std::size_t b = i;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
            ++i;
        return i > b;
    };
    if (!digits())
        return false;
    while (i < s.size() && s[i] == '.') {
        ++i;
        if (!digits())
            return false;
        ++dots;
    }
    if (dots < 1 || dots > 3)
        return false;
    return std::all_of(s.begin() + static_cast<std::ptrdiff_t>(i), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.' ||
               c == '_' || c == '~';
    });
}

// The fields `xl info` prints (tools/xl/xl_info.c): a line with one of these keys is xl info's.
constexpr std::string_view xl_info_keys[] = {"host",
                                             "release",
                                             "version",
                                             "machine",
                                             "nr_cpus",
                                             "max_cpu_id",
                                             "nr_nodes",
                                             "cores_per_socket",
                                             "threads_per_core",
                                             "cpu_mhz",
                                             "hw_caps",
                                             "virt_caps",
                                             "total_memory",
                                             "free_memory",
                                             "sharing_freed_memory",
                                             "sharing_used_memory",
                                             "outstanding_claims",
                                             "free_cpus",
                                             "xen_major",
                                             "xen_minor",
                                             "xen_extra",
                                             "xen_version",
                                             "xen_caps",
                                             "xen_scheduler",
                                             "xen_pagesize",
                                             "platform_params",
                                             "xen_changeset",
                                             "xen_commandline",
                                             "cc_compiler",
                                             "cc_compile_by",
                                             "cc_compile_domain",
                                             "cc_compile_date",
                                             "build_id",
                                             "xend_config_format"};

/** A module parameter's path: /sys/module/M/parameters/P, giving M and P. */
bool module_parameter(std::string_view path, std::string& module, std::string& param)
{
    constexpr std::string_view head = "/sys/module/";
    if (path.substr(0, head.size()) != head)
        return false;
    const auto rest = path.substr(head.size());
    const auto slash = rest.find('/');
    if (slash == std::string_view::npos)
        return false;
    const auto tail = rest.substr(slash);
    constexpr std::string_view mid = "/parameters/";
    if (tail.substr(0, mid.size()) != mid)
        return false;
    module = std::string(rest.substr(0, slash));
    param = std::string(tail.substr(mid.size()));
    return !module.empty() && is_key(param);
}

class fact_list
{
public:
    void add(std::string_view key, std::string_view value, const char* source)
    {
        if (key.empty())
            return;
        for (const auto& f : facts_)
            if (f.key == key)
                return; // the first occurrence stands
        facts_.push_back({std::string(key), std::string(value), source});
    }
    bool has(std::string_view key) const
    {
        return std::any_of(facts_.begin(), facts_.end(),
                           [&](const db::target_fact& f) { return f.key == key; });
    }
    std::vector<db::target_fact> take() { return std::move(facts_); }

private:
    std::vector<db::target_fact> facts_;
};

/** xen_commandline's words: name=value, or a bare name (a boolean Xen takes as true). */
void add_xen_cmdline(fact_list& facts, std::string_view line)
{
    for (auto w : words(line)) {
        const auto eq = w.find('=');
        const auto name = w.substr(0, eq);
        if (!is_key(name))
            continue;
        facts.add(name, eq == std::string_view::npos ? "true" : w.substr(eq + 1), "xen cmdline");
    }
}

/** The state of an `xl sched-*` listing: its pool's line, then its domain table. */
struct sched_table {
    bool in_pool = false;
    std::vector<std::string> columns; ///< lowercased header, once seen
};

bool sched_line(fact_list& facts, sched_table& st, std::string_view line)
{
    constexpr std::string_view pool = "Cpupool ";
    if (line.substr(0, pool.size()) == pool) {
        const auto colon = line.find(':');
        if (colon == std::string_view::npos)
            return false;
        const std::string name(trim(line.substr(pool.size(), colon - pool.size())));
        st = {true, {}};
        for (auto w : words(line.substr(colon + 1))) {
            const auto eq = w.find('=');
            if (eq != std::string_view::npos && is_key(w.substr(0, eq)))
                facts.add("pool." + name + "." + std::string(w.substr(0, eq)), w.substr(eq + 1),
                          "xl sched");
        }
        return true;
    }
    if (!st.in_pool)
        return false;
    const auto w = words(line);
    if (st.columns.empty()) {
        if (w.size() >= 3 && w[0] == "Name" && w[1] == "ID") {
            for (auto c : w) {
                std::string lc(c);
                std::transform(lc.begin(), lc.end(), lc.begin(), [](unsigned char ch) {
                    return static_cast<char>(std::tolower(ch));
                });
                st.columns.push_back(lc);
            }
            return true;
        }
        st.in_pool = false;
        return false;
    }
    if (w.size() != st.columns.size()) {
        st = {};
        return false;
    }
    std::string prefix = "dom." + std::string(w[0]) + ".";
    std::size_t first = 2;
    if (st.columns.size() > 2 && st.columns[2] == "vcpu") {
        prefix += "vcpu" + std::string(w[2]) + ".";
        first = 3;
    }
    for (std::size_t i = first; i < w.size(); ++i)
        facts.add(prefix + st.columns[i], w[i], "xl sched");
    return true;
}

} // namespace target_info_detail

std::vector<db::target_fact> parse_target_facts(std::string_view text)
{
    using namespace target_info_detail;
    fact_list facts;
    sched_table st;
    bool xen_cmdline_seen = false;
    std::string pending_module, pending_param; // `head`'s "==> PATH <==": the value follows
    std::size_t pos = 0;
    while (pos <= text.size()) {
        auto nl = text.find('\n', pos);
        if (nl == std::string_view::npos)
            nl = text.size();
        const std::string_view line = trim(text.substr(pos, nl - pos));
        pos = nl + 1;
        if (line.empty()) {
            st = {};
            continue;
        }
        if (!pending_param.empty()) {
            facts.add(pending_param, line, pending_module.c_str());
            pending_param.clear();
            continue;
        }
        if (sched_line(facts, st, line))
            continue;
        if (line.substr(0, 4) == "==> " && line.size() > 8 &&
            line.substr(line.size() - 4) == " <==") {
            module_parameter(line.substr(4, line.size() - 8), pending_module, pending_param);
            continue;
        }
        std::string module, param;
        if (const auto colon = line.find(':');
            colon != std::string_view::npos &&
            module_parameter(line.substr(0, colon), module, param)) {
            facts.add(param, line.substr(colon + 1), module.c_str());
            continue;
        }
        if (is_release(line)) {
            facts.add("kernel", line, "uname");
            continue;
        }
        const auto w = words(line);
        if (w.size() >= 3 && w[0] == "Linux" && is_release(w[2])) {
            facts.add("kernel", w[2], "uname");
            continue;
        }
        // key : value (xl info pads its keys with spaces before the colon)
        if (const auto colon = line.find(':'); colon != std::string_view::npos) {
            const auto key = trim(line.substr(0, colon));
            const auto value = trim(line.substr(colon + 1));
            if (is_key(key) &&
                (colon + 1 == line.size() || line[colon + 1] == ' ' || line[colon + 1] == '\t')) {
                const bool xl = std::find(std::begin(xl_info_keys), std::end(xl_info_keys), key) !=
                                std::end(xl_info_keys);
                facts.add(key, value, xl ? "xl info" : "line");
                if (key == "xen_scheduler")
                    facts.add("sched", value, "xl info");
                if (key == "xen_commandline") {
                    xen_cmdline_seen = true;
                    add_xen_cmdline(facts, value);
                }
                continue;
            }
        }
        // key=value, or several k=v words on one line
        if (std::all_of(w.begin(), w.end(), [](std::string_view x) {
                const auto eq = x.find('=');
                return eq != std::string_view::npos && is_key(x.substr(0, eq));
            })) {
            for (auto x : w)
                facts.add(x.substr(0, x.find('=')), x.substr(x.find('=') + 1), "line");
            continue;
        }
        if (const auto eq = line.find('='); eq != std::string_view::npos) {
            const auto key = trim(line.substr(0, eq));
            if (is_key(key))
                facts.add(key, trim(line.substr(eq + 1)), "line");
        }
    }
    // Xen's vwfi defaults to trap: a Xen command line without it ran with trap.
    if (xen_cmdline_seen && !facts.has("vwfi"))
        facts.add("vwfi", "trap", "xen default");
    return facts.take();
}

} // namespace irqloop::logger
