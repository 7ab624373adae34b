/* SPDX-License-Identifier: GPL-2.0 */
/*
 * irqloop_trace.h: the responder's own trace events (TRACE_SYSTEM irqloop),
 * one pair per stimulus edge, so that `irqloop explain` can pair a trace
 * with a run's samples by sequence:
 *   irqloop_edge      seq=N level=L  the handler saw edge N (hard context);
 *                                    L: the input level it read, -1 when
 *                                    not read there (threaded mode)
 *   irqloop_response  seq=N level=L  the output of edge N was written;
 *                                    L: the level written
 *   irqloop_thread    seq=N          threaded mode: the thread function of
 *                                    edge N starts
 * seq is the module's own count of handled edges (1-based): the value the
 * handled attribute shows once edge N is answered. The userspace responder
 * writes the same text through trace_marker (irqloop-responder --trace).
 *
 * Read twice by the kernel's trace machinery (TRACE_HEADER_MULTI_READ):
 * once for the declarations, once, in the one file that defines
 * CREATE_TRACE_POINTS, for the definitions. The module is built outside the
 * kernel tree, so the second read is told where this file is (Kbuild adds
 * -I$(src) for it).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM irqloop

#if !defined(IRQLOOP_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define IRQLOOP_TRACE_H

#include <linux/tracepoint.h>

DECLARE_EVENT_CLASS(irqloop_seq_level,
	TP_PROTO(u64 seq, int level),
	TP_ARGS(seq, level),
	TP_STRUCT__entry(
		__field(u64, seq)
		__field(int, level)
	),
	TP_fast_assign(
		__entry->seq = seq;
		__entry->level = level;
	),
	TP_printk("seq=%llu level=%d", (unsigned long long)__entry->seq,
		  __entry->level)
);

DEFINE_EVENT(irqloop_seq_level, irqloop_edge,
	TP_PROTO(u64 seq, int level),
	TP_ARGS(seq, level)
);

DEFINE_EVENT(irqloop_seq_level, irqloop_response,
	TP_PROTO(u64 seq, int level),
	TP_ARGS(seq, level)
);

TRACE_EVENT(irqloop_thread,
	TP_PROTO(u64 seq),
	TP_ARGS(seq),
	TP_STRUCT__entry(
		__field(u64, seq)
	),
	TP_fast_assign(
		__entry->seq = seq;
	),
	TP_printk("seq=%llu", (unsigned long long)__entry->seq)
);

#endif /* IRQLOOP_TRACE_H */

/* Outside the guard: the second read, with CREATE_TRACE_POINTS, looks here. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE irqloop_trace
#include <trace/define_trace.h>
