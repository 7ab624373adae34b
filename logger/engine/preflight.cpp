// SPDX-License-Identifier: MIT
#include "preflight.hpp"

#include "error.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace irqloop::logger
{

namespace
{

using cpu_set = std::set<int>;

struct tree {
    std::string root;

    std::string path(const std::string& p) const { return root == "/" ? p : root + p; }

    std::optional<std::string> read(const std::string& p) const
    {
        std::ifstream in(path(p));
        if (!in)
            return std::nullopt;
        std::stringstream ss;
        ss << in.rdbuf();
        std::string s = ss.str();
        while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
            s.pop_back();
        return s;
    }
};

// "0-3,8,10-11" (the kernel's cpulist format); nullopt when malformed.
std::optional<cpu_set> parse_cpu_list(const std::string& s)
{
    cpu_set out;
    std::stringstream ss(s);
    std::string part;
    while (std::getline(ss, part, ',')) {
        if (part.empty())
            continue;
        int a = 0, b = 0;
        char dash = 0;
        std::istringstream ps(part);
        if (!(ps >> a))
            return std::nullopt;
        b = a;
        if (ps >> dash) {
            if (dash != '-' || !(ps >> b))
                return std::nullopt;
        }
        if (a < 0 || b < a || b > 65535)
            return std::nullopt;
        for (int c = a; c <= b; ++c)
            out.insert(c);
    }
    return out;
}

std::string cpu_list_text(const cpu_set& s)
{
    std::string out;
    for (auto it = s.begin(); it != s.end();) {
        int a = *it, b = a;
        auto next = std::next(it);
        while (next != s.end() && *next == b + 1) {
            b = *next;
            ++next;
        }
        if (!out.empty())
            out += ',';
        out += std::to_string(a) + (b > a ? "-" + std::to_string(b) : "");
        it = next;
    }
    return out.empty() ? "none" : out;
}

cpu_set cpus_of(const tree& t, const std::string& p)
{
    auto s = t.read(p);
    if (!s)
        return {};
    return parse_cpu_list(*s).value_or(cpu_set{});
}

std::string cpu_name(int c)
{
    return "cpu" + std::to_string(c);
}

struct context {
    tree t;
    int cpu;
    cpu_set online;
    cpu_set scope; // the CPUs the sampler may run on
    int busy_window_ms;
};

// "a, b, c": the names of a set, in its order.
std::string comma_list(const std::set<std::string>& names)
{
    std::string s;
    for (const auto& n : names)
        s += (s.empty() ? "" : ", ") + n;
    return s;
}

preflight_check make(const char* key, check_level l, std::string value, std::string hint = {})
{
    return {key, l, std::move(value),
            l == check_level::warn || l == check_level::fail ? std::move(hint) : ""};
}

// A CPU list the kernel takes at boot: ok when @p cpu is in @p set ("cpuN" + @p in), else a
// warning ("cpuN" + @p out) whose hint is to boot with @p param followed by N, so that @p why.
preflight_check in_boot_list(const char* key, int cpu, const cpu_set& set, const std::string& in,
                             const std::string& out, const std::string& param,
                             const std::string& why)
{
    if (set.count(cpu))
        return make(key, check_level::ok, cpu_name(cpu) + in);
    return make(key, check_level::warn, cpu_name(cpu) + out,
                "boot with " + param + std::to_string(cpu) + why);
}

preflight_check check_isolated(const context& c)
{
    if (c.cpu < 0)
        return make(
            "cpu.isolated", check_level::warn, "sampler not pinned (no --cpu)",
            "pick an isolated CPU and pass it: irqloop doctor --cpu N, irqloop run --cpu N");
    const auto iso = cpus_of(c.t, "/sys/devices/system/cpu/isolated");
    const auto list = cpu_list_text(iso);
    return in_boot_list("cpu.isolated", c.cpu, iso, " isolated (isolated: " + list + ")",
                        " not isolated (isolated: " + list + ")",
                        "isolcpus=", " (or a cpuset partition) so no other task runs there");
}

preflight_check check_nohz(const context& c)
{
    if (c.cpu < 0)
        return make("cpu.nohz_full", check_level::skip, "no sampler CPU given");
    auto s = c.t.read("/sys/devices/system/cpu/nohz_full");
    if (!s)
        return make(
            "cpu.nohz_full", check_level::warn, "kernel without NO_HZ_FULL (no nohz_full file)",
            "the tick interrupts the sampler CPU HZ times a second; use a NO_HZ_FULL kernel");
    const auto set = parse_cpu_list(*s).value_or(cpu_set{});
    const auto list = cpu_list_text(set);
    return in_boot_list("cpu.nohz_full", c.cpu, set, " in nohz_full (" + list + ")",
                        " not in nohz_full (nohz_full: " + list + ")",
                        "nohz_full=", " so the tick stops while the sampler spins");
}

preflight_check check_governor(const context& c)
{
    std::set<std::string> good, bad;
    cpu_set bad_cpus;
    for (int cpu : c.scope) {
        auto g = c.t.read("/sys/devices/system/cpu/" + cpu_name(cpu) + "/cpufreq/scaling_governor");
        if (!g)
            continue;
        if (*g == "performance") {
            good.insert(*g);
        } else {
            bad.insert(*g);
            bad_cpus.insert(cpu);
        }
    }
    if (good.empty() && bad.empty())
        return make("cpu.governor", check_level::ok,
                    "no cpufreq driver (the kernel does not scale the frequency)");
    if (bad.empty())
        return make("cpu.governor", check_level::ok,
                    "performance on cpu " + cpu_list_text(c.scope));
    return make(
        "cpu.governor", check_level::warn, comma_list(bad) + " on cpu " + cpu_list_text(bad_cpus),
        "cpupower -c " + cpu_list_text(bad_cpus) +
            " frequency-set -g performance (a frequency change stretches the loop's timing)");
}

// Busy share of @p cpus over the window, from two reads of /proc/stat; 0 when unreadable.
double busy_share(const context& c, const cpu_set& cpus)
{
    auto sample = [&] {
        std::map<int, std::pair<std::uint64_t, std::uint64_t>> m; // cpu -> (total, idle)
        auto s = c.t.read("/proc/stat");
        if (!s)
            return m;
        std::istringstream in(*s);
        std::string line;
        while (std::getline(in, line)) {
            if (line.rfind("cpu", 0) != 0 || line.size() < 4 ||
                !std::isdigit(static_cast<unsigned char>(line[3])))
                continue;
            std::istringstream ls(line.substr(3));
            int cpu = -1;
            ls >> cpu;
            if (!cpus.count(cpu))
                continue;
            std::uint64_t v[8] = {}, total = 0;
            for (auto& x : v) {
                ls >> x;
                total += x;
            }
            m[cpu] = {total, v[3] + v[4]}; // idle + iowait
        }
        return m;
    };
    auto a = sample();
    if (c.busy_window_ms > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(c.busy_window_ms));
    auto b = sample();
    std::uint64_t total = 0, idle = 0;
    for (auto& [cpu, v] : b) {
        auto it = a.find(cpu);
        if (it == a.end() || v.first < it->second.first || v.second < it->second.second)
            continue;
        total += v.first - it->second.first;
        idle += v.second - it->second.second;
    }
    return total ? static_cast<double>(total - std::min(idle, total)) / static_cast<double>(total)
                 : 0.0;
}

preflight_check check_smt(const context& c)
{
    if (c.cpu < 0) {
        auto active = c.t.read("/sys/devices/system/cpu/smt/active");
        if (active && *active == "1")
            return make(
                "cpu.smt", check_level::warn, "SMT active",
                "give the sampler a CPU whose sibling is offline: irqloop doctor --cpu N shows it");
        return make("cpu.smt", check_level::ok, "SMT not active");
    }
    auto sib = cpus_of(c.t, "/sys/devices/system/cpu/" + cpu_name(c.cpu) +
                                "/topology/thread_siblings_list");
    sib.erase(c.cpu);
    cpu_set on;
    for (int s : sib)
        if (c.online.count(s))
            on.insert(s);
    if (on.empty())
        return make("cpu.smt", check_level::ok, "no SMT sibling of " + cpu_name(c.cpu) + " online");
    const std::string off =
        "echo 0 > /sys/devices/system/cpu/cpu" + std::to_string(*on.begin()) + "/online";
    const double busy = busy_share(c, on);
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.0f%%", busy * 100);
    if (busy > 0.05)
        return make("cpu.smt", check_level::fail,
                    "sibling cpu " + cpu_list_text(on) + " online and busy (" + pct + ")",
                    "a busy sibling shares the sampler's core: " + off);
    return make("cpu.smt", check_level::warn,
                "sibling cpu " + cpu_list_text(on) + " online (idle now)",
                "anything scheduled there shares the sampler's core: " + off);
}

preflight_check check_idle(const context& c)
{
    std::set<std::string> deep;
    cpu_set where;
    bool any = false;
    for (int cpu : c.scope) {
        const std::string dir = "/sys/devices/system/cpu/" + cpu_name(cpu) + "/cpuidle";
        for (int k = 0; k < 32; ++k) {
            const std::string st = dir + "/state" + std::to_string(k);
            auto name = c.t.read(st + "/name");
            if (!name)
                break;
            any = true;
            if (k < 2)
                continue; // POLL and C1 (or the hypervisor's halt) wake within a microsecond or so
            auto dis = c.t.read(st + "/disable");
            if (dis && *dis != "0")
                continue;
            auto lat = c.t.read(st + "/latency");
            deep.insert(*name + " (" + (lat ? *lat : "?") + " us)");
            where.insert(cpu);
        }
    }
    if (!any)
        return make("cpu.idle", check_level::ok, "no cpuidle states");
    if (deep.empty())
        return make("cpu.idle", check_level::ok,
                    "no state deeper than C1 enabled on cpu " + cpu_list_text(c.scope));
    return make("cpu.idle", check_level::warn,
                comma_list(deep) + " enabled on cpu " + cpu_list_text(where),
                "irqloop run holds /dev/cpu_dma_latency at 0 for the run; for good: cpupower "
                "idle-set -D 2");
}

preflight_check check_irqbalance(const context& c)
{
    std::error_code ec;
    std::vector<long> pids;
    for (fs::directory_iterator it(c.t.path("/proc"), ec), end; !ec && it != end;
         it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        auto comm = c.t.read("/proc/" + name + "/comm");
        if (comm && *comm == "irqbalance")
            pids.push_back(std::stol(name));
    }
    if (pids.empty())
        return make("irq.balance", check_level::ok, "irqbalance not running");
    std::sort(pids.begin(), pids.end());
    return make("irq.balance", check_level::warn,
                "irqbalance running (pid " + std::to_string(pids.front()) + ")",
                "it may move IRQs onto the sampler CPU mid-run: systemctl stop irqbalance, or set "
                "IRQBALANCE_BANNED_CPULIST");
}

preflight_check check_irq_affinity(const context& c)
{
    if (c.cpu < 0)
        return make("irq.affinity", check_level::skip, "no sampler CPU given");
    std::error_code ec;
    std::vector<int> irqs;
    bool any = false;
    for (fs::directory_iterator it(c.t.path("/proc/irq"), ec), end; !ec && it != end;
         it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        any = true;
        // Only IRQs with a handler (a subdirectory named after it) can fire.
        bool handled = false;
        std::error_code ec2;
        for (fs::directory_iterator h(it->path(), ec2), hend; !ec2 && h != hend; h.increment(ec2))
            if (h->is_directory(ec2))
                handled = true;
        if (!handled)
            continue;
        auto aff = c.t.read("/proc/irq/" + name + "/smp_affinity_list");
        if (aff && parse_cpu_list(*aff).value_or(cpu_set{}).count(c.cpu))
            irqs.push_back(std::stoi(name));
    }
    if (!any)
        return make("irq.affinity", check_level::skip, "no /proc/irq");
    if (irqs.empty())
        return make("irq.affinity", check_level::ok, "no device IRQ allowed on " + cpu_name(c.cpu));
    std::sort(irqs.begin(), irqs.end());
    std::string list;
    for (std::size_t i = 0; i < irqs.size() && i < 8; ++i)
        list += (i ? ", " : "") + std::to_string(irqs[i]);
    if (irqs.size() > 8)
        list += ", ...";
    return make(
        "irq.affinity", check_level::warn,
        std::to_string(irqs.size()) + (irqs.size() == 1 ? " IRQ" : " IRQs") + " allowed on " +
            cpu_name(c.cpu) + ": " + list,
        "move them: echo <other cpus> > /proc/irq/N/smp_affinity_list (or irqaffinity= at boot)");
}

// A check of one file's value: an unreadable file is a WARN (@p unreadable, @p hint), else
// @p judge decides from the value.
template <class Judge>
preflight_check judge_file(const context& c, const char* key, const std::string& path,
                           const char* unreadable, const char* hint, Judge judge)
{
    const auto v = c.t.read(path);
    return v ? judge(*v) : make(key, check_level::warn, unreadable, hint);
}

preflight_check check_rt_throttling(const context& c)
{
    return judge_file(
        c, "sched.rt_throttling", "/proc/sys/kernel/sched_rt_runtime_us",
        "sched_rt_runtime_us unreadable",
        "check /proc/sys/kernel/sched_rt_runtime_us by hand; -1 turns throttling off",
        [&](const std::string& rt) {
            if (rt == "-1")
                return make("sched.rt_throttling", check_level::ok, "off (sched_rt_runtime_us -1)");
            auto period = c.t.read("/proc/sys/kernel/sched_rt_period_us");
            return make("sched.rt_throttling", check_level::fail,
                        "on: " + rt + " us of every " + (period ? *period : "?") + " us",
                        "the spinning SCHED_FIFO sampler is stopped for the rest of each period: "
                        "echo -1 > /proc/sys/kernel/sched_rt_runtime_us");
        });
}

preflight_check check_clocksource(const context& c)
{
    return judge_file(
        c, "clock.source", "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        "current_clocksource unreadable",
        "the kernel's clock is unknown; look for 'clocksource' in dmesg",
        [](const std::string& cs) {
            if (cs == "tsc" || cs == "arch_sys_counter")
                return make("clock.source", check_level::ok, cs);
            return make("clock.source", check_level::warn, cs + " (not the CPU's counter)",
                        "the kernel distrusts the TSC or runs virtualised; look for "
                        "'clocksource' in dmesg");
        });
}

preflight_check check_tsc(const context& c)
{
    auto info = c.t.read("/proc/cpuinfo");
    if (!info)
        return make("clock.tsc", check_level::warn, "/proc/cpuinfo unreadable",
                    "the run checks the counter itself at start");
    std::istringstream in(*info);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("flags", 0) != 0)
            continue;
        std::set<std::string> flags;
        std::istringstream fs_(
            line.substr(line.find(':') == std::string::npos ? line.size() : line.find(':') + 1));
        for (std::string f; fs_ >> f;)
            flags.insert(f);
        std::string missing;
        for (const char* f : {"constant_tsc", "nonstop_tsc"})
            if (!flags.count(f))
                missing += (missing.empty() ? "" : " ") + std::string(f);
        if (missing.empty())
            return make("clock.tsc", check_level::ok, "invariant (constant_tsc nonstop_tsc)");
        return make("clock.tsc", check_level::warn, "not invariant (no " + missing + ")",
                    "irqloop run refuses such a TSC unless given --force-tsc (its rate may follow "
                    "the CPU frequency)");
    }
    return make("clock.tsc", check_level::skip,
                "no x86 flags (the run checks its cycle counter at start)");
}

