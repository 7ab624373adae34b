// SPDX-License-Identifier: MIT
#include "far-end.hpp"

#include "error.hpp"
#include "spec.hpp"

namespace irqloop::hw
{

std::string far_end::keys_unlike(const far_end& usual) const
{
    std::string k;
    if (both_edges != usual.both_edges)
        k += std::string(",edges=") + edges_text();
    if (follow != usual.follow)
        k += std::string(",answer=") + answer_text();
    return k;
}

far_end take_far_end(spec& s, far_end usual)
{
    far_end f;
    f.both_edges = s.take_choice("edges", {"both", "rising"}, usual.edges_text(),
                                 "the stimulus edges the far end answers") == 0;
    f.follow = s.take_choice("answer", {"toggle", "follow"},
                             usual.follow && f.both_edges ? "follow" : "toggle",
                             "how the far end answers (irqloop-responder --answer)") == 1;
    if (f.follow && !f.both_edges)
        throw error("bad backend spec '" + s.text() + "'", "answer=follow needs edges=both",
                    "a single-edge far end can only toggle");
    return f;
}

std::string take_bias(spec& s, std::string_view fallback)
{
    constexpr std::string_view biases[] = {"as-is", "disabled", "pull-up", "pull-down"};
    return std::string(biases[s.take_choice("bias", {biases[0], biases[1], biases[2], biases[3]},
                                            fallback, "the sensed line's bias")]);
}

} // namespace irqloop::hw
