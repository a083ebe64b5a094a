/* A run of a dump's plain lines parsed straight into columns (loaders/index/lines.py).
 *
 * orjson makes a dict a line, a float object a number and a str a token; the summary then
 * walks them again to build its columns.  For a line of the board's own format whose values
 * are of the plain kinds, this reads the bytes once and writes each key's column: scalars
 * (strings, numbers, true/false/null) as the objects orjson would make, the per-token number
 * lists laid end to end as float64 with each sample's length, the token lists as each one's
 * length and its span of the data (each string checked, none kept: lines.TokenSpans reads
 * a list when it is asked for).  Any other line (a nested value, an escape that makes a
 * lone surrogate, a number out of range, a key twice, a BOM, a stray byte, no newline yet)
 * ends the run before it: the caller reads that line with orjson as always.  So both ways
 * give the same values (tests/loaders/test_index_lines.py).
 *
 * Numbers: an integer is an int64 (outside it, the line is not plain); a float is parsed
 * exactly, as orjson and float() parse it: Clinger's fast path when its digits fit 2^53 and
 * its exponent 10^22; else Eisel and Lemire's algorithm ("Number Parsing at a Gigabyte per
 * Second", as fast_float's compute_float has it), with the 128-bit powers of five that
 * lines.py computes with Python's exact integers; else (more than 19 digits, a subnormal, the
 * rare product it cannot settle) PyOS_string_to_double, which is float() itself.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#ifndef KERNEL_SOURCE
#define KERNEL_SOURCE "unknown"
#endif

enum { SCALAR = 1, NUMBERS = 2, STRINGS = 3 };
#define MAX_KEYS 64

/* A growing array of bytes, held in a bytes object: a scan's column is handed to Python as
 * that object, cut to size (bytes_of), not copied into a new one. */
typedef struct {
    PyObject *held;  /* the bytes object, NULL until the first put */
    char *data;      /* its bytes */
    Py_ssize_t size, cap;
} Buf;

static int buf_reserve(Buf *b, Py_ssize_t cap) {
    if (cap <= b->cap) return 0;
    if (b->held == NULL) b->held = PyBytes_FromStringAndSize(NULL, cap);
    else if (_PyBytes_Resize(&b->held, cap) < 0) b->held = NULL;  /* it freed the old one */
    if (b->held == NULL) { b->data = NULL; b->size = b->cap = 0; return -1; }
    b->data = PyBytes_AS_STRING(b->held);
    b->cap = cap;
    return 0;
}

static int __attribute__((noinline)) buf_grow(Buf *b, Py_ssize_t want) {
    Py_ssize_t cap = b->cap ? b->cap : 256;
    while (cap < want) cap *= 2;
    return buf_reserve(b, cap);
}

static inline int buf_put(Buf *b, const void *src, Py_ssize_t n) {
    if (b->size + n > b->cap && buf_grow(b, b->size + n) < 0) return -1;
    memcpy(b->data + b->size, src, n);
    b->size += n;
    return 0;
}

static void buf_free(Buf *b) {
    Py_CLEAR(b->held);
    b->data = NULL;
    b->size = b->cap = 0;
}

typedef struct {
    const char *name;    /* into the data: the key's bytes (no escapes) */
    Py_ssize_t len;
    int kind;            /* SCALAR, NUMBERS or STRINGS; fixed by its first value in the run */
    int list_kind;       /* NUMBERS or STRINGS: the lists this key may hold; 0: none */
    int is_step;
    PyObject *column;    /* SCALAR: a list, one item a sample (missing: the marker) */
    Buf values;          /* NUMBERS: float64s end to end */
    Buf lengths;         /* NUMBERS, STRINGS: int64 a sample, -1 where missing */
    Buf spans;           /* STRINGS: int64 start and end of each sample's list in the data */
    const char *last_raw;  /* SCALAR: the raw bytes of its last string (into the data) */
    Py_ssize_t last_len;
    PyObject *last;      /* and the str made of them */
    Py_ssize_t filled;   /* samples written */
    Py_ssize_t padded;   /* of them, samples without the key (the marker, or length -1) */
} Key;

/* A token list's strings repeat ("\n", " the"): a token's raw bytes read good are kept in a
 * direct-mapped table for the rest of the scan, so a repeat is a hash and a memcmp, not a
 * decode. */
#define TOKEN_SLOTS 2048
#define TOKEN_MAX 32  /* raw bytes of a token kept; a longer one is decoded each time */
typedef struct {
    const char *raw;  /* into the scanned data, which outlives the scan */
    Py_ssize_t len;
    int good;         /* these bytes read as a string */
} Token;

typedef struct {
    Key keys[MAX_KEYS];
    int count;
    PyObject *missing;
    PyObject *number_keys, *string_keys;  /* tuples of str: the keys whose lists are read */
    Token *tokens;  /* TOKEN_SLOTS, made at the first token list */
} Run;

/* one value of the line being read, kept until the whole line proves plain */
typedef struct {
    int key, kind;
    PyObject *object;          /* SCALAR */
    Py_ssize_t first, count;   /* NUMBERS: into the line's scratch float64s */
    const char *open, *close;  /* STRINGS: the list's bytes, [ to ] */
} Staged;

typedef struct {
    const char *p, *end;
    Buf text;      /* an unescaped string's bytes */
    Buf numbers;   /* this line's float64s */
    Staged staged[MAX_KEYS];
    int nstaged;
} Line;

static inline void skip_ws(Line *l) {
    while (l->p < l->end && (*l->p == ' ' || *l->p == '\t' || *l->p == '\r')) l->p++;
}