preflight_check check_realtime(const context& c)
{
    auto rt = c.t.read("/sys/kernel/realtime");
    if (rt && *rt == "1")
        return make("kernel.realtime", check_level::ok, "PREEMPT_RT kernel");
    return make("kernel.realtime", check_level::warn,
                "not a PREEMPT_RT kernel (no /sys/kernel/realtime)",
                "the logger's own stalls are less bounded; irqloop calibrate measures them");
}

preflight_check check_msr(const context& c)
{
    const int cpu = c.cpu >= 0 ? c.cpu : 0;
    const std::string dev = "/dev/cpu/" + std::to_string(cpu) + "/msr";
    const std::string na = "; SMI counts will read n/a";
    int fd = ::open(c.t.path(dev).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        const int e = errno;
        if (e == ENOENT || e == ENXIO || e == ENODEV)
            return make("msr.smi", check_level::warn, "no " + dev + na,
                        "modprobe msr (as root); VMs and AMD CPUs have no MSR 0x34");
        return make("msr.smi", check_level::warn, dev + ": " + std::strerror(e) + na,
                    "run as root (CAP_SYS_RAWIO) to read the SMI counter");
    }
    std::uint64_t v = 0;
    const ssize_t n = ::pread(fd, &v, sizeof v, 0x34);
    const int e = errno;
    ::close(fd);
    if (n != static_cast<ssize_t>(sizeof v))
        return make("msr.smi", check_level::warn,
                    "MSR 0x34 unreadable (" + std::string(n < 0 ? std::strerror(e) : "short read") +
                        ")" + na,
                    "this CPU or hypervisor does not implement the SMI counter");
    return make("msr.smi", check_level::ok,
                "MSR 0x34 readable: " + std::to_string(v & 0xffffffffu) + " SMIs since boot on " +
                    cpu_name(cpu));
}

