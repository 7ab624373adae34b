// SPDX-License-Identifier: MIT
#include "parport-lines.hpp"

#include "cycle-clock.hpp"
#include "error.hpp"
#include "parport-defaults.hpp"
#include "parport-gate.hpp"
#include "parport-sim.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace irqloop::hw
{

namespace
{

std::string fmt_ns(double ns)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", ns);
    return buf;
}

std::string hex2(unsigned v)
{
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%02x", v);
    return buf;
}

} // namespace

parport_lines::parport_lines(std::unique_ptr<parport_io> io, parport_options o)
    : lines(o.answers), io_(std::move(io)), opt_(std::move(o))
{
    const std::string what = std::string("open parallel port (") + io_->where() + ")";
    if (!opt_.out.is_output())
        throw irqloop::error(
            what, std::string("pin ") + opt_.out.name + " is an input and cannot be 'out'",
            "out must be one of " + parport_pin_names(true));
    if (opt_.in.reg != parport_register::status)
        throw irqloop::error(
            what, std::string("pin ") + opt_.in.name + " is an output and cannot be 'in'",
            "in must be one of " + parport_pin_names(false));
    if (opt_.ctl_on_irq && !(*opt_.ctl_on_irq == opt_.out))
        throw irqloop::error(what, "ctl_on_irq names another pin than out",
                             "PPWCTLONIRQ drives the response: give the same control pin to both");

    int c = io_->read_control();
    if (c < 0)
        throw_from_errno(-c, what + ": read control register");
    control_ = static_cast<std::uint8_t>(c & ~parport_ctl::reverse);
    if (opt_.who == role::responder && io_->has_irq())
        control_ |= parport_ctl::irq_enable;
    else
        control_ &= ~parport_ctl::irq_enable;
    if (opt_.out.reg == parport_register::control)
        control_ = opt_.out.bit_for_level(false) ? (control_ | opt_.out.mask)
                                                 : (control_ & ~opt_.out.mask);
    if (int rc = io_->write_control(control_); rc < 0)
        throw_from_errno(-rc, what + ": write control register");
    data_ = 0;
    if (int rc = io_->write_data(data_); rc < 0)
        throw_from_errno(-rc, what + ": write data register");
    if (opt_.check) {
        int back = io_->read_data();
        if (back < 0)
            throw_from_errno(-back, what + ": read data register");
        if (back != data_)
            throw irqloop::error(
                what,
                "no parallel port answers: the data register reads " + hex2(back) +
                    " after writing " + hex2(data_),
                "check the base in /proc/ioports or lspci -v; check=no skips this test");
    }
    measure_costs();
    io_->clear_irq();
}

parport_lines::~parport_lines()
{
    stop();
}

void parport_lines::measure_costs()
{
    // Medians of per-batch averages: a batch hit by an interrupt does not move the figure.
    constexpr int batches = 15, reads = 64, writes = 16;
    std::vector<double> r, w;
    for (int b = 0; b < batches; ++b) {
        std::int64_t t0 = monotonic_raw_ns();
        for (int i = 0; i < reads; ++i)
            if (int v = io_->read_status(); v < 0)
                throw_from_errno(-v,
                                 std::string("read parallel-port status (") + io_->where() + ")");
        std::int64_t t1 = monotonic_raw_ns();
        // Rewriting the current value changes no pin: safe with the target connected.
        for (int i = 0; i < writes; ++i)
            if (int v = io_->write_data(data_); v < 0)
                throw_from_errno(-v,
                                 std::string("write parallel-port data (") + io_->where() + ")");
        std::int64_t t2 = monotonic_raw_ns();
        r.push_back(static_cast<double>(t1 - t0) / reads);
        w.push_back(static_cast<double>(t2 - t1) / writes);
    }
    std::nth_element(r.begin(), r.begin() + batches / 2, r.end());
    std::nth_element(w.begin(), w.begin() + batches / 2, w.end());
    read_ns_ = r[batches / 2];
    write_ns_ = w[batches / 2];
}