static int hex4(const char *p, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

static int put_utf8(Buf *b, unsigned cp) {
    char s[4];
    int n;
    if (cp < 0x80) { s[0] = (char)cp; n = 1; }
    else if (cp < 0x800) { s[0] = (char)(0xC0 | (cp >> 6)); s[1] = (char)(0x80 | (cp & 0x3F)); n = 2; }
    else if (cp < 0x10000) {
        s[0] = (char)(0xE0 | (cp >> 12)); s[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        s[2] = (char)(0x80 | (cp & 0x3F)); n = 3;
    } else {
        s[0] = (char)(0xF0 | (cp >> 18)); s[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        s[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); s[3] = (char)(0x80 | (cp & 0x3F)); n = 4;
    }
    return buf_put(b, s, n);
}

/* Eight ASCII digits at once (SWAR, as in Lemire's "Number Parsing at a Gigabyte per
 * Second"): a logprob's 16-18 digits are two or three loads, not a branch a digit. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define EIGHT_AT_ONCE 1
static inline uint64_t load8(const char *p) {
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline int eight_digits(uint64_t v) {  /* each byte '0'..'9' */
    return (((v & 0xF0F0F0F0F0F0F0F0ULL)
             | (((v + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4))
            == 0x3333333333333333ULL);
}

static inline uint64_t eight_value(uint64_t v) {  /* the first byte is the highest digit */
    v -= 0x3030303030303030ULL;
    v = v * 10 + (v >> 8);  /* pairs: 10a + b in every other byte */
    v = (((v & 0x000000FF000000FFULL) * 0x000F424000000064ULL)
         + (((v >> 16) & 0x000000FF000000FFULL) * 0x0000271000000001ULL)) >> 32;
    return v;
}

/* Eight bytes of a string's plain run: none a quote, a backslash or a control character
 * (the classic has-zero-byte tests; a byte >= 0x80, UTF-8, is plain).  A response's text is
 * then a load and three tests each eight bytes, not a branch a byte. */
static inline int eight_plain(uint64_t v) {
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t quote = v ^ (ones * '"'), slash = v ^ (ones * '\\');
    uint64_t found = ((quote - ones) & ~quote) | ((slash - ones) & ~slash)
                     | (v - ones * 0x20);
    return (found & ~v & highs) == 0;
}
#else
#define EIGHT_AT_ONCE 0
#endif

/* A JSON string at l->p (its opening quote): its str, or NULL when the line is not plain
 * (no error is left set). */
static PyObject *read_string(Line *l) {
    const char *start = ++l->p, *p = start;
    int escaped = 0;
    while (p < l->end) {
#if EIGHT_AT_ONCE
        while (l->end - p >= 8 && eight_plain(load8(p))) p += 8;
        if (p >= l->end) break;
#endif
        unsigned char c = (unsigned char)*p;
        if (c == '"') break;
        if (c < 0x20) return NULL;  /* a control character: invalid JSON */
        if (c == '\\') { escaped = 1; p += 2; continue; }
        p++;
    }
    if (p >= l->end) return NULL;
    l->p = p + 1;
    if (!escaped) {
        PyObject *s = PyUnicode_DecodeUTF8(start, p - start, "strict");
        if (s == NULL) PyErr_Clear();  /* invalid UTF-8: orjson refuses it, the caller reads */
        return s;
    }
    l->text.size = 0;
    for (const char *q = start; q < p;) {
        if (*q != '\\') {
            const char *run = q;
            while (q < p && *q != '\\') q++;
            if (buf_put(&l->text, run, q - run) < 0) { PyErr_Clear(); return NULL; }
            continue;
        }
        char e = q[1];
        char c;
        q += 2;
        switch (e) {
            case '"': c = '"'; break;
            case '\\': c = '\\'; break;
            case '/': c = '/'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'u': {
                unsigned cp, low;
                if (q + 4 > p || !hex4(q, &cp)) return NULL;
                q += 4;
                if (cp >= 0xDC00 && cp <= 0xDFFF) return NULL;  /* a lone low surrogate */
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    if (q + 6 > p || q[0] != '\\' || q[1] != 'u' || !hex4(q + 2, &low)
                        || low < 0xDC00 || low > 0xDFFF) return NULL;  /* a lone high one */
                    q += 6;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                }
                if (put_utf8(&l->text, cp) < 0) { PyErr_Clear(); return NULL; }
                continue;
            }
            default: return NULL;
        }
        if (buf_put(&l->text, &c, 1) < 0) { PyErr_Clear(); return NULL; }
    }
    PyObject *s = PyUnicode_DecodeUTF8(l->text.data, l->text.size, "strict");
    if (s == NULL) PyErr_Clear();
    return s;
}

/* 5^q for q in [-342, 308], each the high 128 bits of its binary expansion (hi, lo): set by
 * set_powers() from lines.py; until then every float goes through PyOS_string_to_double. */
#define POW5_LOW (-342)
#define POW5_HIGH 308
static uint64_t POW5[2 * (POW5_HIGH - POW5_LOW + 1)];
/* The line check (record.line_check): XXH3-64 of the line's bytes, shifted right once.  The
 * function is the xxhash package's own, handed over by address (set_hasher): the same hash
 * Python computes when it reads a line back, with no second copy of the algorithm here. */
typedef uint64_t (*Hasher)(const void *, size_t);
static Hasher line_hasher = NULL;

static int pow5_set = 0;

/* w * 10^q as a double, when the algorithm settles it: 1 (*out set), else 0. */
static int eisel_lemire(uint64_t w, int64_t q, double *out) {
    if (!pow5_set || w == 0 || q < POW5_LOW || q > POW5_HIGH) return 0;
    int lz = __builtin_clzll(w);
    w <<= lz;
    const uint64_t *power = &POW5[2 * (q - POW5_LOW)];
    unsigned __int128 first = (unsigned __int128)w * power[0];
    uint64_t high = (uint64_t)(first >> 64), low = (uint64_t)first;
    if ((high & 0x1FF) == 0x1FF) {  /* the first product may not settle it: the next word */
        unsigned __int128 second = (unsigned __int128)w * power[1];
        uint64_t carry = (uint64_t)(second >> 64);
        low += carry;
        if (carry > low) high++;
    }
    if (low == UINT64_MAX && !(q >= -27 && q <= 55)) return 0;  /* too close to call */
    int upperbit = (int)(high >> 63);
    int shift = upperbit + 64 - 52 - 3;
    uint64_t mantissa = high >> shift;
    int32_t power2 = (int32_t)(((152170 + 65536) * q) >> 16) + 63 + upperbit - lz + 1023;
    if (power2 <= 0) return 0;  /* a subnormal: float() reads it */
    if (low <= 1 && q >= -4 && q <= 23 && (mantissa & 3) == 1
        && (mantissa << shift) == high) mantissa &= ~(uint64_t)1;  /* halfway: to even */
    mantissa += mantissa & 1;
    mantissa >>= 1;
    if (mantissa >= ((uint64_t)2 << 52)) {
        mantissa = (uint64_t)1 << 52;
        power2++;
    }
    mantissa &= ~((uint64_t)1 << 52);
    if (power2 >= 0x7FF) return 0;  /* infinite: not plain */
    uint64_t bits = mantissa | ((uint64_t)power2 << 52);
    memcpy(out, &bits, sizeof bits);
    return 1;
}

static const double POW10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21,
                               1e22};

/* m * 10^scale as a double, exactly: Clinger's fast path when m fits 2^53 and the power
 * 10^22 (one correctly rounded operation), else Eisel and Lemire's algorithm; 0 when
 * neither settles it (read_number then asks float()). */
static inline int exact_double(uint64_t m, int64_t scale, double *out) {
    if (m <= (1ULL << 53) && scale >= -22 && scale <= 22) {
        double v = (double)m;
        *out = scale < 0 ? v / POW10[-scale] : v * POW10[scale];
        return 1;
    }
    return eisel_lemire(m, scale, out);
}

/* A float of the common form, [-]digits.digits with no exponent and at most 19 digits after
 * any leading zeros (a logprob's, a value's): 1 with *d set and l->p past it, read with no
 * bounds check a byte, when LOOKAHEAD bytes follow l->p (it reads at most 59); else 0, l->p
 * unmoved, and read_number's general reading settles it as it settles every other number.
 * Both end in the same step (exact_double): the same bits (tests/loaders/
 * test_index_lines.py reads every number both ways).  A long run's numbers are 45 % of its
 * scan; this reads them in about 30 % fewer instructions. */
#define LOOKAHEAD 64
static inline int read_common_float(Line *l, double *d) {
#if EIGHT_AT_ONCE
    const char *p = l->p;
    if (l->end - p < LOOKAHEAD) return 0;
    int negative = *p == '-';
    p += negative;
    const char *start = p;
    uint64_t m = 0;
    if (*p == '0') p++;
    else
        while ((unsigned char)(*p - '0') < 10 && p - start < 20) m = m * 10 + (uint64_t)(*p++ - '0');
    Py_ssize_t whole = p - start, significant = m ? whole : 0;
    if (whole == 0 || *p != '.') return 0;
    const char *f = ++p;
    if (m == 0)  /* a small number's leading zeros: no digit of m */
        while (*p == '0' && p - f < 16) p++;
    const char *g = p;
    for (int round = 0; round < 2 && eight_digits(load8(p)); round++, p += 8)
        m = m * 100000000ULL + eight_value(load8(p));
    while ((unsigned char)(*p - '0') < 10 && p - g < 20) m = m * 10 + (uint64_t)(*p++ - '0');
    Py_ssize_t frac = p - f;
    significant += p - g;
    if (frac == 0 || significant > 19 || (unsigned char)(*p - '0') < 10
        || *p == 'e' || *p == 'E') return 0;  /* m may have overflowed: not used */
    double v;
    if (!exact_double(m, -frac, &v)) return 0;
    *d = negative ? -v : v;
    l->p = p;
    return 1;
#else
    return 0;
#endif
}

/* A JSON number at l->p: 1 an int (*i), 2 a float (*d), 0 not plain (bad grammar, an
 * int outside int64, a float that is not finite). */
static int read_number(Line *l, int64_t *i, double *d) {
    if (read_common_float(l, d)) return 2;
    const char *s = l->p, *p = s;
    int negative = 0, digits = 0, frac_digits = 0, is_float = 0;
    uint64_t mantissa = 0;
    int overflow = 0;
    if (p < l->end && *p == '-') { negative = 1; p++; }
    if (p >= l->end) return 0;
    if (*p == '0') { p++; digits = 1; }
    else if (*p >= '1' && *p <= '9') {
        while (p < l->end && *p >= '0' && *p <= '9') {
            if (mantissa > (UINT64_MAX - 9) / 10) overflow = 1;
            else mantissa = mantissa * 10 + (uint64_t)(*p - '0');
            p++; digits++;
        }
    } else return 0;
    if (p < l->end && *p == '.') {
        is_float = 1; p++;
        const char *f = p;
#if EIGHT_AT_ONCE
        /* mantissa < 10^held: eight more digits stay below 10^19 < 2^64 while held <= 11 */
        int held = mantissa ? digits : 0;
        while (!overflow && held <= 11 && l->end - p >= 8 && eight_digits(load8(p))) {
            mantissa = mantissa * 100000000ULL + eight_value(load8(p));
            p += 8;
            held += 8;
        }
#endif
        while (p < l->end && *p >= '0' && *p <= '9') {
            if (mantissa > (UINT64_MAX - 9) / 10) overflow = 1;
            else mantissa = mantissa * 10 + (uint64_t)(*p - '0');
            p++;
        }
        frac_digits = (int)(p - f);
        if (frac_digits == 0) return 0;
    }
    int exp10 = 0;
    if (p < l->end && (*p == 'e' || *p == 'E')) {
        is_float = 1; p++;
        int exp_negative = 0, exp_digits = 0;
        if (p < l->end && (*p == '+' || *p == '-')) { exp_negative = *p == '-'; p++; }
        while (p < l->end && *p >= '0' && *p <= '9') {
            if (exp10 < 100000) exp10 = exp10 * 10 + (*p - '0');
            p++; exp_digits++;
        }
        if (exp_digits == 0) return 0;
        if (exp_negative) exp10 = -exp10;
    }
    l->p = p;
    if (!is_float) {
        /* int64 without its lowest value: is_plain's step range, and one rule for all */
        if (overflow || mantissa > (uint64_t)INT64_MAX) return 0;
        *i = negative ? (int64_t)(0 - mantissa) : (int64_t)mantissa;
        return 1;
    }
    double v;
    if (!overflow && exact_double(mantissa, exp10 - frac_digits, &v)) {
        *d = negative ? -v : v;
        return 2;
    }
    char tmp[64];
    Py_ssize_t n = p - s;
    if (n >= (Py_ssize_t)sizeof(tmp)) return 0;  /* a long literal: orjson's own reading */
    memcpy(tmp, s, n);
    tmp[n] = 0;
    v = PyOS_string_to_double(tmp, NULL, NULL);
    if (v == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
    if (!isfinite(v)) return 0;
    *d = v;
    return 2;
}

/* Equal bytes, inline: a key's name or a token is a few bytes, where a call to memcmp costs
 * more than the compare (memcmp's calls were 3 % of a long run's scan). */
static inline int same_bytes(const char *a, const char *b, Py_ssize_t n) {
    for (; n >= 8; a += 8, b += 8, n -= 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y) return 0;
    }
    for (; n > 0; a++, b++, n--)
        if (*a != *b) return 0;
    return 1;
}

static int in_tuple(PyObject *tuple, const char *name, Py_ssize_t len) {
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(tuple); k++) {
        Py_ssize_t n;
        const char *s = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(tuple, k), &n);
        if (s != NULL && n == len && memcmp(s, name, len) == 0) return 1;
    }
    return 0;
}