preflight_check check_memlock(const context& c)
{
    if (auto st = c.t.read("/proc/self/status")) {
        std::istringstream in(*st);
        std::string line;
        while (std::getline(in, line)) {
            if (line.rfind("CapEff:", 0) != 0)
                continue;
            const std::uint64_t caps = std::strtoull(line.c_str() + 7, nullptr, 16);
            if (caps & (1ull << 14))
                return make("mem.memlock", check_level::ok, "CAP_IPC_LOCK (no limit applies)");
        }
    }
    auto lim = c.t.read("/proc/self/limits");
    if (lim) {
        std::istringstream in(*lim);
        std::string line;
        while (std::getline(in, line)) {
            if (line.rfind("Max locked memory", 0) != 0)
                continue;
            std::istringstream ls(line.substr(17));
            std::string soft;
            ls >> soft;
            if (soft == "unlimited")
                return make("mem.memlock", check_level::ok, "unlimited");
            const std::uint64_t bytes = std::strtoull(soft.c_str(), nullptr, 10);
            if (bytes >= (1ull << 30))
                return make("mem.memlock", check_level::ok, std::to_string(bytes >> 20) + " MiB");
            return make("mem.memlock", check_level::warn,
                        std::to_string(bytes >> 10) +
                            " KiB, no CAP_IPC_LOCK: the run's mlockall will fail",
                        "ulimit -l unlimited (or LimitMEMLOCK=infinity), or run as root");
        }
    }
    return make("mem.memlock", check_level::warn, "limit unknown (/proc/self/limits unreadable)",
                "ulimit -l shows it; the run reports whether mlockall succeeded");
}

