// SPDX-License-Identifier: MIT
#include "gpiod-lines.hpp"
#include "cycle-clock.hpp"

#include "enum-names.hpp"
#include "error.hpp"
#include "gpiod/gpiod-defaults.hpp"

#include <gpiod.h>
#include <grp.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <optional>

namespace irqloop::hw
{

namespace
{

template <typename T, void (*free_fn)(T*)> struct deleter {
    void operator()(T* p) const noexcept { free_fn(p); }
};
using chip_ptr = std::unique_ptr<gpiod_chip, deleter<gpiod_chip, gpiod_chip_close>>;
using chip_info_ptr =
    std::unique_ptr<gpiod_chip_info, deleter<gpiod_chip_info, gpiod_chip_info_free>>;
using line_info_ptr =
    std::unique_ptr<gpiod_line_info, deleter<gpiod_line_info, gpiod_line_info_free>>;
using settings_ptr =
    std::unique_ptr<gpiod_line_settings, deleter<gpiod_line_settings, gpiod_line_settings_free>>;
using line_config_ptr =
    std::unique_ptr<gpiod_line_config, deleter<gpiod_line_config, gpiod_line_config_free>>;
using request_config_ptr =
    std::unique_ptr<gpiod_request_config, deleter<gpiod_request_config, gpiod_request_config_free>>;

std::optional<unsigned> parse_offset(const std::string& s)
{
    unsigned v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size() || s.empty())
        return std::nullopt;
    return v;
}

/** /dev/gpiochip* in numeric order. */
std::vector<std::string> chip_paths()
{
    std::vector<std::pair<unsigned, std::string>> found;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/dev", ec)) {
        auto name = e.path().filename().string();
        if (name.rfind("gpiochip", 0) != 0)
            continue;
        auto n = parse_offset(name.substr(8));
        if (n && gpiod_is_gpiochip_device(e.path().c_str()))
            found.emplace_back(*n, e.path().string());
    }
    std::sort(found.begin(), found.end());
    std::vector<std::string> paths;
    for (auto& [n, p] : found)
        paths.push_back(std::move(p));
    return paths;
}

struct open_chip {
    chip_ptr chip;
    std::string path;
    std::string name;
    std::string label;
    unsigned num_lines = 0;
};

std::string chip_title(const open_chip& c)
{
    return c.name + " [" + c.label + "]";
}

/** Opens @p path; nullopt with errno set when that fails. */
std::optional<open_chip> try_open(const std::string& path)
{
    chip_ptr chip(gpiod_chip_open(path.c_str()));
    if (!chip)
        return std::nullopt;
    chip_info_ptr info(gpiod_chip_get_info(chip.get()));
    if (!info)
        return std::nullopt;
    return open_chip{std::move(chip), path, gpiod_chip_info_get_name(info.get()),
                     gpiod_chip_info_get_label(info.get()),
                     static_cast<unsigned>(gpiod_chip_info_get_num_lines(info.get()))};
}

/** "gpiochip0 [pinctrl-bcm2711], gpiochip1 [...]", for hints. */
std::string chips_present()
{
    std::string list;
    for (const auto& p : chip_paths())
        if (auto c = try_open(p))
            list += (list.empty() ? "" : ", ") + chip_title(*c);
    return list;
}

std::string permission_hint(const std::string& path)
{
    struct stat st {
    };
    std::string group;
    if (::stat(path.c_str(), &st) == 0)
        if (const ::group* g = ::getgrgid(st.st_gid))
            group = g->gr_name;
    if (group.empty() || group == "root")
        return "run as root, or give your user access to " + path + " with a udev rule";
    return "add your user to group '" + group + "', which owns " + path + ", or run as root";
}

