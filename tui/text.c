/* text.c: fitting text into columns (text.h): column counts of UTF-8 text, wrapping at blanks,
 * eliding the middle of a long name. No curses. */
#include "text.h"

#include <stdio.h>
#include <string.h>

static bool cont(unsigned char c) { return (c & 0xC0) == 0x80; }

/* Bytes of the glyph at s (a UTF-8 sequence counts as one glyph). */
static int glyph(const char *s) {
    int k = 1;
    while (s[k] && cont((unsigned char)s[k])) k++;
    return k;
}

int text_cols(const char *s) {
    int n = 0;
    for (; s && *s; s++) n += !cont((unsigned char)*s);
    return n;
}

size_t text_bytes(const char *s, int cols) {
    size_t i = 0;
    for (int c = 0; s[i] && c < cols; c++) i += (size_t)glyph(s + i);
    return i;
}

int text_wrap(const char *s, int width, int indent, struct text_line *lines, int max) {
    if (!s || !*s || width < 1) return 0;
    if (width - indent < 8) indent = 0;
    int n = 0, pos = 0, len = (int)strlen(s);
    while (pos < len) {
        int ind = n ? indent : 0, avail = width - ind;
        int i = pos, col = 0, brk = -1;
        while (s[i] && s[i] != '\n' && col < avail) {
            if (s[i] == ' ') brk = i;
            i += glyph(s + i);
            col++;
        }
        int end; /* the line is [pos, end); the next starts at `next` */
        int next;
        if (!s[i] || s[i] == '\n' || s[i] == ' ') {
            end = i;
            next = s[i] == '\n' ? i + 1 : i;
        } else if (brk > pos) {
            end = brk;
            next = brk;
        } else { /* a word longer than the line: split it where the line ends */
            end = i;
            next = i;
        }
        while (end > pos && s[end - 1] == ' ') end--;
        if (n < max) lines[n] = (struct text_line){pos, end - pos, ind};
        n++;
        pos = next;
        while (s[pos] == ' ') pos++;
        if (s[pos] == '\n' && next != pos) pos++;
    }
    return n;
}

/* Writes head (its first hb bytes), the ellipsis and tail into dst. */
static void join(char *dst, size_t n, const char *head, size_t hb, const char *ell,
                 const char *tail) {
    snprintf(dst, n, "%.*s%s%s", (int)hb, head, ell, tail);
}

bool text_elide(char *dst, size_t n, const char *s, int width, bool ascii) {
    if (!n) return false;
    if (!s) s = "";
    if (text_cols(s) <= width) {
        snprintf(dst, n, "%s", s);
        return false;
    }
    const char *ell = ascii ? "~" : "\xe2\x80\xa6";
    if (width < 1) {
        dst[0] = '\0';
        return true;
    }
    int budget = width - 1; /* columns for what is kept */
    const char *last = strrchr(s, '/');
    if (last && last[1]) {
        /* a path: its first part, then the longest run of whole trailing parts that fits
         * ("resnet50/" "…" "/conv3/BatchNorm"); else the trailing parts alone */
        const char *first = strchr(s, '/');
        int hcols = (int)(first - s) + 1;
        const char *with_head = NULL, *alone = NULL;
        for (const char *p = last; p > first; p--)
            if (*p == '/' && hcols + text_cols(p) <= budget) with_head = p;
            else if (*p == '/') break;
        for (const char *p = last; p >= s; p--)
            if (*p == '/' && text_cols(p) <= budget) alone = p;
            else if (*p == '/') break;
        /* the head is kept unless dropping it keeps more of the tail, which tells apart */
        if (with_head && (!alone || alone >= with_head)) {
            join(dst, n, s, (size_t)(first - s) + 1, ell, with_head);
            return true;
        }
        if (alone) {
            join(dst, n, "", 0, ell, alone);
            return true;
        }
    }
    /* no path, or its last part alone is too long: a little of the head, most of the tail */
    int total = text_cols(s), hcols = budget / 3, tcols = budget - hcols;
    const char *tail = s + text_bytes(s, total - tcols);
    join(dst, n, s, text_bytes(s, hcols), ell, tail);
    return true;
}

bool text_elide_keep(char *dst, size_t n, const char *s, size_t keep, int width, bool ascii) {
    if (!n) return false;
    if (!s || keep >= strlen(s) || text_cols(s) <= width) return text_elide(dst, n, s, width, ascii);
    const char *first = strchr(s, '/'), *mid = s + keep;
    while (mid > s && mid[-1] != '/') mid--; /* the part holding byte keep */
    const char *mid_end = strchr(mid, '/');
    /* the first or the last part: text_elide keeps it */
    if (!first || mid <= first || !mid_end) return text_elide(dst, n, s, width, ascii);
    const char *ell = ascii ? "~" : "\xe2\x80\xa6";
    /* head "…" "/part" "/…" tail, the head given up where that keeps more of the tail; a part
     * right after the head joins it, and a tail that reaches the part needs no second "…" */
    bool adjacent = mid == first + 1;
    int hcols = (int)(first - s) + 1, pcols = text_cols(mid) - text_cols(mid_end) + 1;
    const char *with_head = NULL, *alone = NULL;
    for (const char *p = s + strlen(s) - 1; p >= mid_end; p--) {
        if (*p != '/') continue;
        int tcols = text_cols(p) + (p > mid_end ? 2 : 0); /* "/…" before a tail beyond the part */
        if (hcols + (adjacent ? pcols - 1 : 1 + pcols) + tcols <= width) with_head = p;
        if (!adjacent && 1 + pcols + tcols <= width) alone = p;
    }
    if (!with_head && !alone) return text_elide(dst, n, s, width, ascii);
    bool head = with_head && (!alone || alone >= with_head);
    const char *tail = head ? with_head : alone;
    snprintf(dst, n, "%.*s%s%.*s%s%s%s", head ? (int)(adjacent ? mid - s : first - s + 1) : 0, s,
             head && adjacent ? "" : ell, (int)(mid_end - mid) + (adjacent ? 0 : 1),
             adjacent ? mid : mid - 1, tail > mid_end ? "/" : "", tail > mid_end ? ell : "", tail);
    return true;
}