/* The run's key of these bytes, added when new (kind 0 until its first value); -1 when the
 * run holds too many keys or the name is no UTF-8 or "messages" (not is_plain): the line is
 * then not plain.  A name is checked once, when first seen: later lines match its bytes.
 * `guess` (the key after the line's previous one) is tried first: a trainer writes its keys
 * in one order, so a key costs one compare, not a walk of the run's keys. */
static int key_of(Run *r, const char *name, Py_ssize_t len, int guess) {
    if (guess < r->count && r->keys[guess].len == len
        && same_bytes(r->keys[guess].name, name, len)) return guess;
    for (int k = 0; k < r->count; k++)
        if (r->keys[k].len == len && same_bytes(r->keys[k].name, name, len)) return k;
    if (r->count == MAX_KEYS || (len == 8 && memcmp(name, "messages", 8) == 0)) return -1;
    PyObject *decoded = PyUnicode_DecodeUTF8(name, len, "strict");
    if (decoded == NULL) { PyErr_Clear(); return -1; }
    Py_DECREF(decoded);
    Key *key = &r->keys[r->count];
    memset(key, 0, sizeof(*key));
    key->name = name;
    key->len = len;
    key->list_kind = in_tuple(r->number_keys, name, len) ? NUMBERS
                     : (in_tuple(r->string_keys, name, len) ? STRINGS : 0);
    key->is_step = len == 4 && memcmp(name, "step", 4) == 0;
    return r->count++;
}

