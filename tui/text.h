/* text.h: fitting text into the explorer's columns, without curses: counting the columns of
 * UTF-8 text (each of our glyphs is one column wide), wrapping at blanks, and eliding in the
 * middle so that the distinguishing tail of a long name stays. Pure; tested without a terminal.
 * The views draw what these compute, the layout sizes the status line with them. */
#ifndef DRIPLE_TEXT_H
#define DRIPLE_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* Columns s takes (UTF-8 continuation bytes take none). */
int text_cols(const char *s);
/* Byte length of the first `cols` columns of s (all of s when it is shorter). */
size_t text_bytes(const char *s, int cols);

/* One wrapped line: bytes [start, start + len) of the text, drawn `indent` columns in. */
struct text_line {
    int start, len, indent;
};
/* Wraps s into lines of at most width columns, breaking at blanks (the blanks at a break are
 * dropped); a word longer than a line is split where the line ends, so nothing is lost. Lines
 * after the first are indented by `indent` columns (a hanging indent; 0 for none; ignored when
 * it leaves under 8 columns). Fills at most max lines and returns how many the whole text
 * needs (0 for an empty text; at least 1 otherwise). */
int text_wrap(const char *s, int width, int indent, struct text_line *lines, int max);

/* Copies s into dst (n bytes) when it fits in width columns; otherwise elides its middle with
 * "…" (or "~" when ascii), keeping the head and, preferably, the tail: for a path of '/'-
 * separated parts the first part and as many whole trailing parts as fit
 * ("resnet50/…/unit1/conv3/BatchNorm"), else the end of the last part. Returns true when s
 * had to be elided. */
bool text_elide(char *dst, size_t n, const char *s, int width, bool ascii);
/* As text_elide, but the '/'-separated part of s holding byte `keep` stays too (where s differs
 * from a name it would otherwise be elided alike): "resnet50/…/conv1/…/truncated_normal/shape",
 * the head given up where that keeps more of the tail. Falls back to text_elide when keep is out
 * of s, in its first or last part, or when the part cannot fit. */
bool text_elide_keep(char *dst, size_t n, const char *s, size_t keep, int width, bool ascii);

#endif