std::uint8_t& parport_lines::shadow() noexcept
{
    return opt_.out.reg == parport_register::data ? data_ : control_;
}

int parport_lines::write_out(std::uint8_t v) noexcept
{
    return opt_.out.reg == parport_register::data ? io_->write_data(v) : io_->write_control(v);
}

void parport_lines::drive(bool high) noexcept
{
    std::uint8_t& sh = shadow();
    const std::uint8_t next =
        opt_.out.bit_for_level(high) ? (sh | opt_.out.mask) : (sh & ~opt_.out.mask);
    if (next == sh)
        return; // already there, e.g. set by the kernel's PPWCTLONIRQ
    sh = next;
    if (int rc = write_out(next); rc < 0)
        fail(-rc, "drive");
}

int parport_lines::sense() noexcept
{
    if (error())
        return -1;
    int v = io_->read_status();
    if (v < 0) {
        fail(-v, "sense");
        return -1;
    }
    return opt_.in.level_in(static_cast<std::uint8_t>(v)) ? 1 : 0;
}

bool parport_lines::has_edge_events() const noexcept
{
    return io_->has_irq() && opt_.in.reg == parport_register::status && opt_.in.mask == 0x40;
}

int parport_lines::wait_edge(std::int64_t timeout_ns) noexcept
{
    if (!has_edge_events() || error())
        return -1;
    if (opt_.ctl_on_irq) {
        // Arm the answer the responder would give: the out pin toggled.
        const std::uint8_t armed = control_ ^ opt_.out.mask;
        if (int rc = io_->arm_control_on_irq(armed); rc < 0) {
            fail(-rc, "wait_edge");
            return -1;
        }
    }
    int n = io_->wait_irq(timeout_ns);
    if (n < 0) {
        fail(-n, "wait_edge");
        return -1;
    }
    if (n == 0)
        return 0;
    irqs_ += static_cast<std::uint64_t>(n);
    missed_ += static_cast<std::uint64_t>(n - 1);
    if (opt_.ctl_on_irq) {
        // The IRQ handler may have written the control lines: follow it (once per edge,
        // after the response, so the cost stays out of the latency).
        int c = io_->read_control();
        if (c < 0) {
            fail(-c, "wait_edge");
            return -1;
        }
        control_ = static_cast<std::uint8_t>((control_ & 0xf0) | (c & 0x0f));
    }
    return 1;
}

void parport_lines::start()
{
    parport_io_reacquire(*io_);
    io_->clear_irq();
}

void parport_lines::stop() noexcept
{
    drive(false);
}

std::string parport_lines::describe() const
{
    std::string d = std::string("parport:") + io_->where() + ",out=" + opt_.out.name +
                    ",in=" + opt_.in.name + ",edges=" + opt_.answers.edges_text();
    if (opt_.answers.follow)
        d += ",answer=follow";
    if (opt_.ctl_on_irq)
        d += std::string(",ctl_on_irq=") + opt_.ctl_on_irq->name;
    return d;
}

std::vector<metadata_item> parport_lines::metadata() const
{
    std::vector<metadata_item> m = {
        {"parport.method", io_->method()},
        {"parport.port", io_->where()},
        {"parport.out", opt_.out.explain()},
        {"parport.in", opt_.in.explain()},
        {"parport.edges", opt_.answers.edges_text()},
        {"parport.status_read_ns", fmt_ns(read_ns_)},
        {"parport.write_ns", fmt_ns(write_ns_)},
    };
    if (std::string n = io_->note(); !n.empty())
        m.push_back({"parport.ioports", n});
    if (opt_.ctl_on_irq)
        m.push_back({"parport.ctl_on_irq", opt_.ctl_on_irq->explain()});
    if (opt_.who == role::responder && io_->has_irq())
        m.push_back({"parport.irqs", std::to_string(irqs_)});
    return m;
}

