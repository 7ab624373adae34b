// SPDX-License-Identifier: MIT
#include "gpiomem-open.hpp"

#include "error.hpp"
#include "gpiomem-lines.hpp"
#include "gpiomem-sim.hpp"

#include <gpiod.h>

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace irqloop::hw
{

namespace
{

std::optional<unsigned> parse_number(const std::string& s)
{
    unsigned v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc{} || end != s.data() + s.size())
        return std::nullopt;
    return v;
}

std::optional<gpiomem_soc> take_soc(spec& s, const char* key)
{
    auto v = s.take(key);
    if (!v)
        return std::nullopt;
    auto soc = gpiomem_soc_by_name(*v);
    if (!soc)
        throw error(s.context() + " key '" + key + "'", "unknown SoC '" + *v + "'",
                    "use one of " + gpiomem_soc_names());
    return soc;
}

/** The libgpiod requests that hold the lines while the registers drive them. */
class gpiod_claim final : public gpiomem_claim
{
public:
    gpiod_claim(const gpiomem_options& o, gpiod_line_id out, gpiod_line_id in)
        : out_(std::move(out)), in_(std::move(in))
    {
        const auto& l = o.lines;
        const std::string consumer = l.who == role::logger ? "irqloop" : "irqloop-responder";
        out_req_ = request_gpiod_line(out_, {true, gpiod_events::none, "as-is", l.active_low,
                                             consumer, "open gpiomem line out"});
        if (in_.path != out_.path || in_.offset != out_.offset)
            in_req_ = request_gpiod_line(in_, {false, gpiod_events::none, l.bias, l.active_low,
                                               consumer, "open gpiomem line in"});
    }

    int kernel_read() noexcept override
    {
        auto* r = in_req_ ? in_req_.get() : out_req_.get();
        return gpiod_line_request_get_value(r, in_.offset);
    }
    std::string out_name() const override
    {
        return out_.chip_name + ":" + std::to_string(out_.offset);
    }
    std::string in_name() const override
    {
        return in_.chip_name + ":" + std::to_string(in_.offset);
    }
    std::vector<metadata_item> metadata() const override
    {
        return {{"gpiomem.out", gpiod_line_where(out_)}, {"gpiomem.in", gpiod_line_where(in_)}};
    }
    void release_low() noexcept override
    {
        gpiod_line_request_set_value(out_req_.get(), out_.offset, GPIOD_LINE_VALUE_INACTIVE);
    }

private:
    gpiod_line_id out_, in_;
    gpiod_request_ptr out_req_, in_req_;
};

/** The compatible list of the device tree's root, or nullopt when there is no device tree. */
std::optional<std::string> read_compatible(const std::string& path)
{
    std::ifstream f(path, std::ios::binary);
    if (!f)
        return std::nullopt;
    return std::string(std::istreambuf_iterator<char>(f), {});
}

std::string printable(std::string list)
{
    while (!list.empty() && list.back() == '\0')
        list.pop_back();
    for (auto& c : list)
        if (c == '\0')
            c = ' ';
    return list;
}

gpiomem_soc find_soc(const gpiomem_options& o, const std::string& dt_path)
{
    const auto compatible = read_compatible(dt_path);
    const auto dt_soc = compatible ? gpiomem_soc_from_compatible(*compatible) : std::nullopt;
    const std::string what = "open backend 'gpiomem'";
    if (o.soc && dt_soc && *o.soc != *dt_soc)
        throw error(what,
                    std::string("soc=") + gpiomem_soc_of(*o.soc).name +
                        " contradicts the device tree, which names " +
                        gpiomem_soc_of(*dt_soc).dt_compatible + " (" +
                        gpiomem_soc_of(*dt_soc).name + ", " + gpiomem_soc_of(*dt_soc).boards + ")",
                    "drop soc=: the device tree is right about the board it runs on");
    if (o.soc)
        return *o.soc;
    if (dt_soc)
        return *dt_soc;
    throw error(what,
                compatible
                    ? "not a supported SoC: " + dt_path + " says '" + printable(*compatible) + "'"
                    : "not a supported SoC: " + dt_path + " is absent (no device tree)",
                "gpiomem drives the GPIO block of " + gpiomem_soc_names() +
                    " (Raspberry Pi); elsewhere use the gpiod backend, or say soc= if this is "
                    "one of them under another name");
}

/** /dev/mem (testbed): the physical address of the chip's block, from its device's name. */
std::uint64_t chip_phys(const gpiod_line_id& id)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    auto dev = fs::canonical("/sys/bus/gpio/devices/" + id.chip_name, ec);
    // .../soc/3f200000.gpio/gpiochip0: the platform device is named after its address.
    const std::string parent = ec ? std::string() : dev.parent_path().filename().string();
    std::uint64_t phys = 0;
    auto [end, e] = std::from_chars(parent.data(), parent.data() + parent.size(), phys, 16);
    if (parent.empty() || e != std::errc{} || *end != '.' || phys == 0)
        throw error("open gpiomem dev=/dev/mem",
                    "cannot tell the physical address of " + id.chip_name + "'s registers" +
                        (parent.empty() ? std::string() : " (its device is '" + parent + "')"),
                    "dev=/dev/mem is for the testbed; use /dev/gpiomem on a Raspberry Pi OS "
                    "kernel");
    return phys;
}