/* A key at l->p (its opening quote), without escapes or control characters: its bytes in
 * *name / *len, 1; else 0 (orjson reads such a line). */
static int read_key(Line *l, const char **name, Py_ssize_t *len) {
    const char *start = ++l->p, *p = start;
    while (p < l->end && *p != '"') {
        if ((unsigned char)*p < 0x20 || *p == '\\') return 0;
        p++;
    }
    if (p >= l->end) return 0;
    *name = start;
    *len = p - start;
    l->p = p + 1;
    return 1;
}

/* The key `guess` when the line's next key (at its opening quote) is it: its name's bytes
 * and a closing quote, read past; else -1, l->p unmoved.  A known name holds no quote, no
 * backslash and no control character, so these bytes are that key, with no byte-by-byte
 * read of them. */
static inline int expected_key(Run *r, Line *l, int guess) {
    if (guess >= r->count) return -1;
    const Key *key = &r->keys[guess];
    const char *start = l->p + 1;
    if (l->end - start <= key->len || start[key->len] != '"'
        || !same_bytes(key->name, start, key->len)) return -1;
    l->p = start + key->len + 1;
    return guess;
}

static void unstage(Line *l) {
    for (int s = 0; s < l->nstaged; s++) Py_XDECREF(l->staged[s].object);
    l->nstaged = 0;
}

/* A string in a token list at l->p (its opening quote) read past, as read_string reads it:
 * 1 when it is a string orjson reads alike, 0 not.  The list is kept as its bytes (a hot
 * token's strings are read again by orjson when a digest wants them: a few a group), so
 * no str is kept; but raw bytes read before in this scan are known good without a decode. */