/** Opens the chip named by @p text: a path, a number, a name or a label. */
open_chip find_chip(const std::string& text, const std::string& what)
{
    std::string path;
    if (text.rfind('/', 0) == 0)
        path = text;
    else if (parse_offset(text))
        path = "/dev/gpiochip" + text;
    else if (text.find('/') == std::string::npos && std::filesystem::exists("/dev/" + text))
        path = "/dev/" + text;

    if (path.empty()) {
        // Not a device: a label. Chips we cannot open cannot show their label.
        int denied = 0;
        std::string denied_path;
        for (const auto& p : chip_paths()) {
            auto c = try_open(p);
            if (!c && (errno == EACCES || errno == EPERM)) {
                denied = errno;
                denied_path = p;
            }
            if (c && c->label == text)
                return std::move(*c);
        }
        if (denied)
            throw_from_errno(denied, what + ": cannot open " + denied_path + " to read its label",
                             permission_hint(denied_path));
    } else if (auto c = try_open(path)) {
        return std::move(*c);
    } else if (int err = errno; err == EACCES || err == EPERM) {
        throw_from_errno(err, what + ": cannot open " + path, permission_hint(path));
    } else if (err != ENOENT) {
        if (err == ENODEV || err == ENOTTY || err == EINVAL)
            throw error(what, path + " is not a GPIO chip", "gpiodetect lists the chips");
        throw_from_errno(err, what + ": cannot open " + path);
    }

    auto present = chips_present();
    throw error(what, "no such chip '" + text + "'",
                present.empty() ? "this machine has no GPIO chips: /dev/gpiochip* is absent"
                                : "GPIO chips here: " + present);
}

/** Resolves LINE on an open chip: an offset or a line name; nullopt when no line has the name. */
std::optional<unsigned> find_offset(open_chip& c, const std::string& line, const std::string& what)
{
    if (auto n = parse_offset(line)) {
        if (*n >= c.num_lines)
            throw error(what,
                        "offset " + line + " is out of range: " + chip_title(c) + " has lines 0.." +
                            std::to_string(c.num_lines - 1),
                        "gpioinfo -c " + c.name + " lists them");
        return n;
    }
    int off = gpiod_chip_get_line_offset_from_name(c.chip.get(), line.c_str());
    if (off < 0)
        return std::nullopt;
    return static_cast<unsigned>(off);
}

gpiod_line_id make_id(open_chip& c, unsigned offset)
{
    gpiod_line_id id{c.path, c.name, c.label, offset, {}};
    line_info_ptr info(gpiod_chip_get_line_info(c.chip.get(), offset));
    if (info && gpiod_line_info_get_name(info.get()))
        id.line_name = gpiod_line_info_get_name(info.get());
    return id;
}

int parse_bias(const std::string& v, const std::string& ctx)
{
    if (v == "as-is")
        return GPIOD_LINE_BIAS_AS_IS;
    if (v == "disabled")
        return GPIOD_LINE_BIAS_DISABLED;
    if (v == "pull-up")
        return GPIOD_LINE_BIAS_PULL_UP;
    if (v == "pull-down")
        return GPIOD_LINE_BIAS_PULL_DOWN;
    throw error(ctx + " key 'bias'", "unknown bias '" + v + "'",
                "use as-is, disabled, pull-up or pull-down");
}

gpiod_events default_events(role r)
{
    return r == role::responder ? gpiod_events::both : gpiod_events::none;
}

const char* events_text(gpiod_events e)
{
    static constexpr enum_name<gpiod_events> names[] = {{gpiod_events::both, "both"},
                                                        {gpiod_events::rising, "rising"},
                                                        {gpiod_events::falling, "falling"}};
    return name_of(e, names, "none");
}

/** No default chip: the same offset is another pin on another board (a Pi 5's gpiochip0). */
[[noreturn]] void refuse_chipless_offset(const std::string& line, const std::string& what)
{
    throw error(what, "offset " + line + " without a chip",
                "give chip=CHIP or CHIP:" + line +
                    ", or the line's name (e.g. GPIO17; gpioinfo lists them)");
}

/** The spec's LINE for @p key, checked before any chip is opened: an offset needs a chip. */
void check_line_has_chip(const std::string& key, const std::string& text, const std::string& chip)
{
    if (chip.empty() && text.find(':') == std::string::npos && parse_offset(text))
        refuse_chipless_offset(text, "open gpiod line " + key + "=" + text);
}

} // namespace

std::string gpiod_line_text(const gpiod_line_id& id)
{
    std::string t = id.chip_name + ":" + std::to_string(id.offset);
    if (!id.line_name.empty())
        t += " (\"" + id.line_name + "\")";
    return t;
}

std::string gpiod_line_where(const gpiod_line_id& id)
{
    return gpiod_line_text(id) + " on " + id.path + " [" + id.chip_label + "]";
}

