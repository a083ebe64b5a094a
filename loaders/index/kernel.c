/* The index build's per-sample loops in C: what is a Python loop over samples in
 * loaders/index/kernel.py, done here over the parsed batch without a bytecode a value.
 *
 * Every function gives exactly what its Python twin gives, or None where a value is not of
 * the plain kinds it knows (float, int, bool, None, list, str): the caller then takes the
 * Python path, which reads that value as it always has.  So a build with this module and one
 * without it index every dump to the same numbers (tests/test_index_kernel.py).
 *
 * Built by scripts/build_kernel.py (start.sh and tests/run.sh call it) with
 * -DKERNEL_SOURCE="<sha256 of this file>": kernel.py uses the module only when that matches
 * the source beside it, so an edit here never runs stale code.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#ifndef KERNEL_SOURCE
#define KERNEL_SOURCE "unknown"
#endif

/* ---- float arrays ------------------------------------------------------------------- */

/* One parsed JSON value as np.fromiter(..., np.float64) reads it: 1 plain, 0 odd (the caller
 * falls back to Python), -1 error set. */
static int as_double(PyObject *item, double *out) {
    if (PyFloat_CheckExact(item)) {
        *out = PyFloat_AS_DOUBLE(item);
        return 1;
    }
    if (item == Py_None) {
        *out = NAN;
        return 1;
    }
    if (PyLong_CheckExact(item) || PyBool_Check(item)) {  /* float(v), correctly rounded */
        double v = PyLong_AsDouble(item);
        if (v == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();  /* too large for a double: Python's path names it */
            return 0;
        }
        *out = v;
        return 1;
    }
    return 0;
}

/* A bytes object of count float64s to fill (at: its first), or NULL with an error set. */
static PyObject *float64s(Py_ssize_t count, double **at) {
    PyObject *out = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(double));
    if (out != NULL) *at = (double *)PyBytes_AS_STRING(out);
    return out;
}

/* The (parts, lengths) arguments: two lists of one length; 0, or -1 with an error set. */
static int parse_pair(PyObject *args, PyObject **parts, PyObject **lengths) {
    if (!PyArg_ParseTuple(args, "OO", parts, lengths)) return -1;
    if (!PyList_CheckExact(*parts) || !PyList_CheckExact(*lengths)) {
        PyErr_SetString(PyExc_TypeError, "parts and lengths must be lists");
        return -1;
    }
    if (PyList_GET_SIZE(*parts) != PyList_GET_SIZE(*lengths)) {
        PyErr_SetString(PyExc_ValueError, "parts and lengths differ in length");
        return -1;
    }
    return 0;
}

/* flat_heads(parts, lengths) -> bytes | None: the first lengths[i] numbers of every list in
 * parts, end to end as float64 (kl_columns._flat's fromiter over its heads). */
static PyObject *flat_heads(PyObject *self, PyObject *args) {
    PyObject *parts, *lengths;
    if (parse_pair(args, &parts, &lengths) < 0) return NULL;
    Py_ssize_t count = PyList_GET_SIZE(parts), total = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *part = PyList_GET_ITEM(parts, i);
        Py_ssize_t n = PyLong_AsSsize_t(PyList_GET_ITEM(lengths, i));
        if (n < 0 && PyErr_Occurred()) return NULL;
        if (!PyList_CheckExact(part) || n < 0 || PyList_GET_SIZE(part) < n) Py_RETURN_NONE;
        total += n;
    }
    double *at;
    PyObject *out = float64s(total, &at);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *part = PyList_GET_ITEM(parts, i);
        Py_ssize_t n = PyLong_AsSsize_t(PyList_GET_ITEM(lengths, i));
        for (Py_ssize_t j = 0; j < n; j++) {
            int kind = as_double(PyList_GET_ITEM(part, j), at++);
            if (kind <= 0) {
                Py_DECREF(out);
                if (kind < 0) return NULL;
                Py_RETURN_NONE;
            }
        }
    }
    return out;
}

/* head_sums(parts, lengths) -> bytes | None: sum(part[:n], 0.0) of every list (NaN where
 * the part is no list or n is 0), as builtin sum adds on the interpreter it is built for
 * (field_columns._plain_sums).  None where a value is not a float or a machine-size int. */
static PyObject *head_sums(PyObject *self, PyObject *args) {
    PyObject *parts, *lengths;
    if (parse_pair(args, &parts, &lengths) < 0) return NULL;
#if PY_VERSION_HEX >= 0x030C0000
    Py_RETURN_NONE;  /* 3.12's sum compensates its rounding: Python's path stays the rule */
#else
    Py_ssize_t count = PyList_GET_SIZE(parts);
    double *at;
    PyObject *out = float64s(count, &at);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *part = PyList_GET_ITEM(parts, i);
        Py_ssize_t n = PyLong_AsSsize_t(PyList_GET_ITEM(lengths, i));
        if (n == -1 && PyErr_Occurred()) { Py_DECREF(out); return NULL; }
        if (!PyList_CheckExact(part) || n <= 0) { at[i] = NAN; continue; }
        if (PyList_GET_SIZE(part) < n) n = PyList_GET_SIZE(part);
        double total = 0.0;
        for (Py_ssize_t j = 0; j < n; j++) {
            PyObject *item = PyList_GET_ITEM(part, j);
            if (PyFloat_CheckExact(item)) { total += PyFloat_AS_DOUBLE(item); continue; }
            if (PyLong_Check(item)) {
                int overflow;
                long value = PyLong_AsLongAndOverflow(item, &overflow);
                if (!overflow && !(value == -1 && PyErr_Occurred())) {
                    total += (double)value;
                    continue;
                }
                PyErr_Clear();
            }
            Py_DECREF(out);
            Py_RETURN_NONE;
        }
        at[i] = total;
    }
    return out;
#endif
}

/* ---- fields ------------------------------------------------------------------------- */

/* column(objs, key) -> list | None: [o.get(key) for o in objs]; None when one is not a dict. */
static PyObject *column(PyObject *self, PyObject *args) {
    PyObject *objs, *key;
    if (!PyArg_ParseTuple(args, "O!O", &PyList_Type, &objs, &key)) return NULL;
    if (!PyList_CheckExact(objs)) Py_RETURN_NONE;  /* a subclass: Python reads it */
    Py_ssize_t count = PyList_GET_SIZE(objs);
    PyObject *out = PyList_New(count);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *obj = PyList_GET_ITEM(objs, i);
        if (!PyDict_CheckExact(obj)) { Py_DECREF(out); Py_RETURN_NONE; }
        PyObject *value = PyDict_GetItemWithError(obj, key);
        if (value == NULL && PyErr_Occurred()) { Py_DECREF(out); return NULL; }
        value = value == NULL ? Py_None : value;
        Py_INCREF(value);
        PyList_SET_ITEM(out, i, value);
    }
    return out;
}

/* take(objs, keys) -> list | None: [column(objs, key) for key in keys], in one pass over the
 * samples (each sample's dict is read once, while it is in cache, for every key); None when
 * one is not a dict. */
static PyObject *take(PyObject *self, PyObject *args) {
    PyObject *objs, *keys;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &objs, &PyTuple_Type, &keys)) return NULL;
    if (!PyList_CheckExact(objs)) Py_RETURN_NONE;  /* a subclass: Python reads it */
    Py_ssize_t count = PyList_GET_SIZE(objs), width = PyTuple_GET_SIZE(keys);
    PyObject *out = PyList_New(width);
    if (out == NULL) return NULL;
    for (Py_ssize_t k = 0; k < width; k++) {
        PyObject *values = PyList_New(count);
        if (values == NULL) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, k, values);
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *obj = PyList_GET_ITEM(objs, i);
        if (!PyDict_CheckExact(obj)) { Py_DECREF(out); Py_RETURN_NONE; }
        for (Py_ssize_t k = 0; k < width; k++) {
            PyObject *value = PyDict_GetItemWithError(obj, PyTuple_GET_ITEM(keys, k));
            if (value == NULL && PyErr_Occurred()) { Py_DECREF(out); return NULL; }
            value = value == NULL ? Py_None : value;
            Py_INCREF(value);
            PyList_SET_ITEM(PyList_GET_ITEM(out, k), i, value);
        }
    }
    return out;
}

/* list_lengths(values) -> bytes | None: int64 len of each list, -1 for a scalar, text, dict,
 * tuple or None; None for anything else (an array, a list subclass: Python's path). */
