// c_contains: a scorekit scorer in C, written against docs/ABI.md alone.
//
// It scores 1 when the run's output contains its expected answer (ASCII case-insensitive),
// 0 when it does not, and skips runs without an expected answer. It is freestanding: no
// libc, no WASI; its one import is ABI v2's result, through which it hands the host each
// run of a batch (score_run scores one run, and the two exports at the end call it).
//
// Build: make (clang --target=wasm32 -nostdlib; see the Makefile).

typedef unsigned int u32;
typedef unsigned long long u64;
typedef unsigned long size_t;

// The compiler may lower loops to these; there is no libc to provide them.
void *memcpy(void *dst, const void *src, size_t n) {
	char *d = dst;
	const char *s = src;
	while (n--) *d++ = *s++;
	return dst;
}

void *memset(void *dst, int c, size_t n) {
	char *d = dst;
	while (n--) *d++ = (char)c;
	return dst;
}

#define EXPORT(name) __attribute__((export_name(name)))

static u64 pack(const char *ptr, u32 len) { return ((u64)(u32)(size_t)ptr << 32) | len; }

static u32 slen(const char *s) {
	u32 n = 0;
	while (s[n]) n++;
	return n;
}

// Memory: the linker puts the heap after the data; the host writes each request at
// heap start and the decoder writes the strings it unescapes after it.
extern unsigned char __heap_base;
static u32 heap_size;

static int reserve(u32 bytes) {
	u32 have = __builtin_wasm_memory_size(0) * 65536u;
	u32 need = (u32)(size_t)&__heap_base + bytes;
	if (need <= have) return 1;
	u32 pages = (need - have + 65535u) / 65536u;
	return __builtin_wasm_memory_grow(0, pages) != (size_t)-1;
}

// alloc(size) -> ptr: the request buffer, valid until the next alloc. Room for as much
// again follows it, for unescaped strings (an unescaped string is never longer).
EXPORT("scorekit_v1_alloc") u32 scorekit_alloc(u32 size) {
	if (!reserve(2 * size + 16)) return 0;
	heap_size = size;
	return (u32)(size_t)&__heap_base;
}

static const char info[] =
	"[{\"name\":\"c_contains\",\"version\":\"1.0.0\",\"abi_version\":1,"
	"\"description\":\"1 when the output contains the expected answer (ASCII case-insensitive), 0 otherwise; skipped without an expected answer. Written in C.\","
	"\"range\":{\"min\":0,\"max\":1},\"threshold\":1}]";

EXPORT("scorekit_v1_info") u64 scorekit_info(void) { return pack(info, sizeof info - 1); }

static const char *p, *end;

static void ws(void) {
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
}

static int is_empty_config(void) {
	ws();
	if (p == end) return 1;
	if (end - p >= 4 && p[0] == 'n' && p[1] == 'u' && p[2] == 'l' && p[3] == 'l') {
		p += 4;
	} else {
		if (*p++ != '{') return 0;
		ws();
		if (p == end || *p++ != '}') return 0;
	}
	ws();
	return p == end;
}

static const char config_error[] =
	"{\"code\":\"invalid_config\",\"message\":\"c_contains takes no config; pass none or {}\"}";

// configure(scorer, ptr, len) -> empty reply on success, a JSON error otherwise.
EXPORT("scorekit_v1_configure") u64 scorekit_configure(u32 scorer, const char *ptr, u32 len) {
	p = ptr, end = ptr + len;
	if (scorer != 0 || !is_empty_config()) return pack(config_error, sizeof config_error - 1);
	return 0;
}

static int hex(char c) {
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	return -1;
}

static int hex4(u32 *v) {
	if (end - p < 4) return 0;
	*v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hex(*p++);
		if (h < 0) return 0;
		*v = *v << 4 | (u32)h;
	}
	return 1;
}

static char *put_utf8(char *o, u32 c) {
	if (c < 0x80) {
		*o++ = (char)c;
	} else if (c < 0x800) {
		*o++ = (char)(0xC0 | c >> 6), *o++ = (char)(0x80 | (c & 0x3F));
	} else if (c < 0x10000) {
		*o++ = (char)(0xE0 | c >> 12), *o++ = (char)(0x80 | (c >> 6 & 0x3F)), *o++ = (char)(0x80 | (c & 0x3F));
	} else {
		*o++ = (char)(0xF0 | c >> 18), *o++ = (char)(0x80 | (c >> 12 & 0x3F));
		*o++ = (char)(0x80 | (c >> 6 & 0x3F)), *o++ = (char)(0x80 | (c & 0x3F));
	}
	return o;
}

// string decodes the JSON string at p into out (when out is not 0) and returns its end,
// or 0 on malformed input. p is left after the closing quote.
static char *string(char *out) {
	if (p == end || *p++ != '"') return 0;
	char *o = out;
	while (p < end && *p != '"') {
		char c = *p++;
		if (c != '\\') {
			if (o) *o++ = c;
			continue;
		}
		if (p == end) return 0;
		u32 u = 0;
		switch (c = *p++) {
		case 'b': c = '\b'; break;
		case 'f': c = '\f'; break;
		case 'n': c = '\n'; break;
		case 'r': c = '\r'; break;
		case 't': c = '\t'; break;
		case '"': case '\\': case '/': break;
		case 'u':
			if (!hex4(&u)) return 0;
			if (u >= 0xD800 && u < 0xDC00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
				u32 lo;
				p += 2;
				if (!hex4(&lo)) return 0;
				u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
			}
			if (o) o = put_utf8(o, u);
			continue;
		default: return 0;
		}
		if (o) *o++ = c;
	}
	if (p == end) return 0;
	p++;
	return o ? o : (char *)1;
}

