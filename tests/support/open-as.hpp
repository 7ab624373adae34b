// SPDX-License-Identifier: MIT
// Open a wire through the registry, as a run does, and keep it as its backend's own class, so
// that a test can reach every capability the backend has (drive/sense, edge waits, trigger).
#pragma once

#include "registry.hpp"

#include <memory>
#include <stdexcept>
#include <string_view>

namespace irqloop::test
{

/** @throws std::logic_error when the spec opened another backend than @p Wire. */
template <class Wire> std::unique_ptr<Wire> open_as(std::string_view spec_text, hw::role r)
{
    std::unique_ptr<hw::lines> l = hw::open_lines(spec_text, r);
    auto* w = dynamic_cast<Wire*>(l.get());
    if (!w)
        throw std::logic_error("the spec opened another backend");
    l.release();
    return std::unique_ptr<Wire>(w);
}

} // namespace irqloop::test