static PyObject *list_lengths(PyObject *self, PyObject *args) {
    PyObject *values;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &values)) return NULL;
    if (!PyList_CheckExact(values)) Py_RETURN_NONE;  /* a subclass: Python reads it */
    Py_ssize_t count = PyList_GET_SIZE(values);
    PyObject *out = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(int64_t));
    if (out == NULL) return NULL;
    int64_t *at = (int64_t *)PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *value = PyList_GET_ITEM(values, i);
        /* exact types only: a list subclass may have a len of its own (a Parquet dump's
         * token texts, loaders.parse.columnar.Tokens) */
        if (PyList_CheckExact(value)) { at[i] = PyList_GET_SIZE(value); continue; }
        if (value == Py_None || PyBool_Check(value) || PyUnicode_CheckExact(value) ||
            PyLong_CheckExact(value) ||
            PyFloat_CheckExact(value) || PyDict_CheckExact(value) || PyTuple_CheckExact(value)) {
            at[i] = -1;
            continue;
        }
        Py_DECREF(out);
        Py_RETURN_NONE;
    }
    return out;
}

/* ---- repetition ----------------------------------------------------------------------- */

typedef struct { Py_ssize_t start, len; uint64_t hash; } Word;

static uint64_t mix(uint64_t h) {  /* splitmix64's finalizer */
    h ^= h >> 30; h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27; h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
}

static int same_word(const Word *a, const Word *b, const char *data, int kind) {
    return a->len == b->len && a->hash == b->hash &&
           memcmp(data + a->start * kind, data + b->start * kind, (size_t)a->len * kind) == 0;
}

/* Py_UNICODE_ISSPACE of each code point below 256, set at import: a 1-byte text's words are
 * split by a table, not the macro's branch and call past ASCII. */
static unsigned char SPACE1[256];

/* Whether ch is str.split()'s whitespace; `kind` a constant where the callers below are
 * inlined for 1-byte text (PyUnicode_READ is then a byte's load). */
#define ALWAYS_INLINE static inline __attribute__((always_inline))
ALWAYS_INLINE int is_space(int kind, Py_UCS4 ch) {
    return kind == PyUnicode_1BYTE_KIND ? SPACE1[ch] : Py_UNICODE_ISSPACE(ch);
}

ALWAYS_INLINE Py_ssize_t split_words_of(int kind, const void *data, Py_ssize_t size,
                                        Py_ssize_t i, Word *words) {
    Py_ssize_t count = 0;
    while (i < size) {
        while (i < size && is_space(kind, PyUnicode_READ(kind, data, i))) i++;
        if (i >= size) break;
        Word *w = &words[count++];
        uint64_t h = 0x9e3779b97f4a7c15ULL;
        w->start = i;
        while (i < size) {
            Py_UCS4 ch = PyUnicode_READ(kind, data, i);
            if (is_space(kind, ch)) break;
            h = (h ^ ch) * 0x100000001b3ULL;
            i++;
        }
        w->len = i - w->start;
        w->hash = mix(h);
    }
    return count;
}

/* The words of text[from:] as str.split() finds them (runs of Py_UNICODE_ISSPACE). */
static Py_ssize_t split_words(PyObject *text, Py_ssize_t from, Word *words) {
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t size = PyUnicode_GET_LENGTH(text);
    if (PyUnicode_KIND(text) == PyUnicode_1BYTE_KIND)
        return split_words_of(PyUnicode_1BYTE_KIND, data, size, from, words);
    return split_words_of(PyUnicode_KIND(text), data, size, from, words);
}

/* 1 - distinct word 4-grams / 4-grams (repetition.repetition), grams compared word by
 * word: a hash only finds the candidates. */
static double repetition_of(PyObject *text, Py_ssize_t tail, Py_ssize_t min_words,
                            Word *words, Py_ssize_t *table, Py_ssize_t slots) {
    Py_ssize_t size = PyUnicode_GET_LENGTH(text);
    Py_ssize_t n = split_words(text, size > tail ? size - tail : 0, words);
    if (n < min_words) return 0.0;
    Py_ssize_t grams = n - 3, distinct = 0;
    int kind = PyUnicode_KIND(text);
    const char *data = (const char *)PyUnicode_DATA(text);
    for (Py_ssize_t s = 0; s < slots; s++) table[s] = -1;
    for (Py_ssize_t g = 0; g < grams; g++) {
        uint64_t h = mix(words[g].hash ^ mix(words[g + 1].hash ^ mix(words[g + 2].hash ^
                         mix(words[g + 3].hash))));
        Py_ssize_t s = (Py_ssize_t)(h & (uint64_t)(slots - 1));
        for (;; s = (s + 1) & (slots - 1)) {
            Py_ssize_t other = table[s];
            if (other < 0) { table[s] = g; distinct++; break; }
            if (same_word(&words[g], &words[other], data, kind) &&
                same_word(&words[g + 1], &words[other + 1], data, kind) &&
                same_word(&words[g + 2], &words[other + 2], data, kind) &&
                same_word(&words[g + 3], &words[other + 3], data, kind)) break;
        }
    }
    return 1.0 - (double)distinct / (double)grams;
}

/* repetitions(texts, tail, min_words, min_chars) -> bytes: float64 per text; a text
 * shorter than min_chars is 0 unread (repetition.repetitions). */
static PyObject *repetitions(PyObject *self, PyObject *args) {
    PyObject *texts;
    Py_ssize_t tail, min_words, min_chars;
    if (!PyArg_ParseTuple(args, "O!nnn", &PyList_Type, &texts, &tail, &min_words, &min_chars))
        return NULL;
    if (!PyList_CheckExact(texts)) Py_RETURN_NONE;  /* a subclass: Python reads it */
    if (tail < 1 || tail > (1 << 24) || min_words < 4) {
        PyErr_SetString(PyExc_ValueError, "1 <= tail <= 2**24 and min_words >= 4");
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(texts), slots = 16;
    while (slots < 2 * tail) slots <<= 1;  /* a tail of `tail` chars holds < tail grams */
    Word *words = PyMem_Malloc(sizeof(Word) * (size_t)(tail / 2 + 2));
    Py_ssize_t *table = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)slots);
    double *at = NULL;
    PyObject *out = float64s(count, &at);
    if (words == NULL || table == NULL || out == NULL) {
        PyMem_Free(words); PyMem_Free(table); Py_XDECREF(out);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *text = PyList_GET_ITEM(texts, i);
        if (!PyUnicode_CheckExact(text)) {
            PyMem_Free(words); PyMem_Free(table); Py_DECREF(out);
            Py_RETURN_NONE;
        }
        at[i] = PyUnicode_GET_LENGTH(text) < min_chars ? 0.0
                : repetition_of(text, tail, min_words, words, table, slots);
    }
    PyMem_Free(words); PyMem_Free(table);
    return out;
}

/* ---- near-duplicate signatures ---------------------------------------------------------- */

/* A word's hash as signatures() reads it: ASCII letters lowercased, each run of ASCII digits
 * one '0' (a paraphrase with other numbers is the same text), FNV-1a over code points. */
ALWAYS_INLINE Py_ssize_t next_word(int kind, const void *data, Py_ssize_t i, Py_ssize_t end,
                                   uint64_t *hash) {
    while (i < end && is_space(kind, PyUnicode_READ(kind, data, i))) i++;
    if (i >= end) return -1;
    uint64_t h = 0xcbf29ce484222325ULL;
    int in_digits = 0;
    while (i < end) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        if (is_space(kind, ch)) break;
        i++;
        if (ch >= '0' && ch <= '9') {
            if (in_digits) continue;
            in_digits = 1;
            ch = '0';
        } else {
            in_digits = 0;
            if (ch >= 'A' && ch <= 'Z') ch += 32;
        }
        h = (h ^ ch) * 0x100000001b3ULL;
    }
    *hash = mix(h);
    return i;
}

#define MAX_HASHES 256
static uint32_t MULTIPLIERS[MAX_HASHES], ADDENDS[MAX_HASHES];  /* odd; set at import */

/* Each min-hash against one shingle: a 32-bit multiply-add a hash (a universal family),
 * kept when lower.  The same loop built for AVX2 (8 hashes an instruction), chosen at
 * import when the CPU has it: the results are the same. */