static int check_token(Run *r, Line *l) {
    const char *raw = l->p + 1, *q = raw;
    while (q < l->end && q - raw <= TOKEN_MAX && *q != '"') q += *q == '\\' ? 2 : 1;
    Py_ssize_t len = q - raw;
    int cached = q < l->end && *q == '"' && len <= TOKEN_MAX;
    if (cached && r->tokens == NULL
        && (r->tokens = PyMem_Calloc(TOKEN_SLOTS, sizeof(Token))) == NULL) cached = 0;
    Token *slot = NULL;
    if (cached) {
        uint64_t h = 1469598103934665603ULL;  /* FNV-1a */
        for (Py_ssize_t i = 0; i < len; i++) h = (h ^ (unsigned char)raw[i]) * 1099511628211ULL;
        slot = &r->tokens[h & (TOKEN_SLOTS - 1)];
        if (slot->good && slot->len == len && same_bytes(slot->raw, raw, len)) {
            l->p = q + 1;
            return 1;
        }
    }
    PyObject *s = read_string(l);
    if (s == NULL) return 0;
    Py_DECREF(s);
    if (slot != NULL) {
        slot->good = 1;
        slot->raw = raw;
        slot->len = len;
    }
    return 1;
}

/* A list value of key k: numbers (a number key) or strings (a string key), staged.  1 read,
 * 0 not plain. */
static int read_list(Run *r, Line *l, int k, Staged *st) {
    int numbers = r->keys[k].list_kind == NUMBERS, strings = r->keys[k].list_kind == STRINGS;
    if (!numbers && !strings) return 0;
    st->open = l->p;  /* its [ */
    l->p++;
    skip_ws(l);
    st->kind = numbers ? NUMBERS : STRINGS;
    st->first = l->numbers.size / (Py_ssize_t)sizeof(double);
    st->count = 0;
    if (l->p < l->end && *l->p == ']') { st->close = ++l->p; return 1; }
    for (;;) {
        skip_ws(l);
        if (l->p >= l->end) return 0;
        if (numbers) {
            double v;
            int64_t iv;
            if (*l->p == 'n' && l->end - l->p >= 4 && memcmp(l->p, "null", 4) == 0) {
                v = NAN;  /* as np.fromiter reads None */
                l->p += 4;
            } else {
                int got = read_number(l, &iv, &v);
                if (got == 0) return 0;
                if (got == 1) v = (double)iv;
            }
            if (buf_put(&l->numbers, &v, sizeof v) < 0) { PyErr_Clear(); return 0; }
        } else {
            if (*l->p != '"' || !check_token(r, l)) return 0;
        }
        st->count++;
        skip_ws(l);
        if (l->p < l->end && *l->p == ',') { l->p++; continue; }
        if (l->p < l->end && *l->p == ']') { st->close = ++l->p; return 1; }
        return 0;
    }
}

/* A string value of `key`: the str of its last one when the raw bytes repeat (a GRPO group's
 * lines carry one prompt and one answer: a memcmp, not a decode, a new str and its hash).
 * Equal bytes before a quote end the string where they ended it the last time. */
static PyObject *read_value_string(Key *key, Line *l) {
    const char *raw = l->p + 1;
    Py_ssize_t n = key->last_len;
    if (key->last != NULL && l->end - raw > n && raw[n] == '"'
        && memcmp(raw, key->last_raw, (size_t)n) == 0) {
        l->p = raw + n + 1;
        return Py_NewRef(key->last);
    }
    PyObject *s = read_string(l);
    if (s != NULL) {
        Py_XSETREF(key->last, Py_NewRef(s));
        key->last_raw = raw;
        key->last_len = l->p - 1 - raw;
    }
    return s;
}

/* A scalar value, staged as the object orjson makes of it.  1 read, 0 not plain. */
static int read_scalar(Key *key, Line *l, Staged *st) {
    const char *p = l->p;
    st->kind = SCALAR;
    if (*p == '"') {
        st->object = read_value_string(key, l);
        return st->object != NULL;
    }
    if (l->end - p >= 4 && memcmp(p, "true", 4) == 0) { st->object = Py_NewRef(Py_True); l->p += 4; return 1; }
    if (l->end - p >= 5 && memcmp(p, "false", 5) == 0) { st->object = Py_NewRef(Py_False); l->p += 5; return 1; }
    if (l->end - p >= 4 && memcmp(p, "null", 4) == 0) { st->object = Py_NewRef(Py_None); l->p += 4; return 1; }
    int64_t i;
    double d;
    int got = read_number(l, &i, &d);
    if (got == 0) return 0;
    st->object = got == 1 ? PyLong_FromLongLong(i) : PyFloat_FromDouble(d);
    if (st->object == NULL) { PyErr_Clear(); return 0; }
    return 1;
}

/* One line into the staging, read up to its newline (l->end may lie past it: no plain value
 * holds a raw newline, and blanks are skipped up to one only): 1 plain, l->p at the newline;
 * 0 not.  The step must be an int (is_plain's rule) and no key may change kind within the
 * run (a run's columns keep one kind each). */
static int read_line(Run *r, Line *l) {
    unstage(l);
    l->numbers.size = 0;
    skip_ws(l);
    if (l->p >= l->end || *l->p != '{') return 0;
    l->p++;
    skip_ws(l);
    int step_seen = 0, guess = 0;
    uint64_t seen = 0;  /* a bit a key of the run (MAX_KEYS 64) */
    if (l->p < l->end && *l->p == '}') return 0;  /* {} has no step */
    for (;;) {
        skip_ws(l);
        if (l->p >= l->end || *l->p != '"') return 0;
        int k = expected_key(r, l, guess);
        if (k < 0) {
            const char *name;
            Py_ssize_t len;
            if (!read_key(l, &name, &len)) return 0;
            k = key_of(r, name, len, guess);
            if (k < 0) return 0;
        }
        guess = k + 1;
        if (seen >> k & 1) return 0;  /* twice */
        seen |= (uint64_t)1 << k;
        skip_ws(l);
        if (l->p >= l->end || *l->p != ':') return 0;
        l->p++;
        skip_ws(l);
        if (l->p >= l->end) return 0;
        Staged *st = &l->staged[l->nstaged];
        memset(st, 0, sizeof(*st));
        st->key = k;
        int ok = *l->p == '[' ? read_list(r, l, k, st)
                 : (*l->p == '{' ? 0 : read_scalar(&r->keys[k], l, st));
        if (!ok) { Py_CLEAR(st->object); return 0; }
        l->nstaged++;
        if (r->keys[k].kind != 0 && r->keys[k].kind != st->kind) return 0;
        if (r->keys[k].is_step) {
            if (!PyLong_CheckExact(st->object)) return 0;
            step_seen = 1;
        }
        skip_ws(l);
        if (l->p < l->end && *l->p == ',') { l->p++; continue; }
        if (l->p < l->end && *l->p == '}') { l->p++; break; }
        return 0;
    }
    skip_ws(l);  /* then the line's newline, where the scan finds the line's end */
    return step_seen && l->p < l->end && *l->p == '\n';
}