gpiod_line_id find_gpiod_line(const std::string& text, const std::string& default_chip,
                              const std::string& what)
{
    // Labels may contain ':' but line names rarely do: split at the last one.
    auto colon = text.rfind(':');
    std::string chip = colon == std::string::npos ? default_chip : text.substr(0, colon);
    std::string line = colon == std::string::npos ? text : text.substr(colon + 1);
    if (line.empty())
        throw error(what, "no line given", "write [CHIP:]LINE, e.g. gpiochip0:17 or GPIO17");

    if (chip.empty() && !parse_offset(line)) {
        // A bare line name: the first chip that has it, as gpiofind did.
        for (const auto& p : chip_paths())
            if (auto c = try_open(p))
                if (auto off = find_offset(*c, line, what))
                    return make_id(*c, *off);
        throw error(what, "no chip has a line named '" + line + "'",
                    "gpioinfo lists the line names; or give CHIP:OFFSET");
    }
    if (chip.empty())
        refuse_chipless_offset(line, what);
    auto c = find_chip(chip, what);
    auto off = find_offset(c, line, what);
    if (!off)
        throw error(what, "no line named '" + line + "' on " + chip_title(c),
                    "gpioinfo -c " + c.name + " lists the line names");
    return make_id(c, *off);
}

void gpiod_request_deleter::operator()(gpiod_line_request* r) const noexcept
{
    gpiod_line_request_release(r);
}

void gpiod_lines::buffer_deleter::operator()(gpiod_edge_event_buffer* b) const noexcept
{
    gpiod_edge_event_buffer_free(b);
}

gpiod_lines::gpiod_lines(gpiod_options o)
    : lines(o.answers), opt_(std::move(o)),
      consumer_(opt_.who == role::logger ? "irqloop" : "irqloop-responder")
{
    out_ = find_gpiod_line(opt_.out, opt_.chip, "open gpiod line out=" + opt_.out);
    in_ = find_gpiod_line(opt_.in, opt_.chip, "open gpiod line in=" + opt_.in);
    if (out_.path == in_.path && out_.offset == in_.offset)
        throw irqloop::error("open backend 'gpiod'",
                             "out and in are the same line " + gpiod_line_text(out_),
                             "the program drives one line and senses another");

    const bool events = opt_.events != gpiod_events::none;
    out_request_ = request_line(out_, true, gpiod_events::none, "as-is", "out");
    in_request_ = request_line(in_, false, opt_.events, opt_.bias, "in");
    if (events) {
        // Enough for the kernel's whole queue (16 events per line): one read drains it.
        edge_capacity_ = 16;
        edge_buffer_.reset(gpiod_edge_event_buffer_new(edge_capacity_));
        if (!edge_buffer_)
            throw_from_errno(errno, "open gpiod line in: edge event buffer");
    }
    measure_poll_cost();
}

gpiod_lines::~gpiod_lines() = default;

gpiod_lines::request_ptr gpiod_lines::request_line(const gpiod_line_id& id, bool output,
                                                   gpiod_events edges, const std::string& bias,
                                                   const std::string& what)
{
    return request_gpiod_line(
        id, {output, edges, bias, opt_.active_low, consumer_, "open gpiod line " + what});
}