#define LOWER_MINS(name)                                                    \
    static void name(uint32_t gram, int count, uint32_t *restrict mins) {   \
        for (int k = 0; k < count; k++) {                                   \
            uint32_t v = gram * MULTIPLIERS[k] + ADDENDS[k];                \
            mins[k] = v < mins[k] ? v : mins[k];                            \
        }                                                                   \
    }
LOWER_MINS(lower_mins)
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
__attribute__((target("avx2"))) LOWER_MINS(lower_mins_avx2)
#endif

static void (*update_mins)(uint32_t, int, uint32_t *) = lower_mins;

static uint32_t shingle(const uint64_t *w) {
    uint64_t h = mix(w[0] ^ mix(w[1] ^ mix(w[2])));
    return (uint32_t)(h >> 32) ^ (uint32_t)h;
}

/* The min-hashes of a text's word 3-grams, over its first and last `window` characters;
 * how many words were read. */
static Py_ssize_t min_hashes(PyObject *text, Py_ssize_t window, int count, uint32_t *mins) {
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t size = PyUnicode_GET_LENGTH(text);
    Py_ssize_t spans[2][2] = {{0, size < 2 * window ? size : window}, {size - window, size}};
    int parts = size < 2 * window ? 1 : 2;
    uint64_t w[3] = {0, 0, 0};
    Py_ssize_t words = 0;
    for (int k = 0; k < count; k++) mins[k] = UINT32_MAX;
    for (int p = 0; p < parts; p++) {
        Py_ssize_t i = spans[p][0];
        uint64_t h;
        while ((i = kind == PyUnicode_1BYTE_KIND  /* the usual text: its loop specialized */
                    ? next_word(PyUnicode_1BYTE_KIND, data, i, spans[p][1], &h)
                    : next_word(kind, data, i, spans[p][1], &h)) >= 0) {
            w[0] = w[1]; w[1] = w[2]; w[2] = h;
            if (++words >= 3) update_mins(shingle(w), count, mins);
        }
    }
    if (words > 0 && words < 3) update_mins(shingle(w), count, mins);  /* its one shingle */
    return words;
}

/* signatures(texts, window, bands, rows) -> bytes: uint32 per text and band, each band the
 * hash of `rows` min-hashes of the text's word 3-grams (texts.signatures); None when one is
 * no str.  An empty text's bands are all 0. */
static PyObject *signatures(PyObject *self, PyObject *args) {
    PyObject *texts;
    Py_ssize_t window;
    int bands, rows;
    if (!PyArg_ParseTuple(args, "O!nii", &PyList_Type, &texts, &window, &bands, &rows))
        return NULL;
    if (window < 1 || bands < 1 || rows < 1 || bands > MAX_HASHES || rows > MAX_HASHES
        || bands * rows > MAX_HASHES) {
        PyErr_SetString(PyExc_ValueError, "window >= 1 and 1 <= bands * rows <= 256");
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(texts);
    PyObject *out = PyBytes_FromStringAndSize(NULL, count * bands * (Py_ssize_t)sizeof(uint32_t));
    if (out == NULL) return NULL;
    uint32_t *at = (uint32_t *)PyBytes_AS_STRING(out);
    uint32_t mins[MAX_HASHES];
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *text = PyList_GET_ITEM(texts, i);
        if (!PyUnicode_CheckExact(text)) { Py_DECREF(out); Py_RETURN_NONE; }
        Py_ssize_t words = min_hashes(text, window, bands * rows, mins);
        for (int b = 0; b < bands; b++) {  /* a multiply-add chain, one mix at the end */
            uint64_t h = 0;
            for (int r = 0; r < rows; r++) h = h * 0x9e3779b97f4a7c15ULL + mins[b * rows + r];
            at[i * bands + b] = words == 0 ? 0 : (uint32_t)(mix(h) >> 32);
        }
    }
    return out;
}

static PyObject *ELLIPSIS;  /* U+2026, made once */

/* previews(texts, cut, tail) -> (int64 bytes of each text's length, list of previews) or
 * None when one is no str: a text of at most `cut` characters is itself; a longer one is
 * its first `cut` characters, or with `tail` its last cut - 1 after an ellipsis (a prompt's
 * question is at its end) (text_columns.previews). */
static PyObject *previews(PyObject *self, PyObject *args) {
    PyObject *texts;
    Py_ssize_t cut;
    int tail;
    if (!PyArg_ParseTuple(args, "O!np", &PyList_Type, &texts, &cut, &tail)) return NULL;
    if (cut < 2) {
        PyErr_SetString(PyExc_ValueError, "cut >= 2");
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(texts);
    PyObject *lengths = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(int64_t));
    PyObject *cuts = PyList_New(count);
    if (lengths == NULL || cuts == NULL) goto fail;
    int64_t *at = (int64_t *)PyBytes_AS_STRING(lengths);
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *text = PyList_GET_ITEM(texts, i), *shown;
        if (!PyUnicode_CheckExact(text)) {
            Py_DECREF(lengths); Py_DECREF(cuts);
            Py_RETURN_NONE;
        }
        Py_ssize_t n = PyUnicode_GET_LENGTH(text);
        at[i] = n;
        if (n <= cut) {
            Py_INCREF(text);
            shown = text;
        } else if (!tail) {
            shown = PyUnicode_Substring(text, 0, cut);
        } else {
            PyObject *end = PyUnicode_Substring(text, n - (cut - 1), n);
            shown = end == NULL ? NULL : PyUnicode_Concat(ELLIPSIS, end);
            Py_XDECREF(end);
        }
        if (shown == NULL) goto fail;
        PyList_SET_ITEM(cuts, i, shown);
    }
    return Py_BuildValue("(NN)", lengths, cuts);
fail:
    Py_XDECREF(lengths); Py_XDECREF(cuts);
    return NULL;
}

/* ---- the token digest's bins ------------------------------------------------------------ */

/* token_bins(values, lengths, groups, width, group_count, rel_bins, abs_tokens) -> (counts,
 * sums): float64 bytes, group_count x width each.  Each sample's tokens (float64 values end
 * to end, int64 lengths and groups a sample) add to their group's relative bin
 * (p * rel_bins // n) and absolute bin (rel_bins + p // abs_tokens): 1.0 and the value when
 * it is finite, 0.0 and 0.0 when not.  numpy's bincount over the same keys adds them in token
 * order per bin too, so the sums are the same bits (token_bins.py's other path). */
static PyObject *token_bins(PyObject *self, PyObject *args) {
    Py_buffer values, lengths, groups;
    Py_ssize_t width, group_count, rel, abs_tokens;
    if (!PyArg_ParseTuple(args, "y*y*y*nnnn", &values, &lengths, &groups, &width, &group_count,
                          &rel, &abs_tokens)) return NULL;
    PyObject *counts = NULL, *sums = NULL, *out = NULL;
    double *c = NULL, *t = NULL;
    const double *v = values.buf;
    const int64_t *len = lengths.buf, *group = groups.buf;
    Py_ssize_t samples = lengths.len / 8, held = values.len / 8, at = 0;
    if (groups.len != lengths.len || width <= rel || rel < 1 || abs_tokens < 1
        || group_count < 0 || group_count > PY_SSIZE_T_MAX / 8 / width) goto bad;
    counts = float64s(group_count * width, &c);
    sums = float64s(group_count * width, &t);
    if (counts == NULL || sums == NULL) goto done;
    memset(c, 0, (size_t)(group_count * width) * sizeof(double));
    memset(t, 0, (size_t)(group_count * width) * sizeof(double));
    for (Py_ssize_t s = 0; s < samples; s++) {
        int64_t n = len[s], g = group[s];
        if (n < 0 || n > held - at || g < 0 || g >= group_count
            || (n > 0 && rel + (n - 1) / abs_tokens >= width)) goto bad;
        double *gc = c + g * width, *gt = t + g * width;
        for (int64_t p = 0; p < n; p++) {
            double x = v[at + p];
            int finite = isfinite(x);
            Py_ssize_t r = (Py_ssize_t)(p * rel / n), a = rel + (Py_ssize_t)(p / abs_tokens);
            gc[r] += finite;
            gt[r] += finite ? x : 0.0;
            gc[a] += finite;
            gt[a] += finite ? x : 0.0;
        }
        at += n;
    }
    out = PyTuple_Pack(2, counts, sums);
    goto done;
bad:
    PyErr_SetString(PyExc_ValueError, "token_bins: lengths, groups or width out of range");
done:
    Py_XDECREF(counts);
    Py_XDECREF(sums);
    PyBuffer_Release(&values);
    PyBuffer_Release(&lengths);
    PyBuffer_Release(&groups);
    return out;
}

