// SPDX-License-Identifier: MIT
#include "actions.hpp"
#include "cycle-clock.hpp"

#include "error.hpp"
#include "load-process.hpp"
#include "thread-name.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <time.h>
#include <unistd.h>

namespace irqloop::logger
{

namespace
{

[[noreturn]] void bad(const std::string& text, const std::string& why, const std::string& hint)
{
    throw error("bad value for --on-threshold", "'" + text + "': " + why, hint);
}

bool parse_int(const std::string& s, int lo, int hi, int& out)
{
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 9)
        return false;
    const long v = std::stol(s);
    if (v < lo || v > hi)
        return false;
    out = static_cast<int>(v);
    return true;
}

int signal_number(const std::string& s)
{
    int n = 0;
    if (parse_int(s, 1, SIGRTMAX, n))
        return n;
    std::string name = s.rfind("SIG", 0) == 0 ? s.substr(3) : s;
    for (int i = 1; i < NSIG; ++i) {
        const char* a = sigabbrev_np(i);
        if (a && name == a)
            return i;
    }
    return 0;
}

} // namespace

action_spec parse_action(const std::string& text)
{
    const std::string usage = "use shell,command=CMD | signal,pid=N,num=S | stop | trace";
    action_spec a;
    a.text = text;
    const auto comma = text.find(',');
    const std::string kind = text.substr(0, comma);
    const std::string rest = comma == std::string::npos ? "" : text.substr(comma + 1);
    if (kind == "stop" || kind == "trace") {
        if (!rest.empty())
            bad(text, "'" + kind + "' takes no keys", usage);
        a.kind = kind == "stop" ? action_kind::stop : action_kind::trace;
        return a;
    }
    if (kind == "shell") {
        if (rest.rfind("command=", 0) != 0 || rest.size() == 8)
            bad(text, "shell needs command=CMD", "e.g. shell,command='echo spike >> spikes.log'");
        a.kind = action_kind::shell;
        a.command = rest.substr(8);
        return a;
    }
    if (kind == "signal") {
        a.kind = action_kind::signal;
        std::size_t pos = 0;
        while (pos <= rest.size()) {
            const auto end = rest.find(',', pos);
            const std::string kv =
                rest.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
            const auto eq = kv.find('=');
            const std::string k = kv.substr(0, eq),
                              v = eq == std::string::npos ? "" : kv.substr(eq + 1);
            if (k == "pid") {
                if (v == "parent")
                    a.pid = static_cast<int>(getppid());
                else if (!parse_int(v, 1, 1 << 22, a.pid))
                    bad(text, "pid '" + v + "' is not a process id",
                        "give pid=N (N > 0) or pid=parent");
            } else if (k == "num") {
                a.signum = signal_number(v);
                if (a.signum == 0)
                    bad(text, "num '" + v + "' is not a signal",
                        "give a number or a name: num=10, num=USR1");
            } else {
                bad(text, "unknown key '" + k + "'", "signal takes pid=N and num=S");
            }
            if (end == std::string::npos)
                break;
            pos = end + 1;
        }
        if (a.pid == 0 || a.signum == 0)
            bad(text, "signal needs pid=N and num=S", "e.g. signal,pid=1234,num=USR1");
        return a;
    }
    bad(text, "unknown action '" + kind + "'", usage);
}

action_runner::action_runner(std::vector<action_spec> actions, std::int64_t holdoff_ns,
                             std::function<void()> on_stop, std::int64_t finish_grace_ns)
    : actions_(std::move(actions)), holdoff_ns_(std::max<std::int64_t>(0, holdoff_ns)),
      on_stop_(std::move(on_stop)), finish_grace_ns_(finish_grace_ns)
{
    worker_ = std::thread([this] {
        base::name_this_thread("irqloop-action");
        work();
    });
}

action_runner::~action_runner()
{
    try {
        finish();
    } catch (...) {
    }
}

