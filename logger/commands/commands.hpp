// SPDX-License-Identifier: MIT
#pragma once

namespace irqloop::logger
{

/**
 * Each subcommand of `irqloop` is one function taking the arguments after its name
 * (argv[0] is the subcommand name). Each returns the process exit status and reports
 * errors by throwing irqloop::error, which main() prints.
 */
int run_command(int argc, char** argv);
int calibrate_command(int argc, char** argv);
int report_command(int argc, char** argv);
int worst_command(int argc, char** argv);
int compare_command(int argc, char** argv);
int plot_command(int argc, char** argv);
int export_command(int argc, char** argv);
int merge_command(int argc, char** argv);
int doctor_command(int argc, char** argv);
int watch_command(int argc, char** argv);
int campaign_command(int argc, char** argv);
int check_command(int argc, char** argv);

} // namespace irqloop::logger