/* ---- the token digest's hot-token candidates --------------------------------------------- */

/* top_tokens(values, lows, highs, ks) -> int64 bytes: for each run r (values[lows[r]:highs[r]],
 * float64 end to end; int64 lows, highs and ks), the offsets of its ks[r] largest finite values
 * above 0, largest first and a tie in offset order; runs one after the other.  A kept list of
 * k, sorted, each value tried against its last: a run's tokens are read once. */
static PyObject *top_tokens(PyObject *self, PyObject *args) {
    Py_buffer values, lows, highs, ks;
    if (!PyArg_ParseTuple(args, "y*y*y*y*", &values, &lows, &highs, &ks)) return NULL;
    const double *v = values.buf;
    const int64_t *lo = lows.buf, *hi = highs.buf, *k = ks.buf;
    Py_ssize_t runs = lows.len / 8, held = values.len / 8, total = 0, most = 0;
    PyObject *out = NULL;
    int64_t *kept = NULL;
    if (highs.len != lows.len || ks.len != lows.len) goto bad;
    for (Py_ssize_t r = 0; r < runs; r++) {
        if (lo[r] < 0 || hi[r] < lo[r] || hi[r] > held || k[r] < 0) goto bad;
        int64_t room = k[r] < hi[r] - lo[r] ? k[r] : hi[r] - lo[r];
        total += room;
        if (room > most) most = room;
    }
    if ((kept = PyMem_Malloc((size_t)(most + 1) * sizeof(int64_t))) == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if ((out = PyBytes_FromStringAndSize(NULL, total * 8)) == NULL) goto done;
    int64_t *at = (int64_t *)PyBytes_AS_STRING(out);
    Py_ssize_t written = 0;
    for (Py_ssize_t r = 0; r < runs; r++) {
        int64_t room = k[r] < hi[r] - lo[r] ? k[r] : hi[r] - lo[r], n = 0;
        if (room == 0) continue;
        for (int64_t i = lo[r]; i < hi[r]; i++) {
            double x = v[i];
            if (!(x > 0.0) || !isfinite(x)) continue;
            if (n == room && !(x > v[kept[n - 1]])) continue;  /* a tie loses to the earlier */
            int64_t j = n < room ? n++ : n - 1;
            while (j > 0 && v[kept[j - 1]] < x) { kept[j] = kept[j - 1]; j--; }
            kept[j] = i;
        }
        memcpy(at + written, kept, (size_t)n * sizeof(int64_t));
        written += n;
    }
    if (_PyBytes_Resize(&out, written * 8) < 0) out = NULL;
    goto done;
bad:
    PyErr_SetString(PyExc_ValueError, "top_tokens: a run out of range");
done:
    PyMem_Free(kept);
    PyBuffer_Release(&values);
    PyBuffer_Release(&lows);
    PyBuffer_Release(&highs);
    PyBuffer_Release(&ks);
    return out;
}

/* all_strings(values) -> bool: every item of the list a str (exactly), as
 * set(map(type, values)) <= {str} says, without a set. */
static PyObject *all_strings(PyObject *self, PyObject *values) {
    if (!PyList_Check(values)) {
        PyErr_SetString(PyExc_TypeError, "all_strings: a list");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(values); i++)
        if (!PyUnicode_CheckExact(PyList_GET_ITEM(values, i))) Py_RETURN_FALSE;
    Py_RETURN_TRUE;
}

/* The bytes of one `size`-byte item per item of a list argument (*at: their start); NULL
 * with a TypeError naming `name` when it is no list. */
static PyObject *item_bytes(PyObject *values, const char *name, Py_ssize_t size, void **at) {
    if (!PyList_Check(values)) {
        PyErr_Format(PyExc_TypeError, "%s: a list", name);
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, PyList_GET_SIZE(values) * size);
    if (out != NULL) *at = PyBytes_AS_STRING(out);
    return out;
}

/* numbers(values) -> float64 bytes | None: a list of float, int, bool and None (exactly
 * those types) as np.array(..., float64) reads it, None as NaN; None when an item is of
 * another type or an int does not fit a double (np.array raises then).  A batch's reward
 * column without a set of its types and numpy's own pass over the list. */
static PyObject *numbers(PyObject *self, PyObject *values) {
    double *at = NULL;
    PyObject *out = item_bytes(values, "numbers", sizeof(double), (void **)&at);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(values); i++) {
        PyObject *v = PyList_GET_ITEM(values, i);
        if (PyFloat_CheckExact(v)) at[i] = PyFloat_AS_DOUBLE(v);
        else if (v == Py_None) at[i] = NAN;
        else if (v == Py_True || v == Py_False) at[i] = v == Py_True;
        else if (!PyLong_CheckExact(v)) goto not_plain;
        else if ((at[i] = PyLong_AsDouble(v)) == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();  /* past a double's range */
            goto not_plain;
        }
    }
    return out;
not_plain:
    Py_DECREF(out);
    Py_RETURN_NONE;
}

/* whole_numbers(values) -> int64 bytes | None: a list of int (exactly that type) within
 * int64, as np.array(..., int64) reads it; None for any other item (the caller's numpy
 * then reads the list, or refuses it as it always did). */
static PyObject *whole_numbers(PyObject *self, PyObject *values) {
    int64_t *at = NULL;
    PyObject *out = item_bytes(values, "whole_numbers", sizeof(int64_t), (void **)&at);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(values); i++) {
        PyObject *v = PyList_GET_ITEM(values, i);
        int overflow = 0;
        if (!PyLong_CheckExact(v)) goto not_plain;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || (x == -1 && PyErr_Occurred())) { PyErr_Clear(); goto not_plain; }
        at[i] = (int64_t)x;
    }
    return out;
not_plain:
    Py_DECREF(out);
    Py_RETURN_NONE;
}

/* utf8(values) -> None | (int32 offsets bytes, data bytes, validity bytes | None): a list of
 * str or None laid out as an Arrow string array's buffers (None: a null, bit 0 in the
 * validity, LSB first; no validity when every item is a str).  Arrow's own conversion checks
 * each item's type and grows a builder a str: for a batch's 10,000 response previews 1 ms,
 * here a copy of each str's UTF-8.  None when no item is a str (an empty list, or only
 * None: Arrow's type null), an item is another type, a str has no UTF-8 (a lone surrogate)
 * or the data passes 2 GB: pa.array then reads the list as always. */
static PyObject *utf8(PyObject *self, PyObject *values) {
    if (!PyList_Check(values)) {
        PyErr_SetString(PyExc_TypeError, "utf8: a list");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(values), size = 0, nulls = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(values, i);
        if (item == Py_None) { nulls++; continue; }
        if (!PyUnicode_CheckExact(item)) Py_RETURN_NONE;
        Py_ssize_t len;
        if (PyUnicode_AsUTF8AndSize(item, &len) == NULL) { PyErr_Clear(); Py_RETURN_NONE; }
        size += len;
        if (size > INT32_MAX) Py_RETURN_NONE;
    }
    if (nulls == n) Py_RETURN_NONE;  /* no str: Arrow makes it a column of type null */
    PyObject *offsets = PyBytes_FromStringAndSize(NULL, (n + 1) * (Py_ssize_t)sizeof(int32_t));
    PyObject *data = PyBytes_FromStringAndSize(NULL, size);
    PyObject *valid = nulls ? PyBytes_FromStringAndSize(NULL, (n + 7) / 8) : Py_NewRef(Py_None);
    if (offsets == NULL || data == NULL || valid == NULL) goto fail;
    int32_t *at = (int32_t *)PyBytes_AS_STRING(offsets);
    char *out = PyBytes_AS_STRING(data);
    unsigned char *bits = nulls ? (unsigned char *)PyBytes_AS_STRING(valid) : NULL;
    if (bits != NULL) memset(bits, 0, (n + 7) / 8);
    int32_t filled = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        at[i] = filled;
        PyObject *item = PyList_GET_ITEM(values, i);
        if (item == Py_None) continue;
        Py_ssize_t len;
        const char *text = PyUnicode_AsUTF8AndSize(item, &len);  /* cached by the first pass */
        memcpy(out + filled, text, (size_t)len);
        filled += (int32_t)len;
        if (bits != NULL) bits[i / 8] |= (unsigned char)(1u << (i % 8));
    }
    at[n] = filled;
    return Py_BuildValue("(NNN)", offsets, data, valid);
