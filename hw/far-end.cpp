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
    const std::string edges = s.take_string("edges", usual.edges_text());
    if (edges != "both" && edges != "rising")
        throw error("bad backend spec '" + s.text() + "'",
                    "unknown value '" + edges + "' of key 'edges'",
                    "use both or rising: the stimulus edges the far end answers");
    f.both_edges = edges == "both";
    const std::string answer =
        s.take_string("answer", usual.follow && f.both_edges ? "follow" : "toggle");
    if (answer != "toggle" && answer != "follow")
        throw error("bad backend spec '" + s.text() + "'",
                    "unknown value '" + answer + "' of key 'answer'",
                    "use toggle or follow, as the far end answers: irqloop-responder --answer");
    f.follow = answer == "follow";
    if (f.follow && !f.both_edges)
        throw error("bad backend spec '" + s.text() + "'", "answer=follow needs edges=both",
                    "a single-edge far end can only toggle");
    return f;
}

} // namespace irqloop::hw