/* Pad a key's column to `count` samples with the missing marker (or length -1). */
static int pad(Run *r, Key *key, Py_ssize_t count) {
    for (; key->filled < count; key->filled++) {
        key->padded++;
        if (key->kind == NUMBERS || key->kind == STRINGS) {
            int64_t none[2] = {-1, 0};
            if (buf_put(&key->lengths, none, sizeof none[0]) < 0) return -1;
            if (key->kind == STRINGS && buf_put(&key->spans, none, sizeof none) < 0) return -1;
        } else if (PyList_Append(key->column, r->missing) < 0) return -1;
    }
    return 0;
}

/* The staged line as sample `n` of the run (data: where the scan's offsets count from).  0,
 * or -1 with an error set. */
static int commit(Run *r, Line *l, Py_ssize_t n, const char *data) {
    for (int s = 0; s < l->nstaged; s++) {
        Staged *st = &l->staged[s];
        Key *key = &r->keys[st->key];
        if (key->kind == 0) {
            key->kind = st->kind;
            if (st->kind == SCALAR && (key->column = PyList_New(0)) == NULL) return -1;
        }
        if (pad(r, key, n) < 0) return -1;
        int64_t count = st->count, span[2] = {st->open - data, st->close - data};
        if (st->kind == NUMBERS) {
            if (buf_put(&key->values, l->numbers.data + st->first * sizeof(double),
                        st->count * (Py_ssize_t)sizeof(double)) < 0
                || buf_put(&key->lengths, &count, sizeof count) < 0) return -1;
        } else if (st->kind == STRINGS) {
            if (buf_put(&key->lengths, &count, sizeof count) < 0
                || buf_put(&key->spans, span, sizeof span) < 0) return -1;
        } else if (PyList_Append(key->column, st->object) < 0) return -1;
        key->filled = n + 1;
    }
    unstage(l);
    return 0;
}

/* The buffer's bytes object, cut to its size, handed over (the buffer is left empty). */
static PyObject *bytes_of(Buf *b) {
    if (b->held == NULL) return PyBytes_FromStringAndSize("", 0);
    PyObject *out = b->held;
    b->held = NULL;
    b->data = NULL;
    if (b->size != b->cap && _PyBytes_Resize(&out, b->size) < 0) out = NULL;
    b->size = b->cap = 0;
    return out;
}

/* The run's columns: {key: list} for scalars, {key: (float64 bytes, int64 lengths bytes)}
 * for number lists, {key: (int64 lengths bytes, int64 spans bytes, None)} for token lists
 * (each list's start and end in the data, a pair a sample: 0 0 where missing), every column
 * padded to n samples. */