fail:
    Py_XDECREF(offsets);
    Py_XDECREF(data);
    Py_XDECREF(valid);
    return NULL;
}

/* ---- the KL columns' sums ------------------------------------------------------------ */

/* numpy's pairwise sum of n doubles (DOUBLE_pairwise_sum, numpy/_core/src/umath/
 * loops_utils.h.src): under 8 in order from -0.0; to 128 in eight running sums, met pairwise,
 * then the rest in order; past that its halves (cut at a multiple of 8) summed apart.  Every
 * step is one IEEE add, as numpy's, so the same bits (tests/loaders/test_index_kernel.py). */
static double pairwise(const double *a, Py_ssize_t n) {
    if (n < 8) {
        double res = -0.0;
        for (Py_ssize_t i = 0; i < n; i++) res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        for (int j = 0; j < 8; j++) r[j] = a[j];
        Py_ssize_t i = 8;
        for (; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++) r[j] += a[i + j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    }
    Py_ssize_t half = n / 2;
    half -= half % 8;
    return pairwise(a, half) + pairwise(a + half, n - half);
}

/* np.add.reduceat over one segment of n >= 1 values: its first, plus the pairwise sum of the
 * rest (the reduce loop numpy runs over them after copying the first). */
static double segment_sum(const double *x, Py_ssize_t n) {
    return n > 1 ? x[0] + pairwise(x + 1, n - 1) : x[0];
}

/* kl_sums(r, expm1_neg, expm1_pos, lengths) -> float64 bytes (4 x segments): per segment of
 * lengths[i] > 0 tokens, the sums kl.segment_sums makes with numpy (reduceat) of k1 = r,
 * k2 = (0.5 r) r, k3 = expm1(-r) + r and k3_reverse = expm1(r) - r, estimator by estimator;
 * the expm1 arrays are numpy's own (its SIMD expm1 is not libm's), the rest one pass here.
 * None when the arrays or lengths do not agree. */
static PyObject *kl_sums(PyObject *self, PyObject *args) {
    Py_buffer rb, nb, pb, lb;
    if (!PyArg_ParseTuple(args, "y*y*y*y*", &rb, &nb, &pb, &lb)) return NULL;
    PyObject *out = NULL;
    double *scratch = NULL;
    const double *r = rb.buf, *neg = nb.buf, *pos = pb.buf;
    const int64_t *len = lb.buf;
    Py_ssize_t tokens = rb.len / 8, segments = lb.len / 8, longest = 0, total = 0;
    int bad = nb.len != rb.len || pb.len != rb.len;
    for (Py_ssize_t i = 0; !bad && i < segments; i++) {
        bad = len[i] <= 0;
        total += len[i];
        if (len[i] > longest) longest = len[i];
    }
    if (bad || total != tokens) { out = Py_NewRef(Py_None); goto done; }
    scratch = PyMem_Malloc((longest ? longest : 1) * sizeof(double));
    out = PyBytes_FromStringAndSize(NULL, 4 * segments * (Py_ssize_t)sizeof(double));
    if (scratch == NULL || out == NULL) {
        Py_CLEAR(out);
        if (scratch == NULL) PyErr_NoMemory();
        goto done;
    }
    double *sums = (double *)PyBytes_AS_STRING(out);
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < segments; i++) {
        Py_ssize_t n = len[i];
        const double *x = r + at;
        sums[i] = segment_sum(x, n);
        for (Py_ssize_t t = 0; t < n; t++) {  /* one rounding a step, as numpy's */
            double half = 0.5 * x[t];
            scratch[t] = half * x[t];
        }
        sums[segments + i] = segment_sum(scratch, n);
        for (Py_ssize_t t = 0; t < n; t++) scratch[t] = neg[at + t] + x[t];
        sums[2 * segments + i] = segment_sum(scratch, n);
        for (Py_ssize_t t = 0; t < n; t++) scratch[t] = pos[at + t] - x[t];
        sums[3 * segments + i] = segment_sum(scratch, n);
        at += n;
    }
    Py_END_ALLOW_THREADS
done:
    PyMem_Free(scratch);
    PyBuffer_Release(&rb);
    PyBuffer_Release(&nb);
    PyBuffer_Release(&pb);
    PyBuffer_Release(&lb);
    return out;
}

/* ---- text ids ------------------------------------------------------------------------ */

/* BLAKE2b (RFC 7693) with an 8-byte digest, no key: hashlib.blake2b(data, digest_size=8),
 * which text.text_id makes an id of.  Written out here so a batch's ids cost no Python call
 * a text (tests/loaders/test_index_kernel.py compares it with hashlib on many inputs). */
static const uint64_t B2_IV[8] = {
    0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL,
    0xa54ff53a5f1d36f1ULL, 0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL,
    0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL};
