// SPDX-License-Identifier: MIT
#pragma once

#include "prometheus.hpp"

#include <string>

namespace irqloop::logger
{

/**
 * @brief `irqloop run --metrics-file PATH`: the run's figures in the Prometheus text format,
 * rewritten whole at every stats window for node_exporter's textfile collector.
 *
 * Each write goes to PATH.tmp and is renamed over PATH, so a reader sees the previous file or
 * the new one, never half of one (the collector reads only names ending in .prom, so it never
 * picks up the temporary file). Called on the recorder's thread, never on the sampler's.
 */
class metrics_file final
{
public:
    /** @param base the run's labels, threshold and start; its figures are filled per write. */
    metrics_file(std::string path, metrics_run base);

    /**
     * @brief Write the figures so far. @throws irqloop::error (exit_failure) when the file
     * cannot be written or renamed; the message names the path.
     */
    void write(const db::summary_row& s, const histogram& h, std::uint64_t windows, bool active);

    /** @brief write() that never throws: the first failure is kept for a warning. */
    void write_noexcept(const db::summary_row& s, const histogram& h, std::uint64_t windows,
                        bool active) noexcept;

    /** @brief The gates' verdicts the next writes carry (irqloop_gate_pass). */
    void set_gates(std::vector<std::pair<std::string, bool>> gates) noexcept
    {
        base_.gates = std::move(gates);
    }

    /** @brief The first write failure's message, "" when every write succeeded. */
    const std::string& first_error() const noexcept { return first_error_; }
    const std::string& path() const noexcept { return path_; }

private:
    std::string path_;
    metrics_run base_;
    std::string first_error_;
};

} // namespace irqloop::logger
