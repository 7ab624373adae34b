// SPDX-License-Identifier: MIT
/* The responder's printf and string helpers (bm.h); no libc here. */
#include "bm.h"

int bm_strcmp(const char *a, const char *b)
{
	while (*a && *a == *b) {
		++a;
		++b;
	}
	return (unsigned char)*a - (unsigned char)*b;
}

int bm_strncmp(const char *a, const char *b, unsigned long n)
{
	for (; n; --n, ++a, ++b) {
		if (*a != *b)
			return (unsigned char)*a - (unsigned char)*b;
		if (!*a)
			return 0;
	}
	return 0;
}

unsigned long bm_strlen(const char *s)
{
	unsigned long n = 0;
	while (s[n])
		++n;
	return n;
}

int bm_parse_u64(const char *s, unsigned long len, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;
	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		len -= 2;
	}
	if (!len)
		return -1;
	for (; len; --len, ++s) {
		unsigned d;
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return -1;
		if (v > (UINT64_MAX - d) / base)
			return -1;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

static void bm_fmt_number(uint64_t v, unsigned base, int negative, unsigned width, char pad)
{
	char buf[24];
	unsigned n = 0;
	do {
		unsigned d = v % base;
		buf[n++] = d < 10 ? '0' + d : 'a' + d - 10;
		v /= base;
	} while (v);
	if (negative)
		buf[n++] = '-';
	for (; width > n; --width)
		bm_putc(pad);
	while (n)
		bm_putc(buf[--n]);
}

void bm_vprintf(const char *fmt, va_list ap)
{
	for (; *fmt; ++fmt) {
		if (*fmt != '%') {
			if (*fmt == '\n')
				bm_putc('\r');
			bm_putc(*fmt);
			continue;
		}
		++fmt;
		char pad = ' ';
		unsigned width = 0, longs = 0;
		if (*fmt == '0') {
			pad = '0';
			++fmt;
		}
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		while (*fmt == 'l') {
			++longs;
			++fmt;
		}
		switch (*fmt) {
		case 's': {
			const char *s = va_arg(ap, const char *);
			if (!s)
				s = "(null)";
			unsigned long len = bm_strlen(s);
			for (; width > len; --width)
				bm_putc(' ');
			while (*s)
				bm_putc(*s++);
			break;
		}
		case 'c':
			bm_putc((char)va_arg(ap, int));
			break;
		case 'd': {
			int64_t v = longs ? va_arg(ap, long) : va_arg(ap, int);
			bm_fmt_number(v < 0 ? -(uint64_t)v : (uint64_t)v, 10, v < 0, width, pad);
			break;
		}
		case 'u':
		case 'x': {
			uint64_t v = longs ? va_arg(ap, unsigned long) : va_arg(ap, unsigned);
			bm_fmt_number(v, *fmt == 'u' ? 10 : 16, 0, width, pad);
			break;
		}
		case '%':
			bm_putc('%');
			break;
		case '\0':
			return;
		default:
			bm_putc('%');
			bm_putc(*fmt);
			break;
		}
	}
}

void bm_printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	bm_vprintf(fmt, ap);
	va_end(ap);
}

/* The compiler may call these for structure copies and clears, even freestanding. */
void *memcpy(void *dst, const void *src, unsigned long n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	while (n--)
		*d++ = *s++;
	return dst;
}

void *memset(void *dst, int c, unsigned long n)
{
	unsigned char *d = dst;
	while (n--)
		*d++ = (unsigned char)c;
	return dst;
}