bool action_runner::offer(const action_trigger& t)
{
    std::lock_guard lk(mu_);
    if (finishing_.load() || actions_.empty())
        return false;
    if (have_last_ && t.unix_ns - last_fire_ns_ < holdoff_ns_) {
        ++suppressed_since_;
        suppressed_total_.fetch_add(1);
        return false;
    }
    have_last_ = true;
    last_fire_ns_ = t.unix_ns;
    queue_.push_back({t, suppressed_since_});
    suppressed_since_ = 0;
    fired_.fetch_add(1);
    cv_.notify_one();
    return true;
}

std::vector<db::event_row> action_runner::take_events()
{
    std::lock_guard lk(mu_);
    std::vector<db::event_row> out;
    out.swap(done_);
    return out;
}

void action_runner::finish()
{
    {
        std::lock_guard lk(mu_);
        if (finishing_.load() && !worker_.joinable())
            return;
        finishing_.store(true);
        deadline_ns_.store(hw::monotonic_ns() + finish_grace_ns_);
        cv_.notify_one();
    }
    if (worker_.joinable())
        worker_.join();
}

void action_runner::work()
{
    while (true) {
        queued q;
        {
            std::unique_lock lk(mu_);
            cv_.wait(lk, [&] { return !queue_.empty() || finishing_.load(); });
            if (queue_.empty())
                return;
            q = queue_.front();
            queue_.pop_front();
        }
        for (const auto& a : actions_) {
            auto ev = run_one(a, q);
            std::lock_guard lk(mu_);
            done_.push_back(std::move(ev));
        }
    }
}

db::event_row action_runner::run_one(const action_spec& a, const queued& q)
{
    db::event_row e;
    e.unix_ns = q.t.unix_ns;
    e.seq = q.t.seq;
    e.kind = "action";
    char lat[48];
    std::snprintf(lat, sizeof lat, " at seq %llu (%.3f us)",
                  static_cast<unsigned long long>(q.t.seq),
                  static_cast<double>(q.t.latency_ns) / 1000.0);
    std::string what;
    switch (a.kind) {
    case action_kind::shell: {
        load_process p({"export IRQLOOP_SEQ=" + std::to_string(q.t.seq) +
                            " IRQLOOP_LATENCY_NS=" + std::to_string(q.t.latency_ns) +
                            " IRQLOOP_UNIX_NS=" + std::to_string(q.t.unix_ns) + "; " + a.command,
                        2'000'000'000, 200});
        try {
            p.start();
        } catch (const error& err) {
            e.value = -1;
            what = "shell: " + err.message();
            break;
        }
        while (!p.exited()) {
            if (finishing_.load() && hw::monotonic_ns() > deadline_ns_.load())
                break;
            struct timespec ts {
                0, 5'000'000
            };
            nanosleep(&ts, nullptr);
        }
        const auto r = p.stop();
        e.value = r.status;
        what = "shell '" + a.command + "': " + r.describe();
        if (!r.tail.empty()) {
            std::string t = r.tail;
            while (!t.empty() && t.back() == '\n')
                t.pop_back();
            what += "; output: " + t;
        }
        break;
    }
    case action_kind::signal: {
        const int rc = ::kill(a.pid, a.signum);
        e.value = rc == 0 ? 0 : errno;
        const char* abbrev = sigabbrev_np(a.signum);
        what = "signal SIG" + std::string(abbrev ? abbrev : std::to_string(a.signum)) + " to pid " +
               std::to_string(a.pid) +
               (rc == 0 ? ": sent" : std::string(": ") + std::strerror(e.value));
        break;
    }
    case action_kind::stop:
        if (on_stop_)
            on_stop_();
        what = "stop: the run ends";
        break;
    case action_kind::trace:
        what = "trace: trigger line raised by the sampler";
        break;
    }
    e.detail = what + lat;
    if (q.suppressed_before)
        e.detail +=
            "; " + std::to_string(q.suppressed_before) + " earlier above threshold held off";
    return e;
}

} // namespace irqloop::logger