preflight_check check_swap(const context& c)
{
    auto s = c.t.read("/proc/swaps");
    if (!s)
        return make("mem.swap", check_level::ok, "no /proc/swaps (no swap support)");
    std::istringstream in(*s);
    std::string line, first;
    int n = 0;
    std::getline(in, line); // header
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string name;
        if (!(ls >> name))
            continue;
        if (first.empty())
            first = name;
        ++n;
    }
    if (n == 0)
        return make("mem.swap", check_level::ok, "no swap");
    return make("mem.swap", check_level::warn,
                std::to_string(n) + " swap area" + (n == 1 ? "" : "s") + " active (" + first + ")",
                "irqloop locks its own memory, but swapping stalls the rest of the logger: swapoff "
                "-a for soaks");
}

} // namespace

const char* level_name(check_level l) noexcept
{
    // In the order of check_level.
    static constexpr const char* names[] = {"OK", "WARN", "FAIL", "SKIP"};
    const auto i = static_cast<std::size_t>(l);
    return i < std::size(names) ? names[i] : "?";
}

std::vector<preflight_check> run_preflight(const preflight_options& o)
{
    std::error_code ec;
    if (!fs::is_directory(o.root, ec))
        throw error("preflight", "root '" + o.root + "' is not a directory",
                    "give a directory holding sys/ and proc/");
    context c{tree{o.root}, o.cpu, {}, {}, std::max(0, o.busy_window_ms)};
    while (c.t.root.size() > 1 && c.t.root.back() == '/')
        c.t.root.pop_back();
    c.online = cpus_of(c.t, "/sys/devices/system/cpu/online");
    if (o.cpu >= 0) {
        if (!c.online.empty() && !c.online.count(o.cpu))
            throw error("bad value for --cpu",
                        "'" + std::to_string(o.cpu) + "' is not an online CPU",
                        "online: " + cpu_list_text(c.online));
        c.scope = {o.cpu};
    } else {
        c.scope = c.online.empty() ? cpu_set{0} : c.online;
    }
    return {check_isolated(c),     check_nohz(c),          check_governor(c),
            check_smt(c),          check_idle(c),          check_irqbalance(c),
            check_irq_affinity(c), check_rt_throttling(c), check_clocksource(c),
            check_tsc(c),          check_realtime(c),      check_msr(c),
            check_memlock(c),      check_swap(c)};
}