parport_spec take_parport_spec(spec& s, role r)
{
    const std::string what = "open backend 'parport'";
    const std::string bad = "bad backend spec '" + s.text() + "'";
    auto base = s.take("base");
    auto dev = s.take("dev");
    auto sim = s.take("sim");
    if ((base ? 1 : 0) + (dev ? 1 : 0) + (sim ? 1 : 0) != 1)
        throw error(what, "give exactly one of base=, dev= or sim=",
                    "parport:base=0x378,... (raw port I/O, root) or "
                    "parport:dev=/dev/parport0,... (ppdev)");

    parport_spec p;
    parport_options& o = p.lines;
    o.who = r;
    std::string ctl = s.take_string("ctl_on_irq", "");
    o.out = parport_pin_by_name(s.take_string("out", ctl.empty() ? parport_defaults::out_pin : ctl),
                                "key 'out'");
    o.in = parport_pin_by_name(s.take_string("in", parport_defaults::in_pin), "key 'in'");
    o.answers = take_far_end(s, o.answers);
    o.check = s.take_bool("check", true);
    if (!ctl.empty()) {
        if (r != role::responder || !dev)
            throw error(what, "ctl_on_irq is for a ppdev responder",
                        "use it with irqloop-responder --hw parport:dev=/dev/parport0,...");
        o.ctl_on_irq = parport_pin_by_name(ctl, "key 'ctl_on_irq'");
        if (o.ctl_on_irq->reg != parport_register::control)
            throw error(what,
                        std::string("ctl_on_irq pin ") + o.ctl_on_irq->name +
                            " is not a control line",
                        "PPWCTLONIRQ sets control lines only: nSTROBE, nAUTOFD, nINIT, nSELECTIN");
    }

    if (base) {
        p.method = parport_method::raw;
        char* end = nullptr;
        unsigned long b = std::strtoul(base->c_str(), &end, 0);
        if (base->empty() || *end != '\0')
            throw error(bad, "key 'base' is not a number: '" + *base + "'",
                        "write it as in /proc/ioports, e.g. base=0x378 or base=0xd010");
        p.base = static_cast<unsigned>(std::min(b, 0x10000ul));
        // Before any file or stimulus: with raised privileges only a listed parallel port.
        gate_raw_port(p.base, o.check);
    } else if (dev) {
        p.method = parport_method::ppdev;
        p.device = *dev;
        p.exclusive = s.take_bool("excl", true);
    } else {
        p.method = parport_method::sim;
        if (r != role::logger)
            throw error(what, "the simulator plays the target, so it serves only the logger",
                        "tests drive a responder through the C++ API (parport-sim.hpp)");
        const bool ppdev =
            s.take_choice("sim", {"raw", "ppdev"}, *sim, "the access method to imitate") == 1;
        p.target.model = latency_model::from_spec(s);
        p.target.rising_only = !o.answers.both_edges;
        p.target.follow = o.answers.follow;
        p.target.lose_every = s.take_count("lose_every", 0);
        p.target.answer_twice = s.take_bool("twice", false);
        p.target.twice_gap_ns = s.take_duration_ns("twice_gap", 2000, 0, 1'000'000'000);
        p.port.flavour = ppdev ? parport_sim_flavour::ppdev : parport_sim_flavour::raw;
        p.port.read_cost_ns = s.take_duration_ns("read_cost", 0, 0, 1'000'000'000);
    }
    return p;
}

std::unique_ptr<parport_io> open_parport_io(const parport_spec& p)
{
    switch (p.method) {
    case parport_method::raw:
        return open_parport_raw_io(p.base, p.lines.check);
    case parport_method::ppdev:
        return open_parport_ppdev_io(p.device, p.exclusive);
    case parport_method::sim:
        break;
    }
    return make_parport_sim_io(
        std::make_shared<parport_sim>(p.lines.out, p.lines.in, p.target, p.port));
}

std::unique_ptr<lines> open_parport_lines(const parport_spec& p)
{
    return std::make_unique<parport_lines>(open_parport_io(p), p.lines);
}

} // namespace irqloop::hw