static const uint8_t B2_SIGMA[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
    {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
    {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
    {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
    {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3}};

static inline uint64_t rotr64(uint64_t x, int n) { return (x >> n) | (x << (64 - n)); }

#define B2_G(a, b, c, d, x, y)                                   \
    do {                                                         \
        v[a] = v[a] + v[b] + (x); v[d] = rotr64(v[d] ^ v[a], 32); \
        v[c] = v[c] + v[d];       v[b] = rotr64(v[b] ^ v[c], 24); \
        v[a] = v[a] + v[b] + (y); v[d] = rotr64(v[d] ^ v[a], 16); \
        v[c] = v[c] + v[d];       v[b] = rotr64(v[b] ^ v[c], 63); \
    } while (0)
/* a round with its row of B2_SIGMA a constant: every message index folds at compile time */
#define B2_ROUND(r)                                                            \
    do {                                                                       \
        B2_G(0, 4, 8, 12, m[B2_SIGMA[r][0]], m[B2_SIGMA[r][1]]);               \
        B2_G(1, 5, 9, 13, m[B2_SIGMA[r][2]], m[B2_SIGMA[r][3]]);               \
        B2_G(2, 6, 10, 14, m[B2_SIGMA[r][4]], m[B2_SIGMA[r][5]]);              \
        B2_G(3, 7, 11, 15, m[B2_SIGMA[r][6]], m[B2_SIGMA[r][7]]);              \
        B2_G(0, 5, 10, 15, m[B2_SIGMA[r][8]], m[B2_SIGMA[r][9]]);              \
        B2_G(1, 6, 11, 12, m[B2_SIGMA[r][10]], m[B2_SIGMA[r][11]]);            \
        B2_G(2, 7, 8, 13, m[B2_SIGMA[r][12]], m[B2_SIGMA[r][13]]);             \
        B2_G(3, 4, 9, 14, m[B2_SIGMA[r][14]], m[B2_SIGMA[r][15]]);             \
    } while (0)

/* h updated by one 128-byte block; t: the bytes hashed so far, this block included. */
static void b2_compress(uint64_t h[8], const uint8_t block[128], uint64_t t, int last) {
    uint64_t v[16], m[16];
    memcpy(m, block, sizeof m);  /* little-endian words (the only byte order built for) */
    for (int i = 0; i < 8; i++) { v[i] = h[i]; v[i + 8] = B2_IV[i]; }
    v[12] ^= t;  /* the counter's high word stays 0: no text reaches 2^64 bytes */
    if (last) v[14] = ~v[14];
    B2_ROUND(0); B2_ROUND(1); B2_ROUND(2); B2_ROUND(3); B2_ROUND(4); B2_ROUND(5);
    B2_ROUND(6); B2_ROUND(7); B2_ROUND(8); B2_ROUND(9); B2_ROUND(10); B2_ROUND(11);
    for (int i = 0; i < 8; i++) h[i] ^= v[i] ^ v[i + 8];
}

/* BLAKE2b-64 of prefix then text, read as a little-endian int64 (text_id's id). */
static int64_t blake2b_64(const uint8_t *prefix, size_t np, const uint8_t *text, size_t nt) {
    uint64_t h[8];
    memcpy(h, B2_IV, sizeof h);
    h[0] ^= 0x01010000ULL ^ 8;  /* digest length 8, no key, fanout 1, depth 1 */
    uint8_t block[128];
    size_t total = np + nt, done = 0, fill = 0;
    const uint8_t *parts[2] = {prefix, text};
    size_t sizes[2] = {np, nt};
    /* every full block but the last is compressed as the next byte arrives; the last (an
     * empty input's only one too) is padded with zeros and flagged */
    for (int k = 0; k < 2; k++) {
        const uint8_t *from = parts[k];
        size_t left = sizes[k];
        while (left) {
            if (fill == 128) {
                b2_compress(h, block, done, 0);
                fill = 0;
            }
            size_t take = left < 128 - fill ? left : 128 - fill;
            memcpy(block + fill, from, take);
            fill += take;
            done += take;
            from += take;
            left -= take;
        }
    }
    memset(block + fill, 0, 128 - fill);
    b2_compress(h, block, total, 1);
    return (int64_t)h[0];  /* the digest's first 8 bytes are h[0] little-endian */
}

/* text_ids(texts, prefix, odd) -> int64 bytes: text.text_id(prefix + text) of each str, or
 * odd(text) for one `odd` must read itself (a lone surrogate, which UTF-8 cannot hold, or
 * with `edges` set, one that starts with a char in edges[0] or whitespace, or ends with
 * one in edges[1] or whitespace: grouping.unpadded's cases).  A text equal to the one
 * before it (a GRPO group's repeated prompt) reuses its id.  None when one is no str. */
static PyObject *text_ids(PyObject *self, PyObject *args) {
    PyObject *texts, *odd, *starts, *ends;
    const char *prefix;
    Py_ssize_t np_;
    if (!PyArg_ParseTuple(args, "O!y#OUU", &PyList_Type, &texts, &prefix, &np_, &odd,
                          &starts, &ends)) return NULL;
    Py_ssize_t count = PyList_GET_SIZE(texts);
    for (Py_ssize_t i = 0; i < count; i++)
        if (!PyUnicode_CheckExact(PyList_GET_ITEM(texts, i))) Py_RETURN_NONE;
    PyObject *out = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(int64_t));
    if (out == NULL) return NULL;
    int64_t *at = (int64_t *)PyBytes_AS_STRING(out);
    int edges = PyUnicode_GET_LENGTH(starts) || PyUnicode_GET_LENGTH(ends);
    PyObject *last = NULL;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *text = PyList_GET_ITEM(texts, i);
        if (last != NULL && (text == last || PyUnicode_Compare(text, last) == 0)) {
            at[i] = at[i - 1];
            continue;
        }
        last = text;
        Py_ssize_t n = PyUnicode_GET_LENGTH(text), size;
        int padded = 0;
        if (edges) {
            Py_UCS4 first = n ? PyUnicode_READ_CHAR(text, 0) : 0;
            Py_UCS4 end = n ? PyUnicode_READ_CHAR(text, n - 1) : 0;
            padded = n == 0 || Py_UNICODE_ISSPACE(first) || Py_UNICODE_ISSPACE(end)
                     || PyUnicode_FindChar(starts, first, 0, PyUnicode_GET_LENGTH(starts), 1) >= 0
                     || PyUnicode_FindChar(ends, end, 0, PyUnicode_GET_LENGTH(ends), 1) >= 0;
        }
        const char *utf8 = padded ? NULL : PyUnicode_AsUTF8AndSize(text, &size);
        if (utf8 != NULL) {
            at[i] = blake2b_64((const uint8_t *)prefix, (size_t)np_, (const uint8_t *)utf8,
                               (size_t)size);
            continue;
        }
        PyErr_Clear();  /* a lone surrogate: odd() encodes it as Python does */
        PyObject *id = PyObject_CallOneArg(odd, text);
        long long v = id == NULL ? -1 : PyLong_AsLongLong(id);
        Py_XDECREF(id);
        if (v == -1 && PyErr_Occurred()) { Py_DECREF(out); return NULL; }
        at[i] = (int64_t)v;
    }
    return out;
}

/* codes(values) -> (int32 bytes of each value's code, the texts in first-seen order), False
 * when the distinct values (None among them) are more than half the values, or None when one
 * is neither str nor None: chunk.coded's Coded without a dict lookup a row (a value that is
 * the one before it takes its code: a GRPO group's prompt, a file name). */
static PyObject *codes(PyObject *self, PyObject *values) {
    if (!PyList_Check(values)) {
        PyErr_SetString(PyExc_TypeError, "codes: a list");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(values);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(values, i);
        if (item != Py_None && !PyUnicode_CheckExact(item)) Py_RETURN_NONE;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int32_t));
    PyObject *texts = PyList_New(0), *index = PyDict_New();
    if (out == NULL || texts == NULL || index == NULL) goto fail;
    int32_t *at = (int32_t *)PyBytes_AS_STRING(out), code = -1;
    int none_seen = 0;
    PyObject *last = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(values, i);
        if (item != last) {
            if (item == Py_None) {
                code = -1;
                none_seen = 1;
            } else {
                PyObject *known = PyDict_GetItemWithError(index, item);
                if (known != NULL) {
                    code = (int32_t)PyLong_AsLong(known);
                } else {
                    if (PyErr_Occurred()) goto fail;
                    code = (int32_t)PyList_GET_SIZE(texts);
                    PyObject *number = PyLong_FromLong(code);
                    int bad = number == NULL || PyDict_SetItem(index, item, number) < 0
                              || PyList_Append(texts, item) < 0;
                    Py_XDECREF(number);
                    if (bad) goto fail;
                }
            }
            if ((PyList_GET_SIZE(texts) + none_seen) * 2 > n) {  /* as dict.fromkeys counts */
                Py_DECREF(out); Py_DECREF(texts); Py_DECREF(index);
                Py_RETURN_FALSE;
            }
            last = item;
        }
        at[i] = code;
    }
    Py_DECREF(index);
    return Py_BuildValue("(NN)", out, texts);
fail:
    Py_XDECREF(out); Py_XDECREF(texts); Py_XDECREF(index);
    return NULL;
}

/* ---- the run's sort ------------------------------------------------------------------ */

/* The runs of a sorted column, a piece at a time: run r is size[r] rows from the row from[r]
 * of the chunks laid end to end (chunk c holds the rows first[c] on), and a run may cross
 * chunks; `piece` gets each chunk's part of it in order (its chunk, first row there, rows). */
typedef void (*Piece)(void *context, Py_ssize_t chunk, int64_t row, int64_t rows);

static void each_piece(Py_ssize_t count, const int64_t *first, const int64_t *from,
                       const int64_t *size, Py_ssize_t runs, Piece piece, void *context) {
    Py_ssize_t c = 0;
    for (Py_ssize_t r = 0; r < runs; r++) {
        int64_t row = from[r], left = size[r];
        if (left == 0) continue;
        if (row < first[c] || row >= first[c + 1]) {  /* the next run's chunk: searched */
            Py_ssize_t lo = 0, hi = count - 1;
            while (lo < hi) {
                Py_ssize_t mid = (lo + hi + 1) / 2;
                if (first[mid] <= row) lo = mid; else hi = mid - 1;
            }
            c = lo;
        }
        while (left > 0) {
            while (row >= first[c + 1]) c++;  /* empty chunks, or a run across chunks */
            int64_t n = first[c + 1] - row < left ? first[c + 1] - row : left;
            piece(context, c, row - first[c], n);
            row += n;
            left -= n;
        }
    }
}

typedef struct {
    const Py_buffer *views;
    Py_ssize_t item;
    char *to;
} Copy;

static void copy_piece(void *context, Py_ssize_t chunk, int64_t row, int64_t rows) {
    Copy *copy = context;
    size_t bytes = (size_t)(rows * copy->item);
    memcpy(copy->to, (const char *)copy->views[chunk].buf + row * copy->item, bytes);
    copy->to += bytes;
}

/* gather(chunks, chunk_starts, sources, lengths, out, itemsize) -> None: copies run r of a
 * sorted column, lengths[r] rows from the row sources[r] of the chunks laid end to end (chunk
 * c holds the rows chunk_starts[c] on, int64s), to the next rows of out; a row is itemsize
 * bytes of each buffer.  A sort of parts each in order is a few thousand such runs: one copy
 * each, not a join of the chunks and a take of every row (parts.py).  The GIL is let go while
 * it copies: a column a thread. */