// skip passes over one JSON value of any kind.
static int skip(void) {
	ws();
	if (p == end) return 0;
	if (*p == '"') return string(0) != 0;
	if (*p == '{' || *p == '[') {
		int depth = 0;
		while (p < end) {
			if (*p == '"') {
				if (!string(0)) return 0;
				continue;
			}
			if (*p == '{' || *p == '[') depth++;
			if (*p == '}' || *p == ']') depth--;
			p++;
			if (depth == 0) return 1;
		}
		return 0;
	}
	while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') p++;
	return 1;
}

static int key_is(const char *k, u32 n, const char *want) {
	u32 m = slen(want);
	if (n != m) return 0;
	for (u32 i = 0; i < n; i++)
		if (k[i] != want[i]) return 0;
	return 1;
}

static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c + 32) : c; }

static int contains(const char *h, u32 hn, const char *n, u32 nn) {
	if (nn > hn) return 0;
	for (u32 i = 0; i + nn <= hn; i++) {
		u32 j = 0;
		while (j < nn && lower(h[i + j]) == lower(n[j])) j++;
		if (j == nn) return 1;
	}
	return 0;
}

#define REPLY(s) pack(s, sizeof s - 1)
static const char scored_yes[] = "{\"status\":\"scored\",\"score\":1,\"reason\":\"the output contains the expected answer\"}";
static const char scored_no[] = "{\"status\":\"scored\",\"score\":0,\"reason\":\"the output does not contain the expected answer\"}";
static const char skipped[] = "{\"status\":\"skipped\",\"reason\":\"the run has no expected answer to look for\"}";
static const char malformed[] = "{\"status\":\"failed\",\"error\":{\"code\":\"invalid_run\",\"message\":\"c_contains could not parse the run JSON\"}}";
static const char no_scorer[] = "{\"status\":\"failed\",\"error\":{\"code\":\"invalid_run\",\"message\":\"c_contains carries one scorer, index 0\"}}";

// score_run scores the JSON run at ptr, unescaping strings into scratch, and returns the
// packed JSON result.
static u64 score_run(u32 scorer, const char *ptr, u32 len, char *scratch) {
	if (scorer != 0) return REPLY(no_scorer);
	p = ptr, end = ptr + len;
	const char *output = 0, *expected = 0;
	u32 output_len = 0, expected_len = 0;
	ws();
	if (p == end || *p++ != '{') return REPLY(malformed);
	for (;;) {
		ws();
		if (p < end && *p == '}') break;
		const char *key = p + 1;
		if (!string(0)) return REPLY(malformed);
		u32 key_len = (u32)(p - key - 1);
		ws();
		if (p == end || *p++ != ':') return REPLY(malformed);
		ws();
		int is_output = key_is(key, key_len, "output"), is_expected = key_is(key, key_len, "expected");
		if ((is_output || is_expected) && p < end && *p == '"') {
			char *start = scratch, *stop = string(scratch);
			if (!stop) return REPLY(malformed);
			scratch = stop;
			if (is_output) output = start, output_len = (u32)(stop - start);
			else expected = start, expected_len = (u32)(stop - start);
		} else if (!skip()) {
			return REPLY(malformed);
		}
		ws();
		if (p < end && *p == ',') p++;
	}
	if (!expected || expected_len == 0) return REPLY(skipped);
	return contains(output, output_len, expected, expected_len) ? REPLY(scored_yes) : REPLY(scored_no);
}

// score(scorer, flags, ptr, len) -> packed JSON result (ABI v1). flags are ignored: this
// guest never uses the judge and speaks only JSON, which it does not advertise otherwise.
EXPORT("scorekit_v1_score") u64 scorekit_score(u32 scorer, u32 flags, const char *ptr, u32 len) {
	(void)flags;
	return score_run(scorer, ptr, len, (char *)ptr + len);
}

// result(ptr, len) -> 1 to go on, 0 to stop: ABI v2's import, the result of the batch's
// next run.
__attribute__((import_module("scorekit_v2"), import_name("result"))) u32 scorekit_result(const char *ptr, u32 len);

static u32 le32(const unsigned char *b) { return b[0] | (u32)b[1] << 8 | (u32)b[2] << 16 | (u32)b[3] << 24; }

// score_batch(scorer, flags, ptr, len) -> runs handed over (ABI v2): the request is a u32
// count, then each run as a u32 length and its JSON; each result goes to the host as soon
// as it is made. Strings are unescaped after the whole request, where alloc left room.
EXPORT("scorekit_v2_score_batch") u32 scorekit_score_batch(u32 scorer, u32 flags, const char *ptr, u32 len) {
	(void)flags;
	const unsigned char *b = (const unsigned char *)ptr, *stop = b + len;
	if (len < 4) return 0;
	u32 n = le32(b);
	b += 4;
	for (u32 i = 0; i < n; i++) {
		if (stop - b < 4) return i;
		u32 size = le32(b);
		b += 4;
		if ((u32)(stop - b) < size) return i;
		u64 reply = score_run(scorer, (const char *)b, size, (char *)ptr + len);
		b += size;
		if (!scorekit_result((const char *)(size_t)(reply >> 32), (u32)reply)) return i + 1;
	}
	return n;
}