static PyObject *columns_of(Run *r, Py_ssize_t n) {
    PyObject *out = PyDict_New();
    if (out == NULL) return NULL;
    for (int k = 0; k < r->count; k++) {
        Key *key = &r->keys[k];
        if (key->kind == 0) continue;  /* seen only on the line that ended the run */
        if (pad(r, key, n) < 0) { Py_DECREF(out); return NULL; }
        PyObject *name = PyUnicode_DecodeUTF8(key->name, key->len, "strict");
        PyObject *value = key->kind == NUMBERS
            ? Py_BuildValue("(NN)", bytes_of(&key->values), bytes_of(&key->lengths))
            : key->kind == STRINGS
            ? Py_BuildValue("(NNO)", bytes_of(&key->lengths), bytes_of(&key->spans), Py_None)
            : Py_NewRef(key->column);
        if (name == NULL || value == NULL || PyDict_SetItem(out, name, value) < 0) {
            Py_XDECREF(name); Py_XDECREF(value); Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(name);
        Py_DECREF(value);
    }
    return out;
}

/* The names of the run's keys some sample lacks: a column without gaps is used as it is. */
static PyObject *gaps_of(Run *r) {
    PyObject *out = PySet_New(NULL);
    for (int k = 0; out != NULL && k < r->count; k++) {
        Key *key = &r->keys[k];
        if (key->kind == 0 || key->padded == 0) continue;
        PyObject *name = PyUnicode_DecodeUTF8(key->name, key->len, "strict");
        if (name == NULL || PySet_Add(out, name) < 0) Py_CLEAR(out);
        Py_XDECREF(name);
    }
    return out;
}

static void run_free(Run *r) {
    for (int k = 0; k < r->count; k++) {
        Py_XDECREF(r->keys[k].column);
        Py_XDECREF(r->keys[k].last);
        buf_free(&r->keys[k].values);
        buf_free(&r->keys[k].lengths);
        buf_free(&r->keys[k].spans);
    }
    PyMem_Free(r->tokens);
}

/* After PROJECT_AT samples, every growing column is given room for the samples the rest of
 * the scan is likely to hold (its bytes so far, scaled by the bytes left): a few large
 * allocations, not a copy at each doubling (the realloc copies were 1-2 % of a long run's
 * build).  A column that outgrows its room still doubles. */
#define PROJECT_AT 256
static int scaled(Buf *b, double scale) {  /* room for `scale` times what it holds */
    return b->size ? buf_reserve(b, (Py_ssize_t)(b->size * scale)) : 0;
}

static int project(Run *r, Buf **line_bufs, int count, Py_ssize_t taken, Py_ssize_t left,
                   double most) {
    if (taken <= 0 || left <= taken) return 0;
    double scale = 1.05 * (double)left / (double)taken;
    if (scale > most) scale = most;  /* the scan stops at max_samples */
    for (int k = 0; k < r->count; k++)
        if (scaled(&r->keys[k].values, scale) < 0 || scaled(&r->keys[k].lengths, scale) < 0
            || scaled(&r->keys[k].spans, scale) < 0) return -1;
    for (int b = 0; b < count; b++)
        if (scaled(line_bufs[b], scale) < 0) return -1;
    return 0;
}

static int is_blank(const char *p, const char *end) {  /* bytes.strip()'s whitespace */
    for (; p < end; p++)
        if (!(*p == ' ' || *p == '\t' || *p == '\r' || *p == '\x0b' || *p == '\x0c')) return 0;
    return 1;
}

/* scan(data, pos, max_samples, max_bytes, missing, number_keys, string_keys) -> None | (end,
 * lines, starts, ends, line_numbers, columns): the plain lines from pos on, until a line
 * that is not plain or has no newline, max_samples samples or max_bytes of lines.  starts
 * and ends: int64 bytes of each sample's line span; line_numbers: its line among the lines
 * read (from 0; blank lines are read and counted, and make no sample).  None when the line at
 * pos is not plain: the caller reads it. */
static PyObject *scan(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, max_samples, max_bytes;
    Run r;
    memset(&r, 0, sizeof r);
    if (!PyArg_ParseTuple(args, "y*nnnOO!O!", &view, &pos, &max_samples, &max_bytes,
                          &r.missing, &PyTuple_Type, &r.number_keys, &PyTuple_Type,
                          &r.string_keys)) return NULL;
    const char *data = view.buf, *end = data + view.len;
    Line l;
    memset(&l, 0, sizeof l);
    Buf starts = {0}, ends = {0}, numbers = {0}, checks = {0};
    Py_ssize_t n = 0, lines = 0, at = pos, taken = 0;
    PyObject *out = NULL;
    while (at < view.len && n < max_samples && taken < max_bytes) {
        const char *line = data + at, *nl;
        /* The line is parsed up to the data's end: no value of a plain line holds a raw
         * newline, so its parse stops at the line's own, found without a memchr a line. */
        l.p = line;
        l.end = end;
        if (read_line(&r, &l)) {
            nl = l.p;
            int64_t s = at, e = nl - data, number = lines;
            if (commit(&r, &l, n, data) < 0 || buf_put(&starts, &s, sizeof s) < 0
                || buf_put(&ends, &e, sizeof e) < 0 || buf_put(&numbers, &number, sizeof number) < 0)
                goto done;
            if (line_hasher != NULL) {
                int64_t check = (int64_t)(line_hasher(line, (size_t)(nl - line)) >> 1);
                if (buf_put(&checks, &check, sizeof check) < 0) goto done;
            }
            n++;
            taken += nl - line;
            if (n == PROJECT_AT) {
                Buf *line_bufs[4] = {&starts, &ends, &numbers, &checks};
                Py_ssize_t left = view.len - pos < max_bytes ? view.len - pos : max_bytes;
                if (project(&r, line_bufs, 4, taken, left, 1.05 * max_samples / n) < 0) goto done;
            }
        } else {
            unstage(&l);
            nl = memchr(line, '\n', end - line);
            /* a last line without newline: the caller's rules; a line not plain ends the run */
            if (nl == NULL || !is_blank(line, nl)) break;
        }
        lines++;
        at = nl + 1 - data;
    }
    if (lines == 0) {
        out = Py_NewRef(Py_None);
        goto done;
    }
    PyObject *cols = columns_of(&r, n);
    if (cols != NULL)
        out = Py_BuildValue("(nnNNNNNN)", at, lines, bytes_of(&starts), bytes_of(&ends),
                            bytes_of(&numbers), cols, line_hasher != NULL ? bytes_of(&checks)
                            : Py_NewRef(Py_None), gaps_of(&r));
done:
    unstage(&l);
    run_free(&r);
    buf_free(&l.text);
    buf_free(&l.numbers);
    buf_free(&starts);
    buf_free(&ends);
    buf_free(&numbers);
    buf_free(&checks);
    PyBuffer_Release(&view);
    return out;
}

/* String `pos` of the token list whose bytes are buf[start:end] ([ to ], every string in it
 * checked by the scan), read as read_string reads it; the strings before it are skipped, not
 * made.  NULL (no error set) where the list holds no such string. */
static PyObject *token_in(const char *buf, Py_ssize_t len, Py_ssize_t start, Py_ssize_t end,
                          Py_ssize_t pos) {
    PyObject *out = NULL;
    Line l;
    memset(&l, 0, sizeof l);
    if (start < 0 || end > len || end - start < 2 || pos < 0 || buf[start] != '[') return NULL;
    l.p = buf + start + 1;
    l.end = buf + end - 1;  /* its ] */
    for (Py_ssize_t k = 0;; k++) {
        skip_ws(&l);
        if (l.p >= l.end || *l.p != '"') break;
        if (k == pos) {
            out = read_string(&l);
            break;
        }
        const char *q = l.p + 1;
        while (q < l.end && *q != '"') q += *q == '\\' ? 2 : 1;
        if (q >= l.end) break;
        l.p = q + 1;
        skip_ws(&l);
        if (l.p >= l.end || *l.p != ',') break;
        l.p++;
    }
    buf_free(&l.text);
    return out;
}

/* tokens_at(data, starts, ends, positions) -> list of str | None: token_in's string of each
 * (start, end, pos), the three int64 bytes of as many: a part's hot tokens in one call, one
 * string of each list, not the list.  None where the list holds no such string (the caller
 * then reads that list with orjson). */
static PyObject *tokens_at(PyObject *self, PyObject *args) {
    Py_buffer view, starts, ends, positions;
    if (!PyArg_ParseTuple(args, "y*y*y*y*", &view, &starts, &ends, &positions)) return NULL;
    PyObject *out = NULL;
    Py_ssize_t count = starts.len / 8;
    if (ends.len != starts.len || positions.len != starts.len || starts.len % 8) {
        PyErr_SetString(PyExc_ValueError, "starts, ends and positions: as many int64 each");
        goto done;
    }
    out = PyList_New(count);
    if (out == NULL) goto done;
    const int64_t *s = starts.buf, *e = ends.buf, *at = positions.buf;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *got = token_in(view.buf, view.len, s[i], e[i], at[i]);
        PyList_SET_ITEM(out, i, got != NULL ? got : Py_NewRef(Py_None));
    }
done:
    PyBuffer_Release(&view); PyBuffer_Release(&starts); PyBuffer_Release(&ends);
    PyBuffer_Release(&positions);
    return out;
}