static PyObject *gather(PyObject *self, PyObject *args) {
    PyObject *chunks;
    Py_buffer starts, sources, lengths, out;
    Py_ssize_t item;
    if (!PyArg_ParseTuple(args, "O!y*y*y*w*n", &PyTuple_Type, &chunks, &starts, &sources,
                          &lengths, &out, &item)) return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(chunks), runs = lengths.len / 8;
    Py_buffer *views = PyMem_Calloc(count ? count : 1, sizeof(Py_buffer));
    Py_ssize_t got = 0;
    PyObject *result = NULL;
    const int64_t *first = starts.buf, *from = sources.buf, *size = lengths.buf;
    if (views == NULL) { PyErr_NoMemory(); goto done; }
    if (starts.len != (count + 1) * 8 || sources.len != lengths.len || item <= 0) {
        PyErr_SetString(PyExc_ValueError, "gather: chunk starts or runs of other lengths");
        goto done;
    }
    for (; got < count; got++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(chunks, got), &views[got], PyBUF_C_CONTIGUOUS) < 0)
            goto done;
        if (views[got].len != (first[got + 1] - first[got]) * item) {
            PyErr_SetString(PyExc_ValueError, "gather: a chunk of another size");
            got++;
            goto done;
        }
    }
    int64_t total = 0;
    for (Py_ssize_t r = 0; r < runs; r++) {
        if (size[r] < 0 || from[r] < 0 || from[r] + size[r] > first[count]) {
            PyErr_SetString(PyExc_ValueError, "gather: a run out of the chunks");
            goto done;
        }
        total += size[r];
    }
    if (total * item != out.len) {
        PyErr_SetString(PyExc_ValueError, "gather: runs of another length than out");
        goto done;
    }
    Copy copy = {views, item, out.buf};
    Py_BEGIN_ALLOW_THREADS
    each_piece(count, first, from, size, runs, copy_piece, &copy);
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    for (Py_ssize_t i = 0; i < got; i++) PyBuffer_Release(&views[i]);
    PyMem_Free(views);
    PyBuffer_Release(&starts);
    PyBuffer_Release(&sources);
    PyBuffer_Release(&lengths);
    PyBuffer_Release(&out);
    return result;
}

/* gather_text's walk of its runs: the bytes they hold (out NULL), or those bytes copied to
 * out and their offsets, shifted, to out_off. */
typedef struct {
    const Py_buffer *views;  /* a chunk's offsets, then its data */
    int32_t *out_off;
    char *out;
    int64_t at_row, at_byte;
} Texts;

static void text_piece(void *context, Py_ssize_t chunk, int64_t row, int64_t rows) {
    Texts *t = context;
    const int32_t *off = (const int32_t *)t->views[2 * chunk].buf + row;
    int64_t bytes = (int64_t)off[rows] - off[0];
    if (t->out != NULL) {
        memcpy(t->out + t->at_byte, (const char *)t->views[2 * chunk + 1].buf + off[0],
               (size_t)bytes);
        for (int64_t i = 0; i < rows; i++)
            t->out_off[t->at_row + i] = (int32_t)(t->at_byte + off[i] - off[0]);
    }
    t->at_row += rows;
    t->at_byte += bytes;
}

/* gather_text(chunks, chunk_starts, sources, lengths) -> None | (int32 offsets bytes, data
 * bytes): gather's runs of a text (or binary) column without nulls, each chunk a pair (its
 * n + 1 int32 offsets, from its first row's, and its data buffer).  A run's bytes are one
 * copy and its offsets a shift, where Arrow's take copies a value at a time (the long run's
 * previews: 0.08 s a column).  None when the data would pass 2 GB: a take then.  Given
 * out_offsets and out_data (writable, of just the sizes the runs need), it writes there and
 * gives True. */
static PyObject *gather_text(PyObject *self, PyObject *args) {
    PyObject *chunks;
    Py_buffer starts, sources, lengths, out_off = {0}, out_data = {0};
    if (!PyArg_ParseTuple(args, "O!y*y*y*|w*w*", &PyTuple_Type, &chunks, &starts, &sources,
                          &lengths, &out_off, &out_data)) return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(chunks), runs = lengths.len / 8, got = 0;
    Py_buffer *views = PyMem_Calloc(2 * (count ? count : 1), sizeof(Py_buffer));
    PyObject *offsets = NULL, *data = NULL, *result = NULL;
    const int64_t *first = starts.buf, *from = sources.buf, *size = lengths.buf;
    if (views == NULL) { PyErr_NoMemory(); goto done; }
    if (starts.len != (count + 1) * 8 || sources.len != lengths.len) {
        PyErr_SetString(PyExc_ValueError, "gather_text: chunk starts or runs of other lengths");
        goto done;
    }
    for (; got < count; got++) {
        PyObject *pair = PyTuple_GET_ITEM(chunks, got);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "gather_text: a chunk is (offsets, data)");
            goto done;
        }
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(pair, 0), &views[2 * got], PyBUF_C_CONTIGUOUS) < 0)
            goto done;
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(pair, 1), &views[2 * got + 1], PyBUF_SIMPLE) < 0) {
            PyBuffer_Release(&views[2 * got]);
            goto done;
        }
        const int32_t *off = views[2 * got].buf;
        int64_t rows = first[got + 1] - first[got];
        int bad = rows < 0 || views[2 * got].len != (rows + 1) * 4;
        for (int64_t i = 0; !bad && i < rows; i++) bad = off[i] < 0 || off[i] > off[i + 1];
        if (bad || off[rows] > views[2 * got + 1].len) {
            got++;
            PyErr_SetString(PyExc_ValueError, "gather_text: a chunk's offsets out of its data");
            goto done;
        }
    }
    int64_t rows = 0;
    for (Py_ssize_t r = 0; r < runs; r++) {
        if (size[r] < 0 || from[r] < 0 || from[r] + size[r] > first[count]) {
            PyErr_SetString(PyExc_ValueError, "gather_text: a run out of the chunks");
            goto done;
        }
        rows += size[r];
    }
    Texts sizes = {views, NULL, NULL, 0, 0};
    each_piece(count, first, from, size, runs, text_piece, &sizes);
    int64_t bytes = sizes.at_byte;
    if (bytes > INT32_MAX) { result = Py_NewRef(Py_None); goto done; }
    int given = out_data.obj != NULL;  /* the caller's buffers, of just these sizes */
    if (given && (out_off.len != (rows + 1) * 4 || out_data.len != bytes)) {
        PyErr_SetString(PyExc_ValueError, "gather_text: out buffers of other sizes");
        goto done;
    }
    if (!given) {
        offsets = PyBytes_FromStringAndSize(NULL, (rows + 1) * 4);
        data = PyBytes_FromStringAndSize(NULL, bytes);
        if (offsets == NULL || data == NULL) goto done;
    }
    Texts texts = {views, given ? out_off.buf : (int32_t *)PyBytes_AS_STRING(offsets),
                   given ? out_data.buf : PyBytes_AS_STRING(data), 0, 0};
    Py_BEGIN_ALLOW_THREADS  /* the copies: a column a thread */
    each_piece(count, first, from, size, runs, text_piece, &texts);
    texts.out_off[texts.at_row] = (int32_t)texts.at_byte;
    Py_END_ALLOW_THREADS
    result = given ? Py_NewRef(Py_True) : Py_BuildValue("(OO)", offsets, data);
done:
    for (Py_ssize_t i = 0; i < got; i++) {
        PyBuffer_Release(&views[2 * i]);
        PyBuffer_Release(&views[2 * i + 1]);
    }
    PyMem_Free(views);
    Py_XDECREF(offsets);
    Py_XDECREF(data);
    if (out_off.obj != NULL) PyBuffer_Release(&out_off);
    if (out_data.obj != NULL) PyBuffer_Release(&out_data);
    PyBuffer_Release(&starts);
    PyBuffer_Release(&sources);
    PyBuffer_Release(&lengths);
    return result;
}

/* decode_text(codes, offsets, data, wide=False) -> None | (offsets bytes, data bytes): a
 * coded text column without nulls (int32 codes) as its texts, the dictionary's n + 1 int32
 * offsets and data given: Arrow's cast of a dictionary to text, without its kernel's checks
 * a value (the long run's prompts: 0.09 s).  `wide`: int64 offsets (Arrow's large_string,
 * which pandas' text holds: no second copy of the texts to make one).  None when a code is
 * out of the dictionary (a cast then names it) or 32-bit offsets would pass 2 GB. */