check_level worst_level(const std::vector<preflight_check>& checks) noexcept
{
    check_level w = check_level::ok;
    for (const auto& ch : checks) {
        if (ch.level == check_level::fail)
            return check_level::fail;
        if (ch.level == check_level::warn)
            w = check_level::warn;
    }
    return w;
}

std::string format_preflight(const std::vector<preflight_check>& checks)
{
    std::string out;
    int n[4] = {};
    for (const auto& ch : checks) {
        char line[64];
        std::snprintf(line, sizeof line, "%-5s %-20s ", level_name(ch.level), ch.key.c_str());
        out += line + ch.value + "\n";
        if (!ch.hint.empty())
            out += "      hint: " + ch.hint + "\n";
        ++n[static_cast<int>(ch.level)];
    }
    out += std::to_string(checks.size()) + " checks: " + std::to_string(n[0]) + " OK, " +
           std::to_string(n[1]) + " WARN, " + std::to_string(n[2]) + " FAIL, " +
           std::to_string(n[3]) + " SKIP\n";
    return out;
}

std::vector<std::pair<std::string, std::string>>
preflight_metadata(const std::vector<preflight_check>& checks)
{
    std::vector<std::pair<std::string, std::string>> m;
    for (const auto& ch : checks)
        m.emplace_back("preflight." + ch.key, std::string(level_name(ch.level)) + " " + ch.value);
    return m;
}

} // namespace irqloop::logger
