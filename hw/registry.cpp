// SPDX-License-Identifier: MIT
#include "registry.hpp"

#include "error.hpp"
#include "ftdi/ftdi-lines.hpp"
#include "shm/shm-lines.hpp"
#include "sim/sim-lines.hpp"
#if IRQLOOP_HAVE_GPIOD
#include "gpiod/gpiod-lines.hpp"
#include "gpiomem/gpiomem-open.hpp"
#endif
#if IRQLOOP_HAVE_PARPORT
#include "parport/parport-lines.hpp"
#endif

#include <type_traits>
#include <utility>

namespace irqloop::hw
{

namespace
{

/** The registry's prepare step for a backend with an options type: take the keys, then open. */
template <auto take, auto open> opener two_steps(spec& s, role r)
{
    return [o = take(s, r)](const calibration_lookup& floor) {
        if constexpr (std::is_invocable_v<decltype(open), decltype(o), const calibration_lookup&>)
            return open(o, floor);
        else
            return open(o);
    };
}

} // namespace

const std::vector<backend_entry>& backends()
{
    // One explicit list, alphabetical; a backend is one folder under hw/ plus one entry here.
    static const std::vector<backend_entry> list = {
        {"ftdi",
         "FTDI chip, device-timed: FT232H/FT2232H/FT4232H (MPSSE, TCK up to 30 MHz) or FT232R "
         "(mode=syncbb, EXPERIMENTAL: its tick is measured at open, each window one 64-byte "
         "packet); desc=|serial=|bus=BUS:ADDR, or sim=ft232h|ft2232h|ft232r (chip simulator); "
         "offset=auto takes the newest floor run on the same wiring in --db; "
         "docs/backends/ftdi.md",
         "ftdi:desc=i:0x0403:0x6014,out=ADBUS4,in=ADBUS2,tck=30MHz",
         two_steps<take_ftdi_spec, open_ftdi>, nullptr, nullptr},
        {"gpiod", "Linux GPIO character device through libgpiod 2", "gpiod:out=GPIO17,in=GPIO27",
#if IRQLOOP_HAVE_GPIOD
         two_steps<take_gpiod_options, open_gpiod_lines>, nullptr,
#else
         nullptr, "built without libgpiod 2 (install libgpiod-dev from bookworm-backports)",
#endif
         "gpiod:in=GPIO17,out=GPIO27"},
        {"gpiomem",
         "Raspberry Pi GPIO block polled through its registers (/dev/gpiomem, /dev/gpiomem0), "
         "lines claimed through libgpiod; sim=bcm2711|rp1|... for the register simulator; "
         "docs/backends/gpiomem.md",
         "gpiomem:out=17,in=27",
#if IRQLOOP_HAVE_GPIOD
         two_steps<take_gpiomem_options, open_gpiomem_lines>, nullptr,
#else
         nullptr, "built without libgpiod 2 (install libgpiod-dev from bookworm-backports)",
#endif
         "gpiomem:in=17,out=27"},
        {"parport",
         "PC parallel port: base=ADDR (raw port I/O, root; with capabilities only a parportN of "
         "/proc/ioports), dev=/dev/parportN (ppdev) or "
         "sim=raw|ppdev; pins by name (out=D3,in=nACK); "
         "docs/backends/parport.md",
         "parport:base=0x378,out=D3,in=nACK",
#if IRQLOOP_HAVE_PARPORT
         two_steps<take_parport_spec, open_parport_lines>, nullptr,
#else
         nullptr, "built without parallel-port support (Linux only)",
#endif
         // The cable crosses: the target senses STIM on its nACK and drives RESP on its D3.
         "parport:dev=/dev/parport0,in=nACK,out=D3"},
        {"shm", "shared-memory wire to an irqloop-responder process", "shm:name=bench1",
         two_steps<take_shm_options, open_shm_lines>, nullptr, "shm:name=bench1"},
        {"sim", "simulated target board in this process (the default)",
         "sim:model=normal,mean=8us,sd=1us", two_steps<take_sim_options, open_sim_lines>, nullptr,
         "sim"},
    };
    return list;
} // namespace irqloop::hw

namespace
{

/** Take the spec's keys into its backend's options and refuse the rest: the opener, unopened. */
opener prepare_lines(spec s, role r, const std::vector<backend_entry>& list)
{
    for (const auto& b : list) {
        if (s.name() != b.name)
            continue;
        if (!b.prepare)
            throw error("open backend '" + s.name() + "'", "not available in this build",
                        b.missing);
        opener open = b.prepare(s, r);
        s.finish(); // before the hardware: a typo must not have written a register
        return open;
    }
    std::string known;
    for (const auto& b : list)
        known += (known.empty() ? "" : ", ") + std::string(b.name);
    throw error("open backend '" + s.name() + "'", "unknown backend", "known backends: " + known);
}

} // namespace

std::unique_ptr<lines> open_lines(std::string_view spec_text, role r,
                                  const std::vector<backend_entry>& list)
{
    return prepare_lines(spec(spec_text), r, list)({});
}

std::unique_ptr<lines> open_lines(spec s, role r, const calibration_lookup& floor,
                                  const std::vector<backend_entry>& list)
{
    return prepare_lines(std::move(s), r, list)(floor);
}

void check_lines_spec(std::string_view spec_text, role r, const std::vector<backend_entry>& list)
{
    prepare_lines(spec(spec_text), r, list);
}

std::string backends_help(role r)
{
    std::string h;
    for (const auto& b : backends()) {
        h += "  " + std::string(b.name) + ": " + b.summary;
        if (!b.prepare)
            h += std::string(" [") + b.missing + "]";
        if (r == role::logger)
            h += "\n      e.g. " + std::string(b.example) + "\n";
        else if (b.target_example)
            h += "\n      e.g. " + std::string(b.target_example) + "\n";
        else
            h += "\n      (the logger's end only)\n";
    }
    if (r != role::logger)
        h += "  on the target in= is STIM (the line it senses) and out= is RESP (the line it "
             "drives),\n      as schematics/*/pins.csv wire them: never the logger's spec "
             "copied, or both ends\n      drive one line\n";
    return h + "  every backend: edges=both|rising, answer=toggle|follow: how the far end "
               "answers\n      (docs/methodology.md)\n";
}

polled_wire& polled(lines& wire)
{
    if (auto* p = find<polled_wire>(wire))
        return *p;
    throw error("use wire '" + wire.describe() + "'", "it cannot be driven and sensed",
                "every backend should: report this as a bug");
}

} // namespace irqloop::hw