gpiod_request_ptr request_gpiod_line(const gpiod_line_id& id, const gpiod_request_args& a)
{
    const std::string ctx = a.what + "=" + gpiod_line_text(id) + " [" + id.chip_label + "]";
    const bool output = a.output;
    const gpiod_events edges = a.edges;
    const int bias = parse_bias(a.bias, a.what);
    settings_ptr settings(gpiod_line_settings_new());
    line_config_ptr line_cfg(gpiod_line_config_new());
    request_config_ptr req_cfg(gpiod_request_config_new());
    if (!settings || !line_cfg || !req_cfg)
        throw_from_errno(errno, ctx);
    if (output) {
        gpiod_line_settings_set_direction(settings.get(), GPIOD_LINE_DIRECTION_OUTPUT);
        gpiod_line_settings_set_output_value(settings.get(), GPIOD_LINE_VALUE_INACTIVE);
    } else {
        gpiod_line_settings_set_direction(settings.get(), GPIOD_LINE_DIRECTION_INPUT);
        gpiod_line_settings_set_bias(settings.get(), static_cast<gpiod_line_bias>(bias));
        // The event clock stays the default, CLOCK_MONOTONIC: last_edge() compares with it.
        if (edges != gpiod_events::none)
            gpiod_line_settings_set_edge_detection(
                settings.get(), edges == gpiod_events::rising    ? GPIOD_LINE_EDGE_RISING
                                : edges == gpiod_events::falling ? GPIOD_LINE_EDGE_FALLING
                                                                 : GPIOD_LINE_EDGE_BOTH);
    }
    gpiod_line_settings_set_active_low(settings.get(), a.active_low);
    unsigned offset = id.offset;
    if (gpiod_line_config_add_line_settings(line_cfg.get(), &offset, 1, settings.get()) < 0)
        throw_from_errno(errno, ctx);
    gpiod_request_config_set_consumer(req_cfg.get(), a.consumer.c_str());

    auto c = try_open(id.path);
    if (!c) {
        int err = errno;
        throw_from_errno(err, ctx + ": cannot open " + id.path, permission_hint(id.path));
    }
    gpiod_request_ptr req(gpiod_chip_request_lines(c->chip.get(), req_cfg.get(), line_cfg.get()));
    if (req)
        return req;
    int err = errno;
    if (err == EBUSY) {
        line_info_ptr info(gpiod_chip_get_line_info(c->chip.get(), id.offset));
        const char* who = info ? gpiod_line_info_get_consumer(info.get()) : nullptr;
        std::string holder = who && *who ? who : "";
        throw irqloop::error(
            ctx,
            "in use by " + (holder.empty() ? std::string("the kernel (a driver or device tree)")
                                           : "'" + holder + "'"),
            holder.empty() ? "choose another line" : "stop '" + holder + "' first");
    }
    throw_from_errno(err, ctx);
}

void gpiod_lines::measure_poll_cost()
{
    // 20 batches of 100 reads; the median batch ignores a batch hit by an interrupt or a
    // preemption, which a plain mean of 2000 reads would fold in.
    constexpr int batches = 20, reads = 100;
    std::array<double, batches> per_read{};
    for (auto& cost : per_read) {
        auto t0 = hw::monotonic_ns();
        for (int i = 0; i < reads; ++i)
            if (gpiod_line_request_get_value(in_request_.get(), in_.offset) < 0)
                throw_from_errno(errno, "open gpiod line in=" + gpiod_line_text(in_) + ": read");
        cost = static_cast<double>(hw::monotonic_ns() - t0) / reads;
    }
    std::nth_element(per_read.begin(), per_read.begin() + batches / 2, per_read.end());
    poll_cost_ns_ = per_read[batches / 2];
}

void gpiod_lines::drive(bool high) noexcept
{
    if (gpiod_line_request_set_value(out_request_.get(), out_.offset,
                                     high ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE) <
        0)
        fail(errno, "drive");
}

int gpiod_lines::sense() noexcept
{
    if (error())
        return -1;
    int v = gpiod_line_request_get_value(in_request_.get(), in_.offset);
    if (v < 0)
        fail(errno, "sense");
    return v;
}

int gpiod_lines::wait_edge(std::int64_t timeout_ns) noexcept
{
    if (!edge_buffer_ || error())
        return -1;
    // With a timeout: a poll, then the read. Without one: the read alone, which blocks (the
    // request's descriptor is blocking) until the kernel queues an event, one system call
    // per edge on the responder's path.
    if (timeout_ns >= 0) {
        int r = gpiod_line_request_wait_edge_events(in_request_.get(), timeout_ns);
        if (r < 0 && errno == EINTR)
            return 0; // a signal: let the caller look at its stop flag
        if (r <= 0) {
            if (r < 0)
                fail(errno, "wait_edge");
            return r;
        }
    }
    int n =
        gpiod_line_request_read_edge_events(in_request_.get(), edge_buffer_.get(), edge_capacity_);
    if (n < 0 && errno == EINTR)
        return 0;
    if (n < 0) {
        fail(errno, "wait_edge");
        return -1;
    }
    if (n == 0)
        return 0;
    for (int i = 0; i < n; ++i) {
        auto* ev = gpiod_edge_event_buffer_get_event(edge_buffer_.get(), i);
        // The kernel numbers each line's events from 1; a jump means it dropped some.
        std::uint64_t seq = gpiod_edge_event_get_line_seqno(ev);
        if (seq > last_seqno_ + 1)
            missed_edges_.fetch_add(seq - last_seqno_ - 1, std::memory_order_relaxed);
        last_seqno_ = seq;
        edges_seen_.fetch_add(1, std::memory_order_relaxed);
    }
    if (n > 0) {
        auto* ev = gpiod_edge_event_buffer_get_event(edge_buffer_.get(), n - 1);
        last_edge_.rising = gpiod_edge_event_get_event_type(ev) == GPIOD_EDGE_EVENT_RISING_EDGE;
        last_edge_.kernel_ns = static_cast<std::int64_t>(gpiod_edge_event_get_timestamp_ns(ev));
    }
    return 1;
}

