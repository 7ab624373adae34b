// SPDX-License-Identifier: MIT
#include "capture.hpp"

#include "child-caps.hpp"
#include "error.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

namespace irqloop::analysis
{

namespace
{

// The tokens of a VCD with the line each starts on, for messages.
struct vcd_tokens final {
    const std::string& text;
    std::size_t pos = 0;
    std::size_t line = 1;

    bool next(std::string& tok)
    {
        while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) {
            if (text[pos] == '\n')
                ++line;
            ++pos;
        }
        if (pos >= text.size())
            return false;
        const std::size_t b = pos;
        while (pos < text.size() && !std::isspace(static_cast<unsigned char>(text[pos])))
            ++pos;
        tok.assign(text, b, pos - b);
        return true;
    }
};

// Everything up to the next $end, as one space-joined string.
std::string vcd_until_end(vcd_tokens& t, const std::string& source, const std::string& command)
{
    std::string tok, body;
    while (t.next(tok)) {
        if (tok == "$end")
            return body;
        body += (body.empty() ? "" : " ") + tok;
    }
    throw error("read capture '" + source + "'", command + " without $end: the file is cut short",
                "capture again, or copy the whole file");
}

// "1 ns", "100ps", "10 us" -> ps; 0 when the unit is finer than 1 ps or unknown.
std::int64_t vcd_timescale_ps(const std::string& spec)
{
    std::size_t i = 0;
    while (i < spec.size() && std::isdigit(static_cast<unsigned char>(spec[i])))
        ++i;
    if (i == 0)
        return 0;
    const std::int64_t n = std::strtoll(spec.substr(0, i).c_str(), nullptr, 10);
    std::string unit;
    for (char c : spec.substr(i))
        if (!std::isspace(static_cast<unsigned char>(c)))
            unit += c;
    static const std::map<std::string, std::int64_t> units = {{"ps", 1},
                                                              {"ns", 1'000},
                                                              {"us", 1'000'000},
                                                              {"ms", 1'000'000'000},
                                                              {"s", 1'000'000'000'000}};
    const auto u = units.find(unit);
    if (u == units.end() || (n != 1 && n != 10 && n != 100))
        return 0;
    return n * u->second;
}

// sigrok's comment "Acquisition with 2/13 channels at 24 MHz" -> 24e6; 0 when absent.
double vcd_comment_rate(const std::string& comment)
{
    const auto at = comment.find(" at ");
    if (comment.find("Acquisition") == std::string::npos || at == std::string::npos)
        return 0;
    std::istringstream in(comment.substr(at + 4));
    double v = 0;
    std::string unit;
    if (!(in >> v >> unit) || v <= 0)
        return 0;
    static const std::map<std::string, double> units = {
        {"Hz", 1}, {"kHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9}};
    const auto u = units.find(unit);
    return u == units.end() ? 0 : v * u->second;
}

} // namespace

std::int64_t capture::resolution_ps() const noexcept
{
    return samplerate_hz > 0 ? std::llround(1e12 / samplerate_hz) : 1;
}

const capture_channel* capture::find(const std::string& name) const noexcept
{
    for (const auto& c : channels)
        if (c.name == name)
            return &c;
    return nullptr;
}

capture parse_vcd(std::istream& in, const std::string& source)
{
    const std::string what = "read capture '" + source + "'";
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (text.empty())
        throw error(what, "the file is empty", "give a VCD or a sigrok session (.sr)");
    if (text.back() != '\n')
        throw error(what, "the file is cut short (its last line has no end)",
                    "capture again, or copy the whole file");
    capture c;
    vcd_tokens t{text};
    std::map<std::string, int> ids; // identifier code -> channel index, -1: a kept-out variable
    std::int64_t timescale_ps = 0;
    double comment_rate = 0;
    bool defined = false;
    std::string tok;
    while (!defined && t.next(tok)) {
        if (tok == "$enddefinitions") {
            vcd_until_end(t, source, tok);
            defined = true;
        } else if (tok == "$timescale") {
            const auto spec = vcd_until_end(t, source, tok);
            timescale_ps = vcd_timescale_ps(spec);
            if (timescale_ps == 0)
                throw error(what, "timescale '" + spec + "' is not one irqloop reads",
                            "1, 10 or 100 of s, ms, us, ns or ps");
        } else if (tok == "$comment") {
            const double r = vcd_comment_rate(vcd_until_end(t, source, tok));
            if (r > 0)
                comment_rate = r;
        } else if (tok == "$var") {
            std::istringstream v(vcd_until_end(t, source, tok));
            std::string type, width, id, name;
            if (!(v >> type >> width >> id >> name))
                throw error(what, "a $var on line " + std::to_string(t.line) + " is incomplete",
                            "is this a VCD?");
            if (width == "1" && ids.count(id) == 0) {
                ids[id] = static_cast<int>(c.channels.size());
                c.channels.push_back({name, -1, {}});
            } else if (ids.count(id) == 0) {
                ids[id] = -1;
            }
        } else if (tok.size() > 1 && tok[0] == '$') {
            vcd_until_end(t, source, tok); // $date, $version, $scope, $upscope, ...
        } else {
            throw error(what,
                        "'" + tok.substr(0, 40) + "' on line " + std::to_string(t.line) +
                            " is not a VCD header",
                        "give a VCD or a sigrok session (.sr)");
        }
    }
    if (!defined)
        throw error(what, "no $enddefinitions: the file is cut short or is not a VCD",
                    "capture again, or copy the whole file");
    if (timescale_ps == 0)
        throw error(what, "no $timescale", "a VCD names its time unit");
    c.samplerate_hz = comment_rate > 0 ? comment_rate : 1e12 / double(timescale_ps);

    std::int64_t now = 0;
    bool seen_time = false;
    auto set = [&](const std::string& id, char v) {
        const auto i = ids.find(id);
        if (i == ids.end())
            throw error(what, "unknown identifier '" + id + "' on line " + std::to_string(t.line),
                        "the file is damaged");
        if (i->second < 0 || (v != '0' && v != '1'))
            return; // a vector, or x/z: no level
        auto& ch = c.channels[std::size_t(i->second)];
        const int level = v - '0';
        const int cur = ch.changes.empty() ? ch.initial : ch.changes.back().second;
        if (!seen_time || (ch.initial < 0 && ch.changes.empty() && now == 0))
            ch.initial = level;
        else if (cur != level)
            ch.changes.emplace_back(now, level);
    };
    while (t.next(tok)) {
        const char k = tok[0];
        if (k == '#') {
            char* endp = nullptr;
            errno = 0;
            const long long v = std::strtoll(tok.c_str() + 1, &endp, 10);
            if (tok.size() < 2 || *endp != '\0' || errno || v < 0 || v > INT64_MAX / timescale_ps)
                throw error(what, "bad time '" + tok + "' on line " + std::to_string(t.line),
                            "the file is damaged");
            const std::int64_t ps = v * timescale_ps;
            if (seen_time && ps < now)
                throw error(what, "time goes backwards on line " + std::to_string(t.line),
                            "the file is damaged");
            now = ps;
            seen_time = true;
        } else if (k == '$') {
            if (tok == "$comment")
                vcd_until_end(t, source, tok);
            // $dumpvars, $dumpall, $dumpon, $dumpoff and their $end carry no data of their own
        } else if (k == '0' || k == '1' || k == 'x' || k == 'X' || k == 'z' || k == 'Z') {
            if (tok.size() < 2)
                throw error(what, "a value without identifier on line " + std::to_string(t.line),
                            "the file is damaged");
            set(tok.substr(1), k == 'X' ? 'x' : k);
        } else if (k == 'b' || k == 'B' || k == 'r' || k == 'R') {
            std::string id;
            if (!t.next(id))
                throw error(what, "the file is cut short after '" + tok + "'",
                            "capture again, or copy the whole file");
            if (k == 'b' || k == 'B')
                set(id, tok.size() == 2 ? tok[1] : 'x'); // a 1-bit vector is a wire too
        } else {
            throw error(what,
                        "'" + tok.substr(0, 40) + "' on line " + std::to_string(t.line) +
                            " is not a VCD record",
                        "the file is damaged");
        }
    }
    c.end_ps = now;
    return c;
}

std::string find_sigrok_cli()
{
    // As plot's gnuplot: an irqloop-rt in secure mode looks in /usr/bin and /bin only.
    return base::find_program("sigrok-cli");
}

capture read_capture(const std::string& path)
{
    const std::string what = "read capture '" + path + "'";
    std::ifstream f(path, std::ios::binary);
    if (!f)
        throw_from_errno(errno, what);
    char magic[2] = {0, 0};
    f.read(magic, 2);
    f.seekg(0);
    if (!(magic[0] == 'P' && magic[1] == 'K'))
        return parse_vcd(f, path);

    // A sigrok session: sigrok-cli writes it out as VCD into an unnamed temporary file.
    const std::string exe = find_sigrok_cli();
    if (exe.empty())
        throw error(what, "it is a sigrok session and sigrok-cli is not on PATH",
                    "apt-get install sigrok-cli, or give a VCD");
    char tmpl[] = "/tmp/irqloop-capture-XXXXXX";
    const int out = ::mkostemp(tmpl, O_CLOEXEC);
    if (out < 0)
        throw_from_errno(errno, what + ": create a temporary file", {}, exit_failure);
    ::unlink(tmpl);
    int err[2];
    if (::pipe2(err, O_CLOEXEC) != 0) {
        ::close(out);
        throw_from_errno(errno, what + ": create a pipe", {}, exit_failure);
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
        const int e = errno;
        ::close(out);
        ::close(err[0]);
        ::close(err[1]);
        throw_from_errno(e, what + ": start sigrok-cli", {}, exit_failure);
    }
    if (pid == 0) {
        if (base::drop_inheritable_capabilities() != 0)
            ::_exit(127);
        ::dup2(out, STDOUT_FILENO);
        ::dup2(err[1], STDERR_FILENO);
        ::execl(exe.c_str(), "sigrok-cli", "-i", path.c_str(), "-O", "vcd",
                static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(err[1]);
    std::string message;
    char buf[512];
    for (;;) {
        const ssize_t n = ::read(err[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (message.size() < 2000)
            message.append(buf, std::size_t(n));
    }
    ::close(err[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    while (!message.empty() && std::isspace(static_cast<unsigned char>(message.back())))
        message.pop_back();
    for (auto& ch : message)
        if (ch == '\n')
            ch = ' ';
    std::string vcd;
    if (::lseek(out, 0, SEEK_SET) == 0) {
        for (;;) {
            const ssize_t n = ::read(out, buf, sizeof buf);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            vcd.append(buf, std::size_t(n));
        }
    }
    ::close(out);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !message.empty() || vcd.empty())
        throw error(what,
                    "sigrok-cli cannot read it" + (message.empty() ? "" : " (" + message + ")"),
                    "is the session file whole? try 'sigrok-cli -i " + path + " --show'");
    std::istringstream in(vcd);
    return parse_vcd(in, path);
}

void write_vcd(std::ostream& out, const capture& c, std::int64_t timescale_ps)
{
    static const std::map<std::int64_t, const char*> scales = {{1, "1 ps"},
                                                               {10, "10 ps"},
                                                               {100, "100 ps"},
                                                               {1'000, "1 ns"},
                                                               {10'000, "10 ns"},
                                                               {100'000, "100 ns"},
                                                               {1'000'000, "1 us"},
                                                               {10'000'000, "10 us"},
                                                               {100'000'000, "100 us"},
                                                               {1'000'000'000, "1 ms"}};
    const auto s = scales.find(timescale_ps);
    if (s == scales.end())
        throw error("write VCD", "timescale of " + std::to_string(timescale_ps) + " ps",
                    "a power of ten from 1 ps to 1 ms");
    std::ostringstream rate;
    if (c.samplerate_hz >= 1e9 && std::fmod(c.samplerate_hz, 1e9) == 0)
        rate << c.samplerate_hz / 1e9 << " GHz";
    else if (c.samplerate_hz >= 1e6 && std::fmod(c.samplerate_hz, 1e6) == 0)
        rate << c.samplerate_hz / 1e6 << " MHz";
    else if (c.samplerate_hz >= 1e3 && std::fmod(c.samplerate_hz, 1e3) == 0)
        rate << c.samplerate_hz / 1e3 << " kHz";
    else
        rate << c.samplerate_hz << " Hz";
    out << "$version irqloop $end\n$comment\n  Acquisition with " << c.channels.size() << '/'
        << c.channels.size() << " channels at " << rate.str() << "\n$end\n$timescale " << s->second
        << " $end\n$scope module irqloop $end\n";
    auto id = [](std::size_t i) {
        std::string r;
        do {
            r += char('!' + i % 94);
            i /= 94;
        } while (i);
        return r;
    };
    for (std::size_t i = 0; i < c.channels.size(); ++i)
        out << "$var wire 1 " << id(i) << ' ' << c.channels[i].name << " $end\n";
    out << "$upscope $end\n$enddefinitions $end\n#0";
    for (std::size_t i = 0; i < c.channels.size(); ++i)
        out << ' ' << (c.channels[i].initial > 0 ? '1' : '0') << id(i);
    // Merge the channels' changes in time order; one "#t" line per distinct rounded time.
    std::vector<std::size_t> at(c.channels.size(), 0);
    std::int64_t last = 0;
    for (;;) {
        std::int64_t t = INT64_MAX;
        for (std::size_t i = 0; i < c.channels.size(); ++i)
            if (at[i] < c.channels[i].changes.size())
                t = std::min(t, c.channels[i].changes[at[i]].first);
        if (t == INT64_MAX)
            break;
        const std::int64_t tick = (t + timescale_ps / 2) / timescale_ps;
        if (tick != last || tick == 0)
            out << "\n#" << tick;
        last = tick;
        for (std::size_t i = 0; i < c.channels.size(); ++i)
            while (at[i] < c.channels[i].changes.size() && c.channels[i].changes[at[i]].first == t)
                out << ' ' << c.channels[i].changes[at[i]++].second << id(i);
    }
    out << "\n#" << std::max(last + 1, (c.end_ps + timescale_ps / 2) / timescale_ps) << '\n';
}

} // namespace irqloop::analysis