static PyObject *decode_text(PyObject *self, PyObject *args) {
    Py_buffer codes, offsets, data;
    int wide = 0;
    if (!PyArg_ParseTuple(args, "y*y*y*|p", &codes, &offsets, &data, &wide)) return NULL;
    PyObject *out_offsets = NULL, *out_data = NULL, *result = NULL;
    const int32_t *code = codes.buf, *off = offsets.buf;
    Py_ssize_t n = codes.len / 4, texts = offsets.len / 4 - 1;
    int64_t bytes = 0;
    int bad = texts < 0 || off[0] < 0 || off[texts] > data.len;
    for (Py_ssize_t t = 0; !bad && t < texts; t++) bad = off[t] > off[t + 1];
    for (Py_ssize_t i = 0; !bad && i < n; i++) {
        if (code[i] < 0 || code[i] >= texts) bad = 1;
        else bytes += off[code[i] + 1] - off[code[i]];
    }
    if (bad || (!wide && bytes > INT32_MAX)) { result = Py_NewRef(Py_None); goto done; }
    out_offsets = PyBytes_FromStringAndSize(NULL, (n + 1) * (wide ? 8 : 4));
    out_data = PyBytes_FromStringAndSize(NULL, bytes);
    if (out_offsets == NULL || out_data == NULL) goto done;
    int32_t *to_off = (int32_t *)PyBytes_AS_STRING(out_offsets);
    int64_t *to_wide = (int64_t *)PyBytes_AS_STRING(out_offsets);
    char *to = PyBytes_AS_STRING(out_data);
    const char *from = data.buf;
    Py_BEGIN_ALLOW_THREADS
    int64_t at = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t len = off[code[i] + 1] - off[code[i]];
        if (wide) to_wide[i] = at;
        else to_off[i] = (int32_t)at;
        memcpy(to + at, from + off[code[i]], (size_t)len);
        at += len;
    }
    if (wide) to_wide[n] = at;
    else to_off[n] = (int32_t)at;
    Py_END_ALLOW_THREADS
    result = Py_BuildValue("(OO)", out_offsets, out_data);
done:
    Py_XDECREF(out_offsets);
    Py_XDECREF(out_data);
    PyBuffer_Release(&codes);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&data);
    return result;
}

/* ---- pages shown twice ------------------------------------------------------------------ */

#ifdef __linux__
#include <sys/mman.h>

/* alias(addresses, lengths) -> address | None: one new mapping, contiguous, of the pages of
 * each shared mapping [addresses[i], + lengths[i]) in turn (int64s, whole pages): no page is
 * copied or made.  A sort of parts read in place (shared_part.py, in_place.py) writes each
 * column of numbers or text into the pages that held its parts' rows: on this kind of VM a
 * fresh page costs 4-13 us to fault in, a page a worker already wrote 0.4.  The old maps
 * keep their range but no longer map these pages: a read there maps them again, from the
 * same file.  None where the system
 * refuses (a limit on mappings, say): the caller then copies into fresh memory.
 * unmap(address, size) ends the new mapping. */
static PyObject *alias(PyObject *self, PyObject *args) {
    Py_buffer at, lengths;
    if (!PyArg_ParseTuple(args, "y*y*", &at, &lengths)) return NULL;
    PyObject *result = NULL;
    const int64_t *from = at.buf, *size = lengths.buf;
    Py_ssize_t count = lengths.len / 8;
    int64_t total = 0, page = sysconf(_SC_PAGESIZE);
    if (at.len != lengths.len || lengths.len % 8 || count == 0) {
        PyErr_SetString(PyExc_ValueError, "alias: no pages, or addresses of another count");
        goto done;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        if (from[i] % page || size[i] <= 0 || size[i] % page) {
            PyErr_SetString(PyExc_ValueError, "alias: not whole pages");
            goto done;
        }
        total += size[i];
    }
    char *region = mmap(NULL, (size_t)total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
                        MAP_NORESERVE, -1, 0);
    if (region == MAP_FAILED) { result = Py_NewRef(Py_None); goto done; }
    char *to = region;
    for (Py_ssize_t i = 0; i < count; i++) {  /* old size 0: the same pages, mapped anew */
        if (mremap((void *)(intptr_t)from[i], 0, (size_t)size[i], MREMAP_MAYMOVE | MREMAP_FIXED,
                   to) != to) {
            munmap(region, (size_t)total);
            result = Py_NewRef(Py_None);
            goto done;
        }
        to += size[i];
    }
    /* the old maps let go of these pages (the file keeps them): a page mapped twice counts
     * twice in the process's resident size, and the run would read as held twice */
    for (Py_ssize_t i = 0; i < count; i++)
        madvise((void *)(intptr_t)from[i], (size_t)size[i], MADV_DONTNEED);
    result = PyLong_FromVoidPtr(region);
done:
    PyBuffer_Release(&at);
    PyBuffer_Release(&lengths);
    return result;
}

static PyObject *unmap(PyObject *self, PyObject *args) {
    Py_ssize_t address, size;
    if (!PyArg_ParseTuple(args, "nn", &address, &size)) return NULL;
    if (munmap((void *)address, (size_t)size) != 0) return PyErr_SetFromErrno(PyExc_OSError);
    Py_RETURN_NONE;
}
#endif

static PyMethodDef methods[] = {
    {"previews", previews, METH_VARARGS, "int64 bytes of lengths, and each text's preview"},
    {"signatures", signatures, METH_VARARGS, "uint32 bytes of each text's LSH bands"},
    {"column", column, METH_VARARGS, "each dict's value under a key, None where missing"},
    {"take", take, METH_VARARGS, "the columns of several keys in one pass"},
    {"list_lengths", list_lengths, METH_VARARGS, "int64 bytes of each list's length, -1 else"},
    {"flat_heads", flat_heads, METH_VARARGS, "float64 bytes of each list's first n numbers"},
    {"head_sums", head_sums, METH_VARARGS, "float64 bytes of sum(list[:n], 0.0) each"},
    {"repetitions", repetitions, METH_VARARGS, "float64 bytes of each text's repetition"},
    {"token_bins", token_bins, METH_VARARGS, "the token digest's counts and sums by bin"},
    {"all_strings", all_strings, METH_O, "every item of a list a str"},
    {"numbers", numbers, METH_O, "float64 bytes of a list of plain numbers"},
    {"whole_numbers", whole_numbers, METH_O, "int64 bytes of a list of ints"},
    {"utf8", utf8, METH_O, "a list of str or None as an Arrow string array's buffers"},
    {"kl_sums", kl_sums, METH_VARARGS, "float64 bytes of the KL estimators' segment sums"},
    {"top_tokens", top_tokens, METH_VARARGS, "int64 bytes of each run's top values' offsets"},
    {"text_ids", text_ids, METH_VARARGS, "int64 bytes of each text's text_id"},
    {"codes", codes, METH_O, "int32 bytes of each text's code, and the texts"},
    {"gather", gather, METH_VARARGS, "a sorted column's runs copied out of its chunks"},
    {"gather_text", gather_text, METH_VARARGS, "a sorted text column's runs, as buffers"},
    {"decode_text", decode_text, METH_VARARGS, "a coded text column's texts, as buffers"},
#ifdef __linux__
    {"alias", alias, METH_VARARGS, "one mapping of the pages of several shared ones"},
    {"unmap", unmap, METH_VARARGS, "an alias's mapping ended"},
#endif
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernel", NULL, -1, methods};

PyMODINIT_FUNC PyInit__kernel(void) {
    for (uint64_t k = 0; k < MAX_HASHES; k++) {
        MULTIPLIERS[k] = (uint32_t)mix(2 * k + 1) | 1;
        ADDENDS[k] = (uint32_t)mix(2 * k + 2);
    }
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) update_mins = lower_mins_avx2;
#endif
    for (Py_UCS4 ch = 0; ch < 256; ch++) SPACE1[ch] = Py_UNICODE_ISSPACE(ch) != 0;
    ELLIPSIS = PyUnicode_FromString("\xe2\x80\xa6");  /* U+2026 */
    if (ELLIPSIS == NULL) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddStringConstant(m, "SOURCE", KERNEL_SOURCE) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