void gpiod_lines::open_trigger(const std::string& line)
{
    auto text = line.empty() ? std::string(gpiod_defaults::trigger_line) : line;
    trigger_ = find_gpiod_line(text, out_.chip_name, "open gpiod trigger line " + text);
    trigger_request_ = request_line(trigger_, true, gpiod_events::none, "as-is", "trigger");
}

void gpiod_lines::trigger(bool high) noexcept
{
    if (!trigger_request_)
        return;
    if (gpiod_line_request_set_value(trigger_request_.get(), trigger_.offset,
                                     high ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE) <
        0)
        fail(errno, "trigger");
}

void gpiod_lines::stop() noexcept
{
    if (out_request_)
        gpiod_line_request_set_value(out_request_.get(), out_.offset, GPIOD_LINE_VALUE_INACTIVE);
    if (trigger_request_)
        gpiod_line_request_set_value(trigger_request_.get(), trigger_.offset,
                                     GPIOD_LINE_VALUE_INACTIVE);
}

std::string gpiod_lines::describe() const
{
    std::string d = "gpiod:out=" + out_.chip_name + ":" + std::to_string(out_.offset) +
                    ",in=" + in_.chip_name + ":" + std::to_string(in_.offset);
    if (opt_.bias != "as-is")
        d += ",bias=" + opt_.bias;
    if (opt_.active_low)
        d += ",active_low=1";
    if (opt_.events != default_events(opt_.who))
        d += std::string(",events=") + events_text(opt_.events);
    return d + opt_.answers.keys_unlike(far_end{});
}

std::vector<metadata_item> gpiod_lines::metadata() const
{
    char cost[32];
    std::snprintf(cost, sizeof cost, "%.0f", poll_cost_ns_);
    std::vector<metadata_item> m = {
        {"gpiod.out", gpiod_line_where(out_)},
        {"gpiod.in", gpiod_line_where(in_)},
        {"gpiod.poll_cost_ns", cost},
        {"gpiod.events", events_text(opt_.events)},
        {"gpiod.libgpiod", gpiod_api_version()},
    };
    if (trigger_request_)
        m.push_back({"gpiod.trigger", gpiod_line_where(trigger_)});
    return m;
}

gpiod_options take_gpiod_options(spec& s, role r)
{
    gpiod_options o;
    o.who = r;
    o.chip = s.take_string("chip", "");
    o.out = s.take_string("out", gpiod_defaults::out_line);
    o.in = s.take_string("in", gpiod_defaults::in_line);
    check_line_has_chip("out", o.out, o.chip);
    check_line_has_chip("in", o.in, o.chip);
    o.bias = take_bias(s, o.bias);
    o.active_low = s.take_bool("active_low", false);
    constexpr gpiod_events events[] = {gpiod_events::both, gpiod_events::rising,
                                       gpiod_events::falling, gpiod_events::none};
    o.events = events[s.take_choice(
        "events", {"both", "rising", "falling", "none"}, events_text(default_events(r)),
        "the kernel's edge events (for wait_edge; one edge: the kernel drops the other; none: "
        "polling only)")];
    // Until this release `edges` named the kernel's events here: point an old spec there.
    if (auto edges = s.peek("edges"); edges && *edges == "none")
        throw irqloop::error("bad backend spec '" + s.text() + "'",
                             "key 'edges' says which stimulus edges the far end answers (both "
                             "or rising), not 'none'",
                             "to request no kernel edge events, write events=none");
    o.answers = take_far_end(s, o.answers);
    return o;
}

std::unique_ptr<lines> open_gpiod_lines(const gpiod_options& o)
{
    return std::make_unique<gpiod_lines>(o);
}

} // namespace irqloop::hw
