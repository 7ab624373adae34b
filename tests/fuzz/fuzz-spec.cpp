// SPDX-License-Identifier: MIT
// libFuzzer target: a backend spec string through the registry's first step (every backend's
// take_*() keys) and spec::finish(), never the second step: no device is opened, no segment
// created, no thread started. A refusal is an irqloop::error; anything else is a bug.
#include "error.hpp"
#include "registry.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

using namespace irqloop;

namespace
{

[[noreturn]] void bug(const char* what)
{
    std::fprintf(stderr, "fuzz-spec: %s escaped the spec parser\n", what);
    std::abort();
}

// Both roles: the logger's and the responder's keys differ for some backends.
void take_as(std::string_view text, hw::role r)
{
    try {
        hw::spec s(text);
        for (const auto& b : hw::backends()) {
            if (s.name() != b.name || !b.prepare)
                continue;
            hw::opener open = b.prepare(s, r); // the keys, into the backend's options
            s.finish();                        // the keys nobody took
            (void)open;                        // the hardware is never touched
        }
        // The accessors a message or the run record uses.
        (void)s.context();
        (void)s.text();
    } catch (const error& e) {
        if (e.message().empty())
            bug("an empty error message");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz-spec: %s\n", e.what());
        bug("a non-irqloop exception");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    take_as(text, hw::role::logger);
    take_as(text, hw::role::responder);
    return 0;
}