std::unique_ptr<lines> open_sim(const gpiomem_options& o)
{
    gpiomem_wiring w;
    w.soc = *o.sim;
    w.who = o.lines.who;
    w.active_low = o.lines.active_low;
    w.answers = o.answers;
    auto number = [](const std::string& v, const char* key) {
        auto n = parse_number(v);
        if (!n)
            throw error(std::string("open gpiomem:sim key '") + key + "'",
                        "'" + v + "' is not a line number",
                        "the simulator has no kernel chip: give the BCM GPIO number");
        return *n;
    };
    w.out = number(o.lines.out, "out");
    w.in = number(o.lines.in, "in");
    auto sim = std::make_shared<gpiomem_sim>(w.soc);
    // The simulator plays the kernel (directions, as the requests would set them) and a
    // jumper from out to in (the far end of calibrate).
    if (w.in < gpiomem_soc_of(w.soc).lines && w.out < gpiomem_soc_of(w.soc).lines) {
        sim->set_output(w.in, false);
        sim->set_output(w.out, true);
        sim->set_jumper(w.out, w.in);
    }
    return std::make_unique<gpiomem_lines>(make_gpiomem_sim_regs(sim), w, nullptr);
}

} // namespace

gpiomem_options take_gpiomem_options(spec& s, role r)
{
    gpiomem_options o;
    o.sim = take_soc(s, "sim");
    if (o.sim)
        for (const char* key : {"chip", "bias", "dev", "soc"})
            if (s.has(key))
                throw error(s.context() + " key '" + key + "'",
                            "not with sim=: the simulator has no kernel, chip or device",
                            std::string("drop ") + key + "=");
    // The kernel's edge events are not for us: this backend polls the level register.
    if (s.has("events"))
        throw error(s.context() + " key 'events'",
                    "gpiomem polls the level register: no kernel edge events",
                    "drop it; run irqloop-responder with --mode poll");
    o.answers = take_far_end(s, o.answers);
    auto& l = o.lines;
    l.who = r;
    l.chip = s.take_string("chip", "");
    l.out = s.take_string("out", l.out);
    l.in = s.take_string("in", l.in);
    l.bias = take_bias(s, l.bias);
    l.active_low = s.take_bool("active_low", false);
    o.soc = take_soc(s, "soc");
    o.dev = s.take_string("dev", "");
    if (!o.dev.empty() && o.dev.front() != '/')
        throw error(s.context() + " key 'dev'", "'" + o.dev + "' is not a device path",
                    "e.g. dev=/dev/gpiomem");
    return o;
}

std::unique_ptr<lines> open_gpiomem_lines_with(const gpiomem_options& o, const std::string& dt)
{
    if (o.sim)
        return open_sim(o);
    const gpiomem_soc soc = find_soc(o, dt);
    const auto& info = gpiomem_soc_of(soc);
    // The SoC's GPIO chip by label, unless the spec names a chip: same lookup as gpiod.
    const std::string chip = o.lines.chip.empty() ? info.chip_label : o.lines.chip;
    auto out = find_gpiod_line(o.lines.out, chip, "open gpiomem line out=" + o.lines.out);
    auto in = find_gpiod_line(o.lines.in, chip, "open gpiomem line in=" + o.lines.in);
    for (const auto* id : {&out, &in})
        if (id->chip_label != info.chip_label)
            throw error("open gpiomem line " + gpiod_line_text(*id),
                        id->chip_name + " [" + id->chip_label + "] is not the " + info.name +
                            " GPIO block, whose chip is " + info.chip_label,
                        "gpiodetect lists the chips; the header's lines are on " +
                            std::string(info.chip_label) + ", or use the gpiod backend");
    if (out.path != in.path)
        throw error("open backend 'gpiomem'", "out and in are on two chips",
                    "both lines must be on " + std::string(info.chip_label));

    const std::string dev = o.dev.empty() ? info.device : o.dev;
    std::uint64_t phys = 0;
    if (dev == "/dev/mem") {
        if (soc == gpiomem_soc::rp1)
            throw error("open gpiomem dev=/dev/mem", "the testbed path is for BCM283x blocks",
                        "use /dev/gpiomem0 on a Raspberry Pi 5");
        phys = chip_phys(out);
    }
    auto regs = open_gpiomem_map(dev, phys, info.map_size);
    auto claim = std::make_unique<gpiod_claim>(o, out, in);

    gpiomem_wiring w;
    w.soc = soc;
    w.out = out.offset;
    w.in = in.offset;
    w.active_low = o.lines.active_low;
    w.answers = o.answers;
    w.who = o.lines.who;
    return std::make_unique<gpiomem_lines>(std::move(regs), w, std::move(claim));
}

std::unique_ptr<lines> open_gpiomem_lines(const gpiomem_options& o)
{
    return open_gpiomem_lines_with(o, "/proc/device-tree/compatible");
}

std::unique_ptr<lines> open_gpiomem_spec(spec& s, role r)
{
    auto o = take_gpiomem_options(s, r);
    s.finish(); // before the hardware: a typo must not have written a register
    return open_gpiomem_lines(o);
}

} // namespace irqloop::hw