/* flat_sums(values, lengths, n) -> float64 bytes: each sample's first n[i] values summed in
 * order from 0.0 (builtin sum's order on 3.11; NaN where it has no list or n is 0). */
static PyObject *flat_sums(PyObject *self, PyObject *args) {
    Py_buffer values, lengths, heads;
    if (!PyArg_ParseTuple(args, "y*y*y*", &values, &lengths, &heads)) return NULL;
    const double *v = values.buf;
    const int64_t *len = lengths.buf, *n = heads.buf;
    Py_ssize_t count = lengths.len / (Py_ssize_t)sizeof(int64_t);
    PyObject *out = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(double));
    if (out != NULL) {
        double *sums = (double *)PyBytes_AS_STRING(out);
        Py_ssize_t at = 0;
        for (Py_ssize_t i = 0; i < count; i++) {
            int64_t k = n[i] < len[i] ? n[i] : len[i];
            if (len[i] < 0 || k <= 0) sums[i] = NAN;
            else {
                double total = 0.0;
                for (int64_t j = 0; j < k; j++) total += v[at + j];
                sums[i] = total;
            }
            if (len[i] > 0) at += len[i];
        }
    }
    PyBuffer_Release(&values);
    PyBuffer_Release(&lengths);
    PyBuffer_Release(&heads);
    return out;
}

/* set_powers(bytes): the 651 (hi, lo) pairs of POW5, little-endian uint64s. */
static PyObject *set_powers(PyObject *self, PyObject *args) {
    Py_buffer table;
    if (!PyArg_ParseTuple(args, "y*", &table)) return NULL;
    if (table.len != (Py_ssize_t)sizeof(POW5)) {
        PyBuffer_Release(&table);
        PyErr_SetString(PyExc_ValueError, "a table of 651 pairs of uint64");
        return NULL;
    }
    memcpy(POW5, table.buf, sizeof(POW5));
    pow5_set = 1;
    PyBuffer_Release(&table);
    Py_RETURN_NONE;
}

/* set_hasher(address, probe) -> int: use the XXH3-64 function at this address for the line
 * checks (0: none), and give its hash of `probe`, which the caller compares with its own. */
static PyObject *set_hasher(PyObject *self, PyObject *args) {
    unsigned long long address;
    Py_buffer probe;
    if (!PyArg_ParseTuple(args, "Ky*", &address, &probe)) return NULL;
    line_hasher = (Hasher)(uintptr_t)address;
    uint64_t got = line_hasher != NULL ? line_hasher(probe.buf, (size_t)probe.len) : 0;
    PyBuffer_Release(&probe);
    return PyLong_FromUnsignedLongLong(got);
}

/* parse_number(text, pad=0) -> int | float | None: the number read_number reads, None when
 * it is not plain or not the whole text.  With `pad`, the text is read followed by that many
 * "]": as in a number list with the rest of its line after it (read_common_float's reading),
 * where without it only the general reading can read it (for tests: every float against
 * float(), both ways). */
static PyObject *parse_number(PyObject *self, PyObject *args) {
    Py_buffer text;
    Py_ssize_t pad = 0;
    if (!PyArg_ParseTuple(args, "y*|n", &text, &pad)) return NULL;
    char *copy = pad > 0 ? PyMem_Malloc(text.len + pad) : NULL;
    if (pad > 0 && copy == NULL) { PyBuffer_Release(&text); return PyErr_NoMemory(); }
    if (copy != NULL) {
        memcpy(copy, text.buf, text.len);
        memset(copy + text.len, ']', pad);
    }
    Line l;
    memset(&l, 0, sizeof l);
    l.p = copy != NULL ? copy : text.buf;
    const char *stop = l.p + text.len;
    l.end = stop + (pad > 0 ? pad : 0);
    int64_t i;
    double d;
    int got = read_number(&l, &i, &d);
    int whole = l.p == stop;
    PyMem_Free(copy);
    PyBuffer_Release(&text);
    if (got == 0 || !whole) Py_RETURN_NONE;
    return got == 1 ? PyLong_FromLongLong(i) : PyFloat_FromDouble(d);
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "plain lines from pos on, as columns"},
    {"set_powers", set_powers, METH_VARARGS, "the powers of five the float parser uses"},
    {"set_hasher", set_hasher, METH_VARARGS, "the XXH3-64 function the line checks use"},
    {"parse_number", parse_number, METH_VARARGS, "one JSON number, as scan reads it"},
    {"tokens_at", tokens_at, METH_VARARGS, "one string of each of many token lists"},
    {"flat_sums", flat_sums, METH_VARARGS, "each sample's first n values summed in order"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_lines", NULL, -1, methods};

PyMODINIT_FUNC PyInit__lines(void) {
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddStringConstant(m, "SOURCE", KERNEL_SOURCE) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
